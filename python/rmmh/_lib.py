"""Loads the native library (librmmh.so or librmmh_host.so) and declares its functions for ctypes.

RMMH_BACKEND selects the library: "cuda" (the default) or "host" (rmm.h's host backend: "device"
memory is host memory, no GPU or CUDA needed). Importing rmmh never initializes CUDA; the first
call that needs a device does.

Everything that touches a C pointer goes through here. The hot functions (alloc, free) are bound
once with c_void_p argument types, which measured fastest among the ctypes calling conventions;
the optional accelerator (_accel) replaces them when it was built (see README, "ctypes or an
extension").
"""
import ctypes
import operator
import os
import threading
from contextlib import contextmanager

from ._errors import (
    INVALID_ARGUMENT,
    NegativeSizeError,
    OutOfMemoryError,
    RMMRuntimeError,
    error_for,
)

_HERE = os.path.dirname(os.path.abspath(__file__))
ABI_VERSION = 12

_requested = (os.environ.get("RMMH_BACKEND") or "cuda").strip().lower()
if _requested not in ("cuda", "host"):
    raise ImportError("rmmh: RMMH_BACKEND=%r is not one of 'cuda' (the default) or 'host'"
                      % _requested)
BACKEND = _requested
LIBRARY_PATH = os.path.join(_HERE, "librmmh.so" if BACKEND == "cuda" else "librmmh_host.so")
if not os.path.isfile(LIBRARY_PATH):
    if BACKEND == "cuda" and os.path.isfile(os.path.join(_HERE, "librmmh_host.so")):
        raise ImportError(
            "rmmh was built without the CUDA toolkit, so only its host backend exists. Set "
            "RMMH_BACKEND=host to use it (no GPU: \"device\" memory is host memory), or install the "
            "CUDA toolkit (CUDA_HOME, default /usr/local/cuda) and reinstall rmmh.")
    raise ImportError("rmmh: %s is missing; build it with `make python` or reinstall rmmh"
                      % LIBRARY_PATH)

lib = ctypes.CDLL(LIBRARY_PATH)
if lib.rmmh_abi_version() != ABI_VERSION:
    raise ImportError("rmmh: %s has helper ABI %d, this package expects %d; rebuild it"
                      % (LIBRARY_PATH, lib.rmmh_abi_version(), ABI_VERSION))

V = ctypes.c_void_p
S = ctypes.c_size_t
I = ctypes.c_int
B = ctypes.c_bool
P = ctypes.POINTER
VP = P(ctypes.c_void_p)


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = argtypes
    return f


# errors
rmm_last_error = _fn("rmm_last_error", ctypes.c_char_p)
rmm_last_status = _fn("rmm_last_status", I)
rmm_last_cuda_error = _fn("rmm_last_cuda_error", I)  # the CUDA error number of a CUDA call's own failure, else 0
rmm_status_string = _fn("rmm_status_string", ctypes.c_char_p, I)
rmm_set_last_error = _fn("rmm_set_last_error", I, I, ctypes.c_char_p)

# hot path: every argument a c_void_p (sizes too), which ctypes converts fastest
alloc = _fn("rmmh_alloc", V, V, V, V)                 # (mr, bytes, stream) -> ptr or None
free = _fn("rmmh_free", I, V, V, V, V, I)             # (mr, ptr, bytes, stream, device) -> status
last_failure_reentered = _fn("rmmh_last_failure_reentered", I)  # see rmmh._lifetime.defer_free

