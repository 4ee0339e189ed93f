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
      >>graph       CUDA-graph capture: graph pools
      implementation only:
      >>util        locks, atomics, address map    >>streamorder per-stream events, stream registry
      >>tlsf        size-binned free lists, blocks >>diagnostics validate, dump, margins, base

   How it is built, for a reader: every CUDA call goes through the platform layer (>>platform;
   RMM_BACKEND_HOST implements the same functions on the host). A resource is a struct whose first
   member is rmm_resource (a vtable pointer). The stream-ordered sub-allocators share the
   stream-order core (>>streamorder: per-stream state found by handle, events, the stream
   registry) and the size-binned free lists (>>tlsf). What the walks over a resource graph need of
   a type (its upstream, its children, validation, its part of the JSON dump, where a block comes
   from, its live blocks for the margin check) is one row per type in >>diagnostics (rmm__descs),
   whose functions sit at the end of that type's own section; a user's type joins with
   rmm_resource_register_type.

   Compile-time options (define before *every* #include of rmm.h unless said otherwise):
      RMM_IMPLEMENTATION  in exactly one file: emits the implementation there.
      RMM_STATIC          everything static to the implementing file (then include it in one file only).
      RMM_BACKEND_HOST    no CUDA at all: "device" memory is host memory from posix_memalign, streams
                          and events run in order on the host. For tests and development without a GPU.
      RMM_HOST_BACKEND_BYTES    host backend: the simulated device capacity (default 4 GiB); change
                          it at run time with rmm_host_backend_set_capacity().
      RMM_HOST_BACKEND_DEVICES  host backend: how many devices it simulates (default 2; at least 1,
                          else the header does not compile).
      RMM_NO_POOL, RMM_NO_BINNING, RMM_NO_ARENA, RMM_NO_LOGGING
                          leave those features out (binning also needs fixed-size, which stays);
                          their functions then return RMM_ERROR_NOT_SUPPORTED, naming themselves
                          and the macro (rmmInitialize in pool mode too); the descriptor helpers
                          (*_desc_default, rmm_pool_desc_parse, rmm_pool_desc_from_env) stay and
                          work, so configuration code builds either way.
      RMM_NO_THRUST       (nvcc, C++) leave out the Thrust/CUB allocator (rmm::thrust_allocator).
      RMM_DEBUG           extra checks: the pool validates every invariant after each call, the
                          fixed-size resource and the arena after each of their first 1024 calls and
                          every 1024th after (validating is O(blocks): every call made a debug run
                          quadratic), and the cudaMalloc-family (cuda, managed, pinned; rmm_cuda.h's
                          pinned host resource too) and async resources keep a record of each live
                          block, so that a double free, a pointer they did not hand out, another
                          family's block or a wrong size is CORRUPTION with nothing freed (release
                          builds pass such a free to CUDA: an error, or for the base of a pool's
                          chunk a free under the pool); the fixed-size resource (and so binning's
                          bins) checks each free's size against the size its block was allocated
                          with. The sub-allocators and the new_delete host resource check their
                          frees in every build. Costs a mutex and a record per base call.
      RMM_NVTX            (CUDA backend) marks every rmm_allocate/rmm_deallocate in Nsight Systems
                          (message "allocate: pool", payload the size), and registers the chunks
                          and blocks of the pool, fixed-size and
                          arena resources with NVTX so that compute-sanitizer memcheck sees each
                          block's bounds (not the pool's virtual mode).
      RMM_DEBUG_MARGIN    N bytes (default 0: off; implementing file only): the pool, arena and fixed-size
                          resources leave N bytes after each block, filled with 0xFD when it is handed
                          out; its free, and rmm_resource_check_corruption, check them and report
                          CORRUPTION naming the block and the first byte written past its end. The
                          one feature that writes into managed memory (stream-ordered memsets, and a
                          stream synchronize per free): for debugging only. Zero cost when off.
                          A margin whose fill cannot be queued (a broken stream) leaves that block
                          unchecked, logged at WARN; the allocation still succeeds.
      RMM_LOG_LEVEL       the most verbose debug-log level compiled in (default RMM_LOG_LEVEL_INFO).
      RMM_ASSERT(x)       the library's internal assertion (default: assert from <assert.h>).
      RMM_SYS_MALLOC(n), RMM_SYS_REALLOC(p,n), RMM_SYS_FREE(p)
                          the host allocator for the library's own bookkeeping; all three or none
                          (default malloc/realloc/free). Only the implementing file needs them.
      RMM_MAX_DEVICES     the largest device count the per-device table holds (default 64; at least 1);
                          a device numbered at or above it cannot be used through the library
                          (rmm_set_device and the per-device resources refuse it: INVALID_ARGUMENT).
      RMM_MAX_CALLBACK_DEPTH
                          the most calls of callback resources' functions (rmm_callback_resource_create)
                          nested on one thread (default 16; at least 1): a deeper one fails with
                          INVALID_ARGUMENT, so that a callback reaching itself again (a cycle) is an
                          error, not a stack overflow. Only the implementing file needs it.
      RMMDEF              the prefix of every public declaration (default extern, or static with
                          RMM_STATIC): define it to add attributes such as visibility (with
                          RMM_STATIC, yours must say static too).

   Deliberate non-goals: no Windows-specific code (POSIX threads and GCC/Clang atomics); no writes
   into the memory a sub-allocator manages (all bookkeeping is on the host); no exceptions and no
   C++ wrappers beyond the Thrust allocator; no implicit host synchronization on allocate/free
   except where documented (arena large and cross-thread frees, pool growth through cudaMalloc and
   cudaFree, the virtual pool moving idle pages, trim).

   Revision history:
      0.1.0  (2026-11)  first release: foundation, sub-allocators (pool with geometric, on-demand and
                        virtual-memory growth; fixed-size; binning; arena), adaptors, containers,
                        legacy API, NVTX annotations for compute-sanitizer.
*/

#ifndef RMM_H_INCLUDED
#define RMM_H_INCLUDED

/* ======================================================================================= */
/* ==== config: compile-time options ==================================================== */
/* ======================================================================================= */ /* >>config */

/* The implementation uses a few POSIX calls beyond ISO C (threads, gettimeofday, localtime_r, mmap).
   In the file that defines RMM_IMPLEMENTATION (only there: a file that only includes the API keeps
   its own feature macros) these open them up when rmm.h is its first include under -std=c99; when a
   system header came first they are too late, and the implementation declares what strict ISO mode
   hid itself. */
#if defined(RMM_IMPLEMENTATION) && !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
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

/* RMMDEF prefixes every public declaration; define it before including rmm.h to add your own
   attributes (visibility, dllexport), as stb headers allow. */
#ifndef RMMDEF
#if defined(RMM_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define RMMDEF static __attribute__((unused))
#elif defined(RMM_STATIC)
#define RMMDEF static
#else
#define RMMDEF extern
#endif
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
   Never NULL: "" before the first failure. A success does not clear it (like errno). O(1).
   A call that succeeds leaves it as it was, even where the library worked around a failure inside
   it (an event that could not be made, so it synchronized; memory it could not give back, so it
   kept it; a device it could not restore: those are logged at WARN); a call that fails leaves its
   own failure, the status it returns, not that of a clean-up on its way out. The exceptions are
   the calls that return nothing: rmm_resource_destroy and rmm_stream_pool_destroy leave a
   failure of theirs here (see each). OUT_OF_MEMORY from the pool, arena, fixed-size resource or limiting adaptor is explained: the
   request (bytes, alignment, stream), what the resource holds and its maximum, the bytes live, the
   largest free block, the free bytes in all and in other streams' lists, the device's free memory,
   the upstream error that started it ("cause: ...") and a verdict: "alignment" (an alignment
   above 256 that no block meets, or that with the room to reach it asks more than the device
   has), "address range full" (a VIRTUAL pool's reserved virtual_bytes), "held by other
   streams", "fragmented", "at the maximum", "driver refused" (a VIRTUAL pool's pages could not be
   made or mapped), "device full", "out of host memory" (the cause: a record the allocation needs)
   or "refused upstream". With RMM_DUMP_ON_OOM=PATH in the
   environment the failing resource's whole state (rmm_resource_dump_json) is also written to PATH
   (to a temporary file first, then copied to PATH under a process-wide lock: with several threads
   failing at once PATH holds one whole dump, the last); if PATH cannot be written, the message
   ends with "RMM_DUMP_ON_OOM: nothing written to 'PATH': " and the reason (and the debug log
   warns). The explanation costs nothing until an allocation fails. */
RMMDEF const char *rmm_last_error(void);
/* The status of the last failing call on this thread (RMM_SUCCESS before the first failure). For the
   few calls that return a pointer or a size rather than a status. O(1). */
RMMDEF rmm_status rmm_last_status(void);
/* The CUDA error behind this thread's last failure: the cudaError_t that a CUDA runtime call
   returned, or for the virtual pool's driver calls the CUresult (CUDA gives the errors the two APIs
   share the same numbers: 2 out of memory, 101 invalid device, 400 invalid handle, ...); on the
   host backend the error its simulated call names (2 out of memory, 1 invalid value, 101 invalid
   device, 400 invalid resource handle, 999 for an injected failure or one of the host's own). A
   failure that reports a CUDA call's failure beneath it as its cause keeps that call's number (a
   pool whose growth failed, an explained OUT_OF_MEMORY whose cause was cudaMalloc's, rmmAlloc);
   0 when no CUDA call's failure is behind it (an invalid argument the library refused before any
   CUDA call, a maximum reached, a user's rmm_set_last_error) and before the first failure. Set
   and cleared with rmm_last_status(), so a library call that recovers from a failure of its own
   leaves the earlier value. For bindings that raise the CUDA runtime's own error numbers (rmmh's
   CUDARuntimeError.status), and to tell a sticky CUDA error (the context is lost) behind a
   resource's failure. O(1). */
RMMDEF int rmm_last_cuda_error(void);

/* For user-defined resources: records `status` and a printf-style message as this thread's last
   error and returns `status`, so `return rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "...", n);`
   reports like the library's own resources. An argument may be rmm_last_error() itself, to prefix
   the message of a call that failed beneath: rmm_set_last_error(st, "mine: %s", rmm_last_error()).
   A message past 1023 bytes keeps its first 640 and its last 378 (where the cause usually is),
   with " ... " between, cut on whole UTF-8 characters; fmt NULL clears it. O(message length). */
RMMDEF rmm_status rmm_set_last_error(rmm_status status, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Returns the status from the enclosing function when `call` fails. */
#define RMM_TRY(call)                                   \
    do {                                                \
        rmm_status rmm__try_status_ = (call);           \
        if (rmm__try_status_ != RMM_SUCCESS)            \
            return rmm__try_status_;                    \
    } while (0)

/* CUDA backend only (RMM_BACKEND_HOST has no cudaError_t, and so neither of these): */
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
   OUT_OF_MEMORY iff host memory runs out, CUDA iff the runtime refuses. Thread-safe; O(1).
   The library sees the life of the streams it makes, which makes them the cheapest streams for its
   sub-allocators: a pool, fixed-size or arena resource finds its state for such a stream by handle,
   with no driver call, and records the ordering event for memory freed on it only when another
   stream takes that memory. Streams from cudaStreamCreate work too, on a slower path: the
   stream's id (the driver's cuStreamGetId, about 17-22 ns on an H100 or H200) per allocation, as
   a handle may be reused unseen (the driver hands a destroyed stream's handle to the next stream
   made, while the old one's work still runs), and per free only when an event is due (the arena:
   a free finds the stream's arena in a per-thread cache, with no lock); and, once the stream has
   made 256 frees, one event per 256 frees in the pool (per 32 of blocks above 64 KiB), per 32 to
   256 in the fixed-size resource (1/16 of its blocks; so binning's bins) and per batch of 256 in
   the arena; the event is cuEventRecord, straight to the driver. The pool and the arena then ask
   the id only when memory whose last use is known over does not serve the allocation (at least
   once per 64 allocations). The arena's event orders nothing: as in RMM, a free on another stream
   than the block's synchronizes that stream; it only tells which freed memory is known done.
   Destroy such a stream only with rmm_stream_destroy, never cudaStreamDestroy. */
RMMDEF rmm_status rmm_stream_create(rmm_stream *out);
/* As rmm_stream_create, but the stream synchronizes with the legacy default stream
   (cudaStreamDefault flags: RMM's CudaStreamFlags.SYNC_DEFAULT). The same on the host backend. */
RMMDEF rmm_status rmm_stream_create_blocking(rmm_stream *out);
/* Destroys a stream made by rmm_stream_create (pending work still completes; memory freed on it
   stays ordered behind that work). The default streams, a stream destroyed already and one not
   made by rmm_stream_create are INVALID_ARGUMENT (and left alone), and so is a stream a stream pool
   handed out (rmm_stream_pool_destroy destroys those; one it left alive, registered for capture,
   is the caller's, and this call takes it) and a stream registered for graph capture
   (rmm_capture_begin; rmm_capture_end it first). When a resource holds state for the stream,
   one event is recorded on it first. CUDA iff cudaStreamDestroy fails: the library has let the
   stream go first (its handle may be reused as soon as it is destroyed), so the stream is no longer
   the library's: it works on as a stream from cudaStreamCreate would, and cudaStreamDestroy is what
   destroys it then. Thread-safe; O(1). */
RMMDEF rmm_status rmm_stream_destroy(rmm_stream stream);
/* Blocks the host until all work on the stream is done. Fails with CUDA iff that work failed. */
RMMDEF rmm_status rmm_stream_synchronize(rmm_stream stream);
/* Stream-ordered copy of `bytes` between any host or device memory (cudaMemcpyAsync with
   cudaMemcpyDefault) and fill (cudaMemsetAsync); on the host backend they run at once. Fail with
   INVALID_ARGUMENT iff a pointer is NULL while bytes > 0, CUDA iff the runtime refuses (the host
   backend refuses, as cudaErrorInvalidValue, a range whose first or last byte the process cannot
   read, or for the destination write; one mapped only in its middle still faults there). */
RMMDEF rmm_status rmm_memcpy_async(void *dst, const void *src, size_t bytes, rmm_stream stream);
RMMDEF rmm_status rmm_memset_async(void *dst, int value, size_t bytes, rmm_stream stream);

typedef struct rmm_stream_pool rmm_stream_pool;
/* The most streams one stream pool makes: 65536 (CUDA runs at most 128 at once; each stream costs
   the driver memory and about 14 us to make, so a count far above this is a mistake that would run
   for hours). */
#define RMM_STREAM_POOL_MAX ((size_t)65536)
/* A fixed set of streams handed out round robin. count 0 means 16. Fails with INVALID_ARGUMENT iff
   out is NULL or count > RMM_STREAM_POOL_MAX, OUT_OF_MEMORY or CUDA iff a stream cannot be made
   (nothing is leaked). O(count) stream creations. */
RMMDEF rmm_status rmm_stream_pool_create(rmm_stream_pool **out, size_t count);
/* The next stream, round robin; lock-free and thread-safe. O(1). A NULL pool gives the default
   stream and sets rmm_last_status() to INVALID_ARGUMENT. */
RMMDEF rmm_stream rmm_stream_pool_get(rmm_stream_pool *pool);
/* The stream at index modulo the pool size. O(1). A NULL pool: as rmm_stream_pool_get. */
RMMDEF rmm_stream rmm_stream_pool_get_at(rmm_stream_pool *pool, size_t index);
/* The number of streams; 0 for NULL. */
RMMDEF size_t rmm_stream_pool_size(const rmm_stream_pool *pool);
/* Destroys every stream and the pool. NULL is a no-op. A stream that cannot be destroyed is logged
   at WARN, its failure is the thread's last error (rmm_last_status), and the rest go on; a stream
   registered for graph capture is left alive so (rmm_capture_end still ends its registration on a
   live stream; destroying it would pass the registration to the next stream with its handle), and
   is then the caller's: rmm_stream_destroy it after rmm_capture_end. */
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
   else is INVALID_ARGUMENT. A pointer the resource returns that is not so aligned (to the
   alignment after that raise: a resource of the user's that ignores the alignment, or gives less
   than the 256 every resource owes) is freed back to it and the call fails with INVALID_ARGUMENT:
   an alignment is honoured or refused, never ignored. A success with *ptr NULL for bytes > 0 (a
   resource of the user's that says yes with no memory) fails with INVALID_ARGUMENT too. (rmm_allocate,
   the fast path, checks neither. The sub-allocators take their upstream's memory through this call,
   so such a resource under a pool, a fixed-size resource, binning's own bins or an arena is
   refused at its growth or creation, with nothing changed: red team 37a. Every adaptor, and
   binning for a bin of the user's (rmm_binning_add_bin), checks its upstream's answer the same way
   before it counts, tracks or logs it: the tracking adaptor dereferenced NULL on such an answer.
   Only rmm_allocate on the user's own resource hands its answer on as it is.) */
RMMDEF rmm_status rmm_allocate_aligned(rmm_resource *mr, void **ptr, size_t bytes, size_t alignment, rmm_stream stream);
/* Frees memory from rmm_allocate with the same mr, bytes and a stream on which it may be reused at
   once. NULL is a no-op. Fails with INVALID_ARGUMENT, reaching no resource, for a pointer freed with
   bytes 0 (no allocation has that size: rmm_allocate of 0 bytes hands out NULL; an adaptor that
   counts bytes would have kept the block's counted for good), else with what the resource returns
   (CORRUPTION for a pointer it does not own, where the resource can tell). */
RMMDEF rmm_status rmm_deallocate(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream);
/* As rmm_deallocate, for memory from rmm_allocate_aligned: with the alignment it was allocated with
   (a block over-aligned by a base resource and freed with the default alignment is CORRUPTION;
   other mismatches are not always detected). */
RMMDEF rmm_status rmm_deallocate_aligned(rmm_resource *mr, void *ptr, size_t bytes, size_t alignment, rmm_stream stream);
/* Says that the block at ptr, allocated from mr (NULL: the current device resource), is used on
   `stream` too (PyTorch's Tensor.record_stream). When it is freed, on whatever stream S, the free
   first records an event on each recorded stream and makes S wait for it (cudaStreamWaitEvent, no
   host wait): S's later work, and any stream that later takes the block behind S, run after the
   work queued on the recorded streams up to the free. (PyTorch keeps such a block out of use and
   polls its events instead; here S itself is ordered after those streams.) `stream` must be a
   stream of the device current at this call (its events are made there, whatever device the free
   runs with). The record holds for the free of that block through mr or any resource within 32
   layers of it on mr's upstream chain or over it (a block allocated through an adaptor may be
   recorded through what is under it, or through NULL, and the other way round), or through a
   chain that reaches a cudaMalloc-family resource equal to one on mr's (rmm_resource_is_equal); an adaptor
   destroyed in between hands its records to its upstream (the aligned adaptor: those of blocks it
   did not over-align; a user's registered type: none), and a sub-allocator destroyed drops those of
   its blocks, also the ones made through a resource over it. A foreign recorded stream must still
   exist when the block is freed (if no event can be recorded on it, the free synchronizes the
   stream's device, a host wait, and logs a warning); a library stream (rmm_stream_create, a stream
   pool) destroyed since is waited for through the event its destroy recorded.
   RMM_STREAM_PER_THREAD names the recording thread's stream: a free on that thread waits for it
   with an event, a free on another thread (which cannot name it) synchronizes its device (a host
   wait for all of that device's work). Recording a stream twice records it once. A free of a
   recorded block that cannot make its events fails with CUDA's status and frees nothing (a retry
   may succeed); rmm_deallocate_nowait refuses it (would_block). Fails with INVALID_ARGUMENT iff ptr
   is NULL or is not a live block of a sub-allocator on mr's chain (as rmm_resource_allocation_base
   tells; the cudaMalloc-family resources and user resources cannot tell),
   OUT_OF_MEMORY iff host memory runs out (nothing recorded); the device query's status. Thread-safe
   (one global lock; a user type's get_upstream is called outside it). The records of library
   streams (rmm_stream_create, stream pools) destroyed since whose work is done are dropped as
   more come, so a long-lived block recorded on many short-lived library streams keeps about as
   many as are alive or busy (the pruning queries the destroyed streams' events, one query each,
   under the global lock: amortized O(1) a record); so are those of per-thread streams whose
   threads have exited, all but one a device (the free synchronizes that device for them); a
   foreign stream's record stays until the free (the library cannot see it die), one per stream.
   Cost: O(the streams recorded for the block) for the check for the same stream, O(1) amortized
   plus a walk of mr's chain; while any block is recorded every free pays one relaxed load and a lock with
   a hash lookup (a free at a recorded address: a walk of its resource's chain, a second lock, and
   per recorded stream an event record and a wait), and with none recorded, one relaxed load. A graph pool's
   block (>>graph) records nothing and succeeds: its reuse follows the capture's rules. While a
   recorded stream is registered for graph capture (rmm_capture_begin), the free of the block is
   deferred to that registration's rmm_capture_end (an event recorded on the capturing stream would
   be captured, and the free's stream, waiting on it, would join the capture): the free's stream
   waits now for the block's recorded streams that are not registered and records an event (it may
   then be destroyed), and the end makes the free on the ended stream behind that event (a free on
   the legacy stream, which a capture of a blocking stream forbids touching, does nothing until the
   end and is made then on it); CUDA iff a wait or that event cannot be made (nothing freed),
   NOT_SUPPORTED (nothing freed: try again) iff the recorded stream's registrations began and ended
   eight times while the free looked. */
RMMDEF rmm_status rmm_record_stream(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream);

/* ---- CUDA-graph capture: graph-private pools ---- >>graph
   Work captured into a CUDA graph (cudaStreamBeginCapture .. cudaStreamEndCapture) keeps using the
   addresses it allocated every time the graph launches, long after the capture freed them. A graph
   pool holds that memory apart: while a stream is registered with rmm_capture_begin, every
   rmm_allocate (and _aligned) on that stream, whatever the resource named, is served by the graph
   pool, and every free of a graph pool's block, on any stream, at any time, returns it there; no
   other work ever gets it (a sub-allocator's own memory, taken at its creation or growth, and a
   graph pool's reserve never come from a graph pool, whatever stream they are taken on, nor does
   any allocation made on that thread by user code called meanwhile, a callback upstream's or a
   failure callback's, whose frees are routed as anywhere; an allocation such code hands to another
   thread is routed as that thread's, so an upstream of the user's that does so on a registered
   stream can hand a graph pool's block to a pool; rmm_resource_allocation_base of a graph
   pool's block answers its chunk in the graph pool's upstream) (a free with another size than the one allocated is CORRUPTION, nothing
   freed, as in the pool). Inside a capture the pool makes no CUDA call, so it never invalidates it
   (global, thread-local or relaxed mode): no synchronization, no event, no cudaMalloc. Nor do calls
   on other streams touch a registered stream: memory a library stream (lazy, >>streams) freed
   before its capture began, whose ordering event would have to be recorded on it now, is passed
   over while it is registered (the resource takes other memory, or grows), and the free of a block
   recorded on it (rmm_record_stream) is deferred to its rmm_capture_end, made then on it behind an
   event recorded on the free's stream at the free (rmm_record_stream says more). RMM_STREAM_PER_THREAD (and
   handle 0 in per-thread-default-stream builds) names the calling thread's own stream on the
   current device, here as in CUDA: its registration is that thread's, for that device, and
   rmm_capture_end of it must come from the same thread with the same device current, before the
   thread exits (a registration its thread left behind can never be ended: it stays for the life
   of the process, its graph pool cannot be destroyed, and every allocation and free keeps taking
   the graph pools' lock; red team 38a). A block freed
   during a capture is reused only by its freeing stream until the last capture on the pool ends
   (PyTorch's rule for graph pools); then every free block may serve the next capture. Graphs that
   share a pool may reuse each other's freed blocks: launch them one at a time, in one stream order,
   or give each graph its own pool. Memory comes back when rmm_graph_pool_destroy says the graphs are
   gone (while captures registered before the destroy run, once they have ended; a capture
   registered after it may still run then: those calls are made with the thread's capture mode
   relaxed). Allocations it serves bypass the named resource and its adaptors (statistics,
   logging).

   Creates a graph pool over `upstream` (NULL: the current device resource), taking reserve_bytes
   (rounded up to 256; 0: none) from it now, outside any capture, on a stream of its own that it
   then synchronizes (create graph pools outside any capture). When a capture needs more, a
   cudaMalloc or async upstream gives another chunk (the larger of the request and the reserve) on
   the graph pool's own stream, with this thread's capture mode relaxed for that call and no device
   synchronize, and the pool synchronizes its own stream; any other upstream (a pool among them: the
   memory it would take from another stream may need an event recorded on that stream, perhaps the
   capturing one) makes the allocation fail with OUT_OF_MEMORY, saying to give a larger reserve;
   the capture stays valid either way. If the thread's capture mode cannot be set back after such a
   call (a broken context), the memory is kept, the thread stays in relaxed mode, and that is logged
   at ERROR with no failure left as the thread's last error. Fails with INVALID_ARGUMENT iff out is NULL or reserve_bytes
   overflows when rounded; OUT_OF_MEMORY or CUDA as upstream or the stream's creation fails
   (nothing made). Thread-safe: one global lock for every graph pool, never held while calling
   upstream. */
typedef struct rmm_graph_pool rmm_graph_pool;
RMMDEF rmm_status rmm_graph_pool_create(rmm_graph_pool **out, rmm_resource *upstream, size_t reserve_bytes);
/* Registers `stream` with gp: its allocations come from gp until rmm_capture_end, and a free on it
   of memory that is not gp's (a block from before the capture, freed inside it) is deferred to
   rmm_capture_end (made then, its resource's event would be captured, and the block could go to
   other work while the graph still uses its address; as in PyTorch, the graph must not use such a
   block after its free). Call it before or right after cudaStreamBeginCapture, for every stream
   that joins the capture; do not end the registration (nor destroy gp) while an allocation on the
   stream is under way in another thread. No CUDA call (for RMM_STREAM_PER_THREAD, one
   cudaGetDevice: the registration is this thread's stream on the current device). Fails with
   INVALID_ARGUMENT iff gp is NULL or destroyed, or stream is registered already (with any pool);
   OUT_OF_MEMORY iff host memory runs out; CUDA iff cudaGetDevice fails. O(captures underway). */
RMMDEF rmm_status rmm_capture_begin(rmm_graph_pool *gp, rmm_stream stream);
/* Ends the registration of `stream`: call it after cudaStreamEndCapture. The frees deferred on the
   stream are made now, on it (those of blocks recorded on it behind the streams they were freed on:
   rmm_record_stream). Their first failure is returned, the message naming its block (pointer,
   size, resource) and how many failed; each failure is logged at ERROR with its pointer, size and
   resource, and its block stays allocated (free it again, on the stream it was freed on; a block
   rmmFree deferred is rmmFree's again); the registration ends anyway.
   When gp's last registered stream ends, its free blocks are open to every stream of the next
   capture. INVALID_ARGUMENT iff gp is NULL or stream is not registered with gp (for
   RMM_STREAM_PER_THREAD: by this thread, for the current device); OUT_OF_MEMORY iff
   host memory runs out (still registered); CUDA iff cudaGetDevice fails (RMM_STREAM_PER_THREAD;
   still registered). O(captures underway + deferred frees). */
RMMDEF rmm_status rmm_capture_end(rmm_graph_pool *gp, rmm_stream stream);
/* The bytes gp holds from upstream and the bytes of its live blocks (either may be NULL).
   INVALID_ARGUMENT iff gp is NULL or destroyed (while it still exists: see rmm_graph_pool_destroy). */
RMMDEF rmm_status rmm_graph_pool_get_info(rmm_graph_pool *gp, size_t *reserved_bytes, size_t *used_bytes);
/* Says the graphs that used gp are destroyed (or will never launch again): gp takes no new
   registration, and its memory returns to upstream once its last live block is freed (now, if
   none is live), or, if captures are registered then, once those registrations have ended
   (returning it is a CUDA call): upstream must live until then. Fails with INVALID_ARGUMENT iff gp is NULL or
   a stream is still registered with it (end the capture first); gp is then unchanged. After a
   successful call gp is like freed memory: do not pass it again (while its blocks are live a call
   on it is refused with INVALID_ARGUMENT, but once its memory has gone it no longer exists). A
   failure to return memory upstream is logged: among them, when the last live block is freed by
   user code that the upstream itself is running (a callback upstream of a pool the graph pool took
   its reserve from, freeing it during that pool's growth), the upstream refuses the return as
   re-entrant and keeps the chunk until it is destroyed. */
RMMDEF rmm_status rmm_graph_pool_destroy(rmm_graph_pool *gp);
/* The graph pools over `upstream` (NULL: over any resource) that rmm_graph_pool_destroy was called
   on and whose memory has not all gone back to it yet: a block still live, captures registered at
   the destroy not yet ended, or the return under way on some thread (those are counted for every
   upstream). A binding that keeps an upstream alive for such pools may let it go once this is 0
   (rmmh's GraphPool.release: until 2026-11-30 it kept such an upstream for the life of the
   process). Thread-safe. O(graph pools). */
RMMDEF size_t rmm_graph_pools_pending(rmm_resource *upstream);
/* "Nowait" allocate and free, for callers that hold a lock a CUDA host callback may wait for (an
   interpreter's GIL): as rmm_allocate and rmm_deallocate, except that they never wait, for a lock,
   the device, an upstream or another stream's work. Where they would have to (the resource's lock
   is busy, the request needs memory from another stream or from upstream), and for every resource
   but the pool (not in virtual mode, nor with RMM_DEBUG_MARGIN), they do nothing, return SUCCESS
   and set *would_block: the caller then makes the ordinary call (after releasing its lock). Else
   *would_block is false and the status is the call's. INVALID_ARGUMENT iff would_block is NULL,
   ptr is NULL for the allocate, or a pointer is freed with bytes 0 (bytes 0 for the allocate and a
   NULL free pointer succeed at once). Pass the resource:
   mr NULL makes them read the current device (cudaGetDevice) to find it. A foreign stream's
   allocation costs its id (cuStreamGetId), as in the ordinary call, and so may its free; a free on it
   that would record an event (a young stream, or a full ring: see rmm_pool_create) is refused
   with *would_block, and so is a call on a stream new to the pool when the pool's sweep of dead
   streams' states is due (the ordinary call makes it; a sweep runs when the number of states
   doubles). While any graph pool exists every free is refused so (its block may be a graph
   pool's: the ordinary call looks under the graph pools' lock), and while any stream is registered
   for capture, every allocation (the ordinary call routes it); so a program that keeps a graph
   pool makes its nowait frees as ordinary calls. Under RMM_NVTX the first mark of a resource type
   takes a lock once; nothing else reaches CUDA or waits. */
RMMDEF rmm_status rmm_allocate_nowait(rmm_resource *mr, void **ptr, size_t bytes, rmm_stream stream, bool *would_block);
RMMDEF rmm_status rmm_deallocate_nowait(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream, bool *would_block);
/* Destroys this layer only, never its upstream. NULL is a no-op. Not concurrent with use. The
   library-owned default resources (what rmm_get_current_device_resource returns until another is
   set) are not destroyed: that call does nothing and sets rmm_last_status() to INVALID_ARGUMENT.
   Nor is a resource that a free deferred to rmm_capture_end would reach (a block of it, or of a
   resource over it, freed on a stream registered for capture): the same, until that capture's
   end has made the free; then destroy it again. O(what the resource holds: a pool's chunks, stream
   states and records, a tracking adaptor's map, ...; red team 29: it said O(1)), plus, while a capture is registered or
   ending, the walk of rmm_resource_awaits_capture (O(deferred frees x depth of their resources'
   stacks), under the graph lock). It returns nothing: a CUDA failure on the way (memory that could
   not be given back upstream, a device synchronize before its streams' memory goes), or a logging
   adaptor's rows that could not be written to its file (IO), leaves that failure as the thread's
   last error (rmm_last_status), and the destroy goes on with the rest.
   Other calls that succeed leave no failure of theirs behind. */
RMMDEF void rmm_resource_destroy(rmm_resource *mr);
/* Whether a free deferred to rmm_capture_end would reach mr now: the block's own resource, or one
   it reaches upstream (rmm_resource_get_upstream, and a binning resource's bins), including frees
   an rmm_capture_end is making at the moment. rmm_resource_destroy leaves such a resource as it is.
   false for NULL. O(1) while no capture is registered or ending, else O(deferred frees x depth of
   their resources' stacks), with the graph lock taken once. */
RMMDEF bool rmm_resource_awaits_capture(const rmm_resource *mr);
/* true iff memory from one may be freed by the other (vtable is_equal, else identity); NULL is the
   current device resource, as in the generic calls (false, with the cause as the last error, if
   the current device cannot be read); a block
   allocated with an alignment above RMM_ALIGNMENT from one of the cudaMalloc-family resources (cuda,
   managed, pinned, async) is freed only by the resource that allocated it, with that alignment
   (each keeps the records of its over-aligned blocks, and the library all of them: any other
   resource of the family refuses the free with CORRUPTION, freeing nothing, whatever alignment it
   is given; until 2026-11-30 one given the default alignment freed it when the block's address
   was already aligned). A block an aligned adaptor over-aligned is likewise freed only through
   the adaptor; freed below it, the library cannot tell. */
RMMDEF bool rmm_resource_is_equal(const rmm_resource *a, const rmm_resource *b);
/* The vtable's type_name ("pool", "cuda", ...); "null" for NULL. */
RMMDEF const char *rmm_resource_type_name(const rmm_resource *mr);
/* The resource mr allocates from: an adaptor's or sub-allocator's upstream; NULL for a base
   resource (cuda, managed, pinned, async), a callback or user-defined resource, and for NULL. A
   binning resource answers its upstream (its bins are reached through rmm_resource_dump_json). O(1). */
RMMDEF rmm_resource *rmm_resource_get_upstream(const rmm_resource *mr);
/* Lets the walks over a resource graph (rmm_resource_dump_json, rmm_resource_check_corruption,
   rmm_resource_get_upstream and the cycle check they share; rmm_resource_validate walks none) see
   through your own resource type: get_upstream(mr) returns the resource an instance allocates from
   (NULL: none). Unregistered user resources end every walk. rmm_resource_allocation_base does not
   look through them (where a block of yours comes from is yours to say). Register each vtable once,
   before the walks meet it; registering it again replaces its function. At most 16 types: beyond
   that OUT_OF_MEMORY. INVALID_ARGUMENT for a NULL argument or a vtable of the library's own.
   get_upstream may be called with the library's graph lock held (rmm_resource_destroy and
   rmm_resource_awaits_capture while captures are registered): it must only read, never call
   rmm.h. Thread-safe. */
RMMDEF rmm_status rmm_resource_register_type(const rmm_resource_vtable *vtable, rmm_resource *(*get_upstream)(const rmm_resource *mr));
/* Checks every invariant of a library sub-allocator (pool, fixed-size, binning and its bins, arena)
   and returns CORRUPTION with a message naming the first one broken; SUCCESS for resources that keep
   no state to check (base resources, adaptors, user resources). It checks mr itself (a binning
   resource with its bins), not what lies under it: validate each sub-allocator of a chain. A
   validate that finds a list longer than its count (a cycle) says so and ends. O(number of blocks), and
   O(log chunks) more for each free block of a fixed-size resource. Takes the
   resource's locks: not for use while another thread is mid-call on a resource without them.
   INVALID_ARGUMENT iff mr is NULL (unlike the dump and the corruption check, NULL is not the
   current device resource here: validate names what it checks). */
RMMDEF rmm_status rmm_resource_validate(rmm_resource *mr);
/* For CUDA IPC of sub-allocated memory: the start of the device allocation that holds `ptr` (a
   pointer mr handed out), which is what cudaIpcGetMemHandle must be given, and ptr's offset in it,
   so that another process opening that handle finds the block at its base + offset. Follows the
   chain down: a pool's upstream chunk, a fixed-size resource's chunk, the arena's one allocation,
   the bin of a binning resource (NOT_SUPPORTED for a block it cannot place when one of its bins
   is a user-defined resource and nothing below its upstream holds the block), an adaptor's upstream, the raw block behind an over-aligned one,
   down to the cudaMalloc-family resource at the bottom (for which it is ptr itself, offset 0). A
   block a graph pool served (an allocation on a registered stream, >>graph) is followed through
   the graph pool's chunk and its upstream, whatever mr is.
   mr NULL: the current device resource. Fails with INVALID_ARGUMENT iff ptr, base or offset is
   NULL or ptr is not a live block of a sub-allocator on the way (nothing changes but the outputs:
   on every failure with base and offset not NULL, *base is NULL and *offset 0);
   NOT_SUPPORTED for a pool with VIRTUAL growth (its blocks lie on pages mapped in extents of a
   few pages each, which cudaIpcGetMemHandle cannot export) and for user-defined resources, which cannot say where their
   memory comes from. Async resources give the pointer itself: export their memory through the
   memory pool (cudaMemPoolExportPointer). Chains of any depth are followed; a graph with a cycle
   (a binning resource made its own bin, through layers) fails with INVALID_ARGUMENT after
   RMM_MAX_RESOURCE_STEPS layers; NOT_SUPPORTED too when called from inside a sub-allocator on the
   way (a user resource below it, holding its lock). Thread-safe; O(1) per layer (fixed-size:
   O(log chunks)), with each sub-allocator's lock (the arena: the owning arena's, or its global
   lock for a large block). */
RMMDEF rmm_status rmm_resource_allocation_base(rmm_resource *mr, const void *ptr, void **base, size_t *offset);
/* Writes the state of mr (NULL: the current device resource) and of everything under it as one
   JSON document, for people and tools (tools/rmm_plot.py draws it). Schema "rmm.h resource dump",
   version RMM_DUMP_JSON_VERSION; fields are only ever added within a version:
     {"schema": "rmm.h resource dump", "version": 1, "rmm_version": "0.1.0", "backend": "cuda"|"host",
      "resource": NODE}
     NODE = {"type": "pool" | "fixed_size" | "binning" | "arena" | "cuda" | "managed" | "pinned_host" |
                     "async" | "async_view" | "async_managed" | "async_pinned" |
                     "logging" | "statistics" | "tracking" | "limiting" |
                     "failure_callback" | "aligned" | "thread_safe" | "prefetch" | "callback" | "user",
             "name": vtable type_name, "address": "0x...",
             "config": {...}, "counters": {...},              (per type; see the dump itself)
             "streams": [{"id", "handle", "kind": "legacy"|"per_thread"|"library"|"outlive"|"foreign",
                          "alive", "lazy", "free_blocks", "free_bytes"}],       (pool, fixed_size, arena)
             "chunks": [{"address", "size", ["dedicated": true,]
                         "blocks": [{"offset", "size", "state": "used"|"free",
                                     "stream": id of the stream whose lists hold a free block, or null}]}],
             "bins": [{"bytes", "owned", "resource": NODE | null}],           (binning)
             "upstream": NODE | null}
   An arena lists its whole allocation as its first chunk (lent superblocks and large blocks "used",
   free space with the stream id one past its arenas), then each lent superblock with its blocks.
   Chains of any depth are written. Fails with INVALID_ARGUMENT iff out is NULL, or the graph has a
   cycle or binning resources nested as bins deeper than RMM_MAX_BIN_NESTING (both found before
   anything is written: a dump is a whole document or nothing); IO iff writing fails, OUT_OF_MEMORY
   iff host memory runs out (the document is then cut short, but still closed); NOT_SUPPORTED when
   called from inside a sub-allocator's own upstream (its lock held: that node is written with its
   type, name and address only, and the document closed). Each sub-allocator's lock is held while its part is
   written: thread-safe, O(blocks), and other threads wait that long. */
#define RMM_DUMP_JSON_VERSION 1
RMMDEF rmm_status rmm_resource_dump_json(rmm_resource *mr, FILE *out);
/* The most resources rmm_resource_dump_json, rmm_resource_allocation_base and
   rmm_resource_check_corruption visit in one call (a cycle's guard; chains far deeper than any real
   one are fine), and the most binning resources nested as bins of one another that the dump and
   the corruption check descend into (they recurse there; an upstream chain they walk in a loop). */
#define RMM_MAX_RESOURCE_STEPS 1048576
#define RMM_MAX_BIN_NESTING 64
/* With RMM_DEBUG_MARGIN: checks the margin after every live block of mr (NULL: the current device
   resource) and of every sub-allocator under it, after a synchronize of every device in use (the
   resources may be any device's; each is made current in turn). CORRUPTION naming the
   first block written past its end and the first byte overwritten; SUCCESS if none. Without
   RMM_DEBUG_MARGIN: NOT_SUPPORTED. O(live blocks) device-to-host copies: for debugging. Safe
   beside other threads' allocations, frees and trims: while any check runs in the process, no
   pool gives back memory a block may lie in (the check reads margins with no lock held, and a
   block freed meanwhile must stay where it was; a virtual pool's spare pages, mapped nowhere,
   still go). So meanwhile an on-demand pool keeps its wholly free chunks and grows instead, a
   virtual pool keeps its idle pages mapped, rmm_pool_trim gives back nothing but spare pages, and
   an allocation that only giving memory back would have served (at the pool's maximum, or on a
   full device) fails with OUT_OF_MEMORY, its message saying a check was running (until 2026-11-30
   a check beside such calls could read memory that was gone: on the host backend freed memory, on
   a device a failed copy or a fault). Destroying a resource that a running check walks is the
   caller's error. A block is
   listed only once its margin is filled, and a margin found written is reported only if the same
   allocation of that block is still listed after the read (a block freed and its memory handed
   out again between the listing and the read, then written by its new owner, is not reported;
   each such confirmation lists the resource's live blocks once more). */
RMMDEF rmm_status rmm_resource_check_corruption(rmm_resource *mr);

/* ======================================================================================= */
/* ==== base: device resources over the CUDA runtime ==================================== */
/* ======================================================================================= */ /* >>base */

/* cudaMalloc / cudaFree; the stream is ignored (cudaFree synchronizes the device). Alignments above
   256 are honoured by over-allocating; such a block must be freed, with its alignment, before its
   resource is destroyed: the record that finds the allocation behind it goes with the resource.
   Afterwards another resource refuses a free of it at its alignment (CORRUPTION), and one at the
   default alignment reaches cudaFree with the aligned address, which frees it only where that is
   the allocation's own start and else fails (CUDA): its memory may stay allocated for the life of
   the process (the same for the managed, pinned and async resources; red team 38a). Fails with
   INVALID_ARGUMENT iff out is NULL. */
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
   mr is not an async, async-view or async-managed resource or pool is NULL. */
RMMDEF rmm_status rmm_async_resource_get_pool(rmm_resource *mr, rmm_mem_pool *pool);
/* A non-owning resource over an existing pool. INVALID_ARGUMENT iff out or pool is NULL. */
RMMDEF rmm_status rmm_async_view_resource_create(rmm_resource **out, rmm_mem_pool pool);
/* Stream-ordered managed memory (RMM's experimental cuda_async_managed_memory_resource): the
   current device's default managed memory pool (cudaMemGetDefaultMemPool with
   cudaMemAllocationTypeManaged, CUDA 13), used with cudaMallocFromPoolAsync / cudaFreeAsync. The
   memory is accessible from the host and every device. The pool belongs to the driver: the
   resource never destroys it; where its release threshold is 0 it is raised to UINT64_MAX once (as
   RMM does), so freed memory stays pooled. Fails with INVALID_ARGUMENT iff out is NULL;
   NOT_SUPPORTED iff the runtime is older than CUDA 13 or the device lacks concurrent managed access
   (cudaDevAttrConcurrentManagedAccess 0; the message says which); CUDA otherwise. The host backend
   supports it (one simulated pool per device). rmm_async_resource_get_pool gives the pool. */
RMMDEF rmm_status rmm_async_managed_resource_create(rmm_resource **out);
/* Device-accessible pinned host memory (cudaHostAlloc(cudaHostAllocPortable|Mapped) / cudaFreeHost). */
RMMDEF rmm_status rmm_pinned_host_resource_create(rmm_resource **out);
/* A stream-ordered pool of pinned host memory: an owned cudaMemPool_t in host RAM
   (cudaMemLocationTypeHost; where the driver makes only NUMA-node pools, the current device's nearest
   host NUMA node), page-locked, read and written by the host and by every device, used with
   cudaMallocFromPoolAsync / cudaFreeAsync. Unlike rmm_pinned_host_resource_create, a freed block is
   reused in stream order without a cudaFreeHost (which synchronizes the device) or a new pinning.
   The host may touch a block once the work of its allocating stream up to the allocation is done
   (synchronize that stream first). desc NULL: defaults; initial_pool_bytes primes the pool,
   release_threshold_bytes 0 keeps all it grows to; export_handle must be RMM_EXPORT_NONE. Fails with
   INVALID_ARGUMENT iff out is NULL or export_handle is not RMM_EXPORT_NONE; NOT_SUPPORTED iff the
   device has no memory pools or the driver makes no pinned host pools (the message says which);
   OUT_OF_MEMORY iff priming fails; CUDA otherwise (nothing made). rmm_async_resource_get_pool gives
   the pool. The host backend supports it (its memory comes from the simulated capacity). */
RMMDEF rmm_status rmm_async_pinned_resource_create(rmm_resource **out, const rmm_async_desc *desc);

#if defined(RMM_BACKEND_HOST)
/* Host backend only: set the simulated device capacity (bytes) shared by all simulated devices. */
RMMDEF void rmm_host_backend_set_capacity(size_t bytes);
/* Host backend only, for tests of what a device without a capability does: sets the value every
   simulated device reports for `attribute` (a cudaDeviceAttr value the backend knows: those
   rmm_device_get_attribute documents; cudaDevAttrMemoryPoolsSupported 0 makes the async resources
   NOT_SUPPORTED, cudaDevAttrMemoryPoolSupportedHandleTypes the export handles they may take).
   INVALID_ARGUMENT iff the backend has no such attribute (nothing changed). Thread-safe; O(attributes). */
RMMDEF rmm_status rmm_host_backend_set_device_attribute(int attribute, int value);
/* Host backend only, for tests of error paths: makes `times` calls in a row of the simulated CUDA
   call named `call` fail with `status` (SUCCESS, or a value that is no rmm_status, means CUDA), the
   first being the nth call from now (1 or 0: the next). Names are the CUDA runtime's and driver's: "cudaMalloc", "cudaFree",
   "cudaMallocManaged", "cudaHostAlloc", "cudaFreeHost", "cudaMallocFromPoolAsync", "cudaFreeAsync",
   "cudaMemPoolCreate", "cudaMemPoolSetAccess", "cudaMemGetDefaultMemPool", "cudaEventCreateWithFlags", "cudaEventRecord", "cudaEventSynchronize",
   "cudaEventQuery", "cudaStreamWaitEvent", "cudaStreamCreateWithFlags", "cudaStreamDestroy",
   "cudaStreamSynchronize", "cudaStreamGetId", "cudaMemcpyAsync", "cudaMemsetAsync",
   "cudaMemPrefetchAsync", "cudaDeviceSynchronize", "cudaMemGetInfo", "cudaGetDevice", "cudaSetDevice",
   "cudaGetDeviceCount", "cuMemAddressReserve", "cuMemCreate", "cuMemMap", "cuMemSetAccess", "cuMemUnmap",
   "cudaThreadExchangeStreamCaptureMode". `call` may name several, separated by '|' (up to 159
   characters; names past that are ignored): the calls of any of them count, in the order made. One rule at a time for the whole
   process; call NULL or times 0 disarms. Thread-safe; one relaxed load per call while disarmed. */
RMMDEF void rmm_host_backend_fail_calls(const char *call, unsigned nth, unsigned times, rmm_status status);
/* Host backend only, for tests of stream order: a model of the device's queues. Without one, host
   work runs when it is enqueued, so every event is complete when recorded and no early hand-over
   can show. With one, the backend reports every event record, query, synchronize and destroy,
   every cudaStreamWaitEvent, stream and device synchronize (cudaFree's implicit one too), every
   copy, fill or prefetch enqueued and every unmap of VMM pages, and an event is complete only when
   the model's event_query says so (tests/test_stream_order.c keeps vector clocks and checks each
   allocation against the last use of its bytes). Streams are told apart by
   rmm_host_backend_stream_serial (unique in the process; handles are reused at once); the
   per-thread default stream is the calling thread's, as in CUDA, and synchronizes implicitly with
   the legacy one. The host backend's async resources (cudaMallocFromPoolAsync) are not reported.
   Every member must be set. Set it before any resource or stream is made and leave it set; NULL
   restores the default. */
typedef struct rmm_host_stream_model {
    void *user;
    void (*event_record)(void *user, const void *event, rmm_stream stream);
    bool (*event_query)(void *user, const void *event); /* complete? (true for an event never recorded) */
    void (*event_synchronize)(void *user, const void *event);
    void (*event_destroy)(void *user, const void *event);
    void (*stream_wait_event)(void *user, rmm_stream stream, const void *event);
    void (*stream_synchronize)(void *user, rmm_stream stream);
    void (*device_synchronize)(void *user);
    void (*stream_work)(void *user, rmm_stream stream); /* a copy, fill or prefetch enqueued on it */
    void (*unmap)(void *user, const void *va, size_t bytes);
} rmm_host_stream_model;
RMMDEF void rmm_host_backend_set_stream_model(const rmm_host_stream_model *model);
/* A number that names `stream` for the life of the process (what cuStreamGetId gives on a GPU for a
   stream made by cudaStreamCreate): the handle's value for the legacy (0, 1) and per-thread (2)
   default streams (the per-thread one is each calling thread's own stream: a model tells threads
   apart itself), else a serial from 16 that a stream made again at the same address does not
   share. 0 for a handle that is not a live stream. */
RMMDEF uint64_t rmm_host_backend_stream_serial(rmm_stream stream);
#endif

/* ======================================================================================= */
/* ==== pool, fixed-size, binning, arena: sub-allocators ================================= */
/* ======================================================================================= */ /* >>pool */

/* Devices and the stream-ordered sub-allocators (the pool, the fixed-size resource, binning's bins,
   the arena). Each belongs to the device current at its creation and is called with that device
   current, as RMM asks of every resource ("should only be used when the active CUDA device is the
   same device that was active when [it] was created"). API.md says more (the library makes a
   resource's device current around its own calls); that holds for the cudaMalloc-family resources
   and the containers, and for these the hot paths make no CUDA call at all, so they cannot: the
   default stream's handles (RMM_STREAM_DEFAULT, RMM_STREAM_PER_THREAD) name the current device's
   stream, one state of the resource serves each of them, and memory freed there with one device
   current would go at once, unordered, to work on another device's. RMM_DEBUG builds check the
   device at every allocate and free of these and refuse a call from another with INVALID_ARGUMENT
   (nothing done); release builds do not look (red team 45). rmm_pool_trim, a rare call, makes the
   pool's device current for itself (until red team 47 it was refused in debug builds and made its
   device synchronize on the caller's device in release builds). A device buffer,
   uvector or scalar makes its device current while it allocates or frees, so it may be released
   with any device current. Destroying a resource may be done with any device current: a
   sub-allocator's destroy, a graph pool's return of its memory and a library stream's destroy
   make their device current for their waits, synchronizes and frees (review 45: they waited on
   the caller's device's streams). */

typedef enum rmm_pool_growth {
    RMM_POOL_GROWTH_GEOMETRIC = 0, /* RMM's rule: doubles without a maximum, approaches the maximum
                                      geometrically with one, halves the step when upstream fails */
    RMM_POOL_GROWTH_ON_DEMAND = 1, /* grows by the request rounded up to growth_granularity_bytes; when
                                      growing would raise the pool above its peak, first gives wholly
                                      free chunks of the allocating stream back: holds little beyond
                                      what is live at its peak. Requests of 8 MiB and more get chunks
                                      of their own, reused only by requests they fit closely, so that
                                      no smaller block pins a big chunk, until the pool is at its
                                      peak: then any free block that fits serves before the pool goes
                                      upstream, so a steady loop stops calling cudaMalloc and
                                      cudaFree after its first steps */
    RMM_POOL_GROWTH_VIRTUAL = 2    /* reserves one virtual address range (virtual_bytes) and backs it
                                      with physical pages (2 MiB; in extents of up to two by default,
                                      virtual_extent_bytes) only where blocks are live, through
                                      CUDA's virtual memory API; an extent with no live block is moved
                                      to where it is needed when the pool would otherwise pass its peak.
                                      One range, so no chunk boundaries: the least memory held beyond
                                      what is live. Backing pages is its growth: as a pool of chunks
                                      does before it grows, it first takes other streams' free memory
                                      that lies on mapped pages: gone streams' with no wait, a live
                                      stream's (behind an event wait, never a host wait) where it
                                      would otherwise move idle pages. The upstream is not used
                                      (may be NULL).
                                      NOT_SUPPORTED where the device lacks virtual memory management. */
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
    size_t virtual_bytes;            /* VIRTUAL growth: the address range reserved (a multiple of 256,
                                        rounded up to the page); default 0: twice the device's memory
                                        (at most the most whole pages a size_t holds).
                                        maximum_bytes then caps the physical bytes (0, or at least a
                                        page: else INVALID_ARGUMENT). */
    size_t virtual_extent_bytes;     /* VIRTUAL growth: new physical memory comes in extents of up to
                                        this many bytes (rounded up to the 2 MiB page), one driver
                                        allocation and mapping each; default 0: two pages (4 MiB; one
                                        page: 2 MiB). An extent is given back only whole, so larger
                                        ones make fewer driver calls and hold more (README's extent
                                        sweep, an H200, 2026-11-28: on the training replays and
                                        bert_encode 1.2-1.9 us per event with 128 MiB at 1.014-1.37x
                                        the peak live bytes, 4.4-23 us with the default at
                                        1.012-1.025x, 4.5-29 us with pages at 1.012-1.026x).
                                        Multiple of 256; at most 4 GiB. */
} rmm_pool_desc;
typedef struct rmm_pool_info {
    size_t pool_bytes;         /* bytes held from upstream (VIRTUAL growth: physical bytes mapped) */
    size_t peak_pool_bytes;    /* the most ever held (VIRTUAL growth: the most ever mapped) */
    size_t used_bytes;         /* handed out, rounded to 256 */
    size_t free_bytes;         /* pool_bytes - used_bytes */
    size_t largest_free_block; /* bytes (VIRTUAL growth: of free address space) */
    size_t free_blocks;
    size_t upstream_chunks;    /* VIRTUAL growth: 0 */
    size_t stream_states;      /* streams the pool keeps free lists for (bounded: see rmm_pool_create) */
} rmm_pool_info;
/* Default configuration: initial_bytes 0, maximum_bytes 0 (unbounded), GEOMETRIC growth,
   growth_granularity_bytes 2 MiB, streams_outlive_pool false. */
RMMDEF rmm_pool_desc rmm_pool_desc_default(void);
/* A pool configuration from a string, in the spirit of PYTORCH_CUDA_ALLOC_CONF: key:value pairs
   separated by commas, whitespace (spaces, tabs, line breaks) around either ignored, applied over
   what *desc holds (keys not named keep their values; a key named twice: the last wins). The keys,
   one per rmm_pool_desc field:

      initial:SIZE            initial_bytes          growth:geometric|on_demand|virtual
      maximum:SIZE|none       maximum_bytes          granularity:SIZE  growth_granularity_bytes
      virtual:SIZE            virtual_bytes          streams_outlive:true|false
      extent:SIZE             virtual_extent_bytes

   SIZE is a whole number with an optional unit: B, KiB, MiB, GiB, TiB (K, M, G, T and KB, MB, GB,
   TB mean the same binary units, as PyTorch's configuration reads "mb"), case-insensitive, and a
   multiple of 256 bytes. Example: "initial:1GiB, maximum:8GiB, growth:on_demand". Fails with
   INVALID_ARGUMENT iff desc or conf is NULL, or a pair has an unknown key, a missing or bad value,
   a size that is not a multiple of 256, or an extent past 4 GiB (the message names the pair);
   *desc is then unchanged.
   An empty string changes nothing. The cross-field rules (initial <= maximum, ...) are
   rmm_pool_create's. O(length); thread-safe. */
RMMDEF rmm_status rmm_pool_desc_parse(rmm_pool_desc *desc, const char *conf);
/* rmm_pool_desc_parse of the environment variable RMM_ALLOC_CONF, if it is set (else *desc is
   unchanged and the call succeeds). Its failures name the variable. rmmInitialize's pool mode and
   rmmh's reinitialize(pool_allocator=True) apply it over their own arguments. */
RMMDEF rmm_status rmm_pool_desc_from_env(rmm_pool_desc *desc);
/* Changes a live pool's maximum_bytes (0: unbounded), as PyTorch's memory fraction does: from the
   next growth on, the pool grows only within it. Memory the pool holds beyond a lower maximum
   stays held until the pool needs to grow (an ON_DEMAND pool then gives wholly free chunks back
   to make room under it; rmm_pool_trim gives them back at once). Fails with INVALID_ARGUMENT iff pool is
   not a pool, the maximum is not a multiple of 256, or a VIRTUAL pool's maximum is below one page
   (it could back no block), NOT_SUPPORTED under RMM_NO_POOL or when called from inside the pool's
   own upstream (a callback or user resource below it, while the pool's lock is held).
   Thread-safe (takes the pool's lock). */
RMMDEF rmm_status rmm_pool_set_maximum(rmm_resource *pool, size_t maximum_bytes);
/* A coalescing, stream-ordered pool over `upstream` (not owned: destroy the pool first). desc NULL:
   the defaults. initial_bytes are taken from upstream now. Fails with INVALID_ARGUMENT iff out or
   upstream is NULL (allowed with VIRTUAL growth, which does not use it), a size is not a multiple of
   256 (virtual_bytes and virtual_extent_bytes too, in every growth mode), virtual_extent_bytes is
   above 4 GiB (every mode), initial_bytes > maximum_bytes, initial_bytes is set with VIRTUAL
   growth, a VIRTUAL pool's maximum_bytes is below one page or its virtual_bytes too large to round
   up to a page, or growth is not an rmm_pool_growth; with the upstream's status iff the initial
   allocation fails; with NOT_SUPPORTED
   iff VIRTUAL growth is asked of a device or driver without virtual memory management (the message
   says which), or CUDA/OUT_OF_MEMORY iff the address range cannot be reserved.

   Allocation: a block of the same size freed last on this stream (up to 1 MiB) or parked there (up
   to 64 KiB; at most 32 MiB and 1/16 of the pool per stream, free memory not yet coalesced, which
   the pool files whenever it looks further, so it never causes growth or a failure), then the
   stream's own free lists (no CUDA call), then a block freed on another stream behind a
   cudaStreamWaitEvent (never a host synchronization; a stream that has freed before takes 32 MiB
   of that block, or the request if larger, into its own lists, so that its next requests are
   served there), then other streams' lists merged into this one, then growth (from upstream on the
   stream at hand; over a stream-ordered upstream, such as another pool, whose memory is ordered
   after that stream's work only, the stream then records an event, or for a created or default
   stream marks that one is due, so other streams take it behind that event; a record that fails
   gives the memory back and fails the allocation with its status; none over a cudaMalloc, managed
   or pinned resource). Only streams that hold free memory are looked at, so a new stream's first
   allocation costs the same with 10 or 100,000 live streams. Best fit to within 1/32 of a power of two, O(1): two bitmaps over size bins and
   a scan of at most 16 blocks of the request's bin. Blocks never coalesce across upstream chunks.
   Every power-of-two alignment is honoured. Fails with OUT_OF_MEMORY (message: request, pool size,
   maximum) iff the maximum or the upstream is exhausted; the pool is unchanged then, except that
   ON_DEMAND and VIRTUAL growth may have given idle memory back first to make room, when the
   upstream or the device then refused (a request the maximum refuses gives nothing back), and that
   VIRTUAL growth keeps pages the driver would not unmap while it undid a failed page-in (idle,
   used again later, given back by a trim or the destroy; a page whose access could not be set
   either gets it before a block there is handed out). VIRTUAL growth
   maps pages as a block needs them (driver calls, and a device synchronize when it moves idle
   pages): far slower when it does, and never otherwise.
   Free: O(1) (an address hash and neighbour links); CORRUPTION iff the pointer was not handed out
   by this pool or is freed twice, or the size rounds up to another multiple of 256 than the
   allocated one did (the block stays allocated). A free on the legacy default stream, on a
   stream from rmm_stream_create or a stream pool (the library sees them destroyed), or on any stream when streams_outlive_pool is set, makes
   no CUDA call. Other ("foreign") streams are told apart by their id (cuStreamGetId), not by handle (a
   destroyed stream's handle is often reused at once): asked per allocation that cannot be served
   without it (below), and per free only when an event is due. Their first 256 frees record an
   event each (RMM's rule: a stream may be destroyed right after; counted across the stream's
   states, which go when emptied); then their frees park in a ring
   of up to 256 blocks (32 of them above 64 KiB, none with VIRTUAL growth; 1/16 of the pool in
   bytes, of its mapped pages with VIRTUAL growth), and one event covers
   the ring when it is full, or when the stream's own lists cannot serve it (a ring of fewer than
   128 blocks, all of 64 KiB or less, only before the pool would grow): only then may other streams
   take those blocks, behind that event. Blocks above 64 KiB the stream takes back from its ring at
   once; smaller ones wait there for the event and then join the stream's lists, from which an
   allocation of their size takes them with no id asked once that event is seen complete (a
   cuEventQuery, asked again after 16 tries while it is not, then after 32, 64, ... up to 256), up
   to 64 allocations per id asked:
   whichever stream the handle names by then may have memory whose last use is over. A ring left by a stream that is
   gone is handed on after a device synchronize: when the pool sweeps its stream states, runs out
   of memory, is trimmed or destroyed (the synchronize holds the pool's lock). Per-thread default
   streams work the same way. Each stream the pool has seen costs about 700 bytes of host memory while it holds no free
   block; the first block freed on it adds its free-list tables (16 KiB; 30 KiB with ON_DEMAND
   growth), which go again when another stream merges its memory away or at rmm_pool_trim. A free
   fails with OUT_OF_MEMORY (the block stays allocated) iff those tables cannot be made. States of
   destroyed and foreign streams are dropped as described in >>streamorder. Thread-safe: one lock
   per pool. */
RMMDEF rmm_status rmm_pool_create(rmm_resource **out, rmm_resource *upstream, const rmm_pool_desc *desc);
/* Fills *info. Fails with INVALID_ARGUMENT iff info is NULL or pool is not a pool, NOT_SUPPORTED
   when called from inside the pool's own upstream (its lock held: an out-of-memory handler below
   the pool cannot look into it, nor trim it). O(streams + parked blocks): the blocks parked in
   the streams' quick lists and recent slots are filed into the free lists first (the figures count
   them coalesced), as any walk over the pool does, so the next allocations of those sizes search
   the lists. */
RMMDEF rmm_status rmm_pool_get_info(rmm_resource *pool, rmm_pool_info *info);
/* Gives every wholly free upstream chunk back (the first one too), after waiting on the host for
   the work of the streams that freed into it, and the free-list tables of streams left holding no
   free block; when that wait worked, the states of streams destroyed since (and of foreign
   streams) whose work is known done go too, their free memory to the default stream's lists (a
   state it may make), as a sweep would when their number doubles. *released_bytes (may be NULL)
   says how much. Fails with INVALID_ARGUMENT iff pool is not a pool; NOT_SUPPORTED from inside the pool's own upstream
   (its lock held: nothing is given back); with the upstream's or CUDA's status if a wait or a
   free fails (what was released so far stays released; the chunks a failed wait was to cover stay
   too), or CUDA's if the pool's device cannot be made current (nothing done: it is made current
   for the call, and the caller's restored). O(blocks). Thread-safe. With RMM_DEBUG_MARGIN, while
   an rmm_resource_check_corruption runs in any thread, a trim gives back nothing but a virtual pool's spare pages (*released_bytes
   says so; trim again after the check). */
RMMDEF rmm_status rmm_pool_trim(rmm_resource *pool, size_t *released_bytes);
/* Checks every invariant (contiguity, coalescing, bins and bitmaps, the address map, accounting).
   CORRUPTION with a message naming the first broken one; INVALID_ARGUMENT iff not a pool;
   NOT_SUPPORTED from inside the pool's own upstream; OUT_OF_MEMORY iff host memory for the check
   runs out (a count per page with VIRTUAL growth). O(blocks). RMM_DEBUG builds run it after every
   allocate and free (and stop the program on CORRUPTION only). */
RMMDEF rmm_status rmm_pool_validate(rmm_resource *pool);

/* >>fixed */
typedef struct rmm_fixed_size_desc {
    size_t block_bytes;           /* default 1 MiB; rounded up to 256 */
    size_t blocks_to_preallocate; /* default 128; also the blocks per later upstream chunk */
} rmm_fixed_size_desc;
RMMDEF rmm_fixed_size_desc rmm_fixed_size_desc_default(void);
/* Blocks of one size, stream-ordered like the pool (per-stream LIFO lists, events, stealing; on a
   foreign stream, after 256 frees, one event per 32 to 256 frees (1/16 of the resource's blocks):
   the top of its free stack is its own until then, as the pool's ring: see rmm_pool_create; the
   stream's id is asked per allocation).
   block_bytes * blocks_to_preallocate are taken from upstream now and again each time the blocks
   run out (on the stream at hand; over a stream-ordered upstream, such as a pool, whose memory is
   ordered after that stream's work only, the stream then records an event, so other streams take
   it behind that event; a record that fails gives the chunk back and fails the allocation with its
   status). Allocate and free are O(1). Requests above block_bytes fail with OUT_OF_MEMORY;
   alignments must divide the block size and the block's address (INVALID_ARGUMENT otherwise; a
   chunk taken from upstream for the request whose base is aligned to less goes back at once).
   A free of a pointer that is not a block of this resource, or of a block that is free already
   (a double free: every build, from the chunk's bitmap), is CORRUPTION (O(log chunks)). A free
   fails with OUT_OF_MEMORY, the block staying allocated (free it again), iff host memory for the
   freeing stream's state or its block list runs out (a stream's first free, or its list's
   growth); so do binning's frees to its own bins. Fails at
   creation with INVALID_ARGUMENT iff out or upstream is NULL or the sizes overflow, with
   OUT_OF_MEMORY iff host memory for the block lists runs out, CUDA iff the current device cannot
   be read, and with the upstream's status iff the first chunk cannot be had. */
RMMDEF rmm_status rmm_fixed_size_create(rmm_resource **out, rmm_resource *upstream, const rmm_fixed_size_desc *desc);

/* >>binning */
typedef struct rmm_binning_desc {
    int min_size_exponent; /* bins 2^min .. 2^max bytes; both 0: no automatic bins */
    int max_size_exponent;
} rmm_binning_desc;
RMMDEF rmm_binning_desc rmm_binning_desc_default(void);
/* Routes each request to the smallest bin that holds it (O(log bins)); larger requests, and
   alignments above 256, go to upstream. Frees are routed the same way by size, so the size must
   be exact: a block of one of the bins freed with a size that routes it upstream is CORRUPTION,
   in every build, for the library's own bins and for a user's bin that is a pool, a fixed-size
   resource, an arena or a binning resource, or one under at most 16 adaptors, unless this
   resource's upstream reaches it too
   (O(bins x (layers + log chunks)), on frees routed upstream only); a size that routes it to
   another bin is that bin's to refuse. A bin
   made lazily whose upstream allocates from this binning resource again works for other sizes;
   for the same size it is NOT_SUPPORTED. The exponent range makes one fixed-size bin per power of two (2^min .. 2^max bytes,
   at least 256), made lazily at a bin's first use and grown in chunks of about 2 MiB (RMM takes
   about 1 GiB up front). Fails with INVALID_ARGUMENT iff out or upstream is NULL or the exponents
   are not 0 <= min <= max <= 40 (both 0: no automatic bins). Thread-safe. */
RMMDEF rmm_status rmm_binning_create(rmm_resource **out, rmm_resource *upstream, const rmm_binning_desc *desc);
/* Adds a bin for requests up to allocation_bytes (rounded up to 256), served by bin_resource (any
   resource, not owned) or, if NULL, by a lazily made fixed-size resource. A size that has a bin
   already gets the new one instead (RMM's rule; the old bin, if the binning resource made it, is
   destroyed). Only before the first allocation made (a failed one does not count): afterwards every
   call fails with INVALID_ARGUMENT. INVALID_ARGUMENT also for a non-binning resource, 0 bytes or a
   size that does not round up to a multiple of 256 (SIZE_MAX; for a bin made here, with
   RMM_DEBUG_MARGIN, one past SIZE_MAX less the margin), and when bin_resource is the binning
   resource or reaches it through upstreams and bins (a cycle: a request of the bin's size would
   come back to the bin, without end unless something on the way serves it first, which this check
   does not try to tell), or its graph has a cycle or more than RMM_MAX_RESOURCE_STEPS layers;
   OUT_OF_MEMORY iff host memory for the bin table runs out. Not thread-safe: not concurrently with
   anything on this resource, an allocation in flight included. O(resources below bin_resource). */
RMMDEF rmm_status rmm_binning_add_bin(rmm_resource *binning, size_t allocation_bytes, rmm_resource *bin_resource);

/* >>arena */
typedef struct rmm_arena_desc {
    size_t arena_bytes;        /* default 0: half of the free device memory, aligned down to 256 */
    size_t superblock_bytes;   /* default 1 MiB (0 means the same). Multiple of 256. */
    bool streams_outlive_arena; /* default false. true promises that no stream used with the arena is
                                   destroyed before it: per-stream arenas are then found by handle,
                                   without asking the stream's id (cuStreamGetId: about 17 ns on an
                                   H100, 108 ns when 16 threads ask at once) on every allocate and
                                   free of a stream the library did not make. */
} rmm_arena_desc;
RMMDEF rmm_arena_desc rmm_arena_desc_default(void);
/* For many threads and streams: arena_bytes (rounded down to whole superblocks) are taken from
   upstream at once and never grow. Each thread (for the default and per-thread streams) and each
   other stream gets its own arena with its own lock; superblocks move from the global arena under
   one global lock only when an arena runs out, so the fast path takes no shared lock (each thread
   finds its arenas in a cache of four; a stream the library did not make is told apart there by
   its id, asked per allocation unless memory known done serves it: such a stream's frees wait in
   batches of up to 256 blocks, out of its lists, until one event on the stream covers a batch,
   and once that event is seen complete an allocation takes from its lists with no id asked, at
   least one id per 64 allocations; one that asked the id takes the stream's last pending block
   whole when its size fits, and when its lists fall short files the batch, recording the event
   first if its last record is seen complete: at most an event record per such miss). Requests
   above a superblock come from the global arena in whole superblocks. A free from another thread
   or stream, and every free of a large block, synchronizes the freeing stream on the host first
   (those blocks are reused with no event, as in RMM). On exhaustion it synchronizes the device,
   returns every wholly free superblock to the global arena and retries once; then OUT_OF_MEMORY
   (if that synchronize fails: its status, and those superblocks stay out of every arena until a
   later one succeeds).
   A free of a pointer it did not hand out is CORRUPTION; a free fails with OUT_OF_MEMORY, the
   block staying allocated (free it again), iff host memory for the freeing stream's arena state
   runs out (a stream's first use). O(1) allocate and free. Creation takes
   the arena on the legacy default stream and, unless upstream is a cudaMalloc, managed or pinned
   resource, synchronizes that stream once (memory from a stream-ordered upstream, such as a pool,
   is ordered after its work only, and the arena hands it to any stream). Fails at
   creation with INVALID_ARGUMENT iff out or upstream is NULL, superblock_bytes is not a multiple
   of 256 or the arena holds no superblock; OUT_OF_MEMORY iff host memory runs out; CUDA iff
   arena_bytes is 0 and the device's free memory cannot be read, or that synchronize fails (the
   memory goes back); with the upstream's status iff the arena cannot be had. */
RMMDEF rmm_status rmm_arena_create(rmm_resource **out, rmm_resource *upstream, const rmm_arena_desc *desc);

/* ======================================================================================= */
/* ==== adaptors ======================================================================== */
/* ======================================================================================= */ /* >>adaptors */

/* Adaptors wrap any resource (not owned: destroy the adaptor first), pass every call through and
   are thread-safe. Each create fails with INVALID_ARGUMENT iff out or upstream is NULL, and with
   OUT_OF_MEMORY iff host memory runs out; other failures are listed with each. */

/* Writes one CSV row per event, as RMM's logging_resource_adaptor does, so RMM's replay benchmark
   and bench/replay read it (RMM's only while no allocation or free failed: its parser refuses any
   action but allocate, free and allocate failure, and so a "free failure" row, below, and reads the
   pointer as a hex number, which an "allocate failure" row's "(nil)" is not; RMM 26.10 writes that
   row with glibc's %p too, so its own logs stop its parser there; bench/replay and
   tools/rmm_plot.py read both): header "Thread,Time,Action,Pointer,Size,Stream"; Thread the
   OS thread id; Time HH:MM:SS.uuuuuu local time; Action allocate | free | allocate failure | free failure; Pointer
   as %p (0x... or (nil)); Size the requested bytes; Stream the handle as RMM writes it (0x and
   hex; 0 for the default stream). path NULL or "": $RMM_LOG_FILE (unset or empty too:
   INVALID_ARGUMENT); a file that cannot be opened is IO. An existing file is truncated.
   Buffered (stdio) unless auto_flush, which flushes every row. A failed allocation writes its
   "allocate failure" row and returns the upstream's status; a free writes its row before the
   upstream's call (once freed, the address may be logged by another thread's allocation), and a
   "free failure" row after it if that failed (the block stays live; RMM has no such row: its
   frees cannot fail). Cost: one formatted row under a mutex.
   Compiled out by RMM_NO_LOGGING (NOT_SUPPORTED). */
RMMDEF rmm_status rmm_logging_adaptor_create(rmm_resource **out, rmm_resource *upstream, const char *path, bool auto_flush);
/* The same to an open FILE (not closed by the adaptor; NULL is INVALID_ARGUMENT). Writes the header. */
RMMDEF rmm_status rmm_logging_adaptor_create_file(rmm_resource **out, rmm_resource *upstream, FILE *file, bool auto_flush);
/* Flushes the log; IO iff writing failed (this flush, or a row's write since the adaptor was made:
   a FILE handed in with its error flag set already is not the adaptor's failure), INVALID_ARGUMENT
   iff mr is not a logging adaptor. */
RMMDEF rmm_status rmm_logging_adaptor_flush(rmm_resource *mr);

typedef struct rmm_counter {
    int64_t value, peak, total;
} rmm_counter;
typedef struct rmm_statistics {
    rmm_counter bytes, count;
} rmm_statistics;
/* Counts requested bytes and allocations (current value, peak, total) with atomics: no lock on
   allocate or free, but while a pop folds a scope an update that comes then waits for the pop,
   which waits for the updates already counting in the two scopes. Counted after a successful
   upstream allocation and uncounted after a successful upstream free (a failed or refused free
   changes nothing); frees count against the innermost scope, as in RMM. A request past INT64_MAX bytes counts as INT64_MAX, and a total stays at
   INT64_MAX once it gets there (a read racing the add that passes it may see it negative). */
RMMDEF rmm_status rmm_statistics_adaptor_create(rmm_resource **out, rmm_resource *upstream);
/* The innermost scope's counters, read under the lock push and pop take (a push running beside it
   zeroed the scope being read: a red team's find). Each counter is read with atomic loads while
   allocations count on: a peak below its value, or a total below its peak (updates between their
   adds), reads as the value (the peak), which the updates in flight reach.
   INVALID_ARGUMENT iff out is NULL or mr is not a statistics adaptor. */
RMMDEF rmm_status rmm_statistics_get(rmm_resource *mr, rmm_statistics *out);
/* Starts a nested scope with zeroed counters: at most 16,383 deep (RMM's stack has no limit), else
   INVALID_ARGUMENT; OUT_OF_MEMORY iff host memory for a block of 64 more scopes runs out (a push
   makes one at each 64th level first reached; they are kept until the adaptor goes). */
RMMDEF rmm_status rmm_statistics_push(rmm_resource *mr);
/* Ends the innermost scope, returns its counters in *popped (may be NULL) and folds them outward as
   RMM does: peak = max(peak, value + inner.peak), value += inner.value, total += inner.total.
   Popping the outermost scope is INVALID_ARGUMENT. An allocation or free in flight on another
   thread during a push or pop counts in exactly one scope, the inner or the outer: pop waits (it
   yields) for updates already inside the popped scope to finish, and updates that come meanwhile
   wait for the fold, so that no peak ever counts a value that was not outstanding (until
   2026-11-29 they counted in the outer scope before the fold, whose value then lacked the popped
   scope's: with frees of outer blocks in the popped scope, peaks above anything outstanding; a red
   team's find). */
RMMDEF rmm_status rmm_statistics_pop(rmm_resource *mr, rmm_statistics *popped);

/* Keeps every outstanding allocation (address, requested size, stream, and with capture_stacks a
   backtrace() of up to 32 frames, glibc only) in an address map under a mutex. A free of a pointer
   it never handed out returns CORRUPTION and is not passed upstream; a free with a different size
   frees the recorded size and logs an error. An address upstream hands out while a record holds
   it replaces that record, with a warning in the debug log: its block was freed below the
   adaptor, through the upstream (or the upstream is broken), as RMM's adaptor does (until
   2026-11-30 the allocation failed with CORRUPTION and the record stayed, failing every later
   allocation there). Destroyed with allocations outstanding, it logs a
   warning with their count and bytes (the debug log: RMM_DEBUG_LOG_FILE). Cost: a map insert or
   removal (plus the backtrace). */
RMMDEF rmm_status rmm_tracking_adaptor_create(rmm_resource **out, rmm_resource *upstream, bool capture_stacks);
/* Outstanding requested bytes and allocations (either pointer may be NULL). INVALID_ARGUMENT iff
   mr is NULL or not a tracking adaptor. O(1), with the adaptor's lock held. */
RMMDEF rmm_status rmm_tracking_get(rmm_resource *mr, size_t *outstanding_bytes, size_t *outstanding_count);
/* Writes "Outstanding allocations: N (B bytes)", then one line per outstanding allocation ("<ptr>: <size> B, stream <hex>") and its symbolized
   stack when captured. INVALID_ARGUMENT iff out is NULL or mr is not a tracking adaptor; IO iff the
   write fails. O(the most allocations ever outstanding at once: the record map does not shrink;
   red team 29: it said O(outstanding)), with the adaptor's lock held. */
RMMDEF rmm_status rmm_tracking_report(rmm_resource *mr, FILE *out);

/* Caps the bytes outstanding, counted rounded up to 256 (a compare-and-swap loop reserves only what
   fits: the count never passes the limit, even for a moment); reaching exactly the
   limit is allowed. Over it: OUT_OF_MEMORY naming the limit and the request, without calling
   upstream. The request is counted before upstream is asked, so that threads at once cannot pass
   the limit together (RMM's rule), and an upstream failure takes it back: while a request that
   will fail is under way, another may be refused. Allocations made before it are not counted; a
   free counts down at most what is outstanding (a wrong size or such a block takes the count to
   0, never round). */
RMMDEF rmm_status rmm_limiting_adaptor_create(rmm_resource **out, rmm_resource *upstream, size_t limit_bytes);
/* The bytes counted outstanding (rounded up to 256 each) and the limit (either pointer may be NULL).
   INVALID_ARGUMENT iff mr is NULL or not a limiting adaptor. Thread-safe; O(1), no lock. */
RMMDEF rmm_status rmm_limiting_get(rmm_resource *mr, size_t *allocated_bytes, size_t *limit_bytes);
/* Changes a limiting adaptor's limit; what is allocated beyond a lower one stays allocated, and
   requests fail until enough is freed. INVALID_ARGUMENT iff mr is not a limiting adaptor.
   Thread-safe; O(1). */
RMMDEF rmm_status rmm_limiting_set_limit(rmm_resource *mr, size_t limit_bytes);

typedef bool (*rmm_failure_callback)(size_t bytes, void *arg);
/* On OUT_OF_MEMORY calls callback(bytes, arg) and retries while it returns true (no cap: the
   callback decides); any other status passes straight through. NULL callback: INVALID_ARGUMENT. */
RMMDEF rmm_status rmm_failure_callback_adaptor_create(rmm_resource **out, rmm_resource *upstream, rmm_failure_callback callback, void *arg);

/* RMM's aligned adaptor: requests of at least threshold_bytes get `alignment` (a power of two,
   raised to 256; else INVALID_ARGUMENT) by asking upstream for alignment - 256 extra bytes and
   remembering the original pointer in a map; smaller requests pass straight through. A free of
   a block it over-aligned with a size below the threshold is CORRUPTION (nothing freed); a
   smaller free of a pointer with that alignment costs a lookup in the map under its lock. An
   upstream block not aligned as the adaptor asked (a user resource that ignores alignments) is
   given back and the allocation fails with INVALID_ARGUMENT: the block may not hold the request. */
RMMDEF rmm_status rmm_aligned_adaptor_create(rmm_resource **out, rmm_resource *upstream, size_t alignment, size_t threshold_bytes);
/* One mutex around every call of any resource (for user resources that are not thread-safe). A
   call that reaches the adaptor again from below it on the thread that holds the mutex (its
   upstream, or a callback that upstream makes, allocating through the adaptor) fails with
   NOT_SUPPORTED instead of waiting for itself for ever (as the pool's and other sub-allocators'
   locks do); RMM's thread_safe_resource_adaptor would deadlock there. */
RMMDEF rmm_status rmm_thread_safe_adaptor_create(rmm_resource **out, rmm_resource *upstream);
/* After each allocation, prefetches it to the device current at creation on the allocating stream
   (cudaMemPrefetchAsync; memory that is not managed, or a device without concurrent managed
   access, is left alone). A failed prefetch frees the block and returns CUDA. Fails at creation as
   every adaptor does, and with CUDA iff the current device cannot be read. */
RMMDEF rmm_status rmm_prefetch_adaptor_create(rmm_resource **out, rmm_resource *upstream);

typedef rmm_status (*rmm_allocate_callback)(void **ptr, size_t bytes, rmm_stream stream, void *arg);
typedef void (*rmm_deallocate_callback)(void *ptr, size_t bytes, rmm_stream stream, void *arg);
/* A resource made of two user functions. The allocate callback's status is returned; a pointer it
   returns that is not aligned as asked is given back through the deallocate callback and the call
   fails with INVALID_ARGUMENT, as does a success with a NULL pointer. NULL out or callbacks:
   INVALID_ARGUMENT. A callback may allocate and free through the library (a bin's callback that
   takes a larger block from its binning resource); one more call of a callback resource's function
   while RMM_MAX_CALLBACK_DEPTH of them (default 16) are in flight on the thread fails with
   INVALID_ARGUMENT without calling it (a deallocate too: the block stays live), so a callback that
   reaches itself again (a binning resource's bin allocating that bin's size from it) fails instead
   of overflowing the stack. Resources with a vtable of their own are not watched (recursion there
   is theirs to bound). */
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
   RMM_LOG_LEVEL, are dropped. Returns the previous level. Never fails: a level below TRACE is
   taken as TRACE and one above OFF as OFF (rmmh's set_logging_level passes its enum's values).
   Thread-safe; O(1). */
RMMDEF int rmm_set_log_level(int level);
RMMDEF int rmm_get_log_level(void);
/* Flushes the debug log file, if it was opened. */
RMMDEF void rmm_flush_log(void);

/* ======================================================================================= */
/* ==== perdevice: current and per-device resources ===================================== */
/* ======================================================================================= */ /* >>perdevice */

/* The resource of the current device (cudaGetDevice, so per host thread). The default for each
   device is a library-owned cudaMalloc resource that needs no destruction: nothing here calls CUDA
   at process exit. The table lives only in the RMM_IMPLEMENTATION translation unit (use one per
   process, or a shared library built with `make lib`). Get is cudaGetDevice and one or two atomic
   loads after the first call (the device count is asked only until the device's resource exists);
   get and set are thread-safe against each other. Returns NULL only if the device or the device
   count cannot be read, or the current device is numbered at or above RMM_MAX_DEVICES
   (INVALID_ARGUMENT; rmm_last_status() says why; a create given that NULL as its upstream says
   so too). */
RMMDEF rmm_resource *rmm_get_current_device_resource(void);
/* Makes mr the current device's resource (NULL: back to the default) and returns the previous one
   (the default if none was set), for scoped restore. The caller keeps ownership of mr and may
   destroy it only once it is no longer set and every call that may be using it has returned: a
   call with a NULL resource resolves the current one at entry and uses it to the end, and a
   pointer from rmm_get_current_device_resource stays what it was after a set. Memory goes back
   through the resource it came from (a free through NULL after a set reaches the new one, which
   refuses it). Returns NULL iff the device cannot be read. */
RMMDEF rmm_resource *rmm_set_current_device_resource(rmm_resource *mr);
/* As above for a given device. An invalid device id returns NULL with rmm_last_status()
   INVALID_ARGUMENT. */
RMMDEF rmm_resource *rmm_get_per_device_resource(int device);
RMMDEF rmm_resource *rmm_set_per_device_resource(int device, rmm_resource *mr);
/* cudaMemGetInfo for the current device. INVALID_ARGUMENT iff a pointer is NULL. */
RMMDEF rmm_status rmm_available_device_memory(size_t *free_bytes, size_t *total_bytes);
/* percent (0..100) of the free memory of the current device, aligned down to 256. Outside 0..100,
   or if the query fails, returns 0 and rmm_last_status() says why. */
RMMDEF size_t rmm_percent_of_free_device_memory(int percent);
/* The number of devices (0 without a usable GPU; CUDA's status then says why), the current device,
   and setting it (INVALID_ARGUMENT for an id that does not exist, or one at or above RMM_MAX_DEVICES,
   which the per-device table cannot hold). */
RMMDEF rmm_status rmm_get_device_count(int *count);
RMMDEF rmm_status rmm_get_device(int *device);
RMMDEF rmm_status rmm_set_device(int device);
/* cudaDeviceGetAttribute: *value gets `attribute` (a cudaDeviceAttr value) of `device`. Fails with
   INVALID_ARGUMENT iff value is NULL, CUDA for an attribute or device the runtime rejects; then
   *value is 0 and, if cuda_error is not NULL, *cuda_error the CUDA error code (cudaErrorInvalidValue
   1, cudaErrorInvalidDevice 101; 0 on success). The host backend answers for its simulated devices
   as an H100-like GPU: an H100's limits (1024 threads a block, warp size 32, 132 multiprocessors,
   compute capability 9.0, ...) and the capabilities it implements (memory pools exporting POSIX
   file descriptors, concurrent managed access, unified addressing; no pageable memory access, not
   integrated); an attribute its table (rmm__host_attributes, >>platform) does not list is 0, and
   rmm_host_backend_set_device_attribute changes one it lists. Thread-safe; one CUDA call. */
RMMDEF rmm_status rmm_device_get_attribute(int attribute, int device, int *value, int *cuda_error);
/* The CUDA runtime's and the driver's versions (cudaRuntimeGetVersion, cudaDriverGetVersion; 13000
   for 13.0). The driver's is 0 where no driver is installed; a version that cannot be read is 0 and
   the call fails with CUDA. Both are 0 (success) on the host backend. Either pointer may be NULL. */
RMMDEF rmm_status rmm_cuda_versions(int *runtime, int *driver);
/* A device scope: rmm_device_scope_enter makes `device` current (device < 0: leaves it as it is) and
   rmm_device_scope_leave restores the caller's device, as the library's own calls and containers
   do. The caller's device is restored only if its primary context is active: a thread that never
   used CUDA reads device 0, and setting that back would create a context on device 0 (hundreds of
   MiB) nobody asked for; such a thread stays on `device`. enter fails with INVALID_ARGUMENT iff
   scope is NULL, CUDA iff cudaGetDevice or cudaSetDevice fails (a device that does not exist);
   after a failed enter, leave does nothing. One cudaGetDevice when the device is current already.
   leave fails with CUDA iff its cudaSetDevice fails (a broken context): the thread then stays on
   `device`. (It returned void until 2026-11-29; a call that ignores the status compiles as before.)
   The library's own calls, and containers, whose restore fails likewise leave the thread on the
   device they switched to, but keep their result (their work is done: memory handed out or freed),
   log the failure at WARN, and leave no failure as the thread's last error. */
typedef struct rmm_device_scope {
    int previous;  /* the caller's device */
    bool switched; /* whether enter changed the device */
} rmm_device_scope;
RMMDEF rmm_status rmm_device_scope_enter(rmm_device_scope *scope, int device);
RMMDEF rmm_status rmm_device_scope_leave(const rmm_device_scope *scope);
/* Prefetches managed memory to `device` (RMM_CPU_DEVICE, -1: to the host) on `stream`
   (cudaMemPrefetchAsync). Memory that is not managed, NULL or 0 bytes, and a device without
   concurrent managed access are left alone (success), as RMM's DeviceBuffer.prefetch does. Fails
   with INVALID_ARGUMENT for a device below -1 or past the last device, CUDA iff the runtime refuses
   otherwise. On the host backend it checks the stream and does nothing else. */
#define RMM_CPU_DEVICE (-1)
RMMDEF rmm_status rmm_prefetch(const void *ptr, size_t bytes, int device, rmm_stream stream);

/* ---- CUDA IPC: share device memory with another process ----------------------------------- */
/* Every function fails with INVALID_ARGUMENT for a NULL pointer argument and NOT_SUPPORTED on the
   host backend (no other process can see its memory); the CUDA errors map as rmm_status_from_cuda.
   Legacy IPC (cudaIpc*Handle) shares a whole cudaMalloc allocation: rmm_ipc_get_handle takes the
   allocation's base (rmm_resource_allocation_base finds it for a sub-allocated block) and writes
   its RMM_IPC_HANDLE_BYTES-byte handle; another process opens it (lazy peer access) and gets the
   base, and closes it when done. */
#define RMM_IPC_HANDLE_BYTES 64
RMMDEF rmm_status rmm_ipc_get_handle(void *base, unsigned char *handle);
RMMDEF rmm_status rmm_ipc_open_handle(const unsigned char *handle, void **base);
RMMDEF rmm_status rmm_ipc_close_handle(void *base);
/* Memory-pool IPC (cudaMallocAsync pools made with RMM_EXPORT_POSIX_FD): the exporter writes a
   POSIX file descriptor for the pool (the caller closes it; NOT_SUPPORTED for a pool made without
   an export handle type, or a device or driver that cannot export) and RMM_IPC_HANDLE_BYTES naming
   each block; the importer imports the pool from the descriptor (received over a Unix socket; an
   imported pool cannot allocate), then each block, frees each imported block before the exporter
   frees it (rmm_mem_pool_free_imported), and destroys the imported pool last. The library keeps
   what it imported (O(1) and a lock per import, free and destroy; bounded by what is imported
   now): rmm_mem_pool_free_imported of anything rmm_mem_pool_import_pointer did not map, and
   rmm_mem_pool_destroy_imported of anything rmm_mem_pool_import_fd did not make, or either a
   second time, is INVALID_ARGUMENT (underneath they are a cudaFree and a cudaMemPoolDestroy,
   which would act on this process's own memory), on the host backend too. A block imported
   again (the driver maps it once per process and returns the same address) is freed once per
   import: the mapping stays until the last of them (the driver alone unmapped it at the first
   cudaFree, under the other import); a pool imported again (the same handle) is destroyed once
   per import, each a cudaMemPoolDestroy (the driver counts pool imports). The exports fail with
   NOT_SUPPORTED where the driver answers "not supported" or "invalid value" (a pool made without
   an export handle type, a pointer that is not a block of an exportable pool), else as
   rmm_status_from_cuda (a sticky error is CUDA, not NOT_SUPPORTED). */
RMMDEF rmm_status rmm_mem_pool_export_fd(rmm_mem_pool pool, int *fd);
RMMDEF rmm_status rmm_mem_pool_import_fd(int fd, rmm_mem_pool *pool);
RMMDEF rmm_status rmm_mem_pool_export_pointer(void *ptr, unsigned char *handle);
RMMDEF rmm_status rmm_mem_pool_import_pointer(rmm_mem_pool pool, const unsigned char *handle, void **ptr);
RMMDEF rmm_status rmm_mem_pool_free_imported(void *ptr);
RMMDEF rmm_status rmm_mem_pool_destroy_imported(rmm_mem_pool pool);

/* ======================================================================================= */
/* ==== containers: device buffer, uvector, scalar ====================================== */
/* ======================================================================================= */ /* >>containers */

/* Containers are caller-owned structs; read the fields, change them only through the functions.
   Each remembers its resource (NULL at create: the current one), stream and device, and makes that
   device current while it allocates or frees, so it can be released with another device current.
   Copies are stream-ordered cudaMemcpyAsync with cudaMemcpyDefault (sources on host or device),
   made with the caller's device current, as RMM makes them: a default-stream handle
   (RMM_STREAM_DEFAULT, RMM_STREAM_PER_THREAD) given to a copy, an element or a scalar value names
   the caller's device's stream, not the container's (review 45).
   Every function fails with INVALID_ARGUMENT for a NULL container, and when the resource answers
   SUCCESS with a NULL or a block not aligned to RMM_ALIGNMENT (a resource of the user's: refused,
   never held), and with the resource's status (OUT_OF_MEMORY...) when an allocation fails: then
   the container is exactly as it was (size, capacity, data, contents and stream). After release
   the container is empty (data NULL, size and capacity 0) and may be released again. A zeroed
   rmm_device_buffer is empty too: its first allocation (resize, reserve) takes the current device
   and resource and keeps them. A failed rmm_device_buffer create (_create, _create_from, _copy)
   leaves an empty buffer of the resource and device it resolved (zeroed if it resolved none), but
   for _copy with dst == src, which is refused with the buffer as it was (it is live); a failed
   uvector or scalar create leaves the struct zeroed. Not thread-safe (one container, one user at a time). */
typedef struct rmm_device_buffer {
    void *data;
    size_t size;
    size_t capacity;
    rmm_stream stream;
    rmm_resource *mr;
    int device;
} rmm_device_buffer;
/* Uninitialized `size` bytes (size 0: data NULL). */
RMMDEF rmm_status rmm_device_buffer_create(rmm_device_buffer *b, size_t size, rmm_stream stream, rmm_resource *mr);
RMMDEF rmm_status rmm_device_buffer_create_from(rmm_device_buffer *b, const void *src, size_t size, rmm_stream stream, rmm_resource *mr);
RMMDEF rmm_status rmm_device_buffer_copy(rmm_device_buffer *dst, const rmm_device_buffer *src, rmm_stream stream, rmm_resource *mr);
/* Resize keeps the contents; growing past capacity reallocates exactly new_size bytes (as RMM).
   resize, reserve and shrink_to_fit also make `stream` the buffer's stream on success. */
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
/* A typed, uninitialized vector of `count` elements of element_size bytes (0: INVALID_ARGUMENT;
   count * element_size overflowing: INVALID_ARGUMENT). Indexes at or past size: INVALID_ARGUMENT.
   set_element_async copies from host memory on `stream`; get_element copies back and synchronizes
   the stream. */
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
   _get(v, index, float *out, stream), which refuse a uvector of another element size
   (INVALID_ARGUMENT, with a message). Use at file scope. */
#if defined(__GNUC__) || defined(__clang__)
#define RMM__TYPED_UNUSED __attribute__((unused)) /* (nvcc warns of unused static functions) */
#else
#define RMM__TYPED_UNUSED
#endif
#define RMM_DEVICE_UVECTOR_TYPED(suffix, T)                                                                                  \
    static inline RMM__TYPED_UNUSED rmm_status rmm_device_uvector_##suffix##_create(                                         \
        rmm_device_uvector *v, size_t count, rmm_stream stream, rmm_resource *mr) {                                          \
        return rmm_device_uvector_create(v, sizeof(T), count, stream, mr);                                                   \
    }                                                                                                                        \
    static inline RMM__TYPED_UNUSED rmm_status rmm_device_uvector_##suffix##_set(                                            \
        rmm_device_uvector *v, size_t index, T value, rmm_stream stream) {                                                   \
        if (v && v->element_size != sizeof(T))                                                                               \
            return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT,                                                            \
                                      "rmm_device_uvector_" #suffix "_set: elements of %zu bytes, not sizeof(" #T ") = %zu", \
                                      v->element_size, sizeof(T));                                                           \
        /* synchronous: the host value must outlive the copy */                                                              \
        rmm_status st_ = rmm_device_uvector_set_element_async(v, index, &value, stream);                                     \
        return st_ != RMM_SUCCESS ? st_ : rmm_stream_synchronize(stream);                                                    \
    }                                                                                                                        \
    static inline RMM__TYPED_UNUSED rmm_status rmm_device_uvector_##suffix##_get(                                            \
        const rmm_device_uvector *v, size_t index, T *out, rmm_stream stream) {                                              \
        if (v && v->element_size != sizeof(T))                                                                               \
            return rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT,                                                            \
                                      "rmm_device_uvector_" #suffix "_get: elements of %zu bytes, not sizeof(" #T ") = %zu", \
                                      v->element_size, sizeof(T));                                                           \
        return rmm_device_uvector_get_element(v, index, out, stream);                                                        \
    }

typedef struct rmm_device_scalar {
    void *data;
    size_t element_size;
    rmm_stream stream;
    rmm_resource *mr;
    int device;
} rmm_device_scalar;
/* One element in device memory; get_value synchronizes the stream. Use after release: INVALID_ARGUMENT. */
RMMDEF rmm_status rmm_device_scalar_create(rmm_device_scalar *s, size_t element_size, rmm_stream stream, rmm_resource *mr);
RMMDEF rmm_status rmm_device_scalar_set_value_async(rmm_device_scalar *s, const void *value, rmm_stream stream);
RMMDEF rmm_status rmm_device_scalar_get_value(const rmm_device_scalar *s, void *out, rmm_stream stream);
RMMDEF rmm_status rmm_device_scalar_release(rmm_device_scalar *s);

/* ======================================================================================= */
/* ==== legacy: the 2019 RMM C API ====================================================== */
/* ======================================================================================= */ /* >>legacy */

/* The 2019 C API. rmmInitialize builds cudaMalloc or managed memory, with a pool on top in pool mode
   (initial_pool_size rounded up to a multiple of 256; 0: half of total device memory; RMM_ALLOC_CONF, if set, over that: see
   rmm_pool_desc_parse; without its own initial, the default initial size is none with virtual
   growth and at most its maximum). rmmIsInitialized copies the options in use: in pool mode their
   initial_pool_size is the pool's initial size as made (so rounded, capped by RMM_ALLOC_CONF's
   maximum or set by its initial; 0 with virtual growth). rmmAlloc/rmmFree are thread-safe; rmmFree
   needs no size (this layer remembers sizes in a map). In pool mode the pool is the device's that
   was current at rmmInitialize: rmmAlloc and rmmFree with another device current are
   INVALID_ARGUMENT, nothing done (the block stays allocated). Anything but rmmInitialize,
   rmmIsInitialized and rmmGetErrorString before rmmInitialize or after rmmFinalize is
   RMM_ERROR_NOT_INITIALIZED (before any argument is checked; since 2026-11-28, when a NULL
   argument was INVALID_ARGUMENT, and rmmFree(NULL) SUCCESS, even then); rmmInitialize twice is
   INVALID_ARGUMENT. Errors name the file and line of the RMM_ALLOC/RMM_FREE call. rmmFree(NULL)
   does nothing (SUCCESS); rmmFree of an unknown pointer: INVALID_ARGUMENT. rmmFinalize gives back
   the blocks still allocated (every mode, each freed as rmmFree would: a block a graph pool served
   goes back to that graph pool; with the device current at rmmInitialize made current for it, and
   the caller's restored), so a pointer not freed before it is invalid after it; if such a
   block's free fails, it still finalizes, and returns that failure's status, the message counting
   the blocks lost (and a warning in the debug log); in pool mode a block whose free fails but that is still the pool's (its
   free ran out of host memory) is not lost: it goes back with the pool's chunks (but one refused as CORRUPTION, RMM_DEBUG_MARGIN
   finding a write past its end, is still reported: CORRUPTION unless another failure is returned); if the pool cannot give a chunk back, it still
   finalizes and returns that failure's status ("the pool could not give all its memory back"); while a free through the
   legacy resource waits for rmm_capture_end (rmmFree on a stream registered for capture), or would
   (RMM_STREAM_DEFAULT, which it frees on, registered), rmmFinalize is INVALID_ARGUMENT and does
   nothing (still initialized: end the capture, then finalize). rmmGetAllocationOffset: offset from the base of the
   upstream allocation holding the pointer (for CUDA IPC), 0 outside pool mode; NOT_SUPPORTED in
   pool mode with virtual growth (RMM_ALLOC_CONF growth:virtual: the blocks lie on pages of their
   own, with no upstream allocation to be an offset into); *offset is 0 on every failure, and every
   failure's message begins with the legacy call's name (rmmInitialize's adds RMM_ALLOC_CONF where
   it shaped the pool). rmmWriteLog: RMM's CSV plus a
   Location (file:line) column, quoted as CSV quotes where the file name has a comma, a quote or a
   line break; needs enable_logging (else INVALID_ARGUMENT); IO if the file
   cannot be written. With enable_logging every allocation and free is kept in host memory (72
   bytes each on 64-bit hosts, up to twice that as the array doubles) until rmmFinalize, as RMM's 2019 logger kept them: the
   log grows for the life of a program that logs (an event that finds no host memory is dropped;
   the call itself succeeds). rmmWriteLog writes it all and keeps it. */
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

/* ======================================================================================= */
/* ==== cxx: Thrust allocator and execution policy (C++ under nvcc only) ================ */
/* ======================================================================================= */ /* >>cxx */

/* Seen only by C++ compiled by nvcc (where Thrust is), unless RMM_NO_THRUST is defined. Small on
   purpose: an allocator, an execution policy and a vector alias, so Thrust algorithms and
   containers take their memory from rmm resources. */
#if defined(__cplusplus) && defined(__CUDACC__) && !defined(RMM_NO_THRUST) && !defined(RMM_BACKEND_HOST)
#include <new>
#include <thrust/device_malloc_allocator.h>
#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
namespace rmm {
/* A Thrust allocator over an rmm resource (default: the current device resource at construction),
   stream-ordered on `stream`, with the construction-time device made current around each call.
   Throws std::bad_alloc when the resource fails, as Thrust expects. */
template <typename T>
class thrust_allocator : public thrust::device_malloc_allocator<T> {
  public:
    typedef T value_type;
    typedef thrust::device_ptr<T> pointer;
    typedef std::size_t size_type;
    template <typename U>
    struct rebind {
        typedef thrust_allocator<U> other;
    };
    thrust_allocator() : thrust_allocator(RMM_STREAM_DEFAULT, nullptr) {}
    explicit thrust_allocator(rmm_stream stream, rmm_resource *mr = nullptr)
        : stream_(stream), mr_(mr ? mr : rmm_get_current_device_resource()), device_(0) {
        (void)rmm_get_device(&device_);
    }
    template <typename U>
    thrust_allocator(const thrust_allocator<U> &other) : stream_(other.stream()), mr_(other.resource()), device_(other.device()) {}
    pointer allocate(size_type n) {
        void *p = nullptr;
        int previous = device_;
        (void)rmm_get_device(&previous);
        if (previous != device_) (void)rmm_set_device(device_);
        rmm_status st = n > SIZE_MAX / sizeof(T) ? RMM_ERROR_OUT_OF_MEMORY : rmm_allocate(mr_, &p, n * sizeof(T), stream_);
        if (previous != device_) (void)rmm_set_device(previous);
        if (st != RMM_SUCCESS) throw std::bad_alloc();
        return thrust::device_pointer_cast(static_cast<T *>(p));
    }
    void deallocate(pointer p, size_type n) noexcept {
        int previous = device_;
        (void)rmm_get_device(&previous);
        if (previous != device_) (void)rmm_set_device(device_);
        (void)rmm_deallocate(mr_, thrust::raw_pointer_cast(p), n * sizeof(T), stream_);
        if (previous != device_) (void)rmm_set_device(previous);
    }
    rmm_stream stream() const noexcept { return stream_; }
    rmm_resource *resource() const noexcept { return mr_; }
    int device() const noexcept { return device_; }
    bool operator==(const thrust_allocator &o) const noexcept { return rmm_resource_is_equal(mr_, o.mr_) && stream_ == o.stream_; }
    bool operator!=(const thrust_allocator &o) const noexcept { return !(*this == o); }

  private:
    rmm_stream stream_;
    rmm_resource *mr_;
    int device_;
};
/* thrust::sort(rmm::exec_policy(stream), ...): runs on `stream`, temporary storage from `mr`
   (default: the current device resource). */
inline auto exec_policy(rmm_stream stream = RMM_STREAM_DEFAULT, rmm_resource *mr = nullptr)
    -> decltype(thrust::cuda::par(static_cast<const thrust_allocator<char> &>(thrust_allocator<char>(stream, mr))).on(stream)) {
    return thrust::cuda::par(static_cast<const thrust_allocator<char> &>(thrust_allocator<char>(stream, mr))).on(stream);
}
/* A thrust::device_vector whose memory comes from the current device resource. */
template <typename T>
using device_vector = thrust::device_vector<T, thrust_allocator<T>>;
} /* namespace rmm */
#endif /* C++ under nvcc */

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
#include <sched.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/time.h>
/* A system header included before rmm.h under -std=c99/c11 fixes glibc's feature set to strict ISO C
   before rmm.h can widen it, so these POSIX declarations are missing; declare them (same types). */
#if defined(__GLIBC__) && !defined(__cplusplus)
#if !defined(__USE_POSIX)
extern struct tm *localtime_r(const time_t *timer, struct tm *result);
#endif
#if !defined(__USE_MISC)
extern long int syscall(long int number, ...);
#endif
#if !defined(__USE_XOPEN2K)
extern int posix_memalign(void **memptr, size_t alignment, size_t size);
#endif
#endif

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
#ifndef RMM_MAX_CALLBACK_DEPTH
#define RMM_MAX_CALLBACK_DEPTH 16
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
#define RMM__NOINLINE __attribute__((noinline))
#define RMM__LIKELY(x) __builtin_expect(!!(x), 1)
#define RMM__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RMM__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RMM__NOINLINE
#define RMM__LIKELY(x) (x)
#define RMM__UNLIKELY(x) (x)
#define RMM__PRINTF(a, b)
#endif

/* ======================================================================================= */
/* ==== util: arithmetic, locks, atomics ================================================ */
/* ======================================================================================= */ /* >>util */

#define RMM__MIB ((size_t)1 << 20)
#define RMM__POOL_GRANULARITY (2 * RMM__MIB) /* the pool's default growth_granularity_bytes (0 means it too) */
/* Atomics: one vocabulary over the GCC/Clang builtins (every compiler rmm.h supports has them;
   nvcc hands host code to one). The plain verb has the order its use usually needs: a load
   acquires, a store releases, a read-modify-write does both; _RELAXED and _SEQ_CST name the
   others. ADD and SUB return the new value, XCHG the old one, CAS whether it swapped (on failure
   *expected gets the current value). Nothing else in the header calls an __atomic builtin. */
#define RMM__ATOMIC_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define RMM__ATOMIC_LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define RMM__ATOMIC_LOAD_SEQ_CST(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define RMM__ATOMIC_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define RMM__ATOMIC_STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define RMM__ATOMIC_STORE_SEQ_CST(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define RMM__ATOMIC_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define RMM__ATOMIC_ADD_RELAXED(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)
#define RMM__ATOMIC_ADD_SEQ_CST(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define RMM__ATOMIC_SUB(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_ACQ_REL)
#define RMM__ATOMIC_XCHG(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define RMM__ATOMIC_XCHG_ACQUIRE(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define RMM__ATOMIC_CAS(p, expected, desired) \
    __atomic_compare_exchange_n((p), (expected), (desired), false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#define RMM__ATOMIC_CAS_WEAK_RELAXED(p, expected, desired) \
    __atomic_compare_exchange_n((p), (expected), (desired), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)

/* A compile-time check of what a bit trick or a table assumes (C11/C++11 keyword where there is
   one, else an array type of size -1, which every C99 compiler rejects). */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define RMM__STATIC_ASSERT(cond, name) static_assert(cond, #name)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define RMM__STATIC_ASSERT(cond, name) _Static_assert(cond, #name)
#else
#define RMM__STATIC_ASSERT(cond, name) typedef char rmm__static_assert_##name[(cond) ? 1 : -1]
#endif
RMM__STATIC_ASSERT(sizeof(size_t) <= sizeof(uint64_t), size_t_fits_the_64_bit_bit_tricks);
/* (tables sized by them: 0 made arrays of no element, which the host backend's first stream
   wrote past: red team 35) */
RMM__STATIC_ASSERT(RMM_MAX_DEVICES >= 1, rmm_max_devices_is_at_least_1);
RMM__STATIC_ASSERT(RMM_HOST_BACKEND_DEVICES >= 1, rmm_host_backend_devices_is_at_least_1);
RMM__STATIC_ASSERT(RMM_MAX_CALLBACK_DEPTH >= 1, rmm_max_callback_depth_is_at_least_1);

RMM__PRIVATE bool rmm__is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }
/* Two roundings, never to be mixed up: rmm__align_up/down take a power-of-two alignment (a mask);
   rmm__round_up takes any multiple (a superblock of 3 MiB, a growth step of 3 MiB). */
/* Rounds up to a multiple of a power of two; false on overflow. */
RMM__PRIVATE bool rmm__align_up(size_t bytes, size_t alignment, size_t *out) {
    RMM_ASSERT(rmm__is_pow2(alignment));
    if (bytes > SIZE_MAX - (alignment - 1)) return false;
    *out = (bytes + alignment - 1) & ~(alignment - 1);
    return true;
}
RMM__PRIVATE size_t rmm__align_down(size_t bytes, size_t alignment) {
    RMM_ASSERT(rmm__is_pow2(alignment));
    return bytes & ~(alignment - 1);
}
/* Rounds up to a multiple of any non-zero `multiple`; false on overflow. */
RMM__PRIVATE bool rmm__round_up(size_t bytes, size_t multiple, size_t *out) {
    size_t rem = bytes % multiple;
    if (rem == 0) {
        *out = bytes;
        return true;
    }
    if (bytes > SIZE_MAX - (multiple - rem)) return false;
    *out = bytes + (multiple - rem);
    return true;
}
RMM__PRIVATE unsigned rmm__log2_floor(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }
RMM__PRIVATE size_t rmm__min(size_t a, size_t b) { return a < b ? a : b; }
RMM__PRIVATE size_t rmm__max(size_t a, size_t b) { return a > b ? a : b; }

/* The length of text[0, n) cut back so that it ends on a whole UTF-8 character. O(1). */
RMM__PRIVATE size_t rmm__utf8_cut(const char *text, size_t n) {
    size_t i = n, need;
    unsigned char lead;
    while (i > 0 && n - i < 3 && ((unsigned char)text[i - 1] & 0xC0) == 0x80) i--; /* continuation bytes */
    if (i == 0 || !((unsigned char)text[i - 1] & 0x80)) return n; /* ASCII last: whole */
    lead = (unsigned char)text[i - 1];
    need = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 1;
    return n - (i - 1) < need ? i - 1 : n;
}
/* How much of `len` bytes of text a message quotes: all of it up to 200 bytes, else the first 200
   cut on a whole character (for a %.*s of the user's settings, such as RMM_ALLOC_CONF). O(1). */
RMM__PRIVATE int rmm__quoted_len(const char *text, size_t len) { return (int)(len <= 200 ? len : rmm__utf8_cut(text, 200)); }
/* Copies text, truncating to fit (on a whole UTF-8 character). */
RMM__PRIVATE void rmm__copy_text(char *dst, size_t capacity, const char *src) {
    size_t n = strlen(src);
    if (n >= capacity) n = rmm__utf8_cut(src, capacity - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}
/* The cause of an out-of-memory (the upstream's message) for its explanation: as rmm__copy_text
   into RMM__CAUSE_MAX bytes, with " ..." where it was cut (a red team's find: cut at 199 bytes with
   no mark, a limiting adaptor's verdict below a pool lost its end). */
#define RMM__CAUSE_MAX 512
RMM__PRIVATE void rmm__copy_cause(char *dst, const char *src) {
    size_t n = strlen(src);
    if (n < RMM__CAUSE_MAX) {
        memcpy(dst, src, n + 1);
        return;
    }
    n = rmm__utf8_cut(src, RMM__CAUSE_MAX - 5);
    memcpy(dst, src, n);
    memcpy(dst + n, " ...", 5);
}
RMM__PRIVATE void *rmm__calloc(size_t count, size_t size) {
    void *p;
    /* (at most PTRDIFF_MAX bytes, the largest object there can be: gcc 13 at -O3 saw a request
       up to SIZE_MAX reach malloc, and failed -Werror=alloc-size-larger-than) */
    if (size != 0 && count > (size_t)PTRDIFF_MAX / size) return NULL;
    p = RMM_SYS_MALLOC(count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

/* The one mutex type (a pthread mutex): rmm__mutex_init for one inside an object,
   RMM__MUTEX_INIT for a static one. The sub-allocators' hot paths take rmm__spin instead. */
typedef struct rmm__mutex {
    pthread_mutex_t m;
} rmm__mutex;
#define RMM__MUTEX_INIT {PTHREAD_MUTEX_INITIALIZER}
RMM__PRIVATE void rmm__mutex_init(rmm__mutex *m) { pthread_mutex_init(&m->m, NULL); }
RMM__PRIVATE void rmm__mutex_destroy(rmm__mutex *m) { pthread_mutex_destroy(&m->m); }
RMM__PRIVATE void rmm__lock(rmm__mutex *m) { pthread_mutex_lock(&m->m); }
RMM__PRIVATE void rmm__unlock(rmm__mutex *m) { pthread_mutex_unlock(&m->m); }

/* A process-unique number per thread (from 1), cheaper than a system call after the first. */
RMM__PRIVATE uint64_t rmm__thread_serial(void) {
    static uint64_t next = 1;
    static RMM__TLS uint64_t mine = 0;
    if (RMM__UNLIKELY(mine == 0)) mine = RMM__ATOMIC_ADD(&next, 1);
    return mine;
}

/* The sub-allocators' lock: one atomic exchange to take it and one store to release it when
   uncontended (a pthread mutex costs several times that on the allocate/free fast path). Under
   contention a waiter watches the lock with plain reads, backing off exponentially (up to
   RMM__SPIN_BACKOFF pauses between looks, so the waiters do not all rush it at each release) and
   yields the processor only once it has waited RMM__SPIN_YIELD_AFTER pauses (counted in whole
   steps of the backoff, so up to about twice that: a long wait, the holder may have been
   preempted). Yielding early made things worse: with 16 threads on one pool, waiters
   that yielded after 128 pauses woke late for a lock released in well under a microsecond, and the
   waits averaged 18-29 us. On an H200 host (16 cores, bench/random_allocations --workload threads16,
   ns per pair), a backoff of at most 16 / 256 / 1024 / 4096 pauses against that: pool on created
   streams 690-744 -> 648-708 / 397-461 / 344-458 / 293-403, on foreign ones 1315-1330 -> 1024-1188
   / 514-698 / 532-605 / 430-447; the fixed-size resource 606-621 -> 592-643 / 185-213 / 137-144 /
   90-102 (created). Longer backoff trades a waiter's latency for the lock's throughput: a waiter
   that sleeps through a release lets the holder take the lock again with the pool's lines still
   in its cache. Since 2026-11-29 the cap is 4096 pauses (it was 1024), and a waiter past
   RMM__SPIN_YIELD_AFTER keeps pausing between its yields (it used to yield alone, so that long
   waiters looked at the lock each time sched_yield returned, taking its line from the holder).
   threads16 on one H200 host (bench/random_allocations --reps 3, medians of 3 interleaved rounds,
   ns per pair), old -> new: pool on foreign streams 308 -> 237, on created ones 198 -> 147;
   fixed-size 145 -> 101 and 115 -> 80; binning 434 -> 382 and 443 -> 341; 32 threads on the 16
   cores (created streams) pool 368 -> 220, fixed-size 112 -> 81. Tried beside it: the later
   yield alone (65536 pauses) gave 10-13 %; a cap of 16384 with the yield after 65536 gave more
   (pool 233 and 138, fixed-size 97 and 72, binning 357 and 290) for four times the gap between a
   waiter's looks, which a waiter pays after every long hold (a growth's upstream call, for one):
   a pause took 19.5 ns on that host, so looks at most 80 us apart now (and a yield, past
   RMM__SPIN_YIELD_AFTER), 20 us before, 320 us with 16384. (The 32-thread figures: one run each.) The threads share the
   lock less evenly (pool, foreign streams: the first of 16 threads done after 24-55 ms, against
   44-79), but each thread's own work ends sooner: the slowest thread's 65-82 ms against 75-107.
   Uncontended calls never get here. It remembers its holder,
   so a thread that tries to take it again (a resource reached again from its own upstream) is told
   so instead of spinning forever: rmm__spin_lock returns false then, and the lock is not taken. */
#ifndef RMM__SPIN_BACKOFF
#define RMM__SPIN_BACKOFF 4096
#endif
#ifndef RMM__SPIN_YIELD_AFTER
#define RMM__SPIN_YIELD_AFTER 8192
#endif
RMM__STATIC_ASSERT(RMM__SPIN_BACKOFF >= 1 && RMM__SPIN_BACKOFF <= (1 << 24) && RMM__SPIN_YIELD_AFTER >= RMM__SPIN_BACKOFF && RMM__SPIN_YIELD_AFTER <= (1 << 30),
                   spin_backoff_settings_pause_between_looks);
typedef struct rmm__spin {
    int held;
    uint64_t holder; /* thread serial of the holder, 0 when free */
} rmm__spin;
static inline void rmm__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
RMM__PRIVATE bool rmm__spin_lock_slow(rmm__spin *l, uint64_t me) {
    unsigned backoff = 1 + (unsigned)(me & 3), waited = 0, k;
    if (RMM__ATOMIC_LOAD_RELAXED(&l->holder) == me) return false; /* reentrant */
    for (;;) {
        while (RMM__ATOMIC_LOAD_RELAXED(&l->held)) {
            if (waited < RMM__SPIN_YIELD_AFTER) {
                for (k = 0; k < backoff; k++) rmm__cpu_relax();
                waited += backoff;
                backoff = backoff * 2 < RMM__SPIN_BACKOFF ? backoff * 2 : RMM__SPIN_BACKOFF;
            } else { /* (still paused between yields: a yield returns at once when no other thread waits for the core) */
                for (k = 0; k < backoff; k++) rmm__cpu_relax();
                sched_yield();
            }
        }
        if (RMM__ATOMIC_XCHG_ACQUIRE(&l->held, 1) == 0) break;
    }
    RMM__ATOMIC_STORE_RELAXED(&l->holder, me);
    return true;
}
static inline bool rmm__spin_lock(rmm__spin *l) {
    uint64_t me = rmm__thread_serial();
    if (RMM__LIKELY(RMM__ATOMIC_XCHG_ACQUIRE(&l->held, 1) == 0)) {
        RMM__ATOMIC_STORE_RELAXED(&l->holder, me);
        return true;
    }
    return rmm__spin_lock_slow(l, me);
}
/* Takes the lock only if it is free now; never waits. */
static inline bool rmm__spin_trylock(rmm__spin *l) {
    if (RMM__ATOMIC_LOAD_RELAXED(&l->held) || RMM__ATOMIC_XCHG_ACQUIRE(&l->held, 1) != 0) return false;
    RMM__ATOMIC_STORE_RELAXED(&l->holder, rmm__thread_serial());
    return true;
}
static inline void rmm__spin_unlock(rmm__spin *l) {
    RMM__ATOMIC_STORE_RELAXED(&l->holder, 0);
    RMM__ATOMIC_STORE(&l->held, 0);
}

/* The OS thread id, as RMM's logs print it (one system call per thread, then cached). */
RMM__PRIVATE uint64_t rmm__thread_id(void) {
    static RMM__TLS uint64_t cached;
    if (RMM__UNLIKELY(cached == 0)) {
#if defined(SYS_gettid)
        cached = (uint64_t)syscall(SYS_gettid);
#else
        cached = (uint64_t)(uintptr_t)pthread_self();
#endif
    }
    return cached;
}

/* Open-addressing map from a 256-aligned address to a pointer (or size): linear probing with
   backward-shift deletion, power-of-two capacity, at most a quarter full (at half full, probe
   chains and their mispredicted branches made a remove and a put cost 40 ns together; at a quarter,
   22). Not thread-safe: the owner locks. O(1) expected for get/put/remove. */
typedef struct rmm__addr_slot {
    uintptr_t key; /* 0: empty */
    void *value;
} rmm__addr_slot;
typedef struct rmm__addr_map {
    rmm__addr_slot *slots; /* a key and its value share a cache line: one miss per probe */
    size_t mask;           /* capacity - 1 */
    size_t count;
    unsigned shift;        /* 64 - log2(capacity) */
} rmm__addr_map;

/* Fibonacci hashing: the top bits of key * 2^64/phi spread addresses (whose low bits are all zero)
   evenly over the table. */
#define rmm__addr_hash(m, key) ((size_t)(((uint64_t)(key) * 0x9E3779B97F4A7C15ull) >> (m)->shift))
RMM__PRIVATE bool rmm__addr_map_init(rmm__addr_map *m, size_t capacity) {
    size_t cap = 16;
    unsigned bits = 4;
    while (cap < capacity) {
        cap <<= 1;
        bits++;
    }
    m->shift = 64u - bits;
    m->slots = (rmm__addr_slot *)rmm__calloc(cap, sizeof(rmm__addr_slot));
    m->mask = cap - 1;
    m->count = 0;
    return m->slots != NULL;
}
RMM__PRIVATE void rmm__addr_map_free(rmm__addr_map *m) {
    RMM_SYS_FREE(m->slots);
    memset(m, 0, sizeof *m);
}
RMM__PRIVATE void **rmm__addr_map_find(const rmm__addr_map *m, uintptr_t key) {
    size_t i = rmm__addr_hash(m, key);
    for (;;) {
        if (m->slots[i].key == key) return &m->slots[i].value;
        if (m->slots[i].key == 0) return NULL;
        i = (i + 1) & m->mask;
    }
}
RMM__PRIVATE bool rmm__addr_map_grow(rmm__addr_map *m) {
    rmm__addr_map bigger;
    size_t i;
    if (!rmm__addr_map_init(&bigger, (m->mask + 1) * 2)) return false;
    for (i = 0; i <= m->mask; i++) {
        if (m->slots[i].key != 0) {
            size_t j = rmm__addr_hash(&bigger, m->slots[i].key);
            while (bigger.slots[j].key != 0) j = (j + 1) & bigger.mask;
            bigger.slots[j].key = m->slots[i].key;
            bigger.slots[j].value = m->slots[i].value;
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
    if ((m->count + 1) * 4 > m->mask + 1 && !rmm__addr_map_grow(m)) return false;
    i = rmm__addr_hash(m, key);
    while (m->slots[i].key != 0 && m->slots[i].key != key) i = (i + 1) & m->mask;
    if (m->slots[i].key == 0) m->count++;
    m->slots[i].key = key;
    m->slots[i].value = value;
    return true;
}
/* Removes the key; returns its value, or NULL if absent. */
RMM__PRIVATE void *rmm__addr_map_remove(rmm__addr_map *m, uintptr_t key) {
    size_t i = rmm__addr_hash(m, key), j;
    void *value;
    while (m->slots[i].key != key) {
        if (m->slots[i].key == 0) return NULL;
        i = (i + 1) & m->mask;
    }
    value = m->slots[i].value;
    m->count--;
    /* backward-shift deletion keeps every probe chain unbroken */
    j = i;
    for (;;) {
        size_t home;
        j = (j + 1) & m->mask;
        if (m->slots[j].key == 0) break;
        home = rmm__addr_hash(m, m->slots[j].key);
        /* move j into the hole at i iff home is not cyclically in (i, j] */
        if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
            m->slots[i].key = m->slots[j].key;
            m->slots[i].value = m->slots[j].value;
            i = j;
        }
    }
    m->slots[i].key = 0;
    m->slots[i].value = NULL;
    return value;
}

/* Two-phase removal, for an adaptor whose record must outlive a failed upstream free: claim marks
   the record "being freed", the caller frees upstream without holding its lock, then settles: on
   success the record goes, on failure it is restored, as if the free had never been tried. While
   claimed, the slot holds the address of the claim (an rmm__claim in the freeing call's frame, which
   keeps the record's value) with bit 0 set: no other claim has that address while the call runs. So
   if the upstream free succeeded and another thread got the same address back (and recorded it)
   before the settle, settle leaves that thread's record alone, even once that thread's own free has
   claimed it with the same value (comparing values could not tell: a review's find, session 19).
   Values are pointers aligned to at least 2 (bit 0 tells a claim). Caller holds the owner's lock
   for claim and settle, and for reading a claimed slot's value (rmm__slot_value). O(1). */
#define RMM__CLAIMED ((uintptr_t)1)
typedef struct rmm__claim {
    void *value;
} rmm__claim;
typedef enum { RMM__CLAIM_ABSENT, RMM__CLAIM_TAKEN, RMM__CLAIM_BUSY } rmm__claim_result;
static inline bool rmm__slot_claimed(const void *v) { return ((uintptr_t)v & RMM__CLAIMED) != 0; }
/* A slot's value, claimed or not. */
static inline void *rmm__slot_value(void *v) { return rmm__slot_claimed(v) ? ((rmm__claim *)((uintptr_t)v & ~RMM__CLAIMED))->value : v; }
RMM__PRIVATE rmm__claim_result rmm__addr_map_claim(rmm__addr_map *m, uintptr_t key, rmm__claim *c) {
    void **slot = rmm__addr_map_find(m, key);
    if (!slot) return RMM__CLAIM_ABSENT;
    if (rmm__slot_claimed(*slot)) return RMM__CLAIM_BUSY; /* a free of it is in flight */
    c->value = *slot;
    *slot = (void *)((uintptr_t)c | RMM__CLAIMED);
    return RMM__CLAIM_TAKEN;
}
/* Returns whether the slot still held this claim (false: recorded anew meanwhile, left as it is). */
RMM__PRIVATE bool rmm__addr_map_settle(rmm__addr_map *m, uintptr_t key, const rmm__claim *c, bool freed) {
    void **slot = rmm__addr_map_find(m, key);
    if (!slot || *slot != (void *)((uintptr_t)c | RMM__CLAIMED)) return false; /* recorded anew meanwhile */
    if (freed) rmm__addr_map_remove(m, key);
    else *slot = c->value;
    return true;
}
/* Records key -> value for a block just handed out: a record still claimed by a free in flight is
   stale (its upstream free succeeded, or this address could not have come back) and is replaced. */
RMM__PRIVATE bool rmm__addr_map_record(rmm__addr_map *m, uintptr_t key, void *value) {
    void **slot = rmm__addr_map_find(m, key);
    if (slot && !rmm__slot_claimed(*slot)) return false; /* live already: upstream misbehaves */
    return rmm__addr_map_put(m, key, value);
}

/* ======================================================================================= */
/* ==== errors: status strings and the thread-local last error ========================== */
/* ======================================================================================= */ /* >>errors */

static RMM__TLS char rmm__last_error_text[1024]; /* (512 until 2026-11-28: nested out-of-memory explanations with a long path passed it) */
static RMM__TLS rmm_status rmm__last_error_status;
static RMM__TLS int rmm__last_cuda_error; /* rmm_last_cuda_error: set with the status; 0 unless a CUDA call failed behind the last failure */
/* Counts this thread's failures recorded (rmm__fail, rmm_set_last_error): a caller of user code
   tells whether that code recorded its own (rmm__callback_allocate). */
static RMM__TLS unsigned long rmm__last_error_serial;
/* Counts every change of this thread's record: a failure recorded, or an earlier record put back
   (rmm__error_back sets the serial back, so serials repeat and cannot tell two records apart: a
   red team's find, 2026-11-30). Only goes up. */
static RMM__TLS unsigned long rmm__last_error_gen;
/* Non-zero while this thread makes a call whose failure its caller works around and leaves to be
   reported by a later call (rmm__stream_id_hint): a failure is returned then, and not recorded. */
static RMM__TLS unsigned rmm__quiet;
/* The serial of this thread's last failure that was a resource refusing a call made from inside
   its own upstream (rmm__reentrant); 0: none yet. */
static RMM__TLS unsigned long rmm__reentrant_serial;

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
/* Formats into a scratch buffer first, so an argument may be rmm_last_error() itself (a resource
   prefixing the message of the call that failed beneath it). A message longer than the buffer
   keeps its head and its tail (where the cause usually is: a path's strerror, upstream's error),
   with " ... " between, each cut on a whole UTF-8 character (a red team's find: a long non-ASCII
   path lost the cause, and the last character was cut in two). */
#define RMM__ERROR_HEAD 640
RMM__PRIVATE void rmm__set_error_text(const char *fmt, va_list ap) {
    char text[sizeof rmm__last_error_text];
    va_list again;
    int n;
    if (!fmt) {
        rmm__last_error_text[0] = '\0';
        return;
    }
    va_copy(again, ap);
    n = vsnprintf(text, sizeof text, fmt, ap);
    if (n < 0) text[0] = '\0'; /* (an encoding error leaves the buffer unspecified; the record is always terminated) */
    if (n >= (int)sizeof text) {
        char *full = (char *)RMM_SYS_MALLOC((size_t)n + 1);
        size_t len = (size_t)n, head, tail, from;
        if (full && vsnprintf(full, len + 1, fmt, again) == n) {
            head = rmm__utf8_cut(full, RMM__ERROR_HEAD);
            tail = sizeof text - 1 - RMM__ERROR_HEAD - 5; /* (" ... ") */
            from = len - tail;
            while (from < len && from < len - tail + 3 && ((unsigned char)full[from] & 0xC0) == 0x80) from++; /* a whole character first (not UTF-8: 3 bytes at most) */
            memcpy(text, full, head);
            memcpy(text + head, " ... ", 5);
            memcpy(text + head + 5, full + from, len - from);
            text[head + 5 + len - from] = '\0';
        } else {
            text[rmm__utf8_cut(text, sizeof text - 1)] = '\0';
        }
        RMM_SYS_FREE(full);
    }
    va_end(again);
    memcpy(rmm__last_error_text, text, sizeof text);
}
/* Records a failure (its message, status and CUDA error number: see rmm_last_cuda_error) as this
   thread's last one; returns status. For rmm_set_last_error, rmm__fail and rmm__fail_cuda. */
RMM__PRIVATE rmm_status rmm__record_failure(rmm_status status, int cuda_error, const char *fmt, va_list ap) {
    if (RMM__UNLIKELY(rmm__quiet != 0)) return status;
    rmm__set_error_text(fmt, ap);
    rmm__last_error_status = status;
    rmm__last_cuda_error = cuda_error;
    rmm__last_error_serial++;
    rmm__last_error_gen++;
    return status;
}
RMM__IMPL rmm_status rmm_set_last_error(rmm_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    status = rmm__record_failure(status, 0, fmt, ap);
    va_end(ap);
    return status;
}
RMM__IMPL rmm_status rmm_last_status(void) { return rmm__last_error_status; }
RMM__IMPL int rmm_last_cuda_error(void) { return rmm__last_cuda_error; }
/* A failure the library swallows (an internal call whose failure it works around and the public
   call then succeeds) must not stay behind as the thread's last error, which names the last failing
   call: the caller keeps the record before and puts it back after, as it was (text, status, serial
   and re-entrance mark: a caller that compares serials to tell a new failure, as the callback
   resource does, sees none; a serial moved on made it take an earlier, unrelated message for its
   callback's, review 26). Keeps and backs nest as the calls do. O(length of the message), up to
   1 KiB: a copy of the text and its length. */
typedef struct rmm__kept_error {
    unsigned long serial, reentrant_serial, gen;
    rmm_status status;
    int cuda_error;
    size_t length; /* the text's, with its NUL */
    char text[sizeof rmm__last_error_text];
} rmm__kept_error;
RMM__PRIVATE void rmm__error_keep(rmm__kept_error *k) {
    k->serial = rmm__last_error_serial;
    k->gen = rmm__last_error_gen;
    k->reentrant_serial = rmm__reentrant_serial;
    k->status = rmm__last_error_status;
    k->cuda_error = rmm__last_cuda_error;
    k->length = strlen(rmm__last_error_text) + 1; /* (always NUL-terminated within the buffer) */
    memcpy(k->text, rmm__last_error_text, k->length);
}
RMM__PRIVATE void rmm__error_back(const rmm__kept_error *k) {
    if (rmm__last_error_gen == k->gen) return; /* nothing recorded meanwhile */
    memcpy(rmm__last_error_text, k->text, k->length);
    rmm__last_error_status = k->status;
    rmm__last_cuda_error = k->cuda_error;
    rmm__last_error_serial = k->serial;
    rmm__reentrant_serial = k->reentrant_serial;
    rmm__last_error_gen++; /* (a change all the same: another keep's copy may hold a later record) */
}
/* A clean-up on a failure path (memory handed back after a later step failed): its own failure, if
   any, does not replace the failure the call reports, which stays the thread's last error; it is
   logged at WARN (what it could not give back is lost). RMM__CLEANUP_VOID: for a clean-up that
   returns nothing (a half-made resource's destroy, which logs what it must). */
#define RMM__CLEANUP(call)                                                                                                \
    do {                                                                                                                  \
        rmm__kept_error rmm__cleanup_kept;                                                                                \
        rmm__error_keep(&rmm__cleanup_kept);                                                                              \
        if ((call) != RMM_SUCCESS) RMM__LOG(RMM_LOG_LEVEL_WARN, "a clean-up after a failure failed too (%s): %s", #call, rmm_last_error()); \
        rmm__error_back(&rmm__cleanup_kept);                                                                              \
    } while (0)
#define RMM__CLEANUP_VOID(call)                \
    do {                                       \
        rmm__kept_error rmm__cleanup_kept;     \
        rmm__error_keep(&rmm__cleanup_kept);   \
        call;                                  \
        rmm__error_back(&rmm__cleanup_kept);   \
    } while (0)

static void rmm__log_write(int level, const char *fmt, ...) RMM__PRINTF(2, 3) RMM__UNUSED;
#define RMM__LOG(level, ...) do { if ((level) >= RMM_LOG_LEVEL) rmm__log_write((level), __VA_ARGS__); } while (0)

/* Records a failure on this thread and returns its status. */
static rmm_status rmm__fail(rmm_status status, const char *fmt, ...) RMM__PRINTF(2, 3);
static rmm_status rmm__fail(rmm_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    status = rmm__record_failure(status, 0, fmt, ap);
    va_end(ap);
    return status;
}
/* rmm__fail for a CUDA call's own failure: rmm_last_cuda_error() gives `cuda_error` (its
   cudaError_t or CUresult, or the host backend's stand-in). */
static rmm_status rmm__fail_cuda(int cuda_error, rmm_status status, const char *fmt, ...) RMM__PRINTF(3, 4) RMM__UNUSED;
static rmm_status rmm__fail_cuda(int cuda_error, rmm_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    status = rmm__record_failure(status, cuda_error, fmt, ap);
    va_end(ap);
    return status;
}
#define RMM__INVALID(...) rmm__fail(RMM_ERROR_INVALID_ARGUMENT, __VA_ARGS__)
#define RMM__NULL_OUT(fn, name) rmm__fail(RMM_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name)
/* Why this thread's last rmm_get_current_device_resource() found no device (and so returned NULL),
   its message as it failed; empty when it found one. */
static RMM__TLS char rmm__current_unreadable[256];
/* A create's NULL upstream. If it is likely the NULL of a failed rmm_get_current_device_resource()
   (the usual `rmm_pool_create(&pool, rmm_get_current_device_resource(), ...)` on a machine with no
   usable GPU), the message keeps that call's cause instead of hiding it. */
RMM__PRIVATE rmm_status rmm__null_upstream(const char *fn) {
    if (!rmm__current_unreadable[0]) return RMM__NULL_OUT(fn, "upstream");
    return rmm__fail(RMM_ERROR_INVALID_ARGUMENT, "%s: upstream is NULL (rmm_get_current_device_resource() found no device: %s)", fn, rmm__current_unreadable);
}

/* ======================================================================================= */
/* ==== platform: every CUDA call of the library passes through here ==================== */
/* ======================================================================================= */ /* >>platform */

/* The platform layer: device memory, pools, events, streams, copies, devices. Two backends
   implement exactly the functions declared here (the CUDA runtime, and RMM_BACKEND_HOST, which runs
   everything on the host); nothing above this section knows which one is compiled. Each function
   returns a status and, on failure, sets the last-error message naming the CUDA call, the CUDA error
   and the sizes: OUT_OF_MEMORY for cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY, CUDA for
   any other error. All are thread-safe and cost what the CUDA call costs. */
typedef void *rmm__event;
/* memory: cudaMalloc / cudaFree, cudaMallocManaged, cudaHostAlloc / cudaFreeHost */
RMM__PRIVATE rmm_status rmm__dev_malloc(void **ptr, size_t bytes);
RMM__PRIVATE rmm_status rmm__dev_free(void *ptr);
RMM__PRIVATE rmm_status rmm__managed_malloc(void **ptr, size_t bytes);
RMM__PRIVATE rmm_status rmm__pinned_malloc(void **ptr, size_t bytes);
RMM__PRIVATE rmm_status rmm__pinned_free(void *ptr);
/* devices: count (0 and a status without a usable GPU), current device, cudaMemGetInfo, sync */
RMM__PRIVATE rmm_status rmm__device_count(int *count);
RMM__PRIVATE rmm_status rmm__get_device(int *device);
/* the current device for a check (RMM_DEBUG's device check of the sub-allocators): false where it
   cannot be read; records no failure (and the host backend spends no injected one) */
RMM__PRIVATE bool rmm__device_peek(int *device);
RMM__PRIVATE rmm_status rmm__set_device(int device);
/* whether device's primary context is active (making it current then creates nothing); true when
   that cannot be known */
RMM__PRIVATE bool rmm__device_context_active(int device);
RMM__PRIVATE rmm_status rmm__mem_info(size_t *free_bytes, size_t *total_bytes);
RMM__PRIVATE rmm_status rmm__device_synchronize(void);
/* events (timing disabled): query gives *done = true once the recorded work has finished */
RMM__PRIVATE rmm_status rmm__event_create(rmm__event *event);
RMM__PRIVATE void rmm__event_destroy(rmm__event event); /* NULL: nothing */
RMM__PRIVATE rmm_status rmm__event_record(rmm__event event, rmm_stream stream);
RMM__PRIVATE rmm_status rmm__event_synchronize(rmm__event event);
RMM__PRIVATE rmm_status rmm__event_query(rmm__event event, bool *done);
RMM__PRIVATE rmm_status rmm__stream_wait_event(rmm_stream stream, rmm__event event);
/* streams: non-blocking create, destroy, synchronize; a process-unique id (cudaStreamGetId) */
RMM__PRIVATE rmm_status rmm__stream_create_raw(rmm_stream *stream, bool blocking); /* blocking: cudaStreamDefault */
RMM__PRIVATE rmm_status rmm__stream_destroy_raw(rmm_stream stream);
RMM__PRIVATE rmm_status rmm__stream_sync_raw(rmm_stream stream);
RMM__PRIVATE rmm_status rmm__stream_unique_id(rmm_stream stream, uint64_t *id);
/* As rmm__stream_unique_id, for a hint (asked before a lock, or to skip a lookup): a failure is
   returned but not recorded, as the call that needs the id asks it again and reports that (a red
   team's find, 2026-11-30: the hint's failure stayed as the last error of a call that succeeded). */
static inline rmm_status rmm__stream_id_hint(rmm_stream stream, uint64_t *id) {
    rmm_status st;
    rmm__quiet++;
    st = rmm__stream_unique_id(stream, id);
    rmm__quiet--;
    return st;
}
/* this thread's stream-capture mode (cudaThreadExchangeStreamCaptureMode): sets *mode, returns the
   old one in *mode; relaxed (RMM__CAPTURE_RELAXED) lets cudaMalloc run while a stream captures */
#define RMM__CAPTURE_RELAXED 2
RMM__PRIVATE rmm_status rmm__capture_mode_exchange(int *mode);
/* stream-ordered copies (cudaMemcpyDefault) and fills, and managed-memory prefetch (a no-op for
   memory that is not managed, or a device without concurrent managed access) */
RMM__PRIVATE rmm_status rmm__memcpy_async(void *dst, const void *src, size_t bytes, rmm_stream stream);
RMM__PRIVATE rmm_status rmm__memset_async(void *dst, int value, size_t bytes, rmm_stream stream);
RMM__PRIVATE rmm_status rmm__prefetch(void *ptr, size_t bytes, int device, rmm_stream stream); /* device < 0: the host */
/* device attributes (cudaDeviceGetAttribute; *cuda_error the CUDA error code on failure) and versions */
RMM__PRIVATE rmm_status rmm__device_attribute(int attribute, int device, int *value, int *cuda_error);
RMM__PRIVATE rmm_status rmm__versions(int *runtime, int *driver);
/* CUDA IPC: legacy handles of whole allocations, and memory pools shared through a POSIX fd with
   their blocks named by RMM_IPC_HANDLE_BYTES each (the host backend: NOT_SUPPORTED) */
RMM__PRIVATE rmm_status rmm__ipc_get(void *base, unsigned char *handle);
RMM__PRIVATE rmm_status rmm__ipc_open(const unsigned char *handle, void **base);
RMM__PRIVATE rmm_status rmm__ipc_close(void *base);
RMM__PRIVATE rmm_status rmm__mempool_export_fd(rmm_mem_pool pool, int *fd);
RMM__PRIVATE rmm_status rmm__mempool_import_fd(int fd, rmm_mem_pool *pool);
RMM__PRIVATE rmm_status rmm__mempool_export_ptr(void *ptr, unsigned char *handle);
RMM__PRIVATE rmm_status rmm__mempool_import_ptr(rmm_mem_pool pool, const unsigned char *handle, void **ptr);
RMM__PRIVATE rmm_status rmm__imported_free(void *ptr);
RMM__PRIVATE rmm_status rmm__mempool_destroy_imported(rmm_mem_pool pool);
/* the driver's memory pools (cudaMallocAsync): support and export-handle mask of a device, owned
   pools, allocation from a pool and stream-ordered free */
RMM__PRIVATE rmm_status rmm__mempool_support(int device, bool *supported, unsigned *handle_mask);
RMM__PRIVATE rmm_status rmm__mempool_create(rmm_mem_pool *pool, int device, unsigned handle_types, uint64_t release_threshold);
RMM__PRIVATE void rmm__mempool_destroy(rmm_mem_pool pool);
RMM__PRIVATE rmm_status rmm__mempool_default_managed(rmm_mem_pool *pool, int device);
/* an owned pool of page-locked host memory that the host and every device read and write */
RMM__PRIVATE rmm_status rmm__mempool_create_pinned(rmm_mem_pool *pool, int device, uint64_t release_threshold);
RMM__PRIVATE rmm_status rmm__mempool_malloc_async(void **ptr, size_t bytes, rmm_mem_pool pool, rmm_stream stream);
RMM__PRIVATE rmm_status rmm__free_async(void *ptr, rmm_stream stream);
/* virtual memory: the page size (NOT_SUPPORTED without VMM), reserving and freeing an address
   range, physical pages (create/release) and mapping them read-write for the device */
RMM__PRIVATE rmm_status rmm__vm_granularity(int device, size_t *granularity);
RMM__PRIVATE rmm_status rmm__vm_reserve(char **base, size_t bytes, size_t alignment);
RMM__PRIVATE void rmm__vm_free(char *base, size_t bytes);
RMM__PRIVATE rmm_status rmm__vm_create(uint64_t *handle, size_t bytes, int device);
RMM__PRIVATE void rmm__vm_release(uint64_t handle, size_t bytes);
RMM__PRIVATE rmm_status rmm__vm_map(char *va, size_t bytes, uint64_t handle, size_t offset); /* [offset, offset + bytes) of handle */
RMM__PRIVATE rmm_status rmm__vm_set_access(char *va, size_t bytes, int device); /* one call for a run of mapped pages */
RMM__PRIVATE rmm_status rmm__vm_unmap(char *va, size_t bytes);

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
    return rmm__fail_cuda((int)err, status, "%s(%s) failed: %s (%s)", call, detail, cudaGetErrorName(err), cudaGetErrorString(err));
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
RMM__PRIVATE rmm_status rmm__set_device(int device) {
    RMM__CU(cudaSetDevice(device), "cudaSetDevice", "device=%d", device);
    return RMM_SUCCESS;
}
/* A driver function by name (cudaGetDriverEntryPointByVersion: nothing links against libcuda), or
   false with *fn NULL. Called once per function (pthread_once). */
RMM__PRIVATE bool rmm__driver_entry(const char *name, void **fn) {
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &q) != cudaSuccess || q != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        *fn = NULL;
        return false;
    }
    return true;
}
typedef int (*rmm__ctx_state_fn)(int device, unsigned *flags, int *active); /* cuDevicePrimaryCtxGetState */
static rmm__ctx_state_fn rmm__ctx_state;
/* The current device: the device of the thread's current context from the driver (cuCtxGetCurrent,
   then cuCtxGetDevice: 20-27 ns on an H200's host against the runtime's cudaGetDevice at 43-58),
   else, when no context is current (a thread that has not used CUDA yet) or an entry point is
   missing, cudaGetDevice, which then gives the runtime's device (0 unless set). The runtime follows
   the driver's current context, so both give the same device whenever one is current.
   cuCtxGetDevice is asked only with a context current: without one it fails, and
   compute-sanitizer reports every failed driver call in the user's program. */
typedef int (*rmm__ctx_current_fn)(void **ctx); /* cuCtxGetCurrent */
typedef int (*rmm__ctx_device_fn)(int *device); /* cuCtxGetDevice */
static rmm__ctx_current_fn rmm__ctx_current;
static rmm__ctx_device_fn rmm__ctx_device;
/* The driver calls an eager stream's allocate and free make: cuStreamGetId (see
   rmm__stream_unique_id), cuEventRecord and cuEventQuery (the pool's ring and the arena's batches: rmm__so_refresh_done).
   They skip the runtime's wrapper around the same calls (bench/stream_identity times both). */
typedef int (*rmm__stream_id_fn)(cudaStream_t stream, unsigned long long *id); /* cuStreamGetId */
typedef int (*rmm__event_record_fn)(cudaEvent_t event, cudaStream_t stream);   /* cuEventRecord */
typedef int (*rmm__event_query_fn)(cudaEvent_t event);                         /* cuEventQuery */
static rmm__stream_id_fn rmm__stream_id_driver;
static rmm__event_record_fn rmm__event_record_driver;
static rmm__event_query_fn rmm__event_query_driver;
/* Every driver function the platform layer calls outside the VMM calls, looked up once (a NULL
   pointer: not there; its caller falls back to the runtime). */
static pthread_once_t rmm__driver_once = PTHREAD_ONCE_INIT;
RMM__PRIVATE void rmm__driver_load(void) {
    void *fn = NULL, *fn2 = NULL;
    if (rmm__driver_entry("cuDevicePrimaryCtxGetState", &fn)) memcpy(&rmm__ctx_state, &fn, sizeof fn);
    if (rmm__driver_entry("cuCtxGetCurrent", &fn) && rmm__driver_entry("cuCtxGetDevice", &fn2)) {
        memcpy(&rmm__ctx_current, &fn, sizeof fn);
        memcpy(&rmm__ctx_device, &fn2, sizeof fn2);
    }
    if (rmm__driver_entry("cuStreamGetId", &fn)) memcpy(&rmm__stream_id_driver, &fn, sizeof fn);
    if (rmm__driver_entry("cuEventRecord", &fn)) memcpy(&rmm__event_record_driver, &fn, sizeof fn);
    if (rmm__driver_entry("cuEventQuery", &fn)) memcpy(&rmm__event_query_driver, &fn, sizeof fn);
}
RMM__PRIVATE rmm_status rmm__get_device(int *device) {
    void *ctx = NULL;
    int d = -1;
    *device = 0; /* (a store the compiler sees: gcc -O3 warned that callers might read it unset, as
                    cudaGetDevice's write is out of its sight; a review's find) */
    (void)pthread_once(&rmm__driver_once, rmm__driver_load);
    if (RMM__LIKELY(rmm__ctx_device != NULL) && rmm__ctx_current(&ctx) == 0 && ctx && rmm__ctx_device(&d) == 0 && d >= 0) {
        *device = d;
        return RMM_SUCCESS;
    }
    RMM__CU(cudaGetDevice(device), "cudaGetDevice", "%s", "");
    return RMM_SUCCESS;
}
RMM__PRIVATE bool rmm__device_peek(int *device) {
    rmm__kept_error kept;
    bool ok;
    rmm__error_keep(&kept);
    ok = rmm__get_device(device) == RMM_SUCCESS;
    rmm__error_back(&kept);
    return ok;
}
RMM__PRIVATE bool rmm__device_context_active(int device) {
    unsigned flags = 0;
    int active = 1;
    (void)pthread_once(&rmm__driver_once, rmm__driver_load);
    if (!rmm__ctx_state || rmm__ctx_state(device, &flags, &active) != 0) return true;
    return active != 0;
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
/* Records event on stream: the driver's cuEventRecord for a stream handle (the legacy default
   stream, NULL, goes through the runtime, which maps it as the implementing file was compiled:
   legacy or per-thread); where that is missing or fails, the runtime's call, which then says why. */
RMM__PRIVATE rmm_status rmm__event_record(rmm__event event, rmm_stream stream) {
    (void)pthread_once(&rmm__driver_once, rmm__driver_load);
    if (RMM__LIKELY(rmm__event_record_driver != NULL && stream != NULL) && rmm__event_record_driver((cudaEvent_t)event, stream) == 0) return RMM_SUCCESS;
    RMM__CU(cudaEventRecord((cudaEvent_t)event, stream), "cudaEventRecord", "stream=%p", (void *)stream);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__event_synchronize(rmm__event event) {
    RMM__CU(cudaEventSynchronize((cudaEvent_t)event), "cudaEventSynchronize", "%s", "");
    return RMM_SUCCESS;
}
/* Whether event's last record is complete: the driver's cuEventQuery (0: done, 600: not ready),
   else, or on any other answer, the runtime's (which then says why). */
RMM__PRIVATE rmm_status rmm__event_query(rmm__event event, bool *done) {
    cudaError_t err;
    (void)pthread_once(&rmm__driver_once, rmm__driver_load);
    if (RMM__LIKELY(rmm__event_query_driver != NULL)) {
        int r = rmm__event_query_driver((cudaEvent_t)event);
        if (r == 0 || r == 600) { /* CUDA_SUCCESS, CUDA_ERROR_NOT_READY */
            *done = r == 0;
            return RMM_SUCCESS;
        }
    }
    err = cudaEventQuery((cudaEvent_t)event);
    *done = err == cudaSuccess;
    if (err == cudaSuccess || err == cudaErrorNotReady) {
        if (err == cudaErrorNotReady) (void)cudaGetLastError();
        return RMM_SUCCESS;
    }
    return rmm__cuda_fail(err, "cudaEventQuery", "%s", "");
}
RMM__PRIVATE rmm_status rmm__stream_wait_event(rmm_stream stream, rmm__event event) {
    RMM__CU(cudaStreamWaitEvent(stream, (cudaEvent_t)event, 0), "cudaStreamWaitEvent", "stream=%p", (void *)stream);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_create_raw(rmm_stream *stream, bool blocking) {
    RMM__CU(cudaStreamCreateWithFlags(stream, blocking ? cudaStreamDefault : cudaStreamNonBlocking), "cudaStreamCreateWithFlags", "%s",
            blocking ? "cudaStreamDefault" : "cudaStreamNonBlocking");
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
/* A key that names the stream for the life of the process (handles are reused after destroy, even
   while the destroyed stream's work still runs: bench/stream_identity saw it 32 times in 32 on an
   H100). The driver's cuStreamGetId, reached once through cudaGetDriverEntryPointByVersion, is the
   same id as the runtime's cudaStreamGetId at a fraction of its cost: measured on an H100 (driver
   580, CUDA 13.0), 17 ns against 59 from one thread, and 108 ns against 1334 ns from 16 threads
   at once, each on its own stream (the runtime's call serializes its callers). Where the entry
   point is missing, or the driver call fails (the runtime's call then says why), the runtime's. */
RMM__PRIVATE rmm_status rmm__stream_unique_id(rmm_stream stream, uint64_t *id) {
    unsigned long long raw = 0;
    (void)pthread_once(&rmm__driver_once, rmm__driver_load);
    if (RMM__LIKELY(rmm__stream_id_driver != NULL) && rmm__stream_id_driver(stream, &raw) == 0) {
        *id = (uint64_t)raw;
        return RMM_SUCCESS;
    }
    RMM__CU(cudaStreamGetId(stream, &raw), "cudaStreamGetId", "stream=%p", (void *)stream);
    *id = (uint64_t)raw;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__capture_mode_exchange(int *mode) {
    enum cudaStreamCaptureMode m = (enum cudaStreamCaptureMode)*mode;
    RMM__CU(cudaThreadExchangeStreamCaptureMode(&m), "cudaThreadExchangeStreamCaptureMode", "mode=%d", *mode);
    *mode = (int)m;
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
    int concurrent = 0, probe = device;
    cudaError_t err;
    struct cudaMemLocation loc;
    if (probe < 0) RMM__CU(cudaGetDevice(&probe), "cudaGetDevice", "%s", "");
    if (cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, probe) != cudaSuccess || !concurrent) {
        (void)cudaGetLastError();
        return RMM_SUCCESS;
    }
    memset(&loc, 0, sizeof loc);
    loc.type = device < 0 ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    loc.id = device < 0 ? 0 : device;
    err = cudaMemPrefetchAsync(ptr, bytes, loc, 0, stream);
    if (err == cudaErrorInvalidValue) {
        (void)cudaGetLastError();
        return RMM_SUCCESS;
    }
    if (err != cudaSuccess) return rmm__cuda_fail(err, "cudaMemPrefetchAsync", "ptr=%p, bytes=%zu", ptr, bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__device_attribute(int attribute, int device, int *value, int *cuda_error) {
    cudaError_t err = cudaDeviceGetAttribute(value, (enum cudaDeviceAttr)attribute, device);
    if (err == cudaSuccess) return RMM_SUCCESS;
    *value = 0;
    *cuda_error = (int)err;
    return rmm__cuda_fail(err, "cudaDeviceGetAttribute", "attr=%d, device=%d", attribute, device);
}
RMM__PRIVATE rmm_status rmm__versions(int *runtime, int *driver) {
    cudaError_t rerr = cudaRuntimeGetVersion(runtime), derr = cudaDriverGetVersion(driver); /* (no driver: 0, success) */
    if (rerr != cudaSuccess) *runtime = 0;
    if (derr != cudaSuccess) *driver = 0;
    if (rerr != cudaSuccess) return rmm__cuda_fail(rerr, "cudaRuntimeGetVersion", "%s", "");
    if (derr != cudaSuccess) return rmm__cuda_fail(derr, "cudaDriverGetVersion", "%s", "");
    return RMM_SUCCESS;
}
/* CUDA IPC. The exports fail NOT_SUPPORTED for "invalid value" (a pool made without an export
   handle type, a pointer that is no block of an exportable pool) and "not supported" (a device or
   driver without POSIX fd handles), else as any CUDA call (until red team 33 every error but out
   of memory was NOT_SUPPORTED: a sticky error read as "cannot export", and rmmh's GPU test
   skipped); every call NOT_SUPPORTED for cudaErrorNotSupported. */
RMM__STATIC_ASSERT(sizeof(cudaIpcMemHandle_t) == RMM_IPC_HANDLE_BYTES, ipc_mem_handle_is_64_bytes);
RMM__STATIC_ASSERT(sizeof(struct cudaMemPoolPtrExportData) == RMM_IPC_HANDLE_BYTES, pool_pointer_export_data_is_64_bytes);
RMM__PRIVATE rmm_status rmm__ipc_fail(cudaError_t err, const char *call, bool export_any) {
    if (export_any && (err == cudaErrorInvalidValue || err == cudaErrorNotSupported)) {
        const char *name = cudaGetErrorName(err);
        (void)cudaGetLastError();
        return rmm__fail_cuda((int)err, RMM_ERROR_NOT_SUPPORTED,
                         "%s failed: %s: not supported here (an async resource must be created with RMM_EXPORT_POSIX_FD, in Python "
                         "enable_ipc=True, on a device and driver that support POSIX file descriptor handles)",
                         call, name);
    }
    if (err == cudaErrorNotSupported) {
        (void)cudaGetLastError();
        return rmm__fail_cuda((int)err, RMM_ERROR_NOT_SUPPORTED, "%s failed: cudaErrorNotSupported: not supported on this device or driver", call);
    }
    return rmm__cuda_fail(err, call, "%s", "");
}
#define RMM__IPC(expr, call, export_any)                                   \
    do {                                                                    \
        cudaError_t rmm__ipc_err_ = (expr);                                 \
        if (rmm__ipc_err_ != cudaSuccess) return rmm__ipc_fail(rmm__ipc_err_, call, export_any); \
    } while (0)
RMM__PRIVATE rmm_status rmm__ipc_get(void *base, unsigned char *handle) {
    cudaIpcMemHandle_t h;
    RMM__IPC(cudaIpcGetMemHandle(&h, base), "cudaIpcGetMemHandle", false);
    memcpy(handle, &h, sizeof h);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__ipc_open(const unsigned char *handle, void **base) {
    cudaIpcMemHandle_t h;
    memcpy(&h, handle, sizeof h);
    RMM__IPC(cudaIpcOpenMemHandle(base, h, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle", false);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__ipc_close(void *base) {
    RMM__IPC(cudaIpcCloseMemHandle(base), "cudaIpcCloseMemHandle", false);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mempool_export_fd(rmm_mem_pool pool, int *fd) {
    int handle = -1;
    RMM__IPC(cudaMemPoolExportToShareableHandle(&handle, pool, cudaMemHandleTypePosixFileDescriptor, 0), "cudaMemPoolExportToShareableHandle", true);
    *fd = handle;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mempool_import_fd(int fd, rmm_mem_pool *pool) {
    RMM__IPC(cudaMemPoolImportFromShareableHandle(pool, (void *)(intptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0),
             "cudaMemPoolImportFromShareableHandle", false);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mempool_export_ptr(void *ptr, unsigned char *handle) {
    struct cudaMemPoolPtrExportData d;
    RMM__IPC(cudaMemPoolExportPointer(&d, ptr), "cudaMemPoolExportPointer", true);
    memcpy(handle, &d, sizeof d);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mempool_import_ptr(rmm_mem_pool pool, const unsigned char *handle, void **ptr) {
    struct cudaMemPoolPtrExportData d;
    memcpy(&d, handle, sizeof d);
    RMM__IPC(cudaMemPoolImportPointer(ptr, pool, &d), "cudaMemPoolImportPointer", false);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__imported_free(void *ptr) {
    RMM__IPC(cudaFree(ptr), "cudaFree (an imported pointer)", false);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mempool_destroy_imported(rmm_mem_pool pool) {
    RMM__IPC(cudaMemPoolDestroy(pool), "cudaMemPoolDestroy", false);
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
/* cudaMemLocationTypeHost first; a driver that takes only NUMA-node pools gets the device's nearest
   host NUMA node (cudaDevAttrHostNumaId; node 0 where it has none). Then read-write access for every
   device (a host pool is reachable from no device until cudaMemPoolSetAccess says so). */
RMM__PRIVATE rmm_status rmm__mempool_create_pinned(rmm_mem_pool *pool, int device, uint64_t release_threshold) {
    struct cudaMemPoolProps props;
    cudaMemPool_t p;
    cudaError_t err;
    int numa = 0, numa_pools = 0, count = 0, d;
    const char *call = "cudaMemPoolSetAccess";
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeHost;
    props.location.id = 0;
    err = cudaMemPoolCreate(&p, &props);
    if (err == cudaErrorNotSupported || err == cudaErrorInvalidValue) {
        (void)cudaGetLastError();
        if (cudaDeviceGetAttribute(&numa_pools, cudaDevAttrHostNumaMemoryPoolsSupported, device) != cudaSuccess || !numa_pools) {
            (void)cudaGetLastError();
            return rmm__fail_cuda((int)err, RMM_ERROR_NOT_SUPPORTED, "rmm_async_pinned_resource_create: the driver makes no pinned host memory pools for device %d "
                                  "(cudaMemPoolCreate with cudaMemLocationTypeHost: %s; cudaDevAttrHostNumaMemoryPoolsSupported is 0)", device, cudaGetErrorName(err));
        }
        if (cudaDeviceGetAttribute(&numa, cudaDevAttrHostNumaId, device) != cudaSuccess || numa < 0) {
            (void)cudaGetLastError();
            numa = 0;
        }
        props.location.type = cudaMemLocationTypeHostNuma;
        props.location.id = numa;
        err = cudaMemPoolCreate(&p, &props);
    }
    if (err != cudaSuccess) return rmm__cuda_fail(err, "cudaMemPoolCreate", "pinned host pool, location type %d, id %d", (int)props.location.type, props.location.id);
    err = cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &release_threshold);
    if (err != cudaSuccess) call = "cudaMemPoolSetAttribute";
    else if ((err = cudaGetDeviceCount(&count)) != cudaSuccess) call = "cudaGetDeviceCount";
    for (d = 0; err == cudaSuccess && d < count; d++) {
        struct cudaMemAccessDesc access;
        memset(&access, 0, sizeof access);
        access.location.type = cudaMemLocationTypeDevice;
        access.location.id = d;
        access.flags = cudaMemAccessFlagsProtReadWrite;
        err = cudaMemPoolSetAccess(p, &access, 1);
    }
    if (err != cudaSuccess) {
        rmm_status st = rmm__cuda_fail(err, call, "pinned host pool, device %d of %d", d - 1, count);
        (void)cudaMemPoolDestroy(p);
        return st;
    }
    *pool = p;
    return RMM_SUCCESS;
}
/* The default managed pool of a device (CUDA 13): NOT_SUPPORTED before CUDA 13 or without concurrent
   managed access. A zero release threshold is raised to UINT64_MAX (RMM's rule: keep what is freed). */
RMM__PRIVATE rmm_status rmm__mempool_default_managed(rmm_mem_pool *pool, int device) {
#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
    int runtime = 0, concurrent = 0;
    struct cudaMemLocation loc;
    cudaMemPool_t p;
    uint64_t threshold = 0;
    RMM__CU(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion", "%s", "");
    if (runtime < 13000)
        return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_async_managed_resource_create: needs CUDA 13 (the runtime is %d)", runtime);
    RMM__CU(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device), "cudaDeviceGetAttribute", "cudaDevAttrConcurrentManagedAccess, device=%d", device);
    if (!concurrent)
        return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_async_managed_resource_create: device %d has no concurrent managed access (cudaDevAttrConcurrentManagedAccess is 0)", device);
    memset(&loc, 0, sizeof loc);
    loc.type = cudaMemLocationTypeDevice;
    loc.id = device;
    RMM__CU(cudaMemGetDefaultMemPool(&p, &loc, cudaMemAllocationTypeManaged), "cudaMemGetDefaultMemPool", "device=%d, cudaMemAllocationTypeManaged", device);
    RMM__CU(cudaMemPoolGetAttribute(p, cudaMemPoolAttrReleaseThreshold, &threshold), "cudaMemPoolGetAttribute", "cudaMemPoolAttrReleaseThreshold, device=%d", device);
    if (threshold == 0) {
        threshold = UINT64_MAX;
        RMM__CU(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &threshold), "cudaMemPoolSetAttribute", "cudaMemPoolAttrReleaseThreshold=UINT64_MAX, device=%d", device);
    }
    *pool = p;
    return RMM_SUCCESS;
#else
    (void)pool;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_async_managed_resource_create: device %d: rmm.h was built against a CUDA older than 13 (no default managed pool)", device);
#endif
}
RMM__PRIVATE rmm_status rmm__mempool_malloc_async(void **ptr, size_t bytes, rmm_mem_pool pool, rmm_stream stream) {
    RMM__CU(cudaMallocFromPoolAsync(ptr, bytes, pool, stream), "cudaMallocFromPoolAsync", "bytes=%zu, stream=%p", bytes, (void *)stream);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__free_async(void *ptr, rmm_stream stream) {
    RMM__CU(cudaFreeAsync(ptr, stream), "cudaFreeAsync", "ptr=%p, stream=%p", ptr, (void *)stream);
    return RMM_SUCCESS;
}
/* Virtual memory (the driver's VMM API, reached through cudaGetDriverEntryPointByVersion so that
   nothing links against libcuda): reserve an address range, back it page by page. */
#include <cuda.h>
typedef struct rmm__vmm_api {
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*address_free)(CUdeviceptr, size_t);
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
    CUresult (*release)(CUmemGenericAllocationHandle);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*unmap)(CUdeviceptr, size_t);
    CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    CUresult (*granularity)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
    CUresult (*get_attribute)(int *, CUdevice_attribute, CUdevice);
    bool loaded;
} rmm__vmm_api;
static rmm__vmm_api rmm__vmm;
static pthread_once_t rmm__vmm_once = PTHREAD_ONCE_INIT;
RMM__PRIVATE void rmm__vmm_load(void) {
    void *f[9];
    static const char *const names[9] = {"cuMemAddressReserve", "cuMemAddressFree", "cuMemCreate", "cuMemRelease", "cuMemMap",
                                         "cuMemUnmap", "cuMemSetAccess", "cuMemGetAllocationGranularity", "cuDeviceGetAttribute"};
    int i;
    bool ok = true;
    for (i = 0; i < 9; i++) ok = rmm__driver_entry(names[i], &f[i]) && ok;
    if (!ok) return;
    memcpy(&rmm__vmm.reserve, &f[0], sizeof f[0]);
    memcpy(&rmm__vmm.address_free, &f[1], sizeof f[1]);
    memcpy(&rmm__vmm.create, &f[2], sizeof f[2]);
    memcpy(&rmm__vmm.release, &f[3], sizeof f[3]);
    memcpy(&rmm__vmm.map, &f[4], sizeof f[4]);
    memcpy(&rmm__vmm.unmap, &f[5], sizeof f[5]);
    memcpy(&rmm__vmm.set_access, &f[6], sizeof f[6]);
    memcpy(&rmm__vmm.granularity, &f[7], sizeof f[7]);
    memcpy(&rmm__vmm.get_attribute, &f[8], sizeof f[8]);
    rmm__vmm.loaded = true;
}
RMM__PRIVATE rmm_status rmm__cu_fail(CUresult r, const char *call, size_t bytes) {
    return rmm__fail_cuda((int)r, r == CUDA_ERROR_OUT_OF_MEMORY ? RMM_ERROR_OUT_OF_MEMORY : RMM_ERROR_CUDA, "%s(bytes=%zu) failed: CUresult %d%s", call, bytes,
                     (int)r, r == CUDA_ERROR_OUT_OF_MEMORY ? " (CUDA_ERROR_OUT_OF_MEMORY)" : "");
}
RMM__PRIVATE void rmm__vm_prop(CUmemAllocationProp *prop, int device) {
    memset(prop, 0, sizeof *prop);
    prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop->location.id = device;
}
/* The page size of `device`'s virtual memory; NOT_SUPPORTED without the VMM API. */
RMM__PRIVATE rmm_status rmm__vm_granularity(int device, size_t *granularity) {
    CUmemAllocationProp prop;
    int supported = 0;
    CUresult r;
    pthread_once(&rmm__vmm_once, rmm__vmm_load);
    if (!rmm__vmm.loaded) return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "virtual memory: the driver does not provide the VMM API (cuMemCreate, cuMemMap, ...)");
    if (rmm__vmm.get_attribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, (CUdevice)device) != CUDA_SUCCESS || !supported)
        return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "virtual memory: device %d does not support virtual memory management", device);
    rmm__vm_prop(&prop, device);
    r = rmm__vmm.granularity(granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    if (r != CUDA_SUCCESS) return rmm__cu_fail(r, "cuMemGetAllocationGranularity", 0);
    if (*granularity < 2 * RMM__MIB) *granularity = 2 * RMM__MIB;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__vm_reserve(char **base, size_t bytes, size_t alignment) {
    CUdeviceptr p = 0;
    CUresult r = rmm__vmm.reserve(&p, bytes, alignment, 0, 0);
    if (r != CUDA_SUCCESS) return rmm__cu_fail(r, "cuMemAddressReserve", bytes);
    *base = (char *)(uintptr_t)p;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__vm_free(char *base, size_t bytes) { (void)rmm__vmm.address_free((CUdeviceptr)(uintptr_t)base, bytes); }
RMM__PRIVATE rmm_status rmm__vm_create(uint64_t *handle, size_t bytes, int device) {
    CUmemAllocationProp prop;
    CUmemGenericAllocationHandle h = 0;
    CUresult r;
    rmm__vm_prop(&prop, device);
    r = rmm__vmm.create(&h, bytes, &prop, 0);
    if (r != CUDA_SUCCESS) return rmm__cu_fail(r, "cuMemCreate", bytes);
    *handle = (uint64_t)h;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__vm_release(uint64_t handle, size_t bytes) {
    (void)bytes;
    (void)rmm__vmm.release((CUmemGenericAllocationHandle)handle);
}
RMM__PRIVATE rmm_status rmm__vm_map(char *va, size_t bytes, uint64_t handle, size_t offset) {
    CUresult r = rmm__vmm.map((CUdeviceptr)(uintptr_t)va, bytes, offset, (CUmemGenericAllocationHandle)handle, 0);
    if (r != CUDA_SUCCESS) return rmm__cu_fail(r, "cuMemMap", bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__vm_set_access(char *va, size_t bytes, int device) {
    CUmemAccessDesc access;
    CUresult r;
    memset(&access, 0, sizeof access);
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    r = rmm__vmm.set_access((CUdeviceptr)(uintptr_t)va, bytes, &access, 1);
    if (r != CUDA_SUCCESS) return rmm__cu_fail(r, "cuMemSetAccess", bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__vm_unmap(char *va, size_t bytes) {
    CUresult r = rmm__vmm.unmap((CUdeviceptr)(uintptr_t)va, bytes);
    if (r != CUDA_SUCCESS) return rmm__cu_fail(r, "cuMemUnmap", bytes);
    return RMM_SUCCESS;
}
#define RMM__BACKEND_NAME "cuda"

#else /* ----------------------------------------------------- host backend ------------------ */

/* The CUDA error numbers the simulated calls fail with (rmm_last_cuda_error; cudaError_t's values,
   which the driver's CUresult shares for these): out of memory (the device's or the host's, for
   the backend's records), an invalid value, device or handle, and anything else (an injected
   failure, an mmap or mprotect of the simulated virtual memory) as cudaErrorUnknown. */
enum { RMM__HOST_ERR_VALUE = 1, RMM__HOST_ERR_OOM = 2, RMM__HOST_ERR_DEVICE = 101, RMM__HOST_ERR_HANDLE = 400, RMM__HOST_ERR_UNKNOWN = 999 };

/* Streams are small records that are never freed: a destroyed one is reused by the next create,
   as CUDA reuses handles, so the library's detection of handle reuse is exercised here too. Every
   handle the library is given is checked: a destroyed or never-created one fails as CUDA's
   cudaErrorInvalidResourceHandle, instead of being read. */
struct rmm__host_stream {
    uint64_t id;
    uint32_t magic;
    struct rmm__host_stream *next_spare;
};
struct rmm__host_mempool {
    int device;
    unsigned handle_types;
    uint64_t release_threshold;
};
#define RMM__HOST_STREAM_MAGIC 0x57AE4D11u
#define RMM__HOST_STREAM_DEAD 0xDEAD57AEu
#define RMM__HOST_HEADER ((size_t)256) /* the size of an allocation is kept just below it */
static size_t rmm__host_capacity = RMM_HOST_BACKEND_BYTES;
static size_t rmm__host_used;
static uint64_t rmm__host_next_stream_id = 16;
static RMM__TLS int rmm__host_current_device;
/* The simulated primary contexts: a device's becomes active when it is made current, or when
   memory, a stream or an event is made on it (as CUDA's does). Tests may clear them. */
static int rmm__host_context[RMM_HOST_BACKEND_DEVICES];
static rmm__mutex rmm__host_streams_lock = RMM__MUTEX_INIT;
static rmm__addr_map rmm__host_streams;       /* every stream record ever made */
static struct rmm__host_stream *rmm__host_spare_streams;
static const rmm_host_stream_model *rmm__host_model; /* (rmm_host_backend_set_stream_model) */
#define RMM__HOST_MODEL() ((const rmm_host_stream_model *)RMM__ATOMIC_LOAD(&rmm__host_model))
RMM__IMPL void rmm_host_backend_set_stream_model(const rmm_host_stream_model *model) { RMM__ATOMIC_STORE(&rmm__host_model, model); }
/* Tells the model (if any) of work enqueued on `stream`: a copy, fill or prefetch. */
static inline void rmm__host_model_work(rmm_stream stream) {
    const rmm_host_stream_model *m = RMM__HOST_MODEL();
    if (m) m->stream_work(m->user, stream);
}

RMM__IMPL void rmm_host_backend_set_capacity(size_t bytes) { RMM__ATOMIC_STORE(&rmm__host_capacity, bytes); }

/* Injected failures, for tests of error paths (rmm_host_backend_fail_calls). */
static struct {
    rmm__mutex lock;
    int armed;
    char call[160];
    unsigned skip, times;
    rmm_status status;
} rmm__host_faults = {RMM__MUTEX_INIT, 0, "", 0, 0, RMM_SUCCESS};
RMM__IMPL void rmm_host_backend_fail_calls(const char *call, unsigned nth, unsigned times, rmm_status status) {
    rmm__lock(&rmm__host_faults.lock);
    rmm__copy_text(rmm__host_faults.call, sizeof rmm__host_faults.call, call ? call : "");
    if (call && strlen(call) >= sizeof rmm__host_faults.call) { /* (cut at the last whole name: a cut one could name another call) */
        char *bar = strrchr(rmm__host_faults.call, '|');
        if (bar) *bar = '\0';
        else rmm__host_faults.call[0] = '\0';
    }
    rmm__host_faults.skip = nth > 0 ? nth - 1 : 0;
    rmm__host_faults.times = call ? times : 0;
    rmm__host_faults.status = (int)status <= (int)RMM_SUCCESS || (int)status > (int)RMM_ERROR_CORRUPTION ? RMM_ERROR_CUDA : status;
    RMM__ATOMIC_STORE(&rmm__host_faults.armed, rmm__host_faults.times > 0);
    rmm__unlock(&rmm__host_faults.lock);
}
/* Whether `name` is one of the '|'-separated names of `list`. O(length of list). */
RMM__PRIVATE bool rmm__name_listed(const char *list, const char *name) {
    size_t n = strlen(name);
    for (;;) {
        const char *bar = strchr(list, '|');
        size_t len = bar ? (size_t)(bar - list) : strlen(list);
        if (len == n && memcmp(list, name, n) == 0) return true;
        if (!bar) return false;
        list = bar + 1;
    }
}
/* true (and *status set) iff this call of `call` is to fail. One relaxed load when nothing is armed. */
RMM__PRIVATE bool rmm__host_fault(const char *call, rmm_status *status) {
    bool hit = false;
    if (RMM__LIKELY(!RMM__ATOMIC_LOAD_RELAXED(&rmm__host_faults.armed))) return false;
    rmm__lock(&rmm__host_faults.lock);
    if (rmm__host_faults.times > 0 && rmm__name_listed(rmm__host_faults.call, call)) {
        if (rmm__host_faults.skip > 0) {
            rmm__host_faults.skip--;
        } else {
            hit = true;
            *status = rmm__host_faults.status;
            if (--rmm__host_faults.times == 0) RMM__ATOMIC_STORE(&rmm__host_faults.armed, 0);
        }
    }
    rmm__unlock(&rmm__host_faults.lock);
    return hit;
}
#define RMM__HOST_FAULT(call)                                                                                  \
    do {                                                                                                       \
        rmm_status rmm__fault_st_;                                                                             \
        if (RMM__UNLIKELY(rmm__host_fault((call), &rmm__fault_st_))) {                                        \
            bool rmm__fault_oom_ = rmm__fault_st_ == RMM_ERROR_OUT_OF_MEMORY;                                  \
            return rmm__fail_cuda(rmm__fault_oom_ ? RMM__HOST_ERR_OOM : RMM__HOST_ERR_UNKNOWN, rmm__fault_st_,  \
                                  "%s() failed: %s (injected by rmm_host_backend_fail_calls)", (call),         \
                                  rmm__fault_oom_ ? "cudaErrorMemoryAllocation" : "cudaErrorUnknown");         \
        }                                                                                                      \
    } while (0)

/* SUCCESS iff `stream` is a special handle or a live stream record. */
/* The id of `stream`, a stream made by rmm__stream_create_raw and not destroyed; 0 if it is not
   one. (Not for the default handles, 0-2.) */
RMM__PRIVATE uint64_t rmm__host_stream_live_id(rmm_stream stream) {
    uint64_t id = 0;
    rmm__lock(&rmm__host_streams_lock);
    if (rmm__host_streams.slots && rmm__addr_map_find(&rmm__host_streams, (uintptr_t)stream) && stream->magic == RMM__HOST_STREAM_MAGIC) id = stream->id;
    rmm__unlock(&rmm__host_streams_lock);
    return id;
}
RMM__PRIVATE rmm_status rmm__host_stream_check(rmm_stream stream, const char *call) {
    if ((uintptr_t)stream <= 2) return RMM_SUCCESS;
    if (rmm__host_stream_live_id(stream) == 0) return rmm__fail_cuda(RMM__HOST_ERR_HANDLE, RMM_ERROR_CUDA, "%s(stream=%p) failed: cudaErrorInvalidResourceHandle (invalid resource handle)", call, (void *)stream);
    return RMM_SUCCESS;
}

/* Every live "device" and pinned allocation with its kind, so that a free of anything else (another
   kind's block among them: cudaFree of a cudaHostAlloc pointer, cudaFreeHost of a cudaMalloc one)
   fails as CUDA's does (cudaErrorInvalidValue) instead of reading a header that is not there or
   freeing an address malloc never gave (a red team's find: the kinds shared the map untold, and a
   free of the other kind aborted the process). */
#define RMM__HOST_COUNTED ((void *)(uintptr_t)1) /* cudaMalloc, cudaMallocManaged: a header before the block */
#define RMM__HOST_PINNED ((void *)(uintptr_t)2)  /* cudaHostAlloc: the block as posix_memalign gave it */
static rmm__mutex rmm__host_live_lock = RMM__MUTEX_INIT;
static rmm__addr_map rmm__host_live;
RMM__PRIVATE bool rmm__host_live_add(void *p, void *kind) {
    bool ok;
    rmm__lock(&rmm__host_live_lock);
    ok = (rmm__host_live.slots || rmm__addr_map_init(&rmm__host_live, 1024)) && rmm__addr_map_put(&rmm__host_live, (uintptr_t)p, kind);
    rmm__unlock(&rmm__host_live_lock);
    return ok;
}
/* Forgets p if it is a live allocation of `kind`; false (nothing changed) otherwise. */
RMM__PRIVATE bool rmm__host_live_remove(void *p, void *kind) {
    bool found = false;
    void **slot;
    rmm__lock(&rmm__host_live_lock);
    if (rmm__host_live.slots && (slot = rmm__addr_map_find(&rmm__host_live, (uintptr_t)p)) != NULL && *slot == kind)
        found = rmm__addr_map_remove(&rmm__host_live, (uintptr_t)p) != NULL;
    rmm__unlock(&rmm__host_live_lock);
    return found;
}
RMM__PRIVATE rmm_status rmm__host_malloc_counted(void **ptr, size_t bytes, const char *call) {
    size_t used, total;
    void *raw = NULL;
    RMM__HOST_FAULT(call);
    if (bytes > SIZE_MAX - RMM__HOST_HEADER) return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "%s(bytes=%zu) failed: cudaErrorMemoryAllocation (out of memory)", call, bytes);
    total = bytes + RMM__HOST_HEADER;
    RMM__ATOMIC_STORE(&rmm__host_context[rmm__host_current_device], 1);
    used = RMM__ATOMIC_ADD(&rmm__host_used, total);
    if (used > RMM__ATOMIC_LOAD(&rmm__host_capacity) || used < total || posix_memalign(&raw, 256, total) != 0) {
        RMM__ATOMIC_SUB(&rmm__host_used, total);
        return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "%s(bytes=%zu) failed: cudaErrorMemoryAllocation (out of memory; host backend capacity %zu bytes)",
                         call, bytes, RMM__ATOMIC_LOAD(&rmm__host_capacity));
    }
    memcpy(raw, &total, sizeof total);
    if (!rmm__host_live_add((char *)raw + RMM__HOST_HEADER, RMM__HOST_COUNTED)) {
        RMM__ATOMIC_SUB(&rmm__host_used, total);
        free(raw);
        return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "%s(bytes=%zu) failed: host out of memory for the backend's records", call, bytes);
    }
    *ptr = (char *)raw + RMM__HOST_HEADER;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__host_free_counted(void *ptr, const char *call) {
    size_t total;
    char *raw;
    RMM__HOST_FAULT(call);
    if (!ptr) return RMM_SUCCESS;
    if (!rmm__host_live_remove(ptr, RMM__HOST_COUNTED)) return rmm__fail_cuda(RMM__HOST_ERR_VALUE, RMM_ERROR_CUDA, "%s(ptr=%p) failed: cudaErrorInvalidValue (not an allocation, or freed already)", call, ptr);
    raw = (char *)ptr - RMM__HOST_HEADER;
    memcpy(&total, raw, sizeof total);
    RMM__ATOMIC_SUB(&rmm__host_used, total);
    free(raw);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__dev_malloc(void **ptr, size_t bytes) { return rmm__host_malloc_counted(ptr, bytes, "cudaMalloc"); }
RMM__PRIVATE rmm_status rmm__dev_free(void *ptr) {
    const rmm_host_stream_model *m = RMM__HOST_MODEL();
    if (m && ptr) m->device_synchronize(m->user); /* (cudaFree synchronizes the device) */
    return rmm__host_free_counted(ptr, "cudaFree");
}
RMM__PRIVATE rmm_status rmm__managed_malloc(void **ptr, size_t bytes) { return rmm__host_malloc_counted(ptr, bytes, "cudaMallocManaged"); }
RMM__PRIVATE rmm_status rmm__pinned_malloc(void **ptr, size_t bytes) {
    void *raw = NULL;
    RMM__HOST_FAULT("cudaHostAlloc");
    if (posix_memalign(&raw, 256, bytes) != 0)
        return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "cudaHostAlloc(bytes=%zu) failed: cudaErrorMemoryAllocation (out of memory)", bytes);
    if (!rmm__host_live_add(raw, RMM__HOST_PINNED)) {
        free(raw);
        return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "cudaHostAlloc(bytes=%zu) failed: host out of memory for the backend's records", bytes);
    }
    *ptr = raw;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__pinned_free(void *ptr) {
    RMM__HOST_FAULT("cudaFreeHost");
    if (ptr && !rmm__host_live_remove(ptr, RMM__HOST_PINNED)) return rmm__fail_cuda(RMM__HOST_ERR_VALUE, RMM_ERROR_CUDA, "cudaFreeHost(ptr=%p) failed: cudaErrorInvalidValue (not an allocation, or freed already)", ptr);
    free(ptr);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__device_count(int *count) {
    *count = 0; /* (as the CUDA backend's on failure) */
    RMM__HOST_FAULT("cudaGetDeviceCount");
    *count = RMM_HOST_BACKEND_DEVICES;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__get_device(int *device) {
    *device = 0; /* (set on an injected failure too, as the CUDA backend's) */
    RMM__HOST_FAULT("cudaGetDevice");
    *device = rmm__host_current_device;
    return RMM_SUCCESS;
}
RMM__PRIVATE bool rmm__device_peek(int *device) {
    *device = rmm__host_current_device;
    return true;
}
RMM__PRIVATE rmm_status rmm__set_device(int device) {
    RMM__HOST_FAULT("cudaSetDevice");
    if (device < 0 || device >= RMM_HOST_BACKEND_DEVICES)
        return rmm__fail_cuda(RMM__HOST_ERR_DEVICE, RMM_ERROR_CUDA, "cudaSetDevice(device=%d) failed: cudaErrorInvalidDevice (invalid device ordinal)", device);
    rmm__host_current_device = device;
    RMM__ATOMIC_STORE(&rmm__host_context[device], 1);
    return RMM_SUCCESS;
}
RMM__PRIVATE bool rmm__device_context_active(int device) {
    return device < 0 || device >= RMM_HOST_BACKEND_DEVICES || RMM__ATOMIC_LOAD(&rmm__host_context[device]) != 0;
}
RMM__PRIVATE rmm_status rmm__mem_info(size_t *free_bytes, size_t *total_bytes) {
    size_t cap = RMM__ATOMIC_LOAD(&rmm__host_capacity), used = RMM__ATOMIC_LOAD(&rmm__host_used);
    RMM__HOST_FAULT("cudaMemGetInfo");
    *free_bytes = used < cap ? cap - used : 0;
    *total_bytes = cap;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__device_synchronize(void) {
    const rmm_host_stream_model *m = RMM__HOST_MODEL();
    RMM__HOST_FAULT("cudaDeviceSynchronize");
    if (m) m->device_synchronize(m->user);
    return RMM_SUCCESS;
}
/* Host work runs when it is enqueued, so events are complete as soon as they are recorded. */
RMM__PRIVATE rmm_status rmm__event_create(rmm__event *event) {
    void *e;
    RMM__HOST_FAULT("cudaEventCreateWithFlags");
    RMM__ATOMIC_STORE(&rmm__host_context[rmm__host_current_device], 1);
    e = RMM_SYS_MALLOC(16);
    if (!e) return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "cudaEventCreateWithFlags() failed: host out of memory");
    *event = e;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__event_destroy(rmm__event event) {
    const rmm_host_stream_model *m = RMM__HOST_MODEL();
    if (m && event) m->event_destroy(m->user, event);
    RMM_SYS_FREE(event);
}
RMM__PRIVATE rmm_status rmm__event_record(rmm__event event, rmm_stream stream) {
    const rmm_host_stream_model *m = RMM__HOST_MODEL();
    RMM__HOST_FAULT("cudaEventRecord");
    RMM_TRY(rmm__host_stream_check(stream, "cudaEventRecord"));
    if (m) m->event_record(m->user, event, stream);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__event_synchronize(rmm__event event) {
    const rmm_host_stream_model *m = RMM__HOST_MODEL();
    RMM__HOST_FAULT("cudaEventSynchronize");
    if (m) m->event_synchronize(m->user, event);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__event_query(rmm__event event, bool *done) {
    const rmm_host_stream_model *m = RMM__HOST_MODEL();
    RMM__HOST_FAULT("cudaEventQuery");
    *done = m ? m->event_query(m->user, event) : true;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_wait_event(rmm_stream stream, rmm__event event) {
    const rmm_host_stream_model *m = RMM__HOST_MODEL();
    RMM__HOST_FAULT("cudaStreamWaitEvent");
    RMM_TRY(rmm__host_stream_check(stream, "cudaStreamWaitEvent"));
    if (m) m->stream_wait_event(m->user, stream, event);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_create_raw(rmm_stream *stream, bool blocking) {
    struct rmm__host_stream *s;
    (void)blocking; /* host streams all run in order */
    RMM__HOST_FAULT("cudaStreamCreateWithFlags");
    RMM__ATOMIC_STORE(&rmm__host_context[rmm__host_current_device], 1);
    rmm__lock(&rmm__host_streams_lock);
    s = rmm__host_spare_streams;
    if (s) {
        rmm__host_spare_streams = s->next_spare;
    } else {
        s = (struct rmm__host_stream *)RMM_SYS_MALLOC(sizeof *s);
        if (s && ((!rmm__host_streams.slots && !rmm__addr_map_init(&rmm__host_streams, 64)) || !rmm__addr_map_put(&rmm__host_streams, (uintptr_t)s, s))) {
            RMM_SYS_FREE(s);
            s = NULL;
        }
    }
    if (s) {
        s->id = RMM__ATOMIC_ADD(&rmm__host_next_stream_id, 1);
        s->magic = RMM__HOST_STREAM_MAGIC;
        s->next_spare = NULL;
    }
    rmm__unlock(&rmm__host_streams_lock);
    if (!s) return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "cudaStreamCreateWithFlags() failed: host out of memory");
    *stream = s;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_destroy_raw(rmm_stream stream) {
    RMM__HOST_FAULT("cudaStreamDestroy");
    RMM_TRY(rmm__host_stream_check(stream, "cudaStreamDestroy"));
    if ((uintptr_t)stream <= 2) return rmm__fail_cuda(RMM__HOST_ERR_HANDLE, RMM_ERROR_CUDA, "cudaStreamDestroy(stream=%p) failed: cudaErrorInvalidResourceHandle", (void *)stream);
    rmm__lock(&rmm__host_streams_lock);
    stream->magic = RMM__HOST_STREAM_DEAD;
    stream->next_spare = rmm__host_spare_streams;
    rmm__host_spare_streams = stream;
    rmm__unlock(&rmm__host_streams_lock);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__stream_sync_raw(rmm_stream stream) {
    const rmm_host_stream_model *m = RMM__HOST_MODEL();
    RMM__HOST_FAULT("cudaStreamSynchronize");
    RMM_TRY(rmm__host_stream_check(stream, "cudaStreamSynchronize"));
    if (m) m->stream_synchronize(m->user, stream);
    return RMM_SUCCESS;
}
RMM__IMPL uint64_t rmm_host_backend_stream_serial(rmm_stream stream) {
    return (uintptr_t)stream <= 2 ? (uint64_t)(uintptr_t)stream : rmm__host_stream_live_id(stream);
}
RMM__PRIVATE rmm_status rmm__stream_unique_id(rmm_stream stream, uint64_t *id) {
    RMM__HOST_FAULT("cudaStreamGetId");
    RMM_TRY(rmm__host_stream_check(stream, "cudaStreamGetId"));
    if ((uintptr_t)stream <= 2) *id = (uint64_t)(uintptr_t)stream;
    else *id = stream->id;
    return RMM_SUCCESS;
}
/* (no capture on the host: one mode per thread, kept so that the exchange round-trips) */
static RMM__TLS int rmm__host_capture_mode;
RMM__PRIVATE rmm_status rmm__capture_mode_exchange(int *mode) {
    int old = rmm__host_capture_mode;
    RMM__HOST_FAULT("cudaThreadExchangeStreamCaptureMode");
    rmm__host_capture_mode = *mode;
    *mode = old;
    return RMM_SUCCESS;
}
/* Whether the first and last bytes of [p, p + bytes) can be read, and if `writable` written,
   without a fault. CUDA refuses a copy or fill of an address it cannot reach
   (cudaErrorInvalidValue); the host backend's memmove faulted instead, and a bogus address given to
   rmmh killed the Python process (red team 36). The kernel reads the two bytes through
   process_vm_readv on this process (EFAULT where nothing readable is mapped: the only answer taken
   for "unreachable") and, for a write, puts them back with process_vm_writev (EFAULT where they
   cannot be written). No descriptor, no lock: safe across fork and from any thread (review 36: a
   pipe, the first form, could be closed or taken over by the program's own files and was shared
   with a child after fork). Where the calls do not exist or are refused (not Linux, a seccomp
   filter), true: the copy is made unchecked. A range mapped only in its middle still faults
   there. Two or three system calls: a 64-byte copy took 5 us on a loaded two-core VM where the
   memmove alone takes 0.01 (the host backend is for tests; its copies are not a fast path). */
#include <sys/uio.h>
RMM__PRIVATE bool rmm__host_access_ok(const void *p, size_t bytes, bool writable) {
#if defined(__linux__) && defined(SYS_process_vm_readv) && defined(SYS_process_vm_writev)
    char got[2];
    struct iovec local, remote[2];
    long n, pid = (long)getpid();
    size_t k = bytes > 1 ? 2 : 1;
    if (bytes == 0) return true;
    if ((uintptr_t)p > UINTPTR_MAX - (bytes - 1)) return false;
    local.iov_base = got;
    local.iov_len = k;
    remote[0].iov_base = (void *)(uintptr_t)p;
    remote[0].iov_len = 1;
    remote[1].iov_base = (void *)((uintptr_t)p + bytes - 1);
    remote[1].iov_len = 1;
    n = syscall(SYS_process_vm_readv, pid, &local, 1UL, remote, (unsigned long)k, 0UL);
    if (n < 0) return errno != EFAULT;
    if ((size_t)n != k) return false; /* (the last byte: EFAULT, reported as a short read) */
    if (!writable) return true;
    n = syscall(SYS_process_vm_writev, pid, &local, 1UL, remote, (unsigned long)k, 0UL);
    if (n < 0) return errno != EFAULT;
    return (size_t)n == k;
#else
    (void)p;
    (void)bytes;
    (void)writable;
    return true;
#endif
}
RMM__PRIVATE rmm_status rmm__memcpy_async(void *dst, const void *src, size_t bytes, rmm_stream stream) {
    RMM__HOST_FAULT("cudaMemcpyAsync");
    RMM_TRY(rmm__host_stream_check(stream, "cudaMemcpyAsync"));
    if (!rmm__host_access_ok(src, bytes, false) || !rmm__host_access_ok(dst, bytes, true))
        return rmm__fail_cuda(RMM__HOST_ERR_VALUE, RMM_ERROR_CUDA, "cudaMemcpyAsync(dst=%p, src=%p, bytes=%zu) failed: cudaErrorInvalidValue (an address the host backend cannot reach)", dst, src, bytes);
    rmm__host_model_work(stream);
    if (bytes) memmove(dst, src, bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__memset_async(void *dst, int value, size_t bytes, rmm_stream stream) {
    RMM__HOST_FAULT("cudaMemsetAsync");
    RMM_TRY(rmm__host_stream_check(stream, "cudaMemsetAsync"));
    if (!rmm__host_access_ok(dst, bytes, true))
        return rmm__fail_cuda(RMM__HOST_ERR_VALUE, RMM_ERROR_CUDA, "cudaMemsetAsync(dst=%p, bytes=%zu) failed: cudaErrorInvalidValue (an address the host backend cannot reach)", dst, bytes);
    rmm__host_model_work(stream);
    if (bytes) memset(dst, value, bytes);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__prefetch(void *ptr, size_t bytes, int device, rmm_stream stream) {
    (void)ptr;
    (void)bytes;
    (void)device;
    RMM__HOST_FAULT("cudaMemPrefetchAsync");
    RMM_TRY(rmm__host_stream_check(stream, "cudaMemPrefetchAsync"));
    rmm__host_model_work(stream);
    return RMM_SUCCESS;
}
/* The simulated devices' attributes: an H100-like discrete GPU with the capabilities this backend
   implements (see rmm_device_get_attribute); any other attribute is 0. */
static int rmm__host_attributes[][2] = { /* (values: rmm_host_backend_set_device_attribute) */
    {1, 1024},       /* cudaDevAttrMaxThreadsPerBlock */
    {2, 1024},       /* cudaDevAttrMaxBlockDimX */
    {3, 1024},       /* cudaDevAttrMaxBlockDimY */
    {4, 64},         /* cudaDevAttrMaxBlockDimZ */
    {5, 2147483647}, /* cudaDevAttrMaxGridDimX */
    {6, 65535},      /* cudaDevAttrMaxGridDimY */
    {7, 65535},      /* cudaDevAttrMaxGridDimZ */
    {8, 49152},      /* cudaDevAttrMaxSharedMemoryPerBlock */
    {9, 65536},      /* cudaDevAttrTotalConstantMemory */
    {10, 32},        /* cudaDevAttrWarpSize */
    {16, 132},       /* cudaDevAttrMultiProcessorCount */
    {18, 0},         /* cudaDevAttrIntegrated */
    {19, 1},         /* cudaDevAttrCanMapHostMemory */
    {20, 0},         /* cudaDevAttrComputeMode: default */
    {31, 1},         /* cudaDevAttrConcurrentKernels */
    {39, 2048},      /* cudaDevAttrMaxThreadsPerMultiProcessor */
    {40, 2},         /* cudaDevAttrAsyncEngineCount */
    {41, 1},         /* cudaDevAttrUnifiedAddressing */
    {75, 9},         /* cudaDevAttrComputeCapabilityMajor */
    {76, 0},         /* cudaDevAttrComputeCapabilityMinor */
    {83, 1},         /* cudaDevAttrManagedMemory */
    {88, 0},         /* cudaDevAttrPageableMemoryAccess */
    {89, 1},         /* cudaDevAttrConcurrentManagedAccess */
    {99, 1},         /* cudaDevAttrHostRegisterSupported */
    {100, 0},        /* cudaDevAttrPageableMemoryAccessUsesHostPageTables */
    {101, 0},        /* cudaDevAttrDirectManagedMemAccessFromHost */
    {115, 1},        /* cudaDevAttrMemoryPoolsSupported */
    {119, 1},        /* cudaDevAttrMemoryPoolSupportedHandleTypes: cudaMemHandleTypePosixFileDescriptor */
};
RMM__PRIVATE rmm_status rmm__device_attribute(int attribute, int device, int *value, int *cuda_error) {
    size_t i;
    if (device < 0 || device >= RMM_HOST_BACKEND_DEVICES) {
        *cuda_error = 101;
        return rmm__fail_cuda(RMM__HOST_ERR_DEVICE, RMM_ERROR_CUDA, "cudaDeviceGetAttribute(attr=%d, device=%d) failed: cudaErrorInvalidDevice (invalid device ordinal)", attribute, device);
    }
    if (attribute < 1) {
        *cuda_error = 1;
        return rmm__fail_cuda(RMM__HOST_ERR_VALUE, RMM_ERROR_CUDA, "cudaDeviceGetAttribute(attr=%d, device=%d) failed: cudaErrorInvalidValue (invalid argument)", attribute, device);
    }
    for (i = 0; i < sizeof rmm__host_attributes / sizeof rmm__host_attributes[0]; i++)
        if (rmm__host_attributes[i][0] == attribute) *value = RMM__ATOMIC_LOAD_RELAXED(&rmm__host_attributes[i][1]);
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_host_backend_set_device_attribute(int attribute, int value) {
    size_t i;
    for (i = 0; i < sizeof rmm__host_attributes / sizeof rmm__host_attributes[0]; i++)
        if (rmm__host_attributes[i][0] == attribute) {
            RMM__ATOMIC_STORE_RELAXED(&rmm__host_attributes[i][1], value);
            return RMM_SUCCESS;
        }
    return RMM__INVALID("rmm_host_backend_set_device_attribute: the host backend has no device attribute %d", attribute);
}
RMM__PRIVATE rmm_status rmm__versions(int *runtime, int *driver) {
    *runtime = *driver = 0;
    return RMM_SUCCESS;
}
/* No other process can see this backend's memory: IPC is NOT_SUPPORTED. */
#define RMM__HOST_NO_IPC(call) rmm__fail(RMM_ERROR_NOT_SUPPORTED, "%s: CUDA IPC needs the CUDA backend (this is the host backend)", call)
RMM__PRIVATE rmm_status rmm__ipc_get(void *base, unsigned char *handle) {
    (void)base, (void)handle;
    return RMM__HOST_NO_IPC("cudaIpcGetMemHandle");
}
RMM__PRIVATE rmm_status rmm__ipc_open(const unsigned char *handle, void **base) {
    (void)handle, (void)base;
    return RMM__HOST_NO_IPC("cudaIpcOpenMemHandle");
}
RMM__PRIVATE rmm_status rmm__ipc_close(void *base) {
    (void)base;
    return RMM__HOST_NO_IPC("cudaIpcCloseMemHandle");
}
RMM__PRIVATE rmm_status rmm__mempool_export_fd(rmm_mem_pool pool, int *fd) {
    (void)pool, (void)fd;
    return RMM__HOST_NO_IPC("cudaMemPoolExportToShareableHandle");
}
RMM__PRIVATE rmm_status rmm__mempool_import_fd(int fd, rmm_mem_pool *pool) {
    (void)fd, (void)pool;
    return RMM__HOST_NO_IPC("cudaMemPoolImportFromShareableHandle");
}
RMM__PRIVATE rmm_status rmm__mempool_export_ptr(void *ptr, unsigned char *handle) {
    (void)ptr, (void)handle;
    return RMM__HOST_NO_IPC("cudaMemPoolExportPointer");
}
RMM__PRIVATE rmm_status rmm__mempool_import_ptr(rmm_mem_pool pool, const unsigned char *handle, void **ptr) {
    (void)pool, (void)handle, (void)ptr;
    return RMM__HOST_NO_IPC("cudaMemPoolImportPointer");
}
RMM__PRIVATE rmm_status rmm__imported_free(void *ptr) {
    (void)ptr;
    return RMM__HOST_NO_IPC("cudaFree (an imported pointer)");
}
RMM__PRIVATE rmm_status rmm__mempool_destroy_imported(rmm_mem_pool pool) {
    (void)pool;
    return RMM__HOST_NO_IPC("cudaMemPoolDestroy (an imported pool)");
}
/* The host backend's "device" can export POSIX file descriptors but has no fabric. */
RMM__PRIVATE rmm_status rmm__mempool_support(int device, bool *supported, unsigned *handle_mask) {
    int pools = 0, mask = 0, cuda_error = 0;
    RMM_TRY(rmm__device_attribute(115, device, &pools, &cuda_error)); /* cudaDevAttrMemoryPoolsSupported */
    if (pools && rmm__device_attribute(119, device, &mask, &cuda_error) != RMM_SUCCESS) mask = 0; /* cudaDevAttrMemoryPoolSupportedHandleTypes */
    *supported = pools != 0;
    *handle_mask = pools ? (unsigned)mask : 0u;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mempool_create(rmm_mem_pool *pool, int device, unsigned handle_types, uint64_t release_threshold) {
    rmm_mem_pool p;
    RMM__HOST_FAULT("cudaMemPoolCreate");
    p = (rmm_mem_pool)RMM_SYS_MALLOC(sizeof *p);
    if (!p) return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "cudaMemPoolCreate() failed: host out of memory");
    p->device = device;
    p->handle_types = handle_types;
    p->release_threshold = release_threshold;
    *pool = p;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__mempool_destroy(rmm_mem_pool pool) { RMM_SYS_FREE(pool); }
/* (the host backend draws a pinned pool's memory from the simulated capacity, as it does all memory) */
RMM__PRIVATE rmm_status rmm__mempool_create_pinned(rmm_mem_pool *pool, int device, uint64_t release_threshold) {
    rmm_mem_pool p = NULL;
    rmm_status fault;
    (void)device;
    RMM_TRY(rmm__mempool_create(&p, -1, 0, release_threshold));
    if (RMM__UNLIKELY(rmm__host_fault("cudaMemPoolSetAccess", &fault))) {
        rmm__mempool_destroy(p);
        return rmm__fail_cuda(RMM__HOST_ERR_UNKNOWN, fault, "cudaMemPoolSetAccess() failed: cudaErrorUnknown (injected by rmm_host_backend_fail_calls)");
    }
    *pool = p;
    return RMM_SUCCESS;
}
/* One simulated default managed pool per device, never freed (the driver's, in CUDA). Nothing reads
   a simulated pool's fields, so these are never written (until red team 46 every call wrote them: a
   data race between two threads' creates). */
static struct rmm__host_mempool rmm__host_managed_pools[RMM_HOST_BACKEND_DEVICES];
RMM__PRIVATE rmm_status rmm__mempool_default_managed(rmm_mem_pool *pool, int device) {
    if (device < 0 || device >= RMM_HOST_BACKEND_DEVICES) return rmm__fail_cuda(RMM__HOST_ERR_DEVICE, RMM_ERROR_CUDA, "cudaMemGetDefaultMemPool() failed: cudaErrorInvalidDevice (invalid device %d)", device);
    RMM__HOST_FAULT("cudaMemGetDefaultMemPool");
    *pool = &rmm__host_managed_pools[device];
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__mempool_malloc_async(void **ptr, size_t bytes, rmm_mem_pool pool, rmm_stream stream) {
    (void)pool;
    RMM_TRY(rmm__host_stream_check(stream, "cudaMallocFromPoolAsync"));
    return rmm__host_malloc_counted(ptr, bytes, "cudaMallocFromPoolAsync");
}
RMM__PRIVATE rmm_status rmm__free_async(void *ptr, rmm_stream stream) {
    RMM_TRY(rmm__host_stream_check(stream, "cudaFreeAsync"));
    return rmm__host_free_counted(ptr, "cudaFreeAsync");
}
/* Virtual memory on the host: an anonymous PROT_NONE mapping whose pages are made accessible
   (and counted against the capacity) as they are mapped. A "handle" stands for the physical bytes. */
#include <sys/mman.h>
/* Linux's values, for a strict ISO build whose system headers came before rmm.h (see >>config) */
#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#elif !defined(MAP_ANONYMOUS) && defined(__linux__)
#define MAP_ANONYMOUS 0x20
#endif
#if !defined(MAP_NORESERVE) && defined(__linux__)
#define MAP_NORESERVE 0x4000
#elif !defined(MAP_NORESERVE)
#define MAP_NORESERVE 0
#endif
#define RMM__HOST_VM_PAGE ((size_t)2 << 20)
RMM__PRIVATE rmm_status rmm__vm_granularity(int device, size_t *granularity) {
    (void)device;
    *granularity = RMM__HOST_VM_PAGE;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__vm_reserve(char **base, size_t bytes, size_t alignment) {
    char *raw, *aligned;
    size_t head, total;
    RMM__HOST_FAULT("cuMemAddressReserve");
    if (bytes > SIZE_MAX - alignment) return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "cuMemAddressReserve(bytes=%zu) failed: too large", bytes);
    total = bytes + alignment;
    raw = (char *)mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == (char *)MAP_FAILED) return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "cuMemAddressReserve(bytes=%zu) failed: mmap: %s", bytes, strerror(errno));
    aligned = (char *)(((uintptr_t)raw + alignment - 1) & ~(uintptr_t)(alignment - 1));
    head = (size_t)(aligned - raw);
    if (head) munmap(raw, head);
    if (total - head > bytes) munmap(aligned + bytes, total - head - bytes);
    *base = aligned;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__vm_free(char *base, size_t bytes) { munmap(base, bytes); }
RMM__PRIVATE rmm_status rmm__vm_create(uint64_t *handle, size_t bytes, int device) {
    size_t used;
    (void)device;
    RMM__HOST_FAULT("cuMemCreate");
    used = RMM__ATOMIC_ADD(&rmm__host_used, bytes);
    if (used > RMM__ATOMIC_LOAD(&rmm__host_capacity)) {
        RMM__ATOMIC_SUB(&rmm__host_used, bytes);
        return rmm__fail_cuda(RMM__HOST_ERR_OOM, RMM_ERROR_OUT_OF_MEMORY, "cuMemCreate(bytes=%zu) failed: CUDA_ERROR_OUT_OF_MEMORY (host backend capacity %zu bytes)", bytes,
                         RMM__ATOMIC_LOAD(&rmm__host_capacity));
    }
    *handle = (uint64_t)bytes;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__vm_release(uint64_t handle, size_t bytes) {
    (void)handle;
    RMM__ATOMIC_SUB(&rmm__host_used, bytes);
}
/* Mapping gives the pages no access yet: cuMemSetAccess does, as on a GPU. */
RMM__PRIVATE rmm_status rmm__vm_map(char *va, size_t bytes, uint64_t handle, size_t offset) {
    (void)va;
    (void)bytes;
    (void)handle;
    (void)offset;
    RMM__HOST_FAULT("cuMemMap");
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__vm_set_access(char *va, size_t bytes, int device) {
    (void)device;
    RMM__HOST_FAULT("cuMemSetAccess");
    if (mprotect(va, bytes, PROT_READ | PROT_WRITE) != 0) return rmm__fail_cuda(RMM__HOST_ERR_UNKNOWN, RMM_ERROR_CUDA, "cuMemSetAccess(bytes=%zu) failed: mprotect: %s", bytes, strerror(errno));
    return RMM_SUCCESS;
}
/* A fresh inaccessible mapping over the range drops its pages, as unmapping physical memory does. */
RMM__PRIVATE rmm_status rmm__vm_unmap(char *va, size_t bytes) {
    void *p;
    RMM__HOST_FAULT("cuMemUnmap");
    {
        const rmm_host_stream_model *m = RMM__HOST_MODEL();
        if (m) m->unmap(m->user, va, bytes);
    }
    p = mmap(va, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED) return rmm__fail_cuda(RMM__HOST_ERR_UNKNOWN, RMM_ERROR_CUDA, "cuMemUnmap(bytes=%zu) failed: mmap: %s", bytes, strerror(errno));
    return RMM_SUCCESS;
}
#define RMM__BACKEND_NAME "host"

#endif /* backends */

/* Device guard: makes `device` current for the duration of a library call and restores the
   caller's device. Costs one cudaGetDevice when the device is already current. The caller's device
   is restored only if its primary context is active: a thread that never used CUDA reads device 0
   from cudaGetDevice, and setting that back would create a context on device 0 (hundreds of MiB)
   that nobody asked for; such a thread is left on `device` instead (PyTorch's MaybeSetDevice rule
   leaves the CUDA runtime there too). A thread that relies on the implicit device 0 after such a
   call should set it itself. A failed restore (cudaSetDevice fails only with a broken context) does
   not change the call's result: its work is done (memory handed out or freed, which a failure would
   leave the caller to redo or lose). It is logged at WARN, leaves no failure as the thread's last
   error, and leaves the thread on `device`. */
typedef rmm_device_scope rmm__device_guard; /* the public rmm_device_scope */
RMM__PRIVATE rmm_status rmm__device_enter(rmm__device_guard *g, int device) {
    g->switched = false;
    g->previous = device; /* (what a failed query leaves: nothing to restore) */
    RMM_TRY(rmm__get_device(&g->previous));
    if (g->previous != device && device >= 0) {
        RMM_TRY(rmm__set_device(device));
        g->switched = true;
    }
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__device_restore(const rmm__device_guard *g) {
    if (g->switched && rmm__device_context_active(g->previous)) return rmm__set_device(g->previous);
    return RMM_SUCCESS;
}
/* For a destroy (void: nothing to report): enters `device` unless the process is exiting (no CUDA
   call then) or the device is unknown (< 0); a failed enter leaves no failure behind and the
   destroy goes on with the caller's device. leave as usual. */
RMM__PRIVATE void rmm__device_enter_quietly(rmm__device_guard *g, int device, bool exiting) {
    rmm__kept_error kept;
    g->switched = false;
    if (exiting || device < 0) return;
    rmm__error_keep(&kept);
    (void)rmm__device_enter(g, device); /* (a failure leaves switched false: leave does nothing) */
    rmm__error_back(&kept);
}
RMM__PRIVATE void rmm__device_leave(const rmm__device_guard *g) {
    if (g->switched) {
        rmm__kept_error kept;
        rmm__error_keep(&kept);
        if (rmm__device_restore(g) != RMM_SUCCESS) {
            RMM__LOG(RMM_LOG_LEVEL_WARN, "the caller's device %d could not be restored (%s): the thread stays on the device the library switched to", g->previous, rmm_last_error());
            rmm__error_back(&kept);
        }
    }
}
RMM__IMPL rmm_status rmm_device_scope_enter(rmm_device_scope *scope, int device) {
    if (!scope) return RMM__NULL_OUT("rmm_device_scope_enter", "scope");
    return rmm__device_enter(scope, device); /* (a failure leaves switched false: leave does nothing) */
}
RMM__IMPL rmm_status rmm_device_scope_leave(const rmm_device_scope *scope) { return scope ? rmm__device_restore(scope) : RMM_SUCCESS; }

/* Debug margins (RMM_DEBUG_MARGIN): N bytes after each block, filled with a pattern when the block is
   handed out and checked when it is freed (and by rmm_resource_check_corruption). */
#if defined(RMM_DEBUG_MARGIN) && RMM_DEBUG_MARGIN > 0
#define RMM__MARGIN_ON 1
#define RMM__MARGIN ((size_t)RMM_DEBUG_MARGIN)
#else
#define RMM__MARGIN_ON 0
#define RMM__MARGIN ((size_t)0)
#endif
#define RMM__MARGIN_BYTE 0xFD
#if RMM__MARGIN_ON
/* rmm_resource_check_corruption calls running in the process (nested ones counted too), and on this
   thread. While any runs, no pool gives memory back (rmm__pool_may_give_back): the check reads the
   margins of blocks it listed with no lock held, and a block freed meanwhile whose chunk went
   upstream, or whose pages were unmapped, would be read where nothing is (review 27's M1: a
   heap-use-after-free on the host backend, a fault or a failed copy on a device). */
static int rmm__margin_checks_running;
static RMM__TLS int rmm__margin_checking_here;
static uint64_t rmm__margin_serials;
/* A number no other margin fill in the process has had: a block's allocation's identity for
   rmm_resource_check_corruption (a block freed and its memory handed out again gets another).
   One relaxed atomic add. */
static inline uint64_t rmm__margin_serial(void) { return RMM__ATOMIC_ADD_RELAXED(&rmm__margin_serials, 1); }
/* Fills a block's margin. False if the fill could not be queued (a broken stream or context): the
   allocation still succeeds (its block is handed out), the caller marks the block unchecked
   (requested SIZE_MAX: its free and rmm_resource_check_corruption skip it, where an unwritten margin
   would read as a false CORRUPTION and keep the block allocated), the failure is logged at WARN and
   not left as the thread's last error. */
RMM__PRIVATE bool rmm__margin_set(void *ptr, size_t bytes, rmm_stream stream) {
    rmm__kept_error kept;
    rmm__error_keep(&kept);
    if (rmm__memset_async((char *)ptr + bytes, RMM__MARGIN_BYTE, RMM__MARGIN, stream) == RMM_SUCCESS) return true;
    RMM__LOG(RMM_LOG_LEVEL_WARN, "RMM_DEBUG_MARGIN: the margin of block %p of %zu bytes could not be filled (%s): the block is not checked", ptr, bytes, rmm_last_error());
    rmm__error_back(&kept);
    return false;
}
/* Reads the margin of a block back (after the work queued on `stream`) and checks it: CORRUPTION
   naming the block and the first byte written past its end. */
RMM__PRIVATE rmm_status rmm__margin_check(const char *who, const void *ptr, size_t bytes, rmm_stream stream) {
    unsigned char buf[256];
    size_t at = 0;
    while (at < RMM__MARGIN) {
        size_t n = rmm__min(sizeof buf, RMM__MARGIN - at), i;
        RMM_TRY(rmm__memcpy_async(buf, (const char *)ptr + bytes + at, n, stream));
        RMM_TRY(rmm__stream_sync_raw(stream));
        for (i = 0; i < n; i++)
            if (buf[i] != RMM__MARGIN_BYTE)
                return rmm__fail(RMM_ERROR_CORRUPTION, "%s: block %p of %zu bytes: written past its end: margin byte %zu (address %p) is 0x%02x, not 0x%02x", who, ptr,
                                 bytes, at + i, (const void *)((const char *)ptr + bytes + at + i), buf[i], RMM__MARGIN_BYTE);
        at += n;
    }
    return RMM_SUCCESS;
}
#endif

/* Sanitizer annotations (RMM_NVTX, CUDA backend): each pool chunk is registered as an NVTX memory
   heap and each block handed out as a region of exactly the requested bytes, so compute-sanitizer's
   memcheck reports a kernel touching pool memory outside a live block. Without RMM_NVTX, or on the
   host backend, these compile to nothing. About 2 ns a call when no tool is attached. */
#if defined(RMM_NVTX) && !defined(RMM_BACKEND_HOST)
#ifndef NVTX_AS_SYSTEM_HEADER
#define NVTX_AS_SYSTEM_HEADER
#endif
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
static nvtxDomainHandle_t rmm__nvtx_domain;
static pthread_once_t rmm__nvtx_once = PTHREAD_ONCE_INIT;
RMM__PRIVATE void rmm__nvtx_init(void) { rmm__nvtx_domain = nvtxDomainCreateA("rmm.h"); }
RMM__PRIVATE void *rmm__san_heap_register(void *ptr, size_t bytes) {
    nvtxMemVirtualRangeDesc_t range;
    nvtxMemHeapDesc_t desc;
    pthread_once(&rmm__nvtx_once, rmm__nvtx_init);
    memset(&range, 0, sizeof range);
    memset(&desc, 0, sizeof desc);
    range.size = bytes;
    range.ptr = ptr;
    desc.extCompatID = NVTX_EXT_COMPATID_MEM;
    desc.structSize = (uint16_t)sizeof desc;
    desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    desc.typeSpecificDescSize = sizeof range;
    desc.typeSpecificDesc = &range;
    return (void *)nvtxMemHeapRegister(rmm__nvtx_domain, &desc);
}
RMM__PRIVATE void rmm__san_heap_unregister(void *heap) {
    if (heap) nvtxMemHeapUnregister(rmm__nvtx_domain, (nvtxMemHeapHandle_t)heap);
}
RMM__PRIVATE void rmm__san_region_register(void *heap, void *ptr, size_t bytes) {
    nvtxMemVirtualRangeDesc_t range;
    nvtxMemRegionsRegisterBatch_t batch;
    if (!heap) return;
    memset(&range, 0, sizeof range);
    memset(&batch, 0, sizeof batch);
    range.size = bytes;
    range.ptr = ptr;
    batch.extCompatID = NVTX_EXT_COMPATID_MEM;
    batch.structSize = (uint16_t)sizeof batch;
    batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    batch.heap = (nvtxMemHeapHandle_t)heap;
    batch.regionCount = 1;
    batch.regionDescElementSize = sizeof range;
    batch.regionDescElements = &range;
    nvtxMemRegionsRegister(rmm__nvtx_domain, &batch);
}
RMM__PRIVATE void rmm__san_region_unregister(void *heap, void *ptr) {
    nvtxMemRegionRef_t ref;
    nvtxMemRegionsUnregisterBatch_t batch;
    if (!heap) return;
    memset(&ref, 0, sizeof ref);
    memset(&batch, 0, sizeof batch);
    ref.pointer = ptr;
    batch.extCompatID = NVTX_EXT_COMPATID_MEM;
    batch.structSize = (uint16_t)sizeof batch;
    batch.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    batch.refCount = 1;
    batch.refElementSize = sizeof ref;
    batch.refElements = &ref;
    nvtxMemRegionsUnregister(rmm__nvtx_domain, &batch);
}
/* Nsight Systems marks (RMM_NVTX): every rmm_allocate/rmm_deallocate is a mark in the "rmm.h" domain
   whose message names the call and the resource ("allocate: pool", "free: arena", "allocate failed:
   limiting_adaptor") and whose payload is the size in bytes. Messages are registered strings, one
   set per resource type (the first 64 types; later ones are formatted per call), so a mark costs a
   table scan and one NVTX call; with no tool attached the call returns at once. */
#define RMM__NVTX_OPS 3 /* allocate, free, allocate failed */
typedef struct rmm__nvtx_name {
    const char *type;
    nvtxStringHandle_t op[RMM__NVTX_OPS];
} rmm__nvtx_name;
static rmm__nvtx_name rmm__nvtx_names[64];
static int rmm__nvtx_name_count;
static rmm__mutex rmm__nvtx_names_lock = RMM__MUTEX_INIT;
static const char *const rmm__nvtx_op_text[RMM__NVTX_OPS] = {"allocate", "free", "allocate failed"};
RMM__PRIVATE nvtxStringHandle_t rmm__nvtx_find(const char *type, int op) {
    int i, n = RMM__ATOMIC_LOAD(&rmm__nvtx_name_count);
    for (i = 0; i < n; i++)
        if (rmm__nvtx_names[i].type == type) return rmm__nvtx_names[i].op[op];
    return NULL;
}
RMM__PRIVATE void rmm__nvtx_mark(const rmm_resource *mr, int op, size_t bytes) {
    const char *type = rmm_resource_type_name(mr);
    nvtxStringHandle_t h = rmm__nvtx_find(type, op);
    nvtxEventAttributes_t ev;
    char text[96];
    pthread_once(&rmm__nvtx_once, rmm__nvtx_init);
    if (!h) {
        rmm__lock(&rmm__nvtx_names_lock);
        h = rmm__nvtx_find(type, op);
        if (!h && rmm__nvtx_name_count < (int)(sizeof rmm__nvtx_names / sizeof rmm__nvtx_names[0])) {
            rmm__nvtx_name *e = &rmm__nvtx_names[rmm__nvtx_name_count];
            int k;
            e->type = type;
            for (k = 0; k < RMM__NVTX_OPS; k++) {
                snprintf(text, sizeof text, "%s: %s", rmm__nvtx_op_text[k], type);
                e->op[k] = nvtxDomainRegisterStringA(rmm__nvtx_domain, text);
            }
            h = e->op[op];
            RMM__ATOMIC_STORE(&rmm__nvtx_name_count, rmm__nvtx_name_count + 1);
        }
        rmm__unlock(&rmm__nvtx_names_lock);
    }
    memset(&ev, 0, sizeof ev);
    ev.version = NVTX_VERSION;
    ev.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    ev.colorType = NVTX_COLOR_ARGB;
    ev.color = op == 0 ? 0xFF2E7D32u : op == 1 ? 0xFF1565C0u : 0xFFC62828u;
    ev.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    ev.payload.ullValue = (uint64_t)bytes;
    if (h) {
        ev.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        ev.message.registered = h;
    } else {
        snprintf(text, sizeof text, "%s: %s", rmm__nvtx_op_text[op], type);
        ev.messageType = NVTX_MESSAGE_TYPE_ASCII;
        ev.message.ascii = text;
    }
    nvtxDomainMarkEx(rmm__nvtx_domain, &ev);
}
#define RMM__SAN_ON 1
#else
#define rmm__nvtx_mark(mr, op, bytes) ((void)(mr), (void)(op), (void)(bytes))
#define RMM__SAN_ON 0
#define rmm__san_heap_register(ptr, bytes) ((void)(ptr), (void)(bytes), (void *)NULL)
#define rmm__san_heap_unregister(heap) ((void)(heap))
#define rmm__san_region_register(heap, ptr, bytes) ((void)(heap), (void)(ptr), (void)(bytes))
#define rmm__san_region_unregister(heap, ptr) ((void)(heap), (void)(ptr))
#endif

/* Streams whose handle names the same stream for the whole process: the legacy default stream.
   Under a per-thread-default-stream build, handle 0 is the calling thread's stream instead. */
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define RMM__ZERO_IS_PER_THREAD 1
#else
#define RMM__ZERO_IS_PER_THREAD 0
#endif
/* The handle the library files the legacy stream under (0 unless 0 means the per-thread stream). */
#define RMM__LEGACY_HANDLE (RMM__ZERO_IS_PER_THREAD ? RMM_STREAM_LEGACY : RMM_STREAM_DEFAULT)
RMM__PRIVATE bool rmm__stream_is_per_thread(rmm_stream s) {
    return s == RMM_STREAM_PER_THREAD || (RMM__ZERO_IS_PER_THREAD && s == RMM_STREAM_DEFAULT);
}
RMM__PRIVATE bool rmm__stream_is_legacy(rmm_stream s) {
    return s == RMM_STREAM_LEGACY || (!RMM__ZERO_IS_PER_THREAD && s == RMM_STREAM_DEFAULT);
}

/* ======================================================================================= */
/* ==== debuglog: leveled diagnostics to $RMM_DEBUG_LOG_FILE or rmm_log.txt ============== */
/* ======================================================================================= */ /* >>debuglog */

static int rmm__log_level = RMM_LOG_LEVEL;
static FILE *rmm__log_file;
static rmm__mutex rmm__log_lock = RMM__MUTEX_INIT;

RMM__IMPL int rmm_set_log_level(int level) {
    if (level < RMM_LOG_LEVEL_TRACE) level = RMM_LOG_LEVEL_TRACE;
    if (level > RMM_LOG_LEVEL_OFF) level = RMM_LOG_LEVEL_OFF;
    return RMM__ATOMIC_XCHG(&rmm__log_level, level);
}
RMM__IMPL int rmm_get_log_level(void) { return RMM__ATOMIC_LOAD(&rmm__log_level); }
RMM__IMPL void rmm_flush_log(void) {
    rmm__lock(&rmm__log_lock);
    if (rmm__log_file) fflush(rmm__log_file);
    rmm__unlock(&rmm__log_lock);
}

/* "HH:MM:SS.uuuuuu" in local time, as RMM's logs write it. The HH:MM:SS part is computed once per
   second per thread (localtime_r is slow); returns the length (15). */
RMM__PRIVATE size_t rmm__format_time(char out[32]) {
    static RMM__TLS time_t cached_second = (time_t)-1;
    static RMM__TLS char cached_text[9];
    struct timeval tv;
    unsigned micros, i;
    gettimeofday(&tv, NULL);
    if (tv.tv_sec != cached_second) {
        struct tm tmv;
        time_t secs = tv.tv_sec;
        localtime_r(&secs, &tmv);
        snprintf(cached_text, sizeof cached_text, "%02u:%02u:%02u", (unsigned)tmv.tm_hour % 100u, (unsigned)tmv.tm_min % 100u,
                 (unsigned)tmv.tm_sec % 100u);
        cached_second = tv.tv_sec;
    }
    memcpy(out, cached_text, 8);
    out[8] = '.';
    micros = (unsigned)tv.tv_usec % 1000000u;
    for (i = 0; i < 6; i++) {
        out[14 - i] = (char)('0' + micros % 10u);
        micros /= 10u;
    }
    out[15] = '\0';
    return 15;
}
/* Appends v in decimal (hex) to out; returns the characters written. */
RMM__PRIVATE size_t rmm__put_dec(char *out, uint64_t v) {
    char tmp[24];
    size_t n = 0, i;
    do {
        tmp[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    for (i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}
RMM__PRIVATE size_t rmm__put_hex(char *out, uint64_t v) {
    static const char digits[] = "0123456789abcdef";
    char tmp[20];
    size_t n = 0, i;
    do {
        tmp[n++] = digits[v & 15u];
        v >>= 4;
    } while (v);
    for (i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

static void rmm__log_write(int level, const char *fmt, ...) {
    static const char *const names[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
    char when[32];
    va_list ap;
    if (level < RMM__ATOMIC_LOAD_RELAXED(&rmm__log_level)) return;
    rmm__format_time(when);
    rmm__lock(&rmm__log_lock);
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
    rmm__unlock(&rmm__log_lock);
}

/* ======================================================================================= */
/* ==== resource: generic calls ========================================================= */
/* ======================================================================================= */ /* >>resource */

RMM__PRIVATE rmm_resource *rmm__resolve(rmm_resource *mr) { return mr ? mr : rmm_get_current_device_resource(); }

/* Graph pools (API at >>graph, code after the pool): the streams registered for capture and the live pools, read with
   one relaxed load by every allocate and free; the routes run only when one is non-zero. */
static size_t rmm__graph_captures;
static size_t rmm__graph_pools_live;
/* set while a sub-allocator or a graph pool takes memory for itself (rmm__allocate_own, which
   rmm__gp_fetch calls too): allocations are not routed (its memory never comes from a graph pool); frees
   are, so that what user code called meanwhile (a callback upstream, a failure callback) frees a
   graph pool's block into it and defers a free on a registered stream as anywhere else. Until
   session 44 a flag for both (rmm__graph_inside) did this and stopped the free routes too: a graph
   pool's block went whole to the resource named (a cudaFree of part of a chunk, then a use after
   free: red teams 43 and 44). A graph pool's own frees need no flag: its chunks go back on its own
   stream, never registered, once it is off the list (or before it is on it). Thread-local: work
   that user code hands to another thread is routed as that thread's. */
static RMM__TLS bool rmm__graph_own_alloc;
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__graph_route_alloc(const char *call, void **ptr, size_t bytes, size_t alignment, rmm_stream stream, bool *routed);
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__graph_route_free(const char *call, rmm_resource *mr, void *ptr, size_t bytes, size_t alignment, rmm_stream stream, bool *routed);
RMM__PRIVATE int rmm__graph_owns(const void *ptr);
RMM__PRIVATE int rmm__graph_find(const void *ptr, const char **chunk, rmm_resource **upstream);
RMM__PRIVATE RMM__NOINLINE const rmm_resource *rmm__graph_defers_into(const rmm_resource *mr);
RMM__PRIVATE RMM__NOINLINE bool rmm__graph_key_registered(uint64_t key);
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__graph_defer_recorded(rmm_resource *mr, void *ptr, size_t bytes, size_t alignment, rmm_stream stream, uint64_t key,
                                                                bool *ended);
static size_t rmm__graph_ending; /* rmm_capture_end calls making their deferred frees now (atomic) */
/* How graph capture tells streams apart (registrations, routing, deferred frees, the tags of blocks
   freed during a capture): a stream's handle, except the per-thread default stream
   (RMM_STREAM_PER_THREAD, and handle 0 in per-thread builds), which names the calling thread's own
   stream on the current device: RMM__GKEY_THREAD with that thread's entry serial and the device.
   (Until 2026-11-29 the handle itself: a red team found that one thread's capture of its
   per-thread stream took other threads' allocations on theirs, handing them blocks its graph still
   used, and deferred their frees to its own stream.) rmm__graph_key_of: the same from a stream's
   parts (a recorded stream's: rmm__rec_stream). The legacy stream has one key under both its
   names (RMM_STREAM_LEGACY, and handle 0 where 0 is not per-thread): two keys let one stream be
   registered with two graph pools, and its allocations under the other name escape the graph
   pool (red team 35). */
#define RMM__GKEY_THREAD ((uint64_t)1 << 63)
static inline uint64_t rmm__graph_key_of(rmm_stream handle, bool per_thread, uint64_t thread_serial, int device) {
    if (per_thread) return RMM__GKEY_THREAD | (thread_serial << 16) | ((uint64_t)(unsigned)device & 0xffffu);
    return (uint64_t)(uintptr_t)(rmm__stream_is_legacy(handle) ? RMM_STREAM_LEGACY : handle);
}

/* An upstream's answer that no resource may give (a resource of the user's): a success with *ptr
   NULL, or with a pointer short of `alignment`. Refused with INVALID_ARGUMENT naming `who` (the
   caller) and the resource; a misaligned block is given back to it first. *ptr is NULL afterwards. */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__refuse_upstream_answer(const char *who, rmm_resource *up, void **ptr, size_t bytes, size_t alignment,
                                                                 rmm_stream stream) {
    void *got = *ptr;
    *ptr = NULL;
    if (!got)
        return RMM__INVALID("%s(bytes=%zu, alignment=%zu): resource '%s' reported success but returned NULL", who, bytes, alignment,
                            rmm_resource_type_name(up));
    RMM__CLEANUP(up->vtable->deallocate(up, got, bytes, alignment, stream));
    return RMM__INVALID("%s(bytes=%zu, alignment=%zu): resource '%s' returned %p, not so aligned (given back)", who, bytes, alignment,
                        rmm_resource_type_name(up), got);
}
/* up's allocate, with its answer checked: a success with NULL or short of `alignment` is refused
   (rmm__refuse_upstream_answer; `who` names the caller). For calls into a resource that may be the
   user's: rmm_allocate_aligned, an adaptor's upstream (RMM__FORWARD_ALLOC) and a bin of the user's
   under binning. */
static inline rmm_status rmm__allocate_checked(const char *who, rmm_resource *up, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm_status st = up->vtable->allocate(up, ptr, bytes, alignment, stream);
    if (st != RMM_SUCCESS || (*ptr != NULL && ((uintptr_t)*ptr & (alignment - 1)) == 0)) return st;
    return rmm__refuse_upstream_answer(who, up, ptr, bytes, alignment, stream);
}
/* Whether vt is one of this header's own vtables, whose resources never answer a success with NULL
   or short of the alignment asked (defined after the last of them). O(vtables). */
RMM__PRIVATE bool rmm__vtable_is_own(const rmm_resource_vtable *vt);
RMM__IMPL rmm_status rmm_allocate_aligned(rmm_resource *mr, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm_status st;
    if (RMM__UNLIKELY(!ptr)) return RMM__NULL_OUT("rmm_allocate_aligned", "ptr");
    *ptr = NULL;
    if (RMM__UNLIKELY(!rmm__is_pow2(alignment)))
        return RMM__INVALID("rmm_allocate_aligned(bytes=%zu, alignment=%zu): alignment is not a power of two", bytes, alignment);
    if (RMM__UNLIKELY(bytes == 0)) return RMM_SUCCESS;
    if (alignment < RMM_ALIGNMENT) alignment = RMM_ALIGNMENT;
    if (RMM__UNLIKELY(RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) != 0) && !rmm__graph_own_alloc) {
        bool routed = false;
        st = rmm__graph_route_alloc("rmm_allocate_aligned", ptr, bytes, alignment, stream, &routed);
        if (routed) return st;
    }
    mr = rmm__resolve(mr);
    if (RMM__UNLIKELY(!mr)) return rmm_last_status();
    /* (a resource of the user's that says yes with no memory, or ignores the alignment: refused,
       never handed on; a docs audit's find and red team 37a's) */
    st = rmm__allocate_checked("rmm_allocate_aligned", mr, ptr, bytes, alignment, stream);
    if (RMM__UNLIKELY(st != RMM_SUCCESS)) *ptr = NULL;
    rmm__nvtx_mark(mr, st == RMM_SUCCESS ? 0 : 2, bytes);
    return st;
}
/* A sub-allocator's allocation from its upstream for itself (a pool's initial_bytes and growth, an
   arena's memory, a fixed-size resource's chunks, a graph pool's chunks): rmm_allocate_aligned with the graph pools'
   allocation routing off on this thread for the call (rmm__graph_own_alloc; frees stay routed).
   An allocation that user code makes inside it (a callback upstream, a failure callback) is not
   routed either: the header cannot tell it from the one that becomes the sub-allocator's memory.
   Only a user's allocation on a registered stream is a graph pool's to
   serve (rmm_capture_begin); until session 42 a create on a thread whose default stream was
   registered took its memory from the graph pool (and a growth could, on a stream registered by
   another thread during the call), and since a graph pool claims every free inside its chunks,
   the sub-allocator's frees then went there: blocks refused as CORRUPTION, or one address live
   twice (a red team's find). Costs rmm_allocate_aligned and two thread-local writes. */
RMM__PRIVATE rmm_status rmm__allocate_own(rmm_resource *up, void **ptr, size_t bytes, rmm_stream stream) {
    bool own = rmm__graph_own_alloc;
    rmm_status st;
    rmm__graph_own_alloc = true;
    st = rmm_allocate_aligned(up, ptr, bytes, RMM_ALIGNMENT, stream);
    rmm__graph_own_alloc = own;
    return st;
}
/* rmm_allocate and rmm_deallocate in two parts (mimalloc's rule again): the common call (a
   resource given, no graph capture or graph pool live, no recorded stream) is a few loads and the
   resource's own call (the free's a tail call), with no registers to save for paths it does not
   take: 13 and 19 instructions a call fewer than with everything inline (valgrind, host backend);
   the rest is one call away. */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__allocate_general(rmm_resource *mr, void **ptr, size_t bytes, rmm_stream stream) {
    rmm_status st;
    if (RMM__UNLIKELY(!ptr)) return RMM__NULL_OUT("rmm_allocate", "ptr");
    *ptr = NULL;
    if (RMM__UNLIKELY(bytes == 0)) return RMM_SUCCESS;
    if (RMM__UNLIKELY(RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) != 0) && !rmm__graph_own_alloc) {
        bool routed = false;
        st = rmm__graph_route_alloc("rmm_allocate", ptr, bytes, RMM_ALIGNMENT, stream, &routed);
        if (routed) return st;
    }
    mr = rmm__resolve(mr);
    if (RMM__UNLIKELY(!mr)) return rmm_last_status();
    st = mr->vtable->allocate(mr, ptr, bytes, RMM_ALIGNMENT, stream);
    if (RMM__UNLIKELY(st != RMM_SUCCESS)) *ptr = NULL;
    rmm__nvtx_mark(mr, st == RMM_SUCCESS ? 0 : 2, bytes);
    return st;
}
RMM__IMPL rmm_status rmm_allocate(rmm_resource *mr, void **ptr, size_t bytes, rmm_stream stream) {
    rmm_status st;
    if (RMM__UNLIKELY(!ptr || !mr || bytes == 0 || RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) != 0))
        return rmm__allocate_general(mr, ptr, bytes, stream);
    *ptr = NULL;
    st = mr->vtable->allocate(mr, ptr, bytes, RMM_ALIGNMENT, stream);
    if (RMM__UNLIKELY(st != RMM_SUCCESS)) *ptr = NULL;
    rmm__nvtx_mark(mr, st == RMM_SUCCESS ? 0 : 2, bytes);
    return st;
}
/* ---- record_stream: blocks used on more streams than their own ---- */
/* A stream recorded for a block, as it was when recorded: the handle, and, where a handle alone
   does not name one stream for good, the registry entry that does (>>streams; defined there):
   a library stream's entry (its handle may go to a new stream once it is destroyed), or, for a
   per-thread default stream, the recording thread's entry (the handle names each thread's own). */
struct rmm__sreg;
typedef struct rmm__rec_stream {
    rmm_stream handle;
    struct rmm__sreg *reg; /* with a reference; NULL for a foreign stream or the legacy stream */
    bool per_thread;
    bool ordered; /* (rmm__recorded_order, a deferred free: its free's stream waits for it already) */
    int device;   /* current at the record: the stream's (its events are made there) */
} rmm__rec_stream;
RMM__PRIVATE rmm_status rmm__rec_stream_make(rmm_stream stream, rmm__rec_stream *out);
RMM__PRIVATE void rmm__rec_stream_drop(rmm__rec_stream *rs);
RMM__PRIVATE rmm_status rmm__rec_stream_order(const rmm__rec_stream *rs, rmm_stream stream, int *synced);
RMM__PRIVATE uint64_t rmm__rec_stream_key(const rmm__rec_stream *rs);
RMM__PRIVATE bool rmm__rec_stream_done(const rmm__rec_stream *rs);
RMM__PRIVATE bool rmm__rec_stream_thread_gone(const rmm__rec_stream *rs);
RMM__PRIVATE int rmm__passes_through(const rmm_resource *mr);
RMM__PRIVATE bool rmm__aligned_passes(rmm_resource *mr, const void *ptr);
/* How far up a chain of resources a record reaches (a user's graph with a cycle stops there). */
#define RMM__REC_CHAIN 32
/* (mr, ptr) -> the streams recorded for it through mr, in one map under one lock; rmm__recorded_count
   is the number of entries, read with one relaxed load by every free. */
typedef struct rmm__recorded {
    rmm_resource *mr;
    void *ptr;
    struct rmm__recorded *next; /* another resource's record at the same address (or, once taken by a
                                   free, the next entry it took) */
    size_t count, cap;
    rmm__rec_stream *streams;
    int chain_len;
    rmm_resource *chain[RMM__REC_CHAIN]; /* mr and what is under it, as the record found them */
} rmm__recorded;
static rmm__mutex rmm__recorded_lock = RMM__MUTEX_INIT;
static rmm__addr_map rmm__recorded_map;
static size_t rmm__recorded_count;
/* The entry of (mr, ptr), or NULL. Caller holds the lock. */
RMM__PRIVATE rmm__recorded *rmm__recorded_find(rmm_resource *mr, void *ptr) {
    void **slot = rmm__recorded_map.slots ? rmm__addr_map_find(&rmm__recorded_map, (uintptr_t)ptr) : NULL;
    rmm__recorded *r;
    for (r = slot ? (rmm__recorded *)*slot : NULL; r; r = r->next)
        if (r->mr == mr) return r;
    return NULL;
}
/* mr and the resources under it (rmm_resource_get_upstream), up to RMM__REC_CHAIN: their count.
   Called without rmm__recorded_lock (a user type's get_upstream may call the library). */
RMM__PRIVATE int rmm__chain_of(rmm_resource *mr, rmm_resource **chain) {
    int n = 0;
    for (; mr && n < RMM__REC_CHAIN; mr = rmm_resource_get_upstream(mr)) chain[n++] = mr;
    return n;
}
RMM__PRIVATE bool rmm__chain_has(rmm_resource *const *chain, int n, const rmm_resource *mr) {
    int i;
    for (i = 0; i < n; i++)
        if (chain[i] == mr) return true;
    return false;
}
RMM__PRIVATE bool rmm__base_is_equal(const rmm_resource *self, const rmm_resource *other);
/* Whether chains a and b reach two equal base resources (rmm_resource_is_equal: cudaMalloc-family
   resources of one kind and device free each other's memory). O(na * nb). */
RMM__PRIVATE bool rmm__chains_share_a_base(rmm_resource *const *a, int na, rmm_resource *const *b, int nb) {
    int i, j;
    for (i = 0; i < na; i++) {
        if (!a[i] || !a[i]->vtable || a[i]->vtable->is_equal != rmm__base_is_equal) continue;
        for (j = 0; j < nb; j++)
            if (b[j] && b[j]->vtable && rmm__base_is_equal(a[i], b[j])) return true;
    }
    return false;
}
/* Whether a free through chain[0] (its chain) frees what r recorded: the same resource, or one on
   the other's chain (a block allocated through an adaptor and recorded through what is under it,
   or the other way round, or through the current resource: red team 19), or chains that reach
   equal base resources (a block recorded through one cuda resource and freed through another of
   the device: until 2026-11-30 the free waited for nothing and the record stayed, a red team's
   find). */
RMM__PRIVATE bool rmm__recorded_related(const rmm__recorded *r, rmm_resource *const *chain, int n) {
    return rmm__chain_has(chain, n, r->mr) || rmm__chain_has(r->chain, r->chain_len, chain[0]) || rmm__chains_share_a_base(r->chain, r->chain_len, chain, n);
}
RMM__PRIVATE bool rmm__rec_stream_same(const rmm__rec_stream *a, const rmm__rec_stream *b) {
    return a->handle == b->handle && a->reg == b->reg && a->per_thread == b->per_thread && a->device == b->device;
}
/* Drops r's records of library streams destroyed since whose work up to the destroy is done (their
   death event complete, or synchronized at the destroy): a free has nothing left to wait for there.
   A long-lived block recorded on many short-lived streams kept every one, with its registry entry
   and event (red team 33: 100,000 records, and 100,000 waits at the free). And of the records of
   per-thread streams whose threads have exited it keeps one a device: the free synchronizes that
   device for any of them, once (rmm__rec_stream_order), so the rest order nothing more; they kept
   a record and the thread's registry entry each (red team 35: 100,000 exited threads, 100,000
   records, 6.3 MB). O(r's streams) and an event query per destroyed stream; keeps the caller's
   last error. Caller holds the lock. */
RMM__PRIVATE void rmm__recorded_drop_done(rmm__recorded *r) {
    size_t i, kept_n = 0;
    unsigned char gone_kept[RMM_MAX_DEVICES]; /* 1: a gone thread's record on that device is kept */
    memset(gone_kept, 0, sizeof gone_kept);
    for (i = 0; i < r->count; i++) {
        rmm__rec_stream *rs = &r->streams[i];
        bool drop = rmm__rec_stream_done(rs);
        if (!drop && rmm__rec_stream_thread_gone(rs) && rs->device >= 0 && rs->device < RMM_MAX_DEVICES) {
            drop = gone_kept[rs->device] != 0;
            gone_kept[rs->device] = 1;
        }
        if (drop) rmm__rec_stream_drop(rs);
        else r->streams[kept_n++] = *rs;
    }
    r->count = kept_n;
}
/* Adds *rs to r's streams (the reference moves to r), or drops it if r has that stream already;
   false iff host memory ran out (rs untouched). When r is full, the records of destroyed streams
   whose work is done go first (rmm__recorded_drop_done), and r grows anyway when more than half stay,
   so a record costs O(1) amortized plus the scan for the same stream. Caller holds the lock. */
RMM__PRIVATE bool rmm__recorded_add(rmm__recorded *r, rmm__rec_stream *rs) {
    size_t i;
    for (i = 0; i < r->count; i++)
        if (rmm__rec_stream_same(&r->streams[i], rs)) {
            rmm__rec_stream_drop(rs);
            return true;
        }
    if (r->count == r->cap) {
        if (r->cap) rmm__recorded_drop_done(r);
        if (r->count > r->cap / 2 || r->cap == 0) { /* (pruned to more than half: grows all the same) */
            size_t cap = r->cap ? r->cap * 2 : 4;
            rmm__rec_stream *grown = (rmm__rec_stream *)RMM_SYS_REALLOC(r->streams, cap * sizeof *grown);
            if (!grown) return false;
            r->streams = grown;
            r->cap = cap;
        }
    }
    r->streams[r->count++] = *rs;
    rs->reg = NULL;
    return true;
}
RMM__IMPL rmm_status rmm_record_stream(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream) {
    void *base = NULL;
    size_t offset = 0;
    rmm__recorded *r;
    rmm__rec_stream rs;
    rmm_resource *chain[RMM__REC_CHAIN];
    rmm__kept_error kept;
    int n;
    rmm_status st;
    (void)bytes;
    if (!ptr) return RMM__NULL_OUT("rmm_record_stream", "ptr");
    mr = rmm__resolve(mr);
    if (!mr) return rmm_last_status();
    if (RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_pools_live) != 0) {
        int owns = rmm__graph_owns(ptr);
        if (owns == 1) return RMM_SUCCESS; /* a graph pool's block: its reuse follows the capture's rules (>>graph) */
        if (owns == 2) return RMM__INVALID("rmm_record_stream(ptr=%p): not a live block of a graph pool", ptr);
    }
    rmm__error_keep(&kept);
    st = rmm_resource_allocation_base(mr, ptr, &base, &offset);
    if (st == RMM_ERROR_INVALID_ARGUMENT)
        return RMM__INVALID("rmm_record_stream(ptr=%p): not a live block of resource '%s' (%s)", ptr, rmm_resource_type_name(mr), rmm_last_error());
    if (st != RMM_SUCCESS) rmm__error_back(&kept); /* (NOT_SUPPORTED: a resource that cannot say, which is no failure here; a success leaves no failure behind: a red team's find) */
    n = rmm__chain_of(mr, chain);
    RMM_TRY(rmm__rec_stream_make(stream, &rs));
    rmm__lock(&rmm__recorded_lock);
    r = rmm__recorded_find(mr, ptr);
    if (!r) {
        void **slot;
        r = (rmm__recorded *)rmm__calloc(1, sizeof *r);
        if (!r || (!rmm__recorded_map.slots && !rmm__addr_map_init(&rmm__recorded_map, 64))) {
            RMM_SYS_FREE(r);
            r = NULL;
        } else {
            r->mr = mr;
            r->ptr = ptr;
            r->chain_len = n;
            memcpy(r->chain, chain, (size_t)n * sizeof *chain);
            slot = rmm__addr_map_find(&rmm__recorded_map, (uintptr_t)ptr);
            if (slot) { /* another resource's record at this address: chained */
                r->next = (rmm__recorded *)*slot;
                *slot = r;
            } else if (!rmm__addr_map_put(&rmm__recorded_map, (uintptr_t)ptr, r)) {
                RMM_SYS_FREE(r);
                r = NULL;
            }
            if (r) RMM__ATOMIC_ADD(&rmm__recorded_count, 1);
        }
    }
    if (!r || !rmm__recorded_add(r, &rs)) { /* (an entry made now stays, empty: harmless) */
        rmm__unlock(&rmm__recorded_lock);
        rmm__rec_stream_drop(&rs);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_record_stream: out of host memory");
    }
    rmm__unlock(&rmm__recorded_lock);
    return RMM_SUCCESS;
}
/* Whether any record is kept at ptr (a lock and a hash lookup). */
RMM__PRIVATE bool rmm__recorded_at(void *ptr) {
    bool at;
    rmm__lock(&rmm__recorded_lock);
    at = rmm__recorded_map.slots && rmm__addr_map_find(&rmm__recorded_map, (uintptr_t)ptr) != NULL;
    rmm__unlock(&rmm__recorded_lock);
    return at;
}
/* Unlinks every entry at ptr that a free through chain[0] (its chain, n long) frees
   (rmm__recorded_related), as a list through next that the caller then owns, or NULL. Caller holds
   the lock. */
RMM__PRIVATE rmm__recorded *rmm__recorded_unlink(rmm_resource *const *chain, int n, void *ptr) {
    rmm__recorded *r, **at, *taken = NULL;
    void **slot = rmm__recorded_map.slots ? rmm__addr_map_find(&rmm__recorded_map, (uintptr_t)ptr) : NULL;
    if (!slot) return NULL;
    at = (rmm__recorded **)slot;
    while ((r = *at) != NULL) {
        if (!rmm__recorded_related(r, chain, n)) {
            at = &r->next;
            continue;
        }
        *at = r->next;
        r->next = taken;
        taken = r;
        RMM__ATOMIC_SUB(&rmm__recorded_count, 1);
    }
    if (!*slot) (void)rmm__addr_map_remove(&rmm__recorded_map, (uintptr_t)ptr);
    return taken;
}
/* Frees a list of entries from rmm__recorded_unlink, dropping their references. */
RMM__PRIVATE void rmm__recorded_release(rmm__recorded *r) {
    while (r) {
        rmm__recorded *next = r->next;
        size_t i;
        for (i = 0; i < r->count; i++) rmm__rec_stream_drop(&r->streams[i]);
        RMM_SYS_FREE(r->streams);
        RMM_SYS_FREE(r);
        r = next;
    }
}
/* Puts back a list taken by rmm__recorded_unlink (its free failed): each entry merged into one
   recorded for the same (mr, block) meanwhile, else linked again (out of host memory: dropped). */
RMM__PRIVATE void rmm__recorded_rejoin(rmm__recorded **head, rmm__recorded *r);
RMM__PRIVATE void rmm__recorded_restore(rmm__recorded *list) {
    rmm__recorded *r;
    void **slot;
    rmm__lock(&rmm__recorded_lock);
    while ((r = list) != NULL) {
        list = r->next;
        r->next = NULL;
        if ((slot = rmm__addr_map_find(&rmm__recorded_map, (uintptr_t)r->ptr)) != NULL) {
            RMM__ATOMIC_ADD(&rmm__recorded_count, 1); /* (counted again; a merge counts it out) */
            rmm__recorded_rejoin((rmm__recorded **)slot, r);
        } else if (rmm__addr_map_put(&rmm__recorded_map, (uintptr_t)r->ptr, r)) {
            RMM__ATOMIC_ADD(&rmm__recorded_count, 1);
        } else {
            rmm__recorded_release(r);
        }
    }
    rmm__unlock(&rmm__recorded_lock);
}
/* The list without its entries that hold no stream (released). */
RMM__PRIVATE rmm__recorded *rmm__recorded_prune(rmm__recorded *list) {
    rmm__recorded *keep = NULL, *r;
    while ((r = list) != NULL) {
        list = r->next;
        r->next = NULL;
        if (r->count == 0) {
            rmm__recorded_release(r);
        } else {
            r->next = keep;
            keep = r;
        }
    }
    return keep;
}
/* Before the free of ptr through mr on `stream`: takes the entries recorded for that block
   (*taken, a list, or NULL), and makes `stream` wait for an event recorded on each of their
   streams, or, where a stream cannot be named from this thread (another thread's per-thread
   stream) or an event cannot be recorded on a foreign stream (destroyed, against the contract),
   synchronizes that stream's device (not again if the one before synchronized it). On failure the entries are put back. The entries leave the map
   before the free, so a record made for the block once it is handed out again (by another
   thread, right after the free) is a new entry, never one of these. Where a recorded stream is
   registered for graph capture, *capture_key is that stream's key (rmm__graph_defer_recorded then
   defers the free to its end), else RMM__GKEY_NONE: `stream` then waits now for the recorded
   streams that are not registered, which are forgotten, and the entries are put back with the
   registered ones (a review's find: all were looked up at the end by handle, where a stream
   destroyed meanwhile ordered nothing, or the stream that got its handle); a free on the legacy
   stream, which a capture of a blocking stream forbids touching, puts every entry back. */
#define RMM__GKEY_NONE (~(uint64_t)0)
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__recorded_order(rmm_resource *mr, void *ptr, rmm_stream stream, rmm__recorded **taken, uint64_t *capture_key) {
    rmm__recorded *r;
    rmm_resource *chain[RMM__REC_CHAIN];
    int n, synced = -1;
    rmm_status st = RMM_SUCCESS;
    size_t i;
    *taken = NULL;
    *capture_key = RMM__GKEY_NONE;
    if (!rmm__recorded_at(ptr)) return RMM_SUCCESS; /* (most frees: nothing at this address, no chain walked) */
    n = rmm__chain_of(mr, chain);
    rmm__lock(&rmm__recorded_lock);
    *taken = rmm__recorded_unlink(chain, n, ptr);
    rmm__unlock(&rmm__recorded_lock);
    if (*taken && RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) != 0) {
        for (r = *taken; r && *capture_key == RMM__GKEY_NONE; r = r->next)
            for (i = 0; i < r->count && *capture_key == RMM__GKEY_NONE; i++)
                if (rmm__graph_key_registered(rmm__rec_stream_key(&r->streams[i]))) *capture_key = rmm__rec_stream_key(&r->streams[i]);
        if (*capture_key != RMM__GKEY_NONE) {
            if (!rmm__stream_is_legacy(stream)) {
                for (r = *taken; r && st == RMM_SUCCESS; r = r->next)
                    for (i = 0; i < r->count && st == RMM_SUCCESS; i++)
                        if (!rmm__graph_key_registered(rmm__rec_stream_key(&r->streams[i]))) {
                            st = rmm__rec_stream_order(&r->streams[i], stream, &synced);
                            r->streams[i].ordered = st == RMM_SUCCESS;
                        }
                for (r = *taken; r; r = r->next) { /* forgotten if all went well, else all kept */
                    size_t k = 0;
                    for (i = 0; i < r->count; i++) {
                        if (st == RMM_SUCCESS && r->streams[i].ordered) rmm__rec_stream_drop(&r->streams[i]);
                        else r->streams[k++] = r->streams[i];
                    }
                    for (i = 0; i < k; i++) r->streams[i].ordered = false;
                    r->count = k;
                }
            }
            rmm__recorded_restore(rmm__recorded_prune(*taken));
            *taken = NULL;
            if (st != RMM_SUCCESS) *capture_key = RMM__GKEY_NONE;
            return st;
        }
    }
    for (r = *taken; r && st == RMM_SUCCESS; r = r->next)
        for (i = 0; i < r->count && st == RMM_SUCCESS; i++) st = rmm__rec_stream_order(&r->streams[i], stream, &synced);
    if (st != RMM_SUCCESS && *taken) {
        rmm__recorded_restore(*taken);
        *taken = NULL;
    }
    return st;
}
/* Merges r into the entry of (r->mr, r->ptr) in the list at *head if there is one (r is released),
   else puts it at the head. Caller holds the lock. */
RMM__PRIVATE void rmm__recorded_rejoin(rmm__recorded **head, rmm__recorded *r) {
    rmm__recorded *now;
    size_t i;
    for (now = *head; now && now->mr != r->mr; now = now->next) {}
    if (now) { /* (each stream added moves its reference; out of host memory, the rest are dropped) */
        r->next = NULL;
        for (i = 0; i < r->count && rmm__recorded_add(now, &r->streams[i]); i++) {}
        rmm__recorded_release(r);
        RMM__ATOMIC_SUB(&rmm__recorded_count, 1);
        return;
    }
    r->next = *head;
    *head = r;
}
/* A resource is being destroyed: the entries recorded through it, or through a resource over it
   (whose blocks are its blocks), go. Those recorded through an adaptor that passes the block
   through (its blocks are its upstream's, at the same address, and may still be freed there:
   review 19; the aligned adaptor for what it did not over-align) are handed to its upstream. */
RMM__PRIVATE void rmm__recorded_drop_resource(rmm_resource *mr) {
    size_t i, n = 0, k;
    uintptr_t *emptied;
    int pass = rmm__passes_through(mr);
    rmm__lock(&rmm__recorded_lock);
    emptied = rmm__recorded_map.slots ? (uintptr_t *)rmm__calloc(rmm__recorded_map.count + 1, sizeof *emptied) : NULL;
    for (i = 0; rmm__recorded_map.slots && i <= rmm__recorded_map.mask; i++) {
        rmm__recorded **at, *r, *handed = NULL;
        if (!rmm__recorded_map.slots[i].key) continue;
        at = (rmm__recorded **)&rmm__recorded_map.slots[i].value;
        while ((r = *at) != NULL) {
            if (!rmm__chain_has(r->chain, r->chain_len, mr)) {
                at = &r->next;
                continue;
            }
            *at = r->next;
            if (r->mr == mr && r->chain_len > 1 && (pass == 1 || (pass == 2 && rmm__aligned_passes(mr, r->ptr)))) {
                r->chain_len--;
                memmove(r->chain, r->chain + 1, (size_t)r->chain_len * sizeof *r->chain);
                r->mr = r->chain[0];
                r->next = handed;
                handed = r;
            } else {
                r->next = NULL;
                rmm__recorded_release(r);
                RMM__ATOMIC_SUB(&rmm__recorded_count, 1);
            }
        }
        while ((r = handed) != NULL) {
            handed = r->next;
            rmm__recorded_rejoin((rmm__recorded **)&rmm__recorded_map.slots[i].value, r);
        }
        if (!rmm__recorded_map.slots[i].value && emptied) emptied[n++] = rmm__recorded_map.slots[i].key;
    }
    for (k = 0; k < n; k++) (void)rmm__addr_map_remove(&rmm__recorded_map, emptied[k]); /* (after the scan: removal moves slots) */
    RMM_SYS_FREE(emptied);
    rmm__unlock(&rmm__recorded_lock); /* (out of host memory for the list: emptied slots stay, holding NULL, until reused) */
}
/* true iff some block is recorded (one relaxed load): the free then looks its pointer up. */
static inline bool rmm__recorded_any(void) { return RMM__UNLIKELY(RMM__ATOMIC_LOAD_RELAXED(&rmm__recorded_count) != 0); }
/* true iff a free of ptr through mr would find recorded streams. */
RMM__PRIVATE bool rmm__recorded_has(rmm_resource *mr, void *ptr) {
    bool has = false;
    void **slot;
    rmm__recorded *r;
    rmm_resource *chain[RMM__REC_CHAIN];
    int n;
    if (!rmm__recorded_at(ptr)) return false;
    n = rmm__chain_of(mr, chain);
    rmm__lock(&rmm__recorded_lock);
    slot = rmm__recorded_map.slots ? rmm__addr_map_find(&rmm__recorded_map, (uintptr_t)ptr) : NULL;
    for (r = slot ? (rmm__recorded *)*slot : NULL; r && !has; r = r->next) has = rmm__recorded_related(r, chain, n);
    rmm__unlock(&rmm__recorded_lock);
    return has;
}
/* The free of every public path: a recorded block orders `stream` after its recorded streams
   first, and forgets them once the resource took it back (puts them back if it did not). */
static inline rmm_status rmm__free_recorded(rmm_resource *mr, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__recorded *taken = NULL;
    rmm_status st;
    if (rmm__recorded_any()) {
        uint64_t key;
        int tries;
        for (tries = 0;; tries++) { /* (a free deferred to a capture's end: rmm__graph_defer_recorded) */
            bool ended = false;
            RMM_TRY(rmm__recorded_order(mr, ptr, stream, &taken, &key));
            if (RMM__LIKELY(key == RMM__GKEY_NONE)) break;
            if (tries == 8)
                return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "deallocate(ptr=%p): a stream recorded for the block kept beginning and ending graph "
                                 "captures while it was freed (nothing freed: try again)", ptr);
            st = rmm__graph_defer_recorded(mr, ptr, bytes, alignment, stream, key, &ended);
            if (!ended) return st;
        }
    }
    st = mr->vtable->deallocate(mr, ptr, bytes, alignment, stream);
    if (RMM__UNLIKELY(taken != NULL)) {
        if (st == RMM_SUCCESS) rmm__recorded_release(taken);
        else rmm__recorded_restore(taken);
    }
    return st;
}
/* A pointer freed with bytes 0: INVALID_ARGUMENT (see rmm_deallocate). */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__free_of_zero_bytes(const char *fn, const void *ptr) {
    return RMM__INVALID("%s(ptr=%p, bytes=0): no allocation has 0 bytes (allocating 0 bytes hands out NULL); pass the size it was allocated "
                        "with (nothing freed)", fn, ptr);
}
RMM__IMPL rmm_status rmm_deallocate_aligned(rmm_resource *mr, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    if (RMM__UNLIKELY(!ptr)) return RMM_SUCCESS;
    if (RMM__UNLIKELY(bytes == 0)) return rmm__free_of_zero_bytes("rmm_deallocate_aligned", ptr);
    if (RMM__UNLIKELY(!rmm__is_pow2(alignment)))
        return RMM__INVALID("rmm_deallocate_aligned(ptr=%p, alignment=%zu): alignment is not a power of two", ptr, alignment);
    if (alignment < RMM_ALIGNMENT) alignment = RMM_ALIGNMENT;
    mr = rmm__resolve(mr);
    if (RMM__UNLIKELY(!mr)) return rmm_last_status();
    if (RMM__UNLIKELY(RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_pools_live) != 0)) {
        bool routed = false;
        rmm_status st = rmm__graph_route_free("rmm_deallocate_aligned", mr, ptr, bytes, alignment, stream, &routed);
        if (routed) return st;
    }
    rmm__nvtx_mark(mr, 1, bytes);
    return rmm__free_recorded(mr, ptr, bytes, alignment, stream);
}
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__deallocate_general(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream) {
    if (RMM__UNLIKELY(!ptr)) return RMM_SUCCESS;
    if (RMM__UNLIKELY(bytes == 0)) return rmm__free_of_zero_bytes("rmm_deallocate", ptr);
    mr = rmm__resolve(mr);
    if (RMM__UNLIKELY(!mr)) return rmm_last_status();
    if (RMM__UNLIKELY(RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_pools_live) != 0)) {
        bool routed = false;
        rmm_status st = rmm__graph_route_free("rmm_deallocate", mr, ptr, bytes, RMM_ALIGNMENT, stream, &routed);
        if (routed) return st;
    }
    rmm__nvtx_mark(mr, 1, bytes);
    return rmm__free_recorded(mr, ptr, bytes, RMM_ALIGNMENT, stream);
}
RMM__IMPL rmm_status rmm_deallocate(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream) {
    if (RMM__UNLIKELY(!ptr || !mr || RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_pools_live) != 0 || rmm__recorded_any()))
        return rmm__deallocate_general(mr, ptr, bytes, stream);
    if (RMM__UNLIKELY(bytes == 0)) return rmm__free_of_zero_bytes("rmm_deallocate", ptr); /* (its own test: in the one above, gcc computed it branch-free, 4 instructions a free) */
    rmm__nvtx_mark(mr, 1, bytes);
    return mr->vtable->deallocate(mr, ptr, bytes, RMM_ALIGNMENT, stream);
}
RMM__IMPL void rmm_resource_destroy(rmm_resource *mr) {
    const rmm_resource *via;
    if (RMM__UNLIKELY(mr && (RMM__ATOMIC_LOAD(&rmm__graph_captures) != 0 || RMM__ATOMIC_LOAD(&rmm__graph_ending) != 0)) &&
        (via = rmm__graph_defers_into(mr)) != NULL) {
        /* a free deferred to rmm_capture_end would be made into it (or through it): not destroyed */
        if (via == mr)
            (void)RMM__INVALID("rmm_resource_destroy: the '%s' resource %p is not destroyed: a free of its memory waits for rmm_capture_end "
                               "(a block freed on a stream registered for capture); destroy it after the capture ends", rmm_resource_type_name(mr), (void *)mr);
        else
            (void)RMM__INVALID("rmm_resource_destroy: the '%s' resource %p is not destroyed: a free through the '%s' resource %p over it waits for "
                               "rmm_capture_end (a block freed on a stream registered for capture); destroy it after the capture ends",
                               rmm_resource_type_name(mr), (void *)mr, rmm_resource_type_name(via), (void *)via);
        return;
    }
    if (mr && rmm__recorded_any()) rmm__recorded_drop_resource(mr);
    if (mr && mr->vtable && mr->vtable->destroy) mr->vtable->destroy(mr);
}
RMM__IMPL bool rmm_resource_is_equal(const rmm_resource *a, const rmm_resource *b) {
    if (a == b && a) return true;
    if (!a) a = rmm_get_current_device_resource(); /* NULL: the current device resource, as in the generic calls */
    if (!b) b = rmm_get_current_device_resource();
    if (!a || !b) return false; /* (the current device could not be read) */
    if (a == b) return true;
    if (a->vtable->is_equal) return a->vtable->is_equal(a, b);
    return false;
}
RMM__IMPL const char *rmm_resource_type_name(const rmm_resource *mr) {
    if (!mr) return "null";
    return mr->vtable && mr->vtable->type_name ? mr->vtable->type_name : "unnamed";
}

/* RMM_DUMP_ON_OOM's file: the dump goes to a tmpfile() first (taking the resources' locks), then is
   copied to PATH under a process-wide lock, so that threads failing at once each write PATH whole
   (each opening PATH itself left one dump with the tail of a longer one: a red team's find; a
   rename over PATH, the first mend, replaced a symlink or a device such as /dev/stderr with a
   regular file: a review's find). PATH is opened as fopen(PATH, "w") does: symlinks followed,
   devices written. Best effort: returns true, or false with what failed in why[0..n) (the errno's
   text, or the dump's own message when rmm_resource_dump_json failed: a resource reached from
   inside its own upstream, a graph with a cycle), which the explanation reports (a red team's
   find: a PATH that could not be written was passed over without a word; until 2026-11-29 a
   failed dump was reported as EIO). */
static rmm__mutex rmm__oom_dump_lock = RMM__MUTEX_INIT;
RMM__PRIVATE bool rmm__dump_on_oom(rmm_resource *mr, const char *path, char *why, size_t n) {
    FILE *tmp, *out;
    char buf[4096];
    size_t got;
    int err = 0;
    errno = 0;
    if ((tmp = tmpfile()) == NULL) {
        rmm__copy_text(why, n, strerror(errno ? errno : EIO));
        return false;
    }
    if (rmm_resource_dump_json(mr, tmp) != RMM_SUCCESS) {
        rmm__copy_text(why, n, rmm_last_error()); /* (before anything else can fail on this thread) */
        fclose(tmp);
        return false;
    }
    if (fflush(tmp) != 0) err = errno ? errno : EIO;
    if (!err) {
        rewind(tmp);
        rmm__lock(&rmm__oom_dump_lock); /* (a leaf: held for the copy only, no resource lock taken under it) */
        errno = 0;
        if ((out = fopen(path, "w")) != NULL) {
            while ((got = fread(buf, 1, sizeof buf, tmp)) > 0)
                if (fwrite(buf, 1, got, out) != got) {
                    err = errno ? errno : EIO;
                    break;
                }
            if (fclose(out) != 0 && !err) err = errno ? errno : EIO;
        } else {
            err = errno ? errno : EIO;
        }
        rmm__unlock(&rmm__oom_dump_lock);
    }
    fclose(tmp);
    if (err) rmm__copy_text(why, n, strerror(err));
    return err == 0;
}
/* Out of memory, explained: what a sub-allocator or adaptor knows when it runs out, and a verdict,
   in rmm_last_error(); with RMM_DUMP_ON_OOM=PATH in the environment, the resource's whole state
   (rmm_resource_dump_json) is written to PATH as well. Runs only on the out-of-memory path. */
typedef struct rmm__oom_facts {
    const char *who;
    size_t bytes, alignment;
    rmm_stream stream;
    size_t held, maximum; /* maximum 0: none, unless bounded */
    bool bounded;         /* maximum applies even when it is 0 (a limiting adaptor's limit of 0) */
    size_t live, largest_free, free_total, free_other; /* free_other: in other streams' (or arenas') lists */
    const char *verdict;  /* the resource's own verdict, or NULL: rmm__oom_explain decides */
    int cause_cuda;       /* rmm_last_cuda_error() of the failure the cause quotes (0: none) */
} rmm__oom_facts;
RMM__PRIVATE rmm_status rmm__oom_explain(rmm_resource *mr, const rmm__oom_facts *f, const char *cause_in) {
    char cause[RMM__CAUSE_MAX], maximum[48], dumped[416] = ""; /* (a path of 95 bytes and a reason of 255) */
    const char *verdict, *dump = getenv("RMM_DUMP_ON_OOM");
    size_t dev_free = 0, dev_total = 0, need = f->bytes, padded;
    bool aligned = f->alignment > RMM_ALIGNMENT; /* an alignment past the 256 every block has */
    rmm__copy_cause(cause, cause_in ? cause_in : "");
    (void)rmm__align_up(f->bytes, RMM_ALIGNMENT, &need);
    /* what a block placed at the alignment may take: the request and up to alignment - 256 bytes in front */
    padded = !aligned ? need : need > SIZE_MAX - (f->alignment - RMM_ALIGNMENT) ? SIZE_MAX : need + (f->alignment - RMM_ALIGNMENT);
    if (rmm__mem_info(&dev_free, &dev_total) != RMM_SUCCESS) dev_free = dev_total = 0;
    if (f->verdict) verdict = f->verdict;
    else if (aligned && (padded == SIZE_MAX || (dev_total && padded > dev_total)) && (!dev_total || need <= dev_total)) /* (the request alone fits) */
        verdict = "alignment: the request with room to reach its alignment is larger than the device";
    else if (f->free_other >= need && f->largest_free < need) verdict = "held by other streams: free memory of this resource waits in other streams' lists";
    else if (aligned && f->largest_free >= need) verdict = "alignment: free blocks are large enough, but none at this alignment";
    else if (f->free_total >= need) verdict = "fragmented: enough is free, but no free block is large enough";
    else if ((f->maximum || f->bounded) && (f->held + padded > f->maximum || f->held + padded < padded)) /* (with the room an alignment needs: a red team's find) */
        verdict = "at the maximum: the resource may not grow further";
    else if (dev_total && dev_free < need) verdict = "device full: the GPU has too little free memory";
    else if (strstr(cause, "out of host memory") || strstr(cause, "host out of memory")) /* (the library's own records, or a record below, such as the host backend's: the cause says which) */
        verdict = "out of host memory: the records the allocation needs could not be made";
    else verdict = "refused upstream: a resource below (a limit, a user resource) said no";
    if (f->maximum || f->bounded) snprintf(maximum, sizeof maximum, "a maximum of %zu", f->maximum);
    else rmm__copy_text(maximum, sizeof maximum, "no maximum");
    if (dump && *dump) {
        char why[256];
        if (!rmm__dump_on_oom(mr, dump, why, sizeof why)) {
            char path[96];
            rmm__copy_text(path, sizeof path, dump);
            snprintf(dumped, sizeof dumped, "; RMM_DUMP_ON_OOM: nothing written to '%s'%s: %s", path, strlen(dump) >= sizeof path ? "..." : "", why);
            RMM__LOG(RMM_LOG_LEVEL_WARN, "%s: out of memory: RMM_DUMP_ON_OOM: could not write the dump to '%s': %s", f->who, dump, why);
        }
    }
    return rmm__fail_cuda(f->cause_cuda, RMM_ERROR_OUT_OF_MEMORY,
                     "%s: out of memory allocating %zu bytes (alignment %zu, stream %p). Verdict: %s. It holds %zu bytes (%s), %zu live; "
                     "largest free block %zu, free %zu in all, %zu of it in other streams' lists; device free %zu of %zu%s%s%s",
                     f->who, f->bytes, f->alignment, (void *)f->stream, verdict, f->held, maximum, f->live, f->largest_free, f->free_total, f->free_other,
                     dev_free, dev_total, cause[0] ? "; cause: " : "", cause, dumped);
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
RMM__PRIVATE void rmm__overalign_all_remove(uintptr_t aligned);
RMM__PRIVATE void rmm__overalign_free(rmm__overalign *o) {
    size_t i;
    if (!o->ready) return;
    for (i = 0; o->map.count && i <= o->map.mask; i++) /* (blocks still live at the destroy: no longer anyone's) */
        if (o->map.slots[i].key) rmm__overalign_all_remove(o->map.slots[i].key);
    rmm__addr_map_free(&o->map);
    rmm__mutex_destroy(&o->lock);
    o->ready = false;
}
/* Every base resource's over-aligned blocks, for the default-alignment free of another resource of
   the cudaMalloc family: a block another resource (an equal one: two cuda resources of a device,
   the library's default among them) over-aligned must not be freed raw there, which left its
   owner's record behind for the next block at that address (red team 29: the owner's later free
   released another owner's memory). aligned -> how many records hold it: over-aligners stacked on
   one another (an aligned adaptor over a base resource asked for more than 256 bytes' alignment,
   or over another aligned adaptor) can hand out one address, and one's removal (its free, or its
   destroy with the block live) must leave the others' (red team 33: an aligned adaptor destroyed
   with such a block live took its base's entry along, and the base's block could then be freed
   raw through an equal resource, its record left behind). The count of addresses is read with no
   lock, so a free with nothing over-aligned anywhere pays one atomic load. O(1) and a lock each. */
static rmm__mutex rmm__overalign_all_lock = RMM__MUTEX_INIT;
static rmm__addr_map rmm__overalign_all;
static size_t rmm__overalign_all_count; /* atomic: rmm__overalign_all's addresses */
/* One more holder of `aligned`; false (nothing changed) out of host memory. */
RMM__PRIVATE bool rmm__overalign_all_put(uintptr_t aligned) {
    bool ok = true;
    void **slot;
    rmm__lock(&rmm__overalign_all_lock);
    if (rmm__overalign_all.slots && (slot = rmm__addr_map_find(&rmm__overalign_all, aligned)) != NULL)
        *slot = (void *)((uintptr_t)*slot + 1); /* (held already: a count, no allocation) */
    else
        ok = (rmm__overalign_all.slots || rmm__addr_map_init(&rmm__overalign_all, 16)) && rmm__addr_map_put(&rmm__overalign_all, aligned, (void *)(uintptr_t)1);
    if (ok) RMM__ATOMIC_STORE(&rmm__overalign_all_count, rmm__overalign_all.count);
    rmm__unlock(&rmm__overalign_all_lock);
    return ok;
}
/* One holder of `aligned` fewer; the address leaves the map with its last. */
RMM__PRIVATE void rmm__overalign_all_remove(uintptr_t aligned) {
    void **slot;
    rmm__lock(&rmm__overalign_all_lock);
    if (rmm__overalign_all.slots && (slot = rmm__addr_map_find(&rmm__overalign_all, aligned)) != NULL) {
        if ((uintptr_t)*slot > 1) *slot = (void *)((uintptr_t)*slot - 1);
        else (void)rmm__addr_map_remove(&rmm__overalign_all, aligned);
        RMM__ATOMIC_STORE(&rmm__overalign_all_count, rmm__overalign_all.count);
    }
    rmm__unlock(&rmm__overalign_all_lock);
}
RMM__PRIVATE bool rmm__overalign_all_holds(const void *aligned) {
    bool held;
    rmm__lock(&rmm__overalign_all_lock);
    held = rmm__overalign_all.slots && rmm__addr_map_find(&rmm__overalign_all, (uintptr_t)aligned);
    rmm__unlock(&rmm__overalign_all_lock);
    return held;
}
/* Whether `aligned` is a live over-aligned block o remembers (not one whose free is in flight). */
RMM__PRIVATE bool rmm__overalign_holds(rmm__overalign *o, const void *aligned) {
    bool held;
    void **slot;
    if (!o->ready) return false;
    rmm__lock(&o->lock);
    slot = rmm__addr_map_find(&o->map, (uintptr_t)aligned);
    held = slot && !rmm__slot_claimed(*slot); /* (a claimed one is being freed: upstream may hand the address out again) */
    rmm__unlock(&o->lock);
    return held;
}
/* Whether ptr, freed with the default alignment, is an over-aligned block of any base resource,
   the freeing one's or another's (a raw pointer that was aligned already is its own aligned
   address: freed raw, the record stayed behind, and a later block at that address was freed
   through it). Only for an
   address aligned past 256 while some resource has such a block: one atomic load, else O(1) and
   a lock. */
static inline bool rmm__overalign_misfreed(const void *ptr) {
    return ((uintptr_t)ptr & (2 * RMM_ALIGNMENT - 1)) == 0 && RMM__ATOMIC_LOAD(&rmm__overalign_all_count) != 0 && rmm__overalign_all_holds(ptr);
}
/* The size to request from upstream for an over-aligned block; false on overflow. */
RMM__PRIVATE bool rmm__overalign_request(size_t bytes, size_t alignment, size_t *request) {
    if (!rmm__align_up(bytes, RMM_ALIGNMENT, request)) return false;
    if (*request > SIZE_MAX - (alignment - RMM_ALIGNMENT)) return false;
    *request += alignment - RMM_ALIGNMENT;
    return true;
}
/* A record's value: the raw pointer (upstream's: aligned to 256 at least, which every caller has
   checked or CUDA promises) with log2 of the block's alignment in bits 2-7 (bit 0 is a claim's), so
   a free with another alignment is told apart (red team 38a: any alignment above 256 passed). */
static inline void *rmm__overalign_pack(void *raw, size_t alignment) {
    unsigned k = 0;
    while (k < 63 && ((size_t)1 << k) < alignment) k++;
    RMM_ASSERT(((uintptr_t)raw & (RMM_ALIGNMENT - 1)) == 0);
    return (void *)((uintptr_t)raw | ((uintptr_t)k << 2));
}
static inline void *rmm__overalign_unpack(void *v, size_t *alignment) {
    if (alignment) *alignment = (size_t)1 << (((uintptr_t)v >> 2) & 63);
    return (void *)((uintptr_t)v & ~(uintptr_t)(RMM_ALIGNMENT - 1));
}
RMM__PRIVATE bool rmm__overalign_remember(rmm__overalign *o, void *raw, size_t alignment, void **aligned) {
    bool ok;
    uintptr_t a = ((uintptr_t)raw + (alignment - 1)) & ~(uintptr_t)(alignment - 1);
    if (!o->ready) return false;
    if (!rmm__overalign_all_put(a)) return false;
    rmm__lock(&o->lock);
    ok = rmm__addr_map_record(&o->map, a, rmm__overalign_pack(raw, alignment));
    rmm__unlock(&o->lock);
    if (ok) *aligned = (void *)a; /* (a failed call leaves *aligned alone: the caller frees raw) */
    else rmm__overalign_all_remove(a);
    return ok;
}
/* The raw pointer behind an over-aligned one (NULL if `aligned` is not one). */
RMM__PRIVATE void *rmm__overalign_raw(rmm__overalign *o, const void *aligned) {
    void **slot, *raw = NULL;
    if (!o->ready) return NULL;
    rmm__lock(&o->lock);
    slot = rmm__addr_map_find(&o->map, (uintptr_t)aligned);
    if (slot) raw = rmm__overalign_unpack(rmm__slot_value(*slot), NULL);
    rmm__unlock(&o->lock);
    return raw;
}
/* Frees an over-aligned block: finds the raw pointer behind `aligned` and calls free_raw(raw, arg);
   the record goes only if that succeeds, so a failed free can be retried. CORRUPTION (naming `who`)
   iff `aligned` is not recorded, was allocated with another alignment (nothing freed), or a free of
   it is already in flight. */
RMM__PRIVATE rmm_status rmm__overalign_free_block(rmm__overalign *o, void *aligned, size_t alignment, const char *who,
                                                  rmm_status (*free_raw)(void *raw, void *arg), void *arg) {
    rmm__claim claim;
    rmm__claim_result c = RMM__CLAIM_ABSENT;
    rmm_status st;
    size_t had = 0;
    void *raw = NULL;
    if (o->ready) {
        rmm__lock(&o->lock);
        c = rmm__addr_map_claim(&o->map, (uintptr_t)aligned, &claim);
        if (c == RMM__CLAIM_TAKEN) raw = rmm__overalign_unpack(claim.value, &had);
        if (c == RMM__CLAIM_TAKEN && had != alignment) {
            rmm__addr_map_settle(&o->map, (uintptr_t)aligned, &claim, false); /* left as it was */
            rmm__unlock(&o->lock);
            return rmm__fail(RMM_ERROR_CORRUPTION, "%s: deallocate(ptr=%p, alignment=%zu): allocated with alignment %zu; the alignment must be the one allocated with (nothing freed)",
                             who, aligned, alignment, had);
        }
        rmm__unlock(&o->lock);
    }
    if (c != RMM__CLAIM_TAKEN)
        return rmm__fail(RMM_ERROR_CORRUPTION, "%s: deallocate(ptr=%p, alignment=%zu): not an allocation of this resource with that alignment%s", who, aligned,
                         alignment, c == RMM__CLAIM_BUSY ? " (a free of it is in flight)" : "");
    rmm__overalign_all_remove((uintptr_t)aligned); /* (before the free: upstream may hand the address out again at once) */
    st = free_raw(raw, arg);
    if (st != RMM_SUCCESS && !rmm__overalign_all_put((uintptr_t)aligned))
        RMM__LOG(RMM_LOG_LEVEL_WARN, "%s: the over-aligned block %p stays allocated (its free failed), but another resource's default-alignment free of it can no longer be refused (out of host memory)", who, aligned);
    rmm__lock(&o->lock);
    rmm__addr_map_settle(&o->map, (uintptr_t)aligned, &claim, st == RMM_SUCCESS);
    rmm__unlock(&o->lock);
    return st;
}

/* ---- describing a resource: what each type's row in >>diagnostics (rmm__descs) is made of: the
   JSON writer of rmm_resource_dump_json, the live-block list of the margin check, the row ---- */
/* ---- state as JSON (rmm_resource_dump_json) ---- */
typedef struct rmm__json {
    FILE *f;
    bool first; /* no comma before the next member or element */
} rmm__json;
RMM__PRIVATE void rmm__json_sep(rmm__json *j) {
    if (!j->first) fputc(',', j->f);
    j->first = false;
}
RMM__PRIVATE void rmm__json_key(rmm__json *j, const char *key) {
    rmm__json_sep(j);
    fprintf(j->f, "\"%s\":", key);
}
RMM__PRIVATE void rmm__json_open(rmm__json *j, const char *key, char bracket) {
    if (key) rmm__json_key(j, key);
    else rmm__json_sep(j);
    fputc(bracket, j->f);
    j->first = true;
}
RMM__PRIVATE void rmm__json_close(rmm__json *j, char bracket) {
    fputc(bracket, j->f);
    j->first = false;
}
RMM__PRIVATE void rmm__json_u64(rmm__json *j, const char *key, uint64_t v) {
    rmm__json_key(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}
RMM__PRIVATE void rmm__json_i64(rmm__json *j, const char *key, int64_t v) {
    rmm__json_key(j, key);
    fprintf(j->f, "%lld", (long long)v);
}
RMM__PRIVATE void rmm__json_bool(rmm__json *j, const char *key, bool v) {
    rmm__json_key(j, key);
    fputs(v ? "true" : "false", j->f);
}
RMM__PRIVATE void rmm__json_ptr(rmm__json *j, const char *key, const void *p) {
    rmm__json_key(j, key);
    fprintf(j->f, "\"0x%llx\"", (unsigned long long)(uintptr_t)p);
}
/* The length of the well-formed UTF-8 character at s (RFC 3629: no overlong forms, no surrogates,
   at most U+10FFFF), or 0. */
static inline size_t rmm__utf8_char(const unsigned char *s) {
    unsigned char c = s[0];
    size_t n, i;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) n = 3;
    else if (c >= 0xF0 && c <= 0xF4) n = 4;
    else return 0;
    for (i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0) || (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)) return 0;
    return n;
}
/* A JSON string: UTF-8 characters as they are, control characters and bytes that are not UTF-8
   as \u00XX (until 2026-11-29 every byte past 0x7e was escaped alone: a name "café" read back as
   "cafÃ©", a red team's find). */
RMM__PRIVATE void rmm__json_str(rmm__json *j, const char *key, const char *s) {
    rmm__json_key(j, key);
    fputc('"', j->f);
    while (s && *s) {
        unsigned char c = (unsigned char)*s;
        size_t n;
        if (c == '"' || c == '\\') fprintf(j->f, "\\%c", c);
        else if (c >= 0x80 && (n = rmm__utf8_char((const unsigned char *)s)) != 0) {
            fwrite(s, 1, n, j->f);
            s += n;
            continue;
        } else if (c < 0x20 || c >= 0x7f) fprintf(j->f, "\\u%04x", c);
        else fputc(c, j->f);
        s++;
    }
    fputc('"', j->f);
}
RMM__PRIVATE rmm_status rmm__dump_node(rmm__json *j, rmm_resource *mr, int depth);

/* ---- debug margins: every live block's checked (rmm_resource_check_corruption) ---- */
typedef struct rmm__live_block {
    const char *ptr;
    size_t requested;
    uint64_t serial; /* its allocation's rmm__margin_serial */
} rmm__live_block;
typedef struct rmm__live_list {
    rmm__live_block *v;
    size_t n, cap;
    bool oom;
} rmm__live_list;
RMM__PRIVATE void rmm__live_add(rmm__live_list *l, const char *ptr, size_t requested, uint64_t serial) {
    if (requested == SIZE_MAX) return; /* (a block whose margin could not be filled: unchecked) */
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        rmm__live_block *grown = (rmm__live_block *)RMM_SYS_REALLOC(l->v, cap * sizeof *grown);
        if (!grown) {
            l->oom = true;
            return;
        }
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n].ptr = ptr;
    l->v[l->n].requested = requested;
    l->v[l->n].serial = serial;
    l->n++;
}
typedef struct rmm__desc {
    const rmm_resource_vtable *vtable;
    const char *dump_type; /* the dump's "type" */
    rmm_resource *(*upstream)(const rmm_resource *mr);
    size_t (*child_count)(const rmm_resource *mr);
    rmm_resource *(*child)(const rmm_resource *mr, size_t i); /* NULL for an empty slot */
    rmm_status (*validate)(rmm_resource *mr);
    rmm_status (*dump)(rmm__json *j, rmm_resource *mr, int nesting); /* its members after type, name, address */
    /* One step down from mr for the block at *p: *next is the resource below (the same block, with
       *p and *off moved to that resource's allocation), or NULL when *p is the base itself. */
    rmm_status (*base_step)(rmm_resource *mr, const char **p, size_t *off, rmm_resource **next);
    rmm_status (*live)(rmm_resource *mr, rmm__live_list *live); /* (RMM_DEBUG_MARGIN) its live blocks */
} rmm__desc;
RMM__PRIVATE const rmm__desc *rmm__describe(const rmm_resource *mr);

/* Each adaptor's "counters": n named values (none for those that keep none). */
RMM__PRIVATE rmm_status rmm__json_counters(rmm__json *j, const char *const *keys, const uint64_t *values, size_t n) {
    size_t i;
    rmm__json_open(j, "counters", '{');
    for (i = 0; i < n; i++) rmm__json_u64(j, keys[i], values[i]);
    rmm__json_close(j, '}');
    return RMM_SUCCESS;
}

/* ======================================================================================= */
/* ==== base: cuda, managed, pinned, async, async view ================================== */
/* ======================================================================================= */ /* >>base */

/* RMM_DEBUG: the checks a free gets from the cudaMalloc-family (cuda, managed, pinned) and async
   resources, which release builds leave to CUDA (a double free is its error there, a wrong size is
   not seen, and the base of another resource's block, such as a pool's chunk, is freed under it).
   A process-wide record of each live block (its size and its family: the kind and device, or the
   async resources' cudaMemPool_t, as rmm_resource_is_equal pairs them) is made at the allocation
   and taken at the free: a pointer without one (a double free, a pointer the family did not hand
   out, an interior pointer), of another family or freed with another size is CORRUPTION, and
   nothing is freed; a free that fails puts the record back. Cost: a mutex, a hash operation and a
   small record per call, in RMM_DEBUG builds only. */
#if RMM__DEBUG
typedef struct rmm__dbg_block {
    size_t bytes;
    uintptr_t family;
} rmm__dbg_block;
static rmm__mutex rmm__dbg_lock = RMM__MUTEX_INIT;
static rmm__addr_map rmm__dbg_live;
/* Records a block just handed out; false iff out of host memory (the caller gives it back). A
   record there already is stale (its block was freed below the resource) and is replaced; so is a
   claimed one (a free in flight whose memory the driver released although it reported a failure:
   its settle then finds the slot taken and drops its own record). */
RMM__PRIVATE bool rmm__dbg_note(const void *ptr, size_t bytes, uintptr_t family) {
    rmm__dbg_block *rec = (rmm__dbg_block *)rmm__calloc(1, sizeof *rec), *old = NULL;
    void **slot;
    bool ok;
    if (!rec) return false;
    rec->bytes = bytes;
    rec->family = family;
    rmm__lock(&rmm__dbg_lock);
    ok = rmm__dbg_live.slots || rmm__addr_map_init(&rmm__dbg_live, 64);
    if (ok && (slot = rmm__addr_map_find(&rmm__dbg_live, (uintptr_t)ptr)) != NULL && !rmm__slot_claimed(*slot)) old = (rmm__dbg_block *)*slot;
    ok = ok && rmm__addr_map_put(&rmm__dbg_live, (uintptr_t)ptr, rec);
    rmm__unlock(&rmm__dbg_lock);
    if (!ok) {
        RMM_SYS_FREE(rec);
        return false;
    }
    RMM_SYS_FREE(old);
    return true;
}
/* Claims the record of a block about to be freed (rmm__addr_map_claim: the slot holds the claim
   until rmm__dbg_settle; c lives in the freeing call's frame), or fails with CORRUPTION, claiming
   nothing. */
RMM__PRIVATE rmm_status rmm__dbg_take(const char *who, const void *ptr, size_t bytes, uintptr_t family, rmm__claim *c) {
    rmm__dbg_block *rec = NULL;
    void **slot;
    bool busy = false;
    rmm__lock(&rmm__dbg_lock);
    slot = rmm__dbg_live.slots ? rmm__addr_map_find(&rmm__dbg_live, (uintptr_t)ptr) : NULL;
    if (slot && rmm__slot_claimed(*slot)) busy = true;
    else if (slot) rec = (rmm__dbg_block *)*slot;
    if (rec && rec->family == family && rec->bytes == bytes) (void)rmm__addr_map_claim(&rmm__dbg_live, (uintptr_t)ptr, c);
    rmm__unlock(&rmm__dbg_lock);
    if (busy)
        return rmm__fail(RMM_ERROR_CORRUPTION, "%s: deallocate(ptr=%p, bytes=%zu): another thread is freeing it now (a double free; RMM_DEBUG; nothing freed here)",
                         who, ptr, bytes);
    if (!rec)
        return rmm__fail(RMM_ERROR_CORRUPTION, "%s: deallocate(ptr=%p, bytes=%zu): not a block this kind of resource handed out, or freed already "
                         "(RMM_DEBUG; nothing freed)", who, ptr, bytes);
    if (rec->family != family)
        return rmm__fail(RMM_ERROR_CORRUPTION, "%s: deallocate(ptr=%p, bytes=%zu): allocated by a resource of another kind, device or memory pool "
                         "(RMM_DEBUG; nothing freed)", who, ptr, bytes);
    if (rec->bytes != bytes)
        return rmm__fail(RMM_ERROR_CORRUPTION, "%s: deallocate(ptr=%p, bytes=%zu): the block holds %zu bytes; the size must be the one allocated "
                         "(RMM_DEBUG; nothing freed)", who, ptr, bytes, rec->bytes);
    return RMM_SUCCESS;
}
/* After the free: the claimed record goes (freed) or comes back (the free failed: the block is
   live), unless a newer record took the slot meanwhile (the memory came back to another
   allocation), which stays. */
RMM__PRIVATE void rmm__dbg_settle(const void *ptr, const rmm__claim *c, bool freed) {
    bool mine;
    rmm__lock(&rmm__dbg_lock);
    mine = rmm__addr_map_settle(&rmm__dbg_live, (uintptr_t)ptr, c, freed);
    rmm__unlock(&rmm__dbg_lock);
    if (freed || !mine) RMM_SYS_FREE(c->value);
}
#endif

typedef enum rmm__base_kind { RMM__BASE_CUDA, RMM__BASE_MANAGED, RMM__BASE_PINNED } rmm__base_kind;
typedef struct rmm__base_resource {
    rmm_resource base;
    rmm__base_kind kind;
    int device;
    bool library_owned; /* a per-device default: never destroyed */
    rmm__overalign overalign;
} rmm__base_resource;

#if RMM__DEBUG
/* RMM_DEBUG: the family a base resource's blocks belong to (its kind and device: rmm__base_is_equal). */
#define rmm__base_family(r) ((uintptr_t)1 + (uintptr_t)(r)->kind + 4u * (uintptr_t)(unsigned)(r)->device)
#endif
RMM__PRIVATE rmm_status rmm__base_free_raw(void *raw, void *self);
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
#if RMM__DEBUG
    if (st == RMM_SUCCESS && !rmm__dbg_note(*ptr, bytes, rmm__base_family(r))) {
        if (alignment > RMM_ALIGNMENT) (void)rmm__overalign_free_block(&r->overalign, *ptr, alignment, self->vtable->type_name, rmm__base_free_raw, r);
        else (void)rmm__base_raw_free(r->kind, raw);
        *ptr = NULL;
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: out of host memory for RMM_DEBUG's record of a block", self->vtable->type_name);
    }
#endif
    rmm__device_leave(&g);
    return st;
}
RMM__PRIVATE rmm_status rmm__base_free_raw(void *raw, void *self) {
    rmm__base_resource *r = (rmm__base_resource *)self;
    rmm__device_guard g;
    rmm_status st;
    RMM_TRY(rmm__device_enter(&g, r->device));
    st = rmm__base_raw_free(r->kind, raw);
    rmm__device_leave(&g);
    return st;
}
RMM__PRIVATE rmm_status rmm__base_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__base_resource *r = (rmm__base_resource *)self;
    rmm_status st;
#if RMM__DEBUG
    rmm__claim claim;
    RMM_TRY(rmm__dbg_take(self->vtable->type_name, ptr, bytes, rmm__base_family(r), &claim));
#endif
    (void)stream;
    if (alignment > RMM_ALIGNMENT) st = rmm__overalign_free_block(&r->overalign, ptr, alignment, self->vtable->type_name, rmm__base_free_raw, r);
    else if (RMM__UNLIKELY(rmm__overalign_misfreed(ptr)))
        st = rmm__fail(RMM_ERROR_CORRUPTION, "%s: deallocate(ptr=%p, bytes=%zu): the block was allocated with an alignment above 256, by this resource or another of the cudaMalloc family; free it with that alignment through the resource that allocated it", self->vtable->type_name, ptr, bytes);
    else st = rmm__base_free_raw(ptr, r);
#if RMM__DEBUG
    rmm__dbg_settle(ptr, &claim, st == RMM_SUCCESS);
#endif
    return st;
}
RMM__PRIVATE void rmm__base_destroy(rmm_resource *self) {
    rmm__base_resource *r = (rmm__base_resource *)self;
    if (r->library_owned) {
        RMM__INVALID("rmm_resource_destroy: the default resource of device %d belongs to the library and is not destroyed", r->device);
        return;
    }
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

RMM__PRIVATE rmm_status rmm__async_free_raw(void *raw, void *stream);
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
#if RMM__DEBUG
    if (!rmm__dbg_note(*ptr, bytes, (uintptr_t)r->pool)) {
        if (alignment > RMM_ALIGNMENT) (void)rmm__overalign_free_block(&r->overalign, *ptr, alignment, self->vtable->type_name, rmm__async_free_raw, &stream);
        else (void)rmm__free_async(raw, stream);
        *ptr = NULL;
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "async: out of host memory for RMM_DEBUG's record of a block");
    }
#endif
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__async_free_raw(void *raw, void *stream) { return rmm__free_async(raw, *(rmm_stream *)stream); }
RMM__PRIVATE rmm_status rmm__async_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__async_resource *r = (rmm__async_resource *)self;
    rmm_status st;
#if RMM__DEBUG
    rmm__claim claim;
    RMM_TRY(rmm__dbg_take(self->vtable->type_name, ptr, bytes, (uintptr_t)r->pool, &claim));
#endif
    if (alignment > RMM_ALIGNMENT) st = rmm__overalign_free_block(&r->overalign, ptr, alignment, self->vtable->type_name, rmm__async_free_raw, &stream);
    else if (RMM__UNLIKELY(rmm__overalign_misfreed(ptr)))
        st = rmm__fail(RMM_ERROR_CORRUPTION, "%s: deallocate(ptr=%p, bytes=%zu): the block was allocated with an alignment above 256, by this resource or another of the cudaMalloc family; free it with that alignment through the resource that allocated it", self->vtable->type_name, ptr, bytes);
    else st = rmm__free_async(ptr, stream);
#if RMM__DEBUG
    rmm__dbg_settle(ptr, &claim, st == RMM_SUCCESS);
#endif
    return st;
}
RMM__PRIVATE bool rmm__async_is_equal(const rmm_resource *self, const rmm_resource *other);
RMM__PRIVATE void rmm__async_destroy(rmm_resource *self);
static const rmm_resource_vtable rmm__async_vtable = {"async", rmm__async_allocate, rmm__async_deallocate, rmm__async_is_equal, rmm__async_destroy};
static const rmm_resource_vtable rmm__async_view_vtable = {"async_view", rmm__async_allocate, rmm__async_deallocate, rmm__async_is_equal, rmm__async_destroy};
static const rmm_resource_vtable rmm__async_managed_vtable = {"async_managed", rmm__async_allocate, rmm__async_deallocate, rmm__async_is_equal, rmm__async_destroy};
static const rmm_resource_vtable rmm__async_pinned_vtable = {"async_pinned", rmm__async_allocate, rmm__async_deallocate, rmm__async_is_equal, rmm__async_destroy};
RMM__PRIVATE bool rmm__is_async(const rmm_resource_vtable *vt) {
    return vt == &rmm__async_vtable || vt == &rmm__async_view_vtable || vt == &rmm__async_managed_vtable || vt == &rmm__async_pinned_vtable;
}
RMM__PRIVATE bool rmm__async_is_equal(const rmm_resource *self, const rmm_resource *other) {
    if (!rmm__is_async(other->vtable)) return false;
    return ((const rmm__async_resource *)self)->pool == ((const rmm__async_resource *)other)->pool;
}
RMM__PRIVATE void rmm__async_destroy(rmm_resource *self) {
    rmm__async_resource *r = (rmm__async_resource *)self;
    if (r->owned) {
        rmm__device_guard g;
        /* cudaMemPoolDestroy defers the release of memory still in use until it is freed. A pool
           handle names its device, so where the device cannot be entered (the current one
           unreadable) the pool is still destroyed, from the device that is current (it was
           skipped, and the pool lost: red team 48) */
        rmm__device_enter_quietly(&g, r->device, false);
        rmm__mempool_destroy(r->pool);
        rmm__device_leave(&g);
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
RMM__PRIVATE rmm_status rmm__async_new(const char *call, rmm_resource **out, const rmm_resource_vtable *vt, rmm_mem_pool pool, bool owned, int device) {
    rmm__async_resource *r = (rmm__async_resource *)rmm__calloc(1, sizeof *r);
    if (!r || !rmm__overalign_init(&r->overalign)) {
        RMM_SYS_FREE(r);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the resource", call); /* (the call, not the type: the coverage pass of session 39) */
    }
    r->base.vtable = vt;
    r->pool = pool;
    r->owned = owned;
    r->device = device;
    *out = &r->base;
    return RMM_SUCCESS;
}
/* An owning resource over a new pool, primed with `initial` bytes (allocated and freed on the default
   stream, then synchronized); on failure the pool is destroyed and *out stays NULL. */
RMM__PRIVATE rmm_status rmm__async_own(const char *call, rmm_resource **out, const rmm_resource_vtable *vt, rmm_mem_pool pool, int device, size_t initial) {
    rmm_status st = rmm__async_new(call, out, vt, pool, true, device);
    if (st != RMM_SUCCESS) {
        rmm__mempool_destroy(pool);
        return st;
    }
    if (initial > 0) {
        void *p = NULL;
        st = rmm__mempool_malloc_async(&p, initial, pool, RMM_STREAM_DEFAULT);
        if (st == RMM_SUCCESS && (st = rmm__free_async(p, RMM_STREAM_DEFAULT)) != RMM_SUCCESS) {
            /* one more try behind a wait: a pool destroyed with the block still out releases its
               memory only once the block is freed, which then never happens (red team 46) */
            RMM__CLEANUP(rmm__stream_sync_raw(RMM_STREAM_DEFAULT));
            RMM__CLEANUP(rmm__free_async(p, RMM_STREAM_DEFAULT));
        }
        if (st == RMM_SUCCESS) st = rmm__stream_sync_raw(RMM_STREAM_DEFAULT);
        if (st != RMM_SUCCESS) {
            rmm__async_destroy(*out);
            *out = NULL;
            return st;
        }
    }
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_async_resource_create(rmm_resource **out, const rmm_async_desc *desc) {
    rmm_async_desc d = desc ? *desc : rmm_async_desc_default();
    bool supported = false;
    unsigned mask = 0;
    int device;
    rmm_mem_pool pool = NULL;
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
    return rmm__async_own("rmm_async_resource_create", out, &rmm__async_vtable, pool, device, d.initial_pool_bytes);
}
RMM__IMPL rmm_status rmm_async_pinned_resource_create(rmm_resource **out, const rmm_async_desc *desc) {
    rmm_async_desc d = desc ? *desc : rmm_async_desc_default();
    bool supported = false;
    unsigned mask = 0;
    int device;
    rmm_mem_pool pool = NULL;
    if (!out) return RMM__NULL_OUT("rmm_async_pinned_resource_create", "out");
    *out = NULL;
    if (d.export_handle != RMM_EXPORT_NONE)
        return RMM__INVALID("rmm_async_pinned_resource_create: export_handle must be RMM_EXPORT_NONE (got %d): a pinned host pool is not exported", (int)d.export_handle);
    RMM_TRY(rmm__get_device(&device));
    RMM_TRY(rmm__mempool_support(device, &supported, &mask));
    if (!supported)
        return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_async_pinned_resource_create: device %d does not support memory pools (cudaDevAttrMemoryPoolsSupported is 0)", device);
    RMM_TRY(rmm__mempool_create_pinned(&pool, device, d.release_threshold_bytes == 0 ? UINT64_MAX : (uint64_t)d.release_threshold_bytes));
    return rmm__async_own("rmm_async_pinned_resource_create", out, &rmm__async_pinned_vtable, pool, device, d.initial_pool_bytes);
}
RMM__IMPL rmm_status rmm_async_view_resource_create(rmm_resource **out, rmm_mem_pool pool) {
    int device;
    if (!out) return RMM__NULL_OUT("rmm_async_view_resource_create", "out");
    *out = NULL;
    if (!pool) return RMM__NULL_OUT("rmm_async_view_resource_create", "pool");
    RMM_TRY(rmm__get_device(&device));
    return rmm__async_new("rmm_async_view_resource_create", out, &rmm__async_view_vtable, pool, false, device);
}
RMM__IMPL rmm_status rmm_async_managed_resource_create(rmm_resource **out) {
    int device;
    rmm_mem_pool pool = NULL;
    if (!out) return RMM__NULL_OUT("rmm_async_managed_resource_create", "out");
    *out = NULL;
    RMM_TRY(rmm__get_device(&device));
    RMM_TRY(rmm__mempool_default_managed(&pool, device));
    return rmm__async_new("rmm_async_managed_resource_create", out, &rmm__async_managed_vtable, pool, false, device);
}
RMM__IMPL rmm_status rmm_async_resource_get_pool(rmm_resource *mr, rmm_mem_pool *pool) {
    if (!pool) return RMM__NULL_OUT("rmm_async_resource_get_pool", "pool");
    if (!mr || !rmm__is_async(mr->vtable))
        return RMM__INVALID("rmm_async_resource_get_pool: resource '%s' is not an async resource", rmm_resource_type_name(mr));
    *pool = ((rmm__async_resource *)mr)->pool;
    return RMM_SUCCESS;
}

/* -- its row in >>diagnostics (rmm__descs): dump, validate, upstream, allocation base, live blocks -- */
/* -- the device resources (cuda, managed, pinned, async): the bottom of every chain -- */
RMM__PRIVATE rmm_status rmm__base_dump(rmm__json *j, rmm_resource *mr, int nesting) {
    (void)nesting;
    rmm__json_open(j, "config", '{');
    rmm__json_u64(j, "device", (uint64_t)((rmm__base_resource *)mr)->device);
    rmm__json_bool(j, "library_owned", ((rmm__base_resource *)mr)->library_owned);
    rmm__json_close(j, '}');
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__async_dump(rmm__json *j, rmm_resource *mr, int nesting) {
    (void)nesting;
    rmm__json_open(j, "config", '{');
    rmm__json_u64(j, "device", (uint64_t)((rmm__async_resource *)mr)->device);
    rmm__json_ptr(j, "memory_pool", (const void *)((rmm__async_resource *)mr)->pool);
    rmm__json_close(j, '}');
    return RMM_SUCCESS;
}
/* Moves *p back to the raw allocation an over-aligned block starts inside (if it is one). */
RMM__PRIVATE void rmm__overalign_step(rmm__overalign *o, const char **p, size_t *off) {
    const char *raw = (const char *)rmm__overalign_raw(o, *p);
    if (raw) {
        *off += (size_t)(*p - raw);
        *p = raw;
    }
}
/* The base is the raw allocation. */
RMM__PRIVATE rmm_status rmm__bottom_step(rmm__overalign *o, const char **p, size_t *off, rmm_resource **next) {
    rmm__overalign_step(o, p, off);
    *next = NULL;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__base_base_step(rmm_resource *mr, const char **p, size_t *off, rmm_resource **next) {
    return rmm__bottom_step(&((rmm__base_resource *)mr)->overalign, p, off, next);
}
RMM__PRIVATE rmm_status rmm__async_base_step(rmm_resource *mr, const char **p, size_t *off, rmm_resource **next) {
    return rmm__bottom_step(&((rmm__async_resource *)mr)->overalign, p, off, next);
}

/* ======================================================================================= */
/* ==== perdevice: the current resource of each device ================================== */
/* ======================================================================================= */ /* >>perdevice */

/* The table and the defaults live only in the implementing translation unit. The defaults are
   static objects that need no destruction, so nothing here calls CUDA at process exit. */
static rmm_resource *rmm__device_table[RMM_MAX_DEVICES];
static rmm__base_resource rmm__device_defaults[RMM_MAX_DEVICES];
static rmm__mutex rmm__device_table_lock = RMM__MUTEX_INIT;

RMM__PRIVATE rmm_status rmm__check_device(int device, const char *fn) {
    int count = 0;
    if (device < 0) return RMM__INVALID("%s: device %d is out of range", fn, device);
    if (device >= RMM_MAX_DEVICES) return RMM__INVALID("%s: device %d is at or above RMM_MAX_DEVICES (%d): build with a larger one", fn, device, RMM_MAX_DEVICES);
    RMM_TRY(rmm__device_count(&count));
    if (device >= count) return RMM__INVALID("%s: device %d does not exist (%d devices)", fn, device, count);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_resource *rmm__default_resource(int device) {
    rmm__base_resource *d = &rmm__device_defaults[device];
    if (!RMM__ATOMIC_LOAD(&d->base.vtable)) {
        rmm__lock(&rmm__device_table_lock);
        if (!d->base.vtable) {
            d->kind = RMM__BASE_CUDA;
            d->device = device;
            d->library_owned = true;
            /* without its map the default resource still serves every alignment up to 256; a
               larger one then fails with OUT_OF_MEMORY (host memory) instead of crashing */
            (void)rmm__overalign_init(&d->overalign);
            RMM__ATOMIC_STORE(&d->base.vtable, &rmm__cuda_vtable);
        }
        rmm__unlock(&rmm__device_table_lock);
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
    if (RMM__LIKELY(RMM__ATOMIC_LOAD(&rmm__device_defaults[device].base.vtable) != NULL)) /* made: its device was checked then */
        return &rmm__device_defaults[device].base;
    if (rmm__check_device(device, "rmm_get_per_device_resource") != RMM_SUCCESS) return NULL;
    return rmm__default_resource(device);
}
RMM__IMPL rmm_resource *rmm_set_per_device_resource(int device, rmm_resource *mr) {
    rmm_resource *previous;
    if (rmm__check_device(device, "rmm_set_per_device_resource") != RMM_SUCCESS) return NULL;
    rmm__lock(&rmm__device_table_lock);
    previous = rmm__device_table[device];
    RMM__ATOMIC_STORE(&rmm__device_table[device], mr);
    rmm__unlock(&rmm__device_table_lock);
    return previous ? previous : rmm__default_resource(device);
}
RMM__IMPL rmm_resource *rmm_get_current_device_resource(void) {
    rmm_resource *mr;
    int device;
    if (RMM__UNLIKELY(rmm__get_device(&device) != RMM_SUCCESS)) {
        rmm__copy_text(rmm__current_unreadable, sizeof rmm__current_unreadable, rmm_last_error()); /* (its cause, kept as it was) */
        return NULL;
    }
    if (RMM__UNLIKELY(rmm__current_unreadable[0])) rmm__current_unreadable[0] = '\0';
    mr = rmm_get_per_device_resource(device);
    if (RMM__UNLIKELY(!mr)) /* (the device count could not be read: its cause too, for a create given this NULL; review 27) */
        rmm__copy_text(rmm__current_unreadable, sizeof rmm__current_unreadable, rmm_last_error());
    return mr;
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
    /* (in integers: through a double, 100 % of more than 2^53 bytes could round above what is free,
       and 2^64 - 1 overflowed the conversion back: red team 29) */
    return rmm__align_down(f / 100 * (size_t)percent + f % 100 * (size_t)percent / 100, RMM_ALIGNMENT);
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

/* The stream registry: streams whose life the library sees. A stream made by rmm_stream_create (or
   a stream pool) has an entry from creation until rmm_stream_destroy; each thread that uses the
   per-thread default stream has one until the thread exits. Resources keep per-stream state
   (rmm__sstate, below); a state holds a reference to its stream's entry, so it can tell, at the cost
   of one load, whether the stream still exists. That is what lets a resource key such a stream by
   its handle with no driver call, record its ordering event only when another stream takes its
   memory (the stream cannot vanish unseen: rmm_stream_destroy records a last "death" event when
   any resource holds state for it), and retire its state once it is gone. Streams the library did
   not make ("foreign" streams) are told apart by their id (handles are reused), and their
   frees are covered by events recorded on them in their own calls: one per free, or, in the pool,
   one per ring of frees (see rmm__pool_ring). */
typedef struct rmm__sreg {
    rmm_stream handle;
    int alive;            /* atomic; 0 once destroyed, or once its thread exited */
    int refs;             /* atomic; the registry's own while alive, plus one per state naming it */
    rmm__spin lock;       /* orders event records on the stream against its destruction */
    rmm__event death;     /* recorded on the stream as it was destroyed, when anyone held state */
    bool complete;        /* destroyed without a death event: it was synchronized instead */
    bool pooled;          /* made by rmm_stream_pool_create: only the pool destroys it */
    int device;           /* current at its creation (its device: its death event is made there); -1 unknown */
    uint64_t serial;      /* a thread's entry: the key of its thread-keyed states (process-unique) */
} rmm__sreg;
#define RMM__SREG_SHARDS 16
static struct rmm__sreg_shard {
    rmm__spin lock;
    rmm__addr_map map; /* handle -> rmm__sreg, live library streams only */
} rmm__sregs[RMM__SREG_SHARDS];
static size_t rmm__sreg_shard_of(rmm_stream h) { return (size_t)(((uint64_t)(uintptr_t)h * 0x9E3779B97F4A7C15ull) >> 60); }

RMM__PRIVATE void rmm__sreg_unref(rmm__sreg *r) {
    if (r && RMM__ATOMIC_SUB(&r->refs, 1) == 0) {
        rmm__event_destroy(r->death);
        RMM_SYS_FREE(r);
    }
}
RMM__PRIVATE bool rmm__sreg_alive(const rmm__sreg *r) { return RMM__ATOMIC_LOAD(&r->alive) != 0; }
/* The entry of a live library-made stream, with a reference for the caller; NULL otherwise. O(1). */
RMM__PRIVATE rmm__sreg *rmm__sreg_find(rmm_stream h) {
    struct rmm__sreg_shard *sh = &rmm__sregs[rmm__sreg_shard_of(h)];
    rmm__sreg *r = NULL;
    (void)rmm__spin_lock(&sh->lock); /* never held across a call that could come back here */
    if (sh->map.slots) {
        void **slot = rmm__addr_map_find(&sh->map, (uintptr_t)h);
        if (slot) {
            r = (rmm__sreg *)*slot;
            RMM__ATOMIC_ADD(&r->refs, 1);
        }
    }
    rmm__spin_unlock(&sh->lock);
    return r;
}
RMM__PRIVATE rmm_status rmm__sreg_add(rmm_stream h) {
    struct rmm__sreg_shard *sh = &rmm__sregs[rmm__sreg_shard_of(h)];
    rmm__sreg *r = (rmm__sreg *)rmm__calloc(1, sizeof *r);
    bool ok;
    if (!r) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_stream_create: out of host memory for the stream registry");
    r->handle = h;
    r->alive = 1;
    r->refs = 1;
    if (!rmm__device_peek(&r->device)) r->device = -1; /* (called right after the stream's creation) */
    (void)rmm__spin_lock(&sh->lock);
    ok = (sh->map.slots || rmm__addr_map_init(&sh->map, 16)) && rmm__addr_map_put(&sh->map, (uintptr_t)h, r);
    rmm__spin_unlock(&sh->lock);
    if (!ok) {
        RMM_SYS_FREE(r);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_stream_create: out of host memory for the stream registry");
    }
    return RMM_SUCCESS;
}
/* Removes the entry of `h` and returns it (with the registry's reference), or NULL; an entry of a
   stream pool's stream only when `pooled` (the pool's own destroy), else it stays and *refused is
   set. */
RMM__PRIVATE rmm__sreg *rmm__sreg_take(rmm_stream h, bool pooled, bool *refused) {
    struct rmm__sreg_shard *sh = &rmm__sregs[rmm__sreg_shard_of(h)];
    rmm__sreg *r = NULL;
    void **slot;
    *refused = false;
    (void)rmm__spin_lock(&sh->lock);
    if (sh->map.slots && (slot = rmm__addr_map_find(&sh->map, (uintptr_t)h)) != NULL) {
        if (((rmm__sreg *)*slot)->pooled && !pooled) *refused = true;
        else r = (rmm__sreg *)rmm__addr_map_remove(&sh->map, (uintptr_t)h);
    }
    rmm__spin_unlock(&sh->lock);
    return r;
}
/* Marks the entry of library stream `h` as a stream pool's (pooled), or as an ordinary library
   stream's that rmm_stream_destroy takes. */
RMM__PRIVATE void rmm__sreg_mark_pooled(rmm_stream h, bool pooled) {
    struct rmm__sreg_shard *sh = &rmm__sregs[rmm__sreg_shard_of(h)];
    void **slot;
    (void)rmm__spin_lock(&sh->lock);
    if (sh->map.slots && (slot = rmm__addr_map_find(&sh->map, (uintptr_t)h)) != NULL) ((rmm__sreg *)*slot)->pooled = pooled;
    rmm__spin_unlock(&sh->lock);
}
/* Marks a library stream dead just before it is destroyed. If any resource holds state for it, a
   death event is recorded on it first (or, if no event can be made, the stream is synchronized),
   so its memory can still be handed to other streams in order. */
RMM__PRIVATE void rmm__sreg_bury(rmm__sreg *r) {
    (void)rmm__spin_lock(&r->lock);
    if (RMM__ATOMIC_LOAD(&r->refs) > 1) {
        rmm__kept_error kept;
        rmm__device_guard g;
        rmm__error_keep(&kept);
        /* its device current: an event of another device cannot be recorded on it (red team 45:
           destroyed with another device current, the record failed and the host synchronized) */
        rmm__device_enter_quietly(&g, r->device, false);
        if (rmm__event_create(&r->death) != RMM_SUCCESS || rmm__event_record(r->death, r->handle) != RMM_SUCCESS) {
            rmm__event_destroy(r->death);
            r->death = NULL;
            r->complete = rmm__stream_sync_raw(r->handle) == RMM_SUCCESS;
            if (!r->complete) /* (the memory freed on it then waits for a device synchronize: rmm__so_donor_event) */
                RMM__LOG(RMM_LOG_LEVEL_WARN, "rmm_stream_destroy(stream=%p): neither an event nor a synchronize could order its work: %s", (void *)r->handle, rmm_last_error());
            rmm__error_back(&kept); /* (worked around either way, a synchronize or a later device synchronize: the destroy's own result stands, with no failure left behind) */
        }
        rmm__device_leave(&g);
    }
    RMM__ATOMIC_STORE(&r->alive, 0);
    rmm__spin_unlock(&r->lock);
    rmm__sreg_unref(r);
}

/* Each thread's entry, made at its first use of a thread-keyed stream and marked dead when the
   thread exits (a pthread key destructor; the main thread's lives to the end). Never handed to
   CUDA: states keyed by thread are eager (an event per free), the entry only tells them apart. */
static pthread_key_t rmm__thread_key;
static pthread_once_t rmm__thread_key_once = PTHREAD_ONCE_INIT;
static bool rmm__thread_key_ok;
static RMM__TLS rmm__sreg *rmm__thread_sreg;
static void (*rmm__thread_exit_hook)(void); /* atomic; the arena's: drops its thread cache's references */
/* The key destructor. The thread's entry goes (its states are gone ones now), and so does the
   thread's pointer to it: a key destructor of the program's that runs after this one and uses the
   library gets a new entry (new keys, and the key set again, so that this runs again: glibc makes up
   to PTHREAD_DESTRUCTOR_ITERATIONS rounds). Before, it used the freed entry (a red team's find).
   A program destructor that first uses the library in the last of those rounds gets an entry whose
   destructor never runs: that entry, and the arena cache references and pins made then, stay until
   the resources go (bounded: one entry and a few arena states per such thread). */
RMM__PRIVATE void rmm__thread_exit(void *arg) {
    rmm__sreg *r = (rmm__sreg *)arg;
    void (*hook)(void) = RMM__ATOMIC_LOAD(&rmm__thread_exit_hook);
    if (hook) hook();
    if (rmm__thread_sreg == r) rmm__thread_sreg = NULL;
    RMM__ATOMIC_STORE(&r->alive, 0);
    rmm__sreg_unref(r);
}
RMM__PRIVATE void rmm__thread_key_init(void) { rmm__thread_key_ok = pthread_key_create(&rmm__thread_key, rmm__thread_exit) == 0; }
static uint64_t rmm__thread_reg_serials; /* atomic: the serials of thread entries handed out */
/* The calling thread's entry (no reference added), or NULL if host memory ran out. */
RMM__PRIVATE rmm__sreg *rmm__thread_reg(void) {
    rmm__sreg *r = rmm__thread_sreg;
    if (RMM__LIKELY(r != NULL)) return r;
    pthread_once(&rmm__thread_key_once, rmm__thread_key_init);
    r = (rmm__sreg *)rmm__calloc(1, sizeof *r);
    if (!r) return NULL;
    r->handle = RMM_STREAM_PER_THREAD;
    r->alive = 1;
    r->refs = 1;
    r->serial = RMM__ATOMIC_ADD(&rmm__thread_reg_serials, 1);
    if (!rmm__thread_key_ok || pthread_setspecific(rmm__thread_key, r) != 0) r->refs = 2; /* no exit hook: it stays alive */
    rmm__thread_sreg = r;
    return r;
}
/* The serial of the calling thread's entry (rmm__so_key's key for its thread-keyed states), or 0
   if host memory ran out (the state's lookup then fails as OUT_OF_MEMORY). */
static inline uint64_t rmm__thread_reg_serial(void) {
    rmm__sreg *r = rmm__thread_reg();
    return r ? r->serial : 0;
}

/* A recorded stream (rmm_record_stream; its type is defined after rmm_allocate, >>resource): the
   entry that tells which stream the handle names, with a reference, and the current device.
   OUT_OF_MEMORY iff this thread's entry cannot be made; the device query's status. O(1). */
/* The recorded stream's key for graph capture (rmm__graph_key, as the recording thread had it). */
RMM__PRIVATE uint64_t rmm__rec_stream_key(const rmm__rec_stream *rs) {
    return rmm__graph_key_of(rs->handle, rs->per_thread, rs->per_thread && rs->reg ? rs->reg->serial : 0, rs->device);
}
RMM__PRIVATE rmm_status rmm__rec_stream_make(rmm_stream stream, rmm__rec_stream *out) {
    out->handle = stream;
    out->reg = NULL;
    out->ordered = false;
    out->per_thread = rmm__stream_is_per_thread(stream);
    RMM_TRY(rmm__get_device(&out->device));
    if (out->per_thread) {
        out->reg = rmm__thread_reg();
        if (!out->reg) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_record_stream: out of host memory");
        RMM__ATOMIC_ADD(&out->reg->refs, 1);
    } else if (!rmm__stream_is_legacy(stream)) {
        out->reg = rmm__sreg_find(stream); /* a library stream's, or NULL: a foreign one */
    }
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__rec_stream_drop(rmm__rec_stream *rs) {
    rmm__sreg_unref(rs->reg);
    rs->reg = NULL;
}
/* Whether rs names the per-thread stream of a thread that has exited (rmm__thread_exit). */
RMM__PRIVATE bool rmm__rec_stream_thread_gone(const rmm__rec_stream *rs) { return rs->per_thread && rs->reg && !rmm__sreg_alive(rs->reg); }
/* Whether rs names a library stream destroyed since whose work up to its destroy is known done (its
   death event complete, or the stream synchronized at the destroy): nothing to wait for. A failed
   query says no and leaves no failure behind. */
RMM__PRIVATE bool rmm__rec_stream_done(const rmm__rec_stream *rs) {
    rmm__event death = NULL;
    bool alive, complete, done = false;
    rmm__kept_error kept;
    if (!rs->reg || rs->per_thread) return false;
    (void)rmm__spin_lock(&rs->reg->lock);
    alive = rmm__sreg_alive(rs->reg);
    death = rs->reg->death; /* (kept while rs holds its reference) */
    complete = rs->reg->complete;
    rmm__spin_unlock(&rs->reg->lock);
    if (alive) return false;
    if (!death) return complete;
    rmm__error_keep(&kept);
    if (rmm__event_query(death, &done) != RMM_SUCCESS) done = false;
    rmm__error_back(&kept);
    return done;
}
/* Whether `device` is the current one (false if that cannot be read). */
static inline bool rmm__device_is_current(int device) {
    int now = -1;
    rmm__kept_error kept;
    bool is;
    rmm__error_keep(&kept);
    is = rmm__get_device(&now) == RMM_SUCCESS && now == device;
    rmm__error_back(&kept); /* (a predicate: "no" when the device cannot be read, and the caller takes the general way) */
    return is;
}
/* Synchronizes `device` (a host wait for all its work) unless this free did already. */
RMM__PRIVATE rmm_status rmm__rec_stream_sync(int device, int *synced) {
    rmm__device_guard g;
    rmm_status st;
    if (*synced == device) return RMM_SUCCESS;
    RMM_TRY(rmm__device_enter(&g, device));
    st = rmm__device_synchronize();
    rmm__device_leave(&g);
    if (st == RMM_SUCCESS) *synced = device;
    return st;
}
/* Makes `stream` wait for an event recorded now, on rs's device, on the stream rs names; or
   synchronizes rs's device where nothing else can order it: another thread's per-thread stream (it
   cannot be named from this thread, and its thread may have exited), a library stream destroyed
   with no death event and not synchronized, or a stream on which no event can be recorded (a
   foreign one destroyed, against rmm_record_stream's contract: the free would otherwise fail for
   good; logged). A library stream destroyed since is waited for through its death event. Nothing
   to do for the free's own stream. *synced: the device this free synchronized already (-1: none). */
RMM__PRIVATE rmm_status rmm__rec_stream_order(const rmm__rec_stream *rs, rmm_stream stream, int *synced) {
    rmm__device_guard g;
    rmm__event e = NULL, wait_on = NULL;
    rmm_status st = RMM_SUCCESS;
    bool sync = false;
    if (rs->per_thread) {
        if (rs->reg != rmm__thread_reg()) return rmm__rec_stream_sync(rs->device, synced); /* (NULL out of host memory: not this thread's either) */
        if (rmm__stream_is_per_thread(stream) && rmm__device_is_current(rs->device)) return RMM_SUCCESS; /* this thread's, on its device: the free's own */
    } else if (rs->handle == stream && !rs->reg) { /* a foreign stream: the free's own; the legacy one: if on this device */
        if (!rmm__stream_is_legacy(stream) || rmm__device_is_current(rs->device)) return RMM_SUCCESS;
    }
    RMM_TRY(rmm__device_enter(&g, rs->device)); /* (the event is made and recorded there; the free's stream waits from the caller's device) */
    if (rs->reg && !rs->per_thread) { /* a library stream: alive, or waited for through its death event */
        (void)rmm__spin_lock(&rs->reg->lock);
        if (!rmm__sreg_alive(rs->reg)) {
            if (rs->reg->death) wait_on = rs->reg->death; /* (kept while this record holds its reference) */
            else sync = !rs->reg->complete;
        } else if (rs->handle != stream) {
            st = rmm__event_create(&e);
            if (st == RMM_SUCCESS) st = rmm__event_record(e, rs->handle);
            if (st == RMM_SUCCESS) wait_on = e;
        }
        rmm__spin_unlock(&rs->reg->lock);
    } else {
        st = rmm__event_create(&e);
        if (st == RMM_SUCCESS) {
            rmm__kept_error kept;
            rmm__error_keep(&kept);
            st = rmm__event_record(e, rs->handle);
            if (st != RMM_SUCCESS) {
                RMM__LOG(RMM_LOG_LEVEL_WARN, "rmm_record_stream: no event could be recorded on recorded stream %p (%s): the free synchronizes device %d",
                         (void *)rs->handle, rmm_last_error(), rs->device);
                rmm__error_back(&kept); /* (worked around: the synchronize below orders it) */
                sync = true;
                st = RMM_SUCCESS;
            } else {
                wait_on = e;
            }
        }
    }
    rmm__device_leave(&g);
    if (st == RMM_SUCCESS && wait_on) st = rmm__stream_wait_event(stream, wait_on); /* (a handle such as 0 names the caller's device's stream) */
    rmm__event_destroy(e); /* (the wait holds what it needs) */
    if (st == RMM_SUCCESS && sync) st = rmm__rec_stream_sync(rs->device, synced);
    return st;
}

RMM__PRIVATE rmm_status rmm__stream_create(rmm_stream *out, bool blocking, const char *fn) {
    rmm_stream s = RMM_STREAM_DEFAULT;
    rmm_status st;
    if (!out) return RMM__NULL_OUT(fn, "out");
    RMM_TRY(rmm__stream_create_raw(&s, blocking));
    st = rmm__sreg_add(s);
    if (st != RMM_SUCCESS) {
        RMM__CLEANUP(rmm__stream_destroy_raw(s));
        return st;
    }
    *out = s;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_stream_create(rmm_stream *out) { return rmm__stream_create(out, false, "rmm_stream_create"); }
RMM__IMPL rmm_status rmm_stream_create_blocking(rmm_stream *out) { return rmm__stream_create(out, true, "rmm_stream_create_blocking"); }
RMM__PRIVATE bool rmm__graph_stream_registered(rmm_stream stream);
RMM__PRIVATE rmm_status rmm__stream_destroy(rmm_stream stream, bool pooled) {
    rmm__sreg *r;
    bool refused;
    if (stream == RMM_STREAM_DEFAULT || stream == RMM_STREAM_LEGACY || stream == RMM_STREAM_PER_THREAD)
        return RMM__INVALID("rmm_stream_destroy: the default streams cannot be destroyed");
    if (RMM__UNLIKELY(RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) != 0) && rmm__graph_stream_registered(stream))
        /* (its registration would pass to the next stream with the handle, and the frees deferred
           to its end be made on a dead handle: red team 35) */
        return RMM__INVALID("rmm_stream_destroy(stream=%p): registered for graph capture (rmm_capture_end it first; nothing destroyed)", (void *)stream);
    r = rmm__sreg_take(stream, pooled, &refused);
    if (refused) return RMM__INVALID("rmm_stream_destroy(stream=%p): a stream pool's stream (rmm_stream_pool_destroy destroys it)", (void *)stream);
    if (!r) return RMM__INVALID("rmm_stream_destroy(stream=%p): not a live stream made by rmm_stream_create (destroyed already, or made elsewhere)", (void *)stream);
    rmm__sreg_bury(r);
    return rmm__stream_destroy_raw(stream);
}
RMM__IMPL rmm_status rmm_stream_destroy(rmm_stream stream) { return rmm__stream_destroy(stream, false); }
RMM__IMPL rmm_status rmm_stream_synchronize(rmm_stream stream) { return rmm__stream_sync_raw(stream); }

/* ---- devices, prefetch and IPC: the public face of the platform layer ---- */
RMM__IMPL rmm_status rmm_device_get_attribute(int attribute, int device, int *value, int *cuda_error) {
    int ignored = 0;
    if (cuda_error) *cuda_error = 0;
    if (!value) return RMM__NULL_OUT("rmm_device_get_attribute", "value");
    *value = 0;
    return rmm__device_attribute(attribute, device, value, cuda_error ? cuda_error : &ignored);
}
RMM__IMPL rmm_status rmm_cuda_versions(int *runtime, int *driver) {
    int r = 0, d = 0;
    rmm_status st = rmm__versions(&r, &d);
    if (runtime) *runtime = r;
    if (driver) *driver = d;
    return st;
}
RMM__IMPL rmm_status rmm_prefetch(const void *ptr, size_t bytes, int device, rmm_stream stream) {
    int count = 0;
    if (device < RMM_CPU_DEVICE) return RMM__INVALID("rmm_prefetch: device %d is neither a device nor RMM_CPU_DEVICE (-1)", device);
    if (device >= 0) {
        rmm__kept_error kept;
        bool known;
        rmm__error_keep(&kept);
        known = rmm__device_count(&count) == RMM_SUCCESS;
        rmm__error_back(&kept); /* (a count that cannot be read checks nothing: the attribute probe below fails quietly) */
        if (known && device >= count) return RMM__INVALID("rmm_prefetch: device %d is not one of the %d devices", device, count);
    }
    if (!ptr || bytes == 0) return RMM_SUCCESS;
    return rmm__prefetch((void *)(uintptr_t)ptr, bytes, device, stream);
}
RMM__IMPL rmm_status rmm_ipc_get_handle(void *base, unsigned char *handle) {
    if (!base || !handle) return RMM__NULL_OUT("rmm_ipc_get_handle", base ? "handle" : "base");
    return rmm__ipc_get(base, handle);
}
RMM__IMPL rmm_status rmm_ipc_open_handle(const unsigned char *handle, void **base) {
    if (!handle || !base) return RMM__NULL_OUT("rmm_ipc_open_handle", handle ? "base" : "handle");
    *base = NULL;
    return rmm__ipc_open(handle, base);
}
RMM__IMPL rmm_status rmm_ipc_close_handle(void *base) {
    if (!base) return RMM__NULL_OUT("rmm_ipc_close_handle", "base");
    return rmm__ipc_close(base);
}
RMM__IMPL rmm_status rmm_mem_pool_export_fd(rmm_mem_pool pool, int *fd) {
    if (!pool || !fd) return RMM__NULL_OUT("rmm_mem_pool_export_fd", pool ? "fd" : "pool");
    *fd = -1;
    return rmm__mempool_export_fd(pool, fd);
}
/* What this process imported: the pools rmm_mem_pool_import_fd made and the blocks
   rmm_mem_pool_import_pointer mapped, so that their free and destroy, a cudaFree and a
   cudaMemPoolDestroy underneath, refuse anything else (this process's own memory: red team 33;
   rmmh's ImportedPool kept such a record, C callers had none). An entry leaves with its free or
   destroy: bounded by what is imported now. An import of a key already imported is counted, and
   each is freed (destroyed) once: the driver maps an exported block once per process, a second
   cudaMemPoolImportPointer of it returning the same address, and the first cudaFree unmaps it
   under both (an H200, driver 580.159.04, 2026-11-30: a memset through the second import then
   failed, and its cudaFree too), so a block's last free alone is the driver's; a pool imported
   twice is one handle too, but the driver counts those imports (after one cudaMemPoolDestroy the
   handle still imported a block; the second destroy worked), so each destroy is the driver's. */
typedef struct rmm__import_record {
    rmm__addr_map first; /* key -> value (a block's pool; 1 for a pool) */
    rmm__addr_map again; /* key -> its imports after the first, where there are any */
} rmm__import_record;
static rmm__mutex rmm__imports_lock = RMM__MUTEX_INIT;
static rmm__import_record rmm__imported_pools, rmm__imported_ptrs;
/* Notes an import of key (value: what its free needs back). *again: key was imported already (a
   failed note of such an import leaves the first as it was). false iff host memory ran out,
   nothing noted. The caller holds rmm__imports_lock, across the driver call the note records (a
   last free and a new import of one block, on two threads, must not interleave: the import would
   get the address the free then unmaps: review 34). O(1). */
RMM__PRIVATE bool rmm__import_note(rmm__import_record *r, uintptr_t key, void *value, bool *again) {
    void **slot;
    bool ok;
    *again = r->first.slots && rmm__addr_map_find(&r->first, key) != NULL;
    if (!*again) {
        ok = (r->first.slots || rmm__addr_map_init(&r->first, 16)) && rmm__addr_map_put(&r->first, key, value);
    } else if (r->again.slots && (slot = rmm__addr_map_find(&r->again, key)) != NULL) {
        *slot = (void *)((uintptr_t)*slot + 1);
        ok = true;
    } else {
        ok = (r->again.slots || rmm__addr_map_init(&r->again, 16)) && rmm__addr_map_put(&r->again, key, (void *)(uintptr_t)1);
    }
    return ok;
}
/* Takes one import of key (a free past the imports finds nothing); false if none is left. *last:
   it was the only one (a block's last free unmaps it; every destroy of a pool is the driver's).
   The caller holds rmm__imports_lock, as for rmm__import_note, and notes key again if its driver
   call fails. O(1). */
RMM__PRIVATE bool rmm__import_take(rmm__import_record *r, uintptr_t key, void **value, bool *last) {
    void **slot, **more;
    bool found = false;
    if (r->first.slots && (slot = rmm__addr_map_find(&r->first, key)) != NULL) {
        found = true;
        *value = *slot;
        more = r->again.slots ? rmm__addr_map_find(&r->again, key) : NULL;
        *last = more == NULL;
        if (more == NULL) (void)rmm__addr_map_remove(&r->first, key);
        else if ((uintptr_t)*more > 1) *more = (void *)((uintptr_t)*more - 1);
        else (void)rmm__addr_map_remove(&r->again, key);
    }
    return found;
}
RMM__IMPL rmm_status rmm_mem_pool_import_fd(int fd, rmm_mem_pool *pool) {
    rmm_status st;
    bool again = false; /* (not read: a pool's second import is undone too, the driver counting them) */
    if (!pool) return RMM__NULL_OUT("rmm_mem_pool_import_fd", "pool");
    *pool = NULL;
    rmm__lock(&rmm__imports_lock);
    if ((st = rmm__mempool_import_fd(fd, pool)) == RMM_SUCCESS && !rmm__import_note(&rmm__imported_pools, (uintptr_t)*pool, (void *)(uintptr_t)1, &again)) {
        (void)rmm__mempool_destroy_imported(*pool); /* (a second import of the pool too: the driver counts them) */
        *pool = NULL;
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_mem_pool_import_fd: out of host memory for the record of imports");
    }
    rmm__unlock(&rmm__imports_lock);
    return st;
}
RMM__IMPL rmm_status rmm_mem_pool_export_pointer(void *ptr, unsigned char *handle) {
    if (!ptr || !handle) return RMM__NULL_OUT("rmm_mem_pool_export_pointer", ptr ? "handle" : "ptr");
    return rmm__mempool_export_ptr(ptr, handle);
}
RMM__IMPL rmm_status rmm_mem_pool_import_pointer(rmm_mem_pool pool, const unsigned char *handle, void **ptr) {
    rmm_status st;
    bool again = false;
    if (!pool || !handle || !ptr) return RMM__NULL_OUT("rmm_mem_pool_import_pointer", !pool ? "pool" : !handle ? "handle" : "ptr");
    *ptr = NULL;
    rmm__lock(&rmm__imports_lock);
    if ((st = rmm__mempool_import_ptr(pool, handle, ptr)) == RMM_SUCCESS && !rmm__import_note(&rmm__imported_ptrs, (uintptr_t)*ptr, pool, &again)) {
        if (!again) (void)rmm__imported_free(*ptr); /* (a further import maps nothing: the first stays) */
        *ptr = NULL;
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_mem_pool_import_pointer: out of host memory for the record of imports");
    }
    rmm__unlock(&rmm__imports_lock);
    return st;
}
RMM__IMPL rmm_status rmm_mem_pool_free_imported(void *ptr) {
    rmm_status st;
    void *pool = NULL;
    bool last = false, again = false;
    if (!ptr) return RMM__NULL_OUT("rmm_mem_pool_free_imported", "ptr");
    rmm__lock(&rmm__imports_lock);
    if (!rmm__import_take(&rmm__imported_ptrs, (uintptr_t)ptr, &pool, &last))
        st = RMM__INVALID("rmm_mem_pool_free_imported(%p): not a block rmm_mem_pool_import_pointer mapped, or freed as often as imported", ptr);
    else if (!last) st = RMM_SUCCESS; /* (imported again: the last free unmaps it) */
    else if ((st = rmm__imported_free(ptr)) != RMM_SUCCESS && !rmm__import_note(&rmm__imported_ptrs, (uintptr_t)ptr, pool, &again))
        RMM__LOG(RMM_LOG_LEVEL_WARN, "rmm_mem_pool_free_imported(%p): the failed free's record could not be put back (out of host memory)", ptr);
    rmm__unlock(&rmm__imports_lock);
    return st;
}
RMM__IMPL rmm_status rmm_mem_pool_destroy_imported(rmm_mem_pool pool) {
    rmm_status st;
    void *one = NULL;
    bool last = false, again = false;
    if (!pool) return RMM__NULL_OUT("rmm_mem_pool_destroy_imported", "pool");
    rmm__lock(&rmm__imports_lock);
    if (!rmm__import_take(&rmm__imported_pools, (uintptr_t)pool, &one, &last))
        st = RMM__INVALID("rmm_mem_pool_destroy_imported(%p): not a pool rmm_mem_pool_import_fd made, or destroyed as often as imported", (void *)pool);
    /* (a pool imported again is the same handle, and the driver counts its imports: each destroy is
       its cudaMemPoolDestroy, unlike a block's frees) */
    else if ((st = rmm__mempool_destroy_imported(pool)) != RMM_SUCCESS && !rmm__import_note(&rmm__imported_pools, (uintptr_t)pool, one, &again))
        RMM__LOG(RMM_LOG_LEVEL_WARN, "rmm_mem_pool_destroy_imported(%p): the failed destroy's record could not be put back (out of host memory)", (void *)pool);
    rmm__unlock(&rmm__imports_lock);
    return st;
}
RMM__IMPL rmm_status rmm_memcpy_async(void *dst, const void *src, size_t bytes, rmm_stream stream) {
    if (bytes == 0) return RMM_SUCCESS;
    if (!dst || !src) return RMM__INVALID("rmm_memcpy_async: NULL %s with %zu bytes", dst ? "src" : "dst", bytes);
    return rmm__memcpy_async(dst, src, bytes, stream);
}
RMM__IMPL rmm_status rmm_memset_async(void *dst, int value, size_t bytes, rmm_stream stream) {
    if (bytes == 0) return RMM_SUCCESS;
    if (!dst) return RMM__NULL_OUT("rmm_memset_async", "dst");
    return rmm__memset_async(dst, value, bytes, stream);
}

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
    if (count > RMM_STREAM_POOL_MAX)
        return rmm__fail(RMM_ERROR_INVALID_ARGUMENT, "rmm_stream_pool_create(count=%zu): at most RMM_STREAM_POOL_MAX (%zu) streams", count,
                         RMM_STREAM_POOL_MAX);
    p = (rmm_stream_pool *)rmm__calloc(1, sizeof *p + count * sizeof(rmm_stream));
    if (!p) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_stream_pool_create(count=%zu): out of host memory", count);
    for (i = 0; i < count; i++) {
        rmm_status st = rmm_stream_create(&p->streams[i]);
        if (st != RMM_SUCCESS) {
            while (i-- > 0) RMM__CLEANUP(rmm__stream_destroy(p->streams[i], true));
            RMM_SYS_FREE(p);
            return st;
        }
        rmm__sreg_mark_pooled(p->streams[i], true);
    }
    p->count = count;
    *out = p;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_stream rmm_stream_pool_get(rmm_stream_pool *pool) {
    size_t i;
    if (RMM__UNLIKELY(!pool)) {
        RMM__NULL_OUT("rmm_stream_pool_get", "pool");
        return RMM_STREAM_DEFAULT;
    }
    i = RMM__ATOMIC_ADD_RELAXED(&pool->next, 1) - 1;
    return pool->streams[i % pool->count];
}
RMM__IMPL rmm_stream rmm_stream_pool_get_at(rmm_stream_pool *pool, size_t index) {
    if (RMM__UNLIKELY(!pool)) {
        RMM__NULL_OUT("rmm_stream_pool_get_at", "pool");
        return RMM_STREAM_DEFAULT;
    }
    return pool->streams[index % pool->count];
}
RMM__IMPL size_t rmm_stream_pool_size(const rmm_stream_pool *pool) { return pool ? pool->count : 0; }
RMM__IMPL void rmm_stream_pool_destroy(rmm_stream_pool *pool) {
    size_t i;
    if (!pool) return;
    for (i = 0; i < pool->count; i++) {
        /* a stream registered for graph capture is refused below and left alive: the caller's from
           now on, which rmm_stream_destroy takes after rmm_capture_end (red team 38a: it stayed a
           pool's stream, refused by rmm_stream_destroy, with no pool left). Unmarked before the
           destroy is tried, so a capture ended in between on another thread leaves no pool's
           stream behind either (review 38: the destroy of an unmarked stream takes it as well). */
        bool registered = RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) != 0 && rmm__graph_stream_registered(pool->streams[i]);
        if (registered) rmm__sreg_mark_pooled(pool->streams[i], false);
        if (rmm__stream_destroy(pool->streams[i], true) == RMM_SUCCESS) continue;
        if (registered)
            RMM__LOG(RMM_LOG_LEVEL_WARN, "rmm_stream_pool_destroy: stream %p: %s; left alive (rmm_stream_destroy it after rmm_capture_end)",
                     (void *)pool->streams[i], rmm_last_error());
        else /* (the stream is let go all the same: see rmm_stream_destroy) */
            RMM__LOG(RMM_LOG_LEVEL_WARN, "rmm_stream_pool_destroy: stream %p: %s", (void *)pool->streams[i], rmm_last_error());
    }
    RMM_SYS_FREE(pool);
}

/* ======================================================================================= */
/* ==== stream order: the core every stream-ordered sub-allocator is built on ============ */
/* ======================================================================================= */ /* >>streamorder */

/* Set at process exit: resources destroyed after it leak their upstream memory instead of calling
   a CUDA runtime that may already be gone. */
static int rmm__process_exiting;
static pthread_once_t rmm__exit_hook_once = PTHREAD_ONCE_INIT;
RMM__PRIVATE void rmm__on_exit(void) { RMM__ATOMIC_STORE(&rmm__process_exiting, 1); }
RMM__PRIVATE void rmm__install_exit_hook(void) { atexit(rmm__on_exit); }
RMM__PRIVATE void rmm__ensure_exit_hook(void) { pthread_once(&rmm__exit_hook_once, rmm__install_exit_hook); }
RMM__PRIVATE bool rmm__exiting(void) { return RMM__ATOMIC_LOAD(&rmm__process_exiting) != 0; }

/* The rule: memory freed on stream S may be reused by S at once. Another stream T may take it
   only behind a cudaStreamWaitEvent on an event recorded on S after the free. A "lazy" stream
   records that event only when T needs it (recording later captures at least the work before the
   free, so it is as safe, and the free itself makes no CUDA call): the legacy default stream, the
   library's own streams (whose destruction it sees), and every stream of a resource whose streams
   are promised to outlive it. Other ("eager") streams may be destroyed unseen, so the event must be
   recorded in a call on the stream itself: at once, per free (RMM's rule), or, in the pool, once
   per ring of frees that only that stream may reuse until then (rmm__pool_ring; a ring whose stream
   may be gone is covered by a device synchronize instead: rmm__so_unstick). After T waits, T's own
   event is stale: the next stealer from T must also wait for S, so T is marked dirty (lazy) or
   re-recorded at once (RMM bug #2489).

   The core: a resource's per-stream states (its free lists, one event) in a registry with O(1)
   lookup, the slow path every stream-ordered resource shares (take from another stream behind an
   event, merge other streams' lists, grow), and the retirement of states whose streams are gone:
   a state is dropped when it is empty and its stream is known dead, or is foreign; a sweep, each
   time the number of states doubles, also merges into the stream at hand the memory of dead and
   foreign streams whose work is done, and drops their states, so a program that makes a stream per
   request runs in bounded host memory. The resource supplies its free-list table through rmm__so_ops. */
typedef struct rmm__sstate {
    uint64_t key;       /* in the registry's map */
    rmm_stream handle;
    rmm__sreg *reg;     /* library stream or thread entry (a reference), else NULL */
    rmm__event event;   /* NULL until first needed */
    size_t index;       /* position in the registry's list */
    size_t holder_at;   /* position + 1 in the registry's holders (tracking resources), 0: not there */
    bool lazy;
    bool dirty;         /* lazy only: frees or waits since the event was last recorded */
    bool recorded;      /* the event holds a record */
    bool by_handle;     /* the handle alone names the stream while reg (if any) is alive */
    bool keyed;         /* reachable through the map (false once a reused handle displaced it) */
    unsigned busy;      /* calls that let the lock go around a CUDA call on this state: no sweep
                           retires it meanwhile */
    uint64_t records;   /* records of `event` made so far (counted as each returns) */
    uint64_t done;      /* the record of that number is known complete, and so every earlier one
                           (records on one stream complete in order) */
    uint32_t query_skip; /* rmm__so_refresh_done: attempts left before the event is asked again */
    uint32_t query_wait; /* the skip set after the last "not done" (0: the last answer was done) */
    size_t eager_frees;  /* an eager state's frees that recorded an event, up to RMM__SO_RING_AFTER
                            (a foreign stream's count goes on from its retired state's: rmm__so_recall) */
} rmm__sstate;

typedef struct rmm__so rmm__so;
typedef struct rmm__so_ops {
    size_t state_bytes;                                          /* a resource state starts with rmm__sstate */
    bool (*init)(rmm__so *so, rmm__sstate *s);                   /* empty lists in a zeroed state; false: out of memory */
    void (*fini)(rmm__so *so, rmm__sstate *s);                   /* releases list storage (lists are empty) */
    bool (*holds)(rmm__so *so, rmm__sstate *s);                  /* s has free memory */
    /* a free item of s that serves req (exhaustive: no scan limit), or NULL; may file s's unfiled blocks */
    void *(*find)(rmm__so *so, rmm__sstate *s, const void *req, bool exhaustive);
    void (*absorb)(rmm__so *so, rmm__sstate *taker, rmm__sstate *donor); /* moves every free item */
    rmm_status (*grow)(rmm__so *so, rmm__sstate *s, const void *req);    /* brings memory into s's lists */
    /* optional (NULL: never): s (an eager state) holds free memory that no event covers yet, which
       only a call on its own stream can cover (the pool's ring); unstick makes it ordinary free
       memory of s, after a device synchronize has covered it */
    bool (*stuck)(rmm__so *so, rmm__sstate *s);
    void (*unstick)(rmm__so *so, rmm__sstate *s);
    /* optional (NULL: no preference): rmm__so_take_other found none of the items req prefers;
       true if req now prefers less (it is written: the caller's own), and it is made again (the
       pool's virtual growth prefers memory already on mapped pages, first of states whose work is
       known done) */
    bool (*relax)(rmm__so *so, const void *req);
    /* optional (NULL: every state): whether req may take from state d now (find on d refuses the
       same by itself: this is for the merge of d's lists, which asks no find first) */
    bool (*admits)(rmm__so *so, rmm__sstate *d, const void *req);
} rmm__so_ops;

#define RMM__SO_SPARES 4
/* Eager streams (see the rule above) record an event per free for their first RMM__SO_RING_AFTER
   frees; then blocks freed since their last event wait for one event that covers them all: up to
   RMM__POOL_RING in the pool's ring (RMM__POOL_RING_LARGE above 64 KiB), and up to
   rmm__fixed_ring_cap (at least RMM__SO_RING) on the fixed-size stack's uncovered top. */
#define RMM__SO_RING 32
#define RMM__SO_RING_AFTER 256
/* A foreign stream's state goes when it is emptied (rmm__so_retirable), and with it the count of
   its frees: a long-lived stream whose free memory other streams keep taking never reached
   RMM__SO_RING_AFTER frees in one state, and kept an event per free (the virtual pool, which takes
   other streams' memory on mapped pages first: stream_churn's mixed16 on foreign streams, host
   backend, 80,196 of its frees' events made by states that had made fewer than 16). So the
   resource keeps the counts of up to RMM__SO_COUNTED retired states of foreign streams (a table
   by a hash of the key; a newer key takes an older one's slot), and a state made again for one
   of those streams starts with its count. An id names one stream for the life of the process, so
   a count goes with its stream, but for one case: a free that trusts its thread's last key
   (rmm__so_prekey_for_free) after that stream was destroyed and its handle went to a new one
   remakes the old stream's state and its count, and the free parks there with no event (review
   36). That is the cached key's known case (see rmm__idless_left): the block waits there for a
   device synchronize, safe, as it would in the old state's ring. */
#define RMM__SO_COUNTED 64
typedef struct rmm__so_count {
    uint64_t key; /* 0: none */
    size_t frees;
} rmm__so_count;
struct rmm__so {
    /* The lock has a cache line of its own, whatever the struct's alignment: threads waiting for it
       read it over and over, and with the resource's fields (and its vtable pointer, read by every
       call) on that line each of those reads took the line from the holder. threads16 on an H200,
       medians of 4 interleaved runs: pool on foreign streams 227 -> 213 ns a pair, on created ones
       129 -> 117; fixed-size 95 -> 90 and 81 -> 76. */
    char lock_before[64];
    rmm__spin lock;          /* the resource's lock: held for every state, list and map access */
    char lock_after[64];
    rmm__sstate **list;      /* every state, orphans included */
    size_t count, cap;
    rmm__addr_map map;       /* key -> state */
    rmm__sstate *last;       /* the state used last: found without a lookup when its handle names it */
    uint64_t gen;            /* unique to this resource and the states it has: changes when a state
                                is retired (see rmm__so_mine) */
    rmm__sstate *spares[RMM__SO_SPARES]; /* retired states kept with their events, for reuse */
    size_t spare_count;
    rmm__so_count counted[RMM__SO_COUNTED]; /* eager_frees of retired foreign streams' states: rmm__so_recall */
    /* With track_holders the slow path looks only at `holders`: a superset of the states that hold
       free memory (the resource lists a state when it may have gained some; a state found empty
       leaves), so a stream's first allocation costs O(holders), not O(states). holders_lost: a
       listing ran out of host memory, and the next slow path rebuilds the list from every state. */
    rmm__sstate **holders;
    size_t holder_count, holder_cap;
    bool track_holders, holders_lost;
    size_t sweep_at;         /* sweep when count reaches it */
    bool outlive;            /* streams are promised to outlive the resource */
    bool by_thread;          /* the default streams are keyed by thread (the arena's per-thread arenas) */
    int device;              /* the resource's device, for rmm__so_unstick's synchronize (-1: the current one) */
    const rmm__so_ops *ops;
    const char *who;
};

/* Generations for rmm__so.gen: never the same twice in the process, so that a thread's cached state
   (rmm__so_mine) of a destroyed resource is never taken for one of a resource made at its address. */
static uint64_t rmm__so_gens;
RMM__PRIVATE bool rmm__so_init(rmm__so *so, const rmm__so_ops *ops, const char *who, bool outlive, bool by_thread) {
    memset(so, 0, sizeof *so);
    so->ops = ops;
    so->who = who;
    so->outlive = outlive;
    so->by_thread = by_thread;
    so->device = -1;
    so->sweep_at = 32;
    so->gen = RMM__ATOMIC_ADD(&rmm__so_gens, 1);
    return rmm__addr_map_init(&so->map, 16);
}
#if RMM__DEBUG
/* RMM_DEBUG builds: a stream-ordered sub-allocator (the pool, the fixed-size resource and so
   binning's bins, the arena) is called with the device current that was current at its creation
   (see ">>pool": the default-stream handles name the current device's stream, and one state serves
   them; release builds do not check, as the hot paths make no CUDA call). INVALID_ARGUMENT naming
   both devices, with nothing done; SUCCESS where either device cannot be read. One device query. */
RMM__PRIVATE rmm_status rmm__debug_device_check(const char *who, const char *call, int device) {
    int now = -1;
    if (device < 0 || !rmm__device_peek(&now) || now == device) return RMM_SUCCESS;
    return RMM__INVALID("%s: %s with device %d current; the resource is device %d's, and a sub-allocator is called with its "
                        "device current (as RMM asks of every resource; RMM_DEBUG builds check it)",
                        who, call, now, device);
}
#endif

/* The key, laziness and registry entry (referenced) of `stream` in this resource. */
typedef struct rmm__skey {
    uint64_t key;
    rmm__sreg *reg;
    bool lazy, by_handle;
} rmm__skey;
#define RMM__KEY_HANDLE ((uint64_t)1 << 62)
#define RMM__KEY_THREAD ((uint64_t)1 << 63)
/* The stream this thread last found foreign, and its key as last asked (0: none). Its next call
   on a resource asks the stream's id (rmm__so_prekey; the pool's allocation first tries a block
   known done, with no id: rmm__pool_take_covered) and finds its state with that key, without a
   lookup. A hint only: a wrong one costs a wasted id query, a missing one the lookup.
   Where the id is asked: the pool's allocations (only when no block known done serves them:
   rmm__pool_take_covered) and the fixed-size resource's ask it with their lock held; their frees
   (which need it only before an event) and the arena (whose foreign streams take no lock) before
   (the arena also under its registry lock at the sweep mark, where the hint gave none:
   rmm__arena_has_local). With the lock held the query makes the lock's hold about 18 ns
   longer, but with 16 threads on one resource, each on its own foreign stream, the throughput
   rose: threads16 on an H200 (bench/random_allocations, medians of 4 interleaved runs),
   fixed-size 203 -> 113 ns a pair, the same as with no id query at all (117, an unsafe cache
   tried for the measurement), the pool 300 -> 296; one thread: lifo and churn_small within
   5 %. The driver's call is slower when threads make it at once (80 ns against 18 from one
   thread, bench/stream_identity), and a thread that lets the lock go and comes back with no
   driver call between takes it again before it moves to another core. */
static RMM__TLS rmm_stream rmm__foreign_hint;
static RMM__TLS uint64_t rmm__foreign_hint_key;
/* Allocations this thread may still serve with no id asked (the pool's rmm__pool_take_covered, the
   arena's rmm__arena_idless_local) before it asks again; a run starts when an id is asked and
   answered (rmm__idless_start). A free trusts the key its thread asked last, so after a destroyed
   stream's handle went to a new stream, that stream's frees go to the old state's ring (safe, but
   stranded there until a device synchronize) until its thread asks the id again: after at most
   RMM__IDLESS_RUN allocations served without it, or when that ring is full. (A thread that
   allocates as often as it frees strands at most RMM__IDLESS_RUN blocks; one that only frees
   there, a ring.) rmm__idless_skip: ids still to be asked that start no run. A resource whose
   id-less attempt costs a lock of its own (the arena) sets it to RMM__IDLESS_SKIP when an attempt
   found nothing known done (the device behind), so such a thread takes that lock once per
   allocation, not twice; the pool's attempt runs under the lock its allocation takes anyway, and
   sets none. Per thread, for every resource: a hint, never what makes an allocation safe (memory
   known done is). */
#define RMM__IDLESS_RUN 64
#define RMM__IDLESS_SKIP 16
static RMM__TLS unsigned rmm__idless_left, rmm__idless_skip;
static inline void rmm__idless_start(void) {
    if (rmm__idless_skip) rmm__idless_skip--;
    else rmm__idless_left = RMM__IDLESS_RUN;
}
/* The key of `stream`, which this thread last found foreign: its id, asked now (0 if that fails). */
static inline uint64_t rmm__so_ask_key(rmm_stream stream) {
    uint64_t id = 0;
    if (rmm__stream_id_hint(stream, &id) != RMM_SUCCESS) return 0; /* (the locked path reports it) */
    rmm__idless_start();
    return rmm__foreign_hint_key = id + 16;
}
/* Whether this thread last found `stream` foreign (and so may ask its id for `so`). */
static inline bool rmm__so_hinted(const rmm__so *so, rmm_stream stream) {
    return RMM__UNLIKELY(stream == rmm__foreign_hint) && stream != RMM_STREAM_DEFAULT && !so->outlive;
}
/* The key of `stream` if this thread last found it foreign (its id, asked now), else 0. */
static inline uint64_t rmm__so_prekey(const rmm__so *so, rmm_stream stream) { return rmm__so_hinted(so, stream) ? rmm__so_ask_key(stream) : 0; }
/* For a free: the key this thread last asked for `stream` (*cached), with no driver call, else
   rmm__so_prekey. A cached key may name a stream that has since been destroyed (its handle then
   names another): a free filed there is safe, as only an allocation whose stream's id was asked
   takes a block back from a ring, and a ring is covered by an event only after the id was asked
   again (see the pool's ring). */
static inline uint64_t rmm__so_prekey_for_free(const rmm__so *so, rmm_stream stream, bool *cached) {
    *cached = stream == rmm__foreign_hint && rmm__foreign_hint_key && stream != RMM_STREAM_DEFAULT && !so->outlive;
    return *cached ? rmm__foreign_hint_key : rmm__so_prekey(so, stream);
}
RMM__PRIVATE rmm_status rmm__so_key(const rmm__so *so, rmm_stream stream, uint64_t prekey, rmm__skey *k) {
    uint64_t id = 0;
    memset(k, 0, sizeof *k);
    if (rmm__stream_is_per_thread(stream) || (so->by_thread && rmm__stream_is_legacy(stream))) {
        k->reg = rmm__thread_reg();
        if (!k->reg) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: out of host memory for stream state", so->who);
        k->key = RMM__KEY_THREAD | k->reg->serial; /* (the entry's, not the thread's: see rmm__thread_exit) */
        RMM__ATOMIC_ADD(&k->reg->refs, 1);
        return RMM_SUCCESS;
    }
    if (rmm__stream_is_legacy(stream)) {
        k->key = 1;
        k->lazy = k->by_handle = true;
        return RMM_SUCCESS;
    }
    k->key = (uint64_t)(uintptr_t)stream | RMM__KEY_HANDLE;
    if (so->outlive) {
        k->lazy = k->by_handle = true;
        return RMM_SUCCESS;
    }
    k->reg = rmm__sreg_find(stream);
    if (k->reg) {
        k->lazy = k->by_handle = true;
        return RMM_SUCCESS;
    }
    /* (the hint names the stream only together with its key: set after the id is known, since a
       query that failed left them naming another stream and this one's handle, and a free on this
       stream that trusted that key went to the other stream's ring: a review's find, 2026-11-29) */
    if (prekey) {
        rmm__foreign_hint = stream;
        k->key = rmm__foreign_hint_key = prekey; /* its id, asked just now (or cached, for a free) */
        return RMM_SUCCESS;
    }
    RMM_TRY(rmm__stream_unique_id(stream, &id)); /* a foreign stream: told apart by its id */
    rmm__idless_start();
    rmm__foreign_hint = stream;
    k->key = rmm__foreign_hint_key = id + 16;
    return RMM_SUCCESS;
}
RMM__PRIVATE bool rmm__so_gone(const rmm__sstate *s) { return s->reg && !rmm__sreg_alive(s->reg); }

/* The holders list (track_holders). O(1) amortized; out of host memory sets holders_lost. */
RMM__PRIVATE RMM__NOINLINE void rmm__so_list_slow(rmm__so *so, rmm__sstate *s) {
    if (so->holder_count == so->holder_cap) {
        size_t cap = so->holder_cap ? so->holder_cap * 2 : 8;
        rmm__sstate **grown = (rmm__sstate **)RMM_SYS_REALLOC(so->holders, cap * sizeof *grown);
        if (!grown) {
            so->holders_lost = true;
            return;
        }
        so->holders = grown;
        so->holder_cap = cap;
    }
    so->holders[so->holder_count++] = s;
    s->holder_at = so->holder_count;
}
/* Notes that s may hold free memory now. Caller holds the lock. O(1) amortized. */
static inline void rmm__so_listed(rmm__so *so, rmm__sstate *s) {
    if (RMM__LIKELY(s->holder_at != 0) || !so->track_holders) return;
    rmm__so_list_slow(so, s);
}
RMM__PRIVATE void rmm__so_unlist(rmm__so *so, rmm__sstate *s) {
    size_t i;
    if (!s->holder_at) return;
    i = s->holder_at - 1;
    so->holders[i] = so->holders[--so->holder_count];
    so->holders[i]->holder_at = i + 1;
    s->holder_at = 0;
}
/* After holders_lost: lists every state that holds again. O(states). */
RMM__PRIVATE void rmm__so_relist(rmm__so *so) {
    size_t i;
    so->holders_lost = false;
    for (i = 0; i < so->count; i++) {
        rmm__sstate *d = so->list[i];
        if (!d->holder_at && so->ops->holds(so, d)) rmm__so_list_slow(so, d);
    }
}

/* Set while this thread makes a "nowait" call (rmm_allocate_nowait): it must make no CUDA call but
   a foreign stream's id. Such a call never sweeps or retires a state (refused where a sweep is
   due: rmm__nowait_refused; it takes from no other stream's state), and rmm__so_unstick and
   rmm__so_settled check it too (a sweep in a nowait call asked 30 events until 2026-11-29, and
   destroyed 26: red teams' finds; until red team 33 it still ran there, settling nothing). */
static RMM__TLS bool rmm__in_nowait;
/* Set by a nowait call's state lookup that needs what only an ordinary call may do (a new state
   that starts a sweep); the pool's allocate and free turn it into *would_block on their failure
   branch, and the ordinary call that follows makes the sweep.
   (Until red team 33 the sweep ran in the nowait call, could settle nothing there, and doubled its
   mark anyway: under rmmh, which tries every call nowait first, the states of dead streams, their
   events and their memory piled up for good: 17 KB and an event per stream.) */
static RMM__TLS bool rmm__nowait_refused;
/* Lets go of a retired state's stream reference and keeps it as a spare, or destroys its event
   and frees it. */
RMM__PRIVATE void rmm__so_bury(rmm__so *so, rmm__sstate *s) {
    rmm__sreg_unref(s->reg);
    s->reg = NULL;
    if (so->spare_count < RMM__SO_SPARES) {
        so->spares[so->spare_count++] = s;
    } else {
        rmm__event_destroy(s->event);
        RMM_SYS_FREE(s);
    }
}
/* Whether s is a foreign stream's state (keyed by the stream's id): eager, and no registry entry. */
static inline bool rmm__so_by_id(const rmm__sstate *s) { return !s->lazy && !s->reg; }
/* The slot of `key` in rmm__so.counted: Fibonacci hashing. */
static inline size_t rmm__so_count_slot(uint64_t key) { return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) % RMM__SO_COUNTED; }
/* The count of frees (eager_frees) that the foreign stream of `key` made in a state retired
   since, or 0; forgotten now (its new state carries it on). O(1). */
static inline size_t rmm__so_recall(rmm__so *so, uint64_t key) {
    rmm__so_count *c = &so->counted[rmm__so_count_slot(key)];
    if (c->key != key) return 0;
    c->key = 0;
    return c->frees;
}
/* Removes s from the list and map and frees it (or keeps it as a spare). s holds no memory. Never
   in a nowait call (its event, or its dead stream's, would be destroyed: a CUDA call). O(1). */
RMM__PRIVATE void rmm__so_retire(rmm__so *so, rmm__sstate *s) {
    size_t i = s->index;
    RMM_ASSERT(so->list[i] == s);
    RMM_ASSERT(!rmm__in_nowait);
    so->list[i] = so->list[--so->count];
    so->list[i]->index = i;
    if (s->keyed) rmm__addr_map_remove(&so->map, (uintptr_t)s->key);
    if (rmm__so_by_id(s) && s->eager_frees) {
        rmm__so_count *c = &so->counted[rmm__so_count_slot(s->key)];
        c->key = s->key;
        c->frees = s->eager_frees;
    }
    if (so->last == s) so->last = NULL;
    so->gen = RMM__ATOMIC_ADD(&rmm__so_gens, 1); /* (threads' cached states of so are checked again) */
    rmm__so_unlist(so, s);
    so->ops->fini(so, s);
    rmm__so_bury(so, s);
}
/* A state may go once empty if its stream is gone, or is foreign (its next use makes it again). */
RMM__PRIVATE bool rmm__so_retirable(rmm__so *so, rmm__sstate *s) {
    return s != so->last && !s->busy && !so->ops->holds(so, s) && (rmm__so_gone(s) || rmm__so_by_id(s));
}
/* The event that orders work after donor's frees: recorded now if the donor is lazy and dirty (its
   death event if it is gone); NULL when nothing was ever freed there, or its work is done. */
RMM__PRIVATE rmm_status rmm__so_donor_event(rmm__sstate *d, rmm__event *event) {
    *event = NULL;
    if (d->lazy && d->dirty) {
        bool alive = true, complete = false;
        rmm__event death = NULL;
        rmm_status st = RMM_SUCCESS;
        if (d->reg) { /* (death and complete read under the entry's lock: another resource's donor_event may set complete) */
            (void)rmm__spin_lock(&d->reg->lock);
            alive = rmm__sreg_alive(d->reg);
            death = d->reg->death;
            complete = d->reg->complete;
        }
        if (alive) {
            if (!d->event) st = rmm__event_create(&d->event);
            if (st == RMM_SUCCESS) st = rmm__event_record(d->event, d->handle);
            if (st == RMM_SUCCESS) {
                d->recorded = true;
                d->records++;
                d->dirty = false;
            }
        }
        if (d->reg) rmm__spin_unlock(&d->reg->lock);
        RMM_TRY(st);
        if (!alive) {
            *event = death; /* recorded after everything the stream ever did (set before the entry died, never changed after) */
            if (RMM__UNLIKELY(!death && !complete)) {
                /* destroyed with neither a death event nor a finished synchronize (both CUDA
                   calls failed): only a device synchronize orders what it freed (its memory went
                   to other streams unordered until 2026-11-29: a red team's find); never inside
                   a nowait call (rmm__so_settled then says not settled, and the sweep that asked
                   leaves no error behind: a review's find) */
                if (rmm__in_nowait) return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "the memory of a destroyed stream waits for a device synchronize: not in a nowait call");
                RMM_TRY(rmm__device_synchronize());
                (void)rmm__spin_lock(&d->reg->lock);
                d->reg->complete = true;
                rmm__spin_unlock(&d->reg->lock);
            }
            return RMM_SUCCESS;
        }
    }
    if (d->recorded) *event = d->event;
    return RMM_SUCCESS;
}
/* Records s's event now (an eager stream, after a free or a wait). */
RMM__PRIVATE rmm_status rmm__so_record(rmm__sstate *s) {
    if (!s->event) RMM_TRY(rmm__event_create(&s->event));
    RMM_TRY(rmm__event_record(s->event, s->handle));
    s->recorded = true;
    s->records++;
    s->dirty = false;
    return RMM_SUCCESS;
}
/* Asks s's event whether its last record is complete, and if so notes every record so far done:
   true iff it learned that now. Only with no record in flight (one could be the event's last
   record or not). A CUDA call (cuEventQuery, about 160 ns), made after 16 attempts that did not ask
   it once the answer was no, then after 32, 64, 128 and from then on RMM__SO_QUERY_WAIT while it
   stays no; after a yes the next attempt asks at once (and a no then waits 16 again). Where the device runs behind the host, as in a
   program whose kernels keep it busy, an event recorded a ring of frees ago is seldom complete: a
   query per 16 attempts, each of which asks the id too, cost the pool about 10 ns an allocation
   there (bench/random_allocations --lag), a query per 256 less than 1. Used by the pool's ring
   (rmm__pool_take_covered) and the arena's pending batches (rmm__arena_known_done). Caller holds
   the lock that guards s's records. */
#ifndef RMM__SO_QUERY_WAIT
#define RMM__SO_QUERY_WAIT 256u
#endif
RMM__STATIC_ASSERT(RMM__SO_QUERY_WAIT >= 16 && RMM__SO_QUERY_WAIT <= 0x80000000u, so_query_wait_is_16_to_2_pow_31);
RMM__PRIVATE RMM__NOINLINE bool rmm__so_refresh_done(rmm__sstate *s) {
    rmm__kept_error kept;
    rmm_status st;
    bool done = false;
    if (s->busy || !s->recorded || s->done == s->records) return false;
    if (s->query_skip) {
        s->query_skip--;
        return false;
    }
    rmm__error_keep(&kept); /* (a failed query reads as "not yet": the caller takes other memory, and no failure stays behind; the copy is of the last message's length) */
    st = rmm__event_query(s->event, &done);
    rmm__error_back(&kept);
    if (st != RMM_SUCCESS || !done) {
        s->query_wait = !s->query_wait ? 16u : s->query_wait >= RMM__SO_QUERY_WAIT / 2 ? (uint32_t)RMM__SO_QUERY_WAIT : s->query_wait * 2;
        s->query_skip = s->query_wait;
        return false;
    }
    s->query_wait = 0;
    s->done = s->records;
    return true;
}
/* As rmm__so_record, for a call on s's own stream holding so's lock, but the lock is let go around
   the CUDA call: with 16 threads at once a record took 4-8 us in the driver (bench/stream_identity),
   and the whole resource waited for it. The caller has the lock again on return (also on failure).
   Meanwhile s is pinned (busy: no sweep retires it) and other threads may use the resource and s.
   *adds counts what was ever put in s's uncovered part (the pool's ring, the fixed-size stack's
   top), read under the lock: if something came in during the record, which then may not cover it,
   the record is tried once more (threads sharing the stream), then made under the lock. At most
   three CUDA calls. */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__so_record_unlocked(rmm__so *so, rmm__sstate *s, const size_t *adds) {
    int tries;
    if (!s->event) RMM_TRY(rmm__event_create(&s->event));
    for (tries = 0; tries < 2; tries++) {
        size_t before = *adds;
        rmm_status st;
        s->busy++;
        rmm__spin_unlock(&so->lock);
        st = rmm__event_record(s->event, s->handle);
        (void)rmm__spin_lock(&so->lock); /* (this thread held it: not a reentrant call) */
        s->busy--;
        RMM_TRY(st);
        s->recorded = true;
        s->records++;
        s->dirty = false;
        if (*adds == before) return RMM_SUCCESS;
    }
    return rmm__so_record(s);
}
/* After a free on s, holding the lock: lazy streams are marked, the others record at once. */
static inline rmm_status rmm__so_freed(rmm__sstate *s) {
    if (RMM__LIKELY(s->lazy)) {
        s->dirty = true;
        return RMM_SUCCESS;
    }
    return rmm__so_record(s);
}
/* After memory came from the upstream on s's stream (a growth), holding the lock: a stream-ordered
   upstream (a pool under a pool, a binning resource's bins over one, an async resource) orders it
   after s's work so far only (it may be a block s's stream freed there with a kernel still writing
   into it), as if s had freed it just now. So another stream takes it only behind s: lazy streams are
   marked, the others record now (a red team's find, 2026-11-28: a fixed-size chunk grown on a
   foreign stream was filed as free for any stream behind an event recorded before the growth, or
   none, and a binning resource's bins over a pool handed such memory to other streams with no
   wait). One event per growth; none for a lazy stream until another stream takes from it; none when
   the upstream is a cudaMalloc, managed or pinned resource, whose memory is not stream-ordered (a
   review's find: the waits were needless there). */
static inline bool rmm__upstream_ordered(const rmm_resource *upstream) {
    return upstream->vtable != &rmm__cuda_vtable && upstream->vtable != &rmm__managed_vtable && upstream->vtable != &rmm__pinned_vtable;
}
static inline rmm_status rmm__so_grown(rmm__sstate *s, const rmm_resource *upstream) { return rmm__upstream_ordered(upstream) ? rmm__so_freed(s) : RMM_SUCCESS; }
/* Whether taking memory from donor d would record d's event on a stream registered for graph
   capture (a lazy stream with frees no event covers yet): that record would be captured, and the
   taker, waiting on it, would join the capture (a red team's find). rmm__so_acquire passes such a
   donor over while the registration lasts. A donor whose stream is gone records nothing (its death
   event orders it): never passed over, whatever stream has its handle now (a review's find). One
   relaxed load while no capture is registered, else the graph lock when d is lazy and dirty. */
static inline bool rmm__so_donor_capturing(const rmm__sstate *d) {
    return RMM__UNLIKELY(RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) != 0) && d->lazy && d->dirty && !rmm__so_gone(d) &&
           rmm__graph_key_registered((uint64_t)(uintptr_t)d->handle);
}
/* Armed by an allocation's slow path (the pool's, the fixed-size resource's) around its search of
   other streams' memory, with where to keep the thread's error record and the flag that says it is
   kept: rmm__so_wait keeps it (once) before its CUDA calls, so that a wait that fails, after which
   the allocation succeeds another way (its ring covered, a synchronize, growth), leaves no failure
   behind (a red team's find, session 42: the wait's failure stayed the thread's last error). Saved
   and restored around each use (a pool's upstream may be a pool). */
static RMM__TLS rmm__kept_error *rmm__wait_kept;
static RMM__TLS bool *rmm__wait_kept_taken;
typedef struct rmm__wait_arm {
    rmm__kept_error *kept;
    bool *taken;
} rmm__wait_arm;
/* Arms rmm__wait_kept with k and t; returns the arming before, for rmm__wait_arm_back. */
static inline rmm__wait_arm rmm__wait_arm_set(rmm__kept_error *k, bool *t) {
    rmm__wait_arm before;
    before.kept = rmm__wait_kept;
    before.taken = rmm__wait_kept_taken;
    rmm__wait_kept = k;
    rmm__wait_kept_taken = t;
    return before;
}
static inline void rmm__wait_arm_back(rmm__wait_arm before) {
    rmm__wait_kept = before.kept;
    rmm__wait_kept_taken = before.taken;
}
/* Makes taker's future work wait for the work donor had queued before its frees. Fails with the
   CUDA calls' status (an event's record or creation, the wait); the thread's record is kept first
   where an allocation armed rmm__wait_kept. */
RMM__PRIVATE rmm_status rmm__so_wait(rmm__sstate *taker, rmm__sstate *donor) {
    rmm__event e = NULL;
    RMM_ASSERT(!rmm__in_nowait); /* (it records an event: a CUDA call) */
    if (RMM__UNLIKELY(rmm__wait_kept != NULL) && !*rmm__wait_kept_taken) { /* (beside the CUDA calls below the copy costs little) */
        rmm__error_keep(rmm__wait_kept);
        *rmm__wait_kept_taken = true;
    }
    RMM_TRY(rmm__so_donor_event(donor, &e));
    if (!e) return RMM_SUCCESS;
    RMM_TRY(rmm__stream_wait_event(taker->handle, e));
    if (taker->lazy) {
        taker->dirty = true;
        return RMM_SUCCESS;
    }
    return rmm__so_record(taker);
}
/* Blocks the host until the work s had queued before its frees is done. */
RMM__PRIVATE rmm_status rmm__so_host_wait(rmm__sstate *s) {
    rmm__event e = NULL;
    RMM_ASSERT(!rmm__in_nowait);
    RMM_TRY(rmm__so_donor_event(s, &e));
    return e ? rmm__event_synchronize(e) : RMM_SUCCESS;
}
/* true iff the work s had queued before its frees is known to be done (no wait needed); false,
   asking nothing, where that would take a CUDA call in a "nowait" call. */
RMM__PRIVATE bool rmm__so_settled(rmm__sstate *s) {
    rmm__event e = NULL;
    bool done = false, complete = false;
    rmm__kept_error kept;
    if (s->lazy && !rmm__so_gone(s)) return false; /* a live lazy stream: work may follow any time */
    /* a failure here only means "not settled", and leaves no failure behind: the thread's error
       record is kept and put back, as rmm__so_refresh_done does (a red team's find, session 43: a
       virtual pool's allocation that succeeded after asking a donor's event left that query's
       failure as the thread's last error) */
    rmm__error_keep(&kept);
    if (rmm__so_donor_event(s, &e) == RMM_SUCCESS) {
        if (!e) done = true;
        else if (!rmm__in_nowait && rmm__event_query(e, &complete) == RMM_SUCCESS) done = complete;
    }
    rmm__error_back(&kept);
    return done;
}

/* Drops states that can go, and merges into `current` the memory of states whose stream is gone or
   foreign and whose work is done. O(states); runs when their number doubles. */
/* Covers, with one device synchronize, the memory no event covers in states whose stream may be
   gone (foreign streams, exited threads): only a call on that stream could cover it otherwise.
   O(states), and the synchronize when one such state holds some. true iff it synchronized;
   *failed (may be NULL) is the synchronize's status (SUCCESS when none was needed or made). */
RMM__PRIVATE bool rmm__so_unstick_status(rmm__so *so, rmm__sstate *current, bool all, rmm_status *failed) {
    size_t i;
    bool any = false;
    rmm__device_guard g;
    rmm_status st;
    if (failed) *failed = RMM_SUCCESS;
    if (!so->ops || !so->ops->stuck || rmm__in_nowait) return false; /* (a resource whose creation failed early has no ops) */
    for (i = 0; i < so->count && !any; i++) {
        rmm__sstate *d = so->list[i];
        any = !d->lazy && (all || (d != current && (!d->reg || rmm__so_gone(d)))) && so->ops->stuck(so, d);
    }
    if (!any) return false;
    if (so->device < 0) {
        st = rmm__device_synchronize();
    } else if ((st = rmm__device_enter(&g, so->device)) == RMM_SUCCESS) { /* the resource's device, whichever is current */
        st = rmm__device_synchronize();
        rmm__device_leave(&g);
    }
    if (st != RMM_SUCCESS) {
        if (failed) *failed = st;
        return false;
    }
    for (i = 0; i < so->count; i++)
        if (!so->list[i]->lazy && so->ops->stuck(so, so->list[i])) so->ops->unstick(so, so->list[i]);
    return true;
}
RMM__PRIVATE bool rmm__so_unstick(rmm__so *so, rmm__sstate *current, bool all) { return rmm__so_unstick_status(so, current, all, NULL); }
RMM__PRIVATE void rmm__so_sweep(rmm__so *so, rmm__sstate *current) {
    size_t i = so->count;
    rmm__kept_error kept;
    rmm_status failed;
    RMM_ASSERT(!rmm__in_nowait); /* (refused at the state's creation: rmm__nowait_refused) */
    /* the sweep serves the call that runs it, which goes on whatever the sweep finds: no failure of
       the sweep's stays behind (a failed device synchronize of a stream destroyed without its
       death event stayed in rmm_last_status: review 25; the unstick's: review 26) */
    rmm__error_keep(&kept);
    (void)rmm__so_unstick_status(so, current, false, &failed);
    if (failed != RMM_SUCCESS)
        RMM__LOG(RMM_LOG_LEVEL_WARN, "%s: a device synchronize to free gone streams' memory failed (%s): that memory stays with them", so->who, rmm_last_error());
    while (i-- > 0) {
        rmm__sstate *d = so->list[i];
        bool gone = rmm__so_gone(d);
        /* a live stream the library knows (its own, or a thread's) keeps its state; legacy and
           promised-to-outlive streams always keep theirs; a foreign stream's goes once its memory
           can move without a wait (it is made again at its next use) */
        if (d == current || d == so->last || d->busy || (!gone && (d->lazy || d->reg))) continue;
        if (so->ops->holds(so, d)) {
            if (!current || !so->ops->absorb || !rmm__so_settled(d)) continue;
            so->ops->absorb(so, current, d);
            if (so->ops->holds(so, d)) continue; /* what no event covers stays (the synchronize failed) */
        }
        rmm__so_retire(so, d);
    }
    so->sweep_at = rmm__max(32, so->count * 2);
    rmm__error_back(&kept);
}

/* Whether state s, known to be alive, serves a call on `stream` with this prekey without a lookup:
   its handle names it, and its stream is not gone, or prekey (a foreign stream's id) is its key. */
static inline bool rmm__so_names(const rmm__sstate *s, rmm_stream stream, uint64_t prekey) {
    return s->handle == stream && ((s->by_handle && (!s->reg || rmm__sreg_alive(s->reg))) || (prekey && s->key == prekey));
}
/* The state each thread found last in a few resources (direct-mapped by the resource's address),
   valid while the resource's generation is the one recorded (no state retired since). With many
   threads on a resource, each on its own stream, so->last is mostly another thread's state, and
   the lookup in the map held the lock about 50 ns longer on each call (threads16 on foreign
   streams on an H200: 838,000 map lookups in 1.6 million allocate+free pairs). Read and written
   under the resource's lock only. */
typedef struct rmm__so_mine_entry {
    const rmm__so *so;
    uint64_t gen;
    rmm__sstate *s;
} rmm__so_mine_entry;
static RMM__TLS rmm__so_mine_entry rmm__so_mine[4];
static inline rmm__so_mine_entry *rmm__so_mine_for(const rmm__so *so) { return &rmm__so_mine[((uintptr_t)so >> 6) & 3]; }
/* The state keyed `key` (a foreign stream's id plus 16) whose handle is `stream`, found without
   making one or asking the driver anything: so->last, this thread's last state in so, or the map.
   NULL: none. For a call that takes only memory known done from it (the handle may name another
   stream by now). Caller holds so's lock. O(1). */
static inline rmm__sstate *rmm__so_find_keyed(rmm__so *so, rmm_stream stream, uint64_t key) {
    rmm__sstate *s = so->last;
    rmm__so_mine_entry *mine;
    void **slot;
    if (s && s->handle == stream && s->key == key) return s;
    mine = rmm__so_mine_for(so);
    if (mine->so == so && mine->gen == so->gen && mine->s->handle == stream && mine->s->key == key) return mine->s;
    slot = rmm__addr_map_find(&so->map, (uintptr_t)key);
    return slot && ((rmm__sstate *)*slot)->handle == stream ? (rmm__sstate *)*slot : NULL;
}

RMM__PRIVATE RMM__NOINLINE rmm_status rmm__so_state_slow(rmm__so *so, rmm_stream stream, uint64_t prekey, rmm__sstate **out) {
    rmm__skey k;
    void **slot;
    rmm__sstate *s;
    rmm__so_mine_entry *mine = rmm__so_mine_for(so);
    if (mine->so == so && mine->gen == so->gen && rmm__so_names(mine->s, stream, prekey)) {
        *out = so->last = mine->s;
        return RMM_SUCCESS;
    }
    if (prekey && (slot = rmm__addr_map_find(&so->map, (uintptr_t)prekey)) != NULL) { /* a foreign stream's id names it */
        s = (rmm__sstate *)*slot;
        goto found;
    }
    /* a stream the library made, or one promised to outlive the resource, is keyed by its handle */
    if (!rmm__stream_is_legacy(stream) && !rmm__stream_is_per_thread(stream)) {
        slot = rmm__addr_map_find(&so->map, (uintptr_t)((uint64_t)(uintptr_t)stream | RMM__KEY_HANDLE));
        if (slot) {
            s = (rmm__sstate *)*slot;
            if (!rmm__so_gone(s)) goto found;
            /* that stream was destroyed and its handle reused: the old state stays (orphaned) until
               its memory has gone elsewhere */
            rmm__addr_map_remove(&so->map, (uintptr_t)s->key);
            s->keyed = false;
        }
    }
    RMM_TRY(rmm__so_key(so, stream, prekey, &k));
    slot = rmm__addr_map_find(&so->map, (uintptr_t)k.key);
    if (slot) {
        s = (rmm__sstate *)*slot;
        rmm__sreg_unref(k.reg); /* s holds its own reference */
        goto found;
    }
    if (RMM__UNLIKELY(rmm__in_nowait) && so->count + 1 >= so->sweep_at) {
        rmm__sreg_unref(k.reg); /* (no failure recorded: the ordinary call makes the state, and sweeps) */
        rmm__nowait_refused = true;
        return RMM_ERROR_NOT_SUPPORTED;
    }
    if (so->count == so->cap) {
        size_t cap = so->cap ? so->cap * 2 : 8;
        rmm__sstate **grown = (rmm__sstate **)RMM_SYS_REALLOC(so->list, cap * sizeof *grown);
        if (!grown) goto oom;
        so->list = grown;
        so->cap = cap;
    }
    if (so->spare_count) {
        s = so->spares[--so->spare_count];
        {
            rmm__event e = s->event;
            memset(s, 0, so->ops->state_bytes);
            s->event = e;
        }
    } else {
        s = (rmm__sstate *)rmm__calloc(1, so->ops->state_bytes);
        if (!s) goto oom;
    }
    if (!so->ops->init(so, s) || !rmm__addr_map_put(&so->map, (uintptr_t)k.key, s)) {
        so->ops->fini(so, s);
        rmm__event_destroy(s->event);
        RMM_SYS_FREE(s);
        goto oom;
    }
    s->key = k.key;
    s->handle = stream;
    s->reg = k.reg;
    s->lazy = k.lazy;
    s->by_handle = k.by_handle;
    s->keyed = true;
    if (!k.lazy && !k.reg) s->eager_frees = rmm__so_recall(so, k.key);
    s->index = so->count;
    so->list[so->count++] = s;
    if (so->count >= so->sweep_at) rmm__so_sweep(so, s); /* settled memory of dead streams moves to s */
found:
    *out = so->last = s;
    mine->so = so;
    mine->gen = so->gen;
    mine->s = s;
    return RMM_SUCCESS;
oom:
    rmm__sreg_unref(k.reg);
    return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: out of host memory for stream state", so->who);
}
/* The state of `stream`, made on first use. The last one used, with no lookup, when its handle
   names it (and its stream is not gone), or when prekey (rmm__so_prekey, 0 if none) is its key;
   else a map lookup. Caller holds the lock. O(1). */
static inline rmm_status rmm__so_state(rmm__so *so, rmm_stream stream, uint64_t prekey, rmm__sstate **out) {
    rmm__sstate *s = so->last;
    if (RMM__LIKELY(s != NULL) && rmm__so_names(s, stream, prekey)) {
        *out = s;
        return RMM_SUCCESS;
    }
    return rmm__so_state_slow(so, stream, prekey, out);
}

/* The first steps of an allocation on s whose own lists had nothing that serves req: a free item of
   another stream (s then waits for that stream's work, never the host), else every other stream's
   lists merged into s's (each behind such a wait) until one serves; states ops->admits refuses
   (where find on them found nothing) are not merged. Sets *from to the state whose lists hold
   *item; *item NULL: nothing served. O(states) plus what find costs. */
RMM__PRIVATE rmm_status rmm__so_take_other(rmm__so *so, rmm__sstate *s, const void *req, rmm__sstate **from, void **item) {
    const rmm__so_ops *ops = so->ops;
    bool tracked;
    size_t i;
    *item = NULL;
    if (so->track_holders && so->holders_lost) rmm__so_relist(so);
    tracked = so->track_holders && !so->holders_lost;
/* the states to look at: the holders (a superset of those with free memory), else every state */
#define RMM__SO_CANDIDATES (tracked ? so->holder_count : so->count)
#define RMM__SO_CANDIDATE(i) (tracked ? so->holders[i] : so->list[i])
    for (i = 0; i < RMM__SO_CANDIDATES;) {
        rmm__sstate *d = RMM__SO_CANDIDATE(i);
        void *found;
        if (d == s || rmm__so_donor_capturing(d)) {
            i++;
            continue;
        }
        if (!ops->holds(so, d)) {
            if (tracked) rmm__so_unlist(so, d); /* holders[i] is now another state */
            else i++;
            continue;
        }
        found = ops->find(so, d, req, false); /* (refuses, as ops->admits would, what req does not take from d) */
        if (found && rmm__so_wait(s, d) == RMM_SUCCESS) {
            *from = d;
            *item = found;
            return RMM_SUCCESS;
        }
        i++; /* (a donor whose wait failed is passed over: its memory stays its own, and growth may
                still serve; until session 42 the wait's failure ended the search, and an out-of-memory
                status from it read as a fragmented pool that never tried to grow) */
    }
    for (i = 0; i < RMM__SO_CANDIDATES;) { /* merge other streams' lists into s */
        rmm__sstate *d = RMM__SO_CANDIDATE(i);
        if (d != s && (rmm__so_donor_capturing(d) || (ops->admits && !ops->admits(so, d, req)))) {
            i++;
            continue;
        }
        if (d == s || !ops->holds(so, d)) {
            if (d != s && tracked) rmm__so_unlist(so, d); /* holders[i] is now another state */
            else i++;
            continue;
        }
        if (rmm__so_wait(s, d) != RMM_SUCCESS) { /* (passed over, as above) */
            i++;
            continue;
        }
        ops->absorb(so, s, d);
        if (ops->holds(so, d)) i++; /* (absorb moved nothing: out of host memory) */
        else if (tracked) rmm__so_unlist(so, d);
        else if (!rmm__so_retirable(so, d)) i++;
        if (rmm__so_retirable(so, d)) rmm__so_retire(so, d); /* untracked: list[i] is now another state */
        if ((*item = ops->find(so, s, req, false)) != NULL) {
            *from = s;
            return RMM_SUCCESS;
        }
    }
#undef RMM__SO_CANDIDATES
#undef RMM__SO_CANDIDATE
    return RMM_SUCCESS;
}
/* The slow path of an allocation on s, whose own lists had nothing that serves req: another
   stream's memory (rmm__so_take_other; again as req prefers less, while ops->relax says so), else
   a search of s's lists with no scan limit (a pool must never fail a request one of its free
   blocks can serve), else growth. Sets *from to the state whose lists hold *item. O(states) plus
   what find and grow cost. */
RMM__PRIVATE rmm_status rmm__so_acquire(rmm__so *so, rmm__sstate *s, const void *req, rmm__sstate **from, void **item) {
    const rmm__so_ops *ops = so->ops;
    do {
        RMM_TRY(rmm__so_take_other(so, s, req, from, item));
        if (*item) return RMM_SUCCESS;
    } while (ops->relax && ops->relax(so, req));
    *from = s;
    if ((*item = ops->find(so, s, req, true)) != NULL) return RMM_SUCCESS;
    RMM_TRY(ops->grow(so, s, req));
    *item = ops->find(so, s, req, true);
    if (!*item) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: out of memory: growth brought nothing that fits", so->who);
    return RMM_SUCCESS;
}
/* After an item was taken from `from` for another stream: drops `from` if it can go. */
static inline void rmm__so_taken(rmm__so *so, rmm__sstate *taker, rmm__sstate *from) {
    if (RMM__UNLIKELY(from != taker) && rmm__so_retirable(so, from)) rmm__so_retire(so, from); /* (never in a nowait call: it takes from no other state) */
}
/* Frees every state (after host-waiting for each, unless exiting) and the registry. The waits are
   best effort and lose nothing (a state's memory goes back with its resource's chunks, whose frees
   synchronize), so a failed one (an event that finds no host memory) leaves no failure behind: the
   thread's error record is kept and put back (a red team's find: rmmFinalize, which reads a failure
   left by the pool's destroy as memory lost, reported it although every chunk went back). */
RMM__PRIVATE void rmm__so_free(rmm__so *so, bool exiting) {
    size_t i;
    rmm__kept_error kept;
    rmm__error_keep(&kept);
    if (!exiting) (void)rmm__so_unstick(so, NULL, true); /* no event covers that memory: synchronize */
    for (i = 0; i < so->count; i++) {
        rmm__sstate *s = so->list[i];
        if (!exiting) (void)rmm__so_host_wait(s);
        so->ops->fini(so, s);
        rmm__sreg_unref(s->reg);
        if (!exiting) rmm__event_destroy(s->event); /* else leaked: no CUDA at exit */
        RMM_SYS_FREE(s);
    }
    for (i = 0; i < so->spare_count; i++) {
        if (!exiting) rmm__event_destroy(so->spares[i]->event);
        RMM_SYS_FREE(so->spares[i]);
    }
    RMM_SYS_FREE(so->list);
    RMM_SYS_FREE(so->holders);
    rmm__addr_map_free(&so->map);
    memset(so, 0, sizeof *so);
    rmm__error_back(&kept);
}
/* The failure of a call that reached a resource again from below itself (its own upstream, or a
   callback it made), which refused it: NOT_SUPPORTED, marked so that rmm__last_failure_reentrant
   tells it apart from other NOT_SUPPORTED failures without reading the message. */
RMM__PRIVATE rmm_status rmm__reentrant_mark(rmm_status st) {
    rmm__reentrant_serial = rmm__last_error_serial;
    return st;
}
/* Whether this thread's last failure was such a refusal (a binding's garbage collector that frees
   a buffer while the resource's upstream runs in it defers that free instead of losing the block:
   rmmh). Any later failure, and rmm_set_last_error, make it false. O(1). */
static inline bool rmm__last_failure_reentrant(void) { return rmm__reentrant_serial != 0 && rmm__reentrant_serial == rmm__last_error_serial; }
/* The common message for a resource reached again from its own upstream while it holds its lock. */
RMM__PRIVATE rmm_status rmm__reentrant(const char *who, const char *call) {
    return rmm__reentrant_mark(rmm__fail(RMM_ERROR_NOT_SUPPORTED,
                                         "%s: %s was called from inside this resource's own upstream (or a callback it made), while it holds its lock; "
                                         "a resource must not be reached again from below itself",
                                         who, call));
}

#if !defined(RMM_NO_POOL) || !defined(RMM_NO_ARENA)
/* ======================================================================================= */
/* ==== tlsf: O(1) size-binned free lists over host-side block records ================== */
/* ======================================================================================= */ /* >>tlsf */

/* A free block of u = size/256 units lives in bin (fl, sl): fl = 0 holds exact sizes 1..31 units;
   above, fl = log2(u) - 4 and sl the next 5 bits, so a bin spans 1/32 of a power of two. Finding a
   block takes the request's own bin if a block there fits (scanning at most RMM__TLSF_SCAN entries
   for the smallest), else the head of the next non-empty bin, found from two bitmaps: best fit to
   within 1/32, in O(1). Blocks know their address neighbours, so coalescing is O(1) too.
   A free block may stay filed one bin below its size's own bin ("under-filed") when carving or
   merging moves it across a bin edge: it still exceeds that bin's floor, so every search that
   takes it is right, and the search also scans the bin just below the request's. This keeps a
   block whose size sits on a bin edge (a 1 GiB pool, say) from changing bins on every call. */
#define RMM__TLSF_SL_BITS 5
#define RMM__TLSF_SL (1u << RMM__TLSF_SL_BITS)
#define RMM__TLSF_FL 56
#define RMM__TLSF_SCAN 16

struct rmm__tlsf;
typedef struct rmm__block {
    char *ptr;
    size_t size;
    struct rmm__block *phys_prev, *phys_next; /* address neighbours in the same chunk */
    struct rmm__block *free_prev, *free_next; /* bin list while free */
    struct rmm__tlsf *owner;                  /* the free lists holding it (free), or NULL (used) */
    struct rmm__chunk *chunk;
    void *parked; /* pool: the stream state whose recent slot or quick list holds this free block
                     (a parked block stays in the pool's address map, owner NULL); arena: the
                     arena (a stream state) whose pending batch holds it, or whose free of it is
                     asking the id (out of `used`, owner NULL); else NULL */
    uint32_t bin;
    uint32_t cover; /* pool, a block parked on an eager stream: the number of that stream's event
                       record that covers its free, or a later one, modulo 2^32 (rmm__pool_covered) */
#if RMM__MARGIN_ON
    size_t requested; /* RMM_DEBUG_MARGIN: the bytes asked for; the margin follows them (SIZE_MAX: the margin could not be filled, unchecked) */
    uint64_t serial;  /* RMM_DEBUG_MARGIN: its allocation's rmm__margin_serial */
#endif
} rmm__block;

typedef struct rmm__chunk {
    char *ptr;
    size_t size;
    struct rmm__chunk *prev, *next;
    rmm__block *first;
    void *user;     /* arena: the superblock record */
    bool dedicated; /* on-demand pool: grown for one large request; its free blocks serve large ones only */
} rmm__chunk;

typedef rmm__block *rmm__tlsf_row[RMM__TLSF_SL];
typedef struct rmm__tlsf {
    void *state;      /* the per-stream state these lists belong to */
    uint64_t fl_map;
    uint32_t sl_map[RMM__TLSF_FL];
    rmm__tlsf_row *heads; /* RMM__TLSF_FL rows (14 KiB), made by rmm__tlsf_ready before the first insert:
                             a stream state that never holds a free block costs none */
    size_t free_bytes;
    size_t free_blocks;
} rmm__tlsf;
/* The bitmaps: one bit per first-level row in fl_map, one per second-level bin in sl_map[fl], and
   every size (in 256-byte units, up to SIZE_MAX >> 8) maps to a row that exists. */
RMM__STATIC_ASSERT(RMM__TLSF_FL <= 64, tlsf_fl_map_has_a_bit_per_row);
RMM__STATIC_ASSERT(RMM__TLSF_SL <= 32, tlsf_sl_map_has_a_bit_per_bin);
RMM__STATIC_ASSERT(64 - 8 - (RMM__TLSF_SL_BITS - 1) <= RMM__TLSF_FL, tlsf_rows_cover_every_size);
/* Makes t's bin table if it has none; false iff host memory ran out (t unchanged). */
RMM__PRIVATE bool rmm__tlsf_ready(rmm__tlsf *t) {
    if (RMM__LIKELY(t->heads != NULL)) return true;
    t->heads = (rmm__tlsf_row *)rmm__calloc(RMM__TLSF_FL, sizeof(rmm__tlsf_row));
    return t->heads != NULL;
}
/* Frees the bin table of an empty t (a later insert needs rmm__tlsf_ready again). */
RMM__PRIVATE void rmm__tlsf_unready(rmm__tlsf *t) {
    RMM_ASSERT(t->fl_map == 0);
    RMM_SYS_FREE(t->heads);
    t->heads = NULL;
}

RMM__PRIVATE void rmm__tlsf_mapping(size_t units, unsigned *fl, unsigned *sl) {
    if (units < RMM__TLSF_SL) {
        *fl = 0;
        *sl = (unsigned)units;
    } else {
        unsigned f = rmm__log2_floor((uint64_t)units);
        *fl = f - (RMM__TLSF_SL_BITS - 1);
        *sl = (unsigned)(units >> (f - RMM__TLSF_SL_BITS)) & (RMM__TLSF_SL - 1);
    }
}
RMM__PRIVATE void rmm__tlsf_insert(rmm__tlsf *t, rmm__block *b) {
    unsigned fl, sl;
    RMM_ASSERT(t->heads != NULL);
    rmm__tlsf_mapping(b->size >> 8, &fl, &sl);
    b->bin = fl * RMM__TLSF_SL + sl;
    b->owner = t;
    b->free_prev = NULL;
    b->free_next = t->heads[fl][sl];
    if (b->free_next) b->free_next->free_prev = b;
    t->heads[fl][sl] = b;
    t->fl_map |= (uint64_t)1 << fl;
    t->sl_map[fl] |= 1u << sl;
    t->free_bytes += b->size;
    t->free_blocks++;
}
RMM__PRIVATE void rmm__tlsf_remove(rmm__tlsf *t, rmm__block *b) {
    unsigned fl = b->bin / RMM__TLSF_SL, sl = b->bin % RMM__TLSF_SL;
    if (b->free_prev) b->free_prev->free_next = b->free_next;
    else t->heads[fl][sl] = b->free_next;
    if (b->free_next) b->free_next->free_prev = b->free_prev;
    if (!t->heads[fl][sl]) {
        t->sl_map[fl] &= ~(1u << sl);
        if (!t->sl_map[fl]) t->fl_map &= ~((uint64_t)1 << fl);
    }
    b->owner = NULL;
    b->free_prev = b->free_next = NULL;
    t->free_bytes -= b->size;
    t->free_blocks--;
}
/* A free block of at least `bytes` (a multiple of 256), or NULL. A block in a bin above the
   request's always fits; the request's own bin and the one below it (under-filed blocks) are scanned
   for the smallest that fits, at most `scan` entries each: O(1) with RMM__TLSF_SCAN, and a search
   that misses no fitting block with SIZE_MAX (for the last try before growing or failing). */
RMM__PRIVATE rmm__block *rmm__tlsf_find_scan(const rmm__tlsf *t, size_t bytes, size_t scan) {
    size_t units = bytes >> 8;
    unsigned fl, sl;
    uint32_t sl_bits;
    uint64_t fl_bits;
    rmm__tlsf_mapping(units, &fl, &sl);
    if (fl >= RMM__TLSF_FL) return NULL;
    {
        unsigned bin = fl * RMM__TLSF_SL + sl, k;
        for (k = 0; k < 2 && k <= bin; k++) { /* the request's bin, then the one below (under-filed blocks) */
            unsigned f = (bin - k) / RMM__TLSF_SL, s = (bin - k) % RMM__TLSF_SL;
            rmm__block *b, *best = NULL;
            size_t n;
            if (!(t->sl_map[f] & (1u << s))) continue;
            for (n = 0, b = t->heads[f][s]; b && n < scan; b = b->free_next, n++) {
                if (b->size >= bytes && (!best || b->size < best->size)) {
                    best = b;
                    if (b->size == bytes) break;
                }
            }
            if (best) return best;
        }
    }
    sl_bits = sl + 1 < RMM__TLSF_SL ? t->sl_map[fl] & (~0u << (sl + 1)) : 0;
    if (!sl_bits) {
        fl_bits = fl + 1 < 64 ? t->fl_map & (~(uint64_t)0 << (fl + 1)) : 0;
        if (!fl_bits) return NULL;
        fl = (unsigned)__builtin_ctzll(fl_bits);
        sl_bits = t->sl_map[fl];
    }
    sl = (unsigned)__builtin_ctz(sl_bits);
    return t->heads[fl][sl];
}
static inline rmm__block *rmm__tlsf_find(const rmm__tlsf *t, size_t bytes) { return rmm__tlsf_find_scan(t, bytes, RMM__TLSF_SCAN); }
/* The largest free block in t. O(length of the top two non-empty bins). */
RMM__PRIVATE size_t rmm__tlsf_largest(const rmm__tlsf *t) {
    unsigned fl, sl, seen = 0;
    size_t best = 0;
    int f;
    for (f = RMM__TLSF_FL - 1; f >= 0 && seen < 2; f--) {
        fl = (unsigned)f;
        if (!t->sl_map[fl]) continue;
        for (sl = RMM__TLSF_SL; sl-- > 0 && seen < 2;) {
            rmm__block *b;
            if (!t->heads[fl][sl]) continue;
            seen++;
            for (b = t->heads[fl][sl]; b; b = b->free_next) best = rmm__max(best, b->size);
        }
    }
    return best;
}

/* Block records come from slabs, never from the managed memory. */
typedef struct rmm__block_slab {
    struct rmm__block_slab *next;
    rmm__block blocks[255];
} rmm__block_slab;
typedef struct rmm__block_store {
    rmm__block_slab *slabs;
    rmm__block *spare; /* linked through phys_next */
} rmm__block_store;
RMM__PRIVATE rmm__block *rmm__block_new(rmm__block_store *st) {
    rmm__block *b = st->spare;
    if (RMM__UNLIKELY(!b)) {
        size_t i;
        rmm__block_slab *slab = (rmm__block_slab *)RMM_SYS_MALLOC(sizeof *slab);
        if (!slab) return NULL;
        slab->next = st->slabs;
        st->slabs = slab;
        for (i = 0; i < 255; i++) {
            slab->blocks[i].phys_next = st->spare;
            st->spare = &slab->blocks[i];
        }
        b = st->spare;
    }
    st->spare = b->phys_next;
    memset(b, 0, sizeof *b);
    return b;
}
RMM__PRIVATE void rmm__block_release(rmm__block_store *st, rmm__block *b) {
    b->phys_next = st->spare;
    b->owner = NULL;
    st->spare = b;
}
RMM__PRIVATE void rmm__block_store_free(rmm__block_store *st) {
    while (st->slabs) {
        rmm__block_slab *n = st->slabs->next;
        RMM_SYS_FREE(st->slabs);
        st->slabs = n;
    }
    st->spare = NULL;
}
/* Splits `b` (not in any bin) so that it keeps `bytes`; the tail becomes a new free block, which
   the caller files. Returns the tail, NULL if there is none, or sets *oom. */
RMM__PRIVATE rmm__block *rmm__block_split(rmm__block_store *st, rmm__block *b, size_t bytes, bool *oom) {
    rmm__block *tail;
    *oom = false;
    if (b->size == bytes) return NULL;
    tail = rmm__block_new(st);
    if (!tail) {
        *oom = true;
        return NULL;
    }
    tail->ptr = b->ptr + bytes;
    tail->size = b->size - bytes;
    tail->chunk = b->chunk;
    tail->phys_prev = b;
    tail->phys_next = b->phys_next;
    if (b->phys_next) b->phys_next->phys_prev = tail;
    b->phys_next = tail;
    b->size = bytes;
    return tail;
}
/* Takes `bytes` from the front of free block b (filed in t), leaving b filed where it is when the
   rest still belongs to b's bin: no bin work at all, which is what makes carving small blocks off a
   large free block cheap. Returns the taken block (in no bin), or NULL when the rest would change
   bins (then the caller splits the usual way) or *oom when no block record can be had. O(1). */
RMM__PRIVATE rmm__block *rmm__block_carve(rmm__block_store *st, rmm__tlsf *t, rmm__block *b, size_t bytes, bool *oom) {
    unsigned fl, sl;
    rmm__block *a;
    *oom = false;
    if (b->size <= bytes) return NULL;
    rmm__tlsf_mapping((b->size - bytes) >> 8, &fl, &sl);
    if (fl * RMM__TLSF_SL + sl < b->bin) return NULL; /* the rest would fall below b's bin */
    a = rmm__block_new(st);
    if (!a) {
        *oom = true;
        return NULL;
    }
    a->ptr = b->ptr;
    a->size = bytes;
    a->chunk = b->chunk;
    a->phys_prev = b->phys_prev;
    a->phys_next = b;
    if (b->phys_prev) b->phys_prev->phys_next = a;
    else b->chunk->first = a;
    b->phys_prev = a;
    b->ptr += bytes;
    b->size -= bytes;
    t->free_bytes -= bytes;
    return a;
}
/* Files free block b (in no bin) into t, merging it with free neighbours that t holds. Returns the
   merged block. O(1). When exactly one neighbour merges and keeps its bin, it grows in place. */
RMM__PRIVATE rmm__block *rmm__block_file(rmm__block_store *st, rmm__tlsf *t, rmm__block *b) {
    rmm__block *n = b->phys_next, *p = b->phys_prev;
    bool merge_next = n && n->owner == t, merge_prev = p && p->owner == t;
    if (merge_next != merge_prev) {
        rmm__block *keep = merge_next ? n : p;
        size_t merged = keep->size + b->size;
        unsigned fl, sl;
        rmm__tlsf_mapping(merged >> 8, &fl, &sl);
        if (fl * RMM__TLSF_SL + sl <= keep->bin + 1) { /* same bin, or under-filed by one */
            if (merge_next) {
                n->ptr = b->ptr;
                n->phys_prev = p;
                if (p) p->phys_next = n;
                else n->chunk->first = n;
            } else {
                p->phys_next = n;
                if (n) n->phys_prev = p;
            }
            keep->size = merged;
            t->free_bytes += b->size;
            rmm__block_release(st, b);
            return keep;
        }
    }
    if (merge_next) {
        rmm__tlsf_remove(t, n);
        b->size += n->size;
        b->phys_next = n->phys_next;
        if (n->phys_next) n->phys_next->phys_prev = b;
        rmm__block_release(st, n);
    }
    if (merge_prev) {
        rmm__tlsf_remove(t, p);
        p->size += b->size;
        p->phys_next = b->phys_next;
        if (b->phys_next) b->phys_next->phys_prev = p;
        rmm__block_release(st, b);
        b = p;
    }
    rmm__tlsf_insert(t, b);
    return b;
}

/* Cuts a block of `size` bytes aligned to `alignment` out of free block b (filed in t) and returns
   it, in no bin. Carved off the front in place when the rest keeps b's bin; otherwise b leaves its
   bin and the alignment pad in front and the tail behind go back to t. NULL iff no block record
   could be had (then t is as it was). O(1). */
RMM__PRIVATE rmm__block *rmm__block_take_at(rmm__block_store *st, rmm__tlsf *t, rmm__block *b, size_t size, size_t pad);
RMM__PRIVATE rmm__block *rmm__block_take(rmm__block_store *st, rmm__tlsf *t, rmm__block *b, size_t size, size_t alignment) {
    rmm__block *taken;
    bool oom = false;
    if (RMM__LIKELY(((uintptr_t)b->ptr & (alignment - 1)) == 0)) {
        taken = rmm__block_carve(st, t, b, size, &oom);
        if (taken) return taken;
        if (oom) return NULL;
        return rmm__block_take_at(st, t, b, size, 0);
    }
    return rmm__block_take_at(st, t, b, size, (size_t)((((uintptr_t)b->ptr + (alignment - 1)) & ~(uintptr_t)(alignment - 1)) - (uintptr_t)b->ptr));
}
/* Takes `size` bytes at b->ptr + pad (a multiple of 256; pad + size within b) from free block b
   (filed in t): the bytes in front stay filed as b, those behind as a new block. Out of host
   memory for a block record, NULL with b filed as it was (merged back). O(1). */
RMM__PRIVATE rmm__block *rmm__block_take_at(rmm__block_store *st, rmm__tlsf *t, rmm__block *b, size_t size, size_t pad) {
    rmm__block *tail;
    bool oom = false;
    rmm__tlsf_remove(t, b);
    if (pad) {
        rmm__block *front = b;
        b = rmm__block_split(st, front, pad, &oom);
        rmm__tlsf_insert(t, front);
        if (oom) return NULL;
    }
    tail = rmm__block_split(st, b, size, &oom);
    if (tail) rmm__tlsf_insert(t, tail);
    if (oom) {
        rmm__block_file(st, t, b); /* merges back with the pad it was cut from */
        return NULL;
    }
    return b;
}

/* Checks one chunk: blocks contiguous and covering it, back links, sizes, every free block in the
   right bin of its owner and coalesced with same-owner neighbours, every used block in `used`.
   Adds to the counters. O(blocks in the chunk, plus bin lengths). */
typedef struct rmm__walk {
    size_t used_bytes, used_blocks, free_bytes, free_blocks;
    bool pending_unmapped; /* the arena: a parked block is pending, out of the map (counted below) */
    size_t pending_blocks;
} rmm__walk;
RMM__PRIVATE rmm_status rmm__validate_chunk(const char *who, const rmm__chunk *c, const rmm__addr_map *used, rmm__walk *w) {
    rmm__block *b, *prev = NULL;
    char *at = c->ptr;
    if (!c->first || c->first->phys_prev) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: chunk %p has a bad first block", who, (void *)c->ptr);
    for (b = c->first; b; prev = b, b = b->phys_next) {
        if (b->chunk != c) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: block %p names the wrong chunk", who, (void *)b->ptr);
        if (b->ptr != at) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: block %p is not contiguous with its neighbour (expected %p)", who, (void *)b->ptr, (void *)at);
        if (b->size == 0 || b->size % RMM_ALIGNMENT) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: block %p has size %zu", who, (void *)b->ptr, b->size);
        if (b->phys_prev != prev) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: block %p has a broken back link", who, (void *)b->ptr);
        at += b->size;
        if (b->owner) {
            unsigned fl, sl;
            rmm__block *q;
            bool found = false;
            w->free_blocks++;
            w->free_bytes += b->size;
            if (prev && prev->owner == b->owner) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: free blocks %p and %p of one list are not coalesced", who, (void *)prev->ptr, (void *)b->ptr);
            rmm__tlsf_mapping(b->size >> 8, &fl, &sl);
            if (b->bin != fl * RMM__TLSF_SL + sl && b->bin + 1 != fl * RMM__TLSF_SL + sl)
                return rmm__fail(RMM_ERROR_CORRUPTION, "%s: free block %p is in the wrong bin", who, (void *)b->ptr);
            if (!b->owner->heads) /* (a list set with no bin table: it was read through NULL until a white-box test of session 39) */
                return rmm__fail(RMM_ERROR_CORRUPTION, "%s: free block %p names lists without a bin table", who, (void *)b->ptr);
            { /* (at most the lists' recorded blocks looked at: a cycle in the bin ends the search) */
                size_t steps = 0;
                for (q = b->owner->heads[b->bin / RMM__TLSF_SL][b->bin % RMM__TLSF_SL]; q && steps <= b->owner->free_blocks; q = q->free_next, steps++)
                    if (q == b) { found = true; break; }
            }
            if (!found) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: free block %p is missing from its bin", who, (void *)b->ptr);
            if (rmm__addr_map_find(used, (uintptr_t)b->ptr)) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: block %p is both free and in use", who, (void *)b->ptr);
        } else if (w->pending_unmapped && b->parked) {
            if (rmm__addr_map_find(used, (uintptr_t)b->ptr)) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: block %p is both pending and in use", who, (void *)b->ptr);
            w->pending_blocks++;
        } else {
            void **slot = rmm__addr_map_find(used, (uintptr_t)b->ptr);
            if (!slot || *slot != b) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: used block %p is missing from the address map", who, (void *)b->ptr);
            w->used_blocks++;
            w->used_bytes += b->size;
        }
    }
    if (at != c->ptr + c->size) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: the blocks of chunk %p do not cover it", who, (void *)c->ptr);
    return RMM_SUCCESS;
}
/* Checks a set of free lists: bitmaps agree with bins, lists are well linked and owned, counts
   match. Adds the blocks and bytes it lists to *blocks and *bytes. */
RMM__PRIVATE rmm_status rmm__validate_tlsf(const char *who, const rmm__tlsf *t, size_t *blocks, size_t *bytes) {
    unsigned fl, sl;
    size_t n = 0, total = 0;
    if (!t->heads && (t->fl_map || t->free_blocks || t->free_bytes)) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: lists without a bin table hold blocks", who);
    for (fl = 0; fl < RMM__TLSF_FL; fl++) {
        if (((t->fl_map >> fl) & 1u) != (t->sl_map[fl] != 0)) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: first-level bitmap disagrees with level %u", who, fl);
        for (sl = 0; t->heads && sl < RMM__TLSF_SL; sl++) {
            rmm__block *q;
            if (((t->sl_map[fl] >> sl) & 1u) != (t->heads[fl][sl] != NULL)) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: second-level bitmap disagrees with bin (%u, %u)", who, fl, sl);
            for (q = t->heads[fl][sl]; q; q = q->free_next) {
                if (q->owner != t) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: free block %p is filed under the wrong list", who, (void *)q->ptr);
                /* (a head with a back link went unseen, and the next take of the bin's head wrote
                   through it: a white-box test's find, session 39) */
                if ((q == t->heads[fl][sl] && q->free_prev) || (q->free_next && q->free_next->free_prev != q))
                    return rmm__fail(RMM_ERROR_CORRUPTION, "%s: bin list broken at %p", who, (void *)q->ptr);
                if (++n > t->free_blocks) /* (a cycle: the walk ends) */
                    return rmm__fail(RMM_ERROR_CORRUPTION, "%s: the bins list more than the %zu free blocks recorded", who, t->free_blocks);
                total += q->size;
            }
        }
    }
    if (n != t->free_blocks || total != t->free_bytes) return rmm__fail(RMM_ERROR_CORRUPTION, "%s: free counts are off (%zu blocks listed, %zu recorded)", who, n, t->free_blocks);
    *blocks += n;
    *bytes += total;
    return RMM_SUCCESS;
}
#endif /* !RMM_NO_POOL || !RMM_NO_ARENA */

/* ---- describing a sub-allocator (>>diagnostics): its streams and chunks in the dump, its live blocks ---- */
/* Which of the library's kinds of stream a state belongs to. */
RMM__PRIVATE const char *rmm__sstate_kind(const rmm__sstate *s) {
    if (s->key == 1) return "legacy";
    if (s->key & RMM__KEY_THREAD) return "per_thread";
    if (s->reg) return "library";
    if (s->lazy) return "outlive";
    return "foreign";
}
RMM__PRIVATE void rmm__json_stream(rmm__json *j, size_t id, const rmm__sstate *s, size_t free_blocks, size_t free_bytes) {
    rmm__json_open(j, NULL, '{');
    rmm__json_u64(j, "id", id);
    rmm__json_ptr(j, "handle", (const void *)s->handle);
    rmm__json_str(j, "kind", rmm__sstate_kind(s));
    rmm__json_bool(j, "alive", !rmm__so_gone(s));
    rmm__json_bool(j, "lazy", s->lazy);
    rmm__json_u64(j, "free_blocks", free_blocks);
    rmm__json_u64(j, "free_bytes", free_bytes);
    rmm__json_close(j, '}');
}
#if !defined(RMM_NO_POOL) || !defined(RMM_NO_ARENA)
/* The blocks of a chunk of a TLSF-based sub-allocator (pool, arena): stream ids from the list owner. */
RMM__PRIVATE void rmm__json_chunk(rmm__json *j, const rmm__chunk *c, size_t (*stream_of)(const rmm__tlsf *, void *), void *arg) {
    const rmm__block *b;
    rmm__json_open(j, NULL, '{');
    rmm__json_ptr(j, "address", c->ptr);
    rmm__json_u64(j, "size", c->size);
    if (c->dedicated) rmm__json_bool(j, "dedicated", true);
    rmm__json_open(j, "blocks", '[');
    for (b = c->first; b; b = b->phys_next) {
        size_t rid = b->parked ? ((const rmm__sstate *)b->parked)->index : SIZE_MAX; /* parked on a pool stream */
        fprintf(j->f, "%s{\"offset\":%zu,\"size\":%zu,\"state\":\"%s\",\"stream\":", j->first ? "" : ",", (size_t)(b->ptr - c->ptr), b->size,
                b->owner || rid != SIZE_MAX ? "free" : "used");
        j->first = false;
        if (b->owner) fprintf(j->f, "%zu}", stream_of(b->owner, arg));
        else if (rid != SIZE_MAX) fprintf(j->f, "%zu}", rid);
        else fputs("null}", j->f);
    }
    rmm__json_close(j, ']');
    rmm__json_close(j, '}');
}
#endif
#if RMM__MARGIN_ON
/* Adds the used blocks of a used-block map (pool, thread arena) to the list. Caller holds the lock. */
RMM__PRIVATE void rmm__live_from_map(rmm__live_list *l, const rmm__addr_map *m) {
    size_t i;
    for (i = 0; m->slots && i <= m->mask; i++)
        if (m->slots[i].key && !((const rmm__block *)m->slots[i].value)->parked) /* (a parked block is free) */
            rmm__live_add(l, ((const rmm__block *)m->slots[i].value)->ptr, ((const rmm__block *)m->slots[i].value)->requested, ((const rmm__block *)m->slots[i].value)->serial);
}
#endif

#if !defined(RMM_NO_POOL)
/* ======================================================================================= */
/* ==== pool: coalescing, stream-ordered, best fit to 1/32 ============================== */
/* ======================================================================================= */ /* >>pool */

/* Per stream: TLSF free lists, and free blocks "parked" unfiled in front of them, which a later
   allocation of the same size on the same stream takes back with no bin work, no coalescing and no
   address-map work (a parked block stays in the map, marked by b->parked):
   - the last block of at most RMM__POOL_RECENT_MAX bytes freed on the stream waits in its `recent`
     slot (the allocate-free-allocate pattern of most programs);
   - blocks of at most RMM__POOL_QUICK_MAX bytes wait in exact-size LIFO "quick" lists (one per
     256-byte size), up to RMM__POOL_QUICK_BYTES (32 MiB) per stream and 1/16 of the pool, so that a
     workload that keeps freeing and allocating blocks of a few hundred sizes (the steady state of
     most programs) mostly skips the TLSF lists; a block that does not fit the budget is filed.
     (16 MiB until 2026-11-29. churn_small, 1000 live blocks of 256 B-64 KiB, about 12 MiB, needs
     more than that to keep its free blocks parked, and more again on a foreign stream, whose ring
     holds up to 256 of them away from the lists: valgrind on the host backend, instructions per
     pair 422 -> 360 on a foreign stream and 315 -> 294 on a created one, 64 MiB little more (353
     and 295). The replays of bench/traces (bench/replay, valgrind, the calls' instructions):
     gpt2_generate 283 -> 267 million in an on-demand pool, 198 -> 190 in a geometric one;
     resnet50_train, gpt2_train and bert_encode the same; the efficiency of all four the same.)
   Parked blocks are free memory held back from coalescing, as glibc's fastbins and tcache hold
   theirs: every walk over the pool (steal, merge, growth, trim, info, out-of-memory reports) and
   every search of the lists that comes up empty files them first (rmm__pool_settle), so they never
   make an allocation fail or the pool grow. Virtual growth parks nothing in the quick lists (its
   free pages go back to the device; its foreign streams' rings: see RMM__POOL_RING). */
#ifndef RMM__POOL_QUICK_MAX
#define RMM__POOL_QUICK_MAX ((size_t)64 << 10)
#endif
#define RMM__POOL_QUICK_CLASSES (RMM__POOL_QUICK_MAX >> 8)
RMM__STATIC_ASSERT(RMM__POOL_QUICK_MAX % 256 == 0 && RMM__POOL_QUICK_MAX >= 256, pool_quick_classes_are_256_byte_steps);
#ifndef RMM__POOL_QUICK_BYTES
#define RMM__POOL_QUICK_BYTES ((size_t)32 << 20)
#endif
/* The ring of an eager stream (a foreign stream, or a thread's default stream: one the library
   cannot record an event on later, from another call, as it may be gone by then). Instead of an
   event per free, such a stream parks its freed blocks here once it has made RMM__POOL_RING_AFTER
   frees (a stream that lives for a few calls keeps the event per free, so it leaves nothing
   behind): up to RMM__POOL_RING blocks and 1/16 of the pool, freed since the stream's last event,
   which only that stream takes back, newest first: blocks of the quick lists' sizes from a LIFO
   list per size (O(1), as the quick lists), larger ones (at most RMM__POOL_RING_LARGE) from 64
   LIFO lists by a hash of the size (O(1) expected). The free that finds the ring full records one event, which covers every block in it,
   and they move on to the quick lists and free lists, where other streams may take them behind
   that event; so does an allocation on the stream that its own lists cannot serve (if the ring
   holds a large block or is half full, else only before the pool would grow: memory from another
   stream lets the ring fill). Blocks of the quick lists' sizes are not taken back from the ring
   (since 2026-11-27): they wait for its event, then an allocation takes them from the quick lists
   with no id asked once the event is seen complete (rmm__pool_take_covered), so a foreign stream
   asks its id about once per ring (and at least once per RMM__IDLESS_RUN allocations) instead of
   per allocation, and a loop that frees and allocates one size cycles through a ring's worth of
   blocks. A ring left behind by a stream that is gone (or never used again) is covered by a device synchronize: when
   the states are swept, when the pool runs out of memory, on rmm_pool_trim and on destruction. So
   a foreign stream costs an event per RMM__POOL_RING frees (per RMM__POOL_RING_LARGE of large
   ones), not per free, and stays as safe: nothing another stream takes was freed after an event it
   waits for. (Until 2026-11-26 the ring was 32 slots scanned by exact size for every size: on
   churn_small, sizes of 256 B-64 KiB, an event per 28 frees and a scan of up to 32 slots per
   allocation.)
   What the ring costs, measured on an H100 (2026-11-26, bench/random_allocations, interleaved
   runs, medians of 6): with foreign streams made lazy, as a created stream is (every free to the
   stream's own lists, no ring, no event; unsafe, for the measurement only: a destroyed stream's
   free memory could be covered by no event, only by a device synchronize), threads16 on foreign
   streams went 311 -> 229 ns a pair and churn_small 99 -> 61, against 182 and 41 on created
   streams. The ring's releases park its blocks under the pool's lock (threads16, timed per call:
   9,648 releases of about 3.3 us, 32 ms of a 480 ms run), and the memory it holds back sends
   allocations to the slow path more often (1.14x on threads16, 1.43x on churn_small). It stays
   because it bounds what a destroyed foreign stream leaves behind to one ring, where a lazy state
   would leave all its free memory waiting for a synchronize (a program that makes a stream per
   batch would synchronize per batch, or grow). Cutting a larger ring block for an allocation its
   ring held no block of the size for (the rest staying in the ring) was tried and dropped: the
   pieces filled the quick lists and the flushes that followed cost more (valgrind on the host
   backend: +64 and +97 instructions a pair on churn_small and churn_mixed).
   VIRTUAL growth (since 2026-11-30, session 36; before, an event per free on such a stream) rings only blocks
   of the quick lists' sizes, and lets a block's pages go when it enters the ring (idle, still
   mapped: a page move, which synchronizes the device first, may take them, and the block is
   backed again if its stream takes it back); larger frees record their event, which covers the
   ring too. An allocation on the stream that finds no fit on mapped pages in its own lists covers
   the ring first, before it backs pages or takes other streams' memory. Rings of large blocks held
   pages away from the lists, so the pool moved more of them (stream_churn's mixed16 on foreign
   streams, host backend: 1939 maps and 1351 unmaps against 1413 and 868). The ring's budget is
   1/16 of the pages mapped, not of the reserved range. */
#ifndef RMM__POOL_RING
#define RMM__POOL_RING 256
#endif
/* (128 large blocks made threads16 on foreign streams 1.4x slower on an H200, 459-483 ns against
   306-401: 16 streams' rings held their memory away from their own lists, whose misses then cost
   an event under the pool's lock; a cap of 8 MiB per ring mended that but gave churn_mixed an
   event per free of its blocks above 8 MiB, 1.3x slower) */
#ifndef RMM__POOL_RING_LARGE
#define RMM__POOL_RING_LARGE 32
#endif
#define RMM__POOL_RING_AFTER RMM__SO_RING_AFTER
#define RMM__POOL_CLASS_WORDS ((RMM__POOL_QUICK_CLASSES + 63) / 64)
typedef struct rmm__pool_ring {
    size_t count, bytes;  /* blocks and bytes held, both kinds */
    uint64_t classes[RMM__POOL_CLASS_WORDS]; /* bit k: fresh[k] holds a block */
    rmm__block *fresh[RMM__POOL_QUICK_CLASSES]; /* [size / 256 - 1]: LIFO through free_next */
    rmm__block *tail[RMM__POOL_QUICK_CLASSES];  /* the last block of each non-empty fresh[k] */
    size_t large, large_bytes; /* blocks in the buckets, and their bytes */
    uint64_t buckets;     /* bit j: bucket[j] holds a block */
    rmm__block *bucket[64]; /* larger blocks by rmm__pool_ring_hash(size): LIFO through free_next */
} rmm__pool_ring;
typedef struct rmm__pstream {
    rmm__sstate ss;
    rmm__tlsf free;     /* blocks of shared chunks */
    rmm__tlsf large;    /* on-demand growth: blocks of chunks grown for one large request */
    rmm__block *recent;
    size_t quick_bytes, quick_blocks;
    rmm__block **quick; /* RMM__POOL_QUICK_CLASSES lists, [size / 256 - 1]: LIFO through free_next;
                           rmm__pool_no_quick until the state first takes a free block (rmm__pool_ready) */
    rmm__pool_ring *ring; /* eager streams after RMM__POOL_RING_AFTER frees (ss.eager_frees), else NULL */
    size_t ring_puts;     /* blocks ever put in the ring (rmm__pool_cover_unlocked) */
    size_t refilled;      /* bytes taken home from other streams' free blocks, less what their refills took from it (rmm__pool_refill) */
    uint64_t filed_rec;   /* an eager stream: every block in `free` and `large` was last used before
                             record filed_rec of its event (rmm__pool_filed; see rmm__pool_take_listed) */
} rmm__pstream;
/* An eager stream's free lists, on filing blocks whose last use is over once record `rec` of s's
   event is complete: their record is raised to it (never lowered while a block is listed; the
   state is zeroed when made). O(1). */
static inline void rmm__pool_filed(rmm__pstream *s, uint64_t rec) {
    if (rec > s->filed_rec) s->filed_rec = rec;
}
/* The record that the next event record started on s's stream will have at most (records in
   flight, busy, may return first): it follows, in the stream's order, everything already asked
   of the stream, such as a wait for another stream's event. O(1). */
static inline uint64_t rmm__pool_next_rec(const rmm__pstream *s) { return s->ss.records + 1 + s->ss.busy; }
/* The record that covers the free of b, parked on s (b->cover, the low 32 bits of its number;
   rmm__pool_next_rec where it names no record made yet, as after a device synchronize covered a
   ring). O(1). */
static inline uint64_t rmm__pool_cover_rec(const rmm__pstream *s, const rmm__block *b) {
    uint32_t age = (uint32_t)s->ss.records - b->cover;
    return age < 0x80000000u && age <= s->ss.records ? s->ss.records - age : rmm__pool_next_rec(s);
}
/* The blocks in s's ring (none without one). */
static inline size_t rmm__pool_ring_held(const rmm__pstream *s) { return s->ring ? s->ring->count : 0; }
/* The quick lists of a state that holds no free block: all empty, never written. A state costs
   about 700 bytes until a block is freed on its stream or filed in its lists; then its bin tables
   and quick lists (about 16 KiB, 30 KiB with ON_DEMAND growth) are made, and they go again when the
   state is emptied by another stream taking its memory whole, or by rmm_pool_trim. */
static rmm__block *rmm__pool_no_quick[RMM__POOL_QUICK_CLASSES];
#define RMM__POOL_RECENT_MAX ((size_t)1 << 20)
/* ON_DEMAND growth keeps requests of RMM__POOL_LARGE bytes and more apart: each gets a chunk of
   its own (rounded to the growth step), and a free one of those serves another large request only
   if it fits within 1/RMM__POOL_FIT (plus the step); smaller requests never take from them. So a
   small or middling block never pins a big chunk, which is what made the on-demand pool hold 1.47x
   its peak live bytes on an inference trace whose batch shapes vary (bench/traces/bert_encode);
   1.09x with these rules alone. The cost is more cudaMalloc and cudaFree calls when the large
   sizes keep changing. Those rules hold only while growing keeps the pool within its peak
   (rmm__pool_at_peak): at the peak, growth would first give a free chunk back, and a loop whose
   phases need the same memory in different shapes (a training step: one big block, then many smaller ones where it was) would
   swap chunks with upstream every step, forever (ResNet-50: 75 cudaMalloc and 75 cudaFree calls a
   step). There a request takes any free block that fits, splitting a big chunk if it must; the
   peak, which is what the memory costs, stays where it is. The cost: a block that outlives the
   phase pins the chunk it split, so a workload whose largest sizes keep rising holds more
   (bench/traces/bert_encode: 1.47x peak live, from 1.09x, for 89 upstream calls instead of 808). */
#ifndef RMM__POOL_LARGE
#define RMM__POOL_LARGE ((size_t)8 << 20)
#endif
#ifndef RMM__POOL_FIT
#define RMM__POOL_FIT 16
#endif
/* What a stream takes from another stream's free block when its own lists have nothing that fits:
   at least this much (see rmm__pool_alloc_slow). A multiple of 256. */
#ifndef RMM__POOL_REFILL
#define RMM__POOL_REFILL ((size_t)32 << 20)
#endif
#define RMM__PSTREAM_OF(tlsf) ((rmm__pstream *)(tlsf)->state)
/* The lists a free block of chunk c is filed in. */
static inline rmm__tlsf *rmm__pool_lists(rmm__pstream *s, const rmm__chunk *c) { return RMM__UNLIKELY(c->dedicated) ? &s->large : &s->free; }
/* What the core is asked to find: `need` bytes, large or not (see RMM__POOL_LARGE). */
enum { RMM__PREFER_ANY, RMM__PREFER_MAPPED, RMM__PREFER_SETTLED };
typedef struct rmm__pool_req {
    size_t need;
    size_t slack; /* large requests: what rounding a chunk of their own would waste anyway */
    bool large;
    bool any;     /* the pool cannot grow: any free block that fits serves, dedicated or not */
    bool no_grow; /* the stream's ring is to be covered before the pool grows */
    uint8_t prefer; /* VIRTUAL growth, what other streams' memory serves (rmm__pool_find_in, _admits,
                       _relax): RMM__PREFER_ANY; RMM__PREFER_SETTLED, a block whose front lies on
                       mapped pages, of a state whose work is known done (no wait on a stream at
                       work); RMM__PREFER_MAPPED, such a block of any state (where backing pages
                       would move idle ones) */
    bool moves;     /* VIRTUAL growth: backing pages for the request would move idle ones (a device
                       synchronize) or be refused at the maximum (rmm__vm_would_move) */
    const rmm__pstream *taker; /* VIRTUAL growth, RMM__PREFER_SETTLED: the state the request is for */
    bool kept_taken;
    rmm__kept_error *kept; /* NULL, or where a growth keeps the thread's error record first
                              (once): a call that succeeds after all puts it back */
} rmm__pool_req;

/* Where a pool's memory comes from: chunks from upstream (geometric or on-demand growth), or one
   reserved virtual range whose pages are backed only where blocks are live (virtual growth). The
   pool's own code has no branch on the mode beyond "does this backing commit pages". */
typedef struct rmm__pool rmm__pool;
typedef struct rmm__backing {
    rmm_status (*grow)(rmm__pool *p, rmm__pstream *s, const rmm__pool_req *req); /* new free memory into s's lists */
    rmm_status (*commit)(rmm__pool *p, const rmm__block *b);          /* NULL: memory is always there */
    void (*uncommit)(rmm__pool *p, const rmm__block *b);
    rmm_status (*trim)(rmm__pool *p, size_t *released);
    rmm_status (*validate)(rmm__pool *p);
    void (*held)(const rmm__pool *p, size_t *bytes, size_t *peak); /* what it holds on the device */
    void (*destroy)(rmm__pool *p, bool exiting);
} rmm__backing;

/* VIRTUAL growth: one reserved range (the pool's only chunk), backed page by page (see below) */
typedef struct rmm__pool_vm {
    bool at_maximum;               /* the last page-in failed at the maximum (rmm__pool_oom's verdict) */
    char *base;
    size_t reserved, page, pages;
    uint32_t *users;               /* used blocks overlapping each page */
    uint64_t *handle;              /* at an extent's first page: its physical memory */
    size_t extent;                 /* new memory comes in extents of up to this many pages */
    size_t *ext_first;             /* each mapped page: the first page of its extent */
    uint32_t *ext_len;             /* at an extent's first page: its pages */
    uint32_t *ext_used;            /* at an extent's first page: its pages with a user */
    uint8_t *mapped;               /* 1: mapped; 2: mapped, but its access could not be set (rmm__vm_undo) */
    size_t noaccess_extents;       /* extents whose pages are 2 in mapped: their access is set again before use */
    size_t *idle_prev, *idle_next; /* the pages mapped with no user, newest first (SIZE_MAX ends it) */
    uint64_t *idle_since;          /* the synchronize epoch at which each idle page went idle */
    size_t idle_head, idle_tail, idle_count;
    uint64_t *spare;               /* physical memory held unmapped: extents of up to RMM__VM_SPARE_PAGES */
    uint8_t *spare_len;            /* each spare's pages */
    size_t spare_n;                /* spares (entries of spare and spare_len) */
    size_t spare_count;            /* the pages they hold */
    size_t mapped_pages, peak_held_pages;    /* held = mapped + spare */
    size_t used_pages, peak_used_pages;      /* pages holding a used block, now and at most */
    uint64_t sync_epoch;                     /* device synchronizes so far */
    size_t window_ops, window_peak, previous_window_peak, recent_peak; /* hysteresis (see rmm__vm_commit) */
    uint64_t creates, maps, access_calls, unmaps, releases, syncs; /* driver calls made */
    size_t map_top;                          /* no page at or past it was ever mapped */
} rmm__pool_vm;

struct rmm__pool {
    rmm_resource base;
    rmm__so so;              /* the lock, the per-stream states and the slow path */
    rmm_resource *upstream;
    rmm_pool_desc desc;
    int device;
    const rmm__backing *backing;
    rmm__block_store store;
    rmm__addr_map used;      /* pointer -> block, for every block handed out */
    rmm__chunk *chunks;
    size_t chunk_count;
    size_t pool_bytes, peak_pool_bytes, used_bytes;
    size_t large_bytes;      /* ON_DEMAND growth: requests from here up get chunks of their own (else SIZE_MAX) */
    uint64_t grows, releases; /* upstream allocations and frees of chunks, for diagnostics */
    rmm__pool_vm vm;
};

RMM__PRIVATE rmm_status rmm__pool_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream);
RMM__PRIVATE rmm_status rmm__pool_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream);
RMM__PRIVATE void rmm__pool_destroy(rmm_resource *self);
static const rmm_resource_vtable rmm__pool_vtable = {"pool", rmm__pool_allocate, rmm__pool_deallocate, NULL, rmm__pool_destroy};
/* Whether p may give memory back now (a chunk upstream, an idle extent unmapped): not while a
   corruption check runs anywhere in the process (RMM_DEBUG_MARGIN: see rmm__margin_checks_running;
   a check that began after this read lists p's blocks only once the caller lets p's lock go).
   A trim does not wait for the checks to end either: it may be called from inside an upstream
   call that holds a resource's lock a check waits for (review 29: a trim that waited hung there).
   Caller holds the pool's lock. O(1); always true without debug margins. */
static inline bool rmm__pool_may_give_back(void) {
#if RMM__MARGIN_ON
    return RMM__ATOMIC_LOAD(&rmm__margin_checks_running) == 0;
#else
    return true;
#endif
}
#define RMM__POOL_OF(so) ((rmm__pool *)((char *)(so) - offsetof(rmm__pool, so)))
#define RMM__PSTREAM(p, i) ((rmm__pstream *)(p)->so.list[i])

/* Files a parked block of s into its free lists (it leaves the address map); returns the block it
   merged into. O(1). */
static inline rmm__block *rmm__pool_unpark(rmm__pool *p, rmm__pstream *s, rmm__block *b) {
    (void)rmm__addr_map_remove(&p->used, (uintptr_t)b->ptr);
    b->parked = NULL;
    if (!s->ss.lazy) rmm__pool_filed(s, rmm__pool_cover_rec(s, b));
    return rmm__block_file(&p->store, rmm__pool_lists(s, b->chunk), b);
}
/* Files the blocks of s's quick lists, largest first, until one merges into a free block of at
   least `need` bytes (SIZE_MAX: all of them); true if one did. O(blocks filed + classes). */
RMM__PRIVATE RMM__NOINLINE bool rmm__pool_flush_quick(rmm__pool *p, rmm__pstream *s, size_t need) {
    size_t k = RMM__POOL_QUICK_CLASSES;
    while (k-- > 0 && s->quick_blocks) {
        while (s->quick[k]) {
            rmm__block *b = s->quick[k];
            s->quick[k] = b->free_next;
            b->free_next = NULL;
            s->quick_blocks--;
            s->quick_bytes -= b->size;
            if (rmm__pool_unpark(p, s, b)->size >= need) return true;
        }
    }
    return false;
}
/* Files s's recent block. O(1). */
static inline void rmm__pool_settle_recent(rmm__pool *p, rmm__pstream *s) {
    if (s->recent) {
        rmm__block *r = s->recent;
        s->recent = NULL;
        rmm__pool_unpark(p, s, r);
    }
}
/* Files every block parked on s. */
static inline void rmm__pool_settle(rmm__pool *p, rmm__pstream *s) {
    rmm__pool_settle_recent(p, s);
    if (RMM__UNLIKELY(s->quick_blocks != 0)) (void)rmm__pool_flush_quick(p, s, SIZE_MAX);
}
/* A free block for req in s's lists: small requests search the shared chunks only, large ones
   first the chunks grown for large requests. */
static inline rmm__block *rmm__pool_find_block(rmm__pstream *s, const rmm__pool_req *req, size_t scan) {
    rmm__block *b;
    if (RMM__LIKELY(!req->large)) {
        b = rmm__tlsf_find_scan(&s->free, req->need, scan);
        /* at the pool's limit a dedicated chunk's free block serves a small request too */
        return RMM__UNLIKELY(!b && req->any) ? rmm__tlsf_find_scan(&s->large, req->need, scan) : b;
    }
    b = rmm__tlsf_find_scan(&s->large, req->need, scan);
    /* a poor fit: a chunk of its own is better, unless the pool cannot grow */
    if (b && !req->any && b->size - req->need > req->need / RMM__POOL_FIT + req->slack) b = NULL;
    return b ? b : rmm__tlsf_find_scan(&s->free, req->need, scan);
}
/* What a stream's quick lists may hold: RMM__POOL_QUICK_BYTES and 1/16 of the pool. */
static inline size_t rmm__pool_quick_budget(const rmm__pool *p) { return rmm__min(RMM__POOL_QUICK_BYTES, p->pool_bytes >> 4); }
/* As rmm__pool_park, for a block whose pages (virtual growth) were let go already: when it went
   into s's ring (rmm__pool_ring_put's caller), or just now. O(1). */
static inline void rmm__pool_park_uncommitted(rmm__pool *p, rmm__pstream *s, rmm__block *b) {
    size_t size = b->size;
    if (RMM__UNLIKELY(p->backing->uncommit != NULL)) {
        /* virtual growth: nothing parks in the quick lists */
    } else if (size <= RMM__POOL_QUICK_MAX && s->quick_bytes + size <= rmm__pool_quick_budget(p)) {
        b->parked = s;
        b->free_next = s->quick[(size >> 8) - 1];
        s->quick[(size >> 8) - 1] = b;
        s->quick_bytes += size;
        s->quick_blocks++;
        return;
    }
    if (size <= RMM__POOL_RECENT_MAX) {
        rmm__pool_settle_recent(p, s);
        b->parked = s;
        s->recent = b;
    } else {
        b->parked = NULL;
        (void)rmm__addr_map_remove(&p->used, (uintptr_t)b->ptr);
        if (!s->ss.lazy) rmm__pool_filed(s, rmm__pool_cover_rec(s, b));
        rmm__block_file(&p->store, rmm__pool_lists(s, b->chunk), b);
    }
}
/* Parks or files a block freed on s, once nothing but s's own stream can still be using it (s is
   lazy, or an event of s covers its free, or the device was synchronized): in a quick list, else
   the recent slot, else s's free lists (virtual growth: its pages go back first). O(1) (virtual
   growth: O(pages of the block)). */
static inline void rmm__pool_park(rmm__pool *p, rmm__pstream *s, rmm__block *b) {
    if (RMM__UNLIKELY(p->backing->uncommit != NULL)) p->backing->uncommit(p, b);
    rmm__pool_park_uncommitted(p, s, b);
}
/* What s's ring may hold: RMM__POOL_RING blocks of at most this many bytes in all: 1/16 of the
   pool (virtual growth: of the pages it maps, not of its reserved range). */
static inline size_t rmm__pool_ring_budget(const rmm__pool *p) {
    size_t held = RMM__UNLIKELY(p->backing->uncommit != NULL) ? p->vm.mapped_pages * p->vm.page : p->pool_bytes;
    return rmm__max(held >> 4, RMM__POOL_RECENT_MAX);
}
/* The bucket of a large size: Fibonacci hashing of size / 256 (sizes that are multiples of 2 MiB,
   common in real work, spread over all 64). */
static inline unsigned rmm__pool_ring_hash(size_t size) { return (unsigned)(((uint64_t)(size >> 8) * 0x9E3779B97F4A7C15ull) >> 58); }
/* The link to the newest block of `size` bytes (larger than the quick lists' sizes) at `alignment`
   in ring r's bucket, or NULL. O(1) expected: a walk of the bucket. */
static inline rmm__block **rmm__pool_ring_find_large(rmm__pool_ring *r, size_t size, size_t alignment) {
    unsigned j = rmm__pool_ring_hash(size);
    rmm__block **at;
    if (!(r->buckets & ((uint64_t)1 << j))) return NULL;
    for (at = &r->bucket[j]; *at; at = &(*at)->free_next)
        if ((*at)->size == size && ((uintptr_t)(*at)->ptr & (alignment - 1)) == 0) return at;
    return NULL;
}
/* A block of `size` bytes (aligned) from s's ring, newest first, or NULL. O(1); a large size walks
   its bucket (O(1) expected), an alignment past 256 its size's list. */
static inline rmm__block *rmm__pool_ring_take(rmm__pool_ring *r, size_t size, size_t alignment) {
    rmm__block **at;
    unsigned j;
    if (RMM__LIKELY(size - 1 < RMM__POOL_QUICK_MAX)) { /* (size is a multiple of 256) */
        size_t k = (size >> 8) - 1;
        rmm__block *b;
        at = &r->fresh[k];
        while (*at && ((uintptr_t)(*at)->ptr & (alignment - 1)) != 0) at = &(*at)->free_next; /* (alignments past 256) */
        if ((b = *at) == NULL) return NULL;
        *at = b->free_next;
        if (at != &r->fresh[k] && b == r->tail[k]) /* (the list's last block, past an unaligned one) */
            r->tail[k] = (rmm__block *)(void *)((char *)at - offsetof(rmm__block, free_next));
        b->free_next = NULL;
        if (!r->fresh[k]) r->classes[k >> 6] &= ~((uint64_t)1 << (k & 63));
        r->count--;
        r->bytes -= size;
        return b;
    }
    if ((at = rmm__pool_ring_find_large(r, size, alignment)) != NULL) {
        rmm__block *b = *at;
        j = rmm__pool_ring_hash(size);
        *at = b->free_next;
        b->free_next = NULL;
        if (!r->bucket[j]) r->buckets &= ~((uint64_t)1 << j);
        r->large--;
        r->large_bytes -= size;
        r->count--;
        r->bytes -= size;
        return b;
    }
    return NULL;
}
/* Whether ring r holds a block of `size` bytes at `alignment`, larger than the quick lists' sizes
   (which its stream takes back, once its id is asked, rather than cut another from its lists).
   O(1) expected. */
static inline bool rmm__pool_ring_holds_large(rmm__pool_ring *r, size_t size, size_t alignment) { return rmm__pool_ring_find_large(r, size, alignment) != NULL; }
/* Whether ring r has room for a block of `size` bytes: RMM__POOL_RING blocks (RMM__POOL_RING_LARGE
   past the quick lists' sizes) and rmm__pool_ring_budget bytes. */
static inline bool rmm__pool_ring_room(const rmm__pool *p, const rmm__pool_ring *r, size_t size) {
    return r->count < RMM__POOL_RING && r->bytes + size <= rmm__pool_ring_budget(p) &&
           (size <= RMM__POOL_QUICK_MAX || (r->large < RMM__POOL_RING_LARGE && p->backing->uncommit == NULL));
}
/* Puts b (size bytes, freed on s) in s's ring. O(1). */
static inline void rmm__pool_ring_put(rmm__pstream *s, rmm__block *b, size_t size) {
    rmm__pool_ring *r = s->ring;
    s->ring_puts++;
    if (size <= RMM__POOL_QUICK_MAX) {
        size_t k = (size >> 8) - 1;
        if (!r->fresh[k]) r->tail[k] = b;
        b->free_next = r->fresh[k];
        r->fresh[k] = b;
        r->classes[k >> 6] |= (uint64_t)1 << (k & 63);
    } else {
        unsigned j = rmm__pool_ring_hash(size);
        b->free_next = r->bucket[j];
        r->bucket[j] = b;
        r->buckets |= (uint64_t)1 << j;
        r->large++;
        r->large_bytes += size;
    }
    r->count++;
    r->bytes += size;
    b->parked = s;
    /* the first record to start after this free covers it: records in flight now (busy) may
       return first, so its number is at most this */
    b->cover = (uint32_t)(s->ss.records + 1 + s->ss.busy);
}
/* Parks every block of the ring's lists that `bits` marks in lists[], and empties them (bits too). */
static inline void rmm__pool_ring_park_lists(rmm__pool *p, rmm__pstream *s, uint64_t *bits, rmm__block **lists) {
    while (*bits) {
        size_t k = (size_t)__builtin_ctzll(*bits);
        rmm__block *b = lists[k];
        *bits &= *bits - 1;
        lists[k] = NULL;
        while (b) {
            rmm__block *next = b->free_next;
            b->free_next = NULL;
            rmm__pool_park_uncommitted(p, s, b); /* (a ring's blocks: virtual growth let their pages go at the free) */
            b = next;
        }
    }
}
/* Moves the blocks of s's ring on to its quick lists and free lists: an event recorded on s after
   their frees covers them, or a device synchronize did. s is ready (a ring's state is never made
   unready). O(size classes in use + large blocks) when the small lists join whole, else O(ring)
   (virtual growth: always, to the recent slot and the free lists; their pages were let go at the
   free). */
RMM__PRIVATE void rmm__pool_ring_release(rmm__pool *p, rmm__pstream *s) {
    rmm__pool_ring *r = s->ring;
    size_t w, small_bytes = r->bytes - r->large_bytes;
    if (p->backing->uncommit == NULL && s->quick_bytes + small_bytes <= rmm__pool_quick_budget(p)) {
        /* the lists of the quick lists' sizes join them whole, O(1) each: their blocks are
           parked on s already (threads16 on foreign streams, an H200: this release held the
           pool's lock about 9,300 cycles, 18 % of all the lock's holds, when it parked block by block) */
        for (w = 0; w < RMM__POOL_CLASS_WORDS; w++) {
            uint64_t bits = r->classes[w];
            r->classes[w] = 0;
            while (bits) {
                size_t k = w * 64 + (size_t)__builtin_ctzll(bits);
                bits &= bits - 1;
                r->tail[k]->free_next = s->quick[k];
                s->quick[k] = r->fresh[k];
                r->fresh[k] = NULL;
            }
        }
        s->quick_bytes += small_bytes;
        s->quick_blocks += r->count - r->large;
    } else {
        for (w = 0; w < RMM__POOL_CLASS_WORDS; w++) rmm__pool_ring_park_lists(p, s, &r->classes[w], r->fresh + w * 64);
    }
    rmm__pool_ring_park_lists(p, s, &r->buckets, r->bucket);
    r->count = r->bytes = r->large = r->large_bytes = 0;
    rmm__so_listed(&p->so, &s->ss);
}
/* Records s's event (in a call on s's own stream, so the stream exists) and releases its ring.
   Fails (nothing changed) if the event cannot be recorded. */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__pool_ring_cover(rmm__pool *p, rmm__pstream *s) {
    RMM_TRY(rmm__so_record(&s->ss));
    if (s->ring) rmm__pool_ring_release(p, s);
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__pool_settle_all(rmm__pool *p) {
    size_t i;
    for (i = 0; i < p->so.count; i++) rmm__pool_settle(p, RMM__PSTREAM(p, i));
}

/* ---- the pool's free-list table for the stream-order core ---- */
RMM__PRIVATE bool rmm__pool_state_init(rmm__so *so, rmm__sstate *s) {
    (void)so;
    ((rmm__pstream *)s)->free.state = ((rmm__pstream *)s)->large.state = s; /* zeroed TLSF lists are empty */
    ((rmm__pstream *)s)->quick = rmm__pool_no_quick;
    return true;
}
/* Makes s's bin tables and quick lists, so that free blocks can be filed or parked there; false
   iff host memory ran out, with s as it was: the empty tables it made go again (a table without
   the quick lists is what rmm_pool_validate calls corrupt: a red team's find, 2026-11-29). O(1);
   once per state until rmm__pool_unready. */
RMM__PRIVATE RMM__NOINLINE bool rmm__pool_ready(rmm__pool *p, rmm__pstream *s) {
    bool had_free = s->free.heads != NULL, had_large = s->large.heads != NULL;
    if (rmm__tlsf_ready(&s->free) && (p->large_bytes == SIZE_MAX || rmm__tlsf_ready(&s->large))) {
        rmm__block **q;
        if (s->quick != rmm__pool_no_quick) return true;
        if ((q = (rmm__block **)rmm__calloc(RMM__POOL_QUICK_CLASSES, sizeof *q)) != NULL) {
            s->quick = q;
            return true;
        }
    }
    if (!had_free && s->free.heads) rmm__tlsf_unready(&s->free);
    if (!had_large && s->large.heads) rmm__tlsf_unready(&s->large);
    return false;
}
static inline bool rmm__pool_is_ready(const rmm__pstream *s) { return s->quick != rmm__pool_no_quick; }
/* As rmm__pool_ring_cover, for a free on s's own stream, but the pool's lock is let go around the
   event record (rmm__so_record_unlocked); a trim or a merge may take s's tables meanwhile (made
   again here). Caller holds the lock, and has it again on return. Fails, with the ring kept, as
   rmm__pool_ring_cover, or with OUT_OF_MEMORY if s's tables cannot be made again. */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__pool_cover_unlocked(rmm__pool *p, rmm__pstream *s) {
    RMM_TRY(rmm__so_record_unlocked(&p->so, &s->ss, &s->ring_puts));
    if (!rmm__pool_is_ready(s) && !rmm__pool_ready(p, s)) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: out of host memory for a stream's free lists");
    if (s->ring) rmm__pool_ring_release(p, s);
    return RMM_SUCCESS;
}
/* Frees the tables of s, which holds no free block. */
RMM__PRIVATE void rmm__pool_unready(rmm__pstream *s) {
    if (s->quick != rmm__pool_no_quick) RMM_SYS_FREE(s->quick);
    s->quick = rmm__pool_no_quick;
    rmm__tlsf_unready(&s->free);
    rmm__tlsf_unready(&s->large);
}
RMM__PRIVATE void rmm__pool_state_fini(rmm__so *so, rmm__sstate *s) {
    rmm__pstream *ps = (rmm__pstream *)s;
    (void)so;
    if (ps->quick != rmm__pool_no_quick) RMM_SYS_FREE(ps->quick);
    ps->quick = rmm__pool_no_quick;
    RMM_SYS_FREE(ps->ring);
    ps->ring = NULL;
    RMM_SYS_FREE(ps->free.heads); /* (a pool being destroyed: its lists may still hold blocks) */
    RMM_SYS_FREE(ps->large.heads);
    ps->free.heads = ps->large.heads = NULL;
}
RMM__PRIVATE bool rmm__pool_holds(rmm__so *so, rmm__sstate *s) {
    (void)so;
    return ((rmm__pstream *)s)->recent || ((rmm__pstream *)s)->quick_blocks || ((rmm__pstream *)s)->free.fl_map || ((rmm__pstream *)s)->large.fl_map ||
           rmm__pool_ring_held((rmm__pstream *)s) != 0;
}
RMM__PRIVATE rmm__block *rmm__vm_prefer_mapped(rmm__pool *p, rmm__block *b, size_t need, char **at);
RMM__PRIVATE bool rmm__vm_mapped(const rmm__pool_vm *vm, const char *ptr, size_t bytes);
/* VIRTUAL growth: a state whose work is not known done serves only at RMM__PREFER_MAPPED or less
   (taking from it makes the taker wait for that work). An event query per state asked. */
RMM__PRIVATE bool rmm__pool_admits(rmm__so *so, rmm__sstate *d, const void *req) {
    (void)so;
    return ((const rmm__pool_req *)req)->prefer != RMM__PREFER_SETTLED || rmm__so_settled(d);
}
RMM__PRIVATE void *rmm__pool_find_in(rmm__so *so, rmm__sstate *ss, const void *req, bool exhaustive) {
    rmm__pstream *s = (rmm__pstream *)ss;
    rmm__pool *p = RMM__POOL_OF(so);
    rmm__block *b;
    rmm__pool_settle(p, s);
    b = rmm__pool_find_block(s, (const rmm__pool_req *)req, exhaustive ? SIZE_MAX : RMM__TLSF_SCAN);
    if (RMM__UNLIKELY(p->backing->commit != NULL) && b) {
        const rmm__pool_req *r = (const rmm__pool_req *)req;
        if (s != r->taker && !rmm__pool_admits(so, ss, req)) return NULL;
        b = rmm__vm_prefer_mapped(p, b, r->need, NULL);
        if (r->prefer != RMM__PREFER_ANY && !rmm__vm_mapped(&p->vm, b->ptr, r->need)) return NULL;
    }
    return b;
}
/* VIRTUAL growth: backing pages is the pool's growth, and as a pool of chunks takes other streams'
   free memory before it grows, the virtual pool takes other streams' free blocks that lie on
   mapped pages before it backs pages: first of states whose work is known done (gone streams,
   whose memory no sweep has merged yet), with no wait; then, where backing the pages would move
   idle ones (an unmap, a map and a device synchronize) or be refused at the maximum, of any
   state, behind an event wait (their lists merged into s's if no block serves alone); then (a
   request that s's own lists cannot serve at all) any block, as a pool of chunks takes one.
   Without the first step a new stream took the front of whichever list came first, usually the reserved
   range's unmapped rest, and free memory on mapped pages stayed split among the lists of streams
   that were gone: with a stream made and destroyed per iteration (3 allocations of 1-200 KB) that
   front moved on by what each dead stream's lists kept, and every 2 MiB it crossed moved an idle
   page under it (an unmap, a map, an access and a device synchronize): 13,530 moves and 9,248
   synchronizes in 100,000 iterations on the host backend, the range's 4,096 pages all crossed,
   where one page held what was live (red team 33's finding, 2026-11-30). Live streams serve only
   where a page-in would move pages: taking their mapped memory at every page-in (the first form
   of this, the same day) made 16 long-lived streams wait for each other on 35-38 % of a random
   workload's steps (review 34). Measured on an H200 with bench/stream_churn (its five loops,
   three rounds; docs/performance_notes.md#virtual-stream-churn-tiers): this rule was faster than the
   header before it on every loop (mixed16, 16 streams at work, 1.5-2.7x; grow4 4.6-7.5x) and held
   4-8 % less on grow4 but 10-12 % more on mixed16 (1,674-1,712 MiB at the peak against 1,528);
   taking live streams' memory only at the maximum kept mixed16's memory but was 3-5x slower than
   before on handoff (dead streams' memory merged, a consumer stream's not). The request is
   written (the caller's own): true iff it now prefers less. */
RMM__PRIVATE bool rmm__pool_relax(rmm__so *so, const void *req) {
    rmm__pool_req *r = (rmm__pool_req *)(uintptr_t)req;
    (void)so;
    if (r->prefer == RMM__PREFER_ANY) return false;
    r->prefer = r->prefer == RMM__PREFER_SETTLED && r->moves ? RMM__PREFER_MAPPED : RMM__PREFER_ANY;
    return true;
}
/* Moves every free block of donor into taker, coalescing, and frees the donor's (now empty) tables;
   moves nothing if taker's tables cannot be made (host memory). O(blocks moved). */
RMM__PRIVATE void rmm__pool_absorb(rmm__so *so, rmm__sstate *taker_state, rmm__sstate *donor_state) {
    rmm__pool *p = RMM__POOL_OF(so);
    rmm__pstream *taker = (rmm__pstream *)taker_state, *donor = (rmm__pstream *)donor_state;
    rmm__tlsf *lists[2];
    int k;
    if (!rmm__pool_ready(p, taker)) return;
    rmm__so_listed(so, taker_state);
    rmm__pool_settle(p, donor);
    rmm__pool_filed(taker, rmm__pool_next_rec(taker)); /* (the taker waited for the donor, or the donor's work is done) */
    lists[0] = &donor->free;
    lists[1] = &donor->large;
    for (k = 0; k < 2; k++) {
        rmm__tlsf *from = lists[k], *to = k ? &taker->large : &taker->free;
        while (from->fl_map) {
            unsigned fl = (unsigned)__builtin_ctzll(from->fl_map);
            unsigned sl = (unsigned)__builtin_ctz(from->sl_map[fl]);
            rmm__block *b = from->heads[fl][sl];
            rmm__tlsf_remove(from, b);
            rmm__block_file(&p->store, to, b);
        }
    }
    if (donor_state != so->last && !rmm__pool_ring_held(donor)) rmm__pool_unready(donor);
}
/* ON_DEMAND growth: true iff growing for `need` bytes (one step) would lift the pool above its
   peak, i.e. growth would have to give memory back first. O(1). */
static inline bool rmm__pool_at_peak(const rmm__pool *p, size_t need) {
    size_t step;
    if (!rmm__round_up(need, p->desc.growth_granularity_bytes, &step)) return true;
    return step > p->peak_pool_bytes - p->pool_bytes;
}
/* The request an allocation of `size` bytes (a multiple of 256) at `alignment` makes of the lists:
   room for the alignment, large or not (p->large_bytes), and, ON_DEMAND at its peak, `any` free
   block that fits serves before growth would swap chunks with upstream (see RMM__POOL_LARGE). O(1). */
static inline void rmm__pool_req_for(const rmm__pool *p, size_t size, size_t alignment, rmm__pool_req *req) {
    req->need = size + (alignment - RMM_ALIGNMENT);
    req->large = req->need >= p->large_bytes;
    req->any = p->large_bytes != SIZE_MAX && rmm__pool_at_peak(p, req->need);
    req->slack = req->large ? p->desc.growth_granularity_bytes : 0;
    req->no_grow = false;
    req->prefer = RMM__PREFER_ANY; /* (set by rmm__pool_alloc_slow before it asks other streams) */
    req->moves = false;
    req->taker = NULL;
    req->kept_taken = false;
    req->kept = NULL;
}
/* Growth for req. ON_DEMAND keeps small requests out of dedicated chunks and large ones out of poor
   fits only while the pool can grow within its peak (at the peak req is `any` from the start: see
   rmm__pool_alloc_slow): when growth fails for want of memory (the maximum, or the upstream), req
   becomes `any` and succeeds iff some free block of s (every stream's free blocks are in s by now)
   fits, so the pool never fails a request one of its free blocks can serve. */
RMM__PRIVATE rmm_status rmm__pool_grow_in(rmm__so *so, rmm__sstate *s, const void *req) {
    rmm__pool *p = RMM__POOL_OF(so);
    rmm__pool_req *r = (rmm__pool_req *)(uintptr_t)req; /* the caller's own, writable request */
    rmm_status st;
    if (r->no_grow) return RMM_ERROR_OUT_OF_MEMORY; /* (the caller covers its ring and asks again) */
    if (r->kept && !r->kept_taken) { /* (a growth is an upstream call: the copy costs little beside it) */
        rmm__error_keep(r->kept);
        r->kept_taken = true;
    }
    st = p->backing->grow(p, (rmm__pstream *)s, r);
    if (st == RMM_ERROR_OUT_OF_MEMORY && !r->any && p->large_bytes != SIZE_MAX) {
        r->any = true;
        if (rmm__pool_find_block((rmm__pstream *)s, r, SIZE_MAX)) return RMM_SUCCESS;
        r->any = false;
    }
    return st;
}
RMM__PRIVATE bool rmm__pool_stuck(rmm__so *so, rmm__sstate *s) {
    (void)so;
    return rmm__pool_ring_held((rmm__pstream *)s) != 0;
}
RMM__PRIVATE void rmm__pool_unstick(rmm__so *so, rmm__sstate *s) { rmm__pool_ring_release(RMM__POOL_OF(so), (rmm__pstream *)s); }
static const rmm__so_ops rmm__pool_so_ops = {sizeof(rmm__pstream), rmm__pool_state_init, rmm__pool_state_fini, rmm__pool_holds, rmm__pool_find_in,
                                             rmm__pool_absorb,      rmm__pool_grow_in,   rmm__pool_stuck,      rmm__pool_unstick,
                                             rmm__pool_relax,       rmm__pool_admits};

/* ---- chunks from upstream: geometric and on-demand growth ---- */

/* Adds a chunk from upstream to s's lists. */
RMM__PRIVATE rmm_status rmm__pool_add_chunk(rmm__pool *p, rmm__pstream *s, void *ptr, size_t bytes, bool annotate, bool dedicated) {
    rmm__chunk *c = (rmm__chunk *)rmm__calloc(1, sizeof *c);
    rmm__block *b = rmm__block_new(&p->store);
    if (!c || !b || !rmm__pool_ready(p, s)) {
        RMM_SYS_FREE(c);
        if (b) rmm__block_release(&p->store, b);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: out of host memory for chunk records");
    }
    c->ptr = (char *)ptr;
    c->size = bytes;
    c->first = b;
    c->dedicated = dedicated;
    if (annotate) c->user = rmm__san_heap_register(ptr, bytes);
    c->next = p->chunks;
    if (p->chunks) p->chunks->prev = c;
    p->chunks = c;
    p->chunk_count++;
    b->ptr = (char *)ptr;
    b->size = bytes;
    b->chunk = c;
    rmm__pool_filed(s, rmm__pool_next_rec(s)); /* (an upstream's stream-ordered allocation is ordered on s) */
    rmm__tlsf_insert(rmm__pool_lists(s, c), b);
    rmm__so_listed(&p->so, &s->ss);
    p->pool_bytes += bytes;
    if (p->pool_bytes > p->peak_pool_bytes) p->peak_pool_bytes = p->pool_bytes;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__pool_unlink_chunk(rmm__pool *p, rmm__chunk *c) {
    rmm__san_heap_unregister(c->user);
    if (c->prev) c->prev->next = c->next;
    else p->chunks = c->next;
    if (c->next) c->next->prev = c->prev;
    p->chunk_count--;
    p->pool_bytes -= c->size;
}
/* Frees a wholly free chunk: its one block leaves its lists, the memory goes upstream. */
RMM__PRIVATE rmm_status rmm__pool_release_chunk(rmm__pool *p, rmm__chunk *c, rmm_stream stream) {
    rmm__block *b, *bn;
    RMM_TRY(rmm_deallocate(p->upstream, c->ptr, c->size, stream));
    p->releases++;
    for (b = c->first; b; b = bn) {
        bn = b->phys_next;
        rmm__tlsf_remove(b->owner, b);
        rmm__block_release(&p->store, b);
    }
    rmm__pool_unlink_chunk(p, c);
    RMM_SYS_FREE(c);
    return RMM_SUCCESS;
}
/* Whether chunk c is one free block filed in s's lists. O(1). */
static inline bool rmm__pool_chunk_free_on(const rmm__chunk *c, rmm__pstream *s) { return c->first->owner == rmm__pool_lists(s, c) && c->first->size == c->size; }
/* ON_DEMAND growth by `grow` bytes (for a request of `need`): when that would lift the pool above
   its own peak, or a maximum lowered below the peak leaves no room for `need`, first gives wholly
   free chunks held in s's lists back to upstream until it would not (or none are left).
   Below the peak, free chunks are kept for reuse: the peak, which is what the memory costs, stays
   the same, and a steady workload stops calling cudaMalloc and cudaFree. The frees are ordered
   on s, so the upstream free on s needs no wait. The chunk given back is the smallest wholly free
   one that makes room alone (a bigger one is likely wanted again whole: GPT-2 training gave back
   its 785 MiB chunk to grow one of 393 MiB, and grew it back next step), else the largest: fewest
   calls. O(chunks) per chunk given back. */
RMM__PRIVATE void rmm__pool_release_free_chunks(rmm__pool *p, rmm__pstream *s, size_t grow, size_t need) {
    rmm__chunk *c, *victim;
    size_t max = p->desc.maximum_bytes; /* (need <= max here: rmm__chunks_grow checked) */
    rmm__kept_error kept;
    if (!rmm__pool_may_give_back()) return; /* (a corruption check runs: the pool grows instead) */
    rmm__pool_settle(p, s);
    /* past the peak; or, below a peak that a lowered maximum (rmm_pool_set_maximum) now cuts, past
       what leaves room for the request (a review's find: it stopped at the peak and then refused) */
    while (p->pool_bytes + grow > p->peak_pool_bytes || (max && p->pool_bytes > max - need)) {
        size_t excess = p->pool_bytes + grow > p->peak_pool_bytes ? p->pool_bytes + grow - p->peak_pool_bytes : p->pool_bytes - (max - need);
        victim = NULL;
        for (c = p->chunks; c; c = c->next) {
            if (!rmm__pool_chunk_free_on(c, s)) continue;
            if (!victim || (victim->size >= excess ? c->size >= excess && c->size < victim->size : c->size > victim->size)) victim = c;
        }
        if (!victim) break;
        rmm__error_keep(&kept);
        if (rmm__pool_release_chunk(p, victim, s->ss.handle) != RMM_SUCCESS) { /* (best effort: the pool keeps the chunk and grows) */
            RMM__LOG(RMM_LOG_LEVEL_WARN, "pool %p: a free chunk of %zu bytes could not be given back before growing (%s): the pool keeps it", (void *)p, victim->size, rmm_last_error());
            rmm__error_back(&kept);
            break;
        }
        RMM__LOG(RMM_LOG_LEVEL_DEBUG, "pool %p: released a free chunk before growing (now %zu bytes)", (void *)p, p->pool_bytes);
    }
}
/* The bytes of the chunks wholly free on s: what rmm__pool_release_free_chunks may give back (after
   rmm__pool_settle). O(chunks). */
RMM__PRIVATE size_t rmm__pool_free_chunk_bytes(const rmm__pool *p, rmm__pstream *s) {
    const rmm__chunk *c;
    size_t bytes = 0;
    for (c = p->chunks; c; c = c->next)
        if (rmm__pool_chunk_free_on(c, s)) bytes += c->size;
    return bytes;
}
/* Grows the pool by at least `need` bytes, by RMM's rules (research 1.6) or on demand. */
RMM__PRIVATE rmm_status rmm__chunks_grow(rmm__pool *p, rmm__pstream *s, const rmm__pool_req *req) {
    size_t need = req->need, max = p->desc.maximum_bytes, try_bytes, min_bytes = need;
    rmm_status st = RMM_ERROR_OUT_OF_MEMORY;
    void *ptr = NULL;
    char maximum[40];
    rmm__kept_error kept;
    if (max) snprintf(maximum, sizeof maximum, "maximum %zu", max);
    else rmm__copy_text(maximum, sizeof maximum, "no maximum");
    if (p->desc.growth == RMM_POOL_GROWTH_ON_DEMAND) {
        if (!rmm__round_up(need, p->desc.growth_granularity_bytes, &try_bytes)) try_bytes = need;
        if (max) rmm__pool_settle(p, s);
        if (max && (need > max || p->pool_bytes - rmm__pool_free_chunk_bytes(p, s) > max - need)) {
            try_bytes = 0; /* the maximum refuses it even with the free chunks gone: they stay (a red team's find) */
        } else {
            rmm__pool_release_free_chunks(p, s, try_bytes, need);
            if (max && try_bytes > max - rmm__min(max, p->pool_bytes)) try_bytes = need;
        }
    } else if (max) {
        size_t remaining = max > p->pool_bytes ? rmm__align_down(max - p->pool_bytes, RMM_ALIGNMENT) : 0;
        try_bytes = need <= remaining ? rmm__max(need, rmm__align_down(remaining / 2, RMM_ALIGNMENT)) : 0;
    } else {
        try_bytes = rmm__max(need, p->pool_bytes);
    }
    if (max && (need > max || p->pool_bytes > max - need)) try_bytes = 0;
    if (try_bytes == 0)
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: out of memory allocating %zu bytes: the pool holds %zu bytes of its %s, with %zu in use",
                         need, p->pool_bytes, maximum, p->used_bytes);
    rmm__error_keep(&kept); /* a halving that then succeeds leaves no failure behind (growth is rare: the copy is cheap here) */
    for (;;) {
        st = rmm__allocate_own(p->upstream, &ptr, try_bytes, s->ss.handle);
        if (st != RMM_ERROR_OUT_OF_MEMORY || try_bytes <= min_bytes) break; /* (another failure is not one a smaller request mends) */
        try_bytes = rmm__max(min_bytes, rmm__align_down(try_bytes / 2, RMM_ALIGNMENT));
    }
    if (st == RMM_SUCCESS) rmm__error_back(&kept);
    if (st != RMM_SUCCESS) {
        RMM__LOG(RMM_LOG_LEVEL_WARN, "pool %p: growing for %zu bytes failed with %s (pool %zu bytes, %s)", (void *)p, need, rmm_status_string(st), p->pool_bytes, maximum);
        if (st == RMM_ERROR_OUT_OF_MEMORY)
            return rmm__fail_cuda(rmm_last_cuda_error(), st, "pool: out of memory allocating %zu bytes: the pool holds %zu bytes (%s), upstream refused %zu bytes: %s",
                                  need, p->pool_bytes, maximum, try_bytes, rmm_last_error());
        return rmm__fail_cuda(rmm_last_cuda_error(), st, "pool: growing by %zu bytes for a request of %zu failed: the upstream '%s' returned %s: %s", try_bytes,
                              need, rmm_resource_type_name(p->upstream), rmm_status_string(st), rmm_last_error());
    }
    st = rmm__so_grown(&s->ss, p->upstream); /* (before the chunk is filed: a record that fails leaves the pool as it was) */
    if (st == RMM_SUCCESS) st = rmm__pool_add_chunk(p, s, ptr, try_bytes, true, req->large);
    if (st != RMM_SUCCESS) {
        RMM__CLEANUP(rmm_deallocate(p->upstream, ptr, try_bytes, s->ss.handle));
        return st;
    }
    p->grows++;
    RMM__LOG(RMM_LOG_LEVEL_DEBUG, "pool %p: grew by %zu bytes to %zu bytes for a request of %zu", (void *)p, try_bytes, p->pool_bytes, need);
    return RMM_SUCCESS;
}
/* Waits on the host for every stream holding free blocks of chunk c; false if c has a used block,
   or a free one whose stream's event would have to be recorded inside a graph capture
   (rmm__so_donor_capturing: the chunk stays until that capture ends). */
RMM__PRIVATE bool rmm__pool_chunk_free(rmm__chunk *c, rmm_status *st) {
    rmm__block *b;
    *st = RMM_SUCCESS;
    for (b = c->first; b; b = b->phys_next)
        if (!b->owner || rmm__so_donor_capturing(&RMM__PSTREAM_OF(b->owner)->ss)) return false;
    for (b = c->first; b; b = b->phys_next) {
        *st = rmm__so_host_wait(&RMM__PSTREAM_OF(b->owner)->ss);
        if (*st != RMM_SUCCESS) return false;
    }
    return true;
}
RMM__PRIVATE rmm_status rmm__chunks_trim(rmm__pool *p, size_t *released) {
    rmm__chunk *c, *next;
    rmm_status st = RMM_SUCCESS;
    if (!rmm__pool_may_give_back()) return RMM_SUCCESS; /* (a trim from inside a corruption check) */
    for (c = p->chunks; c; c = next) {
        size_t bytes = c->size;
        next = c->next;
        if (!rmm__pool_chunk_free(c, &st)) {
            if (st != RMM_SUCCESS) break;
            continue;
        }
        st = rmm__pool_release_chunk(p, c, RMM_STREAM_DEFAULT);
        if (st != RMM_SUCCESS) break;
        *released += bytes;
    }
    if (*released) RMM__LOG(RMM_LOG_LEVEL_INFO, "pool %p: trimmed %zu bytes, %zu bytes held", (void *)p, *released, p->pool_bytes);
    return st;
}
RMM__PRIVATE rmm_status rmm__chunks_validate(rmm__pool *p) {
    (void)p;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__chunks_held(const rmm__pool *p, size_t *bytes, size_t *peak) {
    *bytes = p->pool_bytes;
    *peak = p->peak_pool_bytes;
}
RMM__PRIVATE void rmm__chunks_destroy(rmm__pool *p, bool exiting) {
    while (p->chunks) {
        rmm__chunk *c = p->chunks;
        p->chunks = c->next;
        if (!exiting) {
            rmm__san_heap_unregister(c->user);
            (void)rmm_deallocate(p->upstream, c->ptr, c->size, RMM_STREAM_DEFAULT);
        }
        RMM_SYS_FREE(c);
    }
}
static const rmm__backing rmm__chunks_backing = {rmm__chunks_grow, NULL, NULL, rmm__chunks_trim, rmm__chunks_validate, rmm__chunks_held, rmm__chunks_destroy};

/* ---- VIRTUAL growth: physical pages follow the used blocks ---- */

/* Every page of the reserved range is in one of three states: mapped with a used block on it,
   mapped and idle (its blocks were freed: kept mapped, so that a block placed there again costs no
   driver call), or unmapped; and a fourth, rare one: mapped without access, after driver failures
   in a failed page-in's undo (rmm__vm_undo). Pages come in extents (vm->extent pages at most, two by default: see
   rmm__vm_page_in), mapped, moved and given back whole: an extent moves only when none of its
   pages is in use. The pool also keeps spare physical memory, unmapped, so that pages can be
   backed without cuMemCreate (extents of up to RMM__VM_SPARE_PAGES: a longer one that comes off
   the range is released, and its memory made anew where it is needed). It holds mapped + spare pages of the device, and keeps that within
   1/RMM__VM_SLACK (1%) of the most pages ever in use:
   - a page a new block needs is backed by a spare page, else by a new one while the pool stays
     within the slack, else by idle pages moved from elsewhere: the longest idle ones, unmapped in a
     batch (their pending work waited for once, by one device synchronize that makes every page idle
     at that moment safe to move: a page known safe needs no second one);
   - when the pool holds 1/8 more than the most pages in use over the last few thousand
     allocations, idle pages go back down to 1/32 above it (hysteresis: a workload going up and
     down does not map and unmap the same pages over and over); a trim gives back every idle page;
   - driver calls are batched: cuMemSetAccess once per run of contiguous pages mapped together;
   - a request whose best fit would need pages backed takes another stream's free block on mapped
     pages first: of a gone stream's (no wait), and where the page-in would move idle pages, of
     any stream's (behind an event wait), merging their lists into its own if it must, as a pool
     of chunks does before it grows (rmm__pool_relax).
   The counters say how many driver calls the pool made (rmm_resource_dump_json shows them). */
#ifndef RMM__VM_SLACK
#define RMM__VM_SLACK 100
#endif
#define RMM__VM_WINDOW 4096
RMM__PRIVATE void rmm__vm_idle_push(rmm__pool_vm *vm, size_t i) {
    vm->idle_prev[i] = SIZE_MAX;
    vm->idle_next[i] = vm->idle_head;
    if (vm->idle_head != SIZE_MAX) vm->idle_prev[vm->idle_head] = i;
    else vm->idle_tail = i;
    vm->idle_head = i;
    vm->idle_count++;
    vm->idle_since[i] = vm->sync_epoch;
}
RMM__PRIVATE void rmm__vm_idle_remove(rmm__pool_vm *vm, size_t i) {
    if (vm->idle_prev[i] != SIZE_MAX) vm->idle_next[vm->idle_prev[i]] = vm->idle_next[i];
    else vm->idle_head = vm->idle_next[i];
    if (vm->idle_next[i] != SIZE_MAX) vm->idle_prev[vm->idle_next[i]] = vm->idle_prev[i];
    else vm->idle_tail = vm->idle_prev[i];
    vm->idle_count--;
}
RMM__PRIVATE size_t rmm__vm_held_pages(const rmm__pool_vm *vm) { return vm->mapped_pages + vm->spare_count; }
RMM__PRIVATE void rmm__vm_note_peak(rmm__pool_vm *vm) {
    if (rmm__vm_held_pages(vm) > vm->peak_held_pages) vm->peak_held_pages = rmm__vm_held_pages(vm);
}
/* Physical memory of `len` pages that came off the range (or was never mapped): an extent of at
   most RMM__VM_SPARE_PAGES joins the spares, a longer one is released (it fits only a run as long,
   and would hold that much memory back). With two-page extents (the default), keeping them as
   spares too (since 2026-11-28) cut the driver's creates and releases on the host replays:
   gpt2_train 1962 and 23 where 4984 and 3048, bert_encode 229 and 11 where 970 and 747,
   resnet50_train 1460 and 4 where 1502 and 45, at the same efficiency (1.024 on gpt2_train, 1.025
   before). */
#ifndef RMM__VM_SPARE_PAGES
#define RMM__VM_SPARE_PAGES 2
#endif
RMM__STATIC_ASSERT(RMM__VM_SPARE_PAGES >= 1 && RMM__VM_SPARE_PAGES <= 255, vm_spare_pages_fit_spare_len);
RMM__PRIVATE void rmm__vm_shelve(rmm__pool *p, uint64_t handle, size_t len) {
    rmm__pool_vm *vm = &p->vm;
    if (len <= RMM__VM_SPARE_PAGES) {
        vm->spare[vm->spare_n] = handle;
        vm->spare_len[vm->spare_n++] = (uint8_t)len;
        vm->spare_count += len;
    } else {
        rmm__vm_release(handle, len * vm->page);
        vm->releases++;
    }
}
/* The records of the extent at page e after it was unmapped: its pages leave the idle list and the
   mapped set, and its memory is shelved. *follow (may be NULL): an idle page the caller walks to
   next, moved on if it was one of them. */
RMM__PRIVATE void rmm__vm_forget(rmm__pool *p, size_t e, size_t *follow) {
    rmm__pool_vm *vm = &p->vm;
    size_t len = vm->ext_len[e], k;
    if (vm->mapped[e] == 2) vm->noaccess_extents--;
    for (k = e; k < e + len; k++) {
        if (follow && k == *follow) *follow = vm->idle_prev[k];
        rmm__vm_idle_remove(vm, k);
        vm->mapped[k] = 0;
    }
    vm->mapped_pages -= len;
    vm->ext_len[e] = 0;
    rmm__vm_shelve(p, vm->handle[e], len);
}
/* The pages rmm__vm_unmap_idle could move keeping [keep_first, keep_last], those of idle extents no
   block uses: *to_spares in extents that would join the spares, *to_release in longer ones.
   O(idle pages). */
RMM__PRIVATE void rmm__vm_movable(rmm__pool *p, size_t keep_first, size_t keep_last, size_t *to_spares, size_t *to_release) {
    rmm__pool_vm *vm = &p->vm;
    size_t j;
    *to_spares = *to_release = 0;
    for (j = vm->idle_tail; j != SIZE_MAX; j = vm->idle_prev[j]) {
        size_t e = vm->ext_first[j], len = vm->ext_len[e];
        if (vm->ext_used[e] == 0 && (keep_first > keep_last || e + len - 1 < keep_first || e > keep_last)) {
            if (len <= RMM__VM_SPARE_PAGES) ++*to_spares;
            else ++*to_release;
        }
    }
}
/* Unmaps idle extents, longest idle first, until `count` pages have gone (an extent goes whole, and
   only when every page of it is idle and none lies in [keep_first, keep_last]): a one-page extent
   joins the spares, a longer one is released (its physical memory fits only a run as long). The
   device is synchronized once if one of them may still have work pending. */
RMM__PRIVATE rmm_status rmm__vm_unmap_idle(rmm__pool *p, size_t count, size_t keep_first, size_t keep_last) {
    rmm__pool_vm *vm = &p->vm;
    size_t j = vm->idle_tail, moved = 0;
    if (!rmm__pool_may_give_back()) return RMM_SUCCESS; /* (a corruption check runs: nothing moves; the callers see no page gone) */
    while (j != SIZE_MAX && moved < count) {
        size_t prev = vm->idle_prev[j], e = vm->ext_first[j], len = vm->ext_len[e], k;
        if (vm->ext_used[e] == 0 && (keep_first > keep_last || e + len - 1 < keep_first || e > keep_last)) { /* ([1, 0]: keep none) */
            for (k = e; k < e + len; k++)
                if (vm->idle_since[k] >= vm->sync_epoch) { /* freed since the last synchronize */
                    RMM_TRY(rmm__device_synchronize());
                    vm->syncs++;
                    vm->sync_epoch++;
                    break;
                }
            RMM_TRY(rmm__vm_unmap(vm->base + e * vm->page, len * vm->page));
            vm->unmaps++;
            rmm__vm_forget(p, e, &prev); /* (the next page to look at may go too) */
            moved += len;
        }
        j = prev;
    }
    return RMM_SUCCESS;
}
/* Unmaps the extents mapped at [from, to) by a page-in that failed (their access not yet set):
   they join the spares (or are released: rmm__vm_shelve). An extent whose cuMemUnmap fails stays
   recorded as mapped and idle (the driver still maps it: its handle must be neither mapped again
   nor released), once its access is set: a block placed there later makes no driver call. If
   that fails too, its pages are recorded as mapped without access (2 in vm->mapped), and a block
   placed there gets its access set first (rmm__vm_regrant), or the allocation fails: until
   2026-11-29 it was handed out and faulted when written (red team 28). */
RMM__PRIVATE void rmm__vm_undo(rmm__pool *p, size_t from, size_t to) {
    rmm__pool_vm *vm = &p->vm;
    size_t e = from, k;
    while (e < to) {
        size_t len = vm->ext_len[e];
        if (rmm__vm_unmap(vm->base + e * vm->page, len * vm->page) == RMM_SUCCESS) {
            vm->unmaps++;
            rmm__vm_forget(p, e, NULL);
        } else {
            if (rmm__vm_set_access(vm->base + e * vm->page, len * vm->page, p->device) != RMM_SUCCESS) {
                for (k = e; k < e + len; k++) vm->mapped[k] = 2;
                vm->noaccess_extents++;
            }
            vm->access_calls++;
        }
        e += len;
    }
}
/* Sets the access of the extents under [first, last] recorded as mapped without it (rmm__vm_undo);
   fails as cuMemSetAccess, the extent then still without. O(pages). */
RMM__PRIVATE rmm_status rmm__vm_regrant(rmm__pool *p, size_t first, size_t last) {
    rmm__pool_vm *vm = &p->vm;
    size_t i, k;
    for (i = first; i <= last; i++) {
        if (vm->mapped[i] == 2) {
            size_t e = vm->ext_first[i], len = vm->ext_len[e];
            vm->access_calls++;
            RMM_TRY(rmm__vm_set_access(vm->base + e * vm->page, len * vm->page, p->device));
            for (k = e; k < e + len; k++) vm->mapped[k] = 1;
            vm->noaccess_extents--;
        }
    }
    return RMM_SUCCESS;
}
/* Releases spares, newest first, until they hold at most `keep` pages. */
RMM__PRIVATE void rmm__vm_release_spares(rmm__pool *p, size_t keep) {
    rmm__pool_vm *vm = &p->vm;
    while (vm->spare_count > keep) {
        size_t len = vm->spare_len[--vm->spare_n];
        rmm__vm_release(vm->spare[vm->spare_n], len * vm->page);
        vm->spare_count -= len;
        vm->releases++;
    }
}
/* A spare for the unmapped pages from page i to at most page last, as *h and *len pages: the newest
   one no longer than the unmapped run there (up to vm->extent). If every spare is longer (a
   one-page hole, two-page spares), the newest goes back to the device and one page is made
   instead: the pages it held beyond that one are added to *fresh (the caller's allowance of new
   pages, which the spare's pages were counted in place of). Caller made sure a spare exists.
   Fails as cuMemCreate. O(spares). */
RMM__PRIVATE rmm_status rmm__vm_spare_for(rmm__pool *p, size_t i, size_t last, uint64_t *h, size_t *len, size_t *fresh) {
    rmm__pool_vm *vm = &p->vm;
    size_t room = 0, j = vm->spare_n, k, held;
    for (k = i; k <= last && !vm->mapped[k] && room < vm->extent; k++) room++;
    while (j-- > 0) {
        if (vm->spare_len[j] <= room) {
            *h = vm->spare[j];
            *len = vm->spare_len[j];
            vm->spare_count -= *len;
            vm->spare_n--;
            vm->spare[j] = vm->spare[vm->spare_n];
            vm->spare_len[j] = vm->spare_len[vm->spare_n];
            return RMM_SUCCESS;
        }
    }
    held = vm->spare_count;
    rmm__vm_release_spares(p, vm->spare_count - 1); /* (the newest) */
    *fresh += held - vm->spare_count - 1;
    RMM_TRY(rmm__vm_create(h, vm->page, p->device));
    vm->creates++;
    *len = 1;
    return RMM_SUCCESS;
}
/* Backs the unmapped pages among [first, last] (a block about to be handed out). New physical
   memory comes as one extent per run of unmapped pages, of up to vm->extent pages: one
   cuMemCreate, one cuMemMap and one mapping for cuMemSetAccess. The driver's cost is per mapping,
   not per byte (an H200: creating a page 18 us and setting its access 31 us, so a 2 MiB page costs
   about 50 us; one extent of 64 pages 15 us to create and 46 us to set). But an extent can only be
   unmapped whole, so its idle pages cannot move while one of its pages is in use, and the pool
   holds more: on the replay traces (bench/replay, pool-virtual) extents of up to 64 pages make 6-30x
   fewer mappings and hold 1.014-1.37x the peak live bytes, against 1.007-1.026x with pages. Two
   pages (RMM__VM_EXTENT, since 2026-11-28) hold what pages hold (1.012 / 1.025 / 1.024 / 1.010
   on resnet50_train, gpt2_train, bert_encode, gpt2_generate, against 1.012 / 1.026 / 1.024 /
   1.007) at 1.0-1.9x their speed (an H200: 8.7 / 23.1 / 4.4 / 0.11 us per event against 13.8 /
   28.7 / 4.5 / 0.20); four pages went past 1.03 on gpt2_train (1.037), three on gpt2_generate
   (1.055). So the default is two pages; rmm_pool_desc.virtual_extent_bytes trades memory for
   fewer driver calls (2 MiB: a page each). Spare pages fill what the slack does not allow anew, a
   page each. */
#ifndef RMM__VM_EXTENT
#define RMM__VM_EXTENT 2
#endif
/* Releases spares, newest first, until the pool holds at most `target` pages or has none left. */
RMM__PRIVATE void rmm__vm_release_down_to(rmm__pool *p, size_t target) {
    rmm__pool_vm *vm = &p->vm;
    size_t excess = rmm__vm_held_pages(vm) > target ? rmm__vm_held_pages(vm) - target : 0;
    if (excess) rmm__vm_release_spares(p, vm->spare_count > excess ? vm->spare_count - excess : 0);
}
/* After a page-in that failed: gives back the physical memory it made (spares, newest first, then
   idle extents, longest idle first), so that the pool holds no more pages than `held_before`
   (rmm_pool_create: a failed allocation leaves the pool's holdings as they were; memory kept would
   starve other allocators until a trim). Best effort: a failing driver call stops it (the caller
   keeps the page-in's error). */
RMM__PRIVATE void rmm__vm_give_back_to(rmm__pool *p, size_t held_before) {
    rmm__vm_release_down_to(p, held_before);
    if (rmm__vm_held_pages(&p->vm) > held_before && rmm__vm_unmap_idle(p, rmm__vm_held_pages(&p->vm) - held_before, 1, 0) == RMM_SUCCESS)
        rmm__vm_release_down_to(p, held_before);
}
RMM__PRIVATE size_t rmm__vm_fresh(const rmm__pool_vm *vm, size_t missing, size_t limit) {
    size_t held = rmm__vm_held_pages(vm), want = missing > vm->spare_count ? missing - vm->spare_count : 0;
    size_t room = limit > held ? limit - held : 0;
    return want < room ? want : room;
}
/* Whether backing the pages under [at, at + need) (at NULL: need bytes anywhere unmapped) would
   take more than the spare pages and the new ones the slack allows: idle pages moved (a device
   synchronize), or a refusal at the maximum (see rmm__vm_page_in). O(pages). */
RMM__PRIVATE bool rmm__vm_would_move(const rmm__pool *p, const char *at, size_t need) {
    const rmm__pool_vm *vm = &p->vm;
    size_t missing = 0, used_after = vm->used_pages, peak, limit, max_pages, i;
    if (at) {
        size_t first = (size_t)(at - vm->base) / vm->page, last = (size_t)(at + need - 1 - vm->base) / vm->page;
        for (i = first; i <= last; i++) {
            missing += !vm->mapped[i];
            used_after += vm->users[i] == 0;
        }
    } else {
        missing = (need + vm->page - 1) / vm->page;
        used_after += missing;
    }
    peak = rmm__max(vm->peak_used_pages, used_after);
    limit = peak + peak / RMM__VM_SLACK;
    max_pages = p->desc.maximum_bytes ? p->desc.maximum_bytes / vm->page : SIZE_MAX;
    if (limit > max_pages) limit = max_pages;
    return vm->spare_count + rmm__vm_fresh(vm, missing, limit) < missing;
}
RMM__PRIVATE rmm_status rmm__vm_page_in(rmm__pool *p, size_t first, size_t last) {
    rmm__pool_vm *vm = &p->vm;
    size_t i, missing = 0, fresh, used_after = vm->used_pages, peak, limit, max_pages, held_before = rmm__vm_held_pages(vm);
    rmm_status st = RMM_SUCCESS;
    rmm__kept_error kept;
    vm->at_maximum = false;
    for (i = first; i <= last; i++) {
        missing += !vm->mapped[i];
        used_after += vm->users[i] == 0;
    }
    peak = rmm__max(vm->peak_used_pages, used_after);
    limit = peak + peak / RMM__VM_SLACK;
    max_pages = p->desc.maximum_bytes ? p->desc.maximum_bytes / vm->page : SIZE_MAX;
    if (limit > max_pages) limit = max_pages;
    /* within the slack: new physical pages; beyond it, idle ones moved here */
    if (used_after > rmm__max(max_pages, held_before)) { /* never fits: refused before any page moves (a red team's find:
                                                              idle extents went first; held pages serve past a lowered maximum) */
        vm->at_maximum = true;
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: out of memory: %zu pages would be in use, past the maximum of %zu (%zu bytes)",
                         used_after, max_pages, p->desc.maximum_bytes);
    }
    fresh = rmm__vm_fresh(vm, missing, limit);
    if (vm->spare_count + fresh < missing) {
        size_t want = missing - vm->spare_count - fresh, to_spares, to_release, spares_best, held_best, room_best;
        size_t batch = rmm__max(want, peak / (4 * RMM__VM_SLACK)); /* refill a few spares with the same synchronize */
        /* with every idle extent no block uses moved (each move helps: a spare more, or a page
           less held), would the request fit? If not, nothing moves (idle extents were released
           first, for a request the maximum then refused, until 2026-11-29: a red team's find) */
        rmm__vm_movable(p, first, last, &to_spares, &to_release);
        spares_best = vm->spare_count + to_spares;
        held_best = held_before - to_release;
        room_best = limit > held_best ? limit - held_best : 0;
        if (spares_best + rmm__min(missing > spares_best ? missing - spares_best : 0, room_best) < missing &&
            missing - spares_best > (max_pages > held_best ? max_pages - held_best : 0)) {
            vm->at_maximum = true;
            return rmm__fail(RMM_ERROR_OUT_OF_MEMORY,
                             "pool: out of memory: %zu pages to map; %zu bytes of pages held of the maximum %zu, %zu pages of them spare and %zu idle "
                             "in extents no block uses (the only idle ones that can move)",
                             missing, held_before * vm->page, p->desc.maximum_bytes, vm->spare_count, to_spares + to_release);
        }
        RMM_TRY(rmm__vm_unmap_idle(p, batch, first, last));
        fresh = rmm__vm_fresh(vm, missing, limit); /* (released extents made room) */
        if (vm->spare_count + fresh < missing) { /* nothing idle to move: past the slack, up to the maximum */
            size_t short_by = missing - vm->spare_count - fresh;
            if (rmm__vm_held_pages(vm) + fresh + short_by > max_pages && to_spares + to_release > batch) {
                /* the maximum binds: every idle extent no block uses moves, then the room is asked
                   again (only then: for 819dcd4, 2026-11-29, they all moved whenever the request
                   went past the slack, maximum or none, and the replay of bert_encode with 128 MiB
                   extents held 1.266x its peak live where it had held 1.216x) */
                RMM_TRY(rmm__vm_unmap_idle(p, to_spares + to_release, first, last));
                fresh = rmm__vm_fresh(vm, missing, limit);
                short_by = vm->spare_count + fresh < missing ? missing - vm->spare_count - fresh : 0;
            }
            if (rmm__vm_held_pages(vm) + fresh + short_by > max_pages) {
                vm->at_maximum = true;
                return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: out of memory: %zu bytes of pages held of the maximum %zu, none idle",
                                 rmm__vm_held_pages(vm) * vm->page, p->desc.maximum_bytes);
            }
            fresh += short_by;
        }
    }
    for (i = first; i <= last;) {
        size_t run = i, k;
        if (vm->mapped[i]) {
            i++;
            continue;
        }
        while (i <= last && !vm->mapped[i]) {
            size_t len = 1, avail = 0;
            uint64_t h = 0;
            for (k = i; k <= last && !vm->mapped[k] && avail < vm->extent; k++) avail++;
            if (fresh > 0) { /* new memory: one extent for as much of the run as the slack allows */
                bool made, refused;
                len = fresh < avail ? fresh : avail;
                rmm__error_keep(&kept); /* (beside a create, the copy costs nothing) */
                made = (st = rmm__vm_create(&h, len * vm->page, p->device)) == RMM_SUCCESS;
                refused = !made;
                if (!made && vm->spare_count == 0) { /* the device is full: move idle pages after all */
                    size_t left = 0, before = rmm__vm_held_pages(vm);
                    rmm_status moved;
                    for (k = i; k <= last; k++) left += !vm->mapped[k];
                    if ((moved = rmm__vm_unmap_idle(p, left, first, last)) != RMM_SUCCESS) {
                        st = moved;
                        break;
                    }
                    if (vm->spare_count == 0) {
                        if (rmm__vm_held_pages(vm) == before) break; /* nothing moved: the create's error stands */
                        len = 1; /* released extents made room on the device */
                        if ((st = rmm__vm_create(&h, vm->page, p->device)) != RMM_SUCCESS) break;
                        made = true;
                    }
                }
                if (made) {
                    vm->creates++;
                    fresh -= len;
                } else if ((st = rmm__vm_spare_for(p, i, last, &h, &len, &fresh)) != RMM_SUCCESS) { /* a spare instead */
                    break;
                }
                if (refused) rmm__error_back(&kept); /* the device was full, and moved or spare pages served: the create's failure does not stay (a red team's find, 2026-11-30) */
            } else if (vm->spare_count) {
                if ((st = rmm__vm_spare_for(p, i, last, &h, &len, &fresh)) != RMM_SUCCESS) break;
            } else { /* (the counts above leave none short) */
                st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: out of memory: no physical page to map");
                break;
            }
            st = rmm__vm_map(vm->base + i * vm->page, len * vm->page, h, 0);
            if (st != RMM_SUCCESS) {
                rmm__vm_shelve(p, h, len);
                break;
            }
            vm->maps++;
            if (i + len > vm->map_top) vm->map_top = i + len;
            vm->handle[i] = h;
            vm->ext_len[i] = (uint32_t)len;
            vm->ext_used[i] = 0;
            for (k = i; k < i + len; k++) {
                vm->ext_first[k] = i;
                vm->mapped[k] = 1;
                rmm__vm_idle_push(vm, k);
            }
            vm->mapped_pages += len;
            i += len;
        }
        if (st == RMM_SUCCESS && i > run) {
            st = rmm__vm_set_access(vm->base + run * vm->page, (i - run) * vm->page, p->device);
            vm->access_calls++;
        }
        rmm__vm_note_peak(vm);
        if (st != RMM_SUCCESS) { /* take back what this run mapped, and the memory made for the block */
            char text[sizeof rmm__last_error_text];
            int cuda_error = rmm_last_cuda_error();
            rmm__copy_text(text, sizeof text, rmm_last_error());
            rmm__vm_undo(p, run, i);
            rmm__vm_give_back_to(p, held_before);
            return rmm__fail_cuda(cuda_error, st, "%s", text); /* (the page-in's error, not a failed unmap's of the undo or the give-back) */
        }
    }
    return RMM_SUCCESS;
}
/* Gives idle pages back down to `keep_idle` (and every spare): one device synchronize at most. */
RMM__PRIVATE rmm_status rmm__vm_shrink(rmm__pool *p, size_t keep_idle, size_t *released) {
    rmm__pool_vm *vm = &p->vm;
    size_t before = rmm__vm_held_pages(vm);
    rmm_status st = RMM_SUCCESS;
    if (vm->idle_count > keep_idle) st = rmm__vm_unmap_idle(p, vm->idle_count - keep_idle, 1, 0);
    rmm__vm_release_spares(p, 0);
    if (released) *released += (before - rmm__vm_held_pages(vm)) * vm->page;
    return st;
}
/* true iff every page under [ptr, ptr + bytes) is mapped. */
RMM__PRIVATE bool rmm__vm_mapped(const rmm__pool_vm *vm, const char *ptr, size_t bytes) {
    size_t first = (size_t)(ptr - vm->base) / vm->page, last = (size_t)(ptr + bytes - 1 - vm->base) / vm->page, i;
    for (i = first; i <= last; i++)
        if (!vm->mapped[i]) return false;
    return true;
}
/* Placement that prefers mapped pages: when the best fit b would need pages backed, a free block of
   the same lists that already lies on mapped pages is taken instead, searched from the request's
   bin upward (b first, then at most RMM__VM_PREFER candidates): no driver call at all (but for an
   extent a failed undo left without access: rmm__vm_regrant), where best
   fit alone would map pages while idle ones sit elsewhere. at NULL: only a block's front counts
   (the block is handed back as it is). Else *at is where in the returned block to place the
   request: its front, or (from 2026-11-28) a page boundary inside it where `need` bytes lie on
   mapped pages, found by a sliding count over the block's pages below vm->map_top (at most
   RMM__VM_SCAN pages looked at in all); the caller takes the request from there (rounded up to its
   alignment, which the window's `need` includes: rmm__block_take_at). Without
   the inside, a block of hundreds of pages placed a few pages away from where the same block lay in
   the last training step (the free space before it having changed) moved most of its pages: on the
   host replay of gpt2_train 4915 mappings and 2976 unmaps, 3248 and 1324 with it, at 1.023 of the
   peak live bytes (1.024 before); bert_encode 1783 and 1565 -> 1728 and 1512 (1.024 -> 1.027),
   gpt2_generate 863 and 712 -> 815 and 671 (1.010 -> 1.015), resnet50_train 1509 and 53 -> 1492
   and 39 (1.012 both). A fully mapped window, or none: the inside with the fewest pages missing
   moved more (gpt2_generate 1.041). O(candidates + pages looked at). */
#define RMM__VM_PREFER 64
#define RMM__VM_SCAN 16384
/* In free block q: where `need` bytes lie on mapped pages (its front first, then each page boundary
   inside it), or NULL; *budget: pages still to look at (decremented). */
RMM__PRIVATE char *rmm__vm_window(const rmm__pool_vm *vm, const rmm__block *q, size_t need, bool inside, size_t *budget) {
    size_t n = (need + vm->page - 1) / vm->page, lo, hi, i, missing = 0;
    if (rmm__vm_mapped(vm, q->ptr, need)) return q->ptr;
    lo = ((size_t)(q->ptr - vm->base) + vm->page - 1) / vm->page; /* the first page boundary in q */
    if (!inside || (size_t)(q->ptr + q->size - vm->base) / vm->page < lo + n) return NULL;
    hi = (size_t)(q->ptr + q->size - vm->base) / vm->page - n; /* the last page a window may start at */
    if (hi + n > vm->map_top) { /* (pages from map_top on were never mapped) */
        if (vm->map_top < lo + n) return NULL;
        hi = vm->map_top - n;
    }
    if (*budget < n + 1) return NULL;
    if (hi - lo + n > *budget) hi = lo + *budget - n; /* (the budget's first pages of q) */
    *budget -= hi - lo + n;
    for (i = lo; i < lo + n; i++) missing += !vm->mapped[i];
    for (i = lo;; i++) {
        if (missing == 0) return vm->base + i * vm->page;
        if (i == hi) return NULL;
        missing += !vm->mapped[i + n];
        missing -= !vm->mapped[i];
    }
}
RMM__PRIVATE rmm__block *rmm__vm_prefer_mapped(rmm__pool *p, rmm__block *b, size_t need, char **at) {
    rmm__tlsf *t = b->owner;
    unsigned fl, sl, f, seen = 0;
    size_t budget = RMM__VM_SCAN;
    char *w;
    bool inside = at != NULL && need >= p->vm.page; /* (a smaller request shares pages: inside placement moved more, host replays) */
    if (at) *at = b->ptr;
    if ((w = rmm__vm_window(&p->vm, b, need, inside, &budget)) != NULL) {
        if (at) *at = w;
        return b;
    }
    rmm__tlsf_mapping(need >> 8, &fl, &sl);
    for (f = fl; f < RMM__TLSF_FL && seen < RMM__VM_PREFER; f++) {
        uint32_t bits = t->sl_map[f] & (f == fl ? (~0u << sl) : ~0u);
        while (bits && seen < RMM__VM_PREFER) {
            unsigned s = (unsigned)__builtin_ctz(bits);
            rmm__block *q;
            bits &= bits - 1;
            for (q = t->heads[f][s]; q && seen < RMM__VM_PREFER; q = q->free_next, seen++)
                if (q != b && q->size >= need && (w = rmm__vm_window(&p->vm, q, need, inside, &budget)) != NULL) {
                    if (at) *at = w;
                    return q;
                }
        }
    }
    return b;
}
/* A block is being handed out: back its pages and count it on each. O(pages). */
RMM__PRIVATE rmm_status rmm__vm_commit(rmm__pool *p, const rmm__block *b) {
    rmm__pool_vm *vm = &p->vm;
    size_t first = (size_t)(b->ptr - vm->base) / vm->page, last = (size_t)(b->ptr + b->size - 1 - vm->base) / vm->page, i;
    if (RMM__UNLIKELY(vm->noaccess_extents != 0)) RMM_TRY(rmm__vm_regrant(p, first, last)); /* (before any page comes in) */
    if (RMM__UNLIKELY(!vm->mapped[first] || !vm->mapped[last])) RMM_TRY(rmm__vm_page_in(p, first, last));
    for (i = first + 1; i < last; i++)
        if (RMM__UNLIKELY(!vm->mapped[i])) {
            RMM_TRY(rmm__vm_page_in(p, first, last));
            break;
        }
    for (i = first; i <= last; i++) {
        if (vm->users[i]++ == 0) {
            rmm__vm_idle_remove(vm, i);
            vm->ext_used[vm->ext_first[i]]++;
            if (++vm->used_pages > vm->peak_used_pages) vm->peak_used_pages = vm->used_pages;
        }
    }
    /* hysteresis: the pages in use are watched over windows of RMM__VM_WINDOW allocations; when what
       the pool holds passes the most used in the last two windows by 1/8, idle pages go back down to
       1/32 above it (a workload that swings within a window keeps its pages) */
    if (RMM__UNLIKELY(++vm->window_ops >= RMM__VM_WINDOW)) {
        vm->recent_peak = rmm__max(vm->window_peak, vm->previous_window_peak);
        vm->previous_window_peak = vm->window_peak;
        vm->window_peak = vm->used_pages;
        vm->window_ops = 0;
        if (rmm__vm_held_pages(vm) > vm->recent_peak + vm->recent_peak / 8 + 8) {
            size_t keep = vm->recent_peak + vm->recent_peak / 32, held = rmm__vm_held_pages(vm), excess = held > keep ? held - keep : 0;
            rmm__kept_error kept;
            rmm__error_keep(&kept);
            if (rmm__vm_shrink(p, vm->idle_count > excess ? vm->idle_count - excess : 0, NULL) != RMM_SUCCESS) { /* (best effort: the pages stay mapped, tried again next window) */
                RMM__LOG(RMM_LOG_LEVEL_WARN, "pool %p: idle pages could not be unmapped (%s): the pool keeps them", (void *)p, rmm_last_error());
                rmm__error_back(&kept);
            }
        }
    }
    if (vm->used_pages > vm->window_peak) vm->window_peak = vm->used_pages;
    return RMM_SUCCESS;
}
/* A block is freed: pages it alone used become idle (still mapped). O(pages). */
RMM__PRIVATE void rmm__vm_uncommit(rmm__pool *p, const rmm__block *b) {
    rmm__pool_vm *vm = &p->vm;
    size_t first = (size_t)(b->ptr - vm->base) / vm->page, last = (size_t)(b->ptr + b->size - 1 - vm->base) / vm->page, i;
    for (i = first; i <= last; i++) {
        if (--vm->users[i] == 0) {
            rmm__vm_idle_push(vm, i);
            vm->ext_used[vm->ext_first[i]]--;
            vm->used_pages--;
        }
    }
}
RMM__PRIVATE rmm_status rmm__vm_grow(rmm__pool *p, rmm__pstream *s, const rmm__pool_req *req) {
    (void)s;
    return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: out of memory allocating %zu bytes: no free range of the reserved %zu bytes of address space fits",
                     req->need, p->vm.reserved);
}
/* Unmaps and frees every idle page and every spare, after synchronizing the device once. */
RMM__PRIVATE rmm_status rmm__vm_trim(rmm__pool *p, size_t *released) {
    rmm_status st = rmm__vm_shrink(p, 0, released);
    if (*released) RMM__LOG(RMM_LOG_LEVEL_INFO, "pool %p: gave back %zu bytes of idle pages, %zu bytes held", (void *)p, *released, rmm__vm_held_pages(&p->vm) * p->vm.page);
    return st;
}
RMM__PRIVATE rmm_status rmm__vm_validate(rmm__pool *p) {
    rmm__pool_vm *vm = &p->vm;
    uint32_t *count = (uint32_t *)rmm__calloc(vm->pages, sizeof(uint32_t));
    size_t i, mapped = 0, idle = 0, used = 0, noaccess = 0;
    rmm__block *b;
    rmm_status st = RMM_SUCCESS;
    if (!count) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: validate is out of host memory");
    for (b = p->chunks->first; b; b = b->phys_next) {
        size_t first, last;
        if (b->owner || b->parked) continue; /* free, or parked (uncommitted when freed) */
        first = (size_t)(b->ptr - vm->base) / vm->page;
        last = (size_t)(b->ptr + b->size - 1 - vm->base) / vm->page;
        for (i = first; i <= last; i++) count[i]++;
    }
    for (i = 0; i < vm->pages && st == RMM_SUCCESS; i++) {
        if (count[i] != vm->users[i]) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: page %zu counts %u users but %u used blocks overlap it", i, vm->users[i], count[i]);
        else if (vm->users[i] && !vm->mapped[i]) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: page %zu holds a used block but is not mapped", i);
        else if (vm->users[i] && vm->mapped[i] == 2) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: page %zu holds a used block but has no access", i);
        else if (vm->mapped[i] > 2) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: page %zu has mapping state %u", i, (unsigned)vm->mapped[i]);
        mapped += vm->mapped[i] != 0;
        idle += vm->mapped[i] && !vm->users[i];
        used += vm->users[i] != 0;
        noaccess += vm->mapped[i] == 2 && vm->ext_first[i] == i;
    }
    RMM_SYS_FREE(count);
    if (st == RMM_SUCCESS && mapped != vm->mapped_pages) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: %zu pages mapped but %zu recorded", mapped, vm->mapped_pages);
    if (st == RMM_SUCCESS && idle != vm->idle_count) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: %zu idle pages but %zu listed", idle, vm->idle_count);
    if (st == RMM_SUCCESS && used != vm->used_pages) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: %zu pages in use but %zu recorded", used, vm->used_pages);
    if (st == RMM_SUCCESS && noaccess != vm->noaccess_extents)
        st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: %zu extents mapped without access but %zu recorded", noaccess, vm->noaccess_extents);
    if (st == RMM_SUCCESS && rmm__vm_held_pages(vm) > vm->peak_held_pages) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: more pages held than the recorded peak");
    for (i = 0; i < vm->pages && st == RMM_SUCCESS; i++) { /* extents: whole, mapped, their users counted */
        size_t e = vm->ext_first[i], k, used_here = 0;
        if (!vm->mapped[i]) continue;
        if (e > i || vm->ext_len[e] == 0 || i >= e + vm->ext_len[e]) {
            st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: mapped page %zu lies outside its extent", i);
            break;
        }
        if (e != i) continue;
        for (k = e; k < e + vm->ext_len[e]; k++) {
            if (k >= vm->pages || vm->mapped[k] != vm->mapped[e] || vm->ext_first[k] != e) {
                st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: extent at page %zu is not mapped whole (or with access in part)", e);
                break;
            }
            used_here += vm->users[k] != 0;
        }
        if (st == RMM_SUCCESS && used_here != vm->ext_used[e])
            st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: extent at page %zu counts %u pages in use but %zu are", e, vm->ext_used[e], used_here);
    }
    { /* the idle list: every page on it idle, linked both ways, as long as idle_count (checked one
         way until a white-box test of session 39: an emptied list passed, and a cycle hung) */
        size_t listed = 0, before = SIZE_MAX;
        for (i = vm->idle_head; st == RMM_SUCCESS && i != SIZE_MAX; i = vm->idle_next[i]) {
            if (i >= vm->pages || listed >= vm->idle_count) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: the idle list is longer than the %zu idle pages, or leaves the range", vm->idle_count);
            else if (!vm->mapped[i] || vm->users[i]) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: page %zu is listed idle but is not", i);
            else if (vm->idle_prev[i] != before) st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: idle page %zu has a broken back link", i);
            if (st != RMM_SUCCESS) break; /* (before the increment reads idle_next[i]: i may lie outside the range) */
            listed++;
            before = i;
        }
        if (st == RMM_SUCCESS && (listed != vm->idle_count || vm->idle_tail != before))
            st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: %zu pages listed idle of %zu idle (or the list's tail is wrong)", listed, vm->idle_count);
    }
    return st;
}
RMM__PRIVATE void rmm__vm_held(const rmm__pool *p, size_t *bytes, size_t *peak) {
    *bytes = rmm__vm_held_pages(&p->vm) * p->vm.page;
    *peak = p->vm.peak_held_pages * p->vm.page;
}
RMM__PRIVATE void rmm__vm_destroy(rmm__pool *p, bool exiting) {
    rmm__pool_vm *vm = &p->vm;
    while (p->chunks) { /* the range's one record */
        rmm__chunk *c = p->chunks;
        p->chunks = c->next;
        RMM_SYS_FREE(c);
    }
    if (vm->base && !exiting) {
        size_t i;
        (void)rmm__device_synchronize();
        for (i = 0; i < vm->pages; i++) {
            if (!vm->mapped[i] || vm->ext_first[i] != i) continue;
            (void)rmm__vm_unmap(vm->base + i * vm->page, vm->ext_len[i] * vm->page);
            rmm__vm_release(vm->handle[i], vm->ext_len[i] * vm->page);
        }
        rmm__vm_release_spares(p, 0);
        rmm__vm_free(vm->base, vm->reserved);
    }
    RMM_SYS_FREE(vm->users);
    RMM_SYS_FREE(vm->handle);
    RMM_SYS_FREE(vm->ext_first);
    RMM_SYS_FREE(vm->ext_len);
    RMM_SYS_FREE(vm->ext_used);
    RMM_SYS_FREE(vm->mapped);
    RMM_SYS_FREE(vm->idle_prev);
    RMM_SYS_FREE(vm->idle_next);
    RMM_SYS_FREE(vm->idle_since);
    RMM_SYS_FREE(vm->spare);
    RMM_SYS_FREE(vm->spare_len);
}
static const rmm__backing rmm__vm_backing = {rmm__vm_grow, rmm__vm_commit, rmm__vm_uncommit, rmm__vm_trim, rmm__vm_validate, rmm__vm_held, rmm__vm_destroy};
/* Reserves the range (virtual_bytes; 0: twice the device's memory) and makes it the pool's one
   chunk, filed under the legacy stream. */
RMM__PRIVATE rmm_status rmm__vm_setup(rmm__pool *p, size_t virtual_bytes) {
    rmm__pool_vm *vm = &p->vm;
    rmm__sstate *s;
    size_t f = 0, t = 0;
    RMM_TRY(rmm__vm_granularity(p->device, &vm->page));
    if (p->desc.maximum_bytes && p->desc.maximum_bytes < vm->page)
        return RMM__INVALID("rmm_pool_create: maximum_bytes %zu is less than one page (%zu bytes): a virtual pool could not allocate", p->desc.maximum_bytes, vm->page);
    if (virtual_bytes == 0) {
        RMM_TRY(rmm__mem_info(&f, &t));
        /* (saturated at the largest whole number of pages: a total above SIZE_MAX / 2 wrapped, and the
           pool reserved far less than twice it, or failed naming a virtual_bytes never passed; red
           team 47, the host backend's capacity) */
        virtual_bytes = t > (SIZE_MAX - vm->page) / 2 ? (SIZE_MAX - vm->page) / vm->page * vm->page : t * 2;
    }
    if (!rmm__round_up(virtual_bytes, vm->page, &vm->reserved)) return RMM__INVALID("rmm_pool_create: virtual_bytes %zu is too large", virtual_bytes);
    vm->extent = p->desc.virtual_extent_bytes ? (p->desc.virtual_extent_bytes + vm->page - 1) / vm->page : RMM__VM_EXTENT;
    vm->pages = vm->reserved / vm->page;
    vm->users = (uint32_t *)rmm__calloc(vm->pages, sizeof *vm->users);
    vm->handle = (uint64_t *)rmm__calloc(vm->pages, sizeof *vm->handle);
    vm->ext_first = (size_t *)rmm__calloc(vm->pages, sizeof *vm->ext_first);
    vm->ext_len = (uint32_t *)rmm__calloc(vm->pages, sizeof *vm->ext_len);
    vm->ext_used = (uint32_t *)rmm__calloc(vm->pages, sizeof *vm->ext_used);
    vm->mapped = (uint8_t *)rmm__calloc(vm->pages, 1);
    vm->idle_prev = (size_t *)rmm__calloc(vm->pages, sizeof(size_t));
    vm->idle_next = (size_t *)rmm__calloc(vm->pages, sizeof(size_t));
    vm->idle_since = (uint64_t *)rmm__calloc(vm->pages, sizeof(uint64_t));
    vm->spare = (uint64_t *)rmm__calloc(vm->pages, sizeof(uint64_t));
    vm->spare_len = (uint8_t *)rmm__calloc(vm->pages, 1);
    vm->idle_head = vm->idle_tail = SIZE_MAX;
    if (!vm->users || !vm->handle || !vm->ext_first || !vm->ext_len || !vm->ext_used || !vm->mapped || !vm->idle_prev || !vm->idle_next || !vm->idle_since || !vm->spare ||
        !vm->spare_len)
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_pool_create: out of host memory for %zu page records", vm->pages);
    RMM_TRY(rmm__vm_reserve(&vm->base, vm->reserved, vm->page));
    RMM_TRY(rmm__so_state(&p->so, RMM__LEGACY_HANDLE, 0, &s));
    return rmm__pool_add_chunk(p, (rmm__pstream *)s, vm->base, vm->reserved, false, false); /* NVTX heaps must come from cudaMalloc */
}

/* ---- allocate and free ---- */
/* An allocation found no room and could not grow: says why (rmm__oom_explain). at_maximum: a virtual
   pool's page-in for it failed at the maximum (vm.at_maximum as the allocation's lock saw it). */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__pool_oom(rmm__pool *p, size_t bytes, size_t alignment, rmm_stream stream, bool at_maximum) {
    char cause[RMM__CAUSE_MAX];
    rmm__oom_facts f;
    size_t i, peak = 0, range_largest = 0;
    memset(&f, 0, sizeof f);
    f.cause_cuda = rmm_last_cuda_error();
    rmm__copy_cause(cause, rmm_last_error());
#if RMM__MARGIN_ON
    if (RMM__ATOMIC_LOAD(&rmm__margin_checks_running) != 0 && p->desc.growth != RMM_POOL_GROWTH_GEOMETRIC) {
        char with[RMM__CAUSE_MAX + 96];
        snprintf(with, sizeof with, "%s (a corruption check was running: the pool gave no memory back meanwhile)", cause);
        rmm__copy_cause(cause, with);
    }
#endif
    f.who = "pool";
    f.bytes = bytes;
    f.alignment = alignment;
    f.stream = stream;
    f.maximum = RMM__ATOMIC_LOAD_RELAXED(&p->desc.maximum_bytes); /* (before the lock: rmm_pool_set_maximum may write it) */
    if (rmm__spin_lock(&p->so.lock)) {
        rmm__pool_settle_all(p);
        p->backing->held(p, &f.held, &peak);
        f.live = p->used_bytes;
        for (i = 0; i < p->so.count; i++) {
            rmm__pstream *ps = RMM__PSTREAM(p, i);
            size_t free_bytes = ps->free.free_bytes + ps->large.free_bytes, largest = rmm__max(rmm__tlsf_largest(&ps->free), rmm__tlsf_largest(&ps->large));
            if (p->backing == &rmm__vm_backing) { /* a virtual pool's free blocks are address space, not memory */
                range_largest = rmm__max(range_largest, largest);
                continue;
            }
            f.free_total += free_bytes;
            if (ps->ss.handle != stream) f.free_other += free_bytes;
            f.largest_free = rmm__max(f.largest_free, largest);
        }
        /* a virtual pool whose reserved range has no free run for the request (with the room to reach
           its alignment): the range, not memory, ran out (a red team's find: it said "refused upstream") */
        if (p->backing == &rmm__vm_backing && (bytes > SIZE_MAX - alignment || range_largest < bytes + (alignment > RMM_ALIGNMENT ? alignment - RMM_ALIGNMENT : 0)))
            f.verdict = "address range full: no free run of the reserved virtual_bytes fits the request";
        else if (p->backing == &rmm__vm_backing) /* (no upstream: the maximum, in whole pages, or the driver; a red team's find) */
            f.verdict = at_maximum ? "at the maximum: the pages the request needs (whole pages) would pass it"
                                         : "driver refused: physical memory could not be made or mapped";
        rmm__spin_unlock(&p->so.lock);
    }
    return rmm__oom_explain(&p->base, &f, cause);
}
RMM__PRIVATE rmm_status rmm__pool_validate_locked(rmm__pool *p);
#if RMM__DEBUG
/* (CORRUPTION only: the check's own host memory may run out, a count per page with VIRTUAL
   growth, which fails the check but says nothing of the pool: red team 36. The call's own status
   and message stay.) */
#define RMM__POOL_DEBUG_CHECK(p)                                                                    \
    do {                                                                                            \
        rmm__kept_error debug_kept_;                                                                \
        rmm_status debug_st_;                                                                       \
        rmm__error_keep(&debug_kept_);                                                              \
        debug_st_ = rmm__pool_validate_locked(p);                                                   \
        if (debug_st_ == RMM_ERROR_CORRUPTION) fprintf(stderr, "rmm.h: %s\n", rmm_last_error());    \
        RMM_ASSERT(debug_st_ != RMM_ERROR_CORRUPTION);                                              \
        rmm__error_back(&debug_kept_);                                                              \
    } while (0)
#else
#define RMM__POOL_DEBUG_CHECK(p) ((void)0)
#endif

/* Takes the pool's lock for a call; with would_block (a "nowait" call) only if it is free now, and
   only for a pool whose calls cannot wait (not virtual, no debug margins): else *would_block. */
static inline rmm_status rmm__pool_lock(rmm__pool *p, const char *call, bool *would_block) {
    if (RMM__LIKELY(!would_block)) return RMM__LIKELY(rmm__spin_lock(&p->so.lock)) ? RMM_SUCCESS : rmm__reentrant("pool", call);
    if (!RMM__MARGIN_ON && p->backing->commit == NULL && rmm__spin_trylock(&p->so.lock)) return RMM_SUCCESS;
    *would_block = true;
    return RMM_ERROR_NOT_SUPPORTED;
}
/* A free block b of another stream, which s now waits for, serves s's request of `need` bytes, and
   s has lists of its own (it has freed before: a stream that only allocates keeps no tables): a
   refill of RMM__POOL_REFILL bytes, or `need`, or half of what s has taken home so far
   (s->refilled, less what other streams took from s the same way; at most 1/8 of the pool),
   whichever is largest (the whole block if little would be left), moves to s's lists, so that
   s's next requests find memory at home instead of flushing s's parked blocks and asking the
   other stream again each time; the rest stays where it was, for the other streams
   (churn_small on a stream of its own beside the default stream's first chunk, counted by
   valgrind on the host backend: 17.6 -> 13.3 million instructions, the default stream's count; the
   whole block instead made 16 streams pass it between them: threads16 1.7x slower on an H200).
   The half grows the refills of a stream that keeps taking, so that one whose blocks reach 64 MiB
   has room at home beside the default stream's first chunk instead of coalescing its quick lists
   every hundred steps (2026-11-30, session 37: churn_mixed on the host backend with sizes to 64
   MiB, valgrind, 4.00 -> 3.75 million instructions on a created stream and 5.05 -> 4.37 on a
   foreign one, the default stream's 3.43; on an H200, bench/ab.py, pool 0.87x on foreign streams
   and 0.89x on created ones; threads16, whose streams take about 13 MiB each, and stream_churn's
   memory unchanged; those A/Bs were of the count as a running total, before review 37: streams
   that pass memory around then came to take whole blocks, hence the decrease and the cap). Returns the block that serves the request now (b itself if no host memory
   was left for a record). O(1). */
RMM__PRIVATE rmm__block *rmm__pool_refill(rmm__pool *p, rmm__pstream *s, rmm__block *b, size_t need) {
    rmm__tlsf *lists = b->owner;
    rmm__sstate *donor = (rmm__sstate *)lists->state;
    size_t grab = rmm__max(rmm__max(need, RMM__POOL_REFILL), rmm__align_down(rmm__min(s->refilled / 2, p->pool_bytes / 8), RMM_ALIGNMENT));
    rmm__block *moved = b;
    if (b->size > grab + RMM__POOL_REFILL / 2) moved = rmm__block_take(&p->store, lists, b, grab, RMM_ALIGNMENT);
    else rmm__tlsf_remove(lists, b);
    if (!moved) return b; /* (b stays where it was) */
    s->refilled = s->refilled > SIZE_MAX - moved->size ? SIZE_MAX : s->refilled + moved->size;
    if (donor != &s->ss) { /* what the donor took home goes down by what left it (streams that pass memory back and forth keep refills of their share) */
        rmm__pstream *d = (rmm__pstream *)donor;
        d->refilled -= rmm__min(d->refilled, moved->size);
    }
    rmm__pool_filed(s, rmm__pool_next_rec(s)); /* (s waits for the donor: its next record follows the wait) */
    b = rmm__block_file(&p->store, rmm__pool_lists(s, moved->chunk), moved);
    rmm__so_listed(&p->so, &s->ss); /* (s holds free memory now: other streams look there) */
    if (donor != &s->ss) rmm__so_taken(&p->so, &s->ss, donor); /* (drops it if it can go) */
    return b;
}
/* Whether the free of b, parked on the eager stream of s, is known done: the event record that
   covers it (b->cover) is no later than the last one seen complete (s->ss.done). O(1). */
static inline bool rmm__pool_covered(const rmm__pstream *s, const rmm__block *b) {
    /* b->cover holds the low 32 bits of that record's number R. R <= done iff records - R >=
       records - done: `age` is records - R modulo 2^32, exact while R is within 2^31 records of
       now; an age of 2^31 or more (R in the future, or very old) counts as not covered (safe: the
       id is asked, and the stream's own allocation, which knows the stream, takes the block). */
    uint64_t lag = s->ss.records - s->ss.done;
    uint32_t age = (uint32_t)s->ss.records - b->cover;
    return age < 0x80000000u && age >= lag;
}
/* An allocation on a foreign stream with no id asked: the state this thread last found for
   `stream` (its handle, and the id this thread asked last: rmm__foreign_hint_key), without making
   one, and from its quick list of `size` a block whose free is known done (rmm__pool_covered). The
   handle may name another stream by now (a destroyed stream's handle is reused at once); that
   stream may have such a block all the same, as nothing still uses it. So the id, a driver call
   per allocation, is asked only when the top block of the size is not known done (a block freed
   since the stream's last event completed; an event covers up to RMM__POOL_RING frees) and the
   free lists cannot serve either (rmm__pool_take_listed), and (the caller counts) after
   RMM__IDLESS_RUN allocations served without it. NULL: ask the id if *sp was set (the quick list
   has a block of the size, not known done, or would_block and the event would have to be asked),
   else try the lists (no state found, or no block of the size in its quick list). O(1). */
static inline rmm__block *rmm__pool_take_covered(rmm__pool *p, rmm_stream stream, size_t size, size_t alignment, bool *would_block, rmm__pstream **sp) {
    rmm__so *so = &p->so;
    rmm__sstate *ss = rmm__so_find_keyed(so, stream, rmm__foreign_hint_key);
    rmm__pstream *s;
    rmm__block *b;
    size_t k = (size >> 8) - 1;
    if (!ss) return NULL;
    s = (rmm__pstream *)ss;
    if ((b = s->quick[k]) == NULL || ((uintptr_t)b->ptr & (alignment - 1)) != 0) return NULL; /* (rmm__pool_no_quick: all NULL) */
    *sp = s; /* (NULL returned with *sp set: the quick list holds the size, the lists are not tried) */
    if (!rmm__pool_covered(s, b) && (would_block || !rmm__so_refresh_done(&s->ss) || !rmm__pool_covered(s, b))) return NULL;
    s->quick[k] = b->free_next;
    b->free_next = NULL;
    s->quick_bytes -= size;
    s->quick_blocks--;
    so->last = ss;
    return b;
}
/* The second try of an allocation on a foreign stream with no id asked (after
   rmm__pool_take_covered, for a size of the quick lists, or first, for a larger one): a block cut from the free lists of the
   same state, when neither its quick list nor its recent slot has a block of the size, if all its lists hold is known done
   (s->filed_rec seen complete; the event asked unless would_block) and its ring holds no block of the size
   (which the stream takes back from there, once the id is asked); *listsp the lists it came from.
   NULL: ask the id. Not for virtual growth (its pages are mapped in on allocation). Out of line, so
   that the hits before it stay as short as they were. O(1): a search of the lists. (Added on
   2026-11-29: until then sizes above 64 KiB, and sizes whose quick list was empty, asked the id
   every time: churn_mixed on a foreign stream asked it for 5,024 of 5,000 allocations, counted on
   the host backend with sizes to 64 MiB; 1,690 since.) */
RMM__PRIVATE RMM__NOINLINE rmm__block *rmm__pool_take_listed(rmm__pool *p, rmm_stream stream, size_t size, size_t alignment, bool *would_block, rmm__pstream **sp,
                                                             rmm__tlsf **listsp) {
    rmm__so *so = &p->so;
    rmm__sstate *ss = rmm__so_find_keyed(so, stream, rmm__foreign_hint_key);
    rmm__pstream *s;
    rmm__block *b;
    rmm__pool_req req;
    if (!ss || p->backing->commit != NULL) return NULL;
    s = (rmm__pstream *)ss;
    if (!s->free.fl_map && !s->large.fl_map) return NULL;
    /* a block of the size in the quick list (not known done) or the recent slot: the id is asked,
       and the stream takes it back if it is the same stream (else, with the device behind the host, the lists would
       serve every allocation while the quick list only grew: lifo on foreign streams with --lag,
       an H200, 48.7 -> 178 ns a pair) */
    if ((size - 1 < RMM__POOL_QUICK_MAX && s->quick[(size >> 8) - 1] != NULL) || (s->recent && s->recent->size == size)) return NULL;
    if (s->ss.done < s->filed_rec && (would_block || s->ss.records < s->filed_rec || !rmm__so_refresh_done(&s->ss) || s->ss.done < s->filed_rec))
        return NULL; /* (the record that covers the lists is not made yet, or not seen complete) */
    if (size > RMM__POOL_QUICK_MAX && s->ring && rmm__pool_ring_holds_large(s->ring, size, alignment)) return NULL;
    rmm__pool_req_for(p, size, alignment, &req);
    if ((b = rmm__pool_find_block(s, &req, RMM__TLSF_SCAN)) == NULL) return NULL;
    *listsp = b->owner;
    if ((b = rmm__block_take(&p->store, b->owner, b, size, alignment)) == NULL) return NULL; /* (out of host memory: the id's path reports it) */
    so->last = ss;
    *sp = s;
    return b;
}
/* VIRTUAL growth: a block b found for s (in another state's lists, or in s's after a merge) is
   placed: another state's goes home to s as a refill, at the address where it was found (the
   refill may merge it with a free block of s's below it, on pages not mapped: review 34), s's own
   at its window on mapped pages (rmm__vm_prefer_mapped). Sets *at; returns the block to cut. */
RMM__PRIVATE rmm__block *rmm__pool_virtual_taken(rmm__pool *p, rmm__pstream *s, rmm__block *b, size_t need, char **at) {
    if (b->owner != rmm__pool_lists(s, b->chunk) && rmm__pool_is_ready(s)) {
        char *was = b->ptr;
        b = rmm__pool_refill(p, s, b, need);
        *at = b->ptr != was && (size_t)(b->ptr + b->size - was) >= need ? was : b->ptr;
        return b;
    }
    if (b->owner == rmm__pool_lists(s, b->chunk)) return rmm__vm_prefer_mapped(p, b, need, at);
    *at = b->ptr;
    return b;
}
/* rmm__pool_alloc's slow path (mimalloc's rule: the hits stay inline, the rest is one call away):
   no ring, recent or quick-list block of the size on s. Finds a block in s's lists (its parked
   blocks and its ring covered first, if need be; a foreign stream's ring of fewer than 128 small
   blocks only after other streams' memory and before growth), else takes one from another stream or upstream
   (covering stuck rings with a synchronize once when out of memory), and cuts `size` at `alignment`
   from it: *bp, and *listsp the lists it came from. With VIRTUAL growth a fit in s's lists that
   needs pages backed comes after other streams' free blocks on mapped pages (rmm__pool_relax
   says which). Under the pool's lock. would_block, *explain as in rmm__pool_alloc. */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__pool_alloc_slow(rmm__pool *p, rmm__pstream *s, size_t size, size_t alignment, bool *would_block,
                                                          rmm__block **bp, rmm__tlsf **listsp, bool *explain) {
    rmm__sstate *from_state;
    rmm__tlsf *lists;
    rmm__block *b;
    rmm__pool_req req;
    char *at = NULL; /* VIRTUAL: where in b to place the request (rmm__vm_prefer_mapped) */
    void *item;
    rmm_status st;
    rmm__kept_error kept;
    rmm__pool_req_for(p, size, alignment, &req);
    req.kept = &kept;
    rmm__pool_settle_recent(p, s);
    b = rmm__pool_find_block(s, &req, RMM__TLSF_SCAN);
    if (RMM__UNLIKELY(!b && s->quick_blocks) && !would_block && rmm__pool_flush_quick(p, s, req.need)) /* parked blocks, coalesced, may serve it */
        b = rmm__pool_find_block(s, &req, RMM__TLSF_SCAN);
    if (RMM__UNLIKELY(p->backing->commit != NULL)) {
        if (b) b = rmm__vm_prefer_mapped(p, b, req.need, &at);
        if ((!b || !rmm__vm_mapped(&p->vm, at, req.need)) && !would_block && rmm__pool_ring_held(s)) {
            /* its own ring first, covered now: its blocks lie on mapped pages (idle since their
               frees), where a page-in or other streams' memory would move pages or wait */
            if ((st = rmm__pool_ring_cover(p, s)) != RMM_SUCCESS) return st;
            rmm__pool_settle(p, s);
            b = rmm__pool_find_block(s, &req, RMM__TLSF_SCAN);
            if (b) b = rmm__vm_prefer_mapped(p, b, req.need, &at);
        }
        if ((!b || !rmm__vm_mapped(&p->vm, at, req.need)) && !would_block) { /* (virtual pools refuse nowait calls anyway) */
            /* pages to back: other streams' free memory on mapped pages first (rmm__pool_relax) */
            req.moves = rmm__vm_would_move(p, b ? at : NULL, req.need);
            req.taker = s;
            req.prefer = RMM__PREFER_SETTLED;
            if (b) { /* s's own fit stands: only memory that spares the pages is taken (the tiers above ANY) */
                rmm__sstate *from = NULL;
                rmm__wait_arm arm = rmm__wait_arm_set(&kept, &req.kept_taken);
                do st = rmm__so_take_other(&p->so, &s->ss, &req, &from, &item);
                while (st == RMM_SUCCESS && !item && rmm__pool_relax(&p->so, &req) && req.prefer != RMM__PREFER_ANY);
                rmm__wait_arm_back(arm);
                if (st != RMM_SUCCESS) return st;
                if (item) {
                    b = rmm__pool_virtual_taken(p, s, (rmm__block *)item, req.need, &at);
                } else { /* s's own fit, found again (merged memory may have changed s's lists) */
                    b = rmm__pool_find_block(s, &req, RMM__TLSF_SCAN);
                    if (b) b = rmm__vm_prefer_mapped(p, b, req.need, &at);
                }
                req.prefer = RMM__PREFER_ANY;
            } /* (else rmm__so_acquire below, relaxed by rmm__pool_relax) */
        }
    }
    if (!b) {
        if (would_block) {
            *would_block = true;
            return RMM_ERROR_NOT_SUPPORTED;
        }
        /* its own ring, covered now, may serve it; a foreign stream's ring of fewer small blocks
           is covered only before the pool grows (below): memory taken from another stream (a
           refill) lets the ring fill, so that one event covers many blocks */
        if (rmm__pool_ring_held(s) && (!rmm__so_by_id(&s->ss) || s->ring->large || s->ring->count >= RMM__POOL_RING / 2)) {
            if ((st = rmm__pool_ring_cover(p, s)) != RMM_SUCCESS) return st;
            rmm__pool_settle(p, s);
            b = rmm__pool_find_block(s, &req, RMM__TLSF_SCAN);
        }
    }
    if (!b) {
        bool ring = rmm__pool_ring_held(s) != 0;
        rmm__wait_arm arm = rmm__wait_arm_set(&kept, &req.kept_taken); /* (a failed wait below, then a success: no failure left) */
        req.no_grow = ring;
        st = rmm__so_acquire(&p->so, &s->ss, &req, &from_state, &item);
        req.no_grow = false;
        if (st == RMM_ERROR_OUT_OF_MEMORY && ring) { /* its own ring, covered now, before growth or a synchronize */
            if ((st = rmm__pool_ring_cover(p, s)) != RMM_SUCCESS) {
                rmm__wait_arm_back(arm);
                return st;
            }
            rmm__pool_settle(p, s);
            st = rmm__so_acquire(&p->so, &s->ss, &req, &from_state, &item);
        }
        if (st == RMM_ERROR_OUT_OF_MEMORY && rmm__so_unstick(&p->so, &s->ss, true)) /* other streams' rings, covered by a synchronize */
            st = rmm__so_acquire(&p->so, &s->ss, &req, &from_state, &item);
        rmm__wait_arm_back(arm);
        if (st != RMM_SUCCESS) {
            *explain = st == RMM_ERROR_OUT_OF_MEMORY;
            return st;
        }
        if (RMM__UNLIKELY(req.kept_taken)) rmm__error_back(&kept); /* a growth that failed before a try that did not (a red team's find, 2026-11-30) */
        b = (rmm__block *)item;
        if (RMM__UNLIKELY(p->backing->commit != NULL)) b = rmm__pool_virtual_taken(p, s, b, req.need, &at);
        else if (b->owner != rmm__pool_lists(s, b->chunk) && rmm__pool_is_ready(s)) b = rmm__pool_refill(p, s, b, req.need);
    }
    lists = b->owner;
    if (RMM__UNLIKELY(at != NULL) && at != b->ptr) { /* inside b (at: set above only for the b it names), at the alignment from there on */
        uintptr_t aligned = ((uintptr_t)at + (alignment - 1)) & ~(uintptr_t)(alignment - 1);
        b = rmm__block_take_at(&p->store, lists, b, size, (size_t)(aligned - (uintptr_t)b->ptr));
    } else {
        b = rmm__block_take(&p->store, lists, b, size, alignment);
    }
    if (RMM__UNLIKELY(!b)) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: out of host memory for block records");
    if (RMM__UNLIKELY(req.kept_taken)) rmm__error_back(&kept); /* (a wait that failed before the virtual growth's take: no failure left) */
    *bp = b;
    *listsp = lists;
    return RMM_SUCCESS;
}
/* One lock per pool, held for every allocate and free. Taking the hits (the quick lists, the
   recent slot) off it does not serve many threads (issue 18's threads16 <= 150 ns): a cache per
   thread in front of the pool, which served 61 % of threads16's allocations with no lock, made
   threads16 slower on an H200 (228 -> 316 ns a pair on foreign streams, 172 -> 193 on created
   ones, the latter within the runs' spread; docs/performance_notes.md, "A cache per thread"), as
   the slow path's holds (a search, a
   split, the map; 36 % of the allocations) and the large frees' merges are what the threads wait
   for. Those cannot leave a shared lock: a split or a merge writes its neighbours' links, and
   neighbours in a chunk belong to any stream's lists. A lock per stream state would also make a
   pair on one thread three atomic read-modify-writes where it makes two (a free must find its
   block in a map other threads change, and tell a double free from two threads apart), about 5 ns
   more on lifo. Letting the holder run the waiting threads' calls (flat combining) made threads16
   2.5-3.6x slower (docs/performance_notes.md, "Flat combining"): a waiter's slot moving between
   cores costs about what the call does. Chunks of a stream's own are the arena's design: with per-thread arenas it is the
   allocator for many threads (threads16: 20-25 ns a pair).
   The pool's allocate. would_block NULL: the resource call. Else a "nowait" call (rmmh keeps
   Python's GIL around it): it never waits for anything, a lock, the device or an upstream, and it
   sets *would_block, having handed out and freed nothing (and made no CUDA call beyond
   the id of a foreign stream), where it would have to (the lock is busy, or the request
   needs memory from another stream or from upstream); the caller then makes the ordinary call. */
RMM__PRIVATE rmm_status rmm__pool_alloc(rmm__pool *p, void **ptr, size_t bytes, size_t alignment, rmm_stream stream, bool *would_block) {
    rmm__sstate *ss;
    rmm__pstream *s;
    rmm__tlsf *lists = NULL;
    rmm__block *b;
    size_t size;
    rmm_status st;
    bool explain = false, at_maximum, mapped = true; /* mapped: b is in p->used already (it was parked) */
    uint64_t prekey;
    if (RMM__UNLIKELY(bytes > SIZE_MAX - RMM__MARGIN || !rmm__align_up(bytes + RMM__MARGIN, RMM_ALIGNMENT, &size) || size > SIZE_MAX - alignment))
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: out of memory allocating %zu bytes: larger than any pool", bytes);
#if RMM__DEBUG
    RMM_TRY(rmm__debug_device_check("pool", "allocate", p->device));
#endif
    if (RMM__UNLIKELY((st = rmm__pool_lock(p, "allocate", would_block)) != RMM_SUCCESS)) return st;
    prekey = 0;
    if (rmm__so_hinted(&p->so, stream)) {
        if (rmm__foreign_hint_key && rmm__idless_left) { /* memory whose last use is known over: whichever stream the handle names now may have it, no id asked */
            s = NULL;
            if (size - 1 < RMM__POOL_QUICK_MAX && (b = rmm__pool_take_covered(p, stream, size, alignment, would_block, &s)) != NULL) {
                rmm__idless_left--;
                ss = &s->ss;
                goto taken;
            }
            if (s == NULL) {
                rmm__tlsf *from = NULL; /* (lists itself stays out of memory: see the slow path below) */
                if ((b = rmm__pool_take_listed(p, stream, size, alignment, would_block, &s, &from)) != NULL) {
                    rmm__idless_left--;
                    ss = &s->ss;
                    lists = from;
                    mapped = false;
                    goto taken;
                }
            }
        }
        prekey = rmm__so_ask_key(stream); /* (under the lock: see rmm__so_prekey) */
    }
    st = rmm__so_state(&p->so, stream, prekey, &ss);
    if (RMM__UNLIKELY(st != RMM_SUCCESS)) {
        if (would_block && rmm__nowait_refused) { /* a sweep is due: the ordinary call makes it */
            rmm__nowait_refused = false;
            *would_block = true;
        }
        goto out;
    }
    s = (rmm__pstream *)ss;
    if (RMM__UNLIKELY(s->ring != NULL) && (size > RMM__POOL_QUICK_MAX || !rmm__so_by_id(&s->ss)) && (b = rmm__pool_ring_take(s->ring, size, alignment)) != NULL) {
        /* a block freed on this (eager) stream since its last event, taken back whole */
    } else if (RMM__LIKELY((b = s->recent) != NULL && b->size == size && ((uintptr_t)b->ptr & (alignment - 1)) == 0)) {
        s->recent = NULL; /* the block freed last on this stream, taken back whole */
    } else if (size - 1 < RMM__POOL_QUICK_MAX && (b = s->quick[(size >> 8) - 1]) != NULL && ((uintptr_t)b->ptr & (alignment - 1)) == 0) {
        s->quick[(size >> 8) - 1] = b->free_next; /* a block of this size freed earlier on this stream */
        b->free_next = NULL;
        s->quick_bytes -= size;
        s->quick_blocks--;
    } else { /* (the slow path's results land in its own locals: b, lists and explain, never
                  address-taken, stay in registers on the paths above) */
        rmm__block *got = NULL;
        rmm__tlsf *from = NULL;
        bool oom = false;
        st = rmm__pool_alloc_slow(p, s, size, alignment, would_block, &got, &from, &oom);
        explain = oom;
        if (RMM__UNLIKELY(st != RMM_SUCCESS)) goto out;
        b = got;
        lists = from;
        ss = (rmm__sstate *)lists->state; /* the state it came from (the core may drop it below) */
        mapped = false;
    }
taken:
    b->parked = NULL;
    if (RMM__UNLIKELY(p->backing->commit != NULL) && mapped && !rmm__vm_mapped(&p->vm, b->ptr, b->size)) {
        /* VIRTUAL growth: a block taken back whole (its ring, its recent slot) whose pages a page
           move took (after a device synchronize, so its free is done): filed, and the slow path
           serves the request, from memory on mapped pages or other streams' first, as any
           allocation that needs pages (review 36: backed again here, at the maximum each call
           failed on the next such block while mapped memory that fits sat in the lists) */
        rmm__block *got = NULL;
        rmm__tlsf *from = NULL;
        bool oom = false;
        (void)rmm__addr_map_remove(&p->used, (uintptr_t)b->ptr);
        rmm__pool_filed(s, rmm__pool_next_rec(s));
        rmm__block_file(&p->store, rmm__pool_lists(s, b->chunk), b);
        st = rmm__pool_alloc_slow(p, s, size, alignment, would_block, &got, &from, &oom);
        explain = oom;
        if (RMM__UNLIKELY(st != RMM_SUCCESS)) goto out;
        b = got;
        lists = from;
        ss = (rmm__sstate *)lists->state;
        mapped = false;
        b->parked = NULL;
    }
    if (RMM__UNLIKELY(p->backing->commit != NULL) && (st = p->backing->commit(p, b)) != RMM_SUCCESS) {
        rmm__pstream *to = mapped ? s : RMM__PSTREAM_OF(lists);
        explain = st == RMM_ERROR_OUT_OF_MEMORY; /* pages could not be backed: the maximum, or the device is full */
        if (mapped) (void)rmm__addr_map_remove(&p->used, (uintptr_t)b->ptr);
        /* (a parked block's pages can be gone only after a page move, which synchronized the
           device after its free: filed now, its free is known done, whatever record covers it) */
        rmm__pool_filed(to, rmm__pool_next_rec(to));
        rmm__block_file(&p->store, mapped ? rmm__pool_lists(s, b->chunk) : lists, b);
        goto out;
    }
    if (RMM__UNLIKELY(!mapped && !rmm__addr_map_put(&p->used, (uintptr_t)b->ptr, b))) {
        if (p->backing->uncommit) p->backing->uncommit(p, b);
        rmm__pool_filed(RMM__PSTREAM_OF(lists), rmm__pool_next_rec(RMM__PSTREAM_OF(lists)));
        rmm__block_file(&p->store, lists, b); /* merges back with what it was cut from */
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: out of host memory for block records");
        goto out;
    }
    p->used_bytes += size;
    rmm__san_region_register(b->chunk->user, b->ptr, bytes);
    *ptr = b->ptr;
#if RMM__MARGIN_ON
    b->requested = rmm__margin_set(b->ptr, bytes, stream) ? bytes : SIZE_MAX;
    b->serial = rmm__margin_serial();
#endif
    if (RMM__UNLIKELY(ss != &s->ss)) rmm__so_taken(&p->so, &s->ss, ss);
    RMM__POOL_DEBUG_CHECK(p);
out:
    at_maximum = explain && p->vm.at_maximum; /* (read under the lock: another thread's page-in resets it) */
    rmm__spin_unlock(&p->so.lock);
    if (RMM__UNLIKELY(explain)) return rmm__pool_oom(p, bytes, alignment, stream, at_maximum);
    return st;
}

RMM__PRIVATE rmm_status rmm__pool_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    return rmm__pool_alloc((rmm__pool *)self, ptr, bytes, alignment, stream, NULL);
}

/* The pool's deallocate; would_block as for rmm__pool_alloc (a free waits for nothing but the lock). */
RMM__PRIVATE rmm_status rmm__pool_free(rmm__pool *p, void *ptr, size_t bytes, rmm_stream stream, bool *would_block) {
    rmm__sstate *ss;
    rmm__pstream *s;
    rmm__block *b;
    void **slot;
    size_t size = 0;
    rmm_status st;
    uint64_t prekey;
    bool cached, to_ring = false;
    if (RMM__MARGIN_ON && would_block) { /* the margin check reads the device */
        *would_block = true;
        return RMM_ERROR_NOT_SUPPORTED;
    }
#if RMM__DEBUG
    RMM_TRY(rmm__debug_device_check("pool", "deallocate", p->device));
#endif
#if RMM__MARGIN_ON
    {
        size_t requested = 0;
        bool live = false;
        if (!rmm__spin_lock(&p->so.lock)) return rmm__reentrant("pool", "deallocate");
        slot = rmm__addr_map_find(&p->used, (uintptr_t)ptr);
        if (slot && !((rmm__block *)*slot)->parked) {
            requested = ((rmm__block *)*slot)->requested;
            live = requested != SIZE_MAX; /* (SIZE_MAX: its margin could not be filled) */
        }
        rmm__spin_unlock(&p->so.lock);
        if (live) RMM_TRY(rmm__margin_check("pool", ptr, requested, stream)); /* a block written past stays allocated */
    }
#endif
again:
    prekey = rmm__so_prekey_for_free(&p->so, stream, &cached);
    if (RMM__UNLIKELY((st = rmm__pool_lock(p, "deallocate", would_block)) != RMM_SUCCESS)) return st;
    slot = rmm__addr_map_find(&p->used, (uintptr_t)ptr);
    b = slot ? (rmm__block *)*slot : NULL;
    if (RMM__UNLIKELY(!b || b->parked)) {
        rmm__spin_unlock(&p->so.lock);
        return rmm__fail(RMM_ERROR_CORRUPTION, "pool: deallocate(ptr=%p, bytes=%zu): not allocated by this pool, or already freed", ptr, bytes);
    }
    if (RMM__UNLIKELY(bytes > SIZE_MAX - RMM__MARGIN || !rmm__align_up(bytes + RMM__MARGIN, RMM_ALIGNMENT, &size) || size != b->size)) {
        rmm__spin_unlock(&p->so.lock);
        return rmm__fail(RMM_ERROR_CORRUPTION, "pool: deallocate(ptr=%p, bytes=%zu): the block holds %zu bytes; the size must be the one allocated", ptr, bytes, b->size);
    }
    st = rmm__so_state(&p->so, stream, prekey, &ss);
    s = (rmm__pstream *)ss;
    if (RMM__UNLIKELY(st == RMM_SUCCESS && !rmm__pool_is_ready(s)) && !rmm__pool_ready(p, s))
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pool: deallocate(ptr=%p, bytes=%zu): out of host memory for the stream's free lists", ptr, bytes);
    if (RMM__UNLIKELY(st == RMM_SUCCESS && !ss->lazy)) { /* an eager stream: its ring, else an event now */
        to_ring = s->ring && rmm__pool_ring_room(p, s->ring, size);
    }
    if (RMM__UNLIKELY(st == RMM_SUCCESS && !ss->lazy && !to_ring)) {
        if (would_block) { /* the event is a CUDA call */
            rmm__spin_unlock(&p->so.lock);
            *would_block = true;
            return RMM_ERROR_NOT_SUPPORTED;
        }
        if (cached) { /* an event on the handle covers the ring only if the handle still names s's stream: ask its id */
            rmm__spin_unlock(&p->so.lock);
            rmm__foreign_hint_key = 0;
            goto again;
        }
        st = rmm__pool_cover_unlocked(p, s); /* covers this free and the ring's; lets the lock go */
        if (st == RMM_SUCCESS) { /* b again: another thread may have freed it meanwhile (a double free) */
            slot = rmm__addr_map_find(&p->used, (uintptr_t)ptr);
            b = slot ? (rmm__block *)*slot : NULL;
            if (!b || b->parked || b->size != size)
                st = rmm__fail(RMM_ERROR_CORRUPTION, "pool: deallocate(ptr=%p, bytes=%zu): freed by another thread meanwhile (a double free)", ptr, bytes);
            else
                b->cover = (uint32_t)ss->records; /* the record just made covers it (or a later one: records count as they return) */
        }
        if (st == RMM_SUCCESS && !s->ring && ++s->ss.eager_frees >= RMM__POOL_RING_AFTER)
            s->ring = (rmm__pool_ring *)rmm__calloc(1, sizeof *s->ring); /* (none: it keeps an event per free) */
    } else if (RMM__LIKELY(st == RMM_SUCCESS && ss->lazy)) {
        st = rmm__so_freed(ss); /* lazy: marks it */
    }
    if (RMM__UNLIKELY(st != RMM_SUCCESS)) {
        rmm__spin_unlock(&p->so.lock); /* the block stays allocated: the free may be retried */
        if (would_block && rmm__nowait_refused) { /* a sweep is due: the ordinary call makes it */
            rmm__nowait_refused = false;
            *would_block = true;
        }
        return st;
    }
    rmm__so_listed(&p->so, ss);
    p->used_bytes -= size;
    rmm__san_region_unregister(b->chunk->user, b->ptr);
    if (RMM__UNLIKELY(to_ring)) { /* freed since the stream's last event: its ring, no CUDA call */
        if (RMM__UNLIKELY(p->backing->uncommit != NULL)) p->backing->uncommit(p, b); /* (virtual growth: its pages idle now, see rmm__pool_ring) */
        rmm__pool_ring_put(s, b, size);
    } else {
        rmm__pool_park(p, s, b);
    }
    RMM__POOL_DEBUG_CHECK(p);
    rmm__spin_unlock(&p->so.lock);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__pool_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    (void)alignment;
    return rmm__pool_free((rmm__pool *)self, ptr, bytes, stream, NULL);
}

/* rmm_allocate_nowait / rmm_deallocate_nowait: the pool's calls with would_block; every other
   resource would block (see the declarations). */
RMM__IMPL rmm_status rmm_allocate_nowait(rmm_resource *mr, void **ptr, size_t bytes, rmm_stream stream, bool *would_block) {
    rmm_status st;
    if (RMM__UNLIKELY(!would_block)) return RMM__NULL_OUT("rmm_allocate_nowait", "would_block");
    *would_block = false;
    if (RMM__UNLIKELY(!ptr)) return RMM__NULL_OUT("rmm_allocate_nowait", "ptr");
    *ptr = NULL;
    if (RMM__UNLIKELY(bytes == 0)) return RMM_SUCCESS;
    mr = rmm__resolve(mr);
    if (RMM__UNLIKELY(!mr)) return rmm_last_status();
    if (mr->vtable != &rmm__pool_vtable || (RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) != 0 && !rmm__graph_own_alloc)) {
        *would_block = true; /* (while a capture is registered, the ordinary call routes it) */
        return RMM_SUCCESS;
    }
    rmm__in_nowait = true;
    st = rmm__pool_alloc((rmm__pool *)mr, ptr, bytes, RMM_ALIGNMENT, stream, would_block);
    rmm__in_nowait = false;
    if (*would_block) {
        *ptr = NULL;
        return RMM_SUCCESS;
    }
    if (st != RMM_SUCCESS) *ptr = NULL;
    rmm__nvtx_mark(mr, st == RMM_SUCCESS ? 0 : 2, bytes); /* as rmm_allocate marks */
    return st;
}
RMM__IMPL rmm_status rmm_deallocate_nowait(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream, bool *would_block) {
    rmm_status st;
    if (RMM__UNLIKELY(!would_block)) return RMM__NULL_OUT("rmm_deallocate_nowait", "would_block");
    *would_block = false;
    if (RMM__UNLIKELY(!ptr)) return RMM_SUCCESS;
    if (RMM__UNLIKELY(bytes == 0)) return rmm__free_of_zero_bytes("rmm_deallocate_nowait", ptr);
    mr = rmm__resolve(mr);
    if (RMM__UNLIKELY(!mr)) return rmm_last_status();
    if (mr->vtable != &rmm__pool_vtable || RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_pools_live) != 0) {
        *would_block = true; /* (while a graph pool lives, the ordinary call finds its blocks) */
        return RMM_SUCCESS;
    }
    if (rmm__recorded_any() && rmm__recorded_has(mr, ptr)) { /* its recorded streams' events are CUDA calls */
        *would_block = true;
        return RMM_SUCCESS;
    }
    rmm__in_nowait = true;
    st = rmm__pool_free((rmm__pool *)mr, ptr, bytes, stream, would_block);
    rmm__in_nowait = false;
    if (*would_block) return RMM_SUCCESS;
    rmm__nvtx_mark(mr, 1, bytes);
    return st;
}

RMM__IMPL rmm_status rmm_pool_trim(rmm_resource *pool, size_t *released_bytes) {
    rmm__pool *p = (rmm__pool *)pool;
    size_t released = 0, i;
    rmm_status st, waited;
    rmm__device_guard g;
    char cause[RMM__CAUSE_MAX];
    int cause_cuda = 0;
    if (released_bytes) *released_bytes = 0;
    if (!pool || pool->vtable != &rmm__pool_vtable)
        return RMM__INVALID("rmm_pool_trim: resource '%s' is not a pool", rmm_resource_type_name(pool));
    /* (the pool's device made current, as a destroy does: trimmed with another current, its device
       synchronize covered the wrong device's work before pages and chunks went back; debug builds
       refused it, release builds did it; red team 47) */
    RMM_TRY(rmm__device_enter(&g, p->device));
    if (!rmm__spin_lock(&p->so.lock)) {
        rmm__device_leave(&g);
        return rmm__reentrant("pool", "rmm_pool_trim");
    }
    (void)rmm__so_unstick_status(&p->so, NULL, true, &waited); /* eager streams' rings: a device synchronize covers them */
    if (waited != RMM_SUCCESS) {
        cause_cuda = rmm_last_cuda_error();
        rmm__copy_cause(cause, rmm_last_error());
    }
    rmm__pool_settle_all(p);
    st = p->backing->trim(p, &released);
    if (waited == RMM_SUCCESS) { /* dead streams' states go now, their memory, where its work is known done
                                    (rmm__so_settled), to the default stream's, not when the states' number next
                                    doubles (red team 33: after a burst of 10,000 streams their states and events
                                    stayed, and trim kept them); after the backing's trim, whose waits for the
                                    streams' work make more of them known done (red team 36: before it, a
                                    foreign stream's state, with no ring to synchronize for, stayed while the
                                    device was behind) */
        rmm__sstate *legacy = NULL;
        rmm__kept_error kept;
        rmm__error_keep(&kept);
        if (rmm__so_state(&p->so, RMM__LEGACY_HANDLE, 0, &legacy) == RMM_SUCCESS) rmm__so_sweep(&p->so, legacy);
        rmm__error_back(&kept);
    }
    if (st == RMM_SUCCESS && waited != RMM_SUCCESS) /* (their chunks stay; what else was free went: a red team's find, 2026-11-29) */
        st = rmm__fail_cuda(cause_cuda, waited, "rmm_pool_trim: the chunks of streams' uncovered frees were kept, as the device synchronize that covers them failed: %s", cause);
    for (i = 0; i < p->so.count; i++) { /* states left with no free block give their tables back */
        rmm__pstream *s = RMM__PSTREAM(p, i);
        if (rmm__pool_is_ready(s) && !rmm__pool_holds(&p->so, &s->ss)) rmm__pool_unready(s);
    }
    rmm__spin_unlock(&p->so.lock);
    rmm__device_leave(&g);
    if (released_bytes) *released_bytes = released;
    return st;
}

/* Checks the blocks parked on s: each in the address map, marked as s's, in the right quick list
   (or the recent slot), and the quick lists' counts; adds them to the counts. O(blocks parked on s). */
RMM__PRIVATE rmm_status rmm__pool_validate_parked_block(rmm__pool *p, const rmm__pstream *s, const rmm__block *b) {
    void **slot = rmm__addr_map_find(&p->used, (uintptr_t)b->ptr);
    if (!slot || *slot != b || b->parked != s || b->owner)
        return rmm__fail(RMM_ERROR_CORRUPTION, "pool: parked block %p of stream state %zu is not marked as parked there", (void *)b->ptr, s->ss.index);
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__pool_validate_parked(rmm__pool *p, rmm__pstream *s, size_t *blocks, size_t *bytes) {
    size_t k, n = 0, total = 0;
    const rmm__block *b;
    for (k = 0; k < RMM__POOL_QUICK_CLASSES; k++) {
        for (b = s->quick[k]; b; b = b->free_next) {
            RMM_TRY(rmm__pool_validate_parked_block(p, s, b));
            if (b->size != (k + 1) << 8)
                return rmm__fail(RMM_ERROR_CORRUPTION, "pool: block %p of %zu bytes is in the quick list of %zu", (void *)b->ptr, b->size, (k + 1) << 8);
            if (++n > s->quick_blocks) /* (a cycle: the walk ends; it hung until a white-box test of session 39) */
                return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu's quick lists hold more than the %zu blocks recorded", s->ss.index, s->quick_blocks);
            total += b->size;
        }
    }
    if (n != s->quick_blocks || total != s->quick_bytes)
        return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu parks %zu blocks of %zu bytes, recorded %zu of %zu", s->ss.index, n, total, s->quick_blocks, s->quick_bytes);
    if (s->recent) {
        RMM_TRY(rmm__pool_validate_parked_block(p, s, s->recent));
        n++;
        total += s->recent->size;
    }
    if (s->ring) {
        const rmm__pool_ring *r = s->ring;
        size_t ring_bytes = 0, ring_blocks = 0, large_blocks = 0, large_bytes = 0;
        if (r->count > RMM__POOL_RING || r->large > RMM__POOL_RING_LARGE || s->ss.lazy)
            return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu has a ring of %zu blocks (%zu large)%s", s->ss.index, r->count, r->large,
                             s->ss.lazy ? " but is lazy" : "");
        for (k = 0; k < RMM__POOL_QUICK_CLASSES; k++) {
            if ((r->fresh[k] != NULL) != ((r->classes[k >> 6] >> (k & 63)) & 1))
                return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu's ring marks its list of %zu bytes %s", s->ss.index, (k + 1) << 8,
                                 r->fresh[k] ? "empty, but it holds blocks" : "full, but it is empty");
            for (b = r->fresh[k]; b; b = b->free_next) {
                RMM_TRY(rmm__pool_validate_parked_block(p, s, b));
                if (!b->free_next && b != r->tail[k])
                    return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu's ring has a wrong last block in its list of %zu bytes", s->ss.index, (k + 1) << 8);
                if (b->size != (k + 1) << 8)
                    return rmm__fail(RMM_ERROR_CORRUPTION, "pool: block %p of %zu bytes is in a ring's list of %zu", (void *)b->ptr, b->size, (k + 1) << 8);
                ring_bytes += b->size;
                if (++ring_blocks > r->count) return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu's ring holds more blocks than its count", s->ss.index);
            }
        }
        for (k = 0; k < 64; k++) {
            if ((r->bucket[k] != NULL) != ((r->buckets >> k) & 1))
                return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu's ring marks its bucket %zu %s", s->ss.index, k,
                                 r->bucket[k] ? "empty, but it holds blocks" : "full, but it is empty");
            for (b = r->bucket[k]; b; b = b->free_next) {
                RMM_TRY(rmm__pool_validate_parked_block(p, s, b));
                if (b->size <= RMM__POOL_QUICK_MAX || rmm__pool_ring_hash(b->size) != k)
                    return rmm__fail(RMM_ERROR_CORRUPTION, "pool: block %p of %zu bytes is in a ring's bucket %zu", (void *)b->ptr, b->size, k);
                ring_bytes += b->size;
                large_bytes += b->size;
                if (++ring_blocks > r->count || ++large_blocks > r->large)
                    return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu's ring holds more blocks than its count", s->ss.index);
            }
        }
        if (ring_bytes != r->bytes || ring_blocks != r->count || large_blocks != r->large || large_bytes != r->large_bytes)
            return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu's ring holds %zu blocks of %zu bytes (%zu large, %zu bytes), recorded %zu of %zu (%zu, %zu)",
                             s->ss.index, ring_blocks, ring_bytes, large_blocks, large_bytes, r->count, r->bytes, r->large, r->large_bytes);
        n += r->count;
        total += ring_bytes;
    }
    *blocks += n;
    *bytes += total;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__pool_validate_locked(rmm__pool *p) {
    rmm__chunk *c;
    rmm__walk w;
    size_t chunks = 0, pool_bytes = 0, listed_blocks = 0, listed_bytes = 0, parked_blocks = 0, parked_bytes = 0, i;
    memset(&w, 0, sizeof w);
    for (c = p->chunks; c; c = c->next) {
        if (++chunks > p->chunk_count) /* (a cycle: the walk ends) */
            return rmm__fail(RMM_ERROR_CORRUPTION, "pool: the chunk list holds more than the %zu chunks recorded", p->chunk_count);
        pool_bytes += c->size;
        RMM_TRY(rmm__validate_chunk("pool", c, &p->used, &w)); /* counts parked blocks as used: they are in p->used */
    }
    if (chunks != p->chunk_count || pool_bytes != p->pool_bytes)
        return rmm__fail(RMM_ERROR_CORRUPTION, "pool: chunk accounting is off (%zu chunks of %zu bytes, recorded %zu of %zu)", chunks, pool_bytes, p->chunk_count, p->pool_bytes);
    for (i = 0; i < p->so.count; i++) {
        rmm__pstream *s = RMM__PSTREAM(p, i);
        if (s->ss.index != i) return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu records index %zu", i, s->ss.index);
        RMM_TRY(rmm__validate_tlsf("pool", &s->free, &listed_blocks, &listed_bytes));
        RMM_TRY(rmm__validate_tlsf("pool", &s->large, &listed_blocks, &listed_bytes));
        RMM_TRY(rmm__pool_validate_parked(p, s, &parked_blocks, &parked_bytes));
        if (s->ss.holder_at && (s->ss.holder_at > p->so.holder_count || p->so.holders[s->ss.holder_at - 1] != &s->ss))
            return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu has a bad place in the holders list", i);
        if (!p->so.holders_lost && !s->ss.holder_at && rmm__pool_holds(&p->so, &s->ss))
            return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu holds free memory but is not in the holders list", i);
        if (!rmm__pool_is_ready(s) && (s->free.heads || s->large.heads || rmm__pool_holds(&p->so, &s->ss)))
            return rmm__fail(RMM_ERROR_CORRUPTION, "pool: stream state %zu has free lists but no quick lists", i);
    }
    if (w.used_bytes != p->used_bytes + parked_bytes || w.used_blocks != p->used.count)
        return rmm__fail(RMM_ERROR_CORRUPTION, "pool: used accounting is off (%zu bytes in %zu blocks, recorded %zu bytes and %zu parked in %zu)", w.used_bytes,
                         w.used_blocks, p->used_bytes, parked_bytes, p->used.count);
    if (listed_blocks != w.free_blocks || listed_bytes != w.free_bytes)
        return rmm__fail(RMM_ERROR_CORRUPTION, "pool: %zu free blocks in chunks but %zu in lists", w.free_blocks, listed_blocks);
    if (p->used_bytes + parked_bytes + w.free_bytes != p->pool_bytes) return rmm__fail(RMM_ERROR_CORRUPTION, "pool: used + parked + free != pool bytes");
    return p->backing->validate(p);
}
RMM__IMPL rmm_status rmm_pool_validate(rmm_resource *pool) {
    rmm__pool *p = (rmm__pool *)pool;
    rmm_status st;
    if (!pool || pool->vtable != &rmm__pool_vtable)
        return RMM__INVALID("rmm_pool_validate: resource '%s' is not a pool", rmm_resource_type_name(pool));
    if (!rmm__spin_lock(&p->so.lock)) return rmm__reentrant("pool", "rmm_pool_validate");
    st = rmm__pool_validate_locked(p);
    rmm__spin_unlock(&p->so.lock);
    return st;
}
RMM__PRIVATE void rmm__pool_info_locked(rmm__pool *p, rmm_pool_info *info);
RMM__IMPL rmm_status rmm_pool_get_info(rmm_resource *pool, rmm_pool_info *info) {
    rmm__pool *p = (rmm__pool *)pool;
    if (!info) return RMM__NULL_OUT("rmm_pool_get_info", "info");
    if (!pool || pool->vtable != &rmm__pool_vtable)
        return RMM__INVALID("rmm_pool_get_info: resource '%s' is not a pool", rmm_resource_type_name(pool));
    if (!rmm__spin_lock(&p->so.lock)) {
        memset(info, 0, sizeof *info);
        return rmm__reentrant("pool", "rmm_pool_get_info");
    }
    rmm__pool_info_locked(p, info);
    rmm__spin_unlock(&p->so.lock);
    return RMM_SUCCESS;
}
/* rmm_pool_get_info's figures; the caller holds p's lock. O(stream states). */
RMM__PRIVATE void rmm__pool_info_locked(rmm__pool *p, rmm_pool_info *info) {
    size_t i;
    memset(info, 0, sizeof *info);
    rmm__pool_settle_all(p);
    p->backing->held(p, &info->pool_bytes, &info->peak_pool_bytes);
    info->used_bytes = p->used_bytes;
    info->free_bytes = info->pool_bytes - p->used_bytes;
    info->upstream_chunks = p->backing == &rmm__vm_backing ? 0 : p->chunk_count; /* VIRTUAL: nothing comes from upstream */
    info->stream_states = p->so.count;
    for (i = 0; i < p->so.count; i++) {
        info->free_blocks += RMM__PSTREAM(p, i)->free.free_blocks + RMM__PSTREAM(p, i)->large.free_blocks;
        info->largest_free_block = rmm__max(info->largest_free_block, rmm__tlsf_largest(&RMM__PSTREAM(p, i)->free));
        info->largest_free_block = rmm__max(info->largest_free_block, rmm__tlsf_largest(&RMM__PSTREAM(p, i)->large));
    }
}

RMM__PRIVATE void rmm__pool_destroy(rmm_resource *self) {
    rmm__pool *p = (rmm__pool *)self;
    bool exiting = rmm__exiting();
    rmm__device_guard g;
    /* its device current (whichever the caller's): the waits for each stream's work, the device
       synchronize before a virtual pool's pages go and the chunks' frees are that device's (red
       team 45: with another device current they waited on the wrong device's streams) */
    rmm__device_enter_quietly(&g, p->device, exiting);
    rmm__so_free(&p->so, exiting); /* waits for each stream's queued work first */
    if (p->backing) p->backing->destroy(p, exiting);
    rmm__device_leave(&g);
    rmm__addr_map_free(&p->used);
    rmm__block_store_free(&p->store);
    RMM_SYS_FREE(p);
}

RMM__IMPL rmm_status rmm_pool_set_maximum(rmm_resource *pool, size_t maximum_bytes) {
    rmm__pool *p = (rmm__pool *)pool;
    if (!pool || pool->vtable != &rmm__pool_vtable)
        return RMM__INVALID("rmm_pool_set_maximum: resource '%s' is not a pool", rmm_resource_type_name(pool));
    if (maximum_bytes % RMM_ALIGNMENT) return RMM__INVALID("rmm_pool_set_maximum: %zu bytes is not a multiple of 256", maximum_bytes);
    if (p->backing == &rmm__vm_backing && maximum_bytes && maximum_bytes < p->vm.page) /* (as rmm_pool_create) */
        return RMM__INVALID("rmm_pool_set_maximum: %zu bytes is less than one page (%zu bytes): a virtual pool could not allocate", maximum_bytes, p->vm.page);
    if (!rmm__spin_lock(&p->so.lock)) return rmm__reentrant("pool", "rmm_pool_set_maximum");
    RMM__ATOMIC_STORE_RELAXED(&p->desc.maximum_bytes, maximum_bytes); /* (growth reads it under the lock, OOM reports before it) */
    rmm__spin_unlock(&p->so.lock);
    return RMM_SUCCESS;
}

RMM__IMPL rmm_status rmm_pool_create(rmm_resource **out, rmm_resource *upstream, const rmm_pool_desc *desc) {
    rmm_pool_desc d = desc ? *desc : rmm_pool_desc_default();
    rmm__pool *p;
    rmm__sstate *s;
    rmm_status st;
    bool own = false; /* the failure is one of the pool's own setup steps */
    if (!out) return RMM__NULL_OUT("rmm_pool_create", "out");
    *out = NULL;
    if (!upstream && d.growth != RMM_POOL_GROWTH_VIRTUAL) return rmm__null_upstream("rmm_pool_create");
    if (d.growth == RMM_POOL_GROWTH_VIRTUAL && d.initial_bytes)
        return RMM__INVALID("rmm_pool_create: initial_bytes (%zu) is not used with RMM_POOL_GROWTH_VIRTUAL; pass 0", d.initial_bytes);
    if (d.growth_granularity_bytes == 0) d.growth_granularity_bytes = RMM__POOL_GRANULARITY;
    if (d.initial_bytes % RMM_ALIGNMENT || d.maximum_bytes % RMM_ALIGNMENT || d.growth_granularity_bytes % RMM_ALIGNMENT)
        return RMM__INVALID("rmm_pool_create: initial_bytes (%zu), maximum_bytes (%zu) and growth_granularity_bytes (%zu) must be multiples of 256",
                            d.initial_bytes, d.maximum_bytes, d.growth_granularity_bytes);
    if (d.virtual_bytes % RMM_ALIGNMENT)
        return RMM__INVALID("rmm_pool_create: virtual_bytes (%zu) must be a multiple of 256", d.virtual_bytes);
    if (d.virtual_extent_bytes % RMM_ALIGNMENT || d.virtual_extent_bytes > ((size_t)4 << 30))
        return RMM__INVALID("rmm_pool_create: virtual_extent_bytes (%zu) must be a multiple of 256 and at most 4 GiB", d.virtual_extent_bytes);
    if (d.maximum_bytes && d.initial_bytes > d.maximum_bytes)
        return RMM__INVALID("rmm_pool_create: initial_bytes %zu exceeds maximum_bytes %zu", d.initial_bytes, d.maximum_bytes);
    if (d.growth != RMM_POOL_GROWTH_GEOMETRIC && d.growth != RMM_POOL_GROWTH_ON_DEMAND && d.growth != RMM_POOL_GROWTH_VIRTUAL)
        return RMM__INVALID("rmm_pool_create: growth %d is not an rmm_pool_growth value", (int)d.growth);
    rmm__ensure_exit_hook();
    p = (rmm__pool *)rmm__calloc(1, sizeof *p);
    if (!p) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_pool_create: out of host memory");
    p->base.vtable = &rmm__pool_vtable;
    p->upstream = upstream;
    p->desc = d;
    p->backing = d.growth == RMM_POOL_GROWTH_VIRTUAL ? &rmm__vm_backing : &rmm__chunks_backing;
    p->large_bytes = d.growth == RMM_POOL_GROWTH_ON_DEMAND ? rmm__max(RMM__POOL_LARGE, d.growth_granularity_bytes) : SIZE_MAX;
    st = rmm__get_device(&p->device);
    if (st == RMM_SUCCESS && (!rmm__addr_map_init(&p->used, 1024) || !rmm__so_init(&p->so, &rmm__pool_so_ops, "pool", d.streams_outlive_pool, false)))
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_pool_create: out of host memory");
    p->so.track_holders = true; /* a stream's first allocation looks at the streams holding memory only */
    p->so.device = p->device;
    if (st == RMM_SUCCESS && d.growth == RMM_POOL_GROWTH_VIRTUAL) {
        st = rmm__vm_setup(p, d.virtual_bytes);
        own = st != RMM_SUCCESS;
    } else if (st == RMM_SUCCESS && d.initial_bytes) {
        void *ptr = NULL;
        st = rmm__so_state(&p->so, RMM__LEGACY_HANDLE, 0, &s);
        own = st != RMM_SUCCESS;
        if (st == RMM_SUCCESS) st = rmm__allocate_own(upstream, &ptr, d.initial_bytes, RMM_STREAM_DEFAULT); /* (the upstream's answer: its own words) */
        if (st == RMM_SUCCESS) {
            (void)rmm__so_grown(s, upstream); /* (the legacy stream's state is lazy: it only marks it) */
            st = rmm__pool_add_chunk(p, (rmm__pstream *)s, ptr, d.initial_bytes, true, false);
            own = st != RMM_SUCCESS;
            if (st != RMM_SUCCESS) RMM__CLEANUP(rmm_deallocate(upstream, ptr, d.initial_bytes, RMM_STREAM_DEFAULT));
        }
    }
    if (st != RMM_SUCCESS) {
        /* the pool's own setup (a stream state's, the range's or the chunk's records; the range's
           reservation) named as the user's call, then the step ("pool: ..."); an upstream's refusal
           of initial_bytes keeps its own words, as rmm_arena_create and rmm_fixed_size_create leave
           theirs (review 39) */
        if (own && strncmp(rmm_last_error(), "rmm_pool_create", 15) != 0)
            (void)rmm__fail_cuda(rmm_last_cuda_error(), st, "rmm_pool_create: %s", rmm_last_error());
        RMM__CLEANUP_VOID(rmm__pool_destroy(&p->base)); /* frees the range too, if it was reserved */
        return st;
    }
    *out = &p->base;
    return RMM_SUCCESS;
}
#else
RMM__IMPL rmm_status rmm_pool_create(rmm_resource **out, rmm_resource *upstream, const rmm_pool_desc *desc) {
    (void)upstream;
    (void)desc;
    if (out) *out = NULL;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_pool_create: compiled out by RMM_NO_POOL");
}
RMM__IMPL rmm_status rmm_pool_get_info(rmm_resource *pool, rmm_pool_info *info) {
    (void)pool;
    (void)info;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_pool_get_info: compiled out by RMM_NO_POOL");
}
RMM__IMPL rmm_status rmm_pool_trim(rmm_resource *pool, size_t *released_bytes) {
    (void)pool;
    if (released_bytes) *released_bytes = 0;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_pool_trim: compiled out by RMM_NO_POOL");
}
RMM__IMPL rmm_status rmm_pool_validate(rmm_resource *pool) {
    (void)pool;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_pool_validate: compiled out by RMM_NO_POOL");
}
RMM__IMPL rmm_status rmm_pool_set_maximum(rmm_resource *pool, size_t maximum_bytes) {
    (void)pool;
    (void)maximum_bytes;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_pool_set_maximum: compiled out by RMM_NO_POOL");
}
RMM__IMPL rmm_status rmm_allocate_nowait(rmm_resource *mr, void **ptr, size_t bytes, rmm_stream stream, bool *would_block) {
    (void)mr, (void)bytes, (void)stream;
    if (!would_block) return RMM__NULL_OUT("rmm_allocate_nowait", "would_block");
    *would_block = ptr != NULL && bytes > 0;
    if (!ptr) return RMM__NULL_OUT("rmm_allocate_nowait", "ptr");
    *ptr = NULL;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_deallocate_nowait(rmm_resource *mr, void *ptr, size_t bytes, rmm_stream stream, bool *would_block) {
    (void)mr, (void)stream;
    if (!would_block) return RMM__NULL_OUT("rmm_deallocate_nowait", "would_block");
    *would_block = false;
    if (ptr && bytes == 0) return rmm__free_of_zero_bytes("rmm_deallocate_nowait", ptr);
    *would_block = ptr != NULL;
    return RMM_SUCCESS;
}
#endif /* RMM_NO_POOL */
/* -- its row in >>diagnostics (rmm__descs): dump, validate, upstream, allocation base, live blocks -- */
#if !defined(RMM_NO_POOL)
RMM__PRIVATE size_t rmm__pool_stream_id(const rmm__tlsf *t, void *arg) {
    (void)arg;
    return ((const rmm__sstate *)t->state)->index;
}
RMM__PRIVATE rmm_status rmm__dump_pool(rmm__json *j, rmm__pool *p) {
    static const char *const growth[] = {"geometric", "on_demand", "virtual"};
    rmm_pool_info info;
    rmm__chunk *c;
    size_t i;
    if (!rmm__spin_lock(&p->so.lock)) return rmm__reentrant("pool", "rmm_resource_dump_json");
    rmm__pool_info_locked(p, &info);
    rmm__json_open(j, "config", '{');
    rmm__json_u64(j, "initial_bytes", p->desc.initial_bytes);
    rmm__json_u64(j, "maximum_bytes", p->desc.maximum_bytes);
    rmm__json_str(j, "growth", growth[p->desc.growth]);
    rmm__json_u64(j, "growth_granularity_bytes", p->desc.growth_granularity_bytes);
    rmm__json_bool(j, "streams_outlive_pool", p->desc.streams_outlive_pool);
    if (p->backing == &rmm__vm_backing) {
        rmm__json_u64(j, "virtual_bytes", p->vm.reserved);
        rmm__json_u64(j, "virtual_extent_bytes", p->vm.extent * p->vm.page);
    }
    rmm__json_close(j, '}');
    rmm__json_open(j, "counters", '{');
    rmm__json_u64(j, "pool_bytes", info.pool_bytes);
    rmm__json_u64(j, "peak_pool_bytes", info.peak_pool_bytes);
    rmm__json_u64(j, "used_bytes", info.used_bytes);
    rmm__json_u64(j, "free_bytes", info.free_bytes);
    rmm__json_u64(j, "largest_free_block", info.largest_free_block);
    rmm__json_u64(j, "free_blocks", info.free_blocks);
    rmm__json_u64(j, "upstream_chunks", info.upstream_chunks);
    rmm__json_u64(j, "stream_states", p->so.count);
    rmm__json_u64(j, "chunks_taken", p->grows);
    rmm__json_u64(j, "chunks_given_back", p->releases);
    if (p->backing == &rmm__vm_backing) {
        const rmm__pool_vm *vm = &p->vm;
        rmm__json_u64(j, "page_bytes", vm->page);
        rmm__json_u64(j, "pages_mapped", vm->mapped_pages);
        rmm__json_u64(j, "pages_idle", vm->idle_count);
        rmm__json_u64(j, "pages_spare", vm->spare_count);
        rmm__json_u64(j, "pages_in_use", vm->used_pages);
        rmm__json_u64(j, "peak_pages_in_use", vm->peak_used_pages);
        rmm__json_u64(j, "driver_creates", vm->creates);
        rmm__json_u64(j, "driver_maps", vm->maps);
        rmm__json_u64(j, "driver_set_access", vm->access_calls);
        rmm__json_u64(j, "driver_unmaps", vm->unmaps);
        rmm__json_u64(j, "driver_releases", vm->releases);
        rmm__json_u64(j, "device_synchronizes", vm->syncs);
    }
    rmm__json_close(j, '}');
    rmm__json_open(j, "streams", '[');
    for (i = 0; i < p->so.count; i++) {
        const rmm__pstream *s = RMM__PSTREAM(p, i);
        rmm__json_stream(j, i, &s->ss, s->free.free_blocks + s->large.free_blocks + s->quick_blocks + (s->recent != NULL) + rmm__pool_ring_held(s),
                         s->free.free_bytes + s->large.free_bytes + s->quick_bytes + (s->recent ? s->recent->size : 0) + (s->ring ? s->ring->bytes : 0));
    }
    rmm__json_close(j, ']');
    rmm__json_open(j, "chunks", '[');
    for (c = p->chunks; c; c = c->next) rmm__json_chunk(j, c, rmm__pool_stream_id, NULL);
    rmm__json_close(j, ']');
    rmm__spin_unlock(&p->so.lock);
    return RMM_SUCCESS;
}
#endif

/* -- pool -- */
#if !defined(RMM_NO_POOL)
RMM__PRIVATE rmm_resource *rmm__pool_upstream(const rmm_resource *mr) { return ((const rmm__pool *)mr)->upstream; }
RMM__PRIVATE rmm_status rmm__pool_validate_mr(rmm_resource *mr) { return rmm_pool_validate(mr); }
RMM__PRIVATE rmm_status rmm__pool_dump_mr(rmm__json *j, rmm_resource *mr, int nesting) {
    (void)nesting;
    return rmm__dump_pool(j, (rmm__pool *)mr);
}
RMM__PRIVATE rmm_status rmm__pool_base_step(rmm_resource *mr, const char **p, size_t *off, rmm_resource **next) {
    rmm__pool *pool = (rmm__pool *)mr;
    const char *start = NULL;
    void **slot;
    if (!rmm__spin_lock(&pool->so.lock)) return rmm__reentrant("pool", "rmm_resource_allocation_base");
    slot = rmm__addr_map_find(&pool->used, (uintptr_t)*p);
    if (slot && !((rmm__block *)*slot)->parked) start = ((rmm__block *)*slot)->chunk->ptr;
    rmm__spin_unlock(&pool->so.lock);
    if (!start) return RMM__INVALID("rmm_resource_allocation_base(ptr=%p): not a live block of resource '%s'", (const void *)*p, rmm_resource_type_name(mr));
    if (pool->backing == &rmm__vm_backing) /* (a live block: rmm_record_stream takes it; a pointer that is not one was refused above) */
        return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_resource_allocation_base: a pool with VIRTUAL growth maps its blocks on separate physical pages, which CUDA IPC cannot export as one allocation");
    *off += (size_t)(*p - start);
    *p = start;
    *next = pool->upstream;
    return RMM_SUCCESS;
}
#if RMM__MARGIN_ON
RMM__PRIVATE rmm_status rmm__pool_live(rmm_resource *mr, rmm__live_list *live) {
    rmm__pool *p = (rmm__pool *)mr;
    if (!rmm__spin_lock(&p->so.lock)) return rmm__reentrant("pool", "rmm_resource_check_corruption");
    rmm__live_from_map(live, &p->used);
    rmm__spin_unlock(&p->so.lock);
    return RMM_SUCCESS;
}
#else
#define rmm__pool_live NULL
#endif
#endif

/* ---- CUDA-graph capture: graph-private pools (rmm_graph_pool_create; API at >>graph) ---- */
/* Every graph pool, and the streams registered with one, under rmm__graph_lock; the routing of
   rmm_allocate and rmm_deallocate reads rmm__graph_captures and rmm__graph_pools_live (one relaxed
   load each) and takes the lock only when one is non-zero. A pool keeps its upstream chunks, its
   free ranges sorted by address (each tagged with the stream that freed it during a capture, or
   NULL: open to every registered stream) and its live blocks; the lists are short (a graph's
   allocations), so each operation is a linear scan. Nothing calls out while holding the lock: an
   upstream call (a new chunk, the chunks of a pool that goes) is made after it is released, since
   the upstream's own calls may come back through the routing (a pool growing from its upstream),
   and a pool that goes while captures are registered waits (rmm__graph_zombies) until those
   registrations have ended, so that no CUDA call is made inside their captures. */
typedef struct rmm__gp_range {
    char *addr;
    size_t size;
    size_t chunk;    /* never merged across chunks (separate upstream allocations) */
    uint64_t tag;    /* if tagged: the key (rmm__graph_key) of the only stream that may take it until the captures end */
    bool tagged;     /* (a flag, not a 0 tag: 0 is the legacy default stream's key) */
} rmm__gp_range;
typedef struct rmm__gp_chunk {
    char *base;
    size_t size;
} rmm__gp_chunk;
struct rmm_graph_pool {
    rmm_graph_pool *next;
    rmm_resource *upstream;
    rmm_stream stream; /* its own: chunks are taken and returned on it */
    int device;        /* current at its creation (its stream's): current while chunks come and go */
    size_t reserve, held, used;
    rmm__gp_chunk *chunks;
    size_t nchunks, chunks_cap;
    rmm__gp_range *free;
    size_t nfree, free_cap;
    rmm__gp_chunk *live; /* (address, bytes) of each live block */
    size_t nlive, live_cap;
    struct rmm__gp_deferred *deferred; /* frees of other memory on its streams during a capture */
    size_t ndeferred, deferred_cap;
    int captures;  /* streams registered */
    bool released; /* rmm_graph_pool_destroy was called: goes once nlive is 0 */
    /* a zombie (gone while captures were registered) returns its memory when the registrations
       that existed then (numbered below seq_bound) have all ended: `waits` of them are left */
    uint64_t seq_bound;
    size_t waits;
};
typedef struct rmm__gp_deferred {
    rmm_resource *mr;
    void *ptr;
    size_t bytes, alignment;
    uint64_t key;        /* made when the registration of this key (rmm__graph_key) ends, on its stream */
    rmm__event after;    /* NULL, or (a free of a block recorded on that stream, made on another
                            stream: rmm__graph_defer_recorded) an event recorded on the free's stream
                            at the free, which the ended stream waits for first */
    bool on_legacy;      /* (such a free on the legacy stream, untouchable in the capture of a blocking
                            stream: made on `legacy`, which is never destroyed, with no event) */
    rmm_stream legacy;
} rmm__gp_deferred;
/* The deferred frees an rmm_capture_end has taken off its pool's list and is making now: still
   seen by rmm_resource_destroy (rmm__graph_defers_into) until they are made. Under the graph lock. */
typedef struct rmm__gp_batch {
    struct rmm__gp_batch *next;
    size_t n;
    rmm__gp_deferred items[1]; /* (n of them) */
} rmm__gp_batch;
static rmm__gp_batch *rmm__gp_ending_batches;
/* Whether r is target or reaches it: upstream (rmm_resource_get_upstream) or, for a binning
   resource, through its bins (defined with binning; read with atomic loads, no lock). At most 32
   levels. */
RMM__PRIVATE bool rmm__resource_reaches(const rmm_resource *r, const rmm_resource *target, int depth);
typedef struct rmm__capture_reg {
    uint64_t key; /* the stream's (rmm__graph_key) */
    rmm_graph_pool *gp;
    uint64_t seq; /* registrations are numbered in the order they begin */
} rmm__capture_reg;
static uint64_t rmm__capture_seq; /* the next registration's number */
static rmm__mutex rmm__graph_lock = RMM__MUTEX_INIT;
static rmm_graph_pool *rmm__graph_pools;
static rmm_graph_pool *rmm__graph_zombies; /* gone, their memory not yet returned (captures were registered) */
static size_t rmm__graph_returning; /* pools taken off the lists whose memory is being returned (rmm_graph_pools_pending) */
static rmm__capture_reg *rmm__captures;
static size_t rmm__captures_cap;

/* The serial of this thread's first entry (rmm__thread_reg), kept for its graph keys: a key
   destructor of the program that runs after the library's (which lets the entry go) may still end
   the thread's capture (a review's find: it got a new entry and serial, and the registration could
   never be ended). 0: not read yet. */
static RMM__TLS uint64_t rmm__graph_thread_serial;
/* The key of `stream` for the calling thread. Fails as cudaGetDevice, or with OUT_OF_MEMORY when
   the thread's entry cannot be made (host memory); no call for a stream that is not per-thread. O(1). */
RMM__PRIVATE rmm_status rmm__graph_key(const char *call, rmm_stream stream, uint64_t *key) {
    int device = 0;
    *key = rmm__graph_key_of(stream, false, 0, 0);
    if (!rmm__stream_is_per_thread(stream)) return RMM_SUCCESS;
    RMM_TRY(rmm__get_device(&device));
    if (!rmm__graph_thread_serial) {
        rmm__sreg *r = rmm__thread_reg();
        if (!r) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: out of host memory for this thread's stream entry (its per-thread default stream under graph capture)", call);
        rmm__graph_thread_serial = r->serial;
    }
    *key = rmm__graph_key_of(stream, true, rmm__graph_thread_serial, device);
    return RMM_SUCCESS;
}
/* Grows an array of `size`-byte items to hold `need`; false when host memory runs out. */
RMM__PRIVATE bool rmm__gp_reserve(void **items, size_t *cap, size_t need, size_t size) {
    size_t n = *cap ? *cap : 8;
    void *grown;
    if (need <= *cap) return true;
    while (n < need) n *= 2;
    grown = RMM_SYS_REALLOC(*items, n * size);
    if (!grown) return false;
    *items = grown;
    *cap = n;
    return true;
}
/* Puts [addr, addr+size) of `chunk` back among the free ranges with `tag`, merged with equal
   neighbours. The caller made room for one more range. */
#define RMM__GP_SAME(r, chunk_, tagged_, tag_) ((r).chunk == (chunk_) && (r).tagged == (tagged_) && (!(tagged_) || (r).tag == (tag_)))
RMM__PRIVATE void rmm__gp_put(rmm_graph_pool *gp, char *addr, size_t size, size_t chunk, bool tagged, uint64_t tag) {
    size_t i = 0;
    rmm__gp_range *f = gp->free;
    while (i < gp->nfree && f[i].addr < addr) i++;
    if (i > 0 && RMM__GP_SAME(f[i - 1], chunk, tagged, tag) && f[i - 1].addr + f[i - 1].size == addr) {
        f[i - 1].size += size;
        if (i < gp->nfree && RMM__GP_SAME(f[i], chunk, tagged, tag) && addr + size == f[i].addr) {
            f[i - 1].size += f[i].size;
            memmove(&f[i], &f[i + 1], (gp->nfree - i - 1) * sizeof *f);
            gp->nfree--;
        }
        return;
    }
    if (i < gp->nfree && RMM__GP_SAME(f[i], chunk, tagged, tag) && addr + size == f[i].addr) {
        f[i].addr = addr;
        f[i].size += size;
        return;
    }
    memmove(&f[i + 1], &f[i], (gp->nfree - i) * sizeof *f);
    f[i].addr = addr;
    f[i].size = size;
    f[i].chunk = chunk;
    f[i].tag = tagged ? tag : 0;
    f[i].tagged = tagged;
    gp->nfree++;
}
/* Every stream may take every free range again (the last capture on gp ended): untags and merges. */
RMM__PRIVATE void rmm__gp_open(rmm_graph_pool *gp) {
    size_t i, n = 0;
    for (i = 0; i < gp->nfree; i++) {
        rmm__gp_range r = gp->free[i];
        r.tag = 0;
        r.tagged = false;
        if (n > 0 && gp->free[n - 1].chunk == r.chunk && gp->free[n - 1].addr + gp->free[n - 1].size == r.addr) gp->free[n - 1].size += r.size;
        else gp->free[n++] = r;
    }
    gp->nfree = n;
}
/* The best-fitting free range that the stream of `key` may take for bytes at alignment; carves the block. */
RMM__PRIVATE bool rmm__gp_take(rmm_graph_pool *gp, size_t bytes, size_t alignment, uint64_t key, void **ptr) {
    size_t i, best = SIZE_MAX, best_size = SIZE_MAX;
    char *start = NULL;
    rmm__gp_range r;
    for (i = 0; i < gp->nfree; i++) {
        rmm__gp_range *f = &gp->free[i];
        uintptr_t a = ((uintptr_t)f->addr + alignment - 1) & ~(uintptr_t)(alignment - 1);
        size_t lead = (size_t)(a - (uintptr_t)f->addr);
        if (f->tagged && f->tag != key) continue;
        if (lead > f->size || f->size - lead < bytes || f->size >= best_size) continue;
        best = i;
        best_size = f->size;
        start = (char *)a;
    }
    if (best == SIZE_MAX) return false;
    r = gp->free[best];
    memmove(&gp->free[best], &gp->free[best + 1], (gp->nfree - best - 1) * sizeof *gp->free);
    gp->nfree--;
    if (start > r.addr) rmm__gp_put(gp, r.addr, (size_t)(start - r.addr), r.chunk, r.tagged, r.tag);
    if (start + bytes < r.addr + r.size) rmm__gp_put(gp, start + bytes, (size_t)(r.addr + r.size - (start + bytes)), r.chunk, r.tagged, r.tag);
    *ptr = start;
    return true;
}
/* Whether upstream can give a chunk while a capture may run, without a call the capture forbids: the
   cudaMalloc and memory-pool resources, on gp's own (never capturing) stream with this thread's
   capture mode relaxed. A pool cannot: the memory it would take from another stream may need an
   event recorded on that stream, which may be the capturing one, and a virtual pool synchronizes. */
RMM__PRIVATE bool rmm__gp_can_grow(rmm_resource *upstream) { return upstream->vtable == &rmm__cuda_vtable || rmm__is_async(upstream->vtable); }
/* A chunk of `bytes` from upstream on gp's own stream, synchronized before any capture uses it
   (`creating`: the reserve, outside any capture, from any upstream). Called with no lock held. */
RMM__PRIVATE rmm_status rmm__gp_fetch(rmm_graph_pool *gp, size_t bytes, bool creating, void **out) {
    int mode = RMM__CAPTURE_RELAXED;
    bool nowait = rmm__in_nowait;
    void *p = NULL;
    rmm_status st;
    *out = NULL;
    if (!creating && !rmm__gp_can_grow(gp->upstream))
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "graph pool: %zu bytes do not fit in what it holds, and its upstream (%s) cannot grow it without a call a capture "
                         "may forbid (only a cudaMalloc or async resource can): give rmm_graph_pool_create a larger reserve",
                         bytes, gp->upstream->vtable->type_name);
    RMM_TRY(rmm__capture_mode_exchange(&mode));
    rmm__in_nowait = nowait || !creating; /* (no device synchronize in a resource below) */
    {
        /* gp's device current (its stream's, and its upstream's when a sub-allocator): a capture
           on another device's stream, or a release with another device current, reaches here too
           (red team 45) */
        rmm__device_guard g;
        st = rmm__device_enter(&g, gp->device);
        if (st == RMM_SUCCESS) {
            st = rmm__allocate_own(gp->upstream, &p, bytes, gp->stream); /* (any resource, a callback's too, for the reserve; checked: NULL or misaligned is refused) */
            if (st == RMM_SUCCESS) {
                st = rmm__stream_sync_raw(gp->stream);
                if (st != RMM_SUCCESS) RMM__CLEANUP(rmm_deallocate(gp->upstream, p, bytes, gp->stream));
            }
            rmm__device_leave(&g);
        }
    }
    rmm__in_nowait = nowait;
    {
        rmm__kept_error kept;
        rmm__error_keep(&kept);
        if (rmm__capture_mode_exchange(&mode) != RMM_SUCCESS) { /* (as a failed device restore, rmm__device_leave: the memory is fetched; logged, and no failure left behind) */
            RMM__LOG(RMM_LOG_LEVEL_ERROR, "graph pool %p: this thread's capture mode could not be set back to %d: %s", (void *)gp, mode, rmm_last_error());
            rmm__error_back(&kept);
        }
    }
    if (st == RMM_SUCCESS) *out = p;
    return st;
}
/* Files a fetched chunk into gp; false when host memory runs out. Under rmm__graph_lock. */
RMM__PRIVATE bool rmm__gp_add_chunk(rmm_graph_pool *gp, void *p, size_t bytes) {
    if (!rmm__gp_reserve((void **)&gp->chunks, &gp->chunks_cap, gp->nchunks + 1, sizeof *gp->chunks) ||
        !rmm__gp_reserve((void **)&gp->free, &gp->free_cap, gp->nfree + 3, sizeof *gp->free))
        return false;
    gp->chunks[gp->nchunks].base = (char *)p;
    gp->chunks[gp->nchunks].size = bytes;
    rmm__gp_put(gp, (char *)p, bytes, gp->nchunks, false, 0);
    gp->nchunks++;
    gp->held += bytes;
    return true;
}
/* Returns every chunk of gp upstream and frees it. Called with no lock held: these are CUDA calls.
   No capture registered before gp went is still running then, but one registered since may be (a
   zombie goes at the end of the last registration it waited for): the calls are made with this
   thread's capture mode relaxed, as rmm__gp_fetch's (a red team's find: in global mode, a
   cudaFree made then would fail and invalidate that capture). */
RMM__PRIVATE void rmm__gp_release_memory(rmm_graph_pool *gp) {
    size_t i;
    int mode = RMM__CAPTURE_RELAXED;
    rmm__kept_error kept;
    bool relaxed;
    rmm__device_guard g;
    rmm__error_keep(&kept); /* (every failure below is logged: the call that releases, a free or a destroy, succeeds and leaves none behind) */
    rmm__device_enter_quietly(&g, gp->device, false); /* (the last free, a destroy or a capture's end may come with another device current) */
    relaxed = rmm__capture_mode_exchange(&mode) == RMM_SUCCESS;
    if (!relaxed) RMM__LOG(RMM_LOG_LEVEL_WARN, "graph pool %p: this thread's capture mode could not be relaxed to return its memory: %s", (void *)gp, rmm_last_error());
    for (i = 0; i < gp->nchunks; i++) { /* (gp is off the list and its stream never registered: not routed) */
        if (rmm_deallocate(gp->upstream, gp->chunks[i].base, gp->chunks[i].size, gp->stream) != RMM_SUCCESS)
            RMM__LOG(RMM_LOG_LEVEL_ERROR, "graph pool %p: returning %zu bytes at %p upstream failed: %s", (void *)gp, gp->chunks[i].size,
                     (void *)gp->chunks[i].base, rmm_last_error());
    }
    if (gp->stream) {
        bool synced = rmm__stream_sync_raw(gp->stream) == RMM_SUCCESS;
        bool destroyed = rmm__stream_destroy_raw(gp->stream) == RMM_SUCCESS; /* (either way) */
        if (!synced || !destroyed)
            RMM__LOG(RMM_LOG_LEVEL_WARN, "graph pool %p: its stream could not be synchronized or destroyed: %s", (void *)gp, rmm_last_error());
    }
    if (relaxed && rmm__capture_mode_exchange(&mode) != RMM_SUCCESS)
        RMM__LOG(RMM_LOG_LEVEL_ERROR, "graph pool %p: this thread's capture mode could not be set back to %d: %s", (void *)gp, mode, rmm_last_error());
    rmm__device_leave(&g);
    rmm__error_back(&kept);
    RMM_SYS_FREE(gp->chunks);
    RMM_SYS_FREE(gp->free);
    RMM_SYS_FREE(gp->live);
    RMM_SYS_FREE(gp->deferred);
    RMM_SYS_FREE(gp);
}
/* gp goes (destroyed, its last block free): unlisted now; returned to *now for the caller to
   release after the lock, or, while a capture is registered, kept among the zombies until the
   last registration ends. Under rmm__graph_lock. */
RMM__PRIVATE void rmm__gp_retire(rmm_graph_pool *gp, rmm_graph_pool **now) {
    rmm_graph_pool **at = &rmm__graph_pools;
    while (*at && *at != gp) at = &(*at)->next;
    if (*at) {
        *at = gp->next;
        RMM__ATOMIC_SUB(&rmm__graph_pools_live, 1);
    }
    if (RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) != 0) {
        gp->seq_bound = rmm__capture_seq;
        gp->waits = (size_t)RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures); /* (every one registered now began before) */
        gp->next = rmm__graph_zombies;
        rmm__graph_zombies = gp;
    } else {
        gp->next = NULL;
        *now = gp;
        rmm__graph_returning++; /* (until rmm__gp_returned) */
    }
}
/* After rmm__gp_release_memory of a pool rmm__gp_retire or a registration's end took off the
   lists (rmm__graph_returning). Takes rmm__graph_lock. O(1). */
RMM__PRIVATE void rmm__gp_returned(void) {
    rmm__lock(&rmm__graph_lock);
    rmm__graph_returning--;
    rmm__unlock(&rmm__graph_lock);
}
/* The graph pool the stream of `key` is registered with (*at: its registration), or NULL. Under
   rmm__graph_lock. O(captures underway). */
RMM__PRIVATE rmm_graph_pool *rmm__graph_registered(uint64_t key, size_t *at) {
    size_t i, n = (size_t)RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures);
    for (i = 0; i < n; i++) {
        if (rmm__captures[i].key != key) continue;
        if (at) *at = i;
        return rmm__captures[i].gp;
    }
    return NULL;
}
/* Whether `stream` (not a per-thread one) is registered with a graph pool. Takes rmm__graph_lock. */
RMM__PRIVATE bool rmm__graph_stream_registered(rmm_stream stream) {
    bool yes;
    rmm__lock(&rmm__graph_lock);
    yes = rmm__graph_registered(rmm__graph_key_of(stream, false, 0, 0), NULL) != NULL;
    rmm__unlock(&rmm__graph_lock);
    return yes;
}
/* Lists in gp a free deferred to the end of the registration of `key` (rmm__gp_deferred says what
   after, on_legacy and legacy mean); false when host memory runs out (nothing listed). Under
   rmm__graph_lock. O(1) amortized. */
RMM__PRIVATE bool rmm__gp_defer(rmm_graph_pool *gp, rmm_resource *mr, void *ptr, size_t bytes, size_t alignment, uint64_t key, rmm__event after,
                                bool on_legacy, rmm_stream legacy) {
    rmm__gp_deferred *d;
    if (!rmm__gp_reserve((void **)&gp->deferred, &gp->deferred_cap, gp->ndeferred + 1, sizeof *gp->deferred)) return false;
    d = &gp->deferred[gp->ndeferred++];
    d->mr = mr;
    d->ptr = ptr;
    d->bytes = bytes;
    d->alignment = alignment;
    d->key = key;
    d->after = after;
    d->on_legacy = on_legacy;
    d->legacy = legacy;
    return true;
}
/* Whether the stream of `key` (rmm__graph_key) is registered for capture now. Takes the graph lock
   (which nothing holds while taking another lock of the library; under it, only a user type's
   get_upstream runs: rmm__graph_defers_into). O(captures underway). */
RMM__PRIVATE RMM__NOINLINE bool rmm__graph_key_registered(uint64_t key) {
    bool yes;
    if (RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) == 0) return false;
    rmm__lock(&rmm__graph_lock);
    yes = rmm__graph_registered(key, NULL) != NULL;
    rmm__unlock(&rmm__graph_lock);
    return yes;
}
/* The free of a block recorded (rmm_record_stream) on the stream of `key`, registered for capture
   (rmm__recorded_order found it), made on `stream`: deferred to the end of that registration. Made
   now, the free would record an event on the capturing stream (captured, not run) and make `stream`
   wait for it, and `stream` would join the capture (a red team's find; PyTorch defers such frees
   too). An event recorded on `stream` now (it is not capturing: a free on a registered stream is
   deferred before this) keeps `stream`'s part, and rmm_capture_end makes the free on the ended
   stream, which waits for that event first: `stream` may be destroyed, or its handle reused, once
   this returns (a review's find: the free was made later on the handle). A free on the legacy
   stream (never destroyed; touching it while a blocking stream captures is an error) records
   nothing and is made at the end on it. *ended: the registration ended meanwhile (nothing done:
   free it now). OUT_OF_MEMORY iff host memory runs out, CUDA iff the event cannot be made or
   recorded (nothing freed either way). O(captures underway). */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__graph_defer_recorded(rmm_resource *mr, void *ptr, size_t bytes, size_t alignment, rmm_stream stream, uint64_t key,
                                                                bool *ended) {
    rmm_graph_pool *gp;
    rmm__event after = NULL;
    *ended = false;
    if (!rmm__graph_key_registered(key)) { /* (ended meanwhile: no event made for nothing) */
        *ended = true;
        return RMM_SUCCESS;
    }
    if (!rmm__stream_is_legacy(stream)) {
        rmm_status st = rmm__event_create(&after);
        if (st == RMM_SUCCESS && (st = rmm__event_record(after, stream)) != RMM_SUCCESS) rmm__event_destroy(after);
        RMM_TRY(st);
    }
    rmm__lock(&rmm__graph_lock);
    if ((gp = rmm__graph_registered(key, NULL)) == NULL) {
        rmm__unlock(&rmm__graph_lock);
        rmm__event_destroy(after);
        *ended = true;
        return RMM_SUCCESS;
    }
    if (!rmm__gp_defer(gp, mr, ptr, bytes, alignment, key, after, rmm__stream_is_legacy(stream), stream)) {
        rmm__unlock(&rmm__graph_lock);
        rmm__event_destroy(after);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "graph pool: out of host memory to defer the free of %p until the capture of a stream recorded for it ends "
                         "(the block stays allocated)", ptr);
    }
    rmm__unlock(&rmm__graph_lock);
    return RMM_SUCCESS;
}
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__graph_route_alloc(const char *call, void **ptr, size_t bytes, size_t alignment, rmm_stream stream, bool *routed) {
    rmm_graph_pool *gp;
    uint64_t key = 0;
    rmm_status st = rmm__graph_key(call, stream, &key);
    size_t need;
    if (st != RMM_SUCCESS) { /* (the per-thread stream's device or entry: it may be registered, so the allocation fails) */
        *routed = true;
        return st;
    }
    rmm__lock(&rmm__graph_lock);
    gp = rmm__graph_registered(key, NULL);
    *routed = gp != NULL;
    if (!gp) {
        rmm__unlock(&rmm__graph_lock);
        return RMM_SUCCESS;
    }
    if (!rmm__align_up(bytes, RMM_ALIGNMENT, &need) || need > SIZE_MAX - alignment) {
        rmm__unlock(&rmm__graph_lock);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "graph pool: allocate(bytes=%zu, alignment=%zu) overflows", bytes, alignment);
    }
    if (!rmm__gp_reserve((void **)&gp->live, &gp->live_cap, gp->nlive + 1, sizeof *gp->live) ||
        !rmm__gp_reserve((void **)&gp->free, &gp->free_cap, gp->nfree + 2, sizeof *gp->free)) {
        rmm__unlock(&rmm__graph_lock);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "graph pool: out of host memory for its lists");
    }
    if (!rmm__gp_take(gp, need, alignment, key, ptr)) {
        /* a new chunk, fetched with the lock released (the upstream's calls may route back here);
           the stream stays registered with gp meanwhile unless its owner ends that concurrently */
        size_t chunk = need + (alignment > RMM_ALIGNMENT ? alignment : 0);
        void *p = NULL;
        rmm_resource *up = gp->upstream;
        rmm_stream own = gp->stream;
        if (chunk < gp->reserve) chunk = gp->reserve;
        /* room for the chunk first: once fetched, giving it back would be a CUDA call in the capture */
        if (!rmm__gp_reserve((void **)&gp->chunks, &gp->chunks_cap, gp->nchunks + 2, sizeof *gp->chunks) ||
            !rmm__gp_reserve((void **)&gp->free, &gp->free_cap, gp->nfree + 6, sizeof *gp->free)) {
            rmm__unlock(&rmm__graph_lock);
            return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "graph pool: out of host memory for its lists");
        }
        rmm__unlock(&rmm__graph_lock);
        st = rmm__gp_fetch(gp, chunk, false, &p);
        rmm__lock(&rmm__graph_lock);
        if (st == RMM_SUCCESS && rmm__graph_registered(key, NULL) != gp) { /* (the caller ended it meanwhile: a misuse) */
            rmm__unlock(&rmm__graph_lock);
            RMM__CLEANUP(rmm_deallocate(up, p, chunk, own)); /* (not in gp's chunks, on its own stream: not routed) */
            return RMM__INVALID("graph pool: stream %p was unregistered while its allocation grew the pool", (void *)stream);
        }
        if (st == RMM_SUCCESS && !rmm__gp_add_chunk(gp, p, chunk)) { /* (only when growers raced for the room made above) */
            rmm__unlock(&rmm__graph_lock);
            RMM__LOG(RMM_LOG_LEVEL_ERROR, "graph pool %p: out of host memory for its lists: %zu bytes at %p stay out of upstream until the process ends "
                     "(giving them back now would be a CUDA call inside the capture)", (void *)gp, chunk, p);
            return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "graph pool: out of host memory for its lists");
        }
        if (st == RMM_SUCCESS && (!rmm__gp_reserve((void **)&gp->live, &gp->live_cap, gp->nlive + 1, sizeof *gp->live) ||
                                  !rmm__gp_reserve((void **)&gp->free, &gp->free_cap, gp->nfree + 2, sizeof *gp->free)))
            st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "graph pool: out of host memory for its lists (the new chunk stays in the pool)");
        if (st == RMM_SUCCESS && !rmm__gp_take(gp, need, alignment, key, ptr))
            st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "graph pool: %zu bytes did not fit in a new chunk", need);
    }
    if (st == RMM_SUCCESS) {
        gp->live[gp->nlive].base = (char *)*ptr;
        gp->live[gp->nlive].size = need;
        gp->nlive++;
        gp->used += need;
    }
    rmm__unlock(&rmm__graph_lock);
    return st;
}
/* A free of a graph pool's block goes back to it; a free of other memory on a registered stream
   (a block from before the capture, freed inside it) waits for rmm_capture_end: made now, on a
   capturing stream, the resource's event would be captured, and the block could go to other work
   while the graph still holds its address in the capture. */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__graph_route_free(const char *call, rmm_resource *mr, void *ptr, size_t bytes, size_t alignment, rmm_stream stream, bool *routed) {
    rmm_graph_pool *gp, *gone = NULL;
    size_t i, c = 0;
    uint64_t key = (uint64_t)(uintptr_t)stream; /* (while no capture is registered: only the tag's, never read) */
    if (RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) != 0) {
        rmm_status st = rmm__graph_key(call, stream, &key);
        if (st != RMM_SUCCESS) { /* (the per-thread stream's device or entry: it may be registered, so nothing is freed) */
            *routed = true;
            return st;
        }
    }
    rmm__lock(&rmm__graph_lock);
    for (gp = rmm__graph_pools; gp; gp = gp->next) {
        for (c = 0; c < gp->nchunks; c++)
            if ((char *)ptr >= gp->chunks[c].base && (char *)ptr < gp->chunks[c].base + gp->chunks[c].size) break;
        if (c < gp->nchunks) break;
    }
    if (!gp && (gp = rmm__graph_registered(key, NULL)) != NULL) {
        if (!rmm__gp_defer(gp, mr, ptr, bytes, alignment, key, NULL, false, NULL)) {
            rmm__unlock(&rmm__graph_lock);
            *routed = true;
            return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "graph pool: out of host memory to defer the free of %p until the capture ends (the block stays allocated)", ptr);
        }
        rmm__unlock(&rmm__graph_lock);
        *routed = true;
        return RMM_SUCCESS;
    }
    *routed = gp != NULL;
    if (!gp) {
        rmm__unlock(&rmm__graph_lock);
        return RMM_SUCCESS;
    }
    for (i = 0; i < gp->nlive && gp->live[i].base != (char *)ptr; i++) {}
    if (i == gp->nlive) {
        rmm__unlock(&rmm__graph_lock);
        return rmm__fail(RMM_ERROR_CORRUPTION, "graph pool %p: free of %p (bytes=%zu), which is not a live block of it (freed already, or not the address an allocation returned)",
                         (void *)gp, ptr, bytes);
    }
    { /* the size must be the one allocated, as the pool's free checks it (red team 38a: any size was taken) */
        size_t need = 0;
        if (!rmm__align_up(bytes, RMM_ALIGNMENT, &need) || need != gp->live[i].size) {
            size_t held = gp->live[i].size;
            rmm__unlock(&rmm__graph_lock);
            return rmm__fail(RMM_ERROR_CORRUPTION, "graph pool %p: free of %p (bytes=%zu): the block holds %zu bytes; the size must be the one allocated (nothing freed)",
                             (void *)gp, ptr, bytes, held);
        }
    }
    if (!rmm__gp_reserve((void **)&gp->free, &gp->free_cap, gp->nfree + 1, sizeof *gp->free)) {
        rmm__unlock(&rmm__graph_lock);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "graph pool: out of host memory for its lists (the block stays allocated)");
    }
    rmm__gp_put(gp, gp->live[i].base, gp->live[i].size, c, gp->captures > 0, key);
    gp->used -= gp->live[i].size;
    gp->live[i] = gp->live[--gp->nlive];
    if (gp->released && gp->nlive == 0) rmm__gp_retire(gp, &gone);
    rmm__unlock(&rmm__graph_lock);
    if (gone) {
        rmm__gp_release_memory(gone);
        rmm__gp_returned();
    }
    return RMM_SUCCESS;
}

/* For rmm_resource_destroy while captures are registered or ending: the resource of a free
   deferred to rmm_capture_end (listed in a graph pool, or being made by an rmm_capture_end:
   rmm__gp_ending_batches) that is mr or reaches it (rmm__resource_reaches), else NULL. Walked
   with the graph lock held, so that no resource on the way is destroyed meanwhile: each is
   reached by a listed free, and its destroy waits for this lock to see that (a red team's find:
   walked after the lock, a resource whose free another thread's end had just made was destroyed
   under the walk). The walk takes no other lock. O(deferred frees x depth of their resources'
   stacks). */
RMM__PRIVATE RMM__NOINLINE const rmm_resource *rmm__graph_defers_into(const rmm_resource *mr) {
    const rmm_graph_pool *gp;
    const rmm__gp_batch *b;
    const rmm_resource *hit = NULL;
    size_t i;
    rmm__lock(&rmm__graph_lock);
    for (gp = rmm__graph_pools; gp && !hit; gp = gp->next)
        for (i = 0; i < gp->ndeferred && !hit; i++)
            if (rmm__resource_reaches(gp->deferred[i].mr, mr, 0)) hit = gp->deferred[i].mr;
    for (b = rmm__gp_ending_batches; b && !hit; b = b->next)
        for (i = 0; i < b->n && !hit; i++)
            if (rmm__resource_reaches(b->items[i].mr, mr, 0)) hit = b->items[i].mr;
    rmm__unlock(&rmm__graph_lock);
    return hit;
}
RMM__IMPL bool rmm_resource_awaits_capture(const rmm_resource *mr) {
    if (!mr || (RMM__ATOMIC_LOAD(&rmm__graph_captures) == 0 && RMM__ATOMIC_LOAD(&rmm__graph_ending) == 0)) return false;
    return rmm__graph_defers_into(mr) != NULL;
}
/* For rmm_record_stream: 0 iff ptr is in no graph pool, 1 iff it is a live block of one, 2 iff it
   lies in one's chunk but is not a live block's address. */
/* rmm__graph_owns, and for a live block the start of the chunk holding it and the graph pool's
   upstream, which that chunk came from (rmm_resource_allocation_base). */
RMM__PRIVATE int rmm__graph_find(const void *ptr, const char **chunk, rmm_resource **upstream) {
    rmm_graph_pool *gp;
    size_t c, i;
    int owns = 0;
    rmm__lock(&rmm__graph_lock);
    for (gp = rmm__graph_pools; gp && !owns; gp = gp->next)
        for (c = 0; c < gp->nchunks && !owns; c++)
            if ((const char *)ptr >= gp->chunks[c].base && (const char *)ptr < gp->chunks[c].base + gp->chunks[c].size) {
                owns = 2;
                for (i = 0; i < gp->nlive; i++)
                    if (gp->live[i].base == (const char *)ptr) owns = 1;
                if (owns == 1) {
                    *chunk = gp->chunks[c].base;
                    *upstream = gp->upstream;
                }
            }
    rmm__unlock(&rmm__graph_lock);
    return owns;
}
RMM__PRIVATE int rmm__graph_owns(const void *ptr) {
    const char *chunk = NULL;
    rmm_resource *upstream = NULL;
    return rmm__graph_find(ptr, &chunk, &upstream);
}
RMM__IMPL rmm_status rmm_graph_pool_create(rmm_graph_pool **out, rmm_resource *upstream, size_t reserve_bytes) {
    rmm_graph_pool *gp;
    rmm_status st;
    size_t reserve;
    void *p = NULL;
    if (!out) return RMM__NULL_OUT("rmm_graph_pool_create", "out");
    *out = NULL;
    if (!rmm__align_up(reserve_bytes, RMM_ALIGNMENT, &reserve)) return RMM__INVALID("rmm_graph_pool_create: reserve_bytes %zu overflows when rounded up to 256", reserve_bytes);
    upstream = rmm__resolve(upstream);
    if (!upstream) return rmm_last_status();
    gp = (rmm_graph_pool *)rmm__calloc(1, sizeof *gp);
    if (!gp) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_graph_pool_create: out of host memory");
    gp->upstream = upstream;
    gp->reserve = reserve;
    if (!rmm__device_peek(&gp->device)) gp->device = -1;
    st = rmm__stream_create_raw(&gp->stream, false);
    if (st != RMM_SUCCESS) {
        RMM_SYS_FREE(gp);
        return st;
    }
    if (reserve) st = rmm__gp_fetch(gp, reserve, true, &p);
    if (st == RMM_SUCCESS && p && !rmm__gp_add_chunk(gp, p, reserve)) {
        RMM__CLEANUP(rmm_deallocate(upstream, p, reserve, gp->stream)); /* (the failure below is the call's; gp not listed: not routed) */
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_graph_pool_create: out of host memory");
    }
    if (st != RMM_SUCCESS) {
        rmm__gp_release_memory(gp); /* (never listed) */
        return st;
    }
    rmm__lock(&rmm__graph_lock);
    gp->next = rmm__graph_pools;
    rmm__graph_pools = gp;
    RMM__ATOMIC_ADD(&rmm__graph_pools_live, 1);
    rmm__unlock(&rmm__graph_lock);
    *out = gp;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_capture_begin(rmm_graph_pool *gp, rmm_stream stream) {
    size_t n;
    uint64_t key = 0;
    if (!gp) return RMM__NULL_OUT("rmm_capture_begin", "gp");
    RMM_TRY(rmm__graph_key("rmm_capture_begin", stream, &key));
    rmm__lock(&rmm__graph_lock);
    if (gp->released) {
        rmm__unlock(&rmm__graph_lock);
        return RMM__INVALID("rmm_capture_begin: graph pool %p was destroyed", (void *)gp);
    }
    if (rmm__graph_registered(key, NULL)) {
        rmm__unlock(&rmm__graph_lock);
        return RMM__INVALID("rmm_capture_begin: stream %p is registered with a graph pool already (rmm_capture_end it first)", (void *)stream);
    }
    n = (size_t)RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures);
    if (!rmm__gp_reserve((void **)&rmm__captures, &rmm__captures_cap, n + 1, sizeof *rmm__captures)) {
        rmm__unlock(&rmm__graph_lock);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_capture_begin: out of host memory");
    }
    rmm__captures[n].key = key;
    rmm__captures[n].gp = gp;
    rmm__captures[n].seq = rmm__capture_seq++;
    gp->captures++;
    RMM__ATOMIC_STORE(&rmm__graph_captures, n + 1);
    rmm__unlock(&rmm__graph_lock);
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__legacy_refile(const rmm_resource *mr, void *ptr, size_t bytes); /* (>>legacy) */
RMM__IMPL rmm_status rmm_capture_end(rmm_graph_pool *gp, rmm_stream stream) {
    size_t at = 0, n, i, k = 0, m = 0, failed = 0, first = 0;
    char cause[RMM__CAUSE_MAX];
    int first_cuda = 0;
    uint64_t seq;
    rmm__gp_batch *batch = NULL;
    rmm__gp_deferred *mine = NULL;
    rmm_graph_pool *zombies = NULL;
    rmm_status st = RMM_SUCCESS;
    uint64_t key = 0;
    if (!gp) return RMM__NULL_OUT("rmm_capture_end", "gp");
    RMM_TRY(rmm__graph_key("rmm_capture_end", stream, &key));
    rmm__lock(&rmm__graph_lock);
    if (rmm__graph_registered(key, &at) != gp) {
        rmm__unlock(&rmm__graph_lock);
        return RMM__INVALID("rmm_capture_end: stream %p is not registered with graph pool %p", (void *)stream, (void *)gp);
    }
    for (i = 0; i < gp->ndeferred; i++) m += gp->deferred[i].key == key;
    if (m && !(batch = (rmm__gp_batch *)RMM_SYS_MALLOC(sizeof *batch + (m - 1) * sizeof batch->items[0]))) {
        rmm__unlock(&rmm__graph_lock);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_capture_end: out of host memory (stream %p stays registered)", (void *)stream);
    }
    if (batch) { /* (listed: rmm_resource_destroy still sees these frees until they are made) */
        mine = batch->items;
        batch->n = m;
        batch->next = rmm__gp_ending_batches;
        rmm__gp_ending_batches = batch;
        RMM__ATOMIC_ADD(&rmm__graph_ending, 1);
    }
    for (i = 0; i < gp->ndeferred; i++) {
        if (gp->deferred[i].key == key) mine[k++] = gp->deferred[i];
        else gp->deferred[i - k] = gp->deferred[i];
    }
    gp->ndeferred -= k;
    n = (size_t)RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures);
    seq = rmm__captures[at].seq;
    rmm__captures[at] = rmm__captures[n - 1];
    RMM__ATOMIC_STORE(&rmm__graph_captures, n - 1);
    if (--gp->captures == 0) rmm__gp_open(gp);
    { /* pools that went while this registration ran: released once none of theirs is left */
        rmm_graph_pool **z = &rmm__graph_zombies;
        while (*z) {
            rmm_graph_pool *g = *z;
            if (seq < g->seq_bound && --g->waits == 0) {
                *z = g->next;
                g->next = zombies;
                zombies = g;
                rmm__graph_returning++; /* (until rmm__gp_returned) */
            } else {
                z = &g->next;
            }
        }
    }
    rmm__unlock(&rmm__graph_lock);
    while (zombies) {
        rmm_graph_pool *z = zombies;
        zombies = z->next;
        rmm__gp_release_memory(z);
        rmm__gp_returned();
    }
    for (i = 0; i < k; i++) { /* the frees deferred by the capture, now on the ended stream (behind the stream a
                                 recorded block was freed on: rmm__graph_defer_recorded) */
        rmm_status one = RMM_SUCCESS;
        if (mine[i].after) {
            one = rmm__stream_wait_event(stream, mine[i].after);
            rmm__event_destroy(mine[i].after);
        }
        if (one == RMM_SUCCESS)
            one = rmm_deallocate_aligned(mine[i].mr, mine[i].ptr, mine[i].bytes, mine[i].alignment, mine[i].on_legacy ? mine[i].legacy : stream);
        if (one != RMM_SUCCESS) {
            RMM__LOG(RMM_LOG_LEVEL_ERROR, "rmm_capture_end: the deferred free of %p (%zu bytes, resource '%s' %p) failed and the block stays allocated "
                     "(free it again, on the stream it was freed on): %s", mine[i].ptr, mine[i].bytes, rmm_resource_type_name(mine[i].mr), (void *)mine[i].mr, rmm_last_error());
            if (failed++ == 0) {
                st = one;
                first = i;
                first_cuda = rmm_last_cuda_error();
                rmm__copy_cause(cause, rmm_last_error());
            }
            rmm__legacy_refile(mine[i].mr, mine[i].ptr, mine[i].bytes); /* (rmmFree forgot it when it was deferred) */
        }
    }
    if (failed) /* the call named, and the block to free again (the thread's last error was the free's own words only) */
        (void)rmm__fail_cuda(first_cuda, st, "rmm_capture_end: %zu of the %zu deferred frees failed, their blocks still allocated (free each again, on the "
                             "stream it was freed on; each is logged at ERROR); the first, %p (%zu bytes, resource '%s' %p): %s", failed, k, mine[first].ptr,
                             mine[first].bytes, rmm_resource_type_name(mine[first].mr), (void *)mine[first].mr, cause);
    if (batch) {
        rmm__gp_batch **at_batch;
        rmm__lock(&rmm__graph_lock);
        for (at_batch = &rmm__gp_ending_batches; *at_batch != batch; at_batch = &(*at_batch)->next) {}
        *at_batch = batch->next;
        RMM__ATOMIC_SUB(&rmm__graph_ending, 1);
        rmm__unlock(&rmm__graph_lock);
        RMM_SYS_FREE(batch);
    }
    return st;
}
RMM__IMPL rmm_status rmm_graph_pool_get_info(rmm_graph_pool *gp, size_t *reserved_bytes, size_t *used_bytes) {
    if (!gp) return RMM__NULL_OUT("rmm_graph_pool_get_info", "gp");
    rmm__lock(&rmm__graph_lock);
    if (gp->released) {
        rmm__unlock(&rmm__graph_lock);
        return RMM__INVALID("rmm_graph_pool_get_info: graph pool %p was destroyed", (void *)gp);
    }
    if (reserved_bytes) *reserved_bytes = gp->held;
    if (used_bytes) *used_bytes = gp->used;
    rmm__unlock(&rmm__graph_lock);
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_graph_pool_destroy(rmm_graph_pool *gp) {
    rmm_graph_pool *gone = NULL;
    if (!gp) return RMM__NULL_OUT("rmm_graph_pool_destroy", "gp");
    rmm__lock(&rmm__graph_lock);
    if (gp->captures > 0) {
        int n = gp->captures;
        rmm__unlock(&rmm__graph_lock);
        return RMM__INVALID("rmm_graph_pool_destroy: %d stream(s) still registered with graph pool %p (rmm_capture_end them first)", n, (void *)gp);
    }
    if (gp->released) {
        rmm__unlock(&rmm__graph_lock);
        return RMM__INVALID("rmm_graph_pool_destroy: graph pool %p was destroyed already", (void *)gp);
    }
    gp->released = true;
    if (gp->nlive == 0) rmm__gp_retire(gp, &gone);
    rmm__unlock(&rmm__graph_lock);
    if (gone) {
        rmm__gp_release_memory(gone);
        rmm__gp_returned();
    }
    return RMM_SUCCESS;
}
RMM__IMPL size_t rmm_graph_pools_pending(rmm_resource *upstream) {
    const rmm_graph_pool *gp;
    size_t n;
    rmm__lock(&rmm__graph_lock);
    n = rmm__graph_returning;
    for (gp = rmm__graph_pools; gp; gp = gp->next)
        if (gp->released && (!upstream || gp->upstream == upstream)) n++;
    for (gp = rmm__graph_zombies; gp; gp = gp->next)
        if (!upstream || gp->upstream == upstream) n++;
    rmm__unlock(&rmm__graph_lock);
    return n;
}
RMM__IMPL rmm_pool_desc rmm_pool_desc_default(void) {
    rmm_pool_desc d;
    memset(&d, 0, sizeof d);
    d.growth = RMM_POOL_GROWTH_GEOMETRIC;
    d.growth_granularity_bytes = RMM__POOL_GRANULARITY;
    return d;
}

/* ---- the configuration string (rmm_pool_desc_parse, RMM_ALLOC_CONF) ---- */
RMM__PRIVATE bool rmm__conf_is(const char *s, size_t n, const char *word) {
    size_t i;
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (!word[i] || c != word[i]) return false;
    }
    return word[n] == '\0';
}
/* Whitespace in RMM_ALLOC_CONF: a space, a tab or a line break (a value read from a file keeps its
   newline). The locale plays no part, as isspace's would. */
static inline bool rmm__conf_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
/* A SIZE (digits, then an optional unit); false if it is not one or overflows. */
RMM__PRIVATE bool rmm__conf_size(const char *v, size_t n, size_t *out) {
    static const char *const units[][4] = {{"b", "", "", ""}, {"k", "kb", "kib", ""}, {"m", "mb", "mib", ""}, {"g", "gb", "gib", ""}, {"t", "tb", "tib", ""}};
    size_t i = 0, value = 0, u, k, shift;
    if (n == 0 || v[0] < '0' || v[0] > '9') return false;
    for (; i < n && v[i] >= '0' && v[i] <= '9'; i++) {
        size_t digit = (size_t)(v[i] - '0');
        if (value > (SIZE_MAX - digit) / 10) return false;
        value = value * 10 + digit;
    }
    while (i < n && rmm__conf_space(v[i])) i++;
    if (i == n) {
        *out = value;
        return true;
    }
    for (u = 0; u < sizeof units / sizeof units[0]; u++)
        for (k = 0; k < 4 && units[u][k][0]; k++)
            if (rmm__conf_is(v + i, n - i, units[u][k])) {
                shift = 10 * u;
                if (shift && value > (SIZE_MAX >> shift)) return false;
                *out = value << shift;
                return true;
            }
    return false;
}
RMM__IMPL rmm_status rmm_pool_desc_parse(rmm_pool_desc *desc, const char *conf) {
    rmm_pool_desc d;
    const char *p = conf;
    if (!desc) return RMM__NULL_OUT("rmm_pool_desc_parse", "desc");
    if (!conf) return RMM__NULL_OUT("rmm_pool_desc_parse", "conf");
    d = *desc;
    while (*p) {
        const char *pair, *end, *colon, *key, *val;
        size_t klen, vlen, size = 0, *field;
        int plen;
        while (rmm__conf_space(*p) || *p == ',') p++;
        if (!*p) break;
        pair = p;
        end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        p = end;
        while (end > pair && rmm__conf_space(end[-1])) end--;
        plen = rmm__quoted_len(pair, (size_t)(end - pair)); /* (a whole character: a red team's find) */
        colon = (const char *)memchr(pair, ':', (size_t)(end - pair));
        if (!colon) return RMM__INVALID("rmm_pool_desc_parse: \"%.*s\" is not key:value", plen, pair);
        key = pair;
        klen = (size_t)(colon - pair);
        while (klen && rmm__conf_space(key[klen - 1])) klen--;
        val = colon + 1;
        while (val < end && rmm__conf_space(*val)) val++;
        vlen = (size_t)(end - val);
        field = rmm__conf_is(key, klen, "initial")       ? &d.initial_bytes
                : rmm__conf_is(key, klen, "maximum")     ? &d.maximum_bytes
                : rmm__conf_is(key, klen, "granularity") ? &d.growth_granularity_bytes
                : rmm__conf_is(key, klen, "virtual")     ? &d.virtual_bytes
                : rmm__conf_is(key, klen, "extent")      ? &d.virtual_extent_bytes
                                                         : NULL; /* the size keys */
        if (rmm__conf_is(key, klen, "growth")) {
            if (rmm__conf_is(val, vlen, "geometric")) d.growth = RMM_POOL_GROWTH_GEOMETRIC;
            else if (rmm__conf_is(val, vlen, "on_demand") || rmm__conf_is(val, vlen, "on-demand")) d.growth = RMM_POOL_GROWTH_ON_DEMAND;
            else if (rmm__conf_is(val, vlen, "virtual")) d.growth = RMM_POOL_GROWTH_VIRTUAL;
            else return RMM__INVALID("rmm_pool_desc_parse: \"%.*s\": growth is geometric, on_demand or virtual", plen, pair);
        } else if (rmm__conf_is(key, klen, "streams_outlive")) {
            if (rmm__conf_is(val, vlen, "true") || rmm__conf_is(val, vlen, "1")) d.streams_outlive_pool = true;
            else if (rmm__conf_is(val, vlen, "false") || rmm__conf_is(val, vlen, "0")) d.streams_outlive_pool = false;
            else return RMM__INVALID("rmm_pool_desc_parse: \"%.*s\": streams_outlive is true or false", plen, pair);
        } else if (field) {
            if (field == &d.maximum_bytes && rmm__conf_is(val, vlen, "none")) size = 0;
            else if (!rmm__conf_size(val, vlen, &size))
                return RMM__INVALID("rmm_pool_desc_parse: \"%.*s\": the value is not a size (a whole number with an optional unit B, KiB, MiB, GiB, TiB)", plen, pair);
            if (size % RMM_ALIGNMENT)
                return RMM__INVALID("rmm_pool_desc_parse: \"%.*s\": %zu bytes is not a multiple of 256", plen, pair, size);
            if (field == &d.virtual_extent_bytes && size > ((size_t)4 << 30)) /* (rmm_pool_create's bound, checked here too) */
                return RMM__INVALID("rmm_pool_desc_parse: \"%.*s\": an extent is at most 4 GiB", plen, pair);
            *field = size;
        } else {
            return RMM__INVALID("rmm_pool_desc_parse: \"%.*s\": unknown key (initial, maximum, growth, granularity, virtual, extent, streams_outlive)", plen, pair);
        }
    }
    *desc = d;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_pool_desc_from_env(rmm_pool_desc *desc) {
    const char *conf = getenv("RMM_ALLOC_CONF");
    rmm_status st;
    if (!desc) return RMM__NULL_OUT("rmm_pool_desc_from_env", "desc");
    if (!conf) return RMM_SUCCESS;
    st = rmm_pool_desc_parse(desc, conf);
    if (st != RMM_SUCCESS) {
        char why[sizeof rmm__last_error_text];
        rmm__copy_text(why, sizeof why, rmm_last_error());
        return RMM__INVALID("RMM_ALLOC_CONF=\"%.*s\": %s", rmm__quoted_len(conf, strlen(conf)), conf, why);
    }
    return RMM_SUCCESS;
}

/* ======================================================================================= */
/* ==== fixed: fixed-size blocks, stream-ordered, O(1) ================================== */
/* ======================================================================================= */ /* >>fixed */

/* Chunks of blocks_per_chunk blocks from upstream. Each chunk has one bit per block, set while the
   block is free: a double free, and a free of a pointer inside a chunk that is not a block start,
   are CORRUPTION in every build at O(1) beyond the chunk lookup. Per stream: a LIFO of free blocks
   (chunk and index), on the stream-order core like the pool. */
typedef struct rmm__fchunk {
    char *ptr;
    void *heap;       /* RMM_NVTX: the chunk's NVTX heap */
    uint64_t *free_bits;
#if RMM__MARGIN_ON
    size_t *requested; /* RMM_DEBUG_MARGIN: the bytes asked for, per block */
    uint64_t *serial;  /* RMM_DEBUG_MARGIN: per block, its allocation's rmm__margin_serial */
#endif
#if RMM__DEBUG
    size_t *asked;     /* RMM_DEBUG: per live block, the bytes it was allocated with (its free must pass them) */
#endif
} rmm__fchunk;
typedef struct rmm__fentry {
    rmm__fchunk *chunk;
    size_t index;
} rmm__fentry;
/* Per stream: a LIFO stack of free blocks. stack[0, covered) is free memory any stream may take
   behind the state's event; above it sit the blocks an eager stream (foreign, or a thread's default
   stream) freed since its last event, which only that stream takes back. As in the pool's ring
   (rmm__pool_ring): an eager stream records an event per free for its first RMM__POOL_RING_AFTER
   frees, then one per rmm__fixed_ring_cap frees (RMM__SO_RING, up to RMM__FIXED_RING as the
   resource grows: 1/16 of its blocks, as the pool's ring holds 1/16 of its bytes), which covers the
   whole stack (recorded with the lock let go, as the pool's: rmm__pool_cover_unlocked); a stack
   whose stream may be gone is covered by a device synchronize (rmm__so_unstick). Lazy streams:
   covered == count. (Until 2026-11-26 the cap was 32 blocks at any size: an event per 32 frees on
   churn_small.) */
#ifndef RMM__FIXED_RING
#define RMM__FIXED_RING 256
#endif
typedef struct rmm__fstream {
    rmm__sstate ss;
    rmm__fentry *stack; /* free blocks, LIFO */
    size_t count, cap;
    size_t covered;     /* stack[0, covered) may go to other streams */
    size_t pushes;      /* frees ever pushed (an unlocked record covers the stack if none came in meanwhile) */
} rmm__fstream;
typedef struct rmm__fixed {
    rmm_resource base;
    rmm__so so;
    rmm_resource *upstream;
    size_t block_bytes, blocks_per_chunk, chunk_bytes;
    int device;
    rmm__fchunk **chunks; /* sorted by address */
    uintptr_t *chunk_base; /* chunks[i]->ptr, side by side: a free's search reads one array, not a
                              chunk record per step (binning's churn_small: about 125 chunks) */
    size_t chunk_count, chunk_cap;
    size_t used_blocks;
    size_t grow_alignment; /* under the lock: the alignment of the allocation acquiring a block (a new chunk that cannot meet it goes back) */
    rmm__kept_error *grow_kept; /* under the lock: NULL, or where a growth keeps the thread's error record first (once; grow_kept_taken) */
    bool grow_kept_taken;
    size_t debug_calls;    /* RMM_DEBUG: calls so far (atomic; rmm__debug_validated) */
} rmm__fixed;
/* How many blocks an eager stream may park uncovered on its stack (see rmm__fstream). O(1). */
static inline size_t rmm__fixed_ring_cap(const rmm__fixed *f) {
    return rmm__min(RMM__FIXED_RING, rmm__max(RMM__SO_RING, f->chunk_count * f->blocks_per_chunk / 16));
}
RMM__PRIVATE rmm_status rmm__fixed_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream);
RMM__PRIVATE rmm_status rmm__fixed_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream);
RMM__PRIVATE void rmm__fixed_destroy(rmm_resource *self);
#if RMM__DEBUG
/* RMM_DEBUG: the fixed-size resource and the arena validate every invariant (rmm_resource_validate)
   after each of their first RMM__DEBUG_VALIDATE_ALL allocates and frees, and after every
   RMM__DEBUG_VALIDATE_ALL-th from then on, once the call's lock is let go (a call made from inside
   the resource's own upstream, where its lock is this thread's, skips it); a broken invariant
   (CORRUPTION) is printed and RMM_ASSERT fails; a validation that could not run (out of host
   memory for its bitmaps) is passed over. The call's own status and last error are kept. A validation is
   O(the resource's blocks), so validating every call made a debug run quadratic (an arena filled
   with 60,000 blocks: 3 s -> 408 s); this keeps it O(RMM__DEBUG_VALIDATE_ALL) a call. (API.md asks
   for validation after every call, which the pool does, under its lock: RMM__POOL_DEBUG_CHECK.)
   counter: the resource's debug_calls. */
#define RMM__DEBUG_VALIDATE_ALL 1024
RMM__PRIVATE rmm_status rmm__debug_validated(rmm_resource *mr, size_t *counter, rmm_status st) {
    rmm__kept_error kept;
    rmm_status v;
    size_t n = RMM__ATOMIC_ADD_RELAXED(counter, 1);
    if (n > RMM__DEBUG_VALIDATE_ALL && n % RMM__DEBUG_VALIDATE_ALL != 0) return st;
    rmm__error_keep(&kept);
    v = rmm_resource_validate(mr);
    if (v == RMM_ERROR_CORRUPTION) { /* (NOT_SUPPORTED: re-entered; OUT_OF_MEMORY: the check's own host memory) */
        fprintf(stderr, "rmm.h: %s\n", rmm_last_error());
        RMM_ASSERT(v == RMM_SUCCESS);
    }
    rmm__error_back(&kept);
    return st;
}
RMM__PRIVATE rmm_status rmm__fixed_allocate_checked(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    RMM_TRY(rmm__debug_device_check("fixed_size", "allocate", ((rmm__fixed *)self)->device));
    return rmm__debug_validated(self, &((rmm__fixed *)self)->debug_calls, rmm__fixed_allocate(self, ptr, bytes, alignment, stream));
}
RMM__PRIVATE rmm_status rmm__fixed_deallocate_checked(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    RMM_TRY(rmm__debug_device_check("fixed_size", "deallocate", ((rmm__fixed *)self)->device));
    return rmm__debug_validated(self, &((rmm__fixed *)self)->debug_calls, rmm__fixed_deallocate(self, ptr, bytes, alignment, stream));
}
static const rmm_resource_vtable rmm__fixed_vtable = {"fixed_size", rmm__fixed_allocate_checked, rmm__fixed_deallocate_checked, NULL, rmm__fixed_destroy};
#else
static const rmm_resource_vtable rmm__fixed_vtable = {"fixed_size", rmm__fixed_allocate, rmm__fixed_deallocate, NULL, rmm__fixed_destroy};
#endif
#define RMM__FIXED_OF(so) ((rmm__fixed *)((char *)(so) - offsetof(rmm__fixed, so)))
#define RMM__FSTREAM(f, i) ((rmm__fstream *)(f)->so.list[i])

static inline char *rmm__fentry_ptr(const rmm__fixed *f, rmm__fentry e) { return e.chunk->ptr + e.index * f->block_bytes; }
static inline bool rmm__fchunk_is_free(const rmm__fchunk *c, size_t i) { return (c->free_bits[i >> 6] >> (i & 63)) & 1u; }
static inline void rmm__fchunk_mark(rmm__fchunk *c, size_t i, bool free_now) {
    if (free_now) c->free_bits[i >> 6] |= (uint64_t)1 << (i & 63);
    else c->free_bits[i >> 6] &= ~((uint64_t)1 << (i & 63));
}
RMM__PRIVATE bool rmm__fixed_reserve(rmm__fstream *s, size_t extra) {
    if (s->count + extra > s->cap) {
        size_t cap = rmm__max(s->cap * 2, s->count + extra);
        rmm__fentry *grown = (rmm__fentry *)RMM_SYS_REALLOC(s->stack, cap * sizeof *grown);
        if (!grown) return false;
        s->stack = grown;
        s->cap = cap;
    }
    return true;
}

/* ---- the fixed-size resource's free-list table for the stream-order core ---- */
RMM__PRIVATE bool rmm__fixed_state_init(rmm__so *so, rmm__sstate *s) {
    (void)so;
    (void)s;
    return true;
}
RMM__PRIVATE void rmm__fixed_state_fini(rmm__so *so, rmm__sstate *s) {
    rmm__fstream *fs = (rmm__fstream *)s;
    (void)so;
    RMM_SYS_FREE(fs->stack);
    fs->stack = NULL;
    fs->count = fs->cap = fs->covered = 0;
}
RMM__PRIVATE bool rmm__fixed_holds(rmm__so *so, rmm__sstate *s) {
    (void)so;
    return ((rmm__fstream *)s)->count > 0;
}
/* Any block serves any request: the highest one another stream may take (rmm__fixed_take takes
   that one too). */
RMM__PRIVATE void *rmm__fixed_find_in(rmm__so *so, rmm__sstate *s, const void *req, bool exhaustive) {
    rmm__fstream *fs = (rmm__fstream *)s;
    (void)so;
    (void)req;
    (void)exhaustive;
    return fs->covered ? &fs->stack[fs->covered - 1] : NULL;
}
RMM__PRIVATE bool rmm__fixed_stuck(rmm__so *so, rmm__sstate *s) {
    (void)so;
    return ((rmm__fstream *)s)->count > ((rmm__fstream *)s)->covered;
}
RMM__PRIVATE void rmm__fixed_unstick(rmm__so *so, rmm__sstate *s) {
    (void)so;
    ((rmm__fstream *)s)->covered = ((rmm__fstream *)s)->count;
}
/* Moves the donor's covered blocks into the taker's covered part (below the taker's own uncovered
   ones); out of host memory, what fits. O(blocks moved + uncovered). */
RMM__PRIVATE void rmm__fixed_absorb(rmm__so *so, rmm__sstate *taker_state, rmm__sstate *donor_state) {
    rmm__fstream *taker = (rmm__fstream *)taker_state, *donor = (rmm__fstream *)donor_state;
    size_t n = donor->covered, above;
    (void)so;
    if (!rmm__fixed_reserve(taker, n)) n = rmm__min(taker->cap - taker->count, n);
    if (n == 0) return;
    above = taker->count - taker->covered;
    memmove(taker->stack + taker->covered + n, taker->stack + taker->covered, above * sizeof *taker->stack);
    memcpy(taker->stack + taker->covered, donor->stack + donor->covered - n, n * sizeof *taker->stack);
    taker->count += n;
    taker->covered += n;
    memmove(donor->stack + donor->covered - n, donor->stack + donor->covered, (donor->count - donor->covered) * sizeof *donor->stack);
    donor->count -= n;
    donor->covered -= n;
}
/* Adds a chunk of blocks_per_chunk blocks from upstream to s. */
RMM__PRIVATE rmm_status rmm__fixed_grow_in(rmm__so *so, rmm__sstate *ss, const void *req) {
    rmm__fixed *f = RMM__FIXED_OF(so);
    rmm__fstream *s = (rmm__fstream *)ss;
    rmm__fchunk *c;
    void *ptr = NULL;
    size_t i, at, words = (f->blocks_per_chunk + 63) / 64;
    (void)req;
    if (f->grow_kept && !f->grow_kept_taken) { /* (before the growth's first step that can fail; beside an upstream call the copy costs little) */
        rmm__error_keep(f->grow_kept);
        f->grow_kept_taken = true;
    }
    if (f->chunk_count == f->chunk_cap) {
        size_t cap = f->chunk_cap ? f->chunk_cap * 2 : 8;
        rmm__fchunk **grown = (rmm__fchunk **)RMM_SYS_REALLOC(f->chunks, cap * sizeof *grown);
        uintptr_t *bases;
        if (!grown) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "fixed_size: out of host memory for the chunk table");
        f->chunks = grown; /* (chunk_cap moves once both have grown: a failure below leaves it, and the next growth asks again) */
        bases = (uintptr_t *)RMM_SYS_REALLOC(f->chunk_base, cap * sizeof *bases);
        if (!bases) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "fixed_size: out of host memory for the chunk table");
        f->chunk_base = bases;
        f->chunk_cap = cap;
    }
    if (!rmm__fixed_reserve(s, f->blocks_per_chunk)) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "fixed_size: out of host memory for block lists");
    c = (rmm__fchunk *)rmm__calloc(1, sizeof *c);
    if (c) c->free_bits = (uint64_t *)rmm__calloc(words, sizeof(uint64_t));
#if RMM__MARGIN_ON
    if (c && c->free_bits && (!(c->requested = (size_t *)rmm__calloc(f->blocks_per_chunk, sizeof(size_t))) || !(c->serial = (uint64_t *)rmm__calloc(f->blocks_per_chunk, sizeof(uint64_t))))) {
        RMM_SYS_FREE(c->requested);
        RMM_SYS_FREE(c->free_bits);
        c->free_bits = NULL;
    }
#endif
#if RMM__DEBUG
    if (c && c->free_bits && !(c->asked = (size_t *)rmm__calloc(f->blocks_per_chunk, sizeof(size_t)))) {
#if RMM__MARGIN_ON
        RMM_SYS_FREE(c->requested);
        RMM_SYS_FREE(c->serial);
#endif
        RMM_SYS_FREE(c->free_bits);
        c->free_bits = NULL;
    }
#endif
    if (!c || !c->free_bits) {
        RMM_SYS_FREE(c);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "fixed_size: out of host memory for a chunk record");
    }
    {
        rmm_status st = rmm__allocate_own(f->upstream, &ptr, f->chunk_bytes, s->ss.handle); /* (checked: NULL or misaligned is refused) */
        if (st == RMM_SUCCESS && f->grow_alignment > RMM_ALIGNMENT && ((uintptr_t)ptr & (f->grow_alignment - 1)) != 0) {
            /* every block of a chunk is aligned as its base (the alignment divides the block
               size): this one cannot serve the request, and goes back (it was kept, a chunk
               per failed call: a red team's find, 2026-11-29) */
            RMM__CLEANUP(rmm_deallocate(f->upstream, ptr, f->chunk_bytes, s->ss.handle));
            st = RMM__INVALID("fixed_size: the next block is not aligned to %zu bytes (a new chunk from upstream is aligned to less)", f->grow_alignment);
        } else if (st == RMM_SUCCESS && (st = rmm__so_grown(&s->ss, f->upstream)) != RMM_SUCCESS) {
            RMM__CLEANUP(rmm_deallocate(f->upstream, ptr, f->chunk_bytes, s->ss.handle));
        }
        if (st != RMM_SUCCESS) {
            RMM_SYS_FREE(c->free_bits);
#if RMM__MARGIN_ON
            RMM_SYS_FREE(c->requested);
            RMM_SYS_FREE(c->serial);
#endif
#if RMM__DEBUG
            RMM_SYS_FREE(c->asked);
#endif
            RMM_SYS_FREE(c);
            return st;
        }
    }
    c->ptr = (char *)ptr;
    c->heap = rmm__san_heap_register(ptr, f->chunk_bytes);
    for (at = f->chunk_count; at > 0 && f->chunk_base[at - 1] > (uintptr_t)c->ptr; at--) {
        f->chunks[at] = f->chunks[at - 1];
        f->chunk_base[at] = f->chunk_base[at - 1];
    }
    f->chunks[at] = c;
    f->chunk_base[at] = (uintptr_t)c->ptr;
    f->chunk_count++;
    if (!s->ss.lazy && rmm__upstream_ordered(f->upstream)) s->covered = s->count; /* the record rmm__so_grown made covers what s freed before it */
    if (s->covered != s->count) { /* new blocks go below the uncovered ones: they are free for anyone (behind s's event) */
        memmove(s->stack + s->covered + f->blocks_per_chunk, s->stack + s->covered, (s->count - s->covered) * sizeof *s->stack);
    }
    for (i = f->blocks_per_chunk; i-- > 0;) {
        rmm__fentry e;
        e.chunk = c;
        e.index = i;
        rmm__fchunk_mark(c, i, true);
        s->stack[s->covered + (f->blocks_per_chunk - 1 - i)] = e;
    }
    s->count += f->blocks_per_chunk;
    s->covered += f->blocks_per_chunk;
    RMM__LOG(RMM_LOG_LEVEL_DEBUG, "fixed_size %p: grew by %zu blocks of %zu bytes", (void *)f, f->blocks_per_chunk, f->block_bytes);
    return RMM_SUCCESS;
}
static const rmm__so_ops rmm__fixed_so_ops = {sizeof(rmm__fstream), rmm__fixed_state_init, rmm__fixed_state_fini, rmm__fixed_holds, rmm__fixed_find_in,
                                              rmm__fixed_absorb,      rmm__fixed_grow_in,    rmm__fixed_stuck,      rmm__fixed_unstick,
                                              NULL,                   NULL};

/* The chunk holding ptr, or NULL. O(log chunks). */
RMM__PRIVATE rmm__fchunk *rmm__fixed_chunk_of(const rmm__fixed *f, const void *ptr) {
    const uintptr_t *base = f->chunk_base, key = (uintptr_t)ptr;
    size_t lo = 0, hi = f->chunk_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (base[mid] <= key) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0 || key - base[lo - 1] >= f->chunk_bytes) return NULL;
    return f->chunks[lo - 1];
}
/* true iff ptr is the start of a block of one of f's chunks (wherever it is). Caller holds the lock. */
RMM__PRIVATE bool rmm__fixed_owns(const rmm__fixed *f, const void *ptr) {
    const rmm__fchunk *c = rmm__fixed_chunk_of(f, ptr);
    return c && ((uintptr_t)ptr - (uintptr_t)c->ptr) % f->block_bytes == 0;
}
/* The fixed-size allocation's slow path, with f's lock held: s has no free block of its own, so
   another stream's covered block or a new chunk from upstream (and once more after a device
   synchronize has covered other streams' blocks). A growth that failed before a try that succeeded
   leaves no failure behind (a red team's find, 2026-11-30). Out of line: its kept record (1 KiB)
   stays off the allocation's own frame. */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__fixed_acquire(rmm__fixed *f, rmm__sstate *ss, size_t *bytes, size_t alignment, rmm__sstate **from_state, void **item) {
    rmm__kept_error kept;
    rmm__wait_arm arm;
    rmm_status st;
    f->grow_alignment = alignment;
    f->grow_kept = &kept;
    f->grow_kept_taken = false;
    arm = rmm__wait_arm_set(&kept, &f->grow_kept_taken); /* (a failed wait for another stream, then a success: no failure left) */
    st = rmm__so_acquire(&f->so, ss, bytes, from_state, item);
    if (st == RMM_ERROR_OUT_OF_MEMORY && rmm__so_unstick(&f->so, ss, true)) /* other streams' uncovered blocks, covered by a synchronize */
        st = rmm__so_acquire(&f->so, ss, bytes, from_state, item);
    rmm__wait_arm_back(arm);
    f->grow_alignment = 0;
    f->grow_kept = NULL;
    if (st == RMM_SUCCESS && f->grow_kept_taken) rmm__error_back(&kept);
    return st;
}
RMM__PRIVATE rmm_status rmm__fixed_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__fixed *f = (rmm__fixed *)self;
    rmm__sstate *ss, *from_state;
    rmm__fstream *s, *from;
    rmm__fentry e;
    void *item;
    rmm_status st;
    uint64_t prekey;
    size_t at;
#if RMM__MARGIN_ON
    if (RMM__UNLIKELY(f->block_bytes < RMM__MARGIN || bytes > f->block_bytes - RMM__MARGIN))
#else
    if (RMM__UNLIKELY(bytes > f->block_bytes))
#endif
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "fixed_size: out of memory: %zu bytes exceed the block size %zu%s", bytes, f->block_bytes,
                         RMM__MARGIN_ON ? " less the debug margin" : "");
    if (RMM__UNLIKELY(alignment > RMM_ALIGNMENT && (f->block_bytes % alignment != 0)))
        return RMM__INVALID("fixed_size: alignment %zu does not divide the block size %zu", alignment, f->block_bytes);
    if (RMM__UNLIKELY(!rmm__spin_lock(&f->so.lock))) return rmm__reentrant("fixed_size", "allocate");
    prekey = rmm__so_prekey(&f->so, stream); /* (under the lock: see rmm__so_prekey) */
    st = rmm__so_state(&f->so, stream, prekey, &ss);
    if (RMM__UNLIKELY(st != RMM_SUCCESS)) goto out;
    s = from = (rmm__fstream *)ss;
    if (RMM__UNLIKELY(s->count == 0)) {
        st = rmm__fixed_acquire(f, ss, &bytes, alignment, &from_state, &item);
        if (st != RMM_SUCCESS) {
            if (st == RMM_ERROR_OUT_OF_MEMORY) { /* every stream's lists were empty: nothing is free */
                char cause[RMM__CAUSE_MAX];
                rmm__oom_facts fa;
                memset(&fa, 0, sizeof fa);
                fa.cause_cuda = rmm_last_cuda_error();
                rmm__copy_cause(cause, rmm_last_error());
                fa.who = "fixed_size";
                fa.bytes = bytes;
                fa.alignment = alignment;
                fa.stream = stream;
                fa.held = f->chunk_count * f->chunk_bytes;
                fa.live = f->used_blocks * f->block_bytes;
                rmm__spin_unlock(&f->so.lock);
                return rmm__oom_explain(self, &fa, cause);
            }
            goto out;
        }
        from = (rmm__fstream *)from_state;
    }
    at = from == s ? from->count - 1 : from->covered - 1; /* another stream's: a covered one */
    e = from->stack[at];
    /* blocks of a chunk are aligned only as far as its base; re-check big alignments */
    if (RMM__UNLIKELY(alignment > RMM_ALIGNMENT && ((uintptr_t)rmm__fentry_ptr(f, e) & (alignment - 1)) != 0)) {
        st = RMM__INVALID("fixed_size: the next block is not aligned to %zu bytes", alignment);
        goto out;
    }
    if (RMM__UNLIKELY(at + 1 < from->count)) memmove(from->stack + at, from->stack + at + 1, (from->count - at - 1) * sizeof *from->stack);
    from->count--;
    if (from->covered > at) from->covered--;
    rmm__fchunk_mark(e.chunk, e.index, false);
    f->used_blocks++;
    *ptr = rmm__fentry_ptr(f, e);
    rmm__san_region_register(e.chunk->heap, *ptr, bytes);
#if RMM__MARGIN_ON
    e.chunk->requested[e.index] = rmm__margin_set(*ptr, bytes, stream) ? bytes : SIZE_MAX;
    e.chunk->serial[e.index] = rmm__margin_serial();
#endif
#if RMM__DEBUG
    e.chunk->asked[e.index] = bytes;
#endif
    rmm__so_taken(&f->so, ss, &from->ss);
out:
    rmm__spin_unlock(&f->so.lock);
    return st;
}
RMM__PRIVATE rmm_status rmm__fixed_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__fixed *f = (rmm__fixed *)self;
    rmm__sstate *ss;
    rmm__fstream *s;
    rmm__fchunk *c;
    rmm__fentry e;
    size_t offset;
    rmm_status st;
    uint64_t prekey;
    bool park = false, cached;
    (void)alignment;
    if (RMM__UNLIKELY(bytes > f->block_bytes))
        return rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: deallocate(ptr=%p, bytes=%zu): larger than the block size %zu", ptr, bytes, f->block_bytes);
#if RMM__MARGIN_ON
    {
        size_t requested = SIZE_MAX;
        if (!rmm__spin_lock(&f->so.lock)) return rmm__reentrant("fixed_size", "deallocate");
        c = rmm__fixed_chunk_of(f, ptr);
        offset = c ? (size_t)((uintptr_t)ptr - (uintptr_t)c->ptr) : 0;
        if (c && offset % f->block_bytes == 0 && !rmm__fchunk_is_free(c, offset / f->block_bytes)) requested = c->requested[offset / f->block_bytes];
        rmm__spin_unlock(&f->so.lock);
        if (requested != SIZE_MAX) RMM_TRY(rmm__margin_check("fixed_size", ptr, requested, stream)); /* a block written past stays allocated */
    }
#endif
again:
    prekey = rmm__so_prekey_for_free(&f->so, stream, &cached); /* (as the pool's free: see rmm__so_prekey_for_free) */
    if (RMM__UNLIKELY(!rmm__spin_lock(&f->so.lock))) return rmm__reentrant("fixed_size", "deallocate");
    c = rmm__fixed_chunk_of(f, ptr);
    offset = c ? (size_t)((uintptr_t)ptr - (uintptr_t)c->ptr) : 0;
    if (RMM__UNLIKELY(!c || offset % f->block_bytes != 0 || rmm__fchunk_is_free(c, offset / f->block_bytes))) {
        rmm__spin_unlock(&f->so.lock);
        return rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: deallocate(ptr=%p): %s", ptr,
                         c && offset % f->block_bytes == 0 ? "the block is free already (a double free)" : "not a block of this resource");
    }
    e.chunk = c;
    e.index = offset / f->block_bytes;
#if RMM__DEBUG
    if (RMM__UNLIKELY(c->asked[e.index] != bytes)) {
        size_t asked = c->asked[e.index];
        rmm__spin_unlock(&f->so.lock);
        return rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: deallocate(ptr=%p, bytes=%zu): the block was allocated with %zu bytes; the size must be the one allocated (RMM_DEBUG; nothing freed)",
                         ptr, bytes, asked);
    }
#endif
    st = rmm__so_state(&f->so, stream, prekey, &ss);
    s = (rmm__fstream *)ss;
    if (st == RMM_SUCCESS && !rmm__fixed_reserve(s, 1)) st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "fixed_size: out of host memory for block lists");
    if (st == RMM_SUCCESS) { /* an eager stream parks it uncovered (see rmm__fstream), or records an event */
        park = !ss->lazy && ss->eager_frees >= RMM__SO_RING_AFTER && s->count - s->covered < rmm__fixed_ring_cap(f);
        if (!park && !ss->lazy && cached) { /* an event on the handle covers the stack only if the handle still names s's stream */
            rmm__spin_unlock(&f->so.lock);
            rmm__foreign_hint_key = 0;
            goto again;
        }
        if (!park && ss->lazy) st = rmm__so_freed(ss);
        if (!park && !ss->lazy) { /* the event, with the lock let go */
            st = rmm__so_record_unlocked(&f->so, ss, &s->pushes);
            if (st == RMM_SUCCESS && rmm__fchunk_is_free(c, e.index))
                st = rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: deallocate(ptr=%p): freed by another thread meanwhile (a double free)", ptr);
            if (st == RMM_SUCCESS && !rmm__fixed_reserve(s, 1)) st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "fixed_size: out of host memory for block lists");
        }
        if (st == RMM_SUCCESS && !park && !ss->lazy && ss->eager_frees < RMM__SO_RING_AFTER) ss->eager_frees++;
    }
    if (RMM__UNLIKELY(st != RMM_SUCCESS)) {
        rmm__spin_unlock(&f->so.lock);
        return st;
    }
    rmm__fchunk_mark(c, e.index, true);
    s->stack[s->count++] = e;
    s->pushes++;
    if (!park) s->covered = s->count; /* lazy, or just recorded: the event covers the whole stack */
    rmm__san_region_unregister(c->heap, ptr);
    f->used_blocks--;
    rmm__spin_unlock(&f->so.lock);
    return RMM_SUCCESS;
}
/* validate's index of the chunk records by address: a free block's chunk is found in O(log chunks)
   (a scan per free block made validate O(free blocks x chunks): 0.3-0.8 s at 40,000 one-block
   chunks, every 1024th call of an RMM_DEBUG build: red team 35) */
typedef struct rmm__fchunk_at {
    uintptr_t chunk;
    size_t k;
} rmm__fchunk_at;
RMM__PRIVATE int rmm__fchunk_at_cmp(const void *a, const void *b) {
    uintptr_t x = ((const rmm__fchunk_at *)a)->chunk, y = ((const rmm__fchunk_at *)b)->chunk;
    return x < y ? -1 : x > y;
}
/* f's chunk records sorted by address, each with its index in f->chunks (chunk_count + 1 entries
   allocated), or NULL if host memory runs out. O(chunks log chunks). */
RMM__PRIVATE rmm__fchunk_at *rmm__fchunk_sorted(const rmm__fixed *f) {
    rmm__fchunk_at *at = (rmm__fchunk_at *)rmm__calloc(f->chunk_count + 1, sizeof *at);
    size_t i;
    for (i = 0; at && i < f->chunk_count; i++) {
        at[i].chunk = (uintptr_t)f->chunks[i];
        at[i].k = i;
    }
    if (at && f->chunk_count > 1) qsort(at, f->chunk_count, sizeof *at, rmm__fchunk_at_cmp);
    return at;
}
/* The index k of chunk record c in f->chunks, or chunk_count: at is the sorted index. */
RMM__PRIVATE size_t rmm__fchunk_index(const rmm__fixed *f, const rmm__fchunk_at *at, const rmm__fchunk *c) {
    size_t lo = 0, hi = f->chunk_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (at[mid].chunk < (uintptr_t)c) lo = mid + 1;
        else hi = mid;
    }
    return lo < f->chunk_count && at[lo].chunk == (uintptr_t)c ? at[lo].k : f->chunk_count;
}
RMM__PRIVATE rmm_status rmm__fixed_validate(rmm__fixed *f) {
    size_t i, j, listed = 0, marked = 0;
    rmm_status st = RMM_SUCCESS;
    uint64_t **seen;
    rmm__fchunk_at *at;
    if (!rmm__spin_lock(&f->so.lock)) return rmm__reentrant("fixed_size", "rmm_resource_validate");
    seen = (uint64_t **)rmm__calloc(f->chunk_count + 1, sizeof *seen);
    for (i = 0; seen && i < f->chunk_count; i++) {
        seen[i] = (uint64_t *)rmm__calloc((f->blocks_per_chunk + 63) / 64, sizeof(uint64_t));
        if (!seen[i]) st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "fixed_size: validate is out of host memory");
    }
    if (!seen) st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "fixed_size: validate is out of host memory");
    if ((at = rmm__fchunk_sorted(f)) == NULL) st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "fixed_size: validate is out of host memory");
    for (i = 1; st == RMM_SUCCESS && i < f->chunk_count; i++)
        if (f->chunks[i - 1]->ptr >= f->chunks[i]->ptr) st = rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: chunk table is not sorted");
    for (i = 0; st == RMM_SUCCESS && i < f->chunk_count; i++)
        if (f->chunk_base[i] != (uintptr_t)f->chunks[i]->ptr) st = rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: chunk %zu's base is recorded as %p", i, (void *)f->chunk_base[i]);
    for (i = 0; i < f->so.count && st == RMM_SUCCESS; i++) {
        rmm__fstream *s = RMM__FSTREAM(f, i);
        if (s->ss.index != i) st = rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: stream state %zu records index %zu", i, s->ss.index);
        if (st == RMM_SUCCESS && (s->covered > s->count || (s->ss.lazy && s->covered != s->count)))
            st = rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: stream state %zu has %zu of %zu free blocks covered%s", i, s->covered, s->count, s->ss.lazy ? " but is lazy" : "");
        for (j = 0; j < s->count && st == RMM_SUCCESS; j++) {
            rmm__fentry e = s->stack[j];
            size_t k = rmm__fchunk_index(f, at, e.chunk);
            if (k == f->chunk_count || e.index >= f->blocks_per_chunk) st = rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: a free block is not a block of this resource");
            else if ((seen[k][e.index >> 6] >> (e.index & 63)) & 1u) st = rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: block %p is free twice", (void *)rmm__fentry_ptr(f, e));
            else if (!rmm__fchunk_is_free(e.chunk, e.index)) st = rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: block %p is listed free but marked used", (void *)rmm__fentry_ptr(f, e));
            else seen[k][e.index >> 6] |= (uint64_t)1 << (e.index & 63);
            listed++;
        }
    }
    for (i = 0; i < f->chunk_count && st == RMM_SUCCESS; i++)
        for (j = 0; j < f->blocks_per_chunk; j++) marked += rmm__fchunk_is_free(f->chunks[i], j);
    if (st == RMM_SUCCESS && marked != listed) st = rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: %zu blocks marked free but %zu listed", marked, listed);
    if (st == RMM_SUCCESS && listed + f->used_blocks != f->chunk_count * f->blocks_per_chunk)
        st = rmm__fail(RMM_ERROR_CORRUPTION, "fixed_size: %zu free + %zu used blocks != %zu blocks held", listed, f->used_blocks, f->chunk_count * f->blocks_per_chunk);
    for (i = 0; seen && i < f->chunk_count; i++) RMM_SYS_FREE(seen[i]);
    RMM_SYS_FREE(seen);
    RMM_SYS_FREE(at);
    rmm__spin_unlock(&f->so.lock);
    return st;
}
RMM__PRIVATE void rmm__fixed_destroy(rmm_resource *self) {
    rmm__fixed *f = (rmm__fixed *)self;
    size_t i;
    bool exiting = rmm__exiting();
    rmm__device_guard g;
    rmm__device_enter_quietly(&g, f->device, exiting); /* (as the pool's destroy) */
    rmm__so_free(&f->so, exiting);
    for (i = 0; i < f->chunk_count; i++) {
        if (!exiting) {
            rmm__san_heap_unregister(f->chunks[i]->heap);
            (void)rmm_deallocate(f->upstream, f->chunks[i]->ptr, f->chunk_bytes, RMM_STREAM_DEFAULT);
        }
        RMM_SYS_FREE(f->chunks[i]->free_bits);
#if RMM__MARGIN_ON
        RMM_SYS_FREE(f->chunks[i]->requested);
        RMM_SYS_FREE(f->chunks[i]->serial);
#endif
#if RMM__DEBUG
        RMM_SYS_FREE(f->chunks[i]->asked);
#endif
        RMM_SYS_FREE(f->chunks[i]);
    }
    rmm__device_leave(&g);
    RMM_SYS_FREE(f->chunks);
    RMM_SYS_FREE(f->chunk_base);
    RMM_SYS_FREE(f);
}

RMM__IMPL rmm_fixed_size_desc rmm_fixed_size_desc_default(void) {
    rmm_fixed_size_desc d;
    d.block_bytes = RMM__MIB;
    d.blocks_to_preallocate = 128;
    return d;
}
RMM__IMPL rmm_status rmm_fixed_size_create(rmm_resource **out, rmm_resource *upstream, const rmm_fixed_size_desc *desc) {
    rmm_fixed_size_desc d = desc ? *desc : rmm_fixed_size_desc_default();
    rmm__fixed *f;
    rmm__sstate *s;
    rmm_status st;
    if (!out) return RMM__NULL_OUT("rmm_fixed_size_create", "out");
    *out = NULL;
    if (!upstream) return rmm__null_upstream("rmm_fixed_size_create");
    if (d.block_bytes == 0) d.block_bytes = RMM__MIB;
    if (d.blocks_to_preallocate == 0) d.blocks_to_preallocate = 128;
    if (!rmm__align_up(d.block_bytes, RMM_ALIGNMENT, &d.block_bytes) || d.blocks_to_preallocate > SIZE_MAX / d.block_bytes)
        return RMM__INVALID("rmm_fixed_size_create: %zu blocks of %zu bytes overflow", d.blocks_to_preallocate, d.block_bytes);
    rmm__ensure_exit_hook();
    f = (rmm__fixed *)rmm__calloc(1, sizeof *f);
    if (!f) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_fixed_size_create: out of host memory");
    f->base.vtable = &rmm__fixed_vtable;
    f->upstream = upstream;
    f->block_bytes = d.block_bytes;
    f->blocks_per_chunk = d.blocks_to_preallocate;
    f->chunk_bytes = d.block_bytes * d.blocks_to_preallocate;
    st = rmm__get_device(&f->device);
    if (st == RMM_SUCCESS && !rmm__so_init(&f->so, &rmm__fixed_so_ops, "fixed_size", false, false))
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_fixed_size_create: out of host memory");
    f->so.device = f->device;
    if (st == RMM_SUCCESS) st = rmm__so_state(&f->so, RMM__LEGACY_HANDLE, 0, &s);
    if (st == RMM_SUCCESS) st = rmm__fixed_grow_in(&f->so, s, NULL);
    if (st != RMM_SUCCESS) {
        RMM__CLEANUP_VOID(rmm__fixed_destroy(&f->base));
        return st;
    }
    *out = &f->base;
    return RMM_SUCCESS;
}

/* -- its row in >>diagnostics (rmm__descs): dump, validate, upstream, allocation base, live blocks -- */
RMM__PRIVATE rmm_status rmm__dump_fixed(rmm__json *j, rmm__fixed *f) {
    size_t i, k, *owner_of = NULL;
    rmm__fchunk_at *at;
    if (!rmm__spin_lock(&f->so.lock)) return rmm__reentrant("fixed_size", "rmm_resource_dump_json");
    rmm__json_open(j, "config", '{');
    rmm__json_u64(j, "block_bytes", f->block_bytes);
    rmm__json_u64(j, "blocks_per_chunk", f->blocks_per_chunk);
    rmm__json_close(j, '}');
    rmm__json_open(j, "counters", '{');
    rmm__json_u64(j, "chunks", f->chunk_count);
    rmm__json_u64(j, "used_blocks", f->used_blocks);
    rmm__json_u64(j, "free_blocks", f->chunk_count * f->blocks_per_chunk - f->used_blocks);
    rmm__json_u64(j, "stream_states", f->so.count);
    rmm__json_close(j, '}');
    rmm__json_open(j, "streams", '[');
    for (i = 0; i < f->so.count; i++) rmm__json_stream(j, i, &RMM__FSTREAM(f, i)->ss, RMM__FSTREAM(f, i)->count, RMM__FSTREAM(f, i)->count * f->block_bytes);
    rmm__json_close(j, ']');
    /* which stream holds each free block, for every chunk at once (a pass over the streams' free
       blocks per chunk was O(free blocks x chunks): red team 35) */
    if (!f->chunk_count || f->blocks_per_chunk <= SIZE_MAX / sizeof *owner_of / f->chunk_count)
        owner_of = (size_t *)RMM_SYS_MALLOC(rmm__max(1, f->chunk_count * f->blocks_per_chunk) * sizeof *owner_of);
    at = owner_of ? rmm__fchunk_sorted(f) : NULL;
    if (!at) {
        RMM_SYS_FREE(owner_of);
        owner_of = NULL;
    } else {
        size_t s;
        for (i = 0; i < f->chunk_count * f->blocks_per_chunk; i++) owner_of[i] = SIZE_MAX;
        for (s = 0; s < f->so.count; s++)
            for (k = 0; k < RMM__FSTREAM(f, s)->count; k++) {
                const rmm__fentry *e = &RMM__FSTREAM(f, s)->stack[k];
                size_t at_k = rmm__fchunk_index(f, at, e->chunk);
                if (at_k < f->chunk_count && e->index < f->blocks_per_chunk) owner_of[at_k * f->blocks_per_chunk + e->index] = s;
            }
        RMM_SYS_FREE(at);
    }
    rmm__json_open(j, "chunks", '[');
    for (i = 0; owner_of && i < f->chunk_count; i++) {
        const rmm__fchunk *c = f->chunks[i];
        const size_t *owner = owner_of + i * f->blocks_per_chunk;
        size_t b;
        rmm__json_open(j, NULL, '{');
        rmm__json_ptr(j, "address", c->ptr);
        rmm__json_u64(j, "size", f->chunk_bytes);
        rmm__json_open(j, "blocks", '[');
        for (b = 0; b < f->blocks_per_chunk; b++) {
            bool free_now = rmm__fchunk_is_free(c, b);
            fprintf(j->f, "%s{\"offset\":%zu,\"size\":%zu,\"state\":\"%s\",\"stream\":", j->first ? "" : ",", b * f->block_bytes, f->block_bytes, free_now ? "free" : "used");
            j->first = false;
            if (free_now && owner[b] != SIZE_MAX) fprintf(j->f, "%zu}", owner[b]);
            else fputs("null}", j->f);
        }
        rmm__json_close(j, ']');
        rmm__json_close(j, '}');
    }
    rmm__json_close(j, ']');
    rmm__spin_unlock(&f->so.lock);
    if (!owner_of) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_resource_dump_json: out of host memory");
    RMM_SYS_FREE(owner_of);
    return RMM_SUCCESS;
}

/* -- fixed-size -- */
RMM__PRIVATE rmm_resource *rmm__fixed_upstream(const rmm_resource *mr) { return ((const rmm__fixed *)mr)->upstream; }
RMM__PRIVATE rmm_status rmm__fixed_validate_mr(rmm_resource *mr) { return rmm__fixed_validate((rmm__fixed *)mr); }
RMM__PRIVATE rmm_status rmm__fixed_dump_mr(rmm__json *j, rmm_resource *mr, int nesting) {
    (void)nesting;
    return rmm__dump_fixed(j, (rmm__fixed *)mr);
}
RMM__PRIVATE rmm_status rmm__fixed_base_step(rmm_resource *mr, const char **p, size_t *off, rmm_resource **next) {
    rmm__fixed *f = (rmm__fixed *)mr;
    rmm__fchunk *c;
    const char *start = NULL;
    if (!rmm__spin_lock(&f->so.lock)) return rmm__reentrant("fixed_size", "rmm_resource_allocation_base");
    c = rmm__fixed_chunk_of(f, *p);
    if (c && ((size_t)(*p - c->ptr)) % f->block_bytes == 0 && !rmm__fchunk_is_free(c, (size_t)(*p - c->ptr) / f->block_bytes)) start = c->ptr;
    rmm__spin_unlock(&f->so.lock);
    if (!start) return RMM__INVALID("rmm_resource_allocation_base(ptr=%p): not a live block of resource '%s'", (const void *)*p, rmm_resource_type_name(mr));
    *off += (size_t)(*p - start);
    *p = start;
    *next = f->upstream;
    return RMM_SUCCESS;
}
#if RMM__MARGIN_ON
RMM__PRIVATE rmm_status rmm__fixed_live(rmm_resource *mr, rmm__live_list *live) {
    rmm__fixed *f = (rmm__fixed *)mr;
    size_t i, b;
    if (!rmm__spin_lock(&f->so.lock)) return rmm__reentrant("fixed_size", "rmm_resource_check_corruption");
    for (i = 0; i < f->chunk_count; i++)
        for (b = 0; b < f->blocks_per_chunk; b++)
            if (!rmm__fchunk_is_free(f->chunks[i], b)) rmm__live_add(live, f->chunks[i]->ptr + b * f->block_bytes, f->chunks[i]->requested[b], f->chunks[i]->serial[b]);
    rmm__spin_unlock(&f->so.lock);
    return RMM_SUCCESS;
}
#else
#define rmm__fixed_live NULL
#endif

/* Whether mr is an arena, and whether its one allocation holds ptr (defined with the arena; false
   without it). O(1). */
RMM__PRIVATE bool rmm__is_arena(const rmm_resource *mr);
RMM__PRIVATE bool rmm__arena_holds(rmm_resource *mr, const void *ptr);
/* Whether ptr lies in memory that sub-allocator mr (a fixed-size resource, a pool's live or parked
   block, an arena's one allocation) holds; false for other resources and when its lock is this
   thread's already. Outside the binning section, which uses it most, since rmmFinalize does too
   (under RMM_NO_BINNING it was left out, and the header did not build). */
RMM__PRIVATE bool rmm__suballocator_holds(rmm_resource *mr, const void *ptr) {
    bool owns = false;
    if (rmm__is_arena(mr)) return rmm__arena_holds(mr, ptr);
    if (mr->vtable == &rmm__fixed_vtable) {
        if (!rmm__spin_lock(&((rmm__fixed *)mr)->so.lock)) return false;
        owns = rmm__fixed_owns((rmm__fixed *)mr, ptr);
        rmm__spin_unlock(&((rmm__fixed *)mr)->so.lock);
    }
#if !defined(RMM_NO_POOL)
    if (mr->vtable == &rmm__pool_vtable) {
        rmm__pool *pool = (rmm__pool *)mr;
        if (!rmm__spin_lock(&pool->so.lock)) return false;
        owns = rmm__addr_map_find(&pool->used, (uintptr_t)ptr) != NULL;
        rmm__spin_unlock(&pool->so.lock);
    }
#endif
    return owns;
}

/* ======================================================================================= */
/* ==== binning: requests routed to the smallest bin that fits ========================== */
/* ======================================================================================= */ /* >>binning */

#if !defined(RMM_NO_BINNING)
typedef struct rmm__bin {
    size_t bytes;
    rmm_resource *mr; /* NULL until first use for lazily made bins */
    bool owned;
    uint64_t maker;   /* lazily made bins: the thread making it now (0: none), under the lock */
} rmm__bin;
typedef struct rmm__binning {
    rmm_resource base;
    rmm_resource *upstream;
    rmm__bin *bins; /* sorted by bytes */
    size_t count;
    int started;    /* set at the first allocation made (one that failed allocated nothing); bins are fixed from then on */
    rmm__mutex lock; /* makes lazy bins */
} rmm__binning;
RMM__PRIVATE rmm_status rmm__binning_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream);
RMM__PRIVATE rmm_status rmm__binning_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream);
RMM__PRIVATE void rmm__binning_destroy(rmm_resource *self);
static const rmm_resource_vtable rmm__binning_vtable = {"binning", rmm__binning_allocate, rmm__binning_deallocate, NULL, rmm__binning_destroy};

RMM__PRIVATE rmm_status rmm__binning_insert(rmm__binning *b, size_t bytes, rmm_resource *mr, bool owned) {
    size_t i;
    rmm__bin *grown;
    for (i = 0; i < b->count; i++) {
        if (b->bins[i].bytes != bytes) continue;
        /* the later bin wins (RMM's add_bin replaces); before the first allocation nothing was made
           from the old one, so an owned old bin (made lazily) is destroyed, and a user's is dropped */
        if (b->bins[i].owned) rmm_resource_destroy(b->bins[i].mr);
        b->bins[i].mr = mr;
        b->bins[i].owned = owned;
        b->bins[i].maker = 0;
        return RMM_SUCCESS;
    }
    grown = (rmm__bin *)RMM_SYS_REALLOC(b->bins, (b->count + 1) * sizeof *grown);
    if (!grown) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_binning_add_bin: out of host memory");
    b->bins = grown;
    for (i = b->count; i > 0 && b->bins[i - 1].bytes > bytes; i--) b->bins[i] = b->bins[i - 1];
    b->bins[i].bytes = bytes;
    b->bins[i].mr = mr;
    b->bins[i].owned = owned;
    b->bins[i].maker = 0;
    b->count++;
    return RMM_SUCCESS;
}
/* The bin for a request, or NULL for upstream. O(log bins). */
RMM__PRIVATE rmm__bin *rmm__binning_route(rmm__binning *b, size_t bytes, size_t alignment) {
    size_t lo = 0, hi = b->count;
    if (alignment > RMM_ALIGNMENT) return NULL;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->bins[mid].bytes < bytes) lo = mid + 1;
        else hi = mid;
    }
    return lo < b->count ? &b->bins[lo] : NULL;
}
/* Lazily made bins grow in chunks of about 2 MiB (at least one block), not RMM's 128 blocks. The
   bin is made without holding the lock (making it allocates from upstream, which may itself use
   this binning resource for another size); a second thread waits for the maker, and the maker's own
   thread coming back for the same bin from below (its upstream allocates that size here) is told
   NOT_SUPPORTED instead of deadlocking. */
RMM__PRIVATE rmm_status rmm__binning_bin_resource(rmm__binning *b, rmm__bin *bin, rmm_resource **mr) {
    rmm_resource *r = RMM__ATOMIC_LOAD(&bin->mr);
    uint64_t me = rmm__thread_serial();
    rmm_fixed_size_desc d = rmm_fixed_size_desc_default();
    rmm_status st;
    if (RMM__LIKELY(r != NULL)) {
        *mr = r;
        return RMM_SUCCESS;
    }
    for (;;) {
        rmm__lock(&b->lock);
        r = bin->mr;
        if (r || bin->maker == 0) break;
        if (bin->maker == me) {
            rmm__unlock(&b->lock);
            return rmm__reentrant_mark(rmm__fail(RMM_ERROR_NOT_SUPPORTED,
                                                 "binning: the bin of %zu bytes is being made by this thread: its upstream allocated %zu bytes from this "
                                                 "binning resource again (a resource must not be reached again from below itself)",
                                                 bin->bytes, bin->bytes));
        }
        rmm__unlock(&b->lock);
        sched_yield(); /* another thread is making it */
    }
    if (r) {
        rmm__unlock(&b->lock);
        *mr = r;
        return RMM_SUCCESS;
    }
    bin->maker = me;
    rmm__unlock(&b->lock);
    d.block_bytes = bin->bytes + RMM__MARGIN; /* (a debug margin builds its blocks larger: a request of the bin's size fits) */
    d.blocks_to_preallocate = rmm__max(1, (2 * RMM__MIB) / bin->bytes);
    st = rmm_fixed_size_create(&r, b->upstream, &d);
    rmm__lock(&b->lock);
    bin->maker = 0;
    if (st == RMM_SUCCESS) RMM__ATOMIC_STORE(&bin->mr, r);
    rmm__unlock(&b->lock);
    if (st == RMM_SUCCESS) *mr = r;
    return st;
}
RMM__PRIVATE rmm_status rmm__binning_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__binning *b = (rmm__binning *)self;
    rmm__bin *bin;
    rmm_resource *mr = NULL;
    rmm_status st;
    bin = rmm__binning_route(b, bytes, alignment);
    if (!bin) st = rmm_allocate_aligned(b->upstream, ptr, bytes, alignment, stream);
    else if ((st = rmm__binning_bin_resource(b, bin, &mr)) == RMM_SUCCESS) {
        if (RMM__LIKELY(bin->owned)) st = mr->vtable->allocate(mr, ptr, bytes, alignment, stream);
        else st = rmm__allocate_checked("binning", mr, ptr, bytes, alignment, stream); /* a bin of the user's (rmm_binning_add_bin) */
    }
    /* the bins are fixed from the first allocation made; one that failed allocated nothing, and
       rmm_binning_add_bin may still follow it (API.md audit, session 31) */
    if (RMM__UNLIKELY(!RMM__ATOMIC_LOAD_RELAXED(&b->started)) && st == RMM_SUCCESS) RMM__ATOMIC_STORE(&b->started, 1);
    return st;
}
RMM__PRIVATE rmm_status rmm__graph_walk(rmm_resource *mr, const rmm_resource *target, int nesting, size_t *steps, const char *fn, bool *found);
/* Whether the graph below `from` (upstreams and bins) holds r; true too when it is too big to
   walk, so that a check it decides is skipped rather than wrong. O(resources below from). */
RMM__PRIVATE bool rmm__below(rmm_resource *from, const rmm_resource *r) {
    size_t steps = 0;
    bool found = false;
    return rmm__graph_walk(from, r, 0, &steps, "binning: deallocate", &found) != RMM_SUCCESS || found;
}
/* Whether mr is a sub-allocator rmm__binning_owner can look into. */
RMM__PRIVATE bool rmm__binning_seen_into(const rmm_resource *mr) {
    bool pool = false;
#if !defined(RMM_NO_POOL)
    pool = mr->vtable == &rmm__pool_vtable;
#endif
    return pool || mr->vtable == &rmm__fixed_vtable || mr->vtable == &rmm__binning_vtable || rmm__is_arena(mr);
}
/* The bin holding ptr, or NULL: a library-made bin, or a user's bin whose first sub-allocator
   (through at most 16 adaptors) holds ptr and is not reached by the binning resource's own
   upstream too (all its blocks would look held): a fixed-size resource or a pool (their records),
   an arena (its one allocation's range), or a binning resource (one of its bins holds ptr, at
   most RMM_MAX_BIN_NESTING deep; else its upstream is looked at as the layer below). Until
   2026-11-29 arena and binning bins were passed over ("they check their own frees"), but a free
   routed upstream never reaches them: an arena bin's block freed with a size above the bins went
   upstream and freed the arena's whole allocation (a red team's find). O(bins x (layers + log
   chunks)) per level, and a walk below upstream when a user's bin holds ptr: only for frees routed
   upstream and rmm_resource_allocation_base. */
RMM__PRIVATE rmm__bin *rmm__binning_owner_at(rmm__binning *b, const void *ptr, int nesting) {
    size_t i;
    for (i = 0; i < b->count; i++) {
        rmm_resource *mr = RMM__ATOMIC_LOAD(&b->bins[i].mr);
        int layers;
        for (layers = 0; mr && layers < 16; layers++, mr = rmm_resource_get_upstream(mr)) {
            if (mr->vtable == &rmm__binning_vtable) {
                if (mr == &b->base || nesting >= RMM_MAX_BIN_NESTING) break; /* (a cycle, or too deep to look) */
                if (rmm__binning_owner_at((rmm__binning *)mr, ptr, nesting + 1) && (b->bins[i].owned || !rmm__below(b->upstream, mr))) return &b->bins[i];
            } else if (rmm__binning_seen_into(mr)) {
                if (rmm__suballocator_holds(mr, ptr) && (b->bins[i].owned || !rmm__below(b->upstream, mr))) return &b->bins[i];
                break;
            }
        }
    }
    return NULL;
}
RMM__PRIVATE rmm__bin *rmm__binning_owner(rmm__binning *b, const void *ptr) { return rmm__binning_owner_at(b, ptr, 0); }
/* Frees are routed by size like allocations. A size that routes a block of one of the bins (the
   library's own, or a user's pool or fixed-size resource, through adaptors) to upstream is
   CORRUPTION (upstream would free memory the bin holds, a whole chunk); one that routes it to
   another bin is refused by that bin if it can tell. */
RMM__PRIVATE rmm_status rmm__binning_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__binning *b = (rmm__binning *)self;
    rmm__bin *bin = rmm__binning_route(b, bytes, alignment), *owner;
    rmm_resource *mr;
    if (!bin) {
        owner = rmm__binning_owner(b, ptr);
        if (RMM__UNLIKELY(owner != NULL))
            return rmm__fail(RMM_ERROR_CORRUPTION, "binning: deallocate(ptr=%p, bytes=%zu): the block belongs to the bin of %zu bytes; the size must be the one allocated",
                             ptr, bytes, owner->bytes);
        return rmm_deallocate_aligned(b->upstream, ptr, bytes, alignment, stream);
    }
    mr = RMM__ATOMIC_LOAD(&bin->mr);
    if (!mr) return rmm__fail(RMM_ERROR_CORRUPTION, "binning: deallocate(ptr=%p, bytes=%zu): its bin never allocated", ptr, bytes);
    return mr->vtable->deallocate(mr, ptr, bytes, alignment, stream);
}
RMM__PRIVATE void rmm__binning_destroy(rmm_resource *self) {
    rmm__binning *b = (rmm__binning *)self;
    size_t i;
    for (i = 0; i < b->count; i++)
        if (b->bins[i].owned) rmm_resource_destroy(b->bins[i].mr);
    RMM_SYS_FREE(b->bins);
    rmm__mutex_destroy(&b->lock);
    RMM_SYS_FREE(b);
}

RMM__IMPL rmm_status rmm_binning_create(rmm_resource **out, rmm_resource *upstream, const rmm_binning_desc *desc) {
    rmm_binning_desc d = desc ? *desc : rmm_binning_desc_default();
    rmm__binning *b;
    int e;
    if (!out) return RMM__NULL_OUT("rmm_binning_create", "out");
    *out = NULL;
    if (!upstream) return rmm__null_upstream("rmm_binning_create");
    if (!(d.min_size_exponent == 0 && d.max_size_exponent == 0) &&
        (d.min_size_exponent < 0 || d.max_size_exponent < d.min_size_exponent || d.max_size_exponent > 40))
        return RMM__INVALID("rmm_binning_create: exponents %d..%d must satisfy 0 <= min <= max <= 40", d.min_size_exponent, d.max_size_exponent);
    b = (rmm__binning *)rmm__calloc(1, sizeof *b);
    if (!b) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_binning_create: out of host memory");
    b->base.vtable = &rmm__binning_vtable;
    b->upstream = upstream;
    rmm__mutex_init(&b->lock);
    if (!(d.min_size_exponent == 0 && d.max_size_exponent == 0)) {
        for (e = d.min_size_exponent; e <= d.max_size_exponent; e++) {
            size_t bytes = rmm__max(RMM_ALIGNMENT, (size_t)1 << e);
            bool exists = b->count > 0 && b->bins[b->count - 1].bytes == bytes;
            if (!exists && rmm__binning_insert(b, bytes, NULL, true) != RMM_SUCCESS) {
                rmm__binning_destroy(&b->base);
                return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_binning_create: out of host memory");
            }
        }
    }
    *out = &b->base;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_binning_add_bin(rmm_resource *binning, size_t allocation_bytes, rmm_resource *bin_resource) {
    rmm__binning *b = (rmm__binning *)binning;
    size_t bytes = 0, steps = 0;
    bool cycle = false;
    if (!binning || binning->vtable != &rmm__binning_vtable)
        return RMM__INVALID("rmm_binning_add_bin: resource '%s' is not a binning resource", rmm_resource_type_name(binning));
    if (allocation_bytes == 0 || !rmm__align_up(allocation_bytes, RMM_ALIGNMENT, &bytes) ||
        (!bin_resource && (bytes > SIZE_MAX - RMM__MARGIN || !rmm__align_up(bytes + RMM__MARGIN, RMM_ALIGNMENT, &steps))))
        /* (a bin made here has blocks of bytes + the debug margin, rounded up: that wrapped, and
           the bin took 1 MiB blocks for a size of 16 EiB: red team 35; steps: scratch) */
        return RMM__INVALID("rmm_binning_add_bin: allocation_bytes %zu is not a usable bin size", allocation_bytes);
    if (RMM__ATOMIC_LOAD(&b->started))
        return RMM__INVALID("rmm_binning_add_bin: bins must be added before the first allocation");
    if (bin_resource) {
        RMM_TRY(rmm__graph_walk(bin_resource, binning, 0, &steps, "rmm_binning_add_bin", &cycle));
        if (cycle && bin_resource == binning)
            return RMM__INVALID("rmm_binning_add_bin: the bin resource is this binning resource: an allocation of its size would come back here for ever");
        if (cycle)
            return RMM__INVALID("rmm_binning_add_bin: the bin resource ('%s') reaches this binning resource through its upstreams or bins: "
                                "a cycle (an allocation of its size comes back here)",
                                rmm_resource_type_name(bin_resource));
    }
    return rmm__binning_insert(b, bytes, bin_resource, bin_resource == NULL);
}
#else
RMM__IMPL rmm_status rmm_binning_create(rmm_resource **out, rmm_resource *upstream, const rmm_binning_desc *desc) {
    (void)upstream;
    (void)desc;
    if (out) *out = NULL;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_binning_create: compiled out by RMM_NO_BINNING");
}
RMM__IMPL rmm_status rmm_binning_add_bin(rmm_resource *binning, size_t allocation_bytes, rmm_resource *bin_resource) {
    (void)binning;
    (void)allocation_bytes;
    (void)bin_resource;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_binning_add_bin: compiled out by RMM_NO_BINNING");
}
#endif /* RMM_NO_BINNING */

RMM__PRIVATE bool rmm__resource_reaches(const rmm_resource *r, const rmm_resource *target, int depth) {
    for (; r && depth < 32; r = rmm_resource_get_upstream(r), depth++) {
        if (r == target) return true;
#if !defined(RMM_NO_BINNING)
        if (r->vtable == &rmm__binning_vtable) { /* its bins (fixed since its first allocation; a lazy one's
                                                    resource is stored atomically), then the upstream */
            rmm__binning *b = (rmm__binning *)(uintptr_t)r;
            size_t i;
            for (i = 0; i < b->count; i++) {
                const rmm_resource *bin = RMM__ATOMIC_LOAD(&b->bins[i].mr);
                if (bin && rmm__resource_reaches(bin, target, depth + 1)) return true;
            }
        }
#endif
    }
    return false;
}
RMM__IMPL rmm_binning_desc rmm_binning_desc_default(void) {
    rmm_binning_desc d;
    d.min_size_exponent = 0;
    d.max_size_exponent = 0;
    return d;
}

/* -- its row in >>diagnostics (rmm__descs): dump, validate, upstream, allocation base, live blocks -- */
/* -- binning: its bins are its children -- */
#if !defined(RMM_NO_BINNING)
RMM__PRIVATE rmm_resource *rmm__binning_upstream(const rmm_resource *mr) { return ((const rmm__binning *)mr)->upstream; }
RMM__PRIVATE size_t rmm__binning_child_count(const rmm_resource *mr) { return ((const rmm__binning *)mr)->count; }
RMM__PRIVATE rmm_resource *rmm__binning_child(const rmm_resource *mr, size_t i) { return RMM__ATOMIC_LOAD(&((rmm__binning *)(uintptr_t)mr)->bins[i].mr); }
RMM__PRIVATE rmm_status rmm__binning_validate_mr(rmm_resource *mr) {
    rmm__binning *b = (rmm__binning *)mr;
    size_t i;
    for (i = 0; i < b->count; i++) {
        rmm_resource *bin = RMM__ATOMIC_LOAD(&b->bins[i].mr);
        if (bin && (b->bins[i].owned || bin != mr)) RMM_TRY(rmm_resource_validate(bin));
    }
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__binning_dump_mr(rmm__json *j, rmm_resource *mr, int nesting) {
    rmm__binning *b = (rmm__binning *)mr;
    rmm_status st = RMM_SUCCESS;
    size_t i;
    rmm__json_open(j, "bins", '[');
    for (i = 0; i < b->count && st == RMM_SUCCESS; i++) {
        rmm_resource *bin = RMM__ATOMIC_LOAD(&b->bins[i].mr);
        rmm__json_open(j, NULL, '{');
        rmm__json_u64(j, "bytes", b->bins[i].bytes);
        rmm__json_bool(j, "owned", b->bins[i].owned);
        rmm__json_key(j, "resource");
        if (bin) {
            j->first = true;
            st = rmm__dump_node(j, bin, nesting + 1);
            j->first = false;
        } else {
            fputs("null", j->f);
        }
        rmm__json_close(j, '}');
    }
    rmm__json_close(j, ']');
    return st;
}
/* The resource on mr's chain (through at most 16 layers) that can say nothing of where its memory
   comes from (a user's resource), before any sub-allocator: NULL if none. */
RMM__PRIVATE rmm_resource *rmm__binning_opaque(rmm_resource *mr) {
    int layers;
    for (layers = 0; mr && layers < 16; layers++, mr = rmm_resource_get_upstream(mr)) {
        const rmm__desc *d;
        if (rmm__binning_seen_into(mr)) return NULL;
        d = rmm__describe(mr);
        if (!d || !d->base_step) return mr;
    }
    return NULL;
}
/* Whether the first sub-allocator on mr's chain (through at most 16 layers) holds ptr: false when
   the chain has none (its bottom would say "ptr itself" of any pointer). */
RMM__PRIVATE bool rmm__binning_held_below(rmm_resource *mr, const void *ptr) {
    int layers;
    for (layers = 0; mr && layers < 16; layers++, mr = rmm_resource_get_upstream(mr)) {
        if (mr->vtable == &rmm__binning_vtable) {
            if (rmm__binning_owner((rmm__binning *)mr, ptr)) return true;
            continue; /* (else its upstream served it, if anything on this chain did) */
        }
        if (rmm__binning_seen_into(mr)) return rmm__suballocator_holds(mr, ptr);
    }
    return false;
}
/* A block of one of the bins goes on through that bin; any other through upstream, unless a bin
   the owner check cannot look into (a user's resource) might hold it and nothing below upstream
   says it is upstream's: NOT_SUPPORTED then (until 2026-11-29 upstream's bottom answered "ptr
   itself, offset 0" for a user bin's block: a red team's find). */
RMM__PRIVATE rmm_status rmm__binning_base_step(rmm_resource *mr, const char **p, size_t *off, rmm_resource **next) {
    rmm__binning *b = (rmm__binning *)mr;
    rmm__bin *owner = rmm__binning_owner(b, *p);
    size_t i;
    (void)off;
    if (!owner && !rmm__binning_held_below(b->upstream, *p)) {
        for (i = 0; i < b->count; i++) {
            rmm_resource *bin = RMM__ATOMIC_LOAD(&b->bins[i].mr), *opaque = bin ? rmm__binning_opaque(bin) : NULL;
            if (opaque)
                return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_resource_allocation_base(ptr=%p): binning: its bin of %zu bytes, resource '%s', cannot say whether it holds ptr or where its memory comes from",
                                 (const void *)*p, b->bins[i].bytes, rmm_resource_type_name(opaque));
        }
    }
    *next = owner ? owner->mr : b->upstream;
    return RMM_SUCCESS;
}
#endif

/* ======================================================================================= */
/* ==== arena: a global arena of superblocks lent to per-thread and per-stream arenas ==== */
/* ======================================================================================= */ /* >>arena */

#if !defined(RMM_NO_ARENA)
/* One upstream allocation is cut into superblocks. Each thread (for the default streams) and each
   other stream has its own arena with its own lock and free lists, kept in the stream-order core's
   registry; it borrows superblocks from the global arena under the global lock only when its own
   run out. Requests above a superblock are served from the global arena directly, in whole
   superblocks. Frees go back to the arena that owns the superblock (a table indexed by address gives
   it); a free from another thread or stream first synchronizes its stream on the host, as do frees
   of large blocks, since those blocks are then reused without any event (RMM's rule). On exhaustion
   the arena synchronizes the device, returns every wholly free superblock to the global arena and
   retries once; then OUT_OF_MEMORY. The arenas of threads that exited and streams that were
   destroyed, and those of foreign streams (cudaStreamCreate: the library cannot see them go) that
   no thread's cache holds, give their wholly free superblocks back (after one device synchronize
   for all of them) and are dropped when they hold nothing, each time the number of arenas reaches
   its sweep mark (32, or twice the arenas a sweep left), so threads and streams that
   come and go cost bounded memory (a foreign stream per loop: at most 63 arenas) and no synchronize
   per newcomer. */
typedef struct rmm__arena_local {
    rmm__sstate ss;          /* its key, its stream or thread (gone or not) */
    rmm__spin lock;
    rmm__tlsf free;
    rmm__block_store store;
    rmm__addr_map used;
    rmm__chunk *superblocks;
    size_t superblock_count; /* written under lock, read anywhere (relaxed) */
    int pins;                /* atomic: the thread caches that hold it as a foreign stream's arena, and the
                                frees waiting for its lock (rmm__arena_lock_owner) */
    uint64_t pinned_at;      /* the arena's sweep count when a cache last took it (registry lock) */
    /* A foreign stream's arena (keyed by the stream's id): blocks freed on the stream since its
       last event wait here (out of `used`, parked = the arena, LIFO through free_next), not in
       `free`, until an event on the stream covers them all (rmm__arena_park); so every block in
       `free` is free memory whose last use is over once record filed_rec of the stream's event is
       complete (blocks freed on the stream before that record; blocks freed from another stream or
       thread, whose stream was synchronized on the host; fresh superblocks), and once that record
       is seen complete an allocation may take from `free` with no id asked (see
       rmm__arena_idless_local). A batch is filed when it is full (rmm__arena_park: the event
       recorded first), when an allocation that asked the id finds the lists short (recorded
       first if the last record is seen complete: rmm__arena_cover_pending), and by a collection
       after a device synchronize (rmm__arena_collect: no event needed). */
    rmm__block *pending;
    size_t pending_count, pending_bytes;
    size_t inflight;         /* blocks a free holds out of `used` while it asks the id (rmm__arena_park) */
    size_t inflight_bytes;   /* and their bytes (the dump counts them with the stream's free blocks) */
    uint64_t filed_rec;
} rmm__arena_local;
/* Pending blocks a foreign stream's arena covers with one event (a record per batch: with 16
   threads at once a record costs 4-8 us in the driver, so batches capped by bytes too, an eighth
   of the arena's superblocks, made a record per 23 frees on threads16 and cost it a third). */
#ifndef RMM__ARENA_PENDING
#define RMM__ARENA_PENDING 256
#endif
#define RMM__ARENA_LARGE ((rmm__arena_local *)(uintptr_t)1)

typedef struct rmm__arena {
    rmm_resource base;
    rmm__so so;               /* the registry of per-thread and per-stream arenas; its lock guards only that */
    rmm_resource *upstream;
    char *base_ptr;
    size_t arena_bytes, sb_bytes, sb_count;
    rmm__arena_local **owner; /* per superblock: its arena, RMM__ARENA_LARGE for a large block's start, or NULL */
    rmm__spin global_lock;
    rmm__tlsf global_free;
    rmm__block_store global_store;
    rmm__addr_map global_used; /* superblocks lent and large blocks: pointer -> block */
    rmm__addr_map large_out;   /* every large block handed out: the pointer given -> the block's start */
    rmm__chunk global_chunk;
    rmm__chunk *unsynced;      /* superblocks taken out of their arenas whose synchronize failed:
                                  in no arena, lent still, until a collect synchronizes (registry lock) */
    uint64_t generation;
    uint64_t sweeps;          /* rmm__arena_reclaim_gone calls so far (registry lock) */
    struct rmm__arena *next_live; /* in rmm__arenas_live */
    void *heap; /* RMM_NVTX: the whole arena as one NVTX heap */
    size_t debug_calls; /* RMM_DEBUG: calls so far (atomic; rmm__debug_validated) */
    int device;         /* the device current at creation (-1: unread), for RMM_DEBUG's device check */
} rmm__arena;
RMM__PRIVATE rmm_status rmm__arena_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream);
RMM__PRIVATE rmm_status rmm__arena_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream);
RMM__PRIVATE void rmm__arena_destroy(rmm_resource *self);
#if RMM__DEBUG
RMM__PRIVATE rmm_status rmm__arena_allocate_checked(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    RMM_TRY(rmm__debug_device_check("arena", "allocate", ((rmm__arena *)self)->device));
    return rmm__debug_validated(self, &((rmm__arena *)self)->debug_calls, rmm__arena_allocate(self, ptr, bytes, alignment, stream));
}
RMM__PRIVATE rmm_status rmm__arena_deallocate_checked(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    RMM_TRY(rmm__debug_device_check("arena", "deallocate", ((rmm__arena *)self)->device));
    return rmm__debug_validated(self, &((rmm__arena *)self)->debug_calls, rmm__arena_deallocate(self, ptr, bytes, alignment, stream));
}
static const rmm_resource_vtable rmm__arena_vtable = {"arena", rmm__arena_allocate_checked, rmm__arena_deallocate_checked, NULL, rmm__arena_destroy};
#else
static const rmm_resource_vtable rmm__arena_vtable = {"arena", rmm__arena_allocate, rmm__arena_deallocate, NULL, rmm__arena_destroy};
#endif
static uint64_t rmm__arena_generations;
#define RMM__ARENA_OF(so) ((rmm__arena *)((char *)(so) - offsetof(rmm__arena, so)))

/* ---- the registry's table: an arena "holds" memory while it has superblocks ---- */
RMM__PRIVATE bool rmm__arena_local_init(rmm__so *so, rmm__sstate *s) {
    (void)so;
    ((rmm__arena_local *)s)->free.state = s;
    if (!rmm__tlsf_ready(&((rmm__arena_local *)s)->free)) return false;
    if (rmm__addr_map_init(&((rmm__arena_local *)s)->used, 64)) return true;
    rmm__tlsf_unready(&((rmm__arena_local *)s)->free);
    return false;
}
RMM__PRIVATE void rmm__arena_local_fini(rmm__so *so, rmm__sstate *s) {
    rmm__arena_local *l = (rmm__arena_local *)s;
    (void)so;
    while (l->superblocks) {
        rmm__chunk *c = l->superblocks;
        l->superblocks = c->next;
        RMM_SYS_FREE(c);
    }
    l->superblock_count = 0;
    rmm__block_store_free(&l->store);
    rmm__addr_map_free(&l->used);
    RMM_SYS_FREE(l->free.heads);
    memset(&l->free, 0, sizeof l->free);
}
RMM__PRIVATE bool rmm__arena_local_holds(rmm__so *so, rmm__sstate *s) {
    (void)so;
    return RMM__ATOMIC_LOAD_RELAXED(&((rmm__arena_local *)s)->superblock_count) > 0 || RMM__ATOMIC_LOAD(&((rmm__arena_local *)s)->pins) > 0;
}
static const rmm__so_ops rmm__arena_so_ops = {sizeof(rmm__arena_local), rmm__arena_local_init, rmm__arena_local_fini, rmm__arena_local_holds,
                                              NULL, NULL, NULL, NULL, NULL, NULL, NULL};

/* Each thread caches the arenas it used last, by key. A thread's own and a library stream's entry
   hold a reference to their stream's entry: while that is alive the arena cannot be retired (only
   arenas of gone threads and streams are). A foreign stream's entry is keyed by handle and the
   stream's id (a hit asks the id: the handle may name a new stream) and holds a pin on the arena,
   which keeps it from being retired; so a cache hit never reads a freed arena, and takes no lock.
   References and pins go when an entry is replaced, and at thread exit; a pin only if its arena
   still exists (the live arenas are listed under rmm__arenas_lock, which destroy takes first). */
typedef struct rmm__arena_tls_entry {
    uint64_t generation, key;
    uint64_t id;    /* a foreign stream's key (its id + 16), and the entry holds a pin; else 0 */
    rmm__sreg *reg; /* a reference; NULL for foreign streams and streams promised to outlive the arena */
    rmm__arena_local *local;
} rmm__arena_tls_entry;
static RMM__TLS rmm__arena_tls_entry rmm__arena_tls[4];
static RMM__TLS unsigned rmm__arena_tls_next;
static rmm__mutex rmm__arenas_lock = RMM__MUTEX_INIT;
static struct rmm__arena *rmm__arenas_live; /* every arena, through next_live; under rmm__arenas_lock */
/* Drops what entry e holds. `a`: an arena known to exist (NULL: none). O(1), or O(arenas) with
   rmm__arenas_lock for a pin on another arena. */
RMM__PRIVATE void rmm__arena_tls_drop(rmm__arena_tls_entry *e, const struct rmm__arena *a);
RMM__PRIVATE void rmm__arena_tls_release(void) {
    unsigned i;
    for (i = 0; i < 4; i++) rmm__arena_tls_drop(&rmm__arena_tls[i], NULL);
}

RMM__PRIVATE size_t rmm__arena_index(const rmm__arena *a, const void *ptr) { return (size_t)((const char *)ptr - a->base_ptr) / a->sb_bytes; }
RMM__PRIVATE void rmm__arena_reclaim_gone(rmm__arena *a);

RMM__PRIVATE void rmm__arena_tls_drop(rmm__arena_tls_entry *e, const rmm__arena *a) {
    rmm__sreg_unref(e->reg);
    if (e->id && e->local) {
        if (a && e->generation == a->generation) {
            RMM__ATOMIC_SUB(&e->local->pins, 1);
        } else {
            const rmm__arena *x;
            rmm__lock(&rmm__arenas_lock);
            for (x = rmm__arenas_live; x && x->generation != e->generation; x = x->next_live) {
            }
            if (x) RMM__ATOMIC_SUB(&e->local->pins, 1); /* (destroyed arenas took their states with them) */
            rmm__unlock(&rmm__arenas_lock);
        }
    }
    memset(e, 0, sizeof *e);
}

/* Files l's pending blocks into its free lists. `recorded`: an event record on l's stream made
   just now covers them; else none does yet (the next record will). Caller holds l's lock. O(pending). */
RMM__PRIVATE void rmm__arena_file_pending(rmm__arena_local *l, bool recorded) {
    rmm__block *b;
    if (!l->pending) return;
    while ((b = l->pending) != NULL) {
        l->pending = b->free_next;
        b->free_next = NULL;
        b->parked = NULL;
        rmm__block_file(&l->store, &l->free, b);
    }
    l->pending_count = l->pending_bytes = 0;
    l->filed_rec = recorded ? l->ss.records : l->ss.records + 1;
}
/* For an allocation that asked the id (the handle names l's stream) and files l's pending batch
   because its lists fall short: records l's event on the stream, so the batch filed is covered
   and the lists become known done once the record is seen complete (without it a foreign stream
   whose allocations keep missing, as random sizes do, filed every batch with no event, and every
   allocation asked the id: threads16 on the host backend, 320,000 ids in 320,000 allocations,
   7,000 with the record, 3,600 records). None while the stream's last record is not seen complete
   (asked with rmm__so_refresh_done's backoff): with the device behind a new record would not be
   complete sooner, and a record per filing cost threads16 with --lag 30 -> 35 ns a pair on an H200;
   the batch is then filed with no event, and the next record covers it. True iff the record was
   made; a failure is swallowed (the batch is filed with no event, as before). Only a foreign
   stream's arena (keyed by its id). Caller holds l's lock. At most one event record (a CUDA call,
   1-8 us) per filing. */
RMM__PRIVATE bool rmm__arena_cover_pending(rmm__arena_local *l) {
    rmm__kept_error kept;
    bool recorded;
    if (!rmm__so_by_id(&l->ss)) return false;
    if (l->ss.done < l->ss.records && !rmm__so_refresh_done(&l->ss)) return false; /* (the last record still in flight) */
    rmm__error_keep(&kept); /* (the allocation goes on whatever fails: no failure stays behind) */
    recorded = rmm__so_record(&l->ss) == RMM_SUCCESS;
    rmm__error_back(&kept);
    return recorded;
}
/* Whether every block in l's free lists was freed before a record of l's event seen complete:
   asks the event when that is not known (rmm__so_refresh_done, with its backoff). Caller holds l's
   lock. O(1). */
RMM__PRIVATE bool rmm__arena_known_done(rmm__arena_local *l) {
    if (l->ss.done >= l->filed_rec) return true;
    if (l->ss.records < l->filed_rec) return false; /* the covering record is not made yet */
    return rmm__so_refresh_done(&l->ss) && l->ss.done >= l->filed_rec;
}
/* A foreign stream's arena serves up to RMM__IDLESS_RUN allocations with no id asked once its
   id was asked (the core's rmm__idless_left, shared with the pool); after an attempt that found
   the arena's free memory not known done (the device behind), the run ends and the next
   RMM__IDLESS_SKIP ids asked start none (rmm__idless_skip), so such a thread takes the arena's lock
   once per allocation, not twice. The event is then asked at most once per attempt's backoff
   (rmm__so_refresh_done): with the device behind about once per 4000 allocations, so memory
   becomes known done that much later after the device catches up. */

/* For an allocation on a foreign stream with no id asked: the arena this thread's cache has for
   the handle (its stream may be gone and the handle another stream's by now: the caller takes only
   memory known done from it, rmm__arena_known_done), or NULL (ask the id: none cached, or the
   thread's run is over: RMM__IDLESS_RUN allocations served so since the id was asked, or an
   attempt found nothing known done). One TLS load for streams that are not foreign. O(1). */
static inline rmm__arena_local *rmm__arena_idless_local(const rmm__arena *a, rmm_stream stream) {
    uint64_t key = (uint64_t)(uintptr_t)stream | RMM__KEY_HANDLE;
    unsigned i;
    if (RMM__LIKELY(rmm__idless_left == 0)) return NULL;
    for (i = 0; i < 4; i++) {
        const rmm__arena_tls_entry *e = &rmm__arena_tls[i];
        if (e->id && e->key == key && e->generation == a->generation) {
            rmm__idless_left--;
            return e->local;
        }
    }
    return NULL;
}

/* Whether the registry holds the arena of `stream` already (key: the thread's key, or the handle's;
   *prekey: a foreign stream's id + 16, or 0, then asked here where the handle names no arena), so
   that a registry miss at the sweep mark sweeps only when it makes an arena, as the mark means. A
   miss on an arena that exists swept too: with the arenas one short of the mark every miss swept,
   each sweep made the arenas missed two misses ago idle (rmm__arena_idle_foreign), and a thread
   cycling over more foreign streams than its cache holds gave back a superblock behind a device
   synchronize at every second allocation (25 library streams and 6 foreign ones: 300 in 600; red
   team 48). Registry lock held. O(1), and at most one id query. */
RMM__PRIVATE bool rmm__arena_has_local(rmm__arena *a, rmm_stream stream, uint64_t key, bool by_thread, uint64_t *prekey) {
    void **slot = rmm__addr_map_find(&a->so.map, (uintptr_t)key);
    uint64_t id = 0;
    if (slot) return !rmm__so_gone((rmm__sstate *)*slot); /* (a gone stream's: its handle's next arena is a new one) */
    if (by_thread || a->so.outlive) return false;
    if (!*prekey && rmm__stream_id_hint(stream, &id) == RMM_SUCCESS) { /* (a library stream's is not used: rmm__so_key) */
        *prekey = id + 16;
        rmm__idless_start(); /* (as rmm__so_key's own query, which this one replaces) */
    }
    return *prekey && rmm__addr_map_find(&a->so.map, (uintptr_t)*prekey) != NULL;
}
/* The arena of the calling thread (default and per-thread streams) or of the stream; made on first
   use. From the thread's cache with no lock after the first call; a foreign stream's hit costs its
   id (cuStreamGetId, about 17 ns), except for a free of a block of arena `owner` (NULL: not a
   free): a cached entry of the handle whose arena is `owner` serves without the id. A stale one
   (its stream was destroyed and the handle given to a new stream) is safe there: the block goes
   pending in the dead stream's arena, and is filed there with no event (the id asked for the batch
   does not match), so it is taken again only by an allocation on that stream (asked by id: never
   again) or after a device synchronize (rmm__arena_collect), which covers the new stream's work
   too; an allocation through the stale entry with no id asked (rmm__arena_idless_local) takes only
   memory whose last use is known over. An entry whose id does not match the one asked is dropped.
   A miss takes the registry lock, and fills a cache entry. O(1). */
RMM__PRIVATE rmm_status rmm__arena_local_for(rmm__arena *a, rmm_stream stream, const rmm__arena_local *owner, rmm__arena_local **out) {
    uint64_t key, prekey = 0;
    bool by_thread = rmm__stream_is_legacy(stream) || rmm__stream_is_per_thread(stream), asked = false;
    rmm__arena_tls_entry old;
    rmm__sstate *ss;
    rmm__arena_local *l;
    rmm_status st;
    unsigned i;
    key = by_thread ? (RMM__KEY_THREAD | rmm__thread_reg_serial()) : ((uint64_t)(uintptr_t)stream | RMM__KEY_HANDLE);
    for (i = 0; i < 4; i++) {
        rmm__arena_tls_entry *e = &rmm__arena_tls[i];
        if (e->generation != a->generation || e->key != key) continue;
        if (!e->id) {
            if (!e->reg || rmm__sreg_alive(e->reg)) {
                *out = e->local;
                return RMM_SUCCESS;
            }
            continue;
        }
        if (owner && e->local == owner) { /* a free into the entry's own arena (see above) */
            *out = e->local;
            return RMM_SUCCESS;
        }
        if (!asked) { /* a foreign stream's entry: the handle names it only if the id is the same */
            uint64_t id = 0;
            asked = true;
            if (rmm__stream_id_hint(stream, &id) == RMM_SUCCESS) { /* (else the locked path reports it) */
                prekey = id + 16;
                rmm__idless_start();
            }
        }
        if (prekey && e->id == prekey) {
            *out = e->local;
            return RMM_SUCCESS;
        }
        if (prekey) rmm__arena_tls_drop(e, a); /* its stream is gone: a new one has the handle */
    }
    if (!asked && !by_thread) prekey = rmm__so_prekey(&a->so, stream); /* a foreign stream's id, asked before the registry lock */
    memset(&old, 0, sizeof old);
    if (!rmm__spin_lock(&a->so.lock)) return rmm__reentrant("arena", "allocate or deallocate");
    if (a->so.count + 1 >= a->so.sweep_at && !rmm__arena_has_local(a, stream, key, by_thread, &prekey)) rmm__arena_reclaim_gone(a);
    st = rmm__so_state(&a->so, stream, prekey, &ss);
    if (st == RMM_SUCCESS) {
        rmm__arena_tls_entry *e = &rmm__arena_tls[rmm__arena_tls_next++ % 4];
        l = (rmm__arena_local *)ss;
        (void)rmm__thread_reg(); /* the thread's exit hook drops the cache's references and pins */
        old = *e;
        e->generation = a->generation;
        e->key = key;
        e->local = l;
        if (!by_thread && !l->ss.by_handle) { /* foreign: keyed by its id too, and pinned */
            e->id = l->ss.key;
            e->reg = NULL;
            RMM__ATOMIC_ADD(&l->pins, 1);
            l->pinned_at = a->sweeps;
        } else {
            e->id = 0;
            e->reg = l->ss.reg;
            if (e->reg) RMM__ATOMIC_ADD(&e->reg->refs, 1);
        }
        *out = l;
    }
    rmm__spin_unlock(&a->so.lock);
    rmm__arena_tls_drop(&old, a); /* (outside the registry lock: it may take rmm__arenas_lock) */
    return st;
}

/* Takes `bytes` (a multiple of the superblock size) from the global arena. */
RMM__PRIVATE rmm__block *rmm__arena_global_take(rmm__arena *a, size_t bytes) {
    rmm__block *b, *tail;
    bool oom;
    (void)rmm__spin_lock(&a->global_lock); /* held around no call that could come back here (rmm__arena_allocate_large's margin fill, RMM_DEBUG_MARGIN, is a CUDA call and a log under it: neither comes back) */
    b = rmm__tlsf_find_scan(&a->global_free, bytes, SIZE_MAX);
    if (b) {
        rmm__tlsf_remove(&a->global_free, b);
        tail = rmm__block_split(&a->global_store, b, bytes, &oom);
        if (tail) rmm__tlsf_insert(&a->global_free, tail);
        if (oom || !rmm__addr_map_put(&a->global_used, (uintptr_t)b->ptr, b)) {
            rmm__block_file(&a->global_store, &a->global_free, b);
            b = NULL;
        }
    }
    rmm__spin_unlock(&a->global_lock);
    return b;
}
/* Returns a block taken from the global arena. Caller holds the global lock. */
RMM__PRIVATE void rmm__arena_global_give_locked(rmm__arena *a, char *ptr) {
    rmm__block *b = (rmm__block *)rmm__addr_map_remove(&a->global_used, (uintptr_t)ptr);
    if (b) rmm__block_file(&a->global_store, &a->global_free, b);
}
/* Takes l's wholly free superblocks out of l (its lists and its superblock list) onto *out, linked
   through next; they go to the global arena only after a device synchronize (rmm__arena_collect).
   Caller holds l's lock. Returns their bytes. */
RMM__PRIVATE size_t rmm__arena_detach_free(rmm__arena_local *l, rmm__chunk **out) {
    rmm__chunk *c, *next;
    size_t detached = 0;
    for (c = l->superblocks; c; c = next) {
        next = c->next;
        if (c->first->owner == &l->free && c->first->size == c->size) {
            rmm__tlsf_remove(&l->free, c->first);
            rmm__block_release(&l->store, c->first);
            if (c->prev) c->prev->next = c->next;
            else l->superblocks = c->next;
            if (c->next) c->next->prev = c->prev;
            RMM__ATOMIC_STORE_RELAXED(&l->superblock_count, l->superblock_count - 1);
            c->prev = NULL;
            c->next = *out;
            *out = c;
            detached += c->size;
        }
    }
    return detached;
}
/* Whether l is a foreign stream's arena that no thread's cache holds (no pin), no call is using,
   and no cache has taken since before the previous sweep: such a stream may be gone (the library
   cannot tell), so its wholly free superblocks go back with the gone ones' (red team 16: each
   foreign stream that came and went kept its arena and a superblock until the arena ran dry, up
   to twice the superblocks of states, 145 MB of host memory for a 2 GiB arena). A live one
   borrows again at its next allocation; one in use between two sweeps is left alone (a review's
   find: a thread cycling over more foreign streams than its cache holds made a device synchronize
   every 28 misses when any uncached arena went). Registry lock held. */
static inline bool rmm__arena_idle_foreign(const rmm__arena *a, rmm__arena_local *l) {
    return rmm__so_by_id(&l->ss) && !l->ss.busy && &l->ss != a->so.last && RMM__ATOMIC_LOAD(&l->pins) == 0 && l->pinned_at + 2 <= a->sweeps;
}
/* Takes a->so.lock for a walk over the arenas (validate, dump, the live-block listing).
   NOT_SUPPORTED, re-entrant, naming `call`, where this thread holds it or one of the per-stream
   arenas' locks: the call is made from below that lock (a backend's callback while that arena is
   mid-change), and the walk must not read it or let its lock go (rmm__spin_lock does not take a
   lock its thread holds: it returns false). O(arenas). */
RMM__PRIVATE rmm_status rmm__arena_walk_lock(rmm__arena *a, const char *call) {
    uint64_t me = rmm__thread_serial();
    size_t i;
    if (!rmm__spin_lock(&a->so.lock)) return rmm__reentrant("arena", call);
    for (i = 0; i < a->so.count; i++)
        if (RMM__ATOMIC_LOAD_RELAXED(&((rmm__arena_local *)a->so.list[i])->lock.holder) == me) {
            rmm__spin_unlock(&a->so.lock);
            return rmm__reentrant("arena", call);
        }
    return RMM_SUCCESS;
}
/* Returns every wholly free superblock of every arena (of gone ones and idle foreign ones
   (rmm__arena_idle_foreign) only, if gone_only) to the global arena, then drops the arenas of gone
   threads and streams, and of foreign streams, that hold nothing. The
   superblocks are taken out of their arenas first and handed to the global arena only after a
   device synchronize, so that the work of every block freed in them (a free on the arena's own
   stream waits for nothing) is done before another arena can borrow them. (Until 2026-11-26 the
   synchronize came first: a block freed between it and the arena's lock, its kernel still
   running, could reach another stream at once.) If the synchronize fails, the superblocks taken
   out go to no arena (their owner entry cleared: a free into them is CORRUPTION) and wait in
   a->unsynced until a later collect's synchronize succeeds (*st: that failure, else RMM_SUCCESS);
   returns the bytes handed on. Caller holds the registry lock. */
RMM__PRIVATE size_t rmm__arena_collect(rmm__arena *a, bool gone_only, rmm_status *st) {
    size_t i, returned = 0;
    rmm__chunk *detached = NULL, *c;
    *st = RMM_SUCCESS;
    for (i = 0; i < a->so.count; i++) {
        rmm__arena_local *l = (rmm__arena_local *)a->so.list[i];
        if ((gone_only && !rmm__so_gone(&l->ss) && !rmm__arena_idle_foreign(a, l)) || RMM__ATOMIC_LOAD_RELAXED(&l->superblock_count) == 0) continue;
        if (!rmm__spin_lock(&l->lock)) continue; /* (this thread holds it: called from below it, mid-change; left as it is) */
        rmm__arena_file_pending(l, false); /* (no event covers them: never known done; a superblock handed on from here is covered by the synchronize below) */
        returned += rmm__arena_detach_free(l, &detached);
        rmm__spin_unlock(&l->lock);
    }
    if (detached || a->unsynced) {
        if ((*st = rmm__device_synchronize()) != RMM_SUCCESS) { /* their last work is not known done */
            while ((c = detached) != NULL) {
                detached = c->next;
                RMM__ATOMIC_STORE(&a->owner[rmm__arena_index(a, c->ptr)], (rmm__arena_local *)NULL);
                c->next = a->unsynced;
                a->unsynced = c;
            }
            returned = 0;
            RMM__LOG(RMM_LOG_LEVEL_WARN, "arena %p: a device synchronize failed: superblocks stay out of every arena until one succeeds (%s)", (void *)a, rmm_last_error());
        }
        if (*st == RMM_SUCCESS && a->unsynced) { /* earlier collects' superblocks join them: one walk counts their bytes and finds the last */
            for (c = a->unsynced;; c = c->next) {
                returned += c->size;
                if (!c->next) break;
            }
            c->next = detached;
            detached = a->unsynced;
            a->unsynced = NULL;
        }
        (void)rmm__spin_lock(&a->global_lock);
        while ((c = detached) != NULL) {
            detached = c->next;
            RMM__ATOMIC_STORE(&a->owner[rmm__arena_index(a, c->ptr)], (rmm__arena_local *)NULL);
            rmm__arena_global_give_locked(a, c->ptr);
            RMM_SYS_FREE(c);
        }
        rmm__spin_unlock(&a->global_lock);
    }
    for (i = a->so.count; i-- > 0;) { /* no superblock: no block; a foreign stream's is made again at its next use */
        rmm__arena_local *l = (rmm__arena_local *)a->so.list[i];
        if (rmm__so_retirable(&a->so, &l->ss)) rmm__so_retire(&a->so, &l->ss);
    }
    return returned;
}
RMM__PRIVATE void rmm__arena_reclaim_gone(rmm__arena *a) {
    rmm__kept_error kept;
    rmm_status st;
    size_t returned;
    a->sweeps++;
    rmm__error_keep(&kept);
    returned = rmm__arena_collect(a, true, &st); /* (a failed synchronize is logged there; the caller goes on) */
    rmm__error_back(&kept);
    if (returned) RMM__LOG(RMM_LOG_LEVEL_DEBUG, "arena %p: %zu bytes of superblocks of exited threads and destroyed streams returned", (void *)a, returned);
}
/* On exhaustion: every arena's wholly free superblocks go back to the global arena. Fails with
   the device synchronize's status if that fails (nothing is handed on then). */
RMM__PRIVATE rmm_status rmm__arena_defragment(rmm__arena *a) {
    size_t returned;
    rmm_status st;
    if (!rmm__spin_lock(&a->so.lock)) return rmm__reentrant("arena", "allocate");
    returned = rmm__arena_collect(a, false, &st);
    rmm__spin_unlock(&a->so.lock);
    if (st != RMM_SUCCESS) return st;
    RMM__LOG(RMM_LOG_LEVEL_INFO, "arena %p: defragmented, %zu bytes of superblocks returned to the global arena", (void *)a, returned);
    return RMM_SUCCESS;
}
/* No room even after defragmenting: says why (rmm__oom_explain). `mine`: the caller's arena, or NULL
   for a block above a superblock, which only the global arena's whole superblocks serve: no arena's
   lists could, so none counts as other streams' (a red team's find: the caller's own free memory
   was counted so, and the verdict said "held by other streams" on the one stream ever used). */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__arena_oom(rmm__arena *a, size_t bytes, size_t alignment, rmm_stream stream, const rmm__arena_local *mine) {
    rmm__oom_facts f;
    size_t i;
    RMM__LOG(RMM_LOG_LEVEL_WARN, "arena %p: out of memory allocating %zu bytes (arena %zu bytes)", (void *)a, bytes, a->arena_bytes);
    memset(&f, 0, sizeof f);
    f.who = "arena";
    f.bytes = bytes;
    f.alignment = alignment;
    f.stream = stream;
    f.held = f.maximum = a->arena_bytes; /* an arena never grows */
    if (rmm__spin_lock(&a->so.lock)) {
        (void)rmm__spin_lock(&a->global_lock);
        f.free_total = a->global_free.free_bytes;
        f.largest_free = rmm__tlsf_largest(&a->global_free);
        rmm__spin_unlock(&a->global_lock);
        for (i = 0; i < a->so.count; i++) {
            rmm__arena_local *l = (rmm__arena_local *)a->so.list[i];
            if (!rmm__spin_lock(&l->lock)) continue; /* (this thread holds it: called from below it, mid-change; not counted) */
            f.free_total += l->free.free_bytes + l->pending_bytes; /* (pending: freed, waiting for its batch's event) */
            if (mine && l != mine) f.free_other += l->free.free_bytes + l->pending_bytes;
            else f.largest_free = rmm__max(f.largest_free, rmm__tlsf_largest(&l->free));
            rmm__spin_unlock(&l->lock);
        }
        rmm__spin_unlock(&a->so.lock);
    }
    f.live = a->arena_bytes - f.free_total;
    return rmm__oom_explain(&a->base, &f, "no room even after every wholly free superblock went back to the global arena");
}
RMM__PRIVATE rmm_status rmm__arena_allocate_large(rmm__arena *a, void **ptr, size_t bytes, size_t need, size_t alignment, rmm_stream stream) {
    size_t run;
    rmm__block *b = NULL;
    uintptr_t aligned;
    int attempt;
    if (!rmm__round_up(need, a->sb_bytes, &run)) return rmm__arena_oom(a, bytes, alignment, stream, NULL);
    for (attempt = 0; attempt < 2; attempt++) {
        b = rmm__arena_global_take(a, run);
        if (b) break;
        if (attempt == 0) RMM_TRY(rmm__arena_defragment(a));
    }
    if (!b) return rmm__arena_oom(a, bytes, alignment, stream, NULL);
    aligned = ((uintptr_t)b->ptr + (alignment - 1)) & ~(uintptr_t)(alignment - 1);
    (void)rmm__spin_lock(&a->global_lock);
    if (!rmm__addr_map_put(&a->large_out, aligned, b->ptr)) {
        rmm__arena_global_give_locked(a, b->ptr);
        rmm__spin_unlock(&a->global_lock);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "arena: out of host memory");
    }
#if RMM__MARGIN_ON /* (filled before the lock goes: a check_corruption meanwhile must not read it unfilled) */
    b->requested = rmm__margin_set((void *)aligned, bytes, stream) ? bytes + (size_t)(aligned - (uintptr_t)b->ptr) /* from the block's start */ : SIZE_MAX;
    b->serial = rmm__margin_serial();
#else
    (void)stream;
#endif
    rmm__spin_unlock(&a->global_lock);
    RMM__ATOMIC_STORE(&a->owner[rmm__arena_index(a, (void *)aligned)], RMM__ARENA_LARGE);
    rmm__san_region_register(a->heap, (void *)aligned, bytes);
    *ptr = (void *)aligned;
    return RMM_SUCCESS;
}
/* Adds a superblock to l. Caller holds l's lock. */
RMM__PRIVATE bool rmm__arena_borrow(rmm__arena *a, rmm__arena_local *l) {
    rmm__block *g = rmm__arena_global_take(a, a->sb_bytes), *b;
    rmm__chunk *c;
    if (!g) return false;
    c = (rmm__chunk *)rmm__calloc(1, sizeof *c);
    b = rmm__block_new(&l->store);
    if (!c || !b) {
        RMM_SYS_FREE(c);
        if (b) rmm__block_release(&l->store, b);
        (void)rmm__spin_lock(&a->global_lock);
        rmm__arena_global_give_locked(a, g->ptr);
        rmm__spin_unlock(&a->global_lock);
        return false;
    }
    c->ptr = g->ptr;
    c->size = a->sb_bytes;
    c->first = b;
    c->next = l->superblocks;
    if (l->superblocks) l->superblocks->prev = c;
    l->superblocks = c;
    RMM__ATOMIC_STORE_RELAXED(&l->superblock_count, l->superblock_count + 1);
    b->ptr = c->ptr;
    b->size = c->size;
    b->chunk = c;
    rmm__tlsf_insert(&l->free, b);
    RMM__ATOMIC_STORE(&a->owner[rmm__arena_index(a, c->ptr)], l);
    return true;
}
RMM__PRIVATE rmm_status rmm__arena_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__arena *a = (rmm__arena *)self;
    rmm__arena_local *l;
    rmm__block *b;
    size_t size, need;
    int attempt;
    if (RMM__UNLIKELY(bytes > SIZE_MAX - RMM__MARGIN || !rmm__align_up(bytes + RMM__MARGIN, RMM_ALIGNMENT, &size) || size > SIZE_MAX - alignment))
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "arena: out of memory allocating %zu bytes: larger than any arena", bytes);
    need = size + (alignment - RMM_ALIGNMENT);
    if (need > a->sb_bytes) return rmm__arena_allocate_large(a, ptr, bytes, need, alignment, stream);
    if (RMM__UNLIKELY((l = rmm__arena_idless_local(a, stream)) != NULL)) { /* no id asked: only memory whose last use is known over */
        if (RMM__UNLIKELY(!rmm__spin_lock(&l->lock))) return rmm__reentrant("arena", "allocate");
        if (!rmm__arena_known_done(l)) { /* (the device behind: back off, see rmm__idless_skip) */
            rmm__idless_left = 0;
            rmm__idless_skip = RMM__IDLESS_SKIP;
        } else if ((b = rmm__tlsf_find(&l->free, need)) != NULL) {
            goto found;
        }
        rmm__spin_unlock(&l->lock);
    }
    RMM_TRY(rmm__arena_local_for(a, stream, NULL, &l));
    for (attempt = 0;; attempt++) {
        rmm_status st;
        if (RMM__UNLIKELY(!rmm__spin_lock(&l->lock))) return rmm__reentrant("arena", "allocate");
        if ((b = l->pending) != NULL && b->size == size && ((uintptr_t)b->ptr & (alignment - 1)) == 0) {
            /* its own stream (the id asked): the block it freed last serves whole, as the lists'
               LIFO would without batches (with the device behind, lifo on a foreign stream took
               a new block each time, split and merged back per batch: 58 -> 74 ns a pair) */
            if (RMM__UNLIKELY(!rmm__addr_map_put(&l->used, (uintptr_t)b->ptr, b))) { /* (the block stays pending) */
                rmm__spin_unlock(&l->lock);
                return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "arena: out of host memory for block records");
            }
            l->pending = b->free_next;
            b->free_next = NULL;
            b->parked = NULL;
            l->pending_count--;
            l->pending_bytes -= size;
            goto handed;
        }
        b = rmm__tlsf_find(&l->free, need);
        if (!b && l->pending) { /* (its own stream: its pending blocks serve before a new superblock) */
            rmm__arena_file_pending(l, rmm__arena_cover_pending(l));
            b = rmm__tlsf_find(&l->free, need);
        }
        if (!b && rmm__arena_borrow(a, l)) b = rmm__tlsf_find(&l->free, need);
        if (!b) b = rmm__tlsf_find_scan(&l->free, need, SIZE_MAX);
        if (b) break;
        rmm__spin_unlock(&l->lock);
        st = attempt == 1 ? rmm__arena_oom(a, bytes, alignment, stream, l) : rmm__arena_defragment(a);
        if (st != RMM_SUCCESS) return st;
    }
found:
    b = rmm__block_take(&l->store, &l->free, b, size, alignment);
    if (RMM__UNLIKELY(!b || !rmm__addr_map_put(&l->used, (uintptr_t)b->ptr, b))) {
        if (b) rmm__block_file(&l->store, &l->free, b);
        rmm__spin_unlock(&l->lock);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "arena: out of host memory for block records");
    }
handed:
    *ptr = b->ptr;
#if RMM__MARGIN_ON
    b->requested = rmm__margin_set(*ptr, bytes, stream) ? bytes : SIZE_MAX; /* (filled before the lock goes, as the pool's: a check_corruption meanwhile must not read it unfilled) */
    b->serial = rmm__margin_serial();
#endif
    rmm__spin_unlock(&l->lock);
    rmm__san_region_register(a->heap, *ptr, bytes);
    return RMM_SUCCESS;
}
/* Puts b (freed on o's foreign stream, out of `used`) at the top of o's pending batch. Caller
   holds o's lock. O(1). */
static inline void rmm__arena_pend(rmm__arena_local *o, rmm__block *b) {
    b->parked = o;
    b->free_next = o->pending;
    o->pending = b;
    o->pending_count++;
    o->pending_bytes += b->size;
}
/* A free of block b (out of `used`) on the foreign stream whose arena o owns it, when the batch
   is full (the free parks it inline otherwise): b waits, pending, until one event covers a
   batch (see rmm__arena_local). The free that finds the batch full asks the stream's id (with o's
   lock let go, b out of `used`, on no list and counted in flight, so a double free meanwhile is caught: the
   event covers the batch only if the handle still names o's stream), records the event and files
   the batch. If the handle names another stream by now, or the id or the record fails, the batch
   is filed with no event: only an allocation that asked the id then takes from it (never known
   done; a device synchronize covers it: rmm__arena_collect), so a free never fails here. Caller
   holds o's lock; it is let go on return. O(1), O(batch) once per batch. */
RMM__PRIVATE RMM__NOINLINE void rmm__arena_park(rmm__arena_local *o, rmm__block *b, rmm_stream stream) {
    rmm__kept_error kept;
    uint64_t id = 0;
    bool same;
    b->parked = o; /* (in flight: on no list, counted in o->inflight; a dump reads parked as a state) */
    o->inflight++;
    o->inflight_bytes += b->size;
    rmm__spin_unlock(&o->lock);
    rmm__error_keep(&kept); /* (the free succeeds whatever fails below: no failure stays behind) */
    same = rmm__stream_unique_id(stream, &id) == RMM_SUCCESS && id + 16 == o->ss.key;
    (void)rmm__spin_lock(&o->lock); /* (this thread held it: not a reentrant call) */
    o->inflight--;
    o->inflight_bytes -= b->size;
    if (o->pending_count >= RMM__ARENA_PENDING) { /* (another free may have filed it meanwhile) */
        if (same && rmm__so_record(&o->ss) != RMM_SUCCESS) same = false; /* (filed with no event) */
        rmm__arena_file_pending(o, same);
    }
    rmm__arena_pend(o, b);
    rmm__spin_unlock(&o->lock);
    rmm__error_back(&kept);
}
/* *out: the arena that holds ptr's superblock, locked, or NULL (none holds it, or it is a large
   block's). Read under the registry lock, which every retirement of an arena holds; an arena loses
   no superblock while its lock is held, so it stays once the registry lock goes. If the arena's lock
   is busy (held across an event record or query: microseconds), the arena is pinned (no sweep
   retires it or takes its idle superblocks) and its lock is waited for with the registry lock let
   go, so other threads' misses, sweeps and frees do not queue behind this one (review 17's LOW 5);
   the owner is then read again (the superblock may have gone meanwhile: a double free). For a free
   that this thread's cache does not pin to the owner. NOT_SUPPORTED iff reentered from below the
   arena (either lock held by this thread). O(1): two locks, an atomic pin and unpin if contended. */
RMM__PRIVATE rmm_status rmm__arena_lock_owner(rmm__arena *a, const void *ptr, rmm__arena_local **out, const char *call) {
    rmm__arena_local *o;
    size_t idx = rmm__arena_index(a, ptr);
    bool locked;
    *out = NULL;
    for (;;) {
        if (RMM__UNLIKELY(!rmm__spin_lock(&a->so.lock))) return rmm__reentrant("arena", call);
        o = RMM__ATOMIC_LOAD(&a->owner[idx]);
        if (o == RMM__ARENA_LARGE) o = NULL;
        if (!o || rmm__spin_trylock(&o->lock)) break;
        if (RMM__UNLIKELY(RMM__ATOMIC_LOAD_RELAXED(&o->lock.holder) == rmm__thread_serial())) {
            rmm__spin_unlock(&a->so.lock);
            return rmm__reentrant("arena", call);
        }
        RMM__ATOMIC_ADD(&o->pins, 1); /* (under the registry lock, where retirements look) */
        rmm__spin_unlock(&a->so.lock);
        locked = rmm__spin_lock(&o->lock);
        if (RMM__UNLIKELY(!locked)) {
            RMM__ATOMIC_SUB(&o->pins, 1);
            return rmm__reentrant("arena", call);
        }
        if (RMM__LIKELY(RMM__ATOMIC_LOAD(&a->owner[idx]) == o)) {
            RMM__ATOMIC_SUB(&o->pins, 1); /* (o holds the superblock, and keeps it while locked) */
            *out = o;
            return RMM_SUCCESS;
        }
        rmm__spin_unlock(&o->lock); /* the superblock went meanwhile (a double free): o may hold none now, */
        RMM__ATOMIC_SUB(&o->pins, 1); /* so it is unpinned only once this call is done with it; look again */
    }
    rmm__spin_unlock(&a->so.lock);
    *out = o;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__arena_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__arena *a = (rmm__arena *)self;
    rmm__arena_local *o, *me = NULL;
    rmm__block *b;
    size_t size = 0;
    rmm_status st = RMM_SUCCESS;
    if (RMM__UNLIKELY((char *)ptr < a->base_ptr || (char *)ptr >= a->base_ptr + a->arena_bytes))
        return rmm__fail(RMM_ERROR_CORRUPTION, "arena: deallocate(ptr=%p, bytes=%zu): not inside this arena", ptr, bytes);
    o = RMM__ATOMIC_LOAD(&a->owner[rmm__arena_index(a, ptr)]);
#if RMM__MARGIN_ON
    if (o) { /* a block written past stays allocated */
        size_t requested = SIZE_MAX;
        void **slot;
        if (o == RMM__ARENA_LARGE) {
            (void)rmm__spin_lock(&a->global_lock);
            slot = rmm__addr_map_find(&a->large_out, (uintptr_t)ptr);
            if (slot) slot = rmm__addr_map_find(&a->global_used, (uintptr_t)*slot);
            if (slot && ((rmm__block *)*slot)->requested != SIZE_MAX) requested = ((rmm__block *)*slot)->requested - (size_t)((char *)ptr - ((rmm__block *)*slot)->ptr);
            rmm__spin_unlock(&a->global_lock);
        } else {
            RMM_TRY(rmm__arena_lock_owner(a, ptr, &o, "deallocate")); /* (o read with no lock may be gone) */
            if (o) {
                slot = rmm__addr_map_find(&o->used, (uintptr_t)ptr);
                if (slot) requested = ((rmm__block *)*slot)->requested;
                rmm__spin_unlock(&o->lock);
            }
        }
        if (requested != SIZE_MAX) RMM_TRY(rmm__margin_check("arena", ptr, requested, stream));
    }
#endif
    if (o == RMM__ARENA_LARGE) {
        void *start;
        (void)rmm__spin_lock(&a->global_lock);
        /* only a pointer that was handed out frees a block (not, say, the start of one handed out
           at an aligned address inside it) */
        void **slot;
        size_t run = 0, off = 0;
        start = rmm__addr_map_find(&a->large_out, (uintptr_t)ptr) ? *rmm__addr_map_find(&a->large_out, (uintptr_t)ptr) : NULL;
        slot = start ? rmm__addr_map_find(&a->global_used, (uintptr_t)start) : NULL;
        if (slot) {
            run = ((rmm__block *)*slot)->size;
            off = (size_t)((char *)ptr - (char *)start);
        }
        rmm__spin_unlock(&a->global_lock);
        if (!start) return rmm__fail(RMM_ERROR_CORRUPTION, "arena: deallocate(ptr=%p, bytes=%zu): not a block of this arena, or already freed", ptr, bytes);
        /* the size allocated: its run of superblocks (with up to alignment - 256 bytes in front)
           is the block's (a wrong size was freed as the right one: a red team's find) */
        if (slot && (bytes > SIZE_MAX - RMM__MARGIN || !rmm__align_up(bytes + RMM__MARGIN, RMM_ALIGNMENT, &size) || size > run - off ||
                     run - off - size >= a->sb_bytes + (alignment - RMM_ALIGNMENT)))
            return rmm__fail(RMM_ERROR_CORRUPTION, "arena: deallocate(ptr=%p, bytes=%zu): the block holds %zu bytes from there; the size must be the one allocated", ptr, bytes, run - off);
        RMM_TRY(rmm__stream_sync_raw(stream)); /* reused with no event */
        (void)rmm__spin_lock(&a->global_lock);
        start = rmm__addr_map_remove(&a->large_out, (uintptr_t)ptr);
        b = start ? (rmm__block *)rmm__addr_map_remove(&a->global_used, (uintptr_t)start) : NULL;
        if (!b) {
            rmm__spin_unlock(&a->global_lock);
            return rmm__fail(RMM_ERROR_CORRUPTION, "arena: deallocate(ptr=%p, bytes=%zu): not a block of this arena, or already freed", ptr, bytes);
        }
        RMM__ATOMIC_STORE(&a->owner[rmm__arena_index(a, ptr)], (rmm__arena_local *)NULL);
        rmm__block_file(&a->global_store, &a->global_free, b);
        rmm__spin_unlock(&a->global_lock);
        rmm__san_region_unregister(a->heap, ptr);
        return RMM_SUCCESS;
    }
    if (RMM__UNLIKELY(!o)) return rmm__fail(RMM_ERROR_CORRUPTION, "arena: deallocate(ptr=%p, bytes=%zu): not a block of this arena, or already freed", ptr, bytes);
    RMM_TRY(rmm__arena_local_for(a, stream, o, &me));
    if (me != o) {
        RMM_TRY(rmm__stream_sync_raw(stream)); /* the owner's stream will reuse it without an event */
        /* o, read with no lock and not pinned, may have been retired meanwhile (a double free:
           its superblock wholly free, a sweep took it, this call's own miss in local_for among
           them; red team 17): the owner again, under the registry lock */
        RMM_TRY(rmm__arena_lock_owner(a, ptr, &o, "deallocate"));
        if (RMM__UNLIKELY(!o))
            return rmm__fail(RMM_ERROR_CORRUPTION, "arena: deallocate(ptr=%p, bytes=%zu): not a block of this arena, or already freed", ptr, bytes);
    } else if (RMM__UNLIKELY(!rmm__spin_lock(&o->lock))) { /* (o is me: pinned by this thread's cache) */
        return rmm__reentrant("arena", "deallocate");
    }
    b = (rmm__block *)rmm__addr_map_remove(&o->used, (uintptr_t)ptr);
    if (RMM__UNLIKELY(!b)) {
        st = rmm__fail(RMM_ERROR_CORRUPTION, "arena: deallocate(ptr=%p, bytes=%zu): not a block of this arena, or already freed", ptr, bytes);
    } else if (RMM__UNLIKELY(bytes > SIZE_MAX - RMM__MARGIN || !rmm__align_up(bytes + RMM__MARGIN, RMM_ALIGNMENT, &size) || size != b->size)) {
        (void)rmm__addr_map_put(&o->used, (uintptr_t)ptr, b);
        st = rmm__fail(RMM_ERROR_CORRUPTION, "arena: deallocate(ptr=%p, bytes=%zu): the block holds %zu bytes", ptr, bytes, b->size);
    } else if (RMM__UNLIKELY(me == o && rmm__so_by_id(&o->ss))) {
        if (RMM__LIKELY(o->pending_count < RMM__ARENA_PENDING)) {
            rmm__arena_pend(o, b);
        } else {
            rmm__arena_park(o, b, stream); /* (lets the lock go) */
            rmm__san_region_unregister(a->heap, ptr);
            return RMM_SUCCESS;
        }
    } else {
        rmm__block_file(&o->store, &o->free, b);
    }
    rmm__spin_unlock(&o->lock);
    if (st == RMM_SUCCESS) rmm__san_region_unregister(a->heap, ptr);
    return st;
}
RMM__PRIVATE rmm_status rmm__arena_validate(rmm__arena *a) {
    rmm__walk w;
    size_t blocks = 0, bytes = 0, i;
    rmm_status st;
    memset(&w, 0, sizeof w);
    RMM_TRY(rmm__arena_walk_lock(a, "rmm_resource_validate"));
    (void)rmm__spin_lock(&a->global_lock);
    st = rmm__validate_chunk("arena (global)", &a->global_chunk, &a->global_used, &w);
    if (st == RMM_SUCCESS) st = rmm__validate_tlsf("arena (global)", &a->global_free, &blocks, &bytes);
    if (st == RMM_SUCCESS && (blocks != w.free_blocks || w.used_blocks != a->global_used.count))
        st = rmm__fail(RMM_ERROR_CORRUPTION, "arena (global): block counts are off");
    rmm__spin_unlock(&a->global_lock);
    for (i = 0; i < a->so.count && st == RMM_SUCCESS; i++) {
        rmm__arena_local *l = (rmm__arena_local *)a->so.list[i];
        rmm__chunk *c;
        size_t n = 0;
        (void)rmm__spin_lock(&l->lock); /* (not this thread's: rmm__arena_walk_lock) */
        memset(&w, 0, sizeof w);
        w.pending_unmapped = true;
        blocks = bytes = 0;
        if (l->ss.index != i) st = rmm__fail(RMM_ERROR_CORRUPTION, "arena: arena %zu records index %zu", i, l->ss.index);
        for (c = l->superblocks; c && st == RMM_SUCCESS; c = c->next, n++) {
            if (n >= l->superblock_count) { /* (a cycle: the walk ends) */
                st = rmm__fail(RMM_ERROR_CORRUPTION, "arena: an arena counts %zu superblocks but holds more", l->superblock_count);
                break;
            }
            st = rmm__validate_chunk("arena", c, &l->used, &w);
            if (st == RMM_SUCCESS && a->owner[rmm__arena_index(a, c->ptr)] != l)
                st = rmm__fail(RMM_ERROR_CORRUPTION, "arena: superblock %p is held by an arena the owner table does not name", (void *)c->ptr);
            if (st == RMM_SUCCESS && (size_t)(c->ptr - a->base_ptr) % a->sb_bytes != 0)
                st = rmm__fail(RMM_ERROR_CORRUPTION, "arena: superblock %p is off the superblock grid", (void *)c->ptr);
        }
        if (st == RMM_SUCCESS && n != l->superblock_count) st = rmm__fail(RMM_ERROR_CORRUPTION, "arena: an arena counts %zu superblocks but holds %zu", l->superblock_count, n);
        if (st == RMM_SUCCESS) st = rmm__validate_tlsf("arena", &l->free, &blocks, &bytes);
        if (st == RMM_SUCCESS && (blocks != w.free_blocks || w.used_blocks != l->used.count))
            st = rmm__fail(RMM_ERROR_CORRUPTION, "arena: a thread arena's block counts are off");
        if (st == RMM_SUCCESS) {
            const rmm__block *q;
            size_t listed = 0, listed_bytes = 0;
            bool marked = true;
            for (q = l->pending; q && listed <= l->pending_count; q = q->free_next, listed++) {
                listed_bytes += q->size;
                if (q->parked != l || q->owner) marked = false;
            }
            if (!marked || listed != l->pending_count || listed_bytes != l->pending_bytes || w.pending_blocks != listed + l->inflight || (listed && !rmm__so_by_id(&l->ss)))
                st = rmm__fail(RMM_ERROR_CORRUPTION, "arena: an arena's pending blocks are off (%zu listed, %zu counted, %zu found in its superblocks)", listed, l->pending_count, w.pending_blocks);
        }
        rmm__spin_unlock(&l->lock);
    }
    rmm__spin_unlock(&a->so.lock);
    return st;
}
RMM__PRIVATE void rmm__arena_destroy(rmm_resource *self) {
    rmm__arena *a = (rmm__arena *)self;
    bool exiting = rmm__exiting();
    rmm__arena **at;
    rmm__device_guard g;
    rmm__lock(&rmm__arenas_lock); /* first: no thread's cache drops a pin on it from here on */
    for (at = &rmm__arenas_live; *at && *at != a; at = &(*at)->next_live) {
    }
    if (*at) *at = a->next_live;
    rmm__unlock(&rmm__arenas_lock);
    rmm__device_enter_quietly(&g, a->device, exiting); /* (as the pool's destroy) */
    rmm__so_free(&a->so, exiting);
    while (a->unsynced) {
        rmm__chunk *c = a->unsynced;
        a->unsynced = c->next;
        RMM_SYS_FREE(c);
    }
    if (a->base_ptr && !exiting) {
        rmm__san_heap_unregister(a->heap);
        (void)rmm__device_synchronize();
        (void)rmm_deallocate(a->upstream, a->base_ptr, a->arena_bytes, RMM_STREAM_DEFAULT);
    }
    rmm__device_leave(&g);
    RMM_SYS_FREE(a->owner);
    RMM_SYS_FREE(a->global_free.heads);
    rmm__block_store_free(&a->global_store);
    rmm__addr_map_free(&a->global_used);
    rmm__addr_map_free(&a->large_out);
    RMM_SYS_FREE(a);
}

RMM__IMPL rmm_status rmm_arena_create(rmm_resource **out, rmm_resource *upstream, const rmm_arena_desc *desc) {
    rmm_arena_desc d = desc ? *desc : rmm_arena_desc_default();
    rmm__arena *a;
    rmm__block *b;
    void *base = NULL;
    rmm_status st;
    if (!out) return RMM__NULL_OUT("rmm_arena_create", "out");
    *out = NULL;
    if (!upstream) return rmm__null_upstream("rmm_arena_create");
    if (d.superblock_bytes == 0) d.superblock_bytes = RMM__MIB;
    if (d.superblock_bytes % RMM_ALIGNMENT) return RMM__INVALID("rmm_arena_create: superblock_bytes %zu is not a multiple of 256", d.superblock_bytes);
    if (d.arena_bytes == 0) {
        size_t f = 0, t = 0;
        RMM_TRY(rmm__mem_info(&f, &t));
        d.arena_bytes = f / 2;
    }
    d.arena_bytes = d.arena_bytes / d.superblock_bytes * d.superblock_bytes;
    if (d.arena_bytes == 0) return RMM__INVALID("rmm_arena_create: the arena must hold at least one superblock of %zu bytes", d.superblock_bytes);
    rmm__ensure_exit_hook();
    /* upstream first: a size it refuses costs no host bookkeeping (the owner table takes 8 bytes a
       superblock: 2 GiB for 64 GiB of 256-byte superblocks) */
    st = rmm__allocate_own(upstream, &base, d.arena_bytes, RMM_STREAM_DEFAULT); /* (checked: NULL or misaligned is refused) */
    if (st != RMM_SUCCESS) return st;
    /* The arena hands its memory to any stream with no wait. From a stream-ordered upstream (a pool,
       an async resource, adaptors over them) it is ordered after the legacy stream's work only: wait
       for that once here (a red team's find, 2026-11-28). cudaMalloc, managed and pinned memory is
       not stream-ordered. */
    if (rmm__upstream_ordered(upstream) && (st = rmm__stream_sync_raw(RMM_STREAM_DEFAULT)) != RMM_SUCCESS) {
        RMM__CLEANUP(rmm_deallocate(upstream, base, d.arena_bytes, RMM_STREAM_DEFAULT));
        return st;
    }
    a = (rmm__arena *)rmm__calloc(1, sizeof *a);
    if (!a) {
        RMM__CLEANUP(rmm_deallocate(upstream, base, d.arena_bytes, RMM_STREAM_DEFAULT));
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_arena_create: out of host memory");
    }
    a->base.vtable = &rmm__arena_vtable;
    a->upstream = upstream;
    a->base_ptr = (char *)base; /* (from here rmm__arena_destroy gives it back) */
    a->arena_bytes = d.arena_bytes;
    a->heap = rmm__san_heap_register(base, d.arena_bytes);
    a->sb_bytes = d.superblock_bytes;
    a->sb_count = d.arena_bytes / d.superblock_bytes;
    a->generation = RMM__ATOMIC_ADD(&rmm__arena_generations, 1);
    if (!rmm__device_peek(&a->device)) a->device = -1;
    RMM__ATOMIC_STORE(&rmm__thread_exit_hook, &rmm__arena_tls_release);
    rmm__lock(&rmm__arenas_lock);
    a->next_live = rmm__arenas_live;
    rmm__arenas_live = a;
    rmm__unlock(&rmm__arenas_lock);
    a->owner = (rmm__arena_local **)rmm__calloc(a->sb_count, sizeof *a->owner);
    b = NULL;
    if (!a->owner || !rmm__addr_map_init(&a->global_used, 64) || !rmm__addr_map_init(&a->large_out, 16) ||
        !rmm__so_init(&a->so, &rmm__arena_so_ops, "arena", d.streams_outlive_arena, true) || !(b = rmm__block_new(&a->global_store))) {
        rmm__arena_destroy(&a->base);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_arena_create: out of host memory");
    }
    a->so.device = a->device; /* (a sweep's synchronize is that device's) */
    a->global_chunk.ptr = a->base_ptr;
    a->global_chunk.size = d.arena_bytes;
    a->global_chunk.first = b;
    b->ptr = a->base_ptr;
    b->size = d.arena_bytes;
    b->chunk = &a->global_chunk;
    if (!rmm__tlsf_ready(&a->global_free)) {
        rmm__block_release(&a->global_store, b);
        rmm__arena_destroy(&a->base);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_arena_create: out of host memory");
    }
    rmm__tlsf_insert(&a->global_free, b);
    *out = &a->base;
    return RMM_SUCCESS;
}
#else
RMM__IMPL rmm_status rmm_arena_create(rmm_resource **out, rmm_resource *upstream, const rmm_arena_desc *desc) {
    (void)upstream;
    (void)desc;
    if (out) *out = NULL;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_arena_create: compiled out by RMM_NO_ARENA");
}
#endif /* RMM_NO_ARENA */
RMM__IMPL rmm_arena_desc rmm_arena_desc_default(void) {
    rmm_arena_desc d;
    memset(&d, 0, sizeof d);
    d.superblock_bytes = RMM__MIB;
    return d;
}

/* -- its row in >>diagnostics (rmm__descs): dump, validate, upstream, allocation base, live blocks -- */
#if !defined(RMM_NO_ARENA)
RMM__PRIVATE size_t rmm__arena_stream_id(const rmm__tlsf *t, void *arg) {
    (void)arg;
    return ((const rmm__sstate *)t->state)->index;
}
RMM__PRIVATE size_t rmm__arena_global_id(const rmm__tlsf *t, void *arg) {
    (void)t;
    return *(const size_t *)arg; /* the global arena's free space: id past the thread arenas */
}
RMM__PRIVATE rmm_status rmm__dump_arena(rmm__json *j, rmm__arena *a) {
    size_t i, global_id;
    RMM_TRY(rmm__arena_walk_lock(a, "rmm_resource_dump_json"));
    global_id = a->so.count;
    rmm__json_open(j, "config", '{');
    rmm__json_u64(j, "arena_bytes", a->arena_bytes);
    rmm__json_u64(j, "superblock_bytes", a->sb_bytes);
    rmm__json_bool(j, "streams_outlive_arena", a->so.outlive);
    rmm__json_close(j, '}');
    rmm__json_open(j, "streams", '[');
    for (i = 0; i < a->so.count; i++) {
        rmm__arena_local *l = (rmm__arena_local *)a->so.list[i];
        (void)rmm__spin_lock(&l->lock);
        /* its free blocks: those of its lists, and those freed on its (foreign) stream that wait
           for their batch's event, which the chunks list as free with its stream too (red team 37a:
           they were left out here) */
        rmm__json_stream(j, i, &l->ss, l->free.free_blocks + l->pending_count + l->inflight, l->free.free_bytes + l->pending_bytes + l->inflight_bytes);
        rmm__spin_unlock(&l->lock);
    }
    rmm__json_close(j, ']');
    rmm__json_open(j, "chunks", '[');
    (void)rmm__spin_lock(&a->global_lock); /* the whole arena: superblocks lent and large blocks are "used" here */
    rmm__json_chunk(j, &a->global_chunk, rmm__arena_global_id, &global_id);
    rmm__spin_unlock(&a->global_lock);
    for (i = 0; i < a->so.count; i++) { /* then every lent superblock with the blocks of its arena */
        rmm__arena_local *l = (rmm__arena_local *)a->so.list[i];
        rmm__chunk *c;
        (void)rmm__spin_lock(&l->lock);
        for (c = l->superblocks; c; c = c->next) rmm__json_chunk(j, c, rmm__arena_stream_id, NULL);
        rmm__spin_unlock(&l->lock);
    }
    rmm__json_close(j, ']');
    rmm__spin_unlock(&a->so.lock);
    return RMM_SUCCESS;
}
#endif

/* -- arena -- */
#if !defined(RMM_NO_ARENA)
RMM__PRIVATE rmm_resource *rmm__arena_upstream(const rmm_resource *mr) { return ((const rmm__arena *)mr)->upstream; }
RMM__PRIVATE rmm_status rmm__arena_validate_mr(rmm_resource *mr) { return rmm__arena_validate((rmm__arena *)mr); }
RMM__PRIVATE rmm_status rmm__arena_dump_mr(rmm__json *j, rmm_resource *mr, int nesting) {
    (void)nesting;
    return rmm__dump_arena(j, (rmm__arena *)mr);
}
/* A live block: the one a superblock's owner has in its map of blocks in use, or a large block
   handed out (red team 37a: until 2026-11-30 any address inside the arena passed, a freed block's
   and one never handed out too). O(1) and the owner's lock, or the global lock. */
RMM__PRIVATE rmm_status rmm__arena_base_step(rmm_resource *mr, const char **p, size_t *off, rmm_resource **next) {
    rmm__arena *a = (rmm__arena *)mr;
    rmm__arena_local *o;
    bool live = false;
    if (*p < a->base_ptr || *p >= a->base_ptr + a->arena_bytes)
        return RMM__INVALID("rmm_resource_allocation_base(ptr=%p): not a live block of resource '%s'", (const void *)*p, rmm_resource_type_name(mr));
    o = RMM__ATOMIC_LOAD(&a->owner[rmm__arena_index(a, *p)]);
    if (o == RMM__ARENA_LARGE) {
        if (!rmm__spin_lock(&a->global_lock)) return rmm__reentrant("arena", "rmm_resource_allocation_base");
        live = rmm__addr_map_find(&a->large_out, (uintptr_t)*p) != NULL;
        rmm__spin_unlock(&a->global_lock);
    } else if (o) {
        RMM_TRY(rmm__arena_lock_owner(a, *p, &o, "rmm_resource_allocation_base")); /* (o read with no lock may be gone) */
        if (o) {
            live = rmm__addr_map_find(&o->used, (uintptr_t)*p) != NULL;
            rmm__spin_unlock(&o->lock);
        }
    }
    if (!live) return RMM__INVALID("rmm_resource_allocation_base(ptr=%p): not a live block of resource '%s'", (const void *)*p, rmm_resource_type_name(mr));
    *off += (size_t)(*p - a->base_ptr);
    *p = a->base_ptr;
    *next = a->upstream;
    return RMM_SUCCESS;
}
#if RMM__MARGIN_ON
RMM__PRIVATE rmm_status rmm__arena_live(rmm_resource *mr, rmm__live_list *live) {
    rmm__arena *a = (rmm__arena *)mr;
    size_t i;
    RMM_TRY(rmm__arena_walk_lock(a, "rmm_resource_check_corruption"));
    for (i = 0; i < a->so.count; i++) {
        rmm__arena_local *l = (rmm__arena_local *)a->so.list[i];
        (void)rmm__spin_lock(&l->lock);
        rmm__live_from_map(live, &l->used);
        rmm__spin_unlock(&l->lock);
    }
    (void)rmm__spin_lock(&a->global_lock);
    for (i = 0; a->large_out.slots && i <= a->large_out.mask; i++) {
        void **slot;
        if (!a->large_out.slots[i].key) continue;
        slot = rmm__addr_map_find(&a->global_used, (uintptr_t)a->large_out.slots[i].value);
        if (slot && ((rmm__block *)*slot)->requested != SIZE_MAX)
            rmm__live_add(live, (const char *)a->large_out.slots[i].key, ((rmm__block *)*slot)->requested - (size_t)((const char *)a->large_out.slots[i].key - ((rmm__block *)*slot)->ptr),
                          ((rmm__block *)*slot)->serial);
    }
    rmm__spin_unlock(&a->global_lock);
    rmm__spin_unlock(&a->so.lock);
    return RMM_SUCCESS;
}
#else
#define rmm__arena_live NULL
#endif
RMM__PRIVATE bool rmm__is_arena(const rmm_resource *mr) { return mr->vtable == &rmm__arena_vtable; }
RMM__PRIVATE bool rmm__arena_holds(rmm_resource *mr, const void *ptr) {
    const rmm__arena *a = (const rmm__arena *)mr;
    return rmm__is_arena(mr) && (const char *)ptr >= a->base_ptr && (const char *)ptr < a->base_ptr + a->arena_bytes;
}
#else
RMM__PRIVATE bool rmm__is_arena(const rmm_resource *mr) {
    (void)mr;
    return false;
}
RMM__PRIVATE bool rmm__arena_holds(rmm_resource *mr, const void *ptr) {
    (void)mr, (void)ptr;
    return false;
}
#endif

/* ======================================================================================= */
/* ==== adaptors ======================================================================== */
/* ======================================================================================= */ /* >>adaptors */

/* Every adaptor starts with this: the vtable and the upstream it does not own. */
typedef struct rmm__adaptor {
    rmm_resource base;
    rmm_resource *upstream;
    bool check; /* upstream is a resource of the user's: its answers are checked (RMM__FORWARD_ALLOC) */
} rmm__adaptor;
RMM__PRIVATE void rmm__adaptor_destroy_plain(rmm_resource *self) { RMM_SYS_FREE(self); }
/* Allocates an adaptor of `size` bytes; fails with INVALID_ARGUMENT for NULL out or upstream. */
RMM__PRIVATE rmm_status rmm__adaptor_new(rmm_resource **out, rmm_resource *upstream, size_t size, const rmm_resource_vtable *vt, const char *fn, rmm__adaptor **made) {
    rmm__adaptor *a = NULL;
    if (!out) return RMM__NULL_OUT(fn, "out");
    *out = NULL;
    if (!upstream) return rmm__null_upstream(fn);
    a = (rmm__adaptor *)rmm__calloc(1, size);
    if (!a) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    a->base.vtable = vt;
    a->upstream = upstream;
    a->check = !rmm__vtable_is_own(upstream->vtable);
    *made = a;
    return RMM_SUCCESS;
}
#define RMM__UP(self) (((rmm__adaptor *)(self))->upstream)
/* An adaptor's call of its upstream. Where the upstream is a resource of the user's (check: set
   at creation), its answer is checked as rmm__allocate_checked does, before the adaptor counts,
   tracks or logs it (red team 37a: an adaptor passed a success with NULL on, the tracking adaptor
   dereferenced it, the statistics and limiting adaptors counted a block that can never be freed).
   Over the header's own resources, which never give such an answer, one load and a branch more
   than the plain call (a check after every call kept the call's arguments live across it: 9 to 14
   instructions an allocation per adaptor, valgrind, host backend). */
#define RMM__FORWARD_ALLOC(self, ptr, bytes, alignment, stream)                                                                   \
    (RMM__UNLIKELY(((rmm__adaptor *)(self))->check) ? rmm__allocate_checked((self)->vtable->type_name, RMM__UP(self), ptr, bytes, alignment, stream) \
                                                    : RMM__UP(self)->vtable->allocate(RMM__UP(self), ptr, bytes, alignment, stream))
#define RMM__FORWARD_FREE(self, ptr, bytes, alignment, stream) RMM__UP(self)->vtable->deallocate(RMM__UP(self), ptr, bytes, alignment, stream)

/* ---- logging: RMM's CSV, one row per event ---- */
#if !defined(RMM_NO_LOGGING)
typedef struct rmm__logging {
    rmm__adaptor a;
    FILE *file;
    bool owns_file, auto_flush;
    bool error_before; /* the caller's FILE had its error set already: not the adaptor's rows */
    bool failed;       /* a row's write (or its auto flush) failed: seen where error_before hides
                          ferror (under lock) */
    rmm__mutex lock;
} rmm__logging;
/* Thread,Time,Action,Pointer,Size,Stream - exactly as RMM's logging_resource_adaptor writes. */
/* Formats by hand (printf costs several times more); Pointer follows glibc's %p: 0x... or (nil). */
RMM__PRIVATE void rmm__logging_row(rmm__logging *l, const char *action, void *ptr, size_t bytes, rmm_stream stream) {
    char row[160];
    size_t n = rmm__put_dec(row, rmm__thread_id()), a = strlen(action);
    row[n++] = ',';
    n += rmm__format_time(row + n);
    row[n++] = ',';
    memcpy(row + n, action, a);
    n += a;
    row[n++] = ',';
    if (ptr) {
        row[n++] = '0';
        row[n++] = 'x';
        n += rmm__put_hex(row + n, (uint64_t)(uintptr_t)ptr);
    } else {
        memcpy(row + n, "(nil)", 5);
        n += 5;
    }
    row[n++] = ',';
    n += rmm__put_dec(row + n, (uint64_t)bytes);
    row[n++] = ',';
    if (stream) { /* RMM's format_stream writes the cudaStream_t as an ostream writes a pointer: 0x and
                     hex, 0 for NULL (red team 48: no 0x, so "2" stood where RMM's logs say "0x2") */
        row[n++] = '0';
        row[n++] = 'x';
    }
    n += rmm__put_hex(row + n, (uint64_t)(uintptr_t)stream);
    row[n++] = '\n';
    rmm__lock(&l->lock);
    if (fwrite(row, 1, n, l->file) != n || (l->auto_flush && fflush(l->file) != 0)) l->failed = true;
    rmm__unlock(&l->lock);
}
RMM__PRIVATE rmm_status rmm__logging_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm_status st = RMM__FORWARD_ALLOC(self, ptr, bytes, alignment, stream);
    rmm__logging_row((rmm__logging *)self, st == RMM_SUCCESS ? "allocate" : "allocate failure", st == RMM_SUCCESS ? *ptr : NULL, bytes, stream);
    return st;
}
RMM__PRIVATE rmm_status rmm__logging_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm_status st;
    rmm__logging_row((rmm__logging *)self, "free", ptr, bytes, stream); /* (before: once freed, another thread may get the address and log it) */
    st = RMM__FORWARD_FREE(self, ptr, bytes, alignment, stream);
    if (RMM__UNLIKELY(st != RMM_SUCCESS)) rmm__logging_row((rmm__logging *)self, "free failure", ptr, bytes, stream); /* the block is still live */
    return st;
}
RMM__PRIVATE void rmm__logging_destroy(rmm_resource *self) {
    rmm__logging *l = (rmm__logging *)self;
    bool lost = l->failed || (ferror(l->file) != 0 && !l->error_before); /* a write failed on the way, though later ones may
                                         have worked (a full disk freed again; red team 33: ~800 of 1,020
                                         rows were gone and destroy said nothing) */
    if ((l->owns_file ? fclose(l->file) : fflush(l->file)) != 0) /* (rows still buffered: the last error says they are lost) */
        (void)rmm__fail(RMM_ERROR_IO, "rmm_resource_destroy: the logging adaptor's last rows could not be written to its file: %s", strerror(errno));
    else if (lost)
        (void)rmm__fail(RMM_ERROR_IO, "rmm_resource_destroy: the logging adaptor lost rows: a write to its file failed");
    rmm__mutex_destroy(&l->lock);
    RMM_SYS_FREE(l);
}
static const rmm_resource_vtable rmm__logging_vtable = {"logging", rmm__logging_allocate, rmm__logging_deallocate, NULL, rmm__logging_destroy};

RMM__PRIVATE rmm_status rmm__logging_new(rmm_resource **out, rmm_resource *upstream, FILE *file, bool owns, bool auto_flush, const char *fn) {
    rmm__adaptor *a = NULL;
    rmm__logging *l;
    rmm_status st = rmm__adaptor_new(out, upstream, sizeof(rmm__logging), &rmm__logging_vtable, fn, &a);
    if (st != RMM_SUCCESS) {
        if (owns) fclose(file);
        return st;
    }
    l = (rmm__logging *)a;
    l->file = file;
    l->owns_file = owns;
    l->auto_flush = auto_flush;
    l->error_before = ferror(file) != 0;
    rmm__mutex_init(&l->lock);
    if (fputs("Thread,Time,Action,Pointer,Size,Stream\n", file) < 0 || (auto_flush && fflush(file) != 0)) {
        rmm__logging_destroy(&a->base);
        return rmm__fail(RMM_ERROR_IO, "%s: cannot write the log header", fn);
    }
    *out = &a->base;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_logging_adaptor_create(rmm_resource **out, rmm_resource *upstream, const char *path, bool auto_flush) {
    FILE *f;
    if (!out) return RMM__NULL_OUT("rmm_logging_adaptor_create", "out");
    *out = NULL;
    if (!upstream) return rmm__null_upstream("rmm_logging_adaptor_create");
    if (!path || !*path) {
        path = getenv("RMM_LOG_FILE");
        if (!path || !*path)
            return RMM__INVALID("rmm_logging_adaptor_create: no path given and RMM_LOG_FILE is not set");
    }
    f = fopen(path, "w");
    if (!f) return rmm__fail(RMM_ERROR_IO, "rmm_logging_adaptor_create: cannot open '%s' for writing: %s", path, strerror(errno));
    return rmm__logging_new(out, upstream, f, true, auto_flush, "rmm_logging_adaptor_create");
}
RMM__IMPL rmm_status rmm_logging_adaptor_create_file(rmm_resource **out, rmm_resource *upstream, FILE *file, bool auto_flush) {
    if (!out) return RMM__NULL_OUT("rmm_logging_adaptor_create_file", "out");
    *out = NULL;
    if (!file) return RMM__NULL_OUT("rmm_logging_adaptor_create_file", "file");
    return rmm__logging_new(out, upstream, file, false, auto_flush, "rmm_logging_adaptor_create_file");
}
RMM__IMPL rmm_status rmm_logging_adaptor_flush(rmm_resource *mr) {
    rmm__logging *l = (rmm__logging *)mr;
    int rc;
    if (!mr || mr->vtable != &rmm__logging_vtable)
        return RMM__INVALID("rmm_logging_adaptor_flush: resource '%s' is not a logging adaptor", rmm_resource_type_name(mr));
    rmm__lock(&l->lock);
    rc = fflush(l->file);
    /* (a caller's FILE may come with its error set: that is not the adaptor's rows, as destroy
       says; until red team 47 flush said IO for it on every call) */
    if (rc == 0 && (l->failed || (ferror(l->file) && !l->error_before))) rc = -1;
    rmm__unlock(&l->lock);
    return rc == 0 ? RMM_SUCCESS : rmm__fail(RMM_ERROR_IO, "rmm_logging_adaptor_flush: writing the log failed");
}
#else
RMM__IMPL rmm_status rmm_logging_adaptor_create(rmm_resource **out, rmm_resource *upstream, const char *path, bool auto_flush) {
    (void)upstream; (void)path; (void)auto_flush;
    if (out) *out = NULL;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_logging_adaptor_create: compiled out by RMM_NO_LOGGING");
}
RMM__IMPL rmm_status rmm_logging_adaptor_create_file(rmm_resource **out, rmm_resource *upstream, FILE *file, bool auto_flush) {
    (void)upstream; (void)file; (void)auto_flush;
    if (out) *out = NULL;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_logging_adaptor_create_file: compiled out by RMM_NO_LOGGING");
}
RMM__IMPL rmm_status rmm_logging_adaptor_flush(rmm_resource *mr) {
    (void)mr;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_logging_adaptor_flush: compiled out by RMM_NO_LOGGING");
}
#endif /* RMM_NO_LOGGING */

/* ---- statistics: bytes and counts with nested scopes, with no lock on the hot path (but a wait while a pop folds) ---- */
/* Scopes live in blocks of RMM__STATS_BLOCK, made as pushes first reach them and kept until the
   adaptor goes (an update reads a block with no lock: it never moves), up to RMM__STATS_BLOCKS
   blocks: 16,383 nested scopes (63 until 2026-11-29, when a recursive function under rmmh's
   profiler failed at depth 64, where RMM has no limit; a red team's find). */
#define RMM__STATS_BLOCK 64
#define RMM__STATS_BLOCKS 256
#define RMM__STATS_MAX_DEPTH (RMM__STATS_BLOCK * RMM__STATS_BLOCKS)
/* A scope's counters and the number of updates in flight on it. An update enters the innermost
   scope (and checks that it still is innermost), counts, and leaves; pop marks the depth folding
   (RMM__STATS_FOLDING: updates wait), waits until no update is left in the popped scope (or in
   the outer one, from before the push), folds it while nothing counts, then makes the outer scope
   innermost, so every allocation counts in exactly one scope and the fold sees the outer scope's
   value as it is. */
#define RMM__STATS_FOLDING 0x10000
typedef struct rmm__stats_scope {
    rmm_statistics s;
    int active;
} rmm__stats_scope;
typedef struct rmm__stats {
    rmm__adaptor a;
    int depth; /* index of the innermost scope */
    rmm__stats_scope *blocks[RMM__STATS_BLOCKS]; /* scope d: blocks[d / 64][d % 64]; [0] made with the adaptor */
    rmm__mutex scope_lock; /* push and pop only */
} rmm__stats;
RMM__STATIC_ASSERT(RMM__STATS_MAX_DEPTH <= RMM__STATS_FOLDING, stats_depth_below_the_folding_bit);
static inline rmm__stats_scope *rmm__stats_scope_at(rmm__stats *s, int d) { return &s->blocks[(unsigned)d / RMM__STATS_BLOCK][(unsigned)d % RMM__STATS_BLOCK]; }
/* Adds n >= 0 to a total, which stays at INT64_MAX once past it (a long-lived program may move
   that many bytes: 9.2 EB, about 107 days at 1 TB/s). The add wraps (the __atomic builtins wrap),
   and the store puts it back: a read between the two sees it negative. */
static inline void rmm__total_add(int64_t *total, int64_t n) {
    if (RMM__UNLIKELY(RMM__ATOMIC_ADD_RELAXED(total, n) < 0)) RMM__ATOMIC_STORE_RELAXED(total, INT64_MAX);
}
RMM__PRIVATE void rmm__counter_add(rmm_counter *c, int64_t n) {
    int64_t now = RMM__ATOMIC_ADD_RELAXED(&c->value, n), peak;
    if (n <= 0) return;
    rmm__total_add(&c->total, n);
    peak = RMM__ATOMIC_LOAD_RELAXED(&c->peak);
    while (now > peak && !RMM__ATOMIC_CAS_WEAK_RELAXED(&c->peak, &peak, now)) {
    }
}
/* Counts one allocation (+) or free (-) of `bytes` in the innermost scope. No lock; while a pop
   folds, it waits for the pop (which waits for the updates already counting in its two scopes). */
RMM__PRIVATE void rmm__stats_count(rmm__stats *s, int64_t bytes, int64_t count) {
    rmm__stats_scope *scope;
    unsigned spins = 0;
    for (;;) {
        int d = RMM__ATOMIC_LOAD_SEQ_CST(&s->depth);
        if (RMM__UNLIKELY(d & RMM__STATS_FOLDING)) { /* a pop folds: wait for it */
            if (++spins < 1024) rmm__cpu_relax();
            else sched_yield();
            continue;
        }
        scope = rmm__stats_scope_at(s, d);
        RMM__ATOMIC_ADD_SEQ_CST(&scope->active, 1);
        if (RMM__ATOMIC_LOAD_SEQ_CST(&s->depth) == d) break;
        RMM__ATOMIC_SUB(&scope->active, 1); /* popped or pushed meanwhile */
    }
    rmm__counter_add(&scope->s.bytes, bytes);
    rmm__counter_add(&scope->s.count, count);
    RMM__ATOMIC_SUB(&scope->active, 1);
}
/* bytes as the counters' int64_t: INT64_MAX at most (a user resource may grant more; cast, it
   counted negative, and its free added to the total). */
static inline int64_t rmm__stats_bytes(size_t bytes) { return bytes > (size_t)INT64_MAX ? INT64_MAX : (int64_t)bytes; }
RMM__PRIVATE rmm_status rmm__stats_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    RMM_TRY(RMM__FORWARD_ALLOC(self, ptr, bytes, alignment, stream));
    rmm__stats_count((rmm__stats *)self, rmm__stats_bytes(bytes), 1);
    return RMM_SUCCESS;
}
/* Uncounted only once upstream has freed: a failed or refused free leaves the counts alone. */
RMM__PRIVATE rmm_status rmm__stats_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    RMM_TRY(RMM__FORWARD_FREE(self, ptr, bytes, alignment, stream));
    rmm__stats_count((rmm__stats *)self, -rmm__stats_bytes(bytes), -1);
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__stats_destroy(rmm_resource *self) {
    rmm__stats *s = (rmm__stats *)self;
    size_t i;
    for (i = 0; i < RMM__STATS_BLOCKS; i++) RMM_SYS_FREE(s->blocks[i]);
    rmm__mutex_destroy(&s->scope_lock);
    RMM_SYS_FREE(self);
}
static const rmm_resource_vtable rmm__stats_vtable = {"statistics", rmm__stats_allocate, rmm__stats_deallocate, NULL, rmm__stats_destroy};
RMM__IMPL rmm_status rmm_statistics_adaptor_create(rmm_resource **out, rmm_resource *upstream) {
    rmm__adaptor *a = NULL;
    RMM_TRY(rmm__adaptor_new(out, upstream, sizeof(rmm__stats), &rmm__stats_vtable, "rmm_statistics_adaptor_create", &a));
    if (!(((rmm__stats *)a)->blocks[0] = (rmm__stats_scope *)rmm__calloc(RMM__STATS_BLOCK, sizeof(rmm__stats_scope)))) {
        RMM_SYS_FREE(a);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_statistics_adaptor_create: out of host memory");
    }
    rmm__mutex_init(&((rmm__stats *)a)->scope_lock);
    *out = &a->base;
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__stats_read(const rmm_counter *c, rmm_counter *out) {
    out->value = RMM__ATOMIC_LOAD_RELAXED(&c->value);
    out->peak = RMM__ATOMIC_LOAD_RELAXED(&c->peak);
    out->total = RMM__ATOMIC_LOAD_RELAXED(&c->total);
    if (out->peak < out->value) out->peak = out->value; /* (rmm__counter_add raises the peak after the value, */
    if (out->total < out->peak) out->total = out->peak; /* and the total after the value: each is reached once the adds in flight land) */
}
#define RMM__STATS_CHECK(mr, fn) \
    if (!(mr) || (mr)->vtable != &rmm__stats_vtable) return RMM__INVALID("%s: resource '%s' is not a statistics adaptor", fn, rmm_resource_type_name(mr))
RMM__IMPL rmm_status rmm_statistics_get(rmm_resource *mr, rmm_statistics *out) {
    rmm__stats *s = (rmm__stats *)mr;
    rmm_statistics *top;
    if (!out) return RMM__NULL_OUT("rmm_statistics_get", "out");
    RMM__STATS_CHECK(mr, "rmm_statistics_get");
    rmm__lock(&s->scope_lock);
    top = &rmm__stats_scope_at(s, RMM__ATOMIC_LOAD(&s->depth))->s;
    rmm__stats_read(&top->bytes, &out->bytes);
    rmm__stats_read(&top->count, &out->count);
    rmm__unlock(&s->scope_lock);
    return RMM_SUCCESS;
}
static inline void rmm__counter_zero(rmm_counter *c) {
    RMM__ATOMIC_STORE_RELAXED(&c->value, 0);
    RMM__ATOMIC_STORE_RELAXED(&c->peak, 0);
    RMM__ATOMIC_STORE_RELAXED(&c->total, 0);
}
RMM__IMPL rmm_status rmm_statistics_push(rmm_resource *mr) {
    rmm__stats *s = (rmm__stats *)mr;
    rmm_status st = RMM_SUCCESS;
    RMM__STATS_CHECK(mr, "rmm_statistics_push");
    rmm__lock(&s->scope_lock);
    if (s->depth + 1 >= RMM__STATS_MAX_DEPTH) st = RMM__INVALID("rmm_statistics_push: more than %d nested scopes", RMM__STATS_MAX_DEPTH - 1);
    else if (!s->blocks[(s->depth + 1) / RMM__STATS_BLOCK] &&
             !(s->blocks[(s->depth + 1) / RMM__STATS_BLOCK] = (rmm__stats_scope *)rmm__calloc(RMM__STATS_BLOCK, sizeof(rmm__stats_scope))))
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_statistics_push: out of host memory for scopes %d and up", s->depth + 1);
    else {
        rmm__stats_scope *inner = rmm__stats_scope_at(s, s->depth + 1);
        /* an update that read the old depth may still enter here; it backs out once it sees depth */
        while (RMM__ATOMIC_LOAD_SEQ_CST(&inner->active)) sched_yield();
        rmm__counter_zero(&inner->s.bytes); /* (atomic stores: readers and backing-out updates load them atomically) */
        rmm__counter_zero(&inner->s.count);
        RMM__ATOMIC_STORE_SEQ_CST(&s->depth, s->depth + 1);
    }
    rmm__unlock(&s->scope_lock);
    return st;
}
/* Folds a popped scope into its outer one, atomically against updates counting there meanwhile:
   peak = max(peak, value + inner.peak), value += inner.value, total += inner.total (RMM's rule). */
RMM__PRIVATE void rmm__counter_fold(rmm_counter *outer, const rmm_counter *inner) {
    int64_t value = RMM__ATOMIC_LOAD_RELAXED(&outer->value), peak = RMM__ATOMIC_LOAD_RELAXED(&outer->peak);
    int64_t folded_peak; /* (saturated: a value past INT64_MAX wraps, as documented, but this sum is plain arithmetic, where
                            wrapping is undefined: red team 47 saw UBSan stop on it) */
    if (inner->peak > 0 && value > INT64_MAX - inner->peak) folded_peak = INT64_MAX;
    else if (inner->peak < 0 && value < INT64_MIN - inner->peak) folded_peak = INT64_MIN;
    else folded_peak = value + inner->peak;
    while (folded_peak > peak && !RMM__ATOMIC_CAS_WEAK_RELAXED(&outer->peak, &peak, folded_peak)) {
    }
    RMM__ATOMIC_ADD_RELAXED(&outer->value, inner->value);
    rmm__total_add(&outer->total, inner->total);
}
RMM__IMPL rmm_status rmm_statistics_pop(rmm_resource *mr, rmm_statistics *popped) {
    rmm__stats *s = (rmm__stats *)mr;
    rmm__stats_scope *inner, *outer;
    rmm_statistics folded;
    RMM__STATS_CHECK(mr, "rmm_statistics_pop");
    rmm__lock(&s->scope_lock);
    if (s->depth == 0) {
        rmm__unlock(&s->scope_lock);
        return RMM__INVALID("rmm_statistics_pop: the outermost scope cannot be popped");
    }
    inner = rmm__stats_scope_at(s, s->depth);
    outer = rmm__stats_scope_at(s, s->depth - 1);
    RMM__ATOMIC_STORE_SEQ_CST(&s->depth, s->depth | RMM__STATS_FOLDING);
    /* updates that entered the popped scope before the store (or the outer one, before the push
       that made the popped one) finish first; those after it wait */
    /* (seq_cst, as the updates' increment of active and load of depth: with acquire loads a weakly
       ordered machine may see active 0 while an update still sees the old depth; a review's find) */
    while (RMM__ATOMIC_LOAD_SEQ_CST(&inner->active) || RMM__ATOMIC_LOAD_SEQ_CST(&outer->active)) sched_yield();
    rmm__stats_read(&inner->s.bytes, &folded.bytes);
    rmm__stats_read(&inner->s.count, &folded.count);
    rmm__counter_fold(&outer->s.bytes, &folded.bytes);
    rmm__counter_fold(&outer->s.count, &folded.count);
    RMM__ATOMIC_STORE_SEQ_CST(&s->depth, (s->depth & ~RMM__STATS_FOLDING) - 1);
    rmm__unlock(&s->scope_lock);
    if (popped) *popped = folded;
    return RMM_SUCCESS;
}

/* ---- tracking: every outstanding allocation, with an optional stack ---- */
#if defined(__GLIBC__)
#include <execinfo.h>
#define RMM__HAVE_BACKTRACE 1
#else
#define RMM__HAVE_BACKTRACE 0
#endif
#define RMM__TRACK_FRAMES 32
typedef struct rmm__track_entry {
    size_t bytes;
    rmm_stream stream;
    int frames;
    bool replaced; /* its free is in flight and the address came back meanwhile: the record is gone,
                      the entry stays that free's to release */
    void *stack[1]; /* frames entries when stacks are captured */
} rmm__track_entry;
typedef struct rmm__tracking {
    rmm__adaptor a;
    bool capture_stacks;
    rmm__mutex lock;
    rmm__addr_map live;
    size_t bytes;
} rmm__tracking;
RMM__PRIVATE rmm_status rmm__tracking_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__tracking *t = (rmm__tracking *)self;
    rmm__track_entry *e, *dropped = NULL;
    void *frames[RMM__TRACK_FRAMES];
    int n = 0;
    bool ok, live;
#if RMM__HAVE_BACKTRACE
    if (t->capture_stacks) n = backtrace(frames, RMM__TRACK_FRAMES);
#else
    (void)frames;
#endif
    e = (rmm__track_entry *)RMM_SYS_MALLOC(sizeof *e + (size_t)(n > 0 ? n : 0) * sizeof(void *));
    if (!e) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "tracking: out of host memory");
    e->bytes = bytes;
    e->stream = stream;
    e->frames = n;
    e->replaced = false;
    if (n > 0) memcpy(e->stack, frames, (size_t)n * sizeof(void *));
    {
        rmm_status st = RMM__FORWARD_ALLOC(self, ptr, bytes, alignment, stream);
        if (st != RMM_SUCCESS) {
            RMM_SYS_FREE(e);
            return st;
        }
    }
    rmm__lock(&t->lock);
    {
        /* a record still claimed by a free in flight (whose upstream free succeeded, since the address
           came back) is stale: it is replaced and its entry marked; that free releases the entry */
        void **stale = rmm__addr_map_find(&t->live, (uintptr_t)*ptr);
        rmm__track_entry *old = stale && rmm__slot_claimed(*stale) ? (rmm__track_entry *)rmm__slot_value(*stale) : NULL;
        live = stale && !old;
        if (live) { /* a live record of an address upstream has just handed out: its block was freed below
                       the adaptor (through its upstream), so the record is stale and goes (red team 29:
                       it was kept, and every later allocation upstream placed there failed) */
            dropped = (rmm__track_entry *)rmm__slot_value(*stale);
            *stale = e;
            t->bytes -= dropped->bytes;
            ok = true;
        } else {
            ok = rmm__addr_map_record(&t->live, (uintptr_t)*ptr, e);
        }
        if (ok && old) {
            t->bytes -= old->bytes;
            old->replaced = true;
        }
    }
    if (ok) t->bytes += bytes;
    rmm__unlock(&t->lock);
    if (dropped) {
        RMM__LOG(RMM_LOG_LEVEL_WARN, "tracking: upstream handed out %p again while it was tracked (%zu bytes): it was freed below the adaptor; its record goes",
                 *ptr, dropped->bytes);
        RMM_SYS_FREE(dropped);
    }
    if (!ok) {
        RMM__CLEANUP(RMM__FORWARD_FREE(self, *ptr, bytes, alignment, stream));
        RMM_SYS_FREE(e);
        /* (host memory for the map is OUT_OF_MEMORY, which a failure callback above may retry; it
           was CORRUPTION with the live case until a red team's find, 2026-11-29) */
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "tracking: out of host memory for the record of %p (%zu bytes; given back upstream)", *ptr, bytes);
    }
    return RMM_SUCCESS;
}
/* The record is claimed, not removed, while upstream frees: a failed free leaves it as it was. */
RMM__PRIVATE rmm_status rmm__tracking_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__tracking *t = (rmm__tracking *)self;
    rmm__claim claim;
    rmm__track_entry *e;
    rmm__claim_result c;
    rmm_status st;
    bool replaced;
    rmm__lock(&t->lock);
    c = rmm__addr_map_claim(&t->live, (uintptr_t)ptr, &claim);
    rmm__unlock(&t->lock);
    if (c != RMM__CLAIM_TAKEN)
        return rmm__fail(RMM_ERROR_CORRUPTION, "tracking: deallocate(ptr=%p, bytes=%zu): %s; not passed upstream", ptr, bytes,
                         c == RMM__CLAIM_BUSY ? "a free of it is in flight on another thread" : "not handed out by this adaptor");
    e = (rmm__track_entry *)claim.value;
    if (e->bytes != bytes) {
        RMM__LOG(RMM_LOG_LEVEL_ERROR, "tracking: %p freed with %zu bytes but allocated with %zu; freeing %zu", ptr, bytes, e->bytes, e->bytes);
        bytes = e->bytes;
    }
    st = RMM__FORWARD_FREE(self, ptr, bytes, alignment, stream);
    rmm__lock(&t->lock);
    /* replaced: a new allocation at this address took the slot (and counted these bytes out). Else the
       slot still holds this claim */
    replaced = e->replaced;
    if (!replaced) {
        rmm__addr_map_settle(&t->live, (uintptr_t)ptr, &claim, st == RMM_SUCCESS);
        if (st == RMM_SUCCESS) t->bytes -= e->bytes;
    }
    rmm__unlock(&t->lock);
    if (st == RMM_SUCCESS || replaced) RMM_SYS_FREE(e);
    return st;
}
RMM__PRIVATE void rmm__tracking_destroy(rmm_resource *self) {
    rmm__tracking *t = (rmm__tracking *)self;
    size_t i;
    if (t->live.count) /* the leak finder's last word (destroy returns no status) */
        RMM__LOG(RMM_LOG_LEVEL_WARN, "tracking %p: destroyed with %zu outstanding allocations (%zu bytes)", (void *)t, t->live.count, t->bytes);
    for (i = 0; i <= t->live.mask; i++)
        if (t->live.slots[i].key) RMM_SYS_FREE(rmm__slot_value(t->live.slots[i].value));
    rmm__addr_map_free(&t->live);
    rmm__mutex_destroy(&t->lock);
    RMM_SYS_FREE(t);
}
static const rmm_resource_vtable rmm__tracking_vtable = {"tracking", rmm__tracking_allocate, rmm__tracking_deallocate, NULL, rmm__tracking_destroy};
RMM__IMPL rmm_status rmm_tracking_adaptor_create(rmm_resource **out, rmm_resource *upstream, bool capture_stacks) {
    rmm__adaptor *a = NULL;
    rmm__tracking *t;
    RMM_TRY(rmm__adaptor_new(out, upstream, sizeof(rmm__tracking), &rmm__tracking_vtable, "rmm_tracking_adaptor_create", &a));
    t = (rmm__tracking *)a;
    if (!rmm__addr_map_init(&t->live, 64)) {
        RMM_SYS_FREE(t);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_tracking_adaptor_create: out of host memory");
    }
    rmm__mutex_init(&t->lock);
    t->capture_stacks = capture_stacks && RMM__HAVE_BACKTRACE;
    *out = &a->base;
    return RMM_SUCCESS;
}
#define RMM__TRACKING_CHECK(mr, fn) \
    if (!(mr) || (mr)->vtable != &rmm__tracking_vtable) return RMM__INVALID("%s: resource '%s' is not a tracking adaptor", fn, rmm_resource_type_name(mr))
RMM__IMPL rmm_status rmm_tracking_get(rmm_resource *mr, size_t *outstanding_bytes, size_t *outstanding_count) {
    rmm__tracking *t = (rmm__tracking *)mr;
    RMM__TRACKING_CHECK(mr, "rmm_tracking_get");
    rmm__lock(&t->lock);
    if (outstanding_bytes) *outstanding_bytes = t->bytes;
    if (outstanding_count) *outstanding_count = t->live.count;
    rmm__unlock(&t->lock);
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_tracking_report(rmm_resource *mr, FILE *out) {
    rmm__tracking *t = (rmm__tracking *)mr;
    size_t i;
    if (!out) return RMM__NULL_OUT("rmm_tracking_report", "out");
    RMM__TRACKING_CHECK(mr, "rmm_tracking_report");
    rmm__lock(&t->lock);
    fprintf(out, "Outstanding allocations: %zu (%zu bytes)\n", t->live.count, t->bytes);
    for (i = 0; i <= t->live.mask; i++) {
        rmm__track_entry *e = (rmm__track_entry *)rmm__slot_value(t->live.slots[i].value);
        if (!t->live.slots[i].key) continue;
        fprintf(out, "%p: %zu B, stream %llx\n", (void *)t->live.slots[i].key, e->bytes, (unsigned long long)(uintptr_t)e->stream);
#if RMM__HAVE_BACKTRACE
        if (e->frames > 0) {
            char **names = backtrace_symbols(e->stack, e->frames);
            int f;
            fprintf(out, " : callstack:\n");
            for (f = 1; f < e->frames; f++) fprintf(out, "    #%d %s\n", f - 1, names ? names[f] : "?");
            free(names);
        }
#endif
    }
    rmm__unlock(&t->lock);
    return fflush(out) != 0 || ferror(out) ? rmm__fail(RMM_ERROR_IO, "rmm_tracking_report: writing the report failed") : RMM_SUCCESS; /* (a buffered stream fails at the flush) */
}

/* ---- limiting: a cap on bytes outstanding, counted in units of 256 ---- */
typedef struct rmm__limiting {
    rmm__adaptor a;
    size_t limit, allocated;
} rmm__limiting;
/* A refused request, explained: `held` bytes were outstanding. */
RMM__PRIVATE RMM__NOINLINE rmm_status rmm__limiting_oom(rmm__limiting *l, size_t bytes, size_t alignment, rmm_stream stream, size_t held, const char *cause) {
    rmm__oom_facts f;
    memset(&f, 0, sizeof f);
    f.who = "limiting";
    f.bytes = bytes;
    f.alignment = alignment;
    f.stream = stream;
    f.maximum = RMM__ATOMIC_LOAD_RELAXED(&l->limit);
    f.bounded = true; /* a limit of 0 refuses everything: it is a maximum, not "none" */
    f.held = f.live = held;
    return rmm__oom_explain(&l->a.base, &f, cause);
}
/* Counts `rounded` bytes down, to 0 at the least (a free of a wrong size or of a block from before
   the adaptor may have taken the count below what is still reserved). */
RMM__PRIVATE void rmm__limiting_uncount(rmm__limiting *l, size_t rounded) {
    size_t held = RMM__ATOMIC_LOAD_RELAXED(&l->allocated);
    while (!RMM__ATOMIC_CAS(&l->allocated, &held, held - rmm__min(held, rounded))) {
    }
}
RMM__PRIVATE rmm_status rmm__limiting_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__limiting *l = (rmm__limiting *)self;
    size_t rounded, held;
    rmm_status st;
    size_t limit = RMM__ATOMIC_LOAD_RELAXED(&l->limit);
    if (!rmm__align_up(bytes, RMM_ALIGNMENT, &rounded) || rounded > limit)
        return rmm__limiting_oom(l, bytes, alignment, stream, RMM__ATOMIC_LOAD(&l->allocated), "the request alone exceeds the limit");
    /* reserved only if it fits: the count never holds more than the limit, nor a wrapped sum (an
       add, then a take-back, let a request near SIZE_MAX wrap the count, and the clamped take-back
       then forgot every live byte: a red team's find) */
    held = RMM__ATOMIC_LOAD_RELAXED(&l->allocated);
    do {
        if (rounded > limit - rmm__min(held, limit)) return rmm__limiting_oom(l, bytes, alignment, stream, held, NULL);
    } while (!RMM__ATOMIC_CAS(&l->allocated, &held, held + rounded));
    st = RMM__FORWARD_ALLOC(self, ptr, bytes, alignment, stream);
    if (st != RMM_SUCCESS) rmm__limiting_uncount(l, rounded);
    return st;
}
RMM__PRIVATE rmm_status rmm__limiting_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__limiting *l = (rmm__limiting *)self;
    size_t rounded = 0;
    rmm_status st = RMM__FORWARD_FREE(self, ptr, bytes, alignment, stream);
    if (st == RMM_SUCCESS) {
        /* at most what is outstanding: a wrong size, or a block from before the adaptor, must not
           wrap the count (every later request would be refused) */
        if (!rmm__align_up(bytes, RMM_ALIGNMENT, &rounded)) rounded = SIZE_MAX;
        rmm__limiting_uncount(l, rounded);
    }
    return st;
}
static const rmm_resource_vtable rmm__limiting_vtable = {"limiting", rmm__limiting_allocate, rmm__limiting_deallocate, NULL, rmm__adaptor_destroy_plain};
RMM__IMPL rmm_status rmm_limiting_adaptor_create(rmm_resource **out, rmm_resource *upstream, size_t limit_bytes) {
    rmm__adaptor *a = NULL;
    RMM_TRY(rmm__adaptor_new(out, upstream, sizeof(rmm__limiting), &rmm__limiting_vtable, "rmm_limiting_adaptor_create", &a));
    ((rmm__limiting *)a)->limit = limit_bytes;
    *out = &a->base;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_limiting_get(rmm_resource *mr, size_t *allocated_bytes, size_t *limit_bytes) {
    if (!mr || mr->vtable != &rmm__limiting_vtable)
        return RMM__INVALID("rmm_limiting_get: resource '%s' is not a limiting adaptor", rmm_resource_type_name(mr));
    if (allocated_bytes) *allocated_bytes = RMM__ATOMIC_LOAD(&((rmm__limiting *)mr)->allocated);
    if (limit_bytes) *limit_bytes = RMM__ATOMIC_LOAD_RELAXED(&((rmm__limiting *)mr)->limit);
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_limiting_set_limit(rmm_resource *mr, size_t limit_bytes) {
    if (!mr || mr->vtable != &rmm__limiting_vtable)
        return RMM__INVALID("rmm_limiting_set_limit: resource '%s' is not a limiting adaptor", rmm_resource_type_name(mr));
    RMM__ATOMIC_STORE_RELAXED(&((rmm__limiting *)mr)->limit, limit_bytes);
    return RMM_SUCCESS;
}

/* ---- failure callback: retry out-of-memory while the callback says so ---- */
typedef struct rmm__failure_cb {
    rmm__adaptor a;
    rmm_failure_callback callback;
    void *arg;
} rmm__failure_cb;
/* A retry that succeeds leaves no failure behind: the thread's record as the call found it is put
   back. It is kept in a snapshot per thread, copied only when the thread's record has changed since
   the last one (rmm__last_error_gen: the serial repeats once a record is put back, and a snapshot
   matched by serial brought back a record the thread had left behind: a red team's find,
   2026-11-30; a copy per call cost this adaptor 15 -> 45 ns a pair once a long message was on
   record: review 31); a nested adaptor that took the snapshot over for a later record leaves the
   outer call's failure behind (as before 2026-11-30). */
static RMM__TLS rmm__kept_error rmm__failure_snapshot;
static RMM__TLS bool rmm__failure_snapshot_taken;
RMM__PRIVATE rmm_status rmm__failure_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__failure_cb *f = (rmm__failure_cb *)self;
    unsigned long entry = rmm__last_error_gen;
    if (RMM__UNLIKELY(!rmm__failure_snapshot_taken || rmm__failure_snapshot.gen != entry)) {
        rmm__error_keep(&rmm__failure_snapshot);
        rmm__failure_snapshot_taken = true;
    }
    for (;;) {
        char why[sizeof rmm__last_error_text];
        int why_cuda;
        rmm_status st = RMM__FORWARD_ALLOC(self, ptr, bytes, alignment, stream);
        if (st == RMM_SUCCESS && RMM__UNLIKELY(rmm__last_error_gen != entry) && rmm__failure_snapshot.gen == entry)
            rmm__error_back(&rmm__failure_snapshot);
        if (st != RMM_ERROR_OUT_OF_MEMORY) return st;
        /* the callback may make calls that fail (a spill): a "no" returns this failure's record */
        why_cuda = rmm_last_cuda_error();
        rmm__copy_text(why, sizeof why, rmm_last_error());
        if (!f->callback(bytes, f->arg)) return rmm__fail_cuda(why_cuda, st, "%s", why);
    }
}
RMM__PRIVATE rmm_status rmm__forward_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    return RMM__FORWARD_FREE(self, ptr, bytes, alignment, stream);
}
static const rmm_resource_vtable rmm__failure_vtable = {"failure_callback", rmm__failure_allocate, rmm__forward_deallocate, NULL, rmm__adaptor_destroy_plain};
RMM__IMPL rmm_status rmm_failure_callback_adaptor_create(rmm_resource **out, rmm_resource *upstream, rmm_failure_callback callback, void *arg) {
    rmm__adaptor *a = NULL;
    if (!callback) {
        if (out) *out = NULL;
        return RMM__NULL_OUT("rmm_failure_callback_adaptor_create", "callback");
    }
    RMM_TRY(rmm__adaptor_new(out, upstream, sizeof(rmm__failure_cb), &rmm__failure_vtable, "rmm_failure_callback_adaptor_create", &a));
    ((rmm__failure_cb *)a)->callback = callback;
    ((rmm__failure_cb *)a)->arg = arg;
    *out = &a->base;
    return RMM_SUCCESS;
}

/* ---- aligned: RMM's alignment-plus-threshold adaptor ---- */
typedef struct rmm__aligned {
    rmm__adaptor a;
    size_t alignment, threshold;
    rmm__overalign map;
} rmm__aligned;
/* Whether the aligned adaptor mr handed out ptr as its upstream's block (it did not over-align it). */
RMM__PRIVATE bool rmm__aligned_passes(rmm_resource *mr, const void *ptr) { return !rmm__overalign_holds(&((rmm__aligned *)mr)->map, ptr); }
/* Over-aligns iff the request reaches the threshold and the adaptor's alignment exceeds the one
   asked for; otherwise the call passes straight through. Both sides decide the same way. */
RMM__PRIVATE bool rmm__aligned_applies(const rmm__aligned *al, size_t bytes, size_t alignment) {
    return bytes >= al->threshold && al->alignment > alignment;
}
RMM__PRIVATE rmm_status rmm__aligned_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__aligned *al = (rmm__aligned *)self;
    size_t request;
    void *raw = NULL;
    if (!rmm__aligned_applies(al, bytes, alignment)) return RMM__FORWARD_ALLOC(self, ptr, bytes, alignment, stream);
    if (!rmm__overalign_request(bytes, al->alignment, &request))
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "aligned: allocate(bytes=%zu) overflows with alignment %zu", bytes, al->alignment);
    RMM_TRY(RMM__FORWARD_ALLOC(self, &raw, request, alignment, stream));
    if (RMM__UNLIKELY(((uintptr_t)raw & (alignment - 1)) != 0)) /* the request's size counts on it: the block could end past raw's */
        return rmm__refuse_upstream_answer("aligned", RMM__UP(self), &raw, request, alignment, stream);
    if (!rmm__overalign_remember(&al->map, raw, al->alignment, ptr)) {
        RMM__CLEANUP(RMM__FORWARD_FREE(self, raw, request, alignment, stream));
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "aligned: out of host memory");
    }
    return RMM_SUCCESS;
}
typedef struct rmm__aligned_free {
    rmm_resource *self;
    size_t request, alignment;
    rmm_stream stream;
} rmm__aligned_free;
RMM__PRIVATE rmm_status rmm__aligned_free_raw(void *raw, void *arg) {
    rmm__aligned_free *f = (rmm__aligned_free *)arg;
    return RMM__FORWARD_FREE(f->self, raw, f->request, f->alignment, f->stream);
}
RMM__PRIVATE rmm_status rmm__aligned_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__aligned *al = (rmm__aligned *)self;
    rmm__aligned_free f;
    if (!rmm__aligned_applies(al, bytes, alignment)) {
        /* a block this adaptor over-aligned, freed with a size below the threshold: upstream would
           free its raw block under the record */
        if (RMM__UNLIKELY(((uintptr_t)ptr & (al->alignment - 1)) == 0) && rmm__overalign_holds(&al->map, ptr)) /* (only its alignment can be one) */
            return rmm__fail(RMM_ERROR_CORRUPTION, "aligned: deallocate(ptr=%p, bytes=%zu): the block was over-aligned by this adaptor (a request of at least %zu bytes); the size must be the one allocated",
                             ptr, bytes, al->threshold);
        return RMM__FORWARD_FREE(self, ptr, bytes, alignment, stream);
    }
    f.self = self;
    f.request = 0;
    f.alignment = alignment;
    f.stream = stream;
    (void)rmm__overalign_request(bytes, al->alignment, &f.request);
    return rmm__overalign_free_block(&al->map, ptr, al->alignment, "aligned", rmm__aligned_free_raw, &f);
}
RMM__PRIVATE void rmm__aligned_destroy(rmm_resource *self) {
    rmm__overalign_free(&((rmm__aligned *)self)->map);
    RMM_SYS_FREE(self);
}
static const rmm_resource_vtable rmm__aligned_vtable = {"aligned", rmm__aligned_allocate, rmm__aligned_deallocate, NULL, rmm__aligned_destroy};
RMM__IMPL rmm_status rmm_aligned_adaptor_create(rmm_resource **out, rmm_resource *upstream, size_t alignment, size_t threshold_bytes) {
    rmm__adaptor *a = NULL;
    rmm__aligned *al;
    if (!rmm__is_pow2(alignment)) {
        if (out) *out = NULL;
        return RMM__INVALID("rmm_aligned_adaptor_create: alignment %zu is not a power of two", alignment);
    }
    RMM_TRY(rmm__adaptor_new(out, upstream, sizeof(rmm__aligned), &rmm__aligned_vtable, "rmm_aligned_adaptor_create", &a));
    al = (rmm__aligned *)a;
    al->alignment = rmm__max(alignment, RMM_ALIGNMENT);
    al->threshold = threshold_bytes;
    if (!rmm__overalign_init(&al->map)) {
        RMM_SYS_FREE(al);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_aligned_adaptor_create: out of host memory");
    }
    *out = &a->base;
    return RMM_SUCCESS;
}

/* ---- thread-safe: one mutex around any resource ---- */
typedef struct rmm__locked {
    rmm__adaptor a;
    rmm__mutex lock;
    uint64_t holder; /* the thread serial of the holder (0: none); written only by the holder */
} rmm__locked;
/* Takes the adaptor's lock, unless this thread holds it already: a call that reached the adaptor
   again from below it (its upstream, or a callback that upstream made) would wait for itself for
   ever; it gets NOT_SUPPORTED instead, as the sub-allocators' locks give (rmm__reentrant). A relaxed
   load of the holder can read this thread's serial only if this thread wrote it. */
static inline bool rmm__locked_take(rmm__locked *l) {
    uint64_t me = rmm__thread_serial();
    if (RMM__UNLIKELY(RMM__ATOMIC_LOAD_RELAXED(&l->holder) == me)) return false;
    rmm__lock(&l->lock);
    RMM__ATOMIC_STORE_RELAXED(&l->holder, me);
    return true;
}
static inline void rmm__locked_give(rmm__locked *l) {
    RMM__ATOMIC_STORE_RELAXED(&l->holder, (uint64_t)0);
    rmm__unlock(&l->lock);
}
RMM__PRIVATE rmm_status rmm__locked_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm_status st;
    if (RMM__UNLIKELY(!rmm__locked_take((rmm__locked *)self))) {
        *ptr = NULL;
        return rmm__reentrant("thread_safe", "allocate");
    }
    st = RMM__FORWARD_ALLOC(self, ptr, bytes, alignment, stream);
    rmm__locked_give((rmm__locked *)self);
    return st;
}
RMM__PRIVATE rmm_status rmm__locked_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm_status st;
    if (RMM__UNLIKELY(!rmm__locked_take((rmm__locked *)self))) return rmm__reentrant("thread_safe", "deallocate");
    st = RMM__FORWARD_FREE(self, ptr, bytes, alignment, stream);
    rmm__locked_give((rmm__locked *)self);
    return st;
}
RMM__PRIVATE void rmm__locked_destroy(rmm_resource *self) {
    rmm__mutex_destroy(&((rmm__locked *)self)->lock);
    RMM_SYS_FREE(self);
}
static const rmm_resource_vtable rmm__locked_vtable = {"thread_safe", rmm__locked_allocate, rmm__locked_deallocate, NULL, rmm__locked_destroy};
RMM__IMPL rmm_status rmm_thread_safe_adaptor_create(rmm_resource **out, rmm_resource *upstream) {
    rmm__adaptor *a = NULL;
    RMM_TRY(rmm__adaptor_new(out, upstream, sizeof(rmm__locked), &rmm__locked_vtable, "rmm_thread_safe_adaptor_create", &a));
    rmm__mutex_init(&((rmm__locked *)a)->lock);
    *out = &a->base;
    return RMM_SUCCESS;
}

/* ---- prefetch: managed memory moved to the device on the allocating stream ---- */
typedef struct rmm__prefetching {
    rmm__adaptor a;
    int device;
} rmm__prefetching;
RMM__PRIVATE rmm_status rmm__prefetch_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm_status st;
    RMM_TRY(RMM__FORWARD_ALLOC(self, ptr, bytes, alignment, stream));
    st = rmm__prefetch(*ptr, bytes, ((rmm__prefetching *)self)->device, stream);
    if (st != RMM_SUCCESS) {
        RMM__CLEANUP(RMM__FORWARD_FREE(self, *ptr, bytes, alignment, stream)); /* (the prefetch's failure stays the call's: red team 30) */
        *ptr = NULL;
    }
    return st;
}
static const rmm_resource_vtable rmm__prefetch_vtable = {"prefetch", rmm__prefetch_allocate, rmm__forward_deallocate, NULL, rmm__adaptor_destroy_plain};
RMM__IMPL rmm_status rmm_prefetch_adaptor_create(rmm_resource **out, rmm_resource *upstream) {
    rmm__adaptor *a = NULL;
    int device = 0;
    rmm_status st;
    RMM_TRY(rmm__adaptor_new(out, upstream, sizeof(rmm__prefetching), &rmm__prefetch_vtable, "rmm_prefetch_adaptor_create", &a));
    st = rmm__get_device(&device);
    if (st != RMM_SUCCESS) {
        RMM_SYS_FREE(a);
        return st;
    }
    ((rmm__prefetching *)a)->device = device;
    *out = &a->base;
    return RMM_SUCCESS;
}

/* ---- callback resource: user functions for allocate and deallocate ---- */
typedef struct rmm__callback_res {
    rmm_resource base;
    rmm_allocate_callback allocate;
    rmm_deallocate_callback deallocate;
    void *arg;
} rmm__callback_res;
/* Callback functions in flight on this thread (RMM_MAX_CALLBACK_DEPTH). */
static RMM__TLS int rmm__callback_depth;
RMM__PRIVATE rmm_status rmm__callback_too_deep(const char *what, size_t bytes) {
    return RMM__INVALID("callback: %d callbacks in flight on this thread already (RMM_MAX_CALLBACK_DEPTH): the %s callback for "
                        "%zu bytes is not called (a callback that reaches its resource again, a cycle: e.g. a binning "
                        "resource's bin allocating its own size from that binning resource)",
                        RMM_MAX_CALLBACK_DEPTH, what, bytes);
}
RMM__PRIVATE rmm_status rmm__callback_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__callback_res *c = (rmm__callback_res *)self;
    unsigned long serial = rmm__last_error_serial;
    rmm_status st;
    if (RMM__UNLIKELY(rmm__callback_depth >= RMM_MAX_CALLBACK_DEPTH)) return rmm__callback_too_deep("allocate", bytes);
    rmm__callback_depth++; /* (until session 43 unbounded: a red team's cycle through a binning resource overflowed the stack) */
    st = c->allocate(ptr, bytes, stream, c->arg);
    rmm__callback_depth--;
    if (st == RMM_SUCCESS && *ptr == NULL)
        return RMM__INVALID("callback: the allocate callback reported success for %zu bytes but returned NULL", bytes);
    if (st == RMM_SUCCESS && ((uintptr_t)*ptr & (alignment - 1)) != 0) {
        void *misaligned = *ptr;
        rmm__callback_depth++;
        c->deallocate(misaligned, bytes, stream, c->arg);
        rmm__callback_depth--;
        *ptr = NULL;
        return RMM__INVALID("callback: the allocate callback returned %p, not aligned to %zu", misaligned, alignment);
    }
    /* the callback's own message where it recorded one for this status, else ours (until
       2026-11-29 a matching status alone was taken for one: a callback that failed with no
       message left an earlier, unrelated failure's text: red team 21) */
    if (st != RMM_SUCCESS && (rmm__last_error_serial == serial || rmm__last_error_status != st))
        rmm__fail(st, "callback: the allocate callback failed with %s for %zu bytes", rmm_status_string(st), bytes);
    return st;
}
RMM__PRIVATE rmm_status rmm__callback_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    rmm__callback_res *c = (rmm__callback_res *)self;
    (void)alignment;
    if (RMM__UNLIKELY(rmm__callback_depth >= RMM_MAX_CALLBACK_DEPTH)) return rmm__callback_too_deep("deallocate", bytes);
    rmm__callback_depth++;
    c->deallocate(ptr, bytes, stream, c->arg);
    rmm__callback_depth--;
    return RMM_SUCCESS;
}
static const rmm_resource_vtable rmm__callback_vtable = {"callback", rmm__callback_allocate, rmm__callback_deallocate, NULL, rmm__adaptor_destroy_plain};
RMM__PRIVATE bool rmm__vtable_is_own(const rmm_resource_vtable *vt) {
    static const rmm_resource_vtable *const own[] = {
        &rmm__cuda_vtable,     &rmm__managed_vtable, &rmm__pinned_vtable,  &rmm__async_vtable,  &rmm__async_view_vtable,
        &rmm__async_managed_vtable, &rmm__async_pinned_vtable, &rmm__fixed_vtable, &rmm__stats_vtable, &rmm__tracking_vtable,
        &rmm__limiting_vtable, &rmm__failure_vtable, &rmm__aligned_vtable, &rmm__locked_vtable, &rmm__prefetch_vtable,
        &rmm__callback_vtable, /* (it checks its callbacks' answers itself) */
#if !defined(RMM_NO_POOL)
        &rmm__pool_vtable,
#endif
#if !defined(RMM_NO_BINNING)
        &rmm__binning_vtable,
#endif
#if !defined(RMM_NO_ARENA)
        &rmm__arena_vtable,
#endif
#if !defined(RMM_NO_LOGGING)
        &rmm__logging_vtable,
#endif
    };
    size_t i;
    for (i = 0; i < sizeof own / sizeof own[0]; i++)
        if (vt == own[i]) return true;
    return false;
}
RMM__IMPL rmm_status rmm_callback_resource_create(rmm_resource **out, rmm_allocate_callback allocate, rmm_deallocate_callback deallocate, void *arg) {
    rmm__callback_res *c;
    if (!out) return RMM__NULL_OUT("rmm_callback_resource_create", "out");
    *out = NULL;
    if (!allocate) return RMM__NULL_OUT("rmm_callback_resource_create", "allocate");
    if (!deallocate) return RMM__NULL_OUT("rmm_callback_resource_create", "deallocate");
    c = (rmm__callback_res *)rmm__calloc(1, sizeof *c);
    if (!c) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_callback_resource_create: out of host memory");
    c->base.vtable = &rmm__callback_vtable;
    c->allocate = allocate;
    c->deallocate = deallocate;
    c->arg = arg;
    *out = &c->base;
    return RMM_SUCCESS;
}

/* -- its row in >>diagnostics (rmm__descs): dump, validate, upstream, allocation base, live blocks -- */
/* -- the forwarding adaptors: a block is the upstream's block (aligned: inside it) -- */
RMM__PRIVATE rmm_resource *rmm__adaptor_upstream(const rmm_resource *mr) { return ((const rmm__adaptor *)mr)->upstream; }
RMM__PRIVATE rmm_status rmm__adaptor_base_step(rmm_resource *mr, const char **p, size_t *off, rmm_resource **next) {
    (void)p, (void)off;
    *next = ((rmm__adaptor *)mr)->upstream;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__aligned_base_step(rmm_resource *mr, const char **p, size_t *off, rmm_resource **next) {
    rmm__overalign_step(&((rmm__aligned *)mr)->map, p, off);
    *next = ((rmm__adaptor *)mr)->upstream;
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__adaptor_dump(rmm__json *j, rmm_resource *mr, int nesting) {
    (void)mr, (void)nesting;
    return rmm__json_counters(j, NULL, NULL, 0);
}
RMM__PRIVATE rmm_status rmm__stats_dump(rmm__json *j, rmm_resource *mr, int nesting) {
    static const char *const keys[] = {"bytes", "peak_bytes", "total_bytes", "count", "peak_count", "total_count"};
    rmm_statistics s;
    int64_t v[6];
    size_t i;
    (void)nesting;
    (void)rmm_statistics_get(mr, &s);
    v[0] = s.bytes.value, v[1] = s.bytes.peak, v[2] = s.bytes.total;
    v[3] = s.count.value, v[4] = s.count.peak, v[5] = s.count.total;
    rmm__json_open(j, "counters", '{'); /* signed: a scope's value is negative after it freed what an outer scope allocated (RMM's rule) */
    for (i = 0; i < 6; i++) rmm__json_i64(j, keys[i], v[i]);
    rmm__json_close(j, '}');
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__tracking_dump(rmm__json *j, rmm_resource *mr, int nesting) {
    static const char *const keys[] = {"outstanding_bytes", "outstanding_count"};
    size_t bytes = 0, count = 0;
    uint64_t v[2];
    (void)nesting;
    (void)rmm_tracking_get(mr, &bytes, &count);
    v[0] = bytes, v[1] = count;
    return rmm__json_counters(j, keys, v, 2);
}
RMM__PRIVATE rmm_status rmm__limiting_dump(rmm__json *j, rmm_resource *mr, int nesting) {
    static const char *const keys[] = {"allocated_bytes", "limit_bytes"};
    size_t allocated = 0, limit = 0;
    uint64_t v[2];
    (void)nesting;
    (void)rmm_limiting_get(mr, &allocated, &limit);
    v[0] = allocated, v[1] = limit;
    return rmm__json_counters(j, keys, v, 2);
}
RMM__PRIVATE rmm_status rmm__aligned_dump(rmm__json *j, rmm_resource *mr, int nesting) {
    static const char *const keys[] = {"alignment", "threshold_bytes"};
    uint64_t v[2];
    (void)nesting;
    v[0] = ((rmm__aligned *)mr)->alignment, v[1] = ((rmm__aligned *)mr)->threshold;
    return rmm__json_counters(j, keys, v, 2);
}

/* ======================================================================================= */
/* ==== diagnostics: walks over a resource graph: validate, allocation base, dump, margins = */
/* ======================================================================================= */ /* >>diagnostics */

/* ---- each resource type describes itself: its row here, the row's functions in its section ----
   What the walks over a resource graph need of a type, in one row per type (found from the
   vtable): its upstream, its children (a binning resource's bins), its own validation, its part of
   the JSON dump, one step of "where does this block come from" (allocation base), and its live
   blocks for the margin check. A slot left NULL means "not applicable". The walks below are then
   a few lines each, and a new resource type is one row here, not an edit of four functions. A
   user's resource has no row: it is dumped as "user" and ends every walk (its upstream is not
   known). */
/* The rows: one per type. */
static const rmm__desc rmm__descs[] = {
    {&rmm__cuda_vtable, "cuda", NULL, NULL, NULL, NULL, rmm__base_dump, rmm__base_base_step, NULL},
    {&rmm__managed_vtable, "managed", NULL, NULL, NULL, NULL, rmm__base_dump, rmm__base_base_step, NULL},
    {&rmm__pinned_vtable, "pinned_host", NULL, NULL, NULL, NULL, rmm__base_dump, rmm__base_base_step, NULL},
    {&rmm__async_vtable, "async", NULL, NULL, NULL, NULL, rmm__async_dump, rmm__async_base_step, NULL},
    {&rmm__async_view_vtable, "async_view", NULL, NULL, NULL, NULL, rmm__async_dump, rmm__async_base_step, NULL},
    {&rmm__async_managed_vtable, "async_managed", NULL, NULL, NULL, NULL, rmm__async_dump, rmm__async_base_step, NULL},
    {&rmm__async_pinned_vtable, "async_pinned", NULL, NULL, NULL, NULL, rmm__async_dump, rmm__async_base_step, NULL},
#if !defined(RMM_NO_POOL)
    {&rmm__pool_vtable, "pool", rmm__pool_upstream, NULL, NULL, rmm__pool_validate_mr, rmm__pool_dump_mr, rmm__pool_base_step, rmm__pool_live},
#endif
    {&rmm__fixed_vtable, "fixed_size", rmm__fixed_upstream, NULL, NULL, rmm__fixed_validate_mr, rmm__fixed_dump_mr, rmm__fixed_base_step, rmm__fixed_live},
#if !defined(RMM_NO_ARENA)
    {&rmm__arena_vtable, "arena", rmm__arena_upstream, NULL, NULL, rmm__arena_validate_mr, rmm__arena_dump_mr, rmm__arena_base_step, rmm__arena_live},
#endif
#if !defined(RMM_NO_BINNING)
    {&rmm__binning_vtable, "binning", rmm__binning_upstream, rmm__binning_child_count, rmm__binning_child, rmm__binning_validate_mr, rmm__binning_dump_mr,
     rmm__binning_base_step, NULL},
#endif
#if !defined(RMM_NO_LOGGING)
    {&rmm__logging_vtable, "logging", rmm__adaptor_upstream, NULL, NULL, NULL, rmm__adaptor_dump, rmm__adaptor_base_step, NULL},
#endif
    {&rmm__stats_vtable, "statistics", rmm__adaptor_upstream, NULL, NULL, NULL, rmm__stats_dump, rmm__adaptor_base_step, NULL},
    {&rmm__tracking_vtable, "tracking", rmm__adaptor_upstream, NULL, NULL, NULL, rmm__tracking_dump, rmm__adaptor_base_step, NULL},
    {&rmm__limiting_vtable, "limiting", rmm__adaptor_upstream, NULL, NULL, NULL, rmm__limiting_dump, rmm__adaptor_base_step, NULL},
    {&rmm__failure_vtable, "failure_callback", rmm__adaptor_upstream, NULL, NULL, NULL, rmm__adaptor_dump, rmm__adaptor_base_step, NULL},
    {&rmm__aligned_vtable, "aligned", rmm__adaptor_upstream, NULL, NULL, NULL, rmm__aligned_dump, rmm__aligned_base_step, NULL},
    {&rmm__locked_vtable, "thread_safe", rmm__adaptor_upstream, NULL, NULL, NULL, rmm__adaptor_dump, rmm__adaptor_base_step, NULL},
    {&rmm__prefetch_vtable, "prefetch", rmm__adaptor_upstream, NULL, NULL, NULL, rmm__adaptor_dump, rmm__adaptor_base_step, NULL},
    {&rmm__callback_vtable, "callback", NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};
/* Users' types (rmm_resource_register_type): rows published by a count, each immutable once
   counted (a re-registration swaps only the function, atomically). */
#define RMM__USER_TYPES 16
static rmm__desc rmm__user_descs[RMM__USER_TYPES];
static size_t rmm__user_desc_count;
static rmm__mutex rmm__user_desc_lock = RMM__MUTEX_INIT;
RMM__PRIVATE const rmm__desc *rmm__describe_builtin(const rmm_resource_vtable *vt) {
    size_t i;
    for (i = 0; i < sizeof rmm__descs / sizeof rmm__descs[0]; i++)
        if (rmm__descs[i].vtable == vt) return &rmm__descs[i];
    return NULL;
}
/* mr's row, or NULL for an unregistered user's resource. O(types). */
RMM__PRIVATE const rmm__desc *rmm__describe(const rmm_resource *mr) {
    const rmm__desc *d;
    size_t i, n;
    if (!mr || !mr->vtable) return NULL;
    d = rmm__describe_builtin(mr->vtable);
    if (d) return d;
    n = RMM__ATOMIC_LOAD(&rmm__user_desc_count);
    for (i = 0; i < n; i++)
        if (rmm__user_descs[i].vtable == mr->vtable) return &rmm__user_descs[i];
    return NULL;
}
/* Whether mr hands its upstream's blocks through at the same address, so a block recorded through
   it may still be freed below it once it is gone: 1 every forwarding adaptor but the aligned one,
   2 the aligned one (for what it did not over-align: rmm__aligned_passes), 0 no. */
RMM__PRIVATE int rmm__passes_through(const rmm_resource *mr) {
    const rmm__desc *d = rmm__describe(mr);
    return !d ? 0 : d->base_step == rmm__adaptor_base_step ? 1 : d->base_step == rmm__aligned_base_step ? 2 : 0;
}
RMM__IMPL rmm_status rmm_resource_register_type(const rmm_resource_vtable *vtable, rmm_resource *(*get_upstream)(const rmm_resource *mr)) {
    size_t i, n;
    rmm_status st = RMM_SUCCESS;
    if (!vtable) return RMM__NULL_OUT("rmm_resource_register_type", "vtable");
    if (!get_upstream) return RMM__NULL_OUT("rmm_resource_register_type", "get_upstream");
    if (rmm__describe_builtin(vtable)) return RMM__INVALID("rmm_resource_register_type: '%s' is one of the library's own types", vtable->type_name ? vtable->type_name : "?");
    rmm__lock(&rmm__user_desc_lock);
    n = rmm__user_desc_count;
    for (i = 0; i < n && rmm__user_descs[i].vtable != vtable; i++) {
    }
    if (i < n) {
        RMM__ATOMIC_STORE(&rmm__user_descs[i].upstream, get_upstream);
    } else if (n == RMM__USER_TYPES) {
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_resource_register_type: %d user types are registered already", RMM__USER_TYPES);
    } else {
        rmm__user_descs[n].vtable = vtable;
        rmm__user_descs[n].dump_type = "user";
        rmm__user_descs[n].upstream = get_upstream;
        RMM__ATOMIC_STORE(&rmm__user_desc_count, n + 1);
    }
    rmm__unlock(&rmm__user_desc_lock);
    return st;
}

/* ---- the walks ---------------------------------------------------------------------------- */
RMM__IMPL rmm_status rmm_resource_validate(rmm_resource *mr) {
    const rmm__desc *d;
    if (!mr) return RMM__NULL_OUT("rmm_resource_validate", "mr");
    d = rmm__describe(mr);
    return d && d->validate ? d->validate(mr) : RMM_SUCCESS;
}
RMM__IMPL rmm_resource *rmm_resource_get_upstream(const rmm_resource *mr) {
    const rmm__desc *d = rmm__describe(mr);
    rmm_resource *(*up)(const rmm_resource *) = d ? RMM__ATOMIC_LOAD(&d->upstream) : NULL;
    return up ? up(mr) : NULL;
}
/* The guard of the graph walkers: INVALID_ARGUMENT naming `fn` once a walk has visited more than
   RMM_MAX_RESOURCE_STEPS resources (only a cycle does that) or nests bins too deep. */
RMM__PRIVATE rmm_status rmm__graph_too_big(const char *fn) {
    return RMM__INVALID("%s: the resource graph has a cycle (more than %d resources visited) or binning resources nested as bins more than %d deep",
                        fn, RMM_MAX_RESOURCE_STEPS, RMM_MAX_BIN_NESTING);
}
/* Visits every resource the dump would write, without writing, and stops at target if it meets it
   (*found; target NULL: never): INVALID_ARGUMENT naming fn iff the graph is too big
   (rmm__graph_too_big). Iterative along upstream chains, recursive (at most RMM_MAX_BIN_NESTING
   deep) into children. */
RMM__PRIVATE rmm_status rmm__graph_walk(rmm_resource *mr, const rmm_resource *target, int nesting, size_t *steps, const char *fn, bool *found) {
    for (; mr && !*found; mr = rmm_resource_get_upstream(mr)) {
        const rmm__desc *d = rmm__describe(mr);
        size_t i, n = d && d->child_count ? d->child_count(mr) : 0;
        if (mr == target) {
            *found = true;
            break;
        }
        if (++*steps > RMM_MAX_RESOURCE_STEPS) return rmm__graph_too_big(fn);
        for (i = 0; i < n && !*found; i++) {
            rmm_resource *child = d->child(mr, i);
            if (!child) continue;
            if (nesting + 1 > RMM_MAX_BIN_NESTING) return rmm__graph_too_big(fn);
            RMM_TRY(rmm__graph_walk(child, target, nesting + 1, steps, fn, found));
        }
    }
    return RMM_SUCCESS;
}
/* rmm__graph_walk of the whole graph: INVALID_ARGUMENT iff it is too big. */
RMM__PRIVATE rmm_status rmm__graph_check(rmm_resource *mr, int nesting, size_t *steps, const char *fn) {
    bool found = false;
    return rmm__graph_walk(mr, NULL, nesting, steps, fn, &found);
}

RMM__IMPL rmm_status rmm_resource_allocation_base(rmm_resource *mr, const void *ptr, void **base, size_t *offset) {
    const char *p = (const char *)ptr;
    size_t off = 0, steps;
    if (!base) return RMM__NULL_OUT("rmm_resource_allocation_base", "base");
    if (!offset) return RMM__NULL_OUT("rmm_resource_allocation_base", "offset");
    *base = NULL;
    *offset = 0;
    if (!ptr) return RMM__NULL_OUT("rmm_resource_allocation_base", "ptr");
    mr = rmm__resolve(mr);
    if (!mr) return rmm_last_status();
    if (RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_pools_live) != 0) {
        /* a block a graph pool served for an allocation on a registered stream (whatever resource
           that call named): its chunk, and below it the graph pool's upstream (until session 42 the
           resource named was asked, which had never handed the block out: INVALID_ARGUMENT, or,
           for a cudaMalloc resource, the block itself as the base: a red team's find) */
        const char *chunk = NULL;
        rmm_resource *up = NULL;
        int owns = rmm__graph_find(ptr, &chunk, &up);
        if (owns == 2) return RMM__INVALID("rmm_resource_allocation_base(ptr=%p): not a live block of a graph pool", ptr);
        if (owns == 1) {
            off = (size_t)(p - chunk);
            p = chunk;
            mr = up;
        }
    }
    for (steps = 0; steps < RMM_MAX_RESOURCE_STEPS; steps++) {
        const rmm__desc *d = rmm__describe(mr);
        rmm_resource *next = NULL;
        if (!d || !d->base_step)
            return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_resource_allocation_base: resource '%s' cannot say where its memory comes from", rmm_resource_type_name(mr));
        RMM_TRY(d->base_step(mr, &p, &off, &next));
        if (!next) {
            *base = (void *)(uintptr_t)p;
            *offset = off;
            return RMM_SUCCESS;
        }
        mr = next;
    }
    return rmm__graph_too_big("rmm_resource_allocation_base");
}

/* Writes mr's node and, nested in it, its upstream chain (a loop: no recursion along the chain);
   recurses only into children, through their type's dump (rmm__graph_check bounded that first). */
RMM__PRIVATE rmm_status rmm__dump_node(rmm__json *j, rmm_resource *mr, int nesting) {
    size_t open = 0;
    rmm_status st = RMM_SUCCESS;
    for (; mr && st == RMM_SUCCESS; open++) {
        const rmm__desc *d = rmm__describe(mr);
        rmm_resource *up = rmm_resource_get_upstream(mr);
        rmm__json_open(j, NULL, '{');
        rmm__json_str(j, "type", d ? d->dump_type : "user");
        rmm__json_str(j, "name", rmm_resource_type_name(mr));
        rmm__json_ptr(j, "address", mr);
        if (d && d->dump) st = d->dump(j, mr, nesting);
        if (st == RMM_SUCCESS) {
            rmm__json_key(j, "upstream");
            if (up) j->first = true; /* the upstream's node opens next, inside this one */
            else fputs("null", j->f);
        }
        mr = up;
    }
    while (open-- > 0) rmm__json_close(j, '}');
    return st;
}
RMM__IMPL rmm_status rmm_resource_dump_json(rmm_resource *mr, FILE *out) {
    rmm__json j;
    rmm_status st;
    size_t steps = 0;
    if (!out) return RMM__NULL_OUT("rmm_resource_dump_json", "out");
    mr = rmm__resolve(mr);
    if (!mr) return rmm_last_status();
    RMM_TRY(rmm__graph_check(mr, 0, &steps, "rmm_resource_dump_json")); /* nothing written on failure */
    j.f = out;
    j.first = true;
    fprintf(out, "{\"schema\":\"rmm.h resource dump\",\"version\":%d,\"rmm_version\":\"%s\",\"backend\":\"%s\",\"resource\":", RMM_DUMP_JSON_VERSION,
            RMM_VERSION_STRING, RMM__BACKEND_NAME);
    st = rmm__dump_node(&j, mr, 0);
    fputs("}\n", out);
    if (st == RMM_SUCCESS && (fflush(out) != 0 || ferror(out))) st = rmm__fail(RMM_ERROR_IO, "rmm_resource_dump_json: writing failed"); /* (a buffered stream fails at the flush) */
    return st;
}

#if RMM__MARGIN_ON
/* Whether mr still lists block b's allocation live (its serial, which no other allocation has; *st:
   the listing's failure, if any). O(live blocks). */
RMM__PRIVATE bool rmm__live_has(rmm_resource *mr, const rmm__desc *d, rmm__live_block b, rmm_status *st) {
    rmm__live_list l;
    size_t i;
    bool found = false;
    memset(&l, 0, sizeof l);
    *st = d->live(mr, &l);
    for (i = 0; i < l.n && !found; i++) found = l.v[i].serial == b.serial;
    if (*st == RMM_SUCCESS && l.oom && !found) /* (found in a list cut short: found all the same) */
        *st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_resource_check_corruption: out of host memory");
    RMM_SYS_FREE(l.v);
    return found;
}
/* The margin of listed block b read as written past (the last failure says so): CORRUPTION iff b's
   allocation is still listed after that read. It was listed before the device synchronize that
   preceded the read, so its margin's fill was done, and it stayed allocated throughout: the read
   was of its own margin. Else SUCCESS, with the record as it was before the check: the block was
   freed meanwhile, and its memory may have gone to another block whose owner wrote there (a
   review's find, 2026-11-29; a second listing by address and size alone was fooled when the same
   address came back at the same size). A failed listing's status is returned as it is. O(live
   blocks): for a mismatch only. */
RMM__PRIVATE rmm_status rmm__margin_confirm(rmm_resource *mr, const rmm__desc *d, rmm__live_block b, const rmm__kept_error *before) { /* (d->live listed b) */
    rmm_status st = RMM_SUCCESS;
    if (rmm__live_has(mr, d, b, &st)) return RMM_ERROR_CORRUPTION; /* (the read's message stands) */
    if (st != RMM_SUCCESS) return st;
    rmm__error_back(before);
    return RMM_SUCCESS;
}
#endif
#if RMM__MARGIN_ON
RMM__PRIVATE rmm_status rmm__check_corruption(rmm_resource *mr);
#endif
RMM__IMPL rmm_status rmm_resource_check_corruption(rmm_resource *mr) {
#if RMM__MARGIN_ON
    rmm_status st;
    RMM__ATOMIC_ADD(&rmm__margin_checks_running, 1); /* (before any listing: pools give nothing back until it ends) */
    rmm__margin_checking_here++;
    st = rmm__check_corruption(mr);
    rmm__margin_checking_here--;
    RMM__ATOMIC_SUB(&rmm__margin_checks_running, 1);
    return st;
#else
    (void)mr;
    return rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmm_resource_check_corruption: compiled without RMM_DEBUG_MARGIN (define it, in bytes, in the implementing file)");
#endif
}
#if RMM__MARGIN_ON
/* Synchronizes every device whose primary context is active (a device never used holds no block,
   and is not given a context), each made current in turn, the caller's device restored: the blocks
   a check lists may be any device's, and their owners' work runs on that device (red team 47: the
   caller's device alone was synchronized, and a block of another could still be written while its
   margin was read). O(devices) synchronizes. */
RMM__PRIVATE rmm_status rmm__synchronize_every_device(void) {
    int count = 0, d;
    RMM_TRY(rmm__device_count(&count));
    for (d = 0; d < count; d++) {
        rmm__device_guard g;
        rmm_status st;
        if (!rmm__device_context_active(d)) continue;
        RMM_TRY(rmm__device_enter(&g, d));
        st = rmm__device_synchronize();
        rmm__device_leave(&g);
        RMM_TRY(st);
    }
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__check_corruption(rmm_resource *mr) {
    rmm__live_list live;
    rmm__kept_error kept;
    rmm_status st = RMM_SUCCESS;
    size_t i;
    memset(&live, 0, sizeof live);
    mr = rmm__resolve(mr);
    if (!mr) return rmm_last_status();
    {
        size_t steps = 0;
        RMM_TRY(rmm__graph_check(mr, 0, &steps, "rmm_resource_check_corruption")); /* bounds the recursion into children */
    }
    rmm__error_keep(&kept); /* (a mismatch not confirmed leaves the record as it was: rmm__margin_confirm) */
    for (; mr && st == RMM_SUCCESS; mr = rmm_resource_get_upstream(mr)) {
        const rmm__desc *d = rmm__describe(mr);
        size_t n = d && d->child_count ? d->child_count(mr) : 0;
        live.n = 0;
        for (i = 0; i < n && st == RMM_SUCCESS; i++) {
            rmm_resource *child = d->child(mr, i);
            if (child && child != mr) st = rmm__check_corruption(child);
        }
        if (st == RMM_SUCCESS && d && d->live) st = d->live(mr, &live);
        if (st == RMM_SUCCESS && live.oom) st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_resource_check_corruption: out of host memory");
        if (st == RMM_SUCCESS && live.n) st = rmm__synchronize_every_device();
        for (i = 0; i < live.n && st == RMM_SUCCESS; i++) {
            st = rmm__margin_check(rmm_resource_type_name(mr), live.v[i].ptr, live.v[i].requested, RMM_STREAM_DEFAULT);
            if (st == RMM_ERROR_CORRUPTION) st = rmm__margin_confirm(mr, d, live.v[i], &kept);
        }
    }
    RMM_SYS_FREE(live.v);
    return st;
}
#endif

/* ======================================================================================= */
/* ==== containers: device buffer, uvector, scalar ====================================== */
/* ======================================================================================= */ /* >>containers */

/* Allocates or frees with the container's device made current. */
RMM__PRIVATE rmm_status rmm__container_alloc(rmm_resource *mr, int device, void **ptr, size_t bytes, rmm_stream stream) {
    rmm__device_guard g;
    rmm_status st;
    *ptr = NULL;
    if (bytes == 0) return RMM_SUCCESS;
    RMM_TRY(rmm__device_enter(&g, device));
    st = rmm_allocate_aligned(mr, ptr, bytes, RMM_ALIGNMENT, stream); /* (checked: a user resource's success with NULL or a misaligned block is refused, never held; red team 47) */
    rmm__device_leave(&g);
    return st;
}
RMM__PRIVATE rmm_status rmm__container_free(rmm_resource *mr, int device, void *ptr, size_t bytes, rmm_stream stream) {
    rmm__device_guard g;
    rmm_status st;
    if (!ptr) return RMM_SUCCESS;
    RMM_TRY(rmm__device_enter(&g, device));
    st = rmm_deallocate(mr, ptr, bytes, stream);
    rmm__device_leave(&g);
    return st;
}
/* Moves the first `keep` bytes into a new allocation of `capacity` bytes on `stream`. On failure
   the buffer is untouched and the new block, if any, given back. A buffer with no resource (a zeroed
   struct) takes the current device and resource here and keeps them on success, so that its release
   frees where it allocated. The device is made current once for the whole move (until 2026-11-30
   each step made it current again, so a device query that failed after the allocation lost the new
   block: the API.md audit of session 31). */
RMM__PRIVATE rmm_status rmm__buffer_realloc(rmm_device_buffer *b, size_t capacity, size_t keep, rmm_stream stream) {
    void *fresh = NULL;
    rmm_resource *mr = b->mr;
    int device = b->device;
    rmm__device_guard g;
    rmm_status st;
    if (!mr) {
        RMM_TRY(rmm__get_device(&device));
        if ((mr = rmm__resolve(NULL)) == NULL) return rmm_last_status();
    }
    RMM_TRY(rmm__device_enter(&g, device)); /* (the old block's device too: a buffer with a resource keeps its device) */
    st = rmm_allocate_aligned(mr, &fresh, capacity, RMM_ALIGNMENT, stream); /* (checked, as rmm__container_alloc) */
    if (st == RMM_SUCCESS && keep) st = rmm__memcpy_async(fresh, b->data, keep, stream);
    if (st == RMM_SUCCESS) st = rmm_deallocate(b->mr, b->data, b->capacity, stream); /* (NULL data: nothing) */
    if (st != RMM_SUCCESS) RMM__CLEANUP(rmm_deallocate(mr, fresh, capacity, stream)); /* (NULL if the allocation failed) */
    rmm__device_leave(&g);
    if (st != RMM_SUCCESS) return st;
    b->data = fresh;
    b->capacity = capacity;
    b->stream = stream;
    b->mr = mr;
    b->device = device;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_buffer_create(rmm_device_buffer *b, size_t size, rmm_stream stream, rmm_resource *mr) {
    rmm_device_buffer fresh;
    rmm_status st;
    if (!b) return RMM__NULL_OUT("rmm_device_buffer_create", "b");
    memset(&fresh, 0, sizeof fresh);
    memset(b, 0, sizeof *b);
    fresh.stream = stream;
    RMM_TRY(rmm__get_device(&fresh.device));
    fresh.mr = rmm__resolve(mr);
    if (!fresh.mr) return rmm_last_status();
    if ((st = rmm__container_alloc(fresh.mr, fresh.device, &fresh.data, size, stream)) != RMM_SUCCESS) {
        fresh.data = NULL;
        *b = fresh; /* empty, of that resource and device */
        return st;
    }
    fresh.size = fresh.capacity = size;
    *b = fresh;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_buffer_create_from(rmm_device_buffer *b, const void *src, size_t size, rmm_stream stream, rmm_resource *mr) {
    rmm_status st;
    if (!b) return RMM__NULL_OUT("rmm_device_buffer_create_from", "b");
    if (!src && size) {
        memset(b, 0, sizeof *b);
        return RMM__NULL_OUT("rmm_device_buffer_create_from", "src");
    }
    RMM_TRY(rmm_device_buffer_create(b, size, stream, mr));
    if (size == 0) return RMM_SUCCESS;
    st = rmm__memcpy_async(b->data, src, size, stream);
    if (st != RMM_SUCCESS) { /* an empty buffer of the resource and device it resolved, as a failed _create
                                leaves it (it was zeroed until 2026-11-30: red team 29); a block the
                                release could not free is lost, and logged */
        RMM__CLEANUP(rmm_device_buffer_release(b));
        b->data = NULL;
        b->size = b->capacity = 0;
    }
    return st;
}
RMM__IMPL rmm_status rmm_device_buffer_copy(rmm_device_buffer *dst, const rmm_device_buffer *src, rmm_stream stream, rmm_resource *mr) {
    if (!dst) return RMM__NULL_OUT("rmm_device_buffer_copy", "dst");
    if (!src) { /* (as _create_from's NULL src: a failed create leaves the struct zeroed; a red team's find) */
        memset(dst, 0, sizeof *dst);
        return RMM__NULL_OUT("rmm_device_buffer_copy", "src");
    }
    if (dst == src) return RMM__INVALID("rmm_device_buffer_copy: dst and src are the same buffer");
    return rmm_device_buffer_create_from(dst, src->data, src->size, stream, mr);
}
RMM__IMPL rmm_status rmm_device_buffer_resize(rmm_device_buffer *b, size_t new_size, rmm_stream stream) {
    if (!b) return RMM__NULL_OUT("rmm_device_buffer_resize", "b");
    if (new_size > b->capacity) RMM_TRY(rmm__buffer_realloc(b, new_size, b->size, stream));
    b->size = new_size;
    b->stream = stream;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_buffer_reserve(rmm_device_buffer *b, size_t new_capacity, rmm_stream stream) {
    if (!b) return RMM__NULL_OUT("rmm_device_buffer_reserve", "b");
    if (new_capacity > b->capacity) RMM_TRY(rmm__buffer_realloc(b, new_capacity, b->size, stream));
    b->stream = stream;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_buffer_shrink_to_fit(rmm_device_buffer *b, rmm_stream stream) {
    if (!b) return RMM__NULL_OUT("rmm_device_buffer_shrink_to_fit", "b");
    if (b->size != b->capacity) RMM_TRY(rmm__buffer_realloc(b, b->size, b->size, stream));
    b->stream = stream;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_buffer_set_stream(rmm_device_buffer *b, rmm_stream stream) {
    if (!b) return RMM__NULL_OUT("rmm_device_buffer_set_stream", "b");
    b->stream = stream;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_buffer_release(rmm_device_buffer *b) {
    if (!b) return RMM__NULL_OUT("rmm_device_buffer_release", "b");
    RMM_TRY(rmm__container_free(b->mr, b->device, b->data, b->capacity, b->stream));
    b->data = NULL;
    b->size = b->capacity = 0;
    return RMM_SUCCESS;
}

/* A uvector is a buffer counted in elements; these views convert without copying memory. */
RMM__PRIVATE rmm_device_buffer rmm__uvector_view(const rmm_device_uvector *v) {
    rmm_device_buffer b;
    b.data = v->data;
    b.size = v->size * v->element_size;
    b.capacity = v->capacity * v->element_size;
    b.stream = v->stream;
    b.mr = v->mr;
    b.device = v->device;
    return b;
}
RMM__PRIVATE void rmm__uvector_store(rmm_device_uvector *v, const rmm_device_buffer *b) {
    v->data = b->data;
    v->mr = b->mr; /* (a zeroed resource is taken at the first allocation) */
    v->device = b->device;
    v->size = b->size / v->element_size;
    v->capacity = b->capacity / v->element_size;
    v->stream = b->stream;
}
RMM__PRIVATE rmm_status rmm__uvector_bytes(const rmm_device_uvector *v, size_t count, size_t *bytes, const char *fn) {
    if (!v) return RMM__NULL_OUT(fn, "v");
    if (v->element_size == 0) return RMM__INVALID("%s: the uvector has no element size (not created?)", fn);
    if (count > SIZE_MAX / v->element_size) return RMM__INVALID("%s: %zu elements of %zu bytes overflow", fn, count, v->element_size);
    *bytes = count * v->element_size;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_uvector_create(rmm_device_uvector *v, size_t element_size, size_t count, rmm_stream stream, rmm_resource *mr) {
    rmm_device_buffer b;
    if (!v) return RMM__NULL_OUT("rmm_device_uvector_create", "v");
    memset(v, 0, sizeof *v);
    if (element_size == 0) return RMM__INVALID("rmm_device_uvector_create: element_size is 0");
    if (count > SIZE_MAX / element_size) return RMM__INVALID("rmm_device_uvector_create: %zu elements of %zu bytes overflow", count, element_size);
    RMM_TRY(rmm_device_buffer_create(&b, count * element_size, stream, mr));
    v->element_size = element_size;
    v->mr = b.mr;
    v->device = b.device;
    rmm__uvector_store(v, &b);
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_uvector_resize(rmm_device_uvector *v, size_t count, rmm_stream stream) {
    size_t bytes = 0;
    rmm_device_buffer b;
    RMM_TRY(rmm__uvector_bytes(v, count, &bytes, "rmm_device_uvector_resize"));
    b = rmm__uvector_view(v);
    RMM_TRY(rmm_device_buffer_resize(&b, bytes, stream));
    rmm__uvector_store(v, &b);
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_uvector_reserve(rmm_device_uvector *v, size_t count, rmm_stream stream) {
    size_t bytes = 0;
    rmm_device_buffer b;
    RMM_TRY(rmm__uvector_bytes(v, count, &bytes, "rmm_device_uvector_reserve"));
    b = rmm__uvector_view(v);
    RMM_TRY(rmm_device_buffer_reserve(&b, bytes, stream));
    rmm__uvector_store(v, &b);
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_uvector_shrink_to_fit(rmm_device_uvector *v, rmm_stream stream) {
    size_t bytes = 0;
    rmm_device_buffer b;
    RMM_TRY(rmm__uvector_bytes(v, 0, &bytes, "rmm_device_uvector_shrink_to_fit"));
    b = rmm__uvector_view(v);
    RMM_TRY(rmm_device_buffer_shrink_to_fit(&b, stream));
    rmm__uvector_store(v, &b);
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_uvector_set_stream(rmm_device_uvector *v, rmm_stream stream) {
    if (!v) return RMM__NULL_OUT("rmm_device_uvector_set_stream", "v");
    v->stream = stream;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_uvector_set_element_async(rmm_device_uvector *v, size_t index, const void *value, rmm_stream stream) {
    size_t bytes = 0;
    RMM_TRY(rmm__uvector_bytes(v, 0, &bytes, "rmm_device_uvector_set_element_async"));
    if (!value) return RMM__NULL_OUT("rmm_device_uvector_set_element_async", "value");
    if (index >= v->size) return RMM__INVALID("rmm_device_uvector_set_element_async: index %zu is out of range (size %zu)", index, v->size);
    bytes = index * v->element_size; /* (below size: no overflow) */
    return rmm__memcpy_async((char *)v->data + bytes, value, v->element_size, stream);
}
RMM__IMPL rmm_status rmm_device_uvector_get_element(const rmm_device_uvector *v, size_t index, void *value, rmm_stream stream) {
    size_t bytes = 0;
    RMM_TRY(rmm__uvector_bytes(v, 0, &bytes, "rmm_device_uvector_get_element"));
    if (!value) return RMM__NULL_OUT("rmm_device_uvector_get_element", "value");
    if (index >= v->size) return RMM__INVALID("rmm_device_uvector_get_element: index %zu is out of range (size %zu)", index, v->size);
    bytes = index * v->element_size; /* (below size: no overflow) */
    RMM_TRY(rmm__memcpy_async(value, (const char *)v->data + bytes, v->element_size, stream));
    return rmm__stream_sync_raw(stream);
}
RMM__IMPL rmm_status rmm_device_uvector_release(rmm_device_uvector *v) {
    rmm_device_buffer b;
    if (!v) return RMM__NULL_OUT("rmm_device_uvector_release", "v");
    if (v->element_size == 0) return RMM_SUCCESS;
    b = rmm__uvector_view(v);
    RMM_TRY(rmm_device_buffer_release(&b));
    rmm__uvector_store(v, &b);
    return RMM_SUCCESS;
}

RMM__IMPL rmm_status rmm_device_scalar_create(rmm_device_scalar *s, size_t element_size, rmm_stream stream, rmm_resource *mr) {
    rmm_device_buffer b;
    if (!s) return RMM__NULL_OUT("rmm_device_scalar_create", "s");
    memset(s, 0, sizeof *s);
    if (element_size == 0) return RMM__INVALID("rmm_device_scalar_create: element_size is 0");
    RMM_TRY(rmm_device_buffer_create(&b, element_size, stream, mr));
    s->data = b.data;
    s->element_size = element_size;
    s->stream = stream;
    s->mr = b.mr;
    s->device = b.device;
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_device_scalar_set_value_async(rmm_device_scalar *s, const void *value, rmm_stream stream) {
    if (!s) return RMM__NULL_OUT("rmm_device_scalar_set_value_async", "s");
    if (!value) return RMM__NULL_OUT("rmm_device_scalar_set_value_async", "value");
    if (!s->data) return RMM__INVALID("rmm_device_scalar_set_value_async: the scalar is empty (released or never created)");
    return rmm__memcpy_async(s->data, value, s->element_size, stream);
}
RMM__IMPL rmm_status rmm_device_scalar_get_value(const rmm_device_scalar *s, void *out, rmm_stream stream) {
    if (!s) return RMM__NULL_OUT("rmm_device_scalar_get_value", "s");
    if (!out) return RMM__NULL_OUT("rmm_device_scalar_get_value", "out");
    if (!s->data) return RMM__INVALID("rmm_device_scalar_get_value: the scalar is empty (released or never created)");
    RMM_TRY(rmm__memcpy_async(out, s->data, s->element_size, stream));
    return rmm__stream_sync_raw(stream);
}
RMM__IMPL rmm_status rmm_device_scalar_release(rmm_device_scalar *s) {
    if (!s) return RMM__NULL_OUT("rmm_device_scalar_release", "s");
    RMM_TRY(rmm__container_free(s->mr, s->device, s->data, s->element_size, s->stream));
    s->data = NULL;
    return RMM_SUCCESS;
}

/* ======================================================================================= */
/* ==== legacy: rmmInitialize, rmmAlloc, RMM_ALLOC ====================================== */
/* ======================================================================================= */ /* >>legacy */

typedef struct rmm__legacy_event {
    uint64_t thread;
    char when[16];
    const char *action;
    void *ptr;
    size_t bytes;
    rmm_stream stream;
    const char *file;
    unsigned line;
} rmm__legacy_event;
static struct {
    rmm__mutex lock;
    bool initialized;
    rmmOptions_t options;
    rmm_resource *base, *pool;
    rmm__addr_map sizes; /* pointer -> size, since rmmFree takes none */
    rmm__legacy_event *log;
    size_t log_count, log_cap;
    char **files; /* copies of the call sites' file names the log refers to */
    size_t file_count, file_cap;
    int device; /* current at rmmInitialize (-1: unknown): rmmFinalize's frees and destroys run there */
} rmm__legacy = {RMM__MUTEX_INIT, false, {0, 0, false}, NULL, NULL, {NULL, 0, 0, 0}, NULL, 0, 0, NULL, 0, 0, -1};

/* The log keeps its own copy of each call site's file name (the caller's string may not outlive
   the call). Caller holds the lock. NULL if host memory ran out. O(distinct file names). */
RMM__PRIVATE const char *rmm__legacy_file(const char *file) {
    size_t i, n = strlen(file);
    char *copy;
    for (i = rmm__legacy.file_count; i-- > 0;)
        if (strcmp(rmm__legacy.files[i], file) == 0) return rmm__legacy.files[i];
    if (rmm__legacy.file_count == rmm__legacy.file_cap) {
        size_t cap = rmm__legacy.file_cap ? rmm__legacy.file_cap * 2 : 16;
        char **grown = (char **)RMM_SYS_REALLOC(rmm__legacy.files, cap * sizeof *grown);
        if (!grown) return NULL;
        rmm__legacy.files = grown;
        rmm__legacy.file_cap = cap;
    }
    copy = (char *)RMM_SYS_MALLOC(n + 1);
    if (!copy) return NULL;
    memcpy(copy, file, n + 1);
    rmm__legacy.files[rmm__legacy.file_count++] = copy;
    return copy;
}

RMM__PRIVATE rmm_resource *rmm__legacy_resource(void) { return rmm__legacy.pool ? rmm__legacy.pool : rmm__legacy.base; }
/* Caller holds the lock. A log that cannot grow drops the event rather than fail the call. */
RMM__PRIVATE void rmm__legacy_record(const char *action, void *ptr, size_t bytes, rmm_stream stream, const char *file, unsigned line) {
    rmm__legacy_event *e;
    char when[32];
    const char *site;
    if (!rmm__legacy.options.enable_logging) return;
    site = rmm__legacy_file(file ? file : "?");
    if (!site) return;
    if (rmm__legacy.log_count == rmm__legacy.log_cap) {
        size_t cap = rmm__legacy.log_cap ? rmm__legacy.log_cap * 2 : 1024;
        rmm__legacy_event *grown = (rmm__legacy_event *)RMM_SYS_REALLOC(rmm__legacy.log, cap * sizeof *grown);
        if (!grown) return;
        rmm__legacy.log = grown;
        rmm__legacy.log_cap = cap;
    }
    e = &rmm__legacy.log[rmm__legacy.log_count++];
    e->thread = rmm__thread_id();
    rmm__format_time(when);
    rmm__copy_text(e->when, sizeof e->when, when);
    e->action = action;
    e->ptr = ptr;
    e->bytes = bytes;
    e->stream = stream;
    e->file = site;
    e->line = line;
}
RMM__PRIVATE rmm_status rmm__legacy_not_initialized(const char *fn) {
    return rmm__fail(RMM_ERROR_NOT_INITIALIZED, "%s: RMM is not initialized (call rmmInitialize first)", fn);
}
RMM__PRIVATE rmm_status rmm__legacy_not_initialized_at(const char *fn, const char *file, unsigned line) {
    return rmm__fail(RMM_ERROR_NOT_INITIALIZED, "%s at %s:%u: RMM is not initialized (call rmmInitialize first)", fn, file ? file : "?", line);
}
/* In pool mode the pool is the device's that was current at rmmInitialize: rmmAlloc and rmmFree
   with another device current are refused, nothing done, in every build (release builds handed
   that device's blocks to the other device's callers, grew the pool with the other device's
   memory, and recorded its events on the other device's streams; only RMM_DEBUG builds refused,
   in the pool's words). Caller holds the lock. O(1). */
RMM__PRIVATE rmm_status rmm__legacy_device_check(const char *fn, const char *file, unsigned line) {
    int now = -1;
    if (!rmm__legacy.pool || rmm__legacy.device < 0 || !rmm__device_peek(&now) || now == rmm__legacy.device) return RMM_SUCCESS;
    return RMM__INVALID("%s at %s:%u: device %d is current; the legacy pool is device %d's (current at rmmInitialize): make it current "
                        "first (nothing done)",
                        fn, file ? file : "?", line, now, rmm__legacy.device);
}
/* rmm_capture_end's deferred free of a block through the legacy resource failed: rmmFree, told
   SUCCESS when the free was deferred, dropped the block's size record, so that neither a retried
   rmmFree nor rmmFinalize could reach the block, still allocated (a red team's find: lost for
   good). It is filed again. rmmFinalize is refused while such a free is deferred or being made,
   so the legacy resource is the one the free was deferred into. Host memory for the record
   running out is logged at ERROR (the block is then lost to this layer). Keeps the thread's last
   error. Takes the lock (rmm_capture_end holds none). */
RMM__PRIVATE void rmm__legacy_refile(const rmm_resource *mr, void *ptr, size_t bytes) {
    rmm__lock(&rmm__legacy.lock);
    if (rmm__legacy.initialized && mr && mr == rmm__legacy_resource() && !rmm__addr_map_find(&rmm__legacy.sizes, (uintptr_t)ptr) &&
        !rmm__addr_map_put(&rmm__legacy.sizes, (uintptr_t)ptr, (void *)(uintptr_t)bytes))
        RMM__LOG(RMM_LOG_LEVEL_ERROR, "rmm_capture_end: out of host memory to file the block %p (%zu bytes) with rmmFree again: lost to the legacy API", ptr, bytes);
    rmm__unlock(&rmm__legacy.lock);
}
/* rmmFinalize's words for a block still allocated whose free failed: "<ptr> (<bytes> bytes): <the
   thread's last error>", cut on a whole character to fit out (RMM__LEGACY_WORDS bytes). */
#define RMM__LEGACY_WORDS 320
RMM__PRIVATE void rmm__legacy_block_words(char *out, const rmm__addr_slot *e) {
    snprintf(out, RMM__LEGACY_WORDS, "%p (%zu bytes): %s", (void *)e->key, (size_t)(uintptr_t)e->value, rmm_last_error());
    out[rmm__utf8_cut(out, strlen(out))] = '\0';
}
RMM__IMPL rmmError_t rmmInitialize(rmmOptions_t *options) {
    rmmOptions_t o;
    rmm_status st = RMM_SUCCESS;
    memset(&o, 0, sizeof o);
    if (options) o = *options;
    if (o.allocation_mode & ~(PoolAllocation | CudaManagedMemory))
        return RMM__INVALID("rmmInitialize: allocation_mode 0x%x has unknown bits", (unsigned)o.allocation_mode);
    rmm__lock(&rmm__legacy.lock);
    if (rmm__legacy.initialized) {
        rmm__unlock(&rmm__legacy.lock);
        return RMM__INVALID("rmmInitialize: already initialized (call rmmFinalize first)");
    }
    if (!rmm__addr_map_init(&rmm__legacy.sizes, 1024)) st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmmInitialize: out of host memory");
    if (st == RMM_SUCCESS)
        st = (o.allocation_mode & CudaManagedMemory) ? rmm_managed_resource_create(&rmm__legacy.base) : rmm_cuda_resource_create(&rmm__legacy.base);
    if (st == RMM_SUCCESS && (o.allocation_mode & PoolAllocation)) {
        rmm_pool_desc d = rmm_pool_desc_default();
        d.initial_bytes = SIZE_MAX;      /* "not given": RMM_ALLOC_CONF may set it */
        st = rmm_pool_desc_from_env(&d); /* RMM_ALLOC_CONF over the options */
        if (st == RMM_SUCCESS && d.initial_bytes == SIZE_MAX) {
            /* the options' size, or half of total device memory; none with virtual growth; never
               more than a maximum the configuration set */
            if (d.growth == RMM_POOL_GROWTH_VIRTUAL) {
                d.initial_bytes = 0;
            } else {
                if (o.initial_pool_size == 0) {
                    size_t f = 0, t = 0;
                    st = rmm__mem_info(&f, &t);
                    o.initial_pool_size = t / 2;
                }
                if (!rmm__align_up(o.initial_pool_size, RMM_ALIGNMENT, &d.initial_bytes)) /* (up: 100 bytes made no pool before, red team 30) */
                    d.initial_bytes = rmm__align_down(o.initial_pool_size, RMM_ALIGNMENT);
                if (d.maximum_bytes && d.initial_bytes > d.maximum_bytes) d.initial_bytes = d.maximum_bytes;
            }
        }
#ifdef RMM_NO_POOL
        if (st == RMM_SUCCESS) st = rmm__fail(RMM_ERROR_NOT_SUPPORTED, "rmmInitialize: PoolAllocation needs the pool, compiled out by RMM_NO_POOL");
#else
        if (st == RMM_SUCCESS) st = rmm_pool_create(&rmm__legacy.pool, rmm__legacy.base, &d);
#endif
        if (st == RMM_SUCCESS) o.initial_pool_size = d.initial_bytes; /* the size in use (rmmIsInitialized): rounded, capped, or RMM_ALLOC_CONF's (red team 35) */
    }
    if (st != RMM_SUCCESS) {
        char why[sizeof rmm__last_error_text];
        int why_cuda = rmm_last_cuda_error();
        rmm__copy_text(why, sizeof why, rmm_last_error());
        rmm_resource_destroy(rmm__legacy.base);
        rmm__legacy.base = NULL;
        rmm__addr_map_free(&rmm__legacy.sizes);
        if (strncmp(why, "rmmInitialize", 13) != 0) { /* the user's call named, and where the pool's settings came from (red team 38a) */
            const char *conf = getenv("RMM_ALLOC_CONF");
            if ((o.allocation_mode & PoolAllocation) && conf && *conf && strncmp(why, "RMM_ALLOC_CONF", 14) != 0)
                rmm__fail_cuda(why_cuda, st, "rmmInitialize (RMM_ALLOC_CONF=\"%.*s\"): %s", rmm__quoted_len(conf, strlen(conf)),
                               conf, why);
            else
                rmm__fail_cuda(why_cuda, st, "rmmInitialize: %s", why);
        }
    } else {
        rmm__legacy.options = o;
        rmm__legacy.initialized = true;
        if (!rmm__device_peek(&rmm__legacy.device)) rmm__legacy.device = -1;
    }
    rmm__unlock(&rmm__legacy.lock);
    return st;
}
/* Whether rmmFinalize would leave its resources to a capture: a free through them deferred to
   rmm_capture_end already (rmmFree on a stream registered for capture), or the stream its own frees
   are made on (RMM_STREAM_DEFAULT, with rmmInitialize's device current, as rmmFinalize makes it) registered,
   where they would be deferred. Keeps the thread's last error. Caller holds the lock. */
RMM__PRIVATE bool rmm__legacy_awaits_capture(void) {
    uint64_t key = 0;
    rmm__kept_error kept;
    bool registered;
    if (rmm_resource_awaits_capture(rmm__legacy.base)) return true;
    if (RMM__ATOMIC_LOAD_RELAXED(&rmm__graph_captures) == 0) return false;
    rmm__error_keep(&kept);
    registered = rmm__graph_key("rmmFinalize", RMM_STREAM_DEFAULT, &key) == RMM_SUCCESS && rmm__graph_key_registered(key);
    rmm__error_back(&kept);
    return registered;
}
RMM__IMPL rmmError_t rmmFinalize(void) {
    rmm_status st = RMM_SUCCESS;
    rmm__device_guard g;
    rmm__lock(&rmm__legacy.lock);
    if (!rmm__legacy.initialized) {
        rmm__unlock(&rmm__legacy.lock);
        return rmm__legacy_not_initialized("rmmFinalize");
    }
    /* (rmmInitialize's device made current for the frees and destroys, as a resource's destroy does:
       with another current, a pool's frees were refused in RMM_DEBUG builds, reported as blocks lost,
       and made on the wrong device's default stream in release builds; red team 47) */
    rmm__device_enter_quietly(&g, rmm__legacy.device, false);
    /* a free through the legacy resources waiting for rmm_capture_end: their destroys would be
       refused, and the pool and its memory dropped all the same, never to be destroyed (red team
       50); refused, with nothing done, until the capture ends */
    if (rmm__legacy_awaits_capture()) {
        rmm__device_leave(&g);
        rmm__unlock(&rmm__legacy.lock);
        return RMM__INVALID("rmmFinalize: a free through the legacy resource would wait for rmm_capture_end (one deferred already: a "
                            "block freed on a stream registered for capture; or the default stream, which rmmFinalize frees on, is "
                            "registered); end the capture, then finalize (nothing done: still initialized)");
    }
    { /* blocks still allocated go back, through the resource rmmAlloc used: in pool mode too, since a
         block a graph pool served (rmmAlloc on a stream registered for a capture) is not the pool's,
         and destroying the pool left it live in the graph pool for good (red team 47) */
        size_t i, lost = 0, lost_bytes = 0, corrupt = 0, blocks = rmm__legacy.sizes.count;
        char first[RMM__LEGACY_WORDS], first_corrupt[RMM__LEGACY_WORDS], also[512];
        int first_cuda = 0;
        rmm__kept_error kept;
        rmm__error_keep(&kept);
        also[0] = '\0';
        for (i = 0; rmm__legacy.sizes.slots && i <= rmm__legacy.sizes.mask; i++) {
            const rmm__addr_slot *e = &rmm__legacy.sizes.slots[i];
            rmm_status failed;
            if (!e->key || (failed = rmm_deallocate(rmm__legacy_resource(), (void *)e->key, (size_t)(uintptr_t)e->value, RMM_STREAM_DEFAULT)) == RMM_SUCCESS) continue;
            if (rmm__legacy.pool && rmm__suballocator_holds(rmm__legacy.pool, (void *)e->key)) {
                /* still a block of the pool (its free ran out of host memory, say): it goes back
                   with the pool's chunks below, whose failure is reported there (until 2026-12-03
                   it was reported lost here too, memory that came back); a free refused as
                   CORRUPTION (RMM_DEBUG_MARGIN: a write past the block's end) is still reported
                   below, as CORRUPTION (a review's find, 2026-12-03: it was swallowed, SUCCESS) */
                if (failed == RMM_ERROR_CORRUPTION && corrupt++ == 0) {
                    rmm__legacy_block_words(first_corrupt, e);
                }
                RMM__LOG(RMM_LOG_LEVEL_DEBUG, "rmmFinalize: the free of %p (%zu bytes) failed; it goes back with the pool: %s", (void *)e->key,
                         (size_t)(uintptr_t)e->value, rmm_last_error());
                rmm__error_back(&kept); /* (and leaves no failure behind) */
                continue;
            }
            if (lost++ == 0) {
                st = failed;
                first_cuda = rmm_last_cuda_error();
                rmm__legacy_block_words(first, e);
            }
            lost_bytes += (size_t)(uintptr_t)e->value;
        }
        if (corrupt) /* (their memory goes back with the pool: not lost, but the program wrote past them) */
            snprintf(also, sizeof also, "%zu of the %zu blocks still allocated were refused as corrupted as they were freed (their memory goes back with the pool); the first, %s",
                     corrupt, blocks, first_corrupt);
        if (lost) { /* (finalized all the same: the layer forgets them, as a retry could not reach them; a red team's find, 2026-11-29: this was SUCCESS) */
            (void)rmm__fail_cuda(first_cuda, st, "rmmFinalize: %zu of the %zu blocks still allocated (%zu bytes) could not be given back, lost; the first, %s%s%s",
                                 lost, blocks, lost_bytes, first, corrupt ? "; and " : "", also);
            RMM__LOG(RMM_LOG_LEVEL_WARN, "%s", rmm_last_error());
        } else if (corrupt) {
            st = rmm__fail(RMM_ERROR_CORRUPTION, "rmmFinalize: %s", also);
            RMM__LOG(RMM_LOG_LEVEL_WARN, "%s", rmm_last_error());
        }
    }
    if (rmm__legacy.pool) { /* its chunks go back as it is destroyed: a failure left behind is memory lost */
        unsigned long serial = rmm__last_error_serial;
        rmm_resource_destroy(rmm__legacy.pool);
        if (rmm__last_error_serial != serial && st == RMM_SUCCESS) /* (a red team's find, 2026-11-30: this was SUCCESS) */
            st = rmm__fail_cuda(rmm_last_cuda_error(), rmm_last_status(), "rmmFinalize: the pool could not give all its memory back, lost: %s", rmm_last_error());
    }
    rmm_resource_destroy(rmm__legacy.base);
    rmm__device_leave(&g);
    rmm__legacy.pool = rmm__legacy.base = NULL;
    rmm__addr_map_free(&rmm__legacy.sizes);
    RMM_SYS_FREE(rmm__legacy.log);
    rmm__legacy.log = NULL;
    while (rmm__legacy.file_count) RMM_SYS_FREE(rmm__legacy.files[--rmm__legacy.file_count]);
    RMM_SYS_FREE(rmm__legacy.files);
    rmm__legacy.files = NULL;
    rmm__legacy.file_cap = 0;
    rmm__legacy.log_count = rmm__legacy.log_cap = 0;
    rmm__legacy.initialized = false;
    rmm__unlock(&rmm__legacy.lock);
    return st;
}
RMM__IMPL bool rmmIsInitialized(rmmOptions_t *options) {
    bool yes;
    rmm__lock(&rmm__legacy.lock);
    yes = rmm__legacy.initialized;
    if (yes && options) *options = rmm__legacy.options;
    rmm__unlock(&rmm__legacy.lock);
    return yes;
}
RMM__IMPL const char *rmmGetErrorString(rmmError_t error) { return rmm_status_string(error); }
RMM__IMPL rmmError_t rmmAlloc(void **ptr, size_t bytes, rmm_stream stream, const char *file, unsigned int line) {
    rmm_status st;
    if (ptr) *ptr = NULL;
    rmm__lock(&rmm__legacy.lock);
    if (!rmm__legacy.initialized) {
        rmm__unlock(&rmm__legacy.lock);
        return rmm__legacy_not_initialized_at("rmmAlloc", file, line);
    }
    if (!ptr) {
        rmm__unlock(&rmm__legacy.lock);
        return rmm__fail(RMM_ERROR_INVALID_ARGUMENT, "rmmAlloc at %s:%u: ptr is NULL", file ? file : "?", line);
    }
    if ((st = rmm__legacy_device_check("rmmAlloc", file, line)) != RMM_SUCCESS) {
        rmm__unlock(&rmm__legacy.lock);
        return st;
    }
    st = rmm_allocate(rmm__legacy_resource(), ptr, bytes, stream);
    if (st == RMM_SUCCESS && *ptr && !rmm__addr_map_put(&rmm__legacy.sizes, (uintptr_t)*ptr, (void *)(uintptr_t)bytes)) {
        RMM__CLEANUP(rmm_deallocate(rmm__legacy_resource(), *ptr, bytes, stream));
        *ptr = NULL;
        st = rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "out of host memory for the block's size record (the block was given back)"); /* (prefixed with the call below) */
    }
    rmm__legacy_record(st == RMM_SUCCESS ? "allocate" : "allocate failure", *ptr, bytes, stream, file, line);
    rmm__unlock(&rmm__legacy.lock);
    if (st != RMM_SUCCESS) {
        char why[sizeof rmm__last_error_text];
        int why_cuda = rmm_last_cuda_error();
        rmm__copy_text(why, sizeof why, rmm_last_error());
        rmm__fail_cuda(why_cuda, st, "rmmAlloc(%zu bytes) at %s:%u: %s", bytes, file ? file : "?", line, why);
    }
    return st;
}
RMM__IMPL rmmError_t rmmFree(void *ptr, rmm_stream stream, const char *file, unsigned int line) {
    rmm_status st;
    void **size_slot;
    size_t bytes = 0;
    rmm__lock(&rmm__legacy.lock);
    if (!rmm__legacy.initialized) {
        rmm__unlock(&rmm__legacy.lock);
        return rmm__legacy_not_initialized_at("rmmFree", file, line);
    }
    if (!ptr) { /* as free(NULL) */
        rmm__unlock(&rmm__legacy.lock);
        return RMM_SUCCESS;
    }
    if ((size_slot = rmm__addr_map_find(&rmm__legacy.sizes, (uintptr_t)ptr)) == NULL) {
        rmm__unlock(&rmm__legacy.lock);
        return rmm__fail(RMM_ERROR_INVALID_ARGUMENT, "rmmFree(%p) at %s:%u: not allocated by rmmAlloc, or already freed", ptr, file ? file : "?", line);
    }
    if ((st = rmm__legacy_device_check("rmmFree", file, line)) != RMM_SUCCESS) {
        rmm__unlock(&rmm__legacy.lock);
        return st;
    }
    bytes = (size_t)(uintptr_t)*size_slot;
    st = rmm_deallocate(rmm__legacy_resource(), ptr, bytes, stream);
    if (st == RMM_SUCCESS) { /* (a failed free stays recorded: it may be retried) */
        (void)rmm__addr_map_remove(&rmm__legacy.sizes, (uintptr_t)ptr);
        rmm__legacy_record("free", ptr, bytes, stream, file, line);
    }
    rmm__unlock(&rmm__legacy.lock);
    if (st != RMM_SUCCESS) {
        char why[sizeof rmm__last_error_text];
        int why_cuda = rmm_last_cuda_error();
        rmm__copy_text(why, sizeof why, rmm_last_error());
        rmm__fail_cuda(why_cuda, st, "rmmFree(%p) at %s:%u: %s", ptr, file ? file : "?", line, why);
    }
    return st;
}
RMM__IMPL rmmError_t rmmGetInfo(size_t *free_bytes, size_t *total_bytes, rmm_stream stream) {
    (void)stream;
    if (!rmmIsInitialized(NULL)) return rmm__legacy_not_initialized("rmmGetInfo");
    if (!free_bytes) return RMM__NULL_OUT("rmmGetInfo", "free_bytes"); /* (named here: the call the user made, red team 35) */
    if (!total_bytes) return RMM__NULL_OUT("rmmGetInfo", "total_bytes");
    return rmm_available_device_memory(free_bytes, total_bytes);
}
RMM__IMPL rmmError_t rmmGetAllocationOffset(ptrdiff_t *offset, void *ptr, rmm_stream stream) {
    rmm_status st = RMM_SUCCESS;
    bool below = false; /* the failure is rmm_resource_allocation_base's */
    (void)stream;
    if (offset) *offset = 0; /* (0 on every failure, as rmm_resource_allocation_base's: red team 38a) */
    rmm__lock(&rmm__legacy.lock);
    if (!rmm__legacy.initialized) st = rmm__legacy_not_initialized("rmmGetAllocationOffset");
    else if (!offset) st = RMM__NULL_OUT("rmmGetAllocationOffset", "offset");
    else if (!ptr || !rmm__addr_map_find(&rmm__legacy.sizes, (uintptr_t)ptr))
        st = RMM__INVALID("rmmGetAllocationOffset(%p): not allocated by rmmAlloc", ptr);
    else {
        void *base = NULL;
        size_t off = 0;
        st = rmm_resource_allocation_base(rmm__legacy_resource(), ptr, &base, &off);
        if (st == RMM_SUCCESS) *offset = (ptrdiff_t)off;
        below = st != RMM_SUCCESS;
    }
    rmm__unlock(&rmm__legacy.lock);
    if (below) { /* the user's call named, then the one below it */
        char why[sizeof rmm__last_error_text];
        int why_cuda = rmm_last_cuda_error();
        rmm__copy_text(why, sizeof why, rmm_last_error());
        rmm__fail_cuda(why_cuda, st, "rmmGetAllocationOffset(%p): %s", ptr, why);
    }
    return st;
}
RMM__IMPL rmmError_t rmmWriteLog(const char *path) {
    FILE *f;
    size_t i;
    rmm_status st = RMM_SUCCESS;
    rmm__lock(&rmm__legacy.lock);
    if (!rmm__legacy.initialized) {
        rmm__unlock(&rmm__legacy.lock);
        return rmm__legacy_not_initialized("rmmWriteLog");
    }
    if (!path) {
        rmm__unlock(&rmm__legacy.lock);
        return RMM__NULL_OUT("rmmWriteLog", "path");
    }
    if (!rmm__legacy.options.enable_logging) {
        rmm__unlock(&rmm__legacy.lock);
        return RMM__INVALID("rmmWriteLog: logging was not enabled in rmmInitialize (enable_logging)");
    }
    f = fopen(path, "w");
    if (!f) {
        rmm__unlock(&rmm__legacy.lock);
        return rmm__fail(RMM_ERROR_IO, "rmmWriteLog: cannot open '%s': %s", path, strerror(errno));
    }
    /* RMM's columns, then the call site: readers that pick columns by name (RMM's replay) skip it */
    fputs("Thread,Time,Action,Pointer,Size,Stream,Location\n", f);
    for (i = 0; i < rmm__legacy.log_count; i++) {
        const rmm__legacy_event *e = &rmm__legacy.log[i];
        /* the Stream column as the logging adaptor writes it (RMM's format_stream): 0x and hex, 0
           for the default stream (bare hex until session 49) */
        fprintf(f, "%llu,%s,%s,%p,%zu,%s%llx,", (unsigned long long)e->thread, e->when, e->action, e->ptr, e->bytes, e->stream ? "0x" : "",
                (unsigned long long)(uintptr_t)e->stream);
        if (strpbrk(e->file, ",\"\r\n")) { /* quoted as CSV quotes (RFC 4180): a file name with a comma or a line break split the row (a red team's find) */
            const char *c;
            fputc('"', f);
            for (c = e->file; *c; c++) {
                if (*c == '"') fputc('"', f);
                fputc(*c, f);
            }
            fprintf(f, ":%u\"\n", e->line);
        } else {
            fprintf(f, "%s:%u\n", e->file, e->line);
        }
    }
    if (ferror(f)) st = rmm__fail(RMM_ERROR_IO, "rmmWriteLog: writing '%s' failed", path);
    if (fclose(f) != 0 && st == RMM_SUCCESS) st = rmm__fail(RMM_ERROR_IO, "rmmWriteLog: closing '%s' failed", path);
    rmm__unlock(&rmm__legacy.lock);
    return st;
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
