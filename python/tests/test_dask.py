"""Dask workers with rmmh (python/examples/dask_rmmh.py): a LocalCluster with one worker process
per GPU (CUDA_VISIBLE_DEVICES each), client.run(rmmh.reinitialize, pool_allocator=True, ...) and
rmmh's CuPy allocator on every worker, a CuPy computation across them, and each worker's
statistics read back. On the host backend the same runs with a worker per simulated device and
NumPy blocks copied through rmmh; nothing tells CUDA or NVML about those devices, which a machine
with one GPU (or none) does not have: a fake NVML of one GPU checks it on any machine. Skipped
without dask.distributed (and, on the CUDA backend, without CuPy)."""
import os
import subprocess
import sys
import textwrap

import pytest

import rmmh
from conftest import HAVE_GPU, HOST, child_env, host_only

pytestmark = pytest.mark.skipif(not (HOST or HAVE_GPU),
                                reason="needs a GPU or RMMH_BACKEND=host")
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
sys.path.insert(0, EXAMPLES)  # the example (the test that runs it puts it there again, for
import dask_rmmh  # noqa: E402   the workers it spawns)
sys.path.remove(EXAMPLES)


def test_dask_workers_with_rmmh():
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    if not HOST:
        pytest.importorskip("cupy")
    sys.path.insert(0, EXAMPLES)  # the workers, spawned with this sys.path, import it too
    try:
        gpus = dask_rmmh.devices()
        result, expected, stats = dask_rmmh.run(pool_size="64MiB", n=1024)
    finally:
        sys.path.remove(EXAMPLES)
    assert result == expected
    assert len(stats) == len(gpus)
    if HOST:  # nothing named a device for the workers, and their NVML diagnostics are off
        for s in stats.values():
            assert s["CUDA_VISIBLE_DEVICES"] == os.environ.get("CUDA_VISIBLE_DEVICES"), stats
            assert s["nvml"] is False and s["device"] == 0, stats
    else:
        assert sorted(s["CUDA_VISIBLE_DEVICES"] for s in stats.values()) == sorted(gpus)
    assert len({s["pid"] for s in stats.values()}) == len(gpus)  # one process each
    for s in stats.values():
        assert s["resource"] == "StatisticsResourceAdaptor"
        assert s["pool_bytes"] == 64 << 20
        assert s["total_count"] > 0 and s["peak_bytes"] > 0, stats
    assert rmmh.mr.get_current_device_resource_type() is rmmh.mr.CudaMemoryResource  # untouched


def test_host_workers_name_no_device(monkeypatch):
    """What the example gives its workers (no cluster started): on the host backend one worker
    per simulated device, no CUDA_VISIBLE_DEVICES (the user's own, if any, is inherited as it is)
    and dask's NVML diagnostics off; on the CUDA backend one GPU each, diagnostics as configured."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # a real GPU's: not the simulated devices
    specs = dask_rmmh.worker_specs(["0", "1"], backend="host", env={"OMP_NUM_THREADS": "1"})
    assert sorted(specs) == ["sim0", "sim1"]
    for env, config in specs.values():
        assert env == {"OMP_NUM_THREADS": "1"}
        assert config == {"distributed.diagnostics.nvml": False}
    if HOST:
        assert dask_rmmh.devices() == ["0", "1"]
        assert sorted(dask_rmmh.worker_specs()) == ["sim0", "sim1"]
    specs = dask_rmmh.worker_specs(["0", "3"], backend="cuda")
    assert specs == {"gpu0": ({"CUDA_VISIBLE_DEVICES": "0"}, {}),
                     "gpu3": ({"CUDA_VISIBLE_DEVICES": "3"}, {})}


# NVML of a machine with one GPU, for dask's diagnostics (distributed.diagnostics.nvml): every
# device index it is asked for is logged, and an index past 0 fails as the real one does
FAKE_PYNVML = textwrap.dedent("""
    import os

    class NVMLError(Exception):
        pass

    class NVMLError_LibraryNotFound(NVMLError): pass
    class NVMLError_DriverNotLoaded(NVMLError): pass
    class NVMLError_Unknown(NVMLError): pass
    class NVMLError_NotSupported(NVMLError): pass
    class NVMLError_NotFound(NVMLError): pass
    class NVMLError_InvalidArgument(NVMLError): pass

    NVML_DEVICE_MIG_DISABLE, NVML_DEVICE_MIG_ENABLE = 0, 1

    class _Info:
        total, free, used, gpu, memory = 80 << 30, 80 << 30, 0, 0, 0

    def nvmlInit():
        pass

    def nvmlSystemGetDriverVersion():
        return "580.00"

    def nvmlDeviceGetCount():
        return 1

    def nvmlDeviceGetHandleByIndex(index):
        with open(os.environ["RMMH_FAKE_NVML_LOG"], "a") as f:
            f.write("%d\\n" % index)
        if index != 0:
            raise NVMLError_InvalidArgument("Invalid Argument")
        return "handle0"

    def nvmlDeviceGetHandleByUUID(uuid):
        return nvmlDeviceGetHandleByIndex(0)

    def nvmlDeviceGetIndex(handle):
        return 0

    def nvmlDeviceGetUUID(handle):
        return "GPU-00000000-0000-0000-0000-000000000000"

    def nvmlDeviceGetName(handle):
        return "fake GPU"

    def nvmlDeviceGetMemoryInfo(handle):
        return _Info()

    def nvmlDeviceGetUtilizationRates(handle):
        return _Info()

    def nvmlDeviceGetMigMode(handle):
        raise NVMLError_NotSupported()

    def nvmlDeviceGetComputeRunningProcesses(handle):
        return []
""")


@host_only
def test_host_backend_example_on_a_one_gpu_machine(tmp_path):
    """The example, as gpu_frameworks.sh runs it on an H100, on the host backend of a machine
    whose NVML has one GPU: it passes, and NVML is never asked about a device past 0. (It failed
    with "Nanny failed to start" when each worker had CUDA_VISIBLE_DEVICES=<simulated device>.)"""
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    (tmp_path / "pynvml.py").write_text(FAKE_PYNVML)
    log = tmp_path / "nvml_indices.txt"
    env = child_env(RMMH_FAKE_NVML_LOG=log, RMMH_BACKEND="host")
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    env.pop("CUDA_VISIBLE_DEVICES", None)
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "dask_rmmh.py"), "--n", "256",
                        "--pool-size", "16MiB"], env=env, capture_output=True, text=True,
                       timeout=240, cwd=str(tmp_path))
    asked = log.read_text().split() if log.exists() else []
    assert r.returncode == 0 and "on 2 workers" in r.stdout, (r.stdout[-3000:], r.stderr[-6000:])
    assert "'nvml': False" in r.stdout
    assert asked and set(asked) == {"0"}, asked  # the scheduler's monitor did use the fake
