"""rmm._cuda.gpu: device queries over rmm.h (no cuda-python needed).

Failures raise CUDARuntimeError (an rmmh.CUDAError) with rmm.h's message."""
from .. import _lib
from .._errors import CUDAError


class CUDARuntimeError(CUDAError):
    """A CUDA runtime call failed (RMM's rmm._cuda.gpu.CUDARuntimeError)."""

    def __init__(self, status, msg=""):
        super().__init__("RMM_ERROR_CUDA", msg)
        self.status = status


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


def runtimeGetVersion():
    """The CUDA runtime version linked into librmmh (0 on the host backend)."""
    return _lib.rmmh_runtime_version()


def driverGetVersion():
    """The driver's CUDA version (0 without a driver, and on the host backend)."""
    return _lib.rmmh_driver_version()
