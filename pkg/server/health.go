package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// readyTimeout bounds one run of the readiness checks, so that a probe gets
// its answer even when a backing service hangs, and within the one second
// that Kubernetes gives a probe by default.
const readyTimeout = 800 * time.Millisecond

// Check is one readiness check of GET /readyz.
type Check struct {
	// Name identifies the check in the /readyz body and in the
	// cityfinder_check_up metric, for example "dataset:small".
	Name string
	// Run returns nil when what it checks is ready. Its ctx ends after
	// 800 ms; a check that is still running then counts as failed.
	Run func(ctx context.Context) error
	// Optional marks a check whose failure degrades the service but leaves
	// it worth sending traffic to: /readyz still answers 200, with status
	// "degraded" (for example a rate limit store that fails open).
	Optional bool
}

// WithReadiness adds checks to GET /readyz, which runs them all, at once,
// on every call (and on every scrape of /metrics, as cityfinder_check_up).
// Without checks /readyz is ready as soon as the process answers. Names
// must be unique and not empty; New panics otherwise.
func WithReadiness(checks ...Check) Option {
	return func(o *options) { o.ops.checks = append(o.ops.checks, checks...) }
}

// DatasetCheck is a required check, named "dataset:<d>", that dataset d of
// the service is loaded and its store answers (see search.Store.Stats): an
// empty dataset (search.ErrEmptyDataset) or a backing service that is down
// (search.ErrUnavailable) fails it.
func DatasetCheck(service *search.Service, d search.Dataset) Check {
	return Check{Name: "dataset:" + string(d), Run: func(ctx context.Context) error {
		_, err := service.Stats(ctx, d)
		return err
	}}
}

// Statuses of /readyz.
const (
	readyOK          = "ok"
	readyDegraded    = "degraded"    // an optional check fails: 200
	readyUnavailable = "unavailable" // a required check fails: 503
)

// readyBody is the JSON of /readyz, for example
//
//	{"status":"unavailable","checks":{"dataset:large":"empty","dataset:small":"ok"},"failed":["dataset:large"]}
type readyBody struct {
	Status string `json:"status"`
	// Checks maps each check to "ok" or what went wrong, in a word of
	// errorTable that reveals nothing of the backend (the log has the
	// error itself).
	Checks map[string]string `json:"checks"`
	Failed []string          `json:"failed,omitempty"`
}

// healthz answers GET /healthz: the process is alive and serving.
func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header()["Cache-Control"] = noStore
	h.writeJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
	}{readyOK})
}

// readyz answers GET /readyz: 200 when every required check passes, 503
// when one fails, with each check's result.
func (h *handler) readyz(w http.ResponseWriter, r *http.Request) {
	body := readyBody{Status: readyOK, Checks: make(map[string]string)}
	status := http.StatusOK
	for _, res := range h.ops.readiness.run(r.Context()) {
		if res.err == nil {
			body.Checks[res.name] = readyOK
			continue
		}
		word, degrades := checkWord(res.err)
		body.Checks[res.name] = word
		body.Failed = append(body.Failed, res.name)
		switch {
		case !res.optional && !degrades:
			body.Status, status = readyUnavailable, http.StatusServiceUnavailable
		case body.Status == readyOK:
			body.Status = readyDegraded
		}
	}
	w.Header()["Cache-Control"] = noStore
	h.writeJSON(w, status, body)
}

// Degraded returns a check's failure that degrades the service without
// failing it, even for a required check: what is checked still works, but
// something behind it needs attention, such as a dataset answered from
// memory whose file is gone. /readyz shows reason as the check's word and
// answers 200 "degraded" (unless another check fails it);
// cityfinder_check_up is 0. The log has err.
func Degraded(reason string, err error) error { return &degradedError{reason: reason, err: err} }

type degradedError struct {
	reason string
	err    error
}

func (e *degradedError) Error() string { return e.err.Error() }
func (e *degradedError) Unwrap() error { return e.err }

