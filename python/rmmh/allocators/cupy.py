"""CuPy allocators over rmmh (RMM's ``rmm.allocators.cupy``, plus a C fast path).

    import cupy
    from rmmh.allocators.cupy import rmm_cupy_allocator, rmm_cupy_fast_allocator
    cupy.cuda.set_allocator(rmm_cupy_allocator)        # RMM's: a DeviceBuffer per allocation
    cupy.cuda.set_allocator(rmm_cupy_fast_allocator)   # rmmh's: C functions, no Python per call

``rmm_cupy_allocator(nbytes)`` is RMM's: it allocates on CuPy's current stream a ``DeviceBuffer``
that owns the memory (freed on that stream when CuPy drops it).

``rmm_cupy_fast_allocator`` is the ``malloc`` of a ``cupy.cuda.memory.CFunctionAllocator`` over
two C functions of rmmh's library (rmmh_cupy_malloc, rmmh_cupy_free): no Python runs per
allocation or free. CuPy's C malloc gets no stream and its free no size, so:

- Stream rule: the fast path allocates on this thread's stream set with ``using_stream(s)``
  (which also makes ``s`` CuPy's current stream in the block), and otherwise on the default
  stream: the legacy default stream (handle 0), or cudaStreamPerThread when CuPy runs with
  per-thread default streams (CUPY_CUDA_PER_THREAD_DEFAULT_STREAM=1). Memory allocated on the
  default stream and used on another stream that does not synchronize with it (a non-blocking
  stream) must be allocated inside ``using_stream``, as with any stream-ordered pool. CuPy's own
  ``with stream:`` is not seen by the fast path; ``rmm_cupy_allocator`` reads it at every call.
- The block's size, stream, device and resource are kept in C (a sharded map), and the free
  returns the block on its allocation stream with its device current.
- Out of memory raises ``rmmh.allocators.cupy.OutOfMemoryError``, both CuPy's
  ``cupy.cuda.memory.OutOfMemoryError`` and ``rmmh.OutOfMemoryError``, with rmm.h's message.
  Where CuPy propagates an exception set by its C malloc (Cython 3 semantics; checked once, when
  the fast allocator is first made) this costs nothing on success; otherwise
  ``rmm_cupy_fast_allocator`` is a one-line Python wrapper that checks for a NULL pointer, and
  ``FAST_PATH_RAISES`` is False.
"""
import contextlib
import ctypes
import os
import threading

from .. import _lib
from .._device_buffer import DeviceBuffer
from .._errors import OUT_OF_MEMORY as _OUT_OF_MEMORY, OutOfMemoryError as _RMMOutOfMemoryError
from .._stream import DEFAULT_STREAM, Stream, as_stream

try:
    import cupy
except ImportError:
    cupy = None

__all__ = ["FAST_PATH_RAISES", "OutOfMemoryError", "fast_allocator", "rmm_cupy_allocator",
           "rmm_cupy_fast_allocator", "using_stream"]
_NEED_CUPY = ("OutOfMemoryError", "rmm_cupy_fast_allocator")  # (made from CuPy's classes on first use)
if cupy is None:  # absent without CuPy, so that a star import and hasattr work (red team 30: RMM's
    __all__ = [n for n in __all__ if n not in _NEED_CUPY]  # module imports without CuPy too)


def _require_cupy():
    if cupy is None:
        raise ModuleNotFoundError("No module named 'cupy'")


def rmm_cupy_allocator(nbytes):
    """A CuPy allocator over rmmh (RMM's): a DeviceBuffer of nbytes on CuPy's current stream,
    from the current device's resource, owned by the returned MemoryPointer.

    >>> cupy.cuda.set_allocator(rmm_cupy_allocator)
    """
    _require_cupy()
    s = cupy.cuda.get_current_stream()
    h = s.ptr
    stream = DEFAULT_STREAM if h == 0 else Stream._from_handle(h, s)
    buf = DeviceBuffer(size=nbytes, stream=stream)
    # RMM passes device_id=-1, which makes CuPy ask the driver for the pointer's device; the
    # buffer is on the current device, so rmmh says so and saves that query
    mem = cupy.cuda.UnownedMemory(ptr=buf.ptr, size=buf.size, owner=buf,
                                  device_id=cupy.cuda.device.get_device_id())
    return cupy.cuda.memory.MemoryPointer(mem, 0)


# ---- the C fast path --------------------------------------------------------------------------

_lock = threading.Lock()
_fast = None            # the CFunctionAllocator
_fast_malloc = None     # what rmm_cupy_fast_allocator is
#: Whether the fast path raises OutOfMemoryError from C (no Python per call); None until the
#: fast allocator was made.
FAST_PATH_RAISES = None
_OOMType = None


