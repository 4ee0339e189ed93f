"""Error paths no other test reached (a coverage pass over rmmh's raise and except lines, session
39): each bad call raises a clear exception naming the problem, on the extension and the ctypes
path alike, and leaves what it touched as it was (the resource still allocates, counts and
per-device resources unchanged).

A resource or stream pool whose finalizer ran (a reference cycle's collection, or ``__del__()``
called by hand, as here) is RMMRuntimeError "already destroyed"; one made by ``__new__`` alone is
NotInitializedError (a TypeError and an AttributeError)."""
import os
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

import rmmh as rmm
import rmmh.ipc as ipc
from rmmh import as_rmm

from conftest import child_env

DESTROYED = "its C resource was already destroyed"


def _pool():
    return rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20)


def _still_works(mr):
    """mr allocates and frees as before."""
    p = mr.allocate(100)
    assert p
    mr.deallocate(p, 100)


# ---- rmm.parse_bytes ---------------------------------------------------------------------------

@pytest.mark.parametrize("flag", [True, False, np.bool_(True)], ids=["True", "False", "np.bool_"])
def test_parse_bytes_refuses_bool(flag):
    with pytest.raises(TypeError, match="not bool"):
        rmm.parse_bytes(flag)
    with pytest.raises(TypeError, match="not bool"):  # (the string sizes' other users)
        rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), flag)
    assert rmm.parse_bytes("1KiB") == 1024


# ---- a resource already destroyed --------------------------------------------------------------

def test_buffer_and_allocate_on_a_destroyed_resource_raise_and_leave_the_upstream():
    up = _pool()
    mr = rmm.mr.StatisticsResourceAdaptor(up)
    mr.__del__()
    before = up.info()
    for call in (lambda: rmm.DeviceBuffer(size=10, mr=mr), lambda: mr.allocate(10),
                 lambda: mr.allocate(10, rmm.Stream()), lambda: mr.deallocate(256, 10)):
        with pytest.raises(rmm.RMMRuntimeError, match="^StatisticsResourceAdaptor: " + DESTROYED) as e:
            call()
        assert isinstance(e.value, RuntimeError) and e.value.__cause__ is None
    assert up.info() == before
    _still_works(up)
    # zero bytes make no call: a no-op, as on a live resource
    assert mr.allocate(0) == 0 and mr.deallocate(0, 10) is None
    assert rmm.DeviceBuffer(size=0, mr=mr).size == 0


def test_resize_of_an_empty_buffer_of_a_destroyed_resource_leaves_it_empty():
    mr = _pool()
    buf = rmm.DeviceBuffer(size=0, mr=mr)
    mr.__del__()
    for call in (lambda: buf.resize(10), lambda: buf.reserve(10)):
        with pytest.raises(rmm.RMMRuntimeError, match="^PoolMemoryResource: " + DESTROYED):
            call()
        assert buf.size == 0 and buf.capacity() == 0 and buf.ptr == 0
        assert buf.mr is mr


def test_queries_of_a_destroyed_resource_raise():
    mr = _pool()
    mr.__del__()
    for call in (mr.info, mr.validate, lambda: mr.type_name, mr.pool_size, mr.trim,
                 lambda: mr.allocation_base(0x1000), lambda: mr.set_maximum(1 << 21)):
        with pytest.raises(rmm.RMMRuntimeError, match="^PoolMemoryResource: " + DESTROYED):
            call()
    assert " destroyed at 0x" in repr(mr)


def test_a_destroyed_upstream_is_refused_and_nothing_is_set():
    dead = _pool()
    dead.__del__()
    current = rmm.mr.get_current_device_resource()
    for make in (lambda: rmm.mr.PoolMemoryResource(dead, 1 << 20),
                 lambda: rmm.mr.StatisticsResourceAdaptor(dead),
                 lambda: rmm.mr.LimitingResourceAdaptor(dead, 1 << 20),
                 lambda: rmm.GraphPool(reserve=0, upstream=dead),
                 lambda: rmm.mr.set_current_device_resource(dead)):
        with pytest.raises(rmm.RMMRuntimeError, match="^PoolMemoryResource: " + DESTROYED):
            make()
    assert rmm.mr.get_current_device_resource() is current
    _still_works(current)


