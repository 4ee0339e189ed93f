"""CuPy, Numba and PyTorch beside rmmh in one process (GPU only): their arrays read rmmh memory
through the CUDA array interface, their streams are accepted as rmmh streams, and rmmh copies
from their arrays. Each test skips when its framework is missing."""
import numpy as np
import pytest

import rmmh as rmm
from conftest import requires_gpu

pytestmark = requires_gpu


def test_cupy_reads_and_writes_a_device_buffer():
    cupy = pytest.importorskip("cupy")
    buf = rmm.DeviceBuffer.to_device(np.arange(16, dtype="u1"))
    view = cupy.asarray(buf)  # no copy: CUDA array interface v3
    assert view.data.ptr == buf.ptr and view.size == 16
    view += 1
    cupy.cuda.Device().synchronize()
    assert buf.tobytes() == bytes(range(1, 17))


def test_cupy_stream_and_copy_from_device():
    cupy = pytest.importorskip("cupy")
    s = cupy.cuda.Stream(non_blocking=True)
    rs = rmm.Stream(s)
    assert rs.handle == s.ptr
    with s:
        src = cupy.arange(8, dtype=cupy.int32)
    buf = rmm.DeviceBuffer(size=32, stream=s)  # a CuPy stream where a Stream is expected
    buf.copy_from_device(src, stream=rs)
    rs.synchronize()
    assert np.frombuffer(buf.tobytes(), np.int32).tolist() == list(range(8))
    pool = cupy.cuda.MemoryPool()  # CuPy's own pool works beside rmmh's
    p = pool.malloc(1 << 20)
    del p


def test_numba_stream_and_array():
    cuda = pytest.importorskip("numba.cuda")
    s = cuda.stream()
    rs = rmm.Stream(s)
    assert rs.handle == int(s.handle.value if hasattr(s.handle, "value") else s.handle)
    d = cuda.to_device(np.array([97, 98, 99], dtype="u1"))
    buf = rmm.DeviceBuffer.to_device(np.zeros(10, dtype="u1"))
    buf.copy_from_device(d)
    assert buf.tobytes()[:3] == b"abc"
    arr = cuda.as_cuda_array(buf)
    assert arr.copy_to_host().tobytes() == buf.tobytes()
    rmm.DeviceBuffer(size=3, stream=rmm.Stream(cuda.default_stream()))


def test_torch_tensor_over_a_device_buffer():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    buf = rmm.DeviceBuffer.to_device(np.arange(8, dtype="u1"))
    t = torch.as_tensor(buf, device="cuda")
    assert t.data_ptr() == buf.ptr
    t.add_(1)
    torch.cuda.synchronize()
    assert buf.tobytes() == bytes(range(1, 9))
    s = torch.cuda.Stream()
    assert rmm.Stream(s).handle == s.cuda_stream
    src = torch.arange(4, dtype=torch.int32, device="cuda")
    out = rmm.DeviceBuffer(size=16)
    out.copy_from_device(src)
    assert np.frombuffer(out.tobytes(), np.int32).tolist() == [0, 1, 2, 3]


def test_streams_order_work_on_the_gpu():
    """Many buffers filled on several streams and read back: the pool's stream-ordered reuse
    never hands a block to another stream before its work is done."""
    cupy = pytest.importorskip("cupy")
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "64MiB")
    rmm.mr.set_current_device_resource(pool)
    streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(4)]
    results = []
    for i in range(200):
        s = streams[i % 4]
        buf = rmm.DeviceBuffer(size=1 << 16, stream=s)
        with s:
            cupy.asarray(buf).fill(i % 251)
        results.append((buf, i % 251, s))
        if i % 3 == 0:
            results.pop(0)  # freed on its stream while others are in flight
    for buf, v, s in results:
        s.synchronize()
        assert set(buf.tobytes()) == {v}