// checkWord is what /readyz says of a failed check, and whether the
// failure only degrades the service (see Degraded).
func checkWord(err error) (word string, degrades bool) {
	var d *degradedError
	if errors.As(err, &d) {
		return d.reason, true
	}
	return lookupError(err).reason, false
}

// readiness runs the checks and logs when one starts or stops failing, so
// that probes every few seconds do not repeat the same error.
type readiness struct {
	checks []Check
	logger *slog.Logger

	mu      sync.Mutex
	failing map[string]bool
}

type checkResult struct {
	name     string
	optional bool
	err      error
}

func newReadiness(checks []Check, logger *slog.Logger) *readiness {
	seen := make(map[string]bool, len(checks))
	for _, c := range checks {
		if c.Name == "" || c.Run == nil || seen[c.Name] {
			panic(fmt.Sprintf("server.New: readiness check %q: empty, without Run or named twice", c.Name))
		}
		seen[c.Name] = true
	}
	return &readiness{checks: checks, logger: logger, failing: make(map[string]bool)}
}

// run runs every check concurrently and returns their results in the order
// of the checks, within readyTimeout: a check that has not returned by then
// (or that panicked) fails, and is left to finish on its own.
func (rd *readiness) run(ctx context.Context) []checkResult {
	if len(rd.checks) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	type done struct {
		i   int
		err error
	}
	dones := make(chan done, len(rd.checks)) // buffered: a late check never blocks
	for i, c := range rd.checks {
		go func() {
			defer func() {
				if p := recover(); p != nil {
					dones <- done{i, fmt.Errorf("check %s panicked: %v", c.Name, p)}
				}
			}()
			dones <- done{i, c.Run(ctx)}
		}()
	}
	errs := make([]error, len(rd.checks))
	answered := make([]bool, len(rd.checks))
wait:
	for range rd.checks {
		select {
		case d := <-dones:
			errs[d.i], answered[d.i] = d.err, true
		case <-ctx.Done():
			break wait
		}
	}
	results := make([]checkResult, len(rd.checks))
	for i, c := range rd.checks {
		err := errs[i]
		if !answered[i] {
			err = fmt.Errorf("check %s did not answer: %w", c.Name, context.Cause(ctx))
		}
		results[i] = checkResult{name: c.Name, optional: c.Optional, err: err}
	}
	rd.record(ctx, results)
	return results
}

// record logs the checks that started failing (Warn) or recovered (Info)
// since the previous run.
func (rd *readiness) record(ctx context.Context, results []checkResult) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	for _, res := range results {
		was := rd.failing[res.name]
		switch {
		case res.err != nil && !was:
			rd.logger.LogAttrs(ctx, slog.LevelWarn, "readiness check failing",
				slog.String("check", res.name), slog.Bool("optional", res.optional), slog.Any("error", res.err))
		case res.err == nil && was:
			rd.logger.LogAttrs(ctx, slog.LevelInfo, "readiness check recovered", slog.String("check", res.name))
		}
		rd.failing[res.name] = res.err != nil
	}
}

// checkUpDesc describes cityfinder_check_up.
var checkUpDesc = prometheus.NewDesc("cityfinder_check_up",
	"Whether a readiness check of /readyz passes (1) or fails (0), run at each scrape.",
	[]string{"check"}, nil)

// collector exports the checks as cityfinder_check_up, run at each scrape,
// so that a dashboard sees a store go down even without traffic or probes.
func (rd *readiness) collector() prometheus.Collector { return checkCollector{rd} }

type checkCollector struct{ rd *readiness }

func (c checkCollector) Describe(ch chan<- *prometheus.Desc) { ch <- checkUpDesc }

func (c checkCollector) Collect(ch chan<- prometheus.Metric) {
	for _, res := range c.rd.run(context.Background()) {
		up := 1.0
		if res.err != nil {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(checkUpDesc, prometheus.GaugeValue, up, res.name)
	}
}
