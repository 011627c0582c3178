# xfn: one entry point for building, testing and benchmarking.
#
#   make install  build xfn with the built-in functions into ~/.cargo/bin (PREFIX)
#   make render   render the docs example, offline, with built-in functions
#   make image    build xfn's container image as an OCI layout in target/image/
#   make test     install what the tests need, build everything, run every test
#   make bench    run the benchmark suite and write target/bench-report/
#   make fuzz     run every fuzzer for FUZZ_SECONDS (default 300) each

SHELL := /bin/bash
CARGO ?= cargo
WASM_TARGET := wasm32-wasip2
WASM_PROFILE := wasm
WASM_DIR := target/$(WASM_TARGET)/$(WASM_PROFILE)
VENV := .venv

# Every wasm component the workspace builds: shipped functions and test guests.
WASM_PACKAGES := hello function-auto-ready function-patch-and-transform function-annotate function-environment-configs function-extra-resources function-sequencer function-status-transformer function-cel-filter function-cidr function-go-templating function-kcl typed-resources

.PHONY: kopium all build install wasm render image image-check musl-target test disk-check lint fmt-check fmt bench bench-tools fuzz fuzz-tools venv deps go-peer container-function gotmpl-oracle toolchain third-party wasm-target clean

all: build

## Tooling -----------------------------------------------------------------

# The toolchain rust-toolchain.toml pins, with the wasm target and the
# components it lists (rustup doesn't install it on its own when
# RUSTUP_AUTO_INSTALL=0).
toolchain:
	rustup toolchain install

# wasmtime with xfn's patches, which Cargo.toml's [patch] builds against.
third-party: toolchain
	third_party/prepare.sh

wasm-target: third-party
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)

# The test virtualenv, from tests/requirements.txt: the Python SDK of
# Crossplane functions (a real peer for wire-compatibility tests) and the
# reference KCL, kcl-lib (xfn-kcl's differential test). Reinstalled when the
# requirements change.
venv: $(VENV)/.installed
$(VENV)/.installed: tests/requirements.txt
	test -x $(VENV)/bin/pip || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/requirements.txt
	touch $@

## Build -------------------------------------------------------------------

wasm: wasm-target
	$(CARGO) build --profile $(WASM_PROFILE) --target $(WASM_TARGET) $(addprefix -p ,$(WASM_PACKAGES))

# Then the built-in functions are compiled for this machine into the
# binary (xfn precompile-builtins), so that a first render costs what a
# warm one does.
build: wasm
	XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) $(CARGO) build --release -p xfn
	target/release/xfn precompile-builtins

# xfn, with the built-in functions, into $(PREFIX)/bin (cargo's default
# ~/.cargo/bin, which rustup puts on PATH).
PREFIX ?= $(or $(CARGO_INSTALL_ROOT),$(HOME)/.cargo)
install: wasm
	XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) $(CARGO) install --locked --path host --root $(PREFIX)
	$(PREFIX)/bin/xfn precompile-builtins

## Image -------------------------------------------------------------------

# xfn's container image, without Docker: a static (musl) release build of
# xfn with the built-in functions, without its debug info (190 MiB of line
# tables; symbols stay, so backtraces still name functions), written by
# deploy/oci-image.py as an OCI image layout (one layer; runs as uid 65532).
# Publish it with
#   skopeo copy oci:target/image:$(IMAGE_TAG) docker://REGISTRY/xfn:$(IMAGE_TAG)
# The layout is reproducible: its mtimes and creation time are
# SOURCE_DATE_EPOCH, by default the time of the commit checked out.
MUSL_TARGET := x86_64-unknown-linux-musl
TARGET_DIR := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' Cargo.toml | head -n 1)
IMAGE_NAME ?= ghcr.io/xfn-dev/xfn
IMAGE_TAG ?= v$(VERSION)
IMAGE_DIR ?= $(TARGET_DIR)/image
IMAGE_PROFILE ?= release
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_BIN = $(TARGET_DIR)/$(MUSL_TARGET)/$(if $(filter dev,$(IMAGE_PROFILE)),debug,$(IMAGE_PROFILE))/xfn

