"""The memory resources of rmmh.mr (RMM's rmm.mr), each over one rmm.h resource.

Every resource object owns its C resource (except the wrappers of the library's default
resources) and holds its upstream(s): destroying happens in dependency order through
_lifetime, so an upstream outlives its adaptors and a resource outlives its blocks, even when the
garbage collector finalizes them in another order. Setting a resource current (per device)
keeps it alive until it is replaced.
"""
import atexit
import ctypes
import functools
import logging
import os
import re
import sys as _sys
import threading
import warnings
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import _accel_loader, _errors, _lib, _lifetime
from ._errors import INVALID_ARGUMENT, IO as _IO, NOT_SUPPORTED as _NOT_SUPPORTED, OUT_OF_MEMORY, \
    UNKNOWN, NotSupportedError, error_for
from ._cuda.gpu import getDeviceAttribute
from ._helpers import parse_bytes
from ._lifetime import LATER, Hold as _Hold, Record, new_refs, release_once
from ._stream import DEFAULT_STREAM, Stream, as_stream
from ._statistics_types import Statistics

__all__ = [
    "AlignedResourceAdaptor",
    "ArenaMemoryResource",
    "BinningMemoryResource",
    "CallbackMemoryResource",
    "CudaAsyncMemoryResource",
    "CudaAsyncViewMemoryResource",
    "CudaMemoryResource",
    "DeviceMemoryResource",
    "FailureCallbackResourceAdaptor",
    "FixedSizeMemoryResource",
    "LimitingResourceAdaptor",
    "LoggingResourceAdaptor",
    "ManagedMemoryResource",
    "PinnedHostMemoryResource",
    "PoolInfo",
    "PoolMemoryResource",
    "PrefetchResourceAdaptor",
    "SamHeadroomMemoryResource",
    "StatisticsResourceAdaptor",
    "SystemMemoryResource",
    "ThreadSafeResourceAdaptor",
    "TrackingResourceAdaptor",
    "UpstreamResourceAdaptor",
    "available_device_memory",
    "disable_logging",
    "enable_logging",
    "get_current_device_resource",
    "get_current_device_resource_type",
    "get_log_filenames",
    "get_per_device_resource",
    "get_per_device_resource_type",
    "is_initialized",
    "set_current_device_resource",
    "set_per_device_resource",
]

_log = logging.getLogger("rmmh")
_alloc = _lib.alloc
_free = _lib.free
_SIZE_MAX = _lib.SIZE_MAX
_BIN_ALIGNMENT = 256  # rmm.h rounds bin sizes up to RMM_ALIGNMENT


def _destroy(handle):
    if _lib.rmmh_resource_destroy(handle):  # kept: a free deferred to rmm_capture_end reaches it
        return LATER
    return None


def _refuse_held_call(mr, refs, stream, srefs):
    """mr.allocate's and mr.deallocate's holds (below) taken on a resource or a stream already
    destroyed: lets go of them and raises that object's error."""
    destroyed = refs[0] is True
    _release_holds(refs, srefs)
    if destroyed:
        raise _lib.error_for_destroyed(mr)
    as_stream(stream)  # raises: its C stream is gone
    raise _lib.error_for_destroyed(stream)  # (not reached)


def _release_holds(refs, srefs):
    """Lets go of a hold on refs and on srefs (None: none); the last holder of either destroys it.
    Both are let go of even when the first destruction raises (that exception is raised after)."""
    try:
        if srefs is not None:
            _lifetime.release(srefs)
    finally:
        _lifetime.release(refs)


class _PyResourceMethods:
    """allocate and deallocate in Python: the fallback of rmmh._accel.ResourceBase
    (src/_accel.c), with the same contract."""
    __slots__ = ()

    def allocate(self, nbytes, stream=DEFAULT_STREAM):
        """Allocates ``nbytes`` bytes on ``stream`` and returns the address (an int).

        Raises MemoryError when the memory cannot be had: rmmh.OutOfMemoryError when it is not
        there, rmmh.CUDAAllocationError for another CUDA error (as RMM); 0 bytes give 0.
        """
        if nbytes.__class__ is not int or not 0 <= nbytes <= _SIZE_MAX:
            nbytes = _lib.as_size(nbytes, "nbytes")
        if stream.__class__ is not Stream or stream._refs is not None and not stream._refs:
            stream = as_stream(stream)  # (raises for a stream whose C stream is gone)
        if not nbytes:
            return 0
        try:
            refs = self._refs
        except AttributeError:  # (its __init__ never ran: made by __new__ alone)
            raise _errors.not_initialized(self) from None
        # Holds on the C resource and the C stream for the call into C, which lets the GIL go: a
        # finalizer called by hand on another thread meanwhile (mr.__del__(), a stream's last)
        # then destroys them when the call is over, not under it (red team 40: a use after free).
        # Taken first, checked after (refs[0] is the Record while the C object exists: _lifetime),
        # so a switch of threads between the two cannot let the call through to a destroyed one.
        # (a destroyed one is refused before its list gets a hold: a True alone there read as
        # alive to other threads' checks until the hold was undone: review 40)
        if not refs:
            raise _lib.error_for_destroyed(self)
        refs.append(True)
        srefs = stream._refs
        if srefs is not None:
            srefs.append(True)
        if refs[0] is True or srefs is not None and srefs[0] is True:
            _refuse_held_call(self, refs, stream, srefs)
        try:
            p = _alloc(self._h, nbytes, stream._h)
        finally:  # (_release_holds written out: a call less)
            try:
                if srefs is not None:
                    token = srefs.pop()
                    if token is not True:
                        _lifetime.run_reporting(token, stream)
            finally:
                token = refs.pop()
                if token is not True:
                    _lifetime.run_reporting(token, self)
        if p is None:
            raise _lib.error(_lib.rmm_last_status(), allocation=True)
        return p

    def deallocate(self, ptr, nbytes, stream=DEFAULT_STREAM):
        """Frees ``ptr``, allocated by this resource with ``nbytes``, on ``stream``.

        Raises rmmh.CorruptionError when the resource can tell that it never handed ptr out (the
        pool, arena, fixed-size and tracking resources can). 0 is a no-op.
        """
        if ptr.__class__ is not int or not 0 <= ptr <= _SIZE_MAX:
            ptr = _lib.as_pointer(ptr)
        if nbytes.__class__ is not int or not 0 <= nbytes <= _SIZE_MAX:
            nbytes = _lib.as_size(nbytes, "nbytes")
        if stream.__class__ is not Stream or stream._refs is not None and not stream._refs:
            stream = as_stream(stream)  # (raises for a stream whose C stream is gone)
        if ptr:
            try:
                refs = self._refs
            except AttributeError:  # (its __init__ never ran: made by __new__ alone)
                raise _errors.not_initialized(self) from None
            if not refs:  # (the holds of allocate)
                raise _lib.error_for_destroyed(self)
            refs.append(True)
            srefs = stream._refs
            if srefs is not None:
                srefs.append(True)
            if refs[0] is True or srefs is not None and srefs[0] is True:
                _refuse_held_call(self, refs, stream, srefs)
            try:
                st = _free(self._h, ptr, nbytes, stream._h, -1)
            finally:
                try:
                    if srefs is not None:
                        token = srefs.pop()
                        if token is not True:
                            _lifetime.run_reporting(token, stream)
                finally:
                    token = refs.pop()
                    if token is not True:
                        _lifetime.run_reporting(token, self)
            if st:
                raise _lib.error(st)



if TYPE_CHECKING:  # the extension's ResourceBase has _PyResourceMethods' methods and contract
    _ResourceBase = _PyResourceMethods
else:
    _ResourceBase = _accel_loader.ResourceBase or _PyResourceMethods


