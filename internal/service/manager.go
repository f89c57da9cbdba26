package service

import (
	"bytes"
	"context"

	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/horizon/horizon/horizon/textio"
)

// Manager installs, removes and inspects one unit for the current user.
// It finds systemctl, loginctl and launchctl on PATH; without them (or
// without a reachable user manager) it still writes or removes the file
// and says which commands to run.
type Manager struct {
	Platform Platform
	Name     string
	// User and UID are whose unit it is (linger, launchd's gui/<uid>).
	User string
	UID  int
	// LingerDir is where logind records lingering users; empty means
	// /var/lib/systemd/linger.
	LingerDir string
	// Timeout bounds each command; zero means 30 s.
	Timeout time.Duration
}

// Linger says whether the user's services run without a login session
// (after a reboot, before anyone logs in).
type Linger string

// Linger states.
const (
	LingerYes     Linger = "yes"
	LingerNo      Linger = "no"
	LingerUnknown Linger = "unknown"
)

// InstallReport is what an install or uninstall did and what is left to do.
type InstallReport struct {
	Platform Platform `json:"platform"`
	Path     string   `json:"path"`
	// Changed: the file was written (install; false when identical) or
	// removed (uninstall).
	Changed bool `json:"changed"`
	// Reachable: a user service manager answered, so Ran holds the commands
	// run; otherwise Todo holds the ones to run.
	Reachable bool     `json:"reachable"`
	Ran       []string `json:"ran,omitempty"`
	Todo      []string `json:"todo,omitempty"`
	// Linger and LingerCommand (systemd): see Status.
	Linger        Linger   `json:"linger,omitempty"`
	LingerCommand string   `json:"linger_command,omitempty"`
	Notes         []string `json:"notes,omitempty"`
}

// Status is `horizon service status`.
type Status struct {
	Platform  Platform `json:"platform"`
	Path      string   `json:"path"`
	Installed bool     `json:"installed"`
	// Binary is the executable the installed unit starts, and whether it
	// is still there.
	Binary       string `json:"binary,omitempty"`
	BinaryExists bool   `json:"binary_exists"`
	// Enabled and Active are the service manager's words (systemctl
	// is-enabled / is-active; launchd: loaded / running), or "unknown"
	// when it could not be asked.
	Enabled       string `json:"enabled"`
	Active        string `json:"active"`
	Reachable     bool   `json:"reachable"`
	Linger        Linger `json:"linger,omitempty"`
	LingerCommand string `json:"linger_command,omitempty"`
}

// Path is the unit's file.
func (m *Manager) Path() (string, error) { return Path(m.Platform, m.Name) }

// Install writes the unit for spec and, when the user's service manager
// is reachable, loads, enables and starts it.
func (m *Manager) Install(ctx context.Context, spec Spec) (InstallReport, error) {
	text, err := Render(m.Platform, spec)
	if err != nil {
		return InstallReport{}, err
	}
	path, err := m.Path()
	if err != nil {
		return InstallReport{}, err
	}
	r := InstallReport{Platform: m.Platform, Path: path}
	old, err := os.ReadFile(path)
	r.Changed = err != nil || string(old) != text
	if r.Changed {
		if err := writeFile(path, text); err != nil {
			return r, err
		}
	}
	switch m.Platform {
	case Systemd:
		err = m.installSystemd(ctx, &r, len(old) > 0 && r.Changed)
	case Launchd:
		// launchd opens the log files before horizon runs; it does not
		// create their directory.
		if spec.LogDir != "" {
			if err := os.MkdirAll(spec.LogDir, 0o755); err != nil {
				return r, fmt.Errorf("%w: create %s: %w", ErrEnvironment, spec.LogDir, err)
			}
		}
		err = m.installLaunchd(ctx, &r, path)
	}
	return r, err
}