# resources
rmm_resource_destroy = _fn("rmm_resource_destroy", None, V)
rmmh_resource_destroy = _fn("rmmh_resource_destroy", I, V)  # 1: kept by rmm.h (see rmmh.c)
rmmh_hook_failures = _fn("rmmh_hook_failures", ctypes.c_ulong)  # (see rmmh_hooks.c)
rmmh_alloc_calls = _fn("rmmh_alloc_calls", ctypes.c_ulong)  # (see rmmh.c)
rmm_resource_type_name = _fn("rmm_resource_type_name", ctypes.c_char_p, V)
rmm_resource_is_equal = _fn("rmm_resource_is_equal", B, V, V)
rmm_resource_validate = _fn("rmm_resource_validate", I, V)
rmm_allocate_aligned = _fn("rmm_allocate_aligned", I, V, VP, S, S, V)
rmm_deallocate_aligned = _fn("rmm_deallocate_aligned", I, V, V, S, S, V)
rmm_cuda_resource_create = _fn("rmm_cuda_resource_create", I, VP)
rmm_managed_resource_create = _fn("rmm_managed_resource_create", I, VP)
rmm_pinned_host_resource_create = _fn("rmm_pinned_host_resource_create", I, VP)
rmm_async_view_resource_create = _fn("rmm_async_view_resource_create", I, VP, V)
rmm_async_managed_resource_create = _fn("rmm_async_managed_resource_create", I, VP)
rmm_async_resource_get_pool = _fn("rmm_async_resource_get_pool", I, V, VP)
rmmh_async_create = _fn("rmmh_async_create", I, VP, S, S, I)
rmmh_async_pinned_create = _fn("rmmh_async_pinned_create", I, VP, S, S)
rmmh_system_resource_create = _fn("rmmh_system_resource_create", I, VP)
rmmh_pool_create = _fn("rmmh_pool_create", I, VP, V, S, S, I, S, I, S, S)
rmmh_pool_info = _fn("rmmh_pool_info", I, V, P(S))
rmmh_pool_conf = _fn("rmmh_pool_conf", I, ctypes.c_char_p, P(S))
rmm_pool_set_maximum = _fn("rmm_pool_set_maximum", I, V, S)
rmm_limiting_set_limit = _fn("rmm_limiting_set_limit", I, V, S)
rmm_pool_trim = _fn("rmm_pool_trim", I, V, P(S))
rmm_pool_validate = _fn("rmm_pool_validate", I, V)
rmmh_fixed_size_create = _fn("rmmh_fixed_size_create", I, VP, V, S, S)
rmmh_binning_create = _fn("rmmh_binning_create", I, VP, V, I, I)
rmm_binning_add_bin = _fn("rmm_binning_add_bin", I, V, S, V)
rmmh_arena_create = _fn("rmmh_arena_create", I, VP, V, S, S, I)

# adaptors
rmm_logging_adaptor_create = _fn("rmm_logging_adaptor_create", I, VP, V, ctypes.c_char_p, B)
rmm_logging_adaptor_flush = _fn("rmm_logging_adaptor_flush", I, V)
rmm_statistics_adaptor_create = _fn("rmm_statistics_adaptor_create", I, VP, V)
rmmh_statistics_get = _fn("rmmh_statistics_get", I, V, P(ctypes.c_int64))
rmm_statistics_push = _fn("rmm_statistics_push", I, V)
rmmh_statistics_pop = _fn("rmmh_statistics_pop", I, V, P(ctypes.c_int64))
rmm_tracking_adaptor_create = _fn("rmm_tracking_adaptor_create", I, VP, V, B)
rmm_tracking_get = _fn("rmm_tracking_get", I, V, P(S), P(S))
rmmh_tracking_report = _fn("rmmh_tracking_report", V, V)
rmmh_free_string = _fn("rmmh_free_string", None, V)
rmm_limiting_adaptor_create = _fn("rmm_limiting_adaptor_create", I, VP, V, S)
rmm_limiting_get = _fn("rmm_limiting_get", I, V, P(S), P(S))
# The Python callbacks answer through an out-pointer that rmmh.c sets to the safe answer first (no
# retry; a failed allocation): where ctypes cannot call the Python function at all (a
# RecursionError on entry) it leaves a returned value unset, and rmm.h would read garbage.
FAILURE_CALLBACK = ctypes.CFUNCTYPE(None, S, P(I))  # (nbytes, retry out)
rmmh_failure_callback_adaptor_create = _fn("rmmh_failure_callback_adaptor_create", I, VP, V,
                                           FAILURE_CALLBACK)
rmm_aligned_adaptor_create = _fn("rmm_aligned_adaptor_create", I, VP, V, S, S)
rmm_thread_safe_adaptor_create = _fn("rmm_thread_safe_adaptor_create", I, VP, V)
rmm_prefetch_adaptor_create = _fn("rmm_prefetch_adaptor_create", I, VP, V)
ALLOCATE_CALLBACK = ctypes.CFUNCTYPE(None, VP, S, V, P(I))  # (ptr out, nbytes, stream, status out)
DEALLOCATE_CALLBACK = ctypes.CFUNCTYPE(None, V, S, V, V)
rmmh_callback_resource_create = _fn("rmmh_callback_resource_create", I, VP, ALLOCATE_CALLBACK,
                                    DEALLOCATE_CALLBACK)

