package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/internal/specialist"
)

type specialistGenerateOptions struct {
	app     *app
	purpose string
	name    string
	yes     bool
	force   bool
	json    bool
	model   string // bound to models.default; read through the config
	// in is where the confirmation is read; ask says whether a person
	// can answer there (a terminal).
	in  io.Reader
	ask bool
}

func newSpecialistGenerateCmd(a *app, runF func(context.Context, *specialistGenerateOptions) error) *cobra.Command {
	o := &specialistGenerateOptions{app: a}
	cmd := &cobra.Command{
		Use:   `generate "<what it is for>" [--name NAME] [--yes] [--force] [--model P/M] [--json]`,
		Short: "Have the lead draft a project specialist; shown, checked, written only once you say yes",
		Long: `The lead (a read-only agent on the lead role's model: it reads the repository,
it cannot write or run anything) drafts a specialist manifest for what you
describe, in one durable session. horizon checks the draft and shows it;
it is written to <repo>/.horizon/specialists/<name>.md only after you
confirm, or with --yes.

A draft is refused whole, and nothing is written, when the lead's reply
holds no horizon-specialist block, when it is not a valid manifest, when it
gives a tool no specialist may have (task, skill, Zero's TaskOutput,
TaskStop, GenerateSpecialist) or one a project specialist is not given (only
read-only, edit, execute, plan and their tools: no webfetch, websearch,
codesearch or lsp), when it extends another specialist, or when its name is
taken (unless --force). Nothing is ever removed from a draft to make it pass.

Without --yes and without a terminal to ask on, it refuses before the lead
is asked. Exit codes: 0 written (or, with --json, drafted and written),
1 you said no or the session failed, 2 bad input or a refused draft,
3 environment (OpenCode, the engine).`,
		Example: `  horizon specialist generate "review shell scripts for quoting and portability"
  horizon specialist generate --name sh-lint --yes "review shell scripts"
  horizon specialist generate --yes --json "explain the build to newcomers" | jq -r .path`,
		Args: func(_ *cobra.Command, args []string) error {
			if strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usagef("specialist generate: %v", core.ErrEmptyPurpose)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkModelFlag(cmd); err != nil {
				return err
			}
			o.purpose = strings.TrimSpace(strings.Join(args, " "))
			if o.name != "" {
				if err := specialist.ValidName(o.name); err != nil {
					return usagef("specialist generate --name: %v", err)
				}
			}
			if o.in == nil {
				o.in, o.ask = os.Stdin, terminal(os.Stdin)
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return specialistGenerate(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "the specialist's name (lowercase letters, digits, dashes); default: the lead's choice")
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "write the draft without asking (required without a terminal)")
	cmd.Flags().BoolVar(&o.force, "force", false, "replace a project manifest of that name, or override a user or built-in one (never through a symlink)")
	cmd.Flags().StringVarP(&o.model, "model", "m", "", "provider/model for the lead (default: models.default, else the lead role's best-ranked connected model)")
	cmd.Flags().BoolVar(&o.json, "json", false, `print {id, name, scope, path, replaces, manifest, tools, read_only, model, session, cost, transcript, written}`)
	return cmd
}

func specialistGenerate(ctx context.Context, o *specialistGenerateOptions) error {
	a := o.app
	if !o.yes && !o.ask {
		return usagef("specialist generate: nothing is written without your yes, and there is no terminal to ask on: pass --yes to write the draft")
	}
	info, err := repo.Inspect(a.repoDir)
	if err != nil {
		return err
	}
	req := core.GenerateRequest{Purpose: o.purpose, Name: o.name, Repo: info.Root, BaseCommit: info.Head,
		Dirs: a.specialistDirs(), Force: o.force}
	// Refused before the engine is involved and any session paid for.
	if err := core.CheckGenerate(req); err != nil {
		return err
	}
	return a.withEngine(ctx, true, func(h *core.App) error {
		fmt.Fprintf(a.errOut, "the lead drafts a specialist (it reads %s, read-only)…\n", info.Root)
		d, err := h.DraftSpecialist(ctx, req)
		if err != nil {
			return err
		}
		show := a.out
		if o.json {
			show = a.errOut // stdout is the JSON's
		}
		if !o.json || !o.yes {
			showDraft(show, d)
		}
		if !o.yes {
			ok, err := confirm(a.errOut, o.in, fmt.Sprintf("Write %s? [y/N] ", d.Path))
			if err != nil {
				return err
			}
			if !ok {
				if o.json {
					_ = json.NewEncoder(a.out).Encode(d)
				}
				return exitErr{code: ExitRunEnded, msg: "specialist generate: not written (you said no)"}
			}
		}
		if err := core.WriteSpecialistDraft(d, req.Dirs, o.force); err != nil {
			return err
		}
		if o.json {
			return json.NewEncoder(a.out).Encode(d)
		}
		fmt.Fprintf(a.out, "wrote project specialist %s: %s\n", d.Name, d.Path)
		return nil
	})
}

// showDraft prints the draft as it would be written, with where and what
// it is.
func showDraft(w io.Writer, d *core.SpecialistDraft) {
	fmt.Fprintf(w, "draft: project specialist %s → %s\n", d.Name, d.Path)
	if d.Replaces != "" {
		fmt.Fprintf(w, "  replaces or overrides %s\n", d.Replaces)
	}
	access := "may write files or run a shell"
	if d.ReadOnly {
		access = "read-only"
	}
	fmt.Fprintf(w, "  tools %s (%s)\n", dash(strings.Join(d.Tools, ", ")), access)
	fmt.Fprintf(w, "  drafted by %s ($%.4f, session %s)\n", d.Model, d.Cost, dash(d.Session))
	for _, warn := range d.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	fmt.Fprintf(w, "\n%s\n", strings.TrimRight(d.Manifest, "\n"))
}

// confirm asks question on w and reads a yes from in.
func confirm(w io.Writer, in io.Reader, question string) (bool, error) {
	fmt.Fprint(w, question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		if err == io.EOF {
			fmt.Fprintln(w)
			return false, nil
		}
		return false, fmt.Errorf("specialist generate: read the answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
