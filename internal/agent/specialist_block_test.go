package agent

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The lead's horizon-specialist block: the last one counts, a longer fence
// keeps the prompt's own fences inside, and a reply without one (or with
// an empty or oversized one) is a protocol error naming the block.
func TestParseSpecialist(t *testing.T) {
	manifest := "---\nname: sh-lint\ntools: [read-only]\n---\n\nLint.\n\n```sh\necho \"$1\"\n```"
	for _, tc := range []struct {
		name, text, want, err string
	}{
		{"one block", "Here it is.\n\n```horizon-specialist\n---\nname: a\n---\nA\n```\n", "---\nname: a\n---\nA\n", ""},
		{"a longer fence around fences", "````horizon-specialist\n" + manifest + "\n````", manifest + "\n", ""},
		{"the last block counts", "```horizon-specialist\n---\nname: old\n---\nO\n```\nbetter:\n```horizon-specialist\n---\nname: new\n---\nN\n```", "---\nname: new\n---\nN\n", ""},
		{"no block", "I would call it sh-lint.", "", "no ```horizon-specialist block"},
		{"another kind", "```horizon-plan\n{}\n```", "", "no ```horizon-specialist block"},
		{"empty", "```horizon-specialist\n\n```", "", "empty horizon-specialist block"},
		{"oversized", "```horizon-specialist\n" + strings.Repeat("x", MaxSpecialistDraft+1) + "\n```", "", "a manifest may have 65536 at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSpecialist(tc.text)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrProtocol)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
