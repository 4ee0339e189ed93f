/* tests/test_stream_order.c - stream order checked on the host backend: no block reaches a stream
   before the work that last used it on another stream is done or ordered before it.

   On the host backend as shipped, work runs when it is enqueued, so every event is complete when it
   is recorded and an early hand-over cannot show. This program sets a model of the device's queues
   (rmm_host_backend_set_stream_model): each stream has work enqueued and work done, work completes
   only when the test says so (or on a synchronize, an event synchronize, or cudaFree's implicit
   device synchronize), an event is complete only when its stream has done the work before its
   record, and cudaStreamWaitEvent orders the waiting stream's later work after it (vector clocks).
   A destroyed stream's work stays pending, and a new stream made at the same handle is another
   stream. Every block handed out is checked against the last use of its bytes (per 256 bytes): the
   same stream, or work done, or ordered before the allocating stream. A "kernel" is a unit of work
   enqueued on a stream that touches a block.

   The drivers: growth from a stream-ordered upstream (the fixed-size resource, binning and a pool
   over a pool; a red team's find of 2026-11-28), handle reuse right after a ring's worth of frees,
   a random program per resource kind (foreign, created and default streams, frees on other streams
   behind the user's own event or synchronize, streams destroyed with work pending, the device
   falling behind, trims, out of memory), the same with every stream promised to outlive the
   resource (streams_outlive_pool, streams_outlive_arena: no stream destroyed while it lives, the
   per-thread default stream among them), three threads on their own and one shared stream, threads
   on their per-thread default streams that exit with work pending, and a resource of the test's own
   that ignores stream order, which the checker must catch (a clean run means something). Per-thread
   default streams are one stream per thread and synchronize implicitly with the legacy default
   stream, as CUDA's do; the other streams are non-blocking. Host backend only: a CUDA build skips
   every case, saying why.

   (The model and drivers began as a red team's harness, /work/notes/redteam18-order.md; its first
   model dropped waits when two streams waited on each other's earlier work, which showed as false
   violations with threads: completion here is in order and re-entrant.) */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "harness.h"
#include <pthread.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

#if defined(RMM_BACKEND_HOST)
/* ---- the model ------------------------------------------------------------------------------ */
#define MAXU 4096 /* streams ever made in one run, plus the default ones */
typedef struct mwait {
    uint64_t at; /* the wait's own place in its stream */
    uint32_t u;  /* ... on stream u's work up to t */
    uint64_t t;
} mwait;
typedef struct mstream {
    uint64_t enq, done;
    int blocking; /* a per-thread default stream: synchronizes with the legacy one */
    uint32_t *vc; /* vc[v]: the work of stream v this stream's later work is ordered after */
    mwait *waits;
    size_t nwaits, capwaits;
} mstream;
typedef struct mevent {
    const void *key;
    int recorded;
    uint32_t u;
    uint64_t t;
    uint32_t *vc;
    struct mevent *next;
} mevent;
typedef struct gslot {
    uintptr_t g; /* granule + 1; 0: empty */
    uint32_t u;
    uint64_t t;
} gslot;
static mstream ms[MAXU];
static uint32_t maxu = 3; /* uid 1: the legacy default stream; 0 and 2 unused */
static mevent *ev_buckets[1024];
static pthread_mutex_t mmu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long m_records, m_queries, m_queries_no, m_waits, m_syncs;

static uint32_t *vc_of(uint32_t u) {
    if (!ms[u].vc && !(ms[u].vc = (uint32_t *)calloc(MAXU, sizeof(uint32_t)))) abort();
    return ms[u].vc;
}
/* serial -> uid, made afresh by model_reset (between cases, with all work done) */
#define UMAP 16384
static struct {
    uint64_t serial;
    uint32_t u;
} umap[UMAP];
static uint64_t generation = 1;                 /* model_reset's count */
static RMM__TLS uint64_t my_generation, my_uid; /* this thread's per-thread default stream */
static uint32_t new_uid_locked(void) {
    if (maxu == MAXU) {
        fprintf(stderr, "stream_order: more than %d streams in one case\n", MAXU);
        abort();
    }
    return maxu++;
}
static uint32_t uid_locked(rmm_stream stream) {
    uint64_t serial = rmm_host_backend_stream_serial(stream);
    size_t i;
    if (serial <= 1) return 1; /* the legacy default stream (0 and 1) */
    if (serial == 2) {         /* the calling thread's own default stream, as CUDA's cudaStreamPerThread */
        if (my_generation != generation) {
            my_generation = generation;
            my_uid = new_uid_locked();
            ms[my_uid].blocking = 1;
        }
        return (uint32_t)my_uid;
    }
    for (i = (size_t)(serial * 0x9E3779B97F4A7C15ull >> 50) & (UMAP - 1); umap[i].serial; i = (i + 1) & (UMAP - 1))
        if (umap[i].serial == serial) return umap[i].u;
    umap[i].serial = serial;
    umap[i].u = new_uid_locked();
    return umap[i].u;
}
/* Completes stream u's work up to n, in order: a wait completes the work it waits for first.
   Re-entrant: two streams may wait on each other's earlier work. */
static void complete_locked(uint32_t u, uint64_t n) {
    mstream *s = &ms[u];
    if (n > s->enq) n = s->enq;
    while (s->done < n) {
        if (s->nwaits && s->waits[0].at <= n) {
            mwait w = s->waits[0];
            memmove(s->waits, s->waits + 1, (s->nwaits - 1) * sizeof *s->waits);
            s->nwaits--;
            if (w.at - 1 > s->done) s->done = w.at - 1;
            complete_locked(w.u, w.t);
            if (w.at > s->done) s->done = w.at;
        } else {
            s->done = n;
        }
    }
}
static uint64_t enqueue_raw(uint32_t u) {
    ms[u].enq++;
    vc_of(u)[u] = (uint32_t)ms[u].enq;
    return ms[u].enq;
}
static void wait_raw(uint32_t w, uint32_t u, uint64_t t, const uint32_t *evc) {
    mstream *s = &ms[w];
    uint32_t i, *vc;
    uint64_t at = enqueue_raw(w);
    vc = vc_of(w);
    for (i = 0; i < maxu; i++)
        if (evc[i] > vc[i]) vc[i] = evc[i];
    if (s->nwaits == s->capwaits) {
        s->capwaits = s->capwaits ? 2 * s->capwaits : 16;
        if (!(s->waits = (mwait *)realloc(s->waits, s->capwaits * sizeof *s->waits))) abort();
    }
    s->waits[s->nwaits].at = at;
    s->waits[s->nwaits].u = u;
    s->waits[s->nwaits].t = t;
    s->nwaits++;
}
/* CUDA's implicit synchronization: work on the legacy default stream (uid 1) waits for the work
   already on every blocking stream, and work on a blocking stream waits for the legacy stream's.
   The blocking streams here are the per-thread default streams (the tests' other streams are made
   non-blocking, as the library's and cudaStreamCreateWithFlags(cudaStreamNonBlocking) are). */