class DeviceMemoryResource(_ResourceBase):
    """Base of every device memory resource: ``allocate`` and ``deallocate``.

    Not instantiated directly: use one of the resources of this module.
    """
    __slots__ = ("_h", "_refs", "__dict__", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("DeviceMemoryResource is the base class of rmmh's resources; create one "
                        "of them (e.g. rmmh.mr.CudaMemoryResource())")

    def _own(self, handle, ups=(), keep=None):
        """Takes ownership of a C resource just created (destroyed after ups are released)."""
        self._h = handle
        self._refs = new_refs(_destroy, (handle,), [u._refs for u in ups], keep)

    def _keep_callbacks(self, keep):
        """Keeps the Python objects the C resource calls (ctypes thunks, the user's callables) on
        this object, where the garbage collector sees them, while it lives; its finalizer hands
        them to the Record, which keeps them for the holders left (buffers, hooks, adaptors'
        Records) until the C resource is destroyed (see _lifetime's "owners the garbage
        collector finalizes"). At interpreter exit they move to the Record too (_keep_at_exit):
        the frees made during shutdown still call them."""
        self.__dict__["_keep"] = keep
        _callback_owners.add(self)

    def _borrow(self, handle):
        """Wraps a C resource this object does not own (the library's default resources)."""
        self._h = handle
        self._refs = new_refs(None)

    def __init_subclass__(cls, **kwargs):
        # Every resource's __init__ runs once: a second call would make a second C resource and
        # leak the first (and, with buffers of the first still live, free their blocks into the
        # second). RMM's resources make theirs in __cinit__, once. The check comes before the
        # class's own __init__ makes anything, so a first call that failed may be tried again.
        super().__init_subclass__(**kwargs)
        _lifetime.chain_finalizer(cls, DeviceMemoryResource.__del__)  # (a subclass's own __del__)
        init = cls.__dict__.get("__init__")
        if init is not None and getattr(init, "_rmmh_once", False):
            return

        # A class of the program's own whose __init__ (its own, or a mixin's) does not call its
        # rmmh base's still gets its C resource, made by the nearest rmmh class's __init__ with
        # the same arguments once that __init__ has returned: RMM makes it in __cinit__, with the
        # constructor's arguments, whatever the subclass's __init__ does (before 2026-11-30 such
        # an object raised in every call: a red team's find). RMM's comes before the subclass's
        # __init__, this after it. Not below the abstract bases (DeviceMemoryResource,
        # UpstreamResourceAdaptor), which make nothing: a Python-level resource (a test double
        # with allocate and deallocate of its own) stays what it was (review 32).
        base_init = None
        if not cls.__module__.startswith("rmmh."):
            rmmh_init = next((k for k in cls.__mro__[1:]
                              if k.__module__.startswith("rmmh.") and "__init__" in k.__dict__), None)
            if rmmh_init is not None and rmmh_init not in (DeviceMemoryResource, UpstreamResourceAdaptor):
                base_init = rmmh_init.__dict__["__init__"]
            if init is None and base_init is not None:  # (an __init__ inherited from a mixin before the rmmh class)
                owner = next(k for k in cls.__mro__ if "__init__" in k.__dict__)
                if not owner.__module__.startswith("rmmh.") and not getattr(owner.__dict__["__init__"], "_rmmh_once", False):
                    init = owner.__dict__["__init__"]

        if init is None:
            return

        @functools.wraps(init)
        def __init__(self, *args, **kw):
            if getattr(self, "_refs", None) is not None:
                raise TypeError("%s.__init__ may be called once" % type(self).__name__)
            init(self, *args, **kw)
            if base_init is not None and getattr(self, "_refs", None) is None:
                base_init(self, *args, **kw)
        __init__._rmmh_once = True
        cls.__init__ = __init__

    @property
    def _live(self):
        """The C resource, checked to exist still. A resource's finalizer may have run while it
        is still reachable (a reference cycle being collected; a Python callback of another
        resource calling it): calls then raise instead of using a destroyed C object."""
        refs = getattr(self, "_refs", None)
        if refs is None:
            raise _errors.not_initialized(self)
        if not refs:
            raise _lib.error_for_destroyed(self)
        return self._h

    def __del__(self):
        # once per object (PEP 442, and release_once for a call by hand); buffers and adaptors
        # may still hold self._refs
        try:
            # decided under the table's lock, which set_per_device_resource decides under too, and
            # let go of after it: the release destroys the C object, which may wait for another
            # resource's lock held by a thread whose Python callback finalizes a resource (a
            # deadlock in review 41 while the release ran under it). Not waited for once the
            # interpreter is finalizing (a daemon thread stopped inside this block keeps it).
            locked = _table_lock.acquire(blocking=not _sys.is_finalizing())
            try:
                if _is_current(self) or any(mr is self for mr in _hook_held):
                    # a call by hand while the per-device table or the frameworks' hooks, which hold
                    # the object and no hold of its C resource, still reach it: the finalizer of its
                    # last reference lets go (a red team's find, 2026-11-29: the C pool was destroyed
                    # under the table, and the next hook allocation used freed memory)
                    return
                refs = self._refs
                if not refs or getattr(self, "_released", False):  # (release_once's rule)
                    return
                keep = self.__dict__.get("_keep")
                if keep is not None:
                    refs[0].keep = keep  # (see _keep_callbacks)
                self._released = True  # (claimed under the lock: set_per_device_resource refuses it from here)
                if _lifetime.defer_if_collecting(self, refs):
                    return  # (let go of when the collection ends)
            finally:
                if locked:
                    _table_lock.release()
            _lifetime.release(refs)
        except Exception:  # never set (a failed __init__), or interpreter shutdown
            pass

    @property
    def type_name(self):
        """rmm.h's name for the C resource ("pool", "cuda", "statistics", ...). rmmh only."""
        with _Hold(self) as h:
            return _lib.rmm_resource_type_name(h).decode()

    def validate(self):
        """Checks every invariant of rmm.h's sub-allocators (pool, fixed-size, binning, arena);
        raises rmmh.CorruptionError naming the first one broken. A no-op for other resources.
        rmmh only."""
        with _Hold(self) as h:
            _lib.check(_lib.rmm_resource_validate(h))

    def allocation_base(self, ptr):
        """(base, offset) of ``ptr``, a block this resource handed out: the start of the device
        allocation (cudaMalloc) holding it and ptr's offset in it, through every layer (a pool's
        chunk, the arena, a fixed-size chunk, a bin, adaptors). What CUDA IPC of a sub-allocation
        needs: cudaIpcGetMemHandle(base), and the importer adds offset. rmmh only.

        Raises InvalidArgumentError when ptr is not a live block of a sub-allocator on the way,
        and NotSupportedError for a pool with virtual growth (its pages are mapped a few at a
        time, which CUDA IPC cannot export) and for CallbackMemoryResource (it cannot say where its
        memory comes from). Async resources give (ptr, 0): export those through their memory pool
        (rmmh.ipc.export_pool).
        """
        ptr = _lib.as_pointer(ptr)
        base, offset = ctypes.c_void_p(), ctypes.c_size_t()
        with _Hold(self) as h:
            st = _lib.rmm_resource_allocation_base(h, ptr, ctypes.byref(base),
                                                   ctypes.byref(offset))
        if st:
            what = "allocation_base(%#x) of %s" % (ptr, type(self).__name__)
            if st == _NOT_SUPPORTED:
                what += (" (not supported for a pool with growth='virtual' or a user-defined "
                         "resource such as CallbackMemoryResource)")
            raise _lib.error(st, what)
        return base.value or 0, offset.value

    def __repr__(self):
        # (no C call once the C resource is destroyed: a finalizer in a collected cycle may
        # print a resource finalized before it)
        h = getattr(self, "_h", None)
        refs = getattr(self, "_refs", None)
        kind = "empty" if not h else "destroyed" if not refs else _lib.rmm_resource_type_name(h).decode()
        return "<%s %s at %#x>" % (type(self).__module__.replace("rmmh._memory_resource", "rmmh.mr")
                                   + "." + type(self).__qualname__, kind, h or 0)

    def __reduce__(self):
        raise TypeError("%s cannot be pickled" % type(self).__name__)


def _check_mr(mr, name="upstream_mr"):
    if isinstance(mr, DeviceMemoryResource) and getattr(mr, "_refs", None) is None:
        raise _errors.not_initialized(mr)
    if not isinstance(mr, DeviceMemoryResource):
        raise TypeError("Argument '%s' has incorrect type (expected rmmh.mr.DeviceMemoryResource,"
                        " got %s)" % (name, type(mr).__name__))
    if not mr._refs:
        raise _lib.error_for_destroyed(mr)
    return mr


class UpstreamResourceAdaptor(DeviceMemoryResource):
    """Base of the resources built over an upstream resource, which they keep alive."""
    __slots__ = ()

    def __init__(self, upstream_mr, *args, **kwargs):
        raise TypeError("UpstreamResourceAdaptor is a base class; create one of its subclasses")

    def _set_upstream(self, upstream_mr):
        if upstream_mr is None:
            raise TypeError("Argument `upstream_mr` must not be None")
        self.__dict__["upstream_mr"] = _check_mr(upstream_mr)
        return upstream_mr

    @property
    def upstream_mr(self):
        """The upstream resource."""
        return self.get_upstream()

    def get_upstream(self):
        """The upstream resource."""
        try:
            return self.__dict__["upstream_mr"]
        except KeyError:
            raise _errors.not_initialized(self) from None


# ---- base resources ----------------------------------------------------------------------

class CudaMemoryResource(DeviceMemoryResource):
    """Memory from ``cudaMalloc``/``cudaFree``."""
    __slots__ = ()

    def __init__(self):
        self._own(_lib.created(_lib.rmm_cuda_resource_create))


class ManagedMemoryResource(DeviceMemoryResource):
    """Memory from ``cudaMallocManaged``/``cudaFree``."""
    __slots__ = ()

    def __init__(self):
        self._own(_lib.created(_lib.rmm_managed_resource_create))


_PAGEABLE_MEMORY_ACCESS = 88  # cudaDevAttrPageableMemoryAccess


def _reads_pageable_memory(device):
    """Whether ``device`` reads pageable host memory (cudaDevAttrPageableMemoryAccess is 1: HMM or
    ATS), as RMM's system_memory_resource asks at construction. True on the host backend: its
    simulated devices answer 0 (an H100 without HMM) but their copies reach any host memory, and
    no kernel runs. One cudaDeviceGetAttribute; raises CUDARuntimeError (a CUDAError) where CUDA
    refuses it, as rmm._cuda.gpu.getDeviceAttribute does."""
    if _lib.BACKEND == "host":
        return True
    return getDeviceAttribute(_PAGEABLE_MEMORY_ACCESS, device) == 1


class SystemMemoryResource(DeviceMemoryResource):
    """Memory from ``malloc``/``free`` (aligned to 256), for GPUs that can access pageable host
    memory (HMM, ATS). Frees synchronize their stream first.

    Raises NotSupportedError (a RuntimeError, as RMM's) where the current device cannot read
    pageable memory (cudaDevAttrPageableMemoryAccess 0), with RMM's message: its kernels would
    fault on every block (until red team 48 the resource was made, and handed such blocks out).
    The host backend makes it (see _reads_pageable_memory).
    """
    __slots__ = ()

    def __init__(self):
        if not _reads_pageable_memory(_current_device()):
            raise NotSupportedError("RMM_ERROR_NOT_SUPPORTED", "System memory allocator is not "
                                    "supported with this hardware/software version.")
        self._own(_lib.created(_lib.rmmh_system_resource_create))


class SamHeadroomMemoryResource(DeviceMemoryResource):
    """RMM's system-memory resource with a GPU headroom: not provided by rmm.h."""
    __slots__ = ()

    def __init__(self, headroom):
        raise NotSupportedError("RMM_ERROR_NOT_SUPPORTED", "SamHeadroomMemoryResource is not "
                                "provided by rmm.h; use SystemMemoryResource")


class PinnedHostMemoryResource(DeviceMemoryResource):
    """Device-accessible pinned host memory (``cudaHostAlloc``/``cudaFreeHost``)."""
    __slots__ = ()

    def __init__(self):
        self._own(_lib.created(_lib.rmm_pinned_host_resource_create))


_EXPORT_POSIX_FD, _EXPORT_FABRIC = 1, 8


class CudaAsyncMemoryResource(DeviceMemoryResource):
    """Memory from a ``cudaMemPool_t`` of its own (``cudaMallocFromPoolAsync``/``cudaFreeAsync``).

    Parameters
    ----------
    initial_pool_size : int | str, optional
        Bytes allocated and freed at creation to prime the pool. Default: half of the free device
        memory, as in RMM.
    release_threshold : int | str, optional
        Bytes the pool keeps across synchronizations; default: never release (RMM: the device's
        total memory).
    enable_ipc : bool
        Export POSIX file descriptor handles (CUDA IPC).
    enable_fabric : bool
        Export fabric handles. Not together with enable_ipc (rmm.h takes one handle type).

    A handle type the device or driver cannot export raises rmmh.NotSupportedError (a
    RuntimeError) whose message ends, as RMM's does, with "Requested IPC memory handle type not
    supported".
    """
    __slots__ = ()

    def __init__(self, initial_pool_size=None, release_threshold=None, enable_ipc=False,
                 enable_fabric=False):
        if initial_pool_size is None:
            initial = _lib.rmm_percent_of_free_device_memory(50)
        else:
            initial = _lib.as_size(parse_bytes(initial_pool_size), "initial_pool_size")
        if release_threshold is None:
            threshold = 0  # rmm.h: never release
        else:
            threshold = _lib.as_size(parse_bytes(release_threshold), "release_threshold")
            threshold = threshold or 1  # RMM's 0 (release everything); rmm.h's 0 means never
        if enable_ipc and enable_fabric:
            raise NotSupportedError("RMM_ERROR_NOT_SUPPORTED", "rmm.h's async resource exports one "
                                    "handle type: enable_ipc or enable_fabric, not both")
        export = _EXPORT_POSIX_FD if enable_ipc else _EXPORT_FABRIC if enable_fabric else 0
        out = ctypes.c_void_p()
        st = _lib.rmmh_async_create(ctypes.byref(out), initial, threshold, export)
        if st:
            err = _lib.error(st)
            if export and st == _NOT_SUPPORTED:  # ends as RMM's message does
                err = NotSupportedError("RMM_ERROR_NOT_SUPPORTED", "%s; Requested IPC memory "
                                        "handle type not supported" % err)
            raise err
        self._own(out.value)
        _async_pools[self.pool_handle()] = self

    def pool_handle(self):
        """The cudaMemPool_t as an int."""
        out = ctypes.c_void_p()
        with _Hold(self) as h:
            _lib.check(_lib.rmm_async_resource_get_pool(h, ctypes.byref(out)))
        return out.value or 0


# pool handle -> the CudaAsyncMemoryResource that owns it, while that object lives: a view of it
# then keeps it alive, and on the host backend only these handles and the driver's pools
# (CudaAsyncManagedMemoryResource's, which live as long as the process) may be viewed (rmm.h
# would dereference any other).
_async_pools: "weakref.WeakValueDictionary[int, CudaAsyncMemoryResource]"
_async_pools = weakref.WeakValueDictionary()
_driver_pools: set[int] = set()


class CudaAsyncViewMemoryResource(DeviceMemoryResource):
    """``cudaMallocFromPoolAsync`` from an existing ``cudaMemPool_t``, which must outlive it.

    pool_handle may be an int, a cuda-python cudaMemPool_t/CUmemoryPool, or anything int() takes.
    """
    __slots__ = ()

    def __init__(self, pool_handle):
        try:
            handle = int(pool_handle)
        except (TypeError, ValueError):
            raise ValueError("pool_handle must be a cudaMemPool_t or CUmemoryPool") from None
        handle = _lib.as_pointer(handle, "pool_handle")
        if handle == 0:
            raise ValueError("pool_handle must not be NULL")
        owner = _async_pools.get(handle)
        if _lib.BACKEND == "host" and owner is None and handle not in _driver_pools:
            raise ValueError("pool_handle %#x is not a pool of the rmmh host backend" % handle)
        with _Hold(owner if owner is not None else _lifetime.NOTHING):  # (its pool held through the create)
            self._own(_lib.created(_lib.rmm_async_view_resource_create, handle),
                      ups=(owner,) if owner is not None else ())
        self.__dict__["_pool_handle"] = handle

    def pool_handle(self):
        """The cudaMemPool_t as an int."""
        try:
            return self.__dict__["_pool_handle"]
        except KeyError:  # (made by __new__ alone: a bare KeyError until red team 52)
            raise _errors.not_initialized(self) from None



class CudaAsyncPinnedMemoryResource(DeviceMemoryResource):
    """Stream-ordered pinned host memory: an owned ``cudaMemPool_t`` in host RAM (page-locked),
    used with ``cudaMallocFromPoolAsync``/``cudaFreeAsync`` (rmm.h's
    ``rmm_async_pinned_resource_create``; RMM has no such resource). The host and every device read
    and write it; a freed block is reused in stream order, with no ``cudaFreeHost`` (which
    synchronizes the device) and no new pinning. Synchronize the allocating stream before the host
    touches a block.

    initial_pool_size : int or str, optional
        Bytes to prime the pool with (default none).
    release_threshold : int or str, optional
        Bytes the pool keeps when it trims at a synchronization (default: keep everything).

    A driver that makes no pinned host pools raises rmmh.NotSupportedError saying so. The host
    backend supports it (from its simulated capacity).
    """
    __slots__ = ()

    def __init__(self, initial_pool_size=None, release_threshold=None):
        initial = 0 if initial_pool_size is None else \
            _lib.as_size(parse_bytes(initial_pool_size), "initial_pool_size")
        if release_threshold is None:
            threshold = 0  # rmm.h: never release
        else:
            threshold = _lib.as_size(parse_bytes(release_threshold), "release_threshold") or 1
        out = ctypes.c_void_p()
        _lib.check(_lib.rmmh_async_pinned_create(ctypes.byref(out), initial, threshold))
        self._own(out.value)
        _async_pools[self.pool_handle()] = self  # (a view keeps it alive)

    def pool_handle(self):
        """The cudaMemPool_t as an int."""
        out = ctypes.c_void_p()
        with _Hold(self) as h:
            _lib.check(_lib.rmm_async_resource_get_pool(h, ctypes.byref(out)))
        return out.value or 0


class CudaAsyncManagedMemoryResource(DeviceMemoryResource):
    """Stream-ordered managed memory: ``cudaMallocFromPoolAsync``/``cudaFreeAsync`` from the
    current device's default managed memory pool (RMM's experimental
    ``rmm.mr.experimental.CudaAsyncManagedMemoryResource``).

    The memory is accessible from the host and every device. The pool belongs to the driver and
    is shared by every such resource of the device; a release threshold of 0 is raised to "keep
    everything" once, as RMM does. Requires CUDA 13 and a device with concurrent managed access
    (``cudaDevAttrConcurrentManagedAccess``; not WSL2): otherwise the constructor raises
    rmmh.NotSupportedError (a RuntimeError and a NotImplementedError) saying which. The host
    backend supports it (one simulated pool per device).
    """
    __slots__ = ()

    def __init__(self):
        self._own(_lib.created(_lib.rmm_async_managed_resource_create,
                               what="CudaAsyncManagedMemoryResource()"))
        _driver_pools.add(self.pool_handle())

    def pool_handle(self):
        """The underlying ``cudaMemPool_t`` (the device's default managed pool) as an int."""
        out = ctypes.c_void_p()
        with _Hold(self) as h:
            _lib.check(_lib.rmm_async_resource_get_pool(h, ctypes.byref(out)))
        return out.value or 0


# ---- sub-allocators ----------------------------------------------------------------------

def _pool_size_arg(value, name):
    n = _lib.as_size(parse_bytes(value), name)
    if n % 256:
        raise _lib.invalid("Error, %s required to be a multiple of 256 bytes (got %d)"
                           % (name.replace("_", " ").capitalize(), n))
    return n


def _step_size_arg(value, name, who):
    """_pool_size_arg for a size rmm.h reads 0 as its default for (a pool's growth_granularity
    and virtual_size, an arena's superblock_size): an explicit 0 is refused, as arena_size 0 and
    block_size 0 are (None takes the default; a 0 was silently 2 MiB, twice the device memory
    or 1 MiB)."""
    n = _pool_size_arg(value, name)
    if n == 0:
        raise _lib.invalid("%s: %s 0 is no size (None takes the default)" % (who, name))
    return n


_POOL_LEAST_MAXIMUM = 256  # RMM_ALIGNMENT: rmm.h's maximum_bytes is a multiple of it (0: none)


def _c_maximum(maximum):
    """rmm.h's maximum_bytes for a checked maximum_pool_size: 0, its "no maximum", for None; 256,
    the least maximum rmm.h holds to, for an explicit 0 (RMM's pool that never grows)."""
    if maximum is None:
        return 0
    return maximum or _POOL_LEAST_MAXIMUM


@dataclass
class PoolInfo:
    """What PoolMemoryResource.info() returns (rmm.h's rmm_pool_info). rmmh only."""
    pool_bytes: int          # held from upstream (virtual growth: physical bytes mapped)
    peak_pool_bytes: int     # the most ever held
    used_bytes: int          # handed out, rounded to 256
    free_bytes: int          # pool_bytes - used_bytes
    largest_free_block: int  # bytes (virtual growth: of free address space, mapped or not,
                             # so it may exceed free_bytes)
    free_blocks: int
    upstream_chunks: int     # virtual growth: 0


_GROWTH = {"geometric": 0, "on_demand": 1, "virtual": 2}


def _default_initial_pool_size(growth):
    """RMM's default initial pool size: half the free device memory for geometric growth; none for
    on-demand and virtual growth, which grow as needed."""
    return _lib.rmm_percent_of_free_device_memory(50) if growth == "geometric" else 0


class PoolMemoryResource(UpstreamResourceAdaptor):
    """A coalescing, stream-ordered pool over ``upstream_mr`` (rmm.h's rmm_pool_create).

    Parameters
    ----------
    upstream_mr : DeviceMemoryResource
        Where the pool's memory comes from.
    initial_pool_size : int | str, optional
        Bytes taken from upstream now (a multiple of 256). Default: half of the free device
        memory with geometric growth (RMM's default), 0 with the other growth modes.
    maximum_pool_size : int | str, optional
        The most the pool may hold (a multiple of 256); default (None) unbounded. RMM's maximum
        of 0, a pool that never grows, is kept as 256 bytes, the least rmm.h can hold to: any
        request above 256 bytes fails with MemoryError.
    growth : {"geometric", "on_demand", "virtual"}
        rmmh only. "geometric" is RMM's rule; "on_demand" grows by the request (rounded to
        growth_granularity) and gives wholly free chunks back before growing past its peak;
        "virtual" reserves one address range and maps 2 MiB pages (two side by side in one
        physical allocation, by default) only where blocks are live (CUDA's virtual memory API;
        the upstream is then not used).
    growth_granularity : int | str, optional
        The on-demand step (default 2 MiB).
    streams_outlive_pool : bool
        A promise that no stream used with the pool is destroyed before it: frees then make no
        CUDA call.
    virtual_size : int | str, optional
        Virtual growth: the address range reserved (default twice the device memory).
    virtual_extent_size : int | str, optional
        Virtual growth: new physical memory comes in allocations of up to this size (a multiple
        of 256, at most 4 GiB; default two 2 MiB pages). RMM_ALLOC_CONF's ``extent:``.
    """
    __slots__ = ()

    def __init__(self, upstream_mr, initial_pool_size=None, maximum_pool_size=None, *,
                 growth="geometric", growth_granularity=None, streams_outlive_pool=False,
                 virtual_size=None, virtual_extent_size=None):
        upstream = self._set_upstream(upstream_mr)
        if growth not in _GROWTH:
            raise ValueError("growth must be one of %s, not %r" % (", ".join(_GROWTH), growth))
        if initial_pool_size is None:
            initial = _default_initial_pool_size(growth)
        else:
            initial = _pool_size_arg(initial_pool_size, "initial_pool_size")
        maximum = None if maximum_pool_size is None else _pool_size_arg(maximum_pool_size,
                                                                          "maximum_pool_size")
        if maximum is not None and initial > maximum:
            raise _lib.invalid("Initial pool size exceeds the maximum pool size (%d > %d)"
                               % (initial, maximum))
        gran = 0 if growth_granularity is None else _step_size_arg(growth_granularity,
                                                                    "growth_granularity", "PoolMemoryResource")
        virt = 0 if virtual_size is None else _step_size_arg(virtual_size, "virtual_size", "PoolMemoryResource")
        extent = 0 if virtual_extent_size is None else _step_size_arg(
            virtual_extent_size, "virtual_extent_size", "PoolMemoryResource")
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmmh_pool_create, uh, initial, _c_maximum(maximum),
                                   _GROWTH[growth], gran, bool(streams_outlive_pool), virt,
                                   extent),
                      ups=(upstream,))
        self.__dict__["growth"] = growth

    def pool_size(self):
        """Bytes the pool holds from its upstream."""
        return self.info().pool_bytes

    def info(self):
        """A PoolInfo: bytes held, peak, used, free, largest free block, ... rmmh only."""
        out = (ctypes.c_size_t * 7)()
        with _Hold(self) as h:
            _lib.check(_lib.rmmh_pool_info(h, out))
        return PoolInfo(*out)

    def set_maximum(self, maximum_pool_size):
        """Changes the most the pool may hold (None: unbounded), as PyTorch's memory fraction
        does: it grows only within the new maximum from now on; what it holds beyond a lower one
        stays held (trim() gives wholly free chunks back). A maximum of 0, a pool that never
        grows, is kept as 256 bytes, the least rmm.h can hold to: a growth for any request above
        256 bytes fails with MemoryError. rmmh only."""
        maximum = None if maximum_pool_size is None else _pool_size_arg(maximum_pool_size,
                                                                          "maximum_pool_size")
        with _Hold(self) as h:
            _lib.check(_lib.rmm_pool_set_maximum(h, _c_maximum(maximum)), "set_maximum")

    def trim(self):
        """Gives every wholly free upstream chunk back (after waiting for the streams that freed
        into it); returns the bytes released. rmmh only."""
        _lifetime.run_deferred_frees()  # (frees refused inside an upstream call: made first)
        released = ctypes.c_size_t()
        with _Hold(self) as h:
            _lib.check(_lib.rmm_pool_trim(h, ctypes.byref(released)))
        return released.value


