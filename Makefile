# Coffer's everyday commands. `make demo` and `make test` first install the C libraries the
# SQLite and LMDB backends build on, when they are missing, then run SwiftPM. `make test` also
# installs the PostgreSQL server package when it is missing, runs the tests against a throwaway
# cluster of its own on loopback, and always stops and removes that cluster.

SWIFT ?= swift
# Debian/Ubuntu packages, and Homebrew formulas, for the system libraries the build links and
# the command-line tools (sqlite3, mdb_stat) the tests use to inspect stores from outside.
APT_PACKAGES := pkg-config libsqlite3-dev liblmdb-dev sqlite3 lmdb-utils
# The PostgreSQL server (initdb, pg_ctl, psql) for the PostgreSQL tests, and curl for the Server
# article's examples, which a test runs; only `make test` needs them.
APT_TEST_PACKAGES := postgresql curl
BREW_PACKAGES := pkg-config sqlite lmdb
# Every package trait, so that the tests, the demo and the docs see every backend.
TRAITS := --enable-all-traits
# Folders `make format` rewrites.
SWIFT_SOURCES := Package.swift Sources Tests Examples Conformance Fuzz CrashStates

.PHONY: all deps demo test test-standby test-remote server-fuzz check-builds check-swift-syntax docs docs-conformance docs-catalog format lint sanitize fuzz help differential crash-states soak sync-check

all: test

help:
	@echo "make demo    install missing system libraries, then run the chat demo (swift run coffer demo)"
	@echo "make test    install missing system libraries, then run every test (swift test) and make check-builds"
	@echo "make check-builds  build and run a client with only the SQLite trait, and build the fuzz targets"
	@echo "make check-swift-syntax  build the macro and run its tests with each swift-syntax major Package.swift accepts"
	@echo "make sync-check  run the sync convergence checker on COFFER_SYNC_SCHEDULES (default 10000) random schedules from COFFER_SYNC_SEED"
	@echo "make differential  run the randomized differential check on every backend side by side for long"
	@echo "make docs    regenerate Docs/Conformance.md, then build the DocC catalog of Coffer into .build/docs (fails on any warning)"
	@echo "make format  format the Swift sources with swift format"
	@echo "make lint    check the Swift sources' format (swift format lint --strict)"
	@echo "make sanitize  every test under ThreadSanitizer, then AddressSanitizer; prints the report counts"
	@echo "make fuzz    each libFuzzer target in Fuzz/ for FUZZ_SECONDS (default 60) or FUZZ_RUNS executions; FUZZ_TARGETS picks some"
	@echo "make crash-states  open every file state a power cut could leave, per durable backend (CRASH_COMMITS, CRASH_SEED)"
	@echo "make soak    writers, readers and extra processes on each durable backend for SOAK_SECONDS (default 60) each after a warm-up"
	@echo "make test-standby make test with the whole conformance suite on PostgreSQL with reads on standbys"
	@echo "make test-remote  make test with the coffer+http conformance suite served from every store, not only SQLite"
	@echo "make server-fuzz  schemathesis against coffer serve, over 20,000 requests generated from its OpenAPI document"
	@echo "make deps    only install missing system libraries"

# Installs what is missing and nothing else; when everything is there it only asks dpkg
# (or pkg-config) and returns at once. apt-get runs non-interactively, so CI without a
# terminal works; sudo is used only when not already root.
deps:
	@set -eu; \
	if command -v dpkg >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then \
	  missing=""; \
	  for package in $(APT_PACKAGES) $(EXTRA_APT_PACKAGES); do \
	    dpkg -s "$$package" >/dev/null 2>&1 || missing="$$missing $$package"; \
	  done; \
	  if [ -n "$$missing" ]; then \
	    sudo=""; [ "$$(id -u)" -eq 0 ] || sudo="sudo"; \
	    echo "Installing system libraries:$$missing"; \
	    $$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq; \
	    $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	  fi; \
	elif [ "$$(uname -s)" = Darwin ]; then \
	  if ! pkg-config --exists sqlite3 lmdb >/dev/null 2>&1; then \
	    command -v brew >/dev/null 2>&1 || { echo "Install Homebrew, or sqlite and lmdb with pkg-config files, first." >&2; exit 1; }; \
	    echo "Installing system libraries: $(BREW_PACKAGES)"; \
	    brew install $(BREW_PACKAGES); \
	  fi; \
	elif ! pkg-config --exists sqlite3 lmdb >/dev/null 2>&1; then \
	  echo "Install the SQLite 3 and LMDB development packages (headers and pkg-config files) with your system's package manager." >&2; \
	  exit 1; \
	fi