static void implicit_locked(uint32_t u) {
    uint32_t v;
    if (u == 1) {
        for (v = 3; v < maxu; v++)
            if (ms[v].blocking && ms[v].enq > vc_of(1)[v]) wait_raw(1, v, ms[v].enq, vc_of(v));
    } else if (ms[u].blocking && ms[1].enq > vc_of(u)[1]) {
        wait_raw(u, 1, ms[1].enq, vc_of(1));
    }
}
static uint64_t enqueue_locked(uint32_t u) {
    implicit_locked(u);
    return enqueue_raw(u);
}
static void wait_locked(uint32_t w, uint32_t u, uint64_t t, const uint32_t *evc) {
    implicit_locked(w);
    wait_raw(w, u, t, evc);
}
static mevent **ev_slot(const void *key) {
    mevent **p = &ev_buckets[((uintptr_t)key >> 4) & 1023];
    while (*p && (*p)->key != key) p = &(*p)->next;
    return p;
}
static mevent *ev_get(const void *key) {
    mevent **p = ev_slot(key);
    if (!*p) {
        if (!(*p = (mevent *)calloc(1, sizeof **p)) || !((*p)->vc = (uint32_t *)calloc(MAXU, sizeof(uint32_t)))) abort();
        (*p)->key = key;
    }
    return *p;
}
static void m_event_record(void *user, const void *event, rmm_stream stream) {
    mevent *e;
    uint32_t u;
    (void)user;
    pthread_mutex_lock(&mmu);
    m_records++;
    e = ev_get(event);
    u = uid_locked(stream);
    implicit_locked(u); /* (the record is work on that stream) */
    e->recorded = 1;
    e->u = u;
    e->t = ms[u].enq;
    memcpy(e->vc, vc_of(u), maxu * sizeof(uint32_t));
    pthread_mutex_unlock(&mmu);
}
static bool m_event_query(void *user, const void *event) {
    mevent *e;
    bool done;
    (void)user;
    pthread_mutex_lock(&mmu);
    m_queries++;
    e = *ev_slot(event);
    done = !e || !e->recorded || ms[e->u].done >= e->t;
    if (!done) m_queries_no++;
    pthread_mutex_unlock(&mmu);
    return done;
}
static void m_event_synchronize(void *user, const void *event) {
    mevent *e;
    (void)user;
    pthread_mutex_lock(&mmu);
    m_syncs++;
    e = *ev_slot(event);
    if (e && e->recorded) complete_locked(e->u, e->t);
    pthread_mutex_unlock(&mmu);
}
static void m_event_destroy(void *user, const void *event) {
    mevent **p, *e;
    (void)user;
    pthread_mutex_lock(&mmu);
    p = ev_slot(event);
    if ((e = *p) != NULL) {
        *p = e->next;
        free(e->vc);
        free(e);
    }
    pthread_mutex_unlock(&mmu);
}
static void m_stream_wait_event(void *user, rmm_stream stream, const void *event) {
    mevent *e;
    (void)user;
    pthread_mutex_lock(&mmu);
    m_waits++;
    e = *ev_slot(event);
    if (e && e->recorded) {
        uint32_t w = uid_locked(stream);
        if (w != e->u) wait_locked(w, e->u, e->t, e->vc);
    }
    pthread_mutex_unlock(&mmu);
}
static void m_stream_synchronize(void *user, rmm_stream stream) {
    uint32_t u;
    (void)user;
    pthread_mutex_lock(&mmu);
    m_syncs++;
    u = uid_locked(stream);
    complete_locked(u, ms[u].enq);
    pthread_mutex_unlock(&mmu);
}
static void complete_all(void) {
    uint32_t u;
    pthread_mutex_lock(&mmu);
    for (u = 0; u < maxu; u++) complete_locked(u, ms[u].enq);
    pthread_mutex_unlock(&mmu);
}
static void m_device_synchronize(void *user) {
    (void)user;
    pthread_mutex_lock(&mmu);
    m_syncs++;
    pthread_mutex_unlock(&mmu);
    complete_all();
}
static uint64_t enqueue(rmm_stream stream) {
    uint64_t t;
    pthread_mutex_lock(&mmu);
    t = enqueue_locked(uid_locked(stream));
    pthread_mutex_unlock(&mmu);
    return t;
}
static void m_stream_work(void *user, rmm_stream stream) {
    (void)user;
    (void)enqueue(stream);
}
static void chk_unmapped(const void *va, size_t bytes);
static void m_unmap(void *user, const void *va, size_t bytes) {
    (void)user;
    chk_unmapped(va, bytes);
}
static const rmm_host_stream_model model = {NULL, m_event_record, m_event_query, m_event_synchronize, m_event_destroy,
                                            m_stream_wait_event, m_stream_synchronize, m_device_synchronize, m_stream_work, m_unmap};
/* The device makes progress: some of a random stream's work completes. */
static void progress(uint64_t r) {
    uint32_t u;
    pthread_mutex_lock(&mmu);
    u = (uint32_t)(r % maxu);
    if (ms[u].enq > ms[u].done) complete_locked(u, ms[u].done + 1 + (r >> 20) % (ms[u].enq - ms[u].done));
    pthread_mutex_unlock(&mmu);
}
/* The user makes `waiter` wait for everything enqueued on `on` so far (an event of the user's). */
static void user_wait(rmm_stream waiter, rmm_stream on) {
    uint32_t w, u;
    pthread_mutex_lock(&mmu);
    w = uid_locked(waiter);
    u = uid_locked(on);
    if (w != u) wait_locked(w, u, ms[u].enq, vc_of(u));
    pthread_mutex_unlock(&mmu);
}
/* Between cases: all work done, then the model starts afresh (streams get new uids on their next
   use, events forget their records, which are complete, and the last uses are dropped, which are
   done), so that no case runs out of stream numbers. Only while no other thread calls in. */
static gslot *gmap;
static void model_reset(void) {
    uint32_t u;
    size_t i;
    mevent *e;
    complete_all();
    pthread_mutex_lock(&mmu);
    for (u = 0; u < maxu; u++) {
        free(ms[u].vc);
        free(ms[u].waits);
        memset(&ms[u], 0, sizeof ms[u]);
    }
    maxu = 3;
    generation++;
    memset(umap, 0, sizeof umap);
    for (i = 0; i < 1024; i++)
        for (e = ev_buckets[i]; e; e = e->next) e->recorded = 0;
    if (gmap) memset(gmap, 0, ((size_t)1 << 21) * sizeof *gmap);
    pthread_mutex_unlock(&mmu);
}

/* ---- the checker ---------------------------------------------------------------------------- */
#define GBITS 21
static long violations, checks;
static const char *where = "";
static gslot *gfind(uintptr_t g, int make) {
    size_t i = (size_t)((g * 0x9E3779B97F4A7C15ull) >> (64 - GBITS));
    if (!gmap && !(gmap = (gslot *)calloc((size_t)1 << GBITS, sizeof *gmap))) abort();
    for (;; i = (i + 1) & (((size_t)1 << GBITS) - 1)) {
        if (gmap[i].g == g) return &gmap[i];
        if (gmap[i].g == 0) {
            if (!make) return NULL;
            gmap[i].g = g;
            return &gmap[i];
        }
    }
}
static size_t span(size_t n) { return (n + 255) & ~(size_t)255; }
/* [p, p + n) was just handed to `stream`: every granule's last use must be done or ordered before
   the stream's later work. */
