package ladder

import (
	"testing"

	"github.com/horizon/horizon/internal/golden"
)

func readTestdata(t testing.TB, name string) string { return golden.Read(t, name) }

func goldenFile(t *testing.T, name, got string) { golden.Assert(t, name, got) }
