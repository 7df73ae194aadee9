package embed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ctxd/ctxd/index/tokenize"
)

// ModelFile is the ONNX graph's file name in a model directory.
const ModelFile = "model.onnx"

// ModelDataFile holds the graph's weights when they are kept beside it (ONNX
// external data, as make setup installs the models): ONNX Runtime maps that
// file instead of copying the weights into the process, so the daemon's
// anonymous memory holds none of them and only the word-embedding rows of
// tokens it has embedded are resident.
const ModelDataFile = ModelFile + ".data"

// Graph tensor names (the Hugging Face BERT export's).
const (
	inputIDs      = "input_ids"
	inputMask     = "attention_mask"
	inputTypes    = "token_type_ids"
	outputHidden  = "last_hidden_state"
	defaultBatch  = 32
	defaultThread = 2
	bulkWindows   = 4 // default BulkBatchTokens, in full windows
)

// minORTMajor, minORTMinor: onnxruntime_go v1.27.0 asks the library for C API
// version 24, which ONNX Runtime 1.24 introduced.
const minORTMajor, minORTMinor = 1, 24

// ErrClosed is returned by Embed on a Model or Worker that has been closed.
var ErrClosed = errors.New("embed: closed")

// Options tunes the runtime.
type Options struct {
	// LibraryPath is the ONNX Runtime shared library (libonnxruntime.so,
	// version >= 1.24). Required. One process loads one library: a second Open
	// naming a different file fails.
	LibraryPath string
	// Threads is the number of intra-op threads of the session; 0 means
	// min(2, NumCPU). Inter-op threads are always 1 and no thread spins.
	Threads int
	// MaxBatch is the most texts one graph run takes; 0 means 32.
	MaxBatch int
	// MaxBatchTokens bounds a run's padded size, texts × longest text in
	// tokens; 0 means Spec.MaxTokens (one full-window text per run). A run
	// always takes at least one text, so the bound in effect is
	// max(MaxBatchTokens, Spec.MaxTokens). It bounds the time a query
	// waits behind the run in flight: long texts get smaller batches, short
	// ones up to MaxBatch. The default favours query latency; a Worker's
	// backlog takes larger runs while no query comes (BulkBatchTokens).
	MaxBatchTokens int
	// BulkBatchTokens is the padded-token bound of a Worker's Background
	// runs while no query has come for a while (see Worker): the ingest
	// backlog then runs in larger batches, which embed about 7% more texts a
	// second than MaxBatchTokens' on two cores. 0 means 4 × Spec.MaxTokens;
	// a value below MaxBatchTokens means MaxBatchTokens (no bulk runs).
	BulkBatchTokens int
}

func (o Options) withDefaults() (Options, error) {
	if o.LibraryPath == "" {
		return o, errors.New("options: LibraryPath: empty (path to libonnxruntime.so; run make setup-run)")
	}
	if o.Threads < 0 {
		return o, fmt.Errorf("options: Threads: %d, want >= 0", o.Threads)
	}
	if o.MaxBatch < 0 {
		return o, fmt.Errorf("options: MaxBatch: %d, want >= 0", o.MaxBatch)
	}
	if o.MaxBatchTokens < 0 {
		return o, fmt.Errorf("options: MaxBatchTokens: %d, want >= 0", o.MaxBatchTokens)
	}
	if o.BulkBatchTokens < 0 {
		return o, fmt.Errorf("options: BulkBatchTokens: %d, want >= 0", o.BulkBatchTokens)
	}
	if o.Threads == 0 {
		o.Threads = min(defaultThread, runtime.NumCPU())
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = defaultBatch
	}
	return o, nil
}

// ortRuntime is the process-wide ONNX Runtime environment: created once by
// the first successful Open, never destroyed (sessions of later Opens share
// it). A failed initialisation leaves it unset so a later Open may retry.
var ortRuntime struct {
	mu      sync.Mutex
	path    string // absolute library path once initialised
	version string
}

