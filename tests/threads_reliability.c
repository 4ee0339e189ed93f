/* Threaded reliability tests, run under TSan as well: statistics scopes pushed and popped while
   other threads allocate (every allocation counts in exactly one scope), and streams that come and
   go on many threads over one pool, one fixed-size resource and one arena (per-stream state stays
   bounded, nothing overlaps, every pattern survives). */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "harness.h"
#include "blocks.h"
#include <pthread.h>

#define THREADS 8

typedef struct stats_arg {
    rmm_resource *mr;
    int iterations;
    long long allocations;
    int failures;
} stats_arg;
static int stats_stop;
static void *stats_worker(void *p) {
    stats_arg *a = (stats_arg *)p;
    void *live[4] = {NULL, NULL, NULL, NULL};
    int i;
    for (i = 0; i < a->iterations; i++) {
        int k = i % 4;
        if (live[k] && rmm_deallocate(a->mr, live[k], 1000 + (size_t)k, RMM_STREAM_DEFAULT) != RMM_SUCCESS) a->failures++;
        live[k] = NULL;
        if (rmm_allocate(a->mr, &live[k], 1000 + (size_t)k, RMM_STREAM_DEFAULT) != RMM_SUCCESS) a->failures++;
        else a->allocations++;
    }
    for (i = 0; i < 4; i++)
        if (live[i] && rmm_deallocate(a->mr, live[i], 1000 + (size_t)i, RMM_STREAM_DEFAULT) != RMM_SUCCESS) a->failures++;
    return NULL;
}
/* Before the fix, pop folded the popped scope with plain reads and writes racing the atomic adds
   of allocations, and an update that entered the scope being popped was lost: about 20% of counts
   were lost in such a run. */
TEST(statistics_push_and_pop_lose_no_counts) {
    rmm_resource *pool = NULL, *stats = NULL;
    stats_arg args[THREADS];
    pthread_t threads[THREADS];
    rmm_statistics s;
    long long allocations = 0;
    int i, pops = 0, failures = 0;
    NEED_GPU();
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
    CHECK_OK(rmm_statistics_adaptor_create(&stats, pool));
    __atomic_store_n(&stats_stop, 0, __ATOMIC_RELAXED);
    for (i = 0; i < THREADS; i++) {
        args[i].mr = stats;
        args[i].iterations = 20000;
        args[i].allocations = 0;
        args[i].failures = 0;
        CHECK(pthread_create(&threads[i], NULL, stats_worker, &args[i]) == 0);
    }
    for (i = 0; i < 2000; i++) { /* scopes come and go while the workers count */
        if (rmm_statistics_push(stats) != RMM_SUCCESS) failures++;
        if (rmm_statistics_push(stats) != RMM_SUCCESS) failures++;
        if (rmm_statistics_pop(stats, NULL) != RMM_SUCCESS) failures++;
        if (rmm_statistics_pop(stats, NULL) != RMM_SUCCESS) failures++;
        pops += 2;
    }
    for (i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        allocations += args[i].allocations;
        failures += args[i].failures;
    }
    CHECK(failures == 0);
    CHECK_OK(rmm_statistics_get(stats, &s));
    printf("  %lld allocations over %d pops: outer scope count total %lld, value %lld, bytes %lld\n", allocations, pops,
           (long long)s.count.total, (long long)s.count.value, (long long)s.bytes.value);
    CHECK(s.count.total == allocations);
    CHECK(s.count.value == 0 && s.bytes.value == 0);
    rmm_resource_destroy(stats);
    rmm_resource_destroy(pool);
}

typedef struct churn_arg {
    rmm_resource *pool, *fixed, *arena;
    int iterations, failures;
    unsigned seed;
} churn_arg;
static void *churn_worker(void *p) {
    churn_arg *a = (churn_arg *)p;
    int i, k;
    for (i = 0; i < a->iterations; i++) {
        rmm_stream s;
        void *blocks[3] = {NULL, NULL, NULL};
        size_t sizes[3];
        rmm_resource *mrs[3];
        a->seed = a->seed * 1103515245u + 12345u;
        sizes[0] = 256 + (a->seed >> 8) % 20000;
        sizes[1] = 1000;
        sizes[2] = 256 + (a->seed >> 12) % 60000;
        mrs[0] = a->pool;
        mrs[1] = a->fixed;
        mrs[2] = a->arena;
        if (rmm_stream_create(&s) != RMM_SUCCESS) {
            a->failures++;
            continue;
        }
        for (k = 0; k < 3; k++) {
            if (rmm_allocate(mrs[k], &blocks[k], sizes[k], s) != RMM_SUCCESS || !fill(blocks[k], sizes[k], (unsigned char)(k + 1), s)) a->failures++;
        }
        for (k = 0; k < 3; k++) {
            if (blocks[k] && !check_block(blocks[k], sizes[k], (unsigned char)(k + 1), s, 0)) a->failures++;
            if (blocks[k] && rmm_deallocate(mrs[k], blocks[k], sizes[k], s) != RMM_SUCCESS) a->failures++;
        }
        if (rmm_stream_destroy(s) != RMM_SUCCESS) a->failures++;
    }
    return NULL;
}
TEST(streams_come_and_go_on_many_threads) {
    rmm_resource *pool = NULL, *fixed = NULL, *arena = NULL;
    rmm_arena_desc ad = rmm_arena_desc_default();
    rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
    rmm_pool_info info;
    churn_arg args[THREADS];
    pthread_t threads[THREADS];
    int i, failures = 0;
    NEED_GPU();
    ad.arena_bytes = 256 << 20;
    fd.block_bytes = 1024;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
    CHECK_OK(rmm_fixed_size_create(&fixed, rmm_get_current_device_resource(), &fd));
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &ad));
    for (i = 0; i < THREADS; i++) {
        args[i].pool = pool;
        args[i].fixed = fixed;
        args[i].arena = arena;
        args[i].iterations = 400;
        args[i].failures = 0;
        args[i].seed = (unsigned)(i * 7919 + 1);
        CHECK(pthread_create(&threads[i], NULL, churn_worker, &args[i]) == 0);
    }
    for (i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        failures += args[i].failures;
    }
    CHECK(failures == 0);
    CHECK_OK(rmm_pool_get_info(pool, &info));
    printf("  %d streams: pool %zu, fixed-size %zu, arena %zu stream states left\n", THREADS * 400, info.stream_states,
           ((rmm__fixed *)fixed)->so.count, ((rmm__arena *)arena)->so.count);
    CHECK(info.stream_states <= 64 && ((rmm__fixed *)fixed)->so.count <= 64 && ((rmm__arena *)arena)->so.count <= 64);
    CHECK_OK(rmm_pool_validate(pool));
    CHECK_OK(rmm_resource_validate(fixed));
    CHECK_OK(rmm_resource_validate(arena));
    rmm_resource_destroy(arena);
    rmm_resource_destroy(fixed);
    rmm_resource_destroy(pool);
}

