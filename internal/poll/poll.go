// Package poll lets tests wait for what another goroutine or process makes
// true (a server that answers, a file read halfway, a reload), instead of
// sleeping for a fixed time and hoping.
package poll

import (
	"testing"
	"time"
)

// Until calls cond until it returns true, and fails tb with what after
// timeout. It checks at once, then at growing intervals from 1 ms up to
// 50 ms, so that a quick event is seen quickly and a slow one costs
// little.
func Until(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Within(timeout, cond) {
		tb.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Within calls cond as Until does and reports whether it held within
// timeout, for tests that clean up before they fail.
func Within(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; !cond(); wait = min(2*wait, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
	return true
}

// UntilNil calls cond as Until does until it returns nil, and fails tb
// with the last error it returned after timeout: the error says what is
// not true yet. cond runs on the calling goroutine, so it may call tb.Fatal.
func UntilNil(tb testing.TB, timeout time.Duration, cond func() error) {
	tb.Helper()
	var last error
	if !Within(timeout, func() bool { last = cond(); return last == nil }) {
		tb.Fatalf("still after %s: %v", timeout, last)
	}
}
