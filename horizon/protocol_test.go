package horizon

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseEnums covers the one parser of every enumeration: case and
// spaces are forgiven, anything else is a *ValueError that names the field,
// quotes the value as given and lists what is accepted.
func TestParseEnums(t *testing.T) {
	parsers := map[string]func(string) (string, error){
		"status":    func(s string) (string, error) { v, err := ParseReportStatus(s); return string(v), err },
		"verdict":   func(s string) (string, error) { v, err := ParseAuditVerdict(s); return string(v), err },
		"severity":  func(s string) (string, error) { v, err := ParseSeverity(s); return string(v), err },
		"kind":      func(s string) (string, error) { v, err := ParseFeatureKind(s); return string(v), err },
		"ambiguity": func(s string) (string, error) { v, err := ParseAmbiguity(s); return string(v), err },
		"role":      func(s string) (string, error) { v, err := ParseRole(s); return string(v), err },
	}
	tests := []struct {
		parser, in, want, err string
	}{
		{parser: "status", in: "satisfied", want: "satisfied"},
		{parser: "status", in: " SATISFIED ", want: "satisfied"},
		{parser: "status", in: "Continue", want: "continue"},
		{parser: "status", in: "blocked", want: "blocked"},
		{parser: "status", in: "done", err: `status "done" is not one of satisfied|continue|blocked`},
		{parser: "status", in: "", err: "status is missing (one of satisfied|continue|blocked)"},
		{parser: "status", in: "  ", err: "status is missing (one of satisfied|continue|blocked)"},
		{parser: "verdict", in: "ACCEPT", want: "accept"},
		{parser: "verdict", in: "reject", want: "reject"},
		{parser: "verdict", in: "approve", err: `verdict "approve" is not one of accept|reject`},
		{parser: "severity", in: "Concern", want: "concern"},
		{parser: "severity", in: "critical", err: `severity "critical" is not one of nit|concern|blocker`},
		{parser: "kind", in: " Bounded", want: "bounded"},
		{parser: "kind", in: "mechanical", want: "mechanical"},
		{parser: "kind", in: "OPEN", want: "open"},
		{parser: "kind", in: "huge", err: `kind "huge" is not one of mechanical|bounded|open`},
		{parser: "kind", in: "", err: "kind is missing (one of mechanical|bounded|open)"},
		{parser: "ambiguity", in: "high", want: "HIGH"},
		{parser: "ambiguity", in: "unclear", err: `ambiguity "unclear" is not one of LOW|MEDIUM|HIGH`},
		{parser: "role", in: "Worker", want: "worker"},
		{parser: "role", in: "explorer", want: "explorer"},
		{parser: "role", in: "reader", want: "reader"},
		{parser: "role", in: "analyze", want: "analyze"},
		{parser: "role", in: "planner", err: `role "planner" is not one of worker|auditor|lead|explorer|reader|quick|build|explore|analyze|research`},
	}
	for _, tc := range tests {
		t.Run(tc.parser+"/"+tc.in, func(t *testing.T) {
			got, err := parsers[tc.parser](tc.in)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				var ve *ValueError
				require.ErrorAs(t, err, &ve)
				require.Equal(t, tc.parser, ve.Field)
				require.Equal(t, tc.in, ve.Value)
				require.True(t, errors.Is(err, ErrInvalidValue))
				require.Empty(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestLeaderboardRoles(t *testing.T) {
	roles := LeaderboardRoles()
	require.Equal(t, []Role{RoleLead, RoleQuick, RoleBuild, RoleExplore, RoleAnalyze, RoleResearch}, roles)
	roles[0] = "x"
	require.Equal(t, RoleLead, LeaderboardRoles()[0], "callers get a copy")
}

// TestProtocolWire pins the JSON of the protocol types: it is the wire
// format of the blocks and is recorded in Temporal histories, so the same
// values must encode to the same bytes they always did.
func TestProtocolWire(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"report", Report{Status: ReportBlocked, Summary: "s", Blocker: &Blocker{Type: BlockerMissingCredential, Evidence: "401"}},
			`{"status":"blocked","summary":"s","blocker":{"type":"missing_credential","evidence":"401"}}`},
		{"report minimal", Report{Status: ReportContinue}, `{"status":"continue"}`},
		{"audit", Audit{Verdict: VerdictReject, Findings: []Finding{{File: "a.go", Line: 3, Severity: SeverityNit, Note: "n"}, {Severity: SeverityBlocker, Note: "m"}}},
			`{"verdict":"reject","findings":[{"file":"a.go","line":3,"severity":"nit","note":"n"},{"severity":"blocker","note":"m"}]}`},
		{"audit without findings", Audit{Verdict: VerdictAccept}, `{"verdict":"accept"}`},
		{"plan block", PlanBlock{Ambiguity: AmbiguityLow, Milestones: []PlanBlockMilestone{{Title: "m", Features: []PlanBlockFeature{{ID: "f1", Title: "t", Kind: KindMechanical}}}}},
			`{"milestones":[{"title":"m","features":[{"id":"f1","title":"t","kind":"mechanical"}]}],"ambiguity":"LOW"}`},
		{"advice", Advice{Notes: []AdviceNote{{Severity: SeverityConcern, Note: "n", Evidence: &AdviceEvidence{File: "a.go", Line: 2, ObservedFact: "f"}, SuggestedPatch: "p"}, {Severity: SeverityNit, Note: "m"}}},
			`{"notes":[{"severity":"concern","note":"n","evidence":{"file":"a.go","line":2,"observed_fact":"f"},"suggested_patch":"p"},{"severity":"nit","note":"m","evidence":null}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(b))
			require.Equal(t, tc.want, string(b), "field order too")
		})
	}
}

// TestProtocolDecode checks what decoding forgives and what it reports:
// an enumeration decodes from a JSON string only, and the error speaks of
// the wire's type (a model reads it in its next brief), not a Go type.
func TestProtocolDecode(t *testing.T) {
	var r Report
	err := json.Unmarshal([]byte(`{"status":7}`), &r)
	require.EqualError(t, err, "json: cannot unmarshal number into Go struct field Report.status of type string")
	for _, in := range []string{`{"status":true}`, `{"status":{}}`, `{"status":[]}`} {
		require.ErrorContains(t, json.Unmarshal([]byte(in), &r), "of type string", in)
	}

	r = Report{}
	require.NoError(t, json.Unmarshal([]byte(`{"status":null,"summary":"s"}`), &r))
	require.Equal(t, Report{Summary: "s"}, r)
	require.NoError(t, json.Unmarshal([]byte(`{"status":"Odd"}`), &r))
	require.Equal(t, ReportStatus("Odd"), r.Status, "decoding does not validate: recorded histories always decode")

	var a Audit
	require.NoError(t, json.Unmarshal([]byte(`{"verdict":"reject","findings":[{"line":"7","severity":"nit"},{"line":null,"severity":"nit"},{"line":1e300,"severity":"nit"},{"line":12.0,"severity":"nit"}]}`), &a))
	var lines []int
	for _, f := range a.Findings {
		lines = append(lines, f.Line)
	}
	require.Equal(t, []int{7, 0, 0, 12}, lines)
	require.EqualError(t, json.Unmarshal([]byte(`{"findings":[{"line":"seven"}]}`), &a), `finding line "seven" is not a number`)

	var adv Advice
	require.NoError(t, json.Unmarshal([]byte(`{"notes":[{"severity":"nit","note":"n","evidence":{"file":"a.go","line":"4","observed_fact":"f"}},{"severity":"nit","note":"m","evidence":null}]}`), &adv))
	require.Equal(t, &AdviceEvidence{File: "a.go", Line: 4, ObservedFact: "f"}, adv.Notes[0].Evidence)
	require.Nil(t, adv.Notes[1].Evidence)
	require.EqualError(t, json.Unmarshal([]byte(`{"notes":[{"evidence":{"line":"x"}}]}`), &adv), `evidence line "x" is not a number`)

	var p PlanBlock
	err = json.Unmarshal([]byte(`{"milestones":[{"title":"m","features":[{"id":"f1","kind":3}]}]}`), &p)
	require.ErrorContains(t, err, "cannot unmarshal number into Go struct field")
	require.ErrorContains(t, err, "kind of type string")
}

func TestAuditAccepted(t *testing.T) {
	var nilAudit *Audit
	require.False(t, nilAudit.Accepted())
	require.True(t, (&Audit{Verdict: VerdictAccept}).Accepted())
	require.False(t, (&Audit{Verdict: VerdictReject}).Accepted())
}
