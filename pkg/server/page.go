package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/server/web"
)

// PageConfig is what the demo page learns from GET /config, besides what
// the handler knows by itself (the query limits, and which datasets the
// service can search).
type PageConfig struct {
	// SearchMax and SearchWindow are the rate limit that the /search
	// middleware enforces: SearchMax searches per client in any
	// SearchWindow. The page paces its requests to stay under it. A zero
	// SearchMax means /search is not limited.
	SearchMax    int
	SearchWindow time.Duration
}

// configJSON is the body of GET /config.
type configJSON struct {
	// Limit is null when /search is not limited.
	Limit      *limitJSON    `json:"limit"`
	MinLetters int           `json:"min_letters"`
	MaxLength  int           `json:"max_length"`
	Datasets   []datasetJSON `json:"datasets"`
}

type limitJSON struct {
	Max           int     `json:"max"`
	WindowSeconds float64 `json:"window_seconds"`
}

// datasetJSON tells the page about one dataset, for example
// {"name":"small","available":true,"cities":33886}.
type datasetJSON struct {
	Name string `json:"name"`
	// Available is false when the dataset was never imported: the page
	// disables it. A store that cannot answer now leaves it true, since
	// the page then learns from the search itself what is wrong.
	Available bool `json:"available"`
	// Cities is how many cities the dataset holds; absent when unknown.
	Cities int `json:"cities,omitempty"`
}

// configStatsTimeout bounds the dataset look-ups of one GET /config, so
// that a slow store delays the page's start by little: past it, the
// datasets not yet looked up count as available.
const configStatsTimeout = 500 * time.Millisecond

func newConfigJSON(cfg PageConfig) configJSON {
	c := configJSON{MinLetters: search.MinQueryLetters, MaxLength: search.MaxQueryRunes}
	if cfg.SearchMax > 0 && cfg.SearchWindow > 0 {
		c.Limit = &limitJSON{Max: cfg.SearchMax, WindowSeconds: cfg.SearchWindow.Seconds()}
	}
	return c
}

// datasets describes every dataset for GET /config. It costs one
// Service.Stats per dataset, which the stores answer from memory or from
// one small document, never by searching.
func (h *handler) datasets(ctx context.Context) []datasetJSON {
	ctx, cancel := context.WithTimeout(ctx, configStatsTimeout)
	defer cancel()
	out := make([]datasetJSON, 0, len(search.Datasets))
	for _, d := range search.Datasets {
		st, err := h.service.Stats(ctx, d)
		out = append(out, datasetJSON{Name: string(d), Available: !errors.Is(err, search.ErrEmptyDataset), Cities: st.Cities})
	}
	return out
}

// Cache policies of the page. The HTML is revalidated on every visit (by
// its ETag), so that a new binary's page shows at once; it links to the
// assets with their content hash in the query, so those URLs never change
// meaning and can be kept for good.
const (
	cacheRevalidate = "no-cache"
	cacheImmutable  = "public, max-age=31536000, immutable"
)

// pageCSP allows the page nothing but its own origin: no inline script, no
// third-party anything. The favicon is "data:," so that browsers do not ask
// for /favicon.ico.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string // quoted
	version     string // the start of the content hash, as index.html links to it
}

func newAsset(name string, body []byte) (*asset, error) {
	contentType, ok := assetTypes[path.Ext(name)]
	if !ok {
		return nil, fmt.Errorf("demo page asset %s: unknown content type", name)
	}
	sum := sha256.Sum256(body)
	version := hex.EncodeToString(sum[:6])
	return &asset{body: body, contentType: contentType, etag: `"` + version + `"`, version: version}, nil
}

// assetTypes are the content types of the page's files, fixed here rather
// than taken from the system's MIME tables, which vary.
var assetTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".json": "application/json; charset=utf-8",
}

// pageAssets is the demo page: index.html, rewritten to link to the
// versioned URLs of the assets, and the assets by file name.
type pageAssets struct {
	index  *asset
	static map[string]*asset
}

// loadPage reads the embedded page once; the files are part of the binary,
// so failing to read them is a build error and panics.
var loadPage = sync.OnceValue(func() *pageAssets {
	p, err := readPage(web.Files)
	if err != nil {
		panic(err)
	}
	return p
})

func readPage(files fs.FS) (*pageAssets, error) {
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		return nil, fmt.Errorf("read demo page: %w", err)
	}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, fmt.Errorf("read demo page: %w", err)
	}
	p := &pageAssets{static: make(map[string]*asset)}
	var links []string
	for _, e := range entries {
		name := e.Name()
		if name == "index.html" {
			continue
		}
		body, err := fs.ReadFile(files, name)
		if err != nil {
			return nil, fmt.Errorf("read demo page: %w", err)
		}
		a, err := newAsset(name, body)
		if err != nil {
			return nil, err
		}
		p.static[name] = a
		link := `"/static/` + name + `"`
		links = append(links, link, `"/static/`+name+`?v=`+a.version+`"`)
	}
	if p.index, err = newAsset("index.html", []byte(strings.NewReplacer(links...).Replace(string(index)))); err != nil {
		return nil, err
	}
	return p, nil
}

// pageRoutes adds the demo page, its assets and its configuration to mux.
// None of them goes through the search middleware: loading the page must
// not cost a client any of its searches.
func (h *handler) pageRoutes(mux *http.ServeMux, cfg PageConfig) {
	page := loadPage()
	config := newConfigJSON(cfg)

	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("Content-Security-Policy", pageCSP)
		hdr.Set("Referrer-Policy", "no-referrer")
		serveAsset(w, r, page.index, cacheRevalidate)
	})
	mux.Handle("/{$}", h.methodNotAllowed("GET, HEAD"))

	mux.HandleFunc("GET /static/{name}", func(w http.ResponseWriter, r *http.Request) {
		a, ok := page.static[r.PathValue("name")]
		if !ok {
			h.notFound(w, r)
			return
		}
		cache := cacheRevalidate
		if r.URL.Query().Get("v") == a.version {
			cache = cacheImmutable
		}
		serveAsset(w, r, a, cache)
	})
	mux.Handle("/static/{name}", h.methodNotAllowed("GET, HEAD"))

	mux.HandleFunc("GET /config", func(w http.ResponseWriter, r *http.Request) {
		c := config
		c.Datasets = h.datasets(r.Context())
		w.Header().Set("Cache-Control", cacheRevalidate)
		h.writeJSON(w, http.StatusOK, c)
	})
	mux.Handle("/config", h.methodNotAllowed("GET, HEAD"))
}

// serveAsset answers with a, or 304 when the client's copy is current.
func serveAsset(w http.ResponseWriter, r *http.Request, a *asset, cacheControl string) {
	hdr := w.Header()
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("Cache-Control", cacheControl)
	hdr.Set("ETag", a.etag)
	hdr["X-Content-Type-Options"] = noSniff
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
