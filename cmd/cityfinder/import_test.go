package main

import (
	"os"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
)

// strayQuoteCSV is the okfn file with a stray quote on its fourth line,
// cut to a few rows.
func strayQuoteCSV(t *testing.T) string {
	t.Helper()
	full := shareddata.Path(t, "world-cities.csv")
	data := mustReadFile(t, full)
	lines := strings.Split(string(data), "\n")
	bad := append(lines[:3:3], `"Bad Town,France,Ile,123`)
	for _, l := range lines[3:] {
		if len(bad) == 9 {
			break
		}
		if !strings.Contains(l, `"`) {
			bad = append(bad, l)
		}
	}
	return writeFile(t, "bad.csv", strings.Join(bad, "\n")+"\n")
}

// An import that would replace the full okfn dataset with a handful of
// rows is refused and the old dataset keeps answering, unless
// --allow-shrink (or its variable, or its key) says it is intended.
func TestImportRefusesToShrink(t *testing.T) {
	full := shareddata.Path(t, "world-cities.csv")
	bad := strayQuoteCSV(t)
	allowed := writeFile(t, "allow.yaml", "import:\n  allow_shrink: true\n")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"--allow-shrink"}},
		{"environment", map[string]string{"CITYFINDER_ALLOW_SHRINK": "true"}, nil},
		{"config file", nil, []string{"--config", allowed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := mustRunCLI(t, "import", "--file", full, "--data-dir", dir)
			if !strings.HasPrefix(out, "imported 33886 of 34032 rows") {
				t.Fatalf("the full import: %q", out)
			}
			_, errOut, err := runCLI(t, "import", "--file", bad, "--data-dir", dir)
			want := "refused to replace the 33886 cities of small with 7: fewer than half, and 1 of the 8 rows were rejected (12.5%, more than 1%); small keeps its 33886 cities (if that is intended, import again with --allow-shrink)"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("import of the cut file: err = %v, want %q", err, want)
			}
			if !strings.Contains(errOut, "line 4") {
				t.Errorf("stderr %q does not name the bad line 4", errOut)
			}
			if got := mustRunCLI(t, "query", "seoul", "--data-dir", dir); !strings.Contains(got, "Seoul") {
				t.Errorf("after the refused import, query seoul = %q, want the old dataset", got)
			}

			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out = mustRunCLI(t, append([]string{"import", "--file", bad, "--data-dir", dir}, tc.args...)...)
			if !strings.HasPrefix(out, "imported 7 of 8 rows into small (1 rejected") {
				t.Errorf("import allowed to shrink: %q", out)
			}
			if got := mustRunCLI(t, "query", "seoul", "--data-dir", dir, "--json", "--fuzzy=false"); got != "[]\n" {
				t.Errorf("after the allowed import, query seoul = %q, want nothing", got)
			}
		})
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
