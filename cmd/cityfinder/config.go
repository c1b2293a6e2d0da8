package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// config is every setting of a run, decoded from flags, CITYFINDER_*
// environment variables, the config file and defaults, in that order.
type config struct {
	DataDir string `mapstructure:"data_dir"`
	Dataset string `mapstructure:"dataset"`
	Log     struct {
		Level string `mapstructure:"level"`
	} `mapstructure:"log"`
	Server struct {
		Addr string `mapstructure:"addr"`
		// The http.Server's limits, and how long shutdown waits (see server.Limits).
		ReadHeaderTimeout time.Duration `mapstructure:"read_header_timeout"`
		ReadTimeout       time.Duration `mapstructure:"read_timeout"`
		WriteTimeout      time.Duration `mapstructure:"write_timeout"`
		IdleTimeout       time.Duration `mapstructure:"idle_timeout"`
		MaxHeaderBytes    int           `mapstructure:"max_header_bytes"`
		ShutdownTimeout   time.Duration `mapstructure:"shutdown_timeout"`
		// /search's CORS origins and Cache-Control max-age; the datasets /readyz requires.
		CORSOrigin    []string      `mapstructure:"cors_origin"`
		CacheMaxAge   time.Duration `mapstructure:"cache_max_age"`
		ReadyDatasets []string      `mapstructure:"ready_datasets"`
		// SIGTERM's drain before the shutdown, and how often new imports are looked for.
		DrainDelay     time.Duration `mapstructure:"drain_delay"`
		ReloadInterval time.Duration `mapstructure:"reload_interval"`
	} `mapstructure:"server"`
	Limiter struct {
		Window          time.Duration `mapstructure:"window"`
		Max             int           `mapstructure:"max"`
		TrustedProxies  []string      `mapstructure:"trusted_proxies"`
		TrustAllProxies bool          `mapstructure:"trust_all_proxies"`
		IPv6Prefix      int           `mapstructure:"ipv6_prefix"`
		MaxClients      int           `mapstructure:"max_clients"`
		RedisURL        string        `mapstructure:"redis_url"`
		FailClosed      bool          `mapstructure:"fail_closed"`
	} `mapstructure:"limiter"`
	Mongo struct {
		URI            string        `mapstructure:"uri"`
		DB             string        `mapstructure:"db"`
		PoolSize       int           `mapstructure:"pool_size"`
		ConnectTimeout time.Duration `mapstructure:"connect_timeout"`
		QueryTimeout   time.Duration `mapstructure:"query_timeout"`
		BatchSize      int           `mapstructure:"batch_size"`
	} `mapstructure:"mongo"`
	Import importConfig `mapstructure:"import"`
	// The timeouts of import's download (see download.go).
	Download struct {
		ConnectTimeout time.Duration `mapstructure:"connect_timeout"`
		TLSTimeout     time.Duration `mapstructure:"tls_timeout"`
		HeaderTimeout  time.Duration `mapstructure:"header_timeout"`
		IdleTimeout    time.Duration `mapstructure:"idle_timeout"`
	} `mapstructure:"download"`
}

// setting ties a config key to the flag that overrides it. Its environment
// variable is CITYFINDER_ plus the flag name in upper case with '_' for '-'.
type setting struct {
	key, flag string
	def       any
	usage     string
}

