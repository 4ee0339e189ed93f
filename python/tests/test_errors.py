"""Errors: the exception hierarchy, rmm.h's messages, and bad arguments everywhere (TypeError or
ValueError-family exceptions, never a crash)."""
import itertools

import numpy as np
import pytest

import rmmh as rmm
from rmmh import _errors

from conftest import host_only


def test_hierarchy():
    oom = _errors.error_for(4, "m")
    assert isinstance(oom, MemoryError) and isinstance(oom, rmm.RMMError)
    assert not isinstance(oom, RuntimeError)  # RMM raises a plain MemoryError
    inv = _errors.error_for(2, "m")
    assert isinstance(inv, ValueError) and isinstance(inv, RuntimeError)
    assert isinstance(_errors.error_for(7, "m"), NotImplementedError)
    for status in (1, 3, 5, 6, 8, 99):
        e = _errors.error_for(status, "m")
        assert isinstance(e, RuntimeError) and isinstance(e, rmm.RMMError)
    assert oom.errcode == "RMM_ERROR_OUT_OF_MEMORY" and oom.status == 4
    e = rmm.RMMError("RMM_ERROR_CUDA", "boom")  # RMM's constructor: (errcode, msg)
    assert e.errcode == "RMM_ERROR_CUDA" and e.status == 1 and str(e) == "boom"
    assert rmm.rmm.RMMError is rmm.RMMError


def test_errors_keep_their_message_through_pickle_and_copy():
    """An error from a worker process (Dask, ProcessPoolExecutor) reaches the caller pickled: the
    message, status and type stay (red team 24: they arrived with an empty message)."""
    import copy
    import pickle

    from rmmh import librmm_cffi
    from rmmh._cuda.gpu import CUDARuntimeError
    errors = [_errors.error_for(status, "message %d" % status) for status in (1, 2, 3, 4, 5, 6, 7, 8, 99)]
    errors += [_errors.error_for(1, "message alloc", allocation=True),
               CUDARuntimeError(2, "device 5 does not exist"),
               librmm_cffi.RMMError("RMM_ERROR_NOT_INITIALIZED", "not initialized")]
    with pytest.raises(MemoryError) as raised:
        rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 1 << 20).allocate(2 << 20)
    errors.append(raised.value)
    for e in errors:
        for other in (pickle.loads(pickle.dumps(e)), copy.copy(e)):
            assert type(other) is type(e)
            assert str(other) == str(e) and str(e)
            assert (other.errcode, other.status) == (e.errcode, e.status)

    class MyError(rmm.RMMError):  # a user's error with an __init__ of its own pickles as before
        def __init__(self, detail):
            super().__init__("RMM_ERROR_UNKNOWN", detail)

    globals()["MyError"] = MyError
    MyError.__qualname__ = "MyError"
    try:
        assert str(pickle.loads(pickle.dumps(MyError("boom")))) == "boom"
    finally:
        del globals()["MyError"]


def test_oom_message_is_rmm_h_s():
    mr = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 1 << 20)
    with pytest.raises(rmm.OutOfMemoryError, match="limit"):
        mr.allocate(2 << 20)


def test_host_capacity_oom(host_capacity):
    host_capacity(8 << 20)
    with pytest.raises(MemoryError, match="out of memory"):
        rmm.DeviceBuffer(size=16 << 20)
    b = rmm.DeviceBuffer(size=1 << 20)
    assert b.size == 1 << 20


BAD = [None, -1, -(1 << 70), 1 << 70, 1.5, "x", b"x", [], {}, object(), float("nan")]


