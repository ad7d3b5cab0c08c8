package faultinject

import (
	"context"
	"time"
)

// sleep waits for d or until ctx ends, whichever comes first, and reports
// ctx's error in the second case. It never leaves a timer or goroutine
// behind.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
