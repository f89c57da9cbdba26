package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/service"
)

// cliRun runs the whole CLI (config included) and returns what it printed.
func cliRun(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &app{out: &out, errOut: &errOut}
	root := a.rootCmd()
	root.SetArgs(args)
	err = root.Execute()
	if a.logClose != nil {
		_ = a.logClose.Close()
	}
	return out.String(), errOut.String(), err
}

// serviceEnv is a test HOME whose PATH holds only the fake tools given
// (shell scripts using builtins), a fake horizon binary, and a HORIZON_*
// setting the unit must carry.
type serviceEnv struct {
	home, config, horizonHome, bin, analyze string
}

func newServiceEnv(t *testing.T, tools map[string]string) serviceEnv {
	t.Helper()
	analyze, _ := exec.LookPath("systemd-analyze") // before PATH changes
	root := t.TempDir()
	e := serviceEnv{
		home: filepath.Join(root, "home"), config: filepath.Join(root, "xdg"), horizonHome: filepath.Join(root, "hz"),
		bin: filepath.Join(root, "opt", "horizon"), analyze: analyze,
	}
	fake := filepath.Join(root, "fakebin")
	for _, d := range []string{e.home, e.config, e.horizonHome, fake, filepath.Dir(e.bin)} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(e.bin, []byte("#!/bin/sh\n"), 0o755))
	for name, body := range tools {
		require.NoError(t, os.WriteFile(filepath.Join(fake, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	t.Setenv("HOME", e.home)
	t.Setenv("XDG_CONFIG_HOME", e.config)
	t.Setenv("HORIZON_HOME", e.horizonHome)
	t.Setenv("HORIZON_UI_PORT", "8301")
	t.Setenv("PATH", fake)
	return e
}

func (e serviceEnv) unit() string {
	return filepath.Join(e.config, "systemd", "user", "horizon.service")
}

func whoami(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	require.NoError(t, err)
	return u.Username
}

func TestServiceInstallStatusUninstall(t *testing.T) {
	e := newServiceEnv(t, map[string]string{
		"systemctl": `case "$*" in *is-enabled*) echo enabled ;; *is-active*) echo active ;; esac; exit 0`,
		"loginctl":  `echo Linger=no`,
	})
	repo := t.TempDir()
	out, _, err := cliRun(t, "service", "install", "--bin", e.bin, "--repo", repo)
	require.NoError(t, err)
	for _, want := range []string{
		"wrote " + e.unit(),
		"ran  systemctl --user daemon-reload",
		"ran  systemctl --user enable --now horizon.service",
		"lingering is off", "loginctl enable-linger " + whoami(t),
	} {
		require.Contains(t, out, want)
	}
	b, err := os.ReadFile(e.unit())
	require.NoError(t, err)
	unit := string(b)
	require.Contains(t, unit, "\nExecStart="+e.bin+" server\n")
	require.Contains(t, unit, "\nRestart=on-failure\n")
	require.Contains(t, unit, "\nEnvironment=\"HORIZON_UI_PORT=8301\"\n", "the HORIZON_* settings it was installed with")
	require.Contains(t, unit, "\nEnvironment=\"HORIZON_HOME="+e.horizonHome+"\"\n")
	require.Contains(t, unit, "\nEnvironment=\"PATH="+os.Getenv("PATH")+"\"\n", "service.env defaults to PATH")
	if e.analyze == "" {
		t.Log("systemd-analyze not installed: the unit is not verified by systemd")
	} else {
		for _, mode := range [][]string{{"verify"}, {"verify", "--user"}} {
			c := exec.Command(e.analyze, append(mode, e.unit())...)
			c.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir())
			vout, err := c.CombinedOutput()
			require.NoError(t, err, "%s", vout)
			require.Empty(t, strings.TrimSpace(string(vout)), "systemd-analyze %v warned", mode)
		}
	}

	out, _, err = cliRun(t, "service", "status", "--json", "--repo", repo)
	require.NoError(t, err)
	var st service.Status
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.True(t, st.Installed)
	require.Equal(t, e.bin, st.Binary)
	require.Equal(t, "enabled", st.Enabled)
	require.Equal(t, "active", st.Active)
	require.Equal(t, service.LingerNo, st.Linger)
	require.Equal(t, "loginctl enable-linger "+whoami(t), st.LingerCommand)

	out, _, err = cliRun(t, "service", "status", "--repo", repo)
	require.NoError(t, err)
	require.Contains(t, out, "enabled  enabled\nactive   active\n")
	require.Contains(t, out, "linger   no (the service starts at login, not at boot")

	out, _, err = cliRun(t, "service", "uninstall", "--repo", repo)
	require.NoError(t, err)
	require.Contains(t, out, "removed "+e.unit())
	require.Contains(t, out, "ran  systemctl --user disable --now horizon.service")
	require.NoFileExists(t, e.unit())
}

func TestServiceInstallWithoutSystemd(t *testing.T) {
	e := newServiceEnv(t, nil)
	out, _, err := cliRun(t, "service", "install", "--bin", e.bin, "--repo", t.TempDir())
	require.NoError(t, err)
	require.Contains(t, out, "to finish, run:\n  systemctl --user daemon-reload\n  systemctl --user enable --now horizon.service\n")
	require.Contains(t, out, "no user systemd answered")
	require.FileExists(t, e.unit())

	out, _, err = cliRun(t, "service", "status", "--repo", t.TempDir())
	require.NoError(t, err)
	require.Contains(t, out, "manager  not reachable")
}

func TestServiceDryRunWritesNothing(t *testing.T) {
	e := newServiceEnv(t, nil)
	out, _, err := cliRun(t, "service", "install", "--dry-run", "--bin", e.bin, "--repo", t.TempDir())
	require.NoError(t, err)
	require.Contains(t, out, "would write "+e.unit()+" (mode 0600):")
	require.Contains(t, out, "ExecStart="+e.bin+" server")
	require.Contains(t, out, "then run:\n  systemctl --user daemon-reload\n")
	require.NoFileExists(t, e.unit())

	out, _, err = cliRun(t, "service", "install", "--dry-run", "--platform", "launchd", "--bin", e.bin, "--repo", t.TempDir())
	require.NoError(t, err)
	require.Contains(t, out, "would write "+filepath.Join(e.home, "Library", "LaunchAgents", "local.horizon.plist"))
	require.Contains(t, out, "<string>"+e.bin+"</string>")
}

func TestServiceExitCodes(t *testing.T) {
	e := newServiceEnv(t, map[string]string{
		"systemctl": `case "$*" in *enable*) echo "Failed to enable unit: Access denied" >&2; exit 1 ;; esac; exit 0`,
	})
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"service"}, ExitUsage, "install, uninstall or status"},
		{[]string{"service", "restart"}, ExitUsage, `no subcommand "restart"`},
		{[]string{"service", "status", "extra"}, ExitUsage, "takes no arguments"},
		{[]string{"service", "status", "--platform", "upstart"}, ExitUsage, "systemd or launchd"},
		{[]string{"service", "install", "--bin", "relative/none"}, ExitUsage, "--bin relative/none"},
		{[]string{"service", "install", "--bin", e.home}, ExitUsage, "not an executable file"},
		{[]string{"service", "install", "--bin", e.bin}, ExitEnvironment, "Access denied"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := cliRun(t, append(tt.args, "--repo", t.TempDir())...)
			require.Error(t, err)
			require.Equal(t, tt.code, exitCode(err), err.Error())
			require.Contains(t, err.Error(), tt.want)
		})
	}
	t.Setenv("HORIZON_SERVICE_NAME", "bad/name")
	_, _, err := cliRun(t, "service", "status", "--repo", t.TempDir())
	require.Equal(t, ExitUsage, exitCode(err))
	require.ErrorContains(t, err, "HORIZON_SERVICE_NAME")
}
