"""rmm.h's debug log (RMM's rmm.set_logging_level and friends, over rapids-logger there).

The log goes to $RMM_DEBUG_LOG_FILE (default rmm_log.txt in the working directory), written only
when a message at or above the level is logged. rmm.h compiles in levels down to INFO by default,
so asking for TRACE or DEBUG warns, as RMM does when its library lacks them.
"""
import warnings
from enum import IntEnum

from . import _lib


class level_enum(IntEnum):
    """Debug log levels (RMM 26's rmm.level_enum; the upper-case names of older RMM's
    rmm.logging_level are aliases)."""
    trace = 0
    debug = 1
    info = 2
    warn = 3
    error = 4
    critical = 5
    off = 6
    n_levels = 7
    TRACE = 0
    DEBUG = 1
    INFO = 2
    WARN = 3
    ERROR = 4
    CRITICAL = 5
    OFF = 6


logging_level = level_enum
_COMPILED_LEVEL = level_enum.info
_level = level_enum.info
_flush_level = level_enum.info


def _check(level):
    if not isinstance(level, level_enum):
        raise TypeError("level must be an rmmh.level_enum, not %r" % (level,))
    if level < _COMPILED_LEVEL:
        # named as RMM names it (level_enum.trace): warning filters written for RMM match (a red
        # team's find: from Python 3.11 on, %s of an IntEnum member is its number)
        warnings.warn("RMM will not log level_enum.%s. This may be because the C library (rmm.h) is "
                      "compiled for a less verbose logging level (RMM_LOG_LEVEL)." % level.name)
    return level


def set_logging_level(level):
    """Sets the debug log's level (an rmmh.level_enum)."""
    global _level
    _level = _check(level)
    _lib.rmm_set_log_level(min(int(level), int(level_enum.off)))


def get_logging_level():
    """The debug log's level (as set; rmm.h's own is the same, n_levels counting as off)."""
    if int(_level) != _lib.rmm_get_log_level() and _level != level_enum.n_levels:
        return level_enum(_lib.rmm_get_log_level())  # set from C meanwhile
    return _level


def should_log(level):
    """Whether a message at ``level`` would be logged."""
    if not isinstance(level, level_enum):
        raise TypeError("level must be an rmmh.level_enum, not %r" % (level,))
    return level_enum.off > level >= max(get_logging_level(), _COMPILED_LEVEL)


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
