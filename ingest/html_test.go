package ingest

import (
	"strings"
	"testing"
	"unicode/utf8"
)

const boilerplatePage = `<!doctype html>
<html><head>
<title>  The
	Page Title </title>
<meta property="og:title" content="OG title">
<style>.chrome { color: red }</style>
<script>var trackingScript = 1</script>
</head>
<body>
<header><h1>Site Banner</h1><nav><a href="/">Home nav link</a></nav></header>
<div role="navigation">Breadcrumb trail</div>
<aside>Related sidebar</aside>
<form><input name="q"><button>Search form</button></form>
<div hidden>Hidden attribute text</div>
<div aria-hidden="true">Aria hidden text</div>
<p>Outside the article</p>
<article>
  <header><h1>Article Heading</h1></header>
  <p>Article paragraph with <a href="other.html">a relative link</a>.</p>
  <iframe src="https://ads.example"></iframe>
  <svg><title>Icon title</title><text>svg text</text></svg>
  <noscript>Enable JavaScript</noscript>
  <table><tr><th>Name</th><th>Value</th></tr><tr><td>alpha</td><td>1</td></tr></table>
  <div></div><div></div><div></div>
  <p>Closing paragraph</p>
</article>
<footer>Copyright footer</footer>
</body></html>`

func TestHTMLToMarkdown_dropsBoilerplate(t *testing.T) {
	md, title, err := HTMLToMarkdown([]byte(boilerplatePage), "https://example.com/docs/page.html")
	if err != nil {
		t.Fatal(err)
	}
	if title != "The Page Title" {
		t.Errorf("title = %q, want %q", title, "The Page Title")
	}
	got := string(md)
	for _, want := range []string{
		"# Article Heading",
		"Article paragraph with [a relative link](https://example.com/docs/other.html).",
		"| alpha | 1     |",
		"Closing paragraph",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{
		"Site Banner", "Home nav link", "Breadcrumb trail", "Related sidebar", "Search form",
		"Hidden attribute text", "Aria hidden text", "Outside the article", "trackingScript",
		"chrome", "ads.example", "Icon title", "svg text", "Enable JavaScript", "Copyright footer",
	} {
		if strings.Contains(got, unwanted) {
			t.Errorf("markdown contains %q:\n%s", unwanted, got)
		}
	}
	if strings.Contains(got, "\n\n\n") || got != strings.TrimSpace(got) {
		t.Errorf("markdown has runs of blank lines or surrounding space: %q", got)
	}
}

func TestHTMLToMarkdown_mainContent(t *testing.T) {
	tests := []struct {
		name, doc  string
		want, drop []string
	}{
		{
			name: "main element",
			doc:  `<body><div>Page chrome</div><main><p>Main text</p></main></body>`,
			want: []string{"Main text"}, drop: []string{"Page chrome"},
		},
		{
			name: "role main wins over article outside it",
			doc:  `<body><article>Teaser</article><div role="main"><p>Main text</p></div></body>`,
			want: []string{"Main text"}, drop: []string{"Teaser"},
		},
		{
			name: "several articles keep the whole body",
			doc:  `<body><p>Intro</p><article>First post</article><article>Second post</article></body>`,
			want: []string{"Intro", "First post", "Second post"},
		},
		{
			name: "no landmark keeps the whole body",
			doc:  `<body><h2>Plain</h2><p>Just text</p></body>`,
			want: []string{"## Plain", "Just text"},
		},
		{
			name: "hidden until found is content",
			doc:  `<body><div hidden="until-found">Collapsed answer</div></body>`,
			want: []string{"Collapsed answer"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md, _, err := HTMLToMarkdown([]byte(tt.doc), "https://example.com/")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.want {
				if !strings.Contains(string(md), want) {
					t.Errorf("markdown lacks %q:\n%s", want, md)
				}
			}
			for _, drop := range tt.drop {
				if strings.Contains(string(md), drop) {
					t.Errorf("markdown contains %q:\n%s", drop, md)
				}
			}
		})
	}
}

func TestHTMLToMarkdown_title(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"title element", `<title> A  title </title><h1>Heading</h1>`, "A title"},
		{"og:title without title", `<meta property="og:title" content=" OG  title "><h1>Heading</h1>`, "OG title"},
		{"first h1 without either", `<header><h1>First <em>heading</em></h1></header><h1>Second</h1>`, "First heading"},
		{"svg title is not the page title", `<svg><title>Icon</title></svg><h1>Heading</h1>`, "Heading"},
		{"none", `<p>text</p>`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, title, err := HTMLToMarkdown([]byte(tt.doc), "")
			if err != nil {
				t.Fatal(err)
			}
			if title != tt.want {
				t.Errorf("title = %q, want %q", title, tt.want)
			}
		})
	}
}

func TestHTMLToMarkdown_invalidUTF8(t *testing.T) {
	md, title, err := HTMLToMarkdown([]byte("<title>caf\xe9</title><p>na\xefve \xff text</p>"), "")
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(md) || !utf8.ValidString(title) {
		t.Errorf("output is not valid UTF-8: markdown %q, title %q", md, title)
	}
	if !strings.Contains(string(md), "text") {
		t.Errorf("markdown lost the text: %q", md)
	}
}

func FuzzHTMLToMarkdown(f *testing.F) {
	for _, seed := range []string{
		"",
		boilerplatePage,
		`<main><article><header><h1>x</h1></header></article></main>`,
		`<table><tr><td colspan=3><ul><li><pre>code</pre></ul></table>`,
		`<a href="javascript:alert(1)">x</a><img src="//x/y.png" alt="]">`,
		`<svg><foreignObject><p hidden>x</p></foreignObject></svg><template><nav>y</nav></template>`,
		"<p>\x00\xff</p><title>\xfe</title>",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		md, title, err := HTMLToMarkdown(doc, "https://example.com/a/b.html")
		if err != nil {
			t.Fatalf("error on %q: %v", doc, err)
		}
		if !utf8.Valid(md) || !utf8.ValidString(title) {
			t.Fatalf("output is not valid UTF-8 for %q: markdown %q, title %q", doc, md, title)
		}
	})
}
