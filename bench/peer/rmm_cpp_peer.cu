/* bench/peer/rmm_cpp_peer.cu - RAPIDS RMM C++ (26.x, the cuda::mr resource design) behind the C
   interface of rmm_cpp_peer.h. Compiled with nvcc against the librmm wheel's headers (see build.sh);
   never part of `make`. Exceptions stop here: every entry point returns a status. */
#include "rmm_cpp_peer.h"

#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/version_config.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>

namespace {
using cuda_mr = rmm::mr::cuda_memory_resource;
using stats_mr = rmm::mr::statistics_resource_adaptor;
using pool_mr = rmm::mr::pool_memory_resource;
using binning_mr = rmm::mr::binning_memory_resource;
using arena_mr = rmm::mr::arena_memory_resource;
using async_mr = rmm::mr::cuda_async_memory_resource;

/* The live stack: at most one of pool / binning (over pool) / arena / async, over the statistics. */
struct stack {
  std::unique_ptr<stats_mr> stats;
  std::unique_ptr<pool_mr> pool;
  std::unique_ptr<binning_mr> binning;
  std::unique_ptr<arena_mr> arena;
  std::unique_ptr<async_mr> async;
};
stack g;

void say(char *err, size_t cap, const char *what, const char *why) {
  if (err && cap) std::snprintf(err, cap, "%s: %s", what, why);
}
template <class F>
auto call(F f) {
  if (g.binning) return f(*g.binning);
  if (g.pool) return f(*g.pool);
  if (g.arena) return f(*g.arena);
  return f(*g.async);
}
}  // namespace

extern "C" int rmm_peer_make(const char *name, size_t initial_bytes, size_t arena_bytes, char *err, size_t cap) {
  rmm_peer_drop();
  try {
    if (!std::strcmp(name, "rmm::async")) {
      g.async = std::make_unique<async_mr>();
      uint64_t max = UINT64_MAX;
      cudaMemPoolSetAttribute(g.async->pool_handle(), cudaMemPoolAttrReleaseThreshold, &max);
      return 0;
    }
    g.stats = std::make_unique<stats_mr>(cuda_mr{});
    if (!std::strcmp(name, "rmm::pool") || !std::strcmp(name, "rmm::binning")) {
      g.pool = std::make_unique<pool_mr>(*g.stats, initial_bytes);
      if (!std::strcmp(name, "rmm::binning")) g.binning = std::make_unique<binning_mr>(*g.pool, 18, 22);
      return 0;
    }
    if (!std::strcmp(name, "rmm::arena")) {
      g.arena = std::make_unique<arena_mr>(*g.stats, arena_bytes);
      return 0;
    }
    say(err, cap, name, "no such RMM resource here");
  } catch (std::exception const &e) {
    say(err, cap, name, e.what());
  }
  rmm_peer_drop();
  return -1;
}
extern "C" void *rmm_peer_alloc(size_t bytes, void *stream, char *err, size_t cap) {
  try {
    return call([&](auto &r) { return r.allocate(cuda::stream_ref{static_cast<cudaStream_t>(stream)}, bytes, 256); });
  } catch (std::exception const &e) {
    say(err, cap, "allocate", e.what());
    return nullptr;
  }
}
extern "C" int rmm_peer_free(void *ptr, size_t bytes, void *stream, char *err, size_t cap) {
  try {
    call([&](auto &r) {
      r.deallocate(cuda::stream_ref{static_cast<cudaStream_t>(stream)}, ptr, bytes, 256);
      return 0;
    });
    return 0;
  } catch (std::exception const &e) {
    say(err, cap, "deallocate", e.what());
    return -1;
  }
}
extern "C" size_t rmm_peer_upstream_peak(void) { return g.stats ? static_cast<size_t>(g.stats->get_bytes_counter().peak) : 0; }
extern "C" void rmm_peer_drop(void) {
  cudaDeviceSynchronize();
  g.binning.reset();
  g.pool.reset();
  g.arena.reset();
  g.async.reset();
  g.stats.reset();
}
extern "C" const char *rmm_peer_version(void) {
  static char text[96];
  std::snprintf(text, sizeof text, "RAPIDS RMM %s (librmm-cu13 wheel), CCCL %d.%d.%d", RMM_VERSION, CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION,
                CCCL_PATCH_VERSION);
  return text;
}
