# cityfinder: `make run` to try it, `make test` before every commit.

GO              ?= go
VERSION         ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BIN             := bin/cityfinder
DATA_DIR        ?= data
ADDR            ?= 127.0.0.1:8080
DATASETS_MIRROR ?= ../shared/datasets
SMALL_CSV       := datasets/world-cities.csv
# GeoNames places that give the small dataset population, locations and
# other names, when the mirror has them; without it, no enrichment.
GEONAMES        := $(wildcard $(DATASETS_MIRROR)/geonames-cities1000.txt.gz)
STATICCHECK     := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build run import import-large test browser bench bench-peers relevance lint fuzz fuzz-ci loadtest soak image clean

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/cityfinder

# The okfn CSV: a copy from the local mirror when there is one, else a download.
$(SMALL_CSV):
	@if [ -f "$(DATASETS_MIRROR)/world-cities.csv" ]; then \
		echo "copying $(DATASETS_MIRROR)/world-cities.csv"; \
		cp "$(DATASETS_MIRROR)/world-cities.csv" $@; \
	else \
		./datasets/download.sh small; \
	fi

$(DATA_DIR)/small.cfs: $(SMALL_CSV) $(GEONAMES) | build
	./$(BIN) import --dataset small --file $(SMALL_CSV) --data-dir $(DATA_DIR) $(if $(GEONAMES),--geonames $(GEONAMES))

import: build $(DATA_DIR)/small.cfs

# The large dataset from the local mirror: GeoNames' cities1000 (real places,
# with their names in other languages), else the 100,000-row MaxMind sample.
# Without a mirror, `cityfinder import --dataset large` downloads GeoNames'
# cities500.zip into $(DATA_DIR)/downloads. The okfn CSV names its regions,
# given explicitly: the binary looks for no file in the working directory.
LARGE_FILE := $(firstword $(wildcard $(DATASETS_MIRROR)/geonames-cities1000.txt.gz $(DATASETS_MIRROR)/worldcitiespop-100k.txt.gz))

$(DATA_DIR)/large.cfs: $(LARGE_FILE) $(SMALL_CSV) | build
	./$(BIN) import --dataset large --data-dir $(DATA_DIR) --region-names $(SMALL_CSV) $(if $(LARGE_FILE),--file $(LARGE_FILE))

import-large: build $(DATA_DIR)/large.cfs

# run serves both datasets when the mirror has a large one (a second or two
# more); without it, the large dataset stays empty until imported.
run: build $(DATA_DIR)/small.cfs $(if $(LARGE_FILE),$(DATA_DIR)/large.cfs)
	./$(BIN) serve --data-dir $(DATA_DIR) --addr $(ADDR)

# The MongoDB tests run against FerretDB (see internal/mongotest), built from
# its own module, so that its dependencies stay out of ours, into the user's
# cache directory under a hash of its sources: about two minutes the first
# time on a machine, nothing after that, whatever the checkout. With
# CITYFINDER_TEST_MONGO_URI set, the tests use that MongoDB instead, and
# FerretDB only for the server-restart test.
# A second pass runs without -race what the race detector only slows, at
# the same time as the race pass, which skips it: the relevance floors
# (pkg/search/relevance: ranking two real datasets on one goroutine, where
# it finds nothing and costs half a minute), the peak RSS of imports in a
# child process (cmd/cityfinder, files with //go:build !race: under the
# detector the child costs several times the memory), and the checks of
# whole real datasets or of thousands of queries on one goroutine in
# pkg/importer, pkg/search, pkg/search/embedded, pkg/server and
# cmd/cityfinder (golden bytes, typo walks and their jumps, region names,
# reverse lookups, the reference store, the answer cache's bytes, imports
# from pipes: minutes under the detector, seconds without). The concurrency they go
# through (the parallel reader, the index built on every core) is run
# under -race by the smaller tests of the same packages. Its output
# follows the race pass's. docs/testing.md says more.
NORACE_PKGS  := ./cmd/cityfinder ./pkg/importer ./pkg/search ./pkg/search/embedded ./pkg/search/relevance ./pkg/server
NORACE_LIST  := TestRelevance TestImportMemoryFollows.* \
	TestImportNamesTheRegionsOfTheSharedFiles TestImportEnrichesAsTheGazetteer TestImportMergesIdenticalRowsBeforeEnriching \
	TestImportTheSharedGeoNamesFile TestEveryDatasetNamesCountriesAlike \
	TestReverseNamesTheCityNotItsDistrict TestFindNearIsTheWholeSort TestCompleteAnswersHoldLongerTexts \
	TestSnapshotBytes TestFindTyposAgreesWithWalk TestBuildKeepsWhatCollectKeeps TestMatchesMemoryStore \
	TestQueryListsEachLineOnce \
	TestJumpsFindWhatTheWalkFinds TestJumpListsHoldEveryDescent TestLinesChangeNoAnswer \
	TestReadOrderAgreesWithCitiesAdded TestParseSurvivesDamage TestImportSnapshotBytes TestBoundsHoldEveryKey \
	TestEnrichMatchRates TestImportDerivesTheIDsOfLoadReader TestGeoNamesReaderReadsTheSharedFile \
	TestImportSharedDatasets TestOpenGazetteerFailsOnBadFiles TestParallelReaderReadsTheGeoNamesDumpAsTheSequentialOne \
	TestEnrichCompletesTheSmallDataset TestEnrichByNameAgreesWithTheIDs TestEnrichFindsKolnByCologneOnTheLargeDataset \
	TestAnswerCacheGivesTheSameBytes TestImportFromAPipeReadsEveryRow
