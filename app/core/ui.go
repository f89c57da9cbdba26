package core

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"

	"go.temporal.io/api/serviceerror"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/secret"
)

// RunURL is the Temporal Web UI page of workflow id (all runs for ""),
// without the token: for pages that are themselves shown to others. ""
// when the UI is off or remote.
func RunURL(cfg *config.Config, id string) string { return uiLink(cfg.UIURL(), uiPath(cfg, id), "") }

// RunLink is RunURL with the UI's token, which a browser trades for a
// cookie on first use: printed only to the person who owns the home. The
// daemon makes the token; before it has, the link is the bare address.
func RunLink(cfg *config.Config, id string) string {
	tok, _ := secret.Read(filepath.Join(cfg.Home, secret.UIFile))
	return uiLink(cfg.UIURL(), uiPath(cfg, id), tok)
}

func uiPath(cfg *config.Config, id string) string {
	if id == "" {
		return "/"
	}
	return fmt.Sprintf("/namespaces/%s/workflows/%s", url.PathEscape(cfg.Temporal.Namespace), url.PathEscape(id))
}

// uiLink is the Web UI address of path with the token that lets a browser
// in.
func uiLink(base, path, token string) string {
	if base == "" {
		return ""
	}
	u := base + path
	if token == "" {
		return u
	}
	return u + "?token=" + url.QueryEscape(token)
}

// Exists reports whether the engine knows workflow id (a run, a loop, a
// supervisor): a *NotFoundError when not.
func (a *App) Exists(ctx context.Context, id string) error {
	if _, err := a.c.DescribeWorkflowExecution(ctx, id, ""); err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return &NotFoundError{ID: id}
		}
		return fmt.Errorf("describe %s: %w", id, err)
	}
	return nil
}
