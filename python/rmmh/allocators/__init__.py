"""Allocators that make other libraries allocate through rmmh (RMM's ``rmm.allocators``).

    from rmmh.allocators.cupy import rmm_cupy_allocator      # CuPy: a Python allocator (RMM's)
    from rmmh.allocators.cupy import rmm_cupy_fast_allocator # CuPy: C functions, no Python per call
    from rmmh.allocators.numba import RMMNumbaManager        # Numba: an EMM plugin
    from rmmh.allocators.torch import rmm_torch_allocator    # PyTorch: a CUDAPluggableAllocator

Each submodule imports its framework; this package imports none. Every allocator takes its memory
from the current resource of the device (``rmmh.mr.set_current_device_resource``,
``rmmh.reinitialize``), read at each allocation.

The PyTorch and CuPy fast paths are C functions in rmmh's one native library (src/rmmh_hooks.c),
so they share its per-device resource table with Python. They keep a map of the blocks they hand
out (a free there gets no size, stream or resource) and count, per resource, the blocks not yet
freed: a resource replaced in Python while PyTorch or CuPy still hold blocks of it stays alive
until those are freed (``held_resources``, ``release_held_resources``).
"""
import ctypes
from collections import namedtuple

from .. import _lib
from .. import _memory_resource as _mr

__all__ = ["HookStatistics", "held_resources", "hook_statistics", "live_blocks", "lookup",
           "release_held_resources", "reset_peak"]

#: The C hooks' counters of one device (requested bytes; PyTorch and CuPy's fast path together).
HookStatistics = namedtuple("HookStatistics", "current_bytes current_count peak_bytes "
                                              "total_bytes total_count failed")


def _device(device):
    return _mr._current_device() if device is None else _lib.as_int(device, "device")


def hook_statistics(device=None):
    """The HookStatistics of the C hooks on ``device`` (default: the current one): bytes and
    blocks now, the peak bytes, the totals and the failed allocations."""
    out = (ctypes.c_int64 * 6)()
    _lib.check(_lib.rmmh_hooks_stats(_device(device), out))
    return HookStatistics(*out)


def reset_peak(device=None):
    """Sets the hooks' peak_bytes of ``device`` back to its current bytes."""
    _lib.check(_lib.rmmh_hooks_reset_peak(_device(device)))


def lookup(ptr):
    """(bytes, device, stream handle) of a block the C hooks handed out, or None. For tests and
    debugging."""
    n, dev, stream = ctypes.c_size_t(), ctypes.c_int(), ctypes.c_void_p()
    if not _lib.rmmh_hooks_lookup(_lib.as_pointer(ptr), ctypes.byref(n), ctypes.byref(dev),
                                  ctypes.byref(stream)):
        return None
    return n.value, dev.value, stream.value or 0


def live_blocks():
    """The number of blocks the C hooks have handed out and not taken back (all devices)."""
    return _lib.rmmh_hooks_live_blocks()


def held_resources():
    """Resources no longer current that are kept alive because the C hooks still hold blocks of
    them."""
    return list(_mr._hook_held)


def release_held_resources():
    """Lets go of the held resources whose blocks have all been freed (this also happens at each
    change of a device's resource and after each garbage collection); returns how many are still
    held."""
    return _mr._sweep_hook_held()
