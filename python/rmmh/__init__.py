"""rmmh: RAPIDS RMM's Python API over rmm.h. Switch with ``import rmmh as rmm``.

    import rmmh as rmm
    rmm.reinitialize(pool_allocator=True, initial_pool_size="1GiB")
    buf = rmm.DeviceBuffer(size=100)

RMMH_BACKEND=host in the environment selects rmm.h's host backend (no GPU needed: "device"
memory is host memory); the default is the CUDA backend. See the README's Python section for
what differs from RMM.
"""
from . import _lib
from ._errors import (  # noqa: F401
    CorruptionError,
    CUDAAllocationError,
    CUDAError,
    InvalidArgumentError,
    NotInitializedError,
    NotSupportedError,
    OutOfMemoryError,
    RMMError,
    RMMRuntimeError,
)
from ._stream import (  # noqa: F401
    DEFAULT_STREAM,
    LEGACY_DEFAULT_STREAM,
    PER_THREAD_DEFAULT_STREAM,
    CudaStreamFlags,
    Stream,
)
from . import statistics  # noqa: F401
from . import mr  # noqa: F401
from . import _device_buffer
from ._device_buffer import DeviceBuffer  # noqa: F401
from ._helpers import parse_bytes  # noqa: F401
from .graphs import GraphPool  # noqa: F401  (rmmh only: CUDA-graph capture)
from ._logger import (  # noqa: F401
    flush_logger,
    get_flush_level,
    get_logging_level,
    level_enum,
    logging_level,
    set_flush_level,
    set_logging_level,
    should_log,
)
from .mr import disable_logging, enable_logging, get_log_filenames  # noqa: F401
from . import _cuda, pylibrmm  # noqa: F401,E402  (RMM's import paths: rmm._cuda.gpu, ...)
from .rmm import (  # noqa: F401
    is_initialized,
    register_reinitialize_hook,
    reinitialize,
    unregister_reinitialize_hook,
)

# the RMM API level it follows (26.10), then rmmh's own version: for code that checks rmm.__version__
from ._version import __git_commit__, __version__  # noqa: E402  (RMM's rmm._version)

#: "cuda" or "host": the native library this process loaded (RMMH_BACKEND).
BACKEND = _lib.BACKEND
#: rmm.h's version (the C library inside).
RMM_H_VERSION = _lib.rmmh_rmm_version().decode()


#: True when the optional C extension serves DeviceBuffer's constructor and deallocator and the
#: resources' allocate/deallocate; False when ctypes alone does (see README).
ACCELERATED = _device_buffer.ACCELERATED

__all__ = [
    "ACCELERATED",
    "BACKEND",
    "CUDAAllocationError",
    "CUDAError",
    "CorruptionError",
    "DEFAULT_STREAM",
    "DeviceBuffer",
    "GraphPool",
    "InvalidArgumentError",
    "LEGACY_DEFAULT_STREAM",
    "NotInitializedError",
    "NotSupportedError",
    "OutOfMemoryError",
    "PER_THREAD_DEFAULT_STREAM",
    "RMMError",
    "Stream",
    "disable_logging",
    "enable_logging",
    "flush_logger",
    "get_flush_level",
    "get_log_filenames",
    "get_logging_level",
    "install_as_rmm",
    "is_initialized",
    "level_enum",
    "logging_level",
    "mr",
    "register_reinitialize_hook",
    "reinitialize",
    "set_flush_level",
    "set_logging_level",
    "should_log",
    "statistics",
    "unregister_reinitialize_hook",
]


def install_as_rmm(force=False):
    """Makes `import rmm` and `import rmm.X` give rmmh and rmmh.X in this process; returns rmmh.
    Fails with ImportError iff another module named rmm is already imported, or, unless `force`,
    iff RAPIDS RMM is installed. Other processes: `python -m rmmh.as_rmm` (see rmmh/as_rmm.py)."""
    from .as_rmm import install_as_rmm as install  # on call: `python -m rmmh.as_rmm` runs it too
    return install(force=force)


def __getattr__(name):
    # the 2019 API loads Numba lazily, and only when asked for; the allocators and IPC on use
    if name in ("librmm_cffi", "allocators", "ipc"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'rmmh' has no attribute %r" % name)
