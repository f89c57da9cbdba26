package advisor

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/horizon/horizon/horizon"
)

// Normalize is the form every note is judged in: NFKC (full-width and
// compatibility characters become their plain forms, so a look-alike
// "ＬＧＴＭ" is "LGTM") with white space collapsed.
func Normalize(s string) string { return squash(norm.NFKC.String(s)) }

// key is a note's identity for the duplicate check: normalised, lower
// case, letters and digits only.
func key(note string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(Normalize(note)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
			b.WriteByte(' ')
		}
	}
	return strings.TrimSpace(b.String())
}

// contentFree are notes that say nothing a worker can act on.
var contentFree = map[string]bool{}

func init() {
	for _, p := range []string{
		"", "lgtm", "looks good", "looks good to me", "looks fine", "all good", "good", "great", "nice",
		"good job", "well done", "ok", "okay", "fine", "continue", "keep going", "carry on", "proceed",
		"go on", "go ahead", "done", "no issues", "no issue", "no issues found", "no problems",
		"nothing to report", "nothing to add", "no comment", "no comments", "n a", "none",
	} {
		contentFree[p] = true
	}
}

// ContentFree reports whether a note says nothing actionable ("LGTM",
// "looks good", "continue"), in any case, width or punctuation.
func ContentFree(note string) bool { return contentFree[key(note)] }

// Seen is a note already given in an earlier review: its key and the
// highest severity it was given at.
type Seen struct {
	Key      string           `json:"key"`
	Severity horizon.Severity `json:"severity"`
}

// rank orders severities: a repeated note is news only when graver.
func rank(s horizon.Severity) int {
	switch s {
	case horizon.SeverityBlocker:
		return 3
	case horizon.SeverityConcern:
		return 2
	case horizon.SeverityNit:
		return 1
	}
	return 0
}

// duplicate reports whether the note was given before at the same or a
// graver severity.
func duplicate(seen []Seen, k string, sev horizon.Severity) bool {
	for _, s := range seen {
		if s.Key == k && rank(s.Severity) >= rank(sev) {
			return true
		}
	}
	return false
}

// remember records a delivered note; the list keeps the latest maxSeen.
func remember(seen []Seen, k string, sev horizon.Severity) []Seen {
	for i := range seen {
		if seen[i].Key == k {
			if rank(sev) > rank(seen[i].Severity) {
				seen[i].Severity = sev
			}
			return seen
		}
	}
	seen = append(seen, Seen{Key: k, Severity: sev})
	if len(seen) > maxSeen {
		seen = seen[len(seen)-maxSeen:]
	}
	return seen
}

// maxSeen bounds the duplicate memory (it travels in heartbeats).
const maxSeen = 64