demo: deps
	$(SWIFT) run $(TRAITS) coffer demo

# The tests run against a PostgreSQL cluster made for them in a temporary folder
# (scripts/test-postgres), found through COFFER_TEST_POSTGRES_URL and PGPASSWORD; the trap stops
# and removes it however the tests end. Set COFFER_TEST_POSTGRES_URL yourself to use a server of
# your own instead. The tests whose bounds are about time run on their own after the others, so
# that the bounds measure what they are about (failover, a statement or connect timeout, a killed
# server's batches), not a machine busy with the rest of the suite: on 2 cores a test started
# beside the whole suite can wait minutes for a thread. TIMED_TESTS names them. The sync drill
# that kills `coffer sync` is among them: its child talks to a server in the test process.
# Each run of the tests (not the build before them) must end within TEST_TIME_LIMIT seconds:
# a test that hangs fails the run then, with whatever it printed, rather than holding CI until
# its own limit. `timeout` ends the whole process group, the test process included.
TEST_TIME_LIMIT ?= 1200
TIME_LIMIT = $$(command -v timeout >/dev/null 2>&1 && echo timeout $(TEST_TIME_LIMIT))
# The coffer+http tests (the whole conformance suite through in-process servers, and their
# faults) run in a step of their own too, with COFFER_TEST_REMOTE=1: beside the rest of the suite
# on 2 cores their servers answered later than a client's timeouts allow. make test serves the
# suite from a SQLite store (about 100 s on 2 cores); `make test-remote` serves it from memory,
# SQLite, LMDB and PostgreSQL (about 8 minutes). REMOTE_BACKINGS picks the stores.
TIMED_TESTS = PostgresFailoverTests|PostgresTimeoutTests|PostgresConnectFaultTests|PostgresHostsTests|PostgresKilledServerTests|PostgresStandbyReadsTests|PostgresStandbyConformanceTests|KilledSyncTests
TEST_RUN = $(SWIFT) build $(TRAITS) --build-tests \
	&& $(TIME_LIMIT) $(SWIFT) test $(TRAITS) --skip-build --skip '$(TIMED_TESTS)' --skip CofferRemoteTests \
	&& $(TIME_LIMIT) $(SWIFT) test $(TRAITS) --skip-build --filter '$(TIMED_TESTS)' \
	&& COFFER_TEST_REMOTE=1 COFFER_TEST_REMOTE_BACKINGS=$(REMOTE_BACKINGS) \
	  $(TIME_LIMIT) $(SWIFT) test $(TRAITS) --skip-build --filter CofferRemoteTests \
	&& scripts/test-schemathesis $(SCHEMATHESIS_EXAMPLES) \
	&& scripts/test-metrics \
	&& scripts/test-traces
REMOTE_BACKINGS ?= sqlite
# Examples a route in make test's schemathesis run (about 1,000 requests); `make server-fuzz`
# generates over 20,000.
SCHEMATHESIS_EXAMPLES ?= 5
test:
	@$(MAKE) --no-print-directory deps EXTRA_APT_PACKAGES="$(if $(COFFER_TEST_POSTGRES_URL),,$(APT_TEST_PACKAGES))"
	@$(MAKE) --no-print-directory check-builds
	@set -eu; \
	if [ -n "$${COFFER_TEST_POSTGRES_URL:-}" ]; then $(TEST_RUN); exit; fi; \
	cluster="$$(mktemp -d "$${TMPDIR:-/tmp}/coffer-postgres.XXXXXX")"; rmdir "$$cluster"; \
	trap 'scripts/test-postgres stop "$$cluster"' EXIT INT TERM; \
	url="$$(scripts/test-postgres start "$$cluster")"; \
	echo "PostgreSQL test server: $${url%%\?*} (removed when the tests end)"; \
	export PGPASSWORD="$$(cat "$$cluster/password")" COFFER_TEST_POSTGRES_URL="$$url"; \
	$(TEST_RUN)

