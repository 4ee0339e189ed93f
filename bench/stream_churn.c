/* bench/stream_churn.c - streams that come and go: what a stream per request costs a resource.

   Many programs make a stream per batch or per request and destroy it when the work is done, and
   many free a block on another stream than the one it was allocated on (the consumer's). Each
   iteration below makes a stream, allocates 3 blocks of 1-200 KB on it, frees them and destroys
   the stream; the loops differ in where the frees go:
     own       all 3 freed on the iteration's stream
     handoff   2 freed on it; the third is freed in the next iteration on a long-lived stream
     consumer  no stream per iteration: one stream allocates, 2 freed on it, the third freed in the
               next iteration on a long-lived stream (the stream is made once)
     grow4     4 long-lived streams growing a working set (a training warm-up): in round r (of
               iterations / 25, at least 10) each allocates 20 blocks of about min(r + 1, 100) x
               64 KiB and frees them, a third of them on the next stream
     mixed16   16 long-lived streams, 64 live blocks each, 10 x iterations steps: a random stream
               frees a random block of its own and allocates one of 1 B-64 KiB (a quarter of them
               up to 8 MiB), then sets its first 4 KiB on that stream (device work); us per step
   Reported per loop and resource: microseconds per iteration (stream creation and destruction
   included; grow4: per round; mixed16: per step), the free blocks and held bytes at the end (rmm_pool_get_info), and for the virtual
   pool the driver calls it made (page creates, maps, unmaps, device synchronizes; its internal
   counters, as bench/replay reads them). A resource that keeps to the memory it holds shows few
   free blocks and no unmaps; one that drifts through its range moves pages (each move an unmap, a
   map, an access call and a device synchronize).

   usage: stream_churn [--quick] [--iterations N] [--stream created|foreign] [--resource NAME[,NAME..]]
   Default 20000 iterations (--quick: 5000), created streams (rmm_stream_create; --stream foreign:
   every stream, the long-lived one too, from cudaStreamCreateWithFlags), every resource: the
   pool with its defaults, the pool with virtual growth, the arena with its defaults, and
   cudaMallocAsync ("async": rmm_async_resource_create, an owned memory pool that never trims, so
   one indirect call away from the raw call); built by bench/peer/build.sh, also RAPIDS RMM C++'s
   "rmm::pool" (from empty, its geometric growth, as rmm.h's pool), "rmm::arena" (half of the free
   device memory, as rmm.h's arena) and "rmm::async", through rmm_allocate as well.
   Host backend: make bench, then build/bench/host/stream_churn. Prints a table and `csv,` lines. */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "bench_common.h"
#include "peer/peer_resource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_foreign;

static rmm_status make_stream(rmm_stream *s) { return g_foreign ? rmm__stream_create_raw(s, false) : rmm_stream_create(s); }
static rmm_status drop_stream(rmm_stream s) { return g_foreign ? rmm__stream_destroy_raw(s) : rmm_stream_destroy(s); }

/* grow4: 4 streams, each a working set of 20 blocks growing to 6.4 MiB, a third freed across. */
static rmm_status grow4(rmm_resource *mr, long rounds) {
    rmm_stream st[4] = {NULL, NULL, NULL, NULL};
    void *q[4][20];
    size_t n[4][20];
    long r;
    int k, j;
    rmm_status s = RMM_SUCCESS;
    for (k = 0; k < 4 && s == RMM_SUCCESS; k++) s = make_stream(&st[k]);
    for (r = 0; r < rounds && s == RMM_SUCCESS; r++) {
        size_t scale = (size_t)(r < 100 ? r + 1 : 100);
        for (k = 0; k < 4 && s == RMM_SUCCESS; k++)
            for (j = 0; j < 20 && s == RMM_SUCCESS; j++) {
                n[k][j] = scale * 64 * KIB + (size_t)((j * 7919 + k * 104729 + r * 31) % 65536);
                s = rmm_allocate(mr, &q[k][j], n[k][j], st[k]);
                if (s != RMM_SUCCESS) { /* (free what this round made) */
                    int kk, jj;
                    for (kk = 0; kk <= k; kk++)
                        for (jj = 0; jj < (kk < k ? 20 : j); jj++) (void)rmm_deallocate(mr, q[kk][jj], n[kk][jj], st[kk]);
                }
            }
        for (k = 0; k < 4 && s == RMM_SUCCESS; k++)
            for (j = 0; j < 20 && s == RMM_SUCCESS; j++) s = rmm_deallocate(mr, q[k][j], n[k][j], st[(k + (j % 3 == 0)) % 4]);
    }
    for (k = 0; k < 4; k++)
        if (st[k]) {
            if (s == RMM_SUCCESS) s = rmm_stream_synchronize(st[k]);
            (void)drop_stream(st[k]);
        }
    return s;
}

