package redis

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// ErrInvalidURL means a Redis URL does not have one of the forms in the
// package comment. The errors that wrap it say what is wrong and where (the
// password, host 2, option 3) but never quote the URL: it may hold a
// password, and a password with a stray character is still a password.
var ErrInvalidURL = errors.New("invalid Redis URL")

// kind is how the servers of a URL are deployed.
type kind int

// The kinds of deployment, one per scheme.
const (
	server   kind = iota // one server: redis://, rediss://
	cluster              // Redis Cluster: redis+cluster://, rediss+cluster://
	sentinel             // a master found through Sentinel: redis+sentinel://, rediss+sentinel://
)

// Default ports, as Redis and Sentinel listen by default.
const (
	defaultPort         = "6379"
	defaultSentinelPort = "26379"
)

// DefaultMaxRedirects is how many times a decision follows a Redis Cluster
// redirect (MOVED or ASK, after a failover or while slots move) unless the
// URL says otherwise. Each retry could count a request twice, and each costs
// a dial when a node is down, so one is enough for a slot that moved once.
const DefaultMaxRedirects = 1

// clusterStateReload bounds how long a cluster client keeps sending a slot's
// decisions to a master that failed over: a dead node answers no MOVED.
const clusterStateReload = 5 * time.Second

// URL is a parsed Redis URL: where the servers are and how to reach them.
// Printing it, or a pointer to it, with any verb shows what String returns:
// the scheme, hosts, master and database, never the user, the password or
// the options.
type URL struct {
	kind   kind
	tls    bool
	addrs  []string // host:port of the server, the cluster's seed nodes or the sentinels
	master string   // Sentinel: the name of the master the sentinels watch
	db     int

	username, password                 string
	sentinelUsername, sentinelPassword string

	dialTimeout, readTimeout, writeTimeout, poolTimeout time.Duration
	maxRetries, maxRedirects                            int
}

// ParseURL parses a Redis URL of one of the forms in the package comment,
// strictly: any character that must be percent-encoded and is not, any port
// out of range, any unknown option is an error that wraps ErrInvalidURL.
func ParseURL(s string) (*URL, error) {
	u, err := parseURL(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidURL, err)
	}
	return u, nil
}

// urlError is a problem with a URL, worded without any part of it.
type urlError string

func (e urlError) Error() string { return string(e) }

func errorf(format string, args ...any) error { return urlError(fmt.Sprintf(format, args...)) }

var schemes = map[string]struct {
	kind kind
	tls  bool
}{
	"redis":           {server, false},
	"rediss":          {server, true},
	"redis+cluster":   {cluster, false},
	"rediss+cluster":  {cluster, true},
	"redis+sentinel":  {sentinel, false},
	"rediss+sentinel": {sentinel, true},
}

func parseURL(s string) (*URL, error) {
	if s == "" {
		return nil, urlError("empty")
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil, urlError("no scheme: start with redis://, rediss://, redis+cluster:// or redis+sentinel://")
	}
	sch, ok := schemes[strings.ToLower(scheme)]
	if !ok {
		return nil, urlError("unknown scheme: use redis://, rediss://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://")
	}
	u := &URL{kind: sch.kind, tls: sch.tls, dialTimeout: DefaultTimeout, readTimeout: DefaultTimeout,
		writeTimeout: DefaultTimeout, poolTimeout: DefaultTimeout, maxRedirects: DefaultMaxRedirects}

	// The user information ends at the last '@': no later part of the URL
	// may hold one unencoded, and the password may, by mistake.
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if err := u.parseUserinfo(rest[:at]); err != nil {
			return nil, err
		}
		rest = rest[at+1:]
	}
	if strings.ContainsRune(rest, '#') {
		return nil, urlError("a fragment (#) has no meaning here; percent-encode # in a password as %23")
	}
	rest, query, _ := strings.Cut(rest, "?")
	hosts, path, _ := strings.Cut(rest, "/")
	if err := u.parseHosts(hosts); err != nil {
		return nil, err
	}
	if err := u.parsePath(path); err != nil {
		return nil, err
	}
	if err := u.parseQuery(query); err != nil {
		return nil, err
	}
	return u, nil
}

// parseUserinfo reads [user][:password], each percent-encoded.
func (u *URL) parseUserinfo(info string) error {
	user, password, hasPassword := strings.Cut(info, ":")
	var err error
	if u.username, err = unescapeUserinfo(user); err != nil {
		return fmt.Errorf("user: %w", err)
	}
	if hasPassword {
		if u.password, err = unescapeUserinfo(password); err != nil {
			return fmt.Errorf("password: %w", err)
		}
	}
	return nil
}

