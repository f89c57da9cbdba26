package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The engine's database, its PostgreSQL DSN, temporal.listen and
// worker.shared_dir: defaults, accepted values and the errors that name
// the key and what to do.
func TestEngineAndClusterKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		err  string
		ok   func(t *testing.T, c *Config)
	}{
		{name: "defaults", ok: func(t *testing.T, c *Config) {
			require.Equal(t, "sqlite", c.Engine.Database)
			require.Equal(t, 20, c.Engine.Postgres.MaxConns)
			require.Equal(t, "", c.Temporal.Listen)
			require.Equal(t, c.Home, c.DataDir())
		}},
		{name: "postgres", env: map[string]string{"HORIZON_ENGINE_DATABASE": "Postgres", "HORIZON_ENGINE_POSTGRES_DSN": "postgres://u@db/t"}, ok: func(t *testing.T, c *Config) {
			require.Equal(t, "postgres", c.Engine.Database)
			require.Equal(t, "postgres://u@db/t", c.Engine.Postgres.DSN)
		}},
		{name: "postgres without a DSN", env: map[string]string{"HORIZON_ENGINE_DATABASE": "postgres"}, err: "engine.postgres.dsn: must be set"},
		{name: "unknown database", env: map[string]string{"HORIZON_ENGINE_DATABASE": "mysql"}, err: `engine.database: "mysql"`},
		{name: "no connections", env: map[string]string{"HORIZON_ENGINE_POSTGRES_MAX_CONNS": "0"}, err: "engine.postgres.max_conns"},
		{name: "listen everywhere", env: map[string]string{"HORIZON_TEMPORAL_LISTEN": "0.0.0.0"}, ok: func(t *testing.T, c *Config) {
			require.Equal(t, "0.0.0.0", c.Temporal.Listen)
		}},
		{name: "listen on a name", env: map[string]string{"HORIZON_TEMPORAL_LISTEN": "myhost"}, err: "temporal.listen"},
		{name: "shared dir", env: map[string]string{"HORIZON_WORKER_SHARED_DIR": "rel/shared"}, ok: func(t *testing.T, c *Config) {
			require.True(t, filepath.IsAbs(c.Worker.SharedDir), c.Worker.SharedDir)
			require.Equal(t, c.Worker.SharedDir, c.DataDir())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := Load(Options{UserFile: filepath.Join("testdata", "missing.yaml")})
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			tc.ok(t, c)
		})
	}
}