# The musl target of the pinned toolchain, a C compiler for musl (ring and
# mimalloc compile C) and the CA bundle the image carries, if missing.
musl-target: toolchain
	@rustup target list --installed | grep -qx $(MUSL_TARGET) || rustup target add $(MUSL_TARGET)
	@command -v x86_64-linux-musl-gcc >/dev/null || tests/apt-install.sh musl-tools
	@test -f $(CA_BUNDLE) || tests/apt-install.sh ca-certificates

image: wasm musl-target
	XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) $(CARGO) build --profile $(IMAGE_PROFILE) --target $(MUSL_TARGET) -p xfn --bin xfn
	objcopy --strip-debug $(IMAGE_BIN) $(IMAGE_BIN).image
	$(if $(filter image-check,$(IMAGE_PROFILE)),,$(IMAGE_BIN).image precompile-builtins)
	python3 deploy/oci-image.py --binary $(IMAGE_BIN).image --ca-bundle $(CA_BUNDLE) \
		--name $(IMAGE_NAME) --tag $(IMAGE_TAG) --epoch $(SOURCE_DATE_EPOCH) --out $(IMAGE_DIR)

# The same image with xfn built in the image-check profile (Cargo.toml),
# which builds much faster: what `make test` checks (tests/tests/image.rs).
# (Not target/image-check: cargo builds that profile's build scripts there.)
IMAGE_CHECK_DIR := $(TARGET_DIR)/image-for-tests
image-check:
	@$(MAKE) --no-print-directory image IMAGE_PROFILE=image-check IMAGE_DIR=$(IMAGE_CHECK_DIR)

## Main job ----------------------------------------------------------------

render: build
	target/release/xfn render examples/docs/xr.yaml examples/docs/composition.yaml examples/docs/functions.yaml

## Tests -------------------------------------------------------------------

# System packages some tests need (a real OCI registry, skopeo, Go and
# grpc-go for the Go peer and the container function), if missing.
deps: go-peer container-function gotmpl-oracle
	@if [ -x tests/registry/install.sh ]; then tests/registry/install.sh; fi

# The Go peer of the benchmarks (grpc-go, from Debian's packages, which it
# installs if missing), built into $(CARGO_TARGET_DIR)/go-peer.
go-peer:
	tests/go-peer/build.sh >/dev/null

# The Go composition function the container runtime's tests run (grpc-go,
# from Debian's packages, which it installs if missing; static), built into
# $(CARGO_TARGET_DIR)/container-function.
container-function:
	tests/container-function/build.sh >/dev/null

# The Go oracle of function-go-templating's differential test (text/template
# and sprig from Debian's packages, which it installs if missing), built into
# $(CARGO_TARGET_DIR)/gotmpl-oracle.
gotmpl-oracle:
	functions/function-go-templating/oracle/build.sh >/dev/null

# What `make test` writes into target/ from nothing: 9.0 GiB measured on
# a fresh clone (2026-11-28: 5.3 GiB of tests, 2.5 GiB for the image
# check's musl build, 1.2 GiB of guests, the author-path test's project
# and the rest), with room to spare.
TEST_BUILD_MIB := 10240

# Refuses to start a test build the disk has no room for.
disk-check:
	@tests/check-disk.sh $${CARGO_TARGET_DIR:-target} $(TEST_BUILD_MIB)

# A fresh build gains nothing from incremental state, which would add
# gigabytes to target/ (set CARGO_INCREMENTAL=1 to keep it).
# The lints gate the tests: rustfmt first, then clippy (-D warnings) on
# every workspace crate and target as the test build compiles it, with
# clippy-driver as the workspace's compiler. That is what `make lint`'s
# `cargo clippy --workspace --all-targets` checks, without compiling every
# dependency a second time in check mode (13.5 minutes of a fresh clone).
CLIPPY_DRIVER = $$(rustup which clippy-driver)
CLIPPY_DENY_WARNINGS = -D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__

test: disk-check fmt-check wasm venv deps image-check
	CARGO_INCREMENTAL=$${CARGO_INCREMENTAL:-0} XFN_IMAGE_LAYOUT=$(IMAGE_CHECK_DIR) \
	XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) XFN_WASM_DIR=$(CURDIR)/$(WASM_DIR) XFN_PYTHON=$(CURDIR)/$(VENV)/bin/python \
	XFN_BIN=$(CURDIR)/target/debug/xfn XFN_STATIC_BIN=$(TARGET_DIR)/$(MUSL_TARGET)/image-check/xfn.image \
	RUSTC_WORKSPACE_WRAPPER=$(CLIPPY_DRIVER) CLIPPY_ARGS=$(CLIPPY_DENY_WARNINGS) \
		$(CARGO) test --workspace --all-targets

