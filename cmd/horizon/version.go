package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type versionOptions struct{ app *app }

func newVersionCmd(a *app, runF func(context.Context, *versionOptions) error) *cobra.Command {
	o := &versionOptions{app: a}
	return &cobra.Command{
		Use:         "version",
		Short:       "Print horizon's version, its source revision and Go version",
		Args:        noArgs(),
		Annotations: map[string]string{annotationConfig: configOptional},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return versionRun(cmd.Context(), o)
		},
	}
}

func versionRun(_ context.Context, o *versionOptions) error {
	a := o.app
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
		fmt.Fprintf(a.out, "horizon %s, %s\n", v, bi.GoVersion)
		return nil
	}
	fmt.Fprintf(a.out, "horizon %s\n", v)
	return nil
}
