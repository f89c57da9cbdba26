package activities

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// RunGate measures the lane's diff against the base commit with git
// itself: added plus deleted lines of text files, binaries listed but not
// counted, OpenCode's and horizon's own files left out, and a gate script
// the worker edited restored first (so not counted). ChangedLines is what
// the line-ceiling trigger compares with the card's ceiling.
func TestRunGateCountsChangedLinesFromTheDiff(t *testing.T) {
	h := newGitHarness(t)
	h.write(h.repo, ".horizon/verify.sh", "#!/bin/sh\nexit 0\n")
	require.NoError(t, os.Chmod(filepath.Join(h.repo, ".horizon/verify.sh"), 0o755))
	h.write(h.repo, "calc.txt", strings.Repeat("line\n", 10))
	h.write(h.repo, "old.txt", "one\ntwo\n")
	h.git(h.repo, "add", ".")
	h.git(h.repo, "commit", "-q", "-m", "base")
	h.base = h.git(h.repo, "rev-parse", "HEAD")

	tests := []struct {
		name  string
		edit  func(t *testing.T, lane string)
		lines int
		files []string
	}{
		{name: "untouched", edit: func(*testing.T, string) {}},
		{
			name: "edits, a new file and a deletion",
			edit: func(t *testing.T, lane string) {
				// Three lines changed (3 added, 3 deleted), four added, two deleted.
				body := strings.Repeat("line\n", 7) + "changed 1\nchanged 2\nchanged 3\n"
				h.write(lane, "calc.txt", body)
				h.write(lane, "pkg/new.txt", "a\nb\nc\nd\n")
				require.NoError(t, os.Remove(filepath.Join(lane, "old.txt")))
			},
			lines: 6 + 4 + 2,
			files: []string{"calc.txt", "old.txt", "pkg/new.txt"},
		},
		{
			name: "a binary file counts no lines",
			edit: func(t *testing.T, lane string) {
				require.NoError(t, os.WriteFile(filepath.Join(lane, "logo.bin"), []byte{0, 1, 2, 0, 255, 0}, 0o644))
				h.write(lane, "calc.txt", strings.Repeat("line\n", 11))
			},
			lines: 1,
			files: []string{"calc.txt", "logo.bin"},
		},
		{
			name: "horizon's own files and a restored gate script are not the work",
			edit: func(t *testing.T, lane string) {
				h.write(lane, ".opencode/state.json", "{}\n{}\n")
				h.write(lane, ".horizon/runs/x/log.txt", "x\ny\n")
				h.write(lane, ".horizon/verify.sh", "#!/bin/sh\n# the worker made it pass\nexit 0\n")
				h.write(lane, "calc.txt", strings.Repeat("line\n", 9))
			},
			lines: 1,
			files: []string{"calc.txt"},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			feature := fmt.Sprintf("f%d", i+1)
			lane := h.prepareLane(h.laneInput(feature, false))
			tt.edit(t, lane.Path)
			v, err := h.env.ExecuteActivity(h.a.RunGate, GateInput{RunID: testRun, Feature: feature, Attempt: 1, Repo: h.repo, Lane: lane.Path, BaseCommit: h.base, Timeout: time.Minute})
			require.NoError(t, err)
			var g horizon.GateRun
			require.NoError(t, v.Get(&g))
			require.Equal(t, "pass", g.Verdict, g.Tail)
			require.Equal(t, tt.lines, g.ChangedLines)
			require.ElementsMatch(t, tt.files, g.ChangedFiles)
			// The count is git's own, from the snapshot RunGate recorded.
			require.Equal(t, tt.lines, numstatLines(t, h, lane.Path, g.Snapshot))
		})
	}
}

// numstatLines sums `git diff --numstat base snapshot` as a person would.
func numstatLines(t *testing.T, h *gitHarness, lane, snapshot string) int {
	t.Helper()
	n := 0
	for _, l := range strings.Split(h.git(lane, "diff", "--numstat", h.base, snapshot), "\n") {
		var add, del int
		if f := strings.Fields(l); len(f) == 3 && f[0] != "-" {
			_, err := fmt.Sscan(f[0]+" "+f[1], &add, &del)
			require.NoError(t, err)
		}
		n += add + del
	}
	return n
}
