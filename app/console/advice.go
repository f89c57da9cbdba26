package console

import "github.com/horizon/horizon/horizon"

// maxNotes is how many advisor notes the run's screen lists: the newest,
// so the plan tree above them keeps its room in 80×24.
const maxNotes = 5

// NotesOf is what the run's screen shows of the advisor: the notes that
// reached a worker (delivered or downgraded, at the severity the worker
// saw), newest last, of each feature's latest attempt that had advice
// (the one attempt of a one-feature run). Refuted, suppressed and failed
// notes stay in `horizon status --json`: they never reached the worker.
func NotesOf(s *horizon.RunState) []AdvisorNote {
	if s == nil {
		return nil
	}
	var notes []AdvisorNote
	add := func(feature string, attempts []horizon.Attempt) {
		for i := len(attempts) - 1; i >= 0; i-- {
			var got []AdvisorNote
			for _, r := range attempts[i].Advice {
				if !r.Reached() {
					continue
				}
				got = append(got, AdvisorNote{Feature: feature, AdviceNote: horizon.AdviceNote{
					Severity: r.Delivered, Note: r.Note, Evidence: r.Evidence, SuggestedPatch: r.SuggestedPatch,
				}})
			}
			if len(got) > 0 {
				notes = append(notes, got...)
				return
			}
		}
	}
	if s.Plan == nil {
		add("", s.Attempts)
	} else {
		for _, m := range s.Plan.Milestones {
			for _, f := range m.Features {
				add(f.ID, f.Attempts)
			}
		}
	}
	if len(notes) > maxNotes {
		notes = notes[len(notes)-maxNotes:]
	}
	return notes
}
