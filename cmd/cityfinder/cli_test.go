package main

import (
	"bytes"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// Every mistake on the command line gets one line that names the flag,
// variable or key as the user wrote it, and what it accepts; the same
// line that main prints after "cityfinder: ".
func TestMessages(t *testing.T) {
	dir := mustImportTwoCities(t)
	missing := filepath.Join(t.TempDir(), "data")
	badValue := writeFile(t, "bad-value.yaml", "limiter:\n  max: abc\n")
	zeroMax := writeFile(t, "zero-max.yaml", "limiter:\n  max: 0\n")
	unknownKey := writeFile(t, "unknown-key.yaml", "limiter:\n  windw: 3s\n")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"word for a duration", nil, []string{"serve", "--window", "abc"},
			`invalid --window "abc": use a duration such as 3s, 500ms or 1m30s`},
		{"word for a number", nil, []string{"query", "ist", "--limit", "abc", "--data-dir", dir},
			`invalid --limit "abc": use a whole number from 1 to 100`},
		{"word for a bool", nil, []string{"query", "ist", "--fuzzy=maybe", "--data-dir", dir},
			`invalid --fuzzy "maybe": use true or false`},
		{"flag without its value", nil, []string{"query", "ist", "--data-dir", dir, "--limit"},
			`--limit needs a value: use a whole number from 1 to 100`},
		{"variable that is no number", map[string]string{"CITYFINDER_MAX": "abc"}, []string{"serve"},
			`invalid CITYFINDER_MAX "abc": use a whole number, at least 1`},
		{"variable that is no duration", map[string]string{"CITYFINDER_WINDOW": "soon"}, []string{"serve"},
			`invalid CITYFINDER_WINDOW "soon": use a duration such as 3s, 500ms or 1m30s`},
		{"variable out of range", map[string]string{"CITYFINDER_MAX": "0"}, []string{"serve"},
			`invalid CITYFINDER_MAX 0: must be at least 1`},
		{"flag over a bad variable", map[string]string{"CITYFINDER_MAX": "0"}, []string{"serve", "--max", "-1"},
			`invalid --max -1: must be at least 1`},
		{"config value that is no number", nil, []string{"serve", "--config", badValue},
			`invalid limiter.max in ` + badValue + ` "abc": use a whole number, at least 1`},
		{"config value out of range", nil, []string{"serve", "--config", zeroMax},
			`invalid limiter.max in ` + zeroMax + ` 0: must be at least 1`},
		{"misspelt config key", nil, []string{"serve", "--config", unknownKey},
			`config file ` + unknownKey + `: unknown key limiter.windw (configs/cityfinder.yaml lists every key)`},
		{"flag of another command", nil, []string{"query", "ist", "--mongo-batch-size", "10"},
			"unknown flag --mongo-batch-size for cityfinder query (it is a flag of import): see `cityfinder query --help`"},
		{"setting on version", nil, []string{"version", "--data-dir", dir},
			"unknown flag --data-dir for cityfinder version (it is a flag of import, nearest, query, serve and show): see `cityfinder version --help`"},
		{"misspelt command", nil, []string{"qeury", "ist"},
			"unknown command \"qeury\" for \"cityfinder\" (did you mean query?): see `cityfinder --help`"},
		{"query without text", nil, []string{"query", "--data-dir", dir},
			"missing the text to search for: type cityfinder query TEXT, for example cityfinder query istanbul"},
		{"query from elsewhere than the import", nil, []string{"query", "ist", "--data-dir", missing},
			"data directory " + missing + " does not exist: pass --data-dir with the directory you imported into, " +
				"or import first: `cityfinder import --dataset small`"},
		{"query of two letters, refused as the API does", nil, []string{"query", "is", "--data-dir", dir},
			"enter at least 3 letters"},
		{"query of 150 characters, refused as the API does", nil, []string{"query", strings.Repeat("a", 150), "--data-dir", dir},
			"query is too long: use at most 100 characters"},
		{"limit over the API's", nil, []string{"query", "par", "--limit", "101", "--data-dir", dir},
			"invalid --limit 101: use a whole number from 1 to 100"},
		{"a place off the map", nil, []string{"query", "par", "--near", "91,0", "--data-dir", dir},
			`invalid --near "91,0": use LAT,LON, latitude from -90 to 90 and longitude from -180 to 180`},
		{"a box upside down", nil, []string{"query", "par", "--bbox", "10,10,0,0", "--data-dir", dir},
			`invalid --bbox "10,10,0,0": use minLon,minLat,maxLon,maxLat (longitudes -180 to 180, latitudes -90 to 90, min ≤ max)`},
		{"a bias out of range", nil, []string{"query", "par", "--near", "48.85,2.35", "--bias-scale", "2", "--data-dir", dir},
			"invalid --bias-scale 2: use a number from 0 to 1"},
		{"an unknown country", nil, []string{"query", "par", "--country", "fr,zz", "--data-dir", dir},
			`invalid --country: Unknown country "zz": use ISO codes such as cl, or English names`},
		{"a variable for an import setting", map[string]string{"CITYFINDER_SOURCE": "ftp://example.com/cities500.zip"}, []string{"import", "--dataset", "large"},
			"invalid CITYFINDER_SOURCE: use cities500, cities1000, cities5000, cities15000, allCountries, or the http(s) URL of a copy of one"},
		{"a variable that is no bool", map[string]string{"CITYFINDER_ALLOW_SHRINK": "maybe"}, []string{"import"},
			`invalid CITYFINDER_ALLOW_SHRINK "maybe": use true or false`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, _, err := runCLI(t, tc.args...)
			if err == nil || err.Error() != tc.want {
				t.Errorf("cityfinder %s:\n got  %v\n want %s", strings.Join(tc.args, " "), err, tc.want)
			}
		})
	}
}

