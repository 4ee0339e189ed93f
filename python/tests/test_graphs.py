"""rmmh.GraphPool (rmm.h's graph pools): allocations on a registered stream come from the graph
pool whatever resource is current, its blocks free back to it, nothing else gets its memory, and
release() returns it upstream. The capture itself is tested with PyTorch in
test_allocators_torch.py and in C (tests/test_suballoc.c)."""
import threading

import pytest
from conftest import HOST, run_child

import rmmh as rmm
from rmmh import _lifetime


def test_graph_pool_routes_a_registered_stream():
    upstream = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "32MiB")
    rmm.mr.set_current_device_resource(upstream)
    try:
        pool = rmm.GraphPool(reserve="1MiB")
        assert pool.info() == (1 << 20, 0)
        s, t = rmm.Stream(), rmm.Stream()
        before = rmm.DeviceBuffer(size=5000, stream=s)  # from before the capture
        with pool.capture(s):
            buf = rmm.DeviceBuffer(size=1000, stream=s)
            assert pool.info()[1] == 1024
            other = rmm.DeviceBuffer(size=1000, stream=t)  # not registered: upstream
            assert pool.info()[1] == 1024
            with pytest.raises(rmm.InvalidArgumentError):
                with pool.capture(s):  # registered already
                    pass
            with pytest.raises(rmm.InvalidArgumentError):
                pool.release()  # a capture is registered
            del before  # freed on s inside the capture: made when the registration ends
        del other
        assert pool.info()[1] == 1024
        del buf  # back to the graph pool
        assert pool.info()[1] == 0
        with pool.capture(s):
            with pytest.raises(MemoryError, match="larger reserve"):
                rmm.DeviceBuffer(size=4 << 20, stream=s)  # past the reserve: a pool cannot grow it
            kept = rmm.DeviceBuffer(size=512 << 10, stream=s)
        assert pool.info() == (1 << 20, 512 << 10)
        pool.release()  # with a live block: the memory returns when it is freed
        pool.release()  # a no-op the second time
        with pytest.raises(ValueError):
            pool.info()
        del kept
        # a cudaMalloc upstream grows it
        grown = rmm.GraphPool(reserve="64KiB", upstream=rmm.mr.CudaMemoryResource())
        with grown.capture(s):
            big = rmm.DeviceBuffer(size=4 << 20, stream=s)
        assert grown.info() == ((64 << 10) + (4 << 20), 4 << 20)
        del big
        grown.release()
        s.synchronize()
    finally:
        rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())


def test_graph_pool_bad_arguments():
    with pytest.raises(ValueError):
        rmm.GraphPool(reserve=-1)
    with pytest.raises(TypeError):
        rmm.GraphPool(reserve=1.5)
    pool = rmm.GraphPool()
    with pytest.raises(TypeError):
        with pool.capture(None):
            pass
    pool.release()
    with pytest.raises(ValueError):
        with pool.capture(rmm.Stream()):
            pass


@pytest.mark.parametrize("upstream", ["x", 5, rmm.mr.DeviceMemoryResource])
def test_graph_pool_upstream_must_be_a_resource(upstream):
    with pytest.raises(TypeError, match="upstream"):
        rmm.GraphPool(upstream=upstream)


def test_graph_pool_is_not_copied_or_pickled():
    """A copy would share the C graph pool and release it twice."""
    import copy
    import pickle
    pool = rmm.GraphPool(reserve="1MiB")
    for make_copy in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError):
            make_copy(pool)
    assert pool.info()[0] >= 1 << 20
    pool.release()


