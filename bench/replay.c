/* bench/replay.c - replays a recorded allocation log against rmm.h's resources: speed and memory
   efficiency on a real workload.

   Input: a log in the CSV format of RMM's logging_resource_adaptor,
       Thread,Time,Action,Pointer,Size,Stream
       1,11:15:07.384197,allocate,0x7f9fa5e00000,37632,0
   Action is "allocate", "free", "allocate failure" (skipped) or "free failure" (rmm.h's logging
   adaptor, after a free that failed: a block that free took is live again, with its size,
   replayed as an allocation; after a free that matched none, skipped); Pointer is hex with 0x
   (glibc %p, "(nil)" for NULL); Size is decimal bytes; Stream is hex, with 0x or without (0: default stream;
   every other value gets a stream of its own from rmm_stream_create). The whole log is parsed into
   memory first. A hash map from logged pointer to allocation number pairs every free with its
   allocation while parsing, so the timed replay indexes an array and does no hashing; frees of
   pointers the log never allocated are dropped (and counted), frees use the size the block was
   allocated with (a free logged with another size is counted as a mismatch), and
   blocks still live at the end of the log are freed after timing.

   Resources (--resource NAME[,NAME...]; each run gets a fresh one):
     cuda            rmm_cuda_resource_create (cudaMalloc / cudaFree)
     async           rmm_async_resource_create (its own cudaMemPool_t, never trimmed)
     pool            rmm_pool_create, initial_bytes 0, RMM_POOL_GROWTH_ON_DEMAND (the
                     memory-efficiency configuration)
     pool-geometric  rmm_pool_create, initial_bytes 0, RMM_POOL_GROWTH_GEOMETRIC (RMM's rule)
     pool-virtual    rmm_pool_create, RMM_POOL_GROWTH_VIRTUAL: one reserved address range backed by 2 MiB
                     physical pages where blocks are live (in extents of up to two, the default since
                     2026-11-28); it takes nothing from upstream, so its peak is
                     rmm_pool_get_info().peak_pool_bytes (the most physical memory ever mapped)
     pool-virtual-extent  the same with virtual_extent_bytes = 128 MiB (--extent MIB: another size): new
                     memory in extents of up to 64 pages, one driver allocation and mapping each
                     (fewer driver calls, more held)
     binning         rmm_binning_create(2^18 .. 2^22) over an on-demand pool
     arena           rmm_arena_create with arena_bytes = 4 x peak live (rounded up to 1 GiB;
                     smaller factors are tried when that much cannot be had). Since the arena takes
                     all of it at creation, the table also shows "min_arena_MiB": the smallest
                     arena (to 1 % of peak live, found by bisection, untimed) that replays the log
                     without running out of memory.

   Reported per resource:
     ns_per_event      wall time of the replay / events replayed (median of 3 runs; --runs N)
     peak_upstream_MiB the most bytes the resource held from its upstream at once. Measured by a
                       counting resource (defined below) placed between the resource and the real
                       cudaMalloc/async resource; for cuda and async, which do not sub-allocate, it
                       wraps them from above, so it is the peak of live sizes rounded up to 256.
                       Pools are cross-checked against rmm_pool_get_info().peak_pool_bytes. Under
                       CUDA the async row also shows the driver pool's cudaMemPoolAttrReservedMemHigh.
     efficiency        peak_upstream / peak live, where peak live is the running sum of the live
                       requested sizes in the log itself. 1.000 is the limit; below 1.000 would be a
                       measurement bug (a warning is printed).
   An extra, untimed first run per resource measures the peaks and checks the allocator: every block handed out lies inside an upstream allocation
   live at that moment, no upstream free covers a live block, no two blocks live at the same time
   overlap (each block checked as it is allocated, against the blocks live then), and
   rmm_resource_validate passes. A finding shows as "BUG?".

   Run:  make bench
         build/bench/replay bench/traces/resnet50_train.csv.gz bench/traces/gpt2_train.csv.gz
         zcat bench/traces/gpt2_train.csv.gz | build/bench/host/replay --name gpt2_train -
   (.gz paths are read through `gzip -dc`; `-` reads stdin.) On the host backend the simulated
   device capacity is raised to 256 GiB: memory there is only posix_memalign'ed, never touched.

   Output: "# " header lines, then
       trace  resource  ns_per_event  peak_upstream_MiB  efficiency  note
   and lines starting with "csv,". */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "bench_common.h"
#include "peer/peer_resource.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_STREAMS 64
#define ERRLEN 640

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }
static double mib(size_t bytes) { return (double)bytes / (double)MIB; }

/* ---- the counting resource: forwards to its upstream, tracks current and peak bytes ---------- */

/* In a checking run the counting resource also keeps the live upstream ranges, and the replay
   keeps its live blocks here, so that containment can be verified (see check_upstream_free). */
typedef struct range {
    uintptr_t p;
    size_t n;
} range;
/* Checking runs: the blocks the replay holds, in a treap ordered by (address, slot), one node per
   slot (each slot is one allocation of the log: in the set at most once). Live blocks that do not
   overlap are ordered by address with disjoint ranges, so a range meets a live block iff it meets
   the last one starting at or before it or the first one starting after it: each check, insertion
   and removal costs O(log live) expected (until red team 47 the checks scanned every block ever
   allocated, on every upstream free and over all pairs at one address: 313 s on gpt2_generate's
   trace with the cuda resource, where the timed run takes 0.2 s). */
#define NIL ((size_t)-1)
typedef struct live_blocks {
    void *const *ptrs;
    const size_t *sizes;
    size_t *left, *right; /* per slot: the treap's children */
    uint32_t *prio;
    size_t root;
    uint64_t seed;
    size_t overlaps;
    char overlap_msg[ERRLEN]; /* the first overlap */
    char msg[ERRLEN]; /* the first violation */
} live_blocks;
static live_blocks *g_check; /* non-NULL during a checking run */

typedef struct counting_resource {
    rmm_resource base; /* first: the library sees a plain rmm_resource */
    rmm_resource *upstream;
    size_t current, peak; /* bytes, each allocation rounded up to 256 */
    size_t allocations;
    range *ranges; /* live upstream allocations (checking runs only) */
    size_t nranges, cap;
} counting_resource;

