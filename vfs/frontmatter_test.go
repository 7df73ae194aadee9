package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/vfs/backend"
)

func TestParseFrontmatter(t *testing.T) {
	half := 0.5
	full := "---\n" +
		"loading: always\n" +
		"agent-modification: true\n" +
		"tags: [zeta, alpha, alpha]\n" +
		"importance: 0.5\n" +
		"title: Soul\n" +
		"description: Who the agent is\n" +
		"date: 2024-01-01 # unknown keys are ignored\n" +
		"---\n"
	tests := []struct {
		name    string
		content string
		want    Frontmatter
		warning string // substring; "" means none
	}{
		{name: "none", content: "# Soul\n"},
		{name: "horizontal rule later", content: "text\n---\nmore\n"},
		{name: "all keys", content: full + "# Soul\n", want: Frontmatter{
			Len: int64(len(full)), Loading: LoadingAlways, AgentModification: true,
			Tags: []string{"alpha", "zeta"}, Importance: &half, Title: "Soul", Description: "Who the agent is",
			agentModificationSet: true,
		}},
		{name: "crlf and dots", content: "---\r\nloading: contextual\r\n...\r\nbody", want: Frontmatter{Len: 31, Loading: LoadingContextual}},
		{name: "empty block", content: "---\n---\nbody", want: Frontmatter{Len: 8}},
		{name: "closing line at the end", content: "---\ntitle: T\n---", want: Frontmatter{Len: 16, Title: "T"}},
		{name: "null values are unset", content: "---\ntitle:\ntags:\n---\n", want: Frontmatter{Len: 21}},
		{name: "one tag as a word", content: "---\ntags: billing\n---\n", want: Frontmatter{Len: 22, Tags: []string{"billing"}}},
		{name: "importance as an integer", content: "---\nimportance: 1\n---\n", want: Frontmatter{Len: 22, Importance: ptr(1.0)}},

		{name: "bad yaml", content: "---\na: 1\nb: c: d\n---\n", warning: "(lines 1-4) is stored as plain text and sets no metadata: line 3: mapping values are not allowed"},
		{name: "not a mapping", content: "---\n- a\n- b\n---\n", warning: "line 2: the frontmatter must be a mapping"},
		{name: "agent-modification yes", content: "---\nloading: always\nagent-modification: yes\n---\n", warning: `line 3: agent-modification must be true or false, not "yes"`},
		{name: "unknown loading", content: "---\nloading: sometimes\n---\n", warning: `line 2: loading must be "always" or "contextual", not "sometimes"`},
		{name: "importance out of range", content: "---\nimportance: 1.5\n---\n", warning: "line 2: importance 1.5 is outside 0..1"},
		{name: "importance not a number", content: "---\nimportance: high\n---\n", warning: "importance must be a number"},
		{name: "tags mapping", content: "---\ntags: {a: b}\n---\n", warning: "tags must be a list"},
		{name: "empty tag", content: "---\ntags: [a, '']\n---\n", warning: "Tag 1 is empty"},
		{name: "title with a line break", content: "---\ntitle: \"a\\nb\"\n---\n", warning: "control characters"},
		{name: "key twice", content: "---\ntitle: a\ntitle: b\n---\n", warning: "line 3: title is given twice"},
		{name: "not closed", content: "---\ntitle: a\n\nbody\n", warning: "no closing"},
		{name: "oversize", content: "---\ndescription: " + strings.Repeat("x", MaxFrontmatterBytes) + "\n---\nbody\n", warning: "no closing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warning := ParseFrontmatter([]byte(tt.content))
			if tt.warning == "" && warning != "" || !strings.Contains(warning, tt.warning) {
				t.Errorf("warning = %q, want one containing %q", warning, tt.warning)
			}
			if tt.warning != "" {
				tt.want = Frontmatter{} // malformed: no metadata at all
				if !strings.Contains(warning, "stored as plain text") {
					t.Errorf("warning %q does not say the block is stored as text", warning)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseFrontmatter = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestSplitFrontmatter(t *testing.T) {
	for _, tt := range []struct{ content, block string }{
		{"---\ntitle: T\n---\nbody\n", "---\ntitle: T\n---\n"},
		{"---\r\ntitle: T  \r\n---  \r\n\r\nbody", "---\r\ntitle: T  \r\n---  \r\n"},
		{"---\ntitle: [bad\n...\nbody", "---\ntitle: [bad\n...\n"}, // split, not parsed
		{"# no frontmatter\n---\n", ""},
		{"---\nnever closed\n", ""},
		{"--- \ntitle: T\n---\n", ""}, // the opening line is exactly ---
	} {
		block, body := SplitFrontmatter([]byte(tt.content))
		if string(block) != tt.block || (tt.block == "") != (block == nil) || string(block)+string(body) != tt.content {
			t.Errorf("SplitFrontmatter(%q) = %q, %q; want block %q", tt.content, block, body, tt.block)
		}
	}
}

const soul = "---\n" +
	"loading: always\n" +
	"agent-modification: false\n" +
	"title: Soul\n" +
	"description: Who the agent is\n" +
	"tags: [identity, core]\n" +
	"importance: 0.9\n" +
	"---\n" +
	"# Soul\n\nI am careful.\n\nI say when I am unsure.\n"

func TestStore_Write_Frontmatter(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	res, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "self:/soul.md"), Content: []byte(soul), IsText: true})
	if err != nil {
		t.Fatal(err)
	}
	it := res.Item
	block, _ := SplitFrontmatter([]byte(soul))
	want := Item{Loading: LoadingAlways, AgentModification: false, FrontmatterLen: int64(len(block)),
		Title: "Soul", Description: "Who the agent is", Tags: []string{"core", "identity"}, Importance: 0.9,
		FrontmatterFields: []string{"agent-modification", "title", "description", "tags", "importance"}}
	if got := (Item{Loading: it.Loading, AgentModification: it.AgentModification, FrontmatterLen: it.FrontmatterLen,
		Title: it.Title, Description: it.Description, Tags: it.Tags, Importance: it.Importance,
		FrontmatterFields: it.FrontmatterFields}); !reflect.DeepEqual(got, want) {
		t.Errorf("item metadata = %+v\nwant %+v", got, want)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings = %q", res.Warnings)
	}
	// Stored metadata equals the response, and the content is byte-exact.
	stored, content, err := s.ReadRaw(ctx, mustRef(t, "self:/soul.md"))
	if err != nil || !reflect.DeepEqual(stored, it) || string(content) != soul {
		t.Errorf("ReadRaw = %+v, %q, %v", stored, content, err)
	}

	// Values the caller sets win; the rest still comes from the frontmatter.
	res, err = s.Write(ctx, WriteParams{Ref: mustRef(t, "self:/soul.md"), Content: []byte(soul), IsText: true,
		Title: "My soul", Tags: []string{"mine"}, OnConflict: ConflictOverwrite})
	if err != nil {
		t.Fatal(err)
	}
	if it := res.Item; it.Title != "My soul" || !reflect.DeepEqual(it.Tags, []string{"mine"}) || it.Description != "Who the agent is" ||
		it.Importance != 0.9 || !reflect.DeepEqual(it.FrontmatterFields, []string{"agent-modification", "description", "importance"}) {
		t.Errorf("with caller values: %+v", it)
	}
	// Frontmatter only counts in a text item, and not in YAML, where "---"
	// separates documents.
	res, err = s.Write(ctx, WriteParams{Ref: mustRef(t, "/docs.yaml"), Content: []byte("---\ntitle: A\n---\ntitle: B\n"), IsText: true})
	if err != nil || res.Item.FrontmatterLen != 0 || res.Item.Title != "docs.yaml" || len(res.Warnings) != 0 {
		t.Errorf("yaml item: %+v, %v", res, err)
	}
}

func TestStore_Write_MalformedFrontmatter(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	bad := "---\nloading: always\nimportance: 7\n---\n# Notes\n"
	res, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "self:/notes.md"), Content: []byte(bad), IsText: true})
	if err != nil {
		t.Fatalf("malformed frontmatter failed the write: %v", err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "self:/notes.md") || !strings.Contains(res.Warnings[0], "line 3: importance 7 is outside 0..1") {
		t.Errorf("warnings = %q, want one naming the item, the line and the problem", res.Warnings)
	}
	it := res.Item
	if it.FrontmatterLen != 0 || it.Loading != "" || it.Importance != 0 || it.Title != "notes.md" || it.FrontmatterFields != nil {
		t.Errorf("malformed frontmatter set metadata: %+v", it)
	}
	if got := mustRead(t, s, "self:/notes.md"); got != bad {
		t.Errorf("content = %q, want it stored as it is", got)
	}
}

