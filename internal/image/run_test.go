package image

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/syncbuf"
)

// EnvArchive names an archive `make image` wrote, for the test to run
// instead of building its own: CI builds the image once, as people do.
const EnvArchive = "CITYFINDER_IMAGE_ARCHIVE"

// cities is a small dataset in the okfn CSV's shape, which the container
// imports into its own volume.
const cities = `name,country,subcountry,geonameid
London,United Kingdom,England,2643743
Londrina,Brazil,Paraná,3458449
Paris,France,Île-de-France,2988507
Zürich,Switzerland,Zurich,2657896
`

// TestImageRunsWithRunc unpacks the image archive with umoci and runs it
// with runc as the image says (its user, its command, its volume, a
// read-only root), in the host's network namespace on 127.0.0.1 only: it
// imports a dataset into /data with the image's own binary while serve
// runs, then asks /healthz, /readyz and /search from the host, the
// HEALTHCHECK's command inside, and stops it with SIGTERM.
func TestImageRunsWithRunc(t *testing.T) {
	requireRunc(t)
	start := time.Now()
	dir := t.TempDir()
	archive := os.Getenv(EnvArchive)
	if archive == "" {
		archive = mustBuildArchive(t, dir)
	}
	t.Logf("archive %s (%s)", archive, time.Since(start).Round(time.Millisecond))

	layout := filepath.Join(dir, "layout")
	mustExtract(t, archive, layout)
	if _, err := os.Stat(filepath.Join(layout, "manifest.json")); err != nil {
		t.Errorf("no docker-archive manifest.json beside the OCI layout: %v", err)
	}
	bundle := filepath.Join(dir, "bundle")
	mustRun(t, "umoci", "unpack", "--image", layout+":"+mustRefName(t, layout), bundle)

	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "cities.csv"), []byte(cities), 0o644); err != nil {
		t.Fatal(err)
	}
	// A new volume takes the owner of the image's /data; a host directory
	// bound there does not, so it is given to the image's user by hand, as
	// Kubernetes' fsGroup does.
	if err := os.Chown(data, UID, GID); err != nil {
		t.Fatal(err)
	}
	addr := freeLoopbackAddr(t)
	args := mustConfigure(t, bundle, data, addr)

	id := fmt.Sprintf("cityfinder-test-%d", os.Getpid())
	var logs syncbuf.Buffer
	runcRun := exec.Command("runc", "run", "--bundle", bundle, id)
	runcRun.Stdout, runcRun.Stderr = &logs, &logs
	if err := runcRun.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- runcRun.Wait() }()
	t.Cleanup(func() {
		_ = exec.Command("runc", "delete", "--force", id).Run()
		if t.Failed() {
			t.Logf("container's output:\n%s", logs.String())
		}
	})
	t.Logf("runc run %s: %s", id, strings.Join(args, " "))

	base := "http://" + addr
	poll.UntilNil(t, 15*time.Second, func() error { return wantStatus(base+"/healthz", http.StatusOK) })
	if err := wantStatus(base+"/readyz", http.StatusServiceUnavailable); err != nil {
		t.Errorf("before the import: %v", err)
	}

	out := mustRun(t, "runc", "exec", id, "cityfinder", "import", "--dataset", "small", "--file", "/data/cities.csv")
	t.Logf("import in the container: %s", strings.TrimSpace(out))
	fi, err := os.Stat(filepath.Join(data, "small.cfs"))
	if err != nil {
		t.Fatalf("the import wrote no snapshot into the volume: %v", err)
	}
	if owner := fileOwner(fi); owner != UID {
		t.Errorf("the snapshot belongs to uid %d, want the image's user %d", owner, UID)
	}

	// serve looks for new imports every second (--reload-interval).
	poll.UntilNil(t, 10*time.Second, func() error { return wantStatus(base+"/readyz", http.StatusOK) })
	var hits []struct {
		Name    string `json:"name"`
		Country string `json:"country"`
	}
	mustGetJSON(t, base+"/search?q=lond", &hits)
	if len(hits) == 0 || hits[0].Name != "London" {
		t.Errorf("/search?q=lond = %+v, want London first", hits)
	}

	// The HEALTHCHECK's command and the readiness probe's, asking the port
	// this serve listens on instead of 8080, which the host may be using.
	for _, check := range [][]string{Healthcheck, append(slices.Clone(Healthcheck), "--ready")} {
		check = slices.Clone(check)
		check[slices.Index(check, "--addr")+1] = addr
		t.Run(strings.Join(check, " "), func(t *testing.T) {
			out, err := exec.Command("runc", append([]string{"exec", id}, check...)...).CombinedOutput()
			if strings.Contains(string(out), `unknown command "healthcheck"`) {
				t.Skipf("this binary has no healthcheck command yet (issue 25 item 2): %s", bytes.TrimSpace(out))
			}
			if err != nil {
				t.Errorf("%v\n%s", err, out)
			}
		})
	}

	if err := exec.Command("runc", "kill", id, "TERM").Run(); err != nil {
		t.Fatalf("runc kill %s TERM: %v", id, err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve did not exit cleanly on SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("serve still runs 15 s after SIGTERM")
	}
	t.Logf("whole run: %s", time.Since(start).Round(time.Millisecond))
}

// requireRunc skips the test where runc cannot run a container as this
// user (it needs root, as the config has no user namespace), and fails it
// in CI, whose .ci/run installs umoci and runc.
func requireRunc(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("containers run on Linux only")
	}
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, tool := range []string{"umoci", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("running the image needs %s, which CI has (.ci/run installs umoci and runc)", strings.Join(missing, ", "))
	}
	t.Skipf("running the image needs %s (as root: apt-get install umoci runc)", strings.Join(missing, ", "))
}

