/* 02_pool.c - a pool resource: fast stream-ordered sub-allocation from memory taken in chunks.

   Builds a pool over cudaMalloc, makes it the current device resource (so rmm_allocate(NULL, ...)
   and every container created with mr NULL use it), allocates a mix of sizes, and prints
   rmm_pool_get_info before and after: how much the pool holds from upstream, how much is handed
   out, how fragmented the free space is. Freeing does not give memory back to cudaMalloc;
   rmm_pool_trim does, for every wholly free upstream chunk. Then the two growth policies side by
   side on the same workload: GEOMETRIC (RMM's rule, doubling: few, large chunks, good for steady
   workloads) and ON_DEMAND (grows by the request rounded up to 2 MiB, and before growing past its
   own peak gives wholly free chunks back: it holds little beyond what was live at the peak). Last,
   a pool with a maximum refusing a request with RMM_ERROR_OUT_OF_MEMORY.

   rmm_pool_trim notes what it released in the library's debug log at info level: rmm_log.txt in
   the working directory, or the file named by $RMM_DEBUG_LOG_FILE (rmm_set_log_level changes it).

   Build and run from the repository root:
       make build/examples/host/02_pool && build/examples/host/02_pool
       gcc -std=c99 -O2 examples/02_pool.c -isystem /usr/local/cuda/include \
           -L/usr/local/cuda/lib64 -lcudart -lpthread -o 02_pool && ./02_pool
       nvcc -x cu -O2 -I. examples/02_pool.c -o 02_pool && ./02_pool
*/
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define MIXED 48

static void print_info(const char *when, rmm_resource *pool) {
    rmm_pool_info info;
    CHECK(rmm_pool_get_info(pool, &info));
    printf("  %-28s pool %6.2f MiB in %zu chunk(s), used %6.2f MiB, free %6.2f MiB in %zu block(s), largest %6.2f MiB\n",
           when, (double)info.pool_bytes / (double)MIB, info.upstream_chunks, (double)info.used_bytes / (double)MIB,
           (double)info.free_bytes / (double)MIB, info.free_blocks, (double)info.largest_free_block / (double)MIB);
}

/* Keeps `count` blocks of `bytes` live on the default stream, then frees them all and asks for one
   block of `big_bytes`; prints what the pool holds at each step. */
static void growth_run(rmm_resource *upstream, rmm_pool_growth growth, const char *name) {
    enum { COUNT = 40 };
    rmm_pool_desc desc = rmm_pool_desc_default();
    rmm_resource *pool = NULL;
    rmm_pool_info info;
    void *blocks[COUNT];
    void *big = NULL;
    size_t i, bytes = 1 * MIB, big_bytes = 8 * MIB;

    desc.growth = growth; /* initial_bytes 0: starts empty and grows as needed */
    CHECK(rmm_pool_create(&pool, upstream, &desc));
    for (i = 0; i < COUNT; i++) CHECK(rmm_allocate(pool, &blocks[i], bytes, RMM_STREAM_DEFAULT));
    CHECK(rmm_pool_get_info(pool, &info));
    printf("  %-10s %zu x 1 MiB live: pool %3zu MiB in %2zu chunks", name, (size_t)COUNT, info.pool_bytes / MIB, info.upstream_chunks);
    for (i = 0; i < COUNT; i++) CHECK(rmm_deallocate(pool, blocks[i], bytes, RMM_STREAM_DEFAULT));
    CHECK(rmm_allocate(pool, &big, big_bytes, RMM_STREAM_DEFAULT));
    CHECK(rmm_pool_get_info(pool, &info));
    printf("; then all freed and 8 MiB live: pool %3zu MiB in %2zu chunks\n", info.pool_bytes / MIB, info.upstream_chunks);
    CHECK(rmm_deallocate(pool, big, big_bytes, RMM_STREAM_DEFAULT));
    CHECK(rmm_pool_validate(pool));
    rmm_resource_destroy(pool); /* gives every chunk back to upstream */
}

