package mongo

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// A connection string is never printed, not even with its password masked:
// a password may hold characters that the driver accepts unescaped ('?',
// '#', '[', ' '), and any masking that parses the string as a URL then
// misses it. Messages name the hosts and the database instead (see
// Describe), and CheckURI says what is wrong with a string without quoting
// any of it.

// Schemes of a MongoDB connection string.
const (
	schemeMongoDB = "mongodb://"
	schemeSRV     = "mongodb+srv://"
)

// uriParts are the pieces of a connection string that messages and
// scrubbing need, split the way the driver splits them.
type uriParts struct {
	userInfo string // "user:password", still percent-encoded; "" when absent
	password string // still percent-encoded
	hosts    string // "db1:27017,db2" or an SRV name
}

// CheckURI reports what is wrong with a MongoDB connection string in words
// that quote none of it, or nil when its scheme, user info and hosts are
// well formed. The driver checks the options when the store connects. It
// looks nothing up on the network.
func CheckURI(uri string) error {
	_, err := splitURI(uri)
	return err
}

// splitURI splits uri as the driver (v2) does: the user info ends at the
// first '@' after the scheme, wherever it is, and its password at the first
// ':'; the hosts end at the first '/' or '?' after that. The driver
// requires ':', '/', '@' and a '%' that starts no escape to be
// percent-encoded in the user info, and accepts anything else there.
func splitURI(uri string) (uriParts, error) {
	var p uriParts
	rest, ok := strings.CutPrefix(uri, schemeMongoDB)
	if !ok {
		if rest, ok = strings.CutPrefix(uri, schemeSRV); !ok {
			return p, errors.New("it must start with mongodb:// or mongodb+srv://")
		}
	}
	if info, after, found := strings.Cut(rest, "@"); found {
		user, password, _ := strings.Cut(info, ":")
		if err := checkUserInfo("user name", user, "/"); err != nil {
			return p, err
		}
		if err := checkUserInfo("password", password, ":/"); err != nil {
			return p, err
		}
		p.userInfo, p.password, rest = info, password, after
	}
	p.hosts = rest
	if i := strings.IndexAny(rest, "/?@"); i >= 0 {
		switch rest[i] {
		case '@':
			return p, errors.New("the user name or password holds an unescaped '@': write it as %40")
		case '?':
			return p, errors.New("the options' '?' must follow a '/' after the hosts")
		}
		p.hosts = rest[:i]
	}
	if strings.Trim(p.hosts, ",") == "" {
		return p, errors.New("it names no host")
	}
	return p, nil
}

// checkUserInfo reports an unescaped character of forbidden, or a '%' that
// starts no escape, in the part of the user info named what.
func checkUserInfo(what, s, forbidden string) error {
	if i := strings.IndexAny(s, forbidden); i >= 0 {
		return fmt.Errorf("the %s holds an unescaped '%c': write it as %%%02X", what, s[i], s[i])
	}
	if _, err := url.PathUnescape(s); err != nil {
		return fmt.Errorf("the %s holds a '%%' that starts no escape: write it as %%25", what)
	}
	return nil
}

// Describe names the store at uri for messages: the database and the
// hosts, never the user info or the options. A URI that CheckURI rejects
// is "an invalid URI".
func Describe(uri, database string) string {
	p, err := splitURI(uri)
	if err != nil {
		return fmt.Sprintf("MongoDB database %s at an invalid URI", database)
	}
	return fmt.Sprintf("MongoDB database %s at %s", database, p.hosts)
}

// minScrubbed is the shortest password that scrubber replaces on its own:
// a shorter one would garble the words of messages that merely contain it.
const minScrubbed = 6

// scrubber replaces, should a message from the driver quote them, the
// whole connection string, its user info, and its password (as written and
// decoded) unless it is shorter than minScrubbed.
func scrubber(uri string) *strings.Replacer {
	pairs := []string{uri, "(the connection string)"}
	p, err := splitURI(uri)
	if err != nil || p.userInfo == "" {
		return strings.NewReplacer(pairs...)
	}
	pairs = append(pairs, p.userInfo, "(the user info)")
	candidates := []string{p.password}
	if decoded, err := url.PathUnescape(p.password); err == nil && decoded != p.password {
		candidates = append(candidates, decoded)
	}
	for _, c := range candidates {
		if len(c) >= minScrubbed {
			pairs = append(pairs, c, "xxxxx")
		}
	}
	return strings.NewReplacer(pairs...)
}
