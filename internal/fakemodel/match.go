package fakemodel

import (
	"regexp"
	"strings"
)

// TitleMarker starts the system prompt of OpenCode's title requests. Such a
// request quotes the user's prompt, so it would match the conversation's
// rules; instead it only matches rules with a When string containing
// "title generator", and otherwise gets the fallback.
const TitleMarker = "You are a title generator"

// workdirLine finds the working directory OpenCode states in its system
// prompt's <env> block ("  Working directory: /abs/path").
var workdirLine = regexp.MustCompile(`(?m)^[ \t]*Working directory:[ \t]*(\S.*?)[ \t]*$`)

// primaryWorkdirLine finds the one Claude Code states in the environment
// reminder of its first user message (" - Primary working directory: /abs").
var primaryWorkdirLine = regexp.MustCompile(`(?m)^[ \t-]*Primary working directory:[ \t]*(\S.*?)[ \t]*$`)

// cwdTag finds the one Codex states in its <environment_context> user
// message ("<cwd>/abs</cwd>").
var cwdTag = regexp.MustCompile(`<cwd>[ \t]*([^<\n]*?)[ \t]*</cwd>`)

// conversation is what rule matching needs to know about a request.
type conversation struct {
	haystack string // system messages + all user messages, newline-joined
	step     int    // assistant turns after the last user message
	lastUser string
	workdir  string
	title    bool
	// aux names an auxiliary request of an agent's own (a Claude Code
	// side request): like a title request it only matches rules that ask
	// for it, see auxRequest.
	aux   string
	size  int      // bytes of message text, for estimated usage
	tools []string // the tool results after the last user message
}

// turnKind is what one message of a conversation is, in any of the wire
// formats.
type turnKind int

const (
	turnSystem turnKind = iota
	// turnUser is a user message; it restarts the step count unless it is
	// an advisor's note.
	turnUser
	// turnContext is user-side text that is not a prompt: text beside
	// tool results, an agent's own reminders and environment notes. Rules
	// see it; it does not restart the step count.
	turnContext
	// turnAssistant is one model turn (one assistant message, or a run of
	// output items of one response).
	turnAssistant
	// turnToolResult is the output of one tool call.
	turnToolResult
	// turnOther is anything else (reasoning, an unknown role): it counts
	// only towards the estimated usage.
	turnOther
)

// turn is one message, reduced to what matching needs. prompt, for a
// turnUser, is its text without the agent's reminders (Request.LastUser);
// "" means all of text.
type turn struct {
	kind   turnKind
	text   string
	prompt string
}

// readConversation reads an OpenAI chat-completions conversation.
func readConversation(msgs []chatMessage) conversation {
	turns := make([]turn, 0, len(msgs))
	for _, m := range msgs {
		t := turn{text: m.text()}
		switch m.Role {
		case "system", "developer":
			t.kind = turnSystem
		case "user":
			t.kind = turnUser
		case "assistant":
			t.kind = turnAssistant
		case "tool":
			t.kind = turnToolResult
		default:
			t.kind = turnOther
		}
		turns = append(turns, t)
	}
	return summarize(turns)
}

// summarize computes what matching needs from a conversation in any wire
// format: the haystack (system and user text), the step (assistant turns
// after the last user message that is a prompt), the tool results since
// that message, and the working directory the agent states.
func summarize(turns []turn) conversation {
	var c conversation
	var hay, system []string
	lastUser := -1
	for i, t := range turns {
		c.size += len(t.text)
		switch t.kind {
		case turnSystem:
			system = append(system, t.text)
			hay = append(hay, t.text)
		case turnContext:
			hay = append(hay, t.text)
		case turnUser:
			hay = append(hay, t.text)
			if advisorNote(t.text) {
				continue
			}
			lastUser = i
			c.lastUser = t.text
			if t.prompt != "" {
				c.lastUser = t.prompt
			}
		}
	}
	for _, t := range turns[lastUser+1:] {
		switch t.kind {
		case turnAssistant:
			c.step++
		case turnToolResult:
			c.tools = append(c.tools, t.text)
		}
	}
	c.haystack = strings.Join(hay, "\n")
	sys := strings.Join(system, "\n")
	c.title = strings.Contains(sys, TitleMarker)
	c.workdir = statedWorkdir(sys, c.haystack)
	return c
}

// statedWorkdir is the working directory an agent states: OpenCode in its
// system prompt, Claude Code and Codex in a user message (the last one
// stated wins, for a conversation resumed elsewhere).
func statedWorkdir(system, haystack string) string {
	if m := workdirLine.FindStringSubmatch(system); m != nil {
		return m[1]
	}
	for _, re := range []*regexp.Regexp{primaryWorkdirLine, cwdTag} {
		if all := re.FindAllStringSubmatch(haystack, -1); len(all) > 0 {
			return all[len(all)-1][1]
		}
	}
	return ""
}

// AdvisorPrefix starts every message horizon's advisor puts into a
// session ("[horizon advisor · concern r2.1]").
const AdvisorPrefix = "[horizon advisor"

// advisorNote reports an advisor's non-waking note. The worker never
// answers one, so it does not restart the step count of the turn it
// lands in, as a real model's turn goes on past it; a waking blocker is a
// prompt like any other.
// OpenCode may wrap a message that arrives mid-turn (a system reminder),
// so the tag is looked for anywhere, and its own line read.
func advisorNote(text string) bool {
	i := strings.Index(text, AdvisorPrefix)
	if i < 0 {
		return false
	}
	tag, _, _ := strings.Cut(text[i:], "\n")
	return !strings.Contains(tag, "· blocker")
}

func (r *Rule) matches(c conversation) bool {
	if c.title && !r.wantsTitle() {
		return false
	}
	if c.aux != "" && !r.wants(c.aux) {
		return false
	}
	for _, w := range r.When {
		if !strings.Contains(c.haystack, w) {
			return false
		}
	}
	for _, u := range r.Unless {
		if strings.Contains(c.haystack, u) {
			return false
		}
	}
	return true
}

func (r *Rule) wantsTitle() bool { return r.wants("title generator") }

// wants reports whether one of the rule's When strings contains marker,
// which is how a rule asks for an agent's auxiliary requests.
func (r *Rule) wants(marker string) bool {
	for _, w := range r.When {
		if strings.Contains(w, marker) {
			return true
		}
	}
	return false
}

// reply returns the reply for a step; past the end the last reply repeats.
func (r *Rule) reply(step int) Reply {
	if step >= len(r.Replies) {
		step = len(r.Replies) - 1
	}
	return r.Replies[step]
}

// expand replaces {{workdir}} in every string inside v, returning a copy.
func expand(v any, workdir string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "{{workdir}}", workdir)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = expand(e, workdir)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = strings.ReplaceAll(e, "{{workdir}}", workdir)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, e := range x {
			out[k] = strings.ReplaceAll(e, "{{workdir}}", workdir)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expand(e, workdir)
		}
		return out
	default:
		return v
	}
}
