package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// keepAlive heartbeats the running activity every third of its heartbeat
// timeout until stop is called. Activities with no progress to report
// (git, plan files, the handoff) use it, so that when the daemon dies
// while one runs the engine retries it (they are idempotent) once the
// heartbeat timeout passes, not after the whole start-to-close timeout.
// Outside an activity, or without a heartbeat timeout, it does nothing.
func keepAlive(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
