package cog

import (
	"container/list"
	"sync"
)

// Cache keeps parsed headers and fetched (compressed) tiles, least
// recently used first out, within a byte bound. One Cache is meant to be
// shared by every File of a process; it is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	ll    *list.List
	items map[string]*list.Element
}

type cacheEntry struct {
	key  string
	val  any
	size int64
}

// NewCache makes a cache of at most maxBytes (estimated) bytes.
func NewCache(maxBytes int64) *Cache {
	return &Cache{max: maxBytes, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *Cache) get(key string) (any, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*cacheEntry).val, true
}

func (c *Cache) put(key string, val any, size int64) {
	if c == nil || size > c.max/4 {
		return // one entry may not push out most of the cache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		old := e.Value.(*cacheEntry)
		c.used += size - old.size
		old.val, old.size = val, size
		c.ll.MoveToFront(e)
	} else {
		c.items[key] = c.ll.PushFront(&cacheEntry{key: key, val: val, size: size})
		c.used += size
	}
	for c.used > c.max {
		last := c.ll.Back()
		ent := last.Value.(*cacheEntry)
		c.ll.Remove(last)
		delete(c.items, ent.key)
		c.used -= ent.size
	}
}

// Size returns the bytes held and the number of entries.
func (c *Cache) Size() (bytes int64, entries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, c.ll.Len()
}
