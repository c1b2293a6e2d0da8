// Package openapitest holds the answers of cityfinder's HTTP API to its
// OpenAPI document (docs.OpenAPI), so that the document cannot drift from
// the code: the tests of pkg/server and of the command wrap the handlers
// they call in Document.Handler, which checks every answer they see.
package openapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/cityfinder/cityfinder/docs"
)

func init() {
	// /search?format=geojson answers application/geo+json, which is JSON.
	openapi3filter.RegisterBodyDecoder("application/geo+json", openapi3filter.JSONBodyDecoder)
}

// Document is a parsed and validated OpenAPI document, ready to check
// answers against.
type Document struct {
	router routers.Router
	// notFound and methodNotAllowed stand for the operations of a path
	// that the document does not list and of a method that a listed path
	// does not serve: their one answer is the component of that name.
	notFound, methodNotAllowed *routers.Route
}

// Load parses docs.OpenAPI, validates it as an OpenAPI document, and
// returns it ready to check answers.
func Load() (*Document, error) { return Parse(docs.OpenAPI) }

// Parse is Load for the document data, for tests of a broken document.
func Parse(data []byte) (*Document, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI document: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("validate OpenAPI document: %w", err)
	}
	// The servers say where `make run` listens; answers are checked from
	// wherever a test's server listens.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route OpenAPI document: %w", err)
	}
	d := &Document{router: router}
	if d.notFound, err = componentRoute(doc, "NotFound", http.StatusNotFound); err != nil {
		return nil, err
	}
	if d.methodNotAllowed, err = componentRoute(doc, "MethodNotAllowed", http.StatusMethodNotAllowed); err != nil {
		return nil, err
	}
	return d, nil
}

// componentRoute is an operation whose only answer is the response
// component name, with status.
func componentRoute(doc *openapi3.T, name string, status int) (*routers.Route, error) {
	resp := doc.Components.Responses[name]
	if resp == nil {
		return nil, fmt.Errorf("OpenAPI document: no response component %s", name)
	}
	op := &openapi3.Operation{Responses: openapi3.NewResponses(openapi3.WithStatus(status, resp))}
	return &routers.Route{Spec: doc, Path: "(" + name + ")", Operation: op}, nil
}

// Check returns how the answer to r (status, header, body) breaks the
// document, or nil when it does not: its status must be one the
// operation lists, its headers (the required ones present) and body must
// match what the document says of that status. A path that the document
// does not list must answer NotFound, a method that its path does not
// serve MethodNotAllowed. The answers to HEAD have no body and are not
// checked.
func (d *Document) Check(r *http.Request, status int, header http.Header, body []byte) error {
	if r.Method == http.MethodHead {
		return nil
	}
	route, pathParams, err := d.router.FindRoute(r)
	switch {
	case errors.Is(err, routers.ErrPathNotFound):
		route = d.notFound
	case errors.Is(err, routers.ErrMethodNotAllowed):
		route = d.methodNotAllowed
	case err != nil:
		return fmt.Errorf("%s %s: find its operation: %w", r.Method, r.URL, err)
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: pathParams, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	input.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return fmt.Errorf("%s %s answered %d (operation %s %s) against docs/openapi.json: %w\nbody: %.300s",
			r.Method, r.URL, status, route.Method, route.Path, err, body)
	}
	return nil
}

// Handler wraps next so that every answer it gives is checked (see
// Check) once it is written; report hears of each that breaks the
// document. The answers pass through as they are written: the wrapper only
// copies them.
func (d *Document) Handler(next http.Handler, report func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.snapshot(http.StatusOK)
		}
		if rec.status < 200 {
			return
		}
		if err := d.Check(r, rec.status, rec.header, rec.body.Bytes()); err != nil {
			report(err)
		}
	})
}

// recorder copies an answer as it goes through to the client.
type recorder struct {
	http.ResponseWriter
	status int
	header http.Header // as it was when the status was written
	body   bytes.Buffer
}

func (w *recorder) snapshot(status int) {
	w.status, w.header = status, w.ResponseWriter.Header().Clone()
}

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.snapshot(status)
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.snapshot(http.StatusOK)
	}
	w.body.Write(p)
	return w.ResponseWriter.Write(p)
}

// Flush lets streaming handlers (promhttp's compression) flush through.
func (w *recorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the client's writer.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
