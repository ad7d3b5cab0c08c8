// Package faultinject injects seeded, reproducible faults into HTTP traffic
// so tests and benchmarks can prove what the reliability layer claims.
//
// A Plan names a fault rate, a weighted mix of Kinds and a seed. Each
// upstream attempt is keyed by (tool, invocation, attempt) and the fault is
// a pure function of the seed and that key. A run is
// therefore identical whatever the goroutine interleaving, and every
// attempt is written to a Journal a test can read back exactly.
//
// Where the key comes from is a KeyFunc (WithKeyFunc). DefaultKeyFunc takes
// a key in the request context (the package's own tests set one),
// test-harness headers (X-Fault-Tool, X-Fault-Invocation) or the
// reliability layer's X-Correlation-ID, and the injector numbers the
// attempts of each (tool, invocation) in arrival order. Correlation ids
// are random per run, so a run keyed by them is reproducible only up to
// those ids; KeyByRequest keys by the request's content instead, which is
// reproducible when the calls under test send distinct requests.
//
// Kinds are grouped by Class (how a reliability layer must react) for
// mixes such as EqualMix(KindsOf(ClassRetryable)...). Kinds that only
// damage a body cannot harm a HEAD request.
//
// An Injector applies a Plan in two forms:
//
//   - RoundTripper, client side: no sockets, connection faults simulated
//     with the error values a real transport returns;
//   - Middleware, server side, for example around stacserver behind an
//     httptest.Server: real loopback sockets, real resets (TCP RST).
//
// Both forms support every Kind. The one approximation is
// ConnectionRefused on the server side, which can only close an accepted
// connection (the client sees EOF, not ECONNREFUSED); see Middleware.
//
// Latency is not a fault here: a benchmark that needs a latency model puts
// its own delaying handler around or inside Middleware. Outside, every
// answer including injected 5xx is slow ("slow 5xx"); inside, injected
// answers are immediate ("fast 5xx").
//
// Production code never imports this package; only tests, benchmarks and
// the demo switch of cmd/stac-mcp do. It depends on the standard library
// alone.
package faultinject
