package sharedstate

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// TestExportsAreSharedBoundedAndExpire: an export one replica stores is
// read whole by another (in chunks past 4 MiB), the quotas hold across
// replicas, and an expired export is gone and frees its quota.
func TestExportsAreSharedBoundedAndExpire(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			a, other := b.open(t), b.open(t)
			ctx := ctxT(t)
			data := bytes.Repeat([]byte("0123456789abcdef"), (6<<20+exportChunk/2)/16) // 6.5 chunks
			if err := a.PutExport(ctx, "e1", "token:a", []byte(`{"id":"e1"}`), data, time.Hour, 16<<20, 20<<20); err != nil {
				t.Fatal(err)
			}
			meta, got, err := other.GetExport(ctx, "e1")
			if err != nil || string(meta) != `{"id":"e1"}` || !bytes.Equal(got, data) {
				t.Fatalf("the other replica reads meta %q, %d bytes (want %d), %v", meta, len(got), len(data), err)
			}
			if meta, _, err := other.GetExport(ctx, "nope"); meta != nil || err != nil {
				t.Errorf("an unknown export: %q, %v", meta, err)
			}
			// The caller holds 6.5 MiB of 16: 12 more are over its quota.
			if err := other.PutExport(ctx, "e2", "token:a", []byte(`{}`), make([]byte, 12<<20), time.Hour, 16<<20, 64<<20); !errors.Is(err, ErrExportCallerQuota) {
				t.Errorf("over the caller's quota: %v", err)
			}
			// Everyone holds 6.5 MiB of 10: 5 more are over the total.
			if err := other.PutExport(ctx, "e3", "token:b", []byte(`{}`), make([]byte, 5<<20), time.Hour, 16<<20, 10<<20); !errors.Is(err, ErrExportTotalQuota) {
				t.Errorf("over the total quota: %v", err)
			}
			for _, id := range []string{"e2", "e3"} {
				if meta, _, _ := a.GetExport(ctx, id); meta != nil {
					t.Errorf("refused export %s is readable", id)
				}
			}
			if n, _ := a.client.Keys(ctx, a.exportKey("data", "e[23]:*")).Result(); len(n) != 0 {
				t.Errorf("refused exports left %v", n)
			}
			// A short-lived export expires, and its bytes no longer count.
			if err := a.PutExport(ctx, "e4", "token:b", []byte(`{}`), []byte("short"), 300*time.Millisecond, 16<<20, 10<<20); err != nil {
				t.Fatal(err)
			}
			if b.mini != nil {
				b.mini.FastForward(time.Second)
			} else {
				deadline := time.Now().Add(10 * time.Second)
				for time.Now().Before(deadline) {
					if meta, _, _ := a.GetExport(ctx, "e4"); meta == nil {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			if meta, _, _ := other.GetExport(ctx, "e4"); meta != nil {
				t.Error("an expired export is readable")
			}
		})
	}
}
