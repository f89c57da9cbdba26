package horizon

import (
	"fmt"
	"strings"
)

// FeatureTask is the task text of one feature of a planned run: the run's
// goal for context, then the feature itself, its acceptance criteria (what
// the auditor judges against) and its allow-list. Worker and auditor briefs
// are built around it.
func FeatureTask(goal string, f Feature) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Feature %s: %s\n", f.ID, strings.TrimSpace(f.Title))
	if len(f.Acceptance) > 0 {
		b.WriteString("\nAcceptance criteria:\n")
		for _, c := range f.Acceptance {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	if len(f.Paths) > 0 {
		fmt.Fprintf(&b, "\nChange only files matching: %s\n", strings.Join(f.Paths, ", "))
	}
	fmt.Fprintf(&b, "\nThis feature is one step of a larger goal; do only this step:\n\n%s\n", strings.TrimSpace(goal))
	return b.String()
}

// DecomposeBrief asks the lead (read-only) to split a feature that resisted
// correction, replanning and research into smaller features, using the
// evidence of its last attempt.
func DecomposeBrief(goal string, f Feature, last *Attempt) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Decompose a feature\n\nThe feature below has resisted %d attempts (correction, a new approach, research). Read the repository (you cannot edit or run anything) and split it into 2 to 5 smaller features that can each be delivered and verified on their own, in order.\n\n## The feature\n\n%s\n", f.AttemptCount(), FeatureTask(goal, f))
	if last != nil {
		fmt.Fprintf(&b, "\n## Evidence from its last attempt (%d, %s)\n\n%s", last.N, last.Outcome, Evidence(last))
	}
	b.WriteString("\nGive each part an id (p1, p2, …), a title, acceptance criteria, the paths it may touch and its kind (mechanical, bounded or open). End your final message with exactly one fenced block, one milestone holding the parts:\n\n")
	b.WriteString("```horizon-plan\n{\"milestones\": [{\"title\": \"parts of " + f.ID + "\", \"features\": [{\"id\": \"p1\", \"title\": \"...\", \"acceptance\": [\"...\"], \"paths\": [\"...\"], \"kind\": \"bounded\"}]}], \"ambiguity\": \"LOW\", \"assumptions\": []}\n```\n")
	return b.String()
}

// PartsOf turns the lead's decomposition plan into sub-features of parent
// for Plan.Decompose: the lead's IDs are replaced by <parent>.<n> (so they
// cannot clash with the run's plan) and dependencies between the parts
// follow the renaming; dependencies on anything else are dropped (a part
// inherits its parent's).
func PartsOf(parent Feature, p Plan) []Feature {
	var parts []Feature
	rename := map[string]string{}
	for _, m := range p.Milestones {
		for _, f := range m.Features {
			rename[f.ID] = fmt.Sprintf("%s.%d", parent.ID, len(parts)+1)
			parts = append(parts, f)
		}
	}
	out := make([]Feature, len(parts))
	for i, f := range parts {
		var deps []string
		for _, d := range f.DependsOn {
			if id, ok := rename[d]; ok {
				deps = append(deps, id)
			}
		}
		out[i] = Feature{ID: rename[f.ID], Title: f.Title, Kind: f.Kind, Acceptance: f.Acceptance, Paths: f.Paths, DependsOn: deps}
	}
	return out
}
