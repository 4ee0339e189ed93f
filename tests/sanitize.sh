#!/usr/bin/env bash
# `make sanitize`: compute-sanitizer memcheck against pool blocks, with and without RMM_NVTX.
# Needs a GPU and compute-sanitizer (not run by `make test`, which CI runs without a GPU).
set -u
BUILD=${BUILD:-build}; NVCC=${NVCC:-nvcc}
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
passed=0; failed=0
if ! [ -x "$CS" ] || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "sanitizer cases skipped: needs a GPU and compute-sanitizer"; echo "0 passed, 0 failed"; exit 0
fi
mkdir -p "$BUILD/sanitize"
$NVCC -O1 -I. -DRMM_NVTX tests/sanitize/pool_bounds.cu -o "$BUILD/sanitize/pool_bounds_nvtx" || exit 1
$NVCC -O1 -I. tests/sanitize/pool_bounds.cu -o "$BUILD/sanitize/pool_bounds_plain" || exit 1
# expect NAME BINARY RESOURCE WHERE WANT: WANT is "clean" or "error"
expect() {
    local out rc
    out=$("$CS" --tool memcheck --error-exitcode 9 "$2" "$3" "$4" 2>&1); rc=$?
    if { [ "$5" = clean ] && [ $rc -eq 0 ]; } || { [ "$5" = error ] && [ $rc -eq 9 ]; }; then
        passed=$((passed + 1)); echo "ok   $1"
    else
        failed=$((failed + 1)); echo "FAIL $1 (exit $rc, wanted $5)"; echo "$out" | tail -n 15
    fi
}
for r in pool fixed arena; do
    expect "$r, nvtx: write inside the block is clean"      "$BUILD/sanitize/pool_bounds_nvtx" $r 999 clean
    expect "$r, nvtx: write one past the block is reported" "$BUILD/sanitize/pool_bounds_nvtx" $r 1000 error
    expect "$r, nvtx: write into a freed block is reported" "$BUILD/sanitize/pool_bounds_nvtx" $r freed error
    expect "$r, plain: the same overrun goes unseen"        "$BUILD/sanitize/pool_bounds_plain" $r 1000 clean
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
