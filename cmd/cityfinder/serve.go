package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/server"
)

func newServeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API: GET /search?q=…&dataset=small|large&limit=N",
		Long: `Serve answers GET /search?q=…&dataset=small|large&limit=N with a JSON array of
the best matching cities. Each client (by remote IP, or by X-Forwarded-For from
--trusted-proxies) may make --max searches in any --window; more get 429. With
--redis-url every replica shares one limit per client. It picks up new imports
without a restart and shuts down gracefully on SIGINT or SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), a)
		},
	}
	f := cmd.Flags()
	addFlag(f, settingAddr)
	addFlag(f, settingWindow)
	addFlag(f, settingMax)
	for _, s := range []setting{settingTrustedProxies, settingIPv6Prefix, settingMaxClients, settingRedisURL, settingFailClosed} {
		addFlag(f, s)
	}
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
	lim, limStore, err := newLimiter(ctx, a, policy)
	if err != nil {
		return err
	}
	defer limStore.Close()
	h := server.New(search.WithTypos(store), server.WithLogger(a.logger), server.WithSearchMiddleware(lim.Middleware),
		server.WithDemoPage(server.PageConfig{SearchMax: policy.Max, SearchWindow: policy.Window}))
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

// newLimiter builds the rate limiter from the configuration: in process, or
// in Redis with --redis-url; the returned Closer releases its store.
func newLimiter(ctx context.Context, a *app, policy limiter.Policy) (*limiter.Limiter, io.Closer, error) {
	c := a.cfg.Limiter
	trusted, err := limiter.ParsePrefixes(c.TrustedProxies)
	if err != nil {
		return nil, nil, err
	}
	clientIP, err := limiter.NewClientIP(trusted, c.IPv6Prefix)
	if err != nil {
		return nil, nil, err
	}
	log := a.logger.With("component", "limiter")
	var store limiter.Store = memory.New(memory.WithMaxClients(c.MaxClients))
	var closer io.Closer = io.NopCloser(nil)
	if c.RedisURL != "" {
		rs, err := redis.Open(c.RedisURL, redis.WithLogger(log))
		if err != nil {
			return nil, nil, err
		}
		if err := rs.Ping(ctx); err != nil {
			log.Warn("Redis does not answer yet; the limit applies once it does", "redis", rs.Addr(), "fail_closed", c.FailClosed, "err", err)
		} else {
			log.Info("rate limits shared in Redis", "redis", rs.Addr())
		}
		store, closer = rs, rs
	}
	lim, err := limiter.New(store, policy, limiter.WithKeyFunc(clientIP.Key), limiter.WithLogger(log), limiter.WithFailClosed(c.FailClosed))
	if err != nil {
		closer.Close()
		return nil, nil, err
	}
	return lim, closer, nil
}
