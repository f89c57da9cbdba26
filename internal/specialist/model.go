package specialist

import (
	"errors"
	"fmt"

	"github.com/horizon/horizon/ladder"
)

// Binding is the model a specialist runs on, and why.
type Binding struct {
	Model string `json:"model,omitempty"` // provider/model; "" inherits the parent session's
	// Source: "manifest" (model: set), "forced" (models.default / --model),
	// "role" (the role's best-ranked connected model) or "inherit".
	Source string `json:"source"`
	Rank   int    `json:"rank,omitempty"`
	// Unavailable says why a specialist with a role has no model: there is
	// no cross-role fallback, so it cannot run.
	Unavailable string `json:"unavailable,omitempty"`
}

// Available reports whether the specialist can run.
func (b Binding) Available() bool { return b.Unavailable == "" }

// Bind chooses the model of sp: its own model: key, else the forced model,
// else its role's best-ranked model among the connected routes, else the
// parent's. A role nobody connected serves leaves it unavailable.
func Bind(sp *Specialist, lb *ladder.Leaderboard, connected []string, forced string) Binding {
	switch {
	case sp.Model != "":
		return Binding{Model: sp.Model, Source: "manifest"}
	case forced != "":
		return Binding{Model: forced, Source: "forced"}
	case sp.Role == "":
		return Binding{Source: "inherit"}
	}
	c, err := lb.Resolve(sp.Role, connected)
	if err != nil {
		var nm *ladder.NoModelError
		if errors.As(err, &nm) {
			return Binding{Source: "role", Unavailable: err.Error()}
		}
		return Binding{Source: "role", Unavailable: fmt.Sprintf("resolve role %s: %v", sp.Role, err)}
	}
	return Binding{Model: c.Route, Source: "role", Rank: c.Rank}
}
