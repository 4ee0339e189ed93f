/* rmmh.c - the native half of the rmmh Python package: rmm.h compiled once, plus a few helpers.

   This file is the whole of librmmh.so (CUDA backend, CUDA runtime linked statically) and of
   librmmh_host.so (-DRMM_BACKEND_HOST). It defines RMM_IMPLEMENTATION, so the per-device resource
   table lives here, once per process: Python (through ctypes) and the framework hooks that load
   the same library share it.

   The helpers below use rmm.h's public API and make no CUDA call of their own (the device
   attribute, prefetch, version, stream and IPC calls are rmm.h's, through its platform layer); the
   few rmm__ names they use are rmm.h's host-side utilities (a mutex, the address map: the system
   resource's table of live blocks, the hooks' deferred frees) and the callback resource's record
   (to free the Python functions' pair with it).
   They exist for two reasons: to give ctypes calls without out-pointers on the hot path (an
   out-pointer costs a byref() per call), and to take descriptor fields as scalars so the Python
   side never mirrors a C struct layout. Every helper returns an rmm_status (0 is success) unless
   it says otherwise; the message is in rmm_last_error(). The frameworks' allocation hooks
   (PyTorch, CuPy) and the CUDA IPC helpers are in rmmh_hooks.c, included at the end. Build: see
   python/build_native.py. */
#define RMM_IMPLEMENTATION
#pragma GCC visibility push(default)
#include "rmm.h"
#include "rmm_cuda.h"
#pragma GCC visibility pop

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RMMH_API __attribute__((visibility("default")))

/* Bumped when a helper's signature changes or a helper is added that the Python side calls (10:
   rmmh_last_failure_reentered; 11: rmmh_hooks_settle, rmmh_cupy_probe_next; 12: rmmh_pool_create's
   virtual_extent_bytes, rmmh_pool_conf's seventh field); the Python side refuses a library it does
   not know. */
#define RMMH_ABI_VERSION 12

RMMH_API int rmmh_abi_version(void) { return RMMH_ABI_VERSION; }
RMMH_API const char *rmmh_rmm_version(void) { return RMM_VERSION_STRING; }
RMMH_API const char *rmmh_backend(void) {
#if defined(RMM_BACKEND_HOST)
    return "host";
#else
    return "cuda";
#endif
}

/* ---- the hot path ------------------------------------------------------------------------- */

/* Allocation calls begun on this thread (rmmh_alloc, rmmh_alloc_nowait, the framework hooks' calls).
   A Python callback's exception kept for a failure (rmmh._lib's set_pending) belongs to the call
   under way when this count is what it was then: an allocation that succeeded all the same (a pool
   that retried a smaller growth after its failure callback raised) leaves it to no one, and the
   next call counts past it (a red team's find: an unrelated out-of-memory raised the old
   RuntimeError). One thread-local add per call. */
static _Thread_local unsigned long rmmh__alloc_calls;
RMMH_API unsigned long rmmh_alloc_calls(void) { return rmmh__alloc_calls; }

/* rmm_allocate without an out-pointer: the block, or NULL on failure (rmm_last_status() says
   why). bytes must be > 0. A resource that reports success with NULL (a user callback) is turned
   into INVALID_ARGUMENT, so NULL always means failure. */
RMMH_API void *rmmh_alloc(rmm_resource *mr, size_t bytes, rmm_stream stream) {
    void *p = NULL;
    rmmh__alloc_calls++;
    if (rmm_allocate(mr, &p, bytes, stream) != RMM_SUCCESS) return NULL;
    if (!p && bytes) rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh: the resource returned NULL for %zu bytes", bytes);
    return p;
}

/* rmm_deallocate on `device` (< 0: the current one, no switch): makes it current around the call
   when it is not (rmm.h's device scope, as its containers do), so a buffer can be freed with another
   device current. Where the device cannot be read or set (the runtime unloading), it frees where it
   is. */
RMMH_API int rmmh_free(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream, int device) {
    rmm_device_scope scope;
    rmm_status st;
    if (device < 0 || rmm_device_scope_enter(&scope, device) != RMM_SUCCESS) return (int)rmm_deallocate(mr, ptr, bytes, stream);
    st = rmm_deallocate(mr, ptr, bytes, stream);
    rmm__device_leave(&scope); /* (the library's rule: a failed restore is logged, and the result stands with no failure left behind) */
    return (int)st;
}

