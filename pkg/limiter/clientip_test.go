package limiter_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/storetest"
)

// mustClientIP returns a ClientIP that trusts the networks in trusted.
func mustClientIP(tb testing.TB, ipv6Prefix int, trusted ...string) *limiter.ClientIP {
	tb.Helper()
	prefixes, err := limiter.ParsePrefixes(trusted)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := limiter.NewClientIP(prefixes, ipv6Prefix)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// request is a request from remoteAddr with one X-Forwarded-For line per
// element of xff.
func request(remoteAddr string, xff ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/search?q=par", nil)
	r.RemoteAddr = remoteAddr
	for _, v := range xff {
		r.Header.Add("X-Forwarded-For", v)
	}
	return r
}

func TestClientIPKey(t *testing.T) {
	const proxy = "10.0.0.1:5555" // inside the trusted 10.0.0.0/8
	tests := []struct {
		name       string
		remoteAddr string
		xff        []string
		want       string
	}{
		// Who the peer is, without proxies.
		{"IPv4 by address", "192.0.2.1:1234", nil, "192.0.2.1"},
		{"IPv6 by /64", "[2001:db8:1:2:3:4:5:6]:1234", nil, "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6 as IPv4", "[::ffff:192.0.2.1]:1234", nil, "192.0.2.1"},
		{"zone dropped", "[fe80::1%eth0]:80", nil, "fe80::/64"},
		{"no port", "192.0.2.1", nil, "192.0.2.1"},
		{"not an IP", "@", nil, "@"},
		{"empty", "", nil, ""},

		// An untrusted peer's headers are never read.
		{"untrusted peer sends X-Forwarded-For", "203.0.113.9:1", []string{"198.51.100.7"}, "203.0.113.9"},
		{"untrusted peer names a trusted proxy", "203.0.113.9:1", []string{"198.51.100.7, 10.0.0.1"}, "203.0.113.9"},

		// A trusted proxy's header: the right-most untrusted entry.
		{"one proxy", proxy, []string{"198.51.100.7"}, "198.51.100.7"},
		{"two proxies", proxy, []string{"198.51.100.7, 10.0.0.2"}, "198.51.100.7"},
		{"client's own entries are skipped", proxy, []string{"1.2.3.4, 5.6.7.8, 198.51.100.7"}, "198.51.100.7"},
		{"client's forged proxy entry is skipped", proxy, []string{"10.9.9.9, 198.51.100.7, 10.0.0.2"}, "198.51.100.7"},
		{"several header lines, last is right-most", proxy, []string{"1.2.3.4", "198.51.100.7, 10.0.0.2"}, "198.51.100.7"},
		{"right-most entry in an earlier line", proxy, []string{"198.51.100.7", "10.0.0.2"}, "198.51.100.7"},
		{"no spaces", proxy, []string{"1.2.3.4,198.51.100.7"}, "198.51.100.7"},
		{"entry with a port", proxy, []string{"198.51.100.7:4711"}, "198.51.100.7"},
		{"IPv6 entry grouped", proxy, []string{"2001:db8:1:2:3:4:5:6"}, "2001:db8:1:2::/64"},
		{"IPv6 entry with a port", proxy, []string{"[2001:db8::1]:443"}, "2001:db8::/64"},
		{"IPv4-mapped entry", proxy, []string{"::ffff:198.51.100.7"}, "198.51.100.7"},
		{"everyone trusted: the left-most", proxy, []string{"10.0.0.5, 10.0.0.2"}, "10.0.0.5"},

		// Malformed: the peer, never an entry further left.
		{"no header", proxy, nil, "10.0.0.1"},
		{"empty header", proxy, []string{""}, "10.0.0.1"},
		{"garbage", proxy, []string{"not-an-ip"}, "10.0.0.1"},
		{"garbage right-most", proxy, []string{"198.51.100.7, garbage"}, "10.0.0.1"},
		{"empty entry right-most", proxy, []string{"198.51.100.7,"}, "10.0.0.1"},
		{"garbage after a trusted entry", proxy, []string{"198.51.100.7, junk, 10.0.0.2"}, "10.0.0.1"},
		{"garbage left of the client is never read", proxy, []string{"junk, 198.51.100.7"}, "198.51.100.7"},
		{"obfuscated identifier", proxy, []string{"_hidden"}, "10.0.0.1"},
		{"unknown", proxy, []string{"unknown"}, "10.0.0.1"},
	}
	c := mustClientIP(t, 0, "10.0.0.0/8")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Key(request(tt.remoteAddr, tt.xff...)); got != tt.want {
				t.Fatalf("Key(RemoteAddr %q, X-Forwarded-For %q) = %q, want %q", tt.remoteAddr, tt.xff, got, tt.want)
			}
		})
	}
}

