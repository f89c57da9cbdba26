package web

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"github.com/horizon/horizon/app/core"
)

// bar is one bar of a chart.
type bar struct {
	Label string  // under the bar
	Value float64 // its height, in the chart's unit
	Title string  // the tooltip
	Over  bool    // drawn as over its limit
}

// chartSpec is what a chart draws: bars, and an optional limit line.
type chartSpec struct {
	Title string
	Bars  []bar
	Limit float64 // 0: none
	// Format says a value in the chart's unit ("$1.20", "3").
	Format func(float64) string
}

// Geometry of every chart: the dashboard scales the SVG to its box.
const (
	chartW, chartH                 = 640, 220
	padL, padR, padT, padB         = 48, 12, 28, 36
	plotW, plotH                   = chartW - padL - padR, chartH - padT - padB
	maxLabels                      = 16
	barGap                 float64 = 0.2
)

// svg draws a bar chart: one <rect class="bar"> per bar, a dashed
// <line class="limit"> at the limit, labels thinned so they do not
// overlap. The output depends only on the spec, for golden tests.
func svg(c chartSpec) string {
	var b strings.Builder
	top := c.Limit
	for _, x := range c.Bars {
		top = max(top, x.Value)
	}
	if top <= 0 {
		top = 1
	}
	top *= 1.1
	y := func(v float64) float64 { return padT + plotH - v/top*plotH }
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" class="chart" role="img" aria-label="%s">`+"\n", chartW, chartH, esc(c.Title))
	fmt.Fprintf(&b, `<title>%s</title>`+"\n", esc(c.Title))
	fmt.Fprintf(&b, `<text class="title" x="%d" y="16">%s</text>`+"\n", padL, esc(c.Title))
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", padL, padT+plotH, padL+plotW, padT+plotH)
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", padL-4, y(top/1.1)+4, esc(c.Format(top/1.1)))
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="end">%s</text>`+"\n", padL-4, padT+plotH+4, esc(c.Format(0)))
	n := len(c.Bars)
	if n == 0 {
		fmt.Fprintf(&b, `<text class="empty" x="%d" y="%d" text-anchor="middle">no data yet</text>`+"\n", padL+plotW/2, padT+plotH/2)
	}
	step := 1
	if n > maxLabels {
		step = (n + maxLabels - 1) / maxLabels
	}
	slot := float64(plotW) / float64(max(n, 1))
	for i, x := range c.Bars {
		left := padL + float64(i)*slot + slot*barGap/2
		w := slot * (1 - barGap)
		h := float64(padT+plotH) - y(x.Value)
		class := "bar"
		if x.Over {
			class = "bar over"
		}
		fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`+"\n",
			class, left, y(x.Value), w, h, esc(x.Title))
		if i%step == 0 {
			fmt.Fprintf(&b, `<text class="label" x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", left+w/2, padT+plotH+14, esc(x.Label))
		}
	}
	if c.Limit > 0 {
		fmt.Fprintf(&b, `<line class="limit" x1="%d" y1="%.1f" x2="%d" y2="%.1f"><title>limit %s</title></line>`+"\n",
			padL, y(c.Limit), padL+plotW, y(c.Limit), esc(c.Format(c.Limit)))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func esc(s string) string { return html.EscapeString(s) }

func usd(v float64) string   { return fmt.Sprintf("$%.2f", v) }
func count(v float64) string { return fmt.Sprintf("%.0f", v) }

// dayLabel is "03-01" of "2026-03-01": the year is in the tooltip.
func dayLabel(day string) string {
	if len(day) == len(time.DateOnly) {
		return day[5:]
	}
	return day
}

func (s *Server) chart(w http.ResponseWriter, r *http.Request) {
	spec, err := s.chartSpec(r)
	if err != nil {
		s.api(func(*http.Request) (any, error) { return nil, err }).ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(svg(spec)))
}

func (s *Server) chartSpec(r *http.Request) (chartSpec, error) {
	ctx := r.Context()
	switch r.PathValue("chart") {
	case "spend.svg":
		n, err := days(r, 14)
		if err != nil {
			return chartSpec{}, err
		}
		ds, err := s.Core.Spend(ctx, n)
		if err != nil {
			return chartSpec{}, err
		}
		c := chartSpec{Title: fmt.Sprintf("Spend per day, last %d days", n), Format: usd}
		for _, d := range ds {
			c.Limit = max(c.Limit, d.Ceiling)
			c.Bars = append(c.Bars, bar{Label: dayLabel(d.Day), Value: d.Spent, Title: d.Day + ": " + usd(d.Spent), Over: d.AtCeiling})
		}
		if c.Limit > 0 {
			c.Title += " (day ceiling " + usd(c.Limit) + ")"
		}
		return c, nil
	case "landed.svg":
		n, err := days(r, 14)
		if err != nil {
			return chartSpec{}, err
		}
		now := s.now()
		states, err := s.Core.RunsSince(ctx, now.UTC().AddDate(0, 0, -n))
		if err != nil {
			return chartSpec{}, err
		}
		c := chartSpec{Title: fmt.Sprintf("Features landed per day, last %d days", n), Format: count}
		for _, d := range core.LandedPerDay(states, now, n) {
			c.Bars = append(c.Bars, bar{Label: dayLabel(d.Day), Value: float64(d.Count), Title: fmt.Sprintf("%s: %d landed", d.Day, d.Count)})
		}
		return c, nil
	case "attempts.svg":
		id := r.URL.Query().Get("run")
		if id == "" {
			rows, err := s.Core.Runs(ctx, core.ListRequest{Limit: listedRuns})
			if err != nil {
				return chartSpec{}, err
			}
			if len(rows) == 0 {
				return chartSpec{Title: "Attempts per feature", Format: count}, nil
			}
			id = rows[0].ID
		}
		if err := core.CheckID("run", id); err != nil {
			return chartSpec{}, badRequest("%v", err)
		}
		rv, err := s.Core.Run(ctx, id)
		if err != nil {
			return chartSpec{}, err
		}
		c := chartSpec{Title: "Attempts per feature of " + id, Format: count}
		for _, f := range core.AttemptsPerFeature(rv.State) {
			c.Bars = append(c.Bars, bar{Label: f.Feature, Value: float64(f.Attempts),
				Title: fmt.Sprintf("%s %s: %d attempts, %s, %s", f.Feature, f.Title, f.Attempts, usd(f.Cost), f.Status)})
		}
		return c, nil
	}
	return chartSpec{}, &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("no chart %q: spend.svg, landed.svg or attempts.svg", r.PathValue("chart"))}
}