var (
	settingConfig   = setting{"", "config", "", "YAML config file (see configs/cityfinder.yaml)"}
	settingDataDir  = setting{"data_dir", "data-dir", "./data", "directory of the embedded store"}
	settingLogLevel = setting{"log.level", "log-level", "info", "log level: debug, info, warn or error"}
	settingDataset  = setting{"dataset", "dataset", string(search.Small), "dataset: small or large"}
	settingAddr     = setting{"server.addr", "addr", "127.0.0.1:8080", "address to listen on"}
	settingWindow   = setting{"limiter.window", "window", 3 * time.Second, "rate limit window per client"}
	settingMax      = setting{"limiter.max", "max", 5, "searches allowed per client in one window"}
	// The rate limiter's clients and stores (see pkg/limiter).
	settingTrustedProxies = setting{"limiter.trusted_proxies", "trusted-proxies", []string{}, "CIDRs of reverse proxies whose X-Forwarded-For names the client"}
	settingTrustAll       = setting{"limiter.trust_all_proxies", "trust-all-proxies", false, "allow --trusted-proxies to hold a network of every address (0.0.0.0/0, ::/0), when no client can reach serve but through the proxies"}
	settingIPv6Prefix     = setting{"limiter.ipv6_prefix", "ipv6-prefix", limiter.DefaultIPv6Prefix, "IPv6 clients are grouped by this prefix length"}
	settingMaxClients     = setting{"limiter.max_clients", "max-clients", 0, "most clients the in-process limiter tracks; new ones get 429 beyond it (0: no cap)"}
	settingRedisURL       = setting{"limiter.redis_url", "redis-url", "", "Redis that replicas share rate limits in (default: in process): " +
		"redis://[user:password@]host:port/db, redis+cluster://host:port,host:port… for Redis Cluster, " +
		"redis+sentinel://host:port,host:port…/master/db for Sentinel, rediss… for TLS; percent-encode the password"}
	settingFailClosed = setting{"limiter.fail_closed", "limiter-fail-closed", false, "answer 503 while the rate limit store is unreachable, instead of serving unlimited"}
)

// The HTTP server's limits and operational headers (see pkg/server).
var (
	settingReadHeaderTimeout = setting{"server.read_header_timeout", "read-header-timeout", server.DefaultLimits().ReadHeaderTimeout, "longest time to read a request's headers"}
	settingReadTimeout       = setting{"server.read_timeout", "read-timeout", server.DefaultLimits().ReadTimeout, "longest time to read a whole request"}
	settingWriteTimeout      = setting{"server.write_timeout", "write-timeout", server.DefaultLimits().WriteTimeout, "longest time from a request's headers to the end of its answer"}
	settingIdleTimeout       = setting{"server.idle_timeout", "idle-timeout", server.DefaultLimits().IdleTimeout, "longest time a keep-alive connection waits for its next request"}
	settingMaxHeaderBytes    = setting{"server.max_header_bytes", "max-header-bytes", server.DefaultLimits().MaxHeaderBytes, "largest request line and headers, in bytes; larger get 431"}
	settingShutdownTimeout   = setting{"server.shutdown_timeout", "shutdown-timeout", server.DefaultShutdownTimeout, "longest wait for requests in flight on SIGINT/SIGTERM"}
	settingCORSOrigin        = setting{"server.cors_origin", "cors-origin", []string{"*"}, `origins whose pages may read /search ("*": any; empty: none)`}
	settingCacheMaxAge       = setting{"server.cache_max_age", "cache-max-age", time.Minute, "how long browsers and caches may keep a /search answer (0: no-store)"}
	settingReadyDatasets     = setting{"server.ready_datasets", "ready-datasets", []string{string(search.Small)}, "datasets /readyz requires (the others only degrade it)"}
)

// The MongoDB store (see pkg/search/mongo): with --mongo-uri, import, query
// and serve use it instead of the embedded store in --data-dir.
var (
	settingMongoURI            = setting{"mongo.uri", "mongo-uri", "", "mongodb://… or mongodb+srv://… URI of a MongoDB to keep the datasets in, instead of --data-dir"}
	settingMongoDB             = setting{"mongo.db", "mongo-db", mongo.DefaultDatabase, "MongoDB database of the datasets"}
	settingMongoPoolSize       = setting{"mongo.pool_size", "mongo-pool-size", mongo.DefaultMaxPoolSize, "most connections to each MongoDB server"}
	settingMongoConnectTimeout = setting{"mongo.connect_timeout", "mongo-connect-timeout", mongo.DefaultConnectTimeout, "longest wait to connect to MongoDB or find a server to use"}
	settingMongoQueryTimeout   = setting{"mongo.query_timeout", "mongo-query-timeout", mongo.DefaultQueryTimeout, "longest time one search may take in MongoDB"}
	settingMongoBatchSize      = setting{"mongo.batch_size", "mongo-batch-size", mongo.DefaultBatchSize, "cities per insert when importing into MongoDB"}
	// mongoSettings are import's MongoDB flags (its reads of the dataset
	// are queries too).
	mongoSettings = []setting{settingMongoURI, settingMongoDB, settingMongoPoolSize, settingMongoConnectTimeout, settingMongoQueryTimeout, settingMongoBatchSize}
	// mongoSearchSettings are query's and serve's: they never insert.
	mongoSearchSettings = []setting{settingMongoURI, settingMongoDB, settingMongoPoolSize, settingMongoConnectTimeout, settingMongoQueryTimeout}
)

