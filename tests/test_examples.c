/* The examples keep the contracts they teach, checked where a plain run cannot see a breach.

   A copy from host memory (rmm_device_uvector_set_element_async) may read its source at any time
   until the stream is synchronized: CUDA reads pinned memory when the copy runs, and rmm.h's
   contract says the value must stay unchanged until then. The host backend copies at once, so an
   example that changes the source right after the call still passes there. Here the copy is
   deferred to the next call that waits for the stream (get_element, synchronize) or changes the
   vector (resize, release), as a device may run it, and each example runs with its exit(1) of a
   failed CHECK or EXPECT turned into a return to the test. Built on the host backend and on CUDA, as every test. */
#define RMM_IMPLEMENTATION
#include "../rmm.h"

#include <setjmp.h>
#include <stdlib.h>

/* ---- a set_element_async that copies late ------------------------------------------------- */

static rmm_device_uvector *deferred_vector;
static size_t deferred_index;
static const void *deferred_source;
static rmm_stream deferred_stream;

/* Runs the pending copy, reading its source now. */
static rmm_status deferred_flush(void) {
    rmm_device_uvector *v = deferred_vector;
    if (!v) return RMM_SUCCESS;
    deferred_vector = NULL;
    return rmm_device_uvector_set_element_async(v, deferred_index, deferred_source, deferred_stream);
}
static rmm_status deferred_set_element_async(rmm_device_uvector *v, size_t index, const void *value, rmm_stream stream) {
    rmm_status st = deferred_flush();
    if (st != RMM_SUCCESS) return st;
    if (!v || !value || index >= v->size) return rmm_device_uvector_set_element_async(v, index, value, stream); /* its error */
    deferred_vector = v;
    deferred_index = index;
    deferred_source = value;
    deferred_stream = stream;
    return RMM_SUCCESS;
}
static rmm_status deferred_get_element(const rmm_device_uvector *v, size_t index, void *value, rmm_stream stream) {
    rmm_status st = deferred_flush();
    return st != RMM_SUCCESS ? st : rmm_device_uvector_get_element(v, index, value, stream);
}
static rmm_status deferred_resize(rmm_device_uvector *v, size_t count, rmm_stream stream) {
    rmm_status st = deferred_flush();
    return st != RMM_SUCCESS ? st : rmm_device_uvector_resize(v, count, stream);
}
static rmm_status deferred_release(rmm_device_uvector *v) {
    rmm_status st = deferred_flush();
    return st != RMM_SUCCESS ? st : rmm_device_uvector_release(v);
}
static rmm_status deferred_synchronize(rmm_stream stream) {
    rmm_status st = deferred_flush();
    return st != RMM_SUCCESS ? st : rmm_stream_synchronize(stream);
}

#define rmm_device_uvector_set_element_async deferred_set_element_async
#define rmm_device_uvector_get_element deferred_get_element
#define rmm_device_uvector_resize deferred_resize
#define rmm_device_uvector_release deferred_release
#define rmm_stream_synchronize deferred_synchronize

/* The examples' CHECK and EXPECT exit(1) on failure: here that ends the example, not the test (a
   child process cannot be used: CUDA does not work in a child forked after it was initialized). */
static jmp_buf example_exit_to;
static int example_exit_status;
static void example_exit(int status) {
    example_exit_status = status;
    longjmp(example_exit_to, 1);
}
#define exit(status) example_exit(status)
#define main example_04_main
#include "../examples/04_custom_resource.c"
#undef main
#undef exit

#undef rmm_device_uvector_set_element_async
#undef rmm_device_uvector_get_element
#undef rmm_device_uvector_resize
#undef rmm_device_uvector_release
#undef rmm_stream_synchronize
#undef CHECK  /* the examples' (common.h); the harness's below */
#undef EXPECT
#include "harness.h"

/* The status example_main exits or returns with. (What it had made when it failed stays made.) */
static int run_example(int (*example_main)(void)) {
    volatile int status = 0;
    if (setjmp(example_exit_to) == 0) status = example_main();
    else status = example_exit_status;
    fflush(stdout);
    return status;
}

/* 04_custom_resource: the callback resource's uvector is set from a host int that stays 42 until
   the read-back (a red team's find: the example set it to 0 right after the async set). */
TEST(example_04_keeps_the_source_of_an_async_copy) {
    NEED_GPU();
    CHECK(run_example(example_04_main) == 0);
}

int main(void) {
    HARNESS_INIT();
    RUN(example_04_keeps_the_source_of_an_async_copy);
    return harness_main_end();
}