space        := $(subst ,, )
NORACE_TESTS := ^($(subst $(space),|,$(strip $(NORACE_LIST))))$$
test:
	@norace=$$(mktemp); \
	echo "$(GO) test -count=1 -run '$(NORACE_TESTS)' $(NORACE_PKGS) (in the background)"; \
	$(GO) test -count=1 -run '$(NORACE_TESTS)' $(NORACE_PKGS) >$$norace 2>&1 & pid=$$!; \
	echo "$(GO) test -race -count=1 -skip '$(NORACE_TESTS)' ./..."; \
	$(GO) test -race -count=1 -skip '$(NORACE_TESTS)' ./...; race=$$?; \
	wait $$pid; rc=$$?; echo "without -race:"; cat $$norace; rm -f $$norace; \
	test $$race -eq 0 -a $$rc -eq 0

# The demo page in headless chromium (part of `make test` too); it leaves
# screenshots in out/demo-page for a person to look at.
browser:
	$(GO) test -count=1 -run '^TestBrowser' -v ./cmd/cityfinder

# Micro-benchmarks, then the performance table (docs/performance.md) on the full-size large
# dataset (generated once into $$CITYFINDER_BENCH_CACHE, default ~/.cache).
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./tools/benchtable -bin $(BIN)

# cityfinder beside the peers of issue 26 (FlexSearch, MiniSearch, bleve,
# RediSearch, PostgreSQL pg_trgm) on the full-size large dataset and the
# query sets of `make bench`, one peer at a time (docs/benchmarks.md). Its
# own Go module (tools/benchpeers/go.mod), so that bleve and pgx stay out
# of ours; npm ci of tools/benchpeers/package-lock.json into the cache. A
# peer that is not installed gets a row saying how to install it. Not part
# of `make test`, `make bench` or CI. PEERS_FLAGS, e.g. -peers cityfinder,bleve.
PEERS_FLAGS ?=
bench-peers: build
	cd tools/benchpeers && $(GO) run . -bin ../../$(BIN) $(PEERS_FLAGS)

# The relevance suite (docs/relevance.md): the judged queries of
# pkg/search/relevance/testdata on the datasets `make run` imports, freshly
# imported into a temporary store; hit@1, hit@5 and MRR per category beside
# a population-order baseline, then the cases that did not come first.
relevance: $(SMALL_CSV)
	$(GO) run ./tools/relevance -small $(SMALL_CSV) $(if $(GEONAMES),-geonames $(GEONAMES)) \
		$(if $(LARGE_FILE),-large $(LARGE_FILE),-datasets small)