// initRuntime loads the library at lib and creates the ORT environment, or
// checks that the environment already loaded is the same file.
func initRuntime(lib string) error {
	abs, err := filepath.Abs(lib)
	if err != nil {
		return fmt.Errorf("onnxruntime library %s: %w", lib, err)
	}
	ortRuntime.mu.Lock()
	defer ortRuntime.mu.Unlock()
	if ortRuntime.path != "" {
		if ortRuntime.path != abs {
			return fmt.Errorf("onnxruntime library %s: this process already loaded %s (one library per process)", abs, ortRuntime.path)
		}
		return nil
	}
	if ort.IsInitialized() {
		return fmt.Errorf("onnxruntime library %s: the environment was initialised outside package embed", abs)
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("onnxruntime library: %w (run make setup-run)", err)
	}
	ort.SetSharedLibraryPath(abs)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("onnxruntime library %s (needs ONNX Runtime >= %d.%d): %w", abs, minORTMajor, minORTMinor, err)
	}
	v := ort.GetVersion()
	if !versionAtLeast(v, minORTMajor, minORTMinor) {
		_ = ort.DestroyEnvironment()
		return fmt.Errorf("onnxruntime library %s: version %s, need >= %d.%d", abs, v, minORTMajor, minORTMinor)
	}
	ortRuntime.path, ortRuntime.version = abs, v
	return nil
}

// versionAtLeast reports whether a "major.minor[.patch]" version is at least
// major.minor; an unparsable version is not.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// RuntimeVersion returns the ONNX Runtime version loaded by Open, or "" before
// the first successful Open.
func RuntimeVersion() string {
	ortRuntime.mu.Lock()
	defer ortRuntime.mu.Unlock()
	return ortRuntime.version
}

// Model owns one ONNX Runtime session and the model's tokenizer. Embed is not
// safe for concurrent use: a Worker serialises access.
type Model struct {
	spec     Spec
	opts     Options
	tok      *tokenize.Tokenizer
	session  *ort.DynamicAdvancedSession
	hasTypes bool // the graph takes token_type_ids
	// runOpts carries the terminate flag Worker sets to preempt a bulk run.
	runOpts *ort.RunOptions

	// Buffers reused by every run, sized for maxCells tokens: ORT reads the
	// inputs from and writes the output into Go memory.
	inBuf  []int64
	outBuf []float32

	stats modelStats
	// probeCosine is what probeBatchInvariance measured (0 if it did not run).
	probeCosine float64
	// beforeRun, when set (tests), sees every batch's shape before it runs.
	beforeRun func(batch, seqLen int)
}

// modelStats counts the runs of one Model (read by tests and benchmarks).
type modelStats struct {
	runs, texts, tokens   int
	maxBatch, maxSeqLen   int
	maxCells              int // batch × seqLen
	lastBatch, lastSeqLen int
}

