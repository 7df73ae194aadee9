// Package exporttree is the layout of `ctxd export` and `ctxd import DIR`:
// a store's items as a plain file tree a person can read, diff and keep in
// git, with a manifest that records what the files cannot.
//
// An export directory holds one directory per drive, each item's content
// as a file at its path (text byte for byte, frontmatter included; binary
// content as it was), explicit empty directories as directories, and
// ManifestName at its root: JSON lines, a Header first, then one Entry per
// item in the order written, naming the item's file and carrying the item's
// metadata as the API's Item message in JSON (id, ref, MIME type, title,
// description, tags, importance, source URL, origin, times, content hash).
//
// FilePath maps a ref to its file. Path segments are kept as they are
// (UTF-8 included) except for bytes no file name may hold or that some
// filesystems refuse, which are percent-escaped; an empty segment (the url
// drive's "//") becomes "%"; a segment too long for a file name is cut and
// ends in "~" and a hash of the whole. On the url drive the whole path
// (the URL) is one file name, since a URL and its subpages are all items.
// The mapping is one to one, but an importer reads the ref from the
// manifest, never from the file name.
package exporttree
