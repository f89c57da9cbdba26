package codemod

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/internal/child"
)

const (
	// DefaultTimeout bounds Apply when its timeout is zero.
	DefaultTimeout = 5 * time.Minute
	// validateTimeout bounds each ast-grep run of Validate.
	validateTimeout = 30 * time.Second
	// maxScanOutput is the most JSON Apply accepts from one scan; a rule
	// that matches more than this is too broad for T0.
	maxScanOutput = 64 << 20
	// maxMessage bounds an ast-grep message quoted in an error.
	maxMessage = 4 << 10
)

// sandbox is a temporary directory outside the lane holding an empty
// ast-grep project config (passed with -c, so the lane's own sgconfig.yml
// and any above it are ignored) and an empty directory to scan when only
// the rule is being checked.
type sandbox struct {
	dir    string
	config string
	empty  string
}

// newSandbox creates a sandbox that is not inside avoid (the lane): in the
// system temp directory, or beside avoid when TMPDIR points into it.
func newSandbox(avoid string) (*sandbox, error) {
	parent := ""
	if avoid != "" && within(avoid, os.TempDir()) {
		parent = filepath.Dir(avoid)
	}
	dir, err := os.MkdirTemp(parent, "horizon-codemod-")
	if err != nil {
		return nil, fmt.Errorf("codemod: temp dir: %w", err)
	}
	s := &sandbox{dir: dir, config: filepath.Join(dir, "sgconfig.yml"), empty: filepath.Join(dir, "empty")}
	if err := os.WriteFile(s.config, []byte("{}\n"), 0o600); err != nil {
		s.close()
		return nil, fmt.Errorf("codemod: temp config: %w", err)
	}
	if err := os.Mkdir(s.empty, 0o700); err != nil {
		s.close()
		return nil, fmt.Errorf("codemod: temp dir: %w", err)
	}
	return s, nil
}

func (s *sandbox) close() { _ = os.RemoveAll(s.dir) }

// within reports whether p is root or below it (both made absolute and
// cleaned; symlinks are not resolved here).
func within(root, p string) bool {
	root, err1 := filepath.Abs(root)
	p, err2 := filepath.Abs(p)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// astGrep runs bin with args in dir as a capped subprocess that dies with
// the daemon.
func astGrep(ctx context.Context, bin, dir, source string, timeout time.Duration, maxOutput int, args ...string) gate.Result {
	return gate.Run(ctx, gate.Gate{Command: append([]string{bin}, args...), Source: source}, gate.Options{
		Dir:       dir,
		Timeout:   timeout,
		KillGrace: time.Second,
		MaxOutput: maxOutput,
		Start:     child.StartFunc, // dies with the daemon, recorded for reaping
	})
}

// runFailure describes a run that did not complete (timeout, could not
// start, cancelled), or "" when it ran to an exit status.
func runFailure(res gate.Result) string {
	switch res.Verdict {
	case gate.Timeout:
		return "ast-grep " + res.Err
	case gate.Error:
		return res.Err
	}
	return ""
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// cleanMessage turns ast-grep's diagnostic output into a message for an
// error: colour codes removed, INLINE_RULES replaced by where the rule came
// from, blank lines trimmed, bounded in size.
func cleanMessage(out, source string) string {
	out = ansi.ReplaceAllString(out, "")
	out = strings.ReplaceAll(out, "INLINE_RULES", source)
	out = strings.TrimSpace(out)
	if len(out) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + "\n…"
	}
	return out
}