def test_a_buffer_dropped_inside_a_capture_keeps_its_resource_until_the_capture_ends():
    """A buffer from before the capture, freed on the registered stream inside it, and its
    resource's last holder: rmm.h makes that free at the capture's end, on the resource, so the
    resource must last until then (its destruction waits: rmmh._lifetime.captures). Before
    2026-11-28 the resource went at once and the end crashed (a red team's find). In a child."""
    out = run_child("""
        import rmmh as rmm
        M = rmm.mr
        s = rmm.Stream()
        for _ in range(20):
            mr = M.PoolMemoryResource(M.CudaMemoryResource(), initial_pool_size=1 << 20)
            buf = rmm.DeviceBuffer(size=1000, stream=s, mr=mr)
            del mr  # the buffer holds the resource now
            gp = rmm.GraphPool(reserve=4096, upstream=M.CudaMemoryResource())
            with gp.capture(s):
                del buf  # its free waits for the capture's end; so does the resource's destruction
                assert rmm._lifetime._deferred  # (else this tests nothing)
            assert not rmm._lifetime._deferred
            gp.release()
        s.synchronize()
        print("OK", flush=True)
        """)
    assert "OK" in out


def test_release_racing_captures_on_another_thread_keeps_what_a_registration_needs():
    """release() decides whether the upstream must outlive the C pool from the count of
    registrations, which GraphPool.capture changes with its rmm_capture_begin and rmm_capture_end
    under one lock with release(): the count is C's. Before 2026-11-28 it changed outside those
    calls, and a release() in between let an upstream go that a registration's end then returned
    the pool's memory to (the child crashed within 2000 rounds, 5 runs of 5). In a child."""
    out = run_child("""
        import sys, threading
        import rmmh as rmm
        M = rmm.mr
        sys.setswitchinterval(1e-6)
        s = rmm.Stream()
        gb = rmm.GraphPool(reserve=4096, upstream=M.CudaMemoryResource())
        stop = []
        def capturer():
            while not stop:
                with gb.capture(s):
                    pass
        t = threading.Thread(target=capturer)
        t.start()
        try:
            for i in range(2000):
                up = M.PoolMemoryResource(M.CudaMemoryResource(), initial_pool_size=1 << 16)
                ga = rmm.GraphPool(reserve=4096, upstream=up)
                del up
                ga.release()
                del ga
        finally:
            stop.append(1)
            t.join()
        gb.release()
        print("OK", len(rmm.graphs._kept_upstreams), flush=True)
        """, timeout=600)
    assert "OK" in out


def test_a_buffer_dropped_while_capture_begins_keeps_its_resource():
    """The registrations are counted before rmm_capture_begin registers the stream: a buffer on it
    dropped meanwhile (here by a hook right after the C call, as another thread could, the GIL
    being let go) has its free deferred by C, and its resource waits too (a review's find: counted
    after, the resource went at once, and the capture's end freed into it: 4 crashes in 20). In a
    child (the old code crashed)."""
    out = run_child("""
        import rmmh as rmm
        from rmmh import _lib
        M = rmm.mr
        s = rmm.Stream()
        mr = M.PoolMemoryResource(M.CudaMemoryResource(), initial_pool_size=1 << 20)
        held = {"buf": rmm.DeviceBuffer(size=1000, stream=s, mr=mr)}
        del mr
        real, seen = _lib.rmm_capture_begin, []
        def begin(gp, stream):
            st = real(gp, stream)
            held.pop("buf")  # its free is deferred (the stream is registered): its resource must wait
            seen.append(len(rmm._lifetime._deferred))
            return st
        gp = rmm.GraphPool(reserve=4096, upstream=M.CudaMemoryResource())
        _lib.rmm_capture_begin = begin
        with gp.capture(s):
            pass
        _lib.rmm_capture_begin = real
        assert seen and seen[0] >= 1 and not rmm._lifetime._deferred, seen
        assert rmm._lifetime.captures[0] == 0
        gp.release()
        s.synchronize()
        print("OK", flush=True)
        """)
    assert "OK" in out


