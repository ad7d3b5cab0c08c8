// Package pcsign signs Microsoft Planetary Computer asset hrefs with the
// shared access signature (SAS) tokens of its Data Authentication API.
//
// Planetary Computer keeps asset files in Azure Blob Storage, which answers
// 403 (or 409 "PublicAccessNotPermitted") to an unsigned request. The API
// hands out one read-only token per STAC collection:
//
//	GET https://planetarycomputer.microsoft.com/api/sas/v1/token/{collection_id}
//	→ {"msft:expiry": "2026-11-21T08:00:00Z", "token": "st=…&se=…&sp=rl&sv=…&sr=c&skoid=…&sig=…"}
//
// and a href is signed by appending that token to its query. A Signer caches
// tokens per collection until shortly before they expire, coalesces
// concurrent fetches of the same token, and makes every request through the
// *http.Client it is given (in production the reliability layer's), so a
// token fetch is retried and timed like any other upstream request.
//
// Only hrefs on *.blob.core.windows.net are signed. Hrefs on other hosts and
// hrefs that already carry a signature (a sig parameter) are returned as
// they are, which makes signing idempotent.
package pcsign