class FixedSizeMemoryResource(UpstreamResourceAdaptor):
    """Blocks of one size, O(1), stream-ordered. Requests above block_size are a MemoryError.

    blocks_to_preallocate blocks are taken from upstream now and each time the blocks run out.
    """
    __slots__ = ()

    def __init__(self, upstream_mr, block_size=1 << 20, blocks_to_preallocate=128):
        upstream = self._set_upstream(upstream_mr)
        block = _lib.as_size(block_size, "block_size")
        count = _lib.as_size(blocks_to_preallocate, "blocks_to_preallocate")
        if block == 0 or count == 0:  # (rmm.h reads 0 as its default: 1 MiB blocks, 128 at a time)
            raise error_for(INVALID_ARGUMENT, "FixedSizeMemoryResource: %s 0: blocks of at least one "
                            "byte, taken from upstream at least one at a time"
                            % ("block_size" if block == 0 else "blocks_to_preallocate"))
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmmh_fixed_size_create, uh, block, count),
                      ups=(upstream,))


class BinningMemoryResource(UpstreamResourceAdaptor):
    """Routes each request to the smallest bin that holds it; larger ones go to upstream.

    With min_size_exponent and max_size_exponent, one fixed-size bin per power of two in
    [2**min, 2**max] bytes (at least 256) is made (lazily, at its first use). add_bin() adds
    more, or replaces one, before the first allocation (an rmm.h rule).
    """
    __slots__ = ()

    def __init__(self, upstream_mr, min_size_exponent=-1, max_size_exponent=-1):
        upstream = self._set_upstream(upstream_mr)
        lo = _lib.as_int(min_size_exponent, "min_size_exponent")
        hi = _lib.as_int(max_size_exponent, "max_size_exponent")
        for v, name in ((lo, "min_size_exponent"), (hi, "max_size_exponent")):
            if not -128 <= v <= 127:  # (RMM's are int8_t: its conversion raises before any rule)
                raise OverflowError("BinningMemoryResource: %s %d does not fit in int8_t (RMM's "
                                    "type for it)" % (name, v))
        if lo == -1 or hi == -1 or lo > hi:
            lo = hi = 0  # no automatic bins (RMM makes none for an empty range either)
            sizes = ()
        elif not 0 <= lo <= hi <= 40:
            raise _lib.invalid("BinningMemoryResource: need 0 <= min_size_exponent <= "
                               "max_size_exponent <= 40 (got %d, %d)" % (lo, hi))
        else:
            sizes = sorted({max(_BIN_ALIGNMENT, 1 << e) for e in range(lo, hi + 1)})
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmmh_binning_create, uh, lo, hi), ups=(upstream,))
        self.__dict__["_bin_mrs"] = []
        # bin size (rounded up to 256, as rmm.h does) -> its resource, None for rmm.h's own
        self.__dict__["_bins"] = dict.fromkeys(sizes)

    def add_bin(self, allocation_size, bin_resource=None):
        """Adds a bin for requests up to allocation_size bytes (rounded up to 256), served by
        bin_resource or, if None, by a fixed-size resource of that block size made at its first
        use. A bin of that size already there (one of the automatic bins, or one added before)
        is replaced, as in RMM.

        Only before the first allocation: afterwards it raises InvalidArgumentError (a
        ValueError and a RuntimeError).
        """
        size = _lib.as_size(allocation_size, "allocation_size")
        if bin_resource is not None:
            bin_resource = _check_mr(bin_resource, "bin_resource")
        if size == 0 or size > _SIZE_MAX - (_BIN_ALIGNMENT - 1):
            raise _lib.invalid("BinningMemoryResource.add_bin: allocation_size %d is not a "
                               "usable bin size" % size)
        rounded = (size + _BIN_ALIGNMENT - 1) & -_BIN_ALIGNMENT
        # rmm.h replaces a bin of a size that has one (and destroys the one it made itself)
        # (both held through the call and until bin_resource's hold for the C binning resource is
        # taken: a finalizer called by hand meanwhile left an emptied list a lone True, session 41)
        with _Hold(self) as h, _Hold(bin_resource if bin_resource is not None else _lifetime.NOTHING) as bh:
            _lib.check(_lib.rmm_binning_add_bin(h, size, bh))
            if bin_resource is not None:
                # the C binning resource now calls into bin_resource: keep it alive as long
                record = self._refs[0]
                bin_resource._refs.append(True)
                record.ups = record.ups + (bin_resource._refs,)
                self.__dict__["_bin_mrs"].append(bin_resource)  # as RMM: the list only grows
        self.__dict__["_bins"][rounded] = bin_resource

    @property
    def bin_mrs(self):
        """The bin resources added with add_bin."""
        try:
            return self.__dict__["_bin_mrs"]
        except KeyError:  # (made by __new__ alone: a bare KeyError until red team 52)
            raise _errors.not_initialized(self) from None


