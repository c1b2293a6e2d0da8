package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/search"
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
	} `mapstructure:"server"`
	Limiter struct {
		Window         time.Duration `mapstructure:"window"`
		Max            int           `mapstructure:"max"`
		TrustedProxies []string      `mapstructure:"trusted_proxies"`
		IPv6Prefix     int           `mapstructure:"ipv6_prefix"`
		MaxClients     int           `mapstructure:"max_clients"`
		RedisURL       string        `mapstructure:"redis_url"`
		FailClosed     bool          `mapstructure:"fail_closed"`
	} `mapstructure:"limiter"`
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
	settingIPv6Prefix     = setting{"limiter.ipv6_prefix", "ipv6-prefix", limiter.DefaultIPv6Prefix, "IPv6 clients are grouped by this prefix length"}
	settingMaxClients     = setting{"limiter.max_clients", "max-clients", 0, "most clients the in-process limiter tracks; new ones get 429 beyond it (0: no cap)"}
	settingRedisURL       = setting{"limiter.redis_url", "redis-url", "", "redis://host:port/db to share rate limits between replicas (default: in process)"}
	settingFailClosed     = setting{"limiter.fail_closed", "limiter-fail-closed", false, "answer 503 while the rate limit store is unreachable, instead of serving unlimited"}
)

// allSettings are the settings with a config key, for defaults and env.
var allSettings = []setting{settingDataDir, settingLogLevel, settingDataset, settingAddr, settingWindow, settingMax,
	settingTrustedProxies, settingIPv6Prefix, settingMaxClients, settingRedisURL, settingFailClosed}

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
	for _, s := range allSettings {
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
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
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
	if _, err := limiter.ParsePrefixes(c.Limiter.TrustedProxies); err != nil {
		errs = append(errs, fmt.Errorf("invalid --trusted-proxies: %w", err))
	}
	if _, err := limiter.NewClientIP(nil, c.Limiter.IPv6Prefix); err != nil || c.Limiter.IPv6Prefix == 0 {
		errs = append(errs, fmt.Errorf("invalid --ipv6-prefix %d: must be from 1 to 128", c.Limiter.IPv6Prefix))
	}
	if c.Limiter.MaxClients < 0 {
		errs = append(errs, fmt.Errorf("invalid --max-clients %d: must be 0 (no cap) or more", c.Limiter.MaxClients))
	}
	if _, err := parseLevel(c.Log.Level); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
