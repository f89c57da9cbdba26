package horizon

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlural(t *testing.T) {
	require.Equal(t, "0 features", Plural(0, "feature"))
	require.Equal(t, "1 feature", Plural(1, "feature"))
	require.Equal(t, "2 milestones", Plural(2, "milestone"))
}
