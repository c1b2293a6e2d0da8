package main

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
)

// config is every setting of a run, decoded from flags, CITYFINDER_*
// environment variables, the config file and defaults, in that order.
type config struct {
	settingValues
	// nameOf names a setting the way this run was given it, for the
	// messages of errors found after loading (a file that cannot be read).
	nameOf func(*setting) string
}

// settingValues holds a field for each key of the settings table.
type settingValues struct {
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
		// The megabytes of the answer cache (see server.WithAnswerCache).
		AnswerCacheMB int `mapstructure:"answer_cache_mb"`
		// SIGTERM's drain before the shutdown, and how often new imports are looked for.
		DrainDelay     time.Duration `mapstructure:"drain_delay"`
		ReloadInterval time.Duration `mapstructure:"reload_interval"`
		// The circuit breakers of Redis and MongoDB (see breakers.go).
		BreakerFailures int           `mapstructure:"breaker_failures"`
		BreakerCooldown time.Duration `mapstructure:"breaker_cooldown"`
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
		LimitBy         string        `mapstructure:"limit_by"`
		SessionGap      time.Duration `mapstructure:"session_gap"`
		SessionRequests int           `mapstructure:"session_requests"`
		SessionLength   int           `mapstructure:"session_length"`
	} `mapstructure:"limiter"`
	Mongo struct {
		URI            string        `mapstructure:"uri"`
		DB             string        `mapstructure:"db"`
		PoolSize       int           `mapstructure:"pool_size"`
		ConnectTimeout time.Duration `mapstructure:"connect_timeout"`
		QueryTimeout   time.Duration `mapstructure:"query_timeout"`
		BatchSize      int           `mapstructure:"batch_size"`
		Mode           string        `mapstructure:"mode"`
		PollInterval   time.Duration `mapstructure:"poll_interval"`
	} `mapstructure:"mongo"`
	Import importConfig `mapstructure:"import"`
	// The timeouts and size cap of import's download (see download.go).
	Download struct {
		ConnectTimeout time.Duration `mapstructure:"connect_timeout"`
		TLSTimeout     time.Duration `mapstructure:"tls_timeout"`
		HeaderTimeout  time.Duration `mapstructure:"header_timeout"`
		IdleTimeout    time.Duration `mapstructure:"idle_timeout"`
		Timeout        time.Duration `mapstructure:"timeout"`
		MaxBytes       int           `mapstructure:"max_bytes"`
	} `mapstructure:"download"`
	Healthcheck struct {
		Timeout time.Duration `mapstructure:"timeout"`
	} `mapstructure:"healthcheck"`
}

// loadConfig builds the run's configuration: for each setting, the flag
// if it was set, else its CITYFINDER_* variable if not empty, else its key
// in the config file, else its default. A fresh viper instance reads the
// file; each value is parsed here, by its setting's kind, so that every
// message names the setting the way the user gave it and says what it
// accepts, never what a Go parser said.
func loadConfig(flags *pflag.FlagSet) (*config, error) {
	file, err := readConfigFile(flags)
	if err != nil {
		return nil, err
	}
	l := &loader{flags: flags, file: file, origins: make(map[*setting]origin)}
	errs := file.unknownKeys()
	values := make(map[string]any) // of every key

	for _, s := range settings {
		if s.key == "" {
			continue
		}
		v, err := l.value(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		putSetting(values, s.key, v)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	cfg, err := decodeSettings(values)
	if err != nil {
		return nil, err
	}
	if errs := cfg.validate(); len(errs) > 0 {
		return nil, l.name(errs)
	}
	cfg.nameOf = l.nameOf
	return cfg, nil
}

// putSetting puts v into values at key, nested as in the config file.
func putSetting(values map[string]any, key string, v any) {
	section, name, nested := strings.Cut(key, ".")
	if !nested {
		values[key] = v
		return
	}
	m, _ := values[section].(map[string]any)
	if m == nil {
		m = make(map[string]any)
		values[section] = m
	}
	m[name] = v
}

// decodeSettings makes a config of values, which hold a value of its
// field's type for every key of the table: a failure is a table that does
// not match config.
func decodeSettings(values map[string]any) (*config, error) {
	var cfg config
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: &cfg.settingValues, ErrorUnused: true, ErrorUnset: true})
	if err == nil {
		err = dec.Decode(values)
	}
	if err != nil {
		return nil, fmt.Errorf("settings table: %w", err)
	}
	return &cfg, nil
}

