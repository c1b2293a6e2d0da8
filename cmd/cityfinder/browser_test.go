package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
	searchmemory "github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// browserTimeout bounds everything the browser does in one test.
const browserTimeout = 2 * time.Minute

// waitTimeout bounds one wait for the page to show something.
const waitTimeout = 10 * time.Second

// screenshotDir is where the browser test leaves its screenshots for a
// person to look at: out/ at the root of the checkout, which git ignores.
var screenshotDir = filepath.Join("..", "..", "out", "demo-page")

// The demo page, in a real headless chromium, against `cityfinder serve`
// over the small dataset that `make run` imports, and later the large one
// too. The steps share one tab and run in order.
func TestBrowserDemoPage(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	dir := t.TempDir()
	copyServed(t, search.Small, dir) // as `make run` imports it, enriched with GeoNames
	large := shareddata.Path(t, "worldcitiespop-100k.txt.gz")
	// The large dataset comes later, while serve runs: it looks for new
	// imports every 100 ms.
	base := startServe(t, "--data-dir", dir, "--max", "5", "--window", "3s", "--reload-interval", "100ms")
	p := newPage(t, chromium)

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"the page loads and asks the server for its limit and datasets", func(t *testing.T) {
			p.do(t, chromedp.EmulateViewport(1280, 800))
			p.open(t, base+"/")
			p.waitStatus(t, "Type at least 3 letters")
			if got := p.log.status("/config"); got != 200 {
				t.Errorf("GET /config = %d, want 200", got)
			}
			if got := p.eval(t, `document.getElementById("q").getAttribute("role")`); got != "combobox" {
				t.Errorf("the input's role = %q, want combobox", got)
			}
		}},
		{"a dataset never imported is disabled and says so", func(t *testing.T) {
			if got := p.datasetChoice(t, "large"); got != "disabled|unchecked|not available yet" {
				t.Errorf("the large choice = %q, want it disabled and saying it is not available yet", got)
			}
			p.do(t, chromedp.Click(chromedp.CSS(`input[value="large"] + span`)))
			if got := p.datasetChoice(t, "small"); got != "enabled|checked|cities over 15,000" {
				t.Errorf("after a click on the large choice, the small one = %q, want it still chosen", got)
			}
			p.screenshot(t, "desktop-start")
		}},
		{"text and controls have enough contrast, light", func(t *testing.T) {
			p.assertContrast(t, "as the page opens")
			// From the input, Shift+Tab goes to the location button, then
			// to the chosen dataset: their focus rings count as controls too.
			back := chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift))
			focused := `(document.activeElement.id || document.activeElement.value) + " " + document.activeElement.matches(":focus-visible")`
			p.do(t, chromedp.Focus(chromedp.ID("q")), back)
			if got := p.eval(t, focused); got != "locate true" {
				t.Fatalf("after Shift+Tab the focus is on %q, want the location button, focus-visible", got)
			}
			p.assertContrast(t, "the location button focused")
			p.do(t, back)
			if got := p.eval(t, focused); got != "small true" {
				t.Fatalf("after Shift+Tab the focus is on %q, want the small choice, focus-visible", got)
			}
			p.assertContrast(t, "the dataset choice focused")
		}},
		{"ten suggestions fit at 1280×800, below the status line", func(t *testing.T) {
			p.typeText(t, "san", 0)
			p.waitOptions(t, 10)
			p.assertListFits(t, true)
			p.do(t, chromedp.KeyEvent(kb.ArrowDown))
			p.assertContrast(t, "the list open, its first option active")
			p.screenshot(t, "desktop-suggestions")
		}},
		{"typing zur lists Zürich with the typed letters marked", func(t *testing.T) {
			p.typeText(t, "zur", 0)
			i := p.waitOption(t, "Zürich")
			p.assertOption(t, i, "", "Zür", "Switzerland")
			for attr, want := range map[string]string{"aria-expanded": "true", "aria-controls": "suggestions"} {
				if got := p.eval(t, `document.getElementById("q").getAttribute("`+attr+`")`); got != want {
					t.Errorf("input %s = %q, want %q", attr, got, want)
				}
			}
			if got := p.eval(t, `document.getElementById("suggestions").getAttribute("role") + " " + document.querySelector("#suggestions li").getAttribute("role")`); got != "listbox option" {
				t.Errorf("list and item roles = %q, want listbox and option", got)
			}
		}},
		{"arrow down and Enter pick Zürich and show its details", func(t *testing.T) {
			i := p.waitOption(t, "Zürich")
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
			p.waitFor(t, "the details of Zürich", `!document.getElementById("details").hidden && document.getElementById("details").textContent.includes("Switzerland")`)
			if got := p.eval(t, `document.getElementById("details-name").textContent + "|" + document.getElementById("q").value + "|" + document.getElementById("q").getAttribute("aria-expanded")`); got != "Zürich|Zürich|false" {
				t.Errorf("after picking: heading|input|aria-expanded = %q, want Zürich|Zürich|false", got)
			}
			p.assertContrast(t, "the details shown")
			// The address is now the city's link, which the details show too.
			if got := p.eval(t, `location.search + "|" + document.getElementById("city-link").textContent`); !regexp.MustCompile(`^\?city=\d+\|` + regexp.QuoteMeta(base) + `/\?city=\d+$`).MatchString(got) {
				t.Errorf("after picking: address|link = %q, want /?city=ID in both", got)
			}
			p.screenshot(t, "desktop-details")
		}},
		{"a typo says what it was corrected to", func(t *testing.T) {
			p.typeText(t, "zuirch", 0)
			p.waitStatus(t, "No city matches 'zuirch'. Showing results for zurich.")
			p.assertOption(t, p.waitOption(t, "Zürich"), "", "Zürich", "Switzerland")
			p.assertListFits(t, false)
			p.assertContrast(t, "typo matches")
			p.screenshot(t, "desktop-typo")
		}},
		{"lon lists London, United Kingdom first", func(t *testing.T) {
			p.typeText(t, "lon", 0)
			p.waitOption(t, "London")
			if got := p.eval(t, `document.querySelector("#suggestion-0 .option-title").textContent + " · " + document.querySelector("#suggestion-0 .option-where").textContent`); got != "London, England · United Kingdom" {
				t.Errorf("first suggestion for lon = %q, want London in the United Kingdom", got)
			}
		}},
		{"labels tell two Londons and two Springfields apart", func(t *testing.T) {
			for _, tt := range []struct{ text, name, want string }{
				{"london", "London", "London, England"},
				{"springfield", "Springfield", "Springfield, Missouri"},
			} {
				p.typeText(t, tt.text, 0)
				p.waitOption(t, tt.name)
				titles := p.titles(t, tt.name)
				if len(titles) < 2 || len(slices.Compact(slices.Sorted(slices.Values(titles)))) != len(titles) || !slices.Contains(titles, tt.want) {
					t.Errorf("the options named %s read %q, want two or more, all different, %q among them", tt.name, titles, tt.want)
				}
				t.Logf("%s: %q", tt.text, titles)
			}
			p.assertContrast(t, "labels")
			p.screenshot(t, "desktop-labels")
		}},
		{"a trailing space is sent: san and a space lists a San … first", func(t *testing.T) {
			sent := p.log.len()
			p.typeText(t, "san ", 0)
			p.waitFor(t, "a name whose first word is San first",
				`/^San /.test(document.querySelector("#suggestion-0 .option-name")?.textContent ?? "")`)
			if reqs := p.log.since(sent); len(reqs) == 0 || !strings.Contains(reqs[len(reqs)-1].url, "q=san+") {
				t.Errorf("searches = %v, want the last for q=san+ (the space kept)", reqs)
			}
		}},
		{"the location button fills in the nearest city, then puts nearby cities first", func(t *testing.T) {
			p.typeText(t, "san", 0)
			p.waitOptions(t, 10)
			for _, r := range p.log.since(p.opened) {
				if strings.Contains(r.url, "lat=") {
					t.Errorf("%s: the page sent a location before the button was pressed", r.url)
				}
			}
			if got := p.log.count("/reverse"); got != 0 {
				t.Errorf("the page asked /reverse %d times before the button was pressed", got)
			}
			// In Santiago de Chile, 400 m from the Plaza de Armas.
			p.do(t, allowLocation(base), emulateLocation(-33.4489, -70.6693))
			sent := p.log.len()
			p.do(t, chromedp.Click(chromedp.ID("locate")))
			p.waitStatus(t, "You are in or near ")
			got := p.eval(t, `[document.getElementById("q").value, document.getElementById("status").textContent, document.getElementById("details").hidden, /^\?city=\d+$/.test(location.search)].join("|")`)
			if want := "Santiago|You are in or near Santiago, Chile. Cities near you come first.|false|true"; got != want {
				t.Errorf("after the button: field|status|details hidden|address is a city link = %q, want %q", got, want)
			}
			if got := p.eval(t, `document.getElementById("details").textContent`); !strings.Contains(got, "km from you") {
				t.Errorf("the details of the nearest city do not say how far it is: %q", got)
			}
			if got, want := p.log.lastURL("/reverse"), "/reverse?lat=-33.45&lon=-70.67&limit=1&dataset=small"; got != want {
				t.Errorf("the nearest city came from %q, want %q (the location rounded to 2 decimals)", got, want)
			}
			if reqs := p.log.since(sent); len(reqs) != 0 {
				t.Errorf("searches after the button = %v, want none: /reverse names the city", reqs)
			}
			if got := p.eval(t, `document.getElementById("locate").getAttribute("aria-pressed")`); got != "true" {
				t.Errorf("the location button's aria-pressed = %q, want true", got)
			}
			p.assertContrast(t, "the nearest city filled in")
			p.screenshot(t, "desktop-location-nearest")

			sent = p.log.len()
			p.typeText(t, "san", 0)
			p.waitFor(t, "a Chilean city first, with its distance",
				`/(^|, |· )Chile · [\d.,]+ km$/.test(document.querySelector("#suggestion-0 .option-where")?.textContent ?? "")`)
			if reqs := p.log.since(sent); len(reqs) != 1 || !strings.Contains(reqs[0].url, "lat=-33.45&lon=-70.67") {
				t.Errorf("searches after typing = %v, want one with the location rounded to 2 decimals", reqs)
			}
			if got := p.eval(t, `location.search`); got != "" {
				t.Errorf("typing left the address at %q, want the city's link gone", got)
			}
			p.assertListFits(t, true)
			p.assertContrast(t, "near the user")
			p.screenshot(t, "desktop-location")

			p.do(t, chromedp.Click(chromedp.ID("locate")))
			p.waitFor(t, "the distances gone", `!/ km$/.test(document.querySelector("#suggestion-0 .option-where")?.textContent ?? " km")`)
			if got := p.eval(t, `document.getElementById("locate").getAttribute("aria-pressed")`); got != "false" {
				t.Errorf("pressed again, the location button's aria-pressed = %q, want false", got)
			}
		}},
		{"a city's link shows it again by its id", func(t *testing.T) {
			p.open(t, base+"/?city=4294967295")
			p.waitStatus(t, "No city has this id in this dataset.")
			if got := p.eval(t, `document.getElementById("status").className + "|" + document.getElementById("details").hidden`); got != "status is-error|true" {
				t.Errorf("a link to an id the dataset does not have: status class|details hidden = %q, want an error and no details", got)
			}

			lookups := p.log.count(berlinPath)
			p.open(t, base+"/?city="+berlinID)
			p.waitFor(t, "Berlin's details", `!document.getElementById("details").hidden && document.getElementById("details-name").textContent === "Berlin"`)
			got := p.eval(t, `[document.getElementById("q").value, document.getElementById("status").textContent, document.getElementById("city-link").textContent].join("|")`)
			if want := "Berlin|Showing Berlin, Germany.|" + base + "/?city=" + berlinID; got != want {
				t.Errorf("the city's link shows field|status|link = %q, want %q", got, want)
			}
			if got := p.log.count(berlinPath); got != lookups+1 {
				t.Errorf("GET %s was asked %d times, want once", berlinPath, got-lookups)
			}
			if reqs := p.log.since(p.opened); len(reqs) != 0 {
				t.Errorf("searches of a page opened by a city's link = %v, want none", reqs)
			}
			p.assertContrast(t, "a city shown by its link")
			p.screenshot(t, "desktop-link")

		}},
		{"the language picker names countries in its language", func(t *testing.T) {
			if got := p.eval(t, `document.getElementById("lang").value`); got != "en" {
				t.Errorf("the picker shows %q, want en, the browser's language", got)
			}
			for _, r := range p.log.since(0) {
				if strings.Contains(r.url, "lang=") {
					t.Errorf("%s: lang sent before the picker was used; Accept-Language says the browser's", r.url)
				}
			}
			p.chooseLanguage(t, "de")
			p.waitFor(t, "Berlin in Deutschland", `document.getElementById("details").textContent.includes("Deutschland")`)
			if got, want := p.eval(t, `location.search + "|" + document.getElementById("details-country").lang`), "?city="+berlinID+"&lang=de|de"; got != want {
				t.Errorf("in German: address|the country's lang = %q, want %q", got, want)
			}
			if got, want := p.log.lastURL(berlinPath), berlinPath+"?dataset=small&lang=de"; got != want {
				t.Errorf("Berlin was looked up again as %q, want %q", got, want)
			}
			sent := p.log.len()
			p.typeText(t, "berl", 0)
			i := p.waitOption(t, "Berlin")
			if got := p.eval(t, fmt.Sprintf(`document.querySelector("#suggestion-%d .option-where").textContent`, i)); got != "Deutschland" {
				t.Errorf("Berlin's option in German says %q, want Deutschland", got)
			}
			if reqs := p.log.since(sent); len(reqs) == 0 || !strings.Contains(reqs[len(reqs)-1].url, "lang=de") {
				t.Errorf("searches in German = %v, want lang=de", reqs)
			}
			p.screenshot(t, "desktop-german")

			p.chooseLanguage(t, "ar")
			// The page's words stay English; the country's name reads right to left among them.
			p.waitFor(t, "Germany in Arabic, right to left", `Array.from(document.querySelectorAll("#suggestions .option-place"))
				.some(e => e.textContent === "ألمانيا" && e.lang === "ar" && getComputedStyle(e).direction === "rtl")`)
			p.assertListFits(t, true)
			p.assertContrast(t, "in Arabic")
			p.screenshot(t, "desktop-arabic")

			// The link keeps the language it was made in.
			p.open(t, base+"/?city="+berlinID+"&lang=de")
			p.waitFor(t, "Berlin in Deutschland", `document.getElementById("details-country")?.textContent === "Deutschland"`)
			if got := p.eval(t, `document.getElementById("lang").value`); got != "de" {
				t.Errorf("a link made in German opens with the picker on %q, want de", got)
			}

			// A page opened anew follows the browser again.
			p.open(t, base+"/")
			p.waitStatus(t, "Type at least 3 letters")
			if got := p.eval(t, `document.getElementById("lang").value + "|" + location.search`); got != "en|" {
				t.Errorf("opened anew: picker|address = %q, want en and no lang", got)
			}
		}},
		{"once the large dataset is imported, a click on it chooses it", func(t *testing.T) {
			mustRunCLI(t, "import", "--dataset", "large", "--file", large, "--data-dir", dir)
			poll.Until(t, 30*time.Second, "serve to pick up the large dataset", func() bool {
				_, body := get(t, base+"/config")
				return strings.Contains(body, `{"name":"large","available":true`)
			})
			configs := p.log.count("/config")
			p.do(t, chromedp.Click(chromedp.CSS(`input[value="large"] + span`)))
			p.waitFor(t, "the large choice enabled and chosen", `document.querySelector('input[value="large"]').checked`)
			if got := p.datasetChoice(t, "large"); got != "enabled|checked|every place" {
				t.Errorf("the large choice = %q, want it enabled and chosen", got)
			}
			if got := p.log.count("/config"); got != configs+1 {
				t.Errorf("the click read /config %d times, want once", got-configs)
			}
			p.do(t, chromedp.Click(chromedp.CSS(`input[value="small"] + span`)))
		}},
		{"switching to the large dataset changes the results", func(t *testing.T) {
			// Not searched in the large dataset yet: the switch must ask.
			p.typeText(t, "zur", 0)
			p.waitOption(t, "Zürich")
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
			p.waitFor(t, "the small dataset's names again", fmt.Sprintf(`Array.from(document.querySelectorAll("#suggestions .option-name"), e => e.textContent).join("\n") === %s`, jsonString(strings.Join(smallNames, "\n"))))
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
			if most := p.log.mostInWindow(p.opened, 3*time.Second); most > 5 {
				t.Errorf("since it opened, the page sent %d searches within 3 s, want at most the limit of 5", most)
			}
			t.Logf("%d letters typed 260 ms apart took %d searches", len(text), len(p.log.since(sent)))
		}},
		{"typing a whole city stops asking once an answer is complete", func(t *testing.T) {
			for _, text := range []string{"Rio de Janeiro", "Johannesburg"} {
				p.typeCity(t, text)
			}
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
			if got := p.eval(t, `document.getElementById("details").textContent`); strings.Contains(got, "Region code") {
				t.Errorf("the details show a region code, which means nothing to people: %q", got)
			}
			p.screenshot(t, "desktop-details-large")
			p.do(t, chromedp.Click(chromedp.CSS(`input[value="small"] + span`)))
		}},
		{"on a phone, suggestions fit below the status line and a tap picks São Paulo", func(t *testing.T) {
			p.do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch))
			p.typeText(t, "san", 0)
			p.waitOptions(t, 10)
			fit := p.assertListFits(t, false)
			t.Logf("on a phone, %d of %d suggestions in view, the others a scroll of the list away", fit.InView, fit.Options)
			p.screenshot(t, "phone-suggestions")
			p.typeText(t, "sao p", 0)
			i := p.waitOption(t, "São Paulo")
			p.assertOption(t, i, "", "São P", "Brazil")
			p.assertListFits(t, false)
			p.do(t, chromedp.Tap(chromedp.ID(fmt.Sprintf("suggestion-%d", i))))
			p.waitFor(t, "the details of São Paulo", `!document.getElementById("details").hidden && document.getElementById("details").textContent.includes("Brazil")`)
			p.screenshot(t, "phone-details")
			p.do(t, chromedp.EmulateViewport(1280, 800))
		}},
		{"text and controls have enough contrast, dark", func(t *testing.T) {
			p.do(t, emulateColorScheme("dark"))
			p.typeText(t, "san", 0)
			p.waitOptions(t, 10)
			p.do(t, chromedp.KeyEvent(kb.ArrowDown))
			p.assertContrast(t, "dark, the list open")
			p.screenshot(t, "desktop-dark")
			p.do(t, chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent(kb.Escape))
			p.waitStatus(t, "Type at least 3 letters")
			p.assertContrast(t, "dark, as the page opens")
			p.do(t, emulateColorScheme("light"))
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
			p.open(t, tight+"/")
			p.waitStatus(t, "Type at least 3 letters")
			p.typeText(t, "zur", 0)
			p.waitStatus(t, "You can only do 2 searches in 60 seconds. Retrying in ")
			if got := p.eval(t, `document.getElementById("status").className`); got != "status is-error" {
				t.Errorf("status class = %q, want it shown as an error", got)
			}
			var seconds int
			status := p.status(t)
			if _, err := fmt.Sscanf(status[strings.Index(status, "Retrying in "):], "Retrying in %d seconds.", &seconds); err != nil || seconds < 1 || seconds > 60 {
				t.Errorf("status %q does not say the seconds of Retry-After (1..60)", status)
			}
			p.assertContrast(t, "an error")
			p.screenshot(t, "desktop-429")
			time.Sleep(time.Second) // the page must wait for Retry-After, not retry at once
			if reqs := p.log.since(sent); len(reqs) != 1 || reqs[0].status != 429 {
				t.Errorf("searches after the 429 = %v, want the one that got it", reqs)
			}
		}},
	}
	steps = append(steps, memoryStoreSteps(t, p)...)
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

