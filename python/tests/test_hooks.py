"""The C hooks PyTorch and CuPy call (src/rmmh_hooks.c), called here through ctypes exactly as
the frameworks call them, on any backend: they allocate from the current resource of the device,
free to the resource a block came from, switch devices, keep a replaced resource alive while they
hold its blocks, count, and survive threads swapping resources under them. The frameworks
themselves are in test_hooks_gpu.py."""
import ctypes
import gc
import os
import shutil
import subprocess
import threading
import weakref

import pytest

import rmmh as rmm
from rmmh import _lib
from rmmh._cuda import gpu
import rmmh.allocators as allocators
from conftest import HOST, child_env, fail_next, requires_two_devices, run_child

V, S, I = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
# the signatures PyTorch (CUDAPluggableAllocator.h) and CuPy (memory.pyx) call them with
torch_alloc = ctypes.CFUNCTYPE(V, S, I, V)(("rmmh_torch_alloc", _lib.lib))
torch_free = ctypes.CFUNCTYPE(None, V, S, I, V)(("rmmh_torch_free", _lib.lib))
cupy_malloc = ctypes.CFUNCTYPE(V, V, S, I)(("rmmh_cupy_malloc", _lib.lib))
cupy_free = ctypes.CFUNCTYPE(None, V, V, I)(("rmmh_cupy_free", _lib.lib))
# the CuPy hooks as CuPy's Cython calls them: the GIL held, an exception checked after the call
checked_malloc = ctypes.PYFUNCTYPE(V, V, S, I)(("rmmh_cupy_malloc", _lib.lib))
checked_free = ctypes.PYFUNCTYPE(None, V, V, I)(("rmmh_cupy_free", _lib.lib))


class CycleArray:
    """A CuPy array in a reference cycle: freed (through the hook) when the collector runs."""

    def __init__(self, n):
        self.ptr = checked_malloc(None, n, 0)
        self.me = self

    def __del__(self):
        checked_free(None, self.ptr, 0)


@pytest.fixture(autouse=True)
def no_blocks_left():
    """Every test gives back what it took; held resources are let go."""
    yield
    gc.collect()
    assert allocators.live_blocks() == 0
    rmm.reinitialize()
    assert allocators.release_held_resources() == 0


class Recorder:
    """A CallbackMemoryResource over a pool that records (what, bytes, stream, current device)."""

    def __init__(self):
        self.pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
        self.events = []

        def alloc(n, stream):
            self.events.append(("alloc", n, stream.handle, gpu.getDevice()))
            return self.pool.allocate(n, stream)

        def free(p, n, stream):
            self.events.append(("free", n, stream.handle, gpu.getDevice()))
            self.pool.deallocate(p, n, stream)

        self.mr = rmm.mr.CallbackMemoryResource(alloc, free)


def test_torch_pair_uses_the_current_resource():
    stats = rmm.mr.StatisticsResourceAdaptor(
        rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20))
    rmm.mr.set_current_device_resource(stats)
    p = torch_alloc(1000, 0, None)
    assert p and stats.allocation_counts.current_bytes == 1000
    n, dev, stream = S(), I(), V(1)
    assert _lib.rmmh_hooks_lookup(p, ctypes.byref(n), ctypes.byref(dev), ctypes.byref(stream)) == 1
    assert (n.value, dev.value, stream.value) == (1000, 0, None)
    h = allocators.hook_statistics(0)
    assert (h.current_bytes, h.current_count) == (1000, 1) and h.peak_bytes >= 1000
    torch_free(p, 1000, 0, None)
    assert stats.allocation_counts.current_bytes == 0
    assert allocators.hook_statistics(0).current_count == 0
    assert torch_alloc(0, 0, None) is None  # 0 bytes: NULL, as PyTorch expects


