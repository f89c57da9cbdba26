package specialist

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/horizon/horizon/horizon/textio"
)

// ManifestPath is where name's manifest lives in dir.
func ManifestPath(dir, name string) string { return filepath.Join(dir, name+".md") }

// CheckNotSymlink refuses a path that is a symlink: writing through it
// would change a file somewhere else.
func CheckNotSymlink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil // missing: nothing to write through
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s (horizon does not write through or edit symlinked manifests; change the file it points to yourself)", ErrSymlink, path)
	}
	return nil
}

// Create validates m and writes it as dir/<name>.md. An existing manifest
// is an ErrExists unless force is set; force never replaces a symlink.
func Create(dir string, m *Manifest, force bool) (string, error) {
	if err := ValidName(m.Name); err != nil {
		return "", err
	}
	path := ManifestPath(dir, m.Name)
	content := m.Render()
	if _, err := Parse(path, content, m.Scope, m.Name); err != nil {
		return "", err
	}
	if _, err := os.Lstat(path); err == nil {
		if !force {
			return "", fmt.Errorf("%w: %s (pass --force to replace it)", ErrExists, path)
		}
		if err := CheckNotSymlink(path); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create specialist %s: %w", m.Name, err)
	}
	if err := WriteFile(path, content); err != nil {
		return "", fmt.Errorf("create specialist %s: %w", m.Name, err)
	}
	return path, nil
}

// WriteFile writes content to path through a temporary file and a rename.
func WriteFile(path string, content []byte) error {
	return textio.WriteAtomic(path, content, 0o644)
}
