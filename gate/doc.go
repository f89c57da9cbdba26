// Package gate is horizon's deterministic judge.
//
// In horizon a change is done when the repository's gate exits 0. The model
// that wrote the change is never asked whether it succeeded: its prose is not
// parsed for completion, and its own claims carry no weight. The gate is a
// program — .horizon/verify.sh (also .zecor/verify.sh and .fleet/verify.sh),
// or a command detected from the repository's ecosystem (go test ./...,
// pytest, npm test, cargo test) — and its exit status is the
// verdict.
//
// The package has four parts:
//
//   - DiscoverTree finds the gate of a tree: a commit's, read with git as
//     it is (GitTree: modes from ls-tree, contents from blobs), which is how
//     a run decides its gate once on its base commit; Discover does the
//     same for a directory on disk (`horizon gate`). The result names the
//     script's git mode and blob, so the caller can put exactly that
//     script back before every run (activities/gate_restore.go).
//   - ParsePassing and Vanished tell a test that passed from one that no
//     longer ran: a test failing at baseline must pass, not vanish.
//   - Run executes the gate as a capped subprocess: its own process group, a
//     hard wall-clock timeout, SIGTERM then SIGKILL of the whole group on
//     overrun (and of any member left behind after a normal exit), stdin from
//     /dev/null, combined output kept in a bounded head/tail buffer, and an
//     environment stripped of vendor credentials (ScrubEnv) so a lane cannot
//     reach the operator's paid accounts.
//   - ParseFailures turns the output of common test runners (go test, pytest,
//     jest/vitest, cargo test, TAP) into a failing-assertion set: the artifact
//     the escalation triggers compare across attempts ("same failing set as
//     last attempt", "a previously green test now failing").
//   - Receipt records one gate run (verdict, exit code, duration, failing set,
//     output tail and digest) and AppendReceipt stores it idempotently in a
//     JSONL file.
//   - Parts and RunParts make a gate of several parts: the discovered gate,
//     gate.test_command and gate.lint_command (run with sh -c), each run
//     through Run with the same options and judged on its own; Overall
//     folds them into one verdict, and a receipt gets a section per part
//     (NewPartsReceipt). The lint step's output never enters the failing
//     test set.
//
// Limits: a process that leaves the gate's process group (setsid, setpgid, a
// daemonising double fork into a new session) is out of reach of the group
// kill and may outlive the gate; Run stops waiting for its output after a
// short drain period. If the horizon process itself is SIGKILLed while a gate
// runs, nothing kills the gate's group; the activity that retries the run
// starts a fresh gate.
package gate
