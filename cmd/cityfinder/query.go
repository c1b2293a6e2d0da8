package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cityfinder/cityfinder/pkg/search"
)

type queryOptions struct {
	Limit     int
	JSON      bool
	Country   string
	Fuzzy     bool
	Near      string
	BiasScale float64
	Box       string
	Lang      string
}

func newQueryCmd(a *app) *cobra.Command {
	var opts queryOptions
	cmd := &cobra.Command{
		Use:   "query TEXT",
		Short: "Print the cities whose names start with TEXT, best first, straight from the store",
		Example: `  cityfinder query istanbul
  cityfinder query "sao p" --json
  cityfinder query san --dataset large --limit 20`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errNoQueryText
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuery(cmd.Context(), a, cmd.OutOrStdout(), opts, strings.Join(args, " "))
		},
	}
	addSettingFlags(cmd.Flags(), cmdQuery)
	cmd.Flags().IntVar(&opts.Limit, "limit", search.DefaultLimit, fmt.Sprintf("how many matches to print (1..%d)", search.MaxLimit))
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON array, as the HTTP API does")
	cmd.Flags().StringVar(&opts.Country, "country", "", "only cities of these countries: ISO codes or English names, comma-separated")
	cmd.Flags().BoolVar(&opts.Fuzzy, "fuzzy", true, "also list typo matches (from 5 letters on)")
	cmd.Flags().StringVar(&opts.Near, "near", "", "rank cities near LAT,LON higher, and print how far they are")
	cmd.Flags().Float64Var(&opts.BiasScale, "bias-scale", search.DefaultBiasScale, "how strongly --near pulls, from 0 (not at all) to 1")
	cmd.Flags().StringVar(&opts.Box, "bbox", "", "only cities inside minLon,minLat,maxLon,maxLat")
	cmd.Flags().StringVar(&opts.Lang, "lang", "", "show names in these languages, best first (de,en), where the import had them (see import --alternate-names)")
	return cmd
}

func runQuery(ctx context.Context, a *app, out io.Writer, opts queryOptions, text string) error {
	var res search.Result
	err := withService(a, func(svc *search.Service) error {
		req, err := opts.request(search.Dataset(a.cfg.Dataset), text)
		if err != nil {
			return err
		}
		res, err = svc.Find(ctx, req)
		return err
	})
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSONLine(out, labelled(res.Hits...))
	}
	if len(res.Hits) == 0 {
		_, err := fmt.Fprintf(out, "no cities matching %q\n", text)
		return err
	}
	return writeHits(out, res.Hits)
}

// request is the search that opts ask for, or an error that names the flag
// at fault in the CLI's words (the domain's name the API's fields).
func (o queryOptions) request(d search.Dataset, text string) (search.Request, error) {
	req := search.Request{Dataset: d, Text: text, Limit: o.Limit, Countries: o.Country, Fuzzy: o.Fuzzy, BiasScale: o.BiasScale}
	if o.Limit < 1 || o.Limit > search.MaxLimit {
		return req, fmt.Errorf("invalid --limit %d: use a whole number from 1 to %d", o.Limit, search.MaxLimit)
	}
	if o.Country != "" {
		if _, err := search.ParseCountries(o.Country); err != nil {
			return req, fmt.Errorf("invalid --country: %w", err)
		}
	}
	if !(o.BiasScale >= 0 && o.BiasScale <= 1) { // NaN too
		return req, fmt.Errorf("invalid --bias-scale %v: use a number from 0 to 1", o.BiasScale)
	}
	var err error
	if req.Languages, err = search.ParseLanguages(o.Lang); err != nil {
		return req, fmt.Errorf("invalid --lang: %w", err)
	}
	if o.Near != "" {
		if req.Near, err = search.ParsePoint(o.Near); err != nil {
			return req, fmt.Errorf("invalid --near %q: use LAT,LON, latitude from -90 to 90 and longitude from -180 to 180", o.Near)
		}
	}
	if o.Box != "" {
		if req.Box, err = search.ParseBox(o.Box); err != nil {
			return req, fmt.Errorf("invalid --bbox %q: use minLon,minLat,maxLon,maxLat (longitudes -180 to 180, latitudes -90 to 90, min ≤ max)", o.Box)
		}
	}
	return req, nil
}

// checkDataDir fails a query of the embedded store whose data directory
// does not exist: it would only find every dataset empty.
func checkDataDir(a *app) error {
	if a.cfg.Mongo.URI != "" {
		return nil
	}
	if _, err := os.Stat(a.cfg.DataDir); errors.Is(err, fs.ErrNotExist) {
		return &noDataDirError{dir: a.cfg.DataDir, dataset: search.Dataset(a.cfg.Dataset)}
	}
	return nil
}

// writeHits prints hits as a table with a header: the region is its name
// (Subcountry), never its code, which means nothing to people (--json has
// both); the population has thousands separators, and a note says when a
// city matched by another name or by correcting a typo. Columns that no hit
// fills are left out.
func writeHits(out io.Writer, hits []search.Hit) error {
	cols := []column{{title: "NAME"}, {title: "COUNTRY"}, {title: "REGION"}, {title: "POPULATION", right: true}, {title: "NOTE"}}
	rows := make([][]string, len(hits))
	for i, h := range hits {
		var pop, note string
		if h.Population > 0 {
			pop = thousands(h.Population)
		}
		switch {
		case h.Matched != nil && h.Matched.Former:
			note = fmt.Sprintf("formerly %q", h.Matched.Name)
		case h.Matched != nil:
			note = fmt.Sprintf("matched %q", h.Matched.Name)
		case h.Corrected != "":
			note = fmt.Sprintf("corrected to %q", h.Corrected)
		}
		rows[i] = []string{h.Name, h.Country, h.Subcountry, pop, note}
	}
	return writeTable(out, cols, rows)
}
