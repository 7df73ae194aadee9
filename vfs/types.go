package vfs

import (
	"time"
)

// DefaultDrive is the drive a bare "/path" ref refers to: the agent's own scratch space.
const DefaultDrive = "agent"

// DirMimeType is the MIME type of explicit directory placeholders.
const DirMimeType = "inode/directory"

// DefaultMaxContentBytes is the default limit on one item's content (64 MiB).
const DefaultMaxContentBytes = 64 << 20

// Item is the metadata of one stored item. Content is read separately.
// It is stored as JSON; fields that are often zero are left out then, since
// a store holds one record per item.
type Item struct {
	ID              string `json:",omitzero"` // stable id (UUIDv7 string); survives moves; the record's key, not stored in it
	Drive           string
	Path            string // cleaned, starts with "/"
	Title           string
	Description     string `json:",omitzero"`
	MimeType        string
	IsText          bool // content is valid UTF-8 text
	IsDir           bool `json:",omitzero"` // explicit directory placeholder
	Size            int64
	ContentHash     string    // lowercase hex SHA-256 of the content
	SourceURL       string    `json:",omitzero"`
	Tags            []string  `json:",omitzero"` // sorted, de-duplicated
	Importance      float64   `json:",omitzero"` // in [0, 1]
	CreatedAt       time.Time `json:",omitzero"` // stored only when it differs from UpdatedAt
	UpdatedAt       time.Time
	IndexedAt       time.Time `json:",omitzero"` // when BM25 search reached this state (Store.MarkIndexed); zero while a change waits
	RetrievalCount  int64     `json:",omitzero"`
	LastRetrievedAt time.Time `json:",omitzero"`
	LineCount       int64     // lines of text content; 0 for binary
	Origin          Origin    `json:",omitzero"` // what ingest knows of the source

	// What the YAML frontmatter at the start of a text item declares (see
	// ParseFrontmatter); all zero when it has none or it is malformed.
	Loading           string `json:",omitzero"` // "", LoadingAlways or LoadingContextual
	AgentModification bool   `json:",omitzero"` // agents may change the item (see ErrReadOnly)
	FrontmatterLen    int64  `json:",omitzero"` // bytes of the block at the start of the content; left out of chunks
	// FrontmatterFields names the metadata fields ("title", "description",
	// "tags", "importance") whose value came from the frontmatter: an edit
	// of the frontmatter updates those, and keeps values a caller set.
	FrontmatterFields []string `json:",omitzero"`
}

// Origin is what ingest recorded about an item's source when it last read or
// validated it, so that refresh can tell cheaply whether the source changed.
type Origin struct {
	ModTime      time.Time     `json:",omitzero"` // disk: the file's modification time
	Size         int64         `json:",omitzero"` // disk: the file's size; url: the body's size
	ETag         string        `json:",omitzero"` // url: validators for a conditional GET
	LastModified string        `json:",omitzero"`
	CheckedAt    time.Time     `json:",omitzero"` // when the source was last read or validated
	TTL          time.Duration `json:",omitzero"` // url: how long fetched content counts as fresh
	Title        string        `json:",omitzero"` // the title the source gave (HTML title, PDF metadata)
}

// Ref returns the item's address as drive:/path.
func (it *Item) Ref() string { return FormatRef(it.Drive, it.Path) }

// OnConflict says what a write does when its destination already exists.
type OnConflict int

const (
	// ConflictError fails with ErrConflict.
	ConflictError OnConflict = iota
	// ConflictOverwrite replaces the existing item, keeping its id and creation time.
	ConflictOverwrite
	// ConflictSkip leaves the existing item untouched.
	ConflictSkip
)

