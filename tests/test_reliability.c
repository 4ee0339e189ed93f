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
#include <pthread.h>
#include <unistd.h>

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

/* ---- defect 3: state stays bounded when streams and threads come and go --------------------- */

/* A server that makes a stream per request: each request allocates a few blocks on its stream,
   frees them there and destroys the stream. The pool's per-stream state must not grow with the
   number of streams ever seen. */
TEST(pool_state_is_bounded_when_library_streams_come_and_go) {
    rmm_resource *pool = NULL;
    rmm_pool_info info;
    size_t most = 0;
    int i, k;
    NEED_GPU();
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
    for (i = 0; i < 3000; i++) {
        rmm_stream s;
        void *p[3] = {NULL, NULL, NULL};
        size_t sizes[3] = {1000, (size_t)(i % 7 + 1) * 4096, (size_t)(i % 3 + 1) << 20};
        CHECK_OK(rmm_stream_create(&s));
        for (k = 0; k < 3; k++) CHECK_OK(rmm_allocate(pool, &p[k], sizes[k], s));
        for (k = 0; k < 3; k++) CHECK_OK(rmm_deallocate(pool, p[k], sizes[k], s));
        CHECK_OK(rmm_stream_destroy(s));
        CHECK_OK(rmm_pool_get_info(pool, &info));
        most = info.stream_states > most ? info.stream_states : most;
    }
    printf("  at most %zu stream states over 3000 streams\n", most);
    CHECK(most <= 64);
    CHECK_OK(rmm_pool_validate(pool));
    rmm_resource_destroy(pool);
}

#if defined(RMM_BACKEND_HOST)
/* The same with streams the library did not make (cudaStreamCreate in a real program): they are
   told apart by id, and their states go once empty or idle. */
TEST(pool_and_fixed_state_is_bounded_when_foreign_streams_come_and_go) {
    rmm_resource *pool = NULL, *fixed = NULL;
    rmm_pool_info info;
    size_t most = 0, most_fixed = 0;
    int i;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
    CHECK_OK(rmm_fixed_size_create(&fixed, rmm_get_current_device_resource(), NULL));
    for (i = 0; i < 3000; i++) {
        rmm_stream s;
        void *a = NULL, *b = NULL;
        CHECK_OK(rmm__stream_create_raw(&s, false)); /* not registered: a foreign stream */
        CHECK_OK(rmm_allocate(pool, &a, (size_t)(i % 5 + 1) * 1000, s));
        CHECK_OK(rmm_allocate(fixed, &b, 1000, s));
        CHECK_OK(rmm_deallocate(pool, a, (size_t)(i % 5 + 1) * 1000, s));
        CHECK_OK(rmm_deallocate(fixed, b, 1000, s));
        CHECK_OK(rmm__stream_destroy_raw(s));
        CHECK_OK(rmm_pool_get_info(pool, &info));
        most = info.stream_states > most ? info.stream_states : most;
        most_fixed = ((rmm__fixed *)fixed)->so.count > most_fixed ? ((rmm__fixed *)fixed)->so.count : most_fixed;
    }
    printf("  at most %zu pool and %zu fixed-size stream states over 3000 foreign streams\n", most, most_fixed);
    CHECK(most <= 64 && most_fixed <= 64);
    CHECK_OK(rmm_pool_validate(pool));
    CHECK_OK(rmm_resource_validate(fixed));
    rmm_resource_destroy(fixed);
    rmm_resource_destroy(pool);
}
#endif

typedef struct churn_arg {
    rmm_resource *mr;
    int ok;
} churn_arg;
static void *churn_thread(void *p) {
    churn_arg *a = (churn_arg *)p;
    void *x = NULL;
    a->ok = rmm_allocate(a->mr, &x, 5000, RMM_STREAM_DEFAULT) == RMM_SUCCESS && rmm_deallocate(a->mr, x, 5000, RMM_STREAM_DEFAULT) == RMM_SUCCESS;
    return NULL;
}
/* Threads that come and go, each with its own arena for the default stream: the arenas of exited
   threads give their superblocks back and are dropped, without a device synchronize per thread. */
