/* 08_multi_stream.c - one pool shared by several threads, each working on its own stream.

   A stream pool (rmm_stream_pool_create) holds a fixed set of streams; each of four threads takes
   one and does all its work there: it creates containers from host data (stream-ordered copies),
   copies them, reads elements back, resizes, and releases, a few hundred times, with sizes from a
   per-thread pseudo-random sequence. All of them allocate from one pool resource. The pool is
   thread-safe and stream-aware: memory freed on one stream is reused at once on that stream, and
   handed to another stream only behind a CUDA event the taker waits on, so no thread ever
   synchronizes with another. rmm_last_error() is per thread, so a failing thread copies its message
   out before it ends. At the end rmm_pool_validate checks every invariant of the pool's
   bookkeeping and rmm_pool_get_info shows that nothing is in use.

   Build and run from the repository root:
       make build/examples/host/08_multi_stream && build/examples/host/08_multi_stream
       gcc -std=c99 -O2 examples/08_multi_stream.c -isystem /usr/local/cuda/include \
           -L/usr/local/cuda/lib64 -lcudart -lpthread -o 08_multi_stream && ./08_multi_stream
       nvcc -x cu -O2 -I. examples/08_multi_stream.c -o 08_multi_stream && ./08_multi_stream
*/
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "common.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RMM_DEVICE_UVECTOR_TYPED(u32, uint32_t)

#define MIB ((size_t)1 << 20)
#define THREADS 4
#define ITERATIONS 300
#define MAX_ELEMENTS 65536

typedef struct worker {
    int index;
    rmm_resource *pool;
    rmm_stream stream;
    /* results */
    rmm_status status;
    int line;            /* where it failed */
    const char *what;
    char message[1024];  /* that thread's rmm_last_error() (at most 1023 bytes) */
    size_t iterations, bytes_allocated, checks;
} worker;

/* In a thread, a failure is recorded (with this thread's rmm_last_error()) and the thread stops. */
#define TRY(w, call)                                                                                 \
    do {                                                                                             \
        rmm_status try_status_ = (call);                                                             \
        if (try_status_ != RMM_SUCCESS) {                                                            \
            (w)->status = try_status_;                                                               \
            (w)->line = __LINE__;                                                                    \
            (w)->what = #call;                                                                       \
            snprintf((w)->message, sizeof (w)->message, "%s", rmm_last_error());                     \
            goto done;                                                                               \
        }                                                                                            \
    } while (0)
#define VERIFY(w, cond)                                                                              \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            (w)->status = RMM_ERROR_UNKNOWN;                                                         \
            (w)->line = __LINE__;                                                                    \
            (w)->what = #cond;                                                                       \
            (w)->message[0] = '\0';                                                                  \
            goto done;                                                                               \
        }                                                                                            \
        (w)->checks++; /* (counted once passed: the summary says "checks passed") */                 \
    } while (0)

