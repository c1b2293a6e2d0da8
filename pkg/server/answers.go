package server

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/text/language"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// WithAnswerCache keeps the encoded bodies of successful /search answers,
// at most maxBytes of them, so that a text asked again (people type the
// same first letters of the same cities all day) is answered with a copy.
// A kept answer is byte for byte the answer the Service would give now:
// its key is everything of the request that changes the answer (every
// parameter that /search reads and the languages that lang or
// Accept-Language chose), and it holds only while the dataset's content is
// the one it was computed from (see search.Versioned; a store that does
// not number its contents has nothing kept). It sits behind the search
// middleware, so a kept answer still counts against the rate limit, and
// every header that is not the answer's (request id, CORS, rate limit) is
// set as for any other. Zero or less keeps nothing. With WithMetrics it
// exports cityfinder_answer_cache_{hits,misses,evictions}_total,
// cityfinder_answer_cache_bytes and cityfinder_answer_cache_entries.
func WithAnswerCache(maxBytes int) Option {
	return func(o *options) { o.answerBytes = maxBytes }
}

// answerShards splits the cache so that 32 connections seldom wait on the
// same lock: a hit holds its shard's read lock for one map lookup.
const answerShards = 64

// answerOverhead is what an entry costs beside its key and body (the
// entry, its map and ring slots), counted against the cache's bytes.
const answerOverhead = 96

// answerCache is a bounded map from the key of a request (see answerKey)
// to its encoded answer, in shards by the key's hash. Each shard evicts
// with CLOCK (second chance): an entry read since the hand last passed is
// spared once, so the texts asked often stay and those asked once go
// first, without a list to reorder on every hit.
type answerCache struct {
	seed   maphash.Seed
	shards [answerShards]answerShard
}

// answerShard is one part of the cache, with its own lock and counters:
// 32 connections that hit one counter would pass its cache line from
// core to core at every answer.
type answerShard struct {
	mu      sync.RWMutex
	entries map[string]*keptAnswer
	ring    []*keptAnswer // every entry, in the order the hand visits them
	hand    int
	bytes   int
	max     int

	hits, misses, evictions atomic.Int64
	_                       [64]byte // keeps the shards apart in the CPU's caches
}

// keptAnswer is one encoded answer; nothing changes it once it is in the
// cache but used, so a hit reads body after the lock is released.
type keptAnswer struct {
	key      string
	body     []byte
	length   []string // its Content-Length field, made once
	version  uint64   // of the dataset it was computed from
	complete bool     // its Search-Complete
	slot     int      // its index in the shard's ring
	used     atomic.Bool
}

func (e *keptAnswer) size() int { return len(e.key) + len(e.body) + answerOverhead }

// newAnswerCache returns a cache of at most maxBytes, nil when maxBytes is
// zero or less.
func newAnswerCache(maxBytes int) *answerCache {
	if maxBytes <= 0 {
		return nil
	}
	c := &answerCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i] = answerShard{entries: make(map[string]*keptAnswer), max: max(maxBytes/answerShards, 1)}
	}
	return c
}

// shard is the shard of a key; maphash hashes a string as its bytes.
func (c *answerCache) shard(key []byte) *answerShard {
	return &c.shards[maphash.Bytes(c.seed, key)%answerShards]
}

// get returns the answer kept for key when it was computed from version.
func (c *answerCache) get(key []byte, version uint64) (*keptAnswer, bool) {
	s := c.shard(key)
	s.mu.RLock()
	e := s.entries[string(key)]
	s.mu.RUnlock()
	if e == nil || e.version != version {
		s.misses.Add(1)
		return nil, false
	}
	if !e.used.Load() { // a store only when it changes: hits on one entry share its cache line
		e.used.Store(true)
	}
	s.hits.Add(1)
	return e, true
}

