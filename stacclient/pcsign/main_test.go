package pcsign

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a token
// fetch that outlives its call, a flight nobody waits for, an idle
// connection of a fake endpoint.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
