package vfs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/boltstore"
	"github.com/ctxd/ctxd/vfs/pgstore"
	"github.com/ctxd/ctxd/vfs/storecopy"
	"github.com/google/uuid"
)

// Bucket and key names of the bbolt file; see doc.go for the layout.
const (
	bucketMeta    = "meta"
	bucketDrives  = "drives" // nested in meta: drive -> count(8) | bytes(8)
	bucketItems   = "items"
	bucketContent = "content"
	bucketPaths   = "paths" // one nested bucket per drive: encoded path -> pathVal
	bucketText    = "text"  // id (16 bytes) -> searchable text of a binary item
	keySchema     = "schema_version"
	// schemaVersion 2 changed the history's archive (history_migrate.go),
	// 3 dropped its time index (bucketRevLog) and 4 keeps it in time order
	// (bucketRevs); Open converts stores of versions 1 to 3.
	schemaVersion = 4
)

// Options configures Open.
type Options struct {
	MaxContentBytes int64 // 0 means DefaultMaxContentBytes
	// OpenTimeout bounds waiting for a bbolt file's lock (0 means 1s), or
	// connecting to PostgreSQL and migrating its schema (0 means 30s).
	OpenTimeout time.Duration
	// ContextRoots are drive:/path refs of the directories holding agents'
	// context files, which agents may change only where the frontmatter
	// allows (ErrReadOnly); nil means DefaultContextRoots.
	ContextRoots []string
	// History is which revisions PruneHistory keeps; the zero value means
	// DefaultHistoryKeep and DefaultHistoryMinAge.
	History Retention
	// HistoryOff stops recording revisions; existing history stays readable.
	HistoryOff bool
	// ReplicaID names this process among the daemons sharing the store
	// (replicas over PostgreSQL): its index position is recorded under it
	// and its claims on queued work are its own. "" means "local".
	ReplicaID, ReplicaHost string
	// ClaimLease is how long a claim on queued work lasts on a shared
	// store; 0 means DefaultClaimLease.
	ClaimLease time.Duration
	// OnWrite, when set, is told after each committed transaction that
	// created, changed, moved or deleted items how many it changed (an item
	// changed twice, or moved, counts once). Other replicas' writes to a
	// shared store are not told. It runs on the writer's goroutine: it
	// must be cheap.
	OnWrite func(items int)
}

// Store is the item store. It is safe for concurrent use.
type Store struct {
	db         backend.DB
	maxContent int64
	roots      []Ref // context roots, parsed
	retention  Retention
	historyOff bool
	now        func() time.Time // the clock of transactions and pruning; tests replace it
	workMu     sync.Mutex
	work       []chan struct{} // one per Work caller, signalled after every committed update

	mu      sync.RWMutex // guards chunker and model, set by SetIndexing
	chunker Chunker
	model   string

	// questionsWith memoises QuestionStats' one costly count.
	questionsWith questionCount

	onWrite func(items int) // Options.OnWrite

	// shared is set when other processes write the same store (the backend
	// is a backend.Notifier): queued work is then claimed before it is done.
	shared                 bool
	replicaID, replicaHost string
	claimLease             time.Duration
	stopNotify             chan struct{} // ends the relay of the backend's change notices
}

// Open opens or creates the store at location, creating its buckets and
// checking the schema version: a PostgreSQL URL (postgres:// or
// postgresql://, see vfs/pgstore) for a store replicas share, else the path
// of a bbolt file, which one process owns (a second opener fails after
// opts.OpenTimeout).
func Open(location string, opts Options) (*Store, error) {
	if opts.OpenTimeout < 0 {
		return nil, errors.New("open store: negative option")
	}
	if IsPostgresURL(location) {
		ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(opts.OpenTimeout, pgstore.DefaultOpenTimeout))
		defer cancel()
		db, err := pgstore.Open(ctx, location, pgstore.Options{})
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err) // pgstore's errors name the server, never the password
		}
		return newOwning(db, opts, "open store")
	}
	db, err := boltstore.Open(location, boltstore.Options{OpenTimeout: opts.OpenTimeout})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", location, err)
	}
	return newOwning(db, opts, "open "+location)
}

