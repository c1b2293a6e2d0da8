package main

import (
	"time"

	"github.com/cityfinder/cityfinder/pkg/importer"
)

// downloadOptions are the configured timeouts and size cap of the
// download, into dir.
func downloadOptions(c *config, dir string) importer.DownloadOptions {
	return importer.DownloadOptions{Timeouts: downloadTimeouts(c), MaxBytes: int64(c.Download.MaxBytes), Dir: dir}
}

// downloadTimeouts are the configured timeouts of the download.
func downloadTimeouts(c *config) importer.Timeouts {
	d := c.Download
	return importer.Timeouts{Connect: d.ConnectTimeout, TLS: d.TLSTimeout, Header: d.HeaderTimeout, Idle: d.IdleTimeout, Total: d.Timeout}
}

// validateDownload checks the download's timeouts, each of which must be
// positive, and its size cap, at least a byte.
func validateDownload(c *config) []error {
	d := c.Download
	errs := durationErrors(false,
		settingDuration{settingDownloadConnectTimeout, d.ConnectTimeout}, settingDuration{settingDownloadTLSTimeout, d.TLSTimeout},
		settingDuration{settingDownloadHeaderTimeout, d.HeaderTimeout}, settingDuration{settingDownloadIdleTimeout, d.IdleTimeout},
		settingDuration{settingDownloadTimeout, d.Timeout})
	if d.MaxBytes < 1 {
		errs = append(errs, invalidValue(settingDownloadMaxBytes, d.MaxBytes, "must be at least 1"))
	}
	return errs
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