// memoryStoreSteps are the steps against a server over a memory store with
// cities made for them: names whose spans count differently in code points
// and UTF-16 units, alternate names, and a large dataset that disappears.
// The server lives as long as t.
func memoryStoreSteps(t *testing.T, p *page) []struct {
	name string
	run  func(t *testing.T)
} {
	var dropped atomic.Bool
	store := droppable(searchmemory.New(), &dropped)
	small := []search.City{
		// 🏙 is one code point and two UTF-16 units.
		{ID: 1, Name: "🏙Istanbul", Slug: search.Slug("🏙Istanbul"), Country: "Turkey", CountryCode: "tr", Subcountry: "Istanbul"},
		{ID: 2, Name: "Köln", Slug: search.Slug("Köln"), Country: "Germany", CountryCode: "de", Subcountry: "North Rhine-Westphalia",
			AltNames: []string{"Cologne", "Colonia"}},
	}
	large := []search.City{{ID: 3, Name: "Istres", Slug: "istres", Country: "France", CountryCode: "fr"}}
	for d, cities := range map[search.Dataset][]search.City{search.Small: small, search.Large: large} {
		if _, err := store.Load(t.Context(), d, &search.SliceReader{Cities: cities}, search.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(server.New(search.NewService(store), server.WithDemoPage(server.PageConfig{})))
	t.Cleanup(ts.Close)
	base := ts.URL
	return []struct {
		name string
		run  func(t *testing.T)
	}{
		{"a city found by another name says which, with that name marked", func(t *testing.T) {
			p.open(t, base+"/")
			p.waitStatus(t, "Type at least 3 letters")
			p.typeText(t, "colog", 0)
			i := p.waitOption(t, "Köln")
			got := p.eval(t, fmt.Sprintf(`(() => {
				const li = document.getElementById("suggestion-%d");
				const matched = li.querySelector(".option-matched");
				return [li.querySelectorAll(".option-name mark").length, matched.textContent, matched.querySelector("mark").textContent].join("|");
			})()`, i))
			if want := "0| — matched Cologne|Colog"; got != want {
				t.Errorf("Köln's option: marks in the name|the matched line|its mark = %q, want %q", got, want)
			}
			p.assertContrast(t, "a match by another name")
			p.screenshot(t, "desktop-alternate-name")
		}},
		{"the match is highlighted by code points, not UTF-16 units", func(t *testing.T) {
			// The API's span (1..4) must mark "Ist", not half the emoji and "Is".
			p.typeText(t, "ist", 0)
			p.assertOption(t, p.waitOption(t, "🏙Istanbul"), "🏙", "Ist", "Turkey")
		}},
		{"a dataset that disappears is said so in plain words and disabled", func(t *testing.T) {
			if got := p.datasetChoice(t, "large"); got != "enabled|unchecked|every place" {
				t.Fatalf("the large choice = %q, want it enabled before the dataset disappears", got)
			}
			dropped.Store(true)
			configs := p.log.count("/config")
			p.do(t, chromedp.Click(chromedp.CSS(`input[value="large"] + span`)))
			p.waitStatus(t, "The Large dataset is not available yet. Choose another dataset.")
			if got := p.eval(t, `document.getElementById("status").className`); got != "status is-error" {
				t.Errorf("status class = %q, want it shown as an error", got)
			}
			if got := p.log.count("/config"); got != configs+1 {
				t.Errorf("the page read /config %d times after the 503, want once", got-configs)
			}
			if got := p.datasetChoice(t, "large"); got != "disabled|checked|not available yet" {
				t.Errorf("the large choice = %q, want it disabled and saying it is not available yet", got)
			}
			p.assertContrast(t, "a dataset not available")
			p.screenshot(t, "desktop-dataset-unavailable")

			// Typing on asks nothing of the dataset that is not there.
			sent := p.log.len()
			p.typeText(t, "istanbul", 0)
			p.waitFor(t, "the input to hold istanbul", `document.getElementById("q").value === "istanbul"`)
			p.do(t, chromedp.KeyEvent(kb.Enter))
			p.waitStatus(t, "The Large dataset is not available yet.")
			if reqs := p.log.since(sent); len(reqs) != 0 {
				t.Errorf("searches of the disabled dataset: %v, want none", reqs)
			}
			p.do(t, chromedp.Click(chromedp.CSS(`input[value="small"] + span`)))
			p.waitOption(t, "🏙Istanbul")
		}},
	}
}

// droppable returns a store over s whose large dataset looks never
// imported once dropped is set, as a MongoDB dataset does when its
// collection is dropped under a running server. It keeps every feature of
// s, typo search included (see storetest.Wrap).
func droppable(s search.Store, dropped *atomic.Bool) search.Store {
	return storetest.Wrap(s, func(_ context.Context, c storetest.Call) error {
		if c.Dataset == search.Large && c.Method != "Load" && dropped.Load() {
			return search.EmptyDatasetError(c.Dataset)
		}
		return nil
	})
}

// Berlin, as GeoNames numbers it: the small dataset's cities have GeoNames ids.
const (
	berlinID   = "2950159"
	berlinPath = "/cities/" + berlinID
)

// allowLocation lets the pages of origin have the user's location without
// asking, as if the user had allowed it.
func allowLocation(origin string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: "geolocation"}, Setting: browser.PermissionSettingGranted, Origin: origin,
		})
		return chromedp.Void{}, err
	}
}

