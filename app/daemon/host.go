package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/horizon/horizon/horizon/textio"
)

// HostID is the file naming this home's host queue (activities.HostQueue).
func (p Paths) HostID() string { return filepath.Join(p.Home, "host.id") }

// hostID is the name of this home among the engine's workers, made on the
// home's first start and kept: "<hostname>-<8 random hex>". It names the
// home, not the process or the machine, because what the host queue
// stands for is the home's OpenCode store: a daemon restarted on the same
// home serves the same queue, and a container that comes back with a new
// hostname but the same home volume too. Call it under the home's lock.
func hostID(p Paths) (string, error) {
	b, err := os.ReadFile(p.HostID())
	if err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	} else if !os.IsNotExist(err) {
		return "", fmt.Errorf("daemon: read %s: %w", p.HostID(), err)
	}
	r := make([]byte, 4)
	if _, err := rand.Read(r); err != nil {
		return "", fmt.Errorf("daemon: host id: %w", err)
	}
	id := hostname() + "-" + hex.EncodeToString(r)
	if err := textio.WriteAtomic(p.HostID(), []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("daemon: write %s: %w", p.HostID(), err)
	}
	return id, nil
}
