package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// maxBody bounds a request body: a goal and a note are short texts.
const maxBody = 64 << 10

// maxDays bounds ?days= of the spend and landed series.
const maxDays = 366

var (
	dateRe  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	entryRe = regexp.MustCompile(`^[qQ][0-9]+$`)
)

// RunView is GET /api/v1/runs/{id}: the run's state, whether a worker
// answered, its Temporal UI page, and its features' attempts.
type RunView struct {
	State    *horizon.RunState      `json:"state"`
	Live     bool                   `json:"live"`
	UI       string                 `json:"ui,omitempty"`
	Features []core.FeatureAttempts `json:"features"`
}

func (s *Server) runs(r *http.Request) (any, error) {
	rows, err := s.Core.Runs(r.Context(), core.ListRequest{Limit: listedRuns})
	if err != nil {
		return nil, err
	}
	if rows == nil {
		rows = []RunRow{}
	}
	for i := range rows {
		if s.RunURL != nil {
			rows[i].UI = s.RunURL(rows[i].ID)
		}
	}
	return rows, nil
}

func (s *Server) runID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if err := core.CheckID("run", id); err != nil {
		return "", badRequest("%v", err)
	}
	return id, nil
}

func (s *Server) run(r *http.Request) (any, error) {
	id, err := s.runID(r)
	if err != nil {
		return nil, err
	}
	rv, err := s.Core.Run(r.Context(), id)
	if err != nil {
		return nil, err
	}
	v := RunView{State: rv.State, Live: rv.Live, Features: core.AttemptsPerFeature(rv.State)}
	if s.RunURL != nil {
		v.UI = s.RunURL(id)
	}
	return v, nil
}

func (s *Server) needs(r *http.Request) (any, error) {
	ns, err := s.Core.Needs(r.Context())
	if ns == nil {
		ns = []core.Need{}
	}
	return ns, err
}

func (s *Server) reportLatest(r *http.Request) (any, error) {
	return s.Core.Report(r.Context(), "")
}

func (s *Server) report(r *http.Request) (any, error) {
	date := r.PathValue("date")
	if _, err := time.Parse(time.DateOnly, date); err != nil || !dateRe.MatchString(date) {
		return nil, badRequest("report date %q: want YYYY-MM-DD", date)
	}
	return s.Core.Report(r.Context(), date)
}

// days reads ?days=N (default def, 1 to maxDays).
func days(r *http.Request, def int) (int, error) {
	v := r.URL.Query().Get("days")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxDays {
		return 0, badRequest("days %q: want a whole number of days from 1 to %d", v, maxDays)
	}
	return n, nil
}

func (s *Server) spend(r *http.Request) (any, error) {
	n, err := days(r, 14)
	if err != nil {
		return nil, err
	}
	return s.Core.Spend(r.Context(), n)
}

func (s *Server) supervisors(r *http.Request) (any, error) {
	sv, err := s.Core.AllSupervisors(r.Context())
	if sv == nil {
		sv = []horizon.SupervisorState{}
	}
	return sv, err
}

// repo reads ?repo= (or the body's repo): a path on horizon's machine.
func repoParam(r *http.Request, body string) (string, error) {
	repo := strings.TrimSpace(body)
	if repo == "" {
		repo = strings.TrimSpace(r.URL.Query().Get("repo"))
	}
	if repo == "" {
		return "", badRequest("say which repository: ?repo=/path/to/repo (as `horizon supervisor status` shows it)")
	}
	if !strings.HasPrefix(repo, "/") {
		return "", badRequest("repo %q: want the repository's absolute path", repo)
	}
	return repo, nil
}

func (s *Server) supervisor(r *http.Request) (any, error) {
	repo, err := repoParam(r, "")
	if err != nil {
		return nil, err
	}
	return s.Core.SupervisorOf(r.Context(), repo)
}

func (s *Server) loops(r *http.Request) (any, error) { return s.Core.LoopRows(r.Context()) }

func (s *Server) tasks(r *http.Request) (any, error) { return s.Core.TaskRows(r.Context()) }

func (s *Server) queue(r *http.Request) (any, error) {
	repo, err := repoParam(r, "")
	if err != nil {
		return nil, err
	}
	return s.Core.Queue(r.Context(), repo)
}

func (s *Server) roadmap(r *http.Request) (any, error) {
	repo, err := repoParam(r, "")
	if err != nil {
		return nil, err
	}
	return s.Core.Roadmap(r.Context(), repo)
}

// decode reads a JSON body into v; an empty body leaves v as it is.
// Unknown fields are refused, so a misspelt one is not silently lost.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return badRequest("read the request: %v", err)
	}
	if len(body) > maxBody {
		return badRequest("the request is larger than %d bytes", maxBody)
	}
	if strings.TrimSpace(string(body)) == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("the request is not the JSON this endpoint takes: %v", err)
	}
	// One value, nothing after it: a body with more was not meant as this.
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("the request has more after its JSON object; send one object")
	}
	return nil
}

