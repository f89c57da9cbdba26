// Package specialist loads specialists: named sub-agents described by a
// Markdown manifest (YAML frontmatter plus a prompt body) in one of three
// scopes (built-in, user, project), validates them, resolves their model
// from the leaderboard, and renders them as OpenCode subagent files.
//
// It does file I/O only to read manifests and to create, replace or delete
// them; choosing a model is pure (given the leaderboard and the connected
// routes).
package specialist
