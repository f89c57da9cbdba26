// Package reader is horizon's T2 tier: a reader model that diagnoses a failed
// attempt and answers with text.
//
// # Its place in the ladder
//
// The ladder climbs T0 (ast-grep codemods) → T1 (a local coder model in a
// lane) → T2 (a reader) → T3/T4 (cloud appliers: OpenCode with a cloud model,
// Codex CLI, Claude Code). When a cheap attempt fails, an applier that starts
// from nothing but the goal tends to repeat it. Before paying for one, the
// ladder can ask a reader for a diagnosis: one non-streaming chat-completions
// call to any OpenAI-compatible endpoint (a local model or a metered cloud
// one) that sees the goal, the failing gate receipt (command, verdict, exit
// code, failing-assertion set, the end of the output), the attempt's diff and
// the auditor's findings, and returns a short plain-text diagnosis: the likely
// cause, the files and lines to change, and what not to do. horizon puts that
// text into the next worker's brief. A reader call costs one prompt of
// bounded size (see MaxPromptBytes) and a few hundred output tokens; an
// applier session costs many turns.
//
// # It never touches a lane
//
// The reader has no tools and no working directory: it gets text and returns
// text. It cannot edit, run or commit anything, so its answer is advice, never
// evidence. Whether the next attempt is done is still decided by the gate and
// the auditor. Everything the reader sees (test output, diffs) came from a
// lane and is untrusted: Prompt wraps it in tagged blocks and tells the model
// to treat it as data.
//
// # API
//
// Prompt builds the system and user messages from Evidence; it is pure and
// bounded (the output tail keeps its end, the diff its beginning, every cut on
// a UTF-8 boundary). Diagnose sends them: POST {BaseURL}/chat/completions with
// temperature 0, one retry on 429 or 5xx after a short backoff (a small
// Retry-After is respected), and the whole call inside Config.Timeout and the
// caller's context. A non-2xx answer is an *HTTPError; an answer with no text
// wraps ErrEmptyAnswer. The Diagnosis carries the token usage the server
// reported and, when Config has prices, the cost.
package reader
