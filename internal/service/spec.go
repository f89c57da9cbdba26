// Package service makes horizon's daemon come back after a reboot: a
// systemd user unit on Linux, a launchd agent on macOS.
//
// Rendering is pure (Spec in, file text out, golden-tested); Manager
// writes the file and drives systemctl, loginctl or launchctl, found on
// PATH, and says what it could not do and the command that would.
package service

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Platform is the service manager a unit is written for.
type Platform string

// The supported service managers.
const (
	Systemd Platform = "systemd"
	Launchd Platform = "launchd"
)

// PlatformFor maps GOOS to its service manager.
func PlatformFor(goos string) (Platform, error) {
	switch goos {
	case "linux":
		return Systemd, nil
	case "darwin":
		return Launchd, nil
	}
	return "", fmt.Errorf("%w: %s (horizon writes systemd user units on Linux and launchd agents on macOS)", ErrUnsupported, goos)
}

// ParsePlatform reads a --platform value.
func ParsePlatform(s string) (Platform, error) {
	switch p := Platform(strings.ToLower(s)); p {
	case Systemd, Launchd:
		return p, nil
	}
	return "", &SpecError{Field: "platform", Problem: fmt.Sprintf("%q: use systemd or launchd", s)}
}

// Var is one environment variable written into the unit.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Spec is what a unit says: which binary runs, with which arguments and
// environment.
type Spec struct {
	// Name is service.name: the unit is <Name>.service, the agent
	// local.<Name>.
	Name string
	// Binary is the absolute path of the horizon executable.
	Binary string
	// Args follow the binary (["server"]).
	Args []string
	// Env is written into the unit, sorted by name.
	Env []Var
	// LogDir receives launchd's stdout and stderr files (systemd keeps
	// them in the journal).
	LogDir string
}

// Validate reports the first part of s no unit could carry.
func (s Spec) Validate() error {
	if s.Name == "" || strings.ContainsAny(s.Name, "/ \t\n") {
		return &SpecError{Field: "service.name", Problem: fmt.Sprintf("%q is not a unit name", s.Name)}
	}
	if !filepath.IsAbs(s.Binary) {
		return &SpecError{Field: "binary", Problem: fmt.Sprintf("%q is not an absolute path", s.Binary)}
	}
	for _, a := range append([]string{s.Binary}, s.Args...) {
		if err := checkText(a, false); err != nil {
			return &SpecError{Field: "command line", Problem: fmt.Sprintf("%q %v", a, err)}
		}
	}
	for _, v := range s.Env {
		if !validEnvName(v.Name) {
			return &SpecError{Field: "environment", Problem: fmt.Sprintf("%q is not a variable name", v.Name)}
		}
		if err := checkText(v.Value, true); err != nil {
			return &SpecError{Field: "environment", Problem: fmt.Sprintf("%s's value %v; unset it or leave it out of service.env", v.Name, err)}
		}
	}
	return nil
}

// checkText refuses what neither systemd (control characters other than
// tab and newline in values) nor XML 1.0 can carry.
func checkText(s string, allowTabNewline bool) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("is not valid UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			if allowTabNewline && (r == '\t' || r == '\n') {
				continue
			}
			return fmt.Errorf("contains the control character %U", r)
		}
	}
	return nil
}

func validEnvName(n string) bool {
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		return false
	}
	for _, r := range n {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Environment picks what a unit carries from environ (os.Environ()):
// every non-empty HORIZON_* variable, the variables extra names
// (service.env) that are set, and HORIZON_HOME as home, so the service's
// daemon uses the home this installation resolved. missing lists the extra
// names that are not set.
func Environment(environ, extra []string, home string) (vars []Var, missing []string) {
	set := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			set[k] = v
		}
	}
	pick := map[string]string{}
	for k, v := range set {
		if strings.HasPrefix(k, "HORIZON_") && v != "" {
			pick[k] = v
		}
	}
	for _, k := range extra {
		if v, ok := set[k]; ok {
			pick[k] = v
		} else {
			missing = append(missing, k)
		}
	}
	if home != "" {
		pick["HORIZON_HOME"] = home
	}
	for k, v := range pick {
		vars = append(vars, Var{Name: k, Value: v})
	}
	sort.Slice(vars, func(i, j int) bool { return vars[i].Name < vars[j].Name })
	return vars, missing
}

// Label is the launchd label of service name.
func Label(name string) string { return "local." + name }

// UnitFile is the systemd unit's file name.
func UnitFile(name string) string { return name + ".service" }

// Path is where the unit of platform p and name lives for the current
// user: $XDG_CONFIG_HOME/systemd/user/<name>.service (~/.config when
// unset), or ~/Library/LaunchAgents/local.<name>.plist.
func Path(p Platform, name string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%w: no home directory ($HOME): %w", ErrEnvironment, err)
	}
	// A relative HOME would put the unit under the working directory,
	// where the service manager never looks.
	if !filepath.IsAbs(home) {
		return "", fmt.Errorf("%w: HOME is %q, a relative path; set it to your home directory's absolute path", ErrEnvironment, home)
	}
	switch p {
	case Systemd:
		cfg := os.Getenv("XDG_CONFIG_HOME")
		if cfg == "" || !filepath.IsAbs(cfg) {
			cfg = filepath.Join(home, ".config")
		}
		return filepath.Join(cfg, "systemd", "user", UnitFile(name)), nil
	case Launchd:
		return filepath.Join(home, "Library", "LaunchAgents", Label(name)+".plist"), nil
	}
	return "", fmt.Errorf("%w: platform %q", ErrUnsupported, p)
}

// Render writes the unit text for platform p.
func Render(p Platform, s Spec) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	switch p {
	case Systemd:
		return renderSystemd(s), nil
	case Launchd:
		return renderLaunchd(s), nil
	}
	return "", fmt.Errorf("%w: platform %q", ErrUnsupported, p)
}
