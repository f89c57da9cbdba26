package ladder

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/horizon/horizon/horizon/textio"
)

// Price is what a model's tokens cost, in US dollars per million tokens.
type Price struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CachedInput float64 `json:"cachedInput,omitempty"`
}

// Cost is what these token counts cost at p; cached input tokens are part
// of input and priced at CachedInput instead.
func (p Price) Cost(input, cached, output int64) float64 {
	fresh := max(input-cached, 0)
	return (float64(fresh)*p.Input + float64(cached)*p.CachedInput + float64(output)*p.Output) / 1e6
}

// classPrices price a metered model whose entry names no price: on the
// high side of each class, so a ceiling is reached early rather than late.
var classPrices = map[string]Price{
	"low":     {Input: 1, Output: 5, CachedInput: 0.1},
	"medium":  {Input: 3, Output: 15, CachedInput: 0.3},
	"high":    {Input: 15, Output: 75, CachedInput: 1.5},
	"metered": {Input: 15, Output: 75, CachedInput: 1.5},
}

// PriceOf is the price of the model route belongs to: its entry's price,
// else its cost class's; local and free models cost nothing. A route no
// model lists is priced as a high-cost one (like Paid, unknown is metered).
func (lb *Leaderboard) PriceOf(route string) Price {
	for _, m := range lb.Models {
		for _, r := range m.Routes {
			if r != route {
				continue
			}
			if m.Capabilities.Price != nil {
				return *m.Capabilities.Price
			}
			return classPrices[m.Capabilities.Cost] // local, free: zero
		}
	}
	return classPrices["high"]
}

func (p *parser) price(id string, raw json.RawMessage) *Price {
	var pr Price
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pr); err != nil || pr.Input < 0 || pr.Output < 0 || pr.CachedInput < 0 {
		p.add(id, "capabilities.price", "must be {\"input\": USD, \"output\": USD, \"cachedInput\": USD} per million tokens, none negative, got %s", textio.Head(string(raw), 80))
		return nil
	}
	return &pr
}

func (p Price) String() string {
	return fmt.Sprintf("$%g in / $%g out per Mtok", p.Input, p.Output)
}
