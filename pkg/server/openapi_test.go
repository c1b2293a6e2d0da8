package server_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/cityfinder/cityfinder/docs"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// GET /openapi.json answers the document the binary carries, and is never
// rate limited.
func TestOpenAPIDocumentIsServed(t *testing.T) {
	h := server.New(unreachable(t), server.WithSearchMiddleware(rejectAll(t, nil)))
	rec := do(t, h, http.MethodGet, "/openapi.json")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.json = %d, want 200", rec.Code)
	}
	if got := rec.Header().Get("Content-Type"); got != "application/json; charset=utf-8" {
		t.Errorf("Content-Type = %q", got)
	}
	if !bytes.Equal(rec.Body.Bytes(), docs.OpenAPI) {
		t.Errorf("GET /openapi.json answered %d bytes, not the %d of docs/openapi.json", rec.Body.Len(), len(docs.OpenAPI))
	}
	if rec := do(t, h, http.MethodPost, "/openapi.json"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /openapi.json = %d, want 405", rec.Code)
	}
}
