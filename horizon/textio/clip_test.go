package textio

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestHead(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"héllo", 2, "h…"}, // é is two bytes: the cut backs off to a whole rune
		{"abc", 0, "…"},
		{"abc", -1, "…"},
	}
	for _, tt := range tests {
		got := Head(tt.s, tt.n)
		require.Equal(t, tt.want, got, "Head(%q, %d)", tt.s, tt.n)
		require.True(t, utf8.ValidString(got))
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		s       string
		n       int
		want    string
		dropped int
	}{
		{"short", 10, "short", 0},
		{"abcdef", 3, "def", 3},
		{"abcé", 1, "", 5},  // the last byte is half of é: nothing whole fits
		{"abcé", 2, "é", 3}, // é whole
		{"abc", 0, "", 3},
	}
	for _, tt := range tests {
		got, dropped := Tail(tt.s, tt.n)
		require.Equal(t, tt.want, got, "Tail(%q, %d)", tt.s, tt.n)
		require.Equal(t, tt.dropped, dropped, "Tail(%q, %d)", tt.s, tt.n)
		require.Equal(t, tt.s, tt.s[:dropped]+got)
	}
}

func TestRunes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 4, "abc…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
	}
	for _, tt := range tests {
		got := Runes(tt.s, tt.n)
		require.Equal(t, tt.want, got, "Runes(%q, %d)", tt.s, tt.n)
		require.LessOrEqual(t, utf8.RuneCountInString(got), max(tt.n, 0))
	}
}