# make test with every conformance check run against PostgreSQL with reads on two standbys (make
# test runs every fourth; the whole suite adds about 10 minutes on 2 cores).
test-standby:
	@COFFER_TEST_STANDBY_CONFORMANCE=all $(MAKE) --no-print-directory test

# The coffer+http tests with the conformance suite served from every store, PostgreSQL included
# (a throwaway cluster, as make test starts).
test-remote:
	@$(MAKE) --no-print-directory test REMOTE_BACKINGS=memory,sqlite,lmdb,postgres

# schemathesis against `coffer serve` for long: 120 examples a route, over 20,000 generated
# requests, each answer checked against the OpenAPI document (no 5xx, no answer the document
# does not allow). About 15 minutes on 2 cores.
server-fuzz:
	$(SWIFT) build $(TRAITS) --product coffer
	scripts/test-schemathesis 120

# Builds that `make test` runs besides the package's own, so that neither breaks unseen: a client
# package that depends on Coffer with only the `SQLite` trait, built and run (scripts/check-client,
# in .build-client), and every fuzz target of Fuzz/ built, not run: debug, with libFuzzer linked,
# in a scratch folder of its own (`make fuzz` builds them optimized with AddressSanitizer). About
# 2.5 minutes from nothing, seconds when warm.
FUZZ_CHECK_BUILD = $(SWIFT) build --package-path Fuzz --scratch-path .build-fuzz-check \
  -Xswiftc -sanitize=fuzzer -Xswiftc -use-ld=lld
check-builds:
	@scripts/check-client
	@if $(FUZZ_CHECK_BUILD) > .build-fuzz-check.log 2>&1; then \
	  echo "fuzz: every target of Fuzz/ builds"; \
	else \
	  grep -E 'error' .build-fuzz-check.log | head -20 >&2; \
	  echo "fuzz: the fuzz targets did not build (log: .build-fuzz-check.log)" >&2; exit 1; \
	fi

# The @Storable macro built and its tests run with the newest release of each swift-syntax major
# that Package.swift's range accepts (scripts/check-swift-syntax, in .build-swift-syntax/MAJOR);
# SWIFT_SYNTAX_VERSIONS="602.0.0" picks versions. About 4 minutes a major from nothing, so it is
# not part of `make test`: run it when the macro or the range changes.
check-swift-syntax:
	@scripts/check-swift-syntax $(SWIFT_SYNTAX_VERSIONS)

docs: docs-conformance docs-catalog

# Build first, so that only the command's own output lands in the file.
docs-conformance:
	$(SWIFT) build $(TRAITS) --product coffer
	"$$($(SWIFT) build $(TRAITS) --show-bin-path)/coffer" conformance --list > Docs/Conformance.md.tmp
	mv Docs/Conformance.md.tmp Docs/Conformance.md

