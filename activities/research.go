package activities

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/horizon/textio"
	"github.com/horizon/horizon/internal/agent"
)

// AgentResearcher is the research strategy's read-only OpenCode agent:
// read, grep, glob, list and webfetch.
const AgentResearcher = agent.AgentResearcher

// ResearchInput asks the researcher, before an attempt under the research
// recovery strategy, for the facts the feature's failures hinge on.
type ResearchInput struct {
	RunID string
	// Feature names the feature ("" is a one-feature run's f1): the notes'
	// file, the spend key and the transcript are per feature.
	Feature string
	Attempt int    // the attempt the research comes before
	Task    string // the feature's task, as the worker's brief gives it
	// Lane is the feature's lane, read as it stands (the last attempt's
	// change included); BaseCommit is where that change starts.
	Lane       string
	BaseCommit string
	Prev       *horizon.Attempt // the last attempt, for its evidence
	Model      string           // the research role's model of the tier, else the tier's
}

// ResearchOutput is what the researcher found.
type ResearchOutput struct {
	// Text is the notes, at most horizon.MaxResearchText bytes; when cut
	// it names Path, which holds them whole.
	Text string
	// Path is the notes' file, relative to $HORIZON_HOME
	// (runs/<run>/research/<feature>.md).
	Path string
	// Sources are the web pages the researcher asked for, fetched or
	// failed with their error, in the order first asked.
	Sources   []horizon.Source
	SessionID string
	Usage     horizon.Usage
}

// Research runs one session of the researcher (agent horizon-researcher)
// in the lane on in.Model, reads the web pages it fetched from the
// session's tool calls, and writes its notes with every source to
// runs/<run>/research/<feature>.md. A page that could not be fetched (no
// network, an error status) is a source that failed, recorded with its
// error in the file and the output, never an error of the activity.
//
// Like AgentSession, the session ID is heartbeated as soon as it exists
// and a retry continues that session; the file is rewritten whole from
// the session, so a retry writes the same file.
func (a *Activities) Research(ctx context.Context, in ResearchInput) (ResearchOutput, error) {
	t := a.tellOutages(ctx, in.RunID, in.Feature)
	out, waited, err := a.research(ctx, in, t)
	t.finish(ctx, err, waited)
	return out, err
}

// research is one attempt of Research; waited is the outage a retryable
// failure leaves the next attempt in.
func (a *Activities) research(ctx context.Context, in ResearchInput, t *outageTeller) (_ ResearchOutput, waited *horizon.Outage, _ error) {
	feature := cmp.Or(in.Feature, "f1")
	var hb SessionHeartbeat
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &hb)
	}
	if err := a.mustSee("lane", in.Lane); err != nil {
		return ResearchOutput{}, nil, err
	}
	prompt := horizon.ResearchBrief(in.Task, in.Attempt, in.Prev)
	req := agent.SessionRequest{
		Directory: in.Lane, Agent: AgentResearcher, Model: in.Model, Prompt: prompt,
		Title:           SessionTitle(in.RunID, feature, in.Attempt, horizon.RoleResearch),
		ResumeSessionID: hb.SessionID,
	}
	activity.GetLogger(ctx).Info("research starting", "RunID", in.RunID, "Feature", feature, "Attempt", in.Attempt, "Model", in.Model, "ResumeSession", hb.SessionID)
	res, waited, err := a.runSession(ctx, req, hb, t)
	if err != nil {
		return ResearchOutput{}, waited, err
	}
	notes := strings.TrimSpace(res.Text)
	sources, files, unread := a.researchSources(ctx, in.Lane, res.SessionID)
	out := ResearchOutput{
		Path: horizon.ResearchPath(in.RunID, feature), Sources: sources, SessionID: res.SessionID,
		Usage: horizon.Usage{
			Input: res.Usage.Input, Output: res.Usage.Output, Reasoning: res.Usage.Reasoning,
			CacheRead: res.Usage.CacheRead, CacheWrite: res.Usage.CacheWrite, Cost: res.Usage.Cost,
		},
	}
	md := horizon.ResearchMarkdown(in.RunID, feature, in.Attempt, res.SessionID, in.Model, notes, sources, files)
	if unread != "" {
		md += "\n(The session's tool calls could not be read, so its sources are not listed: " + horizon.Safe(unread) + ")\n"
	}
	if err := writeArtifact(filepath.Join(a.Home, filepath.FromSlash(out.Path)), []byte(md)); err != nil {
		return out, nil, err
	}
	tin := SessionInput{RunID: in.RunID, Feature: feature, Attempt: in.Attempt, Role: horizon.RoleResearch, Model: in.Model}
	if err := writeArtifact(filepath.Join(a.runDir(in.RunID), "transcripts", fmt.Sprintf("%s-attempt-%d-%s.md", feature, in.Attempt, horizon.RoleResearch)), []byte(transcript(tin, prompt, res))); err != nil {
		return out, nil, err
	}
	if err := a.recordSpend(in.RunID, fmt.Sprintf("%s/%s/%d/%s", in.RunID, feature, in.Attempt, horizon.RoleResearch), out.Usage.Cost); err != nil {
		return out, nil, err
	}
	out.Text = researchText(notes, out.Path)
	activity.GetLogger(ctx).Info("research written", "RunID", in.RunID, "Feature", feature, "Attempt", in.Attempt, "Path", out.Path, "Sources", len(sources))
	return out, nil, nil
}

