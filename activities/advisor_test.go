package activities

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/notify"
)

// fakeWorker is an OpenCode whose worker session takes a step each time
// the advisor reviews, and whose advisor answers from a script.
type fakeWorker struct {
	mu        sync.Mutex
	msgs      []agent.Message
	idle      bool
	reviews   []string // the advisor's final texts, in order
	prompts   []string // the review briefs it got
	delivered []agent.Delivery
	steps     [][]agent.Message // what the worker does during review i
	hang      bool              // the advisor never answers
	// review is the advisor's own session, as Transcript reads it back
	// (ses_adv).
	review []agent.Message
	// reads is what the worker does between reviews: each read of the
	// transcript first adds the next batch; after the last, the session
	// is idle.
	reads [][]agent.Message
}

func (f *fakeWorker) RunSession(ctx context.Context, req agent.SessionRequest, _ func(agent.Progress)) (agent.SessionResult, error) {
	f.mu.Lock()
	i := len(f.prompts)
	f.prompts = append(f.prompts, req.Prompt)
	if i < len(f.steps) {
		f.msgs = append(f.msgs, f.steps[i]...)
		if i == len(f.steps)-1 {
			f.idle = true
		}
	}
	hang := f.hang
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return agent.SessionResult{}, ctx.Err()
	}
	text := "```horizon-advice\n{\"notes\": []}\n```"
	if i < len(f.reviews) {
		text = f.reviews[i]
	}
	return agent.SessionResult{SessionID: "ses_adv", Text: text, Usage: agent.Usage{Input: 10, Cost: 0.001}}, nil
}
func (f *fakeWorker) ValidateModel(context.Context, string, string) error    { return nil }
func (f *fakeWorker) Models(context.Context, string) ([]string, error)       { return nil, nil }
func (f *fakeWorker) Follow(context.Context, string, string) <-chan struct{} { return nil }
func (f *fakeWorker) FindSession(_ context.Context, _, title string) (string, error) {
	if title != "horizon run-1 f1 attempt 1 (worker)" {
		return "", nil
	}
	return "ses_w", nil
}
func (f *fakeWorker) Transcript(_ context.Context, _, sid string) ([]agent.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sid == "ses_adv" {
		return append([]agent.Message(nil), f.review...), nil
	}
	if len(f.reads) > 0 {
		f.msgs = append(f.msgs, f.reads[0]...)
		f.reads = f.reads[1:]
		f.idle = len(f.reads) == 0
	}
	return append([]agent.Message(nil), f.msgs...), nil
}
func (f *fakeWorker) Idle(context.Context, string, string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.idle, nil
}
func (f *fakeWorker) Deliver(_ context.Context, _, _ string, d agent.Delivery) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.msgs {
		if m.ID == d.MessageID {
			return nil
		}
	}
	f.delivered = append(f.delivered, d)
	f.msgs = append(f.msgs, agent.Message{ID: d.MessageID, Role: "user", Text: d.Text, Advice: d.NoteID, Wake: d.Wake})
	if d.Wake {
		f.idle = false
	}
	return nil
}

func step(id, finish string) agent.Message {
	return agent.Message{ID: id, Role: "assistant", Completed: true, Finish: finish, Text: "working " + id, Tools: []string{"edit"}}
}

func advice(notes string) string {
	return "Reviewed.\n```horizon-advice\n{\"notes\": [" + notes + "]}\n```"
}