// IsPostgresURL reports whether a store location names a PostgreSQL
// database rather than a bbolt file.
func IsPostgresURL(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// newOwning is New that closes db when it fails.
func newOwning(db backend.DB, opts Options, what string) (*Store, error) {
	s, err := New(db, opts)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return s, nil
}

// New opens the store kept in db, creating its buckets and checking the
// schema version. It refuses the destination of an unfinished copy
// (storecopy, ctxd migrate), which is not a whole store yet. The Store owns
// db from then on: Close closes it.
func New(db backend.DB, opts Options) (*Store, error) {
	if opts.MaxContentBytes < 0 || opts.History.Keep < 0 || opts.History.MinAge < 0 {
		return nil, errors.New("negative option")
	}
	if opts.MaxContentBytes == 0 {
		opts.MaxContentBytes = DefaultMaxContentBytes
	}
	roots, err := parseContextRoots(opts.ContextRoots)
	if err != nil {
		return nil, err
	}
	var gap bool       // history was off: record what changed meanwhile
	var migrating bool // the history of an earlier ctxd's store is being converted
	err = db.Update(context.Background(), func(tx backend.Tx) error {
		if tx.Bucket([]byte(storecopy.ProgressBucket)) != nil {
			return errors.New("the store is the destination of an unfinished migration: run the same ctxd migrate again to finish it")
		}
		meta, err := tx.CreateBucketIfNotExists([]byte(bucketMeta))
		if err != nil {
			return err
		}
		switch v := meta.Get([]byte(keySchema)); {
		case v == nil:
			if err := meta.Put([]byte(keySchema), []byte(strconv.Itoa(schemaVersion))); err != nil {
				return err
			}
		case string(v) == "1":
			if err := startHistoryMigration(meta); err != nil {
				return err
			}
			fallthrough
		case string(v) == "2":
			if err := dropTimeIndex(tx); err != nil {
				return err
			}
			fallthrough
		case string(v) == "3":
			// The schema says the current version from the start, so an
			// earlier ctxd refuses a half-converted store.
			if err := meta.Put([]byte(keySchema), []byte(strconv.Itoa(schemaVersion))); err != nil {
				return err
			}
		case string(v) != strconv.Itoa(schemaVersion):
			return fmt.Errorf("schema version %q is not supported (this ctxd reads versions 1 to %d); use a matching ctxd build", v, schemaVersion)
		}
		migrating = tx.Bucket(nameRevsByItem) != nil
		for _, name := range []string{bucketDrives, bucketCounters, bucketReplicas} {
			if _, err := meta.CreateBucketIfNotExists([]byte(name)); err != nil {
				return err
			}
		}
		if gap, err = openHistory(meta, opts.HistoryOff); err != nil {
			return err
		}
		for _, name := range []string{bucketItems, bucketContent, bucketText, bucketPaths, bucketChunks, bucketEmbedQ, bucketChunkQ, bucketVectors, bucketOutbox,
			bucketQuestions, bucketQVectors, bucketQEmbedQ,
			bucketRevs, bucketRevActor, bucketRevHeads, bucketDeleted, bucketBlobs, bucketRepack, bucketClaims, bucketRecords} {
			if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
				return err
			}
		}
		if err := indexChunkHashes(tx); err != nil {
			return err
		}
		return indexEmbedQueue(tx)
	})
	if err != nil {
		return nil, err
	}
	if opts.ReplicaID == "" {
		opts.ReplicaID = "local"
	}
	if opts.ClaimLease <= 0 {
		opts.ClaimLease = DefaultClaimLease
	}
	s := &Store{db: db, maxContent: opts.MaxContentBytes, roots: roots,
		retention: opts.History.withDefaults(), historyOff: opts.HistoryOff, now: time.Now,
		replicaID: opts.ReplicaID, replicaHost: opts.ReplicaHost, claimLease: opts.ClaimLease, onWrite: opts.OnWrite,
		stopNotify: make(chan struct{})}
	if migrating {
		if err := s.migrateHistory(context.Background()); err != nil {
			return nil, err
		}
	}
	if gap {
		if err := s.closeHistoryGap(); err != nil {
			return nil, fmt.Errorf("record changes made while history was off: %w", err)
		}
	}
	if n, ok := db.(backend.Notifier); ok {
		s.shared = true
		go s.relayChanges(n.Changed())
	}
	return s, nil
}

