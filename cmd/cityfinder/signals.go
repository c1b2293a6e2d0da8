package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// validateLifecycle checks the drain delay and the reload interval, which
// may be zero but not negative, and the circuit breakers' settings.
func validateLifecycle(c *config) []error {
	return append(durationErrors(true, settingDuration{settingDrainDelay, c.Server.DrainDelay},
		settingDuration{settingReloadInterval, c.Server.ReloadInterval}), validateBreakers(c)...)
}

// reloadInterval is the embedded store's ReloadInterval for serve: a
// negative one turns the polling off, leaving SIGHUP.
func reloadInterval(c *config) time.Duration {
	if c.Server.ReloadInterval == 0 {
		return -1
	}
	return c.Server.ReloadInterval
}

// watchSignals handles the signals that serve gets besides the first
// SIGINT or SIGTERM, which ends ctx (see run) and starts the drain: SIGHUP
// reloads the datasets and logs that it did, as daemons do, and a second
// SIGINT or SIGTERM closes cut, which ends the drain at once. stop ends the
// watching.
func watchSignals(ctx context.Context, a *app, svc *search.Service, store search.Store) (cut <-chan struct{}, stop func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, os.Interrupt, syscall.SIGTERM)
	cutc, done := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		stops := 0
		if ctx.Err() != nil { // the first one came before this watch began
			stops = 1
		}
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				if sig == syscall.SIGHUP {
					reloadDatasets(context.WithoutCancel(ctx), a, svc, store)
					continue
				}
				if stops++; stops == 2 {
					close(cutc)
				}
			}
		}
	})
	return cutc, func() {
		signal.Stop(sigs)
		close(done)
		wg.Wait()
	}
}

// reloadDatasets reads the datasets again, if the store keeps them in
// memory (MongoDB always answers from its latest import), and logs how many
// cities each holds now.
func reloadDatasets(ctx context.Context, a *app, svc *search.Service, store search.Store) {
	// The embedded store reads its files again; a mirror of MongoDB syncs.
	if e, ok := store.(interface{ Reload() error }); ok {
		if err := e.Reload(); err != nil {
			a.logger.Error("SIGHUP: reload datasets", "err", explain(err))
			return
		}
	}
	counts := countDatasets(ctx, a, svc)
	a.logger.Info("SIGHUP: datasets reloaded", "store", storeName(a),
		"small", counts[search.Small], "large", counts[search.Large])
}
