package config

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func unsetenv(t *testing.T, k string) {
	t.Helper()
	if err := os.Unsetenv(k); err != nil {
		t.Fatal(err)
	}
}

// A HORIZON_* variable that names no setting is reported with the nearest
// one; settings and the variables other parts read are not.
func TestUnknownEnv(t *testing.T) {
	tests := []struct {
		env  string
		want []UnknownVar
	}{
		{"HORIZON_TEMPORALPORT=7234", []UnknownVar{{Name: "HORIZON_TEMPORALPORT", Nearest: "HORIZON_TEMPORAL_PORT", Key: "temporal.port"}}},
		{"HORIZON_MODEL_DEFAULT=a/b", []UnknownVar{{Name: "HORIZON_MODEL_DEFAULT", Nearest: "HORIZON_MODELS_DEFAULT", Key: "models.default"}}},
		{"HORIZON_RUN_MAXATTEMPTS=2", []UnknownVar{{Name: "HORIZON_RUN_MAXATTEMPTS", Nearest: "HORIZON_RUN_MAX_ATTEMPTS", Key: "run.max_attempts"}}},
		{"HORIZON_OPENCODEBIN=/x", []UnknownVar{{Name: "HORIZON_OPENCODEBIN", Nearest: "HORIZON_OPENCODE_BIN"}}},
		{"HORIZON_TEMPORAL_PORT=7234", nil},
		{"HORIZON_HOME=/h", nil},
		{"HORIZON_OPENCODE_BIN=/x", nil},
		{"HORIZON_RECORD_HISTORY=1", nil},
		{"HORIZONS=1", nil},
		{"PATH=/bin", nil},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			require.Equal(t, tt.want, UnknownEnv([]string{tt.env}))
		})
	}
	u := UnknownEnv([]string{"HORIZON_TEMPORALPORT=1"})[0]
	require.Equal(t, "HORIZON_TEMPORALPORT is not a horizon setting and is ignored; did you mean HORIZON_TEMPORAL_PORT (temporal.port)?", u.String())
	require.Len(t, UnknownEnv([]string{"HORIZON_B=1", "HORIZON_A=1"}), 2)
	require.Equal(t, "HORIZON_A", UnknownEnv([]string{"HORIZON_B=1", "HORIZON_A=1"})[0].Name, "sorted")
}
