package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// defaultHealthcheckTimeout bounds healthcheck's wait for serve: longer than
// the 800 ms that /readyz gives its checks, short enough for the few
// seconds that an orchestrator's probe allows.
const defaultHealthcheckTimeout = 2 * time.Second

// maxHealthBody bounds what healthcheck reads of an answer; serve's are tiny.
const maxHealthBody = 64 << 10

type healthcheckOptions struct {
	// Ready asks /readyz (ready for traffic) rather than /healthz (alive).
	Ready bool
}

func newHealthcheckCmd(a *app) *cobra.Command {
	var opts healthcheckOptions
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when serve at --addr answers /healthz (/readyz with --ready)",
		Long: `Healthcheck asks serve at --addr (the loopback when its host is empty, 0.0.0.0
or ::) for GET /healthz, or /readyz with --ready, and exits 0 when it answers
200 (ok, or degraded for /readyz); otherwise it prints one line that says why
and exits 1, within --probe-timeout. It is for container HEALTHCHECKs and exec probes
in an image without a shell or curl.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runHealthcheck(cmd.Context(), cmd.OutOrStdout(), a.cfg, opts)
		},
	}
	addSettingFlags(cmd.Flags(), cmdHealthcheck)
	addr := cmd.Flags().Lookup(settingAddr.flag)
	addr.Usage = strings.Replace(addr.Usage, settingAddr.doc, "address serve listens on", 1)
	cmd.Flags().BoolVar(&opts.Ready, "ready", false, "ask /readyz: succeed only when serve is ready for traffic")
	return cmd
}

// healthBody is what healthcheck reads of /healthz's and /readyz's JSON.
type healthBody struct {
	Status string   `json:"status"`
	Failed []string `json:"failed"`
}

// runHealthcheck asks serve at cfg's address and prints its status, or
// returns why serve is not healthy (or ready), in one line.
func runHealthcheck(ctx context.Context, out io.Writer, cfg *config, opts healthcheckOptions) error {
	addr := probeAddr(cfg.Server.Addr)
	path, healthy := "/healthz", "healthy"
	if opts.Ready {
		path, healthy = "/readyz", "ready"
	}
	timeout := cfg.Healthcheck.Timeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return fmt.Errorf("healthcheck %s: %w", addr, err)
	}
	// A probe of the loopback never goes through a proxy, nor keeps its
	// connection: the process exits.
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("serve at %s did not answer %s within %s", addr, path, timeout)
		}
		return fmt.Errorf("serve at %s does not answer %s: %w", addr, path, requestCause(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHealthBody))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("serve at %s did not finish answering %s within %s", addr, path, timeout)
		}
		return fmt.Errorf("serve at %s: read its answer to %s: %w", addr, path, err)
	}
	var body healthBody
	if json.Unmarshal(data, &body) != nil || body.Status == "" {
		return fmt.Errorf("%s at %s answered %d %.60q, not as cityfinder serve does", path, addr, resp.StatusCode, data)
	}
	status := body.Status
	if len(body.Failed) > 0 {
		status += " (failed: " + strings.Join(body.Failed, ", ") + ")"
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("serve at %s is not %s: %s answered %d %s", addr, healthy, path, resp.StatusCode, status)
	}
	_, err = fmt.Fprintf(out, "%s %s\n", path, status)
	return err
}

// probeAddr is where to ask serve that listens on addr: on the loopback when
// addr names no host or every address, as ":8080" and "0.0.0.0:8080" do.
func probeAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr // validated with the config; the request says what is wrong
	}
	switch ip := net.ParseIP(host); {
	case host == "", ip != nil && ip.To4() != nil && ip.IsUnspecified():
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}

// requestCause strips the "Get URL: dial tcp ADDR:" prefixes of a failed
// connection, which repeat what healthcheck's message says, down to the
// cause a person reads (connection refused, no such host).
func requestCause(err error) error {
	var op *net.OpError
	if !errors.As(err, &op) {
		return err
	}
	cause := op.Err
	for next := errors.Unwrap(cause); next != nil; next = errors.Unwrap(cause) {
		cause = next
	}
	return cause
}
