// cityfinder's demo page: an autocomplete box over GET /search that follows
// the WAI-ARIA combobox pattern and paces its requests under the server's
// rate limit, which it learns from GET /config or, failing that, from the
// RateLimit-Policy header of the answers.
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
  // Below these, "Searching…" and pacing notes would only flicker.
  const BUSY_NOTE_MS = 300;

  const $ = (id) => document.getElementById(id);
  const form = $("search");
  const input = $("q");
  const list = $("suggestions");
  const status = $("status");
  const details = $("details");
  const detailsName = $("details-name");
  const detailsList = $("details-list");

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

  const state = {
    seq: 0, // the latest query asked for
    shown: 0, // the query whose answer is on screen
    want: null, // {text, dataset, seq}: waiting for the pacer
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
  }

  // note shows a passing remark (searching, pacing) unless an answer comes
  // first, so that quick answers do not make the line flicker.
  function note(text) {
    clearTimeout(state.noteTimer);
    state.noteTimer = setTimeout(() => {
      status.textContent = text;
      status.className = "status is-busy";
    }, BUSY_NOTE_MS);
  }

  function hint() {
    setStatus(`Type at least ${config.minLetters} letters to see matching cities.`);
  }

  // --- the list ------------------------------------------------------------

  function isOpen() {
    return !list.hidden;
  }

  function openList() {
    if (state.results.length === 0) return;
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
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

  function regionOf(city) {
    if (city.subcountry) return city.subcountry;
    if (city.region) return `Region ${city.region}`;
    return "";
  }

  function option(city, i) {
    const li = document.createElement("li");
    li.id = `suggestion-${i}`;
    li.className = "option";
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", "false");
    const name = document.createElement("span");
    name.className = "option-name";
    highlighted(name, city.name, city.match);
    const where = document.createElement("span");
    where.className = "option-where";
    where.textContent = [regionOf(city), city.country].filter(Boolean).join(" · ");
    li.append(name, where);
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
    openList();
    const n = cities.length;
    setStatus(`${n} ${n === 1 ? "city" : "cities"} matching '${text}'. Use ↑ ↓ and Enter to choose.`);
  }

  // --- details -------------------------------------------------------------

  function coordinate(value, pos, neg) {
    return `${Math.abs(value).toFixed(4)}° ${value < 0 ? neg : pos}`;
  }

  function pick(i) {
    const city = state.results[i];
    if (!city) return;
    cancelPending(); // an answer still on its way must not reopen the list
    input.value = city.name;
    closeList();
    const rows = [["Country", city.country_code ? `${city.country} (${city.country_code.toUpperCase()})` : city.country]];
    if (city.subcountry) rows.push(["Region", city.subcountry]);
    if (city.region) rows.push(["Region code", city.region]);
    if (city.population) rows.push(["Population", city.population.toLocaleString("en")]);
    if (typeof city.lat === "number" && typeof city.lon === "number") {
      rows.push(["Coordinates", `${coordinate(city.lat, "N", "S")}, ${coordinate(city.lon, "E", "W")}`]);
    }
    if (city.id) rows.push(["GeoNames id", String(city.id)]);
    detailsName.textContent = city.name;
    detailsList.replaceChildren(
      ...rows.flatMap(([term, value]) => {
        const dt = document.createElement("dt");
        dt.textContent = term;
        const dd = document.createElement("dd");
        dd.textContent = value;
        return [dt, dd];
      }),
    );
    details.hidden = false;
    setStatus(`Picked ${city.name}, ${city.country}.`);
  }

  // --- searching -----------------------------------------------------------

  function letters(text) {
    // Letters and decimal digits, as the server counts them (unicode.IsLetter, IsDigit).
    return (text.match(/[\p{L}\p{Nd}]/gu) || []).length;
  }

  function dataset() {
    const checked = form.querySelector('input[name="dataset"]:checked');
    return checked ? checked.value : "small";
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
    details.hidden = true; // the text no longer names the city they show
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

  // ask searches for what the input holds now, from the cache or the server.
  function ask() {
    clearTimeout(state.debounceTimer);
    const text = input.value.trim();
    if (letters(text) < config.minLetters) return;
    const seq = ++state.seq;
    const want = { text, dataset: dataset(), seq };
    const cached = cache.get(cacheKey(want));
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
    return `${want.dataset}\n${want.text}`;
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
    if (!aborted) handle(want, resp, body);
    pump(); // after handle, so that a 429's Retry-After holds back the next query
  }

  // handle shows the server's answer to want: cities, or what went wrong.
  function handle(want, resp, body) {
    if (!resp) {
      answer(want, () => showError("Network error: the server could not be reached. Is cityfinder serve running?"));
      return;
    }
    pacer.learn(resp.headers.get("RateLimit-Policy"));
    if (resp.ok && Array.isArray(body)) {
      remember(want, body);
      answer(want, () => showResults(want.text, body));
      return;
    }
    const message = (body && typeof body.message === "string" && body.message) || `The server answered ${resp.status} ${resp.statusText}`.trim();
    if (resp.status !== 429) {
      answer(want, () => showError(sentence(message)));
      return;
    }
    const seconds = Math.max(1, Number.parseInt(resp.headers.get("Retry-After"), 10) || 1);
    pacer.block(performance.now() + seconds * 1000);
    answer(want, () => {
      setStatus(`${sentence(message)} Retrying in ${seconds} ${seconds === 1 ? "second" : "seconds"}.`, "error");
      if (want.seq === state.seq && !state.want) {
        state.want = { ...want, seq: ++state.seq }; // pump sends it once the block ends
      }
    });
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
  // The list can be open without the focus in the input (after a switch of
  // dataset): a press anywhere else closes it.
  document.addEventListener("pointerdown", (e) => {
    if (!e.target.closest(".combo")) closeList();
  });
  form.addEventListener("submit", (e) => e.preventDefault());
  form.addEventListener("change", (e) => {
    if (e.target.name === "dataset") ask();
  });

  async function loadConfig() {
    try {
      const resp = await fetch("/config", { headers: { Accept: "application/json" } });
      if (!resp.ok) throw new Error(`GET /config: ${resp.status}`);
      const c = await resp.json();
      if (Number.isInteger(c.min_letters) && c.min_letters > 0) config.minLetters = c.min_letters;
      if (Number.isInteger(c.max_length) && c.max_length > 0) input.maxLength = c.max_length;
      const limit = c.limit;
      if (limit && limit.max > 0 && limit.window_seconds > 0) {
        pacer.setLimit(limit.max, limit.window_seconds * 1000, "config");
      }
      if (Array.isArray(c.datasets)) {
        for (const radio of form.querySelectorAll('input[name="dataset"]')) {
          radio.disabled = !c.datasets.includes(radio.value);
        }
      }
    } catch {
      // A server without /config: the first answer's RateLimit-Policy
      // header tells the limit instead.
    }
    config.loaded = true;
    if (letters(input.value.trim()) >= config.minLetters) ask(); // a value the browser restored
    else hint();
  }

  loadConfig();
})();
