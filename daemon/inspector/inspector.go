package inspector

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

//go:embed static templates
var files embed.FS

// CSP is the Content-Security-Policy of every /ui/ response: the
// inspector's own scripts, styles and connections only, no inline code, and
// no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxFormBytes bounds the body of the inspector's POSTs (a sign-in code, a
// revert's ref and revision).
const maxFormBytes = 64 << 10

// Exchange trades a one-time sign-in code for a session token and the time
// it expires; its errors are gRPC statuses.
type Exchange func(code string) (token string, expires time.Time, err error)

// Inspector serves the web inspector under /ui/.
type Inspector struct {
	vfs      ctxdv1.VfsServiceClient
	search   ctxdv1.SearchServiceClient
	admin    ctxdv1.AdminServiceClient
	context  ctxdv1.ContextServiceClient
	exchange Exchange
	pages    *template.Template
	markdown goldmark.Markdown
	mux      *http.ServeMux
}

// New returns the inspector. It calls the daemon's services over conn with
// each caller's own Authorization header, and signs browsers in with
// exchange.
func New(conn *grpc.ClientConn, exchange Exchange) *Inspector {
	in := &Inspector{
		vfs: ctxdv1.NewVfsServiceClient(conn), search: ctxdv1.NewSearchServiceClient(conn),
		admin: ctxdv1.NewAdminServiceClient(conn), context: ctxdv1.NewContextServiceClient(conn),
		exchange: exchange,
		pages:    template.Must(template.New("").Funcs(funcs).ParseFS(files, "templates/*.html")),
		// goldmark's defaults leave raw HTML out and drop javascript: links;
		// table alignment as an attribute, since the CSP refuses style=.
		markdown: goldmark.New(goldmark.WithExtensions(
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough, extension.Linkify, extension.TaskList)),
		mux: http.NewServeMux(),
	}
	static, _ := fs.Sub(files, "static")
	assets := http.StripPrefix("/ui/static/", http.FileServerFS(static))
	in.mux.Handle("GET /ui/static/{file}", assets) // files only: no directory listing
	in.mux.HandleFunc("GET /ui/{$}", in.index)
	in.mux.HandleFunc("POST /ui/signin", in.signIn)
	for path, h := range map[string]fragment{
		"GET /ui/f/whoami":        in.whoami,
		"GET /ui/f/drives":        in.drives,
		"GET /ui/f/ls":            in.list,
		"GET /ui/f/item":          in.item,
		"GET /ui/f/item/rendered": in.itemRendered,
		"GET /ui/f/item/raw":      in.itemRaw,
		"GET /ui/f/item/meta":     in.itemMeta,
		"GET /ui/f/item/chunks":   in.itemChunks,
		"GET /ui/f/item/history":  in.itemHistory,
		"GET /ui/f/diff":          in.diff,
		"POST /ui/f/revert":       in.revert,
		"GET /ui/f/search":        in.searchPage,
		"GET /ui/f/log":           in.log,
		"GET /ui/f/context":       in.contextPreview,
		"GET /ui/f/status":        in.status,
	} {
		in.mux.Handle(path, in.handle(h))
	}
	in.mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		in.renderError(w, http.StatusNotFound, "no page "+r.Method+" "+r.URL.Path, "The inspector starts at /ui/.")
	})
	return in
}

// ServeHTTP sets the security headers of every response, then routes.
func (in *Inspector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, "/ui/static/") {
		h.Set("Cache-Control", "no-store")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	in.mux.ServeHTTP(w, r)
}

// fragment loads what one fragment shows. It returns the template to
// render and its data.
type fragment func(ctx context.Context, r *http.Request) (page string, data any, err error)

// handle runs a fragment with the caller's token forwarded to the
// services, renders it, and renders errors as error fragments with the
// HTTP status of their gRPC code.
func (in *Inspector) handle(f fragment) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth == "" {
			in.renderSignIn(w, "Sign in to continue.")
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil {
				in.renderError(w, http.StatusBadRequest, "the form did not parse: "+err.Error(), "Reload the page and try again.")
				return
			}
		}
		ctx := metadata.AppendToOutgoingContext(r.Context(), "authorization", auth)
		page, data, err := f(ctx, r)
		if err != nil {
			in.renderStatus(w, err)
			return
		}
		in.render(w, http.StatusOK, page, data)
	})
}

// render executes page into a buffer first, so a template error becomes a
// 500 rather than half a fragment.
func (in *Inspector) render(w http.ResponseWriter, code int, page string, data any) {
	var buf bytes.Buffer
	if err := in.pages.ExecuteTemplate(&buf, page, data); err != nil {
		code = http.StatusInternalServerError
		buf.Reset()
		_ = in.pages.ExecuteTemplate(&buf, "error", errorView{Message: "the page failed to render: " + err.Error()})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

type errorView struct {
	Message, Hint string
}

func (in *Inspector) renderError(w http.ResponseWriter, code int, msg, hint string) {
	in.render(w, code, "error", errorView{Message: msg, Hint: hint})
}

func (in *Inspector) renderSignIn(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="ctxd"`)
	in.render(w, http.StatusUnauthorized, "signin-needed", errorView{Message: msg})
}

// renderStatus renders a service error with its message and hint.
func (in *Inspector) renderStatus(w http.ResponseWriter, err error) {
	st := status.Convert(err)
	_, hint := describe(err)
	switch st.Code() {
	case codes.Unauthenticated:
		in.renderSignIn(w, st.Message())
		return
	case codes.Canceled:
		return // the browser left
	}
	in.renderError(w, httpStatus(st.Code()), st.Message(), hint)
}

// describe returns a service error's message and the hint of its
// ErrorDetail.
func describe(err error) (msg, hint string) {
	st := status.Convert(err)
	for _, d := range st.Details() {
		if ed, ok := d.(*ctxdv1.ErrorDetail); ok {
			hint = ed.GetNextActionHint()
		}
	}
	return st.Message(), hint
}

func httpStatus(c codes.Code) int {
	switch c {
	case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition:
		return http.StatusBadRequest
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.Unavailable, codes.ResourceExhausted:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// index serves the page shell; it holds no data, so it needs no token.
func (in *Inspector) index(w http.ResponseWriter, _ *http.Request) {
	in.render(w, http.StatusOK, "index", nil)
}

// signIn trades a one-time code (JSON {"code": ...}) for a session token
// (JSON {"token": ..., "expires_at": ...}).
func (in *Inspector) signIn(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Code string `json:"code"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxFormBytes)).Decode(&req); err != nil || req.Code == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `send {"code": "..."}, the code of a link ` + "`ctxd ui`" + ` printed`})
		return
	}
	token, expires, err := in.exchange(req.Code)
	if err != nil {
		msg, hint := describe(err)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": msg, "hint": hint})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"token": token, "expires_at": expires.UTC().Format(time.RFC3339)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
