/* _accel.c - rmmh's optional accelerator: DeviceBuffer's creation and collection in C.

   Measured on the host backend (README, "ctypes or an extension"), a ctypes call costs about
   300 ns, a Python __init__/__del__ pair about 300 ns more, and the allocator itself 20 ns. This
   extension removes both: BufferBase implements DeviceBuffer's constructor and deallocator
   (rmmh.DeviceBuffer subclasses it and adds every other method in Python), and alloc/free serve
   DeviceMemoryResource.allocate/deallocate. It calls librmmh through pointers found with dlsym in
   the copy ctypes already loaded, so the per-device table stays the one of that library, and it
   has exactly the contract of the pure-Python fallback (rmmh/_device_buffer.py, _PyBufferBase),
   which is used when this extension is missing or RMMH_NO_ACCEL=1. Both are tested.

   Written against the limited API (Py_LIMITED_API 3.10, for METH_FASTCALL). Without Python.h, build_native.py
   compiles it with pyabi.h, which declares the few stable-ABI names used here. */
#define Py_LIMITED_API 0x030A0000
#if defined(RMMH_NO_PYTHON_H)
#include "pyabi.h"
#else
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#if PY_VERSION_HEX < 0x030C0000
#include <structmember.h>
#endif
#endif
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

/* member types and flags (structmember.h; renamed Py_T_* in 3.12 with the same values) */
#define RMMH_T_INT 1
#define RMMH_T_OBJECT_EX 16
#define RMMH_T_ULONGLONG 18
#define RMMH_READONLY 1

/* ---- what bind() resolves: librmmh's hot functions and rmmh's Python objects ------------- */
typedef void *(*alloc_fn)(void *mr, size_t bytes, void *stream);
typedef int (*free_fn)(void *mr, void *ptr, size_t bytes, void *stream, int device);
typedef int (*int_fn)(void);
typedef void *(*alloc_nowait_fn)(void *mr, size_t bytes, void *stream, int *would_block);
typedef int (*free_nowait_fn)(void *mr, void *ptr, size_t bytes, void *stream, int device, int *would_block);
static alloc_fn rmmh_alloc_p;
static free_fn rmmh_free_p;
static alloc_nowait_fn rmmh_alloc_nowait_p; /* optional (NULL: always release the GIL) */
static free_nowait_fn rmmh_free_nowait_p;
typedef int (*reentered_fn)(void);
static reentered_fn rmmh_last_failure_reentered_p;
typedef size_t (*settle_fn)(size_t *left);
static settle_fn rmmh_hooks_settle_p; /* the hooks' deferred frees (rmmh_hooks.c) */

/* Allocation and free: first librmmh's nowait call with the GIL held (a pool's common case, which
   waits for nothing); where that would have to wait, the ordinary call with the GIL released (it
   may synchronize a stream on which a Python host callback waits for the GIL).
   accel_alloc returns NULL for a failed allocation (rmm_last_error()), and NULL with a Python
   exception set (a RecursionError) where the ordinary call could not call a Python allocate_func
   (see callback_resources). */
static int callback_resources; /* a CallbackMemoryResource was made (note_callback_resource) */
static PyObject *room_f;       /* rmmh._memory_resource._room: a Python function that only looks at the thread's kept exception */
/* A call of mr.allocate or mr.deallocate (which holds no block): the resource and the Stream, and
   their refs lists (srefs NULL: a stream that owns nothing). Held (take_holds) for the ordinary
   call, the only one that lets the GIL go: a finalizer called by hand on another thread meanwhile
   (mr.__del__(), stream.__del__()) then destroys them when the call is over, not under it (red
   team 40: a use after free, on both paths); the nowait call keeps the GIL, so nothing destroys
   them meanwhile, and pays nothing for it. */
typedef struct {
    PyObject *mr, *mrefs, *stream, *srefs;
} call_holds;
static int take_holds(const call_holds *c);
static void drop_holds(const call_holds *c);
/* c: NULL, or the call's objects to hold (call_holds) */
static void *accel_alloc_for(const call_holds *c, void *mh, size_t n, void *sh) {
    PyThreadState *ts;
    void *p = NULL;
    int wb = 1;
    if (rmmh_alloc_nowait_p) {
        p = rmmh_alloc_nowait_p(mh, n, sh, &wb);
        if (!wb && (p || !callback_resources)) return p;
    }
    if (callback_resources) {
        /* The ordinary call may call a CallbackMemoryResource's allocate_func through ctypes, one
           Python frame deeper than this call's caller. Where the recursion limit leaves no room
           for it (an allocate_func that calls its own resource), ctypes reports the RecursionError
           as unraisable, on stderr ("Exception ignored ...", "Error in sys.excepthook"), and
           answers nothing. A call of a small Python function first takes that frame: its
           RecursionError is raised here, to the caller (red team 36b); it also drops a callback
           exception kept at the recursion limit (review 37). Made once a CallbackMemoryResource
           exists (about 30 ns), never before; the nowait call above reaches no Python callback
           and skips it where it succeeds. Where it failed (a size no pool can hold), the drop
           still comes first: a kept exception whose status matches that failure was raised in its
           place until review 38's F5 (a stale RuntimeError for DeviceBuffer(size=2**64-1)). */
        PyObject *r = PyObject_CallObject(room_f, NULL);
        if (!r) return NULL;
        Py_DecRef(r);
        if (!wb) return p;
    }
    if (c && take_holds(c) < 0) return NULL; /* (after room_f, which may run other threads) */
    ts = PyEval_SaveThread();
    p = rmmh_alloc_p(mh, n, sh);
    PyEval_RestoreThread(ts);
    if (c) drop_holds(c); /* (a destruction the holds' last release made that raises is reported, not raised: drop_holds) */
    return p;
}
static void *accel_alloc(void *mh, size_t n, void *sh) { return accel_alloc_for(NULL, mh, n, sh); }
/* The status, or -1 with a Python exception (only with self: see accel_alloc_for). */
static int accel_free_for(const call_holds *c, void *mh, void *p, size_t n, void *sh, int dev) {
    PyThreadState *ts;
    int st, wb = 1;
    if (rmmh_free_nowait_p) {
        st = rmmh_free_nowait_p(mh, p, n, sh, dev, &wb);
        if (!wb) return st;
    }
    if (c && take_holds(c) < 0) return -1;
    ts = PyEval_SaveThread();
    st = rmmh_free_p(mh, p, n, sh, dev);
    PyEval_RestoreThread(ts);
    if (c) drop_holds(c);
    return st;
}
static int accel_free(void *mh, void *p, size_t n, void *sh, int dev) { return accel_free_for(NULL, mh, p, n, sh, dev); }
static int_fn rmmh_get_device_p, rmmh_device_count_p;
static int ndev = -1; /* read at the first allocation: importing must not initialize CUDA */

