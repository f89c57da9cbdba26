package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// Argument checks. Every way a command line can be wrong is bad usage (exit
// 2) and says what the command takes; cobra's own checks return plain
// errors, which would exit 1.

func noArgs() cobra.PositionalArgs         { return argsBetween(0, 0) }
func exactArgs(n int) cobra.PositionalArgs { return argsBetween(n, n) }
func maxArgs(n int) cobra.PositionalArgs   { return argsBetween(0, n) }
func minArgs(n int) cobra.PositionalArgs   { return argsBetween(n, math.MaxInt) }
func argsBetween(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= lo && len(args) <= hi {
			return nil
		}
		var want string
		switch {
		case hi == 0:
			want = "no arguments"
		case lo == hi:
			want = plural(lo, "argument")
		case hi == math.MaxInt:
			want = "at least " + plural(lo, "argument")
		case lo == 0:
			want = "at most " + plural(hi, "argument")
		default:
			want = fmt.Sprintf("%d to %d arguments", lo, hi)
		}
		got := "none"
		if len(args) > 0 {
			q := make([]string, len(args))
			for i, a := range args {
				q[i] = strconv.Quote(a)
			}
			got = strings.Join(q, " ")
		}
		return usagef("%s takes %s, got %s; usage: %s", cmd.CommandPath(), want, got, cmd.UseLine())
	}
}

// unknownCommand is the root's answer to a word that names no command.
func unknownCommand(root *cobra.Command, word string) error {
	hint := ""
	if s := root.SuggestionsFor(word); len(s) > 0 {
		hint = "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usagef("unknown command %q%s (`%s --help` lists the commands)", word, hint, root.CommandPath())
}

// flagError makes every flag problem bad usage. A negative number is read
// as a cluster of one-letter flags ("-5" is "-5"): say so rather than
// "unknown shorthand flag: '5'".
func flagError(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) {
		if s := ne.GetSpecifiedShortnames(); s != "" {
			if _, perr := strconv.ParseFloat("-"+s, 64); perr == nil {
				return usagef("-%s is read as a flag: no amount or count %s takes can be negative (an argument that starts with \"-\" goes after \"--\")", s, cmd.CommandPath())
			}
		}
		// A goal or a name that starts with "-" is read as flags too.
		return usagef("%v; an argument that starts with \"-\" goes after \"--\" (%s [flags] -- \"-...\"), `%s --help` lists the flags", err, cmd.CommandPath(), cmd.CommandPath())
	}
	return usageError{err}
}

// plural is "1 feature", "2 features".
var plural = horizon.Plural

// idArg is an ID given on the command line: an explicit empty or blank
// one is refused, never read as "the newest" (a script's unset "$RUN"
// must not reach someone else's run), and so is anything that is not an
// ID (core.CheckID), before it is used in a query or a path.
func idArg(kind, arg string) (string, error) {
	if err := core.CheckID(kind, arg); err != nil {
		return "", usageError{err}
	}
	return arg, nil
}