static void chk_got(const void *p, size_t n, rmm_stream stream) {
    uintptr_t g, g0 = (uintptr_t)p >> 8, g1 = ((uintptr_t)p + span(n)) >> 8;
    uint32_t au;
    pthread_mutex_lock(&mmu);
    au = uid_locked(stream);
    checks++;
    for (g = g0; g < g1; g++) {
        gslot *s = gfind(g + 1, 0);
        if (s && s->u != au && ms[s->u].done < s->t && vc_of(au)[s->u] < s->t &&
            !((au == 1 && ms[s->u].blocking) || (s->u == 1 && ms[au].blocking))) { /* (implicit synchronization orders those) */
            if (violations < 5)
                printf("  VIOLATION (%s): %p+%zu handed to stream %u, but its byte %p was last used by stream %u at work %llu (done %llu)\n", where, p,
                       n, au, (void *)(g << 8), s->u, (unsigned long long)s->t, (unsigned long long)ms[s->u].done);
            violations++;
            break;
        }
    }
    pthread_mutex_unlock(&mmu);
}
/* A kernel on `stream` touches [p, p + n). */
static void chk_use(const void *p, size_t n, rmm_stream stream) {
    uintptr_t g, g0 = (uintptr_t)p >> 8, g1 = ((uintptr_t)p + span(n)) >> 8;
    uint32_t u;
    uint64_t t;
    pthread_mutex_lock(&mmu);
    u = uid_locked(stream);
    t = enqueue_locked(u);
    for (g = g0; g < g1; g++) {
        gslot *s = gfind(g + 1, 1);
        s->u = u;
        s->t = t;
    }
    pthread_mutex_unlock(&mmu);
}
/* Pages unmapped: no work may still use them. */
static void chk_unmapped(const void *va, size_t bytes) {
    uintptr_t g, g0 = (uintptr_t)va >> 8, g1 = ((uintptr_t)va + bytes) >> 8;
    pthread_mutex_lock(&mmu);
    for (g = g0; g < g1; g++) {
        gslot *s = gfind(g + 1, 0);
        if (s && ms[s->u].done < s->t) {
            if (violations < 5) printf("  VIOLATION (%s): pages %p+%zu unmapped while stream %u's work %llu still uses them\n", where, va, bytes, s->u, (unsigned long long)s->t);
            violations++;
            break;
        }
    }
    pthread_mutex_unlock(&mmu);
}
static rmm_stream foreign(void) { /* as cudaStreamCreate */
    rmm_stream s = NULL;
    if (rmm__stream_create_raw(&s, false) != RMM_SUCCESS) abort();
    return s;
}
static void destroy(rmm_stream s) {
    if (rmm__stream_destroy_raw(s) != RMM_SUCCESS) abort();
}
/* allocate, check, use */
static rmm_status alloc_use(rmm_resource *mr, void **p, size_t n, rmm_stream s) {
    rmm_status st = rmm_allocate(mr, p, n, s);
    if (st == RMM_SUCCESS && *p) {
        chk_got(*p, n, s);
        chk_use(*p, n, s);
    }
    return st;
}
static int free_ok(rmm_resource *mr, void *p, size_t n, rmm_stream s) {
    rmm_status st = rmm_deallocate(mr, p, n, s);
    if (st != RMM_SUCCESS) printf("  free failed: %s\n", rmm_last_error());
    return st == RMM_SUCCESS;
}

/* (tests/test_capture_fuzz.c includes this file with STREAM_ORDER_MODEL_ONLY for the model and
   the checker above: the cases and main below are then left out) */
#if !defined(STREAM_ORDER_MODEL_ONLY)
/* ---- the resources -------------------------------------------------------------------------- */
enum { POOL, POOL_ON_DEMAND, POOL_VIRTUAL, BINNING, FIXED, ARENA, KINDS };
static const char *const kind_name[KINDS] = {"pool", "pool (on demand)", "pool (virtual)", "binning over a pool", "fixed-size", "arena"};
/* The same with every stream promised to outlive the resource (streams_outlive_pool, or
   streams_outlive_arena; the fixed-size resource, which has no such option, over such a pool). */
static const char *const outlive_name[KINDS] = {"pool, streams outlive it", "pool (on demand), streams outlive it", "pool (virtual), streams outlive it",
                                                "binning over a pool, streams outlive it", "fixed-size over a pool, streams outlive it",
                                                "arena, streams outlive it"};
static void make_ex(int kind, rmm_resource **mr, rmm_resource **pool, size_t maximum, bool outlive) {
    *mr = *pool = NULL;
    if (kind <= BINNING || (outlive && kind == FIXED)) {
        rmm_pool_desc d = rmm_pool_desc_default();
        d.maximum_bytes = maximum;
        d.streams_outlive_pool = outlive;
        if (kind == POOL_ON_DEMAND) d.growth = RMM_POOL_GROWTH_ON_DEMAND;
        if (kind == POOL_VIRTUAL) {
            d.growth = RMM_POOL_GROWTH_VIRTUAL;
            d.virtual_bytes = 4 * maximum;
        }
        CHECK_OK(rmm_pool_create(pool, kind == POOL_VIRTUAL ? NULL : rmm_get_current_device_resource(), &d));
        *mr = *pool;
    }
    if (kind == BINNING) {
        rmm_binning_desc bd = rmm_binning_desc_default();
        bd.min_size_exponent = 8;
        bd.max_size_exponent = 16;
        CHECK_OK(rmm_binning_create(mr, *pool, &bd));
    }
    if (kind == FIXED) {
        rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
        fd.block_bytes = 64 * KiB;
        fd.blocks_to_preallocate = 64;
        CHECK_OK(rmm_fixed_size_create(mr, *pool ? *pool : rmm_get_current_device_resource(), &fd));
    }
    if (kind == ARENA) {
        rmm_arena_desc ad = rmm_arena_desc_default();
        ad.arena_bytes = maximum / 2;
        ad.superblock_bytes = 256 * KiB;
        ad.streams_outlive_arena = outlive;
        CHECK_OK(rmm_arena_create(mr, rmm_get_current_device_resource(), &ad));
    }
}
static void make(int kind, rmm_resource **mr, rmm_resource **pool, size_t maximum) { make_ex(kind, mr, pool, maximum, false); }
static void unmake(rmm_resource *mr, rmm_resource *pool) {
    if (mr) rmm_resource_destroy(mr);
    if (pool && pool != mr) rmm_resource_destroy(pool);
}

/* ---- a resource of the test's own that ignores stream order: the checker must catch it -------- */
typedef struct careless {
    rmm_resource base;
    void *free_list[64];
    int nfree;
} careless;
static rmm_status careless_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    careless *c = (careless *)self;
    (void)alignment;
    (void)stream;
    if (bytes > 4096) return RMM_ERROR_OUT_OF_MEMORY;
    if (c->nfree) {
        *ptr = c->free_list[--c->nfree]; /* whichever stream freed it, with no wait */
        return RMM_SUCCESS;
    }
    return rmm_allocate(NULL, ptr, 4096, RMM_STREAM_DEFAULT);
}
static rmm_status careless_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    careless *c = (careless *)self;
    (void)bytes;
    (void)alignment;
    (void)stream;
    if (c->nfree == 64) return rmm_deallocate(NULL, ptr, 4096, RMM_STREAM_DEFAULT);
    c->free_list[c->nfree++] = ptr;
    return RMM_SUCCESS;
}
static const rmm_resource_vtable careless_vtable = {"careless", careless_allocate, careless_deallocate, NULL, NULL};

TEST(the_checker_catches_a_resource_that_ignores_stream_order) {
    careless c;
    rmm_stream a = foreign(), b = foreign();
    void *p = NULL, *q = NULL;
    long before = violations;
    memset(&c, 0, sizeof c);
    c.base.vtable = &careless_vtable;
    where = "careless";
    CHECK_OK(alloc_use(&c.base, &p, 1000, a)); /* a kernel on a, never done */
    CHECK(free_ok(&c.base, p, 1000, a));
    CHECK_OK(alloc_use(&c.base, &q, 1000, b)); /* handed to b at once */
    CHECK(q == p);
    CHECK(violations == before + 1);
    violations = before; /* (expected: not counted against the library) */
    model_reset();
    CHECK(free_ok(&c.base, q, 1000, b));
    while (c.nfree) CHECK_OK(rmm_deallocate(NULL, c.free_list[--c.nfree], 4096, RMM_STREAM_DEFAULT));
    destroy(a);
    destroy(b);
}

/* Growth from a pool on stream x: x's kernel still writes the pool block the growth reuses; stream t
   then takes memory of that chunk (the fixed-size resource, a binning resource's bin, a pool over
   the pool). */
