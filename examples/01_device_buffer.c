/* 01_device_buffer.c - the containers: rmm_device_buffer, rmm_device_uvector, rmm_device_scalar.

   A device buffer is untyped device memory that remembers its size, capacity, stream, resource
   and device. This example creates one from host data, grows it with resize (the contents are
   kept), shrinks it with resize and then shrink_to_fit, copies it and releases it. Then a typed
   uvector of doubles made with RMM_DEVICE_UVECTOR_TYPED(f64, double): set and get elements,
   resize, release. Then a scalar: one value in device memory, set and read back. All memory
   comes from the current device resource (mr NULL) and all copies are stream-ordered on one
   stream; device memory is never dereferenced on the host: values come back through
   rmm_device_uvector_get_element and rmm_device_scalar_get_value, which copy and synchronize the
   stream.

   Build and run from the repository root:
       make build/examples/host/01_device_buffer && build/examples/host/01_device_buffer
       gcc -std=c99 -O2 examples/01_device_buffer.c -isystem /usr/local/cuda/include \
           -L/usr/local/cuda/lib64 -lcudart -lpthread -o 01_device_buffer && ./01_device_buffer
       nvcc -x cu -O2 -I. examples/01_device_buffer.c -o 01_device_buffer && ./01_device_buffer
*/
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Declares rmm_device_uvector_f64_create/_set/_get for doubles (file scope). */
RMM_DEVICE_UVECTOR_TYPED(f64, double)

#define COUNT 1000

/* Copies `bytes` bytes at `offset` of a device buffer back to host memory and waits for them.
   rmm.h has no buffer-to-host call (RMM leaves that to cudaMemcpy, which the host backend does not
   have), so this borrows the buffer's memory as a one-element uvector whose element is `bytes`
   long and lets rmm_device_uvector_get_element copy it (cudaMemcpyAsync + stream synchronize). The
   view owns nothing and is never released. */
static rmm_status buffer_read(const rmm_device_buffer *b, size_t offset, void *host, size_t bytes) {
    rmm_device_uvector view;
    if (offset > b->size || bytes > b->size - offset || bytes == 0) return RMM_ERROR_INVALID_ARGUMENT;
    memset(&view, 0, sizeof view);
    view.data = (char *)b->data + offset;
    view.element_size = bytes;
    view.size = view.capacity = 1;
    view.stream = b->stream;
    view.mr = b->mr;
    view.device = b->device;
    return rmm_device_uvector_get_element(&view, 0, host, b->stream);
}

/* true iff the first `count` ints of the buffer are 0, 3, 6, ... */
static int buffer_holds_pattern(const rmm_device_buffer *b, size_t count) {
    int *back = (int *)malloc(count * sizeof(int));
    size_t i;
    int ok = back != NULL;
    if (ok) CHECK(buffer_read(b, 0, back, count * sizeof(int)));
    for (i = 0; ok && i < count; i++) ok = back[i] == (int)(3 * i);
    free(back);
    return ok;
}

