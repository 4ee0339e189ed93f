/* tests/fuzz_suballoc.c - a libFuzzer target for the pool, binning and arena sub-allocators.

   Build (the Makefile's $(BUILD)/fuzz/% rule):
       clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -DRMM_BACKEND_HOST tests/fuzz_suballoc.c -lpthread
   Run: `make test` runs it for 20 s with -seed=1; `make fuzz` for FUZZ_SECONDS (default 300).
   Replay a crash: build/fuzz/fuzz_suballoc crash-<hash>.

   The input is a program. Its first byte picks the resource and its settings:
       bits 0-1  0: pool, 1: binning over a pool, 2: arena, 3: arena with superblocks of 384 KiB
                 (not a power of two)
       bit  2    pool growth ON_DEMAND in steps of 1.5 MiB (not a power of two), else GEOMETRIC
       bit  3    pool streams_outlive_pool
       bits 4-5  pool maximum 4, 8, 16 or 32 MiB
       bit  6    pool initial_bytes 1 MiB (else 0); with bit 2 set too: RMM_POOL_GROWTH_VIRTUAL instead
                 (a 64 MiB reserved range, the maximum capping its mapped pages)
       bit  7    run the program 4 times over (blocks stay live across rounds), else once
   The second byte stacks adaptors on top: bit 0 a tracking adaptor, bit 1 a statistics adaptor.
   Between them and the resource, and between the resource and the device, sit two "flaky" layers
   that the program can make fail their next free (op 6 below); a failed free must leave every
   layer as it was, so the program retries it and it must then succeed.
   Every byte after those is one operation, kind = b % 8 and argument a = b / 8 (0..31), dense so that
   the short inputs libFuzzer starts with already do something (a missing byte reads as 0):
       0-2  allocate: the next byte s gives e = s % 24; e == 23 means 0 bytes, else 2^e (1 + a/32)
       3    allocate aligned to 512 << (a % 5): the next byte s gives e = s % 24 as above, and the
            fraction (s / 24) / 16
       4    free live block a % n on the stream it was allocated on
       5    free live block a % n on the current stream, after synchronizing its own
       6    a < 24: make stream a % 6 current (default, per-thread, one of three streams made by
            rmm_stream_create, or a "foreign" stream the library did not make); 24..27 trim the pool
            (the binning's pool; nothing for the arena); 28..29 make the next free reaching the upper
            flaky layer fail, 30..31 the next free reaching the lower one (trim, growth, destroy)
       7    re-create stream 2 + a % 4 (the foreign one too; not for streams_outlive_pool pools,
            which promise their streams live on)
   At most 64 blocks are live; an allocation beyond that frees one instead.

   After every operation the resource (and the pool under a binning resource) must validate, and the
   pool's used_bytes must equal the bytes the model holds. Every live block carries its own byte
   pattern, written at allocation and checked in full at its free; blocks must be aligned as asked
   and never overlap (the model keeps them sorted by address). Allocations may fail only with
   OUT_OF_MEMORY; frees must succeed. Any breach prints what happened and calls abort(), which
   libFuzzer reports as a crash. Everything is freed and destroyed at the end of each input (no
   leaks), and nothing depends on time or global randomness, so every input replays exactly. */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define MAX_LIVE 64
#define MAX_OPS 4096
#define STREAMS 6
#define FOREIGN 5 /* made by the platform layer directly, as cudaStreamCreate would */

typedef struct fblock {
    char *p;
    size_t bytes, span, align;
    int stream;
    unsigned char pattern;
} fblock;

