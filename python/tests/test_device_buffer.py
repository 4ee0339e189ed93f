"""DeviceBuffer: properties, copies in and out, resize/reserve, pickling, CUDA array interface,
argument checking (intent of RMM's test_device_buffer.py, in rmmh's words)."""
import copy
import pickle

import numpy as np
import pytest

import rmmh as rmm
from conftest import run_child
from rmmh.pylibrmm.device_buffer import (
    copy_device_to_ptr,
    copy_host_to_ptr,
    copy_ptr_to_host,
    to_device,
)


@pytest.mark.parametrize("size", [0, 5, 1000, 1 << 20])
def test_properties(size):
    b = rmm.DeviceBuffer(size=size)
    assert (b.ptr != 0) == (size != 0)
    assert b.size == b.nbytes == len(b) == b.__sizeof__() == size
    assert b.capacity() >= b.size
    assert b.ptr % 256 == 0
    assert b.mr is rmm.mr.get_current_device_resource()
    assert b.stream is rmm.DEFAULT_STREAM
    assert isinstance(b.tobytes(), bytes) and len(b.tobytes()) == size


def test_keyword_only_like_rmm():
    with pytest.raises(TypeError):
        rmm.DeviceBuffer(10)
    with pytest.raises(TypeError):
        rmm.DeviceBuffer(size=10, color="blue")


def test_cuda_array_interface_is_rmms():
    b = rmm.DeviceBuffer(size=7, stream=rmm.Stream())
    assert b.__cuda_array_interface__ == {"data": (b.ptr, False), "shape": (7,),
                                          "strides": None, "typestr": "|u1", "version": 0}
    assert rmm.DeviceBuffer(size=0).__cuda_array_interface__["data"] == (0, False)


@pytest.mark.parametrize("hb", [b"abc", bytearray(b"abc"), memoryview(b"abc"),
                                np.asarray(memoryview(b"abc")), np.arange(3, dtype="u1")])
def test_host_round_trip(hb):
    db = rmm.DeviceBuffer.to_device(hb)
    out = db.copy_to_host()
    assert isinstance(out, np.ndarray) and out.dtype == np.uint8
    assert memoryview(out) == memoryview(hb)
    into = bytearray(3)
    assert db.copy_to_host(into) is into and into == bytes(hb)
    arr = np.empty(3, dtype="u1")
    assert db.copy_to_host(arr) is arr and arr.tobytes() == bytes(hb)
    assert bytes(db) == db.tobytes() == bytes(hb)


@pytest.mark.parametrize("hb,exc", [(None, TypeError), ("abc", TypeError), (123, TypeError),
                                    (np.ones(4, "u1")[::2], ValueError),
                                    (np.ones((4, 4), "u1")[:, 1], ValueError)])
def test_to_device_rejects(hb, exc):
    with pytest.raises(exc):
        rmm.DeviceBuffer.to_device(hb)


@pytest.mark.parametrize("hb", [np.ones((2,), "u2"), np.ones((2, 2), "u1"),
                                np.arange(6, dtype="f8"), np.array(5, "u1"),
                                memoryview(b"abcd").cast("B", (2, 2)), np.ones(3, "i1")])
def test_to_device_takes_one_dimensional_bytes_only(hb):
    # as RMM: format 'B', one dimension, C-contiguous; else ValueError naming the argument
    with pytest.raises(ValueError, match="b must be a one-dimensional buffer of unsigned bytes"):
        rmm.DeviceBuffer.to_device(hb)
    flat = np.ascontiguousarray(hb).ravel().view("u1")  # what to pass instead
    db = rmm.DeviceBuffer.to_device(flat)
    assert db.tobytes() == memoryview(hb).tobytes()
    assert rmm.DeviceBuffer.to_device(memoryview(flat).cast("B")).tobytes() == db.tobytes()


def test_to_device_empty():
    assert rmm.DeviceBuffer.to_device(b"").size == 0
    assert rmm.DeviceBuffer.to_device(np.empty(0, "u1")).ptr == 0


