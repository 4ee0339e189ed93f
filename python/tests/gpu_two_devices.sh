#!/bin/bash
# The two-device cases on a machine with two GPUs (make test runs them only where two devices are
# there): rmmh's Python tests that use a second device, the Dask ones (skipped where dask is not
# installed), and RAPIDS RMM's own suite against rmmh. Run from the repository root:
#   bash python/tests/gpu_two_devices.sh            (logs in $OUT, default build/two_devices)
OUT=${OUT:-build/two_devices}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
RMM_TESTS_DIR=${RMM_TESTS_DIR:-}
for d in ../shared/rmm_tests shared/rmm_tests .gpu/rmm_tests; do
    [ -z "$RMM_TESTS_DIR" ] && [ -f "$d/test_helpers.py" ] && RMM_TESTS_DIR=$(cd "$d" && pwd)
done
{
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
echo "rmm.h sha1 $(sha1sum rmm.h | cut -c1-12)"
make python > "$OUT/make_python.log" 2>&1; echo "make python rc=$?"
RMMH_BACKEND=cuda timeout 600 "$PYTHON" -m pytest -q -p no:cacheprovider -m "not long" -rs \
  python/tests/test_multi_device.py python/tests/test_hooks.py python/tests/test_lifetimes.py \
  python/tests/test_logging_reinitialize.py python/tests/test_dask.py python/tests/test_dask_cuda.py \
  python/tests/test_allocators_torch.py python/tests/test_allocators_cupy.py > "$OUT/pytest.log" 2>&1
echo "pytest rc=$?"; tail -1 "$OUT/pytest.log"
if [ -n "$RMM_TESTS_DIR" ]; then
    RMM_SUITE_TARGET=rmmh RMM_SUITE_ALL=1 OUT="$OUT" bash python/tests/rmm_suite.sh "$RMM_TESTS_DIR" > "$OUT/rmm_suite.log" 2>&1
    echo "rmm suite rc=$?"; tail -1 "$OUT/rmm_suite.log"
else
    echo "RMM's suite: not found (RMM_TESTS_DIR, ../shared/rmm_tests, .gpu/rmm_tests)"
fi
} 2>&1 | tee "$OUT/console.log"
