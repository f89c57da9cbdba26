package main

import (
	"testing"
	"time"
)

func TestConsoleFlags(t *testing.T) {
	testFlags(t, newConsoleCmd, []flagCase[consoleOptions]{
		{name: "defaults", args: nil, want: consoleOptions{interval: 5 * time.Second}},
		{name: "plain, slower", args: []string{"--plain", "--interval", "15s"}, want: consoleOptions{plain: true, interval: 15 * time.Second}},
		{name: "too often", args: []string{"--interval", "100ms"}, err: "--interval 100ms: give at least 1s"},
		{name: "a run", args: []string{"run-1"}, err: "takes no arguments"},
	})
}