def test_copy_from_host_and_too_large():
    db = rmm.DeviceBuffer.to_device(np.zeros(10, dtype="u1"))
    db.copy_from_host(b"abc")
    np.testing.assert_equal(db.copy_to_host(), [97, 98, 99, 0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="too large"):
        db.copy_from_host(b"x" * 11)
    with pytest.raises(ValueError, match="too small"):
        db.copy_to_host(bytearray(9))
    with pytest.raises(ValueError):
        db.copy_to_host(b"read-only bytes of length 20")


def test_copy_from_device():
    src = rmm.DeviceBuffer.to_device(b"abc")
    db = rmm.DeviceBuffer.to_device(np.zeros(10, dtype="u1"))
    db.copy_from_device(src)
    np.testing.assert_equal(db.copy_to_host(), [97, 98, 99, 0, 0, 0, 0, 0, 0, 0])

    class Cai:  # a foreign device array: 2 int32 elements of src's memory
        def __init__(self, ptr, shape, strides=None, typestr="<i4"):
            self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape,
                                             "strides": strides, "typestr": typestr,
                                             "version": 3}

    big = rmm.DeviceBuffer.to_device(np.arange(4, dtype="<i4").view("u1"))
    db.copy_from_device(Cai(big.ptr, (2,)))
    assert np.frombuffer(db.tobytes()[:8], "<i4").tolist() == [0, 1]
    with pytest.raises(ValueError, match="1-D"):
        db.copy_from_device(Cai(big.ptr, (2, 2)))
    with pytest.raises(ValueError, match="non-contiguous"):
        db.copy_from_device(Cai(big.ptr, (2,), strides=(8,)))
    with pytest.raises(ValueError, match="too large"):
        db.copy_from_device(Cai(big.ptr, (4,), typestr="<f8"))
    with pytest.raises(ValueError, match="__cuda_array_interface__"):
        db.copy_from_device(b"host bytes")


@pytest.mark.parametrize("make_copy", [lambda d: d.copy(), copy.copy])
def test_copy(make_copy):
    db = rmm.DeviceBuffer.to_device(b"abcde")
    dup = make_copy(db)
    assert dup is not db and dup.ptr != db.ptr
    assert dup.tobytes() == b"abcde" and dup.mr is db.mr and dup.stream is db.stream


