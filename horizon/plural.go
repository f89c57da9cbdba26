package horizon

import (
	"strconv"
	"strings"
)

// Plural counts a noun: "1 feature", "2 features", "0 attempts", "3
// entries". Every message that counts things says it this way.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + plural(noun)
}

// plural is noun's plural: "entries" for "entry", "days" for "day",
// "attempts" for "attempt", "criteria" for "criterion".
func plural(noun string) string {
	if stem, ok := strings.CutSuffix(noun, "criterion"); ok {
		return stem + "criteria"
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && stem != "" && !strings.ContainsAny(stem[len(stem)-1:], "aeiou") {
		return stem + "ies"
	}
	return noun + "s"
}
