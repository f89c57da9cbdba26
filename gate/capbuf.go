package gate

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// capBuffer keeps the first headCap and the last tailCap bytes written to it
// and counts the rest, so a gate that prints gigabytes costs a fixed amount of
// memory. It is not safe for concurrent use.
type capBuffer struct {
	head    []byte
	headCap int
	tail    []byte // ring of tailCap bytes once full
	tailCap int
	tailPos int // next write position in tail once it is full
	total   int64
}

func newCapBuffer(limit int) *capBuffer {
	headCap := limit / 2
	return &capBuffer{headCap: headCap, tailCap: limit - headCap}
}

func (b *capBuffer) Write(p []byte) (int, error) {
	n := len(p)
	b.total += int64(n)
	if room := b.headCap - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || b.tailCap == 0 {
		return n, nil
	}
	if len(p) >= b.tailCap {
		if cap(b.tail) < b.tailCap {
			b.tail = make([]byte, b.tailCap)
		}
		b.tail = b.tail[:b.tailCap]
		copy(b.tail, p[len(p)-b.tailCap:])
		b.tailPos = 0
		return n, nil
	}
	if room := b.tailCap - len(b.tail); room > 0 {
		k := min(room, len(p))
		b.tail = append(b.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // ring is full: overwrite the oldest bytes
		k := copy(b.tail[b.tailPos:], p)
		p = p[k:]
		b.tailPos = (b.tailPos + k) % b.tailCap
	}
	return n, nil
}

// tailBytes returns the kept tail in order.
func (b *capBuffer) tailBytes() []byte {
	if b.tailPos == 0 {
		return b.tail
	}
	out := make([]byte, 0, len(b.tail))
	out = append(out, b.tail[b.tailPos:]...)
	return append(out, b.tail[:b.tailPos]...)
}

// String renders the kept output as valid UTF-8 of at most limit bytes plus
// the omission marker: the head, "\n…[N bytes omitted]…\n", then the tail.
// Invalid byte sequences become U+FFFD, and a rune cut by the head/tail
// boundary is counted as omitted rather than mangled.
func (b *capBuffer) String() string {
	tail := b.tailBytes()
	limit := b.headCap + b.tailCap
	complete := b.total == int64(len(b.head)+len(tail))
	if complete {
		all := append(append(make([]byte, 0, len(b.head)+len(tail)), b.head...), tail...)
		if s := strings.ToValidUTF8(string(all), "\uFFFD"); len(s) <= limit {
			return s
		}
		// Replacement characters made it longer than the cap: cut it like a
		// long output.
		front, used := validFront(all, b.headCap, true)
		back, usedBack := validBack(all[used:], limit-len(front), true)
		return front + omitted(int64(len(all)-used-usedBack)) + back
	}
	front, used := validFront(b.head, b.headCap, false)
	back, usedBack := validBack(tail, b.tailCap, false)
	return front + omitted(b.total-int64(used)-int64(usedBack)) + back
}

func omitted(n int64) string { return fmt.Sprintf("\n…[%d bytes omitted]…\n", n) }

// validFront renders a prefix of p as valid UTF-8 of at most budget bytes and
// reports how many bytes of p it consumed. When atEnd is false, p is followed
// by more data, so an incomplete rune at its end is left unconsumed.
func validFront(p []byte, budget int, atEnd bool) (string, int) {
	var sb strings.Builder
	i := 0
	prevBad := false
	for i < len(p) {
		if !atEnd && !utf8.FullRune(p[i:]) {
			break
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			if !prevBad {
				if sb.Len()+3 > budget {
					break
				}
				sb.WriteRune(utf8.RuneError)
			}
			prevBad = true
			i++
			continue
		}
		if sb.Len()+n > budget {
			break
		}
		sb.Write(p[i : i+n])
		prevBad = false
		i += n
	}
	return sb.String(), i
}

// validBack renders a suffix of p as valid UTF-8 of at most budget bytes and
// reports how many bytes of p it consumed. When atStart is false, p follows
// other data, so continuation bytes at its start (a rune cut in two) are left
// unconsumed.
func validBack(p []byte, budget int, atStart bool) (string, int) {
	var pieces [][]byte
	size := 0
	j := len(p)
	prevBad := false
	replacement := []byte(string(utf8.RuneError))
	for j > 0 {
		r, n := utf8.DecodeLastRune(p[:j])
		if r == utf8.RuneError && n <= 1 {
			if !atStart && leadingContinuation(p[:j]) {
				break
			}
			if !prevBad {
				if size+3 > budget {
					break
				}
				pieces = append(pieces, replacement)
				size += 3
			}
			prevBad = true
			j--
			continue
		}
		if size+n > budget {
			break
		}
		pieces = append(pieces, p[j-n:j])
		size += n
		prevBad = false
		j -= n
	}
	var sb strings.Builder
	sb.Grow(size)
	for k := len(pieces) - 1; k >= 0; k-- {
		sb.Write(pieces[k])
	}
	return sb.String(), len(p) - j
}

// leadingContinuation reports whether p is at most three UTF-8 continuation
// bytes: the end of a rune whose start was cut off.
func leadingContinuation(p []byte) bool {
	if len(p) == 0 || len(p) > 3 {
		return false
	}
	for _, c := range p {
		if c&0xC0 != 0x80 {
			return false
		}
	}
	return true
}
