"""rmmh.Stream: owning and wrapping, the CUDA stream protocol, defaults (intent of RMM's
test_stream.py)."""
import copy
import gc
import pickle

import pytest

import rmmh as rmm
from conftest import HOST


def test_defaults():
    assert rmm.DEFAULT_STREAM.handle == 0 and rmm.DEFAULT_STREAM.is_default()
    assert rmm.LEGACY_DEFAULT_STREAM.handle == 1 and rmm.LEGACY_DEFAULT_STREAM.is_default()
    assert rmm.PER_THREAD_DEFAULT_STREAM.handle == 2
    assert not rmm.PER_THREAD_DEFAULT_STREAM.is_default()
    for s in (rmm.DEFAULT_STREAM, rmm.LEGACY_DEFAULT_STREAM, rmm.PER_THREAD_DEFAULT_STREAM):
        s.synchronize()
        assert s.__cuda_stream__() == (0, s.handle)
    from rmmh.pylibrmm.stream import DEFAULT_STREAM
    from rmmh._cuda.stream import Stream
    assert DEFAULT_STREAM is rmm.DEFAULT_STREAM and Stream is rmm.Stream


def test_owning_stream():
    s = rmm.Stream()
    assert s.handle not in (0, 1, 2) and not s.is_default()
    s.synchronize()
    t = rmm.Stream(s)  # wraps, shares the owner
    assert t == s and hash(t) == hash(s) and t._owner is s._owner
    assert s != rmm.DEFAULT_STREAM and s != "stream"
    assert len({s, t, rmm.DEFAULT_STREAM}) == 2
    del s
    gc.collect()
    t.synchronize()
    # RMM's name for the owner (rmm.pylibrmm.stream.CudaStream; session 31's API audit)
    from rmmh.pylibrmm.stream import CudaStream
    assert isinstance(t._owner, CudaStream)
    c = CudaStream()
    assert c.handle not in (0, 1, 2)


class Protocol:
    def __init__(self, version, handle):
        self.v, self.h = version, handle

    def __cuda_stream__(self):
        return (self.v, self.h)


def test_cuda_stream_protocol():
    owner = rmm.Stream()
    s = rmm.Stream(Protocol(0, owner.handle))
    assert s.handle == owner.handle
    assert rmm.Stream(Protocol(0, 0)) == rmm.DEFAULT_STREAM
    with pytest.raises(NotImplementedError, match="version: '1'"):  # RMM's message
        rmm.Stream(Protocol(1, 0))
    b = rmm.DeviceBuffer(size=10, stream=Protocol(0, 2))  # accepted wherever a stream is
    assert b.stream.handle == 2


@pytest.mark.skipif(not HOST, reason="only the host backend can tell a foreign handle")
def test_foreign_handle_on_host_backend():
    with pytest.raises(ValueError, match="host backend"):
        rmm.Stream(Protocol(0, 0xDEADBEEF))


@pytest.mark.parametrize("bad", [5, "stream", 1.5, object(), [0]])
def test_not_a_stream(bad):
    with pytest.raises(TypeError):
        rmm.Stream(bad)


def test_bad_protocol_result():
    class Bad:
        def __cuda_stream__(self):
            return "nope"

    with pytest.raises(TypeError):
        rmm.Stream(Bad())
    with pytest.raises((TypeError, OverflowError)):
        rmm.Stream(Protocol(0, -1))


def test_stream_flags():
    from rmmh.pylibrmm.stream import CudaStreamFlags
    assert CudaStreamFlags.NON_BLOCKING == 1 and CudaStreamFlags.SYNC_DEFAULT == 0
    for flags in (None, CudaStreamFlags.SYNC_DEFAULT, CudaStreamFlags.NON_BLOCKING):
        s = rmm.Stream(flags=flags)
        b = rmm.DeviceBuffer.to_device(b"abc", stream=s)
        s.synchronize()
        assert b.tobytes() == b"abc"
    with pytest.raises(ValueError, match="flags"):
        rmm.Stream(rmm.DEFAULT_STREAM, flags=CudaStreamFlags.NON_BLOCKING)
    with pytest.raises(ValueError):
        rmm.Stream(flags=7)


def test_many_streams():
    streams = [rmm.Stream() for _ in range(64)]
    bufs = [rmm.DeviceBuffer.to_device(b"x" * 100, stream=s) for s in streams]
    for s in streams:
        s.synchronize()
    assert all(b.tobytes() == b"x" * 100 for b in bufs)