@pytest.mark.parametrize("hb", [b"", b"123", b"abc" * 1000])
def test_pickle(hb):
    db = rmm.DeviceBuffer.to_device(hb)
    assert pickle.loads(pickle.dumps(db)).tobytes() == hb
    fn, args = db.__reduce__()  # RMM's __reduce__, called directly (red team 23: it raised)
    assert fn(*args).tobytes() == hb
    buffers = []
    blob = pickle.dumps(db, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and bytes(buffers[0]) == hb  # out of band
    assert pickle.loads(blob, buffers=buffers).tobytes() == hb


def test_resize_reserve_shrink():
    db = rmm.DeviceBuffer.to_device(b"abcdef")
    db.resize(3)
    assert db.size == 3 and db.capacity() == 6 and db.tobytes() == b"abc"
    ptr = db.ptr
    db.resize(6)  # within capacity: no reallocation, the bytes are still there
    assert db.ptr == ptr and db.tobytes() == b"abcdef"
    db.reserve(100)
    assert db.capacity() == 100 and db.size == 6 and db.tobytes() == b"abcdef"
    db.reserve(10)  # no-op
    assert db.capacity() == 100
    db.resize(200)
    assert db.size == db.capacity() == 200 and db.tobytes()[:6] == b"abcdef"
    db.resize(4)
    db.shrink_to_fit()
    assert db.capacity() == 4 and db.tobytes() == b"abcd"
    db.resize(0)
    db.shrink_to_fit()
    assert db.ptr == 0 and db.capacity() == 0
    db.resize(5)
    assert db.size == 5 and db.ptr != 0


def test_resize_on_another_stream_moves_the_stream():
    s = rmm.Stream()
    db = rmm.DeviceBuffer.to_device(b"abc")
    db.resize(1000, stream=s)
    assert db.stream is s
    s.synchronize()
    assert db.tobytes()[:3] == b"abc"


def test_ptr_copies_in():
    src = rmm.DeviceBuffer.to_device(b"hello")
    db = rmm.DeviceBuffer(ptr=src.ptr, size=5)
    assert db.ptr != src.ptr and db.tobytes() == b"hello"
    s = rmm.Stream()
    db = rmm.DeviceBuffer(ptr=src.ptr, size=3, stream=s)
    s.synchronize()
    assert db.tobytes() == b"hel"


def test_module_copy_functions():
    db = rmm.DeviceBuffer(size=10)
    copy_host_to_ptr(b"0123456789", db.ptr)
    hb = bytearray(4)
    copy_ptr_to_host(db.ptr + 2, hb)
    assert hb == b"2345"
    other = rmm.DeviceBuffer(size=10)
    copy_device_to_ptr(db.ptr, other.ptr, 10)
    rmm.DEFAULT_STREAM.synchronize()
    assert other.tobytes() == b"0123456789"
    assert to_device(b"xy").tobytes() == b"xy"


@pytest.mark.parametrize("call", [
    lambda: rmm.DeviceBuffer(size=10, stream=None),
    lambda: rmm.DeviceBuffer.to_device(b"abc", stream=None),
    lambda: rmm.DeviceBuffer.to_device(b"abc").copy_to_host(stream=None),
    lambda: rmm.DeviceBuffer(size=3).copy_from_host(b"abc", stream=None),
    lambda: rmm.DeviceBuffer(size=3).copy_from_device(rmm.DeviceBuffer(size=3), stream=None),
    lambda: rmm.DeviceBuffer(size=3).tobytes(stream=None),
    lambda: rmm.DeviceBuffer(size=3).reserve(10, stream=None),
    lambda: rmm.DeviceBuffer(size=3).resize(10, stream=None),
    lambda: copy_ptr_to_host(rmm.DeviceBuffer(size=3).ptr, bytearray(3), stream=None),
    lambda: copy_host_to_ptr(b"abc", rmm.DeviceBuffer(size=3).ptr, stream=None),
    lambda: copy_device_to_ptr(0, 0, 0, stream=None),
    lambda: rmm.mr.get_current_device_resource().allocate(10, stream=None),
    lambda: rmm.mr.get_current_device_resource().deallocate(0, 10, stream=None),
])
def test_stream_none_is_type_error(call):
    with pytest.raises(TypeError, match="stream argument cannot be None"):
        call()


@pytest.mark.parametrize("size,exc", [(-1, OverflowError), (-1, ValueError), (1.5, TypeError),
                                      ("10", TypeError), (None, TypeError),
                                      (1 << 64, OverflowError)])
def test_bad_sizes(size, exc):
    with pytest.raises(exc):
        rmm.DeviceBuffer(size=size)


def test_huge_size_is_memory_error():
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer(size=(1 << 64) - 1)
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer(size=1 << 62)


def test_init_twice_is_refused(stats_mr):
    """A second __init__ is a TypeError in both builds (the ctypes one leaked the first block)."""
    b = rmm.DeviceBuffer(size=1000)
    with pytest.raises(TypeError, match="may be called once"):
        b.__init__(size=2000)
    assert b.size == 1000 and stats_mr.allocation_counts.current_bytes == 1000
    del b
    assert stats_mr.allocation_counts.current_bytes == 0
    empty = rmm.DeviceBuffer()
    with pytest.raises(TypeError, match="may be called once"):
        empty.__init__(size=10)
    assert empty.size == 0 and stats_mr.allocation_counts.current_bytes == 0


class IndexReturnsFloat:
    def __index__(self):
        return 1.5


@pytest.mark.parametrize("call", [
    lambda b: rmm.DeviceBuffer(size=IndexReturnsFloat()),
    lambda b: b.resize(IndexReturnsFloat()),
    lambda b: b.reserve(IndexReturnsFloat()),
    lambda b: rmm.mr.CudaMemoryResource().allocate(IndexReturnsFloat()),
    lambda b: rmm.mr.get_per_device_resource(IndexReturnsFloat()),
    lambda b: rmm.parse_bytes(IndexReturnsFloat()),
    lambda b: rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), IndexReturnsFloat()),
], ids=["DeviceBuffer", "resize", "reserve", "allocate", "get_per_device_resource",
        "parse_bytes", "PoolMemoryResource"])
def test_index_returning_a_non_int_is_type_error(call):
    """operator.index's rule: an __index__ that returns a non-int is a TypeError, and no size
    keeps it."""
    b = rmm.DeviceBuffer(size=10)
    with pytest.raises(TypeError):
        call(b)
    assert b.size == 10 and len(b) == 10 and len(b.tobytes()) == 10


def test_bad_mr_and_stream_types():
    with pytest.raises(TypeError):
        rmm.DeviceBuffer(size=1, mr="pool")
    with pytest.raises(TypeError):
        rmm.DeviceBuffer(size=1, stream=5)
    with pytest.raises(TypeError):
        rmm.DeviceBuffer(size=1, mr=rmm.mr.DeviceMemoryResource)