func (s *Server) start(r *http.Request) (any, error) {
	var req StartRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	req.Goal = strings.TrimSpace(req.Goal)
	if req.Goal == "" {
		return nil, badRequest(`say the goal: {"repo": "/path/to/repo", "goal": "..."}`)
	}
	if err := horizon.CheckGoal(req.Goal); err != nil {
		return nil, badRequest("%v", err)
	}
	repo, err := repoParam(r, req.Repo)
	if err != nil {
		return nil, err
	}
	req.Repo = repo
	if req.Autonomy != "" {
		if _, err := horizon.ParseAutonomy(req.Autonomy); err != nil {
			return nil, badRequest("autonomy: %v", err)
		}
	}
	mode := core.ModeConfigured
	if req.Single {
		mode = core.ModeSingle
	}
	var budget time.Duration
	if req.BudgetTime != "" {
		if budget, err = time.ParseDuration(req.BudgetTime); err != nil || budget < 0 {
			return nil, badRequest("budget_time %q: want a duration such as 8h", req.BudgetTime)
		}
	}
	if req.BudgetSpend < 0 || math.IsNaN(req.BudgetSpend) || math.IsInf(req.BudgetSpend, 0) {
		return nil, badRequest("budget_spend: want an amount of 0 or more in USD")
	}
	st, err := s.Core.Start(r.Context(), core.StartRequest{Repo: req.Repo, Goal: req.Goal, Kind: string(horizon.KindBounded), Mode: mode,
		Autonomy: req.Autonomy, BudgetTime: budget, BudgetSpend: req.BudgetSpend})
	if err != nil {
		return nil, err
	}
	if s.RunURL != nil {
		st.UI = s.RunURL(st.RunID)
	}
	return st, nil
}

// verbRequest is the body of a run's verbs; each takes the fields it needs.
type verbRequest struct {
	Subject string   `json:"subject,omitempty"` // approve: the checkpoint
	Feature string   `json:"feature,omitempty"` // unblock: the blocked feature; skip: the feature left out
	Note    string   `json:"note,omitempty"`    // approve, unblock, skip
	USD     *float64 `json:"usd,omitempty"`     // ceiling
	Day     bool     `json:"day,omitempty"`     // ceiling: the daily one
}

func (s *Server) runVerb(r *http.Request) (any, error) {
	id, err := s.runID(r)
	if err != nil {
		return nil, err
	}
	var req verbRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	ctx := r.Context()
	switch v := r.PathValue("verb"); v {
	case "approve":
		return s.Core.Approve(ctx, core.ApproveRequest{Run: id, Subject: req.Subject, Note: req.Note})
	case "unblock":
		if strings.TrimSpace(req.Note) == "" {
			return nil, badRequest(`unblock needs a note: {"note": "what changed"}; the next attempt reads it`)
		}
		return s.Core.Unblock(ctx, core.UnblockRequest{Run: id, Feature: req.Feature, Note: req.Note})
	case "skip":
		if strings.TrimSpace(req.Feature) == "" || strings.TrimSpace(req.Note) == "" {
			return nil, badRequest(`skip needs the feature and a note: {"feature": "f3", "note": "why it is left out"}; the handoff shows the note`)
		}
		return s.Core.Skip(ctx, core.SkipRequest{Run: id, Feature: req.Feature, Note: req.Note})
	case "pause":
		return s.Core.Pause(ctx, id)
	case "resume":
		return s.Core.Resume(ctx, id)
	case "cancel":
		if err := s.Core.Cancel(ctx, id); err != nil {
			return nil, err
		}
		return map[string]string{"run_id": id, "cancel": "requested"}, nil
	case "ceiling":
		if req.USD == nil || math.IsNaN(*req.USD) || math.IsInf(*req.USD, 0) || *req.USD < 0 {
			return nil, badRequest(`ceiling needs {"usd": N}: an amount such as 5 or 12.50 (0 removes the ceiling)`)
		}
		return s.Core.SetCeiling(ctx, core.CeilingRequest{Run: id, USD: *req.USD, Day: req.Day})
	default:
		return nil, &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("no verb %q on runs: approve, unblock, skip, pause, resume, cancel or ceiling", v)}
	}
}

// supervisorRequest is the body of the supervisor verbs.
type supervisorRequest struct {
	Repo     string `json:"repo"`
	Autonomy string `json:"autonomy,omitempty"` // start
	// DayCeiling (USD) or NoCeiling: a start needs one of them unless
	// spend.day_ceiling is configured (core.ChooseDayCeiling).
	DayCeiling *float64 `json:"day_ceiling,omitempty"`
	NoCeiling  bool     `json:"no_ceiling,omitempty"`
}

