// Package bench holds the benchmarks that measure what the MCP layer costs
// (go test -bench . ./bench/): tool-call overhead over a direct HTTP
// request, the size of search_items' default output against full STAC
// Items (context economy), and process cold start to a tools/list answer.
// Targets (< 1 ms added, <= 15 %, < 50 ms) are reported with
// b.ReportMetric, never asserted: timing belongs in benchmarks, not tests.
package bench
