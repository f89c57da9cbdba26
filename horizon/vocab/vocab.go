// Package vocab declares horizon's vocabulary once: the roles, the kinds
// of feature, how an attempt ends, the types of blocker and the parts of a
// gate. Package horizon (the domain) and package ladder (the routing,
// which stays pure and imports nothing else of horizon's) both use these
// types, so the two cannot drift apart: a role or an outcome has one
// spelling, and the ladder's view of a feature is its kind, not a second
// encoding of it.
//
// The values are the wire's: JSON in report blocks, models.json and
// recorded workflow histories. They never change; new values may be added.
package vocab

import (
	"encoding/json"
	"reflect"
	"slices"
)

// Role names who does a part of a run's work.
//
// horizon's own roles name its agent sessions (the worker, the auditor,
// the lead who plans, the explorer who retrieves context) and the T2
// reader. The leaderboard's roles (zilX's: lead, quick, build, explore,
// analyze, research) name what a model is ranked for in models.json; a
// session role resolves to one of them (Leaderboard).
type Role string

// horizon's roles.
const (
	RoleWorker   Role = "worker"   // implements a feature in its lane; ends with a horizon-report
	RoleAuditor  Role = "auditor"  // reviews the change read-only; ends with a horizon-audit
	RoleLead     Role = "lead"     // plans and decomposes read-only; ends with a horizon-plan (also a leaderboard role)
	RoleExplorer Role = "explorer" // gathers context read-only for a retrieval step
	RoleReader   Role = "reader"   // the T2 reader: a text-only model whose diagnosis a local model applies
)

// The leaderboard's roles besides RoleLead (models.json).
const (
	RoleQuick    Role = "quick"    // small bounded implementation and command tasks
	RoleBuild    Role = "build"    // implementation; the worker's models
	RoleExplore  Role = "explore"  // read-only local code and context discovery
	RoleAnalyze  Role = "analyze"  // read-only review and debugging; the auditor's models
	RoleResearch Role = "research" // external documentation and primary sources
)

// Roles returns every role, horizon's first, then the leaderboard's.
func Roles() []Role {
	return []Role{RoleWorker, RoleAuditor, RoleLead, RoleExplorer, RoleReader, RoleQuick, RoleBuild, RoleExplore, RoleAnalyze, RoleResearch}
}

// LeaderboardRoles returns the leaderboard's roles in display order.
func LeaderboardRoles() []Role {
	return []Role{RoleLead, RoleQuick, RoleBuild, RoleExplore, RoleAnalyze, RoleResearch}
}

// Leaderboard is the leaderboard role whose models r's sessions use:
// worker → build, auditor → analyze, explorer → explore, and a
// leaderboard role itself. The reader has none (it is configured on its
// own, reader.*); ok is false for it and for anything else.
func (r Role) Leaderboard() (Role, bool) {
	switch r {
	case RoleWorker:
		return RoleBuild, true
	case RoleAuditor:
		return RoleAnalyze, true
	case RoleExplorer:
		return RoleExplore, true
	}
	if slices.Contains(LeaderboardRoles(), r) {
		return r, true
	}
	return "", false
}

// FeatureKind tells the routing ladder how much model a feature is likely
// to need: mechanical work may be a codemod, open work needs judgement.
// Any other value (none given, a misspelling) routes as bounded, the safe
// reading: it never climbs faster than bounded work nor tries codemods on
// work not declared mechanical.
type FeatureKind string

// Feature kinds (spelled as in the horizon-plan block).
const (
	KindMechanical FeatureKind = "mechanical"
	KindBounded    FeatureKind = "bounded"
	KindOpen       FeatureKind = "open"
)

// UnmarshalJSON decodes a JSON string.
func (k *FeatureKind) UnmarshalJSON(b []byte) error { return DecodeString(b, (*string)(k)) }

// Outcome is how one attempt ended. Only OutcomeAccepted means the change
// is in.
type Outcome string

