// Command image writes cityfinder's container image as one archive that
// `docker load`, `podman load` and umoci read, from a static binary built
// beforehand, with no Docker daemon and no base image (see
// docs/container.md). `make image` runs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cityfinder/cityfinder/internal/image"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("image: ")
	var opts options
	flag.StringVar(&opts.bin, "bin", "bin/linux/cityfinder", "the static cityfinder binary (CGO_ENABLED=0, GOOS=linux)")
	flag.StringVar(&opts.out, "out", "bin/cityfinder-image.tar", "the archive to write")
	flag.StringVar(&opts.context, "context", "", "also write the image's files under this directory, for the Dockerfile (empty: no)")
	flag.StringVar(&opts.ca, "ca-certificates", image.CACertificatesPath, "PEM bundle of CA certificates to copy in")
	flag.StringVar(&opts.arch, "arch", runtime.GOARCH, "GOARCH the binary was built for")
	flag.StringVar(&opts.spec.Version, "version", "dev", "the version: label org.opencontainers.image.version and the tag")
	flag.StringVar(&opts.spec.Revision, "revision", "", "the commit: label org.opencontainers.image.revision")
	flag.StringVar(&opts.spec.Source, "source", image.Source, "label org.opencontainers.image.source")
	flag.StringVar(&opts.spec.Licenses, "licenses", image.Licenses, "SPDX licence expression: label org.opencontainers.image.licenses")
	flag.BoolVar(&opts.latest, "latest", true, "tag the image latest too")
	flag.Int64Var(&opts.created, "created", 0, "Unix time of the image and its files, the commit's for a reproducible archive (0: $SOURCE_DATE_EPOCH, else now)")
	flag.Parse()
	if err := run(opts); err != nil {
		log.Fatal(err)
	}
}

type options struct {
	bin, out, ca, arch, context string
	created                     int64
	latest                      bool
	spec                        image.Spec
}

func run(opts options) error {
	spec := opts.spec
	spec.Arch = opts.arch
	created, err := createdAt(opts.created)
	if err != nil {
		return err
	}
	spec.Created = created
	if spec.Binary, err = os.ReadFile(opts.bin); err != nil {
		return fmt.Errorf("read binary: %w", err)
	}
	if !bytes.HasPrefix(spec.Binary, []byte("\x7fELF")) {
		return fmt.Errorf("%s is not a Linux (ELF) binary: build it with GOOS=linux CGO_ENABLED=0", opts.bin)
	}
	if spec.CACertificates, err = os.ReadFile(opts.ca); err != nil {
		return fmt.Errorf("read CA certificates: %w", err)
	}
	if opts.context != "" {
		if err := image.WriteContext(opts.context, spec); err != nil {
			return err
		}
	}
	img, err := image.Build(spec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(opts.out), 0o755); err != nil {
		return err
	}
	// Written beside, then renamed: a failed build leaves no half archive
	// that docker load would refuse with a stranger message.
	tmp, err := os.CreateTemp(filepath.Dir(opts.out), ".image-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	tag := image.Tag(spec.Version)
	tags := []string{tag}
	if opts.latest && tag != "latest" {
		tags = append(tags, "latest")
	}
	if err := image.WriteArchive(tmp, img, spec.Created, tags...); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), opts.out); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fi, err := os.Stat(opts.out)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %s:%s, %s, %.1f MB\n", opts.out, image.Repository, strings.Join(tags, ","), digest, float64(fi.Size())/1e6)
	return nil
}

// createdAt is the image's time: the flag's, else SOURCE_DATE_EPOCH's (the
// reproducible-builds convention), else now.
func createdAt(unix int64) (time.Time, error) {
	if unix == 0 {
		if env := os.Getenv("SOURCE_DATE_EPOCH"); env != "" {
			n, err := strconv.ParseInt(env, 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: not a Unix time", env)
			}
			unix = n
		}
	}
	if unix == 0 {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	return time.Unix(unix, 0).UTC(), nil
}