// validateMongo checks the MongoDB settings. A URI is never quoted, not
// even in part: it may hold a password.
func validateMongo(c *config) []error {
	m := c.Mongo
	var errs []error
	if m.URI != "" {
		if err := mongo.CheckURI(m.URI); err != nil {
			errs = append(errs, fmt.Errorf("invalid --mongo-uri: %w", err))
		}
	}
	if m.DB == "" {
		errs = append(errs, errors.New("invalid --mongo-db: empty"))
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{settingMongoPoolSize.flag, m.PoolSize}, {settingMongoBatchSize.flag, m.BatchSize}} {
		if n.v < 1 {
			errs = append(errs, fmt.Errorf("invalid --%s %d: must be at least 1", n.flag, n.v))
		}
	}
	for _, t := range []struct {
		flag string
		d    time.Duration
	}{{settingMongoConnectTimeout.flag, m.ConnectTimeout}, {settingMongoQueryTimeout.flag, m.QueryTimeout}} {
		if t.d <= 0 {
			errs = append(errs, fmt.Errorf("invalid --%s %s: must be positive", t.flag, t.d))
		}
	}
	return errs
}

// allSettings are the settings with a config key, for defaults and env.
var allSettings = []setting{settingDataDir, settingLogLevel, settingDataset, settingAddr, settingWindow, settingMax,
	settingTrustedProxies, settingTrustAll, settingIPv6Prefix, settingMaxClients, settingRedisURL, settingFailClosed,
	settingReadHeaderTimeout, settingReadTimeout, settingWriteTimeout, settingIdleTimeout, settingMaxHeaderBytes,
	settingShutdownTimeout, settingCORSOrigin, settingCacheMaxAge, settingReadyDatasets,
	settingMongoURI, settingMongoDB, settingMongoPoolSize, settingMongoConnectTimeout, settingMongoQueryTimeout, settingMongoBatchSize,
	settingDrainDelay, settingReloadInterval,
	settingDownloadConnectTimeout, settingDownloadTLSTimeout, settingDownloadHeaderTimeout, settingDownloadIdleTimeout}

func (s setting) env() string {
	return "CITYFINDER_" + strings.ToUpper(strings.ReplaceAll(s.flag, "-", "_"))
}

// addFlag defines s's flag on fs with s's default and usage.
func addFlag(fs *pflag.FlagSet, s setting) {
	usage := s.usage
	if s.key != "" || s.flag == "config" {
		usage += " (env " + s.env() + ")"
	}
	switch d := s.def.(type) {
	case string:
		fs.String(s.flag, d, usage)
	case int:
		fs.Int(s.flag, d, usage)
	case time.Duration:
		fs.Duration(s.flag, d, usage)
	case bool:
		fs.Bool(s.flag, d, usage)
	case []string:
		fs.StringSlice(s.flag, d, usage)
	default:
		panic(fmt.Sprintf("setting %s: unsupported default %T", s.flag, d))
	}
}

// loadConfig builds the run's configuration from a fresh viper instance:
// flags that were set > CITYFINDER_* environment > config file > defaults.
func loadConfig(flags *pflag.FlagSet) (*config, error) {
	v := viper.New()
	for _, s := range slices.Concat(allSettings, importSettings) {
		v.SetDefault(s.key, s.def)
		if err := v.BindEnv(s.key, s.env()); err != nil {
			return nil, err
		}
		if f := flags.Lookup(s.flag); f != nil {
			if err := v.BindPFlag(s.key, f); err != nil {
				return nil, err
			}
		}
	}
	path, _ := flags.GetString(settingConfig.flag)
	if path == "" {
		path = os.Getenv(settingConfig.env())
	}
	if path != "" {
		v.SetConfigFile(path)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("read config file %s: %w", path, err)
		}
	}
	var cfg config
	err := v.Unmarshal(&cfg, func(dc *mapstructure.DecoderConfig) {
		dc.ErrorUnused = true // a misspelt key in the file is an error, not ignored
	})
	o := origins{flags: flags, v: v, file: path}
	if err != nil {
		return nil, o.decodeError(err)
	}
	if err := cfg.validate(); err != nil {
		return nil, o.rename(err)
	}
	return &cfg, nil
}

