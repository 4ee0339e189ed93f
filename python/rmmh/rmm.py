"""reinitialize, its hooks, is_initialized and RMMError (RMM's rmm.rmm)."""
import threading
from typing import Any, Callable

from . import _memory_resource as _mr
from ._errors import RMMError  # noqa: F401

_reinitialize_hooks: list[tuple[Callable[..., Any], tuple, dict]] = []  # (func, args, kwargs)
# Held while the list is read or changed: unregister_reinitialize_hook rebuilt the list and rebound
# it, and a registration another thread appended to the old list meanwhile was lost (red team 50).
# Reentrant: unregister's comparison may call a hook object's own __eq__/__ne__.
_hooks_lock = threading.RLock()


def reinitialize(pool_allocator=False, managed_memory=False, initial_pool_size=None,
                 maximum_pool_size=None, devices=0, logging=False, log_file_name=None):
    """Replaces the resources of ``devices`` (and resets every other device to its default).

    Calls the registered hooks first, newest first. Using memory from the previous resources
    afterwards is safe in rmmh (buffers keep their resource alive) but keeps that memory held.

    Bad arguments raise before any resource changes. Every device's resource is reset before the
    new ones are made (as in RMM: a new pool can have the memory an old one gives back); when one
    cannot be made (a pool too large for the device: MemoryError), the devices set up by this
    call go back to their defaults and each resource set before it that is still alive elsewhere
    (held by the caller, a buffer or an adaptor) is set again (rmmh only: RMM leaves the devices
    reset).

    Parameters
    ----------
    pool_allocator : bool
        A PoolMemoryResource over the base resource.
    managed_memory : bool
        ManagedMemoryResource as the base resource, else CudaMemoryResource.
    initial_pool_size, maximum_pool_size : int | str, optional
        The pool's sizes (ignored without pool_allocator). Default: half of the free memory,
        and unbounded. RMM's maximum of 0, a pool that never grows, is kept as 256 bytes, the
        least rmm.h can hold to: any request above 256 bytes fails with MemoryError. With
        pool_allocator, the environment variable RMM_ALLOC_CONF (rmm.h's pool configuration
        string, e.g. "maximum:8GiB, growth:on_demand"; see the README) applies over these; a bad
        one is a ValueError naming it. rmmh only.
    devices : int or list of int
        The devices to set up (default device 0).
    logging : bool
        Wrap each device's resource in a LoggingResourceAdaptor.
    log_file_name : str, optional
        Its file, default $RMM_LOG_FILE (neither: ValueError). Each device writes
        ``<stem>.dev<id><suffix>``; get_log_filenames() lists them.
    """
    with _hooks_lock:
        hooks = list(reversed(_reinitialize_hooks))  # (called outside the lock: a hook may (un)register)
    for func, args, kwargs in hooks:
        func(*args, **kwargs)
    from .graphs import _prune_kept_upstreams
    _prune_kept_upstreams()  # (released graph pools' upstreams whose memory came back go first)
    _mr._initialize(pool_allocator=pool_allocator, managed_memory=managed_memory,
                    initial_pool_size=initial_pool_size, maximum_pool_size=maximum_pool_size,
                    devices=devices, logging=logging, log_file_name=log_file_name)


def is_initialized():
    """True once rmmh is imported (RMM's meaning: every per-device resource is usable)."""
    return _mr.is_initialized()


def register_reinitialize_hook(func, *args, **kwargs):
    """Registers func(*args, **kwargs) to run before every reinitialize(), for releasing
    objects that hold memory of the old resources. Hooks run newest first. Returns func."""
    with _hooks_lock:
        _reinitialize_hooks.append((func, args, kwargs))
    return func


def unregister_reinitialize_hook(func):
    """Removes every registration of func."""
    with _hooks_lock:
        _reinitialize_hooks[:] = [h for h in _reinitialize_hooks if h[0] != func]
