package redis_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/redistest"
	"github.com/cityfinder/cityfinder/internal/syncbuf"
	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
)

// Passwords with any character a URL reserves work once percent-encoded,
// are refused without being quoted when not, and show in no message of the
// store or of the limiter over it: not in Open's error, its String, Ping's
// error (a readiness check's log), Allow's error, the limiter's log of a
// failing store, nor go-redis's own log lines.
func TestPasswordsAreNeverPrinted(t *testing.T) {
	srv := redistest.Start(t)
	down := redistest.DownAddr(t)
	var logs syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := limiter.Policy{Max: 1, Window: time.Minute}

	for i, password := range redistest.Passwords {
		user := fmt.Sprintf("user%d", i)
		t.Run(password, func(t *testing.T) {
			srv.AddUser(t, user, password)
			// Written as is, the password is refused, or read as it is
			// when it has nothing to encode (a ':' after the first).
			raw := "redis://" + user + ":" + password + "@" + srv.Addr() + "/0"
			if _, err := redis.ParseURL(raw); err != nil {
				redistest.AssertNoPassword(t, "ParseURL's error", err.Error())
				if _, err := redis.Open(raw); err != nil {
					redistest.AssertNoPassword(t, "Open's error", err.Error())
				} else {
					t.Error("Open accepted a URL that ParseURL refused")
				}
			} else if strings.ContainsAny(password, "?/@%#[] ") {
				t.Errorf("ParseURL accepted a password with a character to encode, unencoded")
			}

			// Encoded, it authenticates.
			for _, tc := range []struct {
				name, url string
				works     bool
			}{
				{"right password", "redis://" + user + ":" + redistest.EncodePassword(password) + "@" + srv.Addr() + "/0", true},
				{"wrong password", "redis://" + user + ":" + redistest.EncodePassword(password+"x") + "@" + srv.Addr() + "/0", false},
				{"Redis down", "redis://" + user + ":" + redistest.EncodePassword(password) + "@" + down + "/0", false},
				{"cluster down", "redis+cluster://" + user + ":" + redistest.EncodePassword(password) + "@" + down, false},
				{"sentinel down", "redis+sentinel://" + user + ":" + redistest.EncodePassword(password) + "@" + down +
					"/mymaster?sentinel_password=" + redistest.EncodePassword(password), false},
			} {
				store, err := redis.Open(tc.url, redis.WithPrefix(redistest.KeyPrefix(t)), redis.WithLogger(log))
				if err != nil {
					t.Fatalf("%s: Open: %v", tc.name, err)
				}
				redistest.AssertNoPassword(t, tc.name+": String", store.String())
				err = store.Ping(t.Context())
				if tc.works != (err == nil) {
					t.Fatalf("%s: Ping: %v", tc.name, err)
				}
				if err != nil {
					redistest.AssertNoPassword(t, tc.name+": Ping's error", err.Error())
				}
				_, err = store.Allow(t.Context(), "client", p)
				if tc.works != (err == nil) {
					t.Fatalf("%s: Allow: %v", tc.name, err)
				}
				if err != nil {
					redistest.AssertNoPassword(t, tc.name+": Allow's error", err.Error())
				}
				lim, err := limiter.New(store, p, limiter.WithLogger(log))
				if err != nil {
					t.Fatal(err)
				}
				lim.Middleware(http.NotFoundHandler()).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
				_ = store.Close()
			}
		})
	}
	if !strings.Contains(logs.String(), "rate limit store failed") {
		t.Errorf("the limiter logged no store failure, so the test proves nothing of its log:\n%s", logs.String())
	}
	redistest.AssertNoPassword(t, "the log", logs.String())
}
