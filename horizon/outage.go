package horizon

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Outage is an infrastructure failure a run is waiting out.
type Outage struct {
	On        string    `json:"on"`                // what fails, e.g. "model provider unreachable"
	Activity  string    `json:"activity"`          // the activity that waits, e.g. "worker · f1 · attempt 2"
	Feature   string    `json:"feature,omitempty"` // a planned run's feature
	Since     time.Time `json:"since"`
	Tries     int       `json:"tries"`         // failed tries so far
	Next      time.Time `json:"next,omitzero"` // the next try, when known
	LastError string    `json:"last_error"`
}

// Line is the outage in one line, e.g. "model provider unreachable since
// 03:12 (14 tries, next 03:40): connection refused", in the times'
// location.
func (o *Outage) Line() string {
	var b strings.Builder
	b.WriteString(o.On)
	if o.Feature != "" {
		fmt.Fprintf(&b, " (%s)", o.Feature)
	}
	if !o.Since.IsZero() {
		b.WriteString(" since " + o.Since.Format("15:04:05"))
	}
	tries := "1 try"
	if o.Tries != 1 {
		tries = fmt.Sprintf("%d tries", o.Tries)
	}
	if !o.Next.IsZero() {
		tries += ", next " + o.Next.Format("15:04:05")
	}
	fmt.Fprintf(&b, " (%s)", tries)
	if e := strings.TrimSpace(o.LastError); e != "" {
		if len(e) > 200 {
			e = e[:200] + "…"
		}
		b.WriteString(": " + strings.Join(strings.Fields(e), " "))
	}
	return b.String()
}

// markdown is the outage as a line of a run's Markdown (the Temporal Web
// UI), "" for none: what `horizon status` shows as its waiting line.
func (o *Outage) markdown() string {
	if o == nil {
		return ""
	}
	return "\n**waiting** " + viewCell(o.Line()) + "\n"
}

var (
	providerDown = regexp.MustCompile(`(?i)cannot connect|connection refused|connection failed|error sending request|high demand|econnrefused|econnreset|unable to connect|fetch failed|socket hang up|service unavailable|bad gateway|gateway time-?out|overloaded|rate limit|too many requests|http (429|5\d\d)|\b5\d\d\b`)
	diskFull     = regexp.MustCompile(`(?i)no space left on device|disk full|enospc|quota exceeded`)
	gitLocked    = regexp.MustCompile(`(?i)index\.lock|unable to create .*\.lock|another git process`)
	agentGone    = regexp.MustCompile(`(?i)opencode server exited|opencode .*exited|start opencode|opencode did not answer`)
	timedOut     = regexp.MustCompile(`(?i)timeout|timed out|deadline exceeded`)
)

// TimedOut reports an error message that says something timed out.
func TimedOut(msg string) bool { return timedOut.MatchString(msg) }

// OutageKind names what the failures of an activity (its Temporal type
// name, e.g. AgentSession, RunGate) say is down, from its last error:
// the words of Outage.On. The engine's reading (`horizon status`) and the
// activities' own reports (the run's Markdown) name outages alike.
func OutageKind(activity, msg string) string {
	session := activity == "AgentSession" || activity == "Diagnose" || activity == "Research"
	switch {
	case diskFull.MatchString(msg):
		return "disk full"
	case gitLocked.MatchString(msg):
		return "git index locked"
	case agentGone.MatchString(msg):
		return "OpenCode exited"
	case session && providerDown.MatchString(msg):
		return "model provider unreachable"
	case session && timedOut.MatchString(msg):
		return "agent session timed out"
	case activity == "RunGate":
		return "gate failing to run"
	case session:
		return "agent session failing"
	}
	return activity + " failing"
}