// emulateLocation makes the browser report the user at lat, lon.
func emulateLocation(lat, lon float64) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		accuracy := 10.0
		_, err := cdp.Call(ctx, t, emulation.SetGeolocationOverride, emulation.SetGeolocationOverrideParams{
			Latitude: &lat, Longitude: &lon, Accuracy: &accuracy,
		})
		return chromedp.Void{}, err
	}
}

// emulateColorScheme makes the page see prefers-color-scheme: scheme.
func emulateColorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return chromedp.Void{}, err
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
	// opened is the first search of the page that the tab shows now: a
	// page paces its searches from what it sent itself.
	opened int
}

// open loads url in the tab.
func (p *page) open(t *testing.T, url string) {
	t.Helper()
	p.opened = p.log.len()
	p.do(t, chromedp.Navigate(url))
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
	log := &networkLog{statuses: make(map[string]int64), counts: make(map[string]int), lastURLs: make(map[string]string), paths: make(map[network.RequestID]string)}
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

// titles returns the full text of the options named name: the name and
// what its label adds, "London, England".
func (p *page) titles(t *testing.T, name string) []string {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`Array.from(document.querySelectorAll("#suggestions .option"))
		.filter(li => li.querySelector(".option-name").textContent === %s)
		.map(li => li.querySelector(".option-title").textContent)`, jsonString(name))))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// chooseLanguage picks tag in the language picker, as a person choosing it
