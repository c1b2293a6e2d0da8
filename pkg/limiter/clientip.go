package limiter

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// DefaultIPv6Prefix is how many leading bits of an IPv6 address name a
// client by default. One subscriber or one cloud host usually gets a whole
// /64 and can pick any address in it, so counting addresses one by one would
// let it make 2^64 times more requests than anyone on IPv4.
const DefaultIPv6Prefix = 64

// ClientIP is a KeyFunc source that names the client of a request by its IP
// address: IPv4 clients by address ("192.0.2.1"), IPv6 clients by their
// network ("2001:db8:1:2::/64"), and IPv4-mapped IPv6 addresses
// ("::ffff:192.0.2.1") as the IPv4 address they carry.
//
// The address is the connection's peer, unless the peer is one of the
// trusted reverse proxies: then it is the right-most address of
// X-Forwarded-For that is not itself a trusted proxy. Each proxy appends the
// address it got the request from, so that one was written by a proxy we
// trust; everything further left came from the client and could be forged.
// A client talking to the server directly therefore cannot choose its key by
// sending X-Forwarded-For, and one behind the proxies can only add entries
// that are never read. A header that cannot be parsed before the client's
// entry is found names the peer instead: the proxy is misconfigured, and its
// clients share its window rather than one of them choosing a key.
type ClientIP struct {
	trusted  []netip.Prefix
	ipv6Bits int
}

// NewClientIP returns a ClientIP that trusts X-Forwarded-For from peers in
// the trusted networks (none: the header is never read) and groups IPv6
// clients by their first ipv6Prefix bits, from 1 to 128 (0 means
// DefaultIPv6Prefix).
func NewClientIP(trusted []netip.Prefix, ipv6Prefix int) (*ClientIP, error) {
	if ipv6Prefix == 0 {
		ipv6Prefix = DefaultIPv6Prefix
	}
	if ipv6Prefix < 1 || ipv6Prefix > 128 {
		return nil, fmt.Errorf("IPv6 prefix /%d: must be from 1 to 128", ipv6Prefix)
	}
	c := &ClientIP{ipv6Bits: ipv6Prefix}
	for _, p := range trusted {
		if !p.IsValid() {
			return nil, fmt.Errorf("trusted proxy network %v is not valid", p)
		}
		c.trusted = append(c.trusted, unmapPrefix(p))
	}
	return c, nil
}

// ParsePrefixes parses trusted proxy networks written as CIDRs
// ("10.0.0.0/8", "2001:db8::/32") or single addresses ("192.0.2.1").
// Empty entries are skipped, so a "" setting trusts nothing.
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy network: %w", err)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy: not an address or a CIDR: %w", err)
		}
		if a.Zone() != "" {
			return nil, fmt.Errorf("trusted proxy %q: zones are not supported", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// IsCatchAll reports whether p holds every IPv4 or every IPv6 address, as
// 0.0.0.0/0, ::/0 and ::ffff:0.0.0.0/96 do. Trusting such a network as a
// proxy trusts X-Forwarded-For from everyone, so that every client can choose
// its own key; a caller should refuse it unless told that no connection
// reaches the server but through its proxies.
func IsCatchAll(p netip.Prefix) bool {
	return p.IsValid() && unmapPrefix(p).Bits() == 0
}

// unmapPrefix turns an IPv4-mapped IPv6 network (::ffff:10.0.0.0/104) into
// the IPv4 network it means (10.0.0.0/8), since peers are unmapped before
// they are compared.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked()
	}
	return p.Masked()
}

// Key names the client of r; use it as a KeyFunc. A peer address that is not
// an IP (a Unix socket, a test's made-up RemoteAddr) is its own key.
func (c *ClientIP) Key(r *http.Request) string {
	host := RemoteIP(r)
	raw, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer := raw.WithZone("").Unmap()
	if !c.isTrusted(peer) {
		if raw.Is4() {
			// The common case: plain IPv4, which netip only parses in its
			// canonical form, so host is already the key and formatting
			// it again would only allocate.
			return host
		}
		return c.key(peer)
	}
	client, ok := c.forwardedFor(r.Header.Values("X-Forwarded-For"))
	if !ok {
		return c.key(peer)
	}
	return c.key(client)
}

// forwardedFor walks the X-Forwarded-For entries from the right (the last
// header line, the last entry) and returns the first one that is not a
// trusted proxy. If every entry is a trusted proxy the request started
// inside the trusted networks, and the left-most one is the client. It
// reports false when there is no entry or it meets one it cannot parse.
func (c *ClientIP) forwardedFor(lines []string) (netip.Addr, bool) {
	var client netip.Addr
	for i := len(lines) - 1; i >= 0; i-- {
		rest := lines[i]
		for {
			entry := rest
			comma := strings.LastIndexByte(rest, ',')
			if comma >= 0 {
				entry, rest = rest[comma+1:], rest[:comma]
			}
			a, ok := parseForwarded(entry)
			if !ok {
				return netip.Addr{}, false
			}
			if !c.isTrusted(a) {
				return a, true
			}
			client = a
			if comma < 0 {
				break
			}
		}
	}
	return client, client.IsValid()
}

// parseForwarded parses one X-Forwarded-For entry: an address, possibly
// with a port as some proxies write it ("192.0.2.1:1234", "[2001:db8::1]:80").
func parseForwarded(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.WithZone("").Unmap(), true
}

func (c *ClientIP) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// key formats an unmapped, zoneless address as a client's key.
func (c *ClientIP) key(a netip.Addr) string {
	if a.Is4() || c.ipv6Bits == 128 {
		return a.String()
	}
	p, _ := a.Prefix(c.ipv6Bits) // cannot fail: 1 <= bits <= 128 for IPv6
	return p.String()
}
