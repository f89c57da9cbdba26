package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckID(t *testing.T) {
	for _, id := range []string{
		"run-20261201-090000-ab12cd", "loop-20261201-090000-ab12cd", "20261201-110000-bbbbbb",
		"supervisor-3f2a", "run-20261201-090000-ab12cd.f1.2", "q1", "plan-20261201:x",
	} {
		require.NoError(t, CheckID("run", id), id)
	}
	for _, id := range []string{
		"", " ", "\t", "../server", "../../../etc/evil", "a/b", `a\b`, "run-1..2", ".hidden", "-rf",
		"run\x1b]0;x\x07", "run\nx", "run x", "run\u202ex", strings.Repeat("a", 201), "r\x00",
	} {
		err := CheckID("run", id)
		var bad *BadIDError
		require.True(t, errors.As(err, &bad), "%q must be refused", id)
		require.NotContains(t, err.Error(), "\x1b", "the message shows the ID visibly")
	}
	require.Contains(t, CheckID("task", "").Error(), "empty task ID")
}
