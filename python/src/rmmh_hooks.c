/* rmmh_hooks.c - the frameworks' allocation hooks and CUDA IPC helpers of librmmh.

   Included by rmmh.c (one translation unit with rmm.h), so it uses rmm.h's public API only, and the
   CUDA runtime for IPC. What is here:

   - PyTorch's CUDAPluggableAllocator pair (rmmh_torch_alloc, rmmh_torch_free) and CuPy's
     CFunctionAllocator pair (rmmh_cupy_malloc, rmmh_cupy_free). Both allocate from the per-device
     resource that Python's set_current_device_resource sets (rmm_get_per_device_resource) and
     never call Python on success. A free gets no resource (and CuPy's no size and no stream), so a
     block map remembers, for every block handed out, its size, stream, device and resource.
   - Holds: per resource, the count of hook blocks still outstanding. Python may replace a device's
     resource while PyTorch or CuPy still hold blocks of the old one; it then keeps the old resource
     alive until this count is zero (rmmh/_memory_resource.py, _retire). The count is raised before
     the resource is used and the table is read again after it, so a resource that Python saw at
     zero after replacing it can never be used by a hook again (see rmmh__acquire).
   - Per-device counters of the hooks' allocations (rmmh_hooks_stats).
   - CUDA IPC: legacy handles of a block's underlying allocation (rmm_resource_allocation_base
     gives the base and offset), and the memory pools' shareable handles for async resources.

   Thread safety: every function here may be called from any thread at any time. The block map is
   sharded 64 ways by address, each shard a spin lock over an open-addressing table (held for a
   probe, or for a rehash when the table doubles or halves); the
   holds are found through a per-device cache (one load) and, on a miss, a locked hash.
   Failures: the allocation hooks return NULL (never throw, never abort) with rmm_last_error() set;
   the IPC helpers return an rmm_status. */

#include <pthread.h>
#include <sched.h>

/* ---- spin lock (zero-initialized, so arrays of them need no init) ------------------------- */
typedef struct rmmh__spin {
    int locked;
} rmmh__spin;
static void rmmh__spin_lock(rmmh__spin *s) {
    unsigned spins = 0;
    while (__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&s->locked, __ATOMIC_RELAXED)) {
            if (++spins > 64) {
                spins = 0;
                sched_yield();
            }
        }
    }
}
static void rmmh__spin_unlock(rmmh__spin *s) { __atomic_store_n(&s->locked, 0, __ATOMIC_RELEASE); }

/* ---- holds: outstanding hook blocks per resource ------------------------------------------- */
/* One per resource the hooks ever allocated from; never freed (a few dozen bytes each), so a
   pointer to one stays valid in the block map and the device cache. A resource destroyed with a
   count of zero whose address is reused by a new resource gets the same hold, still at zero. */
typedef struct rmmh__hold {
    rmm_resource *mr; /* immutable */
    long outstanding; /* atomic: hook blocks of mr not yet freed */
    struct rmmh__hold *next;
} rmmh__hold;
#define RMMH__HOLD_BUCKETS 256
static rmmh__hold *rmmh__holds[RMMH__HOLD_BUCKETS];
static rmmh__spin rmmh__holds_lock;
static rmmh__hold *rmmh__hold_cache[RMM_MAX_DEVICES]; /* atomic: the hold of each device's last resource */

static size_t rmmh__hash_ptr(uintptr_t p) {
    uint64_t h = (uint64_t)(p >> 4) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 31));
}
static rmmh__hold *rmmh__hold_find(rmm_resource *mr, int create) {
    size_t b = rmmh__hash_ptr((uintptr_t)mr) % RMMH__HOLD_BUCKETS;
    rmmh__hold *h;
    rmmh__spin_lock(&rmmh__holds_lock);
    for (h = rmmh__holds[b]; h; h = h->next)
        if (h->mr == mr) break;
    if (!h && create) {
        h = (rmmh__hold *)calloc(1, sizeof *h);
        if (h) {
            h->mr = mr;
            h->next = rmmh__holds[b];
            __atomic_store_n(&rmmh__holds[b], h, __ATOMIC_RELEASE);
        }
    }
    rmmh__spin_unlock(&rmmh__holds_lock);
    return h;
}

/* Hook blocks of mr not yet freed. Called by Python right after it took mr out of the device table:
   the fence pairs with the one in rmmh__acquire, so a hook that read the old table either is
   counted here or reads the new table and leaves mr alone. O(1) (a locked hash lookup). */
RMMH_API long rmmh_hooks_outstanding(rmm_resource *mr) {
    rmmh__hold *h;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    h = rmmh__hold_find(mr, 0);
    return h ? __atomic_load_n(&h->outstanding, __ATOMIC_ACQUIRE) : 0;
}

