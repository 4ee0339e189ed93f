/* Reliability tests: the contract defects a hostile new user found (issue 8), each with a case that
   failed before its fix. A failed upstream free leaves every adaptor's state as it was (tracking,
   statistics, alignment bookkeeping of the aligned adaptor and the base, async and pinned
   resources); sizes round to any multiple, not only powers of two (arena superblocks, on-demand
   growth steps); NULL pools of streams; error messages that name what failed; rmm_set_last_error
   fed its own text. Built on the host backend (ASan/UBSan) and on the CUDA runtime (gcc -lcudart
   and nvcc); the cases that inject failures into simulated CUDA calls run on the host backend. */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "../rmm_cuda.h"
#include "harness.h"

/* ---- an upstream whose next allocate or free can be made to fail ---------------------------- */
typedef struct flaky {
    rmm_resource base;
    rmm_resource *upstream;
    int fail_allocs, fail_frees; /* how many calls in a row still to fail */
    rmm_status fail_status;
    int frees_reached; /* frees that reached the upstream */
} flaky;
static rmm_status flaky_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    flaky *f = (flaky *)self;
    if (f->fail_allocs > 0) {
        f->fail_allocs--;
        return rmm_set_last_error(f->fail_status, "flaky: allocate refused on purpose");
    }
    return rmm_allocate_aligned(f->upstream, ptr, bytes, alignment, stream);
}
static rmm_status flaky_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    flaky *f = (flaky *)self;
    if (f->fail_frees > 0) {
        f->fail_frees--;
        return rmm_set_last_error(f->fail_status, "flaky: free refused on purpose");
    }
    f->frees_reached++;
    return rmm_deallocate_aligned(f->upstream, ptr, bytes, alignment, stream);
}
static const rmm_resource_vtable flaky_vtable = {"flaky", flaky_allocate, flaky_deallocate, NULL, NULL};
static void flaky_init(flaky *f, rmm_resource *upstream) {
    memset(f, 0, sizeof *f);
    f->base.vtable = &flaky_vtable;
    f->upstream = upstream;
    f->fail_status = RMM_ERROR_OUT_OF_MEMORY;
}

/* ---- defect 1: a failed upstream free loses no adaptor state ------------------------------- */

