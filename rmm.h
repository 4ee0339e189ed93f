/* rmm.h - v0.1.0 - CUDA memory management in one C header (RAPIDS RMM for C) - MIT licence, see end of file

   Do this:
      #define RMM_IMPLEMENTATION
   before you include this file in *one* C, C++ or CUDA file to create the implementation.

      // in exactly one .c or .cu file
      #define RMM_IMPLEMENTATION
      #include "rmm.h"

   Build:
      gcc  -std=c99 -O2 app.c -isystem /usr/local/cuda/include -L/usr/local/cuda/lib64 -lcudart -lpthread
      nvcc -O2 app.cu -o app                       (nvcc links cudart itself)
      gcc  -std=c99 -O2 -DRMM_BACKEND_HOST app.c -lpthread    (no GPU, no CUDA: the host backend)

   What it is: memory resources (cudaMalloc, managed, cudaMallocAsync pools, pinned host), fast
   stream-ordered sub-allocators (pool, fixed-size, binning, arena), adaptors (logging, statistics,
   tracking, limiting, failure callback, aligned, thread-safe, prefetch, callback), per-device
   current resources, streams and stream pools, containers (device buffer, uvector, scalar) and the
   2019 RMM C API (rmmAlloc/RMM_ALLOC). Every status is a return code; every failure leaves a
   message in rmm_last_error().

   Table of contents (search for the tag):
      >>config      compile-time options           >>errors      status codes, last error
      >>platform    the only place CUDA is called  >>resource    the resource interface
      >>base        cuda, managed, async, pinned   >>pool        coalescing stream-ordered pool
      >>fixed       fixed-size blocks              >>binning     size-binned dispatch
      >>arena       per-thread/per-stream arenas   >>adaptors    logging, statistics, tracking, ...
      >>debuglog    the debug log                  >>perdevice   current and per-device resources
      >>streams     streams and stream pools       >>containers  device buffer, uvector, scalar
      >>legacy      rmmInitialize, RMM_ALLOC       >>cxx         thrust allocator (C++ only)

   Compile-time options (define before *every* #include of rmm.h unless said otherwise):
      RMM_IMPLEMENTATION  in exactly one file: emits the implementation there.
      RMM_STATIC          everything static to the implementing file (then include it in one file only).
      RMM_BACKEND_HOST    no CUDA at all: "device" memory is host memory from posix_memalign, streams
                          and events run in order on the host. For tests and development without a GPU.
      RMM_HOST_BACKEND_BYTES    host backend: the simulated device capacity (default 4 GiB); change
                          it at run time with rmm_host_backend_set_capacity().
      RMM_HOST_BACKEND_DEVICES  host backend: how many devices it simulates (default 2).
      RMM_NO_POOL, RMM_NO_BINNING, RMM_NO_ARENA, RMM_NO_LOGGING
                          leave those features out (binning also needs fixed-size, which stays);
                          their create functions then return RMM_ERROR_NOT_SUPPORTED.
      RMM_DEBUG           extra checks: sub-allocators validate every invariant after each call.
      RMM_LOG_LEVEL       the most verbose debug-log level compiled in (default RMM_LOG_LEVEL_INFO).
      RMM_ASSERT(x)       the library's internal assertion (default: assert from <assert.h>).
      RMM_SYS_MALLOC(n), RMM_SYS_REALLOC(p,n), RMM_SYS_FREE(p)
                          the host allocator for the library's own bookkeeping; all three or none
                          (default malloc/realloc/free). Only the implementing file needs them.
      RMM_MAX_DEVICES     the largest device count the per-device table holds (default 64).

   Deliberate non-goals: no Windows-specific code (POSIX threads and GCC/Clang atomics); no writes
   into the memory a sub-allocator manages (all bookkeeping is on the host); no exceptions and no
   C++ wrappers beyond the Thrust allocator; no implicit host synchronization on allocate/free
   except where documented (arena large blocks, trim).

   Revision history:
      0.1.0  (2026-11)  first release: foundation, sub-allocators, adaptors, containers, legacy API.
*/

#ifndef RMM_H_INCLUDED
#define RMM_H_INCLUDED

/* ======================================================================================= */
/* ==== config: compile-time options ==================================================== */
/* ======================================================================================= */ /* >>config */

/* The implementation uses POSIX (threads, clock_gettime, posix_memalign). These must be set before
   the first system header, so rmm.h works as the first include of a -std=c99 file. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#if defined(RMM_IMPLEMENTATION) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE 1
#endif

#define RMM_VERSION_MAJOR 0
#define RMM_VERSION_MINOR 1
#define RMM_VERSION_PATCH 0
#define RMM_VERSION_STRING "0.1.0"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#if defined(RMM_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define RMMDEF static __attribute__((unused))
#elif defined(RMM_STATIC)
#define RMMDEF static
#else
#define RMMDEF extern
#endif

#if !defined(RMM_BACKEND_HOST)
#include <cuda_runtime_api.h>
#endif

/* The minimum alignment of every device allocation, in bytes. */
#define RMM_ALIGNMENT ((size_t)256)

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================= */
/* ==== errors: status codes and the last error message ================================= */
/* ======================================================================================= */ /* >>errors */

typedef enum rmm_status {
    RMM_SUCCESS = 0,
    RMM_ERROR_CUDA = 1,             /* a CUDA call failed for a reason other than memory */
    RMM_ERROR_INVALID_ARGUMENT = 2, /* NULL out-pointer, bad alignment, size not a multiple of 256, ... */
    RMM_ERROR_NOT_INITIALIZED = 3,  /* legacy API used before rmmInitialize or after rmmFinalize */
    RMM_ERROR_OUT_OF_MEMORY = 4,    /* retryable: device memory, a pool maximum or a limit is exhausted */
    RMM_ERROR_UNKNOWN = 5,          /* anything else (kept for the legacy API) */
    RMM_ERROR_IO = 6,               /* a log file could not be opened or written */
    RMM_ERROR_NOT_SUPPORTED = 7,    /* compiled out by a feature macro, or unsupported by device/driver */
    RMM_ERROR_CORRUPTION = 8        /* a free of memory the resource does not own, double free, broken invariant */
} rmm_status;

/* The name of a status ("RMM_ERROR_OUT_OF_MEMORY"); never NULL. O(1), thread-safe. */
RMMDEF const char *rmm_status_string(rmm_status status);
/* The message of the last failing call on this thread: which call, the CUDA error name, the sizes.
   Never NULL: "" before the first failure. A success does not clear it (like errno). O(1). */
RMMDEF const char *rmm_last_error(void);
/* The status of the last failing call on this thread (RMM_SUCCESS before the first failure). For the
   few calls that return a pointer or a size rather than a status. O(1). */
RMMDEF rmm_status rmm_last_status(void);

/* Returns the status from the enclosing function when `call` fails. */
#define RMM_TRY(call)                                   \
    do {                                                \
        rmm_status rmm__try_status_ = (call);           \
        if (rmm__try_status_ != RMM_SUCCESS)            \
            return rmm__try_status_;                    \
    } while (0)

#if !defined(RMM_BACKEND_HOST)
/* Maps a cudaError_t to a status (cudaErrorMemoryAllocation -> RMM_ERROR_OUT_OF_MEMORY, else
   RMM_ERROR_CUDA), sets the last-error message with `what`, and clears the non-sticky CUDA error so
   it does not leak into the caller's next cudaGetLastError(). cudaSuccess gives RMM_SUCCESS. */
RMMDEF rmm_status rmm_status_from_cuda(cudaError_t error, const char *what);
/* Returns a status from the enclosing function when the CUDA call fails. */
#define RMM_CUDA_TRY(call) RMM_TRY(rmm_status_from_cuda((call), #call))
#endif

/* ======================================================================================= */
/* ==== streams ========================================================================= */
/* ======================================================================================= */ /* >>streams */

#if defined(RMM_BACKEND_HOST)
typedef struct rmm__host_stream *rmm_stream;     /* an opaque handle; work runs in order on the host */
typedef struct rmm__host_mempool *rmm_mem_pool;  /* stands in for cudaMemPool_t */
#define RMM_STREAM_DEFAULT ((rmm_stream)0)
#define RMM_STREAM_LEGACY ((rmm_stream)1)
#define RMM_STREAM_PER_THREAD ((rmm_stream)2)
#else
typedef cudaStream_t rmm_stream;
typedef cudaMemPool_t rmm_mem_pool;
#define RMM_STREAM_DEFAULT ((rmm_stream)0)
#define RMM_STREAM_LEGACY cudaStreamLegacy
#define RMM_STREAM_PER_THREAD cudaStreamPerThread
#endif

/* Creates a non-blocking stream on the current device. Fails with INVALID_ARGUMENT iff out is NULL,
   CUDA iff the runtime refuses. Thread-safe. */
RMMDEF rmm_status rmm_stream_create(rmm_stream *out);
/* Destroys a stream made by rmm_stream_create (pending work still completes). The default streams
   are an INVALID_ARGUMENT. */
RMMDEF rmm_status rmm_stream_destroy(rmm_stream stream);
/* Blocks the host until all work on the stream is done. Fails with CUDA iff that work failed. */
RMMDEF rmm_status rmm_stream_synchronize(rmm_stream stream);

typedef struct rmm_stream_pool rmm_stream_pool;
/* A fixed set of streams handed out round robin. count 0 means 16. Fails with INVALID_ARGUMENT iff
   out is NULL, OUT_OF_MEMORY or CUDA iff a stream cannot be made (nothing is leaked). */
RMMDEF rmm_status rmm_stream_pool_create(rmm_stream_pool **out, size_t count);
/* The next stream, round robin; lock-free and thread-safe. O(1). */
RMMDEF rmm_stream rmm_stream_pool_get(rmm_stream_pool *pool);
/* The stream at index modulo the pool size. O(1). */
RMMDEF rmm_stream rmm_stream_pool_get_at(rmm_stream_pool *pool, size_t index);
RMMDEF size_t rmm_stream_pool_size(const rmm_stream_pool *pool);
/* Destroys every stream and the pool. NULL is a no-op. */
RMMDEF void rmm_stream_pool_destroy(rmm_stream_pool *pool);

/* ======================================================================================= */
/* ==== resource: the memory resource interface ========================================= */
/* ======================================================================================= */ /* >>resource */

typedef struct rmm_resource rmm_resource;
typedef struct rmm_resource_vtable {
    const char *type_name;
    /* Called with ptr != NULL, bytes > 0 and alignment a power of two >= 256. */
    rmm_status (*allocate)(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream);
    /* Called with ptr != NULL and the bytes and alignment it was allocated with. */
    rmm_status (*deallocate)(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream);
    bool (*is_equal)(const rmm_resource *self, const rmm_resource *other); /* NULL: identity */
    void (*destroy)(rmm_resource *self);                                   /* NULL: nothing */
} rmm_resource_vtable;
/* A user-defined resource embeds this as its first member and points it at its own vtable. */
struct rmm_resource {
    const rmm_resource_vtable *vtable;
};

