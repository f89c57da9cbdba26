package advisor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestContentFree(t *testing.T) {
	for _, tc := range []struct {
		note string
		want bool
	}{
		{"LGTM", true},
		{"lgtm!", true},
		{"ＬＧＴＭ", true}, // full width, NFKC
		{"  Looks good.  ", true},
		{"Looks good to me 👍", true},
		{"Continue", true},
		{"keep going...", true},
		{"", true},
		{"Looks good, but Add subtracts", false},
		{"continue the loop at line 4 instead of returning", false},
	} {
		require.Equal(t, tc.want, ContentFree(tc.note), "%q", tc.note)
	}
}

func TestNormalize(t *testing.T) {
	require.Equal(t, "Add returns a - b (line 5)", Normalize("Add  returns\ta - b\n（line 5）"))
	require.Equal(t, key("Add SUBTRACTS!"), key("add subtracts"))
}
