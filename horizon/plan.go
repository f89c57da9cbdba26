package horizon

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// A plan is what the lead turned the goal into: ordered milestones of
// atomic features, each small enough for one worker brief and each with
// acceptance criteria the auditor judges against. The plan lives in the
// run's workflow state (Temporal history), so everything here is a value
// with plain JSON and pure methods: a replayed workflow must rebuild
// exactly the same plan and pick exactly the same next feature.

// FeatureStatus is where a feature is in the verified-change loop.
//
// There is no "failed": in full autonomy a failing gate, a rejecting audit
// or a protocol error leaves the feature runnable (the next attempt gets a
// different recovery strategy); only a typed, evidenced blocker pauses it.
type FeatureStatus string

// Feature statuses.
const (
	FeaturePending    FeatureStatus = "pending"    // not started, or back in line after an unblock
	FeatureRunning    FeatureStatus = "running"    // attempts under way
	FeatureAccepted   FeatureStatus = "accepted"   // gate passed (with a receipt), auditor accepted, committed
	FeatureBlocked    FeatureStatus = "blocked"    // paused on a typed blocker with evidence
	FeatureSkipped    FeatureStatus = "skipped"    // deliberately left out (by a human or a replan)
	FeatureDecomposed FeatureStatus = "decomposed" // replaced by its sub-features, which follow it
)

// MilestoneStatus summarises a milestone's features. It is derived (see
// Plan.Refresh) and stored only so plan.json reads without recomputation.
type MilestoneStatus string

// Milestone statuses.
const (
	MilestonePending MilestoneStatus = "pending" // nothing started
	MilestoneRunning MilestoneStatus = "running" // under way, work still runnable
	MilestoneDone    MilestoneStatus = "done"    // every feature accepted or skipped
	MilestoneBlocked MilestoneStatus = "blocked" // nothing runnable: what is left is blocked or waits on a blocked feature
)

// Plan is a run's plan: the goal, its milestones in order and the lead's
// assumptions. Revision counts structural changes (1 when planned; each
// decomposition adds one) so a status view can tell a replanned run.
type Plan struct {
	Goal        string      `json:"goal"`
	Milestones  []Milestone `json:"milestones"`
	Ambiguity   Ambiguity   `json:"ambiguity"`
	Assumptions []string    `json:"assumptions,omitempty"`
	Revision    int         `json:"revision"`
	// Warnings are legal but weak spots of the plan (a feature without
	// acceptance criteria), shown to the user rather than retried.
	Warnings []string `json:"warnings,omitempty"`
}

// Milestone groups features that land together; features run in order.
type Milestone struct {
	ID       string          `json:"id"`
	Title    string          `json:"title"`
	Features []Feature       `json:"features"`
	Status   MilestoneStatus `json:"status"`
}

// Feature is one atomic unit of work: one worker brief per attempt, judged
// by the gate and the auditor against its acceptance criteria, confined to
// its Paths allow-list.
//
// Features of a milestone are independent unless DependsOn names others: a
// blocked feature then holds back only the features that depend on it.
type Feature struct {
	ID         string      `json:"id"`
	Title      string      `json:"title"`
	Kind       FeatureKind `json:"kind"`
	Acceptance []string    `json:"acceptance,omitempty"`
	// Paths is the allow-list: slash-separated globs relative to the
	// repository root (path.Match syntax, "**" for any depth).
	Paths     []string `json:"paths,omitempty"`
	DependsOn []string `json:"depends_on,omitempty"`
	// Parent is the decomposed feature this one is a part of.
	Parent string        `json:"parent,omitempty"`
	Status FeatureStatus `json:"status"`
	// Strategy is the recovery strategy of the next attempt (StrategyFor
	// of the attempts so far); empty for a fresh feature.
	Strategy Strategy `json:"strategy,omitempty"`
	Blocker  *Blocker `json:"blocker,omitempty"`
	// Commit is the accepted change on the run's integration branch.
	Commit string `json:"commit,omitempty"`
	// ReceiptIDs are the gate receipts of every attempt, in order: the
	// evidence trail the handoff cites.
	ReceiptIDs []string `json:"receipt_ids,omitempty"`
	// Note is the latest human or supervisor note: why it was skipped,
	// what an unblock said.
	Note     string    `json:"note,omitempty"`
	Attempts []Attempt `json:"attempts,omitempty"`
}

