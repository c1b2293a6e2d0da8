package main

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// watched is what serve watches besides the answers of its datasets: the
// circuit breakers in front of its services, and the embedded store's
// snapshot files.
type watched struct {
	breakers breakers
	files    *embedded.FileCheck // nil unless the store is the embedded one
}

// newWatched starts watching the files of store, if it is the embedded
// store.
func newWatched(store search.Store) watched {
	w := watched{breakers: make(breakers)}
	if e, ok := store.(*embedded.Store); ok {
		w.files = embedded.NewFileCheck(e)
	}
	return w
}

// The words of /readyz for a dataset whose snapshot file no longer holds
// what is served.
const (
	fileGone    = "file_gone"
	fileCorrupt = "file_corrupt"
	fileError   = "file_error"
)

// datasetCheck is the readiness check of dataset d: that it answers (see
// server.DatasetCheck) and that its snapshot file still holds it. A file
// removed or damaged under a running serve only degrades /readyz (searches
// go on from memory) but says so, for the next restart would lose the
// dataset.
func (w watched) datasetCheck(svc *search.Service, d search.Dataset) server.Check {
	check := server.DatasetCheck(svc, d)
	if w.files == nil {
		return check
	}
	answers := check.Run
	check.Run = func(ctx context.Context) error {
		if err := answers(ctx); err != nil {
			return err
		}
		return fileProblem(w.files.Check(d))
	}
	return check
}

// fileProblem turns a FileCheck's error into a degraded check's.
func fileProblem(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, embedded.ErrFileGone):
		return server.Degraded(fileGone, err)
	case errors.Is(err, search.ErrCorrupt):
		return server.Degraded(fileCorrupt, err)
	}
	return server.Degraded(fileError, err)
}

// collectors are the metrics of what is watched.
func (w watched) collectors() []prometheus.Collector {
	cs := []prometheus.Collector{server.BreakerMetrics(w.breakers)}
	if w.files != nil {
		cs = append(cs, fileCollector{w.files})
	}
	return cs
}

var datasetFileDesc = prometheus.NewDesc("cityfinder_dataset_file_ok",
	"Whether the snapshot file of each dataset served from memory is still whole on disk (1), or removed or damaged (0) "+
		"so that a restart would lose the dataset; absent for a dataset not served.", []string{"dataset"}, nil)

// fileCollector exports cityfinder_dataset_file_ok, checked at each scrape.
type fileCollector struct{ files *embedded.FileCheck }

func (c fileCollector) Describe(ch chan<- *prometheus.Desc) { ch <- datasetFileDesc }

func (c fileCollector) Collect(ch chan<- prometheus.Metric) {
	for _, d := range search.Datasets {
		if !c.files.Serves(d) {
			continue
		}
		ok := 1.0
		if c.files.Check(d) != nil {
			ok = 0
		}
		ch <- prometheus.MustNewConstMetric(datasetFileDesc, prometheus.GaugeValue, ok, string(d))
	}
}
