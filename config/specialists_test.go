package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// specialists.trust_project: off by default; the person turns it on in
// their own file or the environment; the repository's own file cannot,
// and the error says where it can be set.
func TestTrustProject(t *testing.T) {
	tests := []struct {
		name     string
		user     string // the user's config.yaml, "" for none
		repoFile string // the repository's .horizon/config.yaml, "" for none
		env      map[string]string
		want     bool
		errs     []string
	}{
		{name: "off by default"},
		{name: "the user's file", user: "specialists:\n  trust_project: true\n", want: true},
		{name: "the environment", env: map[string]string{"HORIZON_SPECIALISTS_TRUST_PROJECT": "true"}, want: true},
		{name: "the repository vouching for itself", repoFile: "specialists:\n  trust_project: true\n",
			errs: []string{".horizon/config.yaml", "specialists.trust_project cannot be set in the repository's own file", "HORIZON_SPECIALISTS_TRUST_PROJECT=true"}},
		{name: "even to say false", user: "specialists:\n  trust_project: true\n", repoFile: "specialists:\n  trust_project: false\n",
			errs: []string{"a repository cannot vouch for itself"}},
		{name: "the user trusts, the repository says other things", user: "specialists:\n  trust_project: true\n", repoFile: "run:\n  max_attempts: 4\n", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			user := "-none-"
			if tt.user != "" {
				user = filepath.Join(t.TempDir(), "config.yaml")
				require.NoError(t, os.WriteFile(user, []byte(tt.user), 0o644))
			}
			repo := ""
			if tt.repoFile != "" {
				repo = t.TempDir()
				require.NoError(t, os.MkdirAll(filepath.Join(repo, ".horizon"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(repo, ".horizon", "config.yaml"), []byte(tt.repoFile), 0o644))
			}
			c, err := Load(Options{UserFile: user, Repo: repo})
			if tt.errs != nil {
				require.Error(t, err)
				for _, w := range tt.errs {
					require.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, c.Specialists.TrustProject)
		})
	}
}