static PyObject *StreamType, *DefaultStream, *MRType, *PerDevice, *TrueObj, *NoneObj;
static PyObject *as_stream_f, *as_size_f, *get_per_device_resource_f, *current_device_f,
    *alloc_failed_f, *check_mr_f, *as_pointer_f, *error_f, *destroyed_f, *defer_free_f, *run_deferred_f,
    *clear_pending_f, *not_initialized_f;
/* Set when a buffer's free was deferred (rmmh._lifetime.defer_free: refused from inside its
   resource's own upstream, where the collector ran); the next allocation makes the deferred frees.
   Written and read with the GIL held. */
static int deferred_pending;
static PyObject *s_h, *s_refs, *s_run, *s_copy_in, *s_ptr, *s_size, *s_stream, *s_mr, *s_nbytes, *s_resize_mutex, *s_acquire, *s_release;
static int bound; /* bind_objects() was called: the Python objects above are set */
static int check_bound(void);

/* ---- small helpers ------------------------------------------------------------------------ */
static PyObject *call1(PyObject *f, PyObject *a) { return PyObject_CallFunctionObjArgs(f, a, NULL); }

/* A pointer-sized field of an rmmh object (mr._h, stream._h); -1 with an exception on failure. */
static int get_handle(PyObject *obj, void **out) {
    PyObject *h;
    if (obj == DefaultStream) { /* handle 0; the most common stream */
        *out = NULL;
        return 0;
    }
    h = PyObject_GetAttr(obj, s_h);
    if (!h) return -1;
    *out = h == NoneObj ? NULL : PyLong_AsVoidPtr(h);
    Py_DecRef(h);
    return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
}

/* Raises the "already destroyed" error of obj (a resource or a Stream); returns -1. */
static int raise_destroyed(PyObject *obj) {
    PyObject *e = call1(destroyed_f, obj);
    if (e) {
        PyErr_SetObject((PyObject *)Py_TYPE(e), e);
        Py_DecRef(e);
    }
    return -1;
}

/* The error of a resource whose _h or _refs could not be read: an AttributeError there means that
   its __init__ never ran (an object made by __new__ alone), raised as rmmh.NotInitializedError,
   as the Python code raises it (red team 36b: a bare AttributeError naming '_h'); any other error
   as it is. Only on that failure: the normal path pays nothing. Returns -1. */
static int resource_attr_error(PyObject *mr) {
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyObject *e;
        PyErr_Clear();
        e = call1(not_initialized_f, mr);
        if (e) {
            PyErr_SetObject((PyObject *)Py_TYPE(e), e);
            Py_DecRef(e);
        }
    }
    return -1;
}

/* Pops one hold off a refs list (see rmmh/_lifetime.py); runs the Record when it is the last. */
static int release_refs(PyObject *refs) {
    Py_ssize_t n;
    PyObject *token;
    int rc = 0;
    if (refs == NULL || refs == NoneObj) return 0;
    n = PyList_Size(refs);
    if (n <= 0) return n < 0 ? -1 : 0;
    token = PyList_GetItem(refs, n - 1);
    Py_IncRef(token);
    if (PyList_SetSlice(refs, n - 1, n, NULL) < 0) rc = -1;
    else if (token != TrueObj) {
        PyObject *r = PyObject_CallMethodObjArgs(token, s_run, NULL);
        if (!r) rc = -1;
        Py_XDECREF(r);
    }
    Py_DecRef(token);
    return rc;
}
/* release_refs for a hold whose release follows a call that did its work (an allocation made, a
   block freed): a destruction that raises there is the error of a finalizer called by hand on
   another thread meanwhile, which left the destruction to this call's release. Reported as Python
   reports a finalizer's error (sys.unraisablehook, naming obj), so that the call's result stands
   (until review 40's F3 the error replaced an allocation's result: the block was lost) and the
   next release runs with no exception set. */
static void release_refs_reporting(PyObject *refs, PyObject *obj) {
    if (release_refs(refs) < 0) PyErr_WriteUnraisable(obj);
}


/* ---- BufferBase ----------------------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    unsigned long long ptr, size, cap, nbytes;
    int dev;
    PyObject *mr, *stream;
    /* mr._h, mr._refs, stream._h, stream._refs, read when mr and stream are set (the _stream
       setter reads the stream's again): the deallocator uses only these, so it works when the
       collector has cleared the Python objects' attributes (a cycle being collected) */
    void *mr_handle, *stream_handle;
    PyObject *mr_refs, *stream_refs; /* NULL: none (the default streams own nothing) */
    /* the streams of record_stream (a list), released only after the block is freed: a weak-keyed
       table lost them before (the weak references are cleared first; a red team's find) */
    PyObject *recorded;
} Buffer;

/* Sets b->stream (taking the reference) and its cached handle and refs; -1 with an exception. */
static int set_stream(Buffer *b, PyObject *stream) {
    void *sh = NULL;
    PyObject *refs = NULL;
    if (stream != DefaultStream) {
        PyObject *h = PyObject_GetAttr(stream, s_h);
        if (!h) return -1;
        sh = PyLong_AsVoidPtr(h);
        Py_DecRef(h);
        if (!sh && PyErr_Occurred()) return -1;
        refs = PyObject_GetAttr(stream, s_refs);
        if (!refs) return -1;
        if (refs == NoneObj) {
            Py_CLEAR(refs);
        } else if (PyList_Size(refs) <= 0 || PyList_GetItem(refs, 0) == TrueObj) {
            /* its C stream was destroyed (see stream_handle): refs[0] is the Record while it exists,
               a hold (True) taken on a dead stream is not (red team 46; as take_holds) */
            Py_DecRef(refs);
            return PyErr_Occurred() ? -1 : raise_destroyed(stream);
        }
    }
    {
        /* the new stream stored before the old one is let go: dropping the last reference runs
           Python code (Stream.__del__, which lets the GIL go to destroy its C stream), and a reader
           of _stream or the collector must meet the old stream alive or the new one, never one
           half freed (red team 45: another thread's buf.stream got the dying Stream; a segfault) */
        PyObject *old = b->stream, *old_refs = b->stream_refs;
        b->stream = stream;
        b->stream_handle = sh;
        b->stream_refs = refs;
        Py_XDECREF(old);
        Py_XDECREF(old_refs);
    }
    return 0;
}

static int buffer_traverse(PyObject *self, visitproc visit, void *arg) {
    Buffer *b = (Buffer *)self;
    Py_VISIT(b->mr_refs);
    Py_VISIT(b->stream_refs);
    Py_VISIT(b->mr);
    Py_VISIT(b->stream);
    /* (b->recorded is not visited: to the collector the list is then held from outside, so it is
       never cleared with a collected cycle before this buffer's block is freed) */
    Py_VISIT((PyObject *)Py_TYPE(self));
    return 0;
}

