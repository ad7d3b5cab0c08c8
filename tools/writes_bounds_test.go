package tools

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stacmcp/stac-mcp/reliability/idempotency"
	"github.com/stacmcp/stac-mcp/reliability/redistest"
)

// settableClock is a clock a test moves.
type settableClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *settableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *settableClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestRefusedWriteDoesNotHoldTheKey: a write the catalog refused (nothing
// applied) is a duplicate for an immediate repeat only; after
// idempotency.FailureTTL the same key and arguments are sent again (a key
// squatted with a failure would otherwise refuse the real write for 24 h).
func TestRefusedWriteDoesNotHoldTheKey(t *testing.T) {
	clock := &settableClock{now: time.Now()}
	s, err := idempotency.OpenSQLite(t.Context(), t.TempDir(), idempotency.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	wc := newWritableCatalog(t, nil)
	cs := writeSession(t, wc.URL, &Writes{Store: s}, nil)
	args := map[string]any{"collection_id": "survey", "item": itemArg(t, "existing", 1), "idempotency_key": "k-squat"}
	if first := callTool(t, cs, "create_item", args); !first.IsError {
		t.Fatal("create of an existing item succeeded")
	}
	if dup := structured[WriteOut](t, callTool(t, cs, "create_item", args)); !dup.Duplicate {
		t.Error("an immediate repeat is not a duplicate")
	}
	clock.add(idempotency.FailureTTL + time.Second)
	if again := structured[WriteOut](t, callTool(t, cs, "create_item", args)); again.Duplicate {
		t.Error("a refusal still answers for the key after FailureTTL")
	}
	if n := wc.count("POST /collections/survey/items"); n != 2 {
		t.Errorf("%d POSTs, want 2 (the first, and the one after the refusal expired)", n)
	}
}

// TestIdempotencyRecordGrowth measures what 3,000 create_item calls with
// fresh keys add to the SQLite and the Redis store:
//
//	STAC_MCP_MEASURE_RECORDS=1 go test -run TestIdempotencyRecordGrowth -v ./tools/
func TestIdempotencyRecordGrowth(t *testing.T) {
	if os.Getenv("STAC_MCP_MEASURE_RECORDS") == "" {
		t.Skip("a measurement: set STAC_MCP_MEASURE_RECORDS=1")
	}
	const calls = 3000
	run := func(t *testing.T, w *Writes) {
		wc := newWritableCatalog(t, nil)
		cs := writeSession(t, wc.URL, w, nil)
		for i := range calls {
			args := map[string]any{"collection_id": "survey", "item": itemArg(t, fmt.Sprintf("grow-%05d", i), 1),
				"idempotency_key": fmt.Sprintf("9b2f6c1e-4d3a-4e8b-8f21-%012d", i)}
			if i%2 == 1 { // half refused (409: the item exists)
				args["item"] = itemArg(t, "existing", 1)
			}
			callTool(t, cs, "create_item", args)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		w := sqliteWrites(t, dir)
		size := func() int64 {
			var n int64
			for _, f := range []string{"idempotency.db", "idempotency.db-wal"} {
				if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
					n += st.Size()
				}
			}
			return n
		}
		before := size()
		run(t, w)
		after := size()
		db, err := sql.Open("sqlite", filepath.Join(dir, "idempotency.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var records int
		var avgOutcome float64
		_ = db.QueryRow(`SELECT COUNT(*), AVG(LENGTH(outcome)) FROM idempotency`).Scan(&records, &avgOutcome)
		_, _ = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		st, _ := os.Stat(filepath.Join(dir, "idempotency.db"))
		t.Logf("SQLite: %d calls, %d records, outcome %.0f bytes on average: +%d bytes (db + wal), %.0f per call; database after a checkpoint %d bytes, %.0f per record",
			calls, records, avgOutcome, after-before, float64(after-before)/calls, st.Size(), float64(st.Size())/float64(records))
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		s, err := idempotency.OpenRedis(srv.URL, idempotency.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		client := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { client.Close() })
		used := func() int64 {
			info := client.Info(t.Context(), "memory").Val()
			for _, line := range strings.Split(info, "\r\n") {
				if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
					n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					return n
				}
			}
			return 0
		}
		before := used()
		run(t, &Writes{Store: s})
		after := used()
		t.Logf("Redis: %d calls: used_memory +%d bytes, %.0f bytes per call", calls, after-before, float64(after-before)/calls)
	})
}
