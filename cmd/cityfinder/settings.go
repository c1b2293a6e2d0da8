package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cityfinder/cityfinder/pkg/breaker"
	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
	"github.com/cityfinder/cityfinder/pkg/search/mongo/mirror"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// setting is one row of the settings table: a value of the configuration
// that a flag, an environment variable and a key of the config file set,
// in that order of precedence over its default. The flags, their --help,
// the loading and its messages, and configs/cityfinder.yaml all read the
// table.
type setting struct {
	key      string // in the config file: "limiter.window"; "" for --config, which names the file
	flag     string // without its dashes
	env      string
	kind     kind
	def      any // of the kind's Go type
	commands commandSet
	doc      string // one line, for --help and the config file
	// form says what the setting accepts, for messages ("a whole number,
	// at least 1"); "" means the kind's.
	form string
	// secret marks a setting whose value may hold a password: no message
	// shows any part of it.
	secret bool
	// note says more in the config file, after doc.
	note string
}

// kind is how a setting's value is written: each kind parses text the same
// way from a flag, a variable or the config file.
type kind int

const (
	textKind     kind = iota // string
	intKind                  // int, in decimal
	durationKind             // time.Duration, as time.ParseDuration reads it
	boolKind                 // bool, as strconv.ParseBool reads it
	listKind                 // []string, comma-separated (a YAML list in the file)
)

// typeName is the kind's name in --help, as pflag names its own types.
func (k kind) typeName() string {
	return [...]string{"string", "int", "duration", "bool", "stringSlice"}[k]
}

// form says what the kind accepts.
func (k kind) form() string {
	return [...]string{"a text", "a whole number", "a duration such as 3s, 500ms or 1m30s", "true or false", "a comma-separated list"}[k]
}

// parse reads text as a value of the kind; ok is false when it is none.
func (k kind) parse(text string) (v any, ok bool) {
	switch k {
	case intKind:
		n, err := strconv.Atoi(text)
		return n, err == nil
	case durationKind:
		d, err := time.ParseDuration(text)
		return d, err == nil
	case boolKind:
		b, err := strconv.ParseBool(text)
		return b, err == nil
	case listKind:
		items := []string{}
		for item := range strings.SplitSeq(text, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, item)
			}
		}
		return items, true
	}
	return text, true
}

