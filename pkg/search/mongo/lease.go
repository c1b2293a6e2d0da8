package mongo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Leases keep two loads of one dataset from running at once, from any
// process on any host. A load first takes the dataset's lease, a document
// of the collection LeaseCollection, {_id: "load:<dataset>", owner, host,
// pid, pid_space, since, expires}; it renews it every third of Options.LeaseTTL while
// it runs, checks that it still holds it just before the swap, and deletes
// it at the end. A second load finds the lease held and fails at once with
// ErrLoadRunning, touching nothing: it never drops the first one's staging
// collection. A load killed before it could delete its lease holds the
// dataset until the lease expires, LeaseTTL after its last renewal; the
// next load then takes the lease over and drops what the dead one left. On
// Linux, a load on the same host and in the same PID namespace as a
// holder whose process is gone takes its lease over at once.
//
// Expiry is reckoned by the clocks of the loading hosts: hosts whose clocks
// disagree by more than LeaseTTL could both believe they hold a lease.

// LeaseCollection holds the leases of the loads in progress.
const LeaseCollection = "leases"

// DefaultLeaseTTL is how long a lease outlives its last renewal.
const DefaultLeaseTTL = 30 * time.Second

// Errors of Load.
var (
	// ErrLoadRunning means that another load of the dataset holds its
	// lease: the load was refused and changed nothing.
	ErrLoadRunning = errors.New("another import of this dataset is running")
	// ErrLeaseLost means that a load could not renew its lease in time, so
	// that another may have taken it: the load gave up before its swap.
	ErrLeaseLost = errors.New("this import lost its lease on the dataset")
)

// leaseDoc is a lease as stored.
type leaseDoc struct {
	ID      string        `bson:"_id"`
	Owner   bson.ObjectID `bson:"owner"`
	Host    string        `bson:"host"`
	PID     int           `bson:"pid"`
	Space   string        `bson:"pid_space,omitempty"` // see processSpace
	Since   time.Time     `bson:"since"`
	Expires time.Time     `bson:"expires"`
}

// lease is a lease this Store holds.
type lease struct {
	coll  *mongo.Collection
	id    string
	owner bson.ObjectID
	ttl   time.Duration
}

func leaseID(d search.Dataset) string { return "load:" + string(d) }

// acquire takes dataset d's lease, if no live one is held. Taking it is one
// upsert that matches only an expired lease: when a live one exists, the
// insert collides with its _id.
func (s *Store) acquire(ctx context.Context, d search.Dataset) (*lease, error) {
	l := &lease{coll: s.db.Collection(LeaseCollection), id: leaseID(d), owner: bson.NewObjectID(), ttl: s.opts.LeaseTTL}
	host, _ := os.Hostname()
	now := time.Now()
	doc := leaseDoc{ID: l.id, Owner: l.owner, Host: host, PID: os.Getpid(), Space: processSpace(), Since: now, Expires: now.Add(l.ttl)}
	filter := bson.D{{Key: "_id", Value: l.id}, {Key: "expires", Value: bson.D{{Key: "$lt", Value: now}}}}
	_, err := l.coll.ReplaceOne(ctx, filter, doc, options.Replace().SetUpsert(true))
	if err == nil {
		return l, nil
	}
	if !mongo.IsDuplicateKeyError(err) {
		return nil, fmt.Errorf("take the lease on dataset %s: %w", d, err)
	}
	var held leaseDoc
	if err := l.coll.FindOne(ctx, bson.D{{Key: "_id", Value: l.id}}).Decode(&held); err != nil {
		// Released between the two statements: the caller may try again.
		return nil, ErrLoadRunning
	}
	if held.Host == doc.Host && held.Space != "" && held.Space == doc.Space && processGone(held.PID) {
		// Its holder died here: take it over, unless another load just did.
		res, err := l.coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: l.id}, {Key: "owner", Value: held.Owner}}, doc)
		if err == nil && res.MatchedCount == 1 {
			s.log.Info("took over the lease of an import that died", "dataset", d, "pid", held.PID, "since", held.Since)
			return l, nil
		}
	}
	return nil, fmt.Errorf("%w: process %d on %s has been importing it since %s; try again when it has finished, "+
		"or after %s if it died", ErrLoadRunning, held.PID, held.Host,
		held.Since.UTC().Format(time.DateTime+" MST"), held.Expires.UTC().Format(time.DateTime+" MST"))
}

// renew extends the lease by its TTL, if this Store still holds it.
func (l *lease) renew(ctx context.Context) error {
	now := time.Now()
	res, err := l.coll.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: l.id}, {Key: "owner", Value: l.owner}, {Key: "expires", Value: bson.D{{Key: "$gt", Value: now}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "expires", Value: now.Add(l.ttl)}}}})
	if err != nil {
		return fmt.Errorf("renew the lease: %w", err)
	}
	if res.MatchedCount == 0 {
		return ErrLeaseLost
	}
	return nil
}

// keep renews the lease every third of its TTL until ctx ends. When a
// renewal finds the lease gone or expired, or none succeeds before the
// lease would expire, it cancels the load with ErrLeaseLost.
func (l *lease) keep(ctx context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTicker(l.ttl / 3)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := l.renew(ctx)
		switch {
		case err == nil:
			renewed = time.Now()
		case errors.Is(err, ErrLeaseLost) || time.Since(renewed) >= l.ttl:
			cancel(ErrLeaseLost)
			return
		}
	}
}

// release deletes the lease, even once the load's context has ended.
func (l *lease) release(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_, err := l.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: l.id}, {Key: "owner", Value: l.owner}})
	return err
}

// leased runs load while holding dataset d's lease, and checks that it
// still holds it when load calls check (just before the swap).
func (s *Store) leased(ctx context.Context, d search.Dataset, load func(ctx context.Context, check func(context.Context) error) (search.LoadStats, error)) (search.LoadStats, error) {
	l, err := s.acquire(ctx, d)
	if err != nil {
		return search.LoadStats{}, err
	}
	defer func() {
		if err := l.release(ctx); err != nil {
			s.log.Warn("cannot release the lease; it expires by itself", "dataset", d, "ttl", l.ttl, "err", s.fail(ctx, "release", err))
		}
	}()
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.keep(lctx, cancel)
	}()
	defer func() { cancel(nil); <-done }()
	stats, err := load(lctx, l.renew)
	if err != nil && errors.Is(context.Cause(lctx), ErrLeaseLost) {
		err = fmt.Errorf("%w: %w", ErrLeaseLost, err)
	}
	return stats, err
}