/* mixed16: 16 streams at work, a random block of a random stream replaced per step. */
static rmm_status mixed16(rmm_resource *mr, long steps) {
    enum { NS = 16, W = 64 };
    rmm_stream st[NS];
    void **q = (void **)calloc(NS * W, sizeof *q);
    size_t *n = (size_t *)calloc(NS * W, sizeof *n);
    unsigned long long x = 88172645463325252ull;
    long i;
    int k;
    rmm_status s = q && n ? RMM_SUCCESS : rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "stream_churn: out of host memory");
    memset(st, 0, sizeof st);
    for (k = 0; k < NS && s == RMM_SUCCESS; k++) s = make_stream(&st[k]);
    for (i = 0; i < steps && s == RMM_SUCCESS; i++) {
        int a, j;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a = (int)(x % NS), j = (int)((x >> 8) % W);
        if (q[a * W + j] && (s = rmm_deallocate(mr, q[a * W + j], n[a * W + j], st[a])) != RMM_SUCCESS) break;
        q[a * W + j] = NULL;
        n[a * W + j] = (x >> 20) % 4 == 0 ? (size_t)((x >> 24) % (8 * MIB)) + 1 : (size_t)((x >> 24) % (64 * KIB)) + 1;
        if ((s = rmm_allocate(mr, &q[a * W + j], n[a * W + j], st[a])) != RMM_SUCCESS) break;
        s = rmm_memset_async(q[a * W + j], 1, n[a * W + j] < 4096 ? n[a * W + j] : 4096, st[a]);
    }
    for (k = 0; k < NS * W && q && n; k++)
        if (q[k]) (void)rmm_deallocate(mr, q[k], n[k], st[k / W]);
    for (k = 0; k < NS; k++)
        if (st[k]) {
            if (s == RMM_SUCCESS) s = rmm_stream_synchronize(st[k]);
            (void)drop_stream(st[k]);
        }
    free(q);
    free(n);
    return s;
}

static rmm_status make_resource(const char *name, rmm_resource **mr) {
    if (!strcmp(name, "pool")) return rmm_pool_create(mr, rmm_get_current_device_resource(), NULL);
    if (!strcmp(name, "pool-virtual")) {
        rmm_pool_desc d = rmm_pool_desc_default();
        d.growth = RMM_POOL_GROWTH_VIRTUAL;
        return rmm_pool_create(mr, NULL, &d);
    }
    if (!strcmp(name, "arena")) return rmm_arena_create(mr, rmm_get_current_device_resource(), NULL);
    if (!strcmp(name, "async")) return rmm_async_resource_create(mr, NULL);
#if defined(RMM_BENCH_PEER)
    if (peer_is(name)) { /* configured as the rmm.h row of the same name */
        size_t free_mem = 0, total = 0;
        char why[256] = "";
        rmm_status st = rmm_available_device_memory(&free_mem, &total);
        if (st == RMM_SUCCESS && (st = peer_make(name, 0, free_mem / 2 / 256 * 256, mr, why, sizeof why)) != RMM_SUCCESS) {
            if (why[0]) (void)rmm_set_last_error(st, "%s", why);
            rmm_peer_drop();
        }
        return st;
    }
#endif
    return RMM__INVALID("stream_churn: unknown resource %s", name);
}

