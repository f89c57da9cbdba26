// Package calc is the code under test; this variant (two) is copied over the
// project by TestLiveEcosystems.
package calc

func Add(a, b int) int { return a - b }

func Mul(a, b int) int { return a + b }

func Sub(a, b int) int { return a - b }
