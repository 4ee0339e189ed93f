"""rmm.pylibrmm.cuda_stream_pool: CudaStreamPool, a fixed set of streams handed out round robin."""
from .._stream import CudaStreamPool  # noqa: F401

__all__ = ["CudaStreamPool"]
