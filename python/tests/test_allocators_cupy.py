"""CuPy allocating through rmmh (GPU only; skipped without CuPy): RMM's rmm_cupy_allocator and the
C fast path (CFunctionAllocator), their streams, out of memory, a resource replaced while CuPy
holds its blocks, and two GPUs."""
import gc
import warnings
import weakref

import numpy as np
import pytest

import rmmh as rmm
import rmmh.allocators as allocators
from conftest import requires_gpu, requires_two_gpus

pytestmark = requires_gpu


@pytest.fixture
def cupy():
    cupy = pytest.importorskip("cupy")
    yield cupy
    cupy.cuda.set_allocator(cupy.get_default_memory_pool().malloc)
    cupy.cuda.Device().synchronize()
    gc.collect()


@pytest.fixture
def rc(cupy):
    import rmmh.allocators.cupy as rc
    return rc


def recording_resource(events):
    """A pool behind a CallbackMemoryResource that records (bytes, stream handle)."""
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "64MiB")

    def alloc(n, stream):
        events.append((n, stream.handle))
        return pool.allocate(n, stream)

    return rmm.mr.CallbackMemoryResource(alloc, lambda p, n, s: pool.deallocate(p, n, s))


@pytest.mark.parametrize("which", ["rmm_cupy_allocator", "rmm_cupy_fast_allocator"])
def test_cupy_computes_in_rmmh_memory(cupy, rc, which):
    stats = rmm.mr.StatisticsResourceAdaptor(
        rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "64MiB"))
    rmm.mr.set_current_device_resource(stats)
    cupy.cuda.set_allocator(getattr(rc, which))
    h = np.random.default_rng(1).random((300, 200))
    x = cupy.asarray(h)
    assert stats.allocation_counts.current_bytes >= h.nbytes
    y = x @ x.T
    np.testing.assert_allclose(y.get(), h @ h.T, rtol=1e-10)
    if which == "rmm_cupy_fast_allocator":
        size, device, stream = allocators.lookup(x.data.ptr)
        assert size >= h.nbytes and device == 0 and stream == 0
        print("fast path raises from C:", rc.FAST_PATH_RAISES)
    held = stats.allocation_counts.current_bytes
    del x, y
    cupy.cuda.Device().synchronize()
    assert stats.allocation_counts.current_bytes <= held - h.nbytes - 300 * 300 * 8


def test_rmm_cupy_allocator_uses_cupys_current_stream(cupy, rc):
    events = []
    rmm.mr.set_current_device_resource(recording_resource(events))
    cupy.cuda.set_allocator(rc.rmm_cupy_allocator)
    s = cupy.cuda.Stream(non_blocking=True)
    a = cupy.ones(1000)
    with s:
        b = cupy.ones(2000)
        b += 1
    s.synchronize()
    assert (8000, 0) in events and (16000, s.ptr) in events
    assert float(b.sum()) == 4000.0 and float(a.sum()) == 1000.0


def test_fast_path_streams(cupy, rc):
    cupy.cuda.set_allocator(rc.rmm_cupy_fast_allocator)
    s = cupy.cuda.Stream(non_blocking=True)
    a = cupy.ones(1000)
    with rc.using_stream(s):
        assert cupy.cuda.get_current_stream() == s
        b = cupy.ones(3000)
        b *= 2
    s.synchronize()
    assert allocators.lookup(a.data.ptr)[2] == 0
    assert allocators.lookup(b.data.ptr)[2] == s.ptr
    assert float(b.sum()) == 6000.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # CuPy 14 deprecates ExternalStream: the wrapping must not warn
        with rc.using_stream(rmm.Stream()) as rs:  # an rmmh stream works too
            assert cupy.cuda.get_current_stream().ptr == rs.handle
            c = cupy.zeros(10)
    assert allocators.lookup(c.data.ptr)[2] == rs.handle


@pytest.mark.parametrize("which", ["rmm_cupy_allocator", "rmm_cupy_fast_allocator"])
def test_out_of_memory(cupy, rc, which):
    rmm.mr.set_current_device_resource(rmm.mr.LimitingResourceAdaptor(
        rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "16MiB"), "16MiB"))
    cupy.cuda.set_allocator(getattr(rc, which))
    with pytest.raises(MemoryError) as info:
        cupy.empty(1 << 30, dtype=cupy.uint8)
    assert isinstance(info.value, rmm.OutOfMemoryError)
    if which == "rmm_cupy_fast_allocator":
        assert isinstance(info.value, cupy.cuda.memory.OutOfMemoryError)
        assert "1073741824" in str(info.value)
    ok = cupy.ones(100)  # still works
    assert float(ok.sum()) == 100.0


def test_resource_replaced_while_cupy_holds_blocks(cupy, rc):
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "16MiB")
    rmm.mr.set_current_device_resource(pool)
    cupy.cuda.set_allocator(rc.rmm_cupy_fast_allocator)
    a = cupy.arange(1 << 16, dtype=cupy.float32)
    ref = weakref.ref(pool)
    del pool
    rmm.reinitialize(pool_allocator=True, initial_pool_size="16MiB")
    b = cupy.arange(1 << 16, dtype=cupy.float32)  # from the new pool
    gc.collect()
    assert ref() is not None and ref().info().used_bytes >= 1 << 18
    assert float((a - b).sum()) == 0.0
    del a
    cupy.cuda.Device().synchronize()
    gc.collect()
    assert ref() is None
    del b


@requires_two_gpus
@pytest.mark.parametrize("which", ["rmm_cupy_allocator", "rmm_cupy_fast_allocator"])
def test_two_gpus(cupy, rc, which):
    rmm.reinitialize(pool_allocator=True, initial_pool_size="64MiB", devices=[0, 1])
    p0, p1 = rmm.mr.get_per_device_resource(0), rmm.mr.get_per_device_resource(1)
    cupy.cuda.set_allocator(getattr(rc, which))
    with cupy.cuda.Device(1):
        a = cupy.arange(1000, dtype=cupy.float64)
        assert a.device.id == 1
    b = cupy.arange(1000, dtype=cupy.float64)
    assert p1.info().used_bytes >= 8000 and p0.info().used_bytes >= 8000
    assert float((cupy.asarray(a) - b).sum()) == 0.0  # copied from device 1 to 0
    del a  # freed with device 0 current
    cupy.cuda.Device(1).synchronize()
    gc.collect()
    assert p1.info().used_bytes == 0
    assert cupy.cuda.runtime.getDevice() == 0
