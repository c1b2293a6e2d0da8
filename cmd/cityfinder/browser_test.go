package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
	searchmemory "github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// browserTimeout bounds everything the browser does in one test.
const browserTimeout = 60 * time.Second

// waitTimeout bounds one wait for the page to show something.
const waitTimeout = 10 * time.Second

// screenshotDir is where the browser test leaves its screenshots for a
// person to look at: out/ at the root of the checkout, which git ignores.
var screenshotDir = filepath.Join("..", "..", "out", "demo-page")

// The demo page, in a real headless chromium, against `cityfinder serve`
// with both datasets imported. The steps share one tab and run in order.
func TestBrowserDemoPage(t *testing.T) {
	chromium := chromiumPath(t)
	small := shareddata.Path(t, "world-cities-2016.csv")
	large := shareddata.Path(t, "worldcitiespop-100k.txt.gz")
	dir := t.TempDir()
	mustRunCLI(t, "import", "--dataset", "small", "--file", small, "--data-dir", dir)
	mustRunCLI(t, "import", "--dataset", "large", "--file", large, "--data-dir", dir)
	base := startServe(t, "--data-dir", dir, "--max", "5", "--window", "3s")
	p := newPage(t, chromium)

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"the page loads and asks the server for its limit", func(t *testing.T) {
			p.do(t, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"/"))
			p.waitStatus(t, "Type at least 3 letters")
			if got := p.log.status("/config"); got != 200 {
				t.Errorf("GET /config = %d, want 200", got)
			}
			if got := p.eval(t, `document.getElementById("q").getAttribute("role")`); got != "combobox" {
				t.Errorf("the input's role = %q, want combobox", got)
			}
		}},
		{"typing ist lists İstanbul with the typed letters marked", func(t *testing.T) {
			p.typeText(t, "ist", 0)
			i := p.waitOption(t, "İstanbul")
			p.assertOption(t, i, "", "İst", "Istanbul · Turkey")
			for attr, want := range map[string]string{"aria-expanded": "true", "aria-controls": "suggestions"} {
				if got := p.eval(t, `document.getElementById("q").getAttribute("`+attr+`")`); got != want {
					t.Errorf("input %s = %q, want %q", attr, got, want)
				}
			}
			if got := p.eval(t, `document.getElementById("suggestions").getAttribute("role") + " " + document.querySelector("#suggestions li").getAttribute("role")`); got != "listbox option" {
				t.Errorf("list and item roles = %q, want listbox and option", got)
			}
			p.screenshot(t, "desktop-suggestions")
		}},
		{"arrow down and Enter pick İstanbul and show its details", func(t *testing.T) {
			i := p.waitOption(t, "İstanbul")
			for range i + 1 {
				p.do(t, chromedp.KeyEvent(kb.ArrowDown))
			}
			want := fmt.Sprintf("suggestion-%d", i)
			if got := p.eval(t, `document.getElementById("q").getAttribute("aria-activedescendant")`); got != want {
				t.Errorf("aria-activedescendant = %q, want %q", got, want)
			}
			if got := p.eval(t, `document.getElementById("`+want+`").getAttribute("aria-selected")`); got != "true" {
				t.Errorf("the active option's aria-selected = %q, want true", got)
			}
			p.do(t, chromedp.KeyEvent(kb.Enter))
			p.waitFor(t, "the details of İstanbul", `!document.getElementById("details").hidden && document.getElementById("details").textContent.includes("Turkey")`)
			if got := p.eval(t, `document.getElementById("details-name").textContent + "|" + document.getElementById("q").value + "|" + document.getElementById("q").getAttribute("aria-expanded")`); got != "İstanbul|İstanbul|false" {
				t.Errorf("after picking: heading|input|aria-expanded = %q, want İstanbul|İstanbul|false", got)
			}
			p.screenshot(t, "desktop-details")
		}},
		{"switching to the large dataset changes the results", func(t *testing.T) {
			p.typeText(t, "ist", 0)
			p.waitOption(t, "İstanbul")
			smallNames := p.names(t)
			sent := p.log.len()
			p.do(t, chromedp.Click(chromedp.CSS(`input[value="large"] + span`)))
			p.waitFor(t, "other names from the large dataset", fmt.Sprintf(`((old) => {
				const now = Array.from(document.querySelectorAll("#suggestions .option-name"), e => e.textContent);
				return now.length > 0 && now.join("\n") !== old.join("\n");
			})(%s)`, jsonString(smallNames)))
			if reqs := p.log.since(sent); len(reqs) != 1 || !strings.Contains(reqs[0].url, "dataset=large") {
				t.Errorf("requests after the switch = %v, want one for the large dataset", reqs)
			}
			p.screenshot(t, "desktop-large")
			p.do(t, chromedp.Click(chromedp.CSS(`input[value="small"] + span`)))
			p.waitOption(t, "İstanbul")
		}},
		{"typing 20 letters quickly searches once, with no 429", func(t *testing.T) {
			sent := p.log.len()
			gaps := p.typeText(t, "Santiago de los Caba", 40*time.Millisecond)
			p.waitOption(t, "Santiago de los Caballeros")
			p.waitStatus(t, "matching 'Santiago de los Caba'")
			// One search after the last key, and one more for each pause
			// near the debounce time, which a busy machine can make.
			want := 1
			for _, g := range gaps {
				if g > 150*time.Millisecond {
					want++
				}
			}
			if reqs := p.log.since(sent); len(reqs) > want {
				t.Errorf("typing 20 letters 40 ms apart sent %d searches, want the debounce to keep it to %d: %v", len(reqs), want, reqs)
			}
			p.assertNo429(t)
		}},
		{"typing slowly is paced under the limit, with no 429", func(t *testing.T) {
			sent := p.log.len()
			text := "Santa Cruz de Tenerife"
			p.typeText(t, text, 260*time.Millisecond) // slower than the debounce: every letter wants a search
			p.waitOption(t, "Santa Cruz de Tenerife")
			p.waitStatus(t, "matching '"+text+"'")
			p.assertNo429(t)
			if most := p.log.mostInWindow(3 * time.Second); most > 5 {
				t.Errorf("the page sent %d searches within 3 s, want at most the limit of 5", most)
			}
			t.Logf("%d letters typed 260 ms apart took %d searches", len(text), len(p.log.since(sent)))
		}},
		{"no match says so", func(t *testing.T) {
			p.typeText(t, "qqqzx", 0)
			p.waitStatus(t, "No cities matching 'qqqzx'")
			if got := p.eval(t, `String(document.getElementById("suggestions").hidden)`); got != "true" {
				t.Errorf("the list is shown with no match (hidden = %s)", got)
			}
		}},
		{"a click picks a large-dataset city, with population and coordinates", func(t *testing.T) {
			p.do(t, chromedp.Click(chromedp.CSS(`input[value="large"] + span`)))
			p.typeText(t, "tokyo", 0)
			i := p.waitOption(t, "Tokyo")
			p.do(t, chromedp.Click(chromedp.ID(fmt.Sprintf("suggestion-%d", i))))
			p.waitFor(t, "population and coordinates", `["Population", "Coordinates"].every(s => document.getElementById("details").textContent.includes(s))`)
			p.screenshot(t, "desktop-details-large")
			p.do(t, chromedp.Click(chromedp.CSS(`input[value="small"] + span`)))
		}},
		{"on a phone, a tap picks São Paulo", func(t *testing.T) {
			p.do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch))
			p.typeText(t, "sao p", 0)
			i := p.waitOption(t, "São Paulo")
			p.assertOption(t, i, "", "São P", "São Paulo · Brazil")
			p.screenshot(t, "phone-suggestions")
			p.do(t, chromedp.Tap(chromedp.ID(fmt.Sprintf("suggestion-%d", i))))
			p.waitFor(t, "the details of São Paulo", `!document.getElementById("details").hidden && document.getElementById("details").textContent.includes("Brazil")`)
			p.screenshot(t, "phone-details")
			p.do(t, chromedp.EmulateViewport(1280, 800))
		}},
		{"a 429 shows the API's message and when it retries", func(t *testing.T) {
			// A second server with a tight limit, used up by this test from
			// the same address as the browser: the page knows the limit, so
			// only a client it cannot see makes it meet a 429.
			tight := startServe(t, "--data-dir", dir, "--max", "2", "--window", "1m")
			for range 2 {
				if code, body := get(t, tight+"/search?q=par"); code != 200 {
					t.Fatalf("using up the limit: %d %s", code, body)
				}
			}
			code, body := get(t, tight+"/search?q=par")
			if code != 429 || body != `{"message":"You can only do 2 searches in 60 seconds"}` {
				t.Fatalf("third search = %d %s, want the 429 of the tight limit", code, body)
			}
			sent := p.log.len()
			p.do(t, chromedp.Navigate(tight+"/"))
			p.waitStatus(t, "Type at least 3 letters")
			p.typeText(t, "ist", 0)
			p.waitStatus(t, "You can only do 2 searches in 60 seconds. Retrying in ")
			if got := p.eval(t, `document.getElementById("status").className`); got != "status is-error" {
				t.Errorf("status class = %q, want it shown as an error", got)
			}
			var seconds int
			status := p.status(t)
			if _, err := fmt.Sscanf(status[strings.Index(status, "Retrying in "):], "Retrying in %d seconds.", &seconds); err != nil || seconds < 1 || seconds > 60 {
				t.Errorf("status %q does not say the seconds of Retry-After (1..60)", status)
			}
			p.screenshot(t, "desktop-429")
			time.Sleep(time.Second) // the page must wait for Retry-After, not retry at once
			if reqs := p.log.since(sent); len(reqs) != 1 || reqs[0].status != 429 {
				t.Errorf("searches after the 429 = %v, want the one that got it", reqs)
			}
		}},
		{"the match is highlighted by code points, not UTF-16 units", func(t *testing.T) {
			// 🏙 is one code point and two UTF-16 units: the API's span
			// (1..4) must mark "Ist", not half the emoji and "Is".
			store := searchmemory.New()
			name := "🏙Istanbul"
			city := search.City{ID: 1, Name: name, Slug: search.Slug(name), Country: "Turkey", CountryCode: "tr", Subcountry: "Istanbul"}
			if _, err := store.Load(t.Context(), search.Small, &search.SliceReader{Cities: []search.City{city}}, search.LoadOptions{}); err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(server.New(search.NewService(store), server.WithDemoPage(server.PageConfig{})))
			defer ts.Close()
			p.do(t, chromedp.Navigate(ts.URL+"/"))
			p.waitStatus(t, "Type at least 3 letters")
			p.typeText(t, "ist", 0)
			p.assertOption(t, p.waitOption(t, name), "🏙", "Ist", "Istanbul · Turkey")
		}},
	}
	for _, step := range steps {
		if !t.Run(step.name, step.run) {
			break // the steps build on each other
		}
	}
	if foreign := p.log.foreignRequests(); len(foreign) > 0 {
		t.Errorf("the page asked for things outside 127.0.0.1: %q", foreign)
	}
	if errs := p.log.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}
}

