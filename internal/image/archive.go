package image

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Repository is the name the archive gives its image: `docker load` tags it
// Repository:TAG.
const Repository = "cityfinder"

// WriteArchive writes img to w as one tar that is at once an OCI image
// layout (index.json, oci-layout, blobs/sha256/…), which podman load and
// umoci read and where the index names the image tag, and a docker-archive
// (manifest.json naming the same blobs), which docker load reads: the shape
// `docker save` itself writes since Docker 25. The image is named
// Repository:TAG for each of tags (the index lists it once a tag, as
// umoci's --image layout:TAG expects). Every entry is dated modTime, so
// that the same image gives the same bytes.
func WriteArchive(w io.Writer, img v1.Image, modTime time.Time, tags ...string) error {
	if len(tags) == 0 {
		return fmt.Errorf("write image archive: no tag")
	}
	for _, tag := range tags {
		if !validTag.MatchString(tag) {
			return fmt.Errorf("write image archive: tag %q is not [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", tag)
		}
	}
	manifest, err := img.RawManifest()
	if err != nil {
		return fmt.Errorf("write image archive: %w", err)
	}
	manifestDigest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("write image archive: %w", err)
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return fmt.Errorf("write image archive: %w", err)
	}
	configDigest, err := img.ConfigName()
	if err != nil {
		return fmt.Errorf("write image archive: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("write image archive: %w", err)
	}

	index := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex}
	var repoTags []string
	for _, tag := range tags {
		index.Manifests = append(index.Manifests, v1.Descriptor{
			MediaType: types.OCIManifestSchema1,
			Digest:    manifestDigest,
			Size:      int64(len(manifest)),
			Annotations: map[string]string{
				// umoci and podman read the tag here, Docker and
				// containerd the whole name.
				"org.opencontainers.image.ref.name": tag,
				"io.containerd.image.name":          "docker.io/library/" + Repository + ":" + tag,
			},
		})
		repoTags = append(repoTags, Repository+":"+tag)
	}
	indexJSON, err := json.Marshal(index)
	if err != nil {
		return fmt.Errorf("write image archive: %w", err)
	}
	dockerManifest := []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{{Config: blobPath(configDigest), RepoTags: repoTags}}

	a := archive{tw: tar.NewWriter(w), modTime: modTime.UTC()}
	a.dir("blobs")
	a.dir("blobs/sha256")
	a.file(blobPath(manifestDigest), manifest)
	a.file(blobPath(configDigest), config)
	for _, l := range layers {
		digest, err := l.Digest()
		if err != nil {
			return fmt.Errorf("write image archive: %w", err)
		}
		size, err := l.Size()
		if err != nil {
			return fmt.Errorf("write image archive: %w", err)
		}
		body, err := l.Compressed()
		if err != nil {
			return fmt.Errorf("write image archive: %w", err)
		}
		a.stream(blobPath(digest), size, body)
		dockerManifest[0].Layers = append(dockerManifest[0].Layers, blobPath(digest))
	}
	dockerJSON, err := json.Marshal(dockerManifest)
	if err != nil {
		return fmt.Errorf("write image archive: %w", err)
	}
	a.file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	a.file("index.json", indexJSON)
	a.file("manifest.json", dockerJSON)
	if a.err == nil {
		a.err = a.tw.Close()
	}
	if a.err != nil {
		return fmt.Errorf("write image archive: %w", a.err)
	}
	return nil
}

// validTag is what Docker accepts as a tag.
var validTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// Tag turns a version such as `git describe` prints into a valid tag: any
// other character becomes "-".
func Tag(version string) string {
	b := []byte(version)
	for i, c := range b {
		ok := c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !ok || i == 0 && (c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 128 {
		b = b[:128]
	}
	if len(b) == 0 {
		return "dev"
	}
	return string(b)
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// archive writes tar entries until the first error, which it keeps.
type archive struct {
	tw      *tar.Writer
	modTime time.Time
	err     error
}

func (a *archive) dir(name string) {
	if a.err == nil {
		a.err = a.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: a.modTime})
	}
}

func (a *archive) file(name string, body []byte) {
	if a.err == nil {
		a.err = a.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: a.modTime})
	}
	if a.err == nil {
		_, a.err = a.tw.Write(body)
	}
}

func (a *archive) stream(name string, size int64, body io.ReadCloser) {
	defer body.Close()
	if a.err == nil {
		a.err = a.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: size, ModTime: a.modTime})
	}
	if a.err == nil {
		_, a.err = io.Copy(a.tw, body)
	}
}