// origin is where a setting's value came from.
type origin int

const (
	fromDefault origin = iota
	fromFlag
	fromEnv
	fromFile
)

// loader finds each setting's value in the layers of one run.
type loader struct {
	flags   *pflag.FlagSet
	file    *configFile // nil without one
	origins map[*setting]origin
}

// value is s's value in the highest layer that sets it, of s's kind.
func (l *loader) value(s *setting) (any, error) {
	if f := l.flags.Lookup(s.flag); f != nil && f.Changed {
		if fv, ok := settingFlag(f); ok {
			l.origins[s] = fromFlag
			return fv.v, nil // parsed by Set
		}
	}
	if text := os.Getenv(s.env); text != "" { // an empty variable is an unset one
		l.origins[s] = fromEnv
		return l.parse(s, text)
	}
	if l.file != nil && l.file.v.InConfig(s.key) {
		l.origins[s] = fromFile
		return l.fromYAML(s, l.file.v.Get(s.key))
	}
	return s.def, nil
}

// parse reads text as a value of s.
func (l *loader) parse(s *setting, text string) (any, error) {
	v, ok := s.kind.parse(text)
	if !ok {
		return nil, badText(s, l.nameOf(s), text)
	}
	return v, nil
}

// fromYAML reads a value that the YAML file gives s: a scalar as text, a
// list for a list only. A list or a map is never shown: a secret setting
// given as one would show its secret.
func (l *loader) fromYAML(s *setting, raw any) (any, error) {
	shape := ""
	switch raw := raw.(type) {
	case map[string]any:
		shape = "a map"
	case []any:
		if s.kind != listKind {
			shape = "a list"
			break
		}
		items := make([]string, 0, len(raw))
		for _, item := range raw {
			switch item.(type) {
			case map[string]any, []any:
				return nil, &settingError{setting: s, name: l.nameOf(s), reason: "use " + s.acceptedForm() + ", not a list of lists or maps"}
			}
			items = append(items, fmt.Sprint(item))
		}
		return items, nil
	case string:
		return l.parse(s, raw)
	}
	if shape != "" {
		return nil, &settingError{setting: s, name: l.nameOf(s), reason: "use " + s.acceptedForm() + ", not " + shape}
	}
	return l.parse(s, fmt.Sprint(raw)) // a YAML number or bool, as written
}

// nameOf is s as the user gave it: "--max", "CITYFINDER_MAX" or
// "limiter.max in cityfinder.yaml". A default goes by its flag.
func (l *loader) nameOf(s *setting) string {
	switch l.origins[s] {
	case fromEnv:
		return s.env
	case fromFile:
		return s.key + " in " + l.file.path
	}
	return "--" + s.flag
}

// name makes each settingError among errs name its setting as the user
// gave it: validation knows the setting, not where its value came from.
func (l *loader) name(errs []error) error {
	for _, err := range errs {
		var se *settingError
		if errors.As(err, &se) && se.name == "" {
			se.name = l.nameOf(se.setting)
		}
	}
	return errors.Join(errs...)
}

// configFile is the --config file of a run.
type configFile struct {
	path string // as given
	v    *viper.Viper
}

// readConfigFile reads the file that --config or CITYFINDER_CONFIG names,
// if any.
func readConfigFile(flags *pflag.FlagSet) (*configFile, error) {
	name, path := "--"+settingConfig.flag, ""
	if f := flags.Lookup(settingConfig.flag); f != nil && f.Changed {
		path = f.Value.String()
	} else if path = os.Getenv(settingConfig.env); path != "" {
		name = settingConfig.env
	}
	if path == "" {
		return nil, nil
	}
	v := viper.New()
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	err := v.ReadInConfig()
	var syntax viper.ConfigParseError
	switch {
	case errors.As(err, &syntax):
		// The YAML parser's words say where: "yaml: line 2: …".
		return nil, fmt.Errorf("config file %s (%s) is not valid YAML: %w", path, name, syntax.Unwrap())
	case err != nil:
		return nil, fmt.Errorf("read config file %s (%s): %w", path, name, err)
	}
	return &configFile{path: path, v: v}, nil
}

