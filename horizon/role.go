package horizon

import (
	"strings"

	"github.com/horizon/horizon/horizon/vocab"
)

// Role names who does a part of a run's work (vocab.Role, declared once
// for horizon and the ladder).
type Role = vocab.Role

// horizon's roles.
const (
	RoleWorker   = vocab.RoleWorker
	RoleAuditor  = vocab.RoleAuditor
	RoleLead     = vocab.RoleLead
	RoleExplorer = vocab.RoleExplorer
	RoleReader   = vocab.RoleReader
)

// The leaderboard's roles besides RoleLead (ladder/models.json).
const (
	RoleQuick    = vocab.RoleQuick
	RoleBuild    = vocab.RoleBuild
	RoleExplore  = vocab.RoleExplore
	RoleAnalyze  = vocab.RoleAnalyze
	RoleResearch = vocab.RoleResearch
)

var roles = vocab.Roles()

// LeaderboardRoles returns the leaderboard's roles in display order, the
// order of ladder.Roles.
func LeaderboardRoles() []Role { return vocab.LeaderboardRoles() }

// ParseRole reads one of horizon's roles or a leaderboard role (case and
// spaces forgiven).
func ParseRole(s string) (Role, error) {
	return parseEnum("role", s, strings.ToLower, roles)
}
