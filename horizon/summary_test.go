package horizon

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// A summary within MaxSummary characters comes back as it is; a longer
// one is its head, cut on a rune boundary at a line or word end where
// there is one near the limit, and a marker naming the full text's file
// and length, MaxSummary characters at most in all.
func TestBoundSummary(t *testing.T) {
	const full = "runs/run-1/summaries/f1-2-worker-summary.md"
	room := MaxSummary - utf8.RuneCountInString(SummaryMarker(full, 0)) - 3 // a 4-digit length
	words := strings.Repeat("word ", 500)                                   // 2500 characters
	lines := strings.Repeat("a line of the summary\n", 150)                 // 3300 characters
	tests := []struct {
		name string
		s    string
		head string // the kept head; "" with bounded false: s unchanged
		// bounded says the text was cut and marked.
		bounded bool
	}{
		{name: "short", s: "the feature is done"},
		{name: "empty", s: ""},
		{name: "exactly the cap", s: strings.Repeat("a", MaxSummary)},
		{name: "the cap in two-byte runes", s: strings.Repeat("é", MaxSummary)},
		{name: "one over, no spaces", s: strings.Repeat("a", MaxSummary+1), head: strings.Repeat("a", room), bounded: true},
		{name: "two-byte runes at the boundary", s: strings.Repeat("é", MaxSummary+1), head: strings.Repeat("é", room), bounded: true},
		{name: "four-byte runes at the boundary", s: strings.Repeat("😀", 3000), head: strings.Repeat("😀", room), bounded: true},
		{name: "mixed widths at the boundary", s: strings.Repeat("a日😀", 1000), head: string([]rune(strings.Repeat("a日😀", 1000))[:room]), bounded: true},
		{name: "word end", s: words, head: strings.TrimSpace(words[:strings.LastIndex(words[:room+1], " ")]), bounded: true},
		{name: "line end", s: lines, head: strings.TrimSpace(lines[:strings.LastIndex(lines[:room+1], "\n")]), bounded: true},
		{name: "line end before a word end", s: strings.Repeat("x", room-50) + "\n" + strings.Repeat("y ", 1000), head: strings.Repeat("x", room-50), bounded: true},
		{name: "a space just past the cut", s: strings.Repeat("a", room) + " tail" + strings.Repeat("b", 2000), head: strings.Repeat("a", room), bounded: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BoundSummary(tt.s, full)
			require.True(t, utf8.ValidString(got))
			require.LessOrEqual(t, utf8.RuneCountInString(got), MaxSummary)
			if !tt.bounded {
				require.Equal(t, tt.s, got)
				require.True(t, FitsSummary(tt.s))
				return
			}
			require.False(t, FitsSummary(tt.s))
			n := utf8.RuneCountInString(tt.s)
			require.Equal(t, tt.head+SummaryMarker(full, n), got)
			require.True(t, strings.HasPrefix(tt.s, tt.head))
			require.Contains(t, got, "… [full text: "+full+", ")
		})
	}
}

// A path so long the marker fills the cap still gives MaxSummary
// characters at most.
func TestBoundSummaryLongPath(t *testing.T) {
	got := BoundSummary(strings.Repeat("a", 5000), strings.Repeat("p", 3000))
	require.LessOrEqual(t, utf8.RuneCountInString(got), MaxSummary)
	require.True(t, strings.HasPrefix(got, "… [full text: ppp"))
}
