package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// testSpec is a spec whose binary is only a few bytes, enough for what
// Build and WriteArchive do with it.
func testSpec() Spec {
	return Spec{
		Binary:         []byte("\x7fELF a static cityfinder"),
		CACertificates: []byte("-----BEGIN CERTIFICATE-----\n"),
		Arch:           "amd64",
		Version:        "v1.2.0-3-gabcdef0",
		Revision:       "abcdef0123456789",
		Source:         Source,
		Licenses:       Licenses,
		Created:        time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
	}
}

func mustBuild(t *testing.T, spec Spec) v1.Image {
	t.Helper()
	img, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestBuildConfiguresTheContainer(t *testing.T) {
	spec := testSpec()
	cf, err := mustBuild(t, spec).ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	checks := []struct {
		what      string
		got, want any
	}{
		{"os/arch", cf.OS + "/" + cf.Architecture, "linux/amd64"},
		{"created", cf.Created.Time, spec.Created},
		{"user", c.User, "65532:65532"},
		{"command", slices.Concat(c.Entrypoint, c.Cmd), []string{"cityfinder", "serve", "--addr", ":8080", "--data-dir", "/data"}},
		{"exposed ports", slices.Collect(maps.Keys(c.ExposedPorts)), []string{"8080/tcp"}},
		{"volumes", slices.Collect(maps.Keys(c.Volumes)), []string{"/data"}},
		{"working directory", c.WorkingDir, "/data"},
		{"environment", c.Env, []string{"PATH=/usr/local/bin", "CITYFINDER_DATA_DIR=/data"}},
		{"healthcheck", c.Healthcheck.Test, []string{"CMD", "cityfinder", "healthcheck", "--addr", "127.0.0.1:8080"}},
		{"healthcheck timing", []time.Duration{c.Healthcheck.Interval, c.Healthcheck.Timeout, c.Healthcheck.StartPeriod}, []time.Duration{10 * time.Second, 3 * time.Second, 5 * time.Second}},
		{"version label", c.Labels["org.opencontainers.image.version"], "v1.2.0-3-gabcdef0"},
		{"revision label", c.Labels["org.opencontainers.image.revision"], "abcdef0123456789"},
		{"source label", c.Labels["org.opencontainers.image.source"], "https://github.com/cityfinder/cityfinder"},
		{"licence label", c.Labels["org.opencontainers.image.licenses"], "MIT"},
		{"created label", c.Labels["org.opencontainers.image.created"], "2026-12-01T12:00:00Z"},
	}
	for _, check := range checks {
		if !jsonEqual(check.got, check.want) {
			t.Errorf("%s = %v, want %v", check.what, check.got, check.want)
		}
	}
}

func TestBuildLaysOutTheFiles(t *testing.T) {
	spec := testSpec()
	layers, err := mustBuild(t, spec).Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	files := mustReadLayer(t, layers[0])
	tests := []struct {
		name     string
		mode     int64
		uid      int
		contains string
	}{
		{name: "usr/local/bin/cityfinder", mode: 0o755, contains: string(spec.Binary)},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, contains: string(spec.CACertificates)},
		{name: "etc/passwd", mode: 0o644, contains: "\ncityfinder:x:65532:65532:cityfinder:/data:/sbin/nologin\n"},
		{name: "etc/group", mode: 0o644, contains: "\ncityfinder:x:65532:\n"},
		{name: "data/", mode: 0o755, uid: UID},
		{name: "tmp/", mode: 0o1777},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := files[tt.name]
			if !ok {
				t.Fatalf("no %s in the layer (it has %v)", tt.name, slices.Sorted(maps.Keys(files)))
			}
			if f.header.Mode != tt.mode || f.header.Uid != tt.uid || f.header.Gid != tt.uid {
				t.Errorf("mode %o owner %d:%d, want %o %d:%d", f.header.Mode, f.header.Uid, f.header.Gid, tt.mode, tt.uid, tt.uid)
			}
			if !f.header.ModTime.Equal(spec.Created) {
				t.Errorf("dated %s, want the image's %s", f.header.ModTime, spec.Created)
			}
			if !strings.Contains(string(f.body), tt.contains) {
				t.Errorf("holds %q, want %q in it", f.body, tt.contains)
			}
		})
	}
}

func TestBuildRefusesWhatCannotRun(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Spec)
	}{
		{"no binary", func(s *Spec) { s.Binary = nil }},
		{"no CA certificates", func(s *Spec) { s.CACertificates = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSpec()
			tt.edit(&spec)
			if _, err := Build(spec); err == nil {
				t.Error("Build succeeded")
			}
		})
	}
}

