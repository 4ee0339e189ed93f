#!/usr/bin/env bash
# Runs every test program and compile check that `make test` built, and prints one closing line
# "N passed, N failed[, N skipped]" summed over all of them. Called by the Makefile.
set -u
BUILD=${BUILD:-build}
CC=${CC:-gcc}; CXX=${CXX:-g++}; NVCC=${NVCC:-nvcc}; CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
passed=0; failed=0; skipped=0
log_dir="$BUILD/logs"; mkdir -p "$log_dir"
export RMM_DEBUG_LOG_FILE="$log_dir/rmm_debug_log.txt"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}

# run NAME CMD...: runs a test program and adds its closing line to the totals
run() {
    local name=$1; shift
    local log="$log_dir/$(printf %s "$name" | tr -c "A-Za-z0-9_.-" "_").log"
    "$@" >"$log" 2>&1
    local rc=$?
    local last
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$last" ]; then
        echo "FAIL $name (exit $rc, no closing line; see $log)"; tail -n 20 "$log"
        failed=$((failed + 1)); return
    fi
    local p f s
    p=$(echo "$last" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$last" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$last" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p'); s=${s:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL $name exited $rc"; tail -n 20 "$log"; fi
    [ "$f" -ne 0 ] && { grep -E 'CHECK failed|returned|FAIL' "$log" | head -n 20; }
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    printf '%-40s %s\n' "$name" "$last"
    grep -m1 '^GPU cases skipped' "$log" || true
}
# check NAME CMD...: one pass or fail for a command (compile checks, example runs)
check() {
    local name=$1; shift
    local log="$log_dir/$(printf %s "$name" | tr -c "A-Za-z0-9_.-" "_").log"
    if "$@" >"$log" 2>&1; then passed=$((passed + 1)); printf '%-40s ok\n' "$name"
    else failed=$((failed + 1)); echo "FAIL $name"; tail -n 20 "$log"; fi
}

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then have_gpu=1; fi

for t in ${TESTS:-}; do
    run "host/$t" "$BUILD/host/$t"
    run "cuda-gcc/$t" "$BUILD/cuda/$t"
    run "cuda-nvcc/$t" "$BUILD/nvcc/$t"
done
for t in ${THREADED:-}; do
    run "tsan/$t" "$BUILD/tsan/$t"
    run "host/$t" "$BUILD/host/$t"
    run "cuda-gcc/$t" "$BUILD/cuda/$t"
done
[ -n "${HAVE_CLANG:-}" ] || echo "fuzz cases skipped: clang (libFuzzer) is not installed here; .ci/run installs it"
for f in ${FUZZERS:-}; do
    check "fuzz/$f (20 s)" "$BUILD/fuzz/$f" -max_total_time=20 -seed=1
done

# compile checks: the header alone as C99, C11, C++17, static, each RMM_NO_*, both backends
W="-O2 -Wall -Wextra -Wpedantic -Wconversion -Wundef -Werror"
CI="-isystem $CUDA_HOME/include"
src="$log_dir/compile_check.c"
printf '#define RMM_IMPLEMENTATION\n#include "../../rmm.h"\n%s\nint main(void) { return rmm_get_current_device_resource() == NULL; }\n' \
  "$( [ -f rmm_cuda.h ] && echo '#include "../../rmm_cuda.h"')" > "$src"
cp "$src" "$log_dir/compile_check.cpp"
for std in c99 c11; do
    check "compile/$std host"        $CC -std=$std $W -DRMM_BACKEND_HOST -c "$src" -o /dev/null
    check "compile/$std cuda"        $CC -std=$std $W $CI -c "$src" -o /dev/null
done
check "compile/c++17 host"           $CXX -std=c++17 $W -DRMM_BACKEND_HOST -c "$log_dir/compile_check.cpp" -o /dev/null
check "compile/c++17 cuda"           $CXX -std=c++17 $W $CI -c "$log_dir/compile_check.cpp" -o /dev/null
check "compile/nvcc"                 $NVCC -x cu -Xcompiler -Wall,-Wextra,-Wconversion,-Wundef,-Werror -Xcompiler -isystem -Xcompiler "$CUDA_HOME/include" -c "$src" -o /dev/null
check "compile/c99 RMM_STATIC"       $CC -std=c99 $W $CI -DRMM_STATIC -c "$src" -o /dev/null
check "compile/c99 RMM_DEBUG"        $CC -std=c99 $W $CI -DRMM_DEBUG -c "$src" -o /dev/null
check "compile/c99 RMM_NVTX"         $CC -std=c99 $W $CI -DRMM_NVTX -c "$src" -o /dev/null
check "compile/nvcc RMM_NVTX"        $NVCC -x cu -DRMM_NVTX -Xcompiler -Wall,-Wextra,-Wconversion,-Wundef,-Werror -Xcompiler -isystem -Xcompiler "$CUDA_HOME/include" -c "$src" -o /dev/null
for m in RMM_NO_POOL RMM_NO_BINNING RMM_NO_ARENA RMM_NO_LOGGING; do
    check "compile/c99 $m"           $CC -std=c99 $W $CI -D$m -c "$src" -o /dev/null
    check "compile/c++17 $m host"    $CXX -std=c++17 $W -DRMM_BACKEND_HOST -D$m -c "$log_dir/compile_check.cpp" -o /dev/null
done
# stb-style users often include their own headers first: rmm.h must not depend on being first
late="$log_dir/compile_check_late.c"
printf '#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n#include <sys/mman.h>\n#define RMM_IMPLEMENTATION\n#include "../../rmm.h"\n#include "../../rmm_cuda.h"\nint main(void) { return rmm_get_current_device_resource() == NULL; }\n' > "$late"
for std in c99 c11; do
    check "compile/$std system headers first, host" $CC -std=$std $W -DRMM_BACKEND_HOST -c "$late" -o /dev/null
    check "compile/$std system headers first, cuda" $CC -std=$std $W $CI -c "$late" -o /dev/null
done
check "compile/c99 all RMM_NO_*"     $CC -std=c99 $W $CI -DRMM_NO_POOL -DRMM_NO_BINNING -DRMM_NO_ARENA -DRMM_NO_LOGGING -c "$src" -o /dev/null
check "compile/custom RMM_SYS_*"     $CC -std=c99 $W -DRMM_BACKEND_HOST '-DRMM_SYS_MALLOC(n)=malloc(n)' '-DRMM_SYS_REALLOC(p,n)=realloc(p,n)' '-DRMM_SYS_FREE(p)=free(p)' -c "$src" -o /dev/null
if $CC -std=c99 -DRMM_BACKEND_HOST '-DRMM_SYS_MALLOC(n)=malloc(n)' -c "$src" -o /dev/null >/dev/null 2>&1; then
    failed=$((failed + 1)); echo "FAIL compile/partial RMM_SYS_* must be an error"
else passed=$((passed + 1)); printf '%-40s ok\n' "compile/partial RMM_SYS_* rejected"; fi

# examples: C examples run on the host backend; CUDA builds run only where a GPU is
for e in ${EXAMPLES_C:-}; do
    check "example/host/$e" "$BUILD/examples/host/$e"
    if [ $have_gpu = 1 ]; then check "example/cuda/$e" "$BUILD/examples/cuda/$e"; check "example/nvcc/$e" "$BUILD/examples/nvcc/$e"; fi
done
for e in ${EXAMPLES_CU:-}; do
    if [ $have_gpu = 1 ]; then check "example/nvcc/$e" "$BUILD/examples/nvcc/$e"; fi
done
[ $have_gpu = 1 ] || echo "GPU cases skipped: no GPU on this machine (nvidia-smi finds none); CUDA example builds were compiled, not run"

# tools/rmm_plot.py: its unittest program (standard library only) prints the line run() reads
if command -v "${PYTHON:-python3}" >/dev/null 2>&1; then run "tools/rmm_plot" "${PYTHON:-python3}" tests/test_plot.py
else echo "plot cases skipped: ${PYTHON:-python3} is not installed"; fi

# python: the rmmh package's pytest suite (python/tests) on the host backend, with its C
# accelerator and with ctypes alone, and on the CUDA backend where there is a GPU. conftest.py
# prints the "N passed, N failed" line run() reads. python/tests/gpu_check.sh runs more on a GPU.
PYTHON=${PYTHON:-python3}
if [ ! -f python/rmmh/librmmh_host.so ]; then
    echo "python cases skipped: python/rmmh/librmmh_host.so is not built (make python)"
elif ! "$PYTHON" -c "import numpy, pytest" >/dev/null 2>&1; then
    echo "python cases skipped: $PYTHON lacks numpy or pytest (.ci/run installs them)"
else
    pyt="$PYTHON -m pytest -q -p no:cacheprovider python/tests"
    run "python/host" env RMMH_BACKEND=host $pyt
    run "python/host ctypes only" env RMMH_BACKEND=host RMMH_NO_ACCEL=1 $pyt
    if [ $have_gpu = 1 ] && [ -f python/rmmh/librmmh.so ]; then run "python/cuda" env RMMH_BACKEND=cuda $pyt; fi
fi
# RAPIDS RMM's own Python tests (../shared/rmm_tests, unmodified) against rmmh through the `rmm`
# alias: on the host backend, and on the CUDA backend where there is a GPU. python/tests/rmm_suite.sh
# lists what it leaves out and why; where it cannot run (no tests folder, no numba-cuda) it says why.
if [ -f python/rmmh/librmmh_host.so ]; then
    if why=$(RMMH_BACKEND=host bash python/tests/rmm_suite.sh --check 2>&1); then
        run "python/rmm suite host" env RMMH_BACKEND=host bash python/tests/rmm_suite.sh
        if [ $have_gpu = 1 ] && [ -f python/rmmh/librmmh.so ]; then
            run "python/rmm suite cuda" env RMMH_BACKEND=cuda bash python/tests/rmm_suite.sh
        fi
    else echo "$why"; fi
fi

if [ "$skipped" -ne 0 ]; then echo "$passed passed, $failed failed, $skipped skipped"; else echo "$passed passed, $failed failed"; fi
[ "$failed" -eq 0 ]
