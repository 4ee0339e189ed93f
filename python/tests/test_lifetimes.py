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
from conftest import requires_two_devices, start_child, wait_child


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
    C resource calls (with what they use, the `up` of the lambdas) live as long as it does; and
    every C object goes with the cycle."""
    from rmmh import _lifetime
    rng = random.Random(seed)
    gc.collect()
    live = len(_lifetime._live)
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
    gc.collect()
    assert len(_lifetime._live) == live  # every C object went (and so its memory)


class _SelfAllocator:
    """A user resource whose callbacks are its own bound methods, with buffers of its own and a
    pool over it."""

    def __init__(self, base):
        self.base = base
        self.mr = rmm.mr.CallbackMemoryResource(self.alloc, self.free)
        self.scratch = rmm.DeviceBuffer(size=1 << 20, mr=self.mr)
        self.pool = rmm.mr.PoolMemoryResource(self.mr, 1 << 20)  # (its destruction calls self.free)
        self.pooled = rmm.DeviceBuffer(size=1000, mr=self.pool)

    def alloc(self, nbytes, stream):
        return self.base.allocate(nbytes, stream)

    def free(self, ptr, nbytes, stream):
        self.base.deallocate(ptr, nbytes, stream)


class _Spiller:
    """A pool behind a failure callback that is a bound method of the pool's owner."""

    def __init__(self, base):
        self.pool = rmm.mr.PoolMemoryResource(base, 1 << 20)
        self.mr = rmm.mr.FailureCallbackResourceAdaptor(self.pool, self.on_oom)
        self.kept = rmm.DeviceBuffer(size=1000, mr=self.mr)

    def on_oom(self, nbytes):
        return False


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("owner", [_SelfAllocator, _Spiller])
def test_callbacks_that_refer_to_their_owner_are_collected(owner):
    """A callback resource (or failure-callback adaptor) whose callables are bound methods of the
    object that holds it makes a cycle: the collector frees it, with the owner's buffers, the C
    resources and their memory (red team 24: the callables were rooted, and nothing was ever
    freed). Two collections: the first frees the buffers and lets the cycle's owner go, the
    second what the callables kept."""
    from rmmh import _lifetime
    import weakref
    gc.collect()
    base = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    live = len(_lifetime._live)
    refs = []
    for _ in range(5):
        o = owner(base)
        refs.append(weakref.ref(o.mr))
        del o
    gc.collect()
    gc.collect()
    assert all(r() is None for r in refs)
    assert base.allocation_counts.current_bytes == 0 and base.allocation_counts.current_count == 0
    assert len(_lifetime._live) == live


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("path", ["class attribute", "function attribute"])
def test_what_callbacks_reach_by_any_path_outlives_them(path):
    """A callback resource with a pool over it, in a cycle, whose callables reach their upstream
    only through a class attribute (of a class that is garbage too) or a function attribute: the
    pool's chunk goes back through the callbacks before that upstream goes (the review of the
    change above found it let go first: "already destroyed" in the callback, 1 MiB lost)."""
    base = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())

    def make():
        up = rmm.mr.StatisticsResourceAdaptor(base)
        if path == "class attribute":
            class Owner:
                upstream = up

                def __init__(self):
                    self.mr = rmm.mr.CallbackMemoryResource(self.alloc, self.free)
                    self.pool = rmm.mr.PoolMemoryResource(self.mr, 1 << 20)

                def alloc(self, n, s):
                    return type(self).upstream.allocate(n, s)

                def free(self, p, n, s):
                    type(self).upstream.deallocate(p, n, s)
            Owner()
        else:
            def alloc(n, s):
                return alloc.upstream.allocate(n, s)

            def free(p, n, s):
                alloc.upstream.deallocate(p, n, s)
            alloc.upstream = up
            alloc.mr = rmm.mr.CallbackMemoryResource(alloc, free)
            alloc.pool = rmm.mr.PoolMemoryResource(alloc.mr, 1 << 20)

    make()
    gc.collect()
    gc.collect()
    assert base.allocation_counts.current_bytes == 0


def test_stream_outlives_buffers():
    s = rmm.Stream()
    bufs = [rmm.DeviceBuffer(size=100, stream=s) for _ in range(3)]
    owner = s._owner
    del s
    gc.collect()
    assert bufs[0].stream._owner is owner
    del bufs


def test_a_buffer_s_old_stream_is_let_go_after_the_new_one_is_stored():
    # red team 45: the C extension let the old Stream go before it stored the new one, so code
    # that ran while the old one was torn down (its __del__s, another thread, the collector) read
    # buf.stream and got the dying object: a use after free (a segfault with PYTHONMALLOC=debug).
    # Now (as the ctypes path's slot) that code sees the new stream.
    seen = []

    class Spy:
        def __del__(self):
            seen.append(buf.stream)

    class MyStream(rmm.Stream):
        pass

    s = MyStream()
    s.spy = Spy()
    buf = rmm.DeviceBuffer(size=0, stream=s)
    del s
    buf.resize(0)  # empty: the buffer takes the default stream, and the old one goes
    assert len(seen) == 1
    assert seen[0] is buf.stream
    assert seen[0] is rmm.DEFAULT_STREAM
    seen.clear()


@pytest.mark.parametrize("foreign", [False, True])
def test_a_buffer_changed_while_its_init_allocates_gives_the_block_back(foreign):
    # review 45: __init__ took the block's stream hold on the stream it was given, but the block
    # landed in a buffer that a resize (here from the resource's allocate; in programs, another
    # thread while the allocation let the GIL go) had given another stream: one stream kept a hold
    # for good, the other lost one it never gave. The C extension also went on using the first
    # stream, whose last reference the resize had dropped (a foreign stream's wrapper: a use after
    # free). Now the block goes back and __init__ raises; every hold is where it was.
    import ctypes

    up = rmm.mr.get_current_device_resource()
    state = {}

    def alloc(n, s):
        b = state.pop("b", None)
        if b is not None:
            b.resize(0, stream=state["s2"])
        return up.allocate(n)

    def dealloc(p, n, s):
        up.deallocate(p, n)

    class Foreign:  # a CuPy- or Numba-like stream: as_stream wraps it in a Stream of its own
        def __cuda_stream__(self):
            return (0, 0)

    mr = rmm.mr.CallbackMemoryResource(alloc, dealloc)
    s1, s2 = rmm.Stream(), rmm.Stream()
    n1, n2, nmr = len(s1._refs), len(s2._refs), len(mr._refs)
    src = (ctypes.c_char * 64).from_buffer(bytearray(b"x" * 64))
    buf = rmm.DeviceBuffer.__new__(rmm.DeviceBuffer)
    state["b"], state["s2"] = buf, s2
    with pytest.raises(RuntimeError, match="changed while its __init__ allocated"):
        buf.__init__(ptr=ctypes.addressof(src), size=64, stream=Foreign() if foreign else s1, mr=mr)
    assert buf.stream is s2 and buf.size == 0 and buf.ptr == 0
    assert (len(s1._refs), len(s2._refs), len(mr._refs)) == (n1, n2, nmr)
    buf.resize(64, stream=s2)  # the buffer works on
    assert buf.size == 64 and buf.stream is s2
    del buf
    gc.collect()
    assert (len(s1._refs), len(s2._refs), len(mr._refs)) == (n1, n2, nmr)
    s2.synchronize()


def test_a_second_init_inside_the_first_is_refused():
    # review 45: the "called once" check came before the Python code __init__ runs (as_stream, the
    # per-device resource) and the stores after it: a second __init__ in between (a stream's
    # __cuda_stream__ here; two threads initializing a buffer made by __new__) was overwritten, its
    # block and its holds on the resource never let go.
    mr = rmm.mr.get_current_device_resource()
    buf = rmm.DeviceBuffer.__new__(rmm.DeviceBuffer)

    class Foreign:
        calls = 0

        def __cuda_stream__(self):
            Foreign.calls += 1
            if Foreign.calls == 1:
                buf.__init__(size=1 << 20, mr=mr)
            return (0, 0)

    import sys

    rc0, holds0 = sys.getrefcount(mr), len(mr._refs)
    with pytest.raises(TypeError, match="may be called once"):
        buf.__init__(size=1 << 20, stream=Foreign(), mr=mr)
    assert buf.size == 1 << 20  # the inner call's block
    del buf
    gc.collect()
    assert (sys.getrefcount(mr), len(mr._refs)) == (rc0, holds0)


def test_init_holds_its_keyword_values_while_it_runs_python_code():
    # red team 46: the C __init__ read its keyword values from the caller's dict as borrowed
    # references, and a C caller may pass its own dict (operator.methodcaller does): a size whose
    # __index__ dropped the dict's entries freed the resource under __init__, which then read freed
    # memory (a crash). The Python __init__ binds its arguments to locals: safe on both paths now.
    import operator

    ran = []

    class Size:
        def __index__(self):
            kw = [x for x in gc.get_referents(call) if type(x) is dict][0]
            kw.clear()  # the resource's last reference goes
            gc.collect()
            [str(i) * 3 for i in range(10000)]  # the freed memory reused
            ran.append(True)
            return 16

    call = operator.methodcaller(
        "__init__", size=Size(), mr=rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20))
    buf = rmm.DeviceBuffer.__new__(rmm.DeviceBuffer)
    call(buf)
    assert ran and buf.size == 16
    assert isinstance(buf.mr, rmm.mr.PoolMemoryResource)
    buf.copy_from_host(np.arange(16, dtype=np.uint8))
    assert bytes(buf.copy_to_host()) == bytes(range(16))
    del buf, call
    gc.collect()


@pytest.mark.parametrize("call", ["resize", "reserve"])
def test_a_stream_destroyed_while_a_resize_runs_python_code_is_refused(call):
    # red team 46: the stream was checked before new_size's __index__ ran; a finalizer called by
    # hand there destroyed its C stream, and the buffer took it all the same (a hold appended to
    # its empty refs, so it no longer read as destroyed): its free later failed on the dead
    # handle, and the block was lost.
    stats = rmm.mr.StatisticsResourceAdaptor(
        rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), initial_pool_size=1 << 20))
    buf = rmm.DeviceBuffer(size=64, mr=stats)
    s = rmm.Stream()

    class Size:
        def __index__(self):
            s.__del__()
            s._owner.__del__()
            return 32

    with pytest.raises(Exception, match="already destroyed"):
        getattr(buf, call)(Size(), stream=s)
    assert buf.stream is not s and buf.size == 64
    with pytest.raises(Exception, match="already destroyed"):
        rmm.DeviceBuffer(size=8, stream=s, mr=stats)  # the stream still reads as destroyed
    del buf
    gc.collect()
    assert stats.allocation_counts.current_bytes == 0  # the block was freed


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


