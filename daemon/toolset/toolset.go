package toolset

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Backend is the daemon API the tools call. Build it with NewBackend over any
// grpc.ClientConnInterface: a unix-socket connection in `ctxd mcp`, the
// daemon's own loopback connection carrying the caller's credentials inside
// the daemon.
type Backend struct {
	Vfs     ctxdv1.VfsServiceClient
	Search  ctxdv1.SearchServiceClient
	Context ctxdv1.ContextServiceClient
	Ingest  ctxdv1.IngestServiceClient
	Session ctxdv1.SessionServiceClient
	Watch   ctxdv1.WatchServiceClient
	// Subscription keeps standing queries (context_watch_query).
	Subscription ctxdv1.SubscriptionServiceClient
	// Cwd is the working directory of the agent's host process, when the
	// tools run in it (`ctxd mcp` over stdio): remember passes it so that
	// the daemon derives the project from it. Empty inside the daemon.
	Cwd string
}

// NewBackend returns a Backend whose clients share cc, without a Cwd.
func NewBackend(cc grpc.ClientConnInterface) Backend {
	return Backend{
		Vfs:          ctxdv1.NewVfsServiceClient(cc),
		Search:       ctxdv1.NewSearchServiceClient(cc),
		Context:      ctxdv1.NewContextServiceClient(cc),
		Ingest:       ctxdv1.NewIngestServiceClient(cc),
		Session:      ctxdv1.NewSessionServiceClient(cc),
		Watch:        ctxdv1.NewWatchServiceClient(cc),
		Subscription: ctxdv1.NewSubscriptionServiceClient(cc),
	}
}

// WithMetadata returns cc adding kv (key, value, ...) to the outgoing
// metadata of every call: the credentials and agent name the tools run with.
func WithMetadata(cc grpc.ClientConnInterface, kv ...string) grpc.ClientConnInterface {
	return metadataConn{cc: cc, md: kv}
}

type metadataConn struct {
	cc grpc.ClientConnInterface
	md []string // key, value, ...
}

func (c metadataConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return c.cc.Invoke(metadata.AppendToOutgoingContext(ctx, c.md...), method, args, reply, opts...)
}

func (c metadataConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.cc.NewStream(metadata.AppendToOutgoingContext(ctx, c.md...), desc, method, opts...)
}

// Annotations are hints about a tool's behaviour, as MCP defines them.
type Annotations struct {
	// ReadOnly: the tool does not change anything.
	ReadOnly bool
	// Destructive: the tool may delete or replace existing content.
	Destructive bool
	// Idempotent: calling it again with the same arguments has no further effect.
	Idempotent bool
	// OpenWorld: the tool reaches outside ctxd's store (host files, URLs).
	OpenWorld bool
}

// Tool describes one tool.
type Tool struct {
	Name        string          // e.g. "context_read"
	Title       string          // short human title
	Description string          // what it does and when to use it, written for an LLM
	InputSchema json.RawMessage // JSON Schema: type object, properties with descriptions, required
	Annotations Annotations
	Scopes      []string // token scopes the tool needs, e.g. "read"; "write","ingest" for context_add

	core       bool   // listed in the core profile
	replacedBy string // set on an older name no profile lists: the tool that does its job now
}

// Result is what a tool call returns: Text is a JSON object. IsError marks a
// failure, whose Text is {"is_error":true,"error_type":...,"message":...,
// "next_action_hint":...}.
type Result struct {
	Text    string
	IsError bool
}

// entry is a registered tool with its argument schema and handler.
type entry struct {
	Tool
	resolved *jsonschema.Resolved
	run      func(ctx context.Context, b Backend, args map[string]any) (any, error)
}

// registry holds every tool in the order Tools lists them; byName indexes it.
// Both are built on first use (loaded), from what register queued.
var (
	registry []*entry
	byName   = map[string]*entry{}
	queued   []func()
	load     sync.Once
)

// loaded builds the registry from the tools register queued, once.
// Deriving, resolving and marshalling every tool's schema takes a third of
// the ctxd binary's start-up (about 4 ms), which each short-lived process
// (a hook event, a CLI call) would pay for nothing at init.
func loaded() {
	load.Do(func() {
		for _, f := range queued {
			f()
		}
	})
}