// origins tells where each setting's value came from, so that a message
// names what the user wrote: the flag, the environment variable or the key
// in the config file.
type origins struct {
	flags *pflag.FlagSet
	v     *viper.Viper
	file  string
}

// name is s as the user set it: "--max", "CITYFINDER_MAX" or
// "limiter.max (in cityfinder.yaml)"; a default goes by its flag.
func (o origins) name(s setting) string {
	if f := o.flags.Lookup(s.flag); f != nil && f.Changed {
		return "--" + s.flag
	}
	if os.Getenv(s.env()) != "" { // viper ignores empty variables
		return s.env()
	}
	if o.file != "" && o.v.InConfig(s.key) {
		return fmt.Sprintf("%s (in %s)", s.key, o.file)
	}
	return "--" + s.flag
}

// value is s's value as the user wrote it, for a message.
func (o origins) value(s setting) string {
	if f := o.flags.Lookup(s.flag); f != nil && f.Changed {
		return f.Value.String()
	}
	if e := os.Getenv(s.env()); e != "" {
		return e
	}
	return fmt.Sprint(o.v.Get(s.key))
}

// decodeError turns the decoder's errors, which name config keys and Go
// parsers ("'limiter.max' cannot parse value as 'int'"), into one line per
// value that names its variable or key and what it accepts.
func (o origins) decodeError(err error) error {
	var errs []error
	for _, de := range decodeErrors(err) {
		s, ok := settingByKey(de.Name())
		if keys, unused := strings.CutPrefix(de.Unwrap().Error(), "has invalid keys: "); unused && o.file != "" {
			for _, k := range strings.Split(keys, ", ") {
				if de.Name() != "" {
					k = de.Name() + "." + k
				}
				errs = append(errs, fmt.Errorf("config file %s: unknown key %s (configs/cityfinder.yaml lists every key)", o.file, k))
			}
			continue
		}
		if !ok {
			errs = append(errs, fmt.Errorf("config: %w", de))
			continue
		}
		errs = append(errs, &badValueError{where: o.name(s), value: o.value(s), form: acceptedForm(s.flag, s.valueType())})
	}
	if len(errs) == 0 {
		return fmt.Errorf("config: %w", err)
	}
	return errors.Join(errs...)
}

// decodeErrors are the innermost named errors in the tree of err.
func decodeErrors(err error) []*mapstructure.DecodeError {
	var found []*mapstructure.DecodeError
	switch e := err.(type) {
	case *mapstructure.DecodeError:
		if inner := decodeErrors(e.Unwrap()); len(inner) > 0 {
			return inner
		}
		return []*mapstructure.DecodeError{e}
	case interface{ Unwrap() []error }:
		for _, u := range e.Unwrap() {
			found = append(found, decodeErrors(u)...)
		}
	case interface{ Unwrap() error }:
		found = decodeErrors(e.Unwrap())
	}
	return found
}