/* Allocates `bytes` aligned to 256 on `stream` from `mr` (NULL: the current device resource).
   bytes == 0 succeeds with *ptr = NULL. Fails with INVALID_ARGUMENT iff ptr is NULL (nothing else is
   touched), otherwise with what the resource returns: OUT_OF_MEMORY when memory is exhausted (the
   process keeps working), *ptr is NULL on every failure. Stream-ordered: the memory may be used by
   work on `stream` at once. Cost and thread safety: those of the resource. */
RMMDEF rmm_status rmm_allocate(rmm_resource *mr, void **ptr, size_t bytes, rmm_stream stream);
/* As rmm_allocate with an alignment: a power of two; values below 256 are raised to 256. Anything
   else is INVALID_ARGUMENT. */
RMMDEF rmm_status rmm_allocate_aligned(rmm_resource *mr, void **ptr, size_t bytes, size_t alignment, rmm_stream stream);
/* Frees memory from rmm_allocate with the same mr, bytes and a stream on which it may be reused at
   once. NULL is a no-op. Fails with what the resource returns (CORRUPTION for a pointer it does not
   own, where the resource can tell). */
RMMDEF rmm_status rmm_deallocate(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream);
RMMDEF rmm_status rmm_deallocate_aligned(rmm_resource *mr, void *ptr, size_t bytes, size_t alignment, rmm_stream stream);
/* Destroys this layer only, never its upstream. NULL is a no-op. Not concurrent with use. */
RMMDEF void rmm_resource_destroy(rmm_resource *mr);
/* true iff memory from one may be freed by the other (vtable is_equal, else identity). */
RMMDEF bool rmm_resource_is_equal(const rmm_resource *a, const rmm_resource *b);
/* The vtable's type_name ("pool", "cuda", ...); "null" for NULL. */
RMMDEF const char *rmm_resource_type_name(const rmm_resource *mr);
/* Checks every invariant of a library sub-allocator (pool, fixed-size, binning and its bins, arena)
   and returns CORRUPTION with a message naming the first one broken; SUCCESS for resources that keep
   no state to check (base resources, adaptors, user resources). O(number of blocks). Takes the
   resource's locks: not for use while another thread is mid-call on a resource without them. */
RMMDEF rmm_status rmm_resource_validate(rmm_resource *mr);

/* ======================================================================================= */
/* ==== base: device resources over the CUDA runtime ==================================== */
/* ======================================================================================= */ /* >>base */

/* cudaMalloc / cudaFree; the stream is ignored (cudaFree synchronizes the device). Alignments above
   256 are honoured by over-allocating. Fails with INVALID_ARGUMENT iff out is NULL. */
RMMDEF rmm_status rmm_cuda_resource_create(rmm_resource **out);
/* cudaMallocManaged (attach global) / cudaFree. */
RMMDEF rmm_status rmm_managed_resource_create(rmm_resource **out);

typedef enum rmm_export_handle {
    RMM_EXPORT_NONE = 0,
    RMM_EXPORT_POSIX_FD = 1, /* cudaMemHandleTypePosixFileDescriptor */
    RMM_EXPORT_FABRIC = 8    /* cudaMemHandleTypeFabric */
} rmm_export_handle;
typedef struct rmm_async_desc {
    size_t initial_pool_bytes;      /* default 0: no priming; else allocate and free this much at creation */
    size_t release_threshold_bytes; /* default 0: never trim (UINT64_MAX in CUDA's terms) */
    rmm_export_handle export_handle; /* default RMM_EXPORT_NONE */
} rmm_async_desc;
RMMDEF rmm_async_desc rmm_async_desc_default(void);
/* An owned cudaMemPool_t on the current device, used with cudaMallocFromPoolAsync / cudaFreeAsync.
   desc NULL: defaults. Fails with INVALID_ARGUMENT iff out is NULL or export_handle is not one of the
   enum values; NOT_SUPPORTED iff the device has no memory pools or does not support the export handle
   type (the message says which); OUT_OF_MEMORY iff priming fails; CUDA otherwise. */
RMMDEF rmm_status rmm_async_resource_create(rmm_resource **out, const rmm_async_desc *desc);
/* The cudaMemPool_t of an async resource (for IPC export or attribute tuning). INVALID_ARGUMENT iff
   mr is not an async or async-view resource or pool is NULL. */
RMMDEF rmm_status rmm_async_resource_get_pool(rmm_resource *mr, rmm_mem_pool *pool);
/* A non-owning resource over an existing pool. INVALID_ARGUMENT iff out or pool is NULL. */
RMMDEF rmm_status rmm_async_view_resource_create(rmm_resource **out, rmm_mem_pool pool);
/* Device-accessible pinned host memory (cudaHostAlloc(cudaHostAllocPortable|Mapped) / cudaFreeHost). */
RMMDEF rmm_status rmm_pinned_host_resource_create(rmm_resource **out);

#if defined(RMM_BACKEND_HOST)
/* Host backend only: set the simulated device capacity (bytes) shared by all simulated devices. */
RMMDEF void rmm_host_backend_set_capacity(size_t bytes);
#endif

/* ======================================================================================= */
/* ==== pool, fixed-size, binning, arena: sub-allocators ================================= */
/* ======================================================================================= */ /* >>pool */

typedef enum rmm_pool_growth {
    RMM_POOL_GROWTH_GEOMETRIC = 0, /* RMM's rule: doubles without a maximum, approaches the maximum
                                      geometrically with one, halves the step when upstream fails */
    RMM_POOL_GROWTH_ON_DEMAND = 1  /* grows by the request rounded up to growth_granularity_bytes and
                                      gives wholly free chunks of the allocating stream back before
                                      growing: holds little beyond what is live */
} rmm_pool_growth;
typedef struct rmm_pool_desc {
    size_t initial_bytes;            /* default 0: starts empty. Multiple of 256. */
    size_t maximum_bytes;            /* default 0: unbounded. Multiple of 256, >= initial_bytes. */
    rmm_pool_growth growth;          /* default RMM_POOL_GROWTH_GEOMETRIC */
    size_t growth_granularity_bytes; /* ON_DEMAND step; default 2 MiB. Multiple of 256. */
    bool streams_outlive_pool;       /* default false. true promises that no stream used with the pool is
                                        destroyed before the pool: frees then make no CUDA call, and the
                                        event that orders another stream behind them is recorded only
                                        when that stream takes the memory. */
} rmm_pool_desc;
typedef struct rmm_pool_info {
    size_t pool_bytes;         /* bytes held from upstream */
    size_t peak_pool_bytes;    /* the most ever held from upstream */
    size_t used_bytes;         /* handed out, rounded to 256 */
    size_t free_bytes;         /* pool_bytes - used_bytes */
    size_t largest_free_block; /* bytes */
    size_t free_blocks;
    size_t upstream_chunks;
} rmm_pool_info;
RMMDEF rmm_pool_desc rmm_pool_desc_default(void);
RMMDEF rmm_status rmm_pool_create(rmm_resource **out, rmm_resource *upstream, const rmm_pool_desc *desc);
RMMDEF rmm_status rmm_pool_get_info(rmm_resource *pool, rmm_pool_info *info);
RMMDEF rmm_status rmm_pool_trim(rmm_resource *pool, size_t *released_bytes);
RMMDEF rmm_status rmm_pool_validate(rmm_resource *pool);

/* >>fixed */
typedef struct rmm_fixed_size_desc {
    size_t block_bytes;           /* default 1 MiB; rounded up to 256 */
    size_t blocks_to_preallocate; /* default 128; also the blocks per later upstream chunk */
} rmm_fixed_size_desc;
RMMDEF rmm_fixed_size_desc rmm_fixed_size_desc_default(void);
RMMDEF rmm_status rmm_fixed_size_create(rmm_resource **out, rmm_resource *upstream, const rmm_fixed_size_desc *desc);

/* >>binning */
typedef struct rmm_binning_desc {
    int min_size_exponent; /* bins 2^min .. 2^max bytes; both 0: no automatic bins */
    int max_size_exponent;
} rmm_binning_desc;
RMMDEF rmm_binning_desc rmm_binning_desc_default(void);
RMMDEF rmm_status rmm_binning_create(rmm_resource **out, rmm_resource *upstream, const rmm_binning_desc *desc);
RMMDEF rmm_status rmm_binning_add_bin(rmm_resource *binning, size_t allocation_bytes, rmm_resource *bin_resource);

/* >>arena */
typedef struct rmm_arena_desc {
    size_t arena_bytes;      /* default 0: half of the free device memory, aligned down to 256 */
    size_t superblock_bytes; /* default 0: 1 MiB. Multiple of 256. */
} rmm_arena_desc;
RMMDEF rmm_arena_desc rmm_arena_desc_default(void);
RMMDEF rmm_status rmm_arena_create(rmm_resource **out, rmm_resource *upstream, const rmm_arena_desc *desc);

/* ======================================================================================= */
/* ==== adaptors ======================================================================== */
/* ======================================================================================= */ /* >>adaptors */

RMMDEF rmm_status rmm_logging_adaptor_create(rmm_resource **out, rmm_resource *upstream, const char *path, bool auto_flush);
RMMDEF rmm_status rmm_logging_adaptor_create_file(rmm_resource **out, rmm_resource *upstream, FILE *file, bool auto_flush);
RMMDEF rmm_status rmm_logging_adaptor_flush(rmm_resource *mr);

typedef struct rmm_counter {
    int64_t value, peak, total;
} rmm_counter;
typedef struct rmm_statistics {
    rmm_counter bytes, count;
} rmm_statistics;
RMMDEF rmm_status rmm_statistics_adaptor_create(rmm_resource **out, rmm_resource *upstream);
RMMDEF rmm_status rmm_statistics_get(rmm_resource *mr, rmm_statistics *out);
RMMDEF rmm_status rmm_statistics_push(rmm_resource *mr);
RMMDEF rmm_status rmm_statistics_pop(rmm_resource *mr, rmm_statistics *popped);

RMMDEF rmm_status rmm_tracking_adaptor_create(rmm_resource **out, rmm_resource *upstream, bool capture_stacks);
RMMDEF rmm_status rmm_tracking_get(rmm_resource *mr, size_t *outstanding_bytes, size_t *outstanding_count);
RMMDEF rmm_status rmm_tracking_report(rmm_resource *mr, FILE *out);

RMMDEF rmm_status rmm_limiting_adaptor_create(rmm_resource **out, rmm_resource *upstream, size_t limit_bytes);
RMMDEF rmm_status rmm_limiting_get(rmm_resource *mr, size_t *allocated_bytes, size_t *limit_bytes);

typedef bool (*rmm_failure_callback)(size_t bytes, void *arg);
RMMDEF rmm_status rmm_failure_callback_adaptor_create(rmm_resource **out, rmm_resource *upstream, rmm_failure_callback callback, void *arg);

RMMDEF rmm_status rmm_aligned_adaptor_create(rmm_resource **out, rmm_resource *upstream, size_t alignment, size_t threshold_bytes);
RMMDEF rmm_status rmm_thread_safe_adaptor_create(rmm_resource **out, rmm_resource *upstream);
RMMDEF rmm_status rmm_prefetch_adaptor_create(rmm_resource **out, rmm_resource *upstream);

