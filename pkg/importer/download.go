package importer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	neturl "net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// OKFNURL is where the okfn world-cities CSV (the small dataset) is published.
const OKFNURL = "https://raw.githubusercontent.com/datasets/world-cities/master/data/world-cities.csv"

// Timeouts bound each phase of a download, so that a server or proxy that
// stops answering fails the download instead of hanging it. Zero fields get
// the DefaultTimeouts.
type Timeouts struct {
	// Connect bounds resolving the host and connecting to it (or to the
	// proxy).
	Connect time.Duration
	// TLS bounds each TLS handshake.
	TLS time.Duration
	// Header bounds the wait for the response headers once the request is
	// sent, and for a proxy's answer to CONNECT.
	Header time.Duration
	// Idle bounds the wait for each part of the body.
	Idle time.Duration
	// Total bounds the whole download, from the request to the last byte,
	// so that a server that trickles its file, never idle for long, cannot
	// hold an import for ever.
	Total time.Duration
}

// DefaultTimeouts are generous for the okfn CSV (about 1 MB) on a slow
// network, and still end a stalled download within a minute; the hour of
// Total brings allCountries.zip (about 400 MB) at 120 KB/s.
func DefaultTimeouts() Timeouts {
	return Timeouts{Connect: 10 * time.Second, TLS: 10 * time.Second, Header: 30 * time.Second, Idle: 30 * time.Second, Total: time.Hour}
}

func (t Timeouts) withDefaults() Timeouts {
	d := DefaultTimeouts()
	if t.Connect <= 0 {
		t.Connect = d.Connect
	}
	if t.TLS <= 0 {
		t.TLS = d.TLS
	}
	if t.Header <= 0 {
		t.Header = d.Header
	}
	if t.Idle <= 0 {
		t.Idle = d.Idle
	}
	if t.Total <= 0 {
		t.Total = d.Total
	}
	return t
}

// Phases of a download, as TimeoutError names them.
const (
	PhaseConnect = "connect"
	PhaseTLS     = "tls"
	PhaseHeader  = "header"
	PhaseIdle    = "idle"
	PhaseTotal   = "total"
)

// TimeoutError is how a download ends when one of its phases outlasts its
// timeout (see Timeouts).
type TimeoutError struct {
	Phase string // PhaseConnect, PhaseTLS, PhaseHeader, PhaseIdle or PhaseTotal
	After time.Duration
}

func (e *TimeoutError) Error() string {
	switch e.Phase {
	case PhaseConnect:
		return fmt.Sprintf("timed out: not connected within %s", e.After)
	case PhaseTLS:
		return fmt.Sprintf("timed out: no TLS handshake within %s", e.After)
	case PhaseHeader:
		return fmt.Sprintf("timed out: no answer within %s", e.After)
	case PhaseTotal:
		return fmt.Sprintf("timed out: not downloaded within %s", e.After)
	default:
		return fmt.Sprintf("timed out: no data for %s", e.After)
	}
}

// Timeout reports true, as net.Error's Timeout does.
func (e *TimeoutError) Timeout() bool { return true }

// DefaultMaxDownloadBytes is the largest file a download brings when
// DownloadOptions.MaxBytes does not say: room for a GeoNames dump
// (allCountries.zip is about 400 MB, its text about 1.6 GB) that still ends
// an endless body long before most disks are full.
const DefaultMaxDownloadBytes = 4 << 30

// ErrDownloadTooLarge means a download's file is larger than
// DownloadOptions.MaxBytes, by what the server announced or by what it sent.
var ErrDownloadTooLarge = errors.New("download too large")

// DownloadOptions tune Download; the zero value gives the defaults.
type DownloadOptions struct {
	// Client makes the request. Nil means a client that honours the
	// HTTPS_PROXY and HTTP_PROXY environment variables and has no timeouts
	// of its own besides Timeouts.
	Client *http.Client
	// Progress, when not nil, hears the bytes received.
	Progress Progress
	// Timeouts bound each phase of the download, and the whole of it.
	Timeouts Timeouts
	// MaxBytes is the largest file the download may bring; 0 means
	// DefaultMaxDownloadBytes. A larger one fails it with an error
	// matching ErrDownloadTooLarge, before its body is read when the
	// server announces its length.
	MaxBytes int64
	// Dir is the directory an import downloads a source given as a URL
	// into (see Source); Download itself ignores it. Empty: an import
	// downloads nothing.
	Dir string
}

// Download fetches url into the file dst. It streams the body into a
// temporary file next to dst and renames it to dst only once the whole body
// has arrived, so dst is never left half-written. Each phase of the
// download, and the whole of it, is bounded by opts.Timeouts, and its size
// by opts.MaxBytes. The error names the URL and
// suggests importing a local copy instead.
func Download(ctx context.Context, url, dst string, opts DownloadOptions) error {
	if err := download(ctx, url, dst, opts); err != nil {
		return fmt.Errorf("download %s: %w (without network access, fetch the file another way and pass --file PATH instead)", redacted(url), err)
	}
	return nil
}