// Open loads the model in modelDir (model.onnx, the tokenizer files and
// ctxd-model.json) and creates one session with opts. It checks the graph's
// inputs and output, runs a warm-up to check that the output is
// Spec.Dimensions wide, and probes whether vectors depend on the batch
// (dynamically quantized graphs), in which case it sets MaxBatch to 1 (see
// Options). Errors name what is missing or wrong: the library or its version,
// a file, a spec field, the output width.
func Open(modelDir string, opts Options) (*Model, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	spec, err := LoadSpec(modelDir)
	if err != nil {
		return nil, fmt.Errorf("open model: %w (run make setup-run)", err)
	}
	if opts.MaxBatchTokens == 0 {
		opts.MaxBatchTokens = spec.MaxTokens
	}
	if opts.BulkBatchTokens == 0 {
		opts.BulkBatchTokens = bulkWindows * spec.MaxTokens
	}
	opts.BulkBatchTokens = max(opts.BulkBatchTokens, opts.MaxBatchTokens)
	graph := filepath.Join(modelDir, ModelFile)
	if _, err := os.Stat(graph); err != nil {
		return nil, fmt.Errorf("open model: %w (run make setup-run)", err)
	}
	graph = throughLinks(modelDir)
	tok, err := tokenize.Load(modelDir)
	if err != nil {
		return nil, fmt.Errorf("open model %s: tokenizer: %w", modelDir, err)
	}
	if err := initRuntime(opts.LibraryPath); err != nil {
		return nil, fmt.Errorf("open model %s: %w", modelDir, err)
	}
	inputs, hasTypes, output, err := graphNames(graph, spec)
	if err != nil {
		return nil, fmt.Errorf("open model %s: %w", graph, err)
	}
	so, err := sessionOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("open model %s: session options: %w", graph, err)
	}
	defer so.Destroy()
	session, err := ort.NewDynamicAdvancedSession(graph, inputs, []string{output}, so)
	if err != nil {
		return nil, fmt.Errorf("open model %s: %w", graph, err)
	}
	runOpts, err := ort.NewRunOptions()
	if err != nil {
		session.Destroy()
		return nil, fmt.Errorf("open model %s: run options: %w", graph, err)
	}
	m := &Model{
		spec: spec, opts: opts, tok: tok, session: session, hasTypes: hasTypes, runOpts: runOpts,
	}
	if err := m.checkOutput(); err != nil {
		m.Close()
		return nil, fmt.Errorf("open model %s: %w", graph, err)
	}
	if err := m.probeBatchInvariance(); err != nil {
		m.Close()
		return nil, fmt.Errorf("open model %s: %w", graph, err)
	}
	return m, nil
}

// throughLinks is the graph path Open hands ONNX Runtime. The runtime reads
// a graph's weights file only from the graph's own directory, links
// resolved, so a directory of links to another model's files (that model
// with a ctxd-model.json of its own) is opened through the links' target
// when both files lead to one directory there.
func throughLinks(modelDir string) string {
	graph, data := filepath.Join(modelDir, ModelFile), filepath.Join(modelDir, ModelDataFile)
	if fi, err := os.Lstat(data); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return graph
	}
	target, err := filepath.EvalSymlinks(graph)
	if err != nil {
		return graph
	}
	linked, err1 := os.Stat(data)
	beside, err2 := os.Stat(filepath.Join(filepath.Dir(target), ModelDataFile))
	if err1 != nil || err2 != nil || !os.SameFile(linked, beside) {
		return graph
	}
	return target
}

// graphNames checks the graph's declared inputs and outputs and returns the
// input names in the order Model feeds them, whether token_type_ids is one of
// them, and the name of the token-vector output.
func graphNames(graph string, spec Spec) (inputs []string, hasTypes bool, output string, err error) {
	ins, outs, err := ort.GetInputOutputInfo(graph)
	if err != nil {
		return nil, false, "", err
	}
	have := map[string]bool{}
	for _, in := range ins {
		switch in.Name {
		case inputIDs, inputMask, inputTypes:
			if in.DataType != ort.TensorElementDataTypeInt64 {
				return nil, false, "", fmt.Errorf("input %s is %s, want int64", in.Name, in.DataType)
			}
			have[in.Name] = true
		default:
			return nil, false, "", fmt.Errorf("unexpected graph input %q (want input_ids, attention_mask, token_type_ids)", in.Name)
		}
	}
	if !have[inputIDs] || !have[inputMask] {
		return nil, false, "", fmt.Errorf("graph inputs %v: want input_ids and attention_mask", have)
	}
	inputs = []string{inputIDs, inputMask}
	if have[inputTypes] {
		inputs = append(inputs, inputTypes)
	}
	for _, o := range outs {
		if o.Name != outputHidden {
			continue
		}
		if o.DataType != ort.TensorElementDataTypeFloat || len(o.Dimensions) != 3 {
			return nil, false, "", fmt.Errorf("output %s: %s %v, want float [batch, seq, dims]", o.Name, o.DataType, o.Dimensions)
		}
		if d := o.Dimensions[2]; d > 0 && int(d) != spec.Dimensions {
			return nil, false, "", fmt.Errorf("output %s has %d dims, %s says dimensions %d", o.Name, d, SpecFile, spec.Dimensions)
		}
		return inputs, have[inputTypes], outputHidden, nil
	}
	names := make([]string, len(outs))
	for i, o := range outs {
		names[i] = o.Name
	}
	return nil, false, "", fmt.Errorf("graph outputs %v: want %s (pooling is done outside the graph)", names, outputHidden)
}

