package ingest

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/gabriel-vasile/mimetype"
	"github.com/ledongthuc/pdf"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Content is what a file's bytes become in the store.
type Content struct {
	IsText   bool
	Data     []byte // the bytes to store: UTF-8 text (transcoded if the file was in another charset), or the raw bytes for binaries
	MimeType string // "" for text (the store picks the MIME type from the file extension); the sniffed type for binaries, e.g. "application/pdf", "image/png"
	Text     []byte // searchable text extracted from a binary (PDF); nil when none
	Title    string // a title found in the content (PDF Title metadata, when present); "" otherwise
}

// maxPDFText caps the text kept from one PDF.
const maxPDFText = 16 << 20

// Detect classifies data by its content, never by a file name, since
// extensions lie. Valid UTF-8 without NUL bytes is text, its BOM stripped;
// text that mimetype sniffs in another charset (UTF-16 with a BOM, Latin-1,
// windows-1252, a charset an HTML or XML header declares) is transcoded to
// UTF-8. Everything else is binary, with its sniffed MIME type; a PDF's text
// (at most 4 bytes per byte of PDF, and 16 MiB) and title are extracted.
func Detect(data []byte) Content {
	text := bytes.TrimPrefix(data, []byte("\uFEFF"))
	// A PDF can be plain ASCII, so its signature wins over the text rule.
	if !bytes.HasPrefix(text, []byte("%PDF-")) && utf8.Valid(text) && bytes.IndexByte(text, 0) < 0 {
		return Content{IsText: true, Data: text}
	}
	sniffed := mimetype.Detect(text)
	if decoded, ok := transcodeText(sniffed, text); ok {
		return Content{IsText: true, Data: decoded}
	}
	mimeType, _, _ := strings.Cut(sniffed.String(), ";")
	if sniffedAsText(sniffed) {
		mimeType = "application/octet-stream" // text at the start only
	}
	c := Content{Data: data, MimeType: mimeType}
	if sniffed.Is("application/pdf") {
		c.Text, c.Title = pdfText(data)
	}
	return c
}

// transcodeText decodes data, which is not valid UTF-8, to UTF-8 if mimetype
// sniffed text.
func transcodeText(sniffed *mimetype.MIME, data []byte) ([]byte, bool) {
	if !sniffedAsText(sniffed) {
		return nil, false
	}
	_, params, _ := mime.ParseMediaType(sniffed.String())
	charset := params["charset"]
	switch charset {
	case "", "utf-8", "iso-8859-1", "windows-1252":
		// mimetype guesses these from the first KiB only. UTF-8 text with
		// some bad bytes keeps its text; without a single multibyte
		// character it is most likely a legacy 8-bit charset.
		if hasMultibyteRune(data) {
			return withoutNUL([]byte(strings.ToValidUTF8(string(data), "\uFFFD")))
		}
		charset = "windows-1252" // a superset of Latin-1's printable characters
	}
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return nil, false
	}
	// BOMOverride strips a UTF-16 BOM, which the decoders would keep.
	text, _, err := transform.Bytes(unicode.BOMOverride(enc.NewDecoder()), data)
	if err != nil {
		return nil, false
	}
	return withoutNUL(text)
}

func sniffedAsText(m *mimetype.MIME) bool {
	for ; m != nil; m = m.Parent() {
		if m.Is("text/plain") {
			return true
		}
	}
	return false
}

func hasMultibyteRune(data []byte) bool {
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r != utf8.RuneError && size > 1 {
			return true
		}
		data = data[size:]
	}
	return false
}

// withoutNUL refuses decoded text with NUL bytes: mimetype looks at the
// start of the data only.
func withoutNUL(text []byte) ([]byte, bool) {
	return text, bytes.IndexByte(text, 0) < 0
}

// pdfText extracts a PDF's plain text, capped, and its Title metadata. The
// pdf package panics on some malformed input; then there is no text.
func pdfText(data []byte) (text []byte, title string) {
	defer func() {
		if recover() != nil {
			text, title = nil, ""
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, ""
	}
	title = strings.TrimSpace(strings.ToValidUTF8(r.Trailer().Key("Info").Key("Title").Text(), "\uFFFD"))
	limit := min(len(data)*4, maxPDFText)
	var buf bytes.Buffer
	// Pages one by one rather than r.GetPlainText, so the cap stops the
	// work and a bogus page count ends at the first missing page.
	pages := r.NumPage()
	for i := 1; i <= pages && buf.Len() < limit; i++ {
		page := r.Page(i)
		if page.V.IsNull() {
			break
		}
		s, err := page.GetPlainText(nil)
		if err != nil {
			continue // a broken page; keep the others
		}
		buf.WriteString(s)
	}
	text = bytes.TrimSpace([]byte(strings.ToValidUTF8(buf.String(), "\uFFFD")))
	if len(text) == 0 {
		return nil, title
	}
	if len(text) > limit {
		text = text[:limit]
		// Drop the bytes of a rune the cut went through.
		for r, size := utf8.DecodeLastRune(text); r == utf8.RuneError && size == 1; r, size = utf8.DecodeLastRune(text) {
			text = text[:len(text)-1]
		}
	}
	return text, title
}
