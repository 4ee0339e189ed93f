/* RMM_DEBUG's own checks (this file defines it, so every build of it has them, the GPU's included):
   the cudaMalloc-family and async resources keep a record of each live block, so that a double free,
   a pointer they did not hand out, a block of another family or a wrong size is CORRUPTION with
   nothing freed (release builds leave those to CUDA, which frees the base of a pool's chunk under
   the pool); and the fixed-size resource and the arena validate their invariants after their
   calls (RMM_ASSERT, counted here instead of aborting). Added in session 31 after an audit against
   API.md, whose RMM_DEBUG promised both. */
#ifndef RMM_DEBUG /* (the host lane passes -DRMM_DEBUG itself) */
#define RMM_DEBUG
#endif
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1
#include <stdlib.h>
static int debug_asserts; /* RMM_ASSERTs that failed */
#define RMM_ASSERT(x) ((void)((x) || (debug_asserts++, 0)))
/* the library's own host memory: host_fail_nth (not 0) fails its nth request from now */
static int host_fail_nth;
static size_t host_fail_realloc_of; /* not 0: the next realloc of exactly this many bytes fails */
static size_t host_fail_size;       /* not 0: every request of exactly this many bytes fails */
static void *test_sys_malloc(size_t n) { return (host_fail_nth && --host_fail_nth == 0) || (host_fail_size && n == host_fail_size) ? NULL : malloc(n); }
static void *test_sys_realloc(void *p, size_t n) {
    if (host_fail_realloc_of && n == host_fail_realloc_of) {
        host_fail_realloc_of = 0;
        return NULL;
    }
    return (host_fail_nth && --host_fail_nth == 0) ? NULL : realloc(p, n);
}
#define RMM_SYS_MALLOC(n) test_sys_malloc(n)
#define RMM_SYS_REALLOC(p, n) test_sys_realloc(p, n)
#define RMM_SYS_FREE(p) free(p)
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "harness.h"
#include <string.h>

#define MiB ((size_t)1 << 20)

