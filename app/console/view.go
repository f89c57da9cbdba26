package console

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/horizon/textio"
)

// The screen, top to bottom: a header, the runs, what needs you, the
// shown run's detail, and a footer with the keys (or the open prompt, or
// the last verb's answer). Each section is a small writer; Screen puts
// them together in the window's height, and every line is cut to its
// width, so 80×24 holds all of it.

var (
	titleStyle    = lipgloss.NewStyle().Bold(true)
	selectedStyle = lipgloss.NewStyle().Reverse(true)
	needStyle     = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
	badStyle      = lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)
	faintStyle    = lipgloss.NewStyle().Faint(true)
)

// keysHelp fits 80 columns; --help has the rest (pgup/pgdn, r, enter).
// noteHelp, skipNoteHelp and pickHelp are under the text being typed.
const (
	noteHelp     = "enter sends the note (the feature's next attempt reads it) · esc leaves it"
	skipNoteHelp = "enter takes the note (the handoff shows it), then y/n · esc leaves it"
	pickHelp     = "enter takes the feature's ID (as the plan tree shows it) · esc leaves it"
)

// keysHelp is the footer's keys; p says what it does to the shown run.
func (m Model) keysHelp() string {
	p := "pause"
	if s := m.state(m.shownID()); s != nil && s.Paused {
		p = "resume"
	}
	return "↑↓ select  tab needs  a approve  u unblock  s skip  p " + p + "  x cancel  q quit"
}

// View renders the screen in the alternate screen buffer.
func (m Model) View() tea.View {
	v := tea.NewView(m.render(true))
	v.AltScreen = true
	v.WindowTitle = "horizon console"
	return v
}

// Screen is the screen as plain text, without colours: what golden files
// and a person reading a capture see.
func (m Model) Screen() string { return ansi.Strip(m.render(false)) }

// heights splits the window's height between runs, needs and detail,
// after the footer's lines.
func (m Model) heights(needs, footer int) (runs, need, detail int) {
	avail := max(3, m.height-4-footer) // header, three titles
	runs = min(max(1, len(m.rows)), max(1, avail/3))
	need = min(max(1, needs), max(1, avail/6))
	return runs, need, max(0, avail-runs-need)
}

func (m Model) detailHeight() int {
	_, _, d := m.heights(len(m.needs()), len(m.footer(max(20, m.width))))
	return d
}

func (m Model) render(styled bool) string {
	st := func(s lipgloss.Style, line string) string {
		if !styled {
			return line
		}
		return s.Render(line)
	}
	w := max(20, m.width)
	// Every line is untrusted text (goals, titles, notes, IDs) until made
	// safe; styles are added after.
	cut := func(line string) string { return ansi.Truncate(horizon.Safe(line), w, "…") }
	needs := m.needs()
	footer := m.footer(w)
	runsH, needH, detailH := m.heights(len(needs), len(footer))

	var out []string
	out = append(out, st(titleStyle, cut(m.header(len(needs)))))
	out = append(out, st(titleStyle, cut(m.paneTitle("RUNS", paneRuns))))
	for _, l := range m.runLines(runsH) {
		out = append(out, m.style(st, cut(l.text), l))
	}
	out = append(out, st(titleStyle, cut(m.paneTitle(fmt.Sprintf("NEEDS YOU (%d)", len(needs)), paneNeeds))))
	for _, l := range m.needLines(needs, needH) {
		out = append(out, m.style(st, cut(l.text), l))
	}
	id := m.shownID()
	title, detail := "RUN "+orNone(id), m.detail(id)
	if n := m.selectedNeed(); n != nil && n.Supervisor {
		title, detail = "SUPERVISOR "+n.RunID, queuedLines(*n)
	}
	out = append(out, st(titleStyle, cut(title)))
	scroll := min(m.scroll, max(0, len(detail)-detailH))
	for i := 0; i < detailH; i++ {
		line := ""
		if j := scroll + i; j < len(detail) {
			line = detail[j]
		}
		if i == detailH-1 && scroll+detailH < len(detail) {
			line = fmt.Sprintf("… %d more lines (pgdn)", len(detail)-scroll-detailH)
		}
		out = append(out, cut(line))
	}
	for _, l := range footer {
		if l.bad {
			out = append(out, st(badStyle, cut(l.text)))
		} else {
			out = append(out, st(faintStyle, cut(l.text)))
		}
	}
	return strings.Join(out, "\n")
}

// line is one row of a list, with how it is shown.
type line struct {
	text     string
	selected bool
	need     bool
	bad      bool
}

func (m Model) style(st func(lipgloss.Style, string) string, text string, l line) string {
	switch {
	case l.selected:
		return st(selectedStyle, text)
	case l.need:
		return st(needStyle, text)
	}
	return text
}

