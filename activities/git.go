package activities

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/horizon/horizon/internal/child"
)

// git runs one git command in dir, as a child that dies with the daemon
// (internal/child) and returns its trimmed stdout. Errors
// name the command and carry git's own message.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := child.Run(cmd); err != nil {
		return "", fmt.Errorf("git %s (in %s): %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// gitEnv keeps git non-interactive and gives commits an identity when the
// user has none configured (horizon's commits are still attributable
// through their Horizon-Run trailer).
func gitEnv() []string {
	env := append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true")
	if os.Getenv("GIT_AUTHOR_NAME") == "" && !hasGitIdentity() {
		env = append(env,
			"GIT_AUTHOR_NAME=horizon", "GIT_AUTHOR_EMAIL=horizon@localhost",
			"GIT_COMMITTER_NAME=horizon", "GIT_COMMITTER_EMAIL=horizon@localhost")
	}
	return env
}

// hasGitIdentity asks git once per configuration environment: every git
// command of a lane or a commit would otherwise start a second process to
// ask it again, doubling what a feature's git steps cost. A person who
// sets user.email while the daemon runs gets it in commits after the
// daemon's restart; until then horizon's identity stands in.
func hasGitIdentity() bool {
	key := strings.Join([]string{os.Getenv("HOME"), os.Getenv("XDG_CONFIG_HOME"), os.Getenv("GIT_CONFIG_GLOBAL"), os.Getenv("GIT_CONFIG_SYSTEM"), os.Getenv("GIT_CONFIG_NOSYSTEM")}, "\x00")
	identity.mu.Lock()
	defer identity.mu.Unlock()
	if has, ok := identity.known[key]; ok {
		return has
	}
	var out bytes.Buffer
	cmd := exec.Command("git", "config", "--get", "user.email")
	cmd.Stdout = &out
	has := child.Run(cmd) == nil && len(bytes.TrimSpace(out.Bytes())) > 0
	if identity.known == nil {
		identity.known = map[string]bool{}
	}
	identity.known[key] = has
	return has
}

// identity is what hasGitIdentity learnt, by configuration environment.
var identity struct {
	mu    sync.Mutex
	known map[string]bool
}

// gitOK runs a git command whose exit status is the answer.
func gitOK(ctx context.Context, dir string, args ...string) bool {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	return child.Run(cmd) == nil
}
