package advisor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// lane is a small lane's files for the fact check.
var lane = map[string]string{
	"calc/add.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
	"README.md":   "# calc\n\nAdds numbers.\n",
	"calc/lit.go": "package calc\n\nconst limit := 100\n",
}

func laneFiles(rel string) (string, bool) {
	c, ok := lane[rel]
	return c, ok
}

func ev(file string, line int, fact string) *horizon.AdviceEvidence {
	return &horizon.AdviceEvidence{File: file, Line: line, ObservedFact: fact}
}

func TestCheckEvidence(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    *horizon.AdviceEvidence
		want Check
		why  string
	}{
		{"no evidence", nil, NoEvidence, "no evidence names a file"},
		{"no file", ev("", 3, "`return a - b`"), NoEvidence, "no evidence names a file"},
		{"quoted code on the line", ev("calc/add.go", 5, "Add returns `return a - b`, a subtraction"), Confirmed, "the observed fact is at calc/add.go:5"},
		{"line off by two", ev("calc/add.go", 3, "`a - b`"), Confirmed, "calc/add.go:3"},
		{"whitespace differs", ev("./calc/add.go", 5, "`return   a -\tb`"), Confirmed, ""},
		{"words, no quotes", ev("calc/add.go", 4, "func Add subtracts: a - b"), Confirmed, ""},
		{"no line: anywhere in the file", ev("calc/add.go", 0, "`a - b`"), Confirmed, "the observed fact is at calc/add.go"},
		{"fact not there", ev("calc/add.go", 5, "`return a + b`"), Refuted, `calc/add.go:5 does not show "` + "`return a + b`" + `"`},
		{"fact far from the line", ev("calc/add.go", 1, "`return a - b`"), Refuted, "calc/add.go:1 does not show"},
		{"missing file", ev("calc/sub.go", 2, "`x`"), Refuted, "calc/sub.go does not exist in the lane"},
		{"line past the end", ev("calc/add.go", 40, "`x`"), Refuted, "calc/add.go has 6 lines; line 40 does not exist"},
		{"outside the lane", ev("../etc/passwd", 1, "`root`"), Refuted, "../etc/passwd is outside the lane"},
		{"absolute", ev("/etc/passwd", 1, "`root`"), Refuted, "/etc/passwd is outside the lane"},
		{"a fact with nothing to check", ev("calc/add.go", 5, "it is so?"), Uncertain, "the evidence at calc/add.go:5 states no checkable fact"},
		// Unquoted code is matched as code, whole: one operator, one
		// identifier or one literal away from the line is refuted.
		{"code, as on the line", ev("calc/add.go", 5, "return a - b"), Confirmed, "calc/add.go:5"},
		{"code, one operator off", ev("calc/add.go", 5, "return a * b"), Refuted, `calc/add.go:5 does not show "return a * b"`},
		{"code, one identifier off", ev("calc/add.go", 5, "return a - c"), Refuted, "does not show"},
		{"code, one literal off", ev("calc/lit.go", 2, "limit := 10"), Refuted, "does not show"},
		{"code, the literal as it is", ev("calc/lit.go", 2, "limit := 100"), Confirmed, ""},
		{"code after a prose clause", ev("calc/add.go", 5, "line 5 says: return a * b."), Refuted, "does not show"},
		{"a keyword alone is no fact", ev("calc/add.go", 5, "return"), Uncertain, "states no checkable fact"},
		{"full-width quotes normalised", ev("calc/add.go", 5, "｀return a - b｀"), Confirmed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := CheckEvidence(tc.e, laneFiles)
			require.Equal(t, tc.want, got, why)
			require.Contains(t, why, tc.why)
		})
	}
}
