package openaitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxd/ctxd/index/embed"
)

// Path is where the server answers.
const Path = "/v1/embeddings"

// maxBody bounds a request body read.
const maxBody = 64 << 20

// Fault replaces the answer to one request.
type Fault struct {
	// Status is the status answered; 0 means 200.
	Status int
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Body, when set, is the body answered instead of the vectors.
	Body string
	// Delay is waited before answering (or until the client goes away).
	Delay time.Duration
}

// Request records one request the server received.
type Request struct {
	Inputs int // texts in the request
	Status int // status answered
	// Authorization is the header received.
	Authorization string
}

// Server serves embeddings computed by a Worker.
type Server struct {
	// Model is the model name requests must ask for.
	Model string

	w    embed.Embedder
	addr string

	received atomic.Int64

	mu       sync.Mutex
	srv      *http.Server
	faults   []Fault
	requests []Request
	done     chan struct{}
}

// New starts a server for model on a free loopback port, embedding with w.
// Close stops it.
func New(model string, w embed.Embedder) (*Server, error) {
	s := &Server{Model: model, w: w}
	if err := s.listen("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return s, nil
}

// URL is the base URL clients configure (before /embeddings).
func (s *Server) URL() string { return "http://" + s.addr + "/v1" }

func (s *Server) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+Path, s.serve)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	s.mu.Lock()
	s.addr, s.srv, s.done = ln.Addr().String(), srv, done
	s.mu.Unlock()
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return nil
}

// Inject queues faults, answered to the next requests in order.
func (s *Server) Inject(faults ...Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, faults...)
	s.mu.Unlock()
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Stop closes the listener and every connection: the endpoint is dead
// until Start.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, done := s.srv, s.done
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return
	}
	_ = srv.Close()
	<-done
}

// Start serves again on the address it had.
func (s *Server) Start() error {
	s.mu.Lock()
	running := s.srv != nil
	s.mu.Unlock()
	if running {
		return errors.New("openaitest: already running")
	}
	return s.listen(s.addr)
}

// Close stops the server.
func (s *Server) Close() { s.Stop() }

type request struct {
	Input json.RawMessage `json:"input"`
	Model string          `json:"model"`
}

type datum struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

// Received returns how many requests have arrived, answered or not.
func (s *Server) Received() int64 { return s.received.Load() }

func (s *Server) serve(rw http.ResponseWriter, r *http.Request) {
	s.received.Add(1)
	rec := Request{Authorization: r.Header.Get("Authorization")}
	s.mu.Lock()
	var f *Fault
	if len(s.faults) > 0 {
		f = &s.faults[0]
		s.faults = s.faults[1:]
	}
	s.mu.Unlock()
	status := http.StatusOK
	defer func() {
		rec.Status = status
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
	}()
	var req request
	r.Body = http.MaxBytesReader(rw, r.Body, maxBody)
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		status = http.StatusBadRequest
		writeError(rw, status, "bad request: "+err.Error())
		return
	}
	var texts []string
	if err := json.Unmarshal(req.Input, &texts); err != nil {
		var one string
		if json.Unmarshal(req.Input, &one) != nil {
			status = http.StatusBadRequest
			writeError(rw, status, "input must be a string or an array of strings")
			return
		}
		texts = []string{one}
	}
	rec.Inputs = len(texts)
	if f != nil {
		if f.Delay > 0 {
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
				status = 499
				return
			}
		}
		if f.Status != 0 || f.Body != "" {
			status = max(f.Status, http.StatusOK)
			if f.RetryAfter != "" {
				rw.Header().Set("Retry-After", f.RetryAfter)
			}
			rw.WriteHeader(status)
			_, _ = rw.Write([]byte(f.Body))
			return
		}
	}
	if req.Model != s.Model {
		status = http.StatusNotFound
		writeError(rw, status, fmt.Sprintf("model %q not found", req.Model))
		return
	}
	vecs, err := s.w.EmbedAt(r.Context(), texts, embed.Prompt)
	if err != nil {
		status = http.StatusInternalServerError
		writeError(rw, status, err.Error())
		return
	}
	data := make([]datum, len(vecs))
	// Listed last first: clients must order by index.
	for i, v := range vecs {
		data[len(vecs)-1-i] = datum{Object: "embedding", Index: i, Embedding: v}
	}
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(map[string]any{"object": "list", "model": s.Model, "data": data})
}

func writeError(rw http.ResponseWriter, status int, msg string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(map[string]any{"error": map[string]string{"message": msg}})
}