/* Whether this thread's last failure was a resource refusing a call made from inside its own
   upstream while it held its lock (rmm.h's rmm__reentrant marks it: rmm__last_failure_reentrant;
   until 2026-11-29 this searched the message for "own upstream", which a user's resource could
   write too): the free of a buffer that Python's garbage collector collected while a pool's Python
   upstream (a CallbackMemoryResource) ran. rmmh defers such a free until the outer call is over
   (rmmh._lifetime.defer_free) instead of losing the block. O(1). */
RMMH_API int rmmh_last_failure_reentered(void) { return rmm__last_failure_reentrant(); }

/* "Nowait" calls, which the extension makes with the GIL held: on a pool (not virtual) they never
   wait for a lock, the device or an upstream (rmm.h's rmm_allocate_nowait / rmm_deallocate_nowait);
   anything else, or anything that would wait, sets *would_block and does nothing,
   and the extension makes the ordinary call with the GIL released. This saves the GIL's release and
   reacquisition (about 100 ns a pair) on the common case while never blocking a thread a CUDA host
   callback waits on for the GIL. */
RMMH_API void *rmmh_alloc_nowait(rmm_resource *mr, size_t bytes, rmm_stream stream, int *would_block) {
    void *p = NULL;
    bool wb = true;
    rmmh__alloc_calls++;
    /* (no resource or no bytes: the ordinary call decides) */
    if (!mr || !bytes || rmm_allocate_nowait(mr, &p, bytes, stream, &wb) != RMM_SUCCESS) p = NULL;
    *would_block = wb;
    return p;
}
RMMH_API int rmmh_free_nowait(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream, int device, int *would_block) {
    int current = -1;
    bool wb = true;
    rmm_status st = RMM_SUCCESS;
    *would_block = 1;
    if (!ptr) {
        *would_block = 0;
        return RMM_SUCCESS;
    }
    /* (a free on another device than the current one needs the device switched, and a free of 0
       bytes is refused by the ordinary call, whose message names the call the user made: red
       team 35) */
    if (mr && bytes && (device < 0 || (rmm_get_device(&current) == RMM_SUCCESS && current == device))) {
        st = rmm_deallocate_nowait(mr, ptr, bytes, stream, &wb);
        *would_block = wb;
    }
    return (int)st;
}

/* ---- Python callbacks ---------------------------------------------------------------------- */

/* rmm.h's callbacks return their answer. A Python function called through ctypes cannot always
   give one: when ctypes cannot call it at all (a RecursionError on entry, no memory for its
   arguments) it reports the error as unraisable and leaves the C result unset, garbage that the
   failure-callback adaptor would read as "retry" for ever. So the Python side gets an out-pointer
   that holds the safe answer first (no retry; an allocation that failed) and writes its own there.
   The Python function's pointer is the callback's arg (a union: C has no cast between function and
   object pointers). */
typedef void (*rmmh_failure_fn)(size_t bytes, int *retry);
typedef void (*rmmh_allocate_fn)(void **ptr, size_t bytes, rmm_stream stream, int *status);
typedef union {
    rmmh_failure_fn failure;
    rmmh_allocate_fn allocate;
    void *arg;
} rmmh__py_fn;
/* A CallbackMemoryResource's two Python functions (the callback resource's arg; freed with it,
   by rmmh_resource_destroy). */
typedef struct rmmh__py_pair {
    rmmh_allocate_fn allocate;
    rmm_deallocate_callback deallocate;
} rmmh__py_pair;

/* Whether the Python interpreter that loaded librmmh has finalized (its Py_IsInitialized() says 0,
   from just after the atexit functions on). From then on no Python function may be called through
   ctypes, which would make a thread state in a freed interpreter: a framework's C++ static
   destructor or C atexit handler freeing a tensor of a CallbackMemoryResource then segfaulted (a
   red team's find, 2026-11-29). So the trampolines below answer without calling: an allocation
   fails (NOT_SUPPORTED), a free leaves the block (the process is ending), a failure callback says
   no retry. Looked up once, when the first such resource is made (with the GIL held); false outside
   a Python process. */