# ---- found by the red team of 2026-11-28: each crashed or misbehaved before its fix ----------

def test_a_free_the_collector_makes_inside_a_pools_upstream_is_made_after():
    """A pool calls its upstream with its lock held; Python's collector running inside a Python
    upstream (CallbackMemoryResource) frees a buffer of that pool, which the pool refuses (no
    re-entry from below). The free is deferred, its holds kept, and made once the outer call is
    over (red team of 2026-11-29: every such block stayed allocated for good, and the chunk holding
    them could never be trimmed)."""
    from rmmh import _lifetime
    base = rmm.mr.CudaMemoryResource()
    seen = []

    def alloc(n, s):
        gc.collect()  # collects the cycle below, whose buffer is one of this pool's
        seen.append(len(_lifetime._deferred_frees))
        return base.allocate(n, s)

    cb = rmm.mr.CallbackMemoryResource(alloc, lambda p, n, s: base.deallocate(p, n, s))
    pool = rmm.mr.PoolMemoryResource(cb, 0, growth="on_demand")
    stream = rmm.Stream()

    class Node:
        pass
    for i in range(6):
        node = Node()
        node.buf = rmm.DeviceBuffer(size=1000, mr=pool, stream=stream if i % 2 else rmm.DEFAULT_STREAM)
        node.me = node
        del node
        big = rmm.DeviceBuffer(size=(4 << 20) * (i + 1), mr=pool)  # grows: the upstream runs
        del big
    assert max(seen) > 0  # frees were refused inside the upstream and deferred
    assert not _lifetime._deferred_frees  # and made after
    assert pool.info().used_bytes == 0
    pool.trim()
    assert pool.info().pool_bytes == 0


def test_deferred_frees_serve_a_failed_allocation_and_trim():
    """A free deferred inside a pool's Python upstream is made before a failed allocation is tried
    again (the memory it needs may be that block), and before trim (review of 2026-11-29: only a
    successful allocation made them, so an allocation that needed the block failed for good, and
    trim could not give its chunk back)."""
    from rmmh import _lifetime
    MiB = 1 << 20
    base = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 12 * MiB)

    def alloc(n, s):
        gc.collect()
        return base.allocate(n, s)
    pool = rmm.mr.PoolMemoryResource(
        rmm.mr.CallbackMemoryResource(alloc, lambda p, n, s: base.deallocate(p, n, s)), 0,
        growth="on_demand")

    class Node:
        pass
    node = Node()
    node.buf = rmm.DeviceBuffer(size=8 * MiB, mr=pool)
    node.me = node
    del node
    b = rmm.DeviceBuffer(size=8 * MiB, mr=pool)  # the growth is refused; the retry has the block
    assert not _lifetime._deferred_frees and pool.info().used_bytes == 8 * MiB
    del b
    assert pool.info().used_bytes == 0
    pool.trim()  # (empty: the next allocations grow)
    node = Node()
    node.buf = rmm.DeviceBuffer(size=1 * MiB, mr=pool)
    node.me = node
    del node
    pool.allocate(4 * MiB)  # grows: the collector frees node's buffer there (deferred); a leak
    assert len(_lifetime._deferred_frees) == 1
    pool.trim()
    assert not _lifetime._deferred_frees
    assert pool.info().used_bytes == 4 * MiB


def test_a_deferred_free_keeps_its_recorded_stream_until_it_is_made():
    """A buffer that recorded another stream (record_stream), collected inside a pool's Python
    upstream: its deferred free keeps that stream alive until the free is made (the free waits
    for it), then lets it go."""
    import weakref
    from rmmh import _lifetime
    base = rmm.mr.CudaMemoryResource()
    seen = []

    def alloc(n, s):
        gc.collect()
        if _lifetime._deferred_frees:
            seen.append(other_ref() is not None)  # deferred, and the recorded stream alive
        return base.allocate(n, s)
    pool = rmm.mr.PoolMemoryResource(
        rmm.mr.CallbackMemoryResource(alloc, lambda p, n, s: base.deallocate(p, n, s)), 0,
        growth="on_demand")
    real = rmm.Stream()

    class Foreign:  # a stream of another library (one rmmh made is not kept: red team 35)
        def __cuda_stream__(self):
            return (0, real.handle)
    other = Foreign()
    other_ref = weakref.ref(other)

    class Node:
        pass
    node = Node()
    node.buf = rmm.DeviceBuffer(size=1000, mr=pool)
    node.buf.record_stream(other)
    node.me = node
    del node, other
    big = rmm.DeviceBuffer(size=8 << 20, mr=pool)  # grows: the collector runs in the upstream
    del big
    assert seen == [True]
    assert not _lifetime._deferred_frees and pool.info().used_bytes == 0
    gc.collect()
    assert other_ref() is None  # let go once the free was made


def test_a_system_resource_used_by_threads_keeps_its_table_exact(monkeypatch):
    """SystemMemoryResource's table of live blocks under threads allocating and freeing at once:
    every free is accepted once, a second free of each is refused (CorruptionError). Host-side
    calls only: made on a GPU that cannot read pageable memory too."""
    from rmmh import _memory_resource as mrmod
    monkeypatch.setattr(mrmod, "_reads_pageable_memory", lambda device: True)
    mr = rmm.mr.SystemMemoryResource()
    errors = []

    def work(seed):
        rng = random.Random(seed)
        mine = []
        try:
            for _ in range(2000):
                if mine and rng.random() < 0.5:
                    p, n = mine.pop(rng.randrange(len(mine)))
                    mr.deallocate(p, n)
                else:
                    n = rng.randrange(1, 4096)
                    mine.append((mr.allocate(n), n))
            for p, n in mine:
                mr.deallocate(p, n)
        except Exception as e:  # (any error fails the test below)
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    p = mr.allocate(64)
    mr.deallocate(p, 64)
    with pytest.raises(rmm.CorruptionError):
        mr.deallocate(p, 64)


def test_buffer_finalized_by_hand_or_brought_back_is_empty():
    """A DeviceBuffer whose finalizer ran (called by hand, or a buffer in a collected cycle that
    another object's finalizer brings back) is empty, with the extension and with ctypes alone
    (red team 30: the ctypes fallback kept its size with a NULL pointer, so its array interface
    gave data 0 with shape (N,)); its memory was freed once."""
    mr = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    b = rmm.DeviceBuffer(size=5, mr=mr)
    b.copy_from_host(b"hello")
    assert mr.allocation_counts.current_bytes > 0
    b.__del__()
    assert (b.size, b.nbytes, b.ptr, b.capacity()) == (0, 0, 0, 0)
    assert b.__cuda_array_interface__["shape"] == (0,)
    assert b.tobytes() == b"" and b.copy().size == 0
    assert mr.allocation_counts.current_bytes == 0
    b.__del__()  # (again: nothing more to free)
    assert mr.allocation_counts.current_bytes == 0
    saved = []

    class Holder:
        def __del__(self):
            saved.append(self.buf)  # brings the buffer back

    h = Holder()
    h.buf = rmm.DeviceBuffer(size=6, mr=mr)
    h.me = h
    del h
    gc.collect()
    assert len(saved) == 1
    r = saved.pop()
    assert (r.size, r.nbytes, r.ptr) == (0, 0, 0)
    assert mr.allocation_counts.current_bytes == 0


def test_buffer_whose_init_failed_is_empty():
    """A DeviceBuffer whose __init__ failed to allocate (reached with __new__ and __init__, or by a
    subclass that catches the error) is empty, with the extension and with ctypes alone (review
    30: it kept size N with pointer 0)."""
    lim = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 1024)
    b = rmm.DeviceBuffer.__new__(rmm.DeviceBuffer)
    with pytest.raises(MemoryError):
        b.__init__(size=4096, mr=lim)
    assert (b.size, b.nbytes, b.ptr, b.capacity()) == (0, 0, 0, 0)
    assert b.__cuda_array_interface__["shape"] == (0,)
    assert lim.get_allocated_bytes() == 0

    class Tolerant(rmm.DeviceBuffer):
        def __init__(self, **kw):
            try:
                super().__init__(**kw)
            except MemoryError:
                pass

    t = Tolerant(size=4096, mr=lim)
    assert (t.size, t.ptr) == (0, 0)
    assert t.tobytes() == b""


def test_cupy_module_without_cupy():
    """rmmh.allocators.cupy imports without CuPy, as RMM's does: a star import works, hasattr is
    False for the two names made from CuPy's classes, and the allocators raise
    ModuleNotFoundError when called (red team 30: the module's __getattr__ raised
    ModuleNotFoundError for names in __all__)."""
    code = """
import sys
sys.modules["cupy"] = None  # import cupy: ImportError
import rmmh.allocators.cupy as c
ns = {}
exec("from rmmh.allocators.cupy import *", ns)
assert "rmm_cupy_allocator" in ns and "OutOfMemoryError" not in ns, sorted(ns)
assert not hasattr(c, "OutOfMemoryError") and not hasattr(c, "rmm_cupy_fast_allocator")
try:
    c.rmm_cupy_allocator(8)
except ModuleNotFoundError:
    pass
else:
    raise AssertionError("rmm_cupy_allocator without CuPy did not raise")
print("ok")
"""
    assert _child_ok(code).strip().endswith("ok")


def test_finalizer_called_again_by_hand_drops_no_other_hold():
    """A resource's, a stream's and a stream pool's __del__ called again by hand lets go of the
    object's own hold once only (red team of 2026-11-29: the second mr.__del__() popped the hold
    of a buffer, the C pool was destroyed under it, and the buffer's free used freed memory)."""
    code = """
import gc, rmmh as rmm
pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
b = rmm.DeviceBuffer(size=100, mr=pool)
pool.__del__(); pool.__del__(); pool.__del__()
assert pool.pool_size() == 1 << 20  # still alive: b holds it
del b
up = rmm.mr.CudaMemoryResource()
pool2 = rmm.mr.PoolMemoryResource(up, 1 << 20)
up.__del__(); up.__del__()
c = rmm.DeviceBuffer(size=1 << 21, mr=pool2)  # growth: the upstream is alive
del c, pool2
gc.collect()
s = rmm.Stream()
mr2 = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
b2 = rmm.DeviceBuffer(size=100, stream=s, mr=mr2)
s.__del__(); s.__del__(); s.__del__()
b2.copy_to_host()
del b2
gc.collect()
assert mr2.info().used_bytes == 0, mr2.info()  # the free on s went through: s was alive
sp = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(2)
st = sp.get_stream()
b3 = rmm.DeviceBuffer(size=100, stream=st, mr=mr2)
sp.__del__(); sp.__del__()
del b3
gc.collect()
assert mr2.info().used_bytes == 0, mr2.info()
print("ok")
"""
    assert _child_ok(code).strip().endswith("ok")



