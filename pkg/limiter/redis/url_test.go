package redis_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
)

func TestParseURL(t *testing.T) {
	type want struct {
		str              string // String(): no credentials
		addrs            string
		db               int
		user, password   string
		master           string
		sentinelPassword string
		tls              bool
		dialTimeout      time.Duration
		maxRetries       int // go-redis's: -1 none
		maxRedirects     int // go-redis's: -1 none; clusters only
	}
	tests := []struct {
		url  string
		want want
	}{
		{"redis://127.0.0.1:6379/0", want{str: "redis://127.0.0.1:6379/0", addrs: "127.0.0.1:6379"}},
		{"redis://localhost", want{str: "redis://localhost:6379/0", addrs: "localhost:6379"}},
		{"REDIS://redis.internal:6380/", want{str: "redis://redis.internal:6380/0", addrs: "redis.internal:6380"}},
		{"redis://[2001:db8::1]/3", want{str: "redis://[2001:db8::1]:6379/3", addrs: "[2001:db8::1]:6379", db: 3}},
		{"redis://[::1]:7000", want{str: "redis://[::1]:7000/0", addrs: "[::1]:7000"}},
		{"redis://:s3cret@h:1/2", want{str: "redis://h:1/2", addrs: "h:1", db: 2, password: "s3cret"}},
		{"redis://app:p%40ss%3Aw%2Fo%3Frd@h:1", want{str: "redis://h:1/0", addrs: "h:1", user: "app", password: "p@ss:w/o?rd"}},
		{"redis://app:a:b:c@h", want{str: "redis://h:6379/0", addrs: "h:6379", user: "app", password: "a:b:c"}},
		{"redis://app@h", want{str: "redis://h:6379/0", addrs: "h:6379", user: "app"}},
		{"rediss://h:6380/1", want{str: "rediss://h:6380/1", addrs: "h:6380", db: 1, tls: true}},
		{"redis://h?dial_timeout=1s&max_retries=2", want{str: "redis://h:6379/0", addrs: "h:6379", dialTimeout: time.Second, maxRetries: 2}},
		{"redis://h?max_retries=0", want{str: "redis://h:6379/0", addrs: "h:6379"}},
		{"redis+cluster://10.0.0.1:7000,10.0.0.2:7001,[2001:db8::3]", want{str: "redis+cluster://10.0.0.1:7000,10.0.0.2:7001,[2001:db8::3]:6379",
			addrs: "10.0.0.1:7000,10.0.0.2:7001,[2001:db8::3]:6379", maxRedirects: redis.DefaultMaxRedirects}},
		{"rediss+cluster://:pw@seed/0?max_redirects=3", want{str: "rediss+cluster://seed:6379",
			addrs: "seed:6379", password: "pw", tls: true, maxRedirects: 3}},
		{"redis+cluster://seed?max_redirects=0", want{str: "redis+cluster://seed:6379", addrs: "seed:6379"}},
		{"redis+sentinel://s1,s2:26380/mymaster", want{str: "redis+sentinel://s1:26379,s2:26380/mymaster/0",
			addrs: "s1:26379,s2:26380", master: "mymaster"}},
		{"rediss+sentinel://u:p@s1/mymaster/4?sentinel_password=s%26p", want{str: "rediss+sentinel://s1:26379/mymaster/4",
			addrs: "s1:26379", db: 4, user: "u", password: "p", master: "mymaster", sentinelPassword: "s&p", tls: true}},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			u, err := redis.ParseURL(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			w := tt.want
			if w.dialTimeout == 0 {
				w.dialTimeout = redis.DefaultTimeout
			}
			if w.maxRetries == 0 {
				w.maxRetries = -1
			}
			if w.maxRedirects == 0 && strings.Contains(tt.url, "+cluster://") {
				w.maxRedirects = -1
			}
			o := u.Options()
			got := want{str: u.String(), addrs: strings.Join(o.Addrs, ","), db: o.DB, user: o.Username,
				password: o.Password, master: o.MasterName, sentinelPassword: o.SentinelPassword, tls: o.TLSConfig != nil,
				dialTimeout: o.DialTimeout, maxRetries: o.MaxRetries, maxRedirects: o.MaxRedirects}
			if got != w {
				t.Fatalf("ParseURL:\n got %+v\nwant %+v", got, w)
			}
			if o.TLSConfig != nil && o.TLSConfig.ServerName != "" {
				t.Errorf("TLS ServerName %q, want none, so that each node's own name is checked", o.TLSConfig.ServerName)
			}
			if o.ReadTimeout != redis.DefaultTimeout || o.WriteTimeout != redis.DefaultTimeout || o.PoolTimeout != redis.DefaultTimeout {
				t.Errorf("timeouts %+v, want DefaultTimeout", o)
			}
		})
	}
}