# kopium (pinned), which turns a provider's CRD into Rust types, into
# $(TARGET_DIR)/kopium: with it, `make test` also checks that
# examples/typed-resources/src/bucket.rs is what kopium makes of its CRD.
# (Not part of `make test`: a 4-minute build for a check of a generated file.)
KOPIUM_VERSION := 0.24.1
kopium:
	$(CARGO) install kopium --version $(KOPIUM_VERSION) --locked --root $(TARGET_DIR)/kopium

## Benchmarks ----------------------------------------------------------------

bench: wasm venv deps bench-tools
	XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) $(CARGO) build --release -p xfn --bin xfn
	target/release/xfn precompile-builtins
	XFN_WASM_DIR=$(CURDIR)/$(WASM_DIR) XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) XFN_PYTHON=$(CURDIR)/$(VENV)/bin/python \
		$(CARGO) bench -p xfn-runtime --bench host
	XFN_WASM_DIR=$(CURDIR)/$(WASM_DIR) XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) XFN_PYTHON=$(CURDIR)/$(VENV)/bin/python \
		XFN_BIN=$(CURDIR)/target/release/xfn $(CARGO) bench -p xfn-tests --bench suite

# h2load, item 11's load generator.
bench-tools:
	@command -v h2load >/dev/null || tests/apt-install.sh nghttp2-client

## Fuzzing -----------------------------------------------------------------

# The fuzzers of tests/fuzz, one per body in xfn-tests' `fuzz` module. Each
# runs FUZZ_SECONDS from the committed corpus (tests/fuzz/corpus/<target>,
# which `make test` replays) plus what earlier runs found (kept under
# FUZZ_OUT, not committed). A crash stops the run and is written to
# tests/fuzz/artifacts/<target>/. No sanitizer by default: the code is safe
# Rust, checked with debug assertions (overflow included); set
# FUZZ_SANITIZER=address to add ASan.
FUZZ_SECONDS ?= 300
FUZZ_TARGETS := yaml_loader oci_manifest oci_config proto_wit_roundtrip pt_input field_path
FUZZ_MAX_LEN ?= 65536
FUZZ_RSS_MB ?= 2048
FUZZ_SANITIZER ?= none
FUZZ_TOOLCHAIN ?= nightly
FUZZ_TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)/fuzz
FUZZ_OUT := $(FUZZ_TARGET_DIR)/out
FUZZ_CARGO = $(CARGO) +$(FUZZ_TOOLCHAIN) fuzz
FUZZ_BUILD_FLAGS = --target-dir $(FUZZ_TARGET_DIR) --sanitizer $(FUZZ_SANITIZER) --debug-assertions

# libFuzzer needs nightly Rust and cargo-fuzz; install them if missing.
fuzz-tools:
	@rustup toolchain list | grep -q '^$(FUZZ_TOOLCHAIN)' || rustup toolchain install $(FUZZ_TOOLCHAIN) --profile minimal
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked

fuzz: fuzz-tools
	cd tests/fuzz && $(FUZZ_CARGO) build $(FUZZ_BUILD_FLAGS)
	@set -o pipefail; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_OUT)/$$t; \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
		(cd tests/fuzz && $(FUZZ_CARGO) run $(FUZZ_BUILD_FLAGS) $$t \
			$(FUZZ_OUT)/$$t corpus/$$t -- -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) \
			-rss_limit_mb=$(FUZZ_RSS_MB) -timeout=10 -print_final_stats=1) \
			> $(FUZZ_OUT)/$$t.log 2>&1 || { tail -40 $(FUZZ_OUT)/$$t.log; exit 1; }; \
		grep -E '^(#[0-9]+\s+DONE|Done [0-9]+ runs|stat::number_of_executed_units)' $(FUZZ_OUT)/$$t.log; \
	done

fmt-check: toolchain
	$(CARGO) fmt --all -- --check

lint: third-party wasm-target fmt-check
	XFN_BUILTIN_DIR=$(CURDIR)/$(WASM_DIR) $(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
	rm -rf $(VENV)
