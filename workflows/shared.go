// Package workflows holds horizon's Temporal workflows. They are
// deterministic: every effect (git, gate, agent sessions, files) is an
// activity in package activities, and all state a person or script reads
// is in horizon.RunState, exposed by the status query while running and
// carried in the result (or the failure's details) once closed.
//
// One type per workflow, each built by a constructor that registers its
// own methods as handlers:
//
//   - SingleRunWorkflow (run.go) is a singleRun (single.go: the goal as
//     one feature); PlannedRunWorkflow (run.go) is a plannedRun
//     (planned.go: plan, features, integration gate; its approvals and
//     unblocks in checkpoints.go, its decisions in record.go). RunWorkflow,
//     the type of runs recorded before these two, dispatches to either.
//   - FeatureWorkflow is a featureRun (feature.go): one feature of a
//     planned run, with the recovery rotation and decomposition.
//   - PlanWorkflow (plan.go) plans a goal and returns the plan.
//   - TaskWorkflow (task.go) runs one background task: a specialist's
//     OpenCode session, continued after a crash, stopped by cancelling.
//   - LoopWorkflow (loop_run.go) is a loopRun: `horizon loop`, one
//     persistent session prompted up to N times, compacted between
//     activations, cancelled like a task.
//   - SpecialistDraftWorkflow (specialist_draft.go) has the lead draft a
//     specialist manifest (`horizon specialist generate`) and returns it
//     unchecked: the application validates and writes it.
//
// The verified-change loop itself (route, worker, gate, audit, commit) is
// change_loop.go, routed by the ladder in route.go; singleRun and featureRun drive
// it. Every wait (pause, ceiling, blocker, approval) goes through
// runStatus.waitIn (status.go); the run's own ceiling stops it in
// changeLoop.ready, the ladder's spend policy (day ceiling, throttle) in
// changeLoop.route. The status query and the pause and ceiling updates every run
// has are controls.go.
package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
)