static PyObject *buffer_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    Buffer *b;
    (void)args;
    (void)kwds;
    b = (Buffer *)alloc(type, 0);
    if (b) b->dev = -1;
    return (PyObject *)b;
}

/* A size_t argument; anything but a non-negative int that fits goes to Python's check (which
   raises the same exceptions as the fallback). */
static int size_arg(PyObject *o, PyObject *name, PyObject *checker, size_t *out) {
    PyObject *checked;
    if (PyLong_Check(o)) {
        *out = PyLong_AsSize_t(o);
        if (!(*out == (size_t)-1 && PyErr_Occurred())) return 0;
        PyErr_Clear();
    }
    checked = PyObject_CallFunctionObjArgs(checker, o, name, NULL);
    if (!checked) return -1;
    *out = PyLong_AsSize_t(checked);
    Py_DecRef(checked);
    return (*out == (size_t)-1 && PyErr_Occurred()) ? -1 : 0;
}

/* Makes the deferred frees (rmmh._lifetime.run_deferred_frees); deferred_pending stays set while
   some are left. An exception there is not the caller's (its allocation is fine): dropped. */
static void run_deferred(void) {
    PyObject *et, *ev, *tb, *left;
    PyErr_Fetch(&et, &ev, &tb);
    left = PyObject_CallObject(run_deferred_f, NULL);
    deferred_pending = !left || PyLong_AsLong(left) != 0;
    Py_XDECREF(left);
    PyErr_Clear();
    PyErr_Restore(et, ev, tb);
}

/* DeviceBuffer(*, ptr=0, size=0, stream=DEFAULT_STREAM, mr=None): see rmmh/_device_buffer.py.
   kwds may be the caller's own dict (a C caller's, or operator.methodcaller's), which Python code run
   here (an __index__, a resource's callback) can change: the values are read from it as borrowed
   references, so buffer_init holds them all for the call (red team 46: a size whose __index__ cleared
   the dict freed ptr or mr under buffer_init_body, which then read freed memory). */
