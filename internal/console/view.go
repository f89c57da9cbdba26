package console

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
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
const keysHelp = "↑↓ select  tab runs/needs  a approve  u unblock  p pause/resume  x cancel  q quit"

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

// heights splits the window's height between runs, needs and detail.
func (m Model) heights(needs int) (runs, need, detail int) {
	avail := max(3, m.height-5) // header, three titles, footer
	runs = min(max(1, len(m.rows)), max(1, avail/3))
	need = min(max(1, needs), max(1, avail/6))
	return runs, need, max(0, avail-runs-need)
}

func (m Model) detailHeight() int {
	_, _, d := m.heights(len(m.needs()))
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
	cut := func(line string) string { return ansi.Truncate(line, w, "…") }
	needs := m.needs()
	runsH, needH, detailH := m.heights(len(needs))

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
	out = append(out, st(titleStyle, cut("RUN "+orNone(id))))
	detail := m.detail(id)
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
	footer, bad := m.footer()
	if bad {
		out = append(out, st(badStyle, cut(footer)))
	} else {
		out = append(out, st(faintStyle, cut(footer)))
	}
	return strings.Join(out, "\n")
}

// line is one row of a list, with how it is shown.
type line struct {
	text     string
	selected bool
	need     bool
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
	h := fmt.Sprintf("horizon console · %d runs · %d need you", len(m.rows), needs)
	switch {
	case m.listErr != nil:
		h += " · engine: " + oneLine(m.listErr.Error())
	case !m.listedAt.IsZero():
		h += " · listed " + m.listedAt.Local().Format("15:04:05")
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
		text := fmt.Sprintf("%s%-26s %-9s %-16s %7s %-7s %s: %s", mark, r.ID, status, clip(phase, 16), progress, cost, repoName(r.Repo), oneLine(r.Goal))
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
		out = append(out, line{text: fmt.Sprintf("%s%-8s %-26s %s", mark, n.Kind, n.RunID, n.What),
			selected: i == m.needSel && m.focus == paneNeeds, need: true})
	}
	return out
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
	return detailLines(r, d)
}

// footer is the open prompt, else the last answer, else the keys.
func (m Model) footer() (string, bool) {
	switch {
	case m.prompt != nil && m.prompt.note:
		return m.prompt.question + m.prompt.text + "▏", false
	case m.prompt != nil:
		return m.prompt.question, false
	case m.flash != "":
		return m.flash, m.bad
	}
	return keysHelp, false
}

// window is the first row to show of n so that sel is visible in height.
func window(sel, n, height int) int {
	if n <= height || sel < height {
		return 0
	}
	return min(sel-height+1, n-height)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
