# Coffer's everyday commands. `make demo` and `make test` first install the C libraries the
# SQLite and LMDB backends build on, when they are missing, then run SwiftPM.

SWIFT ?= swift
# Debian/Ubuntu packages, and Homebrew formulas, for the system libraries the build links and
# the command-line tools (sqlite3, mdb_stat) the tests use to inspect stores from outside.
APT_PACKAGES := pkg-config libsqlite3-dev liblmdb-dev sqlite3 lmdb-utils
BREW_PACKAGES := pkg-config sqlite lmdb
# Folders `make format` rewrites.
SWIFT_SOURCES := Package.swift Sources Tests Examples Conformance

.PHONY: all deps demo test docs format help

all: test

help:
	@echo "make demo    install missing system libraries, then run the chat demo (swift run coffer demo)"
	@echo "make test    install missing system libraries, then run every test (swift test)"
	@echo "make docs    regenerate Docs/Conformance.md from 'coffer conformance --list'"
	@echo "make format  format the Swift sources with swift format"
	@echo "make deps    only install missing system libraries"

# Installs what is missing and nothing else; when everything is there it only asks dpkg
# (or pkg-config) and returns at once. apt-get runs non-interactively, so CI without a
# terminal works; sudo is used only when not already root.
deps:
	@set -eu; \
	if command -v dpkg >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then \
	  missing=""; \
	  for package in $(APT_PACKAGES); do \
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
	$(SWIFT) run coffer demo

test: deps
	$(SWIFT) test

# Build first, so that only the command's own output lands in the file.
docs:
	$(SWIFT) build --product coffer
	"$$($(SWIFT) build --show-bin-path)/coffer" conformance --list > Docs/Conformance.md.tmp
	mv Docs/Conformance.md.tmp Docs/Conformance.md

format:
	$(SWIFT) format -i -r $(SWIFT_SOURCES)