class ArenaMemoryResource(UpstreamResourceAdaptor):
    """Per-thread and per-stream arenas over one global allocation, for many threads and streams.

    Parameters
    ----------
    arena_size : int | str, optional
        Bytes of the global arena; default half of the free device memory.
    dump_log_on_failure : bool
        Accepted for RMM compatibility; rmm.h reports failures through the exception message.
    superblock_size : int | str, optional
        rmmh only: the unit moved between arenas (default 1 MiB, a multiple of 256).
    streams_outlive_arena : bool
        rmmh only: a promise that no stream used with the arena is destroyed before it.
    """
    __slots__ = ()

    def __init__(self, upstream_mr, arena_size=None, dump_log_on_failure=False, *,
                 superblock_size=None, streams_outlive_arena=False):
        upstream = self._set_upstream(upstream_mr)
        size = 0 if arena_size is None else _lib.as_size(parse_bytes(arena_size), "arena_size")
        if size == 0 and arena_size is not None:  # (rmm.h reads 0 as its default: half the free memory)
            raise error_for(INVALID_ARGUMENT, "ArenaMemoryResource: arena_size 0 is smaller than one "
                            "superblock (None takes the default, half of the free device memory)")
        sb = 0 if superblock_size is None else _step_size_arg(superblock_size, "superblock_size",
                                                              "ArenaMemoryResource")
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmmh_arena_create, uh, size, sb,
                                   bool(streams_outlive_arena)), ups=(upstream,))


