package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// `horizon web` listens on 8234 with reads behind the token unless asked
// otherwise; a port it would share with the engine or its UI is refused.
func TestWebSettings(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		port    int
		public  bool
		problem string
	}{
		{name: "defaults", port: 8234},
		{name: "env", env: map[string]string{"HORIZON_WEB_PORT": "9000", "HORIZON_WEB_PUBLIC_READS": "true"}, port: 9000, public: true},
		{name: "not a port", env: map[string]string{"HORIZON_WEB_PORT": "70000"}, problem: "web.port: 70000 is not a TCP port"},
		{name: "the UI's port", env: map[string]string{"HORIZON_WEB_PORT": "8233"}, problem: "web.port: 8233 is also temporal.port or ui.port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			c, err := Load(Options{UserFile: filepath.Join("testdata", "missing.yaml")})
			if tt.problem != "" {
				require.ErrorContains(t, err, tt.problem)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.port, c.Web.Port)
			require.Equal(t, tt.public, c.Web.PublicReads)
		})
	}
}
