package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	neturl "net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
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
	Source      string `mapstructure:"source"`
	RegionNames string `mapstructure:"region_names"`
}

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
  --dataset large   a GeoNames dump (cities500.zip … cities15000.zip, allCountries.zip
                    of which the populated places are taken; .txt, .gz or .zip), or
                    MaxMind's worldcitiespop.txt (plain or gzipped, Latin-1 or UTF-8):
                    the format is told from the file's first line. Without --file:
                    datasets/cities500.zip (or the --source dump), or a download of
                    ` + importer.GeoNamesURL(importer.GeoNamesSources[0]) + `
                    (--source cities1000, cities5000, cities15000 or allCountries for
                    others). GeoNames' alternate names ("Cologne") find their cities.

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
first on short prefixes. The summary says how many rows were enriched.

GeoNames and MaxMind give a city's region as a code ("40", "ENG"); the large
dataset shows its name instead ("Tokyo", "England") wherever the okfn CSV
(--region-names, default ` + localSmall + `) names it:
the CSV gives the region of each of its cities with the city's GeoNames id,
and the GeoNames file the code of that id. A MaxMind file's codes are named
through --geonames, whose places tell what its codes stand for. The summary
says how many rows got a region name; a line says when none could.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runImport(cmd.Context(), a, cmd.OutOrStdout(), cmd.ErrOrStderr(), opts)
		},
	}
	addSettingFlags(cmd.Flags(), cmdImport)
	cmd.Flags().StringVar(&opts.File, "file", "", "cities file to import (plain, gzipped or zip; its format is told from its first line)")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "fail on the first malformed row")
	return cmd
}

func runImport(ctx context.Context, a *app, stdout, stderr io.Writer, opts importOptions) error {
	d := search.Dataset(a.cfg.Dataset)
	path, err := sourceFile(ctx, d, opts.File, a.cfg.Import.Source, stderr, downloadTimeouts(a.cfg))
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
	var subs *importer.Subcountries
	if d == search.Large {
		if subs, err = openSubcountries(a); err != nil {
			return err
		}
	}
	store, err := openStore(a, false)
	if err != nil {
		return err
	}
	defer store.Close()
	var progress importer.Progress
	var phase func(string)
	var bar *progressBar
	if isTerminal(stderr) {
		if bar, err = newProgressBar(stderr, path, "importing "+string(d)); err != nil {
			return err
		}
		progress, phase = bar, bar.Phase
	}
	sum, err := importer.ImportFile(ctx, store, path, importer.Options{
		Dataset: d, Strict: opts.Strict, Progress: progress, Phase: phase, AllowShrink: a.cfg.Import.AllowShrink, Enrich: gaz,
		Subcountries: subs,
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
	if subs != nil && sum.Format == importer.FormatMaxMind && gaz == nil {
		a.logger.Warn("no region names: a MaxMind file's region codes are named only with --"+settingGeoNames.flag+
			", whose GeoNames places tell what they stand for", "dataset", d)
	}
	_, err = fmt.Fprintln(stdout, sum)
	return err
}

// openSubcountries reads the okfn CSV that names the large dataset's
// regions: --region-names, else datasets/world-cities.csv when it exists.
// Without one, it says that the regions keep their codes.
func openSubcountries(a *app) (*importer.Subcountries, error) {
	path := a.cfg.Import.RegionNames
	if path == "" {
		if _, err := os.Stat(localSmall); err != nil {
			a.logger.Warn("no region names: the okfn CSV that names them is not at "+localSmall+
				" (import --dataset small puts it there), and --"+settingRegionNames.flag+" is not set", "dataset", search.Large)
			return nil, nil
		}
		path = localSmall
	}
	subs, err := importer.OpenSubcountries(path)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", settingRegionNames.flag, err)
	}
	return subs, nil
}

// Where the datasets live when --file is not given, relative to the working
// directory (the checkout, for make run).
const (
	localSmall = "datasets/world-cities.csv"
	localDir   = "datasets"
)

// sourceFile picks the file to import: --file, else the local copy in
// datasets/ of the okfn CSV (small) or of the --source dump (large), else
// a download of it to that copy.
func sourceFile(ctx context.Context, d search.Dataset, file, source string, stderr io.Writer, timeouts importer.Timeouts) (string, error) {
	if file != "" {
		if _, err := os.Stat(file); err != nil {
			return "", fmt.Errorf("dataset file: %w", err)
		}
		return file, nil
	}
	url, local := importer.OKFNURL, localSmall
	if d == search.Large {
		url, local = largeSource(source)
	}
	if _, err := os.Stat(local); err == nil {
		return local, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("dataset file: %w", err)
	}
	if err := download(ctx, url, local, stderr, timeouts); err != nil {
		return "", err
	}
	return local, nil
}

// largeSource is the URL of the --source dump and the path of its local
// copy.
func largeSource(source string) (url, local string) {
	if slices.Contains(importer.GeoNamesSources, source) {
		return importer.GeoNamesURL(source), filepath.Join(localDir, source+".zip")
	}
	u, _ := neturl.Parse(source) // validated with the config
	return source, filepath.Join(localDir, path.Base(u.Path))
}

// download fetches url into local, with a bar on a terminal. A directory it
// made for the file goes again when the download fails.
func download(ctx context.Context, url, local string, stderr io.Writer, timeouts importer.Timeouts) error {
	dir := filepath.Dir(local)
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("download dataset: %w", err)
	}
	var progress importer.Progress
	if isTerminal(stderr) {
		bar := newDownloadBar(stderr, "downloading "+url)
		defer bar.Finish()
		progress = bar
	}
	fmt.Fprintf(stderr, "downloading %s to %s\n", url, local)
	err := importer.Download(ctx, url, local, importer.DownloadOptions{Progress: progress, Timeouts: timeouts})
	if err != nil && errors.Is(statErr, fs.ErrNotExist) {
		os.Remove(dir) // only if empty
	}
	return err
}

// validateImport checks the import's settings.
func validateImport(c *config) []error {
	src := c.Import.Source
	if slices.Contains(importer.GeoNamesSources, src) {
		return nil
	}
	if u, err := neturl.Parse(src); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && path.Base(u.Path) != "/" && path.Base(u.Path) != "." {
		return nil
	}
	return []error{invalidValue(settingSource, src, "use "+settingSource.acceptedForm())}
}
