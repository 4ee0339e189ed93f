"""Lifetimes: a buffer keeps its resource and stream alive, an adaptor its upstream, the
per-device table what is set; C objects are destroyed in dependency order even when the garbage
collector finalizes a reference cycle in another order (intent of RMM's lifetime tests, and
more). A wrong order would crash the interpreter, so passing means no crash."""
import gc
import random
import threading

import numpy as np
import pytest

import rmmh as rmm
from conftest import requires_two_devices


def test_mr_outlives_buffer_after_being_replaced():
    rmm.mr.set_current_device_resource(
        rmm.mr.PoolMemoryResource(rmm.mr.get_current_device_resource(), 1 << 20))
    stream = rmm.Stream()
    a = rmm.DeviceBuffer(size=10, stream=stream)
    rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())
    del stream
    gc.collect()
    assert a.mr.pool_size() == 1 << 20  # still usable
    del a


def test_upstream_outlives_adaptor():
    cuda = rmm.mr.CudaMemoryResource()
    pool = rmm.mr.PoolMemoryResource(cuda, 1 << 20)
    stats = rmm.mr.StatisticsResourceAdaptor(pool)
    del cuda, pool
    gc.collect()
    p = stats.allocate(100)
    stats.deallocate(p, 100)
    del stats


def test_buffer_in_a_cycle():
    rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())
    buf = rmm.DeviceBuffer(size=1_000_000)
    cycle = [buf]
    cycle.append(cycle)
    del buf, cycle
    rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())
    gc.collect()


def test_adaptor_in_a_cycle():
    rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())
    mr = rmm.mr.PoolMemoryResource(rmm.mr.get_current_device_resource(), 1 << 20)
    cycle = [mr]
    cycle.append(cycle)
    del mr, cycle
    rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())
    gc.collect()


class Holder:
    """A cycle member with a finalizer of its own, so the collector runs finalizers in the cycle."""

    def __init__(self, *things):
        self.things = list(things)
        self.me = self

    def __del__(self):
        pass


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("seed", range(20))
def test_cycles_of_resources_buffers_and_streams(seed):
    """Random chains of adaptors, buffers and streams in one garbage cycle: whatever order the
    collector finalizes them in, each C object goes after its users, and the Python callbacks a
    C resource calls (with what they use, the `up` of the lambdas) live as long as it does."""
    rng = random.Random(seed)
    base = rmm.mr.CudaMemoryResource()
    chain = [base]
    makers = [
        lambda up: rmm.mr.PoolMemoryResource(up, 0),
        lambda up: rmm.mr.StatisticsResourceAdaptor(up),
        lambda up: rmm.mr.TrackingResourceAdaptor(up),
        lambda up: rmm.mr.LimitingResourceAdaptor(up, 1 << 30),
        lambda up: rmm.mr.BinningMemoryResource(up, 8, 12),
        lambda up: rmm.mr.FixedSizeMemoryResource(up, 1 << 16, 2),
        lambda up: rmm.mr.CallbackMemoryResource(lambda n, s: up.allocate(n, s),
                                                 lambda p, n, s: up.deallocate(p, n, s)),
    ]
    for _ in range(rng.randrange(1, 5)):
        try:
            chain.append(rng.choice(makers)(chain[-1]))
        except MemoryError:  # e.g. a fixed-size resource over a smaller fixed-size one
            pass
    streams = [rmm.Stream() for _ in range(rng.randrange(0, 3))]
    bufs = []
    for _ in range(rng.randrange(1, 20)):
        mr = rng.choice(chain)
        s = rng.choice(streams) if streams and rng.random() < 0.5 else rmm.DEFAULT_STREAM
        try:
            bufs.append(rmm.DeviceBuffer(size=rng.randrange(1, 4000), mr=mr, stream=s))
        except MemoryError:  # e.g. binning bins over a fixed-size upstream of smaller blocks
            pass
    objects = chain + streams + bufs
    rng.shuffle(objects)
    Holder(*objects)
    del objects, chain, streams, bufs, mr, s, base
    gc.collect()


