package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/consult"
)

type mcpOptions struct {
	app *app
	dir string // the lane; "": the working directory
}

// mcp is the consult tool's server. OpenCode starts it (horizon registers
// it in its config when advisor.consult.enabled), one per lane, and talks
// MCP over its stdin and stdout: nothing else may write to stdout.
func newMCPCmd(a *app, runF func(context.Context, *mcpOptions) error) *cobra.Command {
	o := &mcpOptions{app: a}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the worker's consult_advisor tool to OpenCode (MCP over stdio)",
		Long: `horizon mcp is the MCP server OpenCode starts for horizon's worker, in the
worker's lane: its tool consult_advisor {question, context?} asks the consult
model (advisor.consult_model, else the best lead model) in a read-only
session, with the worker's latest advisor.consult.include_context_messages
messages, and returns the answer, cut to advisor.consult.max_tokens. Each
consult is recorded on the attempt and counted in the run's spend.

It speaks MCP on stdin and stdout and needs the OpenCode server horizon
started (HORIZON_OPENCODE_URL, which that server's environment carries); it is
not meant to be run by hand. advisor.consult.enabled: false stops horizon
registering it.`,
		Hidden:      true,
		Args:        noArgs(),
		Annotations: map[string]string{"filelog": "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return mcpRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.dir, "dir", "", "the lane the worker works in (default: the working directory, as OpenCode starts it)")
	return cmd
}

// consultSettings are the advisor.consult keys `horizon mcp` reads, by
// their names (config.Settings), so the command does not depend on how
// package config lays out the advisor's section.
type consultSettings struct {
	model           string
	contextMessages int
	maxTokens       int
}

func readConsultSettings(cfg *config.Config) (consultSettings, error) {
	s := cfg.Settings()
	var out consultSettings
	var errs []error
	str := func(key string) string {
		v, ok := s[key].(string)
		if !ok {
			errs = append(errs, fmt.Errorf("config key %s is missing or not a string (%T)", key, s[key]))
		}
		return v
	}
	num := func(key string) int {
		v, ok := s[key].(int)
		if !ok {
			errs = append(errs, fmt.Errorf("config key %s is missing or not a number (%T)", key, s[key]))
		}
		return v
	}
	out.model = str("advisor.consult_model")
	out.contextMessages = num("advisor.consult.include_context_messages")
	out.maxTokens = num("advisor.consult.max_tokens")
	return out, errors.Join(errs...)
}

func mcpRun(ctx context.Context, o *mcpOptions) error {
	a := o.app
	cfg := a.cfg
	dir := o.dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("horizon mcp: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("horizon mcp: %w", err)
	}
	url := os.Getenv(agent.EnvServerURL)
	if url == "" {
		return usagef("horizon mcp serves horizon's worker and is started by the OpenCode server horizon runs: %s is not set", agent.EnvServerURL)
	}
	set, err := readConsultSettings(cfg)
	if err != nil {
		return err
	}
	srv := agent.Connect(url, os.Getenv(agent.EnvServerPassword), a.log)
	adv, err := consult.NewAdvisor(srv, consult.Options{
		Home: cfg.DataDir(), Dir: dir,
		Model: set.model, ContextMessages: set.contextMessages, MaxTokens: set.maxTokens,
		ResolveModel: func(ctx context.Context) (string, error) { return consultModel(ctx, srv, cfg, dir) },
		DaySpend: func(context.Context) (float64, error) {
			days, err := core.Spend{DataDir: cfg.DataDir()}.Days(time.Now(), 1)
			if err != nil {
				return 0, err
			}
			return days[0].Spent, nil
		},
	})
	if err != nil {
		return err
	}
	log := a.log.With().Str("Lane", dir).Logger()
	log.Info().Str("Model", set.model).Msg("consult tool serving")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// OpenCode keeps a directory's MCP server as long as it keeps the
	// directory's instance, past the lane's removal: a server whose lane
	// is gone has nobody left to serve.
	go func() {
		tick := time.NewTicker(30 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
					log.Info().Msg("lane removed; consult tool exits")
					cancel()
					return
				}
			}
		}
	}()
	err = consult.NewServer(adv, version).Run(ctx, &mcp.StdioTransport{})
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// consultModel is the consult model when advisor.consult_model is empty:
// models.default when set (it stands for every role), else the best-ranked
// lead model OpenCode reaches.
func consultModel(ctx context.Context, srv *agent.Server, cfg *config.Config, dir string) (string, error) {
	if cfg.Models.Default != "" {
		return cfg.Models.Default, nil
	}
	lb, err := core.LoadLeaderboard(cfg)
	if err != nil {
		return "", err
	}
	connected, err := srv.Models(ctx, dir)
	if err != nil {
		return "", err
	}
	c, err := lb.Resolve(string(horizon.RoleLead), connected)
	if err != nil {
		return "", err
	}
	return c.Route, nil
}
