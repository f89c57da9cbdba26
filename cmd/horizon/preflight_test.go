package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeOpenCode writes an opencode whose `opencode models` lists models,
// and points horizon at it.
func fakeOpenCode(t *testing.T, models ...string) {
	t.Helper()
	list := filepath.Join(t.TempDir(), "models.txt")
	require.NoError(t, os.WriteFile(list, []byte(strings.Join(models, "\n")+"\n"), 0o644))
	bin := filepath.Join(t.TempDir(), "opencode")
	script := "#!/bin/sh\nif [ \"$1\" = models ]; then cat '" + list + "'; exit 0; fi\necho 0.0.0-test\n"
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	t.Setenv("HORIZON_AGENT_OPENCODE_BIN", bin)
}

// gateRepo is a repository whose committed gate is made by gate (which
// gets the repository's directory).
func gateRepo(t *testing.T, gate func(dir string)) string {
	t.Helper()
	dir := gitRepo(t)
	gate(dir)
	sh(t, dir, "git", "add", "-A")
	sh(t, dir, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "gate")
	return dir
}

func goodGate(dir string) {
	_ = os.MkdirAll(filepath.Join(dir, ".horizon"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, ".horizon", "verify.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
}

// submoduleRepo is a repository with a good gate whose HEAD records a
// submodule at lib that was never initialised here: lanes cannot have it.
func submoduleRepo(t *testing.T) string {
	t.Helper()
	lib := gitRepo(t)
	dir := gateRepo(t, goodGate)
	sh(t, dir, "git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	sh(t, dir, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "add lib")
	require.NoError(t, os.RemoveAll(filepath.Join(dir, ".git", "modules", "lib")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "lib")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "lib"), 0o755)) // as a fresh clone leaves it
	return dir
}

// Everything preflight can know is refused by `horizon start` (also
// --detach) with exit 2 before a run or lane exists, and `horizon doctor`
// fails the same check.
func TestStartRefusesWhatPreflightKnows(t *testing.T) {
	good := gateRepo(t, goodGate)
	noExec := gateRepo(t, func(dir string) {
		goodGate(dir)
		_ = os.Chmod(filepath.Join(dir, ".horizon", "verify.sh"), 0o644)
	})
	dirGate := gateRepo(t, func(dir string) {
		_ = os.MkdirAll(filepath.Join(dir, ".horizon", "verify.sh"), 0o755)
		_ = os.WriteFile(filepath.Join(dir, ".horizon", "verify.sh", "run"), []byte("#!/bin/sh\n"), 0o755)
	})
	noSub := submoduleRepo(t)
	tests := []struct {
		name      string
		repo      string
		models    []string // what OpenCode offers
		env       []string // KEY=VALUE
		args      []string
		check     string // the doctor check that fails
		want      []string
		doctorHas []string
	}{
		{"no model for a role", good, []string{"fake/fake-coder"}, nil, nil, "models",
			[]string{"no model for worker (build) and auditor (analyze)", "--model fake/fake-coder", "opencode auth login"}, []string{"no model for worker (build) and auditor (analyze)"}},
		{"no usable provider", good, nil, nil, nil, "models",
			[]string{"no model for worker (build) and auditor (analyze)", "it reaches none", "opencode auth login"}, []string{"OpenCode reports no models"}},
		{"--model OpenCode lacks", good, []string{"fake/fake-coder"}, nil, []string{"--model", "fake/nope"}, "models",
			[]string{`"fake/nope"`, "fake/fake-coder", "horizon models"}, []string{"fake/nope"}},
		{"models.default OpenCode lacks", good, []string{"fake/fake-coder"}, []string{"HORIZON_MODELS_DEFAULT=fake/nope"}, nil, "models",
			[]string{`"fake/nope"`, "models.default"}, []string{"fake/nope"}},
		{"models.file missing", good, []string{"fake/fake-coder"}, []string{"HORIZON_MODELS_FILE=/nonexistent/models.json"}, nil, "models",
			[]string{"models.file /nonexistent/models.json"}, []string{"/nonexistent/models.json"}},
		{"gate without exec bit", noExec, []string{"fake/fake-coder"}, nil, []string{"--model", "fake/fake-coder"}, "gate",
			[]string{filepath.Join(noExec, ".horizon", "verify.sh"), "lacks the execute bit", "chmod +x"}, []string{filepath.Join(noExec, ".horizon", "verify.sh"), "execute bit"}},
		{"gate is a directory", dirGate, []string{"fake/fake-coder"}, nil, []string{"--model", "fake/fake-coder"}, "gate",
			[]string{filepath.Join(dirGate, ".horizon", "verify.sh"), "is a directory"}, []string{"is a directory"}},
		{"submodule lanes cannot get", noSub, []string{"fake/fake-coder"}, nil, []string{"--model", "fake/fake-coder"}, "submodules",
			[]string{"submodule lib (path lib", "the repository has no copy of it", "git submodule update --init -- lib"},
			[]string{"submodule lib (path lib)", "git submodule update --init -- lib", noSub}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HORIZON_HOME", home)
			t.Setenv("HORIZON_TEMPORAL_ADDRESS", "")
			fakeOpenCode(t, tt.models...)
			for _, kv := range tt.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			for _, detach := range []bool{false, true} {
				args := append([]string{"start", "--repo", tt.repo}, tt.args...)
				if detach {
					args = append(args, "--detach")
				}
				code, out, errOut := runCLI(t, append(args, "do the thing")...)
				require.Equal(t, ExitUsage, code, "detach %v: %s%s", detach, out, errOut)
				for _, w := range tt.want {
					require.Contains(t, errOut, w, "detach %v", detach)
				}
				require.Empty(t, out, "no run ID: no run")
			}
			// Nothing was created: no daemon, no lane, no branch.
			require.NoFileExists(t, filepath.Join(home, "server.pid"))
			require.NoDirExists(t, filepath.Join(home, "lanes"))
			require.Empty(t, sh(t, tt.repo, "git", "branch", "--list", "horizon*"))

			// doctor has no --model: it checks models.default.
			for i, a := range tt.args {
				if a == "--model" {
					t.Setenv("HORIZON_MODELS_DEFAULT", tt.args[i+1])
				}
			}
			code, out, errOut := runCLI(t, "doctor", "--repo", tt.repo, "--json")
			require.Equal(t, ExitUsage, code, out+errOut)
			var checks []check
			require.NoError(t, json.Unmarshal([]byte(out), &checks), out)
			found := false
			for _, c := range checks {
				if c.Name != tt.check {
					continue
				}
				found = true
				require.False(t, c.OK, "%+v", c)
				for _, w := range tt.doctorHas {
					require.Contains(t, c.Detail+" "+c.Fix, w)
				}
				require.NotEmpty(t, c.Fix, "a failed check says what to do")
			}
			require.True(t, found, "no %s check in %s", tt.check, out)
		})
	}
}

