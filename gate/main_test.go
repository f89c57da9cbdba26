package gate

import (
	"flag"
	"os"
	"testing"
)

// TestMain raises -test.parallel (unless given): the process-group tests
// spend their time waiting for init to reap killed orphans, not on the CPU,
// so running them side by side keeps the package fast on small machines.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "16")
	}
	os.Exit(m.Run())
}
