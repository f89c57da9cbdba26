package horizon

import (
	"fmt"
	"strings"
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
}

// Valid reports whether the record names a gate to run.
func (r *GateRecord) Valid() bool {
	return r != nil && ((r.Script != "" && r.Hash != "" && r.Mode != "") || (r.Script == "" && len(r.Command) > 0))
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