# ---- a resource made by __new__ alone ----------------------------------------------------------

@pytest.mark.parametrize("cls", ["PoolMemoryResource", "TrackingResourceAdaptor",
                                 "LimitingResourceAdaptor", "LoggingResourceAdaptor",
                                 "BinningMemoryResource"])
def test_queries_of_a_resource_made_by_new_alone_raise_not_initialized(cls):
    mr = getattr(rmm.mr, cls).__new__(getattr(rmm.mr, cls))
    calls = {"validate": mr.validate, "type_name": lambda: mr.type_name,
             "allocation_base": lambda: mr.allocation_base(0x1000), "get_upstream": mr.get_upstream}
    for name in ("info", "get_allocated_bytes", "get_allocation_limit", "get_file_name", "flush"):
        if hasattr(mr, name):
            calls[name] = getattr(mr, name)
    if cls == "BinningMemoryResource":
        calls["add_bin"] = lambda: mr.add_bin(256)
    for name, call in calls.items():
        with pytest.raises(rmm.NotInitializedError, match="^%s was never initialized" % cls) as e:
            call()
        assert isinstance(e.value, AttributeError), name
    assert getattr(mr, "type_name", "no name") == "no name"  # (an AttributeError: getattr answers)
    assert repr(mr).startswith("<rmmh.mr.%s empty at 0x0" % cls)


def test_state_of_a_resource_made_by_new_alone_raises_not_initialized():
    """BinningMemoryResource.bin_mrs and CudaAsyncViewMemoryResource.pool_handle() read state that
    __init__ sets: on an object made by __new__ alone they raised a bare KeyError ('_bin_mrs',
    '_pool_handle') where get_upstream and get_file_name raise NotInitializedError (red team 52)."""
    for cls, call in ((rmm.mr.BinningMemoryResource, lambda mr: mr.bin_mrs),
                      (rmm.mr.CudaAsyncViewMemoryResource, lambda mr: mr.pool_handle())):
        mr = cls.__new__(cls)
        with pytest.raises(rmm.NotInitializedError, match="^%s was never initialized" % cls.__name__) as e:
            call(mr)
        assert isinstance(e.value, AttributeError) and e.value.__cause__ is None


# ---- rmm.enable_logging ------------------------------------------------------------------------

def test_enable_logging_without_a_file_name_changes_nothing(monkeypatch, tmp_path):
    """No log_file_name and no $RMM_LOG_FILE: RMM's ValueError, and no device's resource is
    wrapped (two devices set up here: both stay as they were)."""
    monkeypatch.delenv("RMM_LOG_FILE", raising=False)
    monkeypatch.chdir(tmp_path)
    set_up = {0: rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())}
    if rmm._lib.rmmh_device_count() >= 2:
        set_up[1] = rmm.mr.get_per_device_resource(1)
        rmm.mr.set_per_device_resource(1, set_up[1])
    rmm.mr.set_per_device_resource(0, set_up[0])
    with pytest.raises(ValueError, match="RMM log file must be specified"):
        rmm.enable_logging()
    for d, mr in set_up.items():
        assert rmm.mr.get_per_device_resource(d) is mr
    assert not isinstance(rmm.mr.get_current_device_resource(), rmm.mr.LoggingResourceAdaptor)
    assert os.listdir(tmp_path) == []
    buf = rmm.DeviceBuffer(size=10)
    assert set_up[0].allocation_counts.current_bytes == 10
    del buf


# ---- CudaStreamPool ----------------------------------------------------------------------------

@pytest.mark.parametrize("flags", ["NON_BLOCKING", "SYNC_DEFAULT"])
def test_streams_of_a_destroyed_stream_pool_raise(flags):
    """A pool that is rmm.h's stream pool (NON_BLOCKING, and every pool on the host backend)
    refuses its streams once finalized. A SYNC_DEFAULT pool on the CUDA backend is a set of
    streams each owned by its own object (see CudaStreamPool), which its finalizer leaves to
    their references: its streams stay usable (seen on an H200, session 39)."""
    Pool = rmm.pylibrmm.cuda_stream_pool.CudaStreamPool
    pool = Pool(2, getattr(rmm.CudaStreamFlags, flags))
    pool.__del__()
    if rmm._lib.BACKEND == "host" or flags == "NON_BLOCKING":
        for call in (lambda: pool.get_stream(0), lambda: pool.get_stream(5), pool.get_stream):
            with pytest.raises(rmm.RMMRuntimeError, match="^CudaStreamPool: its C stream was already destroyed"):
                call()
    else:
        for call in (lambda: pool.get_stream(0), lambda: pool.get_stream(5), pool.get_stream):
            rmm.DeviceBuffer(size=10, stream=call())
    assert pool.get_pool_size() == 2
    rmm.DeviceBuffer(size=10, stream=Pool(2, getattr(rmm.CudaStreamFlags, flags)).get_stream(1))


