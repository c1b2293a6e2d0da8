// Package image builds cityfinder's container image without a Docker
// daemon: one layer on nothing, holding the static binary, the CA
// certificates and a non-root user, written as one archive that docker load,
// podman load and umoci all read.
package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What every way of running the image relies on: the Dockerfile and the
// Kubernetes manifests in deploy/ repeat these, and their tests compare.
const (
	// BinaryPath is where the binary is, in a directory of PATH so that
	// commands name it "cityfinder", as people type it.
	BinaryPath = "/usr/local/bin/cityfinder"
	// CACertificatesPath is where Go's crypto/x509 looks first on Linux.
	CACertificatesPath = "/etc/ssl/certs/ca-certificates.crt"
	// DataDir is the volume that holds the embedded store's snapshots.
	DataDir = "/data"
	// Port is the one serve listens on, on every interface.
	Port = 8080
	// UID and GID are the numeric user the process runs as: numeric so that
	// Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
	// 65532 is distroless' "nonroot", which clusters' policies often expect.
	UID = 65532
	GID = 65532
	// UserName names UID in /etc/passwd, for tools that show users by name.
	UserName = "cityfinder"
	// Path is the PATH of the image's environment.
	Path = "/usr/local/bin"
	// Source and Licenses are the labels' defaults: the repository and its
	// LICENSE.
	Source   = "https://github.com/cityfinder/cityfinder"
	Licenses = "MIT"
)

// Entrypoint and Cmd make the container's default command
// `cityfinder serve --addr :8080 --data-dir /data`. They are split so that
// `docker run IMAGE import ...` or `... healthcheck` runs another command of
// the same binary; flags for serve go after the whole default command.
var (
	Entrypoint = []string{"cityfinder"}
	Cmd        = []string{"serve", "--addr", ":" + strconv.Itoa(Port), "--data-dir", DataDir}
	// Healthcheck asks the serve of the same container whether it is alive,
	// through the binary itself: the image has no shell and no curl.
	Healthcheck = []string{"cityfinder", "healthcheck", "--addr", "127.0.0.1:" + strconv.Itoa(Port)}
	// Env names the data directory for every command, so that an import
	// run in the container writes where serve reads.
	Env = []string{"PATH=" + Path, "CITYFINDER_DATA_DIR=" + DataDir}
)

// HealthInterval, HealthTimeout and HealthRetries are the HEALTHCHECK's
// timing: a check every 10 s that gives up after 3 s, unhealthy after 3
// failures in a row, as Kubernetes' liveness probe below judges it too.
const (
	HealthInterval    = 10 * time.Second
	HealthTimeout     = 3 * time.Second
	HealthStartPeriod = 5 * time.Second
	HealthRetries     = 3
)

// Spec is what goes into one build of the image.
type Spec struct {
	Binary         []byte // a static cityfinder for Linux (CGO_ENABLED=0)
	CACertificates []byte // a PEM bundle, the build machine's
	Arch           string // GOARCH of Binary: "amd64", "arm64"
	// Version, Revision, Source and Licenses become the OCI labels and
	// annotations of the same names.
	Version  string // `git describe`
	Revision string // the commit's hash
	Source   string // the repository's URL
	Licenses string // an SPDX expression
	// Created dates the image and every file in it: the commit's time, so
	// that the same commit and binary give the same image, digest included.
	Created time.Time
}

// Labels are the OCI annotations of spec, as labels of the image's config
// (what `docker inspect` shows) and annotations of its manifest.
func Labels(spec Spec) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "cityfinder",
		"org.opencontainers.image.description": "City autocomplete: a rate-limited /search HTTP API",
		"org.opencontainers.image.version":     spec.Version,
		"org.opencontainers.image.revision":    spec.Revision,
		"org.opencontainers.image.source":      spec.Source,
		"org.opencontainers.image.licenses":    spec.Licenses,
		"org.opencontainers.image.created":     spec.Created.UTC().Format(time.RFC3339),
	}
}

