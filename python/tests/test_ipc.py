"""CUDA IPC of sub-allocations. On any backend: rmm.h's allocation base and offset of blocks of
every sub-allocator, and the refusals (virtual pool, user resources; the host backend has no
IPC). On a GPU: a block that is not at its chunk's start goes to another process, which opens the
chunk's handle, finds the pattern at base + offset and writes another back; the same through
Numba's EMM plugin and the 2019 API; an async resource's block through its pool's shareable
handle (a POSIX file descriptor sent over a Unix socket)."""
import os
import socket
import subprocess
import tempfile
import sys

import numpy as np
import pytest

import rmmh as rmm
import rmmh.ipc as ipc
from rmmh import _lib
from conftest import HOST, child_env, requires_gpu, run_child

mr_ = rmm.mr


def kinds():
    up = mr_.CudaMemoryResource
    return {
        "pool": lambda: mr_.PoolMemoryResource(up(), 1 << 24),
        "pool on_demand": lambda: mr_.PoolMemoryResource(up(), 0, growth="on_demand"),
        "arena": lambda: mr_.ArenaMemoryResource(up(), arena_size=1 << 24),
        "fixed_size": lambda: mr_.FixedSizeMemoryResource(up(), 1 << 16, 8),
        "binning": lambda: mr_.BinningMemoryResource(up(), 10, 16),
        "statistics over pool": lambda: mr_.StatisticsResourceAdaptor(
            mr_.PoolMemoryResource(up(), 1 << 24)),
    }


@pytest.mark.parametrize("kind", list(kinds()))
def test_allocation_base(kind):
    mr = kinds()[kind]()
    a = mr.allocate(4096)
    b = mr.allocate(4096)
    base_a, off_a = mr.allocation_base(a)
    base_b, off_b = mr.allocation_base(b)
    assert base_a + off_a == a and base_b + off_b == b
    assert off_b > 0 or off_a > 0  # one of them is not at its chunk's start
    assert ipc.allocation_base(b, mr) == (base_b, off_b)
    if kind not in ("arena", "binning"):
        # rmm.h checks that ptr is a live block for pools and fixed-size resources; the arena
        # accepts any address inside it, and binning passes an address that is not a block
        # start to its upstream (which answers (ptr, 0)): reported to rmm.h
        with pytest.raises(rmm.InvalidArgumentError):
            mr.allocation_base(b + 16)  # not a block
    mr.deallocate(b, 4096)
    mr.deallocate(a, 4096)


def test_allocation_base_of_a_plain_allocation():
    mr = mr_.CudaMemoryResource()
    p = mr.allocate(100)
    assert mr.allocation_base(p) == (p, 0)
    mr.deallocate(p, 100)
    buf = rmm.DeviceBuffer(size=10)
    assert ipc.allocation_base(buf.ptr, buf.mr)[0] + ipc.allocation_base(buf.ptr, buf.mr)[1] \
        == buf.ptr


def test_allocation_base_refusals():
    callback = mr_.CallbackMemoryResource(lambda n, s: mr_.CudaMemoryResource().allocate(n),
                                          lambda p, n, s: None)
    with pytest.raises(rmm.NotSupportedError, match="user-defined"):
        callback.allocation_base(0x1000)
    try:
        virtual = mr_.PoolMemoryResource(mr_.CudaMemoryResource(), growth="virtual",
                                         virtual_size=1 << 26)
    except rmm.NotSupportedError:
        pytest.skip("no virtual memory management on this device")
    p = virtual.allocate(1000)
    with pytest.raises(rmm.NotSupportedError, match="virtual"):
        virtual.allocation_base(p)
    virtual.deallocate(p, 1000)


@pytest.mark.parametrize("bad", [5, "x", mr_.CudaMemoryResource])
def test_ipc_calls_refuse_a_non_resource_mr(bad):
    """get_ipc_handle and allocation_base with an mr that is not a resource: the TypeError every
    other call gives for it (red team 40: a bare AttributeError, or for the class a TypeError about
    a missing argument), before anything else is tried."""
    for call in (lambda: ipc.get_ipc_handle(0x1000, mr=bad, size=256),
                 lambda: ipc.allocation_base(0x1000, mr=bad)):
        with pytest.raises(TypeError, match="Argument 'mr' has incorrect type"):
            call()


