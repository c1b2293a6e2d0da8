// cityfinder's demo page: an autocomplete box over GET /search that follows
// the WAI-ARIA combobox pattern and paces its requests under the server's
// rate limit, which it learns from GET /config or, failing that, from the
// RateLimit-Policy header of the answers. /config also says which datasets
// can be searched; the page reads it again when a search says a dataset is
// not available. An answer with Search-Complete: ?1 holds every city that
// its text matches: the page filters it for longer texts of the same word
// instead of asking again.
//
// A chosen city is shown by its label (unique within the answer) and gets a
// link, /?city=ID, that shows it again through GET /cities/{id}; "Use my
// location" fills in the nearest city through GET /reverse and puts nearby
// cities first in searches from then on. Names come in the browser's
// languages (its Accept-Language) until the picker chooses one, which the
// page then sends as lang= on every request.
"use strict";

(() => {
  // How long the input must rest before a search goes out: ordinary typing
  // then costs one request per pause, not one per key.
  const DEBOUNCE_MS = 200;
  // Added to the window when pacing: timers fire late, and the server starts
  // a request's window when it arrives, after the page sent it.
  const SLACK_MS = 100;
  // Until an answer has been timed, how long a request may take to reach the
  // server, for requests aborted before their answer came back.
  const DEFAULT_RTT_MS = 1000;
  // Answers kept, so that deleting a letter costs no request.
  const CACHE_SIZE = 100;
  // Complete answers (Search-Complete: ?1) kept to filter longer texts from.
  const COMPLETE_SIZE = 20;
  // Below these, "Searching…" and pacing notes would only flicker.
  const BUSY_NOTE_MS = 300;
  // The open list ends this far above the bottom of what the screen shows,
  // and is never made shorter than LIST_MIN_PX (about three options): with
  // less room than that, the page scrolls to make it.
  const LIST_MARGIN_PX = 8;
  const LIST_MIN_PX = 140;
  // What the page says, in its own words, when a search fails on the
  // server's side or never reaches it: the server's words for those are
  // meant for whoever runs it.
  const UNAVAILABLE = "Search is unavailable right now. Try again in a moment.";
  const UNREACHABLE = "The server could not be reached. Check your connection and try again.";
  // The location goes to the server rounded to this many decimals (about
  // a kilometre): enough to put nearby cities first, and no more precise
  // than that needs.
  const LOCATION_DECIMALS = 2;
  // How often a request that waits for the pacer looks again while a
  // search in flight holds the last slot.
  const PACED_POLL_MS = 50;

  const $ = (id) => document.getElementById(id);
  const form = $("search");
  const input = $("q");
  const list = $("suggestions");
  const locate = $("locate");
  const status = $("status");
  const details = $("details");
  const detailsName = $("details-name");
  const detailsList = $("details-list");
  const langPicker = $("lang");

  // Pacer keeps the page within max requests per window, counted the way the
  // server counts (a sliding window): a request may go out when fewer than
  // max earlier ones still count. A request counts from when the server saw
  // it, which is no later than when its answer came back; while it is in
  // flight it counts without end.
  class Pacer {
    constructor() {
      this.max = 0; // 0: no limit known
      this.windowMs = 0;
      this.source = "";
      this.slots = []; // {sent, until}: until is when the request stops counting
      this.blockedUntil = 0; // from a 429's Retry-After
      this.rttMs = 0; // the slowest answer seen
    }

    setLimit(max, windowMs, source) {
      this.max = max;
      this.windowMs = windowMs;
      this.source = source;
    }

    // learn adopts a RateLimit-Policy header ("search";q=5;w=3) when /config
    // gave no limit, or when the server's limit changed since it did.
    learn(header) {
      if (!header) return;
      const q = /;\s*q=(\d+)/.exec(header);
      const w = /;\s*w=(\d+)/.exec(header);
      if (!q || !w) return;
      const max = Number(q[1]);
      const windowS = Number(w[1]);
      if (max < 1 || windowS < 1) return;
      if (this.source === "config" && max === this.max && windowS === Math.ceil(this.windowMs / 1000)) return;
      this.setLimit(max, windowS * 1000, "header");
    }

    // start records a request going out now; call the returned function
    // when it settles, with whether it was aborted.
    start(now) {
      const slot = { sent: now, until: Infinity };
      this.slots.push(slot);
      return (settled, aborted) => {
        let seen = settled; // the server saw it before its answer left
        if (aborted) {
          // It may still be on its way: allow for the slowest trip seen.
          seen = Math.max(settled, slot.sent + (this.rttMs || DEFAULT_RTT_MS));
        } else {
          this.rttMs = Math.max(this.rttMs, settled - slot.sent);
        }
        slot.until = seen + this.windowMs + SLACK_MS;
      };
    }

    block(until) {
      this.blockedUntil = Math.max(this.blockedUntil, until);
    }

    // delay returns how long the next request must wait: 0 to go now,
    // Infinity until a request in flight settles.
    delay(now) {
      let wait = Math.max(0, this.blockedUntil - now);
      this.slots = this.slots.filter((s) => s.until > now);
      if (this.max > 0 && this.slots.length >= this.max) {
        const untils = this.slots.map((s) => s.until).sort((a, b) => a - b);
        wait = Math.max(wait, untils[this.slots.length - this.max] - now);
      }
      return wait;
    }

    describe() {
      const seconds = Math.round(this.windowMs / 100) / 10;
      return `${this.max} ${this.max === 1 ? "search" : "searches"} in ${seconds} ${seconds === 1 ? "second" : "seconds"}`;
    }
  }

  const config = { minLetters: 3, loaded: false };
  const pacer = new Pacer();
  const cache = new Map(); // "dataset\ntext" → cities, oldest first
  const completes = []; // {key, folded, cities}: answers that hold every match, newest last

  const state = {
    seq: 0, // the latest query asked for
    shown: 0, // the query whose answer is on screen
    near: null, // {lat, lon}: where the user is, once they asked for it
    lang: "", // the lang parameter: "" while the page follows the browser's languages
    picked: null, // {city, dataset}: the city the field and the details show
    want: null, // {text, dataset, near, lang, seq}: waiting for the pacer
    inflight: null, // {controller, seq}
    results: [],
    active: -1,
    debounceTimer: 0,
    pumpTimer: 0,
    noteTimer: 0,
  };

  // --- status line -------------------------------------------------------

  function setStatus(text, kind = "") {
    clearTimeout(state.noteTimer);
    status.textContent = text;
    status.className = kind ? `status is-${kind}` : "status";
    fitList(); // the list starts below the status line, which may have grown
  }

  // note shows a passing remark (searching, pacing) unless an answer comes
  // first, so that quick answers do not make the line flicker.
  function note(text) {
    clearTimeout(state.noteTimer);
    state.noteTimer = setTimeout(() => {
      status.textContent = text;
      status.className = "status is-busy";
      fitList();
    }, BUSY_NOTE_MS);
  }

  function hint() {
    const radio = checkedDataset();
    if (radio && radio.disabled) setStatus(notAvailable(radio), "error");
    else setStatus(`Type at least ${config.minLetters} letters to see matching cities.`);
  }

  // --- the list ------------------------------------------------------------

  function isOpen() {
    return !list.hidden;
  }

  function openList() {
    if (state.results.length === 0) return;
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
    fitList();
  }

  // fitList makes the open list end above the bottom of what the screen
  // shows (on a phone, above the on-screen keyboard too), so that every
  // option is either in view or reachable by scrolling the list itself.
  function fitList() {
    if (list.hidden) return;
    const vv = window.visualViewport;
    const bottom = vv ? vv.offsetTop + vv.height : window.innerHeight;
    const room = Math.floor(bottom - list.getBoundingClientRect().top - LIST_MARGIN_PX);
    list.style.maxHeight = `${Math.max(room, LIST_MIN_PX)}px`;
    if (room < LIST_MIN_PX) list.scrollIntoView({ block: "nearest" });
  }

  function closeList() {
    list.hidden = true;
    input.setAttribute("aria-expanded", "false");
    setActive(-1);
  }

  // setActive makes option i the active one (-1: none); scroll brings it
  // into view, which the mouse, pointing at it already, does not need.
  function setActive(i, scroll = true) {
    const old = state.active >= 0 ? list.children[state.active] : null;
    if (old) old.setAttribute("aria-selected", "false");
    state.active = i;
    const now = i >= 0 ? list.children[i] : null;
    if (now) {
      now.setAttribute("aria-selected", "true");
      input.setAttribute("aria-activedescendant", now.id);
      if (scroll) now.scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function move(step) {
    const n = state.results.length;
    if (n === 0) return;
    if (!isOpen()) {
      openList();
      setActive(step > 0 ? 0 : n - 1);
      return;
    }
    // From nothing, Down goes to the first and Up to the last; both wrap.
    const from = state.active < 0 ? (step > 0 ? -1 : n) : state.active;
    setActive((from + step + n) % n);
  }

  // highlighted appends name to parent with its matched span in a <mark>.
  // The API counts the span in code points; JavaScript strings count UTF-16
  // units, so the name is split into code points first.
  function highlighted(parent, name, match) {
    const chars = Array.from(name);
    const start = Math.min(Math.max(match?.start ?? 0, 0), chars.length);
    const end = Math.min(Math.max(match?.end ?? 0, start), chars.length);
    if (end === start) {
      parent.textContent = name;
      return;
    }
    const mark = document.createElement("mark");
    mark.textContent = chars.slice(start, end).join("");
    parent.append(chars.slice(0, start).join(""), mark, chars.slice(end).join(""));
  }

  // labelDetail is what the city's label says after its name: as much of
  // the region and country as tells it apart from the other hits of its
  // answer ("England" for London), "" when the name alone does. The API's
  // label always starts with the name and then ", ".
  function labelDetail(city) {
    const label = typeof city.label === "string" ? city.label : "";
    const head = `${city.name}, `;
    return label.startsWith(head) ? label.slice(head.length) : "";
  }

  // labelText is the city's label, the name alone when the API gave none.
  function labelText(city) {
    return typeof city.label === "string" && city.label ? city.label : city.name;
  }

  // where is the country, unless the label already ends with it ("Victoria,
  // Malta"). Region codes ("Q6", "07") mean nothing to people: a region
  // appears only by its name, in the label, when it tells cities apart.
  function where(city) {
    const country = city.country || "";
    const detail = labelDetail(city);
    return detail === country || detail.endsWith(`, ${country}`) ? "" : country;
  }

  // placeText is the label and the country, as a sentence names the city.
  function placeText(city) {
    return [labelText(city), where(city)].filter(Boolean).join(", ");
  }

  function distance(city) {
    const km = city.distance_km;
    if (typeof km !== "number") return "";
    return km < 10 ? `${km.toFixed(1)} km` : `${Math.round(km).toLocaleString("en")} km`;
  }

  // matchedName is the other name of the city that the query matched
  // ("Cologne" for Köln), with its span; null when it matched the name.
  function matchedName(city) {
    const m = city.matched;
    return m && typeof m.name === "string" && m.name ? m : null;
  }

  function option(city, i) {
    const li = document.createElement("li");
    li.id = `suggestion-${i}`;
    li.className = "option";
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", "false");
    const title = document.createElement("span");
    title.className = "option-title";
    const name = document.createElement("span");
    name.className = "option-name";
    name.dir = "auto"; // a name in Arabic reads right to left in an English list, and the reverse
    const alt = matchedName(city);
    highlighted(name, city.name, alt ? null : city.match);
    title.append(name);
    const detail = labelDetail(city);
    if (detail) {
      // London, England: the label's rest, only as much as tells it apart.
      const rest = document.createElement("span");
      rest.className = "option-detail";
      rest.textContent = `, ${detail}`;
      title.append(rest);
    }
    if (alt) {
      // Köln — matched Cologne: why a name the user did not type came up.
      const why = document.createElement("span");
      why.className = "option-matched";
      const altName = document.createElement("span");
      altName.className = "option-alt";
      highlighted(altName, alt.name, alt);
      why.append(" — matched ", altName);
      title.append(why);
    }
    // How far it is, when the search was near the user, comes after: on a
    // laptop's one line, the region and country end in an ellipsis first.
    const place = document.createElement("span");
    place.className = "option-where";
    const region = document.createElement("span");
    region.className = "option-place";
    region.dir = "auto";
    region.lang = namesLang();
    region.textContent = where(city);
    place.append(region);
    if (distance(city)) {
      const km = document.createElement("span");
      km.className = "option-km";
      km.textContent = `${region.textContent ? " · " : ""}${distance(city)}`;
      place.append(km);
    }
    li.append(title, place);
    // mousedown would take the focus from the input and close the list.
    li.addEventListener("mousedown", (e) => e.preventDefault());
    li.addEventListener("click", () => pick(i));
    li.addEventListener("mousemove", () => {
      if (state.active !== i) setActive(i, false);
    });
    return li;
  }

  function showResults(text, cities) {
    state.results = cities;
    state.active = -1;
    input.removeAttribute("aria-activedescendant");
    list.replaceChildren(...cities.map(option));
    if (cities.length === 0) {
      closeList();
      setStatus(`No cities matching '${text}'`);
      return;
    }
    setStatus(`${describeResults(text, cities)} ${howToChoose()}`);
    openList(); // after the status line, which the list goes below
  }

  // howToChoose tells keyboard users their keys, and people on a touch
  // screen, who have none, to tap.
  function howToChoose() {
    return window.matchMedia("(pointer: coarse)").matches ? "Tap one to choose it." : "Use ↑ ↓ and Enter to choose.";
  }

  // describeResults says what the list shows: prefix matches, or the
  // spellings that typo matches were corrected to.
  function describeResults(text, cities) {
    const exact = cities.filter((c) => !(c.edits > 0)).length;
    const corrected = [...new Set(cities.filter((c) => c.edits > 0 && c.corrected).map((c) => c.corrected))];
    const count = (n) => `${n} ${n === 1 ? "city" : "cities"}`;
    if (corrected.length === 0) return `${count(cities.length)} matching '${text}'.`;
    const spelling = corrected.length === 1 ? corrected[0] : `${corrected[0]} and similar spellings`;
    if (exact === 0) return `No city matches '${text}'. Showing results for ${spelling}.`;
    return `${count(exact)} matching '${text}', then results for ${spelling}.`;
  }

  // --- details -------------------------------------------------------------

  function coordinate(value, pos, neg) {
    return `${Math.abs(value).toFixed(4)}° ${value < 0 ? neg : pos}`;
  }

  function pick(i) {
    const city = state.results[i];
    if (!city) return;
    cancelPending(); // an answer still on its way must not reopen the list
    showCity(city, dataset(), `Picked ${placeText(city)}.`);
  }

  // showCity puts city, of dataset d, in the field and its details below,
  // says so on the status line, and makes the address the city's link.
  function showCity(city, d, said) {
    state.picked = { city, dataset: d };
    input.value = labelText(city);
    closeList();
    const country = document.createElement("span");
    country.id = "details-country";
    country.lang = namesLang();
    country.textContent = city.country || "";
    const rows = [["Country", city.country_code ? [country, ` (${city.country_code.toUpperCase()})`] : [country]]];
    if (city.subcountry) rows.push(["Region", city.subcountry]);
    const alt = matchedName(city);
    if (alt) rows.push(["Also called", alt.name]);
    if (city.population) rows.push(["Population", city.population.toLocaleString("en")]);
    if (distance(city)) rows.push(["Distance", `${distance(city)} from you`]);
    if (typeof city.lat === "number" && typeof city.lon === "number") {
      rows.push(["Coordinates", `${coordinate(city.lat, "N", "S")}, ${coordinate(city.lon, "E", "W")}`]);
    }
    if (city.id) {
      rows.push(["GeoNames id", String(city.id)]);
      const link = document.createElement("a");
      link.id = "city-link";
      link.href = cityLink(city.id, d);
      link.textContent = link.href;
      rows.push(["Link", link]);
    }
    detailsName.textContent = city.name;
    detailsList.replaceChildren(
      ...rows.flatMap(([term, value]) => {
        const dt = document.createElement("dt");
        dt.textContent = term;
        const dd = document.createElement("dd");
        dd.append(...[value].flat());
        return [dt, dd];
      }),
    );
    for (const el of [detailsName, country, ...detailsList.querySelectorAll("dd")]) el.dir = "auto";
    details.hidden = false;
    if (city.id) history.replaceState(null, "", cityLink(city.id, d));
    setStatus(said);
  }

  // cityLink is the address of the page that shows the city of id again:
  // its dataset when not the default one, and the language when the
  // picker chose one.
  function cityLink(id, d) {
    const params = new URLSearchParams({ city: String(id) });
    if (d !== "small") params.set("dataset", d);
    if (state.lang) params.set("lang", state.lang);
    return `${location.pathname}?${params}`;
  }

  // forgetCity clears the picked city: the field no longer names it, nor
  // does the address.
  function forgetCity() {
    details.hidden = true;
    if (!state.picked) return;
    state.picked = null;
    const params = state.lang ? `?${new URLSearchParams({ lang: state.lang })}` : "";
    history.replaceState(null, "", `${location.pathname}${params}`);
  }

  // showById fills the field from GET /cities/{id}, as a link to a city
  // asks; keep carries over what the page knew of it (its distance).
  async function showById(id, d, keep = {}) {
    const seq = state.seq;
    const params = withLang(new URLSearchParams({ dataset: d }));
    let resp = null;
    let body = null;
    try {
      resp = await fetch(`/cities/${encodeURIComponent(id)}?${params}`, { headers: { Accept: "application/json" } });
      body = await resp.json().catch(() => null);
    } catch {
      resp = null;
    }
    if (seq !== state.seq) return; // the user typed since: their text wins
    if (resp && resp.ok && body && typeof body === "object" && typeof body.name === "string") {
      const city = { ...body, ...keep };
      showCity(city, d, `Showing ${placeText(city)}.`);
      return;
    }
    showError(failure(resp, body));
  }

  // failure says what went wrong with a request that did not give cities.
  function failure(resp, body) {
    if (!resp) return UNREACHABLE;
    if (resp.status >= 500) return UNAVAILABLE;
    const message = (body && typeof body.message === "string" && body.message) || `The server answered ${resp.status} ${resp.statusText}`.trim();
    return sentence(message);
  }

  // --- searching -----------------------------------------------------------

  function letters(text) {
    // The server counts the letters of the folded text, or those typed
    // in a script other than Latin when they are more: a Chinese,
    // Japanese or Korean character folds to a syllable of two or more
    // letters ("東京" is "dong-jing"), any other letter or digit to one
    // at most (the alif of "القا" folds to none).
    const all = (text.match(/[\p{L}\p{Nd}]/gu) || []).length;
    const syllables = (text.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu) || []).length;
    return all + syllables;
  }

  function dataset() {
    const checked = checkedDataset();
    return checked ? checked.value : "small";
  }

  function checkedDataset() {
    return form.querySelector('input[name="dataset"]:checked');
  }

  function datasetRadios() {
    return Array.from(form.querySelectorAll('input[name="dataset"]'));
  }

  // notAvailable says that the dataset of radio cannot be searched yet.
  function notAvailable(radio) {
    if (datasetRadios().every((r) => r.disabled)) return "No dataset is available yet. Try again later.";
    const name = radio.closest("label").querySelector(".dataset-name").textContent;
    return `The ${name} dataset is not available yet. Choose another dataset.`;
  }

  function cancelPending() {
    clearTimeout(state.debounceTimer);
    clearTimeout(state.pumpTimer);
    state.want = null;
    state.shown = ++state.seq; // whatever is in flight is stale now
    if (state.inflight) state.inflight.controller.abort();
  }

  function onInput() {
    clearTimeout(state.debounceTimer);
    forgetCity(); // the text no longer names the city the details show
    const text = input.value.trim();
    if (letters(text) < config.minLetters) {
      cancelPending();
      state.results = [];
      list.replaceChildren();
      closeList();
      if (config.loaded) hint();
      return;
    }
    state.debounceTimer = setTimeout(ask, DEBOUNCE_MS);
  }

  // typedText is the input's text trimmed, but for one space kept at the
  // end when it ends in one: a finished word ranks the names in which it
  // ends first ("san " lists San Antonio before Santiago).
  function typedText() {
    const text = input.value.trim();
    return text && /\s$/.test(input.value) ? text + " " : text;
  }

  // ask searches for what the input holds now, from the cache or the server.
  function ask() {
    clearTimeout(state.debounceTimer);
    const text = typedText();
    if (letters(text) < config.minLetters) return;
    const radio = checkedDataset();
    if (radio && radio.disabled) {
      cancelPending();
      showError(notAvailable(radio));
      return;
    }
    const seq = ++state.seq;
    const want = { text, dataset: dataset(), near: state.near, lang: state.lang, seq };
    const cached = cache.get(cacheKey(want)) || fromComplete(want);
    if (cached) {
      state.want = null;
      state.shown = seq;
      showResults(text, cached);
      return;
    }
    state.want = want;
    pump();
  }

  function cacheKey(want) {
    const near = want.near ? `${want.near.lat},${want.near.lon}` : "";
    return `${want.dataset}\n${want.lang}\n${near}\n${want.text}`;
  }

  // --- complete answers -------------------------------------------------------

  // Short and long forms of the words that names abbreviate, as the server
  // reads them ("st l" also finds Saint Louis).
  const ABBREVIATIONS = [["st", "saint"], ["ste", "sainte"], ["mt", "mount"], ["ft", "fort"]];

  // fold writes text as the server compares it, for Latin letters:
  // accents dropped, lower case, apostrophes dropped, every other run of
  // characters but ASCII letters and digits a single "-". Other scripts
  // fold to nothing here; a name in one is then not kept by a filter, and
  // a filter that keeps nothing asks the server.
  const SPECIAL = { ß: "ss", æ: "ae", œ: "oe", ø: "o", ł: "l", đ: "d", ð: "d", þ: "th", ı: "i", ħ: "h" };
  function fold(text) {
    return text
      .normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .toLowerCase()
      .replace(/[ßæœøłđðþıħ]/g, (c) => SPECIAL[c])
      .replace(/['’ʼʻ`]/g, "")
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "");
  }

  // variants are the spellings of a folded text the server also looks for,
  // as search.Variants makes them: a short form written out anywhere, a
  // long form abbreviated when another word follows it.
  function variants(folded) {
    const out = [folded];
    const words = folded.split("-");
    words.forEach((w, i) => {
      for (const [short, long] of ABBREVIATIONS) {
        let other = null;
        if (w === short) other = long;
        else if (w === long && i < words.length - 1) other = short;
        if (other === null) continue;
        for (const v of out.slice()) {
          if (out.length === 4) return;
          const vw = v.split("-");
          vw[i] = other;
          out.push(vw.join("-"));
        }
      }
    });
    return out;
  }

  // narrowed returns city as the answer to folded would list it, with its
  // match span grown over the letters typed since, or null when the name it
  // matched does not match folded: typo matches never do.
  function narrowed(city, folded) {
    if (city.edits > 0) return null;
    const alt = matchedName(city);
    const name = alt ? alt.name : city.name;
    const span = alt || city.match;
    if (!span) return null;
    const chars = Array.from(name);
    const tail = fold(chars.slice(span.start).join(""));
    const v = variants(folded).find((v) => tail.startsWith(v));
    if (v === undefined) return null;
    let end = span.start;
    while (end < chars.length && fold(chars.slice(span.start, end).join("")).length < v.length) end++;
    const grown = { ...span, end };
    return alt ? { ...city, matched: grown } : { ...city, match: grown };
  }

  // fromComplete answers want from a complete answer to a shorter text of
  // the same last word, when one is kept and keeps some city; null means
  // the server must be asked.
  function fromComplete(want) {
    if (/\s$/.test(want.text)) return null; // a word ends: the server reads what comes
    const key = cacheKey({ ...want, text: "" });
    const folded = fold(want.text);
    for (let i = completes.length - 1; i >= 0; i--) {
      const c = completes[i];
      if (c.key !== key || !folded.startsWith(c.folded) || folded === c.folded) continue;
      if (folded.slice(c.folded.length).includes("-")) continue; // another word
      const kept = c.cities.map((city) => narrowed(city, folded)).filter(Boolean);
      return kept.length > 0 ? kept : null;
    }
    return null;
  }

  // rememberComplete keeps an answer that holds every match of its text.
  function rememberComplete(want, cities) {
    const folded = fold(want.text);
    if (!folded || /\s$/.test(want.text)) return;
    completes.push({ key: cacheKey({ ...want, text: "" }), folded, cities });
    if (completes.length > COMPLETE_SIZE) completes.shift();
  }

  function remember(want, cities) {
    const key = cacheKey(want);
    cache.delete(key);
    cache.set(key, cities);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value);
  }

  // pump sends the query waiting for the pacer as soon as the pacer lets it.
  function pump() {
    clearTimeout(state.pumpTimer);
    const want = state.want;
    if (!want || !config.loaded) return; // loading /config calls pump again
    const wait = pacer.delay(performance.now());
    if (wait > 0) {
      // Infinity: a request in flight calls pump again when it settles.
      if (Number.isFinite(wait)) state.pumpTimer = setTimeout(pump, Math.ceil(wait));
      if (pacer.max > 0 && pacer.blockedUntil <= performance.now()) {
        note(`Searching… (pacing to stay within ${pacer.describe()})`);
      }
      return;
    }
    state.want = null;
    send(want);
  }

  async function send(want) {
    if (state.inflight) state.inflight.controller.abort(); // its answer is stale
    const controller = new AbortController();
    const flight = { controller, seq: want.seq };
    state.inflight = flight;
    const settle = pacer.start(performance.now());
    note("Searching…");
    const params = new URLSearchParams({ q: want.text, dataset: want.dataset });
    if (want.near) {
      params.set("lat", want.near.lat);
      params.set("lon", want.near.lon);
    }
    if (want.lang) params.set("lang", want.lang);
    let resp = null;
    let body = null;
    try {
      resp = await fetch(`/search?${params}`, { signal: controller.signal, headers: { Accept: "application/json" } });
      body = await resp.json().catch(() => null);
    } catch {
      resp = null;
    }
    const aborted = controller.signal.aborted;
    settle(performance.now(), aborted);
    if (state.inflight === flight) state.inflight = null;
    if (!aborted) await handle(want, resp, body);
    pump(); // after handle, so that a 429's Retry-After holds back the next query
  }

  // handle shows the server's answer to want: cities, or what went wrong.
  // The server's messages are shown for what the user can act on (a query
  // it refuses, the rate limit); a failure on its side is said in the
  // page's words, after asking /config whether the dataset is there at all.
  async function handle(want, resp, body) {
    if (!resp) {
      answer(want, () => showError(UNREACHABLE));
      return;
    }
    pacer.learn(resp.headers.get("RateLimit-Policy"));
    if (resp.ok && Array.isArray(body)) {
      remember(want, body);
      if (resp.headers.get("Search-Complete") === "?1") rememberComplete(want, body);
      answer(want, () => showResults(want.text, body));
      return;
    }
    if (resp.status >= 500) {
      if (resp.status === 503) await loadConfig();
      const radio = datasetRadios().find((r) => r.value === want.dataset);
      answer(want, () => showError(radio && radio.disabled ? notAvailable(radio) : UNAVAILABLE));
      return;
    }
    if (resp.status !== 429) {
      answer(want, () => showError(failure(resp, body)));
      return;
    }
    const seconds = blockFor(resp);
    answer(want, () => {
      setStatus(`${failure(resp, body)} Retrying in ${seconds} ${seconds === 1 ? "second" : "seconds"}.`, "error");
      if (want.seq === state.seq && !state.want) {
        state.want = { ...want, seq: ++state.seq }; // pump sends it once the block ends
      }
    });
  }

  // blockFor holds back every request for the Retry-After of a 429, and
  // returns its seconds.
  function blockFor(resp) {
    const seconds = Math.max(1, Number.parseInt(resp.headers.get("Retry-After"), 10) || 1);
    pacer.block(performance.now() + seconds * 1000);
    return seconds;
  }

  function showError(text) {
    state.results = [];
    list.replaceChildren();
    closeList();
    setStatus(text, "error");
  }

  // answer shows what came back for want, unless the answer to a newer query
  // is on screen already: a late answer never replaces a newer one.
  function answer(want, show) {
    if (want.seq <= state.shown) return;
    state.shown = want.seq;
    show();
  }

  function sentence(message) {
    return /[.!?]$/.test(message) ? message : `${message}.`;
  }

  // --- wiring ----------------------------------------------------------------

  input.addEventListener("input", onInput);

  input.addEventListener("keydown", (e) => {
    if (e.isComposing) return;
    switch (e.key) {
      case "ArrowDown":
        e.preventDefault();
        move(1);
        break;
      case "ArrowUp":
        e.preventDefault();
        move(-1);
        break;
      case "Enter":
        e.preventDefault();
        if (isOpen() && state.active >= 0) pick(state.active);
        else ask(); // no need to wait for the debounce
        break;
      case "Escape":
        if (isOpen()) {
          e.preventDefault();
          closeList();
        } else if (input.value) {
          e.preventDefault();
          input.value = "";
          onInput();
        }
        break;
      case "Tab":
        closeList();
        break;
    }
  });

  input.addEventListener("blur", closeList);

  // The location button asks the browser where the user is, only when
  // pressed (never on load), fills in the nearest city and puts nearby
  // cities first from then on; pressed again, it forgets the location.
  locate.addEventListener("click", () => {
    if (locate.getAttribute("aria-busy") === "true") return;
    if (state.near) {
      useLocation(null);
      return;
    }
    locate.setAttribute("aria-busy", "true");
    note("Finding where you are…");
    navigator.geolocation.getCurrentPosition(
      (pos) => {
        locate.removeAttribute("aria-busy");
        const round = (v) => Number(v.toFixed(LOCATION_DECIMALS));
        useLocation({ lat: round(pos.coords.latitude), lon: round(pos.coords.longitude) });
      },
      (err) => {
        locate.removeAttribute("aria-busy");
        if (err.code === err.PERMISSION_DENIED) setStatus("Your location was not shared, so cities are not sorted by distance.");
        else setStatus("Your location could not be found. Try again in a moment.", "error");
      },
      { maximumAge: 10 * 60 * 1000, timeout: 15 * 1000 },
    );
  });

  function useLocation(near) {
    state.near = near;
    locate.setAttribute("aria-pressed", String(near !== null));
    if (near) nearest(near);
    else if (state.picked) setStatus("Cities are no longer sorted by distance.");
    else if (letters(input.value.trim()) >= config.minLetters) ask();
    else hint();
  }

  // nearest fills the field with the city the user is in, from GET
  // /reverse, which counts against the rate limit as a search does.
  async function nearest(near) {
    cancelPending(); // the field is about to name where the user is
    const seq = state.seq;
    const d = dataset();
    const params = withLang(new URLSearchParams({ lat: near.lat, lon: near.lon, limit: "1", dataset: d }));
    const settle = await paced();
    let resp = null;
    let body = null;
    try {
      resp = await fetch(`/reverse?${params}`, { headers: { Accept: "application/json" } });
      body = await resp.json().catch(() => null);
    } catch {
      resp = null;
    }
    settle(performance.now(), false);
    if (resp) pacer.learn(resp.headers.get("RateLimit-Policy"));
    if (resp && resp.status === 429) blockFor(resp);
    if (seq !== state.seq || state.near !== near) return; // typed, or the location was dropped, since
    if (resp && resp.ok && Array.isArray(body)) {
      if (body.length > 0) showCity(body[0], d, `You are in or near ${placeText(body[0])}. Cities near you come first.`);
      else setStatus("No city is near you in this dataset. Cities near you will come first.");
      return;
    }
    showError(failure(resp, body));
  }

  // paced waits until the pacer lets a request go, and starts it; the
  // returned function settles it, as Pacer.start's does.
  async function paced() {
    for (;;) {
      const wait = pacer.delay(performance.now());
      if (wait <= 0) return pacer.start(performance.now());
      await new Promise((resolve) => setTimeout(resolve, Number.isFinite(wait) ? Math.ceil(wait) : PACED_POLL_MS));
    }
  }

  // --- languages ---------------------------------------------------------

  // offered is whether the picker has tag.
  function offered(tag) {
    return Array.from(langPicker.options).some((o) => o.value === tag);
  }

  // browserLanguage is the first of the browser's languages that the
  // picker offers, by its primary subtag ("de" for de-CH), else English.
  function browserLanguage() {
    for (const tag of navigator.languages || [navigator.language]) {
      const primary = String(tag).toLowerCase().split("-")[0];
      if (offered(primary)) return primary;
    }
    return "en";
  }

  // withLang adds the lang parameter to params when the picker chose one;
  // otherwise the browser's Accept-Language says it, with its fallbacks.
  function withLang(params) {
    if (state.lang) params.set("lang", state.lang);
    return params;
  }

  // namesLang is the language that country names come back in. City names
  // come in it only where the import had one, so only countries are marked
  // with it. The page's own words stay English and left to right; every
  // name is set apart with dir=auto, so that one in Arabic reads right to
  // left within them.
  function namesLang() {
    return state.lang || navigator.language || "en";
  }

  langPicker.addEventListener("change", () => {
    state.lang = langPicker.value;
    const picked = state.picked;
    if (picked && picked.city.id) {
      // The city shown again in the new language, by its id.
      const keep = typeof picked.city.distance_km === "number" ? { distance_km: picked.city.distance_km } : {};
      showById(picked.city.id, picked.dataset, keep);
    } else if (letters(input.value.trim()) >= config.minLetters) {
      ask();
    } else {
      forgetCity();
      history.replaceState(null, "", `${location.pathname}?${new URLSearchParams({ lang: state.lang })}`);
    }
  });

  // The list can be open without the focus in the input (after a switch of
  // dataset): a press anywhere else closes it.
  document.addEventListener("pointerdown", (e) => {
    if (!e.target.closest(".combo")) closeList();
  });
  form.addEventListener("submit", (e) => e.preventDefault());
  form.addEventListener("change", (e) => {
    if (e.target.name === "dataset") ask();
  });
  // A click on a dataset that is not available asks /config again: it may
  // have been imported since, and then it is chosen as the click meant.
  form.addEventListener("click", async (e) => {
    const radio = e.target.closest(".dataset")?.querySelector("input");
    if (!radio || !radio.disabled) return;
    await loadConfig();
    if (radio.disabled) return;
    radio.checked = true;
    if (letters(input.value.trim()) >= config.minLetters) ask();
    else hint();
  });

  // loadConfig reads /config: the rate limit, the query limits, and which
  // datasets can be searched. It never fails: without /config the page
  // learns the limit from the first answer's RateLimit-Policy header.
  async function loadConfig() {
    let c;
    try {
      const resp = await fetch("/config", { headers: { Accept: "application/json" } });
      if (!resp.ok) return;
      c = await resp.json();
    } catch {
      return;
    }
    if (!c || typeof c !== "object") return;
    if (Number.isInteger(c.min_letters) && c.min_letters > 0) config.minLetters = c.min_letters;
    if (Number.isInteger(c.max_length) && c.max_length > 0) input.maxLength = c.max_length;
    const limit = c.limit;
    if (limit && limit.max > 0 && limit.window_seconds > 0) {
      pacer.setLimit(limit.max, limit.window_seconds * 1000, "config");
    }
    if (Array.isArray(c.datasets)) showDatasets(c.datasets);
  }

  // showDatasets disables the datasets that cannot be searched yet, saying
  // so in place of their description.
  function showDatasets(datasets) {
    for (const radio of datasetRadios()) {
      const d = datasets.find((x) => x && x.name === radio.value);
      const note = radio.closest("label").querySelector(".dataset-note");
      note.dataset.text ??= note.textContent;
      radio.disabled = !d || d.available === false;
      note.textContent = radio.disabled ? "not available yet" : note.dataset.text;
    }
  }

  async function start() {
    // A link to a city (?city=ID&dataset=large&lang=de) says what to show.
    const link = new URLSearchParams(location.search);
    const linkLang = (link.get("lang") || "").toLowerCase();
    if (offered(linkLang)) state.lang = linkLang;
    langPicker.value = state.lang || browserLanguage();
    const linkDataset = datasetRadios().find((r) => r.value === link.get("dataset"));
    if (linkDataset) linkDataset.checked = true;
    await loadConfig();
    config.loaded = true;
    // The default dataset may be the one missing: start on one that is there.
    const checked = checkedDataset();
    const other = datasetRadios().find((r) => !r.disabled);
    if (checked && checked.disabled && other) other.checked = true;
    const id = link.get("city");
    if (id) showById(id, dataset());
    else if (letters(input.value.trim()) >= config.minLetters) ask(); // a value the browser restored
    else hint();
  }

  // Browsers give the location only to pages from a secure origin
  // (https, or this machine).
  locate.hidden = !(window.isSecureContext && "geolocation" in navigator);

  window.addEventListener("resize", fitList);
  window.addEventListener("scroll", fitList, { passive: true });
  window.visualViewport?.addEventListener("resize", fitList);

  start();
})();