func TestStore_Edit_Frontmatter(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	ref := mustRef(t, "self:/soul.md")
	if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(soul), IsText: true, Description: "set by the caller"}); err != nil {
		t.Fatal(err)
	}
	// Lines: 1 ---, 2 loading, 3 agent-modification, 4 title, 5 description, 6 tags, 7 importance, 8 ---.
	res, err := s.Edit(ctx, ref, []Patch{
		{StartLine: 2, EndLine: 2, Content: "loading: contextual"},
		{StartLine: 4, EndLine: 4, Content: "title: New soul"},
		{StartLine: 5, EndLine: 5, Content: "description: from the frontmatter"},
		{StartLine: 6, EndLine: 6}, // tags removed
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	it := res.Item
	if it.Loading != LoadingContextual || it.Title != "New soul" || it.Tags != nil || it.Importance != 0.9 ||
		it.Description != "set by the caller" || it.FrontmatterLen != int64(len("---\nloading: contextual\nagent-modification: false\ntitle: New soul\ndescription: from the frontmatter\nimportance: 0.9\n---\n")) {
		t.Errorf("after editing the frontmatter: %+v", it)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings = %q", res.Warnings)
	}
	// Breaking the frontmatter warns and drops what came from it, keeping
	// what the caller set.
	res, err = s.Edit(ctx, ref, []Patch{{StartLine: 3, EndLine: 3, Content: "agent-modification: perhaps"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	it = res.Item
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "line 3: agent-modification must be true or false") {
		t.Errorf("warnings = %q", res.Warnings)
	}
	if it.Loading != "" || it.FrontmatterLen != 0 || it.Title != "soul.md" || it.Importance != 0 || it.Description != "set by the caller" {
		t.Errorf("after breaking the frontmatter: %+v", it)
	}
	// Mending it brings the metadata back.
	res, err = s.Edit(ctx, ref, []Patch{{StartLine: 3, EndLine: 3, Content: "agent-modification: true"}}, "")
	if err != nil || !res.Item.AgentModification || res.Item.Title != "New soul" || res.Item.Loading != LoadingContextual {
		t.Errorf("after mending the frontmatter: %+v, %v", res.Item, err)
	}
}

// docChunker records the ChunkDoc of every Chunk call and chunks like
// paragraphChunker, hashing the doc's title and description with the text
// as the real chunker does.
type docChunker struct{ docs *[]ChunkDoc }

func (docChunker) ID() string { return "doc" }

func (c docChunker) Chunk(content []byte, doc ChunkDoc) []ChunkSpan {
	*c.docs = append(*c.docs, doc)
	spans := paragraphChunker{}.Chunk(content, doc)
	for i := range spans {
		spans[i].Hash = docHash(doc.Title, doc.Description, content[spans[i].Start:spans[i].End])
	}
	return spans
}

func docHash(title, description string, text []byte) [32]byte {
	return sha256.Sum256([]byte(title + "\n" + description + "\n\n" + string(text)))
}

func TestStore_Frontmatter_NotChunked(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	var docs []ChunkDoc
	mustSetIndexing(t, s, docChunker{&docs}, "m1")
	it := mustWrite(t, s, "self:/soul.md", soul)

	chunks, err := s.Chunks(ctx, mustRef(t, "self:/soul.md"))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range chunks {
		texts = append(texts, strings.TrimSpace(soul[c.Start:c.End])) // the fake does not trim
	}
	if want := []string{"# Soul", "I am careful.", "I say when I am unsure."}; !reflect.DeepEqual(texts, want) {
		t.Errorf("chunk texts = %q, want %q (the frontmatter is not chunked)", texts, want)
	}
	// Line numbers count from the start of the content.
	refs := make([]ChunkRef, len(chunks))
	for i := range chunks {
		refs[i] = ChunkRef{ItemID: it.ID, Index: i}
	}
	read, err := s.ReadChunks(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	if read[0].StartLine != 9 || read[2].StartLine != 13 {
		t.Errorf("chunk lines %d and %d, want 9 and 13", read[0].StartLine, read[2].StartLine)
	}
	// The lexical index sees the description with the title, and no chunk
	// text holds the frontmatter.
	dd, err := s.IndexDocs(ctx, []IndexRead{{ItemID: it.ID}}, false, 0, 0)
	if err != nil || len(dd) != 1 || dd[0].Title != "Soul" || dd[0].Description != "Who the agent is" {
		t.Fatalf("IndexDocs = %+v, %v", dd, err)
	}
	for _, c := range dd[0].Chunks {
		if strings.Contains(c.Text, "loading") {
			t.Errorf("indexed chunk text %q holds the frontmatter", c.Text)
		}
	}
	// The chunker is told the title and description, and the embedding
	// queue hands out the same, so the embedded text matches the hash.
	if want := (ChunkDoc{MimeType: it.MimeType, Path: "/soul.md", Title: "Soul", Description: "Who the agent is"}); len(docs) != 1 || docs[0] != want {
		t.Errorf("chunker docs = %+v, want [%+v]", docs, want)
	}
	pending, err := s.PendingEmbeddings(ctx, 10)
	if err != nil || len(pending) != 3 {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	for _, p := range pending {
		if p.Title != "Soul" || p.Description != "Who the agent is" || p.Hash != docHash(p.Title, p.Description, p.Text) {
			t.Errorf("pending chunk %q: title %q description %q, hash not of its text", p.Text, p.Title, p.Description)
		}
	}

	// A file that is only frontmatter has metadata and nothing to chunk.
	if it := mustWrite(t, s, "self:/flag.md", "---\nloading: always\n---\n"); it.Loading != LoadingAlways {
		t.Errorf("frontmatter-only item: %+v", it)
	}
	if c, err := s.Chunks(ctx, mustRef(t, "self:/flag.md")); err != nil || len(c) != 0 {
		t.Errorf("frontmatter-only item chunks = %+v, %v", c, err)
	}

	// A default title (the file name) is not embedded; a binary item's
	// title is already in its searchable text.
	docs = nil
	mustWrite(t, s, "/plain.txt", "alpha\n")
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/blob"), Content: []byte{0, 1}, Title: "Blob", Description: "bytes"}); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].Title != "" || docs[1].Title != "" || docs[1].Description != "bytes" {
		t.Errorf("chunker docs = %+v, want no titles", docs)
	}
}

func TestStore_Copy_Frontmatter(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	var docs []ChunkDoc
	mustSetIndexing(t, s, docChunker{&docs}, "m1")
	src := mustWrite(t, s, "self:/soul.md", soul)
	if _, err := s.Copy(ctx, mustRef(t, "self:/soul.md"), mustRef(t, "self:/soul-copy.md"), false, ConflictError); err != nil {
		t.Fatal(err)
	}
	cp, content, err := s.ReadRaw(ctx, mustRef(t, "self:/soul-copy.md"))
	if err != nil {
		t.Fatal(err)
	}
	if cp.Title != src.Title || cp.Loading != src.Loading || cp.FrontmatterLen != src.FrontmatterLen ||
		!reflect.DeepEqual(cp.FrontmatterFields, src.FrontmatterFields) || !bytes.Equal(content, []byte(soul)) {
		t.Errorf("copy = %+v, source %+v", cp, src)
	}
	if len(docs) != 1 {
		t.Errorf("the copy was chunked again (%d chunker calls); its chunks embed the same text", len(docs))
	}
}

// TestStore_Frontmatter_ParsedOnRechunk checks that an item stored before
// frontmatter was parsed gets its metadata, and chunks without the block,
// when a new chunker re-chunks it.
func TestStore_Frontmatter_ParsedOnRechunk(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	it := mustWrite(t, s, "self:/soul.md", soul)
	// What an older ctxd stored: no frontmatter metadata, the block chunked.
	err := s.db.Update(ctx, func(tx backend.Tx) error {
		tt := s.newTxn(tx)
		id, _ := parseID(it.ID)
		old := it
		old.Loading, old.FrontmatterLen, old.FrontmatterFields = "", 0, nil
		old.Title, old.Description, old.Tags, old.Importance = "soul.md", "", nil, 0
		return tt.putMeta(id, &old, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	mustSetIndexing(t, s, paragraphChunker{"p2"}, "m1")
	if _, err := s.ChunkPending(ctx, 10); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.ReadRaw(ctx, mustRef(t, "self:/soul.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Loading != LoadingAlways || got.FrontmatterLen != it.FrontmatterLen || got.Title != "Soul" || got.Importance != 0.9 {
		t.Errorf("after re-chunking: %+v", got)
	}
	chunks, err := s.Chunks(ctx, mustRef(t, "self:/soul.md"))
	if err != nil || len(chunks) != 3 || chunks[0].Start != int(it.FrontmatterLen) {
		t.Errorf("chunks = %+v, %v; want 3 starting after the frontmatter", chunks, err)
	}
}

func FuzzParseFrontmatter(f *testing.F) {
	f.Add([]byte(soul))
	f.Add([]byte("---\r\ntags: [a, b]\r\n...\r\n"))
	f.Add([]byte("---\n&a [*a]\n---\n"))
	f.Add([]byte("---\ntitle: [bad\n---\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		fm, warning := ParseFrontmatter(content)
		block, body := SplitFrontmatter(content)
		if len(block)+len(body) != len(content) || len(block) > MaxFrontmatterBytes {
			t.Fatalf("split %d+%d bytes of %d", len(block), len(body), len(content))
		}
		switch {
		case warning != "" && !reflect.DeepEqual(fm, Frontmatter{}):
			t.Fatalf("a warning (%q) with metadata %+v", warning, fm)
		case fm.Len != 0 && fm.Len != int64(len(block)):
			t.Fatalf("Len %d, block %d bytes", fm.Len, len(block))
		case fm.Importance != nil && !(*fm.Importance >= 0 && *fm.Importance <= 1):
			t.Fatalf("importance %v", *fm.Importance)
		case fm.Loading != "" && fm.Loading != LoadingAlways && fm.Loading != LoadingContextual:
			t.Fatalf("loading %q", fm.Loading)
		}
	})
}
