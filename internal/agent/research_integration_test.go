package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// researchFact is what the loopback page says, and nothing else does.
const researchFact = "The frobnicate flag defaults to 42 since v3.1."

// The researcher, in a real OpenCode: it is offered webfetch and the
// read-only tools, not edit, write or bash; its fetch of a loopback page
// completes with the page's text, its fetch of a closed port fails with
// an error, the session goes on to its notes, and the session's finished
// parts carry each fetch's URL with its output or its error (what the
// Research activity records as sources).
func TestResearcherFetchesAndRecordsFailures(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>frob docs</title></head><body><h1>Flags</h1><p>%s</p></body></html>", researchFact)
	}))
	defer page.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String() + "/docs"
	require.NoError(t, l.Close())
	okURL := page.URL + "/docs/flags"

	script := map[string]any{"rules": []map[string]any{{
		"name": "researcher", "when": []string{"TASK-RESEARCH"},
		"replies": []map[string]any{
			{"tool_calls": []map[string]any{{"name": "webfetch", "args": map[string]any{"url": okURL, "format": "markdown"}}}},
			{"tool_calls": []map[string]any{{"name": "webfetch", "args": map[string]any{"url": closed, "format": "text"}}}},
			{"text": "Notes: the flag defaults to 42 (" + okURL + "). Sources: " + okURL + " (fetched), " + closed + " (failed)."},
		},
	}}}
	b, err := json.Marshal(script)
	require.NoError(t, err)
	h := newHarness(t, string(b))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := h.start(ctx)
	repo := gitRepo(t)

	res, err := s.RunSession(ctx, SessionRequest{
		Directory: repo, Agent: AgentResearcher, Model: "fake/fake-coder", Title: "research test",
		Prompt: "TASK-RESEARCH: find the frobnicate flag's default.",
	}, nil)
	require.NoError(t, err)
	require.Contains(t, res.Text, "defaults to 42")

	var offered []string
	var results []string
	for _, r := range h.fake.Requests() {
		if r.Rule == "researcher" {
			offered = r.Tools
			results = append(results, r.ToolResults...)
		}
	}
	require.Contains(t, offered, "webfetch")
	for _, tool := range []string{"read", "grep", "glob"} {
		require.Contains(t, offered, tool)
	}
	for _, tool := range []string{"edit", "write", "bash", "task", "question", "websearch"} {
		require.False(t, slices.Contains(offered, tool), "the researcher is offered %s: %v", tool, offered)
	}
	require.True(t, slices.ContainsFunc(results, func(s string) bool { return strings.Contains(s, researchFact) }), "the model read the page: %q", results)

	parts, err := s.Parts(ctx, repo, res.SessionID)
	require.NoError(t, err)
	var fetches []Part
	for _, p := range parts {
		if p.Type == "tool" && p.Tool == "webfetch" {
			fetches = append(fetches, p)
		}
	}
	require.Len(t, fetches, 2, "%+v", parts)
	url := func(p Part) string {
		var in struct {
			URL string `json:"url"`
		}
		require.NoError(t, json.Unmarshal(p.Input, &in))
		return in.URL
	}
	require.Equal(t, okURL, url(fetches[0]))
	require.Equal(t, "completed", fetches[0].Status)
	require.Contains(t, fetches[0].Output, researchFact)
	require.Equal(t, closed, url(fetches[1]))
	require.Equal(t, "error", fetches[1].Status, "a fetch of a closed port fails: %+v", fetches[1])
	require.NotEmpty(t, fetches[1].Output, "the failure carries its error")
	t.Logf("failed fetch: %s", fetches[1].Output)
}
