"""rmm.pylibrmm.memory_resource: the resources (also rmmh.mr)."""
from ..mr import *  # noqa: F401,F403
from ..mr import __all__  # noqa: F401
from ..mr import _flush_logs, _initialize  # noqa: F401
