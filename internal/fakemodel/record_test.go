package fakemodel

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// A request is recorded with its Authorization header and the tool results
// of its conversation since the last user message, so a test can check
// what credentials an agent sent and what its tools printed.
func TestRecordsAuthorizationAndToolResults(t *testing.T) {
	s := New(nil)
	body := chatBody(t, chatOpts{},
		system("sys"), user("old"), assistant(""), toolResult("c0", "stale output"),
		user("go"), assistant(""), toolResult("c1", "PATH=/bin\nHOME=/h"), assistant(""), toolResult("c2", "second"))
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-test")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	serve(t, s, chatOpts{}, user("no auth"))
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, "Bearer sk-test", reqs[0].Authorization)
	require.Equal(t, []string{"PATH=/bin\nHOME=/h", "second"}, reqs[0].ToolResults)
	require.Equal(t, 2, reqs[0].Step)
	require.Empty(t, reqs[1].Authorization)
	require.Empty(t, reqs[1].ToolResults)
}

// A request is recorded with the names of the tools it offers, so a test
// can check which agent may call what.
func TestRecordsOfferedTools(t *testing.T) {
	s := New(nil)
	body := map[string]any{"model": DefaultModel, "messages": []msg{user("go")}, "tools": []map[string]any{
		{"type": "function", "function": map[string]any{"name": "read", "parameters": map[string]any{}}},
		{"type": "function", "function": map[string]any{"name": "horizon_consult_advisor", "parameters": map[string]any{}}},
	}}
	data, err := json.Marshal(body)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(data)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	serve(t, s, chatOpts{}, user("no tools"))
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, []string{"read", "horizon_consult_advisor"}, reqs[0].Tools)
	require.Empty(t, reqs[1].Tools)
}