// A URL that cannot be used is refused with a message that says what is
// wrong, and never quotes it: each one here has SECRET in its password.
func TestParseURLErrors(t *testing.T) {
	tests := []struct {
		url, want string
	}{
		{"", "empty"},
		{"127.0.0.1:6379", "no scheme"},
		{"redis:/u:SECRET@h", "no scheme"},
		{"http://u:SECRET@h", "unknown scheme"},
		{"unix://u:SECRET@/tmp/redis.sock", "unknown scheme"},
		{"redis://u:SECRET%zz@h", "password: a % is not followed by two hexadecimal digits"},
		{"redis://u:SECRET%@h", "password: a % is not followed"},
		{"redis://u:SEC?RET@h", "password: percent-encode / ? # @ [ ] and spaces"},
		{"redis://u:SEC/RET@h", "password: percent-encode"},
		{"redis://u:SEC#RET@h", "password: percent-encode"},
		{"redis://u:SEC@RET@h", "password: percent-encode"},
		{"redis://u:SEC[RET@h", "password: percent-encode"},
		{"redis://u:SEC]RET@h", "password: percent-encode"},
		{"redis://u:SEC RET@h", "password: percent-encode"},
		{"redis://SEC RET:SECRET@h", "user: percent-encode"},
		{"redis://u:SECRET@", "no host"},
		{"redis://u:SECRET@/0", "no host"},
		{"redis://u:SECRET@h:", "host 1: empty port"},
		{"redis://u:SECRET@h:0", "host 1: the port is not a number from 1 to 65535"},
		{"redis://u:SECRET@h:65536", "host 1: the port"},
		{"redis://u:SECRET@h:+1", "host 1: the port"},
		{"redis://u:SECRET@h:port", "host 1: the port"},
		{"redis://u:SECRET@2001:db8::1", "host 1: write an IPv6 address in brackets"},
		{"redis://u:SECRET@[2001:db8::1", "host 1: [ without ]"},
		{"redis://u:SECRET@[SECRET]:1", "host 1: not an IPv6 address"},
		{"redis://u:SECRET@[::1]x", "host 1: after ] comes :port"},
		{"redis://u:SECRET@h%20x", "host 1: a host name has letters"},
		{"redis://u:SECRET@h1,h2", "redis:// takes one host"},
		{"redis+cluster://u:SECRET@h1,,h2", "host 2: empty"},
		{"redis://u:SECRET@h/x", "the database is not a number"},
		{"redis://u:SECRET@h/-1", "the database is not a number"},
		{"redis://u:SECRET@h/0/1", "too many parts"},
		{"redis+cluster://u:SECRET@h/1", "Redis Cluster has database 0 only"},
		{"redis+sentinel://u:SECRET@h", "name the master"},
		{"redis+sentinel://u:SECRET@h/", "name the master"},
		{"redis+sentinel://u:SECRET@h/m/x", "the database is not a number"},
		{"redis://u:SECRET@h#frag", "a fragment (#)"},
		{"redis://u:SECRET@h?SECRET", "option 1 is not name=value"},
		{"redis://u:SECRET@h?dial_timeout=1s&SECRET=1", "option 2 has an unknown name; use dial_timeout, read_timeout, write_timeout, pool_timeout, max_retries"},
		{"redis://u:SECRET@h?max_redirects=1", "option 1 has an unknown name"},
		{"redis://u:SECRET@h?sentinel_password=SECRET", "option 1 has an unknown name"},
		{"redis+sentinel://h/m?sentinel_password=SECRET%zz", "option 1: a % is not followed"},
		{"redis://u:SECRET@h?dial_timeout=SECRET", "option dial_timeout: not a positive duration"},
		{"redis://u:SECRET@h?read_timeout=0s", "option read_timeout: not a positive duration"},
		{"redis://u:SECRET@h?max_retries=-1", "option max_retries: not a number of 0 or more"},
		{"redis://u:SECRET@h?pool_timeout=1s&pool_timeout=2s", "option pool_timeout is given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := redis.ParseURL(tt.url)
			if err == nil {
				t.Fatalf("ParseURL: no error, want %q", tt.want)
			}
			msg := err.Error()
			if !errors.Is(err, redis.ErrInvalidURL) || !strings.HasPrefix(msg, "invalid Redis URL: ") || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want ErrInvalidURL saying %q", msg, tt.want)
			}
			for _, leak := range []string{"SECRET", "SEC", "RET", "zz", "frag", "port"} {
				if strings.Contains(tt.url, leak) && strings.Contains(msg, leak) && !strings.Contains(tt.want, leak) {
					t.Errorf("error %q quotes %q from the URL", msg, leak)
				}
			}
			if _, err := redis.Open(tt.url); err == nil || !errors.Is(err, redis.ErrInvalidURL) || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("Open: error %v, want ErrInvalidURL without the password", err)
			}
		})
	}
}