@pytest.mark.parametrize("status", [4, 1])
@pytest.mark.parametrize("registered", [False, True])
def test_an_out_of_memory_end_is_told_from_a_registration_that_stays(monkeypatch, registered, status):
    """rmm_capture_end answers OUT_OF_MEMORY when host memory ran out, and CUDA when the current
    device could not be read (a per-thread stream's registration: since 2026-11-29), the stream
    staying registered, and either when a deferred free failed so after the registration ended:
    asked again, the first is ended now (or stays), the second is not found. Either way the count
    drops once the registration has ended (a review's find: it never dropped again, and every C
    object destroyed later waited for ever), and the first end's error is raised."""
    from rmmh import _lib
    s = rmm.Stream()
    gp = rmm.GraphPool(reserve=4096, upstream=rmm.mr.CudaMemoryResource())
    real, calls = _lib.rmm_capture_end, []

    def end(g, stream):
        calls.append(1)
        if len(calls) == 1:
            if not registered:
                real(g, stream)  # ended, then "a deferred free failed"
            return _lib.rmm_set_last_error(status, b"injected: a failure")
        return real(g, stream)

    monkeypatch.setattr(_lib, "rmm_capture_end", end)
    with pytest.raises(MemoryError if status == 4 else rmm.RMMError, match="injected"):
        with gp.capture(s):
            pass
    monkeypatch.undo()
    assert len(calls) == 2 and rmm._lifetime.captures[0] == 0 and not rmm._lifetime._deferred
    gp.release()


@pytest.mark.parametrize("status", [4, 1])
def test_an_end_that_fails_twice_is_tried_again_later(status):
    """rmm_capture_end failing with the stream still registered, and again when asked again (host
    memory still out): the error is raised and the registration stays counted (C still defers the
    frees on the stream), and it is ended at the next GraphPool.capture or release() once the
    failure has passed. Before, nothing could end it again: the pool was never released, the
    stream never registered again, and every C object destroyed later waited for ever. In a child
    (before the fix, the registration stayed for the rest of the process)."""
    out = run_child("""
        import rmmh as rmm
        from rmmh import _lib, _lifetime
        status = %d
        s = rmm.Stream()
        gp = rmm.GraphPool(reserve=4096, upstream=rmm.mr.CudaMemoryResource())
        real, calls = _lib.rmm_capture_end, []

        def end(g, stream):  # the stream stays registered, both times
            calls.append(1)
            return _lib.rmm_set_last_error(status, b"injected: a failure")

        _lib.rmm_capture_end = end
        try:
            with gp.capture(s):
                pass
        except (MemoryError, rmm.RMMError) as e:
            assert "injected" in str(e), e
        else:
            raise AssertionError("no error")
        _lib.rmm_capture_end = real
        assert len(calls) == 2 and _lifetime.captures[0] == 1
        mr = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), initial_pool_size=1 << 20)
        del mr  # waits for the registration's end
        assert _lifetime._deferred
        with gp.capture(s):  # the old registration is ended first
            assert _lifetime.captures[0] == 1
        assert _lifetime.captures[0] == 0 and not _lifetime._deferred
        # the same through release()
        _lib.rmm_capture_end = end
        try:
            with gp.capture(s):
                pass
        except (MemoryError, rmm.RMMError):
            pass
        _lib.rmm_capture_end = real
        assert _lifetime.captures[0] == 1
        gp.release()
        assert _lifetime.captures[0] == 0 and not _lifetime._deferred
        s.synchronize()
        print("OK", flush=True)
        """ % status)
    assert "OK" in out


def test_deferred_destructions_run_in_order_and_all_run():
    """What waited for the captures runs in the order it came, and one that raises does not stop
    the others (the first exception comes after)."""
    from rmmh import _lifetime
    ran = []

    class Fake:
        def __init__(self, name, fail=False):
            self.name, self.fail = name, fail

        def run_now(self):
            ran.append(self.name)
            if self.fail:
                raise RuntimeError(self.name)

    _lifetime._deferred[:] = [Fake("a"), Fake("b", True), Fake("c", True), Fake("d")]
    with pytest.raises(RuntimeError, match="b"):
        _lifetime.run_deferred()
    assert ran == ["a", "b", "c", "d"] and not _lifetime._deferred


