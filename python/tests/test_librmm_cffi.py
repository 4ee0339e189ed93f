"""The 2019 API (rmmh.librmm_cffi): lifecycle, raw allocation, the CSV log and IPC offsets on
any backend; Numba device arrays where Numba and a GPU are present. A stand-in for Numba
checks, without a GPU, that the array functions call Numba's API as documented."""
import sys
import types

import numpy as np
import pytest

from conftest import HAVE_GPU

import rmmh as rmm  # noqa: E402
from rmmh import _lib  # noqa: E402
from rmmh.librmm_cffi import RMMError, librmm, librmm_config  # noqa: E402  (initializes)


@pytest.fixture
def config():
    """Restores the default options and a fresh initialization after the test."""
    saved = dict(vars(librmm_config))
    yield librmm_config
    for k in ("use_pool_allocator", "use_managed_memory", "initial_pool_size", "enable_logging"):
        setattr(librmm_config, k, saved[k])
    if librmm.is_initialized():
        librmm.finalize()
    librmm.initialize()


def test_initialized_on_import_and_lifecycle(config):
    assert librmm.is_initialized()
    with pytest.raises(RMMError) as e:
        librmm.initialize()  # twice
    assert e.value.errcode == "RMM_ERROR_INVALID_ARGUMENT"
    librmm.finalize()
    assert not librmm.is_initialized()
    with pytest.raises(RMMError, match="not initialized") as e:
        librmm.rmmAlloc(10)
    assert e.value.errcode == "RMM_ERROR_NOT_INITIALIZED"
    with pytest.raises(RMMError):
        librmm.finalize()
    librmm.initialize()


def test_an_array_finalizer_frees_only_in_its_own_session(config, monkeypatch):
    """A device array's finalizer (what device_array attaches) frees its memory only in the
    initialize()..finalize() session that allocated it: after finalize() and a new initialize()
    the address may be another block's (a red team's find: it freed by address in any session).
    The frees are watched, not made, for the stale one."""
    a = librmm.rmmAlloc(4096)
    fin = librmm._make_finalizer(a, 0)
    librmm.finalize()  # a goes with the resources
    librmm.initialize()
    freed = []
    monkeypatch.setattr(type(librmm), "rmmFree", lambda self, addr, stream=0: freed.append(addr))
    fin()  # the old array collected now: nothing freed
    assert freed == []
    b = librmm.rmmAlloc(4096)
    librmm._make_finalizer(b, 0)()  # this session's: freed
    assert freed == [b]
    monkeypatch.undo()
    librmm.rmmFree(b)


@pytest.mark.parametrize("pool,managed", [(False, False), (True, False), (True, True),
                                          (False, True)])
def test_alloc_free_modes(config, pool, managed):
    librmm.finalize()
    config.use_pool_allocator, config.use_managed_memory = pool, managed
    config.initial_pool_size = 1 << 20
    librmm.initialize()
    ptrs = [librmm.rmmAlloc(n) for n in (1, 100, 1000, 1 << 16)]
    assert all(p and p % 256 == 0 for p in ptrs)
    assert librmm.rmmAlloc(0) == 0
    if pool:
        assert librmm.get_allocation_offset(ptrs[1]) > 0  # inside the pool's chunk
    else:
        assert librmm.get_allocation_offset(ptrs[1]) == 0
    for p in ptrs:
        librmm.rmmFree(p)
    with pytest.raises(RMMError, match="not allocated"):
        librmm.rmmFree(ptrs[0])
    free, total = librmm.rmmGetInfo()
    assert total >= free > 0


def test_csv_log(config):
    librmm.finalize()
    config.enable_logging = True
    librmm.initialize()
    p = librmm.rmmAlloc(1234)
    librmm.rmmFree(p)
    log = librmm.csv_log()
    lines = log.strip().splitlines()
    assert lines[0] == "Thread,Time,Action,Pointer,Size,Stream,Location"
    assert ",allocate," in lines[1] and ",1234," in lines[1] and ",free," in lines[2]
    assert "test_librmm_cffi.py:" in lines[1]  # the Python caller's file and line


