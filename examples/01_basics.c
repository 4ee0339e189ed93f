/* 01_basics.c - the first things to know about rmm.h: where device memory comes from.

   Shows allocation through the current device resource (rmm_allocate with mr NULL, cudaMalloc
   underneath unless you change it), through an async resource (an owned cudaMemPool_t used with
   cudaMallocFromPoolAsync/cudaFreeAsync, stream-ordered), and through a user-defined resource: a
   struct that embeds rmm_resource as its first member and points it at its own vtable; this one
   counts bytes and forwards to an upstream resource. It also shows the error path: every call
   returns an rmm_status, and a failing call leaves a message in rmm_last_error(). Asking for
   SIZE_MAX bytes fails with RMM_ERROR_OUT_OF_MEMORY, and the process keeps working afterwards.

   Build and run from the repository root:
       make build/examples/host/01_basics && build/examples/host/01_basics   (host backend, no GPU)
       gcc -std=c99 -O2 examples/01_basics.c -isystem /usr/local/cuda/include \
           -L/usr/local/cuda/lib64 -lcudart -lpthread -o 01_basics && ./01_basics
       nvcc -x cu -O2 -I. examples/01_basics.c -o 01_basics && ./01_basics
*/
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

/* ---- a user-defined resource: counts bytes and forwards to an upstream ------------------- */

typedef struct counting_resource {
    rmm_resource base;      /* first member: an rmm_resource * to this struct is a counting_resource * */
    rmm_resource *upstream; /* not owned */
    size_t live_bytes, peak_bytes, allocations;
} counting_resource;

/* The library calls these with ptr != NULL, bytes > 0 and alignment a power of two >= 256.
   Forwarding with the alignment keeps the alignment contract; the upstream's status (and its
   rmm_last_error() message) passes through unchanged. Not thread-safe: for use from several threads
   wrap it with rmm_thread_safe_adaptor_create. */
static rmm_status counting_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    counting_resource *c = (counting_resource *)self;
    rmm_status st = rmm_allocate_aligned(c->upstream, ptr, bytes, alignment, stream);
    if (st != RMM_SUCCESS) return st;
    c->live_bytes += bytes;
    c->allocations++;
    if (c->live_bytes > c->peak_bytes) c->peak_bytes = c->live_bytes;
    return RMM_SUCCESS;
}
static rmm_status counting_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    counting_resource *c = (counting_resource *)self;
    rmm_status st = rmm_deallocate_aligned(c->upstream, ptr, bytes, alignment, stream);
    if (st == RMM_SUCCESS) c->live_bytes -= bytes;
    return st;
}
/* Called by rmm_resource_destroy: frees this layer only, never the upstream. */
static void counting_destroy(rmm_resource *self) { free(self); }

/* Positional initialisation: valid C99 and C++ (no designated initializers). is_equal NULL means
   "equal only to itself". */
static const rmm_resource_vtable counting_vtable = {"counting", counting_allocate, counting_deallocate, NULL, counting_destroy};

static rmm_status counting_resource_create(rmm_resource **out, rmm_resource *upstream) {
    counting_resource *c = (counting_resource *)malloc(sizeof *c);
    *out = NULL;
    if (!c) return RMM_ERROR_OUT_OF_MEMORY;
    memset(c, 0, sizeof *c);
    c->base.vtable = &counting_vtable;
    c->upstream = upstream;
    *out = &c->base;
    return RMM_SUCCESS;
}

