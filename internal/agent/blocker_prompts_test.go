package agent_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/specialist"
)

// blockerTypeRe finds a JSON "type" value written near the word blocker:
// how a prompt shows a blocker ({"type": "a|b", ...}).
var blockerTypeRe = regexp.MustCompile(`"type"\s*:\s*"([^"]+)"`)

// promptBlockerSpellings returns every blocker type spelling a prompt
// shows: the "type" values within 160 bytes after a mention of a blocker,
// split at "|".
func promptBlockerSpellings(prompt string) []string {
	var out []string
	lower := strings.ToLower(prompt)
	for _, m := range blockerTypeRe.FindAllStringSubmatchIndex(prompt, -1) {
		if !strings.Contains(lower[max(0, m[0]-160):m[0]], "blocker") {
			continue
		}
		out = append(out, strings.Split(prompt[m[2]:m[3]], "|")...)
	}
	return out
}

// everyPrompt is every prompt horizon gives a model that can end with a
// horizon-report: the agent files, the worker's brief, the loop's
// activation briefs and the built-in specialists.
func everyPrompt(t *testing.T) map[string]string {
	t.Helper()
	prompts := map[string]string{}
	for _, name := range agent.AgentNames() {
		f, err := agent.AgentFile(name)
		require.NoError(t, err)
		prompts["agent "+name] = string(f)
	}
	prev := &horizon.Attempt{N: 1, Outcome: horizon.OutcomeBlocked, Report: &horizon.Report{Status: horizon.ReportBlocked, Summary: "x",
		Blocker: &horizon.Blocker{Type: horizon.BlockerMissingCredential, Evidence: "STRIPE_KEY is unset"}}}
	prompts["worker brief"] = horizon.WorkerBrief("add a flag", 1, 3, nil, "")
	prompts["worker brief after a blocker"] = horizon.WorkerBrief("add a flag", 2, 3, prev, "a person's note")
	prompts["loop first"] = horizon.LoopBrief{Loop: "loop-1", Goal: "g", Activation: 1, Max: 3}.String()
	prompts["loop checkpoint"] = horizon.LoopCheckpoint("loop-1", "g", 2, 3, *prev.Report, nil)
	builtins, err := specialist.LoadBuiltins()
	require.NoError(t, err)
	for _, m := range builtins {
		prompts["specialist "+m.Name] = string(m.Render())
	}
	return prompts
}

// Every blocker spelling any prompt teaches is one the report parser
// accepts from a worker: a prompt that shows a type the parser refuses
// would have a worker that needs a person retried instead of paused.
func TestEveryPromptedBlockerTypeParses(t *testing.T) {
	taught := map[horizon.BlockerType]bool{}
	for name, p := range everyPrompt(t) {
		for _, sp := range promptBlockerSpellings(p) {
			r := horizon.Report{Status: horizon.ReportBlocked, Blocker: &horizon.Blocker{Type: horizon.BlockerType(sp), Evidence: "api.example.com:443 connection refused"}}
			b, err := horizon.CheckReportBlocker(r)
			require.NoError(t, err, "%s teaches blocker type %q, which the parser refuses", name, sp)
			taught[b.Type] = true
		}
	}
	for _, typ := range horizon.WorkerBlockerTypes() {
		require.True(t, taught[typ], "no prompt teaches the worker blocker type %s", typ)
	}
}

// The extraction finds what a prompt shows, so the test above cannot pass
// by finding nothing: the worker prompt's old hand-written list is read
// whole.
func TestPromptBlockerSpellings(t *testing.T) {
	old := "- \"blocker\": required when the status is \"blocked\", as\n  {\"type\": \"credential|external-service|platform|framework|structural\",\n   \"evidence\": \"...\"}."
	require.Equal(t, []string{"credential", "external-service", "platform", "framework", "structural"}, promptBlockerSpellings(old))
	require.Empty(t, promptBlockerSpellings(`{"type": "primary"}`), "a type far from any blocker is not a blocker type")
	w, err := agent.AgentFile(agent.AgentWorker)
	require.NoError(t, err)
	require.Equal(t, []string{"missing_credential", "unavailable_service", "platform_limit"}, promptBlockerSpellings(string(w)))
}