def test_finalizer_by_hand_during_a_call_destroys_after_it():
    """mr.allocate and mr.deallocate hold the resource and the stream for their call into C: a
    finalizer called by hand meanwhile (here from inside the call, by the upstream's Python
    allocate_func) lets go of its hold, and the C objects go when the call is over. Until red team
    40 the call held neither: the C adaptor was destroyed under its own allocate (a use after free;
    with threads, a segfault), and inside the call the adaptor already read as destroyed."""
    out = _child_ok("""
import rmmh as rmm
up = rmm.mr.CudaMemoryResource()
seen = {}
def alloc(n, stream):
    if "mr" in seen:
        mr, s = seen.pop("mr"), seen.pop("stream")
        mr.__del__()  # by hand, inside mr's own allocate
        s.__del__()
        seen["inside"] = (mr.type_name, s._live != 0)  # both still there: the call holds them
    return up.allocate(n, stream)
def free(p, n, stream):
    up.deallocate(p, n, stream)
cb = rmm.mr.CallbackMemoryResource(alloc, free)
st = rmm.mr.StatisticsResourceAdaptor(cb)
# (NON_BLOCKING: a pool of rmm.h's on CUDA too, whose streams hold the pool; with the default
# flags on CUDA each stream has an owner of its own, which s keeps alive)
sp = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(1, flags=rmm.pylibrmm.CudaStreamFlags.NON_BLOCKING)
s = sp.get_stream()
sp.__del__()  # (by hand: s's hold is now the C streams' last, and s's finalizer destroys them)
p = st.allocate(1000, s)
st.deallocate(p, 1000, s)
seen["mr"], seen["stream"] = st, s
p = st.allocate(1000, s)  # the call in which both finalizers run
assert seen["inside"] == ("statistics", True), seen
for call in (lambda: st.allocate(1000), lambda: st.deallocate(p, 1000), lambda: s._live):
    try:
        call()
    except Exception as e:  # gone once the call was over
        assert "destroyed" in str(e), e
    else:
        raise AssertionError("usable after its finalizer ran")
up.deallocate(p, 1000)
print("ok")
""")
    assert out.strip().endswith("ok")


def test_a_destruction_left_to_a_call_that_raises_leaves_its_result():
    """A finalizer called by hand during mr.allocate or mr.deallocate leaves the destruction to
    the call's release of its hold; when that destruction raises, the error is the finalizer's:
    reported as Python reports a finalizer's (sys.unraisablehook, naming the object) and the
    call's result stands. Until review 40's F3 it replaced the result: an allocation raised, and
    its block was lost."""
    out = _child_ok("""
import sys
import rmmh as rmm
reported = []
sys.unraisablehook = lambda a: reported.append((type(a.exc_value).__name__, str(a.exc_value), a.object))
up = rmm.mr.CudaMemoryResource()
seen = {}
def alloc(n, stream):
    if seen.pop("in alloc", None):
        seen["mr"].__del__()  # by hand, inside the call
    return up.allocate(n, stream)
def free(p, n, stream):
    if seen.pop("in free", None):
        seen["mr"].__del__()
    up.deallocate(p, n, stream)
for call in ("allocate", "deallocate"):
    st = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CallbackMemoryResource(alloc, free))
    record = st._refs[0]
    destroy = record.destroy
    def failing(*args, destroy=destroy):
        destroy(*args)
        raise RuntimeError("destruction failed (test)")
    record.destroy = failing
    seen["mr"] = st
    if call == "allocate":
        seen["in alloc"] = True
        p = st.allocate(1000)  # the call in which the finalizer runs: its result stands
        assert isinstance(p, int) and p, p
        up.deallocate(p, 1000)  # (the block is up's: the statistics adaptor kept none of it)
    else:
        p = st.allocate(1000)
        seen["in free"] = True
        assert st.deallocate(p, 1000) is None
    assert reported == [("RuntimeError", "destruction failed (test)", st)], reported
    del reported[:]
    try:
        st.allocate(1000)
    except Exception as e:  # gone once the call was over
        assert "destroyed" in str(e), e
    else:
        raise AssertionError("usable after its finalizer ran")
print("ok")
""")
    assert out.strip().endswith("ok")


def test_a_destruction_left_to_a_buffers_release_that_raises_leaves_its_result():
    """A buffer that lets go of its hold on a stream (a resize that moves it to another stream)
    or on its resource and stream (its block freed by a growth) makes the destruction a finalizer
    called by hand left to that hold; when it raises, the error is reported as a finalizer's and
    the buffer's operation stands (it was raised out of the operation, with the buffer already
    changed, and a raising resource's destruction kept the stream's hold)."""
    out = _child_ok("""
import sys
import rmmh as rmm
reported = []
sys.unraisablehook = lambda a: reported.append((str(a.exc_value), a.object))
def failing_pool_stream():
    sp = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(1, flags=rmm.pylibrmm.CudaStreamFlags.NON_BLOCKING)
    s = sp.get_stream()
    sp.__del__()  # (by hand: s's hold is now the C streams' last)
    record = s._refs[0]
    destroy = record.destroy
    def failing(*args):
        destroy(*args)
        raise RuntimeError("stream destruction failed (test)")
    record.destroy = failing
    return s
# a resize within the capacity moves the buffer to another stream: the old one's hold goes
s = failing_pool_stream()
b = rmm.DeviceBuffer(size=100, stream=s)
s.__del__()  # (by hand: the buffer's block holds the C stream now)
b.resize(50, rmm.DEFAULT_STREAM)
assert b.size == 50 and reported == [("stream destruction failed (test)", s)], reported
del reported[:]
# a growth frees the old block on its stream: that block's holds go
s = failing_pool_stream()
b = rmm.DeviceBuffer(size=100, stream=s)
s.__del__()
b.reserve(1000, rmm.DEFAULT_STREAM)
assert b.capacity() == 1000 and reported == [("stream destruction failed (test)", s)], reported
try:
    s._live
except Exception as e:
    assert "destroyed" in str(e), e
else:
    raise AssertionError("the stream outlived its last hold")
print("ok")
""")
    assert out.strip().endswith("ok")


_HELD_CALLS = {  # name: (make the object, the ctypes function its call makes, the call)
    "pool.info": ("pool", "rmmh_pool_info", "o.info()"),
    "pool.trim": ("pool", "rmm_pool_trim", "o.trim()"),
    "pool.set_maximum": ("pool", "rmm_pool_set_maximum", "o.set_maximum(1 << 30)"),
    "validate": ("pool", "rmm_resource_validate", "o.validate()"),
    "type_name": ("pool", "rmm_resource_type_name", "o.type_name"),
    "allocation_base": ("pool", "rmm_resource_allocation_base", "o.allocation_base(p)"),
    "statistics.allocation_counts": ("stats", "rmmh_statistics_get", "o.allocation_counts"),
    "statistics.push_counters": ("stats", "rmm_statistics_push", "o.push_counters()"),
    "statistics.pop_counters": ("stats", "rmmh_statistics_pop", "o.pop_counters()"),
    "tracking.get_allocated_bytes": ("track", "rmm_tracking_get", "o.get_allocated_bytes()"),
    "tracking.get_outstanding_allocations_str": ("track", "rmmh_tracking_report",
                                                 "o.get_outstanding_allocations_str()"),
    "limiting.get_allocated_bytes": ("limit", "rmm_limiting_get", "o.get_allocated_bytes()"),
    "limiting.set_allocation_limit": ("limit", "rmm_limiting_set_limit", "o.set_allocation_limit(1 << 20)"),
    "logging.flush": ("log", "rmm_logging_adaptor_flush", "o.flush()"),
    "binning.add_bin": ("binning", "rmm_binning_add_bin", "o.add_bin(4096)"),
    "async.pool_handle": ("async", "rmm_async_resource_get_pool", "o.pool_handle()"),
    "stream_pool.get_stream": ("spool", "rmm_stream_pool_get", "o.get_stream()"),
    "stream.synchronize": ("stream", "rmm_stream_synchronize", "o.synchronize()"),
    "buffer.copy_to_host": ("stream", "rmm_memcpy_async", "rmm.DeviceBuffer(size=8).copy_to_host(stream=o)"),
    "buffer.tobytes": ("stream", "rmm_memcpy_async", "rmm.DeviceBuffer(size=8).tobytes(o)"),
    "buffer.record_stream": ("stream", "rmm_record_stream", "rmm.DeviceBuffer(size=8).record_stream(o)"),
    "copy_ptr_to_host": ("stream", "rmm_memcpy_async",
                         "rmm._device_buffer.copy_ptr_to_host(keep.ptr, bytearray(8), o)"),
    # the 2019 API (rmmh.librmm_cffi) with a stream object: held since session 42
    "legacy.rmmAlloc": ("stream", "rmmAlloc", "legacy.rmmAlloc(8, o)"),
    "legacy.rmmFree": ("stream", "rmmFree", "legacy.rmmFree(legacy.rmmAlloc(8), o)"),
    "legacy.rmmGetInfo": ("stream", "rmmGetInfo", "legacy.rmmGetInfo(o)"),
    "legacy.get_allocation_offset": ("stream", "rmmGetAllocationOffset",
                                     "legacy.get_allocation_offset(legacy.rmmAlloc(8), o)"),
}


