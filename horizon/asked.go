package horizon

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/horizon/horizon/horizon/textio"
)

// Questions and denied permissions. Nobody answers an unattended session:
// a question the worker asks (OpenCode's question tool) is answered "nobody
// can answer", and a tool call its permissions deny fails. Either is a
// sign the worker needs a person, so each is recorded on its attempt
// (Attempt.Asked), shown wherever attempts are, and AskBlocker turns a
// request that will not go away into a typed blocker instead of letting
// the feature burn attempts on it.

// AskKind is what a worker asked for.
type AskKind string

// Ask kinds.
const (
	AskQuestion   AskKind = "question"   // a question only a person can answer
	AskPermission AskKind = "permission" // a tool call the agent's permissions denied
)

// Ask is one question or denied permission of a worker's session.
type Ask struct {
	Kind AskKind `json:"kind"`
	// Text is the question, or the permission and what it was for
	// ("read: /lane/.env"), clipped at MaxAskText.
	Text string `json:"text"`
}

// Bounds of what an attempt records, to keep workflow history small: the
// first MaxAsks distinct requests, each clipped at MaxAskText bytes.
const (
	MaxAsks    = 5
	MaxAskText = 300
)

// String is the ask as people read it: "question: Which database?".
func (a Ask) String() string { return string(a.Kind) + ": " + a.Text }

// UnmarshalJSON also reads the plain strings sessions recorded before asks
// had a kind ("question: ...", "permission bash: ..."), so histories that
// hold them still replay.
func (a *Ask) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*a = ParseAsk(s)
		return nil
	}
	type plain Ask
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("ask: %w", err)
	}
	*a = Ask(p)
	return nil
}

// ParseAsk reads an ask from its String form; a text without a known kind
// is a permission (what an agent platform asks about most).
func ParseAsk(s string) Ask {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, string(AskQuestion)+":"); ok {
		return Ask{Kind: AskQuestion, Text: strings.TrimSpace(rest)}
	}
	rest, _ := strings.CutPrefix(s, string(AskPermission))
	return Ask{Kind: AskPermission, Text: strings.TrimSpace(rest)}
}

// NewAsks bounds a session's requests for its attempt: texts made one line
// and clipped, duplicates dropped, at most MaxAsks kept.
func NewAsks(raw []Ask) []Ask {
	var out []Ask
	for _, a := range raw {
		a.Text = textio.Head(oneLine(a.Text), MaxAskText)
		if a.Text == "" || containsAsk(out, a) {
			continue
		}
		if len(out) == MaxAsks {
			break
		}
		out = append(out, a)
	}
	return out
}

func containsAsk(as []Ask, a Ask) bool {
	for _, b := range as {
		if b.same(a) {
			return true
		}
	}
	return false
}

// same reports whether two asks are the same request (case and spacing
// forgiven).
func (a Ask) same(b Ask) bool {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	return a.Kind == b.Kind && norm(a.Text) == norm(b.Text)
}

// blockerType is the typed blocker an ask becomes.
func (a Ask) blockerType() BlockerType {
	if a.Kind == AskQuestion {
		return BlockerNeedsDecision
	}
	return BlockerPermissionDenied
}

// AskBlocker decides whether the requests of the attempt cur make it
// blocked: when the worker also reported blocked (it says it cannot go on
// without what it asked for), or when one of them was already made on an
// earlier attempt of the feature (another attempt will ask again). The
// blocker is permission_denied for a permission and needs_decision for a
// question, with the request as evidence. A question wins over a
// permission: a person's decision may make the permission moot.
func AskBlocker(earlier []Attempt, cur Attempt) (Blocker, bool) {
	if len(cur.Asked) == 0 {
		return Blocker{}, false
	}
	reportedBlocked := cur.Report != nil && cur.Report.Status == ReportBlocked
	var pick *Ask
	var seen []int
	for i := range cur.Asked {
		a := cur.Asked[i]
		var at []int
		for _, e := range earlier {
			if e.N != cur.N && containsAsk(e.Asked, a) {
				at = append(at, e.N)
			}
		}
		if len(at) == 0 && !reportedBlocked {
			continue
		}
		if pick == nil || (pick.Kind != AskQuestion && a.Kind == AskQuestion) {
			pick, seen = &cur.Asked[i], at
		}
	}
	if pick == nil {
		return Blocker{}, false
	}
	why := fmt.Sprintf("the worker reported blocked after asking on attempt %d", cur.N)
	if len(seen) > 0 {
		ns := make([]string, 0, len(seen)+1)
		for _, n := range append(seen, cur.N) {
			ns = append(ns, fmt.Sprint(n))
		}
		why = "the worker asked again on attempts " + strings.Join(ns, ", ")
	}
	what := "a permission horizon denied"
	if pick.Kind == AskQuestion {
		what = "a question nobody answers in an unattended run"
	}
	b, err := NewBlocker(pick.blockerType(), fmt.Sprintf("%s (%s): %s", what, why, pick))
	return b, err == nil
}

// AskLines are an attempt's requests for a terminal, one line each:
// "asked question: Which database?" (none when it asked nothing).
func (a *Attempt) AskLines() []string {
	out := make([]string, len(a.Asked))
	for i, q := range a.Asked {
		out[i] = "asked " + oneLine(q.String())
	}
	return out
}

// asksMarkdown lists, for the Web UI, what each attempt asked ("" when
// none asked); feature names the attempts' feature in a planned run.
func asksMarkdown(feature string, attempts []Attempt) string {
	var b strings.Builder
	for _, a := range attempts {
		for _, q := range a.Asked {
			who := fmt.Sprintf("attempt %d", a.N)
			if feature != "" {
				who = fmt.Sprintf("`%s` attempt %d", feature, a.N)
			}
			fmt.Fprintf(&b, "- %s: %s\n", who, viewCell(q.String()))
		}
	}
	return b.String()
}

// asksHeading introduces the asks in the Web UI and the handoff.
const asksHeading = "Asked (questions and denied permissions; nobody answers an unattended run)"
