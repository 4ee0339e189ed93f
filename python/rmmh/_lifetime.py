"""Destroying C objects in a safe order, whatever order Python finalizes their owners in.

A C resource must outlive its adaptors and every block allocated from it; a C stream must outlive
the blocks freed on it. Reference counting alone gets this right, but when the garbage collector
breaks a reference cycle it runs the finalizers (__del__) of all the objects in the cycle in no
particular order, so a resource's finalizer can run before that of a buffer still holding one of
its blocks. So C objects are not destroyed by their Python owner's finalizer directly: each has a
"refs" list whose bottom element is a Record (what to destroy); every holder (the owner itself,
an adaptor over it, a live buffer) pushes one token, and releasing pops one. Whoever pops the
Record, i.e. the last holder, destroys the C object and then releases what that object held.

list.append and list.pop are atomic under the GIL (and thread-safe on free-threaded builds), so
holders on different threads need no lock. The hot path (a DeviceBuffer's allocate and free)
inlines hold and release: one append and one pop.

Every refs list is also kept in _live until its Record has run. The lists, their Records and
what the Records keep (the Python callbacks a C resource calls, handed over by the resource's
finalizer: see "owners the garbage collector finalizes" below) are therefore never part of the
garbage the collector clears when it breaks a cycle (clearing would drop a callback the C
resource still calls, or lose a count): only the Python owners are.
"""

# id(refs) -> refs, for every C object not yet destroyed
_live: dict[int, list] = {}
# At interpreter exit the modules' globals become garbage, _live among them: the collector would then
# clear the callbacks its Records keep (a function's globals go NULL) while a buffer freed later in
# the same collection still calls one through C, and the process crashed on its way out (a red
# team's find: a DeviceBuffer of a CallbackMemoryResource alive at exit). One reference the
# collector cannot see makes _live a root: it and what it holds are never garbage (the dict lives
# as long as the process). Where ctypes.pythonapi is missing (not CPython), nothing is done.
try:
    import ctypes as _ctypes

    _ctypes.pythonapi.Py_IncRef(_ctypes.py_object(_live))
    del _ctypes
except (ImportError, AttributeError):  # pragma: no cover
    pass

# Streams registered for CUDA-graph capture through rmmh.graphs (all graph pools), counted under
# graphs' lock. While one is, a Record whose last holder lets go waits in _deferred, and runs when
# the last registration has ended (rmmh.graphs.GraphPool.capture): a free, on a registered stream,
# of memory that is not the graph pool's is made by rmm.h at rmm_capture_end, on the block's own
# resource, which must still exist then (a buffer dropped inside a capture was its resource's last
# holder: the resource went at once, and the deferred free crashed; a red team's find).
captures = [0]
_deferred: list = []
# What a destroy function returns when the C library kept the object for now: rmm.h's
# rmm_resource_destroy does nothing while a free deferred to rmm_capture_end would reach the
# resource (a capture registered through C directly, outside rmmh.graphs, which rmmh does not
# count; rmmh_resource_destroy asks rmm_resource_awaits_capture first). The Record waits in
# _deferred, holding what it holds, and is tried again when the next Record runs with no capture
# counted (a later destruction of any resource or stream), or at the end of rmmh's last
# registration; until then the resource lives on.
LATER = object()


def run_deferred():
    """Runs the Records that waited for the captures to end, in the order they came (graphs calls
    it, under its lock, when the last registration has ended); one that raises does not stop the
    others (the first exception is raised after all ran), and one that C keeps again waits on. CPython
    with the GIL: a Record's check of `captures` and its append are not under graphs' lock."""
    first = None
    for _ in range(len(_deferred)):  # (those there now: one C keeps again goes to the end, for later)
        try:
            record = _deferred.pop(0)  # (atomic: two threads here never take one Record both)
        except IndexError:
            break
        try:
            record.run_now()
        except BaseException as e:  # noqa: B036  (the others still run)
            if first is None:
                first = e
    if first is not None:
        raise first


class Record:
    """What to do when the last holder lets go: destroy(*args), then release each of ups."""
    __slots__ = ("destroy", "args", "ups", "keep", "key")

    def __init__(self, destroy, args=(), ups=(), keep=None):
        self.destroy = destroy
        self.args = args
        self.ups = tuple(ups)
        self.keep = keep  # Python objects the C object calls into (callbacks): kept alive with it
        self.key = None

    def run(self):
        if captures[0]:  # a capture is registered: after its end (see captures)
            _deferred.append(self)
            # read again once appended: the last registration may have ended on another thread
            # between the read above and the append, its run_deferred before the append; the
            # Record then waited, with its resource and memory, for some later destruction or
            # capture end (red team 50). Ended after the append, that end's run_deferred runs it.
            if not captures[0]:
                run_deferred()
            return
        try:
            if _deferred:  # C kept some (see LATER): their captures may have ended since
                run_deferred()
        finally:
            self.run_now()

    def run_now(self):
        later = False
        try:
            if self.destroy is not None:
                later = self.destroy(*self.args) is LATER
        finally:
            if later:  # kept by C for now, with what it holds (see LATER)
                _deferred.append(self)
            else:
                self.keep = None
                _live.pop(self.key, None)
                for up in self.ups:
                    release(up)


