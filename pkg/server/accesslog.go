package server

import (
	"log/slog"
	"net/http"
	"time"
)

// accessLog gives every request its id (X-Request-Id: the client's when it
// is sane, else a new one), echoed in the response and carried by every log
// record of the request (see LogRequestIDs); it counts the request in the
// metrics (WithMetrics), and logs one line per request at Debug. With
// neither metrics nor Debug the response writer is not even wrapped.
func (h *handler) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, st := withState(r, requestID(r.Header.Get(headerRequestID)))
		w.Header()[headerRequestID] = st.idField[:]
		ctx := r.Context()
		m := h.ops.metrics
		logging := h.logger.Enabled(ctx, slog.LevelDebug)
		if m == nil && !logging {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &st.rec
		rec.ResponseWriter = w
		if m != nil {
			m.inFlight.Inc()
			defer m.inFlight.Dec() // also when a handler panics
		}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK // a handler that writes nothing sends 200
		}
		if m != nil {
			m.observe(r, st, rec.status, time.Since(start)) // r.Pattern: set by the mux
		}
		if !logging {
			return
		}
		h.logger.LogAttrs(ctx, slog.LevelDebug, "request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.String("query", r.URL.RawQuery),
			slog.Int("status", rec.status),
			slog.Int("bytes", rec.bytes),
			slog.Duration("duration", time.Since(start)),
			slog.String("remote", r.RemoteAddr),
		)
	})
}

// statusRecorder remembers the status and body size of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 && status >= 200 { // 1xx are interim, not the answer
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer
// (Flush, deadlines) through the recorder.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
