// The JavaScript peers of `make bench-peers` (tools/benchpeers): one of
// FlexSearch or MiniSearch builds its index on the work directory's
// cities.tsv, answers queries.tsv over the rounds with one client, and
// writes result.json as the Go workers do (see worker.go).
//
// Usage: node --expose-gc peers.js flexsearch|minisearch DIR ROUNDS
"use strict";

const fs = require("fs");
const path = require("path");

const [peer, dir, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg || 3);
const sets = ["prefix", "one", "two"];

function readTSV(name) {
  const text = fs.readFileSync(path.join(dir, name), "utf8");
  return text.split("\n").filter((l) => l !== "").map((l) => l.split("\t"));
}

// The edit budget of one word: cityfinder's, one from 5 letters, two from 7.
function wordEdits(word) {
  return word.length >= 7 ? 2 : word.length >= 5 ? 1 : 0;
}

// Each engine: build(slugs, pops) indexes the cities (in descending
// population), find(text) returns the line numbers of the top ten.
const engines = {
  flexsearch: {
    config:
      "FlexSearch 0.8.212 `Index` (no stored documents): `tokenize: \"forward\"`, `encoder: Charset.LatinAdvanced` " +
      "(the middle of the phonetic encoders its Fuzzy-Search section lists for typo tolerance: on the 100k sample it found more " +
      "one-edit misspellings than LatinBalance, LatinExtra or LatinSoundex), default resolution; " +
      "`search(text, {limit: 10, suggest: true})`; it cannot rank by a field, so the cities are added in descending population " +
      "and its ties go to the first added",
    make() {
      const { Index, Charset } = require("flexsearch");
      const index = new Index({ tokenize: "forward", encoder: Charset.LatinAdvanced });
      return {
        build(texts) {
          for (let i = 0; i < texts.length; i++) index.add(i, texts[i]);
        },
        find(text) {
          return index.search(text, { limit: 10, suggest: true });
        },
      };
    },
  },
  minisearch: {
    config:
      "MiniSearch 7.2.0, field `name` (default tokenizer, lower case), no stored fields; " +
      "`search(text, {prefix: last word, fuzzy: the word's budget (1 edit from 5 letters, 2 from 7), combineWith: \"AND\", " +
      "boostDocument: log10(population + 10)})`, its default weights (fuzzy 0.45, prefix 0.375), top 10 of the results",
    make() {
      const MiniSearch = require("minisearch");
      const index = new MiniSearch({ fields: ["name"], idField: "id" });
      let boost;
      const options = {
        prefix: (term, i, terms) => i === terms.length - 1,
        fuzzy: (term) => wordEdits(term),
        combineWith: "AND",
        boostDocument: (id) => boost[id],
      };
      return {
        build(texts, pops) {
          boost = new Float64Array(texts.length);
          for (let i = 0; i < texts.length; i++) {
            boost[i] = Math.log10(pops[i] + 10);
            index.add({ id: i, name: texts[i] });
          }
        },
        find(text) {
          const res = index.search(text, options);
          const ids = new Array(Math.min(10, res.length));
          for (let i = 0; i < ids.length; i++) ids[i] = res[i].id;
          return ids;
        },
      };
    },
  },
};

function main() {
  const spec = engines[peer];
  if (!spec) throw new Error(`no JavaScript peer ${peer}`);
  let cities = readTSV("cities.tsv");
  const slugs = cities.map((c) => c[0]);
  const texts = slugs.map((s) => s.replaceAll("-", " "));
  const pops = cities.map((c) => Number(c[1]));
  cities = null;
  const queries = readTSV("queries.tsv");
  const engine = spec.make();
  const start = process.hrtime.bigint();
  engine.build(texts, pops);
  const buildSeconds = Number(process.hrtime.bigint() - start) / 1e9;

  const bySet = {};
  for (const [set, , text] of queries) (bySet[set] ||= []).push(text);
  const times = {};
  const hits = {};
  for (let r = 0; r < rounds; r++) {
    for (const set of sets) {
      const list = bySet[set] || [];
      const t = new Array(list.length);
      for (let i = 0; i < list.length; i++) {
        const t0 = process.hrtime.bigint();
        const ids = engine.find(list[i]);
        t[i] = Number(process.hrtime.bigint() - t0);
        if (r === rounds - 1) (hits[set] ||= []).push(ids.map((id) => slugs[id]));
      }
      (times[set] ||= []).push(t);
    }
  }
  if (global.gc) global.gc();
  const out = {
    config: spec.config,
    build_seconds: buildSeconds,
    rss_kib: Math.round(process.memoryUsage().rss / 1024),
    rss_what: "the node process",
    times_ns: times,
    hits,
  };
  fs.writeFileSync(path.join(dir, "result.json"), JSON.stringify(out));
}

main();