func (m Model) header(needs int) string {
	h := fmt.Sprintf("horizon console · %s · %d need you", horizon.Plural(len(m.rows), "run"), needs)
	if going := goingOn(m.loops, m.tasks); going != "" {
		h += " · " + going
	}
	switch {
	case m.listErr != nil:
		h += " · engine: " + oneLine(m.listErr.Error())
	case !m.listedAt.IsZero():
		h += " · listed " + m.listedAt.Format("15:04:05")
	default:
		h += " · listing…"
	}
	return h
}

func (m Model) paneTitle(title string, p pane) string {
	if m.focus == p {
		return title + " ◂"
	}
	return title
}

// runLines: one row per run (status, phase, progress, cost, repository,
// goal), a window of height rows around the selected one.
func (m Model) runLines(height int) []line {
	if len(m.rows) == 0 {
		if m.listedAt.IsZero() {
			return []line{{text: "  …"}}
		}
		return []line{{text: "  no runs yet; start one with `horizon start \"<goal>\"`"}}
	}
	from := window(m.runSel, len(m.rows), height)
	var out []line
	for i := from; i < min(len(m.rows), from+height); i++ {
		r := m.rows[i]
		status, phase, progress, cost := runCells(r, m.state(r.ID))
		mark := "  "
		if i == m.runSel {
			mark = "> "
		}
		text := fmt.Sprintf("%s%-6s %-9s %-20s %-5s %-7s %s: %s", mark, shortID(r.ID), status, textio.Runes(phase, 20), progress, cost, repoName(r.Repo), oneLine(r.Goal))
		out = append(out, line{text: text, selected: i == m.runSel && m.focus == paneRuns})
	}
	return out
}

// needLines: one row per thing a run waits on you for.
func (m Model) needLines(needs []Need, height int) []line {
	if len(needs) == 0 {
		return []line{{text: "  nothing waits for you"}}
	}
	from := window(m.needSel, len(needs), height)
	var out []line
	for i := from; i < min(len(needs), from+height); i++ {
		n := needs[i]
		mark := "! "
		if i == m.needSel && m.focus == paneNeeds {
			mark = "> "
		}
		out = append(out, line{text: fmt.Sprintf("%s%-8s %-6s %s", mark, n.Kind, shortID(n.RunID), n.What),
			selected: i == m.needSel && m.focus == paneNeeds, need: true})
	}
	return out
}

// queuedLines is the detail of a supervisor's queued plan waiting for
// approval: what it is, and the key and the command that approve it.
func queuedLines(n Need) []string {
	return []string{
		n.What,
		"",
		"a approves it here; the supervisor runs it in its turn",
		"same as: " + n.Command,
	}
}

func (m Model) detail(id string) []string {
	r, ok := m.row(id)
	if !ok {
		return nil
	}
	var d *RunDetail
	if c := m.states[id]; c != nil {
		d = &c.detail
	}
	return detailLines(r, d, true)
}

// footer is the open prompt (with why its answer was not taken), else
// the last answer, else the keys: one line, two when the text is longer
// than the terminal is wide, so a refusal is read whole.
func (m Model) footer(width int) []line {
	var out []line
	switch {
	case m.prompt != nil && m.prompt.note:
		// A long note scrolls: its end, where the typing is, stays in sight.
		q, text := m.prompt.question, m.prompt.text+"▏"
		if over := ansi.StringWidth(q+text) - width; over > 0 {
			text = ansi.TruncateLeft(text, over+1, "…")
		}
		out = append(out, line{text: q + text})
		if m.flash == "" && m.prompt.help != "" {
			out = append(out, line{text: m.prompt.help})
		}
	case m.prompt != nil:
		out = append(out, wrap(m.prompt.question, width, false)...)
	}
	switch {
	case m.flash != "" && (m.prompt == nil || m.bad):
		out = append(out, wrap(m.flash, width, m.bad)...)
	case m.prompt == nil:
		out = append(out, line{text: m.keysHelp()})
	}
	return out[:min(len(out), 2)]
}

// wrap breaks text into at most two lines of width at spaces.
func wrap(text string, width int, bad bool) []line {
	if ansi.StringWidth(text) <= width {
		return []line{{text: text, bad: bad}}
	}
	cut := width
	r := []rune(text)
	for i := min(width, len(r)-1); i > width/2; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return []line{{text: string(r[:cut]), bad: bad}, {text: strings.TrimSpace(string(r[cut:])), bad: bad}}
}

// window is the first row to show of n so that sel is visible in height.
func window(sel, n, height int) int {
	if n <= height || sel < height {
		return 0
	}
	return min(sel-height+1, n-height)
}

// shortID is the part of a run's ID the lists have room for: the random
// tail of run-YYYYMMDD-HHMMSS-xxxxxx, which tells runs apart; the detail's
// title has the whole ID.
func shortID(id string) string {
	parts := strings.Split(id, "-")
	if len(parts) == 4 && parts[0] == "run" && parts[3] != "" {
		return parts[3]
	}
	return textio.Runes(id, 14)
}
