package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// helpFlag finds a --flag in a help text with the command quoted before it,
// if any, so a flag of another command (`horizon start --model`) or
// program (systemctl --user) can be told from one offered to the reader.
var helpFlag = regexp.MustCompile(`((?:horizon|systemctl)(?: [a-z-]+)* )?--([a-z][a-z-]*)`)

// A command's help offers only flags the command has (its own or its
// parents' persistent ones); a flag of another command is quoted with that
// command. The root's help is a table of commands and is not checked.
func TestHelpNamesOnlyItsFlags(t *testing.T) {
	var wrong []string
	var check func(c *cobra.Command)
	check = func(c *cobra.Command) {
		for _, m := range helpFlag.FindAllStringSubmatch(c.Long, -1) {
			if m[1] != "" && strings.TrimSpace(m[1]) != c.CommandPath() {
				continue
			}
			if c.Flags().Lookup(m[2]) == nil && c.InheritedFlags().Lookup(m[2]) == nil {
				wrong = append(wrong, c.CommandPath()+" --"+m[2])
			}
		}
		for _, sub := range c.Commands() {
			check(sub)
		}
	}
	for _, c := range (&app{}).rootCmd().Commands() {
		check(c)
	}
	require.NotContains(t, wrong, "horizon models --model")
	require.Empty(t, wrong, "help texts that offer a flag their command does not have")
}
