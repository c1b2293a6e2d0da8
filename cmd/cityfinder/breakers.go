package main

import (
	"github.com/cityfinder/cityfinder/pkg/breaker"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/guarded"
)

// The names of serve's circuit breakers, in /metrics and the log.
const (
	breakerRedis = "redis" // the limiter's Redis
	breakerMongo = "mongo" // the datasets' MongoDB
)

// breakers are serve's circuit breakers, by name, for /metrics.
type breakers map[string]*breaker.Breaker

// add makes the breaker named name from the configuration, keeps it and
// returns it. It logs every change of state: a Warn when it opens, an Info
// when it closes again.
func (bs breakers) add(a *app, name string) *breaker.Breaker {
	log := a.logger.With("component", "breaker", "breaker", name)
	b := breaker.New(breaker.Config{
		Threshold: a.cfg.Server.BreakerFailures,
		Cooldown:  a.cfg.Server.BreakerCooldown,
		OnChange: func(from, to breaker.State) {
			switch to {
			case breaker.Open:
				log.Warn("circuit breaker open: "+name+" is not answering, skipping it", "from", from.String(),
					"cooldown", a.cfg.Server.BreakerCooldown)
			case breaker.Closed:
				log.Info("circuit breaker closed: " + name + " answers again")
			default:
				log.Debug("circuit breaker probing " + name)
			}
		},
	})
	bs[name] = b
	return b
}

// guardStore puts a store whose calls can hang (MongoDB's in query mode)
// behind a breaker; the embedded store and a mirror of MongoDB's snapshots
// answer from memory and are returned as they are.
func guardStore(a *app, bs breakers, store search.Store) search.Store {
	if a.cfg.Mongo.URI == "" || a.cfg.Mongo.Mode == mongoModeSnapshot {
		return store
	}
	return guarded.New(store, bs.add(a, breakerMongo))
}

// validateBreakers checks the breakers' settings.
func validateBreakers(c *config) []error {
	var errs []error
	if c.Server.BreakerFailures < 1 {
		errs = append(errs, invalidValue(settingBreakerFailures, c.Server.BreakerFailures, "must be at least 1"))
	}
	return append(errs, durationErrors(false, settingDuration{settingBreakerCooldown, c.Server.BreakerCooldown})...)
}