// register queues a tool whose arguments decode into In. The input schema
// is derived from In once, when the registry is first used; run gets the
// decoded, defaulted arguments and returns a proto message or a
// JSON-marshalable value.
func register[In any](t Tool, run func(context.Context, Backend, *In) (any, error)) {
	queued = append(queued, func() { build(t, run) })
}

// build adds a tool register queued to the registry.
func build[In any](t Tool, run func(context.Context, Backend, *In) (any, error)) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("toolset: schema of %s: %v", t.Name, err))
	}
	applySchemaTags(reflect.TypeFor[In](), s)
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("toolset: resolve schema of %s: %v", t.Name, err))
	}
	if t.InputSchema, err = json.Marshal(s); err != nil {
		panic(fmt.Sprintf("toolset: marshal schema of %s: %v", t.Name, err))
	}
	e := &entry{Tool: t, resolved: rs}
	e.run = func(ctx context.Context, b Backend, args map[string]any) (any, error) {
		in, err := decode[In](t.Name, rs, args)
		if err != nil {
			return nil, err
		}
		return run(ctx, b, in)
	}
	if byName[t.Name] != nil {
		panic("toolset: duplicate tool " + t.Name)
	}
	registry = append(registry, e)
	byName[t.Name] = e
}

// applySchemaTags adds what jsonschema.For can not infer from a struct: the
// `schema` tag's default, enum, minimum, maximum, minLength, minItems and maxItems
// (comma-separated key=value; enum values separated by "|"). Slices and
// pointers lose the null For allows: no caller needs it, and null means absent.
func applySchemaTags(t reflect.Type, s *jsonschema.Schema) {
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Types, s.Type = nil, s.Types[1]
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		applySchemaTags(t.Elem(), s.Items)
		return
	case reflect.Struct:
		if s.Properties == nil { // "properties": {} even without arguments, as function-calling APIs expect
			s.Properties = map[string]*jsonschema.Schema{}
		}
	default:
		return
	}
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		applySchemaTags(f.Type, ps)
		tag := f.Tag.Get("schema")
		if tag == "" {
			continue
		}
		for kv := range strings.SplitSeq(tag, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "default":
				ps.Default = jsonValue(f.Type, v)
			case "enum":
				for e := range strings.SplitSeq(v, "|") {
					ps.Enum = append(ps.Enum, e)
				}
			case "minimum":
				ps.Minimum = jsonschema.Ptr(mustFloat(v))
			case "maximum":
				ps.Maximum = jsonschema.Ptr(mustFloat(v))
			case "minLength":
				ps.MinLength = jsonschema.Ptr(int(mustFloat(v)))
			case "minItems":
				ps.MinItems = jsonschema.Ptr(int(mustFloat(v)))
			case "maxItems":
				ps.MaxItems = jsonschema.Ptr(int(mustFloat(v)))
			default:
				panic(fmt.Sprintf("toolset: unknown schema tag key %q on %s.%s", k, t, f.Name))
			}
		}
	}
}

// jsonValue encodes a tag's default as JSON of the field's kind.
func jsonValue(t reflect.Type, v string) json.RawMessage {
	if t.Kind() == reflect.String {
		b, _ := json.Marshal(v)
		return b
	}
	if !json.Valid([]byte(v)) {
		panic(fmt.Sprintf("toolset: default %q of a %s field is not JSON", v, t))
	}
	return json.RawMessage(v)
}

func mustFloat(v string) float64 {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		panic(fmt.Sprintf("toolset: schema tag number %q: %v", v, err))
	}
	return f
}

// argError is a failure of the arguments themselves, reported as
// invalid_argument.
type argError struct{ msg, hint string }

func (e *argError) Error() string { return e.msg }