static void check_note(const char *f, ...) __attribute__((format(printf, 1, 2)));
static void check_note(const char *f, ...) {
    va_list ap;
    if (!g_check || g_check->msg[0]) return;
    va_start(ap, f);
    vsnprintf(g_check->msg, sizeof g_check->msg, f, ap);
    va_end(ap);
}
static uintptr_t live_addr(const live_blocks *c, size_t slot) { return (uintptr_t)c->ptrs[slot]; }
static bool live_less(const live_blocks *c, size_t a, size_t b) {
    return live_addr(c, a) < live_addr(c, b) || (live_addr(c, a) == live_addr(c, b) && a < b);
}
/* The treap of a's keys then b's (every key of a below every key of b). */
static size_t live_merge(live_blocks *c, size_t a, size_t b) {
    if (a == NIL) return b;
    if (b == NIL) return a;
    if (c->prio[a] > c->prio[b]) {
        c->right[a] = live_merge(c, c->right[a], b);
        return a;
    }
    c->left[b] = live_merge(c, a, c->left[b]);
    return b;
}
/* Splits n into the keys below slot k's (*lo) and the rest (*hi). */
static void live_split(live_blocks *c, size_t n, size_t k, size_t *lo, size_t *hi) {
    if (n == NIL) {
        *lo = *hi = NIL;
    } else if (live_less(c, n, k)) {
        live_split(c, c->right[n], k, &c->right[n], hi);
        *lo = n;
    } else {
        live_split(c, c->left[n], k, lo, &c->left[n]);
        *hi = n;
    }
}
static size_t live_erase(live_blocks *c, size_t n, size_t k) {
    if (n == NIL) return NIL;
    if (n == k) return live_merge(c, c->left[n], c->right[n]);
    if (live_less(c, k, n)) c->left[n] = live_erase(c, c->left[n], k);
    else c->right[n] = live_erase(c, c->right[n], k);
    return n;
}
/* The live block starting last at or before address a (*below; NIL if none), and the one starting
   first after it (*above). */
static void live_around(const live_blocks *c, uintptr_t a, size_t *below, size_t *above) {
    size_t n = c->root;
    *below = *above = NIL;
    while (n != NIL) {
        if (live_addr(c, n) <= a) {
            *below = n;
            n = c->right[n];
        } else {
            *above = n;
            n = c->left[n];
        }
    }
}
/* A live block that range [p, p + n) meets, or NIL. */
static size_t live_meeting(const live_blocks *c, uintptr_t p, size_t n) {
    size_t below, above;
    live_around(c, p, &below, &above);
    if (below != NIL && live_addr(c, below) + c->sizes[below] > p) return below;
    if (above != NIL && live_addr(c, above) < p + n) return above;
    return NIL;
}
/* An upstream free must not cover a block the replay still holds. */
static void check_upstream_free(uintptr_t p, size_t n) {
    size_t i = live_meeting(g_check, p, n);
    if (i != NIL)
        check_note("USE AFTER RELEASE: upstream range %#lx+%zu was freed while block %#lx+%zu is live", (unsigned long)p, n,
                   (unsigned long)live_addr(g_check, i), g_check->sizes[i]);
}

static rmm_status counting_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    counting_resource *c = (counting_resource *)self;
    rmm_status st = rmm_allocate_aligned(c->upstream, ptr, bytes, alignment, stream);
    if (st == RMM_SUCCESS) {
        c->current += round_up(bytes, RMM_ALIGNMENT);
        if (c->current > c->peak) c->peak = c->current;
        c->allocations++;
        if (g_check) {
            if (c->nranges == c->cap) {
                size_t cap = c->cap ? c->cap * 2 : 256;
                range *g = (range *)realloc(c->ranges, cap * sizeof *g);
                if (!g) {
                    check_note("out of host memory for the containment check");
                    return st;
                }
                c->ranges = g;
                c->cap = cap;
            }
            c->ranges[c->nranges].p = (uintptr_t)*ptr;
            c->ranges[c->nranges++].n = bytes;
        }
    }
    return st;
}
static rmm_status counting_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    counting_resource *c = (counting_resource *)self;
    rmm_status st;
    if (g_check) {
        size_t i;
        for (i = 0; i < c->nranges && c->ranges[i].p != (uintptr_t)ptr; i++) {}
        if (i < c->nranges) c->ranges[i] = c->ranges[--c->nranges];
        else check_note("upstream free of %p+%zu, which upstream never handed out", ptr, bytes);
        check_upstream_free((uintptr_t)ptr, bytes);
    }
    st = rmm_deallocate_aligned(c->upstream, ptr, bytes, alignment, stream);
    if (st == RMM_SUCCESS) c->current -= round_up(bytes, RMM_ALIGNMENT);
    return st;
}
/* Checking runs: a block the replay now holds must not overlap another it holds; then it joins
   them. O(log live) expected. Overlaps are counted once per allocation that makes one. */
static void live_add(live_blocks *c, size_t slot, size_t event) {
    size_t o = live_meeting(c, live_addr(c, slot), c->sizes[slot] ? c->sizes[slot] : 1), lo, hi;
    if (o != NIL && !c->overlaps++)
        fmt(c->overlap_msg, ERRLEN, "OVERLAP: block %#lx+%zu (allocated at event %zu) overlaps live block %#lx+%zu",
            (unsigned long)live_addr(c, slot), c->sizes[slot], event, (unsigned long)live_addr(c, o), c->sizes[o]);
    c->seed ^= c->seed << 13, c->seed ^= c->seed >> 7, c->seed ^= c->seed << 17; /* xorshift64 */
    c->prio[slot] = (uint32_t)(c->seed >> 32);
    c->left[slot] = c->right[slot] = NIL;
    live_split(c, c->root, slot, &lo, &hi);
    c->root = live_merge(c, live_merge(c, lo, slot), hi);
}
static void live_del(live_blocks *c, size_t slot) { c->root = live_erase(c, c->root, slot); }
/* A block handed to the replay must lie inside a live upstream allocation. */
static void check_contained(const counting_resource *c, const void *ptr, size_t bytes) {
    uintptr_t b = (uintptr_t)ptr;
    size_t i;
    for (i = 0; i < c->nranges; i++)
        if (c->ranges[i].p <= b && b + bytes <= c->ranges[i].p + c->ranges[i].n) return;
    check_note("OUTSIDE UPSTREAM: block %p+%zu is not inside any live upstream allocation", ptr, bytes);
}
static void counting_destroy(rmm_resource *self) {
    free(((counting_resource *)self)->ranges);
    free(self);
}
static const rmm_resource_vtable counting_vtable = {"counting", counting_allocate, counting_deallocate, NULL, counting_destroy};