// relayChanges signals the Work channels when another process commits to a
// shared store, as a commit of this one does.
func (s *Store) relayChanges(changed <-chan struct{}) {
	for {
		select {
		case <-s.stopNotify:
			return
		case _, ok := <-changed:
			if !ok {
				return
			}
			s.signalWork()
		}
	}
}

// signalWork wakes every Work channel.
func (s *Store) signalWork() {
	s.workMu.Lock()
	for _, w := range s.work {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	s.workMu.Unlock()
}

// Shared reports whether other processes write this store.
func (s *Store) Shared() bool { return s.shared }

// outboxReplica is the replica id outbox entries record: this replica's on
// a shared store, else none.
func (s *Store) outboxReplica() string {
	if s.shared {
		return s.replicaID
	}
	return ""
}

// Close closes the store's backend.
func (s *Store) Close() error {
	close(s.stopNotify)
	return s.db.Close()
}

// MaxContentBytes returns the limit on one item's content.
func (s *Store) MaxContentBytes() int64 { return s.maxContent }

// update runs fn in a batched write transaction. bbolt may run fn more than
// once, so fn must reset its outputs first.
func (s *Store) update(ctx context.Context, fn func(t *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	actor, access := ActorFrom(ctx), AccessFrom(ctx)
	written := 0 // by the last run of fn: a batch may run it again
	err := s.db.Batch(ctx, func(tx backend.Tx) error {
		t := s.newTxn(tx)
		t.actor, t.access = actor, access
		if err := fn(t); err != nil {
			return err
		}
		if err := t.storeHeads(); err != nil {
			return err
		}
		written = len(t.written)
		return t.dropOrphanQuestions()
	})
	if err == nil {
		if written > 0 && s.onWrite != nil {
			s.onWrite(written)
		}
		s.signalWork()
	}
	return err
}

// wrote notes that this transaction changes item id (Options.OnWrite).
func (t *txn) wrote(id []byte) {
	if t.written == nil {
		t.written = map[[16]byte]struct{}{}
	}
	t.written[[16]byte(id)] = struct{}{}
}

// view runs fn in a read transaction (the one ctx pins, if any: see Pin).
// Bytes must be copied out of it.
func (s *Store) view(ctx context.Context, fn func(t *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	access := AccessFrom(ctx)
	if t := s.pinnedTxn(ctx); t != nil {
		if access.Limited() {
			limited := *t
			limited.access = access
			return fn(&limited)
		}
		return fn(t)
	}
	return s.db.View(ctx, func(tx backend.Tx) error {
		t := s.newTxn(tx)
		t.access = access
		return fn(t)
	})
}

// txn wraps a bbolt transaction with the store's buckets and record helpers.
type txn struct {
	tx       backend.Tx
	items    backend.Bucket
	content  backend.Bucket
	text     backend.Bucket
	paths    backend.Bucket
	drives   backend.Bucket
	counters backend.Bucket
	chunks   backend.Bucket
	embedq   backend.Bucket
	waitq    backend.Bucket
	chunkq   backend.Bucket
	vectors  backend.Bucket
	outbox   backend.Bucket
	chunker  Chunker // nil while no chunker is installed
	model    string  // embedding model id; "" while unknown
	replica  string  // the store's replica id, recorded in outbox entries; "" when none
	now      time.Time
	actor    Actor  // who makes the change (update only)
	access   Access // what the caller may see and change
	roots    []Ref  // context roots, for the agent-modification guard
	op       string // the history operation of the public mutation running (update only)

	// History buckets (see history.go); historyOff skips recording.
	revs, revActor, revHeads, deleted, blobs, repack backend.Bucket
	historyOff                                       bool
	// pendingHeads holds the heads of items this transaction recorded a
	// revision of, until their record is stored (history_head.go).
	pendingHeads map[[16]byte]revPos

	// Question buckets (see questions.go).
	questions, qvectors, qembedq, chunkhash backend.Bucket

	emitted     map[[16]byte]uint64 // outbox entries this transaction appended, by item
	precomputed *Embeddings         // vectors supplied with a Write, consumed by putChunks
	tail        *blockTail          // the vector block this transaction appends to
	chunked     chunking            // the spans of a Write's text, chunked before the lock
	// extracted is the searchable text a Write supplied with binary content;
	// nil outside Write, where a binary item keeps the text it has.
	extracted []byte
	// chunksToEmbed and chunksReused count the chunks putChunks stored that
	// need an embedding and that already have one.
	chunksToEmbed, chunksReused int
	// dropped holds the text hashes whose chunk records this transaction
	// deleted, for dropOrphanQuestions; attachedMemo caches attached.
	dropped      map[[32]byte]bool
	attachedMemo *attachment
	// written holds the items this transaction created, changed, moved or
	// deleted, for Options.OnWrite once it commits.
	written map[[16]byte]struct{}
}

// Bucket names as bytes, made once: a name converted at each call escapes
// through the backend interface, an allocation per bucket per transaction.
var (
	nameBlobs     = []byte(bucketBlobs)
	nameChunkHash = []byte(bucketChunkHash)
	nameChunkQ    = []byte(bucketChunkQ)
	nameChunks    = []byte(bucketChunks)
	nameContent   = []byte(bucketContent)
	nameCounters  = []byte(bucketCounters)
	nameDeleted   = []byte(bucketDeleted)
	nameDrives    = []byte(bucketDrives)
	nameEmbedQ    = []byte(bucketEmbedQ)
	nameEmbedWait = []byte(bucketEmbedWait)
	nameItems     = []byte(bucketItems)
	nameMeta      = []byte(bucketMeta)
	nameOutbox    = []byte(bucketOutbox)
	namePaths     = []byte(bucketPaths)
	nameQEmbedQ   = []byte(bucketQEmbedQ)
	nameQVectors  = []byte(bucketQVectors)
	nameQuestions = []byte(bucketQuestions)
	nameRepack    = []byte(bucketRepack)
	nameRevActor  = []byte(bucketRevActor)
	nameRevHeads  = []byte(bucketRevHeads)
	nameRevs      = []byte(bucketRevs)
	nameText      = []byte(bucketText)
	nameVectors   = []byte(bucketVectors)
)

func (s *Store) newTxn(tx backend.Tx) *txn {
	meta := tx.Bucket(nameMeta)
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := &txn{
		tx:       tx,
		items:    tx.Bucket(nameItems),
		content:  tx.Bucket(nameContent),
		text:     tx.Bucket(nameText),
		paths:    tx.Bucket(namePaths),
		drives:   meta.Bucket(nameDrives),
		counters: meta.Bucket(nameCounters),
		chunks:   tx.Bucket(nameChunks),
		embedq:   tx.Bucket(nameEmbedQ),
		waitq:    tx.Bucket(nameEmbedWait),
		chunkq:   tx.Bucket(nameChunkQ),
		vectors:  tx.Bucket(nameVectors),
		outbox:   tx.Bucket(nameOutbox),
		chunker:  s.chunker,
		model:    s.model,
		replica:  s.outboxReplica(),
		now:      s.now().UTC(),
		roots:    s.roots,

		revs:       tx.Bucket(nameRevs),
		revActor:   tx.Bucket(nameRevActor),
		revHeads:   tx.Bucket(nameRevHeads),
		deleted:    tx.Bucket(nameDeleted),
		blobs:      tx.Bucket(nameBlobs),
		repack:     tx.Bucket(nameRepack),
		historyOff: s.historyOff,

		questions: tx.Bucket(nameQuestions),
		qvectors:  tx.Bucket(nameQVectors),
		qembedq:   tx.Bucket(nameQEmbedQ),
		chunkhash: tx.Bucket(nameChunkHash),
	}
	t.setFillPercent()
	return t
}

// pathVal is the value of a paths entry: enough for listings, trees and sizes
// without decoding item metadata. Layout: flags(1) | id(16) | size(8) | mime.
type pathVal struct {
	flags byte
	id    []byte
	size  int64
	mime  string
}

const (
	flagDir  = 1 << 0 // explicit directory placeholder
	flagText = 1 << 1 // content is UTF-8 text
)

func (pv pathVal) dir() bool  { return pv.flags&flagDir != 0 }
func (pv pathVal) text() bool { return pv.flags&flagText != 0 }

func encodePathVal(it *Item, id []byte) []byte {
	b := make([]byte, 25, 25+len(it.MimeType))
	if it.IsDir {
		b[0] |= flagDir
	}
	if it.IsText {
		b[0] |= flagText
	}
	copy(b[1:17], id)
	binary.BigEndian.PutUint64(b[17:25], uint64(it.Size))
	return append(b, it.MimeType...)
}

// decodePathVal decodes v; id aliases v, so it is valid only inside the transaction.
func decodePathVal(v []byte) pathVal {
	return pathVal{flags: v[0], id: v[1:17], size: int64(binary.BigEndian.Uint64(v[17:25])), mime: string(v[25:])}
}

// sizeOf reads only the size field of a paths value.
func sizeOf(v []byte) int64 { return int64(binary.BigEndian.Uint64(v[17:25])) }

// Paths are stored with "/" encoded as 0x00 (NUL is banned in paths) so that
// keys sort segment by segment: a directory's subtree is one contiguous key
// range right after it, "/a" < "/a/x" < "/a-b", and the range of "/a" never
// includes "/ab".
func pathKey(p string) []byte {
	k := []byte(p)
	for i, c := range k {
		if c == '/' {
			k[i] = 0
		}
	}
	return k
}

func keyPath(k []byte) string {
	b := bytes.Clone(k)
	for i, c := range b {
		if c == 0 {
			b[i] = '/'
		}
	}
	return string(b)
}

// dirPrefix returns the key prefix of everything below dir.
func dirPrefix(dir string) []byte {
	if dir == "/" {
		return []byte{0}
	}
	return append(pathKey(dir), 0)
}

// afterSubtree returns the first key past k and everything below it.
func afterSubtree(k []byte) []byte {
	return append(bytes.Clone(k), 1)
}

// segmentEnd returns the end of the path segment of k starting at pos. The
// search starts one byte in so an empty segment (the "//" of url paths) joins
// the following one: "/https:" contains "/https://host".
func segmentEnd(k []byte, pos int) int {
	if pos+1 >= len(k) {
		return len(k)
	}
	if i := bytes.IndexByte(k[pos+1:], 0); i >= 0 {
		return pos + 1 + i
	}
	return len(k)
}

func (t *txn) driveBucket(drive string) backend.Bucket {
	b := t.paths.Bucket([]byte(drive))
	if b != nil {
		b.SetFillPercent(pathsFill)
	}
	return b
}

func (t *txn) createDriveBucket(drive string) (backend.Bucket, error) {
	b, err := t.paths.CreateBucketIfNotExists([]byte(drive))
	if err != nil {
		return nil, fmt.Errorf("create drive bucket %q: %w", drive, err)
	}
	b.SetFillPercent(pathsFill)
	return b, nil
}

// pathsFill packs path pages fuller than bbolt's default: imports walk
// directories in path order, and pages split half-full under appends stay
// half empty (50% full at 100k paths written in order; random inserts lose
// a few points against the default).
const pathsFill = 0.9

// item decodes the metadata of id.
// itemByID reads the item with the text id, and its key; ok is false when
// there is none.
func (t *txn) itemByID(id string) (key []byte, it Item, ok bool, err error) {
	key, err = parseID(id)
	if err != nil || t.items.Get(key) == nil {
		return key, Item{}, false, err
	}
	it, err = t.item(key)
	return key, it, err == nil, err
}

func (t *txn) item(id []byte) (Item, error) {
	v := t.items.Get(id)
	if v == nil {
		return Item{}, fmt.Errorf("item %x: metadata missing", id)
	}
	var it Item
	if err := json.Unmarshal(recordJSON(v), &it); err != nil {
		return Item{}, fmt.Errorf("item %x: decode metadata: %w", id, err)
	}
	if it.ID == "" { // see putMeta
		it.ID = uuid.UUID(id).String()
	}
	if it.CreatedAt.IsZero() {
		it.CreatedAt = it.UpdatedAt
	}
	return it, nil
}

// putItem stores it with content at its path. old is the paths value being
// replaced at that path (nil for a new path) and keeps the drive counters exact.
// New content (non-nil) is chunked and queued for embedding in the same
// transaction; chunksFrom names an item with identical content whose chunks
// are reused instead (Copy). Text content passes checkText here, whichever
// call brought it.
func (t *txn) putItem(it *Item, content, old, chunksFrom []byte) error {
	if it.IsText && content != nil {
		if err := checkText(it.Ref(), content); err != nil {
			return err
		}
	}
	if err := t.guardPut(it, old); err != nil {
		return err
	}
	u, err := parseID(it.ID)
	if err != nil {
		return err
	}
	b, err := t.createDriveBucket(it.Drive)
	if err != nil {
		return err
	}
	if err := t.emit(u); err != nil {
		return err
	}
	t.wrote(u)
	snap, err := metaSnapshot(it)
	if err != nil {
		return err
	}
	settled, err := t.recordPut(u, it, content, snap) // before the old state is replaced
	if err != nil {
		return err
	}
	if settled {
		err = t.putRecord(u, it)
	} else {
		err = t.putMeta(u, it, snap)
	}
	if err != nil {
		return err
	}
	if content != nil {
		if err := t.content.Put(u, content); err != nil {
			return fmt.Errorf("put content %s: %w", it.ID, err)
		}
	}
	// A binary item's searchable text starts with its title, so a move that
	// renames it indexes it again.
	if content != nil || (!it.IsText && !it.IsDir) {
		if err := t.reindex(u, it, t.content.Get(u), chunksFrom); err != nil {
			return err
		}
	}
	if err := b.Put(pathKey(it.Path), encodePathVal(it, u)); err != nil {
		return fmt.Errorf("put path %s: %w", it.Ref(), err)
	}
	dCount, dBytes := int64(1), it.Size
	if old != nil {
		dCount, dBytes = 0, it.Size-sizeOf(old)
	}
	return t.addCounts(it.Drive, dCount, dBytes)
}

// putMeta stores item metadata only; snap is it's metadata snapshot, or nil
// to encode it here.
func (t *txn) putMeta(id []byte, it *Item, snap []byte) error {
	if snap == nil {
		var err error
		if snap, err = metaSnapshot(it); err != nil {
			return err
		}
	}
	if err := t.detachMeta(id, snap); err != nil { // history may need the old metadata
		return err
	}
	return t.putRecord(id, it)
}

// putRecord stores item metadata that differs from the record at most in
// fields metadata snapshots leave out (IndexedAt, the retrieval counts),
// so history needs nothing of the record it replaces.
func (t *txn) putRecord(id []byte, it *Item) error {
	// The record leaves out what item restores: the id (the record's key),
	// and CreatedAt while it equals UpdatedAt (an item never changed).
	stored := *it
	stored.ID = ""
	if stored.CreatedAt.Equal(stored.UpdatedAt) {
		stored.CreatedAt = time.Time{}
	}
	rec, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("encode item %s: %w", it.ID, err)
	}
	if rec, err = t.recordValue(id, rec); err != nil {
		return err
	}
	if err := t.items.Put(id, rec); err != nil {
		return fmt.Errorf("put item %s: %w", it.ID, err)
	}
	return nil
}

// removeItem deletes the item stored at key in drive, with its metadata and content.
func (t *txn) removeItem(drive string, key []byte) error {
	b := t.driveBucket(drive)
	v := b.Get(key)
	if v == nil {
		return fmt.Errorf("remove %s: path missing", FormatRef(drive, keyPath(key)))
	}
	id, size := bytes.Clone(v[1:17]), sizeOf(v)
	if t.actor.Agent {
		prev, err := t.item(id)
		if err != nil {
			return err
		}
		if err := t.guardChange(&prev); err != nil {
			return err
		}
	}
	if err := t.emit(id); err != nil {
		return err
	}
	t.wrote(id)
	if err := t.recordRemove(id); err != nil {
		return err
	}
	if t.historyOff { // else recordRemove stored the snapshot with the delete revision
		if err := t.detachMeta(id, nil); err != nil {
			return err
		}
	}
	if err := b.Delete(key); err != nil {
		return fmt.Errorf("delete path: %w", err)
	}
	if err := t.keepHead(id); err != nil {
		return err
	}
	if err := t.items.Delete(id); err != nil {
		return fmt.Errorf("delete item: %w", err)
	}
	if err := t.content.Delete(id); err != nil {
		return fmt.Errorf("delete content: %w", err)
	}
	if err := t.text.Delete(id); err != nil {
		return fmt.Errorf("delete text: %w", err)
	}
	if err := t.dropChunks(id); err != nil {
		return err
	}
	if _, err := t.deleteQuestions(itemQuestionPrefix(id)); err != nil {
		return err
	}
	return t.addCounts(drive, -1, -size)
}

// addCounts adjusts a drive's item and byte counters; a drive at zero items is
// dropped from the counters, which is what makes it disappear from ListDrives.
func (t *txn) addCounts(drive string, dCount, dBytes int64) error {
	if dCount == 0 && dBytes == 0 {
		return nil
	}
	count, size := t.counts(drive)
	count += dCount
	size += dBytes
	if count <= 0 {
		return t.drives.Delete([]byte(drive))
	}
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v[:8], uint64(count))
	binary.BigEndian.PutUint64(v[8:], uint64(size))
	return t.drives.Put([]byte(drive), v)
}

func (t *txn) counts(drive string) (count, size int64) {
	v := t.drives.Get([]byte(drive))
	if v == nil {
		return 0, 0
	}
	return int64(binary.BigEndian.Uint64(v[:8])), int64(binary.BigEndian.Uint64(v[8:]))
}

func (t *txn) driveNames() []string {
	var names []string
	t.drives.ForEach(func(k, _ []byte) error {
		names = append(names, string(k))
		return nil
	})
	return names
}

// node is what a ref resolves to.
type node struct {
	drive, path string
	key         []byte
	val         []byte // the paths value when an item or placeholder is stored at path
	children    bool   // items exist below path
}

func (n *node) ref() string  { return FormatRef(n.drive, n.path) }
func (n *node) exists() bool { return n.val != nil || n.children }
func (n *node) isDir() bool  { return n.children || (n.val != nil && n.val[0]&flagDir != 0) }
func (n *node) isFile() bool { return n.val != nil && n.val[0]&flagDir == 0 }
func (n *node) pv() pathVal  { return decodePathVal(n.val) }

// normRef validates a ref built by a caller (not necessarily by ParseRef).
func normRef(r Ref) (Ref, error) {
	if r.ID != "" {
		if _, err := parseID(r.ID); err != nil {
			return Ref{}, err
		}
		return Ref{ID: strings.ToLower(r.ID)}, nil
	}
	if r.Drive == "" && r.Path == "" {
		return Ref{}, newError(ErrInvalid, "", refFormsHint, "The ref is empty.")
	}
	if err := ValidateDrive(r.Drive); err != nil {
		return Ref{}, err
	}
	p := r.Path
	if p == "" {
		p = "/"
	}
	p, err := CleanPath(r.Drive, p)
	if err != nil {
		return Ref{}, err
	}
	return Ref{Drive: r.Drive, Path: p}, nil
}

// lookup resolves r. A missing path yields a node that does not exist; a
// missing id yields ErrNotFound.
func (t *txn) lookup(r Ref) (node, error) {
	r, err := normRef(r)
	if err != nil {
		return node{}, err
	}
	if r.ID != "" {
		id, _ := parseID(r.ID)
		unknown := newError(ErrNotFound, r.ID, "ids stay valid across moves but not deletes; use tree or list to find the item by path",
			"No item has the id %s.", r.ID)
		if t.items.Get(id) == nil {
			return node{}, unknown
		}
		it, err := t.item(id)
		if err != nil {
			return node{}, err
		}
		if !t.access.Allows(it.Drive, it.Path) {
			return node{}, unknown
		}
		r = Ref{Drive: it.Drive, Path: it.Path}
	}
	n := node{drive: r.Drive, path: r.Path, key: pathKey(r.Path)}
	b := t.driveBucket(r.Drive)
	if b == nil {
		return n, nil
	}
	if !t.access.Allows(r.Drive, r.Path) {
		// Outside the caller's access: at most a directory on the way to
		// what it may see.
		n.children = t.visibleBelow(b, r.Drive, r.Path)
		return n, nil
	}
	if r.Path != "/" {
		n.val = b.Get(n.key)
	}
	n.children = hasPrefix(b, dirPrefix(r.Path))
	return n, nil
}

func hasPrefix(b backend.Bucket, prefix []byte) bool {
	k, _ := b.Cursor().Seek(prefix)
	return k != nil && bytes.HasPrefix(k, prefix)
}

// fileAncestor returns the nearest ancestor of path stored as a file, if any.
func fileAncestor(b backend.Bucket, path string) (string, bool) {
	if b == nil {
		return "", false
	}
	for p := parentOf(path); p != "/"; p = parentOf(p) {
		if v := b.Get(pathKey(p)); v != nil && v[0]&flagDir == 0 {
			return p, true
		}
	}
	return "", false
}

// subtree calls fn for every entry below dir, in key order.
func subtree(b backend.Bucket, dir string, fn func(k, v []byte)) {
	if b == nil {
		return
	}
	prefix := dirPrefix(dir)
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		fn(k, v)
	}
}