def test_csv_log_needs_logging(config):
    with pytest.raises(RMMError):
        librmm.csv_log()


def test_streams_accepted(config):
    import rmmh
    s = rmmh.Stream()
    p = librmm.rmmAlloc(100, stream=s)
    librmm.rmmFree(p, stream=s)
    p = librmm.rmmAlloc(100, stream=0)
    librmm.rmmFree(p, 0)
    with pytest.raises((TypeError, ValueError)):
        librmm.rmmAlloc(100, stream="default")


# ---- the array functions ---------------------------------------------------------------------

@pytest.fixture
def fake_numba(monkeypatch):
    """A stand-in for numba.cuda with the pieces of its API the 2019 functions use."""
    events = []

    class MemoryPointer:
        def __init__(self, context, pointer, size, owner=None, finalizer=None):
            self.pointer, self.size, self.finalizer = pointer, size, finalizer
            events.append(("memptr", int(pointer.value), size))

    class DeviceNDArray:
        def __init__(self, shape, strides, dtype, stream=0, gpu_data=None):
            self.shape, self.strides, self.dtype, self.gpu_data = shape, strides, dtype, gpu_data
            self.ndim = len(shape)
            self.device_ctypes_pointer = gpu_data.pointer

        def copy_to_device(self, ary, stream=0):
            events.append(("copy", np.asarray(ary).nbytes))

    def prepare(shape, strides, dtype, order):
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if strides is None:
            strides = tuple(int(np.prod(shape[i + 1:])) * dtype.itemsize
                            for i in range(len(shape)))
        return shape, tuple(strides), dtype

    driver = types.SimpleNamespace(MemoryPointer=MemoryPointer, USE_NV_BINDING=False,
                                   memory_size_from_info=lambda sh, st, it:
                                   int(np.prod(sh)) * it if sh else it,
                                   is_device_memory=lambda o: isinstance(o, DeviceNDArray))
    devicearray = types.SimpleNamespace(DeviceNDArray=DeviceNDArray,
                                        sentry_contiguous=lambda a: None,
                                        IpcArrayHandle=lambda ipc_handle, array_desc:
                                        (ipc_handle, array_desc))
    cuda = types.SimpleNamespace(
        current_context=lambda: "ctx", cudadrv=types.SimpleNamespace(
            driver=driver, devicearray=devicearray),
        driver=driver, devicearray=devicearray,
        api=types.SimpleNamespace(_prepare_shape_strides_dtype=prepare),
        devices=types.SimpleNamespace(get_context=lambda: types.SimpleNamespace(
            get_ipc_handle=lambda mem: types.SimpleNamespace(offset=None))))
    numba = types.ModuleType("numba")
    numba.cuda = cuda
    monkeypatch.setitem(sys.modules, "numba", numba)
    monkeypatch.setitem(sys.modules, "numba.cuda", cuda)
    monkeypatch.setitem(sys.modules, "numba.cuda.cudadrv", cuda.cudadrv)
    return events


def test_array_functions_with_a_numba_stand_in(config, fake_numba):
    librmm.finalize()
    config.use_pool_allocator, config.initial_pool_size = True, 1 << 20
    librmm.initialize()
    a = librmm.device_array((4, 5), dtype=np.float32)
    assert a.shape == (4, 5) and a.dtype == np.float32
    assert fake_numba[-1][2] == 80
    b = librmm.device_array_like(np.zeros((3,), dtype=np.int16))
    assert b.shape == (3,) and b.dtype == np.int16
    c = librmm.to_device(np.arange(10))
    assert ("copy", 80) in fake_numba
    d, copied = librmm.auto_device([1.0, 2.0])
    assert copied and d.shape == (2,)
    assert librmm.auto_device(d) == (d, False)
    h, desc = librmm.get_ipc_handle(c)
    assert h.offset == librmm.get_allocation_offset(c.device_ctypes_pointer.value)
    assert desc["shape"] == (10,)
    e = librmm.device_array_from_ptr(c.device_ctypes_pointer.value, 10, dtype=np.int64)
    assert e.shape == (10,) and e.gpu_data.finalizer is None
    for arr in (a, b, c, d):  # Numba calls the finalizer when the array dies
        arr.gpu_data.finalizer()
    with pytest.raises(RMMError):
        a.gpu_data.finalizer()  # a second free is refused, not a crash


