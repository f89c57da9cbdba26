package activities

import (
	"context"
	"fmt"
	"path/filepath"

	"go.temporal.io/sdk/activity"

	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/specialist"
)

// ProjectSpecialists is what a session needs to offer a trusted
// repository's own specialists (specialists.trust_project): nil on
// every session of a repository the person has not said they trust.
type ProjectSpecialists struct {
	Repo string // whose .horizon/specialists
	// UserDir is the user scope's directory: a project specialist may
	// extend a user one, and overrides it by name.
	UserDir string `json:",omitempty"`
	// ModelsFile is the leaderboard that binds each to its role's model
	// ("" the bundled one).
	ModelsFile string `json:",omitempty"`
	// Model is models.default: the model of every specialist without its
	// own ("" : its role picks one).
	Model string `json:",omitempty"`
}

// ProjectAgentWriter adds a repository's specialists to OpenCode's agents;
// the daemon's sessions satisfy it. Sessions that do not cannot offer
// project specialists.
type ProjectAgentWriter interface {
	WriteProjectAgents(ctx context.Context, files map[string][]byte) error
}

// ProjectSpecialistsDir is a repository's project scope.
func ProjectSpecialistsDir(repo string) string {
	return filepath.Join(repo, ".horizon", "specialists")
}

// projectSpecialists loads the repository's specialists, binds each to
// its role's model among the routes OpenCode reaches, and writes them as
// OpenCode agents named for the repository. It must run before OpenCode
// first serves the directory the session works in: OpenCode reads a
// directory's agents once.
func (a *Activities) projectSpecialists(ctx context.Context, p ProjectSpecialists) (specialist.ProjectSet, error) {
	w, ok := a.Sessions.(ProjectAgentWriter)
	if !ok {
		return specialist.ProjectSet{}, fmt.Errorf("project specialists: these sessions cannot take a repository's agents")
	}
	set, err := specialist.Load(specialist.Dirs{User: p.UserDir, Project: ProjectSpecialistsDir(p.Repo)})
	if err != nil {
		return specialist.ProjectSet{}, fmt.Errorf("project specialists of %s: %w", p.Repo, err)
	}
	lb, err := LoadLeaderboard(p.ModelsFile)
	if err != nil {
		return specialist.ProjectSet{}, fmt.Errorf("project specialists of %s: %w", p.Repo, err)
	}
	// The server's own directory, not the session's: asking OpenCode
	// about the session's directory would make it read that directory's
	// agents before these are written.
	connected, err := a.Sessions.Models(ctx, "")
	if err != nil {
		return specialist.ProjectSet{}, fmt.Errorf("project specialists of %s: models OpenCode can use: %w", p.Repo, err)
	}
	ps, err := specialist.MaterialiseProject(set, p.Repo, lb, openCodeRoutes(connected), p.Model)
	if err != nil {
		return specialist.ProjectSet{}, fmt.Errorf("project specialists of %s: %w", p.Repo, err)
	}
	if len(ps.Files) > 0 {
		if err := w.WriteProjectAgents(ctx, ps.Files); err != nil {
			return specialist.ProjectSet{}, fmt.Errorf("project specialists of %s: %w", p.Repo, err)
		}
	}
	return ps, nil
}

// offerProjectSpecialists writes a trusted repository's specialists for
// the lane's sessions. The run checked them when it started; one edited
// since is left out (and said in the log), not the end of the run.
func (a *Activities) offerProjectSpecialists(ctx context.Context, in LaneInput) {
	if in.Project == nil {
		return
	}
	if _, err := a.projectSpecialists(ctx, *in.Project); err != nil {
		activity.GetLogger(ctx).Warn("the repository's specialists are not offered to the worker", "RunID", in.RunID, "Feature", in.Feature, "Error", err.Error())
	}
}

// sessionRules are a project set's rules as OpenCode's session rules.
func sessionRules(ps specialist.ProjectSet) []agent.PermissionRule {
	var out []agent.PermissionRule
	for _, r := range ps.Rules() {
		out = append(out, agent.PermissionRule{Permission: r.Permission, Pattern: r.Pattern, Action: r.Action})
	}
	return out
}
