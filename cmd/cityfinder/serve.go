package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/server"
)

func newServeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API: GET /search?q=…&dataset=small|large&limit=N",
		Long: `Serve answers GET /search?q=…&dataset=small|large&limit=N with a JSON array of
the best matching cities. Each client (by remote IP) may make --max searches in
any --window; more get 429. It picks up new imports without a restart and shuts
down gracefully on SIGINT or SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), a)
		},
	}
	f := cmd.Flags()
	addFlag(f, settingAddr)
	addFlag(f, settingWindow)
	addFlag(f, settingMax)
	return cmd
}

func runServe(ctx context.Context, a *app) error {
	store, err := openStore(a, true)
	if err != nil {
		return err
	}
	defer store.Close()
	for _, d := range search.Datasets {
		if store.Count(d) == 0 {
			a.logger.Warn(fmt.Sprintf("dataset %s is empty: run `cityfinder import --dataset %s`", d, d))
		}
	}
	policy := limiter.Policy{Max: a.cfg.Limiter.Max, Window: a.cfg.Limiter.Window}
	lim, err := limiter.New(memory.New(), policy, limiter.WithLogger(a.logger))
	if err != nil {
		return err
	}
	h := server.New(store, server.WithLogger(a.logger), server.WithSearchMiddleware(lim.Middleware))
	srv := server.NewServer(a.cfg.Server.Addr, h, a.logger)
	if err := srv.Listen(); err != nil {
		return err
	}
	a.logger.Info("serving", "addr", "http://"+srv.Addr(), "data_dir", a.cfg.DataDir,
		"small", store.Count(search.Small), "large", store.Count(search.Large), "limit", policy.Message())
	return srv.Serve(ctx)
}

// openStore opens the embedded store in the configured data directory;
// watch makes it pick up imports done by other processes.
func openStore(a *app, watch bool) (*embedded.Store, error) {
	opts := embedded.Options{Logger: a.logger, ReloadInterval: -1}
	if watch {
		opts.ReloadInterval = embedded.DefaultReloadInterval
	}
	return embedded.Open(a.cfg.DataDir, opts)
}
