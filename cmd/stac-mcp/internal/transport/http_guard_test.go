package transport

import "testing"

// TestIsLoopbackHost: the hosts that only this machine reaches, which the
// Host check and the exposure rule (package main) rely on.
func TestIsLoopbackHost(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"127.0.0.1", "::1", "localhost", "127.0.0.2"} {
		if !IsLoopbackHost(host) {
			t.Errorf("%s should count as loopback", host)
		}
	}
	for _, host := range []string{"", "0.0.0.0", "::", "10.0.0.1", "example.com"} {
		if IsLoopbackHost(host) {
			t.Errorf("%q should not count as loopback", host)
		}
	}
}