def test_stream_outlives_buffers():
    s = rmm.Stream()
    bufs = [rmm.DeviceBuffer(size=100, stream=s) for _ in range(3)]
    owner = s._owner
    del s
    gc.collect()
    assert bufs[0].stream._owner is owner
    del bufs


def test_callback_resource_lives_while_its_blocks_do():
    base = rmm.mr.CudaMemoryResource()
    mr = rmm.mr.CallbackMemoryResource(lambda n, s: base.allocate(n, s),
                                       lambda p, n, s: base.deallocate(p, n, s))
    buf = rmm.DeviceBuffer(size=100, mr=mr)
    Holder(mr)
    del mr  # (base stays: the callbacks' closures read it)
    gc.collect()
    del buf


def test_resource_destroyed_once_unused():
    """The C resource goes with its last user, not before and not never."""
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    record = pool._refs[0]
    destroyed = []
    real = record.destroy
    record.destroy = lambda *a: (destroyed.append(1), real(*a))
    buf = rmm.DeviceBuffer(size=10, mr=pool)
    del pool
    gc.collect()
    assert destroyed == []
    del buf
    assert destroyed == [1]


def test_set_current_keeps_alive_until_replaced():
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    record = pool._refs[0]
    destroyed = []
    real = record.destroy
    record.destroy = lambda *a: (destroyed.append(1), real(*a))
    rmm.mr.set_current_device_resource(pool)
    del pool
    gc.collect()
    assert destroyed == []
    b = rmm.DeviceBuffer(size=10)
    rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())
    assert destroyed == []
    del b
    assert destroyed == [1]


def test_threads_share_a_pool():
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 22)
    rmm.mr.set_current_device_resource(pool)
    errors = []

    def work(seed):
        try:
            rng = random.Random(seed)
            s = rmm.Stream()
            live = []
            for _ in range(500):
                if live and rng.random() < 0.5:
                    live.pop(rng.randrange(len(live)))
                else:
                    data = bytes([seed]) * rng.randrange(1, 3000)
                    live.append((rmm.DeviceBuffer.to_device(data, stream=s), data))
            s.synchronize()
            for buf, data in live:
                assert buf.tobytes() == data
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    pool.validate()
    assert pool.info().used_bytes == 0


@requires_two_devices
def test_buffer_freed_on_its_device():
    from rmmh._cuda import gpu
    gpu.setDevice(1)
    try:
        pool1 = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
        rmm.mr.set_per_device_resource(1, pool1)
        b = rmm.DeviceBuffer(size=100)
        assert b.mr is pool1
    finally:
        gpu.setDevice(0)
    assert rmm.DeviceBuffer(size=10).mr is not pool1
    del b  # freed with device 1 made current for the call, then device 0 again
    assert gpu.getDevice() == 0
    pool1.validate()
    assert pool1.info().used_bytes == 0


def test_single_device_fast_path():
    """With one device, buffers skip reading the device (forced here on the host backend)."""
    import rmmh._device_buffer as m
    saved = m._ndev
    m._ndev = 1
    try:
        b = rmm.DeviceBuffer.to_device(np.arange(10, dtype="u1"))
        assert b.tobytes() == bytes(range(10))
        del b
    finally:
        m._ndev = saved


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_no_c_object_outlives_its_holders():
    """After resources, adaptors, streams and buffers die (in cycles too), every C object they
    made is destroyed: the registry of live ones is back to where it started."""
    from rmmh import _lifetime
    gc.collect()
    before = len(_lifetime._live)
    for _ in range(3):
        base = rmm.mr.CudaMemoryResource()
        pool = rmm.mr.PoolMemoryResource(base, 1 << 20)
        cb = rmm.mr.CallbackMemoryResource(lambda n, s, up=pool: up.allocate(n, s),
                                           lambda p, n, s, up=pool: up.deallocate(p, n, s))
        stats = rmm.mr.StatisticsResourceAdaptor(cb)
        s = rmm.Stream()
        bufs = [rmm.DeviceBuffer(size=100, mr=m, stream=s) for m in (base, pool, cb, stats)]
        Holder(stats, bufs[0])
        del base, pool, cb, stats, s, bufs
        gc.collect()
    assert len(_lifetime._live) == before
