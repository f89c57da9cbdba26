package ladder

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/horizon/horizon/horizon/textio"
)

// DiffStat is what the triggers need from an attempt's diff.
type DiffStat struct {
	// Files are the paths the diff touches, sorted: both sides of a rename
	// or copy, added and deleted files, binary files, mode changes.
	Files   []string `json:"files"`
	Added   int      `json:"added"`
	Deleted int      `json:"deleted"`
	// Hash is "sha256:<hex>" of the diff without its "index" lines, whose
	// abbreviated blob IDs vary with core.abbrev and repository size while
	// the change itself does not. The empty diff has a hash too.
	Hash string `json:"hash"`
}

// ChangedLines is added plus deleted lines: what a card's LineCeiling
// bounds.
func (d DiffStat) ChangedLines() int { return d.Added + d.Deleted }

// ParseDiff reads the output of `git diff` (unified format, git's default
// a/ and b/ prefixes; binary files, renames, copies, mode changes and
// quoted paths included). It fails on a hunk whose line counts do not match
// its header, which means the diff was cut short; the DiffStat holds what
// was read up to there.
func ParseDiff(diff []byte) (DiffStat, error) {
	var (
		st       DiffStat
		files    []string
		hdr      []string // paths from the "diff --git" line of the current file
		explicit []string // paths from ---/+++ and rename/copy lines
		oldLeft  int
		newLeft  int
		hunkLine int
		err      error
	)
	h := sha256.New()
	endFile := func() {
		if len(explicit) > 0 {
			files = append(files, explicit...)
		} else {
			files = append(files, hdr...)
		}
		hdr, explicit = nil, nil
	}
	lines := bytes.Split(diff, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	for i, raw := range lines {
		line := string(raw)
		if oldLeft > 0 || newLeft > 0 {
			h.Write(raw)
			h.Write([]byte{'\n'})
			switch {
			case strings.HasPrefix(line, "+"):
				st.Added++
				newLeft--
			case strings.HasPrefix(line, "-"):
				st.Deleted++
				oldLeft--
			case strings.HasPrefix(line, "\\"): // "\ No newline at end of file"
			case line == "" || strings.HasPrefix(line, " "): // context (an empty one had its space trimmed)
				oldLeft--
				newLeft--
			default:
				if err == nil {
					err = fmt.Errorf("parse diff: line %d: %q inside the hunk that starts on line %d", i+1, textio.Head(line, 60), hunkLine)
				}
				oldLeft, newLeft = 0, 0
			}
			if (oldLeft < 0 || newLeft < 0) && err == nil {
				err = fmt.Errorf("parse diff: hunk on line %d has more lines than its header says", hunkLine)
				oldLeft, newLeft = 0, 0
			}
			continue
		}
		if strings.HasPrefix(line, "index ") {
			continue // not hashed, see DiffStat.Hash
		}
		h.Write(raw)
		h.Write([]byte{'\n'})
		switch {
		case strings.HasPrefix(line, "diff --git "):
			endFile()
			hdr = headerPaths(line[len("diff --git "):])
		case strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "+++ "):
			if p, ok := sidePath(line[4:], true); ok {
				explicit = append(explicit, p)
			}
		case strings.HasPrefix(line, "rename from "), strings.HasPrefix(line, "copy from "):
			if p, ok := sidePath(line[strings.Index(line, "from ")+5:], false); ok {
				explicit = append(explicit, p)
			}
		case strings.HasPrefix(line, "rename to "), strings.HasPrefix(line, "copy to "):
			if p, ok := sidePath(line[strings.Index(line, "to ")+3:], false); ok {
				explicit = append(explicit, p)
			}
		case strings.HasPrefix(line, "@@ "):
			o, n, ok := hunkCounts(line)
			if !ok {
				if err == nil {
					err = fmt.Errorf("parse diff: line %d: malformed hunk header %q", i+1, textio.Head(line, 60))
				}
				continue
			}
			oldLeft, newLeft, hunkLine = o, n, i+1
		}
	}
	endFile()
	if (oldLeft > 0 || newLeft > 0) && err == nil {
		err = fmt.Errorf("parse diff: hunk on line %d is cut short", hunkLine)
	}
	slices.Sort(files)
	st.Files = slices.Compact(files)
	if st.Files == nil {
		st.Files = []string{}
	}
	st.Hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return st, err
}