@pytest.mark.parametrize("name", sorted(_HELD_CALLS))
def test_queries_hold_their_c_object_for_the_call(name):
    """Every call of a resource's or a stream's into C (ctypes lets the GIL go) holds the C object
    for the call: a finalizer called by hand on another thread at that moment (here: right before
    the C call, which is where another thread runs) destroys it after the call, not under it.
    Until session 41 only allocate and deallocate did (a red team's audit: heap-use-after-free
    under ASan for the queries, a segfault for trim)."""
    make, fn, call = _HELD_CALLS[name]
    out = _child_ok("""
import os, tempfile
import rmmh as rmm
from rmmh import _lib
from rmmh.librmm_cffi import librmm as legacy
kind = %r
up = rmm.mr.CudaMemoryResource()
if kind == "pool":
    o = rmm.mr.PoolMemoryResource(up, 1 << 20)
    p = o.allocate(256)
elif kind == "stats":
    o = rmm.mr.StatisticsResourceAdaptor(up)
    o.push_counters()
elif kind == "track":
    o = rmm.mr.TrackingResourceAdaptor(up)
    p = o.allocate(10)
elif kind == "limit":
    o = rmm.mr.LimitingResourceAdaptor(up, 1 << 30)
elif kind == "log":
    o = rmm.mr.LoggingResourceAdaptor(up, os.path.join(tempfile.mkdtemp(), "log.csv"))
elif kind == "binning":
    o = rmm.mr.BinningMemoryResource(rmm.mr.PoolMemoryResource(up, 1 << 20))
elif kind == "async":
    o = rmm.mr.CudaAsyncMemoryResource()
elif kind == "spool":
    o = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(2, flags=rmm.pylibrmm.CudaStreamFlags.NON_BLOCKING)
else:
    sp = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(1, flags=rmm.pylibrmm.CudaStreamFlags.NON_BLOCKING)
    o = sp.get_stream()
    sp.__del__()  # (by hand: o's hold is the C streams' last)
keep = rmm.DeviceBuffer(size=8)  # (a block that outlives the call: copy_ptr_to_host's source)
fn = %r
real = getattr(_lib, fn)
seen = {}
def switched(*args):  # another thread's finalizer, run where ctypes lets the GIL go
    setattr(_lib, fn, real)
    o.__del__()
    seen["alive"] = bool(o._refs)
    return real(*args)
setattr(_lib, fn, switched)
%s
assert seen == {"alive": True}, seen  # held for the call
try:  # and destroyed once it was over
    o.synchronize() if kind == "stream" else o.get_stream() if kind == "spool" else o.type_name
except Exception as e:
    assert "destroyed" in str(e), e
else:
    raise AssertionError("usable after its finalizer ran")
print("ok")
""" % (make, fn, call))
    assert out.strip().endswith("ok")


def test_a_capture_holds_its_stream_and_refuses_a_destroyed_one():
    """GraphPool.capture holds the C stream from its registration to its end: the stream's
    finalizer called by hand during the capture (as another thread could) destroys it after
    rmm_capture_end, not before; a stream already destroyed is refused with the library's
    "destroyed" error and nothing is registered. Until session 42 capture held nothing: the
    Python stream was emptied during the block, and a destroyed stream's handle went to C."""
    out = _child_ok("""
import rmmh as rmm
from rmmh import _lib
def pool_stream():
    sp = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(1, flags=rmm.pylibrmm.CudaStreamFlags.NON_BLOCKING)
    s = sp.get_stream()
    sp.__del__()  # (by hand: s's hold is the C stream's last)
    return s
gp = rmm.GraphPool(reserve=1 << 16, upstream=rmm.mr.CudaMemoryResource())
s = pool_stream()
ends = []
real_end = _lib.rmm_capture_end
def end(pool, h):
    ends.append(bool(s._refs))  # the C stream still there when the registration ends
    return real_end(pool, h)
_lib.rmm_capture_end = end
with gp.capture(s):
    b = rmm.DeviceBuffer(size=100, stream=s)
    s.__del__()  # by hand, inside the capture
    assert s._refs, "destroyed under the capture"
    del b
_lib.rmm_capture_end = real_end
assert ends == [True], ends
assert rmm._lifetime.captures[0] == 0
try:  # and destroyed once the capture was over
    s.synchronize()
except Exception as e:
    assert "destroyed" in str(e), e
else:
    raise AssertionError("the stream outlived the capture's hold")
gone = pool_stream()
gone.__del__()
begun = []
real_begin = _lib.rmm_capture_begin
_lib.rmm_capture_begin = lambda *a: begun.append(a) or real_begin(*a)
try:
    with gp.capture(gone):
        raise AssertionError("a destroyed stream was captured")
except AssertionError:
    raise
except Exception as e:
    assert "destroyed" in str(e), e
_lib.rmm_capture_begin = real_begin
assert begun == [] and rmm._lifetime.captures[0] == 0, (begun, rmm._lifetime.captures)
gp.release()
print("ok")
""")
    assert out.strip().endswith("ok")


@pytest.mark.parametrize("kind", ["pool", "fixed_size", "arena", "graph_pool"])
def test_an_upstream_is_held_through_a_resources_creation(kind):
    """A resource's constructor holds its upstream through the C create, which for a pool, a
    fixed-size resource, an arena and a GraphPool allocates from it: the upstream's finalizer
    called by hand meanwhile (here from inside that allocation, by the upstream's Python
    allocate_func) leaves it to the new resource's hold. Until session 41 the create held
    nothing: the upstream was destroyed under it, and the new resource's hold went to an
    emptied list (a segfault at the next use)."""
    out = _child_ok("""
import rmmh as rmm
up = rmm.mr.CudaMemoryResource()
seen = {}
def alloc(n, stream):
    victim = seen.pop("victim", None)
    if victim is not None:
        victim.__del__()  # by hand, inside the creation's allocation
        seen["alive"] = victim._refs[:1] != [True] and bool(victim._refs)
    return up.allocate(n, stream)
def free(p, n, stream):
    up.deallocate(p, n, stream)
cb = rmm.mr.CallbackMemoryResource(alloc, free)
victim = rmm.mr.StatisticsResourceAdaptor(cb)
kind = %r
seen["victim"] = victim
if kind == "pool":
    r = rmm.mr.PoolMemoryResource(victim, 1 << 20)
elif kind == "fixed_size":
    r = rmm.mr.FixedSizeMemoryResource(victim, 1 << 16, 4)
elif kind == "arena":
    r = rmm.mr.ArenaMemoryResource(victim, 1 << 22)
else:
    r = rmm.GraphPool(1 << 16, upstream=victim)
assert seen == {"alive": True}, seen  # the creation held it
assert victim.type_name == "statistics"  # the new resource holds it now
if kind != "graph_pool":
    b = rmm.DeviceBuffer(size=100, mr=r)
    del b
    r.__del__()
else:
    r.release()
try:
    victim.type_name
except Exception as e:
    assert "destroyed" in str(e), e
else:
    raise AssertionError("the upstream outlived the last resource over it")
print("ok")
""" % kind)
    assert out.strip().endswith("ok")


@pytest.mark.parametrize("case", ["table", "graph_pool_info"])
def test_a_finalizer_on_another_thread_waits_for_the_lock_a_call_holds(case):
    """set_per_device_resource and GraphPool.info decide under a lock the finalizer takes too: a
    finalizer called by hand on another thread while they call C waits for them (and then finds
    the resource current, or the pool released after). Until session 41 the resource was
    destroyed while the C table took its handle (the hooks then allocated from freed memory), and
    a GraphPool freed under info()."""
    out = _child_ok("""
import threading
import rmmh as rmm
from rmmh import _lib
case = %r
if case == "table":
    o = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    fn, call = "rmm_set_per_device_resource", lambda: rmm.mr.set_per_device_resource(0, o)
else:
    o = rmm.GraphPool(1 << 16)
    fn, call = "rmm_graph_pool_get_info", o.info
real = getattr(_lib, fn)
seen = {}
def switched(*args):
    setattr(_lib, fn, real)
    t = seen["thread"] = threading.Thread(target=o.__del__)
    t.start()
    t.join(0.5)
    seen["waited"] = t.is_alive()  # blocked on the lock this call holds
    return real(*args)
setattr(_lib, fn, switched)
call()
seen["thread"].join()
assert seen["waited"], seen
if case == "table":
    assert o.type_name == "statistics"  # current: its finalizer by hand let it be
    assert _lib.rmm_get_per_device_resource(0) == o._h
    rmm.mr.set_per_device_resource(0, rmm.mr.CudaMemoryResource())
else:
    assert o._h is None  # released after info()
print("ok")
""" % case)
    assert out.strip().endswith("ok")


def test_a_finalizer_does_not_destroy_under_the_table_lock():
    """A resource's finalizer decides under the per-device table's lock and destroys after letting
    it go: the destruction may wait for another pool's lock, held by a thread whose Python
    callback finalizes a resource of its own (which takes the table's lock). Review 41 found the
    deadlock while the destruction ran under the table's lock (session 41's first form)."""
    out = _child_ok("""
import faulthandler, threading, time
import rmmh.mr as mr
faulthandler.dump_traceback_later(60, exit=True)  # (a deadlock ends the child: the test fails)
cuda = mr.CudaMemoryResource()
in_cb, a_started = threading.Event(), threading.Event()
armed = [False]
def alloc(n, s):
    if armed[0]:
        armed[0] = False
        in_cb.set()
        a_started.wait()
        time.sleep(0.3)  # the main thread is in Q's finalizer by now
        tmp = mr.CudaMemoryResource()
        del tmp  # a finalizer, inside P's growth (P's lock held)
    return cuda.allocate(n)
def free(p, n, s):
    cuda.deallocate(p, n)
U = mr.CallbackMemoryResource(alloc, free)
P = mr.PoolMemoryResource(U, initial_pool_size=1 << 20)
Q = mr.PoolMemoryResource(P, initial_pool_size=1 << 16)  # Q's chunk comes from P
def grow():
    armed[0] = True
    p = P.allocate(4 << 20)
    P.deallocate(p, 4 << 20)
t = threading.Thread(target=grow)
t.start()
in_cb.wait()
a_started.set()
del Q  # its destruction gives its chunk back to P (P's lock)
t.join()
print("ok")
""")
    assert out.strip().endswith("ok")


def test_a_raising_unraisable_hook_leaves_the_calls_result():
    """A destruction left to a call's release that raises is reported through sys.unraisablehook;
    a hook that raises in turn is ignored, as Python ignores it for a finalizer (review 41: on
    the ctypes path it escaped mr.allocate, and the block was lost)."""
    out = _child_ok("""
import sys
import rmmh as rmm
calls = []
def hook(args):
    calls.append(str(args.exc_value))
    raise KeyError("the hook raised (test)")
sys.unraisablehook = hook
up = rmm.mr.CudaMemoryResource()
seen = {}
def alloc(n, stream):
    if seen.pop("in alloc", None):
        seen["mr"].__del__()
    return up.allocate(n, stream)
st = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CallbackMemoryResource(alloc, lambda p, n, s: up.deallocate(p, n, s)))
record = st._refs[0]
destroy = record.destroy
def failing(*args):
    destroy(*args)
    raise RuntimeError("destruction failed (test)")
record.destroy = failing
seen["mr"], seen["in alloc"] = st, True
p = st.allocate(1000)
assert isinstance(p, int) and p and calls == ["destruction failed (test)"], (p, calls)
up.deallocate(p, 1000)
print("ok")
""")
    assert out.strip().endswith("ok")


