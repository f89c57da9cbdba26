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
	// ErrTypeProviderRefused: the model provider refused the session in
	// words that waiting cannot change (a 401/403, a model it no longer
	// serves, a quota it says is exhausted). Never retried: the loop turns
	// it into a typed blocker; its details are a horizon.Blocker with the
	// provider's words as evidence.
	ErrTypeProviderRefused = "ProviderRefused"
	// ErrTypeSessionFailed: the session's step failed on its own content
	// (its context overflowed, its output was cut, the provider rejected
	// the request as malformed). Retrying the turn repeats it; the loop
	// ends the attempt and the next one starts afresh.
	ErrTypeSessionFailed = "SessionFailed"
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
	// GateCommands are gate.test_command and gate.lint_command: the
	// gate record carries them, and a test command is a gate of its own
	// in a commit without a gate script.
	GateCommands horizon.GateCommands `json:",omitzero"`
}

// PreflightOutput tells what the run will use.
type PreflightOutput struct {
	Gate   string                  // how the gate was found, e.g. ".horizon/verify.sh"
	Models map[horizon.Role]string // role (worker, auditor) → provider/model
	Why    map[horizon.Role]string // role → why that model
	// Paid marks roles whose model is metered: their sessions run on the
	// paid task queue, one at a time across all runs.
	Paid map[horizon.Role]bool
	// Tiers is the routing ladder's availability for this run.
	Tiers ladder.Availability
	// Local is, per role (worker, auditor, lead), the best-ranked local
	// model connected, if any: near a spend ceiling a metered role's
	// sessions use it instead (none: the run pauses before a metered call).
	Local map[horizon.Role]string
	// LocalContext is the T1 model's context length (leaderboard), for the
	// "prompt over the local context cap" trigger; 0: unknown, not checked.
	LocalContext int
	// GateRecord is the run's gate, decided on the base commit: every gate
	// run of the run restores and runs exactly that (RunGate).
	GateRecord *horizon.GateRecord `json:",omitempty"`
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
	// Project, for a trusted repository, has its own specialists written
	// for OpenCode before any session works in the lane: OpenCode reads a
	// directory's agents once, when it first serves it.
	Project *ProjectSpecialists `json:",omitempty"`
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
	// ResumeSessionID continues this session instead of starting one: the
	// advisor woke the worker after its report, and the report that
	// answers is awaited. PriorUsage is what the session had cost.
	ResumeSessionID string        `json:",omitempty"`
	PriorUsage      horizon.Usage `json:",omitzero"`
	// Consults is the spend authority's word on the worker's consults
	// (nil: no check; an input from before it).
	Consults *ConsultSpend `json:",omitempty"`
	// Title is the run's goal or roadmap item, to name it in an outage
	// notification.
	Title string `json:",omitempty"`
	// Purpose names a session of a role that answers in another block
	// than its usual one: PurposeDispositions has the lead decide audit
	// findings (a horizon-dispositions block, not a plan).
	Purpose string `json:",omitempty"`
	// Project offers a trusted repository's own read-only specialists to
	// the worker as delegates (nil: the repository is not trusted).
	Project *ProjectSpecialists `json:",omitempty"`
	// Watched says the advisor's watchdog reviews this session: each try
	// tells its workflow which worker runs it (SignalSessionHost), so the
	// watchdog runs there.
	Watched bool `json:",omitempty"`
}

// PurposeDispositions is the lead's session that decides the findings
// the deterministic rule left open (horizon.Rule).
const PurposeDispositions = "dispositions"

// part names the session among its feature's attempt's sessions: its
// role, and its purpose when it has one ("lead-dispositions"). Titles,
// transcripts and the spend ledger's keys use it, so two sessions of one
// role in one attempt never share a key.
func (in SessionInput) part() string {
	if in.Purpose == "" {
		return string(in.Role)
	}
	return string(in.Role) + "-" + in.Purpose
}

// ConsultSpend is what the spend authority allows a worker's consults
// (consult.SpendCheck): Off says why they are off; the day ceiling and
// throttle point are weighed again at each consult.
type ConsultSpend struct {
	Off        string  `json:",omitempty"`
	DayCeiling float64 `json:",omitempty"`
	ThrottleAt float64 `json:",omitempty"`
}

// SessionOutput is what a session left, parsed from its final message.
type SessionOutput struct {
	SessionID     string
	Resumed       bool
	Usage         horizon.Usage
	Report        *horizon.Report // worker
	Audit         *horizon.Audit  // auditor
	ProtocolError string          // missing or invalid protocol block
	Asked         []horizon.Ask   // questions the agent asked and permissions it was denied (nobody answers)
	Notes         string          // explorer: what it found (its final message, bounded to horizon.MaxSummary)
	Plan          *horizon.Plan   // lead: the validated plan (ProtocolError says why there is none)
	// Dispositions are the lead's decisions on audit findings
	// (PurposeDispositions), as it gave them: horizon.Merge checks them.
	Dispositions []horizon.Disposition `json:",omitempty"`
	Transcript   string                // path of the final message on disk
	// Moved says the session the heartbeat named was on a lost worker
	// and a fresh one replaced it here ("session moved: old → new (worker
	// W lost)"); empty otherwise.
	Moved string `json:",omitempty"`
	// Consults are the worker's consult_advisor calls (its attempt's
	// ledger); their cost is already in Usage.
	Consults []horizon.Consult `json:",omitempty"`
}

// SessionHeartbeat is recorded while a session runs; a retried activity
// reads it to continue the same OpenCode session instead of paying for a new
// one.
//
// Retry and Outage are for people (`horizon status`): Retry is set while
// OpenCode itself retries a failed model call inside this attempt, Outage
// while the activity's attempts keep failing on infrastructure (recorded
// just before a failed attempt returns, so the next attempt, and status
// meanwhile, know since when).
type SessionHeartbeat struct {
	SessionID string
	Phase     string
	Tool      string
	Retry     *SessionRetry  `json:",omitempty"`
	Outage    *SessionOutage `json:",omitempty"`
	// Worker is the identity of the worker whose OpenCode store holds the
	// session; another worker cannot continue it (moved.go).
	Worker string `json:",omitempty"`
}

// SessionRetry is OpenCode's own retry of a model call.
type SessionRetry struct {
	Attempt int
	Message string
	Next    time.Time
	Since   time.Time // when this session started retrying
}

// SessionOutage is the run of failed attempts the session activity is in.
type SessionOutage struct {
	Since time.Time
	Error string
	Tries int // failed model calls and session attempts so far
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
	// Record is the run's gate, decided on its base commit at preflight.
	// Nil (a history from before the record): RunGate discovers it on
	// BaseCommit, never in the lane.
	Record *horizon.GateRecord `json:",omitempty"`
	// Protected are gate.protected's globs: a worker's changes there are
	// reverted before the gate runs (nil: horizon.DefaultGateProtected).
	// The gate script paths are always protected.
	Protected []string `json:",omitempty"`
	// BaselineReceipt is the receipt of the baseline gate run; a test
	// failing there must pass, not vanish (GateRun.Vanished).
	BaselineReceipt string `json:",omitempty"`
	// Commands are gate.test_command and gate.lint_command for a gate
	// run without a Record (a supervisor's merge); with one, the record's
	// commands are the run's.
	Commands horizon.GateCommands `json:",omitzero"`
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
	// AlreadyDone: the accepted lane changed no file, the change was on
	// the branch already; Commit is the branch's tip and Files is empty.
	AlreadyDone bool
}
