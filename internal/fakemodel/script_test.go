package fakemodel

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadScript(t *testing.T) {
	tests := []struct {
		file    string
		wantErr string // substring; "" means valid
	}{
		{file: "valid.json"},
		{file: "minimal.json"},
		{file: "dup_name.json", wantErr: `rule "twice" (#2) has the same name as rule #1`},
		{file: "empty_name.json", wantErr: "rule #1 has no name"},
		{file: "no_replies.json", wantErr: `rule "silent" has no replies`},
		{file: "tool_no_name.json", wantErr: `rule "nameless-tool": reply 1: tool call 1 has no name`},
		{file: "fallback_tool_no_name.json", wantErr: "fallback: tool call 0 has no name"},
		{file: "unknown_field.json", wantErr: `unknown field "toolcalls"`},
		{file: "negative_times.json", wantErr: `rule "negative": times is negative`},
		{file: "not_json.json", wantErr: "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			s, err := LoadScript(path)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.NotNil(t, s)
				return
			}
			require.Error(t, err)
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, err, path, "the error names the file")
			require.True(t, errors.Is(err, ErrInvalidScript))
		})
	}
}

func TestParseScriptValid(t *testing.T) {
	s, err := LoadScript(filepath.Join("testdata", "valid.json"))
	require.NoError(t, err)
	require.Len(t, s.Rules, 2)
	r := s.Rules[0]
	require.Equal(t, "write-hello", r.Name)
	require.Equal(t, []string{"Create hello.txt"}, r.When)
	require.Equal(t, []string{"do not write"}, r.Unless)
	require.Equal(t, 1, r.Times)
	require.Len(t, r.Replies, 2)
	require.Equal(t, []ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/hello.txt", "content": "hello\n"}}}, r.Replies[0].ToolCalls)
	require.Contains(t, r.Replies[1].Text, "```horizon-report\n")
	require.Equal(t, &Usage{PromptTokens: 100, CompletionTokens: 20}, r.Replies[1].Usage)
	require.Equal(t, Reply{Text: "finally", DelayMs: 10, Hold: "slow-gate"}, s.Rules[1].Replies[0])
	require.Equal(t, &Reply{Text: "Fallback title"}, s.Fallback)
	require.Equal(t, []string{"fake-coder", "fake-reader"}, s.Models)
}

func TestParseScriptRejectsTrailingData(t *testing.T) {
	_, err := ParseScript([]byte(`{"rules": []} {"rules": []}`))
	require.ErrorIs(t, err, ErrInvalidScript)
	require.ErrorContains(t, err, "trailing data")
}

func TestLoadScriptMissingFile(t *testing.T) {
	_, err := LoadScript(filepath.Join(t.TempDir(), "nope.json"))
	require.Error(t, err)
	require.ErrorContains(t, err, "nope.json")
}