int main(void) {
    static const size_t sizes[] = {256, 1000, 4 * KIB, 64 * KIB, 1 * MIB, 3 * MIB + 17};
    enum { NSIZES = sizeof sizes / sizeof sizes[0] };
    void *blocks[MIXED];
    size_t block_bytes[MIXED];
    size_t i, released = 0;
    rmm_resource *cuda = NULL, *pool = NULL, *previous = NULL;
    rmm_pool_desc desc = rmm_pool_desc_default();
    rmm_status st;

    /* ---- a pool as the current device resource ---- */
    CHECK(rmm_cuda_resource_create(&cuda));
    desc.initial_bytes = 32 * MIB; /* taken from cudaMalloc now, in one chunk */
    CHECK(rmm_pool_create(&pool, cuda, &desc));
    previous = rmm_set_current_device_resource(pool);
    EXPECT(previous != NULL);
    printf("pool over cudaMalloc, 32 MiB up front, set as the current device resource\n");
    print_info("created:", pool);

    /* Mixed sizes through the current resource (mr NULL). 48 blocks, about 32.5 MiB in all, so the
       pool grows past its first chunk (GEOMETRIC: by at least what it already holds). */
    for (i = 0; i < MIXED; i++) {
        block_bytes[i] = sizes[i % NSIZES];
        CHECK(rmm_allocate(NULL, &blocks[i], block_bytes[i], RMM_STREAM_DEFAULT));
    }
    print_info("48 mixed blocks live:", pool);

    /* Free every other block: the free space is now in many pieces. */
    for (i = 0; i < MIXED; i += 2) CHECK(rmm_deallocate(NULL, blocks[i], block_bytes[i], RMM_STREAM_DEFAULT));
    print_info("every other block freed:", pool);

    /* Free the rest: neighbours coalesce again; the pool keeps its chunks for the next request. */
    for (i = 1; i < MIXED; i += 2) CHECK(rmm_deallocate(NULL, blocks[i], block_bytes[i], RMM_STREAM_DEFAULT));
    print_info("all freed:", pool);
    CHECK(rmm_pool_validate(pool)); /* every invariant of the pool's bookkeeping holds */

    /* Trim gives every wholly free chunk back to cudaMalloc. */
    CHECK(rmm_pool_trim(pool, &released));
    printf("  trim released %zu MiB\n", released / MIB);
    print_info("after trim:", pool);

    /* The pool still works after a trim: it simply grows again. */
    CHECK(rmm_allocate(NULL, &blocks[0], 5 * MIB, RMM_STREAM_DEFAULT));
    print_info("one 5 MiB block after trim:", pool);
    CHECK(rmm_deallocate(NULL, blocks[0], 5 * MIB, RMM_STREAM_DEFAULT));

    /* Restore the previous current resource before destroying the pool. */
    EXPECT(rmm_set_current_device_resource(previous) == pool);
    rmm_resource_destroy(pool);

    /* ---- growth policies on the same workload ---- */
    printf("growth policies (pools start empty):\n");
    growth_run(cuda, RMM_POOL_GROWTH_GEOMETRIC, "GEOMETRIC");
    growth_run(cuda, RMM_POOL_GROWTH_ON_DEMAND, "ON_DEMAND");

    /* ---- a maximum: the pool refuses what would take it past the maximum ---- */
    desc = rmm_pool_desc_default();
    desc.initial_bytes = 4 * MIB;
    desc.maximum_bytes = 16 * MIB;
    CHECK(rmm_pool_create(&pool, cuda, &desc));
    st = rmm_allocate(pool, &blocks[0], 32 * MIB, RMM_STREAM_DEFAULT);
    EXPECT(st == RMM_ERROR_OUT_OF_MEMORY && blocks[0] == NULL);
    printf("pool with a 16 MiB maximum, 32 MiB asked: %s: %s\n", rmm_status_string(st), rmm_last_error());
    CHECK(rmm_allocate(pool, &blocks[0], 8 * MIB, RMM_STREAM_DEFAULT)); /* still usable */
    CHECK(rmm_deallocate(pool, blocks[0], 8 * MIB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);

    rmm_resource_destroy(cuda);
    printf("02_pool: ok\n");
    return 0;
}