// unknownKeys reports each key of the file that is no setting's: a
// misspelt key is an error, not ignored.
func (f *configFile) unknownKeys() []error {
	if f == nil {
		return nil
	}
	var errs []error
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		keys := slices.Sorted(maps.Keys(m))
		for _, k := range keys {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			if _, ok := settingByKey(key); ok {
				continue
			}
			sub, isMap := m[k].(map[string]any)
			switch {
			case isMap && isSection(key):
				walk(key, sub)
			case m[k] == nil && isSection(key): // every key of it commented out
			case isSection(key):
				errs = append(errs, fmt.Errorf("config file %s: %s holds keys such as %s, not a value", f.path, key, firstKeyIn(key)))
			default:
				errs = append(errs, fmt.Errorf("config file %s: unknown key %s (configs/cityfinder.yaml lists every key)", f.path, key))
			}
		}
	}
	walk("", f.v.AllSettings())
	return errs
}

// settingByKey finds the setting of a config key.
func settingByKey(key string) (*setting, bool) {
	for _, s := range settings {
		if s.key == key && key != "" {
			return s, true
		}
	}
	return nil, false
}

// isSection reports whether key is a section of the file, such as limiter.
func isSection(key string) bool { return firstKeyIn(key) != "" }

// firstKeyIn is the first setting's key in section, or "".
func firstKeyIn(section string) string {
	for _, s := range settings {
		if strings.HasPrefix(s.key, section+".") {
			return s.key
		}
	}
	return ""
}

// settingError is a value of a setting that the run cannot use. Its
// message names the setting the way the user gave it, and shows the value
// only if the setting holds no secret.
type settingError struct {
	setting *setting
	name    string // "--max", "CITYFINDER_MAX", "limiter.max in c.yaml"; "" until the loader sets it
	shown   string // the value as the message shows it, or ""
	reason  string // what is wrong, or what to use instead; "" when cause says it all
	cause   error
}

func (e *settingError) Error() string {
	name := e.name
	if name == "" {
		name = "--" + e.setting.flag
	}
	if e.reason == "" {
		return name + ": " + e.cause.Error() // the cause starts with "invalid …"
	}
	msg := "invalid " + name
	if e.shown != "" {
		msg += " " + e.shown
	}
	return msg + ": " + e.reason
}

func (e *settingError) Unwrap() error { return e.cause }

// badText is text given as name that is no value of s's kind.
func badText(s *setting, name, text string) error {
	e := &settingError{setting: s, name: name, reason: "use " + s.acceptedForm()}
	if !s.secret {
		e.shown = strconv.Quote(text)
	}
	return e
}

// invalidValue is a value v of s out of what s accepts, for reason.
func invalidValue(s *setting, v any, reason string) error {
	e := &settingError{setting: s, reason: reason}
	if !s.secret {
		if text, ok := v.(string); ok {
			e.shown = strconv.Quote(text)
		} else {
			e.shown = fmt.Sprint(v)
		}
	}
	return e
}

// invalidBecause is a value of s that err, which quotes no secret, refuses.
func invalidBecause(s *setting, err error) error {
	return &settingError{setting: s, reason: err.Error(), cause: err}
}

// refusedBy is a value of s that err, which says "invalid …" itself and
// quotes no secret, refuses.
func refusedBy(s *setting, err error) error {
	return &settingError{setting: s, cause: err}
}

func (c *config) validate() []error {
	var errs []error
	if _, err := search.ParseDataset(c.Dataset); err != nil {
		errs = append(errs, invalidBecause(settingDataset, err))
	}
	if c.DataDir == "" {
		errs = append(errs, invalidBecause(settingDataDir, errors.New("empty")))
	}
	if _, _, err := net.SplitHostPort(c.Server.Addr); err != nil {
		errs = append(errs, invalidValue(settingAddr, c.Server.Addr, "use "+settingAddr.acceptedForm()))
	}
	if c.Limiter.Window <= 0 {
		errs = append(errs, invalidValue(settingWindow, c.Limiter.Window, "must be positive"))
	}
	if c.Limiter.Max <= 0 {
		errs = append(errs, invalidValue(settingMax, c.Limiter.Max, "must be at least 1"))
	}
	errs = append(errs, validateLimiterStores(c)...)
	errs = append(errs, validateSessions(c)...)
	if _, err := limiter.NewClientIP(nil, c.Limiter.IPv6Prefix); err != nil || c.Limiter.IPv6Prefix == 0 {
		errs = append(errs, invalidValue(settingIPv6Prefix, c.Limiter.IPv6Prefix, "must be from 1 to 128"))
	}
	if c.Limiter.MaxClients < 0 {
		errs = append(errs, invalidValue(settingMaxClients, c.Limiter.MaxClients, "must be 0 (no cap) or more"))
	}
	if _, err := parseLevel(c.Log.Level); err != nil {
		errs = append(errs, invalidValue(settingLogLevel, c.Log.Level, "use "+settingLogLevel.acceptedForm()))
	}
	errs = append(errs, validateServer(c)...)
	errs = append(errs, validateMongo(c)...)
	errs = append(errs, validateLifecycle(c)...)
	errs = append(errs, durationErrors(false, settingDuration{settingHealthcheckTimeout, c.Healthcheck.Timeout})...)
	errs = append(errs, validateDownload(c)...)
	errs = append(errs, validateImport(c)...)
	return errs
}

