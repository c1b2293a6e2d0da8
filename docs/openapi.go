// Package docs carries the documents that the binary serves: the OpenAPI
// description of the HTTP API, which GET /openapi.json answers and which
// the tests hold the handler's answers to.
package docs

import _ "embed"

// OpenAPI is openapi.json, the OpenAPI 3.1 document of the HTTP API. It is
// the one source of truth: edit the file, not a copy.
//
//go:embed openapi.json
var OpenAPI []byte
