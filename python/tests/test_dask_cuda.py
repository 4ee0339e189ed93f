"""dask-cuda with `import rmm` resolved to rmmh (python -m rmmh.as_rmm): dask-cuda's workers import
rmm in their own processes, so the alias must reach them through the environment switch.

- On any backend: dask-cuda's RMM worker plugin (dask_cuda.plugins.RMMSetup, what
  LocalCUDACluster(rmm_pool_size=..., rmm_async=..., rmm_track_allocations=...) gives each worker)
  on a dask.distributed LocalCluster of two worker processes: a pool (or an async resource under a
  limit) and a tracking adaptor on every worker, built by dask-cuda's own code, allocations counted
  by dask_cuda.utils.get_rmm_device_memory_usage.
- On a GPU: LocalCUDACluster itself (it needs NVML and a GPU, so it skips elsewhere), one worker
  per GPU.
Skipped without dask-cuda (pip install dask-cuda)."""
import json
import subprocess
import sys

import pytest

from conftest import HAVE_GPU, HOST, child_env
from rmmh import as_rmm

try:
    import dask_cuda  # noqa: F401  (imports no rmm: dask-cuda does that in its workers)
    NO_DASK_CUDA = None
except ImportError as e:
    NO_DASK_CUDA = "dask-cuda does not import (pip install dask-cuda): %s" % e

pytestmark = [
    pytest.mark.skipif(not (HOST or HAVE_GPU), reason="needs a GPU or RMMH_BACKEND=host"),
    pytest.mark.skipif(NO_DASK_CUDA is not None, reason=NO_DASK_CUDA or ""),
]

CHILD = r'''
import json, os, sys
import rmm, rmmh
from distributed import Client, LocalCluster

def alloc(n):
    import rmm
    from dask_cuda.utils import get_rmm_device_memory_usage
    global _kept
    _kept = rmm.DeviceBuffer(size=n)
    return get_rmm_device_memory_usage()

def state():
    import os, rmm, rmmh
    stack, mr = [], rmm.mr.get_current_device_resource()
    pool_bytes = None
    while mr is not None:
        stack.append(type(mr).__name__)
        if isinstance(mr, rmm.mr.PoolMemoryResource):
            pool_bytes = mr.pool_size()
        mr = getattr(mr, "upstream_mr", None)
    return {"pid": os.getpid(), "rmm_is_rmmh": rmm is rmmh, "stack": stack,
            "pool_bytes": pool_bytes, "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}

def report(client):
    print(json.dumps({"parent": os.getpid(), "rmm_is_rmmh": rmm is rmmh,
                      "usage": list(client.run(alloc, 1000).values()),
                      "workers": list(client.run(state).values())}))

if __name__ == "__main__":
    mode = sys.argv[1]
    if mode.startswith("plugin"):
        from dask_cuda.plugins import RMMSetup
        is_async = mode == "plugin-async"
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            client.register_plugin(RMMSetup(
                initial_pool_size="64MiB", maximum_pool_size="128MiB", managed_memory=False,
                async_alloc=is_async, release_threshold="32MiB" if is_async else None,
                log_directory=None, track_allocations=True, external_lib_list=None))
            report(client)
    else:
        from dask_cuda import LocalCUDACluster
        extra = ({"rmm_async": True, "rmm_release_threshold": "128MiB"} if mode == "cluster-async"
                 else {"rmm_pool_size": "256MiB"})
        with LocalCUDACluster(rmm_track_allocations=True, dashboard_address=None,
                              **extra) as cluster, Client(cluster) as client:
            report(client)
'''


def run(tmp_path, mode):
    script = tmp_path / "dask_cuda_child.py"
    script.write_text(CHILD)
    env = child_env()
    env.pop(as_rmm.ENV_SWITCH, None)
    force = ["--force"] if as_rmm.find_installed_rmm() is not None else []
    r = subprocess.run([sys.executable, "-m", "rmmh.as_rmm"] + force + [str(script), mode],
                       env=env, capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    if r.returncode != 0:
        pytest.fail("child exited %d\n--- stdout\n%s\n--- stderr\n%s"
                    % (r.returncode, r.stdout[-4000:], r.stderr[-6000:]), pytrace=False)
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["rmm_is_rmmh"]
    assert all(u is not None and u >= 1000 for u in out["usage"]), out
    for w in out["workers"]:
        assert w["rmm_is_rmmh"] and w["pid"] != out["parent"], out   # its own process
    return out


@pytest.mark.parametrize("mode", ["plugin-pool", "plugin-async"])
def test_rmm_setup_plugin_on_workers(tmp_path, mode):
    out = run(tmp_path, mode)
    assert len(out["workers"]) == 2
    for w in out["workers"]:
        if mode == "plugin-pool":
            assert w["stack"] == ["TrackingResourceAdaptor", "PoolMemoryResource",
                                  "CudaMemoryResource"], out
            assert w["pool_bytes"] == 64 << 20
        else:
            assert w["stack"] == ["TrackingResourceAdaptor", "LimitingResourceAdaptor",
                                  "CudaAsyncMemoryResource"], out


@pytest.mark.skipif(not HAVE_GPU, reason="LocalCUDACluster needs NVML and a GPU "
                    "(RMMH_BACKEND=cuda on a GPU machine)")
@pytest.mark.parametrize("mode", ["cluster-pool", "cluster-async"])
def test_local_cuda_cluster(tmp_path, mode):
    out = run(tmp_path, mode)
    assert len(out["workers"]) >= 1
    assert len({w["visible"].split(",")[0] for w in out["workers"]}) == len(out["workers"])
    for w in out["workers"]:
        if mode == "cluster-pool":
            assert w["stack"] == ["TrackingResourceAdaptor", "PoolMemoryResource",
                                  "CudaMemoryResource"], out
            assert w["pool_bytes"] == 256 << 20
        else:
            assert w["stack"] == ["TrackingResourceAdaptor", "CudaAsyncMemoryResource"], out
