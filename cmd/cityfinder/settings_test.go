package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

var update = flag.Bool("update", false, "rewrite configs/cityfinder.yaml from the settings table")

var exampleConfigPath = filepath.Join("..", "..", "configs", "cityfinder.yaml")

// configs/cityfinder.yaml is the table written out: every key, with its
// doc and default, and nothing else.
func TestConfigFileIsTheTable(t *testing.T) {
	want := configFileText()
	if *update {
		if err := os.WriteFile(exampleConfigPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(exampleConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("configs/cityfinder.yaml is not the settings table: run go test ./cmd/cityfinder -run TestConfigFileIsTheTable -update")
	}
	// Read back as the loader reads it, each key holds its default.
	v := viper.New()
	v.SetConfigFile(exampleConfigPath)
	if err := v.ReadInConfig(); err != nil {
		t.Fatal(err)
	}
	l := &loader{flags: nil, file: &configFile{path: exampleConfigPath, v: v}, origins: make(map[*setting]origin)}
	var comments []string
	for line := range strings.Lines(string(got)) {
		if text, ok := strings.CutPrefix(strings.TrimSpace(line), "#"); ok {
			comments = append(comments, strings.Fields(text)...)
		}
	}
	commentText := strings.Join(comments, " ")
	keys := 0
	for _, s := range settings {
		if s.key == "" {
			continue
		}
		keys++
		if !v.InConfig(s.key) {
			t.Errorf("%s is missing", s.key)
			continue
		}
		got, err := l.fromYAML(s, v.Get(s.key))
		if err != nil || !reflect.DeepEqual(got, s.def) {
			t.Errorf("%s = %#v (%v), want its default %#v", s.key, got, err, s.def)
		}
		if !strings.Contains(commentText, s.doc) {
			t.Errorf("%s lacks its doc %q", s.key, s.doc)
		}
	}
	if n := len(v.AllKeys()); n != keys {
		t.Errorf("the file has %d keys, the table %d", n, keys)
	}
}

// Each field of config is one setting of the table, and each setting's
// names follow the one rule the docs give.
func TestSettingsTableMatchesConfig(t *testing.T) {
	defaults := make(map[string]any)
	seen := make(map[string]string)
	for _, s := range settings {
		for _, name := range []string{s.key, "--" + s.flag, s.env} {
			if other, dup := seen[name]; dup && name != "" {
				t.Errorf("%s names both %s and %s", name, other, s.flag)
			}
			seen[name] = s.flag
		}
		if want := "CITYFINDER_" + strings.ToUpper(strings.ReplaceAll(s.flag, "-", "_")); s.env != want {
			t.Errorf("--%s's variable is %s, want %s", s.flag, s.env, want)
		}
		if got, ok := s.kind.parse(s.kind.format(s.def)); !ok || (s.kind != listKind && !reflect.DeepEqual(got, s.def)) {
			t.Errorf("--%s's default %#v is no value of its kind", s.flag, s.def)
		}
		if s.doc == "" || s.commands == 0 {
			t.Errorf("--%s has no doc or no command", s.flag)
		}
		if s.key != "" {
			putSetting(defaults, s.key, s.def)
		}
	}
	if _, err := decodeSettings(defaults); err != nil {
		t.Errorf("the table and config differ: %v", err)
	}
}

// badSetting is a value that a setting refuses, and the form (if any) in
// which it cannot be given.
type badSetting struct {
	value  string
	notAs  string // "flag", "env" or "file"
	reason string // why it cannot be given so
}

// badSettings are, for each setting, values that it refuses: by their kind
// first, then by its own rules.
var badSettings = map[*setting][]badSetting{
	settingConfig:                 {{value: "/no/such/dir/cityfinder.yaml", notAs: "file", reason: "the file cannot name itself"}},
	settingDataDir:                {{value: "", notAs: "env", reason: "an empty variable is an unset one"}},
	settingDataset:                {{value: "huge"}},
	settingAllowShrink:            {{value: "maybe"}},
	settingSource:                 {{value: "ftp://example.com/cities500.zip"}, {value: "cities2000"}},
	settingLogLevel:               {{value: "loud"}},
	settingAddr:                   {{value: "nowhere"}},
	settingReadHeaderTimeout:      {{value: "soon"}, {value: "0s"}},
	settingReadTimeout:            {{value: "soon"}, {value: "-1s"}},
	settingWriteTimeout:           {{value: "5"}, {value: "0s"}},
	settingIdleTimeout:            {{value: "soon"}, {value: "0s"}},
	settingMaxHeaderBytes:         {{value: "64k"}, {value: "100"}},
	settingShutdownTimeout:        {{value: "soon"}, {value: "0s"}},
	settingCORSOrigin:             {{value: "a.example"}},
	settingCacheMaxAge:            {{value: "soon"}, {value: "-1s"}},
	settingAnswerCache:            {{value: "32MB"}, {value: "-1"}, {value: "4096"}},
	settingReadyDatasets:          {{value: "small,medium"}},
	settingDrainDelay:             {{value: "soon"}, {value: "-1s"}},
	settingReloadInterval:         {{value: "soon"}, {value: "-1s"}},
	settingBreakerFailures:        {{value: "many"}, {value: "0"}},
	settingBreakerCooldown:        {{value: "soon"}, {value: "0s"}},
	settingWindow:                 {{value: "soon"}, {value: "0s"}},
	settingMax:                    {{value: "many"}, {value: "0"}, {value: "0x10"}},
	settingTrustedProxies:         {{value: "10.0.0.0/33"}, {value: "0.0.0.0/0"}},
	settingTrustAll:               {{value: "maybe"}},
	settingIPv6Prefix:             {{value: "/64"}, {value: "129"}},
	settingMaxClients:             {{value: "1.5"}, {value: "-1"}},
	settingLimitBy:                {{value: "keystroke"}},
	settingSessionGap:             {{value: "0s"}, {value: "two"}},
	settingSessionRequests:        {{value: "0"}},
	settingSessionLength:          {{value: "-3"}},
	settingRedisURL:               {{value: "http://127.0.0.1:6379"}},
	settingFailClosed:             {{value: "maybe"}},
	settingMongoURI:               {{value: "http://127.0.0.1:27017"}},
	settingMongoDB:                {{value: "", notAs: "env", reason: "an empty variable is an unset one"}},
	settingMongoPoolSize:          {{value: "many"}, {value: "0"}},
	settingMongoConnectTimeout:    {{value: "soon"}, {value: "0s"}},
	settingMongoQueryTimeout:      {{value: "soon"}, {value: "0s"}},
	settingMongoBatchSize:         {{value: "many"}, {value: "0"}},
	settingMongoMode:              {{value: "cache"}},
	settingMongoPollInterval:      {{value: "soon"}, {value: "0s"}},
	settingDownloadConnectTimeout: {{value: "soon"}, {value: "0s"}},
	settingDownloadTLSTimeout:     {{value: "soon"}, {value: "0s"}},
	settingDownloadHeaderTimeout:  {{value: "soon"}, {value: "0s"}},
	settingDownloadIdleTimeout:    {{value: "soon"}, {value: "-1s"}},
	settingDownloadTimeout:        {{value: "an hour"}, {value: "-1h"}},
	settingDownloadMaxBytes:       {{value: "4GiB"}, {value: "0"}},
	settingMaxRows:                {{value: "lots"}, {value: "0"}},
	settingHealthcheckTimeout:     {{value: "soon"}, {value: "0s"}},
}

// anyText are the settings that accept every text, and why.
var anyText = map[*setting]string{
	settingGeoNames:       "a path, which the import opens",
	settingRegionNames:    "a path, which the import opens",
	settingAlternateNames: "a path, which the import opens",
	settingDownloadDir:    "a path, which the import creates when it downloads",
}

// goParserWords are what Go's parsers and the decoder say; no message
// repeats them.
var goParserWords = []string{"strconv", "invalid syntax", "cannot parse", "parsing", "mapstructure", "time: ", "unknown unit", "missing unit"}

// Every setting's bad value gets one line that names the setting as it was
// given, --flag, CITYFINDER_VAR or key in FILE, and says what it accepts in
// the CLI's words.
func TestEveryBadSettingNamesItsOrigin(t *testing.T) {
	for _, s := range settings {
		bads, ok := badSettings[s]
		if !ok {
			if _, free := anyText[s]; !free {
				t.Errorf("--%s has no bad value here: add one to badSettings, or say in anyText why it accepts every text", s.flag)
			}
			continue
		}
		for _, bad := range bads {
			for _, as := range []string{"flag", "env", "file"} {
				if as == bad.notAs {
					continue // bad.reason
				}
				t.Run(fmt.Sprintf("%s %q as %s", s.flag, bad.value, as), func(t *testing.T) {
					msg, name := giveSetting(t, s, bad.value, as)
					checkSettingMessage(t, s, msg, name, bad.value)
				})
			}
		}
	}
}

// giveSetting runs the first command that takes s with value given as a
// flag, a variable or in a config file, and returns the error's message
// and the name it should use for s.
func giveSetting(t *testing.T, s *setting, value, as string) (msg, name string) {
	t.Helper()
	var args []string
	switch as {
	case "flag":
		args, name = []string{"--" + s.flag + "=" + value}, "--"+s.flag
	case "env":
		t.Setenv(s.env, value)
		name = s.env
	case "file":
		section, key, nested := strings.Cut(s.key, ".")
		text := section + ": " + strconv.Quote(value) + "\n"
		if nested {
			text = section + ":\n  " + key + ": " + strconv.Quote(value) + "\n"
		}
		file := writeFile(t, "c.yaml", text)
		args, name = []string{"--config", file}, s.key+" in "+file
	}
	err := loadOnly(t, s.commands, args...)
	if err == nil {
		t.Fatalf("--%s %q as %s: accepted", s.flag, value, as)
	}
	return err.Error(), name
}

// checkSettingMessage fails unless msg is one line about s, named name, in
// the CLI's words, that shows no part of a secret value.
func checkSettingMessage(t *testing.T, s *setting, msg, name, value string) {
	t.Helper()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, name) {
		t.Errorf("message %q, want one line naming %s", msg, name)
	}
	for _, w := range goParserWords {
		if strings.Contains(msg, w) {
			t.Errorf("message %q says %q, a Go parser's words", msg, w)
		}
	}
	// The file's path holds the test's name, and so the value.
	if s.secret && value != "" && strings.Contains(strings.ReplaceAll(msg, name, ""), value) {
		t.Errorf("message %q shows the value of secret %s", msg, name)
	}
}

// loadOnly runs the first of commands with args through the real command
// tree, flags and configuration, but not the command itself, and returns
// the error in the user's words.
func loadOnly(t *testing.T, commands commandSet, args ...string) error {
	t.Helper()
	root := newRootCmd()
	for _, c := range root.Commands() {
		c.RunE = func(*cobra.Command, []string) error { return nil }
	}
	switch {
	case commands&cmdImport != 0:
		args = append([]string{"import"}, args...)
	case commands&cmdQuery != 0:
		args = append([]string{"query", "ist"}, args...)
	default:
		args = append([]string{"serve"}, args...)
	}
	root.SetArgs(args)
	root.SetOut(new(strings.Builder))
	root.SetErr(new(strings.Builder))
	return explain(root.ExecuteContext(t.Context()))
}

// secretParts make up the password of the secret values below; a message
// that shows one shows part of the password.
var secretParts = []string{"S3cr", "et@", "12345678"}

// No value of a secret-bearing setting shows in a message, whatever is
// wrong with it: a list (an easy slip beside the lists cors_origin and
// trusted_proxies), a map, a number, or a URL that does not parse.
func TestSecretSettingsAreNeverEchoed(t *testing.T) {
	urls := map[*setting]string{
		settingRedisURL: "redis://u:S3cr%3Fet@127.0.0.1:6399/0",
		settingMongoURI: "mongodb://u:S3cr%3Fet@127.0.0.1:27017/",
		settingSource:   "https://u:S3cr%3Fet@example.com/",
	}
	broken := map[*setting]string{ // an unencoded '?' or '/' in the password, or a scheme typo
		settingRedisURL: "redis://u:S3cr?et@127.0.0.1:6399/0",
		settingMongoURI: "mongodb://u:S3cr/et@127.0.0.1:27017/",
		settingSource:   "ftp://u:S3cret@example.com/cities500.zip",
	}
	for _, s := range settings {
		if !s.secret {
			continue
		}
		if urls[s] == "" {
			t.Errorf("secret --%s has no URL here", s.flag)
			continue
		}
		section, key, _ := strings.Cut(s.key, ".")
		yamlValues := map[string]string{
			"a list":               "[" + urls[s] + "]",
			"a list of two":        "[" + urls[s] + ", " + urls[s] + "]",
			"a map":                "{url: " + strconv.Quote(urls[s]) + "}",
			"a nested map":         "\n    url:\n      - " + strconv.Quote(urls[s]),
			"a number":             "12345678",
			"a broken URL":         strconv.Quote(broken[s]),
			"a list of broken URL": "[" + strconv.Quote(broken[s]) + "]",
		}
		for shape, yaml := range yamlValues {
			t.Run(s.key+" as "+shape, func(t *testing.T) {
				file := writeFile(t, "c.yaml", section+":\n  "+key+": "+yaml+"\n")
				err := loadOnly(t, s.commands, "--config", file)
				if err == nil {
					t.Fatalf("%s as %s: accepted", s.key, shape)
				}
				checkNoSecret(t, err.Error(), s.key+" in "+file)
			})
		}
		for _, as := range []string{"flag", "env"} {
			t.Run(fmt.Sprintf("--%s broken as %s", s.flag, as), func(t *testing.T) {
				msg, name := giveSetting(t, s, broken[s], as)
				checkNoSecret(t, msg, name)
			})
		}
	}
}

func checkNoSecret(t *testing.T, msg, name string) {
	t.Helper()
	if !strings.Contains(msg, name) {
		t.Errorf("message %q does not name %s", msg, name)
	}
	for _, part := range secretParts {
		if strings.Contains(strings.ReplaceAll(msg, name, ""), part) {
			t.Errorf("message %q shows part of the secret (%q)", msg, part)
		}
	}
}

// The config file may leave a section empty or a key without a value (the
// default then), give a list as one comma-separated string, and write
// numbers and bools as YAML does; a section given a value is refused.
func TestConfigFileShapes(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		check      func(*config) bool
		wantErr    string // "" for none
	}{
		{"an empty section", "limiter:\nserver:\n  addr: 127.0.0.1:1\n", func(c *config) bool { return c.Limiter.Max == 5 }, ""},
		{"a key without a value", "limiter:\n  redis_url:\n  max: 7\n", func(c *config) bool { return c.Limiter.RedisURL == "" && c.Limiter.Max == 7 }, ""},
		{"a list as a string", "server:\n  ready_datasets: small, large\n", func(c *config) bool { return equal(c.Server.ReadyDatasets, []string{"small", "large"}) }, ""},
		{"an empty list", "server:\n  cors_origin: []\n", func(c *config) bool { return len(c.Server.CORSOrigin) == 0 }, ""},
		{"a YAML bool and number", "import:\n  allow_shrink: true\nlimiter:\n  ipv6_prefix: 56\n", func(c *config) bool { return c.Import.AllowShrink && c.Limiter.IPv6Prefix == 56 }, ""},
		{"a number without its unit", "limiter:\n  window: 3\n", nil, `invalid limiter.window in FILE "3": use a duration such as 3s, 500ms or 1m30s`},
		{"a section given a value", "limiter: 5\n", nil, "config file FILE: limiter holds keys such as limiter.window, not a value"},
		{"a key in the wrong section", "server:\n  window: 3s\n", nil, "config file FILE: unknown key server.window (configs/cityfinder.yaml lists every key)"},
		{"a tab in the indent", "limiter:\n\tmax: 5\n", nil,
			"config file FILE (--config) is not valid YAML: yaml: line 2: found character that cannot start any token"},
		{"a list of lists", "limiter:\n  trusted_proxies: [[10.0.0.0/8]]\n", nil,
			"invalid limiter.trusted_proxies in FILE: use a list of CIDRs or addresses such as 10.0.0.0/8,192.0.2.1, not a list of lists or maps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, "c.yaml", tc.yaml)
			cmd, _, err := newRootCmd().Find([]string{"serve"})
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags([]string{"--config", file}); err != nil {
				t.Fatal(err)
			}
			cfg, err := loadConfig(cmd.Flags())
			if want := strings.ReplaceAll(tc.wantErr, "FILE", file); want != "" {
				if err == nil || err.Error() != want {
					t.Errorf("error %v\nwant  %s", err, want)
				}
				return
			}
			if err != nil || !tc.check(cfg) {
				t.Errorf("loaded %+v, %v", cfg, err)
			}
		})
	}
}
