package horizon

import (
	"fmt"
	"strings"

	"github.com/horizon/horizon/horizon/vocab"
)

// GateRecord is the run's gate, decided once on the base commit before
// any lane exists: the script the commit holds (its path, git mode and
// blob hash) or, when it holds none, the detected command. Every gate run
// of the run puts that script back as recorded and runs it, whatever a
// worker did to its lane, so a lane cannot choose its own judge.
type GateRecord struct {
	// Commit is the commit the gate was discovered on.
	Commit string `json:"commit"`
	// Script is the gate script's path relative to the repository root
	// (".horizon/verify.sh"); "" for a detected command.
	Script string `json:"script,omitempty"`
	// Mode is the script's git mode in the commit: "100755", or "120000"
	// for a symbolic link.
	Mode string `json:"mode,omitempty"`
	// Hash is the script's git blob object ID in the commit: its content.
	Hash string `json:"hash,omitempty"`
	// Command is the detected command's argv when there is no script.
	Command []string `json:"command,omitempty"`
	// Source says how the gate was found, for people: the script path or
	// "detected: go test ./...".
	Source string `json:"source"`
	// TestCommand and LintCommand are gate.test_command and
	// gate.lint_command as the run started with them: parts of the gate
	// run after the script, each on its own (sh -c in the lane). Without
	// a script a test command stands in for the detected command.
	TestCommand string `json:"test_command,omitempty"`
	LintCommand string `json:"lint_command,omitempty"`
}

// Valid reports whether the record names a gate to run: a script, a
// detected command or a test command.
func (r *GateRecord) Valid() bool {
	return r != nil && ((r.Script != "" && r.Hash != "" && r.Mode != "") ||
		(r.Script == "" && (len(r.Command) > 0 || r.TestCommand != "")))
}

// String is the record's Source.
func (r *GateRecord) String() string {
	if r == nil {
		return ""
	}
	return r.Source
}

// DefaultGateProtected is gate.protected's default: the gate directories.
// A worker's changes under them are reverted before every gate run.
var DefaultGateProtected = []string{".horizon/", ".zecor/", ".fleet/"}

// Judged is the gate run's verdict on the change, the one place that
// says whether a gated change may go on to the auditor: the gate exited 0
// and no test that failed at baseline vanished instead of passing.
func (g *GateRun) Judged() (passed bool, why string) {
	switch {
	case g == nil:
		return false, "the gate did not run"
	case g.Verdict != "pass":
		return false, "the gate's verdict is " + g.Verdict
	case len(g.Vanished) > 0:
		return false, "tests that failed at baseline no longer ran: " + strings.Join(g.Vanished, ", ")
	}
	return true, ""
}

// GateTrustLines says, one line per attempt, what the gate step held
// against the worker: failing tests that vanished (never accepted), green
// tests that vanished (the auditor's to address) and protected paths
// reverted. horizon status and the run's Markdown show them under the
// attempts table.
func GateTrustLines(as []Attempt) []string {
	var out []string
	for _, a := range as {
		g := a.Gate
		if g == nil {
			continue
		}
		var parts []string
		if len(g.Vanished) > 0 {
			parts = append(parts, "failing tests vanished (not accepted): "+strings.Join(g.Vanished, ", "))
		}
		if len(g.VanishedGreen) > 0 {
			parts = append(parts, "green tests vanished: "+strings.Join(g.VanishedGreen, ", "))
		}
		if len(g.Reverted) > 0 {
			parts = append(parts, "protected paths reverted: "+strings.Join(g.Reverted, ", "))
		}
		if len(parts) > 0 {
			out = append(out, oneLine(fmt.Sprintf("attempt %d gate: %s", a.N, strings.Join(parts, "; "))))
		}
	}
	return out
}

// GateCommands are gate.test_command and gate.lint_command: shell command
// lines run in the lane with `sh -c`, after the gate script, each a part
// of the gate with its own verdict. "" is none.
type GateCommands struct {
	Test string `json:"test,omitempty"`
	Lint string `json:"lint,omitempty"`
}

// Any reports whether a command is configured.
func (c GateCommands) Any() bool { return c.Test != "" || c.Lint != "" }

// GatePartName names a part of a gate (vocab.GatePart).
type GatePartName = vocab.GatePart

// The parts of a gate, in the order they run.
const (
	GatePartScript = vocab.GatePartScript // the gate script, or the detected command
	GatePartTest   = vocab.GatePartTest   // gate.test_command
	GatePartLint   = vocab.GatePartLint   // gate.lint_command
)

// FailedParts lists the parts of the gate run that did not pass, in run
// order; nil for a gate of one part.
func (g *GateRun) FailedParts() []GatePartName {
	if g == nil {
		return nil
	}
	var out []GatePartName
	for _, p := range g.Parts {
		if !p.Passed() {
			out = append(out, p.Name)
		}
	}
	return out
}

// failedPartsNote names the parts that did not pass, with their commands
// ("failed part: lint `golangci-lint run` (fail, exit 1)"), for a line
// that shows the gate's verdict; "" when none did or the gate had one
// part.
func (g *GateRun) failedPartsNote() string {
	if g == nil {
		return ""
	}
	var names []string
	for _, p := range g.Parts {
		if !p.Passed() {
			names = append(names, fmt.Sprintf("%s `%s` (%s, exit %d)", p.Name, oneLine(p.Command), p.Verdict, p.ExitCode))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "failed part: " + strings.Join(names, "; ")
}

// partsEvidence is the evidence of a gate made of parts that did not
// pass: each failed part on its own, named by what it is (the gate, the
// test step, the lint step) with its command, how it ended, its failing
// tests and the tail of its output, so a lint failure reads apart from
// test failures; then the parts that passed.
func partsEvidence(g *GateRun) string {
	var b strings.Builder
	var passed []string
	for _, p := range g.Parts {
		name := fmt.Sprintf("the %s (`%s`)", partTitle(p.Name), oneLine(p.Command))
		if p.Passed() {
			passed = append(passed, name)
			continue
		}
		fmt.Fprintf(&b, "- %s%s %s", strings.ToUpper(name[:1]), name[1:], partEnd(p))
		if p.Name.Tests() && len(p.Failing) > 0 {
			fmt.Fprintf(&b, " (failing: %s)", strings.Join(p.Failing, ", "))
		}
		if t := strings.TrimSpace(p.Tail); t != "" {
			fmt.Fprintf(&b, ":\n\n```\n%s\n```\n\n", clip(t, maxEvidence/2))
		} else {
			b.WriteString(".\n")
		}
	}
	if len(passed) > 0 {
		fmt.Fprintf(&b, "- Passed: %s.\n", strings.Join(passed, ", "))
	}
	return b.String()
}

// partTitle names a part of a gate for people.
func partTitle(n GatePartName) string {
	switch n {
	case GatePartScript:
		return "gate"
	case GatePartTest:
		return "test step"
	case GatePartLint:
		return "lint step"
	}
	return string(n) + " step"
}

// partEnd says how a part that did not pass ended.
func partEnd(p GatePart) string {
	switch p.Verdict {
	case "fail":
		return fmt.Sprintf("failed, exit %d", p.ExitCode)
	case "timeout":
		return "overran the gate's timeout and was killed"
	case "error":
		return "could not run to a verdict (error)"
	}
	return fmt.Sprintf("ended with verdict %s, exit %d", p.Verdict, p.ExitCode)
}
