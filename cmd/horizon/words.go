package main

import (
	"fmt"
	"math"
	"strconv"
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

// dayCeiling shows the daily ceiling; 0 is none.
func dayCeiling(v float64) string {
	if v == 0 {
		return "no daily ceiling"
	}
	return "daily ceiling " + usd(v)
}
