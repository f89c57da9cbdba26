package horizon

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Untrusted text (model output, goals, roadmap items, file names, run IDs)
// reaches a person's terminal and Markdown; a control sequence in it could
// set the window title (OSC 0), write the clipboard (OSC 52), recolour or
// hide text (SGR), or reorder what is read (bidi overrides). Safe keeps
// printable text, newlines and tabs, and shows every other control
// character visibly instead of passing it on: C0 and ESC as \x1b, DEL, C1
// and the bidi and invisible formatting marks as \u009b, \u202e. The rest
// of a sequence ("]0;title") is then plain, harmless text.
//
// The \u forms are also valid escapes inside a JSON string, so a JSON
// document passed through Safe still parses to the same values.
func Safe(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			writeSafeRune(&b, r)
		}
		i += n
	}
	return b.String()
}

func writeSafeRune(b *strings.Builder, r rune) {
	switch {
	case r == '\n' || r == '\t':
		b.WriteRune(r)
	case r < 0x20:
		fmt.Fprintf(b, `\x%02x`, r)
	case unsafeRune(r):
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		b.WriteRune(r)
	}
}

// unsafeRune is DEL, C1, or a Unicode mark that changes how the text
// around it reads without being seen.
func unsafeRune(r rune) bool {
	switch {
	case r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true // bidi embeddings, overrides, isolates and marks
	case r == 0x200b, r == 0x2028, r == 0x2029, r == 0xfeff:
		return true // zero width space, line and paragraph separators, BOM
	}
	return false
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) {
			return true
		}
		i += n
	}
	return false
}

// SafeWriter passes everything written to it through Safe. A rune split
// across two writes is held until it is whole.
type SafeWriter struct {
	w    io.Writer
	tail []byte
}

// NewSafeWriter wraps w.
func NewSafeWriter(w io.Writer) *SafeWriter { return &SafeWriter{w: w} }

func (s *SafeWriter) Write(p []byte) (int, error) {
	buf := append(s.tail, p...)
	cut := len(buf)
	// Hold back an incomplete UTF-8 sequence at the end (at most 3 bytes).
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-3; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	s.tail = append([]byte(nil), buf[cut:]...)
	if _, err := io.WriteString(s.w, Safe(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held incomplete rune, shown as its bytes.
func (s *SafeWriter) Flush() error {
	if len(s.tail) == 0 {
		return nil
	}
	t := s.tail
	s.tail = nil
	_, err := io.WriteString(s.w, Safe(string(t)))
	return err
}
