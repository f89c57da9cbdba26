package console

import (
	"strings"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// What a person is needed for is the core's one list (core.Needs), so the
// console, the web and the daily pass say it the same way.
type (
	NeedKind = core.NeedKind
	Need     = core.Need
)

// The kinds of need, in the order the list shows them.
const (
	NeedApproval = core.NeedApproval
	NeedBlocker  = core.NeedBlocker
	NeedCeiling  = core.NeedCeiling
	NeedStalled  = core.NeedStalled
)

// Needs lists what the open runs among rows wait on a person for; a run
// the engine has closed needs nobody, whatever its last state said.
func Needs(rows []RunRow, states map[string]*horizon.RunState, sups []horizon.SupervisorState) []Need {
	var open []*horizon.RunState
	for _, r := range rows {
		if s := states[r.ID]; r.Open() && s != nil {
			open = append(open, s)
		}
	}
	return append(core.Needs(open), core.SupervisorNeeds(sups)...)
}

func waitingFor(w *horizon.Checkpoint) string { return core.WaitingFor(w) }

func checkpoint(w *horizon.Checkpoint) string { return core.Checkpoint(w) }

// oneLine folds whitespace so a text fits one row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
