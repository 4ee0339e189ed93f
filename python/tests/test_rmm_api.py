"""RMM API details that RAPIDS RMM's own Python test suite relies on (run unmodified against
rmmh: see python/tests/rmm_suite.sh), each checked here as rmmh's own behaviour: rmm._cuda.gpu's
device attributes, BinningMemoryResource.add_bin replacing a bin, the experimental
CudaAsyncManagedMemoryResource, MemoryError for allocations CUDA refuses, DeviceBuffer asking its
resource for exactly its size, CudaStreamPool, and DeviceBuffer's array interface and to_device
checks."""
import pytest

import rmmh as rmm
from rmmh._cuda import gpu
from conftest import HAVE_GPU, HOST, fail_next, run_child

# cudaDeviceAttr values (cuda.bindings.runtime.cudaDeviceAttr), stable across CUDA 12 and 13
WARP_SIZE, INTEGRATED, PAGEABLE_MEMORY_ACCESS, CONCURRENT_MANAGED_ACCESS = 10, 18, 88, 89
MEMORY_POOLS_SUPPORTED, MEMORY_POOL_HANDLE_TYPES = 115, 119


# ---- rmm._cuda.gpu.getDeviceAttribute -------------------------------------------------------

def test_device_attribute_answers_an_int():
    d = gpu.getDevice()
    assert gpu.getDeviceAttribute(WARP_SIZE, d) == 32
    for attr in (INTEGRATED, CONCURRENT_MANAGED_ACCESS, MEMORY_POOLS_SUPPORTED,
                 MEMORY_POOL_HANDLE_TYPES):
        assert type(gpu.getDeviceAttribute(attr, d)) is int


@pytest.mark.skipif(not HOST, reason="the simulated device's attributes (host backend)")
def test_device_attribute_of_the_simulated_device():
    for device in range(gpu.getDeviceCount()):
        values = {a: gpu.getDeviceAttribute(a, device) for a in
                  (INTEGRATED, PAGEABLE_MEMORY_ACCESS, CONCURRENT_MANAGED_ACCESS,
                   MEMORY_POOLS_SUPPORTED, MEMORY_POOL_HANDLE_TYPES)}
        assert values == {INTEGRATED: 0, PAGEABLE_MEMORY_ACCESS: 0,
                          CONCURRENT_MANAGED_ACCESS: 1, MEMORY_POOLS_SUPPORTED: 1,
                          MEMORY_POOL_HANDLE_TYPES: 1}  # POSIX file descriptors
    assert gpu.getDeviceAttribute(75, 0) == 9  # compute capability 9.0
    assert gpu.getDeviceAttribute(13, 0) == 0  # an attribute not simulated


def test_device_attribute_takes_cuda_bindings_enum():
    runtime = pytest.importorskip("cuda.bindings.runtime")
    attr = runtime.cudaDeviceAttr.cudaDevAttrWarpSize
    assert gpu.getDeviceAttribute(attr, gpu.getDevice()) == 32


def test_device_attribute_errors():
    with pytest.raises(gpu.CUDARuntimeError, match="cudaErrorInvalidDevice") as e:
        gpu.getDeviceAttribute(WARP_SIZE, 4096)
    assert e.value.status == 101  # cudaErrorInvalidDevice
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(gpu.CUDARuntimeError, match="cudaErrorInvalidValue") as e:
        gpu.getDeviceAttribute(0, gpu.getDevice())
    assert e.value.status == 1  # cudaErrorInvalidValue
    with pytest.raises(TypeError, match="attr"):
        gpu.getDeviceAttribute("cudaDevAttrWarpSize", 0)
    with pytest.raises(TypeError, match="device"):
        gpu.getDeviceAttribute(WARP_SIZE, None)


def test_device_name_and_properties():
    """RMM's rmm._cuda.gpu.deviceGetName, getDeviceProperties and CUDADriverError (missing until
    2026-11-30, a red team's find): through cuda-python on a GPU, NotSupportedError on the host
    backend and without cuda-python."""
    import pickle
    e = pickle.loads(pickle.dumps(gpu.CUDADriverError(101, "cuDeviceGetName(9): CUDA_ERROR_INVALID_DEVICE")))
    assert type(e) is gpu.CUDADriverError and e.status == 101 and isinstance(e, RuntimeError)
    with pytest.raises(TypeError, match="device"):
        gpu.deviceGetName(None)
    try:
        import cuda.bindings.driver  # noqa: F401
        have_bindings = True
    except ImportError:
        have_bindings = False
    if HOST or not have_bindings:
        for query in (gpu.deviceGetName, gpu.getDeviceProperties):
            with pytest.raises(rmm.RMMError, match="host backend|cuda-python") as e:
                query(0)
            assert isinstance(e.value, NotImplementedError)
        return
    name = gpu.deviceGetName(gpu.getDevice())
    assert isinstance(name, str) and name
    # a fresh process, where nothing has started the driver API yet (it raised CUDA_ERROR_NOT_INITIALIZED)
    fresh = run_child("from rmmh._cuda import gpu; print(gpu.deviceGetName(0))")
    assert fresh.strip() == gpu.deviceGetName(0)
    assert gpu.getDeviceProperties(gpu.getDevice()).name.split(b"\0", 1)[0].decode() == name
    with pytest.raises(gpu.CUDADriverError):
        gpu.deviceGetName(gpu.getDeviceCount() + 4)
    with pytest.raises(gpu.CUDARuntimeError):
        gpu.getDeviceProperties(gpu.getDeviceCount() + 4)


