package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/sizing"
)

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

// probeSizes sizes probes by HEAD (sizing.ProbeAll: bounded in
// parallelism and time) and words each outcome.
func probeSizes(ctx context.Context, client *stacclient.Client, probes []*headProbe) {
	prog := progressFrom(ctx)
	log := zerolog.Ctx(ctx) // the server's logger (adapt puts it there)
	engine := make([]*sizing.Probe, len(probes))
	for i, p := range probes {
		engine[i] = &sizing.Probe{Href: p.href, Client: p.client}
	}
	sizing.ProbeAll(ctx, client, engine, sizing.ProbeOptions{
		Done: func(ctx context.Context, p *sizing.Probe) {
			prog.step(ctx, 0, "estimate_data_size: HEAD probe of %s done", trimText(p.Href, 80))
		},
		OnPanic: func(v any) { _ = logPanic(*log, "estimate_data_size: HEAD probe", v) },
	})
	for i, p := range probes {
		switch e := engine[i]; e.Outcome {
		case sizing.Sized:
			p.bytes = e.Bytes
		case sizing.NotProbed:
			p.reason, p.kind = "not probed: the tool deadline was reached", unsizedDeadline
		case sizing.StoppedAtDeadline:
			p.reason, p.kind = "HEAD stopped at the tool deadline", unsizedDeadline
		case sizing.Failed:
			p.reason, p.kind = "HEAD failed: "+headFailure(e.Err), unsizedHeadFailed
		case sizing.NoLength:
			p.reason, p.kind = "HEAD answered without a Content-Length", unsizedNoLength
		case sizing.Panicked: // this probe is not sized; the others went on
			p.bytes, p.reason = 0, "HEAD probe failed on an internal error (logged by the server)"
		}
	}
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