// WriteParams describes one Write. Title, Description, Tags and Importance
// win over the content's frontmatter; empty (zero) ones take its values,
// else their defaults.
type WriteParams struct {
	Ref          Ref // must name a path, not an id
	Content      []byte
	IsText       bool   // Content must then be valid UTF-8
	MimeType     string // empty: detected from path and content
	Title        string // empty: the frontmatter's, else the last path segment
	Description  string
	SourceURL    string
	Tags         []string
	Importance   float64
	OnConflict   OnConflict
	ExpectedHash string      // with ConflictOverwrite: stored content must have this hash
	Embeddings   *Embeddings // precomputed chunk vectors; nil: the daemon embeds
	// Text is the searchable text of binary content, such as the text of a
	// PDF. Binary items are indexed by title and MIME type plus this text.
	Text   []byte
	Origin Origin
	// Questions the content answers (see questions.go); they replace the
	// item's earlier ones, and none removes those. At most
	// MaxQuestionsPerItem, each cleaned as CleanQuestions does.
	Questions []string
	// ID is the id a new item gets when no item has it, live or in history
	// (ctxd import keeps exported ids); when it is taken the item gets a
	// fresh one, as without it. A write that replaces an item keeps that
	// item's id. It must be a canonical UUID.
	ID string
}

// WriteResult is the outcome of a Write.
type WriteResult struct {
	Item    Item
	Created bool // a new item was created
	Skipped bool // ConflictSkip left an existing item untouched
	// Chunks of the new content that need an embedding, and chunks whose
	// text already has one (unchanged chunks are never embedded again).
	ChunksToEmbed, ChunksReused int
	// Warnings are problems that did not fail the write, such as malformed
	// frontmatter stored as plain text.
	Warnings []string
}

// ReadResult is a window of an item's text.
type ReadResult struct {
	Item       Item
	Content    []byte // the selected lines, newlines included
	StartLine  int64  // 1-based first returned line; 0 when none
	EndLine    int64  // 1-based last returned line; 0 when none
	TotalLines int64
	HasMore    bool // lines after EndLine exist
}

// Patch replaces, inserts or deletes a 1-based inclusive line range.
// EndLine 0 inserts Content before StartLine; empty Content deletes the range.
type Patch struct {
	StartLine int64
	EndLine   int64
	Content   string
}

// EditResult is the outcome of an Edit.
type EditResult struct {
	Item        Item
	LinesBefore int64
	LinesAfter  int64
	Warnings    []string // as WriteResult.Warnings
}

// TransferResult is the outcome of a Copy or Move.
type TransferResult struct {
	Count       int64  // items written at the destination
	Skipped     int64  // items left alone because of ConflictSkip
	Destination string // the destination ref (after resolving "into a directory")
}

// Info describes an item, or a directory synthesized as an Item with IsDir set
// and Size the total below it.
type Info struct {
	Item      Item
	ItemCount int64 // for directories: items below
}

// DriveInfo summarises one drive.
type DriveInfo struct {
	Name      string
	ItemCount int64
	Size      int64
}

// Entry is one child in a listing.
type Entry struct {
	Drive string
	Path  string
	Name  string
	IsDir bool  // implicit or explicit directory
	Item  *Item // nil for implicit directories
}

// Ref returns the entry's address as drive:/path.
func (e *Entry) Ref() string { return FormatRef(e.Drive, e.Path) }

// TreeNode is one node of a rendered tree.
type TreeNode struct {
	Name            string
	Drive           string
	Path            string // "" for the all-drives root
	IsDir           bool
	Size            int64 // items: content size; directories: bytes of all items below, listed or not
	MimeType        string
	Children        []*TreeNode // directories first, then items, each by name
	OmittedChildren int         // children not listed because of the per-directory cap
	DepthTruncated  bool        // has children that the depth limit kept out

	// shownItems counts item children kept while building, so that items past
	// the per-directory cap are only counted, never allocated.
	shownItems int
}

// Ref returns the node's address as drive:/path ("" for the all-drives root).
func (n *TreeNode) Ref() string {
	if n.Drive == "" {
		return ""
	}
	return FormatRef(n.Drive, n.Path)
}

// Stats summarises the whole store.
type Stats struct {
	ItemCount int64
	Size      int64 // total content bytes
	FileSize  int64 // bytes of the bbolt file on disk
	Drives    []DriveInfo
}