// sessionOptions: intra-op threads as asked, one inter-op thread, and no
// spinning, because the daemon shares the cores with the session.
func sessionOptions(opts Options) (*ort.SessionOptions, error) {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	steps := []func() error{
		func() error { return so.SetIntraOpNumThreads(opts.Threads) },
		func() error { return so.SetInterOpNumThreads(1) },
		func() error { return so.SetExecutionMode(ort.ExecutionModeSequential) },
		func() error { return so.AddSessionConfigEntry("session.intra_op.allow_spinning", "0") },
		func() error { return so.AddSessionConfigEntry("session.inter_op.allow_spinning", "0") },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			so.Destroy()
			return nil, err
		}
	}
	return so, nil
}

// checkOutput runs one short input with an ORT-allocated output and compares
// the output's shape with the spec (the graph may leave dims dynamic).
func (m *Model) checkOutput() error {
	in := padBatch([][]int64{m.encode("ctxd", false)}, m.tok.PadID(), nil)
	values, err := m.inputTensors(in)
	if err != nil {
		return err
	}
	defer destroyAll(values)
	outputs := []ort.Value{nil}
	if err := m.session.Run(values, outputs); err != nil {
		return fmt.Errorf("warm-up run: %w", err)
	}
	defer outputs[0].Destroy()
	got := outputs[0].GetShape()
	want := ort.NewShape(1, int64(in.seqLen), int64(m.spec.Dimensions))
	if !got.Equals(want) {
		return fmt.Errorf("warm-up run: output shape %v, want %v (%s dimensions %d)", got, want, SpecFile, m.spec.Dimensions)
	}
	return nil
}

// batchInvariantCosine is the least cosine between a text's vector alone and
// in a padded batch for a graph to count as batch-invariant. Float graphs
// differ by rounding only (~1e-7); dynamically quantized ones by 1e-3..3e-2.
const batchInvariantCosine = 0.9999

// probeBatchInvariance embeds a short text alone and in a batch with a longer
// one. Graphs with dynamic activation quantization (int8 models made by
// onnxruntime's quantize_dynamic: DynamicQuantizeLinear) compute one scale
// over the whole activation tensor, the other inputs and the padding
// included, so a text's vector depends on what it was batched with. For such
// graphs the probe sets MaxBatch to 1: every vector is then what the text
// gives alone, reproducible and equal to the reference, at the cost of
// batching's speed-up.
func (m *Model) probeBatchInvariance() error {
	defer func() { m.stats = modelStats{} }()
	if m.opts.MaxBatch < 2 {
		return nil
	}
	longLen := min(m.spec.MaxTokens, m.maxCells()/2)
	short := m.tok.Encode("ctxd", m.spec.MaxTokens)
	long := m.tok.Encode(strings.Repeat("a memory layer keeps what agents learn ", 64), longLen)
	if len(long) <= len(short) {
		return nil // a window too small to pad anything
	}
	alone, pair := newVectors(1, m.spec.Dimensions), newVectors(2, m.spec.Dimensions)
	if err := m.run([][]int64{short}, alone); err != nil {
		return fmt.Errorf("batch probe: %w", err)
	}
	if err := m.run([][]int64{short, long}, pair); err != nil {
		return fmt.Errorf("batch probe: %w", err)
	}
	m.probeCosine = Cosine(alone[0], pair[0])
	if m.probeCosine < batchInvariantCosine {
		m.opts.MaxBatch = 1
		m.inBuf, m.outBuf = nil, nil // reallocated for the smaller batches
	}
	return nil
}

