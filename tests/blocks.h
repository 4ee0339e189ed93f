/* tests/blocks.h - writing and checking a byte pattern in allocated blocks, on either backend.
   Include after rmm.h. Device memory is never read directly on the CUDA backend. */
#ifndef RMM_TEST_BLOCKS_H
#define RMM_TEST_BLOCKS_H
#include <string.h>

/* Writes `byte` over the block, ordered on `stream`. 1 on success. */
static int fill(void *p, size_t bytes, unsigned char byte, rmm_stream stream) {
#if defined(RMM_BACKEND_HOST)
    (void)stream;
    memset(p, byte, bytes);
    return 1;
#else
    return cudaMemsetAsync(p, byte, bytes, stream) == cudaSuccess;
#endif
}
/* 1 iff the block holds `byte`: on the host backend every byte; on CUDA, after waiting for
   `stream` (or for the whole device when whole_device), the first, middle and last byte. */
static int check_block(const void *p, size_t bytes, unsigned char byte, rmm_stream stream, int whole_device) {
#if defined(RMM_BACKEND_HOST)
    unsigned char ref[4096]; /* memcmp is one interceptor call under the sanitizers, a byte loop is not */
    size_t off;
    (void)stream;
    (void)whole_device;
    memset(ref, byte, sizeof ref);
    for (off = 0; off < bytes; off += sizeof ref) {
        size_t n = bytes - off < sizeof ref ? bytes - off : sizeof ref;
        if (memcmp((const char *)p + off, ref, n) != 0) return 0;
    }
    return 1;
#else
    size_t offs[3];
    int i;
    offs[0] = 0;
    offs[1] = bytes / 2;
    offs[2] = bytes - 1;
    if ((whole_device ? cudaDeviceSynchronize() : cudaStreamSynchronize(stream)) != cudaSuccess) return 0;
    for (i = 0; i < 3; i++) {
        unsigned char v = (unsigned char)~byte;
        if (cudaMemcpy(&v, (const char *)p + offs[i], 1, cudaMemcpyDeviceToHost) != cudaSuccess) return 0;
        if (v != byte) return 0;
    }
    return 1;
#endif
}
#endif
