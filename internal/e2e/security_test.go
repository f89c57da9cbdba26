package e2e

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
	"github.com/horizon/horizon/internal/procnet"
)

// plantedKeys are vendor credentials in the operator's environment.
var plantedKeys = map[string]string{
	"OPENAI_API_KEY":     "sk-planted-openai-e2e",
	"ANTHROPIC_API_KEY":  "sk-planted-anthropic-e2e",
	"GEMINI_API_KEY":     "planted-gemini-e2e",
	"GOOGLE_API_KEY":     "planted-google-e2e",
	"OPENROUTER_API_KEY": "sk-planted-openrouter-e2e",
	"GROQ_API_KEY":       "gsk-planted-groq-e2e",
}

// A run whose worker prints its shell's environment: the command sees none
// of the six vendor keys horizon was started with, yet every model call
// OpenCode makes still carries the provider's key (taken from
// OPENAI_API_KEY through {env:...} in the provider config), and the run
// completes as usual.
func TestAgentShellHasNoVendorKeys(t *testing.T) {
	needsE2E(t)
	script := demoScript(t)
	for i := range script.Rules {
		if script.Rules[i].Name == "worker-1" {
			env := fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "env; echo ENV-DONE"}}}}
			script.Rules[i].Replies = append([]fakemodel.Reply{env}, script.Rules[i].Replies...)
		}
	}
	w := newWorld(t, script)
	providerKeyFromEnv(t, w, "OPENAI_API_KEY")
	for k, v := range plantedKeys {
		w.env = append(w.env, k+"="+v)
	}
	repo, _ := fixture(t)

	out, code := w.run(context.Background(), "start", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	require.Equal(t, horizon.StatusCompleted, w.status(id).Status)

	var envOut string
	calls := 0
	for _, r := range w.model.Requests() {
		calls++
		require.Equal(t, "Bearer "+plantedKeys["OPENAI_API_KEY"], r.Authorization, "request %d (rule %q, step %d)", calls, r.Rule, r.Step)
		if r.Rule == "worker-1" && r.Step == 1 {
			require.Len(t, r.ToolResults, 1)
			envOut = r.ToolResults[0]
		}
	}
	require.Contains(t, envOut, "ENV-DONE", "the worker's env command ran and its output reached the model")
	require.Contains(t, envOut, "PATH=")
	for k, v := range plantedKeys {
		require.NotContains(t, envOut, k+"=", "the worker's shell sees %s", k)
		require.NotContains(t, envOut, v)
	}
	for _, k := range []string{"OPENCODE_SERVER_PASSWORD=", "HORIZON_"} {
		require.NotContains(t, envOut, k)
	}

	// The transcript horizon keeps of the worker is as clean.
	tr, err := os.ReadFile(filepath.Join(w.home, "runs", id, "transcripts", "f1-attempt-1-worker.md"))
	require.NoError(t, err)
	for _, v := range plantedKeys {
		require.NotContains(t, string(tr), v)
	}
}

