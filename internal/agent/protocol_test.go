package agent

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// parseAny runs the parser named by a testdata file's prefix and renders the
// outcome as the golden JSON.
func parseAny(t *testing.T, name, text string) []byte {
	t.Helper()
	var (
		value    any
		warnings []string
		err      error
	)
	switch {
	case strings.HasPrefix(name, "report_"):
		value, warnings, err = ParseReport(text)
	case strings.HasPrefix(name, "audit_"):
		value, warnings, err = ParseAudit(text)
	case strings.HasPrefix(name, "plan_"):
		value, warnings, err = ParsePlan(text)
	case strings.HasPrefix(name, "advice_"):
		value, warnings, err = ParseAdvice(text)
	default:
		t.Fatalf("testdata file %s: name must start with report_, audit_, plan_ or advice_", name)
	}
	out := map[string]any{}
	if err != nil {
		var pe *ProtocolError
		require.ErrorAs(t, err, &pe, "every parse error is a *ProtocolError")
		require.True(t, errors.Is(err, ErrProtocol))
		out["error"] = pe.Error()
		out["kind"] = pe.Kind
	} else {
		out["value"] = value
		if len(warnings) > 0 {
			out["warnings"] = warnings
		}
	}
	b, jerr := json.MarshalIndent(out, "", "  ")
	require.NoError(t, jerr)
	return append(b, '\n')
}

// TestProtocolGolden parses every testdata/protocol/*.md with the parser its
// name selects and compares with the .golden next to it (go test -update
// rewrites them).
func TestProtocolGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "protocol", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			require.NoError(t, err)
			got := parseAny(t, name, string(in))
			golden := strings.TrimSuffix(f, ".md") + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing golden file; run go test -run TestProtocolGolden -update")
			require.Equal(t, string(want), string(got))
		})
	}
}

func TestParseReport(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		status  horizon.ReportStatus
		reason  string // expected ProtocolError reason (substring); empty: valid
		warning string
	}{
		{name: "plain", text: "ok\n```horizon-report\n{\"status\":\"satisfied\",\"summary\":\"s\"}\n```\n", status: horizon.ReportSatisfied},
		{name: "tilde fence", text: "~~~horizon-report\n{\"status\":\"continue\",\"summary\":\"s\"}\n~~~", status: horizon.ReportContinue},
		{name: "longer closing fence", text: "```horizon-report\n{\"status\":\"continue\",\"summary\":\"s\"}\n`````", status: horizon.ReportContinue},
		{name: "CR only line ends", text: "x\r```horizon-report\r{\"status\":\"satisfied\",\"summary\":\"s\"}\r```\r", status: horizon.ReportSatisfied},
		{name: "upper case status", text: "```horizon-report\n{\"status\":\" SATISFIED \",\"summary\":\"s\"}\n```", status: horizon.ReportSatisfied},
		{name: "blocked", text: "```horizon-report\n{\"status\":\"blocked\",\"summary\":\"s\",\"blocker\":{\"type\":\"credential\",\"evidence\":\"401 from api\"}}\n```", status: horizon.ReportBlocked},
		{name: "no block", text: "I am done.", reason: "no ```horizon-report block in the final message"},
		{name: "empty text", text: "", reason: "no ```horizon-report block in the final message"},
		{name: "other kind only", text: "```horizon-audit\n{\"verdict\":\"accept\"}\n```", reason: "no ```horizon-report block"},
		{name: "bad status", text: "```horizon-report\n{\"status\":\"done\"}\n```", reason: `status "done" is not one of satisfied|continue|blocked`},
		{name: "missing status", text: "```horizon-report\n{\"summary\":\"x\"}\n```", reason: "status is missing (one of satisfied|continue|blocked)"},
		{name: "blocked without blocker", text: "```horizon-report\n{\"status\":\"blocked\",\"summary\":\"x\"}\n```", reason: `status "blocked" needs a blocker`},
		{name: "blocked without type", text: "```horizon-report\n{\"status\":\"blocked\",\"blocker\":{\"evidence\":\"e\"}}\n```", reason: `status "blocked" needs a blocker`},
		{name: "invalid json", text: "```horizon-report\n{status: satisfied}\n```", reason: "invalid JSON in horizon-report block: "},
		{name: "not an object", text: "```horizon-report\n\"satisfied\"\n```", reason: "want one JSON object"},
		{name: "inline triple backticks are not a fence", text: "use ```horizon-report``` blocks", reason: "no ```horizon-report block"},
		{name: "empty summary warns", text: "```horizon-report\n{\"status\":\"continue\"}\n```", status: horizon.ReportContinue, warning: "empty summary"},
		{name: "blocker on satisfied warns", text: "```horizon-report\n{\"status\":\"satisfied\",\"summary\":\"s\",\"blocker\":{\"type\":\"t\",\"evidence\":\"e\"}}\n```", status: horizon.ReportSatisfied, warning: "blocker given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, warnings, err := ParseReport(tc.text)
			if tc.reason != "" {
				var pe *ProtocolError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, horizon.BlockReport, pe.Kind)
				require.Contains(t, pe.Reason, tc.reason)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.status, r.Status)
			if tc.warning != "" {
				require.NotEmpty(t, warnings)
				require.Contains(t, strings.Join(warnings, "; "), tc.warning)
			} else {
				require.Empty(t, warnings)
			}
		})
	}
}