// Attempt outcomes.
const (
	OutcomeAccepted      Outcome = "accepted"       // gate green and the auditor accepted
	OutcomeGateFailed    Outcome = "gate_failed"    // gate red (fail or timeout)
	OutcomeRejected      Outcome = "rejected"       // gate green, auditor rejected
	OutcomeProtocolError Outcome = "protocol_error" // no valid horizon-report block
	OutcomeBlocked       Outcome = "blocked"        // the worker reported a typed blocker
	OutcomeRunning       Outcome = "running"        // the attempt has not ended
	OutcomeRetrieved     Outcome = "retrieved"      // a retrieval step finished
	// OutcomeError: horizon's own failure (infrastructure), not the
	// model's; the ladder does not count it against the tier.
	OutcomeError Outcome = "error"
)

// BlockerType is the type of a blocker: what kind of obstacle another
// attempt cannot overcome. Its JSON form is the bare string. Which types a
// worker may claim, and what each means in a prompt, is package horizon's
// (WorkerBlockerTypes, BlockerTypeChoices).
type BlockerType string

// The first three are what a worker may claim in its horizon-report. The
// others only horizon records, from trusted events (the agent platform's
// permission denial, a question the worker kept asking, the user's cancel,
// git's merge conflict): a worker claiming them is not believed.
const (
	BlockerMissingCredential  BlockerType = "missing_credential"  // a key, token or login the work needs is absent
	BlockerUnavailableService BlockerType = "unavailable_service" // an external service the work needs does not answer
	BlockerPlatformLimit      BlockerType = "platform_limit"      // a platform, framework or structural limit
	BlockerPermissionDenied   BlockerType = "permission_denied"   // supervisor only: a permission was denied
	// BlockerNeedsDecision: the worker asked a question only a person can
	// answer (OpenCode's question tool), again on a later attempt or with
	// a blocked report; the question is the evidence.
	BlockerNeedsDecision BlockerType = "needs_decision"
	BlockerCancelled     BlockerType = "cancelled" // supervisor only: the user cancelled
	// BlockerMergeConflict: the repository supervisor could not bring a
	// branch into horizon/roadmap because git found conflicts; only a
	// person can choose how they resolve.
	BlockerMergeConflict BlockerType = "merge_conflict"
	// BlockerStalled: a feature made run.stall_block_after attempts while
	// stalled, backing off between them, without progress.
	BlockerStalled BlockerType = "stalled"
)

// String returns the type's wire spelling.
func (t BlockerType) String() string { return string(t) }

// GatePart names a part of a gate made of several: the discovered gate
// (the gate script, or the detected command) and the configured
// gate.test_command and gate.lint_command, each run and judged on its own.
// Receipts, attempts and the ladder's ledger spell them the same.
type GatePart string

// Gate parts, in the order a gate runs them.
const (
	GatePartScript GatePart = "script" // the discovered gate: .horizon/verify.sh or the detected command
	GatePartTest   GatePart = "test"   // gate.test_command
	GatePartLint   GatePart = "lint"   // gate.lint_command
)

// Tests reports whether p's failures are test failures: the gate script's
// and the test command's are, the lint step's are not. Only test parts
// feed the failing-test set (vanished tests, the same failing set).
func (p GatePart) Tests() bool { return p != GatePartLint }

// DecodeString decodes a JSON string into dst; null leaves dst as it is,
// as encoding/json does for a plain string. Any other JSON value is an
// *json.UnmarshalTypeError for type string, to which the decoder adds the
// struct field: a model that writes "kind": 3 is told the field wants a
// string, not a Go type name it cannot know.
func DecodeString(b []byte, dst *string) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) == 0 || b[0] != '"' {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[string]()}
	}
	return json.Unmarshal(b, dst)
}

// jsonKind names a JSON value's kind as encoding/json's errors do.
func jsonKind(b []byte) string {
	switch {
	case len(b) == 0:
		return "value"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array"
	case b[0] == 't' || b[0] == 'f':
		return "bool"
	}
	return "number"
}