def test_cuda_errors_made_from_a_status_alone_say_which_error():
    """CUDARuntimeError(status) and CUDADriverError(status), as code calling cuda-python itself
    raises them (RMM's constructors take the status alone), carry the error's name and text:
    RMM's message "cudaErrorMemoryAllocation: out of memory" (they were empty until 2026-12-03,
    an API audit's find). Through cuda-python when it answers; else the status's enum name or
    its number."""
    import pickle
    e = gpu.CUDARuntimeError(2)
    assert e.status == 2 and isinstance(e, RuntimeError) and str(e)
    assert str(pickle.loads(pickle.dumps(e))) == str(e)
    assert str(gpu.CUDARuntimeError(2, "the call's own message")) == "the call's own message"
    assert str(gpu.CUDADriverError(101))
    assert str(gpu.CUDARuntimeError(123456))  # a number CUDA does not know: the number
    assert "123456" in str(gpu.CUDARuntimeError(123456))
    try:
        from cuda.bindings import driver, runtime
    except ImportError:
        return
    e = gpu.CUDARuntimeError(runtime.cudaError_t.cudaErrorMemoryAllocation)
    assert str(e) == "cudaErrorMemoryAllocation: out of memory"  # RMM's, word for word
    assert e.status == runtime.cudaError_t.cudaErrorMemoryAllocation
    assert str(gpu.CUDARuntimeError(2)) == str(e)
    # the driver's name needs no driver; its text does (RMM's constructor raises without one)
    assert str(gpu.CUDADriverError(driver.CUresult.CUDA_ERROR_INVALID_DEVICE)).startswith(
        "CUDA_ERROR_INVALID_DEVICE")


def test_mr_star_import_gives_experimental():
    """rmm.mr.__all__ lists "experimental", as RMM 26.10's does (left out until 2026-12-03, an
    API audit's find), so `from rmm.mr import *` binds rmm.mr.experimental; rmmh's additions
    stay listed too."""
    assert "experimental" in rmm.mr.__all__ and "PoolMemoryResource" in rmm.mr.__all__
    assert "experimental" not in rmm.mr.experimental.__all__
    namespace = {}
    exec("from rmmh.mr import *", namespace)
    assert namespace["experimental"] is rmm.mr.experimental
    from rmmh import _memory_resource
    assert "experimental" not in _memory_resource.__all__  # (the module has none of that name)


def test_rmm_s_other_module_paths_import():
    """rmm._version (RMM's __version__ and __git_commit__, which rmm/__init__ imports from it) and
    rmm.pylibrmm.utils (whose one function, as_stream, is Cython-level only in RMM: the module has
    no Python names) import, as RMM 26.10's modules do (missing until 2026-12-03, an API audit's
    find)."""
    import importlib
    version = importlib.import_module("rmmh._version")
    assert (version.__version__, version.__git_commit__) == (rmm.__version__, rmm.__git_commit__)
    assert version.__all__ == ["__git_commit__", "__version__"]
    utils = importlib.import_module("rmmh.pylibrmm.utils")
    assert rmm.pylibrmm.utils is utils
    assert not [n for n in vars(utils) if not n.startswith("_")]


def test_pylibrmm_exports_what_rmm_s_does():
    """rmm.pylibrmm's names and __all__ as RMM 26.10's (CudaStreamPool and CudaStreamFlags were
    missing until 2026-11-30, a red team's find), and rmm.pylibrmm.stream._OwningStream."""
    import rmmh.pylibrmm as pylibrmm
    from rmmh.pylibrmm import CudaStreamFlags, CudaStreamPool, DeviceBuffer, memory_resource  # noqa: F401
    from rmmh.pylibrmm.stream import CudaStream, _OwningStream
    assert pylibrmm.__all__ == ["CudaStreamPool", "CudaStreamFlags", "DeviceBuffer", "memory_resource"]
    assert CudaStreamPool is rmm.pylibrmm.cuda_stream_pool.CudaStreamPool and CudaStream is _OwningStream
    assert CudaStreamFlags.NON_BLOCKING != CudaStreamFlags.SYNC_DEFAULT


