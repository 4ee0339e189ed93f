"""Exceptions: RMM's rmm.RMMError, and one subclass per rmm.h status.

RMM 26 raises MemoryError for out-of-memory (C++ bad_alloc) and RuntimeError for most other
failures (C++ logic_error and cuda_error). rmmh keeps both contracts and adds a common base, so
that code written for RMM catches what it caught before and new code can catch RMMError:

    RMMError(Exception)                      base; .errcode (status name), .status (int)
      OutOfMemoryError(RMMError, MemoryError)          RMM_ERROR_OUT_OF_MEMORY
      RMMRuntimeError(RMMError, RuntimeError)          CUDA, IO, UNKNOWN, NOT_INITIALIZED
        CUDAError                                      RMM_ERROR_CUDA
          CUDAAllocationError(..., MemoryError)        RMM_ERROR_CUDA from an allocation
        CorruptionError                                RMM_ERROR_CORRUPTION (bad free, broken invariant)
        InvalidArgumentError(..., ValueError)          RMM_ERROR_INVALID_ARGUMENT
        NotSupportedError(..., NotImplementedError)    RMM_ERROR_NOT_SUPPORTED

An allocation that fails for any CUDA error (a destroyed memory pool, say, not only out of memory)
is a MemoryError, as in RMM (whose allocations throw rmm::bad_alloc for every CUDA error):
CUDAAllocationError, which is also a CUDAError.

InvalidArgumentError is both a ValueError (what Python code expects for a bad argument) and a
RuntimeError (what RMM raises for the same argument checks done in C++, e.g. an initial pool
size above the maximum). Two argument errors are two builtin exceptions at once for the same
reason, RMM's type and Python's: NegativeSizeError (OverflowError, ValueError) and TypestrError
(TypeError, ValueError).
"""

STATUS_NAMES = {
    0: "RMM_SUCCESS",
    1: "RMM_ERROR_CUDA",
    2: "RMM_ERROR_INVALID_ARGUMENT",
    3: "RMM_ERROR_NOT_INITIALIZED",
    4: "RMM_ERROR_OUT_OF_MEMORY",
    5: "RMM_ERROR_UNKNOWN",
    6: "RMM_ERROR_IO",
    7: "RMM_ERROR_NOT_SUPPORTED",
    8: "RMM_ERROR_CORRUPTION",
}
SUCCESS, CUDA, INVALID_ARGUMENT, NOT_INITIALIZED, OUT_OF_MEMORY, UNKNOWN, IO, NOT_SUPPORTED, \
    CORRUPTION = range(9)


class RMMError(Exception):
    """Base of every error rmmh raises for a failing rmm.h call (RMM's ``rmm.RMMError``).

    ``errcode`` is the status name (``"RMM_ERROR_CUDA"``), ``status`` its number; the message is
    rmm.h's ``rmm_last_error()``: which call failed, the CUDA error and the sizes.
    """

    def __init__(self, errcode, msg=""):
        self.errcode = errcode
        self.status = next((k for k, v in STATUS_NAMES.items() if v == errcode), None) \
            if isinstance(errcode, str) else errcode
        super().__init__(msg)

    def __reduce__(self):
        # the message through pickle and copy: Exception's own reduce passes args, (msg,), to
        # __init__(errcode, msg), which lost it (a red team's find, 2026-11-29: an out-of-memory
        # error from a worker process arrived as OutOfMemoryError('')); a user's subclass with
        # an __init__ of its own keeps Exception's
        if type(self).__init__ is not RMMError.__init__:
            return super().__reduce__()
        return (type(self), (self.errcode, str(self)), self.__dict__)


class OutOfMemoryError(RMMError, MemoryError):
    """Device memory, a pool maximum or a limit is exhausted. A MemoryError, as in RMM."""


class RMMRuntimeError(RMMError, RuntimeError):
    """A failure RMM reports as RuntimeError."""


class CUDAError(RMMRuntimeError):
    """A CUDA call failed for a reason other than memory."""


class CUDAAllocationError(CUDAError, MemoryError):
    """An allocation CUDA refused for a reason other than memory (a memory pool destroyed under
    a CudaAsyncViewMemoryResource, a failed context). A MemoryError, as RMM raises for every
    failed allocation, and a CUDAError."""


class CorruptionError(RMMRuntimeError):
    """A free of memory the resource does not own, a double free, or a broken invariant."""


class InvalidArgumentError(RMMRuntimeError, ValueError):
    """An argument rmm.h rejected. Both a ValueError and, as in RMM, a RuntimeError."""


class NotSupportedError(RMMRuntimeError, NotImplementedError):
    """Compiled out, or not supported by this device, driver or backend."""


class NegativeSizeError(OverflowError, ValueError):
    """A negative size: RMM raises OverflowError (size_t), Python code expects ValueError."""


class NotInitializedError(TypeError, AttributeError):
    """An object of rmmh's made by ``__new__`` alone, whose ``__init__`` (which makes its C object)
    never ran. An AttributeError too, so that ``getattr(obj, name, default)`` still answers."""


def not_initialized(obj):
    """The NotInitializedError for obj."""
    name = type(obj).__name__
    return NotInitializedError("%s was never initialized: the rmmh __init__ that makes its C object "
                               "did not run on it (e.g. an object made by __new__ alone)" % name)


def init_guard(*names):
    """A __getattr__ for a class whose __init__ sets `names`: reading one of them unset (the object
    made by __new__ alone, or its __init__ failed) raises NotInitializedError, anything else the
    usual AttributeError. __getattr__ runs only when the normal lookup fails, but its presence
    makes CPython take the slower lookup for every attribute read of the class (2.5x on a slot,
    measured 2026-12-03): classes read on hot paths (Stream, CudaStreamPool,
    DeviceMemoryResource) check in their methods instead."""
    def __getattr__(self, name):
        if name in names:
            raise not_initialized(self)
        raise AttributeError("%r object has no attribute %r" % (type(self).__name__, name))
    return __getattr__


class TypestrError(TypeError, ValueError):
    """A CUDA Array Interface typestr that names no data type: RMM (numpy.dtype) raises
    TypeError, Python code checking a value expects ValueError."""


_BY_STATUS = {
    OUT_OF_MEMORY: OutOfMemoryError,
    CUDA: CUDAError,
    CORRUPTION: CorruptionError,
    INVALID_ARGUMENT: InvalidArgumentError,
    NOT_SUPPORTED: NotSupportedError,
}


def error_for(status, message, allocation=False):
    """The exception for an rmm_status and its message; with allocation, that of a failed
    allocation (a CUDA error is then a CUDAAllocationError, a MemoryError)."""
    cls = CUDAAllocationError if allocation and status == CUDA else \
        _BY_STATUS.get(status, RMMRuntimeError)
    return cls(STATUS_NAMES.get(status, "RMM_ERROR_%d" % status), message)
