package core

import "strings"

// Every value that goes into a visibility query (the engine's list of
// runs) is quoted by Quote, one way, whoever builds the query: the CLI,
// the readers here, the daemon's recovery pass.

// unexact are the characters the engine's SQL parser writes back escaped,
// MySQL-style, when it turns a query into SQL (sqltypes.SQLEncodeMap): the
// embedded engine's SQLite store does not undo those escapes, so a value
// holding one never equals itself there.
const unexact = "'\"\\\x00\b\n\r\t\x1a"

// quoter escapes only what ends or escapes a single-quoted literal of the
// query grammar; a double quote needs no escape inside single quotes.
var quoter = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// Quote makes v a single-quoted string literal of a visibility query that
// the engine's parser reads back as exactly v.
func Quote(v string) string { return "'" + quoter.Replace(v) + "'" }

// QuoteExact is Quote, and whether every store matches the literal as
// written: false when v holds a character some stores cannot (unexact), so
// the caller filters the listed runs itself instead of in the query.
func QuoteExact(v string) (quoted string, exact bool) {
	return Quote(v), !strings.ContainsAny(v, unexact)
}
