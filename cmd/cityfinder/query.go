package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

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
}

func newQueryCmd(a *app) *cobra.Command {
	var opts queryOptions
	cmd := &cobra.Command{
		Use:   "query PREFIX",
		Short: "Print the best matches for a prefix, straight from the store",
		Example: `  cityfinder query istanbul
  cityfinder query "sao p" --json
  cityfinder query san --dataset large --limit 20`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuery(cmd.Context(), a, cmd.OutOrStdout(), opts, strings.Join(args, " "))
		},
	}
	addFlag(cmd.Flags(), settingDataset)
	cmd.Flags().IntVar(&opts.Limit, "limit", search.DefaultLimit, fmt.Sprintf("how many matches to print (1..%d)", search.MaxLimit))
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON array, as the HTTP API does")
	for _, s := range mongoSettings {
		addFlag(cmd.Flags(), s)
	}
	cmd.Flags().StringVar(&opts.Country, "country", "", "only cities of these countries: ISO codes or English names, comma-separated")
	cmd.Flags().BoolVar(&opts.Fuzzy, "fuzzy", true, "also list typo matches (from 5 letters on)")
	cmd.Flags().StringVar(&opts.Near, "near", "", "rank cities near LAT,LON higher, and print how far they are")
	cmd.Flags().Float64Var(&opts.BiasScale, "bias-scale", search.DefaultBiasScale, "how strongly --near pulls, from 0 (not at all) to 1")
	cmd.Flags().StringVar(&opts.Box, "bbox", "", "only cities inside minLon,minLat,maxLon,maxLat")
	return cmd
}

func runQuery(ctx context.Context, a *app, out io.Writer, opts queryOptions, text string) error {
	store, err := openStore(a, false)
	if err != nil {
		return err
	}
	defer store.Close()
	req := search.Request{
		Dataset: search.Dataset(a.cfg.Dataset), Text: text, Limit: opts.Limit, Countries: opts.Country, Fuzzy: opts.Fuzzy,
		BiasScale: opts.BiasScale,
	}
	if opts.Near != "" {
		if req.Near, err = search.ParsePoint(opts.Near); err != nil {
			return err
		}
	}
	if opts.Box != "" {
		if req.Box, err = search.ParseBox(opts.Box); err != nil {
			return err
		}
	}
	res, err := search.NewService(store).Find(ctx, req)
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		return enc.Encode(res.Hits)
	}
	if len(res.Hits) == 0 {
		_, err := fmt.Fprintf(out, "no cities matching %q\n", text)
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, c := range res.Hits {
		division := c.Subcountry
		if division == "" {
			division = c.Region
		}
		fmt.Fprintf(tw, "%s\t%s\t%s", c.Name, c.Country, division)
		if c.Population > 0 {
			fmt.Fprintf(tw, "\t%s", strconv.FormatInt(c.Population, 10))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