static int buffer_init_body(PyObject *self, PyObject *args, PyObject *kwds);
static int buffer_init(PyObject *self, PyObject *args, PyObject *kwds) {
    PyObject *held = NULL;
    int r;
    if (kwds && !(held = PyDict_Values(kwds))) return -1; /* (a new list: a reference to each value) */
    r = buffer_init_body(self, args, kwds);
    Py_XDECREF(held);
    return r;
}
static int buffer_init_body(PyObject *self, PyObject *args, PyObject *kwds) {
    Buffer *b = (Buffer *)self;
    PyObject *ptr = NULL, *size = NULL, *stream = NULL, *mr = NULL, *key, *value, *refs;
    Py_ssize_t pos = 0;
    size_t n = 0, nbytes, addr = 0;
    Py_ssize_t nrefs;
    int dev, d;
    void *mh, *sh, *p;
    call_holds c;

    if (!check_bound()) return -1;
    if (PyTuple_Size(args) != 0) {
        PyErr_SetString(PyExc_TypeError, "DeviceBuffer() takes keyword arguments only (ptr, size, stream, mr)");
        return -1;
    }
    if (b->ptr || b->mr) {
        PyErr_SetString(PyExc_TypeError, "DeviceBuffer.__init__ may be called once");
        return -1;
    }
    if (kwds) {
        while (PyDict_Next(kwds, &pos, &key, &value)) {
            if (key == s_size || PyUnicode_Compare(key, s_size) == 0) size = value;
            else if (key == s_stream || PyUnicode_Compare(key, s_stream) == 0) stream = value;
            else if (key == s_mr || PyUnicode_Compare(key, s_mr) == 0) mr = value;
            else if (key == s_ptr || PyUnicode_Compare(key, s_ptr) == 0) ptr = value;
            else {
                if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "DeviceBuffer() got an unexpected keyword argument '%U'", key);
                return -1;
            }
        }
    }
    /* stream */
    if (stream == NULL) {
        stream = DefaultStream;
        Py_IncRef(stream);
    } else if ((PyObject *)Py_TYPE(stream) == StreamType) {
        Py_IncRef(stream);
    } else if (!(stream = call1(as_stream_f, stream))) {
        return -1;
    }
    /* size */
    if (size != NULL && size_arg(size, s_size, as_size_f, &n) < 0) goto fail_stream; /* TypeError, NegativeSizeError, OverflowError */
    /* ptr: an address, checked whether or not it is used (RMM's uintptr_t; a red team's find:
       a string or -5 passed with size 0 was accepted) */
    if (ptr != NULL && size_arg(ptr, s_ptr, as_pointer_f, &addr) < 0) goto fail_stream; /* (None too: RMM's uintptr_t) */
    /* device and resource */
    if (ndev < 0) ndev = rmmh_device_count_p();
    if (ndev == 1) {
        dev = -1;
        d = 0;
    } else {
        dev = d = rmmh_get_device_p();
        if (dev < 0) { /* raises with rmm_last_error() */
            PyObject *r = PyObject_CallFunctionObjArgs(current_device_f, NULL);
            Py_XDECREF(r);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "cannot read the current device");
            goto fail_stream;
        }
    }
    if (mr == NULL || mr == NoneObj) {
        PyObject *key_d = PyLong_FromLong(d);
        if (!key_d) goto fail_stream;
        mr = PyDict_GetItem(PerDevice, key_d); /* borrowed */
        if (mr) Py_IncRef(mr);
        else mr = call1(get_per_device_resource_f, key_d);
        Py_DecRef(key_d);
        if (!mr) goto fail_stream;
    } else {
        int ok = PyObject_IsInstance(mr, MRType);
        if (ok < 0) goto fail_stream;
        if (!ok) {
            PyObject *r = PyObject_CallFunctionObjArgs(check_mr_f, mr, s_mr, NULL); /* raises TypeError */
            Py_XDECREF(r);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "mr must be a DeviceMemoryResource");
            goto fail_stream;
        }
        Py_IncRef(mr);
    }
    if (b->ptr || b->mr) { /* (again: the Python code above may have run another __init__) */
        Py_DecRef(mr);
        PyErr_SetString(PyExc_TypeError, "DeviceBuffer.__init__ may be called once");
        goto fail_stream;
    }
    b->mr = mr;
    Py_IncRef(stream); /* (one reference for set_stream to take, one kept by this call: b->stream may
                          be replaced while the allocation below runs Python code or lets the GIL go) */
    if (set_stream(b, stream) < 0) {
        Py_DecRef(stream);
        goto fail_stream;
    }
    b->dev = dev;
    if (n == 0) { /* (size and capacity only once the block is there: a failed __init__ leaves it empty) */
        /* the resource's refs and handle, read now: a block that resize() gives the buffer later
           is freed by the deallocator with them, also after the collector cleared the resource's
           slots in a cycle (red team 36c: read at the free, they were gone, and the block and the
           resource's hold were dropped) */
        PyObject *r0 = PyObject_GetAttr(mr, s_refs);
        void *h0 = NULL;
        if (r0 && get_handle(mr, &h0) == 0) {
            b->mr_refs = r0;
            b->mr_handle = h0;
        } else {
            Py_XDECREF(r0);
            PyErr_Clear(); /* (read again at the free, as before) */
        }
        Py_DecRef(stream);
        return 0;
    }
    if (get_handle(mr, &mh) < 0) { (void)resource_attr_error(mr); goto fail_stream; }
    sh = b->stream_handle;
    refs = PyObject_GetAttr(mr, s_refs);
    if (!refs) { (void)resource_attr_error(mr); goto fail_stream; }
    if ((nrefs = PyList_Size(refs)) < 0) { /* not a list (a user's _refs): its SystemError raised */
        Py_DecRef(refs);
        goto fail_stream;
    }
    if (nrefs == 0) { /* a resource already destroyed (finalized in a collected cycle) */
        PyObject *r = PyObject_CallFunctionObjArgs(check_mr_f, mr, s_mr, NULL); /* raises */
        Py_XDECREF(r);
        Py_DecRef(refs);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "the resource was destroyed");
        goto fail_stream;
    }
    b->mr_handle = mh;
    b->mr_refs = refs; /* owned by the buffer from here */
    nbytes = n; /* exactly the size, as RMM's device_buffer asks: rounding is the resource's business */
    /* the block's holds on the resource and the stream, taken before the allocation, whose
       ordinary call lets the GIL go (a finalizer called by hand on another thread destroyed them
       under it until review 40), and checked after: refs[0] is the Record while the C object
       exists (see take_holds). Let go of again if no block comes. */
    c.mr = mr;
    c.mrefs = refs;
    c.stream = stream; /* (owned by this call) */
    c.srefs = b->stream_refs;
    if (c.srefs) Py_IncRef(c.srefs);
    if (take_holds(&c) < 0) { Py_XDECREF(c.srefs); goto fail_stream; }
    p = accel_alloc(mh, nbytes, sh);
    if (!p && PyErr_Occurred()) goto fail_holds; /* (no room left to call a Python callback) */
    /* frees refused inside an upstream call may serve it: DeviceBuffers' (deferred_pending) and
       the hooks' (made here; a red team's find: only a hook call made those until ABI 11) */
    if (!p && (rmmh_hooks_settle_p(NULL) != 0 || deferred_pending)) {
        if (deferred_pending) run_deferred();
        p = accel_alloc(mh, nbytes, sh);
        if (!p && PyErr_Occurred()) goto fail_holds;
        if (p) { /* (a Python upstream's exception from the first try is stale) */
            PyObject *r = PyObject_CallObject(clear_pending_f, NULL);
            Py_XDECREF(r);
            PyErr_Clear();
        }
    }
    if (!p) { /* alloc_failed(size) returns the exception (rmm_last_error()'s message) */
        PyObject *sz = PyLong_FromSize_t(n), *e = NULL;
        if (sz) e = PyObject_CallFunctionObjArgs(alloc_failed_f, sz, NULL);
        Py_XDECREF(sz);
        if (e) {
            PyErr_SetObject((PyObject *)Py_TYPE(e), e);
            Py_DecRef(e);
        }
        goto fail_holds;
    }
    if (b->ptr || b->stream != stream) {
        /* the empty buffer was given a block or another stream while the allocation ran Python code
           or let the GIL go (a resize from the resource's callback or another thread): the holds
           were taken on this call's stream, so the block goes back (review 45) */
        (void)accel_free(mh, p, nbytes, sh, dev);
        PyErr_SetString(PyExc_RuntimeError, "DeviceBuffer was changed while its __init__ allocated");
        goto fail_holds;
    }
    b->ptr = (unsigned long long)(uintptr_t)p;
    b->nbytes = nbytes;
    b->size = b->cap = n;
    Py_XDECREF(c.srefs);
    if (deferred_pending) run_deferred(); /* frees refused inside an upstream call (over by now, or kept) */
    if (addr) { /* the address size_arg read once, as the fallback's int (red team 47: ptr's __bool__
                   and __index__ were asked again, so a falsy int subclass skipped the copy and an
                   __index__ answering twice copied from an address never checked); the copy and its
                   checks are Python's (_copy_in) */
        PyObject *r, *sz = PyLong_FromSize_t(n), *pa = PyLong_FromSize_t(addr);
        if (!sz || !pa) {
            Py_XDECREF(sz);
            Py_XDECREF(pa);
            goto fail_stream;
        }
        r = PyObject_CallMethodObjArgs(self, s_copy_in, pa, sz, stream, NULL);
        Py_DecRef(sz);
        Py_DecRef(pa);
        if (!r) goto fail_stream;
        Py_DecRef(r);
    }
    Py_DecRef(stream);
    return 0;

fail_holds: /* no block: the holds taken for it let go of (the error raised stays the one reported) */
    {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        drop_holds(&c);
        PyErr_Restore(et, ev, tb);
    }
    Py_XDECREF(c.srefs);
    Py_DecRef(stream);
    return -1;
fail_stream:
    Py_DecRef(stream);
    return -1;
}

/* Frees the buffer's block (once: ptr is 0 after) and lets go of its holds; never raises. From
   the finalizer and from dealloc, whichever comes first. */
/* lock: NULL, or the buffer's _resize_mutex, acquired by the caller: let go here once the block
   has left the buffer, before the free (never held across a call into the resource). What the free
   needs is read when the block leaves the buffer: the free may let the GIL go, and another thread
   may then give the empty buffer another stream (a resize), whose hold the free must not let go of
   (review 40). */
