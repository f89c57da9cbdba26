package core

// `horizon specialist generate`: the lead drafts a project specialist's
// manifest in a read-only session (a SpecialistDraftWorkflow), horizon
// checks the draft (specialist.CheckDraft: the project scope's tools,
// never a forbidden one, no extends) and a surface shows it; it is written
// to <repo>/.horizon/specialists/<name>.md only when the person agrees
// (WriteSpecialistDraft). A draft that fails a check is refused whole:
// nothing is trimmed from it and nothing is written.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/internal/specialist"
	"github.com/horizon/horizon/workflows"
)

// GenerateRequest is one `horizon specialist generate`.
type GenerateRequest struct {
	Purpose    string // what the specialist is for
	Name       string // the name the person chose ("": the lead's)
	Repo       string // the repository's root
	BaseCommit string // its HEAD
	Dirs       specialist.Dirs
	// Force lets the draft replace a project manifest of its name, or
	// override a user or built-in specialist of its name.
	Force bool
}

// SpecialistDraft is a draft that passed the checks, with what it took.
type SpecialistDraft struct {
	ID    string `json:"id"` // the draft's workflow ID (`horizon history ID`)
	Name  string `json:"name"`
	Scope string `json:"scope"`
	Path  string `json:"path"` // where it is (or would be) written
	// Replaces is the manifest of its name that it replaces (project
	// scope) or overrides (user, built-in); "" for a new name.
	Replaces   string   `json:"replaces,omitempty"`
	Manifest   string   `json:"manifest"` // the file's content, as written
	Tools      []string `json:"tools"`
	ReadOnly   bool     `json:"read_only"`
	Warnings   []string `json:"warnings,omitempty"`
	Model      string   `json:"model"` // the lead's
	Session    string   `json:"session,omitempty"`
	Cost       float64  `json:"cost"`
	Transcript string   `json:"transcript,omitempty"` // the lead's whole reply
	Written    bool     `json:"written"`

	m *specialist.Manifest
}

// ErrEmptyPurpose: generate was given nothing to draft.
var ErrEmptyPurpose = errors.New("say what the specialist is for, e.g. horizon specialist generate \"review shell scripts for quoting and portability\"")

// CheckGenerate refuses, before any session is paid for, what cannot be
// generated: no purpose, a bad --name, no project scope, or a --name
// taken without --force.
func CheckGenerate(req GenerateRequest) error {
	if strings.TrimSpace(req.Purpose) == "" {
		return &InputError{Err: fmt.Errorf("specialist generate: %w", ErrEmptyPurpose)}
	}
	if req.Name != "" {
		if err := specialist.ValidName(req.Name); err != nil {
			return inputf("specialist generate --name: %v", err)
		}
	}
	if _, err := req.Dirs.Dir(specialist.ScopeProject); err != nil {
		return inputf("specialist generate: %v", err)
	}
	if req.Name == "" {
		_, err := loadForDraft(req.Dirs)
		return err
	}
	_, err := takenBy(req, req.Name)
	return err
}