/* One loop on a fresh resource; 0 on a failure (printed). */
static int run(const char *resource, const char *loop, long iterations) {
    rmm_resource *mr = NULL;
    rmm_stream longlived = NULL, same = NULL;
    void *kept = NULL;
    size_t kept_bytes = 0;
    long i;
    uint64_t t0, t1;
    rmm_status st;
    int own = !strcmp(loop, "own"), consumer = !strcmp(loop, "consumer"), growing = !strcmp(loop, "grow4"), mixed = !strcmp(loop, "mixed16");
    char extra[256] = "-";
    if ((st = make_resource(resource, &mr)) != RMM_SUCCESS) {
        printf("%-13s %-9s skipped: %s\n", resource, loop, rmm_last_error());
        return st == RMM_ERROR_NOT_SUPPORTED; /* (no virtual memory management here) */
    }
    if ((st = make_stream(&longlived)) != RMM_SUCCESS || (consumer && (st = make_stream(&same)) != RMM_SUCCESS)) goto fail;
    t0 = now_ns();
    if (growing) {
        long rounds = iterations / 25 < 10 ? 10 : iterations / 25;
        if ((st = grow4(mr, rounds)) != RMM_SUCCESS) goto fail;
        iterations = rounds; /* (us per round below) */
    } else if (mixed) {
        if ((st = mixed16(mr, iterations * 10)) != RMM_SUCCESS) goto fail;
        iterations *= 10; /* (us per step below) */
    }
    for (i = 0; i < iterations && !growing && !mixed; i++) {
        rmm_stream s = same;
        void *q[3];
        size_t n[3];
        int k;
        if (!consumer && (st = make_stream(&s)) != RMM_SUCCESS) goto fail;
        for (k = 0; k < 3; k++) {
            n[k] = (size_t)(1000 + (i * 131 + k * 7777) % 200000);
            if ((st = rmm_allocate(mr, &q[k], n[k], s)) != RMM_SUCCESS) goto fail;
        }
        for (k = 0; k < (own ? 3 : 2); k++)
            if ((st = rmm_deallocate(mr, q[k], n[k], s)) != RMM_SUCCESS) goto fail;
        if (!own) {
            if (kept && (st = rmm_deallocate(mr, kept, kept_bytes, longlived)) != RMM_SUCCESS) goto fail;
            kept = q[2];
            kept_bytes = n[2];
        }
        if (!consumer && (st = drop_stream(s)) != RMM_SUCCESS) goto fail;
    }
    t1 = now_ns();
    if (kept && (st = rmm_deallocate(mr, kept, kept_bytes, longlived)) != RMM_SUCCESS) goto fail;
    kept = NULL;
    if ((st = rmm_stream_synchronize(longlived)) != RMM_SUCCESS) goto fail;
#if defined(RMM_BENCH_PEER)
    if (peer_is(resource) && strcmp(resource, "rmm::async") != 0)
        fmt(extra, sizeof extra, "%.1f MiB held at the peak (from cudaMalloc)", (double)rmm_peer_upstream_peak() / (double)MIB);
#endif
#ifndef RMM_BACKEND_HOST
    if (!strcmp(resource, "async")) {
        rmm_mem_pool pool;
        cuuint64_t high = 0;
        if (rmm_async_resource_get_pool(mr, &pool) == RMM_SUCCESS && cudaMemPoolGetAttribute((cudaMemPool_t)pool, cudaMemPoolAttrReservedMemHigh, &high) == cudaSuccess)
            fmt(extra, sizeof extra, "%.1f MiB reserved at the peak", (double)high / (double)MIB);
    }
#endif
    if (strncmp(resource, "pool", 4) == 0) {
        rmm_pool_info info;
        if ((st = rmm_pool_get_info(mr, &info)) != RMM_SUCCESS) goto fail;
        if (!strcmp(resource, "pool-virtual")) {
            const rmm__pool_vm *vm = &((const rmm__pool *)mr)->vm; /* the driver calls it made (internal counters) */
            fmt(extra, sizeof extra, "%zu free blocks, %.1f MiB held (peak %.1f); %llu creates, %llu maps, %llu unmaps, %llu synchronizes", info.free_blocks,
                (double)info.pool_bytes / (double)MIB, (double)info.peak_pool_bytes / (double)MIB, (unsigned long long)vm->creates, (unsigned long long)vm->maps, (unsigned long long)vm->unmaps,
                (unsigned long long)vm->syncs);
        } else {
            fmt(extra, sizeof extra, "%zu free blocks, %.1f MiB held (peak %.1f)", info.free_blocks, (double)info.pool_bytes / (double)MIB,
                (double)info.peak_pool_bytes / (double)MIB);
        }
    }
    printf("%-13s %-9s %-8s %10.2f  %s\n", resource, loop, g_foreign ? "foreign" : "created", (double)(t1 - t0) / 1e3 / (double)iterations, extra);
    printf("csv,%s,%s,%s,%ld,%.3f,\"%s\"\n", resource, loop, g_foreign ? "foreign" : "created", iterations, (double)(t1 - t0) / 1e3 / (double)iterations, extra);
    rmm_resource_destroy(mr);
#if defined(RMM_BENCH_PEER)
    if (peer_is(resource)) rmm_peer_drop();
#endif
    if (same) (void)drop_stream(same);
    (void)drop_stream(longlived);
    return 1;
fail:
    printf("%s %s: failed: %s\n", resource, loop, rmm_last_error());
    if (kept) (void)rmm_deallocate(mr, kept, kept_bytes, longlived);
    rmm_resource_destroy(mr);
#if defined(RMM_BENCH_PEER)
    if (peer_is(resource)) rmm_peer_drop();
#endif
    if (same) (void)drop_stream(same);
    if (longlived) (void)drop_stream(longlived);
    return 0;
}