// from the list does: the value changes, then the change event fires.
func (p *page) chooseLanguage(t *testing.T, tag string) {
	t.Helper()
	p.do(t, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`(() => { const s = document.getElementById("lang"); s.value = %s; s.dispatchEvent(new Event("change")); })()`, jsonString(tag))))
	if got := p.eval(t, `document.getElementById("lang").value`); got != tag {
		t.Fatalf("the picker shows %q, want %q: it does not offer it", got, tag)
	}
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

// waitOptions waits until the list shows n options.
func (p *page) waitOptions(t *testing.T, n int) {
	t.Helper()
	p.waitFor(t, fmt.Sprintf("%d suggestions", n), fmt.Sprintf(
		`!document.getElementById("suggestions").hidden && document.querySelectorAll("#suggestions [role=option]").length === %d`, n))
}

// datasetChoice describes the radio button of dataset d and its note, as
// "enabled|checked|cities over 15,000".
func (p *page) datasetChoice(t *testing.T, d string) string {
	t.Helper()
	return p.eval(t, fmt.Sprintf(`(() => {
		const radio = document.querySelector('input[name="dataset"][value=%s]');
		return [radio.disabled ? "disabled" : "enabled", radio.checked ? "checked" : "unchecked",
			radio.closest("label").querySelector(".dataset-note").textContent].join("|");
	})()`, jsonString(d)))
}