@pytest.mark.skipif(not HOST, reason="the host backend's refusal")
def test_host_backend_has_no_ipc():
    buf = rmm.DeviceBuffer(size=100)
    with pytest.raises(rmm.NotSupportedError, match="host backend"):
        ipc.get_ipc_handle(buf)
    with pytest.raises(rmm.NotSupportedError):
        ipc.open_ipc_handle(ipc.IpcHandle(bytes(64), 0, 10))
    with pytest.raises(rmm.NotSupportedError):
        mr = mr_.CudaAsyncMemoryResource(0, enable_ipc=True)  # refused here or at export
        ipc.export_pool(mr)
    with pytest.raises(rmm.NotSupportedError):
        ipc.export_pointer(buf.ptr)


# ---- two processes on a GPU ------------------------------------------------------------------

CHILD_RMMH = """
    import sys, numpy as np, rmmh, rmmh.ipc as ipc
    from rmmh._device_buffer import copy_ptr_to_host, copy_host_to_ptr
    handle = ipc.IpcHandle(bytes.fromhex(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
    with ipc.open_ipc_handle(handle) as mem:
        host = np.empty(mem.size, "u1")
        copy_ptr_to_host(mem.ptr, host)
        assert (host == np.arange(mem.size) % 251).all(), host[:16]
        copy_host_to_ptr(np.full(mem.size, 7, "u1"), mem.ptr)
    print("child ok", hex(mem.ptr - handle.offset), handle.offset)
"""

CHILD_CUPY = """
    import sys, numpy as np, cupy
    handle, offset, size = bytes.fromhex(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    base = cupy.cuda.runtime.ipcOpenMemHandle(handle)
    view = cupy.ndarray((size,), cupy.uint8,
                        cupy.cuda.MemoryPointer(cupy.cuda.UnownedMemory(base, offset + size, None), offset))
    assert (view.get() == np.arange(size) % 251).all()
    view.fill(7)
    cupy.cuda.Device().synchronize()
    del view
    cupy.cuda.runtime.ipcCloseMemHandle(base)
    print("child ok")
"""


def exported_block(mr, size=3000):
    """A block of mr that is not at its chunk's start, filled with i % 251."""
    first = rmm.DeviceBuffer(size=5000, mr=mr)
    buf = rmm.DeviceBuffer(size=size, mr=mr)
    buf.copy_from_host((np.arange(size) % 251).astype("u1"))
    return first, buf


@requires_gpu
@pytest.mark.parametrize("kind", ["pool", "pool on_demand", "arena", "fixed_size",
                                  "statistics over pool"])
def test_ipc_of_a_sub_allocation(kind):
    mr = kinds()[kind]()
    first, buf = exported_block(mr)
    h = ipc.get_ipc_handle(buf)
    assert h.offset > 0 and h.size == buf.size and len(h.handle) == 64
    run_child(CHILD_RMMH, h.handle.hex(), h.offset, h.size)
    assert buf.tobytes() == b"\x07" * buf.size
    assert rmm.DeviceBuffer(size=1, mr=mr).ptr  # the resource still works


@requires_gpu
def test_ipc_opened_by_cupy():
    pytest.importorskip("cupy")
    first, buf = exported_block(kinds()["pool"]())
    h = ipc.get_ipc_handle(buf)
    run_child(CHILD_CUPY, h.handle.hex(), h.offset, h.size)
    assert buf.tobytes() == b"\x07" * buf.size


NUMBA_PARENT = """
    import multiprocessing as mp, numpy as np, sys
    import rmmh as rmm

    def child(handle, queue):
        try:
            with handle as arr:
                ok = bool((arr.copy_to_host() == np.arange(arr.size) % 251).all())
                arr.copy_to_device(np.full(arr.size, 7, "u1"))
            queue.put(ok)
        except BaseException as e:
            queue.put(repr(e))

    if __name__ == "__main__":
        mode = sys.argv[1]
        from numba import cuda
        if mode == "emm":
            from rmmh.allocators.numba import RMMNumbaManager
            assert isinstance(cuda.current_context().memory_manager, RMMNumbaManager)
            rmm.reinitialize(pool_allocator=True, initial_pool_size="16MiB")
            first = cuda.device_array(5000, dtype="u1")
            arr = cuda.to_device((np.arange(3000) % 251).astype("u1"))
            base, offset = rmm.mr.get_current_device_resource().allocation_base(
                arr.device_ctypes_pointer.value)
            assert offset > 0
            handle = arr.get_ipc_handle()
        else:
            from rmmh.librmm_cffi import librmm, librmm_config as cfg
            librmm.finalize()
            cfg.use_pool_allocator, cfg.initial_pool_size = True, 16 << 20
            librmm.initialize()
            first = librmm.to_device(np.zeros(5000, "u1"))
            arr = librmm.to_device((np.arange(3000) % 251).astype("u1"))
            assert librmm.get_allocation_offset(arr.device_ctypes_pointer.value) > 0
            handle = librmm.get_ipc_handle(arr)
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        p = ctx.Process(target=child, args=(handle, queue))
        p.start()
        result = queue.get(timeout=180)
        p.join()
        assert result is True, result
        assert (arr.copy_to_host() == 7).all()
        print("parent ok")
"""


