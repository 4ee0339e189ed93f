#!/usr/bin/env bash
# Runs every test program and compile check that `make test` built, and prints one closing line
# "N passed, N failed[, N skipped]" summed over all of them. Called by the Makefile.
#
# Jobs run in parallel (JOBS, default the number of cores) in two lanes: programs that use the GPU
# (the CUDA builds, the CUDA examples, the CUDA Python suite) run one at a time, since they share
# one device (the arena, for one, takes half its free memory by default); everything else (host
# backend, TSan, fuzzers, compile checks, host Python suites) fills the other cores. Each job has
# its own log (and its own debug-log file) under $BUILD/logs; the report lists the jobs in a fixed
# order, with the seconds each took, whatever order they finished in.
set -u
BUILD=${BUILD:-build}
CC=${CC:-gcc}; CXX=${CXX:-g++}; NVCC=${NVCC:-nvcc}; CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
log_dir="$BUILD/logs"; mkdir -p "$log_dir"
res_dir="$log_dir/results"; rm -rf "$res_dir"; mkdir -p "$res_dir"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
# the long forms of the stress tests (make test-long) or the default, shorter ones
export RMM_TEST_LONG=${RMM_TEST_LONG:-0}

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then have_gpu=1; fi

seq_no=0
gpu_queue=()   # job ids of the GPU lane, run one after another
# job KIND LANE NAME CMD...: registers a job. KIND run: a test program whose closing line counts;
# KIND check: one pass or fail (compile checks, example runs). LANE gpu or cpu.
job() {
    local kind=$1 lane=$2 name=$3; shift 3
    seq_no=$((seq_no + 1))
    local id; id=$(printf '%04d' "$seq_no")
    printf '%s\n%s\n' "$kind" "$name" > "$res_dir/$id.job"
    printf '%q ' "$@" > "$res_dir/$id.cmd"
    if [ "$lane" = gpu ]; then gpu_queue+=("$id"); else cpu_queue+=("$id"); fi
}
cpu_queue=()
# exec_job ID: runs one job, writes ID.res: "rc seconds"
exec_job() {
    local id=$1 name log t0 t1 rc
    name=$(sed -n 2p "$res_dir/$id.job")
    log="$log_dir/$(printf %s "$name" | tr -c "A-Za-z0-9_.-" "_").log"
    t0=$(date +%s.%N)
    export RMM_DEBUG_LOG_FILE="$log.debuglog" # each job its own (tests read theirs back)
    eval "$(cat "$res_dir/$id.cmd")" >"$log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    printf '%s %s\n' "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" > "$res_dir/$id.res"
}

# ---- the jobs, in the order the report lists them ----------------------------------------------
for t in ${TESTS:-}; do
    job run cpu "host/$t" "$BUILD/host/$t"
    job run gpu "cuda-gcc/$t" "$BUILD/cuda/$t"
    job run gpu "cuda-nvcc/$t" "$BUILD/nvcc/$t"
done
for t in ${RELEASE_HOST:-}; do # (host, no RMM_DEBUG: the release arms of their host cases)
    job run cpu "host-release/$t" "$BUILD/host-release/$t"
done
for t in ${THREADED:-}; do
    job run cpu "tsan/$t" "$BUILD/tsan/$t"
    job run cpu "host/$t" "$BUILD/host/$t"
    job run gpu "cuda-gcc/$t" "$BUILD/cuda/$t"
done
for f in ${FUZZERS:-}; do
    job check cpu "fuzz/$f (20 s)" "$BUILD/fuzz/$f" -max_total_time=20 -seed=1
done

# compile checks: the header alone as C99, C11, C++17, static, each RMM_NO_*, both backends
W="-O2 -Wall -Wextra -Wpedantic -Wconversion -Wundef -Werror"
CI="-isystem $CUDA_HOME/include"
src="$log_dir/compile_check.c"
printf '#define RMM_IMPLEMENTATION\n#include "../../rmm.h"\n%s\nint main(void) { return rmm_get_current_device_resource() == NULL; }\n' \
  "$( [ -f rmm_cuda.h ] && echo '#include "../../rmm_cuda.h"')" > "$src"