TEST(base_resources_check_their_frees) {
    rmm_resource *cuda = NULL, *cuda2 = NULL, *managed = NULL, *pool = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    void *p = NULL, *q = NULL, *m = NULL, *b = NULL;
    int on_stack = 0;
    NEED_GPU();
    CHECK_OK(rmm_cuda_resource_create(&cuda));
    CHECK_OK(rmm_cuda_resource_create(&cuda2));
    CHECK_OK(rmm_managed_resource_create(&managed));
    if (!cuda || !cuda2 || !managed) goto out;
    CHECK_OK(rmm_allocate(cuda, &p, 1000, RMM_STREAM_DEFAULT));
    /* a wrong size, a stranger's pointer, an interior pointer: refused, the block stays */
    CHECK_STATUS(rmm_deallocate(cuda, p, 4096, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK(strstr(rmm_last_error(), "the block holds 1000 bytes") != NULL);
    CHECK_STATUS(rmm_deallocate(cuda, &on_stack, 16, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK_STATUS(rmm_deallocate(cuda, (char *)p + 256, 256, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    /* another family's block (managed memory freed through a cuda resource) */
    CHECK_OK(rmm_allocate(managed, &m, 512, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_deallocate(cuda, m, 512, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK(strstr(rmm_last_error(), "another kind") != NULL);
    CHECK_OK(rmm_deallocate(managed, m, 512, RMM_STREAM_DEFAULT));
    /* two cuda resources of one device free each other's memory (rmm_resource_is_equal) */
    CHECK_OK(rmm_deallocate(cuda2, p, 1000, RMM_STREAM_DEFAULT));
    /* a double free */
    CHECK_STATUS(rmm_deallocate(cuda, p, 1000, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK(strstr(rmm_last_error(), "freed already") != NULL);
    /* an over-aligned block: checked the same way */
    CHECK_OK(rmm_allocate_aligned(cuda, &q, 3000, 8192, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_deallocate_aligned(cuda, q, 4096, 8192, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK_OK(rmm_deallocate_aligned(cuda, q, 3000, 8192, RMM_STREAM_DEFAULT));
    /* the base of a pool's chunk freed through the pool's upstream with a block's size: refused
       (a release build frees the chunk under the pool) and the pool stays whole */
    pd.initial_bytes = 4 * MiB;
    CHECK_OK(rmm_pool_create(&pool, cuda, &pd));
    if (pool) {
        CHECK_OK(rmm_allocate(pool, &b, 4096, RMM_STREAM_DEFAULT));
        CHECK_STATUS(rmm_deallocate(cuda, b, 4096, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
        CHECK_OK(rmm_pool_validate(pool));
        CHECK_OK(rmm_deallocate(pool, b, 4096, RMM_STREAM_DEFAULT));
        rmm_resource_destroy(pool);
    }
out:
    rmm_resource_destroy(managed);
    rmm_resource_destroy(cuda2);
    rmm_resource_destroy(cuda);
}

TEST(async_resource_checks_its_frees) {
    rmm_resource *async = NULL;
    void *p = NULL;
    NEED_GPU();
    if (rmm_async_resource_create(&async, NULL) != RMM_SUCCESS) {
        printf("  (no async resource here: %s)\n", rmm_last_error());
        return;
    }
    CHECK_OK(rmm_allocate(async, &p, 2000, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_deallocate(async, p, 2001, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK_OK(rmm_deallocate(async, p, 2000, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_deallocate(async, p, 2000, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    rmm_resource_destroy(async);
}

/* A broken invariant of a fixed-size resource (its count of used blocks, made wrong here) is caught
   by the validation after its next call: the RMM_ASSERT fails (counted), the message is printed, and
   the call's own status and last error are kept. */
/* A fixed-size resource of 8 blocks of 4 KiB over the current device resource, or NULL. */
static rmm_resource *small_fixed(void) {
    rmm_resource *fixed = NULL;
    rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
    fd.block_bytes = 4096;
    fd.blocks_to_preallocate = 8;
    CHECK_OK(rmm_fixed_size_create(&fixed, rmm_get_current_device_resource(), &fd));
    return fixed;
}
TEST(fixed_size_validates_after_its_calls) {
    rmm_resource *fixed = NULL;
    void *p = NULL, *q = NULL;
    int before;
    NEED_GPU();
    if ((fixed = small_fixed()) == NULL) return;
    CHECK_OK(rmm_allocate(fixed, &p, 4096, RMM_STREAM_DEFAULT));
    CHECK(debug_asserts == 0);
    (void)rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "%s", "the caller's earlier failure");
    before = debug_asserts;
    ((rmm__fixed *)fixed)->used_blocks++; /* the count no longer matches the free lists */
    CHECK_OK(rmm_allocate(fixed, &q, 4096, RMM_STREAM_DEFAULT));
    CHECK(debug_asserts == before + 1);
    CHECK(rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT && strcmp(rmm_last_error(), "the caller's earlier failure") == 0);
    ((rmm__fixed *)fixed)->used_blocks--;
    CHECK_OK(rmm_deallocate(fixed, q, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(fixed, p, 4096, RMM_STREAM_DEFAULT));
    CHECK(debug_asserts == before + 1);
    rmm_resource_destroy(fixed);
}

/* A free must pass the size the block was allocated with (API.md: "debug builds check it"): the
   fixed-size resource, and so every binning bin, freed a block given any size up to the block's
   (the red team of 2026-11-30), and an adaptor above it kept the wrong count for good. CORRUPTION
   now, nothing freed; the right size frees it after. */
TEST(fixed_size_checks_the_size_of_a_free) {
    rmm_resource *fixed = NULL, *bin = NULL, *stats = NULL;
    rmm_binning_desc bd = rmm_binning_desc_default();
    rmm_statistics st;
    void *p = NULL, *q = NULL;
    NEED_GPU();
    if ((fixed = small_fixed()) == NULL) return;
    CHECK_OK(rmm_allocate(fixed, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_deallocate(fixed, p, 4000, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK(strstr(rmm_last_error(), "allocated with 1000 bytes") != NULL);
    CHECK_STATUS(rmm_deallocate(fixed, p, 1024, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION); /* (the same rounded size: still not the one allocated) */
    CHECK_OK(rmm_deallocate(fixed, p, 1000, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(fixed);
    bd.min_size_exponent = 10;
    bd.max_size_exponent = 12;
    CHECK_OK(rmm_binning_create(&bin, rmm_get_current_device_resource(), &bd));
    if (bin) CHECK_OK(rmm_statistics_adaptor_create(&stats, bin));
    if (!stats) {
        rmm_resource_destroy(bin);
        return;
    }
    CHECK_OK(rmm_allocate(stats, &q, 3000, RMM_STREAM_DEFAULT)); /* the 4 KiB bin */
    CHECK_STATUS(rmm_deallocate(stats, q, 2100, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION); /* routed to the same bin */
    CHECK_OK(rmm_statistics_get(stats, &st));
    CHECK(st.bytes.value == 3000 && st.count.value == 1);
    CHECK_OK(rmm_deallocate(stats, q, 3000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_statistics_get(stats, &st));
    CHECK(st.bytes.value == 0 && st.count.value == 0);
    rmm_resource_destroy(stats);
    rmm_resource_destroy(bin);
}

/* (The host-memory hooks above serve this one too, which is not RMM_DEBUG's.) A fixed-size
   allocation whose first try failed for want of host memory inside the growth (its stack's
   reserve), before the growth kept the thread's error record, and whose second try, after a
   synchronize covered another stream's blocks, succeeded: the failure stayed behind (review 32). */
TEST(a_fixed_size_growth_out_of_host_memory_then_served_leaves_no_failure) {
    rmm_resource *lim = NULL, *fx = NULL;
    rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
    rmm_stream a = NULL, b = NULL;
    void *p = NULL, *t[4];
    int i;
    NEED_GPU();
    fd.block_bytes = 64 << 10;
    fd.blocks_to_preallocate = 4;
    CHECK_OK(rmm__stream_create_raw(&a, false));
    CHECK_OK(rmm__stream_create_raw(&b, false));
    CHECK_OK(rmm_limiting_adaptor_create(&lim, rmm_get_current_device_resource(), 4 * fd.block_bytes));
    if (lim) CHECK_OK(rmm_fixed_size_create(&fx, lim, &fd));
    if (fx) {
        for (i = 0; i < 300; i++) { /* a past its first 256 frees: it parks its frees uncovered */
            CHECK_OK(rmm_allocate(fx, &p, fd.block_bytes, a));
            CHECK_OK(rmm_deallocate(fx, p, fd.block_bytes, a));
        }
        for (i = 0; i < 4; i++) CHECK_OK(rmm_allocate(fx, &t[i], fd.block_bytes, a));
        for (i = 0; i < 4; i++) CHECK_OK(rmm_deallocate(fx, t[i], fd.block_bytes, a));
        (void)rmm_set_last_error(RMM_ERROR_IO, "%s", "the caller's own record");
        host_fail_realloc_of = 4 * sizeof(rmm__fentry); /* b's stack reserve for a new chunk */
        CHECK_OK(rmm_allocate(fx, &p, fd.block_bytes, b));
        CHECK(host_fail_realloc_of == 0); /* (the failure was made) */
        host_fail_realloc_of = 0;
        CHECK(rmm_last_status() == RMM_ERROR_IO && strcmp(rmm_last_error(), "the caller's own record") == 0);
        CHECK_OK(rmm_deallocate(fx, p, fd.block_bytes, b));
        rmm_resource_destroy(fx);
    }
    rmm_resource_destroy(lim);
    CHECK_OK(rmm__stream_destroy_raw(a));
    CHECK_OK(rmm__stream_destroy_raw(b));
}

/* The record's claim while a free is in flight (review 31: a failed free put its record back
   blindly, over a newer record of the same address): a second free meanwhile is refused; a failed
   free puts the record back; a record made meanwhile for the same address (the driver released the
   memory though it reported a failure, and handed it out again) stays, and the stale one goes. */
TEST(a_free_in_flight_holds_its_record) {
    rmm_resource *cuda = NULL;
    rmm__claim c, c2;
    void *p = NULL;
    uintptr_t fam;
    NEED_GPU();
    CHECK_OK(rmm_cuda_resource_create(&cuda));
    if (!cuda) return;
    fam = rmm__base_family((rmm__base_resource *)cuda);
    CHECK_OK(rmm_allocate(cuda, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm__dbg_take("test", p, 1000, fam, &c)); /* a free in flight */
    CHECK_STATUS(rmm_deallocate(cuda, p, 1000, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK(strstr(rmm_last_error(), "another thread is freeing it now") != NULL);
    rmm__dbg_settle(p, &c, false); /* it failed: the record is back */
    CHECK_OK(rmm__dbg_take("test", p, 1000, fam, &c2));
    CHECK(rmm__dbg_note(p, 2000, fam)); /* the address handed out again meanwhile, as 2000 bytes */
    rmm__dbg_settle(p, &c2, false); /* the stale record goes, the new one stays */
    CHECK_STATUS(rmm_deallocate(cuda, p, 1000, RMM_STREAM_DEFAULT), RMM_ERROR_CORRUPTION);
    CHECK(strstr(rmm_last_error(), "holds 2000 bytes") != NULL);
    CHECK(rmm__dbg_note(p, 1000, fam)); /* (back to the truth, to free it) */
    CHECK_OK(rmm_deallocate(cuda, p, 1000, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(cuda);
}

/* A validation that cannot run (no host memory for its bitmaps) is passed over: the call that
   succeeded stands and nothing asserts (review 31: the debug build aborted where a release build
   succeeded). */
TEST(a_validation_out_of_host_memory_is_passed_over) {
    rmm_resource *fixed = NULL;
    void *p = NULL, *q = NULL;
    int before = debug_asserts;
    NEED_GPU();
    if ((fixed = small_fixed()) == NULL) return;
    CHECK_OK(rmm_allocate(fixed, &p, 4096, RMM_STREAM_DEFAULT));
    host_fail_nth = 1; /* the validation's first bitmap (the allocation itself needs no host memory) */
    CHECK_OK(rmm_allocate(fixed, &q, 4096, RMM_STREAM_DEFAULT));
    host_fail_nth = 0;
    CHECK(debug_asserts == before);
    CHECK_OK(rmm_deallocate(fixed, q, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(fixed, p, 4096, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(fixed);
}

/* The pool's check after each call (RMM__POOL_DEBUG_CHECK) stops the program on CORRUPTION only:
   a VIRTUAL pool's check that cannot have its count per page (host memory) leaves the call as it
   was, its status and message (red team 36: it aborted), and rmm_pool_validate says OUT_OF_MEMORY. */
TEST(a_pool_validation_out_of_host_memory_is_passed_over) {
    rmm_resource *pool = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    void *p = NULL, *q = NULL;
    int before = debug_asserts;
    NEED_GPU();
    pd.growth = RMM_POOL_GROWTH_VIRTUAL;
    pd.virtual_bytes = 1027 * 2 * MiB; /* 1027 pages of 2 MiB: the check's count array, 4108 bytes, is the only request of its size */
    if (!new_virtual_pool(&pd, &pool)) return;
    if (((rmm__pool *)pool)->vm.pages != 1027) { /* (another page size: the count array's size differs) */
        printf("  (pages of %zu bytes here: not tested)\n", ((rmm__pool *)pool)->vm.page);
        rmm_resource_destroy(pool);
        return;
    }
    CHECK_OK(rmm_allocate(pool, &p, 4096, RMM_STREAM_DEFAULT));
    host_fail_size = 1027 * sizeof(uint32_t);
    rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "mark");
    CHECK_OK(rmm_allocate(pool, &q, 4096, RMM_STREAM_DEFAULT));
    CHECK(debug_asserts == before && strcmp(rmm_last_error(), "mark") == 0);
    CHECK_STATUS(rmm_pool_validate(pool), RMM_ERROR_OUT_OF_MEMORY);
    host_fail_size = 0;
    CHECK_OK(rmm_pool_validate(pool));
    CHECK_OK(rmm_deallocate(pool, q, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool, p, 4096, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);
}

/* Ordinary work on the arena and the fixed-size resource (past the first RMM__DEBUG_VALIDATE_ALL
   calls, where the validation thins out) passes every validation. */
TEST(ordinary_work_passes_the_validations) {
    rmm_resource *arena = NULL;
    rmm_arena_desc ad = rmm_arena_desc_default();
    void *live[64];
    int i, k, before = debug_asserts;
    NEED_GPU();
    ad.arena_bytes = 64 * MiB;
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &ad));
    if (!arena) return;
    memset(live, 0, sizeof live);
    for (k = 0; k < 3000; k++) {
        i = (k * 37) % 64;
        if (live[i]) CHECK_OK(rmm_deallocate(arena, live[i], (size_t)(i + 1) * 1000, RMM_STREAM_DEFAULT));
        live[i] = NULL;
        CHECK_OK(rmm_allocate(arena, &live[i], (size_t)(i + 1) * 1000, RMM_STREAM_DEFAULT));
    }
    for (i = 0; i < 64; i++) CHECK_OK(rmm_deallocate(arena, live[i], (size_t)(i + 1) * 1000, RMM_STREAM_DEFAULT));
    CHECK(((rmm__arena *)arena)->debug_calls == 6000); /* 3000 allocations, 2936 frees in the loop, 64 after */
    CHECK(debug_asserts == before);
    rmm_resource_destroy(arena);
}

int main(void) {
    HARNESS_INIT();
    RUN(base_resources_check_their_frees);
    RUN(async_resource_checks_its_frees);
    RUN(a_free_in_flight_holds_its_record);
    RUN(fixed_size_validates_after_its_calls);
    RUN(fixed_size_checks_the_size_of_a_free);
    RUN(a_fixed_size_growth_out_of_host_memory_then_served_leaves_no_failure);
    RUN(a_validation_out_of_host_memory_is_passed_over);
    RUN(a_pool_validation_out_of_host_memory_is_passed_over);
    RUN(ordinary_work_passes_the_validations);
    return harness_main_end();
}
