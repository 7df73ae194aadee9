package enrich

import (
	"slices"
	"strings"
	"testing"
)

func TestParseQuestions(t *testing.T) {
	long := "Why " + strings.Repeat("really ", 80) + "?"
	for _, tc := range []struct {
		name   string
		answer string
		n      int
		want   []string
	}{
		{"json array", `["What heats water?", "Who pays the invoice?"]`, 3, []string{"What heats water?", "Who pays the invoice?"}},
		{"fenced json after prose", "Here they are:\n```json\n[\n  \"What heats water?\",\n  \"Who pays?\"\n]\n```", 3, []string{"What heats water?", "Who pays?"}},
		{"object holding an array", `{"questions": ["What heats water?"]}`, 3, []string{"What heats water?"}},
		{"array of objects", `[{"question": "What heats water?"}, {"question": ""}]`, 3, []string{"What heats water?"}},
		{"numbered lines", "1. What heats water?\n2) Who pays the invoice?\n(3) When is it due?", 3, []string{"What heats water?", "Who pays the invoice?", "When is it due?"}},
		{"bullets and labels", "- What heats water?\n* **Who pays?**\n• Why now?\nQ4: How much?\nQuestion 5: Where?", 5, []string{"What heats water?", "Who pays?", "Why now?", "How much?", "Where?"}},
		{"lines skip prose", "Sure! Here are some questions:\n1. What heats water?\nHope this helps.", 3, []string{"What heats water?"}},
		{"reasoning block dropped", "<think>Maybe [\"Wrong?\"] or Wrong again?</think>\n[\"What heats water?\"]", 3, []string{"What heats water?"}},
		{"whitespace collapsed, case-insensitive duplicates", "[\"What  heats\\twater?\", \"what heats water?\", \" What heats water? \"]", 3, []string{"What heats water?"}},
		{"at most n", `["A?", "B?", "C?", "D?"]`, 2, []string{"A?", "B?"}},
		{"too long and control characters dropped", `["` + long + `", "Bad\u0007bell?", "Fine?"]`, 3, []string{"Fine?"}},
		{"bracketed text is not json", "1. What is [the] boiler?", 3, []string{"What is [the] boiler?"}},
		{"garbage", "I am sorry, but I cannot help with that.", 3, []string{}},
		{"empty json", "[]", 3, []string{}},
		{"empty", "", 3, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseQuestions(tc.answer, tc.n)
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf("parseQuestions(%q) = %q, want %q", tc.answer, got, tc.want)
			}
		})
	}
}

func FuzzParseQuestions(f *testing.F) {
	f.Add(`["What heats water?"]`, 3)
	f.Add("1. What?\n- Who?", 2)
	f.Add("<think>x</think>{\"q\": [\"Why?\"]}", 1)
	f.Fuzz(func(t *testing.T, answer string, n int) {
		n = n%20 + 1
		if n <= 0 {
			n += 20
		}
		got := parseQuestions(answer, n)
		if len(got) > n {
			t.Fatalf("%d questions, at most %d asked", len(got), n)
		}
		for _, q := range got {
			if q == "" || len(q) > 512 || q != strings.TrimSpace(q) {
				t.Fatalf("bad question %q", q)
			}
		}
	})
}
