"""Two devices: per-device resources, reinitialize(devices=[0, 1]), buffers made, resized and
freed with the other device current. Runs wherever there are two devices: on the host backend
(which simulates two) and on a machine with two GPUs; skipped with one GPU. The frameworks' C
hooks on two devices are in test_hooks.py (test_hooks_on_two_devices)."""
import numpy as np

import rmmh as rmm
from rmmh._cuda import gpu
from conftest import requires_two_devices

pytestmark = requires_two_devices


def on_device(device, fn, *args, **kwargs):
    previous = gpu.getDevice()
    gpu.setDevice(device)
    try:
        return fn(*args, **kwargs)
    finally:
        gpu.setDevice(previous)


def test_reinitialize_sets_a_pool_per_device():
    rmm.reinitialize(pool_allocator=True, initial_pool_size="4MiB", devices=[0, 1])
    p0, p1 = rmm.mr.get_per_device_resource(0), rmm.mr.get_per_device_resource(1)
    assert isinstance(p0, rmm.mr.PoolMemoryResource) and isinstance(p1, rmm.mr.PoolMemoryResource)
    assert p0 is not p1 and p0.pool_size() == p1.pool_size() == 4 << 20
    assert gpu.getDevice() == 0
    b0 = rmm.DeviceBuffer.to_device(np.arange(100, dtype="u1"))
    b1 = on_device(1, rmm.DeviceBuffer.to_device, np.arange(100, 200, dtype="u1"))
    assert b0.mr is p0 and b1.mr is p1
    assert p0.info().used_bytes == p1.info().used_bytes == 256
    assert b1.tobytes() == bytes(range(100, 200))  # read with device 0 current
    del b1  # freed with device 0 current: back into device 1's pool
    assert p1.info().used_bytes == 0 and p0.info().used_bytes == 256
    assert gpu.getDevice() == 0
    rmm.reinitialize(devices=[1])
    assert type(rmm.mr.get_per_device_resource(0)) is rmm.mr.CudaMemoryResource


def test_buffer_resized_and_copied_with_the_other_device_current():
    seen = []

    def make(device):
        pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)

        def alloc(n, stream):
            seen.append(("alloc", device, gpu.getDevice()))
            return pool.allocate(n, stream)

        def free(p, n, stream):
            seen.append(("free", device, gpu.getDevice()))
            pool.deallocate(p, n, stream)

        return rmm.mr.CallbackMemoryResource(alloc, free)

    rmm.mr.set_per_device_resource(0, make(0))
    rmm.mr.set_per_device_resource(1, on_device(1, make, 1))
    buf = on_device(1, rmm.DeviceBuffer.to_device, b"abcdef")
    buf.resize(5000)  # device 0 current: the new block is made and the old freed on device 1
    assert buf.tobytes()[:6] == b"abcdef" and buf.size == 5000
    buf.shrink_to_fit()
    buf.reserve(9000)
    del buf
    assert all(dev == cur for _, dev, cur in seen), seen
    assert [e for e, d, _ in seen if d == 1].count("alloc") == 3
    assert gpu.getDevice() == 0


def test_streams_and_buffers_per_device():
    rmm.reinitialize(pool_allocator=True, initial_pool_size=0, devices=[0, 1])
    s1 = on_device(1, rmm.Stream)
    bufs = [on_device(1, rmm.DeviceBuffer, size=1000 + i, stream=s1) for i in range(10)]
    bufs += [rmm.DeviceBuffer(size=500 + i) for i in range(10)]
    p0, p1 = rmm.mr.get_per_device_resource(0), rmm.mr.get_per_device_resource(1)
    assert p1.info().used_bytes > 0 and p0.info().used_bytes > 0
    s1.synchronize()
    del bufs
    assert p0.info().used_bytes == p1.info().used_bytes == 0
    p0.validate()
    p1.validate()


def test_copy_uses_the_buffers_device():
    """copy() allocates from the buffer's resource with the buffer's device current (as resize
    does), and the copy belongs to that device (red team 17: the resource of device 1 was called
    with device 0 current)."""
    seen = []
    base = rmm.mr.CudaMemoryResource()

    def alloc(n, s):
        seen.append(("alloc", gpu.getDevice()))
        return base.allocate(n)

    def free(p, n, s):
        seen.append(("free", gpu.getDevice()))
        base.deallocate(p, n)

    mr1 = on_device(1, rmm.mr.CallbackMemoryResource, alloc, free)
    rmm.mr.set_per_device_resource(1, mr1)
    try:
        b = on_device(1, rmm.DeviceBuffer.to_device, b"on device 1")
        assert gpu.getDevice() == 0
        c = b.copy()
        assert c.mr is mr1 and c._dev == b._dev == 1
        assert c.tobytes() == b"on device 1" and gpu.getDevice() == 0
        del b, c
        assert seen and all(d == 1 for _, d in seen), seen
    finally:
        rmm.mr.set_per_device_resource(1, rmm.mr.CudaMemoryResource())
