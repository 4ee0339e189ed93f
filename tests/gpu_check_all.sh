#!/usr/bin/env bash
# tests/gpu_check_all.sh (make gpu-check): every check that needs a GPU, from a fresh clone, in one
# command that fits one 10-minute call on one H100. Run from anywhere on a GPU machine:
#
#   make gpu-check                  (logs and summary.txt in $OUT if set, else build/gpu-check/)
#
# Parts, in order, each with its closing line and the seconds it took in the summary:
#   make-test        `make test` (C suites on both backends, TSan, compile checks, examples, the
#                    Python suites on the host and CUDA backends), in parallel (tests/run.sh)
#   sanitize         `make sanitize`: compute-sanitizer memcheck over pool blocks (with RMM_NVTX)
#   python-install   python/tests/gpu_check.sh: pip install ./python as a user would, the README
#                    example and python/bench/bench_alloc.py (RMM's rows from its wheels) on the
#                    installed copy (GPU_CHECK_FULL=1: the CUDA suite again with ctypes alone)
#   frameworks       python/tests/gpu_frameworks.sh: the Dask and dask-cuda tests on the CUDA and
#                    host backends with Dask from .whl/ (make-test ran the CuPy, Numba, PyTorch and
#                    IPC files; GPU_CHECK_FULL=1 runs them again on the installed copy), and
#                    python/bench/bench_frameworks.py (quick; GPU_CHECK_FULL=1: its full form)
#   rmm-suite-rmmh   RAPIDS RMM's own Python tests against rmmh (python/tests/rmm_suite.sh)
#   rmm-suite-rmm    the same files and pytest command against RMM 26.10 from its wheels
#   bench            the C benchmarks in quick mode (GPU_CHECK_FULL=1: full): random_allocations
#                    on foreign, created and
#                    default streams beside RMM C++ (bench/peer, from the wheels) and
#                    cudaMallocAsync; many_streams on the GPU and the host backend; stream_churn
#                    on created and foreign streams (with RMM C++'s pool, arena and async rows
#                    where the peer build is there)
#   figures          (not in the default list: about 2 minutes more) every benchmark the README's
#                    performance figures come from, each log in $OUT/figures/: what bench runs,
#                    plus random_allocations on foreign streams with --lag (the device kept behind
#                    the host), stream_identity, the replay of bench/traces/ beside RMM C++ (gpt2_generate,
#                    967,218 events: once, without cudaMalloc per event), adaptors and vmm_costs (the README names the
#                    log of each table). The README's main tables were made by one such call (the
#                    README names the run, its length and its parts; an earlier one took 447 s):
#                      GPU_CHECK_PARTS="make-test sanitize python-install frameworks rmm-suite-rmmh
#                        rmm-suite-rmm figures" GPU_FRAMEWORKS_BENCH_ARGS= make gpu-check
#
# What it needs besides the checkout: the CUDA toolkit, python3 with numpy and pytest (the device
# image has them, and CuPy, numba-cuda, cuda-bindings and torch), and in .whl/ (git-ignored) the
# wheels without which some parts say on one line why they skipped: rmm_cu13, librmm_cu13 and
# rapids_logger 26.10 (RMM's rows and rmm-suite-rmm), dask, distributed, partd, locket, tblib,
# zict, tornado (the Dask cases), dask_cuda and nvidia_ml_py (dask-cuda's cases; optional). Fetch them on a machine with network with:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
#     --platform manylinux2014_x86_64 -d .whl "rmm-cu13==26.10.*" "librmm-cu13==26.10.*" \
#     "rapids-logger==0.3.*" dask distributed partd locket tblib zict tornado dask-cuda nvidia-ml-py
# RMM's tests are read from RMM_TESTS_DIR (default: ../shared/rmm_tests, else shared/rmm_tests,
# else .gpu/rmm_tests). GPU_CHECK_PARTS="make-test bench" runs only the parts named; GPU_CHECK_FULL=1
# runs the long forms (more than one 10-minute device call).
# Exit status 0 iff every part that ran passed.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUTDIR=${OUT:-$ROOT/build/gpu-check}
mkdir -p "$OUTDIR"
SUMMARY=$OUTDIR/summary.txt
PARTS=${GPU_CHECK_PARTS:-make-test sanitize python-install frameworks rmm-suite-rmmh rmm-suite-rmm bench}
PYTHON=${PYTHON:-python3}
export PYTHON
status=0
t_all=$(date +%s)
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
wanted() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }
closing() { grep -E '^([A-Za-z_-]+: )?[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1; }
# part NAME CMD...: runs CMD, its output in $OUTDIR/NAME.log; a summary line with its closing line
part() {
    local name=$1; shift
    local log="$OUTDIR/$name.log" t0 rc line
    wanted "$name" || return 0
    echo "=== $name: $*"
    t0=$(date +%s)
    "$@" > "$log" 2>&1
    rc=$?
    line=$(closing "$log")
    [ -z "$line" ] && line=$(tail -n 1 "$log")
    if [ "$rc" -eq 0 ]; then say "$(printf '%-16s ok     %4ss  %s' "$name" "$(( $(date +%s) - t0 ))" "$line")"
    else status=1; say "$(printf '%-16s FAILED %4ss  %s (exit %s; see %s)' "$name" "$(( $(date +%s) - t0 ))" "$line" "$rc" "$log")"; fi
}
skip() { wanted "$1" && say "$(printf '%-16s skipped       %s' "$1" "$2")"; return 0; }

# (a copy of a working tree may carry a stale .git: rmm.h's own hash names the code that ran)
say "gpu-check of $(git rev-parse --short HEAD 2>/dev/null || echo '?') (rmm.h sha1 $(sha1sum rmm.h | cut -c1-12)) on $(date -u '+%Y-%m-%d %H:%M UTC')"
say "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1 || echo 'none found')"
say "CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //') x $(nproc); python $("$PYTHON" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)"
if ! nvidia-smi -L >/dev/null 2>&1; then
    say "no GPU here (nvidia-smi finds none): make gpu-check needs one; run make test instead"
    exit 1
fi

# the RMM C++ peer build (nvcc over RMM's headers, a minute or two of one core) overlaps make-test,
# whose critical path is its serial GPU lane; the bench part waits for it
peer_pid=
if { wanted bench || wanted figures; } && ls .whl/librmm_cu13-*.whl .whl/rapids_logger-*.whl >/dev/null 2>&1; then
    nice bash bench/peer/build.sh > "$OUTDIR/peer_build.log" 2>&1 & peer_pid=$!
fi

part make-test make -j"$(nproc)" test
part sanitize make sanitize
FULL=${GPU_CHECK_FULL:-0}
if [ "$FULL" = 1 ]; then modes=cuda-ctypes; fquick=0; quick=; else modes=none; fquick=1; quick=--quick; fi
part python-install env OUT="$OUTDIR/python" RMMH_CHECK_MODES=$modes bash python/tests/gpu_check.sh
part frameworks env OUT="$OUTDIR/frameworks" GPU_FRAMEWORKS_QUICK=$fquick bash python/tests/gpu_frameworks.sh

RMM_TESTS_DIR=${RMM_TESTS_DIR:-}
for d in "$ROOT/../shared/rmm_tests" "$ROOT/shared/rmm_tests" "$ROOT/.gpu/rmm_tests"; do
    [ -z "$RMM_TESTS_DIR" ] && [ -f "$d/test_helpers.py" ] && RMM_TESTS_DIR=$d
done
if [ ! -x python/tests/rmm_suite.sh ] && [ ! -f python/tests/rmm_suite.sh ]; then
    skip rmm-suite-rmmh "python/tests/rmm_suite.sh is missing"; skip rmm-suite-rmm "python/tests/rmm_suite.sh is missing"
elif [ -z "$RMM_TESTS_DIR" ]; then
    skip rmm-suite-rmmh "RMM's tests not found (RMM_TESTS_DIR, ../shared/rmm_tests, .gpu/rmm_tests)"
    skip rmm-suite-rmm "RMM's tests not found"
else
    make python >/dev/null 2>&1 || true # (make-test built it; on its own this part builds it)
    part rmm-suite-rmmh env OUT="$OUTDIR" RMM_SUITE_TARGET=rmmh RMM_SUITE_ALL=1 bash python/tests/rmm_suite.sh "$RMM_TESTS_DIR"
    if ls .whl/rmm_cu13-*.whl .whl/librmm_cu13-*.whl .whl/rapids_logger-*.whl >/dev/null 2>&1; then
        RMM_SITE=$(mktemp -d /tmp/rmm_site.XXXXXX)
        if "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target "$RMM_SITE" \
                .whl/rmm_cu13-*.whl .whl/librmm_cu13-*.whl .whl/rapids_logger-*.whl > "$OUTDIR/rmm_wheels.log" 2>&1; then
            part rmm-suite-rmm env OUT="$OUTDIR" PYTHONPATH="$RMM_SITE${PYTHONPATH:+:$PYTHONPATH}" RMM_SUITE_TARGET=rmm \
                bash python/tests/rmm_suite.sh "$RMM_TESTS_DIR"
        else
            skip rmm-suite-rmm "RMM's wheels did not install (see rmm_wheels.log)"
        fi
    else
        skip rmm-suite-rmm "RMM's wheels (rmm_cu13, librmm_cu13, rapids_logger) are not in .whl/"
    fi
fi

# the C benchmarks, quick: the peer build (RMM C++ rows) where the wheels are there
bench_all() {
    local ra=build/bench/random_allocations sc=build/bench/stream_churn kind rows="with RMM C++ rows"
    make -j"$(nproc)" bench || return 1
    if [ -n "$peer_pid" ] && wait "$peer_pid"; then
        ra=build/bench/peer/random_allocations; sc=build/bench/peer/stream_churn
    else
        rows="WITHOUT RMM C++ rows: no librmm_cu13 and rapids_logger wheels in .whl/, or the peer build failed (peer_build.log)"
        echo "($rows)"
    fi
    for kind in foreign created default; do
        echo "### random_allocations $quick --stream $kind"
        "$ra" $quick --stream "$kind" || return 1
    done
    echo "### many_streams (GPU)"
    build/bench/many_streams $quick || return 1
    echo "### many_streams (host backend)"
    build/bench/host/many_streams || return 1
    for kind in created foreign; do
        echo "### stream_churn $quick --stream $kind"
        "$sc" $quick --stream "$kind" || return 1
    done
    echo "1 passed, 0 failed ($rows)"
}
part bench bench_all

# every README figure's benchmark (see the header), a log each in $OUTDIR/figures
figures_all() {
    local ra=build/bench/random_allocations rp=build/bench/replay sc=build/bench/stream_churn kind rc=0 F=$OUTDIR/figures
    local traces="bench/traces/resnet50_train.csv.gz bench/traces/gpt2_train.csv.gz bench/traces/bert_encode.csv.gz"
    mkdir -p "$F"
    make -j"$(nproc)" bench || return 1
    if [ -n "$peer_pid" ] && wait "$peer_pid"; then
        ra=build/bench/peer/random_allocations; rp=build/bench/peer/replay; sc=build/bench/peer/stream_churn
    else
        echo "(WITHOUT RMM C++ rows: no librmm_cu13 and rapids_logger wheels in .whl/, or the peer build failed)"
    fi
    # fig NAME LIMIT CMD...: CMD's output in $F/NAME.log, its command and times on top
    fig() {
        local name=$1 limit=$2 r; shift 2
        { echo "# command: $*"; echo "# started $(date -u '+%Y-%m-%d %H:%M:%S UTC')"; } > "$F/$name.log"
        timeout --kill-after=10 "$limit" "$@" >> "$F/$name.log" 2>&1; r=$?
        echo "# ended $(date -u '+%H:%M:%S UTC'), exit $r" >> "$F/$name.log"
        echo "$name: exit $r ($(tail -n 2 "$F/$name.log" | head -n 1 | cut -c1-100))"
        [ $r -eq 0 ] || rc=1
    }
    for kind in foreign created default; do fig "random_allocations_$kind" 150 "$ra" --quick --stream "$kind"; done
    # (full length: a quick run's loops are short beside the release of the blocked streams)
    fig random_allocations_foreign_lag 200 "$ra" --reps 3 --stream foreign --lag --workload lifo_256B,churn_small,churn_mixed,threads16
    fig stream_identity 60 build/bench/stream_identity --quick
    fig many_streams 60 build/bench/many_streams --quick
    fig many_streams_host 60 build/bench/host/many_streams
    fig stream_churn_created 90 "$sc" --quick --stream created
    fig stream_churn_foreign 90 "$sc" --quick --stream foreign
    fig replay 240 "$rp" $traces
    # gpt2_generate: 967,218 events; a cudaMalloc per event (cuda) takes many minutes, and async ran past 150 s (2026-11-26)
    local gen=pool,pool-geometric,pool-virtual,pool-virtual-extent,binning,arena
    [ "$rp" = build/bench/peer/replay ] && gen=$gen,rmm::pool,rmm::binning,rmm::async
    fig replay_gpt2_generate 150 "$rp" --runs 1 --resource "$gen" bench/traces/gpt2_generate.csv.gz
    if ! grep -q '^csv,gpt2_generate,binning' "$F/replay_gpt2_generate.log"; then # (past its limit: the host backend's replay)
        fig replay_gpt2_generate_host 120 build/bench/host/replay --runs 1 --resource pool,pool-geometric,pool-virtual,pool-virtual-extent,binning \
            bench/traces/gpt2_generate.csv.gz
    fi
    fig adaptors 120 build/bench/adaptors --quick
    fig vmm_costs 60 build/bench/vmm_costs
    ls "$F"
    [ $rc -eq 0 ] && echo "1 passed, 0 failed (figures in $F)" || echo "0 passed, 1 failed (a benchmark failed or ran past its limit: see $F)"
    return $rc
}
part figures figures_all

say "total: $(( $(date +%s) - t_all ))s; logs in $OUTDIR"
[ $status -eq 0 ] && say "gpu-check: every part that ran passed" || say "gpu-check: FAILED"
exit $status