static void buffer_release_block(Buffer *b, PyObject *lock) {
    if (b->ptr && b->mr) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        if (!b->mr_refs) { /* created empty, grown by Python's resize(): read them now */
            b->mr_refs = PyObject_GetAttr(b->mr, s_refs);
            if (b->mr_refs && get_handle(b->mr, &b->mr_handle) < 0) Py_CLEAR(b->mr_refs);
        }
        if (b->mr_refs) {
            void *p = (void *)(uintptr_t)b->ptr, *mh = b->mr_handle, *sh = b->stream_handle;
            unsigned long long nbytes = b->nbytes;
            int st, dev = b->dev;
            PyObject *kept = NULL, *mr = b->mr, *mr_refs = b->mr_refs, *stream = b->stream,
                     *stream_refs = b->stream_refs, *recorded = b->recorded;
            Py_IncRef(mr);
            Py_IncRef(mr_refs);
            if (stream) Py_IncRef(stream);
            if (stream_refs) Py_IncRef(stream_refs);
            b->recorded = NULL; /* (the block's recorded streams go with it, the buffer's reference
                                   taken over by this call: as the fallback pops them; review 45) */
            b->ptr = 0;
            b->size = b->cap = b->nbytes = 0; /* (a buffer another finalizer brings back is empty) */
            if (lock) {
                PyObject *r = PyObject_CallMethodObjArgs(lock, s_release, NULL);
                Py_XDECREF(r);
                lock = NULL;
            }
            st = accel_free(mh, p, (size_t)nbytes, sh, dev);
            if (st != 0 && rmmh_last_failure_reentered_p()) {
                /* refused from inside the resource's own upstream (the collector ran there): made
                   later, the holds and what the block needs kept until then (see defer_free) */
                kept = PyObject_CallFunction(defer_free_f, "KKKKiOO(OOO)", (unsigned long long)(uintptr_t)mh, (unsigned long long)(uintptr_t)p,
                                             nbytes, (unsigned long long)(uintptr_t)sh, dev, mr_refs,
                                             stream_refs ? stream_refs : NoneObj, mr, stream ? stream : NoneObj,
                                             recorded ? recorded : NoneObj);
                if (kept) deferred_pending = 1;
                PyErr_Clear(); /* (a failed call: no Python runs below with its exception set) */
            }
            if (!kept) {
                release_refs_reporting(mr_refs, mr);
                release_refs_reporting(stream_refs, stream ? stream : NoneObj);
            }
            Py_XDECREF(kept);
            Py_DecRef(mr);
            Py_DecRef(mr_refs);
            Py_XDECREF(stream);
            Py_XDECREF(stream_refs);
            Py_XDECREF(recorded);
        }
        PyErr_Clear(); /* a destructor cannot raise; the process goes on */
        PyErr_Restore(et, ev, tb);
    }
    if (lock) { /* (no block left the buffer: another thread's finalizer took it meanwhile) */
        PyObject *et, *ev, *tb, *r;
        PyErr_Fetch(&et, &ev, &tb);
        r = PyObject_CallMethodObjArgs(lock, s_release, NULL);
        Py_XDECREF(r);
        PyErr_Clear();
        PyErr_Restore(et, ev, tb);
    }
}

/* The finalizer: the garbage collector runs it for a buffer in a collected cycle before it
   clears anything, so the free still finds a callback resource's Python callables (a buffer that
   freed only in dealloc did so after the clearing began: a red team's find, 2026-11-29). A
   buffer that dies by its count is freed by dealloc, or by this when DeviceBuffer's dealloc calls
   it first. */
static void buffer_finalize(PyObject *self) {
    Buffer *b = (Buffer *)self;
    PyObject *lock = NULL;
    if (b->ptr && Py_REFCNT(self) > 1) {
        /* more references than the one a dying object is given back for its finalizer: a call by
           hand (or a cycle being collected, where no other thread reaches the buffer). Another
           thread may be copying out of or into the block under the buffer's lock (DeviceBuffer's
           _resize_lock): the block leaves the buffer under it (red team 40: a finalizer called by
           hand freed the block under a tobytes on another thread, a use after free). The common
           finalizer, by the count, pays one comparison. */
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        lock = PyObject_GetAttr(self, s_resize_mutex); /* (unset until a first copy: no lock then) */
        if (lock == NoneObj) Py_CLEAR(lock);
        PyErr_Clear();
        if (lock) {
            PyObject *r = PyObject_CallMethodObjArgs(lock, s_acquire, NULL);
            if (!r) {
                /* the wait was interrupted (a signal whose handler raised: Ctrl-C): the block stays
                   in the buffer, freed by a later call or the last reference (review 40: it was
                   freed under the copy, and the KeyboardInterrupt dropped). A finalizer cannot
                   raise: an interrupt is posted again for the next check, anything else reported
                   as unraisable. */
                if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
                    PyErr_Clear();
                    PyErr_SetInterrupt();
                } else {
                    PyErr_WriteUnraisable(self);
                }
                Py_DecRef(lock);
                PyErr_Restore(et, ev, tb);
                return;
            }
            Py_DecRef(r);
        }
        PyErr_Restore(et, ev, tb);
    }
    buffer_release_block(b, lock);
    Py_XDECREF(lock);
}

static void buffer_dealloc(PyObject *self) {
    Buffer *b = (Buffer *)self;
    PyTypeObject *tp = Py_TYPE(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    PyObject_GC_UnTrack(self);
    buffer_release_block(b, NULL);
    Py_XDECREF(b->mr_refs);
    Py_XDECREF(b->stream_refs);
    Py_XDECREF(b->mr);
    Py_XDECREF(b->stream);
    Py_XDECREF(b->recorded); /* (after the free above) */
    tp_free(self);
    Py_DecRef((PyObject *)tp);
}

/* _stream: a getter and a setter that keeps the cached handle and refs in step */
static PyObject *buffer_get_stream(PyObject *self, void *closure) {
    Buffer *b = (Buffer *)self;
    (void)closure;
    if (!b->stream) {
        PyErr_SetString(PyExc_AttributeError, "_stream");
        return NULL;
    }
    Py_IncRef(b->stream);
    return b->stream;
}
static int buffer_set_stream(PyObject *self, PyObject *value, void *closure) {
    (void)closure;
    if (!value || PyObject_IsInstance(value, StreamType) != 1) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "_stream must be an rmmh.Stream");
        return -1;
    }
    Py_IncRef(value);
    if (set_stream((Buffer *)self, value) < 0) {
        Py_DecRef(value);
        return -1;
    }
    return 0;
}
/* _recorded: the streams record_stream keeps alive until the block is freed (None: none) */
static PyObject *buffer_get_recorded(PyObject *self, void *closure) {
    Buffer *b = (Buffer *)self;
    PyObject *r = b->recorded ? b->recorded : NoneObj;
    (void)closure;
    Py_IncRef(r);
    return r;
}
static int buffer_set_recorded(PyObject *self, PyObject *value, void *closure) {
    Buffer *b = (Buffer *)self;
    PyObject *old = b->recorded;
    (void)closure;
    if (value == NoneObj) value = NULL;
    if (value) Py_IncRef(value);
    b->recorded = value;
    Py_XDECREF(old);
    return 0;
}
static PyGetSetDef buffer_getset[] = {
    {"_stream", buffer_get_stream, buffer_set_stream, NULL, NULL},
    {"_recorded", buffer_get_recorded, buffer_set_recorded, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef buffer_members[] = {
    {"_ptr", RMMH_T_ULONGLONG, offsetof(Buffer, ptr), 0, NULL},
    {"_size", RMMH_T_ULONGLONG, offsetof(Buffer, size), 0, NULL},
    {"_cap", RMMH_T_ULONGLONG, offsetof(Buffer, cap), 0, NULL},
    {"_nbytes", RMMH_T_ULONGLONG, offsetof(Buffer, nbytes), 0, NULL},
    {"_dev", RMMH_T_INT, offsetof(Buffer, dev), 0, NULL},
    {"_mr", RMMH_T_OBJECT_EX, offsetof(Buffer, mr), RMMH_READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};
static PyType_Slot buffer_slots[] = {
    {Py_tp_new, (void *)buffer_new},
    {Py_tp_init, (void *)buffer_init},
    {Py_tp_dealloc, (void *)buffer_dealloc},
    {Py_tp_finalize, (void *)buffer_finalize},
    {Py_tp_traverse, (void *)buffer_traverse},
    {Py_tp_members, (void *)buffer_members},
    {Py_tp_getset, (void *)buffer_getset},
    {Py_tp_doc, (void *)"DeviceBuffer's state, constructor and deallocator in C (rmmh._accel)."},
    {0, NULL},
};
static PyType_Spec buffer_spec = {
    "rmmh._accel.BufferBase", sizeof(Buffer), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, buffer_slots,
};

/* ---- ResourceBase: DeviceMemoryResource.allocate / deallocate in C ------------------------- */

/* Fast-call argument parsing: positional then keywords into out[0..n) (NULL: not given). */
static int parse_args(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      PyObject **names, int n, PyObject **out) {
    Py_ssize_t i, nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    int k;
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%d given)", fn, n, (int)nargs);
        return -1;
    }
    for (i = 0; i < nargs; i++) out[i] = args[i];
    for (i = 0; i < nkw; i++) {
        PyObject *key = PyTuple_GetItem(kwnames, i);
        for (k = 0; k < n; k++)
            if (key == names[k] || PyUnicode_Compare(key, names[k]) == 0) break;
        if (k == n) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn, key);
            return -1;
        }
        if (out[k]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%U'", fn, key);
            return -1;
        }
        out[k] = args[nargs + i];
    }
    return 0;
}

