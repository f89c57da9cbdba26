package horizon

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/horizon/horizon/horizon/textio"
	"github.com/horizon/horizon/horizon/vocab"
)

// Typed blockers. A blocker is the only thing that pauses a feature: a
// failing gate, a rejection, a timeout or a missing report is evidence for
// the next attempt, never a reason to stop. So a blocker must name one of
// a few kinds of obstacle that another attempt cannot overcome, and carry
// concrete evidence a human can act on.
//
// BlockerType (vocab.BlockerType) is the one vocabulary: the parser accepts it, and every
// prompt that teaches a worker to report a blocker builds its list from it
// (BlockerTypeChoices, BlockerTypeHelp), so no prompt can teach a spelling
// the parser refuses. Its JSON form is the bare string.
type BlockerType = vocab.BlockerType

// The first three are what a worker may claim in its horizon-report. The
// others only horizon records, from trusted events: a worker claiming
// them is not believed (vocab says what each means).
const (
	BlockerMissingCredential  = vocab.BlockerMissingCredential
	BlockerUnavailableService = vocab.BlockerUnavailableService
	BlockerPlatformLimit      = vocab.BlockerPlatformLimit
	BlockerPermissionDenied   = vocab.BlockerPermissionDenied
	BlockerNeedsDecision      = vocab.BlockerNeedsDecision
	BlockerCancelled          = vocab.BlockerCancelled
	BlockerMergeConflict      = vocab.BlockerMergeConflict
	BlockerStalled            = vocab.BlockerStalled
)

var (
	workerBlockerTypes     = []BlockerType{BlockerMissingCredential, BlockerUnavailableService, BlockerPlatformLimit}
	supervisorBlockerTypes = []BlockerType{BlockerPermissionDenied, BlockerNeedsDecision, BlockerCancelled, BlockerMergeConflict, BlockerStalled}
	// blockerMeanings says what each worker type is for, in a prompt's words.
	blockerMeanings = map[BlockerType]string{
		BlockerMissingCredential:  "a key, token or login the work needs is absent",
		BlockerUnavailableService: "an external service the work needs does not answer",
		BlockerPlatformLimit:      "a platform, framework or structural limit no change in the lane can get around",
	}
)

// WorkerBlockerTypes returns the blocker types a worker's report may claim.
func WorkerBlockerTypes() []BlockerType { return slices.Clone(workerBlockerTypes) }

// SupervisorBlockerTypes returns the types recorded only from trusted
// events.
func SupervisorBlockerTypes() []BlockerType { return slices.Clone(supervisorBlockerTypes) }

// BlockerTypeChoices is the worker's types as a prompt shows them in a
// JSON example: "missing_credential|unavailable_service|platform_limit".
func BlockerTypeChoices() string { return joinTypes(workerBlockerTypes, "|") }

// BlockerTypeHelp is the worker's types with what each is for, one
// clause each, for a prompt's prose: "missing_credential (a key, ...), ...".
func BlockerTypeHelp() string {
	parts := make([]string, len(workerBlockerTypes))
	for i, t := range workerBlockerTypes {
		parts[i] = fmt.Sprintf("%s (%s)", t, blockerMeanings[t])
	}
	return strings.Join(parts, ", ")
}

func joinTypes(ts []BlockerType, sep string) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, sep)
}

// blockerAliases maps spellings models use (and older prompts taught) to
// the canonical type, after lower-casing and turning spaces and dashes
// into underscores.
var blockerAliases = map[string]BlockerType{
	"missing_credentials":          BlockerMissingCredential,
	"credential":                   BlockerMissingCredential,
	"credentials":                  BlockerMissingCredential,
	"missing_secret":               BlockerMissingCredential,
	"missing_api_key":              BlockerMissingCredential,
	"missing_token":                BlockerMissingCredential,
	"service_unavailable":          BlockerUnavailableService,
	"external_service":             BlockerUnavailableService,
	"external_service_unavailable": BlockerUnavailableService,
	"unavailable_external_service": BlockerUnavailableService,
	"platform":                     BlockerPlatformLimit,
	"framework":                    BlockerPlatformLimit,
	"structural":                   BlockerPlatformLimit,
	"framework_limit":              BlockerPlatformLimit,
	"structural_limit":             BlockerPlatformLimit,
	"platform_limitation":          BlockerPlatformLimit,
	"framework_limitation":         BlockerPlatformLimit,
	"permission":                   BlockerPermissionDenied,
	"question":                     BlockerNeedsDecision,
	"decision":                     BlockerNeedsDecision,
	"canceled":                     BlockerCancelled,
	"cancellation":                 BlockerCancelled,
	"conflict":                     BlockerMergeConflict,
	"merge_conflicts":              BlockerMergeConflict,
}

// MinBlockerEvidence is the shortest evidence (in characters, after
// trimming) a blocker may carry; MaxBlockerEvidence is where it is cut, to
// keep workflow history small.
const (
	MinBlockerEvidence = 12
	MaxBlockerEvidence = 2000
)

