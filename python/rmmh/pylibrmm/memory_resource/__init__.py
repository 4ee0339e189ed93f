"""rmm.pylibrmm.memory_resource: the resources (also rmmh.mr), and its experimental module."""
from . import experimental  # noqa: F401
from ._memory_resource import *  # noqa: F401,F403
from ._memory_resource import __all__ as _all
from ._memory_resource import _flush_logs, _initialize  # noqa: F401

__all__ = sorted(_all + ["experimental"])
del _all
