package sample

import "strings"

func missing(s, sub string) bool {
	if strings.Index(s, sub) == -1 && strings.Index(sub, s) < 0 {
		return true
	}
	return strings.Index(s, sub) <= 0
}
