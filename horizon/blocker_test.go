package horizon

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewBlocker(t *testing.T) {
	tests := []struct {
		typ      BlockerType
		evidence string
		want     BlockerType // canonical type; "" when refused
		is       error
	}{
		{typ: "missing_credential", evidence: "STRIPE_KEY unset", want: BlockerMissingCredential},
		{typ: "Missing-Credentials", evidence: "OPENAI_API_KEY is empty in the lane env", want: BlockerMissingCredential},
		{typ: "service unavailable", evidence: "api.example.com:443 connection refused", want: BlockerUnavailableService},
		{typ: "framework_limit", evidence: "sqlite driver has no JSONB operator ->>", want: BlockerPlatformLimit},
		{typ: "structural_limit", evidence: "the module is vendored read-only under third_party/", want: BlockerPlatformLimit},
		{typ: "permission_denied", evidence: "bash: git push denied by permission config", want: BlockerPermissionDenied},
		{typ: "canceled", evidence: "user pressed Ctrl-C at 09:12 (SIGINT)", want: BlockerCancelled},
		{typ: "merge conflict", evidence: "main does not merge into horizon/roadmap (conflict in a.go)", want: BlockerMergeConflict},
		{typ: "external-service", evidence: "registry.npmjs.org answers 503 Service Unavailable", want: BlockerUnavailableService},
		{typ: "framework", evidence: "the ORM has no way to express a lateral join", want: BlockerPlatformLimit},
		{typ: "needs_decision", evidence: "question: which database should the cache use?", want: BlockerNeedsDecision},
		{typ: "tests_failing", evidence: "TestAdd fails with 2 != 3 in calc_test.go:9", is: ErrUnknownBlockerType},
		{typ: "", evidence: "a perfectly good explanation", is: ErrUnknownBlockerType},
		{typ: "no_usable_tier", evidence: "no tier is available for this card", is: ErrUnknownBlockerType},
		{typ: "platform_limit", evidence: "", is: ErrVagueEvidence},
		{typ: "platform_limit", evidence: "   blocked  ", is: ErrVagueEvidence},
		{typ: "platform_limit", evidence: "too short", is: ErrVagueEvidence},
		{typ: "platform_limit", evidence: "Cannot proceed.", is: ErrVagueEvidence},
		{typ: "platform_limit", evidence: "it does not work!", is: ErrVagueEvidence},
		{typ: "platform_limit", evidence: "platform limit", is: ErrVagueEvidence},
		{typ: "missing_credential", evidence: "missing_credential", is: ErrVagueEvidence},
		{typ: "missing_credential", evidence: "??? !!! ... ---", is: ErrVagueEvidence},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ)+"/"+tt.evidence, func(t *testing.T) {
			b, err := NewBlocker(tt.typ, tt.evidence)
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
				require.Equal(t, Blocker{}, b)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, b.Type)
			require.Equal(t, strings.TrimSpace(tt.evidence), b.Evidence)
		})
	}
}

func TestNewBlockerClipsEvidence(t *testing.T) {
	b, err := NewBlocker("platform_limit", strings.Repeat("é", MaxBlockerEvidence))
	require.NoError(t, err)
	require.LessOrEqual(t, len(b.Evidence), MaxBlockerEvidence+len("…"))
	require.True(t, strings.HasSuffix(b.Evidence, "é…"))
}

func TestClassifyReportBlocker(t *testing.T) {
	ev := "CALENDAR_API_KEY is not set; the API answers 401"
	tests := []struct {
		name string
		r    Report
		ok   bool
		is   error
	}{
		{name: "valid", r: Report{Status: "blocked", Blocker: &Blocker{Type: "missing_credential", Evidence: ev}}, ok: true},
		{name: "status case", r: Report{Status: " Blocked ", Blocker: &Blocker{Type: "MISSING_CREDENTIAL", Evidence: ev}}, ok: true},
		{name: "not blocked", r: Report{Status: "continue", Blocker: &Blocker{Type: "missing_credential", Evidence: ev}}, is: ErrNotBlocked},
		{name: "no blocker", r: Report{Status: "blocked"}, is: ErrNotBlocked},
		{name: "untyped", r: Report{Status: "blocked", Blocker: &Blocker{Evidence: ev}}, is: ErrUnknownBlockerType},
		{name: "made-up type", r: Report{Status: "blocked", Blocker: &Blocker{Type: "too_hard", Evidence: ev}}, is: ErrUnknownBlockerType},
		{name: "vague", r: Report{Status: "blocked", Blocker: &Blocker{Type: "platform_limit", Evidence: "blocked"}}, is: ErrVagueEvidence},
		{name: "empty evidence", r: Report{Status: "blocked", Blocker: &Blocker{Type: "platform_limit"}}, is: ErrVagueEvidence},
		{name: "worker claims a permission denial", r: Report{Status: "blocked", Blocker: &Blocker{Type: "permission_denied", Evidence: "bash: rm denied by permission config"}}, is: ErrUntrustedBlocker},
		{name: "worker claims a merge conflict", r: Report{Status: "blocked", Blocker: &Blocker{Type: "merge_conflict", Evidence: "git merge main: conflict in a.go"}}, is: ErrUntrustedBlocker},
		{name: "worker claims a cancel", r: Report{Status: "blocked", Blocker: &Blocker{Type: "cancelled", Evidence: "the user cancelled the run"}}, is: ErrUntrustedBlocker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := ClassifyReportBlocker(tt.r)
			require.Equal(t, tt.ok, ok)
			_, err := CheckReportBlocker(tt.r)
			if tt.ok {
				require.NoError(t, err)
				require.Equal(t, BlockerMissingCredential, b.Type)
				require.Equal(t, ev, b.Evidence)
				return
			}
			require.ErrorIs(t, err, tt.is)
			require.Equal(t, Blocker{}, b)
		})
	}
}