TEST(growth_from_a_pool_on_one_stream_is_ordered_for_others) {
    int kind;
    for (kind = 0; kind < 3; kind++) {
        rmm_resource *pool = NULL, *mr = NULL;
        rmm_stream x = foreign(), t = foreign();
        void *big = NULL, *held[4096], *b = NULL;
        size_t nh = 0, i, bigbytes = kind == 0 ? 64 * KiB : kind == 1 ? 2 * MiB : 32 * MiB, block = kind == 2 ? 4 * KiB : 1 * KiB;
        int found = 0;
        long before = violations;
        where = kind == 0 ? "growth: fixed-size over a pool" : kind == 1 ? "growth: binning over a pool" : "growth: pool over a pool";
        CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
        if (kind == 0) {
            rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
            fd.block_bytes = block;
            fd.blocks_to_preallocate = 64;
            CHECK_OK(rmm_fixed_size_create(&mr, pool, &fd));
        } else if (kind == 1) {
            rmm_binning_desc bd = rmm_binning_desc_default();
            bd.min_size_exponent = 10;
            bd.max_size_exponent = 10;
            CHECK_OK(rmm_binning_create(&mr, pool, &bd));
        } else {
            CHECK_OK(rmm_pool_create(&mr, pool, NULL));
        }
        CHECK_OK(alloc_use(pool, &big, bigbytes, x)); /* x's kernel, not done */
        CHECK(free_ok(pool, big, bigbytes, x));
        while (nh < 4096 && !found) {
            CHECK_OK(alloc_use(mr, &held[nh], block, x));
            found = (char *)held[nh] >= (char *)big && (char *)held[nh] < (char *)big + bigbytes;
            nh++;
        }
        CHECK(found);
        CHECK_OK(alloc_use(mr, &b, block, t));
        CHECK(violations == before);
        model_reset();
        CHECK(free_ok(mr, b, block, t));
        for (i = 0; i < nh; i++) CHECK(free_ok(mr, held[i], block, x));
        unmake(mr, pool);
        destroy(x);
        destroy(t);
    }
}

/* A foreign stream f takes memory another stream g still uses (behind a wait on g, into f's own
   free lists: a refill), and is destroyed; a new stream gets f's handle and allocates at once,
   inside the id-less run f's thread started (the pool's rmm__pool_take_listed, since 2026-11-29):
   f's lists are known done only once a record made after that wait is seen complete, so the new
   stream must not be handed that memory before g's work is done. Fails when the refill leaves f's
   lists marked done (checked by taking rmm__pool_filed out of rmm__pool_refill). */
TEST(handle_reuse_after_a_refill_waits_for_the_donor) {
    rmm_resource *mr = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_stream f = foreign(), g = foreign(), h;
    void *x = NULL, *y = NULL, *z = NULL, *small[RMM__POOL_RING_AFTER], *q[8];
    size_t i, n = 0;
    uint32_t u;
    long before = violations;
    where = "pool: a refill, then handle reuse";
    d.initial_bytes = d.maximum_bytes = 16 * MiB;
    CHECK_OK(rmm_pool_create(&mr, rmm_get_current_device_resource(), &d));
    if (!mr) return;
    /* f earns its lists and its ring (an event per free for its first frees), all its work done
       and seen done (an allocation asks the event), so that nothing but the refill below can
       keep its lists from being known done */
    for (i = 0; i < RMM__POOL_RING_AFTER; i++) CHECK_OK(alloc_use(mr, &small[i], 256, f));
    for (i = 0; i < RMM__POOL_RING_AFTER; i++) CHECK(free_ok(mr, small[i], 256, f));
    pthread_mutex_lock(&mmu);
    u = uid_locked(f);
    complete_locked(u, ms[u].enq);
    pthread_mutex_unlock(&mmu);
    CHECK_OK(alloc_use(mr, &z, 256, f));
    CHECK(free_ok(mr, z, 256, f)); /* (into its ring) */
    pthread_mutex_lock(&mmu);
    complete_locked(u, ms[u].enq);
    pthread_mutex_unlock(&mmu);
    /* g uses most of the pool and frees it: its kernel is not done */
    CHECK_OK(alloc_use(mr, &x, 14 * MiB, g));
    CHECK(free_ok(mr, x, 14 * MiB, g));
    /* f's request only g's free block serves: f waits for g, and takes it into its lists */
    CHECK_OK(alloc_use(mr, &y, 3 * MiB, f));
    CHECK(y != NULL && (char *)y >= (char *)x && (char *)y < (char *)x + 14 * MiB);
    destroy(f);
    h = foreign();
    printf("  the new stream %s the destroyed stream's handle\n", h == f ? "got" : "did not get");
    for (i = 0; i < 8; i++) { /* sizes neither quick lists nor recent slots hold */
        if (alloc_use(mr, &q[i], (size_t)(i + 1) * 256 * KiB + 4096, h) != RMM_SUCCESS) break;
        n++;
    }
    CHECK(n > 0);
    CHECK(violations == before);
    model_reset();
    for (i = 0; i < n; i++) CHECK(free_ok(mr, q[i], (i + 1) * 256 * KiB + 4096, h));
    CHECK(free_ok(mr, y, 3 * MiB, h));
    CHECK_OK(rmm_pool_validate(mr));
    rmm_resource_destroy(mr);
    destroy(g);
    destroy(h);
}

/* A pool over a pool: memory a foreign stream f freed to the lower pool while its kernel still runs
   comes to the upper pool's state for f by growth on f; f is destroyed and a new stream with its
   handle allocates from the upper pool inside the id-less run. The upper pool's lists hold that
   memory as covered by f's next record only (rmm__pool_add_chunk), never by one seen complete.
   Fails without that (a review's find, 2026-11-29). */
