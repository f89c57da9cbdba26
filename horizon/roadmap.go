package horizon

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// The roadmap is a Markdown file in the repository (supervisor.roadmap,
// default .horizon/roadmap.md) listing what the user wants done, in order.
// The supervisor reads it from the tip of the base branch each time it
// needs it and never writes it, so the user edits it as any other file.
//
//	# Roadmap
//
//	- [ ] Export reports as CSV {#csv}
//	  Use the columns of the HTML table.
//	  - [ ] nested task lines are details too
//	- [x] Dark mode (done by hand: skipped)
//	- [ ] Rate-limit the public API
//
// An item is a task-list line at the start of a line: "- [ ] <goal>" (or
// "* [ ]", "+ [ ]"); "- [x]" marks it done by the user, and it is skipped.
// Indented lines that follow are its details, handed to the lead with the
// goal. Headings, prose and fenced code at the start of a line end an
// item's details and are otherwise ignored.
//
// An item keeps its identity while its details change or it moves: the
// identity is an explicit "{#id}" at the end of its line, else a hash of
// its normalised title (case, spacing and final punctuation do not
// count). Rewording a title without a pin makes it a new item.
//
// Anything that could be a mistaken item is an error naming the file and
// line, never a guess: a list line without a checkbox at the start of a
// line, a malformed checkbox ("- []", "-[ ] x", "- [ ]x"), an item
// without a goal, an indented task line with no item above it, a pinned
// ID unusable in a branch name, and two items with the same identity.

// RoadmapItem is one top-level task of the roadmap.
type RoadmapItem struct {
	// ID is the item's identity: its pin, or RoadmapItemID of its title.
	ID string `json:"id"`
	// Pinned says the ID was written in the file ({#id}).
	Pinned bool `json:"pinned,omitempty"`
	// Title is the goal, on one line, without the pin.
	Title string `json:"title"`
	// Details are the indented lines under the item, de-indented by their
	// common indentation (tabs count as four columns), with blank lines
	// inside kept and blank lines around dropped.
	Details []string `json:"details,omitempty"`
	// Done is "- [x]": the user did it; the supervisor skips it.
	Done bool `json:"done,omitempty"`
	// Line is the item's 1-based line in the file.
	Line int `json:"line"`
}

// Goal is what the lead is asked to decompose: the title, then the
// details.
func (it RoadmapItem) Goal() string {
	if len(it.Details) == 0 {
		return it.Title
	}
	return it.Title + "\n\n" + strings.Join(it.Details, "\n")
}

// Roadmap is a parsed roadmap file: every item in file order, done ones
// included (with Done set).
type Roadmap struct {
	File  string        `json:"file"`
	Items []RoadmapItem `json:"items"`
}

// Open returns the items not done, top to bottom.
func (r Roadmap) Open() []RoadmapItem {
	var out []RoadmapItem
	for _, it := range r.Items {
		if !it.Done {
			out = append(out, it)
		}
	}
	return out
}

// Item returns the item with the given ID.
func (r Roadmap) Item(id string) (RoadmapItem, bool) {
	for _, it := range r.Items {
		if it.ID == id {
			return it, true
		}
	}
	return RoadmapItem{}, false
}

// RoadmapProblem is one syntax problem at a line of the roadmap.
type RoadmapProblem struct {
	Line int    `json:"line"`
	Msg  string `json:"msg"`
}

// RoadmapError lists every problem of a roadmap file, each at its line,
// so the user fixes them in one edit. errors.Is(err, ErrRoadmapSyntax)
// holds.
type RoadmapError struct {
	File     string           `json:"file"`
	Problems []RoadmapProblem `json:"problems"`
}

func (e *RoadmapError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Problems[0].Line, e.Problems[0].Msg)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problems:", e.File, len(e.Problems))
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s:%d: %s", e.File, p.Line, p.Msg)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrRoadmapSyntax) hold.
func (e *RoadmapError) Unwrap() error { return ErrRoadmapSyntax }

