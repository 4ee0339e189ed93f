"""CUDA IPC of rmmh memory: share a block with another process on the same machine. rmmh only.

Legacy IPC (cudaIpcGetMemHandle) works on memory from cudaMalloc, and a handle names a whole
cudaMalloc allocation. A block inside a pool, arena or fixed-size resource is part of a larger
allocation, so the exporter sends the handle of that allocation and the block's offset in it, and
the importer opens the handle and adds the offset. rmm.h knows both (the resource keeps each
block's chunk), without asking the driver:

    h = rmmh.ipc.get_ipc_handle(buf)                  # exporter: picklable (bytes, offset, size)
    with rmmh.ipc.open_ipc_handle(h) as mem:          # importer (another process)
        ...  mem.ptr is the block, mem.base the start of the allocation

The whole allocation is visible to the importer, not only the block (CUDA's rule). The exporter
must keep the block alive until the importer has closed the handle.

Async resources (cudaMallocAsync pools) export through their memory pool instead. Make the resource
with ``CudaAsyncMemoryResource(enable_ipc=True)``, then:

    fd = rmmh.ipc.export_pool(mr)                     # a POSIX file descriptor: send it with
    rmmh.ipc.send_fd(sock, fd)                        #   SCM_RIGHTS over a Unix socket
    data = rmmh.ipc.export_pointer(buf.ptr)           # 64 bytes per block, any channel
    pool = rmmh.ipc.ImportedPool(rmmh.ipc.recv_fd(sock))          # importer
    ptr = pool.import_pointer(data); ...; pool.free(ptr); pool.close()

Importers must free what they imported before the exporter frees the block. The exports and
imports raise rmmh.NotSupportedError on the host backend, and where the device or driver cannot
export; allocation_base, send_fd and recv_fd work everywhere.
"""
import ctypes
import numbers
import os
import socket
import threading
from dataclasses import dataclass

from . import _lib, _lifetime
from . import _memory_resource as _mr
from ._errors import NOT_SUPPORTED, InvalidArgumentError, error_for, init_guard

__all__ = ["ImportedPool", "IpcHandle", "OpenedIpcMemory", "allocation_base", "export_pointer",
           "export_pool", "get_ipc_handle", "open_ipc_handle", "recv_fd", "send_fd"]


def allocation_base(ptr, mr=None):
    """(base, offset) of the block ``ptr`` of ``mr`` (default: the current device's resource):
    see DeviceMemoryResource.allocation_base."""
    if mr is None:
        mr = _mr.get_current_device_resource()
    return _mr._check_mr(mr, "mr").allocation_base(ptr)  # (a TypeError for a non-resource: red team 40)


_ASYNC = (_mr.CudaAsyncMemoryResource, _mr.CudaAsyncViewMemoryResource,
          _mr.CudaAsyncManagedMemoryResource, _mr.CudaAsyncPinnedMemoryResource)


@dataclass(frozen=True)
class IpcHandle:
    """What the importer needs: the cudaIpcMemHandle_t of the underlying allocation (64 bytes),
    the block's offset in it and the block's size. Picklable."""
    handle: bytes
    offset: int
    size: int

    def __post_init__(self):
        if isinstance(self.handle, (bytearray, memoryview)):  # (kept as bytes: hashable, picklable)
            object.__setattr__(self, "handle", bytes(self.handle))
        _check_fields(self)


def _check_fields(h):
    """TypeError or ValueError unless h's fields are what get_ipc_handle makes: 64 bytes, and an
    offset and a size that are ints in [0, 2**64) (checked when one is made, and again when one is
    opened: unpickling makes one without __init__)."""
    if not isinstance(h.handle, (bytes, bytearray, memoryview)):
        raise TypeError("IpcHandle.handle must be bytes, not %s" % type(h.handle).__name__)
    if len(h.handle) != _lib.IPC_BYTES:
        raise ValueError("an IPC handle must have %d bytes, not %d" % (_lib.IPC_BYTES, len(h.handle)))
    for name in ("offset", "size"):
        v = getattr(h, name)
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError("IpcHandle.%s must be an int, not %s" % (name, type(v).__name__))
        if not 0 <= v < 1 << 64:
            raise ValueError("IpcHandle.%s must be in [0, 2**64), not %d" % (name, v))


