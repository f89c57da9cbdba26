package config

import "fmt"

// PortInUseError says an address horizon listens on (the engine's, the
// Web UI's, the dashboard's) is taken by something else.
type PortInUseError struct {
	What string
	Addr string
	Err  error
	// Setting is the variable that chooses this port (HORIZON_WEB_PORT);
	// "" names the engine's two.
	Setting string
}

func (e *PortInUseError) Error() string {
	setting := e.Setting
	if setting == "" {
		setting = "HORIZON_TEMPORAL_PORT, HORIZON_UI_PORT"
	}
	return fmt.Sprintf("%s address %s is in use (%v); stop what holds it or choose another port (%s)", e.What, e.Addr, e.Err, setting)
}

func (e *PortInUseError) Unwrap() error { return e.Err }

// UnreachableError says the engine did not answer at an address.
type UnreachableError struct {
	Address string
	Err     error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("engine at %s does not answer: %v", e.Address, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }
