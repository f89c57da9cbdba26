package activities

import (
	"time"

	"github.com/horizon/horizon/ladder"

	"github.com/horizon/horizon/horizon"
)

// Error types returned as Temporal application errors. Bad input is never
// retried: retrying cannot fix a missing gate or an unknown model.
const (
	ErrTypeBadInput     = "BadInput"
	ErrTypeUnknownModel = "UnknownModel"
	ErrTypeNoChanges    = "NoChanges"
)

// PreflightInput is checked before any lane is made or model is paid.
type PreflightInput struct {
	RunID      string
	Repo       string
	BaseCommit string
	// Model, when set, serves every role; otherwise each role gets the
	// best-ranked connected model of the leaderboard (ModelsFile, or the
	// bundled one).
	Model      string
	ModelsFile string
}

// PreflightOutput tells what the run will use.
type PreflightOutput struct {
	Gate   string            // how the gate was found, e.g. ".horizon/verify.sh"
	Models map[string]string // role (worker, auditor) → provider/model
	Why    map[string]string // role → why that model
	// Paid marks roles whose model is metered: their sessions run on the
	// paid task queue, one at a time across all runs.
	Paid map[string]bool
	// Tiers is the routing ladder's availability for this run.
	Tiers ladder.Availability
	// LocalContext is the T1 model's context length (leaderboard), for the
	// "prompt over the local context cap" trigger; 0: unknown, not checked.
	LocalContext int
}

// LaneInput names one feature's lane.
type LaneInput struct {
	RunID      string
	Feature    string
	Repo       string
	BaseCommit string
	// FromIntegration cuts a new lane from the tip of the run's integration
	// branch (made at BaseCommit if missing), so a planned run's feature
	// builds on the features accepted before it.
	FromIntegration bool
}

// Lane is a prepared git worktree.
type Lane struct {
	Path   string
	Branch string
	// Base is the commit the lane was cut from: diffs, gate snapshots and
	// the audit are taken against it.
	Base string
}

// PlanArtifacts is what SavePlan writes under runs/<run>/.
type PlanArtifacts struct {
	RunID string
	Plan  horizon.Plan
	// Decisions are appended to decisions.jsonl unless a decision with the
	// same Seq is there already (a retried activity appends nothing twice).
	Decisions []horizon.Decision
}

// PlanArtifactsOutput says where SavePlan wrote.
type PlanArtifactsOutput struct {
	PlanPath      string
	DecisionsPath string
	// Decisions is how many decisions decisions.jsonl holds now.
	Decisions int
}

// IntegrationInput asks for a worktree at the tip of the run's integration
// branch, for the final gate.
type IntegrationInput struct {
	RunID string
	Repo  string
}

// SessionInput runs one agent session in a lane.
type SessionInput struct {
	RunID      string
	Feature    string
	Attempt    int
	Role       horizon.Role // worker, auditor, explorer (read-only retrieval) or lead (read-only planning)
	Goal       string       // lead: the goal the plan is validated against
	Lane       string
	BaseCommit string // the auditor's diff is taken against it
	Model      string
	Prompt     string
}

// SessionOutput is what a session left, parsed from its final message.
type SessionOutput struct {
	SessionID     string
	Resumed       bool
	Usage         horizon.Usage
	Report        *horizon.Report // worker
	Audit         *horizon.Audit  // auditor
	ProtocolError string          // missing or invalid protocol block
	Asked         []string        // permissions or questions the agent raised (denied)
	Notes         string          // explorer: what it found (its final message, bounded)
	Plan          *horizon.Plan   // lead: the validated plan (ProtocolError says why there is none)
	Transcript    string          // path of the final message on disk
	// Moved says the session the heartbeat named was on a lost worker
	// and a fresh one replaced it here ("session moved: old → new (worker
	// W lost)"); empty otherwise.
	Moved string `json:",omitempty"`
}

// SessionHeartbeat is recorded while a session runs; a retried activity
// reads it to continue the same OpenCode session instead of paying for a new
// one.
type SessionHeartbeat struct {
	SessionID string
	Phase     string
	Tool      string
	// Worker is the identity of the worker whose OpenCode store holds the
	// session; another worker cannot continue it (moved.go).
	Worker string `json:",omitempty"`
}

// GateInput runs the gate in a lane. Attempt 0 is the baseline: the lane
// as cut, at the base commit, before any change.
type GateInput struct {
	RunID      string
	Feature    string
	Attempt    int
	Repo       string
	Lane       string
	BaseCommit string
	Timeout    time.Duration
}

// CommitInput moves an accepted lane onto the run's integration branch.
type CommitInput struct {
	RunID      string
	Feature    string
	Attempt    int
	Repo       string
	Lane       string
	BaseCommit string
	Message    string
}

// CommitOutput says what landed.
type CommitOutput struct {
	Commit string
	Branch string
	Files  []string
}