int main(int argc, char **argv) {
    static const char *const names[] = {"pool", "pool-virtual", "arena", "async"
#if defined(RMM_BENCH_PEER)
                                        , "rmm::pool", "rmm::arena", "rmm::async"
#endif
    };
    const char *resources = NULL, *loops[5] = {"own", "handoff", "consumer", "grow4", "mixed16"};
    enum { NNAMES = (int)(sizeof names / sizeof names[0]) };
    long iterations = 20000;
    int i, k, ok = 1, any = 0;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) iterations = 5000;
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atol(argv[++i]);
        else if (!strcmp(argv[i], "--resource") && i + 1 < argc) resources = argv[++i];
        else if (!strcmp(argv[i], "--stream") && i + 1 < argc && (!strcmp(argv[i + 1], "created") || !strcmp(argv[i + 1], "foreign")))
            g_foreign = !strcmp(argv[++i], "foreign");
        else {
            fprintf(stderr, "usage: %s [--quick] [--iterations N] [--stream created|foreign] [--resource NAME[,NAME..]]\n  resources:", argv[0]);
            for (k = 0; k < NNAMES; k++) fprintf(stderr, " %s", names[k]);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    for (k = 0; k < NNAMES; k++) any |= name_selected(names[k], resources, 0);
    if (!any) {
        fprintf(stderr, "stream_churn: --resource names none of");
        for (k = 0; k < NNAMES; k++) fprintf(stderr, " %s", names[k]);
        fprintf(stderr, "\n");
        return 2;
    }
    if (iterations < 1) {
        fprintf(stderr, "stream_churn: --iterations must be at least 1\n");
        return 2;
    }
    if (!have_device("stream_churn")) return 2;
    print_machine("streams are simulated; driver calls are counted, not made");
#if defined(RMM_BENCH_PEER)
    printf("# peer: %s\n", rmm_peer_version());
#endif
    printf("# %ld iterations a loop (grow4: %ld rounds; mixed16: %ld steps), each on a fresh resource\n", iterations,
           iterations / 25 < 10 ? 10 : iterations / 25, iterations * 10);
    printf("%-13s %-9s %-8s %10s  %s\n", "resource", "loop", "streams", "us/iter", "state at the end");
    for (i = 0; i < 5; i++)
        for (k = 0; k < NNAMES; k++)
            if (name_selected(names[k], resources, 0) && !run(names[k], loops[i], iterations)) ok = 0;
    return ok ? 0 : 1;
}