def test_a_resource_whose_finalizer_ran_is_not_made_current():
    """A resource whose finalizer ran (by hand) while its blocks keep its C object is refused by
    set_per_device_resource: the C table would keep its handle past its last block. Until
    session 41 it was installed, and the C table held a freed resource once the block went."""
    out = _child_ok("""
import rmmh as rmm
mr = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
b = rmm.DeviceBuffer(size=100, mr=mr)
mr.__del__()  # (by hand: b's block keeps the C pool)
try:
    rmm.mr.set_current_device_resource(mr)
except Exception as e:
    assert "destroyed" in str(e), e
else:
    raise AssertionError("a finalized resource was made current")
assert rmm.mr.get_current_device_resource() is not mr
del b
print("ok")
""")
    assert out.strip().endswith("ok")


@pytest.mark.parametrize("op", ["reserve", "resize", "shrink_to_fit"])
def test_finalizers_by_hand_during_a_buffers_growth_destroy_after_it(op):
    """A DeviceBuffer's reserve, resize and shrink_to_fit allocate the new block with the buffer's
    lock let go, a call into C that lets the GIL go: they hold the resource and the stream for it,
    as mr.allocate does. Until session 41 nothing held them there (an empty buffer's resource, a
    stream the buffer had not used): a finalizer called by hand meanwhile (here from inside the
    call, by the upstream's Python allocate_func) destroyed the C adaptor and the C stream under
    the call (a use after free)."""
    out = _child_ok("""
import rmmh as rmm
up = rmm.mr.CudaMemoryResource()
seen = {}
def alloc(n, stream):
    if "mr" in seen:
        mr, s = seen.pop("mr"), seen.pop("stream")
        mr.__del__()  # by hand, inside the growth's allocation
        s.__del__()
        seen["inside"] = (mr.type_name, s._live != 0)  # both still there: the call holds them
    return up.allocate(n, stream)
def free(p, n, stream):
    up.deallocate(p, n, stream)
st = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CallbackMemoryResource(alloc, free))
sp = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(1, flags=rmm.pylibrmm.CudaStreamFlags.NON_BLOCKING)
s = sp.get_stream()
sp.__del__()  # (by hand: s's hold is now the C streams' last)
b = rmm.DeviceBuffer(size=0, mr=st)  # empty: no block holds st
if "%s" == "shrink_to_fit":
    b.reserve(1000)  # a block on the default stream; shrink_to_fit's new one goes on s
    b.resize(10)
    b.__del__()  # (by hand: the buffer's block and hold go; the growth below holds st itself)
    b = rmm.DeviceBuffer(size=0, mr=st)
    b.reserve(2000)
    b.resize(10)
seen["mr"], seen["stream"] = st, s
if "%s" == "resize":
    b.resize(1000, s)
elif "%s" == "reserve":
    b.reserve(1000, s)
else:
    b.shrink_to_fit(s)
assert seen["inside"] == ("statistics", True), seen
assert b.capacity() == (10 if "%s" == "shrink_to_fit" else 1000), b.capacity()
del b  # the last block: the C adaptor and the C stream go with its holds
for call in (lambda: st.allocate(1000), lambda: s._live):
    try:
        call()
    except Exception as e:
        assert "destroyed" in str(e), e
    else:
        raise AssertionError("usable after its finalizer ran")
print("ok")
""" % ((op,) * 4))
    assert out.strip().endswith("ok")


@pytest.mark.parametrize("kind", ["statistics", "pool", "stream", "buffer"])
def test_finalizer_by_hand_racing_other_threads_calls(kind):
    """A resource's or a stream's __del__ called by hand while other threads allocate and free
    through it: those calls finish, later ones raise (red team 40: a segfault in 3 runs of 3 on
    both paths, heap-use-after-free under ASan)."""
    out = wait_child(start_child("""
import sys, threading, time
import rmmh as rmm
kind = sys.argv[1]
errors = set()
for trial in range(25):
    s = rmm.DEFAULT_STREAM
    if kind == "stream":  # a stream whose pool let go by hand: its finalizer destroys the C stream
        sp = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(1, flags=rmm.pylibrmm.CudaStreamFlags.NON_BLOCKING)
        s = sp.get_stream()
        sp.__del__()
    if kind == "pool":
        mr = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    else:
        mr = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    victim = s if kind == "stream" else mr
    stop = []
    def user():
        while not stop:
            try:
                if kind == "buffer":  # (the constructor's holds, taken before its allocation since review 40)
                    b = rmm.DeviceBuffer(size=1000, mr=mr)
                    del b
                    continue
                p = mr.allocate(1000, s)
                mr.deallocate(p, 1000, s)
            except Exception as e:
                assert "destroyed" in str(e), e
                errors.add(type(e).__name__)
    ts = [threading.Thread(target=user) for _ in range(3)]
    for t in ts:
        t.start()
    time.sleep(0.003)
    victim.__del__()
    time.sleep(0.003)
    stop.append(1)
    for t in ts:
        t.join()
print("ok", sorted(errors))
""", kind), timeout=120)
    assert out.strip().startswith("ok")


def test_buffer_finalizer_by_hand_waits_for_a_copy_in_progress():
    """A DeviceBuffer's __del__ called by hand while another thread copies out of the buffer waits
    for the copy (the buffer's lock, which copies hold while they read the block), then frees the
    block (red team 40: it freed the block under a tobytes on another thread, a use after free on
    both paths)."""
    from rmmh._device_buffer import _resize_lock
    b = rmm.DeviceBuffer(size=1 << 20)
    b.tobytes()
    lock = _resize_lock(b)
    done = threading.Event()
    with lock:  # a copy in progress
        t = threading.Thread(target=lambda: (b.__del__(), done.set()))
        t.start()
        t.join(0.1)
        assert not done.is_set() and b.size == 1 << 20 and b.ptr != 0
    t.join(10)
    assert done.is_set() and b.size == 0 and b.ptr == 0
    assert b.tobytes() == b""


def test_buffer_finalizer_by_hand_racing_copies():
    """The same with the copies on another thread running for real (red team 40's reproducer)."""
    out = _child_ok("""
import threading, time
import rmmh as rmm
for trial in range(50):
    b = rmm.DeviceBuffer(size=1 << 20)
    stop = []
    def user():
        while not stop:
            assert len(b.tobytes()) in (0, 1 << 20)
    t = threading.Thread(target=user)
    t.start()
    time.sleep(0.002)
    b.__del__()
    time.sleep(0.002)
    stop.append(1)
    t.join()
print("ok")
""")
    assert out.strip().endswith("ok")


def test_buffer_finalizer_by_hand_frees_on_the_blocks_own_stream():
    """A DeviceBuffer's finalizer called by hand lets go of the holds of the block's own stream even
    when, during the free (which may let the GIL go), another thread gives the emptied buffer
    another stream (review 40: it let go of a hold of the new stream, whose C stream was then
    destroyed while in use, and the old one's was never let go of). The resource's Python free
    stands in for the other thread."""
    out = _child_ok("""
import gc
import rmmh as rmm
up = rmm.mr.CudaMemoryResource()
state = {}
def free(p, n, stream):
    b = state.pop("buf", None)
    if b is not None:
        b.resize(0, state.pop("s2"))
    up.deallocate(p, n, stream)
mr = rmm.mr.CallbackMemoryResource(lambda n, s: up.allocate(n, s), free)
s1 = rmm.Stream()
sp = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(1, flags=rmm.pylibrmm.CudaStreamFlags.NON_BLOCKING)
s2 = sp.get_stream()
b = rmm.DeviceBuffer(size=1000, stream=s1, mr=mr)
r1, r2 = s1._refs, s2._refs
n1, n2 = len(r1), len(r2)
state["buf"], state["s2"] = b, s2
b.__del__()
assert (len(r1), len(r2)) == (n1 - 1, n2), (n1, n2, len(r1), len(r2))
sp.__del__()
rmm.DeviceBuffer(size=10, stream=s2, mr=up)  # s2 still alive: the stream holds its pool
del s1, b
gc.collect()
assert not r1, r1  # s1's C stream went with its last holder
print("ok")
""")
    assert out.strip().endswith("ok")


def test_buffer_finalizer_by_hand_interrupted_keeps_the_block():
    """A DeviceBuffer's finalizer called by hand and interrupted (Ctrl-C) while it waits for a copy
    in progress keeps the block in the buffer and raises KeyboardInterrupt (review 40: the
    extension freed the block under the copy and dropped the interrupt)."""
    out = _child_ok("""
import signal, threading
import rmmh as rmm
from rmmh._device_buffer import _resize_lock
b = rmm.DeviceBuffer(size=1 << 20)
b.tobytes()
lock = _resize_lock(b)
copying, done, seen = threading.Event(), threading.Event(), []
def copy_in_progress():
    with lock:
        copying.set()
        done.wait(10)
        seen.append(b.ptr != 0)
t = threading.Thread(target=copy_in_progress)
t.start()
copying.wait()
def on_alarm(*a):
    raise KeyboardInterrupt
signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.2)
try:
    b.__del__()
    for _ in range(1000):  # (the extension posts the interrupt again: raised at the next check)
        pass
    raise AssertionError("no KeyboardInterrupt")
except KeyboardInterrupt:
    pass
done.set()
t.join()
assert seen == [True] and b.ptr != 0 and b.size == 1 << 20, (seen, b.ptr, b.size)
del b
print("ok")
""")
    assert out.strip().endswith("ok")


def test_a_call_on_a_destroyed_resource_never_makes_it_read_alive():
    """mr.allocate on a resource already destroyed raises before its refs list gets a hold: with
    the hold first (a True alone in the empty list), another thread's DeviceBuffer saw the resource
    as alive and allocated from the freed C object (review 40, the ctypes path: a segfault)."""
    out = _child_ok("""
import sys, threading
import rmmh as rmm
sys.setswitchinterval(1e-6)
mr = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
mr.__del__()
assert mr._refs == []
stop = []
def prober():
    while not stop:
        try:
            mr.allocate(1000)
        except Exception:
            pass
ts = [threading.Thread(target=prober) for _ in range(2)]
for t in ts:
    t.start()
made = None
for i in range(200000):
    try:
        made = rmm.DeviceBuffer(size=1000, mr=mr)
        break
    except Exception as e:
        assert "destroyed" in str(e), e
stop.append(1)
for t in ts:
    t.join()
assert made is None and mr._refs == [], (made, mr._refs)
print("ok")
""")
    assert out.strip().endswith("ok")


@pytest.mark.skipif(rmm.ACCELERATED, reason="the extension refuses object.__new__(DeviceBuffer)")
def test_buffer_of_object_new_and_init_is_freed():
    """The ctypes path: a DeviceBuffer made by object.__new__ and __init__ (its lock slot never
    set) frees its block and holds when finalized (review 40: the finalizer returned early)."""
    mr = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    b = object.__new__(rmm.DeviceBuffer)
    b.__init__(size=1000, mr=mr)
    assert mr.allocation_counts.current_count == 1
    del b
    gc.collect()
    assert mr.allocation_counts.current_count == 0 and len(mr._refs) == 1


