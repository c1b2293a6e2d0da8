package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

type importOptions struct {
	File   string
	Strict bool
}

// importConfig holds the import's settings that have a config key.
type importConfig struct {
	AllowShrink bool   `mapstructure:"allow_shrink"`
	GeoNames    string `mapstructure:"geonames"`
}

// The import's settings with a config key (see config).
var (
	settingAllowShrink = setting{"import.allow_shrink", "allow-shrink", false,
		"replace the dataset even if the file holds fewer than half its cities or more than 1% of its rows are malformed"}
	settingGeoNames = setting{"import.geonames", "geonames", "",
		"GeoNames dump (cities1000.txt, .gz or .zip) whose population, location and other names complete the okfn or MaxMind rows"}
	importSettings = []setting{settingAllowShrink, settingGeoNames}
)

func newImportCmd(a *app) *cobra.Command {
	var opts importOptions
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Import a cities file into the store, replacing the dataset",
		Long: `Import streams a cities file into the store and replaces the dataset atomically:
a running serve switches to the new data within a second, and a failed or
interrupted import leaves the old data in place.

  --dataset small   the okfn world-cities CSV (name,country,subcountry,geonameid).
                    Without --file: datasets/world-cities.csv, or a download of
                    ` + importer.OKFNURL + `
                    that gives up when the network stalls (--download-*-timeout).
  --dataset large   MaxMind's worldcitiespop.txt, plain or gzipped, Latin-1 or UTF-8.

Malformed rows are skipped and counted; the first ones are listed with their line
numbers. --strict stops at the first one instead.

An import that would shrink a dataset sharply is refused and the dataset keeps
its content: when the new file holds fewer than half the cities of the current
dataset, or more than 1% of its rows are malformed (a file cut short, a stray
quote, the wrong file). --allow-shrink says that this is intended.

--geonames FILE completes the rows of the okfn or MaxMind file with a GeoNames
dump (cities500/1000/5000/15000 or allCountries, as .txt, .gz or .zip): okfn
rows match by geonameid, else by country and name; MaxMind rows by country,
name and a distance of at most 20 km. A matched city gains its population,
location and alternate names ("Cologne" for Köln), so that big cities rank
first on short prefixes. The summary says how many rows were enriched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runImport(cmd.Context(), a, cmd.OutOrStdout(), cmd.ErrOrStderr(), opts)
		},
	}
	addFlag(cmd.Flags(), settingDataset)
	cmd.Flags().StringVar(&opts.File, "file", "", "cities file to import (plain or gzipped)")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "fail on the first malformed row")
	addFlag(cmd.Flags(), settingAllowShrink)
	addFlag(cmd.Flags(), settingGeoNames)
	for _, s := range mongoSettings {
		addFlag(cmd.Flags(), s)
	}
	for _, s := range downloadSettings {
		addFlag(cmd.Flags(), s)
	}
	return cmd
}

func runImport(ctx context.Context, a *app, stdout, stderr io.Writer, opts importOptions) error {
	d := search.Dataset(a.cfg.Dataset)
	path, err := sourceFile(ctx, d, opts.File, stderr, downloadTimeouts(a.cfg))
	if err != nil {
		return err
	}
	start := time.Now()
	var gaz *importer.Gazetteer
	if file := a.cfg.Import.GeoNames; file != "" {
		if gaz, err = importer.OpenGazetteer(file); err != nil {
			return fmt.Errorf("--%s: %w", settingGeoNames.flag, err)
		}
	}
	store, err := openStore(a, false)
	if err != nil {
		return err
	}
	defer store.Close()
	var progress importer.Progress
	var bar *progressBar
	if isTerminal(stderr) {
		if bar, err = newProgressBar(stderr, path, "importing "+string(d)); err != nil {
			return err
		}
		progress = bar
	}
	sum, err := importer.ImportFile(ctx, store, path, importer.Options{
		Dataset: d, Strict: opts.Strict, Progress: progress, AllowShrink: a.cfg.Import.AllowShrink, Enrich: gaz,
	})
	if bar != nil {
		bar.Finish() // clear the bar before the rejections and the summary
	}
	if sum.Rejected > 0 {
		fmt.Fprintf(stderr, "rejected rows in %s:\n", path)
		sum.WriteRejections(stderr)
	}
	if errors.Is(err, importer.ErrShrink) {
		return fmt.Errorf("%w (if that is intended, import again with --%s)", err, settingAllowShrink.flag)
	}
	if err != nil {
		return err
	}
	sum.Duration = time.Since(start) // with the GeoNames file's reading
	_, err = fmt.Fprintln(stdout, sum)
	return err
}

// Where the datasets live when --file is not given, relative to the working
// directory (the checkout, for make run).
const (
	localSmall = "datasets/world-cities.csv"
	localLarge = "datasets/worldcitiespop.txt.gz"
)

// sourceFile picks the file to import: --file, else the local copy in
// datasets/, else (small only) a download of the okfn CSV to that copy.
func sourceFile(ctx context.Context, d search.Dataset, file string, stderr io.Writer, timeouts importer.Timeouts) (string, error) {
	if file != "" {
		if _, err := os.Stat(file); err != nil {
			return "", fmt.Errorf("dataset file: %w", err)
		}
		return file, nil
	}
	local := localSmall
	if d == search.Large {
		local = localLarge
	}
	if _, err := os.Stat(local); err == nil {
		return local, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("dataset file: %w", err)
	}
	if d == search.Large {
		return "", fmt.Errorf("no %s: MaxMind no longer publishes its world cities file; pass --file PATH to your copy of worldcitiespop.txt (plain or gzipped)", local)
	}
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return "", fmt.Errorf("download dataset: %w", err)
	}
	var progress importer.Progress
	if isTerminal(stderr) {
		bar := newDownloadBar(stderr, "downloading "+importer.OKFNURL)
		defer bar.Finish()
		progress = bar
	}
	fmt.Fprintf(stderr, "downloading %s to %s\n", importer.OKFNURL, local)
	if err := importer.Download(ctx, importer.OKFNURL, local, importer.DownloadOptions{Progress: progress, Timeouts: timeouts}); err != nil {
		return "", err
	}
	return local, nil
}