def test_prefetch_is_harmless():
    db = rmm.DeviceBuffer(size=256)
    db.prefetch()
    db.prefetch(device=-1, stream=rmm.Stream())


def test_explicit_mr_and_numpy_ints():
    mr = rmm.mr.CudaMemoryResource()
    db = rmm.DeviceBuffer(size=np.int64(12), mr=mr)
    assert db.mr is mr and db.size == 12
    db.resize(np.uint32(20))
    assert db.size == 20


def test_repr():
    assert "size=3" in repr(rmm.DeviceBuffer(size=3))


def test_empty_buffer_grown_then_freed():
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    rmm.mr.set_current_device_resource(pool)
    for grow in (lambda b: b.resize(1000), lambda b: b.reserve(1000)):
        b = rmm.DeviceBuffer()
        grow(b)
        assert pool.info().used_bytes > 0
        del b
        assert pool.info().used_bytes == 0
    s = rmm.Stream()
    b = rmm.DeviceBuffer(size=0, stream=s)
    b.resize(100, stream=s)
    del b, s
    assert pool.info().used_bytes == 0


def test_record_stream():
    s1, s2 = rmm.Stream(), rmm.Stream()
    mr = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    b = rmm.DeviceBuffer(size=1000, stream=s1, mr=mr)
    b.record_stream(s2)
    b.record_stream(s2)  # twice: once
    b.record_stream(s1)  # its own stream: nothing to wait for
    for _ in range(100):
        b.record_stream(s2)
    assert not b._recorded  # streams rmmh made are not kept (rmm.h sees them destroyed: red team 35)

    class Foreign:  # a framework's stream: wrapped anew at each call (review 33)
        def __cuda_stream__(self):
            return (0, s2.handle)
    f = Foreign()
    for _ in range(100):  # kept once per stream (it kept an entry per call: red team 33)
        b.record_stream(f)
    assert len(b._recorded) == 1
    with pytest.raises(TypeError):
        b.record_stream(None)
    rmm.DeviceBuffer(size=0, stream=s1).record_stream(s2)  # empty: a no-op
    ptr = b.ptr
    c = rmm.DeviceBuffer(size=100, stream=s1, mr=mr)
    c.record_stream(f)
    assert len(c._recorded) == 1
    c.__del__()  # freed by hand: its recorded streams go with the block (review 45: the extension kept them)
    assert not c._recorded and c.size == 0
    del b  # the free makes s1 wait for s2, and forgets the record
    s1.synchronize()
    mr.validate()
    # the block, freed, is not a live block any more: recording it is an error
    with pytest.raises(rmm.RMMError):
        rmm._lib.check(rmm._lib.rmm_record_stream(mr._h, ptr, 1000, s2._h), "record_stream")


def test_record_stream_on_many_short_lived_streams_keeps_none():
    """A buffer recorded on many streams rmmh made keeps none of them alive (red team 35: 20,000
    rmmh.Stream() recorded on one buffer stayed alive with it, each a C stream and a record, and
    each call scanned them all); rmm.h drops the records of those destroyed since (a bounded
    number stays), and the free still orders the reuse."""
    import weakref
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)
    b = rmm.DeviceBuffer(size=1000, mr=pool)
    refs = []
    for _ in range(2000):
        s = rmm.Stream()
        b.record_stream(s)
        refs.append(weakref.ref(s))
        del s
    assert not b._recorded and all(r() is None for r in refs)  # let go at once
    del b  # the free waits for what those streams queued (their destroys' events)
    assert pool.info().used_bytes == 0


def test_ptr_none_is_a_type_error():
    """ptr is an address (RMM's uintptr_t): None is a TypeError, as in RMM (it was taken as 0)."""
    with pytest.raises(TypeError):
        rmm.DeviceBuffer(ptr=None, size=4)
    with pytest.raises(TypeError):
        rmm.DeviceBuffer(ptr=None)


