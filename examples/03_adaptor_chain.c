/* 03_adaptor_chain.c - stacking resources: logging over statistics over a pool over cudaMalloc.

   The chain from RMM's own documentation:

       logging -> statistics -> pool -> cuda
       (a CSV row per call)  (bytes and counts)  (sub-allocation)  (cudaMalloc)

   Each adaptor wraps the resource below it and does not own it, so the chain is built bottom up
   and destroyed top down. The top of the chain is made the current device resource, so containers
   created with mr NULL go through all four layers. A statistics scope (rmm_statistics_push / pop)
   measures one phase of the program on its own: its peak and total, folded into the outer counters
   when it ends. At the end the program prints the statistics, closes the log and shows its first
   rows: the CSV format RMM's logging_resource_adaptor writes (Thread,Time,Action,Pointer,Size,
   Stream), which RMM's replay benchmark reads.

   The log goes to argv[1], or to rmm_example_log.csv in $TMPDIR (default /tmp).

   Build and run from the repository root:
       make build/examples/host/03_adaptor_chain && build/examples/host/03_adaptor_chain [log.csv]
       gcc -std=c99 -O2 examples/03_adaptor_chain.c -isystem /usr/local/cuda/include \
           -L/usr/local/cuda/lib64 -lcudart -lpthread -o 03_adaptor_chain && ./03_adaptor_chain
       nvcc -x cu -O2 -I. examples/03_adaptor_chain.c -o 03_adaptor_chain && ./03_adaptor_chain
*/
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)
#define BUFFERS 6

static void print_stats(const char *what, const rmm_statistics *s) {
    const double mib = (double)MIB;
    printf("  %-21s MiB: current %6.2f, peak %6.2f, total %6.2f; allocations: current %lld, peak %lld, total %lld\n",
           what, (double)s->bytes.value / mib, (double)s->bytes.peak / mib, (double)s->bytes.total / mib,
           (long long)s->count.value, (long long)s->count.peak, (long long)s->count.total);
}

int main(int argc, char **argv) {
    char default_path[1024];
    const char *log_path;
    rmm_resource *cuda = NULL, *pool = NULL, *stats = NULL, *logging = NULL, *previous = NULL;
    rmm_pool_desc desc = rmm_pool_desc_default();
    rmm_device_buffer buffers[BUFFERS];
    rmm_statistics s, scope;
    rmm_stream stream = RMM_STREAM_DEFAULT;
    size_t i;

    if (argc > 1) {
        log_path = argv[1];
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(default_path, sizeof default_path, "%s/rmm_example_log.csv", tmp && *tmp ? tmp : "/tmp");
        log_path = default_path;
    }

    /* ---- build the chain bottom up ---- */
    CHECK(rmm_cuda_resource_create(&cuda));
    desc.initial_bytes = 64 * MIB;
    CHECK(rmm_pool_create(&pool, cuda, &desc));
    CHECK(rmm_statistics_adaptor_create(&stats, pool));
    CHECK(rmm_logging_adaptor_create(&logging, stats, log_path, false)); /* buffered; flushed at destroy */
    previous = rmm_set_current_device_resource(logging);
    EXPECT(previous != NULL);
    printf("chain: %s -> %s -> %s -> %s, current device resource; log: %s\n", rmm_resource_type_name(logging),
           rmm_resource_type_name(stats), rmm_resource_type_name(pool), rmm_resource_type_name(cuda), log_path);

    CHECK(rmm_stream_create(&stream));

    /* ---- phase 1: long-lived buffers through the current resource ---- */
    for (i = 0; i < BUFFERS; i++) CHECK(rmm_device_buffer_create(&buffers[i], (i + 1) * MIB, stream, NULL));
    CHECK(rmm_statistics_get(stats, &s));
    print_stats("after 6 buffers:", &s);
    EXPECT(s.bytes.value == (long long)(21 * MIB) && s.count.value == BUFFERS);

    /* ---- phase 2: temporaries, measured in a scope of their own ---- */
    CHECK(rmm_statistics_push(stats));
    {
        rmm_device_uvector tmp;
        void *scratch = NULL;
        size_t round;
        for (round = 0; round < 4; round++) {
            CHECK(rmm_device_uvector_create(&tmp, sizeof(float), 1000000, stream, NULL)); /* ~3.8 MiB */
            CHECK(rmm_allocate(NULL, &scratch, 2 * MIB, stream));
            CHECK(rmm_deallocate(NULL, scratch, 2 * MIB, stream));
            CHECK(rmm_device_uvector_release(&tmp));
        }
    }
    CHECK(rmm_statistics_pop(stats, &scope)); /* the scope's own counters: just the temporaries */
    EXPECT(scope.bytes.value == 0 && scope.count.total == 8);
    print_stats("scope popped:", &scope);
    CHECK(rmm_statistics_get(stats, &s)); /* the outer scope, with the inner one folded in */
    print_stats("outer after the pop:", &s);
    /* outer peak = what was live when the scope began + the scope's own peak */
    EXPECT(s.bytes.peak == (long long)(21 * MIB) + scope.bytes.peak);

    /* ---- free everything ---- */
    for (i = 0; i < BUFFERS; i++) CHECK(rmm_device_buffer_release(&buffers[i]));
    CHECK(rmm_stream_synchronize(stream));
    CHECK(rmm_statistics_get(stats, &s));
    print_stats("at the end:", &s);
    EXPECT(s.bytes.value == 0 && s.count.value == 0);
    {
        rmm_pool_info info;
        CHECK(rmm_pool_get_info(pool, &info));
        printf("  pool: %zu MiB held, peak %zu MiB, %zu bytes in use\n", info.pool_bytes / MIB, info.peak_pool_bytes / MIB,
               info.used_bytes);
    }

    /* ---- tear the chain down top first; destroying the logger closes the file ---- */
    EXPECT(rmm_set_current_device_resource(previous) == logging);
    rmm_resource_destroy(logging);
    rmm_resource_destroy(stats);
    rmm_resource_destroy(pool);
    rmm_resource_destroy(cuda);
    CHECK(rmm_stream_destroy(stream));

    /* ---- what the log holds ---- */
    {
        FILE *f = fopen(log_path, "r");
        char line[256];
        size_t rows = 0;
        if (!f) {
            fprintf(stderr, "cannot reopen %s\n", log_path);
            return 1;
        }
        while (fgets(line, sizeof line, f)) {
            if (rows < 3) printf("  log: %s", line);
            rows++;
        }
        fclose(f);
        /* the header, 6 buffers and 8 temporaries, each allocated and freed */
        EXPECT(rows == 1 + 2 * (BUFFERS + 8));
        printf("  log: %zu rows in %s\n", rows, log_path);
    }
    printf("03_adaptor_chain: ok\n");
    return 0;
}
