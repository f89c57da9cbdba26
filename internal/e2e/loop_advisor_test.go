package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// advisedLoop is `horizon loop --json` with the advisor's keys.
type advisedLoop struct {
	loopResult
	Notes *horizon.AdviceCounts `json:"notes"`
	// Advice is each watched activation with its notes and record.
	Advice []struct {
		Activation int                    `json:"activation"`
		File       string                 `json:"file"`
		Records    []horizon.AdviceRecord `json:"records"`
	} `json:"advice"`
}

// advisedLoopScript is a loop of two activations toward goal, watched:
// activation 1 writes loop.txt and continues (its report held under hold
// until the test releases it, when hold is set); the advisor's first
// review finds concern, true in the lane (line 1 of the loop.txt the
// session wrote), and its later reviews nothing; activation 2 is
// satisfied, and says whether its request carried the note.
func advisedLoopScript(goal, concern, hold string) *fakemodel.Script {
	note := "[horizon advisor · concern r1.1]"
	return &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "advisor-1", When: []string{advisorSystem, "Review 1 of the worker's session"}, Replies: []fakemodel.Reply{
			adviceReply(adviceNote("concern", concern, evidence("loop.txt", 1, "`written by the loop`"))),
		}},
		{Name: "advisor-rest", When: []string{advisorSystem}, Replies: []fakemodel.Reply{adviceReply()}},
		{Name: "a2-noted", When: []string{goal, activation(2, 2), note}, Replies: []fakemodel.Reply{{Text: loopReport("satisfied", "answered the advisor's note")}}},
		{Name: "a2", When: []string{goal, activation(2, 2)}, Replies: []fakemodel.Reply{{Text: loopReport("satisfied", "no note seen")}}},
		// A note that lands mid-turn may take the session one more step.
		{Name: "a1-noted", When: []string{goal, activation(1, 2), note}, Replies: []fakemodel.Reply{{Text: loopReport("continue", "wrote loop.txt")}}},
		{Name: "a1", When: []string{goal, activation(1, 2)}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/loop.txt", "content": "written by the loop\n"}}}},
			{Text: loopReport("continue", "wrote loop.txt"), Hold: hold},
		}},
	}}
}

// A watched loop with a delivered note: with advisor.enabled the
// watchdog reviews activation 1 of a real OpenCode loop session, its
// concern (true in the lane: the file the worker wrote) is delivered into
// that session, and activation 2's request carries it, so the worker
// answers it. `horizon loop --json` counts one delivered note, the advice
// record is under the loop's run directory, and activation 2's review
// reads only what came after its own prompt.
func TestLoopAdvisorDeliversNote(t *testing.T) {
	needsE2E(t)
	const goal = "LOOP-ADVISED: write loop.txt"
	w := advisedWorld(t, advisedLoopScript(goal, "loop.txt has no title line", ""), "60s")
	w.env = append(w.env, "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo, _ := fixture(t)

	out, code := w.stdout("loop", "--repo", repo, "--max", "2", "--json", "--", goal)
	var res advisedLoop
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.Equal(t, 0, code, out)
	require.Regexp(t, loopIDRe, res.Loop)
	require.Equal(t, "satisfied", res.Status, res.Error)
	require.Equal(t, 2, res.Activations)
	require.Equal(t, "answered the advisor's note", res.Report.Summary, "activation 2's request carried the note")

	// The loop's results count the note.
	require.NotNil(t, res.Notes, out)
	require.Equal(t, 1, res.Notes.Delivered, "%+v", res.Notes)
	require.Zero(t, res.Notes.Refuted+res.Notes.Failed+res.Notes.Downgraded, "%+v", res.Notes)
	require.Len(t, res.Advice, 2, "both activations were watched")
	var delivered horizon.AdviceRecord
	for _, r := range res.Advice[0].Records {
		if r.ID == "r1.1" {
			delivered = r
		}
	}
	require.Equal(t, horizon.AdviceDelivered, delivered.Verdict, "%+v", res.Advice[0].Records)
	require.Equal(t, horizon.SeverityConcern, delivered.Delivered)
	require.True(t, delivered.Confirmed, "its evidence is the file the worker wrote")
	require.NotEmpty(t, delivered.Message, "the session message that carried it")
	require.Positive(t, res.Cost, "the reviews count toward the loop's spend")

	// The record a person reads, under the loop's run directory.
	rec := filepath.Join(w.home, "runs", res.Loop, "transcripts", "loop-activation-1-advice.md")
	require.Equal(t, rec, res.Advice[0].File)
	b, err := os.ReadFile(rec)
	require.NoError(t, err)
	require.Contains(t, string(b), "**r1.1** delivered · concern")

	// The session really had the note: activation 2 was answered by the
	// rule that needs it, never by the one without.
	rules := map[string]int{}
	for _, r := range w.model.Requests() {
		rules[r.Rule]++
		if r.Rule == "advisor-rest" && strings.Contains(r.LastUser, "(activation 2 of 2)") {
			require.NotContains(t, r.LastUser, activation(1, 2), "activation 2's review reads from its own prompt on")
		}
	}
	require.Positive(t, rules["a2-noted"], "%v", rules)
	require.Zero(t, rules["a2"], "%v", rules)
	require.Equal(t, 1, rules["advisor-1"], "%v", rules)

	// horizon status LOOP says it to a person.
	out, code = w.stdout("status", res.Loop)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "advisor: 1 note delivered")

	recordHistory(t, w, res.Loop, "loop-advised-note-delivered.json")
}