// Spec returns the model's description.
func (m *Model) Spec() Spec { return m.spec }

// Options returns the options in effect: defaults filled in, and MaxBatch 1
// when Open found the graph's output depends on the batch (see doc.go).
func (m *Model) Options() Options { return m.opts }

// Tokenizer returns the model's tokenizer (safe for concurrent use), which
// chunkers use to bound chunks in model tokens.
func (m *Model) Tokenizer() *tokenize.Tokenizer { return m.tok }

// encode adds the query or document prefix and tokenizes with truncation at
// Spec.MaxTokens ([CLS] and [SEP] included).
func (m *Model) encode(text string, query bool) []int64 {
	if query {
		text = m.spec.QueryPrefix + text
	} else {
		text = m.spec.DocumentPrefix + text
	}
	return m.tok.Encode(text, m.spec.MaxTokens)
}

// Embed returns one vector per text, in order. It adds the query or document
// prefix, truncates each text at Spec.MaxTokens tokens, and runs the graph on
// consecutive texts in batches bounded by Options.MaxBatch and
// Options.MaxBatchTokens, each run padded only to its longest input; vectors
// are pooled per Spec.Pooling and normalised if Spec.Normalize. The vectors
// share one backing array. Not safe for concurrent use.
func (m *Model) Embed(texts []string, query bool) ([][]float32, error) {
	if m.session == nil {
		return nil, ErrClosed
	}
	out := newVectors(len(texts), m.spec.Dimensions)
	seqs := make([][]int64, 0, min(len(texts), m.opts.MaxBatch))
	lens := make([]int, 0, cap(seqs))
	start := 0 // first text of seqs
	for next := 0; next < len(texts) || len(seqs) > 0; {
		// Tokenize up to MaxBatch texts ahead, run the batch that fits, keep
		// the rest for the next run.
		for ; next < len(texts) && len(seqs) < m.opts.MaxBatch; next++ {
			seqs = append(seqs, m.encode(texts[next], query))
			lens = append(lens, len(seqs[len(seqs)-1]))
		}
		n := batchSize(lens, m.opts.MaxBatch, m.opts.MaxBatchTokens)
		if err := m.run(seqs[:n], out[start:start+n]); err != nil {
			return nil, err
		}
		start += n
		seqs = append(seqs[:0], seqs[n:]...)
		lens = append(lens[:0], lens[n:]...)
	}
	return out, nil
}

// batchSize returns how many inputs, of token lengths lens in run order, the
// next run takes: at most maxBatch, and no more than keep count × longest
// within budget, but at least one.
func batchSize(lens []int, maxBatch, budget int) int {
	longest := 0
	for k, l := range lens {
		if k == maxBatch {
			return k
		}
		longest = max(longest, l)
		if k > 0 && (k+1)*longest > budget {
			return k
		}
	}
	return len(lens)
}

// newVectors allocates n vectors of dims floats in one array; each is capped
// so an append never runs into its neighbour.
func newVectors(n, dims int) [][]float32 {
	backing := make([]float32, n*dims)
	out := make([][]float32, n)
	for i := range out {
		out[i] = backing[i*dims : (i+1)*dims : (i+1)*dims]
	}
	return out
}

