package ladder

import (
	"math"
	"strings"
	"testing"
)

func TestPriceOf(t *testing.T) {
	lb, err := ParseLeaderboard([]byte(`{"revision": 1, "models": [
	  {"name": "priced", "routes": ["codex/priced", "openai/priced"], "roles": {"build": {"rank": 1}},
	   "capabilities": {"cost": "medium", "toolCall": true, "vision": false, "price": {"input": 2, "output": 8, "cachedInput": 0.5}}},
	  {"name": "classy", "routes": ["codex/classy"], "roles": {"lead": {"rank": 1}},
	   "capabilities": {"cost": "low", "toolCall": true, "vision": false}},
	  {"name": "home", "routes": ["ollama/home"], "roles": {"quick": {"rank": 1}},
	   "capabilities": {"cost": "local", "toolCall": true, "vision": false}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		route           string
		in, cached, out int64
		want            float64
	}{
		{"codex/priced", 1_000_000, 0, 1_000_000, 10},
		{"openai/priced", 1_000_000, 500_000, 0, 1.25}, // 0.5M fresh at $2, 0.5M cached at $0.5
		{"codex/classy", 1_000_000, 0, 1_000_000, 6},   // the low class: $1 in, $5 out
		{"ollama/home", 1_000_000, 0, 1_000_000, 0},
		{"nobody/knows", 1_000_000, 0, 0, 15}, // unknown is priced high, like Paid
	}
	for _, tt := range tests {
		got := lb.PriceOf(tt.route).Cost(tt.in, tt.cached, tt.out)
		if math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("PriceOf(%s).Cost(%d, %d, %d) = %g, want %g", tt.route, tt.in, tt.cached, tt.out, got, tt.want)
		}
	}
}

func TestPriceRejectsBadShapes(t *testing.T) {
	for _, price := range []string{`{"input": -1, "output": 1}`, `{"input": 1, "output": 1, "per": "token"}`, `"cheap"`} {
		_, err := ParseLeaderboard([]byte(`{"revision": 1, "models": [{"name": "m", "routes": ["codex/m"], "roles": {"build": {"rank": 1}},
		  "capabilities": {"cost": "low", "toolCall": true, "vision": false, "price": ` + price + `}}]}`))
		if err == nil || !strings.Contains(err.Error(), "capabilities.price") {
			t.Errorf("price %s: err = %v, want one naming capabilities.price", price, err)
		}
	}
}
