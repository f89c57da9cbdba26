package horizon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOutageLine(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 12, 40, 0, time.UTC)
	tests := []struct {
		name string
		o    Outage
		want string
	}{
		{"with next try", Outage{On: "model provider unreachable", Since: t0, Tries: 14, Next: t0.Add(27 * time.Minute), LastError: "connection refused"},
			"model provider unreachable since 03:12:40 (14 tries, next 03:39:40): connection refused"},
		{"one try, a feature", Outage{On: "OpenCode exited", Feature: "f2", Since: t0, Tries: 1, LastError: "opencode server exited\n  (pid 7)"},
			"OpenCode exited (f2) since 03:12:40 (1 try): opencode server exited (pid 7)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.o.Line())
		})
	}
}