static counting_resource *counting_create(rmm_resource *upstream) {
    counting_resource *c = (counting_resource *)calloc(1, sizeof *c);
    if (!c) return NULL;
    c->base.vtable = &counting_vtable;
    c->upstream = upstream;
    return c;
}

/* ---- the trace ------------------------------------------------------------------------------ */

enum { EV_ALLOC = 0, EV_FREE = 1 };
typedef struct event {
    size_t size;
    uint32_t slot;         /* allocation number: an allocate and its free share it */
    unsigned char kind;    /* EV_ALLOC, EV_FREE */
    unsigned char stream;  /* index into trace.streams */
} event;

typedef struct trace {
    char name[128];
    event *ev;
    size_t n, cap;
    size_t nslots, slot_cap;
    size_t *slot_size, *free_at; /* per slot; free_at = n when never freed */
    uint64_t streams[MAX_STREAMS];
    int nstreams;
    size_t lines, allocs, frees, failures, unmatched_frees, size_mismatches, reused_live, bad_lines, left_live;
    size_t peak_live, peak_live_rounded; /* bytes */
} trace;

/* Pointer -> slot map used while parsing: linear probing, backward-shift deletion, key 0 empty. */
typedef struct ptr_map {
    uint64_t *keys;
    uint32_t *vals;
    size_t mask, count;
} ptr_map;
static size_t ptr_hash(uint64_t k) { return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17); }
static int ptr_map_init(ptr_map *m, size_t cap) {
    size_t c = 64;
    while (c < cap) c <<= 1;
    m->keys = (uint64_t *)calloc(c, sizeof *m->keys);
    m->vals = (uint32_t *)calloc(c, sizeof *m->vals);
    m->mask = c - 1;
    m->count = 0;
    return m->keys && m->vals;
}
static void ptr_map_free(ptr_map *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
static uint32_t *ptr_map_find(ptr_map *m, uint64_t k) {
    size_t i = ptr_hash(k) & m->mask;
    while (m->keys[i]) {
        if (m->keys[i] == k) return &m->vals[i];
        i = (i + 1) & m->mask;
    }
    return NULL;
}
static int ptr_map_put(ptr_map *m, uint64_t k, uint32_t v) {
    size_t i;
    if ((m->count + 1) * 2 > m->mask + 1) { /* grow */
        ptr_map g;
        size_t j;
        if (!ptr_map_init(&g, (m->mask + 1) * 2)) return 0;
        for (j = 0; j <= m->mask; j++)
            if (m->keys[j]) {
                size_t t = ptr_hash(m->keys[j]) & g.mask;
                while (g.keys[t]) t = (t + 1) & g.mask;
                g.keys[t] = m->keys[j];
                g.vals[t] = m->vals[j];
                g.count++;
            }
        ptr_map_free(m);
        *m = g;
    }
    i = ptr_hash(k) & m->mask;
    while (m->keys[i] && m->keys[i] != k) i = (i + 1) & m->mask;
    if (!m->keys[i]) m->count++;
    m->keys[i] = k;
    m->vals[i] = v;
    return 1;
}
static void ptr_map_remove(ptr_map *m, uint64_t k) {
    size_t i = ptr_hash(k) & m->mask, j;
    while (m->keys[i] != k) {
        if (!m->keys[i]) return;
        i = (i + 1) & m->mask;
    }
    m->count--;
    for (j = i;;) {
        size_t home;
        j = (j + 1) & m->mask;
        if (!m->keys[j]) break;
        home = ptr_hash(m->keys[j]) & m->mask;
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = 0;
}

static void trace_free(trace *t) {
    free(t->ev);
    free(t->slot_size);
    free(t->free_at);
    memset(t, 0, sizeof *t);
}

static int push_event(trace *t, event e) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 4096;
        event *g = (event *)realloc(t->ev, cap * sizeof *g);
        if (!g) return 0;
        t->ev = g;
        t->cap = cap;
    }
    t->ev[t->n++] = e;
    return 1;
}
static int grow_slots(trace *t, size_t need) {
    if (need > t->slot_cap) {
        size_t c = t->slot_cap ? t->slot_cap * 2 : 4096, *b, *s;
        while (c < need) c *= 2;
        s = (size_t *)realloc(t->slot_size, c * sizeof *s);
        if (s) t->slot_size = s;
        b = (size_t *)realloc(t->free_at, c * sizeof *b);
        if (b) t->free_at = b;
        if (!s || !b) return 0;
        t->slot_cap = c;
    }
    return 1;
}

/* A whole field of digits in `base` (a "0x" prefix allowed in base 16), no sign, no blanks, below
   2^64: *out. false otherwise (strtoull alone read "-256" as 2^64 - 256 and "100abc" as 100). */
static bool parse_u64(const char *f, int base, uint64_t *out) {
    char *end;
    unsigned long long v;
    const char *d = f;
    if (base == 16 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) d += 2;
    if (!isxdigit((unsigned char)d[0]) || (base == 10 && !isdigit((unsigned char)d[0]))) return false;
    errno = 0;
    v = strtoull(f, &end, base);
    if (errno == ERANGE || *end != '\0') return false;
    *out = (uint64_t)v;
    return true;
}
/* Splits a CSV line into at most `max` fields in place. */
static int split_csv(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        fields[n++] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p++ = '\0';
    }
    return n;
}

