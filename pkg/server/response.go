package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// fail answers r with err's status and message (see errorTable), and logs the errors that
// are the server's problem: a bug (500) at Error, a store that is down, empty
// or slow (503, the operator has something to do) at Warn, a client that
// left at Debug. Client errors (4xx) show only in the access log.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := lookupError(err)
	status, message := e.status, e.message
	level := slog.LevelWarn
	switch {
	case status == statusClientClosedRequest:
		level = slog.LevelDebug
	case status == http.StatusInternalServerError:
		level = slog.LevelError
	case status < http.StatusInternalServerError:
		h.writeMessage(w, status, message)
		return
	}
	h.logger.LogAttrs(r.Context(), level, "request failed",
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("query", r.URL.RawQuery),
		slog.Int("status", status), slog.Any("error", err))
	h.writeMessage(w, status, message)
}

// messageBody is the JSON body of every error.
type messageBody struct {
	Message string `json:"message"`
}

// writeMessage writes {"message": message} with status.
func (h *handler) writeMessage(w http.ResponseWriter, status int, message string) {
	h.writeJSON(w, status, messageBody{Message: message})
}

// Header values shared by every JSON response. net/http only reads them,
// so one slice each saves an allocation per response.
var (
	jsonContentType    = []string{"application/json; charset=utf-8"}
	geoJSONContentType = []string{"application/geo+json; charset=utf-8"}
	noSniff            = []string{"nosniff"}
)

// internalErrorBody is what writeJSON sends when it cannot encode v.
const internalErrorBody = `{"message":"internal error"}`

// writeJSON writes status and v as JSON. It encodes into a pooled buffer
// first, so that an encoding error still gets a clean 500 and the response
// has a Content-Length.
func (h *handler) writeJSON(w http.ResponseWriter, status int, v any) {
	h.writeEncoded(w, status, v, nil)
}

// writeEncoded is writeJSON that hands the body to keep, when not nil,
// before it writes it, unless it could not be encoded.
func (h *handler) writeEncoded(w http.ResponseWriter, status int, v any, keep func(body []byte)) {
	buf := jsonBuffers.Get().(*jsonBuffer)
	defer buf.release()
	body, err := buf.encode(v)
	ctype := jsonContentType
	if _, ok := v.(geoJSON); ok {
		ctype = geoJSONContentType
	}
	h.writeAnswer(w, status, ctype, body, err, keep)
}

// writeAnswer writes body, encoded as JSON of Content-Type ctype, with
// status, and hands it to keep first, when not nil; or a 500 when it
// could not be encoded (err).
func (h *handler) writeAnswer(w http.ResponseWriter, status int, ctype []string, body []byte, err error, keep func(body []byte)) {
	switch {
	case err != nil:
		h.logger.Error("encode response", slog.Any("error", err))
		status, body, ctype = http.StatusInternalServerError, []byte(internalErrorBody), jsonContentType
	case keep != nil:
		keep(body)
	}
	if status != http.StatusOK {
		ctype = jsonContentType
	}
	writeBody(w, status, ctype, body, contentLength(body))
}

// contentLengths holds the Content-Length fields of the bodies shorter
// than maxSharedLength, each made the first time a body of its length is
// written and shared after (net/http only reads them): a search answer
// is one to three kilobytes.
var contentLengths [maxSharedLength]atomic.Pointer[[]string]

const maxSharedLength = 8 << 10

// contentLength is the Content-Length field of body.
func contentLength(body []byte) []string {
	n := len(body)
	if n >= maxSharedLength {
		return []string{strconv.Itoa(n)}
	}
	if field := contentLengths[n].Load(); field != nil {
		return *field
	}
	field := []string{strconv.Itoa(n)}
	contentLengths[n].Store(&field)
	return field
}

// writeBody writes status and the JSON body, of Content-Type ctype and
// Content-Length length (see contentLength).
func writeBody(w http.ResponseWriter, status int, ctype []string, body []byte, length []string) {
	hdr := w.Header()
	hdr["Content-Type"] = ctype
	hdr["X-Content-Type-Options"] = noSniff
	hdr["Content-Length"] = length
	w.WriteHeader(status)
	// An error here means the client is gone; there is no one left to tell.
	_, _ = w.Write(body)
}

// jsonBuffer is an encoder bound to its buffer, pooled across responses.
type jsonBuffer struct {
	buf  bytes.Buffer
	enc  *json.Encoder
	list []byte // search hits, encoded by search.AppendJSON
}

// maxPooledBuffer keeps the pool from holding on to the rare huge response.
const maxPooledBuffer = 64 << 10

var jsonBuffers = sync.Pool{New: func() any {
	b := new(jsonBuffer)
	b.enc = json.NewEncoder(&b.buf)
	b.enc.SetEscapeHTML(false) // names and messages stay readable
	return b
}}

// encode returns v as JSON without the newline that Encode appends. The
// bytes are valid until release.
func (b *jsonBuffer) encode(v any) ([]byte, error) {
	switch hits := v.(type) { // the hot paths: no reflection
	case []search.Hit:
		return b.encodeHits(hits, hitsList)
	case geoJSON:
		return b.encodeHits(hits, hitsGeoJSON)
	case oneHit:
		return b.encodeHits(hits, hitObject)
	}
	b.buf.Reset()
	if err := b.enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return bytes.TrimSuffix(b.buf.Bytes(), []byte("\n")), nil
}

// encodeHits returns hits in form; the bytes are valid until release.
// Hits are encoded here and only here, whatever route found them, so that
// every answer's hits carry their labels (see search.Labels).
func (b *jsonBuffer) encodeHits(hits []search.Hit, form hitsForm) ([]byte, error) {
	switch form {
	case hitsGeoJSON:
		search.Label(hits)
		b.list = search.AppendGeoJSON(b.list[:0], hits)
		return b.list, nil
	case hitObject: // the list's one element: the same bytes as in a list
		if len(hits) != 1 {
			return nil, fmt.Errorf("encode %d hits as one", len(hits))
		}
		search.Label(hits)
		b.list = search.AppendJSON(b.list[:0], hits)
		return b.list[1 : len(b.list)-1], nil
	default:
		search.Label(hits)
		b.list = search.AppendJSON(b.list[:0], hits)
		return b.list, nil
	}
}

func (b *jsonBuffer) release() {
	if b.buf.Cap() > maxPooledBuffer || cap(b.list) > maxPooledBuffer {
		return
	}
	jsonBuffers.Put(b)
}
