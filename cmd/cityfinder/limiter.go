package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// What the rate limiter tells a client, in the product's words: the limiter
// has none of its own.

// searchUnavailable answers a search while the limiter's store is down and
// --limiter-fail-closed is set.
const searchUnavailable = "Search is unavailable, try again later"

// limitMessage tells a client what the policy allows, for example "You can
// only do 5 searches in 3 seconds", in the 429 body and serve's log. The
// window is written in seconds in its shortest decimal form ("1.5 seconds",
// "0.5 seconds"), as the demo page, which learns the policy from /config,
// writes it too.
func limitMessage(p limiter.Policy) string {
	searches := "searches"
	if p.Max == 1 {
		searches = "search"
	}
	seconds := "seconds"
	if p.Window == time.Second {
		seconds = "second"
	}
	return fmt.Sprintf("You can only do %d %s in %s %s",
		p.Max, searches, strconv.FormatFloat(p.Window.Seconds(), 'f', -1, 64), seconds)
}

// limiterStore is where the rate limiter keeps its windows; serve closes
// it on the way out.
type limiterStore interface {
	limiter.Store
	io.Closer
}