// vagueEvidence are phrases that say a blocker exists without saying what
// it is. Compared after lower-casing, collapsing spaces and dropping final
// punctuation.
var vagueEvidence = map[string]bool{
	"blocked": true, "i am blocked": true, "i'm blocked": true, "this is blocked": true, "the task is blocked": true,
	"cannot proceed": true, "can't proceed": true, "cannot continue": true, "can't continue": true,
	"unable to proceed": true, "unable to continue": true, "not possible": true, "impossible": true,
	"unknown": true, "unknown error": true, "an error occurred": true, "something went wrong": true,
	"n/a": true, "none": true, "nothing": true, "todo": true, "tbd": true,
	"see above": true, "see summary": true, "see logs": true, "see the logs": true, "see output": true,
	"error": true, "failed": true, "it failed": true, "tests fail": true, "tests failed": true, "tests failing": true,
	"the tests fail": true, "the tests failed": true, "does not work": true, "doesn't work": true, "not working": true,
	"it does not work": true, "it doesn't work": true, "environment issue": true, "environment problem": true,
	"missing credentials": true, "service unavailable": true, "service is unavailable": true,
}

// NormalizeBlockerType returns the canonical type for t (case, spaces,
// dashes and known aliases forgiven), or "" when it is not a blocker type.
func NormalizeBlockerType(t string) BlockerType {
	k := strings.ToLower(strings.TrimSpace(string(t)))
	k = strings.NewReplacer(" ", "_", "-", "_").Replace(k)
	if a, ok := blockerAliases[k]; ok {
		return a
	}
	if bt := BlockerType(k); slices.Contains(workerBlockerTypes, bt) || slices.Contains(supervisorBlockerTypes, bt) {
		return bt
	}
	return ""
}

// NewBlocker builds a blocker of any type, supervisor types included, with
// its type made canonical and its evidence trimmed (and cut at
// MaxBlockerEvidence). It rejects an unknown type (ErrUnknownBlockerType)
// and evidence that is missing or too vague to act on (ErrVagueEvidence):
// shorter than MinBlockerEvidence, with fewer than eight letters or
// digits, a stock phrase such as "blocked" or "cannot proceed", or just the
// type restated.
func NewBlocker(typ BlockerType, evidence string) (Blocker, error) {
	t := NormalizeBlockerType(string(typ))
	if t == "" {
		return Blocker{}, fmt.Errorf("%w %q (one of %s)", ErrUnknownBlockerType, typ,
			joinTypes(slices.Concat(workerBlockerTypes, supervisorBlockerTypes), "|"))
	}
	ev := strings.TrimSpace(evidence)
	if why := vague(t, ev); why != "" {
		return Blocker{}, fmt.Errorf("%w: %s", ErrVagueEvidence, why)
	}
	return Blocker{Type: t, Evidence: textio.Head(ev, MaxBlockerEvidence)}, nil
}

// vague returns why ev is not concrete evidence for a blocker of type t,
// or "".
func vague(t BlockerType, ev string) string {
	if ev == "" {
		return "no evidence given"
	}
	if n := utf8.RuneCountInString(ev); n < MinBlockerEvidence {
		return fmt.Sprintf("evidence %q is %d characters; say what is missing or failing and where (at least %d)", ev, n, MinBlockerEvidence)
	}
	alnum := 0
	for _, r := range ev {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			alnum++
		}
	}
	if alnum < 8 {
		return fmt.Sprintf("evidence %q has too little text to act on", ev)
	}
	k := strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(ev), " ")), ".!:;,")
	if vagueEvidence[k] || k == string(t) || k == strings.ReplaceAll(string(t), "_", " ") {
		return fmt.Sprintf("evidence %q does not say what is missing or failing", ev)
	}
	return ""
}

// CheckReportBlocker returns the blocker a worker's report claims if it is
// one the supervisor accepts: the status is "blocked", the type is one a
// worker may claim (WorkerBlockerTypes, aliases forgiven) and the evidence
// is concrete. Otherwise the error says why (ErrNotBlocked,
// ErrUnknownBlockerType, ErrUntrustedBlocker or ErrVagueEvidence) so the
// next attempt's brief can tell the worker; the feature stays runnable.
func CheckReportBlocker(r Report) (Blocker, error) {
	if st, err := ParseReportStatus(string(r.Status)); err != nil || st != ReportBlocked || r.Blocker == nil {
		return Blocker{}, ErrNotBlocked
	}
	b, err := NewBlocker(r.Blocker.Type, r.Blocker.Evidence)
	if err != nil {
		return Blocker{}, err
	}
	if slices.Contains(workerBlockerTypes, b.Type) {
		return b, nil
	}
	return Blocker{}, fmt.Errorf("%w: %q (a worker may claim %s)", ErrUntrustedBlocker, b.Type, BlockerTypeChoices())
}

// ClassifyReportBlocker is CheckReportBlocker without the reason: ok only
// for a valid typed blocker with evidence. In full autonomy that is the
// only report that pauses a feature; anything else is one more attempt.
func ClassifyReportBlocker(r Report) (Blocker, bool) {
	b, err := CheckReportBlocker(r)
	return b, err == nil
}