def get_ipc_handle(obj, mr=None, size=None):
    """An IpcHandle for a DeviceBuffer (its resource and size are used) or for a device address
    ``obj`` handed out by ``mr`` (default: the current device's resource), ``size`` bytes long.
    NotSupportedError for a pool with growth='virtual', a user-defined resource, async resources
    (use export_pool; under adaptors, pools and a binning resource's bins too) and the host
    backend."""
    ptr = getattr(obj, "ptr", obj)
    if mr is None:
        mr = getattr(obj, "mr", None) or _mr.get_current_device_resource()
    _mr._check_mr(mr, "mr")  # (a bare AttributeError for a non-resource until red team 40)
    if size is None:
        size = getattr(obj, "size", 0)
    size = _lib.as_size(size, "size")  # (checked before the export: a bad size was the export's error)
    allocated = getattr(obj, "_nbytes", None) or size  # (a DeviceBuffer's block: its capacity)
    m = mr
    while m is not None:  # (under adaptors and pools too: a red team's find, cudaIpcGetMemHandle's
        # CUDA error where this NotSupportedError was promised)
        if isinstance(m, _ASYNC):
            raise error_for(NOT_SUPPORTED, "get_ipc_handle: memory of an async resource (%s) is "
                            "exported through its pool (rmmh.ipc.export_pool and export_pointer)"
                            % type(m).__name__)
        if isinstance(m, _mr.BinningMemoryResource) and allocated:
            # the bin that served a block of this size (the smallest that holds it), where a
            # resource was given for it; else the binning's upstream (its own bins draw from
            # there): an async bin's block was the driver's "invalid value" (session 34's list)
            fits = [b for b in m._bins if b >= allocated]
            served = m._bins[min(fits)] if fits else None
            if served is not None:
                m = served
                continue
        m = m.get_upstream() if isinstance(m, _mr.UpstreamResourceAdaptor) else None
    base, offset = mr.allocation_base(ptr)
    out = _lib.IPC_BUFFER()
    _lib.check(_lib.rmmh_ipc_get_mem_handle(base, out), "get_ipc_handle(%#x)" % ptr)
    return IpcHandle(bytes(out), offset, size)


class OpenedIpcMemory:
    """Another process's allocation, opened: ``ptr`` is the block (base + offset), ``base`` the
    start of the allocation, ``size`` the block's size. close() (or the with block's end) closes
    the handle; then the memory must not be used."""

    def __init__(self, base, offset, size):
        self.base, self.ptr, self.size = base, base + offset, size

    __getattr__ = init_guard("base", "ptr", "size")

    def __reduce__(self):  # (copy.copy too: a copy would close the mapping twice)
        raise TypeError("rmmh.ipc.OpenedIpcMemory cannot be pickled or copied (it owns an opened "
                        "mapping of this process); pickle its IpcHandle instead")

    def close(self):
        with _imports_lock:  # (two threads closing: one cudaIpcCloseMemHandle)
            if self.base:
                # forgotten once closed, not before: a failed close can be tried again (red team
                # 47: the mapping was forgotten first, and a retry did nothing)
                _lib.check(_lib.rmmh_ipc_close_mem_handle(self.base), "cudaIpcCloseMemHandle")
                self.base = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<rmmh.ipc.OpenedIpcMemory ptr=%#x size=%d>" % (self.ptr, self.size)


def open_ipc_handle(handle):
    """Opens an IpcHandle from another process on the current device (lazy peer access).
    TypeError for anything but an IpcHandle, TypeError or ValueError for one whose fields are not
    get_ipc_handle's (a handle of another length, a negative offset or size), before any CUDA
    call."""
    if not isinstance(handle, IpcHandle):
        raise TypeError("open_ipc_handle needs an rmmh.ipc.IpcHandle (get_ipc_handle's), not %s"
                        % type(handle).__name__)
    _check_fields(handle)
    base = ctypes.c_void_p()
    _lib.check(_lib.rmmh_ipc_open_mem_handle(_lib.IPC_BUFFER.from_buffer_copy(handle.handle),
                                             ctypes.byref(base)), "open_ipc_handle")
    return OpenedIpcMemory(base.value or 0, handle.offset, handle.size)


