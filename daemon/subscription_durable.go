package daemon

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/standing"
	"github.com/ctxd/ctxd/vfs"
)

// subscriptionURI is the MCP resource URI of durable subscription name.
func subscriptionURI(name string) string { return "ctxd-subscription://" + name }

// Read sizes of durable subscriptions' inboxes.
const (
	defaultInboxRead = 100
	maxInboxRead     = 1000
)

// visible returns durable subscription name if the caller may see it: its
// creator, or the owner.
func (b *backend) visibleDurable(ctx context.Context, name string) (standing.Durable, error) {
	d, ok := b.subs.GetDurable(name)
	caller := vfs.ActorFrom(ctx).Name
	if !ok || d.Owner != caller && caller != vfs.OwnerActor {
		return d, apiError(ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND, fmt.Sprintf("no durable subscription %q", name),
			"List the subscriptions this token may see (ListSubscriptions, `ctxd subscription list`), or create it (`ctxd subscription create`).")
	}
	return d, nil
}

// subscriptionToProto converts a durable subscription with its inbox state.
func (b *backend) subscriptionToProto(ctx context.Context, d standing.Durable) (*ctxdv1.Subscription, error) {
	st, err := b.subs.InboxState(ctx, d.Name)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.Subscription{
		Name: d.Name, Query: standingQueryToProto(d.Query), Owner: d.Owner, CreatedAt: timeToProto(d.CreatedAt),
		Pending: st.Pending, Dropped: st.Dropped, ResourceUri: subscriptionURI(d.Name),
	}, nil
}

func (s *subscriptionService) CreateSubscription(ctx context.Context, req *ctxdv1.CreateSubscriptionRequest) (*ctxdv1.CreateSubscriptionResponse, error) {
	if err := standing.CheckName(req.GetName()); err != nil {
		return nil, invalidSearch(err.Error(), "name it with 1 to 64 letters, digits, '-', '_' and '.'")
	}
	q, err := s.b.standingQuery(req.GetQuery())
	if err != nil {
		return nil, err
	}
	caller := vfs.ActorFrom(ctx).Name
	if old, ok := s.b.subs.GetDurable(req.GetName()); ok && old.Owner != caller && caller != vfs.OwnerActor {
		// Another token's: the name is taken, but nothing more is said.
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_PATH_CONFLICT, fmt.Sprintf("the name %q is taken", req.GetName()), "Choose another name.")
	}
	d := standing.Durable{Name: req.GetName(), Query: q, Owner: caller, Access: vfs.AccessFrom(ctx).Prefixes()}
	d, err = s.b.subs.CreateDurable(ctx, d, req.GetReplace(), s.b.limits.MaxSubscriptionsPerToken, s.b.limits.MaxSubscriptions)
	if errors.Is(err, standing.ErrExists) {
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_PATH_CONFLICT, fmt.Sprintf("a durable subscription %q exists", d.Name),
			"Pass replace to change its query and keep its inbox (`ctxd subscription create --replace`), or choose another name.")
	}
	if err != nil {
		return nil, s.b.subscribeError(err)
	}
	p, err := s.b.subscriptionToProto(ctx, d)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.CreateSubscriptionResponse{Subscription: p}, nil
}

func (s *subscriptionService) ListSubscriptions(ctx context.Context, _ *ctxdv1.ListSubscriptionsRequest) (*ctxdv1.ListSubscriptionsResponse, error) {
	out := &ctxdv1.ListSubscriptionsResponse{}
	caller := vfs.ActorFrom(ctx).Name
	for _, d := range s.b.subs.Durables() {
		if d.Owner != caller && caller != vfs.OwnerActor {
			continue
		}
		p, err := s.b.subscriptionToProto(ctx, d)
		if err != nil {
			return nil, err
		}
		out.Subscriptions = append(out.Subscriptions, p)
	}
	return out, nil
}