/* A layer whose next free can be made to fail (once). */
typedef struct flaky {
    rmm_resource base;
    rmm_resource *upstream;
    int fail_next_free;
} flaky;
static rmm_status flaky_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    return rmm_allocate_aligned(((flaky *)self)->upstream, ptr, bytes, alignment, stream);
}
static rmm_status flaky_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    flaky *f = (flaky *)self;
    if (f->fail_next_free) {
        f->fail_next_free = 0;
        return rmm_set_last_error(RMM_ERROR_CUDA, "flaky: free refused on purpose");
    }
    return rmm_deallocate_aligned(f->upstream, ptr, bytes, alignment, stream);
}
static const rmm_resource_vtable flaky_vtable = {"flaky", flaky_allocate, flaky_deallocate, NULL, NULL};

typedef struct fuzz {
    const uint8_t *data;
    size_t size, at;
    int kind; /* 0 pool, 1 binning, 2 arena */
    bool streams_outlive;
    rmm_resource *mr, *pool;     /* mr: what the program calls (the top adaptor, or sub) */
    rmm_resource *sub;           /* the sub-allocator under test */
    rmm_resource *tracking, *stats;
    flaky upper, lower;
    rmm_stream streams[STREAMS];
    int current;
    fblock live[MAX_LIVE]; /* sorted by address */
    size_t n, live_spans;
    unsigned counter;
    int op_index;
} fuzz;

static void die(const fuzz *f, const char *what, rmm_status st) {
    fprintf(stderr, "fuzz_suballoc: operation %d (kind %d): %s: %s (last error: %s)\n", f->op_index, f->kind, what,
            rmm_status_string(st), rmm_last_error());
    abort();
}
static uint8_t next_byte(fuzz *f) { return f->at < f->size ? f->data[f->at++] : 0; }

static void fill_pattern(void *p, size_t bytes, unsigned char byte) { memset(p, byte, bytes); }
static int check_pattern(const void *p, size_t bytes, unsigned char byte) {
    unsigned char ref[4096];
    size_t off;
    memset(ref, byte, sizeof ref);
    for (off = 0; off < bytes; off += sizeof ref) {
        size_t n = bytes - off < sizeof ref ? bytes - off : sizeof ref;
        if (memcmp((const char *)p + off, ref, n) != 0) return 0;
    }
    return 1;
}

/* 2^e (1 + frac/32), or 0 for e == 23. */
static size_t decode_size(unsigned e, size_t frac32) {
    if (e >= 23) return 0;
    return ((size_t)1 << e) + ((((size_t)1 << e) * frac32) >> 5);
}

static void validate(fuzz *f) {
    rmm_status st = rmm_resource_validate(f->sub);
    if (st != RMM_SUCCESS) die(f, "validate", st);
    if (f->tracking) {
        size_t bytes = 0, count = 0;
        st = rmm_tracking_get(f->tracking, &bytes, &count);
        if (st != RMM_SUCCESS || count != f->n) die(f, "the tracking adaptor's count differs from the model", st ? st : RMM_ERROR_CORRUPTION);
    }
    if (f->stats) {
        rmm_statistics s;
        st = rmm_statistics_get(f->stats, &s);
        if (st != RMM_SUCCESS || s.count.value != (int64_t)f->n) die(f, "the statistics adaptor's count differs from the model", st ? st : RMM_ERROR_CORRUPTION);
    }
    if (f->pool && f->pool != f->sub) {
        st = rmm_resource_validate(f->pool);
        if (st != RMM_SUCCESS) die(f, "validate (the pool under the binning resource)", st);
    }
    if (f->kind == 0) {
        rmm_pool_info info;
        st = rmm_pool_get_info(f->pool, &info);
        if (st != RMM_SUCCESS) die(f, "rmm_pool_get_info", st);
        if (info.used_bytes != f->live_spans) die(f, "the pool's used_bytes differ from the model", RMM_ERROR_CORRUPTION);
        if (info.used_bytes + info.free_bytes != info.pool_bytes) die(f, "used + free != pool bytes", RMM_ERROR_CORRUPTION);
        if (f->pool && ((rmm__pool *)f->pool)->desc.maximum_bytes && info.pool_bytes > ((rmm__pool *)f->pool)->desc.maximum_bytes)
            die(f, "the pool grew past its maximum", RMM_ERROR_CORRUPTION);
    }
}