func TestParseAudit(t *testing.T) {
	a, warnings, err := ParseAudit("```horizon-audit\n{\"verdict\":\"reject\",\"findings\":[{\"file\":\"a.go\",\"line\":\"7\",\"severity\":\"CONCERN\",\"note\":\"n\"}]}\n```")
	require.NoError(t, err)
	require.Equal(t, horizon.VerdictReject, a.Verdict)
	require.Equal(t, []horizon.Finding{{File: "a.go", Line: 7, Severity: horizon.SeverityConcern, Note: "n"}}, a.Findings)
	require.Empty(t, warnings)

	a, warnings, err = ParseAudit("```horizon-audit\n{\"verdict\":\"reject\"}\n```")
	require.NoError(t, err, "a reject without findings is still a verdict")
	require.Equal(t, horizon.VerdictReject, a.Verdict)
	require.Contains(t, strings.Join(warnings, ";"), "reject without findings")

	_, _, err = ParseAudit("```horizon-audit\n{\"verdict\":\"reject\",\"findings\":[{\"line\":\"seven\",\"severity\":\"nit\",\"note\":\"n\"}]}\n```")
	require.ErrorContains(t, err, "finding line \"seven\" is not a number")

	_, _, err = ParseAudit("no block")
	require.EqualError(t, err, "protocol_error: no ```horizon-audit block in the final message")

	_, _, err = ParseAudit("```horizon-audit\n{\"verdict\":\"accept\",\"findings\":[{\"severity\":\"major\",\"note\":\"n\"}]}\n```")
	require.ErrorContains(t, err, `finding 1 severity "major" is not one of nit|concern|blocker`)
}

