"""rmm.pylibrmm.memory_resource.experimental: CudaAsyncManagedMemoryResource (also
rmmh.mr.experimental)."""
from ...mr.experimental import CudaAsyncManagedMemoryResource, __all__  # noqa: F401
