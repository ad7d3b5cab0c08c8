package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
)

// GetServiceHealthIn optionally narrows the report to one catalog.
type GetServiceHealthIn struct {
	CatalogArg
}

// HostHealthOut is one catalog host's reliability state.
type HostHealthOut struct {
	Host             string  `json:"host"`
	Breaker          string  `json:"breaker" jsonschema:"closed (normal), half_open (probing after failures) or open (requests refused until breaker_open_until)"`
	BreakerOpenUntil string  `json:"breaker_open_until,omitempty" jsonschema:"RFC 3339 time the open breaker lets a probe through"`
	BudgetTokens     int     `json:"budget_tokens" jsonschema:"retries this host may still spend; at 0 failures are not retried"`
	BudgetCapacity   int     `json:"budget_capacity"`
	InFlight         int     `json:"in_flight" jsonschema:"requests to this host running now"`
	Retries5m        int     `json:"retries_5m" jsonschema:"retried attempts in the last 5 minutes"`
	GiveUps5m        int     `json:"give_ups_5m" jsonschema:"requests given up in the last 5 minutes (retries spent, breaker open, budget empty)"`
	Timeouts5m       int     `json:"timeouts_5m" jsonschema:"tool calls that hit the deadline in the last 5 minutes"`
	CacheLookups5m   int     `json:"cache_lookups_5m"`
	CacheHitRate     float64 `json:"cache_hit_rate" jsonschema:"fraction of cache lookups answered from the cache (0 without lookups)"`
	Status           string  `json:"status" jsonschema:"healthy, degraded or unavailable, from the numbers above"`
}

// GetServiceHealthOut is the reliability state of every catalog host.
type GetServiceHealthOut struct {
	Hosts        []HostHealthOut `json:"hosts"`
	OmittedHosts int             `json:"omitted_hosts" jsonschema:"hosts left out of hosts because the report lists at most 50 (least healthy first)"`
	Notes        []string        `json:"notes"`
}

// maxHealthHosts bounds the report, which goes into a model's context.
const maxHealthHosts = 50

// GetServiceHealth is the get_service_health tool.
func GetServiceHealth() Tool {
	return define(&mcp.Tool{
		Name:  "get_service_health",
		Title: "Catalog service health",
		Description: "Per catalog host, least healthy first: breaker, retry budget, retries, give-ups, timeouts, cache hits " +
			"(last 5 min); no upstream request. Use it when calls fail or are slow.\n" +
			`Example: {} or {"catalog_url":"earth-search"}`,
		Annotations: &mcp.ToolAnnotations{Title: "Catalog service health", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)},
	}, false, getServiceHealth)
}

func getServiceHealth(ctx context.Context, c *Call, in GetServiceHealthIn) (GetServiceHealthOut, string, error) {
	out := GetServiceHealthOut{Hosts: []HostHealthOut{}, Notes: []string{}}
	filter := ""
	if strings.TrimSpace(in.CatalogURL) != "" {
		filter = c.Catalog.Host
	}
	visible := func(string) bool { return true }
	if c.Deps.Shared && filter == "" {
		visible = c.Deps.operatorHostSet(ctx)
	}
	for _, h := range c.Deps.Layer.Health(ctx) {
		if (filter != "" && h.Host != filter) || !visible(h.Host) {
			continue
		}
		o := hostHealthOut(h)
		if label := c.Deps.Catalogs.InProcessLabel(h.Host); label != "" {
			o.Host = label // the demo, not 127.0.0.1:<port>
		}
		out.Hosts = append(out.Hosts, o)
	}
	slices.SortStableFunc(out.Hosts, func(a, b HostHealthOut) int { return statusRank[a.Status] - statusRank[b.Status] })
	if len(out.Hosts) > maxHealthHosts {
		out.OmittedHosts = len(out.Hosts) - maxHealthHosts
		out.Hosts = out.Hosts[:maxHealthHosts]
		out.Notes = append(out.Notes, fmt.Sprintf("%d more host(s) not shown: the report lists at most %d, least healthy first; "+
			"pass catalog_url to see one host", out.OmittedHosts, maxHealthHosts))
	}
	switch {
	case len(out.Hosts) == 0 && filter != "":
		out.Notes = append(out.Notes, fmt.Sprintf("no request has been made to %s yet, so there is nothing to report for it", filter))
	case len(out.Hosts) == 0:
		out.Notes = append(out.Notes, "no catalog has been contacted yet: call a catalog tool (e.g. get_root) first")
	}
	if c.Deps.Shared && filter == "" {
		out.Notes = append(out.Notes, "this server is shared: the report covers the configured catalogs; "+
			"pass catalog_url to see another catalog's host")
	}
	return out, serviceHealthText(out), nil
}

