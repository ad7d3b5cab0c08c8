package catalog

import "container/list"

// Bounds of the remote client cache. A caller may name
// any number of distinct catalog URLs; each client holds its URL several
// times over (the reference, the key, the client's base and parsed URL),
// so the cache is bounded both by entries and by an estimate of their
// bytes. Catalogs the operator configured (presets, STAC_MCP_CATALOGS, a
// default URL) are kept outside it, never evicted.
const (
	maxRemoteClients = 256
	maxRemoteBytes   = 4 << 20
	// remoteEntryOverhead is what a client costs besides its URL's
	// copies: the structs, the header map, the parsed URL.
	remoteEntryOverhead = 2 << 10
	// remoteURLCopies is how many copies of the URL one entry holds.
	remoteURLCopies = 6
)

// remoteCache is a least-recently-used cache of remote catalogs by URL,
// bounded by count and by estimated bytes. Not safe for concurrent use:
// the Registry holds its mutex.
type remoteCache struct {
	maxEntries int
	maxBytes   int
	bytes      int
	order      *list.List               // front: most recently used; values are *remoteEntry
	byKey      map[string]*list.Element // key → element of order
}

type remoteEntry struct {
	key   string
	cat   *Catalog
	bytes int
}

func newRemoteCache(maxEntries, maxBytes int) *remoteCache {
	return &remoteCache{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), byKey: map[string]*list.Element{}}
}

func entryBytes(key string) int { return remoteURLCopies*len(key) + remoteEntryOverhead }

func (c *remoteCache) get(key string) (*Catalog, bool) {
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*remoteEntry).cat, true
}

// add keeps cat under key, evicting the least recently used entries past
// the bounds. An evicted client is only dropped: a call still using it
// finishes with it, and the next call naming its URL gets a new one.
func (c *remoteCache) add(key string, cat *Catalog) {
	if e, ok := c.byKey[key]; ok {
		c.removeElement(e)
	}
	ent := &remoteEntry{key: key, cat: cat, bytes: entryBytes(key)}
	c.byKey[key] = c.order.PushFront(ent)
	c.bytes += ent.bytes
	for c.order.Len() > c.maxEntries || (c.bytes > c.maxBytes && c.order.Len() > 1) {
		c.removeElement(c.order.Back())
	}
}

// remove drops key's entry if it still holds cat.
func (c *remoteCache) remove(key string, cat *Catalog) {
	if e, ok := c.byKey[key]; ok && e.Value.(*remoteEntry).cat.Client == cat.Client {
		c.removeElement(e)
	}
}

func (c *remoteCache) removeElement(e *list.Element) {
	ent := c.order.Remove(e).(*remoteEntry)
	delete(c.byKey, ent.key)
	c.bytes -= ent.bytes
}

func (c *remoteCache) len() int { return c.order.Len() }
