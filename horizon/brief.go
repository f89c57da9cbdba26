package horizon

import (
	"fmt"
	"strings"

	"github.com/horizon/horizon/horizon/textio"
)

// maxEvidence bounds the evidence carried from one attempt to the next so a
// brief stays small however loud a failing gate was.
const maxEvidence = 6000

// WorkerBrief is the prompt for attempt n of a feature. Every attempt after
// the first carries the evidence of the one before it: the gate's verdict
// and output tail, the auditor's findings, or the protocol error, so a
// corrective worker starts from facts rather than from its own claims.
//
// guidance, when set, is text produced for this attempt by a model that
// does not touch the lane: a reader's diagnosis or gathered context.
func WorkerBrief(goal string, n, max int, prev *Attempt, guidance string) string {
	var b strings.Builder
	if max > 0 {
		fmt.Fprintf(&b, "# Task (attempt %d of %d)\n\n%s\n\n", n, max, strings.TrimSpace(goal))
	} else { // a planned feature: attempts are not capped
		fmt.Fprintf(&b, "# Task (attempt %d)\n\n%s\n\n", n, strings.TrimSpace(goal))
	}
	b.WriteString("You work in a git worktree made for this task; change only what the task needs and keep unrelated behaviour intact.\n")
	b.WriteString("Your work is checked by the repository's gate (its verification script) and then by an independent read-only auditor; only they decide whether it is done.\n")
	if prev != nil {
		fmt.Fprintf(&b, "\n## Evidence from attempt %d (%s)\n\n", prev.N, prev.Outcome)
		b.WriteString("The files still hold that attempt's changes. Correct them; do not start over unless the evidence says the approach is wrong.\n\n")
		b.WriteString(evidence(prev, true))
		if len(prev.Dispositions) > 0 {
			b.WriteString("\n")
			b.WriteString(DecisionBrief(goal, nil, prev.Criteria, prev.Dispositions))
		}
	}
	if g := strings.TrimSpace(guidance); g != "" {
		b.WriteString("\n## Guidance (from a reader model or a person; verify before relying on it)\n\n")
		b.WriteString(clip(g, maxEvidence))
		b.WriteString("\n")
	}
	b.WriteString("\n## How to finish\n\n")
	b.WriteString("End your final message with exactly one fenced block like this (JSON, status satisfied|continue|blocked):\n\n")
	b.WriteString("```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"what you changed and why\"}\n```\n\n")
	fmt.Fprintf(&b, "Use status blocked only with concrete evidence of something you cannot overcome, with one of these types: %s. For example {\"status\": \"blocked\", \"blocker\": {\"type\": \"%s\", \"evidence\": \"...\"}}.\n", BlockerTypeHelp(), BlockerMissingCredential)
	return b.String()
}

// Evidence renders what an attempt left behind for the next one.
func Evidence(a *Attempt) string { return evidence(a, false) }