@pytest.mark.skipif(rmm.ACCELERATED, reason="the extension refuses object.__new__(DeviceBuffer)")
def test_buffer_of_object_new_alone_is_an_empty_buffer():
    """The ctypes path: a DeviceBuffer made by object.__new__ alone (which the extension refuses,
    as RMM's cdef class does) is an empty buffer, as one of DeviceBuffer.__new__ alone is: its
    size, repr, copies and resize raised AttributeError naming 'size', '_size', '_cap' or
    '_ptr' (red team 52)."""
    b = object.__new__(rmm.DeviceBuffer)
    assert b.size == 0 and b.ptr == 0 and b.nbytes == 0 and len(b) == 0 and b.capacity() == 0
    assert repr(b) == "<rmmh.DeviceBuffer size=0 ptr=0x0>" and b.tobytes() == b""
    assert b.__cuda_array_interface__["shape"] == (0,)
    assert b.copy().size == 0
    b.resize(8)
    b.copy_from_host(b"abcdefgh")
    assert b.tobytes() == b"abcdefgh" and b.capacity() == 8
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        b.nope
    mr = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    c = object.__new__(rmm.DeviceBuffer)
    assert c.size == 0
    c.__init__(size=100, mr=mr)  # (its __init__ may still run once)
    assert c.size == 100 and mr.allocation_counts.current_count == 1
    del b, c
    gc.collect()
    assert mr.allocation_counts.current_count == 0


def _child_ok(code):
    """Runs code in a new interpreter (a crash there fails the test, not the suite); its stdout."""
    return wait_child(start_child(code), timeout=120)


def test_repr_of_a_destroyed_resource_makes_no_c_call():
    """repr() of a resource whose C object is gone (its finalizer ran: explicitly, or first in a
    collected cycle whose other finalizers print it) says so; it read freed memory before (a
    segfault)."""
    out = _child_ok("""
        import gc, rmmh as rmm
        mr = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
        class Holder:
            def __del__(self):
                print("in cycle:", repr(self.mr))
        h = Holder(); h.mr = mr; h.cycle = h
        del h, mr
        gc.collect()
        mr = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
        mr.__del__()
        print("explicit:", repr(mr))
    """)
    assert "in cycle: <rmmh.mr.PoolMemoryResource " in out
    assert "explicit: <rmmh.mr.PoolMemoryResource destroyed at 0x" in out
    mr = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    assert " pool at 0x" in repr(mr)
    mr.__del__()
    assert " destroyed at 0x" in repr(mr)


def test_graph_pool_holds_its_upstream():
    """A GraphPool collected in one cycle with its upstream gives its reserve back to a live C
    resource, whatever the finalizers' order (it returned it to a destroyed one before: a
    segfault); release() lets the hold go once the memory is back."""
    out = _child_ok("""
        import gc, rmmh as rmm
        for order in range(2):
            up = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
            gp = rmm.GraphPool(reserve="64KiB", upstream=up)
            class Holder: pass
            h = Holder()
            if order: h.up, h.gp = up, gp
            else: h.gp, h.up = gp, up
            h.cycle = h
            del gp, up, h
            gc.collect()
        print("survived")
    """)
    assert "survived" in out
    up = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    held = len(up._refs)
    gp = rmm.GraphPool(reserve="64KiB", upstream=up)
    assert len(up._refs) == held + 1
    with pytest.raises(TypeError, match="once"):
        gp.__init__(reserve=0, upstream=up)
    gp.release()
    assert len(up._refs) == held
    with pytest.raises(ValueError, match="released"):
        gp.info()


@pytest.mark.parametrize("source", ["stream", "pool"])
def test_stream_used_after_its_c_stream_is_gone_raises(source):
    """A Stream over a stream rmmh made holds it while the Stream lives; a Stream used by a
    finalizer after its own and its owner's finalizers ran (a collected cycle) raises
    RMMRuntimeError instead of using the destroyed C stream."""
    code = """
        import gc, sys, rmmh as rmm
        pool = None
        if sys.argv[1] == "stream":
            s = rmm.Stream()
        else:
            pool = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(4)
            s = pool.get_stream()
        seen = []
        class Holder:
            def __del__(self):
                calls = [("synchronize", self.s.synchronize),
                         ("DeviceBuffer", lambda: rmm.DeviceBuffer(size=64, stream=self.s)),
                         ("allocate", lambda: rmm.mr.CudaMemoryResource().allocate(64, self.s))]
                if self.pool is not None:  # (the pool's finalizer may have run: no C call then)
                    calls.append(("get_stream", lambda: self.pool.get_stream().synchronize()))
                for what, call in calls:
                    try:
                        call()
                        seen.append(what + ": ran")
                    except Exception as e:
                        seen.append(what + ": " + type(e).__name__ + ": " + str(e))
        h = Holder(); h.s = s; h.pool = pool; h.cycle = h
        del s, h, pool
        gc.collect()
        print("\\n".join(seen))
    """
    out = wait_child(start_child(code, source), timeout=120)
    lines = out.strip().splitlines()
    assert len(lines) == (3 if source == "stream" else 4), out
    for line in lines:  # the finalizers' order decides which; never a call on a destroyed stream
        assert line.endswith(": ran") or "its C stream was already destroyed" in line, out
    # outside a cycle: a Stream keeps its C stream whatever happens to its owner
    s = rmm.Stream()
    s2 = rmm.Stream(s)
    owner = s._owner
    held = len(owner.refs)
    del s
    gc.collect()
    assert len(owner.refs) == held - 1
    s2.synchronize()
    pool = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(2)
    t = pool.get_stream()
    del pool
    gc.collect()
    t.synchronize()
    rmm.DeviceBuffer(size=64, stream=t)


def test_failure_callback_that_cannot_be_called_means_no_retry():
    """Where ctypes cannot even start a Python callback (a RecursionError on entry) the C side
    reads the safe answer (no retry; a failed allocation) instead of garbage (which retried for
    ever, or not, as the stack happened to hold): at every depth the allocation fails, raising
    (MemoryError, or near the limit RecursionError or ctypes' ArgumentError), and returns."""
    out = _child_ok("""
        import sys, rmmh as rmm
        lim = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 1024)
        fa = rmm.mr.FailureCallbackResourceAdaptor(lim, lambda n: False)
        cb = rmm.mr.CallbackMemoryResource(lambda n, s: lim.allocate(n, s),
                                           lambda p, n, s: lim.deallocate(p, n, s))
        def at_depth(d, mr):
            return at_depth(d - 1, mr) if d else mr.allocate(4096)
        results = set()
        for mr in (fa, cb):
            for k in range(1, 60):
                try:
                    at_depth(sys.getrecursionlimit() - k, mr)
                    results.add("allocated")
                except Exception as e:  # (MemoryError; near the limit RecursionError, or ctypes'
                    results.add(type(e).__name__)  # ArgumentError when it cannot convert the arguments)
        print(sorted(results))
    """)
    assert "allocated" not in out and "[" in out, out


# The recursion-limit sweep of the two child scripts below: sweep(call, results, outcome) makes
# call() at the usual limit, where depths (each entry of the function under test appends depth())
# shows where the deepest call began, then at each of the 12 limits below that (12 in a row: every
# place in the cycle); results gets "allocated", or outcome(limit, e) for the exception raised.
_LIMIT_SWEEP = """
import sys
depths = []
def depth():
    f, n = sys._getframe(1), 0
    while f is not None:
        n, f = n + 1, f.f_back
    return n
def sweep(call, results, outcome):
    del depths[:]
    try:
        call()
    except BaseException:
        pass
    top = max(depths)  # where the deepest call began, at the usual limit
    for limit in [1000] + list(range(top - 12, top)):
        sys.setrecursionlimit(limit)
        try:
            call()
            results.add("allocated")
        except BaseException as e:
            results.add(outcome(limit, e))
        sys.setrecursionlimit(1000)
"""


def _child_sweeping(code):
    """_child_ok of code after _LIMIT_SWEEP."""
    import textwrap
    return _child_ok(_LIMIT_SWEEP + textwrap.dedent(code))


def test_an_allocate_func_that_calls_its_own_resource_raises_recursion_error_quietly():
    """An allocate_func that calls its own resource (directly, through DeviceBuffer, or through
    an adaptor) ends in an exception for the caller, and nothing on stderr: InvalidArgumentError
    naming RMM_MAX_CALLBACK_DEPTH at Python's usual recursion limit (rmm.h lets 16 callbacks nest
    on a thread since session 43), RecursionError where the limit is low enough to come first,
    wherever it falls in the cycle of calls: the 12 limits below the depth at which the 16th call of
    the function begins, measured first at the usual limit (a level is 2 to 6 Python frames,
    by Python version and by whether the extension or ctypes calls back; fixed limits held on one
    and failed on the other). Before red team 36b, most limits printed
    "Exception ignored in sys.unraisablehook", "Error in sys.excepthook" or (Python 3.12+)
    "Exception ignored on calling ctypes callback function": a call that ctypes could not make,
    which allocations now try first (rmmh.mr's _room, once a CallbackMemoryResource exists), or
    an exception that escaped the callback's wrapper, which now keeps it without a call. (The
    collector is off: a collection at the limit cannot call rmmh's gc callback either, and Python
    prints that too.)"""
    out = _child_sweeping("""
        import gc, os, sys, tempfile
        import rmmh as rmm
        gc.disable()
        def alloc(n, s):
            depths.append(depth())
            return target.allocate(n)
        def buffer(n, s):
            depths.append(depth())
            keep.append(rmm.DeviceBuffer(size=n, mr=r))
            return keep[-1].ptr
        keep, results = [], set()
        log = tempfile.TemporaryFile()
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)  # (the noise is written to stderr, some of it by C)
        try:
            for func in (alloc, buffer):
                r = rmm.mr.CallbackMemoryResource(func, lambda p, n, s: None)
                for target, call in ((r, lambda: r.allocate(10)),
                                     (r, lambda: rmm.DeviceBuffer(size=10, mr=r)),
                                     (rmm.mr.LimitingResourceAdaptor(r, 1 << 30), lambda: target.allocate(10))):
                    sweep(call, results, lambda limit, e: (limit == 1000, type(e).__name__, "RMM_MAX_CALLBACK_DEPTH" in str(e)))
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
        log.seek(0)
        print(sorted(results), repr(log.read().decode(errors="replace")))
    """)
    assert out.strip() == "[(False, 'RecursionError', False), (True, 'InvalidArgumentError', True)] ''", out