def new_refs(destroy, args=(), ups=(), keep=None):
    """A refs list held once, by its creating owner (whose token is the Record itself: the list
    holds one element per holder); holds each of ups."""
    for up in ups:
        up.append(True)
    record = Record(destroy, args, ups, keep)
    refs = [record]
    record.key = id(refs)
    _live[record.key] = refs
    return refs


def release(refs):
    """Lets go of one hold; the last one runs the Record."""
    token = refs.pop()
    if token is not True:
        token.run()


class Hold:
    """``with Hold(obj) as h:`` a C call on ``h`` (obj's handle, ``obj._h``) with a hold on obj's
    C object for the call, as mr.allocate takes: appended first and checked after (refs[0] is the
    Record while the C object exists), so that a finalizer called by hand on another thread while
    ctypes has let the GIL go destroys the C object after the call, not under it (session 41: the
    queries, trim, the constructors' upstreams and a stream pool's get_stream held nothing).
    Raises obj's error for a C object already destroyed (or never made), holding nothing. A
    destruction left to the release that raises is reported (run_reporting). obj's refs None:
    nothing to hold (the default streams). what: the C object's name in that error (default: as
    _lib.error_for_destroyed). About 0.4 us a call (host, CPython 3.11)."""
    __slots__ = ("obj", "refs")

    def __init__(self, obj, what=None):
        self.refs = None
        refs = getattr(obj, "_refs", False)
        if refs is not None:
            if refs is False or not refs:
                _refuse(obj, refs, what)
            refs.append(True)
            if refs[0] is True:
                refs.pop()
                _refuse(obj, refs, what)
        self.obj, self.refs = obj, refs

    def __enter__(self):
        return getattr(self.obj, "_h", None)  # (never raises: __exit__ would not run)

    def __exit__(self, *exc):
        refs = self.refs
        if refs is not None:
            self.refs = None
            token = refs.pop()  # (release_reporting written out: a call less)
            if token is not True:
                run_reporting(token, self.obj)


class _Nothing:
    """What Hold holds for no object: no refs, a NULL handle."""
    __slots__ = ()
    _refs = None
    _h = None


NOTHING = _Nothing()


def _refuse(obj, refs, what):
    from . import _errors, _lib  # (late: they import this module)
    if refs is False:  # (its __init__ never ran: made by __new__ alone)
        raise _errors.not_initialized(obj)
    raise _lib.error_for_destroyed(obj, what)


def run_reporting(token, obj):
    """Runs a Record whose last hold a call let go of after doing its work (an allocation made, a
    block freed): a finalizer called by hand on another thread meanwhile left it the destruction.
    An error of that destruction is the finalizer's, reported as Python reports a finalizer's
    (sys.unraisablehook, naming obj), so that the call's result stands: until review 40's F3 it
    replaced an allocation's result, and the block was lost."""
    try:
        token.run()
    except Exception as e:
        report_unraisable(e, obj)


def release_reporting(refs, obj):
    """release(refs) after a call that did its work (run_reporting's case): a destruction that
    raises is reported, not raised."""
    token = refs.pop()
    if token is not True:
        run_reporting(token, obj)


def report_unraisable(exc, obj, msg="Exception ignored in"):
    """Hands exc to sys.unraisablehook, as Python does for an exception a finalizer raises (and
    as the extension does, through PyErr_WriteUnraisable: the same words); a hook that raises is
    ignored, as Python ignores it there (review 41: on the ctypes path it escaped mr.allocate and
    the block was lost)."""
    args_type = next((t for t in tuple.__subclasses__() if t.__name__ == "UnraisableHookArgs"), None)
    if args_type is None:  # (another interpreter: a finalizer raising it reports it the same way)
        class _Reported:
            def __del__(self):
                raise exc
        _Reported()
        return
    try:
        _sys.unraisablehook(args_type((type(exc), exc, exc.__traceback__, msg, obj)))
    except BaseException:  # (Python's own call of the hook ignores its errors too)
        pass


