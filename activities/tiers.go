package activities

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/applier"
	"github.com/horizon/horizon/internal/codemod"
	"github.com/horizon/horizon/internal/reader"
	"github.com/horizon/horizon/internal/tools"
	"github.com/horizon/horizon/ladder"
)

// Appliers named in the ledger.
const (
	ApplierCodemod  = "ast-grep"
	ApplierOpenCode = "opencode"
	ApplierReader   = "reader+opencode"
)

// applierOf names the applier a model route runs on, for the ledger.
func applierOf(route string) string {
	k, _ := applier.Of(route)
	return string(k)
}

// openCodeRoutes are the routes of connected that run on OpenCode: what
// loops and tasks, which need OpenCode's sessions and agents, choose from.
func openCodeRoutes(connected []string) []string {
	var out []string
	for _, r := range connected {
		if k, _ := applier.Of(r); k == applier.OpenCode {
			out = append(out, r)
		}
	}
	return out
}

// availability records which rungs of the ladder this run can use, once,
// at preflight (the workflow keeps it, so replays see the same ladder).
//
//	T0 ast-grep codemods: the ast-grep binary is found (built-in rules always exist)
//	T1 a local model: the best-ranked "build" model whose cost class is local
//	T2 a reader (configured on the daemon) whose diagnosis the T1 model applies
//	T3 the best-ranked metered "build" model; T4 the best metered "lead" model
//
// A model tier's retrieval steps run on the explore role's best model of
// the tier's cost class (Rung.Explore), and its research attempts may run
// on the research role's (Rung.Research) and its small Decision Briefs on
// the quick role's (Rung.Quick); without one, on the tier's model.
//
// A forced model (--model) is the only model: T1 when it is local, else T3.
func (a *Activities) availability(lb *ladder.Leaderboard, forced string, connected []string) ladder.Availability {
	av := ladder.Availability{}
	if _, err := tools.Find(tools.AstGrep, a.AstGrepBin, "agent.ast_grep_bin"); err == nil {
		av[ladder.T0] = ladder.Rung{Available: true, Applier: ApplierCodemod}
	} else {
		av[ladder.T0] = ladder.Rung{Reason: "ast-grep not found"}
	}
	if forced != "" {
		if Paid(lb, forced) {
			av[ladder.T1] = ladder.Rung{Reason: "--model " + forced + " is metered"}
			av[ladder.T3] = ladder.Rung{Available: true, Applier: applierOf(forced), Model: forced}
		} else {
			av[ladder.T1] = ladder.Rung{Available: true, Applier: applierOf(forced), Model: forced}
			av[ladder.T3] = ladder.Rung{Reason: "--model " + forced + " is local"}
		}
		av[ladder.T2] = ladder.Rung{Reason: "--model forces one model"}
		av[ladder.T4] = ladder.Rung{Reason: "--model forces one model"}
		return av
	}
	if c, err := lb.ResolveLocal(string(horizon.RoleBuild), connected); err == nil {
		av[ladder.T1] = ladder.Rung{Available: true, Applier: applierOf(c.Route), Model: c.Route,
			Explore: localRoute(lb, horizon.RoleExplore, connected), Research: localRoute(lb, horizon.RoleResearch, connected), Quick: localRoute(lb, horizon.RoleQuick, connected)}
	} else {
		av[ladder.T1] = ladder.Rung{Reason: "no local build model connected"}
	}
	switch {
	case a.Reader.BaseURL == "" || a.Reader.Model == "":
		av[ladder.T2] = ladder.Rung{Reason: "no reader configured (reader.base_url, reader.model)"}
	case !av[ladder.T1].Available:
		av[ladder.T2] = ladder.Rung{Reason: "the reader's diagnosis needs a local applier (T1)"}
	default:
		av[ladder.T2] = ladder.Rung{Available: true, Applier: ApplierReader, Model: av[ladder.T1].Model}
	}
	var metered []string
	for _, r := range connected {
		if Paid(lb, r) {
			metered = append(metered, r)
		}
	}
	t3, err3 := lb.Resolve(string(horizon.RoleBuild), metered)
	explore, research, quick := meteredRoute(lb, horizon.RoleExplore, metered), meteredRoute(lb, horizon.RoleResearch, metered), meteredRoute(lb, horizon.RoleQuick, metered)
	if err3 == nil {
		av[ladder.T3] = ladder.Rung{Available: true, Applier: applierOf(t3.Route), Model: t3.Route, Explore: explore, Research: research, Quick: quick}
	} else {
		av[ladder.T3] = ladder.Rung{Reason: "no metered build model connected"}
	}
	if t4, err := lb.Resolve(string(horizon.RoleLead), metered); err == nil && (err3 != nil || t4.Route != t3.Route) {
		av[ladder.T4] = ladder.Rung{Available: true, Applier: applierOf(t4.Route), Model: t4.Route, Explore: explore, Research: research, Quick: quick}
	} else {
		av[ladder.T4] = ladder.Rung{Reason: "no metered lead model other than T3's"}
	}
	return av
}

// localRoute is role's best-ranked local model among connected ("" when
// none): a local tier's steps stay local, whatever their role.
func localRoute(lb *ladder.Leaderboard, role horizon.Role, connected []string) string {
	if c, err := lb.ResolveLocal(string(role), connected); err == nil {
		return c.Route
	}
	return ""
}

// meteredRoute is role's best-ranked model among the metered ones ("" when
// none), for the metered tiers.
func meteredRoute(lb *ladder.Leaderboard, role horizon.Role, metered []string) string {
	if c, err := lb.Resolve(string(role), metered); err == nil {
		return c.Route
	}
	return ""
}