// TestWriteArchiveIsBothLayouts reads the archive the way podman and
// umoci do (index.json to the manifest to its blobs) and the way docker
// load does (manifest.json to the config and layers), and writes it twice
// to see the same bytes.
func TestWriteArchiveIsBothLayouts(t *testing.T) {
	spec := testSpec()
	img := mustBuild(t, spec)
	var first, second bytes.Buffer
	for _, buf := range []*bytes.Buffer{&first, &second} {
		if err := WriteArchive(buf, img, spec.Created, Tag(spec.Version), "latest"); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Error("the same image gave two different archives")
	}
	entries := mustReadArchive(t, first.Bytes())

	var index v1.IndexManifest
	mustUnmarshal(t, entries["index.json"], &index)
	tags := []string{"v1.2.0-3-gabcdef0", "latest"}
	if len(index.Manifests) != len(tags) {
		t.Fatalf("index.json names %d manifests, want one a tag: %q", len(index.Manifests), tags)
	}
	for i, tag := range tags {
		d := index.Manifests[i]
		if d.Digest != index.Manifests[0].Digest {
			t.Errorf("tag %s names %s, tag %s %s", tag, d.Digest, tags[0], index.Manifests[0].Digest)
		}
		if got := d.Annotations["org.opencontainers.image.ref.name"]; got != tag {
			t.Errorf("ref.name = %q, want %q", got, tag)
		}
		if got := d.Annotations["io.containerd.image.name"]; got != "docker.io/library/cityfinder:"+tag {
			t.Errorf("io.containerd.image.name = %q, want docker.io/library/cityfinder:%s", got, tag)
		}
	}
	desc := index.Manifests[0]
	var manifest v1.Manifest
	mustUnmarshal(t, mustBlob(t, entries, desc.Digest, desc.Size), &manifest)
	mustBlob(t, entries, manifest.Config.Digest, manifest.Config.Size)
	for _, l := range manifest.Layers {
		mustBlob(t, entries, l.Digest, l.Size)
	}
	if string(entries["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %s", entries["oci-layout"])
	}

	var docker []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	mustUnmarshal(t, entries["manifest.json"], &docker)
	if len(docker) != 1 || !slices.Equal(docker[0].RepoTags, []string{"cityfinder:v1.2.0-3-gabcdef0", "cityfinder:latest"}) {
		t.Fatalf("manifest.json = %+v", docker)
	}
	if docker[0].Config != blobPath(manifest.Config.Digest) {
		t.Errorf("manifest.json's config %s, the OCI manifest's %s", docker[0].Config, manifest.Config.Digest)
	}
	if len(docker[0].Layers) != len(manifest.Layers) {
		t.Fatalf("manifest.json has %d layers, the OCI manifest %d", len(docker[0].Layers), len(manifest.Layers))
	}
	for i, l := range manifest.Layers {
		if docker[0].Layers[i] != blobPath(l.Digest) {
			t.Errorf("layer %d: manifest.json %s, the OCI manifest %s", i, docker[0].Layers[i], l.Digest)
		}
	}
}

func TestWriteArchiveRefusesAnInvalidTag(t *testing.T) {
	img := mustBuild(t, testSpec())
	tests := [][]string{nil, {""}, {"-dirty"}, {"a/b"}, {"v1+meta"}, {strings.Repeat("x", 129)}, {"latest", "v1+meta"}}
	for _, tags := range tests {
		if err := WriteArchive(io.Discard, img, time.Time{}, tags...); err == nil {
			t.Errorf("WriteArchive accepted the tags %q", tags)
		}
	}
}

func TestTag(t *testing.T) {
	tests := []struct{ version, want string }{
		{"v1.2.0", "v1.2.0"},
		{"v1.2.0-3-gabcdef0-dirty", "v1.2.0-3-gabcdef0-dirty"},
		{"790a19c", "790a19c"},
		{"v1.0+build.5", "v1.0_build.5"},
		{"-odd", "_odd"},
		{"", "dev"},
		{strings.Repeat("a", 200), strings.Repeat("a", 128)},
	}
	for _, tt := range tests {
		if got := Tag(tt.version); got != tt.want {
			t.Errorf("Tag(%q) = %q, want %q", tt.version, got, tt.want)
		}
		if !validTag.MatchString(Tag(tt.version)) {
			t.Errorf("Tag(%q) = %q, which Docker refuses", tt.version, Tag(tt.version))
		}
	}
}

func TestWriteContextHoldsTheLayersFiles(t *testing.T) {
	spec := testSpec()
	dir := t.TempDir()
	if err := WriteContext(dir, spec); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		mode os.FileMode
		body string
	}{
		{"root/usr/local/bin/cityfinder", 0o755, string(spec.Binary)},
		{"root/etc/ssl/certs/ca-certificates.crt", 0o644, string(spec.CACertificates)},
		{"root/etc/passwd", 0o644, passwd},
		{"root/tmp", os.ModeDir | os.ModeSticky | 0o777, ""},
		{"data", os.ModeDir | 0o755, ""},
	}
	for _, tt := range tests {
		fi, err := os.Stat(filepath.Join(dir, tt.path))
		if err != nil {
			t.Error(err)
			continue
		}
		if fi.Mode() != tt.mode {
			t.Errorf("%s: mode %v, want %v", tt.path, fi.Mode(), tt.mode)
		}
		if !fi.IsDir() {
			if body, _ := os.ReadFile(filepath.Join(dir, tt.path)); string(body) != tt.body {
				t.Errorf("%s holds %q, want %q", tt.path, body, tt.body)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "root", "data")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("root/data: %v, want none (the Dockerfile copies data with its owner)", err)
	}
}