// However a URL is printed, its password is not.
func TestURLPrintsNoPassword(t *testing.T) {
	u, err := redis.ParseURL("redis+sentinel://user:SECRET@s1:26379/mymaster/2?sentinel_password=SENTINELSECRET")
	if err != nil {
		t.Fatal(err)
	}
	const want = "redis+sentinel://s1:26379/mymaster/2"
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		for _, v := range []any{u, *u} {
			got := fmt.Sprintf(verb, v)
			if strings.Contains(got, "SECRET") || strings.Contains(got, "user") {
				t.Errorf("Sprintf(%q, %T) = %q shows the credentials", verb, v, got)
			}
			if verb != "%x" && verb != "%q" && got != want {
				t.Errorf("Sprintf(%q, %T) = %q, want %q", verb, v, got, want)
			}
		}
	}
}

// Any password, however written, is either refused without being quoted or
// read back exactly, and never printed.
func FuzzParseURLPassword(f *testing.F) {
	for _, p := range []string{"", "plain", "p%40ss", "a?b", "a/b", "a@b", "a:b", "a%zzb", "a#b", "a[b", "a]b", "a b", "%", "%2", "ü", "\x00"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		// The markers around p cannot be mistaken for any message's words.
		password := "Qx9" + p + "Zv8"
		u, err := redis.ParseURL("redis://user:" + password + "@127.0.0.1:6379/0")
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "Qx9") || strings.Contains(msg, "Zv8") {
				t.Fatalf("error %q quotes the password", msg)
			}
			return
		}
		want, err := url.PathUnescape(password)
		if err != nil {
			t.Fatalf("accepted a password that does not unescape: %v", err)
		}
		if got := u.Options().Password; got != want {
			t.Fatalf("password read as %q, want %q", got, want)
		}
		if s := fmt.Sprintf("%v %+v %#v", u, u, *u); strings.Contains(s, "Qx9") || strings.Contains(s, "Zv8") {
			t.Fatalf("printed as %q", s)
		}
	})
}