def test_the_block_map_gives_back_its_host_memory_after_a_peak():
    """The block map's tables grew with the live blocks and never shrank: a peak of many small
    blocks held its host memory (40 bytes a slot, two slots a block or more) for good."""
    rmm.mr.set_current_device_resource(rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 64 << 20))
    before = _lib.rmmh_hooks_map_bytes()
    blocks = [torch_alloc(256, 0, None) for _ in range(50000)]
    assert all(blocks) and allocators.live_blocks() == 50000
    peak = _lib.rmmh_hooks_map_bytes()
    assert peak >= 2 * 50000 * 40
    for p in blocks[:49000]:
        torch_free(p, 256, 0, None)
    assert allocators.live_blocks() == 1000
    try:
        for p in blocks[49000:]:  # each still found after the tables shrank under it
            n = S()
            assert _lib.rmmh_hooks_lookup(p, ctypes.byref(n), None, None) == 1 and n.value == 256
        assert _lib.rmmh_hooks_map_bytes() <= peak // 8
    finally:
        for p in blocks[49000:]:
            torch_free(p, 256, 0, None)
    assert _lib.rmmh_hooks_map_bytes() <= max(before, 64 * 64 * 40)


def test_cupy_pair_uses_the_thread_stream():
    rec = Recorder()
    rmm.mr.set_current_device_resource(rec.mr)
    s = rmm.Stream()
    p = cupy_malloc(None, 512, 0)  # the process default: stream 0
    was = I()
    _lib.rmmh_cupy_set_stream(s.handle, 1)
    try:
        assert _lib.rmmh_cupy_get_stream(ctypes.byref(was)) == s.handle and was.value == 1
        q = cupy_malloc(None, 256, 0)
        # another thread still sees the default
        seen = []
        t = threading.Thread(target=lambda: seen.append(_lib.rmmh_cupy_get_stream(None)))
        t.start()
        t.join()
        assert seen == [None]
    finally:
        _lib.rmmh_cupy_set_stream(None, 0)
    cupy_free(None, q, 0)
    cupy_free(None, p, 0)
    assert [e[:3] for e in rec.events] == [("alloc", 512, 0), ("alloc", 256, s.handle),
                                          ("free", 256, s.handle), ("free", 512, 0)]


def test_unknown_frees_are_ignored():
    cupy_free(None, 0x1234500, 0)
    assert _lib.rmm_last_status() == 8  # CORRUPTION, and nothing freed
    cupy_free(None, ctypes.c_void_p(-1 & ((1 << 64) - 1)), 0)  # a failed malloc's -1
    torch_free(None, 0, 0, None)


def test_failures_return_null_and_count():
    rmm.mr.set_current_device_resource(
        rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 4096))
    before = allocators.hook_statistics().failed
    assert torch_alloc(1 << 20, 0, None) is None
    assert _lib.rmm_last_status() == 4  # OUT_OF_MEMORY
    assert cupy_malloc(None, 1 << 20, 0) is None
    _lib.rmmh_cupy_fail_next()
    assert cupy_malloc(None, 8, 0) is None
    assert allocators.hook_statistics().failed == before + 3
    assert allocators.live_blocks() == 0
    assert torch_alloc(16, 99, None) is None  # a device that does not exist


def test_zero_bytes_are_no_allocation_and_no_failure():
    before = allocators.hook_statistics().failed
    _lib.rmm_set_last_error(0, b"untouched")
    assert torch_alloc(0, 0, None) is None
    assert cupy_malloc(None, 0, 0) is None
    assert allocators.hook_statistics().failed == before
    assert _lib.last_error() == "untouched"
    assert allocators.live_blocks() == 0


def test_resources_the_hooks_hold_blocks_of_survive_interpreter_exit():
    # what atexit runs, then what module teardown does (the table's dict and the held list are
    # cleared, the Python owners go); a block PyTorch frees after that must find its pool alive
    from rmmh import _lifetime, _memory_resource as m
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    quiet = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    rmm.mr.set_current_device_resource(pool)
    p = torch_alloc(4096, 0, None)
    assert p
    m._hook_held.append(quiet)  # held, but with no blocks out: destroyed as usual
    refs, quiet_refs = pool._refs, quiet._refs
    m._keep_at_exit()
    assert refs[-1] is True and quiet_refs[-1] is not True
    m._per_device_mrs.clear()
    m._hook_held.clear()
    del pool, quiet
    gc.collect()
    assert refs[0].key in _lifetime._live  # the pool was not destroyed
    assert not quiet_refs  # the other one was (its Record ran)
    torch_free(p, 4096, 0, None)  # PyTorch frees late: into a live pool
    assert allocators.live_blocks() == 0
    rmm.reinitialize()  # the test's own cleanup: the table back to the default, the pool freed
    assert len(refs) == 1  # the Record, under the hold added at exit (the owner popped one)
    _lifetime.release(refs)  # that hold, let go by hand: the pool is destroyed now
    assert not refs


