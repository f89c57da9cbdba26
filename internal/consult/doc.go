// Package consult is horizon's consult tool: `horizon mcp`, a stdio MCP
// server that OpenCode starts for the worker, with one tool,
// consult_advisor {question, context?}. A call sends the question, with the
// latest messages of the calling session, to the consult model in a
// read-only OpenCode session (agent horizon-consultant) and returns its
// answer as the tool's result.
//
// # Where a consult is recorded
//
// A consult happens inside the worker's session activity, in a process the
// engine does not know (OpenCode starts the MCP server). Its record reaches
// the run without a new path through the workflow:
//
//   - Before the worker's session starts, the session activity registers
//     the lane (Register): which run, feature and attempt its worker works
//     for, and where that attempt's consult ledger is.
//   - `horizon mcp` looks the registration up by its working directory (the
//     lane), and appends each consult, cost included, to the ledger
//     (Append: one JSON line, flock, fsync, once per tool call ID).
//   - When the session ends, the session activity reads the ledger (Read)
//     and returns the consults with its output; their cost is added to the
//     session's usage, so the run's spend, its ceilings and the day's
//     ledger count it like the worker's own tokens, and the workflow puts
//     the list on the attempt.
//
// This is crash-safe without a signal: the ledger is on disk before the
// tool answers, a retried session activity (after a crash) reads the same
// ledger again, and the workflow takes the activity's result once. A
// consult still in flight when the daemon dies is lost with its OpenCode
// process, and the worker's resumed turn may ask again.
package consult
