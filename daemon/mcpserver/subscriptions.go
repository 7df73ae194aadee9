package mcpserver

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Durable subscriptions (context_watch_query) are resources
// ctxd-subscription://NAME: reading one returns its pending matches
// (without acknowledging them), and a host that subscribes to one gets
// notifications/resources/updated when a match arrives. The server checks
// the subscription's inbox through the API every PollEvery while a host is
// subscribed: `ctxd mcp` reaches the daemon only through it.

// subscriptionScheme is the scheme of a durable subscription's resource URI.
const subscriptionScheme = "ctxd-subscription://"

// PollEvery is how often a subscribed subscription's inbox is checked.
var PollEvery = time.Second

// subscriptionName is the name in a subscription resource URI, or "".
func subscriptionName(uri string) string {
	name, ok := strings.CutPrefix(uri, subscriptionScheme)
	if !ok || name == "" || strings.ContainsAny(name, "/?#") {
		return ""
	}
	return name
}

// readSubscriptionResource answers resources/read of a subscription: its
// pending matches as context_read_subscription shows them, left pending.
func readSubscriptionResource(ctx context.Context, b toolset.Backend, uri string) (*mcp.ReadResourceResult, error) {
	name := subscriptionName(uri)
	if name == "" {
		return nil, requestError(uri, invalidArgument("not a subscription URI", "Name a durable subscription as ctxd-subscription://NAME (context_watch_query returns it)."))
	}
	resp, err := b.Subscription.ReadSubscription(ctx, &ctxdv1.ReadSubscriptionRequest{Name: name, Peek: true})
	if err != nil {
		return nil, requestError(uri, err)
	}
	text, err := toolset.ReadSubscriptionText(resp)
	if err != nil {
		return nil, requestError(uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: text}}}, nil
}

// subscriptionWatch tells subscribed hosts when a subscription's inbox grows.
type subscriptionWatch struct {
	server  *mcp.Server
	backend func(*mcp.RequestExtra) toolset.Backend

	mu       sync.Mutex
	watching map[string]*watcher // by URI
}

type watcher struct {
	hosts  int
	cancel context.CancelFunc
}

// subscribe starts watching the subscription of req's URI, which must be
// one the caller may read.
func (w *subscriptionWatch) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	name := subscriptionName(uri)
	if name == "" {
		return requestError(uri, invalidArgument("only durable subscriptions can be subscribed to", "Subscribe to ctxd-subscription://NAME (context_watch_query creates one); items do not notify."))
	}
	b := w.backend(req.Extra)
	if _, err := b.Subscription.ReadSubscription(ctx, &ctxdv1.ReadSubscriptionRequest{Name: name, Peek: true, Limit: 1}); err != nil {
		return requestError(uri, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if x := w.watching[uri]; x != nil {
		x.hosts++
		return nil
	}
	pctx, cancel := context.WithCancel(context.Background())
	w.watching[uri] = &watcher{hosts: 1, cancel: cancel}
	go w.poll(pctx, b, name, uri)
	return nil
}

// unsubscribe stops watching once no host is subscribed.
func (w *subscriptionWatch) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if x := w.watching[req.Params.URI]; x != nil {
		if x.hosts--; x.hosts <= 0 {
			x.cancel()
			delete(w.watching, req.Params.URI)
		}
	}
	return nil
}

// poll checks the subscription's inbox every PollEvery and notifies when
// it holds more than it did; it stops when the subscription is gone or
// the daemon cannot be asked any more.
func (w *subscriptionWatch) poll(ctx context.Context, b toolset.Backend, name, uri string) {
	defer func() {
		w.mu.Lock()
		if x := w.watching[uri]; x != nil && ctx.Err() == nil {
			delete(w.watching, uri)
		}
		w.mu.Unlock()
	}()
	var last int64 = -1
	tick := time.NewTicker(PollEvery)
	defer tick.Stop()
	for {
		resp, err := b.Subscription.ReadSubscription(ctx, &ctxdv1.ReadSubscriptionRequest{Name: name, Peek: true, Limit: 1})
		switch {
		case err != nil && status.Code(err) != codes.Unavailable:
			return
		case err == nil:
			pending := resp.GetRemaining() + int64(len(resp.GetMatches()))
			if last >= 0 && pending > last {
				w.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
			}
			last = pending
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
