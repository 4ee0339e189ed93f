"""Numba allocating through rmmh's EMM plugin (GPU only; skipped without numba-cuda). Numba picks
its memory manager when it makes a context, so each case runs in a fresh interpreter: selected
with NUMBA_CUDA_MEMORY_MANAGER=rmmh.allocators.numba and with cuda.set_memory_manager. (IPC
through the plugin is in test_ipc.py.)"""
import pytest

from conftest import child_env, requires_gpu

pytestmark = requires_gpu

CHILD = """
import sys
import numpy as np
import rmmh as rmm
from numba import cuda
from rmmh.allocators.numba import RMMNumbaManager

if sys.argv[1] == "set":
    cuda.set_memory_manager(RMMNumbaManager)
stats = rmm.mr.StatisticsResourceAdaptor(
    rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "64MiB"))
rmm.mr.set_current_device_resource(stats)
ctx = cuda.current_context()
mm = ctx.memory_manager
assert isinstance(mm, RMMNumbaManager) and mm.interface_version == 1
mm.initialize()  # may be called again
free, total = ctx.get_memory_info()
assert 0 < free <= total

# no kernel: numba-cuda 0.30 cannot compile one under NumPy 2.5 (np.row_stack is gone), which
# says nothing about memory; a device-to-device copy between two blocks checks the memory instead
d = cuda.to_device(np.arange(1000, dtype=np.float32))
assert stats.allocation_counts.current_bytes >= 4000
twin = cuda.device_array_like(d)
twin.copy_to_device(d)
assert (twin.copy_to_host() == np.arange(1000)).all()
del twin
n = stats.allocation_counts.current_count
with cuda.defer_cleanup():
    e = cuda.device_array(5000, dtype=np.uint8)
    assert stats.allocation_counts.current_count == n + 1
    del e
    assert stats.allocation_counts.current_count == n + 1  # kept until the block ends
assert stats.allocation_counts.current_count == n
v = d[100:200]  # a view keeps its parent
del d
assert stats.allocation_counts.current_count == n
del v
assert stats.allocation_counts.current_count == n - 1
keep = cuda.device_array(100)
assert stats.allocation_counts.current_count == n
ctx.reset()  # Numba's context reset frees every allocation of the context
assert stats.allocation_counts.current_count == 0
print("numba ok", cuda.__name__)
"""


def numba_child(mode, **env):
    def spec():
        import importlib.util
        if importlib.util.find_spec("numba") is None:
            return None
        return CHILD, (mode,), {"env": child_env(**env)}
    return spec


# each case imports Numba in its own interpreter (seconds): they start together (conftest)
EARLY_CHILDREN = {
    "test_numba_by_environment_variable":
        numba_child("env", NUMBA_CUDA_MEMORY_MANAGER="rmmh.allocators.numba"),
    "test_numba_by_set_memory_manager": numba_child("set"),
}


def test_numba_by_environment_variable(request, early_children):
    pytest.importorskip("numba.cuda")
    early_children.wait(request.node.name)


def test_numba_by_set_memory_manager(request, early_children):
    pytest.importorskip("numba.cuda")
    early_children.wait(request.node.name)
