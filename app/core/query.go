package core

import "strings"

// whereEqual is the visibility clause "attr = value", and whether the
// engine matches it exactly (QuoteExact).
func whereEqual(attr, value string) (clause string, exact bool) {
	q, exact := QuoteExact(value)
	return attr + " = " + q, exact
}

// runFilter narrows a list of runs: a clause of the visibility query where
// the engine can match the value, else a test applied to each listed run.
type runFilter struct {
	where []string
	keep  []func(RunRow) bool
}

// equal adds "attr = value", or test when the engine cannot match value.
func (f *runFilter) equal(attr, value string, test func(RunRow) bool) {
	if clause, exact := whereEqual(attr, value); exact {
		f.where = append(f.where, clause)
		return
	}
	f.keep = append(f.keep, test)
}

// query is the visibility query's extra clauses.
func (f *runFilter) query() string { return strings.Join(f.where, " AND ") }

// apply keeps the runs every test passes, at most limit of them (0: all).
// With tests, the engine's list must be read whole (limit 0), then cut.
func (f *runFilter) apply(runs []RunRow, limit int) []RunRow {
	if len(f.keep) == 0 {
		return runs
	}
	var out []RunRow
	for _, r := range runs {
		ok := true
		for _, k := range f.keep {
			ok = ok && k(r)
		}
		if ok {
			out = append(out, r)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// listLimit is how many runs to ask the engine for.
func (f *runFilter) listLimit(limit int) int {
	if len(f.keep) > 0 {
		return 0
	}
	return limit
}