/* ---- per-device counters ------------------------------------------------------------------- */
typedef struct rmmh__counters {
    int64_t bytes, count, peak_bytes, total_bytes, total_count, failed;
} rmmh__counters;
static rmmh__counters rmmh__stats[RMM_MAX_DEVICES];

static void rmmh__count_alloc(int device, size_t bytes) {
    rmmh__counters *c = &rmmh__stats[device];
    int64_t now = __atomic_add_fetch(&c->bytes, (int64_t)bytes, __ATOMIC_RELAXED);
    int64_t peak = __atomic_load_n(&c->peak_bytes, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->count, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->total_bytes, (int64_t)bytes, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->total_count, 1, __ATOMIC_RELAXED);
    while (now > peak && !__atomic_compare_exchange_n(&c->peak_bytes, &peak, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}
static void rmmh__count_free(int device, size_t bytes) {
    rmmh__counters *c = &rmmh__stats[device];
    __atomic_sub_fetch(&c->bytes, (int64_t)bytes, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&c->count, 1, __ATOMIC_RELAXED);
}

/* Whether `device` exists (as torch.cuda's statistics ask: a device past the count is an error,
   not 0 bytes). */
static int rmmh__device_exists(int device) {
    int count = 0;
    return device >= 0 && device < RMM_MAX_DEVICES && rmm_get_device_count(&count) == RMM_SUCCESS && device < count;
}
/* out[6]: current bytes, current blocks, peak bytes, total bytes, total blocks, failed
   allocations of the hooks on `device` (requested sizes). INVALID_ARGUMENT for a device that does
   not exist or NULL out. Relaxed reads: exact when no hook call is in flight. */
RMMH_API int rmmh_hooks_stats(int device, int64_t *out) {
    rmmh__counters *c;
    if (!out || !rmmh__device_exists(device))
        return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh_hooks_stats: device %d does not exist, or out is NULL", device);
    c = &rmmh__stats[device];
    out[0] = __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
    out[1] = __atomic_load_n(&c->count, __ATOMIC_RELAXED);
    out[2] = __atomic_load_n(&c->peak_bytes, __ATOMIC_RELAXED);
    out[3] = __atomic_load_n(&c->total_bytes, __ATOMIC_RELAXED);
    out[4] = __atomic_load_n(&c->total_count, __ATOMIC_RELAXED);
    out[5] = __atomic_load_n(&c->failed, __ATOMIC_RELAXED);
    return RMM_SUCCESS;
}
/* Sets the peak of `device` back to its current bytes (torch.cuda.reset_peak_memory_stats). */
RMMH_API int rmmh_hooks_reset_peak(int device) {
    if (!rmmh__device_exists(device))
        return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh_hooks_reset_peak: device %d does not exist", device);
    __atomic_store_n(&rmmh__stats[device].peak_bytes, __atomic_load_n(&rmmh__stats[device].bytes, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    return RMM_SUCCESS;
}

/* ---- the block map: address -> what its free needs ---------------------------------------- */
typedef struct rmmh__block {
    uintptr_t ptr; /* 0: an empty slot */
    size_t bytes;
    rmm_stream stream;
    rmmh__hold *hold;
    int device;
} rmmh__block;
#define RMMH__SHARDS 64
typedef struct rmmh__shard {
    rmmh__spin lock;
    size_t capacity; /* a power of two, or 0 */
    size_t count;
    rmmh__block *slots;
} __attribute__((aligned(64))) rmmh__shard; /* one cache line each */
static rmmh__shard rmmh__shards[RMMH__SHARDS];

static rmmh__shard *rmmh__shard_of(uintptr_t ptr, size_t *hash) {
    size_t h = rmmh__hash_ptr(ptr);
    *hash = h;
    return &rmmh__shards[(h >> 20) % RMMH__SHARDS];
}
/* Inserts into a table known to have a free slot. */
static void rmmh__slot_put(rmmh__block *slots, size_t capacity, size_t hash, const rmmh__block *b) {
    size_t i = hash & (capacity - 1);
    while (slots[i].ptr) i = (i + 1) & (capacity - 1);
    slots[i] = *b;
}
/* Moves shard s's blocks into a table of cap slots (a power of two, more than twice its count);
   false, s unchanged, iff host memory for it cannot be had. Caller holds s's lock. O(capacity). */
static bool rmmh__shard_resize(rmmh__shard *s, size_t cap) {
    size_t i;
    rmmh__block *slots = (rmmh__block *)calloc(cap, sizeof *slots);
    if (!slots) return false;
    for (i = 0; i < s->capacity; i++)
        if (s->slots[i].ptr) rmmh__slot_put(slots, cap, rmmh__hash_ptr(s->slots[i].ptr), &s->slots[i]);
    free(s->slots);
    s->slots = slots;
    s->capacity = cap;
    return true;
}
/* Adds a block; false iff host memory for a larger table cannot be had. Amortized O(1). */
static bool rmmh__map_put(const rmmh__block *b) {
    size_t hash;
    rmmh__shard *s = rmmh__shard_of(b->ptr, &hash);
    rmmh__spin_lock(&s->lock);
    if (2 * (s->count + 1) > s->capacity && !rmmh__shard_resize(s, s->capacity ? 2 * s->capacity : 64)) {
        rmmh__spin_unlock(&s->lock);
        return false;
    }
    rmmh__slot_put(s->slots, s->capacity, hash, b);
    s->count++;
    rmmh__spin_unlock(&s->lock);
    return true;
}
/* Removes the block at ptr into *out; false iff it is not in the map. Amortized O(1) expected
   (linear probing, backward-shift deletion: no tombstones); a take that leaves the table an eighth
   full halves it, O(capacity) with the shard's lock held. */
static bool rmmh__map_take(uintptr_t ptr, rmmh__block *out) {
    size_t hash, i, j, mask;
    rmmh__shard *s = rmmh__shard_of(ptr, &hash);
    rmmh__spin_lock(&s->lock);
    if (!s->capacity) {
        rmmh__spin_unlock(&s->lock);
        return false;
    }
    mask = s->capacity - 1;
    for (i = hash & mask; s->slots[i].ptr != ptr; i = (i + 1) & mask) {
        if (!s->slots[i].ptr) {
            rmmh__spin_unlock(&s->lock);
            return false;
        }
    }
    *out = s->slots[i];
    /* backward shift: move later entries of the run into the hole when their home allows */
    for (j = (i + 1) & mask; s->slots[j].ptr; j = (j + 1) & mask) {
        size_t home = rmmh__hash_ptr(s->slots[j].ptr) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            s->slots[i] = s->slots[j];
            i = j;
        }
    }
    s->slots[i].ptr = 0;
    s->count--;
    /* a table an eighth full halves (a quarter full after; growth comes at a half, so no size
       thrashes), so the host memory a peak of live blocks took goes back as they are freed; kept
       where host memory for the smaller table cannot be had. Amortized O(1). */
    if (s->capacity > 64 && 8 * s->count < s->capacity) (void)rmmh__shard_resize(s, s->capacity / 2);
    rmmh__spin_unlock(&s->lock);
    return true;
}
/* Host bytes the block map's tables hold now (all shards). O(shards). For tests and diagnostics. */
RMMH_API size_t rmmh_hooks_map_bytes(void) {
    size_t n = 0, k;
    for (k = 0; k < RMMH__SHARDS; k++) {
        rmmh__spin_lock(&rmmh__shards[k].lock);
        n += rmmh__shards[k].capacity * sizeof(rmmh__block);
        rmmh__spin_unlock(&rmmh__shards[k].lock);
    }
    return n;
}
/* The number of blocks the hooks hand out now (all devices). O(shards). */
RMMH_API size_t rmmh_hooks_live_blocks(void) {
    size_t n = 0, k;
    for (k = 0; k < RMMH__SHARDS; k++) {
        rmmh__spin_lock(&rmmh__shards[k].lock);
        n += rmmh__shards[k].count;
        rmmh__spin_unlock(&rmmh__shards[k].lock);
    }
    return n;
}
/* Whether ptr is a block the hooks handed out and have not taken back (its size in *bytes, device
   in *device and stream in *stream, each may be NULL). O(1). For tests and diagnostics. */
RMMH_API int rmmh_hooks_lookup(const void *ptr, size_t *bytes, int *device, rmm_stream *stream) {
    size_t hash, i, mask;
    int found = 0;
    rmmh__shard *s = rmmh__shard_of((uintptr_t)ptr, &hash);
    if (!ptr) return 0;
    rmmh__spin_lock(&s->lock);
    if (s->capacity) {
        mask = s->capacity - 1;
        for (i = hash & mask; s->slots[i].ptr; i = (i + 1) & mask) {
            if (s->slots[i].ptr == (uintptr_t)ptr) {
                if (bytes) *bytes = s->slots[i].bytes;
                if (device) *device = s->slots[i].device;
                if (stream) *stream = s->slots[i].stream;
                found = 1;
                break;
            }
        }
    }
    rmmh__spin_unlock(&s->lock);
    return found;
}

/* ---- the allocation path shared by the hooks ---------------------------------------------- */
/* The resource of `device` with one outstanding count taken on its hold; NULL on failure. After
   the count is raised the table is read again: if the resource was replaced meanwhile, the count
   is dropped and the new one is used. With the fence in rmmh_hooks_outstanding this is Dekker's
   pattern: Python, which replaces the table entry and then reads the count, either sees this
   count or this thread sees the new entry. (On x86 a locked add is a full fence already.) */
static rmmh__hold *rmmh__acquire(int device) {
    for (;;) {
        rmm_resource *mr = rmm_get_per_device_resource(device);
        rmmh__hold *h;
        if (!mr) return NULL;
        h = __atomic_load_n(&rmmh__hold_cache[device], __ATOMIC_ACQUIRE);
        if (!h || h->mr != mr) {
            h = rmmh__hold_find(mr, 1);
            if (!h) {
                rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "rmmh hooks: out of host memory");
                return NULL;
            }
            __atomic_store_n(&rmmh__hold_cache[device], h, __ATOMIC_RELEASE);
        }
        __atomic_add_fetch(&h->outstanding, 1, __ATOMIC_SEQ_CST);
#if !defined(__x86_64__) && !defined(__i386__)
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
        if (rmm_get_per_device_resource(device) == mr) return h;
        __atomic_sub_fetch(&h->outstanding, 1, __ATOMIC_RELEASE);
    }
}

/* ---- the GIL: a hook called with it held -------------------------------------------------- */
/* CuPy's CFunctionAllocator calls rmmh_cupy_malloc and rmmh_cupy_free with Python's GIL held (and
   any hook may be called from a thread that holds it). An ordinary allocation may wait: for a
   pool's lock held by a thread whose upstream is running a Python callback (CallbackMemoryResource,
   FailureCallbackResourceAdaptor), which needs the GIL to finish, or for a stream on which a
   Python host function waits for it. Waiting with the GIL held would deadlock. So, as _accel.c
   does for DeviceBuffer: a hook on a thread that holds the GIL first makes the "nowait" call (a
   pool's common case, which waits for nothing), and where that would wait, makes the ordinary call
   with the GIL released. rmmh._lib hands the CPython functions over at import
   (rmmh_configure_gil); until then, and on a thread without the GIL (PyTorch calls its allocator
   with the GIL released), the hooks call the resource directly. This thread holds the GIL iff
   the current thread state (PyThreadState_GetUnchecked, called _PyThreadState_UncheckedGet before
   3.13; up to 3.11 that is the GIL holder's, of any thread) is this thread's own
   (PyGILState_GetThisThreadState). PyGILState_Check alone answers 1 after the interpreter was
   finalized and on every thread once a subinterpreter exists, and PyEval_SaveThread without the
   GIL is a fatal error (a review's find). A thread inside a subinterpreter counts as not holding
   it: its hooks call the resource directly, as before 2026-11-28. */
typedef void *(*rmmh__py_state)(void);
typedef void (*rmmh__py_restore_thread)(void *);
static struct {
    rmmh__py_state current, this_thread, save;
    rmmh__py_restore_thread restore;
    int ready; /* atomic: set after the four */
} rmmh__gil;
/* Hands over PyThreadState_GetUnchecked (or _PyThreadState_UncheckedGet),
   PyGILState_GetThisThreadState, PyEval_SaveThread and PyEval_RestoreThread (all four, or all NULL
   to stop). INVALID_ARGUMENT if only some are given. Call it before the hooks are in use. */
RMMH_API int rmmh_configure_gil(void *current, void *this_thread, void *save, void *restore) {
    int given = (current != NULL) + (this_thread != NULL) + (save != NULL) + (restore != NULL);
    if (given != 0 && given != 4)
        return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh_configure_gil: give all four functions, or none");
    __atomic_store_n(&rmmh__gil.ready, 0, __ATOMIC_RELEASE);
    rmmh__gil.current = (rmmh__py_state)current;
    rmmh__gil.this_thread = (rmmh__py_state)this_thread;
    rmmh__gil.save = (rmmh__py_state)save;
    rmmh__gil.restore = (rmmh__py_restore_thread)restore;
    __atomic_store_n(&rmmh__gil.ready, given == 4, __ATOMIC_RELEASE);
    return RMM_SUCCESS;
}
static int rmmh__gil_held(void) {
    void *ts;
    if (!__atomic_load_n(&rmmh__gil.ready, __ATOMIC_ACQUIRE)) return 0;
    ts = rmmh__gil.current();
    return ts != NULL && ts == rmmh__gil.this_thread();
}
static rmm_status rmmh__allocate(rmm_resource *mr, void **p, size_t bytes, rmm_stream stream) {
    bool would_block = false;
    void *ts;
    rmm_status st;
    if (!rmmh__gil_held()) return rmm_allocate(mr, p, bytes, stream);
    st = rmm_allocate_nowait(mr, p, bytes, stream, &would_block);
    if (!would_block) return st;
    ts = rmmh__gil.save();
    st = rmm_allocate(mr, p, bytes, stream);
    rmmh__gil.restore(ts);
    return st;
}
static rmm_status rmmh__deallocate(rmm_resource *mr, void *p, size_t bytes, rmm_stream stream) {
    bool would_block = false;
    void *ts;
    rmm_status st;
    if (!rmmh__gil_held()) return rmm_deallocate(mr, p, bytes, stream);
    st = rmm_deallocate_nowait(mr, p, bytes, stream, &would_block);
    if (!would_block) return st;
    ts = rmmh__gil.save();
    st = rmm_deallocate(mr, p, bytes, stream);
    rmmh__gil.restore(ts);
    return st;
}

/* Failed hook calls on this thread: a Python callback's exception kept for a failure (rmmh._lib's
   set_pending) belongs to the hook call under way when this count is what it was then; a hook
   fails without Python reading it, so the next failing rmmh call on the thread would take a stale
   exception (a red team's find: an unrelated out-of-memory raised the RuntimeError of an earlier
   PyTorch allocation's callback). */
static _Thread_local unsigned long rmmh__hook_failures;
RMMH_API unsigned long rmmh_hook_failures(void) { return rmmh__hook_failures; }

static void rmmh__hook_settle(void);
/* Allocates `bytes` on `stream` from the resource of `device` (which must be current unless
   switch_device) and records the block. NULL on failure (rmm_last_error() says why). */
static void *rmmh__hook_alloc(size_t bytes, int device, rmm_stream stream, int switch_device) {
    rmmh__hold *h;
    rmmh__block b;
    void *p = NULL;
    rmm_device_scope g = {0, false};
    rmm_status st;
    rmmh__alloc_calls++; /* (see rmmh_alloc_calls) */
    rmmh__hook_settle();
    if (device < 0 || device >= RMM_MAX_DEVICES) {
        rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh hooks: device %d is out of range", device);
        return NULL;
    }
    if (switch_device && rmm_device_scope_enter(&g, device) != RMM_SUCCESS) goto failed; /* (rmm.h's device scope: no context made on the caller's device) */
    h = rmmh__acquire(device);
    if (!h) goto failed;
    st = rmmh__allocate(h->mr, &p, bytes, stream);
    if (st != RMM_SUCCESS || !p) {
        if (st == RMM_SUCCESS) rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh hooks: the resource returned NULL for %zu bytes", bytes);
        __atomic_sub_fetch(&h->outstanding, 1, __ATOMIC_RELEASE);
        goto failed;
    }
    b.ptr = (uintptr_t)p;
    b.bytes = bytes;
    b.stream = stream;
    b.hold = h;
    b.device = device;
    if (!rmmh__map_put(&b)) {
        (void)rmmh__deallocate(h->mr, p, bytes, stream);
        __atomic_sub_fetch(&h->outstanding, 1, __ATOMIC_RELEASE);
        rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "rmmh hooks: out of host memory for the block map");
        goto failed;
    }
    rmmh__count_alloc(device, bytes);
    rmm__device_leave(&g);
    return p;
failed:
    if (device >= 0 && device < RMM_MAX_DEVICES) __atomic_add_fetch(&rmmh__stats[device].failed, 1, __ATOMIC_RELAXED);
    rmm__device_leave(&g);
    rmmh__hook_failures++;
    return NULL;
}

/* Frees taken from the map that the resource refused because they came from inside its own
   upstream (rmmh_last_failure_reentered: Python's collector freeing a CuPy array or a tensor while
   a pool's Python upstream ran with the pool's lock held). Until 2026-11-29 such a block went back
   to the map, where nobody would free it again: it and its resource were held for good (a red
   team's find). Now it waits here, its hold kept, and the next hook call on any thread makes it
   (rmmh__hook_settle). A growing array under a mutex; rmmh__deferred_n is read without it first. */
static rmm__mutex rmmh__deferred_lock = RMM__MUTEX_INIT;
static rmmh__block *rmmh__deferred;
static size_t rmmh__deferred_cap, rmmh__deferred_len, rmmh__deferred_n; /* (n: atomic copy of len) */
static bool rmmh__defer(const rmmh__block *b) {
    bool ok = true;
    rmm__lock(&rmmh__deferred_lock);
    if (rmmh__deferred_len == rmmh__deferred_cap) {
        size_t cap = rmmh__deferred_cap ? 2 * rmmh__deferred_cap : 16;
        rmmh__block *grown = (rmmh__block *)realloc(rmmh__deferred, cap * sizeof *grown);
        if (grown) {
            rmmh__deferred = grown;
            rmmh__deferred_cap = cap;
        } else {
            ok = false;
        }
    }
    if (ok) {
        rmmh__deferred[rmmh__deferred_len++] = *b;
        __atomic_store_n(&rmmh__deferred_n, rmmh__deferred_len, __ATOMIC_RELEASE);
    }
    rmm__unlock(&rmmh__deferred_lock);
    return ok;
}
static rmm_status rmmh__hook_free_block(rmmh__block *b);
/* Makes the deferred frees (each once: one refused again is deferred again). O(deferred); one
   atomic load when there are none. Keeps the thread's last error. */
static void rmmh__hook_settle(void) {
    rmmh__block *batch;
    size_t n, i;
    rmm__kept_error saved;
    if (RMM__LIKELY(__atomic_load_n(&rmmh__deferred_n, __ATOMIC_ACQUIRE) == 0)) return;
    rmm__lock(&rmmh__deferred_lock);
    batch = rmmh__deferred;
    n = rmmh__deferred_len;
    rmmh__deferred = NULL;
    rmmh__deferred_cap = rmmh__deferred_len = 0;
    __atomic_store_n(&rmmh__deferred_n, 0, __ATOMIC_RELEASE);
    rmm__unlock(&rmmh__deferred_lock);
    rmm__error_keep(&saved);
    for (i = 0; i < n; i++) (void)rmmh__hook_free_block(&batch[i]);
    free(batch);
    rmm__error_back(&saved);
}
/* Makes the hooks' deferred frees now (rmmh._lifetime.run_deferred_frees: before a DeviceBuffer
   allocation is tried again, before a pool's trim), not only at the next hook call. Returns how
   many were deferred when it looked (0: none, nothing done); *left (may be NULL) how many are deferred after (refused again: their
   resource still inside the call that ran the collector). Until ABI 11 only a hook call made
   them: a program that stopped using the hooks kept such a block, and its resource, for good (red
   team 33). Keeps the thread's last error. O(deferred); one atomic load when there are none. */
RMMH_API size_t rmmh_hooks_settle(size_t *left) {
    size_t tried = __atomic_load_n(&rmmh__deferred_n, __ATOMIC_ACQUIRE);
    if (tried) rmmh__hook_settle();
    if (left) *left = __atomic_load_n(&rmmh__deferred_n, __ATOMIC_ACQUIRE);
    return tried;
}

/* Frees block b, taken from the map, on its stream, with its device current, to the resource it
   came from (even if another is current now; where the device cannot be read or set, with the
   caller's, as rmmh_free). A refusal from inside the resource's own upstream defers it (rmmh__defer:
   RMM_SUCCESS). Another refusal is counted as a failure and the block let go of with its hold, as a
   DeviceBuffer's finalizer lets go of a block whose free failed: the framework has forgotten the
   pointer already (PyTorch's raw_delete, CuPy's memory object being freed) and never frees it
   again, so a block kept in the map kept its whole resource alive until the process ended (red team
   46). A sub-allocator gives such a block's memory back with its chunks when it is destroyed; a
   base resource's block (cudaMalloc, system) stays lost, as it did in the map. A refusal that a
   later try would undo (host memory for a stream's state) is not retried: the block goes the same
   way. Returns the status. */
static rmm_status rmmh__hook_free_block(rmmh__block *b) {
    rmm_status st;
    rmm_device_scope g = {0, false};
    (void)rmm_device_scope_enter(&g, b->device); /* (failed: nothing switched, the free made where it is) */
    st = rmmh__deallocate(b->hold->mr, (void *)b->ptr, b->bytes, b->stream);
    rmm__device_leave(&g);
    if (st != RMM_SUCCESS) {
        if (rmmh_last_failure_reentered() && rmmh__defer(b)) return RMM_SUCCESS;
        rmmh__hook_failures++;
    }
    rmmh__count_free(b->device, b->bytes);
    __atomic_sub_fetch(&b->hold->outstanding, 1, __ATOMIC_RELEASE);
    return st;
}
/* Frees a block the hooks handed out (rmmh__hook_free_block). A pointer they did not hand out is
   left alone (rmm_last_status() CORRUPTION). Returns the status. */
static rmm_status rmmh__hook_free(void *ptr) {
    rmmh__block b;
    rmmh__hook_settle();
    if (!ptr) return RMM_SUCCESS;
    if (!rmmh__map_take((uintptr_t)ptr, &b))
        return rmm_set_last_error(RMM_ERROR_CORRUPTION, "rmmh hooks: free of %p, which the hooks did not allocate (or freed already)", ptr);
    return rmmh__hook_free_block(&b);
}

/* ---- PyTorch: CUDAPluggableAllocator -------------------------------------------------------- */
/* torch.cuda.memory.CUDAPluggableAllocator(librmmh.so, "rmmh_torch_alloc", "rmmh_torch_free"):
   size bytes on stream from the resource of `device` (made current for the call when it is not).
   NULL on failure or for 0 bytes; never throws. */
RMMH_API void *rmmh_torch_alloc(size_t size, int device, rmm_stream stream) {
    if (!size) return NULL;
    return rmmh__hook_alloc(size, device, stream, 1);
}
/* Frees a block of rmmh_torch_alloc. size, device and stream are what PyTorch recorded at
   allocation; the block map's record (the same values, and the resource) is used. */
RMMH_API void rmmh_torch_free(void *ptr, size_t size, int device, rmm_stream stream) {
    (void)size;
    (void)device;
    (void)stream;
    (void)rmmh__hook_free(ptr);
}

/* ---- CuPy: CFunctionAllocator ---------------------------------------------------------------- */
/* CuPy's malloc has no stream: it allocates on this thread's stream if one was set
   (rmmh_cupy_set_stream; Python's rmmh.allocators.cupy.using_stream), else on the process default
   (0, the legacy default stream, or cudaStreamPerThread where CuPy uses per-thread default
   streams: set at install). */
static _Thread_local rmm_stream rmmh__cupy_tls_stream;
static _Thread_local int rmmh__cupy_tls_set;
static _Thread_local int rmmh__cupy_fail_next;
static rmm_stream rmmh__cupy_default_stream; /* atomic */

/* Sets this thread's stream for rmmh_cupy_malloc (set 0: back to the process default). */
RMMH_API void rmmh_cupy_set_stream(rmm_stream stream, int set) {
    rmmh__cupy_tls_stream = set ? stream : RMM_STREAM_DEFAULT;
    rmmh__cupy_tls_set = set != 0;
}
/* This thread's stream for rmmh_cupy_malloc; *is_set (may be NULL) says whether it was set. */
RMMH_API rmm_stream rmmh_cupy_get_stream(int *is_set) {
    if (is_set) *is_set = rmmh__cupy_tls_set;
    return rmmh__cupy_tls_set ? rmmh__cupy_tls_stream : __atomic_load_n(&rmmh__cupy_default_stream, __ATOMIC_RELAXED);
}
RMMH_API void rmmh_cupy_set_default_stream(rmm_stream stream) { __atomic_store_n(&rmmh__cupy_default_stream, stream, __ATOMIC_RELAXED); }
/* Makes this thread's next rmmh_cupy_malloc fail with OUT_OF_MEMORY, counted as a failed
   allocation of the hooks (tests). */
RMMH_API void rmmh_cupy_fail_next(void) { rmmh__cupy_fail_next = 1; }
/* The same, counted nowhere: the probe that finds out whether CuPy propagates the exception
   rmmh_cupy_malloc raises (until ABI 11 it used rmmh_cupy_fail_next, and making the fast allocator
   showed one failed allocation in hook_statistics and num_ooms: red team 33). */
RMMH_API void rmmh_cupy_probe_next(void) { rmmh__cupy_fail_next = 2; }

/* Out of memory in rmmh_cupy_malloc. CuPy does not check a NULL from a CFunctionAllocator (it would
   make a MemoryPointer at address 0), so where it propagates exceptions from its C call (Cython 3
   checks an intptr_t result of -1 for one) rmmh raises one: rmmh.allocators.cupy sets, once,
   CPython's PyErr_SetObject, Py_BuildValue and Py_DecRef and the exception type to raise, and this
   returns (void *)-1 with that exception set. Mode 0 returns NULL (the Python layer then checks the
   pointer itself). Only where this thread holds the GIL (CuPy holds it), as rmmh__gil_held tells
   (until helper ABI 7 PyGILState_Check told, which answers 1 on a thread without the GIL once a
   subinterpreter exists: the exception would have been set without the GIL); elsewhere NULL. */
typedef void (*rmmh__py_set_object)(void *type, void *value);
typedef void *(*rmmh__py_build_value)(const char *format, ...);
typedef void (*rmmh__py_decref)(void *obj);
static struct {
    int raise;
    rmmh__py_set_object set_object;
    rmmh__py_build_value build_value;
    rmmh__py_decref decref;
    void *type;
} rmmh__cupy_oom;

RMMH_API int rmmh_cupy_configure_errors(int raise, void *set_object, void *build_value, void *decref, void *type) {
    if (raise && (!set_object || !build_value || !decref || !type))
        return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh_cupy_configure_errors: a function or the type is NULL");
    rmmh__cupy_oom.raise = 0;
    rmmh__cupy_oom.set_object = (rmmh__py_set_object)set_object;
    rmmh__cupy_oom.build_value = (rmmh__py_build_value)build_value;
    rmmh__cupy_oom.decref = (rmmh__py_decref)decref;
    rmmh__cupy_oom.type = type;
    rmmh__cupy_oom.raise = raise;
    return RMM_SUCCESS;
}

/* CFunctionAllocator's malloc: size bytes on this thread's stream (see above) from the resource of
   device_id (CuPy's current device). NULL or, in raise mode, (void *)-1 with a Python exception
   set on failure. param is unused. */
RMMH_API void *rmmh_cupy_malloc(void *param, size_t size, int device_id) {
    void *p;
    (void)param;
    if (RMM__UNLIKELY(size == 0)) return NULL; /* nothing to hand out: not a failure, nothing counted */
    if (RMM__UNLIKELY(rmmh__cupy_fail_next)) {
        bool counted = rmmh__cupy_fail_next == 1;
        rmmh__cupy_fail_next = 0;
        rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "rmmh_cupy_malloc: failure requested by %s (%zu bytes)", counted ? "rmmh_cupy_fail_next" : "rmmh_cupy_probe_next", size);
        if (counted && device_id >= 0 && device_id < RMM_MAX_DEVICES) __atomic_add_fetch(&rmmh__stats[device_id].failed, 1, __ATOMIC_RELAXED);
        p = NULL;
    } else {
        p = rmmh__hook_alloc(size, device_id, rmmh_cupy_get_stream(NULL), 0);
    }
    if (RMM__LIKELY(p != NULL)) return p;
    if (rmmh__cupy_oom.raise && rmmh__gil_held()) {
        /* value (size, status): the exception type's __init__ reads rmm_last_error() */
        void *value = rmmh__cupy_oom.build_value("(Ki)", (unsigned long long)size, (int)rmm_last_status()); /* (K: sizes of 2^63 and up stay positive) */
        if (value) {
            rmmh__cupy_oom.set_object(rmmh__cupy_oom.type, value);
            rmmh__cupy_oom.decref(value);
        }
        return (void *)(intptr_t)-1;
    }
    return NULL;
}
/* CFunctionAllocator's free: gives the block back on the stream and device it was allocated on. A
   pointer the hooks did not hand out (the -1 of a failed malloc) is ignored. */
