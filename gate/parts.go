package gate

import (
	"context"
	"errors"
	"strings"

	"github.com/horizon/horizon/horizon/vocab"
)

// Part is one capped step of a gate made of several: the discovered gate
// (a script or a detected command), gate.test_command and
// gate.lint_command. Each runs through Run on its own, so each has the
// gate's cap, timeout, process-group kill and scrubbed environment, and
// each is judged by its own exit status.
type Part struct {
	Name vocab.GatePart
	Gate Gate
}

// PartResult is what one part produced.
type PartResult struct {
	Name vocab.GatePart `json:"name"`
	Gate Gate           `json:"gate"`
	Result
}

// Command names the part as configured: the gate script's path in the
// repository, the detected command line, or the test or lint command as
// gate.test_command and gate.lint_command give it.
func (p PartResult) Command() string {
	if p.Name != vocab.GatePartScript && p.Gate.Source != "" {
		return p.Gate.Source
	}
	return receiptCommand(p.Gate)
}

// ErrNoTestPart: the parts asked for hold nothing that tests (no gate
// script or detected command, no gate.test_command); a lint step alone
// does not judge a change.
var ErrNoTestPart = errors.New("a gate needs a gate script, a detectable test command or gate.test_command; gate.lint_command alone does not test the change")

// ShellCommand is the gate that runs a configured command line with
// `sh -c` in the lane; its Source is the command as configured.
func ShellCommand(command string) Gate {
	return Gate{Command: []string{"sh", "-c", command}, Source: command}
}

// Parts lists the parts of a gate in the order they run: the discovered
// gate g (a zero Gate: none), then the test command, then the lint command
// (each "" when not configured). A test command stands in for a missing
// gate script, so a repository without verify.sh can be gated by
// gate.test_command alone; with neither there is nothing that tests, and
// Parts fails with ErrNoTestPart.
func Parts(g Gate, test, lint string) ([]Part, error) {
	var ps []Part
	if len(g.Command) > 0 {
		ps = append(ps, Part{Name: vocab.GatePartScript, Gate: g})
	}
	if strings.TrimSpace(test) != "" {
		ps = append(ps, Part{Name: vocab.GatePartTest, Gate: ShellCommand(test)})
	}
	if len(ps) == 0 {
		return nil, ErrNoTestPart
	}
	if strings.TrimSpace(lint) != "" {
		ps = append(ps, Part{Name: vocab.GatePartLint, Gate: ShellCommand(lint)})
	}
	return ps, nil
}

// RunParts runs every part in order, each through Run with the same
// options: its own timeout of opts.Timeout, its own output cap, its own
// process group, the same scrubbed environment. A part that fails or
// overruns does not stop the next (a next attempt learns of a test and a
// lint failure at once); a cancelled ctx does, and the parts it did not
// start are error verdicts. opts.OnOutput sees every part's lines.
func RunParts(ctx context.Context, parts []Part, opts Options) []PartResult {
	out := make([]PartResult, 0, len(parts))
	for _, p := range parts {
		out = append(out, PartResult{Name: p.Name, Gate: p.Gate, Result: Run(ctx, p.Gate, opts)})
	}
	return out
}

// Overall is the verdict of a gate made of parts: pass only when every
// part passed, else the verdict, exit code and signal of the first part
// (in run order) that did not. Duration and OutputBytes are the parts'
// sums; Err joins the parts' errors, each named by its part. Output is
// the test parts' output only (TestOutput): what the failing-test set is
// read from. PGID is not kept: every part had its own group.
func Overall(parts []PartResult) Result {
	if len(parts) == 0 {
		return errorResult("gate has no parts")
	}
	res := Result{Verdict: Pass}
	var errs []string
	decided := false
	for _, p := range parts {
		res.Duration += p.Duration
		res.OutputBytes += p.OutputBytes
		if p.Err != "" {
			errs = append(errs, string(p.Name)+": "+p.Err)
		}
		if !decided && p.Verdict != Pass {
			res.Verdict, res.ExitCode, res.Signal, decided = p.Verdict, p.ExitCode, p.Signal, true
		}
	}
	res.Err = strings.Join(errs, "; ")
	res.Output = TestOutput(parts)
	return res
}

// TestOutput is the output of the parts whose failures are test failures
// (the gate script, the test command), in run order; the lint step's is
// left out, so its findings never enter the failing-test set. With more
// than one such part each is headed by "$ command".
func TestOutput(parts []PartResult) string {
	var tests []PartResult
	for _, p := range parts {
		if p.Name.Tests() {
			tests = append(tests, p)
		}
	}
	if len(tests) == 1 {
		return tests[0].Output
	}
	var b strings.Builder
	for _, p := range tests {
		b.WriteString("$ " + p.Command() + "\n")
		b.WriteString(p.Output)
		if !strings.HasSuffix(p.Output, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