def test_device_array_gives_its_block_back_when_numba_fails(config, fake_numba, monkeypatch):
    """device_array allocates, then builds Numba's array: when that fails (no CUDA driver for
    Numba, say) the block goes back at once; it leaked before (a red team's find, session 31)."""
    librmm.finalize()
    config.enable_logging = True
    librmm.initialize()

    def no_driver():
        raise RuntimeError("no CUDA driver")
    monkeypatch.setattr(sys.modules["numba.cuda"], "current_context", no_driver)
    for _ in range(3):
        with pytest.raises(RuntimeError, match="no CUDA driver"):
            librmm.device_array((4, 5), dtype=np.float32)
    rows = [r.split(",") for r in librmm.csv_log().strip().splitlines()[1:]]
    allocated = [r[3] for r in rows if r[2] == "allocate"]
    freed = [r[3] for r in rows if r[2] == "free"]
    assert len(allocated) == 3 and sorted(freed) == sorted(allocated), rows


def test_a_failed_device_array_frees_its_block_once(config, fake_numba, monkeypatch):
    """As Numba does, MemoryPointer registers the finalizer at once (weakref.finalize); when
    DeviceNDArray then fails, device_array gives the block back, and the finalizer, run when the
    orphaned MemoryPointer dies, must not free it again: by then the pool may have handed the
    address to another block (review 31: the first fix of the leak freed twice)."""
    import gc
    import weakref

    class MemoryPointer:
        def __init__(self, context, pointer, size, owner=None, finalizer=None):
            self.pointer, self.size = pointer, size
            if finalizer is not None:
                self._finalizer = weakref.finalize(self, finalizer)

    class DeviceNDArray:
        def __init__(self, shape, strides, dtype, stream=0, gpu_data=None):
            raise ValueError("DeviceNDArray refused")

    cuda = sys.modules["numba.cuda"]
    monkeypatch.setattr(cuda.driver, "MemoryPointer", MemoryPointer)
    monkeypatch.setattr(cuda.devicearray, "DeviceNDArray", DeviceNDArray)
    librmm.finalize()
    config.use_pool_allocator, config.initial_pool_size = True, 1 << 20
    config.enable_logging = True
    librmm.initialize()
    kept = []
    try:
        librmm.device_array((4, 5), dtype=np.float32)
    except ValueError as e:
        kept.append(e)  # the exception (and its frames, with the MemoryPointer) outlive the call
    victim = librmm.rmmAlloc(80)  # the pool hands the same address out again
    kept.clear()
    gc.collect()  # the orphaned MemoryPointer dies: its finalizer runs
    rows = [r.split(",") for r in librmm.csv_log().strip().splitlines()[1:]]
    frees = [r for r in rows if r[2] == "free" and int(r[3], 16) == victim]
    allocs = [r for r in rows if r[2] == "allocate" and int(r[3], 16) == victim]
    assert len(allocs) == 2 and len(frees) == 1, rows  # the failed call's block, freed once; victim live
    librmm.rmmFree(victim)


@pytest.mark.skipif(not HAVE_GPU, reason="Numba device arrays need a GPU and RMMH_BACKEND=cuda")
def test_array_functions_with_numba(config):
    pytest.importorskip("numba.cuda")
    for pool in (False, True):
        librmm.finalize()
        config.use_pool_allocator, config.initial_pool_size = pool, 1 << 24
        librmm.initialize()
        for dtype in (np.int8, np.int32, np.float64, np.bool_):
            h = np.full(17, 3.2, dtype)
            d = librmm.to_device(h)
            out = librmm.device_array_like(d)
            out.copy_to_device(d)
            np.testing.assert_array_equal(out.copy_to_host(), h)
        d, copied = librmm.auto_device(np.arange(5))
        assert copied and librmm.auto_device(d)[1] is False
        del d, out


