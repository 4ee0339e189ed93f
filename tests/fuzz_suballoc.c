/* tests/fuzz_suballoc.c - a libFuzzer target for the pool, binning and arena sub-allocators.

   Build (the Makefile's $(BUILD)/fuzz/% rule):
       clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -DRMM_BACKEND_HOST tests/fuzz_suballoc.c -lpthread
   Run: `make test` runs it for 20 s with -seed=1; `make fuzz` for FUZZ_SECONDS (default 300).
   Replay a crash: build/fuzz/fuzz_suballoc crash-<hash>.

   The input is a program. Its first byte picks the resource and its settings:
       bits 0-1  0: pool, 1: binning over a pool, 2 or 3: arena
       bit  2    pool growth ON_DEMAND (else GEOMETRIC)
       bit  3    pool streams_outlive_pool
       bits 4-5  pool maximum 4, 8, 16 or 32 MiB
       bit  6    pool initial_bytes 1 MiB (else 0); with bit 2 set too: RMM_POOL_GROWTH_VIRTUAL instead
                 (a 64 MiB reserved range, the maximum capping its mapped pages)
       bit  7    run the program 4 times over (blocks stay live across rounds), else once
   Every later byte b is one operation, kind = b % 8 and argument a = b / 8 (0..31), dense so that
   the short inputs libFuzzer starts with already do something (a missing byte reads as 0):
       0-2  allocate: the next byte s gives e = s % 24; e == 23 means 0 bytes, else 2^e (1 + a/32)
       3    allocate aligned to 512 << (a % 5): the next byte s gives e = s % 24 as above, and the
            fraction (s / 24) / 16
       4    free live block a % n on the stream it was allocated on
       5    free live block a % n on the current stream, after synchronizing its own
       6    a < 25: make stream a % 5 current (default, per-thread or one of three created streams);
            else trim the pool (the binning's pool; nothing for the arena)
       7    re-create created stream a % 3 (not for streams_outlive_pool pools, which promise their
            streams live on)
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
#define STREAMS 5

typedef struct fblock {
    char *p;
    size_t bytes, span, align;
    int stream;
    unsigned char pattern;
} fblock;

typedef struct fuzz {
    const uint8_t *data;
    size_t size, at;
    int kind; /* 0 pool, 1 binning, 2 arena */
    bool streams_outlive;
    rmm_resource *mr, *pool;
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
    rmm_status st = rmm_resource_validate(f->mr);
    if (st != RMM_SUCCESS) die(f, "validate", st);
    if (f->pool && f->pool != f->mr) {
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

static void make_resources(fuzz *f, uint8_t config) {
    rmm_resource *device = rmm_get_current_device_resource();
    rmm_status st;
    f->kind = (config & 3) > 2 ? 2 : (config & 3);
    if (f->kind == 0) {
        rmm_pool_desc d = rmm_pool_desc_default();
        static const size_t maxima[4] = {4 * MiB, 8 * MiB, 16 * MiB, 32 * MiB};
        d.growth = (config >> 2) & 1 ? RMM_POOL_GROWTH_ON_DEMAND : RMM_POOL_GROWTH_GEOMETRIC;
        d.growth_granularity_bytes = MiB;
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
        f->mr = f->pool;
    } else if (f->kind == 1) {
        rmm_pool_desc d = rmm_pool_desc_default();
        rmm_binning_desc bd = rmm_binning_desc_default();
        d.maximum_bytes = 48 * MiB;
        st = rmm_pool_create(&f->pool, device, &d);
        if (st != RMM_SUCCESS) die(f, "rmm_pool_create", st);
        bd.min_size_exponent = 10;
        bd.max_size_exponent = 14;
        st = rmm_binning_create(&f->mr, f->pool, &bd);
        if (st != RMM_SUCCESS) die(f, "rmm_binning_create", st);
        st = rmm_binning_add_bin(f->mr, 48 * KiB, NULL);
        if (st != RMM_SUCCESS) die(f, "rmm_binning_add_bin", st);
    } else {
        rmm_arena_desc d = rmm_arena_desc_default();
        d.arena_bytes = 8 * MiB;
        d.superblock_bytes = 256 * KiB;
        st = rmm_arena_create(&f->mr, device, &d);
        if (st != RMM_SUCCESS) die(f, "rmm_arena_create", st);
    }
}

static int initialized;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz f;
    int i, round, rounds;
    uint8_t config;
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
        st = rmm_stream_create(&f.streams[i]);
        if (st != RMM_SUCCESS) die(&f, "rmm_stream_create", st);
    }
    config = next_byte(&f);
    rounds = (config >> 7) & 1 ? 4 : 1;
    make_resources(&f, config);
    validate(&f);
    f.op_index = 0;
    for (round = 0; round < rounds; round++) {
        f.at = 1;
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
                if (a < 25) {
                    f.current = (int)(a % STREAMS);
                } else if (f.pool) {
                    size_t released = 0;
                    st = rmm_pool_trim(f.pool, &released);
                    if (st != RMM_SUCCESS) die(&f, "rmm_pool_trim", st);
                }
                break;
            default: {
                int s = 2 + (int)(a % (STREAMS - 2));
                if (f.streams_outlive) break;
                st = rmm_stream_synchronize(f.streams[s]);
                if (st == RMM_SUCCESS) st = rmm_stream_destroy(f.streams[s]);
                if (st == RMM_SUCCESS) st = rmm_stream_create(&f.streams[s]);
                if (st != RMM_SUCCESS) die(&f, "re-creating a stream", st);
                break;
            }
            }
            validate(&f);
        }
    }
    /* free everything (last first, each on its own stream), check the pool is empty, destroy */
    while (f.n > 0) {
        free_at(&f, f.n - 1, f.live[f.n - 1].stream);
        validate(&f);
    }
    if (f.pool) {
        rmm_pool_info info;
        size_t released = 0;
        if (f.kind == 1) {
            rmm_resource_destroy(f.mr); /* the bins give their chunks back to the pool */
            f.mr = f.pool;
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
    rmm_resource_destroy(f.mr); /* the pool itself, for kinds 0 and 1; the arena for kind 2 */
    for (i = 2; i < STREAMS; i++) {
        st = rmm_stream_destroy(f.streams[i]);
        if (st != RMM_SUCCESS) die(&f, "rmm_stream_destroy", st);
    }
    return 0;
}
