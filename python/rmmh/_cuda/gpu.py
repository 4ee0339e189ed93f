"""rmm._cuda.gpu: device queries over rmm.h (no cuda-python needed).

Failures raise CUDARuntimeError (an rmmh.CUDAError) with rmm.h's message."""
import ctypes

from .. import _lib
from .._errors import CUDAError


class CUDARuntimeError(CUDAError):
    """A CUDA runtime call failed (RMM's rmm._cuda.gpu.CUDARuntimeError)."""

    def __init__(self, status, msg=""):
        super().__init__("RMM_ERROR_CUDA", msg)
        self.status = status

    def __reduce__(self):
        if type(self).__init__ is not CUDARuntimeError.__init__:  # (a subclass's own __init__)
            return super(CUDAError, self).__reduce__()
        return (type(self), (self.status, str(self)), self.__dict__)


def getDevice():
    """The current device."""
    d = _lib.rmmh_get_device()
    if d < 0:
        raise CUDARuntimeError(_lib.rmm_last_status(), _lib.last_error())
    return d


def setDevice(device):
    """Makes `device` current."""
    st = _lib.rmm_set_device(_lib.as_int(device, "device"))
    if st:
        raise CUDARuntimeError(st, _lib.last_error())


def getDeviceCount():
    """The number of devices (0 without a usable GPU)."""
    return _lib.rmmh_device_count()


def getDeviceAttribute(attr, device):
    """The value (an int) of device attribute ``attr`` of ``device``: cudaDeviceGetAttribute.

    ``attr`` is a ``cuda.bindings.runtime.cudaDeviceAttr`` (or its int value, e.g. 89 for
    cudaDevAttrConcurrentManagedAccess). Raises CUDARuntimeError when CUDA refuses (an unknown
    attribute, a device that does not exist); its ``status`` is then the cudaError_t number.

    On the host backend the answer describes the simulated device (see rmmh_device_attribute in
    src/rmmh.c): memory pools supported, exporting POSIX file descriptors only (handle types 1);
    managed memory with concurrent managed access; unified addressing; compute capability 9.0;
    no pageable memory access; not integrated; any attribute not listed there is 0.
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
