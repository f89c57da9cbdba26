package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/secret"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/app/web"
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
	return a.withEngine(ctx, false, func(h *core.App) error {
		token, err := secret.Ensure(tokenFile)
		if err != nil {
			return exitErr{code: ExitEnvironment, msg: fmt.Sprintf("web: %v", err)}
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(a.cfg.Web.Port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return &config.PortInUseError{What: "horizon web", Addr: addr, Err: err, Setting: "HORIZON_WEB_PORT"}
		}
		s := &web.Server{
			Core: h, Token: token, PublicReads: a.cfg.Web.PublicReads, Log: a.log,
			RunURL: func(id string) string { return core.RunURL(a.cfg, id) },
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