// rename makes each validation error, which names its setting by its flag
// ("invalid --max 0: …"), name it as the user set it ("invalid
// CITYFINDER_MAX 0: …").
func (o origins) rename(err error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	var errs []error
	for _, e := range joined.Unwrap() {
		msg := e.Error()
		for _, s := range allSettings {
			flag := "--" + s.flag
			name := o.name(s)
			if name == flag {
				continue
			}
			for _, start := range []string{"invalid " + flag + " ", "invalid " + flag + ":", flag + ":"} {
				if strings.HasPrefix(msg, start) {
					msg = strings.Replace(msg, flag, name, 1)
					e = &renamedError{msg: msg, err: e}
					break
				}
			}
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// renamedError is err with another message.
type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// settingByKey finds the setting of a config key.
func settingByKey(key string) (setting, bool) {
	for _, s := range allSettings {
		if s.key == key {
			return s, true
		}
	}
	return setting{}, false
}

// valueType names the type of s's value as pflag does.
func (s setting) valueType() string {
	switch s.def.(type) {
	case int:
		return "int"
	case time.Duration:
		return "duration"
	case bool:
		return "bool"
	case []string:
		return "stringSlice"
	}
	return "string"
}

func (c *config) validate() error {
	var errs []error
	if _, err := search.ParseDataset(c.Dataset); err != nil {
		errs = append(errs, fmt.Errorf("invalid --dataset: %w", err))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("invalid --data-dir: empty"))
	}
	if c.Limiter.Window <= 0 {
		errs = append(errs, fmt.Errorf("invalid --window %s: must be positive", c.Limiter.Window))
	}
	if c.Limiter.Max <= 0 {
		errs = append(errs, fmt.Errorf("invalid --max %d: must be at least 1", c.Limiter.Max))
	}
	errs = append(errs, validateLimiterStores(c)...)
	if _, err := limiter.NewClientIP(nil, c.Limiter.IPv6Prefix); err != nil || c.Limiter.IPv6Prefix == 0 {
		errs = append(errs, fmt.Errorf("invalid --ipv6-prefix %d: must be from 1 to 128", c.Limiter.IPv6Prefix))
	}
	if c.Limiter.MaxClients < 0 {
		errs = append(errs, fmt.Errorf("invalid --max-clients %d: must be 0 (no cap) or more", c.Limiter.MaxClients))
	}
	if _, err := parseLevel(c.Log.Level); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, validateServer(c)...)
	errs = append(errs, validateMongo(c)...)
	errs = append(errs, validateLifecycle(c)...)
	errs = append(errs, validateDownload(c)...)
	errs = append(errs, validateImport(c)...)
	return errors.Join(errs...)
}

// validateLimiterStores checks where the limiter's clients and windows come
// from: the trusted proxies, which may not hold every address unless
// --trust-all-proxies says so, and the Redis URL, which is never quoted.
func validateLimiterStores(c *config) []error {
	var errs []error
	trusted, err := limiter.ParsePrefixes(c.Limiter.TrustedProxies)
	if err != nil {
		errs = append(errs, fmt.Errorf("invalid --trusted-proxies: %w", err))
	}
	for _, p := range trusted {
		if limiter.IsCatchAll(p) && !c.Limiter.TrustAllProxies {
			errs = append(errs, fmt.Errorf("invalid --trusted-proxies: %s holds every address, so any client could choose "+
				"its own rate limit key with X-Forwarded-For; list your proxies' networks, or set --%s if no client "+
				"can reach serve but through them", p, settingTrustAll.flag))
		}
	}
	if u := c.Limiter.RedisURL; u != "" {
		if _, err := redis.ParseURL(u); err != nil {
			errs = append(errs, fmt.Errorf("--redis-url: %w", err))
		}
	}
	return errs
}

// validateServer checks the server's settings: a zero timeout would mean
// none at all to net/http.
func validateServer(c *config) []error {
	var errs []error
	s := c.Server
	for _, t := range []struct {
		flag string
		d    time.Duration
	}{
		{settingReadHeaderTimeout.flag, s.ReadHeaderTimeout}, {settingReadTimeout.flag, s.ReadTimeout},
		{settingWriteTimeout.flag, s.WriteTimeout}, {settingIdleTimeout.flag, s.IdleTimeout},
		{settingShutdownTimeout.flag, s.ShutdownTimeout},
	} {
		if t.d <= 0 {
			errs = append(errs, fmt.Errorf("invalid --%s %s: must be positive", t.flag, t.d))
		}
	}
	if s.MaxHeaderBytes < 1024 {
		errs = append(errs, fmt.Errorf("invalid --max-header-bytes %d: must be at least 1024", s.MaxHeaderBytes))
	}
	if s.CacheMaxAge < 0 {
		errs = append(errs, fmt.Errorf("invalid --cache-max-age %s: must be 0 or more", s.CacheMaxAge))
	}
	for _, o := range s.CORSOrigin {
		if !validOrigin(o) {
			errs = append(errs, fmt.Errorf("invalid --cors-origin %q: use * or origins such as https://example.com", o))
		}
	}
	for _, d := range s.ReadyDatasets {
		if _, err := search.ParseDataset(d); err != nil {
			errs = append(errs, fmt.Errorf("invalid --ready-datasets: %w", err))
		}
	}
	return errs
}

// validOrigin reports whether o is "*" or an origin as browsers send it:
// http or https, a host, and nothing after it.
func validOrigin(o string) bool {
	if o == "*" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil &&
		(u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery
}