// run embeds one batch of at most MaxBatch tokenized inputs into out.
func (m *Model) run(seqs [][]int64, out [][]float32) error {
	if len(seqs) == 0 {
		return nil
	}
	cells := m.maxCells()
	if m.inBuf == nil {
		m.inBuf = make([]int64, 3*cells)
		m.outBuf = make([]float32, cells*m.spec.Dimensions)
	}
	in := padBatch(seqs, m.tok.PadID(), m.inBuf)
	switch {
	case in.batch > m.opts.MaxBatch:
		return fmt.Errorf("embed: batch of %d exceeds MaxBatch %d", in.batch, m.opts.MaxBatch)
	case in.seqLen > m.spec.MaxTokens:
		return fmt.Errorf("embed: input of %d tokens exceeds max_tokens %d", in.seqLen, m.spec.MaxTokens)
	case in.batch*in.seqLen > cells:
		return fmt.Errorf("embed: batch [%d, %d] exceeds the buffers' %d tokens", in.batch, in.seqLen, cells)
	}
	if m.beforeRun != nil {
		m.beforeRun(in.batch, in.seqLen)
	}
	values, err := m.inputTensors(in)
	if err != nil {
		return err
	}
	defer destroyAll(values)
	dims := m.spec.Dimensions
	hidden := m.outBuf[:in.batch*in.seqLen*dims]
	output, err := ort.NewTensor(ort.NewShape(int64(in.batch), int64(in.seqLen), int64(dims)), hidden)
	if err != nil {
		return fmt.Errorf("embed: output tensor: %w", err)
	}
	defer output.Destroy()
	if err := m.session.RunWithOptions(values, []ort.Value{output}, m.runOpts); err != nil {
		return fmt.Errorf("embed: run batch [%d, %d]: %w", in.batch, in.seqLen, err)
	}
	if err := pool(out, hidden, in.mask, in.batch, in.seqLen, dims, m.spec.Pooling, m.spec.Normalize); err != nil {
		return err
	}
	s := &m.stats
	s.runs++
	s.texts += in.batch
	for _, q := range seqs {
		s.tokens += len(q)
	}
	s.maxBatch, s.maxSeqLen = max(s.maxBatch, in.batch), max(s.maxSeqLen, in.seqLen)
	s.maxCells = max(s.maxCells, in.batch*in.seqLen)
	s.lastBatch, s.lastSeqLen = in.batch, in.seqLen
	return nil
}

// terminate asks the run in flight (or the next one) to stop; safe from any
// goroutine. Should ORT refuse, the run just completes: a stop only saves
// a query the wait.
func (m *Model) terminate() { _ = m.runOpts.Terminate() }

// resume clears terminate's flag before the next run.
func (m *Model) resume() error {
	if err := m.runOpts.UnsetTerminate(); err != nil {
		return fmt.Errorf("embed: clear the stop flag: %w", err)
	}
	return nil
}

// maxCells is the largest batch × seqLen a run may have, what the buffers
// are sized for.
func (m *Model) maxCells() int {
	return max(min(m.opts.MaxBatch*m.spec.MaxTokens, m.opts.BulkBatchTokens), m.spec.MaxTokens)
}

// inputTensors wraps the batch's slices as ORT tensors in the session's input
// order. The caller destroys them.
func (m *Model) inputTensors(in batchInputs) ([]ort.Value, error) {
	shape := ort.NewShape(int64(in.batch), int64(in.seqLen))
	datas := [][]int64{in.ids, in.mask}
	if m.hasTypes {
		datas = append(datas, in.types)
	}
	values := make([]ort.Value, 0, len(datas))
	for _, d := range datas {
		t, err := ort.NewTensor(shape, d)
		if err != nil {
			destroyAll(values)
			return nil, fmt.Errorf("embed: input tensor: %w", err)
		}
		values = append(values, t)
	}
	return values, nil
}

func destroyAll(values []ort.Value) {
	for _, v := range values {
		v.Destroy()
	}
}

// Close releases the session. The process-wide ORT environment stays loaded.
// Close is idempotent; Embed after Close returns ErrClosed.
func (m *Model) Close() error {
	if m.session == nil {
		return nil
	}
	err := errors.Join(m.session.Destroy(), m.runOpts.Destroy())
	m.session, m.runOpts = nil, nil
	m.inBuf, m.outBuf = nil, nil
	if err != nil {
		return fmt.Errorf("close model %s: %w", m.spec.ID, err)
	}
	return nil
}
