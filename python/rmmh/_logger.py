"""rmm.h's debug log (RMM's rmm.set_logging_level and friends, over rapids-logger there).

The log goes to $RMM_DEBUG_LOG_FILE (default rmm_log.txt in the working directory), written only
when a message at or above the level is logged. rmm.h compiles in levels down to INFO by default,
so asking for TRACE or DEBUG warns, as RMM does when its library lacks them.
"""
import warnings
from enum import IntEnum

from . import _lib


class logging_level(IntEnum):
    """Debug log levels (RMM's rmm.logging_level / rmm.level_enum)."""
    TRACE = 0
    DEBUG = 1
    INFO = 2
    WARN = 3
    ERROR = 4
    CRITICAL = 5
    OFF = 6


level_enum = logging_level
_COMPILED_LEVEL = logging_level.INFO
_flush_level = logging_level.INFO


def _check(level):
    if not isinstance(level, logging_level):
        raise TypeError("level must be an rmmh.logging_level, not %r" % (level,))
    if level < _COMPILED_LEVEL:
        warnings.warn("RMM will not log %s. This may be because the C library (rmm.h) is "
                      "compiled for a less verbose logging level (RMM_LOG_LEVEL)." % level)
    return level


def set_logging_level(level):
    """Sets the debug log's level (an rmmh.logging_level)."""
    _lib.rmm_set_log_level(int(_check(level)))


def get_logging_level():
    """The debug log's level."""
    return logging_level(_lib.rmm_get_log_level())


def should_log(level):
    """Whether a message at ``level`` would be logged."""
    if not isinstance(level, logging_level):
        raise TypeError("level must be an rmmh.logging_level, not %r" % (level,))
    return level >= max(get_logging_level(), _COMPILED_LEVEL) and level != logging_level.OFF


def set_flush_level(level):
    """Records the flush level (rmm.h flushes on flush_logger(); the value is kept for RMM
    compatibility)."""
    global _flush_level
    _flush_level = _check(level)


def get_flush_level():
    """The flush level set with set_flush_level."""
    return _flush_level


def flush_logger():
    """Flushes the debug log file."""
    _lib.rmm_flush_log()
