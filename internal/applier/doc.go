// Package applier drives the agent CLIs a person may already pay for and
// trust, Claude Code and Codex CLI, as horizon sessions: the T3/T4
// "cloud reasoning appliers" of the routing ladder. A leaderboard route
// names its applier by its provider: "claude-code/<model>" runs through
// Claude Code, "codex/<model>" through Codex CLI, anything else through
// OpenCode (package agent).
//
// A session here keeps the promises an OpenCode session keeps:
//
//   - Its ID is known early (Claude Code is given one with --session-id;
//     Codex names its thread in its first event) and reported through
//     agent.Progress, so the activity heartbeats it.
//   - Every line the CLI prints is appended to a session log that horizon
//     owns, one per session title, before it is acted on. A retry after a
//     crash reads it: a turn that finished is returned without running (or
//     paying) again; an unfinished one is continued in the same session
//     (`claude --resume <id>`, `codex exec resume <id>`) with
//     agent.ContinuationPrompt.
//   - The CLI runs in its own process group that dies with the daemon
//     (package child); cancelling kills the whole group.
//   - Read-only roles (auditor, lead, explorer, advisor) run with the CLI's
//     read-only mode: Claude Code without its write and shell tools, Codex
//     in its read-only sandbox.
//   - Claude Code's reported cost, and Codex's tokens priced from the
//     leaderboard, are the session's Usage.Cost: the activity records them
//     with the one spend authority, like an OpenCode session's.
//   - The advisor's watchdog reads the session from its log (advice.go)
//     and leaves its notes there; a waking note reaches the worker with
//     its next turn, in the same session.
//   - The person's login, keys and configuration are used as they are and
//     never changed. horizon's settings travel with each invocation
//     (Claude Code's --settings, Codex's -c overrides). The agent's shell
//     does not see vendor keys: Claude Code's own key reaches it through an
//     apiKeyHelper that reads a file horizon owns, and secret-looking
//     variables are left out of its environment; Codex's shell gets
//     shell_environment_policy excludes.
package applier
