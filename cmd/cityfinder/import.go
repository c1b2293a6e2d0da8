package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"path"
	"path/filepath"
	"slices"

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
	// AlternateNames is import.alternate_names.
	AlternateNames string `mapstructure:"alternate_names"`
	DownloadDir    string `mapstructure:"download_dir"`
	MaxRows        int    `mapstructure:"max_rows"`
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
                    Without --file: a download of
                    ` + importer.OKFNURL + `
                    that gives up when the network stalls (--download-*-timeout), when it
                    takes longer than --download-timeout (1h) or brings more than
                    --download-max-bytes (4 GiB).
  --dataset large   a GeoNames dump (cities500.zip … cities15000.zip, allCountries.zip
                    of which the populated places are taken; .txt, .gz or .zip), or
                    MaxMind's worldcitiespop.txt (plain or gzipped, Latin-1 or UTF-8):
                    the format is told from the file's first line. Without --file:
                    a download of
                    ` + importer.GeoNamesURL(importer.GeoNamesSources[0]) + `
                    (--source cities1000, cities5000, cities15000 or allCountries for
                    others). GeoNames' alternate names ("Cologne") find their cities.

--file is a path, "-" for standard input (a pipe: zcat cities1000.txt.gz |
cityfinder import --dataset large --file -), or an http(s) URL. Gzip and zip
are told from the first bytes, on a pipe too; a zip archive on a pipe is
copied to a temporary file first, as its directory is at its end. Every file
is read once, so a pipe imports the same rows as the file on disk. A download
goes into --download-dir (default: downloads in --data-dir) once; later
imports read that copy.

Malformed rows are skipped and counted; the first ones are listed with their line
numbers, those of the --geonames dump too. --strict stops at the first one of
--file instead.

Rows with the same name, country and region are one city listed twice: the most
populous is kept, and the others are dropped as they arrive, so that memory
follows the distinct cities, not the rows. A file, or --geonames dump, of more
than --max-rows rows (25 million; allCountries has about 13) is refused and the
dataset keeps its content.

An import that would shrink a dataset sharply is refused and the dataset keeps
its content: when the new file holds fewer than half the cities of the current
dataset, or more than 1% of its rows are malformed (a file cut short, a stray
quote, the wrong file), the first import of a dataset included, which then
stays empty. --allow-shrink says that this is intended.

--geonames FILE completes the rows of the okfn or MaxMind file with a GeoNames
dump (cities500/1000/5000/15000 or allCountries, as .txt, .gz or .zip): okfn
rows match by geonameid, else by country and name; MaxMind rows by country,
name and a distance of at most 20 km. A matched city gains its population,
location and alternate names ("Cologne" for Köln), so that big cities rank
first on short prefixes. The summary says how many rows were enriched. A
GeoNames --file has all that already: --geonames with it is refused.

GeoNames and MaxMind give a city's region as a code ("40", "ENG"); the large
dataset shows its name instead ("Tokyo", "England") wherever the okfn CSV
given as --region-names names it: the CSV gives the region of each of its
cities with the city's GeoNames id, and the GeoNames file the code of that
id. A MaxMind file's codes are named through --geonames, whose places tell
what its codes stand for. The summary says how many rows got a region name;
a line says when none could.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runImport(cmd.Context(), a, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), opts)
		},
	}
	addSettingFlags(cmd.Flags(), cmdImport)
	cmd.Flags().StringVar(&opts.File, "file", "", `cities file to import: a path, "-" for standard input, or an http(s) URL (plain, gzipped or zip; its format is told from its first line)`)
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "fail on the first malformed row")
	return cmd
}