// hunkCounts reads "@@ -a[,b] +c[,d] @@ ..." and returns b and d (1 when
// omitted).
func hunkCounts(line string) (oldN, newN int, ok bool) {
	f := strings.Fields(line)
	if len(f) < 4 || f[0] != "@@" || f[3] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, false
	}
	count := func(r string) (int, bool) {
		start, n, found := strings.Cut(r, ",")
		if s, err := strconv.Atoi(start); err != nil || s < 0 {
			return 0, false
		}
		if !found {
			return 1, true
		}
		v, err := strconv.Atoi(n)
		return v, err == nil && v >= 0
	}
	o, ok1 := count(f[1][1:])
	n, ok2 := count(f[2][1:])
	return o, n, ok1 && ok2
}

// sidePath reads a path from a ---/+++ line (prefixed) or a rename/copy
// line (not prefixed): possibly C-quoted, possibly followed by the tab git
// adds after names with spaces. /dev/null is no path.
func sidePath(s string, prefixed bool) (string, bool) {
	s = strings.TrimSuffix(s, "\r")
	if strings.HasPrefix(s, `"`) {
		u, rest, ok := unquoteC(s)
		if !ok || strings.TrimSpace(rest) != "" {
			return "", false
		}
		s = u
	} else {
		s = strings.TrimSuffix(s, "\t")
	}
	if s == "/dev/null" || s == "" {
		return "", false
	}
	if prefixed {
		if len(s) < 2 || (s[:2] != "a/" && s[:2] != "b/") {
			return "", false
		}
		s = s[2:]
	}
	return s, s != ""
}

// headerPaths reads the two paths of a "diff --git a/X b/Y" line. Unquoted
// names with spaces are ambiguous there; for them the symmetric reading
// (X == Y) is tried first, and the ---/+++ or rename lines, when present,
// take precedence anyway.
func headerPaths(s string) []string {
	s = strings.TrimSuffix(s, "\r")
	var sides []string
	for s != "" {
		if s[0] == '"' {
			u, rest, ok := unquoteC(s)
			if !ok {
				return nil
			}
			sides = append(sides, u)
			s = strings.TrimPrefix(rest, " ")
			continue
		}
		if len(sides) == 0 && !strings.Contains(s, `"`) {
			// Both unquoted: "a/X b/X" when the path did not change.
			if n := len(s); n >= 5 && (n-3)%2 == 0 {
				half := (n - 3) / 2
				if s[:2] == "a/" && s[half:half+3] == " b/" && s[2:half] == s[half+3:] {
					return []string{s[2:half]}
				}
			}
			a, b, ok := strings.Cut(s, " b/")
			if !ok || strings.Contains(b, " b/") {
				return nil
			}
			sides = append(sides, a, "b/"+b)
			break
		}
		if i := strings.Index(s, ` "`); i >= 0 {
			sides = append(sides, s[:i])
			s = s[i+1:]
			continue
		}
		sides = append(sides, s)
		break
	}
	var out []string
	for _, p := range sides {
		if len(p) > 2 && (p[:2] == "a/" || p[:2] == "b/") {
			out = append(out, p[2:])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unquoteC reads one C-quoted string (git's quoting of unusual names, with
// octal escapes for non-ASCII bytes) at the start of s and returns it and
// the rest of s.
func unquoteC(s string) (string, string, bool) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			u, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return "", "", false
			}
			return u, s[i+1:], true
		}
	}
	return "", "", false
}