// RoadmapItemID is the identity of an unpinned item: "r-" and eight hex
// digits of the SHA-256 of its normalised title (lower case, runs of
// white space as one space, final . : ; ! stripped).
func RoadmapItemID(title string) string {
	sum := sha256.Sum256([]byte(normaliseTitle(title)))
	return "r-" + hex.EncodeToString(sum[:4])
}

func normaliseTitle(t string) string {
	t = strings.ToLower(strings.Join(strings.Fields(t), " "))
	return strings.TrimRight(t, ".:;! ")
}

// ParseRoadmap parses the roadmap text read from file (the name is used
// only in errors). CRLF line ends and a byte-order mark are accepted. On
// any problem it returns a *RoadmapError and no roadmap: the supervisor
// waits for a fix rather than act on a guess.
func ParseRoadmap(file, text string) (Roadmap, error) {
	p := roadmapParser{rm: Roadmap{File: file, Items: []RoadmapItem{}}, ids: map[string]int{}}
	text = strings.TrimPrefix(text, "\uFEFF")
	for i, raw := range strings.Split(text, "\n") {
		p.line(i+1, strings.TrimRight(raw, "\r"))
	}
	p.endItem()
	if len(p.problems) > 0 {
		return Roadmap{}, &RoadmapError{File: file, Problems: p.problems}
	}
	return p.rm, nil
}

type roadmapParser struct {
	rm       Roadmap
	problems []RoadmapProblem
	ids      map[string]int // item ID → line of its first item
	cur      *RoadmapItem   // the item whose details follow, or nil
	details  []string       // its detail lines, raw
	fence    string         // the opening fence of a top-level code block
	comment  bool           // inside a top-level <!-- comment -->
}

