"""rmm.pylibrmm.logger: the debug log's level functions."""
from .._logger import (  # noqa: F401
    flush_logger,
    get_flush_level,
    get_logging_level,
    level_enum,
    logging_level,
    set_flush_level,
    set_logging_level,
    should_log,
)
