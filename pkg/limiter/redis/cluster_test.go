package redis_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/redistest"
	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
	"github.com/cityfinder/cityfinder/pkg/limiter/storetest"
)

// On a Redis Cluster the store decides as on one server, each client's
// script running on the node of its key's slot. One cluster serves every
// subtest.
func TestCluster(t *testing.T) {
	start := time.Now()
	cluster := redistest.StartCluster(t, 3)
	t.Logf("cluster of %d nodes up in %s", len(cluster.Nodes), time.Since(start).Round(time.Millisecond))

	t.Run("Conformance", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) limiter.Store {
			return mustOpenURL(t, cluster.URL(), redis.WithPrefix(redistest.KeyPrefix(t)), redis.WithClock(now))
		})
	})

	t.Run("Sessions", func(t *testing.T) {
		storetest.RunSessions(t, func(t *testing.T, now func() time.Time, replicas int) []limiter.SessionStore {
			prefix := redistest.KeyPrefix(t)
			var stores []limiter.SessionStore
			for range replicas {
				stores = append(stores, mustOpenURL(t, cluster.URL(), redis.WithPrefix(prefix), redis.WithClock(now)))
			}
			return stores
		})
	})

	t.Run("ClientsSpreadOverEveryNode", func(t *testing.T) {
		prefix := redistest.KeyPrefix(t)
		// One seed node is enough: the client learns the others.
		store := mustOpenURL(t, "redis+cluster://"+cluster.Nodes[0].Addr(), redis.WithPrefix(prefix))
		p := limiter.Policy{Max: 1, Window: time.Minute}
		perNode := make(map[*redistest.Server]int)
		for i := range 30 {
			client := fmt.Sprintf("198.51.100.%d", i)
			if d := storetest.MustAllow(t, store, client, p); !d.Allowed {
				t.Fatalf("first request of %s: %+v", client, d)
			}
			if d := storetest.MustAllow(t, store, client, p); d.Allowed {
				t.Fatalf("second request of %s: %+v, want rejected", client, d)
			}
			perNode[cluster.NodeOf(t, prefix+client)]++
		}
		if len(perNode) != len(cluster.Nodes) {
			t.Fatalf("30 clients on %d of %d nodes, want every node used", len(perNode), len(cluster.Nodes))
		}
	})
}

// Behind Sentinel the store finds the master by name and decides as on one
// server.
func TestSentinel(t *testing.T) {
	sentinel := redistest.StartSentinel(t)
	storetest.Run(t, func(t *testing.T, now func() time.Time) limiter.Store {
		return mustOpenURL(t, sentinel.URL(), redis.WithPrefix(redistest.KeyPrefix(t)), redis.WithClock(now))
	})
}