def test_free_goes_to_the_resource_it_came_from_and_keeps_it_alive():
    stats = rmm.mr.StatisticsResourceAdaptor(
        rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20))
    rmm.mr.set_current_device_resource(stats)
    p = torch_alloc(4096, 0, None)
    q = cupy_malloc(None, 100, 0)
    ref = weakref.ref(stats)
    pool_ref = weakref.ref(stats.upstream_mr)
    del stats
    rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())  # Python lets go of it
    gc.collect()
    assert ref() is not None and any(m is ref() for m in allocators.held_resources())
    assert ref().allocation_counts.current_count == 2
    torch_free(p, 4096, 0, None)
    assert allocators.release_held_resources() == 1  # q is still out
    cupy_free(None, q, 0)
    assert ref().allocation_counts.current_count == 0
    gc.collect()  # the collector's callback lets go of it
    assert ref() is None and pool_ref() is None
    assert allocators.held_resources() == []


def test_held_resource_made_current_again():
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    rmm.mr.set_current_device_resource(pool)
    p = torch_alloc(256, 0, None)
    rmm.reinitialize()
    assert any(m is pool for m in allocators.held_resources())
    rmm.mr.set_current_device_resource(pool)  # held by the table now
    assert allocators.held_resources() == []
    q = torch_alloc(256, 0, None)
    rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())
    assert any(m is pool for m in allocators.held_resources())  # counted again: 2 blocks
    torch_free(p, 256, 0, None)
    assert allocators.release_held_resources() == 1
    torch_free(q, 256, 0, None)
    assert allocators.release_held_resources() == 0
    pool.validate()


def test_memory_stats():
    import rmmh.allocators.torch as ta
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20, growth="on_demand")
    rmm.mr.set_current_device_resource(rmm.mr.StatisticsResourceAdaptor(pool))
    ta.reset_peak_memory_stats()
    p = torch_alloc(3000, 0, None)
    q = torch_alloc(5000, 0, None)
    torch_free(q, 5000, 0, None)
    s = ta.memory_stats()
    assert s["allocated_bytes.all.current"] == 3000 == ta.memory_allocated(0)
    assert s["allocated_bytes.all.peak"] == 8000 == ta.max_memory_allocated("cuda:0")
    assert s["allocation.all.current"] == 1
    assert s["reserved_bytes.all.current"] == pool.info().pool_bytes == ta.memory_reserved()
    assert s["reserved_bytes.all.peak"] == ta.max_memory_reserved() >= 1 << 20
    assert s["statistics.current_bytes"] == 3000 and s["statistics.peak_bytes"] == 8000
    ta.reset_peak_memory_stats()
    assert ta.max_memory_allocated() == 3000
    assert "allocated_bytes.all.current" in ta.memory_summary()
    torch_free(p, 3000, 0, None)


@pytest.mark.parametrize("device", ["cpu", "garbage", "cuda:", "cuda:x", "cuda:-1", "cuda0"])
def test_torch_statistics_refuse_other_devices(device):
    """As PyTorch: a device that is not "cuda" or "cuda:N" is a ValueError, not the current
    device's numbers."""
    import rmmh.allocators.torch as ta
    for fn in (ta.memory_stats, ta.memory_allocated, ta.max_memory_allocated, ta.memory_reserved,
               ta.max_memory_reserved, ta.reset_peak_memory_stats, ta.memory_summary):
        with pytest.raises(ValueError):
            fn(device)
    assert ta.memory_stats("cuda") == ta.memory_stats("cuda:0") == ta.memory_stats(0)


def test_torch_statistics_refuse_a_device_that_does_not_exist():
    """A device past the count is an error for every statistic, as in PyTorch (all but
    memory_stats answered 0; a red team's find)."""
    import rmmh.allocators.torch as ta
    n = gpu.getDeviceCount()
    for fn in (ta.memory_stats, ta.memory_allocated, ta.max_memory_allocated, ta.reset_peak_memory_stats):
        with pytest.raises(ValueError):
            fn(n)
    with pytest.raises(ValueError):
        allocators.hook_statistics(n)


