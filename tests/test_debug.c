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
static int debug_asserts; /* RMM_ASSERTs that failed */
#define RMM_ASSERT(x) ((void)((x) || (debug_asserts++, 0)))
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
TEST(fixed_size_validates_after_its_calls) {
    rmm_resource *fixed = NULL;
    rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
    void *p = NULL, *q = NULL;
    int before;
    NEED_GPU();
    fd.block_bytes = 4096;
    fd.blocks_to_preallocate = 8;
    CHECK_OK(rmm_fixed_size_create(&fixed, rmm_get_current_device_resource(), &fd));
    if (!fixed) return;
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
    RUN(fixed_size_validates_after_its_calls);
    RUN(ordinary_work_passes_the_validations);
    return harness_main_end();
}