# ---- owners the garbage collector finalizes -------------------------------------------------------
# A resource's Python callables (a CallbackMemoryResource's functions, a failure callback) live on
# the resource object, where the collector sees them; its finalizer hands them to its Record,
# which keeps them (a root, through _live) until the C object goes. (Until 2026-11-29 the Records
# held them from the start: callables that referred back to their owner, bound methods, made a
# cycle that was never freed, with the owner's buffers and the resource's memory: a red team's
# find.)
# When the collector frees a cycle it runs every finalizer in it, in no set order, then clears
# the objects that are still garbage: those that the callables handed to the Records do not reach.
# A resource finalized there does not let go of its C object at once, as a callback called later
# in the same collection (a buffer's free) may still use it: its hold waits until the collection
# ends (gc.callbacks, _settle_gc_held). Then the owners the collection freed let go first (no
# callback reaches them; destroying them may call callbacks, whose resources are all still there);
# then those the Records' callables still reach, each only once no Record whose callables reach
# it is left, except the Records it holds itself (it goes before them: an adaptor over a callback
# resource). Where the callables reach too much to follow, what is left lets go when it is freed
# later (weakref.finalize), as safe as before but not freed when the callables reach their owner.
# A finalizer outside a collection lets go at once, and so does one on another thread while a
# collection runs (a last reference dropped there is no object of the collection's; until
# 2026-11-30 the flag was the process's, and a pool dropped on one thread outlived its `del` until
# another thread's collection ended: rmm.reinitialize then could not reuse its memory, red team 29).
_collecting = [None]  # the thread ident of the collection running, or None
_gc_held: list = []
_REACH_LIMIT = 100000  # the most objects _reach_owners follows, per Record with callables


def defer_if_collecting(obj, refs):
    """In a collection, keeps obj's finalizer's hold on refs until it ends (see above): True."""
    if _collecting[0] != _get_ident():
        return False
    _gc_held.append((_weakref.ref(obj), refs))
    return True


def _holds(record, refs):
    """Whether a Record holds refs through its upstreams."""
    seen, todo = set(), list(record.ups)
    while todo:
        r = todo.pop()
        if r is refs:
            return True
        if not r or id(r) in seen:
            continue
        seen.add(id(r))
        if isinstance(r[0], Record):
            todo.extend(r[0].ups)
    return False


def _reach_owners(keeps, owners):
    """For each of keeps (a Record's callables), the set of ids of the objects of `owners` it
    reaches, as the collector sees them (everything gc.get_referents gives, but modules and their
    dicts, which outlive any collection), or None past _REACH_LIMIT objects per keep in all. An
    over-approximation: following less would let a resource the callables use go first (a review's
    find: a class attribute, a function attribute). One walk for all of them (Tarjan's strongly
    connected components, iterative, each component's owners the union of its members' and of the
    components it points to), so objects that many callables share are walked once: until
    2026-11-30 each Record's callables were walked on their own, and 400 owners whose callables
    shared a dict of 40,000 entries made one collection take 20 s (red team 29)."""
    modules = set()
    for m in list(_sys.modules.values()):
        d = getattr(m, "__dict__", None)
        if isinstance(d, dict):
            modules.add(id(d))
    bit = {id(o): 1 << k for k, o in enumerate(owners)}
    limit = _REACH_LIMIT * max(1, len(keeps))
    index, low, pending, mask = {}, {}, {}, {}
    on_stack = set()
    stack = []

    def skip(o):
        return id(o) in modules or isinstance(o, _types.ModuleType)

    def visit(o):
        oid = id(o)
        index[oid] = low[oid] = len(index)
        pending[oid] = bit.get(oid, 0)
        stack.append(o)
        on_stack.add(oid)
        return (o, iter(_gc.get_referents(o)))

    for root in keeps:
        if id(root) in index or skip(root):
            continue
        work = [visit(root)]
        while work:
            node, children = work[-1]
            nid = id(node)
            for child in children:
                if skip(child):
                    continue
                cid = id(child)
                if cid not in index:
                    if len(index) >= limit:
                        return None
                    work.append(visit(child))
                    break
                if cid in on_stack:  # (its component: merged when that completes)
                    if index[cid] < low[nid]:
                        low[nid] = index[cid]
                else:
                    pending[nid] |= mask[cid]
            else:
                work.pop()
                if low[nid] == index[nid]:  # a component completes: its members share one mask
                    members = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(id(w))
                        members.append(w)
                        if w is node:
                            break
                    m = 0
                    for w in members:
                        m |= pending[id(w)]
                    for w in members:
                        mask[id(w)] = m
                if work:
                    pid = id(work[-1][0])
                    if nid in on_stack:  # (the same component as its parent)
                        if low[nid] < low[pid]:
                            low[pid] = low[nid]
                        pending[pid] |= pending[nid]
                    else:
                        pending[pid] |= mask[nid]
    out = []
    for keep in keeps:
        m, ids = mask.get(id(keep), 0), set()
        while m:  # (the set bits only: most callables reach their own owner alone)
            low_bit = m & -m
            ids.add(id(owners[low_bit.bit_length() - 1]))
            m ^= low_bit
        out.append(ids)
    return out


