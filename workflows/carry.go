package workflows

import (
	"time"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// Carry is a planned run's state carried into the next history by
// continue-as-new. Transcripts, diffs and receipts stay in files; this is
// what the workflow itself needs to go on exactly where it was.
type Carry struct {
	State horizon.RunState
	Setup Setup
	// ChildSeq numbers feature workflows, so every child gets a fresh ID.
	ChildSeq int
	// Approved lists the checkpoints a person approved ("plan", milestone
	// and feature IDs).
	Approved []string
	// Notes holds unblock notes not yet handed to an attempt, by feature.
	Notes map[string]string
	// NoDecompose lists features whose decomposition was not valid: they
	// go on shrinking themselves under the decomposition strategy.
	NoDecompose []string
	// IntegrationTries counts final integration gates that failed.
	IntegrationTries int
	// Features counts features finished in all histories.
	Features int
	// Unblocked is when a person last unblocked each feature: a stall is
	// judged from there (stall.go).
	Unblocked map[string]time.Time `json:",omitempty"`
	// Unblocks counts a person's unblocks of a running feature that backed
	// off, stalled (Control.Unblocks); UnblockNote is the latest note.
	Unblocks    int    `json:",omitempty"`
	UnblockNote string `json:",omitempty"`
}

// Setup is what preflight resolved for a run, handed to its features.
type Setup struct {
	Models       map[horizon.Role]string
	Paid         map[horizon.Role]bool
	Tiers        ladder.Availability
	LocalContext int
	// Lead is the model that plans and decomposes; LeadPaid says it is
	// metered (its sessions take the paid queue).
	Lead     string
	LeadPaid bool
	// Local is, per role, the local model used near a spend ceiling
	// instead of a metered one (activities.PreflightOutput.Local).
	Local map[horizon.Role]string
	// Gate is the run's gate record (activities.PreflightOutput.GateRecord):
	// every gate run of the run and its features restores and runs it.
	Gate *horizon.GateRecord `json:",omitempty"`
}

// queue is the task queue for a role's sessions: the paid queue for
// metered models, the run's own otherwise ("" means the workflow's queue).
func (s Setup) queue(role horizon.Role, paidQueue string) string {
	if s.Paid[role] && paidQueue != "" {
		return paidQueue
	}
	return ""
}

// leadQueue is the task queue of the lead's sessions.
func (s Setup) leadQueue(paidQueue string) string {
	if s.LeadPaid {
		return paidQueue
	}
	return ""
}
