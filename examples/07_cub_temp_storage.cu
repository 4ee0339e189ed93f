/* 07_cub_temp_storage.cu - CUB's temporary storage from an rmm pool, stream-ordered.

   CUB's device-wide algorithms take their scratch memory from the caller in two calls: the first,
   with a NULL pointer, only writes how many bytes it needs; the second does the work. With rmm.h
   the scratch memory comes from rmm_allocate on the stream the algorithm runs on and goes back
   with rmm_deallocate on the same stream right after the launch: no synchronization, since the
   pool hands memory freed on a stream only to later work on that stream (or behind an event).
   From a pool this costs no cudaMalloc/cudaFree per call, which is why RAPIDS does it everywhere.

   The pool is the current device resource, so the input buffer, the output scalar and the scratch
   memory all come from it. cub::DeviceReduce::Sum adds 2^24 ints; cub::DeviceRadixSort::SortKeys
   sorts them; both results are checked on the host.

   CUDA C++ only (nvcc); it needs a GPU to run. Build and run from the repository root:
       make build/examples/nvcc/07_cub_temp_storage && build/examples/nvcc/07_cub_temp_storage
       nvcc -O2 -I. examples/07_cub_temp_storage.cu -o 07_cub_temp_storage && ./07_cub_temp_storage
*/
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "common.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include <cstdio>
#include <cstdlib>
#include <vector>

/* A CUDA call: rmm_status_from_cuda turns the cudaError_t into a status and a message. */
#define CUDA_CHECK(call) CHECK(rmm_status_from_cuda((call), #call))

static void print_pool(const char *when, rmm_resource *pool) {
    rmm_pool_info info;
    CHECK(rmm_pool_get_info(pool, &info));
    std::printf("  pool %-32s %7.2f MiB used of %7.2f MiB held\n", when, static_cast<double>(info.used_bytes) / 1048576.0,
                static_cast<double>(info.pool_bytes) / 1048576.0);
}

int main() {
    const int n = 1 << 24;
    const size_t count = static_cast<size_t>(n);
    rmm_resource *cuda = nullptr, *pool = nullptr, *previous = nullptr;
    rmm_pool_desc desc = rmm_pool_desc_default();
    rmm_stream stream = RMM_STREAM_DEFAULT;
    rmm_device_buffer keys_in, keys_out;
    rmm_device_scalar sum;
    std::vector<int> host(count);
    long long expected = 0;

    CHECK(rmm_cuda_resource_create(&cuda));
    desc.initial_bytes = static_cast<size_t>(256) << 20;
    CHECK(rmm_pool_create(&pool, cuda, &desc));
    previous = rmm_set_current_device_resource(pool);
    EXPECT(previous != nullptr);
    CHECK(rmm_stream_create(&stream));

    /* keys: a scrambled pattern of the values 0..99, so the sum fits an int */
    for (size_t i = 0; i < count; i++) {
        host[i] = static_cast<int>((i * 2654435761u) % 100u);
        expected += host[i];
    }
    CHECK(rmm_device_buffer_create_from(&keys_in, host.data(), count * sizeof(int), stream, nullptr));
    CHECK(rmm_device_buffer_create(&keys_out, count * sizeof(int), stream, nullptr));
    CHECK(rmm_device_scalar_create(&sum, sizeof(int), stream, nullptr));
    const int *d_in = static_cast<const int *>(keys_in.data);
    int *d_out = static_cast<int *>(keys_out.data);
    int *d_sum = static_cast<int *>(sum.data);
    std::printf("%d ints on the device (%.0f MiB), pool as the current device resource\n", n,
                static_cast<double>(count * sizeof(int)) / 1048576.0);
    print_pool("with input and output:", pool);

    /* ---- cub::DeviceReduce::Sum ---- */
    {
        void *temp = nullptr;
        size_t temp_bytes = 0;
        CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_in, d_sum, n, stream)); /* size only */
        CHECK(rmm_allocate(nullptr, &temp, temp_bytes, stream));
        print_pool("during the reduction:", pool);
        CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_sum, n, stream));
        CHECK(rmm_deallocate(nullptr, temp, temp_bytes, stream)); /* same stream: no wait needed */
        int result = 0;
        CHECK(rmm_device_scalar_get_value(&sum, &result, stream)); /* synchronizes the stream */
        EXPECT(static_cast<long long>(result) == expected);
        std::printf("  DeviceReduce::Sum: %zu bytes of temporary storage; sum %d (expected %lld)\n", temp_bytes, result,
                    expected);
    }

    /* ---- cub::DeviceRadixSort::SortKeys ---- */
    {
        void *temp = nullptr;
        size_t temp_bytes = 0;
        CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, d_in, d_out, n, 0, 8, stream));
        CHECK(rmm_allocate(nullptr, &temp, temp_bytes, stream));
        print_pool("during the sort:", pool);
        /* keys are 0..99: sorting on the low 8 bits is enough */
        CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, d_in, d_out, n, 0, 8, stream));
        CHECK(rmm_deallocate(nullptr, temp, temp_bytes, stream));
        CUDA_CHECK(cudaMemcpyAsync(host.data(), d_out, count * sizeof(int), cudaMemcpyDeviceToHost, stream));
        CHECK(rmm_stream_synchronize(stream));
        for (size_t i = 1; i < count; i++) EXPECT(host[i - 1] <= host[i]);
        EXPECT(host[0] == 0 && host[count - 1] == 99);
        std::printf("  DeviceRadixSort::SortKeys: %zu bytes of temporary storage; sorted, [0] = %d, [%d] = %d\n",
                    temp_bytes, host[0], n - 1, host[count - 1]);
    }

    CHECK(rmm_device_scalar_release(&sum));
    CHECK(rmm_device_buffer_release(&keys_out));
    CHECK(rmm_device_buffer_release(&keys_in));
    CHECK(rmm_stream_synchronize(stream));
    print_pool("at the end:", pool);
    CHECK(rmm_pool_validate(pool));
    EXPECT(rmm_set_current_device_resource(previous) == pool);
    CHECK(rmm_stream_destroy(stream));
    rmm_resource_destroy(pool);
    rmm_resource_destroy(cuda);
    std::printf("07_cub_temp_storage: ok\n");
    return 0;
}