// Only the owner reaches the engine: a client of another home pointed at
// the daemon's frontend is refused without the token (and with a wrong
// one), and works with the token given as temporal.api_key_file.
func TestEngineAdmitsOnlyTheOwner(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, &fakemodel.Script{})
	// A home that already exists, made by hand with the usual umask.
	require.NoError(t, os.MkdirAll(w.home, 0o755))
	require.NoError(t, os.Chmod(w.home, 0o755))
	out, code := w.run(context.Background(), "resume")
	require.Equal(t, 0, code, out)
	requireOwnerOnly(t, w.home)
	requireNoListenerAnswersStrangers(t, w)
	st, err := os.Stat(filepath.Join(w.home, "engine.token"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	out, code = w.run(context.Background(), "list")
	require.Equal(t, 0, code, "the owner's CLI reads the token from its home: %s", out)

	wrong := filepath.Join(t.TempDir(), "wrong.token")
	require.NoError(t, os.WriteFile(wrong, []byte(strings.Repeat("ab", 32)), 0o600))
	stranger := append(append([]string{}, w.env...), "HORIZON_HOME="+filepath.Join(t.TempDir(), "other"), "HORIZON_TEMPORAL_ADDRESS=127.0.0.1:"+envValue(w.env, "HORIZON_TEMPORAL_PORT"))
	for _, tc := range []struct {
		name  string
		extra []string
		ok    bool
	}{
		{"no token", nil, false},
		{"wrong token", []string{"HORIZON_TEMPORAL_API_KEY_FILE=" + wrong}, false},
		{"the token", []string{"HORIZON_TEMPORAL_API_KEY_FILE=" + filepath.Join(w.home, "engine.token")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &world{t: t, home: w.home, env: append(append([]string{}, stranger...), tc.extra...), model: w.model}
			out, code := o.run(context.Background(), "list", "--json")
			if tc.ok {
				require.Equal(t, 0, code, out)
				var runs []map[string]any
				require.NoError(t, json.Unmarshal([]byte(out), &runs), out)
				return
			}
			require.NotEqual(t, 0, code, out)
			require.Regexp(t, `(?i)unauthori[sz]ed|permission`, out)
		})
	}
}

// providerKeyFromEnv makes the world's fake provider take its API key from
// the environment variable name, as a user's config for a real provider
// would.
func providerKeyFromEnv(t *testing.T, w *world, name string) {
	t.Helper()
	path := filepath.Join(envValue(w.env, "XDG_CONFIG_HOME"), "opencode", "opencode.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	prov := cfg["provider"].(map[string]any)[fakemodel.ProviderID].(map[string]any)
	prov["options"].(map[string]any)["apiKey"] = "{env:" + name + "}"
	data, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// envValue is the last value of name in env.
func envValue(env []string, name string) string {
	v := ""
	for _, e := range env {
		if s, ok := strings.CutPrefix(e, name+"="); ok {
			v = s
		}
	}
	return v
}

// requireOwnerOnly: the home is 0700 and nothing in it (the engine's
// database, OpenCode's store, logs, tokens) is open to group or others.
func requireOwnerOnly(t *testing.T, home string) {
	t.Helper()
	st, err := os.Stat(home)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "the home is narrowed to its owner")
	seen := 0
	require.NoError(t, filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		seen++
		require.Zero(t, info.Mode().Perm()&0o077, "%s is %s: open to others", p, info.Mode().Perm())
		return nil
	}))
	require.FileExists(t, filepath.Join(home, "temporal.db"))
	require.Greater(t, seen, 5)
}

// requireNoListenerAnswersStrangers lists every TCP socket the daemon and
// its children (OpenCode) listen on and asks each, without credentials,
// for the engine's workflows, over HTTP and gRPC: none answers. The Web
// UI answers its owner through the link `horizon ui` prints.
func requireNoListenerAnswersStrangers(t *testing.T, w *world) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tree, err := procnet.Tree(w.daemonPID())
	require.NoError(t, err)
	var all []procnet.Listener
	for _, pid := range tree {
		ls, err := procnet.Listening(pid)
		if err != nil {
			continue // a child that ended meanwhile
		}
		all = append(all, ls...)
	}
	require.GreaterOrEqual(t, len(all), 6, "the engine's frontend (gRPC, HTTP), its internal services and the UI")
	for _, l := range all {
		require.Empty(t, procnet.Answered(ctx, l.Addr), "pid %d's listener %s answered a stranger", l.PID, l.Addr)
	}

	link, code := w.run(ctx, "ui")
	require.Equal(t, 0, code, link)
	link = strings.TrimSpace(link)
	require.Contains(t, link, "?token=", "the link carries the UI's token")
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	resp, err := (&http.Client{Jar: jar, Timeout: 30 * time.Second}).Get(link)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the owner's link opens the UI: %s", body)
	require.NotContains(t, resp.Request.URL.String(), "token=", "the token leaves the address bar")

	// Even with the owner's cookie, another Host is refused: a page the
	// owner visits cannot reach the UI by DNS rebinding.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, resp.Request.URL.String(), nil)
	require.NoError(t, err)
	req.Host = "evil.example"
	rebound, err := (&http.Client{Jar: jar, Timeout: 30 * time.Second}).Do(req)
	require.NoError(t, err)
	rebound.Body.Close()
	require.Equal(t, http.StatusMisdirectedRequest, rebound.StatusCode, "the UI answered Host: evil.example")

	out, code := w.run(ctx, "ui", "run-nope")
	require.Equal(t, 2, code, "a link to a run the engine does not have is bad input: %s", out)
	require.Contains(t, out, `no run "run-nope"`)
	require.NotContains(t, out, "http")
}