typedef int (*rmmh__int_fn)(void);
static union {
    rmmh__int_fn fn;
    void *sym;
} rmmh__py_is_initialized;
static void rmmh__look_for_python(void) {
    void *self;
    if (rmmh__py_is_initialized.sym) return;
    self = dlopen(NULL, RTLD_NOW); /* (the program and what it loaded globally: python3, libpython) */
    if (self) {
        rmmh__py_is_initialized.sym = dlsym(self, "Py_IsInitialized");
        dlclose(self);
    }
}
static bool rmmh__python_gone(void) { return rmmh__py_is_initialized.sym && !rmmh__py_is_initialized.fn(); }

static bool rmmh__failure_trampoline(size_t bytes, void *arg) {
    rmmh__py_fn fn;
    int retry = 0;
    if (rmmh__python_gone()) return false;
    fn.arg = arg;
    fn.failure(bytes, &retry);
    return retry != 0;
}
static rmm_status rmmh__allocate_trampoline(void **ptr, size_t bytes, rmm_stream stream, void *arg) {
    const rmmh__py_pair *pair = (const rmmh__py_pair *)arg;
    int status = -1; /* (no status: the function was not called) */
    void *p = NULL;
    if (rmmh__python_gone())
        return rmm_set_last_error(RMM_ERROR_NOT_SUPPORTED, "rmmh: a CallbackMemoryResource's allocate function cannot be called: the Python interpreter has finalized");
    pair->allocate(&p, bytes, stream, &status);
    if (status == (int)RMM_SUCCESS) {
        *ptr = p;
        return RMM_SUCCESS;
    }
    if (status == -1)
        return rmm_set_last_error(RMM_ERROR_UNKNOWN, "rmmh: the allocate function of a CallbackMemoryResource could not be called (Python printed why, as an unraisable error)");
    return (rmm_status)status;
}
/* rmm_failure_callback_adaptor_create with a Python callback that answers through an out-pointer
   (see above). Fails as rmm_failure_callback_adaptor_create (INVALID_ARGUMENT for a NULL fn). */
RMMH_API int rmmh_failure_callback_adaptor_create(rmm_resource **out, rmm_resource *upstream, rmmh_failure_fn fn) {
    rmmh__py_fn f;
    if (out && !fn) { /* (a NULL out: rmm.h's own message) */
        *out = NULL;
        return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh_failure_callback_adaptor_create: the callback is NULL");
    }
    f.failure = fn;
    rmmh__look_for_python();
    return (int)rmm_failure_callback_adaptor_create(out, upstream, rmmh__failure_trampoline, f.arg);
}
static void rmmh__deallocate_trampoline(void *ptr, size_t bytes, rmm_stream stream, void *arg) {
    const rmmh__py_pair *pair = (const rmmh__py_pair *)arg;
    if (rmmh__python_gone()) return; /* (the block stays: the process is ending) */
    pair->deallocate(ptr, bytes, stream, NULL);
}
/* rmm_callback_resource_create with a Python allocate function that answers through
   out-pointers (see above) and a deallocate of rmm.h's own kind (called with arg NULL), both
   through trampolines that call nothing once the interpreter has finalized. Fails as
   rmm_callback_resource_create, and OUT_OF_MEMORY for the pair's few bytes. */
RMMH_API int rmmh_callback_resource_create(rmm_resource **out, rmmh_allocate_fn allocate, rmm_deallocate_callback deallocate) {
    rmmh__py_pair *pair;
    int st;
    if (out && (!allocate || !deallocate)) { /* (a NULL out: rmm.h's own message) */
        *out = NULL;
        return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh_callback_resource_create: the %s function is NULL", allocate ? "deallocate" : "allocate");
    }
    if (!out) return (int)rmm_callback_resource_create(out, rmmh__allocate_trampoline, rmmh__deallocate_trampoline, NULL);
    pair = (rmmh__py_pair *)calloc(1, sizeof *pair);
    if (!pair) {
        *out = NULL;
        return rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "rmmh_callback_resource_create: out of host memory");
    }
    pair->allocate = allocate;
    pair->deallocate = deallocate;
    rmmh__look_for_python();
    st = (int)rmm_callback_resource_create(out, rmmh__allocate_trampoline, rmmh__deallocate_trampoline, pair);
    if (st != RMM_SUCCESS) free(pair);
    return st;
}
/* The pair of an rmmh callback resource (freed after the resource), else NULL. */
static void *rmmh__callback_pair(rmm_resource *mr) {
    const rmm__callback_res *c = (const rmm__callback_res *)mr;
    return mr && mr->vtable == &rmm__callback_vtable && c->allocate == rmmh__allocate_trampoline ? c->arg : NULL;
}

