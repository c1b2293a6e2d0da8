package server

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cityfinder/cityfinder/pkg/breaker"
)

// BreakerMetrics exports the circuit breakers (see package breaker) in
// front of the services a server depends on, by name, read at each scrape:
//
//	cityfinder_breaker_state{breaker,state}     1 for the state each is in (closed, open, half_open), 0 for the others
//	cityfinder_breaker_opened_total{breaker}    times each opened
//	cityfinder_breaker_rejected_total{breaker}  calls each refused, sparing the service
//
// /readyz shows an open breaker through the check of the service behind
// it: the check's word is "circuit_open".
func BreakerMetrics(breakers map[string]*breaker.Breaker) prometheus.Collector {
	c := breakerCollector{breakers: breakers}
	for name := range breakers {
		c.names = append(c.names, name)
	}
	slices.Sort(c.names)
	return c
}

var (
	breakerStateDesc = prometheus.NewDesc("cityfinder_breaker_state",
		"Whether each circuit breaker is in each state (1) or not (0): closed lets calls through, open refuses them at once, "+
			"half_open lets one probe through.", []string{"breaker", "state"}, nil)
	breakerOpenedDesc = prometheus.NewDesc("cityfinder_breaker_opened_total",
		"Times each circuit breaker opened after its service failed too often.", []string{"breaker"}, nil)
	breakerRejectedDesc = prometheus.NewDesc("cityfinder_breaker_rejected_total",
		"Calls each circuit breaker refused at once while open.", []string{"breaker"}, nil)
)

type breakerCollector struct {
	breakers map[string]*breaker.Breaker
	names    []string // sorted
}

func (c breakerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- breakerStateDesc
	ch <- breakerOpenedDesc
	ch <- breakerRejectedDesc
}

func (c breakerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range c.names {
		st := c.breakers[name].Stats()
		for _, s := range breaker.States {
			v := 0.0
			if s == st.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(breakerStateDesc, prometheus.GaugeValue, v, name, s.String())
		}
		ch <- prometheus.MustNewConstMetric(breakerOpenedDesc, prometheus.CounterValue, float64(st.Opened), name)
		ch <- prometheus.MustNewConstMetric(breakerRejectedDesc, prometheus.CounterValue, float64(st.Rejected), name)
	}
}