COPIES = [copy.copy, copy.deepcopy, lambda obj: pickle.loads(pickle.dumps(obj))]
COPY_IDS = ["copy", "deepcopy", "pickle"]


@pytest.mark.parametrize("make_copy", COPIES, ids=COPY_IDS)
def test_stream_is_not_copied_or_pickled(make_copy):
    """As RMM's Stream, a TypeError: a copy of an owning Stream was a second owner of its C
    stream, destroying it under the first."""
    s = rmm.Stream()
    for stream in (s, rmm.Stream(s), rmm.DEFAULT_STREAM):
        with pytest.raises(TypeError):
            make_copy(stream)
    gc.collect()
    b = rmm.DeviceBuffer(size=1000, stream=s)  # the stream is still there
    b.copy_from_host(bytes(range(250)) * 4, stream=s)
    s.synchronize()
    assert b.tobytes() == bytes(range(250)) * 4


@pytest.mark.parametrize("make_copy", COPIES, ids=COPY_IDS)
def test_stream_pool_is_not_copied_or_pickled(make_copy):
    """As RMM's CudaStreamPool, a TypeError: a copy destroyed the C pool under the original (and
    then a second time)."""
    from rmmh.pylibrmm.cuda_stream_pool import CudaStreamPool
    pool = CudaStreamPool(2)
    with pytest.raises(TypeError):
        make_copy(pool)
    gc.collect()
    s = pool.get_stream()
    b = rmm.DeviceBuffer(size=1000, stream=s)
    b.copy_from_host(bytes(1000), stream=s)
    s.synchronize()
    del b, s, pool
    gc.collect()


def test_a_stream_made_by_new_alone_is_the_default_stream():
    # red team 47: RMM's Stream is a cdef class, so one made by __new__ alone is the default stream
    # (handle NULL); rmmh's raised AttributeError, naming _h or _refs depending on the path
    from rmmh._stream import Stream
    s = Stream.__new__(Stream)
    assert s.handle == 0 and s.is_default()
    repr(s)
    s.synchronize()
    assert rmm.DeviceBuffer(size=4, stream=s).size == 4
    s.__init__()  # its __init__ may still run once: it makes a stream
    assert s.handle != 0
    with pytest.raises(TypeError):
        s.__init__()


def test_a_stream_pool_made_by_new_alone_raises_not_initialized():
    # as rmmh's resources, GraphPool and the ipc objects: every call raises rmmh.NotInitializedError
    # (an AttributeError) naming the class, and its repr says so; get_stream, get_pool_size and
    # repr raised a bare AttributeError naming the slot '_owners' or '_handles' (red team 53)
    from rmmh.pylibrmm.cuda_stream_pool import CudaStreamPool
    pool = CudaStreamPool.__new__(CudaStreamPool)
    for use in (pool.get_stream, lambda: pool.get_stream(1), pool.get_pool_size):
        with pytest.raises(rmm.NotInitializedError, match="^CudaStreamPool was never initialized") as e:
            use()
        assert isinstance(e.value, AttributeError)
    assert "not initialized" in repr(pool)
    pool.__init__(2)  # its __init__ may still run once
    assert pool.get_pool_size() == 2 and pool.get_stream(1).handle != 0
    assert "2 streams" in repr(pool)
    with pytest.raises(TypeError):
        pool.__init__(2)
    del pool
    gc.collect()


def test_stream_signature_is_rmm_s():
    """inspect.signature(Stream) is RMM's, (obj=None, flags=None) (it was (*args, **kwargs),
    __new__'s, until 2026-12-03: an API audit's find), for help(), IDEs and code that reads it; a
    subclass with an __init__ of its own shows that one, one without shows Stream's."""
    import inspect
    from rmmh.pylibrmm.stream import Stream
    sig = inspect.signature(Stream)
    assert list(sig.parameters) == ["obj", "flags"]
    assert all(p.default is None and p.kind is p.POSITIONAL_OR_KEYWORD
               for p in sig.parameters.values())
    sig.bind(rmm.DEFAULT_STREAM)  # (what the signature accepts, Stream accepts)
    Stream(*sig.bind().args)

    class Plain(Stream):
        pass

    class Own(Stream):
        def __init__(self, name, *, flags=None):
            super().__init__(flags=flags)

    assert inspect.signature(Plain) == sig
    assert list(inspect.signature(Own).parameters) == ["name", "flags"]
    assert not Own("x").is_default() and Plain().handle not in (0, 1, 2)
