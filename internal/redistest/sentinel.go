package redistest

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
)

// SentinelMaster is the name under which a Sentinel started by StartSentinel
// watches its master.
const SentinelMaster = "mymaster"

// Sentinel is a master and one Sentinel server watching it.
type Sentinel struct {
	Master, Sentinel *Server
}

// StartSentinel starts a master and a Sentinel watching it as
// SentinelMaster for the calling test, waits until the Sentinel names the
// master, and stops both when the test ends. redis-server runs as a
// Sentinel with --sentinel, so nothing more needs installing.
func StartSentinel(tb testing.TB) *Sentinel {
	tb.Helper()
	dir := tb.TempDir()
	master := startFor(tb, &Server{dir: filepath.Join(dir, "master")})
	s := startFor(tb, &Server{dir: filepath.Join(dir, "sentinel"), kind: sentinel, master: master.Addr()})
	poll.UntilNil(tb, readyTimeout, func() error {
		addr, err := s.do(tb, "sentinel", "get-master-addr-by-name", SentinelMaster).StringSlice()
		if err != nil {
			return fmt.Errorf("redistest: Sentinel %s: %w", s.Addr(), err)
		}
		if len(addr) != 2 || net.JoinHostPort(addr[0], addr[1]) != master.Addr() {
			return fmt.Errorf("redistest: Sentinel %s names %q as the master, want %s", s.Addr(), addr, master.Addr())
		}
		return nil
	})
	return &Sentinel{Master: master, Sentinel: s}
}

// URL returns the redis+sentinel:// URL of the master through the Sentinel,
// database 0.
func (s *Sentinel) URL() string {
	return "redis+sentinel://" + s.Sentinel.Addr() + "/" + SentinelMaster + "/0"
}

// sentinelConfig is the config file of a Sentinel watching master, which
// one Sentinel may declare down alone (quorum 1).
func sentinelConfig(master string) (string, error) {
	host, port, err := net.SplitHostPort(master)
	if err != nil || host == "" {
		return "", fmt.Errorf("the master of a Sentinel is host:port, not %q", master)
	}
	return strings.Join([]string{
		fmt.Sprintf("sentinel monitor %s %s %s 1", SentinelMaster, host, port),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", SentinelMaster, (5 * time.Second).Milliseconds()),
		"",
	}, "\n"), nil
}
