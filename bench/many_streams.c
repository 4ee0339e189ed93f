/* bench/many_streams.c - many live streams: what a stream costs a resource.

   A program that makes a stream per request, or a server with thousands of client streams, gives
   each stream-ordered resource one state per stream. This benchmark makes N live streams, then
   allocates 256 bytes on each and keeps it (each stream's first use makes its state), then frees
   each block on its stream, then allocates and frees once more on each. It reports per stream the
   time of each pass and the host memory the library's bookkeeping grew by in the first pass
   (counted through RMM_SYS_MALLOC, so exactly the library's own allocations: the state, the
   block's record, the maps). Every stream stays alive to the end: nothing can be retired, so this
   is the cost of live states.

   Streams: --stream created (rmm_stream_create, the default) or foreign (made by the CUDA runtime
   directly, as PyTorch and CuPy do). Resources: --resource pool,arena (default both).
   usage: many_streams [--quick] [--counts N,N,...] [--stream created|foreign] [--resource pool,arena]
   Host backend: make bench, then build/bench/host/many_streams. Prints a table, one row per N. */
#define _POSIX_C_SOURCE 200809L /* rmm.h would set it, but the counting allocator's headers come first */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

/* the library's own host allocations, counted (the bookkeeping a stream state costs) */
static size_t g_live_bytes;
static void *counted_malloc(size_t n) {
    size_t *p = (size_t *)malloc(n + 16);
    if (!p) return NULL;
    p[0] = n;
    g_live_bytes += n;
    return (char *)p + 16;
}
static void counted_free(void *q) {
    size_t *p;
    if (!q) return;
    p = (size_t *)(void *)((char *)q - 16);
    g_live_bytes -= p[0];
    free(p);
}
static void *counted_realloc(void *q, size_t n) {
    size_t *p, old;
    if (!q) return counted_malloc(n);
    p = (size_t *)(void *)((char *)q - 16);
    old = p[0];
    p = (size_t *)realloc(p, n + 16);
    if (!p) return NULL;
    g_live_bytes = g_live_bytes - old + n;
    p[0] = n;
    return (char *)p + 16;
}
#define RMM_SYS_MALLOC(n) counted_malloc(n)
#define RMM_SYS_REALLOC(p, n) counted_realloc(p, n)
#define RMM_SYS_FREE(p) counted_free(p)
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "bench_common.h"

static int g_foreign;

static rmm_status make_stream(rmm_stream *s) { return g_foreign ? rmm__stream_create_raw(s, false) : rmm_stream_create(s); }
static void drop_stream(rmm_stream s) {
    if (g_foreign) (void)rmm__stream_destroy_raw(s);
    else (void)rmm_stream_destroy(s);
}

