/* The header with every optional feature left out (RMM_NO_POOL, RMM_NO_BINNING, RMM_NO_ARENA,
   RMM_NO_LOGGING; this file defines them, so every lane builds it so): each left-out call answers
   NOT_SUPPORTED, names itself and the macro, and leaves its out-argument NULL; what stays (cudaMalloc,
   the fixed-size resource, the adaptors, containers, the legacy API without a pool) works. The
   compile checks of tests/run.sh build the header so as well; this runs it. Added in session 35
   after a red team found rmmInitialize's pool mode naming rmm_pool_create, a call the user did not
   make. */
#define RMM_NO_POOL
#define RMM_NO_BINNING
#define RMM_NO_ARENA
#define RMM_NO_LOGGING
#define RMM_MAX_DEVICES 1 /* a per-device table of one: device 1 of the host backend's two is refused */
#define _POSIX_C_SOURCE 200809L
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "harness.h"
#include <string.h>

/* The last call failed with NOT_SUPPORTED, naming `call` and `macro`. */
#define CHECK_LEFT_OUT(expr, call, macro)                                                                  \
    do {                                                                                                   \
        CHECK_STATUS(expr, RMM_ERROR_NOT_SUPPORTED);                                                       \
        CHECK(strstr(rmm_last_error(), call) == rmm_last_error() && strstr(rmm_last_error(), macro) != NULL); \
    } while (0)

TEST(left_out_calls_say_so) {
    rmm_resource *cuda = NULL, *out = (rmm_resource *)&out;
    rmm_pool_info info;
    size_t released = 7;
    NEED_GPU();
    CHECK_OK(rmm_cuda_resource_create(&cuda));
    CHECK_LEFT_OUT(rmm_pool_create(&out, cuda, NULL), "rmm_pool_create", "RMM_NO_POOL");
    CHECK(out == NULL);
    CHECK_LEFT_OUT(rmm_pool_get_info(cuda, &info), "rmm_pool_get_info", "RMM_NO_POOL");
    CHECK_LEFT_OUT(rmm_pool_trim(cuda, &released), "rmm_pool_trim", "RMM_NO_POOL");
    CHECK(released == 0);
    CHECK_LEFT_OUT(rmm_pool_validate(cuda), "rmm_pool_validate", "RMM_NO_POOL");
    CHECK_LEFT_OUT(rmm_pool_set_maximum(cuda, 0), "rmm_pool_set_maximum", "RMM_NO_POOL");
    out = (rmm_resource *)&out;
    CHECK_LEFT_OUT(rmm_binning_create(&out, cuda, NULL), "rmm_binning_create", "RMM_NO_BINNING");
    CHECK(out == NULL);
    CHECK_LEFT_OUT(rmm_binning_add_bin(cuda, 1024, NULL), "rmm_binning_add_bin", "RMM_NO_BINNING");
    out = (rmm_resource *)&out;
    CHECK_LEFT_OUT(rmm_arena_create(&out, cuda, NULL), "rmm_arena_create", "RMM_NO_ARENA");
    CHECK(out == NULL);
    out = (rmm_resource *)&out;
    CHECK_LEFT_OUT(rmm_logging_adaptor_create(&out, cuda, "/dev/null", false), "rmm_logging_adaptor_create", "RMM_NO_LOGGING");
    CHECK(out == NULL);
    out = (rmm_resource *)&out;
    CHECK_LEFT_OUT(rmm_logging_adaptor_create_file(&out, cuda, stderr, false), "rmm_logging_adaptor_create_file", "RMM_NO_LOGGING");
    CHECK(out == NULL);
    CHECK_LEFT_OUT(rmm_logging_adaptor_flush(cuda), "rmm_logging_adaptor_flush", "RMM_NO_LOGGING");
    rmm_resource_destroy(cuda);
}

