package daemon

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// edgePolicy decides which requests the HTTP listener answers at all, before
// any token check. A web page can make the browser send requests to the
// loopback listener in two ways: DNS rebinding (its own name, now resolving
// to 127.0.0.1, arrives as the Host header) and cross-site requests (its
// origin arrives as the Origin header). So only loopback names are answered,
// and only loopback origins, plus the allowed_hosts and allowed_origins a
// reverse proxy needs. No CORS header is ever sent, so a browser lets no
// other origin read a response.
//
// http.CrossOriginProtection does not fit: it lets safe methods (GET, HEAD,
// OPTIONS) through from any origin, and same-origin requests whatever their
// Host, which is exactly what rebinding produces.
type edgePolicy struct {
	hosts   []string // allowed_hosts, lowercase
	origins []string // allowed_origins, lowercase
}

func newEdgePolicy(hosts, origins []string) edgePolicy {
	lower := func(s []string) []string {
		out := make([]string, len(s))
		for i, v := range s {
			out[i] = strings.ToLower(v)
		}
		return out
	}
	return edgePolicy{hosts: lower(hosts), origins: lower(origins)}
}

// guard refuses a request whose Host is not allowed with 421 and one with a
// foreign Origin with 403, each with the JSON error body of the gateway.
func (p edgePolicy) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.hostAllowed(r.Host) {
			writeStatus(w, http.StatusMisdirectedRequest, apiError(ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED,
				fmt.Sprintf("the Host header %.200q is not a loopback name; the daemon answers only requests addressed to localhost, 127.0.0.0/8 or [::1] "+
					"(a foreign name is how a web page reaches a local server by DNS rebinding)", r.Host),
				"Address the daemon as localhost, 127.0.0.1 or [::1]. Behind a reverse proxy, add the name it sends as Host to allowed_hosts "+
					"in the daemon config (--allowed-host, CTXD_ALLOWED_HOSTS)."))
			return
		}
		for _, origin := range r.Header.Values("Origin") {
			if !p.originAllowed(origin) {
				writeStatus(w, http.StatusForbidden, apiError(ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED,
					fmt.Sprintf("the Origin header %.200q is not a loopback origin; the daemon refuses requests that web pages on other sites make through a browser", origin),
					"Call the API from a program, which sends no Origin, or from a page served on localhost. To allow a page on another origin "+
						"(behind a reverse proxy), add its scheme://host[:port] to allowed_origins in the daemon config (--allowed-origin, CTXD_ALLOWED_ORIGINS); "+
						"the daemon sends no CORS headers."))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed accepts a loopback name with any port, or an allowed_hosts
// entry: "name" with any port, "name:port" with that port only.
func (p edgePolicy) hostAllowed(hostport string) bool {
	host, port, ok := splitHost(hostport)
	if !ok {
		return false
	}
	if isLoopbackName(host) {
		return true
	}
	return slices.ContainsFunc(p.hosts, func(entry string) bool {
		h, pt, _ := splitHost(entry)
		return h == host && (pt == "" || pt == port)
	})
}

// originAllowed accepts http(s) origins of a loopback name with any port,
// and the allowed_origins entries exactly.
func (p edgePolicy) originAllowed(origin string) bool {
	host, ok := parseOrigin(origin)
	if !ok {
		return false
	}
	return isLoopbackName(host) || slices.Contains(p.origins, strings.ToLower(origin))
}

// isLoopbackName reports whether host (lowercase, without brackets) names
// this machine: localhost or a loopback IP. Other names under .localhost are
// not included; allowed_hosts can name them.
func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// splitHost splits a Host header or allowed_hosts entry: name, name:port,
// IPv4, IPv4:port, [IPv6] or [IPv6]:port. host comes back lowercase without
// brackets; port is empty when absent. ok is false for anything else (a
// scheme, a path, an empty or non-numeric port).
func splitHost(s string) (host, port string, ok bool) {
	if rest, isV6 := strings.CutPrefix(s, "["); isV6 {
		host, rest, closed := strings.Cut(rest, "]")
		if !closed || !strings.Contains(host, ":") || net.ParseIP(host) == nil {
			return "", "", false
		}
		if rest != "" {
			if port, ok = strings.CutPrefix(rest, ":"); !ok || !validPort(port) {
				return "", "", false
			}
		}
		return strings.ToLower(host), port, true
	}
	host, port, hasPort := strings.Cut(s, ":")
	if host == "" || strings.Trim(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "" || hasPort && !validPort(port) {
		return "", "", false
	}
	return strings.ToLower(host), port, true
}

func validPort(p string) bool {
	n, err := strconv.ParseUint(p, 10, 16)
	return err == nil && n > 0 && len(p) <= 5
}

// parseOrigin returns the host of an origin as browsers serialize it:
// http or https, "://", host[:port], nothing after. "null" (sandboxed
// pages, file: URLs) is not an origin that can be allowed.
func parseOrigin(origin string) (host string, ok bool) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(origin, "#") {
		return "", false
	}
	host, _, ok = splitHost(u.Host)
	return host, ok
}

// validateEdge checks allowed_hosts and allowed_origins.
func validateEdge(hosts, origins []string) error {
	for _, h := range hosts {
		if _, _, ok := splitHost(h); !ok {
			return fmt.Errorf(`config: allowed_hosts: %q is not host or host:port, such as "ctxd.example.com" or "ctxd.example.com:8443" (no scheme, no path)`, h)
		}
	}
	for _, o := range origins {
		if _, ok := parseOrigin(o); !ok {
			return fmt.Errorf(`config: allowed_origins: %q is not scheme://host[:port] with scheme http or https and nothing after, such as "https://ctxd.example.com"`, o)
		}
	}
	return nil
}
