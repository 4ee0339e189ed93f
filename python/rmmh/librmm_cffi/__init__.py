"""The 2019 Python API of RMM (librmm_cffi), over rmm.h's 2019 C API.

    from rmmh.librmm_cffi import librmm as rmm
    from rmmh.librmm_cffi import librmm_config as rmm_cfg

    dev_out = rmm.device_array(size, dtype=np.float64)   # a Numba device array in rmm.h memory
    dev_in = rmm.to_device(np.arange(10))

Importing this module initializes the 2019 API with the options of librmm_config (as the
original did; a failure, e.g. without a GPU, is a RuntimeWarning) and finalizes it at exit; librmm.finalize(), new options, librmm.initialize()
re-initializes. The array functions return Numba DeviceNDArrays and import Numba when first
called; everything else works without Numba. The 2019 API keeps its own resources (rmmInitialize),
separate from rmmh.mr's per-device table.
"""
import atexit
import ctypes
import inspect
import os
import tempfile

from .. import _lib
from .._errors import RMMError as _RMMErrorBase
from . import librmm_config

__all__ = ["RMMError", "librmm", "librmm_config"]

PoolAllocation = 1
CudaManagedMemory = 2
CudaDefaultAllocation = 0


class RMMError(_RMMErrorBase):
    """A failed 2019 API call: errcode is the status name ("RMM_ERROR_NOT_INITIALIZED", ...)."""


def _check(status):
    if status:
        raise RMMError(_lib.rmm_status_string(status).decode(), _lib.last_error())


class _Raw:
    """A raw stream handle as a context manager (nothing to hold: the caller owns the stream)."""
    __slots__ = ("_h",)

    def __init__(self, h):
        self._h = h

    def __enter__(self):
        return self._h

    def __exit__(self, *exc):
        return None


def _stream_held(stream):
    """``with _stream_held(stream) as h:`` the C handle for one call. The 2019 API took raw stream
    handles (0 for the default stream) or stream objects; a stream object's C stream is held for
    the call (_lifetime.Hold: a finalizer called by hand on another thread while ctypes has let the
    GIL go destroys it after the call, not under it; one already destroyed is refused)."""
    if stream is None or stream == 0:
        return _Raw(0)
    if isinstance(stream, int):
        return _Raw(_lib.as_pointer(stream, "stream"))
    from .._stream import as_stream
    from .._lifetime import Hold
    return Hold(as_stream(stream), "C stream")


def _numba_cuda():
    from numba import cuda  # the array functions need Numba; import it when first used
    return cuda


def _device_pointer(addr):
    """A device pointer of the type the installed Numba's MemoryPointer expects."""
    if getattr(_drv(), "USE_NV_BINDING", True):
        try:
            from cuda.bindings.driver import CUdeviceptr
        except ImportError:  # older cuda-python
            from cuda.cuda import CUdeviceptr
        return CUdeviceptr(addr)
    return ctypes.c_uint64(addr)


def _drv():
    from numba.cuda.cudadrv import driver  # explicit: numba.cuda's attributes vary by version
    return driver


def _devicearray():
    from numba.cuda.cudadrv import devicearray
    return devicearray


def _prepare_shape_strides_dtype(cuda):
    """Numba's shape/strides/dtype normalizer: numba.cuda.api_util.prepare_shape_strides_dtype
    in numba-cuda (0.2x and later), numba.cuda.api._prepare_shape_strides_dtype before."""
    try:
        from numba.cuda.api_util import prepare_shape_strides_dtype
        return prepare_shape_strides_dtype
    except ImportError:
        return cuda.api._prepare_shape_strides_dtype


