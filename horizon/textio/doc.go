// Package textio holds the small text and file helpers every layer shares,
// each written once: clipping a text to a size without splitting a UTF-8
// sequence (Head, Tail, Runes), writing a file so a crash leaves the old
// or the new content and never half (WriteAtomic), and appending a line
// to a ledger under an exclusive lock, once per key, synced before it
// returns (AppendOnce).
//
// It imports nothing of horizon's, so the bottom layer can use it.
package textio
