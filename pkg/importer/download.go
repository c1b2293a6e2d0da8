package importer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// OKFNURL is where the okfn world-cities CSV (the small dataset) is published.
const OKFNURL = "https://raw.githubusercontent.com/datasets/world-cities/master/data/world-cities.csv"

// Download fetches url into the file dst. It streams the body into a
// temporary file next to dst and renames it to dst only once the whole body
// has arrived, so dst is never left half-written. A nil client means
// http.DefaultClient; p, when not nil, hears the bytes received. The error
// names the URL and suggests importing a local copy instead.
func Download(ctx context.Context, client *http.Client, url, dst string, p Progress) error {
	if err := download(ctx, client, url, dst, p); err != nil {
		return fmt.Errorf("download %s: %w (without network access, fetch the file another way and pass --file PATH instead)", url, err)
	}
	return nil
}

func download(ctx context.Context, client *http.Client, url, dst string, p Progress) (err error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("server answered %s", resp.Status)
	}

	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.part")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var w io.Writer = f
	var pw *progressWriter
	if p != nil {
		pw = &progressWriter{w: f, p: p}
		w = pw
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return err
	}
	if pw != nil {
		pw.flush()
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), dst)
}

// progressWriter reports the bytes written through it every progressStep.
type progressWriter struct {
	w       io.Writer
	p       Progress
	pending int64
}

func (pw *progressWriter) Write(b []byte) (int, error) {
	n, err := pw.w.Write(b)
	pw.pending += int64(n)
	if pw.pending >= progressStep {
		pw.flush()
	}
	return n, err
}

func (pw *progressWriter) flush() {
	if pw.pending > 0 {
		pw.p.Advance(pw.pending, 0)
		pw.pending = 0
	}
}
