"""The Statistics record, alone: the leaf that rmmh.statistics and rmmh._memory_resource both
import (the adaptor returns it, the statistics functions hand it on), so neither imports the
other for it. Its public name is rmmh.statistics.Statistics, which __module__ says.
"""
from dataclasses import dataclass


@dataclass
class Statistics:
    """Counters of a statistics scope: bytes and allocations, current, peak and total."""
    current_bytes: int
    current_count: int
    peak_bytes: int
    peak_count: int
    total_bytes: int
    total_count: int


Statistics.__module__ = "rmmh.statistics"  # where users find it (and pickle looks it up)
