package activities

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/horizon/horizon/horizon"
)

// Summaries a session hands back are bounded before they leave their
// activity (horizon.MaxSummary): the workflow keeps them in its state, so
// in Temporal history, and shows them in status, the handoff and the web.
// A longer text is written in full to runs/<run>/summaries/ and replaced by
// its head and a marker naming that file (horizon.BoundSummary). File names
// are fixed by run, feature, attempt, role and field, so a retried
// activity rewrites the same file.

// summaries bounds the texts of one run's hand-backs.
type summaries struct {
	dir string // the run's directory (Activities.runDir)
	run string // its ID, for the path the marker names
}

// summaryName is a hand-back's file name (without .md): feature, attempt,
// role and field, each kept to letters, digits, '.', '_' and '-', so an ID
// a model wrote cannot leave the summaries folder.
func summaryName(feature string, attempt int, role, field string) string {
	return fileSafe(feature) + "-" + strconv.Itoa(attempt) + "-" + fileSafe(role) + "-" + fileSafe(field)
}

// fileSafe is s with every rune other than an ASCII letter, digit, '.',
// '_' or '-' replaced by '_' ("_" for an empty s).
func fileSafe(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// bound leaves *text as it is when it fits horizon.MaxSummary; otherwise
// it writes the full text to summaries/<name>.md in the run's directory
// (atomically) and replaces *text with its bounded head naming that file.
// A failed write leaves *text as it was.
func (s summaries) bound(name string, text *string) error {
	b, err := s.keep(name, *text)
	if err == nil {
		*text = b
	}
	return err
}

// keep is text bounded, naming summaries/<name>.md, which it writes when
// text does not fit; the bounded text even when the write fails.
func (s summaries) keep(name, text string) (string, error) {
	if horizon.FitsSummary(text) {
		return text, nil
	}
	file := name + ".md"
	var err error
	if werr := writeArtifact(filepath.Join(s.dir, "summaries", file), []byte(text)); werr != nil {
		err = fmt.Errorf("summary %s of run %s: %w", file, s.run, werr)
	}
	return horizon.BoundSummary(text, path.Join("runs", s.run, "summaries", file)), err
}

// boundOutput bounds what a session hands back (dir: its run's
// directory): the worker's report summary, the auditor's finding notes,
// the explorer's notes (the next attempt's guidance) and the lead's plan
// assumptions. Called on every output before it leaves AgentSession.
func boundOutput(dir string, in SessionInput, out *SessionOutput) error {
	s := summaries{dir: dir, run: in.RunID}
	name := func(field string) string { return summaryName(in.Feature, in.Attempt, string(in.Role), field) }
	if out.Report != nil {
		if err := s.bound(name("summary"), &out.Report.Summary); err != nil {
			return err
		}
	}
	if out.Audit != nil {
		for i := range out.Audit.Findings {
			if err := s.bound(name(fmt.Sprintf("finding-%d", i+1)), &out.Audit.Findings[i].Note); err != nil {
				return err
			}
		}
	}
	if out.Plan != nil {
		for i := range out.Plan.Assumptions {
			if err := s.bound(name(fmt.Sprintf("assumption-%d", i+1)), &out.Plan.Assumptions[i]); err != nil {
				return err
			}
		}
	}
	return s.bound(name("notes"), &out.Notes)
}

// boundDiagnosis bounds the reader's diagnosis (the next attempt's
// guidance) before it leaves Diagnose; feature is the attempt's ("f1" for
// a one-feature run).
func boundDiagnosis(dir, run, feature string, attempt int, out *DiagnoseOutput) error {
	return summaries{dir: dir, run: run}.bound(summaryName(feature, attempt, "reader", "diagnosis"), &out.Text)
}

// boundAdvice bounds the notes of an advisor's judged records (in place),
// as soon as they are judged: the records go into the watchdog's
// heartbeat, which a timed-out attempt leaves in history, and into its
// output. The note delivered to the worker is the bounded one. A note
// whose full text cannot be written is bounded all the same (the
// watchdog is fail-open); the error says which.
func boundAdvice(dir string, in AdvisorInput, recs []horizon.AdviceRecord) error {
	s := summaries{dir: dir, run: in.RunID}
	var errs []error
	for i := range recs {
		var err error
		recs[i].Note, err = s.keep(summaryName(in.Feature, in.Attempt, "advisor", "note-"+recs[i].ID), recs[i].Note)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
