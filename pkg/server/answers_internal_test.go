package server

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// The cache keeps within its bytes, and CLOCK keeps what is read often
// while a stream of texts asked once goes through it.
func TestAnswerCacheEvictsTheRarelyRead(t *testing.T) {
	const maxBytes = answerShards * 4 << 10 // 4 KiB a shard
	c := newAnswerCache(maxBytes)
	body := make([]byte, 200)
	frequent := func(i int) []byte { return fmt.Appendf(nil, "frequent %d", i) }
	for i := range 64 {
		c.put(string(frequent(i)), 1, body, true)
	}
	for i := range 20_000 {
		c.put(fmt.Sprintf("once %d", i), 1, body, false)
		if i%100 == 0 {
			for j := range 64 {
				c.get(frequent(j), 1)
			}
		}
	}
	kept := 0
	for i := range 64 {
		if e, ok := c.get(frequent(i), 1); ok && e.complete {
			kept++
		}
	}
	if kept < 60 {
		t.Errorf("%d of 64 frequent answers survived 20,000 read once", kept)
	}
	bytes, entries := c.totals()
	if bytes > maxBytes || entries == 0 {
		t.Errorf("the cache holds %d bytes in %d entries, want at most %d", bytes, entries, maxBytes)
	}
	if c.count(func(s *answerShard) *atomic.Int64 { return &s.evictions }) == 0 {
		t.Error("no evictions counted")
	}
}

// Once the cache is full of answers read often, texts that come to be
// asked again and again (the working set moved: a new typed log) still
// get in and stay; the answers read no more make room for them.
func TestAnswerCacheFollowsTheWorkingSet(t *testing.T) {
	const maxBytes = answerShards * 4 << 10 // 4 KiB a shard, about 12 answers
	c := newAnswerCache(maxBytes)
	body := make([]byte, 200)
	for i := range answerShards * 12 {
		key := fmt.Appendf(nil, "old %d", i)
		c.put(string(key), 1, body, false)
		c.get(key, 1)
	}
	newSet := answerShards * 6 // half the cache
	for range 5 {              // each text asked again after all the others
		for i := range newSet {
			key := fmt.Appendf(nil, "new %d", i)
			if _, ok := c.get(key, 1); !ok {
				c.put(string(key), 1, body, false)
			}
		}
	}
	kept := 0
	for i := range newSet {
		if _, ok := c.get(fmt.Appendf(nil, "new %d", i), 1); ok {
			kept++
		}
	}
	if kept < newSet*9/10 {
		t.Errorf("%d of %d texts asked five times over are kept", kept, newSet)
	}
}

// An answer of another version is a miss, and a newer answer replaces it;
// an answer too large for a shard is not kept.
func TestAnswerCacheVersions(t *testing.T) {
	c := newAnswerCache(answerShards * 4 << 10)
	key := []byte("k")
	c.put("k", 1, []byte("old"), false)
	if _, ok := c.get(key, 2); ok {
		t.Error("an answer of version 1 served for version 2")
	}
	c.put("k", 2, []byte("new"), false)
	c.put("k", 1, []byte("late"), false) // a slow request of the old content
	if e, ok := c.get(key, 2); !ok || string(e.body) != "new" {
		t.Errorf("version 2 = %v %v, want new", e, ok)
	}
	c.put("big", 2, make([]byte, 2<<10), false)
	if _, ok := c.get([]byte("big"), 2); ok {
		t.Error("an answer of half a shard was kept")
	}
	if newAnswerCache(0) != nil {
		t.Error("a cache of 0 bytes exists")
	}
}

// Readers and writers of every shard at once (run with -race).
func TestAnswerCacheConcurrent(t *testing.T) {
	c := newAnswerCache(answerShards * 4 << 10)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 5000 {
				key := fmt.Appendf(nil, "%d", (i*7+w)%500)
				if e, ok := c.get(key, 1); ok && string(e.body) != string(key) {
					t.Errorf("key %s holds %s", key, e.body)
					return
				}
				c.put(string(key), 1, key, false)
			}
		})
	}
	wg.Wait()
}

// BenchmarkAnswerCacheGet reads kept answers from b.N goroutines at once
// (-cpu and SetParallelism make 32 of them, as 32 connections), to show
// what the shards' locks and counters cost when every core asks.
func BenchmarkAnswerCacheGet(b *testing.B) {
	c := newAnswerCache(32 << 20)
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "large\x00\x00\x01\x0a\x00text %d", i)
		c.put(string(keys[i]), 1, make([]byte, 2000), false)
	}
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, ok := c.get(keys[i%len(keys)], 1); !ok {
				b.Fatal("miss")
			}
			i += 7
		}
	})
}