// children calls fn for each direct child of dir, in name order, starting
// after the child whose key is after (nil: from the start). v is nil for
// implicit directories. fn returns false to stop.
func children(b backend.Bucket, dir string, after []byte, fn func(k, v []byte) bool) {
	if b == nil {
		return
	}
	prefix := dirPrefix(dir)
	c := b.Cursor()
	start := prefix
	if after != nil {
		start = afterSubtree(after)
	}
	k, v := c.Seek(start)
	for k != nil && bytes.HasPrefix(k, prefix) {
		end := segmentEnd(k, len(prefix))
		if end == len(k) {
			if !fn(k, v) {
				return
			}
			if v[0]&flagDir == 0 {
				k, v = c.Next()
				continue
			}
		} else {
			k = k[:end]
			if !fn(k, nil) {
				return
			}
		}
		k, v = c.Seek(afterSubtree(k))
	}
}

// lookupDir resolves r and requires an existing directory: not-found errors
// carry nearby refs, and an item gets ErrNotDir.
func (t *txn) lookupDir(r Ref) (node, error) {
	n, err := t.lookup(r)
	if err != nil {
		return node{}, err
	}
	switch {
	case !n.exists():
		return node{}, t.notFound(n)
	case n.isFile():
		ref := n.ref()
		return node{}, newError(ErrNotDir, ref, "use read or info for an item", "%s is an item, not a directory.", ref)
	}
	return n, nil
}

