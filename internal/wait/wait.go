// Package wait lets a test wait for an event by polling for it, with a
// deadline, instead of sleeping for a time it guessed.
package wait

import (
	"testing"
	"time"
)

// Every is how often Until polls.
const Every = 10 * time.Millisecond

// Until calls cond every Every until it returns nil, and fails tb with the
// last error it returned if that has not happened within timeout. cond runs
// on the calling goroutine, so it may call tb.Fatal too.
func Until(tb testing.TB, timeout time.Duration, cond func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("still after %s: %v", timeout, err)
		}
		time.Sleep(Every)
	}
}
