"""Dask workers with rmmh (python/examples/dask_rmmh.py): a LocalCluster with one worker process
per GPU (CUDA_VISIBLE_DEVICES each), client.run(rmmh.reinitialize, pool_allocator=True, ...) and
rmmh's CuPy allocator on every worker, a CuPy computation across them, and each worker's
statistics read back. On the host backend the same runs with two workers and NumPy blocks copied
through rmmh. Skipped without dask.distributed (and, on the CUDA backend, without CuPy)."""
import os
import sys

import pytest

import rmmh
from conftest import HAVE_GPU, HOST

pytestmark = pytest.mark.skipif(not (HOST or HAVE_GPU),
                                reason="needs a GPU or RMMH_BACKEND=host")
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def test_dask_workers_with_rmmh():
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    if not HOST:
        pytest.importorskip("cupy")
    sys.path.insert(0, EXAMPLES)  # the workers, spawned with this sys.path, import it too
    try:
        import dask_rmmh
        gpus = dask_rmmh.devices()
        result, expected, stats = dask_rmmh.run(pool_size="64MiB", n=1024)
    finally:
        sys.path.remove(EXAMPLES)
    assert result == expected
    assert len(stats) == len(gpus)
    assert sorted(s["CUDA_VISIBLE_DEVICES"] for s in stats.values()) == sorted(gpus)
    assert len({s["pid"] for s in stats.values()}) == len(gpus)  # one process each
    for s in stats.values():
        assert s["resource"] == "StatisticsResourceAdaptor"
        assert s["pool_bytes"] == 64 << 20
        assert s["total_count"] > 0 and s["peak_bytes"] > 0, stats
    assert rmmh.mr.get_current_device_resource_type() is rmmh.mr.CudaMemoryResource  # untouched
