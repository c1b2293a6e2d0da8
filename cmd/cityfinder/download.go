package main

import (
	"time"

	"github.com/cityfinder/cityfinder/pkg/importer"
)

// downloadTimeouts are the configured timeouts of the download.
func downloadTimeouts(c *config) importer.Timeouts {
	d := c.Download
	return importer.Timeouts{Connect: d.ConnectTimeout, TLS: d.TLSTimeout, Header: d.HeaderTimeout, Idle: d.IdleTimeout}
}

// validateDownload checks the download's timeouts: each must be positive.
func validateDownload(c *config) []error {
	d := c.Download
	return durationErrors(false,
		settingDuration{settingDownloadConnectTimeout, d.ConnectTimeout}, settingDuration{settingDownloadTLSTimeout, d.TLSTimeout},
		settingDuration{settingDownloadHeaderTimeout, d.HeaderTimeout}, settingDuration{settingDownloadIdleTimeout, d.IdleTimeout})
}

// settingDuration is a duration setting and its value, for validation.
type settingDuration struct {
	s *setting
	d time.Duration
}

// durationErrors reports each negative duration, and each zero one unless
// zero is allowed (it then means "none" or "off").
func durationErrors(zeroAllowed bool, ds ...settingDuration) []error {
	var errs []error
	for _, sd := range ds {
		switch {
		case sd.d < 0 && zeroAllowed:
			errs = append(errs, invalidValue(sd.s, sd.d, "must be 0 or more"))
		case sd.d <= 0 && !zeroAllowed:
			errs = append(errs, invalidValue(sd.s, sd.d, "must be positive"))
		}
	}
	return errs
}
