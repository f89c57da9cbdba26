package horizon

import "strconv"

// Plural counts a noun that takes a plain "s": "1 feature", "2 features",
// "0 attempts". Every message that counts things says it this way.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
