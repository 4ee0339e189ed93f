"""rmm._cuda.gpu: device queries over rmm.h (no cuda-python needed).

Failures raise CUDARuntimeError (an rmmh.CUDAError) with rmm.h's message."""
import ctypes

from .. import _lib
from .._errors import INVALID_ARGUMENT as _INVALID_ARGUMENT, CUDAError, InvalidArgumentError, \
    NotSupportedError, RMMError


class _StatusError(CUDAError):
    """A failed CUDA call whose error number is ``status`` (the runtime's and the driver's errors).

    Made from the status alone (``CUDARuntimeError(status)``, RMM's constructor), the message is
    RMM's "<name>: <text>" (``_describe``); rmmh's own raises pass rmm.h's message as ``msg``."""

    def __init__(self, status, msg=""):
        super().__init__("RMM_ERROR_CUDA", msg or self._describe(status))
        self.status = status

    @staticmethod
    def _describe(status):
        return "CUDA error %s" % (status,)

    def __reduce__(self):
        if type(self).__init__ is not _StatusError.__init__:  # (a subclass's own __init__)
            return super(CUDAError, self).__reduce__()
        return (type(self), (self.status, str(self)), self.__dict__)


def _name_and_text(get_name, get_string, status):
    """"<name>: <text>" of ``status`` from cuda-python's pair of calls (cudaGetErrorName and
    cudaGetErrorString, or cuGetErrorName and cuGetErrorString), or None where either fails."""
    try:
        err, name = get_name(status)
        err2, text = get_string(status)
        if int(err) == 0 and int(err2) == 0:
            return "%s: %s" % (name.decode(), text.decode())
    except Exception:  # (no driver for the driver's pair: cuda-python cannot load libcuda)
        pass
    return None


def _enum_name(enum_type, status):
    """``status``'s name in cuda-python's ``enum_type`` (a cudaError_t or CUresult), or None."""
    try:
        return enum_type(int(status)).name
    except Exception:  # (an unknown number, a status that is no number)
        return None


class CUDARuntimeError(_StatusError):
    """A CUDA runtime call failed (RMM's rmm._cuda.gpu.CUDARuntimeError); ``status`` is the cudaError_t."""

    @staticmethod
    def _describe(status):
        """RMM's message, "cudaErrorMemoryAllocation: out of memory", through cuda-python's
        cudaGetErrorName and cudaGetErrorString (which need no GPU); without cuda-python, or for
        a number CUDA does not know, the number (RMM's constructor needs cuda-python, and raises
        for an unknown number)."""
        try:
            from cuda.bindings import runtime
        except ImportError:
            runtime = None
        words = None
        if runtime is not None and _enum_name(runtime.cudaError_t, status) is not None:  # (else "unrecognized error code")
            words = _name_and_text(runtime.cudaGetErrorName, runtime.cudaGetErrorString, status)
        return words or "CUDA runtime error %s (cudaError_t)" % (status,)


class CUDADriverError(_StatusError):
    """A CUDA driver call failed (RMM's rmm._cuda.gpu.CUDADriverError); ``status`` is the CUresult."""

    @staticmethod
    def _describe(status):
        """RMM's message, "CUDA_ERROR_INVALID_DEVICE: invalid device ordinal", through
        cuda-python's cuGetErrorName and cuGetErrorString, which need the driver; without it the
        CUresult's name alone (RMM's constructor raises there), and without cuda-python, or for
        a number CUDA does not know, the number."""
        try:
            from cuda.bindings import driver
        except ImportError:
            return "CUDA driver error %s (CUresult)" % (status,)
        return (_name_and_text(driver.cuGetErrorName, driver.cuGetErrorString, status)
                or _enum_name(driver.CUresult, status) or "CUDA driver error %s (CUresult)" % (status,))


class InvalidDeviceError(InvalidArgumentError, CUDARuntimeError):
    """A device ordinal that does not exist. rmm.h refuses it before any CUDA call
    (INVALID_ARGUMENT: a ValueError and a RuntimeError); RMM's setDevice raises CUDARuntimeError
    with cudaErrorInvalidDevice. Both, with ``status`` 101 (cudaErrorInvalidDevice)."""

    def __init__(self, msg=""):
        RMMError.__init__(self, "RMM_ERROR_INVALID_ARGUMENT", msg)
        self.status = CUDA_ERROR_INVALID_DEVICE

    def __reduce__(self):
        if type(self).__init__ is not InvalidDeviceError.__init__:
            return super(CUDAError, self).__reduce__()
        return (type(self), (str(self),), self.__dict__)


CUDA_ERROR_INVALID_DEVICE = 101
CUDA_ERROR_UNKNOWN = 999


def _device_error(status, message, cuda_error):
    """The CUDARuntimeError for rmm.h's failed get or set of the device: its ``status`` is the
    cudaError_t, as RMM's: rmm.h's rmm_last_cuda_error() (read just after the failure), or
    cudaErrorUnknown if the failure was not a CUDA call's own. rmm.h's status 2, INVALID_ARGUMENT
    (a device that does not exist, refused before any CUDA call), is InvalidDeviceError, 101: read
    as a cudaError_t it would be cudaErrorMemoryAllocation (red team 28). (Until 2026-11-30 the
    number was read from the error name in rmm.h's message, through a table of CUDA 13's names.)"""
    if status == _INVALID_ARGUMENT:
        return InvalidDeviceError(message)
    return CUDARuntimeError(cuda_error or CUDA_ERROR_UNKNOWN, message)


