// Package docmap holds the tests that keep ARCHITECTURE.md honest. Every
// answer in its "Where things are" list names a file and a function or
// method (`workflows/change_loop.go` `changeLoop.audit`), and a test parses the file
// and fails when either is gone. Its "Layers" list puts every package in
// a layer, and a test fails on a package it does not list or an import
// that runs up a layer. Code moves; the map must move with it, or say so
// in a failing build rather than mislead a reader.
package docmap