// maxIDLen bounds IDs: they become parts of git branch names.
const maxIDLen = 64

// PlanFromBlock validates the lead's plan and turns it into a Plan at
// revision 1 with every feature pending. Enumerations are normalised
// (" Bounded" → "bounded", "high" → "HIGH"); lists are trimmed of blank
// entries.
//
// An invalid plan is rejected with a *PlanError listing every problem,
// each naming its milestone or feature, for the caller to hand back to the
// planner: no milestones, a milestone without title or features, a
// feature ID that is missing, duplicated or unusable in a branch name, a
// missing title, a kind or ambiguity out of range, an allow-list pattern
// that is absolute or climbs out of the repository, a dependency on an
// unknown feature or a dependency cycle. A feature without acceptance
// criteria is allowed but recorded in Plan.Warnings.
func PlanFromBlock(goal string, b PlanBlock) (Plan, error) {
	var bad []string
	p := Plan{Goal: strings.TrimSpace(goal), Revision: 1, Assumptions: cleanList(b.Assumptions)}
	if p.Goal == "" {
		bad = append(bad, "the goal is empty")
	}
	if a, err := ParseAmbiguity(string(b.Ambiguity)); err != nil {
		bad = append(bad, err.Error())
	} else {
		p.Ambiguity = a
	}
	if len(b.Milestones) == 0 {
		bad = append(bad, "the plan has no milestones")
	}
	milestoneIDs := map[string]string{}
	featureIDs := map[string]string{}
	for mi, bm := range b.Milestones {
		m := Milestone{ID: strings.TrimSpace(bm.ID), Title: oneLine(bm.Title)}
		if m.ID == "" {
			m.ID = fmt.Sprintf("m%d", mi+1)
		}
		where := fmt.Sprintf("milestone %d (id %q)", mi+1, m.ID)
		if msg := checkID(m.ID); msg != "" {
			bad = append(bad, where+": "+msg)
		} else if prev, dup := milestoneIDs[m.ID]; dup {
			bad = append(bad, fmt.Sprintf("%s: id is already used by %s", where, prev))
		} else {
			milestoneIDs[m.ID] = where
		}
		if m.Title == "" {
			bad = append(bad, where+" has no title")
		}
		if len(bm.Features) == 0 {
			bad = append(bad, where+" has no features")
		}
		for fi, bf := range bm.Features {
			f := Feature{
				ID:         strings.TrimSpace(bf.ID),
				Title:      oneLine(bf.Title),
				Kind:       FeatureKind(strings.ToLower(strings.TrimSpace(string(bf.Kind)))),
				Acceptance: cleanList(bf.Acceptance),
				Paths:      cleanList(bf.Paths),
				DependsOn:  uniq(cleanList(bf.DependsOn)),
				Status:     FeaturePending,
			}
			fwhere := fmt.Sprintf("milestone %d feature %d", mi+1, fi+1)
			if f.ID != "" {
				fwhere = fmt.Sprintf("feature %q (milestone %d)", f.ID, mi+1)
			}
			bad = append(bad, checkFeature(fwhere, f)...)
			if f.ID != "" {
				if prev, dup := featureIDs[f.ID]; dup {
					bad = append(bad, fmt.Sprintf("%s: id is already used by %s", fwhere, prev))
				} else {
					featureIDs[f.ID] = fmt.Sprintf("milestone %d feature %d", mi+1, fi+1)
				}
			}
			if len(f.Acceptance) == 0 {
				p.Warnings = append(p.Warnings, fwhere+" has no acceptance criteria: the auditor can judge only its title")
			}
			m.Features = append(m.Features, f)
		}
		p.Milestones = append(p.Milestones, m)
	}
	for _, f := range p.features() {
		for _, d := range f.DependsOn {
			switch _, ok := featureIDs[d]; {
			case d == f.ID:
				bad = append(bad, fmt.Sprintf("feature %q depends on itself", f.ID))
			case !ok:
				bad = append(bad, fmt.Sprintf("feature %q depends on unknown feature %q", f.ID, d))
			}
		}
	}
	if len(bad) == 0 {
		if cyc := findCycle(p.features()); cyc != nil {
			bad = append(bad, "dependency cycle: "+strings.Join(cyc, " → "))
		}
	}
	if len(bad) > 0 {
		return Plan{}, &PlanError{Problems: bad}
	}
	p.Refresh()
	return p, nil
}