/* Parses the whole log from f. 0 on success. */
static int trace_parse(FILE *f, trace *t) {
    char *line = NULL, *fields[8];
    size_t linecap = 0, live = 0, live_rounded = 0;
    ssize_t len;
    ptr_map map, freed; /* freed: the slot each pointer's last matched free ended, for a "free failure" row */
    int rc = 0;
    if (!ptr_map_init(&map, 1 << 14)) return -1;
    if (!ptr_map_init(&freed, 1 << 10)) {
        ptr_map_free(&map);
        return -1;
    }
    while ((len = getline(&line, &linecap, f)) > 0) {
        int nf;
        const char *action;
        uint64_t ptr = 0, stream, size64;
        size_t size;
        int s;
        event e;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0) continue;
        t->lines++;
        if (!strncmp(line, "Thread", 6)) continue; /* the header */
        nf = split_csv(line, fields, 8);
        if (nf < 6) {
            t->bad_lines++;
            continue;
        }
        action = fields[2];
        if (!strcmp(action, "allocate failure")) {
            t->failures++;
            continue;
        }
        if (strcmp(action, "allocate") && strcmp(action, "free") && strcmp(action, "free failure")) {
            t->bad_lines++;
            continue;
        }
        if (!parse_u64(fields[4], 10, &size64) || size64 > SIZE_MAX / 4 || !parse_u64(fields[5], 16, &stream) ||
            (strcmp(fields[3], "(nil)") && !parse_u64(fields[3], 16, &ptr))) { /* (a sign, a stray character, past 64 bits or a size
                                                                                   no device holds: a bad line, no longer read as another number) */
            t->bad_lines++;
            continue;
        }
        if (!strcmp(fields[3], "(nil)")) ptr = 0;
        size = (size_t)size64;
        for (s = 0; s < t->nstreams && t->streams[s] != stream; s++) {}
        memset(&e, 0, sizeof e);
        e.size = size;
        if (!strcmp(action, "free failure")) { /* the free logged before it did not happen */
            uint32_t *was = ptr ? ptr_map_find(&freed, ptr) : NULL;
            if (!was || ptr_map_find(&map, ptr)) continue; /* its free matched no live block (counted there): nothing to undo */
            size = e.size = t->slot_size[*was]; /* live again, with the size it was allocated with (replayed as an allocation) */
            ptr_map_remove(&freed, ptr);
            action = "allocate";
        }
        if (!strcmp(action, "allocate")) {
            uint32_t *old;
            if (ptr == 0 || size == 0) { /* nothing to replay */
                t->bad_lines++;
                continue;
            }
            if (!grow_slots(t, t->nslots + 1)) {
                rc = -1;
                break;
            }
            if ((old = ptr_map_find(&map, ptr)) != NULL) t->reused_live++; /* the old block's free was never logged */
            ptr_map_remove(&freed, ptr);
            e.kind = EV_ALLOC;
            e.slot = (uint32_t)t->nslots;
            t->slot_size[t->nslots] = size;
            t->free_at[t->nslots] = (size_t)-1;
            if (!ptr_map_put(&map, ptr, e.slot)) {
                rc = -1;
                break;
            }
            t->nslots++;
            t->allocs++;
            live += size;
            live_rounded += round_up(size, RMM_ALIGNMENT);
            if (live > t->peak_live) t->peak_live = live;
            if (live_rounded > t->peak_live_rounded) t->peak_live_rounded = live_rounded;
        } else {
            uint32_t *slot = ptr ? ptr_map_find(&map, ptr) : NULL;
            if (!slot) {
                t->unmatched_frees++;
                if (ptr) ptr_map_remove(&freed, ptr); /* (a failure after it is this free's: nothing to undo) */
                continue;
            }
            e.kind = EV_FREE;
            e.slot = *slot;
            if (size != t->slot_size[e.slot]) t->size_mismatches++;
            e.size = t->slot_size[e.slot]; /* (a wrong size would only make the resource refuse the free) */
            t->free_at[e.slot] = t->n;
            live -= t->slot_size[e.slot];
            live_rounded -= round_up(t->slot_size[e.slot], RMM_ALIGNMENT);
            ptr_map_remove(&map, ptr);
            if (!ptr_map_put(&freed, ptr, e.slot)) {
                rc = -1;
                break;
            }
            t->frees++;
        }
        if (s == t->nstreams) { /* (only a row that is replayed names a stream: skipped rows took slots of the 64) */
            if (t->nstreams == MAX_STREAMS) {
                fprintf(stderr, "replay: more than %d streams in the log\n", MAX_STREAMS);
                rc = -1;
                break;
            }
            t->streams[t->nstreams++] = stream;
        }
        e.stream = (unsigned char)s;
        if (!push_event(t, e)) {
            rc = -1;
            break;
        }
    }
    free(line);
    ptr_map_free(&map);
    ptr_map_free(&freed);
    if (rc == 0) {
        size_t i;
        for (i = 0; i < t->nslots; i++)
            if (t->free_at[i] == (size_t)-1) {
                t->free_at[i] = t->n;
                t->left_live++;
            }
    }
    return rc;
}

/* ---- replaying -------------------------------------------------------------------------------- */

/* pool-virtual-extent's extent size (--extent) */
static size_t g_extent_mib = 128;

static const char *const RESOURCES[] = {"cuda", "async", "pool", "pool-geometric", "pool-virtual", "pool-virtual-extent", "binning", "arena" PEER_NAMES};
#define NRES ((int)(sizeof RESOURCES / sizeof RESOURCES[0]))

typedef struct stack {
    rmm_resource *top;
    rmm_resource *pool;          /* the pool inside, if any (for rmm_pool_get_info) */
    rmm_resource *async;         /* the async resource, if any */
    int pool_virtual;            /* the pool maps its own pages: its peak is pool_info's, not the counter's */
    int peer;                    /* RAPIDS RMM C++: its peak is its statistics adaptor's */
    counting_resource *counter;
    rmm_resource *layers[4];     /* owned, top first */
    int nlayers;
} stack;

static void stack_destroy(stack *s) {
    int i;
    for (i = 0; i < s->nlayers; i++) rmm_resource_destroy(s->layers[i]);
#if defined(RMM_BENCH_PEER)
    if (s->peer) rmm_peer_drop();
#endif
    memset(s, 0, sizeof *s);
}

