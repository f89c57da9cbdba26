package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTemporalAdapterKeysAndWith(t *testing.T) {
	var buf bytes.Buffer
	l, c, err := New(Options{Level: "debug", Console: &buf})
	require.NoError(t, err)
	defer c.Close()
	tl := NewTemporal(l).With("RunID", "run-1")
	tl.Info("attempt started", "Attempt", 2, "Error", errors.New("boom"), "dangling")

	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	require.Equal(t, "attempt started", m["message"])
	require.Equal(t, "run-1", m["RunID"])
	require.EqualValues(t, 2, m["Attempt"])
	require.Equal(t, "boom", m["Error"])
	require.Equal(t, "(missing value)", m["dangling"])
	require.Equal(t, "info", m["level"])
}

func TestLevelsPerDestination(t *testing.T) {
	var buf bytes.Buffer
	file := filepath.Join(t.TempDir(), "logs", "horizon.log")
	l, c, err := New(Options{Level: "info", Console: &buf, ConsoleLevel: "warn", File: file})
	require.NoError(t, err)
	l.Debug().Msg("hidden everywhere")
	l.Info().Msg("file only")
	l.Warn().Msg("both")
	require.NoError(t, c.Close())

	require.NotContains(t, buf.String(), "file only")
	require.Contains(t, buf.String(), "both")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(data), "file only")
	require.Contains(t, string(data), "both")
	require.NotContains(t, string(data), "hidden everywhere")
	require.Equal(t, 2, strings.Count(string(data), "\n"))
}
