package standing

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// Durable subscriptions are stored in the store (records of kind
// durableKind) and matched whether or not anyone listens: their matches go
// to their inbox (vfs inboxes), read later or streamed. The hub keeps the
// outbox sequence it matched them through (positionName), so that after a
// restart it matches what changed while it was down. Replicas of a shared
// store reload the definitions every reloadEvery; each matches every
// change, and the inbox keeps one entry per change and item.

const (
	durableKind  = "subscription"
	stateKind    = "standing"
	positionName = "position"
	reloadEvery  = 10 * time.Second
	// DefaultInbox is the default bound of a durable subscription's inbox.
	DefaultInbox = 10_000
)

// Errors of durable subscriptions.
var (
	ErrExists   = errors.New("durable subscription exists")
	ErrNotFound = errors.New("no such durable subscription")
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Durable is a durable subscription.
type Durable struct {
	Name  string
	Query Query
	// Owner names the token that created it; Access is its access then,
	// as path prefixes (nil: unlimited), which bounds what it is told of.
	Owner     string
	Access    []string
	CreatedAt time.Time
}

// storedEvent is an inbox entry's value.
type storedEvent struct {
	Match *Match `json:"match,omitempty"`
}

// CheckName reports a durable subscription name that is not 1 to 64
// letters, digits, '-', '_' or '.'.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w: subscription name %q: use 1 to 64 letters, digits, '-', '_' and '.'", ErrInvalid, name)
	}
	return nil
}

