package horizon

import (
	"slices"
	"strings"
)

// Role names who does a part of a run's work.
//
// horizon's own roles name its agent sessions (the worker, the auditor,
// the lead who plans, the explorer who retrieves context) and the T2
// reader. The leaderboard's roles (zilX's: lead, quick, build, explore,
// analyze, research) name what a model is ranked for in models.json; a
// session role resolves to one of them (worker → build, auditor → analyze,
// lead → lead: ladder.CanonicalRole, which the ladder owns because it
// parses models.json and imports nothing of the module).
type Role string

// horizon's roles.
const (
	RoleWorker   Role = "worker"   // implements a feature in its lane; ends with a horizon-report
	RoleAuditor  Role = "auditor"  // reviews the change read-only; ends with a horizon-audit
	RoleLead     Role = "lead"     // plans and decomposes read-only; ends with a horizon-plan (also a leaderboard role)
	RoleExplorer Role = "explorer" // gathers context read-only for a retrieval step
	RoleReader   Role = "reader"   // the T2 reader: a text-only model whose diagnosis a local model applies
)

// The leaderboard's roles besides RoleLead (ladder/models.json).
const (
	RoleQuick    Role = "quick"    // small bounded implementation and command tasks
	RoleBuild    Role = "build"    // implementation; the worker's models
	RoleExplore  Role = "explore"  // read-only local code and context discovery
	RoleAnalyze  Role = "analyze"  // read-only review and debugging; the auditor's models
	RoleResearch Role = "research" // external documentation and primary sources
)

var (
	roles            = []Role{RoleWorker, RoleAuditor, RoleLead, RoleExplorer, RoleReader, RoleQuick, RoleBuild, RoleExplore, RoleAnalyze, RoleResearch}
	leaderboardRoles = []Role{RoleLead, RoleQuick, RoleBuild, RoleExplore, RoleAnalyze, RoleResearch}
)

// LeaderboardRoles returns the leaderboard's roles in display order, the
// order of ladder.Roles.
func LeaderboardRoles() []Role {
	return slices.Clone(leaderboardRoles)
}

// ParseRole reads one of horizon's roles or a leaderboard role (case and
// spaces forgiven).
func ParseRole(s string) (Role, error) {
	return parseEnum("role", s, strings.ToLower, roles)
}
