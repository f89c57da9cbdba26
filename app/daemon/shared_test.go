package daemon

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/config"
)

// What the activities write under the data directory lies in a shared
// directory, so a worker that picks up a step (or a resumed task) sees
// what another wrote; CheckShared makes and probes each of them.
func TestSharedDirsHoldWhatWorkersWrite(t *testing.T) {
	data := t.TempDir()
	tests := []struct {
		name string
		path string
	}{
		{"a task's metadata", activities.TaskMetaPath(data, "task-1")},
		{"a task's output stream", activities.TaskOutputPath(data, "task-1")},
		{"the tasks directory", activities.TasksDir(data)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, err := filepath.Rel(data, tt.path)
			require.NoError(t, err)
			top := strings.Split(rel, string(filepath.Separator))[0]
			require.Contains(t, SharedDirs, top, "%s (%s) is under a shared directory", tt.name, rel)
		})
	}

	shared := filepath.Join(t.TempDir(), "shared")
	cfg := &config.Config{Home: t.TempDir(), Worker: config.Worker{SharedDir: shared}}
	require.NoError(t, CheckShared(cfg))
	for _, d := range SharedDirs {
		require.DirExists(t, filepath.Join(shared, d))
	}
	require.DirExists(t, activities.TasksDir(cfg.DataDir()))
}
