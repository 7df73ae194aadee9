package inspector

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Bounds of what one fragment shows; each page links to the next.
const (
	listPage     = 100  // entries of a directory listing
	historyPage  = 50   // revisions of an item's history
	logPage      = 50   // changes of the store-wide log
	maxShowLines = 5000 // lines of an item rendered or shown raw
)

func (in *Inspector) whoami(ctx context.Context, _ *http.Request) (string, any, error) {
	who, err := in.admin.WhoAmI(ctx, &ctxdv1.WhoAmIRequest{})
	return "whoami", who, err
}

func (in *Inspector) drives(ctx context.Context, _ *http.Request) (string, any, error) {
	resp, err := in.vfs.ListDrives(ctx, &ctxdv1.ListDrivesRequest{})
	return "drives", resp, err
}

type listView struct {
	Ref, Parent, Next string
	Entries           []*ctxdv1.ListEntry
}

func (in *Inspector) list(ctx context.Context, r *http.Request) (string, any, error) {
	ref := r.FormValue("ref")
	resp, err := in.vfs.List(ctx, &ctxdv1.ListRequest{Ref: ref, Limit: listPage, PageToken: r.FormValue("page")})
	if err != nil {
		return "", nil, err
	}
	return "list", listView{Ref: ref, Parent: parentRef(ref), Next: resp.GetNextPageToken(), Entries: resp.GetEntries()}, nil
}

// parentRef is the directory above ref ("notes:/a/b" → "notes:/a"), ""
// above a drive's root.
func parentRef(ref string) string {
	drive, path, ok := strings.Cut(ref, ":")
	if !ok || path == "" || path == "/" {
		return ""
	}
	path = strings.TrimSuffix(path, "/")
	if i := strings.LastIndexByte(path, '/'); i > 0 {
		return drive + ":" + path[:i]
	}
	return drive + ":/"
}

type itemView struct {
	Item *ctxdv1.Item
	Tab  tabView
}

func (in *Inspector) item(ctx context.Context, r *http.Request) (string, any, error) {
	tab, err := in.rendered(ctx, r.FormValue("ref"))
	if err != nil {
		return "", nil, err
	}
	return "item", itemView{Item: tab.Item, Tab: tab}, nil
}

// tabView is an item's text: rendered markdown (HTML), or plain text.
type tabView struct {
	Item        *ctxdv1.Item
	HTML        template.HTML
	Text        string
	Frontmatter string
	Shown       int64 // lines shown
	Total       int64
}

func (in *Inspector) read(ctx context.Context, ref string) (tabView, error) {
	resp, err := in.vfs.Read(ctx, &ctxdv1.ReadRequest{Ref: ref, LineLimit: maxShowLines})
	if err != nil {
		return tabView{}, err
	}
	v := tabView{Item: resp.GetItem(), Text: resp.GetContent(), Shown: resp.GetEndLine(), Total: resp.GetTotalLines()}
	v.Frontmatter, _ = splitFrontmatter(v.Text)
	return v, nil
}

func (in *Inspector) rendered(ctx context.Context, ref string) (tabView, error) {
	v, err := in.read(ctx, ref)
	if err != nil {
		return v, err
	}
	if isMarkdown(v.Item) {
		_, body := splitFrontmatter(v.Text)
		var buf bytes.Buffer
		if err := in.markdown.Convert([]byte(body), &buf); err != nil {
			return v, fmt.Errorf("render markdown: %w", err)
		}
		v.HTML = template.HTML(buf.String()) // goldmark escapes; raw HTML is off
	}
	return v, nil
}

func isMarkdown(it *ctxdv1.Item) bool {
	return strings.HasPrefix(it.GetMimeType(), "text/markdown") || strings.HasSuffix(it.GetPath(), ".md")
}

// splitFrontmatter splits a leading "---" YAML block from text.
func splitFrontmatter(text string) (frontmatter, body string) {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return "", text
	}
	for i := 0; i < len(rest); {
		j := strings.IndexByte(rest[i:], '\n')
		line := rest[i:]
		if j >= 0 {
			line = rest[i : i+j]
		}
		if strings.TrimRight(line, " \r") == "---" {
			end := len(rest)
			if j >= 0 {
				end = i + j + 1
			}
			return rest[:i], rest[end:]
		}
		if j < 0 {
			break
		}
		i += j + 1
	}
	return "", text
}

