package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// maxBeatInterval bounds the time between heartbeats of a long activity; the
// SDK throttles what actually reaches the server.
const maxBeatInterval = 5 * time.Second

// HeartbeatThrottle is the most a worker may hold back a heartbeat before
// sending it (worker.Options.MaxHeartbeatThrottleInterval). The SDK's own
// default holds one back for up to 80% of the heartbeat timeout, so a
// session's "OpenCode is retrying the provider" would reach `horizon
// status` only 15-25 s late; an outage must show within seconds.
const HeartbeatThrottle = 2 * time.Second

// heartbeat keeps a running activity's heartbeat alive and carries its
// details. Every long activity uses it: quiet ones (git, plan files, the
// handoff) through keepAlive, the gate with a fixed detail, and the agent
// session with its session ID, heartbeated as soon as it exists so that a
// crashed daemon's retry continues the same session.
//
// A daemon that dies while the activity runs stops the heartbeat, so the
// engine retries the activity once the heartbeat timeout passes, not after
// the whole start-to-close timeout.
type heartbeat struct {
	ctx context.Context

	mu      sync.Mutex
	details any  // recorded with every beat; nil beats bare
	needed  bool // beat only once details are set

	nudge chan struct{}
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// beatOptions shape a heartbeat.
type beatOptions struct {
	// Details are recorded with every beat until Update or Record replaces
	// them (a retried session starts with its predecessor's).
	Details any
	// OnlyWithDetails: no bare beats before details exist. A session has
	// nothing worth keeping alive for until OpenCode named its session.
	OnlyWithDetails bool
}

// startHeartbeat beats every third of the activity's heartbeat timeout (at
// most every 5 s) until Stop, and at once when Update changes the details.
// Outside an activity it records nothing.
func startHeartbeat(ctx context.Context, o beatOptions) *heartbeat {
	h := &heartbeat{ctx: ctx, details: o.Details, needed: o.OnlyWithDetails,
		nudge: make(chan struct{}, 1), done: make(chan struct{})}
	if !activity.IsActivity(ctx) {
		return h
	}
	// Without a heartbeat timeout nothing needs keeping alive, but details
	// still go out as they change.
	every := min(activity.GetInfo(ctx).HeartbeatTimeout/3, maxBeatInterval)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		var tick <-chan time.Time
		if every > 0 {
			t := time.NewTicker(every)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-h.done:
				return
			case <-ctx.Done():
				return
			case <-h.nudge:
				h.beat()
			case <-tick:
				h.beat()
			}
		}
	}()
	return h
}

// keepAlive heartbeats, without details, an activity that has no progress
// to report, until stop is called.
func keepAlive(ctx context.Context) (stop func()) {
	return startHeartbeat(ctx, beatOptions{}).Stop
}

func (h *heartbeat) beat() {
	h.mu.Lock()
	d, needed := h.details, h.needed
	h.mu.Unlock()
	switch {
	case d != nil:
		activity.RecordHeartbeat(h.ctx, d)
	case !needed:
		activity.RecordHeartbeat(h.ctx)
	}
}

// Update replaces the details and has them recorded promptly, without
// blocking the caller (a session's progress callback must never wait).
func (h *heartbeat) Update(details any) {
	h.mu.Lock()
	h.details = details
	h.mu.Unlock()
	select {
	case h.nudge <- struct{}{}:
	default: // a beat is already due; it will carry these details
	}
}

// Record replaces the details and records them before it returns: what a
// crash from here on must find (a finished session's ID) is not left to
// the next tick.
func (h *heartbeat) Record(details any) {
	h.mu.Lock()
	h.details = details
	h.mu.Unlock()
	if activity.IsActivity(h.ctx) {
		activity.RecordHeartbeat(h.ctx, details)
	}
}

// Stop ends the beats and waits for the beating goroutine. It may be
// called more than once.
func (h *heartbeat) Stop() {
	h.once.Do(func() { close(h.done) })
	h.wg.Wait()
}
