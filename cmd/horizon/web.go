package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/core"
	"github.com/horizon/horizon/internal/engine"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/internal/web"
	"github.com/horizon/horizon/workflows"
)

// WebTokenFile is `horizon web`'s token, under $HORIZON_HOME, mode 0600:
// apart from the engine's, so handing the dashboard to a browser does not
// hand it the engine.
const WebTokenFile = "web.token"

type webOptions struct {
	app  *app
	json bool
}

func newWebCmd(a *app, runF func(context.Context, *webOptions) error) *cobra.Command {
	o := &webOptions{app: a}
	cmd := &cobra.Command{
		Use:   "web [--json]",
		Short: "Serve the JSON API and the web dashboard on 127.0.0.1 (web.port, default 8234)",
		Long: `Serve horizon's JSON API (/api/v1/...) and a web dashboard on
127.0.0.1:<web.port>: every run with its plan, what needs you with the
same actions as the CLI (approve, unblock, pause, resume, cancel), the
latest daily report, and charts of spend per day, features landed per
day and attempts per feature. The dashboard installs as an app (a PWA)
and shows the last data it saw when horizon cannot be reached.

The daemon must be running (` + "`horizon resume`" + ` starts it). Verbs need the
token in $HORIZON_HOME/web.token (` + "`Authorization: Bearer <token>`" + `), made on
the first start; reads need it too unless web.public_reads. The URL
printed carries the token after #, which the page keeps and the browser
never sends to a server. It runs until SIGINT or SIGTERM.

A run started through the API is prepared as ` + "`horizon start --detach`" + `
prepares it, with the settings this command resolved.`,
		Example: `  horizon web
  horizon web --json        # {"url": ..., "token_file": ...}, then serves
  curl -H "Authorization: Bearer $(cat ~/.local/share/horizon/web.token)" http://127.0.0.1:8234/api/v1/needs`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return webRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, `print {"url": ..., "token_file": ...} as JSON, then serve`)
	return cmd
}

// webStarted is what `horizon web --json` prints once it listens.
type webStarted struct {
	URL       string `json:"url"`
	TokenFile string `json:"token_file"`
}