# ---- callback resources ------------------------------------------------------------------

def _room(more=0, _tls=_lib._tls):
    """Goes ``more`` frames deeper and back. Called right before an allocation that may call a
    Python allocate_func through ctypes, from as deep a frame as ctypes will call it, it raises
    the RecursionError where the recursion limit leaves no room for that call: ctypes would
    report it as unraisable, on stderr, and answer nothing (red team 36b: an allocate_func that
    calls its own resource; a later red team: a failure callback that allocates from its own
    adaptor). Made once a CallbackMemoryResource or a FailureCallbackResourceAdaptor exists
    (_note_callback_resource).

    It also drops a callback exception kept without its counts (at the recursion limit, where
    the callback could not read them: see _lib._take_pending). That one is matched by its status
    alone, so a later failure with the same status would have raised it; an allocation that
    starts now is never the one it was kept for (review 37)."""
    pending = getattr(_tls, "pending", None)
    if pending is not None and pending[3] is None:
        _tls.pending = None
    if more:
        _deeper(more - 1)


def _deeper(more):
    """``more`` + 1 frames (_room's, without its look at the kept exception a second time)."""
    if more:
        _deeper(more - 1)


_callback_resources = False


def _note_callback_resource():
    """From the first CallbackMemoryResource or FailureCallbackResourceAdaptor on (C calls
    Python from inside an allocation), allocations call _room first: the extension's
    (note_callback_resource), and the ctypes fallback's, whose rmmh_alloc calls go through
    _alloc_with_room. Nothing before: other programs pay nothing for it."""
    global _callback_resources, _alloc
    if _callback_resources:
        return
    _callback_resources = True
    if _accel_loader.ACCEL is not None:
        _accel_loader.ACCEL.note_callback_resource()
    else:
        from . import _device_buffer
        _alloc = _device_buffer._alloc = _alloc_with_room


def _alloc_with_room(mr, nbytes, stream, _raw=_lib.alloc):
    """_lib.alloc, after _room (see _note_callback_resource). ctypes calls allocate_func's
    wrapper one frame deeper than this one, and on Python 3.10 and 3.11 (where C calls count
    too) converts the arguments two deeper: a RecursionError there becomes an ArgumentError,
    which reached the caller as RuntimeError "argument 1: RecursionError"."""
    _room(1)
    return _raw(mr, nbytes, stream)


def _raw_stream(handle):
    s = object.__new__(Stream)  # (every field set here)
    s._h, s._owner, s._refs, s._inited = handle or 0, None, None, True
    return s


class CallbackMemoryResource(DeviceMemoryResource):
    """A resource made of two Python callables (slow: for debugging and experiments).

    allocate_func(nbytes, stream) returns the address of nbytes bytes (an int);
    deallocate_func(ptr, nbytes, stream) frees it. An exception raised by allocate_func is
    re-raised by the allocation that called it (MemoryError and RuntimeError as they are,
    anything else as RuntimeError), as in RMM.
    """
    __slots__ = ()

    def __init__(self, allocate_func, deallocate_func):
        if not callable(allocate_func) or not callable(deallocate_func):
            raise TypeError("allocate_func and deallocate_func must be callable")

        def allocate(out, nbytes, stream, status):
            # (answers through `status`, which holds "not called" until written: see
            # _lib.ALLOCATE_CALLBACK) Nothing may escape this function: ctypes would print it as
            # unraisable. At the recursion limit (an allocate_func that calls its own resource)
            # any call can raise RecursionError, so every call is in the try, and the handler
            # keeps the exception without a call where its calls fail (red team 36b: "Exception
            # ignored in sys.unraisablehook" noise).
            try:
                # an exception kept from an earlier call is stale now (rmm.h asks again, or this
                # is another allocation), and rmmh calls made by allocate_func must not take it
                _lib.clear_pending()
                p = allocate_func(nbytes, _raw_stream(stream))
                out[0] = _lib.as_pointer(p, "the address allocate_func returned")
            except BaseException as e:  # re-raised by the call that failed (see _lib.error)
                code = UNKNOWN
                try:
                    code = OUT_OF_MEMORY if isinstance(e, MemoryError) else UNKNOWN
                    _lib.set_pending(e, code)
                except BaseException:  # (no room for a call: kept unchecked, see _lib._take_pending)
                    _lib._tls.pending = (e, code, None, None)
                status[0] = code
                return
            status[0] = 0  # (first: the block is handed out whatever happens below)
            # rmm.h recovered from an earlier failure of this thread's allocation (a pool
            # retrying a smaller growth, a failure callback's retry): its exception is stale
            # (_lib.clear_pending(), without a call: nothing may raise here)
            _lib._tls.pending = None

        def deallocate(ptr, nbytes, stream, arg):
            # an exception here is reported by ctypes as unraisable (the free cannot fail)
            deallocate_func(ptr or 0, nbytes, _raw_stream(stream))

        a = _lib.ALLOCATE_CALLBACK(allocate)
        d = _lib.DEALLOCATE_CALLBACK(deallocate)
        _note_callback_resource()
        self._own(_lib.created(_lib.rmmh_callback_resource_create, a, d))
        self._keep_callbacks((a, d, allocate_func, deallocate_func))
        self.__dict__.update(_allocate_func=allocate_func, _deallocate_func=deallocate_func)


# ---- adaptors ----------------------------------------------------------------------------

def _log_file_name_arg(log_file_name):
    """log_file_name (a str, bytes or os.PathLike) as a str; ValueError for an embedded NUL, as
    Python's open() raises (C would stop at it and write another file)."""
    name = os.fsdecode(log_file_name)
    if "\0" in name:
        raise ValueError("log_file_name: embedded null byte")
    return name


def _append_id(filename, device):
    """"rmm.log", 1 -> "rmm.dev1.log": the device id before the extension, as RMM does."""
    name, ext = os.path.splitext(filename)
    return "%s.dev%d%s" % (name, device, ext)


class LoggingResourceAdaptor(UpstreamResourceAdaptor):
    """Writes one CSV row per allocation and free (RMM's format, which RMM's replay benchmark
    reads) to ``<log_file_name stem>.dev<device><suffix>``, an absolute path.

    log_file_name defaults to $RMM_LOG_FILE; neither is a ValueError, and so is a name with an
    embedded NUL, as for open(). auto_flush (rmmh only) flushes every row.
    """
    __slots__ = ()

    def __init__(self, upstream_mr, log_file_name=None, *, auto_flush=False):
        upstream = self._set_upstream(upstream_mr)
        if log_file_name is None:
            log_file_name = os.getenv("RMM_LOG_FILE")
            if not log_file_name:
                raise ValueError("RMM log file must be specified either using log_file_name= "
                                 "argument or RMM_LOG_FILE environment variable")
        log_file_name = os.path.abspath(_append_id(_log_file_name_arg(log_file_name),
                                                   _current_device()))
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmm_logging_adaptor_create, uh,
                                   os.fsencode(log_file_name), bool(auto_flush)), ups=(upstream,))
        self.__dict__["_log_file_name"] = log_file_name

    def flush(self):
        """Writes buffered rows to the file."""
        with _Hold(self) as h:
            _lib.check(_lib.rmm_logging_adaptor_flush(h))

    def get_file_name(self):
        """The log file's absolute path."""
        try:
            return self.__dict__["_log_file_name"]
        except KeyError:
            raise _errors.not_initialized(self) from None


