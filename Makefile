# rmm.h - build, test, benchmark.  `make test` is what CI runs; see README.md.
# (make predefines CC as cc, which ?= would keep: gcc unless the command line or environment says)
ifeq ($(origin CC),default)
CC       := gcc
endif
CXX      ?= g++
NVCC     ?= nvcc
CLANG    ?= clang
CUDA_HOME ?= /usr/local/cuda
BUILD    ?= build
# build in parallel by default; `make test` is the one command CI and the README use
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)

WARN      = -Wall -Wextra -Wpedantic -Wconversion -Wundef -Werror
CUDA_INC  = -isystem $(CUDA_HOME)/include
CUDA_LIB  = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
# nvcc includes the CUDA headers itself; -isystem keeps -Wundef/-Wpedantic off them
NVCC_WARN = -Xcompiler -Wall,-Wextra,-Wconversion,-Wundef,-Werror -Xcompiler -isystem -Xcompiler $(CUDA_HOME)/include
NVCC_ARCH ?= -arch=native
SAN       = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

TESTS     = $(basename $(notdir $(wildcard tests/test_*.c)))
THREADED  = $(basename $(notdir $(wildcard tests/threads_*.c)))
EXAMPLES_C  = $(basename $(notdir $(wildcard examples/*.c)))
EXAMPLES_CU = $(basename $(notdir $(wildcard examples/*.cu)))
BENCHES   = $(basename $(notdir $(wildcard bench/*.c)))
HEADERS   = rmm.h $(wildcard rmm_cuda.h) tests/harness.h tests/blocks.h tests/refusing.h tests/liar.h tests/host_fail.h

.PHONY: all test test-long test-build examples lib bench fuzz clean demo sanitize
RMM_TEST_LONG ?= 0
all: test-build examples lib bench

# --- tests: host backend under ASan+UBSan, CUDA with gcc, CUDA with nvcc, TSan, fuzz ---------
$(BUILD)/host/%: tests/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -g -O1 $(SAN) -DRMM_BACKEND_HOST -DRMM_DEBUG $< -o $@ -lpthread
# tests/test_examples.c runs examples in its own build (their contracts, checked where a plain run
# cannot see a breach): rebuilt when they change
$(addsuffix /test_examples,$(addprefix $(BUILD)/,host cuda nvcc)): examples/04_custom_resource.c examples/common.h
# tests/test_capture_fuzz.c includes tests/test_stream_order.c for its stream-order model
$(addsuffix /test_capture_fuzz,$(addprefix $(BUILD)/,host host-release cuda nvcc)): tests/test_stream_order.c
# the same without RMM_DEBUG, for the tests whose host cases read a release build's behaviour too
# (a free the backend's CUDA refuses, where RMM_DEBUG's record refuses it first; review 31)
RELEASE_HOST = test_core test_reliability test_adaptors test_containers test_capture_fuzz
$(BUILD)/host-release/%: tests/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -g -O1 $(SAN) -DRMM_BACKEND_HOST $< -o $@ -lpthread
$(BUILD)/cuda/%: tests/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -g -O2 $(CUDA_INC) $< -o $@ $(CUDA_LIB) -lpthread
$(BUILD)/nvcc/%: tests/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -x cu -g -O2 -I. $< -o $@
# -fno-builtin: at -O1 gcc writes a fixed-size memset or memcpy inline, where TSan does not see it
# (a red team's find: a push's memset racing a reader went unreported)
$(BUILD)/tsan/%: tests/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -g -O1 -fno-builtin -fsanitize=thread -DRMM_BACKEND_HOST $< -o $@ -lpthread
$(BUILD)/fuzz/%: tests/%.c rmm.h
	@mkdir -p $(dir $@)
	$(CLANG) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -DRMM_BACKEND_HOST $< -o $@ -lpthread

# libFuzzer targets need clang; without it (e.g. a GPU box) they are skipped and run.sh says so
HAVE_CLANG := $(shell command -v $(CLANG) >/dev/null 2>&1 && echo yes)
FUZZERS = $(if $(HAVE_CLANG),$(basename $(notdir $(wildcard tests/fuzz_*.c))))
test-build: $(addprefix $(BUILD)/host/,$(TESTS)) $(addprefix $(BUILD)/cuda/,$(TESTS)) \
            $(addprefix $(BUILD)/nvcc/,$(TESTS)) $(addprefix $(BUILD)/tsan/,$(THREADED)) \
            $(addprefix $(BUILD)/host/,$(THREADED)) $(addprefix $(BUILD)/cuda/,$(THREADED)) \
            $(addprefix $(BUILD)/fuzz/,$(FUZZERS)) $(addprefix $(BUILD)/host-release/,$(RELEASE_HOST))

# --- examples: every C example with gcc (host backend and CUDA) and nvcc; .cu with nvcc ----
$(BUILD)/examples/host/%: examples/%.c examples/common.h $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) -std=c99 $(WARN) -O2 -DRMM_BACKEND_HOST $< -o $@ -lpthread
$(BUILD)/examples/cuda/%: examples/%.c examples/common.h $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) -std=c99 $(WARN) -O2 $(CUDA_INC) $< -o $@ $(CUDA_LIB) -lpthread
$(BUILD)/examples/nvcc/%: examples/%.c examples/common.h $(HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -x cu -O2 $(NVCC_WARN) -I. $< -o $@
$(BUILD)/examples/nvcc/%: examples/%.cu examples/common.h $(HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 $(NVCC_WARN) -I. $< -o $@
examples: $(addprefix $(BUILD)/examples/host/,$(EXAMPLES_C)) $(addprefix $(BUILD)/examples/cuda/,$(EXAMPLES_C)) \
          $(addprefix $(BUILD)/examples/nvcc/,$(EXAMPLES_C) $(EXAMPLES_CU))

# --- a shared library for bindings ----------------------------------------------------------
$(BUILD)/lib/rmm_impl.c:
	@mkdir -p $(dir $@)
	printf '#define RMM_IMPLEMENTATION\n#include "../../rmm.h"\n' > $@
$(BUILD)/librmm.so: $(BUILD)/lib/rmm_impl.c $(HEADERS)
	$(CC) -std=c11 -O2 -fPIC -shared $(WARN) $(CUDA_INC) $< -o $@ $(CUDA_LIB) -lpthread
$(BUILD)/librmm_host.so: $(BUILD)/lib/rmm_impl.c $(HEADERS)
	$(CC) -std=c11 -O2 -fPIC -shared $(WARN) -DRMM_BACKEND_HOST $< -o $@ -lpthread
lib: $(BUILD)/librmm.so $(BUILD)/librmm_host.so

# --- benchmarks (run them on a GPU: see README) ---------------------------------------------
$(BUILD)/bench/%: bench/%.c bench/bench_common.h bench/peer/peer_resource.h $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -DNDEBUG $(CUDA_INC) $< -o $@ $(CUDA_LIB) -lpthread -lm
$(BUILD)/bench/host/%: bench/%.c bench/bench_common.h bench/peer/peer_resource.h $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -DNDEBUG -DRMM_BACKEND_HOST $< -o $@ -lpthread -lm
bench: $(addprefix $(BUILD)/bench/,$(BENCHES)) $(addprefix $(BUILD)/bench/host/,$(BENCHES))

test: test-build examples lib bench
	@CC="$(CC)" CXX="$(CXX)" NVCC="$(NVCC)" CUDA_HOME="$(CUDA_HOME)" BUILD="$(BUILD)" RMM_TEST_LONG="$(RMM_TEST_LONG)" \
	  TESTS="$(TESTS)" THREADED="$(THREADED)" FUZZERS="$(FUZZERS)" HAVE_CLANG="$(HAVE_CLANG)" RELEASE_HOST="$(RELEASE_HOST)" \
	  EXAMPLES_C="$(EXAMPLES_C)" EXAMPLES_CU="$(EXAMPLES_CU)" bash tests/run.sh

# the stress tests' long forms (several times the steps; tests/harness.h harness_long)
test-long:
	@$(MAKE) --no-print-directory test RMM_TEST_LONG=1

# the demo: the basics example on the GPU when there is one, else on the host backend (the CUDA
# build only where the toolkit's headers are: without them the host demo still runs)
HAVE_CUDA := $(shell test -f $(CUDA_HOME)/include/cuda_runtime_api.h && echo yes)
demo: $(BUILD)/examples/host/01_basics $(if $(HAVE_CUDA),$(BUILD)/examples/cuda/01_basics)
	@if [ -x $(BUILD)/examples/cuda/01_basics ] && nvidia-smi -L >/dev/null 2>&1; then $(BUILD)/examples/cuda/01_basics; \
	 else echo "(no GPU found, or no CUDA toolkit: running on the host backend)"; $(BUILD)/examples/host/01_basics; fi

# every GPU check in one command (tests/gpu_check_all.sh says what it runs and needs); logs and
# summary.txt in $(OUT) if set, else build/gpu-check/
.PHONY: gpu-check
gpu-check:
	@bash tests/gpu_check_all.sh

# line coverage of rmm.h by the host tests (gcc --coverage, with and without RMM_DEBUG) and of its
# error returns, the uncovered ones listed by function (tests/coverage.py); not part of `make test`
.PHONY: coverage
coverage:
	@BUILD="$(BUILD)" CC="$(CC)" $(or $(PYTHON),python3) tests/coverage.py

# compute-sanitizer memcheck against pool blocks with and without RMM_NVTX (needs a GPU)
sanitize:
	@BUILD="$(BUILD)" NVCC="$(NVCC)" bash tests/sanitize.sh

FUZZ_SECONDS ?= 300
fuzz: $(addprefix $(BUILD)/fuzz/,$(FUZZERS))
	@for f in $(FUZZERS); do $(BUILD)/fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 || exit 1; done

clean:
	rm -rf $(BUILD) rmm_log.txt

# --- pictures: tools/rmm_plot.py (Python standard library only); see README, "Pictures" ---------
# `make pictures` redraws the README's picture from the ResNet-50 trace. The tool's tests run in
# `make test` (tests/run.sh runs tests/test_plot.py).
.PHONY: pictures
pictures: docs/resnet50_train_timeline.svg
docs/resnet50_train_timeline.svg: bench/traces/resnet50_train.csv.gz tools/rmm_plot.py
	@mkdir -p $(dir $@)
	$(or $(PYTHON),python3) tools/rmm_plot.py timeline $< -o $@ \
	  --title "ResNet-50 training (batch 64, 6 SGD steps, fp32, PyTorch on an H200): live bytes per event"

# --- Python package rmmh (python/): RMM's Python API over rmm.h; see README, "Python" -----------
# `make python` builds its native libraries in place (python/rmmh/librmmh_host.so, librmmh.so when
# the CUDA toolkit is there, the optional _accel extension for Python 3.10+) for the tests and for
# PYTHONPATH=python use; `make test` runs its pytest suite through tests/run.sh.
PYTHON ?= python3
export PYTHON
.PHONY: python python-clean
python:
	@$(PYTHON) python/build_native.py --quiet --werror
test: python
clean: python-clean
python-clean:
	rm -rf python/rmmh/*.so python/rmmh/include python/build python/*.egg-info
