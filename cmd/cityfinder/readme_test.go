package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/server"
	"github.com/cityfinder/cityfinder/pkg/server/openapitest"
)

// example is one command of the README with the output it shows.
type example struct {
	line    int    // of the command in README.md
	command string // after "$ "
	want    string
}

// readmeExamples returns the README's examples: in its ```sh blocks, each
// line that starts with "$ " is a command, and the lines after it, up to
// the next command or the end of the block, are what it prints.
func readmeExamples(t *testing.T) []example {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []example
	var cur *example
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			inBlock = !inBlock && line == "```sh"
			cur = nil
		case !inBlock:
		case strings.HasPrefix(line, "$ "):
			out = append(out, example{line: n, command: strings.TrimPrefix(line, "$ ")})
			cur = &out[len(out)-1]
		case cur != nil:
			cur.want += line + "\n"
		}
	}
	return out
}

// Every example of the README runs as it says, on the datasets that
// `make run` imports: the okfn file enriched with GeoNames as small, the
// GeoNames file as large, regions named by the okfn file.
func TestREADMEExamples(t *testing.T) {
	t.Parallel()
	dir := servedData(t)

	store, err := embedded.Open(dir, embedded.Options{ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// Every answer an example gets must also hold to docs/openapi.json.
	doc, err := openapitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	api := server.New(search.NewService(store), server.WithDemoPage(server.PageConfig{}))
	ts := httptest.NewServer(doc.Handler(api, func(err error) { t.Errorf("%v", err) }))
	defer ts.Close()

	examples := readmeExamples(t)
	if len(examples) < 5 {
		t.Fatalf("found %d examples in the README, want its API and command examples", len(examples))
	}
	for _, ex := range examples {
		t.Run(ex.command, func(t *testing.T) {
			args := shellWords(ex.command)
			var got string
			switch args[0] {
			case "curl":
				got = curl(t, ts.URL, args[len(args)-1])
			case "cityfinder":
				args = append(withoutDataDir(args[1:]), "--data-dir", dir)
				got = mustRunCLI(t, args...)
			default:
				t.Skipf("README.md:%d runs %s, which this test does not run", ex.line, args[0])
			}
			if got != ex.want {
				t.Errorf("README.md:%d: %s printed\n%s\nthe README shows\n%s", ex.line, ex.command, got, ex.want)
			}
		})
	}
}

// curl GETs the path of a README URL (127.0.0.1:8080/…) from base and
// returns the body with a newline, as curl prints it in a terminal.
func curl(t *testing.T, base, url string) string {
	t.Helper()
	path := url[strings.Index(url, "/"):]
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body) + "\n"
}

// withoutDataDir drops a --data-dir and its value: the test's own
// directory replaces the README's.
func withoutDataDir(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--data-dir" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// shellWords splits a command as a shell would for the README's forms:
// words, '…' and "…" quotes, and a # comment at the end.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '#' && !inWord:
			i = len(s)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}
