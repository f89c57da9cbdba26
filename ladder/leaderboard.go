package ladder

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/horizon/horizon/horizon/textio"
	"github.com/horizon/horizon/horizon/vocab"
)

// Roles returns the leaderboard roles in display order (zilX's roles:
// vocab.LeaderboardRoles), as the strings models.json spells them.
func Roles() []string {
	var out []string
	for _, r := range vocab.LeaderboardRoles() {
		out = append(out, string(r))
	}
	return out
}

// CanonicalRole maps one of horizon's roles onto the leaderboard role whose
// models it uses (worker → build, auditor → analyze, explorer → explore:
// vocab.Role.Leaderboard) and passes leaderboard roles through. ok is
// false for anything else.
func CanonicalRole(role string) (string, bool) {
	r, ok := vocab.Role(role).Leaderboard()
	return string(r), ok
}

// Cost classes a model's capabilities.cost may take: "local" (runs on the
// operator's machine), "free", zilX's levels "low", "medium", "high", and
// "metered" (paid, level not stated).
var costClasses = []string{"local", "free", "low", "medium", "high", "metered"}

var (
	reasoningLevels = []string{"none", "low", "medium", "high"}
	latencyLevels   = []string{"low", "medium", "high"}
)

// Leaderboard is a parsed models.json.
type Leaderboard struct {
	// Revision increases whenever a new leaderboard is published.
	Revision int     `json:"revision"`
	Models   []Model `json:"models"`
}

// Model is one leaderboard entry.
type Model struct {
	Name string `json:"name"`
	// Routes are complete provider/model IDs, checked in listed order.
	Routes []string `json:"routes"`
	// Roles ranks the model per role; lower is preferred, unique per role.
	Roles        map[string]RoleRank `json:"roles"`
	Capabilities Capabilities        `json:"capabilities"`
}

// RoleRank is a model's rank in one role.
type RoleRank struct {
	Rank int `json:"rank"`
}

// Capabilities describe a model. Only Cost is read by horizon (local
// versus metered); the rest is kept for display and future policy and does
// not affect selection, as in zilX.
type Capabilities struct {
	ContextLength int    `json:"contextLength,omitempty"`
	ToolCall      bool   `json:"toolCall"`
	Reasoning     string `json:"reasoning,omitempty"` // none | low | medium | high
	Vision        bool   `json:"vision"`
	Cost          string `json:"cost"`              // local | free | low | medium | high | metered
	Latency       string `json:"latency,omitempty"` // low | medium | high
	// Price is what a million tokens cost, for appliers that report
	// tokens but no cost (Codex CLI); nil prices by the cost class.
	Price *Price `json:"price,omitempty"`
}

// Local reports whether the model runs on the operator's machine.
func (c Capabilities) Local() bool { return c.Cost == "local" }

// SchemaError is one problem found in a models.json, naming the model (""
// for the top level) and the field.
type SchemaError struct {
	Model string // the model's name, or "#3" (its position) when it has none
	Field string // e.g. "roles.build.rank"
	Msg   string
}

func (e *SchemaError) Error() string {
	if e.Model == "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("model %q: %s: %s", e.Model, e.Field, e.Msg)
}

// removedFields are zilX catalog prose fields that were removed: routing is
// decided by rank, never by prose a model would read.
var removedFields = []string{"routerHint", "agentInstruction"}

//go:embed models.json
var bundledJSON []byte

// Bundled returns the leaderboard shipped with horizon (ladder/models.json),
// freshly parsed so callers may change their copy.
func Bundled() *Leaderboard {
	lb, err := ParseLeaderboard(bundledJSON)
	if err != nil {
		// TestBundled keeps this unreachable.
		panic(fmt.Sprintf("ladder: bundled models.json is invalid: %v", err))
	}
	return lb
}

// BundledJSON returns the bytes of the bundled models.json, e.g. for a user
// to copy and override.
func BundledJSON() []byte { return bytes.Clone(bundledJSON) }

