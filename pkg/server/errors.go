package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/cityfinder/cityfinder/pkg/breaker"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// badRequest is a problem with the request's parameters that the client
// can fix; its text is the message the client sees.
type badRequest string

func (e badRequest) Error() string { return string(e) }

// errBadRequest is what every badRequest matches in errorTable.
var errBadRequest = errors.New("bad request")

func (e badRequest) Is(target error) bool { return target == errBadRequest }

// UnavailableMessage is what a client reads when its search cannot be
// answered now: a store or the rate limiter's store is down.
const UnavailableMessage = "Search is unavailable, try again later"

// LimitMessage tells a client what the rate limit allows, for example "You
// can only do 5 searches in 3 seconds", in the 429 body and serve's log.
// The window is written in seconds in its shortest decimal form ("1.5
// seconds", "0.5 seconds"), as the demo page, which learns the limit from
// /config, writes it too.
func LimitMessage(max int, window time.Duration) string {
	searches := "searches"
	if max == 1 {
		searches = "search"
	}
	seconds := "seconds"
	if window == time.Second {
		seconds = "second"
	}
	return fmt.Sprintf("You can only do %d %s in %s %s",
		max, searches, strconv.FormatFloat(window.Seconds(), 'f', -1, 64), seconds)
}

// statusClientClosedRequest is nginx's status for a client that left before
// the answer was ready. Nobody reads it but the access log.
const statusClientClosedRequest = 499

// errorKind is what the API makes of one kind of error.
type errorKind struct {
	target error
	status int
	// reason names the kind in one word: the label of
	// cityfinder_search_store_errors_total and a check's word in /readyz.
	reason string
	// message is what the client reads; "" means the error's own words,
	// written for the client (a badRequest or a *search.InvalidError).
	message string
}

// errorTable is the one place that turns errors into HTTP statuses,
// client messages, metric reasons and readiness words; the first kind
// that the error matches wins, and every kind is reached by an error that
// the API meets (a test holds each to one): an unknown dataset, for one,
// is an invalid query (see search.ParseDataset). Messages never carry an
// error's own text unless it was written for the client, so that no
// internal detail (a server's address, a file path) leaks.
var errorTable = []errorKind{
	{errBadRequest, http.StatusBadRequest, "invalid", ""},
	{search.ErrInvalidQuery, http.StatusBadRequest, "invalid", ""},
	{search.ErrNotFound, http.StatusNotFound, "not_found", "No city has this id in this dataset"},
	{search.ErrEmptyDataset, http.StatusServiceUnavailable, "empty", "This dataset is not available yet"},
	{breaker.ErrOpen, http.StatusServiceUnavailable, "circuit_open", UnavailableMessage},
	{search.ErrUnavailable, http.StatusServiceUnavailable, "unavailable", UnavailableMessage},
	{context.DeadlineExceeded, http.StatusServiceUnavailable, "timeout", "Search took too long, try again later"},
	{context.Canceled, statusClientClosedRequest, "canceled", "Request canceled"},
}

// unknownError is what the API makes of an error that no kind matches: a bug.
var unknownError = errorKind{nil, http.StatusInternalServerError, "error", "internal error"}

// lookupError returns the kind of err, with the message filled in.
func lookupError(err error) errorKind {
	for _, k := range errorTable {
		if !errors.Is(err, k.target) {
			continue
		}
		if k.message == "" {
			k.message = clientMessage(err)
		}
		return k
	}
	return unknownError
}

// clientMessage returns the words of an error written for the client.
func clientMessage(err error) string {
	var bad badRequest
	if errors.As(err, &bad) {
		return string(bad)
	}
	var invalid *search.InvalidError
	if errors.As(err, &invalid) {
		return invalid.Message
	}
	return "Invalid query"
}