// loadForDraft loads the specialists a draft joins: one that would not
// load alongside broken manifests is refused before it is drafted.
func loadForDraft(d specialist.Dirs) (*specialist.Set, error) {
	set, err := specialist.Load(d)
	if err != nil {
		return nil, inputf("specialist generate: the specialists do not load; fix them first (`horizon specialist list` names each problem):\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	return set, nil
}

// takenBy is the manifest that has name already ("" when none); without
// Force a taken name is refused.
func takenBy(req GenerateRequest, name string) (string, error) {
	set, err := loadForDraft(req.Dirs)
	if err != nil {
		return "", err
	}
	sp, err := set.Get(name)
	if err != nil {
		return "", nil
	}
	if !req.Force {
		return sp.Path, &InputError{Err: fmt.Errorf("specialist generate: %w: %s is a %s specialist (%s); nothing written: choose another name with --name, or pass --force to replace it",
			specialist.ErrExists, name, sp.Scope, sp.Path)}
	}
	return sp.Path, nil
}

// DraftSpecialist has the lead draft the specialist req asks for and
// checks the draft; nothing is written. A draft refused by a check, or a
// reply without one, is an *InputError naming the problem and the lead's
// reply; the engine's and the session's own failures are returned as
// they are.
func (a *App) DraftSpecialist(ctx context.Context, req GenerateRequest) (*SpecialistDraft, error) {
	if err := CheckGenerate(req); err != nil {
		return nil, err
	}
	var taken []string
	if req.Name == "" {
		set, err := loadForDraft(req.Dirs)
		if err != nil {
			return nil, err
		}
		taken = set.Names()
	}
	id := "specialist-" + NewTaskID()
	in := workflows.SpecialistDraftInput{
		Draft:   activities.DraftInput{ID: id, Repo: req.Repo, Model: a.cfg.Models.Default, ModelsFile: absPath(a.cfg.Models.File)},
		Purpose: strings.TrimSpace(req.Purpose), Prompt: specialist.DraftBrief(req.Purpose, req.Name, taken), BaseCommit: req.BaseCommit,
		Limits:    workflows.Limits{SessionTimeout: a.cfg.Agent.SessionTimeout, HeartbeatTimeout: a.cfg.Agent.HeartbeatTimeout},
		PaidQueue: a.cfg.PaidQueue(), Spend: spendLimits(a.cfg),
	}
	h, err := a.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                a.cfg.Temporal.TaskQueue,
		StaticSummary:            "specialist draft: " + oneLine(req.Purpose, 180),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, workflows.SpecialistDraftWorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("start specialist draft %s: %w", id, err)
	}
	var res workflows.SpecialistDraftResult
	if err := h.Get(ctx, &res); err != nil {
		var failed *temporal.ApplicationError
		if errors.As(err, &failed) {
			switch failed.Type() {
			case activities.ErrTypeBadInput, activities.ErrTypeUnknownModel:
				return nil, &InputError{Err: errors.New(failed.Message())}
			case workflows.FailureSpendCeiling:
				return nil, fmt.Errorf("specialist draft %s: %s", id, failed.Message())
			}
		}
		return nil, fmt.Errorf("specialist draft %s: %w", id, err)
	}
	d := &SpecialistDraft{ID: id, Scope: string(specialist.ScopeProject), Model: res.Model, Session: res.Session.SessionID,
		Cost: res.Session.Usage.Cost, Transcript: res.Session.Transcript}
	reply := ""
	if d.Transcript != "" {
		reply = " (the lead's reply: " + d.Transcript + ")"
	}
	if res.Session.ProtocolError != "" {
		return d, inputf("specialist generate: the lead's reply holds no manifest: %s%s; nothing written: run it again, and say more of what the specialist is for",
			strings.TrimPrefix(res.Session.ProtocolError, "protocol_error: "), reply)
	}
	dir, _ := req.Dirs.Dir(specialist.ScopeProject)
	m, err := specialist.CheckDraft(dir, res.Session.Manifest, req.Name)
	if err != nil {
		return d, &InputError{Err: fmt.Errorf("specialist generate: %w%s", err, reply)}
	}
	if d.Replaces, err = takenBy(req, m.Name); err != nil {
		if req.Name == "" {
			return d, inputf("specialist generate: the lead named the specialist %s, which is taken (%s); nothing written: choose a name with --name, or pass --force to replace it", m.Name, d.Replaces)
		}
		return d, err
	}
	d.m, d.Name, d.Path, d.Manifest = m, m.Name, m.Path, string(m.Render())
	d.Tools, d.ReadOnly, d.Warnings = m.Tools, specialist.ReadOnly(m.Tools), m.Warnings
	return d, nil
}

// WriteSpecialistDraft writes a checked draft to the project scope, once
// a person agreed. A manifest of its name that appeared meanwhile is
// refused without force, a symlink always; the draft must load with the
// other specialists, or what was there is put back.
func WriteSpecialistDraft(d *SpecialistDraft, dirs specialist.Dirs, force bool) error {
	if d == nil || d.m == nil {
		return fmt.Errorf("write specialist draft: no checked draft")
	}
	dir, err := dirs.Dir(specialist.ScopeProject)
	if err != nil {
		return &InputError{Err: fmt.Errorf("write specialist %s: %w", d.Name, err)}
	}
	prev, readErr := os.ReadFile(specialist.ManifestPath(dir, d.Name))
	path, err := specialist.Create(dir, d.m, force)
	if err != nil {
		return &InputError{Err: fmt.Errorf("write specialist %s: %w", d.Name, err)}
	}
	if _, err := specialist.Load(dirs); err != nil {
		if readErr == nil {
			_ = specialist.WriteFile(path, prev)
		} else {
			_ = os.Remove(path)
		}
		return &InputError{Err: fmt.Errorf("write specialist %s: not written, the specialists would not load with it:\n  %w", d.Name, err)}
	}
	d.Path, d.Written = path, true
	return nil
}
