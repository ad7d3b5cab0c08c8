package reliability

import "context"

// bulkhead caps one host's requests in flight so that a slow catalog cannot
// take every connection and goroutine of the process. Waiting for a slot
// honours the caller's context, i.e. the tool deadline.
type bulkhead struct{ slots chan struct{} }

func newBulkhead(size int) *bulkhead { return &bulkhead{slots: make(chan struct{}, size)} }

func (b *bulkhead) acquire(ctx context.Context) error {
	select {
	case b.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case b.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *bulkhead) release() { <-b.slots }

func (b *bulkhead) inFlight() int { return len(b.slots) }