// ParseLeaderboard parses and validates a models.json. The error lists
// every problem found (each a *SchemaError, joined), so a user fixing an
// override sees them all at once: unknown top-level or model fields, the
// removed prose fields routerHint and agentInstruction, missing or empty
// routes, a route that is not provider/model, a model with no role, an
// unknown role, a rank that is not a positive integer or is taken twice
// within a role, capability values outside their enums.
func ParseLeaderboard(data []byte) (*Leaderboard, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("parse leaderboard: invalid JSON: %w", err)
	}
	p := &parser{}
	lb := &Leaderboard{}
	if raw, ok := top["revision"]; !ok {
		p.add("", "revision", "missing")
	} else if err := json.Unmarshal(raw, &lb.Revision); err != nil || lb.Revision < 1 {
		p.add("", "revision", "must be a positive integer, got %s", textio.Head(string(raw), 60))
	}
	if raw, ok := top["models"]; !ok {
		p.add("", "models", "missing")
	} else {
		lb.Models = p.models(raw)
	}
	for _, k := range sortedKeys(top) {
		if k != "revision" && k != "models" && k != "$schema" {
			p.add("", k, "unknown top-level field")
		}
	}
	p.crossCheck(lb)
	switch len(p.errs) {
	case 0:
		return lb, nil
	case 1:
		return nil, fmt.Errorf("parse leaderboard: %w", p.errs[0])
	}
	return nil, fmt.Errorf("parse leaderboard: %d problems:\n%w", len(p.errs), errors.Join(p.errs...))
}

type parser struct{ errs []error }

func (p *parser) add(model, field, format string, args ...any) {
	p.errs = append(p.errs, &SchemaError{Model: model, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) models(raw json.RawMessage) []Model {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		p.add("", "models", "must be an array of models")
		return nil
	}
	if len(items) == 0 {
		p.add("", "models", "is empty")
	}
	out := make([]Model, 0, len(items))
	for i, item := range items {
		if m, ok := p.model(i, item); ok {
			out = append(out, m)
		}
	}
	return out
}

// model parses and checks one model on its own; crossCheck checks what
// spans models.
func (p *parser) model(i int, raw json.RawMessage) (Model, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		p.add(fmt.Sprintf("#%d", i+1), "", "must be an object")
		return Model{}, false
	}
	var m Model
	id := fmt.Sprintf("#%d", i+1)
	if n, ok := fields["name"]; ok {
		if err := json.Unmarshal(n, &m.Name); err != nil || strings.TrimSpace(m.Name) == "" {
			p.add(id, "name", "must be a non-empty string")
		} else {
			id = m.Name
		}
	} else {
		p.add(id, "name", "missing")
	}
	for _, k := range sortedKeys(fields) {
		switch {
		case k == "name":
		case k == "routes":
			m.Routes = p.routes(id, fields[k])
		case k == "roles":
			m.Roles = p.roles(id, fields[k])
		case k == "capabilities":
			m.Capabilities = p.capabilities(id, fields[k])
		case slices.Contains(removedFields, k):
			p.add(id, k, "removed prose field is rejected: models are chosen by rank, not by prose")
		default:
			p.add(id, k, "unknown field")
		}
	}
	if _, ok := fields["routes"]; !ok {
		p.add(id, "routes", "missing: a model needs at least one provider/model route")
	}
	if _, ok := fields["roles"]; !ok {
		p.add(id, "roles", "missing: a model needs at least one role")
	}
	if _, ok := fields["capabilities"]; !ok {
		p.add(id, "capabilities", "missing (capabilities.cost is required)")
	}
	return m, true
}

func (p *parser) routes(id string, raw json.RawMessage) []string {
	var routes []string
	if err := json.Unmarshal(raw, &routes); err != nil {
		p.add(id, "routes", "must be an array of provider/model strings")
		return nil
	}
	if len(routes) == 0 {
		p.add(id, "routes", "is empty: a model needs at least one provider/model route")
	}
	seen := map[string]bool{}
	for i, r := range routes {
		field := fmt.Sprintf("routes[%d]", i)
		if err := checkRoute(r); err != nil {
			p.add(id, field, "%v", err)
		}
		if seen[r] {
			p.add(id, field, "route %q listed twice", r)
		}
		seen[r] = true
	}
	return routes
}

// checkRoute accepts a complete provider/model ID: a provider, a slash, a
// model (which may contain more slashes, as OpenRouter's do), no spaces.
func checkRoute(r string) error {
	prov, model, ok := strings.Cut(r, "/")
	switch {
	case !ok || prov == "" || model == "" || strings.HasSuffix(model, "/"):
		return fmt.Errorf("route %q is not a provider/model ID", r)
	case strings.ContainsFunc(r, func(c rune) bool { return c <= ' ' || c == 0x7f }):
		return fmt.Errorf("route %q contains spaces or control characters", r)
	}
	return nil
}