/* ---- streams ------------------------------------------------------------------------------ */

/* A new stream on the current device: non-blocking (rmm_stream_create) or, with non_blocking 0,
   one that synchronizes with the legacy default stream (cudaStreamDefault, RMM's
   CudaStreamFlags.SYNC_DEFAULT). Destroy it with rmm_stream_destroy. INVALID_ARGUMENT iff out
   is NULL; CUDA iff the runtime refuses. On the host backend both kinds are the same. */
RMMH_API int rmmh_stream_create(rmm_stream *out, int non_blocking) {
    return (int)(non_blocking ? rmm_stream_create(out) : rmm_stream_create_blocking(out));
}

/* This thread's last error and status are kept across work whose own failures are not the
   caller's (a finalizer's destroy, the hooks' deferred frees) and put back after it as they were,
   with rmm.h's rmm__error_keep and rmm__error_back (serial and re-entrance mark included: a restore
   through rmm_set_last_error moved the serial on, and a callback resource whose Python callback
   failed with no message then took an earlier, unrelated one for its own; review 26b). */

/* rmm_resource_destroy for a Python finalizer: 1 iff rmm.h keeps the resource now (a free
   deferred to rmm_capture_end would reach it: rmm_resource_awaits_capture; try again after the
   capture), without calling the destroy; else 0, the resource destroyed, whatever the destroy
   reported (a failing cudaFree of a pool's chunk: the resource is gone all the same). This
   thread's last error and status are as before the call either way: a finalizer may run inside
   another call that failed and has yet to read them (a failure callback dropping a temporary
   resource). */
RMMH_API int rmmh_resource_destroy(rmm_resource *mr) {
    rmm__kept_error saved;
    void *pair;
    if (rmm_resource_awaits_capture(mr)) return 1;
    pair = rmmh__callback_pair(mr);
    rmm__error_keep(&saved);
    rmm_resource_destroy(mr);
    free(pair);
    rmm__error_back(&saved);
    return 0;
}

/* ---- devices ------------------------------------------------------------------------------ */

/* The current device, or -1 when it cannot be read (rmm_last_status() says why). */
RMMH_API int rmmh_get_device(void) {
    int d = -1;
    return rmm_get_device(&d) == RMM_SUCCESS ? d : -1;
}
/* The number of devices; 0 when there is no usable GPU (rmm_last_status() says why). */
RMMH_API int rmmh_device_count(void) {
    int n = 0;
    return rmm_get_device_count(&n) == RMM_SUCCESS ? n : 0;
}
RMMH_API int rmmh_runtime_version(void) {
    int v = 0;
    (void)rmm_cuda_versions(&v, NULL);
    return v;
}
RMMH_API int rmmh_driver_version(void) {
    int v = 0;
    (void)rmm_cuda_versions(NULL, &v);
    return v;
}

/* cudaDeviceGetAttribute through rmm.h's rmm_device_get_attribute (the host backend answers for its
   simulated devices); on failure *cuda_error is the CUDA error code for RMM's CUDARuntimeError. */
RMMH_API int rmmh_device_attribute(int attribute, int device, int *value, int *cuda_error) {
    if (!value || !cuda_error) return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh_device_attribute: value or cuda_error is NULL");
    return (int)rmm_device_get_attribute(attribute, device, value, cuda_error);
}

/* Host backend only: the simulated device capacity; NOT_SUPPORTED on the CUDA backend. */
RMMH_API int rmmh_set_host_capacity(size_t bytes) {
#if defined(RMM_BACKEND_HOST)
    rmm_host_backend_set_capacity(bytes);
    return RMM_SUCCESS;
#else
    (void)bytes;
    return rmm_set_last_error(RMM_ERROR_NOT_SUPPORTED, "rmmh_set_host_capacity: only the host backend has a simulated capacity");
#endif
}