// Build assembles the image of spec: OCI media types, one uncompressed
// layer (so that the archive's blobs are what docker load, podman load and
// umoci each expect; a registry compresses on push), and the config that
// makes it run as UID with DataDir as its volume.
func Build(spec Spec) (v1.Image, error) {
	if len(spec.Binary) == 0 {
		return nil, fmt.Errorf("build image: no binary")
	}
	if len(spec.CACertificates) == 0 {
		return nil, fmt.Errorf("build image: no CA certificates")
	}
	rootfs, err := rootFS(spec)
	if err != nil {
		return nil, fmt.Errorf("build image: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     static.NewLayer(rootfs, types.OCIUncompressedLayer),
		History:   v1.History{Created: v1.Time{Time: spec.Created}, CreatedBy: "tools/image: cityfinder, CA certificates, user " + UserName},
		MediaType: types.OCIUncompressedLayer,
	})
	if err != nil {
		return nil, fmt.Errorf("build image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("build image: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Architecture = spec.Arch
	cf.OS = "linux"
	cf.Created = v1.Time{Time: spec.Created}
	cf.Config = v1.Config{
		User:         strconv.Itoa(UID) + ":" + strconv.Itoa(GID),
		Entrypoint:   Entrypoint,
		Cmd:          Cmd,
		Env:          Env,
		WorkingDir:   DataDir,
		ExposedPorts: map[string]struct{}{strconv.Itoa(Port) + "/tcp": {}},
		Volumes:      map[string]struct{}{DataDir: {}},
		Labels:       Labels(spec),
		StopSignal:   "SIGTERM",
		Healthcheck: &v1.HealthConfig{
			Test:        append([]string{"CMD"}, Healthcheck...),
			Interval:    HealthInterval,
			Timeout:     HealthTimeout,
			StartPeriod: HealthStartPeriod,
			Retries:     HealthRetries,
		},
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("build image: %w", err)
	}
	return mutate.Annotations(img, Labels(spec)).(v1.Image), nil
}

// passwd and group name root (whose files these are) and the user the
// process runs as, whose home is the volume.
var (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		fmt.Sprintf("%s:x:%d:%d:%s:%s:/sbin/nologin\n", UserName, UID, GID, UserName, DataDir)
	group = "root:x:0:\n" + fmt.Sprintf("%s:x:%d:\n", UserName, GID)
)

// rootFS is the layer's tar: directories first, every entry owned by root
// but DataDir, which the user writes (a new volume copies its owner).
func rootFS(spec Spec) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := spec.Created.UTC()
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, body []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	for _, d := range []string{"etc", "etc/ssl", "etc/ssl/certs", "usr", "usr/local", "usr/local/bin"} {
		if err := dir(d, 0o755, 0); err != nil {
			return nil, err
		}
	}
	// Go's os.TempDir: nothing of ours writes there, but a read-only root
	// then still has one where a volume is mounted.
	if err := dir("tmp", 0o1777, 0); err != nil {
		return nil, err
	}
	if err := dir(DataDir[1:], 0o755, UID); err != nil {
		return nil, err
	}
	files := []struct {
		name string
		mode int64
		body []byte
	}{
		{"etc/passwd", 0o644, []byte(passwd)},
		{"etc/group", 0o644, []byte(group)},
		{CACertificatesPath[1:], 0o644, spec.CACertificates},
		{BinaryPath[1:], 0o755, spec.Binary},
	}
	for _, f := range files {
		if err := file(path.Clean(f.name), f.mode, f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteContext writes the files of the image's layer under dir, for the
// Dockerfile to copy: dir/root holds all but the volume, which is dir/data,
// since Docker's COPY gives every file it copies one owner and /data alone
// belongs to the user. They are the very bytes and modes of the layer, so
// `docker build` gives the same files as Build.
func WriteContext(dir string, spec Spec) error {
	rootfs, err := rootFS(spec)
	if err != nil {
		return fmt.Errorf("write image context: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("write image context: %w", err)
	}
	tr := tar.NewReader(bytes.NewReader(rootfs))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("write image context: %w", err)
		}
		name := filepath.Join(dir, "root", filepath.FromSlash(h.Name))
		if h.Name == DataDir[1:]+"/" {
			name = filepath.Join(dir, "data")
		}
		if err := writeEntry(name, h, tr); err != nil {
			return fmt.Errorf("write image context: %w", err)
		}
	}
}

func writeEntry(name string, h *tar.Header, r io.Reader) error {
	mode := fs.FileMode(h.Mode).Perm()
	if h.Mode&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	if h.Typeflag == tar.TypeDir {
		if err := os.MkdirAll(name, 0o755); err != nil {
			return err
		}
		return os.Chmod(name, mode)
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
