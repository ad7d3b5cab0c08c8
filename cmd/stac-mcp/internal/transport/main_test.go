package transport

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for goroutine leaks.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