/* rmm.h's rmm_prefetch: to `device` (-1: the host) on `stream`; memory that is not managed, or a
   device without concurrent managed access, is left alone (success). A no-op on the host backend. */
RMMH_API int rmmh_prefetch(void *ptr, size_t bytes, int device, rmm_stream stream) { return (int)rmm_prefetch(ptr, bytes, device, stream); }

/* ---- creation with scalar arguments (no struct layouts on the Python side) --------------- */

RMMH_API int rmmh_pool_create(rmm_resource **out, rmm_resource *upstream, size_t initial_bytes, size_t maximum_bytes, int growth,
                              size_t growth_granularity_bytes, int streams_outlive_pool, size_t virtual_bytes,
                              size_t virtual_extent_bytes) {
    rmm_pool_desc d = rmm_pool_desc_default();
    d.initial_bytes = initial_bytes;
    d.maximum_bytes = maximum_bytes;
    d.growth = (rmm_pool_growth)growth;
    if (growth_granularity_bytes) d.growth_granularity_bytes = growth_granularity_bytes;
    d.streams_outlive_pool = streams_outlive_pool != 0;
    d.virtual_bytes = virtual_bytes;
    d.virtual_extent_bytes = virtual_extent_bytes;
    return (int)rmm_pool_create(out, upstream, &d);
}
/* rmm_pool_desc_parse over scalars: fields[7] = initial, maximum, growth, granularity,
   streams_outlive (0/1), virtual, extent, read as the starting values and written back on
   success; conf NULL: $RMM_ALLOC_CONF (rmm_pool_desc_from_env; unset: nothing changes). */
RMMH_API int rmmh_pool_conf(const char *conf, size_t *fields) {
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_status st;
    if (!fields) return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh_pool_conf: fields is NULL");
    d.initial_bytes = fields[0];
    d.maximum_bytes = fields[1];
    d.growth = (rmm_pool_growth)fields[2];
    d.growth_granularity_bytes = fields[3];
    d.streams_outlive_pool = fields[4] != 0;
    d.virtual_bytes = fields[5];
    d.virtual_extent_bytes = fields[6];
    st = conf ? rmm_pool_desc_parse(&d, conf) : rmm_pool_desc_from_env(&d);
    if (st != RMM_SUCCESS) return (int)st;
    fields[0] = d.initial_bytes;
    fields[1] = d.maximum_bytes;
    fields[2] = (size_t)d.growth;
    fields[3] = d.growth_granularity_bytes;
    fields[4] = d.streams_outlive_pool;
    fields[5] = d.virtual_bytes;
    fields[6] = d.virtual_extent_bytes;
    return RMM_SUCCESS;
}
/* out[7]: pool_bytes, peak_pool_bytes, used_bytes, free_bytes, largest_free_block, free_blocks,
   upstream_chunks. */
