package sample

import (
	"errors"
	"fmt"
)

// The only use of package errors: rewriting it would leave the import
// unused and the file would not compile, so the rule leaves it alone.
func only(n int) error {
	return errors.New(fmt.Sprintf("n=%d", n))
}