func (p *parser) roles(id string, raw json.RawMessage) map[string]RoleRank {
	var roles map[string]json.RawMessage
	if err := json.Unmarshal(raw, &roles); err != nil {
		p.add(id, "roles", "must be an object of role: {rank: N}")
		return nil
	}
	if len(roles) == 0 {
		p.add(id, "roles", "is empty: a model needs at least one role")
	}
	out := map[string]RoleRank{}
	for _, role := range sortedKeys(roles) {
		field := "roles." + role
		if !slices.Contains(Roles(), role) {
			hint := ""
			if c, ok := CanonicalRole(role); ok {
				hint = fmt.Sprintf(" (horizon's %q is the leaderboard role %q)", role, c)
			}
			p.add(id, field, "unknown role%s; roles are %s", hint, strings.Join(Roles(), ", "))
			continue
		}
		var rf map[string]json.RawMessage
		if err := json.Unmarshal(roles[role], &rf); err != nil {
			p.add(id, field, "must be an object {\"rank\": N}")
			continue
		}
		var rr RoleRank
		for _, k := range sortedKeys(rf) {
			switch {
			case k == "rank":
				if err := json.Unmarshal(rf[k], &rr.Rank); err != nil || rr.Rank < 1 {
					p.add(id, field+".rank", "must be a positive integer, got %s", textio.Head(string(rf[k]), 60))
					rr.Rank = 0
				}
			case slices.Contains(removedFields, k):
				p.add(id, field+"."+k, "removed prose field is rejected: models are chosen by rank, not by prose")
			default:
				p.add(id, field+"."+k, "unknown field")
			}
		}
		if _, ok := rf["rank"]; !ok {
			p.add(id, field+".rank", "missing")
		}
		if rr.Rank > 0 {
			out[role] = rr
		}
	}
	return out
}

func (p *parser) capabilities(id string, raw json.RawMessage) Capabilities {
	var cf map[string]json.RawMessage
	var c Capabilities
	if err := json.Unmarshal(raw, &cf); err != nil {
		p.add(id, "capabilities", "must be an object")
		return c
	}
	str := func(k string, dst *string, allowed []string) {
		if err := json.Unmarshal(cf[k], dst); err != nil || !slices.Contains(allowed, *dst) {
			p.add(id, "capabilities."+k, "must be one of %s, got %s", strings.Join(allowed, ", "), textio.Head(string(cf[k]), 60))
		}
	}
	boolean := func(k string, dst *bool) {
		if err := json.Unmarshal(cf[k], dst); err != nil {
			p.add(id, "capabilities."+k, "must be true or false, got %s", textio.Head(string(cf[k]), 60))
		}
	}
	for _, k := range sortedKeys(cf) {
		switch {
		case k == "contextLength":
			if err := json.Unmarshal(cf[k], &c.ContextLength); err != nil || c.ContextLength < 1 {
				p.add(id, "capabilities.contextLength", "must be a positive integer, got %s", textio.Head(string(cf[k]), 60))
			}
		case k == "toolCall":
			boolean(k, &c.ToolCall)
		case k == "vision":
			boolean(k, &c.Vision)
		case k == "reasoning":
			str(k, &c.Reasoning, reasoningLevels)
		case k == "cost":
			str(k, &c.Cost, costClasses)
		case k == "latency":
			str(k, &c.Latency, latencyLevels)
		case k == "price":
			c.Price = p.price(id, cf[k])
		case slices.Contains(removedFields, k):
			p.add(id, "capabilities."+k, "removed prose field is rejected: models are chosen by rank, not by prose")
		default:
			p.add(id, "capabilities."+k, "unknown field")
		}
	}
	if _, ok := cf["cost"]; !ok {
		p.add(id, "capabilities.cost", "missing: horizon needs to know whether a model is local or metered")
	}
	return c
}

// crossCheck finds what spans models: duplicate names, a route claimed by
// two models, a rank taken twice within a role.
func (p *parser) crossCheck(lb *Leaderboard) {
	names := map[string]bool{}
	routeOwner := map[string]string{}
	rankOwner := map[string]map[int]string{}
	for _, m := range lb.Models {
		if m.Name != "" {
			if names[m.Name] {
				p.add(m.Name, "name", "listed twice")
			}
			names[m.Name] = true
		}
		for i, r := range m.Routes {
			if o, ok := routeOwner[r]; ok && o != m.Name {
				p.add(m.Name, fmt.Sprintf("routes[%d]", i), "route %q is also a route of model %q", r, o)
			}
			routeOwner[r] = m.Name
		}
		for _, role := range sortedKeys(m.Roles) {
			rank := m.Roles[role].Rank
			if rankOwner[role] == nil {
				rankOwner[role] = map[int]string{}
			}
			if o, ok := rankOwner[role][rank]; ok {
				p.add(m.Name, "roles."+role+".rank", "duplicate rank %d in role %s (also held by model %q)", rank, role, o)
				continue
			}
			rankOwner[role][rank] = m.Name
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
