package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeEnv is a test HOME and a PATH holding only the fake tools given,
// each a shell script that appends its arguments to calls.log and then
// runs its body (shell builtins only: nothing else is on PATH).
type fakeEnv struct {
	home, config, bin, log string
}

func newFakeEnv(t *testing.T, tools map[string]string) *fakeEnv {
	t.Helper()
	root := t.TempDir()
	f := &fakeEnv{
		home: filepath.Join(root, "home"), config: filepath.Join(root, "xdg"),
		bin: filepath.Join(root, "bin"), log: filepath.Join(root, "calls.log"),
	}
	for _, d := range []string{f.home, f.config, f.bin} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for name, body := range tools {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> '" + f.log + "'\n" + body + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(f.bin, name), []byte(script), 0o755))
	}
	t.Setenv("HOME", f.home)
	t.Setenv("XDG_CONFIG_HOME", f.config)
	t.Setenv("PATH", f.bin)
	return f
}

func (f *fakeEnv) calls(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(f.log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// A user systemd that answers, with a unit that is enabled and running.
const fakeSystemctl = `case "$*" in
  *show-environment*) echo PATH=/usr/bin ;;
  *is-enabled*) echo enabled ;;
  *is-active*) echo active ;;
esac
exit 0`

func specIn(t *testing.T, dir string) Spec {
	t.Helper()
	bin := filepath.Join(dir, "horizon")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	s := plainSpec()
	s.Binary = bin
	return s
}

func manager(p Platform, lingerDir string) *Manager {
	return &Manager{Platform: p, Name: "horizon", User: "ada", UID: 1000, LingerDir: lingerDir}
}

func TestInstallWithoutSystemctl(t *testing.T) {
	f := newFakeEnv(t, nil)
	linger := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(linger, "ada"), nil, 0o644))
	m := manager(Systemd, linger)
	spec := specIn(t, t.TempDir())

	r, err := m.Install(context.Background(), spec)
	require.NoError(t, err)
	path := filepath.Join(f.config, "systemd", "user", "horizon.service")
	require.Equal(t, path, r.Path, "XDG_CONFIG_HOME is honoured")
	require.True(t, r.Changed)
	require.False(t, r.Reachable)
	require.Empty(t, r.Ran)
	require.Equal(t, []string{"systemctl --user daemon-reload", "systemctl --user enable --now horizon.service"}, r.Todo)
	require.Equal(t, LingerYes, r.Linger, "from the linger directory when loginctl is absent")
	require.Empty(t, r.LingerCommand)

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	want, err := Render(Systemd, spec)
	require.NoError(t, err)
	require.Equal(t, want, string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "it may hold API keys")
	if analyze := systemdAnalyzeOutsidePATH(t); analyze != "" {
		verify(t, analyze, path)
	}

	again, err := m.Install(context.Background(), spec)
	require.NoError(t, err)
	require.False(t, again.Changed, "an identical unit is not rewritten")

	status, err := m.Status(context.Background())
	require.NoError(t, err)
	require.True(t, status.Installed)
	require.Equal(t, spec.Binary, status.Binary)
	require.True(t, status.BinaryExists)
	require.Equal(t, "unknown", status.Enabled)
	require.Equal(t, "unknown", status.Active)

	u, err := m.Uninstall(context.Background())
	require.NoError(t, err)
	require.True(t, u.Changed)
	require.NoFileExists(t, path)
	require.Equal(t, []string{"systemctl --user disable --now horizon.service", "systemctl --user daemon-reload"}, u.Todo)
}

// systemd-analyze lives outside the fake PATH: look in the usual places.
func systemdAnalyzeOutsidePATH(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/systemd-analyze", "/bin/systemd-analyze"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Log("systemd-analyze not installed: the unit is not verified by systemd")
	return ""
}

func TestInstallWithUserSystemd(t *testing.T) {
	f := newFakeEnv(t, map[string]string{"systemctl": fakeSystemctl, "loginctl": `echo Linger=no`})
	m := manager(Systemd, t.TempDir())
	spec := specIn(t, t.TempDir())

	r, err := m.Install(context.Background(), spec)
	require.NoError(t, err)
	require.True(t, r.Reachable)
	require.Equal(t, []string{"systemctl --user daemon-reload", "systemctl --user enable --now horizon.service"}, r.Ran)
	require.Empty(t, r.Todo)
	require.Equal(t, LingerNo, r.Linger)
	require.Equal(t, "loginctl enable-linger ada", r.LingerCommand)
	require.Equal(t, []string{
		"systemctl --user show-environment",
		"systemctl --user daemon-reload",
		"systemctl --user enable --now horizon.service",
		"loginctl show-user ada -p Linger",
	}, f.calls(t))

	st, err := m.Status(context.Background())
	require.NoError(t, err)
	require.Equal(t, Status{
		Platform: Systemd, Path: r.Path, Installed: true, Binary: spec.Binary, BinaryExists: true,
		Enabled: "enabled", Active: "active", Reachable: true, Linger: LingerNo, LingerCommand: "loginctl enable-linger ada",
	}, st)

	// Reinstalling a running service with new settings says how to apply them.
	spec.Env = append(spec.Env, Var{"HORIZON_UI_PORT", "8300"})
	r, err = m.Install(context.Background(), spec)
	require.NoError(t, err)
	require.True(t, r.Changed)
	require.Contains(t, strings.Join(r.Notes, "\n"), "systemctl --user restart horizon.service")
}