// evidence is Evidence; briefed says a Decision Brief follows it, which
// then holds the disposed findings instead of this list.
func evidence(a *Attempt, briefed bool) string {
	var b strings.Builder
	if a.ProtocolError != "" {
		fmt.Fprintf(&b, "- Your final message was not accepted: %s. It must end with the horizon-report block.\n", a.ProtocolError)
	}
	b.WriteString(gateTrust(a.Gate))
	if g := a.Gate; g != nil && !g.Passed() && len(g.Parts) > 0 {
		b.WriteString(partsEvidence(g))
	} else if g != nil && !g.Passed() {
		fmt.Fprintf(&b, "- The gate (`%s`) ended with verdict %s, exit code %d.\n", g.Command, g.Verdict, g.ExitCode)
		if len(g.Failing) > 0 {
			fmt.Fprintf(&b, "- Failing: %s\n", strings.Join(g.Failing, ", "))
		}
		if t := strings.TrimSpace(g.Tail); t != "" {
			fmt.Fprintf(&b, "\nGate output (tail):\n\n```\n%s\n```\n", clip(t, maxEvidence))
		}
	}
	if len(a.Triggers) > 0 {
		b.WriteString("- Signals computed from the artifacts:\n")
		for _, t := range a.Triggers {
			fmt.Fprintf(&b, "  - %s\n", t.Detail)
		}
	}
	switch au := a.Audit; {
	case au != nil && len(a.Dispositions) > 0 && briefed:
		fmt.Fprintf(&b, "- The auditor did not accept the change (%s); what was decided about each finding is the Decision Brief below.\n", criteriaOrVerdict(a))
	case au != nil && len(a.Dispositions) > 0:
		fmt.Fprintf(&b, "- The auditor did not accept the change (%s); its findings were decided:\n", criteriaOrVerdict(a))
		for _, d := range a.Dispositions {
			fmt.Fprintf(&b, "  - %s: %s\n", d.Kind, d.Subject)
		}
	case au != nil && !au.Accepted():
		b.WriteString("- The auditor rejected the change")
		if len(au.Findings) == 0 {
			b.WriteString(" without findings.\n")
		} else {
			b.WriteString(":\n")
			for _, f := range au.Findings {
				loc := f.File
				if f.Line > 0 {
					loc = fmt.Sprintf("%s:%d", f.File, f.Line)
				}
				if loc == "" {
					loc = "(general)"
				}
				fmt.Fprintf(&b, "  - [%s] %s: %s\n", f.Severity, loc, f.Note)
			}
		}
	}
	if b.Len() == 0 {
		b.WriteString("- No evidence was recorded.\n")
	}
	return b.String()
}

// criteriaOrVerdict says why an audited attempt was not accepted: its
// verdict, or the criteria it left unmet.
func criteriaOrVerdict(a *Attempt) string {
	if unmet := Unmet(a.Criteria); a.Audit.Accepted() && len(unmet) > 0 {
		return fmt.Sprintf("verdict accept, but %s not met", Plural(len(unmet), "criterion"))
	}
	return "verdict " + string(a.Audit.Verdict)
}

// DiffPlaceholder stands for the change in an audit brief built inside a
// workflow; the session activity replaces it with the lane's diff.
const DiffPlaceholder = "{{horizon:diff}}"

// RetrievalBrief asks a read-only agent to find what the worker could not:
// the definitions of the unresolved names, before a bigger model is tried.
func RetrievalBrief(goal string, symbols []string, gateTail string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Context for a fix\n\nA worker trying to achieve the goal below left code that refers to names the compiler or runtime cannot resolve: %s.\n\n## Goal\n\n%s\n\n", strings.Join(symbols, ", "), strings.TrimSpace(goal))
	fmt.Fprintf(&b, "## Gate output (tail)\n\n```\n%s\n```\n\n", clip(gateTail, 3000))
	b.WriteString("Read the repository (you cannot edit or run anything) and report, briefly: where each name is defined or what it should be instead (file paths, signatures, imports), and anything else the next attempt needs to know. Plain text; no protocol block is needed.\n")
	return b.String()
}

// PlanBrief asks the lead (read-only) to plan the goal into milestones and
// atomic features. problem, on a retry, is why the last plan was rejected.
func PlanBrief(goal, problem string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan\n\nRead the repository (you cannot edit or run anything) and plan the goal below into milestones of small, atomic features. Each feature must be checkable by the repository's tests (its gate) and reviewable on its own.\n\n## Goal\n\n%s\n\n", strings.TrimSpace(goal))
	if p := strings.TrimSpace(problem); p != "" {
		fmt.Fprintf(&b, "## Your previous plan was rejected\n\n%s\n\nFix every problem listed.\n\n", clip(p, 4000))
	}
	b.WriteString("For each feature give an id (f1, f2, …, unique), a title, acceptance criteria, the paths it may touch, and its kind: mechanical (a recurring fix shape), bounded (a clear, local change) or open (needs design). Rate the goal's ambiguity LOW, MEDIUM or HIGH and list the assumptions you made.\n\n")
	b.WriteString("End your final message with exactly one fenced block:\n\n")
	b.WriteString("```horizon-plan\n{\"milestones\": [{\"title\": \"...\", \"features\": [{\"id\": \"f1\", \"title\": \"...\", \"acceptance\": [\"...\"], \"paths\": [\"...\"], \"kind\": \"bounded\"}]}], \"ambiguity\": \"LOW\", \"assumptions\": [\"...\"]}\n```\n")
	return b.String()
}

