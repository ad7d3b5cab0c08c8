package tools

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
)

// headParallelism bounds concurrent HEAD probes: enough to finish a page of
// items inside the tool deadline without hammering the asset host.
const headParallelism = 4

// headDeadlineShare is the part of the remaining tool time HEAD probes may use.
const headDeadlineShare = 0.8

// maxHeadProbes bounds the HEAD requests of one call; assets beyond it are
// reported as not sized.
const maxHeadProbes = 100

// headProbe is one asset to size by HEAD, and its outcome.
type headProbe struct {
	href   string
	bytes  int64
	reason string // why it could not be sized; empty on success
	kind   string // the reason in a few words (unsized* constants)
	// client sends it when set (the item's own catalog's, over several
	// catalogs); nil: the call's.
	client *stacclient.Client
}

// offlineAssets reports whether a catalog's assets on other hosts must not
// be probed. The embedded demo catalog exists to be tried without a network
// (stacserver/demo), but its items keep their real s3:// and https:// hrefs:
// probing them would reach the internet, and fail slowly where there is none.
// Local static catalogs are the operator's own data, probed like any other.
func offlineAssets(cat *Catalog) bool { return cat.Name == DemoCatalog }

// probeSizes sends HEAD requests (status-checked by Client.Head) with
// bounded parallelism, inside ctx's deadline. A failed probe never counts:
// an error page's Content-Length is not the asset's size.
func probeSizes(ctx context.Context, client *stacclient.Client, probes []*headProbe) {
	if deadline, ok := ctx.Deadline(); ok {
		// Stop probing early enough that the sizes found so far still make
		// it into a result before the tool deadline.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Duration(float64(time.Until(deadline))*headDeadlineShare)))
		defer cancel()
	}
	prog := progressFrom(ctx)
	log := zerolog.Ctx(ctx) // the server's logger (adapt puts it there)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(headParallelism)
	for _, p := range probes {
		g.Go(func() error {
			var panicked error
			defer func() {
				if panicked != nil { // this probe is not sized; the others go on
					p.bytes, p.reason = 0, "HEAD probe failed on an internal error (logged by the server)"
				}
			}()
			defer recoverAs(*log, "estimate_data_size: HEAD probe", &panicked)
			defer prog.step(ctx, 0, "estimate_data_size: HEAD probe of %s done", trimText(p.href, 80))
			if err := ctx.Err(); err != nil {
				p.reason, p.kind = "not probed: the tool deadline was reached", unsizedDeadline
				return nil
			}
			c := client
			if p.client != nil {
				c = p.client
			}
			n, err := c.Head(ctx, p.href)
			switch {
			case err != nil && ctx.Err() != nil:
				p.reason, p.kind = "HEAD stopped at the tool deadline", unsizedDeadline
			case err != nil:
				p.reason, p.kind = "HEAD failed: "+headFailure(err), unsizedHeadFailed
			case n < 0:
				p.reason, p.kind = "HEAD answered without a Content-Length", unsizedNoLength
			default:
				p.bytes = n
			}
			return nil // one failed probe must not cancel the others
		})
	}
	_ = g.Wait()
}

// headFailure words a HEAD error briefly: the host's give-up in one clause
// (the denial's full advice is about a whole call, not one asset).
func headFailure(err error) string {
	var d *reliability.Denial
	if errors.As(err, &d) {
		what := fmt.Sprintf("no HTTP answer from %s", d.Host)
		if d.LastStatus != 0 {
			what = fmt.Sprintf("%s answered status %d", d.Host, d.LastStatus)
		} else if d.ErrorClass != "" {
			what += " (" + strings.ReplaceAll(d.ErrorClass, "_", " ") + ")"
		}
		return fmt.Sprintf("%s; given up after %d attempt(s) (%s)", what, d.Attempts, d.Code)
	}
	var se *stacclient.Error
	if errors.As(err, &se) {
		if se.Status != 0 {
			return fmt.Sprintf("status %d", se.Status)
		}
		if se.Err != nil {
			return fmt.Sprintf("%s (%v)", se.Kind, se.Err)
		}
		return string(se.Kind)
	}
	return err.Error()
}

// headable reports whether an href can be probed over HTTP.
func headable(href string) bool {
	u, err := url.Parse(href)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
