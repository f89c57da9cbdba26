// Package fakemodel is a scripted, OpenAI-compatible chat-completions server
// that stands in for a language model in integration tests and in
// `horizon demo`. Nothing else in horizon is faked: the real agent binary
// (OpenCode) talks to it over HTTP exactly as it would to a local model, runs
// the tool calls the script asks for, and sends the results back.
//
// # Scripts
//
// A Script is a list of rules. Each request is matched against the rules in
// order: every When substring must occur, and no Unless substring may occur,
// in the text of the request's system messages plus all of its user messages.
// The rule's Replies are indexed by the request's step, the number of
// assistant messages after the last user message, so step 0 is the model's
// first turn after a prompt, step 1 its turn after the first tool results,
// and so on; past the end the last reply repeats. Times limits how many
// conversations (step-0 requests) a rule serves. A request carrying an
// x-session-id header (OpenCode sends one) stays, past step 0, with the rule
// that served its session's latest step 0, so an exhausted rule earlier in
// the list cannot capture the later steps of another rule's conversation.
// Requests that no rule matches get the script's Fallback (default: the
// text "ok").
//
// String values anywhere in a tool call's arguments, and reply text, may use
// the template {{workdir}}, replaced by the working directory the agent states
// in its system prompt (OpenCode: a line "  Working directory: /abs/path"
// inside its <env> block), or by "." when the request states none.
//
// A reply can wait: DelayMs sleeps, and Hold blocks until Server.Release
// names the hold (releases are sticky, so releasing first means no wait).
// Both end early when the client disconnects or the server closes. Every
// request is recorded on arrival, before any wait, so a test can
// WaitForRequest for it, inspect Requests (the tools each request offered,
// the tool results it carried), and watch InFlight drop when an agent lets
// go of a cancelled request. Replies stream as OpenAI server-sent
// events (or one JSON body when "stream" is false) with usage estimated at
// about four bytes a token unless the reply states it.
//
// # What OpenCode 1.18.33 sends
//
// Seen by running the real binary against this server (see the integration
// test):
//
//   - Every request is POST /v1/chat/completions with "stream": true and
//     "stream_options": {"include_usage": true}; headers carry
//     "Authorization: Bearer <apiKey>" and x-session-id. GET /v1/models is
//     never called (with OPENCODE_DISABLE_MODELS_FETCH=1).
//   - The prompt given to `opencode run` arrives as the last user message,
//     in double quotes: `opencode run "say hello"` sends "\"say hello\"".
//   - Besides the conversation, `opencode run` makes one auxiliary request,
//     the session title, sent before or alongside step 0: no tools, a system
//     message starting "You are a title generator", and user messages
//     "Generate a title for this conversation:" and the quoted prompt. Because
//     it quotes the prompt it would match the conversation's rules, so title
//     requests skip every rule unless one of the rule's When strings contains
//     "title generator"; normally they get the Fallback, are recorded with
//     Request.Title set, and use up no rule's Times. No other auxiliary
//     requests were seen (compaction only happens near the context limit).
//   - Compaction (POST /session/{id}/summarize, or OpenCode's own near the
//     context limit) is one request without tools whose last user message
//     quotes the conversation in <conversation> tags and holds
//     SummaryMarker; match it with a rule listed before the
//     conversation's.
//   - The conversation's tools are bash, edit, glob, grep, read, skill, task,
//     todowrite, webfetch and write. Arguments: write {filePath, content};
//     edit {filePath, oldString, newString, replaceAll?}; read {filePath,
//     offset?, limit?}; bash {command, timeout?, workdir?}. 1.18.33's bash has
//     no description argument; one sent anyway is ignored.
//   - Relative filePaths work for write, read and edit: they resolve against
//     the working directory, and write creates missing parent directories.
//     Absolute paths through {{workdir}} work too. Edit works on a file the
//     session never read, although its description says it would refuse.
//   - After a tool call the next request carries the assistant message with
//     its tool_calls and one "tool" message per call (tool output does not
//     count for matching), so its step is 1, and so on.
//   - OpenCode takes its working directory from $PWD, not from the process's
//     current directory: a Go caller that sets both exec.Cmd.Dir and Env must
//     put PWD in Env too, or the agent works in the caller's directory.
//
// OpenCode is kept offline and off the machine's own configuration with
// OPENCODE_DISABLE_AUTOUPDATE=1, OPENCODE_DISABLE_MODELS_FETCH=1 and HOME and
// the XDG directories pointed at a scratch directory (OpenCodeEnv); the
// provider is configured with WriteOpenCodeConfig and the OPENCODE_CONFIG
// environment variable. A first run in a fresh HOME tries to fetch
// @opencode-ai/plugin from the npm registry for its config directory; it
// works the same when the registry cannot be reached.
package fakemodel
