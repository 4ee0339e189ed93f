#!/usr/bin/env bash
# gpu_frameworks.sh: rmmh with CuPy, Numba, PyTorch and Dask on a GPU machine, from the repository
# root, without network (about 3-4 minutes on one H100):
#   1. builds and installs the package with pip into a temporary target, as gpu_check.sh does;
#   2. installs Dask and the pure-Python packages it lacks there from the wheels in .whl/
#      (dask, distributed, partd, locket, tblib, zict, tornado; dask_cuda and nvidia_ml_py for
#      test_dask_cuda.py, optional) into another temporary target;
#   3. runs the frameworks', IPC, two-device and Dask tests on the CUDA backend (CuPy 14, numba-cuda,
#      torch and torchvision are on the machine: they must run, not skip; the two-GPU cases skip
#      with one line on a one-GPU machine), then the same files on the host backend;
#   4. runs python/bench/bench_frameworks.py, with RMM's own package from .whl/ for its rows
#      (rmm_cu13, librmm_cu13, rapids_logger; cuda_bindings, cuda_pathfinder where missing); its
#      arguments: GPU_FRAMEWORKS_BENCH_ARGS when set (even empty: the full form), else the quick
#      ones under GPU_FRAMEWORKS_QUICK=1, else none.
# Writes three files to $OUT (if set): frameworks.log (everything), frameworks_bench.md (the
# benchmark's tables) and frameworks_summary.txt; prints the pytest closing lines and the GPUs at
# the end. Exit status 0 iff every step passed. Environment: PYTHON (default python3).
set -u
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
OUTDIR=${OUT:-}
WORK=$(mktemp -d /tmp/rmmh_gpu_frameworks.XXXXXX)
LOG=$WORK/frameworks.log
SITE=$WORK/site
status=0
summary=()
note() { summary+=("$1"); echo "$1" >> "$LOG"; }
step() { # step NAME TIMEOUT CMD...: runs CMD under a time limit, output to the terminal and the log
    local name=$1 limit=$2; shift 2
    echo "=== $name: $*" | tee -a "$LOG"
    timeout --signal=INT --kill-after=20 "$limit" "$@" 2>&1 | tee "$WORK/$name.out" | tee -a "$LOG"
    local rc=${PIPESTATUS[0]}
    [ "$rc" -eq 124 ] && echo "=== $name: TIMED OUT after $limit s" | tee -a "$LOG"
    return "$rc"
}
closing() { grep -E '^[0-9]+ passed, [0-9]+ failed' "$WORK/$1.out" | tail -n 1; }

{
    echo "=== machine"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
    "$PYTHON" -c "import sys; print('python', sys.version.split()[0], sys.executable)"
    "$PYTHON" -m pip list 2>/dev/null | grep -iE '^(cupy|numba|torch|torchvision|cloudpickle|click|msgpack|psutil|toolz|cuda-bindings) '
} 2>&1 | tee "$LOG"

# 1. the package, as a user installs it
if step install 240 "$PYTHON" -m pip install --no-build-isolation --no-deps --no-index \
        --target "$SITE" ./python; then
    note "install: ok"
else
    status=1
    note "install: pip FAILED; testing an in-place build instead"
    "$PYTHON" python/build_native.py >> "$LOG" 2>&1 && mkdir -p "$SITE" && cp -r python/rmmh "$SITE/"
fi