func runImport(ctx context.Context, a *app, stdin io.Reader, stdout, stderr io.Writer, opts importOptions) error {
	d := search.Dataset(a.cfg.Dataset)
	req := importer.Request{
		Dataset:  d,
		Source:   importer.Source{Name: cmp.Or(opts.File, defaultSource(d, a.cfg.Import.Source))},
		GeoNames: importer.Source{Name: a.cfg.Import.GeoNames},
		// A zero Source is none, as for GeoNames.
		AlternateNames: importer.Source{Name: a.cfg.Import.AlternateNames},
		Strict:         opts.Strict,
		AllowShrink:    a.cfg.Import.AllowShrink,
		MaxRows:        a.cfg.Import.MaxRows,
		Download:       downloadOptions(a.cfg, downloadDir(a.cfg)),
	}
	if d == search.Large {
		if req.RegionNames.Name = a.cfg.Import.RegionNames; req.RegionNames.Name == "" {
			a.logger.Warn("no region names: the regions keep their codes, as --"+settingRegionNames.flag+
				" does not name the okfn CSV that names them", "dataset", d)
		}
	}
	store, err := openStore(a, false)
	if err != nil {
		return err
	}
	defer store.Close()
	bars := &stageBars{w: stderr, label: "importing " + string(d)}
	req.Progress, req.Phase = bars.start, bars.phase
	sum, err := (&importer.Importer{Store: store, Stdin: stdin}).Import(ctx, req)
	bars.finish() // clear the bar before the rejections and the summary
	if sum.GeoNamesRejected > 0 {
		fmt.Fprintf(stderr, "rejected rows in %s:\n", req.GeoNames)
		sum.WriteGeoNamesRejections(stderr)
	}
	if sum.Rejected > 0 {
		fmt.Fprintf(stderr, "rejected rows in %s:\n", req.Source)
		sum.WriteRejections(stderr)
	}
	if alt := sum.AlternateNames; alt.Rejected > 0 {
		fmt.Fprintf(stderr, "rejected rows in %s:\n", req.AlternateNames)
		(importer.Summary{Rejected: alt.Rejected, Rejections: alt.Rejections}).WriteRejections(stderr)
	}
	var ie *importer.InputError
	switch {
	case errors.Is(err, importer.ErrShrink):
		return fmt.Errorf("%w (if that is intended, import again with --%s)", err, settingAllowShrink.flag)
	case errors.As(err, &ie):
		return fmt.Errorf("%s: %w%s", a.cfg.nameOf(roleSetting(ie.Role)), ie, raiseHint(err))
	case err != nil:
		return fmt.Errorf("%w%s", err, raiseHint(err))
	}
	for _, w := range sum.Warnings {
		if errors.As(w, &ie) && ie.Role == importer.RoleRegionNames {
			a.logger.Warn("no region names: a MaxMind file's region codes are named only with --"+settingGeoNames.flag+
				", whose GeoNames places tell what they stand for", "dataset", d)
		} else {
			a.logger.Warn(w.Error(), "dataset", d)
		}
	}
	_, err = fmt.Fprintln(stdout, sum)
	return err
}

// roleSetting is the setting that gives an input of an import.
func roleSetting(r importer.Role) *setting {
	switch r {
	case importer.RoleGeoNames:
		return settingGeoNames
	case importer.RoleAlternateNames:
		return settingAlternateNames
	}
	return settingRegionNames
}

// stageBars shows each stage of an import on a terminal: a bar of the
// download, if any, then one of the reading and the store's steps. A
// download is announced on any stderr.
type stageBars struct {
	w     io.Writer
	label string // of the reading: "importing small"
	bar   *progressBar
}

// start is an importer.Request.Progress.
func (s *stageBars) start(st importer.Stage) importer.Progress {
	s.finish()
	label := s.label
	if st.URL != "" {
		fmt.Fprintf(s.w, "downloading %s to %s\n", st.URL, st.File)
		label = "downloading " + st.URL
	}
	if !isTerminal(s.w) {
		return nil
	}
	s.bar = newBar(s.w, st.Size, label)
	return s.bar
}

// phase is an importer.Request.Phase.
func (s *stageBars) phase(name string) {
	if s.bar != nil {
		s.bar.Phase(name)
	}
}

// finish erases the bar of the stage, if any.
func (s *stageBars) finish() {
	if s.bar != nil {
		s.bar.Finish()
		s.bar = nil
	}
}

// defaultSource is the URL of the file of dataset d when --file is not
// given: the okfn CSV, or the --source dump.
func defaultSource(d search.Dataset, source string) string {
	switch {
	case d != search.Large:
		return importer.OKFNURL
	case slices.Contains(importer.GeoNamesSources, source):
		return importer.GeoNamesURL(source)
	}
	return source // an http(s) URL: validated with the config
}

// downloadDir is where import downloads its files: --download-dir, else
// downloads in --data-dir.
func downloadDir(c *config) string {
	return cmp.Or(c.Import.DownloadDir, filepath.Join(c.DataDir, "downloads"))
}

// raiseHint says which setting to raise when err is an import that
// outgrew one of its limits, "" otherwise.
func raiseHint(err error) string {
	var te *importer.TimeoutError
	switch {
	case errors.Is(err, importer.ErrTooManyRows):
		return " (if the file is meant, raise --" + settingMaxRows.flag + ")"
	case errors.Is(err, importer.ErrDownloadTooLarge):
		return " (if the file is meant, raise --" + settingDownloadMaxBytes.flag + ")"
	case errors.As(err, &te) && te.Phase == importer.PhaseTotal:
		return " (if the download is meant to take longer, raise --" + settingDownloadTimeout.flag + ")"
	}
	return ""
}

// validateImport checks the import's settings.
func validateImport(c *config) []error {
	var errs []error
	if c.Import.MaxRows < 1 {
		errs = append(errs, invalidValue(settingMaxRows, c.Import.MaxRows, "must be at least 1"))
	}
	src := c.Import.Source
	if slices.Contains(importer.GeoNamesSources, src) {
		return errs
	}
	if u, err := neturl.Parse(src); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && path.Base(u.Path) != "/" && path.Base(u.Path) != "." {
		return errs
	}
	return append(errs, invalidValue(settingSource, src, "use "+settingSource.acceptedForm()))
}
