package main

import (
	"io"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// limiterStore is where the rate limiter keeps its windows; serve closes
// it on the way out.
type limiterStore interface {
	limiter.Store
	io.Closer
}

// What --limit-by counts.
const (
	limitBySession = "session"
	limitByRequest = "request"
)

// sessionRule is the typing session rule of the configuration.
func sessionRule(c *config) limiter.Sessions {
	l := c.Limiter
	return limiter.Sessions{Gap: l.SessionGap, MaxRequests: l.SessionRequests, MaxLength: l.SessionLength}
}

// countOptions are the limiter's options for what it counts: searches
// (typing sessions) by default, requests with --limit-by request.
func countOptions(c *config) []limiter.Option {
	if c.Limiter.LimitBy == limitByRequest {
		return nil
	}
	return []limiter.Option{limiter.WithSessions(server.LimitedSearch, sessionRule(c))}
}

// validateSessions checks --limit-by and the session settings.
func validateSessions(c *config) []error {
	var errs []error
	l := c.Limiter
	if l.LimitBy != limitBySession && l.LimitBy != limitByRequest {
		errs = append(errs, invalidValue(settingLimitBy, l.LimitBy, "use "+settingLimitBy.acceptedForm()))
	}
	errs = append(errs, durationErrors(false, settingDuration{settingSessionGap, l.SessionGap})...)
	if l.SessionRequests < 1 {
		errs = append(errs, invalidValue(settingSessionRequests, l.SessionRequests, "must be at least 1"))
	}
	if l.SessionLength < 1 {
		errs = append(errs, invalidValue(settingSessionLength, l.SessionLength, "must be at least 1"))
	}
	return errs
}
