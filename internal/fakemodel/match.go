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

// conversation is what rule matching needs to know about a request.
type conversation struct {
	haystack string // system messages + all user messages, newline-joined
	step     int    // assistant messages after the last user message
	lastUser string
	workdir  string
	title    bool
	size     int      // bytes of message text, for estimated usage
	tools    []string // the "tool" messages (tool results) after the last user message
}

func readConversation(msgs []chatMessage) conversation {
	var c conversation
	var hay, system []string
	lastUser := -1
	for i, m := range msgs {
		t := m.text()
		c.size += len(t)
		switch m.Role {
		case "system", "developer":
			system = append(system, t)
			hay = append(hay, t)
		case "user":
			hay = append(hay, t)
			if advisorNote(t) {
				continue
			}
			lastUser = i
			c.lastUser = t
		}
	}
	for _, m := range msgs[lastUser+1:] {
		switch m.Role {
		case "assistant":
			c.step++
		case "tool":
			c.tools = append(c.tools, m.text())
		}
	}
	c.haystack = strings.Join(hay, "\n")
	sys := strings.Join(system, "\n")
	c.title = strings.Contains(sys, TitleMarker)
	if m := workdirLine.FindStringSubmatch(sys); m != nil {
		c.workdir = m[1]
	}
	return c
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

func (r *Rule) wantsTitle() bool {
	for _, w := range r.When {
		if strings.Contains(w, "title generator") {
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
