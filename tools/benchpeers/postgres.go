package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cityfinder/cityfinder/internal/benchenv"
)

// pgTrgm is PostgreSQL with pg_trgm as its documentation recommends for
// similarity search: a GIN gin_trgm_ops index for the % operator, and a
// btree text_pattern_ops index for the prefix (LIKE 'abc%'), in a cluster
// of its own (initdb into the work directory, 127.0.0.1 on a free port).
type pgTrgm struct {
	dir    string
	data   string // the cluster's directory
	server *exec.Cmd
	conn   *pgx.Conn
}

// pgQuery answers a query as autocomplete does: the prefix matches by
// population, then, only when they are fewer than ten (Limit stops the
// Append before its second branch otherwise), the names most similar to
// the text, by similarity then population.
const pgQuery = `(SELECT slug FROM cities WHERE name LIKE $1 ORDER BY population DESC LIMIT 10)
UNION ALL
(SELECT slug FROM (SELECT slug, similarity(name, $2) AS s, population FROM cities
  WHERE name % $2 AND name NOT LIKE $1 ORDER BY s DESC, population DESC LIMIT 10) t)
LIMIT 10`

func (p *pgTrgm) Config() string {
	return "PostgreSQL 15 with pg_trgm, fsync off, maintenance_work_mem 256MB, other settings default; " +
		"table cities(name, slug, population) loaded with COPY; `CREATE INDEX ... USING gin (name gin_trgm_ops)` and " +
		"`CREATE INDEX ... (name text_pattern_ops)`, then ANALYZE; query: the prefix matches (`name LIKE 'text%'`) by population, " +
		"then, when fewer than ten, `name % text` (similarity ≥ 0.3, the default) by similarity then population, one prepared statement"
}

// Start makes the cluster (initdb) and starts postgres: not part of the
// build, as a server's start is not part of the others'.
func (p *pgTrgm) Start(ctx context.Context) error {
	bin, err := pgBinDir()
	if err != nil {
		return err
	}
	cred, err := p.credential()
	if err != nil {
		return err
	}
	// A directory of its own in the temporary directory rather than in the
	// work directory, whose parents the postgres user may not enter.
	if p.data, err = os.MkdirTemp("", "benchpeers-pgdata-"); err != nil {
		return err
	}
	data := p.data
	if cred != nil {
		if err := os.Chown(data, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	logFile, err := os.Create(filepath.Join(p.dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "bench", "--auth=trust", "-E", "UTF8", "--locale=C")
	initdb.Stdout, initdb.Stderr = logFile, logFile
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := initdb.Run(); err != nil {
		return fmt.Errorf("initdb (see %s): %w", logFile.Name(), err)
	}
	addr, err := benchenv.FreeAddr()
	if err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(addr)
	p.server = exec.CommandContext(ctx, filepath.Join(bin, "postgres"), "-D", data, "-k", data, "-p", port,
		"-c", "listen_addresses="+host, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "maintenance_work_mem=256MB")
	p.server.Stdout, p.server.Stderr = logFile, logFile
	p.server.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := p.server.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	dsn := fmt.Sprintf("host=%s port=%s user=bench dbname=postgres sslmode=disable", host, port)
	return waitFor(ctx, 30*time.Second, func() error {
		var err error
		p.conn, err = pgx.Connect(ctx, dsn)
		return err
	})
}

func (p *pgTrgm) Build(ctx context.Context, cities []city) error {
	for _, stmt := range []string{
		"CREATE EXTENSION pg_trgm",
		"CREATE TABLE cities (name text NOT NULL, slug text NOT NULL, population bigint NOT NULL)",
	} {
		if _, err := p.conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	if _, err := p.conn.CopyFrom(ctx, pgx.Identifier{"cities"}, []string{"name", "slug", "population"},
		pgx.CopyFromSlice(len(cities), func(i int) ([]any, error) {
			return []any{cities[i].text, cities[i].slug, cities[i].population}, nil
		})); err != nil {
		return fmt.Errorf("COPY cities: %w", err)
	}
	for _, stmt := range []string{
		"CREATE INDEX cities_trgm ON cities USING gin (name gin_trgm_ops)",
		"CREATE INDEX cities_prefix ON cities (name text_pattern_ops)",
		"ANALYZE cities",
	} {
		if _, err := p.conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	_, err := p.conn.Prepare(ctx, "find", pgQuery)
	return err
}

// credential is who runs initdb and postgres, which refuse root: the
// postgres user when the harness runs as root, else the harness's user.
func (p *pgTrgm) credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("running as root and no postgres or nobody user to run postgres as")
}

// pgBinDir finds initdb and postgres: on PATH, else in Debian's
// /usr/lib/postgresql/VERSION/bin.
func pgBinDir() (string, error) {
	if path, err := exec.LookPath("initdb"); err == nil {
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			path = resolved
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), "postgres")); err == nil {
			return filepath.Dir(path), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	return "", fmt.Errorf("no initdb on PATH nor in /usr/lib/postgresql/*/bin")
}

func (p *pgTrgm) Find(ctx context.Context, q query) ([]string, error) {
	prefix := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q.text) + "%"
	rows, err := p.conn.Query(ctx, "find", prefix, q.text)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Memory adds up the proportional set sizes of the postmaster and its
// children (the backend that answered, the checkpointer, …): their shared
// buffers counted once.
func (p *pgTrgm) Memory() (int64, string, error) {
	pid := p.server.Process.Pid
	total, err := benchenv.PSS(pid)
	if err != nil {
		return 0, "", err
	}
	for _, child := range childrenOf(pid) {
		if kib, err := benchenv.PSS(child); err == nil {
			total += kib
		}
	}
	return total, "postgres and its children (PSS)", nil
}

func (p *pgTrgm) Close() error {
	if p.conn != nil {
		p.conn.Close(context.Background())
	}
	if p.server != nil {
		benchenv.Stop(p.server, 10*time.Second)
	}
	if p.data != "" {
		os.RemoveAll(p.data)
	}
	return nil
}
