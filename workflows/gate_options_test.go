package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// Each part of a gate (the script, gate.test_command, gate.lint_command)
// has gate.timeout of its own, so the gate activity's start-to-close
// timeout covers them all: a slow test part cannot starve the lint step
// into an activity timeout.
func TestGateOptionsCoverEveryPart(t *testing.T) {
	for _, tc := range []struct {
		cmds horizon.GateCommands
		want time.Duration
	}{
		{horizon.GateCommands{}, 11 * time.Minute},
		{horizon.GateCommands{Test: "go test ./..."}, 21 * time.Minute},
		{horizon.GateCommands{Lint: "go vet ./..."}, 21 * time.Minute},
		{horizon.GateCommands{Test: "go test ./...", Lint: "go vet ./..."}, 31 * time.Minute},
	} {
		l := Limits{GateCommands: tc.cmds}.withDefaults()
		require.Equal(t, tc.want, gateOptions(l, "gate").StartToCloseTimeout, "%+v", tc.cmds)
	}
}
