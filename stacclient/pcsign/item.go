package pcsign

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// alternateKey is the alternate-assets extension's member of an asset: other
// locations of the same file, each an object with its own href.
const alternateKey = "alternate"

// SignItem signs every asset href of item that NeedsSigning, and the hrefs
// of the assets' alternate locations, with the token of item.Collection. It
// returns how many hrefs it signed. The token is fetched only when some href
// needs it.
//
// Signing is all or nothing: on error (an *Error matching ErrSigningFailed)
// the item is unchanged. On success item.Assets is replaced by a new map, so
// an item that is a shallow copy of a cached one does not change the cache.
func (s *Signer) SignItem(ctx context.Context, item *stacclient.Item) (signed int, err error) {
	if item == nil {
		return 0, &Error{Reason: "no item to sign (nil)"}
	}
	plans := make(map[string]assetPlan, len(item.Assets))
	needed := 0
	for key, asset := range item.Assets {
		plan, err := planAsset(asset)
		if err != nil {
			return 0, &Error{Collection: item.Collection,
				Reason: fmt.Sprintf("item %q asset %q: %q is not an object of alternate locations with hrefs", item.ID, key, alternateKey),
				Err:    err}
		}
		if plan.count() > 0 {
			plans[key] = plan
			needed += plan.count()
		}
	}
	if needed == 0 {
		return 0, nil
	}
	if item.Collection == "" {
		return 0, &Error{Reason: fmt.Sprintf(`item %q has no "collection" member, and tokens are issued per collection`, item.ID)}
	}
	token, err := s.Token(ctx, item.Collection)
	if err != nil {
		return 0, err
	}
	assets := maps.Clone(item.Assets)
	for key, plan := range plans {
		asset, err := plan.apply(assets[key], token.Value)
		if err != nil {
			return 0, &Error{Collection: item.Collection, Reason: fmt.Sprintf("item %q asset %q: writing signed alternate hrefs", item.ID, key), Err: err}
		}
		assets[key] = asset
	}
	item.Assets = assets
	return needed, nil
}

// assetPlan is what must be signed in one asset.
type assetPlan struct {
	href       bool                                  // the asset's own href
	alternates map[string]map[string]json.RawMessage // decoded alternate member, when some of its hrefs need signing
	altNames   []string                              // the alternates whose href needs signing
}

func (p assetPlan) count() int {
	n := len(p.altNames)
	if p.href {
		n++
	}
	return n
}

// planAsset finds the hrefs of asset that need signing. An alternate member
// that is not an object of objects is an error rather than skipped, so no
// location is silently left unsigned; alternates without a string href are
// not locations and are left alone.
func planAsset(asset stacclient.Asset) (assetPlan, error) {
	plan := assetPlan{href: NeedsSigning(asset.Href)}
	raw, ok := asset.Extra[alternateKey]
	if !ok {
		return plan, nil
	}
	var alternates map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &alternates); err != nil {
		return plan, err
	}
	for name, alternate := range alternates {
		var href string
		if json.Unmarshal(alternate["href"], &href) == nil && NeedsSigning(href) {
			plan.altNames = append(plan.altNames, name)
		}
	}
	if len(plan.altNames) > 0 {
		plan.alternates = alternates
	}
	return plan, nil
}

// apply returns a copy of asset with the planned hrefs signed. The Extra
// map is copied before it is changed, since the caller's item may share it.
func (p assetPlan) apply(asset stacclient.Asset, token string) (stacclient.Asset, error) {
	if p.href {
		asset.Href = appendQuery(asset.Href, token)
	}
	if len(p.altNames) == 0 {
		return asset, nil
	}
	for _, name := range p.altNames {
		var href string
		if err := json.Unmarshal(p.alternates[name]["href"], &href); err != nil {
			return asset, err
		}
		signedHref, err := marshalVerbatim(appendQuery(href, token))
		if err != nil {
			return asset, err
		}
		p.alternates[name]["href"] = signedHref
	}
	encoded, err := marshalVerbatim(p.alternates)
	if err != nil {
		return asset, err
	}
	asset.Extra = maps.Clone(asset.Extra)
	asset.Extra[alternateKey] = encoded
	return asset, nil
}

// marshalVerbatim is json.Marshal without HTML escaping, so a signed href
// keeps its "&" rather than becoming "\u0026" in the item's JSON.
func marshalVerbatim(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