# 2. Dask from the carried wheels
DASK_SITE=$WORK/dask_site
# install_wheels NAME...: installs .whl/NAME-*.whl for every NAME into $DASK_SITE; fails (and
# installs nothing) unless every one is there; $found says how many were
install_wheels() {
    local w f wheels=()
    for w in "$@"; do
        f=$(ls .whl/${w}-[0-9]*.whl 2>/dev/null | head -n 1)
        [ -n "$f" ] && wheels+=("$f")
    done
    found=${#wheels[@]}
    [ "$found" -eq $# ] && "$PYTHON" -m pip install -q --no-index --no-deps --no-compile \
        --target "$DASK_SITE" "${wheels[@]}" >> "$LOG" 2>&1
}
if install_wheels dask distributed partd locket tblib zict tornado; then
    note "dask: installed from .whl/ ($found wheels)"
else
    status=1
    note "dask: FAILED to install from .whl/ (found $found of 7 wheels); its test skips"
fi
# dask-cuda and NVML's Python binding (optional: without them test_dask_cuda.py skips, and says so)
if install_wheels dask_cuda nvidia_ml_py; then
    note "dask-cuda: installed from .whl/"
else
    note "dask-cuda: not in .whl/ (dask_cuda, nvidia_ml_py) or did not install; test_dask_cuda.py skips"
fi
export PYTHONPATH="$SITE:$DASK_SITE${PYTHONPATH:+:$PYTHONPATH}"
"$PYTHON" -c "import dask, distributed; print('dask', dask.__version__, 'distributed', distributed.__version__)" >> "$LOG" 2>&1 \
    || note "dask: does not import (see the log)"

# 3. the tests, on the installed copy. GPU_FRAMEWORKS_QUICK=1 (make gpu-check, whose make-test part
# has run every one of these files on the CUDA and host backends from the tree already) runs only
# the files that need the Dask wheels installed above, and the benchmark in its quick form.
QUICK=${GPU_FRAMEWORKS_QUICK:-0}
TESTS="python/tests/test_allocators_cupy.py python/tests/test_allocators_torch.py
       python/tests/test_allocators_numba.py python/tests/test_ipc.py python/tests/test_dask.py
       python/tests/test_hooks.py python/tests/test_multi_device.py python/tests/test_frameworks.py
       python/tests/test_dask_cuda.py python/tests/test_as_rmm.py"
HOST_TESTS="python/tests/test_hooks.py python/tests/test_multi_device.py python/tests/test_ipc.py
            python/tests/test_dask.py python/tests/test_dask_cuda.py"
BENCH_ARGS=()
if [ "$QUICK" = 1 ]; then
    TESTS="python/tests/test_dask.py python/tests/test_dask_cuda.py python/tests/test_as_rmm.py
           python/tests/test_allocators_torch.py::test_torch_training_step"
    HOST_TESTS="python/tests/test_dask.py python/tests/test_dask_cuda.py"
    BENCH_ARGS=(--iters 5000 --repeats 3 --warmup 3 --steps 10 --rounds 1)
    note "quick: Dask tests and the PyTorch training step (make test ran the rest), benchmark ${BENCH_ARGS[*]}"
fi
# GPU_FRAMEWORKS_BENCH_ARGS (set, even empty) replaces the benchmark's arguments: "" runs its full
# form (the README's figures) after the quick tests
if [ -n "${GPU_FRAMEWORKS_BENCH_ARGS+set}" ]; then
    read -r -a BENCH_ARGS <<< "$GPU_FRAMEWORKS_BENCH_ARGS"
    note "benchmark arguments from GPU_FRAMEWORKS_BENCH_ARGS: '${GPU_FRAMEWORKS_BENCH_ARGS}'"
fi
if step pytest-cuda 270 env RMMH_BACKEND=cuda RMMH_TEST_INSTALLED=1 "$PYTHON" -m pytest -q -rs \
        -p no:cacheprovider $TESTS; then
    note "pytest cuda: $(closing pytest-cuda)"
else
    status=1
    note "pytest cuda: FAILED: $(closing pytest-cuda)"
fi
# skips on the CUDA backend are only allowed for two GPUs: list them
while read -r line; do note "  $line"; done < <(grep -E '^SKIPPED' "$WORK/pytest-cuda.out")
if step pytest-host 90 env RMMH_BACKEND=host RMMH_TEST_INSTALLED=1 "$PYTHON" -m pytest -q \
        -p no:cacheprovider $HOST_TESTS; then
    note "pytest host: $(closing pytest-host)"
else
    status=1
    note "pytest host: FAILED: $(closing pytest-host)"
fi

# 4. the benchmark, with RMM's package for its rows
BENCH_PATH=$PYTHONPATH
if ls .whl/rmm_cu*.whl >/dev/null 2>&1; then
    wheels=(.whl/rmm_cu*.whl .whl/librmm_cu*.whl .whl/rapids_logger*.whl)
    if ! "$PYTHON" -c "import cuda.bindings" >/dev/null 2>&1; then
        wheels+=(.whl/cuda_bindings*.whl .whl/cuda_pathfinder*.whl)
    fi
    if "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target "$WORK/rmm_site" \
            "${wheels[@]}" >> "$LOG" 2>&1; then
        BENCH_PATH="$PYTHONPATH:$WORK/rmm_site"
    else
        note "bench: RMM's wheels did not install; its rows are skipped"
    fi
else
    note "bench: no RMM wheels in .whl/; its rows are skipped"
fi
if step bench 210 env RMMH_BACKEND=cuda RMMH_BENCH_INSTALLED=1 PYTHONPATH="$BENCH_PATH" \
        "$PYTHON" python/bench/bench_frameworks.py "${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}" --out "$WORK/frameworks_bench.md"; then
    note "bench: ok"
else
    status=1
    note "bench: FAILED"
fi

echo "=== summary" | tee -a "$LOG"
for line in "${summary[@]}"; do echo "$line"; done
if [ -n "$OUTDIR" ]; then
    mkdir -p "$OUTDIR"
    cp "$LOG" "$OUTDIR/frameworks.log"
    [ -f "$WORK/frameworks_bench.md" ] && cp "$WORK/frameworks_bench.md" "$OUTDIR/frameworks_bench.md"
    printf '%s\n' "${summary[@]}" > "$OUTDIR/frameworks_summary.txt"
fi
echo "=== pytest closing lines"
echo "cuda: $(closing pytest-cuda)"
echo "host: $(closing pytest-host)"
echo "=== GPUs"
nvidia-smi -L 2>&1
[ $status -eq 0 ] && echo "gpu_frameworks: all steps passed" || echo "gpu_frameworks: FAILED"
rm -rf "$WORK"
exit $status
