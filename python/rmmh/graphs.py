"""CUDA-graph capture with rmmh memory: graph pools (rmm.h's ``rmm_graph_pool_create``).

Work captured into a CUDA graph keeps using the addresses it allocated every time the graph
launches. While a stream is registered with a GraphPool (``with pool.capture(stream):``), every
allocation rmmh makes on that stream (DeviceBuffer, the CuPy, Numba and PyTorch hooks) comes from
the graph pool, whatever resource is current, and no other work ever gets that memory; it returns
to the upstream resource when ``release()`` says the graphs are gone. Inside a capture the pool makes
no CUDA call, so it never invalidates the capture; past its reserve it grows from a cudaMalloc or
async upstream on a stream of its own, and with any other upstream (a pool among them) raises
``rmmh.OutOfMemoryError`` (a MemoryError) saying to give a larger reserve.

    pool = rmmh.GraphPool(reserve="64MiB")
    with pool.capture(stream):          # enter before, leave after the framework's capture
        with torch.cuda.graph(g, stream=torch_stream):
            ...
    g.replay()
    del g; pool.release()

Graphs that share a pool may reuse each other's freed blocks: replay them one at a time in one
stream order (PyTorch's rule for shared pools), or give each its own pool. A free, on a captured
stream, of memory from before the capture is made when the capture's registration ends.
"""
import ctypes
import threading

from . import _errors, _lib, _lifetime
from ._helpers import parse_bytes
from ._lifetime import release as _release
from ._stream import as_stream

_lifetime.after_collection.append(lambda: _prune_kept_upstreams(blocking=False))

__all__ = ["GraphPool"]

# upstream resources of pools released while blocks were live or a capture was registered: the C
# pool returns its memory to them later (its last block's free, the end of those registrations),
# so they must outlive it: each entry is the pool's hold on its upstream's C resource, let go by
# _prune_kept_upstreams once rmm.h says no released pool over that upstream is left
# (rmm_graph_pools_pending). Until 2026-11-30 they were kept for the life of the process, with
# their memory (red team 29: every later reinitialize of a large pool ran out of memory).
_kept_upstreams: list = []
# Held around each rmm_capture_begin and rmm_capture_end with the count of registrations
# (_lifetime.captures, all pools), and around release()'s destroy and its reading of that count:
# so the count is C's. (Until 2026-11-28 the count changed outside the C calls, which let the GIL
# go: a release() in between read no registration while C had one, let the upstream go, and the
# registration's end then returned the pool's memory to a destroyed resource; a red team's find.)
# Reentrant: a free that rmm_capture_end makes may call a Python resource that uses a GraphPool.
_lock = threading.RLock()
# rmm_capture_end's failures that may keep the stream registered: RMM_ERROR_OUT_OF_MEMORY (host
# memory), RMM_ERROR_CUDA (the current device unread, for the per-thread default stream); either
# may also be a deferred free's, made after the registration ended
_MAY_STAY_REGISTERED = (4, 1)
# Registrations whose end failed twice with the stream still registered (host memory still out,
# or the per-thread stream's device unread): [pool, C stream handle, a Hold on the stream, the
# registering thread or None], still counted (C still defers the frees on the stream). Their end is
# tried again, under _lock, at the next GraphPool.capture and release() (the per-thread stream's
# only on its thread). Before, nothing ended them: the pool was never released, the stream never
# registered again, and every C object destroyed later waited for ever.
_unended: list = []


def _end(gp, h):
    """rmm_capture_end of the C stream h on the C graph pool gp: (its status, its message, whether
    the registration ended). OUT_OF_MEMORY or CUDA: the stream still registered, or a deferred
    free that failed so after the registration ended: asked again, a registration that ended is
    not found (INVALID_ARGUMENT), one still there ends now or not."""
    st = _lib.rmm_capture_end(gp, h)
    message = _lib.last_error() if st else ""
    return st, message, st not in _MAY_STAY_REGISTERED or _lib.rmm_capture_end(gp, h) not in _MAY_STAY_REGISTERED


def _end_unended():
    """Tries again the ends of _unended's registrations (see there). Under _lock."""
    me = threading.get_ident()
    for entry in list(_unended):
        pool, h, hold, thread = entry
        if thread is not None and thread != me:
            continue
        if not _end(pool._h, h)[2]:
            continue  # (still registered; a deferred free's failure is logged by rmm.h)
        _unended.remove(entry)
        pool._registered -= 1
        pool._uncount()
        hold.__exit__(None, None, None)


