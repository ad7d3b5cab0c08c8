package faultinject

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: hangs end with their request
// context, servers and transports are closed in cleanups.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
