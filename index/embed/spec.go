package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SpecFile is the name of the file in a model directory that describes the
// model (see Spec).
const SpecFile = "ctxd-model.json"

// Pooling strategies a Spec may name.
const (
	// PoolingMean averages the token vectors over the attention mask
	// (sentence-transformers' mean pooling; all-MiniLM-L6-v2).
	PoolingMean = "mean"
	// PoolingCLS takes the vector of the first ([CLS]) token (bge-*).
	PoolingCLS = "cls"
)

// maxSpecTokens bounds Spec.MaxTokens: BERT-family position tables stop at
// 512, and a larger window would make a single batch's memory unreasonable.
const maxSpecTokens = 8192

// Spec describes a model directory: what the ONNX graph outputs and what has
// to be done around it (prefixes, truncation, pooling, normalisation). The
// graph itself outputs token vectors only; pooling and normalisation are done
// in Go from this description.
type Spec struct {
	// ID names the model, e.g. "all-MiniLM-L6-v2". Vectors from different IDs
	// are not comparable.
	ID string `json:"id"`
	// Dimensions is the length of every vector (the hidden size).
	Dimensions int `json:"dimensions"`
	// Pooling is PoolingMean or PoolingCLS.
	Pooling string `json:"pooling"`
	// Normalize makes every vector unit length (L2), so cosine is a dot product.
	Normalize bool `json:"normalize"`
	// MaxTokens is the model window in tokens, [CLS] and [SEP] included.
	// Longer inputs are truncated to it.
	MaxTokens int `json:"max_tokens"`
	// QueryPrefix is prepended to query texts (bge's instruction), may be empty.
	QueryPrefix string `json:"query_prefix"`
	// DocumentPrefix is prepended to document texts, may be empty.
	DocumentPrefix string `json:"document_prefix"`
}

// specFile is the on-disk form: pointers tell a missing field from a zero one.
type specFile struct {
	ID             *string `json:"id"`
	Dimensions     *int    `json:"dimensions"`
	Pooling        *string `json:"pooling"`
	Normalize      *bool   `json:"normalize"`
	MaxTokens      *int    `json:"max_tokens"`
	QueryPrefix    string  `json:"query_prefix"`
	DocumentPrefix string  `json:"document_prefix"`
}

// LoadSpec reads and validates dir/ctxd-model.json. Errors name the file and
// the offending field.
func LoadSpec(dir string) (Spec, error) {
	path := filepath.Join(dir, SpecFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("load model spec: %w", err)
	}
	var f specFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Spec{}, fmt.Errorf("load model spec %s: %w", path, err)
	}
	var s Spec
	var errs []error
	missing := func(field string) { errs = append(errs, fmt.Errorf("%s: missing", field)) }
	if f.ID == nil || *f.ID == "" {
		missing("id")
	} else {
		s.ID = *f.ID
	}
	if f.Dimensions == nil {
		missing("dimensions")
	} else {
		s.Dimensions = *f.Dimensions
	}
	if f.Pooling == nil {
		missing("pooling")
	} else {
		s.Pooling = *f.Pooling
	}
	if f.Normalize == nil {
		missing("normalize")
	} else {
		s.Normalize = *f.Normalize
	}
	if f.MaxTokens == nil {
		missing("max_tokens")
	} else {
		s.MaxTokens = *f.MaxTokens
	}
	s.QueryPrefix, s.DocumentPrefix = f.QueryPrefix, f.DocumentPrefix
	if len(errs) == 0 {
		if err := s.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Spec{}, fmt.Errorf("load model spec %s: %w", path, err)
	}
	return s, nil
}

// Validate checks every field and returns an error naming the first bad one.
func (s Spec) Validate() error {
	switch {
	case s.ID == "":
		return errors.New("id: empty")
	case s.Dimensions <= 0:
		return fmt.Errorf("dimensions: %d, want > 0", s.Dimensions)
	case s.Pooling != PoolingMean && s.Pooling != PoolingCLS:
		return fmt.Errorf("pooling: %q, want %q or %q", s.Pooling, PoolingMean, PoolingCLS)
	case s.MaxTokens < 3 || s.MaxTokens > maxSpecTokens:
		// 3: [CLS], one token, [SEP].
		return fmt.Errorf("max_tokens: %d, want 3..%d", s.MaxTokens, maxSpecTokens)
	}
	return nil
}
