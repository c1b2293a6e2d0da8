package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
	"github.com/cityfinder/cityfinder/pkg/server"
)

func newServeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API: GET /search?q=…&dataset=small|large&limit=N",
		Long: `Serve answers GET /search?q=…&dataset=small|large&limit=N with a JSON array of
the best matching cities, GET /cities/{id} with one city by its id, and
GET /reverse?lat=…&lon=… with the cities around a point (docs/api.md). Each
client (by remote IP, or by X-Forwarded-For from --trusted-proxies) may make
--max searches (/search and /reverse) in any --window; more get 429. A search
typed letter by letter counts once (--limit-by session; request counts every
request). With --redis-url every replica shares one limit per client. It picks up new imports
without a restart (every --reload-interval, and on SIGHUP). On SIGINT or
SIGTERM it drains for --drain-delay (/readyz answers 503, requests are still
served; a second signal ends the drain), then shuts down gracefully.

With --mongo-uri it serves from memory the snapshot that import writes into
MongoDB, follows new imports every --mongo-poll-interval (SIGHUP: at once),
and serves its copy in --data-dir while MongoDB is away (--mongo-mode query
makes every search a MongoDB query instead; see docs/deployment.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), a)
		},
	}
	addSettingFlags(cmd.Flags(), cmdServe)
	return cmd
}

func runServe(ctx context.Context, a *app) error {
	// The embedded store holds each dataset as one large allocation that
	// the collector never scans; with the default GOGC the heap would be
	// let grow to twice its size between collections. Collect sooner
	// unless the operator chose otherwise.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	// Every record logged with a request's context (the limiter's too) names the request.
	a.logger = slog.New(server.LogRequestIDs(a.logger.Handler()))
	// As query does: a directory that does not exist is a mistyped
	// --data-dir far more often than a store yet to be imported into, which
	// would answer 503 to every search.
	if err := checkDataDir(a); err != nil {
		return err
	}
	opened, err := openServeStore(ctx, a)
	if err != nil {
		return err
	}
	defer opened.Close()
	watch := newWatched(opened)
	store := guardStore(a, watch.breakers, opened)
	policy := limiter.Policy{Max: a.cfg.Limiter.Max, Window: a.cfg.Limiter.Window}
	lim, limStore, err := newLimiter(ctx, a, policy, watch.breakers)
	if err != nil {
		return err
	}
	defer limStore.Close()
	svc := search.NewService(store)
	opts := []server.Option{server.WithLogger(a.logger), server.WithSearchMiddleware(lim.Middleware),
		server.WithDemoPage(server.PageConfig{SearchMax: policy.Max, SearchWindow: policy.Window})}
	opts = append(opts, opsOptions(a, svc, lim, limStore, watch)...)
	opts = append(opts, mirrorChecks(opened)...)
	c := a.cfg.Server
	cut, stopSignals := watchSignals(ctx, a, svc, opened)
	defer stopSignals()
	srv, err := server.Listen(server.Config{
		Addr:    c.Addr,
		Handler: server.New(svc, opts...),
		Limits: server.Limits{
			ReadHeaderTimeout: c.ReadHeaderTimeout, ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout,
			IdleTimeout: c.IdleTimeout, MaxHeaderBytes: c.MaxHeaderBytes,
		},
		ShutdownTimeout: c.ShutdownTimeout,
		DrainDelay:      c.DrainDelay,
		DrainCut:        cut,
		Logger:          a.logger,
	})
	if err != nil {
		return err
	}
	counts := countDatasets(ctx, a, svc)
	if !svc.FindsTypos() {
		a.logger.Info("typo matching is off: this store answers prefix matches only (see docs/mongodb.md)", "store", storeName(a))
	}
	a.logger.Info("serving", "addr", "http://"+srv.Addr(), "store", storeName(a),
		"small", counts[search.Small], "large", counts[search.Large], "limit", server.LimitMessage(policy.Max, policy.Window))
	return srv.Serve(ctx)
}

// serveGCPercent keeps serve's heap within a tenth of what it holds live.
// Nearly all of that is the snapshot, which holds no pointers, so a
// collection marks only the small rest and collecting twice as often as
// at 20 costs no throughput that the benchmarks show, while the peak RSS
// on the full-size set falls from 315 to 290 MB (docs/performance.md).
const serveGCPercent = 10

// openStore opens the store: MongoDB with --mongo-uri, else the embedded
// store in the data directory, where watch makes it pick up imports done
// by other processes (MongoDB's searches always see the latest import).
func openStore(a *app, watch bool) (search.Store, error) {
	if m := a.cfg.Mongo; m.URI != "" {
		s, err := mongo.Open(mongo.Options{
			URI: m.URI, Database: m.DB, MaxPoolSize: uint64(m.PoolSize), ConnectTimeout: m.ConnectTimeout,
			QueryTimeout: m.QueryTimeout, BatchSize: m.BatchSize, Logger: a.logger,
		})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	// Import and query read only the snapshots they use.
	opts := embedded.Options{Logger: a.logger, ReloadInterval: -1, Lazy: true}
	if watch {
		opts.ReloadInterval, opts.Lazy = reloadInterval(a.cfg), false
	}
	s, err := embedded.Open(a.cfg.DataDir, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// storeName says where serve's datasets are, for its logs.
func storeName(a *app) string {
	if m := a.cfg.Mongo; m.URI != "" {
		if m.Mode == mongoModeSnapshot {
			return mongo.Describe(m.URI, m.DB) + ", served from memory (copies in " + mirrorDir(a.cfg) + ")"
		}
		return mongo.Describe(m.URI, m.DB)
	}
	return "embedded store in " + a.cfg.DataDir
}

// countDatasets returns how many cities each dataset holds and warns about
// those that cannot answer. A store that cannot say within the connect
// timeout (a MongoDB that is down: serve starts anyway and answers 503
// until it is back) counts as -1.
func countDatasets(ctx context.Context, a *app, svc *search.Service) map[search.Dataset]int {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Mongo.ConnectTimeout)
	defer cancel()
	counts := make(map[search.Dataset]int)
	for _, d := range search.Datasets {
		st, err := svc.Stats(ctx, d)
		switch {
		case errors.Is(err, search.ErrEmptyDataset):
			a.logger.Warn(explain(err).Error())
		case err != nil:
			st.Cities = -1
			a.logger.Warn("cannot read dataset "+string(d)+"; serving anyway", "err", explain(err))
		}
		counts[d] = st.Cities
	}
	return counts
}

// newLimiter builds the rate limiter from the configuration: in process, or
// in Redis with --redis-url, behind a circuit breaker added to brs. Close
// the store it returns when done.
func newLimiter(ctx context.Context, a *app, policy limiter.Policy, brs breakers) (*limiter.Limiter, limiterStore, error) {
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
	for _, p := range trusted {
		if limiter.IsCatchAll(p) {
			log.Warn("every address is a trusted proxy: any client that reaches serve without going through the proxies "+
				"can choose its own rate limit key with X-Forwarded-For", "trusted_proxy", p.String(), settingTrustAll.flag, true)
		}
	}
	var store limiterStore = memory.New(memory.WithMaxClients(c.MaxClients))
	if c.RedisURL != "" {
		rs, err := redis.Open(c.RedisURL, redis.WithLogger(log), redis.WithBreaker(brs.add(a, breakerRedis)))
		if err != nil {
			return nil, nil, err
		}
		if err := rs.Ping(ctx); err != nil {
			log.Warn("Redis does not answer yet; the limit applies once it does", "redis", rs.String(), "fail_closed", c.FailClosed, "err", err)
		} else {
			log.Info("rate limits shared in Redis", "redis", rs.String())
		}
		store = rs
	}
	lim, err := limiter.New(store, policy, append(countOptions(a.cfg), limiter.WithKeyFunc(clientIP.Key), limiter.WithLogger(log), limiter.WithFailClosed(c.FailClosed),
		limiter.WithLimitMessage(server.LimitMessage(policy.Max, policy.Window)), limiter.WithUnavailableMessage(server.UnavailableMessage))...)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return lim, store, nil
}

// opsOptions are the server's operational options: the readiness checks of
// /readyz (each dataset, required or not by --ready-datasets, and the
// limiter's Redis; the datasets' files, see watched), the metrics of
// /metrics (the circuit breakers' and files' too), and CORS and caching of
// /search.
func opsOptions(a *app, svc *search.Service, lim *limiter.Limiter, limStore limiter.Store, watch watched) []server.Option {
	c := a.cfg.Server
	required := make(map[string]bool)
	for _, d := range c.ReadyDatasets {
		required[d] = true
	}
	var checks []server.Check
	for _, d := range search.Datasets {
		check := watch.datasetCheck(svc, d)
		check.Optional = !required[string(d)]
		checks = append(checks, check)
	}
	if p, ok := limStore.(limiter.Pinger); ok {
		// Failing open, searches go on unlimited while Redis is away: degraded, still worth serving.
		checks = append(checks, server.Check{Name: "limiter", Run: p.Ping, Optional: !a.cfg.Limiter.FailClosed})
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		server.LimiterMetrics(lim.StoreErrors), server.DatasetMetrics(svc))
	reg.MustRegister(watch.collectors()...)
	return []server.Option{server.WithReadiness(checks...), server.WithMetrics(reg),
		server.WithCORS(c.CORSOrigin...), server.WithCacheMaxAge(c.CacheMaxAge), server.WithAnswerCache(c.AnswerCacheMB << 20)}
}

// The answer cache's size: by default room for some 4,000 answers, the
// typed log of make bench twice over, which keeps serve on the large
// dataset within 300 MB (more answers the texts people type again more
// often, for more memory: docs/performance.md); at most 2 GB, which an
// int counts in bytes on every platform.
const (
	defaultAnswerCacheMB = 8
	maxAnswerCacheMB     = 2047
)
