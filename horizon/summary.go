package horizon

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/horizon/horizon/horizon/textio"
)

// MaxSummary is the most characters (runes, not bytes) a summary a session
// hands back may hold once it leaves its activity: a report's summary, an
// audit finding's or advice note's note, a plan's assumption, a reader's
// diagnosis, an explorer's notes. They are kept in the run's state, so in
// Temporal history, on every status and in the handoff; a longer text is
// kept in full under runs/<run>/summaries/ and bounded by BoundSummary.
const MaxSummary = 2000

// summaryLookback is how far before the cut (in runes) BoundSummary looks
// for a line or word end to cut at instead.
const summaryLookback = 200

// FitsSummary reports whether s holds at most MaxSummary characters.
func FitsSummary(s string) bool {
	return len(s) <= MaxSummary || utf8.RuneCountInString(s) <= MaxSummary
}

// SummaryMarker is what BoundSummary appends to the head it keeps of a
// text of n characters whose full text is at full (a path for people,
// runs/<run>/summaries/<name>.md under the horizon home).
func SummaryMarker(full string, n int) string {
	return fmt.Sprintf("%s [full text: %s, %d characters]", textio.Ellipsis, full, n)
}

// BoundSummary returns s when it fits MaxSummary; otherwise the head of s,
// cut on a rune boundary (at a line end near the limit, else at a word
// end, else mid-word for a text without either), followed by
// SummaryMarker(full, characters of s), the whole at most MaxSummary
// characters. Pure: the caller writes the full text to full first.
func BoundSummary(s, full string) string {
	if FitsSummary(s) {
		return s
	}
	r := []rune(s)
	marker := SummaryMarker(full, len(r))
	room := MaxSummary - utf8.RuneCountInString(marker)
	if room <= 0 {
		// A path nearly as long as the cap: the marker alone, clipped.
		return textio.Runes(marker, MaxSummary)
	}
	head := strings.TrimRightFunc(string(r[:summaryCut(r, room)]), unicode.IsSpace)
	return head + marker
}

// summaryCut is how many runes of r (longer than room) to keep, at most
// room: up to the last line end within summaryLookback of the limit, else
// the last word end there, else room. A rune at r[room] that is a space
// or newline means the first room runes end a word or line already.
func summaryCut(r []rune, room int) int {
	low := max(room-summaryLookback, 1)
	for i := room; i >= low; i-- {
		if r[i] == '\n' {
			return i
		}
	}
	for i := room; i >= low; i-- {
		if unicode.IsSpace(r[i]) {
			return i
		}
	}
	return room
}