# per-device table and devices
rmm_get_per_device_resource = _fn("rmm_get_per_device_resource", V, I)
rmm_set_per_device_resource = _fn("rmm_set_per_device_resource", V, I, V)
rmm_available_device_memory = _fn("rmm_available_device_memory", I, P(S), P(S))
rmm_percent_of_free_device_memory = _fn("rmm_percent_of_free_device_memory", S, I)
rmmh_get_device = _fn("rmmh_get_device", I)
rmmh_device_count = _fn("rmmh_device_count", I)
rmm_set_device = _fn("rmm_set_device", I, I)
rmmh_runtime_version = _fn("rmmh_runtime_version", I)
rmmh_driver_version = _fn("rmmh_driver_version", I)
rmmh_device_attribute = _fn("rmmh_device_attribute", I, I, I, P(I), P(I))
rmmh_set_host_capacity = _fn("rmmh_set_host_capacity", I, S)
rmmh_backend = _fn("rmmh_backend", ctypes.c_char_p)
rmmh_rmm_version = _fn("rmmh_rmm_version", ctypes.c_char_p)

# streams and copies
rmm_stream_create = _fn("rmm_stream_create", I, VP)
rmmh_stream_create = _fn("rmmh_stream_create", I, VP, I)
rmm_stream_destroy = _fn("rmm_stream_destroy", I, V)
rmm_stream_synchronize = _fn("rmm_stream_synchronize", I, V)
rmm_stream_pool_create = _fn("rmm_stream_pool_create", I, VP, S)
rmm_stream_pool_get = _fn("rmm_stream_pool_get", V, V)
rmm_stream_pool_get_at = _fn("rmm_stream_pool_get_at", V, V, S)
rmm_stream_pool_size = _fn("rmm_stream_pool_size", S, V)
rmm_stream_pool_destroy = _fn("rmm_stream_pool_destroy", None, V)
rmm_memcpy_async = _fn("rmm_memcpy_async", I, V, V, S, V)
rmm_record_stream = _fn("rmm_record_stream", I, V, V, S, V)
rmm_graph_pool_create = _fn("rmm_graph_pool_create", I, VP, V, S)
rmm_capture_begin = _fn("rmm_capture_begin", I, V, V)
rmm_capture_end = _fn("rmm_capture_end", I, V, V)
rmm_graph_pool_get_info = _fn("rmm_graph_pool_get_info", I, V, P(S), P(S))
rmm_graph_pool_destroy = _fn("rmm_graph_pool_destroy", I, V)
rmm_graph_pools_pending = _fn("rmm_graph_pools_pending", S, V)  # released, memory not yet returned
rmm_memset_async = _fn("rmm_memset_async", I, V, I, S, V)
rmmh_prefetch = _fn("rmmh_prefetch", I, V, S, I, V)

# frameworks' hooks (src/rmmh_hooks.c): the C entry points PyTorch and CuPy call are found by
# name in this same library (rmmh.allocators); these are what Python needs around them
rmmh_hooks_outstanding = _fn("rmmh_hooks_outstanding", ctypes.c_long, V)
rmmh_hooks_stats = _fn("rmmh_hooks_stats", I, I, P(ctypes.c_int64))
rmmh_hooks_reset_peak = _fn("rmmh_hooks_reset_peak", I, I)
rmmh_hooks_live_blocks = _fn("rmmh_hooks_live_blocks", S)
rmmh_hooks_map_bytes = _fn("rmmh_hooks_map_bytes", S)
rmmh_hooks_lookup = _fn("rmmh_hooks_lookup", I, V, P(S), P(I), VP)
rmmh_cupy_set_stream = _fn("rmmh_cupy_set_stream", None, V, I)
rmmh_cupy_get_stream = _fn("rmmh_cupy_get_stream", V, P(I))
rmmh_cupy_set_default_stream = _fn("rmmh_cupy_set_default_stream", None, V)
rmmh_cupy_fail_next = _fn("rmmh_cupy_fail_next", None)
rmmh_cupy_probe_next = _fn("rmmh_cupy_probe_next", None)
rmmh_hooks_settle = _fn("rmmh_hooks_settle", S, V)
rmmh_cupy_configure_errors = _fn("rmmh_cupy_configure_errors", I, I, V, V, V, V)
rmmh_configure_gil = _fn("rmmh_configure_gil", I, V, V, V, V)
# a hook called with the GIL held (CuPy's always are) releases it where the resource would wait
# (src/rmmh_hooks.c, rmmh__allocate): CPython's functions, handed over once; the GIL is held where
# the current thread state (PyThreadState_GetUnchecked from 3.13, earlier
# _PyThreadState_UncheckedGet) is this thread's; without them the hooks call the resource
# directly, as before
_current = getattr(ctypes.pythonapi, "PyThreadState_GetUnchecked", None) or \
    getattr(ctypes.pythonapi, "_PyThreadState_UncheckedGet", None)
