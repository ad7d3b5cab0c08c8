package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Entry describes one export held for an HTTP caller.
type Entry struct {
	ID        string    `json:"id"`
	Caller    string    `json:"caller"`
	Name      string    `json:"name"`
	MediaType string    `json:"media_type"`
	Bytes     int64     `json:"bytes"`
	SHA256    string    `json:"sha256"`
	Expires   time.Time `json:"expires"`
}

// Quota errors: the caller's exports, or everyone's, hold their bytes.
var (
	ErrCallerQuota = errors.New("the caller's exports already hold their byte quota")
	ErrTotalQuota  = errors.New("the server's exports already hold their byte quota")
	// ErrNotFound: no such export, it expired, or another caller made it.
	ErrNotFound = errors.New("no such export")
)

// Backend stores exports' bytes: on this replica's disk (Local) or where
// the replicas share state (Redis).
type Backend interface {
	// Put stores data under e.ID until e.Expires, unless the caller's
	// live exports and data would exceed callerQuota or everyone's
	// totalQuota (ErrCallerQuota, ErrTotalQuota), atomically.
	Put(ctx context.Context, e Entry, data []byte, callerQuota, totalQuota int64) error
	// Get returns a live export.
	Get(ctx context.Context, id string) (Entry, []byte, error)
}

// Vault holds HTTP callers' exports for a while.
type Vault struct {
	TTL                     time.Duration
	CallerBytes, TotalBytes int64
	Backend                 Backend
	now                     func() time.Time
}

// NewVault keeps exports for ttl within the quotas.
func NewVault(b Backend, ttl time.Duration, callerBytes, totalBytes int64) *Vault {
	return &Vault{TTL: ttl, CallerBytes: callerBytes, TotalBytes: totalBytes, Backend: b, now: time.Now}
}

// Put builds an export in memory through a Sink bounded at limit, then
// stores it for caller; nothing is stored when write fails.
func (v *Vault) Put(ctx context.Context, caller, name, mediaType string, limit int64, write func(io.Writer) error) (Entry, error) {
	var buf bytes.Buffer
	sink := NewSink(&buf, limit)
	if err := write(sink); err != nil {
		return Entry{}, err
	}
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	e := Entry{ID: randomHex(16), Caller: caller, Name: name, MediaType: mediaType, Bytes: sink.Bytes(), SHA256: sink.SHA256(),
		Expires: v.now().Add(v.TTL).UTC().Truncate(time.Millisecond)}
	if err := v.Backend.Put(ctx, e, buf.Bytes(), v.CallerBytes, v.TotalBytes); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Get returns caller's export id; another caller's is ErrNotFound, as is
// an expired one.
func (v *Vault) Get(ctx context.Context, caller, id string) (Entry, []byte, error) {
	e, data, err := v.Backend.Get(ctx, id)
	if err != nil {
		return Entry{}, nil, err
	}
	if e.Caller != caller || !v.now().Before(e.Expires) {
		return Entry{}, nil, ErrNotFound
	}
	return e, data, nil
}

// Local keeps exports as files in a private folder of this replica,
// deleted when they expire.
type Local struct {
	mu      sync.Mutex
	dir     string
	root    *os.Root
	entries map[string]Entry
	timers  map[string]*time.Timer
	now     func() time.Time
}

// NewLocal keeps exports in dir, or in a new private temporary folder
// when dir is "".
func NewLocal(dir string) (*Local, error) {
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "stac-mcp-exports-")
	} else {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return nil, fmt.Errorf("the export folder cannot be created: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("the export folder %s cannot be opened: %w", dir, err)
	}
	return &Local{dir: dir, root: root, entries: map[string]Entry{}, timers: map[string]*time.Timer{}, now: time.Now}, nil
}

// Dir is the folder.
func (l *Local) Dir() string { return l.dir }

func (l *Local) file(id string) string { return "export-" + id }

// Put implements Backend.
func (l *Local) Put(ctx context.Context, e Entry, data []byte, callerQuota, totalQuota int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	var total, mine int64
	for _, x := range l.entries {
		total += x.Bytes
		if x.Caller == e.Caller {
			mine += x.Bytes
		}
	}
	switch {
	case callerQuota > 0 && mine+e.Bytes > callerQuota:
		return fmt.Errorf("%w (%d of %d bytes held)", ErrCallerQuota, mine, callerQuota)
	case totalQuota > 0 && total+e.Bytes > totalQuota:
		return fmt.Errorf("%w (%d of %d bytes held)", ErrTotalQuota, total, totalQuota)
	}
	tmp := tempPrefix + e.ID
	f, err := l.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Close()
	} else {
		_ = f.Close()
	}
	if err == nil {
		err = l.root.Rename(tmp, l.file(e.ID))
	}
	if err != nil {
		_ = l.root.Remove(tmp)
		return err
	}
	l.entries[e.ID] = e
	id := e.ID
	l.timers[id] = time.AfterFunc(time.Until(e.Expires), func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.removeLocked(id)
	})
	return nil
}

// Get implements Backend.
func (l *Local) Get(_ context.Context, id string) (Entry, []byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	e, ok := l.entries[id]
	if !ok {
		return Entry{}, nil, ErrNotFound
	}
	data, err := l.root.ReadFile(l.file(id))
	if err != nil {
		return Entry{}, nil, ErrNotFound
	}
	return e, data, nil
}

// expireLocked removes the expired exports.
func (l *Local) expireLocked() {
	now := l.now()
	for id, e := range l.entries {
		if !now.Before(e.Expires) {
			l.removeLocked(id)
		}
	}
}

func (l *Local) removeLocked(id string) {
	if t := l.timers[id]; t != nil {
		t.Stop()
	}
	delete(l.timers, id)
	delete(l.entries, id)
	_ = l.root.Remove(l.file(id))
}

// Held is the bytes of live exports (for tests and logs).
func (l *Local) Held() (files int, bytes int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	for _, e := range l.entries {
		bytes += e.Bytes
	}
	return len(l.entries), bytes
}

// Close deletes every export and, when it made it, the folder.
func (l *Local) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.entries {
		l.removeLocked(id)
	}
	err := l.root.Close()
	_ = os.Remove(l.dir) // only when empty: an operator's folder keeps its other files
	return err
}
