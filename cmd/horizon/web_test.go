package main

import (
	"testing"
)

func TestWebFlags(t *testing.T) {
	testFlags(t, newWebCmd, []flagCase[webOptions]{
		{name: "defaults", args: nil, want: webOptions{}},
		{name: "json", args: []string{"--json"}, want: webOptions{json: true}},
		{name: "an argument", args: []string{"8000"}, err: "takes no arguments"},
	})
}
