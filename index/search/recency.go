package search

import (
	"fmt"
	"math"
	"time"
)

// Recency ages the results of the items it applies to: such an item's score
// is multiplied by Floor + (1 - Floor)·2^(-age/HalfLife), where age runs
// from its CreatedAt to Now (0 for a time in the future). A fresh item keeps
// its score, one HalfLife old is halfway to the floor, and none falls below
// Floor, so an old item that matches clearly better still ranks above a
// fresh weak one. Scores stay in [0, 1]. The zero value is off.
//
// Recency is judged in the rerank window (see Request): an item's time is
// read with its chunks.
type Recency struct {
	// HalfLife is the age at which the decay is half done; 0 turns
	// recency off.
	HalfLife time.Duration
	// Floor is the least factor, in [0, 1].
	Floor float64
	// Applies says which items age, by drive and path; nil means none.
	Applies func(drive, path string) bool
	// Now is the time ages are measured to; zero means when the search runs.
	Now time.Time
}

// ErrRecency marks a Recency with a negative half-life or a floor outside
// [0, 1]; it is an ErrInvalidQuery.
var ErrRecency = fmt.Errorf("%w: recency needs a half-life >= 0 and a floor in [0, 1]", ErrInvalidQuery)

func (r Recency) validate() error {
	if r.HalfLife < 0 || !(r.Floor >= 0 && r.Floor <= 1) { // NaN too
		return fmt.Errorf("%w, not %v and %v", ErrRecency, r.HalfLife, r.Floor)
	}
	return nil
}

func (r Recency) on() bool { return r.HalfLife > 0 && r.Applies != nil }

// factor is what the score of an item at drive and path, created at
// created, is multiplied by; aged says whether r applies to it, and age is
// then its age.
func (r Recency) factor(drive, path string, created time.Time) (f float64, aged bool, age time.Duration) {
	if !r.on() || !r.Applies(drive, path) {
		return 1, false, 0
	}
	age = max(0, r.Now.Sub(created))
	return r.Floor + (1-r.Floor)*math.Exp2(-float64(age)/float64(r.HalfLife)), true, age
}