def _stats(fn, h):
    out = (ctypes.c_int64 * 6)()
    st = fn(h, out)
    return st, Statistics(*out)


class StatisticsResourceAdaptor(UpstreamResourceAdaptor):
    """Counts bytes and allocations (current, peak, total) over a stack of counter scopes."""
    __slots__ = ()

    def __init__(self, upstream_mr):
        upstream = self._set_upstream(upstream_mr)
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmm_statistics_adaptor_create, uh), ups=(upstream,))

    @property
    def allocation_counts(self):
        """The innermost scope's Statistics (current_bytes, current_count, peak_bytes,
        peak_count, total_bytes, total_count)."""
        with _Hold(self) as h:
            st, s = _stats(_lib.rmmh_statistics_get, h)
        _lib.check(st)
        return s

    def push_counters(self):
        """Starts a nested scope with zeroed counters; returns the statistics before the push.
        At most 16,383 nested scopes (rmm.h's limit; RMM's stack has none): past them,
        InvalidArgumentError."""
        before = self.allocation_counts
        with _Hold(self) as h:
            _lib.check(_lib.rmm_statistics_push(h))
        return before

    def pop_counters(self):
        """Ends the innermost scope and returns its counters; peaks fold outward as in RMM.
        IndexError for the outermost scope."""
        with _Hold(self) as h:
            st, s = _stats(_lib.rmmh_statistics_pop, h)
        if st == INVALID_ARGUMENT:
            raise IndexError("cannot pop the last counter pair")
        _lib.check(st)
        return s


class TrackingResourceAdaptor(UpstreamResourceAdaptor):
    """Keeps every outstanding allocation (address, size, stream and, with capture_stacks, the
    stack that made it)."""
    __slots__ = ()

    def __init__(self, upstream_mr, capture_stacks=False):
        upstream = self._set_upstream(upstream_mr)
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmm_tracking_adaptor_create, uh,
                                   bool(capture_stacks)), ups=(upstream,))

    def _get(self):
        nbytes, count = ctypes.c_size_t(), ctypes.c_size_t()
        with _Hold(self) as h:
            _lib.check(_lib.rmm_tracking_get(h, ctypes.byref(nbytes), ctypes.byref(count)))
        return nbytes.value, count.value

    def get_allocated_bytes(self):
        """Outstanding requested bytes."""
        return self._get()[0]

    def get_outstanding_allocations_str(self):
        """RMM's report: one line per outstanding allocation, by address, `0x...: N B`, and
        with stacks captured ` : callstack:` and the frames after it; "" when none. (rmm.h's own
        report, rmm_tracking_report, adds a header and each block's stream: rewritten here into
        RMM's layout, which code that parses the report expects; session 31.)"""
        if self._get()[1] == 0:
            return ""
        with _Hold(self) as h:
            text = _lib.rmmh_tracking_report(h)
        if not text:
            raise _lib.error(_lib.rmm_last_status())
        try:
            report = ctypes.string_at(text).decode("utf-8", "replace")
        finally:
            _lib.rmmh_free_string(text)
        return _rmm_tracking_layout(report)

    def log_outstanding_allocations(self):
        """Logs get_outstanding_allocations_str() at debug level (Python logger "rmmh")."""
        _log.debug("Outstanding Allocations: %s", self.get_outstanding_allocations_str())


_TRACKED_LINE = re.compile(r"^(0x[0-9a-fA-F]+): (\d+) B(?:, stream \S+)?$")


def _rmm_tracking_layout(report):
    """rmm_tracking_report's text (a header line, then per block `0x...: N B, stream S` and, with
    stacks, ` : callstack:` and frames) in RMM's layout, sorted by address."""
    blocks, current = [], None
    for line in report.splitlines()[1:]:
        m = _TRACKED_LINE.match(line)
        if m:
            current = [int(m.group(1), 16), "%s: %s B" % (m.group(1), m.group(2)), []]
            blocks.append(current)
        elif current is not None and line.strip() != ": callstack:":
            current[2].append(line)
    out = []
    for _, head, frames in sorted(blocks, key=lambda b: b[0]):
        out.append(head + (" : callstack:\n" + "\n".join(frames) if frames else "") + "\n")
    return "".join(out)


class LimitingResourceAdaptor(UpstreamResourceAdaptor):
    """Caps the bytes outstanding (counted in multiples of 256): MemoryError beyond the limit."""
    __slots__ = ()

    def __init__(self, upstream_mr, allocation_limit):
        upstream = self._set_upstream(upstream_mr)
        limit = _lib.as_size(parse_bytes(allocation_limit), "allocation_limit")
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmm_limiting_adaptor_create, uh, limit),
                      ups=(upstream,))

    def _get(self):
        a, lim = ctypes.c_size_t(), ctypes.c_size_t()
        with _Hold(self) as h:
            _lib.check(_lib.rmm_limiting_get(h, ctypes.byref(a), ctypes.byref(lim)))
        return a.value, lim.value

    def get_allocated_bytes(self):
        """Bytes allocated through this adaptor, each rounded up to 256."""
        return self._get()[0]

    def get_allocation_limit(self):
        """The limit in bytes."""
        return self._get()[1]

    def set_allocation_limit(self, allocation_limit):
        """Changes the limit; what is allocated beyond a lower one stays allocated, and requests
        fail until enough is freed. rmmh only."""
        limit = _lib.as_size(parse_bytes(allocation_limit), "allocation_limit")
        with _Hold(self) as h:
            _lib.check(_lib.rmm_limiting_set_limit(h, limit), "set_allocation_limit")


# Failure callbacks in flight on one thread (_lib._tls.failure_depth), at most: one more is not
# called, and its allocation raises InvalidArgumentError. rmm.h bounds a CallbackMemoryResource's
# callbacks so (RMM_MAX_CALLBACK_DEPTH, 16), not a failure callback's ("the callback decides"): a
# callback that allocates from its own adaptor nested C frames until Python's recursion limit, and
# under a raised limit (sys.setrecursionlimit(200000)) overflowed the C stack, a segfault.
_MAX_FAILURE_CALLBACK_DEPTH = 16
_tls = _lib._tls


class FailureCallbackResourceAdaptor(UpstreamResourceAdaptor):
    """On out-of-memory calls callback(nbytes) and retries while it returns True. An exception
    from the callback is re-raised by the allocation. At most 16 failure callbacks may be in
    flight on a thread (a callback that allocates from its own adaptor, whose failures call it
    again): one more is not called, and its allocation raises InvalidArgumentError."""
    __slots__ = ()

    def __init__(self, upstream_mr, callback):
        upstream = self._set_upstream(upstream_mr)
        if not callable(callback):
            raise TypeError("callback must be callable")

        def on_failure(nbytes, retry_out):
            # (answers through retry_out, which holds "no retry" until written: see
            # _lib.FAILURE_CALLBACK) the upstream's kept exception (a CallbackMemoryResource's)
            # is set aside while the callback runs, so that a failing rmmh call of its own does
            # not take it; kept again if the adaptor then fails (no retry), dropped if it retries.
            # Nothing may escape this function, as in CallbackMemoryResource's allocate: at the
            # recursion limit (a callback that allocates from its own adaptor) any call can raise
            # RecursionError, which ctypes printed as unraisable (stash_pending was outside the
            # try, and set_pending in the handler makes calls too)
            try:
                depth = getattr(_tls, "failure_depth", 0)
                if depth >= _MAX_FAILURE_CALLBACK_DEPTH:
                    raise _lib.invalid(
                        "FailureCallbackResourceAdaptor: %d failure callbacks in flight on this "
                        "thread already: the callback for %d bytes is not called (a callback that "
                        "allocates from its own adaptor again, a cycle)"
                        % (_MAX_FAILURE_CALLBACK_DEPTH, nbytes))
                _tls.failure_depth = depth + 1
                try:
                    kept = _lib.stash_pending()
                    retry = bool(callback(nbytes))
                    if not retry:
                        _lib.restore_pending(kept)
                finally:
                    _tls.failure_depth = depth
            except BaseException as e:
                # rmm.h calls the callback only on OUT_OF_MEMORY, and no retry makes the adaptor
                # fail with that status: the allocation re-raises e (see _lib.error)
                try:
                    _lib.set_pending(e, OUT_OF_MEMORY)
                except BaseException:  # (no room for a call: kept unchecked, see _lib._take_pending)
                    _lib._tls.pending = (e, OUT_OF_MEMORY, None, None)
                return
            retry_out[0] = 1 if retry else 0

        cb = _lib.FAILURE_CALLBACK(on_failure)
        _note_callback_resource()  # (allocations make room for the callback's call: see _room)
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmmh_failure_callback_adaptor_create, uh, cb),
                      ups=(upstream,))
        self._keep_callbacks((cb, callback))
        self.__dict__["_callback"] = callback


class PrefetchResourceAdaptor(UpstreamResourceAdaptor):
    """Prefetches each allocation to the device on the allocating stream (managed memory)."""
    __slots__ = ()

    def __init__(self, upstream_mr):
        upstream = self._set_upstream(upstream_mr)
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmm_prefetch_adaptor_create, uh), ups=(upstream,))


