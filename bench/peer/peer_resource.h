/* bench/peer/peer_resource.h - RAPIDS RMM C++ as an rmm.h resource (a callback resource over
   rmm_cpp_peer.h), so that a benchmark runs it through rmm_allocate like every other row: the
   difference is one indirect call, about 2 ns. Only with -DRMM_BENCH_PEER (bench/peer/build.sh). */
#ifndef RMM_BENCH_PEER_RESOURCE_H
#define RMM_BENCH_PEER_RESOURCE_H
#if defined(RMM_BENCH_PEER)
#include "rmm_cpp_peer.h"
static rmm_status peer_cb_alloc(void **ptr, size_t bytes, rmm_stream stream, void *arg) {
    char err[256];
    (void)arg;
    *ptr = rmm_peer_alloc(bytes, (void *)stream, err, sizeof err);
    if (*ptr) return RMM_SUCCESS;
    return rmm_set_last_error(strstr(err, "out_of_memory") || strstr(err, "out of memory") ? RMM_ERROR_OUT_OF_MEMORY : RMM_ERROR_UNKNOWN, "RMM C++: %s", err);
}
/* (A callback free cannot fail, so a failure rmm_peer_free catches is dropped here; RMM's
   deallocate is noexcept, so none is expected. A bench review noted it, 2026-12-02.) */
static void peer_cb_free(void *ptr, size_t bytes, rmm_stream stream, void *arg) {
    (void)arg;
    (void)rmm_peer_free(ptr, bytes, (void *)stream, NULL, 0);
}
/* 1 iff `name` is one of RMM C++'s resources ("rmm::..."). */
static int peer_is(const char *name) { return !strncmp(name, "rmm::", 5); }
/* Makes RMM's resource `name` and an rmm.h callback resource over it. */
static rmm_status peer_make(const char *name, size_t initial_bytes, size_t arena_bytes, rmm_resource **out, char *err, size_t cap) {
    if (rmm_peer_make(name, initial_bytes, arena_bytes, err, cap) != 0) return RMM_ERROR_UNKNOWN;
    return rmm_callback_resource_create(out, peer_cb_alloc, peer_cb_free, NULL);
}
#define PEER_NAMES , "rmm::pool", "rmm::binning", "rmm::arena", "rmm::async"
#else
static int peer_is(const char *name) {
    (void)name;
    return 0;
}
#define PEER_NAMES
#endif
#endif
