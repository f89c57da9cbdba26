package horizon

import (
	"testing"

	"github.com/horizon/horizon/internal/golden"
)

func goldenFile(t *testing.T, name, got string) { golden.Assert(t, name, got) }
