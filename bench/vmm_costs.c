/* bench/vmm_costs.c - what CUDA's virtual memory calls cost on this machine, the figures the
   virtual growth mode of the pool is tuned by: cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap
   and cuMemRelease for 1 to 256 pages in one call, mapping k pages of one allocation in k calls
   against one, and a device synchronize with nothing queued. Each figure is the median of 15
   repetitions, in microseconds per call. Calls go through rmm.h's platform layer (the same code the
   pool runs), so on the host backend this measures mmap and mprotect instead.
   Run: make bench && build/bench/vmm_costs */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "bench_common.h"
#include <stdlib.h>

#define REPS 15
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
    static const size_t counts[] = {1, 4, 16, 64, 256};
    size_t page = 0, c;
    int device = 0, r;
    char *base = NULL;
    print_machine("mmap and mprotect stand in for the driver's virtual memory calls");
    CHECK_ST(rmm__get_device(&device));
    CHECK_ST(rmm__vm_granularity(device, &page));
    CHECK_ST(rmm__vm_reserve(&base, 512 * page, page));
    printf("# page %zu bytes; microseconds per call, median of %d\n", page, REPS);
    printf("%-6s %10s %10s %12s %10s %10s %14s\n", "pages", "create", "map", "set_access", "unmap", "release", "map_each_page");
    for (c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        size_t k = counts[c], i;
        double t_create[REPS], t_map[REPS], t_access[REPS], t_unmap[REPS], t_release[REPS], t_each[REPS];
        for (r = 0; r < REPS; r++) {
            uint64_t h = 0;
            double t0 = now_sec();
            CHECK_ST(rmm__vm_create(&h, k * page, device));
            t_create[r] = now_sec() - t0;
            t0 = now_sec();
            CHECK_ST(rmm__vm_map(base, k * page, h, 0));
            t_map[r] = now_sec() - t0;
            t0 = now_sec();
            CHECK_ST(rmm__vm_set_access(base, k * page, device));
            t_access[r] = now_sec() - t0;
            t0 = now_sec();
            CHECK_ST(rmm__vm_unmap(base, k * page));
            t_unmap[r] = now_sec() - t0;
            t0 = now_sec();
            for (i = 0; i < k; i++) CHECK_ST(rmm__vm_map(base + i * page, page, h, i * page));
            t_each[r] = (now_sec() - t0) / (double)k;
            CHECK_ST(rmm__vm_set_access(base, k * page, device));
            CHECK_ST(rmm__vm_unmap(base, k * page));
            t0 = now_sec();
            rmm__vm_release(h, k * page);
            t_release[r] = now_sec() - t0;
        }
        printf("%-6zu %10.1f %10.1f %12.1f %10.1f %10.1f %14.1f\n", k, 1e6 * median(t_create, REPS), 1e6 * median(t_map, REPS),
               1e6 * median(t_access, REPS), 1e6 * median(t_unmap, REPS), 1e6 * median(t_release, REPS), 1e6 * median(t_each, REPS));
    }
    {
        double t_sync[REPS];
        for (r = 0; r < REPS; r++) {
            double t0 = now_sec();
            CHECK_ST(rmm__device_synchronize());
            t_sync[r] = now_sec() - t0;
        }
        printf("# device synchronize, nothing queued: %.1f us\n", 1e6 * median(t_sync, REPS));
    }
    rmm__vm_free(base, 512 * page);
    return 0;
}