/* The stream argument as a new reference to a Stream. */
static PyObject *stream_arg(PyObject *o) {
    if (o == NULL) o = DefaultStream;
    if (o == DefaultStream || (PyObject *)Py_TYPE(o) == StreamType) {
        Py_IncRef(o);
        return o;
    }
    return call1(as_stream_f, o);
}

/* c->mr's and c->stream's handles, where their C objects still exist, and their refs lists in c
   (new references, c->srefs NULL for a stream that owns nothing); -1 with the exception (rmmh's
   NotInitializedError for a resource whose __init__ never ran), holding nothing. */
static int call_objects(call_holds *c, void **mh, void **sh) {
    Py_ssize_t n;
    c->mrefs = c->srefs = NULL;
    if (!(c->mrefs = PyObject_GetAttr(c->mr, s_refs))) return resource_attr_error(c->mr);
    n = PyList_Size(c->mrefs);
    if (n <= 0) {
        if (n == 0) (void)raise_destroyed(c->mr);
        goto fail;
    }
    if (get_handle(c->mr, mh) < 0) {
        (void)resource_attr_error(c->mr);
        goto fail;
    }
    if (c->stream != DefaultStream) {
        if (!(c->srefs = PyObject_GetAttr(c->stream, s_refs))) goto fail;
        if (c->srefs == NoneObj) {
            Py_CLEAR(c->srefs);
        } else if ((n = PyList_Size(c->srefs)) <= 0) { /* its C stream was destroyed */
            if (n == 0) (void)raise_destroyed(c->stream);
            goto fail;
        }
    }
    if (get_handle(c->stream, sh) < 0) goto fail;
    return 0;
fail:
    Py_CLEAR(c->mrefs);
    Py_CLEAR(c->srefs);
    return -1;
}
static void call_objects_done(call_holds *c) {
    Py_CLEAR(c->mrefs);
    Py_CLEAR(c->srefs);
}
/* Takes a hold on each of the call's C objects (call_holds); -1 with the exception, holding
   nothing, where one was destroyed since call_objects looked (its Record ran: refs[0] is the
   Record while the C object exists, rmmh/_lifetime.py). Each hold is taken first and checked
   after, so a switch of threads between the two cannot let the call through to a destroyed
   object. Cost: a list append and a look at its first item per object. */
static int take_holds(const call_holds *c) {
    if (PyList_Append(c->mrefs, TrueObj) < 0) return -1;
    if (PyList_GetItem(c->mrefs, 0) == TrueObj) {
        (void)release_refs(c->mrefs);
        return raise_destroyed(c->mr);
    }
    if (c->srefs) {
        if (PyList_Append(c->srefs, TrueObj) < 0) goto fail;
        if (PyList_GetItem(c->srefs, 0) == TrueObj) {
            (void)release_refs(c->srefs);
            (void)raise_destroyed(c->stream);
            goto fail;
        }
    }
    return 0;
fail:
    { /* (the error raised above stays the one reported) */
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        (void)release_refs(c->mrefs);
        PyErr_Restore(et, ev, tb);
    }
    return -1;
}
/* Lets go of take_holds' holds (the last holder of either destroys it now: a destruction that
   raises is reported, release_refs_reporting). Call it with no exception set. */
static void drop_holds(const call_holds *c) {
    if (c->srefs) release_refs_reporting(c->srefs, c->stream);
    release_refs_reporting(c->mrefs, c->mr);
}

/* Whether the library and the Python objects are bound (a RuntimeError if not: rmmh._accel imported
   by itself, or its binding refused, called the library through NULL: red team 36c). */
static int check_bound(void) {
    if (!bound || !rmmh_alloc_p || !rmmh_free_p) {
        PyErr_SetString(PyExc_RuntimeError, "rmmh._accel is not bound (import rmmh first)");
        return 0;
    }
    return 1;
}

