# wgnn: top-level convenience targets. Every target first runs
# scripts/setup.sh, which is instant once deps/ is in place.
#   make [build] | run | test | bench | asan | fuzz [FUZZ_SECONDS=30 each fuzzer] | install [PREFIX=...] | clean

PREFIX       ?= /usr/local
FUZZ_SECONDS ?= 30
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_BUILD   = cmake --build $(1) -j$(JOBS)
# A build folder is configured when CMake's generate step has run: a failed
# configure leaves a CMakeCache.txt but no build system, so test for this file.
CONFIGURED    = test -f $(1)/cmake_install.cmake

.PHONY: all build setup setup-fuzz run test bench asan fuzz install clean

all: build

setup:
	@bash scripts/setup.sh

setup-fuzz:
	@bash scripts/setup.sh --with-fuzz

build: setup
	@$(call CONFIGURED,build) || cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
	$(call CMAKE_BUILD,build)

# A small ViT shipped with the tests on a sample image, checked against the
# outputs PyTorch gave for the same image (tests/models/make_pil_refs.py);
# then a tiny random Qwen3 generating from a prompt, next to the text
# PyTorch's greedy generate() gave (tests/models/qwen3/fixtures.json).
run: build
	./build/wgnn info
	./build/wgnn run --model tests/models/vit --image tests/models/image.png --iters 20 --profile \
	  --ref tests/models/vit/pil_last_hidden_state.npy --pooled-ref tests/models/vit/pil_pooler_output.npy
	@echo "wgnn generate (tiny random Qwen3; PyTorch's greedy continuation was:"
	@echo "  ' asyabenyabeny 우리�imeoul 우리oul 우리oulden�る不�るD��れabenyaben')"
	./build/wgnn generate --model tests/models/qwen3 --prompt "The quick brown fox can't jump over 13 lazy dogs." \
	  --max-new-tokens 24

test: build
	ctest --test-dir build --output-on-failure --no-tests=error -j2

bench: build
	bash bench/run_local.sh

# tests/keep_driver.c (linked into sanitizer builds) keeps lavapipe mapped so
# that its own small leak can be suppressed by tests/lsan.supp; leaks of
# wgnn's are reported.
asan: setup
	@$(call CONFIGURED,build-asan) || cmake -S . -B build-asan -DWGNN_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	$(call CMAKE_BUILD,build-asan)
	ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan --output-on-failure --no-tests=error -j2

# Each fuzzer runs FUZZ_SECONDS on a copy of its seed corpus (fuzz/corpus_<name>).
FUZZERS = npy op_args safetensors json image tokenizer config
fuzz: setup-fuzz
	@# re-run an existing configuration too, so that a fuzzer added since is known
	@{ $(call CONFIGURED,build-fuzz) && cmake build-fuzz >/dev/null; } || CC=clang cmake -S . -B build-fuzz -DWGNN_FUZZ=ON -DWGNN_TESTS=OFF
	$(call CMAKE_BUILD,build-fuzz) --target $(addprefix fuzz_,$(FUZZERS))
	@set -e; for f in $(FUZZERS); do \
	  corpus=$$(mktemp -d); trap 'rm -rf "$$corpus"' EXIT; \
	  if [ -d fuzz/corpus_$$f ]; then cp -R fuzz/corpus_$$f/. "$$corpus"/; fi; \
	  echo "./build-fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) <copy of fuzz/corpus_$$f>"; \
	  ./build-fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=build-fuzz/ "$$corpus"; \
	  rm -rf "$$corpus"; \
	done

install: build
	cmake --install build --prefix $(PREFIX)

clean:
	rm -rf build build-asan build-fuzz
