package ladder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBundled(t *testing.T) {
	lb := Bundled()
	require.GreaterOrEqual(t, lb.Revision, 1)
	require.NoError(t, lb.Validate())
	// Every role has models, ranked 1..n without gaps, so the file reads as
	// a leaderboard.
	for _, role := range Roles() {
		var ranks []int
		for _, m := range lb.Models {
			if rr, ok := m.Roles[role]; ok {
				ranks = append(ranks, rr.Rank)
			}
		}
		slices.Sort(ranks)
		require.NotEmpty(t, ranks, role)
		for i, r := range ranks {
			require.Equal(t, i+1, r, "ranks of %s: %v", role, ranks)
		}
	}
	// A local model is ranked for build, so T1 resolves with only a local provider.
	c, err := lb.ResolveLocal("worker", []string{"ollama/qwen2.5-coder:14b"})
	require.NoError(t, err)
	require.Equal(t, "local", c.CostClass)

	// Callers get their own copy.
	lb.Models[0].Name = "changed"
	require.NotEqual(t, "changed", Bundled().Models[0].Name)
	b := BundledJSON()
	b[0] = 'x'
	require.Equal(t, byte('{'), BundledJSON()[0])
}

// TestParseLeaderboardErrors checks the message for each broken file in
// testdata/leaderboard against its .golden.
func TestParseLeaderboardErrors(t *testing.T) {
	files, err := filepath.Glob("testdata/leaderboard/bad_*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			lb, err := ParseLeaderboard(data)
			require.Nil(t, lb)
			require.Error(t, err)
			if name != "bad_syntax" {
				var se *SchemaError
				require.ErrorAs(t, err, &se)
			}
			goldenFile(t, "leaderboard/"+name+".golden", err.Error()+"\n")
		})
	}
}

func TestParseLeaderboardSchemaErrorFields(t *testing.T) {
	tests := []struct {
		file, model, field string
	}{
		{"bad_duplicate_rank.json", "b", "roles.build.rank"},
		{"bad_unknown_role.json", "a", "roles.coder"},
		{"bad_routes.json", "no-routes", "routes"},
		{"bad_no_role.json", "idle", "roles"},
		{"bad_prose_fields.json", "gpt-5", "routerHint"},
		{"bad_prose_fields.json", "gpt-5", "roles.build.agentInstruction"},
		{"bad_top_level.json", "", "version"},
		{"bad_top_level.json", "gpt-5", "notes"},
	}
	for _, tt := range tests {
		t.Run(tt.file+" "+tt.field, func(t *testing.T) {
			_, err := ParseLeaderboard([]byte(readTestdata(t, "leaderboard/"+tt.file)))
			require.Error(t, err)
			require.True(t, hasSchemaError(err, tt.model, tt.field), "no SchemaError for model %q field %q in:\n%v", tt.model, tt.field, err)
		})
	}
}

// hasSchemaError looks through the joined errors for one naming model and field.
func hasSchemaError(err error, model, field string) bool {
	var se *SchemaError
	if errors.As(err, &se) && se.Model == model && se.Field == field {
		return true
	}
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		for _, x := range e.Unwrap() {
			if hasSchemaError(x, model, field) {
				return true
			}
		}
	case interface{ Unwrap() error }:
		return hasSchemaError(e.Unwrap(), model, field)
	}
	return false
}

func TestParseLeaderboardOverride(t *testing.T) {
	lb, err := ParseLeaderboard([]byte(readTestdata(t, "leaderboard/good_override.json")))
	require.NoError(t, err)
	require.Equal(t, 7, lb.Revision)
	require.Len(t, lb.Models, 2)
	c, err := lb.Resolve("worker", []string{"lmstudio/qwen2.5-coder-32b-instruct"})
	require.NoError(t, err)
	require.Equal(t, Choice{Role: "build", Model: "qwen2.5-coder:32b", Route: "lmstudio/qwen2.5-coder-32b-instruct", Rank: 1, CostClass: "local",
		Why: "worker is the build role; rank 1 for build, the best of 1 connected of 1 ranked models; first connected route of qwen2.5-coder:32b"}, c)
}