@requires_two_devices
def test_hooks_on_two_devices():
    rec = Recorder()
    gpu.setDevice(1)
    try:
        rec1 = Recorder()  # its pool on device 1
    finally:
        gpu.setDevice(0)
    rmm.mr.set_per_device_resource(0, rec.mr)
    rmm.mr.set_per_device_resource(1, rec1.mr)
    p = torch_alloc(300, 1, None)  # device 0 current: PyTorch asks for device 1
    assert gpu.getDevice() == 0
    assert rec1.events == [("alloc", 300, 0, 1)] and rec.events == []
    q = cupy_malloc(None, 200, 0)
    gpu.setDevice(1)
    try:
        torch_free(q, 200, 0, None)  # freed with device 1 current: device 0 made current for it
        assert gpu.getDevice() == 1
    finally:
        gpu.setDevice(0)
    torch_free(p, 300, 1, None)
    assert rec.events[-1] == ("free", 200, 0, 0)
    assert rec1.events[-1] == ("free", 300, 0, 1)
    h0, h1 = allocators.hook_statistics(0), allocators.hook_statistics(1)
    assert h0.current_bytes == h1.current_bytes == 0 and h1.total_bytes >= 300


@pytest.mark.skipif(not HOST, reason="a resource-swapping stress test for the host backend")
def test_threads_allocate_while_resources_change():
    """Four threads allocate and free through both hooks while the main thread keeps replacing
    the current resource: every block goes back to its own pool, no resource dies early."""
    stop = threading.Event()
    errors = []

    def worker(seed):
        held = []
        i = seed
        try:
            while not stop.is_set():
                i = (i * 1103515245 + 12345) & 0x7FFFFFFF
                n = 256 + i % 5000
                p = torch_alloc(n, 0, None) if i & 1 else cupy_malloc(None, n, 0)
                if p is None:
                    errors.append("allocation failed: %s" % _lib.last_error())
                    return
                held.append((p, n, i & 1))
                if len(held) > 16 or i & 4:
                    p, n, t = held.pop(0)
                    torch_free(p, n, 0, None) if t else cupy_free(None, p, 0)
        finally:
            for p, n, t in held:
                torch_free(p, n, 0, None) if t else cupy_free(None, p, 0)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    pools = []
    try:
        for k in range(200):
            pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20,
                                             growth="on_demand")
            pools.append(weakref.ref(pool))
            rmm.mr.set_current_device_resource(pool)
            del pool
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    assert allocators.live_blocks() == 0
    rmm.reinitialize()
    gc.collect()
    assert allocators.held_resources() == []
    assert all(r() is None for r in pools)


def test_cupy_malloc_raises_when_configured():
    """The raise mode of the CuPy hook (rmmh.allocators.cupy turns it on where CuPy propagates
    the exception): on failure it sets a Python exception and returns -1. A ctypes function with
    Python's calling convention checks for the exception as Cython 3 does."""
    class Failure(MemoryError):
        def __init__(self, size, status):
            super().__init__("failed %d: %s" % (size, _lib.last_error()))
            self.size, self.status = size, status

    api = ctypes.pythonapi
    addr = lambda f: ctypes.cast(f, ctypes.c_void_p).value  # noqa: E731
    _lib.check(_lib.rmmh_cupy_configure_errors(1, addr(api.PyErr_SetObject),
                                               addr(api.Py_BuildValue), addr(api.Py_DecRef),
                                               id(Failure)))
    try:
        p = checked_malloc(None, 64, 0)  # success: no exception, a pointer
        assert p and allocators.lookup(p)[0] == 64
        cupy_free(None, p, 0)
        _lib.rmmh_cupy_fail_next()
        with pytest.raises(Failure) as info:
            checked_malloc(None, 4096, 0)
        assert info.value.size == 4096 and info.value.status == 4
        assert "rmmh_cupy_fail_next" in str(info.value)
        for huge in (1 << 63, (1 << 64) - 1):  # (a red team's find: reported as negative)
            with pytest.raises(Failure) as info:
                checked_malloc(None, huge, 0)
            assert info.value.size == huge
    finally:
        _lib.check(_lib.rmmh_cupy_configure_errors(0, None, None, None, None))
    _lib.rmmh_cupy_fail_next()
    assert cupy_malloc(None, 8, 0) is None  # off again: NULL