// chromiumPath finds Debian's chromium. In CI it must be there (.ci/run
// installs it); elsewhere the test skips without it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed, and CI must run the browser test: apt-get install -y chromium")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium): skipping the browser test")
	return ""
}

// page is one headless chromium tab.
type page struct {
	ctx context.Context
	log *networkLog
}

// newPage starts chromium with a fresh profile and no network but loopback;
// it is closed when the test ends.
func newPage(t *testing.T, chromium string) *page {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		// Every name fails to resolve: only the test's 127.0.0.1 is reachable.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	)
	// The deadline bounds the browser's whole life, its start included.
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	log := &networkLog{statuses: make(map[string]int64), paths: make(map[network.RequestID]string)}
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithListener(log.record))
	t.Cleanup(func() { cancelBrowser(); cancelAlloc(); cancel() }) // before the profile's TempDir is removed
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	return &page{ctx: browserCtx, log: log}
}

func (p *page) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// eval returns the value of a JavaScript expression, as a string.
func (p *page) eval(t *testing.T, expr string) string {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`String(`+expr+`)`))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func (p *page) status(t *testing.T) string {
	t.Helper()
	return p.eval(t, `document.getElementById("status").textContent`)
}

// names returns the city names in the suggestion list.
func (p *page) names(t *testing.T) []string {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#suggestions .option-name"), e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitFor waits until the JavaScript predicate holds.
func (p *page) waitFor(t *testing.T, what, predicate string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitTimeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](predicate, chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(waitTimeout)))
	if err != nil {
		t.Fatalf("waiting for %s: %v\nstatus line: %q\nsuggestions: %q", what, err, p.status(t), p.names(t))
	}
}