static PyObject *res_allocate(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[2] = {NULL, NULL}, *names[2], *stream;
    call_holds c;
    size_t n;
    void *mh, *sh = NULL, *p;
    if (!check_bound()) return NULL;
    names[0] = s_nbytes;
    names[1] = s_stream;
    if (parse_args("allocate", args, nargs, kwnames, names, 2, a) < 0) return NULL;
    if (!a[0]) {
        PyErr_SetString(PyExc_TypeError, "allocate() missing required argument 'nbytes'");
        return NULL;
    }
    if (size_arg(a[0], s_nbytes, as_size_f, &n) < 0 || !(stream = stream_arg(a[1]))) return NULL;
    if (n == 0) {
        Py_DecRef(stream);
        return PyLong_FromLong(0);
    }
    c.mr = self;
    c.stream = stream;
    if (call_objects(&c, &mh, &sh) < 0) {
        Py_DecRef(stream);
        return NULL;
    }
    p = accel_alloc_for(&c, mh, n, sh);
    call_objects_done(&c);
    Py_DecRef(stream);
    if (!p) { /* alloc_failed() returns the exception (rmm_last_error()'s message) */
        PyObject *e;
        if (PyErr_Occurred()) return NULL; /* (no room left to call a Python callback) */
        e = PyObject_CallFunctionObjArgs(alloc_failed_f, NULL);
        if (e) {
            PyErr_SetObject((PyObject *)Py_TYPE(e), e);
            Py_DecRef(e);
        }
        return NULL;
    }
    return PyLong_FromVoidPtr(p);
}

static PyObject *res_deallocate(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[3] = {NULL, NULL, NULL}, *names[3], *stream;
    call_holds c;
    size_t ptr, n;
    void *mh, *sh = NULL;
    int st;
    if (!check_bound()) return NULL;
    names[0] = s_ptr;
    names[1] = s_nbytes;
    names[2] = s_stream;
    if (parse_args("deallocate", args, nargs, kwnames, names, 3, a) < 0) return NULL;
    if (!a[0] || !a[1]) {
        /* (naming only the missing one, as Python's signature does on the ctypes path: red team 52) */
        PyErr_SetString(PyExc_TypeError, !a[0] && !a[1] ? "deallocate() missing required arguments 'ptr' and 'nbytes'"
                        : !a[0] ? "deallocate() missing required argument 'ptr'"
                        : "deallocate() missing required argument 'nbytes'");
        return NULL;
    }
    if (size_arg(a[0], s_ptr, as_pointer_f, &ptr) < 0 || size_arg(a[1], s_nbytes, as_size_f, &n) < 0 ||
        !(stream = stream_arg(a[2])))
        return NULL;
    if (ptr == 0) {
        Py_DecRef(stream);
        Py_IncRef(NoneObj);
        return NoneObj;
    }
    c.mr = self;
    c.stream = stream;
    if (call_objects(&c, &mh, &sh) < 0) {
        Py_DecRef(stream);
        return NULL;
    }
    st = accel_free_for(&c, mh, (void *)(uintptr_t)ptr, n, sh, -1);
    call_objects_done(&c);
    Py_DecRef(stream);
    if (st < 0) return NULL;
    if (st) {
        PyObject *code = PyLong_FromLong(st), *e = NULL;
        if (code) e = call1(error_f, code);
        Py_XDECREF(code);
        if (e) {
            PyErr_SetObject((PyObject *)Py_TYPE(e), e);
            Py_DecRef(e);
        }
        return NULL;
    }
    Py_IncRef(NoneObj);
    return NoneObj;
}

static void resource_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DecRef((PyObject *)tp);
}

static PyMethodDef resource_methods[] = {
    {"allocate", (PyCFunction)(void (*)(void))res_allocate, METH_FASTCALL | METH_KEYWORDS,
     "allocate(nbytes, stream=DEFAULT_STREAM) -> address\n\nAllocates nbytes bytes on stream. "
     "Raises MemoryError (rmmh.OutOfMemoryError) when the memory is not there; 0 bytes give 0."},
    {"deallocate", (PyCFunction)(void (*)(void))res_deallocate, METH_FASTCALL | METH_KEYWORDS,
     "deallocate(ptr, nbytes, stream=DEFAULT_STREAM)\n\nFrees ptr, allocated by this resource with "
     "nbytes, on stream. rmmh.CorruptionError when the resource can tell it never handed ptr out."},
    {NULL, NULL, 0, NULL},
};
static PyType_Slot resource_slots[] = {
    {Py_tp_dealloc, (void *)resource_dealloc},
    {Py_tp_methods, (void *)resource_methods},
    {Py_tp_doc, (void *)"DeviceMemoryResource's allocate and deallocate in C (rmmh._accel)."},
    {0, NULL},
};
static PyType_Spec resource_spec = {
    "rmmh._accel.ResourceBase", 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, resource_slots,
};

/* ---- module functions --------------------------------------------------------------------- */
/* alloc(mr_handle, nbytes, stream_handle) -> address, or None on failure (rmm_last_error());
   RecursionError where no room is left to call a Python callback (see accel_alloc). */
static PyObject *py_alloc(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    void *mh, *sh, *p;
    size_t n;
    (void)self;
    if (!check_bound()) return NULL;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "alloc(mr, nbytes, stream)");
        return NULL;
    }
    mh = args[0] == NoneObj ? NULL : PyLong_AsVoidPtr(args[0]);
    n = PyLong_AsSize_t(args[1]);
    sh = args[2] == NoneObj ? NULL : PyLong_AsVoidPtr(args[2]);
    if (PyErr_Occurred()) return NULL;
    p = accel_alloc(mh, n, sh);
    if (!p) {
        if (PyErr_Occurred()) return NULL; /* (no room left to call a Python callback) */
        Py_IncRef(NoneObj);
        return NoneObj;
    }
    return PyLong_FromVoidPtr(p);
}
/* free(mr_handle, address, nbytes, stream_handle, device) -> status */
static PyObject *py_free(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    void *mh, *p, *sh;
    size_t n;
    long dev;
    int st;
    (void)self;
    if (!check_bound()) return NULL;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "free(mr, ptr, nbytes, stream, device)");
        return NULL;
    }
    mh = args[0] == NoneObj ? NULL : PyLong_AsVoidPtr(args[0]);
    p = PyLong_AsVoidPtr(args[1]);
    n = PyLong_AsSize_t(args[2]);
    sh = args[3] == NoneObj ? NULL : PyLong_AsVoidPtr(args[3]);
    dev = PyLong_AsLong(args[4]);
    if (PyErr_Occurred()) return NULL;
    st = accel_free(mh, p, n, sh, (int)dev);
    return PyLong_FromLong(st);
}

static PyObject *intern(const char *s) { return PyUnicode_InternFromString(s); }

static PyObject *ns_get(PyObject *ns, const char *name) {
    PyObject *v = PyDict_GetItemString(ns, name);
    if (!v) {
        PyErr_Format(PyExc_KeyError, "rmmh._accel.bind: namespace lacks %s", name);
        return NULL;
    }
    Py_IncRef(v);
    return v;
}

/* bind_library(library_path, abi_version) -> abi_version: resolves librmmh's hot functions in
   the copy ctypes loaded (RTLD_NOLOAD: never a second copy). ImportError when it lacks what this
   build needs. */
