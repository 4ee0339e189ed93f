"""Allocation statistics and a memory profiler (RMM's rmm.statistics), over rmm.h's statistics
adaptor.

enable_statistics() puts a StatisticsResourceAdaptor on top of the current device's resource;
get/push/pop_statistics() read it and open or close nested counter scopes; statistics() is a
context manager doing both; profiler() records per function or block the bytes allocated (total)
and the peak, into default_profiler_records unless told otherwise.
"""
import inspect
import threading
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from typing import Any, Callable, Dict, Literal, Optional

from . import _memory_resource as _mr
from ._statistics_types import Statistics

__all__ = [
    "ProfilerContext",
    "ProfilerRecords",
    "Statistics",
    "default_profiler_records",
    "enable_statistics",
    "get_descriptive_name_of_object",
    "get_statistics",
    "pop_statistics",
    "profiler",
    "push_statistics",
    "statistics",
]


def _current_stats_mr() -> Optional[_mr.StatisticsResourceAdaptor]:
    mr = _mr.get_current_device_resource()
    return mr if isinstance(mr, _mr.StatisticsResourceAdaptor) else None


def enable_statistics() -> None:
    """Makes a StatisticsResourceAdaptor over the current device's resource the current one,
    unless the current one already is one. It must stay on top while statistics are gathered."""
    mr = _mr.get_current_device_resource()
    if not isinstance(mr, _mr.StatisticsResourceAdaptor):
        _mr.set_current_device_resource(_mr.StatisticsResourceAdaptor(mr))


def get_statistics() -> Optional[Statistics]:
    """The current scope's statistics, or None when statistics are not enabled."""
    mr = _current_stats_mr()
    return None if mr is None else mr.allocation_counts


def push_statistics() -> Optional[Statistics]:
    """Opens a nested scope with zeroed counters and returns the statistics before it; None
    (and nothing done) when statistics are not enabled."""
    mr = _current_stats_mr()
    return None if mr is None else mr.push_counters()


def pop_statistics() -> Optional[Statistics]:
    """Closes the innermost scope and returns its counters; None when statistics are not
    enabled."""
    mr = _current_stats_mr()
    return None if mr is None else mr.pop_counters()


@contextmanager
def statistics():
    """Statistics for the enclosed block: a new scope if statistics are enabled, else a
    StatisticsResourceAdaptor made current on entry and removed on exit.

    Raises ValueError if the current resource was changed inside the block."""
    if push_statistics() is None:
        prior = _mr.get_current_device_resource()
        enable_statistics()
    else:
        prior = None
    current = _mr.get_current_device_resource()
    try:
        yield
    finally:
        if current is not _mr.get_current_device_resource():
            raise ValueError("RMM memory source stack was changed while in the statistics "
                             "context")
        if prior is None:
            pop_statistics()
        else:
            _mr.set_current_device_resource(prior)


#: What ProfilerRecords.report can order by.
_OrderedBy = Literal["num_calls", "memory_peak", "memory_total"]


class ProfilerRecords:
    """The memory statistics recorded by a profiler, per name."""

    @dataclass
    class MemoryRecord:
        """One record: calls, total bytes allocated over all calls, and the largest peak."""
        num_calls: int = 0
        memory_total: int = 0
        memory_peak: int = 0

        def add(self, memory_total: int, memory_peak: int) -> None:
            self.num_calls += 1
            self.memory_total += memory_total
            self.memory_peak = max(self.memory_peak, memory_peak)

    Data = MemoryRecord  # RMM before 26.x called it Data

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: Dict[str, "ProfilerRecords.MemoryRecord"] = defaultdict(
            ProfilerRecords.MemoryRecord)

    def add(self, name: str, data: Statistics) -> None:
        """Adds one call's statistics to the record `name` (thread-safe)."""
        with self._lock:
            self._records[name].add(memory_total=data.total_bytes, memory_peak=data.peak_bytes)

    @property
    def records(self) -> Dict[str, "ProfilerRecords.MemoryRecord"]:
        """{name: MemoryRecord}."""
        with self._lock:
            return dict(self._records)

    def report(self, ordered_by: _OrderedBy = "memory_peak") -> str:
        """A table of the records, largest first by `ordered_by`."""
        rows = sorted(self.records.items(), key=lambda kv: getattr(kv[1], ordered_by),
                      reverse=True)
        out = ["Memory Profiling", "================", ""]
        if not rows:
            return "\n".join(out) + "\nNo data, maybe profiling wasn't enabled?"
        out += ["Legends:",
                "  ncalls       - number of times the function or code block was called",
                "  memory_peak  - peak memory allocated in function or code block (in bytes)",
                "  memory_total - total memory allocated in function or code block (in bytes)",
                "", "Ordered by: %s" % ordered_by, "",
                "ncalls     memory_peak    memory_total  filename:lineno(function)"]
        for name, d in rows:
            out.append("%6s %15s %15s  %s" % (format(d.num_calls, ",d"),
                                              format(d.memory_peak, ",d"),
                                              format(d.memory_total, ",d"), name))
        return "\n".join(out)

    def pretty_print(self, ordered_by: _OrderedBy = "memory_peak") -> str:
        """report() under the name RMM used before 26.x."""
        return self.report(ordered_by)

    def __repr__(self) -> str:
        return "%s(%s)" % (type(self).__name__, self.records)

    def __str__(self) -> str:
        return self.report()


def _get_descriptive_name_of_object(obj: Callable[..., Any]) -> str:
    """"file:line(qualified name)" of a function or class."""
    obj = inspect.unwrap(obj)
    _, line = inspect.getsourcelines(obj)
    return "%s:%d(%s)" % (inspect.getfile(obj), line, obj.__qualname__)


get_descriptive_name_of_object = _get_descriptive_name_of_object  # its pre-26.x public name

default_profiler_records = ProfilerRecords()


class ProfilerContext:
    """What profiler() returns: a decorator, and a context manager when given a name."""

    def __init__(self, records: ProfilerRecords, name: str) -> None:
        self._records = records
        self._name = name

    def __call__(self, func):
        label = self._name or _get_descriptive_name_of_object(func)
        records = self._records

        @wraps(func)
        def wrapper(*args, **kwargs):
            push_statistics()
            try:
                return func(*args, **kwargs)
            finally:
                stats = pop_statistics()
                if stats is not None:
                    records.add(name=label, data=stats)

        return wrapper

    def __enter__(self) -> "ProfilerContext":
        if not self._name:
            raise ValueError("When profiler is used as a context manager, a name must be "
                             "provided")
        push_statistics()
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        stats = pop_statistics()
        if stats is not None:
            self._records.add(name=self._name, data=stats)


def profiler(*, records: ProfilerRecords = default_profiler_records,
             name: str = "") -> ProfilerContext:
    """Decorator and context manager recording the memory statistics of a function or block.

    A no-op when statistics are not enabled. As a context manager it needs a name; as a
    decorator the name defaults to the function's file, line and name."""
    return ProfilerContext(records, name)
