// Package docmap holds a test that keeps the README's architecture map
// honest: every answer in its "Where things are" list names a file and a
// function or method (`workflows/loop.go` `loop.audit`), and the test
// parses the file and fails when either is gone. Code moves; the map must
// move with it, or say so in a failing build rather than mislead a reader.
package docmap
