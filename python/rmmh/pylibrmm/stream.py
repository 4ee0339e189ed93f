"""rmm.pylibrmm.stream: Stream and the default streams."""
from .._stream import (  # noqa: F401
    DEFAULT_STREAM,
    LEGACY_DEFAULT_STREAM,
    PER_THREAD_DEFAULT_STREAM,
    CudaStream,
    CudaStreamFlags,
    Stream,
    _OwningStream,
)