def _settle_gc_held():
    """After a collection: lets go of the holds its finalizers kept, in the order above (one
    whose destruction raises does not stop the others; should the ordering itself fail, what is
    left lets go when its owner is freed)."""
    while _gc_held:
        items = _gc_held[:]
        del _gc_held[:len(items)]
        done = set()  # id(refs) of the holds let go of, or handed to a weakref.finalize
        try:
            _settle(items, done)
        except BaseException:  # noqa: B036  (nowhere to raise to: nothing is lost)
            for ref, refs in items:
                if id(refs) not in done:
                    _let_go_later(ref(), refs)


def _let_go_later(obj, refs):
    """Lets go of refs now if its owner is gone, else when the owner is freed."""
    if obj is None:
        _release_quietly(refs)
    else:
        try:
            _weakref.finalize(obj, release, refs).atexit = False
        except Exception:  # noqa: S110
            pass


def _settle(items, done):
    """_settle_gc_held's work for one batch of (weak owner, refs); adds to done what it handled."""
    alive = []
    for ref, refs in items:  # freed by the collection: no callable reaches them
        obj = ref()
        if obj is None:
            done.add(id(refs))
            _release_quietly(refs)
        else:
            alive.append((obj, refs))
    reaches = []  # (refs of a Record with callables, the ids of the alive owners they reach)
    with_keep = [refs for _, refs in alive if refs and isinstance(refs[0], Record) and refs[0].keep is not None]
    if with_keep:
        found = _reach_owners([refs[0].keep for refs in with_keep], [obj for obj, _ in alive])
        reaches = None if found is None else list(zip(with_keep, found))
    reached_by = {}  # id(owner): the refs of the Records whose callables reach it
    for k, ids in reaches or ():
        for i in ids:
            reached_by.setdefault(i, []).append(k)
    while alive and reaches is not None:
        left = []
        for obj, refs in alive:
            record = refs[0] if refs else None
            if any(k is not refs and k and not (isinstance(record, Record) and _holds(record, k))
                   for k in reached_by.get(id(obj), ())):
                left.append((obj, refs))  # a callable still reaches it: later
            else:
                done.add(id(refs))
                _release_quietly(refs)
        if len(left) == len(alive):
            # callables that reach each other (each reaches the other's owner): a Record with
            # callables and no holder but its owner goes first (destroying its C object calls
            # nothing) unless the callables of a Record that something still holds (so may still
            # be called) reach it
            free = [(obj, refs) for obj, refs in left
                    if len(refs) == 1 and isinstance(refs[0], Record) and refs[0].keep is not None
                    and not any(k is not refs and len(k) > 1 for k in reached_by.get(id(obj), ()))]
            if not free:
                break
            for obj, refs in free:
                done.add(id(refs))
                _release_quietly(refs)
            left = [(obj, refs) for obj, refs in left if not any(refs is r for _, r in free)]
        alive = left
    for obj, refs in alive:  # (reached by callables whose Records wait for each other)
        done.add(id(refs))
        _let_go_later(obj, refs)


def _release_quietly(refs):
    try:
        release(refs)
    except Exception:  # noqa: S110  (a finalizer's release: nowhere to raise to)
        pass


after_collection: list = []  # callables run after each collection (nothing to raise to: errors dropped)


def _gc_phase(phase, info):
    if phase == "start":
        _collecting[0] = _get_ident()  # (collections run one at a time, each on one thread)
    else:
        _collecting[0] = None
        if _gc_held:
            _settle_gc_held()
        for hook in after_collection:
            try:
                hook()
            except Exception:  # noqa: S110
                pass


import gc as _gc  # noqa: E402
from _thread import get_ident as _get_ident  # noqa: E402
import sys as _sys  # noqa: E402
import types as _types  # noqa: E402
import weakref as _weakref  # noqa: E402

try:
    _gc.callbacks.append(_gc_phase)
except AttributeError:  # pragma: no cover
    pass


