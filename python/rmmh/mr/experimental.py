"""rmm.mr.experimental: RMM's experimental resources (may change in later RMM releases)."""
from .._memory_resource import CudaAsyncManagedMemoryResource  # noqa: F401

__all__ = ["CudaAsyncManagedMemoryResource"]