typedef rmm_status (*rmm_allocate_callback)(void **ptr, size_t bytes, rmm_stream stream, void *arg);
typedef void (*rmm_deallocate_callback)(void *ptr, size_t bytes, rmm_stream stream, void *arg);
RMMDEF rmm_status rmm_callback_resource_create(rmm_resource **out, rmm_allocate_callback allocate, rmm_deallocate_callback deallocate, void *arg);

/* ======================================================================================= */
/* ==== debuglog: the library's own diagnostic log ====================================== */
/* ======================================================================================= */ /* >>debuglog */

#define RMM_LOG_LEVEL_TRACE 0
#define RMM_LOG_LEVEL_DEBUG 1
#define RMM_LOG_LEVEL_INFO 2
#define RMM_LOG_LEVEL_WARN 3
#define RMM_LOG_LEVEL_ERROR 4
#define RMM_LOG_LEVEL_CRITICAL 5
#define RMM_LOG_LEVEL_OFF 6
#ifndef RMM_LOG_LEVEL
#define RMM_LOG_LEVEL RMM_LOG_LEVEL_INFO
#endif
/* Sets the run-time level (one of RMM_LOG_LEVEL_*); messages below it, or below the compiled-in
   RMM_LOG_LEVEL, are dropped. Returns the previous level. Thread-safe. */
RMMDEF int rmm_set_log_level(int level);
RMMDEF int rmm_get_log_level(void);
/* Flushes the debug log file, if it was opened. */
RMMDEF void rmm_flush_log(void);

/* ======================================================================================= */
/* ==== perdevice: current and per-device resources ===================================== */
/* ======================================================================================= */ /* >>perdevice */

RMMDEF rmm_resource *rmm_get_current_device_resource(void);
RMMDEF rmm_resource *rmm_set_current_device_resource(rmm_resource *mr);
RMMDEF rmm_resource *rmm_get_per_device_resource(int device);
RMMDEF rmm_resource *rmm_set_per_device_resource(int device, rmm_resource *mr);
RMMDEF rmm_status rmm_available_device_memory(size_t *free_bytes, size_t *total_bytes);
RMMDEF size_t rmm_percent_of_free_device_memory(int percent);
/* The number of devices (0 without a usable GPU) and the current device. */
RMMDEF rmm_status rmm_get_device_count(int *count);
RMMDEF rmm_status rmm_get_device(int *device);
RMMDEF rmm_status rmm_set_device(int device);

/* ======================================================================================= */
/* ==== containers: device buffer, uvector, scalar ====================================== */
/* ======================================================================================= */ /* >>containers */

typedef struct rmm_device_buffer {
    void *data;
    size_t size;
    size_t capacity;
    rmm_stream stream;
    rmm_resource *mr;
    int device;
} rmm_device_buffer;
RMMDEF rmm_status rmm_device_buffer_create(rmm_device_buffer *b, size_t size, rmm_stream stream, rmm_resource *mr);
RMMDEF rmm_status rmm_device_buffer_create_from(rmm_device_buffer *b, const void *src, size_t size, rmm_stream stream, rmm_resource *mr);
RMMDEF rmm_status rmm_device_buffer_copy(rmm_device_buffer *dst, const rmm_device_buffer *src, rmm_stream stream, rmm_resource *mr);
RMMDEF rmm_status rmm_device_buffer_resize(rmm_device_buffer *b, size_t new_size, rmm_stream stream);
RMMDEF rmm_status rmm_device_buffer_reserve(rmm_device_buffer *b, size_t new_capacity, rmm_stream stream);
RMMDEF rmm_status rmm_device_buffer_shrink_to_fit(rmm_device_buffer *b, rmm_stream stream);
RMMDEF rmm_status rmm_device_buffer_set_stream(rmm_device_buffer *b, rmm_stream stream);
RMMDEF rmm_status rmm_device_buffer_release(rmm_device_buffer *b);

typedef struct rmm_device_uvector {
    void *data;
    size_t element_size;
    size_t size;     /* elements */
    size_t capacity; /* elements */
    rmm_stream stream;
    rmm_resource *mr;
    int device;
} rmm_device_uvector;
RMMDEF rmm_status rmm_device_uvector_create(rmm_device_uvector *v, size_t element_size, size_t count, rmm_stream stream, rmm_resource *mr);
RMMDEF rmm_status rmm_device_uvector_resize(rmm_device_uvector *v, size_t count, rmm_stream stream);
RMMDEF rmm_status rmm_device_uvector_reserve(rmm_device_uvector *v, size_t count, rmm_stream stream);
RMMDEF rmm_status rmm_device_uvector_shrink_to_fit(rmm_device_uvector *v, rmm_stream stream);
RMMDEF rmm_status rmm_device_uvector_set_stream(rmm_device_uvector *v, rmm_stream stream);
RMMDEF rmm_status rmm_device_uvector_set_element_async(rmm_device_uvector *v, size_t index, const void *value, rmm_stream stream);
RMMDEF rmm_status rmm_device_uvector_get_element(const rmm_device_uvector *v, size_t index, void *value, rmm_stream stream);
RMMDEF rmm_status rmm_device_uvector_release(rmm_device_uvector *v);

/* Declares typed helpers, e.g. RMM_DEVICE_UVECTOR_TYPED(f32, float) gives
   rmm_device_uvector_f32_create(v, count, stream, mr), _set(v, index, float value, stream) and
   _get(v, index, float *out, stream). Use at file scope. */
#define RMM_DEVICE_UVECTOR_TYPED(suffix, T)                                                                   \
    static inline rmm_status rmm_device_uvector_##suffix##_create(rmm_device_uvector *v, size_t count,        \
                                                                  rmm_stream stream, rmm_resource *mr) {     \
        return rmm_device_uvector_create(v, sizeof(T), count, stream, mr);                                   \
    }                                                                                                         \
    static inline rmm_status rmm_device_uvector_##suffix##_set(rmm_device_uvector *v, size_t index, T value,  \
                                                               rmm_stream stream) {                           \
        if (v && v->element_size != sizeof(T)) return RMM_ERROR_INVALID_ARGUMENT;                            \
        /* synchronous: the host value must outlive the copy */                                               \
        rmm_status st_ = rmm_device_uvector_set_element_async(v, index, &value, stream);                     \
        return st_ != RMM_SUCCESS ? st_ : rmm_stream_synchronize(stream);                                    \
    }                                                                                                         \
    static inline rmm_status rmm_device_uvector_##suffix##_get(const rmm_device_uvector *v, size_t index,     \
                                                               T *out, rmm_stream stream) {                   \
        if (v && v->element_size != sizeof(T)) return RMM_ERROR_INVALID_ARGUMENT;                            \
        return rmm_device_uvector_get_element(v, index, out, stream);                                        \
    }

typedef struct rmm_device_scalar {
    void *data;
    size_t element_size;
    rmm_stream stream;
    rmm_resource *mr;
    int device;
} rmm_device_scalar;
RMMDEF rmm_status rmm_device_scalar_create(rmm_device_scalar *s, size_t element_size, rmm_stream stream, rmm_resource *mr);
RMMDEF rmm_status rmm_device_scalar_set_value_async(rmm_device_scalar *s, const void *value, rmm_stream stream);
RMMDEF rmm_status rmm_device_scalar_get_value(const rmm_device_scalar *s, void *out, rmm_stream stream);
RMMDEF rmm_status rmm_device_scalar_release(rmm_device_scalar *s);

/* ======================================================================================= */
/* ==== legacy: the 2019 RMM C API ====================================================== */
/* ======================================================================================= */ /* >>legacy */

typedef rmm_status rmmError_t;
#define RMM_ERROR_CUDA_ERROR RMM_ERROR_CUDA
typedef enum rmmAllocationMode_t {
    CudaDefaultAllocation = 0,
    PoolAllocation = 1,
    CudaManagedMemory = 2
} rmmAllocationMode_t;
typedef struct rmmOptions_t {
    int allocation_mode;      /* rmmAllocationMode_t values OR-ed together */
    size_t initial_pool_size; /* 0: half of total device memory */
    bool enable_logging;
} rmmOptions_t;
RMMDEF rmmError_t rmmInitialize(rmmOptions_t *options);
RMMDEF rmmError_t rmmFinalize(void);
RMMDEF bool rmmIsInitialized(rmmOptions_t *options);
RMMDEF const char *rmmGetErrorString(rmmError_t error);
RMMDEF rmmError_t rmmAlloc(void **ptr, size_t bytes, rmm_stream stream, const char *file, unsigned int line);
RMMDEF rmmError_t rmmFree(void *ptr, rmm_stream stream, const char *file, unsigned int line);
RMMDEF rmmError_t rmmGetInfo(size_t *free_bytes, size_t *total_bytes, rmm_stream stream);
RMMDEF rmmError_t rmmGetAllocationOffset(ptrdiff_t *offset, void *ptr, rmm_stream stream);
RMMDEF rmmError_t rmmWriteLog(const char *path);
#define RMM_ALLOC(ptr, bytes, stream) rmmAlloc((void **)(ptr), (bytes), (stream), __FILE__, __LINE__)
#define RMM_FREE(ptr, stream) rmmFree((void *)(ptr), (stream), __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif

#endif /* RMM_H_INCLUDED */

/* ======================================================================================= */
/* ======================================================================================= */
/*                                  IMPLEMENTATION                                          */
/* ======================================================================================= */
/* ======================================================================================= */

#if defined(RMM_IMPLEMENTATION) && !defined(RMM__IMPLEMENTATION_DONE)
#define RMM__IMPLEMENTATION_DONE

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/syscall.h>

/* ---- config ------------------------------------------------------------------------ */

#if defined(RMM_SYS_MALLOC) && defined(RMM_SYS_REALLOC) && defined(RMM_SYS_FREE)
/* all three given */
#elif !defined(RMM_SYS_MALLOC) && !defined(RMM_SYS_REALLOC) && !defined(RMM_SYS_FREE)
#define RMM_SYS_MALLOC(n) malloc(n)
#define RMM_SYS_REALLOC(p, n) realloc((p), (n))
#define RMM_SYS_FREE(p) free(p)
#else
#error "define all of RMM_SYS_MALLOC, RMM_SYS_REALLOC and RMM_SYS_FREE, or none"
#endif
#ifndef RMM_ASSERT
#include <assert.h>
#define RMM_ASSERT(x) assert(x)
#endif
#ifndef RMM_MAX_DEVICES
#define RMM_MAX_DEVICES 64
#endif
#ifndef RMM_HOST_BACKEND_BYTES
#define RMM_HOST_BACKEND_BYTES ((size_t)4 << 30)
#endif
#ifndef RMM_HOST_BACKEND_DEVICES
#define RMM_HOST_BACKEND_DEVICES 2
#endif
#ifdef RMM_DEBUG
#define RMM__DEBUG 1
#else
#define RMM__DEBUG 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define RMM__UNUSED __attribute__((unused))
#else
#define RMM__UNUSED
#endif
#ifdef RMM_STATIC
#define RMM__IMPL static RMM__UNUSED
#else
#define RMM__IMPL
#endif
#define RMM__PRIVATE static RMM__UNUSED

#if defined(__cplusplus)
#define RMM__TLS thread_local
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define RMM__TLS _Thread_local
#else
#define RMM__TLS __thread
#endif

