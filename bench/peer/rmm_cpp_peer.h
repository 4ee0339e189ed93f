/* bench/peer/rmm_cpp_peer.h - RAPIDS RMM C++ behind a C interface, so that rmm.h's own benchmarks
   (random_allocations, replay) run RMM's resources on the same workloads, in the same process and
   run. Built only where the librmm wheel is at hand (bench/peer/build.sh); the benchmarks then
   have -DRMM_BENCH_PEER and link rmm_cpp_peer.o. One RMM resource is live at a time. */
#ifndef RMM_CPP_PEER_H
#define RMM_CPP_PEER_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Makes the resource `name`: "rmm::pool" (pool_memory_resource over cuda_memory_resource, geometric
   growth from initial_bytes, no maximum), "rmm::binning" (binning_memory_resource 2^18..2^22 over
   such a pool), "rmm::arena" (arena_memory_resource of arena_bytes), "rmm::async"
   (cuda_async_memory_resource, release threshold UINT64_MAX). Between the resource and cudaMalloc
   sits RMM's statistics_resource_adaptor, whose bytes peak is what it held from upstream. 0 on
   success, else -1 with the reason in err. */
int rmm_peer_make(const char *name, size_t initial_bytes, size_t arena_bytes, char *err, size_t cap);
/* NULL on failure (the reason in err when err is not NULL). Thread-safe, as RMM's resources are. */
void *rmm_peer_alloc(size_t bytes, void *stream, char *err, size_t cap);
int rmm_peer_free(void *ptr, size_t bytes, void *stream, char *err, size_t cap);
/* The most bytes the resource held from cudaMalloc at once. */
size_t rmm_peer_upstream_peak(void);
void rmm_peer_drop(void);
/* "RAPIDS RMM 26.10.00 (librmm wheel), CCCL 3.5.0" */
const char *rmm_peer_version(void);
#ifdef __cplusplus
}
#endif
#endif