def test_cupy_malloc_with_the_gil_held_does_not_deadlock_on_a_callback_below_a_pool():
    """CuPy calls rmmh_cupy_malloc and rmmh_cupy_free with the GIL held (PYFUNCTYPE here keeps it
    too). Thread B holds the pool's lock while the pool's upstream, a Python callback, waits for
    the GIL; the hook on thread A must not spin on that lock with the GIL held (it makes the
    nowait call, then the ordinary one with the GIL released). Hangs without that: the test ends
    with a timeout on the join below."""
    base = rmm.mr.CudaMemoryResource()
    entered, release = threading.Event(), threading.Event()

    def alloc(n, stream):
        entered.set()
        release.wait(5)  # the GIL is let go here while the pool's lock is held
        return base.allocate(n, stream)

    cb = rmm.mr.CallbackMemoryResource(alloc, lambda p, n, s: base.deallocate(p, n, s))
    pool = rmm.mr.PoolMemoryResource(cb, 0)
    rmm.mr.set_current_device_resource(pool)
    got = {}
    b = threading.Thread(target=lambda: got.setdefault("b", rmm.DeviceBuffer(size=1 << 20)))
    b.start()
    assert entered.wait(10)
    a_done = threading.Event()

    def thread_a():
        got["a"] = checked_malloc(None, 4096, 0)  # waits for the pool's lock with the GIL released
        checked_free(None, got["a"], 0)
        a_done.set()

    a = threading.Thread(target=thread_a, daemon=True)
    a.start()
    assert not a_done.wait(0.3)  # A waits for the lock (B is inside the pool's growth)
    release.set()
    a.join(20)
    b.join(20)
    assert a_done.is_set() and not a.is_alive() and not b.is_alive()
    assert got["a"] and got["b"].size == 1 << 20
    del got
    rmm.reinitialize()


def test_hooks_after_a_subinterpreter_do_not_abort():
    """The hooks tell whether their thread holds the GIL by its current thread state: with
    PyGILState_Check (which answers 1 on every thread once a subinterpreter exists, and after the
    interpreter was finalized) a hook called without the GIL released it again, a fatal error
    (the process aborted). A child: a malloc and free with the GIL released after a subinterpreter
    was made. (A free from a C atexit handler after finalization aborted the same way: the review's
    reproducer needs a C shim, not kept here.)"""
    try:
        import _xxsubinterpreters  # noqa: F401  (3.8-3.12; _interpreters from 3.13)
        mod = "_xxsubinterpreters"
    except ImportError:
        try:
            import _interpreters  # noqa: F401
            mod = "_interpreters"
        except ImportError:
            pytest.skip("no subinterpreter module")
    out = run_child("""
        import ctypes, sys
        import rmmh
        from rmmh import _lib
        V, S, I = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
        malloc = ctypes.CFUNCTYPE(V, V, S, I)(("rmmh_cupy_malloc", _lib.lib))  # GIL released
        free = ctypes.CFUNCTYPE(None, V, V, I)(("rmmh_cupy_free", _lib.lib))
        si = __import__(sys.argv[1])
        si.create()
        p = malloc(None, 4096, 0)
        assert p
        free(None, p, 0)
        print("OK", flush=True)
        """, mod)
    assert "OK" in out


def _subinterpreter_module():
    for mod in ("_xxsubinterpreters", "_interpreters"):  # 3.8-3.12; 3.13 on
        try:
            __import__(mod)
            return mod
        except ImportError:
            pass
    pytest.skip("no subinterpreter module")


