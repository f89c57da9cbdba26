package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// usd shows an amount as it is: cents as cents ($12.50), anything finer
// in full ($0.005), never rounded to $0.00.
func usd(v float64) string {
	if cents := math.Round(v * 100); math.Abs(v*100-cents) < 1e-9 {
		return fmt.Sprintf("$%.2f", v)
	}
	return "$" + strconv.FormatFloat(v, 'f', -1, 64)
}

// ceiling shows a run's spend ceiling; 0 is none.
func ceiling(v float64) string {
	if v == 0 {
		return "no ceiling"
	}
	return "ceiling " + usd(v)
}

// temporalSuffix is what Temporal's ApplicationError.Error() appends to a
// message: for people it is noise.
var temporalSuffix = regexp.MustCompile(`\s*\(type: [^()]*, retryable: (?:true|false)\)`)

// plainReason is a run's reason without Temporal's failure annotations.
func plainReason(s string) string { return temporalSuffix.ReplaceAllString(s, "") }

// dayCeiling shows the daily ceiling; 0 is none.
func dayCeiling(v float64) string {
	if v == 0 {
		return "no daily ceiling"
	}
	return "daily ceiling " + usd(v)
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