def test_pylibrmm_cuda_stream_is_rmm_s_deprecated_module():
    """rmm.pylibrmm.cuda_stream, which RMM keeps for code from before CudaStream and CudaStreamFlags
    moved to rmm.pylibrmm.stream, imports with RMM's DeprecationWarning and gives the same objects
    (it was missing: a docs audit's find, 2026-12-01); the stream it makes owns a CUDA stream."""
    import importlib
    import sys
    import warnings
    sys.modules.pop("rmmh.pylibrmm.cuda_stream", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = importlib.import_module("rmmh.pylibrmm.cuda_stream")
    assert any(issubclass(w.category, DeprecationWarning) and "rmm.pylibrmm.stream" in str(w.message) for w in caught)
    from rmmh.pylibrmm.stream import CudaStream, CudaStreamFlags
    assert mod.CudaStream is CudaStream and mod.CudaStreamFlags is CudaStreamFlags
    assert mod.__all__ == ["CudaStream", "CudaStreamFlags"]
    s = rmm.pylibrmm.stream.Stream(flags=mod.CudaStreamFlags.NON_BLOCKING)
    assert s.handle != 0
    s.synchronize()


def test_subclasses_that_skip_the_base_init():
    """RMM's resources and Stream are cdef classes: their C object is made in __cinit__ (a Stream's
    handle is NULL, the default stream, until set), whatever a subclass's __init__ does. Until
    2026-11-30 (a red team's find) a subclass whose __init__ did not call its base's raised
    AttributeError in every call; its resource is made after its __init__ (its own or a mixin's)
    now, and such a Stream is the default stream. A Python-level resource over the abstract bases
    (a test double) stays one (review 32: the first version tried to make it a C resource)."""
    base = rmm.mr.CudaMemoryResource()

    class MyStats(rmm.mr.StatisticsResourceAdaptor):
        def __init__(self, upstream_mr):
            self.note = "no super().__init__"

    s = MyStats(base)
    assert s.note == "no super().__init__" and s.get_upstream() is base
    buf = rmm.DeviceBuffer(size=10, mr=s)
    assert s.allocation_counts.current_bytes == 10
    del buf
    assert s.allocation_counts.current_bytes == 0
    with pytest.raises(TypeError, match="may be called once"):
        s.__init__(base)

    class Tag:
        def __init__(self, upstream_mr):
            self.tag = "mixin"

    class MixStats(Tag, rmm.mr.StatisticsResourceAdaptor):
        pass

    m = MixStats(base)
    assert m.tag == "mixin" and rmm.DeviceBuffer(size=16, mr=m).size == 16

    class Sized(rmm.mr.PoolMemoryResource):
        def __init__(self, upstream_mr):
            super().__init__(upstream_mr, initial_pool_size=2**20)

    class Child(Sized):
        def __init__(self, upstream_mr):
            self.x = 1

    assert Child(base).pool_size() > 0  # (PoolMemoryResource's own defaults, as RMM's __cinit__)

    class FakeMR(rmm.mr.DeviceMemoryResource):  # a test double: no C resource
        def __init__(self):
            self.calls = []

        def allocate(self, nbytes, stream=rmm.DEFAULT_STREAM):
            self.calls.append(("a", nbytes))
            return 0x1000

        def deallocate(self, ptr, nbytes, stream=rmm.DEFAULT_STREAM):
            self.calls.append(("d", nbytes))

    fake = FakeMR()
    fake.deallocate(fake.allocate(8), 8)
    assert fake.calls == [("a", 8), ("d", 8)]

    class Wrap(rmm.mr.UpstreamResourceAdaptor):
        def __init__(self, upstream_mr):
            self.inner = upstream_mr

        def allocate(self, nbytes, stream=rmm.DEFAULT_STREAM):
            return self.inner.allocate(nbytes, stream)

        def deallocate(self, ptr, nbytes, stream=rmm.DEFAULT_STREAM):
            return self.inner.deallocate(ptr, nbytes, stream)

    w = Wrap(base)
    w.deallocate(w.allocate(8), 8)

    class MyStream(rmm.Stream):
        __slots__ = ("name_",)

        def __init__(self, name):
            self.name_ = name

    st = MyStream("x")
    assert st == rmm.DEFAULT_STREAM and st.handle == 0 and "default" in repr(st)
    st.synchronize()
    rmm.DeviceBuffer(size=4, stream=st)
    owned = type("Owned", (rmm.Stream,), {"__init__": lambda self: rmm.Stream.__init__(self)})()
    assert owned.handle != 0  # (one that does call Stream's keeps its own stream)


def test_objects_made_by_new_alone():
    """A resource made by __new__ alone (RMM's would have been made with no arguments) raises
    rmmh.NotInitializedError, a TypeError and an AttributeError, where rmmh meets it (as an
    upstream, a current resource, a GraphPool's upstream, get_upstream, and since red team 36b in
    allocate and DeviceBuffer(mr=), whose paths raised the AttributeError of the slot, translated
    only where the slot's read fails). Stream, DeviceMemoryResource and CudaStreamPool
    define no __getattr__: one made every read of their attributes about 3x slower and a
    resource's allocate and deallocate from Python 1.5x slower (review 32)."""
    for cls in (rmm.Stream, rmm.mr.DeviceMemoryResource, rmm.pylibrmm.CudaStreamPool):
        assert not hasattr(cls, "__getattr__")
    for cls in (rmm.mr.CudaMemoryResource, rmm.mr.PoolMemoryResource, rmm.mr.LoggingResourceAdaptor):
        mr = cls.__new__(cls)
        for use in (lambda: rmm.mr.PoolMemoryResource(mr), lambda: rmm.mr.set_current_device_resource(mr)):
            with pytest.raises(rmm.NotInitializedError, match="never initialized"):
                use()
        for use in (lambda: mr.allocate(8), lambda: rmm.DeviceBuffer(size=8, mr=mr)):
            with pytest.raises(rmm.NotInitializedError, match="never initialized"):
                use()
        assert "empty" in repr(mr) and getattr(mr, "_refs", None) is None
    with pytest.raises(rmm.NotInitializedError):
        rmm.mr.PoolMemoryResource.__new__(rmm.mr.PoolMemoryResource).get_upstream()


def test_set_device_errors_carry_the_cuda_error():
    """setDevice with a device that does not exist raises RMM's CUDARuntimeError with status
    cudaErrorInvalidDevice (101), and reinitialize the same (RMM's _initialize calls setDevice),
    each also a ValueError; before red team 28 setDevice's status was rmm.h's 2 (which, read as a
    cudaError_t, is cudaErrorMemoryAllocation) and reinitialize raised InvalidArgumentError alone."""
    import pickle
    count = gpu.getDeviceCount()
    with pytest.raises(gpu.CUDARuntimeError, match="does not exist") as e:
        gpu.setDevice(count + 4)
    assert e.value.status == 101 and isinstance(e.value, ValueError)
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is type(e.value) and back.status == 101 and str(back) == str(e.value)
    with pytest.raises(gpu.CUDARuntimeError, match="does not exist") as e:
        rmm.reinitialize(devices=[count + 4])
    assert e.value.status == 101 and isinstance(e.value, ValueError)
    assert gpu.getDevice() == 0
    gpu.setDevice(0)


def test_device_errors_take_the_cuda_error_number_from_rmm_h():
    """The cudaError_t of a failed device call is rmm.h's rmm_last_cuda_error(), whatever the
    message says (it was read from the error name in the message, through a table that knew 13
    names until review 28 and CUDA 13's since); a failure that was not a CUDA call's own reads as
    cudaErrorUnknown, and rmm.h's INVALID_ARGUMENT (a device that does not exist) as 101."""
    from rmmh._cuda.gpu import _device_error
    for number in (700, 719, 800, 100, 35, 1234):
        e = _device_error(1, "cudaSetDevice(device=0) failed: cudaErrorInvalidValue (text)", number)
        assert type(e) is gpu.CUDARuntimeError and e.status == number, number
    assert _device_error(1, "no CUDA call failed", 0).status == 999
    e = _device_error(2, "rmm_set_device: device 9 does not exist", 0)
    assert type(e) is gpu.InvalidDeviceError and e.status == 101


def test_rmm_last_cuda_error_follows_the_last_failure():
    """rmm_last_cuda_error(), bound in rmmh._lib: 0 after a failure that was not a CUDA call's, the
    CUDA error number after one that was (cudaErrorMemoryAllocation, 2, for a cudaMalloc of
    nearly 2^64 bytes), on both backends."""
    from rmmh import _lib
    mr = rmm.mr.CudaMemoryResource()
    _lib.rmm_set_last_error(5, b"mine")
    assert _lib.rmm_last_cuda_error() == 0
    with pytest.raises(MemoryError):
        mr.allocate(2**64 - 2**20)
    assert _lib.rmm_last_cuda_error() == 2 and b"cudaMalloc" in _lib.rmm_last_error()


@pytest.mark.skipif(not HOST, reason="injected CUDA failures (host backend)")
def test_a_failed_device_query_carries_a_cuda_error_number():
    """getDevice and setDevice whose CUDA call fails raise CUDARuntimeError with the cudaError_t
    rmm.h's message names (the host backend's injected failure: cudaErrorUnknown, 999), not
    rmm.h's status 1."""
    fail_next("cudaGetDevice")
    try:
        with pytest.raises(gpu.CUDARuntimeError, match="cudaGetDevice") as e:
            gpu.getDevice()
    finally:
        fail_next(None, 0)
    assert e.value.status == 999
    fail_next("cudaSetDevice")
    try:
        with pytest.raises(gpu.CUDARuntimeError, match="cudaSetDevice") as e:
            gpu.setDevice(0)
    finally:
        fail_next(None, 0)
    assert e.value.status == 999 and not isinstance(e.value, ValueError)


# ---- BinningMemoryResource.add_bin replaces a bin --------------------------------------------

def counting(upstream):
    """A CallbackMemoryResource over upstream that records each allocation's size."""
    seen = []

    def alloc(n, stream):
        seen.append(n)
        return upstream.allocate(n, stream)

    return rmm.mr.CallbackMemoryResource(alloc, lambda p, n, s: upstream.deallocate(p, n, s)), seen


def test_add_bin_replaces_an_automatic_bin():
    up = rmm.mr.CudaMemoryResource()
    mr = rmm.mr.BinningMemoryResource(up, 10, 17)  # bins of 1 KiB .. 128 KiB
    first, seen_first = counting(up)
    mr.add_bin(1 << 10, first)  # replaces the automatic 1 KiB bin
    again, seen = counting(up)
    mr.add_bin(1000, again)  # rounded up to 1 KiB too: replaces `first`
    mr.add_bin(1 << 27, rmm.mr.CudaMemoryResource())  # a new bin
    mr.add_bin(1 << 11)  # an automatic size again: a fixed-size bin, as before
    assert mr.bin_mrs[:2] == [first, again]  # as RMM: every resource added stays listed
    small, big = mr.allocate(1000), mr.allocate(1500)  # big: the 2 KiB bin
    assert seen == [1000] and seen_first == []
    mr.deallocate(small, 1000)
    mr.deallocate(big, 1500)
    mr.validate()


def test_add_bin_replacement_keeps_the_resource_current():
    mr = rmm.mr.BinningMemoryResource(rmm.mr.CudaMemoryResource(), 10, 12)
    rmm.mr.set_current_device_resource(mr)
    counter, seen = counting(rmm.mr.CudaMemoryResource())
    mr.add_bin(1 << 11, counter)
    assert rmm.mr.get_current_device_resource() is mr
    buf = rmm.DeviceBuffer(size=2000)  # through the C table
    assert seen == [2000]
    del buf


def test_add_bin_after_the_first_allocation_raises():
    mr = rmm.mr.BinningMemoryResource(rmm.mr.CudaMemoryResource(), 10, 12)
    mr.deallocate(mr.allocate(100), 100)
    for size in (1 << 10, 1 << 14):  # a replacement, a new bin: both refused (an rmm.h rule)
        with pytest.raises(rmm.InvalidArgumentError, match="first allocation"):
            mr.add_bin(size, rmm.mr.CudaMemoryResource())
    buf = rmm.DeviceBuffer(size=100, mr=mr)  # still usable
    del buf


def test_add_bin_replacement_while_held():
    """rmm.h replaces the bin in place: an adaptor over the resource does not stop it."""
    mr = rmm.mr.BinningMemoryResource(rmm.mr.CudaMemoryResource(), 10, 12)
    stats = rmm.mr.StatisticsResourceAdaptor(mr)  # holds the C binning resource
    counter, seen = counting(rmm.mr.CudaMemoryResource())
    mr.add_bin(1 << 10, counter)
    mr.add_bin(1 << 14)
    buf = rmm.DeviceBuffer(size=700, mr=stats)
    assert seen == [700]  # the replacement serves, through the adaptor
    del buf
    del stats


def test_add_bin_bad_arguments():
    mr = rmm.mr.BinningMemoryResource(rmm.mr.CudaMemoryResource(), 10, 12)
    with pytest.raises(ValueError, match="allocation_size"):
        mr.add_bin(0)
    with pytest.raises(OverflowError, match="allocation_size"):
        mr.add_bin(-1)
    with pytest.raises(TypeError, match="allocation_size"):
        mr.add_bin("1KiB")
    with pytest.raises(TypeError, match="bin_resource"):
        mr.add_bin(1 << 10, object())


# ---- rmm.mr.experimental.CudaAsyncManagedMemoryResource ---------------------------------------

def async_managed_supported():
    return HOST or (gpu.runtimeGetVersion() >= 13000 and gpu.getDeviceAttribute(
        CONCURRENT_MANAGED_ACCESS, gpu.getDevice()) == 1)


def test_async_managed_import_paths():
    import rmmh.mr.experimental
    import rmmh.pylibrmm.memory_resource.experimental as pe
    cls = rmm.mr.experimental.CudaAsyncManagedMemoryResource
    assert rmmh.mr.experimental.__all__ == ["CudaAsyncManagedMemoryResource",
                                            "CudaAsyncPinnedMemoryResource"]
    assert pe.CudaAsyncManagedMemoryResource is cls
    assert rmm.pylibrmm.memory_resource.experimental is pe
    assert issubclass(cls, rmm.mr.DeviceMemoryResource)


def test_async_managed_resource():
    if not async_managed_supported():
        with pytest.raises(rmm.NotSupportedError):
            rmm.mr.experimental.CudaAsyncManagedMemoryResource()
        return
    mr = rmm.mr.experimental.CudaAsyncManagedMemoryResource()
    handle = mr.pool_handle()
    assert isinstance(handle, int) and handle != 0
    # the device's default managed pool: the same for every such resource of the device
    assert rmm.mr.experimental.CudaAsyncManagedMemoryResource().pool_handle() == handle
    rmm.mr.set_current_device_resource(mr)
    assert type(rmm.mr.get_current_device_resource()) is type(mr)
    stream = rmm.Stream()
    data = bytes(range(200))
    buf = rmm.DeviceBuffer.to_device(data, stream=stream)
    host = buf.copy_to_host(stream=stream)
    stream.synchronize()
    assert host.tobytes() == data
    p = mr.allocate(1000, stream)
    mr.deallocate(p, 1000, stream)
    # a view of the driver's pool works too
    view = rmm.mr.CudaAsyncViewMemoryResource(handle)
    view.deallocate(view.allocate(100), 100)


@pytest.mark.skipif(not HOST, reason="the simulated pools (host backend)")
def test_async_managed_pool_per_device():
    mr0 = rmm.mr.experimental.CudaAsyncManagedMemoryResource()
    gpu.setDevice(1)
    try:
        mr1 = rmm.mr.experimental.CudaAsyncManagedMemoryResource()
    finally:
        gpu.setDevice(0)
    assert mr0.pool_handle() != mr1.pool_handle()


# ---- rmm.mr.experimental.CudaAsyncPinnedMemoryResource (rmm.h's; RMM has none) -------------------

def test_async_pinned_resource():
    import ctypes
    cls = rmm.mr.experimental.CudaAsyncPinnedMemoryResource
    assert issubclass(cls, rmm.mr.DeviceMemoryResource)
    with pytest.raises(ValueError):
        cls(initial_pool_size=-1)
    with pytest.raises(TypeError):
        cls(release_threshold=1.5)
    mr = cls(initial_pool_size="1MiB", release_threshold="64MiB")
    handle = mr.pool_handle()
    assert isinstance(handle, int) and handle != 0
    assert cls().pool_handle() != handle  # each owns its pool
    stream = rmm.Stream()
    data = bytes(range(256)) * 16
    buf = rmm.DeviceBuffer(size=len(data), stream=stream, mr=mr)
    buf.copy_from_host(data, stream=stream)
    stream.synchronize()
    assert ctypes.string_at(buf.ptr, len(data)) == data  # the host reads it in place
    ctypes.memmove(buf.ptr, b"\x07" * 100, 100)  # and writes it
    assert buf.copy_to_host(stream=stream).tobytes() == b"\x07" * 100 + data[100:]
    del buf
    # a view of the pool keeps it alive
    view = rmm.mr.CudaAsyncViewMemoryResource(handle)
    del mr
    p = view.allocate(4096, stream)
    view.deallocate(p, 4096, stream)
    stream.synchronize()


# ---- a CUDA error in an allocation is a MemoryError ---------------------------------------------

@pytest.mark.skipif(not HOST, reason="injected CUDA failures (host backend)")
@pytest.mark.parametrize("make, call", [
    (lambda: rmm.mr.CudaAsyncMemoryResource(initial_pool_size=0), "cudaMallocFromPoolAsync"),
    (rmm.mr.CudaMemoryResource, "cudaMalloc"),
    (rmm.mr.ManagedMemoryResource, "cudaMallocManaged")])
def test_cuda_error_in_an_allocation_is_a_memory_error(make, call):
    mr = make()
    rmm.mr.set_current_device_resource(mr)
    small = rmm.DeviceBuffer(size=10)
    for allocate in (lambda: mr.allocate(100), lambda: rmm.DeviceBuffer(size=100),
                     lambda: small.resize(1000)):
        fail_next(call)
        try:
            with pytest.raises(MemoryError, match=call) as e:
                allocate()
        finally:
            fail_next(None)
        assert isinstance(e.value, rmm.CUDAAllocationError)
        assert isinstance(e.value, rmm.CUDAError) and isinstance(e.value, RuntimeError)
        assert not isinstance(e.value, rmm.OutOfMemoryError)
    assert small.size == 10  # the failed resize left it as it was
    small.resize(1000)  # works again


@pytest.mark.skipif(not HOST, reason="injected CUDA failures (host backend)")
def test_cuda_error_in_a_free_is_not_a_memory_error():
    mr = rmm.mr.CudaMemoryResource()
    p = mr.allocate(100)
    fail_next("cudaFree")
    try:
        with pytest.raises(rmm.CUDAError) as e:
            mr.deallocate(p, 100)
    finally:
        fail_next(None)
    assert not isinstance(e.value, MemoryError)
    mr.deallocate(p, 100)


@pytest.mark.skipif(not HOST, reason="injected CUDA failures (host backend)")
@pytest.mark.parametrize("op", ["resize", "reserve", "shrink_to_fit", "shrink_to_nothing"])
def test_a_failed_free_of_the_old_block_leaves_the_buffer_as_it_was(op):
    # resize, reserve and shrink_to_fit make a new block, copy and free the old one; where that
    # free fails the call raises and the buffer keeps its old block, size, capacity and stream,
    # and the new block goes back (red team 35: the buffer had the new block and the old one was
    # lost, still counted by the statistics adaptor after the buffer was gone)
    # (review 35: a shrink to nothing gave the old block back but let go of its holds, so the
    # resource could be destroyed under it; the holds are counted here)
    stats = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    other = rmm.Stream()
    b = rmm.DeviceBuffer(size=11, mr=stats)
    b.copy_from_host(b"hello world")
    if op == "shrink_to_fit":
        b.resize(5)
    elif op == "shrink_to_nothing":
        b.resize(0)
    before = (b.size, b.capacity(), b.ptr, b.stream)
    holds = (len(stats._refs), len(other._refs))
    fail_next("cudaFree")
    try:
        with pytest.raises(rmm.CUDAError, match="cudaFree"):
            if op.startswith("shrink"):
                b.shrink_to_fit(stream=other)
            else:
                getattr(b, op)(1000, stream=other)
    finally:
        fail_next(None)
    assert (b.size, b.capacity(), b.ptr, b.stream) == before
    assert (len(stats._refs), len(other._refs)) == holds
    assert stats.allocation_counts.current_bytes == 11
    assert b.tobytes()[:b.size] == b"hello world"[:b.size]
    if op.startswith("shrink"):
        b.shrink_to_fit()  # works again
    else:
        getattr(b, op)(1000)
    del b
    assert stats.allocation_counts.current_bytes == 0 and len(stats._refs) == holds[0] - 1


@pytest.mark.skipif(not HAVE_GPU, reason="needs a GPU (cudaMemPoolDestroy)")
def test_allocation_from_a_destroyed_pool_is_a_memory_error():
    runtime = pytest.importorskip("cuda.bindings.runtime")
    props = runtime.cudaMemPoolProps()
    props.allocType = runtime.cudaMemAllocationType.cudaMemAllocationTypePinned
    props.location.id = gpu.getDevice()
    props.location.type = runtime.cudaMemLocationType.cudaMemLocationTypeDevice
    err, pool = runtime.cudaMemPoolCreate(props)
    assert err == runtime.cudaError_t.cudaSuccess
    mr = rmm.mr.CudaAsyncViewMemoryResource(pool)
    buf = rmm.DeviceBuffer(size=100, mr=mr)
    del buf
    rmm.DEFAULT_STREAM.synchronize()
    (err,) = runtime.cudaMemPoolDestroy(pool)
    assert err == runtime.cudaError_t.cudaSuccess
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer(size=100, mr=mr)
    with pytest.raises(MemoryError):
        mr.allocate(100)


# ---- rmm.pylibrmm.cuda_stream_pool.CudaStreamPool ----------------------------------------------

@pytest.mark.parametrize("flags", [rmm.CudaStreamFlags.SYNC_DEFAULT,
                                   rmm.CudaStreamFlags.NON_BLOCKING])
def test_cuda_stream_pool(flags):
    from rmmh.pylibrmm.cuda_stream_pool import CudaStreamPool
    pool = CudaStreamPool(pool_size=10, flags=flags)
    assert pool.get_pool_size() == 10
    streams = [pool.get_stream() for _ in range(10)]
    assert len(set(streams)) == 10 and rmm.DEFAULT_STREAM not in streams
    assert all(streams[i] == pool.get_stream(i) for i in range(10))
    assert pool.get_stream() == streams[0]  # round robin
    assert pool.get_stream(13) == streams[3]  # modulo the size
    # the streams work, and outlive the pool object while a buffer freed on one lives
    buf = rmm.DeviceBuffer.to_device(b"abc", stream=streams[1])
    streams[1].synchronize()
    del pool, streams
    import gc
    gc.collect()
    assert buf.tobytes() == b"abc"
    del buf


def test_cuda_stream_pool_defaults_and_bad_arguments():
    from rmmh.pylibrmm import CudaStreamFlags
    from rmmh.pylibrmm.cuda_stream_pool import CudaStreamPool
    assert CudaStreamPool().get_pool_size() == 16
    with pytest.raises(ValueError, match="pool_size"):
        CudaStreamPool(0)
    with pytest.raises(RuntimeError, match="pool_size"):  # as RMM (a C++ logic_error)
        CudaStreamPool(0)
    with pytest.raises(OverflowError, match="pool_size"):
        CudaStreamPool(-1)
    for flags in (CudaStreamFlags.SYNC_DEFAULT, CudaStreamFlags.NON_BLOCKING):  # refused at once, no stream made
        with pytest.raises(ValueError, match="RMM_STREAM_POOL_MAX"):
            CudaStreamPool(10**9, flags=flags)
        with pytest.raises(ValueError, match="65537 is more than the 65536"):
            CudaStreamPool(65537, flags=flags)
    with pytest.raises(TypeError, match="pool_size"):
        CudaStreamPool("4")
    with pytest.raises(ValueError, match="flags"):
        CudaStreamPool(4, flags=7)
    pool = CudaStreamPool(2)
    with pytest.raises(OverflowError, match="stream_id"):
        pool.get_stream(-1)
    with pytest.raises(TypeError, match="stream_id"):
        pool.get_stream("0")


# ---- small differences --------------------------------------------------------------------------

@pytest.mark.skipif(not HOST, reason="the simulated device exports no fabric handles")
def test_unsupported_export_handle_message_is_rmms():
    with pytest.raises(RuntimeError) as e:
        rmm.mr.CudaAsyncMemoryResource(enable_fabric=True)
    assert isinstance(e.value, rmm.NotSupportedError)
    assert str(e.value).endswith("Requested IPC memory handle type not supported")
    assert "RMM_EXPORT_FABRIC" in str(e.value)  # rmm.h's reason first


@pytest.mark.parametrize("kwargs", [dict(pool_allocator=True, initial_pool_size=1000),
                                    dict(pool_allocator=True, initial_pool_size=-256),
                                    dict(pool_allocator=True, maximum_pool_size=1000),
                                    dict(logging=True, log_file_name="/nonexistent/dir/rmm.csv")])
def test_reinitialize_checks_its_arguments_before_any_resource_changes(kwargs):
    """A bad size or a log file that cannot be written raises, and every device keeps its
    resource (red team 17: the previous pool was gone when the call raised)."""
    rmm.reinitialize(pool_allocator=True, initial_pool_size="4MiB")
    before = rmm.mr.get_current_device_resource()
    assert isinstance(before, rmm.mr.PoolMemoryResource)
    with pytest.raises((ValueError, RuntimeError)):
        rmm.reinitialize(**kwargs)
    assert rmm.mr.get_current_device_resource() is before
    rmm.reinitialize()


def test_reinitialize_refuses_a_device_that_does_not_exist():
    """A device id past the device count raises before any resource changes (red team 23: every
    device was reset, and the devices before it in the list set up)."""
    count = rmm._cuda.gpu.getDeviceCount()
    rmm.reinitialize(pool_allocator=True, initial_pool_size="4MiB")
    before = rmm.mr.get_current_device_resource()
    for devices in ([0, count], [count + 5], [-1]):
        with pytest.raises(ValueError, match="does not exist"):
            rmm.reinitialize(devices=devices)
        assert rmm.mr.get_current_device_resource() is before
    rmm.reinitialize()


def test_reinitialize_checks_each_devices_log_file_first(tmp_path):
    """A device's log file that is a directory raises before any resource changes (red team of
    2026-11-29: the writable folder passed the check, the adaptor's open failed with every device's
    resource reset)."""
    (tmp_path / "rmm.dev0.csv").mkdir()
    rmm.reinitialize(pool_allocator=True, initial_pool_size="4MiB")
    before = rmm.mr.get_current_device_resource()
    with pytest.raises(RuntimeError, match="rmm.dev0.csv"):
        rmm.reinitialize(logging=True, log_file_name=str(tmp_path / "rmm.csv"))
    assert rmm.mr.get_current_device_resource() is before
    rmm.reinitialize()