func (s *Server) supervisorVerb(r *http.Request) (any, error) {
	var req supervisorRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	repo, err := repoParam(r, req.Repo)
	if err != nil {
		return nil, err
	}
	switch v := r.PathValue("verb"); v {
	case "start":
		if req.Autonomy != "" {
			if _, err := horizon.ParseAutonomy(req.Autonomy); err != nil {
				return nil, badRequest("autonomy: %v", err)
			}
		}
		if req.DayCeiling != nil && req.NoCeiling {
			return nil, badRequest(`say "day_ceiling": USD or "no_ceiling": true, not both`)
		}
		if d := req.DayCeiling; d != nil && (math.IsNaN(*d) || math.IsInf(*d, 0) || *d <= 0) {
			return nil, badRequest(`day_ceiling needs an amount above 0 in USD, such as 20; for none say "no_ceiling": true`)
		}
		st, err := s.Core.SupervisorStart(r.Context(), core.SupervisorRequest{Repo: repo, Autonomy: req.Autonomy, Ceiling: core.DayCeilingRequest{USD: req.DayCeiling, Unlimited: req.NoCeiling}})
		if errors.Is(err, core.ErrNoDayCeiling) {
			return nil, badRequest(`%v: send "day_ceiling": USD (what all runs may spend per UTC day; or set spend.day_ceiling), or "no_ceiling": true to accept unlimited spend`, err)
		}
		return st, err
	case "stop":
		return s.Core.SupervisorStop(r.Context(), repo)
	case "pause":
		return s.Core.SupervisorPause(r.Context(), repo)
	case "resume":
		return s.Core.SupervisorResume(r.Context(), repo)
	default:
		return nil, &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("no verb %q on supervisors: start, stop, pause or resume", v)}
	}
}

// queueRequest is POST /api/v1/queue.
type queueRequest struct {
	Repo        string  `json:"repo"`
	Goal        string  `json:"goal"`
	Autonomy    string  `json:"autonomy,omitempty"`
	BudgetTime  string  `json:"budget_time,omitempty"` // a Go duration, "2h"
	BudgetSpend float64 `json:"budget_spend,omitempty"`
}

func (s *Server) queueAdd(r *http.Request) (any, error) {
	var req queueRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	repo, err := repoParam(r, req.Repo)
	if err != nil {
		return nil, err
	}
	e := horizon.QueueEntry{Goal: strings.TrimSpace(req.Goal), BudgetSpend: req.BudgetSpend}
	if e.Goal == "" {
		return nil, badRequest(`say the goal: {"repo": "/path/to/repo", "goal": "..."}`)
	}
	if err := horizon.CheckGoal(e.Goal); err != nil {
		return nil, badRequest("%v", err)
	}
	if req.Autonomy != "" {
		if e.Autonomy, err = horizon.ParseAutonomy(req.Autonomy); err != nil {
			return nil, badRequest("autonomy: %v", err)
		}
	}
	if req.BudgetTime != "" {
		if e.BudgetTime, err = time.ParseDuration(req.BudgetTime); err != nil || e.BudgetTime < 0 {
			return nil, badRequest("budget_time %q: want a duration such as 2h", req.BudgetTime)
		}
	}
	if req.BudgetSpend < 0 || math.IsNaN(req.BudgetSpend) {
		return nil, badRequest("budget_spend: want an amount of 0 or more")
	}
	return s.Core.QueueAdd(r.Context(), core.QueueAddRequest{Repo: repo, Entry: e})
}

func (s *Server) entry(r *http.Request) (repo, id string, err error) {
	var req supervisorRequest
	if err := decode(r, &req); err != nil {
		return "", "", err
	}
	if repo, err = repoParam(r, req.Repo); err != nil {
		return "", "", err
	}
	id = r.PathValue("id")
	if !entryRe.MatchString(id) {
		return "", "", badRequest("queue entry %q: want an ID such as q3, as the queue lists it", id)
	}
	return repo, strings.ToLower(id), nil
}

func (s *Server) queueMove(r *http.Request) (any, error) {
	repo, id, err := s.entry(r)
	if err != nil {
		return nil, err
	}
	return s.Core.QueueMove(r.Context(), core.QueueEntryRequest{Repo: repo, Entry: id})
}

func (s *Server) queueApprove(r *http.Request) (any, error) {
	repo, id, err := s.entry(r)
	if err != nil {
		return nil, err
	}
	return s.Core.QueueApprove(r.Context(), core.QueueEntryRequest{Repo: repo, Entry: id})
}

func (s *Server) queueRemove(r *http.Request) (any, error) {
	repo, id, err := s.entry(r)
	if err != nil {
		return nil, err
	}
	return s.Core.QueueRemove(r.Context(), core.QueueEntryRequest{Repo: repo, Entry: id})
}