static void free_at(fuzz *f, size_t i, int stream) {
    fblock b = f->live[i];
    rmm_status st;
    if (!check_pattern(b.p, b.bytes, b.pattern)) die(f, "a live block lost its pattern", RMM_ERROR_CORRUPTION);
    memmove(&f->live[i], &f->live[i + 1], (f->n - i - 1) * sizeof f->live[0]);
    f->n--;
    f->live_spans -= b.span;
    if (b.align == 256) st = rmm_deallocate(f->mr, b.p, b.bytes, f->streams[stream]);
    else st = rmm_deallocate_aligned(f->mr, b.p, b.bytes, b.align, f->streams[stream]);
    if (st == RMM_ERROR_CUDA && strstr(rmm_last_error(), "on purpose")) { /* the upper flaky layer refused: retry */
        if (b.align == 256) st = rmm_deallocate(f->mr, b.p, b.bytes, f->streams[stream]);
        else st = rmm_deallocate_aligned(f->mr, b.p, b.bytes, b.align, f->streams[stream]);
    }
    if (st != RMM_SUCCESS) die(f, "deallocate", st);
}

static void do_allocate(fuzz *f, size_t bytes, size_t align) {
    void *p = NULL;
    rmm_status st;
    size_t i, lo, hi;
    fblock b;
    if (align == 256) st = rmm_allocate(f->mr, &p, bytes, f->streams[f->current]);
    else st = rmm_allocate_aligned(f->mr, &p, bytes, align, f->streams[f->current]);
    if (st == RMM_ERROR_OUT_OF_MEMORY) {
        if (p != NULL) die(f, "a failed allocation left *ptr set", st);
        return;
    }
    if (st != RMM_SUCCESS) die(f, "allocate", st);
    if (bytes == 0) {
        if (p != NULL) die(f, "a zero-byte allocation returned a pointer", st);
        return;
    }
    if (p == NULL || (uintptr_t)p % align != 0) die(f, "a block is not aligned as asked", st);
    b.p = (char *)p;
    b.bytes = bytes;
    b.span = (bytes + 255) & ~(size_t)255;
    b.align = align;
    b.stream = f->current;
    b.pattern = (unsigned char)(++f->counter * 73u + 5u);
    /* insert sorted, refusing overlaps with either neighbour */
    lo = 0;
    hi = f->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->live[mid].p < b.p) lo = mid + 1;
        else hi = mid;
    }
    i = lo;
    if (i > 0 && f->live[i - 1].p + f->live[i - 1].span > b.p) die(f, "a new block overlaps the block below it", st);
    if (i < f->n && b.p + b.span > f->live[i].p) die(f, "a new block overlaps the block above it", st);
    memmove(&f->live[i + 1], &f->live[i], (f->n - i) * sizeof f->live[0]);
    f->live[i] = b;
    f->n++;
    f->live_spans += b.span;
    fill_pattern(p, bytes, b.pattern);
}

