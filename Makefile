# dream — top-level driver. `make demo` and `make test` are the README's two commands.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
JOBS ?= $(shell nproc)
BUILD := build
TEST_BUILD := build/test
# not build/fuzz: the main build writes its own fuzz/ directory (the corpus replays) there
FUZZ_BUILD := build/libfuzzer
CUDA_FLAG := $(if $(filter-out 0,$(DREAM_CUDA)),-DDREAM_CUDA=ON,-DDREAM_CUDA=OFF)

.PHONY: all deps build test demo bench fuzz clean

all: build

# The dependency step (Debian packages, pinned llama.cpp); idempotent and cached.
deps:
	@mkdir -p $(BUILD)
	@bash scripts/deps.sh > $(BUILD)/deps.env.tmp
	@mv $(BUILD)/deps.env.tmp $(BUILD)/deps.env

build: deps
	@eval "$$(tail -n1 $(BUILD)/deps.env)"; \
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DDREAM_WERROR=OFF -DLLAMA_SRC="$$LLAMA_SRC" -DLLAMA_BUILD="$$LLAMA_BUILD" -DDREAM_NODE_MODULES="$$DREAM_NODE_MODULES" $(CUDA_FLAG) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Sanitized build (ASan+UBSan, -Werror); ctest drives and its summary closes the output.
test: deps
	@eval "$$(tail -n1 $(BUILD)/deps.env)"; \
	cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DDREAM_SANITIZE=ON -DDREAM_WERROR=ON -DLLAMA_SRC="$$LLAMA_SRC" -DLLAMA_BUILD="$$LLAMA_BUILD" -DDREAM_NODE_MODULES="$$DREAM_NODE_MODULES" $(CUDA_FLAG) >/dev/null
	@cmake --build $(TEST_BUILD) -j $(JOBS)
	@cd $(TEST_BUILD) && ctest --output-on-failure -j $(JOBS)

# The demo's own lines only: the build's output goes to a log, whose end is shown if it fails.
DEMO_BUILD_LOG := $(BUILD)/demo-build.log
demo: deps
	@echo "demo: building dream (under a minute on two cores the first time); its output goes to $(DEMO_BUILD_LOG)"
	@$(MAKE) --no-print-directory build > $(DEMO_BUILD_LOG) 2>&1 || \
	  { echo "demo: the build failed; the end of $(DEMO_BUILD_LOG):" >&2; grep -v 'ing directory' $(DEMO_BUILD_LOG) | tail -n 40 >&2; exit 1; }
	@bash scripts/demo.sh

bench:
	@$(MAKE) --no-print-directory build DREAM_DEPS_TOOLS=1
	@bash bench/run.sh

# libFuzzer runs of every fuzzer (clang), FUZZ_SECONDS each (default 60), corpora in fuzz/corpus/.
FUZZ_SECONDS ?= 60
fuzz: deps
	@eval "$$(tail -n1 $(BUILD)/deps.env)"; \
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDREAM_FUZZ=ON -DLLAMA_SRC="$$LLAMA_SRC" -DLLAMA_BUILD="$$LLAMA_BUILD" >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $$(cd fuzz && ls */fuzz_*.c | sed 's|.*/||; s/\.c$$//' | tr '\n' ' ')
	@bash scripts/fuzz.sh $(FUZZ_BUILD)/bin $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD)