// TestDockerfile checks that the Dockerfile at the repository's root
// builds the image Build does: the same user, volume, port, environment,
// command, health check and labels, and the files WriteContext writes.
func TestDockerfile(t *testing.T) {
	instructions := mustReadDockerfile(t, "../../Dockerfile")
	one := func(name string) string {
		t.Helper()
		if len(instructions[name]) != 1 {
			t.Fatalf("%d %s instructions, want 1", len(instructions[name]), name)
		}
		return instructions[name][0]
	}
	port := strconv.Itoa(Port)
	checks := []struct{ instruction, got, want string }{
		{"FROM", one("FROM"), "scratch"},
		{"USER", one("USER"), strconv.Itoa(UID) + ":" + strconv.Itoa(GID)},
		{"WORKDIR", one("WORKDIR"), DataDir},
		{"VOLUME", one("VOLUME"), DataDir},
		{"EXPOSE", one("EXPOSE"), port + "/tcp"},
		{"STOPSIGNAL", one("STOPSIGNAL"), "SIGTERM"},
		{"ENV", one("ENV"), strings.Join(Env, " ")},
		{"ENTRYPOINT", one("ENTRYPOINT"), mustJSON(t, Entrypoint)},
		{"CMD", one("CMD"), mustJSON(t, Cmd)},
		{"HEALTHCHECK", one("HEALTHCHECK"), "--interval=" + HealthInterval.String() + " --timeout=" + HealthTimeout.String() +
			" --start-period=" + HealthStartPeriod.String() + " --retries=" + strconv.Itoa(HealthRetries) + " CMD " + mustJSON(t, Healthcheck)},
		{"COPY", strings.Join(instructions["COPY"], "\n"), "bin/image-context/root/ /\n--chown=65532:65532 bin/image-context/data/ " + DataDir + "/"},
	}
	for _, c := range checks {
		if normalJSON(c.got) != normalJSON(c.want) {
			t.Errorf("%s %s, want %s", c.instruction, c.got, c.want)
		}
	}

	labels := parseLabels(one("LABEL"))
	want := Labels(Spec{Version: "${VERSION}", Revision: "${REVISION}", Source: Source, Licenses: Licenses})
	delete(want, "org.opencontainers.image.created") // docker build dates the image itself
	if !maps.Equal(labels, want) {
		t.Errorf("LABEL %v, want %v", labels, want)
	}
}

// mustReadDockerfile reads a Dockerfile's instructions, continuation
// lines joined and comments left out, as the arguments of each name.
func mustReadDockerfile(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	instructions := map[string][]string{}
	var line string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") || text == "" && line == "" {
			continue
		}
		if rest, ok := strings.CutSuffix(text, `\`); ok {
			line += rest + " "
			continue
		}
		line += text
		name, args, _ := strings.Cut(line, " ")
		instructions[strings.ToUpper(name)] = append(instructions[strings.ToUpper(name)], strings.Join(strings.Fields(args), " "))
		line = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return instructions
}

// parseLabels reads LABEL's key="value" pairs.
func parseLabels(args string) map[string]string {
	labels := map[string]string{}
	for args != "" {
		key, rest, _ := strings.Cut(args, "=")
		rest = strings.TrimPrefix(rest, `"`)
		value, rest, _ := strings.Cut(rest, `"`)
		labels[strings.TrimSpace(key)] = value
		args = strings.TrimSpace(rest)
	}
	return labels
}

// normalJSON rewrites the JSON arrays in an instruction's arguments with
// one space after each comma, as people write them.
func normalJSON(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `", "`, `","`), `","`, `", "`)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonEqual(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

type entry struct {
	header *tar.Header
	body   []byte
}

func mustReadLayer(t *testing.T, l v1.Layer) map[string]entry {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	return mustReadTar(t, rc)
}

// mustReadArchive is the body of each entry of an archive.
func mustReadArchive(t *testing.T, archive []byte) map[string][]byte {
	t.Helper()
	bodies := map[string][]byte{}
	for name, e := range mustReadTar(t, bytes.NewReader(archive)) {
		bodies[name] = e.body
	}
	return bodies
}

func mustReadTar(t *testing.T, r io.Reader) map[string]entry {
	t.Helper()
	entries := map[string]entry{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries[h.Name] = entry{h, body}
	}
}

// mustBlob is the blob of digest, which must be there with that size and
// hash.
func mustBlob(t *testing.T, entries map[string][]byte, digest v1.Hash, size int64) []byte {
	t.Helper()
	body, ok := entries[blobPath(digest)]
	if !ok {
		t.Fatalf("no blob %s in the archive", digest)
	}
	got, n, err := v1.SHA256(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if got != digest || n != size {
		t.Fatalf("blob %s: %s of %d bytes, want %d", digest, got, n, size)
	}
	return body
}

func mustUnmarshal(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
}
