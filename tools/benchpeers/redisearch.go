package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cityfinder/cityfinder/internal/benchenv"
)

// redisearchModule is where Debian's redis-redisearch puts the module.
const redisearchModule = "/usr/lib/redis/modules/redisearch.so"

// rediSearch is RediSearch 1.2 as its documentation builds autocomplete:
// a suggestion dictionary (FT.SUGADD, the score being the population)
// asked with FT.SUGGET, FUZZY from five letters; in a redis-server of its
// own on 127.0.0.1 without persistence.
type rediSearch struct {
	dir    string
	server *exec.Cmd
	client *redis.Client
}

const sugKey = "cities"

func (r *rediSearch) Config() string {
	return "redis-server with RediSearch 1.2 (Debian's redis-redisearch), no persistence; one suggestion per distinct name " +
		"(`FT.SUGADD cities NAME POPULATION PAYLOAD SLUG`, the largest population of the name); " +
		"`FT.SUGGET cities TEXT MAX 10 WITHPAYLOADS`, with `FUZZY` (a prefix within one edit, its only fuzziness) from 5 letters"
}

func (r *rediSearch) Start(ctx context.Context) error {
	addr, err := benchenv.FreeAddr()
	if err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(addr)
	logFile, err := os.Create(filepath.Join(r.dir, "redis.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	r.server = exec.CommandContext(ctx, "redis-server", "--bind", host, "--port", port, "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--loadmodule", redisearchModule)
	r.server.Stdout, r.server.Stderr = logFile, logFile
	if err := r.server.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	r.client = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	return waitFor(ctx, 10*time.Second, func() error { return r.client.Ping(ctx).Err() })
}

func (r *rediSearch) Build(ctx context.Context, cities []city) error {
	// A suggestion is a string: cities of one name are one suggestion,
	// scored by the largest (the first, cities.tsv being in descending
	// population).
	seen := make(map[string]bool, len(cities))
	pipe := r.client.Pipeline()
	for i, c := range cities {
		if !seen[c.text] {
			seen[c.text] = true
			pipe.Do(ctx, "FT.SUGADD", sugKey, c.text, strconv.FormatInt(c.population+1, 10), "PAYLOAD", c.slug)
		}
		if pipe.Len() == 10000 || i == len(cities)-1 {
			if _, err := pipe.Exec(ctx); err != nil {
				return fmt.Errorf("FT.SUGADD: %w", err)
			}
		}
	}
	return nil
}

func (r *rediSearch) Find(ctx context.Context, q query) ([]string, error) {
	args := []any{"FT.SUGGET", sugKey, q.text, "MAX", "10", "WITHPAYLOADS"}
	if q.edits > 0 {
		args = append(args, "FUZZY")
	}
	v, err := r.client.Do(ctx, args...).Slice()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slugs := make([]string, 0, len(v)/2)
	for i := 1; i < len(v); i += 2 { // suggestion, payload, …
		s, _ := v[i].(string)
		slugs = append(slugs, s)
	}
	return slugs, nil
}

func (r *rediSearch) Memory() (int64, string, error) {
	kib, err := benchenv.RSS(r.server.Process.Pid)
	return kib, "redis-server", err
}

func (r *rediSearch) Close() error {
	if r.client != nil {
		r.client.Close()
	}
	if r.server != nil {
		benchenv.Stop(r.server, 5*time.Second)
	}
	return nil
}
