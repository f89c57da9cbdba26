package specialist

import (
	"errors"
	"fmt"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrNotFound: no specialist of that name in the scope(s) asked.
	ErrNotFound = errors.New("no such specialist")
	// ErrExists: create without --force over an existing manifest.
	ErrExists = errors.New("specialist manifest already exists")
	// ErrSymlink: horizon never writes through, or edits, a symlinked manifest.
	ErrSymlink = errors.New("manifest is a symlink")
	// ErrBuiltin: built-in specialists are compiled in and cannot be
	// written; create a user or project specialist of the same name.
	ErrBuiltin = errors.New("built-in specialist")
)

// ManifestError is a problem in one manifest, located at a line of its file.
type ManifestError struct {
	Path string // the manifest file ("builtin:worker.md" for built-ins)
	Line int    // 1-based line in the file; 0 when the problem has none
	Msg  string
}

func (e *ManifestError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}
