package service

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/golden"
)

// tricky carries every character the escaping has to get right.
func tricky(bin string) Spec {
	return Spec{
		Name:   "horizon",
		Binary: bin,
		Args:   []string{"server"},
		Env: []Var{
			{"HORIZON_HOME", "/home/ada/horizon data"},
			{"HORIZON_NOTIFY_COMMAND", `notify-send "horizon" 'run $1' 100% \o/ <&>`},
			{"HORIZON_NOTIFY_WEBHOOK_HEADERS", "X-Title: a\tb"},
			{"HORIZON_RUN_AUTONOMY", "semi"},
			{"MULTI", "line one\nline two"},
			{"PATH", "/usr/local/bin:/usr/bin:/bin"},
		},
		LogDir: "/home/ada/horizon data/logs",
	}
}

func plainSpec() Spec {
	return Spec{
		Name: "horizon", Binary: "/usr/local/bin/horizon", Args: []string{"server"},
		Env: []Var{
			{"HORIZON_HOME", "/home/ada/.local/share/horizon"},
			{"PATH", "/home/ada/.npm-global/bin:/usr/local/bin:/usr/bin:/bin"},
		},
		LogDir: "/home/ada/.local/share/horizon/logs",
	}
}

func TestRenderGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    Platform
		spec Spec
	}{
		{"horizon.service", Systemd, plainSpec()},
		{"tricky.service", Systemd, tricky("/opt/my tools/horizon%1$x")},
		{"local.horizon.plist", Launchd, plainSpec()},
		{"tricky.plist", Launchd, tricky("/opt/my tools/horizon%1$x")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.p, tt.spec)
			require.NoError(t, err)
			golden.Assert(t, tt.name, got)
		})
	}
}

// The escaping decisions, one at a time, so a golden refresh cannot hide a
// regression in them.
func TestSystemdEscaping(t *testing.T) {
	require.Equal(t, "/usr/bin/horizon server", execLine("/usr/bin/horizon", []string{"server"}))
	require.Equal(t, `"/opt/my tools/h%%1$x" server`, execLine("/opt/my tools/h%1$x", []string{"server"}), "the path is not expanded")
	require.Equal(t, `/h "a $$HOME"`, execLine("/h", []string{"a $HOME"}), "arguments are")
	require.Equal(t, `/opt/h%%1 ""`, execLine("/opt/h%1", []string{""}))
	require.Equal(t, `"A=b c"`, quoteEnv("A=b c"))
	require.Equal(t, `"A=100%% \"q\" \\ $x\nz\t"`, quoteEnv("A=100% \"q\" \\ $x\nz\t"), "$ means nothing in Environment=")
}

func TestSpecValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		mod  func(*Spec)
		want string
	}{
		{"relative binary", func(s *Spec) { s.Binary = "horizon" }, "not an absolute path"},
		{"control character", func(s *Spec) { s.Env = append(s.Env, Var{"X", "a\x1bb"}) }, "X's value contains the control character U+001B"},
		{"bad utf-8", func(s *Spec) { s.Env = append(s.Env, Var{"X", "\xff"}) }, "not valid UTF-8"},
		{"bad name", func(s *Spec) { s.Env = append(s.Env, Var{"1X", "a"}) }, `"1X" is not a variable name`},
		{"newline in binary", func(s *Spec) { s.Binary = "/a\nb" }, "control character"},
		{"unit name", func(s *Spec) { s.Name = "a/b" }, "service.name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := plainSpec()
			tt.mod(&s)
			_, err := Render(Systemd, s)
			var se *SpecError
			require.ErrorAs(t, err, &se)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestEnvironment(t *testing.T) {
	environ := []string{
		"HOME=/home/ada", "HORIZON_UI_PORT=8300", "HORIZON_HOME=relative", "HORIZON_EMPTY=",
		"PATH=/usr/bin:/bin", "ANTHROPIC_API_KEY=sk-1", "OTHER=x",
	}
	vars, missing := Environment(environ, []string{"PATH", "ANTHROPIC_API_KEY", "GOPATH"}, "/abs/home")
	require.Equal(t, []Var{
		{"ANTHROPIC_API_KEY", "sk-1"}, {"HORIZON_HOME", "/abs/home"}, {"HORIZON_UI_PORT", "8300"}, {"PATH", "/usr/bin:/bin"},
	}, vars)
	require.Equal(t, []string{"GOPATH"}, missing)
}

// systemd itself parses the unit: no warning, no error.
func TestSystemdAnalyzeVerify(t *testing.T) {
	analyze := requireSystemdAnalyze(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "my tools", "horizon%1$x")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	for name, spec := range map[string]Spec{"plain": plainSpec(), "tricky": tricky(bin)} {
		t.Run(name, func(t *testing.T) {
			if name == "plain" {
				spec.Binary = bin // verify wants an executable that exists
			}
			text, err := Render(Systemd, spec)
			require.NoError(t, err)
			unit := filepath.Join(t.TempDir(), "horizon.service")
			require.NoError(t, os.WriteFile(unit, []byte(text), 0o600))
			verify(t, analyze, unit)
		})
	}
}

func requireSystemdAnalyze(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed (apt-get install systemd)")
	}
	return p
}

// verify runs systemd-analyze in system and user mode and requires silence:
// it exits 0 even on unknown keys and bad quoting, which it only prints.
func verify(t *testing.T, analyze, unit string) {
	t.Helper()
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify warned")

	rt := t.TempDir() // a user manager needs a runtime directory
	c := exec.Command(analyze, "verify", "--user", unit)
	c.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+rt)
	out, err = c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify --user warned")
}

// A plist parser (Python's plistlib, launchd's format) reads back exactly
// what went in.
func TestLaunchdPlistParses(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	spec := tricky("/opt/my tools/horizon<&>")
	text, err := Render(Launchd, spec)
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "local.horizon.plist")
	require.NoError(t, os.WriteFile(f, []byte(text), 0o600))
	out, err := exec.Command(py, "-c", `import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], "rb"))))`, f).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var got struct {
		Label            string
		ProgramArguments []string
		Env              map[string]string `json:"EnvironmentVariables"`
		RunAtLoad        bool
		KeepAlive        map[string]bool
		StandardOutPath  string
	}
	require.NoError(t, json.Unmarshal(out, &got))
	require.Equal(t, "local.horizon", got.Label)
	require.Equal(t, []string{spec.Binary, "server"}, got.ProgramArguments)
	for _, v := range spec.Env {
		require.Equal(t, v.Value, got.Env[v.Name], v.Name)
	}
	require.True(t, got.RunAtLoad)
	require.Equal(t, map[string]bool{"SuccessfulExit": false}, got.KeepAlive, "restarted only after a failure")
	require.Equal(t, "/home/ada/horizon data/logs/launchd.out.log", got.StandardOutPath)
}

// status reads the binary back from what install wrote.
func TestBinaryOf(t *testing.T) {
	for _, p := range []Platform{Systemd, Launchd} {
		for _, bin := range []string{"/usr/bin/horizon", "/opt/my tools/horizon%1$x", `/opt/a"b\c<&>`} {
			text, err := Render(p, tricky(bin))
			require.NoError(t, err)
			require.Equal(t, bin, binaryOf(p, text), "%s %s", p, bin)
		}
	}
}
