package main

import (
	"context"
	"path/filepath"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
	"github.com/cityfinder/cityfinder/pkg/search/mongo/mirror"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// The values of --mongo-mode.
const (
	mongoModeSnapshot = "snapshot" // serve from memory, a copy of MongoDB's snapshot
	mongoModeQuery    = "query"    // every search a query on MongoDB
)

// openServeStore opens serve's store: with --mongo-uri in snapshot mode, a
// mirror of MongoDB's snapshots, in memory and in mongo/<db> under
// --data-dir, synced once before it returns; otherwise openStore's.
func openServeStore(ctx context.Context, a *app) (search.Store, error) {
	m := a.cfg.Mongo
	if m.URI == "" || m.Mode != mongoModeSnapshot {
		return openStore(a, true)
	}
	st, err := openStore(a, false)
	if err != nil {
		return nil, err
	}
	return mirror.Open(ctx, st.(*mongo.Store), mirror.Options{Dir: mirrorDir(a.cfg), PollInterval: m.PollInterval, Logger: a.logger})
}

// mirrorDir is where serve keeps its copies of MongoDB's snapshots.
func mirrorDir(c *config) string { return filepath.Join(c.DataDir, "mongo", c.Mongo.DB) }

// mirrorChecks is the readiness check of a mirror: optional, as a replica
// that cannot reach MongoDB still serves its copies, and says so in /readyz.
func mirrorChecks(store search.Store) []server.Option {
	m, ok := store.(*mirror.Store)
	if !ok {
		return nil
	}
	return []server.Option{server.WithReadiness(server.Check{Name: "mongo", Run: m.Health, Optional: true})}
}
