/* tests/harness.h - a small non-fatal test harness shared by every test program.

   TEST(name) { ... CHECK(expr); ... }   defines a test; register it in main with RUN(name).
   CHECK(expr)        non-fatal: prints file:line and the expression when false.
   CHECK_STATUS(call, status)  checks an rmm_status, printing both names and rmm_last_error().
   NEED_GPU()         at the top of a test that needs a real device: skipped (and counted) when the
                      CUDA build runs on a machine without a GPU.
   harness_main_end() prints the closing line "N passed, N failed[, N skipped]" and returns the exit
   code (non-zero iff anything failed). The closing line is the last line a test program prints.

   Works in C99, C11, C++17 and under nvcc; never uses assert() (it vanishes under NDEBUG). */
#ifndef RMM_TEST_HARNESS_H
#define RMM_TEST_HARNESS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GNUC__)
#define HARNESS_UNUSED __attribute__((unused))
#else
#define HARNESS_UNUSED
#endif

static int harness_checks_failed_in_test;
static int harness_passed, harness_failed, harness_skipped;
static int harness_have_gpu = 1;
static int harness_skip_current;
static const char *harness_no_gpu_reason = "";

#define CHECK(expr)                                                                     \
    do {                                                                                \
        if (!(expr)) {                                                                  \
            harness_checks_failed_in_test++;                                            \
            printf("  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr);          \
        }                                                                               \
    } while (0)

#define CHECK_STATUS(call, expected)                                                    \
    do {                                                                                \
        rmm_status harness_st_ = (call);                                                \
        if (harness_st_ != (expected)) {                                                \
            harness_checks_failed_in_test++;                                            \
            printf("  %s:%d: %s returned %s, expected %s (last error: %s)\n", __FILE__,  \
                   __LINE__, #call, rmm_status_string(harness_st_),                     \
                   rmm_status_string(expected), rmm_last_error());                      \
        }                                                                               \
    } while (0)
#define CHECK_OK(call) CHECK_STATUS(call, RMM_SUCCESS)

#define TEST(name) static void test_##name(void)
#define NEED_GPU()                          \
    do {                                    \
        if (!harness_have_gpu) {            \
            harness_skip_current = 1;       \
            return;                         \
        }                                   \
    } while (0)

#define RUN(name) harness_run(#name, test_##name)
static void harness_run(const char *name, void (*fn)(void)) {
    harness_checks_failed_in_test = 0;
    harness_skip_current = 0;
    fn();
    if (harness_skip_current) {
        harness_skipped++;
    } else if (harness_checks_failed_in_test) {
        harness_failed++;
        printf("FAIL %s\n", name);
    } else {
        harness_passed++;
        printf("ok   %s\n", name);
    }
    fflush(stdout);
}

/* Decides whether GPU cases can run. Call after including rmm.h. */
#define HARNESS_INIT()                                                                       \
    do {                                                                                     \
        int harness_count_ = 0;                                                              \
        if (rmm_get_device_count(&harness_count_) != RMM_SUCCESS || harness_count_ == 0) {   \
            harness_have_gpu = 0;                                                            \
            harness_no_gpu_reason = rmm_last_error();                                        \
            printf("GPU cases skipped: no usable CUDA device (%s)\n",                        \
                   harness_no_gpu_reason[0] ? harness_no_gpu_reason : "device count is 0"); \
        }                                                                                    \
    } while (0)

static int harness_main_end(void) {
    if (harness_skipped)
        printf("%d passed, %d failed, %d skipped\n", harness_passed, harness_failed, harness_skipped);
    else
        printf("%d passed, %d failed\n", harness_passed, harness_failed);
    return harness_failed ? 1 : 0;
}

/* A small deterministic generator (splitmix64) for random tests: seedable and replayable. */
#if !defined(RMM_NO_POOL)
/* A VIRTUAL pool of *pd in *mr, or false, saying why, where the device or driver has no virtual
   memory management (NOT_SUPPORTED) or the creation failed (a CHECK). */
HARNESS_UNUSED static bool new_virtual_pool(const rmm_pool_desc *pd, rmm_resource **mr) {
    rmm_status st = rmm_pool_create(mr, NULL, pd);
    if (st == RMM_ERROR_NOT_SUPPORTED) {
        printf("  (no virtual memory management here: %s)\n", rmm_last_error());
        return false;
    }
    CHECK_OK(st);
    return *mr != NULL;
}
#endif
static unsigned long long harness_rng_state = 1;
HARNESS_UNUSED static unsigned long long harness_rand(void) {
    unsigned long long z = (harness_rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* The seed: $RMM_TEST_SEED if set, else the default; printed so a failure can be replayed. */
/* 1 iff RMM_TEST_LONG is set to something other than 0 (make test-long): stress tests run their
   long forms then, several times the steps of the default. */
HARNESS_UNUSED static int harness_long(void) {
    const char *env = getenv("RMM_TEST_LONG");
    return env && *env && strcmp(env, "0") != 0;
}
HARNESS_UNUSED static unsigned long long harness_seed(const char *test, unsigned long long fallback) {
    const char *env = getenv("RMM_TEST_SEED");
    unsigned long long seed = env && *env ? strtoull(env, NULL, 0) : fallback;
    printf("  %s: seed %llu (replay with RMM_TEST_SEED=%llu)\n", test, seed, seed);
    harness_rng_state = seed;
    return seed;
}
#endif