// unescapeUserinfo decodes a percent-encoded user or password, refusing the
// characters that RFC 3986 does not allow there unencoded.
func unescapeUserinfo(s string) (string, error) {
	if strings.ContainsAny(s, "/?#@[] \t\r\n") {
		return "", urlError("percent-encode / ? # @ [ ] and spaces (for example %2F for /, %40 for @, %20 for a space)")
	}
	v, err := url.PathUnescape(s)
	if err != nil {
		return "", urlError("a % is not followed by two hexadecimal digits; write % itself as %25")
	}
	return v, nil
}

// parseHosts reads host[:port][,host[:port]…].
func (u *URL) parseHosts(hosts string) error {
	if hosts == "" {
		return urlError("no host")
	}
	port := defaultPort
	if u.kind == sentinel {
		port = defaultSentinelPort
	}
	for i, h := range strings.Split(hosts, ",") {
		addr, err := parseHost(h, port)
		if err != nil {
			return fmt.Errorf("host %d: %w", i+1, err)
		}
		u.addrs = append(u.addrs, addr)
	}
	if u.kind == server && len(u.addrs) > 1 {
		return urlError("redis:// takes one host; use redis+cluster:// for a Redis Cluster or redis+sentinel:// for Sentinel")
	}
	return nil
}

// parseHost reads one name[:port] or [IPv6][:port] and returns it as
// host:port, with defaultPort when it has none.
func parseHost(h, defaultPort string) (string, error) {
	var host, port string
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return "", urlError("[ without ]")
		}
		a, err := netip.ParseAddr(h[1:end])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", urlError("not an IPv6 address between [ ]")
		}
		host = "[" + a.String() + "]"
		switch rest := h[end+1:]; {
		case rest == "":
		case rest[0] == ':':
			port = rest[1:]
			if port == "" {
				return "", urlError("empty port after :")
			}
		default:
			return "", urlError("after ] comes :port or nothing")
		}
	} else {
		host = h
		if i := strings.IndexByte(h, ':'); i >= 0 {
			host, port = h[:i], h[i+1:]
			if strings.ContainsRune(port, ':') {
				return "", urlError("write an IPv6 address in brackets, as [2001:db8::1]:6379")
			}
			if port == "" {
				return "", urlError("empty port after :")
			}
		}
		if host == "" {
			return "", urlError("empty")
		}
		for _, c := range host {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
				return "", urlError("a host name has letters, digits, '-', '.' and '_' only")
			}
		}
	}
	if port == "" {
		port = defaultPort
	}
	if n, ok := digits(port); !ok || n < 1 || n > 65535 {
		return "", urlError("the port is not a number from 1 to 65535")
	}
	return host + ":" + port, nil
}

// parsePath reads /db, or /master[/db] for Sentinel.
func (u *URL) parsePath(path string) error {
	parts := strings.Split(path, "/")
	if u.kind == sentinel {
		if parts[0] == "" {
			return urlError("name the master after the sentinels: redis+sentinel://host:port/master")
		}
		master, err := url.PathUnescape(parts[0])
		if err != nil || strings.ContainsAny(master, " \t\r\n") {
			return urlError("the master's name is not a valid name")
		}
		u.master, parts = master, parts[1:]
	}
	switch {
	case len(parts) == 0 || len(parts) == 1 && parts[0] == "":
		return nil
	case len(parts) > 1:
		return urlError("the path has too many parts: /db for redis://, nothing or /0 for redis+cluster://, /master or /master/db for redis+sentinel://")
	}
	db, ok := digits(parts[0])
	if !ok {
		return urlError("the database is not a number of 0 or more")
	}
	if u.kind == cluster && db != 0 {
		return urlError("Redis Cluster has database 0 only")
	}
	u.db = db
	return nil
}

// parseQuery reads the options: name=value pairs separated by &.
func (u *URL) parseQuery(query string) error {
	if query == "" {
		return nil
	}
	options, seen := u.options(), make(map[string]bool)
	for i, pair := range strings.Split(query, "&") {
		name, raw, ok := strings.Cut(pair, "=")
		if !ok {
			return errorf("option %d is not name=value", i+1)
		}
		value, err := url.QueryUnescape(raw)
		if err != nil {
			return errorf("option %d: a %% is not followed by two hexadecimal digits", i+1)
		}
		set, known := options[name]
		if !known {
			return errorf("option %d has an unknown name; use %s", i+1, optionNames(u.kind))
		}
		if seen[name] {
			return errorf("option %s is given twice", name)
		}
		seen[name] = true
		if err := set(value); err != nil {
			return fmt.Errorf("option %s: %w", name, err)
		}
	}
	return nil
}