func (m *Manager) installSystemd(ctx context.Context, r *InstallReport, replaced bool) error {
	unit := UnitFile(m.Name)
	steps := [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", unit}}
	r.Reachable = m.systemdReachable(ctx)
	if r.Reachable {
		wasActive := replaced && m.systemctlWord(ctx, "is-active", unit) == "active"
		for _, s := range steps {
			if _, err := m.run(ctx, s...); err != nil {
				return err
			}
			r.Ran = append(r.Ran, strings.Join(s, " "))
		}
		if wasActive {
			r.Notes = append(r.Notes, "the running service keeps its old settings until `systemctl --user restart "+unit+"`")
		}
	} else {
		for _, s := range steps {
			r.Todo = append(r.Todo, strings.Join(s, " "))
		}
		r.Notes = append(r.Notes, "no user systemd answered (systemctl --user); run the commands above in a login session of "+m.User)
	}
	r.Linger, r.LingerCommand = m.linger(ctx)
	return nil
}

func (m *Manager) installLaunchd(ctx context.Context, r *InstallReport, path string) error {
	target := "gui/" + strconv.Itoa(m.UID)
	bootstrap := []string{"launchctl", "bootstrap", target, path}
	if _, err := exec.LookPath("launchctl"); err != nil {
		r.Todo = append(r.Todo, strings.Join(bootstrap, " "))
		r.Notes = append(r.Notes, "launchctl is not on PATH")
		return nil
	}
	r.Reachable = true
	if _, err := m.run(ctx, "launchctl", "print", target+"/"+Label(m.Name)); err == nil {
		// Loaded already: launchd reads the plist at bootstrap only.
		r.Todo = append(r.Todo, "launchctl bootout "+target+"/"+Label(m.Name), strings.Join(bootstrap, " "))
		r.Notes = append(r.Notes, "the agent is loaded; it keeps its old settings until the commands above reload it")
		return nil
	}
	if _, err := m.run(ctx, bootstrap...); err != nil {
		return err
	}
	r.Ran = append(r.Ran, strings.Join(bootstrap, " "))
	return nil
}

// Uninstall stops and disables the unit, then removes its file.
func (m *Manager) Uninstall(ctx context.Context) (InstallReport, error) {
	path, err := m.Path()
	if err != nil {
		return InstallReport{}, err
	}
	r := InstallReport{Platform: m.Platform, Path: path}
	installed := exists(path)
	switch m.Platform {
	case Systemd:
		unit := UnitFile(m.Name)
		r.Reachable = m.systemdReachable(ctx)
		if r.Reachable && installed {
			args := []string{"systemctl", "--user", "disable", "--now", unit}
			if _, err := m.run(ctx, args...); err != nil {
				return r, err
			}
			r.Ran = append(r.Ran, strings.Join(args, " "))
		}
		if installed {
			if err := os.Remove(path); err != nil {
				return r, fmt.Errorf("%w: remove %s: %w", ErrEnvironment, path, err)
			}
			r.Changed = true
		}
		reload := []string{"systemctl", "--user", "daemon-reload"}
		if r.Reachable && installed {
			if _, err := m.run(ctx, reload...); err != nil {
				return r, err
			}
			r.Ran = append(r.Ran, strings.Join(reload, " "))
			// A failed unit's record outlives its file; clear it.
			_, _ = m.run(ctx, "systemctl", "--user", "reset-failed", unit)
		} else if installed {
			r.Todo = append(r.Todo, "systemctl --user disable --now "+unit, strings.Join(reload, " "))
			r.Notes = append(r.Notes, "no user systemd answered: if the service runs, stop it with the commands above in a login session")
		}
	case Launchd:
		target := "gui/" + strconv.Itoa(m.UID) + "/" + Label(m.Name)
		if _, err := exec.LookPath("launchctl"); err == nil {
			r.Reachable = true
			if _, err := m.run(ctx, "launchctl", "print", target); err == nil {
				if _, err := m.run(ctx, "launchctl", "bootout", target); err != nil {
					return r, err
				}
				r.Ran = append(r.Ran, "launchctl bootout "+target)
			}
		} else if installed {
			r.Todo = append(r.Todo, "launchctl bootout "+target)
		}
		if installed {
			if err := os.Remove(path); err != nil {
				return r, fmt.Errorf("%w: remove %s: %w", ErrEnvironment, path, err)
			}
			r.Changed = true
		}
	}
	return r, nil
}

// Status reports the unit's file, the service manager's view and linger.
func (m *Manager) Status(ctx context.Context) (Status, error) {
	path, err := m.Path()
	if err != nil {
		return Status{}, err
	}
	st := Status{Platform: m.Platform, Path: path, Enabled: "unknown", Active: "unknown"}
	if b, err := os.ReadFile(path); err == nil {
		st.Installed = true
		st.Binary = binaryOf(m.Platform, string(b))
		st.BinaryExists = st.Binary != "" && exists(st.Binary)
	}
	switch m.Platform {
	case Systemd:
		unit := UnitFile(m.Name)
		st.Reachable = m.systemdReachable(ctx)
		if st.Reachable {
			st.Enabled = m.systemctlWord(ctx, "is-enabled", unit)
			st.Active = m.systemctlWord(ctx, "is-active", unit)
		}
		st.Linger, st.LingerCommand = m.linger(ctx)
	case Launchd:
		if _, err := exec.LookPath("launchctl"); err == nil {
			st.Reachable = true
			out, err := m.run(ctx, "launchctl", "print", "gui/"+strconv.Itoa(m.UID)+"/"+Label(m.Name))
			if err != nil {
				st.Enabled, st.Active = "not loaded", "inactive"
			} else {
				st.Enabled, st.Active = "loaded", launchdState(out)
			}
		}
	}
	return st, nil
}

// systemdReachable: systemctl is on PATH and the user's manager answers.
func (m *Manager) systemdReachable(ctx context.Context) bool {
	if _, err := exec.LookPath("systemctl"); err != nil {
		return false
	}
	_, err := m.run(ctx, "systemctl", "--user", "show-environment")
	return err == nil
}

// systemctlWord runs a systemctl is-* query, whose answer is its first
// output line whatever the exit status.
func (m *Manager) systemctlWord(ctx context.Context, verb, unit string) string {
	out, _ := m.run(ctx, "systemctl", "--user", verb, unit)
	if w := strings.TrimSpace(firstLine(out)); w != "" {
		return w
	}
	return "unknown"
}

// linger asks logind, then its state directory.
func (m *Manager) linger(ctx context.Context) (Linger, string) {
	cmd := "loginctl enable-linger " + m.User
	if _, err := exec.LookPath("loginctl"); err == nil {
		if out, err := m.run(ctx, "loginctl", "show-user", m.User, "-p", "Linger"); err == nil {
			switch strings.TrimSpace(out) {
			case "Linger=yes":
				return LingerYes, ""
			case "Linger=no":
				return LingerNo, cmd
			}
		}
	}
	dir := m.LingerDir
	if dir == "" {
		dir = "/var/lib/systemd/linger"
	}
	if exists(filepath.Join(dir, m.User)) {
		return LingerYes, ""
	}
	if exists(dir) {
		return LingerNo, cmd
	}
	return LingerUnknown, cmd
}

func (m *Manager) run(ctx context.Context, args ...string) (string, error) {
	t := m.Timeout
	if t <= 0 {
		t = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	var out bytes.Buffer
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		return out.String(), &CommandError{Args: args, Output: out.String(), Err: err}
	}
	return out.String(), nil
}

// binaryOf reads the executable back from an installed unit.
func binaryOf(p Platform, text string) string {
	switch p {
	case Systemd:
		for _, l := range strings.Split(text, "\n") {
			if rest, ok := strings.CutPrefix(l, "ExecStart="); ok {
				return firstWord(rest)
			}
		}
	case Launchd:
		_, after, ok := strings.Cut(text, "<key>ProgramArguments</key>")
		if !ok {
			return ""
		}
		_, after, ok = strings.Cut(after, "<string>")
		if !ok {
			return ""
		}
		v, _, _ := strings.Cut(after, "</string>")
		return unescapeXML(v)
	}
	return ""
}

// firstWord undoes execLine for the first word.
func firstWord(s string) string {
	s = strings.TrimSpace(s)
	var w string
	if strings.HasPrefix(s, `"`) {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			c := s[i]
			if c == '"' {
				break
			}
			if c == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					c = '\n'
				case 't':
					c = '\t'
				default:
					c = s[i]
				}
			}
			b.WriteByte(c)
		}
		w = b.String()
	} else {
		w, _, _ = strings.Cut(s, " ")
	}
	return strings.ReplaceAll(w, "%%", "%")
}

func unescapeXML(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&#x9;", "\t", "&#xA;", "\n", "&#xD;", "\r", "&amp;", "&").Replace(s)
}

func launchdState(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "state = "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// writeFile replaces path atomically, readable by the user only: the
// environment may hold API keys.
func writeFile(path, text string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: create %s: %w", ErrEnvironment, dir, err)
	}
	if err := textio.WriteAtomic(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("%w: %w", ErrEnvironment, err)
	}
	return nil
}
