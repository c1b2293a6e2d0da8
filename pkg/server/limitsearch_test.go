package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/redistest"
	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// The fold of the limiter: each text a person types on extends the one
// before, as the search reads them.
func TestLimitedSearchFoldsAsTheSearch(t *testing.T) {
	small := func(text string) limiter.Search { return limiter.Search{Scope: "small", Text: text} }
	long := strings.Repeat("a", 101)
	folds := map[string]limiter.Search{
		"q=Rio":                          small("rio"),
		"q=rio+":                         small("rio-"),
		"q=rio+d":                        small("rio-d"),
		"q=S%C3%A3o+Paulo&dataset=large": {Scope: "large", Text: "sao-paulo"},
		"q=%20%20":                       small(""),
		"dataset=huge":                   {Scope: "huge"},
		"q=" + long:                      small(long), // too long to fold: counted as it is
	}
	for query, want := range folds {
		r := httptest.NewRequest(http.MethodGet, "/search?"+query, nil)
		if got := server.LimitedSearch(r); got != want {
			t.Errorf("%s: %+v, want %+v", query, got, want)
		}
	}
}

// Search-Complete says whether the answer holds every match of q.
func TestSearchCompleteHeader(t *testing.T) {
	h := server.New(mustService(t, testCities()))
	for _, tc := range []struct {
		target, want string
	}{
		{"/search?q=paris", "?1"},
		{"/search?q=ist&limit=1", "?0"},
		{"/search?q=sao", "?1"},
	} {
		rec := do(t, h, http.MethodGet, tc.target)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d", tc.target, rec.Code)
		}
		if got := rec.Header().Get("Search-Complete"); got != tc.want {
			t.Errorf("%s: Search-Complete %q, want %q", tc.target, got, tc.want)
		}
	}
	if rec := do(t, h, http.MethodGet, "/search?q=pa"); rec.Header().Get("Search-Complete") != "" {
		t.Errorf("a 400 carries Search-Complete %q", rec.Header().Get("Search-Complete"))
	}
}

// Three replicas over one real Redis, counting searches: a person typing a
// name letter by letter at 120 ms a key, each request to the next replica,
// is never turned away, and RateLimit says on every replica the one search
// it costs; six different searches at once still get five 200 and a 429.
// Real time passes (about two seconds), since Redis's clock decides.
func TestReplicasShareSessions(t *testing.T) {
	p := limiter.Policy{Max: 5, Window: 3 * time.Second}
	url, prefix := redistest.Start(t).URL()+patientRedis, redistest.KeyPrefix(t)
	sessions := limiter.WithSessions(server.LimitedSearch, limiter.DefaultSessions())
	replicas := []*replica{
		startReplica(t, url, prefix, p, sessions),
		startReplica(t, url, prefix, p, sessions),
		startReplica(t, url, prefix, p, sessions),
	}
	name := "rio de janeiro"
	var got []string
	for i := 1; i <= len(name); i++ {
		resp := replicas[i%3].searchFor(t, "198.51.100.7", name[:i])
		remaining := "no r="
		if _, r, ok := strings.Cut(resp.rateLimit, "r="); ok {
			remaining = "r=" + r[:strings.IndexAny(r+";", ";,")]
		}
		got = append(got, fmt.Sprintf("%d %s", resp.status, remaining))
		time.Sleep(120 * time.Millisecond)
	}
	// "r" and "ri" are too short to answer (400), but count as the search
	// they begin.
	want := "400 r=4,400 r=4" + strings.Repeat(",200 r=4", len(name)-2)
	if strings.Join(got, ",") != want {
		t.Errorf("typing %q over 3 replicas: %v, want %s", name, got, want)
	}
	var codes []int
	for i, word := range []string{"paris", "london", "berlin", "madrid", "rome", "vienna"} {
		codes = append(codes, replicas[i%3].searchFor(t, "203.0.113.9", word).status)
	}
	if fmt.Sprint(codes) != "[200 200 200 200 200 429]" {
		t.Errorf("six searches at once over 3 replicas: %v, want five 200 and a 429", codes)
	}
}

// searchFor asks r for text on behalf of client.
func (r *replica) searchFor(tb testing.TB, client, text string) response {
	tb.Helper()
	return r.get(tb, client, "/search?q="+url.QueryEscape(text))
}