def test_cupy_raise_mode_without_the_gil_returns_null_after_a_subinterpreter():
    """The CuPy hook's raise mode sets a Python exception only where its thread holds the GIL.
    Until helper ABI 7 it asked PyGILState_Check, which answers 1 on every thread once a
    subinterpreter exists: a failing malloc called with the GIL released set the exception with no
    thread state (the child crashed). A child: a subinterpreter, raise mode on, a failure with the
    GIL released (NULL, nothing raised), then one with the GIL held (the exception)."""
    out = run_child("""
        import ctypes, sys
        import rmmh
        from rmmh import _lib
        V, S, I = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
        class Failure(MemoryError):
            def __init__(self, size, status):
                super().__init__("failed %d" % size)
                self.size = size
        api = ctypes.pythonapi
        addr = lambda f: ctypes.cast(f, ctypes.c_void_p).value
        released = ctypes.CFUNCTYPE(V, V, S, I)(("rmmh_cupy_malloc", _lib.lib))
        held = ctypes.PYFUNCTYPE(V, V, S, I)(("rmmh_cupy_malloc", _lib.lib))
        __import__(sys.argv[1]).create()
        _lib.check(_lib.rmmh_cupy_configure_errors(1, addr(api.PyErr_SetObject), addr(api.Py_BuildValue),
                                                   addr(api.Py_DecRef), id(Failure)))
        _lib.rmmh_cupy_fail_next()
        assert released(None, 4096, 0) is None
        _lib.rmmh_cupy_fail_next()
        try:
            held(None, 8192, 0)
        except Failure as e:
            assert e.size == 8192
            print("OK", flush=True)
        """, _subinterpreter_module())
    assert "OK" in out


def test_cupy_configure_errors_refuses_a_missing_function():
    """Raise mode needs every function and the type: one missing is INVALID_ARGUMENT, and the mode
    stays off (a failing malloc returns NULL)."""
    api = ctypes.pythonapi
    addr = lambda f: ctypes.cast(f, ctypes.c_void_p).value  # noqa: E731
    st = _lib.rmmh_cupy_configure_errors(1, addr(api.PyErr_SetObject), None, addr(api.Py_DecRef), id(MemoryError))
    assert st == 2 and "NULL" in _lib.last_error()
    _lib.rmmh_cupy_fail_next()
    assert cupy_malloc(None, 8, 0) is None


def test_a_callback_exception_of_a_failed_hook_call_is_not_raised_later():
    """A Python callback that raised while serving a hook call (the hook returns NULL; PyTorch and
    CuPy raise their own error): its exception belongs to that call, and a later, unrelated failure
    on the thread raises its own error (it raised the old exception, a RuntimeError for an out of
    memory; a red team's find)."""
    M = rmm.mr

    def alloc(n, s):
        raise MemoryError("STALE: allocate_func of a hook call")

    def spill(nbytes):
        raise RuntimeError("STALE: a spill callback of a hook call")

    for mr in (M.CallbackMemoryResource(alloc, lambda p, n, s: None),
               M.FailureCallbackResourceAdaptor(M.LimitingResourceAdaptor(M.CudaMemoryResource(), 1000), spill)):
        M.set_current_device_resource(mr)
        assert not torch_alloc(5000, 0, None)
        assert not cupy_malloc(None, 5000, 0)
        M.set_current_device_resource(M.CudaMemoryResource())
        with pytest.raises(MemoryError) as caught:
            M.LimitingResourceAdaptor(M.CudaMemoryResource(), 10).allocate(100)
        assert "STALE" not in str(caught.value) and "limiting" in str(caught.value)
    # a failure inside a Python call still raises its callback's exception
    with pytest.raises(RuntimeError, match="spill callback"):
        M.FailureCallbackResourceAdaptor(M.LimitingResourceAdaptor(M.CudaMemoryResource(), 1000), spill).allocate(5000)


# ---- red team of 2026-11-29 --------------------------------------------------------------------

def test_a_tabled_resources_finalizer_called_by_hand_leaves_the_hooks_a_live_resource():
    """mr.__del__() called by hand while mr is the device's resource (the C table reaches it) or
    held for the hooks' blocks lets go of nothing: the hooks' next allocation and free use a live
    resource (a red team's find: the C pool was destroyed under the table; heap-use-after-free in
    the next hook allocation)."""
    out = run_child("""
        import ctypes
        import rmmh as rmm, rmmh.allocators as A
        from rmmh import _lib
        V, S, I = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
        alloc = ctypes.CFUNCTYPE(V, S, I, V)(("rmmh_torch_alloc", _lib.lib))
        free = ctypes.CFUNCTYPE(None, V, S, I, V)(("rmmh_torch_free", _lib.lib))
        pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
        rmm.mr.set_current_device_resource(pool)
        pool.__del__()
        p = alloc(4096, 0, None)
        assert p and pool.info().used_bytes == 4096
        rmm.reinitialize()  # pool is now held for the hooks' block
        assert any(m is pool for m in A.held_resources())
        pool.__del__()
        free(p, 4096, 0, None)
        assert pool.info().used_bytes == 0 and A.lookup(p) is None
        print("OK", flush=True)
        """)
    assert "OK" in out