// decode checks args against the tool's schema (unknown and missing fields
// first, with messages naming them), applies the schema's defaults and
// decodes the result strictly into In.
func decode[In any](tool string, rs *jsonschema.Resolved, args map[string]any) (*In, error) {
	s := rs.Schema()
	bad := func(field, msg string) error {
		return &argError{fmt.Sprintf("invalid arguments for %s: %s", tool, msg),
			fmt.Sprintf("Fix %q and call %s again with arguments matching its input schema: %s.", field, tool, describeArgs(s))}
	}
	for _, k := range sortedKeys(args) {
		if _, ok := s.Properties[k]; !ok {
			return nil, bad(k, fmt.Sprintf("unknown argument %q", k))
		}
	}
	for _, k := range s.Required {
		if _, ok := args[k]; !ok {
			return nil, bad(k, fmt.Sprintf("missing required argument %q", k))
		}
	}
	if err := rs.Validate(args); err != nil {
		field, msg := validationField(err)
		return nil, bad(field, field+": "+msg)
	}
	if err := rs.ApplyDefaults(&args); err != nil {
		return nil, fmt.Errorf("apply defaults of %s: %w", tool, err)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("re-encode arguments of %s: %w", tool, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	in := new(In)
	if err := dec.Decode(in); err != nil { // the schema admits only what In decodes
		return nil, fmt.Errorf("decode arguments of %s: %w", tool, err)
	}
	return in, nil
}

// validatingRE matches the validator's nested "validating <pointer>: "
// prefixes; the last one is the innermost.
var validatingRE = regexp.MustCompile(`validating (/\S*): `)

// validationField turns a validation error into the argument it is about,
// spelled like patches[].start_line, and the innermost cause.
func validationField(err error) (field, msg string) {
	msg = err.Error()
	m := validatingRE.FindAllStringSubmatchIndex(msg, -1)
	if len(m) == 0 {
		return "arguments", msg
	}
	last := m[len(m)-1]
	ptr, msg := msg[last[2]:last[3]], msg[last[1]:]
	field = strings.NewReplacer("/properties/", ".", "/items", "[]").Replace(ptr)
	return cmp.Or(strings.TrimPrefix(field, "."), "arguments"), msg
}

// describeArgs lists a schema's properties with their types, required ones
// marked, for hints.
func describeArgs(s *jsonschema.Schema) string {
	if len(s.Properties) == 0 {
		return "no arguments ({})"
	}
	var parts []string
	for _, name := range s.PropertyOrder {
		p := s.Properties[name]
		typ := p.Type
		if typ == "" {
			typ = strings.Join(p.Types, "|")
		}
		if slices.Contains(s.Required, name) {
			typ += ", required"
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", name, typ))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// The profiles: which tools a host lists. A profile decides only that: Call
// runs any tool of any profile (and the older names merged into broader
// tools), whatever was listed.
const (
	// ProfileCore, the default, is the tools an agent needs in most
	// conversations: the seeds' list_drives, tree, read, write, edit,
	// search and build_context, and remember.
	ProfileCore = "core"
	// ProfileRead is every tool that changes nothing, for read-only agents.
	ProfileRead = "read"
	// ProfileAll is every tool.
	ProfileAll = "all"
)

// Profiles are the profile names Profile accepts, the default first.
var Profiles = []string{ProfileCore, ProfileRead, ProfileAll}

// Tools lists every tool in a stable order: the profile "all". The older
// names Call still runs (context_exists, context_count_lines,
// context_dir_size: context_info answers them) are not listed.
func Tools() []Tool {
	loaded()
	var out []Tool
	for _, e := range registry {
		if e.replacedBy == "" {
			out = append(out, e.Tool)
		}
	}
	return out
}

// Profile lists the tools of a profile ("" is ProfileCore), in Tools'
// order. An unknown name is an error that names the profiles.
func Profile(name string) ([]Tool, error) {
	var keep func(Tool) bool
	switch cmp.Or(name, ProfileCore) {
	case ProfileCore:
		keep = func(t Tool) bool { return t.core }
	case ProfileRead:
		keep = func(t Tool) bool { return t.Annotations.ReadOnly }
	case ProfileAll:
		keep = func(Tool) bool { return true }
	default:
		return nil, fmt.Errorf("unknown tool profile %q; use %s", name, strings.Join(Profiles, ", "))
	}
	var out []Tool
	for _, t := range Tools() {
		if keep(t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Known reports whether Call runs a tool of that name: a tool of any
// profile, or an older name merged into a broader tool.
func Known(name string) bool {
	loaded()
	return byName[name] != nil
}

// Allowed returns those of tools a caller holding these scope names may use:
// those whose every scope it holds ("admin" holds them all). context_add and
// context_refresh need "ingest" beside "write".
func Allowed(tools []Tool, scopes []string) []Tool {
	var out []Tool
	for _, t := range tools {
		if slices.Contains(scopes, "admin") || allIn(t.Scopes, scopes) {
			out = append(out, t)
		}
	}
	return out
}

func allIn(need, have []string) bool {
	for _, s := range need {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

// Formats are the names Export accepts.
var Formats = []string{"mcp", "openai", "anthropic"}

// Export renders tools as a JSON array in a format: "mcp"
// ({name,title,description,inputSchema,annotations}), "openai"
// ({type:"function",function:{name,description,parameters}}) or "anthropic"
// ({name,description,input_schema}), indented for people to read. The
// output is deterministic.
func Export(tools []Tool, format string) ([]byte, error) {
	entries, err := exportEntries(tools, format)
	if err != nil {
		return nil, err
	}
	return marshal(entries, "  ")
}

// exportEntries is each tool in a format, ready to marshal.
func exportEntries(tools []Tool, format string) ([]any, error) {
	out := make([]any, 0, len(tools))
	for _, t := range tools {
		switch format {
		case "mcp":
			out = append(out, mcpTool{t.Name, t.Title, t.Description, t.InputSchema, mcpAnnotations{
				ReadOnlyHint:    t.Annotations.ReadOnly,
				DestructiveHint: t.Annotations.Destructive,
				IdempotentHint:  t.Annotations.Idempotent,
				OpenWorldHint:   t.Annotations.OpenWorld,
			}})
		case "openai":
			out = append(out, openAITool{"function", openAIFunction{t.Name, t.Description, t.InputSchema}})
		case "anthropic":
			out = append(out, anthropicTool{t.Name, t.Description, t.InputSchema})
		default:
			return nil, fmt.Errorf("unknown tool format %q; use %s", format, strings.Join(Formats, ", "))
		}
	}
	return out, nil
}

// marshal encodes v as JSON without escaping <, > and & (a model reads
// them as they are, and an escape costs tokens), indented by indent unless
// it is empty.
func marshal(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

type mcpTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations mcpAnnotations  `json:"annotations"`
}

// mcpAnnotations spells every hint out: MCP's defaults (destructive and
// open-world true) are not what an absent field means here. The title is
// the tool's own, not repeated here.
type mcpAnnotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Call runs the named tool with JSON arguments (an object; empty or null
// means {}). Every failure is a Result with IsError, never a Go error. ctx
// bounds the call; cancelling it stops the RPC.
func Call(ctx context.Context, b Backend, name string, args json.RawMessage) Result {
	loaded()
	e := byName[name]
	if e == nil {
		var names []string
		for _, t := range Tools() {
			names = append(names, t.Name)
		}
		return ErrorResult(&argError{fmt.Sprintf("unknown tool %q", name),
			"Use one of these tools: " + strings.Join(names, ", ") + "."})
	}
	m := map[string]any{}
	if t := bytes.TrimSpace(args); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		var v any
		err := json.Unmarshal(t, &v)
		obj, isObj := v.(map[string]any)
		if err != nil || !isObj {
			if err == nil {
				err = fmt.Errorf("got %s", jsonKind(v))
			}
			return ErrorResult(&argError{fmt.Sprintf("%s arguments must be a JSON object: %v", name, err),
				fmt.Sprintf("Pass the arguments as one JSON object matching %s's input schema: %s.", name, describeArgs(e.resolved.Schema()))})
		}
		m = obj
		for k, v := range m {
			if v == nil { // null is how many callers spell an absent optional argument
				delete(m, k)
			}
		}
	}
	out, err := e.run(ctx, b, m)
	if err != nil {
		return ErrorResult(err)
	}
	text, err := render(out)
	if err != nil {
		return ErrorResult(fmt.Errorf("render %s result: %w", name, err))
	}
	return Result{Text: text}
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// resultJSON renders responses compactly with their proto field names and
// without unset fields.
var resultJSON = protojson.MarshalOptions{UseProtoNames: true}

// render turns a handler's value into the result text.
func render(v any) (string, error) {
	if m, ok := v.(proto.Message); ok {
		b, err := resultJSON.Marshal(m)
		return string(b), err
	}
	b, err := json.Marshal(v)
	return string(b), err
}