# ---- async resources: the memory pool's shareable handle ------------------------------------

def export_pool(mr):
    """A POSIX file descriptor for the memory pool of ``mr`` (a CudaAsyncMemoryResource made with
    enable_ipc=True); the caller closes it. NotSupportedError where the pool or the device cannot
    export."""
    if not isinstance(mr, (_mr.CudaAsyncMemoryResource, _mr.CudaAsyncViewMemoryResource)):
        raise TypeError("export_pool needs a CudaAsyncMemoryResource, not %s" % type(mr).__name__)
    fd = ctypes.c_int(-1)
    with _lifetime.Hold(mr):  # (its pool held through the export: _lifetime.Hold)
        _lib.check(_lib.rmmh_mempool_export_fd(mr.pool_handle(), ctypes.byref(fd)), "export_pool")
    return fd.value


def export_pointer(ptr):
    """The 64 bytes that name ``ptr``, a block of an exportable pool, to its importers."""
    out = _lib.IPC_BUFFER()
    _lib.check(_lib.rmmh_mempool_export_pointer(_lib.as_pointer(ptr), out), "export_pointer")
    return bytes(out)


# around ImportedPool's check of its imports, the C call and the record's change (every pool: a
# rare path), so that two threads freeing one address make one cudaFree
_imports_lock = threading.RLock()


class ImportedPool:
    """A memory pool of another process, imported from its file descriptor (which this closes).
    Imported pools cannot allocate; import_pointer maps the exporter's blocks."""

    def __init__(self, fd, close_fd=True):
        pool = ctypes.c_void_p()
        if isinstance(fd, bool) or not isinstance(fd, numbers.Integral):
            # (not an int: nothing to close; int() of a float or a numeric string closed an
            # unrelated descriptor: a red team's find, 2026-11-29)
            raise TypeError("ImportedPool: fd must be an int (a file descriptor), not %s"
                            % type(fd).__name__)
        fd = int(fd)
        if not -0x80000000 <= fd <= 0x7FFFFFFF:  # (ctypes would truncate it to another descriptor)
            raise ValueError("ImportedPool: fd %d is not a file descriptor (past a C int)" % fd)
        if self.__dict__.get("handle"):  # (a second call replaced the first pool, never destroyed)
            if close_fd:  # (the descriptor was handed over: closed, as on the import's refusal)
                try:
                    os.close(fd)
                except OSError:
                    pass
            raise TypeError("ImportedPool.__init__ may be called once")
        try:
            _lib.check(_lib.rmmh_mempool_import_fd(fd, ctypes.byref(pool)), "ImportedPool")
        except BaseException:
            if close_fd:
                try:
                    os.close(fd)
                except OSError:  # (a bad fd: the import's error is the one to see)
                    pass
            raise
        if close_fd:
            os.close(fd)
        self.handle = pool.value
        # address -> imports not freed yet: the driver gives a block imported twice in one process
        # the same address (an H200, 2026-11-30), and rmm.h counts such imports, each freed once
        self._imported = {}

    __getattr__ = init_guard("handle", "_imported")

    def import_pointer(self, data):
        """The address, in this process, of the block named by export_pointer's bytes."""
        # bytes, not items (an array of ints passed its item count and was cut: red team 47)
        view = memoryview(data)
        if not view.c_contiguous or view.nbytes != _lib.IPC_BYTES:
            raise ValueError("export data must be %d contiguous bytes, not %d%s" % (
                _lib.IPC_BYTES, view.nbytes, "" if view.c_contiguous else " (not contiguous)"))
        data = view.tobytes()
        ptr = ctypes.c_void_p()
        with _imports_lock:  # (a close() on another thread waits: it destroyed the pool under the
            # import, and the block landed in a closed pool that could not free it)
            if not self.handle:
                raise InvalidArgumentError("RMM_ERROR_INVALID_ARGUMENT", "ImportedPool.import_pointer: the pool is closed")
            _lib.check(_lib.rmmh_mempool_import_pointer(
                self.handle, _lib.IPC_BUFFER.from_buffer_copy(data), ctypes.byref(ptr)),
                "import_pointer")
            self._imported[ptr.value] = self._imported.get(ptr.value, 0) + 1
        return ptr.value

    def free(self, ptr):
        """Lets go of an imported block (before the exporter frees it), once per import_pointer
        that returned it (a block imported twice has one address: the mapping goes with the last
        free). InvalidArgumentError for an address this pool did not import, or let go as often
        as imported (the C call is a cudaFree, which would free this process's own memory: a red
        team's find), and after close()."""
        with _imports_lock:
            if not self.handle:
                raise InvalidArgumentError("RMM_ERROR_INVALID_ARGUMENT", "ImportedPool.free: the pool is closed")
            if ptr not in self._imported:
                raise InvalidArgumentError("RMM_ERROR_INVALID_ARGUMENT", "ImportedPool.free(%s): not a block this pool imported, or freed already (as often as imported)"
                                           % (hex(ptr) if isinstance(ptr, int) else repr(ptr)))
            _lib.check(_lib.rmmh_imported_free(ptr), "ImportedPool.free")
            if self._imported[ptr] > 1:
                self._imported[ptr] -= 1
            else:
                del self._imported[ptr]

    def close(self):
        """Frees what is still imported and destroys the imported pool. A close that fails may be
        tried again."""
        with _imports_lock:
            for ptr, n in list(self._imported.items()):
                for _ in range(n):
                    self.free(ptr)
            if self.handle:
                # forgotten once destroyed, not before: rmm.h keeps the pool's record when its
                # destroy fails, so a failed close can be tried again (until red team 53 the handle
                # was dropped first, and the retry did nothing: the imported pool leaked)
                _lib.check(_lib.rmmh_mempool_destroy(self.handle), "ImportedPool.close")
                self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):  # (copy.copy too: a copy would destroy the pool twice)
        raise TypeError("rmmh.ipc.ImportedPool cannot be pickled or copied (it owns an imported "
                        "memory pool of this process); share the object itself")