// notFound builds ErrNotFound for a missing ref, with nearby refs: children of
// the nearest populated ancestor, or the drives that have items.
func (t *txn) notFound(n node) *Error {
	ref := n.ref()
	e := newError(ErrNotFound, ref, "", "No item or directory at %s.", ref)
	b := t.driveBucket(n.drive)
	drives := t.visibleDriveNames()
	if !slices.Contains(drives, n.drive) {
		if len(drives) == 0 {
			e.Message = fmt.Sprintf("No item at %s: the store is empty.", ref)
			if t.access.Limited() {
				e.Message = fmt.Sprintf("No item at %s: nothing within %s exists yet.", ref, t.access)
			}
			e.Hint = "write an item first"
			return e
		}
		for _, d := range drives {
			e.Nearby = append(e.Nearby, FormatRef(d, "/"))
		}
		e.Message = fmt.Sprintf("No item at %s: drive %q has no items.", ref, n.drive)
		e.Hint = fmt.Sprintf("Drives with items: %s. Call list_drives or tree to see them.", strings.Join(drives, ", "))
		return e
	}
	for p := parentOf(n.path); ; p = parentOf(p) {
		t.visibleChildren(b, n.drive, p, nil, func(k, v []byte) bool {
			r := FormatRef(n.drive, keyPath(k))
			if v == nil || v[0]&flagDir != 0 {
				r += "/"
			}
			e.Nearby = append(e.Nearby, r)
			return len(e.Nearby) < 5
		})
		if len(e.Nearby) > 0 {
			dir := FormatRef(n.drive, p)
			e.Hint = fmt.Sprintf("Nearby items under %s: %s. Call tree %s to see more.", dir, strings.Join(e.Nearby, ", "), dir)
			return e
		}
		if p == "/" {
			return e
		}
	}
}
