package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/internal/repo"
)

// submodulesCheck is doctor's line for the same check.
func submodulesCheck(ctx context.Context, info repo.Info) check {
	err := core.CheckSubmodules(ctx, info)
	var se *core.SubmoduleError
	switch {
	case errors.As(err, &se):
		return check{Name: "submodules", Detail: fmt.Sprintf("lanes cannot set up submodule %s (path %s): %s", se.Name, se.Path, se.Reason),
			Fix: fmt.Sprintf("run `git submodule update --init -- %s` in %s", se.Path, se.Repo), input: true}
	case err != nil:
		return check{Name: "submodules", Detail: err.Error(), Fix: "see `git submodule status` in " + info.Root}
	}
	return check{Name: "submodules", OK: true, Detail: "lanes can set up every submodule HEAD records (none, or each from the repository's own copy)"}
}
