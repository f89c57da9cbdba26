// Package fakemodel is a scripted language-model server that stands in for a
// model in integration tests and in `horizon demo`. Nothing else in horizon
// is faked: the real agent binary talks to it over HTTP exactly as it would
// to its provider, runs the tool calls the script asks for, and sends the
// results back. One Server speaks three wire protocols, all served from the
// same Script, the same rule matching and the same recording:
//
//   - OpenAI chat completions, POST /v1/chat/completions (OpenCode);
//   - the Anthropic Messages API, POST /v1/messages (Claude Code), with
//     /v1/messages/count_tokens and HEAD /api/hello beside it;
//   - the OpenAI Responses API, POST /v1/responses (Codex CLI).
//
// GET /v1/models lists the models seen. Request.Protocol says which
// protocol a request used.
//
// # Scripts
//
// A Script is a list of rules. Each request is matched against the rules in
// order: every When substring must occur, and no Unless substring may occur,
// in the text of the request's system messages plus all of its user messages
// (Messages API: the system prompt, a string or text blocks, and the user
// messages' text blocks; Responses API: instructions, developer and system
// messages, and the user messages' input_text). Tool output never counts.
// Because all user messages count, a resumed conversation still contains
// its first prompt: list the rule for a later prompt first, or give the
// earlier rule an Unless. The rule's Replies are indexed by the request's
// step, the number of assistant turns after the last user message, so step
// 0 is the model's first turn after a prompt, step 1 its turn after the
// first tool results, and so on; past the end the last reply repeats. A
// user message that only carries tool results (Anthropic tool_result
// blocks) or the agent's own context (Claude Code messages of nothing but
// <system-reminder> blocks; Codex's <environment_context> and other
// messages that are one tag, and AGENTS.md instructions) is not a prompt
// and does not restart the count, and neither is an advisor's note (see
// AdvisorPrefix). In the Responses API the output items one response
// produced (reasoning, message, function and custom tool calls) are one
// turn. Times limits how many conversations (step-0 requests) a rule
// serves. A request carrying a session header (x-session-id from OpenCode,
// X-Claude-Code-Session-Id from Claude Code, session-id from Codex) stays,
// past step 0, with the rule that served the step 0 of the same session and
// prompt, so an exhausted rule earlier in the list cannot capture the later
// steps of another rule's conversation. Requests that no rule matches get
// the script's Fallback (default: the text "ok").
//
// A tool call is sent in the request's protocol: a tool_calls entry (chat
// completions), a tool_use block with the arguments as its input
// (Messages API), or a function_call item (Responses API). When the
// Responses request offers a "custom" (freeform) tool of the call's name,
// as Codex does apply_patch, the call is a custom_tool_call whose input is
// the string argument "input". String values anywhere in a tool call's
// arguments, and reply text, may use the template {{workdir}}, replaced by
// the working directory the agent states (OpenCode: a line "  Working
// directory: /abs/path" in its system prompt's <env> block; Claude Code: "
// - Primary working directory: /abs/path" in a system reminder of its first
// user message; Codex: <cwd>/abs/path</cwd> in its <environment_context>
// user message; the last one stated wins), or by "." when the request
// states none.
//
// A reply can wait: DelayMs sleeps, and Hold blocks until Server.Release
// names the hold (releases are sticky, so releasing first means no wait).
// Both end early when the client disconnects or the server closes. Every
// request is recorded on arrival, before any wait, so a test can
// WaitForRequest for it, inspect Requests (the tools each request offered,
// the tool results it carried, its session and credentials), and watch
// InFlight drop when an agent lets go of a cancelled request. Replies
// stream as server-sent events of the request's protocol (or one JSON body
// when "stream" is false) with usage estimated at about four bytes a token
// unless the reply states it. Errors, from a reply's Status or from Fail,
// are shaped as the protocol's provider shapes them: OpenAI {"error":
// {"message", "type", "param", "code"}} (401 invalid_request_error with
// code invalid_api_key, 429 rate_limit_error with code rate_limit_exceeded,
// 5xx server_error), Anthropic {"type": "error", "error": {"type",
// "message"}} (401 authentication_error, 403 permission_error, 429
// rate_limit_error, 529 overloaded_error, other 5xx api_error).
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
//
// # What Claude Code 2.1.328 sends
//
// Seen by running the real binary (`claude -p`) against this server (see
// appliers_test.go):
//
//   - Configuration is all environment: ANTHROPIC_BASE_URL=http://127.0.0.1:PORT
//     (no /v1; the client adds it) and ANTHROPIC_API_KEY. Every model request
//     is POST /v1/messages?beta=true with "stream": true, headers x-api-key
//     (the key), anthropic-version 2023-06-01, anthropic-beta
//     (claude-code-20250219 and others), X-Claude-Code-Session-Id (the
//     session id the CLI prints) and X-Stainless-Retry-Count, and a body with
//     model, system, messages, tools, metadata.user_id (JSON with the
//     session_id), max_tokens 32000, thinking {"type": "enabled"} and
//     context_management. Any model id is accepted (`--model
//     claude-sonnet-4-5`); the cost it prints is that id's list price
//     applied to the usage the server reports.
//   - Kept offline with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (with it
//     the model server is the only address it connects to, checked with
//     strace; without it it resolves outside hosts and sends HEAD /api/hello
//     to the model server, which answers 200), plus DISABLE_AUTOUPDATER=1,
//     DISABLE_TELEMETRY=1, DISABLE_ERROR_REPORTING=1, and HOME and
//     CLAUDE_CONFIG_DIR in a scratch directory (ClaudeEnv). Sessions are
//     stored as <config dir>/projects/<cwd, / made ->/<session id>.jsonl.
//   - It works in the process's current directory (not $PWD). The system
//     prompt is three text blocks ("x-anthropic-billing-header: ...", "You
//     are a Claude agent, built on Anthropic's Claude Agent SDK.", the long
//     prompt) and states no directory; the first user message is a list of
//     <system-reminder> text blocks (environment with " - Primary working
//     directory: /abs", model, deferred tools, agent types, skills, token
//     budget, git status, date, attribution) followed by the prompt as the
//     last text block. LastUser is that prompt alone.
//   - No auxiliary requests were seen in -p runs, with or without the
//     offline variables: no title, topic, quota or summary requests. The
//     binary has tool-free helper requests (session title, tool-use summary,
//     model check) behind feature flags; a request that offers no tools is
//     treated as one (ClaudeHelperMarker). It calls neither GET /v1/models
//     nor count_tokens.
//   - After a tool call the next request carries the assistant message (the
//     text, then one tool_use block per call) and one user message of
//     tool_result blocks (content a string; the last result has
//     "\n\n<system-reminder>\n<total_tokens>N tokens left</total_tokens>\n</system-reminder>"
//     appended), so its step is 1, and so on.
//   - Tools offered (acceptEdits or default mode): Agent, Bash, Edit,
//     ListAgents, Read, ReportFindings, ScheduleWakeup, Skill, ToolSearch,
//     Workflow, DeferredToolPlaceholder, Write; others (WebFetch, WebSearch,
//     NotebookEdit, Task*, Cron*, ...) are deferred behind ToolSearch. The
//     init line names the tools its own way (Task, not Agent). Arguments:
//     Write {file_path, content}; Edit {file_path, old_string, new_string,
//     replace_all?}; Read {file_path, offset?, limit?, pages?, allow_large?};
//     Bash {command, timeout?, description?, run_in_background?,
//     dangerouslyDisableSandbox?}. Write creates
//     missing parent directories and takes a relative file_path (against
//     the working directory) although its schema asks for an absolute one.
//     Edit, and Write over an existing file, refuse a file the session has
//     not Read: "<tool_use_error>File has not been read yet. Read it first
//     before writing to it.</tool_use_error>" (is_error). Results: Write
//     "File created successfully at: <path> (file state is current in your
//     context — no need to Read it back)", Edit "The file <path> has been
//     updated successfully. (...)", Read numbered lines ("1\thi\n2\t"), Bash
//     its output.
//   - Permission modes in -p: with --permission-mode acceptEdits, Write,
//     Edit, and Bash commands that write inside the working directory, run
//     (`echo hi > out.txt` did). In the default mode and in
//     --permission-mode plan every write is denied without a prompt: the
//     tool result is an error ("Claude requested permissions to write to
//     <path>, but you haven't granted it yet." / "Cannot write to <path>
//     while in plan mode."; Bash: "touch in '<path>' needs approval. ..."),
//     a system/permission_denied line is printed, and the result line lists
//     the call in permission_denials; read-only Bash (ls) still runs.
//     --disallowedTools "Write Edit MultiEdit NotebookEdit Bash" takes the
//     tools out of the request (Glob and Grep are offered instead); a call
//     to one anyway gets "<tool_use_error>Error: No such tool available:
//     Write. Write is disabled for this session, in subagents as well as
//     here.</tool_use_error>" and is no permission denial. As root,
//     --dangerously-skip-permissions and --permission-mode bypassPermissions
//     refuse to start unless IS_SANDBOX=1 is set.
//   - stdout with --output-format stream-json (which needs --verbose), one
//     JSON object a line: system/init {session_id, cwd, model,
//     permissionMode, tools, mcp_servers, apiKeySource,
//     claude_code_version, ...}; one assistant line per content block
//     {message: {id, model, content: [one text or tool_use block], usage},
//     session_id, parent_tool_use_id}; one user line per tool result
//     {message: {content: [tool_result]}, tool_use_result (structured: Write
//     {type, filePath, content, structuredPatch, originalFile}, Bash
//     {stdout, stderr, interrupted, ...})}; system/api_retry {attempt,
//     max_retries, retry_delay_ms, error_status, error} before each retry;
//     system/permission_denied {tool_name, tool_use_id, message}; and last
//     result {subtype "success", is_error, result (the final text),
//     session_id, num_turns, total_cost_usd, usage {input_tokens,
//     output_tokens, cache_*}, modelUsage {<model>: {inputTokens,
//     outputTokens, costUSD, contextWindow, ...}}, permission_denials
//     [{tool_name, tool_use_id, tool_input}], stop_reason, terminal_reason
//     "completed", api_error_status, api_error_type, duration_ms}. Exit
//     status 0.
//   - API errors: a failed request is retried 10 times with backoff from
//     0.5 s growing past 30 s, 401 and 429 included, unless
//     CLAUDE_CODE_MAX_RETRIES=0 (ClaudeEnv sets it). Then it prints an
//     assistant line with model "<synthetic>", is_api_error_message true,
//     error, api_error_status, api_error_type and the text, and a result
//     line with is_error true, subtype still "success", terminal_reason
//     "api_error", api_error_status, api_error_type and the text as result;
//     exit status 1. By status (error / text): 500 server_error / "API
//     Error: 500 <message>. This is a server-side issue, usually temporary —
//     try again in a moment. If it persists, check your inference gateway
//     (127.0.0.1:PORT)."; 529 the same with 529 and api_error_type
//     overloaded_error; 401 authentication_failed / "Failed to authenticate.
//     API Error: 401 <message>", but "Invalid API key · Fix external API
//     key" when the message is Anthropic's "invalid x-api-key"; 403
//     authentication_failed / "Failed to authenticate. API Error: 403
//     <message>"; 429 rate_limit / "API Error: Request rejected (429) ·
//     <message>".
//   - Resume: `claude -p --resume <session id> "next prompt"` keeps the
//     session id (init, result and X-Claude-Code-Session-Id) and sends the
//     whole earlier conversation, tool calls and results included, then a
//     new user message of a token-budget reminder and the prompt, so the
//     new prompt's step is 0. An unknown id prints a result line with
//     subtype "error_during_execution" and is_error true, and "No
//     conversation found with session ID: <id>" on stderr; exit status 1.
//     `--session-id <uuid>` starts a new session with that id; a used id
//     fails with "Error: Session ID <id> is already in use." and a non-UUID
//     with "Error: Invalid session ID. Must be a valid UUID." (stderr, exit
//     status 1, no request).
//
// # What Codex CLI 0.169.0 sends
//
// Seen by running the real binary (`codex exec --json`) against this server
// (see appliers_test.go):
//
//   - The provider is configured on the command line (CodexArgs): -c
//     model_providers.fake={name="fake", base_url="http://127.0.0.1:PORT/v1",
//     wire_api="responses", env_key="FAKE_KEY", request_max_retries=0,
//     stream_max_retries=0} -c model_provider=fake -m <model>, with the key
//     in $FAKE_KEY and CODEX_HOME an existing directory (a missing one is an
//     error: "CODEX_HOME points to ..., but that path does not exist";
//     CodexEnv). Every model request is POST /v1/responses with "stream":
//     true, store false, tool_choice auto, parallel_tool_calls true,
//     include ["reasoning.encrypted_content"] and prompt_cache_key, and
//     headers Authorization "Bearer <key>", session-id and thread-id (both
//     the thread id it prints), x-client-request-id, originator codex_exec,
//     x-codex-window-id and x-codex-turn-metadata (JSON: thread_id, turn_id,
//     request_kind "turn", history_initialization "new" or "cold_resume",
//     sandbox "seccomp", sandbox_mode, model, workspaces). GET /v1/models is
//     never called. No auxiliary requests were seen.
//   - Kept offline with --disable plugins (else it runs `git ls-remote
//     https://github.com/openai/plugins.git HEAD` and looks up
//     api.github.com) and -c analytics.enabled=false (else it looks up
//     ab.chatgpt.com); with both, strace saw no lookup and no connection but
//     the model server's. It prints "Reading additional input from
//     stdin..." on stderr and reads stdin when it is not a terminal (give it
//     /dev/null), and warns that it will not create PATH aliases when
//     CODEX_HOME is under /tmp; neither matters.
//   - The model id picks the tools. For a model in its catalogue (gpt-5.5,
//     gpt-5.6-sol, ...): exec_command, write_stdin, request_user_input,
//     apply_patch (a "custom" tool: freeform input in its Lark grammar,
//     "*** Begin Patch\n*** Add File: path\n+line\n*** End Patch\n", also
//     "*** Update File:" with @@ hunks and "*** Delete File:"), view_image,
//     get_goal, create_goal, update_goal, tool_search and web_search. For
//     any other id (`-m some-model`): no apply_patch and no tool_search but
//     the multi_agent_v1 namespace (spawn_agent, send_input, wait_agent,
//     resume_agent, close_agent), and a first item of type error, "Model
//     metadata for `some-model` not found. Defaulting to fallback metadata;
//     this can degrade performance and cause issues.". Arguments:
//     exec_command {cmd, workdir?, yield_time_ms?, max_output_tokens?,
//     login?, tty?, shell?, sandbox_permissions?, justification?,
//     prefix_rule?}; relative paths in a patch resolve against the working
//     directory. Results: exec_command "Chunk ID: ...\nWall time: ...
//     seconds\nProcess exited with code N\nOriginal token count:
//     N\nOutput:\n<output>"; apply_patch "Exit code: 0\nWall time: 0.1
//     seconds\nOutput:\nSuccess. Updated the following files:\nA
//     hello.txt\n".
//   - It sends no instructions: the system prompt is the first developer
//     message ("You are Codex, a coding agent based on GPT-5. ..."), then
//     comes a developer message of <skills_instructions>, a user message
//     <environment_context> (<cwd>, shell, date, timezone, the sandbox's
//     file-system permissions), and the prompt as its own user message. It
//     works in the process's current directory (or -C/--cd), not $PWD.
//     After a tool call the next request repeats the input with the
//     function_call or custom_tool_call items and their
//     function_call_output or custom_tool_call_output items appended.
//   - Sandbox: `codex exec` defaults to --sandbox read-only, and the sandbox
//     works in this container (Codex runs commands in its bundled
//     bubblewrap; the turn metadata says seccomp). In read-only a write
//     fails inside the command ("touch: cannot touch 't.txt': Read-only file
//     system", exit code 1, which the model gets as output) and a patch is
//     refused without running ("patch rejected: writing is blocked by
//     read-only sandbox; rejected by user approval settings"); no approval
//     is asked. stdout then shows no file_change item for the patch, and
//     mostly no item at all for the failed command (once, an item with
//     status "failed" and exit_code 1). --sandbox workspace-write runs
//     shell commands and patches that write in the working directory (and
//     /tmp) but keeps .git read-only; -s danger-full-access and
//     --dangerously-bypass-approvals-and-sandbox run everything.
//   - stdout with --json, one JSON object a line: thread.started
//     {thread_id}; turn.started; item.started and item.completed {item: {id
//     "item_N", type, ...}} with types agent_message {text},
//     command_execution {command ("/bin/bash -lc ..."), aggregated_output,
//     exit_code, status in_progress/completed/failed}, file_change {changes
//     [{path, kind "add"/...}], status} and error {message} (a warning: the
//     run goes on); turn.completed {usage {input_tokens,
//     cached_input_tokens, cache_write_input_tokens, output_tokens,
//     reasoning_output_tokens}}; exit status 0. On failure: error {message},
//     then turn.failed {error {message}}; exit status 1.
//   - API errors: by default a failed request is retried, 4 request retries
//     times 5 stream retries (30 requests over 25 s for a 500; a 401 is
//     retried 5 times), each retry printed as an error line "Reconnecting...
//     n/5 (<message>)". With request_max_retries=0 and stream_max_retries=0
//     there is one request and the message is: 500 "We’re currently
//     experiencing high demand, which may cause temporary errors." (Codex's
//     own text, not the server's); 401 and 503 "unexpected status 401
//     Unauthorized: <message>, url: http://127.0.0.1:PORT/v1/responses"; 429
//     "exceeded retry limit, last status: 429 Too Many Requests".
//   - Resume: `codex exec resume <options> <thread id> "next prompt"` (the
//     options of CodexArgs work after resume; it has no --sandbox, so use -c
//     sandbox_mode="workspace-write", else it is read-only) prints the same
//     thread_id and sends the whole thread again: the earlier items, tool
//     calls and outputs, the final assistant message, then a developer
//     <permissions instructions> message, a new <environment_context>
//     without <cwd>, and the prompt, so the new prompt's step is 0. Threads
//     are stored as $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl.
package fakemodel