// checkFeature returns what is wrong with one feature on its own.
func checkFeature(where string, f Feature) []string {
	var bad []string
	if f.ID == "" {
		bad = append(bad, where+" has no id")
	} else if msg := checkID(f.ID); msg != "" {
		bad = append(bad, where+": "+msg)
	}
	if f.Title == "" {
		bad = append(bad, where+" has no title")
	}
	if _, err := ParseFeatureKind(string(f.Kind)); err != nil {
		bad = append(bad, where+": "+err.Error())
	}
	for _, pat := range f.Paths {
		if !validPattern(pat) {
			bad = append(bad, fmt.Sprintf("%s: path %q is not a relative slash-separated glob inside the repository", where, pat))
		}
	}
	return bad
}

// checkID returns why id cannot name a feature or milestone, or "". IDs
// end up in lane branch names (horizon-lanes/<run>/<feature>), file names
// and CLI arguments, so they stay within what git and shells take as is.
func checkID(id string) string {
	if len(id) > maxIDLen {
		return fmt.Sprintf("id is longer than %d characters", maxIDLen)
	}
	for i, r := range id {
		alnum := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		if i == 0 && !alnum {
			return "id must start with a letter or digit"
		}
		if !alnum && r != '.' && r != '_' && r != '-' {
			return fmt.Sprintf("id may hold only letters, digits, '.', '_' and '-' (found %q)", r)
		}
	}
	if strings.Contains(id, "..") || strings.HasSuffix(id, ".") || strings.HasSuffix(id, ".lock") {
		return "id is not usable in a git branch name"
	}
	return ""
}

// validPattern accepts an allow-list glob the way the ladder matches it:
// relative, slash-separated, no "." or ".." segments, path.Match syntax.
func validPattern(p string) bool {
	p = strings.TrimPrefix(strings.TrimSpace(p), "./")
	p = strings.TrimRight(p, "/")
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." {
			return false
		}
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return false
		}
	}
	return true
}

