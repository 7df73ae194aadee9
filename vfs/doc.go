// Package vfs is ctxd's item store: the virtual filesystem agents read and
// write, and the single source of truth everything else is derived from.
//
// An item is addressed as drive:/path and also has a stable UUIDv7 id that
// survives moves and overwrites (copies get new ids). Directories are implicit
// in path prefixes; MakeDir stores an explicit placeholder item so an empty
// directory can exist. Refs and paths are validated and cleaned by ParseRef
// and CleanPath, which reject rather than repair anything suspicious.
//
// # Storage
//
// vfs owns one bbolt file and is the only package that touches it:
//
//	meta                       schema_version -> "1"
//	meta/drives                drive -> item count (8) | content bytes (8)
//	items                      id (16 bytes) -> Item metadata (JSON)
//	content                    id (16 bytes) -> content bytes
//	text                       id (16 bytes) -> searchable text of a binary item
//	paths/<drive>              encoded path -> flags (1) | id (16) | size (8) | mime
//
// In path keys "/" is stored as 0x00 (NUL cannot occur in a path), so keys
// sort segment by segment and every directory's subtree is one contiguous key
// range: listings, trees, deletes and moves are byte-prefix scans that never
// match "/ab" for "/a", and treat '%', '_' and '*' literally. The paths values
// carry size and flags so List, Tree, DirSize and Stats never decode metadata,
// and the per-drive counters are updated in the same transaction as every
// change so ListDrives and Stats cost O(drives).
//
// # Caveats
//
// Every mutation runs through bbolt's Batch, so concurrent writers share one
// fsync; a batch member that fails makes bbolt re-run the others, so error
// paths cost more than successes. Content is held whole in memory while
// written or read; DefaultMaxContentBytes bounds it. On the url drive the path
// is "/" plus the URL verbatim; its "//" is kept and listings treat an empty
// segment as part of the next one, so "url:/https:" contains
// "url:/https://example.com". Pages nest there: a URL and its subpages are
// all items, which no other drive allows.
//
// Binary items are searchable by their title and MIME type plus any text
// extracted from them (a PDF's text): that searchable text is kept beside
// the blob and chunked in its place.
//
// UsageRecorder writes the retrieval count and time of the items searches
// return, in batches off the search path; a signal is dropped rather than
// slowing a search when its buffer is full.
package vfs