SHIM = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static void *(*A)(size_t, int, void *);
static void (*F)(void *, size_t, int, void *);
static void *block;
static void late(void) { /* after Py_Finalize; with SHIM_ALLOC_FIRST an allocation the limit refuses first */
    void *p = getenv("SHIM_ALLOC_FIRST") ? A(8192, 0, NULL) : NULL;
    F(block, 4096, 0, NULL);
    fprintf(stdout, "late free made; late alloc %s\n", (p || A(100, 0, NULL)) ? "gave a block" : "gave NULL");
    fflush(stdout);
}
int shim_init(const char *lib) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (!h) return 0;
    *(void **)&A = dlsym(h, "rmmh_torch_alloc");
    *(void **)&F = dlsym(h, "rmmh_torch_free");
    block = A(4096, 0, NULL);
    atexit(late);
    return block != NULL;
}
"""


@pytest.mark.parametrize("kind", ["callback", "failure_callback"])
def test_hooks_called_after_finalization_call_no_python(tmp_path, kind):
    """A framework's C atexit handler (or C++ static destructor) frees a tensor and allocates after
    Py_Finalize: a resource whose callbacks are Python functions does not call them then (the free
    leaves the block, the allocation fails) instead of making a thread state in a freed
    interpreter (a red team's find: a segfault at exit)."""
    cc = shutil.which(os.environ.get("CC", "gcc"))
    if not cc:
        pytest.skip("no C compiler")
    shim = tmp_path / "late_shim.so"
    src = tmp_path / "late_shim.c"
    src.write_text(SHIM)
    subprocess.run([cc, "-fPIC", "-shared", str(src), "-o", str(shim), "-ldl"], check=True,
                   capture_output=True)
    out = run_child("""
        import ctypes, sys
        import rmmh as rmm
        from rmmh import _lib
        base = rmm.mr.CudaMemoryResource()
        if sys.argv[1] == "callback":
            mr = rmm.mr.CallbackMemoryResource(lambda n, s: base.allocate(n, s),
                                               lambda p, n, s: base.deallocate(p, n, s))
        else:
            limited = rmm.mr.LimitingResourceAdaptor(base, 4096)
            mr = rmm.mr.FailureCallbackResourceAdaptor(limited, lambda n: False)
        rmm.mr.set_current_device_resource(mr)
        shim = ctypes.CDLL(sys.argv[2])
        assert shim.shim_init(_lib.LIBRARY_PATH.encode())
        print("exiting", flush=True)
        """, kind, str(shim), env=dict(child_env(), SHIM_ALLOC_FIRST="1") if kind != "callback" else None)
    assert out.startswith("exiting") and "late free made" in out


def test_a_hook_free_refused_inside_a_pools_python_upstream_is_made_later():
    """CuPy frees an array the collector collects while a pool's Python upstream runs with the
    pool's lock held; the pool refuses that free (no re-entry from below). The hooks keep it and
    make it at their next call, so neither the block nor the pool is held for good (a red team's
    find, 2026-11-29: the block went back to the hooks' map, and the pool stayed held after
    reinitialize)."""
    base = rmm.mr.CudaMemoryResource()
    refused = []

    def upstream_alloc(n, s):
        before = allocators.live_blocks()
        gc.collect()  # frees `a` (below) from inside the pool's upstream
        refused.append(allocators.live_blocks() < before)  # (taken from the map, not freed)
        return base.allocate(n, s)

    cb = rmm.mr.CallbackMemoryResource(upstream_alloc, lambda p, n, s: base.deallocate(p, n, s))
    pool = rmm.mr.PoolMemoryResource(cb, 0, growth="on_demand")
    rmm.mr.set_current_device_resource(pool)
    gc.disable()
    try:
        a = CycleArray(4096)
        del a  # garbage (a cycle), not collected yet
        b = CycleArray(1 << 22)  # the pool grows: the collector runs in its upstream
        b.me = None
        del b
    finally:
        gc.enable()
    assert any(refused)  # a's free was made there, and refused by the pool
    c = CycleArray(64)  # the next hook call makes it
    c.me = None
    del c
    gc.collect()
    assert allocators.live_blocks() == 0 and pool.info().used_bytes == 0
    assert allocators.hook_statistics(0).current_bytes == 0
    rmm.reinitialize()
    del pool, cb
    gc.collect()
    assert allocators.held_resources() == []


@pytest.mark.parametrize("how", ["run_deferred_frees", "trim", "device_buffer"])
def test_a_refused_hook_free_is_made_without_another_hook_call(how):
    """The same refused free, made where the README says: before a pool's trim, by
    rmmh._lifetime.run_deferred_frees, and before a failed DeviceBuffer allocation is tried again,
    not only at the next hook call (red team 33: a program that stopped using the hooks kept the
    block, a DeviceBuffer that needed its memory failed, and trim could not give it back)."""
    from rmmh import _lifetime

    limit = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 3 << 20)

    def upstream_alloc(n, s):
        gc.collect()  # frees `a` (below) from inside the pool's upstream: refused, deferred
        return limit.allocate(n, s)

    cb = rmm.mr.CallbackMemoryResource(upstream_alloc, lambda p, n, s: limit.deallocate(p, n, s))
    pool = rmm.mr.PoolMemoryResource(cb, 0, maximum_pool_size=3 << 20, growth="on_demand")
    rmm.mr.set_current_device_resource(pool)
    gc.disable()
    try:
        a = CycleArray(2 << 20)
        del a  # garbage (a cycle), not collected yet
        b = CycleArray(512 << 10)  # the pool grows: the collector runs in its upstream
        b.me = None
    finally:
        gc.enable()
    assert pool.info().used_bytes >= (2 << 20) + (512 << 10)  # a's free is deferred
    if how == "run_deferred_frees":
        assert _lifetime.run_deferred_frees() == 0
    elif how == "trim":
        pool.trim()
    else:
        buf = rmm.DeviceBuffer(size=2 << 20)  # needs a's memory: fails, the frees are made, retried
        assert pool.info().used_bytes >= (2 << 20) + (512 << 10)
        del buf
    assert pool.info().used_bytes == 512 << 10  # b alone, with no hook call since
    assert allocators.live_blocks() == 1
    del b
    gc.collect()
    assert pool.info().used_bytes == 0
    rmm.reinitialize()
    del pool, cb
    gc.collect()
    assert allocators.held_resources() == []