// With a model OpenCode offers and a runnable gate, doctor's gate and
// models checks pass and name the choice.
func TestDoctorModelsAndGateOK(t *testing.T) {
	repo := gateRepo(t, goodGate)
	t.Setenv("HORIZON_TEMPORAL_ADDRESS", "")
	fakeOpenCode(t, "fake/fake-coder", "anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-1")
	for _, tt := range []struct {
		name, model, want string
	}{
		{"leaderboard", "", "worker anthropic/claude-sonnet-4-5, auditor anthropic/claude-opus-4-1 (3 available)"},
		{"forced", "fake/fake-coder", "worker fake/fake-coder, auditor fake/fake-coder (3 available)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HORIZON_MODELS_DEFAULT", tt.model)
			_, out, _ := runCLI(t, "doctor", "--repo", repo, "--json")
			var checks []check
			require.NoError(t, json.Unmarshal([]byte(out), &checks), out)
			got := map[string]check{}
			for _, c := range checks {
				got[c.Name] = c
			}
			require.True(t, got["gate"].OK, "%+v", got["gate"])
			require.Equal(t, ".horizon/verify.sh", got["gate"].Detail)
			require.True(t, got["models"].OK, "%+v", got["models"])
			require.Equal(t, tt.want, got["models"].Detail)
		})
	}
}

// A repository that commits .horizon/roadmap.md (or specialists) but no
// gate script is judged by its detected command: doctor says so, naming
// no temporary copy, as start and supervisor start decide (one
// DiscoverGate on the commit's tree).
func TestDoctorGateWithOnlyGateDirectoryFiles(t *testing.T) {
	t.Setenv("HORIZON_TEMPORAL_ADDRESS", "")
	fakeOpenCode(t, "fake/fake-coder")
	for name, files := range map[string][]string{
		"roadmap":     {".horizon/roadmap.md"},
		"specialists": {".horizon/specialists/reviewer.md"},
	} {
		t.Run(name, func(t *testing.T) {
			repo := gateRepo(t, func(dir string) {
				_ = os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644)
				for _, f := range files {
					_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
					_ = os.WriteFile(filepath.Join(dir, f), []byte("- [ ] a\n"), 0o644)
				}
			})
			_, out, errOut := runCLI(t, "doctor", "--repo", repo, "--json")
			var checks []check
			require.NoError(t, json.Unmarshal([]byte(out), &checks), out+errOut)
			for _, c := range checks {
				if c.Name == "gate" {
					require.True(t, c.OK, "%+v", c)
					require.Equal(t, "detected: go test ./...", c.Detail)
					return
				}
			}
			t.Fatalf("no gate check in %s", out)
		})
	}
}
