package daemon

import (
	"github.com/rs/zerolog"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/applier"
	"github.com/horizon/horizon/ladder"
)

// newAppliers is the daemon's runner of Claude Code and Codex sessions:
// its session logs under the home, tokens priced from the leaderboard.
func newAppliers(cfg *config.Config, paths Paths, log zerolog.Logger) *applier.Runner {
	return applier.New(applier.Options{
		Bins:     core.ApplierBins(cfg),
		StateDir: paths.Appliers(),
		EnvAllow: cfg.Agent.EnvAllow,
		Price: func(route string) ladder.Price {
			lb, err := activities.LoadLeaderboard(cfg.Models.File)
			if err != nil {
				return ladder.Bundled().PriceOf(route)
			}
			return lb.PriceOf(route)
		},
		Log: log,
	})
}
