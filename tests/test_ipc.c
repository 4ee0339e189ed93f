/* Where a block comes from (rmm_resource_allocation_base, for CUDA IPC of sub-allocated memory)
   through every kind of resource and adaptor, and its errors. On a GPU the base is also handed to
   cudaIpcGetMemHandle, which must accept it. Built on the host backend (ASan/UBSan) and on the CUDA
   runtime (gcc -lcudart and nvcc). */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "harness.h"
#if !defined(RMM_BACKEND_HOST)
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#define MiB ((size_t)1 << 20)

/* base + offset == ptr, the base is the start of an allocation of `bottom` (a cudaMalloc resource),
   and (on a GPU) cudaIpcGetMemHandle accepts it. */
static void check_base(rmm_resource *mr, void *ptr, rmm_resource *bottom) {
    void *base = NULL;
    size_t offset = 12345;
    CHECK_OK(rmm_resource_allocation_base(mr, ptr, &base, &offset));
    CHECK((char *)base + offset == (char *)ptr);
    CHECK(rmm_resource_is_equal(bottom, rmm_get_current_device_resource()) || bottom != NULL);
#if !defined(RMM_BACKEND_HOST)
    {
        cudaIpcMemHandle_t h;
        CHECK(cudaIpcGetMemHandle(&h, base) == cudaSuccess);
        (void)cudaGetLastError();
    }
#endif
}

