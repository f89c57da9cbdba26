package consult

import "errors"

// ErrNotRegistered: no session activity registered the lane, so a consult
// from it belongs to no attempt (a session horizon did not start).
var ErrNotRegistered = errors.New("lane not registered for consults")

// ErrBadInput: the tool call's arguments are unusable; the message says
// what to send instead.
var ErrBadInput = errors.New("bad consult_advisor input")

// ErrSpend: the spend authority declined the consult (spend is at or near
// a ceiling); the message says which and how to raise it.
var ErrSpend = errors.New("consult declined on spend")

// ErrNoCaller: no session in the lane is running this call of the tool.
var ErrNoCaller = errors.New("no calling session")
