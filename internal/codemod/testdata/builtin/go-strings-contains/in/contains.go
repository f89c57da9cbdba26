package sample

import "strings"

func has(s, sub string) bool {
	if strings.Index(s, sub) != -1 {
		return true
	}
	if strings.Index(s, "x") >= 0 || strings.Index(sub, s) > -1 {
		return true
	}
	// Not a containment test: left alone.
	return strings.Index(s, sub) > 0 || strings.Index(s, sub) == 3
}
