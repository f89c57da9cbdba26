package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every command that takes an ID refuses an explicit empty or blank one
// (it never means "the newest") and anything that is not an ID, as bad
// usage, before it runs: a script's unset "$RUN" cannot reach another run,
// and "../server" never becomes a path.
func TestIDArgumentsAreIDs(t *testing.T) {
	type command struct {
		name  string
		parse func(args []string) (ran bool, err error)
		extra []string // arguments after the ID
	}
	cmds := []command{
		{"cancel", func(a []string) (bool, error) { o, err := parseCmd(newCancelCmd, a); return o != nil, err }, nil},
		{"status", func(a []string) (bool, error) { o, err := parseCmd(newStatusCmd, a); return o != nil, err }, nil},
		{"approve", func(a []string) (bool, error) { o, err := parseCmd(newApproveCmd, a); return o != nil, err }, nil},
		{"pause", func(a []string) (bool, error) { o, err := parseCmd(newPauseCmd, a); return o != nil, err }, nil},
		{"resume", func(a []string) (bool, error) { o, err := parseCmd(newResumeCmd, a); return o != nil, err }, nil},
		{"history", func(a []string) (bool, error) { o, err := parseCmd(newHistoryCmd, a); return o != nil, err }, nil},
		{"ui", func(a []string) (bool, error) { o, err := parseCmd(newUICmd, a); return o != nil, err }, nil},
		{"unblock", func(a []string) (bool, error) { o, err := parseCmd(newUnblockCmd, a); return o != nil, err }, []string{"--note", "the key is set now"}},
		{"set-ceiling", func(a []string) (bool, error) { o, err := parseCmd(newSetCeilingCmd, a); return o != nil, err }, []string{"5"}},
		{"task output", func(a []string) (bool, error) { o, err := parseCmd(newTaskOutputCmd, a); return o != nil, err }, nil},
		{"task stop", func(a []string) (bool, error) { o, err := parseCmd(newTaskStopCmd, a); return o != nil, err }, nil},
	}
	for _, c := range cmds {
		for _, bad := range []string{"", "  ", "../server", "../../../tmp/evil", "run\x1b]0;owned\x07", "a/b"} {
			t.Run(c.name+"/"+bad, func(t *testing.T) {
				ran, err := c.parse(append([]string{bad}, c.extra...))
				require.Error(t, err)
				require.False(t, ran, "the command ran with %q", bad)
				var ue usageError
				require.True(t, errors.As(err, &ue), "bad usage (exit 2), got %T: %v", err, err)
				require.Equal(t, ExitUsage, exitCode(err))
				require.NotContains(t, err.Error(), "\x1b", "the ID is shown visibly")
			})
		}
		t.Run(c.name+"/an ID", func(t *testing.T) {
			ran, err := c.parse(append([]string{"run-20261201-090000-ab12cd"}, c.extra...))
			require.NoError(t, err)
			require.True(t, ran)
		})
	}
}
