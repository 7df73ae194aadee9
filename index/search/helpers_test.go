package search

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/testchunk"
	"github.com/ctxd/ctxd/vfs"
)

const (
	testModel = "test-model"
	testDims  = 8
	// timedDrive is the drive whose items' times the test engines keep.
	timedDrive = "ev"
)

// env is a real store with a real engine over it.
type env struct {
	t         testing.TB
	dir       string
	store     *vfs.Store
	eng       *Engine
	withModel bool
}

func newEnv(t testing.TB) *env {
	t.Helper()
	dir := t.TempDir()
	s, err := vfs.Open(filepath.Join(dir, "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetIndexing(context.Background(), testchunk.Paragraphs{}, testModel); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, store: s}
	e.open(true)
	t.Cleanup(func() {
		if e.eng != nil {
			e.eng.Close()
		}
		s.Close()
	})
	return e
}

// open starts an engine over the store, with the test model when withModel.
func (e *env) open(withModel bool) {
	e.t.Helper()
	eng, err := Open(e.store, Options{Dir: filepath.Join(e.dir, "index"), TimedDrives: []string{timedDrive}})
	if err != nil {
		e.t.Fatal(err)
	}
	if withModel {
		eng.SetModel(testModel, testDims)
	}
	e.eng, e.withModel = eng, withModel
}

func (e *env) close() {
	e.t.Helper()
	if err := e.eng.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.eng = nil
}

// write stores text at ref; vecs (one per paragraph) are precomputed embeddings.
func (e *env) write(ref, text string, vecs ...[]float32) vfs.Item {
	e.t.Helper()
	r, err := vfs.ParseRef(ref)
	if err != nil {
		e.t.Fatal(err)
	}
	p := vfs.WriteParams{Ref: r, Content: []byte(text), IsText: true, OnConflict: vfs.ConflictOverwrite}
	if vecs != nil {
		p.Embeddings = &vfs.Embeddings{Model: testModel, Vectors: vecs}
	}
	res, err := e.store.Write(context.Background(), p)
	if err != nil {
		e.t.Fatalf("write %s: %v", ref, err)
	}
	return res.Item
}

// sync waits until the engine has applied every outbox entry.
func (e *env) sync() {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		seq, err := e.store.OutboxSeq(context.Background())
		if err != nil {
			e.t.Fatal(err)
		}
		st := e.eng.State()
		if st.AppliedSeq >= seq && !st.Rebuilding && (st.Model == testModel) == e.withModel {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("engine stuck at seq %d of %d (%+v)", st.AppliedSeq, seq, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) search(req Request) Response {
	e.t.Helper()
	resp, err := e.eng.Search(context.Background(), req)
	if err != nil {
		e.t.Fatalf("search %+v: %v", req.Queries, err)
	}
	return resp
}

func refs(resp Response) []string {
	var out []string
	for _, r := range resp.Results {
		out = append(out, r.Drive+":"+r.Path)
	}
	return out
}

// unit returns a vector pointing mostly along axis i.
func unit(i int, rest float32) []float32 {
	v := make([]float32, testDims)
	for j := range v {
		v[j] = rest
	}
	v[i%testDims] = 1
	return v
}

// angled returns a unit vector at angle a (radians) from axis 0 towards axis 1.
func angled(a float64) []float32 {
	v := make([]float32, testDims)
	v[0], v[1] = float32(math.Cos(a)), float32(math.Sin(a))
	return v
}

func mustDoctor(t testing.TB, eng *Engine) DoctorReport {
	t.Helper()
	rep, err := eng.Doctor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func fmtProblems(rep DoctorReport) string { return fmt.Sprintf("%q", rep.Problems) }
