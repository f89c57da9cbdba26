package horizon

import (
	"fmt"
	"slices"
	"strings"
)

// Strategy is how the next attempt at a feature should differ from the
// last ones. Repeating an unchanged attempt is forbidden, so every
// escalation window (recovery_escalation_interval attempts) switches to the
// next strategy of a fixed rotation:
//
//	focused correction → replan from current evidence → research → decomposition → focused correction → …
//
// The rotation never ends the work: the interval changes the strategy, it
// is not an attempt cap. Failing gates, rejections, protocol errors and
// timeouts keep a feature runnable; only a typed blocker pauses it. When
// the decomposition window is reached the supervisor normally splits the
// feature (Plan.Decompose) and the parts start fresh at focused correction;
// if it does not, the rotation simply carries on.
type Strategy string

// Recovery strategies, in rotation order.
const (
	StrategyFocusedCorrection Strategy = "focused_correction"
	StrategyReplan            Strategy = "replan"
	StrategyResearch          Strategy = "research"
	StrategyDecomposition     Strategy = "decomposition"
)

// DefaultRecoveryEscalationInterval is recovery_escalation_interval when it
// is not configured: two attempts per strategy.
const DefaultRecoveryEscalationInterval = 2

// strategyRotation is the order strategies take, window after window.
var strategyRotation = [...]Strategy{StrategyFocusedCorrection, StrategyReplan, StrategyResearch, StrategyDecomposition}

// Strategies returns the rotation in order.
func Strategies() []Strategy { return slices.Clone(strategyRotation[:]) }

// Valid reports whether s is one of the strategies.
func (s Strategy) Valid() bool {
	for _, r := range strategyRotation {
		if s == r {
			return true
		}
	}
	return false
}

// Title is the strategy as words.
func (s Strategy) Title() string {
	switch s {
	case StrategyFocusedCorrection:
		return "focused correction"
	case StrategyReplan:
		return "replan from current evidence"
	case StrategyResearch:
		return "framework and source research"
	case StrategyDecomposition:
		return "decomposition"
	}
	return string(s)
}

// StrategyFor returns the strategy of the next attempt at a feature that
// has had attempts change attempts so far (Feature.AttemptCount), with
// interval attempts per strategy. Window w = attempts/interval uses
// strategy w mod 4, so the strategy changes exactly when attempts reaches
// a multiple of interval, and the rotation cycles for ever. The first
// window is focused correction (its first attempt simply has nothing to
// correct yet). An interval below 1 means the default; negative attempts
// count as none.
func StrategyFor(attempts, interval int) Strategy {
	if interval < 1 {
		interval = DefaultRecoveryEscalationInterval
	}
	if attempts < 0 {
		attempts = 0
	}
	return strategyRotation[(attempts/interval)%len(strategyRotation)]
}

// StrategyGuidance is the brief section that tells the next worker what to
// do differently under strategy s. An empty or unknown strategy gets the
// focused-correction text, the rotation's start.
func StrategyGuidance(s Strategy) string {
	if !s.Valid() {
		s = StrategyFocusedCorrection
	}
	var body string
	switch s {
	case StrategyFocusedCorrection:
		body = `The previous attempt's evidence (gate verdict and failing checks, the auditor's findings, any protocol error) is the work list.
- Fix exactly what the evidence names, starting with the first failing check or the most severe finding.
- Keep the parts of the change that the evidence does not object to; do not start over.
- Before finishing, make sure each item of the evidence is addressed or say in your summary why it cannot be.`
	case StrategyReplan:
		body = `Correcting the last change has not converged, so do not make another small edit to the same approach.
- Re-read the feature's acceptance criteria, the current code and the evidence of the previous attempts from scratch.
- Name in one or two sentences why the previous approach failed, then choose a different approach that the evidence supports.
- You may discard the previous change entirely. An attempt whose diff repeats an earlier one is wasted.`
	case StrategyResearch:
		body = `Neither correction nor a new approach has worked, which usually means a wrong belief about the framework, library or code base.
- Before editing, find the facts the failure hinges on in the source actually present: the library or framework code in the module cache, vendor/ or node_modules, its documentation, and existing code or tests that already do something similar.
- Prefer what the source says over what you remember; note the file you learned it from.
- Then make the change, and say in your summary which fact changed your approach.`
	case StrategyDecomposition:
		body = `The feature has resisted correction, replanning and research as a whole, so shrink it.
- Identify the smallest part of the acceptance criteria that can be delivered and verified on its own.
- Deliver only that part, keeping the gate green; leave the rest untouched.
- Say in your summary exactly which criteria are done and which remain, so the remainder can be planned as separate features.`
	}
	return fmt.Sprintf("## Recovery strategy: %s\n\n%s\n", s.Title(), strings.TrimSpace(body))
}