def send_fd(sock, fd, message=b"fd"):
    """Sends a file descriptor over a connected Unix socket (SCM_RIGHTS), with ``message`` (a
    few bytes, not empty: with none, a stream socket carries no descriptor; recv_fd with the same
    message checks it). ValueError for an empty message."""
    if not message:  # (red team 47: nothing was sent, no error, and recv_fd waited for good)
        raise ValueError("send_fd: the message must not be empty (it carries the descriptor)")
    socket.send_fds(sock, [message], [fd])


def recv_fd(sock, message=b"fd"):
    """Receives a file descriptor sent with send_fd(sock, fd, message): reads exactly
    len(message) bytes with it (so data sent after it stays on the socket; until 2026-11-30 it read
    up to 1024 bytes and dropped them) and checks them. OSError if no descriptor came, or other
    bytes (then the descriptor is closed): the descriptor must be the next thing on the socket.
    A failed read of the rest of the message (a timeout, an interrupt) closes it too. ValueError
    for an empty message."""
    if not message:
        raise ValueError("recv_fd: the message must not be empty (it carries the descriptor)")
    msg, fds, _, _ = socket.recv_fds(sock, len(message), 1)
    if not fds:
        raise OSError("no file descriptor received (got %r)" % (msg,))
    ok = False
    try:
        while len(msg) < len(message):  # (a stream socket may deliver the marker in parts)
            more = sock.recv(len(message) - len(msg))
            if not more:
                break
            msg += more
        if msg != message:
            raise OSError("recv_fd: expected %r with the descriptor, got %r" % (message, msg))
        ok = True
    finally:
        if not ok:  # (red team 47: a timeout here left the received descriptor open)
            for fd in fds:
                os.close(fd)
    return fds[0]