// options maps the names of the options that a URL of u's kind takes to
// what sets them.
func (u *URL) options() map[string]func(string) error {
	opts := map[string]func(string) error{
		"dial_timeout":  duration(&u.dialTimeout),
		"read_timeout":  duration(&u.readTimeout),
		"write_timeout": duration(&u.writeTimeout),
		"pool_timeout":  duration(&u.poolTimeout),
		"max_retries":   count(&u.maxRetries),
	}
	switch u.kind {
	case cluster:
		opts["max_redirects"] = count(&u.maxRedirects)
	case sentinel:
		opts["sentinel_username"] = func(v string) error { u.sentinelUsername = v; return nil }
		opts["sentinel_password"] = func(v string) error { u.sentinelPassword = v; return nil }
	}
	return opts
}

// optionNames lists the options of a URL of kind k, for an error message.
func optionNames(k kind) string {
	names := "dial_timeout, read_timeout, write_timeout, pool_timeout, max_retries"
	switch k {
	case cluster:
		names += ", max_redirects"
	case sentinel:
		names += ", sentinel_username, sentinel_password"
	}
	return names
}

func duration(d *time.Duration) func(string) error {
	return func(v string) error {
		parsed, err := time.ParseDuration(v)
		if err != nil || parsed <= 0 {
			return urlError("not a positive duration such as 250ms or 1s")
		}
		*d = parsed
		return nil
	}
}

func count(n *int) func(string) error {
	return func(v string) error {
		parsed, ok := digits(v)
		if !ok {
			return urlError("not a number of 0 or more")
		}
		*n = parsed
		return nil
	}
}

// digits parses a number written with decimal digits only, no sign.
func digits(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// String returns the URL without its user, password and options, for logs:
// for example redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster/0.
func (u URL) String() string {
	scheme := "redis"
	if u.tls {
		scheme = "rediss"
	}
	switch u.kind {
	case cluster:
		return scheme + "+cluster://" + strings.Join(u.addrs, ",")
	case sentinel:
		return fmt.Sprintf("%s+sentinel://%s/%s/%d", scheme, strings.Join(u.addrs, ","), url.PathEscape(u.master), u.db)
	default:
		return fmt.Sprintf("%s://%s/%d", scheme, u.addrs[0], u.db)
	}
}

// GoString is String, so that %#v shows no password either.
func (u URL) GoString() string { return u.String() }

// Format prints String for every verb, so that %+v, %q or %x show no
// password either.
func (u URL) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(u.String())) }

// universalOptions returns the go-redis options of u. Failed commands are retried
// max_retries times (default none), since a retried script could count a
// request twice.
func (u *URL) universalOptions() *goredis.UniversalOptions {
	o := &goredis.UniversalOptions{
		Addrs:            u.addrs,
		DB:               u.db,
		Username:         u.username,
		Password:         u.password,
		MasterName:       u.master,
		SentinelUsername: u.sentinelUsername,
		SentinelPassword: u.sentinelPassword,
		IsClusterMode:    u.kind == cluster,
		DialTimeout:      u.dialTimeout,
		ReadTimeout:      u.readTimeout,
		WriteTimeout:     u.writeTimeout,
		PoolTimeout:      u.poolTimeout,
		MaxRetries:       noneIsMinusOne(u.maxRetries),
		// One dial per attempt: go-redis would otherwise retry a refused
		// connection five times with backoff, holding the request for 400ms.
		DialerRetries:            1,
		DisableIdentity:          true, // CLIENT SETINFO: nothing to gain, fails on Redis < 7.2
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
	if u.kind == cluster {
		o.MaxRedirects = noneIsMinusOne(u.maxRedirects)
	}
	if u.tls {
		// No ServerName: each connection checks the name of the host it
		// dials, which in a cluster differs from node to node.
		o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return o
}

// noneIsMinusOne turns a count where 0 means none into go-redis's, where
// 0 means its default and -1 none.
func noneIsMinusOne(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// newClient returns a client of the servers of u.
func (u *URL) newClient() goredis.UniversalClient {
	o := u.universalOptions()
	switch u.kind {
	case cluster:
		co := o.Cluster()
		co.ClusterStateReloadInterval = clusterStateReload
		return goredis.NewClusterClient(co)
	case sentinel:
		return goredis.NewFailoverClient(o.Failover())
	default:
		return goredis.NewClient(o.Simple())
	}
}
