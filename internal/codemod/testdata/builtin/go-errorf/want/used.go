package sample

import (
	"errors"
	"fmt"
)

var ErrClosed = errors.New("closed")

func check(n int, err error) error {
	if n < 0 {
		return fmt.Errorf("negative: %d", n)
	}
	if n == 0 {
		// %w wraps with Errorf but prints %!w with Sprintf: left alone.
		return errors.New(fmt.Sprintf("zero: %w", err))
	}
	if n > 100 {
		return fmt.Errorf("outer %d: %v", n, fmt.Errorf("inner %d", n))
	}
	return fmt.Errorf("plain")
}
