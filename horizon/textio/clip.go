package textio

import "unicode/utf8"

// Ellipsis marks where a text was cut.
const Ellipsis = "…"

// Head keeps at most n bytes of the start of s, ending on a rune boundary,
// and marks the cut: the start of a message names the problem.
func Head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + Ellipsis
}

// Tail keeps at most n bytes of the end of s, starting on a rune
// boundary, and says how many bytes it dropped: the end of a command's
// output is where its verdict is.
func Tail(s string, n int) (kept string, dropped int) {
	if len(s) <= n {
		return s, 0
	}
	cut := len(s) - max(n, 0)
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return s[cut:], cut
}

// Runes fits s in n runes, the ellipsis included: a cell of a screen n
// columns wide.
func Runes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + Ellipsis
}
