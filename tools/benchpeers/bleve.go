package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/token/edgengram"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	blevequery "github.com/blevesearch/bleve/v2/search/query"
)

// bleveEngine is bleve v2 as its autocomplete guide
// (docs/search_autocomplete.md) builds it: a field of front edge n-grams
// of every word for the word being typed, beside a field of whole words
// for fuzzy matching, on the default (scorch) index on disk.
type bleveEngine struct {
	dir   string
	index bleve.Index
}

// The fields of a bleve document. The index stores none: a hit's id is the
// city's line in cities.tsv and its slug (see bleveID).
type bleveCity struct {
	Name       string  `json:"name"`
	Prefix     string  `json:"prefix"`
	Population float64 `json:"population"`
}

const bleveBatch = 10000

func (b *bleveEngine) Config() string {
	return "bleve v2.6.3, scorch on disk; `name`: unicode words, lower case; `prefix`: the same words as front edge n-grams of 1–20 letters " +
		"(the autocomplete guide's analyzer); both without frequencies and norms, so that every city holding a term scores the same; " +
		"query: a conjunction over the words, each a fuzzy query on `name` with the word's budget (1 edit from 5 letters, 2 from 7) " +
		"or a term query below 5, the last also a term query on `prefix`; sorted by score (fuzzy matches boosted down by their edits), then population"
}

func (b *bleveEngine) Start(context.Context) error { return nil }

func (b *bleveEngine) Build(_ context.Context, cities []city) error {
	m := bleve.NewIndexMapping()
	if err := m.AddCustomTokenFilter("edge", map[string]any{"type": edgengram.Name, "min": 1.0, "max": 20.0, "back": false}); err != nil {
		return err
	}
	for name, filters := range map[string][]string{"words": {lowercase.Name}, "edges": {lowercase.Name, "edge"}} {
		if err := m.AddCustomAnalyzer(name, map[string]any{"type": custom.Name, "tokenizer": unicode.Name, "token_filters": filters}); err != nil {
			return err
		}
	}
	text := func(analyzer string) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer, f.Store, f.IncludeInAll, f.IncludeTermVectors, f.DocValues, f.SkipFreqNorm = analyzer, false, false, false, false, true
		return f
	}
	pop := bleve.NewNumericFieldMapping()
	pop.Store, pop.IncludeInAll = false, false
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("name", text("words"))
	doc.AddFieldMappingsAt("prefix", text("edges"))
	doc.AddFieldMappingsAt("population", pop)
	m.DefaultMapping = doc
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	var err error
	if b.index, err = bleve.New(filepath.Join(b.dir, "bleve"), m); err != nil {
		return err
	}
	batch := b.index.NewBatch()
	for i, c := range cities {
		if err := batch.Index(strconv.Itoa(i)+" "+c.slug, bleveCity{Name: c.text, Prefix: c.text, Population: float64(c.population)}); err != nil {
			return err
		}
		if batch.Size() == bleveBatch || i == len(cities)-1 {
			if err := b.index.Batch(batch); err != nil {
				return fmt.Errorf("index batch: %w", err)
			}
			batch.Reset()
		}
	}
	return nil
}

func (b *bleveEngine) Find(ctx context.Context, q query) ([]string, error) {
	words := strings.Fields(q.text)
	conj := make([]blevequery.Query, len(words))
	for i, w := range words {
		var whole blevequery.Query
		if e := wordEdits(w); e > 0 {
			f := bleve.NewFuzzyQuery(w)
			f.SetField("name")
			f.SetFuzziness(e)
			whole = f
		} else {
			t := bleve.NewTermQuery(w)
			t.SetField("name")
			whole = t
		}
		if i == len(words)-1 {
			p := bleve.NewTermQuery(w)
			p.SetField("prefix")
			whole = bleve.NewDisjunctionQuery(p, whole)
		}
		conj[i] = whole
	}
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(conj...), 10, 0, false)
	req.SortBy([]string{"-_score", "-population"})
	res, err := b.index.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	slugs := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		_, slugs[i], _ = strings.Cut(h.ID, " ")
	}
	return slugs, nil
}

func (b *bleveEngine) Memory() (int64, string, error) { return selfRSS() }

func (b *bleveEngine) Close() error {
	if b.index == nil {
		return nil
	}
	err := b.index.Close()
	os.RemoveAll(filepath.Join(b.dir, "bleve"))
	return err
}
