/* 04_custom_resource.c - writing your own memory resource in C, two ways.

   1. From scratch, with a vtable: a bump ("arena" or "linear") allocator. It takes one chunk from
      an upstream resource at creation, hands out pieces of it by moving an offset forward, ignores
      individual frees except to count them, and starts again from the beginning when the last
      piece is freed. Allocation is a few instructions and never calls CUDA. It is set as the
      current device resource, so device buffers created with mr NULL come from it.

      The contract a resource keeps (see rmm_resource_vtable in rmm.h): allocate gets bytes > 0 and
      a power-of-two alignment >= 256 and must honour it; deallocate gets the same bytes and
      alignment back; both are stream-ordered: memory freed on stream S may be handed out again at
      once to work on S, but work on another stream T could still be using it unless T waits for
      S. This allocator keeps that promise simply: it serves one stream and refuses others.

   2. With two callbacks, no vtable: rmm_callback_resource_create(allocate_fn, deallocate_fn, arg),
      here forwarding to a cudaMalloc resource and counting the calls.

   A user resource reports a failure with rmm_set_last_error(status, fmt, ...), which sets
   rmm_last_error() and returns the status; this one returns plain statuses to stay short, and the
   example prints the status name.

   Build and run from the repository root:
       make build/examples/host/04_custom_resource && build/examples/host/04_custom_resource
       gcc -std=c99 -O2 examples/04_custom_resource.c -isystem /usr/local/cuda/include \
           -L/usr/local/cuda/lib64 -lcudart -lpthread -o 04_custom_resource && ./04_custom_resource
       nvcc -x cu -O2 -I. examples/04_custom_resource.c -o 04_custom_resource && ./04_custom_resource
*/
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "common.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

/* ======================= 1. a bump allocator, from scratch ======================= */

typedef struct bump_resource {
    rmm_resource base;      /* first member, so (rmm_resource *) and (bump_resource *) convert */
    rmm_resource *upstream; /* where the chunk comes from; not owned */
    rmm_stream stream;      /* the one stream this resource serves */
    char *chunk;            /* device memory: only its address is used here, never its contents */
    size_t chunk_bytes;
    pthread_mutex_t lock;   /* thread-safe: several host threads may share the stream */
    size_t offset;          /* the next free byte of the chunk */
    size_t live;            /* pieces handed out and not yet freed */
    size_t high_water;      /* the largest offset reached */
    size_t resets;          /* times the offset went back to 0 */
} bump_resource;

static rmm_status bump_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    bump_resource *r = (bump_resource *)self;
    uintptr_t base = (uintptr_t)r->chunk, start;
    rmm_status st = RMM_SUCCESS;
    if (stream != r->stream) return RMM_ERROR_INVALID_ARGUMENT; /* see the stream rule above */
    pthread_mutex_lock(&r->lock);
    /* align the address, not the offset: the chunk itself is only promised 256-byte alignment */
    start = (base + r->offset + (alignment - 1)) & ~(uintptr_t)(alignment - 1);
    if (start - base > r->chunk_bytes || bytes > r->chunk_bytes - (size_t)(start - base)) {
        st = RMM_ERROR_OUT_OF_MEMORY; /* retryable: frees bring the offset back */
    } else {
        *ptr = (void *)start;
        r->offset = (size_t)(start - base) + bytes;
        r->live++;
        if (r->offset > r->high_water) r->high_water = r->offset;
    }
    pthread_mutex_unlock(&r->lock);
    return st;
}

static rmm_status bump_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    bump_resource *r = (bump_resource *)self;
    uintptr_t p = (uintptr_t)ptr, base = (uintptr_t)r->chunk;
    rmm_status st = RMM_SUCCESS;
    (void)alignment;
    if (stream != r->stream) return RMM_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&r->lock);
    if (p < base || p - base >= r->chunk_bytes || bytes > r->chunk_bytes - (size_t)(p - base) || r->live == 0) {
        st = RMM_ERROR_CORRUPTION; /* not a piece of this chunk, or more frees than allocations */
    } else if (--r->live == 0) {
        /* The last piece is gone: reuse the whole chunk. Safe without waiting because every piece
           was used and freed on r->stream, in order. */
        r->offset = 0;
        r->resets++;
    }
    pthread_mutex_unlock(&r->lock);
    return st;
}

