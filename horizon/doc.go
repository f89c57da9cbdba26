// Package horizon is the pure domain of a run: its state machine (status,
// phase, attempts), the evidence each attempt leaves (gate verdicts, audit
// findings, the worker's report), the briefs handed to agents and the
// Markdown views shown in the Temporal UI.
//
// It also holds the one model of the agent report protocol shared by every
// layer (protocol.go: the blocks, statuses, verdicts, severities, feature
// kinds; role.go: the roles), each enumeration with one parser.
//
// Nothing here does I/O, so workflows can use it deterministically and tests
// can exercise it exhaustively. Success is never read from what a model
// says: an attempt is accepted only when the gate passed and the independent
// auditor accepted.
package horizon