#if defined(__GNUC__) || defined(__clang__)
#define RMM__LIKELY(x) __builtin_expect(!!(x), 1)
#define RMM__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RMM__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RMM__LIKELY(x) (x)
#define RMM__UNLIKELY(x) (x)
#define RMM__PRINTF(a, b)
#endif

/* ======================================================================================= */
/* ==== util: arithmetic, locks, atomics ================================================ */
/* ======================================================================================= */ /* >>util */

#define RMM__MIB ((size_t)1 << 20)
#define RMM__ATOMIC_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define RMM__ATOMIC_LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define RMM__ATOMIC_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define RMM__ATOMIC_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define RMM__ATOMIC_SUB(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_ACQ_REL)
#define RMM__ATOMIC_CAS(p, expected, desired) \
    __atomic_compare_exchange_n((p), (expected), (desired), false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)

RMM__PRIVATE bool rmm__is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }
/* Rounds up to a power-of-two multiple; false on overflow. */
RMM__PRIVATE bool rmm__align_up(size_t bytes, size_t alignment, size_t *out) {
    if (bytes > SIZE_MAX - (alignment - 1)) return false;
    *out = (bytes + alignment - 1) & ~(alignment - 1);
    return true;
}
RMM__PRIVATE size_t rmm__align_down(size_t bytes, size_t alignment) { return bytes & ~(alignment - 1); }
RMM__PRIVATE unsigned rmm__log2_floor(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }
RMM__PRIVATE size_t rmm__min(size_t a, size_t b) { return a < b ? a : b; }
RMM__PRIVATE size_t rmm__max(size_t a, size_t b) { return a > b ? a : b; }