def test_a_capture_registered_through_c_keeps_the_resource_a_deferred_free_reaches():
    """A capture registered with rmm.h's rmm_capture_begin directly (ctypes), which rmmh does not
    count: a buffer dropped on the stream inside it was its resource's last holder. rmm.h keeps the
    resource (rmm_resource_destroy refuses while a deferred free reaches it) and rmmh tries again
    later (_lifetime.LATER): the next destruction after the end destroys it. Before 2026-11-28 the
    end freed into the destroyed resource (a use after free). In a child."""
    out = run_child("""
        import ctypes
        import rmmh as rmm
        from rmmh import _lib, _lifetime
        M = rmm.mr
        s = rmm.Stream()
        gp = rmm.GraphPool(reserve=4096, upstream=M.CudaMemoryResource())
        for _ in range(20):
            mr = M.StatisticsResourceAdaptor(M.PoolMemoryResource(M.CudaMemoryResource(), initial_pool_size=1 << 20))
            buf = rmm.DeviceBuffer(size=1000, stream=s, mr=mr)
            del mr  # the buffer holds the resources now
            _lib.check(_lib.rmm_capture_begin(gp._handle(), s.handle), "begin")
            del buf  # its free waits for the end; rmm.h keeps the adaptor and the pool under it
            assert _lifetime._deferred and _lifetime.captures[0] == 0
            _lib.check(_lib.rmm_capture_end(gp._handle(), s.handle), "end")
            M.CudaMemoryResource()  # a destruction with no capture: the kept ones go first
            assert not _lifetime._deferred
        gp.release()
        s.synchronize()
        print("OK", flush=True)
        """)
    assert "OK" in out


def test_a_destroy_that_fails_part_way_is_not_kept_for_later():
    """rmm.h keeps a resource only while a free deferred to a capture's end reaches it
    (rmm_resource_awaits_capture): a destroy that frees the resource but reports a failure (its
    chunk's cudaFree failed) is not retried later on freed memory (a review's find: the retry was a
    use after free). In a child."""
    out = run_child("""
        import rmmh as rmm
        from rmmh import _lib, _lifetime
        pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), initial_pool_size=1 << 20)
        _lib.lib.rmm_host_backend_fail_calls(b"cudaFree", 1, 1, 1)  # the pool's chunk free fails once
        del pool
        _lib.lib.rmm_host_backend_fail_calls(None, 0, 0, 0)
        assert not _lifetime._deferred
        rmm.mr.CudaMemoryResource()  # a later destruction: nothing to retry
        print("OK", flush=True)
        """) if HOST else "OK"
    assert "OK" in out


def test_deferred_destructions_run_once_with_two_threads_at_them():
    """run_deferred takes its Records one at a time (pop, atomic): two threads at it never run one
    Record twice, and one appended meanwhile waits (a review's find: a snapshot then a del ran
    each twice and lost the one appended; forced here by a list whose reads yield)."""
    import threading
    import time
    from rmmh import _lifetime

    class Yielding(list):
        def pop(self, *a):
            r = list.pop(self, *a)
            time.sleep(0.001)  # (a thread switch after each take)
            return r

        def __getitem__(self, i):
            r = list.__getitem__(self, i)
            time.sleep(0.001)
            return r

    runs = {}

    def destroy(k):
        runs[k] = runs.get(k, 0) + 1

    saved = _lifetime._deferred
    _lifetime._deferred = Yielding(_lifetime.Record(destroy, (i,)) for i in range(4))
    try:
        late = _lifetime.Record(destroy, ("late",))
        barrier = threading.Barrier(2)
        threads = [threading.Thread(target=lambda: (barrier.wait(), _lifetime.run_deferred())) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.0005)
        _lifetime._deferred.append(late)
        for t in threads:
            t.join()
        assert all(runs.get(i) == 1 for i in range(4)), runs
        assert runs.get("late", 0) + list(_lifetime._deferred).count(late) == 1
    finally:
        _lifetime._deferred = saved