def getDevice():
    """The current device. Raises CUDARuntimeError (``status``: the cudaError_t) on failure."""
    d = _lib.rmmh_get_device()
    if d < 0:
        raise _device_error(_lib.rmm_last_status(), _lib.last_error(), _lib.rmm_last_cuda_error())
    return d


def setDevice(device):
    """Makes `device` current. A device that does not exist raises InvalidDeviceError (a
    CUDARuntimeError with ``status`` 101, cudaErrorInvalidDevice, and a ValueError); another
    failure CUDARuntimeError with the cudaError_t as ``status``."""
    st = _lib.rmm_set_device(_lib.as_int(device, "device"))
    if st:
        raise _device_error(st, _lib.last_error(), _lib.rmm_last_cuda_error())


def getDeviceCount():
    """The number of devices (0 without a usable GPU)."""
    return _lib.rmmh_device_count()


def getDeviceAttribute(attr, device):
    """The value (an int) of device attribute ``attr`` of ``device``: cudaDeviceGetAttribute.

    ``attr`` is a ``cuda.bindings.runtime.cudaDeviceAttr`` (or its int value, e.g. 89 for
    cudaDevAttrConcurrentManagedAccess). Raises CUDARuntimeError when CUDA refuses (an unknown
    attribute, a device that does not exist); its ``status`` is then the cudaError_t number.

    On the host backend the answer describes the simulated device (rmm.h's rmm__host_attributes,
    which rmmh_device_attribute in src/rmmh.c reads through rmm_device_get_attribute): an H100's
    limits (1024 threads a block, warp size 32, 132 multiprocessors, ...); memory pools supported,
    exporting POSIX file descriptors only (handle types 1); managed memory with concurrent managed
    access; unified addressing; compute capability 9.0; no pageable memory access; not
    integrated; any attribute not listed there is 0.
    """
    a = _lib.as_int(attr, "attr")
    d = _lib.as_int(device, "device")
    value, cuda_error = ctypes.c_int(), ctypes.c_int()
    st = _lib.rmmh_device_attribute(a, d, ctypes.byref(value), ctypes.byref(cuda_error))
    if st:
        raise CUDARuntimeError(cuda_error.value or st, _lib.last_error())
    return value.value


def runtimeGetVersion():
    """The CUDA runtime version linked into librmmh (0 on the host backend)."""
    return _lib.rmmh_runtime_version()


def driverGetVersion():
    """The driver's CUDA version (0 without a driver, and on the host backend)."""
    return _lib.rmmh_driver_version()


def _bindings(what):
    """cuda-python's driver and runtime modules, for the queries rmm.h does not make (RMM's own
    gpu module is built on them). NotSupportedError on the host backend and without cuda-python."""
    if _lib.BACKEND != "cuda":
        raise NotSupportedError("RMM_ERROR_NOT_SUPPORTED",
                                "rmm._cuda.gpu.%s: the host backend simulates no device properties" % what)
    try:
        from cuda.bindings import driver, runtime
    except ImportError as e:
        raise NotSupportedError("RMM_ERROR_NOT_SUPPORTED", "rmm._cuda.gpu.%s needs cuda-python (cuda.bindings), which RMM "
                                "depends on and rmmh does not: pip install cuda-python" % what) from e
    return driver, runtime


def getDeviceProperties(device):
    """``device``'s cudaDeviceProp (a ``cuda.bindings.runtime.cudaDeviceProp``), as RMM's. Needs
    cuda-python (NotSupportedError without it, and on the host backend); raises CUDARuntimeError
    (``status``: the cudaError_t) when CUDA refuses."""
    d = _lib.as_int(device, "device")
    _, runtime = _bindings("getDeviceProperties")
    status, prop = runtime.cudaGetDeviceProperties(d)
    if status != runtime.cudaError_t.cudaSuccess:
        raise CUDARuntimeError(int(status), "cudaGetDeviceProperties(%d): %s" % (d, status.name))
    return prop


def deviceGetName(device):
    """``device``'s name (a str, e.g. "NVIDIA H200"), as RMM's. Needs cuda-python
    (NotSupportedError without it, and on the host backend); raises CUDADriverError (``status``:
    the CUresult) when the driver refuses."""
    d = _lib.as_int(device, "device")
    driver, _ = _bindings("deviceGetName")
    (status,) = driver.cuInit(0)  # (the driver API's own start: rmmh makes no context at import; once per process, then a no-op)
    if status != driver.CUresult.CUDA_SUCCESS:
        raise CUDADriverError(int(status), "cuInit(0): %s" % status.name)
    status, name = driver.cuDeviceGetName(256, driver.CUdevice(d))
    if status != driver.CUresult.CUDA_SUCCESS:
        raise CUDADriverError(int(status), "cuDeviceGetName(%d): %s" % (d, status.name))
    return name.split(b"\0", 1)[0].decode()