func watchInput(t *testing.T) AdvisorInput {
	lane := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(lane, "calc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(lane, "calc", "add.go"), []byte("package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"), 0o644))
	return AdvisorInput{RunID: "run-1", Feature: "f1", Attempt: 1, Lane: lane, BaseCommit: "HEAD", WorkerModel: "fake/worker", Model: "fake/adv",
		Brief: "Make Add add.\n\nAcceptance: Add(2, 3) == 5", Settings: AdvisorSettings{Enabled: true, ReviewMode: "step", ReviewInterval: 1,
			MaxToolSteps: 3, MaxNotes: 3, ImmuneTurns: 0, Timeout: 5 * time.Second, RequireEvidence: true}}
}

func runWatch(t *testing.T, f *fakeWorker, in AdvisorInput) AdvisorOutput {
	t.Helper()
	old := advisorPoll
	advisorPoll = 10 * time.Millisecond
	t.Cleanup(func() { advisorPoll = old })
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	acts := &Activities{Home: t.TempDir(), Sessions: f}
	env.RegisterActivity(acts)
	v, err := env.ExecuteActivity(acts.AdvisorWatch, in)
	require.NoError(t, err)
	var out AdvisorOutput
	require.NoError(t, v.Get(&out))
	return out
}

// The first case, at the activity: a true blocker wakes the
// worker; the next review's blocker is delivered without waking, a
// blocker without evidence as a concern; a refuted note and an LGTM
// never reach the session.
func TestAdvisorWatchDelivers(t *testing.T) {
	truth := `{"severity": "blocker", "note": "Add subtracts", "evidence": {"file": "calc/add.go", "line": 4, "observed_fact": "` + "`return a - b`" + `"}}`
	f := &fakeWorker{
		msgs: []agent.Message{{ID: "m01", Role: "user", Text: "brief"}, step("m02", "tool-calls")},
		steps: [][]agent.Message{
			{step("m03", "tool-calls")},
			{step("m05", "tool-calls"), step("m06", "stop")},
		},
		reviews: []string{
			advice(truth),
			advice(`{"severity": "blocker", "note": "Add still subtracts", "evidence": {"file": "calc/add.go", "line": 4, "observed_fact": "` + "`a - b`" + `"}},
				{"severity": "blocker", "note": "Add has no test", "evidence": null},
				{"severity": "concern", "note": "Add returns a string", "evidence": {"file": "calc/add.go", "line": 3, "observed_fact": "` + "`int) string`" + `"}},
				{"severity": "nit", "note": "LGTM"}`),
		},
	}
	in := watchInput(t)
	out := runWatch(t, f, in)
	got := map[string]string{}
	for _, r := range out.Records {
		got[r.ID] = string(r.Verdict) + "/" + string(r.Delivered)
	}
	require.Equal(t, map[string]string{
		"r1.1": "delivered/blocker", "r2.1": "downgraded/concern", "r2.2": "downgraded/concern",
		"r2.3": "refuted/", "r2.4": "suppressed/",
	}, got)
	require.True(t, out.Records[0].Woke)
	require.False(t, out.WokeAfterReport, "the wake came mid-turn")
	require.Len(t, f.delivered, 3, "refuted and suppressed notes never reach the session")
	require.True(t, f.delivered[0].Wake)
	require.False(t, f.delivered[1].Wake)
	require.Equal(t, "fake/worker", f.delivered[1].Model)
	require.True(t, strings.HasPrefix(f.delivered[0].Text, "[horizon advisor · blocker r1.1]"), f.delivered[0].Text)
	require.Len(t, f.prompts, 3, "two reviews at boundaries and one of the turn's rest")
	require.Contains(t, f.prompts[0], "Acceptance: Add(2, 3) == 5")
	_, delta, _ := strings.Cut(f.prompts[2], "## What the worker did since your last review")
	require.NotContains(t, delta, "Add subtracts", "the advisor never reviews its own advice (its rolling summary names its notes)")
	require.InDelta(t, 0.003, out.Usage.Cost, 1e-9)
	md, err := os.ReadFile(out.Transcript)
	require.NoError(t, err)
	require.Contains(t, string(md), "r2.3** refuted")
}

// A blocker after the worker's report wakes it and says so.
func TestAdvisorWatchWakeAfterReport(t *testing.T) {
	f := &fakeWorker{
		msgs:    []agent.Message{{ID: "m01", Role: "user", Text: "brief"}, step("m02", "stop")},
		idle:    true,
		reviews: []string{advice(`{"severity": "blocker", "note": "Add subtracts", "evidence": {"file": "calc/add.go", "line": 4, "observed_fact": "` + "`return a - b`" + `"}}`)},
	}
	out := runWatch(t, f, watchInput(t))
	require.True(t, out.WokeAfterReport)
	require.Len(t, f.delivered, 1)
	require.True(t, f.delivered[0].Wake)
}

// An advisor that never answers: the review is recorded as failed after
// advisor.timeout, and the watchdog ends.
func TestAdvisorWatchTimeout(t *testing.T) {
	f := &fakeWorker{msgs: []agent.Message{{ID: "m01", Role: "user", Text: "brief"}, step("m02", "stop")}, idle: true, hang: true}
	in := watchInput(t)
	in.Settings.Timeout = 50 * time.Millisecond
	out := runWatch(t, f, in)
	require.Equal(t, []horizon.AdviceRecord{{ID: "r1", Review: 1, Verdict: horizon.AdviceFailed, Reason: "the review timed out after advisor.timeout (50ms)"}}, out.Records)
	require.Empty(t, f.delivered)
}

// A resumed watchdog (its heartbeat carries judged notes) does not deliver
// a note the session already holds.
func TestAdvisorWatchDeliversOnce(t *testing.T) {
	f := &fakeWorker{msgs: []agent.Message{{ID: "m01", Role: "user", Text: "brief"}, step("m02", "tool-calls")}}
	w := &watchdog{a: &Activities{Home: t.TempDir(), Sessions: f}, in: watchInput(t), ses: f, heart: startHeartbeat(context.Background(), beatOptions{}), log: nopLog{}}
	w.out.Transcript = filepath.Join(t.TempDir(), "advice.md")
	w.hb.Session = "ses_w"
	w.hb.Records = []horizon.AdviceRecord{{ID: "r1.1", Verdict: horizon.AdviceDelivered, Delivered: horizon.SeverityConcern, Note: "x", Message: "msg_1"}}
	w.deliver(context.Background(), 0, false)
	w.deliver(context.Background(), 0, false) // the retry after a crash
	require.Len(t, f.delivered, 1)
}

type nopLog struct{}

func (nopLog) Info(string, ...any) {}
func (nopLog) Warn(string, ...any) {}

// A watchdog killed after it judged a review's notes (they are in its
// heartbeat) and before it delivered them: its retry delivers each of them
// once, and a blocker that woke the worker after its report is still
// known as such when the crash came after the delivery.
func TestAdvisorWatchResumedDeliversPending(t *testing.T) {
	in := watchInput(t)
	f := &fakeWorker{idle: true, msgs: []agent.Message{{ID: "m01", Role: "user", Text: "brief"}, step("m02", "stop")}}
	pending := []horizon.AdviceRecord{
		{ID: "r1.1", Review: 1, Severity: horizon.SeverityConcern, Delivered: horizon.SeverityConcern, Note: "check the sign", Verdict: horizon.AdviceDelivered, Message: "msg_r11"},
		{ID: "r1.2", Review: 1, Severity: horizon.SeverityNit, Note: "LGTM", Verdict: horizon.AdviceSuppressed},
	}
	w := &watchdog{a: &Activities{Home: t.TempDir(), Sessions: f}, in: in, ses: f, heart: startHeartbeat(context.Background(), beatOptions{}), log: nopLog{}}
	w.out.Transcript = filepath.Join(t.TempDir(), "advice.md")
	w.hb = AdvisorHeartbeat{Session: "ses_w", Reviewed: "m02", Boundaries: 1, LastReview: 1, Records: pending}
	require.NoError(t, w.run(context.Background()))
	require.Len(t, f.delivered, 1, "the judged concern is delivered, the suppressed note is not")
	require.Equal(t, "r1.1", f.delivered[0].NoteID)

	// The same crash once more, now after the delivery: nothing new.
	w.hb.Records = pending
	require.NoError(t, w.run(context.Background()))
	require.Len(t, f.delivered, 1)

	// A waking blocker delivered after the report, the heartbeat that said
	// so lost: the retry still reports the wake.
	f.msgs = append(f.msgs, agent.Message{ID: "m03", Role: "user", Text: "[horizon advisor · blocker r2.1]", Advice: "r2.1", Wake: true}, step("m04", "stop"))
	w.hb = AdvisorHeartbeat{Session: "ses_w", Reviewed: "m04", Boundaries: 2, LastReview: 2, Records: []horizon.AdviceRecord{
		{ID: "r2.1", Review: 2, Severity: horizon.SeverityBlocker, Delivered: horizon.SeverityBlocker, Note: "wrong sign", Verdict: horizon.AdviceDelivered, Woke: true, Message: "msg_r21"},
	}}
	require.NoError(t, w.run(context.Background()))
	require.Len(t, f.delivered, 1, "the blocker is in the session already")
	require.True(t, w.hb.Woke)
}

// A concern the fact check confirmed reaches a person as well as the
// worker, once per feature: a second attempt's confirmed concern is not
// sent again, and a concern without checked evidence is never sent.
func TestAdvisorConcernReachesAPersonOncePerFeature(t *testing.T) {
	rec := &receiver{}
	a, env := notifyActivities(t, rec)
	old := advisorPoll
	advisorPoll = 10 * time.Millisecond
	t.Cleanup(func() { advisorPoll = old })
	concern := `{"severity": "concern", "note": "Add subtracts", "evidence": {"file": "calc/add.go", "line": 4, "observed_fact": "return a - b"}}`
	unchecked := `{"severity": "concern", "note": "Add needs a test", "evidence": null}`
	for attempt := 1; attempt <= 2; attempt++ {
		f := &fakeWorker{
			msgs:    []agent.Message{{ID: "m01", Role: "user", Text: "brief"}, step("m02", "tool-calls")},
			steps:   [][]agent.Message{{step("m03", "stop")}},
			reviews: []string{advice(concern + "," + unchecked)},
		}
		a.Sessions = f
		in := watchInput(t)
		in.Attempt = 1 // the fake names the worker's session of attempt 1
		v, err := env.ExecuteActivity(a.AdvisorWatch, in)
		require.NoError(t, err)
		var out AdvisorOutput
		require.NoError(t, v.Get(&out))
		require.Len(t, f.delivered, 2, "attempt %d: both reach the worker", attempt)
		require.True(t, out.Records[0].Confirmed)
		require.False(t, out.Records[1].Confirmed)
	}
	require.Equal(t, []notify.Kind{notify.AdvisorConcern}, rec.kinds, "one event for the feature, for the confirmed concern only")
}

// tool is a finished worker step that called tools (and asked for more).
func tool(id string, tools ...string) agent.Message {
	return agent.Message{ID: id, Role: "assistant", Completed: true, Finish: "tool-calls", Text: "working " + id, Tools: tools}
}

// The review modes, on one worker turn of five steps, two of them edits:
// step reviews as the steps finish, idle once the turn is over, execution
// after each step that changed files; an interval of 2 reviews every
// second boundary with the skipped one in its delta.
func TestAdvisorReviewModes(t *testing.T) {
	turn := func() [][]agent.Message {
		return [][]agent.Message{
			{tool("m02", "read")}, {tool("m03", "edit")}, {tool("m04", "grep")}, {tool("m05", "write")},
			{{ID: "m06", Role: "assistant", Completed: true, Finish: "stop", Text: "working m06"}},
		}
	}
	for _, tc := range []struct {
		mode     string
		interval int
		// each review's delta holds these steps
		want [][]string
	}{
		{"idle", 1, [][]string{{"m02", "m03", "m04", "m05", "m06"}}},
		{"execution", 1, [][]string{{"m02", "m03"}, {"m04", "m05"}}}, // the last step changed nothing: no review
		{"step", 2, [][]string{{"m02", "m03"}, {"m04", "m05"}, {"m06"}}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			f := &fakeWorker{msgs: []agent.Message{{ID: "m01", Role: "user", Text: "brief"}}, reads: turn()}
			in := watchInput(t)
			in.Settings.ReviewMode, in.Settings.ReviewInterval = tc.mode, tc.interval
			runWatch(t, f, in)
			require.Len(t, f.prompts, len(tc.want), "reviews: %q", f.prompts)
			for i, ids := range tc.want {
				for _, id := range ids {
					require.Contains(t, f.prompts[i], "working "+id, "review %d", i+1)
				}
				if i > 0 {
					require.NotContains(t, f.prompts[i], "working "+tc.want[i-1][0], "review %d holds only its delta", i+1)
				}
			}
		})
	}
}

