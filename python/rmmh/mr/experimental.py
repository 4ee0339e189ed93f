"""rmm.mr.experimental: RMM's experimental resources (may change in later RMM releases), and
rmm.h's stream-ordered pinned host pool, which RMM lacks."""
from .._memory_resource import CudaAsyncManagedMemoryResource, CudaAsyncPinnedMemoryResource  # noqa: F401

__all__ = ["CudaAsyncManagedMemoryResource", "CudaAsyncPinnedMemoryResource"]
