"""RMM's rmm.pylibrmm namespace: the same objects as rmmh's top level, at RMM's import paths."""
from . import cuda_stream_pool, device_buffer, helper, logger, memory_resource, stream, utils  # noqa: F401
from .cuda_stream_pool import CudaStreamPool
from .device_buffer import DeviceBuffer
from .stream import CudaStreamFlags

__all__ = [
    "CudaStreamPool",
    "CudaStreamFlags",
    "DeviceBuffer",
    "memory_resource",
]