TEST(growth_then_handle_reuse_waits_for_the_old_stream) {
    rmm_resource *lower = NULL, *upper = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_stream f = foreign(), h;
    void *big = NULL, *x = NULL, *a = NULL, *q = NULL;
    long before = violations;
    where = "pool over a pool: growth, then handle reuse";
    CHECK_OK(rmm_pool_create(&lower, rmm_get_current_device_resource(), NULL));
    d.initial_bytes = 0;
    CHECK_OK(rmm_pool_create(&upper, lower, &d));
    if (!lower || !upper) return;
    CHECK_OK(alloc_use(upper, &big, 4 * MiB, RMM_STREAM_DEFAULT)); /* (kept) */
    CHECK_OK(alloc_use(lower, &x, 16 * MiB, f));                   /* f's kernel, not done */
    CHECK(free_ok(lower, x, 16 * MiB, f));
    CHECK_OK(alloc_use(upper, &a, 256 * KiB, f)); /* the upper pool grows on f: x's memory */
    CHECK(a && (char *)a >= (char *)x && (char *)a < (char *)x + 16 * MiB); /* (else the test tests nothing) */
    destroy(f);
    h = foreign();
    printf("  the new stream %s the destroyed stream's handle\n", h == f ? "got" : "did not get");
    CHECK_OK(alloc_use(upper, &q, 512 * KiB, h));
    CHECK(violations == before);
    model_reset();
    if (q) CHECK(free_ok(upper, q, 512 * KiB, h));
    if (a) CHECK(free_ok(upper, a, 256 * KiB, h));
    if (big) CHECK(free_ok(upper, big, 4 * MiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(upper);
    rmm_resource_destroy(lower);
    destroy(h);
}

/* An id query that fails on a new foreign stream y must not leave this thread's hint naming y with
   the key of the stream it asked before (x): a free on y that trusted it went to x's ring, and x
   took the block back while y's kernel still used it (a review's find, 2026-11-29, present since
   the hint was kept per thread). */
TEST(a_failed_id_query_sends_no_free_to_another_streams_ring) {
    rmm_resource *mr = NULL;
    rmm_stream x = foreign(), y = foreign();
    void *p = NULL, *q = NULL, *r = NULL;
    int i;
    long before = violations;
    where = "a failed id query";
    CHECK_OK(rmm_pool_create(&mr, rmm_get_current_device_resource(), NULL));
    if (!mr) return;
    for (i = 0; i < RMM__POOL_RING_AFTER + 2; i++) { /* x earns its ring */
        CHECK_OK(alloc_use(mr, &p, 256, x));
        CHECK(free_ok(mr, p, 256, x));
    }
    CHECK_OK(alloc_use(mr, &p, 128 * KiB, x));
    user_wait(y, x);
    chk_use(p, 128 * KiB, y); /* y's kernel on x's block, not done */
    rmm_host_backend_fail_calls("cudaStreamGetId", 1, 1, RMM_ERROR_CUDA);
    CHECK_STATUS(rmm_allocate(mr, &r, 256, y), RMM_ERROR_CUDA);
    rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
    CHECK(free_ok(mr, p, 128 * KiB, y)); /* freed on y, where it was used last */
    CHECK_OK(alloc_use(mr, &q, 128 * KiB, x));
    CHECK(violations == before);
    model_reset();
    if (q) CHECK(free_ok(mr, q, 128 * KiB, x));
    rmm_resource_destroy(mr);
    destroy(x);
    destroy(y);
}

/* A "nowait" allocation (rmm_allocate_nowait) makes no CUDA call beyond a foreign stream's id, even
   when the state it makes for a new stream brings the sweep of the pool's states: the sweep then
   asks no event (a review's find, 2026-11-29: 30 event queries in one such call). */
TEST(a_nowait_call_when_a_sweep_is_due_is_refused_and_makes_no_cuda_call) {
    rmm_resource *mr = NULL;
    rmm_stream st[31], n;
    void *ps[31], *p = NULL;
    unsigned long queries, records, waits, syncs;
    size_t states;
    bool wb = false;
    int i;
    CHECK_OK(rmm_pool_create(&mr, rmm_get_current_device_resource(), NULL));
    if (!mr) return;
    for (i = 0; i < 31; i++) {
        st[i] = foreign();
        CHECK_OK(alloc_use(mr, &ps[i], 4096, st[i]));
    }
    for (i = 0; i < 31; i++) CHECK(free_ok(mr, ps[i], 4096, st[i]));
    n = foreign();
    states = ((rmm__pool *)mr)->so.count;
    CHECK(states + 1 >= ((rmm__pool *)mr)->so.sweep_at); /* (the next state brings a sweep: else the test tests nothing) */
    queries = m_queries, records = m_records, waits = m_waits, syncs = m_syncs;
    rmm_set_last_error(RMM_ERROR_INVALID_ARGUMENT, "mark");
    CHECK_OK(rmm_allocate_nowait(mr, &p, 4096, n, &wb));
    printf("  during the call: %lu event queries, %lu records, %lu waits, %lu synchronizes; %zu states before, %zu after\n", m_queries - queries,
           m_records - records, m_waits - waits, m_syncs - syncs, states, ((rmm__pool *)mr)->so.count);
    CHECK(m_queries == queries && m_records == records && m_waits == waits && m_syncs == syncs);
    /* refused (since red team 33: the sweep it ran could settle nothing): nothing made, no failure left */
    CHECK(wb && p == NULL && ((rmm__pool *)mr)->so.count == states && strcmp(rmm_last_error(), "mark") == 0);
    CHECK_OK(rmm_allocate(mr, &p, 4096, n)); /* the ordinary call makes the state, and sweeps */
    CHECK(((rmm__pool *)mr)->so.sweep_at > 32); /* (the sweep ran: its mark doubled) */
    if (p) CHECK_OK(rmm_deallocate(mr, p, 4096, n));
    model_reset();
    rmm_resource_destroy(mr);
    for (i = 0; i < 31; i++) destroy(st[i]);
    destroy(n);
}

/* rmm_pool_trim drops a gone foreign stream's state in the call, its work still pending when the
   trim starts: the sweep comes after the trim's own waits (red team 36: before, with no ring to
   synchronize for, the state stayed until a second trim, and a virtual pool kept that stream's free
   address space apart from the rest). */
TEST(trim_drops_a_gone_foreign_streams_state_at_once) {
    int kind;
    for (kind = POOL; kind <= POOL_VIRTUAL; kind++) {
        rmm_resource *mr = NULL, *pool = NULL;
        rmm_pool_info info;
        rmm_stream f;
        void *ps[8];
        size_t released = 0;
        int i;
        make(kind, &mr, &pool, 256 * MiB);
        if (!mr) continue;
        f = foreign();
        for (i = 0; i < 8; i++) CHECK_OK(alloc_use(mr, &ps[i], (size_t)(i + 1) * MiB, f));
        for (i = 0; i < 8; i++) CHECK(free_ok(mr, ps[i], (size_t)(i + 1) * MiB, f));
        destroy(f); /* (its work still pending) */
        CHECK_OK(rmm_pool_trim(mr, &released));
        CHECK_OK(rmm_pool_get_info(mr, &info));
        printf("  %s: %zu states, %zu free blocks after one trim (%zu bytes released)\n", kind_name[kind], info.stream_states, info.free_blocks, released);
        CHECK(info.stream_states == 1 && info.free_blocks <= 1);
        CHECK_OK(rmm_pool_validate(mr));
        model_reset();
        unmake(mr, pool);
    }
}

/* A stream destroyed with its work pending right after a ring's worth of frees; the next stream
   gets its handle and allocates at once (inside the id-less run the old one started). */
TEST(handle_reuse_after_many_frees_waits_for_the_old_stream) {
    static const int kinds[] = {POOL, BINNING, FIXED, ARENA};
    int ki;
    for (ki = 0; ki < 4; ki++) {
        rmm_resource *mr = NULL, *pool = NULL;
        rmm_stream s = foreign();
        size_t n = kinds[ki] == FIXED ? 64 * KiB : 256;
        int round, i;
        long before = violations;
        where = kind_name[kinds[ki]];
        make(kinds[ki], &mr, &pool, 64 * MiB);
        for (round = 0; round < 24 && mr; round++) {
            void *p[600], *q = NULL;
            int k = 1 + round * 37 % 600;
            for (i = 0; i < k; i++) CHECK_OK(alloc_use(mr, &p[i], n, s));
            for (i = 0; i < k; i++) CHECK(free_ok(mr, p[i], n, s));
            if (round % 3 == 0) progress((uint64_t)round * 7919);
            if (round % 5 == 1) { /* s done up to half its work */
                uint32_t u;
                pthread_mutex_lock(&mmu);
                u = uid_locked(s);
                complete_locked(u, ms[u].enq / 2);
                pthread_mutex_unlock(&mmu);
            }
            destroy(s);
            s = foreign();
            for (i = 0; i < 100; i++) {
                CHECK_OK(alloc_use(mr, &q, n, s));
                CHECK(free_ok(mr, q, n, s));
            }
        }
        CHECK(violations == before);
        model_reset();
        unmake(mr, pool);
        destroy(s);
    }
}

/* A random program per resource kind, on one thread. With `outlive` the resource is made with its
   streams promised to outlive it (make_ex), and the program keeps the promise: no stream is
   destroyed before the resource. Where it would destroy a stream and make another, it swaps the
   slot's stream for one of a reserve (foreign streams and some the library made), whose pending
   work stays, and the many streams that come and go are taken from that reserve, so a stream often
   comes back to memory it freed long ago, which others may have taken meanwhile; the last slot is
   the per-thread default stream; and a block freed on another stream than its own is used there
   first (behind the user's order), so a free that hands it on must order others behind the freeing
   stream too (the arena's host synchronize). (A reserve, not new streams set aside: the pool never
   retires an outliving stream's state, and RMM_DEBUG validates every state on every call.) */
#define NS 8 /* stream slots: 0 the legacy default stream, 1 created by the library, 2.. foreign */
#define MAXLIVE 256
typedef struct blk {
    void *p;
    size_t n;
    int slot;
} blk;
static uint64_t rs;
static uint64_t rnd(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static size_t pick_size(int kind) {
    static const size_t small[] = {256, 512, 768, 1024, 4096, 8192, 65536, 65536 + 256};
    uint64_t r = rnd() % 100;
    if (kind == FIXED) return r < 80 ? 64 * KiB : (size_t)(rnd() % (64 * KiB)) + 1;
    if (r < 70) return small[rnd() % 8];
    if (r < 85) return (size_t)(rnd() % 65536) + 1;
    if (r < 97) return (size_t)(rnd() % (1 << 20)) + 65537;
    return (size_t)(rnd() % (4 << 20)) + 1;
}
#define NRES 12
static rmm_stream reserve[NRES];         /* (outlive) */
static rmm_stream lib_made[NRES / 3 + 1]; /* the reserve's streams made by rmm_stream_create */
static int nlib_made;
static void destroy_any(rmm_stream s) {
    int k;
    for (k = 0; k < nlib_made; k++)
        if (lib_made[k] == s) {
            CHECK_OK(rmm_stream_destroy(s));
            return;
        }
    destroy(s);
}
static void random_program(int kind, uint64_t seed, long ops, bool outlive) {
    rmm_resource *mr = NULL, *pool = NULL;
    rmm_stream S[NS];
    blk live[MAXLIVE];
    int nlive = 0, i, cur = 2, run = 0, behind = 0, nf = outlive ? NS - 3 : NS - 2; /* foreign slots: 2 .. 2 + nf - 1 */
    long op;
    rmm_status st;
    rs = seed * 2654435761u + 1;
    S[0] = RMM_STREAM_DEFAULT;
    CHECK_OK(rmm_stream_create(&S[1]));
    for (i = 2; i < 2 + nf; i++) S[i] = foreign();
    nlib_made = 0;
    if (outlive) {
        S[NS - 1] = RMM_STREAM_PER_THREAD;
        for (i = 0; i < NRES; i++) {
            if (i % 3) {
                reserve[i] = foreign();
            } else {
                CHECK_OK(rmm_stream_create(&reserve[i]));
                lib_made[nlib_made++] = reserve[i];
            }
        }
    }
    make_ex(kind, &mr, &pool, outlive && kind <= POOL_VIRTUAL ? 12 * MiB : 32 * MiB, outlive); /* (the shorter programs reach its end) */
    if (!mr) return;
/* slot i_'s stream is done with: destroyed and another made (often at its handle), or (outlive)
   swapped for one of the reserve */
#define REPLACE(i_)                            \
    do {                                       \
        if (!outlive) {                        \
            destroy(S[i_]);                    \
            S[i_] = foreign();                 \
        } else {                               \
            int k_ = (int)(rnd() % NRES);      \
            rmm_stream t_ = reserve[k_];       \
            reserve[k_] = S[i_];               \
            S[i_] = t_;                        \
        }                                      \
    } while (0)
#define FREE_BLOCK(i_, slot_)                                                          \
    do {                                                                               \
        int k_ = (i_), to_ = (slot_);                                                  \
        blk b_ = live[k_];                                                             \
        nlive--;                                                                       \
        live[k_] = live[nlive];                                                        \
        if (to_ != b_.slot) { /* the user orders the freeing stream after the uses */  \
            if (rnd() & 1) user_wait(S[to_], S[b_.slot]);                              \
            else CHECK_OK(rmm_stream_synchronize(S[b_.slot]));                         \
            chk_use(b_.p, b_.n, S[to_]); /* and uses it there too */                   \
        }                                                                              \
        CHECK(free_ok(mr, b_.p, b_.n, S[to_]));                                        \
    } while (0)
    for (op = 0; op < ops; op++) {
        uint64_t r = rnd() % 1000;
        if (run-- <= 0) {
            cur = (rnd() % 10) < 8 ? 2 + (int)(rnd() % (NS - 2)) : (int)(rnd() % 2);
            run = (int)(rnd() % 300);
        }
        if (op % 250 == 0) behind = (rnd() % 3) == 0; /* the device falls behind for a while */
        if (r < 420) {
            size_t n = pick_size(kind);
            void *p = NULL;
            if (nlive == MAXLIVE) {
                FREE_BLOCK((int)(rnd() % (uint64_t)nlive), live[0].slot);
                continue;
            }
            st = alloc_use(mr, &p, n, S[cur]);
            if (st == RMM_ERROR_OUT_OF_MEMORY) {
                if (nlive) FREE_BLOCK((int)(rnd() % (uint64_t)nlive), cur);
                continue;
            }
            CHECK_OK(st);
            if (st != RMM_SUCCESS) break;
            live[nlive].p = p;
            live[nlive].n = n;
            live[nlive].slot = cur;
            nlive++;
        } else if (r < 800) {
            if (nlive) {
                int k = (int)(rnd() % (uint64_t)nlive);
                FREE_BLOCK(k, (rnd() % 20) ? live[k].slot : (int)(rnd() % NS));
            }
        } else if (r < 850) {
            if (nlive) {
                int k = (int)(rnd() % (uint64_t)nlive);
                chk_use(live[k].p, live[k].n, S[live[k].slot]);
            }
        } else if (r < 940) {
            if (!behind) {
                progress(rnd());
                progress(rnd());
                progress(rnd());
            }
        } else if (r < 955) {
            if (!behind) {
                CHECK_OK(rmm_stream_synchronize(S[rnd() % NS]));
            } else if (nlive && cur >= 2 && cur < 2 + nf && (rnd() & 3) == 0) { /* the current stream destroyed inside its run */
                user_wait(S[1], S[cur]);
                for (i = 0; i < nlive; i++)
                    if (live[i].slot == cur) live[i].slot = 1;
                REPLACE(cur);
            }
        } else if (r < 958) {
            if (!behind) complete_all();
        } else if (r < 975) { /* a foreign stream destroyed with work pending; another (often at its handle) */
            int s = 2 + (int)(rnd() % (uint64_t)nf), o = 2 + (int)(rnd() % (uint64_t)nf);
            if (o == s) o = 1;
            user_wait(S[o], S[s]);
            for (i = 0; i < nlive; i++)
                if (live[i].slot == s) live[i].slot = o;
            REPLACE(s);
            if (rnd() & 1) {
                cur = s;
                run = 200;
            }
            if (rnd() % 4 == 0) { /* many streams come and go (the sweeps) */
                int k;
                for (k = 0; k < 40; k++) {
                    rmm_stream t = outlive ? reserve[rnd() % NRES] : foreign();
                    void *p = NULL;
                    size_t n = pick_size(kind);
                    if (alloc_use(mr, &p, n, t) == RMM_SUCCESS && p) CHECK(free_ok(mr, p, n, t));
                    if (!outlive) destroy(t);
                }
            }
        } else if (r < 980) {
            size_t released;
            if (pool && (rnd() % 4) == 0) CHECK_OK(rmm_pool_trim(pool, &released));
        } else if (r < 990) { /* a burst of one size on the current stream (rings, id-less runs) */
            int k;
            size_t n = kind == FIXED ? 64 * KiB : 256 * (size_t)(1 + rnd() % 4);
            for (k = 0; k < 300; k++) {
                void *p = NULL;
                if (alloc_use(mr, &p, n, S[cur]) == RMM_SUCCESS && p) CHECK(free_ok(mr, p, n, S[cur]));
                if (!behind && (rnd() % 50) == 0) progress(rnd());
            }
        } else {
            CHECK_OK(rmm_resource_validate(mr));
        }
    }
    while (nlive) FREE_BLOCK(nlive - 1, live[nlive - 1].slot);
#undef FREE_BLOCK
#undef REPLACE
    model_reset();
    unmake(mr, pool); /* (outlive: every stream it saw is still alive here) */
    CHECK_OK(rmm_stream_destroy(S[1]));
    for (i = 2; i < 2 + nf; i++) destroy_any(S[i]);
    if (outlive)
        for (i = 0; i < NRES; i++) destroy_any(reserve[i]);
}
/* One seed per kind; `make test-long` (RMM_TEST_LONG=1) runs ten. */
TEST(random_programs_on_every_kind_of_resource) {
    int kind, seed, seeds = getenv("RMM_TEST_LONG") && strcmp(getenv("RMM_TEST_LONG"), "1") == 0 ? 10 : 1;
    long before = violations;
    for (kind = 0; kind < KINDS; kind++) {
        long v = violations;
        where = kind_name[kind];
        for (seed = 0; seed < seeds; seed++) random_program(kind, 7 + (uint64_t)kind + 1000 * (uint64_t)seed, 5000, false);
        printf("  %s: %d program%s, %s\n", kind_name[kind], seeds, seeds > 1 ? "s" : "", violations == v ? "no early hand-over" : "EARLY HAND-OVER");
    }
    CHECK(violations == before);
}
/* The same programs with the streams promised to outlive the resource (streams_outlive_pool,
   streams_outlive_arena; binning and the fixed-size resource over such a pool): every stream's
   frees are then lazy (no CUDA call; the event that orders another stream behind them is recorded
   only when that stream takes the memory), and foreign streams are found by handle, their ids never
   asked. Foreign, created, legacy and per-thread default streams; streams set aside (not destroyed)
   swapped out (not destroyed) with work pending, the device behind, trims, out of memory. No
   stream is destroyed while the resource lives. The pools' programs are shorter: an outliving
   stream's state is never retired, and under RMM_DEBUG the pool validates every state's lists on
   every call (about 2 s per 1000 steps under ASan on two cores; the case takes about 8 s). One seed
   per kind; `make test-long` runs ten. */
TEST(random_programs_with_streams_that_outlive_the_resource) {
    int kind, seed, seeds = getenv("RMM_TEST_LONG") && strcmp(getenv("RMM_TEST_LONG"), "1") == 0 ? 10 : 1;
    long before = violations;
    for (kind = 0; kind < KINDS; kind++) {
        long v = violations, ops = kind <= POOL_VIRTUAL ? 1200 : 5000;
        where = outlive_name[kind];
        for (seed = 0; seed < seeds; seed++) random_program(kind, 11 + (uint64_t)kind + 1000 * (uint64_t)seed, ops, true);
        printf("  %s: %d program%s, %s\n", outlive_name[kind], seeds, seeds > 1 ? "s" : "", violations == v ? "no early hand-over" : "EARLY HAND-OVER");
    }
    CHECK(violations == before);
}

/* Three threads: 0 and 1 share a foreign stream besides their own two, which each thread destroys
   (with work pending) and makes again, so handles move between threads. */
typedef struct targ {
    int id, kind;
    uint64_t rs;
    rmm_resource *mr, *pool;
    rmm_stream own[2];
    blk live[128];
    int n, failures;
} targ;
static rmm_stream shared;
static pthread_mutex_t streams_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t trnd(targ *t) {
    t->rs ^= t->rs << 13;
    t->rs ^= t->rs >> 7;
    t->rs ^= t->rs << 17;
    return t->rs;
}
static void *thread_program(void *arg) {
    targ *t = (targ *)arg;
    static const size_t small[] = {256, 512, 1024, 4096, 65536};
    long op;
    int i;
    for (i = 0; i < 2; i++) {
        pthread_mutex_lock(&streams_mu);
        t->own[i] = foreign();
        pthread_mutex_unlock(&streams_mu);
    }
    for (op = 0; op < 4000; op++) {
        uint64_t r = trnd(t) % 100;
        int slot = (t->id < 2 && (trnd(t) & 1)) ? 2 : (int)(trnd(t) % 2);
        rmm_stream st_of_slot = slot < 2 ? t->own[slot] : shared;
        if (r < 45 && t->n < 128) {
            void *p = NULL;
            size_t n = t->kind == FIXED ? 64 * KiB : (trnd(t) % 10) < 8 ? small[trnd(t) % 5] : (size_t)(trnd(t) % 300000) + 1;
            rmm_status st = alloc_use(t->mr, &p, n, st_of_slot);
            if (st == RMM_SUCCESS) {
                t->live[t->n].p = p;
                t->live[t->n].n = n;
                t->live[t->n].slot = slot;
                t->n++;
            } else if (st != RMM_ERROR_OUT_OF_MEMORY) {
                t->failures++;
            }
        } else if (r < 90 && t->n) {
            int k = (int)(trnd(t) % (uint64_t)t->n);
            blk b = t->live[k];
            t->live[k] = t->live[--t->n];
            if (!free_ok(t->mr, b.p, b.n, b.slot < 2 ? t->own[b.slot] : shared)) t->failures++;
        } else if (r < 96) {
            progress(trnd(t));
        } else if (r < 99) { /* one of my streams destroyed with work pending; its blocks go to my other one */
            int s = (int)(trnd(t) % 2), o = 1 - s;
            user_wait(t->own[o], t->own[s]);
            for (i = 0; i < t->n; i++)
                if (t->live[i].slot == s) t->live[i].slot = o;
            pthread_mutex_lock(&streams_mu);
            destroy(t->own[s]);
            t->own[s] = foreign();
            pthread_mutex_unlock(&streams_mu);
        } else if (t->pool && (trnd(t) % 8) == 0) {
            size_t released;
            if (rmm_pool_trim(t->pool, &released) != RMM_SUCCESS) t->failures++;
        }
    }
    while (t->n) {
        blk b = t->live[--t->n];
        if (!free_ok(t->mr, b.p, b.n, b.slot < 2 ? t->own[b.slot] : shared)) t->failures++;
    }
    return NULL;
}
/* One round per kind; `make test-long` runs five. */
/* rmm_record_stream: a block used on a recorded stream too, freed on its own. Each sub-allocator
   must give it to no stream before the recorded stream's work up to the free is done: recorded as
   the per-thread default stream of another thread (freed on a created stream, and on the freeing
   thread's per-thread stream), recorded through the pool under the adaptor it was allocated through
   (and the other way round), and a library stream recorded and destroyed before the free with its
   work pending (red team 19). */
typedef struct record_thread_arg {
    rmm_resource *rec;
    void *p;
    size_t n;
    pthread_barrier_t *bar;
} record_thread_arg;
static void *record_on_own_stream(void *arg) {
    record_thread_arg *a = (record_thread_arg *)arg;
    chk_use(a->p, a->n, RMM_STREAM_PER_THREAD); /* this thread's kernel, not done */
    CHECK_OK(rmm_record_stream(a->rec, a->p, a->n, RMM_STREAM_PER_THREAD));
    pthread_barrier_wait(a->bar);
    pthread_barrier_wait(a->bar); /* (alive while the block is freed and taken again) */
    return NULL;
}
TEST(record_stream_orders_every_recorded_stream) {
    static const int kinds[] = {POOL, BINNING, FIXED, ARENA};
    long before = violations;
    size_t k;
    int c;
    for (k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        for (c = 0; c < 5; c++) {
            rmm_resource *mr = NULL, *pool = NULL, *st = NULL, *use, *rec;
            rmm_stream x = NULL, lib = NULL, on;
            void *p = NULL, *q = NULL;
            const size_t n = 4096;
            where = c < 2 ? "record_stream: another thread's per-thread stream" : c < 4 ? "record_stream: through another resource of the chain" : "record_stream: a destroyed library stream";
            make(kinds[k], &mr, &pool, 32 * MiB);
            if (!mr) continue;
            CHECK_OK(rmm_statistics_adaptor_create(&st, mr));
            CHECK_OK(rmm_stream_create(&x));
            on = c == 1 ? RMM_STREAM_PER_THREAD : x;
            use = c == 2 ? st : mr;
            rec = c == 2 ? mr : c == 3 ? st : mr;
            CHECK_OK(alloc_use(use, &p, n, on));
            if (c < 2) {
                pthread_barrier_t bar;
                pthread_t t;
                record_thread_arg a;
                a.rec = rec, a.p = p, a.n = n, a.bar = &bar;
                pthread_barrier_init(&bar, NULL, 2);
                CHECK(pthread_create(&t, NULL, record_on_own_stream, &a) == 0);
                pthread_barrier_wait(&bar);
                CHECK(free_ok(use, p, n, on));
                CHECK_OK(alloc_use(use, &q, n, on)); /* on's own memory back at once: behind the other thread's kernel */
                pthread_barrier_wait(&bar);
                pthread_join(t, NULL);
                pthread_barrier_destroy(&bar);
            } else {
                rmm_stream r = c == 4 ? NULL : foreign();
                if (c == 4) CHECK_OK(rmm_stream_create(&lib));
                chk_use(p, n, c == 4 ? lib : r); /* used on the recorded stream, not done */
                CHECK_OK(rmm_record_stream(rec, p, n, c == 4 ? lib : r));
                if (c == 4) CHECK_OK(rmm_stream_destroy(lib)); /* its work goes on */
                CHECK(free_ok(use, p, n, on));
                CHECK_OK(alloc_use(use, &q, n, on));
                if (r) {
                    model_reset();
                    destroy(r);
                }
            }
            model_reset();
            CHECK(q == NULL || free_ok(use, q, n, on));
            rmm_resource_destroy(st);
            unmake(mr, pool);
            CHECK_OK(rmm_stream_destroy(x));
        }
    }
    printf("  %s\n", violations == before ? "no early hand-over" : "EARLY HAND-OVER");
    CHECK(violations == before);
}

TEST(three_threads_with_shared_and_reused_streams) {
    int kind, i, round, rounds = getenv("RMM_TEST_LONG") && strcmp(getenv("RMM_TEST_LONG"), "1") == 0 ? 5 : 1;
    long before = violations;
    for (round = 0; round < rounds; round++)
    for (kind = 0; kind < KINDS; kind++) {
        rmm_resource *mr = NULL, *pool = NULL;
        pthread_t tid[3];
        targ ts[3];
        long v = violations;
        where = kind_name[kind];
        make(kind, &mr, &pool, 48 * MiB);
        if (!mr) continue;
        shared = foreign();
        for (i = 0; i < 3; i++) {
            memset(&ts[i], 0, sizeof ts[i]);
            ts[i].id = i;
            ts[i].kind = kind;
            ts[i].rs = 7919u * (uint64_t)(kind + 1) + 104729u * (uint64_t)i + 1 + 1000003u * (uint64_t)round;
            ts[i].mr = mr;
            ts[i].pool = pool;
            CHECK(pthread_create(&tid[i], NULL, thread_program, &ts[i]) == 0);
        }
        for (i = 0; i < 3; i++) {
            pthread_join(tid[i], NULL);
            CHECK(ts[i].failures == 0);
        }
        model_reset();
        printf("  %s: %s\n", kind_name[kind], violations == v ? "no early hand-over" : "EARLY HAND-OVER");
        unmake(mr, pool);
        for (i = 0; i < 3; i++) {
            destroy(ts[i].own[0]);
            destroy(ts[i].own[1]);
        }
        destroy(shared);
    }
    CHECK(violations == before);
}

/* Threads allocate and free on their per-thread default streams (cudaStreamPerThread: each thread's
   own stream), some blocks handed to the main thread, which frees them on its own default stream
   after waiting for the thread's (the user's event); the threads exit with their work pending, and
   the main thread's allocations take their memory only behind it. */
typedef struct ptarg {
    rmm_resource *mr;
    void *handed[8];
    size_t handed_bytes;
    int failures;
    unsigned seed;
} ptarg;
static void *per_thread_program(void *arg) {
    ptarg *a = (ptarg *)arg;
    void *p[64];
    size_t n = a->handed_bytes;
    int round, i;
    for (round = 0; round < 30; round++) {
        for (i = 0; i < 64; i++)
            if (alloc_use(a->mr, &p[i], n, RMM_STREAM_PER_THREAD) != RMM_SUCCESS) a->failures++;
        for (i = 0; i < 64; i++)
            if (!free_ok(a->mr, p[i], n, RMM_STREAM_PER_THREAD)) a->failures++;
        if ((round & 3) == 0) progress(a->seed = a->seed * 1103515245u + 12345u);
    }
    for (i = 0; i < 8; i++) /* kept for the main thread */
        if (alloc_use(a->mr, &a->handed[i], n, RMM_STREAM_PER_THREAD) != RMM_SUCCESS) a->failures++;
    user_wait(RMM_STREAM_DEFAULT, RMM_STREAM_PER_THREAD); /* the user's event: main's stream after this thread's */
    return NULL;
}
TEST(per_thread_default_streams_of_threads_that_exit) {
    static const int kinds[] = {POOL, BINNING, FIXED, ARENA};
    int ki, i, k;
    long before = violations;
    for (ki = 0; ki < 4; ki++) {
        rmm_resource *mr = NULL, *pool = NULL;
        pthread_t tid[4];
        ptarg ta[4];
        size_t n = kinds[ki] == FIXED ? 64 * KiB : 4096;
        where = kind_name[kinds[ki]];
        make(kinds[ki], &mr, &pool, 64 * MiB);
        if (!mr) continue;
        for (i = 0; i < 4; i++) {
            memset(&ta[i], 0, sizeof ta[i]);
            ta[i].mr = mr;
            ta[i].handed_bytes = n;
            ta[i].seed = 17u * (unsigned)(i + 1);
            CHECK(pthread_create(&tid[i], NULL, per_thread_program, &ta[i]) == 0);
        }
        for (i = 0; i < 4; i++) {
            pthread_join(tid[i], NULL); /* its stream's work still pending */
            CHECK(ta[i].failures == 0);
            for (k = 0; k < 8; k++) CHECK(free_ok(mr, ta[i].handed[k], n, RMM_STREAM_DEFAULT));
        }
        for (k = 0; k < 200; k++) { /* the main thread takes the exited threads' memory */
            void *q = NULL;
            CHECK_OK(alloc_use(mr, &q, n, k & 1 ? RMM_STREAM_DEFAULT : RMM_STREAM_PER_THREAD));
            CHECK(free_ok(mr, q, n, k & 1 ? RMM_STREAM_DEFAULT : RMM_STREAM_PER_THREAD));
        }
        model_reset();
        unmake(mr, pool);
    }
    CHECK(violations == before);
}
#endif /* !STREAM_ORDER_MODEL_ONLY */
#endif

#if !defined(STREAM_ORDER_MODEL_ONLY)
int main(void) {
    HARNESS_INIT();
#if defined(RMM_BACKEND_HOST)
    rmm_host_backend_set_capacity((size_t)2 << 30);
    rmm_host_backend_set_stream_model(&model);
    rmm_set_log_level(RMM_LOG_LEVEL_OFF); /* (out-of-memory warnings are expected) */
    RUN(the_checker_catches_a_resource_that_ignores_stream_order);
    RUN(growth_from_a_pool_on_one_stream_is_ordered_for_others);
    RUN(handle_reuse_after_many_frees_waits_for_the_old_stream);
    RUN(handle_reuse_after_a_refill_waits_for_the_donor);
    RUN(growth_then_handle_reuse_waits_for_the_old_stream);
    RUN(a_failed_id_query_sends_no_free_to_another_streams_ring);
    RUN(trim_drops_a_gone_foreign_streams_state_at_once);
    RUN(a_nowait_call_when_a_sweep_is_due_is_refused_and_makes_no_cuda_call);
    RUN(random_programs_on_every_kind_of_resource);
    RUN(random_programs_with_streams_that_outlive_the_resource);
    RUN(record_stream_orders_every_recorded_stream);
    RUN(three_threads_with_shared_and_reused_streams);
    RUN(per_thread_default_streams_of_threads_that_exit);
    printf("  %ld allocations checked; the model saw %lu event records, %lu queries (%lu not done), %lu waits, %lu synchronizes\n", checks, m_records,
           m_queries, m_queries_no, m_waits, m_syncs);
#else
    printf("the stream-order model needs the host backend (RMM_BACKEND_HOST): every case skipped\n");
    harness_skipped = 12;
#endif
    return harness_main_end();
}
#endif /* !STREAM_ORDER_MODEL_ONLY */