def numba_ipc_child(mode):
    def spec():
        import importlib.util
        if HOST or importlib.util.find_spec("numba") is None:
            return None
        env = child_env(NUMBA_CUDA_MEMORY_MANAGER="rmmh.allocators.numba") if mode == "emm" \
            else child_env()
        # (a file, so that multiprocessing's spawn can import the child's function)
        path = os.path.join(tempfile.mkdtemp(prefix="rmmh_numba_ipc_"), "numba_ipc_parent.py")
        return NUMBA_PARENT, (mode,), {"env": env, "path": path}
    return spec


# each case imports Numba in two interpreters (seconds): they start together (conftest)
EARLY_CHILDREN = {"test_ipc_through_numba[emm]": numba_ipc_child("emm"),
                  "test_ipc_through_numba[legacy]": numba_ipc_child("legacy")}


@requires_gpu
@pytest.mark.parametrize("mode", ["emm", "legacy"])
def test_ipc_through_numba(mode, request, early_children):
    pytest.importorskip("numba.cuda")
    early_children.wait(request.node.name)


CHILD_ASYNC = """
    import socket, sys, numpy as np, rmmh, rmmh.ipc as ipc
    from rmmh._device_buffer import copy_ptr_to_host, copy_host_to_ptr
    sock = socket.socket(fileno=int(sys.argv[1]))
    data, size = bytes.fromhex(sys.argv[2]), int(sys.argv[3])
    with ipc.ImportedPool(ipc.recv_fd(sock)) as pool:
        ptr = pool.import_pointer(data)
        host = np.empty(size, "u1")
        copy_ptr_to_host(ptr, host)
        assert (host == np.arange(size) % 251).all(), host[:16]
        copy_host_to_ptr(np.full(size, 7, "u1"), ptr)
        pool.free(ptr)
    sock.sendall(b"done")
    print("child ok")
"""


