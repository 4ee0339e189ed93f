/* A call that succeeds leaves no failure behind. rmm_last_status() and rmm_last_error() name the
   thread's last failing call; where the library works around an internal failure (an event that
   could not be made, so it synchronizes instead; a query that failed, read as "not yet"; memory
   that could not be given back, so the pool keeps it; a device or capture mode that could not be
   restored, logged) and the public call then succeeds, the record of the call before stays as it
   was. Each case here injects one failure into a simulated CUDA call (host backend) at a place
   audit 25 found swallowed, checks that the call succeeds, and checks that the last error is still
   the one set before it; every case failed on the code before (the last error named the injected
   call). One test runs on every build, the GPU included: ordinary work on library, foreign and
   per-thread streams, the graph pool and record_stream leaves the record alone. And a call that
   fails names its own failure, not that of a clean-up on its way out. The debug margin's cases are
   in test_margins.c. */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "harness.h"
#include <string.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

static const char earlier[] = "an earlier failure of the caller's";
/* sets the last error to a known record */
static void mark(void) { (void)rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "%s", earlier); }
/* whether the record is still the one mark() set */
static int untouched(void) { return rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT && strcmp(rmm_last_error(), earlier) == 0 && rmm_last_cuda_error() == 0; }
/* the last error names `needle`; else says what it is (label: the case) */
#define CHECK_NAMES(needle, label)                                                                   \
    do {                                                                                             \
        CHECK(strstr(rmm_last_error(), needle) != NULL);                                             \
        if (!strstr(rmm_last_error(), needle)) printf("  (%s%sthe last error is %s)\n", label, *(label) ? ": " : "", rmm_last_error()); \
    } while (0)
#define CHECK_UNTOUCHED()                                                                   \
    do {                                                                                    \
        CHECK(untouched());                                                                 \
        if (!untouched()) printf("  (the last error is now %s, CUDA error %d: %s)\n", rmm_status_string(rmm_last_status()), rmm_last_cuda_error(), rmm_last_error()); \
    } while (0)