# The DocC catalog Sources/Coffer/Coffer.docc with the symbols of the Coffer module, built by the
# docc of the toolchain (no plugin). The symbol graphs come from a build of the Coffer target in a
# scratch folder of its own, so the compiler flags they need never make the everyday .build
# recompile. Any docc warning (a link that does not resolve, an undocumented parameter, …) fails
# the build, and so does a top-level symbol that the landing page's Topics do not list (docc then
# files it under a generated group of its own). Open .build/docs/Coffer.doccarchive with a static
# web server, or `docc preview Sources/Coffer/Coffer.docc --additional-symbol-graph-dir …`.
DOCC ?= docc
DOCS_SCRATCH := .build/docs-build
DOCS_SYMBOLS := .build/docs-symbol-graphs
DOCS_ARCHIVE := .build/docs/Coffer.doccarchive
docs-catalog:
	@mkdir -p $(DOCS_SYMBOLS) $(dir $(DOCS_ARCHIVE))
	$(SWIFT) build $(TRAITS) --target Coffer --scratch-path $(DOCS_SCRATCH) \
	  -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$(CURDIR)/$(DOCS_SYMBOLS)" \
	  -Xswiftc -emit-extension-block-symbols -Xswiftc -symbol-graph-skip-synthesized-members \
	  -Xswiftc -include-spi-symbols
	@# Only Coffer's own graphs: the dependencies' (swift-log, swift-metrics, Tracing) are not
	@# this catalog's to check, and their articles' links do not resolve here.
	@find $(DOCS_SYMBOLS) -name '*.symbols.json' ! -name 'Coffer.symbols.json' ! -name 'Coffer@*.symbols.json' -delete
	$(DOCC) convert Sources/Coffer/Coffer.docc --additional-symbol-graph-dir $(DOCS_SYMBOLS) \
	  --fallback-display-name Coffer --fallback-bundle-identifier org.coffer.Coffer \
	  --output-path $(DOCS_ARCHIVE) --warnings-as-errors
	@if grep -q '"generated":true' $(DOCS_ARCHIVE)/data/documentation/coffer.json; then \
	  echo "docs: Coffer.md's Topics do not list every top-level symbol; docc grouped these itself:" >&2; \
	  grep -o '{[^{}]*"generated":true[^{}]*}' $(DOCS_ARCHIVE)/data/documentation/coffer.json \
	    | grep -o 'documentation\\/Coffer\\/[^"]*' | sed 's|documentation\\/Coffer\\/|  |' >&2; \
	  exit 1; \
	fi
	@echo "docs: $(DOCS_ARCHIVE)"

format:
	$(SWIFT) format -i -r $(SWIFT_SOURCES)

lint:
	$(SWIFT) format lint --strict -r $(SWIFT_SOURCES)

# The libFuzzer targets of Fuzz/, each for FUZZ_SECONDS, built optimized with AddressSanitizer.
# The direct targets (one decoder each, in memory) come first, then the whole-path ones; FUZZ_TARGETS
# picks some (`make fuzz FUZZ_TARGETS="fuzz-lmdb-row fuzz-lmdb-key"`), FUZZ_RUNS stops each after
# that many executions (`FUZZ_RUNS=10000000`; -1, the default, runs for the whole time). Seeds: the
# demo store as binary and XML plist files and as a JSON Lines export, and the inputs each direct
# target writes from them (COFFER_FUZZ_SEEDS). Corpora grow in .build-fuzz/corpus/TARGET; an input
# that crashes, leaks or runs past FUZZ_TIMEOUT seconds is saved as .build-fuzz/crash-… (leak-…,
# timeout-…) and fails the target. Prints each target's executions and executions per second.
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= -1
FUZZ_TIMEOUT ?= 10
FUZZ_TARGETS ?= fuzz-binary-plist fuzz-xml-plist fuzz-lmdb-row fuzz-lmdb-key fuzz-lmdb-catalog \
  fuzz-sqlite-catalog fuzz-jsonl-line fuzz-store-url fuzz-plist-file fuzz-jsonl-import
