package main

import (
	"io"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// limiterStore is where the rate limiter keeps its windows; serve closes
// it on the way out.
type limiterStore interface {
	limiter.Store
	io.Closer
}
