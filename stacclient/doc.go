// Package stacclient is a STAC API client: models that keep unknown fields,
// search parameters in pystac-client's forms, capability detection that
// tolerates every published spelling of the conformance URIs, and pagination
// that follows rel=next links exactly as the server gives them.
//
// The client does no retrying of its own. Retries, deadlines and budgets
// belong to the *http.Client passed in Options (the reliability package
// builds one), so every request the client makes is subject to one policy.
//
// Page size and total cap are different types on purpose: SearchParams.Limit
// is the per-page hint sent to the server, SearchLimits.MaxItems is the total
// number of items the iteration yields. Mixing them up is the most common
// STAC client bug (pystac-client#115, #187, #258).
package stacclient