/* rmm_resource_destroy calls this: give the chunk back and free the struct (never the upstream). */
static void bump_destroy(rmm_resource *self) {
    bump_resource *r = (bump_resource *)self;
    if (rmm_deallocate(r->upstream, r->chunk, r->chunk_bytes, r->stream) != RMM_SUCCESS)
        fprintf(stderr, "bump: giving the chunk back failed: %s\n", rmm_last_error());
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* Positional initialisation (valid C99 and C++). is_equal NULL: equal only to itself. */
static const rmm_resource_vtable bump_vtable = {"bump", bump_allocate, bump_deallocate, NULL, bump_destroy};

/* Fails with the upstream's status (and rmm_last_error() message) iff the chunk cannot be had. */
static rmm_status bump_resource_create(rmm_resource **out, rmm_resource *upstream, size_t chunk_bytes, rmm_stream stream) {
    bump_resource *r;
    void *chunk = NULL;
    rmm_status st;
    *out = NULL;
    r = (bump_resource *)calloc(1, sizeof *r);
    if (!r) return RMM_ERROR_OUT_OF_MEMORY;
    st = rmm_allocate(upstream, &chunk, chunk_bytes, stream);
    if (st != RMM_SUCCESS) {
        free(r);
        return st;
    }
    r->chunk = (char *)chunk;
    r->base.vtable = &bump_vtable;
    r->upstream = upstream;
    r->stream = stream;
    r->chunk_bytes = chunk_bytes;
    pthread_mutex_init(&r->lock, NULL);
    *out = &r->base;
    return RMM_SUCCESS;
}

/* ======================= 2. a callback resource ======================= */

typedef struct callback_state {
    rmm_resource *upstream;
    size_t allocations, deallocations, live_bytes;
} callback_state;

static rmm_status forward_allocate(void **ptr, size_t bytes, rmm_stream stream, void *arg) {
    callback_state *s = (callback_state *)arg;
    rmm_status st = rmm_allocate(s->upstream, ptr, bytes, stream); /* 256-aligned, as required */
    if (st == RMM_SUCCESS) {
        s->allocations++;
        s->live_bytes += bytes;
    }
    return st;
}
static void forward_deallocate(void *ptr, size_t bytes, rmm_stream stream, void *arg) {
    callback_state *s = (callback_state *)arg;
    if (rmm_deallocate(s->upstream, ptr, bytes, stream) != RMM_SUCCESS)
        fprintf(stderr, "callback: free failed: %s\n", rmm_last_error());
    s->deallocations++;
    s->live_bytes -= bytes;
}

int main(void) {
    rmm_resource *cuda = NULL, *bump = NULL, *previous = NULL, *callback = NULL;
    rmm_stream stream = RMM_STREAM_DEFAULT, other = RMM_STREAM_DEFAULT;
    rmm_device_buffer a, b, c;
    unsigned char host[3000];
    size_t i;
    rmm_status st;

    for (i = 0; i < sizeof host; i++) host[i] = (unsigned char)(i * 7u);
    CHECK(rmm_cuda_resource_create(&cuda));
    CHECK(rmm_stream_create(&stream));
    CHECK(rmm_stream_create(&other));

    /* ---- the bump allocator as the current device resource ---- */
    CHECK(bump_resource_create(&bump, cuda, 1 * MIB, stream));
    previous = rmm_set_current_device_resource(bump);
    EXPECT(previous != NULL);
    printf("bump resource over cudaMalloc: one 1 MiB chunk, serving one stream, set as current\n");
    {
        bump_resource *r = (bump_resource *)bump;
        /* device buffers with mr NULL: they take their memory from the current (bump) resource */
        CHECK(rmm_device_buffer_create_from(&a, host, sizeof host, stream, NULL));
        CHECK(rmm_device_buffer_create(&b, 100 * KIB, stream, NULL));
        CHECK(rmm_device_buffer_copy(&c, &a, stream, NULL));
        CHECK(rmm_stream_synchronize(stream)); /* `host` was the source of an async copy */
        EXPECT(a.mr == bump && b.mr == bump && c.mr == bump);
        printf("  3 buffers (%zu, %zu, %zu bytes) at chunk offsets %zu, %zu, %zu; %zu pieces live, offset %zu\n",
               a.size, b.size, c.size, (size_t)((char *)a.data - r->chunk), (size_t)((char *)b.data - r->chunk),
               (size_t)((char *)c.data - r->chunk), r->live, r->offset);
        EXPECT((uintptr_t)b.data % RMM_ALIGNMENT == 0 && (uintptr_t)c.data % RMM_ALIGNMENT == 0);

        /* an over-aligned request: the resource aligns the address it returns */
        {
            void *p = NULL;
            CHECK(rmm_allocate_aligned(NULL, &p, 1000, 64 * KIB, stream));
            EXPECT((uintptr_t)p % (64 * KIB) == 0);
            printf("  1000 bytes aligned to 64 KiB: %p, at chunk offset %zu\n", p, (size_t)((char *)p - r->chunk));
            CHECK(rmm_deallocate_aligned(NULL, p, 1000, 64 * KIB, stream));
        }

        /* the chunk is finite: a request that does not fit fails and changes nothing */
        {
            rmm_device_buffer too_big;
            st = rmm_device_buffer_create(&too_big, 2 * MIB, stream, NULL);
            EXPECT(st == RMM_ERROR_OUT_OF_MEMORY && too_big.data == NULL);
            printf("  2 MiB buffer: %s\n", rmm_status_string(st));
        }
        /* and another stream is refused, as it could not safely reuse what this one freed */
        {
            void *p = NULL;
            st = rmm_allocate(NULL, &p, 256, other);
            EXPECT(st == RMM_ERROR_INVALID_ARGUMENT && p == NULL);
            printf("  an allocation on another stream: %s\n", rmm_status_string(st));
        }

        CHECK(rmm_device_buffer_release(&a));
        CHECK(rmm_device_buffer_release(&b));
        CHECK(rmm_device_buffer_release(&c));
        EXPECT(r->live == 0 && r->offset == 0);
        printf("  all released: offset back to 0 (%zu reset(s)), high water %zu bytes\n", r->resets, r->high_water);
    }
    EXPECT(rmm_set_current_device_resource(previous) == bump);
    rmm_resource_destroy(bump); /* gives the chunk back to cuda */

    /* ---- the callback resource ---- */
    {
        callback_state state;
        rmm_device_uvector v;
        const int answer = 42; /* the source of an async copy: unchanged until the stream is synchronized */
        int value = 0;
        memset(&state, 0, sizeof state);
        state.upstream = cuda;
        CHECK(rmm_callback_resource_create(&callback, forward_allocate, forward_deallocate, &state));
        CHECK(rmm_device_uvector_create(&v, sizeof(int), 5000, stream, callback));
        CHECK(rmm_device_uvector_set_element_async(&v, 4999, &answer, stream));
        CHECK(rmm_device_uvector_get_element(&v, 4999, &value, stream)); /* also waits for the set */
        EXPECT(value == 42);
        CHECK(rmm_device_uvector_resize(&v, 10000, stream)); /* reallocates through the callbacks */
        CHECK(rmm_device_uvector_get_element(&v, 4999, &value, stream));
        EXPECT(value == 42);
        printf("callback resource: uvector<int> of %zu, [4999] = %d after a resize; %zu allocate and %zu deallocate calls, %zu bytes live\n",
               v.size, value, state.allocations, state.deallocations, state.live_bytes);
        CHECK(rmm_device_uvector_release(&v));
        EXPECT(state.live_bytes == 0 && state.allocations == state.deallocations);
        rmm_resource_destroy(callback);
    }

    CHECK(rmm_stream_synchronize(stream));
    CHECK(rmm_stream_destroy(other));
    CHECK(rmm_stream_destroy(stream));
    rmm_resource_destroy(cuda);
    printf("04_custom_resource: ok\n");
    return 0;
}
