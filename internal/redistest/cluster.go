package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/syncbuf"
)

// Cluster is a Redis Cluster of masters without replicas, each a Server on
// loopback. With cluster-require-full-coverage off, the nodes that are up
// keep serving their slots while one is down, as in production.
type Cluster struct {
	Nodes []*Server
}

// clusterSlots is how many hash slots a Redis Cluster has.
const clusterSlots = 16384

// StartCluster starts n cluster nodes for the calling test, joins them into
// one cluster with redis-cli --cluster create (which spreads the slots
// evenly), waits until every node serves, and stops them when the test ends.
// It takes a second or two, most of it redis-cli waiting for the nodes to
// agree: share one cluster between the tests of a package where possible.
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		unavailable(tb, err)
	}
	dir := tb.TempDir()
	c := &Cluster{}
	for i := range n {
		c.Nodes = append(c.Nodes, startFor(tb, &Server{dir: filepath.Join(dir, strconv.Itoa(i)), kind: clusterNode}))
	}
	args := []string{"--cluster", "create"}
	for _, s := range c.Nodes {
		args = append(args, s.Addr())
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(tb.Context(), clusterJoinTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, args...)
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		tb.Fatalf("redistest: redis-cli --cluster create: %v; it said:\n%s", err, out)
	}
	c.WaitHealthy(tb)
	return c
}

// URL returns the cluster's redis+cluster:// URL, naming every node.
func (c *Cluster) URL() string {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr()
	}
	return "redis+cluster://" + strings.Join(addrs, ",")
}

// WaitHealthy waits until every node serves: each says the cluster is ok,
// knows every node and sees every slot served. Call it after restarting a
// node: a restarted master waits about two seconds before serving again.
func (c *Cluster) WaitHealthy(tb testing.TB) {
	tb.Helper()
	poll.UntilNil(tb, readyTimeout, func() error {
		for _, s := range c.Nodes {
			info, err := s.do(tb, "cluster", "info").Text()
			if err != nil {
				return fmt.Errorf("redistest: cluster node %s: %w", s.Addr(), err)
			}
			for _, want := range []string{
				"cluster_state:ok",
				"cluster_known_nodes:" + strconv.Itoa(len(c.Nodes)),
				"cluster_slots_ok:" + strconv.Itoa(clusterSlots),
			} {
				if !strings.Contains(info, want+"\r\n") {
					return fmt.Errorf("redistest: cluster node %s has no %s:\n%s", s.Addr(), want, info)
				}
			}
		}
		return nil
	})
}

// NodeOf returns the node that holds key's slot, as the cluster's
// configuration says.
func (c *Cluster) NodeOf(tb testing.TB, key string) *Server {
	tb.Helper()
	for _, s := range c.Nodes {
		slot, err := s.do(tb, "cluster", "keyslot", key).Int()
		if err != nil {
			continue // a node that is down; ask another
		}
		shards, err := s.do(tb, "cluster", "slots").Slice()
		if err != nil {
			tb.Fatalf("redistest: CLUSTER SLOTS on %s: %v", s.Addr(), err)
		}
		for _, shard := range shards {
			// [start, end, [host, port, id], replicas…]
			r := shard.([]any)
			if int(r[0].(int64)) <= slot && slot <= int(r[1].(int64)) {
				port := int(r[2].([]any)[1].(int64))
				for _, n := range c.Nodes {
					if n.port == port {
						return n
					}
				}
			}
		}
		tb.Fatalf("redistest: no node of the cluster holds slot %d", slot)
	}
	tb.Fatal("redistest: no node of the cluster answers")
	return nil
}

// do sends one command to s alone and returns its reply.
func (s *Server) do(tb testing.TB, args ...any) *goredis.Cmd {
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), DialTimeout: time.Second, MaxRetries: -1,
		DisableIdentity: true, Protocol: 2})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), time.Second)
	defer cancel()
	return c.Do(ctx, args...)
}