static PyObject *py_bind_library(PyObject *self, PyObject *args) {
    PyObject *path, *bytes;
    long abi;
    void *handle;
    int_fn abi_fn;
    (void)self;
    if (PyTuple_Size(args) != 2) {
        PyErr_SetString(PyExc_TypeError, "bind_library(library_path, abi_version)");
        return NULL;
    }
    { /* one interpreter only: the statics below are the process's (single-phase init); a
         subinterpreter that imports rmmh uses ctypes (red team 36c) */
        static PyInterpreterState *owner;
        PyInterpreterState *me = PyInterpreterState_Get();
        if (owner && owner != me) {
            PyErr_SetString(PyExc_ImportError, "rmmh._accel: bound by another interpreter");
            return NULL;
        }
        owner = me;
    }
    path = PyTuple_GetItem(args, 0);
    abi = PyLong_AsLong(PyTuple_GetItem(args, 1));
    if (PyErr_Occurred()) return NULL;
    bytes = PyUnicode_AsUTF8String(path);
    if (!bytes) return NULL;
    handle = dlopen(PyBytes_AsString(bytes), RTLD_NOW | RTLD_NOLOAD);
    Py_DecRef(bytes);
    if (!handle) {
        PyErr_SetString(PyExc_ImportError, "rmmh._accel: librmmh is not loaded");
        return NULL;
    }
    abi_fn = (int_fn)dlsym(handle, "rmmh_abi_version");
    rmmh_alloc_p = (alloc_fn)dlsym(handle, "rmmh_alloc");
    rmmh_free_p = (free_fn)dlsym(handle, "rmmh_free");
    rmmh_alloc_nowait_p = (alloc_nowait_fn)dlsym(handle, "rmmh_alloc_nowait");
    rmmh_free_nowait_p = (free_nowait_fn)dlsym(handle, "rmmh_free_nowait");
    rmmh_last_failure_reentered_p = (reentered_fn)dlsym(handle, "rmmh_last_failure_reentered");
    rmmh_hooks_settle_p = (settle_fn)dlsym(handle, "rmmh_hooks_settle");
    rmmh_get_device_p = (int_fn)dlsym(handle, "rmmh_get_device");
    rmmh_device_count_p = (int_fn)dlsym(handle, "rmmh_device_count");
    if (!abi_fn || abi_fn() != abi || !rmmh_alloc_p || !rmmh_free_p || !rmmh_get_device_p || !rmmh_device_count_p ||
        !rmmh_last_failure_reentered_p || !rmmh_hooks_settle_p) {
        rmmh_alloc_p = NULL; /* (unbound: check_bound refuses every call) */
        rmmh_free_p = NULL;
        PyErr_SetString(PyExc_ImportError, "rmmh._accel: librmmh lacks the helpers this build expects");
        return NULL;
    }
    return PyLong_FromLong(abi); /* (None is not known before bind_objects) */
}

/* bind_objects(namespace): the Python objects the C code calls (types, helpers, True, None). */
static PyObject *py_bind_objects(PyObject *self, PyObject *args) {
    PyObject *ns;
    (void)self;
    if (PyTuple_Size(args) != 1) {
        PyErr_SetString(PyExc_TypeError, "bind_objects(namespace)");
        return NULL;
    }
    ns = PyTuple_GetItem(args, 0);
    if (!(StreamType = ns_get(ns, "Stream")) || !(DefaultStream = ns_get(ns, "DEFAULT_STREAM")) ||
        !(MRType = ns_get(ns, "DeviceMemoryResource")) || !(PerDevice = ns_get(ns, "per_device")) ||
        !(TrueObj = ns_get(ns, "True")) || !(NoneObj = ns_get(ns, "None")) ||
        !(as_stream_f = ns_get(ns, "as_stream")) || !(as_size_f = ns_get(ns, "as_size")) ||
        !(as_pointer_f = ns_get(ns, "as_pointer")) || !(error_f = ns_get(ns, "error")) ||
        !(destroyed_f = ns_get(ns, "destroyed")) ||
        !(get_per_device_resource_f = ns_get(ns, "get_per_device_resource")) ||
        !(current_device_f = ns_get(ns, "current_device")) || !(alloc_failed_f = ns_get(ns, "alloc_failed")) ||
        !(check_mr_f = ns_get(ns, "check_mr")) || !(defer_free_f = ns_get(ns, "defer_free")) ||
        !(run_deferred_f = ns_get(ns, "run_deferred_frees")) || !(clear_pending_f = ns_get(ns, "clear_pending")) ||
        !(not_initialized_f = ns_get(ns, "not_initialized")) || !(room_f = ns_get(ns, "room")))
        return NULL;
    if (!(s_h = intern("_h")) || !(s_refs = intern("_refs")) || !(s_run = intern("run")) ||
        !(s_copy_in = intern("_copy_in")) || !(s_ptr = intern("ptr")) || !(s_size = intern("size")) ||
        !(s_stream = intern("stream")) || !(s_mr = intern("mr")) || !(s_nbytes = intern("nbytes")) ||
        !(s_resize_mutex = intern("_resize_mutex")) || !(s_acquire = intern("acquire")) || !(s_release = intern("release")))
        return NULL;
    bound = 1;
    Py_IncRef(NoneObj);
    return NoneObj;
}

/* note_callback_resource(): a CallbackMemoryResource exists from now on (see accel_alloc). */
static PyObject *py_note_callback_resource(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    callback_resources = 1;
    Py_IncRef(NoneObj);
    return NoneObj;
}

static PyMethodDef methods[] = {
    {"bind_library", py_bind_library, METH_VARARGS, "bind_library(library_path, abi_version)"},
    {"bind_objects", py_bind_objects, METH_VARARGS, "bind_objects(namespace)"},
    {"note_callback_resource", py_note_callback_resource, METH_NOARGS,
     "note_callback_resource(): allocations check for room to call a Python allocate_func from now on"},
    {"alloc", (PyCFunction)(void (*)(void))py_alloc, METH_FASTCALL, "alloc(mr_handle, nbytes, stream_handle) -> address or None"},
    {"free", (PyCFunction)(void (*)(void))py_free, METH_FASTCALL, "free(mr_handle, address, nbytes, stream_handle, device) -> status"},
    {NULL, NULL, 0, NULL},
};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_accel", "rmmh's optional accelerator (see src/_accel.c)", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__accel(void) {
    PyObject *m = PyModule_Create(&module), *t;
    if (!m) return NULL;
    t = PyType_FromSpec(&buffer_spec);
    if (!t || PyModule_AddObject(m, "BufferBase", t) < 0) {
        Py_XDECREF(t);
        Py_DecRef(m);
        return NULL;
    }
    t = PyType_FromSpec(&resource_spec);
    if (!t || PyModule_AddObject(m, "ResourceBase", t) < 0) {
        Py_XDECREF(t);
        Py_DecRef(m);
        return NULL;
    }
    return m;
}
