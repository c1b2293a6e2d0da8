package mongo_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search/mongo"
)

// Every connection string is described by its database and hosts; a bad
// one is refused with a reason that quotes none of it. The password holds
// the characters that break URL-minded redaction, raw and percent-encoded.
func TestURIMessages(t *testing.T) {
	const db = "city-finder"
	for _, tc := range []struct {
		name, uri string
		wantErr   string // "" when valid
		wantHosts string
	}{
		{"no user info", "mongodb://localhost:27017", "", "localhost:27017"},
		{"replica set", "mongodb://app:Zq9-vXk7w@db1:27017,db2:27017/?replicaSet=rs&authSource=admin", "", "db1:27017,db2:27017"},
		{"srv", "mongodb+srv://app:Zq9-vXk7w@cluster0.example.net/?retryWrites=true", "", "cluster0.example.net"},
		{"raw '?' (the driver accepts it)", "mongodb://app:Zq9?vXk7w@127.0.0.1:27117/", "", "127.0.0.1:27117"},
		{"raw '#'", "mongodb://app:Zq9#vXk7w@127.0.0.1:27117/", "", "127.0.0.1:27117"},
		{"raw '[' and ']'", "mongodb://app:Zq9[]vXk7w@127.0.0.1:27117/", "", "127.0.0.1:27117"},
		{"raw space", "mongodb://app:Zq9 vXk7w@127.0.0.1:27117/", "", "127.0.0.1:27117"},
		{"encoded", "mongodb://app:" + url.QueryEscape("Zq9/:@%#[] ?vXk7w") + "@127.0.0.1:27117/", "", "127.0.0.1:27117"},
		{"raw '/'", "mongodb://u:Zq9/vXk7w@host/", "unescaped '/': write it as %2F", ""},
		{"raw ':'", "mongodb://u:Zq9:vXk7w@host/", "unescaped ':': write it as %3A", ""},
		{"raw '@'", "mongodb://u:Zq9@vXk7w@host/", "unescaped '@': write it as %40", ""},
		{"raw '%'", "mongodb://u:Zq9%vXk7w@host/", "'%' that starts no escape", ""},
		{"bad escape", "mongodb://u:Zq9%zzvXk7w@host/", "'%' that starts no escape", ""},
		{"scheme typo", "mongodb:/u:Zq9vXk7w@host/", "must start with mongodb:// or mongodb+srv://", ""},
		{"no host", "mongodb://u:Zq9vXk7w@/", "names no host", ""},
		{"options without a slash", "mongodb://u:Zq9vXk7w@host?tls=true", "must follow a '/'", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mongo.CheckURI(tc.uri)
			desc := mongo.Describe(tc.uri, db)
			if tc.wantErr == "" {
				if err != nil {
					t.Errorf("CheckURI: %v, want nil", err)
				}
				if want := "MongoDB database city-finder at " + tc.wantHosts; desc != want {
					t.Errorf("Describe = %q, want %q", desc, want)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("CheckURI: %v, want an error saying %q", err, tc.wantErr)
			}
			var msgs []string
			if err != nil {
				msgs = append(msgs, err.Error())
			}
			if s, err := mongo.Open(mongo.Options{URI: tc.uri}); err != nil {
				msgs = append(msgs, err.Error())
			} else {
				s.Close()
			}
			for _, m := range append(msgs, desc) {
				if strings.Contains(m, "Zq9") || strings.Contains(m, "vXk7w") {
					t.Errorf("message %q shows part of the password", m)
				}
			}
		})
	}
}
