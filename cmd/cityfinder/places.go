package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cityfinder/cityfinder/pkg/search"
)

type showOptions struct {
	JSON bool
}

func newShowCmd(a *app) *cobra.Command {
	var opts showOptions
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print the city of an id (its GeoNames id, or the id cityfinder derived; see docs/api.md)",
		Example: `  cityfinder show 2643743
  cityfinder show 2643743 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(cmd.Context(), a, cmd.OutOrStdout(), opts, args[0])
		},
	}
	addSettingFlags(cmd.Flags(), cmdQuery)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the JSON object, as GET /cities/{id} does")
	return cmd
}

func runShow(ctx context.Context, a *app, out io.Writer, opts showOptions, id string) error {
	d := search.Dataset(a.cfg.Dataset)
	var hit search.Hit
	err := withService(a, func(svc *search.Service) (err error) {
		hit, err = svc.Lookup(ctx, search.LookupRequest{Dataset: d, ID: id})
		return err
	})
	var invalid *search.InvalidError
	switch {
	case errors.As(err, &invalid) && invalid.Field == "id":
		return fmt.Errorf("invalid ID %q: use a positive whole number (a city's id, as /search and query --json give it)", id)
	case errors.Is(err, search.ErrNotFound):
		return fmt.Errorf("no city has id %s in dataset %s", id, d)
	case err != nil:
		return err
	}
	if opts.JSON {
		return writeJSONLine(out, labelled(hit)[0])
	}
	return writePlaces(out, []search.Hit{hit})
}

type nearestOptions struct {
	Limit    int
	JSON     bool
	Country  string
	RadiusKm float64
}

func newNearestCmd(a *app) *cobra.Command {
	var opts nearestOptions
	cmd := &cobra.Command{
		Use:   "nearest LAT,LON",
		Short: "Print the cities around a point, the one it is in first (see docs/api.md for the rule)",
		Example: `  cityfinder nearest 48.8566,2.3522
  cityfinder nearest 51.5,-0.12 --limit 5 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNearest(cmd.Context(), a, cmd.OutOrStdout(), opts, args[0])
		},
	}
	addSettingFlags(cmd.Flags(), cmdQuery)
	cmd.Flags().IntVar(&opts.Limit, "limit", search.DefaultLimit, fmt.Sprintf("how many cities to print (1..%d)", search.MaxLimit))
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON array, as GET /reverse does")
	cmd.Flags().StringVar(&opts.Country, "country", "", "only cities of these countries: ISO codes or English names, comma-separated")
	cmd.Flags().Float64Var(&opts.RadiusKm, "radius-km", search.DefaultRadiusKm, fmt.Sprintf("how far from the point a city may be, in km (at most %d)", search.MaxRadiusKm))
	return cmd
}

func runNearest(ctx context.Context, a *app, out io.Writer, opts nearestOptions, point string) error {
	req, err := opts.request(search.Dataset(a.cfg.Dataset), point)
	if err != nil {
		return err
	}
	var res search.Result
	if err := withService(a, func(svc *search.Service) (err error) {
		res, err = svc.Reverse(ctx, req)
		return err
	}); err != nil {
		return err
	}
	if opts.JSON {
		return writeJSONLine(out, labelled(res.Hits...))
	}
	if len(res.Hits) == 0 {
		_, err := fmt.Fprintf(out, "no cities within %s km of %s\n", strconv.FormatFloat(opts.RadiusKm, 'f', -1, 64), point)
		return err
	}
	return writePlaces(out, res.Hits)
}

// negativePointLast moves the LAT,LON of `nearest` that starts with a
// minus ("-33.45,-70.66", Santiago de Chile), which the flag parser would
// read as flags, after a "--" at the end of args, so that it is the
// command's argument wherever it was typed.
func negativePointLast(args []string) []string {
	if len(args) == 0 || args[0] != "nearest" || slices.Contains(args, "--") {
		return args
	}
	for i, a := range args {
		if strings.HasPrefix(a, "-") && strings.Contains(a, ",") {
			if _, err := search.ParsePoint(a); err == nil {
				return append(slices.Delete(slices.Clone(args), i, i+1), "--", a)
			}
		}
	}
	return args
}

// request is the reverse lookup that opts ask for, or an error that names
// the flag at fault in the CLI's words.
func (o nearestOptions) request(d search.Dataset, point string) (search.ReverseRequest, error) {
	req := search.ReverseRequest{Dataset: d, Limit: o.Limit, Countries: o.Country, RadiusKm: o.RadiusKm}
	if o.Limit < 1 || o.Limit > search.MaxLimit {
		return req, fmt.Errorf("invalid --limit %d: use a whole number from 1 to %d", o.Limit, search.MaxLimit)
	}
	if !(o.RadiusKm > 0 && o.RadiusKm <= search.MaxRadiusKm) { // NaN too
		return req, fmt.Errorf("invalid --radius-km %v: use a number of kilometres above 0 and at most %d", o.RadiusKm, search.MaxRadiusKm)
	}
	if o.Country != "" {
		if _, err := search.ParseCountries(o.Country); err != nil {
			return req, fmt.Errorf("invalid --country: %w", err)
		}
	}
	p, err := search.ParsePoint(point)
	if err != nil {
		return req, fmt.Errorf("invalid LAT,LON %q: use decimal degrees, latitude from -90 to 90 and longitude from -180 to 180, such as 48.8566,2.3522", point)
	}
	req.Point = p
	return req, nil
}

// withService opens the store that the configuration names, runs f with a
// Service over it and closes the store.
func withService(a *app, f func(*search.Service) error) error {
	if err := checkDataDir(a); err != nil {
		return err
	}
	store, err := openStore(a, false)
	if err != nil {
		return err
	}
	defer store.Close()
	return f(search.NewService(store))
}

// labelled gives hits their labels, as the HTTP API does for every answer
// it encodes (see search.Label), and returns them.
func labelled(hits ...search.Hit) []search.Hit {
	search.Label(hits)
	return hits
}

// writeJSONLine writes v as the HTTP API does, and a newline.
func writeJSONLine(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writePlaces prints cities found by id or around a point as a table: the
// columns of query's (see writeHits), then how far each is when known, its
// location and its id, which show takes.
func writePlaces(out io.Writer, hits []search.Hit) error {
	cols := []column{{title: "NAME"}, {title: "COUNTRY"}, {title: "REGION"}, {title: "POPULATION", right: true},
		{title: "DISTANCE", right: true}, {title: "LAT,LON"}, {title: "ID", right: true}}
	rows := make([][]string, len(hits))
	for i, h := range hits {
		var pop, dist, loc string
		if h.Population > 0 {
			pop = thousands(h.Population)
		}
		if h.HasDistance {
			dist = strconv.FormatFloat(h.DistanceKm, 'f', 1, 64) + " km"
		}
		if h.HasLocation {
			loc = strconv.FormatFloat(h.Lat, 'f', -1, 64) + "," + strconv.FormatFloat(h.Lon, 'f', -1, 64)
		}
		rows[i] = []string{h.Name, h.Country, h.Subcountry, pop, dist, loc, strconv.FormatUint(uint64(h.ID), 10)}
	}
	return writeTable(out, cols, rows)
}