_gil_status = rmmh_configure_gil(
    ctypes.cast(_current, V).value,
    ctypes.cast(ctypes.pythonapi.PyGILState_GetThisThreadState, V).value,
    ctypes.cast(ctypes.pythonapi.PyEval_SaveThread, V).value,
    ctypes.cast(ctypes.pythonapi.PyEval_RestoreThread, V).value) if _current is not None else 0
if _gil_status:
    raise ImportError("rmmh: rmmh_configure_gil failed (%d)" % _gil_status)
del _gil_status, _current

# CUDA IPC (src/rmmh_hooks.c; NOT_SUPPORTED on the host backend)
rmm_resource_allocation_base = _fn("rmm_resource_allocation_base", I, V, V, VP, P(S))
IPC_BYTES = 64
IPC_BUFFER = ctypes.c_ubyte * IPC_BYTES
rmmh_ipc_get_mem_handle = _fn("rmmh_ipc_get_mem_handle", I, V, IPC_BUFFER)
rmmh_ipc_open_mem_handle = _fn("rmmh_ipc_open_mem_handle", I, IPC_BUFFER, VP)
rmmh_ipc_close_mem_handle = _fn("rmmh_ipc_close_mem_handle", I, V)
rmmh_mempool_export_fd = _fn("rmmh_mempool_export_fd", I, V, P(I))
rmmh_mempool_import_fd = _fn("rmmh_mempool_import_fd", I, I, VP)
rmmh_mempool_export_pointer = _fn("rmmh_mempool_export_pointer", I, V, IPC_BUFFER)
rmmh_mempool_import_pointer = _fn("rmmh_mempool_import_pointer", I, V, IPC_BUFFER, VP)
rmmh_imported_free = _fn("rmmh_imported_free", I, V)
rmmh_mempool_destroy = _fn("rmmh_mempool_destroy", I, V)

# debug log
rmm_set_log_level = _fn("rmm_set_log_level", I, I)
rmm_get_log_level = _fn("rmm_get_log_level", I)
rmm_flush_log = _fn("rmm_flush_log", None)

# the 2019 API
class RmmOptions(ctypes.Structure):
    """rmmOptions_t: the 2019 API's options (a public struct of rmm.h)."""
    _fields_ = [("allocation_mode", I), ("initial_pool_size", S), ("enable_logging", B)]


rmmInitialize = _fn("rmmInitialize", I, P(RmmOptions))
rmmFinalize = _fn("rmmFinalize", I)
rmmIsInitialized = _fn("rmmIsInitialized", B, P(RmmOptions))
rmmAlloc = _fn("rmmAlloc", I, VP, S, V, ctypes.c_char_p, ctypes.c_uint)
rmmFree = _fn("rmmFree", I, V, V, ctypes.c_char_p, ctypes.c_uint)
rmmGetInfo = _fn("rmmGetInfo", I, P(S), P(S), V)
rmmGetAllocationOffset = _fn("rmmGetAllocationOffset", I, P(ctypes.c_ssize_t), V, V)
rmmWriteLog = _fn("rmmWriteLog", I, ctypes.c_char_p)

assert rmmh_backend().decode() == BACKEND

# ---- errors ------------------------------------------------------------------------------

_tls = threading.local()


def set_pending(exc, status):
    """Keeps an exception raised by a Python callback (CallbackMemoryResource, a failure
    callback) that C called, with the status the call into C fails with because of it: the
    failing call that follows on this thread re-raises it if it fails with that status, if no
    framework hook (PyTorch, CuPy) has failed on the thread since (the exception was then that
    hook call's, which nobody in Python reads: rmmh_hook_failures), and if no allocation call has
    begun on the thread since (the call under way succeeded all the same, a pool retrying a
    smaller growth: rmmh_alloc_calls). (So an allocation that a finalizer makes in between, a
    rare case, turns the callback's exception into rmm.h's own error for the failure.)"""
    _tls.pending = (exc, status, rmmh_hook_failures(), rmmh_alloc_calls())


def clear_pending():
    """Drops a kept callback exception: a later callback call succeeded, so rmm.h recovered
    from the failure (a pool retrying a smaller growth, a failure callback's retry)."""
    _tls.pending = None