# ---- rmmh.ipc ----------------------------------------------------------------------------------

def test_ipc_argument_checks():
    # a handle of the wrong length: ValueError before any CUDA call (the host backend's
    # NotSupportedError comes after it)
    with pytest.raises(ValueError, match="64 bytes, not 10"):
        ipc.open_ipc_handle(ipc.IpcHandle(bytes(10), 0, 10))
    # anything but an IpcHandle, and fields get_ipc_handle never makes: a clear TypeError or
    # ValueError, made or opened (an AttributeError and an opened handle at base - 5 of size -1
    # before: the coverage pass's finding)
    with pytest.raises(TypeError, match="needs an rmmh.ipc.IpcHandle .* not bytes"):
        ipc.open_ipc_handle(bytes(64))
    for fields, exc, msg in (((None, 0, 10), TypeError, "handle must be bytes, not NoneType"),
                             ((bytes(64), -5, 10), ValueError, r"offset must be in \[0, 2\*\*64\), not -5"),
                             ((bytes(64), 0, -1), ValueError, r"size must be in \[0, 2\*\*64\), not -1"),
                             ((bytes(64), 1 << 64, 1), ValueError, r"offset must be in \[0, 2\*\*64\)"),
                             ((bytes(64), 0, True), TypeError, "size must be an int, not bool"),
                             ((bytes(64), 1.5, 10), TypeError, "offset must be an int, not float")):
        with pytest.raises(exc, match=msg):
            ipc.IpcHandle(*fields)
    import pickle
    h = pickle.loads(pickle.dumps(ipc.IpcHandle(bytes(64), 0, 10)))  # (made without __init__)
    object.__setattr__(h, "offset", -5)
    with pytest.raises(ValueError, match="offset must be in .*, not -5"):
        ipc.open_ipc_handle(h)
    # a bytearray or memoryview handle is taken, as bytes (as open_ipc_handle took it before)
    for raw in (bytearray(64), memoryview(bytes(64))):
        h = ipc.IpcHandle(raw, 0, 10)
        assert type(h.handle) is bytes and h == ipc.IpcHandle(bytes(64), 0, 10)
    for mr in (rmm.mr.CudaMemoryResource(), _pool(), None):
        with pytest.raises(TypeError, match="export_pool needs a CudaAsyncMemoryResource, not %s"
                           % type(mr).__name__):
            ipc.export_pool(mr)


def test_recv_fd_without_a_descriptor_raises_and_keeps_what_follows():
    a, b = socket.socketpair()
    with a, b:
        a.sendall(b"fd")
        a.sendall(b"rest")
        with pytest.raises(OSError, match=r"no file descriptor received \(got b'fd'\)"):
            ipc.recv_fd(b)
        b.settimeout(10)
        assert b.recv(16) == b"rest"  # (only the marker's bytes were read)


# ---- importing a package whose libraries are missing ---------------------------------------------

def _copy_package(tmp_path, drop):
    """A copy of the rmmh under test without the files named in drop (globs)."""
    dst = tmp_path / "pkg"
    shutil.copytree(os.path.dirname(rmm.__file__), str(dst / "rmmh"),
                    ignore=shutil.ignore_patterns("__pycache__", *drop))
    return str(dst)


def _import_child(path, code="import rmmh", **env_extra):
    env = child_env()
    env.pop("RMMH_NO_ACCEL", None)
    env.pop("RMMH_BACKEND", None)
    env.update(PYTHONPATH=path, **env_extra)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120, cwd=path)
    return r.returncode, r.stdout + r.stderr