// advisor.max_tool_steps counts rounds: a review whose session took more
// tool rounds than that (OpenCode's step cap failing to hold it) gives no
// notes; one within it is judged.
func TestAdvisorMaxToolRounds(t *testing.T) {
	truth := `{"severity": "concern", "note": "Add subtracts", "evidence": {"file": "calc/add.go", "line": 4, "observed_fact": "` + "`return a - b`" + `"}}`
	for _, tc := range []struct {
		rounds int
		want   horizon.AdviceVerdict
	}{{3, horizon.AdviceDelivered}, {4, horizon.AdviceFailed}} {
		var review []agent.Message
		for i := range tc.rounds {
			// two tools in one round count once
			review = append(review, agent.Message{ID: fmt.Sprintf("a%d", i), Role: "assistant", Completed: true, Finish: "tool-calls", Tools: []string{"read", "grep"}})
		}
		f := &fakeWorker{
			msgs:    []agent.Message{{ID: "m01", Role: "user", Text: "brief"}},
			reads:   [][]agent.Message{{{ID: "m02", Role: "assistant", Completed: true, Finish: "stop", Text: "done"}}},
			reviews: []string{advice(truth)},
			review:  review,
		}
		in := watchInput(t)
		out := runWatch(t, f, in) // max_tool_steps 3
		require.NotEmpty(t, out.Records, "%d rounds", tc.rounds)
		require.Equal(t, tc.want, out.Records[0].Verdict, "%d rounds: %+v", tc.rounds, out.Records[0])
		if tc.want == horizon.AdviceFailed {
			require.Contains(t, out.Records[0].Reason, "the review used 4 tool rounds, more than advisor.max_tool_steps (3)")
		}
	}
}