def _calls(bad):
    mr = rmm.mr.CudaMemoryResource()
    pool = rmm.mr.PoolMemoryResource(mr, 0)  # tells a pointer it never handed out
    buf = rmm.DeviceBuffer(size=16)
    return [
        lambda: rmm.DeviceBuffer(size=bad),
        lambda: rmm.DeviceBuffer(size=4, mr=bad),
        lambda: rmm.DeviceBuffer(size=4, stream=bad),
        lambda: rmm.DeviceBuffer(ptr=bad, size=4),
        lambda: buf.resize(bad),
        lambda: buf.reserve(bad),
        lambda: buf.copy_to_host(bad),
        lambda: buf.copy_from_host(bad),
        lambda: buf.copy_from_device(bad),
        lambda: buf.prefetch(device=bad),
        lambda: rmm.DeviceBuffer.to_device(bad),
        lambda: mr.allocate(bad),
        lambda: pool.deallocate(bad, 16),
        lambda: pool.deallocate(0x100, bad),
        lambda: rmm.mr.PoolMemoryResource(mr, bad),
        lambda: rmm.mr.PoolMemoryResource(mr, 0, bad),
        lambda: rmm.mr.PoolMemoryResource(bad),
        lambda: rmm.mr.FixedSizeMemoryResource(mr, bad),
        lambda: rmm.mr.FixedSizeMemoryResource(mr, 256, bad),
        lambda: rmm.mr.BinningMemoryResource(mr, bad, 10),
        lambda: rmm.mr.BinningMemoryResource(mr).add_bin(bad),
        lambda: rmm.mr.ArenaMemoryResource(mr, bad),
        lambda: rmm.mr.LimitingResourceAdaptor(mr, bad),
        lambda: rmm.mr.LoggingResourceAdaptor(mr, bad),
        lambda: rmm.mr.TrackingResourceAdaptor(bad),
        lambda: rmm.mr.CudaAsyncMemoryResource(bad),
        lambda: rmm.mr.CudaAsyncMemoryResource(0, bad),
        lambda: rmm.mr.CudaAsyncViewMemoryResource(bad),
        lambda: rmm.mr.AlignedResourceAdaptor(mr, bad),
        lambda: rmm.mr.set_per_device_resource(bad, mr),
        lambda: rmm.mr.get_per_device_resource(bad),
        lambda: rmm.mr.set_current_device_resource(bad),
        lambda: rmm.Stream(bad),
        lambda: rmm.reinitialize(devices=bad),
        lambda: rmm.reinitialize(pool_allocator=True, initial_pool_size=bad),
        lambda: rmm._cuda.gpu.setDevice(bad),
    ]


ALLOWED = (TypeError, ValueError, OverflowError, MemoryError, NotImplementedError, RuntimeError)


@pytest.mark.parametrize("bad", BAD, ids=[repr(b)[:20] for b in BAD])
def test_bad_values_raise_never_crash(bad, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a name like "x" is a valid log file name
    for i, call in enumerate(_calls(bad)):
        try:
            call()
        except ALLOWED:
            pass
        except Exception as e:  # anything else is a bug in argument checking
            pytest.fail("call %d with %r raised %s: %s" % (i, bad, type(e).__name__, e))


def test_bad_types_are_type_errors():
    mr = rmm.mr.CudaMemoryResource()
    for call in [lambda: rmm.DeviceBuffer(size="10"), lambda: mr.allocate(1.5),
                 lambda: rmm.DeviceBuffer(size=1, mr=object()),
                 lambda: rmm.mr.StatisticsResourceAdaptor(42),
                 lambda: rmm.DeviceBuffer.to_device(None), lambda: rmm.Stream(3)]:
        with pytest.raises(TypeError):
            call()


def test_pool_resource_errors_are_value_errors():
    with pytest.raises(ValueError):
        rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 100)  # not a multiple of 256
    with pytest.raises(ValueError):
        rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 512, 256)


def test_zero_and_none_edge_cases():
    mr = rmm.mr.CudaMemoryResource()
    assert mr.allocate(0) == 0
    mr.deallocate(0, 0)
    mr.deallocate(0, 100)
    b = rmm.DeviceBuffer()
    assert b.size == 0 and b.ptr == 0 and b.tobytes() == b""
    assert b.copy_to_host().size == 0
    b.copy_from_host(b"")
    assert rmm.DeviceBuffer(ptr=0, size=0).size == 0


@pytest.mark.parametrize("cls", ["CudaMemoryResource", "PoolMemoryResource", "CallbackMemoryResource"])
def test_a_resource_made_by_new_alone_raises_not_initialized(cls):
    # every call that reaches the resource raises rmmh.NotInitializedError naming it, in the
    # extension and in the ctypes fallback alike, as set_current_device_resource and an adaptor's
    # upstream do: DeviceBuffer(mr=) and allocate raised a bare AttributeError naming the slot
    # '_h' or '_refs', and deallocate did too (red team 36b)
    cls = getattr(rmm.mr, cls)
    mr = cls.__new__(cls)
    empty = rmm.DeviceBuffer(size=0, mr=mr)  # (zero bytes: no call reaches the resource)
    for use in (lambda: rmm.DeviceBuffer(size=10, mr=mr), lambda: mr.allocate(10),
                lambda: mr.allocate(10, rmm.Stream()), lambda: mr.deallocate(256, 10),
                lambda: empty.resize(10), lambda: empty.reserve(10)):
        with pytest.raises(rmm.NotInitializedError, match="^%s was never initialized" % cls.__name__) as e:
            use()
        assert isinstance(e.value, AttributeError) and e.value.__cause__ is None
    assert empty.size == 0 and empty.capacity() == 0 and empty.ptr == 0
    # zero bytes stay a no-op, as for an initialized resource and one already destroyed
    assert mr.allocate(0) == 0 and mr.deallocate(0, 10) is None
    done = rmm.mr.CudaMemoryResource()
    done.__del__()
    for ready in (rmm.mr.CudaMemoryResource(), done):
        assert ready.allocate(0) == 0 and ready.deallocate(0, 10) is None


