# SPDX-License-Identifier: MIT
# Entry points: `make test` (what CI runs via .ci/run), `make demo`,
# `make debug` (the suite with assert on: invariant checkers run), `make asan`
# (ASan+UBSan, also Debug) / `make tsan` (sanitizer builds of the suite),
# `make fuzz` (libFuzzer targets, FUZZ_SECONDS each), `make clean`.
# `make demo` builds only what the demo runs: the library, the emulated NPU and
# the tool (not the suite, examples or benches).
# `make deps` installs missing Debian packages (skipped with TANDEM_SKIP_DEPS=1);
# the fuzzing ones (clang) only come with `make fuzz` (install-deps.sh fuzz).
# After each suite, scripts/skip-reasons.py prints why each skipped test was
# skipped (ctest alone keeps that for -V).

BUILD_TYPE ?= RelWithDebInfo
# The ASan build is Debug: no NDEBUG, so the invariant checkers (core/check.c) run.
ASAN_BUILD_TYPE ?= Debug
JOBS ?= $(shell nproc)
CTEST_JOBS ?= 2
CMAKE ?= cmake
CTEST ?= ctest

.PHONY: all deps build test demo debug asan tsan fuzz clean

all: build

deps:
	./scripts/install-deps.sh

build:
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	$(CMAKE) --build build -j$(JOBS)

# ctest, then the skip reasons; the exit status is ctest's.
define run_suite
	$(CTEST) --test-dir $(1) --output-on-failure -j$(CTEST_JOBS) --output-junit ctest-junit.xml; \
	  rc=$$?; python3 scripts/skip-reasons.py $(1)/ctest-junit.xml; exit $$rc
endef

test: deps
	$(MAKE) build
	$(call run_suite,build)

demo: deps
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	$(CMAKE) --build build -j$(JOBS) --target tandem_cli
	./build/tools/tandem run examples/demo.json --npu emulated --warmup 4 \
	  --output-dir build/demo-out --trace build/demo-trace.json --svg build/demo-timeline.svg
	@echo "trace:    build/demo-trace.json (open in https://ui.perfetto.dev or chrome://tracing)"
	@echo "timeline: build/demo-timeline.svg (rsvg-convert build/demo-timeline.svg -o demo.png)"

debug: deps
	$(CMAKE) -S . -B build-debug -DCMAKE_BUILD_TYPE=Debug
	$(CMAKE) --build build-debug -j$(JOBS)
	$(call run_suite,build-debug)

asan: deps
	$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=$(ASAN_BUILD_TYPE) -DTANDEM_ASAN=ON
	$(CMAKE) --build build-asan -j$(JOBS)
	$(call run_suite,build-asan)

tsan: deps
	$(CMAKE) -S . -B build-tsan -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DTANDEM_TSAN=ON
	$(CMAKE) --build build-tsan -j$(JOBS)
	$(call run_suite,build-tsan)

# libFuzzer targets (clang), FUZZ_SECONDS each (default 300): scripts/fuzz.sh,
# which installs the fuzzing packages first (install-deps.sh fuzz).
fuzz: deps
	./scripts/fuzz.sh

clean:
	rm -rf build build-debug build-asan build-tsan build-fuzz
