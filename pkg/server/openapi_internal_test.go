package server

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/server/openapitest"
)

// brokenAnswers collects the answers of this package's tests that break
// docs/openapi.json.
var brokenAnswers struct {
	sync.Mutex
	errs []error
}

// TestMain holds every answer that the tests of this package get from New's
// handler, and the draining Server's own, to the OpenAPI document
// (docs/openapi.json): the run fails when one breaks it, so that the
// document cannot drift from the code. A run of benchmarks alone (-run
// matching no test) times the handler, not the check.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() != "" && flag.Lookup("test.run").Value.String() == "^$" {
		os.Exit(m.Run())
	}
	doc, err := openapitest.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	observeAnswers = func(h http.Handler) http.Handler {
		return doc.Handler(h, func(err error) {
			brokenAnswers.Lock()
			defer brokenAnswers.Unlock()
			brokenAnswers.errs = append(brokenAnswers.errs, err)
		})
	}
	code := m.Run()
	brokenAnswers.Lock()
	defer brokenAnswers.Unlock()
	if n := len(brokenAnswers.errs); n > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d answers break docs/openapi.json:\n", n)
		for i, err := range brokenAnswers.errs {
			if i == 20 {
				fmt.Fprintf(os.Stderr, "... and %d more\n", n-i)
				break
			}
			fmt.Fprintf(os.Stderr, "- %.1500s\n", err)
		}
		code = 1
	}
	os.Exit(code)
}
