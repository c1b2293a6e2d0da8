package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
)

// secretHalves surround the special character of each test password; a
// message that shows either half shows (part of) the password.
const secretHalves = "Zq9Rt" + "|" + "vXk7w"

// No message of import, query or serve shows a MongoDB password, whatever
// characters it holds, written raw or percent-encoded: not the errors, not
// the startup lines, not the count warnings, not the 503 and readiness
// logs. Raw '/', ':', '@' and '%' make the URI invalid (the driver refuses
// them); the others are valid and reach a server that is down, and (when
// one can be had) FerretDB, which refuses every login. (FerretDB answers
// "Unsupported authentication mechanism" where MongoDB answers
// "Authentication failed"; neither quotes the password.)
func TestMongoPasswordNeverPrinted(t *testing.T) {
	t.Parallel()
	left, right, _ := strings.Cut(secretHalves, "|")
	csv := writeFile(t, "cities.csv", twoCities)
	for _, special := range []string{"?", "/", "@", ":", "%", "#", "[", "]", " "} {
		password := left + special + right
		for _, form := range []struct {
			name, userInfo string
		}{
			{"raw", "app:" + password},
			{"encoded", "app:" + url.PathEscape(password)},
		} {
			t.Run(form.name+" "+special, func(t *testing.T) {
				t.Parallel()
				checkPasswordHidden(t, "mongodb://"+form.userInfo+"@127.0.0.1:1/", csv) // nothing listens there
			})
		}
	}
	t.Run("scheme typo", func(t *testing.T) {
		t.Parallel()
		checkPasswordHidden(t, "mongodb:/app:"+left+"?"+right+"@127.0.0.1:1/", csv)
	})
	t.Run("raw ? on a server that refuses the login", func(t *testing.T) {
		t.Parallel()
		host := strings.Trim(strings.TrimPrefix(mongotest.URI(t), "mongodb://"), "/")
		checkPasswordHidden(t, "mongodb://app:"+left+"?"+right+"@"+host+"/", csv)
	})
}

func checkPasswordHidden(t *testing.T, uri, csv string) {
	t.Helper()
	left, right, _ := strings.Cut(secretHalves, "|")
	for _, out := range mongoMessages(t, uri, csv) {
		if strings.Contains(out, left) || strings.Contains(out, right) {
			t.Errorf("the password shows in:\n%s", out)
		}
	}
}

// mongoMessages runs import, query and serve (with a search and a readiness
// probe) on uri at the debug log level, and returns everything they printed
// and every error they returned.
func mongoMessages(t *testing.T, uri, csv string) []string {
	t.Helper()
	fast := []string{"--mongo-uri", uri, "--mongo-connect-timeout", "300ms", "--mongo-query-timeout", "300ms", "--log-level", "debug"}
	var outs []string
	collect := func(stdout, stderr string, err error) {
		outs = append(outs, stdout, stderr)
		if err != nil {
			outs = append(outs, err.Error())
		}
	}
	collect(runCLI(t, append([]string{"import", "--file", csv}, fast...)...))
	collect(runCLI(t, append([]string{"query", "par"}, fast...)...))

	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type result struct {
		stdout, stderr string
		err            error
	}
	done := make(chan result, 1)
	go func() {
		stdout, stderr, err := runCLIContext(ctx, append([]string{"serve", "--addr", addr, "--max", "1000", "--drain-delay", "0", "--data-dir", t.TempDir()}, fast...)...)
		done <- result{stdout, stderr, err}
	}()
	var r result
	exited := false
	poll.Until(t, 10*time.Second, "serve to answer or fail", func() bool {
		select {
		case r = <-done: // an invalid URI: serve refuses to start
			exited = true
			return true
		default:
		}
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	if exited && mongo.CheckURI(uri) == nil {
		t.Errorf("serve with a valid URI did not start: %v", r.err)
	}
	if !exited {
		for _, path := range []string{"/search?q=par", "/readyz", "/metrics"} {
			_, body := fetch(t, http.MethodGet, "http://"+addr+path, nil)
			outs = append(outs, body)
		}
		cancel()
		r = <-done
	}
	collect(r.stdout, r.stderr, r.err)
	return outs
}