def test_a_failure_callback_that_allocates_from_its_own_adaptor_raises_quietly():
    """A FailureCallbackResourceAdaptor's callback that allocates from its own adaptor (through
    allocate or a DeviceBuffer: each failure calls it again, until Python's recursion limit) ends
    in a RecursionError for the caller, and nothing on stderr, wherever the limit falls in the
    cycle of calls (as test_an_allocate_func_that_calls_its_own_resource_raises_recursion_error_
    quietly for CallbackMemoryResource). Before, the callback's wrapper called stash_pending
    outside its try and set_pending in its handler, and allocations made no room for the
    callback's call where no CallbackMemoryResource existed: "Exception ignored in
    sys.unraisablehook" (ctypes path) and "Error in sys.excepthook ... lost sys.stderr"
    (extension path) at every limit tried. (No CallbackMemoryResource here: its creation makes
    the room for every callback.)"""
    out = _child_sweeping("""
        import gc, os, sys, tempfile
        import rmmh as rmm
        gc.disable()
        def allocate(n):
            depths.append(depth())
            return bool(target.allocate(n))
        def buffer(n):
            depths.append(depth())
            keep.append(rmm.DeviceBuffer(size=n, mr=target))
            return True
        lim = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 1024)
        keep, results = [], set()
        log = tempfile.TemporaryFile()
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)  # (the noise is written to stderr, some of it by C)
        try:
            for func in (allocate, buffer):
                target = rmm.mr.FailureCallbackResourceAdaptor(lim, func)
                for call in (lambda: target.allocate(4096), lambda: rmm.DeviceBuffer(size=4096, mr=target)):
                    sweep(call, results, lambda limit, e: type(e).__name__)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
        log.seek(0)
        print(sorted(results), repr(log.read().decode(errors="replace")[:300]), lim.get_allocated_bytes(), len(keep))
    """)
    # (at the usual limit rmmh's bound of 16 nested failure callbacks comes first: see
    # test_a_failure_callback_cycle_is_bounded_not_a_stack_overflow)
    assert out.strip() == "['InvalidArgumentError', 'RecursionError'] '' 0 0", out


def test_a_failure_callback_cycle_is_bounded_not_a_stack_overflow():
    """A failure callback that allocates from its own adaptor nests one more failure callback per
    level (rmm.h bounds a CallbackMemoryResource's callbacks at RMM_MAX_CALLBACK_DEPTH, not a
    failure callback's): only Python's recursion limit stopped it, and under a raised limit the
    nested C frames overflowed the stack (a segfault, on both paths, with
    sys.setrecursionlimit(200000)). Now the 17th failure callback in flight on a thread is not
    called: its allocation raises InvalidArgumentError, which reaches the caller, with nothing
    allocated; the thread's count goes back to 0 (a callback that spills and retries still
    works after)."""
    out = _child_ok("""
        import sys
        import rmmh as rmm
        sys.setrecursionlimit(200000)
        lim = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 1024)
        calls = [0]
        def again(n):
            calls[0] += 1
            return bool(fa.allocate(n))
        fa = rmm.mr.FailureCallbackResourceAdaptor(lim, again)
        for call in (lambda: fa.allocate(4096), lambda: rmm.DeviceBuffer(size=4096, mr=fa)):
            calls[0] = 0
            try:
                call()
                print("allocated")
            except rmm.InvalidArgumentError as e:
                print(calls[0], "in flight" in str(e), lim.get_allocated_bytes())
        held = [rmm.DeviceBuffer(size=1024, mr=lim)]
        spill = rmm.mr.FailureCallbackResourceAdaptor(lim, lambda n: bool(held and held.pop() is not None))
        print(rmm.DeviceBuffer(size=1024, mr=spill).size)
    """)
    assert out.split() == ["16", "True", "0", "16", "True", "0", "1024"], out


def test_an_exception_kept_at_the_recursion_limit_goes_stale_at_the_next_allocation():
    """A callback that fails at the recursion limit keeps its exception without the counts that
    tie it to its allocation (it could not make the calls), so it is matched by its status alone;
    if C handled that failure (a retry through another route), a later failure with the same
    status would have raised it. Every allocation that may reach a Python allocate_func drops it
    as it starts, whichever resource it is on (review 37's finding 9)."""
    from rmmh import _lib
    rmm.mr.CallbackMemoryResource(lambda n, s: 0, lambda p, n, s: None)  # (allocations check for room from now on)
    stale = RuntimeError("kept at the recursion limit by an earlier allocation")
    mr = rmm.mr.CudaMemoryResource()  # (made first: a resource's creation drops it too)
    try:
        for allocate in (lambda: rmm.DeviceBuffer(size=64, mr=mr), lambda: mr.deallocate(mr.allocate(64), 64)):
            _lib._tls.pending = (stale, 1, None, None)  # (as the callback's wrapper keeps it there)
            allocate()
            assert getattr(_lib._tls, "pending", None) is None
    finally:
        _lib._tls.pending = None


def test_a_stale_kept_exception_is_not_raised_for_a_pool_s_own_failure():
    """A pool's allocation is first tried without the GIL given up (the extension's nowait
    call); where that call fails by itself (a size no pool can hold), the failure is the pool's
    OutOfMemoryError, not a stale callback exception kept with the same status (review 38's F5:
    RuntimeError 'stale' was raised, on the extension only)."""
    from rmmh import _lib
    from rmmh._memory_resource import OUT_OF_MEMORY
    rmm.mr.CallbackMemoryResource(lambda n, s: 0, lambda p, n, s: None)  # (allocations check for room from now on)
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), initial_pool_size=1 << 20,
                                     maximum_pool_size=1 << 20)
    try:
        for nbytes in ((1 << 64) - 1, 1 << 21):  # (refused by the nowait call; at the maximum)
            _lib._tls.pending = (RuntimeError("stale"), OUT_OF_MEMORY, None, None)
            with pytest.raises(rmm.OutOfMemoryError, match="pool: out of memory"):
                rmm.DeviceBuffer(size=nbytes, mr=pool)
            assert getattr(_lib._tls, "pending", None) is None
        b = rmm.DeviceBuffer(size=1000, mr=pool)  # (the pool is as it was)
        assert b.size == 1000 and pool.pool_size() == 1 << 20
    finally:
        _lib._tls.pending = None


def test_second_init_is_refused():
    """A second __init__ on a Stream, a resource, a CudaStreamPool or a GraphPool raises
    TypeError and changes nothing (it made a second C object before: the first leaked, or a
    buffer of the first freed its block into the second)."""
    s = rmm.Stream()
    h = s.handle
    with pytest.raises(TypeError, match="once"):
        s.__init__()
    assert s.handle == h
    up = rmm.mr.CudaMemoryResource()
    for mr in (rmm.mr.PoolMemoryResource(up, 1 << 20), rmm.mr.StatisticsResourceAdaptor(up),
               rmm.mr.CudaMemoryResource(), rmm.mr.FixedSizeMemoryResource(up, 1 << 16, 2)):
        handle, refs = mr._h, mr._refs
        b = rmm.DeviceBuffer(size=64, mr=mr)
        with pytest.raises(TypeError, match="may be called once"):
            type(mr).__init__(mr, up) if not isinstance(mr, rmm.mr.CudaMemoryResource) else mr.__init__()
        assert mr._h == handle and mr._refs is refs
        del b
        p = mr.allocate(64)
        mr.deallocate(p, 64)
    pool = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool(2)
    handles = [pool.get_stream(i).handle for i in range(2)]
    with pytest.raises(TypeError, match="once"):
        pool.__init__(2)
    assert [pool.get_stream(i).handle for i in range(2)] == handles
    # a first __init__ that failed may be tried again
    bad = rmm.mr.PoolMemoryResource.__new__(rmm.mr.PoolMemoryResource)
    with pytest.raises(TypeError):
        bad.__init__(None)
    bad.__init__(up, 1 << 20)
    assert bad.pool_size() == 1 << 20


def test_callbacks_that_give_no_answer_get_the_safe_one():
    """The C side of the Python callbacks presets their answer (rmmh.c's trampolines): a callback
    that writes none, as when ctypes could not call it, means no retry for the failure callback
    and a failed allocation (UNKNOWN, with a message) for CallbackMemoryResource's allocate."""
    import ctypes
    from rmmh import _errors, _lib
    calls = []
    lim = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 1024)
    no_retry = _lib.FAILURE_CALLBACK(lambda nbytes, retry_out: calls.append(nbytes))
    out = ctypes.c_void_p()
    _lib.check(_lib.rmmh_failure_callback_adaptor_create(ctypes.byref(out), lim._h, no_retry))
    try:
        assert _lib.alloc(out.value, 4096, 0) is None
        assert calls == [4096] and _lib.rmm_last_status() == _errors.OUT_OF_MEMORY
    finally:
        _lib.rmm_resource_destroy(out.value)
    no_status = _lib.ALLOCATE_CALLBACK(lambda ptr, nbytes, stream, status: calls.append(nbytes))
    free = _lib.DEALLOCATE_CALLBACK(lambda ptr, nbytes, stream, arg: None)
    _lib.check(_lib.rmmh_callback_resource_create(ctypes.byref(out), no_status, free))
    try:
        assert _lib.alloc(out.value, 512, 0) is None
        assert calls == [4096, 512] and _lib.rmm_last_status() == _errors.UNKNOWN
        assert "could not be called" in _lib.last_error()
    finally:
        _lib.rmm_resource_destroy(out.value)
    for bad in (_lib.rmmh_failure_callback_adaptor_create(ctypes.byref(out), lim._h, _lib.FAILURE_CALLBACK()),
                _lib.rmmh_callback_resource_create(ctypes.byref(out), _lib.ALLOCATE_CALLBACK(), free)):
        assert bad == _errors.INVALID_ARGUMENT


@pytest.mark.parametrize("garbage", [False, True])
def test_owner_cycle_at_exit(garbage):
    """A callback resource whose callables are bound methods of its owner, with a buffer and a
    pool over it, alive at exit or left as garbage no collection has freed: the exit is clean."""
    out = _child_ok("""
        import gc
        import rmmh as rmm
        gc.disable()
        base = rmm.mr.CudaMemoryResource()

        class Owner:
            def __init__(self):
                self.mr = rmm.mr.CallbackMemoryResource(self.alloc, self.free)
                self.pool = rmm.mr.PoolMemoryResource(self.mr, 1 << 20)
                self.bufs = [rmm.DeviceBuffer(size=100, mr=self.mr),
                             rmm.DeviceBuffer(size=100, mr=self.pool)]

            def alloc(self, n, s):
                return base.allocate(n, s)

            def free(self, p, n, s):
                base.deallocate(p, n, s)

        owners = [Owner() for _ in range(3)]
        if %r:
            del owners
        print("exiting", rmm.ACCELERATED)
    """ % garbage)
    assert out.startswith("exiting")


