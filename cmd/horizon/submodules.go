package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/internal/repo"
)

// checkSubmodules refuses, as bad input, a submodule of HEAD that lanes
// could not set up (activities.CheckSubmodules, as the run's preflight
// checks it): found here, it costs nothing; found by the run, a run and
// its record exist for nothing.
func checkSubmodules(ctx context.Context, info repo.Info) error {
	err := activities.CheckSubmodules(ctx, info.Root, info.Head)
	var se *activities.SubmoduleError
	switch {
	case errors.As(err, &se):
		return usageError{err}
	case err != nil:
		return fmt.Errorf("check submodules of %s: %w", info.Root, err)
	}
	return nil
}

// submodulesCheck is doctor's line for the same check.
func submodulesCheck(ctx context.Context, info repo.Info) check {
	err := checkSubmodules(ctx, info)
	var se *activities.SubmoduleError
	switch {
	case errors.As(err, &se):
		return check{Name: "submodules", Detail: fmt.Sprintf("lanes cannot set up submodule %s (path %s): %s", se.Name, se.Path, se.Reason),
			Fix: fmt.Sprintf("run `git submodule update --init -- %s` in %s", se.Path, se.Repo), input: true}
	case err != nil:
		return check{Name: "submodules", Detail: err.Error(), Fix: "see `git submodule status` in " + info.Root}
	}
	return check{Name: "submodules", OK: true, Detail: "lanes can set up every submodule HEAD records (none, or each from the repository's own copy)"}
}