def test_finalize_in_pool_mode_gives_back_a_block_a_graph_pool_served():
    """Red team 47: rmmFinalize gives back the blocks still allocated 'in every mode'; in pool mode it only
    destroyed the pool, so an rmmAlloc block a graph pool served (rmmAlloc on a registered stream)
    stayed live in the graph pool for good, and a released graph pool never returned its memory."""
    saved = (librmm_config.use_pool_allocator, librmm_config.initial_pool_size)
    if librmm.is_initialized():
        librmm.finalize()
    librmm_config.use_pool_allocator, librmm_config.initial_pool_size = True, 1 << 20
    try:
        librmm.initialize()
        gp = rmm.GraphPool("64KiB", upstream=rmm.mr.CudaMemoryResource())
        s = rmm.Stream()
        with gp.capture(s):
            librmm.rmmAlloc(1000, stream=s)
        assert gp.info()[1] == 1024
        librmm.finalize()
        assert gp.info()[1] == 0  # (was 1024 for ever)
        gp.release()
        assert _lib.rmm_graph_pools_pending(None) == 0
    finally:
        librmm_config.use_pool_allocator, librmm_config.initial_pool_size = saved
        if not librmm.is_initialized():
            librmm.initialize()


def test_errors_without_logging_name_no_empty_location(config):
    config.enable_logging = False
    librmm.finalize()
    librmm.initialize()
    with pytest.raises(RMMError) as e:
        librmm.rmmFree(0x3039)
    assert "at ?:0:" in str(e.value) and " at :0" not in str(e.value)


def test_a_refused_finalize_leaves_the_arrays_finalizers_armed(config):
    """rmmFinalize refused (a capture registered on the default stream, which it frees on: nothing
    done, still initialized) ends no session: the finalizers of the arrays made before it still
    free their blocks (the session was counted ended before the call and never restored: each such
    array's block stayed allocated until the next finalize, a leak that grew with every array)."""
    a = librmm.rmmAlloc(4096)
    fin = librmm._make_finalizer(a, 0)
    gp = rmm.GraphPool("64KiB", upstream=rmm.mr.CudaMemoryResource())
    with gp.capture(rmm.DEFAULT_STREAM):
        with pytest.raises(RMMError, match="rmm_capture_end") as e:
            librmm.finalize()
        assert e.value.errcode == "RMM_ERROR_INVALID_ARGUMENT"
    gp.release()
    assert librmm.is_initialized()
    fin()  # the array collected now: its block goes back
    with pytest.raises(RMMError) as e:
        librmm.rmmFree(a)  # freed already
    assert e.value.errcode == "RMM_ERROR_INVALID_ARGUMENT"


def test_a_refused_finalize_undoes_no_other_thread_s_finalize(config, monkeypatch):
    """A refused finalize() puts its session back only if no finalize() ran meanwhile: one on
    another thread while the refused call asks is_initialized() (a C call, which lets the GIL go)
    ended the session, and the old session's arrays must not free by address in the next one
    (the session was compared before that call and put back after it: a review's find). The other
    thread's finalize() and initialize() are stood in for inside is_initialized()."""
    from rmmh.librmm_cffi import _LibRMM
    a = librmm.rmmAlloc(4096)
    fin = librmm._make_finalizer(a, 0)
    real = type(librmm).is_initialized
    others = []

    def is_initialized(self):
        if not others:  # another thread: finalize() (the session moves on), then initialize()
            others.append(_LibRMM._session)
            _LibRMM._session += 1
        return real(self)

    gp = rmm.GraphPool("64KiB", upstream=rmm.mr.CudaMemoryResource())
    with gp.capture(rmm.DEFAULT_STREAM):
        monkeypatch.setattr(type(librmm), "is_initialized", is_initialized)
        with pytest.raises(RMMError, match="rmm_capture_end"):
            librmm.finalize()
        monkeypatch.undo()
    gp.release()
    assert others and _LibRMM._session == others[0] + 1  # the other thread's session stands
    freed = []
    monkeypatch.setattr(type(librmm), "rmmFree", lambda self, addr, stream=0: freed.append(addr))
    fin()  # an array of the ended session: nothing freed
    assert freed == []
    monkeypatch.undo()
    librmm.rmmFree(a)
