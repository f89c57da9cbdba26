package specialist

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		want string // "" for a valid name, else part of the error
	}{
		{"api-review", ""},
		{"a1", ""},
		{strings.Repeat("a", MaxNameLen), ""},
		{strings.Repeat("a", 300), "is 300 characters; a name may be 64 at most"},
		{"API-review", "lowercase letters"},
		{"api--review", "lowercase letters"},
		{"-api", "lowercase letters"},
		{"../evil", "lowercase letters"},
		{"", "lowercase letters"},
	}
	for _, tt := range tests {
		err := ValidName(tt.name)
		if tt.want == "" {
			require.NoError(t, err, tt.name)
			continue
		}
		require.ErrorContains(t, err, tt.want, tt.name)
	}
}
