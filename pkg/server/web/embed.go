// Package web is the demo page that `cityfinder serve` shows at /: one HTML
// page, its script and its style sheet, embedded in the binary so that the
// page needs no build step and works offline.
package web

import "embed"

// Files holds index.html and the assets it links to (app.js, style.css).
//
//go:embed index.html app.js style.css
var Files embed.FS
