/* tests/sanitize/pool_bounds.cu - does compute-sanitizer see the bounds of sub-allocated blocks?

   Usage: pool_bounds RESOURCE WHERE, RESOURCE one of pool, fixed, arena; WHERE an offset, or "freed".
   The resource hands out two 1000-byte blocks from one cudaMalloc'd chunk; a kernel writes one byte
   at the offset from the first block's start (or into it after it was freed). Built with
   -DRMM_NVTX, the resource registers its chunk as an NVTX heap and each block as a region, so
   memcheck reports the write past 1000 and the write into the freed block. Built without it,
   memcheck cannot tell: the write lands inside memory cudaMalloc handed out. tests/sanitize.sh runs
   both builds under compute-sanitizer and checks those outcomes. */
#define RMM_IMPLEMENTATION
#include "../../rmm.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void touch(char *p, size_t at) { p[at] = 1; }

#define CHECK(call)                                                                   \
    do {                                                                              \
        rmm_status st_ = (call);                                                      \
        if (st_ != RMM_SUCCESS) {                                                     \
            std::fprintf(stderr, "%s failed: %s\n", #call, rmm_last_error());         \
            return 2;                                                                 \
        }                                                                             \
    } while (0)

int main(int argc, char **argv) {
    rmm_resource *cuda = NULL, *pool = NULL;
    void *a = NULL, *b = NULL;
    const char *kind = argc > 1 ? argv[1] : "pool";
    bool freed = argc > 2 && std::strcmp(argv[2], "freed") == 0;
    size_t at = argc > 2 && !freed ? std::strtoull(argv[2], NULL, 10) : 0;
    CHECK(rmm_cuda_resource_create(&cuda));
    if (std::strcmp(kind, "fixed") == 0) {
        rmm_fixed_size_desc desc = rmm_fixed_size_desc_default();
        desc.block_bytes = 4096;
        desc.blocks_to_preallocate = 16;
        CHECK(rmm_fixed_size_create(&pool, cuda, &desc));
    } else if (std::strcmp(kind, "arena") == 0) {
        rmm_arena_desc desc = rmm_arena_desc_default();
        desc.arena_bytes = (size_t)16 << 20;
        CHECK(rmm_arena_create(&pool, cuda, &desc));
    } else {
        rmm_pool_desc desc = rmm_pool_desc_default();
        desc.initial_bytes = (size_t)1 << 20;
        CHECK(rmm_pool_create(&pool, cuda, &desc));
    }
    CHECK(rmm_allocate(pool, &a, 1000, RMM_STREAM_DEFAULT));
    CHECK(rmm_allocate(pool, &b, 1000, RMM_STREAM_DEFAULT));
    if (freed) CHECK(rmm_deallocate(pool, a, 1000, RMM_STREAM_DEFAULT));
    touch<<<1, 1>>>((char *)a, at);
    if (cudaDeviceSynchronize() != cudaSuccess) std::printf("kernel reported an error\n");
    std::printf("%s: wrote one byte at offset %zu of a %s 1000-byte block\n", kind, at, freed ? "freed" : "live");
    if (!freed) CHECK(rmm_deallocate(pool, a, 1000, RMM_STREAM_DEFAULT));
    CHECK(rmm_deallocate(pool, b, 1000, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);
    rmm_resource_destroy(cuda);
    return 0;
}