// CodemodInput applies the T0 codemods to a lane.
type CodemodInput struct {
	RunID   string
	Attempt int
	Lane    string
}

// CodemodOutput says what the codemods changed.
type CodemodOutput struct {
	Files    []string
	Applied  int
	Problems []string // rule files that were skipped, and why
}

// Codemod runs the built-in rules and the lane's .horizon/codemods/*.yml
// with the real ast-grep, in place. A broken rule is reported and skipped;
// the others still run.
func (a *Activities) Codemod(ctx context.Context, in CodemodInput) (CodemodOutput, error) {
	defer keepAlive(ctx)()
	bin, err := tools.Find(tools.AstGrep, a.AstGrepBin, "agent.ast_grep_bin")
	if err != nil {
		return CodemodOutput{}, badInput("%v", err)
	}
	rules, problems := codemod.Load(in.Lane)
	var out CodemodOutput
	for _, p := range problems {
		out.Problems = append(out.Problems, p.Error())
	}
	res, err := codemod.Apply(ctx, bin, in.Lane, rules, 5*time.Minute)
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	// Stopped (timeout) is an error; a rule that was skipped is a problem
	// to report while the other rules' changes stand.
	var re *codemod.RuleError
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || (err != nil && !errors.As(err, &re)) {
		return out, fmt.Errorf("codemods in %s: %w", in.Lane, err)
	}
	if err != nil {
		out.Problems = append(out.Problems, err.Error())
	}
	out.Files, out.Applied = res.Files, len(res.Applied)
	activity.GetLogger(ctx).Info("codemods applied", "RunID", in.RunID, "Attempt", in.Attempt, "Tier", ladder.T0.String(), "Changes", out.Applied, "Files", len(out.Files), "Problems", len(out.Problems))
	return out, writeArtifact(filepath.Join(a.runDir(in.RunID), "codemods", fmt.Sprintf("attempt-%d.log", in.Attempt)), []byte(res.Output+"\n"+strings.Join(out.Problems, "\n")))
}

// DiagnoseInput asks the T2 reader about a failed attempt.
type DiagnoseInput struct {
	RunID string
	// Feature names the attempt's feature: the reader's spend key and
	// transcript are per feature ("" is a one-feature run's f1).
	Feature    string
	Attempt    int
	Goal       string
	Lane       string
	BaseCommit string
	Prev       *horizon.Attempt
}

// DiagnoseOutput is the reader's diagnosis.
type DiagnoseOutput struct {
	Text  string // at most horizon.MaxSummary characters (boundDiagnosis)
	Model string
	Usage horizon.Usage
}

// Diagnose asks the configured reader model for a diagnosis of the last
// attempt's evidence. It reads the lane's diff and touches nothing.
func (a *Activities) Diagnose(ctx context.Context, in DiagnoseInput) (DiagnoseOutput, error) {
	ev := reader.Evidence{Goal: in.Goal}
	if p := in.Prev; p != nil {
		if g := p.Gate; g != nil {
			ev.GateCommand, ev.Verdict, ev.ExitCode, ev.Failing, ev.OutputTail = g.Command, g.Verdict, g.ExitCode, g.Failing, g.Tail
			// A failed lint step's output is not in the tests' tail: the
			// reader gets it under its own heading.
			for _, part := range g.Parts {
				if !part.Name.Tests() && !part.Passed() {
					ev.OutputTail += fmt.Sprintf("\n\n$ %s  # the %s step: %s, exit %d\n%s", part.Command, part.Name, part.Verdict, part.ExitCode, part.Tail)
				}
			}
		}
		if au := p.Audit; au != nil {
			for _, f := range au.Findings {
				ev.AuditFindings = append(ev.AuditFindings, fmt.Sprintf("[%s] %s:%d %s", f.Severity, f.File, f.Line, f.Note))
			}
		}
	}
	diff, err := laneDiff(ctx, in.Lane, in.BaseCommit)
	if err != nil {
		return DiagnoseOutput{}, err
	}
	ev.Diff = diff
	d, err := reader.Diagnose(ctx, a.Reader, ev)
	if err != nil {
		return DiagnoseOutput{}, fmt.Errorf("reader %s: %w", a.Reader.Model, err)
	}
	out := DiagnoseOutput{Text: d.Text, Model: d.Model, Usage: horizon.Usage{Input: int64(d.PromptTokens), Output: int64(d.CompletionTokens), Cost: d.Cost}}
	feature := in.Feature
	if feature == "" {
		feature = "f1" // a one-feature run, or an input recorded before Feature
	}
	if err := a.recordSpend(in.RunID, readerSpendKey(in.RunID, feature, in.Attempt), d.Cost); err != nil {
		return out, err
	}
	if err := writeArtifact(filepath.Join(a.runDir(in.RunID), "transcripts", fmt.Sprintf("%s-attempt-%d-reader.md", feature, in.Attempt)), []byte(d.Text)); err != nil {
		return out, err
	}
	// The diagnosis becomes the next attempt's guidance, kept in the run's
	// state: bounded, the whole kept on disk.
	return out, boundDiagnosis(a.runDir(in.RunID), in.RunID, feature, in.Attempt, &out)
}

// readerSpendKey is the day ledger's key of one reader call: one per run,
// feature and attempt, so a retried call counts once and two features'
// calls both count.
func readerSpendKey(run, feature string, attempt int) string {
	return fmt.Sprintf("%s/%s/%d/reader", run, feature, attempt)
}
