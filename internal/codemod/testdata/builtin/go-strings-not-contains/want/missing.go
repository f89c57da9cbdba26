package sample

import "strings"

func missing(s, sub string) bool {
	if !strings.Contains(s, sub) && !strings.Contains(sub, s) {
		return true
	}
	return strings.Index(s, sub) <= 0
}
