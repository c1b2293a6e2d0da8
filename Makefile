# cityfinder: `make run` to try it, `make test` before every commit.

GO              ?= go
VERSION         ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BIN             := bin/cityfinder
DATA_DIR        ?= data
ADDR            ?= 127.0.0.1:8080
DATASETS_MIRROR ?= ../shared/datasets
SMALL_CSV       := datasets/world-cities.csv
STATICCHECK     := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build run import test browser bench lint fuzz clean

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

$(DATA_DIR)/small.cfs: $(SMALL_CSV) | build
	./$(BIN) import --dataset small --file $(SMALL_CSV) --data-dir $(DATA_DIR)

import: build $(DATA_DIR)/small.cfs

run: build $(DATA_DIR)/small.cfs
	./$(BIN) serve --data-dir $(DATA_DIR) --addr $(ADDR)

test:
	$(GO) test -race -count=1 ./...

# The demo page in headless chromium (part of `make test` too); it leaves
# screenshots in out/demo-page for a person to look at.
browser:
	$(GO) test -count=1 -run '^TestBrowser' -v ./cmd/cityfinder

# Micro-benchmarks, then the table of issue 3's figures on the full-size large
# dataset (generated once into $$CITYFINDER_BENCH_CACHE, default ~/.cache).
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./internal/benchtable -bin $(BIN)

FUZZTIME ?= 10s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzSlug$$' -fuzztime $(FUZZTIME) ./pkg/search
	$(GO) test -run '^$$' -fuzz '^FuzzOKFNRow$$' -fuzztime $(FUZZTIME) ./pkg/importer
	$(GO) test -run '^$$' -fuzz '^FuzzMaxMindRow$$' -fuzztime $(FUZZTIME) ./pkg/importer
	$(GO) test -run '^$$' -fuzz '^FuzzSearchQuery$$' -fuzztime $(FUZZTIME) ./pkg/server

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf bin $(DATA_DIR)
