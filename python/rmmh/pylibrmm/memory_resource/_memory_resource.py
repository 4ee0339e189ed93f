"""rmm.pylibrmm.memory_resource._memory_resource: RMM's private module of the resources (RMM's
tests import _flush_logs from it); the same objects as rmmh.mr."""
from ...mr import *  # noqa: F401,F403
from ...mr import __all__  # noqa: F401
from ...mr import _flush_logs, _initialize  # noqa: F401