/* Builds a fresh resource stack; arena_bytes is used by "arena" only. */
static rmm_status stack_make(const char *name, size_t arena_bytes, stack *s, char *err) {
    rmm_resource *base = NULL, *r = NULL, *pool = NULL;
    rmm_status st;
    memset(s, 0, sizeof *s);
#if defined(RMM_BENCH_PEER)
    if (peer_is(name)) { /* RMM's pool and binning start empty and grow by RMM's rule; its arena is sized as ours */
        char why[256] = "";
        st = peer_make(name, 0, arena_bytes, &s->top, why, sizeof why);
        if (st != RMM_SUCCESS) {
            fmt(err, ERRLEN, "creating %s failed: %s", name, why[0] ? why : rmm_last_error());
            rmm_peer_drop();
            return st;
        }
        s->layers[s->nlayers++] = s->top;
        s->peer = 1;
        return RMM_SUCCESS;
    }
#endif
    if (!strcmp(name, "async")) st = rmm_async_resource_create(&base, NULL);
    else st = rmm_cuda_resource_create(&base);
    if (st != RMM_SUCCESS) {
        fmt(err, ERRLEN, "creating the upstream failed: %s", rmm_last_error());
        return st;
    }
    if (!strcmp(name, "async")) s->async = base;
    s->counter = counting_create(base);
    if (!s->counter) {
        rmm_resource_destroy(base);
        fmt(err, ERRLEN, "out of host memory");
        return RMM_ERROR_OUT_OF_MEMORY;
    }
    if (!strcmp(name, "cuda") || !strcmp(name, "async")) {
        s->top = &s->counter->base;
    } else if (!strcmp(name, "pool") || !strcmp(name, "pool-geometric") || !strncmp(name, "pool-virtual", 12) || !strcmp(name, "binning")) {
        rmm_pool_desc d = rmm_pool_desc_default();
        d.initial_bytes = 0;
        d.growth = !strcmp(name, "pool-geometric") ? RMM_POOL_GROWTH_GEOMETRIC : RMM_POOL_GROWTH_ON_DEMAND;
        if (!strncmp(name, "pool-virtual", 12)) d.growth = RMM_POOL_GROWTH_VIRTUAL;
        if (!strcmp(name, "pool-virtual-extent")) d.virtual_extent_bytes = g_extent_mib << 20;
        st = rmm_pool_create(&pool, &s->counter->base, &d);
        if (st == RMM_SUCCESS && !strcmp(name, "binning")) {
            rmm_binning_desc b = rmm_binning_desc_default();
            b.min_size_exponent = 18;
            b.max_size_exponent = 22;
            st = rmm_binning_create(&r, pool, &b);
            if (st == RMM_SUCCESS) s->layers[s->nlayers++] = r;
        } else {
            r = pool;
        }
        if (pool) s->layers[s->nlayers++] = pool;
        s->pool = pool;
        s->pool_virtual = !strncmp(name, "pool-virtual", 12);
        s->top = r;
    } else if (!strcmp(name, "arena")) {
        rmm_arena_desc d = rmm_arena_desc_default();
        d.arena_bytes = arena_bytes;
        st = rmm_arena_create(&r, &s->counter->base, &d);
        if (st == RMM_SUCCESS) s->layers[s->nlayers++] = r;
        s->top = r;
    } else {
        st = RMM_ERROR_INVALID_ARGUMENT;
    }
    s->layers[s->nlayers++] = &s->counter->base;
    s->layers[s->nlayers++] = base;
    if (st != RMM_SUCCESS) {
        fmt(err, ERRLEN, "creating %s failed: %s", name, st == RMM_ERROR_INVALID_ARGUMENT && !s->top ? "unknown resource" : rmm_last_error());
        stack_destroy(s);
    }
    return st;
}

typedef struct run_result {
    double ns;                 /* timed */
    size_t events;
    size_t peak_upstream;      /* counting resource */
    size_t pool_peak;          /* rmm_pool_get_info, pools only */
    size_t reserved_high;      /* CUDA async only */
    uint64_t vm_calls[6];      /* pool-virtual only: page creates, maps, access calls, unmaps, releases, synchronizes */
    char check[ERRLEN];        /* overlap / validate findings ("" when clean) */
} run_result;

static rmm_stream g_streams[MAX_STREAMS];