TEST(tracking_keeps_its_record_when_the_upstream_free_fails) {
    NEED_GPU();
    flaky f;
    rmm_resource *track = NULL;
    void *p = NULL;
    size_t bytes = 0, count = 0;
    flaky_init(&f, rmm_get_current_device_resource());
    CHECK_OK(rmm_tracking_adaptor_create(&track, &f.base, false));
    CHECK_OK(rmm_allocate(track, &p, 3000, RMM_STREAM_DEFAULT));
    f.fail_frees = 1;
    CHECK_STATUS(rmm_deallocate(track, p, 3000, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK_OK(rmm_tracking_get(track, &bytes, &count));
    CHECK(bytes == 3000 && count == 1); /* still outstanding: the block was not freed */
    CHECK_OK(rmm_deallocate(track, p, 3000, RMM_STREAM_DEFAULT)); /* the retry works */
    CHECK_OK(rmm_tracking_get(track, &bytes, &count));
    CHECK(bytes == 0 && count == 0);
    CHECK(f.frees_reached == 1);
    CHECK_STATUS(rmm_deallocate(track, p, 3000, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION); /* now a double free */
    rmm_resource_destroy(track);
}

TEST(statistics_uncount_only_what_upstream_freed) {
    NEED_GPU();
    flaky f;
    rmm_resource *pool = NULL, *stats = NULL;
    rmm_statistics s;
    void *p = NULL;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
    flaky_init(&f, pool);
    CHECK_OK(rmm_statistics_adaptor_create(&stats, &f.base));
    CHECK_OK(rmm_allocate(stats, &p, 1000, RMM_STREAM_DEFAULT));
    f.fail_frees = 1;
    CHECK_STATUS(rmm_deallocate(stats, p, 1000, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK_OK(rmm_statistics_get(stats, &s));
    CHECK(s.bytes.value == 1000 && s.count.value == 1);
    CHECK_OK(rmm_deallocate(stats, p, 1000, RMM_STREAM_DEFAULT));
    /* a double free the pool refuses changes no count */
    CHECK_STATUS(rmm_deallocate(stats, p, 1000, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK_OK(rmm_statistics_get(stats, &s));
    CHECK(s.bytes.value == 0 && s.count.value == 0 && s.count.total == 1);
    rmm_resource_destroy(stats);
    rmm_resource_destroy(pool);
}

TEST(aligned_adaptor_keeps_its_record_when_the_upstream_free_fails) {
    NEED_GPU();
    flaky f;
    rmm_resource *al = NULL;
    void *p = NULL;
    flaky_init(&f, rmm_get_current_device_resource());
    CHECK_OK(rmm_aligned_adaptor_create(&al, &f.base, 4096, 0));
    CHECK_OK(rmm_allocate(al, &p, 5000, RMM_STREAM_DEFAULT));
    CHECK(((uintptr_t)p & 4095) == 0);
    f.fail_frees = 1;
    f.fail_status = RMM_ERROR_CUDA;
    CHECK_STATUS(rmm_deallocate(al, p, 5000, RMM_STREAM_DEFAULT), RMM_ERROR_CUDA);
    CHECK_OK(rmm_deallocate(al, p, 5000, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_deallocate(al, p, 5000, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK(f.frees_reached == 1);
    rmm_resource_destroy(al);
}

#if defined(RMM_BACKEND_HOST)
/* The base resources free through the platform layer; a failure injected there must leave their
   over-alignment records in place so that the free can be retried. */
static void base_retry_case(rmm_resource *mr, const char *free_call) {
    void *p = NULL;
    CHECK_OK(rmm_allocate_aligned(mr, &p, 10000, 8192, RMM_STREAM_DEFAULT));
    CHECK(((uintptr_t)p & 8191) == 0);
    rmm_host_backend_fail_calls(free_call, 1, 1, RMM_ERROR_CUDA);
    CHECK_STATUS(rmm_deallocate_aligned(mr, p, 10000, 8192, RMM_STREAM_DEFAULT), RMM_ERROR_CUDA);
    CHECK_OK(rmm_deallocate_aligned(mr, p, 10000, 8192, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_deallocate_aligned(mr, p, 10000, 8192, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
}
TEST(base_resources_keep_alignment_records_when_the_free_fails) {
    rmm_resource *cuda = NULL, *async = NULL, *pinned = NULL;
    rmm_host_resource *host_pinned = NULL;
    void *p = NULL;
    CHECK_OK(rmm_cuda_resource_create(&cuda));
    CHECK_OK(rmm_async_resource_create(&async, NULL));
    CHECK_OK(rmm_pinned_host_resource_create(&pinned));
    base_retry_case(cuda, "cudaFree");
    base_retry_case(async, "cudaFreeAsync");
    base_retry_case(pinned, "cudaFreeHost");
    base_retry_case(rmm_get_current_device_resource(), "cudaFree"); /* the library-owned default */
    CHECK_OK(rmm_pinned_resource_create(&host_pinned));
    CHECK_OK(rmm_host_allocate(host_pinned, &p, 10000, 8192));
    rmm_host_backend_fail_calls("cudaFreeHost", 1, 1, RMM_ERROR_CUDA);
    CHECK_STATUS(rmm_host_deallocate(host_pinned, p, 10000, 8192), RMM_ERROR_CUDA);
    CHECK_OK(rmm_host_deallocate(host_pinned, p, 10000, 8192));
    rmm_host_resource_destroy(host_pinned);
    rmm_resource_destroy(cuda);
    rmm_resource_destroy(async);
    rmm_resource_destroy(pinned);
}
#endif

/* ---- defect 2: rounding to any multiple ------------------------------------------------------ */

TEST(arena_with_a_superblock_that_is_not_a_power_of_two) {
    NEED_GPU();
    rmm_resource *arena = NULL;
    rmm_arena_desc d = rmm_arena_desc_default();
    void *p[6] = {NULL};
    /* a large block first: rounded to a power-of-two "multiple" of 3 MiB it would end at 5 MiB and
       put every later superblock off the 3 MiB grid, so small blocks past a grid line were lost */
    size_t sizes[6] = {4 << 20, 1000, 1 << 20, (3 << 19), 400 << 10, 5 << 20};
    int i;
    d.superblock_bytes = 3 << 20;
    d.arena_bytes = (size_t)3 << 25; /* 96 MiB: 32 superblocks */
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &d));
    for (i = 0; i < 6; i++) CHECK_OK(rmm_allocate(arena, &p[i], sizes[i], RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_validate(arena));
    for (i = 0; i < 6; i++) CHECK_OK(rmm_deallocate(arena, p[i], sizes[i], RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_validate(arena));
    /* everything came back: the whole arena can be had again in one piece */
    CHECK_OK(rmm_allocate(arena, &p[0], (size_t)3 << 25, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(arena, p[0], (size_t)3 << 25, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(arena);
}

TEST(on_demand_growth_steps_that_are_not_powers_of_two) {
    NEED_GPU();
    rmm_resource *pool = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_pool_info info;
    void *a = NULL, *b = NULL;
    d.growth = RMM_POOL_GROWTH_ON_DEMAND;
    d.growth_granularity_bytes = 3 << 20;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
    CHECK_OK(rmm_allocate(pool, &a, 1 << 20, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_pool_get_info(pool, &info));
    CHECK(info.pool_bytes == (size_t)3 << 20); /* one step of 3 MiB, not 1 MiB */
    CHECK_OK(rmm_allocate(pool, &b, 4 << 20, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_pool_get_info(pool, &info));
    CHECK(info.pool_bytes == (size_t)9 << 20); /* 4 MiB rounds up to two steps: 6 MiB more */
    CHECK_OK(rmm_deallocate(pool, a, 1 << 20, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool, b, 4 << 20, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_pool_validate(pool));
    rmm_resource_destroy(pool);
}

/* ---- defect 7: NULL stream pools ------------------------------------------------------------- */

TEST(stream_pool_functions_accept_null) {
    (void)rmm_set_last_error(RMM_SUCCESS, NULL);
    CHECK(rmm_stream_pool_get(NULL) == RMM_STREAM_DEFAULT);
    CHECK(rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT);
    (void)rmm_set_last_error(RMM_SUCCESS, NULL);
    CHECK(rmm_stream_pool_get_at(NULL, 3) == RMM_STREAM_DEFAULT);
    CHECK(rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT);
    CHECK(rmm_stream_pool_size(NULL) == 0);
    rmm_stream_pool_destroy(NULL);
    CHECK_STATUS(rmm_stream_pool_create(NULL, 4), RMM_ERROR_INVALID_ARGUMENT);
}

/* ---- defect 8: pool messages name what failed ------------------------------------------------ */

TEST(pool_error_messages_name_what_failed) {
    NEED_GPU();
    flaky f;
    rmm_resource *pool = NULL, *limit = NULL;
    void *p = NULL;
    flaky_init(&f, rmm_get_current_device_resource());
    CHECK_OK(rmm_pool_create(&pool, &f.base, NULL));
    f.fail_allocs = 40;
    f.fail_status = RMM_ERROR_INVALID_ARGUMENT;
    CHECK_STATUS(rmm_allocate(pool, &p, 1 << 20, RMM_STREAM_DEFAULT), RMM_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(rmm_last_error(), "out of memory") == NULL);
    CHECK(strstr(rmm_last_error(), "RMM_ERROR_INVALID_ARGUMENT") != NULL);
    CHECK(strstr(rmm_last_error(), "flaky: allocate refused on purpose") != NULL);
    f.fail_status = RMM_ERROR_CUDA;
    CHECK_STATUS(rmm_allocate(pool, &p, 1 << 20, RMM_STREAM_DEFAULT), RMM_ERROR_CUDA);
    CHECK(strstr(rmm_last_error(), "out of memory") == NULL);
    rmm_resource_destroy(pool);
    /* a real out-of-memory says so, and says there is no maximum without printing a 0 */
    f.fail_allocs = 0;
    CHECK_OK(rmm_limiting_adaptor_create(&limit, rmm_get_current_device_resource(), 1 << 20));
    CHECK_OK(rmm_pool_create(&pool, limit, NULL));
    CHECK_STATUS(rmm_allocate(pool, &p, 2 << 20, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(rmm_last_error(), "out of memory") != NULL);
    CHECK(strstr(rmm_last_error(), "no maximum") != NULL);
    CHECK(strstr(rmm_last_error(), "unbounded, 0") == NULL);
    rmm_resource_destroy(pool);
    rmm_resource_destroy(limit);
}

/* ---- defect 9: rmm_set_last_error given its own text ----------------------------------------- */

TEST(set_last_error_may_quote_the_last_error) {
    CHECK_STATUS(rmm_set_last_error(RMM_ERROR_IO, "inner: %s (%d)", "disk full", 28), RMM_ERROR_IO);
    CHECK_STATUS(rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "outer: %s", rmm_last_error()), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(strcmp(rmm_last_error(), "outer: inner: disk full (28)") == 0);
    CHECK(rmm_last_status() == RMM_ERROR_OUT_OF_MEMORY);
    CHECK_STATUS(rmm_set_last_error(RMM_ERROR_CUDA, "%s / %s", rmm_last_error(), rmm_last_error()), RMM_ERROR_CUDA);
    CHECK(strcmp(rmm_last_error(), "outer: inner: disk full (28) / outer: inner: disk full (28)") == 0);
    (void)rmm_set_last_error(RMM_SUCCESS, NULL);
    CHECK(rmm_last_error()[0] == '\0');
}

int main(void) {
    HARNESS_INIT();
    RUN(tracking_keeps_its_record_when_the_upstream_free_fails);
    RUN(statistics_uncount_only_what_upstream_freed);
    RUN(aligned_adaptor_keeps_its_record_when_the_upstream_free_fails);
#if defined(RMM_BACKEND_HOST)
    RUN(base_resources_keep_alignment_records_when_the_free_fails);
#endif
    RUN(arena_with_a_superblock_that_is_not_a_power_of_two);
    RUN(on_demand_growth_steps_that_are_not_powers_of_two);
    RUN(stream_pool_functions_accept_null);
    RUN(pool_error_messages_name_what_failed);
    RUN(set_last_error_may_quote_the_last_error);
    return harness_main_end();
}
