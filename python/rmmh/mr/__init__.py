"""Memory resources and the per-device resource table (RMM's rmm.mr).

Every resource wraps one rmm.h resource; see rmmh._memory_resource for each class. The resources
rmmh adds beyond RMM's Python API are PoolMemoryResource's growth modes, trim() and info(),
AlignedResourceAdaptor and ThreadSafeResourceAdaptor. rmm.mr.experimental has
CudaAsyncManagedMemoryResource, as in RMM.
"""
from . import experimental  # noqa: F401  (rmm.mr.experimental.CudaAsyncManagedMemoryResource)
from .._memory_resource import (  # noqa: F401
    AlignedResourceAdaptor,
    ArenaMemoryResource,
    BinningMemoryResource,
    CallbackMemoryResource,
    CudaAsyncMemoryResource,
    CudaAsyncViewMemoryResource,
    CudaMemoryResource,
    DeviceMemoryResource,
    FailureCallbackResourceAdaptor,
    FixedSizeMemoryResource,
    LimitingResourceAdaptor,
    LoggingResourceAdaptor,
    ManagedMemoryResource,
    PinnedHostMemoryResource,
    PoolInfo,
    PoolMemoryResource,
    PrefetchResourceAdaptor,
    SamHeadroomMemoryResource,
    StatisticsResourceAdaptor,
    SystemMemoryResource,
    ThreadSafeResourceAdaptor,
    TrackingResourceAdaptor,
    UpstreamResourceAdaptor,
    __all__,
    _flush_logs,
    _initialize,
    available_device_memory,
    disable_logging,
    enable_logging,
    get_current_device_resource,
    get_current_device_resource_type,
    get_log_filenames,
    get_per_device_resource,
    get_per_device_resource_type,
    is_initialized,
    set_current_device_resource,
    set_per_device_resource,
)

__all__ = sorted(__all__ + ["experimental"])  # as RMM's rmm.mr.__all__ (a new list: _memory_resource's stays)