// validateMongo checks the MongoDB settings. A URI is never quoted, not
// even in part: it may hold a password.
func validateMongo(c *config) []error {
	m := c.Mongo
	var errs []error
	if m.URI != "" {
		if err := mongo.CheckURI(m.URI); err != nil {
			errs = append(errs, invalidBecause(settingMongoURI, err))
		}
	}
	if m.DB == "" {
		errs = append(errs, invalidBecause(settingMongoDB, errors.New("empty")))
	}
	for _, n := range []struct {
		s *setting
		v int
	}{{settingMongoPoolSize, m.PoolSize}, {settingMongoBatchSize, m.BatchSize}} {
		if n.v < 1 {
			errs = append(errs, invalidValue(n.s, n.v, "must be at least 1"))
		}
	}
	if m.Mode != mongoModeSnapshot && m.Mode != mongoModeQuery {
		errs = append(errs, invalidValue(settingMongoMode, m.Mode, "use "+settingMongoMode.acceptedForm()))
	}
	return append(errs, durationErrors(false, settingDuration{settingMongoConnectTimeout, m.ConnectTimeout},
		settingDuration{settingMongoQueryTimeout, m.QueryTimeout}, settingDuration{settingMongoPollInterval, m.PollInterval})...)
}

// validateLimiterStores checks where the limiter's clients and windows come
// from: the trusted proxies, which may not hold every address unless
// --trust-all-proxies says so, and the Redis URL, which is never quoted.
func validateLimiterStores(c *config) []error {
	var errs []error
	trusted, err := limiter.ParsePrefixes(c.Limiter.TrustedProxies)
	if err != nil {
		errs = append(errs, invalidBecause(settingTrustedProxies, err))
	}
	for _, p := range trusted {
		if limiter.IsCatchAll(p) && !c.Limiter.TrustAllProxies {
			errs = append(errs, invalidBecause(settingTrustedProxies, fmt.Errorf("%s holds every address, so any client could choose "+
				"its own rate limit key with X-Forwarded-For; list your proxies' networks, or set --%s if no client "+
				"can reach serve but through them", p, settingTrustAll.flag)))
		}
	}
	if u := c.Limiter.RedisURL; u != "" {
		if _, err := redis.ParseURL(u); err != nil {
			errs = append(errs, refusedBy(settingRedisURL, err))
		}
	}
	return errs
}

// validateServer checks the server's settings: a zero timeout would mean
// none at all to net/http.
func validateServer(c *config) []error {
	s := c.Server
	errs := durationErrors(false,
		settingDuration{settingReadHeaderTimeout, s.ReadHeaderTimeout}, settingDuration{settingReadTimeout, s.ReadTimeout},
		settingDuration{settingWriteTimeout, s.WriteTimeout}, settingDuration{settingIdleTimeout, s.IdleTimeout},
		settingDuration{settingShutdownTimeout, s.ShutdownTimeout})
	if s.MaxHeaderBytes < 1024 {
		errs = append(errs, invalidValue(settingMaxHeaderBytes, s.MaxHeaderBytes, "must be at least 1024"))
	}
	errs = append(errs, durationErrors(true, settingDuration{settingCacheMaxAge, s.CacheMaxAge})...)
	if s.AnswerCacheMB < 0 || s.AnswerCacheMB > maxAnswerCacheMB {
		errs = append(errs, invalidValue(settingAnswerCache, s.AnswerCacheMB, fmt.Sprintf("must be from 0 to %d", maxAnswerCacheMB)))
	}
	for _, o := range s.CORSOrigin {
		if !validOrigin(o) {
			errs = append(errs, invalidValue(settingCORSOrigin, o, "use * or origins such as https://example.com"))
		}
	}
	for _, d := range s.ReadyDatasets {
		if _, err := search.ParseDataset(d); err != nil {
			errs = append(errs, invalidBecause(settingReadyDatasets, err))
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
