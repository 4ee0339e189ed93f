/* bench/vmm_costs.c - what the driver calls the pool's growth modes make cost on this machine: the
   figures the virtual and on-demand growth modes are tuned by.
     - virtual memory (through rmm.h's platform layer, the code the pool runs): cuMemCreate of one
       page, cuMemMap of one page at an address never mapped before and at one mapped and unmapped
       before, cuMemSetAccess over a run of k pages in one call (k mappings), cuMemUnmap of k pages in
       one call, cuMemRelease; and one allocation of k pages: its cuMemCreate, and cuMemSetAccess
       over its one mapping (what the pool's extents pay);
     - cudaMalloc and cudaFree of 2 MiB to 256 MiB (what an on-demand pool's growth and release cost);
     - a device synchronize with nothing queued.
   Each figure is the median of REPS repetitions, in microseconds per call. On the host backend the
   platform layer runs mmap and mprotect instead.
   Run: make bench && build/bench/vmm_costs */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "bench_common.h"
#include <stdlib.h>

#define REPS 9
#define MAXK 64
static double now_sec(void) { return (double)now_ns() * 1e-9; }
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}
#define CHECK_ST(call)                                                                  \
    do {                                                                                \
        rmm_status st_ = (call);                                                        \
        if (st_ != RMM_SUCCESS) {                                                       \
            printf("# %s failed: %s\n", #call, rmm_last_error());                       \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

int main(void) {
    static const size_t counts[] = {1, 4, 16, 64};
    static const size_t malloc_mib[] = {2, 8, 32, 128, 256};
    size_t page = 0, c, regions = (sizeof counts / sizeof counts[0]) * REPS * 2;
    int device = 0, r;
    char *base = NULL, *next;
    rmm_resource *cuda = NULL;
    print_machine("mmap and mprotect stand in for the driver's virtual memory calls");
    CHECK_ST(rmm__get_device(&device));
    CHECK_ST(rmm__vm_granularity(device, &page));
    CHECK_ST(rmm__vm_reserve(&base, regions * MAXK * page, page));
    next = base;
    printf("# page %zu bytes; microseconds, median of %d\n", page, REPS);
    printf("%-6s %12s %14s %14s %16s %14s %12s %14s %16s\n", "pages", "create/page", "map_fresh/page", "map_again/page", "set_access/call",
           "unmap/call", "release/page", "create_k_pages", "set_access_k_pg");
    for (c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        size_t k = counts[c], i;
        double t_create[REPS], t_map[REPS], t_remap[REPS], t_access[REPS], t_unmap[REPS], t_release[REPS], t_bulk[REPS], t_bulk_access[REPS];
        for (r = 0; r < REPS; r++) {
            uint64_t h[MAXK], bulk = 0;
            char *va = next, *va2 = next + MAXK * page;
            double t0;
            next += 2 * MAXK * page;
            t0 = now_sec();
            for (i = 0; i < k; i++) CHECK_ST(rmm__vm_create(&h[i], page, device));
            t_create[r] = (now_sec() - t0) / (double)k;
            t0 = now_sec();
            for (i = 0; i < k; i++) CHECK_ST(rmm__vm_map(va + i * page, page, h[i], 0));
            t_map[r] = (now_sec() - t0) / (double)k;
            t0 = now_sec();
            CHECK_ST(rmm__vm_set_access(va, k * page, device));
            t_access[r] = now_sec() - t0;
            t0 = now_sec();
            CHECK_ST(rmm__vm_unmap(va, k * page));
            t_unmap[r] = now_sec() - t0;
            t0 = now_sec();
            for (i = 0; i < k; i++) CHECK_ST(rmm__vm_map(va + i * page, page, h[i], 0)); /* the same addresses again */
            t_remap[r] = (now_sec() - t0) / (double)k;
            CHECK_ST(rmm__vm_set_access(va, k * page, device));
            CHECK_ST(rmm__vm_unmap(va, k * page));
            t0 = now_sec();
            for (i = 0; i < k; i++) rmm__vm_release(h[i], page);
            t_release[r] = (now_sec() - t0) / (double)k;
            t0 = now_sec();
            CHECK_ST(rmm__vm_create(&bulk, k * page, device));
            t_bulk[r] = now_sec() - t0;
            CHECK_ST(rmm__vm_map(va2, k * page, bulk, 0));
            t0 = now_sec();
            CHECK_ST(rmm__vm_set_access(va2, k * page, device));
            t_bulk_access[r] = now_sec() - t0;
            CHECK_ST(rmm__vm_unmap(va2, k * page));
            rmm__vm_release(bulk, k * page);
        }
        printf("%-6zu %12.1f %14.1f %14.1f %16.1f %14.1f %12.1f %14.1f %16.1f\n", k, 1e6 * median(t_create, REPS), 1e6 * median(t_map, REPS),
               1e6 * median(t_remap, REPS), 1e6 * median(t_access, REPS), 1e6 * median(t_unmap, REPS), 1e6 * median(t_release, REPS),
               1e6 * median(t_bulk, REPS), 1e6 * median(t_bulk_access, REPS));
    }
    rmm__vm_free(base, regions * MAXK * page);
    CHECK_ST(rmm_cuda_resource_create(&cuda));
    printf("%-10s %14s %14s\n", "cudaMalloc", "malloc", "free");
    for (c = 0; c < sizeof malloc_mib / sizeof malloc_mib[0]; c++) {
        double t_m[REPS], t_f[REPS];
        size_t bytes = malloc_mib[c] * MIB;
        for (r = 0; r < REPS; r++) {
            void *p = NULL;
            double t0 = now_sec();
            CHECK_ST(rmm_allocate(cuda, &p, bytes, RMM_STREAM_DEFAULT));
            t_m[r] = now_sec() - t0;
            t0 = now_sec();
            CHECK_ST(rmm_deallocate(cuda, p, bytes, RMM_STREAM_DEFAULT));
            t_f[r] = now_sec() - t0;
        }
        printf("%-4zu MiB   %14.1f %14.1f\n", malloc_mib[c], 1e6 * median(t_m, REPS), 1e6 * median(t_f, REPS));
    }
    rmm_resource_destroy(cuda);
    {
        double t_sync[REPS];
        for (r = 0; r < REPS; r++) {
            double t0 = now_sec();
            CHECK_ST(rmm__device_synchronize());
            t_sync[r] = now_sec() - t0;
        }
        printf("# device synchronize, nothing queued: %.1f us\n", 1e6 * median(t_sync, REPS));
    }
    return 0;
}