static void make_resources(fuzz *f, uint8_t config, uint8_t adaptors) {
    rmm_resource *device = &f->lower.base;
    rmm_status st;
    f->lower.base.vtable = &flaky_vtable;
    f->lower.upstream = rmm_get_current_device_resource();
    f->kind = (config & 3) > 2 ? 2 : (config & 3);
    if (f->kind == 0) {
        rmm_pool_desc d = rmm_pool_desc_default();
        static const size_t maxima[4] = {4 * MiB, 8 * MiB, 16 * MiB, 32 * MiB};
        d.growth = (config >> 2) & 1 ? RMM_POOL_GROWTH_ON_DEMAND : RMM_POOL_GROWTH_GEOMETRIC;
        d.growth_granularity_bytes = 3 * MiB / 2;
        d.streams_outlive_pool = ((config >> 3) & 1) != 0;
        d.maximum_bytes = maxima[(config >> 4) & 3];
        d.initial_bytes = (config >> 6) & 1 ? MiB : 0;
        if (d.initial_bytes && d.growth == RMM_POOL_GROWTH_ON_DEMAND) {
            d.growth = RMM_POOL_GROWTH_VIRTUAL;
            d.initial_bytes = 0;
            d.virtual_bytes = 64 * MiB;
        }
        f->streams_outlive = d.streams_outlive_pool;
        st = rmm_pool_create(&f->pool, device, &d);
        if (st != RMM_SUCCESS) die(f, "rmm_pool_create", st);
        f->sub = f->pool;
    } else if (f->kind == 1) {
        rmm_pool_desc d = rmm_pool_desc_default();
        rmm_binning_desc bd = rmm_binning_desc_default();
        d.maximum_bytes = 48 * MiB;
        st = rmm_pool_create(&f->pool, device, &d);
        if (st != RMM_SUCCESS) die(f, "rmm_pool_create", st);
        bd.min_size_exponent = 10;
        bd.max_size_exponent = 14;
        st = rmm_binning_create(&f->sub, f->pool, &bd);
        if (st != RMM_SUCCESS) die(f, "rmm_binning_create", st);
        st = rmm_binning_add_bin(f->sub, 48 * KiB, NULL);
        if (st != RMM_SUCCESS) die(f, "rmm_binning_add_bin", st);
    } else {
        rmm_arena_desc d = rmm_arena_desc_default();
        d.arena_bytes = 8 * MiB;
        d.superblock_bytes = (config & 3) == 3 ? 384 * KiB : 256 * KiB;
        st = rmm_arena_create(&f->sub, device, &d);
        if (st != RMM_SUCCESS) die(f, "rmm_arena_create", st);
    }
    f->upper.base.vtable = &flaky_vtable;
    f->upper.upstream = f->sub;
    f->mr = &f->upper.base;
    if (adaptors & 1) {
        st = rmm_tracking_adaptor_create(&f->tracking, f->mr, false);
        if (st != RMM_SUCCESS) die(f, "rmm_tracking_adaptor_create", st);
        f->mr = f->tracking;
    }
    if (adaptors & 2) {
        st = rmm_statistics_adaptor_create(&f->stats, f->mr);
        if (st != RMM_SUCCESS) die(f, "rmm_statistics_adaptor_create", st);
        f->mr = f->stats;
    }
}