// listFit is what the open list shows of its options (see listFitJS).
type listFit struct {
	Options  int      // how many options the list has
	InView   int      // how many are whole in view without scrolling anything
	Scrolls  bool     // whether the list scrolls inside itself
	Problems []string // what a person could not see
}

// listFitJS checks that every option of the open list can be seen: the
// list's box lies inside what the screen shows, so that an option is
// either in view or a scroll of the list itself away, and it neither
// covers the status line nor lets anything else cover it.
const listFitJS = `(() => {
	const list = document.getElementById("suggestions");
	const status = document.getElementById("status");
	const vv = window.visualViewport;
	const top = vv ? vv.offsetTop : 0, left = vv ? vv.offsetLeft : 0;
	const view = { top, left, bottom: top + (vv ? vv.height : innerHeight), right: left + (vv ? vv.width : innerWidth) };
	const inside = (r, b) => r.top >= b.top - 0.5 && r.bottom <= b.bottom + 0.5 && r.left >= b.left - 0.5 && r.right <= b.right + 0.5;
	const meets = (a, b) => a.top < b.bottom && b.top < a.bottom && a.left < b.right && b.left < a.right;
	const px = (r) => "(" + [r.left, r.top, r.right, r.bottom].map(Math.round).join(", ") + ")";
	const box = list.getBoundingClientRect();
	const port = { top: box.top + list.clientTop, left: box.left + list.clientLeft };
	port.bottom = port.top + list.clientHeight;
	port.right = port.left + list.clientWidth;
	const options = Array.from(list.querySelectorAll("[role=option]"));
	const inView = options.filter((o) => inside(o.getBoundingClientRect(), port) && inside(o.getBoundingClientRect(), view)).length;
	const scrolls = list.scrollHeight > list.clientHeight + 1;
	const problems = [];
	if (list.hidden) problems.push("the list is not open");
	if (!inside(box, view)) problems.push("the list's box " + px(box) + " is not inside the viewport " + px(view));
	if (scrolls && !/auto|scroll/.test(getComputedStyle(list).overflowY)) problems.push("the options overflow a list that does not scroll");
	const s = status.getBoundingClientRect();
	if (meets(s, box)) problems.push("the list " + px(box) + " covers the status line " + px(s));
	if (!inside(s, view)) problems.push("the status line " + px(s) + " is out of view " + px(view));
	const hit = document.elementFromPoint(s.left + s.width / 2, s.top + s.height / 2);
	if (hit && !status.contains(hit)) problems.push("the status line is covered by " + hit.tagName + (hit.id ? "#" + hit.id : ""));
	return { options: options.length, inView, scrolls, problems };
})()`

