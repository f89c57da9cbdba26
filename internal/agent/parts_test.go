package agent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Only finished messages give parts: a user message, a completed or failed
// assistant message; one still being written (or cut off by a crash)
// gives none yet. Step markers, synthetic and empty text are left out.
func TestFinishedParts(t *testing.T) {
	const msgs = `[
	  {"info": {"id": "m1", "role": "user"}, "parts": [
	    {"id": "p1", "type": "text", "text": "look"},
	    {"id": "p1s", "type": "text", "text": "injected", "synthetic": true}]},
	  {"info": {"id": "m2", "role": "assistant", "time": {"created": 1, "completed": 2}, "finish": "tool-calls"}, "parts": [
	    {"id": "p2", "type": "step-start"},
	    {"id": "p3", "type": "reasoning", "text": "hmm"},
	    {"id": "p4", "type": "tool", "tool": "read", "state": {"status": "completed", "input": {"filePath": "a.go"}, "output": "package a"}},
	    {"id": "p5", "type": "step-finish"}]},
	  {"info": {"id": "m3", "role": "assistant", "time": {"created": 3}, "error": {"name": "MessageAbortedError"}}, "parts": [
	    {"id": "p6", "type": "tool", "tool": "bash", "state": {"status": "error", "error": "aborted"}},
	    {"id": "p7", "type": "text", "text": ""}]},
	  {"info": {"id": "m4", "role": "assistant", "time": {"created": 4}}, "parts": [
	    {"id": "p8", "type": "text", "text": "half a sent"}]}
	]`
	var in []wireMessage
	require.NoError(t, json.Unmarshal([]byte(msgs), &in))
	require.Equal(t, []Part{
		{ID: "p1", MessageID: "m1", Role: "user", Type: "text", Text: "look"},
		{ID: "p3", MessageID: "m2", Role: "assistant", Type: "reasoning", Text: "hmm"},
		{ID: "p4", MessageID: "m2", Role: "assistant", Type: "tool", Tool: "read", Status: "completed", Input: json.RawMessage(`{"filePath": "a.go"}`), Output: "package a"},
		{ID: "p6", MessageID: "m3", Role: "assistant", Type: "tool", Tool: "bash", Status: "error", Output: "aborted"},
	}, finishedParts(in))
}