TEST(allocation_base_through_every_sub_allocator) {
    rmm_resource *cuda = NULL, *pool = NULL, *pool2 = NULL, *fixed = NULL, *arena = NULL, *bins = NULL, *track = NULL, *aligned = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    rmm_arena_desc ad = rmm_arena_desc_default();
    rmm_binning_desc bd = rmm_binning_desc_default();
    void *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *f = NULL, *g = NULL, *base = NULL;
    size_t offset = 0;
    NEED_GPU();
    CHECK_OK(rmm_cuda_resource_create(&cuda));
    pd.initial_bytes = 8 * MiB;
    CHECK_OK(rmm_pool_create(&pool, cuda, &pd));
    /* a pool: the second block lies inside the first chunk, past the first block */
    CHECK_OK(rmm_allocate(pool, &a, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(pool, &b, 3000, RMM_STREAM_DEFAULT));
    check_base(pool, b, cuda);
    CHECK_OK(rmm_resource_allocation_base(pool, b, &base, &offset));
    CHECK(offset == 1024 && (char *)base == (char *)a);
    /* a pool over that pool: offsets add up */
    pd.initial_bytes = 2 * MiB;
    CHECK_OK(rmm_pool_create(&pool2, pool, &pd));
    CHECK_OK(rmm_allocate(pool2, &c, 5000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(pool2, &d, 5000, RMM_STREAM_DEFAULT));
    check_base(pool2, d, cuda);
    /* fixed-size, arena, binning */
    CHECK_OK(rmm_fixed_size_create(&fixed, pool, NULL));
    CHECK_OK(rmm_allocate(fixed, &e, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(fixed, &e, 4096, RMM_STREAM_DEFAULT)); /* the second block of its chunk */
    check_base(fixed, e, cuda);
    ad.arena_bytes = 16 * MiB;
    CHECK_OK(rmm_arena_create(&arena, cuda, &ad));
    CHECK_OK(rmm_allocate(arena, &f, 7000, RMM_STREAM_DEFAULT));
    check_base(arena, f, cuda);
    CHECK_OK(rmm_deallocate(arena, f, 7000, RMM_STREAM_DEFAULT));
    bd.min_size_exponent = 10;
    bd.max_size_exponent = 12;
    CHECK_OK(rmm_binning_create(&bins, pool, &bd));
    CHECK_OK(rmm_allocate(bins, &f, 2000, RMM_STREAM_DEFAULT));
    check_base(bins, f, cuda);
    CHECK_OK(rmm_deallocate(bins, f, 2000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(bins, &f, 3 * MiB, RMM_STREAM_DEFAULT)); /* above the bins: the pool's */
    check_base(bins, f, cuda);
    CHECK_OK(rmm_deallocate(bins, f, 3 * MiB, RMM_STREAM_DEFAULT));
    /* adaptors pass the question down; the aligned adaptor through its raw block */
    CHECK_OK(rmm_tracking_adaptor_create(&track, pool, false));
    CHECK_OK(rmm_aligned_adaptor_create(&aligned, track, 65536, 0));
    CHECK_OK(rmm_allocate(aligned, &g, 10000, RMM_STREAM_DEFAULT));
    CHECK(((uintptr_t)g & 65535) == 0);
    check_base(aligned, g, cuda);
    /* errors: nothing changes */
    CHECK_STATUS(rmm_resource_allocation_base(pool, (char *)b + 256, &base, &offset), RMM_ERROR_INVALID_ARGUMENT); /* not a block start */
    CHECK(base == NULL && offset == 0);
    CHECK_STATUS(rmm_resource_allocation_base(pool, NULL, &base, &offset), RMM_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(rmm_resource_allocation_base(pool, b, NULL, &offset), RMM_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(rmm_resource_allocation_base(pool, b, &base, NULL), RMM_ERROR_INVALID_ARGUMENT);
    CHECK_OK(rmm_deallocate(aligned, g, 10000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(fixed, e, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool2, c, 5000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool2, d, 5000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool, a, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool, b, 3000, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(aligned);
    rmm_resource_destroy(track);
    rmm_resource_destroy(bins);
    rmm_resource_destroy(arena);
    rmm_resource_destroy(fixed);
    rmm_resource_destroy(pool2);
    rmm_resource_destroy(pool);
    rmm_resource_destroy(cuda);
}

static rmm_status user_alloc(void **ptr, size_t bytes, rmm_stream stream, void *arg) {
    return rmm_allocate((rmm_resource *)arg, ptr, bytes, stream);
}
static void user_free(void *ptr, size_t bytes, rmm_stream stream, void *arg) { (void)rmm_deallocate((rmm_resource *)arg, ptr, bytes, stream); }
TEST(allocation_base_not_supported) {
    rmm_resource *user = NULL, *vpool = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    void *p = NULL, *base = NULL;
    size_t offset = 0;
    NEED_GPU();
    CHECK_OK(rmm_callback_resource_create(&user, user_alloc, user_free, rmm_get_current_device_resource()));
    CHECK_OK(rmm_allocate(user, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_resource_allocation_base(user, p, &base, &offset), RMM_ERROR_NOT_SUPPORTED);
    CHECK_OK(rmm_deallocate(user, p, 1000, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(user);
    pd.growth = RMM_POOL_GROWTH_VIRTUAL;
    pd.virtual_bytes = 64 * MiB;
    if (rmm_pool_create(&vpool, NULL, &pd) == RMM_SUCCESS) {
        CHECK_OK(rmm_allocate(vpool, &p, 1000, RMM_STREAM_DEFAULT));
        CHECK_STATUS(rmm_resource_allocation_base(vpool, p, &base, &offset), RMM_ERROR_NOT_SUPPORTED);
        /* a pointer that is not a live block is refused as such, and so by rmm_record_stream too
           (it was NOT_SUPPORTED, which rmm_record_stream took for "cannot tell") */
        CHECK_STATUS(rmm_resource_allocation_base(vpool, (char *)p + 256, &base, &offset), RMM_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(rmm_record_stream(vpool, (char *)p + 256, 100, RMM_STREAM_DEFAULT), RMM_ERROR_INVALID_ARGUMENT);
        CHECK_OK(rmm_record_stream(vpool, p, 1000, RMM_STREAM_DEFAULT)); /* a live block: recorded */
        CHECK_OK(rmm_deallocate(vpool, p, 1000, RMM_STREAM_DEFAULT));
        rmm_resource_destroy(vpool);
    }
}

/* Through a binning resource (red team 24): a block of an arena bin has the arena's allocation as
   its base (it had itself, offset 0, from the upstream below); one of a user's bin, which cannot
   say where its memory comes from, is NOT_SUPPORTED, and so is a block from upstream while such a
   bin is there and nothing below upstream holds the block; a pool below upstream that holds it
   says so. */
TEST(allocation_base_through_binning_bins) {
    rmm_resource *arena = NULL, *bins = NULL, *user = NULL, *bins2 = NULL, *pool = NULL;
    rmm_arena_desc ad = rmm_arena_desc_default();
    rmm_pool_desc pd = rmm_pool_desc_default();
    void *p = NULL, *q = NULL, *big = NULL, *base = NULL, *abase = NULL;
    size_t offset = 0, aoffset = 0;
    NEED_GPU();
    ad.arena_bytes = 4 * MiB;
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &ad));
    CHECK_OK(rmm_binning_create(&bins, rmm_get_current_device_resource(), NULL));
    CHECK_OK(rmm_binning_add_bin(bins, 64 << 10, arena));
    CHECK_OK(rmm_allocate(bins, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(bins, &q, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_allocation_base(arena, q, &abase, &aoffset));
    CHECK_OK(rmm_resource_allocation_base(bins, q, &base, &offset));
    CHECK(base == abase && offset == aoffset && offset > 0);
    check_base(bins, q, rmm_get_current_device_resource());
    CHECK_OK(rmm_deallocate(bins, p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(bins, q, 1000, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(bins);
    rmm_resource_destroy(arena);
    CHECK_OK(rmm_callback_resource_create(&user, user_alloc, user_free, rmm_get_current_device_resource()));
    CHECK_OK(rmm_binning_create(&bins, rmm_get_current_device_resource(), NULL));
    CHECK_OK(rmm_binning_add_bin(bins, 64 << 10, user));
    CHECK_OK(rmm_allocate(bins, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(bins, &big, MiB, RMM_STREAM_DEFAULT));
    base = (void *)&offset;
    CHECK_STATUS(rmm_resource_allocation_base(bins, p, &base, &offset), RMM_ERROR_NOT_SUPPORTED);
    CHECK(base == NULL && offset == 0 && strstr(rmm_last_error(), "cannot say") != NULL);
    CHECK_STATUS(rmm_resource_allocation_base(bins, big, &base, &offset), RMM_ERROR_NOT_SUPPORTED);
    CHECK_OK(rmm_deallocate(bins, p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(bins, big, MiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(bins);
    pd.initial_bytes = 4 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &pd));
    CHECK_OK(rmm_binning_create(&bins2, pool, NULL));
    CHECK_OK(rmm_binning_add_bin(bins2, 64 << 10, user));
    CHECK_OK(rmm_allocate(bins2, &big, MiB, RMM_STREAM_DEFAULT)); /* from upstream, the pool */
    check_base(bins2, big, rmm_get_current_device_resource());
    CHECK_OK(rmm_deallocate(bins2, big, MiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(bins2);
    rmm_resource_destroy(pool);
    rmm_resource_destroy(user);
}

/* The legacy offset (rmmGetAllocationOffset) comes from the same walk. */
TEST(legacy_allocation_offset) {
    rmmOptions_t o;
    void *a = NULL, *b = NULL;
    ptrdiff_t off = -1;
    NEED_GPU();
    memset(&o, 0, sizeof o);
    o.allocation_mode = PoolAllocation;
    o.initial_pool_size = 16 * MiB;
    CHECK_OK(rmmInitialize(&o));
    CHECK_OK(RMM_ALLOC(&a, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(RMM_ALLOC(&b, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmmGetAllocationOffset(&off, b, RMM_STREAM_DEFAULT));
    CHECK(off == (char *)b - (char *)a + 0 && off == 1024);
    CHECK_OK(RMM_FREE(a, RMM_STREAM_DEFAULT));
    CHECK_OK(RMM_FREE(b, RMM_STREAM_DEFAULT));
    CHECK_OK(rmmFinalize());
}

/* rmm_mem_pool_free_imported and rmm_mem_pool_destroy_imported act only on what this process
   imported: underneath they are a cudaFree and a cudaMemPoolDestroy, and given this process's own
   block or an async resource's own pool they freed it (red team 33; rmmh's ImportedPool kept such
   a record, C callers had none). On the host backend too, where every import is NOT_SUPPORTED. */
TEST(imported_frees_refuse_what_was_not_imported) {
    rmm_resource *cuda = NULL, *async = NULL;
    void *p = NULL;
    rmm_mem_pool own = NULL;
    size_t before = rmm__imported_ptrs.first.count;
    NEED_GPU();
    CHECK_OK(rmm_cuda_resource_create(&cuda));
    CHECK_OK(rmm_allocate(cuda, &p, 4096, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_mem_pool_free_imported(p), RMM_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(rmm_last_error(), "not a block rmm_mem_pool_import_pointer mapped") != NULL);
    CHECK_OK(rmm_deallocate(cuda, p, 4096, RMM_STREAM_DEFAULT)); /* still this process's, freed once */
    if (rmm_async_resource_create(&async, NULL) == RMM_SUCCESS) {
        CHECK_OK(rmm_async_resource_get_pool(async, &own));
        CHECK_STATUS(rmm_mem_pool_destroy_imported(own), RMM_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(rmm_last_error(), "not a pool rmm_mem_pool_import_fd made") != NULL);
        CHECK_OK(rmm_allocate(async, &p, 4096, RMM_STREAM_DEFAULT)); /* the pool still works */
        CHECK_OK(rmm_deallocate(async, p, 4096, RMM_STREAM_DEFAULT));
        rmm_resource_destroy(async);
    }
    CHECK_STATUS(rmm_mem_pool_destroy_imported((rmm_mem_pool)(uintptr_t)0x1000), RMM_ERROR_INVALID_ARGUMENT);
    CHECK(rmm__imported_ptrs.first.count == before);
    rmm_resource_destroy(cuda);
}

/* The record of imports counts a key imported again (the driver hands an exported block's address
   back for a second import in one process, and unmaps it at the first cudaFree: measured on an
   H200): each import is taken once, the last says so. Host: the record's own functions. */
TEST(import_record_counts_imports_of_one_key) {
    rmm__import_record r;
    void *v = NULL;
    bool again = true, last = true;
    memset(&r, 0, sizeof r);
    CHECK(rmm__import_note(&r, 0x1000, (void *)(uintptr_t)0x77, &again) && !again);
    CHECK(rmm__import_note(&r, 0x1000, (void *)(uintptr_t)0x77, &again) && again);
    CHECK(rmm__import_note(&r, 0x1000, (void *)(uintptr_t)0x77, &again) && again);
    CHECK(rmm__import_note(&r, 0x2000, (void *)(uintptr_t)0x88, &again) && !again);
    CHECK(rmm__import_take(&r, 0x1000, &v, &last) && v == (void *)(uintptr_t)0x77 && !last);
    CHECK(rmm__import_take(&r, 0x1000, &v, &last) && !last);
    CHECK(rmm__import_take(&r, 0x1000, &v, &last) && last);
    CHECK(!rmm__import_take(&r, 0x1000, &v, &last));
    CHECK(rmm__import_take(&r, 0x2000, &v, &last) && v == (void *)(uintptr_t)0x88 && last);
    CHECK(r.first.count == 0 && r.again.count == 0);
    rmm__addr_map_free(&r.first);
    rmm__addr_map_free(&r.again);
}

#if defined(RMM_BACKEND_HOST)
/* Which frees and destroys of a key imported twice are the driver's (the host backend's driver
   calls answer NOT_SUPPORTED, which shows the call was made): a block's first free is not (the
   driver maps it once, and the last free unmaps it), each of a pool's destroys is (the driver
   counts pool imports: measured on an H200, the handle still imported after one destroy). A
   failed driver call puts the import back. The imports are noted directly: the host backend
   imports nothing. */
TEST(imports_of_one_key_reach_the_driver_as_it_counts) {
    void *v = NULL;
    bool again = false, last = false;
    CHECK(rmm__import_note(&rmm__imported_ptrs, 0x7000, (void *)(uintptr_t)0x1, &again) && !again);
    CHECK(rmm__import_note(&rmm__imported_ptrs, 0x7000, (void *)(uintptr_t)0x1, &again) && again);
    CHECK_OK(rmm_mem_pool_free_imported((void *)(uintptr_t)0x7000)); /* the other import maps it still: no driver call */
    CHECK_STATUS(rmm_mem_pool_free_imported((void *)(uintptr_t)0x7000), RMM_ERROR_NOT_SUPPORTED); /* the last: the driver's */
    CHECK(rmm__import_take(&rmm__imported_ptrs, 0x7000, &v, &last) && last && v == (void *)(uintptr_t)0x1); /* (put back, once) */
    CHECK(!rmm__import_take(&rmm__imported_ptrs, 0x7000, &v, &last));
    CHECK(rmm__import_note(&rmm__imported_pools, 0x8000, (void *)(uintptr_t)1, &again) && !again);
    CHECK(rmm__import_note(&rmm__imported_pools, 0x8000, (void *)(uintptr_t)1, &again) && again);
    CHECK_STATUS(rmm_mem_pool_destroy_imported((rmm_mem_pool)(uintptr_t)0x8000), RMM_ERROR_NOT_SUPPORTED); /* the first: the driver's too */
    CHECK(rmm__import_take(&rmm__imported_pools, 0x8000, &v, &last) && !last); /* (both imports still noted) */
    CHECK(rmm__import_take(&rmm__imported_pools, 0x8000, &v, &last) && last);
    CHECK_STATUS(rmm_mem_pool_destroy_imported((rmm_mem_pool)(uintptr_t)0x8000), RMM_ERROR_INVALID_ARGUMENT);
}
#endif

#if !defined(RMM_BACKEND_HOST)
/* The importer of imported_again_stays_until_its_last_free: this program run again as
   `test_ipc --import-child FD HEX` (a process of its own: CUDA IPC imports only from another
   process). Returns the number of failed checks. */
static int import_child(int fd, const char *hex) {
    unsigned char h[RMM_IPC_HANDLE_BYTES];
    rmm_mem_pool p1 = NULL, p2 = NULL;
    cudaMemPool_t q1 = NULL, q2 = NULL;
    void *a = NULL, *b = NULL;
    size_t i;
    alarm(60); /* (a hung child would hang the suite: the parent waits for it) */
    if (strlen(hex) != 2 * sizeof h) return 1;
    for (i = 0; i < sizeof h; i++) {
        unsigned v = 0;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 1;
        h[i] = (unsigned char)v;
    }
    /* what the driver does with a pool imported twice (printed: the record counts either way) */
    if (cudaMemPoolImportFromShareableHandle(&q1, (void *)(uintptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0) != cudaSuccess) {
        (void)cudaGetLastError();
    } else if (cudaMemPoolImportFromShareableHandle(&q2, (void *)(uintptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0) != cudaSuccess) {
        (void)cudaMemPoolDestroy(q1);
        (void)cudaGetLastError();
    } else {
        cudaError_t e1 = cudaMemPoolDestroy(q1), e2 = cudaErrorUnknown, e3 = cudaErrorUnknown;
        void *c = NULL;
        if (q1 != q2) e3 = cudaMemPoolDestroy(q2);
        else if ((e2 = cudaMemPoolImportPointer(&c, q2, (struct cudaMemPoolPtrExportData *)(void *)h)) == cudaSuccess) (void)cudaFree(c), e3 = cudaMemPoolDestroy(q2);
        printf("  (the driver: a pool imported twice %s; the first destroy %s, %s, the second %s)\n", q1 == q2 ? "is one handle" : "is two handles",
               cudaGetErrorName(e1), q1 == q2 ? (e2 == cudaSuccess ? "the handle still imports" : "the handle no longer imports") : "-", cudaGetErrorName(e3));
        (void)cudaGetLastError();
    }
    CHECK_OK(rmm_mem_pool_import_fd(fd, &p1));
    CHECK_OK(rmm_mem_pool_import_fd(fd, &p2));
    CHECK_OK(rmm_mem_pool_import_pointer(p1, h, &a));
    CHECK_OK(rmm_mem_pool_import_pointer(p1, h, &b));
    printf("  (the pool imported twice: %s; the block imported twice: %s)\n", p1 == p2 ? "one handle" : "two handles", a == b ? "one address" : "two addresses");
    CHECK_OK(rmm_mem_pool_free_imported(a));
    CHECK(cudaMemset(b, 7, 4096) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess); /* the other import still maps it */
    (void)cudaGetLastError();
    CHECK_OK(rmm_mem_pool_free_imported(b));
    CHECK_STATUS(rmm_mem_pool_free_imported(b), RMM_ERROR_INVALID_ARGUMENT); /* freed as often as imported */
    CHECK_OK(rmm_mem_pool_destroy_imported(p2)); /* (one handle: the driver counts the two imports) */
    CHECK_OK(rmm_mem_pool_import_pointer(p1, h, &a)); /* the other import of the pool still imports */
    CHECK_OK(rmm_mem_pool_free_imported(a));
    CHECK_OK(rmm_mem_pool_destroy_imported(p1));
    CHECK_STATUS(rmm_mem_pool_destroy_imported(p1), RMM_ERROR_INVALID_ARGUMENT);
    return harness_checks_failed_in_test;
}
/* One process imports an exported block (and its pool) twice: the driver gives the same address
   back and unmaps it at the first cudaFree (an H200, driver 580.159.04, 2026-11-30), so before
   the record counted imports, the first rmm_mem_pool_free_imported unmapped the block under the
   second import and the second free was refused. Each import is freed once now, the mapping
   going with the last. */
TEST(imported_again_stays_until_its_last_free) {
    rmm_resource *mr = NULL;
    rmm_async_desc d = rmm_async_desc_default();
    rmm_mem_pool pool = NULL;
    unsigned char h[RMM_IPC_HANDLE_BYTES];
    char hex[2 * RMM_IPC_HANDLE_BYTES + 1], fds[16];
    void *p = NULL;
    int fd = -1, status = -1;
    size_t i;
    rmm_status st;
    pid_t pid;
    NEED_GPU();
    d.export_handle = RMM_EXPORT_POSIX_FD;
    st = rmm_async_resource_create(&mr, &d);
    if (st == RMM_ERROR_NOT_SUPPORTED) {
        printf("  (pools that export a descriptor are not supported here: %s)\n", rmm_last_error());
        return;
    }
    CHECK_OK(st);
    if (!mr) return;
    CHECK_OK(rmm_allocate(mr, &p, MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_stream_synchronize(RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_async_resource_get_pool(mr, &pool));
    CHECK_OK(rmm_mem_pool_export_fd(pool, &fd));
    CHECK_OK(rmm_mem_pool_export_pointer(p, h));
    if (fd >= 0) {
        for (i = 0; i < sizeof h; i++) snprintf(hex + 2 * i, 3, "%02x", h[i]);
        snprintf(fds, sizeof fds, "%d", fd);
        CHECK(fcntl(fd, F_SETFD, 0) == 0); /* (the child inherits it) */
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            execl("/proc/self/exe", "test_ipc", "--import-child", fds, hex, (char *)NULL);
            _exit(127);
        }
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(fd);
    }
    CHECK_OK(rmm_deallocate(mr, p, MiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(mr);
}
#endif

#if !defined(RMM_BACKEND_HOST)
/* The exports' NOT_SUPPORTED is for "invalid value" and "not supported" only: a sticky error (a
   kernel's fault) is CUDA, not "cannot export" (every error but out of memory was NOT_SUPPORTED
   until red team 33, and rmmh's GPU test then skipped). No device needed: the mapping alone. */
TEST(export_errors_map_as_documented) {
    CHECK_STATUS(rmm__ipc_fail(cudaErrorInvalidValue, "cudaMemPoolExportPointer", true), RMM_ERROR_NOT_SUPPORTED);
    CHECK_STATUS(rmm__ipc_fail(cudaErrorNotSupported, "cudaMemPoolExportToShareableHandle", true), RMM_ERROR_NOT_SUPPORTED);
    CHECK_STATUS(rmm__ipc_fail(cudaErrorLaunchFailure, "cudaMemPoolExportPointer", true), RMM_ERROR_CUDA);
    CHECK(rmm_last_cuda_error() == (int)cudaErrorLaunchFailure);
    CHECK_STATUS(rmm__ipc_fail(cudaErrorMemoryAllocation, "cudaMemPoolExportPointer", true), RMM_ERROR_OUT_OF_MEMORY);
}
#endif

int main(int argc, char **argv) {
#if !defined(RMM_BACKEND_HOST)
    if (argc == 4 && strcmp(argv[1], "--import-child") == 0) return import_child(atoi(argv[2]), argv[3]) ? 1 : 0;
#else
    (void)argc;
    (void)argv;
#endif
    HARNESS_INIT();
    RUN(allocation_base_through_every_sub_allocator);
    RUN(allocation_base_not_supported);
    RUN(allocation_base_through_binning_bins);
    RUN(legacy_allocation_offset);
    RUN(imported_frees_refuse_what_was_not_imported);
    RUN(import_record_counts_imports_of_one_key);
#if defined(RMM_BACKEND_HOST)
    RUN(imports_of_one_key_reach_the_driver_as_it_counts);
#endif
#if !defined(RMM_BACKEND_HOST)
    RUN(imported_again_stays_until_its_last_free);
    RUN(export_errors_map_as_documented);
#endif
    return harness_main_end();
}