def test_a_call_missing_one_argument_names_only_that_one():
    # the extension's deallocate said "missing required arguments 'ptr' and 'nbytes'" when only
    # nbytes was missing, and its allocate and deallocate name the missing ones as Python's own
    # signature does on the ctypes path (red team 52)
    mr = rmm.mr.CudaMemoryResource()
    with pytest.raises(TypeError, match="nbytes") as e:
        mr.deallocate(256)
    assert "'ptr'" not in str(e.value)
    with pytest.raises(TypeError, match="ptr") as e:
        mr.deallocate(nbytes=10)
    assert "'nbytes'" not in str(e.value)
    with pytest.raises(TypeError, match="'ptr' and 'nbytes'"):
        mr.deallocate()
    p = mr.allocate(10)
    mr.deallocate(p, 10)  # (nothing changed by the refusals)


def test_a_free_of_zero_bytes_names_the_call_made():
    # refused with nothing freed, by a message that names rmm_deallocate, whichever path the
    # extension took (its nowait call named rmm_deallocate_nowait: red team 35)
    for mr in (rmm.mr.CudaMemoryResource(), rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource()),
               rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)):
        p = mr.allocate(10)
        with pytest.raises(rmm.InvalidArgumentError, match=r"^rmm_deallocate\(.*no allocation has 0 bytes"):
            mr.deallocate(p, 0)
        mr.deallocate(p, 10)


@host_only
def test_an_unreachable_address_raises_on_the_host_backend():
    # the host backend's copies refuse an address they cannot reach, as CUDA does
    # (cudaErrorInvalidValue): DeviceBuffer(ptr=12345) killed the process (red team 36)
    with pytest.raises(rmm.CUDAError, match="cudaErrorInvalidValue"):
        rmm.DeviceBuffer(ptr=12345, size=10)
    out = np.zeros(10, dtype=np.uint8)
    with pytest.raises(rmm.CUDAError, match="cudaErrorInvalidValue"):
        rmm._device_buffer.copy_ptr_to_host(12345, out)
    assert not out.any()


def test_random_operation_sequences():
    """A random mix of valid and invalid operations on buffers over a pool: the pool's
    invariants hold and the contents are what was written."""
    rng = np.random.default_rng(1)
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20, 1 << 22)
    rmm.mr.set_current_device_resource(pool)
    live = []
    entry = None
    for step in range(3000):
        op = rng.integers(0, 6)
        if op == 0 or not live:
            n = int(rng.integers(0, 70000))
            data = rng.integers(0, 256, n, dtype=np.uint8)
            try:
                live.append([rmm.DeviceBuffer.to_device(data), data])
            except MemoryError:
                pass
        elif op == 1:
            live.pop(int(rng.integers(0, len(live))))
        elif op == 2:
            entry = live[int(rng.integers(0, len(live)))]
            n = int(rng.integers(0, 80000))
            try:
                entry[0].resize(n)
            except MemoryError:
                continue
            old = entry[1]
            entry[1] = np.concatenate([old[:n], np.frombuffer(entry[0].tobytes()[len(old):n],
                                                              np.uint8)])
        elif op == 3:
            entry = live[int(rng.integers(0, len(live)))]
            assert entry[0].tobytes() == entry[1].tobytes()
        elif op == 4:
            with pytest.raises(ALLOWED):
                rmm.DeviceBuffer(size=int(rng.integers(-10, 0)))
        else:
            entry = live[int(rng.integers(0, len(live)))]
            try:
                entry[0] = entry[0].copy()
            except MemoryError:
                pass
        if step % 100 == 0:
            pool.validate()
    assert all(buf.tobytes() == data.tobytes() for buf, data in live)
    del live, entry
    pool.validate()
    assert pool.info().used_bytes == 0


def test_combinations_of_stream_kinds_and_resources():
    streams = [rmm.DEFAULT_STREAM, rmm.PER_THREAD_DEFAULT_STREAM, rmm.LEGACY_DEFAULT_STREAM,
               rmm.Stream()]
    mrs = [rmm.mr.CudaMemoryResource(), rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 0),
           rmm.mr.ArenaMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 24),
           rmm.mr.BinningMemoryResource(rmm.mr.CudaMemoryResource(), 8, 16)]
    for s, mr in itertools.product(streams, mrs):
        b = rmm.DeviceBuffer.to_device(b"abc" * 100, stream=s)
        c = rmm.DeviceBuffer(ptr=b.ptr, size=b.size, stream=s, mr=mr)
        s.synchronize()
        assert c.tobytes() == b"abc" * 100