func TestResolve(t *testing.T) {
	lb := Bundled()
	everything := []string{
		"anthropic/claude-opus-4-1", "anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5",
		"openai/gpt-5", "openai/gpt-5-mini", "google/gemini-2.5-pro", "google/gemini-2.5-flash",
		"ollama/qwen2.5-coder:14b", "openrouter/anthropic/claude-sonnet-4.5",
	}
	tests := []struct {
		name       string
		role       string
		connected  []string
		model      string
		route      string
		rank       int
		wantErr    string
		available  []string // for a *NoModelError
		unknownErr bool
	}{
		{name: "worker is build: Sonnet first", role: "worker", connected: everything, model: "claude-sonnet-4-5", route: "anthropic/claude-sonnet-4-5", rank: 1},
		{name: "auditor is analyze: another family than the worker", role: "auditor", connected: everything, model: "gpt-5", route: "openai/gpt-5", rank: 1},
		{name: "lead", role: "lead", connected: everything, model: "claude-opus-4-1", route: "anthropic/claude-opus-4-1", rank: 1},
		{name: "planner is no role", role: "planner", connected: everything, unknownErr: true, wantErr: `resolve role "planner": unknown role`},
		{name: "research", role: "research", connected: everything, model: "gemini-2.5-pro", route: "google/gemini-2.5-pro", rank: 1},
		{name: "lowest rank among connected", role: "build", connected: []string{"openai/gpt-5", "google/gemini-2.5-pro"}, model: "gpt-5", route: "openai/gpt-5", rank: 2},
		{name: "second route when the first is not connected", role: "build", connected: []string{"openrouter/anthropic/claude-sonnet-4.5"}, model: "claude-sonnet-4-5", route: "openrouter/anthropic/claude-sonnet-4.5", rank: 1},
		{name: "first route in listed order when both are connected", role: "build", connected: []string{"openrouter/anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4-5"}, model: "claude-sonnet-4-5", route: "anthropic/claude-sonnet-4-5", rank: 1},
		{name: "local only: build resolves to the local model", role: "build", connected: []string{"ollama/qwen2.5-coder:14b"}, model: "qwen2.5-coder:14b", route: "ollama/qwen2.5-coder:14b", rank: 5},
		{name: "no cross-role fallback: research with only the local model", role: "research", connected: []string{"ollama/qwen2.5-coder:14b"},
			available: []string{"lead", "quick", "build", "explore", "analyze"},
			wantErr:   `no connected model is ranked for role "research" (there is no cross-role fallback); roles available: lead, quick, build, explore, analyze`},
		{name: "nothing connected", role: "auditor", connected: nil, available: nil,
			wantErr: `no connected model is ranked for role "analyze" (there is no cross-role fallback); no role is available: connect a provider that serves one of the leaderboard's routes`},
		{name: "a model ID without provider is not a route", role: "build", connected: []string{"claude-sonnet-4-5", "anthropic"}, available: nil,
			wantErr: `no connected model is ranked for role "build"`},
		{name: "unknown role", role: "coder", connected: everything, unknownErr: true, wantErr: `resolve role "coder": unknown role`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := lb.Resolve(tt.role, tt.connected)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				if tt.unknownErr {
					require.ErrorIs(t, err, ErrUnknownRole)
					return
				}
				var nm *NoModelError
				require.ErrorAs(t, err, &nm)
				require.Equal(t, tt.available, nm.Available)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.model, c.Model)
			require.Equal(t, tt.route, c.Route)
			require.Equal(t, tt.rank, c.Rank)
			canon, _ := CanonicalRole(tt.role)
			require.Equal(t, canon, c.Role)
			require.NotEmpty(t, c.Why)
		})
	}
}

func TestResolveLocal(t *testing.T) {
	lb := Bundled()
	c, err := lb.ResolveLocal("build", []string{"anthropic/claude-sonnet-4-5", "ollama/qwen2.5-coder:14b"})
	require.NoError(t, err)
	require.Equal(t, "ollama/qwen2.5-coder:14b", c.Route)
	_, err = lb.ResolveLocal("research", []string{"ollama/qwen2.5-coder:14b"})
	var nm *NoModelError
	require.ErrorAs(t, err, &nm)
	_, err = lb.ResolveLocal("build", []string{"anthropic/claude-sonnet-4-5"})
	require.ErrorAs(t, err, &nm)
	require.Empty(t, nm.Available, "no local model is connected at all")
}

// TestResolveAll renders what `horizon models` would show for three
// typical setups.
func TestResolveAll(t *testing.T) {
	setups := []struct {
		name      string
		connected []string
	}{
		{"anthropic only", []string{"anthropic/claude-opus-4-1", "anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5"}},
		{"openai and a local model", []string{"openai/gpt-5", "openai/gpt-5-mini", "ollama/qwen2.5-coder:14b"}},
		{"openrouter", []string{"openrouter/anthropic/claude-sonnet-4.5", "openrouter/openai/gpt-5", "openrouter/google/gemini-2.5-flash"}},
	}
	var g strings.Builder
	for _, s := range setups {
		choices, err := Bundled().ResolveAll(s.connected)
		fmt.Fprintf(&g, "## %s\n", s.name)
		for _, role := range Roles() {
			if c, ok := choices[role]; ok {
				fmt.Fprintf(&g, "%-8s rank %d %-20s %-40s %s\n", role, c.Rank, c.Model, c.Route, c.CostClass)
			}
		}
		if err != nil {
			fmt.Fprintf(&g, "errors:\n%s\n", err)
			var nm *NoModelError
			require.ErrorAs(t, err, &nm)
		}
		g.WriteString("\n")
		require.Len(t, choices, len(Roles())-strings.Count(fmt.Sprint(err), "no connected model"))
	}
	goldenFile(t, "resolve_all.golden", g.String())
}

func TestCanonicalRole(t *testing.T) {
	for in, want := range map[string]string{"worker": "build", "auditor": "analyze", "explorer": "explore", "lead": "lead", "explore": "explore", "research": "research"} {
		got, ok := CanonicalRole(in)
		require.True(t, ok, in)
		require.Equal(t, want, got)
	}
	// The reader is configured on its own; "planner" is no role.
	for _, in := range []string{"Build", "reader", "planner", ""} {
		_, ok := CanonicalRole(in)
		require.False(t, ok, in)
	}
}

func TestValidateCatchesEdits(t *testing.T) {
	lb := Bundled()
	lb.Models[1].Roles["lead"] = RoleRank{Rank: 1} // Opus already holds lead rank 1
	err := lb.Validate()
	require.ErrorContains(t, err, `duplicate rank 1 in role lead (also held by model "claude-opus-4-1")`)
}

func FuzzParseLeaderboard(f *testing.F) {
	f.Add(string(BundledJSON()))
	files, _ := filepath.Glob("testdata/leaderboard/*.json")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		lb, err := ParseLeaderboard([]byte(s))
		if err != nil {
			require.Nil(t, lb)
			return
		}
		// Whatever parses is valid, and resolves without panicking.
		require.NoError(t, lb.Validate())
		_, _ = lb.ResolveAll([]string{"openai/gpt-5"})
	})
}
