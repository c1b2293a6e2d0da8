package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cityfinder/cityfinder/pkg/breaker"
)

// WithBreaker puts every command the store sends to Redis (its decisions,
// whatever their script, and Ping) behind b: once Redis has failed to answer
// b's threshold of commands in a row, the store fails them at once with an
// error that matches breaker.ErrOpen, for b's cool-down, instead of waiting
// out a timeout each; then one command probes whether Redis is back. The
// limiter.Limiter fails open (or closed) on those errors as on any other,
// so a hung Redis costs a search nothing once the breaker is open.
//
// A command that Redis answers, even with an error of its own, is a
// success; one that times out or cannot reach Redis is a failure; one whose
// ctx ended first says nothing. On a Redis Cluster one breaker stands for
// every node, and Ping asks the masters directly, past it.
//
// The breaker is installed as a go-redis hook on the client, which is why
// it sees commands the store adds later without change. For a store made by
// New that means the caller's client: every command sent through it goes
// through b.
func WithBreaker(b *breaker.Breaker) Option {
	return func(s *Store) { s.breaker = b }
}

// breakerHook is the go-redis hook of WithBreaker.
type breakerHook struct {
	b     *breaker.Breaker
	store *Store // for its String, set once Open has made it
}

var _ goredis.Hook = breakerHook{}

func (h breakerHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h breakerHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if handshake[cmd.Name()] {
			return next(ctx, cmd)
		}
		return h.guard(ctx, func() error { return next(ctx, cmd) })
	}
}

func (h breakerHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		if !slices.ContainsFunc(cmds, func(c goredis.Cmder) bool { return !handshake[c.Name()] }) {
			return next(ctx, cmds)
		}
		return h.guard(ctx, func() error { return next(ctx, cmds) })
	}
}

// handshake holds the commands go-redis sends by itself to set up a new
// connection, inside the command that needed it: they pass the breaker,
// since the command around them is judged already. Counted too, one
// timeout would count as two failures, and a probe would be refused its own
// connection's handshake. (The context cannot mark them: go-redis sets a
// connection up under a context of its own.)
var handshake = map[string]bool{"hello": true, "auth": true, "client": true, "select": true, "readonly": true}

// guard runs send unless the breaker is open, and tells the breaker how it
// went.
func (h breakerHook) guard(ctx context.Context, send func() error) error {
	call, err := h.b.Allow()
	if err != nil {
		return fmt.Errorf("redis at %s: %w", h.store, err)
	}
	err = send()
	call.Done(outcome(ctx, err))
	return err
}

// outcome judges Redis by how one command ended.
func outcome(ctx context.Context, err error) breaker.Outcome {
	var redisErr goredis.Error
	switch {
	case err == nil, errors.Is(err, goredis.Nil):
		return breaker.Success
	case ctx.Err() != nil:
		return breaker.Ignored
	case errors.As(err, &redisErr) && !isNetError(err):
		return breaker.Success // Redis answered, with an error of its own (NOSCRIPT, WRONGTYPE…)
	}
	return breaker.Failure
}

// isNetError tells a network failure from an error reply: go-redis's Error
// interface matches both (a timeout is a net.Error with a RedisError
// method).
func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}
