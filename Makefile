# xfn: one entry point for building, testing and benchmarking.
#
#   make render   render the docs example, offline, with built-in functions
#   make test     install what the tests need, build everything, run every test
#   make bench    run the benchmark suite and write target/bench-report/

SHELL := /bin/bash
CARGO ?= cargo
WASM_TARGET := wasm32-wasip2
WASM_PROFILE := wasm
WASM_DIR := target/$(WASM_TARGET)/$(WASM_PROFILE)
VENV := .venv
PY_SDK_VERSION := 0.15.1

# Every wasm component the workspace builds: shipped functions and test guests.
WASM_PACKAGES := hello function-auto-ready function-patch-and-transform function-annotate xfn-test-scripted

.PHONY: all build wasm render test lint fmt bench venv deps toolchain wasm-target clean

all: build

## Tooling -----------------------------------------------------------------

# The toolchain rust-toolchain.toml pins, with the wasm target and the
# components it lists (rustup doesn't install it on its own when
# RUSTUP_AUTO_INSTALL=0).
toolchain:
	rustup toolchain install

wasm-target: toolchain
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)

# Python SDK of Crossplane functions: a real peer for wire-compatibility tests.
venv: $(VENV)/.installed
$(VENV)/.installed:
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check crossplane-function-sdk-python==$(PY_SDK_VERSION)
	touch $@

## Build -------------------------------------------------------------------

wasm: wasm-target
	$(CARGO) build --profile $(WASM_PROFILE) --target $(WASM_TARGET) $(addprefix -p ,$(WASM_PACKAGES))

build: wasm
	XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) $(CARGO) build --release -p xfn-host

## Main job ----------------------------------------------------------------

render: build
	target/release/xfn render examples/docs/xr.yaml examples/docs/composition.yaml examples/docs/functions.yaml

## Tests -------------------------------------------------------------------

# System packages some tests need (a real OCI registry, skopeo), if missing.
deps:
	@if [ -x tests/registry/install.sh ]; then tests/registry/install.sh; fi

test: wasm venv deps
	XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) XFN_WASM_DIR=$(CURDIR)/$(WASM_DIR) XFN_PYTHON=$(CURDIR)/$(VENV)/bin/python \
	XFN_BIN=$(CURDIR)/target/debug/xfn \
		$(CARGO) test --workspace --all-targets

## Benchmarks ----------------------------------------------------------------

bench: wasm venv deps
	XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) $(CARGO) build --release -p xfn-host --bin xfn
	XFN_WASM_DIR=$(CURDIR)/$(WASM_DIR) XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) XFN_PYTHON=$(CURDIR)/$(VENV)/bin/python \
		$(CARGO) bench -p xfn-host --bench host
	XFN_WASM_DIR=$(CURDIR)/$(WASM_DIR) XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) XFN_PYTHON=$(CURDIR)/$(VENV)/bin/python \
		XFN_BIN=$(CURDIR)/target/release/xfn $(CARGO) bench -p xfn-tests --bench suite

lint: toolchain
	$(CARGO) fmt --all -- --check
	XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) $(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
	rm -rf $(VENV)