func (in *Inspector) itemRendered(ctx context.Context, r *http.Request) (string, any, error) {
	v, err := in.rendered(ctx, r.FormValue("ref"))
	return "tab-rendered", v, err
}

func (in *Inspector) itemRaw(ctx context.Context, r *http.Request) (string, any, error) {
	v, err := in.read(ctx, r.FormValue("ref"))
	return "tab-raw", v, err
}

func (in *Inspector) itemMeta(ctx context.Context, r *http.Request) (string, any, error) {
	v, err := in.read(ctx, r.FormValue("ref"))
	return "tab-meta", v, err
}

func (in *Inspector) itemChunks(ctx context.Context, r *http.Request) (string, any, error) {
	resp, err := in.vfs.Chunks(ctx, &ctxdv1.ChunksRequest{Ref: r.FormValue("ref")})
	return "tab-chunks", resp, err
}

type historyView struct {
	Ref       string
	Owner     bool
	Revisions []*ctxdv1.Revision
	Before    int64 // the before_rev of the next page; 0 when none
}

func (in *Inspector) itemHistory(ctx context.Context, r *http.Request) (string, any, error) {
	ref := r.FormValue("ref")
	before, err := formInt(r, "before")
	if err != nil {
		return "", nil, err
	}
	resp, err := in.vfs.History(ctx, &ctxdv1.HistoryRequest{Ref: ref, Limit: historyPage, BeforeRev: before})
	if err != nil {
		return "", nil, err
	}
	who, err := in.admin.WhoAmI(ctx, &ctxdv1.WhoAmIRequest{})
	if err != nil {
		return "", nil, err
	}
	v := historyView{Ref: ref, Owner: who.GetOwner(), Revisions: resp.GetRevisions()}
	if n := len(v.Revisions); n == historyPage {
		v.Before = v.Revisions[n-1].GetRev()
	}
	return "tab-history", v, nil
}

// diffLine is one line of a unified diff with its kind: "add", "del",
// "hunk", "file" or "" for context.
type diffLine struct {
	Kind, Text string
}

type diffView struct {
	Ref  string
	Resp *ctxdv1.DiffResponse
	Rows []diffLine
}

func (in *Inspector) diff(ctx context.Context, r *http.Request) (string, any, error) {
	from, err := formInt(r, "from")
	if err != nil {
		return "", nil, err
	}
	to, err := formInt(r, "to")
	if err != nil {
		return "", nil, err
	}
	ref := r.FormValue("ref")
	resp, err := in.vfs.Diff(ctx, &ctxdv1.DiffRequest{Ref: ref, FromRev: from, ToRev: to})
	if err != nil {
		return "", nil, err
	}
	v := diffView{Ref: ref, Resp: resp}
	for i, line := range strings.Split(strings.TrimSuffix(resp.GetUnified(), "\n"), "\n") {
		if resp.GetUnified() == "" {
			break
		}
		kind := ""
		switch {
		case i < 2:
			kind = "file"
		case strings.HasPrefix(line, "@@"):
			kind = "hunk"
		case strings.HasPrefix(line, "+"):
			kind = "add"
		case strings.HasPrefix(line, "-"):
			kind = "del"
		}
		v.Rows = append(v.Rows, diffLine{Kind: kind, Text: line})
	}
	return "diff", v, nil
}

type revertView struct {
	Ref    string
	Rev    int64
	Result *ctxdv1.RevertResponse
}

// revert asks for confirmation first; the confirming form posts again with
// confirm=yes. Only the owner is offered it, and the inspector refuses it
// for anyone else, whatever the token's scopes.
func (in *Inspector) revert(ctx context.Context, r *http.Request) (string, any, error) {
	rev, err := formInt(r, "rev")
	if err != nil {
		return "", nil, err
	}
	v := revertView{Ref: r.PostFormValue("ref"), Rev: rev}
	who, err := in.admin.WhoAmI(ctx, &ctxdv1.WhoAmIRequest{})
	if err != nil {
		return "", nil, err
	}
	if !who.GetOwner() {
		return "error", errorView{
			Message: "only the owner may revert from the inspector, and this session is " + who.GetName(),
			Hint:    "Sign in with `ctxd ui` or the owner token, or run `ctxd revert REF --to REV`.",
		}, nil
	}
	if r.PostFormValue("confirm") != "yes" {
		return "revert-confirm", v, nil
	}
	if v.Result, err = in.vfs.Revert(ctx, &ctxdv1.RevertRequest{Ref: v.Ref, Rev: rev}); err != nil {
		return "", nil, err
	}
	return "revert-done", v, nil
}

