package sizing

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// HeadParallelism bounds concurrent HEAD probes: enough to finish a page of
// items inside the tool deadline without hammering the asset host.
const HeadParallelism = 4

// HeadDeadlineShare is the part of the remaining tool time HEAD probes may
// use, so that the sizes found so far still make it into a result.
const HeadDeadlineShare = 0.8

// MaxHeadProbes bounds the HEAD requests of one call; assets beyond it are
// not sized.
const MaxHeadProbes = 100

// Outcome is how a HEAD probe ended.
type Outcome int

const (
	Sized             Outcome = iota // Bytes is the Content-Length
	NotProbed                        // the deadline came before the probe started
	StoppedAtDeadline                // the HEAD was cut by the deadline
	Failed                           // the HEAD failed (Err)
	NoLength                         // the answer had no Content-Length
	Panicked                         // the probe panicked (a bug; ProbeOptions.OnPanic was told)
)

// Probe is one asset to size by HEAD, and its outcome.
type Probe struct {
	Href string
	// Client sends it when set (the item's own catalog's, over several
	// catalogs); nil: ProbeAll's.
	Client  *stacclient.Client
	Bytes   int64
	Outcome Outcome
	Err     error // the HEAD's error, when Failed
}

// ProbeOptions are ProbeAll's hooks.
type ProbeOptions struct {
	// Done is called after each probe (for progress), on the probe's own
	// goroutine.
	Done func(ctx context.Context, p *Probe)
	// OnPanic is told the value a panicking probe recovered from; the
	// probe is Panicked and the others go on.
	OnPanic func(v any)
}

// ProbeAll sends HEAD requests (status-checked by Client.Head), at most
// HeadParallelism at once, inside HeadDeadlineShare of ctx's remaining
// time. A failed probe never counts: an error page's Content-Length is not
// the asset's size. One failed probe does not stop the others.
func ProbeAll(ctx context.Context, client *stacclient.Client, probes []*Probe, opts ProbeOptions) {
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Duration(float64(time.Until(deadline))*HeadDeadlineShare)))
		defer cancel()
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(HeadParallelism)
	for _, p := range probes {
		g.Go(func() error {
			defer func() {
				if v := recover(); v != nil {
					p.Bytes, p.Outcome = 0, Panicked
					if opts.OnPanic != nil {
						opts.OnPanic(v)
					}
				}
			}()
			if opts.Done != nil {
				defer opts.Done(ctx, p)
			}
			probe(ctx, client, p)
			return nil // one failed probe must not cancel the others
		})
	}
	_ = g.Wait()
}

// probe sends one HEAD and records its outcome.
func probe(ctx context.Context, client *stacclient.Client, p *Probe) {
	if ctx.Err() != nil {
		p.Outcome = NotProbed
		return
	}
	c := client
	if p.Client != nil {
		c = p.Client
	}
	n, err := c.Head(ctx, p.Href)
	switch {
	case err != nil && ctx.Err() != nil:
		p.Outcome = StoppedAtDeadline
	case err != nil:
		p.Outcome, p.Err = Failed, err
	case n < 0:
		p.Outcome = NoLength
	default:
		p.Bytes, p.Outcome = n, Sized
	}
}
