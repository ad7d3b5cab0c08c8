package reliability

import (
	"math/rand/v2"
	"sync"
	"time"
)

// fullJitter is the wait before retry n (n = 1 for the first retry):
// uniform in [0, base·2^(n-1)), the "full jitter" of the AWS architecture
// blog, so that clients that failed together do not retry together.
func fullJitter(r *lockedRand, base time.Duration, n int) time.Duration {
	if base <= 0 || n < 1 {
		return 0
	}
	ceiling := base << min(n-1, 20)
	return time.Duration(r.Float64() * float64(ceiling))
}

// lockedRand is a seeded source shared by all calls of a Layer.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newLockedRand(r *rand.Rand) *lockedRand {
	if r == nil {
		r = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return &lockedRand{r: r}
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

func (l *lockedRand) Uint64() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Uint64()
}
