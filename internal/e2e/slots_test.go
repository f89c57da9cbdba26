package e2e

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A heavy test waits until every slot is free, light tests arriving after
// it wait behind it, and each test gets its slots in arrival order.
func TestSlotsHeavyRunsAloneInArrivalOrder(t *testing.T) {
	s := newSlots(3)
	s.acquire(1)
	s.acquire(1) // two light tests run

	var mu sync.Mutex
	var order []string
	got := func(name string) {
		mu.Lock()
		order = append(order, name)
		mu.Unlock()
	}
	heavy := make(chan struct{})
	go func() { s.acquire(3); got("heavy"); close(heavy) }()
	require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.queue) == 1 }, time.Second, time.Millisecond)
	light := make(chan struct{})
	go func() { s.acquire(1); got("light"); close(light) }()
	require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.queue) == 2 }, time.Second, time.Millisecond)

	// One slot is free, but the light test came after the heavy one.
	s.release(1)
	select {
	case <-light:
		t.Fatal("a light test passed the heavy one waiting before it")
	case <-heavy:
		t.Fatal("the heavy test started beside a light one")
	case <-time.After(50 * time.Millisecond):
	}
	s.release(1)
	<-heavy
	s.release(3)
	<-light
	require.Equal(t, []string{"heavy", "light"}, order)
	s.release(1)
	require.Equal(t, 3, s.free)
	require.Empty(t, s.queue)
}