@pytest.mark.skipif(not HOST, reason="injected CUDA failures (host backend)")
def test_a_hook_free_that_cannot_read_the_device_frees_where_it_is():
    # red team 46: the hook's free entered the block's device first, and a failed read of the
    # current device skipped the free and put the block back in the map, where nobody frees it
    # again (PyTorch has forgotten it): the block and its pool were kept until the process ended.
    # DeviceBuffer's free already freed where it is (rmmh_free).
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    rmm.mr.set_current_device_resource(pool)
    p = torch_alloc(4096, 0, None)
    assert p and pool.info().used_bytes == 4096
    fail_next("cudaGetDevice")
    try:
        torch_free(p, 4096, 0, None)
    finally:
        fail_next(None)
    assert pool.info().used_bytes == 0 and allocators.live_blocks() == 0


@pytest.mark.skipif(not HOST, reason="a stream destroyed under its blocks (host backend: no device work)")
def test_a_refused_hook_free_lets_go_of_the_block_and_its_resource():
    # red team 46: a free the resource refused (here: a block's stream destroyed before it, which
    # the docs forbid) went back into the map, still held; the framework never frees it again, so
    # the resource stayed held by the hooks for good. Now it is counted as a failure and let go of.
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    ref = weakref.ref(pool)
    rmm.mr.set_current_device_resource(pool)
    s = rmm.Stream()
    p = torch_alloc(4096, 0, s.handle)
    assert p and allocators.live_blocks() == 1
    del s
    gc.collect()  # the stream is destroyed under its block
    before = _lib.rmmh_hook_failures()
    torch_free(p, 4096, 0, None)
    assert _lib.rmmh_hook_failures() == before + 1  # refused: counted
    assert allocators.live_blocks() == 0
    rmm.reinitialize()
    del pool
    gc.collect()
    assert allocators.held_resources() == [] and ref() is None  # the pool could go