static int initialized;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz f;
    int i, round, rounds;
    uint8_t config, adaptors;
    rmm_status st;
    if (!initialized) {
        rmm_set_log_level(RMM_LOG_LEVEL_OFF); /* no log file: trims and defragments log at INFO */
        initialized = 1;
    }
    if (size == 0) return 0;
    memset(&f, 0, sizeof f);
    f.data = data;
    f.size = size;
    f.op_index = -1;
    f.streams[0] = RMM_STREAM_DEFAULT;
    f.streams[1] = RMM_STREAM_PER_THREAD;
    for (i = 2; i < STREAMS; i++) {
        st = i == FOREIGN ? rmm__stream_create_raw(&f.streams[i], false) : rmm_stream_create(&f.streams[i]);
        if (st != RMM_SUCCESS) die(&f, "rmm_stream_create", st);
    }
    config = next_byte(&f);
    adaptors = next_byte(&f);
    rounds = (config >> 7) & 1 ? 4 : 1;
    make_resources(&f, config, adaptors);
    validate(&f);
    f.op_index = 0;
    for (round = 0; round < rounds; round++) {
        f.at = 2;
        for (; f.at < f.size && f.op_index < MAX_OPS; f.op_index++) {
            uint8_t b = next_byte(&f);
            unsigned kind = b % 8u, a = b / 8u;
            if (kind <= 3 && f.n == MAX_LIVE) kind = 4;
            switch (kind) {
            case 0: case 1: case 2:
                do_allocate(&f, decode_size(next_byte(&f) % 24u, a), 256);
                break;
            case 3: {
                uint8_t s = next_byte(&f);
                do_allocate(&f, decode_size(s % 24u, (size_t)(s / 24u) * 2u), (size_t)512 << (a % 5u));
                break;
            }
            case 4: case 5: {
                size_t idx;
                if (f.n == 0) break;
                idx = a % f.n;
                if (kind == 4) {
                    free_at(&f, idx, f.live[idx].stream);
                } else {
                    st = rmm_stream_synchronize(f.streams[f.live[idx].stream]);
                    if (st != RMM_SUCCESS) die(&f, "rmm_stream_synchronize", st);
                    free_at(&f, idx, f.current);
                }
                break;
            }
            case 6:
                if (a < 24) {
                    f.current = (int)(a % STREAMS);
                } else if (a < 28 && f.pool) {
                    size_t released = 0;
                    st = rmm_pool_trim(f.pool, &released);
                    /* a refused upstream free stops the trim; what it released stays released */
                    if (st != RMM_SUCCESS && !(st == RMM_ERROR_CUDA && strstr(rmm_last_error(), "on purpose"))) die(&f, "rmm_pool_trim", st);
                } else if (a >= 28) {
                    if (a < 30) f.upper.fail_next_free = 1;
                    else f.lower.fail_next_free = 1;
                }
                break;
            default: {
                int s = 2 + (int)(a % (STREAMS - 2));
                if (f.streams_outlive) break;
                st = rmm_stream_synchronize(f.streams[s]);
                if (s == FOREIGN) {
                    if (st == RMM_SUCCESS) st = rmm__stream_destroy_raw(f.streams[s]);
                    if (st == RMM_SUCCESS) st = rmm__stream_create_raw(&f.streams[s], false);
                } else {
                    if (st == RMM_SUCCESS) st = rmm_stream_destroy(f.streams[s]);
                    if (st == RMM_SUCCESS) st = rmm_stream_create(&f.streams[s]);
                }
                if (st != RMM_SUCCESS) die(&f, "re-creating a stream", st);
                break;
            }
            }
            validate(&f);
        }
    }
    /* free everything (last first, each on its own stream), check the pool is empty, destroy */
    f.upper.fail_next_free = f.lower.fail_next_free = 0;
    while (f.n > 0) {
        free_at(&f, f.n - 1, f.live[f.n - 1].stream);
        validate(&f);
    }
    if (f.pool) {
        rmm_pool_info info;
        size_t released = 0;
        if (f.kind == 1) {
            rmm_resource_destroy(f.sub); /* the bins give their chunks back to the pool */
            f.sub = f.pool;
        }
        st = rmm_pool_trim(f.pool, &released);
        if (st != RMM_SUCCESS) die(&f, "rmm_pool_trim", st);
        st = rmm_pool_get_info(f.pool, &info);
        if (st != RMM_SUCCESS) die(&f, "rmm_pool_get_info", st);
        if (info.used_bytes != 0 || info.pool_bytes != 0 || info.upstream_chunks != 0)
            die(&f, "the pool is not empty after everything was freed and trimmed", RMM_ERROR_CORRUPTION);
        st = rmm_pool_validate(f.pool);
        if (st != RMM_SUCCESS) die(&f, "validate after trim", st);
    }
    rmm_resource_destroy(f.stats);
    rmm_resource_destroy(f.tracking);
    rmm_resource_destroy(f.sub); /* the pool itself, for kinds 0 and 1; the arena for kind 2 */
    for (i = 2; i < STREAMS; i++) {
        st = i == FOREIGN ? rmm__stream_destroy_raw(f.streams[i]) : rmm_stream_destroy(f.streams[i]);
        if (st != RMM_SUCCESS) die(&f, "rmm_stream_destroy", st);
    }
    return 0;
}