// What the API accepts, query accepts: 3 letters, 100 characters.
func TestQueryAcceptsWhatTheAPIAccepts(t *testing.T) {
	dir := mustImportTwoCities(t)
	for text, want := range map[string]string{
		"par":                    "Paris",
		strings.Repeat("a", 100): "no cities matching",
	} {
		if out := mustRunCLI(t, "query", text, "--data-dir", dir); !strings.Contains(out, want) {
			t.Errorf("query %q printed %q, want %q", text, out, want)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	want := mustRunCLI(t, "version")
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		if got := mustRunCLI(t, args...); got != want {
			t.Errorf("cityfinder %s printed %q, want %q as version does", args[0], got, want)
		}
	}
}

func TestBuildVersion(t *testing.T) {
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/cityfinder/cityfinder", Version: "v1.2.3"}}
	fromCheckout := &debug.BuildInfo{Main: debug.Module{Path: "github.com/cityfinder/cityfinder", Version: "(devel)"}}
	for _, tc := range []struct {
		name, ldflags string
		bi            *debug.BuildInfo
		want          string
	}{
		{"make build", "v1.2.3-4-gabcdef", fromCheckout, "v1.2.3-4-gabcdef"},
		{"go install at a version", "dev", installed, "v1.2.3"},
		{"go build in a checkout", "dev", fromCheckout, "dev"},
		{"no build information", "dev", nil, "dev"},
	} {
		if got := buildVersion(tc.ldflags, tc.bi); got != tc.want {
			t.Errorf("%s: version %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Each command lists only the flags it uses.
func TestFlagsOnlyWhereUsed(t *testing.T) {
	for _, tc := range []struct {
		command string
		has     []string
		hasNot  []string
	}{
		{"query", []string{"--dataset", "--limit", "--data-dir", "--mongo-query-timeout"}, []string{"--mongo-batch-size", "--window", "--file", "--addr"}},
		{"serve", []string{"--window", "--data-dir", "--mongo-query-timeout"}, []string{"--mongo-batch-size", "--dataset", "--file", "--limit"}},
		{"import", []string{"--file", "--dataset", "--mongo-batch-size", "--data-dir"}, []string{"--window", "--addr", "--limit"}},
		{"healthcheck", []string{"--addr", "--ready", "--probe-timeout", "--config"}, []string{"--data-dir", "--window", "--mongo-uri", "--log-level"}},
		{"version", nil, []string{"--data-dir", "--config", "--log-level"}},
		{"completion", nil, []string{"--data-dir", "--config", "--log-level"}},
	} {
		t.Run(tc.command, func(t *testing.T) {
			help := mustRunCLI(t, tc.command, "--help")
			for _, f := range tc.has {
				if !strings.Contains(help, f+" ") {
					t.Errorf("%s --help lacks %s", tc.command, f)
				}
			}
			for _, f := range tc.hasNot {
				if strings.Contains(help, f+" ") {
					t.Errorf("%s --help lists %s, which it does not use", tc.command, f)
				}
			}
		})
	}
}

// Shells offer each flag's values; flags without a list offer no file names.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "--dataset", ""}, "small\nlarge\n:4\n"},
		{[]string{"import", "--dataset", "l"}, "small\nlarge\n:4\n"}, // the shell filters by prefix
		{[]string{"serve", "--log-level", ""}, "debug\ninfo\nwarn\nerror\n:4\n"},
		{[]string{"import", "--file", ""}, "csv\ntxt\ngz\nzip\n:8\n"},
		{[]string{"import", "--geonames", ""}, "txt\ngz\nzip\n:8\n"},
		{[]string{"import", "--region-names", ""}, "csv\n:8\n"},
		{[]string{"serve", "--config", ""}, "yaml\nyml\n:8\n"},
		{[]string{"query", "--data-dir", ""}, ":16\n"},
		{[]string{"serve", "--addr", ""}, ":4\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// Completion must work where the configuration does not.
			t.Setenv("CITYFINDER_MAX", "abc")
			out := mustRunCLI(t, append([]string{"__complete"}, tc.args...)...)
			if out != tc.want {
				t.Errorf("completions:\n got  %q\n want %q", out, tc.want)
			}
		})
	}
}

// query prints a header and lines its columns up by what a terminal shows:
// a name with combining marks or wide characters shifts nothing. Region
// codes are not shown: without names, there is no REGION column.
func TestQueryTable(t *testing.T) {
	file := writeFile(t, "cities.txt", "Country,City,AccentCity,Region,Population,Latitude,Longitude\n"+
		"cn,dongguan,Dongguan,30,8000000,23.05,113.74\n"+
		"jp,tokyo,東京,40,8336599,35.69,139.69\n"+
		"vn,dong ha,\u0110o\u0302ng Ha\u0300,25,93800,16.82,107.1\n"+ // ô and à as letters and combining marks
		"vn,dong hoi,Dong Hoi,23,,17.48,106.6\n")
	dir := t.TempDir()
	mustRunCLI(t, "import", "--dataset", "large", "--file", file, "--data-dir", dir)
	got := mustRunCLI(t, "query", "dong", "--dataset", "large", "--data-dir", dir)
	want := "" +
		"NAME      COUNTRY  POPULATION\n" +
		"東京      Japan     8,336,599\n" +
		"Dongguan  China     8,000,000\n" +
		"\u0110o\u0302ng Ha\u0300   Vietnam      93,800\n" +
		"Dong Hoi  Vietnam\n"
	if got != want {
		t.Errorf("query printed\n%s\nwant\n%s", got, want)
	}
	got = mustRunCLI(t, "query", "dong", "--dataset", "large", "--data-dir", dir, "--country", "vn")
	want = "" +
		"NAME      COUNTRY  POPULATION\n" +
		"\u0110o\u0302ng Ha\u0300   Vietnam      93,800\n" +
		"Dong Hoi  Vietnam\n"
	if got != want {
		t.Errorf("query --country vn printed\n%s\nwant\n%s", got, want)
	}
}

func TestDisplayWidth(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"Paris", 5},
		{"Zürich", 6},
		{"Zu\u0308rich", 6}, // u and a combining diaeresis
		{"東京", 4},
		{"Ｔｏｋｙｏ", 10},   // fullwidth
		{"a\u200db", 2}, // a zero-width joiner
	} {
		if got := displayWidth(tc.s); got != tc.want {
			t.Errorf("displayWidth(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 14804116: "14,804,116", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// firstHit is the line of the best match in query's table.
func firstHit(out string) string {
	_, rest, _ := strings.Cut(out, "\n")
	return rest
}

// The error line that main prints, from the same path.
func TestRunPrintsOneLinePerMistake(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"query", "ist", "--limit", "abc"}, &out, &errOut); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if got, want := errOut.String(), "cityfinder: invalid --limit \"abc\": use a whole number from 1 to 100\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}
