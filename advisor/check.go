package advisor

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/horizon/textio"
)

// Files reads a lane file by its slash-separated path relative to the
// lane; ok is false when there is no such file (or it lies outside).
type Files func(rel string) (content string, ok bool)

// near is how many lines either side of the evidence's line may hold the
// observed fact: models miscount lines by one or two.
const near = 3

// Check is the fact check's finding on one note.
type Check int

// Fact check findings.
const (
	NoEvidence Check = iota // the note names no file to check
	Confirmed               // the observed fact is where the note says
	Refuted                 // the file, the line or the fact is not there
	// Uncertain: the file and line are there, but the fact states
	// nothing the check can find or miss; the note goes as a nit.
	Uncertain
)

// CheckEvidence checks a note's evidence against the lane: the file
// exists, the line exists, and the observed fact's key text is on or near
// that line (anywhere in the file when no line is given). why says what
// was found, for the record.
func CheckEvidence(e *horizon.AdviceEvidence, files Files) (Check, string) {
	if e == nil || strings.TrimSpace(e.File) == "" {
		return NoEvidence, "no evidence names a file"
	}
	rel, err := laneRel(e.File)
	if err != nil {
		return Refuted, err.Error()
	}
	content, ok := files(rel)
	if !ok {
		return Refuted, fmt.Sprintf("%s does not exist in the lane", rel)
	}
	lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
	lo, hi := 0, len(lines)
	where := rel
	if e.Line > 0 {
		if e.Line > len(lines) {
			return Refuted, fmt.Sprintf("%s has %d lines; line %d does not exist", rel, len(lines), e.Line)
		}
		lo, hi = max(e.Line-1-near, 0), min(e.Line+near, len(lines))
		where = fmt.Sprintf("%s:%d", rel, e.Line)
	}
	keys := keyTexts(e.ObservedFact)
	if keys == nil {
		return Uncertain, fmt.Sprintf("the evidence at %s states no checkable fact", where)
	}
	window := squash(strings.Join(lines[lo:hi], "\n"))
	if found(keys, window) {
		return Confirmed, fmt.Sprintf("the observed fact is at %s", where)
	}
	return Refuted, fmt.Sprintf("%s does not show %q", where, textio.Runes(e.ObservedFact, 81))
}

// laneRel cleans an evidence path into one relative to the lane, refusing
// one that leaves it.
func laneRel(file string) (string, error) {
	p := path.Clean(strings.ReplaceAll(strings.TrimSpace(file), "\\", "/"))
	p = strings.TrimPrefix(p, "./")
	if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%s is outside the lane", file)
	}
	return p, nil
}

var quoted = regexp.MustCompile("`([^`]+)`|\"([^\"]+)\"|'([^'\\s][^']*[^'\\s])'")

// keyText is what the fact check looks for: the fact's quoted spans (code
// in backticks or quotes) when it has any, all of which must be found;
// then, for a fact that looks like code (it has operators or brackets),
// the code itself: the whole fact, or else each of its clauses that
// holds code, all of which must be found as they are (whitespace aside);
// otherwise its code-like words, most of which must be. Code is matched
// whole because one operator, identifier or literal is what a wrong fact
// gets wrong: "return a * b" must not be found where "return a + b" is.
type keyText struct {
	spans []string
	// code are the alternatives for a code-like fact: the whole fact
	// (first), or all of the rest.
	code  []string
	words []string
}

// clauses splits a fact at prose punctuation ("calc.go:2" stays whole).
var clauses = regexp.MustCompile(`[:,;]\s+`)

// operators are the characters that make an unquoted fact code.
const operators = "=+-*/%<>!&|^~()[]{};"

func keyTexts(fact string) *keyText {
	fact = Normalize(fact)
	k := &keyText{}
	for _, m := range quoted.FindAllStringSubmatch(fact, -1) {
		for _, g := range m[1:] {
			if s := squash(g); s != "" {
				k.spans = append(k.spans, s)
			}
		}
	}
	if len(k.spans) > 0 {
		return k
	}
	if strings.ContainsAny(fact, operators) {
		k.code = []string{squash(strings.TrimRight(fact, ". "))}
		for _, clause := range clauses.Split(fact, -1) {
			if c := squash(strings.TrimRight(clause, ". ")); strings.ContainsAny(c, operators) && c != k.code[0] {
				k.code = append(k.code, c)
			}
		}
		return k
	}
	for _, w := range strings.FieldsFunc(fact, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '.'
	}) {
		w = strings.Trim(strings.ToLower(w), ".")
		if len([]rune(w)) >= 3 && !stopWords[w] {
			k.words = append(k.words, w)
		}
	}
	if len(k.words) == 0 {
		return nil
	}
	return k
}

func found(k *keyText, window string) bool {
	if len(k.code) > 0 {
		if containsCode(window, k.code[0]) {
			return true
		}
		if len(k.code) == 1 {
			return false
		}
		for _, c := range k.code[1:] {
			if !containsCode(window, c) {
				return false
			}
		}
		return true
	}
	if len(k.spans) > 0 {
		for _, s := range k.spans {
			if !strings.Contains(window, s) {
				return false
			}
		}
		return true
	}
	low := strings.ToLower(window)
	hits := 0
	for _, w := range k.words {
		if strings.Contains(low, w) {
			hits++
		}
	}
	return 2*hits > len(k.words)
}

// containsCode reports code in window as whole tokens: "limit := 10" is
// not in "limit := 100", nor "a + b" in "aa + b".
func containsCode(window, code string) bool {
	word := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	for from := 0; ; {
		i := strings.Index(window[from:], code)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(window[:i])
		after, _ := utf8.DecodeRuneInString(window[i+len(code):])
		first, _ := utf8.DecodeRuneInString(code)
		last, _ := utf8.DecodeLastRuneInString(code)
		if !(word(first) && i > 0 && word(before)) && !(word(last) && i+len(code) < len(window) && word(after)) {
			return true
		}
		from = i + 1
	}
}

// squash collapses runs of white space, so a fact quoted on one line
// matches code that wraps or indents differently.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// stopWords are prose words an observed fact uses about code that the
// code itself does not contain.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and but not for with without that this these those there here
		line lines file files code function method returns return value values calls call called
		uses use used has have had does doing done into from onto its it's are was were will would
		should could can cannot never always which when where then than only also instead still
		because since while after before each every any all some none null nil true false`) {
		stopWords[w] = true
	}
	// "return", "nil", "true" and the like are code too, but in prose they
	// say little; a fact that is only such words is quoted to be checked.
}
