package ladder

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownRole is wrapped by Resolve for a role that is neither a
// leaderboard role nor one of horizon's names for them.
var ErrUnknownRole = errors.New("unknown role")

// Choice is the model a role resolved to.
type Choice struct {
	Role      string `json:"role"`  // the leaderboard role (build for worker, ...)
	Model     string `json:"model"` // the leaderboard entry's name
	Route     string `json:"route"` // the provider/model ID to use
	Rank      int    `json:"rank"`
	CostClass string `json:"cost_class"` // capabilities.cost: local, free, low, medium, high, metered
	Why       string `json:"why"`
}

// NoModelError says that no connected model is ranked for Role. There is
// no cross-role fallback; Available lists the roles that do resolve with
// the same connected routes, in display order.
type NoModelError struct {
	Role      string
	Available []string
}

func (e *NoModelError) Error() string {
	msg := fmt.Sprintf("no connected model is ranked for role %q (there is no cross-role fallback)", e.Role)
	if len(e.Available) == 0 {
		return msg + "; no role is available: connect a provider that serves one of the leaderboard's routes"
	}
	return msg + "; roles available: " + strings.Join(e.Available, ", ")
}

// Validate re-checks a leaderboard built or edited in code with the rules
// ParseLeaderboard applies.
func (lb *Leaderboard) Validate() error {
	data, err := json.Marshal(lb)
	if err != nil {
		return fmt.Errorf("validate leaderboard: %w", err)
	}
	_, err = ParseLeaderboard(data)
	return err
}

// Resolve picks the model for role (a leaderboard role, or worker, auditor,
// explorer) among the connected provider/model IDs: of the models ranked
// for the role that have a connected route, the lowest rank wins, and its
// first connected route in listed order is used. A role nobody connected
// serves is a *NoModelError.
func (lb *Leaderboard) Resolve(role string, connected []string) (Choice, error) {
	return lb.resolve(role, connected, nil)
}

// ResolveLocal is Resolve restricted to models whose capabilities.cost is
// "local": the model for tier T1.
func (lb *Leaderboard) ResolveLocal(role string, connected []string) (Choice, error) {
	return lb.resolve(role, connected, func(m Model) bool { return m.Capabilities.Local() })
}

func (lb *Leaderboard) resolve(role string, connected []string, keep func(Model) bool) (Choice, error) {
	canon, ok := CanonicalRole(role)
	if !ok {
		return Choice{}, fmt.Errorf("resolve role %q: %w (roles are %s; horizon also accepts worker, auditor, explorer)", role, ErrUnknownRole, strings.Join(Roles(), ", "))
	}
	conn := connectedSet(connected)
	c, ranked, reachable, found := lb.pick(canon, conn, keep)
	if !found {
		return Choice{}, &NoModelError{Role: canon, Available: lb.available(conn, keep)}
	}
	alias := ""
	if canon != role {
		alias = fmt.Sprintf("%s is the %s role; ", role, canon)
	}
	c.Why = fmt.Sprintf("%srank %d for %s, the best of %d connected of %d ranked models; first connected route of %s", alias, c.Rank, canon, reachable, ranked, c.Model)
	return c, nil
}

// pick finds the lowest-ranked model for role with a connected route.
func (lb *Leaderboard) pick(role string, conn map[string]bool, keep func(Model) bool) (best Choice, ranked, reachable int, found bool) {
	for _, m := range lb.Models {
		rr, ok := m.Roles[role]
		if !ok || (keep != nil && !keep(m)) {
			continue
		}
		ranked++
		route := ""
		for _, r := range m.Routes {
			if conn[r] {
				route = r
				break
			}
		}
		if route == "" {
			continue
		}
		reachable++
		if !found || rr.Rank < best.Rank {
			best = Choice{Role: role, Model: m.Name, Route: route, Rank: rr.Rank, CostClass: m.Capabilities.Cost}
			found = true
		}
	}
	return best, ranked, reachable, found
}

// available lists the roles that resolve, in display order.
func (lb *Leaderboard) available(conn map[string]bool, keep func(Model) bool) []string {
	var out []string
	for _, r := range Roles() {
		if _, _, _, ok := lb.pick(r, conn, keep); ok {
			out = append(out, r)
		}
	}
	return out
}

// ResolveAll resolves every leaderboard role, for `horizon models`. The
// error joins a *NoModelError for each role that does not resolve, in
// display order; the map holds the roles that do.
func (lb *Leaderboard) ResolveAll(connected []string) (map[string]Choice, error) {
	out := map[string]Choice{}
	var errs []error
	for _, r := range Roles() {
		c, err := lb.Resolve(r, connected)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[r] = c
	}
	return out, errors.Join(errs...)
}

func connectedSet(connected []string) map[string]bool {
	m := make(map[string]bool, len(connected))
	for _, c := range connected {
		if c = strings.TrimSpace(c); c != "" {
			m[c] = true
		}
	}
	return m
}