func download(ctx context.Context, url, dst string, opts DownloadOptions) (err error) {
	client := opts.Client
	if client == nil {
		client = defaultClient()
	}
	t := opts.Timeouts.withDefaults()
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxDownloadBytes
	}
	ctx, stop := context.WithTimeoutCause(ctx, t.Total, &TimeoutError{Phase: PhaseTotal, After: t.Total})
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	wd := &watchdog{cancel: cancel}
	defer wd.stop()
	defer func() {
		// The watchdog ends the request by cancelling its context: say why.
		var te *TimeoutError
		if err != nil && errors.As(context.Cause(ctx), &te) {
			err = te
		}
	}()
	wd.arm(PhaseConnect, t.Connect)
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, wd.trace(t)), http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("server answered %s", resp.Status)
	}
	if resp.ContentLength > limit {
		return tooLarge(fmt.Sprintf("%s bytes, more than", thousands(resp.ContentLength)), limit)
	}
	wd.arm(PhaseIdle, t.Idle)

	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.part")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var w io.Writer = f
	var pw *progressWriter
	if opts.Progress != nil {
		pw = &progressWriter{w: f, p: opts.Progress}
		w = pw
	}
	// One byte past the limit tells a file of exactly limit bytes from a
	// larger one.
	n, err := io.Copy(w, io.LimitReader(&idleReader{r: resp.Body, wd: wd, idle: t.Idle}, limit+1))
	if err != nil {
		return err
	}
	if n > limit {
		return tooLarge("more than", limit)
	}
	wd.stop()
	if pw != nil {
		pw.flush()
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), dst)
}

// tooLarge is the error of a file larger than limit: "the file is " what
// " 4,294,967,296 bytes".
func tooLarge(what string, limit int64) error {
	return fmt.Errorf("%w: the file is %s %s bytes", ErrDownloadTooLarge, what, thousands(limit))
}

// thousands writes n with thousands separators, as the summaries do.
func thousands(n int64) string {
	return message.NewPrinter(language.English).Sprintf("%d", n)
}

// defaultClient honours the proxy environment like http.DefaultClient but
// leaves every timeout to the watchdog, so that a longer timeout than
// net/http's defaults is obeyed and each phase's error says which it was.
func defaultClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 0
	return &http.Client{Transport: tr}
}

// watchdog cancels a download whose current phase outlasts its timeout:
// each step of the request re-arms it for the next phase, and each read of
// the body for another idle wait.
type watchdog struct {
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  *time.Timer
}

func (wd *watchdog) arm(phase string, d time.Duration) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.timer != nil {
		wd.timer.Stop()
	}
	wd.timer = time.AfterFunc(d, func() { wd.cancel(&TimeoutError{Phase: phase, After: d}) })
}

func (wd *watchdog) stop() {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.timer != nil {
		wd.timer.Stop()
	}
}

// trace moves the watchdog through the phases of the request: connected
// (to the server or the proxy), then a TLS handshake for https, then the
// wait for an answer; a proxy's answer to CONNECT counts as one.
func (wd *watchdog) trace(t Timeouts) *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				wd.arm(PhaseHeader, t.Header)
			}
		},
		TLSHandshakeStart: func() { wd.arm(PhaseTLS, t.TLS) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { wd.arm(PhaseHeader, t.Header) },
		WroteRequest:      func(httptrace.WroteRequestInfo) { wd.arm(PhaseHeader, t.Header) },
	}
}

// idleReader re-arms the watchdog for another idle wait after each read
// that brings data.
type idleReader struct {
	r    io.Reader
	wd   *watchdog
	idle time.Duration
}

func (ir *idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.wd.arm(PhaseIdle, ir.idle)
	}
	return n, err
}

// progressWriter reports the bytes written through it every progressStep.
type progressWriter struct {
	w       io.Writer
	p       Progress
	pending int64
}

func (pw *progressWriter) Write(b []byte) (int, error) {
	n, err := pw.w.Write(b)
	pw.pending += int64(n)
	if pw.pending >= progressStep {
		pw.flush()
	}
	return n, err
}

func (pw *progressWriter) flush() {
	if pw.pending > 0 {
		pw.p.Advance(pw.pending, 0)
		pw.pending = 0
	}
}

// redacted is rawURL as messages show it: a password in it is masked, so
// that the URL of a copy behind basic authentication never reaches a log.
func redacted(rawURL string) string {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return "the URL given" // unparsable: it may hold anything
	}
	return u.Redacted()
}
