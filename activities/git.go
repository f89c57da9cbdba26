package activities

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

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

func hasGitIdentity() bool {
	var out bytes.Buffer
	cmd := exec.Command("git", "config", "--get", "user.email")
	cmd.Stdout = &out
	return child.Run(cmd) == nil && len(bytes.TrimSpace(out.Bytes())) > 0
}

// gitOK runs a git command whose exit status is the answer.
func gitOK(ctx context.Context, dir string, args ...string) bool {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	return child.Run(cmd) == nil
}
