package sample

import "strings"

func has(s, sub string) bool {
	if strings.Contains(s, sub) {
		return true
	}
	if strings.Contains(s, "x") || strings.Contains(sub, s) {
		return true
	}
	// Not a containment test: left alone.
	return strings.Index(s, sub) > 0 || strings.Index(s, sub) == 3
}
