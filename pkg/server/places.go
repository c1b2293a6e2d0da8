package server

import (
	"fmt"
	"net/http"

	"github.com/cityfinder/cityfinder/pkg/search"
	"golang.org/x/text/language"
)

// hitsForm is how an answer's hits are written (see writeHits).
type hitsForm int

const (
	hitsList    hitsForm = iota // a JSON array of hit objects (/search, /reverse)
	hitsGeoJSON                 // a GeoJSON FeatureCollection (format=geojson)
	hitObject                   // the one hit's object alone (/cities/{id})
)

// answer writes the hits that call gets from the Service for a request
// of dataset d, named in the request's languages (see decodeLanguages), in
// form, or its error. It is the one way the API writes cities, whatever
// the route (see writeHits).
func (h *handler) answer(w http.ResponseWriter, r *http.Request, d search.Dataset, form hitsForm, call func(langs []language.Tag) ([]search.Hit, error)) {
	langs, byHeader, err := decodeLanguages(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.answerIn(w, r, d, form, langs, byHeader, nil, call)
}

// answerIn is answer in langs, decoded already (by the header when
// byHeader); keep, when not nil, is handed the body of a successful answer
// before it is written.
func (h *handler) answerIn(w http.ResponseWriter, r *http.Request, d search.Dataset, form hitsForm, langs []language.Tag, byHeader bool,
	keep func(body []byte), call func(langs []language.Tag) ([]search.Hit, error)) {
	hits, err := call(langs)
	if err != nil {
		h.ops.storeFailed(d, err)
		h.fail(w, r, err)
		return
	}
	h.succeeded(w.Header(), byHeader)
	h.writeHits(w, hits, form, keep)
}

// succeeded sets the headers of every successful answer of hits but the
// body's own: Cache-Control and Vary (see languageSucceeded).
func (h *handler) succeeded(hdr http.Header, byHeader bool) {
	h.ops.searchSucceeded(hdr)
	h.ops.languageSucceeded(hdr, byHeader)
}

// writeHits writes hits in form, so that every route's hits carry the
// same fields, encoded the same way; keep, when not nil, is handed the
// body first. It is writeEncoded without making hits an interface value
// (an allocation an answer).
func (h *handler) writeHits(w http.ResponseWriter, hits []search.Hit, form hitsForm, keep func(body []byte)) {
	buf := jsonBuffers.Get().(*jsonBuffer)
	defer buf.release()
	body, err := buf.encodeHits(hits, form)
	h.writeAnswer(w, http.StatusOK, contentType(form), body, err, keep)
}

// contentType is the Content-Type of a successful answer in form.
func contentType(form hitsForm) []string {
	if form == hitsGeoJSON {
		return geoJSONContentType
	}
	return jsonContentType
}

// listForm is the form of an answer that is a list: GeoJSON when asked.
func listForm(asGeoJSON bool) hitsForm {
	if asGeoJSON {
		return hitsGeoJSON
	}
	return hitsList
}

// oneHit is an answer of one hit, written as its object (see
// jsonBuffer.encode).
type oneHit []search.Hit

// city answers GET /cities/{id}?dataset=…: the city of that id, as a
// /search hit without a match.
func (h *handler) city(w http.ResponseWriter, r *http.Request) {
	req := search.LookupRequest{ID: r.PathValue("id"), Dataset: search.Dataset(paramsOf(r).Get("dataset"))}
	h.answer(w, r, req.Dataset, hitObject, func(langs []language.Tag) ([]search.Hit, error) {
		hit, err := h.service.Lookup(r.Context(), req)
		hits := []search.Hit{hit}
		search.Localize(hits, langs)
		return hits, err
	})
}

// reverse answers GET /reverse?lat=…&lon=…: the cities around the point,
// best first (see search.Service.Reverse), through middleware (the rate
// limiter) like /search.
func (h *handler) reverse(middleware func(http.Handler) http.Handler) http.Handler {
	var answer http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, asGeoJSON, err := decodeReverse(paramsOf(r))
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.answer(w, r, req.Dataset, listForm(asGeoJSON), func(langs []language.Tag) ([]search.Hit, error) {
			res, err := h.service.Reverse(r.Context(), req)
			search.Localize(res.Hits, langs)
			return res.Hits, err
		})
	})
	if middleware != nil {
		answer = middleware(answer)
	}
	return answer
}

// decodeReverse reads the parameters of /reverse: lat and lon (both
// needed), dataset, limit, country, radius_km and format, as /search reads
// those it shares with it.
func decodeReverse(params *values) (req search.ReverseRequest, geoJSON bool, err error) {
	q, err := decodeQuery(params)
	if err != nil {
		return req, false, err
	}
	req = search.ReverseRequest{Dataset: q.Dataset, Limit: q.Limit, Countries: q.Countries}
	if req.Point, err = search.ParseLatLon(params.Get("lat"), params.Get("lon")); err != nil {
		return req, false, err
	}
	if s := params.Get("radius_km"); s != "" {
		v, ok := search.ParseDecimal(s)
		if !ok || v <= 0 || v > search.MaxRadiusKm {
			return req, false, badRequest(fmt.Sprintf("Invalid radius_km %q: use a number of kilometres above 0 and at most %d", s, search.MaxRadiusKm))
		}
		req.RadiusKm = v
	}
	geoJSON, err = decodeFormat(params)
	return req, geoJSON, err
}