func TestUninstallDisablesFirst(t *testing.T) {
	// The fake records whether the unit file still existed when disable ran.
	f := newFakeEnv(t, map[string]string{"systemctl": `case "$*" in
  *disable*) test -e "$XDG_CONFIG_HOME/systemd/user/horizon.service" && echo "file present at disable" >> "$XDG_CONFIG_HOME/order" ;;
esac
exit 0`})
	m := manager(Systemd, t.TempDir())
	_, err := m.Install(context.Background(), specIn(t, t.TempDir()))
	require.NoError(t, err)

	r, err := m.Uninstall(context.Background())
	require.NoError(t, err)
	require.True(t, r.Changed)
	require.NoFileExists(t, r.Path)
	require.Equal(t, []string{"systemctl --user disable --now horizon.service", "systemctl --user daemon-reload"}, r.Ran)
	order, err := os.ReadFile(filepath.Join(f.config, "order"))
	require.NoError(t, err)
	require.Equal(t, "file present at disable\n", string(order))
	require.Contains(t, f.calls(t), "systemctl --user reset-failed horizon.service")

	r, err = m.Uninstall(context.Background())
	require.NoError(t, err)
	require.False(t, r.Changed, "nothing to remove the second time")
}

func TestSystemdUnreachable(t *testing.T) {
	newFakeEnv(t, map[string]string{"systemctl": `echo "Failed to connect to bus: No medium found" >&2; exit 1`})
	m := manager(Systemd, filepath.Join(t.TempDir(), "absent"))
	r, err := m.Install(context.Background(), specIn(t, t.TempDir()))
	require.NoError(t, err)
	require.False(t, r.Reachable)
	require.Len(t, r.Todo, 2)
	require.Equal(t, LingerUnknown, r.Linger)
	require.Equal(t, "loginctl enable-linger ada", r.LingerCommand)
	require.FileExists(t, r.Path)
}

func TestSystemctlFailureIsReported(t *testing.T) {
	newFakeEnv(t, map[string]string{"systemctl": `case "$*" in
  *enable*) echo "Failed to enable unit: Access denied" >&2; exit 1 ;;
esac
exit 0`})
	m := manager(Systemd, t.TempDir())
	_, err := m.Install(context.Background(), specIn(t, t.TempDir()))
	var ce *CommandError
	require.ErrorAs(t, err, &ce)
	require.ErrorContains(t, err, "`systemctl --user enable --now horizon.service` failed")
	require.ErrorContains(t, err, "Access denied")
}

func TestLaunchdInstall(t *testing.T) {
	f := newFakeEnv(t, map[string]string{"launchctl": `case "$1" in
  print) read -r s < "$HOME/loaded" 2>/dev/null; test "$s" = yes || exit 113
    printf '%s\n' "gui/1000/local.horizon = {" "	state = running" "}" ;;
  bootstrap) echo yes > "$HOME/loaded" ;;
  bootout) echo no > "$HOME/loaded" ;;
esac
exit 0`})
	m := manager(Launchd, "")
	spec := specIn(t, t.TempDir())
	spec.LogDir = filepath.Join(t.TempDir(), "logs")

	r, err := m.Install(context.Background(), spec)
	require.NoError(t, err)
	path := filepath.Join(f.home, "Library", "LaunchAgents", "local.horizon.plist")
	require.Equal(t, path, r.Path)
	require.Equal(t, []string{"launchctl bootstrap gui/1000 " + path}, r.Ran)
	require.DirExists(t, spec.LogDir, "launchd does not create the log directory")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	want, err := Render(Launchd, spec)
	require.NoError(t, err)
	require.Equal(t, want, string(b))

	st, err := m.Status(context.Background())
	require.NoError(t, err)
	require.True(t, st.Installed)
	require.Equal(t, "loaded", st.Enabled)
	require.Equal(t, "running", st.Active)
	require.Equal(t, spec.Binary, st.Binary)

	u, err := m.Uninstall(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"launchctl bootout gui/1000/local.horizon"}, u.Ran)
	require.NoFileExists(t, path)
	st, err = m.Status(context.Background())
	require.NoError(t, err)
	require.False(t, st.Installed)
	require.Equal(t, "not loaded", st.Enabled)
}

func TestPlatformFor(t *testing.T) {
	p, err := PlatformFor("linux")
	require.NoError(t, err)
	require.Equal(t, Systemd, p)
	p, err = PlatformFor("darwin")
	require.NoError(t, err)
	require.Equal(t, Launchd, p)
	_, err = PlatformFor("windows")
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, "windows")
	_, err = ParsePlatform("upstart")
	require.ErrorContains(t, err, "systemd or launchd")
}