/* Replays t once on a fresh stack. RMM_SUCCESS, or the failing status with a message in err. */
static rmm_status replay_once(const trace *t, const char *name, size_t arena_bytes, int check, run_result *r, char *err) {
    stack s;
    void **ptrs = (void **)calloc(t->nslots + 1, sizeof *ptrs);
    unsigned char *live = (unsigned char *)calloc(t->nslots + 1, 1);
    rmm_status st;
    uint64_t t0, t1;
    size_t i;
    int k;
    live_blocks chk;
    memset(r, 0, sizeof *r);
    if (!ptrs || !live) {
        free(ptrs);
        free(live);
        fmt(err, ERRLEN, "out of host memory");
        return RMM_ERROR_OUT_OF_MEMORY;
    }
    if (check) {
        memset(&chk, 0, sizeof chk);
        chk.left = (size_t *)malloc((t->nslots + 1) * sizeof *chk.left);
        chk.right = (size_t *)malloc((t->nslots + 1) * sizeof *chk.right);
        chk.prio = (uint32_t *)malloc((t->nslots + 1) * sizeof *chk.prio);
        chk.root = NIL;
        chk.seed = 0x9E3779B97F4A7C15ull;
        if (!chk.left || !chk.right || !chk.prio) {
            free(chk.left);
            free(chk.right);
            free(chk.prio);
            free(ptrs);
            free(live);
            fmt(err, ERRLEN, "out of host memory");
            return RMM_ERROR_OUT_OF_MEMORY;
        }
        chk.ptrs = ptrs;
        chk.sizes = t->slot_size;
        g_check = &chk;
    }
    st = stack_make(name, arena_bytes, &s, err);
    if (st != RMM_SUCCESS) {
        g_check = NULL;
        if (check) {
            free(chk.left);
            free(chk.right);
            free(chk.prio);
        }
        free(ptrs);
        free(live);
        return st;
    }
    t0 = now_ns();
    for (i = 0; i < t->n; i++) {
        const event *e = &t->ev[i];
        if (e->kind == EV_ALLOC) {
            st = rmm_allocate(s.top, &ptrs[e->slot], e->size, g_streams[e->stream]);
            if (st != RMM_SUCCESS) {
                fmt(err, ERRLEN, "event %zu: allocate(%zu) failed: %s", i, e->size, rmm_last_error());
                break;
            }
            live[e->slot] = 1;
            if (check) live_add(&chk, e->slot, i);
            if (check && !s.pool_virtual && !s.peer) check_contained(s.counter, ptrs[e->slot], e->size);
        } else {
            live[e->slot] = 0; /* before the call: the block is no longer the replay's */
            if (check) live_del(&chk, e->slot);
            st = rmm_deallocate(s.top, ptrs[e->slot], e->size, g_streams[e->stream]);
            if (st != RMM_SUCCESS) {
                live[e->slot] = 1;
                if (check) live_add(&chk, e->slot, i);
                fmt(err, ERRLEN, "event %zu: deallocate(%p, %zu) failed: %s", i, ptrs[e->slot], e->size, rmm_last_error());
                break;
            }
        }
    }
    for (k = 0; k < t->nstreams; k++) (void)rmm_stream_synchronize(g_streams[k]);
    t1 = now_ns();
    r->ns = (double)(t1 - t0);
    r->events = i;
    r->peak_upstream = s.peer ? 0 : s.counter->peak;
#if defined(RMM_BENCH_PEER)
    if (s.peer) r->peak_upstream = rmm_peer_upstream_peak();
#endif
    if (s.pool) {
        rmm_pool_info info;
        if (rmm_pool_get_info(s.pool, &info) == RMM_SUCCESS) r->pool_peak = info.peak_pool_bytes;
        if (!s.pool_virtual) {
            r->vm_calls[0] = ((const rmm__pool *)s.pool)->grows;
            r->vm_calls[1] = ((const rmm__pool *)s.pool)->releases;
        } else {
            const rmm__pool_vm *vm = &((const rmm__pool *)s.pool)->vm; /* the driver calls it made (internal counters) */
            r->peak_upstream = r->pool_peak; /* physical pages held */
            r->vm_calls[0] = vm->creates;
            r->vm_calls[1] = vm->maps;
            r->vm_calls[2] = vm->access_calls;
            r->vm_calls[3] = vm->unmaps;
            r->vm_calls[4] = vm->releases;
            r->vm_calls[5] = vm->syncs;
        }
    }
#ifndef RMM_BACKEND_HOST
    if (s.async) {
        rmm_mem_pool mp = NULL;
        uint64_t high = 0;
        if (rmm_async_resource_get_pool(s.async, &mp) == RMM_SUCCESS &&
            cudaMemPoolGetAttribute(mp, cudaMemPoolAttrReservedMemHigh, &high) == cudaSuccess)
            r->reserved_high = (size_t)high;
        (void)cudaGetLastError();
    }
#endif
    if (check && st == RMM_SUCCESS) {
        rmm_status v;
        r->check[0] = '\0';
        if (chk.overlaps) fmt(r->check, ERRLEN, "%s (%zu overlapping pairs)", chk.overlap_msg, chk.overlaps);
        if (chk.msg[0]) {
            size_t n = strlen(r->check);
            fmt(r->check + n, ERRLEN - n, "%s%s", n ? "; " : "", chk.msg);
        }
        v = rmm_resource_validate(s.top);
        if (v != RMM_SUCCESS) {
            size_t n = strlen(r->check);
            fmt(r->check + n, ERRLEN - n, "%srmm_resource_validate: %s: %s", n ? "; " : "", rmm_status_string(v), rmm_last_error());
        }
    }
    /* untimed: free whatever is still live (the log's leftovers, or everything after a failure) */
    for (i = 0; i < t->nslots; i++)
        if (live[i]) (void)rmm_deallocate(s.top, ptrs[i], t->slot_size[i], RMM_STREAM_DEFAULT);
    for (k = 0; k < t->nstreams; k++) (void)rmm_stream_synchronize(g_streams[k]);
    g_check = NULL;
    if (check) {
        free(chk.left);
        free(chk.right);
        free(chk.prio);
    }
    stack_destroy(&s);
    free(ptrs);
    free(live);
    return st;
}

/* ---- results, machine, main ------------------------------------------------------------------ */

typedef struct row {
    char trace[128];
    const char *resource;
    int ok;
    double ns_per_event;
    size_t peak_upstream, pool_peak, reserved_high, arena_bytes, min_arena;
    uint64_t vm_calls[6];
    double efficiency;
    char note[ERRLEN + 128];
} row;




/* Reference figures from bench/traces/README.md. */
static void print_reference(const char *name) {
    if (strstr(name, "resnet50_train"))
        printf("# %s reference: PyTorch caching allocator 1.190; ideal contiguous best fit 1.015 (1.001 unmapping free 2 MiB pages)\n", name);
    else if (strstr(name, "gpt2_train"))
        printf("# %s reference: PyTorch caching allocator 1.143; ideal contiguous best fit 1.134 (1.012 unmapping free 2 MiB pages)\n", name);
}

static void trace_name_from_path(const char *path, char *out, size_t cap) {
    const char *b = strrchr(path, '/');
    size_t n;
    fmt(out, cap, "%s", b ? b + 1 : path);
    n = strlen(out);
    if (n > 3 && !strcmp(out + n - 3, ".gz")) out[n -= 3] = '\0';
    if (n > 4 && !strcmp(out + n - 4, ".csv")) out[n - 4] = '\0';
}