def _oom_type():
    """OutOfMemoryError: CuPy's and rmmh's (made once cupy is importable)."""
    global _OOMType
    if _OOMType is None:
        _require_cupy()

        class OutOfMemoryError(cupy.cuda.memory.OutOfMemoryError, _RMMOutOfMemoryError):
            """Out of memory in rmmh's CuPy allocator: a cupy.cuda.memory.OutOfMemoryError and an
            rmmh.OutOfMemoryError (a MemoryError), with rmm.h's message."""

            def __new__(cls, size, status=4, message=None):
                if isinstance(size, BaseException):
                    # Python 3.10 and 3.11 normalize an exception set while another is handled
                    # twice: the second time with the instance __new__ returned below (a red
                    # team's find: a TypeError from __init__'s %d replaced the real error)
                    return size
                if message is not None:  # (unpickled: as it was raised)
                    return super().__new__(cls, size, status, message)
                # the error of the hook's status (a missing device, a CUDA error), or the
                # exception a Python callback raised for it, as rmm_cupy_allocator raises: out of
                # memory only where it is (CuPy frees its caches and retries on this type; a red
                # team's find: every failure was this type)
                cause = _lib.take_hook_pending(status)
                if cause is None and status != _OUT_OF_MEMORY:
                    cause = _lib.error(status, "rmmh: allocating %d bytes" % size, allocation=True)
                if cause is not None:
                    return cause
                return super().__new__(cls, size, status)

            def __init__(self, size, status=4, message=None):
                msg = message
                if msg is None:
                    msg = "rmmh: out of memory allocating %d bytes" % size
                    why = _lib.last_error()
                    if why:
                        msg += ": " + why
                MemoryError.__init__(self, msg)
                self._size, self._total, self._limit = size, -1, 0
                self.errcode, self.status = "RMM_ERROR_OUT_OF_MEMORY", status

            def __reduce__(self):
                # the message travels (rebuilt, it would read the receiver's last error)
                return (type(self), (self._size, self.status, str(self)))

        # picklable by reference: this module's OutOfMemoryError (its __getattr__) is this class
        OutOfMemoryError.__module__ = __name__
        OutOfMemoryError.__qualname__ = "OutOfMemoryError"
        _OOMType = OutOfMemoryError
    return _OOMType


def _address(fn):
    return ctypes.cast(fn, ctypes.c_void_p).value


def _ptds():
    check = getattr(getattr(cupy.cuda, "stream", None), "is_ptds_enabled", None)
    if callable(check):
        try:
            return bool(check())
        except Exception:
            pass
    # as CuPy reads it: int(value) != 0 ("00" is off; a value int() refuses stops CuPy's import)
    try:
        return int(os.environ.get("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM", "0")) != 0
    except ValueError:
        return False


_pinned = None  # the type given one reference for the C hook (_configure_raise)


def _configure_raise(on):
    """Raise mode on or off for rmmh_cupy_malloc. On, the C hook keeps the type's address, so the
    type gets one reference never given back (module globals are cleared at shutdown, and an
    allocation failing then would raise a freed type; a red team's find)."""
    global _pinned
    api = ctypes.pythonapi
    if on:
        oom = _oom_type()
        if _pinned is not oom:
            api.Py_IncRef(ctypes.py_object(oom))
            _pinned = oom
        _lib.check(_lib.rmmh_cupy_configure_errors(
            1, _address(api.PyErr_SetObject), _address(api.Py_BuildValue),
            _address(api.Py_DecRef), id(oom)))
    else:
        _lib.check(_lib.rmmh_cupy_configure_errors(0, None, None, None, None))


def fast_allocator():
    """The CFunctionAllocator over rmmh's C functions (made once; its ``malloc`` is
    rmm_cupy_fast_allocator, or, where CuPy does not propagate errors from C, wrapped)."""
    global _fast, _fast_malloc, FAST_PATH_RAISES
    if _fast is not None:
        return _fast
    _require_cupy()
    with _lock:
        if _fast is not None:
            return _fast
        oom = _oom_type()
        lib = _lib.lib
        alloc = cupy.cuda.memory.CFunctionAllocator(
            0, _address(lib.rmmh_cupy_malloc), _address(lib.rmmh_cupy_free), _lib)
        _lib.rmmh_cupy_set_default_stream(2 if _ptds() else 0)
        # does CuPy propagate an exception set by the C malloc? try it once, on a failure
        # rmmh_cupy_fail_next provokes (no memory is touched)
        _configure_raise(True)
        _lib.rmmh_cupy_probe_next()  # (counted as no failed allocation)
        raises = False
        try:
            alloc.malloc(256)
        except oom:
            raises = True
        except BaseException:  # SystemError: the exception was not checked
            pass
        if raises:
            malloc = alloc.malloc
        else:
            _configure_raise(False)
            raw = alloc.malloc

            def malloc(nbytes):
                mp = raw(nbytes)
                if nbytes and not mp.ptr:
                    raise oom(nbytes, _lib.rmm_last_status())
                return mp
        FAST_PATH_RAISES = raises
        _fast_malloc = malloc
        _fast = alloc
    return _fast


@contextlib.contextmanager
def using_stream(stream):
    """Within the block, the fast path allocates on ``stream`` on this thread, and ``stream`` is
    CuPy's current stream. ``stream``: a CuPy stream, an rmmh.Stream, or anything rmmh takes as
    a stream (Numba, PyTorch, ``__cuda_stream__``). The stream must outlive the blocks allocated
    on it: each is freed on its stream, and the fast path keeps only the stream's handle."""
    _require_cupy()
    s = as_stream(stream)
    if isinstance(stream, (cupy.cuda.Stream, cupy.cuda.ExternalStream)):
        cupy_stream = stream
    elif hasattr(cupy.cuda.Stream, "from_external"):
        # CuPy 14 and later: the CUDA stream protocol (rmmh's Stream has __cuda_stream__; the
        # wrapper keeps s alive). ExternalStream warns there that it is deprecated.
        cupy_stream = cupy.cuda.Stream.from_external(s)
    else:
        cupy_stream = cupy.cuda.ExternalStream(s.handle)
    was_set = ctypes.c_int()
    previous = _lib.rmmh_cupy_get_stream(ctypes.byref(was_set))
    _lib.rmmh_cupy_set_stream(s.handle, 1)
    try:
        with cupy_stream:
            yield s
    finally:
        _lib.rmmh_cupy_set_stream(previous, was_set.value)


def __getattr__(name):
    if name in _NEED_CUPY and cupy is None:
        raise AttributeError("module %r has no attribute %r without CuPy (No module named 'cupy')" % (__name__, name))
    if name == "rmm_cupy_fast_allocator":
        fast_allocator()
        return _fast_malloc
    if name == "OutOfMemoryError":
        return _oom_type()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