RMMH_API int rmmh_pool_info(rmm_resource *pool, size_t *out) {
    rmm_pool_info info;
    rmm_status st;
    if (!out) return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh_pool_info: out is NULL");
    st = rmm_pool_get_info(pool, &info);
    if (st != RMM_SUCCESS) return (int)st;
    out[0] = info.pool_bytes;
    out[1] = info.peak_pool_bytes;
    out[2] = info.used_bytes;
    out[3] = info.free_bytes;
    out[4] = info.largest_free_block;
    out[5] = info.free_blocks;
    out[6] = info.upstream_chunks;
    return RMM_SUCCESS;
}
RMMH_API int rmmh_fixed_size_create(rmm_resource **out, rmm_resource *upstream, size_t block_bytes, size_t blocks_to_preallocate) {
    rmm_fixed_size_desc d = rmm_fixed_size_desc_default();
    d.block_bytes = block_bytes;
    d.blocks_to_preallocate = blocks_to_preallocate;
    return (int)rmm_fixed_size_create(out, upstream, &d);
}
RMMH_API int rmmh_binning_create(rmm_resource **out, rmm_resource *upstream, int min_size_exponent, int max_size_exponent) {
    rmm_binning_desc d = rmm_binning_desc_default();
    d.min_size_exponent = min_size_exponent;
    d.max_size_exponent = max_size_exponent;
    return (int)rmm_binning_create(out, upstream, &d);
}
RMMH_API int rmmh_arena_create(rmm_resource **out, rmm_resource *upstream, size_t arena_bytes, size_t superblock_bytes, int streams_outlive_arena) {
    rmm_arena_desc d = rmm_arena_desc_default();
    d.arena_bytes = arena_bytes;
    d.superblock_bytes = superblock_bytes;
    d.streams_outlive_arena = streams_outlive_arena != 0;
    return (int)rmm_arena_create(out, upstream, &d);
}
RMMH_API int rmmh_async_create(rmm_resource **out, size_t initial_pool_bytes, size_t release_threshold_bytes, int export_handle) {
    rmm_async_desc d = rmm_async_desc_default();
    d.initial_pool_bytes = initial_pool_bytes;
    d.release_threshold_bytes = release_threshold_bytes;
    d.export_handle = (rmm_export_handle)export_handle;
    return (int)rmm_async_resource_create(out, &d);
}
RMMH_API int rmmh_async_pinned_create(rmm_resource **out, size_t initial_pool_bytes, size_t release_threshold_bytes) {
    rmm_async_desc d = rmm_async_desc_default();
    d.initial_pool_bytes = initial_pool_bytes;
    d.release_threshold_bytes = release_threshold_bytes;
    return (int)rmm_async_pinned_resource_create(out, &d);
}

/* out[6]: current_bytes, current_count, peak_bytes, peak_count, total_bytes, total_count (the
   order of RMM's Python Statistics). */
static void rmmh__stats_out(const rmm_statistics *s, int64_t *out) {
    out[0] = s->bytes.value;
    out[1] = s->count.value;
    out[2] = s->bytes.peak;
    out[3] = s->count.peak;
    out[4] = s->bytes.total;
    out[5] = s->count.total;
}
RMMH_API int rmmh_statistics_get(rmm_resource *mr, int64_t *out) {
    rmm_statistics s;
    rmm_status st = rmm_statistics_get(mr, &s);
    if (st == RMM_SUCCESS) rmmh__stats_out(&s, out);
    return (int)st;
}
RMMH_API int rmmh_statistics_pop(rmm_resource *mr, int64_t *out) {
    rmm_statistics s;
    rmm_status st = rmm_statistics_pop(mr, &s);
    if (st == RMM_SUCCESS) rmmh__stats_out(&s, out);
    return (int)st;
}

/* The tracking report as a malloc'd string (free it with rmmh_free_string), or NULL on failure. */
RMMH_API char *rmmh_tracking_report(rmm_resource *mr) {
    char *text = NULL;
    size_t length = 0;
    rmm_status st;
    FILE *f = open_memstream(&text, &length);
    if (!f) {
        rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "rmmh_tracking_report: open_memstream failed");
        return NULL;
    }
    st = rmm_tracking_report(mr, f);
    fclose(f);
    if (st != RMM_SUCCESS) {
        free(text);
        return NULL;
    }
    return text;
}
RMMH_API void rmmh_free_string(char *text) { free(text); }

/* ---- system memory: malloc'd memory as a device resource (RMM's SystemMemoryResource) ----- */
/* Usable by kernels only where the GPU can access pageable memory (HMM, ATS, Grace Hopper). The
   live blocks are kept in a map (address -> bytes) under a mutex, so that a free of an address this
   resource did not hand out, or freed already, or with another size, is RMM_ERROR_CORRUPTION with
   the block kept, not free() of a bad pointer (a red team's find, 2026-11-29: a double free from
   Python aborted the process; RMM's C++ resource calls free() unchecked). O(1) a call. */
