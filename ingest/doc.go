// Package ingest brings content into the store from outside: files and
// directory trees on disk, and web pages fetched over HTTP. It decides what
// may be read (allowed roots, secrets, private network targets), walks trees
// the way git sees them (.gitignore, default excludes), turns what it reads
// into item content (text detection, HTML to markdown, PDF text), and keeps
// ingested items fresh: refresh compares each item with its source cheaply
// first (mtime and size, or a conditional GET) and rewrites only what changed,
// so only changed chunks are embedded again. Revalidator does the same in the
// background for fetched pages that searches return once their TTL has
// passed.
//
// The package writes through vfs.Store and knows nothing of gRPC; the daemon
// converts its events and errors.
package ingest