# ---- found by the red team of 2026-11-29 ------------------------------------------------------

@pytest.mark.parametrize("over", ["callback", "statistics"])
def test_callback_buffer_alive_at_exit(over):
    """A DeviceBuffer whose free calls a CallbackMemoryResource's Python deallocate (directly, or
    through a C adaptor) still alive when the interpreter exits: the exit is clean. The collector
    cleared the callbacks _lifetime keeps (their globals went NULL) and the buffer's free, later
    in the same collection, called one: a segfault with the C extension."""
    out = _child_ok("""
        import rmmh as rmm
        base = rmm.mr.CudaMemoryResource()
        freed = []
        cb = rmm.mr.CallbackMemoryResource(lambda n, s: base.allocate(n, s),
                                           lambda p, n, s: freed.append(p))
        mr = cb if %r == "callback" else rmm.mr.StatisticsResourceAdaptor(cb)
        buf = rmm.DeviceBuffer(size=100, mr=mr)

        class Holder:
            kept = rmm.DeviceBuffer(size=200, mr=mr)
        print("exiting", rmm.ACCELERATED)
    """ % over)
    assert out.startswith("exiting")


def test_a_subclass_s_own_del_still_lets_the_c_objects_go():
    """A subclass of DeviceBuffer, of a resource or of Stream whose __del__ does not call
    super().__del__() still frees its block and destroys its C resource and C stream, as RMM's
    cdef classes do in __dealloc__ (red team 28: the block, the pool with its chunk and the stream
    leaked; with the C accelerator, a buffer grown from empty leaked in a cycle with its
    resource). A subclass that does call super().__del__() frees once."""
    from rmmh import _lifetime
    ran = []

    class Buf(rmm.DeviceBuffer):
        def __del__(self):
            ran.append("buffer")

    class Pool(rmm.mr.PoolMemoryResource):
        def __del__(self):
            ran.append("pool")

    class Strm(rmm.Stream):
        def __del__(self):
            ran.append("stream")
            super().__del__()

    base = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    gc.collect()
    live = len(_lifetime._live)
    for _ in range(3):
        b = Buf(size=1000, mr=base)  # no cycle
        del b
        mr = rmm.mr.StatisticsResourceAdaptor(base)
        b = Buf(mr=mr)  # made empty, grown, in a cycle with its resource
        b.resize(1000)
        mr.keep = b
        del b, mr
        p = Pool(base, 1 << 20)
        b = rmm.DeviceBuffer(size=1000, mr=p)
        del b, p
        s = Strm()
        del s
    gc.collect()
    assert ran.count("buffer") == 6 and ran.count("pool") == 3 and ran.count("stream") == 3
    counts = base.allocation_counts
    assert (counts.current_bytes, counts.current_count) == (0, 0)
    assert len(_lifetime._live) == live  # every C object went


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # (the raising __del__)
def test_a_mixin_s_del_is_chained_and_a_del_that_keeps_the_object_keeps_its_memory():
    """A __del__ a subclass inherits from a mixin is chained as its own (review 28: a pool's chunk
    and a stream leaked); a __del__ that keeps the object (a recycling cache) leaves it its memory
    and contents, as RMM's __dealloc__, which runs only when the object really goes (review 28:
    the kept buffer came back empty)."""
    from rmmh import _lifetime
    ran, cache = [], []

    class LogDel:
        def __del__(self):
            ran.append(type(self).__name__)

    class Buf(LogDel, rmm.DeviceBuffer):
        pass

    class Pool(LogDel, rmm.mr.PoolMemoryResource):
        pass

    class Strm(LogDel, rmm.Stream):
        pass

    class Recycled(rmm.DeviceBuffer):
        def __del__(self):
            cache.append(self)

    class Raising(rmm.DeviceBuffer):
        def __del__(self):
            raise KeyError("a __del__ that raises")  # (printed as ignored; the block still goes)

    base = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    gc.collect()
    live = len(_lifetime._live)
    b = Buf(size=1000, mr=base)
    del b
    p = Pool(base, 1 << 20)
    del p
    s = Strm()
    del s
    gc.collect()
    assert sorted(ran) == ["Buf", "Pool", "Strm"]
    counts = base.allocation_counts
    assert (counts.current_bytes, counts.current_count) == (0, 0)
    assert len(_lifetime._live) == live
    x = Raising(size=2000, mr=base)
    del x
    gc.collect()
    assert base.allocation_counts.current_bytes == 0
    r = Recycled(size=4096, mr=base)
    r.copy_from_host(b"x" * 4096)
    del r
    gc.collect()
    assert len(cache) == 1 and cache[0].size == 4096 and cache[0].tobytes() == b"x" * 4096


def test_the_hooks_sweep_does_not_run_inside_a_change_of_the_table():
    """A collection on a thread that holds the per-device table's lock (a sweep of the resources
    the frameworks' hooks held, a set_per_device_resource) does not sweep again inside it: the
    nested sweep rewrote the list the outer code was iterating (red team 28's suspicion). Outside,
    a sweep lets go of a held resource the hooks no longer use."""
    from rmmh import _memory_resource as m
    mr = rmm.mr.CudaMemoryResource()  # not current, no hook blocks: a sweep lets it go
    m._hook_held.append(mr)
    try:
        with m._table_lock:
            m._gc_sweep("stop", {})
            assert any(x is mr for x in m._hook_held)
        m._gc_sweep("stop", {})
        assert not any(x is mr for x in m._hook_held)
    finally:
        m._hook_held[:] = [x for x in m._hook_held if x is not mr]


def test_a_resource_dropped_beside_another_thread_s_collection_goes_at_once():
    """A pool whose last reference goes on one thread while another thread's garbage collection
    runs (here held in a finalizer) gives its memory back at once: only the collecting thread's
    finalizers wait for the collection's end. Until 2026-11-30 the flag was the process's, and the
    pool lived on until the other collection ended (rmm.reinitialize then could not reuse its
    memory; red team 29)."""
    base = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    in_collection, go = threading.Event(), threading.Event()

    class Slow:
        def __init__(self):
            self.me = self  # a cycle: only a collection frees it

        def __del__(self):
            in_collection.set()
            go.wait(30)

    def collect():
        Slow()
        gc.collect()

    t = threading.Thread(target=collect, daemon=True)
    t.start()
    try:
        assert in_collection.wait(30)
        pool = rmm.mr.PoolMemoryResource(base, 1 << 20)
        assert base.allocation_counts.current_bytes == 1 << 20
        del pool
        assert base.allocation_counts.current_bytes == 0
    finally:
        go.set()
        t.join(30)


def test_owners_whose_callables_share_much_are_walked_once(monkeypatch):
    """Owners of CallbackMemoryResources made of their own bound methods, sharing one large table,
    are all freed by one collection, and what their callables reach is walked once for all of
    them (rmmh._lifetime._reach_owners): counted here as gc.get_referents calls, which were one walk
    per resource until 2026-11-30 (400 owners sharing 40,000 entries made a 20 s collection; red
    team 29)."""
    import types
    from rmmh import _lifetime
    base = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    table = {i: str(i) for i in range(5000)}

    class Owner:
        def __init__(self):
            self.table = table
            self.mr = rmm.mr.CallbackMemoryResource(self.alloc, self.free)
            self.buf = rmm.DeviceBuffer(size=256, mr=self.mr)

        def alloc(self, n, s):
            return base.allocate(n, s)

        def free(self, p, n, s):
            base.deallocate(p, n, s)

    owners = [Owner() for _ in range(200)]
    assert base.allocation_counts.current_count == 200
    calls = [0]

    def counting(*objs):
        calls[0] += 1
        return gc.get_referents(*objs)

    gc.collect()
    monkeypatch.setattr(_lifetime, "_gc", types.SimpleNamespace(get_referents=counting))
    del owners
    gc.collect()
    monkeypatch.undo()
    assert base.allocation_counts.current_count == 0  # every owner, resource and buffer went
    assert 0 < calls[0] < 50000  # (one walk per resource: more than 200 x 5000)


@pytest.mark.skipif(not rmm._device_buffer.ACCELERATED, reason="the C extension's deallocator (without it a "
                    "buffer whose subclass's __del__ resurrected it once keeps its block: its finalizer ran)")
def test_an_empty_buffer_grown_by_resize_frees_its_block_in_a_cycle():
    # red team 36c: the C extension cached a buffer's resource (its handle and holds) only when
    # the buffer was made with a size; one made empty and grown by resize() that died in a
    # collected cycle after its resource's slots were cleared kept its block, and the pool its
    # upstream chunk (a subclass whose __del__ recycles the buffer once, so that the extension's
    # deallocator is what frees it)
    cache = []

    class Recycled(rmm.DeviceBuffer):
        __slots__ = ("me",)

        def __del__(self):
            if not cache and not getattr(Recycled, "done", False):
                Recycled.done = True
                cache.append(self)

    stats = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    pool = rmm.mr.PoolMemoryResource(stats, initial_pool_size=1 << 20)
    b = Recycled(size=0, mr=pool)
    del b
    b = cache.pop()
    b.resize(4096)
    assert pool.info().used_bytes == 4096
    pool.__dict__["buf"] = b  # pool -> buffer -> pool
    b.me = b
    del b, pool
    gc.collect()
    gc.collect()
    assert stats.allocation_counts.current_bytes == 0


def test_a_subinterpreter_leaves_the_extension_to_the_main_interpreter():
    # red team 36c: the C extension's bound objects are the process's; a subinterpreter that
    # imported rmmh replaced them, and the main interpreter's buffers then called the dead
    # interpreter's functions. A subinterpreter now gets the ctypes path.
    interpreters = None
    for name in ("_xxsubinterpreters", "_interpreters"):
        try:
            interpreters = __import__(name)
            break
        except ImportError:
            pass
    if interpreters is None:
        pytest.skip("no subinterpreter module in this Python")
    iid = interpreters.create()
    try:
        interpreters.run_string(iid, "import rmmh\nb = rmmh.DeviceBuffer(size=32)\nassert b.size == 32\n")
    except Exception as e:  # (an interpreter that cannot import it at all tests nothing)
        interpreters.destroy(iid)
        pytest.skip("rmmh cannot be imported in a subinterpreter here: %s" % e)
    interpreters.destroy(iid)
    b = rmm.DeviceBuffer(size=64, stream=rmm.Stream())
    assert b.size == 64 and type(b.stream) is rmm.Stream
    assert b.mr is rmm.mr.get_current_device_resource()
    del b
    gc.collect()