@requires_gpu
def test_ipc_of_an_async_resource():
    try:
        mr = mr_.CudaAsyncMemoryResource(initial_pool_size=0, enable_ipc=True)
        fd = ipc.export_pool(mr)
    except rmm.NotSupportedError as e:
        pytest.skip("this device cannot export memory pools: %s" % e)
    first, buf = exported_block(mr)
    data = ipc.export_pointer(buf.ptr)
    parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with parent_end:
        proc = subprocess.Popen(
            [sys.executable, "-c", __import__("textwrap").dedent(CHILD_ASYNC),
             str(child_end.fileno()), data.hex(), str(buf.size)],
            pass_fds=[child_end.fileno()], env=child_env(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        child_end.close()
        ipc.send_fd(parent_end, fd)
        os.close(fd)
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, out + err
        assert parent_end.recv(16) == b"done"
    assert buf.tobytes() == b"\x07" * buf.size
    with pytest.raises(rmm.NotSupportedError, match="pool"):
        ipc.get_ipc_handle(buf)  # an async block has no legacy handle


@requires_gpu
def test_async_resource_without_export_is_not_supported():
    try:
        mr = mr_.CudaAsyncMemoryResource(initial_pool_size=0)
    except rmm.NotSupportedError:
        pytest.skip("no memory pools on this device")
    with pytest.raises(rmm.NotSupportedError, match="enable_ipc"):
        ipc.export_pool(mr)
    buf = rmm.DeviceBuffer(size=100, mr=mr)
    with pytest.raises(rmm.NotSupportedError):
        ipc.export_pointer(buf.ptr)


def test_handles_pickle():
    import pickle
    h = ipc.IpcHandle(bytes(range(64)), 256, 1000)
    assert pickle.loads(pickle.dumps(h)) == h



def test_imported_pool_reports_the_import_error_not_the_close():
    """A bad descriptor: the import's error (NotSupportedError on the host backend, a CUDA error on
    a GPU), not os.close's OSError over it; a descriptor that is not an int: TypeError, with
    nothing closed (a red team's find, 2026-11-29: int() of 3.9 or "4" closed descriptors 3 and
    4). A good descriptor is closed after a failed import."""
    with pytest.raises(rmm.RMMError) as info:
        ipc.ImportedPool(-1)
    assert info.value.__context__ is None
    with pytest.raises(TypeError) as info2:
        ipc.ImportedPool("x")
    assert info2.value.__context__ is None
    r, w = os.pipe()
    try:
        for bad in (float(r) + 0.9, str(w), True):
            with pytest.raises(TypeError):
                ipc.ImportedPool(bad)
        os.fstat(r)  # both still open
        os.fstat(w)
        with pytest.raises(rmm.RMMError):
            ipc.ImportedPool(r)  # not a memory pool's descriptor
        with pytest.raises(OSError):
            os.fstat(r)  # closed (close_fd=True)
    finally:
        os.close(w)


def test_imported_pool_frees_only_what_it_imported(monkeypatch):
    """ImportedPool.free's C call is a cudaFree: an address the pool did not import (this process's
    own buffer), one freed already, and any after close() are refused before it (a red team's
    find: a double free on the device). The pool is made as ImportedPool(fd) leaves it, and the C
    call recorded, as the host backend has no IPC."""
    from rmmh import _lib, ipc
    calls = []
    monkeypatch.setattr(_lib, "rmmh_imported_free", lambda p: calls.append(p) or 0)
    monkeypatch.setattr(_lib, "rmmh_mempool_destroy", lambda h: 0)
    pool = ipc.ImportedPool.__new__(ipc.ImportedPool)
    pool.handle, pool._imported = 1234, {4096: 1}
    buf = rmm.DeviceBuffer(size=256)
    with pytest.raises(rmm.InvalidArgumentError, match="not a block this pool imported"):
        pool.free(buf.ptr)
    pool.free(4096)
    with pytest.raises(rmm.InvalidArgumentError, match="freed already"):
        pool.free(4096)
    pool._imported[8192] = 1
    pool.close()
    with pytest.raises(rmm.InvalidArgumentError, match="closed"):
        pool.free(8192)
    assert calls == [4096, 8192]


def test_imported_pool_free_from_two_threads_frees_once(monkeypatch):
    """Two threads letting go of one imported address: one cudaFree, the other refused (the check
    and the C call are one step under a lock)."""
    import threading
    import time
    from rmmh import _lib, ipc
    calls = []

    def slow_free(p):
        time.sleep(0.01)  # (a window between the check and the record's change)
        calls.append(p)
        return 0

    monkeypatch.setattr(_lib, "rmmh_imported_free", slow_free)
    monkeypatch.setattr(_lib, "rmmh_mempool_destroy", lambda h: 0)
    pool = ipc.ImportedPool.__new__(ipc.ImportedPool)
    pool.handle, pool._imported = 1234, {4096: 1}
    refused = []

    def go():
        try:
            pool.free(4096)
        except rmm.InvalidArgumentError:
            refused.append(1)

    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [4096] and refused == [1]


def recorded_pool(monkeypatch, calls, imported):
    """An ImportedPool as ImportedPool(fd) leaves it (handle 1234, ``imported`` its record), whose
    C frees and destroy are recorded in ``calls`` as ("free", ptr) and ("destroy", handle): the
    host backend has no IPC."""
    from rmmh import _lib, ipc
    monkeypatch.setattr(_lib, "rmmh_imported_free", lambda p: calls.append(("free", p)) or 0)
    monkeypatch.setattr(_lib, "rmmh_mempool_destroy", lambda h: calls.append(("destroy", h)) or 0)
    pool = ipc.ImportedPool.__new__(ipc.ImportedPool)
    pool.handle, pool._imported = 1234, imported
    return pool


def test_ipc_owners_refuse_copies_and_pickles(monkeypatch):
    """ImportedPool and OpenedIpcMemory own C handles of this process: a copy would destroy the
    pool, free a block or close a mapping twice, and an unpickled pool elsewhere would pass free()'s
    guard with the sender's addresses and free the receiver's own memory (red team 33). They
    refuse, as Stream and GraphPool do; IpcHandle still pickles."""
    import copy
    import pickle
    from rmmh import _lib, ipc
    calls = []
    pool = recorded_pool(monkeypatch, calls, {4096: 1})
    monkeypatch.setattr(_lib, "rmmh_ipc_close_mem_handle", lambda b: calls.append(("close", b)) or 0)
    mem = ipc.OpenedIpcMemory(8192, 256, 100)
    for obj in (pool, mem):
        for make in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(TypeError, match="cannot be pickled or copied"):
                make(obj)
    pool.close()
    mem.close()
    assert calls == [("free", 4096), ("destroy", 1234), ("close", 8192)]
    h = ipc.IpcHandle(bytes(64), 0, 1)
    assert copy.copy(h) == h


def test_import_pointer_after_close_and_concurrent_close(monkeypatch):
    """import_pointer makes its C call under the lock close() takes: a close on another thread
    waits for it (the import ran on a destroyed pool, and its block landed in a closed pool that
    could not free it: red team 33), and an import after close is refused before the C call."""
    import threading
    import time
    from rmmh import _lib
    calls = []
    entered = threading.Event()

    def slow_import(h, data, out):
        calls.append(("import", h))
        entered.set()
        time.sleep(0.05)
        out._obj.value = 4096
        return 0

    monkeypatch.setattr(_lib, "rmmh_mempool_import_pointer", slow_import)
    pool = recorded_pool(monkeypatch, calls, {})
    t = threading.Thread(target=pool.import_pointer, args=(bytes(64),))
    t.start()
    assert entered.wait(10)  # (the import holds the lock: close() waits for it)
    pool.close()
    t.join()
    assert calls == [("import", 1234), ("free", 4096), ("destroy", 1234)]
    with pytest.raises(rmm.InvalidArgumentError, match="closed"):
        pool.import_pointer(bytes(64))
    assert len(calls) == 3


def test_imported_pool_frees_a_block_imported_twice_twice(monkeypatch):
    """One block imported twice comes back at one address (the driver's way, seen on an H200): each
    import is freed once, rmm.h unmapping it at the last; a third free is refused before the C call,
    and close() frees the imports left. Until 2026-11-30 the pool kept a set: the second free was
    refused and the C record of the second import stayed."""
    from rmmh import _lib
    calls = []

    def import_at_4096(h, data, out):
        out._obj.value = 4096
        return 0

    monkeypatch.setattr(_lib, "rmmh_mempool_import_pointer", import_at_4096)
    pool = recorded_pool(monkeypatch, calls, {})
    assert pool.import_pointer(bytes(64)) == 4096 and pool.import_pointer(bytes(64)) == 4096
    pool.free(4096)
    pool.free(4096)
    with pytest.raises(rmm.InvalidArgumentError, match="freed already"):
        pool.free(4096)
    assert calls == [("free", 4096), ("free", 4096)]
    pool.import_pointer(bytes(64))
    pool.import_pointer(bytes(64))
    pool.close()
    assert calls[2:] == [("free", 4096), ("free", 4096), ("destroy", 1234)]


def test_imported_pool_refuses_a_descriptor_out_of_range(monkeypatch):
    """A descriptor past a C int: ValueError before any call (ctypes truncated it, and the import
    used another descriptor: red team 33)."""
    from rmmh import _lib, ipc
    calls = []
    monkeypatch.setattr(_lib, "rmmh_mempool_import_fd", lambda fd, out: calls.append(fd) or 0)
    for bad in (2 ** 32 + 3, -2 ** 31 - 1):
        with pytest.raises(ValueError, match="not a file descriptor"):
            ipc.ImportedPool(bad, close_fd=False)
    assert calls == []


def test_recv_fd_reads_only_its_message():
    """recv_fd reads its marker with the descriptor and no more: bytes sent after it stay on the
    socket (it read up to 1024 bytes and dropped them: red team 33); another marker is refused."""
    import socket
    from rmmh import ipc
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    r, w = os.pipe()
    try:
        ipc.send_fd(a, r)
        a.sendall(b"x" * 64)
        fd = ipc.recv_fd(b)
        os.close(fd)
        assert b.recv(1024) == b"x" * 64
        ipc.send_fd(a, r, message=b"zz")
        with pytest.raises(OSError, match="expected"):
            ipc.recv_fd(b)
    finally:
        for x in (a, b):
            x.close()
        os.close(r)
        os.close(w)


def test_get_ipc_handle_refuses_async_memory_under_adaptors():
    """An async resource's block under an adaptor or a pool: NotSupportedError naming export_pool,
    as for the async resource itself (it went on to cudaIpcGetMemHandle: a CUDA error on a GPU,
    red team 33)."""
    from rmmh import ipc
    try:
        base = mr_.CudaAsyncMemoryResource(initial_pool_size=0)
    except rmm.NotSupportedError:
        pytest.skip("no memory pools on this device")
    for top in (mr_.StatisticsResourceAdaptor(base), mr_.PoolMemoryResource(base, 1 << 20)):
        buf = rmm.DeviceBuffer(size=256, mr=top)
        with pytest.raises(rmm.NotSupportedError, match="exported through its pool"):
            ipc.get_ipc_handle(buf)
        del buf


def test_get_ipc_handle_refuses_async_memory_of_a_binning_bin():
    """A block a binning resource's bin served from an async resource: the same NotSupportedError
    naming export_pool (it went on to cudaIpcGetMemHandle: the driver's "invalid value" on a GPU,
    session 34's list); a block of a bin rmm.h made itself, or of the binning's upstream, is not
    refused for it."""
    from rmmh import ipc
    try:
        asyn = mr_.CudaAsyncMemoryResource(initial_pool_size=0)
    except rmm.NotSupportedError:
        pytest.skip("no memory pools on this device")
    binning = mr_.BinningMemoryResource(mr_.CudaMemoryResource())
    binning.add_bin(1024, asyn)
    binning.add_bin(4096)
    small = rmm.DeviceBuffer(size=1000, mr=binning)  # the async bin
    with pytest.raises(rmm.NotSupportedError, match="exported through its pool"):
        ipc.get_ipc_handle(small)
    grown = rmm.DeviceBuffer(size=100, mr=binning)
    grown.reserve(3000)  # a 4096-byte block of rmm.h's own bin, whatever the size says
    for buf in (grown, rmm.DeviceBuffer(size=100000, mr=binning)):  # (the upstream: cudaMalloc)
        try:
            ipc.get_ipc_handle(buf)
        except rmm.NotSupportedError as e:
            assert "exported through its pool" not in str(e)  # (the host backend: no IPC at all)


def _pipes():
    out = []
    for x in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + x).startswith("pipe:"):
                out.append(int(x))
        except OSError:
            pass
    return sorted(out)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_recv_fd_closes_the_descriptor_when_the_marker_read_fails():
    r, w = os.pipe()
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        socket.send_fds(a, [b"f"], [r])  # "fd"'s first byte with the descriptor; "d" never comes
        os.close(r)
        b.settimeout(0.2)
        before = _pipes()
        with pytest.raises(TimeoutError):
            ipc.recv_fd(b)
        assert _pipes() == before  # (the received descriptor leaked)
    finally:
        a.close()
        b.close()
        os.close(w)


def test_send_fd_refuses_an_empty_message():
    """send_fd(message=b'') sent nothing on a stream socket (no byte to carry SCM_RIGHTS) and
    returned; recv_fd(message=b'') then blocked for ever."""
    r, w = os.pipe()
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with pytest.raises(ValueError):
            ipc.send_fd(a, r, message=b"")
        b.settimeout(1)
        with pytest.raises(ValueError):
            ipc.recv_fd(b, message=b"")
    finally:
        for x in (a, b):
            x.close()
        os.close(r)
        os.close(w)


def test_opened_ipc_memory_close_failure_can_be_retried(monkeypatch):
    """close() forgot the mapping before cudaIpcCloseMemHandle answered: a failed close could not
    be retried (the mapping leaked, the second close a silent no-op)."""
    answers = [1, 0]  # RMM_ERROR_CUDA, then success
    calls = []
    monkeypatch.setattr(_lib, "rmmh_ipc_close_mem_handle",
                        lambda b: calls.append(b) or answers.pop(0))
    mem = ipc.OpenedIpcMemory(8192, 256, 100)
    with pytest.raises(rmm.RMMError):
        mem.close()
    mem.close()
    assert calls == [8192, 8192]
    mem.close()
    assert calls == [8192, 8192]


def test_imported_pool_init_twice_does_not_leak_the_first(monkeypatch):
    made = iter([1111, 2222])

    def imp(fd, out):
        out._obj.value = next(made)
        return 0

    monkeypatch.setattr(_lib, "rmmh_mempool_import_fd", imp)
    monkeypatch.setattr(_lib, "rmmh_mempool_destroy", lambda h: 0)
    pool = ipc.ImportedPool(5, close_fd=False)
    with pytest.raises(TypeError):
        pool.__init__(6, close_fd=False)  # (replaced 1111 by 2222: 1111 never destroyed)
    assert pool.handle == 1111
    r, w = os.pipe()
    with pytest.raises(TypeError):
        pool.__init__(r)  # the descriptor handed over is closed, as on the other refusals
    with pytest.raises(OSError):
        os.fstat(r)
    os.close(w)
    pool.close()


def test_import_pointer_checks_bytes_not_items(monkeypatch):
    """Red team 47: import_pointer checked len(data), the item count: 64 ints (256 bytes) passed
    and were cut to their first 64 bytes, and the message swapped the two counts."""
    import array
    monkeypatch.setattr(_lib, "rmmh_mempool_import_fd", lambda fd, out: (setattr(out._obj, "value", 77), 0)[1])
    monkeypatch.setattr(_lib, "rmmh_mempool_destroy", lambda h: 0)
    seen = []

    def imp(pool, data, out):
        seen.append(bytes(data))
        out._obj.value = 4096
        return 0

    monkeypatch.setattr(_lib, "rmmh_mempool_import_pointer", imp)
    monkeypatch.setattr(_lib, "rmmh_imported_free", lambda p: 0)
    pool = ipc.ImportedPool(5, close_fd=False)
    with pytest.raises(ValueError, match="must be 64 contiguous bytes, not 256"):
        pool.import_pointer(array.array("I", range(64)))
    with pytest.raises(ValueError, match="not 10"):
        pool.import_pointer(bytes(10))
    assert pool.import_pointer(memoryview(bytes(range(64))).cast("I")) == 4096  # 16 items, 64 bytes
    assert seen == [bytes(range(64))]
    pool.close()


@pytest.mark.parametrize("size,err", [(-1, OverflowError), ("x", TypeError)])
def test_get_ipc_handle_checks_its_size_first(size, err):
    """Red team 47: the size was checked after the export, so a bad size got the export's error
    (NotSupportedError on the host backend)."""
    mr = mr_.CudaMemoryResource()
    p = mr.allocate(256)
    try:
        with pytest.raises(err):
            ipc.get_ipc_handle(p, mr=mr, size=size)
    finally:
        mr.deallocate(p, 256)


def test_ipc_owners_made_without_init_say_so():
    """Red team 47: methods of an ImportedPool or OpenedIpcMemory made by __new__ alone raised a
    bare AttributeError (GraphPool's say NotInitializedError)."""
    for cls, calls in ((ipc.ImportedPool, ("close", "free", "import_pointer")), (ipc.OpenedIpcMemory, ("close",))):
        obj = cls.__new__(cls)
        for name in calls:
            args = {"free": (4096,), "import_pointer": (bytes(64),)}.get(name, ())
            with pytest.raises(rmm.NotInitializedError):
                getattr(obj, name)(*args)
        with pytest.raises(AttributeError):
            obj.no_such_attribute


def test_imported_pool_close_failure_can_be_retried(monkeypatch):
    """close() forgot the pool before rmm_mem_pool_destroy_imported answered (which keeps its record
    on a failure, for a retry): a failed close could not be retried (the imported pool leaked, the
    second close a silent no-op), as OpenedIpcMemory.close before red team 47."""
    calls = []
    pool = recorded_pool(monkeypatch, calls, {4096: 1})
    answers = [1, 0]  # RMM_ERROR_CUDA, then success
    monkeypatch.setattr(_lib, "rmmh_mempool_destroy", lambda h: calls.append(("destroy", h)) or answers.pop(0))
    with pytest.raises(rmm.RMMError):
        pool.close()
    assert pool.handle == 1234
    pool.close()
    assert calls == [("free", 4096), ("destroy", 1234), ("destroy", 1234)]
    assert pool.handle is None
    pool.close()  # closed: nothing more
    assert len(calls) == 3
