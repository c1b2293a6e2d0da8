package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

type importOptions struct {
	File   string
	Strict bool
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
  --dataset large   MaxMind's worldcitiespop.txt, plain or gzipped, Latin-1 or UTF-8.

Malformed rows are skipped and counted; the first ones are listed with their line
numbers. --strict stops at the first one instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runImport(cmd.Context(), a, cmd.OutOrStdout(), cmd.ErrOrStderr(), opts)
		},
	}
	addFlag(cmd.Flags(), settingDataset)
	cmd.Flags().StringVar(&opts.File, "file", "", "cities file to import (plain or gzipped)")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "fail on the first malformed row")
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
	sum, err := importer.ImportFile(ctx, store, path, importer.Options{Dataset: d, Strict: opts.Strict, Progress: progress, Phase: phase})
	if bar != nil {
		bar.Finish() // clear the bar before the rejections and the summary
	}
	if sum.Rejected > 0 {
		fmt.Fprintf(stderr, "rejected rows in %s:\n", path)
		sum.WriteRejections(stderr)
	}
	if err != nil {
		return err
	}
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