@pytest.mark.parametrize("stream_first", [False, True])
@pytest.mark.parametrize("finalizer", ["__del__", "weakref.finalize"])
@pytest.mark.parametrize("dies_in", ["refcount", "cycle"])
def test_record_stream_keeps_the_stream_until_the_free(dies_in, finalizer, stream_first):
    """The streams record_stream keeps are let go only after the block is freed (rmm.h records an
    event on each at the free): a weak-keyed table let them go first, with the extension always and
    without it when the buffer died in a collected cycle (red team 20); then, without the extension,
    a slot the collector visited let a stream finalized by weakref.finalize (as Numba's) or made
    before the buffer go first in a cycle (review 20). Both finalizer kinds, both orders."""
    import gc
    import weakref
    events = []
    base = rmm.mr.CudaMemoryResource()
    cb = rmm.mr.CallbackMemoryResource(lambda n, s: base.allocate(n, s),
                                       lambda p, n, s: (events.append("freed"), base.deallocate(p, n, s)))
    real = rmm.Stream()

    class Foreign:  # a stream of another library, held only by the record
        def __cuda_stream__(self):
            return (0, real.handle)

    if finalizer == "__del__":
        Foreign.__del__ = lambda self: events.append("stream let go")

    class Node:
        pass

    def make_stream():
        f = Foreign()
        if finalizer == "weakref.finalize":
            weakref.finalize(f, events.append, "stream let go")
        return f

    f = make_stream() if stream_first else None
    b = rmm.DeviceBuffer(size=256, mr=cb)
    b.record_stream(f if f is not None else make_stream())
    del f
    assert events == []
    if dies_in == "cycle":
        n = Node()
        n.b, n.me = b, n
        del n
    del b
    gc.collect()
    assert events == ["freed", "stream let go"]