def stash_pending():
    """Takes the kept callback exception (with its status) off this thread, or None: a callback
    that makes rmmh calls of its own sets it aside so that a failure of theirs does not take it.
    Kept again with restore_pending."""
    pending = getattr(_tls, "pending", None)
    _tls.pending = None
    return pending


def restore_pending(pending):
    """Keeps again what stash_pending took (None: nothing), for the call under way now (the
    calls made meanwhile, by a failure callback, do not make it stale)."""
    if pending is not None:
        _tls.pending = (pending[0], pending[1], rmmh_hook_failures(), rmmh_alloc_calls())


def _take_pending(status, hook_failures_since=0):
    """The kept exception if the failing status is the one it was kept with, no allocation call
    has begun on the thread since, and exactly hook_failures_since hook calls have failed on the
    thread since, else None; the slot is empty afterwards either way (an exception kept for
    another failure is stale)."""
    pending = getattr(_tls, "pending", None)
    if pending is None:
        return None
    _tls.pending = None
    exc, kept_status, hook_failures, alloc_calls = pending
    if alloc_calls is None:  # kept by a callback at the recursion limit, where it could not read
        # the counts (CallbackMemoryResource's allocate): the next failure with its status takes it
        return exc if kept_status == status else None
    if kept_status != status or alloc_calls != rmmh_alloc_calls():
        return None
    return exc if hook_failures + hook_failures_since == rmmh_hook_failures() else None


def take_hook_pending(status):
    """The kept callback exception if it was kept, with this status, during the hook call on this
    thread that failed last and no hook call has failed since (CuPy's fast path builds its error
    right after the hook returns), else None; the slot is empty afterwards either way."""
    pending = _take_pending(status, hook_failures_since=1)
    return None if pending is None else _translate_callback_error(pending)


def _translate_callback_error(exc):
    """RMM's rule for exceptions escaping a callback: MemoryError and RuntimeError (and
    KeyboardInterrupt, SystemExit) propagate as they are; anything else becomes a RuntimeError
    with the same message, chained to the original."""
    if isinstance(exc, (MemoryError, RuntimeError, KeyboardInterrupt, SystemExit)):
        return exc
    err = RMMRuntimeError("RMM_ERROR_UNKNOWN", str(exc))
    err.__cause__ = exc
    return err


def last_error():
    return (rmm_last_error() or b"").decode("utf-8", "replace")


def error(status, what=None, allocation=False):
    """The exception for a failed call: the callback exception kept on this thread (set_pending)
    when it was kept with this status, else the status's class with rmm_last_error()'s message
    (prefixed by `what` when given). A kept exception is dropped either way. With allocation
    (the call allocated), a CUDA error is a MemoryError too (CUDAAllocationError), as in RMM."""
    pending = _take_pending(status)
    if pending is not None:
        return _translate_callback_error(pending)
    msg = last_error()
    if what:
        msg = "%s: %s" % (what, msg) if msg else what
    return error_for(status, msg, allocation)


def check(status, what=None):
    if status:
        raise error(status, what)


def created(create, *args, what=None):
    """Calls an rmm_X_create(&out, ...) function; returns the new resource pointer or raises."""
    clear_pending()  # (a create's upstream allocation is no rmmh_alloc: an older one is stale)
    out = ctypes.c_void_p()
    st = create(ctypes.byref(out), *args)
    if st:
        raise error(st, what)
    return out.value


def error_for_destroyed(obj, what=None):
    """The error of a call on obj (a resource, a Stream, a CudaStreamPool) whose C object, `what`
    (default: its C stream for a Stream, else its C resource), is gone (its finalizer ran)."""
    if what is None:
        from ._stream import Stream  # (a late import: _stream imports this module)
        what = "C stream" if isinstance(obj, Stream) else "C resource"
    return RMMRuntimeError("RMM_ERROR_UNKNOWN", "%s: its %s was already destroyed (the "
                           "object was finalized, e.g. collected in a reference cycle)"
                           % (type(obj).__name__, what))


def out_of_memory(message):
    return OutOfMemoryError("RMM_ERROR_OUT_OF_MEMORY", message)


# ---- argument checks ---------------------------------------------------------------------

SIZE_MAX = (1 << 64) - 1


def _index(value, name):
    """operator.index(value): an int, or TypeError (also for an __index__ returning a non-int)."""
    if value.__class__ is int:
        return value
    if not hasattr(type(value), "__index__"):
        raise TypeError("%s must be an integer, not %s" % (name, type(value).__name__))
    return operator.index(value)


