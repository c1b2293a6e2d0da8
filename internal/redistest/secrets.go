package redistest

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// Passwords are for tests that check that no message shows a password: one
// per character that a URL reserves (? / @ : % # [ ] and a space), between
// two markers that no message could contain by chance.
var Passwords = func() []string {
	var ps []string
	for _, c := range []string{"?", "/", "@", ":", "%", "#", "[", "]", " "} {
		ps = append(ps, passwordStart+c+passwordEnd)
	}
	return ps
}()

const passwordStart, passwordEnd = "hunter", "2secret"

// AssertNoPassword fails tb if text, which where names, shows any part of
// one of Passwords.
func AssertNoPassword(tb testing.TB, where, text string) {
	tb.Helper()
	if strings.Contains(text, passwordStart) || strings.Contains(text, passwordEnd) {
		tb.Errorf("%s shows a password: %s", where, text)
	}
}

// EncodePassword percent-encodes every byte of password but letters and
// digits, as a careful operator writes it in a URL.
func EncodePassword(password string) string {
	var b strings.Builder
	for i := range len(password) {
		c := password[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// AddUser gives s an ACL user that may run every command on every key.
func (s *Server) AddUser(tb testing.TB, user, password string) {
	tb.Helper()
	if err := s.do(tb, "acl", "setuser", user, "on", ">"+password, "~*", "+@all").Err(); err != nil {
		tb.Fatalf("redistest: add user %s to %s: %v", user, s.Addr(), err)
	}
}

// DownAddr returns a loopback host:port that was free a moment ago: a Redis
// that is down, whose connections are refused.
func DownAddr(tb testing.TB) string {
	tb.Helper()
	port, err := freePort()
	if err != nil {
		tb.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
}