// mustBuildArchive builds a static binary the way `make image` does (so
// that they share the build cache) and writes the image's archive.
func mustBuildArchive(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "cityfinder")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=test", "-o", bin, "../../cmd/cityfinder")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	spec := Spec{Arch: runtime.GOARCH, Version: "test", Revision: "0000000", Source: "https://example.com/cityfinder", Licenses: "MIT", Created: time.Unix(1764547200, 0)}
	var err error
	if spec.Binary, err = os.ReadFile(bin); err != nil {
		t.Fatal(err)
	}
	if spec.CACertificates, err = os.ReadFile(CACertificatesPath); err != nil {
		t.Fatalf("the image copies the build machine's CA certificates: %v", err)
	}
	img, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "image.tar")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := WriteArchive(f, img, spec.Created, Tag(spec.Version), "latest"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return archive
}

// mustExtract unpacks the archive's regular files and directories into dir.
func mustExtract(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("read %s: %v", archive, err)
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, dir+string(filepath.Separator)) {
			t.Fatalf("%s: entry %q outside the archive", archive, h.Name)
		}
		if h.Typeflag != tar.TypeDir && h.Typeflag != tar.TypeReg {
			t.Fatalf("extract %s: entry %q of type %c", archive, h.Name, h.Typeflag)
		}
		if err := writeEntry(name, h, tr); err != nil {
			t.Fatalf("extract %s: %v", archive, err)
		}
	}
}

// mustRefName is the first tag the layout's index gives its image.
func mustRefName(t *testing.T, layout string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(layout, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Manifests []struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(raw, &index); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if len(index.Manifests) == 0 {
		t.Fatal("index.json names no image")
	}
	ref := index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]
	if ref == "" {
		t.Fatal("index.json gives its image no org.opencontainers.image.ref.name")
	}
	return ref
}

// mustConfigure edits the runtime config umoci wrote from the image: the
// image's own user, command and environment stay; the container shares the
// host's network namespace (the test reaches it on 127.0.0.1, where serve
// is told to listen, on a free port), its root is read-only as in the
// Kubernetes Deployment, the host's data directory is its /data, and there
// is no terminal. It returns the command that will run.
func mustConfigure(t *testing.T, bundle, data, addr string) []string {
	t.Helper()
	path := filepath.Join(bundle, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var config struct {
		Process struct {
			User struct {
				UID int `json:"uid"`
				GID int `json:"gid"`
			} `json:"user"`
			Args []string `json:"args"`
			Env  []string `json:"env"`
		} `json:"process"`
	}
	// Decoded twice: typed for what the test checks, and whole for what it
	// writes back, so that nothing umoci set is lost.
	var whole map[string]any
	if err := json.Unmarshal(raw, &config); err != nil {
		t.Fatalf("config.json: %v", err)
	}
	if err := json.Unmarshal(raw, &whole); err != nil {
		t.Fatalf("config.json: %v", err)
	}
	if config.Process.User.UID != UID || config.Process.User.GID != GID {
		t.Errorf("the container runs as %d:%d, want %d:%d", config.Process.User.UID, config.Process.User.GID, UID, GID)
	}
	if want := slices.Concat(Entrypoint, Cmd); !slices.Equal(config.Process.Args, want) {
		t.Errorf("the container runs %q, want %q", config.Process.Args, want)
	}
	for _, env := range Env {
		if !slices.Contains(config.Process.Env, env) {
			t.Errorf("the container's environment %q lacks %q", config.Process.Env, env)
		}
	}

	// The image's command, with flags after it as `docker run IMAGE …`
	// cannot add but Kubernetes' args can: the last --addr wins.
	args := append(slices.Clone(config.Process.Args), "--addr", addr, "--drain-delay", "200ms")
	process := whole["process"].(map[string]any)
	process["terminal"] = false
	process["args"] = args
	whole["root"].(map[string]any)["readonly"] = true
	linux := whole["linux"].(map[string]any)
	var namespaces []any
	for _, ns := range linux["namespaces"].([]any) {
		if ns.(map[string]any)["type"] != "network" {
			namespaces = append(namespaces, ns)
		}
	}
	linux["namespaces"] = namespaces
	var mounts []any
	sawData := false
	for _, m := range whole["mounts"].([]any) {
		if m.(map[string]any)["destination"] == DataDir {
			sawData = true // umoci's tmpfs for the image's volume
			continue
		}
		mounts = append(mounts, m)
	}
	if !sawData {
		t.Errorf("umoci mounted nothing at %s: the image declares no volume there", DataDir)
	}
	whole["mounts"] = append(mounts, map[string]any{
		"destination": DataDir, "type": "bind", "source": data, "options": []string{"rbind", "rw"},
	})
	out, err := json.Marshal(whole)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return args
}

func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

var client = &http.Client{Timeout: 2 * time.Second}

// get is the status and body of GET url.
func get(url string) (int, []byte, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, bytes.TrimSpace(body), err
}

func wantStatus(url string, want int) error {
	code, body, err := get(url)
	if err == nil && code != want {
		err = fmt.Errorf("GET %s: %d %s, want %d", url, code, body, want)
	}
	return err
}

func mustGetJSON(t *testing.T, url string, v any) {
	t.Helper()
	code, body, err := get(url)
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
}

// fileOwner is the uid of a file on Linux.
func fileOwner(fi os.FileInfo) int {
	return int(fi.Sys().(*syscall.Stat_t).Uid)
}