/* rmm_resource_awaits_capture (and rmm_resource_destroy's check) walks the resources of the
   deferred frees while another thread ends its capture and destroys the resource whose free it
   has just made: the walk holds the graph lock, so no resource on its way goes meanwhile (a red
   team's find: the walk ran after the lock, on a destroyed statistics adaptor; ASan and TSan). */
static rmm_resource *walk_base, *walk_unrelated;
static rmm_graph_pool *walk_gp1;
static rmm_stream walk_s1;
static int walk_go, walk_stop;
static void *walk_churn(void *arg) {
    int i;
    (void)arg;
    while (!__atomic_load_n(&walk_go, __ATOMIC_ACQUIRE)) {}
    for (i = 0; i < 1000; i++) {
        rmm_resource *r = NULL;
        void *p = NULL;
        if (rmm_statistics_adaptor_create(&r, walk_base) != RMM_SUCCESS) break;
        (void)rmm_allocate(r, &p, 256, walk_s1);
        (void)rmm_capture_begin(walk_gp1, walk_s1);
        (void)rmm_deallocate(r, p, 256, walk_s1); /* deferred */
        (void)rmm_capture_end(walk_gp1, walk_s1); /* made now */
        rmm_resource_destroy(r);                  /* allowed now */
    }
    __atomic_store_n(&walk_stop, 1, __ATOMIC_RELEASE);
    return NULL;
}
static void *walk_query(void *arg) {
    (void)arg;
    while (!__atomic_load_n(&walk_stop, __ATOMIC_ACQUIRE)) (void)rmm_resource_awaits_capture(walk_unrelated);
    return NULL;
}
TEST(capture_walks_see_no_resource_go) {
    rmm_resource *deep[8], *top;
    rmm_graph_pool *gp2 = NULL;
    rmm_stream s2 = NULL;
    void *ps[2048];
    int i;
    pthread_t a, b;
    NEED_GPU();
    CHECK_OK(rmm_cuda_resource_create(&walk_base));
    CHECK_OK(rmm_cuda_resource_create(&walk_unrelated));
    CHECK_OK(rmm__stream_create_raw(&walk_s1, false));
    CHECK_OK(rmm__stream_create_raw(&s2, false));
    top = walk_base;
    for (i = 0; i < 8; i++) {
        CHECK_OK(rmm_statistics_adaptor_create(&deep[i], top));
        top = deep[i];
    }
    CHECK_OK(rmm_graph_pool_create(&walk_gp1, walk_base, 1 << 20));
    CHECK_OK(rmm_graph_pool_create(&gp2, walk_base, 1 << 20));
    for (i = 0; i < 2048; i++) CHECK_OK(rmm_allocate(top, &ps[i], 256, s2));
    CHECK_OK(rmm_capture_begin(gp2, s2));
    for (i = 0; i < 2048; i++) CHECK_OK(rmm_deallocate(top, ps[i], 256, s2)); /* a long list to walk */
    CHECK(rmm_resource_awaits_capture(walk_base) && !rmm_resource_awaits_capture(walk_unrelated));
    pthread_create(&a, NULL, walk_churn, NULL);
    pthread_create(&b, NULL, walk_query, NULL);
    __atomic_store_n(&walk_go, 1, __ATOMIC_RELEASE);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    CHECK_OK(rmm_capture_end(gp2, s2));
    for (i = 7; i >= 0; i--) rmm_resource_destroy(deep[i]);
    CHECK_OK(rmm_graph_pool_destroy(walk_gp1));
    CHECK_OK(rmm_graph_pool_destroy(gp2));
    rmm_resource_destroy(walk_unrelated);
    rmm_resource_destroy(walk_base);
    CHECK_OK(rmm__stream_destroy_raw(walk_s1));
    CHECK_OK(rmm__stream_destroy_raw(s2));
}

int main(void) {
    HARNESS_INIT();
    RUN(statistics_push_and_pop_lose_no_counts);
    RUN(streams_come_and_go_on_many_threads);
    RUN(capture_walks_see_no_resource_go);
    return harness_main_end();
}