func TestClientIPIPv6Prefix(t *testing.T) {
	tests := []struct {
		prefix int
		want   string
	}{
		{0, "2001:db8:1:2::/64"}, // the default
		{64, "2001:db8:1:2::/64"},
		{56, "2001:db8:1::/56"},
		{48, "2001:db8:1::/48"},
		{128, "2001:db8:1:2:3:4:5:6"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.prefix), func(t *testing.T) {
			c := mustClientIP(t, tt.prefix)
			if got := c.Key(request("[2001:db8:1:2:3:4:5:6]:1")); got != tt.want {
				t.Errorf("IPv6 client: key %q, want %q", got, tt.want)
			}
			if got := c.Key(request("192.0.2.1:1")); got != "192.0.2.1" {
				t.Errorf("IPv4 client: key %q, want 192.0.2.1 whatever the IPv6 prefix", got)
			}
		})
	}
	for _, bad := range []int{-1, 129} {
		if _, err := limiter.NewClientIP(nil, bad); err == nil {
			t.Errorf("NewClientIP with /%d: no error", bad)
		}
	}
}

// The trusted networks can be written as IPv4-mapped IPv6 or with IPv6
// peers; a peer is compared in its unmapped form.
func TestClientIPTrustedNetworks(t *testing.T) {
	tests := []struct {
		trusted, remoteAddr string
		want                string
	}{
		{"::ffff:10.0.0.0/104", "10.0.0.1:1", "198.51.100.7"},
		{"10.0.0.0/8", "[::ffff:10.0.0.1]:1", "198.51.100.7"},
		{"fd00::/8", "[fd00::1]:1", "198.51.100.7"},
		{"192.0.2.10", "192.0.2.10:1", "198.51.100.7"},
		{"192.0.2.10", "192.0.2.11:1", "192.0.2.11"},
		{"2001:db8::1", "[2001:db8::2]:1", "2001:db8::/64"},
	}
	for _, tt := range tests {
		t.Run(tt.trusted+" "+tt.remoteAddr, func(t *testing.T) {
			c := mustClientIP(t, 0, tt.trusted)
			if got := c.Key(request(tt.remoteAddr, "198.51.100.7")); got != tt.want {
				t.Fatalf("key %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParsePrefixes(t *testing.T) {
	got, err := limiter.ParsePrefixes([]string{" 10.1.2.3/8", "", "192.0.2.1", "2001:db8::1", "2001:db8:1::/48 "})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("192.0.2.1/32"),
		netip.MustParsePrefix("2001:db8::1/128"),
		netip.MustParsePrefix("2001:db8:1::/48"),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ParsePrefixes = %v, want %v", got, want)
	}
	for _, bad := range []string{"bad", "10.0.0.0/33", "10.0.0.0/", "fe80::1%eth0", "10.0.0.0/8/8"} {
		if _, err := limiter.ParsePrefixes([]string{bad}); err == nil {
			t.Errorf("ParsePrefixes(%q): no error", bad)
		}
	}
	if got, err := limiter.ParsePrefixes(nil); err != nil || len(got) != 0 {
		t.Errorf("ParsePrefixes(nil) = %v, %v; want none", got, err)
	}
}

// Forged X-Forwarded-For headers, sent straight to the server or through
// the trusted proxy, can neither get a client past its own limit nor use
// up someone else's.
func TestIsCatchAll(t *testing.T) {
	tests := []struct {
		prefix string
		want   bool
	}{
		{"0.0.0.0/0", true},
		{"::/0", true},
		{"::ffff:0.0.0.0/96", true}, // every IPv4 address, mapped
		{"10.0.0.0/0", true},        // masked to 0.0.0.0/0
		{"0.0.0.0/1", false},
		{"::/1", false},
		{"::ffff:0.0.0.0/97", false},
		{"10.0.0.0/8", false},
		{"192.0.2.1/32", false},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			prefixes, err := limiter.ParsePrefixes([]string{tt.prefix})
			if err != nil {
				t.Fatal(err)
			}
			if got := limiter.IsCatchAll(prefixes[0]); got != tt.want {
				t.Fatalf("IsCatchAll(%s) = %v, want %v", tt.prefix, got, tt.want)
			}
		})
	}
	if limiter.IsCatchAll(netip.Prefix{}) {
		t.Error("IsCatchAll of the zero Prefix = true, want false")
	}
}

func TestMiddlewareSpoofedForwardedFor(t *testing.T) {
	const (
		proxy    = "10.0.0.1:5555"
		attacker = "203.0.113.9"
		victim   = "198.51.100.7"
	)
	p := limiter.Policy{Max: 2, Window: time.Minute}
	newHandler := func(t *testing.T) http.Handler {
		return mustHandler(t, storetest.NewClock(storetest.Start), p,
			limiter.WithKeyFunc(mustClientIP(t, 0, "10.0.0.0/8").Key))
	}
	do := func(h http.Handler, remoteAddr string, xff ...string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request(remoteAddr, xff...))
		return w.Code
	}

	t.Run("direct client cannot escape with a new header each time", func(t *testing.T) {
		h := newHandler(t)
		codes := make([]int, 0, 5)
		for i := range 5 {
			codes = append(codes, do(h, attacker+":1", fmt.Sprintf("198.51.100.%d", i)))
		}
		if fmt.Sprint(codes) != "[200 200 429 429 429]" {
			t.Fatalf("statuses %v, want the limit of 2 to hold", codes)
		}
	})
	t.Run("client behind the proxy cannot escape with a new header each time", func(t *testing.T) {
		h := newHandler(t)
		codes := make([]int, 0, 5)
		for i := range 5 {
			// The proxy appends the address it got the request from.
			codes = append(codes, do(h, proxy, fmt.Sprintf("198.51.100.%d, %s", i, attacker)))
		}
		if fmt.Sprint(codes) != "[200 200 429 429 429]" {
			t.Fatalf("statuses %v, want the limit of 2 to hold", codes)
		}
	})
	t.Run("direct client cannot exhaust the victim's limit", func(t *testing.T) {
		h := newHandler(t)
		for range 10 {
			do(h, attacker+":1", victim)
			do(h, attacker+":1", victim+", 10.0.0.2") // posing as the proxies too
		}
		if code := do(h, proxy, victim); code != http.StatusOK {
			t.Fatalf("victim behind the proxy: %d, want 200", code)
		}
		if code := do(h, victim+":1"); code != http.StatusOK {
			t.Fatalf("victim direct: %d, want 200", code)
		}
	})
	t.Run("client behind the proxy cannot exhaust the victim's limit", func(t *testing.T) {
		h := newHandler(t)
		for range 10 {
			do(h, proxy, victim+", "+attacker)
			do(h, proxy, victim+", 10.0.0.3, "+attacker) // with a forged proxy hop
		}
		if code := do(h, proxy, victim); code != http.StatusOK {
			t.Fatalf("victim: %d, want 200", code)
		}
	})
}

func BenchmarkClientIPKey(b *testing.B) {
	c := mustClientIP(b, 0, "10.0.0.0/8")
	for _, bc := range []struct {
		name string
		r    *http.Request
	}{
		{"IPv4", request("192.0.2.1:1234")},
		{"IPv6", request("[2001:db8:1:2:3:4:5:6]:1234")},
		{"behind-proxy", request("10.0.0.1:1234", "1.2.3.4, 198.51.100.7, 10.0.0.2")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.Key(bc.r)
			}
		})
	}
}