TEST(what_stays_works) {
    rmm_resource *cuda = NULL, *fixed = NULL, *stats = NULL;
    rmm_device_buffer b;
    void *p = NULL;
    NEED_GPU();
    CHECK_OK(rmm_cuda_resource_create(&cuda));
    CHECK_OK(rmm_fixed_size_create(&fixed, cuda, NULL));
    CHECK_OK(rmm_statistics_adaptor_create(&stats, fixed));
    CHECK_OK(rmm_allocate(stats, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK(p != NULL);
    CHECK_OK(rmm_deallocate(stats, p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_device_buffer_create(&b, 4096, RMM_STREAM_DEFAULT, cuda));
    CHECK_OK(rmm_device_buffer_release(&b));
    { /* the descriptor helpers stay (documented since docs audit 46): configuration code builds */
        rmm_pool_desc pd = rmm_pool_desc_default();
        rmm_binning_desc bd = rmm_binning_desc_default();
        rmm_arena_desc ad = rmm_arena_desc_default();
        CHECK_OK(rmm_pool_desc_parse(&pd, "initial:1MiB"));
        CHECK(pd.initial_bytes == ((size_t)1 << 20));
        setenv("RMM_ALLOC_CONF", "maximum:2MiB", 1);
        CHECK_OK(rmm_pool_desc_from_env(&pd));
        unsetenv("RMM_ALLOC_CONF");
        CHECK(pd.initial_bytes == ((size_t)1 << 20) && pd.maximum_bytes == ((size_t)2 << 20));
        CHECK(bd.min_size_exponent == 0 && bd.max_size_exponent == 0 && ad.superblock_bytes == ((size_t)1 << 20));
    }
    rmm_resource_destroy(stats);
    rmm_resource_destroy(fixed);
    rmm_resource_destroy(cuda);
}

/* The legacy API: pool mode names rmmInitialize and leaves it uninitialized; cudaMalloc mode works. */
TEST(legacy_pool_mode_is_left_out) {
    rmmOptions_t o;
    void *p = NULL;
    NEED_GPU();
    memset(&o, 0, sizeof o);
    o.allocation_mode = PoolAllocation;
    o.initial_pool_size = (size_t)1 << 20;
    CHECK_LEFT_OUT(rmmInitialize(&o), "rmmInitialize", "RMM_NO_POOL");
    CHECK(!rmmIsInitialized(NULL));
    o.allocation_mode = CudaDefaultAllocation;
    CHECK_OK(rmmInitialize(&o));
    CHECK_OK(RMM_ALLOC(&p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(RMM_FREE(p, RMM_STREAM_DEFAULT));
    CHECK_OK(rmmFinalize());
}

/* Without the pool the nowait calls never serve (every allocation would block), but they check
   their arguments as with it: a NULL out-argument or a free of 0 bytes is INVALID_ARGUMENT naming
   the call, and nothing is freed. */
TEST(nowait_calls_check_their_arguments) {
    void *p = (void *)1;
    bool wb = true;
    CHECK_STATUS(rmm_allocate_nowait(NULL, &p, 1000, RMM_STREAM_DEFAULT, NULL), RMM_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(rmm_last_error(), "rmm_allocate_nowait") == rmm_last_error() && strstr(rmm_last_error(), "would_block") != NULL);
    CHECK(p == (void *)1); /* (nothing written where nothing could be said) */
    CHECK_STATUS(rmm_allocate_nowait(NULL, NULL, 1000, RMM_STREAM_DEFAULT, &wb), RMM_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(rmm_last_error(), "rmm_allocate_nowait") == rmm_last_error() && strstr(rmm_last_error(), "ptr") != NULL);
    CHECK(!wb);
    CHECK_STATUS(rmm_deallocate_nowait(NULL, NULL, 0, RMM_STREAM_DEFAULT, NULL), RMM_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(rmm_last_error(), "rmm_deallocate_nowait") == rmm_last_error() && strstr(rmm_last_error(), "would_block") != NULL);
}
TEST(nowait_free_of_zero_bytes_frees_nothing) {
    rmm_resource *cuda = NULL;
    void *p = NULL, *q = (void *)1;
    bool wb = true;
    size_t f0 = 0, f1 = 0, total = 0;
    NEED_GPU();
    CHECK_OK(rmm_cuda_resource_create(&cuda));
    if (!cuda) return;
    CHECK_OK(rmm_allocate(cuda, &p, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_available_device_memory(&f0, &total));
    CHECK_STATUS(rmm_deallocate_nowait(cuda, p, 0, RMM_STREAM_DEFAULT, &wb), RMM_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(rmm_last_error(), "rmm_deallocate_nowait(ptr=") == rmm_last_error() && strstr(rmm_last_error(), "nothing freed") != NULL);
    CHECK(!wb);
    CHECK_OK(rmm_deallocate_nowait(cuda, p, 4096, RMM_STREAM_DEFAULT, &wb)); /* it would block: nothing freed either */
    CHECK(wb);
    CHECK_OK(rmm_allocate_nowait(cuda, &q, 4096, RMM_STREAM_DEFAULT, &wb));
    CHECK(wb && q == NULL);
    CHECK_OK(rmm_available_device_memory(&f1, &total));
    CHECK(f1 == f0);
    CHECK_OK(rmm_deallocate(cuda, p, 4096, RMM_STREAM_DEFAULT)); /* still live: freed now */
    rmm_resource_destroy(cuda);
}

/* A device numbered at or above RMM_MAX_DEVICES exists but cannot be used through the library:
   refused with INVALID_ARGUMENT naming the macro, never an index past the table (a docs audit's
   find, session 45: the header did not say so). Host backend (two devices). */
TEST(devices_past_the_table_are_refused) {
#if defined(RMM_BACKEND_HOST) && RMM_HOST_BACKEND_DEVICES > 1
    int count = 0;
    rmm_device_scope scope;
    CHECK_OK(rmm_get_device_count(&count));
    CHECK(count == RMM_HOST_BACKEND_DEVICES);
    CHECK_STATUS(rmm_set_device(1), RMM_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(rmm_last_error(), "RMM_MAX_DEVICES") != NULL);
    CHECK(rmm_get_per_device_resource(1) == NULL && rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT);
    CHECK(rmm_set_per_device_resource(1, NULL) == NULL && rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT);
    CHECK_OK(rmm_device_scope_enter(&scope, 1)); /* (the scope is CUDA's own cudaSetDevice) */
    CHECK(rmm_get_current_device_resource() == NULL && rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(rmm_last_error(), "RMM_MAX_DEVICES") != NULL);
    CHECK_OK(rmm_device_scope_leave(&scope));
    CHECK(rmm_get_current_device_resource() != NULL);
#else
    harness_skip_current = 1; /* (two devices: the host backend) */
#endif
}

int main(void) {
    HARNESS_INIT();
    RUN(left_out_calls_say_so);
    RUN(what_stays_works);
    RUN(legacy_pool_mode_is_left_out);
    RUN(nowait_calls_check_their_arguments);
    RUN(nowait_free_of_zero_bytes_frees_nothing);
    RUN(devices_past_the_table_are_refused);
    return harness_main_end();
}
