package main

import (
	"fmt"
	"strings"
	"testing"
)

// The import reads GeoNames' alternate names, reports their malformed
// rows by line, and query shows the names in the languages asked for.
func TestImportAlternateNamesThenQueryInLanguages(t *testing.T) {
	csv := writeFile(t, "cities.csv", "name,country,subcountry,geonameid\n"+
		"Munich,Germany,Bavaria,2867714\nMumbai,India,Maharashtra,1275339\n")
	var alt strings.Builder
	alt.WriteString("1\t2867714\tde\tMünchen\t1\t\t\t\t\t\n")
	alt.WriteString("2\t1275339\ten\tBombay\t\t\t\t1\t\t\n")
	for i := range 200 { // other places, so that one malformed row is under 1%
		fmt.Fprintf(&alt, "%d\t%d\tde\tOrt\t\t\t\t\t\t\n", i+3, i+1)
	}
	alt.WriteString("203\t1275339\tmr\tमुंबई\tyes\t\t\t\t\t\n") // line 203
	names := writeFile(t, "alternateNamesV2.txt", alt.String())
	dir := t.TempDir()

	out, errOut, err := runCLI(t, "import", "--file", csv, "--alternate-names", names, "--data-dir", dir)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "2 with names in other languages (1 alternate names rejected)") {
		t.Errorf("import summary %q does not count the localized cities", out)
	}
	if want := "rejected rows in " + names + ":\nline 203: isPreferredName \"yes\" is not 1, 0 or empty\n"; !strings.Contains(errOut, want) {
		t.Errorf("import stderr %q, want %q", errOut, want)
	}

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"munich"}, []string{"NAME", "COUNTRY", "REGION", "Munich", "Germany", "Bavaria"}},
		{[]string{"munich", "--lang", "de"}, []string{"NAME", "COUNTRY", "REGION", "NOTE", "München", "Deutschland", "Bavaria", "matched", `"Munich"`}},
		{[]string{"munich", "--lang", "xx,ja"}, []string{"NAME", "COUNTRY", "REGION", "Munich", "ドイツ", "Bavaria"}},
		{[]string{"bombay"}, []string{"NAME", "COUNTRY", "REGION", "NOTE", "Mumbai", "India", "Maharashtra", "formerly", `"Bombay"`}},
	} {
		out := mustRunCLI(t, append([]string{"query", "--data-dir", dir}, tc.args...)...)
		if got := strings.Fields(out); !equal(got, tc.want) {
			t.Errorf("query %q printed %q, want the fields %q", tc.args, out, tc.want)
		}
	}
	if _, _, err := runCLI(t, "query", "munich", "--lang", "de,12345678x", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), `invalid --lang: Invalid lang "12345678x"`) {
		t.Errorf("a malformed --lang: err = %v", err)
	}
}