// CreateDurable stores d and starts matching it. An existing subscription
// of that name is ErrExists unless replace is set (its inbox is kept).
// maxPerOwner and maxTotal bound the standing queries (streams and durable
// subscriptions) of d.Owner and of all (0: no bound).
func (h *Hub) CreateDurable(ctx context.Context, d Durable, replace bool, maxPerOwner, maxTotal int) (Durable, error) {
	if err := CheckName(d.Name); err != nil {
		return d, err
	}
	s, err := h.compileDurable(ctx, d)
	if err != nil {
		return d, err
	}
	d.CreatedAt = time.Now().UTC()
	h.mu.Lock()
	old := h.durable[d.Name]
	if old != nil && !replace {
		h.mu.Unlock()
		return d, fmt.Errorf("%w: %s", ErrExists, d.Name)
	}
	if old == nil {
		if maxTotal > 0 && len(h.subs) >= maxTotal {
			h.mu.Unlock()
			return d, &LimitError{Max: maxTotal}
		}
		if maxPerOwner > 0 && h.countLocked(d.Owner) >= maxPerOwner {
			h.mu.Unlock()
			return d, &LimitError{PerOwner: true, Max: maxPerOwner}
		}
	} else {
		d.CreatedAt = old.def.CreatedAt
	}
	h.mu.Unlock()
	v, err := json.Marshal(d)
	if err != nil {
		return d, err
	}
	if err := h.store.PutRecord(ctx, durableKind, d.Name, v); err != nil {
		return d, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.registerDurableLocked(s, d)
	return d, nil
}

// countLocked counts owner's standing queries; the caller holds h.mu.
func (h *Hub) countLocked(owner string) int {
	n := 0
	for s := range h.subs {
		if s.owner == owner {
			n++
		}
	}
	return n
}

// registerDurableLocked adds (or replaces) durable subscription s; the
// caller holds h.mu.
func (h *Hub) registerDurableLocked(s *Sub, d Durable) {
	if old := h.durable[d.Name]; old != nil {
		delete(h.subs, old)
	}
	s.from = h.pos
	s.def = d
	h.durable[d.Name] = s
	h.subs[s] = true
	h.gen++
	h.poke()
}

// compileDurable builds the Sub of d.
func (h *Hub) compileDurable(ctx context.Context, d Durable) (*Sub, error) {
	s, err := h.compile(ctx, d.Query)
	if err != nil {
		return nil, err
	}
	if s.access, err = vfs.NewAccess(nil, d.Access); err != nil {
		return nil, err
	}
	s.hub, s.owner, s.durable, s.id = h, d.Owner, true, "durable:"+d.Name
	return s, nil
}

// Durables returns the durable subscriptions, by name.
func (h *Hub) Durables() []Durable {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Durable, 0, len(h.durable))
	for _, s := range h.durable {
		out = append(out, s.def)
	}
	slices.SortFunc(out, func(a, b Durable) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// GetDurable returns durable subscription name.
func (h *Hub) GetDurable(name string) (Durable, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.durable[name]
	if s == nil {
		return Durable{}, false
	}
	return s.def, true
}

// DeleteDurable deletes durable subscription name and its inbox.
func (h *Hub) DeleteDurable(ctx context.Context, name string) (Durable, error) {
	h.mu.Lock()
	s := h.durable[name]
	h.mu.Unlock()
	if s == nil {
		return Durable{}, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if _, err := h.store.DeleteRecord(ctx, durableKind, name); err != nil {
		return s.def, err
	}
	if err := h.store.DeleteInbox(ctx, name); err != nil {
		return s.def, err
	}
	h.mu.Lock()
	if h.durable[name] == s {
		delete(h.durable, name)
		delete(h.subs, s)
		h.gen++
	}
	h.notifyLocked(name)
	h.mu.Unlock()
	return s.def, nil
}

// InboxChanged returns a channel closed when inbox name may have changed
// (a match arrived, or the subscription was deleted).
func (h *Hub) InboxChanged(name string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.notify[name]
	if ch == nil {
		ch = make(chan struct{})
		h.notify[name] = ch
	}
	return ch
}

func (h *Hub) notifyLocked(name string) {
	if ch := h.notify[name]; ch != nil {
		close(ch)
		delete(h.notify, name)
	}
}

// InboxMatch is a match read from an inbox, with the entry that acks it.
type InboxMatch struct {
	Match *Match
	Entry vfs.InboxEntry
}

// ReadInbox returns the oldest limit matches of durable subscription
// name's inbox and the inbox's state.
func (h *Hub) ReadInbox(ctx context.Context, name string, limit int) ([]InboxMatch, vfs.InboxState, error) {
	entries, st, err := h.store.ReadInbox(ctx, name, limit)
	if err != nil {
		return nil, st, err
	}
	out := make([]InboxMatch, 0, len(entries))
	for _, e := range entries {
		var ev storedEvent
		if err := json.Unmarshal(e.Value, &ev); err != nil || ev.Match == nil {
			return nil, st, fmt.Errorf("inbox %s entry %d: %v", name, e.Seq, err)
		}
		out = append(out, InboxMatch{Match: ev.Match, Entry: e})
	}
	return out, st, nil
}

// Ack drops the inbox entries of name through e.
func (h *Hub) Ack(ctx context.Context, name string, e vfs.InboxEntry) error {
	return h.store.AckInbox(ctx, name, e)
}

// InboxState returns what durable subscription name's inbox holds.
func (h *Hub) InboxState(ctx context.Context, name string) (vfs.InboxState, error) {
	return h.store.InboxState(ctx, name)
}

// deliverDurable appends each durable subscription's matches to its inbox
// and records the position matched through.
func (h *Hub) deliverDurable(ctx context.Context, matches map[*Sub][]*Match, through uint64) error {
	for s, ms := range matches {
		entries := make([]vfs.InboxEntry, 0, len(ms))
		for _, m := range ms {
			v, err := json.Marshal(storedEvent{Match: m})
			if err != nil {
				return err
			}
			entries = append(entries, vfs.InboxEntry{Seq: m.Change.Seq, ItemID: m.Result.ItemID, Value: v})
		}
		if _, err := h.store.AppendInbox(ctx, s.def.Name, entries, h.opts.MaxInbox); err != nil {
			return fmt.Errorf("durable subscription %s: %w", s.def.Name, err)
		}
		if h.opts.OnInbox != nil {
			h.opts.OnInbox(s.def.Name)
		}
		h.mu.Lock()
		h.notifyLocked(s.def.Name)
		h.mu.Unlock()
	}
	return h.persist(ctx, through)
}

// persist records that durable subscriptions are matched through seq.
func (h *Hub) persist(ctx context.Context, seq uint64) error {
	if seq <= h.persistAt {
		return nil
	}
	v := binary.BigEndian.AppendUint64(nil, seq)
	if err := h.store.PutRecord(ctx, stateKind, positionName, v); err != nil {
		return err
	}
	h.persistAt = seq
	return nil
}

// position is the persisted position, 0 when none.
func (h *Hub) position(ctx context.Context) (uint64, error) {
	v, err := h.store.GetRecord(ctx, stateKind, positionName)
	if err != nil || len(v) != 8 {
		return 0, err
	}
	return binary.BigEndian.Uint64(v), nil
}

// reload makes the registered durable subscriptions those the store holds
// (another replica may have created or deleted some).
func (h *Hub) reload(ctx context.Context) error {
	recs, err := h.store.ListRecords(ctx, durableKind)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Name] = true
		var d Durable
		if err := json.Unmarshal(r.Value, &d); err != nil {
			h.log.Error("durable subscription unreadable; skipped", "name", r.Name, "err", err)
			continue
		}
		h.mu.Lock()
		old := h.durable[d.Name]
		// One registered before the model could run is compiled again to
		// gain its vector leg.
		same := old != nil && durableEqual(old.def, d) && !old.lacksVectors()
		h.mu.Unlock()
		if same {
			continue
		}
		s, err := h.compileDurable(ctx, d)
		if err != nil {
			h.log.Error("durable subscription unusable; skipped", "name", r.Name, "err", err)
			continue
		}
		h.mu.Lock()
		h.registerDurableLocked(s, d)
		h.mu.Unlock()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, s := range h.durable {
		if !seen[name] {
			delete(h.durable, name)
			delete(h.subs, s)
			h.gen++
			h.notifyLocked(name)
		}
	}
	return nil
}

func durableEqual(a, b Durable) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Done is closed once the hub has stopped.
func (h *Hub) Done() <-chan struct{} { return h.done }

// lacksVectors reports whether s has a vector leg but a query without its
// vector (the model could not run when it was compiled).
func (s *Sub) lacksVectors() bool {
	if s.q.Mode == search.BM25 {
		return false
	}
	return slices.ContainsFunc(s.vecs, func(v []float32) bool { return v == nil })
}
