// Package codemod is T0, the bottom rung of horizon's routing ladder:
// deterministic ast-grep rewrite rules for recurring fix shapes, applied to
// a lane before any model is asked to do anything.
//
// # Where T0 sits
//
// The ladder climbs T0 (codemods) → T1 (a local coder model) → T2 (a reader
// model) → T3/T4 (cloud appliers). ladder.Route sends a mechanical card to T0
// first, once; whatever T0 produces is then judged by the repository's gate
// exactly like any other attempt, and a red gate (or no change at all) moves
// the card up the ladder. T0 never decides that it succeeded.
//
// # Why codemods run before any model
//
//   - They are free: no tokens, no spend ceiling, no paid-call slot.
//   - They are deterministic: the same lane and rules give the same diff, so
//     the attempt ledger's "identical diff" trigger means something and a
//     replayed activity reaches the same result.
//   - They are exact: a rule rewrites the syntax it matched and nothing
//     else, so a mechanical fix (an API rename, an idiom the linter wants)
//     lands without a model paraphrasing, reformatting or "improving" code
//     around it — and without a model's context window.
//   - They are cheap to be wrong: if a rule's output is red, the lane is
//     reset and T1 starts from the card as before, having lost seconds.
//
// # Rules
//
// A repository keeps its codemods in .horizon/codemods/*.yml (or *.yaml),
// one ast-grep rule per YAML document, in ast-grep's own rule format: id,
// language, rule and fix are required (a rule without fix can only report,
// and T0 must rewrite); message, constraints, utils, transform, rewriters and
// the rest are passed through untouched. Load reads them together with a few
// built-in rules (Builtins); a project rule with a built-in's id replaces it,
// so a repository can tune a built-in or switch it off (severity: off). A file
// that does not parse, or a rule that lacks a required key or names a
// language ast-grep does not know, is reported as a problem naming the file
// and the reason, and skipped: the other rules still run.
//
// Validate asks the real ast-grep whether it accepts a rule, and also
// checks that every pattern in it parses for its language — ast-grep itself
// accepts a pattern that tree-sitter could only parse with an ERROR node and
// then silently matches nothing (the classic Go case is errors.New($X), which
// on its own parses as a type conversion; Validate says so and suggests a
// context and selector).
//
// # Applying
//
// Apply runs each rule in turn over a lane with
//
//	ast-grep scan -c <empty sgconfig.yml> --inline-rules <rule> --json=stream --color never .
//
// through gate.Run (own process group, wall-clock timeout, bounded output,
// vendor credentials scrubbed from the environment), then applies the
// reported replacements itself. Doing the edit in Go rather than with
// ast-grep's --update-all lets Apply report every change by rule, file and
// line, refuse any path that is not a regular file inside the lane (a
// symlink, a hard link with another name elsewhere, a path through a
// symlinked directory), check that each matched text is still where
// ast-grep saw it, and re-run a rule whose matches nested (an outer and an
// inner match cannot both be applied in one pass). The sgconfig.yml passed
// with -c lives in a temporary directory outside the lane, so the lane's own
// ast-grep configuration (languageGlobs, custom languages, rule dirs) cannot
// change what a rule means; the rule itself is passed inline, so nothing is
// written inside the lane except the rewritten files. ast-grep's usual file
// selection applies: .gitignore'd and hidden files are not touched.
package codemod