typedef struct rmmh__system {
    rmm_resource base;
    rmm__mutex lock;
    rmm__addr_map live;
} rmmh__system;
static rmm_status rmmh__system_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmmh__system *s = (rmmh__system *)self;
    bool put;
    (void)stream;
    if (posix_memalign(ptr, alignment, bytes) != 0) {
        *ptr = NULL;
        return rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "system: posix_memalign(bytes=%zu, alignment=%zu) failed: out of memory", bytes, alignment);
    }
    rmm__lock(&s->lock);
    put = rmm__addr_map_put(&s->live, (uintptr_t)*ptr, (void *)(uintptr_t)bytes); /* (bytes > 0: rmm_allocate hands out nothing for 0) */
    rmm__unlock(&s->lock);
    if (!put) {
        free(*ptr);
        *ptr = NULL;
        return rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "system: out of host memory for the table of live blocks");
    }
    return RMM_SUCCESS;
}
/* A live block's table entry while a free of it waits for its stream: a concurrent free of the
   same pointer is refused (CORRUPTION) instead of passing the lookup too, and a failed wait puts
   the size back. (No size with this bit can be allocated.) */
#define RMMH__SYSTEM_FREEING ((size_t)1 << (sizeof(size_t) * 8 - 1))
static rmm_status rmmh__system_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmmh__system *s = (rmmh__system *)self;
    void **slot;
    size_t held = 0;
    rmm_status st;
    (void)alignment;
    rmm__lock(&s->lock);
    slot = rmm__addr_map_find(&s->live, (uintptr_t)ptr);
    if (slot) held = (size_t)(uintptr_t)*slot;
    if (slot && held == bytes) *slot = (void *)(uintptr_t)(bytes | RMMH__SYSTEM_FREEING); /* (claimed: a second free of it fails) */
    rmm__unlock(&s->lock);
    if (!slot)
        return rmm_set_last_error(RMM_ERROR_CORRUPTION, "system: deallocate(ptr=%p, bytes=%zu): not allocated by this resource, or already freed", ptr, bytes);
    if (held & RMMH__SYSTEM_FREEING)
        return rmm_set_last_error(RMM_ERROR_CORRUPTION, "system: deallocate(ptr=%p, bytes=%zu): another call is freeing it (a double free)", ptr, bytes);
    if (held != bytes)
        return rmm_set_last_error(RMM_ERROR_CORRUPTION, "system: deallocate(ptr=%p, bytes=%zu): the block holds %zu bytes; the size must be the one allocated", ptr, bytes, held);
    /* stream-ordered like RMM's: the memory may still be in use by work on the stream. A failed
       wait keeps the block allocated, as every failed free does (until red team 46 it was freed
       and the failure reported: a DeviceBuffer whose resize got its old block back then held freed
       memory). */
    st = rmm_stream_synchronize(stream);
    rmm__lock(&s->lock);
    slot = rmm__addr_map_find(&s->live, (uintptr_t)ptr); /* (still there: claimed, no other call takes it out) */
    if (st != RMM_SUCCESS) {
        if (slot) *slot = (void *)(uintptr_t)bytes;
    } else {
        (void)rmm__addr_map_remove(&s->live, (uintptr_t)ptr);
    }
    rmm__unlock(&s->lock);
    if (st != RMM_SUCCESS) return st;
    free(ptr);
    return RMM_SUCCESS;
}
static void rmmh__system_destroy(rmm_resource *self) {
    rmmh__system *s = (rmmh__system *)self;
    rmm__addr_map_free(&s->live); /* (blocks still live stay malloc'd: the caller's to free, as RMM's) */
    rmm__mutex_destroy(&s->lock);
    free(self);
}
static const rmm_resource_vtable rmmh__system_vtable = {"system", rmmh__system_allocate, rmmh__system_deallocate, NULL, rmmh__system_destroy};
RMMH_API int rmmh_system_resource_create(rmm_resource **out) {
    rmmh__system *s;
    if (!out) return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "rmmh_system_resource_create: out is NULL");
    s = (rmmh__system *)calloc(1, sizeof *s);
    *out = NULL;
    if (!s || !rmm__addr_map_init(&s->live, 64)) {
        free(s);
        return rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "rmmh_system_resource_create: out of host memory");
    }
    rmm__mutex_init(&s->lock);
    s->base.vtable = &rmmh__system_vtable;
    *out = &s->base;
    return RMM_SUCCESS;
}

/* ---- the frameworks' hooks (PyTorch, CuPy) and CUDA IPC: see that file ------------------- */
#include "rmmh_hooks.c"
