package runes

import "testing"

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"héron", 10, "héron"},
		{"héron", 2, "h"}, // byte 2 is inside é
		{"héron", 3, "hé"},
		{"héron", 0, ""},
		{"日本", 4, "日"},
	} {
		if got := Cut(tc.s, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestEllipsize(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"one too long", 11, "one too lo…"},
		{"ééééé", 3, "éé…"},
		{"x", 1, "x"},
		{"xy", 1, "…"},
		{"x", 0, ""},
	} {
		if got := Ellipsize(tc.s, tc.n); got != tc.want {
			t.Errorf("Ellipsize(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