// A review after the first carries a rolling summary of the earlier ones:
// what the worker did in each and what became of its notes; the messages
// they covered are not repeated.
func TestAdvisorRollingSummary(t *testing.T) {
	truth := `{"severity": "concern", "note": "Add subtracts", "evidence": {"file": "calc/add.go", "line": 4, "observed_fact": "` + "`return a - b`" + `"}}`
	f := &fakeWorker{
		msgs: []agent.Message{{ID: "m01", Role: "user", Text: "brief"}},
		reads: [][]agent.Message{
			{tool("m02", "read")}, {tool("m03", "edit")}, {tool("m04", "edit")},
			{{ID: "m05", Role: "assistant", Completed: true, Finish: "stop", Text: "working m05"}},
		},
		reviews: []string{advice(truth)},
	}
	in := watchInput(t)
	in.Settings.ReviewMode = "execution"
	runWatch(t, f, in)
	require.GreaterOrEqual(t, len(f.prompts), 2, "%q", f.prompts)
	require.NotContains(t, f.prompts[0], "## Earlier in this session")
	second := f.prompts[1]
	require.Contains(t, second, "## Earlier in this session")
	require.Contains(t, second, `- review 1: 2 steps (tools: read, edit); your notes: delivered as concern "Add subtracts"`)
	require.NotContains(t, second, "working m02", "the earlier delta is summarised, not repeated")
}
