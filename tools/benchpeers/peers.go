package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// peer is one row of the table: how to tell that it is installed and how
// to run it.
type peer struct {
	id, name string
	// missing says what is not installed and how to install it, or "".
	missing func(opts options) string
	// node peers run peers.js; the others run this binary as a worker.
	node bool
}

var peers = []peer{
	{id: "cityfinder", name: "cityfinder `Service.Find`", missing: func(opts options) string {
		if _, err := os.Stat(opts.bin); err != nil {
			return "not built: make build (" + opts.bin + ")"
		}
		return ""
	}},
	{id: "flexsearch", name: "FlexSearch 0.8.212 (npm)", node: true, missing: needNode},
	{id: "redisearch", name: "RediSearch 1.2 (Debian)", missing: func(options) string {
		if _, err := exec.LookPath("redis-server"); err != nil {
			return "not installed: apt-get install redis-server redis-redisearch"
		}
		if _, err := os.Stat(redisearchModule); err != nil {
			return "not installed: apt-get install redis-redisearch (no " + redisearchModule + ")"
		}
		return ""
	}},
	{id: "bleve", name: "bleve v2.6.3", missing: func(options) string { return "" }}, // compiled in
	{id: "pgtrgm", name: "PostgreSQL 15 pg_trgm", missing: func(options) string {
		if _, err := pgBinDir(); err != nil {
			return "not installed: apt-get install postgresql (" + err.Error() + ")"
		}
		if found, _ := filepath.Glob("/usr/share/postgresql/*/extension/pg_trgm.control"); len(found) == 0 {
			return "not installed: apt-get install postgresql-contrib (no pg_trgm extension)"
		}
		return ""
	}},
	{id: "minisearch", name: "MiniSearch 7.2.0 (npm)", node: true, missing: needNode},
}

func peerIDs() []string {
	ids := make([]string, len(peers))
	for i, p := range peers {
		ids[i] = p.id
	}
	return ids
}

func peerByID(id string) (peer, bool) {
	for _, p := range peers {
		if p.id == id {
			return p, true
		}
	}
	return peer{}, false
}

func needNode(options) string {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "not installed: apt-get install nodejs npm (no " + tool + " on PATH)"
		}
	}
	return ""
}

// runPeer runs one peer in a process of its own, in a directory of its own
// under the work directory (removed after), and reads its result.
func runPeer(ctx context.Context, p peer, opts options) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	dir := filepath.Join(opts.work, p.id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	for _, f := range []string{citiesFile, queriesFile} {
		if err := os.Link(filepath.Join(opts.work, f), filepath.Join(dir, f)); err != nil {
			return result{}, err
		}
	}
	var cmd *exec.Cmd
	if p.node {
		modules, err := nodeModules(ctx, opts)
		if err != nil {
			return result{}, err
		}
		script, err := filepath.Abs(filepath.Join(opts.js, "peers.js"))
		if err != nil {
			return result{}, err
		}
		cmd = exec.CommandContext(ctx, "node", "--max-old-space-size="+strconv.Itoa(opts.heapMiB), "--expose-gc", script, p.id, dir, strconv.Itoa(opts.rounds))
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	} else {
		self, err := os.Executable()
		if err != nil {
			return result{}, err
		}
		cmd = exec.CommandContext(ctx, self, "-worker", p.id, "-work", dir, "-bin", opts.bin, "-file", opts.file, "-rounds", strconv.Itoa(opts.rounds))
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("%s: %w", cmd.Path, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, resultFile))
	if err != nil {
		return result{}, err
	}
	var res result
	return res, json.Unmarshal(b, &res)
}

// nodeModules installs package-lock.json's packages with `npm ci` into the
// cache, under a hash of the lock file (once per lock), and returns the
// node_modules directory for NODE_PATH.
func nodeModules(ctx context.Context, opts options) (string, error) {
	lock, err := os.ReadFile(filepath.Join(opts.js, "package-lock.json"))
	if err != nil {
		return "", err
	}
	pkg, err := os.ReadFile(filepath.Join(opts.js, "package.json"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append(pkg, lock...))
	dir := filepath.Join(opts.cache, "benchpeers-node-"+hex.EncodeToString(sum[:6]))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".package-lock.json")); err == nil {
		return modules, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out.Bytes())
	}
	return modules, nil
}

// runGoWorker is the -worker mode: one Go peer on the files of -work.
func runGoWorker(ctx context.Context, id string, opts options) error {
	var e engine
	switch id {
	case "cityfinder":
		e = &cityfinder{bin: opts.bin, file: opts.file, dir: opts.work}
	case "bleve":
		e = &bleveEngine{dir: opts.work}
	case "redisearch":
		e = &rediSearch{dir: opts.work}
	case "pgtrgm":
		e = &pgTrgm{dir: opts.work}
	default:
		return fmt.Errorf("no Go peer %q", id)
	}
	return runWorker(ctx, e, opts.work, opts.rounds)
}