def test_released_pool_lets_its_upstream_go_once_its_memory_is_back():
    """release() with a block of the graph pool still live keeps the upstream alive until that
    block's free has returned the pool's memory (rmm.h's rmm_graph_pools_pending), then lets it
    go: at the next GraphPool create or release, rmm.reinitialize, or the end of a garbage
    collection. Until 2026-11-30 such an upstream was kept for the life of the process, with its
    memory (red team 29: every later reinitialize of a large pool ran out of memory)."""
    import gc
    from rmmh import _lib, graphs
    base = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    up = rmm.mr.PoolMemoryResource(base, 1 << 20)
    gp = rmm.GraphPool(reserve="64KiB", upstream=up)
    s = rmm.Stream()
    with gp.capture(s):
        b = rmm.DeviceBuffer(size=1000, stream=s)
    gp.release()
    assert _lib.rmm_graph_pools_pending(up._h) == 1 and _lib.rmm_graph_pools_pending(None) >= 1
    kept = len(graphs._kept_upstreams)
    assert kept >= 1
    del gp, up
    assert base.allocation_counts.current_bytes == 1 << 20  # the pool waits for the block
    del b  # the graph pool's last block: its memory goes back to the pool
    gc.collect()  # (the end of a collection lets the kept upstream go)
    assert len(graphs._kept_upstreams) == kept - 1
    assert base.allocation_counts.current_bytes == 0  # the pool went, with its memory
    s.synchronize()


def test_an_upstream_kept_by_a_release_racing_a_prune_is_let_go():
    """Red team 50: release() added its upstream to graphs._kept_upstreams after leaving the
    lock; a _prune_kept_upstreams on another thread, between its reading of the list and its
    rewriting of it, dropped the entry, and the pool's hold on the upstream was never let go (the
    upstream and its memory leaked). The list is slowed here to hold each thread at that point."""
    import gc
    from rmmh import _lib, graphs
    base = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    up = rmm.mr.PoolMemoryResource(base, 1 << 20)
    s = rmm.Stream()
    pools, blocks = [], []
    for _ in range(2):
        gp = rmm.GraphPool(reserve="64KiB", upstream=up)
        with gp.capture(s):
            blocks.append(rmm.DeviceBuffer(size=1000, stream=s))
        pools.append(gp)
    graphs._prune_kept_upstreams()
    appending, rewriting, appended = threading.Event(), threading.Event(), threading.Event()

    class SlowList(list):
        def append(self, item):  # release(): waits for the prune to have read the list
            appending.set()
            rewriting.wait(1.0)  # (with the append under the lock, the prune waits for it instead)
            super().append(item)
            appended.set()

        def __setitem__(self, key, value):  # the prune: rewrites the list once the append is in
            rewriting.set()
            appended.wait(1.0)
            super().__setitem__(key, value)

    pools[0].release()  # kept: its block is live
    original = graphs._kept_upstreams
    graphs._kept_upstreams = SlowList(original)
    del original[:]
    try:
        t = threading.Thread(target=pools[1].release)
        t.start()
        assert appending.wait(5)
        graphs._prune_kept_upstreams()
        t.join()
        kept = sum(1 for m in graphs._kept_upstreams if m is up)
        del pools, gp, up
        del blocks[:]  # the graph pools' last blocks: their memory goes back to the pool
        gc.collect()
        graphs._prune_kept_upstreams()
    finally:
        original[:] = graphs._kept_upstreams
        graphs._kept_upstreams = original
    assert kept == 2  # one per released pool (1: the second was dropped, its hold never let go)
    assert base.allocation_counts.current_bytes == 0  # the pool went, with its memory
    s.synchronize()