// statusRank orders the report least healthy first.
var statusRank = map[string]int{"unavailable": 0, "degraded": 1, "healthy": 2}

// operatorHostSet is what every caller of a shared server may see without
// naming a catalog: the hosts of the operator's catalogs (the default,
// STAC_MCP_CATALOGS, the presets: public knowledge). A catalog_url another
// caller named, and that anyone uses it, is not listed: a caller sees a host
// of its own only by naming it, which tells it nothing it did not know.
// The rule needs no memory of who used what, so it holds on any replica.
func (d *Deps) operatorHostSet(ctx context.Context) func(host string) bool {
	configured := map[string]bool{}
	for _, h := range d.Catalogs.OperatorHosts() {
		configured[h] = true
	}
	if def, err := d.Catalogs.Resolve(ctx, ""); err == nil {
		configured[def.Host] = true // the demo or a local default: its loopback host
	}
	return func(host string) bool { return configured[host] }
}

func hostHealthOut(h reliability.HostHealth) HostHealthOut {
	o := HostHealthOut{Host: h.Host, Breaker: h.Breaker, BudgetTokens: h.BudgetTokens, BudgetCapacity: h.BudgetCapacity,
		InFlight: h.InFlight, Retries5m: h.Retries5m, GiveUps5m: h.GiveUps5m, Timeouts5m: h.Timeouts5m,
		CacheLookups5m: h.CacheLookups5m, CacheHitRate: h.CacheHitRate}
	if !h.BreakerOpenUntil.IsZero() {
		o.BreakerOpenUntil = h.BreakerOpenUntil.UTC().Format(time.RFC3339)
	}
	switch {
	case h.Breaker == reliability.BreakerOpen:
		o.Status = "unavailable"
	case h.Breaker != reliability.BreakerClosed || h.GiveUps5m > 0 || h.Timeouts5m > 0 || h.BudgetTokens < h.BudgetCapacity/2:
		o.Status = "degraded"
	default:
		o.Status = "healthy"
	}
	return o
}

func serviceHealthText(out GetServiceHealthOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d catalog host(s).\n", len(out.Hosts))
	for _, h := range out.Hosts {
		fmt.Fprintf(&b, "- %s: %s; breaker %s", h.Host, h.Status, h.Breaker)
		if h.BreakerOpenUntil != "" {
			fmt.Fprintf(&b, " until %s", h.BreakerOpenUntil)
		}
		fmt.Fprintf(&b, "; retry budget %d/%d; last 5 min: %d retries, %d give-ups, %d timeouts",
			h.BudgetTokens, h.BudgetCapacity, h.Retries5m, h.GiveUps5m, h.Timeouts5m)
		if h.CacheLookups5m > 0 {
			fmt.Fprintf(&b, ", cache hit rate %.0f%% of %d lookups", h.CacheHitRate*100, h.CacheLookups5m)
		} else {
			b.WriteString(", no cache lookups")
		}
		if h.InFlight > 0 {
			fmt.Fprintf(&b, "; %d in flight", h.InFlight)
		}
		b.WriteString("\n")
	}
	writeLines(&b, "Note: ", out.Notes)
	return strings.TrimRight(b.String(), "\n")
}