// Names shared by workflows, the worker and the CLI.
const (
	// PlannedRunWorkflowName is the workflow type of a planned run (one
	// `horizon start` planned into features, or a supervisor's run).
	PlannedRunWorkflowName = "PlannedRunWorkflow"
	// SingleRunWorkflowName is the workflow type of a one-feature run.
	SingleRunWorkflowName = "SingleRunWorkflow"
	// RunWorkflowName is the workflow type every run had before each kind
	// got its own: runs recorded as one still run as one (RunWorkflow).
	RunWorkflowName = "RunWorkflow"
	// QueryStatus returns the run's horizon.RunState.
	QueryStatus = "status"
	// UpdateSetCeiling sets the run's spend ceiling (USD, 0: none); a run
	// paused at its ceiling goes on once the ceiling is above its spend.
	UpdateSetCeiling = "set-ceiling"
	// UpdateUnblock lets a run blocked on a typed blocker go on (Unblock).
	UpdateUnblock = "unblock"
	// UpdateSkip leaves a planned run's feature out, as a person's
	// decision with a note (Skip); a running feature is cancelled first.
	UpdateSkip = "skip"
	// UpdatePause holds the run before its next attempt (the step in
	// flight finishes); UpdateResume lets it go on.
	UpdatePause  = "pause"
	UpdateResume = "resume"
	// UpdateSetDayCeiling sets the daily ceiling this run observes (USD, 0: none).
	UpdateSetDayCeiling = "set-day-ceiling"
	// UpdateApprove lets a run waiting at a checkpoint go on (Approve).
	UpdateApprove = "approve"
	// FeatureWorkflowName is the workflow type of one feature of a planned
	// run: a child of its PlannedRunWorkflow (or RunWorkflow).
	FeatureWorkflowName = "FeatureWorkflow"
	// PlanWorkflowName is the workflow type of `horizon plan`.
	PlanWorkflowName = "PlanWorkflow"
	// SignalControl carries a run's pause and ceilings to its running
	// feature (Control).
	SignalControl = "control"
	// SignalSkipFeature tells a running feature, just before its run
	// cancels it, that a person skipped it (Skip): it ends with its
	// result (FeatureOutcomeSkipped) rather than as cancelled, so the
	// decisions it made reach the run.
	SignalSkipFeature = "skip-feature"
	// SignalOutage carries what a retrying activity waits out
	// (activities.OutageReport) to the workflow that scheduled it, and
	// from a feature's activity to its run too.
	SignalOutage = activities.SignalOutage
	// SignalSessionHost carries which worker runs a watched session
	// (activities.SessionHost) to the workflow that scheduled it: the
	// advisor's watchdog runs on that worker's host queue.
	SignalSessionHost = activities.SignalSessionHost
	// SignalProgress is the signal a feature sends its run after each
	// attempt (Progress), so the run's status shows attempts as they happen.
	SignalProgress = "feature-progress"
	// DefaultFeature is the single feature of a run until plans arrive.
	DefaultFeature = "f1"
	// SupervisorWorkflowName is the workflow type of one repository's
	// supervisor (`horizon supervisor start`).
	SupervisorWorkflowName = "SupervisorWorkflow"
	// UpdateQueueAdd queues a person's goal (horizon.QueueEntry); it
	// returns the entry as stored.
	UpdateQueueAdd = "queue-add"
	// UpdateQueueRemove drops a queue entry by ID.
	UpdateQueueRemove = "queue-rm"
	// UpdateQueueMove moves a queue entry (QueueMove).
	UpdateQueueMove = "queue-move"
	// UpdateStop ends a supervisor; its runs go on.
	UpdateStop = "stop"
	// SignalRunStatus carries a supervised run's status change to its
	// supervisor (RunStatusSignal).
	SignalRunStatus = "run-status"
	// SignalDecompose asks a supervisor to decompose roadmap items ahead
	// (the nightly schedule).
	SignalDecompose = "decompose"
	// SignalStalled flags a run's stalled goals (StalledSignal).
	SignalStalled = "stalled"
	// DecomposeWorkflowName is the nightly schedule's workflow: it asks a
	// supervisor to decompose ahead.
	DecomposeWorkflowName = "DecomposeWorkflow"
	// DailyPassWorkflowName is the daily schedule's workflow: the report.
	DailyPassWorkflowName = "DailyPassWorkflow"
	// TaskWorkflowName is the workflow type of one background task
	// (`horizon task run`); its workflow ID is TaskWorkflowID(task).
	TaskWorkflowName = "TaskWorkflow"
	// LoopWorkflowName is the workflow type of one `horizon loop`; its
	// workflow ID is the loop's ID (NewLoopID).
	LoopWorkflowName = "LoopWorkflow"
	// SpecialistDraftWorkflowName is the workflow type of one `horizon
	// specialist generate`: the lead's draft of a manifest.
	SpecialistDraftWorkflowName = "SpecialistDraftWorkflow"
	// QueryLoop returns a loop's activities.LoopResult as it stands.
	QueryLoop = "loop"
	// MemoGoal and MemoRepo are set on every run for `horizon list`.
	MemoGoal = "goal"
	MemoRepo = "repo"
)

// RunWorkflowTypes are the workflow types of runs: whoever lists runs
// lists all of them.
var RunWorkflowTypes = []string{RunWorkflowName, PlannedRunWorkflowName, SingleRunWorkflowName}

// Search attributes, so the Web UI and `horizon list` can filter runs by
// repository and status. The daemon registers them with the engine; the CLI
// sets them only when the namespace has them (RunInput.SearchAttributes).
var (
	SearchRepo   = temporal.NewSearchAttributeKeyKeyword("HorizonRepo")
	SearchStatus = temporal.NewSearchAttributeKeyKeyword("HorizonStatus")
	// SearchStalled is set on a run the daily pass found stalled.
	SearchStalled = temporal.NewSearchAttributeKeyBool("HorizonStalled")
)

// SearchAttributeTypes are horizon's search attributes, for the daemon to
// register with the engine.
func SearchAttributeTypes() map[string]enumspb.IndexedValueType {
	return map[string]enumspb.IndexedValueType{
		SearchRepo.GetName():    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		SearchStatus.GetName():  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		SearchStalled.GetName(): enumspb.INDEXED_VALUE_TYPE_BOOL,
	}
}

// Registry is where workflows are registered: a worker or a replayer.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// Register registers every workflow type under its name, so the daemon,
// remote workers and the replay tests know the same set.
func Register(r Registry) {
	for name, fn := range map[string]any{
		RunWorkflowName:             RunWorkflow,
		PlannedRunWorkflowName:      PlannedRunWorkflow,
		SingleRunWorkflowName:       SingleRunWorkflow,
		PlanWorkflowName:            PlanWorkflow,
		FeatureWorkflowName:         FeatureWorkflow,
		SupervisorWorkflowName:      SupervisorWorkflow,
		DecomposeWorkflowName:       DecomposeWorkflow,
		DailyPassWorkflowName:       DailyPassWorkflow,
		TaskWorkflowName:            TaskWorkflow,
		LoopWorkflowName:            LoopWorkflow,
		SpecialistDraftWorkflowName: SpecialistDraftWorkflow,
	} {
		r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name})
	}
}