// put keeps a copy of body as the answer to key computed from version,
// in place of any older one, evicting what CLOCK picks to make room. An
// answer larger than a quarter of a shard is not kept.
func (c *answerCache) put(key string, version uint64, body []byte, complete bool) {
	s := &c.shards[maphash.String(c.seed, key)%answerShards]
	e := &keptAnswer{key: key, body: append([]byte(nil), body...), length: contentLength(body), version: version, complete: complete}
	size := e.size()
	if size > s.max/4 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.entries[e.key]; old != nil {
		if old.version > version { // a slower request of an older content
			return
		}
		s.remove(old)
	}
	for s.bytes+size > s.max && len(s.ring) > 0 {
		if s.hand >= len(s.ring) {
			s.hand = 0
		}
		if v := s.ring[s.hand]; v.used.Load() {
			v.used.Store(false)
			s.hand++
			continue
		}
		// The last entry, the newest, takes the slot: the hand passes it,
		// so that it has a whole turn to be read before it is looked at
		// (looked at next, a new answer went at the next miss unless read
		// in between, and once the cache was full of answers read once
		// no new text stayed).
		s.remove(s.ring[s.hand])
		s.hand++
		s.evictions.Add(1)
	}
	e.slot = len(s.ring)
	s.ring = append(s.ring, e)
	s.entries[e.key] = e
	s.bytes += size
}

// remove takes e out of the shard; the caller holds the lock.
func (s *answerShard) remove(e *keptAnswer) {
	last := s.ring[len(s.ring)-1]
	s.ring[e.slot], last.slot = last, e.slot
	s.ring[len(s.ring)-1] = nil
	s.ring = s.ring[:len(s.ring)-1]
	delete(s.entries, e.key)
	s.bytes -= e.size()
}

// totals returns the bytes and entries the cache holds.
func (c *answerCache) totals() (bytes, entries int) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		bytes, entries = bytes+s.bytes, entries+len(s.ring)
		s.mu.RUnlock()
	}
	return bytes, entries
}

// count sums a counter of every shard.
func (c *answerCache) count(counter func(s *answerShard) *atomic.Int64) int64 {
	var n int64
	for i := range c.shards {
		n += counter(&c.shards[i]).Load()
	}
	return n
}

// collectors are the cache's metrics, read at each scrape.
func (c *answerCache) collectors() []prometheus.Collector {
	counter := func(name, help string, n func(s *answerShard) *atomic.Int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(c.count(n)) })
	}
	gauge := func(name, help string, read func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, read)
	}
	return []prometheus.Collector{
		counter("cityfinder_answer_cache_hits_total", "GET /search answers copied from the answer cache.",
			func(s *answerShard) *atomic.Int64 { return &s.hits }),
		counter("cityfinder_answer_cache_misses_total", "GET /search answers not in the answer cache (or computed from an older dataset), searched.",
			func(s *answerShard) *atomic.Int64 { return &s.misses }),
		counter("cityfinder_answer_cache_evictions_total", "Answers dropped from the answer cache to make room.",
			func(s *answerShard) *atomic.Int64 { return &s.evictions }),
		gauge("cityfinder_answer_cache_bytes", "Bytes the answer cache holds, keys and bookkeeping included.",
			func() float64 { b, _ := c.totals(); return float64(b) }),
		gauge("cityfinder_answer_cache_entries", "Answers the answer cache holds.",
			func() float64 { _, n := c.totals(); return float64(n) }),
	}
}

// answerKey appends to dst the key of a /search request: every field of
// req that the Service reads, the languages it was given, and the form
// of the answer. Two requests with one key get the same bytes from the
// same dataset content. The text comes last and as typed (its trailing
// space and its letters' case shape the answer).
func answerKey(dst []byte, req *search.Request, langs []language.Tag, form hitsForm) []byte {
	dst = append(dst, req.Dataset...)
	dst = append(dst, 0, byte(form))
	if req.Fuzzy {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(req.Limit))
	dst = append(dst, req.Countries...)
	dst = append(dst, 0)
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(req.BiasScale))
	if p := req.Near; p != nil {
		dst = append(dst, 1)
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.Lat))
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.Lon))
	} else {
		dst = append(dst, 0)
	}
	if b := req.Box; b != nil {
		dst = append(dst, 1)
		for _, v := range [...]float64{b.MinLon, b.MinLat, b.MaxLon, b.MaxLat} {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
		}
	} else {
		dst = append(dst, 0)
	}
	for _, t := range langs {
		dst = append(dst, t.String()...)
		dst = append(dst, ',')
	}
	dst = append(dst, 0)
	return append(dst, req.Text...)
}