int main(void) {
    int devices = 0, device = 0;
    size_t free_bytes = 0, total_bytes = 0;
    void *p = NULL, *q = NULL;
    rmm_resource *current, *cuda_mr = NULL, *async_mr = NULL, *counting = NULL, *previous;
    rmm_stream stream = RMM_STREAM_DEFAULT;
    rmm_status st;

    /* ---- 1. the current device resource ---- */
#if defined(RMM_BACKEND_HOST)
    printf("backend: host (simulated devices, no GPU needed)\n");
#else
    printf("backend: CUDA runtime\n");
#endif
    CHECK(rmm_get_device_count(&devices));
    CHECK(rmm_get_device(&device));
    CHECK(rmm_available_device_memory(&free_bytes, &total_bytes));
    current = rmm_get_current_device_resource();
    EXPECT(current != NULL);
    printf("device %d of %d: %zu MiB free of %zu MiB; current resource: '%s'\n", device, devices,
           free_bytes / MIB, total_bytes / MIB, rmm_resource_type_name(current));

    /* mr NULL means the current device resource. Every allocation is aligned to at least 256. */
    CHECK(rmm_allocate(NULL, &p, 1 * MIB, RMM_STREAM_DEFAULT));
    EXPECT((uintptr_t)p % RMM_ALIGNMENT == 0);
    printf("current resource: 1 MiB at %p\n", p);
    CHECK(rmm_deallocate(NULL, p, 1 * MIB, RMM_STREAM_DEFAULT));

    /* A resource of your own: rmm_cuda_resource_create (cudaMalloc on the device current now).
       Larger alignments: ask with rmm_allocate_aligned and free with the same alignment. */
    CHECK(rmm_cuda_resource_create(&cuda_mr));
    CHECK(rmm_allocate_aligned(cuda_mr, &q, 1000, 4096, RMM_STREAM_DEFAULT));
    EXPECT((uintptr_t)q % 4096 == 0);
    printf("cuda resource: 1000 bytes aligned to 4096 at %p\n", q);
    CHECK(rmm_deallocate_aligned(cuda_mr, q, 1000, 4096, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(cuda_mr);

    /* ---- 2. an async resource: stream-ordered allocation from a CUDA memory pool ---- */
    CHECK(rmm_stream_create(&stream));
    {
        rmm_async_desc desc = rmm_async_desc_default();
        desc.release_threshold_bytes = 64 * MIB; /* keep up to 64 MiB cached in the pool */
        st = rmm_async_resource_create(&async_mr, &desc);
    }
    if (st == RMM_ERROR_NOT_SUPPORTED) {
        /* a device without memory pools: not an error of this program */
        printf("async resource: not supported here (%s)\n", rmm_last_error());
    } else {
        void *blocks[3] = {NULL, NULL, NULL};
        size_t sizes[3] = {4096, 3 * MIB, 100};
        size_t i;
        CHECK(st);
        /* Allocated on `stream`: usable by work on `stream` at once, and after a free on `stream`
           the pool may hand the memory to the next allocation on that stream without waiting. */
        for (i = 0; i < 3; i++) CHECK(rmm_allocate(async_mr, &blocks[i], sizes[i], stream));
        printf("async resource '%s': 3 blocks on a stream (%zu, %zu, %zu bytes)\n", rmm_resource_type_name(async_mr),
               sizes[0], sizes[1], sizes[2]);
        for (i = 0; i < 3; i++) CHECK(rmm_deallocate(async_mr, blocks[i], sizes[i], stream));
        CHECK(rmm_stream_synchronize(stream));
        rmm_resource_destroy(async_mr);
    }

    /* ---- 3. a user-defined resource over the current one ---- */
    CHECK(counting_resource_create(&counting, current));
    {
        counting_resource *c = (counting_resource *)counting;
        void *a = NULL, *b = NULL;
        CHECK(rmm_allocate(counting, &a, 2 * MIB, stream));
        CHECK(rmm_allocate(counting, &b, 512, stream));
        printf("counting resource: %zu allocations, %zu bytes live\n", c->allocations, c->live_bytes);
        CHECK(rmm_deallocate(counting, a, 2 * MIB, stream));
        CHECK(rmm_deallocate(counting, b, 512, stream));

        /* Made current, it serves every rmm_allocate(NULL, ...) and every container created with
           mr NULL on this device. rmm_set_current_device_resource returns the previous one. */
        previous = rmm_set_current_device_resource(counting);
        EXPECT(previous == current);
        CHECK(rmm_allocate(NULL, &a, 3 * MIB, stream));
        CHECK(rmm_deallocate(NULL, a, 3 * MIB, stream));
        EXPECT(rmm_set_current_device_resource(previous) == counting);
        printf("counting resource as current: %zu allocations in all, peak %zu bytes, %zu bytes live\n",
               c->allocations, c->peak_bytes, c->live_bytes);
        EXPECT(c->live_bytes == 0);
    }

    /* ---- 4. the error path: a status and a message, and the process keeps working ---- */
    st = rmm_allocate(NULL, &p, SIZE_MAX, stream);
    EXPECT(st == RMM_ERROR_OUT_OF_MEMORY && p == NULL);
    printf("SIZE_MAX bytes: %s: %s\n", rmm_status_string(st), rmm_last_error());
    /* through the user-defined resource the upstream's status and message come back unchanged */
    st = rmm_allocate(counting, &p, SIZE_MAX, stream);
    EXPECT(st == RMM_ERROR_OUT_OF_MEMORY && p == NULL);
    st = rmm_allocate_aligned(NULL, &p, 256, 3, stream);
    EXPECT(st == RMM_ERROR_INVALID_ARGUMENT && p == NULL);
    printf("alignment 3: %s: %s\n", rmm_status_string(st), rmm_last_error());
    CHECK(rmm_allocate(NULL, &p, 1 * MIB, stream)); /* out of memory is retryable */
    CHECK(rmm_deallocate(NULL, p, 1 * MIB, stream));

    rmm_resource_destroy(counting);
    CHECK(rmm_stream_synchronize(stream));
    CHECK(rmm_stream_destroy(stream));
    printf("01_basics: ok\n");
    return 0;
}