FUZZ_BUILD = $(SWIFT) build -c release --package-path Fuzz --scratch-path .build-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
fuzz: deps
	@set -eu; $(FUZZ_BUILD) 2>&1 | grep -v 'Cannot export local symbol' | tail -1; \
	bin="$$($(FUZZ_BUILD) --show-bin-path)"; corpus=.build-fuzz/corpus; seeds="$$corpus/seeds-plist"; \
	jsonl="$$corpus/seeds-jsonl"; mkdir -p "$$seeds" "$$jsonl"; \
	if [ ! -f "$$seeds/binary.plist" ]; then \
	  $(SWIFT) run $(TRAITS) coffer demo --store "plist://$$PWD/$$seeds/binary.plist" > /dev/null; \
	  $(SWIFT) run $(TRAITS) coffer demo --store "plist://$$PWD/$$seeds/xml.plist?format=xml" > /dev/null; \
	  rm -f "$$seeds"/*.lock; \
	fi; \
	if [ ! -f "$$jsonl/demo.jsonl" ]; then \
	  $(SWIFT) run $(TRAITS) coffer export "plist://$$PWD/$$seeds/binary.plist" --output "$$jsonl/demo.jsonl" 2> /dev/null; \
	  rm -f "$$seeds"/*.lock; \
	fi; \
	export LSAN_OPTIONS="suppressions=$$PWD/Tests/lsan-suppressions.txt" SWIFT_BACKTRACE=enable=no; \
	status=0; \
	for target in $(FUZZ_TARGETS); do \
	  name="$${target#fuzz-}"; extra=""; \
	  case "$$target" in \
	    fuzz-plist-file|fuzz-binary-plist|fuzz-xml-plist) extra="$$seeds" ;; \
	    fuzz-jsonl-import) extra="$$jsonl" ;; \
	  esac; \
	  case "$$target" in \
	    fuzz-store-url|fuzz-plist-file|fuzz-jsonl-import) ;; \
	    *) if [ ! -d "$$corpus/seeds-$$name" ]; then \
	         ASAN_OPTIONS=detect_leaks=0 COFFER_FUZZ_SEEDS="$$corpus/seeds-$$name" COFFER_FUZZ_EXPORT="$$jsonl/demo.jsonl" \
	           "$$bin/$$target" > /dev/null; \
	       fi; extra="$$extra $$corpus/seeds-$$name" ;; \
	  esac; \
	  mkdir -p "$$corpus/$$target"; log=".build-fuzz/$$target.log"; \
	  if "$$bin/$$target" -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -timeout=$(FUZZ_TIMEOUT) -max_len=8192 \
	    -print_final_stats=1 -artifact_prefix=.build-fuzz/ "$$corpus/$$target" $$extra > "$$log" 2>&1; then \
	    result=ok; else result=FAILED; status=1; fi; \
	  runs=$$(grep -a '^stat::number_of_executed_units' "$$log" | awk '{ print $$2 }'); \
	  rate=$$(grep -a '^stat::average_exec_per_sec' "$$log" | awk '{ print $$2 }'); \
	  echo "fuzz: $$target: $${runs:-?} executions, $${rate:-?} exec/s: $$result (log $$log)"; \
	  grep -a -E '^(==[0-9]+==ERROR|SUMMARY|Fatal error|.*property violated)' "$$log" | head -3 || true; \
	done; exit $$status

# The power-loss crash-state explorer (CrashStates/): records a writer's writes and syncs with an
# LD_PRELOAD shim, builds the file states a power cut could leave, and opens each with Coffer.
CRASH_COMMITS ?= 50
CRASH_SEED ?= 1
crash-states: deps
	@scripts/crash-states --commits $(CRASH_COMMITS) --seed $(CRASH_SEED)

# A bounded soak (scripts/soak): 8 writer tasks, 4 readers and 2 extra processes on plist, SQLite,
# LMDB and a throwaway PostgreSQL cluster, SOAK_SECONDS each after a warm-up (two windows, nine for
# PostgreSQL), the transfer invariant checked on every read; per 10-second window throughput,
# resident memory and open descriptors.
soak:
	@$(MAKE) --no-print-directory deps EXTRA_APT_PACKAGES="$(APT_TEST_PACKAGES)"
	@scripts/soak

# Every test under ThreadSanitizer, then AddressSanitizer (LeakSanitizer included), each in a
# build folder of its own. Tests/*san-suppressions.txt say what is suppressed and why. The logs
# stay in .build-tsan.log and .build-asan.log; the last lines count the sanitizers' reports — also
# those of the child processes some tests start, whose output the tests print indented — and the
# target fails when there is any or a test failed.
sanitize: deps
	@set -u; status=0; \
	for kind in thread address; do \
	  short=$$( [ $$kind = thread ] && echo tsan || echo asan ); log=".build-$$short.log"; \
	  echo "sanitize: swift test --sanitize=$$kind (log $$log)"; \
	  TSAN_OPTIONS="suppressions=$$PWD/Tests/tsan-suppressions.txt" \
	    LSAN_OPTIONS="suppressions=$$PWD/Tests/lsan-suppressions.txt" \
	    ASAN_OPTIONS="suppressions=$$PWD/Tests/asan-suppressions.txt" \
	    $(SWIFT) test $(TRAITS) --sanitize=$$kind --scratch-path ".build-$$short" > "$$log" 2>&1; tests=$$?; \
	  reports=$$(grep -c -E '^[[:space:]]*(WARNING: ThreadSanitizer|==[0-9]+==ERROR: (Address|Leak)Sanitizer)' "$$log"); \
	  echo "sanitize: $$kind: $$reports reports; tests exited $$tests"; \
	  grep -E '^. Test run with|Executed [0-9]+ tests' "$$log" | tail -2; \
	  if [ "$$reports" != 0 ] || [ "$$tests" != 0 ]; then status=1; fi; \
	done; exit $$status

# The randomized differential check on every backend side by side, for a long time: set
# COFFER_DIFFERENTIAL_SECONDS (600 when neither it nor COFFER_DIFFERENTIAL_SEQUENCES is set) or
# COFFER_DIFFERENTIAL_SEQUENCES, COFFER_DIFFERENTIAL_STEPS (steps per sequence, 150), and
# COFFER_CONFORMANCE_SEED for the first seed (by default one from the clock, so each run covers
# new seeds); COFFER_DIFFERENTIAL_EXCLUDE leaves out kinds of step and COFFER_DIFFERENTIAL_URLS
# chooses the backends (see DifferentialSideBySideTests.swift). It prints each seed as it runs,
# every disagreement with its seed, and a summary line. A sequence that crashes the process is
# recorded by its seed and the run goes on from the next one; the whole output, crash reports
# included, is kept in COFFER_DIFFERENTIAL_LOG (default /tmp/coffer-differential-SEED.log). The
# test binary is copied first where SwiftPM builds one executable, so rebuilds during the run do
# not change what runs.
differential: deps
	@set -u; \
	$(SWIFT) build $(TRAITS) --build-tests || exit 1; \
	runner="$(SWIFT) test $(TRAITS) --skip-build"; \
	binary="$$($(SWIFT) build $(TRAITS) --show-bin-path)/CofferPackageTests.xctest"; \
	if [ -f "$$binary" ] && [ -x "$$binary" ]; then \
	  snapshot="$$(mktemp -d)/CofferPackageTests.xctest"; cp "$$binary" "$$snapshot"; \
	  runner="$$snapshot --testing-library swift-testing"; \
	fi; \
	seed="$${COFFER_CONFORMANCE_SEED:-$$(date +%s)000}"; first="$$seed"; \
	sequences="$${COFFER_DIFFERENTIAL_SEQUENCES:-}"; seconds="$${COFFER_DIFFERENTIAL_SECONDS:-}"; \
	if [ -z "$$sequences$$seconds" ]; then seconds=600; fi; \
	log="$${COFFER_DIFFERENTIAL_LOG:-/tmp/coffer-differential-$$first.log}"; : > "$$log"; \
	chunk="$$log.part"; started=$$(date +%s); crashes=""; ran=0; \
	echo "differential: first seed $$first, $${sequences:-unlimited} sequences, $${seconds:-unlimited} seconds; log $$log"; \
	while :; do \
	  left=""; if [ -n "$$sequences" ]; then left=$$((sequences - ran)); [ "$$left" -gt 0 ] || break; fi; \
	  remaining=""; if [ -n "$$seconds" ]; then remaining=$$((seconds - $$(date +%s) + started)); [ "$$remaining" -gt 0 ] || break; fi; \
	  env COFFER_CONFORMANCE_SEED="$$seed" COFFER_DIFFERENTIAL_VERBOSE=1 \
	    $${left:+COFFER_DIFFERENTIAL_SEQUENCES=$$left} $${remaining:+COFFER_DIFFERENTIAL_SECONDS=$$remaining} \
	    $$runner --filter DifferentialSideBySide 2>&1 | tee "$$chunk" | \
	    awk '/\*\*\* Program crashed/ { crashed = 1 } !crashed && /^(done seed|  DISAGREEMENT|  [0-9]+\. |At step|Other backends|In the whole|[^ ].* and the reference disagree|differential)/ { print; fflush() }'; \
	  cat "$$chunk" >> "$$log"; \
	  ran=$$((ran + $$(grep -a -c '^done seed' "$$chunk"))); \
	  if grep -a -q '^differential: [0-9]* sequences' "$$chunk"; then break; fi; \
	  crashed=$$(grep -a '^starting seed' "$$chunk" | tail -n 1 | awk '{ print $$3 }'); \
	  if [ -z "$$crashed" ]; then echo "differential: the test process failed before any sequence; see $$log"; exit 1; fi; \
	  echo "CRASH at seed $$crashed (the process died; its report is in $$log)"; \
	  crashes="$$crashes $$crashed"; ran=$$((ran + 1)); seed=$$((crashed + 1)); \
	done; \
	rm -f "$$chunk"; if [ -n "$${snapshot:-}" ]; then rm -rf "$$(dirname "$$snapshot")"; fi; \
	awk -v crashes="$$crashes" ' \
	  /^done seed/ { sequences++; for (i = 5; i <= NF - 2; i++) { k = $$i; sub(/=[0-9]+$$/, "", k); v = $$i; sub(/.*=/, "", v); steps[k] += v; if (!(k in order)) { order[k] = ++n; names[n] = k } } } \
	  /^  DISAGREEMENT on/ { found++ } \
	  /^starting seed/ { if (firstseed == "") firstseed = $$3; lastseed = $$3 } \
	  END { line = "differential total: " sequences + split(crashes, c, " ") " sequences (seeds " firstseed "…" lastseed "); steps"; \
	        for (i = 1; i <= n; i++) line = line " " names[i] " " steps[names[i]]; \
	        print line "; " found + 0 " disagreements; crashes at seeds:" (crashes == "" ? " none" : crashes) }' "$$log"

# The sync convergence checker's long run (issue 46): random schedules on replicas of mixed
# backends through a lossy, duplicating, reordering transport with restarts, each checked
# against the reference merge. `make test` runs 12 of them; a failure prints its seed and a
# shrunk schedule. The test binary is copied first, so that builds in the tree meanwhile do not
# disturb the run.
sync-check: deps
	@set -eu; \
	$(SWIFT) build $(TRAITS) --build-tests; \
	binary="$$($(SWIFT) build $(TRAITS) --show-bin-path)/CofferPackageTests.xctest"; \
	snapshot="$$(mktemp -d)/CofferPackageTests.xctest"; cp "$$binary" "$$snapshot"; \
	COFFER_SYNC_SCHEDULES="$${COFFER_SYNC_SCHEDULES:-10000}" COFFER_SYNC_SEED="$${COFFER_SYNC_SEED:-46000}" \
	  "$$snapshot" --testing-library swift-testing --filter ConvergenceTests; \
	rm -rf "$$(dirname "$$snapshot")"

# The viewer in a real browser (issue 45): headless Chromium driven through chromium-driver by
# selenium, on a seeded SQLite store served by `coffer ui`, with a second `coffer serve` process
# writing to the same file. Each scenario saves a PNG under .build/viewer-screenshots. Installs
# chromium and chromium-driver (apt) and selenium (pip) when missing. About a minute when warm;
# `make test` runs it last.
VIEWER_APT_PACKAGES := chromium chromium-driver
.PHONY: test-viewer
test-viewer:
	@$(MAKE) --no-print-directory deps EXTRA_APT_PACKAGES="$(VIEWER_APT_PACKAGES)"
	@python3 -c "import selenium" 2>/dev/null || python3 -m pip install --quiet selenium \
	  || python3 -m pip install --quiet --break-system-packages selenium
	$(SWIFT) build $(TRAITS) --product coffer
	python3 Tests/Browser/viewer_browser_test.py --coffer "$$($(SWIFT) build $(TRAITS) --show-bin-path)/coffer"
TEST_RUN += && $(MAKE) --no-print-directory test-viewer
