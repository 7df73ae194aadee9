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
//	meta                       schema_version -> "4" (Open converts "1" to "3": history_migrate.go)
//	meta/drives                drive -> item count (8) | content bytes (8)
//	items                      id (16 bytes) -> [0 | head: time (8) | rev (8) of its latest revision]
//	                           Item metadata (JSON; no ID, no CreatedAt equal to UpdatedAt)
//	content                    id (16 bytes) -> content bytes
//	text                       id (16 bytes) -> searchable text of a binary item
//	paths/<drive>              encoded path -> flags (1) | id (16) | size (8) | mime
//	meta/history_gap           present while history is off (see Options.HistoryOff)
//	history                    time (8) | id | rev (8) -> revision record, naming the time of the
//	                           item's previous one, the position of the content its write
//	                           archived, and (a delete's) of its own;
//	                           time | id | rev | 1 -> archived content, beside the revision
//	                           whose write archived it: refs | uses (uvarints) | kind |
//	                           SHA-256 | zstd frame, delta or none;
//	                           id | 0xff 'm' | metaID (8) -> refs | metadata (JSON); none while
//	                           it is the metadata of the item's record
//	revision_heads             id -> time (8) | rev (8): the head of an item without a record
//	revision_actors            len | actor | time (8) | id | rev -> (empty): the log, by
//	                           actor; Log across actors merges their ranges
//	deleted                    drive | encoded path | 0xff | id -> time | rev of the delete
//	blobs                      SHA-256 | 0 -> kind | zstd frame; | 1 -> refs (8): large
//	                           content stored whole, shared by the items that had it
//	blob_repack                time | SHA-256 -> time | id | rev: archived whole, to make a delta
//	questions                  'i' | id | slot (1) -> question hash | text: the writer's;
//	                           'g' | chunk text hash -> count; | slot -> question hash | text:
//	                           generated (see questions.go)
//	qvectors/<model>           question hash -> place; qembedq: question key -> hash (| 1: embed
//	                           again), the queue; chunkhash: chunk text hash | id | index -> (mark)
//	vectors/<model>            chunk text hash -> place: 2 | block (8) | slot (2) (vectors.go)
//	vectors/<model>/blocks     block (8) -> slot size (2) | unit float16 vectors, filled in order;
//	                           qvectors/<model>/blocks likewise
//
// # History
//
// Every putItem/removeItem records a revision in the transaction of the
// change (history.go), appended to the history in time order: the
// revisions of a transaction of 16 writes to 16 items share a page or two
// instead of landing on a page of each item's. An item's revisions form a
// chain from its head, kept in front of its record (which the write
// rewrites anyway) and moved to revision_heads when the item is deleted
// (history_head.go). Each record names the times of the 9 revisions before
// it, so that on PostgreSQL a walk down the chain reads them in one round
// trip, not one each. Content still current is not copied: an item's
// pending revisions read the content bucket. When content is replaced or
// deleted it is archived beside the revision the write appends, which
// names that entry; the revisions that had it find it there, so a record
// is never written again (content an item had a few
// revisions before shares that revision's entry; older content that comes
// back is archived again): as the bytes between the common prefix and suffix it
// shares with the item's previous archived content (chains at most 32
// deep), else zstd-compressed whole, which PruneHistory later rewrites as a
// zstd delta against an older revision of the same item (the dictionary
// work stays off the write path). Compressed content over 1 KB is kept once
// per SHA-256 in blobs, shared across items (a copy's history does not
// store it again), and the item's entry names it. PruneHistory also drops
// revisions past the retention. Metadata snapshots are stored per item and shared by
// revisions that differ only in content; the snapshot of the item's current
// metadata is its record, copied into its entry only when the record changes
// (a write learns whether it must from the item's latest revision, without
// decoding the record). Open with history on after a run
// with it off records baseline revisions for items that changed meanwhile.
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
// # Frontmatter and the agent guard
//
// A text item (other than YAML) that starts with a YAML frontmatter block
// ("---" … "---" or "...", at most MaxFrontmatterBytes) has it parsed on every
// Write, Edit, Copy and re-chunking: loading, agent-modification, tags,
// importance, title and description become Item fields, except where the
// caller gave a value. The block stays byte-for-byte in the content but is
// left out of the chunks; every chunk embeds the item's chosen title and
// description instead (ChunkDoc). Malformed frontmatter is plain text, and
// the write says why in its Warnings.
//
// A mutation whose context carries an agent Actor may not change an item
// whose frontmatter lacks agent-modification: true, nor one without
// frontmatter under a context root (Options.ContextRoots), nor create one
// there without it: ErrReadOnly, checked in the change's own transaction.
//
// # Access
//
// A context may carry an Access (WithAccess): the drives and path subtrees
// its caller may touch. Store methods then show the store as if nothing
// outside existed (not found, left out of listings, counts, history and
// hints) and refuse changes outside with ErrDenied. The file size of Stats,
// EmbedStats and the indexes still describe the whole store.
//
// UsageRecorder writes the retrieval count and time of the items searches
// return, in batches off the search path; a signal is dropped rather than
// slowing a search when its buffer is full.
package vfs
