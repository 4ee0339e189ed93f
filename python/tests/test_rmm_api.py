"""RMM API details that RAPIDS RMM's own Python test suite relies on (run unmodified against
rmmh: see python/tests/rmm_suite.sh), each checked here as rmmh's own behaviour: rmm._cuda.gpu's
device attributes, BinningMemoryResource.add_bin replacing a bin, the experimental
CudaAsyncManagedMemoryResource, MemoryError for allocations CUDA refuses, DeviceBuffer asking its
resource for exactly its size, CudaStreamPool, and DeviceBuffer's array interface and to_device
checks."""
import pytest

import rmmh as rmm
from rmmh._cuda import gpu
from conftest import HAVE_GPU, HOST

# cudaDeviceAttr values (cuda.bindings.runtime.cudaDeviceAttr), stable across CUDA 12 and 13
WARP_SIZE, INTEGRATED, PAGEABLE_MEMORY_ACCESS, CONCURRENT_MANAGED_ACCESS = 10, 18, 88, 89
MEMORY_POOLS_SUPPORTED, MEMORY_POOL_HANDLE_TYPES = 115, 119


# ---- rmm._cuda.gpu.getDeviceAttribute -------------------------------------------------------

def test_device_attribute_answers_an_int():
    d = gpu.getDevice()
    assert gpu.getDeviceAttribute(WARP_SIZE, d) == 32
    for attr in (INTEGRATED, CONCURRENT_MANAGED_ACCESS, MEMORY_POOLS_SUPPORTED,
                 MEMORY_POOL_HANDLE_TYPES):
        assert type(gpu.getDeviceAttribute(attr, d)) is int


@pytest.mark.skipif(not HOST, reason="the simulated device's attributes (host backend)")
def test_device_attribute_of_the_simulated_device():
    for device in range(gpu.getDeviceCount()):
        values = {a: gpu.getDeviceAttribute(a, device) for a in
                  (INTEGRATED, PAGEABLE_MEMORY_ACCESS, CONCURRENT_MANAGED_ACCESS,
                   MEMORY_POOLS_SUPPORTED, MEMORY_POOL_HANDLE_TYPES)}
        assert values == {INTEGRATED: 0, PAGEABLE_MEMORY_ACCESS: 0,
                          CONCURRENT_MANAGED_ACCESS: 1, MEMORY_POOLS_SUPPORTED: 1,
                          MEMORY_POOL_HANDLE_TYPES: 1}  # POSIX file descriptors
    assert gpu.getDeviceAttribute(75, 0) == 9  # compute capability 9.0
    assert gpu.getDeviceAttribute(13, 0) == 0  # an attribute not simulated


def test_device_attribute_takes_cuda_bindings_enum():
    runtime = pytest.importorskip("cuda.bindings.runtime")
    attr = runtime.cudaDeviceAttr.cudaDevAttrWarpSize
    assert gpu.getDeviceAttribute(attr, gpu.getDevice()) == 32


def test_device_attribute_errors():
    with pytest.raises(gpu.CUDARuntimeError, match="cudaErrorInvalidDevice") as e:
        gpu.getDeviceAttribute(WARP_SIZE, 4096)
    assert e.value.status == 101  # cudaErrorInvalidDevice
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(gpu.CUDARuntimeError, match="cudaErrorInvalidValue") as e:
        gpu.getDeviceAttribute(0, gpu.getDevice())
    assert e.value.status == 1  # cudaErrorInvalidValue
    with pytest.raises(TypeError, match="attr"):
        gpu.getDeviceAttribute("cudaDevAttrWarpSize", 0)
    with pytest.raises(TypeError, match="device"):
        gpu.getDeviceAttribute(WARP_SIZE, None)