type searchView struct {
	Form formValues
	Resp *ctxdv1.SearchResponse
}

// formValues holds a form's values as submitted, to fill the form again.
type formValues map[string]string

func (in *Inspector) searchPage(ctx context.Context, r *http.Request) (string, any, error) {
	v := searchView{Form: formValues{}}
	for _, k := range []string{"q", "mode", "group", "drives", "paths", "mimes", "tags", "limit"} {
		v.Form[k] = r.FormValue(k)
	}
	if strings.TrimSpace(v.Form["q"]) == "" {
		return "search", v, nil
	}
	limit, err := formInt(r, "limit")
	if err != nil {
		return "", nil, err
	}
	req := &ctxdv1.SearchRequest{
		Queries: []*ctxdv1.SearchQuery{{Text: v.Form["q"]}},
		Mode:    ctxdv1.SearchMode(ctxdv1.SearchMode_value["SEARCH_MODE_"+strings.ToUpper(v.Form["mode"])]),
		GroupBy: ctxdv1.SearchGroupBy(ctxdv1.SearchGroupBy_value["SEARCH_GROUP_BY_"+strings.ToUpper(v.Form["group"])]),
		Limit:   int32(limit),
		Filter: &ctxdv1.SearchFilter{
			Drives: fields(v.Form["drives"]), PathPrefixes: fields(v.Form["paths"]),
			MimeTypes: fields(v.Form["mimes"]), Tags: fields(v.Form["tags"]),
		},
		Explain: true,
	}
	if v.Resp, err = in.search.Search(ctx, req); err != nil {
		return "", nil, err
	}
	return "search", v, nil
}

// fields splits a form value on commas and spaces.
func fields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

type logView struct {
	Actor, Since, Next string
	Revisions          []*ctxdv1.Revision
}

func (in *Inspector) log(ctx context.Context, r *http.Request) (string, any, error) {
	v := logView{Actor: r.FormValue("actor"), Since: r.FormValue("since")}
	req := &ctxdv1.LogRequest{Actor: v.Actor, Limit: logPage, PageToken: r.FormValue("page")}
	if v.Since != "" {
		since, err := parseSince(v.Since, time.Now())
		if err != nil {
			return "error", errorView{Message: err.Error(), Hint: `Give a duration back from now ("24h", "90m") or a time ("2026-11-24T09:00:00Z").`}, nil
		}
		req.Since = timestamppb.New(since)
	}
	resp, err := in.vfs.Log(ctx, req)
	if err != nil {
		return "", nil, err
	}
	v.Revisions, v.Next = resp.GetRevisions(), resp.GetNextPageToken()
	return "log", v, nil
}

// parseSince reads a duration back from now or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("since %q is neither a duration nor an RFC 3339 time", s)
	}
	return t, nil
}

type contextView struct {
	Task, Budget string
	Resp         *ctxdv1.BuildContextResponse
}

func (in *Inspector) contextPreview(ctx context.Context, r *http.Request) (string, any, error) {
	v := contextView{Task: r.FormValue("task"), Budget: r.FormValue("budget")}
	if strings.TrimSpace(v.Task) == "" {
		return "context", v, nil
	}
	budget, err := formInt(r, "budget")
	if err != nil {
		return "", nil, err
	}
	v.Resp, err = in.context.BuildContext(ctx, &ctxdv1.BuildContextRequest{Task: v.Task, Budget: int32(budget)})
	if err != nil {
		return "", nil, err
	}
	return "context", v, nil
}

func (in *Inspector) status(ctx context.Context, _ *http.Request) (string, any, error) {
	resp, err := in.admin.Status(ctx, &ctxdv1.StatusRequest{})
	return "status", resp, err
}

// formInt reads an optional whole number from the form; "" is 0.
func formInt(r *http.Request, key string) (int64, error) {
	s := strings.TrimSpace(r.FormValue(key))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, invalid(fmt.Sprintf("%s %q is not a whole number", key, s))
	}
	return n, nil
}
