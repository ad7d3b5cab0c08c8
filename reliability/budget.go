package reliability

import "sync"

// Retry budget constants, as in the AWS SDK "standard" retry mode: a host
// starts with 500 tokens, a retry costs 5 (10 after a timeout, because a
// timeout held a connection and a slot for the whole attempt), and a request
// that succeeds returns what its last retry cost plus 1. At a steady 20 %
// per-attempt fault rate a call nets about +0.75 tokens, so the budget only
// drains when failures are sustained above roughly a third of attempts.
const (
	budgetCapacity     = 500
	budgetRetryCost    = 5
	budgetTimeoutCost  = 10
	budgetSuccessBonus = 1
	// budgetHedgeCost is what a copy sent beside a slow read costs (refunded
	// when the copy wins, like a retry that succeeds), less than a retry
	// because a copy follows slowness, not a failure, and usually replaces
	// an attempt that is given up (adr/0029). Priced like a retry (5), the
	// copies that lose beside slow-but-fine reads drained the budget at
	// ASR 1008's 20 % hung attempts within about 6,000 reads, after which
	// hung reads went uncopied and waited for the deadline (1.0–1.5 % of
	// reads failed instead of the 0.8 % whose three attempts all hang). At
	// 3 the budget holds at 20 % and still drains above about a third of
	// attempts hung, the retry budget's own threshold.
	budgetHedgeCost = 3
)

// hostBudget is a host's retry budget as the layer uses it: this
// process's own (retryBudget) or the one replicas share (sharedBudget).
type hostBudget interface {
	// take spends cost tokens for a retry; false means the budget is spent
	// and the retry must not happen.
	take(cost int) bool
	// succeeded refunds the cost of the retry that succeeded (0 when the
	// first attempt did) and adds the success bonus, never above capacity.
	succeeded(lastRetryCost int)
	// available is the tokens left.
	available() int
}

// retryBudget is one host's token bucket in this process, shared by all
// sessions.
type retryBudget struct {
	mu     sync.Mutex
	tokens int
	// onChange sees the new token count after every change, under the lock
	// so that concurrent changes are published in order (the gauge).
	onChange func(tokens int)
}

// newRetryBudget starts a full budget; onChange may be nil.
func newRetryBudget(onChange func(tokens int)) *retryBudget {
	return &retryBudget{tokens: budgetCapacity, onChange: onChange}
}

func (b *retryBudget) take(cost int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens < cost {
		return false
	}
	b.tokens -= cost
	b.changed()
	return true
}

func (b *retryBudget) succeeded(lastRetryCost int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = min(budgetCapacity, b.tokens+lastRetryCost+budgetSuccessBonus)
	b.changed()
}

// changed publishes the token count; the caller holds b.mu.
func (b *retryBudget) changed() {
	if b.onChange != nil {
		b.onChange(b.tokens)
	}
}

func (b *retryBudget) available() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens
}
