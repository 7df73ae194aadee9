package vfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

const maxTagBytes = 128

// Write creates or replaces the item at p.Ref according to p.OnConflict.
func (s *Store) Write(ctx context.Context, p WriteParams) (WriteResult, error) {
	w, err := s.prepareWrite(p)
	if err != nil {
		return WriteResult{}, err
	}
	var res WriteResult
	err = s.update(ctx, func(t *txn) error {
		var err error
		res, err = t.write(&w)
		return err
	})
	if err != nil {
		return WriteResult{}, err
	}
	return res, nil
}

// MaxBatchItems bounds the items of one WriteBatch: the whole batch is held
// in memory and written under the store's write lock.
const MaxBatchItems = 10_000

// WriteBatch writes the items of ps in order in one transaction: all or
// none, durable when it returns. It is Write for many items at once: their
// validation and chunking run before the write lock is taken, and the
// commit (one fsync) is shared. An error names the failing item by its
// index; nothing of the batch is written then.
func (s *Store) WriteBatch(ctx context.Context, ps []WriteParams) ([]WriteResult, error) {
	if len(ps) > MaxBatchItems {
		return nil, newError(ErrInvalid, "", "split the items into several batches",
			"The batch has %d items; the limit is %d.", len(ps), MaxBatchItems)
	}
	ws := make([]preparedWrite, len(ps))
	for i, p := range ps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w, err := s.prepareWrite(p)
		if err != nil {
			return nil, BatchItemError(i, p.Ref.String(), err)
		}
		ws[i] = w
	}
	out := make([]WriteResult, len(ws))
	err := s.update(ctx, func(t *txn) error {
		for i := range ws {
			if err := ctx.Err(); err != nil { // the caller left: write nothing
				return err
			}
			res, err := t.write(&ws[i])
			if err != nil {
				return BatchItemError(i, ws[i].item.Ref(), err)
			}
			out[i] = res
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BatchItemError prefixes err with the index and ref of the batch item it is
// about, so the caller can find the item to fix; a store *Error keeps its
// kind and hint.
func BatchItemError(i int, ref string, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return fmt.Errorf("items[%d] (%s): %w", i, ref, err)
	}
	c := *e
	if c.Ref == "" {
		c.Ref = ref
	}
	c.Message = fmt.Sprintf("items[%d] (%s): %s", i, ref, e.Message)
	return &c
}

// preparedWrite is a Write checked against everything but stored state,
// with its text chunked, so that the transaction only stores.
type preparedWrite struct {
	p         WriteParams
	item      Item // without id and times
	content   []byte
	warning   string // why malformed frontmatter was stored as plain text
	questions []string
	chunked   chunking // its text, chunked before the write lock
}

// write stores one prepared Write in t.
func (t *txn) write(w *preparedWrite) (WriteResult, error) {
	p := &w.p
	t.op = OpWrite
	res := WriteResult{}
	if w.warning != "" {
		res.Warnings = []string{w.warning}
	}
	it := &w.item
	if err := t.access.CheckChange(it.Drive, it.Path); err != nil {
		return res, err
	}
	n, err := t.lookup(Ref{Drive: it.Drive, Path: it.Path})
	if err != nil {
		return res, err
	}
	ref := n.ref()
	// On the url drive a page may have pages below it (a URL and its
	// subpages); elsewhere an item and a directory cannot share a path.
	nested := it.Drive == urlDrive
	if n.isDir() && !(nested && n.isFile()) {
		return res, newError(ErrIsDir, ref, "write to a path below it, or choose another path",
			"%s is a directory, not an item.", ref)
	}
	b := t.driveBucket(it.Drive)
	if p, bad := fileAncestor(b, it.Path); bad && !nested {
		return res, newError(ErrNotDir, ref, "choose a path that is not below an item",
			"Cannot write %s: %s is an item, not a directory.", ref, FormatRef(it.Drive, p))
	}
	item := *it
	if n.val != nil {
		old, err := t.item(n.pv().id)
		if err != nil {
			return res, err
		}
		switch p.OnConflict {
		case ConflictSkip:
			return WriteResult{Item: old, Skipped: true}, nil // nothing written: no warnings
		case ConflictError:
			return res, newError(ErrConflict, ref, "pass on_conflict=overwrite to replace it, or choose another path",
				"An item already exists at %s.", ref)
		}
		if p.ExpectedHash != "" && p.ExpectedHash != old.ContentHash {
			return res, changedError(ref, p.ExpectedHash, old.ContentHash)
		}
		item.ID, item.CreatedAt = old.ID, old.CreatedAt
		// New content needs indexing again; retrieval history stays.
		item.RetrievalCount, item.LastRetrievedAt = old.RetrievalCount, old.LastRetrievedAt
	} else {
		if p.ExpectedHash != "" {
			return res, newError(ErrChanged, ref, "read it again, or write without expected_hash to create it",
				"%s no longer exists, so its hash cannot be %s.", ref, p.ExpectedHash)
		}
		id, err := t.newItemID(p.ID)
		if err != nil {
			return res, err
		}
		item.ID, item.CreatedAt = id, t.now
		res.Created = true
	}
	item.UpdatedAt = t.now
	res.Item = item
	t.precomputed, t.chunked = p.Embeddings, w.chunked
	if !item.IsText {
		t.extracted = p.Text
		if t.extracted == nil {
			t.extracted = []byte{} // this write has none: do not keep the old item's
		}
	}
	t.chunksToEmbed, t.chunksReused = 0, 0
	defer func() { t.precomputed, t.chunked, t.extracted = nil, chunking{}, nil }()
	if err := t.putItem(&item, w.content, n.val, nil); err != nil {
		return res, err
	}
	u, err := parseID(item.ID)
	if err != nil {
		return res, err
	}
	if err := t.setItemQuestions(u, w.questions); err != nil {
		return res, err
	}
	res.ChunksToEmbed, res.ChunksReused = t.chunksToEmbed, t.chunksReused
	return res, nil
}

// newItemID returns want (a checked UUID, or "") when no item has it, live
// or in history, else a fresh UUIDv7.
func (t *txn) newItemID(want string) (string, error) {
	if want != "" {
		u := uuid.MustParse(want)
		if _, has := t.itemHead(u[:]); t.items.Get(u[:]) == nil && !has {
			return want, nil
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new id: %w", err)
	}
	return id.String(), nil
}

func changedError(ref, expected, actual string) *Error {
	return newError(ErrChanged, ref, "read it again and redo the change against the current content",
		"%s changed: its content hash is %s, not the expected %s.", ref, actual, expected)
}

// prepareWrite validates everything that does not depend on stored state,
// applies the content's frontmatter and chunks text content.
func (s *Store) prepareWrite(p WriteParams) (preparedWrite, error) {
	it, content, warning, err := s.checkWrite(p)
	if err != nil {
		return preparedWrite{}, err
	}
	questions, err := CleanQuestions(it.Ref(), p.Questions, MaxQuestionsPerItem)
	if err != nil {
		return preparedWrite{}, err
	}
	w := preparedWrite{p: p, item: it, content: content, warning: warning, questions: questions}
	if it.IsText {
		w.chunked = s.chunkAhead(&w.item, content)
	}
	return w, nil
}

// checkWrite validates a Write's fields and builds the item; warning says
// why malformed frontmatter was stored as plain text.
func (s *Store) checkWrite(p WriteParams) (_ Item, _ []byte, warning string, _ error) {
	if p.Ref.ID != "" {
		return Item{}, nil, "", newError(ErrInvalid, p.Ref.ID, "address the item as drive:/path",
			"Write needs a drive:/path ref, not the id %s.", quote(p.Ref.ID))
	}
	r, err := normRef(p.Ref)
	if err != nil {
		return Item{}, nil, "", err
	}
	ref := r.String()
	if r.Path == "/" {
		return Item{}, nil, "", newError(ErrIsDir, ref, "write to a path below the root, e.g. "+FormatRef(r.Drive, "/notes.md"),
			"%s is the drive root, a directory.", ref)
	}
	if p.ID != "" {
		if _, err := parseID(p.ID); err != nil {
			return Item{}, nil, "", newError(ErrInvalid, ref, "give the id as a canonical lowercase UUID, or none for a fresh one",
				"The id %s is not a UUID.", quote(p.ID))
		}
	}
	if p.OnConflict < ConflictError || p.OnConflict > ConflictSkip {
		return Item{}, nil, "", newError(ErrInvalid, ref, "use on_conflict error, overwrite or skip", "Unknown on_conflict value %d.", p.OnConflict)
	}
	if int64(len(p.Content)) > s.maxContent {
		return Item{}, nil, "", tooLarge(ref, int64(len(p.Content)), s.maxContent)
	}
	if p.IsText {
		// Refused before any stored state is looked at (putItem checks again).
		if err := checkText(ref, p.Content); err != nil {
			return Item{}, nil, "", err
		}
	}
	if p.Text != nil {
		if p.IsText {
			return Item{}, nil, "", newError(ErrInvalid, ref, "send searchable text only with binary content", "%s is text; it is searchable as it is.", ref)
		}
		if int64(len(p.Text)) > s.maxContent {
			return Item{}, nil, "", tooLarge(ref, int64(len(p.Text)), s.maxContent)
		}
		if !utf8.Valid(p.Text) {
			return Item{}, nil, "", newError(ErrInvalid, ref, "re-encode the extracted text as UTF-8",
				"The searchable text for %s is not valid UTF-8: the first bad byte is at offset %d.", ref, invalidUTF8Offset(p.Text))
		}
	}
	tags, err := cleanTags(ref, p.Tags)
	if err != nil {
		return Item{}, nil, "", err
	}
	if math.IsNaN(p.Importance) || p.Importance < 0 || p.Importance > 1 {
		return Item{}, nil, "", newError(ErrInvalid, ref, "use a number from 0 to 1", "Importance %v is outside [0, 1].", p.Importance)
	}
	for _, f := range []struct{ name, v string }{{"title", p.Title}, {"description", p.Description}, {"source URL", p.SourceURL}, {"mime type", p.MimeType}} {
		if !utf8.ValidString(f.v) {
			return Item{}, nil, "", newError(ErrInvalid, ref, "send UTF-8 text", "The %s %s is not valid UTF-8.", f.name, quote(f.v))
		}
	}
	if strings.ContainsFunc(p.Title, isControl) {
		return Item{}, nil, "", newError(ErrInvalid, ref, "remove control characters and newlines from the title", "The title %s contains control characters.", quote(p.Title))
	}
	mt := p.MimeType
	if mt == "" {
		mt = detectMime(r.Path, p.Content, p.IsText)
	} else if _, _, err := mime.ParseMediaType(mt); err != nil {
		return Item{}, nil, "", newError(ErrInvalid, ref, `use a MIME type such as "text/markdown" or leave it empty to detect it`, "The mime type %s is malformed.", quote(mt))
	} else if strings.HasPrefix(mt, DirMimeType) {
		return Item{}, nil, "", newError(ErrInvalid, ref, "use make dir to create a directory", "Items cannot have the directory mime type %s.", DirMimeType)
	}
	title := p.Title
	if title == "" {
		title = baseName(r.Path)
	}
	it := Item{
		Drive:       r.Drive,
		Path:        r.Path,
		Title:       title,
		Description: p.Description,
		MimeType:    mt,
		IsText:      p.IsText,
		Size:        int64(len(p.Content)),
		ContentHash: HashContent(p.Content),
		SourceURL:   p.SourceURL,
		Tags:        tags,
		Importance:  p.Importance,
		Origin:      p.Origin,
	}
	if p.IsText {
		it.LineCount = CountLines(p.Content)
	}
	// Values the caller gave win over the frontmatter's.
	warning = applyFrontmatter(&it, p.Content, callerFields{
		title: p.Title != "", description: p.Description != "", tags: len(tags) > 0, importance: p.Importance != 0,
	})
	content := p.Content
	if content == nil {
		content = []byte{}
	}
	return it, content, warning, nil
}

func tooLarge(ref string, size, limit int64) *Error {
	return newError(ErrTooLarge, ref, "split the content into several items",
		"The content for %s is %d bytes; the limit is %d bytes.", ref, size, limit)
}

// HashContent is the ContentHash of content b: lowercase hex SHA-256.
func HashContent(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// CheckTags reports the first tag a write would refuse, as ErrInvalid, so
// that a caller storing tags for later writes (a watch) refuses them up
// front.
func CheckTags(tags []string) error {
	_, err := cleanTags("", tags)
	return err
}

// cleanTags trims, validates, sorts and de-duplicates tags.
func cleanTags(ref string, tags []string) ([]string, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	const hint = "tags are short labels: non-empty, at most 128 bytes, no control characters"
	out := make([]string, 0, len(tags))
	for i, tag := range tags {
		tag = strings.TrimSpace(tag)
		switch {
		case tag == "":
			return nil, newError(ErrInvalid, ref, hint, "Tag %d is empty.", i)
		case !utf8.ValidString(tag):
			return nil, newError(ErrInvalid, ref, hint, "Tag %d (%s) is not valid UTF-8.", i, quote(tag))
		case len(tag) > maxTagBytes:
			return nil, newError(ErrInvalid, ref, hint, "Tag %d is %d bytes; the limit is %d.", i, len(tag), maxTagBytes)
		case strings.ContainsFunc(tag, isControl):
			return nil, newError(ErrInvalid, ref, hint, "Tag %d (%s) contains control characters.", i, quote(tag))
		}
		out = append(out, tag)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// textMimes maps common text extensions to MIME types. It is a fixed table
// rather than mime.TypeByExtension, whose answers depend on the host's
// /etc/mime.types.
var textMimes = map[string]string{
	".md":       "text/markdown; charset=utf-8",
	".markdown": "text/markdown; charset=utf-8",
	".txt":      "text/plain; charset=utf-8",
	".json":     "application/json",
	".jsonl":    "application/jsonl",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".toml":     "application/toml",
	".xml":      "application/xml",
	".go":       "text/x-go; charset=utf-8",
	".py":       "text/x-python; charset=utf-8",
	".ts":       "text/typescript; charset=utf-8",
	".tsx":      "text/typescript; charset=utf-8",
	".js":       "text/javascript; charset=utf-8",
	".jsx":      "text/javascript; charset=utf-8",
	".rs":       "text/x-rust; charset=utf-8",
	".java":     "text/x-java; charset=utf-8",
	".c":        "text/x-c; charset=utf-8",
	".h":        "text/x-c; charset=utf-8",
	".sh":       "text/x-shellscript; charset=utf-8",
	".sql":      "application/sql",
	".html":     "text/html; charset=utf-8",
	".htm":      "text/html; charset=utf-8",
	".css":      "text/css; charset=utf-8",
	".csv":      "text/csv; charset=utf-8",
}

// detectMime picks a MIME type from the extension for text and sniffs binary
// content with http.DetectContentType.
func detectMime(p string, content []byte, isText bool) string {
	if !isText {
		return http.DetectContentType(content)
	}
	if mt, ok := textMimes[strings.ToLower(path.Ext(baseName(p)))]; ok {
		return mt
	}
	return "text/plain; charset=utf-8"
}

// MakeDir creates an explicit directory placeholder at ref. It reports
// created=false when a directory (implicit or explicit) is already there.
func (s *Store) MakeDir(ctx context.Context, ref Ref) (bool, error) {
	return s.MakeDirID(ctx, ref, "")
}

// MakeDirID is MakeDir whose new placeholder gets id when no item has it,
// as WriteParams.ID.
func (s *Store) MakeDirID(ctx context.Context, ref Ref, id string) (bool, error) {
	r, err := normRef(ref)
	if err != nil {
		return false, err
	}
	if r.ID != "" {
		return false, newError(ErrInvalid, r.ID, "address the directory as drive:/path", "Make dir needs a drive:/path ref, not an id.")
	}
	if id != "" {
		if _, err := parseID(id); err != nil {
			return false, newError(ErrInvalid, r.String(), "give the id as a canonical lowercase UUID, or none for a fresh one",
				"The id %s is not a UUID.", quote(id))
		}
	}
	var created bool
	err = s.update(ctx, func(t *txn) error {
		t.op = OpMakeDir
		created = false
		if err := t.access.CheckChange(r.Drive, r.Path); err != nil {
			return err
		}
		n, err := t.lookup(r)
		if err != nil {
			return err
		}
		ref := n.ref()
		switch {
		case n.isDir():
			return nil
		case n.val != nil:
			return newError(ErrConflict, ref, "choose another path, or delete the item first",
				"An item already exists at %s, so it cannot become a directory.", ref)
		case n.path == "/":
			return newError(ErrInvalid, ref, "create a directory or item below it, e.g. "+FormatRef(n.drive, "/notes"),
				"%s is a drive root; it exists as soon as the drive has items.", ref)
		}
		if p, bad := fileAncestor(t.driveBucket(n.drive), n.path); bad {
			return newError(ErrNotDir, ref, "choose a path that is not below an item",
				"Cannot create %s: %s is an item, not a directory.", ref, FormatRef(n.drive, p))
		}
		dirID, err := t.newItemID(id)
		if err != nil {
			return err
		}
		it := Item{
			ID: dirID, Drive: n.drive, Path: n.path, Title: baseName(n.path),
			MimeType: DirMimeType, IsDir: true, ContentHash: HashContent(nil),
			CreatedAt: t.now, UpdatedAt: t.now,
		}
		created = true
		return t.putItem(&it, []byte{}, nil, nil)
	})
	return created, err
}

// SetOrigin records o as what ingest last found of ref's source, without
// touching content or indexes: a refresh that finds the source unchanged
// only moves CheckedAt. It fails with ErrChanged when the content hash is no
// longer expectedHash, so a refresh never stamps content it did not compare.
func (s *Store) SetOrigin(ctx context.Context, ref Ref, o Origin, expectedHash string) (Item, error) {
	return s.setOrigin(ctx, ref, nil, o, expectedHash)
}

// SetSource is SetOrigin for a source that moved: it records source as the
// item's SourceURL too. A watch that finds a file renamed moves its item
// (Move keeps the id and history) and then points it at the file's new path
// this way, without rewriting content the rename did not change.
func (s *Store) SetSource(ctx context.Context, ref Ref, source string, o Origin, expectedHash string) (Item, error) {
	if !utf8.ValidString(source) {
		return Item{}, newError(ErrInvalid, ref.String(), "send UTF-8 text", "The source URL %s is not valid UTF-8.", quote(source))
	}
	return s.setOrigin(ctx, ref, &source, o, expectedHash)
}

func (s *Store) setOrigin(ctx context.Context, ref Ref, source *string, o Origin, expectedHash string) (Item, error) {
	var out Item
	err := s.update(ctx, func(t *txn) error {
		n, err := t.resolveItem(ref)
		if err != nil {
			return err
		}
		it, err := t.item(n.pv().id)
		if err != nil {
			return err
		}
		if it.ContentHash != expectedHash {
			return changedError(n.ref(), expectedHash, it.ContentHash)
		}
		it.Origin = o
		if source != nil {
			it.SourceURL = *source
		}
		out = it
		return t.putMeta(n.pv().id, &it, nil)
	})
	return out, err
}