RMMH_API void rmmh_cupy_free(void *param, void *ptr, int device_id) {
    (void)param;
    (void)device_id;
    if (ptr == (void *)(intptr_t)-1) return;
    (void)rmmh__hook_free(ptr);
}

/* ---- CUDA IPC: rmm.h's rmm_ipc_* and rmm_mem_pool_* (NOT_SUPPORTED on the host backend) ------ */
RMMH_API int rmmh_ipc_get_mem_handle(void *base, unsigned char *out) { return (int)rmm_ipc_get_handle(base, out); }
RMMH_API int rmmh_ipc_open_mem_handle(const unsigned char *in, void **out) { return (int)rmm_ipc_open_handle(in, out); }
RMMH_API int rmmh_ipc_close_mem_handle(void *base) { return (int)rmm_ipc_close_handle(base); }
RMMH_API int rmmh_mempool_export_fd(rmm_mem_pool pool, int *fd) { return (int)rmm_mem_pool_export_fd(pool, fd); }
RMMH_API int rmmh_mempool_import_fd(int fd, rmm_mem_pool *out) { return (int)rmm_mem_pool_import_fd(fd, out); }
RMMH_API int rmmh_mempool_export_pointer(void *ptr, unsigned char *out) { return (int)rmm_mem_pool_export_pointer(ptr, out); }
RMMH_API int rmmh_mempool_import_pointer(rmm_mem_pool pool, const unsigned char *in, void **out) {
    return (int)rmm_mem_pool_import_pointer(pool, in, out);
}
RMMH_API int rmmh_imported_free(void *ptr) { return (int)rmm_mem_pool_free_imported(ptr); }
RMMH_API int rmmh_mempool_destroy(rmm_mem_pool pool) { return (int)rmm_mem_pool_destroy_imported(pool); }