def _prune_kept_upstreams(blocking=True):
    """Lets go of the holds of _kept_upstreams whose released pools have all given their memory
    back. Called by GraphPool's create and release, rmm.reinitialize, and after each garbage
    collection (blocking=False there: skipped if another thread holds _lock). O(kept upstreams)
    calls into rmm.h, each O(graph pools)."""
    if not _kept_upstreams or not _lock.acquire(blocking):
        return
    try:
        counts = {}
        for mr in _kept_upstreams:
            counts[id(mr)] = counts.get(id(mr), 0) + 1
        done, kept = [], []
        for mr in _kept_upstreams:  # (by identity: a resource's == may be its own)
            key = id(mr)
            if counts[key] > _lib.rmm_graph_pools_pending(mr._h):
                counts[key] -= 1
                done.append(mr)
            else:
                kept.append(mr)
        _kept_upstreams[:] = kept
    finally:
        _lock.release()
    for mr in done:  # (outside the lock: the last hold's destroy may call Python callbacks)
        _release(mr._refs)


class GraphPool:
    """A graph-private pool over ``upstream`` (default: the current device resource), taking
    ``reserve`` bytes (an int or a string such as "64MiB") from it now."""

    def __init__(self, reserve=0, upstream=None):
        if "_upstream" in self.__dict__:  # a second call would leak the first C pool
            raise TypeError("GraphPool.__init__ may be called once")
        from ._memory_resource import _check_mr, get_current_device_resource
        mr = get_current_device_resource() if upstream is None else _check_mr(upstream, "upstream")
        size = _lib.as_size(parse_bytes(reserve), "reserve")
        out = ctypes.c_void_p()
        _prune_kept_upstreams()
        _lib.clear_pending()  # (its reserve is no rmmh_alloc: an older callback exception is stale)
        with _lifetime.Hold(mr) as h:  # (held through the create, which allocates from it, and until
            # the pool's own hold below is taken: a finalizer called by hand on another thread
            # destroyed it under the create until session 41)
            _lib.check(_lib.rmm_graph_pool_create(ctypes.byref(out), h, size), "GraphPool")
            # a hold on the upstream's C resource (see _lifetime): when the collector finalizes both
            # in one cycle, the upstream's finalizer may run first, and the pool's reserve must still
            # have a resource to go back to
            mr._refs.append(True)
        self._h = out.value
        self._upstream = mr
        self._registered = 0

    __getattr__ = _errors.init_guard("_h", "_upstream", "_registered")

    def _handle(self):
        if not self._h:
            raise ValueError("this GraphPool was released")
        return self._h

    def capture(self, stream):
        """Registers ``stream`` (a Stream, a handle, a CuPy, Numba or PyTorch stream) for the
        block: its allocations come from this pool. Leave it after the capture has ended. The
        per-thread default stream's registration is its thread's own (rmm.h's rule): leaving it on
        another thread raises InvalidArgumentError and changes nothing, and the thread that
        entered can still leave it."""
        return _Capture(self, stream)

    def _held(self, s, handle):
        """capture's generator: the C stream of s held from the registration to its end
        (_lifetime.Hold: a finalizer called by hand on another thread during the capture destroys it
        after rmm_capture_end, not under the calls; rmm.h would keep a registered stream, but the
        handle passed to rmm_capture_end must still name it; one already destroyed is refused before
        anything is registered). Its handle goes in the list `handle`. In the generator, so that a
        capture dropped unleft lets its hold go when collected, as it ends the registration."""
        with _lifetime.Hold(s, "C stream") as h:
            handle.append(h)
            yield from self._captured(h, s)

    def _captured(self, h, s):
        """capture's registration of the C stream h (held by _held), the block, and its end."""
        thread = threading.get_ident() if h == _PER_THREAD_HANDLE else None
        with _lock:
            if _unended:
                _end_unended()
            # counted before C registers it: from the moment rmm_capture_begin registers the stream
            # (it lets the GIL go), a buffer dropped on it on another thread has its free deferred,
            # so its resource must wait (a review's find: counted after, it did not, 4 crashes in 20)
            _lifetime.captures[0] += 1
            try:
                _lib.check(_lib.rmm_capture_begin(self._handle(), h), "GraphPool.capture")
            except BaseException:
                self._uncount()
                raise
            self._registered += 1
        try:
            yield self
        finally:
            if thread is not None and threading.get_ident() != thread:
                # (red team 47: ended here, C answered INVALID_ARGUMENT and kept the registration,
                # which rmmh counted as ended: the pool could never be released.) Reached by a
                # capture dropped unleft and collected on another thread; _Capture refuses first.
                raise _errors.error_for(_errors.INVALID_ARGUMENT, _ELSEWHERE % thread)
            with _lock:
                st, message, ended = _end(self._h, h)
                if ended:
                    self._registered -= 1
                    self._uncount()
                else:  # (ended later: see _unended; the stream held until then)
                    _unended.append([self, h, _lifetime.Hold(s, "C stream"), thread])
                    message += " (the stream stays registered: its end is tried again at the next GraphPool.capture or release())"
            if st:
                # (the first end's message: the second call, if any, wrote its own)
                _lib.rmm_set_last_error(st, message.replace("%", "%%").encode("utf-8", "replace"))
                _lib.check(st, "GraphPool.capture")

    @staticmethod
    def _uncount():
        """One registration fewer; after the last one, what waited for the captures goes (the
        deferred frees were made by rmm_capture_end). Under _lock."""
        _lifetime.captures[0] -= 1
        if not _lifetime.captures[0]:
            _lifetime.run_deferred()

    def info(self):
        """(bytes held from upstream, bytes of live blocks)."""
        reserved, used = ctypes.c_size_t(), ctypes.c_size_t()
        with _lock:  # (release() destroys the C pool under it: read outside, a release on another
            # thread freed it under this call until session 41)
            _lib.check(_lib.rmm_graph_pool_get_info(self._handle(), ctypes.byref(reserved),
                                                    ctypes.byref(used)))
        return reserved.value, used.value

    def release(self):
        """Says the graphs that used the pool are gone: its memory returns upstream once its last
        live block is freed (now, if none is). A no-op the second time; InvalidArgumentError while
        a capture is registered."""
        with _lock:
            if not self._h:
                return
            if _unended:
                _end_unended()
            _, used = self.info()
            _lib.check(_lib.rmm_graph_pool_destroy(self._h), "GraphPool.release")
            self._h = None
            keep = used or _lifetime.captures[0]
            if keep:
                # (under the lock: appended after it, a _prune_kept_upstreams on another thread
                # between its reading of the list and its rewriting of it dropped the entry, and
                # the hold on the upstream with it was never let go; red team 50)
                _kept_upstreams.append(self._upstream)  # (and the hold stays: see _kept_upstreams)
        if not keep:
            _release(self._upstream._refs)  # the pool's memory went back: the hold goes
        _prune_kept_upstreams()

    def __reduce__(self):
        # a copy would share the C graph pool, and release() it twice
        raise TypeError("rmmh.GraphPool cannot be pickled or copied; share the object itself")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _lifetime.chain_finalizer(cls, GraphPool.__del__)

    def __del__(self):
        if getattr(self, "_h", None) and not self._registered:
            try:
                self.release()
            except Exception:
                pass


