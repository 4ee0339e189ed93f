/* 06_thrust_sort.cu - Thrust with rmm.h: containers and temporary storage from an rmm resource.

   Thrust takes device memory in two places: the storage of its vectors, and temporary storage
   inside algorithms such as thrust::sort. rmm.h's C++ section (under nvcc) covers both:
   rmm::device_vector<T> is a thrust::device_vector whose allocator takes memory from the current
   device resource, and rmm::exec_policy(stream) runs an algorithm on `stream` with its temporary
   storage from that resource too.

   Here the current device resource is a statistics adaptor over a pool over cudaMalloc. A vector of
   2^22 ints is filled with thrust::sequence and sorted in descending order with thrust::sort, both
   on a stream of our own; the result is copied to a std::vector and checked on the host. A
   statistics scope around the sort shows that its temporary storage came from rmm: the bytes
   allocated in all exceed the vector's own size.

   CUDA C++ only (nvcc); it needs a GPU to run. Build and run from the repository root:
       make build/examples/nvcc/06_thrust_sort && build/examples/nvcc/06_thrust_sort
       nvcc -O2 -I. examples/06_thrust_sort.cu -o 06_thrust_sort && ./06_thrust_sort
*/
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "common.h"

#include <thrust/copy.h>
#include <thrust/functional.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

static void print_stats(const char *what, const rmm_statistics &s) {
    std::printf("  %-28s %8.2f MiB in %lld allocation(s) in all, peak %8.2f MiB, %8.2f MiB live\n", what,
                static_cast<double>(s.bytes.total) / 1048576.0, static_cast<long long>(s.count.total),
                static_cast<double>(s.bytes.peak) / 1048576.0, static_cast<double>(s.bytes.value) / 1048576.0);
}

int main() {
    const int n = 1 << 22;
    const long long vector_bytes = static_cast<long long>(n) * static_cast<long long>(sizeof(int));
    rmm_resource *cuda = nullptr, *pool = nullptr, *stats = nullptr, *previous = nullptr;
    rmm_stream stream = RMM_STREAM_DEFAULT;
    rmm_statistics s, sort_scope;
    rmm_pool_desc desc = rmm_pool_desc_default();

    CHECK(rmm_cuda_resource_create(&cuda));
    desc.initial_bytes = static_cast<size_t>(64) << 20;
    CHECK(rmm_pool_create(&pool, cuda, &desc));
    CHECK(rmm_statistics_adaptor_create(&stats, pool));
    previous = rmm_set_current_device_resource(stats);
    EXPECT(previous != nullptr);
    CHECK(rmm_stream_create(&stream));
    std::printf("current device resource: %s -> %s -> %s; sorting %d ints (%.1f MiB)\n", rmm_resource_type_name(stats),
                rmm_resource_type_name(pool), rmm_resource_type_name(cuda), n,
                static_cast<double>(vector_bytes) / 1048576.0);

    try {
        std::vector<int> host(static_cast<size_t>(n));
        {
            /* The vector's allocator captures the current resource now. Its construction zero-fills
               on the default stream; `stream` is non-blocking, so wait for that before using it. */
            rmm::device_vector<int> v(static_cast<size_t>(n));
            CHECK(rmm_stream_synchronize(RMM_STREAM_LEGACY));
            CHECK(rmm_statistics_get(stats, &s));
            print_stats("after the vector:", s);

            CHECK(rmm_statistics_push(stats));
            thrust::sequence(rmm::exec_policy(stream), v.begin(), v.end()); /* 0, 1, ..., n-1 */
            thrust::sort(rmm::exec_policy(stream), v.begin(), v.end(), thrust::greater<int>());
            CHECK(rmm_stream_synchronize(stream));
            CHECK(rmm_statistics_pop(stats, &sort_scope));
            print_stats("sequence + sort temporaries:", sort_scope);
            /* Thrust asked rmm for its temporary storage, and gave it back */
            EXPECT(sort_scope.count.total >= 1 && sort_scope.bytes.value == 0);

            thrust::copy(v.begin(), v.end(), host.begin());
            CHECK(rmm_statistics_get(stats, &s));
            print_stats("in all:", s);
            EXPECT(s.bytes.total > vector_bytes);
        } /* the vector frees its memory here, before the resources go */

        for (int i = 0; i < n; i++) EXPECT(host[static_cast<size_t>(i)] == n - 1 - i);
        std::printf("  sorted descending: [0] = %d, [1] = %d, ..., [%d] = %d\n", host[0], host[1], n - 1,
                    host[static_cast<size_t>(n - 1)]);
    } catch (const std::exception &e) {
        /* Thrust reports failures (std::bad_alloc from the rmm allocator included) by throwing */
        std::fprintf(stderr, "thrust failed: %s (last rmm error: %s)\n", e.what(), rmm_last_error());
        return 1;
    }

    CHECK(rmm_statistics_get(stats, &s));
    EXPECT(s.bytes.value == 0);
    EXPECT(rmm_set_current_device_resource(previous) == stats);
    CHECK(rmm_stream_destroy(stream));
    rmm_resource_destroy(stats);
    rmm_resource_destroy(pool);
    rmm_resource_destroy(cuda);
    std::printf("06_thrust_sort: ok\n");
    return 0;
}
