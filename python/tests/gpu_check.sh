#!/usr/bin/env bash
# gpu_check.sh: rmmh on a GPU machine, from the repository root, without network:
#   1. builds and installs the package with pip (no build isolation, no dependencies) into a
#      temporary target, as a user would (`pip install ./python`);
#   2. runs the pytest suite against that installed copy on the CUDA backend (with the C
#      accelerator, then with ctypes alone), and on the host backend;
#   3. runs the README's Python example;
#   4. runs the benchmark, with RMM's own package when its wheels are in .whl/ (see below).
# Logs go to $OUT (if set) as gpu_check_*.log; the last lines summarize. Exit status 0 iff every
# step passed. Environment: PYTHON (default python3), CUDA_HOME (default /usr/local/cuda).
#
# RMM's wheels for the benchmark's comparison rows (no network here): put them in .whl/ at the
# repository root: rmm_cu13, librmm_cu13, rapids_logger, and, used only when the interpreter
# lacks cuda-bindings, cuda_bindings and cuda_pathfinder. They are installed with
# `pip install --no-index --no-deps --target <tmp>` and put on PYTHONPATH for the benchmark only.
set -u
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
OUTDIR=${OUT:-}
WORK=$(mktemp -d /tmp/rmmh_gpu_check.XXXXXX)
SITE=$WORK/site
status=0
summary=()

log() { # log NAME CMD...: runs CMD, its output to the terminal and to $OUT/gpu_check_NAME.log
    local name=$1; shift
    local file=$WORK/$name.log
    echo "=== $name: $*"
    "$@" 2>&1 | tee "$file"
    local rc=${PIPESTATUS[0]}
    [ -n "$OUTDIR" ] && mkdir -p "$OUTDIR" && cp "$file" "$OUTDIR/gpu_check_$name.log"
    return "$rc"
}
note() { summary+=("$1"); }

echo "=== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
    || echo "nvidia-smi: no GPU visible"
"$PYTHON" -c "import sys; print('python', sys.version.split()[0], sys.executable)"

# 1. install with pip as a user would (the in-tree backend needs no package); on failure fall
#    back to an in-place build so the tests still run, and say so
if log install "$PYTHON" -m pip install --no-build-isolation --no-deps --no-index \
        --target "$SITE" ./python; then
    note "install: pip install --no-build-isolation ./python ok"
else
    status=1
    note "install: pip FAILED (see gpu_check_install.log); testing an in-place build instead"
    "$PYTHON" python/build_native.py && mkdir -p "$SITE" && cp -r python/rmmh "$SITE/"
fi
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
log import env RMMH_BACKEND=cuda "$PYTHON" -c "import rmmh, rmmh._cuda.gpu as g
print('rmmh', rmmh.__version__, 'from', rmmh.__file__)
print('backend', rmmh.BACKEND, '| accelerator', rmmh.ACCELERATED, '| rmm.h', rmmh.RMM_H_VERSION)
print('devices', g.getDeviceCount(), '| runtime', g.runtimeGetVersion(), '| driver', g.driverGetVersion())" \
    || { status=1; note "import: FAILED"; }

# 2. the test suite against the installed copy
# (RMMH_CHECK_MODES=none: make gpu-check, whose make-test part runs the suite from the tree on
# both backends; the installed copy is tested there by the example, the benchmark and the
# frameworks part)
for mode in ${RMMH_CHECK_MODES:-cuda cuda-ctypes host}; do
    case $mode in
        none) continue ;;
        cuda) envs=(RMMH_BACKEND=cuda) ;;
        cuda-ctypes) envs=(RMMH_BACKEND=cuda RMMH_NO_ACCEL=1) ;;
        host) envs=(RMMH_BACKEND=host) ;;
    esac
    if log "pytest-$mode" env "${envs[@]}" RMMH_TEST_INSTALLED=1 "$PYTHON" -m pytest -q -rs \
            -p no:cacheprovider python/tests; then
        note "pytest $mode: $(tail -n 1 "$WORK/pytest-$mode.log")"
    else
        status=1
        note "pytest $mode: FAILED: $(tail -n 1 "$WORK/pytest-$mode.log")"
    fi
done

# 3. the README's Python example (the code block after <!-- rmmh-example -->)
"$PYTHON" - > "$WORK/example.py" <<'PY'
import re
text = open("README.md").read()
m = re.search(r"<!-- rmmh-example -->\s*```python\n(.*?)```", text, re.S)
print(m.group(1) if m else "raise SystemExit('README.md has no rmmh example')")
PY
if log example env RMMH_BACKEND=cuda "$PYTHON" "$WORK/example.py"; then
    note "README example: ok"
else
    status=1
    note "README example: FAILED"
fi

# 4. the benchmark, with RMM's package when its wheels were carried in .whl/
BENCH_PATH=$PYTHONPATH
if ls .whl/rmm_cu*.whl >/dev/null 2>&1; then
    wheels=(.whl/rmm_cu*.whl .whl/librmm_cu*.whl .whl/rapids_logger*.whl)
    if ! "$PYTHON" -c "import cuda.bindings" >/dev/null 2>&1; then
        wheels+=(.whl/cuda_bindings*.whl .whl/cuda_pathfinder*.whl)
    fi
    if "$PYTHON" -m pip install -q --no-index --no-deps --target "$WORK/rmm_site" "${wheels[@]}"; then
        BENCH_PATH="$PYTHONPATH:$WORK/rmm_site"
    else
        note "bench: RMM's wheels did not install; its rows are skipped"
    fi
else
    note "bench: no RMM wheels in .whl/; its rows are skipped"
fi
if log bench env RMMH_BACKEND=cuda RMMH_BENCH_INSTALLED=1 PYTHONPATH="$BENCH_PATH" "$PYTHON" python/bench/bench_alloc.py; then
    note "bench: ok (table in gpu_check_bench.log)"
else
    status=1
    note "bench: FAILED"
fi

echo "=== summary"
for line in "${summary[@]}"; do echo "$line"; done
[ -n "$OUTDIR" ] && printf '%s\n' "${summary[@]}" > "$OUTDIR/gpu_check_summary.log"
[ $status -eq 0 ] && echo "gpu_check: all steps passed" || echo "gpu_check: FAILED"
rm -rf "$WORK"
exit $status