// format writes v, a value of the kind, as --help shows defaults: an empty
// list as nothing, so that it shows no default.
func (k kind) format(v any) string {
	if items, ok := v.([]string); ok {
		if len(items) == 0 {
			return ""
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	return fmt.Sprint(v)
}

// acceptedForm is what s accepts, for messages.
func (s *setting) acceptedForm() string {
	if s.form != "" {
		return s.form
	}
	return s.kind.form()
}

// commandSet is the commands that take a setting.
type commandSet uint8

const (
	cmdImport commandSet = 1 << iota
	cmdQuery
	cmdServe
	cmdHealthcheck
	everyCommand = cmdImport | cmdQuery | cmdServe
)

// names are the commands of c, for the config file.
func (c commandSet) names() []string {
	var names []string
	for _, n := range []struct {
		cmd  commandSet
		name string
	}{{cmdImport, "import"}, {cmdQuery, "query"}, {cmdServe, "serve"}, {cmdHealthcheck, "healthcheck"}} {
		if c&n.cmd != 0 {
			names = append(names, n.name)
		}
	}
	return names
}

// The rows of the settings table, in the order of configs/cityfinder.yaml.
var (
	settingConfig = &setting{key: "", flag: "config", env: "CITYFINDER_CONFIG", kind: textKind, def: "", commands: everyCommand | cmdHealthcheck,
		doc: "YAML config file (see configs/cityfinder.yaml)", form: "the path of a YAML file"}
	settingDataDir = &setting{key: "data_dir", flag: "data-dir", env: "CITYFINDER_DATA_DIR", kind: textKind, def: "./data", commands: everyCommand,
		doc: "directory of the embedded store", form: "the path of a directory"}
	settingDataset = &setting{key: "dataset", flag: "dataset", env: "CITYFINDER_DATASET", kind: textKind, def: string(search.Small), commands: cmdImport | cmdQuery,
		doc: "dataset: small or large", form: "small or large",
		note: "small is the okfn world cities, large a GeoNames dump or MaxMind world cities."}

	settingAllowShrink = &setting{key: "import.allow_shrink", flag: "allow-shrink", env: "CITYFINDER_ALLOW_SHRINK", kind: boolKind, def: false, commands: cmdImport,
		doc:  "replace the dataset even if the file holds fewer than half its cities or more than 1% of its rows are malformed",
		note: "Without it such an import is refused and the dataset keeps its content."}
	settingGeoNames = &setting{key: "import.geonames", flag: "geonames", env: "CITYFINDER_GEONAMES", kind: textKind, def: "", commands: cmdImport,
		doc:  "GeoNames dump (cities1000.txt, .gz or .zip) whose population, location and other names complete the okfn or MaxMind rows",
		form: "the path of a GeoNames dump", note: "Empty: none."}
	settingSource = &setting{key: "import.source", flag: "source", env: "CITYFINDER_SOURCE", kind: textKind, def: importer.GeoNamesSources[0], commands: cmdImport,
		doc:  "GeoNames dump that --dataset large downloads without --file: " + strings.Join(importer.GeoNamesSources, ", ") + ", or the http(s) URL of a copy",
		form: strings.Join(importer.GeoNamesSources, ", ") + ", or the http(s) URL of a copy of one",
		// A URL of a copy may carry a user name and password.
		secret: true,
		note:   "It goes into import.download_dir, once; allCountries gives its populated places."}
	settingRegionNames = &setting{key: "import.region_names", flag: "region-names", env: "CITYFINDER_REGION_NAMES", kind: textKind, def: "", commands: cmdImport,
		doc:  "okfn world-cities CSV whose subcountry column names the regions of --dataset large, instead of their codes",
		form: "the path of an okfn world-cities CSV",
		note: `GeoNames and MaxMind give codes ("40", "ENG"), the large dataset shows names ("Tokyo", "England") wherever the CSV ` +
			"names them (a MaxMind file's only with import.geonames). Empty: the regions keep their codes, and the import says so."}
	settingAlternateNames = &setting{key: "import.alternate_names", flag: "alternate-names", env: "CITYFINDER_ALTERNATE_NAMES", kind: textKind, def: "", commands: cmdImport,
		doc:  "GeoNames alternate names file (alternateNamesV2.txt or alternateNames.txt, .gz or .zip) whose names in other languages lang= shows",
		form: "the path of a GeoNames alternate names file",
		note: "Cities are matched by geonameid; former names (Bombay) find their cities too. Empty: names only as the dataset gives them. See docs/languages.md."}
	settingDownloadDir = &setting{key: "import.download_dir", flag: "download-dir", env: "CITYFINDER_DOWNLOAD_DIR", kind: textKind, def: "", commands: cmdImport,
		doc:  "directory that import downloads a dataset into, once, when --file is not given or is a URL (default: downloads in --data-dir)",
		form: "the path of a directory",
		note: "A file already there is imported again rather than downloaded."}
	settingMaxRows = &setting{key: "import.max_rows", flag: "max-rows", env: "CITYFINDER_MAX_ROWS", kind: intKind, def: importer.DefaultMaxRows, commands: cmdImport,
		doc: "most rows an import reads of its file, and of the --geonames dump", form: "a whole number, at least 1",
		note: "A longer file fails the import, and the dataset keeps its content. Duplicate rows are merged as they arrive, so " +
			"memory follows the distinct cities; the limit bounds a file of distinct ones. allCountries has about 13 million rows."}

	settingLogLevel = &setting{key: "log.level", flag: "log-level", env: "CITYFINDER_LOG_LEVEL", kind: textKind, def: "info", commands: everyCommand,
		doc: "log level: debug, info, warn or error", form: "debug, info, warn or error",
		note: "Logs are text on a terminal and JSON otherwise."}

	settingAddr = &setting{key: "server.addr", flag: "addr", env: "CITYFINDER_ADDR", kind: textKind, def: "127.0.0.1:8080", commands: cmdServe | cmdHealthcheck,
		doc: "address to listen on", form: "a host and port such as 127.0.0.1:8080 or :8080",
		note: "healthcheck asks serve there, on the loopback when the host is empty, 0.0.0.0 or ::."}
	settingReadHeaderTimeout = &setting{key: "server.read_header_timeout", flag: "read-header-timeout", env: "CITYFINDER_READ_HEADER_TIMEOUT", kind: durationKind,
		def: server.DefaultLimits().ReadHeaderTimeout, commands: cmdServe, doc: "longest time to read a request's headers",
		note: "This and the server's other timeouts must be positive: 0 would mean none."}
	settingReadTimeout = &setting{key: "server.read_timeout", flag: "read-timeout", env: "CITYFINDER_READ_TIMEOUT", kind: durationKind,
		def: server.DefaultLimits().ReadTimeout, commands: cmdServe, doc: "longest time to read a whole request"}
	settingWriteTimeout = &setting{key: "server.write_timeout", flag: "write-timeout", env: "CITYFINDER_WRITE_TIMEOUT", kind: durationKind,
		def: server.DefaultLimits().WriteTimeout, commands: cmdServe, doc: "longest time from a request's headers to the end of its answer"}
	settingIdleTimeout = &setting{key: "server.idle_timeout", flag: "idle-timeout", env: "CITYFINDER_IDLE_TIMEOUT", kind: durationKind,
		def: server.DefaultLimits().IdleTimeout, commands: cmdServe, doc: "longest time a keep-alive connection waits for its next request"}
	settingMaxHeaderBytes = &setting{key: "server.max_header_bytes", flag: "max-header-bytes", env: "CITYFINDER_MAX_HEADER_BYTES", kind: intKind,
		def: server.DefaultLimits().MaxHeaderBytes, commands: cmdServe, doc: "largest request line and headers, in bytes; larger get 431",
		form: "a whole number of bytes, at least 1024"}
	settingShutdownTimeout = &setting{key: "server.shutdown_timeout", flag: "shutdown-timeout", env: "CITYFINDER_SHUTDOWN_TIMEOUT", kind: durationKind,
		def: server.DefaultShutdownTimeout, commands: cmdServe, doc: "longest wait for requests in flight on SIGINT/SIGTERM",
		note: "They are cut off after it."}
	settingCORSOrigin = &setting{key: "server.cors_origin", flag: "cors-origin", env: "CITYFINDER_CORS_ORIGIN", kind: listKind,
		def: []string{"*"}, commands: cmdServe, doc: `origins whose pages may read /search ("*": any; empty: none)`,
		form: "* or a list of origins such as https://example.com",
		note: `That is CORS: "*" for any, a list such as ["https://example.com"], or [] for none.`}
	settingCacheMaxAge = &setting{key: "server.cache_max_age", flag: "cache-max-age", env: "CITYFINDER_CACHE_MAX_AGE", kind: durationKind,
		def: time.Minute, commands: cmdServe, doc: "how long browsers and caches may keep a /search answer (0: no-store)",
		note: "The answer says Cache-Control: public, max-age=60 by default; errors are never stored."}
	settingAnswerCache = &setting{key: "server.answer_cache_mb", flag: "answer-cache-mb", env: "CITYFINDER_ANSWER_CACHE_MB", kind: intKind,
		def: defaultAnswerCacheMB, commands: cmdServe, doc: "megabytes of encoded /search answers kept for the texts asked most (0: none)",
		form: "a whole number of megabytes, 0 or more",
		note: "A kept answer is the same bytes as a fresh one, still counts against the rate limit, and is dropped when its dataset " +
			"is imported again; cityfinder_answer_cache_* in /metrics show how often it answers (docs/performance.md)."}
	settingReadyDatasets = &setting{key: "server.ready_datasets", flag: "ready-datasets", env: "CITYFINDER_READY_DATASETS", kind: listKind,
		def: []string{string(search.Small)}, commands: cmdServe, doc: "datasets /readyz requires (the others only degrade it)",
		form: "a list of datasets: small, large",
		note: "GET /readyz answers 503 while one of them is empty or its store down; the others are still checked but only make it \"degraded\"."}
	settingDrainDelay = &setting{key: "server.drain_delay", flag: "drain-delay", env: "CITYFINDER_DRAIN_DELAY", kind: durationKind,
		def: server.DefaultDrainDelay, commands: cmdServe,
		doc: "on SIGINT/SIGTERM, how long /readyz answers 503 while requests are still served, before the shutdown (0: none; a second signal ends it)",
		note: `GET /readyz answers 503 {"status":"draining"} at once, so that load balancers stop sending, while every request ` +
			"(on new connections too) is still answered, with Connection: close. After it serve keeps accepting while connections keep " +
			"coming, until none has come for 100 ms (the kernel resets those queued on a closing listener); then it shuts down " +
			"gracefully (server.shutdown_timeout). Make it at least your load balancer's health-check interval times its " +
			"unhealthy threshold (docs/operations.md)."}
	settingReloadInterval = &setting{key: "server.reload_interval", flag: "reload-interval", env: "CITYFINDER_RELOAD_INTERVAL", kind: durationKind,
		def: embedded.DefaultReloadInterval, commands: cmdServe, doc: "how often serve looks for new imports in --data-dir (0: only on SIGHUP)",
		note: "SIGHUP always makes serve read the datasets again and log it."}

	settingBreakerFailures = &setting{key: "server.breaker_failures", flag: "breaker-failures", env: "CITYFINDER_BREAKER_FAILURES", kind: intKind,
		def: breaker.DefaultThreshold, commands: cmdServe,
		doc:  "timeouts in a row of Redis (limiter) or MongoDB (datasets) after which serve stops asking it for --breaker-cooldown",
		form: "a whole number, at least 1",
		note: "While that circuit breaker is open the limiter fails open (or closed, limiter.fail_closed) and MongoDB's searches " +
			"answer 503 at once, instead of each waiting out a timeout; then one request probes. /readyz and " +
			"cityfinder_breaker_state show it (docs/reliability.md)."}
	settingBreakerCooldown = &setting{key: "server.breaker_cooldown", flag: "breaker-cooldown", env: "CITYFINDER_BREAKER_COOLDOWN", kind: durationKind,
		def: breaker.DefaultCooldown, commands: cmdServe, doc: "how long an open circuit breaker skips Redis or MongoDB before it probes again"}

	settingWindow = &setting{key: "limiter.window", flag: "window", env: "CITYFINDER_WINDOW", kind: durationKind, def: 3 * time.Second, commands: cmdServe,
		doc: "rate limit window per client", note: "Each client (remote IP) may do limiter.max searches in any window."}
	settingMax = &setting{key: "limiter.max", flag: "max", env: "CITYFINDER_MAX", kind: intKind, def: 5, commands: cmdServe,
		doc: "searches allowed per client in one window", form: "a whole number, at least 1"}
	settingTrustedProxies = &setting{key: "limiter.trusted_proxies", flag: "trusted-proxies", env: "CITYFINDER_TRUSTED_PROXIES", kind: listKind,
		def: []string{}, commands: cmdServe, doc: "CIDRs of reverse proxies whose X-Forwarded-For names the client",
		form: "a list of CIDRs or addresses such as 10.0.0.0/8,192.0.2.1",
		note: "Only a request whose peer is in one of them is keyed by X-Forwarded-For: the right-most address in it that is " +
			"not itself a trusted proxy. Empty: the header is never read. A network of every address (0.0.0.0/0, ::/0) would let " +
			"any client choose its own key, so it is refused unless limiter.trust_all_proxies confirms it."}
	settingTrustAll = &setting{key: "limiter.trust_all_proxies", flag: "trust-all-proxies", env: "CITYFINDER_TRUST_ALL_PROXIES", kind: boolKind,
		def: false, commands: cmdServe,
		doc:  "allow --trusted-proxies to hold a network of every address (0.0.0.0/0, ::/0), when no client can reach serve but through the proxies",
		note: "serve then warns at start."}
	settingIPv6Prefix = &setting{key: "limiter.ipv6_prefix", flag: "ipv6-prefix", env: "CITYFINDER_IPV6_PREFIX", kind: intKind,
		def: limiter.DefaultIPv6Prefix, commands: cmdServe, doc: "IPv6 clients are grouped by this prefix length",
		form: "a whole number from 1 to 128", note: "IPv4 clients count by address; IPv4-mapped IPv6 addresses count as IPv4."}
	settingMaxClients = &setting{key: "limiter.max_clients", flag: "max-clients", env: "CITYFINDER_MAX_CLIENTS", kind: intKind,
		def: 0, commands: cmdServe, doc: "most clients the in-process limiter tracks; new ones get 429 beyond it (0: no cap)",
		form: "a whole number (0: no cap)",
		note: "Idle clients are still forgotten after a window. When full, new clients get 429 until tracked ones have been idle " +
			"for a window; no tracked client is ever forgotten early."}
	settingRedisURL = &setting{key: "limiter.redis_url", flag: "redis-url", env: "CITYFINDER_REDIS_URL", kind: textKind, def: "", commands: cmdServe,
		doc: "Redis that replicas share rate limits in (default: in process): " +
			"redis://[user:password@]host:port/db, redis+cluster://host:port,host:port… for Redis Cluster, " +
			"redis+sentinel://host:port,host:port…/master/db for Sentinel, rediss… for TLS; percent-encode the password",
		form: "a Redis URL such as redis://host:6379/0", secret: true,
		note: "Ports default to 6379 (26379 for Sentinel), the database to 0. Percent-encode / ? # @ [ ] % and spaces in the " +
			"password (%2F, %3F, %23, %40, %5B, %5D, %25, %20); logs and errors show the hosts and database only. Options such as " +
			"?dial_timeout=1s&read_timeout=1s override the 250ms default timeouts; max_retries (default 0), max_redirects " +
			"(cluster, default 1) and sentinel_username/sentinel_password (Sentinel) are the others."}
	settingFailClosed = &setting{key: "limiter.fail_closed", flag: "limiter-fail-closed", env: "CITYFINDER_LIMITER_FAIL_CLOSED", kind: boolKind,
		def: false, commands: cmdServe, doc: "answer 503 while the rate limit store is unreachable, instead of serving unlimited",
		note: "With a cluster, that holds for the clients whose keys live on the nodes that are down; the others keep their " +
			"limits. /readyz requires Redis (every master of a cluster) only when this is true."}
	settingLimitBy = &setting{key: "limiter.limit_by", flag: "limit-by", env: "CITYFINDER_LIMIT_BY", kind: textKind, def: limitBySession,
		commands: cmdServe, doc: "what the rate limit counts: session (a search typed letter by letter counts once) or request (every request)",
		form: "session or request",
		note: "With session, a request whose text extends (or deletes back) the client's last text on the same dataset within " +
			"limiter.session_gap continues its search and does not count; a repeat, another word or another dataset is a new search. " +
			"All replicas must count alike. See docs/rate-limit.md."}
	settingSessionGap = &setting{key: "limiter.session_gap", flag: "session-gap", env: "CITYFINDER_SESSION_GAP", kind: durationKind,
		def: limiter.DefaultSessionGap, commands: cmdServe, doc: "with --limit-by session, the pause that ends a search"}
	settingSessionRequests = &setting{key: "limiter.session_requests", flag: "session-requests", env: "CITYFINDER_SESSION_REQUESTS", kind: intKind,
		def: limiter.DefaultSessionRequests, commands: cmdServe, doc: "with --limit-by session, the most requests one search takes before the next counts again",
		form: "a whole number, at least 1"}
	settingSessionLength = &setting{key: "limiter.session_length", flag: "session-length", env: "CITYFINDER_SESSION_LENGTH", kind: intKind,
		def: limiter.DefaultSessionLength, commands: cmdServe, doc: "with --limit-by session, the longest text (in folded bytes) a search may grow to; every longer one counts",
		form: "a whole number, at least 1"}

	settingMongoURI = &setting{key: "mongo.uri", flag: "mongo-uri", env: "CITYFINDER_MONGO_URI", kind: textKind, def: "", commands: everyCommand,
		doc:  "mongodb://… or mongodb+srv://… URI of a MongoDB to keep the datasets in, instead of --data-dir",
		form: "a MongoDB URI such as mongodb://host:27017/", secret: true,
		note: "mongodb://[user:password@]host[:port][,host…]/[?options] keeps the datasets in MongoDB 6.0+, so that several " +
			"serve replicas share them. Empty: the embedded store. Options in the URI (maxPoolSize, connectTimeoutMS, " +
			"serverSelectionTimeoutMS, …) win over the keys below."}
	settingMongoDB = &setting{key: "mongo.db", flag: "mongo-db", env: "CITYFINDER_MONGO_DB", kind: textKind, def: mongo.DefaultDatabase, commands: everyCommand,
		doc: "MongoDB database of the datasets", form: "a database name", note: "Its collections are cities_small and cities_large."}
	settingMongoPoolSize = &setting{key: "mongo.pool_size", flag: "mongo-pool-size", env: "CITYFINDER_MONGO_POOL_SIZE", kind: intKind,
		def: mongo.DefaultMaxPoolSize, commands: everyCommand, doc: "most connections to each MongoDB server", form: "a whole number, at least 1"}
	settingMongoConnectTimeout = &setting{key: "mongo.connect_timeout", flag: "mongo-connect-timeout", env: "CITYFINDER_MONGO_CONNECT_TIMEOUT", kind: durationKind,
		def: mongo.DefaultConnectTimeout, commands: everyCommand, doc: "longest wait to connect to MongoDB or find a server to use",
		note: "An unreachable server fails import and query after it, and serve answers 503 until the server is back."}
	settingMongoQueryTimeout = &setting{key: "mongo.query_timeout", flag: "mongo-query-timeout", env: "CITYFINDER_MONGO_QUERY_TIMEOUT", kind: durationKind,
		def: mongo.DefaultQueryTimeout, commands: everyCommand, doc: "longest time one search may take in MongoDB"}
	settingMongoBatchSize = &setting{key: "mongo.batch_size", flag: "mongo-batch-size", env: "CITYFINDER_MONGO_BATCH_SIZE", kind: intKind,
		def: mongo.DefaultBatchSize, commands: cmdImport, doc: "cities per insert when importing into MongoDB", form: "a whole number, at least 1"}
	settingMongoMode = &setting{key: "mongo.mode", flag: "mongo-mode", env: "CITYFINDER_MONGO_MODE", kind: textKind, def: mongoModeSnapshot,
		commands: cmdServe, doc: "how serve answers from MongoDB: snapshot (from memory) or query (every search a query)",
		form: "snapshot or query",
		note: "snapshot: each replica loads the snapshot that import writes into MongoDB's GridFS, serves every search from " +
			"memory (typos included), follows new imports within a few seconds and keeps a copy in mongo/<db> under data_dir, " +
			"which it serves while MongoDB is unreachable. query: every search is a query on the cities_<dataset> collections, " +
			"without typo matches, as fast as the server's indexes (see docs/deployment.md)."}
	settingMongoPollInterval = &setting{key: "mongo.poll_interval", flag: "mongo-poll-interval", env: "CITYFINDER_MONGO_POLL_INTERVAL",
		kind: durationKind, def: mirror.DefaultPollInterval, commands: cmdServe,
		doc:  "how often serve asks MongoDB for a new import in snapshot mode",
		note: "A change stream (MongoDB replica sets) announces an import sooner; FerretDB and a standalone MongoDB have none."}

	settingDownloadConnectTimeout = &setting{key: "download.connect_timeout", flag: "download-connect-timeout", env: "CITYFINDER_DOWNLOAD_CONNECT_TIMEOUT",
		kind: durationKind, def: importer.DefaultTimeouts().Connect, commands: cmdImport,
		doc: "longest wait to connect to the download's server or proxy",
		note: "An import without --file or a local copy downloads its file (through HTTPS_PROXY when set); each phase of the " +
			"download has a timeout that must be positive, so that a network or proxy that stalls fails the import."}
	settingDownloadTLSTimeout = &setting{key: "download.tls_timeout", flag: "download-tls-timeout", env: "CITYFINDER_DOWNLOAD_TLS_TIMEOUT",
		kind: durationKind, def: importer.DefaultTimeouts().TLS, commands: cmdImport, doc: "longest TLS handshake of the download"}
	settingDownloadHeaderTimeout = &setting{key: "download.header_timeout", flag: "download-header-timeout", env: "CITYFINDER_DOWNLOAD_HEADER_TIMEOUT",
		kind: durationKind, def: importer.DefaultTimeouts().Header, commands: cmdImport,
		doc: "longest wait for the download's server (or proxy) to answer", note: "A proxy's answer to CONNECT too."}
	settingDownloadIdleTimeout = &setting{key: "download.idle_timeout", flag: "download-idle-timeout", env: "CITYFINDER_DOWNLOAD_IDLE_TIMEOUT",
		kind: durationKind, def: importer.DefaultTimeouts().Idle, commands: cmdImport, doc: "longest wait for more of the downloaded file"}
	settingDownloadTimeout = &setting{key: "download.timeout", flag: "download-timeout", env: "CITYFINDER_DOWNLOAD_TIMEOUT",
		kind: durationKind, def: importer.DefaultTimeouts().Total, commands: cmdImport, doc: "longest time a whole download may take",
		note: "A server that trickles its file, never idle for long, fails the import once it has passed; the default brings allCountries.zip (about 400 MB) at 120 KB/s."}
	settingDownloadMaxBytes = &setting{key: "download.max_bytes", flag: "download-max-bytes", env: "CITYFINDER_DOWNLOAD_MAX_BYTES",
		kind: intKind, def: importer.DefaultMaxDownloadBytes, commands: cmdImport, doc: "largest file a download may bring, in bytes",
		form: "a whole number, at least 1", note: "A larger file, or an endless one, fails the import before the disk is full; the default (4 GiB) takes allCountries.zip (about 400 MB) with room to spare."}

	settingHealthcheckTimeout = &setting{key: "healthcheck.timeout", flag: "probe-timeout", env: "CITYFINDER_PROBE_TIMEOUT",
		kind: durationKind, def: defaultHealthcheckTimeout, commands: cmdHealthcheck,
		doc:  "longest wait for serve's answer to healthcheck",
		note: "It is more than the 800 ms that /readyz gives its checks; give HEALTHCHECK or an exec probe a longer timeout than this."}
)

// settings is the table: every setting, in the order of the config file.
var settings = []*setting{
	settingConfig, settingDataDir, settingDataset,
	settingAllowShrink, settingGeoNames, settingSource, settingRegionNames, settingAlternateNames, settingDownloadDir, settingMaxRows,
	settingLogLevel,
	settingAddr, settingReadHeaderTimeout, settingReadTimeout, settingWriteTimeout, settingIdleTimeout, settingMaxHeaderBytes,
	settingShutdownTimeout, settingCORSOrigin, settingCacheMaxAge, settingAnswerCache, settingReadyDatasets, settingDrainDelay, settingReloadInterval,
	settingBreakerFailures, settingBreakerCooldown,
	settingWindow, settingMax, settingTrustedProxies, settingTrustAll, settingIPv6Prefix, settingMaxClients, settingRedisURL, settingFailClosed,
	settingLimitBy, settingSessionGap, settingSessionRequests, settingSessionLength,
	settingMongoURI, settingMongoDB, settingMongoPoolSize, settingMongoConnectTimeout, settingMongoQueryTimeout, settingMongoBatchSize,
	settingMongoMode, settingMongoPollInterval,
	settingDownloadConnectTimeout, settingDownloadTLSTimeout, settingDownloadHeaderTimeout, settingDownloadIdleTimeout,
	settingDownloadTimeout, settingDownloadMaxBytes,
	settingHealthcheckTimeout,
}

// addSettingFlags defines on fs the flag of every setting that cmd takes,
// with its default and its line of --help.
func addSettingFlags(fs *pflag.FlagSet, cmd commandSet) {
	for _, s := range settings {
		if s.commands&cmd == 0 {
			continue
		}
		var v pflag.Value = &flagValue{s: s, v: s.def}
		if s.kind == boolKind {
			v = boolFlagValue{v.(*flagValue)}
		}
		f := fs.VarPF(v, s.flag, "", s.doc+" (env "+s.env+")")
		if s.kind == boolKind {
			f.NoOptDefVal = "true" // --allow-shrink alone means true
		}
	}
}

// settingFlag is the value of f if f is a setting's flag.
func settingFlag(f *pflag.Flag) (*flagValue, bool) {
	switch v := f.Value.(type) {
	case *flagValue:
		return v, true
	case boolFlagValue:
		return v.flagValue, true
	}
	return nil, false
}

// flagValue is a setting's flag: it reads its text as the setting does from
// the environment and the config file, so that each form accepts the same.
type flagValue struct {
	s   *setting
	v   any
	set bool // a list's first value replaces the default, the next ones add to it
}

func (f *flagValue) String() string { return f.s.kind.format(f.v) }
func (f *flagValue) Type() string   { return f.s.kind.typeName() }

// boolFlagValue is a bool setting's flag, which pflag lets go without a
// value.
type boolFlagValue struct{ *flagValue }

func (boolFlagValue) IsBoolFlag() bool { return true }

// Set reads one value given on the command line. Its error only says what
// the flag accepts: explainFlag makes the message.
func (f *flagValue) Set(text string) error {
	v, ok := f.s.kind.parse(text)
	if !ok {
		return fmt.Errorf("use %s", f.s.acceptedForm())
	}
	if items, isList := v.([]string); isList && f.set {
		v = append(f.v.([]string), items...)
	}
	f.v, f.set = v, true
	return nil
}

// configFileHeader opens configs/cityfinder.yaml.
const configFileHeader = `# cityfinder configuration: every key, with its default.
# Precedence: command-line flag > CITYFINDER_* environment variable > this file > default.
# Use it with ` + "`cityfinder serve --config configs/cityfinder.yaml`" + ` (or CITYFINDER_CONFIG).
# Written from the settings table (cmd/cityfinder/settings.go) by
# ` + "`go test ./cmd/cityfinder -run TestConfigFileIsTheTable -update`" + `.
`

// configFileText is configs/cityfinder.yaml: every key of the table with
// its doc, flag, variable, commands and default, section by section.
func configFileText() string {
	var b strings.Builder
	b.WriteString(configFileHeader)
	section := ""
	for _, s := range settings {
		if s.key == "" {
			continue
		}
		sec, name, nested := strings.Cut(s.key, ".")
		indent := ""
		switch {
		case !nested:
			sec, name = "", s.key
			b.WriteString("\n")
		case sec != section:
			fmt.Fprintf(&b, "\n%s:\n", sec)
		}
		if nested {
			indent = "  "
		}
		section = sec
		writeComment(&b, indent, fmt.Sprintf("%s (flag --%s, env %s; %s).", s.doc, s.flag, s.env, strings.Join(s.commands.names(), ", ")))
		if s.note != "" {
			writeComment(&b, indent, s.note)
		}
		fmt.Fprintf(&b, "%s%s: %s\n", indent, name, yamlValue(s.def))
	}
	return b.String()
}

// writeComment writes text as YAML comment lines of at most 80 columns.
func writeComment(b *strings.Builder, indent, text string) {
	const width = 80
	line := indent + "#"
	for _, word := range strings.Fields(text) {
		if len(line)+1+len(word) > width && len(line) > len(indent)+1 {
			b.WriteString(line + "\n")
			line = indent + "#"
		}
		line += " " + word
	}
	b.WriteString(line + "\n")
}

// yamlValue writes a default as YAML: a string plain when YAML reads it
// back as that string, else quoted.
func yamlValue(v any) string {
	switch v := v.(type) {
	case string:
		if plainYAML.MatchString(v) && !slices.Contains(yamlWords, strings.ToLower(v)) {
			return v
		}
		return strconv.Quote(v)
	case []string:
		items := make([]string, len(v))
		for i, item := range v {
			items[i] = yamlValue(item)
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// plainYAML matches the strings that YAML reads back unquoted as
// themselves: no indicator first, no ": " or " #", not a number or a bool.
var plainYAML = regexp.MustCompile(`^[A-Za-z./_][A-Za-z0-9./_:-]*$`)

// yamlWords are the plain words that YAML reads as a bool or null.
var yamlWords = []string{"true", "false", "null", "yes", "no", "on", "off", "y", "n"}
