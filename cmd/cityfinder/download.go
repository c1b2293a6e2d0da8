package main

import (
	"fmt"
	"time"

	"github.com/cityfinder/cityfinder/pkg/importer"
)

// The timeouts of import's download of the small dataset (see
// importer.Timeouts), so that a network or proxy that stalls fails the
// import instead of hanging it.
var (
	settingDownloadConnectTimeout = setting{"download.connect_timeout", "download-connect-timeout", importer.DefaultTimeouts().Connect, "longest wait to connect to the download's server or proxy"}
	settingDownloadTLSTimeout     = setting{"download.tls_timeout", "download-tls-timeout", importer.DefaultTimeouts().TLS, "longest TLS handshake of the download"}
	settingDownloadHeaderTimeout  = setting{"download.header_timeout", "download-header-timeout", importer.DefaultTimeouts().Header, "longest wait for the download's server (or proxy) to answer"}
	settingDownloadIdleTimeout    = setting{"download.idle_timeout", "download-idle-timeout", importer.DefaultTimeouts().Idle, "longest wait for more of the downloaded file"}
	downloadSettings              = []setting{settingDownloadConnectTimeout, settingDownloadTLSTimeout, settingDownloadHeaderTimeout, settingDownloadIdleTimeout}
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
		flagDuration{settingDownloadConnectTimeout.flag, d.ConnectTimeout}, flagDuration{settingDownloadTLSTimeout.flag, d.TLSTimeout},
		flagDuration{settingDownloadHeaderTimeout.flag, d.HeaderTimeout}, flagDuration{settingDownloadIdleTimeout.flag, d.IdleTimeout})
}

// flagDuration is a duration setting's flag and value, for validation.
type flagDuration struct {
	flag string
	d    time.Duration
}

// durationErrors reports each negative duration, and each zero one unless
// zero is allowed (it then means "none" or "off").
func durationErrors(zeroAllowed bool, ds ...flagDuration) []error {
	var errs []error
	for _, fd := range ds {
		switch {
		case fd.d < 0 && zeroAllowed:
			errs = append(errs, fmt.Errorf("invalid --%s %s: must be 0 or more", fd.flag, fd.d))
		case fd.d <= 0 && !zeroAllowed:
			errs = append(errs, fmt.Errorf("invalid --%s %s: must be positive", fd.flag, fd.d))
		}
	}
	return errs
}
