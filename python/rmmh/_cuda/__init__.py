"""RMM's rmm._cuda namespace (older import paths some code still uses)."""
from . import gpu, stream  # noqa: F401