func webRun(ctx context.Context, o *webOptions) error {
	a := o.app
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	tokenFile := filepath.Join(a.cfg.Home, WebTokenFile)
	return a.withEngine(ctx, false, func(c client.Client) error {
		token, err := engine.EnsureToken(tokenFile)
		if err != nil {
			return exitErr{code: ExitEnvironment, msg: fmt.Sprintf("web: %v", err)}
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(a.cfg.Web.Port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return &engine.PortInUseError{What: "horizon web", Addr: addr, Err: err, Setting: "HORIZON_WEB_PORT"}
		}
		s := &web.Server{
			Core: &webBackend{a: a, c: c}, Token: token, PublicReads: a.cfg.Web.PublicReads, Log: a.log,
			RunURL: func(id string) string { return runURL(a.cfg, id) },
		}
		srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
		url := "http://" + addr + "/"
		if o.json {
			if err := json.NewEncoder(a.out).Encode(webStarted{URL: url, TokenFile: tokenFile}); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(a.out, "horizon web on %s\n  open %s#token=%s\n  API token in %s; Ctrl-C stops\n", url, url, token, tokenFile)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ln) }()
		select {
		case err := <-done:
			return fmt.Errorf("web: serve %s: %w", addr, err)
		case <-ctx.Done():
		}
		// Requests in flight are short (one update, one read): they get
		// a few seconds to finish.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	})
}

// webBackend adapts the core to the web's Core, the way the CLI commands
// use it: runs are prepared as `horizon start` prepares them, a
// repository's path is resolved to its supervisor.
type webBackend struct {
	a *app
	c client.Client
}

// webRuns is how many runs the dashboard lists, as `horizon list` does.
const webRuns = 50

func (b *webBackend) reader() core.Reader {
	return core.Reader{Client: b.c, Namespace: b.a.cfg.Temporal.Namespace}
}

func (b *webBackend) Runs(ctx context.Context) ([]web.RunRow, error) {
	return b.reader().Runs(ctx, "", webRuns)
}

func (b *webBackend) Run(ctx context.Context, id string) (*horizon.RunState, bool, error) {
	return fetchState(ctx, b.c, id)
}

func (b *webBackend) RunsSince(ctx context.Context, t time.Time) ([]horizon.RunState, error) {
	return b.reader().RunsSince(ctx, t)
}

func (b *webBackend) Needs(ctx context.Context) ([]core.Need, error) { return b.reader().Needs(ctx) }

func (b *webBackend) Report(_ context.Context, date string) (*web.Report, error) {
	r := core.Reports{DataDir: b.a.cfg.DataDir()}
	if date == "" {
		latest, err := r.Latest()
		if err != nil {
			return nil, err
		}
		date = latest
	}
	md, err := r.Markdown(date)
	if err != nil {
		return nil, err
	}
	js, err := r.JSON(date)
	if err != nil {
		return nil, err
	}
	return &web.Report{Date: date, Markdown: string(md), Report: js}, nil
}

func (b *webBackend) Spend(_ context.Context, days int) ([]horizon.DaySpend, error) {
	return core.Spend{DataDir: b.a.cfg.DataDir(), DayCeiling: b.a.cfg.Spend.DayCeiling}.Days(time.Now(), days)
}

func (b *webBackend) Supervisors(ctx context.Context) ([]horizon.SupervisorState, error) {
	return b.reader().Supervisors(ctx)
}

// inspect resolves a repository's path; one that is no repository is bad
// input.
func (b *webBackend) inspect(dir string) (repo.Info, error) {
	info, err := repo.Inspect(dir)
	if err != nil {
		return repo.Info{}, &web.InputError{Err: err}
	}
	return info, nil
}

func (b *webBackend) supervisorOf(dir string) (string, error) {
	info, err := b.inspect(dir)
	if err != nil {
		return "", err
	}
	return horizon.SupervisorID(info.Root), nil
}

func (b *webBackend) Queue(ctx context.Context, dir string) ([]core.QueueView, error) {
	id, err := b.supervisorOf(dir)
	if err != nil {
		return nil, err
	}
	return b.a.supervisors(b.c).Queue(ctx, id)
}

func (b *webBackend) Roadmap(ctx context.Context, dir string) (*core.RoadmapView, error) {
	info, err := b.inspect(dir)
	if err != nil {
		return nil, err
	}
	v, err := b.a.supervisors(b.c).Roadmap(ctx, info.Root, strings.TrimPrefix(info.Ref, "refs/heads/"), b.a.cfg.Supervisor.Roadmap)
	if err != nil {
		return nil, &web.InputError{Err: err}
	}
	return v, nil
}

// forRepo is the app as a command run with --repo dir would have it.
func (b *webBackend) forRepo(dir string) *app {
	a := *b.a
	a.repoDir = dir
	return &a
}

// inputError says the CLI's bad input (exit 2) as the web's.
func inputError(err error) error {
	if err != nil && exitCode(err) == ExitUsage {
		return &web.InputError{Err: err}
	}
	return err
}

func (b *webBackend) Start(ctx context.Context, r web.StartRequest) (*web.Started, error) {
	a := b.forRepo(r.Repo)
	p, err := a.prepare(ctx, r.Goal, defaultKind)
	if err != nil {
		return nil, inputError(err)
	}
	p.input.Planned = a.cfg.Run.Planned && !r.Single
	if r.Autonomy != "" {
		if p.input.Autonomy, err = horizon.ParseAutonomy(r.Autonomy); err != nil {
			return nil, &web.InputError{Err: err}
		}
	}
	if err := a.runs(b.c).Start(ctx, p.input); err != nil {
		return nil, err
	}
	return &web.Started{RunID: p.input.RunID}, nil
}

func (b *webBackend) Approve(ctx context.Context, id, subject, note string) (*horizon.RunState, error) {
	return b.a.runs(b.c).Approve(ctx, id, workflows.Approve{Subject: subject, Note: note})
}

func (b *webBackend) Unblock(ctx context.Context, id, feature, note string) (*horizon.RunState, error) {
	return b.a.runs(b.c).Unblock(ctx, id, workflows.Unblock{Feature: feature, Note: note})
}

func (b *webBackend) Pause(ctx context.Context, id string) (*horizon.RunState, error) {
	return b.a.runs(b.c).Pause(ctx, id)
}

func (b *webBackend) Resume(ctx context.Context, id string) (*horizon.RunState, error) {
	return b.a.runs(b.c).Resume(ctx, id)
}

func (b *webBackend) SetCeiling(ctx context.Context, id string, usd float64, day bool) (*horizon.RunState, error) {
	return b.a.runs(b.c).SetCeiling(ctx, id, usd, day)
}

func (b *webBackend) Cancel(ctx context.Context, id string) error {
	return b.a.runs(b.c).Cancel(ctx, id)
}

func (b *webBackend) SupervisorStart(ctx context.Context, dir, autonomy string, req core.DayCeilingRequest) (*horizon.SupervisorState, error) {
	a := b.forRepo(dir)
	ceiling, err := core.ChooseDayCeiling(req, a.cfg.Spend.DayCeiling)
	if err != nil {
		return nil, &web.InputError{Err: err} // the API names its fields around it
	}
	in, err := a.supervisorInput(ctx, autonomy)
	if err != nil {
		return nil, inputError(err)
	}
	if err := a.startSupervisor(ctx, b.c, in, ceiling); err != nil {
		return nil, err
	}
	return a.supervisors(b.c).Supervisor(ctx, in.ID)
}

func (b *webBackend) SupervisorStop(ctx context.Context, dir string) (*horizon.SupervisorState, error) {
	id, err := b.supervisorOf(dir)
	if err != nil {
		return nil, err
	}
	return b.a.supervisors(b.c).Stop(ctx, id)
}

func (b *webBackend) QueueAdd(ctx context.Context, dir string, e horizon.QueueEntry) (*horizon.QueueEntry, error) {
	id, err := b.supervisorOf(dir)
	if err != nil {
		return nil, err
	}
	return b.a.supervisors(b.c).QueueAdd(ctx, id, e)
}

func (b *webBackend) QueueRemove(ctx context.Context, dir, entry string) (*horizon.SupervisorState, error) {
	id, err := b.supervisorOf(dir)
	if err != nil {
		return nil, err
	}
	return b.a.supervisors(b.c).QueueRemove(ctx, id, entry)
}

func (b *webBackend) QueueMove(ctx context.Context, dir, entry string) (*horizon.SupervisorState, error) {
	id, err := b.supervisorOf(dir)
	if err != nil {
		return nil, err
	}
	return b.a.supervisors(b.c).QueueMove(ctx, id, entry)
}
