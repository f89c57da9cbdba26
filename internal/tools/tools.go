// Package tools finds the external programs horizon drives (opencode,
// ast-grep) the same way for the daemon, `horizon doctor` and the tests.
package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Tool names and the npm packages that provide them.
const (
	OpenCode = "opencode"
	AstGrep  = "ast-grep"
)

var packages = map[string]string{
	OpenCode: "opencode-ai@1.18.33",
	AstGrep:  "@ast-grep/cli@0.51.1",
	// The applier CLIs, optional; these are the versions horizon's tests
	// drive.
	"claude": "@anthropic-ai/claude-code@2.1.328",
	"codex":  "@openai/codex@0.169.0",
}

// NotFoundError says a tool could not be found, and how to install it.
type NotFoundError struct {
	Name    string
	Setting string
	Looked  []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s not found (looked in: %v); install it with `npm install -g %s` (or `make setup` in the horizon checkout), or set %s to its path",
		e.Name, e.Looked, packages[e.Name], e.Setting)
}

// ErrNotFound matches any NotFoundError.
var ErrNotFound = errors.New("tool not found")

func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Find resolves a tool: the configured path if set; else $PATH; else
// node_modules/.bin beside the running executable (../ too, for a binary in
// bin/), then in the working directory and its parents, which is where
// `npm install` in a horizon checkout puts it.
func Find(name, configured, setting string) (string, error) {
	if configured != "" {
		if isExec(configured) {
			return configured, nil
		}
		return "", &NotFoundError{Name: name, Setting: setting, Looked: []string{configured}}
	}
	looked := []string{"$PATH"}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		d := filepath.Dir(exe)
		dirs = append(dirs, d, filepath.Dir(d))
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			dirs = append(dirs, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, "node_modules", ".bin", name)
		looked = append(looked, p)
		if isExec(p) {
			return p, nil
		}
	}
	return "", &NotFoundError{Name: name, Setting: setting, Looked: looked[:min(len(looked), 4)]}
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