func (p *roadmapParser) bad(line int, format string, args ...any) {
	p.problems = append(p.problems, RoadmapProblem{Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (p *roadmapParser) line(n int, s string) {
	switch {
	case p.comment:
		p.comment = !strings.Contains(s, "-->")
		return
	case p.fence != "":
		if strings.HasPrefix(s, p.fence) {
			p.fence = ""
		}
		return
	}
	blank := strings.TrimSpace(s) == ""
	indented := !blank && (s[0] == ' ' || s[0] == '\t')
	if blank || indented {
		if p.cur != nil {
			p.details = append(p.details, s)
			return
		}
		if _, rest, ok := listMarker(strings.TrimLeft(s, " \t")); indented && ok && strings.HasPrefix(rest, "[") {
			p.bad(n, "indented task line with no item above it: a roadmap item starts at the beginning of its line")
		}
		return
	}
	// A line at the start of the line ends the item's details.
	p.endItem()
	switch {
	case strings.HasPrefix(s, "```"), strings.HasPrefix(s, "~~~"):
		p.fence = s[:3]
		return
	case strings.HasPrefix(s, "<!--"):
		p.comment = !strings.Contains(s[4:], "-->")
		return
	}
	marker, rest, ok := listMarker(s)
	if !ok {
		if (s[0] == '-' || s[0] == '*' || s[0] == '+') && strings.HasPrefix(s[1:], "[") {
			p.bad(n, "write a space between %q and the checkbox: \"%c [ ] <goal>\"", s[:1], s[0])
		}
		return // a heading or prose
	}
	if !strings.HasPrefix(rest, "[") {
		p.bad(n, "a list line at the start of a line must be a roadmap item, \"- [ ] <goal>\": add the checkbox, indent the line under an item to make it a detail, or drop the %q for a note", marker)
		return
	}
	if marker != "-" && marker != "*" && marker != "+" {
		p.bad(n, "numbered items are not roadmap items: write \"- [ ] <goal>\"")
		return
	}
	p.item(n, rest)
}

// listMarker splits a list line into its marker ("-", "*", "+" or "1.")
// and what follows the white space after it. Thematic breaks ("---",
// "* * *") and emphasis ("**bold**") are not list lines.
func listMarker(s string) (marker, rest string, ok bool) {
	if s == "" {
		return "", "", false
	}
	i := 0
	switch s[0] {
	case '-', '*', '+':
		if strings.Trim(s, string(s[0])+" \t") == "" {
			return "", "", false // a thematic break
		}
		i = 1
	default:
		for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i == len(s) || (s[i] != '.' && s[i] != ')') {
			return "", "", false
		}
		i++
	}
	if i == len(s) || (s[i] != ' ' && s[i] != '\t') {
		return "", "", false
	}
	return s[:i], strings.TrimLeft(s[i:], " \t"), true
}

// item parses "[ ] goal {#id}" (rest of a task line) at line n.
func (p *roadmapParser) item(n int, rest string) {
	end := strings.IndexByte(rest, ']')
	if end != 2 || (rest[1] != ' ' && rest[1] != 'x' && rest[1] != 'X') {
		box := rest
		if end >= 0 {
			box = rest[:end+1]
		} else if len(box) > 5 {
			box = box[:5] + "…"
		}
		p.bad(n, "checkbox %q is not \"[ ]\" (to do) or \"[x]\" (done)", box)
		return
	}
	title := rest[3:]
	if strings.TrimSpace(title) != "" && title[0] != ' ' && title[0] != '\t' {
		p.bad(n, "write a space between the checkbox and the goal: %q", rest[:3]+" "+title)
		return
	}
	it := RoadmapItem{Done: rest[1] != ' ', Line: n, Title: strings.Join(strings.Fields(title), " ")}
	if i := strings.Index(it.Title, "{#"); i >= 0 {
		if !strings.HasSuffix(it.Title, "}") || strings.Contains(it.Title[i+2:len(it.Title)-1], "}") {
			p.bad(n, "an item's {#id} must end its line")
			return
		}
		it.ID, it.Pinned = strings.TrimSpace(it.Title[i+2:len(it.Title)-1]), true
		it.Title = strings.TrimSpace(it.Title[:i])
		if it.ID == "" {
			p.bad(n, "empty {#id}: write an id such as {#csv-export}, or drop the braces")
			return
		}
		if msg := checkID(it.ID); msg != "" {
			p.bad(n, "pinned id %q: %s", it.ID, msg)
			return
		}
	}
	if it.Title == "" {
		p.bad(n, "the item has no goal: write it after the checkbox")
		return
	}
	if !it.Pinned {
		it.ID = RoadmapItemID(it.Title)
	}
	if prev, dup := p.ids[it.ID]; dup {
		if it.Pinned {
			p.bad(n, "id %q is also the id of line %d: the items at lines %d and %d need different ids", it.ID, prev, prev, n)
		} else {
			p.bad(n, "same goal as line %d (both get id %s): reword one, or pin different ids with {#id}", prev, it.ID)
		}
		return
	}
	p.ids[it.ID] = n
	p.rm.Items = append(p.rm.Items, it)
	p.cur = &p.rm.Items[len(p.rm.Items)-1]
}

// endItem stores the details of the current item.
func (p *roadmapParser) endItem() {
	if p.cur == nil {
		return
	}
	d := p.details
	for len(d) > 0 && strings.TrimSpace(d[0]) == "" {
		d = d[1:]
	}
	for len(d) > 0 && strings.TrimSpace(d[len(d)-1]) == "" {
		d = d[:len(d)-1]
	}
	lead := -1
	for _, s := range d {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if w := indentWidth(s); lead < 0 || w < lead {
			lead = w
		}
	}
	for _, s := range d {
		if strings.TrimSpace(s) == "" {
			p.cur.Details = append(p.cur.Details, "")
			continue
		}
		p.cur.Details = append(p.cur.Details, strings.Repeat(" ", indentWidth(s)-lead)+strings.TrimRight(strings.TrimLeft(s, " \t"), " \t"))
	}
	p.cur, p.details = nil, nil
}

// indentWidth is the leading white space of s in columns, a tab to the
// next multiple of four.
func indentWidth(s string) int {
	w := 0
	for _, r := range s {
		switch r {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return w
		}
	}
	return w
}