/* ---- every build: ordinary work leaves the record alone ------------------------------------ */
TEST(ordinary_work_leaves_the_last_error_alone) {
    rmm_resource *pool = NULL, *arena = NULL, *fixed = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    rmm_arena_desc ad = rmm_arena_desc_default();
    rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
    rmm_graph_pool *gp = NULL;
    rmm_stream lib = NULL, foreign = NULL;
    rmm_resource *mrs[3];
    void *p[64];
    int m, k, i;
    NEED_GPU();
    pd.initial_bytes = 16 * MiB;
    ad.arena_bytes = 64 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &pd));
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &ad));
    CHECK_OK(rmm_fixed_size_create(&fixed, rmm_get_current_device_resource(), &fd));
    CHECK_OK(rmm_stream_create(&lib));
    CHECK_OK(rmm__stream_create_raw(&foreign, false)); /* cudaStreamCreate: the program's own */
    if (!pool || !arena || !fixed || !lib || !foreign) goto done;
    mrs[0] = pool;
    mrs[1] = arena;
    mrs[2] = fixed;
    mark();
    for (m = 0; m < 3; m++) {
        rmm_stream streams[4];
        int s;
        streams[0] = lib;
        streams[1] = foreign;
        streams[2] = RMM_STREAM_PER_THREAD;
        streams[3] = RMM_STREAM_DEFAULT;
        for (s = 0; s < 4; s++)
            for (k = 0; k < 40; k++) { /* rounds enough for rings, batches and event queries */
                size_t bytes = m == 2 ? 256 : 256 * (size_t)(1 + k % 7);
                for (i = 0; i < 64; i++) CHECK_OK(rmm_allocate(mrs[m], &p[i], bytes, streams[s]));
                for (i = 0; i < 64; i++) CHECK_OK(rmm_deallocate(mrs[m], p[i], bytes, streams[s]));
            }
    }
    CHECK_UNTOUCHED();
    /* a block used on another stream, freed on its own; a library stream destroyed with state in a pool */
    CHECK_OK(rmm_allocate(pool, &p[0], 4 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_record_stream(pool, p[0], 4 * KiB, foreign));
    CHECK_OK(rmm_deallocate(pool, p[0], 4 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_stream_destroy(lib));
    lib = NULL;
    CHECK_OK(rmm_allocate(pool, &p[0], 4 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool, p[0], 4 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_graph_pool_create(&gp, rmm_get_current_device_resource(), MiB));
    if (gp) CHECK_OK(rmm_graph_pool_destroy(gp));
    CHECK_UNTOUCHED();
done:
    if (lib) CHECK_OK(rmm_stream_destroy(lib));
    if (foreign) CHECK_OK(rmm__stream_destroy_raw(foreign));
    rmm_resource_destroy(fixed);
    rmm_resource_destroy(arena);
    rmm_resource_destroy(pool);
}

/* rmm_record_stream on a resource that cannot say where its memory comes from (a pool with
   VIRTUAL growth: rmm_resource_allocation_base answers NOT_SUPPORTED, which record_stream takes in
   its stride) succeeds and leaves the record alone (red team 42's F3: it left allocation_base's
   NOT_SUPPORTED behind). Every build. */
TEST(record_stream_where_the_base_is_unknown_leaves_the_last_error_alone) {
    rmm_resource *vp = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_stream s = NULL;
    void *a = NULL;
    NEED_GPU();
    d.growth = RMM_POOL_GROWTH_VIRTUAL;
    d.virtual_bytes = 64 * MiB;
    CHECK_OK(rmm_pool_create(&vp, NULL, &d));
    CHECK_OK(rmm_stream_create(&s));
    if (vp && s) {
        CHECK_OK(rmm_allocate(vp, &a, 1000, RMM_STREAM_DEFAULT));
        mark();
        CHECK_OK(rmm_record_stream(vp, a, 1000, s));
        CHECK_UNTOUCHED();
        CHECK_OK(rmm_deallocate(vp, a, 1000, RMM_STREAM_DEFAULT));
        CHECK_UNTOUCHED();
    }
    if (s) CHECK_OK(rmm_stream_destroy(s));
    if (vp) rmm_resource_destroy(vp);
}

#if defined(RMM_BACKEND_HOST)
static void no_faults(void) { rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS); }
static void fail(const char *call, unsigned nth, unsigned times) { rmm_host_backend_fail_calls(call, nth, times, RMM_ERROR_CUDA); }

/* audit 25, 1: the guard that makes a resource's device current could not set the caller's back */
TEST(a_failed_device_restore_is_logged_not_left_behind) {
    rmm_resource *mr1 = rmm_get_per_device_resource(1);
    void *p = NULL;
    int now = -1;
    CHECK(mr1 != NULL);
    if (!mr1) return;
    CHECK_OK(rmm__set_device(1)); /* both contexts active: the guard restores */
    CHECK_OK(rmm__set_device(0));
    mark();
    fail("cudaSetDevice", 2, 1); /* the restore */
    CHECK_OK(rmm_allocate(mr1, &p, KiB, RMM_STREAM_DEFAULT));
    no_faults();
    CHECK_UNTOUCHED();
    CHECK_OK(rmm__get_device(&now));
    CHECK(now == 1); /* as documented: the thread stays on the resource's device */
    CHECK_OK(rmm__set_device(0));
    if (p) CHECK_OK(rmm_deallocate(mr1, p, KiB, RMM_STREAM_DEFAULT));
    /* the public scope's own restore is the caller's call: its failure is the last error */
    {
        rmm_device_scope scope;
        CHECK_OK(rmm_device_scope_enter(&scope, 1));
        mark();
        fail("cudaSetDevice", 1, 1);
        CHECK_STATUS(rmm_device_scope_leave(&scope), RMM_ERROR_CUDA);
        no_faults();
        CHECK(rmm_last_status() == RMM_ERROR_CUDA);
        CHECK(strstr(rmm_last_error(), "cudaSetDevice") != NULL);
        CHECK_OK(rmm__set_device(0));
    }
}

/* review 26: a callback resource whose callback fails with no message of its own gets one made for
   it; a library call inside the callback that worked around a failure (keep and back) must not make
   an earlier, unrelated message pass for the callback's (a serial moved on by the back did) */
static rmm_status detour_alloc(void **ptr, size_t bytes, rmm_stream stream, void *arg) {
    rmm_resource *mr1 = (rmm_resource *)arg;
    void *q = NULL;
    (void)ptr;
    (void)bytes;
    (void)stream;
    fail("cudaSetDevice", 2, 1); /* device 1's resource from device 0: its restore fails, worked around */
    if (rmm_allocate(mr1, &q, 256, RMM_STREAM_DEFAULT) == RMM_SUCCESS) CHECK_OK(rmm_deallocate(mr1, q, 256, RMM_STREAM_DEFAULT));
    no_faults();
    (void)rmm__set_device(0);
    return RMM_ERROR_OUT_OF_MEMORY; /* no message */
}
static void detour_free(void *ptr, size_t bytes, rmm_stream stream, void *arg) {
    (void)ptr;
    (void)bytes;
    (void)stream;
    (void)arg;
}
TEST(a_callback_failing_after_a_worked_around_call_gets_its_own_message) {
    rmm_resource *mr1 = rmm_get_per_device_resource(1), *cb = NULL;
    void *p = NULL;
    CHECK(mr1 != NULL);
    if (!mr1) return;
    CHECK_OK(rmm__set_device(1));
    CHECK_OK(rmm__set_device(0));
    CHECK_OK(rmm_callback_resource_create(&cb, detour_alloc, detour_free, mr1));
    if (!cb) return;
    (void)rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "%s", "stale: an earlier, unrelated failure");
    CHECK_STATUS(rmm_allocate(cb, &p, 256, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(rmm_last_error(), "stale") == NULL);
    if (strstr(rmm_last_error(), "stale")) printf("  (the last error is %s)\n", rmm_last_error());
    rmm_resource_destroy(cb);
}

/* audit 25, 2: a destroyed stream's death event could not be made; a synchronize did its work. And
   neither the event nor the synchronize (review 26): the memory waits for a device synchronize. */
TEST(a_stream_destroy_that_synchronizes_instead_of_an_event) {
    static const struct {
        const char *calls;
        unsigned times;
    } faults[3] = {{"cudaEventCreateWithFlags", 1}, {"cudaEventRecord", 1}, {"cudaEventCreateWithFlags|cudaStreamSynchronize", 2}};
    int c;
    for (c = 0; c < 3; c++) {
        rmm_resource *pool = NULL;
        rmm_pool_desc d = rmm_pool_desc_default();
        rmm_stream s = NULL;
        void *p = NULL;
        CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
        CHECK_OK(rmm_stream_create(&s));
        if (!pool || !s) return;
        CHECK_OK(rmm_allocate(pool, &p, KiB, s));
        CHECK_OK(rmm_deallocate(pool, p, KiB, s)); /* the pool holds state for s */
        mark();
        fail(faults[c].calls, 1, faults[c].times);
        CHECK_OK(rmm_stream_destroy(s));
        no_faults();
        CHECK_UNTOUCHED();
        CHECK_OK(rmm_allocate(pool, &p, KiB, RMM_STREAM_DEFAULT)); /* s's memory serves another stream */
        CHECK_OK(rmm_deallocate(pool, p, KiB, RMM_STREAM_DEFAULT));
        rmm_resource_destroy(pool);
    }
}

/* audit 25, 3 and 4: a free of a block recorded on another stream */
/* A wait for another stream's work that fails inside an allocation (the event's creation or record,
   or cudaStreamWaitEvent) passes that stream's memory over: the allocation is served another way
   (another stream's memory, its own ring covered, a synchronize, growth) and leaves the record
   alone. Until session 42 the failure stayed the thread's last error after the allocation succeeded
   (a red team's find), and a failure that read as out of memory ended the search: the pool answered
   OUT_OF_MEMORY ("fragmented") without trying to grow. Pool and fixed-size, one donor (a library
   stream's covered block) and, on a third stream, a foreign stream's uncovered frees beside it. */
static void failed_wait_case(int fixed, int with_foreign, const char *call, rmm_status injected) {
    rmm_resource *base = NULL, *mr = NULL;
    rmm_stream f = NULL, d = NULL, b = NULL;
    size_t n = 64 * KiB;
    void *p[4], *q = NULL;
    int i;
    rmm_status st;
    CHECK_OK(rmm_cuda_resource_create(&base));
    if (fixed) {
        rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
        fd.block_bytes = n;
        fd.blocks_to_preallocate = 4;
        CHECK_OK(rmm_fixed_size_create(&mr, base, &fd));
    } else {
        CHECK_OK(rmm_pool_create(&mr, base, NULL));
    }
    CHECK_OK(rmm_stream_create(&d));
    CHECK_OK(rmm_stream_create(&b));
    if (with_foreign) CHECK_OK(rmm__stream_create_raw(&f, false));
    if (!base || !mr || !d || !b || (with_foreign && !f)) return;
    if (with_foreign) { /* more than a ring's frees, then some left uncovered */
        for (i = 0; i < 300; i++) {
            CHECK_OK(rmm_allocate(mr, &p[0], n, f));
            CHECK_OK(rmm_deallocate(mr, p[0], n, f));
        }
        for (i = 0; i < 4; i++) CHECK_OK(rmm_allocate(mr, &p[i], n, f));
        for (i = 0; i < 4; i++) CHECK_OK(rmm_deallocate(mr, p[i], n, f));
    }
    for (i = 0; i < 4; i++) CHECK_OK(rmm_allocate(mr, &p[i], n, d));
    for (i = 0; i < 4; i++) CHECK_OK(rmm_deallocate(mr, p[i], n, d));
    mark();
    rmm_host_backend_fail_calls(call, 1, 1, injected);
    st = rmm_allocate(mr, &q, n, b);
    no_faults();
    CHECK_OK(st);
    CHECK_UNTOUCHED();
    if (st != RMM_SUCCESS || !untouched())
        printf("  (%s, %s, %s failing with %s)\n", fixed ? "fixed-size" : "pool", with_foreign ? "a foreign stream beside" : "one donor", call,
               rmm_status_string(injected));
    if (q) CHECK_OK(rmm_deallocate(mr, q, n, b));
    CHECK_OK(rmm_resource_validate(mr));
    if (f) CHECK_OK(rmm__stream_destroy_raw(f));
    CHECK_OK(rmm_stream_destroy(d));
    CHECK_OK(rmm_stream_destroy(b));
    rmm_resource_destroy(mr);
    rmm_resource_destroy(base);
}
TEST(a_failed_wait_for_another_stream_leaves_no_failure) {
    static const char *const calls[] = {"cudaStreamWaitEvent", "cudaEventRecord", "cudaEventCreateWithFlags"};
    int fixed, with_foreign, c, k;
    for (fixed = 0; fixed < 2; fixed++)
        for (with_foreign = 0; with_foreign < 2; with_foreign++)
            for (c = 0; c < 3; c++)
                for (k = 0; k < 2; k++) failed_wait_case(fixed, with_foreign, calls[c], k ? RMM_ERROR_OUT_OF_MEMORY : RMM_ERROR_CUDA);
}

TEST(record_stream_frees_that_work_around_a_failure) {
    rmm_resource *pool = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_stream foreign = NULL, own[2];
    void *p = NULL;
    int i;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
    CHECK_OK(rmm__stream_create_raw(&foreign, false));
    if (!pool || !foreign) return;
    /* 3: no event can be recorded on the recorded (foreign) stream: the free synchronizes */
    CHECK_OK(rmm_allocate(pool, &p, KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_record_stream(pool, p, KiB, foreign));
    mark();
    fail("cudaEventRecord", 1, 1);
    CHECK_OK(rmm_deallocate(pool, p, KiB, RMM_STREAM_DEFAULT));
    no_faults();
    CHECK_UNTOUCHED();
    /* 4: whether the recorded stream's device is current cannot be read: the general way */
    own[0] = RMM_STREAM_PER_THREAD;
    own[1] = RMM_STREAM_LEGACY;
    for (i = 0; i < 2; i++) {
        CHECK_OK(rmm_allocate(pool, &p, KiB, own[i]));
        CHECK_OK(rmm_record_stream(pool, p, KiB, own[i]));
        mark();
        fail("cudaGetDevice", 1, 1);
        CHECK_OK(rmm_deallocate(pool, p, KiB, own[i]));
        no_faults();
        CHECK_UNTOUCHED();
    }
    CHECK_OK(rmm__stream_destroy_raw(foreign));
    rmm_resource_destroy(pool);
}

/* audit 25, 6 and 7: event queries of a foreign stream's frees fail (read as "not yet"); the
   arena's stream id at a batch's filing fails (filed with no event) */
static void loop_with_failing(rmm_resource *mr, rmm_stream s, const char *call, int fixed_sizes) {
    void *p[64];
    int k, i, clean = 1;
    for (k = 0; k < 40 && clean; k++) {
        size_t a = fixed_sizes ? 256 : 256 * (size_t)(1 + k % 7), b = fixed_sizes ? 256 : 256 * (size_t)(1 + (k + 3) % 7);
        for (i = 0; i < 64; i++) CHECK_OK(rmm_allocate(mr, &p[i], a, s));
        mark();
        fail(call, 1, 1000000);
        for (i = 0; i < 64; i++) CHECK_OK(rmm_deallocate(mr, p[i], a, s));
        for (i = 0; i < 64; i++) CHECK_OK(rmm_allocate(mr, &p[i], b, s));
        no_faults();
        clean = untouched();
        for (i = 0; i < 64; i++) CHECK_OK(rmm_deallocate(mr, p[i], b, s));
    }
    CHECK(clean);
    if (!clean) printf("  (%s, round %d: the last error is %s)\n", call, k - 1, rmm_last_error());
}
TEST(foreign_stream_queries_that_fail_read_as_not_yet) {
    rmm_resource *mr = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_arena_desc ad = rmm_arena_desc_default();
    rmm_stream foreign = NULL;
    void *p[600];
    int i;
    CHECK_OK(rmm__stream_create_raw(&foreign, false));
    if (!foreign) return;
    CHECK_OK(rmm_pool_create(&mr, rmm_get_current_device_resource(), &d));
    if (mr) loop_with_failing(mr, foreign, "cudaEventQuery", 0);
    rmm_resource_destroy(mr);
    mr = NULL;
    ad.arena_bytes = 64 * MiB;
    CHECK_OK(rmm_arena_create(&mr, rmm_get_current_device_resource(), &ad));
    if (mr) {
        loop_with_failing(mr, foreign, "cudaEventQuery", 0);
        for (i = 0; i < 600; i++) CHECK_OK(rmm_allocate(mr, &p[i], 256, foreign));
        mark();
        fail("cudaStreamGetId", 1, 1000000); /* past the first batch of parked frees */
        for (i = 0; i < 600; i++) CHECK_OK(rmm_deallocate(mr, p[i], 256, foreign));
        no_faults();
        CHECK_UNTOUCHED();
    }
    rmm_resource_destroy(mr);
    CHECK_OK(rmm__stream_destroy_raw(foreign));
}

/* audit 25, 8 and 9: memory a pool would give back, kept when that fails */
TEST(memory_that_cannot_be_given_back_is_kept_quietly) {
    rmm_resource *pool = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    void *a = NULL, *big[40];
    int i, k, clean = 1;
    /* 8: an on-demand pool past its peak gives a free chunk back before growing */
    d.growth = RMM_POOL_GROWTH_ON_DEMAND;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
    if (!pool) return;
    CHECK_OK(rmm_allocate(pool, &a, 4 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool, a, 4 * MiB, RMM_STREAM_DEFAULT));
    mark();
    fail("cudaFree", 1, 1);
    CHECK_OK(rmm_allocate(pool, &a, 8 * MiB, RMM_STREAM_DEFAULT));
    no_faults();
    CHECK_UNTOUCHED();
    CHECK_OK(rmm_deallocate(pool, a, 8 * MiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);
    /* 9: a virtual pool's hysteresis unmaps idle pages every 4096 allocations */
    d = rmm_pool_desc_default();
    d.growth = RMM_POOL_GROWTH_VIRTUAL;
    d.virtual_bytes = (size_t)1 << 30;
    pool = NULL;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
    if (!pool) return;
    for (i = 0; i < 40; i++) CHECK_OK(rmm_allocate(pool, &big[i], 4 * MiB, RMM_STREAM_DEFAULT));
    for (i = 0; i < 40; i++) CHECK_OK(rmm_deallocate(pool, big[i], 4 * MiB, RMM_STREAM_DEFAULT));
    mark();
    fail("cuMemUnmap", 1, 1000000);
    for (k = 0; k < 3 * 4096 && clean; k++) {
        CHECK_OK(rmm_allocate(pool, &a, KiB, RMM_STREAM_DEFAULT));
        clean = untouched();
        CHECK_OK(rmm_deallocate(pool, a, KiB, RMM_STREAM_DEFAULT));
    }
    no_faults();
    CHECK(clean);
    CHECK_OK(rmm_allocate(pool, &a, KiB, RMM_STREAM_DEFAULT)); /* still serves */
    CHECK_OK(rmm_deallocate(pool, a, KiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);
}

/* review 26: a pool's sweep of gone streams' states synchronizes the device for the rings of
   foreign streams gone (rmm__so_sweep); that failing, every allocation still succeeds and leaves
   the record alone (failed at stream #30 on the code before) */
TEST(a_pool_sweep_that_cannot_synchronize) {
    rmm_resource *pool = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    size_t i, k;
    void *x = NULL;
    int clean = 1;
    d.initial_bytes = 4 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
    if (!pool) return;
    for (i = 0; i < 40 && clean; i++) { /* (the sweep runs when the states double: at the 32nd) */
        rmm_stream s = NULL;
        CHECK_OK(rmm__stream_create_raw(&s, false));
        if (!s) break;
        rmm__idless_left = 0;
        mark();
        fail("cudaDeviceSynchronize", 1, 1000000);
        for (k = 0; k < RMM__POOL_RING_AFTER; k++) { /* (earns a ring) */
            CHECK_OK(rmm_allocate(pool, &x, 256, s));
            CHECK_OK(rmm_deallocate(pool, x, 256, s));
        }
        CHECK_OK(rmm_allocate(pool, &x, KiB, s));
        CHECK_OK(rmm_deallocate(pool, x, KiB, s)); /* left in its ring */
        no_faults();
        clean = untouched();
        if (!clean) printf("  (stream #%zu: the last error is %s)\n", i, rmm_last_error());
        CHECK_OK(rmm__stream_destroy_raw(s));
    }
    CHECK(clean);
    rmm_resource_destroy(pool);
}

/* audit 25, 10: the arena's sweep of gone streams cannot synchronize; the allocation goes on */
TEST(an_arena_sweep_that_cannot_synchronize) {
    rmm_resource *arena = NULL;
    rmm_arena_desc ad = rmm_arena_desc_default();
    rmm_stream s[200];
    void *p = NULL;
    int i, f, clean = 1;
    ad.arena_bytes = 256 * MiB;
    for (f = 0; f < 2 && clean; f++) {
        CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &ad));
        if (!arena) return;
        for (i = 0; i < 200; i++) {
            if (f) CHECK_OK(rmm__stream_create_raw(&s[i], false));
            else CHECK_OK(rmm_stream_create(&s[i]));
        }
        mark();
        fail("cudaDeviceSynchronize", 1, 1000000);
        for (i = 0; i < 200 && clean; i++) {
            CHECK_OK(rmm_allocate(arena, &p, KiB, s[i]));
            CHECK_OK(rmm_deallocate(arena, p, KiB, s[i]));
            if (f) CHECK_OK(rmm__stream_destroy_raw(s[i]));
            else CHECK_OK(rmm_stream_destroy(s[i]));
            clean = untouched();
        }
        no_faults();
        CHECK(clean);
        if (!clean) printf("  (%s streams, #%d: %s)\n", f ? "foreign" : "library", i - 1, rmm_last_error());
        for (; i < 200; i++) {
            if (f) CHECK_OK(rmm__stream_destroy_raw(s[i]));
            else CHECK_OK(rmm_stream_destroy(s[i]));
        }
        rmm_resource_destroy(arena);
        arena = NULL;
    }
}

/* audit 25, 11 and 12: the graph pool's capture-mode restore, and its release of memory */
TEST(graph_pool_failures_that_are_logged) {
    rmm_graph_pool *gp = NULL;
    const char *calls[4] = {"cudaStreamSynchronize", "cudaStreamDestroy", "cudaFree", "cudaThreadExchangeStreamCaptureMode"};
    int c;
    mark();
    fail("cudaThreadExchangeStreamCaptureMode", 2, 1); /* the restore after fetching the reserve */
    CHECK_OK(rmm_graph_pool_create(&gp, rmm_get_current_device_resource(), MiB));
    no_faults();
    CHECK_UNTOUCHED();
    if (gp) CHECK_OK(rmm_graph_pool_destroy(gp));
    for (c = 0; c < 4; c++) {
        gp = NULL;
        CHECK_OK(rmm_graph_pool_create(&gp, rmm_get_current_device_resource(), MiB));
        if (!gp) continue;
        mark();
        fail(calls[c], 1, 1);
        CHECK_OK(rmm_graph_pool_destroy(gp)); /* no live block: it releases at once */
        no_faults();
        CHECK_UNTOUCHED();
        if (!untouched()) printf("  (%s failing)\n", calls[c]);
    }
}

#include "refusing.h"
/* A clean-up on a failure path (memory given back after a later step failed) that fails too leaves
   the call's own failure as the last error, the one it returns (before: the clean-up's). */
TEST(a_failed_clean_up_leaves_the_call_s_own_failure) {
    rmm_resource refusing = refusing_resource(); /* (tests/refusing.h) */
    rmm_device_buffer b;
    char src[256];
    rmm_status st;
    memset(src, 7, sizeof src);
    fail("cudaMemcpyAsync", 1, 1); /* the copy fails; the buffer's release, a free, is refused too */
    refuse_frees = 1;
    st = rmm_device_buffer_create_from(&b, src, sizeof src, RMM_STREAM_DEFAULT, &refusing);
    no_faults();
    CHECK(st == RMM_ERROR_CUDA);
    CHECK(rmm_last_status() == st);
    CHECK(rmm_last_cuda_error() == 999); /* (the injected failure's cudaErrorUnknown, kept with its message) */
    CHECK_NAMES("cudaMemcpyAsync", "");
    CHECK(refuse_frees == 0); /* the release was made */
    CHECK(b.data == NULL && b.size == 0 && b.capacity == 0); /* a failed create leaves an empty buffer (the block it could not free is lost, logged) */
    refuse_frees = 0;
    { /* an arena whose range, taken on a stream-ordered upstream, cannot be synchronized */
        rmm_resource *arena = NULL;
        rmm_arena_desc ad = rmm_arena_desc_default();
        ad.arena_bytes = 16 * MiB;
        fail("cudaStreamSynchronize", 1, 1);
        refuse_frees = 1;
        st = rmm_arena_create(&arena, &refusing, &ad);
        no_faults();
        CHECK(st == RMM_ERROR_CUDA && arena == NULL);
        CHECK_NAMES("cudaStreamSynchronize", "arena");
        CHECK(refuse_frees == 0);
        refuse_frees = 0;
        if (arena) rmm_resource_destroy(arena);
    }
    { /* a pool's growth on a foreign stream whose event, recorded for the new chunk, fails */
        rmm_resource *pool = NULL;
        rmm_pool_desc d = rmm_pool_desc_default();
        rmm_stream foreign = NULL;
        void *p = NULL;
        d.initial_bytes = 0; /* (no other stream holds memory: the allocation grows at once) */
        CHECK_OK(rmm_pool_create(&pool, &refusing, &d));
        CHECK_OK(rmm__stream_create_raw(&foreign, false));
        if (pool && foreign) {
            fail("cudaEventRecord", 1, 1);
            refuse_frees = 1;
            CHECK_STATUS(rmm_allocate(pool, &p, 8 * MiB, foreign), RMM_ERROR_CUDA);
            no_faults();
            CHECK_NAMES("cudaEventRecord", "pool");
            CHECK(refuse_frees == 0);
            refuse_frees = 0;
        }
        if (foreign) CHECK_OK(rmm__stream_destroy_raw(foreign));
        rmm_resource_destroy(pool);
    }
    { /* a fixed-size resource's growth on a foreign stream over a stream-ordered upstream whose
         event, recorded for the new chunk, fails: the chunk goes back, refused */
        rmm_resource *fixed = NULL;
        rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
        rmm_stream foreign = NULL;
        void *held = NULL, *p = NULL;
        fd.block_bytes = 4096;
        fd.blocks_to_preallocate = 1;
        CHECK_OK(rmm_fixed_size_create(&fixed, &refusing, &fd));
        CHECK_OK(rmm__stream_create_raw(&foreign, false));
        if (fixed && foreign) {
            CHECK_OK(rmm_allocate(fixed, &held, 4096, RMM_STREAM_DEFAULT)); /* (its one block: the next allocation grows) */
            fail("cudaEventRecord", 1, 1);
            refuse_frees = 1;
            CHECK_STATUS(rmm_allocate(fixed, &p, 4096, foreign), RMM_ERROR_CUDA);
            no_faults();
            CHECK(p == NULL);
            CHECK_NAMES("cudaEventRecord", "fixed-size");
            CHECK(refuse_frees == 0); /* the chunk's free was made */
            refuse_frees = 0;
            CHECK_OK(rmm_deallocate(fixed, held, 4096, RMM_STREAM_DEFAULT));
            CHECK_OK(rmm_resource_validate(fixed));
        }
        if (foreign) CHECK_OK(rmm__stream_destroy_raw(foreign));
        if (fixed) rmm_resource_destroy(fixed);
    }
    { /* a stream pool whose third stream cannot be made, and whose first two cannot be destroyed
         either: the creation's failure is the one reported */
        rmm_stream_pool *sp = NULL;
        rmm_status got;
        fail("cudaStreamCreateWithFlags|cudaStreamDestroy", 3, 2); /* the third creation, then the second stream's destroy */
        got = rmm_stream_pool_create(&sp, 4);
        no_faults();
        CHECK(got == RMM_ERROR_CUDA && sp == NULL);
        CHECK_NAMES("cudaStreamCreateWithFlags", "stream pool");
        if (sp) rmm_stream_pool_destroy(sp);
    }
    { /* a buffer's growth whose copy fails, and whose new block's free is refused: the copy's
         failure is reported, and the buffer keeps its block and bytes */
        rmm_device_buffer g;
        void *old;
        CHECK_OK(rmm_device_buffer_create_from(&g, src, sizeof src, RMM_STREAM_DEFAULT, &refusing));
        old = g.data;
        fail("cudaMemcpyAsync", 1, 1);
        refuse_frees = 1;
        CHECK_STATUS(rmm_device_buffer_resize(&g, 4 * sizeof src, RMM_STREAM_DEFAULT), RMM_ERROR_CUDA);
        no_faults();
        CHECK_NAMES("cudaMemcpyAsync", "buffer copy");
        CHECK(refuse_frees == 0); /* the new block's free was made */
        CHECK(g.data == old && g.size == sizeof src && g.capacity == sizeof src);
        /* the old block's free is refused, then the new block's too: the first refusal is reported */
        refuse_frees = 2;
        CHECK_STATUS(rmm_device_buffer_reserve(&g, 8 * sizeof src, RMM_STREAM_DEFAULT), RMM_ERROR_CUDA);
        CHECK_NAMES("(1 more to refuse)", "buffer free");
        CHECK(refuse_frees == 0);
        CHECK(g.data == old && g.size == sizeof src && g.capacity == sizeof src);
        refuse_frees = 0;
        CHECK_OK(rmm_device_buffer_release(&g));
    }
    { /* a prefetch that fails, and the block's free after it refused: the prefetch's failure is
         reported (red team 30: the free's replaced it) */
        rmm_resource *pf = NULL;
        void *p = NULL;
        CHECK_OK(rmm_prefetch_adaptor_create(&pf, &refusing));
        if (pf) {
            fail("cudaMemPrefetchAsync", 1, 1);
            refuse_frees = 1;
            CHECK_STATUS(rmm_allocate(pf, &p, 4096, RMM_STREAM_DEFAULT), RMM_ERROR_CUDA);
            no_faults();
            CHECK(p == NULL);
            CHECK_NAMES("cudaMemPrefetchAsync", "prefetch");
            CHECK(refuse_frees == 0); /* the block's free was made */
            refuse_frees = 0;
            rmm_resource_destroy(pf);
        }
    }
    { /* a graph pool whose reserve, taken, cannot be synchronized, and whose free is refused: the
         synchronize's failure is reported */
        rmm_graph_pool *gp = NULL;
        fail("cudaStreamSynchronize", 1, 1);
        refuse_frees = 1;
        CHECK_STATUS(rmm_graph_pool_create(&gp, &refusing, MiB), RMM_ERROR_CUDA);
        no_faults();
        CHECK(gp == NULL);
        CHECK_NAMES("cudaStreamSynchronize", "graph pool");
        CHECK(refuse_frees == 0);
        refuse_frees = 0;
        if (gp) CHECK_OK(rmm_graph_pool_destroy(gp));
    }
}

/* rmm_prefetch checks its device against the device count; a count that cannot be read checks
   nothing and leaves no failure behind (review 26b's L6: the wrap had no test). */
TEST(a_prefetch_whose_device_count_fails_leaves_no_failure) {
    int count = -1;
    mark();
    rmm_host_backend_fail_calls("cudaGetDeviceCount", 1, 1, RMM_ERROR_CUDA);
    CHECK_OK(rmm_prefetch(NULL, 0, 0, RMM_STREAM_DEFAULT));
    CHECK(rmm__device_count(&count) == RMM_SUCCESS && count == RMM_HOST_BACKEND_DEVICES); /* (the failure was used up: the count was asked) */
    rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
    CHECK_UNTOUCHED();
    CHECK_STATUS(rmm_prefetch(NULL, 0, RMM_HOST_BACKEND_DEVICES, RMM_STREAM_DEFAULT), RMM_ERROR_INVALID_ARGUMENT); /* (read: checked) */
    rmm_host_backend_fail_calls("cudaGetDeviceCount", 1, 1, RMM_ERROR_CUDA);
    CHECK_STATUS(rmm__device_count(&count), RMM_ERROR_CUDA);
    CHECK(count == 0);
    rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
}
/* A re-entrance refusal worked around inside a keep/back window: after the back, a later,
   unrelated failure does not read as re-entrant (the mark is restored with the record; review 26b) */
TEST(the_re_entrance_mark_is_restored_with_the_record) {
    rmm__kept_error k;
    mark();
    rmm__error_keep(&k);
    (void)rmm__reentrant("pool", "allocate");
    rmm__error_back(&k);
    CHECK_UNTOUCHED();
    CHECK(!rmm__last_failure_reentrant());
    (void)rmm__fail(RMM_ERROR_CUDA, "%s", "a later, unrelated failure");
    CHECK(!rmm__last_failure_reentrant());
    (void)rmm__reentrant("pool", "allocate"); /* and a refusal still reads as one */
    CHECK(rmm__last_failure_reentrant());
}
/* Retries that succeed (the API.md audit of session 31, finding 4: both left the failed try as the
   last error): a geometric pool with a maximum halves its growth when upstream refuses it, and the
   failure-callback adaptor retries while its callback says so. */
static int retry_calls;
static bool retry_once(size_t bytes, void *arg) { (void)bytes, (void)arg; return ++retry_calls < 2; }
static rmm_status refuse_first(void **p, size_t bytes, rmm_stream s, void *arg) {
    if (retry_calls == 0) return rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "refuse_first: refused %zu bytes", bytes);
    return rmm_allocate((rmm_resource *)arg, p, bytes, s);
}
static void refuse_first_free(void *p, size_t bytes, rmm_stream s, void *arg) { (void)rmm_deallocate((rmm_resource *)arg, p, bytes, s); }
TEST(retries_that_succeed_leave_no_failure) {
    rmm_resource *pool = NULL, *cb = NULL, *fc = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    void *p = NULL;
    d.maximum_bytes = 64 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
    if (pool) {
        mark();
        rmm_host_backend_fail_calls("cudaMalloc", 1, 1, RMM_ERROR_OUT_OF_MEMORY); /* the first growth refused, the halved one made */
        CHECK_OK(rmm_allocate(pool, &p, MiB, RMM_STREAM_DEFAULT));
        rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
        CHECK_UNTOUCHED();
        CHECK_OK(rmm_deallocate(pool, p, MiB, RMM_STREAM_DEFAULT));
        rmm_resource_destroy(pool);
    }
    retry_calls = 0;
    CHECK_OK(rmm_callback_resource_create(&cb, refuse_first, refuse_first_free, rmm_get_current_device_resource()));
    if (cb) CHECK_OK(rmm_failure_callback_adaptor_create(&fc, cb, retry_once, NULL));
    if (fc) {
        mark();
        CHECK_OK(rmm_allocate(fc, &p, 1000, RMM_STREAM_DEFAULT));
        CHECK(retry_calls == 1);
        CHECK_UNTOUCHED();
        CHECK_OK(rmm_deallocate(fc, p, 1000, RMM_STREAM_DEFAULT));
        /* the record kept is the one the call found, a newer one too (the adaptor keeps a snapshot
           per thread, taken again when the record has changed) */
        retry_calls = 0;
        (void)rmm_set_last_error(RMM_ERROR_IO, "%s", "a newer failure of the caller's");
        CHECK_OK(rmm_allocate(fc, &p, 1000, RMM_STREAM_DEFAULT));
        CHECK(retry_calls == 1);
        CHECK(rmm_last_status() == RMM_ERROR_IO && strcmp(rmm_last_error(), "a newer failure of the caller's") == 0);
        CHECK_OK(rmm_deallocate(fc, p, 1000, RMM_STREAM_DEFAULT));
        /* a retry that fails again still reports the try's failure */
        retry_calls = 0;
        mark();
        rmm_host_backend_fail_calls("cudaMalloc", 1, 2, RMM_ERROR_OUT_OF_MEMORY);
        retry_calls = 1; /* the callback says no at once */
        CHECK_STATUS(rmm_allocate(fc, &p, 1000, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
        rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
        CHECK(!untouched());
        rmm_resource_destroy(fc);
    }
    rmm_resource_destroy(cb);
}
/* The red team of 2026-11-30. A record put back sets the serial back, so serials repeat: the
   failure-callback adaptor's snapshot, matched by serial, brought back a record the thread had
   since left behind (here a pool's halved growth, which puts the caller's empty record back; then
   two failures of the caller's, the second with the serial the snapshot held). */
static bool raise_limit_once(size_t bytes, void *arg) {
    (void)bytes;
    if (retry_calls++ > 0) return false;
    return rmm_limiting_set_limit((rmm_resource *)arg, 64 * MiB) == RMM_SUCCESS;
}
TEST(a_record_put_back_does_not_revive_an_older_snapshot) {
    rmm_resource *lim = NULL, *fc = NULL, *pool = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    void *p = NULL, *q = NULL;
    CHECK_OK(rmm_limiting_adaptor_create(&lim, rmm_get_current_device_resource(), 1 * MiB));
    if (lim) CHECK_OK(rmm_failure_callback_adaptor_create(&fc, lim, raise_limit_once, lim));
    d.maximum_bytes = 4 * MiB;
    if (fc) CHECK_OK(rmm_pool_create(&pool, fc, &d));
    if (!pool) {
        rmm_resource_destroy(fc);
        rmm_resource_destroy(lim);
        return;
    }
    retry_calls = 1; /* the callback says no: the pool's 2 MiB growth is refused, the halved 1 MiB made */
    CHECK_OK(rmm_allocate(pool, &p, 256, RMM_STREAM_DEFAULT));
    (void)rmm_set_last_error(RMM_ERROR_IO, "%s", "a failure of the caller's");
    mark();
    retry_calls = 0; /* now an allocation through the adaptor fails once, and its retry succeeds */
    CHECK_OK(rmm_limiting_set_limit(lim, 1 * MiB));
    CHECK_OK(rmm_allocate(fc, &q, 2 * MiB, RMM_STREAM_DEFAULT));
    CHECK(retry_calls == 1);
    CHECK_UNTOUCHED();
    CHECK_OK(rmm_deallocate(fc, q, 2 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool, p, 256, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);
    rmm_resource_destroy(fc);
    rmm_resource_destroy(lim);
}
/* Allocations that succeed on a second try after a growth failed (the red team of 2026-11-30): the
   pool's and the fixed-size resource's when another stream's uncovered frees, covered by a device
   synchronize, serve them, and an on-demand pool's when a free block serves a request whose growth
   failed. */
TEST(allocations_served_after_a_failed_growth_leave_no_failure) {
    rmm_resource *lim = NULL, *pool = NULL, *fx = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
    rmm_stream a = NULL, b = NULL;
    void *p = NULL, *q = NULL, *t[300];
    int i;
    CHECK_OK(rmm__stream_create_raw(&a, false)); /* streams the program made (foreign) */
    CHECK_OK(rmm__stream_create_raw(&b, false));
    /* the pool: a's 1 MiB free waits in a's ring (a past its first 256 frees); b's allocation finds
       no memory, its growth is refused, and the synchronize that covers a's ring serves it */
    CHECK_OK(rmm_limiting_adaptor_create(&lim, rmm_get_current_device_resource(), 1 * MiB));
    d.initial_bytes = 1 * MiB;
    if (lim) CHECK_OK(rmm_pool_create(&pool, lim, &d));
    if (pool) {
        for (i = 0; i < 300; i++) CHECK_OK(rmm_allocate(pool, &t[i], 256, a));
        for (i = 0; i < 300; i++) CHECK_OK(rmm_deallocate(pool, t[i], 256, a));
        CHECK_OK(rmm_allocate(pool, &p, MiB, a));
        CHECK_OK(rmm_deallocate(pool, p, MiB, a));
        mark();
        CHECK_OK(rmm_allocate(pool, &q, MiB, b));
        CHECK_UNTOUCHED();
        CHECK_OK(rmm_deallocate(pool, q, MiB, b));
        rmm_resource_destroy(pool);
    }
    rmm_resource_destroy(lim);
    lim = NULL;
    /* the fixed-size resource: the same with four blocks of 64 KiB */
    fd.block_bytes = 64 * KiB;
    fd.blocks_to_preallocate = 4;
    CHECK_OK(rmm_limiting_adaptor_create(&lim, rmm_get_current_device_resource(), 4 * 64 * KiB));
    if (lim) CHECK_OK(rmm_fixed_size_create(&fx, lim, &fd));
    if (fx) {
        for (i = 0; i < 300; i++) {
            CHECK_OK(rmm_allocate(fx, &p, 64 * KiB, a));
            CHECK_OK(rmm_deallocate(fx, p, 64 * KiB, a));
        }
        for (i = 0; i < 4; i++) CHECK_OK(rmm_allocate(fx, &t[i], 64 * KiB, a));
        for (i = 0; i < 4; i++) CHECK_OK(rmm_deallocate(fx, t[i], 64 * KiB, a));
        mark();
        CHECK_OK(rmm_allocate(fx, &q, 64 * KiB, b));
        CHECK_UNTOUCHED();
        CHECK_OK(rmm_deallocate(fx, q, 64 * KiB, b));
        rmm_resource_destroy(fx);
    }
    rmm_resource_destroy(lim);
    /* an on-demand pool below its peak: a 4 MiB request's growth is refused, a free chunk serves it */
    d = rmm_pool_desc_default();
    d.growth = RMM_POOL_GROWTH_ON_DEMAND;
    pool = NULL;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
    if (pool) {
        void *l1 = NULL, *l2 = NULL, *s2 = NULL;
        CHECK_OK(rmm_allocate(pool, &l1, 16 * MiB, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_allocate(pool, &l2, 16 * MiB, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_allocate(pool, &s2, 1 * MiB, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_deallocate(pool, l2, 16 * MiB, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_pool_trim(pool, NULL));
        CHECK_OK(rmm_deallocate(pool, l1, 16 * MiB, RMM_STREAM_DEFAULT));
        mark();
        rmm_host_backend_fail_calls("cudaMalloc", 1, 100, RMM_ERROR_OUT_OF_MEMORY);
        CHECK_OK(rmm_allocate(pool, &p, 4 * MiB, RMM_STREAM_DEFAULT));
        rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
        CHECK_UNTOUCHED();
        CHECK_OK(rmm_deallocate(pool, p, 4 * MiB, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_deallocate(pool, s2, 1 * MiB, RMM_STREAM_DEFAULT));
        rmm_resource_destroy(pool);
    }
    CHECK_OK(rmm__stream_destroy_raw(a));
    CHECK_OK(rmm__stream_destroy_raw(b));
}
/* A foreign stream's id asked as a hint, before a lock or to skip a lookup, whose failure the call
   leaves to the locked path that asks again (and succeeds here), and a virtual pool whose page-in
   works around a refused cuMemCreate by moving idle pages: the red team of 2026-11-30 found both
   failures left behind by calls that succeeded. */
static void id_hint_fails_once(rmm_resource *mr, rmm_stream s, const char *label) {
    void *p = NULL;
    CHECK_OK(rmm_allocate(mr, &p, 1000, s)); /* the stream is this thread's foreign hint now */
    CHECK_OK(rmm_deallocate(mr, p, 1000, s));
    mark();
    rmm_host_backend_fail_calls("cudaStreamGetId", 1, 1, RMM_ERROR_CUDA);
    CHECK_OK(rmm_allocate(mr, &p, 1000, s));
    rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
    if (!untouched()) printf("  (%s, allocate)\n", label);
    CHECK_UNTOUCHED();
    mark();
    rmm_host_backend_fail_calls("cudaStreamGetId", 1, 1, RMM_ERROR_CUDA);
    CHECK_OK(rmm_deallocate(mr, p, 1000, s));
    rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
    if (!untouched()) printf("  (%s, free)\n", label);
    CHECK_UNTOUCHED();
}
/* A virtual pool whose request needs pages first looks for another stream's free memory on mapped
   pages whose work is known done, asking that stream's event: a query that fails reads as "not
   done" and leaves no failure behind. Until session 43 the allocation succeeded with the failed
   cudaEventQuery as the thread's last error (red team 43). The donor is a foreign stream whose
   frees were covered by an event; the taker's own fit lies on pages not yet backed. */
TEST(a_virtual_pool_s_failed_donor_query_leaves_no_failure) {
    rmm_resource *vpool = NULL;
    rmm_pool_desc vd = rmm_pool_desc_default();
    rmm_stream f = NULL, b = NULL;
    void *a[4] = {NULL, NULL, NULL, NULL}, *q = NULL, *big = NULL;
    int i;
    vd.growth = RMM_POOL_GROWTH_VIRTUAL;
    vd.virtual_bytes = 256 * MiB;
    CHECK_OK(rmm__stream_create_raw(&f, false));
    CHECK_OK(rmm_stream_create(&b));
    CHECK_OK(rmm_pool_create(&vpool, NULL, &vd));
    if (!f || !b || !vpool) goto out;
    for (i = 0; i < 4; i++) CHECK_OK(rmm_allocate(vpool, &a[i], 6 * MiB, f));
    for (i = 0; i < 4; i++) CHECK_OK(rmm_deallocate(vpool, a[i], 6 * MiB, f));
    CHECK_OK(rmm_allocate(vpool, &q, 1 * MiB, b)); /* b's own memory: a fit past the backed pages */
    mark();
    rmm_host_backend_fail_calls("cudaEventQuery", 1, 1000000, RMM_ERROR_CUDA);
    CHECK_OK(rmm_allocate(vpool, &big, 8 * MiB, b));
    rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
    CHECK_UNTOUCHED();
    if (big) CHECK_OK(rmm_deallocate(vpool, big, 8 * MiB, b));
    if (q) CHECK_OK(rmm_deallocate(vpool, q, 1 * MiB, b));
    CHECK_OK(rmm_resource_validate(vpool));
out:
    rmm_resource_destroy(vpool);
    if (b) CHECK_OK(rmm_stream_destroy(b));
    if (f) CHECK_OK(rmm__stream_destroy_raw(f));
}
TEST(a_failed_id_hint_and_a_worked_around_page_in_leave_no_failure) {
    rmm_resource *pool = NULL, *vpool = NULL, *fixed = NULL, *arena = NULL;
    rmm_pool_desc vd = rmm_pool_desc_default();
    rmm_arena_desc ad = rmm_arena_desc_default();
    rmm_stream s = NULL;
    void *a[4] = {NULL, NULL, NULL, NULL}, *b = NULL;
    int i;
    vd.growth = RMM_POOL_GROWTH_VIRTUAL;
    vd.virtual_bytes = 256 * MiB;
    ad.arena_bytes = 64 * MiB;
    CHECK_OK(rmm__stream_create_raw(&s, false));
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
    CHECK_OK(rmm_pool_create(&vpool, NULL, &vd));
    CHECK_OK(rmm_fixed_size_create(&fixed, rmm_get_current_device_resource(), NULL));
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &ad));
    if (pool) id_hint_fails_once(pool, s, "pool");
    if (vpool) id_hint_fails_once(vpool, s, "virtual pool");
    if (fixed) id_hint_fails_once(fixed, s, "fixed-size");
    if (arena) { /* the arena asks the id again after a run of RMM__IDLESS_RUN allocations without it */
        void *q[RMM__IDLESS_RUN + 8];
        CHECK_OK(rmm_allocate(arena, &b, 1000, s));
        for (i = 0; i < RMM__IDLESS_RUN + 8; i++) {
            mark();
            rmm_host_backend_fail_calls("cudaStreamGetId", 1, 1, RMM_ERROR_CUDA);
            CHECK_OK(rmm_allocate(arena, &q[i], 1000, s));
            rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
            if (!untouched()) {
                printf("  (arena, allocation %d)\n", i);
                CHECK_UNTOUCHED();
                break;
            }
        }
        while (i-- > 0) CHECK_OK(rmm_deallocate(arena, q[i], 1000, s));
        CHECK_OK(rmm_deallocate(arena, b, 1000, s));
        b = NULL;
    }
    if (vpool) { /* idle pages in holes; a request past them whose first cuMemCreate is refused */
        for (i = 0; i < 4; i++) CHECK_OK(rmm_allocate(vpool, &a[i], 6 * MiB, RMM_STREAM_DEFAULT));
        for (i = 0; i < 4; i += 2) CHECK_OK(rmm_deallocate(vpool, a[i], 6 * MiB, RMM_STREAM_DEFAULT));
        mark();
        rmm_host_backend_fail_calls("cuMemCreate", 1, 1, RMM_ERROR_OUT_OF_MEMORY);
        CHECK_OK(rmm_allocate(vpool, &b, 20 * MiB, RMM_STREAM_DEFAULT));
        rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
        CHECK_UNTOUCHED();
        CHECK_OK(rmm_deallocate(vpool, b, 20 * MiB, RMM_STREAM_DEFAULT));
        for (i = 1; i < 4; i += 2) CHECK_OK(rmm_deallocate(vpool, a[i], 6 * MiB, RMM_STREAM_DEFAULT));
    }
    rmm_resource_destroy(arena);
    rmm_resource_destroy(fixed);
    rmm_resource_destroy(vpool);
    rmm_resource_destroy(pool);
    CHECK_OK(rmm__stream_destroy_raw(s));
}
#endif

int main(void) {
    HARNESS_INIT();
    RUN(ordinary_work_leaves_the_last_error_alone);
    RUN(record_stream_where_the_base_is_unknown_leaves_the_last_error_alone);
#if defined(RMM_BACKEND_HOST)
    RUN(a_failed_device_restore_is_logged_not_left_behind);
    RUN(a_callback_failing_after_a_worked_around_call_gets_its_own_message);
    RUN(a_stream_destroy_that_synchronizes_instead_of_an_event);
    RUN(a_failed_wait_for_another_stream_leaves_no_failure);
    RUN(record_stream_frees_that_work_around_a_failure);
    RUN(foreign_stream_queries_that_fail_read_as_not_yet);
    RUN(memory_that_cannot_be_given_back_is_kept_quietly);
    RUN(a_pool_sweep_that_cannot_synchronize);
    RUN(an_arena_sweep_that_cannot_synchronize);
    RUN(graph_pool_failures_that_are_logged);
    RUN(a_failed_clean_up_leaves_the_call_s_own_failure);
    RUN(the_re_entrance_mark_is_restored_with_the_record);
    RUN(a_prefetch_whose_device_count_fails_leaves_no_failure);
    RUN(retries_that_succeed_leave_no_failure);
    RUN(a_record_put_back_does_not_revive_an_older_snapshot);
    RUN(allocations_served_after_a_failed_growth_leave_no_failure);
    RUN(a_failed_id_hint_and_a_worked_around_page_in_leave_no_failure);
    RUN(a_virtual_pool_s_failed_donor_query_leaves_no_failure);
#endif
    return harness_main_end();
}
