package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
)

// cityfinder is the first row: `cityfinder import` of the same file (its
// build), then Service.Find as /search asks it (typos on, limit 10) on
// the embedded store, in the worker's process.
type cityfinder struct {
	bin, file, dir string
	store          *embedded.Store
	svc            *search.Service
}

func (c *cityfinder) Config() string {
	return "`cityfinder import --dataset large`, then `Service.Find` with /search's defaults (typos on, limit 10) on the embedded store"
}

func (c *cityfinder) Start(context.Context) error { return nil }

// Build imports the dataset file rather than the cities: an import reads
// the rows and drops the duplicates itself, which is part of its time.
func (c *cityfinder) Build(ctx context.Context, _ []city) error {
	store := filepath.Join(c.dir, "store")
	cmd := exec.CommandContext(ctx, c.bin, "import", "--dataset", "large", "--file", c.file, "--data-dir", store, "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s import: %w", c.bin, err)
	}
	var err error
	if c.store, err = embedded.Open(store, embedded.Options{ReloadInterval: -1}); err != nil {
		return err
	}
	c.svc = search.NewService(c.store)
	return nil
}

func (c *cityfinder) Find(ctx context.Context, q query) ([]string, error) {
	res, err := c.svc.Find(ctx, search.Request{Dataset: search.Large, Text: q.slug, Limit: 10, Fuzzy: true})
	slugs := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		slugs[i] = h.Slug
	}
	return slugs, err
}

func (c *cityfinder) Memory() (int64, string, error) { return selfRSS() }

func (c *cityfinder) Close() error {
	if c.store == nil {
		return nil
	}
	return c.store.Close()
}
