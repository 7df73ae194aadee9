// ctxd inspector: keeps the session token in sessionStorage, sends it as
// "Authorization: Bearer" on every htmx request, trades a one-time sign-in
// code (/ui/#signin=CODE) for a session token, and wires the few buttons
// that need no server round trip. No inline script exists anywhere: the
// Content-Security-Policy allows only this file and htmx.
"use strict";
(function () {
  var KEY = "ctxd-token";

  function token() { return sessionStorage.getItem(KEY); }

  function byId(id) { return document.getElementById(id); }

  function showError(msg) {
    var p = byId("signin-error");
    p.textContent = msg;
    p.hidden = false;
  }

  function signedIn() {
    byId("signin").hidden = true;
    byId("nav").hidden = false;
    htmx.ajax("GET", "/ui/f/whoami", { target: "#who" });
    showLocation();
  }

  // The page in #main is kept in the address bar's fragment (#f/item?ref=...),
  // so reload, back and forward, and a copied address return to it; the
  // fragment never reaches the server, which serves /ui/ alone.
  function showLocation() {
    var m = /^#(f\/[a-z\/]+(\?.*)?)$/.exec(location.hash);
    htmx.ajax("GET", m ? "/ui/" + m[1] : "/ui/f/drives", { target: "#main" });
  }

  document.addEventListener("htmx:afterSwap", function (ev) {
    var info = ev.detail.pathInfo;
    if (ev.detail.target.id !== "main" || !ev.detail.successful || !info || ev.detail.requestConfig.verb !== "get") { return; }
    var h = "#" + info.finalRequestPath.replace(/^\/ui\//, "");
    if (location.hash !== h) { history.pushState(null, "", h); }
  });

  window.addEventListener("popstate", function () {
    if (token()) { showLocation(); }
  });

  function signOut() {
    sessionStorage.removeItem(KEY);
    byId("nav").hidden = true;
    byId("main").replaceChildren();
    byId("who").replaceChildren();
    byId("signin").hidden = false;
  }

  // exchange trades a one-time code for a session token.
  function exchange(code) {
    return fetch("/ui/signin", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code: code }),
      credentials: "omit",
    }).then(function (resp) {
      return resp.json().then(function (body) {
        if (!resp.ok) { throw new Error((body.error || "sign-in failed") + (body.hint ? ". " + body.hint : "")); }
        sessionStorage.setItem(KEY, body.token);
      });
    });
  }

  document.addEventListener("htmx:configRequest", function (ev) {
    var t = token();
    if (t) { ev.detail.headers["Authorization"] = "Bearer " + t; }
  });

  // A fragment answered 401: the token is gone or wrong.
  document.addEventListener("htmx:responseError", function (ev) {
    if (ev.detail.xhr.status === 401 && ev.detail.target && ev.detail.target.id === "who") {
      signOut();
      showError("The token was refused; sign in again.");
    }
  });

  document.addEventListener("click", function (ev) {
    var el = ev.target;
    if (el.closest("a[hx-get]")) { ev.preventDefault(); }
    if (el.id === "signout") { signOut(); }
    if (el.classList.contains("cancel")) {
      var box = el.closest(".confirm");
      if (box) { box.remove(); }
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    byId("signin-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      var t = byId("token").value.trim();
      if (!t) { return; }
      sessionStorage.setItem(KEY, t);
      byId("token").value = "";
      byId("signin-error").hidden = true;
      signedIn();
    });
    var m = /^#signin=([0-9a-f]+)$/.exec(location.hash);
    if (m) {
      history.replaceState(null, "", location.pathname);
      exchange(m[1]).then(signedIn, function (err) { showError(err.message); });
      return;
    }
    if (token()) { signedIn(); }
  });
})();