// findCycle returns a dependency cycle (its IDs, the first repeated at the
// end), or nil. A decomposed feature depends on its sub-features, since it
// is satisfied only when they are.
func findCycle(fs []Feature) []string {
	edges := map[string][]string{}
	var order []string
	for _, f := range fs {
		order = append(order, f.ID)
		edges[f.ID] = append(edges[f.ID], f.DependsOn...)
		if f.Parent != "" {
			edges[f.Parent] = append(edges[f.Parent], f.ID)
		}
	}
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(id string) []string
	visit = func(id string) []string {
		color[id] = grey
		stack = append(stack, id)
		for _, d := range edges[id] {
			switch color[d] {
			case grey:
				i := slices.Index(stack, d)
				return append(slices.Clone(stack[i:]), d)
			case white:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return nil
	}
	for _, id := range order {
		if color[id] == white {
			if c := visit(id); c != nil {
				return c
			}
		}
	}
	return nil
}

// features returns copies of every feature in plan order.
func (p Plan) features() []Feature {
	var out []Feature
	for _, m := range p.Milestones {
		out = append(out, m.Features...)
	}
	return out
}

// Feature returns the feature with the given ID, for reading or changing
// in place.
func (p *Plan) Feature(id string) (*Feature, bool) {
	for mi := range p.Milestones {
		for fi := range p.Milestones[mi].Features {
			if p.Milestones[mi].Features[fi].ID == id {
				return &p.Milestones[mi].Features[fi], true
			}
		}
	}
	return nil, false
}

// locate returns the indexes of the feature with the given ID.
func (p Plan) locate(id string) (mi, fi int, ok bool) {
	for mi, m := range p.Milestones {
		for fi, f := range m.Features {
			if f.ID == id {
				return mi, fi, true
			}
		}
	}
	return 0, 0, false
}

// pending treats the zero status as pending, so a feature written by hand
// or by an older plan.json is still scheduled.
func (s FeatureStatus) pending() bool { return s == FeaturePending || s == "" }

// Next returns the feature to work on now, as milestone and feature
// indexes. A running feature comes first (at most one is active; after a
// crash it is resumed, not restarted beside another). Otherwise it is the
// first pending feature, milestones in order and features in order, whose
// dependencies are all accepted. Accepted, blocked, skipped and decomposed
// features are passed over, so a blocked feature does not stop later
// independent ones; a feature that depends on a blocked or skipped one is
// not runnable. ok is false when nothing is runnable: the plan is Done, or
// what is left is blocked or waits on something blocked.
func (p Plan) Next() (milestone, feature int, ok bool) {
	for mi, m := range p.Milestones {
		for fi, f := range m.Features {
			if f.Status == FeatureRunning {
				return mi, fi, true
			}
		}
	}
	r := p.resolver()
	for mi, m := range p.Milestones {
		for fi, f := range m.Features {
			if f.Status.pending() && r.ready(f) {
				return mi, fi, true
			}
		}
	}
	return 0, 0, false
}

// Done reports whether every feature is accepted or skipped (decomposed
// ones count through their sub-features): the plan has nothing left to
// run and nothing blocked.
func (p Plan) Done() bool {
	for _, f := range p.features() {
		switch f.Status {
		case FeatureAccepted, FeatureSkipped, FeatureDecomposed:
		default:
			return false
		}
	}
	return true
}

// PlanCounts counts features by status. Decomposed parents are counted
// apart: their work is counted in their sub-features.
type PlanCounts struct {
	Total      int `json:"total"` // every feature, decomposed parents included
	Pending    int `json:"pending"`
	Running    int `json:"running"`
	Accepted   int `json:"accepted"`
	Blocked    int `json:"blocked"`
	Skipped    int `json:"skipped"`
	Decomposed int `json:"decomposed"`
	// Waiting is how many of the pending features cannot run because a
	// feature they depend on is blocked or skipped.
	Waiting int `json:"waiting"`
}

// Work is the number of features that carry work (Total minus decomposed).
func (c PlanCounts) Work() int { return c.Total - c.Decomposed }

// Counts counts the plan's features by status.
func (p Plan) Counts() PlanCounts {
	var c PlanCounts
	r := p.resolver()
	for _, f := range p.features() {
		c.Total++
		switch {
		case f.Status.pending():
			c.Pending++
			if len(r.heldBy(f)) > 0 {
				c.Waiting++
			}
		case f.Status == FeatureRunning:
			c.Running++
		case f.Status == FeatureAccepted:
			c.Accepted++
		case f.Status == FeatureBlocked:
			c.Blocked++
		case f.Status == FeatureSkipped:
			c.Skipped++
		case f.Status == FeatureDecomposed:
			c.Decomposed++
		}
	}
	return c
}

// HeldBy returns the blocked or skipped features that keep the feature
// from running, following dependencies transitively (and through
// decomposed features to their parts), in plan order.
func (p Plan) HeldBy(id string) []string {
	_, _, ok := p.locate(id)
	if !ok {
		return nil
	}
	r := p.resolver()
	return r.heldBy(r.byID[id])
}

// DependentsOf returns the features not yet done that feature id holds
// back (HeldBy names it), in plan order.
func (p Plan) DependentsOf(id string) []string {
	var out []string
	for _, f := range p.features() {
		if f.ID != id && f.Status.pending() && slices.Contains(p.HeldBy(f.ID), id) {
			out = append(out, f.ID)
		}
	}
	return out
}

// resolver answers dependency questions over one snapshot of the plan.
type resolver struct {
	byID     map[string]Feature
	children map[string][]string
	order    map[string]int
}

func (p Plan) resolver() resolver {
	r := resolver{byID: map[string]Feature{}, children: map[string][]string{}, order: map[string]int{}}
	for i, f := range p.features() {
		r.byID[f.ID] = f
		r.order[f.ID] = i
		if f.Parent != "" {
			r.children[f.Parent] = append(r.children[f.Parent], f.ID)
		}
	}
	return r
}

// ready reports whether all of f's dependencies are satisfied.
func (r resolver) ready(f Feature) bool {
	for _, d := range f.DependsOn {
		if !r.satisfied(d, map[string]bool{}) {
			return false
		}
	}
	return true
}

// satisfied: accepted, or decomposed with every part satisfied. Unknown
// IDs and cycles (only possible in a hand-edited plan) are unsatisfied.
func (r resolver) satisfied(id string, seen map[string]bool) bool {
	if seen[id] {
		return false
	}
	seen[id] = true
	f, ok := r.byID[id]
	switch {
	case !ok:
		return false
	case f.Status == FeatureAccepted:
		return true
	case f.Status == FeatureDecomposed:
		kids := r.children[id]
		if len(kids) == 0 {
			return false
		}
		for _, k := range kids {
			if !r.satisfied(k, seen) {
				return false
			}
		}
		return true
	}
	return false
}

// heldBy lists the blocked or skipped features under f's dependencies.
func (r resolver) heldBy(f Feature) []string {
	// out collects in walk order and is sorted below: no map iteration, so
	// workflows can call this deterministically.
	var out []string
	seen := map[string]bool{}
	var walk func(id string)
	walk = func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		d, ok := r.byID[id]
		if !ok {
			return
		}
		switch d.Status {
		case FeatureBlocked, FeatureSkipped:
			out = append(out, id) // seen guards against a second append
			return
		case FeatureAccepted:
			return
		case FeatureDecomposed:
			for _, k := range r.children[id] {
				walk(k)
			}
		}
		for _, dd := range d.DependsOn {
			walk(dd)
		}
	}
	for _, d := range f.DependsOn {
		walk(d)
	}
	slices.SortFunc(out, func(a, b string) int { return r.order[a] - r.order[b] })
	if len(out) == 0 {
		return nil
	}
	return out
}

// Refresh recomputes every milestone's status from its features. The
// mutating methods call it; a caller that edits features directly should
// too.
func (p *Plan) Refresh() {
	r := p.resolver()
	for mi := range p.Milestones {
		m := &p.Milestones[mi]
		var done, running, runnable, stuck, progress bool
		done = true
		for _, f := range m.Features {
			switch {
			case f.Status == FeatureDecomposed:
				progress = true
				continue
			case f.Status == FeatureAccepted || f.Status == FeatureSkipped:
				progress = true
				continue
			case f.Status == FeatureRunning:
				running = true
			case f.Status == FeatureBlocked:
				stuck = true
			case f.Status.pending():
				if r.ready(f) {
					runnable = true
				} else if len(r.heldBy(f)) > 0 {
					stuck = true
				}
			}
			done = false
		}
		switch {
		case done:
			m.Status = MilestoneDone
		case running || (runnable && progress):
			m.Status = MilestoneRunning
		case runnable:
			m.Status = MilestonePending
		case stuck:
			m.Status = MilestoneBlocked
		case progress:
			m.Status = MilestoneRunning
		default:
			m.Status = MilestonePending // waits on a feature of a later milestone
		}
	}
}

// Start marks a pending feature running (idempotent for a running one).
func (p *Plan) Start(id string) error {
	f, err := p.mustFeature(id)
	if err != nil {
		return err
	}
	if !f.Status.pending() && f.Status != FeatureRunning {
		return fmt.Errorf("start feature %q (%s): %w", id, f.Status, ErrFeatureState)
	}
	f.Status = FeatureRunning
	p.Refresh()
	return nil
}

// RecordAttempt stores a finished (or running) attempt on a feature and
// sets the strategy of the next attempt from the count of attempts so far
// (interval is recovery_escalation_interval; see StrategyFor). An attempt
// with the same N as a recorded one replaces it, so an activity retried
// after a crash does not count twice. Its gate receipt ID joins the
// feature's receipt trail.
func (p *Plan) RecordAttempt(id string, a Attempt, interval int) error {
	f, err := p.mustFeature(id)
	if err != nil {
		return err
	}
	switch f.Status {
	case FeatureAccepted, FeatureDecomposed, FeatureSkipped:
		return fmt.Errorf("record attempt %d on feature %q (%s): %w", a.N, id, f.Status, ErrFeatureState)
	}
	if i := slices.IndexFunc(f.Attempts, func(x Attempt) bool { return x.N == a.N && x.Action == a.Action }); i >= 0 {
		f.Attempts[i] = a
	} else {
		f.Attempts = append(f.Attempts, a)
	}
	if a.Gate != nil && a.Gate.ReceiptID != "" && !slices.Contains(f.ReceiptIDs, a.Gate.ReceiptID) {
		f.ReceiptIDs = append(f.ReceiptIDs, a.Gate.ReceiptID)
	}
	f.Strategy = StrategyFor(f.AttemptCount(), interval)
	p.Refresh()
	return nil
}

// AttemptCount is the number of change attempts on the feature; retrieval
// steps gather context and change nothing, so they do not count towards
// the recovery rotation.
func (f Feature) AttemptCount() int {
	n := 0
	for _, a := range f.Attempts {
		if a.Action != "retrieve" {
			n++
		}
	}
	return n
}

// Verified returns the feature's last attempt that is backed by evidence:
// its gate passed with a receipt ID and the independent auditor accepted.
// Nothing a model said enters into it.
func (f Feature) Verified() (Attempt, bool) {
	for i := len(f.Attempts) - 1; i >= 0; i-- {
		if a := f.Attempts[i]; attemptVerified(a) {
			return a, true
		}
	}
	return Attempt{}, false
}

func attemptVerified(a Attempt) bool {
	return a.Gate.Passed() && a.Gate.ReceiptID != "" && a.Audit.Accepted()
}

// Accept marks a feature accepted with the commit that landed it on the
// integration branch. It refuses unless an attempt is Verified, so a
// status can never claim more than the receipts show.
func (p *Plan) Accept(id, commit string) error {
	f, err := p.mustFeature(id)
	if err != nil {
		return err
	}
	if f.Status != FeatureRunning && !f.Status.pending() && f.Status != FeatureAccepted {
		return fmt.Errorf("accept feature %q (%s): %w", id, f.Status, ErrFeatureState)
	}
	if _, ok := f.Verified(); !ok {
		return fmt.Errorf("accept feature %q: %w: no attempt has a passing gate receipt and an accepting audit", id, ErrNotVerified)
	}
	f.Status, f.Commit, f.Blocker, f.Strategy = FeatureAccepted, strings.TrimSpace(commit), nil, "" // no next attempt
	p.Refresh()
	return nil
}

// Block pauses a feature on a typed blocker. The blocker is checked as
// NewBlocker checks it: failures are not blockers, only evidence is.
func (p *Plan) Block(id string, b Blocker) error {
	f, err := p.mustFeature(id)
	if err != nil {
		return err
	}
	if f.Status != FeatureRunning && !f.Status.pending() && f.Status != FeatureBlocked {
		return fmt.Errorf("block feature %q (%s): %w", id, f.Status, ErrFeatureState)
	}
	nb, err := NewBlocker(b.Type, b.Evidence)
	if err != nil {
		return fmt.Errorf("block feature %q: %w", id, err)
	}
	f.Status, f.Blocker = FeatureBlocked, &nb
	p.Refresh()
	return nil
}

// Unblock puts a blocked feature back in line (pending) with the human's
// note; its attempts stay, so the next brief still has their evidence.
func (p *Plan) Unblock(id, note string) error {
	f, err := p.mustFeature(id)
	if err != nil {
		return err
	}
	if f.Status != FeatureBlocked {
		return fmt.Errorf("unblock feature %q (%s): %w", id, f.Status, ErrFeatureState)
	}
	f.Status, f.Blocker, f.Note = FeaturePending, nil, strings.TrimSpace(note)
	p.Refresh()
	return nil
}

// Skip leaves a feature out with a reason. Features that depend on it
// cannot run afterwards (they wait, and the handoff says on what).
func (p *Plan) Skip(id, reason string) error {
	f, err := p.mustFeature(id)
	if err != nil {
		return err
	}
	switch f.Status {
	case FeatureAccepted, FeatureDecomposed:
		return fmt.Errorf("skip feature %q (%s): %w", id, f.Status, ErrFeatureState)
	}
	f.Status, f.Note = FeatureSkipped, strings.TrimSpace(reason)
	p.Refresh()
	return nil
}

func (p *Plan) mustFeature(id string) (*Feature, error) {
	f, ok := p.Feature(id)
	if !ok {
		return nil, fmt.Errorf("feature %q: %w", id, ErrUnknownFeature)
	}
	return f, nil
}

// Decompose replaces a pending or running feature by sub-features: the
// last recovery strategy, when correction, replanning and research did not
// converge. The parent stays in the plan, marked decomposed with its
// attempts (the evidence that led here); the parts follow it in its
// milestone, in the given order, and start fresh (no attempts, no
// strategy).
//
// A part without an ID gets <parent>.<n> (f2 → f2.1, f2.2, …); without
// kind or paths it inherits the parent's; it always inherits the parent's
// dependencies, and anything that depended on the parent now waits for
// all the parts. The plan's Revision goes up by one. Nothing changes when
// an error is returned.
func (p *Plan) Decompose(featureID string, subs []Feature) error {
	mi, fi, ok := p.locate(featureID)
	if !ok {
		return fmt.Errorf("decompose feature %q: %w", featureID, ErrUnknownFeature)
	}
	parent := p.Milestones[mi].Features[fi]
	if !parent.Status.pending() && parent.Status != FeatureRunning {
		return fmt.Errorf("decompose feature %q (%s): %w", featureID, parent.Status, ErrFeatureState)
	}
	var bad, warn []string
	if len(subs) == 0 {
		bad = append(bad, fmt.Sprintf("decomposing feature %q: no sub-features", featureID))
	}
	ids := map[string]bool{}
	for _, f := range p.features() {
		ids[f.ID] = true
	}
	parts := make([]Feature, 0, len(subs))
	for i, s := range subs {
		f := Feature{
			ID:         strings.TrimSpace(s.ID),
			Title:      oneLine(s.Title),
			Kind:       FeatureKind(strings.ToLower(strings.TrimSpace(string(s.Kind)))),
			Acceptance: cleanList(s.Acceptance),
			Paths:      cleanList(s.Paths),
			DependsOn:  uniq(append(slices.Clone(parent.DependsOn), cleanList(s.DependsOn)...)),
			Parent:     parent.ID,
			Status:     FeaturePending,
		}
		if f.ID == "" {
			f.ID = fmt.Sprintf("%s.%d", parent.ID, i+1)
		}
		if f.Kind == "" {
			f.Kind = parent.Kind
		}
		if len(f.Paths) == 0 {
			f.Paths = slices.Clone(parent.Paths)
		}
		where := fmt.Sprintf("sub-feature %d (id %q) of %q", i+1, f.ID, parent.ID)
		bad = append(bad, checkFeature(where, f)...)
		if ids[f.ID] {
			bad = append(bad, where+": id is already used")
		}
		ids[f.ID] = true
		if len(f.Acceptance) == 0 {
			warn = append(warn, where+" has no acceptance criteria: the auditor can judge only its title")
		}
		parts = append(parts, f)
	}
	for _, f := range parts {
		for _, d := range f.DependsOn {
			switch {
			case d == f.ID:
				bad = append(bad, fmt.Sprintf("sub-feature %q depends on itself", f.ID))
			case d == parent.ID:
				bad = append(bad, fmt.Sprintf("sub-feature %q depends on %q, the feature it is a part of", f.ID, d))
			case !ids[d]:
				bad = append(bad, fmt.Sprintf("sub-feature %q depends on unknown feature %q", f.ID, d))
			}
		}
	}
	if len(bad) == 0 {
		all := p.features()
		all = append(all, parts...)
		if cyc := findCycle(all); cyc != nil {
			bad = append(bad, "dependency cycle: "+strings.Join(cyc, " → "))
		}
	}
	if len(bad) > 0 {
		return &PlanError{Problems: bad}
	}
	m := &p.Milestones[mi]
	m.Features[fi].Status = FeatureDecomposed
	m.Features[fi].Strategy = StrategyDecomposition
	m.Features = slices.Insert(m.Features, fi+1, parts...)
	p.Warnings = append(p.Warnings, warn...)
	p.Revision++
	p.Refresh()
	return nil
}

// cleanList trims entries, drops blank ones, and returns nil for none, so
// an empty list and a missing one encode the same way.
func cleanList(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// uniq drops repeated entries, keeping the first.
func uniq(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// oneLine collapses whitespace runs (newlines included) to single spaces:
// titles from a model must not break a Markdown line or a table cell.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