def test_threads_resizing_one_buffer_take_turns():
    """Two threads resizing one buffer (RMM's resize holds the GIL for the whole C++ call; rmmh's
    allocation and free release it): the size never passes the capacity, and the contents of the
    bytes both sizes keep survive. Before each buffer took a lock for its resizes, a few hundred
    rounds left size 65536 over a 4096-byte block."""
    import threading
    data = bytes(range(256))
    for _ in range(300):
        b = rmm.DeviceBuffer.to_device(data)
        go = threading.Barrier(3)

        def grow(n):
            go.wait()
            b.resize(n)
            b.shrink_to_fit()
            b.reserve(n + 512)

        ts = [threading.Thread(target=grow, args=(n,)) for n in (1 << 16, 4096, 300)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert b.size <= b.capacity()
        assert b.size in (1 << 16, 4096, 300)
        assert b.tobytes()[:256] == data


def test_copy_from_device_waits_for_a_resize_of_its_source():
    """dst.copy_from_device(src) holds src's lock through the copy, as src's own copies do: a
    resize of src on another thread waits (red team 28: the copy read src's address through its
    array interface with only dst's lock held, and a resize freed src under the copy: a segfault on
    the host backend, heap-use-after-free under ASan). Two buffers copying from each other on two
    threads take the locks in one order and both finish."""
    import threading
    from rmmh._device_buffer import _resize_lock
    data = bytes(range(256)) * 16
    src, dst = rmm.DeviceBuffer.to_device(data), rmm.DeviceBuffer(size=len(data))
    done = []

    def copy():
        dst.copy_from_device(src)
        done.append(dst.tobytes())

    with _resize_lock(src):  # (as a resize of src on another thread holds it)
        t = threading.Thread(target=copy, daemon=True)
        t.start()
        t.join(0.2)
        assert done == []  # the copy waits for src's lock
    t.join(5)
    assert done == [data]
    a, b = rmm.DeviceBuffer.to_device(b"a" * 4096), rmm.DeviceBuffer.to_device(b"b" * 4096)
    go = threading.Barrier(2)

    def swap(x, y):
        go.wait()
        for _ in range(200):
            x.copy_from_device(y)

    ts = [threading.Thread(target=swap, args=xy, daemon=True) for xy in ((a, b), (b, a))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    assert not any(t.is_alive() for t in ts)
    assert a.tobytes() == b.tobytes()


def _grow_on_another_thread(b, n, started):
    """Starts a thread that resizes b to n bytes and gives it 0.2 s to finish (it cannot while
    this thread holds b's lock); the thread goes into `started`."""
    import threading
    t = threading.Thread(target=b.resize, args=(n,))
    t.start()
    t.join(0.2)
    started.append(t)


def test_tobytes_racing_a_resize_copies_the_size_it_made_room_for(monkeypatch):
    """tobytes sizes its bytes object, then copies: a resize that grows the buffer in between
    (another thread) must not make the copy longer than the bytes (before 2026-11-28 tobytes read
    the size again for the copy, a heap overflow). The resize here runs while the bytes are being
    made; the copy is checked before it runs."""
    from rmmh import _lib
    b = rmm.DeviceBuffer.to_device(bytes(range(256)) * 4)
    started, copies = [], []
    made, memcpy = _lib.PyBytes_FromStringAndSize, _lib.rmm_memcpy_async

    def make_then_grow(p, n):
        out = made(p, n)
        _grow_on_another_thread(b, 1 << 20, started)
        return out

    def checked_memcpy(dst, src, n, stream):
        copies.append(n)
        return memcpy(dst, src, n, stream) if n <= 1024 else 2  # (never past the bytes)

    monkeypatch.setattr(_lib, "PyBytes_FromStringAndSize", make_then_grow)
    monkeypatch.setattr(_lib, "rmm_memcpy_async", checked_memcpy)
    out = b.tobytes()
    monkeypatch.undo()
    for t in started:
        t.join()
    # tobytes copied the 1024 bytes it made room for (the resize's own copy, on its thread, may
    # come before the undo: it copies 1024 too; none is longer)
    assert copies and copies[0] == 1024 and max(copies) == 1024 and out == bytes(range(256)) * 4
    assert b.size == 1 << 20 and b.tobytes()[:1024] == out  # the resize ran after, contents kept


def test_copy_to_host_racing_a_resize_copies_the_size_it_checked(monkeypatch):
    """copy_to_host checks the host buffer against the size, then copies: a resize that grows the
    buffer in between (another thread) waits for the copy (before 2026-11-28 the check read the
    grown size and raised, or, read after it, the copy overran the host buffer)."""
    from rmmh import _lib
    b = rmm.DeviceBuffer.to_device(bytes(range(200)))
    started = []
    real = _lib.host_buffer

    class GrowOnEnter:
        def __init__(self, *a, **k):
            self.cm = real(*a, **k)

        def __enter__(self):
            got = self.cm.__enter__()
            _grow_on_another_thread(b, 1 << 20, started)
            return got

        def __exit__(self, *exc):
            return self.cm.__exit__(*exc)

    monkeypatch.setattr(_lib, "host_buffer", GrowOnEnter)
    host = bytearray(200)
    assert b.copy_to_host(host) is host
    monkeypatch.undo()
    for t in started:
        t.join()
    assert bytes(host) == bytes(range(200)) and b.size == 1 << 20


@pytest.mark.parametrize("op", ["copy", "resize", "reserve"])
def test_two_buffers_spilling_each_other_from_a_failure_callback_do_not_deadlock(op):
    """A failure callback that spills other buffers on out of memory (dask-cuda's and cuDF's
    pattern: copy a buffer to the host): thread 1 copies or grows buffer a, thread 2 buffer b, both
    run out of memory, and each callback copies the other's buffer out (tobytes, which takes that
    buffer's lock). A buffer's lock is never held across a call into the resource, so both finish.
    (On 2026-11-28, for a few commits, copy() and the resizes held it there: both threads hung, a
    red team's find.) In a child, which a hang ends after 60 s."""
    out = run_child("""
        import faulthandler, sys, threading
        import rmmh as rmm
        M = rmm.mr
        faulthandler.dump_traceback_later(60, exit=True)
        op = sys.argv[1]
        bufs, spilled = {}, []
        both = threading.Barrier(2, timeout=5)
        def spill(nbytes):
            victim = bufs["b" if threading.current_thread().name == "t1" else "a"]
            try:
                both.wait()
            except threading.BrokenBarrierError:
                pass
            spilled.append(len(victim.tobytes()))
            return False
        mr = M.FailureCallbackResourceAdaptor(M.LimitingResourceAdaptor(M.CudaMemoryResource(), 1 << 20), spill)
        bufs["a"] = rmm.DeviceBuffer(size=400 << 10, mr=mr)
        bufs["b"] = rmm.DeviceBuffer(size=400 << 10, mr=mr)  # a copy or a growth of either does not fit
        def work(name):
            b = bufs[name]
            try:
                if op == "copy":
                    b.copy()
                elif op == "resize":
                    b.resize(500 << 10)
                else:
                    b.reserve(500 << 10)
            except MemoryError:
                pass
        ts = [threading.Thread(target=work, args=(n,), name=t) for n, t in (("a", "t1"), ("b", "t2"))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert spilled == [400 << 10, 400 << 10], spilled
        assert bufs["a"].size == bufs["b"].size == 400 << 10  # nothing changed: both failed
        print("OK", flush=True)
        """, op)
    assert "OK" in out


def test_resizes_racing_keep_the_contents_and_free_what_they_lose(monkeypatch):
    """A resize allocates with the buffer's lock let go and swaps its block in only if nothing
    changed meanwhile: here another resize comes in during the allocation (a resource hook runs it
    on this thread, as a callback would), so the first allocation goes back and the resize tries
    again; the contents survive and no block is left over."""
    from rmmh import _device_buffer as db
    mr = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    b = rmm.DeviceBuffer(size=256, mr=mr)
    b.copy_from_host(bytes(range(256)))
    real, calls = db._alloc, []

    def alloc(h, n, s):
        calls.append(n)
        if len(calls) == 1:
            b.reserve(8192)  # in between (the lock is let go during the allocation)
        return real(h, n, s)

    monkeypatch.setattr(db, "_alloc", alloc)
    b.resize(4096)
    monkeypatch.undo()
    assert calls == [4096, 8192]  # (the retry found the capacity enough: no third allocation)
    assert b.size == 4096 and b.capacity() == 8192 and b.tobytes()[:256] == bytes(range(256))
    assert mr.allocation_counts.current_count == 1  # the first 4096-byte block went back


def test_a_resize_that_finds_no_memory_after_another_did_its_work_succeeds(monkeypatch):
    """Two resizes of one buffer to the same size: the second finds no memory for its own block,
    but the first already gave the buffer that size, so it succeeds (a review's find: it raised
    MemoryError, 29-44 times in 300 with two threads; here the other resize runs inside the
    allocation, deterministically)."""
    from rmmh import _device_buffer as db
    b = rmm.DeviceBuffer(size=256)
    b.copy_from_host(bytes(range(256)))
    real, calls = db._alloc, []

    def alloc(h, n, s):
        calls.append(n)
        if len(calls) == 1:
            b.resize(4096)  # the other resize wins
            return None     # and this one finds no memory
        return real(h, n, s)

    monkeypatch.setattr(db, "_alloc", alloc)
    b.resize(4096)
    monkeypatch.undo()
    assert calls == [4096, 4096] and b.size == 4096 and b.capacity() == 4096
    assert b.tobytes()[:256] == bytes(range(256))


def test_host_copies_take_one_dimensional_bytes_only():
    """copy_to_host, copy_from_host, copy_ptr_to_host and copy_host_to_ptr take a 1-D buffer of
    unsigned bytes, as RMM's unsigned char[::1] (red team 17: any format went through, and a
    buffer of PyObject pointers took raw bytes: a segfault at its first use)."""
    import ctypes
    b = rmm.DeviceBuffer.to_device(b"\x41" * 16)
    for bad in (np.zeros(2, "f8"), np.zeros((4, 4), "u1"), (ctypes.py_object * 2)(1, 2)):
        with pytest.raises(ValueError, match="unsigned bytes"):
            b.copy_to_host(bad)
        with pytest.raises(ValueError, match="unsigned bytes"):
            b.copy_from_host(bad)
        with pytest.raises(ValueError, match="unsigned bytes"):
            rmm.pylibrmm.device_buffer.copy_ptr_to_host(b.ptr, bad)
        with pytest.raises(ValueError, match="unsigned bytes"):
            rmm.pylibrmm.device_buffer.copy_host_to_ptr(bad, b.ptr)
    out = np.zeros(16, "u1")
    assert b.copy_to_host(out) is out and bytes(out) == b"\x41" * 16
    b.copy_from_host(bytearray(b"xy"))
    assert b.tobytes()[:3] == b"xyA"
    # what Cython's unsigned char[::1] takes too: one-byte 'c' and '?' items (a review's find)
    chars = ctypes.create_string_buffer(16)
    assert b.copy_to_host(chars) is chars and chars.raw[:3] == b"xyA"
    b.copy_from_host(memoryview(bytearray(b"pq")).cast("c"))
    flags = np.zeros(16, "?")
    b.copy_to_host(flags)
    assert flags.all()
    assert rmm.DeviceBuffer.to_device(chars).tobytes()[:3] == b"xyA" and b.tobytes()[:3] == b"pqA"


@pytest.mark.parametrize("ptr,error", [(-5, (OverflowError, ValueError)), ("garbage", TypeError),
                                       (1.5, TypeError), (np.arange(4, dtype="u1"), TypeError)])
def test_ptr_is_checked_whether_or_not_it_is_used(ptr, error):
    """DeviceBuffer(ptr=...) checks the address also with size 0 (RMM's uintptr_t), and an
    array is a TypeError, not NumPy's truth-value ValueError."""
    for size in (0, 16):
        with pytest.raises(error):
            rmm.DeviceBuffer(ptr=ptr, size=size)


def test_a_buffer_made_by_new_alone_is_an_empty_buffer():
    """DeviceBuffer.__new__ without __init__ (copy's and pickle's protocols, a subclass's own
    __new__) gives what RMM's cdef class gives there: an empty buffer on the default stream with
    the current device's resource, which resizes, copies and pickles; until 2026-11-30 it raised
    AttributeError on resize and copy (and, without the accelerator, on size and repr); __init__
    still runs once on a buffer made so, and a missing attribute still raises AttributeError."""
    import copy
    import pickle
    b = rmm.DeviceBuffer.__new__(rmm.DeviceBuffer)
    assert b.size == 0 and b.nbytes == 0 and b.capacity() == 0 and b.ptr == 0 and len(b) == 0
    assert repr(b).startswith("<rmmh.DeviceBuffer size=0")
    assert b.mr is rmm.mr.get_current_device_resource()
    assert b.stream is rmm.DEFAULT_STREAM
    assert copy.copy(b).size == 0 and b.tobytes() == b""
    b.resize(10)
    assert b.size == 10 and b.capacity() >= 10 and b.ptr != 0
    b.copy_from_host(bytes(range(10)))
    assert pickle.loads(pickle.dumps(b)).tobytes() == bytes(range(10))
    with pytest.raises(TypeError, match="once"):
        b.__init__(size=3)
    with pytest.raises(AttributeError, match="no_such_thing"):
        b.no_such_thing
    c = rmm.DeviceBuffer.__new__(rmm.DeviceBuffer)
    c.__init__(size=3)  # (new, then init: the ordinary construction)
    assert c.size == 3 and c.mr is rmm.mr.get_current_device_resource()
    del b, c


def test_a_finalizer_run_while_a_buffer_gets_its_lock_may_use_buffers():
    # review 46: a buffer's lock was made with a plain module lock held, and making it allocates:
    # a collection there runs finalizers, and one that copies out of another buffer (a spill in a
    # __del__) came back for that module lock on the same thread: a deadlock (the child then
    # times out). Both at the lock's making and at every allocation with the collector eager.
    out = run_child("""
        import gc, threading
        import rmmh
        from rmmh import _device_buffer as db

        copied = []

        class Spill:
            def __init__(self):
                self.me = self  # a cycle: freed by the collector, which runs __del__

            def __del__(self):
                b = rmmh.DeviceBuffer(size=16)
                copied.append(len(b.tobytes()))  # b's lock is made here, inside the other's

        real, depth = threading.RLock, [0]

        def collecting_rlock(*a):
            if depth[0] == 0:
                depth[0] += 1
                try:
                    Spill()
                    gc.collect()
                finally:
                    depth[0] -= 1
            return real(*a)

        threading.RLock = collecting_rlock
        try:
            a = rmmh.DeviceBuffer(size=32)
            assert len(a.tobytes()) == 32
        finally:
            threading.RLock = real
        assert copied == [16], copied
        gc.set_threshold(1, 1, 1)
        for i in range(300):
            Spill()
            assert len(rmmh.DeviceBuffer(size=8 + i).tobytes()) == 8 + i
        gc.set_threshold(700, 10, 10)
        print("ok", len(copied))
    """, timeout=120)
    assert out.startswith("ok")



def test_ptr_is_read_once_as_an_address():
    # red team 47: the accelerator asked ptr's __bool__ and __index__ again after checking it: a
    # falsy int subclass skipped the copy (uninitialized bytes), and an __index__ answering
    # differently the second time was copied from an address never checked. ctypes was right.
    import ctypes
    src = (ctypes.c_char * 8).from_buffer_copy(b"abcdefgh")
    addr = ctypes.addressof(src)

    class Falsy(int):
        def __bool__(self):
            return False

    class Once:
        calls = 0

        def __index__(self):
            Once.calls += 1
            return addr if Once.calls == 1 else addr + 4

    assert rmm.DeviceBuffer(ptr=Falsy(addr), size=8).tobytes() == b"abcdefgh"
    assert rmm.DeviceBuffer(ptr=Once(), size=4).tobytes() == b"abcd"
    assert Once.calls == 1
