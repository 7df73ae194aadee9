package ingest

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLToMarkdown converts an HTML document to clean markdown and extracts its
// title. Navigation, header/footer chrome, scripts, styles, forms, iframes,
// svg, noscript, aside and elements hidden with aria-hidden="true" or the
// hidden attribute are dropped. When the page has a <main> element (or
// role="main"), or else exactly one top-level <article>, only that is
// converted. Relative links and images are made absolute against pageURL.
// The markdown and title are always valid UTF-8.
func HTMLToMarkdown(doc []byte, pageURL string) (markdown []byte, title string, err error) {
	// The converter is a third-party library fed untrusted pages; a panic in
	// it must fail one fetch, not the daemon.
	defer func() {
		if r := recover(); r != nil {
			markdown, title, err = nil, "", fmt.Errorf("convert HTML to markdown: panic: %v", r)
		}
	}()

	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return nil, "", fmt.Errorf("parse HTML: %w", err)
	}
	title = pageTitle(root)
	dropBoilerplate(root)

	content := mainContent(root)
	if content.Parent != nil {
		// Convert the element on its own, as if it were the whole page.
		content.Parent.RemoveChild(content)
	}
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
	md, err := conv.ConvertNode(content, converter.WithDomain(pageURL))
	if err != nil {
		return nil, "", fmt.Errorf("convert HTML to markdown: %w", err)
	}
	// The converter itself trims the result and collapses runs of blank
	// lines to one; it passes invalid UTF-8 through.
	return bytes.ToValidUTF8(md, []byte("\uFFFD")), strings.ToValidUTF8(title, "\uFFFD"), nil
}

// pageTitle returns the <title>, else og:title, else the first <h1>, with
// whitespace collapsed. It runs before boilerplate is dropped, since the
// only <h1> is often in the page header.
func pageTitle(root *html.Node) string {
	var titleTag, ogTitle, h1 string
	walkHTMLElements(root, func(n *html.Node) bool {
		switch {
		case n.DataAtom == atom.Title && n.Namespace == "" && titleTag == "": // not an <svg><title>
			titleTag = collapseSpace(htmlText(n))
		case n.DataAtom == atom.Meta && ogTitle == "" && htmlAttr(n, "property") == "og:title":
			ogTitle = collapseSpace(htmlAttr(n, "content"))
		case n.DataAtom == atom.H1 && h1 == "":
			h1 = collapseSpace(htmlText(n))
		}
		return true
	})
	for _, t := range []string{titleTag, ogTitle, h1} {
		if t != "" {
			return t
		}
	}
	return ""
}

// dropBoilerplate removes the elements that are page chrome or never
// rendered as text.
func dropBoilerplate(root *html.Node) {
	var drop []*html.Node
	walkHTMLElements(root, func(n *html.Node) bool {
		if isBoilerplate(n) {
			drop = append(drop, n)
			return false
		}
		return true
	})
	for _, n := range drop {
		n.Parent.RemoveChild(n)
	}
}

var boilerplateTags = map[atom.Atom]bool{
	atom.Nav: true, atom.Aside: true, atom.Script: true, atom.Style: true,
	atom.Noscript: true, atom.Template: true, atom.Form: true,
	atom.Iframe: true, atom.Svg: true,
}

// boilerplateRoles are the ARIA landmarks equivalent to the dropped tags.
var boilerplateRoles = map[string]bool{
	"navigation": true, "banner": true, "contentinfo": true,
	"complementary": true, "search": true,
}

func isBoilerplate(n *html.Node) bool {
	switch {
	case boilerplateTags[n.DataAtom]:
		return true
	case n.DataAtom == atom.Header || n.DataAtom == atom.Footer:
		return !inSection(n)
	case boilerplateRoles[strings.ToLower(htmlAttr(n, "role"))]:
		return true
	case strings.EqualFold(htmlAttr(n, "aria-hidden"), "true"):
		return true
	}
	// hidden="until-found" is collapsed content meant to be found and read.
	hidden, ok := htmlAttrValue(n, "hidden")
	return ok && !strings.EqualFold(hidden, "until-found")
}

// inSection reports whether a header or footer belongs to a section of the
// content (an article's byline, say) rather than to the page.
func inSection(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		switch p.DataAtom {
		case atom.Article, atom.Section, atom.Main:
			return true
		}
		if strings.EqualFold(htmlAttr(p, "role"), "main") {
			return true
		}
	}
	return false
}

// mainContent returns the page's <main> (or role="main") element, else its
// only top-level <article>, else the whole document. Several top-level
// articles (a blog index) are all content, so none is picked.
func mainContent(root *html.Node) *html.Node {
	var mainElem *html.Node
	var articles []*html.Node
	walkHTMLElements(root, func(n *html.Node) bool {
		if mainElem != nil {
			return false
		}
		if n.DataAtom == atom.Main || strings.EqualFold(htmlAttr(n, "role"), "main") {
			mainElem = n
			return false
		}
		if n.DataAtom == atom.Article {
			articles = append(articles, n)
			return false
		}
		return true
	})
	switch {
	case mainElem != nil:
		return mainElem
	case len(articles) == 1:
		return articles[0]
	}
	return root
}

// walkHTMLElements calls visit on every element under n in document order,
// descending into an element's children only when visit returns true.
func walkHTMLElements(n *html.Node, visit func(*html.Node) bool) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && !visit(c) {
			continue
		}
		walkHTMLElements(c, visit)
	}
}

func htmlText(n *html.Node) string {
	var b strings.Builder
	var collect func(*html.Node)
	collect = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			collect(c)
		}
	}
	collect(n)
	return b.String()
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func htmlAttr(n *html.Node, key string) string {
	v, _ := htmlAttrValue(n, key)
	return v
}

func htmlAttrValue(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}
