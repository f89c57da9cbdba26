package config

import (
	"fmt"
	"sort"
	"strings"
)

// otherEnv are HORIZON_* variables that are not settings but are read
// elsewhere: by the agent package, and by the test suites and bench script.
var otherEnv = []string{
	"HORIZON_OPENCODE_BIN",
	"HORIZON_OPENCODE_URL", // set by horizon for its MCP server (internal/agent.EnvServerURL)
	"HORIZON_RECORD_HISTORY",
	"HORIZON_BENCH",
	"HORIZON_AGENT_DAEMON_HELPER",
	"HORIZON_TEST_ADVICE_HOLD", // activities.holdBeforeDelivery, for the advisor's crash test
	"HORIZON_E2E_SERIAL",
}

// UnknownVar is a HORIZON_* variable that names no setting, so nothing
// reads it, with the known variable nearest to it.
type UnknownVar struct {
	Name    string // as set, e.g. HORIZON_TEMPORALPORT
	Nearest string // e.g. HORIZON_TEMPORAL_PORT
	Key     string // the setting Nearest sets, e.g. temporal.port; "" for otherEnv
}

func (u UnknownVar) String() string {
	what := u.Nearest
	if u.Key != "" {
		what += " (" + u.Key + ")"
	}
	return fmt.Sprintf("%s is not a horizon setting and is ignored; did you mean %s?", u.Name, what)
}

// UnknownEnv lists the HORIZON_* variables of environ (os.Environ's
// KEY=value form) that name no setting, sorted. A misspelled key in a
// config file is an error; a misspelled variable would otherwise be
// silently ignored.
func UnknownEnv(environ []string) []UnknownVar {
	known := map[string]string{}
	for _, k := range Keys() {
		known[EnvName(k)] = k
	}
	for _, n := range otherEnv {
		known[n] = ""
	}
	var out []UnknownVar
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix+"_") {
			continue
		}
		if _, ok := known[name]; ok {
			continue
		}
		u := UnknownVar{Name: name}
		best := -1
		for n, key := range known {
			d := distance(name, n)
			if best < 0 || d < best || (d == best && n < u.Nearest) {
				best, u.Nearest, u.Key = d, n, key
			}
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// distance is the Levenshtein distance of a and b, ignoring case.
func distance(a, b string) int {
	a, b = strings.ToUpper(a), strings.ToUpper(b)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