class AlignedResourceAdaptor(UpstreamResourceAdaptor):
    """Requests of at least alignment_threshold bytes get ``alignment`` (a power of two).
    rmmh only (RMM has it in C++)."""
    __slots__ = ()

    def __init__(self, upstream_mr, alignment, alignment_threshold=65536):
        upstream = self._set_upstream(upstream_mr)
        align = _lib.as_size(alignment, "alignment")
        threshold = _lib.as_size(alignment_threshold, "alignment_threshold")
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmm_aligned_adaptor_create, uh, align, threshold),
                      ups=(upstream,))


class ThreadSafeResourceAdaptor(UpstreamResourceAdaptor):
    """One mutex around every call of the upstream. rmmh only (RMM has it in C++)."""
    __slots__ = ()

    def __init__(self, upstream_mr):
        upstream = self._set_upstream(upstream_mr)
        with _Hold(upstream) as uh:  # (held through the create: _lifetime.Hold)
            self._own(_lib.created(_lib.rmm_thread_safe_adaptor_create, uh),
                      ups=(upstream,))


# ---- current and per-device resources ----------------------------------------------------

# device -> the Python resource set for it (or the wrapper of the library default). The C table
# holds the same resources; this dict keeps them alive while they are set. DeviceBuffer reads it.
_per_device_mrs: dict[int, DeviceMemoryResource] = {}
_table_lock = threading.RLock()
_table_lock_is_mine = getattr(_table_lock, "_is_owned", lambda: False)  # (CPython's RLock has it)


def _current_device():
    d = _lib.rmmh_get_device()
    if d < 0:
        raise _lib.error(_lib.rmm_last_status(), "cannot read the current device")
    return d


def _set_device(device):
    _lib.check(_lib.rmm_set_device(device))


def _default_resource(device):
    """A non-owning CudaMemoryResource over what the C table holds for device (the library's
    static default unless C code set another)."""
    h = _lib.rmm_get_per_device_resource(device)
    if not h:
        raise _lib.error(_lib.rmm_last_status(), "device %d" % device)
    mr = CudaMemoryResource.__new__(CudaMemoryResource)
    mr._borrow(h)
    return mr


def get_per_device_resource(device):
    """The resource of ``device`` (by default a CudaMemoryResource). Using it while another
    device is current is undefined, as in RMM."""
    device = _lib.as_int(device, "device")
    mr = _per_device_mrs.get(device)
    if mr is None:
        with _table_lock:
            mr = _per_device_mrs.get(device)
            if mr is None:
                mr = _per_device_mrs[device] = _default_resource(device)
    return mr


def set_per_device_resource(device, mr):
    """Makes ``mr`` the resource of ``device`` (in the C table shared with every user of the
    library, and here, which keeps it alive until it is replaced, or, when PyTorch or CuPy still
    hold blocks of it through rmmh.allocators, until they have freed them)."""
    device = _lib.as_int(device, "device")
    _check_mr(mr, "mr")
    with _table_lock:
        # (checked again under the lock mr.__del__ decides under: a finalizer called by hand on
        # another thread either ran first, and mr is refused here, or runs after and finds mr
        # current; and a resource whose finalizer ran, its C object kept by its blocks, is
        # refused: the table would keep its handle past the last block. Both reached the C
        # table with a freed resource until session 41)
        if not mr._refs or getattr(mr, "_released", False):
            raise _lib.error_for_destroyed(mr)
        if not _lib.rmm_set_per_device_resource(device, mr._h):
            raise _lib.error(_lib.rmm_last_status(), "set_per_device_resource(%d)" % device)
        previous = _per_device_mrs.get(device)
        _per_device_mrs[device] = mr
        if previous is not None and previous is not mr:
            _retire(previous)
        _sweep_hook_held()


def _reset_per_device_resource(device):
    with _table_lock:
        _lib.rmm_set_per_device_resource(device, None)
        previous = _per_device_mrs.pop(device, None)
        if previous is not None:
            _retire(previous)


# ---- resources the frameworks' hooks still hold blocks of ------------------------------------
# PyTorch's and CuPy's C hooks (src/rmmh_hooks.c, rmmh.allocators) allocate from the resource in
# the C table and count, per resource, the blocks they have not freed. A resource taken out of the
# table while that count is not zero stays here, alive, until the count drops to zero: the next
# table change, a garbage collection, or rmmh.allocators.release_held_resources() lets it go.
_hook_held: list[DeviceMemoryResource] = []
# The live resources whose C object calls Python (see DeviceMemoryResource._keep_callbacks)
_callback_owners: "weakref.WeakSet[DeviceMemoryResource]" = weakref.WeakSet()
_gc_sweep_installed = False


def _is_current(mr):
    return any(m is mr for m in list(_per_device_mrs.values()))


def _retire(mr):
    """mr just left the table of a device (under _table_lock): keep it while hooks hold blocks."""
    if _is_current(mr):
        return
    h = getattr(mr, "_h", None)
    # rmmh_hooks_outstanding fences against a hook that read the table before the change
    if h and _lib.rmmh_hooks_outstanding(h) > 0:
        _hook_held.append(mr)
        _install_gc_sweep()


def _sweep_hook_held():
    """Lets go of the held resources the hooks no longer use (current ones are held by the table
    already); returns how many are still held."""
    if not _hook_held:
        return 0
    with _table_lock:
        keep = [mr for mr in _hook_held
                if not _is_current(mr) and _lib.rmmh_hooks_outstanding(mr._h) > 0]
        dropped = [mr for mr in _hook_held if not any(mr is k for k in keep)]
        _hook_held[:] = keep
    del dropped  # the last references of these go here, outside the lock's bookkeeping
    return len(keep)


def _gc_sweep(phase, info):
    # not on a thread that holds the table's lock already (the lock is reentrant): a collection
    # inside a sweep, or inside a change of the table, would rewrite _hook_held under the code
    # iterating or changing it (red team 28's suspicion: an entry skipped, a resource the hooks
    # still use let go)
    if phase == "stop" and _hook_held and not _table_lock_is_mine() and \
            _table_lock.acquire(blocking=False):
        try:
            _sweep_hook_held()
        except Exception:  # interpreter shutdown
            pass
        finally:
            _table_lock.release()


def _keep_at_exit():
    """Runs at interpreter exit (atexit: before module globals are cleared). From then on a
    resource that PyTorch's or CuPy's hooks still hold blocks of is never destroyed: the
    frameworks free their tensors and arrays later in shutdown, when the modules holding them are
    cleared, in no set order with this module, and each such free goes to the block's own
    resource. Destroying it first would be a use after free; leaking it costs nothing, since the
    process is ending and its device memory goes with it. Resources the hooks hold nothing of
    are destroyed as usual (a logging adaptor still closes its file)."""
    try:
        for mr in list(_callback_owners):  # the callables shutdown's frees still call: rooted
            refs = mr._refs
            if refs and getattr(refs[0], "keep", True) is None:
                refs[0].keep = mr.__dict__.get("_keep")
    except Exception:  # never fail the interpreter's exit
        pass
    try:
        with _table_lock:
            candidates = list(_per_device_mrs.values()) + list(_hook_held)
        for mr in candidates:
            h = getattr(mr, "_h", None)
            refs = getattr(mr, "_refs", None)
            if h and refs and _lib.rmmh_hooks_outstanding(h) > 0:
                refs.append(True)  # a hold nobody releases
    except Exception:  # never fail the interpreter's exit
        pass


atexit.register(_keep_at_exit)


def _install_gc_sweep():
    global _gc_sweep_installed
    if not _gc_sweep_installed:
        import gc
        gc.callbacks.append(_gc_sweep)
        _gc_sweep_installed = True


def set_current_device_resource(mr):
    """Makes ``mr`` the resource of the current device."""
    _check_mr(mr, "mr")
    set_per_device_resource(_current_device(), mr)


def get_current_device_resource():
    """The resource of the current device."""
    return get_per_device_resource(_current_device())


def get_per_device_resource_type(device):
    """The type of the resource of ``device``."""
    return type(get_per_device_resource(device))


def get_current_device_resource_type():
    """The type of the resource of the current device."""
    return type(get_current_device_resource())


def is_initialized():
    """True: rmmh's resources are usable once the package is imported (RMM's test)."""
    return all(getattr(mr, "_refs", None) is not None for mr in list(_per_device_mrs.values()))


def available_device_memory():
    """(free, total) bytes of the current device."""
    f, t = ctypes.c_size_t(), ctypes.c_size_t()
    _lib.check(_lib.rmm_available_device_memory(ctypes.byref(f), ctypes.byref(t)))
    return (f.value, t.value)