/* Replays trace t against one resource: runs, checks, efficiency. */
static void measure(const trace *t, const char *name, int runs, row *out) {
    double ns[32];
    run_result r;
    char err[ERRLEN] = "";
    size_t arena_bytes = 0;
    int i;
    rmm_status st = RMM_SUCCESS;
    memset(out, 0, sizeof *out);
    fmt(out->trace, sizeof out->trace, "%s", t->name);
    out->resource = name;
    if (!strcmp(name, "arena") || !strcmp(name, "rmm::arena")) { /* 4x peak live, rounded up to 1 GiB; smaller if that cannot be had */
        static const double factors[] = {4.0, 3.0, 2.0, 1.5};
        size_t f;
        for (f = 0; f < sizeof factors / sizeof factors[0]; f++) {
            stack probe;
            arena_bytes = round_up((size_t)((double)t->peak_live * factors[f]), f == 0 ? GIB : 256 * MIB);
            st = stack_make("arena", arena_bytes, &probe, err);
            if (st == RMM_SUCCESS) {
                stack_destroy(&probe);
                break;
            }
        }
        if (st != RMM_SUCCESS) {
            fmt(out->note, sizeof out->note, "skipped: %s", err);
            return;
        }
        out->arena_bytes = arena_bytes;
    }
    for (i = -1; i < runs; i++) { /* run -1: the checking run, untimed */
        fprintf(stderr, "  replaying %s on %s (%s %d of %d)\n", t->name, name, i < 0 ? "checking run" : "run", i + 1, runs);
        st = replay_once(t, name, arena_bytes, i < 0, &r, err);
        if (st != RMM_SUCCESS) {
            fmt(out->note, sizeof out->note, "%s: %s", st == RMM_ERROR_OUT_OF_MEMORY ? "skipped (out of memory)" : "skipped (error)", err);
            return;
        }
        if (i < 0) {
            out->peak_upstream = r.peak_upstream;
            out->pool_peak = r.pool_peak;
            out->reserved_high = r.reserved_high;
            memcpy(out->vm_calls, r.vm_calls, sizeof out->vm_calls);
            if (r.check[0]) fmt(out->note, sizeof out->note, "BUG? %s; ", r.check);
            continue;
        }
        ns[i] = r.events ? r.ns / (double)r.events : 0.0;
        if (r.peak_upstream != out->peak_upstream) {
            size_t n = strlen(out->note);
            fmt(out->note + n, sizeof out->note - n, "peak differs between runs (%zu vs %zu); ", r.peak_upstream, out->peak_upstream);
        }
    }
    qsort(ns, (size_t)runs, sizeof ns[0], cmp_double);
    out->ns_per_event = runs % 2 ? ns[runs / 2] : (ns[runs / 2 - 1] + ns[runs / 2]) / 2;
    out->efficiency = t->peak_live ? (double)out->peak_upstream / (double)t->peak_live : 0.0;
    out->ok = 1;
    {
        size_t n = strlen(out->note);
        char *p = out->note + n;
        size_t cap = sizeof out->note - n;
        if (out->peak_upstream == 0 && t->peak_live) { /* rmm::async: RMM's resource takes from the driver's pool unseen */
            fmt(p, cap, "peak not measured (it allocates from the driver's pool, which no counting resource sees); ");
            n = strlen(out->note), p = out->note + n, cap = sizeof out->note - n;
        } else if (out->efficiency < 1.0) {
            fmt(p, cap, "WARNING: below 1.0 is impossible: measurement bug; ");
            n = strlen(out->note), p = out->note + n, cap = sizeof out->note - n;
        }
        if (!strncmp(name, "pool-virtual", 12)) {
            fmt(p, cap, "peak physical pages held (pool_info.peak_pool_bytes); driver calls: %llu creates, %llu maps, %llu set-access, %llu unmaps, %llu releases, %llu synchronizes",
                (unsigned long long)out->vm_calls[0], (unsigned long long)out->vm_calls[1], (unsigned long long)out->vm_calls[2],
                (unsigned long long)out->vm_calls[3], (unsigned long long)out->vm_calls[4], (unsigned long long)out->vm_calls[5]);
        } else if (!strcmp(name, "pool") || !strcmp(name, "pool-geometric") || !strcmp(name, "binning")) {
            fmt(p, cap, "pool_info.peak_pool_bytes=%.1f MiB (%s); %llu chunks taken from upstream, %llu given back", mib(out->pool_peak),
                out->pool_peak == out->peak_upstream ? "agrees" : "DISAGREES with the counting resource", (unsigned long long)out->vm_calls[0],
                (unsigned long long)out->vm_calls[1]);
        } else if (!strcmp(name, "async")) {
#ifndef RMM_BACKEND_HOST
            fmt(p, cap, "cudaMemPoolAttrReservedMemHigh=%.1f MiB (%.3f x peak live)", mib(out->reserved_high),
                t->peak_live ? (double)out->reserved_high / (double)t->peak_live : 0.0);
#else
            fmt(p, cap, "host backend: posix_memalign per allocation");
#endif
        } else if (!strcmp(name, "arena")) {
            fmt(p, cap, "arena_bytes=%.0f MiB taken at creation", mib(out->arena_bytes));
        }
    }
    if (!strcmp(name, "arena")) { /* bisect the smallest arena that replays without running out */
        size_t lo = t->peak_live, hi = out->arena_bytes, step = t->peak_live / 100;
        if (step < MIB) step = MIB;
        lo = lo / MIB * MIB;
        while (hi - lo > step) {
            size_t mid = (lo + (hi - lo) / 2) / MIB * MIB;
            run_result probe;
            char perr[ERRLEN];
            if (mid <= lo) break;
            fprintf(stderr, "  arena bisection: %.0f MiB\n", mib(mid));
            if (replay_once(t, "arena", mid, 0, &probe, perr) == RMM_SUCCESS) hi = mid;
            else lo = mid;
        }
        out->min_arena = hi;
        {
            size_t n = strlen(out->note);
            fmt(out->note + n, sizeof out->note - n, "; min_arena_MiB=%.0f (%.3f x peak live)", mib(hi), (double)hi / (double)t->peak_live);
        }
    }
}

static void usage(const char *argv0) {
    printf("usage: %s [--resource NAME[,NAME..]] [--runs N] [--name NAME] [--extent MIB] FILE|- [FILE...]\n"
           "  --extent MIB: pool-virtual-extent's virtual_extent_bytes in MiB, 1..4096 (default 128)\n"
           "  FILE: an RMM CSV log (Thread,Time,Action,Pointer,Size,Stream); .gz is read through gzip -dc; - is stdin\n"
           "  resources: cuda async pool pool-geometric pool-virtual pool-virtual-extent binning arena\n",
           argv0);
}

