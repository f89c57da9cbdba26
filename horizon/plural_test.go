package horizon

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlural(t *testing.T) {
	require.Equal(t, "0 features", Plural(0, "feature"))
	require.Equal(t, "1 feature", Plural(1, "feature"))
	require.Equal(t, "2 milestones", Plural(2, "milestone"))
	require.Equal(t, "2 criteria", Plural(2, "criterion"))
}

// A noun ending in a consonant and y takes "ies"; a vowel and y, "s".
func TestPluralOfY(t *testing.T) {
	require.Equal(t, "0 entries", Plural(0, "entry"))
	require.Equal(t, "1 entry", Plural(1, "entry"))
	require.Equal(t, "3 days", Plural(3, "day"))
	require.Equal(t, "2 keys", Plural(2, "key"))
	require.Equal(t, "2 ys", Plural(2, "y"))
}