func TestParsePlan(t *testing.T) {
	const ok = "```horizon-plan\n" + `{"milestones":[{"title":"m","features":[{"id":"f1","title":"t","kind":"bounded","acceptance":["a"]}]}],"ambiguity":"MEDIUM"}` + "\n```"
	p, _, err := ParsePlan(ok)
	require.NoError(t, err)
	require.Equal(t, horizon.AmbiguityMedium, p.Ambiguity)
	require.Len(t, p.Milestones, 1)
	require.Equal(t, "f1", p.Milestones[0].Features[0].ID)

	for _, tc := range []struct{ body, reason string }{
		{`{"milestones":[],"ambiguity":"LOW"}`, "plan has no milestones"},
		{`{"ambiguity":"LOW"}`, "plan has no milestones"},
		{`{"milestones":[{"title":"m","features":[]}],"ambiguity":"LOW"}`, `milestone 1 ("m") has no features`},
		{`{"milestones":[{"features":[{"id":"f1","title":"t","kind":"open"}]}],"ambiguity":"LOW"}`, "milestone 1 has no title"},
		{`{"milestones":[{"title":"m","features":[{"id":" ","title":"t","kind":"open"}]}],"ambiguity":"LOW"}`, "milestone 1 feature 1 has no id"},
		{`{"milestones":[{"title":"m","features":[{"id":"f1","kind":"open"}]}],"ambiguity":"LOW"}`, `milestone 1 feature 1 (id "f1") has no title`},
		{`{"milestones":[{"title":"m","features":[{"id":"f1","title":"t","kind":"open"},{"id":"f1","title":"u","kind":"open"}]}],"ambiguity":"LOW"}`, `id is already used by milestone 1 feature 1`},
		{`{"milestones":[{"title":"m","features":[{"id":"f1","title":"t"}]}],"ambiguity":"LOW"}`, `kind is missing (one of mechanical|bounded|open)`},
		{`{"milestones":[{"title":"m","features":[{"id":"f1","title":"t","kind":"open"}]}]}`, `ambiguity is missing (one of LOW|MEDIUM|HIGH)`},
	} {
		_, _, err := ParsePlan("```horizon-plan\n" + tc.body + "\n```")
		var pe *ProtocolError
		require.ErrorAs(t, err, &pe, tc.body)
		require.Equal(t, horizon.BlockPlan, pe.Kind)
		require.Contains(t, pe.Reason, tc.reason, tc.body)
	}
}

func TestFencedBlocks(t *testing.T) {
	text := "intro\n```go\nfmt.Println(\"```horizon-report\")\n```\n~~~~\n~~~horizon-plan\n{}\n~~~\n~~~~\n```horizon-audit\n{\"verdict\":\"accept\"}\n```\ntail"
	blocks := fencedBlocks(text)
	var infos []string
	for _, b := range blocks {
		infos = append(infos, b.Info)
	}
	require.Equal(t, []string{"go", "", "horizon-audit"}, infos)
	require.Equal(t, "~~~horizon-plan\n{}\n~~~", blocks[1].Body)
}

// FuzzParse checks that no input makes a parser panic, that every failure is
// a *ProtocolError, and that a success is stable: encoding the decoded
// report and parsing it again gives the same status.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "protocol", "*.md"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("```horizon-report\n{\"status\":\"blocked\",\"blocker\":{\"type\":\"t\",\"evidence\":\"e\"}}")
	f.Add("````\n```horizon-audit\n````\n```horizon-audit\n{\"verdict\":\"accept\",\"findings\":[{\"line\":1e300,\"severity\":\"nit\"}]}\n```")
	f.Add("~~~horizon-plan\r\n{\"milestones\":[{\"title\":\"m\",\"features\":[{\"id\":\"a\",\"title\":\"b\",\"kind\":\"open\"}]}],\"ambiguity\":\"high\"}\r\n~~~")
	f.Fuzz(func(t *testing.T, text string) {
		check := func(err error) {
			if err == nil {
				return
			}
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Reason == "" {
				t.Fatalf("error is not a *ProtocolError with a reason: %#v", err)
			}
		}
		r, _, err := ParseReport(text)
		check(err)
		if err == nil {
			b, merr := json.Marshal(r)
			if merr != nil {
				t.Fatalf("marshal %#v: %v", r, merr)
			}
			again, _, err2 := ParseReport("```horizon-report\n" + string(b) + "\n```")
			if err2 != nil || again.Status != r.Status {
				t.Fatalf("re-parse of %s: %v, %q vs %q", b, err2, again.Status, r.Status)
			}
		}
		_, _, err = ParseAudit(text)
		check(err)
		_, _, err = ParsePlan(text)
		check(err)
		_, _, err = ParseAdvice(text)
		check(err)
	})
}