cp "$src" "$log_dir/compile_check.cpp"
for std in c99 c11; do
    job check cpu "compile/$std host"        $CC -std=$std $W -DRMM_BACKEND_HOST -c "$src" -o /dev/null
    job check cpu "compile/$std cuda"        $CC -std=$std $W $CI -c "$src" -o /dev/null
done
job check cpu "compile/c++17 host"           $CXX -std=c++17 $W -DRMM_BACKEND_HOST -c "$log_dir/compile_check.cpp" -o /dev/null
job check cpu "compile/c++17 cuda"           $CXX -std=c++17 $W $CI -c "$log_dir/compile_check.cpp" -o /dev/null
job check cpu "compile/nvcc"                 $NVCC -x cu -Xcompiler -Wall,-Wextra,-Wconversion,-Wundef,-Werror -Xcompiler -isystem -Xcompiler "$CUDA_HOME/include" -c "$src" -o /dev/null
# -O3 and -Os see further than the -O2 in $W (gcc 12 at -O3 warned maybe-uninitialized: a review's find)
for o in -O3 -Os; do
    job check cpu "compile/c11 $o host"      $CC -std=c11 $W $o -DRMM_BACKEND_HOST -c "$src" -o /dev/null
    job check cpu "compile/c11 $o cuda"      $CC -std=c11 $W $o $CI -c "$src" -o /dev/null
done
job check cpu "compile/c99 RMM_STATIC"       $CC -std=c99 $W $CI -DRMM_STATIC -c "$src" -o /dev/null
job check cpu "compile/c99 RMM_DEBUG"        $CC -std=c99 $W $CI -DRMM_DEBUG -c "$src" -o /dev/null
job check cpu "compile/c99 RMM_NVTX"         $CC -std=c99 $W $CI -DRMM_NVTX -c "$src" -o /dev/null
job check cpu "compile/nvcc RMM_NVTX"        $NVCC -x cu -DRMM_NVTX -Xcompiler -Wall,-Wextra,-Wconversion,-Wundef,-Werror -Xcompiler -isystem -Xcompiler "$CUDA_HOME/include" -c "$src" -o /dev/null
for m in RMM_NO_POOL RMM_NO_BINNING RMM_NO_ARENA RMM_NO_LOGGING; do
    job check cpu "compile/c99 $m"           $CC -std=c99 $W $CI -D$m -c "$src" -o /dev/null
    job check cpu "compile/c++17 $m host"    $CXX -std=c++17 $W -DRMM_BACKEND_HOST -D$m -c "$log_dir/compile_check.cpp" -o /dev/null
done
# stb-style users often include their own headers first: rmm.h must not depend on being first
late="$log_dir/compile_check_late.c"
printf '#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n#include <sys/mman.h>\n#define RMM_IMPLEMENTATION\n#include "../../rmm.h"\n#include "../../rmm_cuda.h"\nint main(void) { return rmm_get_current_device_resource() == NULL; }\n' > "$late"
for std in c99 c11; do
    job check cpu "compile/$std system headers first, host" $CC -std=$std $W -DRMM_BACKEND_HOST -c "$late" -o /dev/null
    job check cpu "compile/$std system headers first, cuda" $CC -std=$std $W $CI -c "$late" -o /dev/null
done
job check cpu "compile/c99 all RMM_NO_*"     $CC -std=c99 $W $CI -DRMM_NO_POOL -DRMM_NO_BINNING -DRMM_NO_ARENA -DRMM_NO_LOGGING -c "$src" -o /dev/null
job check cpu "compile/custom RMM_SYS_*"     $CC -std=c99 $W -DRMM_BACKEND_HOST '-DRMM_SYS_MALLOC(n)=malloc(n)' '-DRMM_SYS_REALLOC(p,n)=realloc(p,n)' '-DRMM_SYS_FREE(p)=free(p)' -c "$src" -o /dev/null
job check cpu "compile/partial RMM_SYS_* rejected" bash -c "! $CC -std=c99 -DRMM_BACKEND_HOST '-DRMM_SYS_MALLOC(n)=malloc(n)' -c '$src' -o /dev/null"
for m in RMM_HOST_BACKEND_DEVICES RMM_MAX_DEVICES RMM_MAX_CALLBACK_DEPTH; do # (each rejected by its own assertion, named in the compiler's message)
    job check cpu "compile/$m=0 rejected"    bash -c "! $CC -std=c99 -DRMM_BACKEND_HOST -D$m=0 -c '$src' -o /dev/null > '$log_dir/rejected_$m.txt' 2>&1 && grep -qi '${m}_is_at_least_1' '$log_dir/rejected_$m.txt'"