def as_size(value, name="size"):
    """An int in 0 .. 2**64-1 (RMM's size_t): TypeError for non-integers (and for an __index__
    that returns a non-int), NegativeSizeError (an OverflowError and a ValueError) below 0,
    OverflowError above."""
    v = _index(value, name)
    if v < 0:
        raise NegativeSizeError("%s must not be negative (got %d)" % (name, v))
    if v > SIZE_MAX:
        raise OverflowError("%s %d does not fit in size_t" % (name, v))
    return v


def as_pointer(value, name="ptr"):
    """An address: an int in 0 .. 2**64-1."""
    return as_size(value, name)


def as_int(value, name):
    """An int in -2**31 .. 2**31-1 (a C int): TypeError for non-integers, OverflowError
    outside."""
    v = _index(value, name)
    if not -(1 << 31) <= v < (1 << 31):
        raise OverflowError("%s %d does not fit in int" % (name, v))
    return v


def invalid(message):
    return error_for(INVALID_ARGUMENT, message)


# ---- host buffers ------------------------------------------------------------------------

class _PyBuffer(ctypes.Structure):
    """CPython's Py_buffer (part of the stable ABI since 3.11, unchanged since 3.3)."""
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int),
                ("ndim", ctypes.c_int), ("format", ctypes.c_char_p),
                ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


_PyObject_GetBuffer = ctypes.pythonapi.PyObject_GetBuffer
_PyObject_GetBuffer.argtypes = (ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int)
_PyObject_GetBuffer.restype = ctypes.c_int
_PyBuffer_Release = ctypes.pythonapi.PyBuffer_Release
_PyBuffer_Release.argtypes = (ctypes.POINTER(_PyBuffer),)
_PyBuffer_Release.restype = None
_PyBUF_WRITABLE = 0x0001
_PyBUF_FORMAT = 0x0004
_PyBUF_C_CONTIGUOUS = 0x0038

PyBytes_FromStringAndSize = ctypes.pythonapi.PyBytes_FromStringAndSize
PyBytes_FromStringAndSize.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t)
PyBytes_FromStringAndSize.restype = ctypes.py_object
PyBytes_AsString = ctypes.pythonapi.PyBytes_AsString
PyBytes_AsString.argtypes = (ctypes.py_object,)
PyBytes_AsString.restype = ctypes.c_void_p


# RMM's type for host buffers is Cython's unsigned char[::1], which takes one-byte items of format
# B, c or ? (a review's find: ctypes.create_string_buffer's 'c' was refused); here with any
# byte-order prefix (Cython refuses a non-native one, which means nothing for one byte); not b
# (signed), not wider items, not objects
_BYTE_FORMATS = (None,) + tuple(p + c for p in (b"", b"@", b"=", b"<", b">", b"!") for c in (b"B", b"c", b"?"))


@contextmanager
def host_buffer(obj, writable=False, name="buffer", bytes_1d=False):
    """(address, nbytes) of a C-contiguous buffer-protocol object, held for the block.

    TypeError if obj does not support the buffer protocol (or is None), ValueError if it is not
    C-contiguous or, with writable, read-only, or, with bytes_1d (RMM's rule for to_device and
    the host copies), not one-dimensional unsigned bytes (format "B", "c" or "?", as Cython's
    unsigned char[::1])."""
    if obj is None or isinstance(obj, str):
        raise TypeError("%s must be a bytes-like object (a buffer), not %s"
                        % (name, type(obj).__name__))
    view = _PyBuffer()
    flags = _PyBUF_C_CONTIGUOUS | (_PyBUF_WRITABLE if writable else 0) | \
        (_PyBUF_FORMAT if bytes_1d else 0)
    try:
        _PyObject_GetBuffer(obj, ctypes.byref(view), flags)
    except BufferError as e:
        raise ValueError("%s: %s (a C-contiguous%s buffer is needed)"
                         % (name, e, " writable" if writable else "")) from None
    try:
        if bytes_1d and (view.ndim != 1 or view.format not in _BYTE_FORMATS):
            raise ValueError(
                "%s must be a one-dimensional buffer of unsigned bytes (format 'B', 'c' or '?', "
                "as RMM requires), not %d-dimensional with format %r; pass e.g. "
                "memoryview(%s).cast('B') or a NumPy array's .ravel().view('u1')"
                % (name, view.ndim, (view.format or b"B").decode("ascii", "replace"), name))
        yield view.buf or 0, view.len
    finally:
        _PyBuffer_Release(ctypes.byref(view))