// TaskWorkflowID is the workflow ID of background task id.
func TaskWorkflowID(id string) string { return "task-" + id }

// Failure types of a run that ends without an accepted change. The
// failure's details hold the final horizon.RunState.
const (
	FailureRunFailed  = "RunFailed"
	FailureRunBlocked = "RunBlocked"
	FailureBadInput   = "RunBadInput"
)

// Change IDs for workflow.GetVersion: each marks a change to the commands a
// workflow issues, so runs started by an older horizon replay unchanged.
const (
	// changeBaselineGate adds the baseline gate run before attempt 1.
	changeBaselineGate = "baseline-gate"
	// changeHandoff writes handoff.md at the end of a run.
	changeHandoff = "handoff"
	// changeDropLanes removes a run's lanes when it ends.
	changeDropLanes = "drop-lanes"
	// changeAdvisor runs the advisor's watchdog beside a worker session
	// (advisor.enabled).
	changeAdvisor = "advisor-watchdog"
	// changeResearchModel runs an attempt under the research recovery
	// strategy on the research role's model.
	changeResearchModel = "research-model"
	// changeResearchNotes runs the researcher (the Research activity:
	// read-only, webfetch allowed) before the worker of an attempt under
	// the research recovery strategy, and cites its notes in the brief.
	changeResearchNotes = "research-notes"
	// changeAskedBlocker blocks a feature whose worker asks the same
	// question or is denied the same permission on a second attempt, or
	// asks and reports blocked (changeLoop.askedBlocker).
	changeAskedBlocker = "asked-blocker"
	// changePlanLane removes a plan's lane (horizon plan, a supervisor's
	// decomposition) when the lead is done.
	changePlanLane = "plan-drops-lane"
	// changeRunKinds has a supervisor start its runs as
	// PlannedRunWorkflow rather than RunWorkflow.
	changeRunKinds = "run-kind-types"
	// changeDecomposeAside has a supervisor decompose a roadmap item beside
	// its loop (queued goals start, run status signals and updates are
	// handled meanwhile) under a deadline (SupervisorInput.DecomposeTimeout).
	changeDecomposeAside = "supervisor-decompose-aside"
	// changeStopEnds has a supervisor's stop update cancel a decomposition
	// in flight and answer once the supervisor has ended (or say what it
	// still waits for).
	changeStopEnds = "supervisor-stop-ends"
	// changeDispositions gives every finding of an audit a disposition,
	// asking the lead for the ones the rule leaves open (review.go).
	changeDispositions = "finding-dispositions"
	// changeQuickBrief runs an attempt whose Decision Brief holds only
	// small, explicit fixes on the quick role's model.
	changeQuickBrief = "quick-decision-brief"
	// changeMilestoneRule passes a milestone's checkpoint by rule
	// (run.auto_approve_milestones).
	changeMilestoneRule = "milestone-rule"
	// changeLocalSteps runs a planned run's and its features' short git
	// and file steps (lanes, commits, plan.json, the handoff) as local
	// activities, sends no progress signal for a feature's last attempt
	// (its result carries it), and takes the changes before it as made
	// without a marker each (version, steps.go).
	changeLocalSteps = "local-steps"
)

// Approve is the argument of UpdateApprove.
type Approve struct {
	// Subject, when set, must name the checkpoint waited at ("plan", a
	// milestone or a feature ID), so an approval meant for one checkpoint
	// cannot pass another.
	Subject string
	Note    string
}

// Control is what a run forwards to its running feature when a person
// pauses, resumes or changes a ceiling.
type Control struct {
	Paused     bool
	Ceiling    float64
	DayCeiling float64
	// Unblocks counts a person's unblocks of the running feature while it
	// backed off, stalled (stall.go); Note is the latest one's note.
	Unblocks int    `json:",omitempty"`
	Note     string `json:",omitempty"`
}

// Skip is the argument of UpdateSkip.
type Skip struct {
	Feature string // the feature's ID
	Note    string // why, for the handoff
}

// Unblock is the argument of UpdateUnblock.
type Unblock struct {
	Feature string // optional: the blocked feature's ID
	Note    string // what changed, for the next attempt
}
