package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// readmeBlock is the first ```sh block after heading in the README: the
// commands a person copies, as written.
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	root, err := moduleRoot()
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	text := string(b)
	i := strings.Index(text, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "README has no %q", heading)
	text = text[i:]
	start := strings.Index(text, "```sh\n")
	require.GreaterOrEqual(t, start, 0, "no sh block under %q", heading)
	text = text[start+len("```sh\n"):]
	end := strings.Index(text, "\n```")
	require.GreaterOrEqual(t, end, 0)
	return strings.Split(text[:end], "\n")
}

// "Leaving it running" as the README writes it, on a repository whose only
// horizon file is .horizon/roadmap.md (its gate is the detected go test):
// every command of the block runs in the repository, as a person would
// paste it, with `horizon` on PATH, and the supervisor starts.
func TestLeavingItRunningAsWritten(t *testing.T) {
	needsE2E(t)
	w := plannedWorld(t, &fakemodel.Script{}, "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo := filepath.Join(t.TempDir(), "app")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".horizon"), 0o755))
	for name, body := range map[string]string{
		"go.mod":              "module example.com/app\n\ngo 1.22\n",
		"export.go":           "// Package app exports reports.\npackage app\n\n// Export is the report as CSV.\nfunc Export() string { return \"a,b\\n\" }\n",
		"export_test.go":      "package app\n\nimport \"testing\"\n\nfunc TestExport(t *testing.T) {\n\tif Export() == \"\" {\n\t\tt.Fatal(\"empty\")\n\t}\n}\n",
		".horizon/roadmap.md": "# Roadmap\n- [ ] Parse ISO dates in the report command\n  Accept 2026-12-01 and 2026-12-01T09:00Z; reject the rest with a message.\n- [ ] Add CSV export {#csv}\n- [x] Already done by hand\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644))
	}
	git(t, filepath.Dir(repo), "init", "-q", "-b", "main", repo)
	git(t, repo, "add", "-A")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "app")

	// `horizon` on PATH, as the README's set-up leaves it.
	bin := t.TempDir()
	require.NoError(t, os.Symlink(horizonBin, filepath.Join(bin, "horizon")))
	env := append(append([]string{}, w.env...), "PATH="+bin+":"+os.Getenv("PATH"))
	t.Cleanup(func() {
		cmd := exec.Command(horizonBin, "supervisor", "stop", "--repo", repo)
		cmd.Env = env
		_ = cmd.Run()
	})

	ran := 0
	for _, line := range readmeBlock(t, "### The supervisor, the roadmap and the queue") {
		command, _, _ := strings.Cut(line, "#") // the comment a person does not type
		command = strings.TrimSpace(command)
		if command == "" || strings.HasPrefix(command, "cd ") {
			continue // the block's cd names the person's checkout: here it is repo
		}
		cmd := exec.Command("sh", "-c", command)
		cmd.Dir, cmd.Env = repo, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Run(), "%s\n%s", command, out.String())
		t.Logf("$ %s\n%s", command, out.String())
		switch {
		case strings.HasPrefix(command, "horizon supervisor start"):
			require.Contains(t, out.String(), "day ceiling: $20.00 per UTC day")
			require.Contains(t, out.String(), "status     running")
		case strings.HasPrefix(command, "horizon queue add"):
			require.Contains(t, out.String(), "q1")
		case strings.HasPrefix(command, "horizon roadmap"):
			require.Contains(t, out.String(), "Parse ISO dates in the report command")
			require.Contains(t, out.String(), "Add CSV export")
		case strings.HasPrefix(command, "horizon supervisor status"):
			require.Contains(t, out.String(), "supervisor "+"supervisor-")
			require.Contains(t, out.String(), "running")
		}
		ran++
	}
	require.Equal(t, 4, ran, "the block's four horizon commands")
}
