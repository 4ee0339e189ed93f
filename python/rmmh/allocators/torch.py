"""PyTorch allocator over rmmh (RMM's ``rmm.allocators.torch``), and its memory statistics.

    import torch
    from rmmh.allocators.torch import rmm_torch_allocator
    torch.cuda.memory.change_current_allocator(rmm_torch_allocator)   # before any CUDA tensor

``rmm_torch_allocator`` is a ``torch.cuda.memory.CUDAPluggableAllocator`` over two C functions of
rmmh's one native library, ``rmmh_torch_alloc(size, device, stream)`` and
``rmmh_torch_free(ptr, size, device, stream)``: each allocation comes from the current resource of
its device (``rmmh.mr.set_current_device_resource``, ``rmmh.reinitialize``), on PyTorch's stream,
with that device made current for the call; no Python runs. It is None when PyTorch or CUDA is
missing, and on rmmh's host backend.

PyTorch's rules for it: ``change_current_allocator`` must run before the process allocates any
CUDA tensor, and cannot be undone. A failed allocation returns NULL to PyTorch (the C function
never throws). PyTorch's pluggable path has no statistics (``torch.cuda.memory_stats`` raises),
no ``empty_cache`` and no ``record_stream``; ``memory_stats`` here gives the numbers instead:

- ``allocated_bytes.all.{current,peak,allocated}``, ``allocation.all.{current,allocated}`` and
  ``num_ooms``: the C hooks' own counters for the device (PyTorch's tensors, requested sizes);
- ``reserved_bytes.all.{current,peak}``: what the device's pool holds from its upstream (when the
  device's resource is, or wraps, a PoolMemoryResource), else absent;
- ``statistics.{current_bytes,peak_bytes,total_bytes,current_count,peak_count,total_count}``: the
  device's StatisticsResourceAdaptor, when the resource is or wraps one (it counts every
  allocation through that resource, not only PyTorch's).
"""
from .. import _lib
from .. import _memory_resource as _mr
from . import hook_statistics, reset_peak

__all__ = ["max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "memory_stats", "memory_summary", "reset_peak_memory_stats", "rmm_torch_allocator"]

ALLOC_FN = "rmmh_torch_alloc"
FREE_FN = "rmmh_torch_free"

rmm_torch_allocator = None
try:
    from torch.cuda.memory import CUDAPluggableAllocator
except ImportError:
    pass
else:
    from torch.cuda import is_available as _is_available

    if _lib.BACKEND == "cuda" and _is_available():
        # the same path as rmmh's ctypes load: dlopen returns that library, so PyTorch calls the
        # functions that read the per-device table Python sets
        rmm_torch_allocator = CUDAPluggableAllocator(_lib.LIBRARY_PATH, ALLOC_FN, FREE_FN)
    del _is_available


def _device(device):
    """The device id of a device argument, as PyTorch takes it: None (the current device), an
    int, "cuda" or "cuda:N", or a torch.device of type cuda; any other device is a ValueError."""
    if device is None:
        return _mr._current_device()
    if isinstance(device, str):  # "cuda", "cuda:1"
        kind, colon, idx = device.partition(":")
        if kind != "cuda" or (colon and not (idx.isascii() and idx.isdigit())):
            raise ValueError("Expected a cuda device, but got: %s" % device)
        return int(idx) if colon else _mr._current_device()
    if type(device).__name__ == "device":  # torch.device
        if device.type != "cuda":
            raise ValueError("Expected a cuda device, but got: %s" % device)
        return device.index if device.index is not None else _mr._current_device()
    return _lib.as_int(device, "device")


def _layers(mr):
    """mr and every upstream below it (adaptors expose upstream_mr)."""
    seen = []
    while mr is not None and not any(mr is s for s in seen):
        seen.append(mr)
        mr = mr.__dict__.get("upstream_mr") if hasattr(mr, "__dict__") else None
    return seen


def memory_stats(device=None):
    """A dict shaped like ``torch.cuda.memory_stats`` for ``device`` (default: the current
    one); see the module's docstring for where each number comes from."""
    d = _device(device)
    h = hook_statistics(d)
    stats = {
        "allocated_bytes.all.current": h.current_bytes,
        "allocated_bytes.all.peak": h.peak_bytes,
        "allocated_bytes.all.allocated": h.total_bytes,
        "allocation.all.current": h.current_count,
        "allocation.all.allocated": h.total_count,
        "num_ooms": h.failed,
    }
    for layer in _layers(_mr.get_per_device_resource(d)):
        if isinstance(layer, _mr.PoolMemoryResource) and "reserved_bytes.all.current" not in stats:
            info = layer.info()
            stats["reserved_bytes.all.current"] = info.pool_bytes
            stats["reserved_bytes.all.peak"] = info.peak_pool_bytes
        elif isinstance(layer, _mr.StatisticsResourceAdaptor) and "statistics.peak_bytes" not in stats:
            s = layer.allocation_counts
            for name in ("current_bytes", "peak_bytes", "total_bytes", "current_count",
                         "peak_count", "total_count"):
                stats["statistics." + name] = getattr(s, name)
    return stats


def memory_allocated(device=None):
    """Bytes of PyTorch tensors allocated through the hooks on ``device`` now."""
    return hook_statistics(_device(device)).current_bytes


def max_memory_allocated(device=None):
    """The peak of memory_allocated (since start or reset_peak_memory_stats)."""
    return hook_statistics(_device(device)).peak_bytes


def memory_reserved(device=None):
    """Bytes the device's pool holds from its upstream (0 without a pool)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    """The most the device's pool ever held (0 without a pool)."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None):
    """Sets the allocated peak back to the current bytes (the pool's peak is not reset)."""
    reset_peak(_device(device))


def memory_summary(device=None):
    """memory_stats as aligned text."""
    stats = memory_stats(device)
    width = max(len(k) for k in stats)
    return "\n".join("%-*s %d" % (width, k, v) for k, v in stats.items())
