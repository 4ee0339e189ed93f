/* 05_legacy_api.c - the 2019 RMM C API: rmmInitialize, RMM_ALLOC / RMM_FREE, rmmFinalize.

   Code written against the original librmm (cuDF's C API era) keeps working: replace cudaMalloc
   and cudaFree with RMM_ALLOC(&ptr, bytes, stream) and RMM_FREE(ptr, stream), wrap calls in
   RMM_TRY (which returns the status from the enclosing function on failure), and initialize once
   with rmmInitialize. This example initializes in pool mode with logging on, allocates a few
   arrays on the default stream, asks rmmGetInfo for device memory and rmmGetAllocationOffset for
   where each array sits inside its pool chunk (what CUDA IPC needs), frees them, writes the log
   (RMM's CSV plus the file:line of each call) and finalizes. It then shows two errors: freeing a
   pointer twice (RMM_ERROR_INVALID_ARGUMENT) and allocating after rmmFinalize
   (RMM_ERROR_NOT_INITIALIZED).

   initial_pool_size 0 would mean half of all device memory (2 GiB on the host backend's simulated
   4 GiB device); the example asks for 64 MiB so it is cheap everywhere.
   The log goes to rmm_example_legacy_log.csv in $TMPDIR (default /tmp).

   Build and run from the repository root:
       make build/examples/host/05_legacy_api && build/examples/host/05_legacy_api
       gcc -std=c99 -O2 examples/05_legacy_api.c -isystem /usr/local/cuda/include \
           -L/usr/local/cuda/lib64 -lcudart -lpthread -o 05_legacy_api && ./05_legacy_api
       nvcc -x cu -O2 -I. examples/05_legacy_api.c -o 05_legacy_api && ./05_legacy_api
*/
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "common.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

/* Written in the legacy style: every call wrapped in RMM_TRY, the status returned to the caller.
   On an early return the arrays still allocated are released by rmmFinalize. */
static rmmError_t legacy_work(const char *log_path) {
    float *values = NULL;
    int *indices = NULL;
    double *scratch = NULL;
    size_t free_bytes = 0, total_bytes = 0;
    ptrdiff_t offset_values = 0, offset_indices = 0, offset_scratch = 0;
    rmm_stream stream = RMM_STREAM_DEFAULT; /* rmm_stream is cudaStream_t on CUDA; 0 as in 2019 code */

    RMM_TRY(RMM_ALLOC(&values, 1000000 * sizeof(float), stream));
    RMM_TRY(RMM_ALLOC(&indices, 250000 * sizeof(int), stream));
    RMM_TRY(RMM_ALLOC(&scratch, 3 * MIB, stream));
    printf("RMM_ALLOC: values %p, indices %p, scratch %p\n", (void *)values, (void *)indices, (void *)scratch);

    RMM_TRY(rmmGetInfo(&free_bytes, &total_bytes, stream));
    printf("rmmGetInfo: %zu MiB free of %zu MiB (the pool's 64 MiB counts as used)\n", free_bytes / MIB, total_bytes / MIB);

    RMM_TRY(rmmGetAllocationOffset(&offset_values, values, stream));
    RMM_TRY(rmmGetAllocationOffset(&offset_indices, indices, stream));
    RMM_TRY(rmmGetAllocationOffset(&offset_scratch, scratch, stream));
    printf("rmmGetAllocationOffset: %td, %td, %td bytes from the base of the pool's chunk\n", offset_values,
           offset_indices, offset_scratch);

    RMM_TRY(RMM_FREE(scratch, stream));
    RMM_TRY(RMM_FREE(indices, stream));
    RMM_TRY(RMM_FREE(values, stream));

    RMM_TRY(rmmWriteLog(log_path));
    return RMM_SUCCESS;
}

int main(void) {
    char log_path[1024];
    rmmOptions_t options, current;
    rmmError_t st;
    const char *tmp = getenv("TMPDIR");
    void *p = NULL;

    snprintf(log_path, sizeof log_path, "%s/rmm_example_legacy_log.csv", tmp && *tmp ? tmp : "/tmp");

    memset(&options, 0, sizeof options);
    options.allocation_mode = PoolAllocation; /* cudaMalloc underneath (CudaManagedMemory: managed) */
    options.initial_pool_size = 64 * MIB;
    options.enable_logging = true;
    CHECK(rmmInitialize(&options));
    EXPECT(rmmIsInitialized(&current));
    printf("rmmInitialize: pool mode, %zu MiB initial pool, logging %s\n", current.initial_pool_size / MIB,
           current.enable_logging ? "on" : "off");

    st = legacy_work(log_path);
    if (st != RMM_SUCCESS) {
        fprintf(stderr, "legacy_work failed with %s: %s\n", rmmGetErrorString(st), rmm_last_error());
        (void)rmmFinalize();
        return 1;
    }

    /* The log: RMM's columns and the call site of each RMM_ALLOC / RMM_FREE. */
    {
        FILE *f = fopen(log_path, "r");
        char line[512];
        size_t rows = 0;
        if (!f) {
            fprintf(stderr, "cannot reopen %s\n", log_path);
            (void)rmmFinalize();
            return 1;
        }
        while (fgets(line, sizeof line, f)) {
            if (rows < 2) printf("  log: %s", line);
            rows++;
        }
        fclose(f);
        EXPECT(rows == 1 + 6); /* header, 3 allocations, 3 frees */
        printf("rmmWriteLog: %zu rows in %s\n", rows, log_path);
    }

    /* Errors come back as statuses, with a message naming the call site. */
    CHECK(RMM_ALLOC(&p, 4096, RMM_STREAM_DEFAULT));
    CHECK(RMM_FREE(p, RMM_STREAM_DEFAULT));
    st = RMM_FREE(p, RMM_STREAM_DEFAULT);
    EXPECT(st == RMM_ERROR_INVALID_ARGUMENT);
    printf("RMM_FREE twice: %s: %s\n", rmmGetErrorString(st), rmm_last_error());

    CHECK(rmmFinalize()); /* destroys the pool; anything still allocated goes with it */
    EXPECT(!rmmIsInitialized(NULL));
    st = RMM_ALLOC(&p, 4096, RMM_STREAM_DEFAULT);
    EXPECT(st == RMM_ERROR_NOT_INITIALIZED && p == NULL);
    printf("RMM_ALLOC after rmmFinalize: %s\n", rmmGetErrorString(st));
    printf("05_legacy_api: ok\n");
    return 0;
}