// assertListFits checks that a person sees every option of the open list
// (see listFitJS); allInView asks for every option in view at once, with
// no scrolling at all.
func (p *page) assertListFits(t *testing.T, allInView bool) listFit {
	t.Helper()
	fit, err := chromedp.Run(p.ctx, chromedp.Evaluate[listFit](listFitJS))
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range fit.Problems {
		t.Error(problem)
	}
	if allInView && fit.InView != fit.Options {
		t.Errorf("%d of %d suggestions are in view, want all without scrolling", fit.InView, fit.Options)
	}
	return fit
}

// contrast is one contrast ratio that the page must meet (see contrastJS).
type contrast struct {
	Kind  string // "text" or "control"
	What  string // the element and what of it: a CSS-like name
	Ratio float64
	Need  float64
}

// contrastJS computes, from computed styles, the WCAG 2.x contrast ratio
// of every text shown (4.5:1, or 3:1 for large text) and of what marks out
// each control and its state (3:1): the input's border and focus ring, the
// location button's border and focus ring, the dataset choices' borders and
// focus ring, the language picker's border and focus ring, the list's border, the active option's bar. A colour with alpha is composited over the background
// behind it: the element's background and its ancestors', walked up to the
// first opaque one. Disabled choices are exempt, as WCAG exempts inactive
// controls.
const contrastJS = `(() => {
	const parse = (s) => {
		const m = /rgba?\(([^)]*)\)/.exec(s || "");
		if (!m) return null;
		const v = m[1].split(/[\s,\/]+/).filter(Boolean).map(parseFloat);
		return { r: v[0], g: v[1], b: v[2], a: v.length > 3 ? v[3] : 1 };
	};
	const over = (top, bottom) => {
		const a = top.a + bottom.a * (1 - top.a);
		const mix = (k) => (a === 0 ? 0 : (top[k] * top.a + bottom[k] * bottom.a * (1 - top.a)) / a);
		return { r: mix("r"), g: mix("g"), b: mix("b"), a };
	};
	const luminance = (c) => {
		const lin = (v) => ((v /= 255) <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4));
		return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
	};
	const ratio = (x, y) => {
		const [hi, lo] = [luminance(x), luminance(y)].sort((p, q) => q - p);
		return (hi + 0.05) / (lo + 0.05);
	};
	const background = (el) => {
		const layers = [];
		for (let e = el; e; e = e.parentElement) {
			const c = parse(getComputedStyle(e).backgroundColor);
			if (c && c.a > 0) {
				layers.push(c);
				if (c.a >= 1) break;
			}
		}
		return layers.reverse().reduce((bg, c) => over(c, bg), { r: 255, g: 255, b: 255, a: 1 });
	};
	const opacity = (el) => {
		let o = 1;
		for (let e = el; e; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity);
		return o;
	};
	const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
		(typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\s+/).join(".") : "");
	const shown = (el) => el.getClientRects().length > 0 && el.checkVisibility({ visibilityProperty: true });
	const inactive = (el) => !!el.closest("label")?.querySelector("input:disabled");
	const out = [];
	const add = (kind, what, fg, backgrounds, need) => {
		for (const bg of backgrounds) out.push({ kind, what, ratio: ratio(over(fg, bg), bg), need });
	};

	for (const el of document.body.querySelectorAll("*")) {
		if (!shown(el) || inactive(el)) continue;
		if (!Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim())) continue;
		const cs = getComputedStyle(el);
		const fg = parse(cs.color);
		fg.a *= opacity(el);
		const size = parseFloat(cs.fontSize);
		const large = size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700);
		add("text", name(el), fg, [background(el)], large ? 3 : 4.5);
	}
	const q = document.getElementById("q");
	if (!q.value) {
		const ps = getComputedStyle(q, "::placeholder");
		const fg = parse(ps.color);
		fg.a *= parseFloat(ps.opacity) * opacity(q);
		add("text", "#q::placeholder", fg, [background(q)], 4.5);
	}

	// edge checks a border against the colours on both of its sides.
	const edge = (el, what) => add("control", what + " border", parse(getComputedStyle(el).borderTopColor), [background(el), background(el.parentElement)], 3);
	// ring checks a focus outline against the colour around it.
	const ring = (el, what) => {
		const cs = getComputedStyle(el);
		if (cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) > 0) add("control", what + " focus ring", parse(cs.outlineColor), [background(el.parentElement)], 3);
	};
	edge(q, "#q");
	const lang = document.getElementById("lang");
	edge(lang, "#lang");
	if (lang.matches(":focus-visible")) ring(lang, "#lang");
	const locate = document.getElementById("locate");
	if (shown(locate)) {
		edge(locate, "#locate" + (locate.getAttribute("aria-pressed") === "true" ? " (pressed)" : ""));
		if (locate.matches(":focus-visible")) ring(locate, "#locate");
	}
	if (document.activeElement === q) ring(q, "#q");
	for (const radio of document.querySelectorAll('input[name="dataset"]:enabled')) {
		const box = radio.nextElementSibling;
		const what = "dataset choice" + (radio.checked ? " (chosen)" : "");
		edge(box, what);
		if (radio.matches(":focus-visible")) ring(box, what);
	}
	const list = document.getElementById("suggestions");
	if (shown(list)) {
		edge(list, "#suggestions");
		add("control", "#suggestions border on the page", parse(getComputedStyle(list).borderTopColor), [background(document.body)], 3);
	}
	const active = list.querySelector('[aria-selected="true"]');
	if (active && shown(active)) {
		add("control", "the active option's bar", parse(getComputedStyle(active).boxShadow), [background(active)], 3);
	}
	return out;
})()`