class _LibRMM:
    """The ``librmm`` object of the 2019 API."""

    PoolAllocation = PoolAllocation
    CudaManagedMemory = CudaManagedMemory
    CudaDefaultAllocation = CudaDefaultAllocation

    # -- lifecycle -------------------------------------------------------------------------------
    def initialize(self):
        """Initializes with the options of librmm_config. RMMError if already initialized."""
        mode = 0
        if librmm_config.use_pool_allocator:
            mode |= PoolAllocation
        if librmm_config.use_managed_memory:
            mode |= CudaManagedMemory
        opts = _lib.RmmOptions(mode, _lib.as_size(librmm_config.initial_pool_size,
                                                  "initial_pool_size"),
                               bool(librmm_config.enable_logging))
        _check(_lib.rmmInitialize(ctypes.byref(opts)))

    # finalize() calls made: a device array's finalizer frees its memory only in the session
    # (initialize() .. finalize()) that allocated it (after a finalize() and a new initialize() the
    # old address may belong to a new block; until 2026-11-28 the finalizer freed by address in
    # any session, a red team's find)
    _session = 0

    def finalize(self):
        """Frees the 2019 API's resources (memory still allocated through it is released with
        them). RMMError if not initialized, and while a free through them waits for a capture's
        end (nothing done: still initialized, the arrays made so far still free their blocks)."""
        session = _LibRMM._session
        _LibRMM._session = session + 1  # (first: a finalizer that runs meanwhile frees nothing)
        try:
            _check(_lib.rmmFinalize())
        except RMMError:
            # refused with nothing done, still initialized (a free waiting for rmm_capture_end):
            # the session goes on, and its arrays' finalizers free again (until red team 53 the
            # session stayed counted ended, and every array made before the refusal kept its
            # block until the next finalize). One whose finalizer ran during the refused call
            # keeps its block until then. A finalize that fails having finalized (blocks it
            # could not give back) ends the session. is_initialized() is asked first: it lets the
            # GIL go (a C call), and a finalize() on another thread meanwhile moves the session on,
            # which the comparison then sees; asked between the comparison and the store, it let
            # that session be undone, and the old arrays' finalizers free by address in the next
            # (a review's find, 2026-12-03)
            if self.is_initialized() and _LibRMM._session == session + 1:
                _LibRMM._session = session
            raise

    def is_initialized(self):
        """True between initialize() and finalize()."""
        return bool(_lib.rmmIsInitialized(None))

    # -- raw allocation --------------------------------------------------------------------------
    # rmm.h's log keeps the file name pointer given to rmmAlloc/rmmFree (a C caller passes
    # __FILE__, a static string), so the names passed from here must live as long: kept here.
    _files: dict[str, bytes] = {}

    def _caller(self):
        if not librmm_config.enable_logging:
            return None, 0  # (NULL: errors say "at ?:0", not "at :0"; the caller is looked up only for the log)
        frame = inspect.currentframe().f_back
        here = os.path.abspath(__file__)
        while frame is not None and os.path.abspath(frame.f_code.co_filename) == here:
            frame = frame.f_back
        if frame is None:
            return b"?", 0
        name = frame.f_code.co_filename
        encoded = self._files.get(name)
        if encoded is None:
            encoded = self._files.setdefault(name, os.fsencode(name))
        return encoded, frame.f_lineno

    def rmmAlloc(self, size, stream=0):
        """Allocates size bytes; returns the address (0 for 0 bytes)."""
        size = _lib.as_size(size)
        file, line = self._caller()
        out = ctypes.c_void_p()
        with _stream_held(stream) as h:
            _check(_lib.rmmAlloc(ctypes.byref(out), size, h, file, line))
        return out.value or 0

    def rmmFree(self, ptr, stream=0):
        """Frees memory from rmmAlloc (no size: the 2019 API remembers it)."""
        ptr = _lib.as_pointer(ptr)
        file, line = self._caller()
        with _stream_held(stream) as h:
            _check(_lib.rmmFree(ptr, h, file, line))

    def rmmGetInfo(self, stream=0):
        """(free, total) device memory."""
        f, t = ctypes.c_size_t(), ctypes.c_size_t()
        with _stream_held(stream) as h:
            _check(_lib.rmmGetInfo(ctypes.byref(f), ctypes.byref(t), h))
        return f.value, t.value

    def get_allocation_offset(self, ptr, stream=0):
        """The offset of ptr from the start of the upstream allocation holding it (0 outside
        pool mode): what a CUDA IPC handle of the pool needs."""
        off = ctypes.c_ssize_t()
        ptr = _lib.as_pointer(ptr)
        with _stream_held(stream) as h:
            _check(_lib.rmmGetAllocationOffset(ctypes.byref(off), ptr, h))
        return off.value

    def csv_log(self):
        """The events logged since initialize() as CSV (RMM's columns plus the Python file and
        line of each call); needs librmm_config.enable_logging."""
        fd, path = tempfile.mkstemp(prefix="rmmh_csv_log_", suffix=".csv")
        os.close(fd)
        try:
            _check(_lib.rmmWriteLog(os.fsencode(path)))
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        finally:
            os.unlink(path)

    # -- Numba device arrays -----------------------------------------------------------------
    def _make_finalizer(self, addr, stream):
        session = _LibRMM._session

        def finalizer():
            # disarmed: device_array gave the block back itself (building Numba's array failed
            # after Numba registered this finalizer); after finalize() the memory went with the
            # resources. Either way the address may be another block's by now.
            if finalizer.disarmed:
                return
            if _LibRMM._session == session and self.is_initialized():
                self.rmmFree(addr, stream)
        finalizer.disarmed = False
        return finalizer

    def _array_helper(self, addr, datasize, shape, strides, dtype, finalizer=None):
        cuda = _numba_cuda()
        ctx = cuda.current_context()
        mem = _drv().MemoryPointer(ctx, _device_pointer(addr), datasize,
                                                finalizer=finalizer)
        return _devicearray().DeviceNDArray(shape, strides, dtype, gpu_data=mem)

    def device_array_from_ptr(self, ptr, nelem, dtype=None, finalizer=None):
        """A 1-D Numba device array over existing memory (not freed by it unless finalizer)."""
        import numpy as np
        if dtype is None:
            dtype = np.float64
        dtype = np.dtype("datetime64[ms]") if dtype is np.datetime64 else np.dtype(dtype)
        return self._array_helper(_lib.as_pointer(ptr), dtype.itemsize * nelem, (nelem,),
                                  (dtype.itemsize,), dtype, finalizer)

    def device_array(self, shape, dtype=None, strides=None, order="C", stream=0):
        """Numba's cuda.device_array, with its memory from the 2019 API."""
        import numpy as np
        cuda = _numba_cuda()
        if dtype is None:
            dtype = np.float64
        shape, strides, dtype = _prepare_shape_strides_dtype(cuda)(shape, strides, dtype, order)
        datasize = _drv().memory_size_from_info(shape, strides, dtype.itemsize)
        addr = self.rmmAlloc(datasize, stream)
        finalizer = self._make_finalizer(addr, stream)
        try:
            return self._array_helper(addr, datasize, shape, strides, dtype, finalizer)
        except BaseException:
            # no array holds the block: it goes back now, and the finalizer Numba may have
            # registered already (MemoryPointer's weakref.finalize) must not free it again
            finalizer.disarmed = True
            self.rmmFree(addr, stream)
            raise

    def device_array_like(self, ary, stream=0):
        """device_array with ary's shape, strides and dtype."""
        if ary.ndim == 0:
            ary = ary.reshape(1)
        return self.device_array(ary.shape, ary.dtype, ary.strides, stream=stream)

    def to_device(self, ary, stream=0, copy=True, to=None):
        """Numba's cuda.to_device, with its memory from the 2019 API."""
        if to is None:
            to = self.device_array_like(ary, stream=stream)
            to.copy_to_device(ary, stream=stream)
            return to
        if copy:
            to.copy_to_device(ary, stream=stream)
        return to

    def auto_device(self, obj, stream=0, copy=True):
        """(device array, whether it was copied): obj itself when it is device memory already."""
        import numpy as np
        cuda = _numba_cuda()
        if _drv().is_device_memory(obj):
            return obj, False
        if isinstance(obj, np.void):
            devobj = cuda.devicearray.from_record_like(obj, stream=stream)
        else:
            if not isinstance(obj, np.ndarray):
                obj = np.asarray(obj)
            cuda.devicearray.sentry_contiguous(obj)
            devobj = self.device_array_like(obj, stream=stream)
        if copy:
            devobj.copy_to_device(obj, stream=stream)
        return devobj, True

    def get_ipc_handle(self, ary, stream=0):
        """A Numba IpcArrayHandle for ary whose offset accounts for the pool sub-allocation."""
        cuda = _numba_cuda()
        ipch = cuda.devices.get_context().get_ipc_handle(ary.gpu_data)
        ipch.offset = self.get_allocation_offset(ary.device_ctypes_pointer.value, stream)
        desc = dict(shape=ary.shape, strides=ary.strides, dtype=ary.dtype)
        return _devicearray().IpcArrayHandle(ipc_handle=ipch, array_desc=desc)


librmm = _LibRMM()
try:
    librmm.initialize()
except RMMError as _e:  # e.g. no GPU: importing still works; initialize() again once it can
    import warnings
    warnings.warn("rmmh.librmm_cffi: initialization failed (%s); call librmm.initialize() "
                  "once the device is usable" % _e, RuntimeWarning)


def _finalize_at_exit():
    if librmm.is_initialized():
        librmm.finalize()


atexit.register(_finalize_at_exit)
