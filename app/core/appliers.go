package core

import (
	"context"
	"fmt"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/applier"
	"github.com/horizon/horizon/ladder"
)

// ApplierBins are the configured CLI paths.
func ApplierBins(cfg *config.Config) map[applier.Kind]string {
	return map[applier.Kind]string{applier.Claude: cfg.Agent.ClaudeBin, applier.Codex: cfg.Agent.CodexBin}
}

// ApplierRoutes are the leaderboard's routes whose applier is connected.
func ApplierRoutes(ctx context.Context, cfg *config.Config) []string {
	lb, err := LoadLeaderboard(cfg)
	if err != nil {
		return nil
	}
	return applier.ConnectedRoutes(allRoutes(lb), applier.Probe(ctx, ApplierBins(cfg)))
}

func allRoutes(lb *ladder.Leaderboard) []string {
	var out []string
	for _, m := range lb.Models {
		out = append(out, m.Routes...)
	}
	return out
}

// ValidateApplier accepts a forced applier route whose CLI is connected.
func ValidateApplier(ctx context.Context, cfg *config.Config, route string) error {
	k, _ := applier.Of(route)
	for _, st := range applier.Probe(ctx, ApplierBins(cfg)) {
		if st.Kind == k && !st.Connected {
			return fmt.Errorf("model %s: %s is not connected: %s", route, k, st.Why)
		}
	}
	return nil
}

// ApplierStatus is what horizon found of one applier CLI.
type ApplierStatus = applier.Status

// Appliers finds Claude Code and Codex CLI and whether each can reach a
// model, for `horizon doctor` and `horizon models`.
func Appliers(ctx context.Context, cfg *config.Config) []ApplierStatus {
	return applier.Probe(ctx, ApplierBins(cfg))
}

// ApplierOf names the applier a route runs on: claude-code, codex or
// opencode.
func ApplierOf(route string) string {
	k, _ := applier.Of(route)
	return string(k)
}
