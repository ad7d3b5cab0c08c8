//go:build race

package main

// raceBuild: the tests run under the race detector, so binary() builds
// with it too (sharing the compiled packages).
const raceBuild = true