func (s *subscriptionService) DeleteSubscription(ctx context.Context, req *ctxdv1.DeleteSubscriptionRequest) (*ctxdv1.DeleteSubscriptionResponse, error) {
	d, err := s.b.visibleDurable(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	p, err := s.b.subscriptionToProto(ctx, d)
	if err != nil {
		return nil, err
	}
	if _, err := s.b.subs.DeleteDurable(ctx, d.Name); err != nil && !errors.Is(err, standing.ErrNotFound) {
		return nil, err
	}
	return &ctxdv1.DeleteSubscriptionResponse{Subscription: p}, nil
}

func (s *subscriptionService) ReadSubscription(ctx context.Context, req *ctxdv1.ReadSubscriptionRequest) (*ctxdv1.ReadSubscriptionResponse, error) {
	d, err := s.b.visibleDurable(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	switch {
	case limit < 0 || limit > maxInboxRead:
		return nil, invalidSearch(fmt.Sprintf("limit %d is outside [0, %d].", limit, maxInboxRead), "read at most 1000 matches at a time (`ctxd subscription read --limit`); 0 means 100")
	case limit == 0:
		limit = defaultInboxRead
	}
	return s.b.readInbox(ctx, d.Name, limit, req.GetPeek())
}

// readInbox reads (and unless peek, acknowledges) the oldest matches of
// durable subscription name.
func (b *backend) readInbox(ctx context.Context, name string, limit int, peek bool) (*ctxdv1.ReadSubscriptionResponse, error) {
	ms, st, err := b.subs.ReadInbox(ctx, name, limit)
	if err != nil {
		return nil, err
	}
	out := &ctxdv1.ReadSubscriptionResponse{Remaining: st.Pending - int64(len(ms))}
	if st.Dropped > 0 {
		out.Gap = inboxGap(st.Dropped)
	}
	for _, m := range ms {
		out.Matches = append(out.Matches, matchToProto(m.Match))
	}
	if !peek && (len(ms) > 0 || st.Dropped > 0) {
		last := vfs.InboxEntry{}
		if len(ms) > 0 {
			last = ms[len(ms)-1].Entry
		}
		if err := b.subs.Ack(ctx, name, last); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func inboxGap(dropped int64) *ctxdv1.SubscriptionGap {
	return &ctxdv1.SubscriptionGap{Dropped: dropped,
		Reason: fmt.Sprintf("the inbox was full (limits.max_subscription_inbox) and its %d oldest matches were dropped; search to catch up, and read the subscription more often", dropped)}
}

// subscribeDurable streams a durable subscription: its inbox, oldest
// first, each match acknowledged once sent, then what arrives.
func (s *subscriptionService) subscribeDurable(ctx context.Context, req *ctxdv1.SubscribeRequest, stream grpc.ServerStreamingServer[ctxdv1.SubscribeResponse]) error {
	d, err := s.b.visibleDurable(ctx, req.GetName())
	if err != nil {
		return err
	}
	if err := stream.Send(&ctxdv1.SubscribeResponse{Event: &ctxdv1.SubscribeResponse_Ready{Ready: &ctxdv1.SubscriptionReady{
		ResumeToken: standing.Token(0), Subscription: d.Name,
	}}}); err != nil {
		return err
	}
	for {
		changed := s.b.subs.InboxChanged(d.Name)
		if _, ok := s.b.subs.GetDurable(d.Name); !ok {
			return apiError(ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND, fmt.Sprintf("durable subscription %q was deleted", d.Name), "Create it again to go on (`ctxd subscription create`).")
		}
		ms, st, err := s.b.subs.ReadInbox(ctx, d.Name, defaultInboxRead)
		if err != nil {
			return err
		}
		if st.Dropped > 0 {
			if err := stream.Send(&ctxdv1.SubscribeResponse{Event: &ctxdv1.SubscribeResponse_Gap{Gap: inboxGap(st.Dropped)}}); err != nil {
				return err
			}
			if len(ms) == 0 {
				if err := s.b.subs.Ack(ctx, d.Name, vfs.InboxEntry{}); err != nil {
					return err
				}
			}
		}
		for _, m := range ms {
			if err := stream.Send(&ctxdv1.SubscribeResponse{Event: &ctxdv1.SubscribeResponse_Match{Match: matchToProto(m.Match)}}); err != nil {
				return err
			}
			if err := s.b.subs.Ack(ctx, d.Name, m.Entry); err != nil {
				return err
			}
		}
		if len(ms) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-s.b.subs.Done():
			return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, "the daemon is stopping",
				"Reconnect once it is back: the subscription's inbox keeps what matches meanwhile.")
		}
	}
}