func (p *page) waitStatus(t *testing.T, substr string) {
	t.Helper()
	p.waitFor(t, fmt.Sprintf("the status line to say %q", substr),
		fmt.Sprintf(`document.getElementById("status").textContent.includes(%s)`, jsonString(substr)))
}

// waitOption waits until the list shows name, and returns its index.
func (p *page) waitOption(t *testing.T, name string) int {
	t.Helper()
	p.waitFor(t, "the suggestion "+name, fmt.Sprintf(
		`!document.getElementById("suggestions").hidden && Array.from(document.querySelectorAll("#suggestions .option-name"), e => e.textContent).includes(%s)`,
		jsonString(name)))
	return slices.Index(p.names(t), name)
}

// assertOption checks option i: the text before the marked span, the span,
// and the line under the name.
func (p *page) assertOption(t *testing.T, i int, wantBefore, wantMark, wantWhere string) {
	t.Helper()
	got := p.eval(t, fmt.Sprintf(`(() => {
		const li = document.getElementById("suggestion-%d");
		const name = li.querySelector(".option-name");
		return [name.firstChild.nodeType === 3 ? name.firstChild.textContent : "", name.querySelector("mark").textContent, li.querySelector(".option-where").textContent].join("|");
	})()`, i))
	if want := wantBefore + "|" + wantMark + "|" + wantWhere; got != want {
		t.Errorf("option %d: before|mark|where = %q, want %q", i, got, want)
	}
}

