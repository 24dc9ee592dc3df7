# `make help` lists the targets. Needs Python >= 3.11 (python3-venv) and Rust (cargo) on PATH.
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
ENGINE_SOURCES := $(shell find engine/src -name '*.rs') engine/Cargo.toml engine/Cargo.lock

FUZZ_TARGETS := http1_response chunked_body tls_client
FUZZ_SECONDS ?= 20

.PHONY: help setup run test test-fresh bench lint schema stubtest fuzz-smoke

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  make %-10s %s\n", $$1, $$2}'

setup: $(STAMP) ## create .venv and install gauntlet with its engine (release build) and test tools

# Rebuilt when the engine or the package metadata changes; Python sources are picked up live (editable).
# --no-build-isolation uses the venv's maturin (no download per build); its shim finds the `maturin`
# binary on PATH, hence the PATH. A plain `pip install -e .` (isolated build) works too, just slower.
$(STAMP): pyproject.toml $(ENGINE_SOURCES)
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet 'maturin>=1.5,<2'
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/pip install --quiet --no-build-isolation -e '.[test]'
	touch $@

run: setup ## the quick suite on every installed server (the built-in one at least): results.db, report.html
	$(VENV)/bin/gauntlet suite run quick

test: setup ## the engine's cargo tests, then pytest against real servers
	cd engine && cargo test
	$(VENV)/bin/pytest

test-fresh: setup ## pytest as a fresh machine sees it: every server hidden, each test passes or skips (root or sudo)
	bash .ci/fresh-machine

bench: setup ## gauntlet (epoll, io_uring) vs wrk and the floor client on nginx, ratios (bench/README.md); ~9 minutes
	$(VENV)/bin/python bench/peers.py

lint: setup stubtest ## cargo fmt --check, clippy with warnings as errors, ruff, mypy, stubtest
	cd engine && cargo fmt --check
	cd engine && cargo clippy --all-targets --all-features -- -D warnings
	$(VENV)/bin/ruff check python tests bench
	$(VENV)/bin/mypy

# MYPYPATH: stubtest does not follow the editable install's .pth, and without the stub it checks nothing.
stubtest: setup ## python/gauntlet/_engine.pyi against the built module (mypy's stubtest)
	MYPYPATH=python $(VENV)/bin/python -m mypy.stubtest gauntlet._engine

schema: ## regenerate python/gauntlet/schema/{plan,run-result-v2}.json from the engine's Rust types
	cd engine && cargo run --quiet --bin gauntlet-engine -- schema plan > ../python/gauntlet/schema/plan.json
	cd engine && cargo run --quiet --bin gauntlet-engine -- schema result > ../python/gauntlet/schema/run-result-v2.json

# New inputs go to a scratch corpus under fuzz/target/, so the committed one (fuzz/corpus/) stays as it is;
# docs/fuzzing.md says how to run longer and fold what was found back in.
fuzz-smoke: ## each cargo-fuzz target for FUZZ_SECONDS (20) from its corpus; needs nightly and cargo-fuzz
	cd engine && cargo +nightly fuzz build -s none
	cd engine && for target in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/target/corpus/$$target && \
		cargo +nightly fuzz run -s none $$target fuzz/target/corpus/$$target fuzz/corpus/$$target -- \
			-max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 || exit 1; \
	done
