// Package advisor decides what becomes of an advisor's notes before any
// reaches a worker: the fact check against the lane's files, the guard
// (normalisation, content-free and duplicate notes, the per-review quota)
// and the circuit breaker that lets a blocker wake a session at most once
// in a row. It does no I/O: the lane's files come in through a Files
// function, so every rule is table- and property-tested. The activity
// (activities/advisor.go) runs the reviews and delivers what this package
// lets through.
package advisor