// AuditBrief is the prompt for the independent auditor. The diff is attached
// by the activity (it can be large and does not belong in history). With
// the feature's acceptance criteria, the auditor rates each one (its
// per-criterion receipt).
func AuditBrief(goal string, n int, gate *GateRun, diff string, criteria ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Audit (attempt %d)\n\nA worker changed this repository to achieve the goal below. Review the change independently; you cannot edit files or run commands.\n\n## Goal\n\n%s\n\n", n, strings.TrimSpace(goal))
	if gate != nil {
		fmt.Fprintf(&b, "## Gate\n\nThe repository's gate `%s` passed (exit %d) on this change.\n\n", gate.Command, gate.ExitCode)
		if len(gate.Reverted) > 0 {
			fmt.Fprintf(&b, "The worker also changed protected paths, which were reverted before the gate and are not part of the change: %s. Judge whether the change depended on them.\n\n", strings.Join(gate.Reverted, ", "))
		}
		if len(gate.VanishedGreen) > 0 {
			fmt.Fprintf(&b, "Tests that passed before this change no longer ran: %s. You must address this in your verdict: reject unless removing them is what the goal asks for.\n\n", strings.Join(gate.VanishedGreen, ", "))
		}
	}
	if diff != DiffPlaceholder {
		diff = clip(diff, 60000)
	}
	fmt.Fprintf(&b, "## The change\n\n```diff\n%s\n```\n\n", diff)
	b.WriteString("Read the changed files as needed. Accept only if the change achieves the goal, keeps unrelated behaviour, and does not game the gate (for example by weakening tests).\n\n")
	if len(criteria) == 0 {
		b.WriteString("End your final message with exactly one fenced block (verdict accept|reject; severity nit|concern|blocker):\n\n")
		b.WriteString("```horizon-audit\n{\"verdict\": \"reject\", \"findings\": [{\"file\": \"path\", \"line\": 1, \"severity\": \"blocker\", \"note\": \"what is wrong\"}]}\n```\n")
		return b.String()
	}
	b.WriteString("## Acceptance criteria\n\nRate every criterion: met, unmet or unverifiable, each with evidence (a file and line, or a test name from the gate). The change is accepted only when every criterion is met.\n\n")
	for i, c := range criteria {
		fmt.Fprintf(&b, "%d. %s\n", i+1, strings.TrimSpace(c))
	}
	b.WriteString("\nEnd your final message with exactly one fenced block (verdict accept|reject; severity nit|concern|blocker; status met|unmet|unverifiable, one rating per criterion by its number):\n\n")
	b.WriteString("```horizon-audit\n{\"verdict\": \"reject\", \"findings\": [{\"file\": \"path\", \"line\": 1, \"severity\": \"blocker\", \"note\": \"what is wrong\"}], \"criteria\": [{\"criterion\": 1, \"status\": \"met\", \"evidence\": \"path:12, test_name\"}]}\n```\n")
	return b.String()
}

// clip keeps the last n bytes of s (the end of output is where the verdict is).
func clip(s string, n int) string {
	kept, dropped := textio.Tail(s, n)
	if dropped == 0 {
		return s
	}
	return fmt.Sprintf("…[%d bytes omitted]…\n%s", dropped, kept)
}

// gateTrust is the evidence of a gate run that holds the worker to its
// judge: protected paths it changed (reverted) and failing tests that
// vanished instead of passing.
func gateTrust(g *GateRun) string {
	if g == nil {
		return ""
	}
	var b strings.Builder
	if len(g.Vanished) > 0 {
		fmt.Fprintf(&b, "- Tests that failed at baseline did not run at all: %s. Deleting, renaming or skipping a failing test is not a way to pass; make it pass. The change was not accepted.\n", strings.Join(g.Vanished, ", "))
	}
	if len(g.Reverted) > 0 {
		fmt.Fprintf(&b, "- Your changes to protected paths (the gate and its directories) were reverted before the gate ran and are not part of your change: %s.\n", strings.Join(g.Reverted, ", "))
	}
	return b.String()
}
