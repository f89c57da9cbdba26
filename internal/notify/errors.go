package notify

import "fmt"

// DeliveryError is a receiver that did not take an event after its attempts.
type DeliveryError struct {
	Receiver string
	EventID  string
	Kind     Kind
	Attempts int
	Err      error
}

func (e *DeliveryError) Error() string {
	return fmt.Sprintf("notify: %s did not take %s event %s after %d attempt(s): %v", e.Receiver, e.Kind, e.EventID, e.Attempts, e.Err)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// permanentError is an answer that retrying cannot change (a 4xx status
// other than timeouts and rate limits: a wrong URL or token).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }
