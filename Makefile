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

# Debian 12 packages the build and the tests need.
DEBIAN_PACKAGES = build-essential cmake pkg-config git \
  liblzma-dev libzip-dev libpng-dev libfmt-dev libcli11-dev nlohmann-json3-dev \
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev

# Debian packages only the tests need (not `make demo`): the browser test renders exports in
# headless Chromium with three.js (tools/render-check, pinned by its package-lock.json).
DEBIAN_TEST_PACKAGES = chromium nodejs npm

.PHONY: all deps test-deps demo build test test-sanitize bench fuzz clean

all: build

# Installs only what is missing; needs root (or sudo) the first time.
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	@# Khronos glTF-Validator (npm) for the export tests, pinned by tools/gltf-validator/package-lock.json.
	@if [ ! -f tools/gltf-validator/node_modules/gltf-validator/package.json ]; then \
	  if ! command -v npm >/dev/null 2>&1; then \
	    echo "installing Debian packages: nodejs npm"; \
	    if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm >/dev/null; \
	  fi; \
	  echo "installing the glTF validator (npm ci in tools/gltf-validator)"; \
	  (cd tools/gltf-validator && npm ci --no-audit --no-fund --loglevel=error) || exit 1; \
	fi

test-deps:
	@missing=""; for p in $(DEBIAN_TEST_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages for the tests:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	@if [ ! -f tools/render-check/node_modules/three/package.json ]; then \
	  echo "installing three.js for the browser test (npm ci in tools/render-check)"; \
	  (cd tools/render-check && npm ci --no-audit --no-fund --loglevel=error) || exit 1; \
	fi

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

build: deps test-deps
	cmake -S . -B $(BUILD_DIR)/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBSPKIT_CORPUS=$(CORPUS) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR)/test -j$(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR)/test --output-on-failure -j$(JOBS)

test-sanitize: deps
	cmake -S . -B $(BUILD_DIR)/asan -DCMAKE_BUILD_TYPE=Debug -DBSPKIT_SANITIZE=ON -DBSPKIT_BENCH=OFF -DBSPKIT_CORPUS=$(CORPUS) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR)/asan -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(BUILD_DIR)/asan --output-on-failure -j$(JOBS)

bench: deps
	cmake -S . -B $(BUILD_DIR)/release -DCMAKE_BUILD_TYPE=Release -DBSPKIT_TESTS=OFF -DBSPKIT_BENCH=ON -DBSPKIT_CORPUS=$(CORPUS) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR)/release -j$(JOBS)
	@for b in $(BUILD_DIR)/release/bench/*_bench; do echo "=== $$b"; $$b --benchmark_min_time=0.2 || exit 1; done

# libFuzzer targets (clang), each run for FUZZ_SECONDS, seeded from the corpus and the samples.
FUZZ_SECONDS ?= 60
fuzz: deps
	CXX=clang++ cmake -S . -B $(BUILD_DIR)/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBSPKIT_FUZZ=ON -DBSPKIT_TESTS=OFF -DBSPKIT_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR)/fuzz -j$(JOBS)
	fuzz/run.sh $(BUILD_DIR)/fuzz $(CORPUS) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD_DIR)