RMM__PRIVATE void *rmm__calloc(size_t count, size_t size) {
    void *p;
    if (size != 0 && count > SIZE_MAX / size) return NULL;
    p = RMM_SYS_MALLOC(count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

typedef struct rmm__mutex {
    pthread_mutex_t m;
} rmm__mutex;
RMM__PRIVATE void rmm__mutex_init(rmm__mutex *m) { pthread_mutex_init(&m->m, NULL); }
RMM__PRIVATE void rmm__mutex_destroy(rmm__mutex *m) { pthread_mutex_destroy(&m->m); }
RMM__PRIVATE void rmm__lock(rmm__mutex *m) { pthread_mutex_lock(&m->m); }
RMM__PRIVATE void rmm__unlock(rmm__mutex *m) { pthread_mutex_unlock(&m->m); }

/* The OS thread id, as RMM's logs print it. */
RMM__PRIVATE uint64_t rmm__thread_id(void) {
#if defined(SYS_gettid)
    return (uint64_t)syscall(SYS_gettid);
#else
    return (uint64_t)(uintptr_t)pthread_self();
#endif
}

/* A process-unique number per thread, cheaper than a system call after the first. */
RMM__PRIVATE uint64_t rmm__thread_serial(void) {
    static uint64_t next = 1;
    static RMM__TLS uint64_t mine = 0;
    if (RMM__UNLIKELY(mine == 0)) mine = RMM__ATOMIC_ADD(&next, 1);
    return mine;
}

/* Open-addressing map from a 256-aligned address to a pointer (or size): linear probing with
   backward-shift deletion, power-of-two capacity, at most half full. Not thread-safe: the owner
   locks. O(1) expected for get/put/remove. */
typedef struct rmm__addr_map {
    uintptr_t *keys; /* 0: empty */
    void **values;
    size_t mask;     /* capacity - 1 */
    size_t count;
} rmm__addr_map;

RMM__PRIVATE size_t rmm__addr_hash(uintptr_t key) {
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) ^ (size_t)h;
}
RMM__PRIVATE bool rmm__addr_map_init(rmm__addr_map *m, size_t capacity) {
    size_t cap = 16;
    while (cap < capacity) cap <<= 1;
    m->keys = (uintptr_t *)rmm__calloc(cap, sizeof(uintptr_t));
    m->values = (void **)rmm__calloc(cap, sizeof(void *));
    m->mask = cap - 1;
    m->count = 0;
    if (!m->keys || !m->values) {
        RMM_SYS_FREE(m->keys);
        RMM_SYS_FREE(m->values);
        m->keys = NULL;
        m->values = NULL;
        return false;
    }
    return true;
}
RMM__PRIVATE void rmm__addr_map_free(rmm__addr_map *m) {
    RMM_SYS_FREE(m->keys);
    RMM_SYS_FREE(m->values);
    memset(m, 0, sizeof *m);
}
RMM__PRIVATE void **rmm__addr_map_find(const rmm__addr_map *m, uintptr_t key) {
    size_t i = rmm__addr_hash(key) & m->mask;
    for (;;) {
        if (m->keys[i] == key) return &m->values[i];
        if (m->keys[i] == 0) return NULL;
        i = (i + 1) & m->mask;
    }
}
RMM__PRIVATE bool rmm__addr_map_grow(rmm__addr_map *m) {
    rmm__addr_map bigger;
    size_t i;
    if (!rmm__addr_map_init(&bigger, (m->mask + 1) * 2)) return false;
    for (i = 0; i <= m->mask; i++) {
        if (m->keys[i] != 0) {
            size_t j = rmm__addr_hash(m->keys[i]) & bigger.mask;
            while (bigger.keys[j] != 0) j = (j + 1) & bigger.mask;
            bigger.keys[j] = m->keys[i];
            bigger.values[j] = m->values[i];
            bigger.count++;
        }
    }
    rmm__addr_map_free(m);
    *m = bigger;
    return true;
}
/* Inserts or replaces; false iff the table could not grow (then nothing changed). */
RMM__PRIVATE bool rmm__addr_map_put(rmm__addr_map *m, uintptr_t key, void *value) {
    size_t i;
    if ((m->count + 1) * 2 > m->mask + 1 && !rmm__addr_map_grow(m)) return false;
    i = rmm__addr_hash(key) & m->mask;
    while (m->keys[i] != 0 && m->keys[i] != key) i = (i + 1) & m->mask;
    if (m->keys[i] == 0) m->count++;
    m->keys[i] = key;
    m->values[i] = value;
    return true;
}
/* Removes the key; returns its value, or NULL if absent. */
RMM__PRIVATE void *rmm__addr_map_remove(rmm__addr_map *m, uintptr_t key) {
    size_t i = rmm__addr_hash(key) & m->mask, j;
    void *value;
    while (m->keys[i] != key) {
        if (m->keys[i] == 0) return NULL;
        i = (i + 1) & m->mask;
    }
    value = m->values[i];
    m->count--;
    /* backward-shift deletion keeps every probe chain unbroken */
    j = i;
    for (;;) {
        size_t home;
        j = (j + 1) & m->mask;
        if (m->keys[j] == 0) break;
        home = rmm__addr_hash(m->keys[j]) & m->mask;
        /* move j into the hole at i iff home is not cyclically in (i, j] */
        if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
            m->keys[i] = m->keys[j];
            m->values[i] = m->values[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->values[i] = NULL;
    return value;
}

/* ======================================================================================= */
/* ==== errors: status strings and the thread-local last error ========================== */
/* ======================================================================================= */ /* >>errors */

static RMM__TLS char rmm__last_error_text[512];
static RMM__TLS rmm_status rmm__last_error_status;

RMM__IMPL const char *rmm_status_string(rmm_status status) {
    switch (status) {
    case RMM_SUCCESS: return "RMM_SUCCESS";
    case RMM_ERROR_CUDA: return "RMM_ERROR_CUDA";
    case RMM_ERROR_INVALID_ARGUMENT: return "RMM_ERROR_INVALID_ARGUMENT";
    case RMM_ERROR_NOT_INITIALIZED: return "RMM_ERROR_NOT_INITIALIZED";
    case RMM_ERROR_OUT_OF_MEMORY: return "RMM_ERROR_OUT_OF_MEMORY";
    case RMM_ERROR_UNKNOWN: return "RMM_ERROR_UNKNOWN";
    case RMM_ERROR_IO: return "RMM_ERROR_IO";
    case RMM_ERROR_NOT_SUPPORTED: return "RMM_ERROR_NOT_SUPPORTED";
    case RMM_ERROR_CORRUPTION: return "RMM_ERROR_CORRUPTION";
    }
    return "RMM_ERROR_(unknown status)";
}
RMM__IMPL const char *rmm_last_error(void) { return rmm__last_error_text; }
RMM__IMPL rmm_status rmm_last_status(void) { return rmm__last_error_status; }

static void rmm__log_write(int level, const char *fmt, ...) RMM__PRINTF(2, 3) RMM__UNUSED;

/* Records a failure on this thread and returns its status. */
static rmm_status rmm__fail(rmm_status status, const char *fmt, ...) RMM__PRINTF(2, 3);
static rmm_status rmm__fail(rmm_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rmm__last_error_text, sizeof rmm__last_error_text, fmt, ap);
    va_end(ap);
    rmm__last_error_status = status;
    return status;
}
#define RMM__INVALID(...) rmm__fail(RMM_ERROR_INVALID_ARGUMENT, __VA_ARGS__)
#define RMM__NULL_OUT(fn, name) rmm__fail(RMM_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name)

/* ======================================================================================= */
/* ==== platform: every CUDA call of the library passes through here ==================== */
/* ======================================================================================= */ /* >>platform */

/* The platform layer: device memory, pools, events, streams, copies, devices. Each function returns
   a status and, on failure, sets the last-error message naming the call, the CUDA error and the
   sizes. Two backends implement it; nothing above this section knows which one is compiled. */
typedef void *rmm__event;

#if !defined(RMM_BACKEND_HOST) /* ---------------------------- CUDA runtime backend ---------- */

RMM__PRIVATE rmm_status rmm__cuda_fail(cudaError_t err, const char *call, const char *fmt, ...) RMM__PRINTF(3, 4);
RMM__PRIVATE rmm_status rmm__cuda_fail(cudaError_t err, const char *call, const char *fmt, ...) {
    char detail[256];
    va_list ap;
    rmm_status status = err == cudaErrorMemoryAllocation ? RMM_ERROR_OUT_OF_MEMORY : RMM_ERROR_CUDA;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    (void)cudaGetLastError(); /* clear a non-sticky error so it does not reach the user's next check */
    return rmm__fail(status, "%s(%s) failed: %s (%s)", call, detail, cudaGetErrorName(err), cudaGetErrorString(err));
}
#define RMM__CU(call, name, ...) \
    do { cudaError_t rmm__e_ = (call); if (RMM__UNLIKELY(rmm__e_ != cudaSuccess)) return rmm__cuda_fail(rmm__e_, name, __VA_ARGS__); } while (0)

RMM__IMPL rmm_status rmm_status_from_cuda(cudaError_t error, const char *what) {
    if (error == cudaSuccess) return RMM_SUCCESS;
    return rmm__cuda_fail(error, what ? what : "CUDA call", "%s", "");
}

RMM__PRIVATE rmm_status rmm__dev_malloc(void **ptr, size_t bytes) {
    RMM__CU(cudaMalloc(ptr, bytes), "cudaMalloc", "bytes=%zu", bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__dev_free(void *ptr) {
    RMM__CU(cudaFree(ptr), "cudaFree", "ptr=%p", ptr);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__managed_malloc(void **ptr, size_t bytes) {
    RMM__CU(cudaMallocManaged(ptr, bytes, cudaMemAttachGlobal), "cudaMallocManaged", "bytes=%zu", bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__pinned_malloc(void **ptr, size_t bytes) {
    RMM__CU(cudaHostAlloc(ptr, bytes, cudaHostAllocPortable | cudaHostAllocMapped), "cudaHostAlloc", "bytes=%zu", bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__pinned_free(void *ptr) {
    RMM__CU(cudaFreeHost(ptr), "cudaFreeHost", "ptr=%p", ptr);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__device_count(int *count) {
    cudaError_t err = cudaGetDeviceCount(count);
    if (err != cudaSuccess) {
        *count = 0;
        return rmm__cuda_fail(err, "cudaGetDeviceCount", "%s", "");
    }
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__get_device(int *device) {
    RMM__CU(cudaGetDevice(device), "cudaGetDevice", "%s", "");
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__set_device(int device) {
    RMM__CU(cudaSetDevice(device), "cudaSetDevice", "device=%d", device);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mem_info(size_t *free_bytes, size_t *total_bytes) {
    RMM__CU(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo", "%s", "");
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__device_synchronize(void) {
    RMM__CU(cudaDeviceSynchronize(), "cudaDeviceSynchronize", "%s", "");
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__event_create(rmm__event *event) {
    cudaEvent_t e;
    RMM__CU(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags", "%s", "");
    *event = (rmm__event)e;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__event_destroy(rmm__event event) {
    if (event) (void)cudaEventDestroy((cudaEvent_t)event);
}
RMM__PRIVATE rmm_status rmm__event_record(rmm__event event, rmm_stream stream) {
    RMM__CU(cudaEventRecord((cudaEvent_t)event, stream), "cudaEventRecord", "stream=%p", (void *)stream);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__event_synchronize(rmm__event event) {
    RMM__CU(cudaEventSynchronize((cudaEvent_t)event), "cudaEventSynchronize", "%s", "");
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_wait_event(rmm_stream stream, rmm__event event) {
    RMM__CU(cudaStreamWaitEvent(stream, (cudaEvent_t)event, 0), "cudaStreamWaitEvent", "stream=%p", (void *)stream);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_create_raw(rmm_stream *stream) {
    RMM__CU(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", "%s", "");
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_destroy_raw(rmm_stream stream) {
    RMM__CU(cudaStreamDestroy(stream), "cudaStreamDestroy", "stream=%p", (void *)stream);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_sync_raw(rmm_stream stream) {
    RMM__CU(cudaStreamSynchronize(stream), "cudaStreamSynchronize", "stream=%p", (void *)stream);
    return RMM_SUCCESS;
}
/* A key that names the stream for the life of the process (handles are reused after destroy).
   The default streams get fixed keys without a CUDA call. */
RMM__PRIVATE rmm_status rmm__stream_unique_id(rmm_stream stream, uint64_t *id) {
    unsigned long long raw = 0;
    RMM__CU(cudaStreamGetId(stream, &raw), "cudaStreamGetId", "stream=%p", (void *)stream);
    *id = (uint64_t)raw;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__memcpy_async(void *dst, const void *src, size_t bytes, rmm_stream stream) {
    RMM__CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream), "cudaMemcpyAsync", "dst=%p, src=%p, bytes=%zu", dst, src, bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__memset_async(void *dst, int value, size_t bytes, rmm_stream stream) {
    RMM__CU(cudaMemsetAsync(dst, value, bytes, stream), "cudaMemsetAsync", "dst=%p, bytes=%zu", dst, bytes);
    return RMM_SUCCESS;
}
/* Prefetches managed memory; memory that is not managed, or a device without concurrent managed
   access, is not an error (there is nothing to prefetch). */
RMM__PRIVATE rmm_status rmm__prefetch(void *ptr, size_t bytes, int device, rmm_stream stream) {
    int concurrent = 0;
    cudaError_t err;
    struct cudaMemLocation loc;
    if (cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device) != cudaSuccess || !concurrent) {
        (void)cudaGetLastError();
        return RMM_SUCCESS;
    }
    memset(&loc, 0, sizeof loc);
    loc.type = cudaMemLocationTypeDevice;
    loc.id = device;
    err = cudaMemPrefetchAsync(ptr, bytes, loc, 0, stream);
    if (err == cudaErrorInvalidValue) {
        (void)cudaGetLastError();
        return RMM_SUCCESS;
    }
    if (err != cudaSuccess) return rmm__cuda_fail(err, "cudaMemPrefetchAsync", "ptr=%p, bytes=%zu", ptr, bytes);
    return RMM_SUCCESS;
}
/* Memory pools (cudaMallocAsync) */
RMM__PRIVATE rmm_status rmm__mempool_support(int device, bool *supported, unsigned *handle_mask) {
    int pools = 0, mask = 0;
    RMM__CU(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device), "cudaDeviceGetAttribute", "cudaDevAttrMemoryPoolsSupported, device=%d", device);
    *supported = pools != 0;
    if (pools && cudaDeviceGetAttribute(&mask, cudaDevAttrMemoryPoolSupportedHandleTypes, device) != cudaSuccess) {
        (void)cudaGetLastError();
        mask = 0;
    }
    *handle_mask = (unsigned)mask;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mempool_create(rmm_mem_pool *pool, int device, unsigned handle_types, uint64_t release_threshold) {
    struct cudaMemPoolProps props;
    cudaMemPool_t p;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = (enum cudaMemAllocationHandleType)handle_types;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    RMM__CU(cudaMemPoolCreate(&p, &props), "cudaMemPoolCreate", "device=%d, handle_types=%u", device, handle_types);
    if (cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &release_threshold) != cudaSuccess) {
        rmm_status st = rmm__cuda_fail(cudaGetLastError(), "cudaMemPoolSetAttribute", "cudaMemPoolAttrReleaseThreshold=%llu", (unsigned long long)release_threshold);
        (void)cudaMemPoolDestroy(p);
        return st;
    }
    *pool = p;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__mempool_destroy(rmm_mem_pool pool) { (void)cudaMemPoolDestroy(pool); }
RMM__PRIVATE rmm_status rmm__mempool_malloc_async(void **ptr, size_t bytes, rmm_mem_pool pool, rmm_stream stream) {
    RMM__CU(cudaMallocFromPoolAsync(ptr, bytes, pool, stream), "cudaMallocFromPoolAsync", "bytes=%zu, stream=%p", bytes, (void *)stream);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__free_async(void *ptr, rmm_stream stream) {
    RMM__CU(cudaFreeAsync(ptr, stream), "cudaFreeAsync", "ptr=%p, stream=%p", ptr, (void *)stream);
    return RMM_SUCCESS;
}
#define RMM__BACKEND_NAME "cuda"

#else /* ----------------------------------------------------- host backend ------------------ */

struct rmm__host_stream {
    uint64_t id;
    uint32_t magic;
};
struct rmm__host_mempool {
    int device;
    unsigned handle_types;
    uint64_t release_threshold;
};
#define RMM__HOST_STREAM_MAGIC 0x57AE4D11u
#define RMM__HOST_HEADER ((size_t)256) /* the size of an allocation is kept just below it */
static size_t rmm__host_capacity = RMM_HOST_BACKEND_BYTES;
static size_t rmm__host_used;
static uint64_t rmm__host_next_stream_id = 16;
static RMM__TLS int rmm__host_current_device;

RMM__IMPL void rmm_host_backend_set_capacity(size_t bytes) { RMM__ATOMIC_STORE(&rmm__host_capacity, bytes); }

RMM__PRIVATE rmm_status rmm__host_malloc_counted(void **ptr, size_t bytes, const char *call) {
    size_t used, total;
    void *raw = NULL;
    if (bytes > SIZE_MAX - RMM__HOST_HEADER) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s(bytes=%zu) failed: cudaErrorMemoryAllocation (out of memory)", call, bytes);
    total = bytes + RMM__HOST_HEADER;
    used = RMM__ATOMIC_ADD(&rmm__host_used, total);
    if (used > RMM__ATOMIC_LOAD(&rmm__host_capacity) || used < total || posix_memalign(&raw, 256, total) != 0) {
        RMM__ATOMIC_SUB(&rmm__host_used, total);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s(bytes=%zu) failed: cudaErrorMemoryAllocation (out of memory; host backend capacity %zu bytes)",
                         call, bytes, RMM__ATOMIC_LOAD(&rmm__host_capacity));
    }
    memcpy(raw, &total, sizeof total);
    *ptr = (char *)raw + RMM__HOST_HEADER;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__host_free_counted(void *ptr) {
    size_t total;
    char *raw;
    if (!ptr) return RMM_SUCCESS;
    raw = (char *)ptr - RMM__HOST_HEADER;
    memcpy(&total, raw, sizeof total);
    RMM__ATOMIC_SUB(&rmm__host_used, total);
    free(raw);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__dev_malloc(void **ptr, size_t bytes) { return rmm__host_malloc_counted(ptr, bytes, "cudaMalloc"); }
RMM__PRIVATE rmm_status rmm__dev_free(void *ptr) { return rmm__host_free_counted(ptr); }
RMM__PRIVATE rmm_status rmm__managed_malloc(void **ptr, size_t bytes) { return rmm__host_malloc_counted(ptr, bytes, "cudaMallocManaged"); }
RMM__PRIVATE rmm_status rmm__pinned_malloc(void **ptr, size_t bytes) {
    void *raw = NULL;
    if (posix_memalign(&raw, 256, bytes) != 0)
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "cudaHostAlloc(bytes=%zu) failed: cudaErrorMemoryAllocation (out of memory)", bytes);
    *ptr = raw;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__pinned_free(void *ptr) {
    free(ptr);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__device_count(int *count) {
    *count = RMM_HOST_BACKEND_DEVICES;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__get_device(int *device) {
    *device = rmm__host_current_device;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__set_device(int device) {
    if (device < 0 || device >= RMM_HOST_BACKEND_DEVICES)
        return rmm__fail(RMM_ERROR_CUDA, "cudaSetDevice(device=%d) failed: cudaErrorInvalidDevice (invalid device ordinal)", device);
    rmm__host_current_device = device;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mem_info(size_t *free_bytes, size_t *total_bytes) {
    size_t cap = RMM__ATOMIC_LOAD(&rmm__host_capacity), used = RMM__ATOMIC_LOAD(&rmm__host_used);
    *free_bytes = used < cap ? cap - used : 0;
    *total_bytes = cap;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__device_synchronize(void) { return RMM_SUCCESS; }
RMM__PRIVATE rmm_status rmm__event_create(rmm__event *event) {
    void *e = RMM_SYS_MALLOC(16);
    if (!e) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "cudaEventCreateWithFlags() failed: host out of memory");
    *event = e;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__event_destroy(rmm__event event) { RMM_SYS_FREE(event); }
/* Host work runs when it is enqueued, so events and waits are complete at once. */
RMM__PRIVATE rmm_status rmm__event_record(rmm__event event, rmm_stream stream) {
    (void)event;
    (void)stream;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__event_synchronize(rmm__event event) {
    (void)event;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_wait_event(rmm_stream stream, rmm__event event) {
    (void)stream;
    (void)event;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_create_raw(rmm_stream *stream) {
    struct rmm__host_stream *s = (struct rmm__host_stream *)RMM_SYS_MALLOC(sizeof *s);
    if (!s) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "cudaStreamCreateWithFlags() failed: host out of memory");
    s->id = RMM__ATOMIC_ADD(&rmm__host_next_stream_id, 1);
    s->magic = RMM__HOST_STREAM_MAGIC;
    *stream = s;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_destroy_raw(rmm_stream stream) {
    if (stream->magic != RMM__HOST_STREAM_MAGIC)
        return rmm__fail(RMM_ERROR_CUDA, "cudaStreamDestroy(stream=%p) failed: cudaErrorInvalidResourceHandle", (void *)stream);
    stream->magic = 0;
    RMM_SYS_FREE(stream);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_sync_raw(rmm_stream stream) {
    (void)stream;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_unique_id(rmm_stream stream, uint64_t *id) {
    if ((uintptr_t)stream <= 2) *id = (uint64_t)(uintptr_t)stream;
    else *id = stream->id;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__memcpy_async(void *dst, const void *src, size_t bytes, rmm_stream stream) {
    (void)stream;
    if (bytes) memmove(dst, src, bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__memset_async(void *dst, int value, size_t bytes, rmm_stream stream) {
    (void)stream;
    if (bytes) memset(dst, value, bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__prefetch(void *ptr, size_t bytes, int device, rmm_stream stream) {
    (void)ptr;
    (void)bytes;
    (void)device;
    (void)stream;
    return RMM_SUCCESS;
}
/* The host backend's "device" can export POSIX file descriptors but has no fabric. */
RMM__PRIVATE rmm_status rmm__mempool_support(int device, bool *supported, unsigned *handle_mask) {
    (void)device;
    *supported = true;
    *handle_mask = (unsigned)RMM_EXPORT_POSIX_FD;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mempool_create(rmm_mem_pool *pool, int device, unsigned handle_types, uint64_t release_threshold) {
    rmm_mem_pool p = (rmm_mem_pool)RMM_SYS_MALLOC(sizeof *p);
    if (!p) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "cudaMemPoolCreate() failed: host out of memory");
    p->device = device;
    p->handle_types = handle_types;
    p->release_threshold = release_threshold;
    *pool = p;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__mempool_destroy(rmm_mem_pool pool) { RMM_SYS_FREE(pool); }
RMM__PRIVATE rmm_status rmm__mempool_malloc_async(void **ptr, size_t bytes, rmm_mem_pool pool, rmm_stream stream) {
    (void)pool;
    (void)stream;
    return rmm__host_malloc_counted(ptr, bytes, "cudaMallocFromPoolAsync");
}
RMM__PRIVATE rmm_status rmm__free_async(void *ptr, rmm_stream stream) {
    (void)stream;
    return rmm__host_free_counted(ptr);
}
#define RMM__BACKEND_NAME "host"

#endif /* backends */

/* Device guard: makes `device` current for the duration of a library call and restores the
   caller's device. Costs one cudaGetDevice when the device is already current. */
typedef struct rmm__device_guard {
    int previous;
    bool switched;
} rmm__device_guard;
RMM__PRIVATE rmm_status rmm__device_enter(rmm__device_guard *g, int device) {
    g->switched = false;
    RMM_TRY(rmm__get_device(&g->previous));
    if (g->previous != device && device >= 0) {
        RMM_TRY(rmm__set_device(device));
        g->switched = true;
    }
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__device_leave(const rmm__device_guard *g) {
    if (g->switched) (void)rmm__set_device(g->previous);
}

/* Streams whose handle names the same stream for the whole process: the legacy default stream.
   Under a per-thread-default-stream build, handle 0 is the calling thread's stream instead. */
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define RMM__ZERO_IS_PER_THREAD 1
#else
#define RMM__ZERO_IS_PER_THREAD 0
#endif
RMM__PRIVATE bool rmm__stream_is_per_thread(rmm_stream s) {
    return s == RMM_STREAM_PER_THREAD || (RMM__ZERO_IS_PER_THREAD && s == RMM_STREAM_DEFAULT);
}
RMM__PRIVATE bool rmm__stream_is_legacy(rmm_stream s) {
    return s == RMM_STREAM_LEGACY || (!RMM__ZERO_IS_PER_THREAD && s == RMM_STREAM_DEFAULT);
}
/* A process-unique key for a stream. The legacy stream is key 1; each thread's per-thread default
   stream gets (1 << 63) | thread serial; other streams their CUDA stream id + 16. */
RMM__PRIVATE rmm_status rmm__stream_key(rmm_stream s, uint64_t *key) {
    uint64_t id;
    if (rmm__stream_is_legacy(s)) {
        *key = 1;
        return RMM_SUCCESS;
    }
    if (rmm__stream_is_per_thread(s)) {
        *key = ((uint64_t)1 << 63) | rmm__thread_serial();
        return RMM_SUCCESS;
    }
    RMM_TRY(rmm__stream_unique_id(s, &id));
    *key = id + 16;
    return RMM_SUCCESS;
}

/* ======================================================================================= */
/* ==== debuglog: leveled diagnostics to $RMM_DEBUG_LOG_FILE or rmm_log.txt ============== */
/* ======================================================================================= */ /* >>debuglog */

static int rmm__log_level = RMM_LOG_LEVEL;
static FILE *rmm__log_file;
static pthread_mutex_t rmm__log_lock = PTHREAD_MUTEX_INITIALIZER;

RMM__IMPL int rmm_set_log_level(int level) {
    if (level < RMM_LOG_LEVEL_TRACE) level = RMM_LOG_LEVEL_TRACE;
    if (level > RMM_LOG_LEVEL_OFF) level = RMM_LOG_LEVEL_OFF;
    return __atomic_exchange_n(&rmm__log_level, level, __ATOMIC_ACQ_REL);
}
RMM__IMPL int rmm_get_log_level(void) { return RMM__ATOMIC_LOAD(&rmm__log_level); }
RMM__IMPL void rmm_flush_log(void) {
    pthread_mutex_lock(&rmm__log_lock);
    if (rmm__log_file) fflush(rmm__log_file);
    pthread_mutex_unlock(&rmm__log_lock);
}

/* "HH:MM:SS.uuuuuu" in local time, as RMM's logs write it. */
RMM__PRIVATE void rmm__format_time(char out[32]) {
    struct timespec ts;
    struct tm tmv;
    time_t secs;
    clock_gettime(CLOCK_REALTIME, &ts);
    secs = ts.tv_sec;
    localtime_r(&secs, &tmv);
    snprintf(out, 32, "%02u:%02u:%02u.%06u", (unsigned)tmv.tm_hour % 100u, (unsigned)tmv.tm_min % 100u,
             (unsigned)tmv.tm_sec % 100u, (unsigned)(ts.tv_nsec / 1000) % 1000000u);
}

static void rmm__log_write(int level, const char *fmt, ...) {
    static const char *const names[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
    char when[32];
    va_list ap;
    if (level < RMM__ATOMIC_LOAD_RELAXED(&rmm__log_level)) return;
    rmm__format_time(when);
    pthread_mutex_lock(&rmm__log_lock);
    if (!rmm__log_file) {
        const char *path = getenv("RMM_DEBUG_LOG_FILE");
        rmm__log_file = fopen(path && *path ? path : "rmm_log.txt", "w");
    }
    if (rmm__log_file) {
        fprintf(rmm__log_file, "[%6llu][%s][%-6s] ", (unsigned long long)rmm__thread_id(), when, names[level]);
        va_start(ap, fmt);
        vfprintf(rmm__log_file, fmt, ap);
        va_end(ap);
        fputc('\n', rmm__log_file);
        if (level >= RMM_LOG_LEVEL_WARN) fflush(rmm__log_file);
    }
    pthread_mutex_unlock(&rmm__log_lock);
}
#define RMM__LOG(level, ...) do { if ((level) >= RMM_LOG_LEVEL) rmm__log_write((level), __VA_ARGS__); } while (0)

/* ======================================================================================= */
/* ==== resource: generic calls ========================================================= */
/* ======================================================================================= */ /* >>resource */

RMM__PRIVATE rmm_resource *rmm__resolve(rmm_resource *mr) { return mr ? mr : rmm_get_current_device_resource(); }

RMM__IMPL rmm_status rmm_allocate_aligned(rmm_resource *mr, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm_status st;
    if (RMM__UNLIKELY(!ptr)) return RMM__NULL_OUT("rmm_allocate", "ptr");
    *ptr = NULL;
    if (RMM__UNLIKELY(!rmm__is_pow2(alignment)))
        return RMM__INVALID("rmm_allocate_aligned(bytes=%zu, alignment=%zu): alignment is not a power of two", bytes, alignment);
    if (RMM__UNLIKELY(bytes == 0)) return RMM_SUCCESS;
    if (alignment < RMM_ALIGNMENT) alignment = RMM_ALIGNMENT;
    mr = rmm__resolve(mr);
    if (RMM__UNLIKELY(!mr)) return rmm_last_status();
    st = mr->vtable->allocate(mr, ptr, bytes, alignment, stream);
    if (RMM__UNLIKELY(st != RMM_SUCCESS)) *ptr = NULL;
    return st;
}
RMM__IMPL rmm_status rmm_allocate(rmm_resource *mr, void **ptr, size_t bytes, rmm_stream stream) {
    rmm_status st;
    if (RMM__UNLIKELY(!ptr)) return RMM__NULL_OUT("rmm_allocate", "ptr");
    *ptr = NULL;
    if (RMM__UNLIKELY(bytes == 0)) return RMM_SUCCESS;
    mr = rmm__resolve(mr);
    if (RMM__UNLIKELY(!mr)) return rmm_last_status();
    st = mr->vtable->allocate(mr, ptr, bytes, RMM_ALIGNMENT, stream);
    if (RMM__UNLIKELY(st != RMM_SUCCESS)) *ptr = NULL;
    return st;
}
RMM__IMPL rmm_status rmm_deallocate_aligned(rmm_resource *mr, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    if (RMM__UNLIKELY(!ptr)) return RMM_SUCCESS;
    if (RMM__UNLIKELY(!rmm__is_pow2(alignment)))
        return RMM__INVALID("rmm_deallocate_aligned(ptr=%p, alignment=%zu): alignment is not a power of two", ptr, alignment);
    if (alignment < RMM_ALIGNMENT) alignment = RMM_ALIGNMENT;
    mr = rmm__resolve(mr);
    if (RMM__UNLIKELY(!mr)) return rmm_last_status();
    return mr->vtable->deallocate(mr, ptr, bytes, alignment, stream);
}
RMM__IMPL rmm_status rmm_deallocate(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream) {
    if (RMM__UNLIKELY(!ptr)) return RMM_SUCCESS;
    mr = rmm__resolve(mr);
    if (RMM__UNLIKELY(!mr)) return rmm_last_status();
    return mr->vtable->deallocate(mr, ptr, bytes, RMM_ALIGNMENT, stream);
}
RMM__IMPL void rmm_resource_destroy(rmm_resource *mr) {
    if (mr && mr->vtable && mr->vtable->destroy) mr->vtable->destroy(mr);
}
RMM__IMPL bool rmm_resource_is_equal(const rmm_resource *a, const rmm_resource *b) {
    if (a == b) return true;
    if (!a || !b) return false;
    if (a->vtable->is_equal) return a->vtable->is_equal(a, b);
    return false;
}
RMM__IMPL const char *rmm_resource_type_name(const rmm_resource *mr) {
    if (!mr) return "null";
    return mr->vtable && mr->vtable->type_name ? mr->vtable->type_name : "unnamed";
}

/* Over-aligned allocations from resources whose upstream call only promises 256 bytes: ask for
   bytes + alignment - 256, return the aligned address and remember aligned -> raw. Used only for
   alignments above 256, so the common path stays map-free. */
typedef struct rmm__overalign {
    rmm__mutex lock;
    rmm__addr_map map; /* aligned pointer -> raw pointer */
    bool ready;
} rmm__overalign;
RMM__PRIVATE bool rmm__overalign_init(rmm__overalign *o) {
    rmm__mutex_init(&o->lock);
    o->ready = rmm__addr_map_init(&o->map, 16);
    if (!o->ready) rmm__mutex_destroy(&o->lock);
    return o->ready;
}
RMM__PRIVATE void rmm__overalign_free(rmm__overalign *o) {
    if (!o->ready) return;
    rmm__addr_map_free(&o->map);
    rmm__mutex_destroy(&o->lock);
    o->ready = false;
}
/* The size to request from upstream for an over-aligned block; false on overflow. */
RMM__PRIVATE bool rmm__overalign_request(size_t bytes, size_t alignment, size_t *request) {
    if (!rmm__align_up(bytes, RMM_ALIGNMENT, request)) return false;
    if (*request > SIZE_MAX - (alignment - RMM_ALIGNMENT)) return false;
    *request += alignment - RMM_ALIGNMENT;
    return true;
}
RMM__PRIVATE bool rmm__overalign_remember(rmm__overalign *o, void *raw, size_t alignment, void **aligned) {
    bool ok;
    uintptr_t a = ((uintptr_t)raw + (alignment - 1)) & ~(uintptr_t)(alignment - 1);
    rmm__lock(&o->lock);
    ok = rmm__addr_map_put(&o->map, a, raw);
    rmm__unlock(&o->lock);
    *aligned = (void *)a;
    return ok;
}
/* The raw pointer behind an over-aligned one; NULL if unknown. */
RMM__PRIVATE void *rmm__overalign_forget(rmm__overalign *o, void *aligned) {
    void *raw;
    rmm__lock(&o->lock);
    raw = rmm__addr_map_remove(&o->map, (uintptr_t)aligned);
    rmm__unlock(&o->lock);
    return raw;
}

/* ======================================================================================= */
/* ==== base: cuda, managed, pinned, async, async view ================================== */
/* ======================================================================================= */ /* >>base */

typedef enum rmm__base_kind { RMM__BASE_CUDA, RMM__BASE_MANAGED, RMM__BASE_PINNED } rmm__base_kind;
typedef struct rmm__base_resource {
    rmm_resource base;
    rmm__base_kind kind;
    int device;
    rmm__overalign overalign;
} rmm__base_resource;

RMM__PRIVATE rmm_status rmm__base_raw_alloc(rmm__base_kind kind, void **p, size_t bytes) {
    switch (kind) {
    case RMM__BASE_CUDA: return rmm__dev_malloc(p, bytes);
    case RMM__BASE_MANAGED: return rmm__managed_malloc(p, bytes);
    case RMM__BASE_PINNED: return rmm__pinned_malloc(p, bytes);
    }
    return RMM_ERROR_UNKNOWN;
}
RMM__PRIVATE rmm_status rmm__base_raw_free(rmm__base_kind kind, void *p) {
    return kind == RMM__BASE_PINNED ? rmm__pinned_free(p) : rmm__dev_free(p);
}
RMM__PRIVATE rmm_status rmm__base_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__base_resource *r = (rmm__base_resource *)self;
    rmm__device_guard g;
    rmm_status st;
    size_t request = bytes;
    void *raw = NULL;
    (void)stream;
    if (alignment > RMM_ALIGNMENT && !rmm__overalign_request(bytes, alignment, &request))
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: allocate(bytes=%zu, alignment=%zu) overflows", self->vtable->type_name, bytes, alignment);
    RMM_TRY(rmm__device_enter(&g, r->device));
    st = rmm__base_raw_alloc(r->kind, &raw, request);
    if (st == RMM_SUCCESS) {
        if (alignment <= RMM_ALIGNMENT) *ptr = raw;
        else if (!rmm__overalign_remember(&r->overalign, raw, alignment, ptr)) {
            (void)rmm__base_raw_free(r->kind, raw);
            st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: out of host memory for alignment bookkeeping", self->vtable->type_name);
        }
    }
    rmm__device_leave(&g);
    return st;
}
RMM__PRIVATE rmm_status rmm__base_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__base_resource *r = (rmm__base_resource *)self;
    rmm__device_guard g;
    rmm_status st;
    (void)bytes;
    (void)stream;
    if (alignment > RMM_ALIGNMENT) {
        void *raw = rmm__overalign_forget(&r->overalign, ptr);
        if (!raw) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: deallocate(ptr=%p, alignment=%zu): not an allocation of this resource with that alignment", self->vtable->type_name, ptr, alignment);
        ptr = raw;
    }
    RMM_TRY(rmm__device_enter(&g, r->device));
    st = rmm__base_raw_free(r->kind, ptr);
    rmm__device_leave(&g);
    return st;
}
RMM__PRIVATE void rmm__base_destroy(rmm_resource *self) {
    rmm__base_resource *r = (rmm__base_resource *)self;
    rmm__overalign_free(&r->overalign);
    RMM_SYS_FREE(r);
}
/* Two base resources of one kind and device can free each other's memory (aligned ones aside). */
RMM__PRIVATE bool rmm__base_is_equal(const rmm_resource *self, const rmm_resource *other) {
    const rmm__base_resource *a = (const rmm__base_resource *)self, *b = (const rmm__base_resource *)other;
    return self->vtable == other->vtable && a->kind == b->kind && a->device == b->device;
}
static const rmm_resource_vtable rmm__cuda_vtable = {"cuda", rmm__base_allocate, rmm__base_deallocate, rmm__base_is_equal, rmm__base_destroy};
static const rmm_resource_vtable rmm__managed_vtable = {"managed", rmm__base_allocate, rmm__base_deallocate, rmm__base_is_equal, rmm__base_destroy};
static const rmm_resource_vtable rmm__pinned_vtable = {"pinned_host", rmm__base_allocate, rmm__base_deallocate, rmm__base_is_equal, rmm__base_destroy};

RMM__PRIVATE rmm_status rmm__base_create(rmm_resource **out, rmm__base_kind kind, const rmm_resource_vtable *vt, const char *fn) {
    rmm__base_resource *r;
    int device;
    if (!out) return RMM__NULL_OUT(fn, "out");
    *out = NULL;
    RMM_TRY(rmm__get_device(&device));
    r = (rmm__base_resource *)rmm__calloc(1, sizeof *r);
    if (!r || !rmm__overalign_init(&r->overalign)) {
        RMM_SYS_FREE(r);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    r->base.vtable = vt;
    r->kind = kind;
    r->device = device;
    *out = &r->base;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_cuda_resource_create(rmm_resource **out) {
    return rmm__base_create(out, RMM__BASE_CUDA, &rmm__cuda_vtable, "rmm_cuda_resource_create");
}
RMM__IMPL rmm_status rmm_managed_resource_create(rmm_resource **out) {
    return rmm__base_create(out, RMM__BASE_MANAGED, &rmm__managed_vtable, "rmm_managed_resource_create");
}
RMM__IMPL rmm_status rmm_pinned_host_resource_create(rmm_resource **out) {
    return rmm__base_create(out, RMM__BASE_PINNED, &rmm__pinned_vtable, "rmm_pinned_host_resource_create");
}

/* ---- async: cudaMallocFromPoolAsync over an owned or borrowed cudaMemPool_t ---- */
typedef struct rmm__async_resource {
    rmm_resource base;
    rmm_mem_pool pool;
    bool owned;
    int device;
    rmm__overalign overalign;
} rmm__async_resource;

RMM__PRIVATE rmm_status rmm__async_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__async_resource *r = (rmm__async_resource *)self;
    size_t request = bytes;
    void *raw = NULL;
    if (alignment > RMM_ALIGNMENT && !rmm__overalign_request(bytes, alignment, &request))
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "async: allocate(bytes=%zu, alignment=%zu) overflows", bytes, alignment);
    RMM_TRY(rmm__mempool_malloc_async(&raw, request, r->pool, stream));
    if (alignment <= RMM_ALIGNMENT) {
        *ptr = raw;
    } else if (!rmm__overalign_remember(&r->overalign, raw, alignment, ptr)) {
        (void)rmm__free_async(raw, stream);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "async: out of host memory for alignment bookkeeping");
    }
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__async_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__async_resource *r = (rmm__async_resource *)self;
    (void)bytes;
    if (alignment > RMM_ALIGNMENT) {
        void *raw = rmm__overalign_forget(&r->overalign, ptr);
        if (!raw) return rmm__fail(RMM_ERROR_CORRUPTION, "async: deallocate(ptr=%p, alignment=%zu): not an allocation of this resource with that alignment", ptr, alignment);
        ptr = raw;
    }
    return rmm__free_async(ptr, stream);
}
RMM__PRIVATE bool rmm__async_is_equal(const rmm_resource *self, const rmm_resource *other);
RMM__PRIVATE void rmm__async_destroy(rmm_resource *self);
static const rmm_resource_vtable rmm__async_vtable = {"async", rmm__async_allocate, rmm__async_deallocate, rmm__async_is_equal, rmm__async_destroy};
static const rmm_resource_vtable rmm__async_view_vtable = {"async_view", rmm__async_allocate, rmm__async_deallocate, rmm__async_is_equal, rmm__async_destroy};
RMM__PRIVATE bool rmm__async_is_equal(const rmm_resource *self, const rmm_resource *other) {
    if (other->vtable != &rmm__async_vtable && other->vtable != &rmm__async_view_vtable) return false;
    return ((const rmm__async_resource *)self)->pool == ((const rmm__async_resource *)other)->pool;
}
RMM__PRIVATE void rmm__async_destroy(rmm_resource *self) {
    rmm__async_resource *r = (rmm__async_resource *)self;
    if (r->owned) {
        rmm__device_guard g;
        /* cudaMemPoolDestroy defers the release of memory still in use until it is freed */
        if (rmm__device_enter(&g, r->device) == RMM_SUCCESS) {
            rmm__mempool_destroy(r->pool);
            rmm__device_leave(&g);
        }
    }
    rmm__overalign_free(&r->overalign);
    RMM_SYS_FREE(r);
}

RMM__IMPL rmm_async_desc rmm_async_desc_default(void) {
    rmm_async_desc d;
    memset(&d, 0, sizeof d);
    d.export_handle = RMM_EXPORT_NONE;
    return d;
}
RMM__PRIVATE rmm_status rmm__async_new(rmm_resource **out, const rmm_resource_vtable *vt, rmm_mem_pool pool, bool owned, int device) {
    rmm__async_resource *r = (rmm__async_resource *)rmm__calloc(1, sizeof *r);
    if (!r || !rmm__overalign_init(&r->overalign)) {
        RMM_SYS_FREE(r);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: out of host memory", vt->type_name);
    }
    r->base.vtable = vt;
    r->pool = pool;
    r->owned = owned;
    r->device = device;
    *out = &r->base;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_async_resource_create(rmm_resource **out, const rmm_async_desc *desc) {
    rmm_async_desc d = desc ? *desc : rmm_async_desc_default();
    bool supported = false;
    unsigned mask = 0;
    int device;
    rmm_mem_pool pool;
    rmm_status st;
    if (!out) return RMM__NULL_OUT("rmm_async_resource_create", "out");
    *out = NULL;
    if (d.export_handle != RMM_EXPORT_NONE && d.export_handle != RMM_EXPORT_POSIX_FD && d.export_handle != RMM_EXPORT_FABRIC)
        return RMM__INVALID("rmm_async_resource_create: export_handle %d is not an rmm_export_handle value", (int)d.export_handle);
    RMM_TRY(rmm__get_device(&device));
    RMM_TRY(rmm__mempool_support(device, &supported, &mask));
    if (!supported)
        return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_async_resource_create: device %d does not support memory pools (cudaDevAttrMemoryPoolsSupported is 0)", device);
    if (d.export_handle != RMM_EXPORT_NONE && (mask & (unsigned)d.export_handle) == 0)
        return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_async_resource_create: device %d does not support the export handle type %s (supported mask 0x%x)",
                         device, d.export_handle == RMM_EXPORT_FABRIC ? "RMM_EXPORT_FABRIC" : "RMM_EXPORT_POSIX_FD", mask);
    RMM_TRY(rmm__mempool_create(&pool, device, (unsigned)d.export_handle,
                                d.release_threshold_bytes == 0 ? UINT64_MAX : (uint64_t)d.release_threshold_bytes));
    st = rmm__async_new(out, &rmm__async_vtable, pool, true, device);
    if (st != RMM_SUCCESS) {
        rmm__mempool_destroy(pool);
        return st;
    }
    if (d.initial_pool_bytes > 0) {
        void *p = NULL;
        st = rmm__mempool_malloc_async(&p, d.initial_pool_bytes, pool, RMM_STREAM_DEFAULT);
        if (st == RMM_SUCCESS) st = rmm__free_async(p, RMM_STREAM_DEFAULT);
        if (st == RMM_SUCCESS) st = rmm__stream_sync_raw(RMM_STREAM_DEFAULT);
        if (st != RMM_SUCCESS) {
            rmm__async_destroy(*out);
            *out = NULL;
            return st;
        }
    }
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_async_view_resource_create(rmm_resource **out, rmm_mem_pool pool) {
    int device;
    if (!out) return RMM__NULL_OUT("rmm_async_view_resource_create", "out");
    *out = NULL;
    if (!pool) return RMM__NULL_OUT("rmm_async_view_resource_create", "pool");
    RMM_TRY(rmm__get_device(&device));
    return rmm__async_new(out, &rmm__async_view_vtable, pool, false, device);
}
RMM__IMPL rmm_status rmm_async_resource_get_pool(rmm_resource *mr, rmm_mem_pool *pool) {
    if (!pool) return RMM__NULL_OUT("rmm_async_resource_get_pool", "pool");
    if (!mr || (mr->vtable != &rmm__async_vtable && mr->vtable != &rmm__async_view_vtable))
        return RMM__INVALID("rmm_async_resource_get_pool: resource '%s' is not an async resource", rmm_resource_type_name(mr));
    *pool = ((rmm__async_resource *)mr)->pool;
    return RMM_SUCCESS;
}

/* ======================================================================================= */
/* ==== perdevice: the current resource of each device ================================== */
/* ======================================================================================= */ /* >>perdevice */

/* The table and the defaults live only in the implementing translation unit. The defaults are
   static objects that need no destruction, so nothing here calls CUDA at process exit. */
static rmm_resource *rmm__device_table[RMM_MAX_DEVICES];
static rmm__base_resource rmm__device_defaults[RMM_MAX_DEVICES];
static pthread_mutex_t rmm__device_table_lock = PTHREAD_MUTEX_INITIALIZER;

RMM__PRIVATE rmm_status rmm__check_device(int device, const char *fn) {
    int count = 0;
    if (device < 0 || device >= RMM_MAX_DEVICES)
        return RMM__INVALID("%s: device %d is out of range", fn, device);
    RMM_TRY(rmm__device_count(&count));
    if (device >= count) return RMM__INVALID("%s: device %d does not exist (%d devices)", fn, device, count);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_resource *rmm__default_resource(int device) {
    rmm__base_resource *d = &rmm__device_defaults[device];
    if (!RMM__ATOMIC_LOAD(&d->base.vtable)) {
        pthread_mutex_lock(&rmm__device_table_lock);
        if (!d->base.vtable) {
            d->kind = RMM__BASE_CUDA;
            d->device = device;
            RMM__ATOMIC_STORE(&d->base.vtable, &rmm__cuda_vtable);
        }
        pthread_mutex_unlock(&rmm__device_table_lock);
    }
    return &d->base;
}
RMM__IMPL rmm_resource *rmm_get_per_device_resource(int device) {
    rmm_resource *mr;
    if (RMM__UNLIKELY(device < 0 || device >= RMM_MAX_DEVICES)) {
        rmm__check_device(device, "rmm_get_per_device_resource");
        return NULL;
    }
    mr = RMM__ATOMIC_LOAD(&rmm__device_table[device]);
    if (RMM__LIKELY(mr != NULL)) return mr;
    if (rmm__check_device(device, "rmm_get_per_device_resource") != RMM_SUCCESS) return NULL;
    return rmm__default_resource(device);
}
RMM__IMPL rmm_resource *rmm_set_per_device_resource(int device, rmm_resource *mr) {
    rmm_resource *previous;
    if (rmm__check_device(device, "rmm_set_per_device_resource") != RMM_SUCCESS) return NULL;
    pthread_mutex_lock(&rmm__device_table_lock);
    previous = rmm__device_table[device];
    RMM__ATOMIC_STORE(&rmm__device_table[device], mr);
    pthread_mutex_unlock(&rmm__device_table_lock);
    return previous ? previous : rmm__default_resource(device);
}
RMM__IMPL rmm_resource *rmm_get_current_device_resource(void) {
    int device;
    if (rmm__get_device(&device) != RMM_SUCCESS) return NULL;
    return rmm_get_per_device_resource(device);
}
RMM__IMPL rmm_resource *rmm_set_current_device_resource(rmm_resource *mr) {
    int device;
    if (rmm__get_device(&device) != RMM_SUCCESS) return NULL;
    return rmm_set_per_device_resource(device, mr);
}
RMM__IMPL rmm_status rmm_available_device_memory(size_t *free_bytes, size_t *total_bytes) {
    size_t f = 0, t = 0;
    if (!free_bytes) return RMM__NULL_OUT("rmm_available_device_memory", "free_bytes");
    if (!total_bytes) return RMM__NULL_OUT("rmm_available_device_memory", "total_bytes");
    RMM_TRY(rmm__mem_info(&f, &t));
    *free_bytes = f;
    *total_bytes = t;
    return RMM_SUCCESS;
}
RMM__IMPL size_t rmm_percent_of_free_device_memory(int percent) {
    size_t f = 0, t = 0;
    if (percent < 0 || percent > 100) {
        RMM__INVALID("rmm_percent_of_free_device_memory: percent %d is outside 0..100", percent);
        return 0;
    }
    if (rmm__mem_info(&f, &t) != RMM_SUCCESS) return 0;
    return rmm__align_down((size_t)((double)f * ((double)percent / 100.0)), RMM_ALIGNMENT);
}
RMM__IMPL rmm_status rmm_get_device_count(int *count) {
    if (!count) return RMM__NULL_OUT("rmm_get_device_count", "count");
    return rmm__device_count(count);
}
RMM__IMPL rmm_status rmm_get_device(int *device) {
    if (!device) return RMM__NULL_OUT("rmm_get_device", "device");
    return rmm__get_device(device);
}
RMM__IMPL rmm_status rmm_set_device(int device) {
    RMM_TRY(rmm__check_device(device, "rmm_set_device"));
    return rmm__set_device(device);
}

/* ======================================================================================= */
/* ==== streams ========================================================================= */
/* ======================================================================================= */ /* >>streams */

RMM__IMPL rmm_status rmm_stream_create(rmm_stream *out) {
    if (!out) return RMM__NULL_OUT("rmm_stream_create", "out");
    return rmm__stream_create_raw(out);
}
RMM__IMPL rmm_status rmm_stream_destroy(rmm_stream stream) {
    if (stream == RMM_STREAM_DEFAULT || stream == RMM_STREAM_LEGACY || stream == RMM_STREAM_PER_THREAD)
        return RMM__INVALID("rmm_stream_destroy: the default streams cannot be destroyed");
    return rmm__stream_destroy_raw(stream);
}
RMM__IMPL rmm_status rmm_stream_synchronize(rmm_stream stream) { return rmm__stream_sync_raw(stream); }

struct rmm_stream_pool {
    size_t count;
    size_t next;
    rmm_stream streams[1];
};
RMM__IMPL rmm_status rmm_stream_pool_create(rmm_stream_pool **out, size_t count) {
    rmm_stream_pool *p;
    size_t i;
    if (!out) return RMM__NULL_OUT("rmm_stream_pool_create", "out");
    *out = NULL;
    if (count == 0) count = 16;
    if (count > (SIZE_MAX - sizeof *p) / sizeof(rmm_stream))
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_stream_pool_create(count=%zu): too many streams", count);
    p = (rmm_stream_pool *)rmm__calloc(1, sizeof *p + count * sizeof(rmm_stream));
    if (!p) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_stream_pool_create(count=%zu): out of host memory", count);
    for (i = 0; i < count; i++) {
        rmm_status st = rmm__stream_create_raw(&p->streams[i]);
        if (st != RMM_SUCCESS) {
            while (i-- > 0) (void)rmm__stream_destroy_raw(p->streams[i]);
            RMM_SYS_FREE(p);
            return st;
        }
    }
    p->count = count;
    *out = p;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_stream rmm_stream_pool_get(rmm_stream_pool *pool) {
    size_t i = __atomic_fetch_add(&pool->next, 1, __ATOMIC_RELAXED);
    return pool->streams[i % pool->count];
}
RMM__IMPL rmm_stream rmm_stream_pool_get_at(rmm_stream_pool *pool, size_t index) { return pool->streams[index % pool->count]; }
RMM__IMPL size_t rmm_stream_pool_size(const rmm_stream_pool *pool) { return pool ? pool->count : 0; }
RMM__IMPL void rmm_stream_pool_destroy(rmm_stream_pool *pool) {
    size_t i;
    if (!pool) return;
    for (i = 0; i < pool->count; i++) (void)rmm__stream_destroy_raw(pool->streams[i]);
    RMM_SYS_FREE(pool);
}

#endif /* RMM_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 the rmm.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