def test_a_destruction_deferred_as_the_last_capture_ends_is_not_left_waiting():
    """Red team 50: a Record's last holder let go on one thread while a capture was registered
    (captures[0] read as 1), and the capture ended on another thread before the Record was added
    to _lifetime._deferred: the end's run_deferred found nothing, and the Record waited there,
    with its resource and that resource's memory, until some later destruction or capture end.
    The list is slowed here to hold the first thread between its reading and its append."""
    from rmmh import _lifetime
    base = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    owners = [rmm.mr.PoolMemoryResource(base, 1 << 20)]
    assert base.allocation_counts.current_bytes == 1 << 20
    gp = rmm.GraphPool("64KiB", upstream=rmm.mr.CudaMemoryResource())
    s = rmm.Stream()
    appending, ended = threading.Event(), threading.Event()

    class SlowList(list):
        def append(self, item):
            appending.set()
            ended.wait(2.0)
            super().append(item)

    def drop():
        owners.pop()  # the pool's last reference: its destruction waits for the capture's end

    cm = gp.capture(s)
    cm.__enter__()
    original = _lifetime._deferred
    _lifetime._deferred = SlowList(original)
    del original[:]
    try:
        t = threading.Thread(target=drop)
        t.start()
        assert appending.wait(5)
        cm.__exit__(None, None, None)  # the last registration ends: what waited for it runs
        ended.set()
        t.join()
        left = len(_lifetime._deferred)
    finally:
        original[:] = _lifetime._deferred
        _lifetime._deferred = original
    assert left == 0
    assert base.allocation_counts.current_bytes == 0  # the pool went, with its memory
    gp.release()


def test_per_thread_capture_left_on_another_thread_stays_counted_and_can_be_ended():
    """Red team 47: rmm.h registers the per-thread default stream as the registering thread's own; ending it on
    another thread is INVALID_ARGUMENT and the registration stays in C. rmmh counted it ended
    (captures 0, _registered 0), the generator was spent, and nothing could end it again: the pool
    could never be released and the thread's allocations kept coming from it."""
    pool = rmm.GraphPool("1MiB")
    cm = pool.capture(rmm._stream.PER_THREAD_DEFAULT_STREAM)
    cm.__enter__()
    errors = []

    def leave():
        try:
            cm.__exit__(None, None, None)
        except rmm.InvalidArgumentError as e:
            errors.append(e)

    t = threading.Thread(target=leave)
    t.start()
    t.join()
    assert len(errors) == 1
    assert pool._registered == 1 and _lifetime.captures[0] == 1  # still counted, as C has it
    cm.__exit__(None, None, None)  # the registering thread can still end it
    assert pool._registered == 0 and _lifetime.captures[0] == 0
    pool.release()  # (raised InvalidArgumentError: "1 stream(s) still registered")


def test_a_capture_context_is_entered_once():
    pool = rmm.GraphPool("1MiB")
    s = rmm.Stream()
    cm = pool.capture(s)
    with cm:
        with pytest.raises(RuntimeError):
            cm.__enter__()
    assert pool._registered == 0 and _lifetime.captures[0] == 0
    pool.release()


def test_a_capture_dropped_unleft_lets_its_stream_go():
    """A capture entered and dropped without leaving it: collected, its registration ends and its
    hold on the stream goes (a review's find in red team 47's first fix, whose class-based context
    kept the hold outside the generator: the C stream was held for good)."""
    import gc
    pool = rmm.GraphPool("1MiB")
    s = rmm.Stream()
    refs = len(s._refs)
    cm = pool.capture(s)
    cm.__enter__()
    assert len(s._refs) > refs and pool._registered == 1
    del cm
    gc.collect()
    assert len(s._refs) == refs
    assert pool._registered == 0 and _lifetime.captures[0] == 0
    pool.release()