// assertContrast checks every contrast of the page as it is now (see
// contrastJS) and logs the lowest of each element, for people to read.
func (p *page) assertContrast(t *testing.T, state string) {
	t.Helper()
	all, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]contrast](contrastJS))
	if err != nil {
		t.Fatal(err)
	}
	lowest := make(map[string]contrast)
	for _, c := range all {
		key := c.Kind + " " + c.What
		if l, ok := lowest[key]; !ok || c.Ratio < l.Ratio {
			lowest[key] = c
		}
	}
	keys := slices.Sorted(maps.Keys(lowest))
	if len(keys) == 0 {
		t.Fatalf("%s: no text or control to check", state)
	}
	var lines []string
	for _, k := range keys {
		c := lowest[k]
		lines = append(lines, fmt.Sprintf("%s %.2f:1", k, c.Ratio))
		if c.Ratio < c.Need {
			t.Errorf("%s: the %s %s has a contrast of %.2f:1, want at least %.1f:1", state, c.Kind, c.What, c.Ratio, c.Need)
		}
	}
	t.Logf("contrast, %s:\n\t%s", state, strings.Join(lines, "\n\t"))
}

// typeCity types text at 260 ms a key, slower than the debounce so that
// every letter wants a search, waits for the city it names, and checks
// that once an answer is complete (Search-Complete: ?1) the page asks
// nothing for longer texts of the same word, filtering that answer itself.
// It logs the searches before and after the first complete answer.
func (p *page) typeCity(t *testing.T, text string) {
	t.Helper()
	sent := p.log.len()
	p.typeText(t, text, 260*time.Millisecond)
	p.waitOption(t, text)
	p.waitStatus(t, "matching '"+text+"'")
	p.assertNo429(t)
	before, after, completeAt := 0, 0, ""
	var asked []string
	for _, r := range p.log.since(sent) {
		u, err := url.Parse(r.url)
		if err != nil {
			t.Fatal(err)
		}
		q := strings.ToLower(u.Query().Get("q"))
		asked = append(asked, fmt.Sprintf("%q %s", q, r.complete))
		if completeAt != "" {
			after++
			if strings.HasPrefix(q, completeAt) && !strings.Contains(q[len(completeAt):], " ") {
				t.Errorf("the page asked for %q after the answer for %q was complete", q, completeAt)
			}
		} else {
			before++
		}
		if r.complete == "?1" && completeAt == "" {
			completeAt = q
		}
	}
	if completeAt == "" {
		t.Fatalf("typing %q, no answer was complete: %s", text, strings.Join(asked, ", "))
	}
	t.Logf("%d letters of %q typed 260 ms apart took %d searches: %d up to the first complete answer (for %q), %d after it: %s",
		len([]rune(text)), text, before+after, before, completeAt, after, strings.Join(asked, ", "))
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
	statuses map[string]int64  // the latest status of each other path
	counts   map[string]int    // how many requests each other path had
	lastURLs map[string]string // the latest request URI of each other path
	paths    map[network.RequestID]string
	foreign  []string
	errs     []string
}

type searchRequest struct {
	id       network.RequestID
	url      string
	at       time.Duration // browser's monotonic clock
	status   int64         // 0 until the answer comes
	complete string        // the answer's Search-Complete field
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
		l.counts[u.Path]++
		l.lastURLs[u.Path] = u.RequestURI()
	case *network.EventResponseReceived:
		for i := range l.searches {
			if l.searches[i].id == ev.RequestID {
				l.searches[i].status = ev.Response.Status
				for k, v := range ev.Response.Headers {
					if strings.EqualFold(k, "Search-Complete") {
						l.searches[i].complete = fmt.Sprint(v)
					}
				}
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

// lastURL returns the request URI of the latest request for path.
func (l *networkLog) lastURL(path string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastURLs[path]
}

// count returns how many requests for path the tab sent.
func (l *networkLog) count(path string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[path]
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

// mostInWindow returns the most searches from the i-th on sent within
// any span of window.
func (l *networkLog) mostInWindow(i int, window time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	most := 0
	searches := l.searches[i:]
	for i, first := range searches {
		n := 0
		for _, r := range searches[i:] {
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