def chain_finalizer(cls, base_del):
    """For an rmmh base class's __init_subclass__: if the __del__ cls resolves to (its own, or a
    mixin's before the rmmh base in its MRO) is not base_del, wraps it so that base_del, the
    base's finalizer (which lets go of the C object, the block or the holds), runs after it even
    when it does not call super().__del__(), as RMM's cdef classes free in __dealloc__ whatever a
    subclass's __del__ does (red team 28: a subclass's __del__ leaked its buffer's block, its
    pool, its C stream). A __del__ that keeps the object (stores a reference to it: a recycling
    cache) skips base_del, so the object keeps its memory, as in RMM (review 28: it came back
    empty); Python runs no finalizer twice, so such an object's block or C object is then let go
    only by the C accelerator's deallocator, where there is one. A __del__ set on the class after
    it is made is not wrapped. base_del must be safe to call twice (each is: a subclass that does
    call super().__del__() runs it twice)."""
    own = getattr(cls, "__del__", None)
    if own is None or own is base_del or getattr(own, "_rmmh_chained", False):
        return

    def __del__(self):
        before = _sys.getrefcount(self)
        try:
            own(self)
        except BaseException:  # (its traceback refers to self: not a sign that own kept it)
            base_del(self)
            raise
        if _sys.getrefcount(self) <= before:  # (not kept: more references than before)
            base_del(self)
    for name in ("__name__", "__qualname__", "__doc__"):
        try:
            setattr(__del__, name, getattr(own, name))
        except (AttributeError, TypeError):  # (a callable without them: a functools.partial)
            pass
    __del__._rmmh_chained = True
    cls.__del__ = __del__


def release_once(obj, refs, flag="_released"):
    """obj's finalizer letting go of the one hold obj has on refs, at most once: the finalizer called
    again by hand (obj.__del__()) must not drop a hold another holder took (a red team's find,
    2026-11-29: a second mr.__del__() destroyed a pool a buffer still used, and the buffer's free
    went to freed memory). obj has an attribute (or slot) named `flag`."""
    if refs is None or getattr(obj, flag, False):
        return
    setattr(obj, flag, True)
    release(refs)


# ---- frees a resource refused from inside its own upstream ----------------------------------
# A pool (or another resource with a lock) calls its upstream with its lock held; when that upstream
# is Python code (a CallbackMemoryResource), Python's garbage collector may run inside it and
# collect a buffer of that same pool, whose free the pool then refuses (it must not be re-entered
# from below itself: rmm.h's rmm__reentrant). Such a free is kept here, with the buffer's holds on
# its resource and stream, and made once the outer call is over: at the next allocation of a
# DeviceBuffer (either path), or by run_deferred_frees(). Until 2026-11-29 it was dropped and the
# block stayed allocated for good (red team 21: 20 blocks lost, a chunk that trim could never give
# back).
_deferred_frees: list = []


def defer_free(mr_h, ptr, nbytes, stream_h, device, mr_refs, stream_refs, keep=None):
    """Keeps the free of (ptr, nbytes) on the stream with handle stream_h, from the resource with
    handle mr_h, for later. The caller's holds on mr_refs and stream_refs (None: none) stay until
    run_deferred_frees makes the free and lets go of them; `keep` (the Python objects, and the
    streams record_stream recorded for the block) lives until then. Handles and refs, not the
    objects' attributes: a buffer collected in a cycle may see those cleared."""
    _deferred_frees.append((mr_h, ptr, nbytes, stream_h, device, mr_refs, stream_refs, keep))
    return None


def run_deferred_frees():
    """Makes each deferred free once: one refused again (its resource still inside the call that
    ran the collector) stays for the next try; one refused for another reason is dropped, as a
    finalizer's failed free is; the framework hooks' deferred frees (rmmh_hooks_settle) likewise.
    Returns how many are left, both kinds. Runs after a DeviceBuffer allocation (and before its
    retry when it failed), and before a pool's trim(). An exception raised here
    (KeyboardInterrupt) loses the free it was making, with its holds: whether the free was made
    cannot be told then, and a free made twice could free another allocation's block."""
    from . import _lib
    import ctypes
    hooks_left = ctypes.c_size_t()
    _lib.rmmh_hooks_settle(ctypes.byref(hooks_left))
    for _ in range(len(_deferred_frees)):
        try:
            item = _deferred_frees.pop(0)
        except IndexError:  # (another thread took the last)
            break
        mr_h, ptr, nbytes, stream_h, device, mr_refs, stream_refs, _keep = item
        if _lib.free(mr_h, ptr, nbytes, stream_h, device) and _lib.last_failure_reentered():
            _deferred_frees.append(item)
            continue
        release(mr_refs)
        if stream_refs is not None:
            release(stream_refs)
    return len(_deferred_frees) + hooks_left.value