// typeText replaces the input's text by typing text, a key every gap, and
// returns the time that really passed between keys.
func (p *page) typeText(t *testing.T, text string, gap time.Duration) []time.Duration {
	t.Helper()
	p.do(t, chromedp.Focus(chromedp.ID("q")), chromedp.Evaluate[chromedp.Void](
		`(() => { const q = document.getElementById("q"); q.value = ""; q.dispatchEvent(new Event("input")); })()`))
	if gap == 0 {
		p.do(t, chromedp.KeyEvent(text))
		return nil
	}
	var gaps []time.Duration
	var last time.Time
	for _, r := range text {
		if !last.IsZero() {
			time.Sleep(gap - time.Since(last))
			gaps = append(gaps, time.Since(last))
		}
		last = time.Now()
		p.do(t, chromedp.KeyEvent(string(r)))
	}
	return gaps
}

func (p *page) assertNo429(t *testing.T) {
	t.Helper()
	for _, r := range p.log.since(0) {
		if r.status == 429 {
			t.Errorf("%s got 429", r.url)
		}
	}
	if got := p.eval(t, `document.getElementById("status").className`); got != "status" {
		t.Errorf("status line %q is shown as %q", p.status(t), got)
	}
}

// screenshot saves the viewport as out/demo-page/NAME.png.
func (p *page) screenshot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(screenshotDir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// networkLog keeps what the tab did, from the browser's own events: every
// /search request with its status, requests that left 127.0.0.1, and
// uncaught exceptions.
type networkLog struct {
	mu       sync.Mutex
	searches []searchRequest
	statuses map[string]int64 // the latest status of each other path
	paths    map[network.RequestID]string
	foreign  []string
	errs     []string
}

type searchRequest struct {
	id     network.RequestID
	url    string
	at     time.Duration // browser's monotonic clock
	status int64         // 0 until the answer comes
}

func (r searchRequest) String() string { return fmt.Sprintf("%s → %d", r.url, r.status) }

// record runs in the tab's event loop: it must return fast.
func (l *networkLog) record(ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		u, err := url.Parse(ev.Request.URL)
		if err != nil || (u.Scheme != "data" && u.Hostname() != "127.0.0.1") {
			l.foreign = append(l.foreign, ev.Request.URL)
			return
		}
		if u.Path == "/search" {
			at := time.Duration(float64(ev.Timestamp) * float64(time.Second))
			l.searches = append(l.searches, searchRequest{id: ev.RequestID, url: u.RequestURI(), at: at})
			return
		}
		l.paths[ev.RequestID] = u.Path
	case *network.EventResponseReceived:
		for i := range l.searches {
			if l.searches[i].id == ev.RequestID {
				l.searches[i].status = ev.Response.Status
			}
		}
		if path, ok := l.paths[ev.RequestID]; ok {
			l.statuses[path] = ev.Response.Status
		}
	case *runtime.EventExceptionThrown:
		l.errs = append(l.errs, ev.ExceptionDetails.Text)
	}
}

// status returns the latest status of a request for path; 0 when none came.
func (l *networkLog) status(path string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.statuses[path]
}

func (l *networkLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.searches)
}

// since returns the searches from the i-th on.
func (l *networkLog) since(i int) []searchRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.searches[i:])
}

// mostInWindow returns the most searches sent within any span of window.
func (l *networkLog) mostInWindow(window time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	most := 0
	for i, first := range l.searches {
		n := 0
		for _, r := range l.searches[i:] {
			if r.at-first.at < window {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func (l *networkLog) foreignRequests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.foreign)
}

func (l *networkLog) exceptions() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}

// jsonString quotes v for JavaScript source.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