_PER_THREAD_HANDLE = 2  # cudaStreamPerThread: registered as the registering thread's own stream
# (librmmh is built with 0 as the legacy default stream, so 2 is the only per-thread handle)
_ELSEWHERE = ("GraphPool.capture: the per-thread default stream was registered by thread %d, "
              "whose registration it is; leave the capture on that thread (still registered)")


class _Capture:
    """GraphPool.capture's context manager: GraphPool._captured entered and left, and its end
    refused, with nothing changed, on a thread other than the one that registered the per-thread
    default stream (a generator's end cannot be tried again: a @contextmanager left elsewhere was
    spent, and the thread's registration stayed in C with nothing to end it)."""

    def __init__(self, pool, stream):
        self._pool = pool
        self._stream = as_stream(stream)
        self._gen = self._thread = None
        self._entered = False

    def __enter__(self):
        if self._entered:
            raise RuntimeError("GraphPool.capture: this capture was entered already")
        self._entered = True
        handle = []
        gen = self._pool._held(self._stream, handle)
        out = next(gen)  # (a failed registration: the generator has ended, its hold gone)
        if handle[0] == _PER_THREAD_HANDLE:
            self._thread = threading.get_ident()
        self._gen = gen
        return out

    def __exit__(self, *exc):
        if self._gen is None:
            return False
        if self._thread is not None and threading.get_ident() != self._thread:
            raise _errors.error_for(_errors.INVALID_ARGUMENT, _ELSEWHERE % self._thread)
        gen, self._gen = self._gen, None
        next(gen, None)  # (the registration's end, then the hold's: an error raised from here)
        return False
