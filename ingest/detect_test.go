package ingest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// tinyPDF builds a one-page PDF showing text in Helvetica, with a Title, its
// xref offsets computed as it is written.
func tinyPDF(text, title string) []byte {
	return pdfWithContent(title, "", []byte(fmt.Sprintf("BT /F1 24 Tf 72 720 Td (%s) Tj ET", text)))
}

// deflatedPDF is tinyPDF with its content stream compressed.
func deflatedPDF(t *testing.T, text string) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	fmt.Fprintf(w, "BT /F1 24 Tf 72 720 Td (%s) Tj ET", text)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return pdfWithContent("T", "/Filter /FlateDecode ", z.Bytes())
}

func pdfWithContent(title, streamParams string, content []byte) []byte {
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< %s/Length %d >>\nstream\n%s\nendstream", streamParams, len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Title (%s) >>", title),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, obj := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, obj)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde")

func TestDetect_text(t *testing.T) {
	asciiKiB := strings.Repeat("plain ascii line\n", 128) // longer than what mimetype sniffs
	utf16le := []byte{0xFF, 0xFE, 'h', 0, 'i', 0, ' ', 0, 0xE9, 0}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"UTF-8", []byte("héllo wörld\n"), "héllo wörld\n"},
		{"empty", nil, ""},
		{"UTF-8 BOM stripped", []byte("\uFEFFhello"), "hello"},
		{"Latin-1", []byte("caf\xe9 na\xefve r\xe9sum\xe9\n"), "café naïve résumé\n"},
		{"windows-1252 quotes", []byte("\x93quoted\x94 \x80 5\n"), "\u201cquoted\u201d € 5\n"},
		{"Latin-1 after an ASCII start", []byte(asciiKiB + "Gr\xfc\xdfe\n"), asciiKiB + "Grüße\n"},
		{"UTF-8 with a bad byte late", []byte(asciiKiB + "Grüße \xff end\n"), asciiKiB + "Grüße \uFFFD end\n"},
		{"UTF-16LE with BOM", utf16le, "hi é"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Detect(tt.data)
			if !c.IsText || string(c.Data) != tt.want || c.MimeType != "" || c.Text != nil {
				t.Errorf("Detect = %+v (Data %q), want text %q", c, c.Data, tt.want)
			}
		})
	}
}

func TestDetect_binary(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		wantMime string
	}{
		{"PNG", pngHeader, "image/png"},
		{"NUL in UTF-8", []byte("hello\x00world, otherwise text"), "application/octet-stream"},
		{"NUL late in text", []byte(strings.Repeat("text ", 2000) + "\x00"), "application/octet-stream"},
		{"gzip", []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xfe"), "application/gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Detect(tt.data)
			if c.IsText || c.MimeType != tt.wantMime || !bytes.Equal(c.Data, tt.data) || c.Text != nil {
				t.Errorf("Detect = IsText %v, MimeType %q, Text %q; want binary %s with the raw bytes", c.IsText, c.MimeType, c.Text, tt.wantMime)
			}
		})
	}
}

func TestDetect_pdf(t *testing.T) {
	data := tinyPDF("Hello PDF world", "A Tiny PDF")
	c := Detect(data)
	if c.IsText || c.MimeType != "application/pdf" || !bytes.Equal(c.Data, data) {
		t.Fatalf("Detect = IsText %v, MimeType %q; want a binary application/pdf", c.IsText, c.MimeType)
	}
	if !strings.Contains(string(c.Text), "Hello PDF world") {
		t.Errorf("Text = %q, want it to contain %q", c.Text, "Hello PDF world")
	}
	if c.Title != "A Tiny PDF" {
		t.Errorf("Title = %q, want %q", c.Title, "A Tiny PDF")
	}
}

func TestDetect_malformedPDF(t *testing.T) {
	valid := tinyPDF("Hello PDF world", "T")
	for name, data := range map[string][]byte{
		"garbage":         []byte("%PDF-1.7\n\x00\x01\x02 this is not a pdf \xff\xfe 1 0 obj << /Type /Catalog"),
		"truncated":       valid[:len(valid)/2],
		"bad xref offset": bytes.Replace(valid, []byte("startxref\n"), []byte("startxref\n9"), 1),
		"header only":     []byte("%PDF-"),
	} {
		t.Run(name, func(t *testing.T) {
			c := Detect(data) // must not panic
			if c.IsText && c.MimeType != "" {
				t.Errorf("Detect = %+v", c)
			}
			if c.Text != nil && !utf8.Valid(c.Text) {
				t.Errorf("Text is not UTF-8: %q", c.Text)
			}
		})
	}
}

// TestDetect_pdfTextCap keeps at most 4 bytes of text per byte of PDF, cut
// at a rune boundary.
func TestDetect_pdfTextCap(t *testing.T) {
	// Helvetica's encoding is single-byte: \xe9 is é, two bytes of UTF-8, so
	// after the x an even cap cuts through one; the stream compresses far
	// below its 100,001 bytes.
	data := deflatedPDF(t, "x"+strings.Repeat("\xe9", 100_000))
	c := Detect(data)
	if limit := 4 * len(data); len(c.Text) < limit-2 || len(c.Text) > limit {
		t.Fatalf("Text has %d bytes, want the cap of %d less a cut rune", len(c.Text), limit)
	}
	if rest, ok := strings.CutPrefix(string(c.Text), "x"); !ok || strings.Trim(rest, "é") != "" {
		t.Errorf("Text is not x and whole é runes: %q…", c.Text[:20])
	}
}

func FuzzDetect(f *testing.F) {
	f.Add([]byte("hello"))
	f.Add(pngHeader)
	f.Add([]byte("caf\xe9"))
	f.Add([]byte{0xFF, 0xFE, 'h', 0})
	f.Add(tinyPDF("Hello PDF world", "T"))
	f.Add([]byte("%PDF-1.4\n1 0 obj << >> endobj trailer << /Root 1 0 R >> startxref 0 %%EOF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Detect(data)
		if c.IsText && (!utf8.Valid(c.Data) || bytes.IndexByte(c.Data, 0) >= 0 || c.MimeType != "") {
			t.Errorf("text that is not clean UTF-8: %+v", c)
		}
		if !c.IsText && !bytes.Equal(c.Data, data) {
			t.Errorf("binary Data differs from the input")
		}
		if c.Text != nil && !utf8.Valid(c.Text) {
			t.Errorf("extracted Text is not UTF-8")
		}
	})
}