TEST(arena_state_is_bounded_when_threads_and_streams_come_and_go) {
    rmm_resource *arena = NULL;
    rmm_arena_desc d = rmm_arena_desc_default();
    rmm__arena *a;
    size_t most = 0;
    int i, good = 0;
    NEED_GPU();
    d.arena_bytes = 64 << 20; /* 64 superblocks: fewer than the threads below */
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &d));
    a = (rmm__arena *)arena;
    for (i = 0; i < 600; i++) {
        pthread_t t;
        churn_arg arg;
        arg.mr = arena;
        arg.ok = 0;
        if (pthread_create(&t, NULL, churn_thread, &arg) != 0) break;
        pthread_join(t, NULL);
        good += arg.ok;
        most = a->so.count > most ? a->so.count : most;
    }
    CHECK(good == i);
    for (i = 0; i < 600; i++) {
        rmm_stream s;
        void *x = NULL;
        CHECK_OK(rmm_stream_create(&s));
        CHECK_OK(rmm_allocate(arena, &x, 3000, s));
        CHECK_OK(rmm_deallocate(arena, x, 3000, s));
        CHECK_OK(rmm_stream_destroy(s));
        most = a->so.count > most ? a->so.count : most;
    }
    printf("  at most %zu arenas over 600 threads and 600 streams\n", most);
    CHECK(most <= 100);
    CHECK_OK(rmm_resource_validate(arena));
    rmm_resource_destroy(arena);
}

/* ---- defect 4: no out-of-memory while a free block fits -------------------------------------- */