done

# examples: C examples run on the host backend; CUDA builds run only where a GPU is
for e in ${EXAMPLES_C:-}; do
    job check cpu "example/host/$e" "$BUILD/examples/host/$e"
    if [ $have_gpu = 1 ]; then job check gpu "example/cuda/$e" "$BUILD/examples/cuda/$e"; job check gpu "example/nvcc/$e" "$BUILD/examples/nvcc/$e"; fi
done
for e in ${EXAMPLES_CU:-}; do
    if [ $have_gpu = 1 ]; then job check gpu "example/nvcc/$e" "$BUILD/examples/nvcc/$e"; fi
done

# tools/rmm_plot.py: its unittest program (standard library only) prints the line the report reads
notes=()
if command -v "${PYTHON:-python3}" >/dev/null 2>&1; then job run cpu "tools/rmm_plot" "${PYTHON:-python3}" tests/test_plot.py
else notes+=("plot cases skipped: ${PYTHON:-python3} is not installed"); fi
# bench/ab.py (interleaved before/after runs of random_allocations), on the host backend
if command -v "${PYTHON:-python3}" >/dev/null 2>&1 && git -C "$(dirname "$0")/.." rev-parse HEAD >/dev/null 2>&1; then
    job run cpu "bench/ab" env CC="$CC" "${PYTHON:-python3}" tests/test_ab.py
else notes+=("bench/ab cases skipped: needs ${PYTHON:-python3} and a git checkout"); fi
# bench/replay on the host backend: the virtual pool's efficiency on bench/traces (deterministic there)
if command -v "${PYTHON:-python3}" >/dev/null 2>&1 && [ -x "$BUILD/bench/host/replay" ]; then
    job run cpu "bench/replay" env REPLAY="$BUILD/bench/host/replay" "${PYTHON:-python3}" tests/test_replay.py
else notes+=("bench/replay cases skipped: needs ${PYTHON:-python3} and $BUILD/bench/host/replay (make bench)"); fi

# python: the rmmh package's pytest suite (python/tests) on the host backend, with its C
# accelerator and with ctypes alone, and on the CUDA backend where there is a GPU. conftest.py
# prints the "N passed, N failed" line the report reads. python/tests/gpu_check.sh runs more on a GPU.
PYTHON=${PYTHON:-python3}
if [ ! -f python/rmmh/librmmh_host.so ]; then
    notes+=("python cases skipped: python/rmmh/librmmh_host.so is not built (make python)")
elif ! "$PYTHON" -c "import numpy, pytest" >/dev/null 2>&1; then
    notes+=("python cases skipped: $PYTHON lacks numpy or pytest (.ci/run installs them)")
else
    pyt="$PYTHON -m pytest -q -p no:cacheprovider python/tests"
    job run cpu "python/host" env RMMH_BACKEND=host $pyt
    job run cpu "python/host ctypes only" env RMMH_BACKEND=host RMMH_NO_ACCEL=1 $pyt
    # (the CUDA job is the GPU lane's longest: it leaves the backend-independent tests to the host
    # jobs, and lists its slowest tests in its log)
    if [ $have_gpu = 1 ] && [ -f python/rmmh/librmmh.so ]; then
        # (and its tests marked long, a training step, to make test-long and make gpu-check)
        sel="not backend_independent"; [ "$RMM_TEST_LONG" = 1 ] || sel="$sel and not long"
        job run gpu "python/cuda" env RMMH_BACKEND=cuda $pyt -m "$sel" --durations=25
    fi
