package fakemodel

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOutages(t *testing.T) {
	s := New(&Script{Rules: []Rule{
		{Name: "refused", When: []string{"secret"}, Replies: []Reply{{Status: 401, Error: "Incorrect API key provided"}}},
	}})
	require.NoError(t, s.Start("127.0.0.1:0"))
	t.Cleanup(func() { s.Close() })
	// A fresh connection per request: a kept-alive one would meet EOF, not
	// a refused connection, after Down.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	post := func(text string) (int, string, error) {
		body := `{"model":"m","messages":[{"role":"user","content":"` + text + `"}]}`
		resp, err := client.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}

	code, body, err := post("say the secret")
	require.NoError(t, err)
	require.Equal(t, 401, code)
	require.Contains(t, body, "Incorrect API key provided")

	code, _, err = post("hello")
	require.NoError(t, err)
	require.Equal(t, 200, code)

	s.Fail(503, "Service Unavailable")
	code, body, err = post("hello")
	require.NoError(t, err)
	require.Equal(t, 503, code)
	require.Contains(t, body, "Service Unavailable")
	s.Recover()

	url := s.URL()
	require.NoError(t, s.Down())
	_, _, err = post("hello")
	require.True(t, errors.Is(err, syscall.ECONNREFUSED), "down: %v", err)
	require.Error(t, s.Down(), "already down")

	require.NoError(t, s.Up())
	require.Equal(t, url, s.URL())
	code, _, err = post("hello")
	require.NoError(t, err)
	require.Equal(t, 200, code)
	require.Len(t, s.Requests(), 4, "every request that reached the server is recorded")

	bad := &Script{Rules: []Rule{{Name: "x", When: []string{"a"}, Replies: []Reply{{Status: 200}}}}}
	require.ErrorContains(t, bad.Validate(), "not an HTTP error status")
}
