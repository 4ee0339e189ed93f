"""rmm.pylibrmm.cuda_stream: RMM keeps this module for code written before CudaStreamFlags and
CudaStream moved to rmm.pylibrmm.stream, and warns on import that it is deprecated; so does rmmh.
CudaStream is the stream class that owns its CUDA stream (rmm.pylibrmm.stream.CudaStream)."""
import warnings

from .stream import CudaStream, CudaStreamFlags  # noqa: F401

warnings.warn(
    "rmm.pylibrmm.cuda_stream is deprecated: import CudaStream and CudaStreamFlags from "
    "rmm.pylibrmm.stream",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["CudaStream", "CudaStreamFlags"]