static uint32_t next_random(uint32_t *state) { /* xorshift32: deterministic per thread */
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

static void *work(void *arg) {
    worker *w = (worker *)arg;
    uint32_t seed = 0x9E3779B9u * (uint32_t)(w->index + 1);
    uint32_t *host = (uint32_t *)malloc(MAX_ELEMENTS * sizeof(uint32_t));
    rmm_device_buffer buffer, copy;
    rmm_device_uvector vec;
    size_t it, i;
    memset(&buffer, 0, sizeof buffer);
    memset(&copy, 0, sizeof copy);
    memset(&vec, 0, sizeof vec);
    if (!host) {
        w->status = RMM_ERROR_OUT_OF_MEMORY;
        w->line = __LINE__;
        w->what = "malloc";
        return NULL;
    }
    for (it = 0; it < ITERATIONS; it++) {
        size_t n = 1 + next_random(&seed) % MAX_ELEMENTS;
        uint32_t tag = ((uint32_t)w->index << 24) | (uint32_t)it, got = 0;
        for (i = 0; i < n; i++) host[i] = tag + (uint32_t)i;

        /* host -> device on this thread's stream; the copy reads `host` asynchronously, so the
           stream is synchronized before `host` is written again (get_element below does it) */
        TRY(w, rmm_device_buffer_create_from(&buffer, host, n * sizeof(uint32_t), w->stream, w->pool));
        /* device -> device, stream-ordered after the first copy */
        TRY(w, rmm_device_buffer_copy(&copy, &buffer, w->stream, w->pool));
        TRY(w, rmm_device_buffer_release(&buffer)); /* freed on the stream; reusable at once there */

        /* a uvector of uint32_t: element access and a growing resize that keeps the contents */
        TRY(w, rmm_device_uvector_u32_create(&vec, n, w->stream, w->pool));
        TRY(w, rmm_device_uvector_u32_set(&vec, 0, tag, w->stream));
        TRY(w, rmm_device_uvector_u32_set(&vec, n - 1, ~tag, w->stream));
        TRY(w, rmm_device_uvector_resize(&vec, 2 * n, w->stream));
        TRY(w, rmm_device_uvector_u32_get(&vec, n - 1, &got, w->stream));
        VERIFY(w, got == ~tag);
        TRY(w, rmm_device_uvector_u32_get(&vec, 0, &got, w->stream));
        VERIFY(w, got == tag);

        /* the copied buffer still holds what the host sent: look at its last element through a
           borrowed one-element view (rmm.h has no buffer-to-host copy of its own) */
        {
            rmm_device_uvector view = vec;
            view.data = (char *)copy.data + (n - 1) * sizeof(uint32_t);
            view.size = view.capacity = 1;
            TRY(w, rmm_device_uvector_u32_get(&view, 0, &got, w->stream));
            VERIFY(w, got == tag + (uint32_t)(n - 1));
        }

        w->bytes_allocated += n * sizeof(uint32_t) * 2 + 3 * n * sizeof(uint32_t);
        TRY(w, rmm_device_buffer_release(&copy));
        TRY(w, rmm_device_uvector_release(&vec));
        w->iterations++;
    }
done:
    /* whatever is still held goes back (release of an empty container is a no-op) */
    (void)rmm_device_buffer_release(&buffer);
    (void)rmm_device_buffer_release(&copy);
    (void)rmm_device_uvector_release(&vec);
    (void)rmm_stream_synchronize(w->stream);
    free(host);
    return NULL;
}

int main(void) {
    rmm_stream_pool *streams = NULL;
    rmm_resource *cuda = NULL, *pool = NULL;
    rmm_pool_desc desc = rmm_pool_desc_default();
    rmm_pool_info info;
    pthread_t threads[THREADS];
    worker workers[THREADS];
    size_t i, total_bytes = 0, total_checks = 0;
    int failed = 0;

    CHECK(rmm_stream_pool_create(&streams, THREADS));
    CHECK(rmm_cuda_resource_create(&cuda));
    desc.initial_bytes = 16 * MIB;
    CHECK(rmm_pool_create(&pool, cuda, &desc));
    printf("%d threads, one pool (16 MiB up front), a stream pool of %zu streams\n", THREADS, rmm_stream_pool_size(streams));

    memset(workers, 0, sizeof workers);
    for (i = 0; i < THREADS; i++) {
        workers[i].index = (int)i;
        workers[i].pool = pool;
        workers[i].stream = rmm_stream_pool_get_at(streams, i); /* one stream per thread */
        if (pthread_create(&threads[i], NULL, work, &workers[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    for (i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);

    for (i = 0; i < THREADS; i++) {
        const worker *w = &workers[i];
        if (w->status != RMM_SUCCESS) {
            fprintf(stderr, "thread %d failed at line %d (%s) with %s: %s\n", w->index, w->line, w->what,
                    rmm_status_string(w->status), w->message);
            failed = 1;
        }
        printf("  thread %d: %zu iterations, %.1f MiB allocated, %zu checks passed\n", w->index, w->iterations,
               (double)w->bytes_allocated / (double)MIB, w->checks);
        total_bytes += w->bytes_allocated;
        total_checks += w->checks;
    }

    CHECK(rmm_pool_validate(pool)); /* CORRUPTION with a message if any invariant were broken */
    CHECK(rmm_pool_get_info(pool, &info));
    printf("pool after all threads: %.1f MiB held (peak %.1f MiB) in %zu chunk(s), %zu bytes in use, %zu free block(s); %.1f MiB allocated in all\n",
           (double)info.pool_bytes / (double)MIB, (double)info.peak_pool_bytes / (double)MIB, info.upstream_chunks,
           info.used_bytes, info.free_blocks, (double)total_bytes / (double)MIB);
    EXPECT(failed || info.used_bytes == 0);

    rmm_resource_destroy(pool); /* waits for the streams' pending work, gives the chunks back */
    rmm_resource_destroy(cuda);
    rmm_stream_pool_destroy(streams);
    if (failed) return 1;
    printf("08_multi_stream: ok (%zu checks)\n", total_checks);
    return 0;
}