# Every fuzz target, as directory:function.
FUZZ_TARGETS := pkg/search:FuzzSlug pkg/search:FuzzMatchSpan pkg/search:FuzzASCIISpan pkg/search:FuzzAppendJSON pkg/search:FuzzAppendJSONFloat \
	pkg/importer:FuzzOKFNRow pkg/importer:FuzzMaxMindRow pkg/importer:FuzzGeoNamesRow pkg/importer:FuzzParseDecimal \
	pkg/server:FuzzSearchQuery pkg/server:FuzzSearchRawQuery pkg/server:FuzzValues pkg/limiter/redis:FuzzParseURLPassword

# Go 1.26's fuzz coordinator can fail a run at the end of -fuzztime with a
# bare "context deadline exceeded" when a worker is mid-input as the time
# runs out (golang/go#75804, fixed in Go 1.27): no input failed and none is
# written. Such a run is reported and passes; any other failure, or a
# failing input written, fails.
FUZZTIME ?= 10s
fuzz:
	@set -e; out=$$(mktemp); trap 'rm -f $$out' EXIT; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} in ./$${t%%:*} for $(FUZZTIME)"; \
		rc=0; $(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) ./$${t%%:*} >$$out 2>&1 || rc=$$?; \
		cat $$out; \
		if [ $$rc -ne 0 ]; then \
			if grep -qx '    context deadline exceeded' $$out && ! grep -q 'Failing input written to\|^panic: ' $$out; then \
				echo "$${t#*:}: no input failed; the coordinator missed its own deadline (golang/go#75804, fixed in Go 1.27)"; \
			else exit $$rc; fi; \
		fi; \
	done

# What CI runs: every fuzz target for 20 s.
fuzz-ci:
	$(MAKE) fuzz FUZZTIME=20s

# 60 s at saturation against serve with the large dataset, from 10,000
# clients through a trusted proxy header, on 127.0.0.1 only; fails on any
# 5xx, any client over its limit, or RSS that keeps growing. Not part of
# `make test`. The dataset is generated once into $$CITYFINDER_BENCH_CACHE
# (default ~/.cache/cityfinder-bench), shared with `make bench`.
loadtest: build
	$(GO) run ./tools/loadtest -bin $(BIN)

# SOAK_DURATION (default 10 minutes) of serve with the small dataset under a
# mix of searches, lookups by id, reverse lookups (on the large dataset,
# imported once from the mirror's GeoNames dump) and bad input from 16 connections, while imports, SIGHUPs
# and Redis restarts take turns every 3 s, on 127.0.0.1 only (its own
# redis-server); fails on any 5xx or transport error, any search for "lon"
# without London, or RSS, goroutines or file descriptors that keep growing.
# Not part of `make test`: CI runs it for 30 s as a step of its own.
SOAK_DURATION ?= 10m
SOAK_CSV        := $(firstword $(wildcard $(DATASETS_MIRROR)/world-cities.csv) $(SMALL_CSV))
SOAK_GEONAMES   := $(wildcard $(DATASETS_MIRROR)/geonames-cities1000.txt.gz)
soak: build $(SOAK_CSV)
	$(GO) run ./tools/soak -bin $(BIN) -csv $(SOAK_CSV) -duration $(SOAK_DURATION) $(if $(SOAK_GEONAMES),-geonames $(SOAK_GEONAMES))

# The container image (docs/container.md), with no Docker daemon and no base
# image: a static binary for Linux, then tools/image writes one archive that
# `docker load`, `podman load` and umoci read, dated at the commit so that the
# same commit gives the same image. The Dockerfile builds the same image from
# $(IMAGE_BIN) for those who use Docker.
IMAGE_BIN     := bin/linux/cityfinder
IMAGE_ARCHIVE ?= bin/cityfinder-image.tar
IMAGE_CONTEXT := bin/image-context
image:
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(IMAGE_BIN) ./cmd/cityfinder
	$(GO) run ./tools/image -bin $(IMAGE_BIN) -out $(IMAGE_ARCHIVE) -context $(IMAGE_CONTEXT) -version $(VERSION) \
		-revision "$$(git rev-parse HEAD 2>/dev/null)" -created "$$(git log -1 --format=%ct 2>/dev/null || echo 0)"

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf bin $(DATA_DIR)
