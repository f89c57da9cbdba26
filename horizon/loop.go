package horizon

// The loop (`horizon loop`, zilX's /loop): one persistent agent session
// prompted up to N times toward one goal. What the loop knows of each
// activation is its horizon-report block, never its prose; what it tells
// the session is the brief below.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/horizon/horizon/horizon/vocab"
)

// LoopStatus is how a loop ended.
type LoopStatus string

// Loop results.
const (
	LoopRunning       LoopStatus = "running"        // not ended yet (the loop's query)
	LoopSatisfied     LoopStatus = "satisfied"      // an activation reported satisfied (and, with --gate, the gate passed)
	LoopBlocked       LoopStatus = "blocked"        // an activation reported blocked
	LoopLimitReached  LoopStatus = "limit_reached"  // N activations, none satisfied
	LoopProtocolError LoopStatus = "protocol_error" // an activation ended without a valid horizon-report
	LoopCancelled     LoopStatus = "cancelled"      // `horizon cancel`
	LoopFailed        LoopStatus = "failed"         // the session or the lane failed
)

// Bounds of a loop's flags.
const (
	LoopMaxActivations = 100
	LoopCompactMin     = 0.50
	LoopCompactMax     = 0.95
	LoopCompactDefault = 0.80
)

// ErrLoopLimits wraps every refusal of CheckLoop.
var ErrLoopLimits = errors.New("loop")

// CheckLoop checks a loop's activation limit and compaction threshold.
func CheckLoop(max int, compactAt float64) error {
	switch {
	case max < 1 || max > LoopMaxActivations:
		return fmt.Errorf("%w: --max %d is not in 1..%d", ErrLoopLimits, max, LoopMaxActivations)
	case !(compactAt >= LoopCompactMin && compactAt <= LoopCompactMax): // NaN too
		return fmt.Errorf("%w: --compact-at %.2f is not in %.2f..%.2f", ErrLoopLimits, compactAt, LoopCompactMin, LoopCompactMax)
	}
	return nil
}

// ParseLoopRole reads a loop's --agent: a leaderboard role only (lead,
// quick, build, explore, analyze, research). horizon's own session roles
// and OpenCode agent IDs are refused: the role picks the model, horizon
// picks the agent.
func ParseLoopRole(s string) (Role, error) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(vocab.LeaderboardRoles(), r) {
		names := make([]string, len(vocab.LeaderboardRoles()))
		for i, l := range vocab.LeaderboardRoles() {
			names[i] = string(l)
		}
		return "", fmt.Errorf("%w: --agent %q is not a role; use one of %s", ErrLoopLimits, s, strings.Join(names, ", "))
	}
	return r, nil
}

// LoopMarker names activation k of n of loop id. Every activation's prompt
// starts with it, so a retried activation can tell whether its prompt
// reached the session already.
func LoopMarker(id string, k, n int) string {
	return fmt.Sprintf("[horizon loop %s: activation %d of %d]", id, k, n)
}

// LoopBrief is the prompt of one activation.
type LoopBrief struct {
	Loop       string // the loop's ID
	Goal       string
	Activation int // k, from 1
	Max        int // N
	// Checkpoint is set when the session was compacted before this
	// activation: the brief then restates the goal and the last report.
	Checkpoint bool
	Last       *Report  // the previous activation's report
	Gate       *GateRun // the gate that refused the previous "satisfied"
}

// LoopCheckpoint is the brief of activation k of n after a compaction:
// the unchanged goal, where the loop stands, and the last report with its
// evidence.
func LoopCheckpoint(id, goal string, k, n int, last Report, gate *GateRun) string {
	return LoopBrief{Loop: id, Goal: goal, Activation: k, Max: n, Checkpoint: true, Last: &last, Gate: gate}.String()
}

// String renders the brief.
func (b LoopBrief) String() string {
	var s strings.Builder
	s.WriteString(LoopMarker(b.Loop, b.Activation, b.Max) + "\n\n")
	switch {
	case b.Activation == 1:
		fmt.Fprintf(&s, "Goal:\n%s\n\n", strings.TrimSpace(b.Goal))
		fmt.Fprintf(&s, "You work toward this goal in activations: this session is prompted up to %d times, this is the first. Each activation, make what progress you can, check it, and report.\n\n", b.Max)
	case b.Checkpoint:
		s.WriteString("Checkpoint: this session was compacted, so this is where the loop stands.\n\n")
		fmt.Fprintf(&s, "Goal (unchanged):\n%s\n\n", strings.TrimSpace(b.Goal))
		fmt.Fprintf(&s, "This is activation %d of %d.\n\n", b.Activation, b.Max)
		b.writeLast(&s)
	default:
		fmt.Fprintf(&s, "Activation %d of %d: continue toward the goal from where the last activation left it.\n\n", b.Activation, b.Max)
	}
	b.writeGate(&s)
	s.WriteString(loopProtocol)
	return s.String()
}

func (b LoopBrief) writeLast(s *strings.Builder) {
	if b.Last == nil {
		return
	}
	fmt.Fprintf(s, "Last report (activation %d): %s\n", b.Activation-1, b.Last.Status)
	if sum := strings.TrimSpace(b.Last.Summary); sum != "" {
		fmt.Fprintf(s, "Summary: %s\n", sum)
	}
	if bl := b.Last.Blocker; bl != nil {
		fmt.Fprintf(s, "Blocker: %s: %s\n", bl.Type, bl.Evidence)
	}
	s.WriteString("\n")
}

// writeGate gives the gate's evidence when it refused a "satisfied".
func (b LoopBrief) writeGate(s *strings.Builder) {
	g := b.Gate
	if g == nil {
		return
	}
	fmt.Fprintf(s, "The last activation reported satisfied, but the repository's gate did not pass (%s, exit %d", g.Verdict, g.ExitCode)
	if g.Command != "" {
		fmt.Fprintf(s, ", %s", g.Command)
	}
	s.WriteString("). Make it pass before reporting satisfied again.\n")
	if len(g.Failing) > 0 {
		fmt.Fprintf(s, "Failing: %s\n", strings.Join(g.Failing, ", "))
	}
	if t := strings.TrimSpace(g.Tail); t != "" {
		fmt.Fprintf(s, "Gate output (tail):\n```\n%s\n```\n", t)
	}
	s.WriteString("\n")
}

// loopProtocol's blocker types come from BlockerType, the list the report
// parser accepts.
var loopProtocol = "End this activation's final message with one horizon-report block: status \"satisfied\" when the goal is reached, \"continue\" when more work is needed (the next activation goes on in this session), \"blocked\" (with a blocker {\"type\": \"" + BlockerTypeChoices() + "\", \"evidence\": \"...\"}) when you cannot go on. The loop reads that block only.\n"
