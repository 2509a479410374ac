# bspkit — the two set-up commands of the README:
#   make demo   install missing Debian build dependencies, build (Release), run on generated samples
#   make test   install missing dependencies, build, run the whole test suite with ctest
# Extra targets: make test-sanitize (ASan + UBSan suite), make bench, make fuzz, make clean.

JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_DIR   ?= build
CORPUS      ?= $(abspath ../shared/corpus)
CMAKE_FLAGS ?=
# ccache, when installed, makes rebuilds in several checkouts cheap (never required).
CCACHE      := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
CMAKE_FLAGS += -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE)
endif

# Debian 12 packages that building the library and the command line needs (all `make demo` installs).
DEBIAN_PACKAGES = build-essential cmake pkg-config git \
  liblzma-dev libzip-dev libpng-dev libfmt-dev libcli11-dev nlohmann-json3-dev
# Debian packages only the tests, benchmarks and fuzzers need (`make build` / `make test`): add test-only
# tools here (a browser for render tests, ...). nodejs + npm run the npm tools of `test-deps`.
TEST_DEBIAN_PACKAGES = libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev nodejs npm
# npm tools the tests run, one folder under tools/ each, pinned by its package-lock.json (`npm ci`).
TEST_NPM_TOOLS = tools/gltf-validator

.PHONY: all deps test-deps demo build test test-sanitize bench fuzz clean install

all: build

# Installs the Debian packages of $(1) that are missing; needs root (or sudo) the first time.
define apt_install_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

# What building bspkit needs, and nothing else (no Node, no test libraries).
deps:
	$(call apt_install_missing,$(DEBIAN_PACKAGES))

# What the tests need on top: test-only Debian packages, then each npm tool (`npm ci`, only when missing).
test-deps: deps
	$(call apt_install_missing,$(TEST_DEBIAN_PACKAGES))
	@for t in $(TEST_NPM_TOOLS); do \
	  if [ ! -d $$t/node_modules ]; then \
	    echo "installing the npm tool $$t (npm ci, pinned by its package-lock.json)"; \
	    (cd $$t && npm ci --no-audit --no-fund --loglevel=error) || exit 1; \
	  fi; \
	done

$(BUILD_DIR)/release/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR)/release -DCMAKE_BUILD_TYPE=Release -DBSPKIT_TESTS=OFF -DBSPKIT_BENCH=OFF $(CMAKE_FLAGS)

demo: deps $(BUILD_DIR)/release/CMakeCache.txt
	cmake --build $(BUILD_DIR)/release -j$(JOBS) --target bspkit_cli bspkit-sample
	@rm -rf $(BUILD_DIR)/demo && $(BUILD_DIR)/release/bspkit-sample $(BUILD_DIR)/demo > /dev/null
	@for f in $(BUILD_DIR)/demo/*.bsp; do \
	  echo "=== bspkit info $$f"; $(BUILD_DIR)/release/bspkit info $$f || exit 1; echo; \
	done
	@echo "=== bspkit repack --compress $(BUILD_DIR)/demo/sample_source.bsp"
	@$(BUILD_DIR)/release/bspkit repack $(BUILD_DIR)/demo/sample_source.bsp --compress -o $(BUILD_DIR)/demo/packed.bsp
	@$(BUILD_DIR)/release/bspkit info $(BUILD_DIR)/demo/packed.bsp | head -12

build: test-deps
	cmake -S . -B $(BUILD_DIR)/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBSPKIT_CORPUS=$(CORPUS) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR)/test -j$(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR)/test --output-on-failure -j$(JOBS)

test-sanitize: test-deps
	cmake -S . -B $(BUILD_DIR)/asan -DCMAKE_BUILD_TYPE=Debug -DBSPKIT_SANITIZE=ON -DBSPKIT_BENCH=OFF -DBSPKIT_CORPUS=$(CORPUS) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR)/asan -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(BUILD_DIR)/asan --output-on-failure -j$(JOBS)

bench: test-deps
	cmake -S . -B $(BUILD_DIR)/release -DCMAKE_BUILD_TYPE=Release -DBSPKIT_TESTS=OFF -DBSPKIT_BENCH=ON -DBSPKIT_CORPUS=$(CORPUS) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR)/release -j$(JOBS)
	@for b in $(BUILD_DIR)/release/bench/*_bench; do echo "=== $$b"; $$b --benchmark_min_time=0.2 || exit 1; done

# libFuzzer targets (clang), each run for FUZZ_SECONDS, seeded from the corpus and the samples.
FUZZ_SECONDS ?= 60
fuzz: test-deps
	CXX=clang++ cmake -S . -B $(BUILD_DIR)/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBSPKIT_FUZZ=ON -DBSPKIT_TESTS=OFF -DBSPKIT_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR)/fuzz -j$(JOBS)
	fuzz/run.sh $(BUILD_DIR)/fuzz $(CORPUS) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD_DIR)
