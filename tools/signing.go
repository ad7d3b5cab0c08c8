package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/pcsign"
)

// Planetary Computer asset signing for search_items and get_item (ADR
// 0005): with sign_assets=true, asset hrefs on Azure Blob Storage get the
// collection's SAS token from one process-wide pcsign.Signer whose token
// requests go through the reliability layer.

// signingOptions configure asset signing for one Deps. The zero value is
// production: the real token endpoint and pcsign.IsPlanetaryComputer; the
// tests point them at fakes (configureSigning).
type signingOptions struct {
	// TokenURL is the SAS token endpoint ("" = pcsign.DefaultTokenURL).
	TokenURL string
	// SubscriptionKey is an optional Planetary Computer API key for longer
	// tokens (sent to the token endpoint only).
	SubscriptionKey string
	// IsPlanetaryComputer decides which catalogs sign_assets is offered
	// for (nil = pcsign.IsPlanetaryComputer). Tests pass a function that
	// accepts their loopback catalog, which the real check cannot.
	IsPlanetaryComputer func(catalogURL string) bool
}

// signingState is the lazily built Signer of one Deps: one Signer (one
// token cache) per process in production, where there is one Deps.
type signingState struct {
	opts signingOptions

	once   sync.Once
	signer *pcsign.Signer
	err    error
}

// isPlanetaryComputer reports whether cat is Planetary Computer.
func (s *signingState) isPlanetaryComputer(cat *Catalog) bool {
	if s.opts.IsPlanetaryComputer != nil {
		return s.opts.IsPlanetaryComputer(cat.URL)
	}
	return pcsign.IsPlanetaryComputer(cat.URL)
}

// signerFor builds the Signer on first use, with the reliability layer's
// client so token fetches are retried, timed and counted like any request.
func (s *signingState) signerFor(d *Deps) (*pcsign.Signer, error) {
	s.once.Do(func() {
		s.signer, s.err = pcsign.New(pcsign.Options{HTTPClient: d.Layer.HTTPClient(), TokenURL: s.opts.TokenURL,
			SubscriptionKey: s.opts.SubscriptionKey})
	})
	return s.signer, s.err
}

// assetSigning is one call's signing: whether it was asked for and is
// possible, and what happened, for the output's warnings and notes.
type assetSigning struct {
	requested bool
	pc        bool
	signer    *pcsign.Signer

	signed      int             // hrefs signed
	unsigned    int             // items whose assets stayed unsigned after a failure
	failed      map[string]bool // collections whose token could not be had this call
	firstErr    error
	needSigning bool // some returned href needs signing and was not signed
}

// newAssetSigning checks sign_assets against the catalog: refused, with
// the reason, anywhere but Planetary Computer.
func newAssetSigning(c *Call, requested bool) (*assetSigning, error) {
	st := &c.Deps.signing
	a := &assetSigning{requested: requested, pc: st.isPlanetaryComputer(c.Catalog), failed: map[string]bool{}}
	if !requested {
		return a, nil
	}
	if !a.pc {
		return nil, &stacclient.ParamError{Param: "sign_assets", Got: "true",
			Reason: fmt.Sprintf("asset signing exists only for Microsoft Planetary Computer, and catalog %s is not it: "+
				"its hrefs are returned as the catalog gives them (use them as they are, or with that catalog's own credentials)", c.Catalog.Shown()),
			Accepted: `false or omitted for this catalog; sign_assets=true with catalog_url "planetary-computer"`}
	}
	signer, err := st.signerFor(c.Deps)
	if err != nil {
		return nil, fmt.Errorf("setting up Planetary Computer signing: %w", err)
	}
	a.signer = signer
	return a, nil
}

// sign signs item's assets when asked for; a failure leaves the item
// unsigned and is reported once in warnings. Without the flag it only
// notes whether the hrefs need signing.
func (a *assetSigning) sign(ctx context.Context, item *stacclient.Item) {
	if !a.pc {
		return
	}
	if !a.requested || a.failed[item.Collection] {
		if itemNeedsSigning(item) {
			a.needSigning = true
			if a.requested {
				a.unsigned++
			}
		}
		return
	}
	n, err := a.signer.SignItem(ctx, item)
	if err != nil {
		a.failed[item.Collection] = true // one failed token fetch per collection and call, not one per item
		a.unsigned++
		a.needSigning = true
		if a.firstErr == nil {
			a.firstErr = err
		}
		return
	}
	a.signed += n
}

func itemNeedsSigning(item *stacclient.Item) bool {
	for _, asset := range item.Assets {
		if pcsign.NeedsSigning(asset.Href) {
			return true
		}
	}
	return false
}

// warnings say which assets stayed unsigned and why.
func (a *assetSigning) warnings() []string {
	if a.firstErr == nil {
		return nil
	}
	why := a.firstErr.Error()
	if errors.Is(a.firstErr, context.DeadlineExceeded) || errors.Is(a.firstErr, context.Canceled) {
		why += " (the call ran out of time)"
	}
	return []string{fmt.Sprintf("assets of %d item(s) are unsigned, so their hrefs will answer 403/409 until signed: %s. "+
		"Call again with sign_assets=true to retry.", a.unsigned, strings.TrimSpace(why))}
}

// notes say that returned hrefs need signing, and how many were signed.
func (a *assetSigning) notes() []string {
	var notes []string
	if a.signed > 0 {
		notes = append(notes, fmt.Sprintf("%d asset href(s) carry a Planetary Computer SAS token: they expire (about an hour) and are credentials, do not publish them", a.signed))
	}
	if !a.requested && a.needSigning {
		notes = append(notes, "these Planetary Computer asset hrefs need a SAS token to download: call again with sign_assets=true to get signed hrefs")
	}
	return notes
}