fi
# RAPIDS RMM's own Python tests (../shared/rmm_tests, unmodified) against rmmh through the `rmm`
# alias, on the host backend (make gpu-check runs them all on the GPU, beside RMM itself).
# python/tests/rmm_suite.sh lists what it leaves out and why; where it cannot run (no tests folder,
# no numba-cuda) it says why.
if [ -f python/rmmh/librmmh_host.so ]; then
    if why=$(RMMH_BACKEND=host bash python/tests/rmm_suite.sh --check 2>&1); then
        job run cpu "python/rmm suite host" env RMMH_BACKEND=host bash python/tests/rmm_suite.sh
    else notes+=("$why"); fi
fi

# ---- run them: the GPU lane in one background worker, the CPU lane in the remaining slots ----
gpu_worker() { local id; for id in "$@"; do exec_job "$id"; done; }
gpu_pid=
if [ ${#gpu_queue[@]} -gt 0 ]; then gpu_worker "${gpu_queue[@]}" & gpu_pid=$!; fi
# the longest jobs first, so that the tail of the run is short: the Python suites, then the rest
ordered=()
for id in "${cpu_queue[@]}"; do case $(sed -n 2p "$res_dir/$id.job") in python/*|host/threads_*|host/test_stream_order|host*/test_capture_fuzz|tsan/*|fuzz/*) ordered+=("$id");; esac; done
for id in "${cpu_queue[@]}"; do case $(sed -n 2p "$res_dir/$id.job") in python/*|host/threads_*|host/test_stream_order|host*/test_capture_fuzz|tsan/*|fuzz/*) ;; *) ordered+=("$id");; esac; done
for id in "${ordered[@]+"${ordered[@]}"}"; do
    # JOBS at a time in all: the GPU worker, while it runs, takes one of them
    while :; do
        if [ -n "$gpu_pid" ] && ! kill -0 "$gpu_pid" 2>/dev/null; then gpu_pid=; fi
        limit=$JOBS; [ -n "$gpu_pid" ] && limit=$((JOBS > 1 ? JOBS : 2))
        [ "$(jobs -rp | wc -l)" -lt "$limit" ] && break
        wait -n 2>/dev/null || true
    done
    exec_job "$id" &
done
wait

# ---- the report, in the order the jobs were listed ---------------------------------------------
passed=0; failed=0; skipped=0
for jobf in "$res_dir"/*.job; do
    id=$(basename "$jobf" .job)
    kind=$(sed -n 1p "$jobf"); name=$(sed -n 2p "$jobf")
    log="$log_dir/$(printf %s "$name" | tr -c "A-Za-z0-9_.-" "_").log"
    if [ ! -f "$res_dir/$id.res" ]; then echo "FAIL $name (did not run)"; failed=$((failed + 1)); continue; fi
    read -r rc secs < "$res_dir/$id.res"
    if [ "$kind" = check ]; then
        if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); printf '%-40s ok (%ss)\n' "$name" "$secs"
        else failed=$((failed + 1)); echo "FAIL $name"; tail -n 20 "$log"; fi
        continue
    fi
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$last" ]; then
        echo "FAIL $name (exit $rc, no closing line; see $log)"; tail -n 20 "$log"
        failed=$((failed + 1)); continue
    fi
    p=$(echo "$last" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$last" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$last" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p'); s=${s:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL $name exited $rc"; tail -n 20 "$log"; fi
    [ "$f" -ne 0 ] && { grep -E 'CHECK failed|returned|FAIL' "$log" | head -n 20; }
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    printf '%-40s %s (%ss)\n' "$name" "$last" "$secs"
    grep -m1 '^GPU cases skipped' "$log" || true
done
[ -n "${HAVE_CLANG:-}" ] || echo "fuzz cases skipped: clang (libFuzzer) is not installed here; .ci/run installs it"
[ $have_gpu = 1 ] || echo "GPU cases skipped: no GPU on this machine (nvidia-smi finds none); CUDA example builds were compiled, not run"
for n in "${notes[@]+"${notes[@]}"}"; do echo "$n"; done
if [ "$skipped" -ne 0 ]; then echo "$passed passed, $failed failed, $skipped skipped"; else echo "$passed passed, $failed failed"; fi
[ "$failed" -eq 0 ]