def _initialize(pool_allocator=False, managed_memory=False, initial_pool_size=None,
                maximum_pool_size=None, devices=0, logging=False, log_file_name=None):
    """rmmh.reinitialize's work: new resources for `devices`, every other device back to its
    default."""
    upstream = ManagedMemoryResource if managed_memory else CudaMemoryResource
    if pool_allocator:
        # checked as PoolMemoryResource checks them, before any resource changes (a red team's
        # find: a size that is no multiple of 256, or negative, raised with every device reset)
        kwargs = dict(
            initial_pool_size=None if initial_pool_size is None
            else _pool_size_arg(initial_pool_size, "initial_pool_size"),
            maximum_pool_size=None if maximum_pool_size is None
            else _pool_size_arg(maximum_pool_size, "maximum_pool_size"))
        if (kwargs["initial_pool_size"] is not None and kwargs["maximum_pool_size"] is not None
                and kwargs["initial_pool_size"] > kwargs["maximum_pool_size"]):
            raise _lib.invalid("Initial pool size exceeds the maximum pool size")
        conf = os.environ.get("RMM_ALLOC_CONF")
        if conf:
            # RMM_ALLOC_CONF over the arguments (rmm.h's rmm_pool_desc_from_env), parsed before any
            # resource is replaced; an initial size neither gives is the pool's default (half the
            # free memory with geometric growth, else none), at most the maximum
            init, maxi = kwargs["initial_pool_size"], kwargs["maximum_pool_size"]
            unset = _lib.SIZE_MAX
            fields = (ctypes.c_size_t * 7)(unset if init is None else init,
                                           _c_maximum(maxi), _GROWTH["geometric"],
                                           0, 0, 0, 0)
            _lib.check(_lib.rmmh_pool_conf(None, fields), "reinitialize")
            growth = {v: k for k, v in _GROWTH.items()}[fields[2]]
            # (extent: too, until 2026-12-03 parsed and dropped: a red team's find)
            pool_args = dict(growth=growth, growth_granularity=fields[3] or None,
                             streams_outlive_pool=bool(fields[4]), virtual_size=fields[5] or None,
                             virtual_extent_size=fields[6] or None)
            initial, maximum = fields[0], fields[1] or None
            # the combinations PoolMemoryResource refuses, refused before any resource changes (a
            # red team's find, 2026-11-29: growth:virtual with an initial size raised with every
            # device's resource reset)
            if growth == "virtual" and initial not in (unset, 0):
                raise _lib.invalid(
                    "reinitialize: RMM_ALLOC_CONF=%r asks growth:virtual, which takes no initial "
                    "pool size, and initial_pool_size or initial: gives %d bytes" % (conf, initial))
            if initial != unset and maximum is not None and initial > maximum:
                raise _lib.invalid("reinitialize: RMM_ALLOC_CONF=%r: the initial pool size (%d) "
                                   "exceeds the maximum (%d)" % (conf, initial, maximum))

        def make():
            if not conf:
                return PoolMemoryResource(upstream(), **kwargs)
            start = initial
            if start == unset:
                start = _default_initial_pool_size(growth)
                if maximum is not None:
                    start = min(start, maximum)
            return PoolMemoryResource(upstream(), start, maximum, **pool_args)
    else:
        make = upstream
    if logging and log_file_name is None and not os.getenv("RMM_LOG_FILE"):
        raise ValueError("RMM log file must be specified either using log_file_name= argument "
                         "or RMM_LOG_FILE environment variable")
    if logging and log_file_name is not None:
        log_file_name = _log_file_name_arg(log_file_name)  # checked before any resource changes
    if logging:
        # each device's log is <stem>.dev<N><suffix> (_append_id): its directory must take a new
        # file, checked before any resource changes (rmm.h opens it with the adaptor)
        log_name = _log_name(log_file_name)
        folder = os.path.dirname(os.path.abspath(_append_id(log_name, 0)))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK | os.X_OK):
            raise error_for(_IO, "reinitialize: cannot write a log file in %r" % folder)

    original = _lib.rmmh_get_device()
    if original < 0 or _lib.rmmh_device_count() == 0:
        warnings.warn("rmmh.reinitialize: no usable device (%s)" % _lib.last_error())
        return
    if devices is None:
        devices = [0]
    elif isinstance(devices, int):
        devices = [devices]
    devices = [_lib.as_int(d, "device") for d in devices]
    # a device that does not exist, refused before any resource changes (a red team's find,
    # 2026-11-29: every device was reset, and the devices before it in the list set up)
    _check_devices(devices, "reinitialize")
    created = []
    if logging:
        created = _check_log_files(log_name, devices, "reinitialize")
    with _table_lock:
        # the resources set now, weakly: reset first, so that a new pool can have the memory an
        # old one gives back, as RMM does; put back on failure where something else kept them
        previous = {d: weakref.ref(mr) for d, mr in _per_device_mrs.items()}
        for d in list(_per_device_mrs):
            _reset_per_device_resource(d)
        set_up = []
        made = []  # (device, its new resource)
        new = None
        try:
            for device in devices:
                _set_device(device)
                made.append((device, make()))
            # the log files are opened (and truncated) once every device's resource exists: a
            # pool that cannot be made leaves untouched the log of an adaptor put back below (red
            # team 48: an earlier device's new adaptor had emptied it, and its later rows went
            # after a run of NUL bytes). A log file that cannot be opened after the checks above
            # passed (no descriptors left, the folder changed since) still leaves the earlier
            # devices' files truncated: what they held cannot be restored
            if logging:
                for i, (device, new) in enumerate(made):
                    _set_device(device)
                    made[i] = (device, LoggingResourceAdaptor(new, log_file_name))
            for device, new in made:
                set_per_device_resource(device, new)
                set_up.append(device)
        except BaseException:
            del made[:]  # (the new resources go now, not with the traceback)
            new = None
            # a resource that cannot be made (a pool too large for the device): the devices set
            # up here go back to their defaults and the resources set before that still live come
            # back (every device was left reset, and the earlier ones of the list set up, until
            # 2026-11-29: a red team's find); the empty log files the check made go
            for d in set_up:
                _reset_per_device_resource(d)
            for d, ref in previous.items():
                old = ref()
                if old is not None:
                    try:
                        set_per_device_resource(d, old)
                    except Exception:  # noqa: S110  (finalized meanwhile: the default stays)
                        pass
            _remove_files(created)
            raise
        finally:
            _set_device(original)


def _log_name(log_file_name):
    """The name LoggingResourceAdaptor takes: log_file_name, or $RMM_LOG_FILE for None only ("" is
    a name, as in RMM: ".dev<N>" in the working directory; the checks took $RMM_LOG_FILE for it, and
    made an empty file of that name, or raised a TypeError about None: red team 48)."""
    return log_file_name if log_file_name is not None else (os.getenv("RMM_LOG_FILE") or None)


def _check_devices(devices, who):
    """Raises InvalidDeviceError (an InvalidArgumentError, and the CUDARuntimeError with status
    101, cudaErrorInvalidDevice, that RMM's setDevice raises there) if one of `devices` does not
    exist."""
    from ._cuda.gpu import InvalidDeviceError
    count = _lib.rmmh_device_count()  # (reinitialize, its caller, warns and returns if it is 0)
    for device in devices:
        if not 0 <= device < count:
            raise InvalidDeviceError("%s: device %d does not exist (%d devices)" % (who, device, count))


def _check_log_files(log_file_name, devices, who):
    """Raises rmmh's IO error if a device's log file (<stem>.dev<N><suffix>) cannot be opened for
    writing (a red team's find, 2026-11-29: it raised with every device's resource reset): each is
    opened to append, which truncates nothing, and those this made are removed again if one
    fails (a review's find: a dangling link passed a check by os.path, and the adaptor's open of
    the next device's file failed after the first device's file was truncated). Returns the paths
    it made, for the caller to remove if what follows fails."""
    made = []
    if log_file_name is None:
        return made  # (the adaptor raises RMM's error for a missing name)
    for device in devices:
        path = os.path.abspath(_append_id(log_file_name, device))
        existed = os.path.lexists(path)
        try:
            with open(path, "a"):
                pass
        except OSError as e:
            _remove_files(made)
            raise error_for(_IO, "%s: cannot write the log file %r: %s" % (who, path, e.strerror or e)) from None
        if not existed:
            made.append(path)
    return made


def _remove_files(paths):
    for path in paths:
        try:
            os.remove(path)
        except OSError:
            pass


def _flush_logs():
    """Flushes every per-device logging adaptor."""
    for mr in list(_per_device_mrs.values()):
        if isinstance(mr, LoggingResourceAdaptor):
            mr.flush()


def enable_logging(log_file_name=None):
    """Wraps each device's resource (device 0 if none was set) in a LoggingResourceAdaptor that
    writes ``<stem>.dev<id><suffix>`` (log_file_name, default $RMM_LOG_FILE)."""
    if log_file_name is not None:
        log_file_name = _log_file_name_arg(log_file_name)
    with _table_lock:
        devices = list(_per_device_mrs) or [0]
        original = _current_device()
        # every device's adaptor made before any is installed, each file checked first: all
        # devices log, or none changes (a red team's find, 2026-11-29: a later device's file that
        # could not be opened left the earlier devices wrapped)
        todo = [d for d in devices if not isinstance(get_per_device_resource(d), LoggingResourceAdaptor)]
        created = _check_log_files(_log_name(log_file_name), todo, "enable_logging")
        made = []
        try:
            for device in todo:
                if device != original:
                    _set_device(device)  # the file name and the adaptor are the device's
                try:
                    made.append((device, LoggingResourceAdaptor(get_per_device_resource(device), log_file_name)))
                finally:
                    if device != original:
                        _set_device(original)
        except BaseException:
            for _, adaptor in made:  # (closed now, not when the collector gets to them)
                adaptor.__del__()
            del made[:]
            _remove_files(created)
            raise
        for device, adaptor in made:
            set_per_device_resource(device, adaptor)


def disable_logging():
    """Removes the logging adaptors enable_logging or reinitialize(logging=True) added."""
    with _table_lock:
        for device, mr in list(_per_device_mrs.items()):
            if isinstance(mr, LoggingResourceAdaptor):
                set_per_device_resource(device, mr.get_upstream())


def get_log_filenames():
    """{device: log file name, or None where the device's resource does not log}."""
    return {d: mr.get_file_name() if isinstance(mr, LoggingResourceAdaptor) else None
            for d, mr in list(_per_device_mrs.items())}


del Record