int main(int argc, char **argv) {
    const char *rfilter = NULL, *name = NULL, *inputs[64];
    int ninputs = 0, runs = 3, i, k, nrows = 0;
    row *rows;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--resource") && i + 1 < argc) rfilter = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--name") && i + 1 < argc) name = argv[++i];
        else if (!strcmp(argv[i], "--extent") && i + 1 < argc) {
            char *end = NULL;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (!end || *end || v < 1 || v > 4096) {
                fprintf(stderr, "replay: --extent takes a size in MiB from 1 to 4096, not '%s'\n", argv[i]);
                return 2;
            }
            g_extent_mib = (size_t)v;
        }
        else if ((!strcmp(argv[i], "-") || argv[i][0] != '-') && ninputs < 64) inputs[ninputs++] = argv[i];
        else {
            usage(argv[0]);
            return !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ? 0 : 2;
        }
    }
    if (ninputs == 0) {
        usage(argv[0]);
        return 2;
    }
    if (runs < 1) runs = 1;
    if (runs > 32) runs = 32;
#ifdef RMM_BACKEND_HOST
    rmm_host_backend_set_capacity((size_t)256 * GIB);
#else
    if (!have_device("replay")) return 2;
#endif
    print_machine("\"device\" memory is posix_memalign'ed host memory (capacity raised to 256 GiB, never touched)");
    printf("# ns_per_event: median of %d runs; efficiency: peak_upstream / peak live (from the log); pool-virtual-extent: extents of up to %zu MiB\n", runs,
           g_extent_mib);
    rows = (row *)calloc((size_t)(ninputs * NRES), sizeof *rows);
    if (!rows) return 2;

    for (k = 0; k < ninputs; k++) {
        trace t;
        FILE *f;
        int piped = 0, s, rc;
        size_t len = strlen(inputs[k]);
        memset(&t, 0, sizeof t);
        if (!strcmp(inputs[k], "-")) {
            f = stdin;
            fmt(t.name, sizeof t.name, "%s", name ? name : "stdin");
        } else {
            if (len > 3 && !strcmp(inputs[k] + len - 3, ".gz")) {
                char cmd[1200];
                if (strchr(inputs[k], '\'')) {
                    fprintf(stderr, "replay: a path with a quote: %s\n", inputs[k]);
                    return 2;
                }
                fmt(cmd, sizeof cmd, "gzip -dc -- '%s'", inputs[k]);
                f = popen(cmd, "r");
                piped = 1;
            } else {
                f = fopen(inputs[k], "r");
            }
            if (!f) {
                fprintf(stderr, "replay: cannot open %s\n", inputs[k]);
                return 2;
            }
            if (name && ninputs == 1) fmt(t.name, sizeof t.name, "%s", name);
            else trace_name_from_path(inputs[k], t.name, sizeof t.name);
        }
        rc = trace_parse(f, &t);
        if (piped) rc |= pclose(f) != 0;
        else if (f != stdin) fclose(f);
        if (rc != 0 || t.n == 0) {
            fprintf(stderr, "replay: could not read a log from %s\n", inputs[k]);
            trace_free(&t);
            return 2;
        }
        printf("# trace %s: %zu events replayed (%zu allocate, %zu free), peak live %zu bytes (%.1f MiB; %.1f MiB rounded to 256), %d stream(s)\n",
               t.name, t.n, t.allocs, t.frees, t.peak_live, mib(t.peak_live), mib(t.peak_live_rounded), t.nstreams);
        printf("# trace %s: skipped %zu allocate failures, %zu frees of unknown pointers, %zu bad lines; %zu size mismatches; %zu pointers reallocated while live; %zu blocks live at the end (freed untimed)\n",
               t.name, t.failures, t.unmatched_frees, t.bad_lines, t.size_mismatches, t.reused_live, t.left_live);
        print_reference(t.name);
        fflush(stdout);
        for (s = 0; s < t.nstreams; s++) {
            g_streams[s] = RMM_STREAM_DEFAULT;
            if (t.streams[s] != 0 && rmm_stream_create(&g_streams[s]) != RMM_SUCCESS) {
                fprintf(stderr, "replay: rmm_stream_create failed: %s\n", rmm_last_error());
                return 2;
            }
        }
        for (i = 0; i < NRES; i++) {
            if (!name_selected(RESOURCES[i], rfilter, 0)) continue;
            measure(&t, RESOURCES[i], runs, &rows[nrows++]);
        }
        for (s = 0; s < t.nstreams; s++)
            if (g_streams[s] != RMM_STREAM_DEFAULT) (void)rmm_stream_destroy(g_streams[s]);
        trace_free(&t);
    }

    printf("%-18s %-15s %12s %18s %11s  %s\n", "trace", "resource", "ns_per_event", "peak_upstream_MiB", "efficiency", "note");
    for (i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        if (r->ok)
            printf("%-18s %-15s %12.1f %18.1f %11.3f  %s\n", r->trace, r->resource, r->ns_per_event, mib(r->peak_upstream), r->efficiency, r->note);
        else
            printf("%-18s %-15s %12s %18s %11s  %s\n", r->trace, r->resource, "-", "-", "-", r->note);
    }
    printf("csv,trace,resource,status,ns_per_event,peak_upstream_bytes,efficiency,pool_peak_bytes,async_reserved_high_bytes,arena_bytes,min_arena_bytes,backend\n");
    for (i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        const char *backend =
#ifdef RMM_BACKEND_HOST
            "host";
#else
            "cuda";
#endif
        if (r->ok)
            printf("csv,%s,%s,ok,%.2f,%zu,%.4f,%zu,%zu,%zu,%zu,%s\n", r->trace, r->resource, r->ns_per_event, r->peak_upstream, r->efficiency,
                   r->pool_peak, r->reserved_high, r->arena_bytes, r->min_arena, backend);
        else
            printf("csv,%s,%s,skipped,,,,,,,,%s\n", r->trace, r->resource, backend);
    }
    free(rows);
    return 0;
}
