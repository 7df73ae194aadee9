// Package inspector is the daemon's web inspector, served at /ui/ on its
// HTTP listener: browse drives and items (rendered markdown, raw text,
// metadata, frontmatter, chunks and question vectors), search with every
// mode and filter and see why each result ranked where it did, an item's
// history with diffs and revert, the store-wide log, a preview of a task's
// assembled context, and the daemon's status. Everything it serves is
// embedded in the binary: it works offline and loads nothing from elsewhere.
//
// # Stack: server-rendered html/template plus htmx
//
// Pages are HTML fragments rendered on the server with html/template and
// swapped into the page by htmx (one vendored, minified file, pinned by
// version and sha256; `make inspector-assets` fetches it again from npm and
// `make checkgenerate` fails if the committed file differs). One small
// hand-written app.js keeps the session token and adds it to requests.
// There is no build step, no node_modules and no second language for the
// views: a small Go team can keep this for years, html/template escapes
// every value by context, and the fragments are the same Go types the
// daemon already returns. A compiled single-page app would add a
// JavaScript toolchain to pin and rebuild, and a second copy of the API's
// types, for screens that are tables and forms.
//
// # One authorisation path
//
// Handlers render fragments by calling the daemon's gRPC services in
// process, over the connection the JSON gateway uses, forwarding the
// caller's Authorization header. The daemon's interceptors then check the
// token, its scopes and its drive and path limits exactly as for any API
// call: an agent token sees in the inspector what it sees through the API,
// no more. Static assets need no token; every fragment does (401 with a
// sign-in prompt otherwise).
//
// # Browser security
//
// The token lives in the tab's sessionStorage, never in a cookie, and
// app.js sends it as "Authorization: Bearer" on every request. A page on
// another site cannot make the browser send that header, so every write
// (revert, the sign-in code exchange; all POST) is safe from cross-site
// request forgery by construction, and the daemon's Host/Origin guard
// refuses foreign Host and Origin headers before any of this runs. Every
// response carries a strict Content-Security-Policy (scripts and styles
// from the inspector's own files only: no inline script, no inline event
// handler, no style attribute, no eval; htmx is configured accordingly),
// nosniff, no-referrer, and fragments are not cached. Markdown is rendered
// by goldmark without raw HTML and with dangerous link schemes dropped.
package inspector
