package horizon

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const sampleRoadmap = `# Roadmap

What we want next, in order.

- [ ] Export reports as CSV {#csv}
  Use the columns of the HTML table.

  - [ ] nested task lines are details
  - [x] even done ones
	a tab-indented line
- [x] Dark mode
  did it by hand
* [ ] Rate-limit the public API.
+ [X] Upper-case X is done too

## Later

` + "```" + `
- [ ] inside a fence: not an item
` + "```" + `
<!--
- [ ] inside a comment: not an item
-->
---
- [ ]   Spaces   are    collapsed   {#  spaced-id }
`

func TestParseRoadmap(t *testing.T) {
	rm, err := ParseRoadmap(".horizon/roadmap.md", sampleRoadmap)
	require.NoError(t, err)
	require.Equal(t, ".horizon/roadmap.md", rm.File)
	require.Equal(t, []RoadmapItem{
		{ID: "csv", Pinned: true, Title: "Export reports as CSV", Line: 5, Details: []string{
			"Use the columns of the HTML table.", "", "- [ ] nested task lines are details", "- [x] even done ones", "  a tab-indented line",
		}},
		{ID: RoadmapItemID("Dark mode"), Title: "Dark mode", Done: true, Line: 11, Details: []string{"did it by hand"}},
		{ID: RoadmapItemID("rate-limit the public api"), Title: "Rate-limit the public API.", Line: 13},
		{ID: RoadmapItemID("Upper-case X is done too"), Title: "Upper-case X is done too", Done: true, Line: 14},
		{ID: "spaced-id", Pinned: true, Title: "Spaces are collapsed", Line: 25},
	}, rm.Items)

	open := rm.Open()
	require.Len(t, open, 3)
	require.Equal(t, []string{"csv", RoadmapItemID("Rate-limit the public API"), "spaced-id"}, []string{open[0].ID, open[1].ID, open[2].ID})
	it, ok := rm.Item("csv")
	require.True(t, ok)
	require.Equal(t, "Export reports as CSV\n\nUse the columns of the HTML table.\n\n- [ ] nested task lines are details\n- [x] even done ones\n  a tab-indented line", it.Goal())
	require.Equal(t, "Spaces are collapsed", rm.Items[4].Goal())
	_, ok = rm.Item("nope")
	require.False(t, ok)
}

func TestParseRoadmapEmptyAndCRLF(t *testing.T) {
	rm, err := ParseRoadmap("r.md", "")
	require.NoError(t, err)
	require.Empty(t, rm.Items)
	require.NotNil(t, rm.Items, "an empty roadmap encodes as [] not null")

	lf, err := ParseRoadmap("r.md", "- [ ] One {#one}\n  detail\n- [ ] Two\n")
	require.NoError(t, err)
	crlf, err := ParseRoadmap("r.md", "\uFEFF- [ ] One {#one}\r\n  detail\r\n- [ ] Two\r\n")
	require.NoError(t, err)
	require.Equal(t, lf, crlf, "CRLF and a byte-order mark read like LF")
	require.Equal(t, []string{"detail"}, crlf.Items[0].Details)
}

func TestRoadmapItemIDNormalises(t *testing.T) {
	id := RoadmapItemID("Add CSV export")
	require.Regexp(t, `^r-[0-9a-f]{8}$`, id)
	for _, same := range []string{"add csv export", "  Add   CSV\texport ", "Add CSV export.", "ADD CSV EXPORT!"} {
		require.Equal(t, id, RoadmapItemID(same), same)
	}
	require.NotEqual(t, id, RoadmapItemID("Add CSV import"))
}

func TestParseRoadmapErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		line int
		want string
	}{
		{"empty checkbox", "- [] goal", 1, `checkbox "[]" is not "[ ]" (to do) or "[x]" (done)`},
		{"wide checkbox", "# R\n- [  ] goal", 2, `checkbox "[  ]"`},
		{"other mark", "- [-] goal", 1, `checkbox "[-]"`},
		{"unclosed checkbox", "- [ goal goes on", 1, `checkbox "[ goa…"`},
		{"no space after marker", "-[ ] x", 1, `write a space between "-" and the checkbox`},
		{"no space after star", "*[x] x", 1, `write a space between "*" and the checkbox`},
		{"no space after checkbox", "- [ ]x", 1, "write a space between the checkbox and the goal"},
		{"no goal", "- [ ]", 1, "the item has no goal"},
		{"only spaces", "- [x]   \t", 1, "the item has no goal"},
		{"only a pin", "- [ ] {#a}", 1, "the item has no goal"},
		{"plain bullet", "- [ ] a\n- note", 2, "must be a roadmap item"},
		{"tab bullet", "-\tnote", 1, "must be a roadmap item"},
		{"numbered item", "1. [ ] goal", 1, "numbered items are not roadmap items"},
		{"numbered note", "2) note", 1, "must be a roadmap item"},
		{"indented task without item", "Intro\n  - [ ] goal", 2, "indented task line with no item above it"},
		{"tab-indented task without item", "\t- [ ] goal", 1, "indented task line with no item above it"},
		{"pin not at the end", "- [ ] goal {#a} more", 1, "{#id} must end its line"},
		{"empty pin", "- [ ] goal {#}", 1, "empty {#id}"},
		{"bad pin", "- [ ] goal {#a b}", 1, `pinned id "a b"`},
		{"pin unusable in a branch", "- [ ] goal {#x..y}", 1, "not usable in a git branch name"},
		{"crlf keeps line numbers", "# R\r\n\r\n- [] goal\r\n", 3, `checkbox "[]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRoadmap(".horizon/roadmap.md", tt.text)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrRoadmapSyntax))
			var re *RoadmapError
			require.True(t, errors.As(err, &re))
			require.Len(t, re.Problems, 1, err.Error())
			require.Equal(t, tt.line, re.Problems[0].Line)
			require.Contains(t, err.Error(), fmt.Sprintf(".horizon/roadmap.md:%d: ", tt.line))
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseRoadmapNotErrors(t *testing.T) {
	// Markdown that merely starts with a list character is prose.
	rm, err := ParseRoadmap("r.md", "**bold** intro\n---\n* * *\n-not a list\n- [ ] a\n1.5 is a number\n")
	require.NoError(t, err)
	require.Len(t, rm.Items, 1)

	// Tabs may separate the marker, the checkbox and the goal.
	rm, err = ParseRoadmap("r.md", "-\t[ ]\tTabbed  goal\t{#tab}\n")
	require.NoError(t, err)
	require.Equal(t, []RoadmapItem{{ID: "tab", Pinned: true, Title: "Tabbed goal", Line: 1}}, rm.Items)
}

func TestParseRoadmapDuplicates(t *testing.T) {
	_, err := ParseRoadmap("r.md", "- [ ] Ship it\n- [ ] Other\n- [x] ship IT.\n")
	require.ErrorContains(t, err, "r.md:3: same goal as line 1")
	require.ErrorContains(t, err, "pin different ids")

	_, err = ParseRoadmap("r.md", "- [ ] One {#x}\n  detail\n- [ ] Two {#x}\n")
	require.ErrorContains(t, err, `r.md:3: id "x" is also the id of line 1: the items at lines 1 and 3 need different ids`)

	// A pin equal to another item's hash is a duplicate too.
	_, err = ParseRoadmap("r.md", fmt.Sprintf("- [ ] One\n- [ ] Two {#%s}\n", RoadmapItemID("One")))
	require.ErrorContains(t, err, "r.md:2: id ")

	// Two pinned items may share a title.
	rm, err := ParseRoadmap("r.md", "- [ ] Same {#a}\n- [ ] Same {#b}\n")
	require.NoError(t, err)
	require.Len(t, rm.Items, 2)
}

func TestParseRoadmapReportsEveryProblem(t *testing.T) {
	_, err := ParseRoadmap("road.md", "- [] a\n- [ ] fine\n-[ ] b\n- [ ] fine\n")
	var re *RoadmapError
	require.ErrorAs(t, err, &re)
	require.Equal(t, []int{1, 3, 4}, []int{re.Problems[0].Line, re.Problems[1].Line, re.Problems[2].Line})
	require.True(t, strings.HasPrefix(err.Error(), "road.md: 3 problems:\n  road.md:1: "), err.Error())
}

// Property: an item's ID depends only on its title (or pin), not on its
// details, its position, its check mark's neighbours or the file's line
// ends; a pinned item keeps its ID when its title changes.
func TestRoadmapIDsStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"add", "csv", "export", "rate", "limit", "api", "dark", "mode", "fix", "login", "cache", "docs"}
	for round := 0; round < 200; round++ {
		type item struct {
			title, pin string
			details    []string
			done       bool
		}
		var items []item
		seen := map[string]bool{}
		for len(items) < 1+rng.IntN(8) {
			var w []string
			for j := 0; j < 2+rng.IntN(3); j++ {
				w = append(w, words[rng.IntN(len(words))])
			}
			it := item{title: strings.Join(w, " "), done: rng.IntN(4) == 0}
			if rng.IntN(3) == 0 {
				it.pin = fmt.Sprintf("p%d", len(items))
			}
			key := normaliseTitle(it.title)
			if it.pin != "" {
				key = it.pin
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			for j := 0; j < rng.IntN(4); j++ {
				it.details = append(it.details, strings.Repeat(" ", 2+rng.IntN(3))+words[rng.IntN(len(words))])
			}
			items = append(items, it)
		}
		render := func(its []item, eol string, retitle bool) string {
			var b strings.Builder
			b.WriteString("# Roadmap" + eol + eol)
			for _, it := range its {
				mark := " "
				if it.done {
					mark = "x"
				}
				title := it.title
				if retitle && it.pin != "" {
					title = "Reworded " + title
				}
				if it.pin != "" {
					title += " {#" + it.pin + "}"
				}
				b.WriteString("- [" + mark + "] " + title + eol)
				for _, d := range it.details {
					b.WriteString(d + eol)
				}
			}
			return b.String()
		}
		ids := func(text string) map[string]string {
			rm, err := ParseRoadmap("r.md", text)
			require.NoError(t, err, text)
			out := map[string]string{}
			for _, it := range rm.Items {
				key := it.Title
				if it.Pinned {
					key = it.ID
				}
				out[key] = it.ID
			}
			return out
		}
		want := ids(render(items, "\n", false))

		// Shuffle, edit details, use CRLF, reword pinned titles.
		moved := append([]item(nil), items...)
		rng.Shuffle(len(moved), func(i, j int) { moved[i], moved[j] = moved[j], moved[i] })
		for i := range moved {
			moved[i].details = append([]string{"  new detail"}, moved[i].details...)
			if rng.IntN(2) == 0 {
				moved[i].details = nil
			}
		}
		got := ids(render(moved, "\r\n", false))
		require.Equal(t, want, got)

		for key, id := range ids(render(moved, "\n", true)) {
			if strings.HasPrefix(key, "p") && !strings.Contains(key, " ") {
				require.Equal(t, key, id, "a pin survives a reworded title")
			}
		}
	}
}