/* One row: N streams, one allocate+free each (first use), then again (state exists). */
static int run(const char *resource, size_t n) {
    rmm_resource *mr = NULL;
    rmm_stream *streams = (rmm_stream *)malloc(n * sizeof *streams);
    size_t i, made = 0, before, grown;
    void **ptrs = NULL;
    uint64_t t0, t1, t2, t3;
    rmm_status st = RMM_SUCCESS;
    int ok = 1;
    if (!streams) return 0;
    if (!strcmp(resource, "pool")) {
        st = rmm_pool_create(&mr, rmm_get_current_device_resource(), NULL); /* the defaults: starts empty, grows */
    } else {
        rmm_arena_desc d = rmm_arena_desc_default(); /* each live stream holds a superblock of its own */
        d.superblock_bytes = 64 * KIB;
        d.arena_bytes = (n + 64) * d.superblock_bytes;
        st = rmm_arena_create(&mr, rmm_get_current_device_resource(), &d);
    }
    if (st == RMM_ERROR_OUT_OF_MEMORY) { /* an arena for n streams is bigger than the device (or the host backend's capacity) */
        printf("%-6s %-8s %8zu skipped: the arena (a superblock per stream) does not fit: %s\n", resource, g_foreign ? "foreign" : "created", n,
               rmm_last_error());
        free(streams);
        return 1;
    }
    if (st != RMM_SUCCESS) {
        printf("%s: create failed: %s\n", resource, rmm_last_error());
        free(streams);
        return 0;
    }
    for (made = 0; made < n; made++)
        if (make_stream(&streams[made]) != RMM_SUCCESS) break;
    if (made < n) {
        printf("%s: could only make %zu streams: %s\n", resource, made, rmm_last_error());
        ok = 0;
        goto done;
    }
    ptrs = (void **)calloc(n, sizeof *ptrs);
    if (!ptrs) {
        ok = 0;
        goto done;
    }
    before = g_live_bytes;
    t0 = now_ns();
    for (i = 0; i < n && st == RMM_SUCCESS; i++) st = rmm_allocate(mr, &ptrs[i], 256, streams[i]); /* first use: a state each */
    t1 = now_ns();
    grown = g_live_bytes - before;
    for (i = 0; i < n && st == RMM_SUCCESS; i++) st = rmm_deallocate(mr, ptrs[i], 256, streams[i]);
    t2 = now_ns();
    for (i = 0; i < n && st == RMM_SUCCESS; i++) {
        void *q = NULL;
        st = rmm_allocate(mr, &q, 256, streams[i]);
        if (st == RMM_SUCCESS) st = rmm_deallocate(mr, q, 256, streams[i]);
    }
    t3 = now_ns();
    if (st != RMM_SUCCESS) {
        printf("%s: allocate/free failed: %s\n", resource, rmm_last_error());
        ok = 0;
        goto done;
    }
    printf("%-6s %-8s %8zu %10.3f %10.0f %10.0f %10.0f %12.0f\n", resource, g_foreign ? "foreign" : "created", n, (double)(t1 - t0) / 1e9,
           (double)(t1 - t0) / (double)n, (double)(t2 - t1) / (double)n, (double)(t3 - t2) / (double)n, (double)grown / (double)n);
done:
    rmm_resource_destroy(mr);
    for (i = 0; i < made; i++) drop_stream(streams[i]);
    free(ptrs);
    free(streams);
    return ok;
}

int main(int argc, char **argv) {
    const char *counts = "5000,10000,20000,40000,100000", *resources = "pool,arena";
    const char *p;
    int i, ok = 1;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) counts = "5000,20000";
        else if (!strcmp(argv[i], "--counts") && i + 1 < argc) counts = argv[++i];
        else if (!strcmp(argv[i], "--resource") && i + 1 < argc) resources = argv[++i];
        else if (!strcmp(argv[i], "--stream") && i + 1 < argc && (!strcmp(argv[i + 1], "created") || !strcmp(argv[i + 1], "foreign")))
            g_foreign = !strcmp(argv[++i], "foreign");
        else {
            printf("usage: %s [--quick] [--counts N,N,...] [--stream created|foreign] [--resource pool,arena]\n", argv[0]);
            return 2;
        }
    }
    print_machine("host backend: streams and the device are simulated on the CPU");
    printf("many live streams: each allocates 256 bytes and keeps it (its first use: alloc_s in all, alloc_ns each),\n"
           "then each frees its block on its stream (free_ns), then allocates and frees once more (again_ns);\n"
           "host_B/strm: the library's host bookkeeping grown per stream by the first pass (state, block record, maps)\n");
    printf("%-6s %-8s %8s %10s %10s %10s %10s %12s\n", "mr", "stream", "streams", "alloc_s", "alloc_ns", "free_ns", "again_ns", "host_B/strm");
    for (p = resources; *p;) {
        const char *end = strchr(p, ',');
        char name[16];
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *c;
        if (len >= sizeof name) len = sizeof name - 1;
        memcpy(name, p, len);
        name[len] = 0;
        for (c = counts; *c;) {
            char *next;
            unsigned long long n = strtoull(c, &next, 10);
            if (n > 0) ok &= run(name, (size_t)n);
            c = *next == ',' ? next + 1 : next;
            if (next == c && *c != ',') break;
        }
        p += len + (end ? 1 : 0);
    }
    return ok ? 0 : 1;
}