// researchText is the notes as the worker's brief quotes them: whole when
// they fit horizon.MaxResearchText, else their start and where the rest is.
func researchText(notes, path string) string {
	if len(notes) <= horizon.MaxResearchText {
		return notes
	}
	more := fmt.Sprintf("\n[notes cut; the whole notes are in %s]", path)
	return textio.Head(notes, horizon.MaxResearchText-len(more)-len(textio.Ellipsis)) + more
}

// researchSources reads the session's finished tool calls: the web pages
// it fetched (or failed to) and the files it read. Sessions without parts
// (an applier's) list none; unread says why.
func (a *Activities) researchSources(ctx context.Context, lane, sid string) (sources []horizon.Source, files []string, unread string) {
	parts, ok := a.Sessions.(SessionParts)
	if !ok || sid == "" {
		return nil, nil, "the session runtime does not list tool calls"
	}
	ps, err := parts.Parts(ctx, lane, sid)
	if err != nil {
		activity.GetLogger(ctx).Warn("research sources not read", "Session", sid, "Error", err)
		return nil, nil, err.Error()
	}
	sources, files = sourcesOf(ps, lane)
	return sources, files, ""
}

// sourcesOf reads webfetch and read calls off a session's parts. A URL
// asked for twice is one source, fetched when any call fetched it; a call
// that did not complete failed, with its error (OpenCode's part holds the
// error as its output).
func sourcesOf(parts []agent.Part, lane string) (sources []horizon.Source, files []string) {
	at := map[string]int{}
	read := map[string]bool{}
	for _, p := range parts {
		if p.Type != "tool" {
			continue
		}
		switch p.Tool {
		case "webfetch":
			var in struct {
				URL string `json:"url"`
			}
			if json.Unmarshal(p.Input, &in) != nil || strings.TrimSpace(in.URL) == "" {
				continue
			}
			s := horizon.Source{URL: strings.TrimSpace(in.URL), OK: p.Status == "completed"}
			if !s.OK {
				s.Error = cmp.Or(strings.TrimSpace(p.Output), "the fetch ended "+cmp.Or(p.Status, "without an answer"))
				s.Error = textio.Head(s.Error, 500)
			}
			i, seen := at[s.URL]
			switch {
			case !seen:
				at[s.URL] = len(sources)
				sources = append(sources, s)
			case s.OK:
				sources[i] = s
			}
		case "read":
			var in struct {
				FilePath string `json:"filePath"`
			}
			if json.Unmarshal(p.Input, &in) != nil || in.FilePath == "" {
				continue
			}
			f := in.FilePath
			if rel, err := filepath.Rel(lane, f); err == nil && !strings.HasPrefix(rel, "..") {
				f = filepath.ToSlash(rel)
			}
			if !read[f] {
				read[f] = true
				files = append(files, f)
			}
		}
	}
	return sources, files
}
