package daemon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// inetSocket is a TCP socket in LISTEN state or a bound UDP socket of this
// process.
type inetSocket struct {
	proto string // "tcp", "tcp6", "udp", "udp6"
	port  int
	inode string
}

// listeningSockets lists this process's TCP sockets in LISTEN state and
// its UDP sockets: the entries of /proc/net/{tcp,tcp6,udp,udp6} whose inode
// is a socket among /proc/self/fd.
func listeningSockets(t *testing.T) []inetSocket {
	t.Helper()
	fds, err := filepath.Glob("/proc/self/fd/*")
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			ours[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []inetSocket
	for _, proto := range []string{"tcp", "tcp6", "udp", "udp6"} {
		f, err := os.Open("/proc/net/" + proto)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || !ours[fs[9]] || strings.HasPrefix(proto, "tcp") && fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(fs[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if err != nil {
				t.Fatalf("/proc/net/%s: %q: %v", proto, fs[1], err)
			}
			out = append(out, inetSocket{proto: proto, port: int(port), inode: fs[9]})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// addedSockets returns the sockets of after that before lacks.
func addedSockets(before, after []inetSocket) []inetSocket {
	var out []inetSocket
	for _, s := range after {
		if !slices.Contains(before, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestDaemon_ListensOnlyWhereConfigured: a daemon with only the unix
// socket opens no TCP or UDP socket (its own calls go over an in-memory
// connection), yet runs tools through it; with HTTP configured it opens
// exactly that listener.
func TestDaemon_ListensOnlyWhereConfigured(t *testing.T) {
	t.Run("socket only", func(t *testing.T) {
		cfg := testConfig(t)
		before := listeningSockets(t)
		d := mustStart(t, cfg)
		if added := addedSockets(before, listeningSockets(t)); len(added) != 0 {
			t.Fatalf("a daemon configured with the unix socket alone listens on %+v", added)
		}
		// The in-daemon path works: a tool call goes over it.
		if isErr, out := callTool(t, t.Context(), ctxdv1.NewToolServiceClient(dial(t, "unix://"+cfg.Socket)),
			"context_write", `{"path":"/solo/a.md","content":"alone\n"}`); isErr {
			t.Fatalf("context_write: %v", out)
		}
		if got := readContent(t, t.Context(), d.vfsClient(t), "agent:/solo/a.md"); got != "alone\n" {
			t.Errorf("content = %q", got)
		}
	})
	t.Run("http", func(t *testing.T) {
		cfg := testConfig(t)
		cfg.HTTP = "127.0.0.1:0"
		before := listeningSockets(t)
		d := mustStart(t, cfg)
		added := addedSockets(before, listeningSockets(t))
		if port := d.HTTPAddr().(*net.TCPAddr).Port; len(added) != 1 || added[0].proto != "tcp" || added[0].port != port {
			t.Fatalf("a daemon configured with HTTP on port %d listens on %+v, want that alone", port, added)
		}
	})
}

// TestGateway_InternalPathChecksScopes: what the gateway forwards over the
// in-memory connection passes the same token and scope checks as a TCP
// call: a read-only token reads but may not write, a wrong token is
// refused, and content near max_content_bytes passes both ways.
func TestGateway_InternalPathChecksScopes(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	cfg.MaxContentBytes = 8 << 20
	cfg.Tokens = []TokenConfig{{Name: "reader", SHA256: sha256Hex("reader-token"), Scopes: []string{"read"}}}
	d := mustStart(t, cfg)
	base := "http://" + d.HTTPAddr().String()
	write := `{"ref":"/scoped.md","content":"x"}`

	code, body := httpCall(t, "POST", base+"/v1/write", write, "reader-token")
	if code != http.StatusForbidden {
		t.Fatalf("a read-only token writing through the gateway: %d %s, want 403", code, body)
	}
	decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED)
	if code, body := httpCall(t, "POST", base+"/v1/write", write, "wrong-token"); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token through the gateway: %d %s, want 401", code, body)
	}
	if code, body := httpCall(t, "GET", base+"/v1/read?ref=/scoped.md", "", "reader-token"); code != http.StatusNotFound {
		t.Fatalf("the refused write left an item: %d %s", code, body)
	}

	// 7 MiB of text written by the owner and read back by the reader:
	// large messages cross the in-memory connection in both directions.
	text := strings.Repeat("a line of text, 0123456789\n", (7<<20)/27)
	if code, body := httpCall(t, "POST", base+"/v1/write", fmt.Sprintf(`{"ref":"/big.md","content":%q}`, text), d.token); code != http.StatusOK {
		t.Fatalf("owner writes %d bytes: %d %.300s", len(text), code, body)
	}
	code, body = httpCall(t, "GET", base+"/v1/read?ref=/big.md", "", "reader-token")
	var r struct{ Content string }
	if err := json.Unmarshal(body, &r); code != http.StatusOK || err != nil || r.Content != text {
		t.Fatalf("reader reads %d bytes: %d, %v, %d bytes; %.300s", len(text), code, err, len(r.Content), body)
	}
}