def test_import_without_the_cuda_library_says_to_use_the_host_backend(tmp_path):
    path = _copy_package(tmp_path, ["librmmh.so"])
    rc, out = _import_child(path)
    assert rc != 0 and "ImportError: rmmh was built without the CUDA toolkit" in out, out
    assert "RMMH_BACKEND=host" in out, out
    rc, out = _import_child(path, "import rmmh; print(rmmh.BACKEND)", RMMH_BACKEND="host")
    assert rc == 0 and out.strip() == "host", out


def test_import_without_any_library_says_it_is_missing(tmp_path):
    path = _copy_package(tmp_path, ["librmmh.so", "librmmh_host.so"])
    for backend in ("cuda", "host"):
        rc, out = _import_child(path, RMMH_BACKEND=backend)
        assert rc != 0 and "ImportError: rmmh: " in out and "is missing; build it with `make python`" in out, out


def test_import_without_the_extension_uses_ctypes(tmp_path):
    path = _copy_package(tmp_path, ["_accel*.so"])
    rc, out = _import_child(path, "import rmmh; b = rmmh.DeviceBuffer(size=10); "
                            "print(rmmh.ACCELERATED, b.size)", RMMH_BACKEND="host")
    assert rc == 0 and out.strip() == "False 10", out


def test_librmm_cffi_alias_finds_its_own_rmmh(tmp_path):
    # PYTHONPATH holding only the alias directory: `import librmm_cffi` loads the rmmh the
    # directory belongs to (as test_as_rmm checks for `import rmm`)
    rc, out = _import_child(as_rmm.ALIAS_DIR, "import librmm_cffi, rmmh; "
                            "assert librmm_cffi is rmmh.librmm_cffi; print(rmmh.__file__)",
                            RMMH_AS_RMM="force", RMMH_BACKEND="host")
    assert rc == 0, out
    assert os.path.dirname(out.strip().splitlines()[-1]) == os.path.dirname(rmm.__file__), out


# ---- a subclass whose __del__ is a callable without a name ---------------------------------------

def test_a_subclass_del_that_is_a_partial_is_chained():
    """rmmh chains its finalizer after a subclass's own __del__, copying its name when it has one:
    a functools.partial has none, and the class is still made and finalized in full."""
    import functools
    seen = []

    class Finalized(rmm.mr.PoolMemoryResource):
        __del__ = functools.partial(lambda tag, obj: seen.append(tag), "own")

    mr = Finalized(rmm.mr.CudaMemoryResource(), 1 << 20)
    _still_works(mr)
    mr.__del__()
    assert seen == ["own"] and " destroyed at 0x" in repr(mr)
    with pytest.raises(rmm.RMMRuntimeError, match="^Finalized: " + DESTROYED):
        mr.allocate(10)


# ---- a callback resource that reaches itself again -----------------------------------------------

def test_a_callback_bin_that_allocates_from_its_binning_resource_raises_and_leaves_it_working():
    """A CallbackMemoryResource bin whose allocate function allocates its own size from the binning
    resource it serves: a cycle add_bin cannot see. rmm.h bounds the nesting of callbacks on a
    thread (RMM_MAX_CALLBACK_DEPTH, 16): the allocation raises InvalidArgumentError naming the
    bound (it recursed until the C stack overflowed before session 43), and the resource serves
    sizes past its bin; the same bin taking a larger size from its binning resource works."""
    up = rmm.mr.CudaMemoryResource()
    calls = []

    def make(ask):
        binning = rmm.mr.BinningMemoryResource(up)

        def allocate(size, stream):
            calls.append(size)
            return binning.allocate(ask or size, stream)

        def deallocate(ptr, size, stream):
            binning.deallocate(ptr, ask or size, stream)

        binning.add_bin(512, rmm.mr.CallbackMemoryResource(allocate, deallocate))
        return binning

    cyclic = make(0)
    with pytest.raises(rmm.InvalidArgumentError, match="RMM_MAX_CALLBACK_DEPTH"):
        cyclic.allocate(512)
    assert calls == [512] * 16
    p = cyclic.allocate(8192)  # (past the bin: its upstream)
    cyclic.deallocate(p, 8192)
    del calls[:]
    fine = make(4096)
    buf = rmm.DeviceBuffer(size=300, mr=fine)
    assert buf.size == 300 and calls == [300]
    del buf
