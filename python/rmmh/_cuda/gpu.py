"""rmm._cuda.gpu: device queries over rmm.h (no cuda-python needed).

Failures raise CUDARuntimeError (an rmmh.CUDAError) with rmm.h's message."""
import ctypes
import re

from .. import _lib
from .._errors import INVALID_ARGUMENT as _INVALID_ARGUMENT, CUDAError, InvalidArgumentError, \
    RMMError


class CUDARuntimeError(CUDAError):
    """A CUDA runtime call failed (RMM's rmm._cuda.gpu.CUDARuntimeError)."""

    def __init__(self, status, msg=""):
        super().__init__("RMM_ERROR_CUDA", msg)
        self.status = status

    def __reduce__(self):
        if type(self).__init__ is not CUDARuntimeError.__init__:  # (a subclass's own __init__)
            return super(CUDAError, self).__reduce__()
        return (type(self), (self.status, str(self)), self.__dict__)


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
# cudaError_t's names and numbers (CUDA 13's driver_types.h, every one): rmm.h's messages name the
# CUDA error; a name not here (a newer CUDA's), or none, reads as cudaErrorUnknown
_CUDA_ERRORS = {
    "cudaErrorInvalidValue": 1, "cudaErrorMemoryAllocation": 2, "cudaErrorInitializationError": 3,
    "cudaErrorCudartUnloading": 4, "cudaErrorProfilerDisabled": 5,
    "cudaErrorProfilerNotInitialized": 6, "cudaErrorProfilerAlreadyStarted": 7,
    "cudaErrorProfilerAlreadyStopped": 8, "cudaErrorInvalidConfiguration": 9,
    "cudaErrorInvalidPitchValue": 12, "cudaErrorInvalidSymbol": 13,
    "cudaErrorInvalidHostPointer": 16, "cudaErrorInvalidDevicePointer": 17,
    "cudaErrorInvalidTexture": 18, "cudaErrorInvalidTextureBinding": 19,
    "cudaErrorInvalidChannelDescriptor": 20, "cudaErrorInvalidMemcpyDirection": 21,
    "cudaErrorAddressOfConstant": 22, "cudaErrorTextureFetchFailed": 23,
    "cudaErrorTextureNotBound": 24, "cudaErrorSynchronizationError": 25,
    "cudaErrorInvalidFilterSetting": 26, "cudaErrorInvalidNormSetting": 27,
    "cudaErrorMixedDeviceExecution": 28, "cudaErrorNotYetImplemented": 31,
    "cudaErrorMemoryValueTooLarge": 32, "cudaErrorStubLibrary": 34,
    "cudaErrorInsufficientDriver": 35, "cudaErrorCallRequiresNewerDriver": 36,
    "cudaErrorInvalidSurface": 37, "cudaErrorDuplicateVariableName": 43,
    "cudaErrorDuplicateTextureName": 44, "cudaErrorDuplicateSurfaceName": 45,
    "cudaErrorDevicesUnavailable": 46, "cudaErrorIncompatibleDriverContext": 49,
    "cudaErrorMissingConfiguration": 52, "cudaErrorPriorLaunchFailure": 53,
    "cudaErrorLaunchMaxDepthExceeded": 65, "cudaErrorLaunchFileScopedTex": 66,
    "cudaErrorLaunchFileScopedSurf": 67, "cudaErrorSyncDepthExceeded": 68,
    "cudaErrorLaunchPendingCountExceeded": 69, "cudaErrorInvalidDeviceFunction": 98,
    "cudaErrorNoDevice": 100, "cudaErrorInvalidDevice": 101, "cudaErrorDeviceNotLicensed": 102,
    "cudaErrorSoftwareValidityNotEstablished": 103, "cudaErrorStartupFailure": 127,
    "cudaErrorInvalidKernelImage": 200, "cudaErrorDeviceUninitialized": 201,
    "cudaErrorMapBufferObjectFailed": 205, "cudaErrorUnmapBufferObjectFailed": 206,
    "cudaErrorArrayIsMapped": 207, "cudaErrorAlreadyMapped": 208,
    "cudaErrorNoKernelImageForDevice": 209, "cudaErrorAlreadyAcquired": 210,
    "cudaErrorNotMapped": 211, "cudaErrorNotMappedAsArray": 212,
    "cudaErrorNotMappedAsPointer": 213, "cudaErrorECCUncorrectable": 214,
    "cudaErrorUnsupportedLimit": 215, "cudaErrorDeviceAlreadyInUse": 216,
    "cudaErrorPeerAccessUnsupported": 217, "cudaErrorInvalidPtx": 218,
    "cudaErrorInvalidGraphicsContext": 219, "cudaErrorNvlinkUncorrectable": 220,
    "cudaErrorJitCompilerNotFound": 221, "cudaErrorUnsupportedPtxVersion": 222,
    "cudaErrorJitCompilationDisabled": 223, "cudaErrorUnsupportedExecAffinity": 224,
    "cudaErrorUnsupportedDevSideSync": 225, "cudaErrorContained": 226,
    "cudaErrorInvalidSource": 300, "cudaErrorFileNotFound": 301,
    "cudaErrorSharedObjectSymbolNotFound": 302, "cudaErrorSharedObjectInitFailed": 303,
    "cudaErrorOperatingSystem": 304, "cudaErrorInvalidResourceHandle": 400,
    "cudaErrorIllegalState": 401, "cudaErrorLossyQuery": 402, "cudaErrorSymbolNotFound": 500,
    "cudaErrorNotReady": 600, "cudaErrorIllegalAddress": 700, "cudaErrorLaunchOutOfResources": 701,
    "cudaErrorLaunchTimeout": 702, "cudaErrorLaunchIncompatibleTexturing": 703,
    "cudaErrorPeerAccessAlreadyEnabled": 704, "cudaErrorPeerAccessNotEnabled": 705,
    "cudaErrorSetOnActiveProcess": 708, "cudaErrorContextIsDestroyed": 709, "cudaErrorAssert": 710,
    "cudaErrorTooManyPeers": 711, "cudaErrorHostMemoryAlreadyRegistered": 712,
    "cudaErrorHostMemoryNotRegistered": 713, "cudaErrorHardwareStackError": 714,
    "cudaErrorIllegalInstruction": 715, "cudaErrorMisalignedAddress": 716,
    "cudaErrorInvalidAddressSpace": 717, "cudaErrorInvalidPc": 718, "cudaErrorLaunchFailure": 719,
    "cudaErrorCooperativeLaunchTooLarge": 720, "cudaErrorTensorMemoryLeak": 721,
    "cudaErrorNotPermitted": 800, "cudaErrorNotSupported": 801, "cudaErrorSystemNotReady": 802,
    "cudaErrorSystemDriverMismatch": 803, "cudaErrorCompatNotSupportedOnDevice": 804,
    "cudaErrorMpsConnectionFailed": 805, "cudaErrorMpsRpcFailure": 806,
    "cudaErrorMpsServerNotReady": 807, "cudaErrorMpsMaxClientsReached": 808,
    "cudaErrorMpsMaxConnectionsReached": 809, "cudaErrorMpsClientTerminated": 810,
    "cudaErrorCdpNotSupported": 811, "cudaErrorCdpVersionMismatch": 812,
    "cudaErrorStreamCaptureUnsupported": 900, "cudaErrorStreamCaptureInvalidated": 901,
    "cudaErrorStreamCaptureMerge": 902, "cudaErrorStreamCaptureUnmatched": 903,
    "cudaErrorStreamCaptureUnjoined": 904, "cudaErrorStreamCaptureIsolation": 905,
    "cudaErrorStreamCaptureImplicit": 906, "cudaErrorCapturedEvent": 907,
    "cudaErrorStreamCaptureWrongThread": 908, "cudaErrorTimeout": 909,
    "cudaErrorGraphExecUpdateFailure": 910, "cudaErrorExternalDevice": 911,
    "cudaErrorInvalidClusterSize": 912, "cudaErrorFunctionNotLoaded": 913,
    "cudaErrorInvalidResourceType": 914, "cudaErrorInvalidResourceConfiguration": 915,
    "cudaErrorUnknown": 999,
}


def _device_error(status, message):
    """The CUDARuntimeError for rmm.h's failed get or set of the device: its ``status`` is the
    cudaError_t, as RMM's (rmm.h's status 2, INVALID_ARGUMENT, read as a cudaError_t would be
    cudaErrorMemoryAllocation: red team 28)."""
    if status == _INVALID_ARGUMENT:
        return InvalidDeviceError(message)
    m = re.search(r"\bcudaError\w+", message)
    return CUDARuntimeError(_CUDA_ERRORS.get(m.group(0), 999) if m else 999, message)


def getDevice():
    """The current device. Raises CUDARuntimeError (``status``: the cudaError_t) on failure."""
    d = _lib.rmmh_get_device()
    if d < 0:
        raise _device_error(_lib.rmm_last_status(), _lib.last_error())
    return d


def setDevice(device):
    """Makes `device` current. A device that does not exist raises InvalidDeviceError (a
    CUDARuntimeError with ``status`` 101, cudaErrorInvalidDevice, and a ValueError); another
    failure CUDARuntimeError with the cudaError_t as ``status``."""
    st = _lib.rmm_set_device(_lib.as_int(device, "device"))
    if st:
        raise _device_error(st, _lib.last_error())


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