int main(void) {
    int host[COUNT];
    size_t i;
    rmm_stream stream = RMM_STREAM_DEFAULT;
    rmm_device_buffer buf, copy;
    rmm_device_uvector vec;
    rmm_device_scalar scalar;

    CHECK(rmm_stream_create(&stream));
    for (i = 0; i < COUNT; i++) host[i] = (int)(3 * i);

    /* ---- device buffer ---- */
    /* create_from allocates and copies on `stream`; the host array must stay valid until the copy
       is done, which the synchronize makes sure of. */
    CHECK(rmm_device_buffer_create_from(&buf, host, sizeof host, stream, NULL));
    CHECK(rmm_stream_synchronize(stream));
    printf("buffer: created from %zu host bytes, size %zu, capacity %zu, resource '%s'\n", sizeof host, buf.size,
           buf.capacity, rmm_resource_type_name(buf.mr));
    EXPECT(buffer_holds_pattern(&buf, COUNT));

    /* Growing past the capacity reallocates (exactly the new size) and copies the old contents;
       the new bytes are uninitialized. */
    CHECK(rmm_device_buffer_resize(&buf, 2 * sizeof host, stream));
    EXPECT(buf.size == 2 * sizeof host && buf.capacity == 2 * sizeof host);
    EXPECT(buffer_holds_pattern(&buf, COUNT));
    printf("buffer: resized to %zu bytes, the first %zu bytes kept\n", buf.size, sizeof host);

    /* Shrinking only changes the size; shrink_to_fit reallocates to it. */
    CHECK(rmm_device_buffer_resize(&buf, sizeof host / 2, stream));
    printf("buffer: resized down to %zu bytes (capacity still %zu)\n", buf.size, buf.capacity);
    CHECK(rmm_device_buffer_shrink_to_fit(&buf, stream));
    EXPECT(buf.capacity == buf.size);
    EXPECT(buffer_holds_pattern(&buf, COUNT / 2));
    printf("buffer: shrink_to_fit, capacity now %zu, contents kept\n", buf.capacity);

    /* A deep copy: a new allocation (from the current resource here) and a device-to-device copy. */
    CHECK(rmm_device_buffer_copy(&copy, &buf, stream, NULL));
    EXPECT(copy.data != buf.data && copy.size == buf.size);
    EXPECT(buffer_holds_pattern(&copy, COUNT / 2));
    printf("buffer: copied %zu bytes to a second buffer\n", copy.size);

    /* release frees on the buffer's stream (stream-ordered) and leaves it empty. */
    CHECK(rmm_device_buffer_release(&copy));
    CHECK(rmm_device_buffer_release(&buf));
    EXPECT(buf.data == NULL && buf.size == 0 && buf.capacity == 0);
    printf("buffer: released\n");

    /* ---- typed uvector of doubles ---- */
    CHECK(rmm_device_uvector_f64_create(&vec, 10, stream, NULL));
    for (i = 0; i < vec.size; i++) CHECK(rmm_device_uvector_f64_set(&vec, i, (double)i * 0.5, stream));
    CHECK(rmm_device_uvector_resize(&vec, 20, stream)); /* keeps the first 10 */
    for (i = 10; i < vec.size; i++) CHECK(rmm_device_uvector_f64_set(&vec, i, -(double)i, stream));
    {
        double first = 0.0, middle = 0.0, last = 0.0;
        CHECK(rmm_device_uvector_f64_get(&vec, 0, &first, stream));
        CHECK(rmm_device_uvector_f64_get(&vec, 9, &middle, stream));
        CHECK(rmm_device_uvector_f64_get(&vec, 19, &last, stream));
        EXPECT(first == 0.0 && middle == 4.5 && last == -19.0);
        printf("uvector<double>: %zu elements, [0] = %g, [9] = %g, [19] = %g\n", vec.size, first, middle, last);
    }
    /* an index past the size is an error, not an out-of-bounds copy */
    {
        double out = 0.0;
        rmm_status st = rmm_device_uvector_f64_get(&vec, 20, &out, stream);
        EXPECT(st == RMM_ERROR_INVALID_ARGUMENT);
        printf("uvector<double>: get(20): %s: %s\n", rmm_status_string(st), rmm_last_error());
    }
    CHECK(rmm_device_uvector_release(&vec));

    /* ---- scalar ---- */
    {
        int64_t value = INT64_C(1) << 40, back = 0;
        CHECK(rmm_device_scalar_create(&scalar, sizeof value, stream, NULL));
        /* async: `value` must stay alive until the copy is done; get_value synchronizes the stream */
        CHECK(rmm_device_scalar_set_value_async(&scalar, &value, stream));
        CHECK(rmm_device_scalar_get_value(&scalar, &back, stream));
        EXPECT(back == value);
        printf("scalar<int64_t>: set and read back %lld\n", (long long)back);
        CHECK(rmm_device_scalar_release(&scalar));
    }

    CHECK(rmm_stream_synchronize(stream));
    CHECK(rmm_stream_destroy(stream));
    printf("01_device_buffer: ok\n");
    return 0;
}