TEST(pool_never_fails_a_request_a_free_block_serves) {
    rmm_resource *pool = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_pool_info info;
    const size_t MiB = 1 << 20, fit = MiB + 31 * 1024, small = MiB + 256, sep = 256, want = MiB + 16 * 1024;
    void *f = NULL, *seps[21], *smalls[20], *filler = NULL, *got = NULL;
    size_t used;
    int i;
    NEED_GPU();
    d.initial_bytes = d.maximum_bytes = 32 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
    /* free blocks of one size bin, separated by live ones: the one that fits is listed last */
    CHECK_OK(rmm_allocate(pool, &f, fit, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(pool, &seps[0], sep, RMM_STREAM_DEFAULT));
    for (i = 0; i < 20; i++) {
        CHECK_OK(rmm_allocate(pool, &smalls[i], small, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_allocate(pool, &seps[i + 1], sep, RMM_STREAM_DEFAULT));
    }
    CHECK_OK(rmm_pool_get_info(pool, &info));
    used = info.used_bytes;
    CHECK_OK(rmm_allocate(pool, &filler, 32 * MiB - used, RMM_STREAM_DEFAULT)); /* the pool is full */
    CHECK_OK(rmm_deallocate(pool, f, fit, RMM_STREAM_DEFAULT));
    for (i = 0; i < 20; i++) CHECK_OK(rmm_deallocate(pool, smalls[i], small, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_pool_get_info(pool, &info));
    CHECK(info.largest_free_block >= want);
    CHECK_OK(rmm_allocate(pool, &got, want, RMM_STREAM_DEFAULT));
    CHECK(got == f);
    CHECK_OK(rmm_deallocate(pool, got, want, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool, filler, 32 * MiB - used, RMM_STREAM_DEFAULT));
    for (i = 0; i < 21; i++) CHECK_OK(rmm_deallocate(pool, seps[i], sep, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_pool_validate(pool));
    rmm_resource_destroy(pool);
}

/* ---- defect 6: a binning free with the wrong size -------------------------------------------- */

TEST(binning_refuses_a_free_whose_size_routes_a_bin_block_upstream) {
    rmm_resource *bins = NULL;
    rmm_binning_desc d = rmm_binning_desc_default();
    void *a = NULL, *b = NULL;
    NEED_GPU();
    d.min_size_exponent = 10;
    d.max_size_exponent = 14;
    CHECK_OK(rmm_binning_create(&bins, rmm_get_current_device_resource(), &d));
    CHECK_OK(rmm_allocate(bins, &a, 1000, RMM_STREAM_DEFAULT)); /* the 1 KiB bin: block 0 of its chunk */
    /* 1 MiB routes upstream, which would free the bin's whole chunk */
    CHECK_STATUS(rmm_deallocate(bins, a, 1 << 20, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK_OK(rmm_resource_validate(bins));
    CHECK_OK(rmm_deallocate(bins, a, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(bins, &b, 1000, RMM_STREAM_DEFAULT)); /* the bin still works */
    CHECK(b == a);
    CHECK_OK(rmm_deallocate(bins, b, 1000, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(bins);
}

/* ---- defect 11: a resource reached again from its own upstream ------------------------------- */

typedef struct reentrant {
    rmm_resource base;
    rmm_resource *upstream;
    rmm_resource *above;      /* the resource this one is the upstream of */
    int mode;                 /* 0: ask above for its info; 1: allocate from above; 2: dump above */
    size_t above_bytes;
    rmm_status seen;          /* what the call into `above` returned */
    bool marked;              /* and whether rmm__last_failure_reentrant said so right after it */
    char message[512];        /* and its message (mode 2) */
} reentrant;
static rmm_status reentrant_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    reentrant *r = (reentrant *)self;
    if (r->above && r->mode == 0) {
        rmm_pool_info info;
        r->seen = rmm_pool_get_info(r->above, &info);
        r->marked = rmm__last_failure_reentrant();
    } else if (r->above && r->mode == 2) {
        FILE *out = fopen("/dev/null", "w");
        r->seen = out ? rmm_resource_dump_json(r->above, out) : RMM_ERROR_IO;
        if (r->seen != RMM_SUCCESS) rmm__copy_text(r->message, sizeof r->message, rmm_last_error());
        if (out) fclose(out);
    } else if (r->above && r->mode == 1) {
        void *p = NULL;
        rmm_resource *above = r->above;
        r->above = NULL; /* once: the nested call does not come back again */
        r->seen = rmm_allocate(above, &p, r->above_bytes, stream);
        r->marked = rmm__last_failure_reentrant();
        r->above = above;
        if (r->seen == RMM_SUCCESS) (void)rmm_deallocate(above, p, r->above_bytes, stream);
        if (r->seen != RMM_SUCCESS) return r->seen;
    }
    return rmm_allocate_aligned(r->upstream, ptr, bytes, alignment, stream);
}
static rmm_status reentrant_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    return rmm_deallocate_aligned(((reentrant *)self)->upstream, ptr, bytes, alignment, stream);
}
static const rmm_resource_vtable reentrant_vtable = {"reentrant", reentrant_allocate, reentrant_deallocate, NULL, NULL};

TEST(reentrant_calls_get_a_status_not_a_deadlock) {
    reentrant r;
    rmm_resource *pool = NULL, *bins = NULL;
    rmm_binning_desc bd = rmm_binning_desc_default();
    void *p = NULL;
    NEED_GPU();
    memset(&r, 0, sizeof r);
    r.base.vtable = &reentrant_vtable;
    r.upstream = rmm_get_current_device_resource();
    CHECK_OK(rmm_pool_create(&pool, &r.base, NULL));
    /* the upstream asks the pool above it for its info while the pool grows */
    r.above = pool;
    r.mode = 0;
    r.seen = RMM_SUCCESS;
    CHECK_OK(rmm_allocate(pool, &p, 4096, RMM_STREAM_DEFAULT));
    CHECK(r.seen == RMM_ERROR_NOT_SUPPORTED && r.marked); /* (marked: told apart from other NOT_SUPPORTED failures by a flag, not the message) */
    CHECK_OK(rmm_deallocate(pool, p, 4096, RMM_STREAM_DEFAULT));
    /* the pool's allocation succeeded: its upstream's refused call, made inside it, is not left
       behind (since 2026-11-30: the growth that succeeds puts the record back); a refusal made
       here is marked, and any later failure clears the mark, a user's message that reads the
       same included */
    CHECK(!rmm__last_failure_reentrant());
    (void)rmm__reentrant("pool", "allocate");
    CHECK(rmm__last_failure_reentrant());
    CHECK_STATUS(rmm_set_last_error(RMM_ERROR_NOT_SUPPORTED, "%s", "mine: called from inside this resource's own upstream"), RMM_ERROR_NOT_SUPPORTED);
    CHECK(!rmm__last_failure_reentrant());
    /* the upstream dumps the pool above it: NOT_SUPPORTED, and the message names the call made (a
       red team's find: it named rmm_pool_get_info, which the dump called inside) */
    r.mode = 2;
    r.seen = RMM_SUCCESS;
    CHECK_OK(rmm_allocate(pool, &p, 16 << 20, RMM_STREAM_DEFAULT)); /* (the pool grows: its upstream is called) */
    CHECK(r.seen == RMM_ERROR_NOT_SUPPORTED);
    printf("  %s\n", r.message);
    CHECK(strstr(r.message, "rmm_resource_dump_json") != NULL && strstr(r.message, "rmm_pool_get_info") == NULL);
    CHECK_OK(rmm_deallocate(pool, p, 16 << 20, RMM_STREAM_DEFAULT));
    /* the upstream allocates from the pool above it: growth fails with that status */
    r.mode = 1;
    r.above_bytes = 256;
    r.marked = false;
    CHECK_STATUS(rmm_allocate(pool, &p, 64 << 20, RMM_STREAM_DEFAULT), RMM_ERROR_NOT_SUPPORTED);
    CHECK(strstr(rmm_last_error(), "upstream") != NULL && r.marked);
    r.above = NULL;
    CHECK_OK(rmm_pool_validate(pool));
    rmm_resource_destroy(pool);
    /* a binning bin made lazily whose upstream allocates from the same binning resource */
    bd.min_size_exponent = 10;
    bd.max_size_exponent = 12;
    CHECK_OK(rmm_binning_create(&bins, &r.base, &bd));
    r.above = bins;
    r.mode = 1;
    r.above_bytes = 3000; /* another bin (4 KiB): made from inside, works */
    CHECK_OK(rmm_allocate(bins, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK(r.seen == RMM_SUCCESS);
    CHECK_OK(rmm_deallocate(bins, p, 1000, RMM_STREAM_DEFAULT));
    r.above_bytes = 2000; /* the same bin (2 KiB) it is being made for */
    r.marked = false;
    CHECK_STATUS(rmm_allocate(bins, &p, 2000, RMM_STREAM_DEFAULT), RMM_ERROR_NOT_SUPPORTED);
    CHECK(r.marked);
    r.above = NULL;
    CHECK_OK(rmm_allocate(bins, &p, 2000, RMM_STREAM_DEFAULT)); /* and it can be made afterwards */
    CHECK_OK(rmm_deallocate(bins, p, 2000, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(bins);
}

/* The thread-safe adaptor's mutex, taken again by its holder from below: NOT_SUPPORTED, not a hang
   (this test never ends on a plain mutex). The adaptor works on afterwards. */
TEST(thread_safe_adaptor_reentered_gets_a_status_not_a_deadlock) {
    reentrant r;
    rmm_resource *ts = NULL;
    void *p = NULL;
    NEED_GPU();
    memset(&r, 0, sizeof r);
    r.base.vtable = &reentrant_vtable;
    r.upstream = rmm_get_current_device_resource();
    CHECK_OK(rmm_thread_safe_adaptor_create(&ts, &r.base));
    r.above = ts;
    r.mode = 1;
    r.above_bytes = 256;
    p = (void *)1;
    CHECK_STATUS(rmm_allocate(ts, &p, 4096, RMM_STREAM_DEFAULT), RMM_ERROR_NOT_SUPPORTED);
    CHECK(p == NULL && strstr(rmm_last_error(), "thread_safe: allocate") != NULL && r.marked);
    r.above = NULL;
    CHECK_OK(rmm_allocate(ts, &p, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(ts, p, 4096, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(ts);
}

/* ---- hardening: O(1) checks instead of undefined behaviour ----------------------------------- */

TEST(fixed_size_double_free_in_every_build) {
    rmm_resource *fixed = NULL;
    rmm_fixed_size_desc d = rmm_fixed_size_desc_default();
    void *a = NULL, *b = NULL;
    NEED_GPU();
    d.block_bytes = 4096;
    d.blocks_to_preallocate = 4;
    CHECK_OK(rmm_fixed_size_create(&fixed, rmm_get_current_device_resource(), &d));
    CHECK_OK(rmm_allocate(fixed, &a, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(fixed, a, 4096, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_deallocate(fixed, a, 4096, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK_STATUS(rmm_deallocate(fixed, (char *)a + 256, 100, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK_OK(rmm_allocate(fixed, &a, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(fixed, &b, 4096, RMM_STREAM_DEFAULT));
    CHECK(a != b); /* the refused double free did not put the block on the list twice */
    CHECK_OK(rmm_deallocate(fixed, a, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(fixed, b, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_validate(fixed));
    rmm_resource_destroy(fixed);
}

TEST(the_default_resource_is_not_destroyed) {
    rmm_resource *def;
    void *p = NULL;
    NEED_GPU();
    def = rmm_get_current_device_resource();
    (void)rmm_set_last_error(RMM_SUCCESS, NULL);
    rmm_resource_destroy(def);
    CHECK(rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT);
    CHECK(rmm_get_current_device_resource() == def);
    CHECK_OK(rmm_allocate(def, &p, 1000, RMM_STREAM_DEFAULT)); /* still works */
    CHECK_OK(rmm_deallocate(def, p, 1000, RMM_STREAM_DEFAULT));
}

TEST(destroyed_and_foreign_stream_handles) {
    rmm_stream s;
    NEED_GPU();
    CHECK_OK(rmm_stream_create(&s));
    CHECK_OK(rmm_stream_destroy(s));
    CHECK_STATUS(rmm_stream_destroy(s), RMM_ERROR_INVALID_ARGUMENT); /* twice */
#if defined(RMM_BACKEND_HOST)
    {
        rmm_resource *pool = NULL;
        void *p = NULL;
        CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
        /* a destroyed handle and a garbage one: the simulated driver refuses them, nothing is read */
        CHECK_STATUS(rmm_allocate(pool, &p, 1000, s), RMM_ERROR_CUDA);
        CHECK_STATUS(rmm_allocate(pool, &p, 1000, (rmm_stream)(uintptr_t)0x12345670), RMM_ERROR_CUDA);
        CHECK_STATUS(rmm_stream_synchronize((rmm_stream)(uintptr_t)0x12345670), RMM_ERROR_CUDA);
        CHECK_OK(rmm_pool_validate(pool));
        rmm_resource_destroy(pool);
    }
#endif
}

/* ---- found while building the Python package ----------------------------------------------- */

#if defined(RMM_BACKEND_HOST)
/* cudaFree of a pointer it never handed out fails (cudaErrorInvalidValue); the host backend used to
   read a header in front of it and abort. */
TEST(host_backend_refuses_a_free_of_foreign_memory) {
    static char not_device[4096];
    rmm_resource *cuda = NULL;
    void *p = NULL;
    CHECK_OK(rmm_cuda_resource_create(&cuda));
    CHECK_STATUS(rmm__dev_free(not_device + 1024), RMM_ERROR_CUDA); /* (the backend's own free) */
    /* through the resource: RMM_DEBUG's record refuses it first (CORRUPTION), release builds reach the backend */
    CHECK_STATUS(rmm_deallocate(cuda, not_device + 1024, 16, RMM_STREAM_DEFAULT), RMM__DEBUG ? RMM_ERROR_CORRUPTION : RMM_ERROR_CUDA);
    CHECK_OK(rmm_allocate(cuda, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(cuda, p, 1000, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_deallocate(cuda, p, 1000, RMM_STREAM_DEFAULT), RMM__DEBUG ? RMM_ERROR_CORRUPTION : RMM_ERROR_CUDA); /* twice */
    CHECK_STATUS(rmm__dev_free(p), RMM_ERROR_CUDA);
    rmm_resource_destroy(cuda);
}
#endif

/* The 2019 log keeps its own copy of each call site's file name. */
TEST(legacy_log_copies_the_file_name) {
    rmmOptions_t o;
    char site[64], path[] = "/tmp/rmm_test_legacy_log_XXXXXX", line[256];
    void *p = NULL;
    int fd, found = 0;
    FILE *f;
    NEED_GPU();
    memset(&o, 0, sizeof o);
    o.enable_logging = true;
    CHECK_OK(rmmInitialize(&o));
    strcpy(site, "first_file.c");
    CHECK_OK(rmmAlloc(&p, 1000, RMM_STREAM_DEFAULT, site, 7));
    strcpy(site, "overwritten.c"); /* the caller reuses its buffer */
    CHECK_OK(rmmFree(p, RMM_STREAM_DEFAULT, site, 9));
    fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_OK(rmmWriteLog(path));
    f = fopen(path, "r");
    CHECK(f != NULL);
    while (f && fgets(line, sizeof line, f)) {
        if (strstr(line, ",allocate,") && strstr(line, "first_file.c:7")) found++;
        if (strstr(line, ",free,") && strstr(line, "overwritten.c:9")) found++;
    }
    if (f) fclose(f);
    remove(path);
    CHECK(found == 2);
    CHECK_OK(rmmFinalize());
}

static rmm_status null_alloc(void **ptr, size_t bytes, rmm_stream stream, void *arg) {
    (void)bytes;
    (void)stream;
    (void)arg;
    *ptr = NULL;
    return RMM_SUCCESS;
}
static void null_free(void *ptr, size_t bytes, rmm_stream stream, void *arg) {
    (void)ptr;
    (void)bytes;
    (void)stream;
    (void)arg;
}
/* A callback that reports success with no memory is refused, not passed on as a NULL block. */
TEST(callback_success_with_null_is_refused) {
    rmm_resource *cb = NULL;
    void *p = (void *)1;
    CHECK_OK(rmm_callback_resource_create(&cb, null_alloc, null_free, NULL));
    CHECK_STATUS(rmm_allocate(cb, &p, 1000, RMM_STREAM_DEFAULT), RMM_ERROR_INVALID_ARGUMENT);
    CHECK(p == NULL);
    rmm_resource_destroy(cb);
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
    RUN(pool_state_is_bounded_when_library_streams_come_and_go);
#if defined(RMM_BACKEND_HOST)
    RUN(pool_and_fixed_state_is_bounded_when_foreign_streams_come_and_go);
#endif
    RUN(arena_state_is_bounded_when_threads_and_streams_come_and_go);
    RUN(pool_never_fails_a_request_a_free_block_serves);
    RUN(binning_refuses_a_free_whose_size_routes_a_bin_block_upstream);
    RUN(reentrant_calls_get_a_status_not_a_deadlock);
    RUN(thread_safe_adaptor_reentered_gets_a_status_not_a_deadlock);
    RUN(fixed_size_double_free_in_every_build);
    RUN(the_default_resource_is_not_destroyed);
    RUN(destroyed_and_foreign_stream_handles);
#if defined(RMM_BACKEND_HOST)
    RUN(host_backend_refuses_a_free_of_foreign_memory);
#endif
    RUN(legacy_log_copies_the_file_name);
    RUN(callback_success_with_null_is_refused);
    return harness_main_end();
}
