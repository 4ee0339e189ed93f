/* bench/random_allocations.c - how fast rmm.h's allocators allocate and free, next to CUDA's own.

   One process measures every allocator on every workload, prints a table for people and a block of
   `csv,` lines for machines. Each (workload, allocator) pair gets a fresh allocator; the number
   reported is the median over the repetitions of the timed part.

   Allocators (--resource NAME[,NAME...]):
     cudaMalloc       raw cudaMalloc / cudaFree.
     cudaMallocAsync  raw cudaMallocAsync / cudaFreeAsync on the device's default memory pool, with
                      cudaMemPoolAttrReleaseThreshold = UINT64_MAX (the pool keeps what it got); the
                      pool is trimmed between allocators (untimed) so it does not hold memory the
                      others need.
     pool             rmm_pool_create over rmm_cuda_resource, RMM_POOL_GROWTH_GEOMETRIC, initial_bytes
                      large enough for the workload (at least 1 GiB).
     arena(outlive)   the arena with streams_outlive_arena = true (threads16 only): per-stream arenas
                      are found by handle, without a cudaStreamGetId call per allocate and free.
     pool(outlive)    the same pool with streams_outlive_pool = true. threads16 only: on the default
                      stream the pool is already lazy, so the flag changes nothing there.
     binning          rmm_binning_create with bins 2^18 .. 2^22 (RMM's own benchmark setup) over such
                      a pool; smaller requests go to the 256 KiB bin, larger ones to the pool.
     arena            rmm_arena_create over rmm_cuda_resource, arena_bytes sized to the workload (at
                      least 8 GiB on a GPU, 512 MiB on the host backend).
     fixed            rmm_fixed_size_create with 1 MiB blocks over rmm_cuda_resource; only on workloads
                      whose sizes all fit in one block.
   rmm resources are called through rmm_allocate / rmm_deallocate only. On the host backend (no GPU)
   the two raw baselines are replaced by rmm's own "cuda" and "async" resources (posix_memalign
   underneath); the header says so.

   Workloads (--workload NAME[,NAME...]; a name also selects every workload it is a prefix of):
     lifo_256B     allocate one 256 B block and free it at once, repeated (after a short warmup).
     lifo_1MiB     the same with 1 MiB.
     churn_small   1000 live blocks (allocated first, untimed); each step frees a random one and
                   allocates a log-uniform size in [256 B, 64 KiB] in its place.
     churn_mixed   the same with sizes in [256 B, 64 MiB] ([256 B, 1 MiB] on the host backend, whose
                   simulated device has 4 GiB).
     threads16     16 threads, each on its own stream (rmm_stream_create; with --stream foreign one from
                   cudaStreamCreateWithFlags), each keeping 100 live
                   blocks of log-uniform sizes in [256 B, 1 MiB]; each step frees a random block of
                   its own and allocates another. ns_per_pair = wall time / pairs of all threads.
                   Raw cudaMallocAsync uses each thread's stream. --threads N (1-64) runs it with N
                   threads instead, named threadsN (each thread's steps as with 16): how one
                   allocator's aggregate cost moves with the number of threads.
     rmm_random_NxS  RMM's benchmarks/random_allocations: 2N steps; once something is live, 73 % of
                   steps allocate (if fewer than N allocations were made so far and live bytes +
                   size stay below the budget) and the others free a uniformly random live block;
                   sizes uniform in [1 B, S MiB]; a failed allocation becomes a free. The whole run
                   (and freeing what is left) is timed, as RMM reports it: total_ms, and ns per
                   operation. N x S: 1000x1, 1000x4, 10000x1, 1000x64. Budget: min(16000 MiB, a
                   quarter of the device memory).
   Single-threaded workloads run on one stream: the default stream (RMM_STREAM_DEFAULT), or with
   --stream created a stream from rmm_stream_create (what a program with streams of its own uses:
   the library sees its life, so it costs no driver call), or with --stream foreign one made by
   cudaStreamCreateWithFlags directly (the safe, slower path: cudaStreamGetId per call and an event
   per free). Every timed region
   ends with a synchronize of the stream(s) used. All random choices come from a seeded splitmix64
   and are drawn before timing, so every allocator sees the same sequence.

   Repetitions: 5 (cudaMalloc: 3); each repetition of a step loop stops early after 2 s (cudaMalloc:
   0.25 s), so slow allocators are measured on fewer steps rather than taking minutes. An allocation
   that fails with out-of-memory (or any other error) skips that (workload, allocator) pair with a
   note; nothing aborts.

   Options: --quick (10x fewer steps in the step loops, 3 repetitions; rmm_random keeps RMM's N),
            --stream default|created|foreign,
            --workload NAME, --resource NAME, --reps N,
            --lag (CUDA only: a host function that waits blocks each timed stream until its timed
            loop is over, so the device runs behind the host as in a program whose kernels keep
            it busy: no event recorded in the loop completes before the loop ends; the closing
            synchronize, after the release, stays in the time).
   Run:     make bench && build/bench/random_allocations          (CUDA: about 30 s on an H100)
            build/bench/host/random_allocations --quick            (host backend: about 1 s; 5 s full)
   Progress goes to stderr; results to stdout.

   Output: "# " header lines (machine, versions, date, settings), the table
       workload  resource  ns_per_pair  ratio_vs_cudaMallocAsync  extra
   (ratio > 1 is slower than cudaMallocAsync), then lines starting with "csv,". */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "bench_common.h"
#include "peer/peer_resource.h"

#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ERRLEN 320


/* ---- time and random numbers ------------------------------------------------------------ */


typedef struct rng {
    uint64_t s;
} rng;
static uint64_t rng_next(rng *r) { /* splitmix64 */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }
/* A size whose logarithm is uniform in [log lo, log hi]. */
static size_t rng_log_uniform(rng *r, size_t lo, size_t hi) {
    double l = log((double)lo), h = log((double)hi);
    size_t s = (size_t)exp(l + (h - l) * rng_unit(r));
    return s < lo ? lo : s > hi ? hi : s;
}
static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}
static double log_uniform_mean(size_t lo, size_t hi) {
    return lo == hi ? (double)lo : ((double)hi - (double)lo) / log((double)hi / (double)lo);
}

/* ---- allocators ------------------------------------------------------------------------- */

enum { OK = 0, OOM = 1, FAIL = 2 };
typedef enum alloc_kind { RAW_MALLOC, RAW_ASYNC, VIA_RMM } alloc_kind;
typedef struct allocator {
    const char *name;
    alloc_kind kind;
    rmm_resource *mr;         /* VIA_RMM: what rmm_allocate is called on */
    rmm_resource *layers[4];  /* owned resources, top first: destroyed in this order */
    int nlayers;
} allocator;

/* The allocators in the order they are printed. */
static const char *const ALLOCATORS[] = {"cudaMalloc", "cudaMallocAsync", "pool", "pool(outlive)", "binning", "arena", "arena(outlive)", "fixed" PEER_NAMES};
#define NALLOC ((int)(sizeof ALLOCATORS / sizeof ALLOCATORS[0]))
#define IDX_ASYNC 1

/* Allocates; OK, OOM or FAIL. On failure writes a message into err when err is not NULL (always
   for FAIL, which uses the scratch buffer when err is NULL). */
static rmm_stream g_stream = RMM_STREAM_DEFAULT; /* the single-threaded workloads' stream (--stream) */
static const char *g_stream_kind = "default";
static inline int do_alloc(const allocator *a, void **p, size_t bytes, rmm_stream s, char *err) {
    rmm_status st;
#ifndef RMM_BACKEND_HOST
    if (a->kind != VIA_RMM) {
        cudaError_t e = a->kind == RAW_MALLOC ? cudaMalloc(p, bytes) : cudaMallocAsync(p, bytes, s);
        if (e == cudaSuccess) return OK;
        (void)cudaGetLastError();
        *p = NULL;
        if (err) fmt(err, ERRLEN, "%s(%zu) failed: %s", a->kind == RAW_MALLOC ? "cudaMalloc" : "cudaMallocAsync", bytes, cudaGetErrorString(e));
        return e == cudaErrorMemoryAllocation ? OOM : FAIL;
    }
#endif
    st = rmm_allocate(a->mr, p, bytes, s);
    if (st == RMM_SUCCESS) return OK;
    if (err) fmt(err, ERRLEN, "rmm_allocate(%zu) failed: %s", bytes, rmm_last_error());
    return st == RMM_ERROR_OUT_OF_MEMORY ? OOM : FAIL;
}
static inline int do_free(const allocator *a, void *p, size_t bytes, rmm_stream s, char *err) {
    rmm_status st;
#ifndef RMM_BACKEND_HOST
    if (a->kind != VIA_RMM) {
        cudaError_t e = a->kind == RAW_MALLOC ? cudaFree(p) : cudaFreeAsync(p, s);
        if (e == cudaSuccess) return OK;
        (void)cudaGetLastError();
        if (err) fmt(err, ERRLEN, "%s(%p) failed: %s", a->kind == RAW_MALLOC ? "cudaFree" : "cudaFreeAsync", p, cudaGetErrorString(e));
        return FAIL;
    }
#endif
    st = rmm_deallocate(a->mr, p, bytes, s);
    if (st == RMM_SUCCESS) return OK;
    if (err) fmt(err, ERRLEN, "rmm_deallocate(%p, %zu) failed: %s", p, bytes, rmm_last_error());
    return FAIL;
}
static int do_sync(rmm_stream s, char *err) {
    rmm_status st = rmm_stream_synchronize(s);
    if (st == RMM_SUCCESS) return OK;
    fmt(err, ERRLEN, "stream synchronize failed: %s", rmm_last_error());
    return FAIL;
}

/* --lag: the stream stays blocked behind a host function until lag_release (see the options), or
   for LAG_MAX_NS at most: an allocator that waits for its stream inside the loop (a free that
   synchronizes, or waits for another stream that is held) would wait for the release forever. Such
   a run is reported as not measured. */
static int g_lag;
static int g_threads = 16; /* --threads: the threads workload's thread count */
#define LAG_MAX_NS 10000000000ull /* (above a repetition's cap of 2 s, with room for threads16's start barrier) */
typedef struct lag {
    int released;
    int gave_up; /* the host function stopped waiting at LAG_MAX_NS: the loop waited for its stream */
} lag;
#ifndef RMM_BACKEND_HOST
static void CUDART_CB lag_wait(void *arg) {
    lag *l = (lag *)arg;
    uint64_t until = now_ns() + LAG_MAX_NS;
    while (!__atomic_load_n(&l->released, __ATOMIC_ACQUIRE)) {
        if (now_ns() > until) {
            __atomic_store_n(&l->gave_up, 1, __ATOMIC_RELEASE);
            break;
        }
        sched_yield(); /* (not a sleep: its wake-up, tens of us, would land in the timed synchronize) */
    }
}
#endif
/* After the loop: FAIL (with a note in err) if the allocator waited for the lagging stream. */
static int lag_check(lag *l, char *err) {
    if (!__atomic_load_n(&l->gave_up, __ATOMIC_ACQUIRE)) return OK;
    fmt(err, ERRLEN, "not measured with --lag: the allocator waited for a stream inside the loop (its own or another's: a free or allocation that synchronizes)");
    return FAIL;
}
/* Blocks s until lag_release(l) when --lag is on. */
static int lag_hold(lag *l, rmm_stream s, char *err) {
    l->released = 1;
    l->gave_up = 0;
    if (!g_lag) return OK;
#ifndef RMM_BACKEND_HOST
    l->released = 0;
    if (cudaLaunchHostFunc((cudaStream_t)s, lag_wait, l) != cudaSuccess) {
        (void)cudaGetLastError();
        l->released = 1;
        fmt(err, ERRLEN, "cudaLaunchHostFunc failed (--lag)");
        return FAIL;
    }
#else
    (void)s;
    (void)err;
#endif
    return OK;
}
static void lag_release(lag *l) { __atomic_store_n(&l->released, 1, __ATOMIC_RELEASE); }
/* The host function reads its lag after the loop's function may have returned (an error path that
   does not synchronize, or a stream left broken), so lags live in static storage: one for the
   single-threaded workloads, one per thread of threads16. */
static lag g_lag_single, g_lag_threads[64];

/* ---- workloads -------------------------------------------------------------------------- */

typedef enum wtype { W_LIFO, W_CHURN, W_THREADS, W_RANDOM } wtype;
typedef struct workload {
    char name[32];
    wtype type;
    size_t lo, hi;       /* sizes in bytes (random: 1 .. max) */
    size_t live;         /* churn: live blocks; threads: live blocks per thread; random: N */
    size_t steps;        /* timed steps per repetition (threads: per thread; random: 2N) */
    int threads;
    size_t budget;       /* random: cap on live bytes */
    size_t live_bound;   /* bytes an allocator should be able to hold (sizes pool and arena) */
    char note[96];
} workload;

/* Every random choice of a workload, drawn before timing. */
typedef struct plan {
    size_t *fill;        /* sizes of the blocks allocated before timing (threads: per thread) */
    size_t *sizes;       /* the size of each step */
    uint32_t *picks;     /* the victim of each step (random: a raw number reduced mod live count) */
    unsigned char *chance; /* random: 0..99 per step */
} plan;

static void plan_free(plan *p) {
    free(p->fill);
    free(p->sizes);
    free(p->picks);
    free(p->chance);
    memset(p, 0, sizeof *p);
}
static int plan_make(const workload *w, plan *p) {
    rng r = {hash_name(w->name) ^ 0x5EEDull};
    size_t nfill = 0, nsteps = w->steps * (w->type == W_THREADS ? (size_t)w->threads : 1), i;
    memset(p, 0, sizeof *p);
    if (w->type == W_CHURN) nfill = w->live;
    if (w->type == W_THREADS) nfill = w->live * (size_t)w->threads;
    p->fill = (size_t *)calloc(nfill + 1, sizeof *p->fill);
    p->sizes = (size_t *)calloc(nsteps + 1, sizeof *p->sizes);
    p->picks = (uint32_t *)calloc(nsteps + 1, sizeof *p->picks);
    p->chance = (unsigned char *)calloc(nsteps + 1, 1);
    if (!p->fill || !p->sizes || !p->picks || !p->chance) {
        plan_free(p);
        return FAIL;
    }
    for (i = 0; i < nfill; i++) p->fill[i] = rng_log_uniform(&r, w->lo, w->hi);
    for (i = 0; i < nsteps; i++) {
        if (w->type == W_RANDOM) {
            p->sizes[i] = 1 + (size_t)(rng_next(&r) % (uint64_t)w->hi);
            p->chance[i] = (unsigned char)(rng_next(&r) % 100u);
            p->picks[i] = (uint32_t)(rng_next(&r) % (uint64_t)w->live);
        } else {
            p->sizes[i] = w->type == W_LIFO ? w->lo : rng_log_uniform(&r, w->lo, w->hi);
            p->picks[i] = (uint32_t)(rng_next(&r) % (uint64_t)w->live);
        }
    }
    return OK;
}

/* One timed repetition. */
typedef struct rep {
    double ns;      /* timed nanoseconds */
    size_t pairs;   /* allocate+free pairs done in the timed region (random: successful allocations) */
    size_t ops;     /* random: allocations + frees */
    size_t fails;   /* random: failed allocations (turned into frees) */
} rep;

#define CAP_CHECK_MASK 255u /* step loops read the clock every 256 steps */

static int run_lifo(const allocator *a, const workload *w, uint64_t cap_ns, rep *r, char *err) {
    rmm_stream s = g_stream;
    size_t warm = w->steps / 100 + 16, i, bytes = w->lo;
    uint64_t t0, deadline;
    void *p = NULL;
    int rc = OK;
    lag *l = &g_lag_single;
    for (i = 0; i < warm; i++) {
        if ((rc = do_alloc(a, &p, bytes, s, err)) != OK) return rc;
        if ((rc = do_free(a, p, bytes, s, err)) != OK) return rc;
    }
    if (do_sync(s, err) != OK) return FAIL;
    if (lag_hold(l, s, err) != OK) return FAIL;
    t0 = now_ns();
    deadline = t0 + cap_ns;
    for (i = 0; i < w->steps;) {
        if ((rc = do_alloc(a, &p, bytes, s, err)) != OK) break;
        if ((rc = do_free(a, p, bytes, s, err)) != OK) break;
        i++;
        if ((i & CAP_CHECK_MASK) == 0 && now_ns() > deadline) break;
    }
    lag_release(l);
    if (rc != OK) {
        (void)rmm_stream_synchronize(s); /* (the host function has returned before the next repetition holds the stream) */
        return rc;
    }
    if (do_sync(s, err) != OK) return FAIL;
    if (lag_check(l, err) != OK) return FAIL;
    r->ns = (double)(now_ns() - t0);
    r->pairs = i;
    return OK;
}

/* Frees every non-NULL block (cleanup; errors are ignored). */
static void free_all(const allocator *a, void **ptrs, const size_t *sizes, size_t n, rmm_stream s) {
    size_t i;
    for (i = 0; i < n; i++)
        if (ptrs[i]) (void)do_free(a, ptrs[i], sizes[i], s, NULL), ptrs[i] = NULL;
    (void)rmm_stream_synchronize(s);
}

/* Keeps `live` blocks; each step frees picks[i] and allocates sizes[i] in its place. Used by churn
   (one thread, default stream) and by each thread of threads16. `deadline` 0: none. */
static int churn_steps(const allocator *a, void **ptrs, size_t *sz, const size_t *sizes, const uint32_t *picks, size_t steps,
                       rmm_stream s, uint64_t deadline, const int *abort_flag, size_t *done, char *err) {
    size_t i;
    int rc = OK;
    for (i = 0; i < steps;) {
        uint32_t v = picks[i];
        if ((rc = do_free(a, ptrs[v], sz[v], s, err)) != OK) break;
        ptrs[v] = NULL;
        if ((rc = do_alloc(a, &ptrs[v], sizes[i], s, err)) != OK) break;
        sz[v] = sizes[i];
        i++;
        if ((i & CAP_CHECK_MASK) == 0 &&
            ((deadline && now_ns() > deadline) || (abort_flag && __atomic_load_n(abort_flag, __ATOMIC_RELAXED)))) break;
    }
    *done = i;
    return rc;
}
static int churn_fill(const allocator *a, void **ptrs, size_t *sz, const size_t *fill, size_t n, rmm_stream s, char *err) {
    size_t i;
    int rc;
    for (i = 0; i < n; i++) {
        if ((rc = do_alloc(a, &ptrs[i], fill[i], s, err)) != OK) return rc;
        sz[i] = fill[i];
    }
    return do_sync(s, err);
}

static int run_churn(const allocator *a, const workload *w, const plan *pl, uint64_t cap_ns, rep *r, char *err) {
    rmm_stream s = g_stream;
    void **ptrs = (void **)calloc(w->live, sizeof *ptrs);
    size_t *sz = (size_t *)calloc(w->live, sizeof *sz), done = 0;
    uint64_t t0;
    int rc;
    lag *l = &g_lag_single;
    if (!ptrs || !sz) {
        free(ptrs);
        free(sz);
        fmt(err, ERRLEN, "out of host memory");
        return FAIL;
    }
    rc = churn_fill(a, ptrs, sz, pl->fill, w->live, s, err);
    if (rc == OK) rc = lag_hold(l, s, err);
    if (rc == OK) {
        t0 = now_ns();
        rc = churn_steps(a, ptrs, sz, pl->sizes, pl->picks, w->steps, s, t0 + cap_ns, NULL, &done, err);
        lag_release(l);
        if (rc == OK) rc = do_sync(s, err);
        if (rc == OK) rc = lag_check(l, err);
        r->ns = (double)(now_ns() - t0);
        r->pairs = done;
    }
    free_all(a, ptrs, sz, w->live, s);
    free(ptrs);
    free(sz);
    return rc;
}

/* threads16: every thread fills its blocks, meets the others at `start`, reads the clock, runs its
   steps, syncs its stream, reads the clock and meets them at `stop`. The wall time is the latest end
   minus the earliest start. (The workers read the clock themselves: the main thread may not be
   scheduled again until long after the barrier opens when the workers fill every core.) */
typedef struct tctx {
    const allocator *a;
    const workload *w;
    const plan *pl;
    int tid;
    rmm_stream stream;
    uint64_t cap_ns;
    pthread_barrier_t *start, *stop;
    int *abort_flag;
    size_t done;
    uint64_t t_start, t_end; /* 0: did not run its steps */
    int rc;
    char err[ERRLEN];
} tctx;

static void *thread_main(void *arg) {
    tctx *t = (tctx *)arg;
    const workload *w = t->w;
    size_t base = (size_t)t->tid;
    void **ptrs = (void **)calloc(w->live, sizeof *ptrs);
    size_t *sz = (size_t *)calloc(w->live, sizeof *sz);
    lag *l = &g_lag_threads[t->tid & 63];
    l->released = 1;
    l->gave_up = 0;
    t->rc = OK;
    t->done = 0;
    if (!ptrs || !sz) {
        fmt(t->err, ERRLEN, "out of host memory");
        t->rc = FAIL;
    }
    if (t->rc == OK) t->rc = churn_fill(t->a, ptrs, sz, t->pl->fill + base * w->live, w->live, t->stream, t->err);
    if (t->rc == OK) t->rc = lag_hold(l, t->stream, t->err);
    if (t->rc != OK) __atomic_store_n(t->abort_flag, 1, __ATOMIC_RELAXED);
    pthread_barrier_wait(t->start);
    if (t->rc == OK && !__atomic_load_n(t->abort_flag, __ATOMIC_RELAXED)) {
        t->t_start = now_ns();
        t->rc = churn_steps(t->a, ptrs, sz, t->pl->sizes + base * w->steps, t->pl->picks + base * w->steps, w->steps, t->stream,
                            t->t_start + t->cap_ns, t->abort_flag, &t->done, t->err);
        lag_release(l);
        if (t->rc != OK) __atomic_store_n(t->abort_flag, 1, __ATOMIC_RELAXED);
        if (t->rc == OK) t->rc = do_sync(t->stream, t->err);
        t->t_end = now_ns();
        if (t->rc == OK) t->rc = lag_check(l, t->err);
    }
    lag_release(l);
    pthread_barrier_wait(t->stop);
    if (ptrs && sz) free_all(t->a, ptrs, sz, w->live, t->stream);
    free(ptrs);
    free(sz);
    return NULL;
}

static int run_threads(const allocator *a, const workload *w, const plan *pl, rmm_stream *streams, uint64_t cap_ns, rep *r, char *err) {
    pthread_t th[64];
    tctx ctx[64];
    pthread_barrier_t start, stop;
    int abort_flag = 0, i, n = w->threads, started = 0, rc = OK;
    uint64_t t0 = UINT64_MAX, t1 = 0;
    pthread_barrier_init(&start, NULL, (unsigned)n + 1);
    pthread_barrier_init(&stop, NULL, (unsigned)n + 1);
    for (i = 0; i < n; i++) {
        memset(&ctx[i], 0, sizeof ctx[i]);
        ctx[i].a = a;
        ctx[i].w = w;
        ctx[i].pl = pl;
        ctx[i].tid = i;
        ctx[i].stream = streams[i];
        ctx[i].cap_ns = cap_ns;
        ctx[i].start = &start;
        ctx[i].stop = &stop;
        ctx[i].abort_flag = &abort_flag;
        if (pthread_create(&th[i], NULL, thread_main, &ctx[i]) != 0) break;
        started++;
    }
    if (started != n) { /* the started threads would wait at the barrier forever: give up */
        fprintf(stderr, "pthread_create failed after %d threads\n", started);
        exit(2);
    }
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&stop);
    r->pairs = 0;
    for (i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        r->pairs += ctx[i].done;
        if (ctx[i].t_start && ctx[i].t_start < t0) t0 = ctx[i].t_start;
        if (ctx[i].t_end > t1) t1 = ctx[i].t_end;
        if (ctx[i].rc != OK && rc == OK) {
            rc = ctx[i].rc;
            fmt(err, ERRLEN, "thread %d: %s", i, ctx[i].err);
        }
    }
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&stop);
    r->ns = t1 > t0 ? (double)(t1 - t0) : 0.0;
    return rc;
}

/* RMM's random_allocation_free, step for step (see the top of the file). */
static int run_random(const allocator *a, const workload *w, const plan *pl, rep *r, char *err) {
    rmm_stream s = g_stream;
    size_t n = w->live, active = 0, count = 0, live_bytes = 0, i, ops = 0, fails = 0;
    void **ptrs = (void **)calloc(n + 1, sizeof *ptrs);
    size_t *sz = (size_t *)calloc(n + 1, sizeof *sz);
    uint64_t t0;
    int rc = OK;
    if (!ptrs || !sz) {
        free(ptrs);
        free(sz);
        fmt(err, ERRLEN, "out of host memory");
        return FAIL;
    }
    t0 = now_ns();
    for (i = 0; i < w->steps; i++) {
        size_t size = pl->sizes[i];
        int alloc = 1;
        if (active > 0) alloc = pl->chance[i] < 73 && count < n && live_bytes + size < w->budget;
        if (alloc) {
            rc = do_alloc(a, &ptrs[active], size, s, err);
            if (rc == OK) {
                sz[active++] = size;
                count++;
                live_bytes += size;
                ops++;
            } else if (rc == OOM) {
                alloc = 0;
                fails++;
                rc = OK;
            } else {
                break; /* not out of memory: a real error (err says which) */
            }
        }
        if (!alloc && active > 0) {
            size_t v = pl->picks[i] % active;
            if ((rc = do_free(a, ptrs[v], sz[v], s, err)) != OK) break;
            live_bytes -= sz[v];
            active--;
            ptrs[v] = ptrs[active];
            sz[v] = sz[active];
            ptrs[active] = NULL;
            ops++;
        }
    }
    while (rc == OK && active > 0) { /* what is left is freed inside the timed region */
        active--;
        if ((rc = do_free(a, ptrs[active], sz[active], s, err)) != OK) break;
        ptrs[active] = NULL;
        ops++;
    }
    if (rc == OK) rc = do_sync(s, err);
    r->ns = (double)(now_ns() - t0);
    r->pairs = count;
    r->ops = ops;
    r->fails = fails;
    free_all(a, ptrs, sz, active, s);
    free(ptrs);
    free(sz);
    return rc;
}

/* ---- building and tearing down allocators -------------------------------------------------- */

static size_t g_total_mem;                 /* device memory (host backend: its capacity) */
static int g_host;                         /* 1 on the host backend */
#ifndef RMM_BACKEND_HOST
static cudaMemPool_t g_default_pool;
#endif

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }
static size_t pool_initial_bytes(const workload *w) {
    size_t b = w->live_bound + w->live_bound / 4;
    if (b < GIB) b = GIB;
    if (b > g_total_mem / 5 * 2) b = g_total_mem / 5 * 2;
    return round_up(b, 2 * MIB);
}
static size_t arena_bytes_for(const workload *w) {
    size_t b = 2 * w->live_bound, floor = g_host ? 512 * MIB : 8 * GIB;
    if (b < floor) b = floor;
    if (b > g_total_mem / 2) b = g_total_mem / 2;
    return b / MIB * MIB;
}
static int applies(const char *name, const workload *w) {
    if (g_lag && !strcmp(name, "cudaMalloc")) return 0; /* (cudaFree waits for the device: it would wait for the loop's end) */
    if (!strcmp(name, "pool(outlive)") || !strcmp(name, "arena(outlive)")) return w->type == W_THREADS;
    if (!strcmp(name, "fixed")) return w->hi <= MIB;
    return 1;
}

static void destroy_allocator(allocator *a) {
    int i;
    for (i = 0; i < a->nlayers; i++) rmm_resource_destroy(a->layers[i]);
    a->nlayers = 0;
#if defined(RMM_BENCH_PEER)
    if (peer_is(a->name)) rmm_peer_drop();
#endif
#ifndef RMM_BACKEND_HOST
    if (a->kind == RAW_ASYNC) { /* give back what the default pool kept */
        (void)cudaDeviceSynchronize();
        (void)cudaMemPoolTrimTo(g_default_pool, 0);
        (void)cudaGetLastError();
    }
#endif
}

/* Builds the named allocator for workload w. OK, or OOM/FAIL with a message. */
static int make_allocator(const char *name, const workload *w, allocator *a, char *err) {
    rmm_resource *cuda = NULL, *top = NULL, *pool = NULL;
    rmm_status st = RMM_SUCCESS;
    memset(a, 0, sizeof *a);
    a->name = name;
    a->kind = VIA_RMM;
#ifndef RMM_BACKEND_HOST
    if (!strcmp(name, "cudaMalloc")) {
        a->kind = RAW_MALLOC;
        return OK;
    }
    if (!strcmp(name, "cudaMallocAsync")) {
        a->kind = RAW_ASYNC;
        return OK;
    }
#else
    if (!strcmp(name, "cudaMallocAsync")) {
        st = rmm_async_resource_create(&top, NULL);
        if (st == RMM_SUCCESS) a->layers[a->nlayers++] = top;
        goto done;
    }
#endif
#if defined(RMM_BENCH_PEER)
    if (peer_is(name)) { /* RAPIDS RMM C++, configured as the rmm.h row of the same name */
        char why[256] = "";
        st = peer_make(name, pool_initial_bytes(w), arena_bytes_for(w), &top, why, sizeof why);
        if (st == RMM_SUCCESS) a->layers[a->nlayers++] = top;
        else {
            fmt(err, ERRLEN, "creating %s failed: %s", name, why[0] ? why : rmm_last_error());
            rmm_peer_drop();
            return FAIL;
        }
        goto done;
    }
#endif
    st = rmm_cuda_resource_create(&cuda);
    if (st != RMM_SUCCESS) goto done;
    if (!strcmp(name, "cudaMalloc")) { /* host backend only */
        top = cuda;
        a->layers[a->nlayers++] = cuda;
        goto done;
    }
    if (!strcmp(name, "pool") || !strcmp(name, "pool(outlive)") || !strcmp(name, "binning")) {
        rmm_pool_desc d = rmm_pool_desc_default();
        d.initial_bytes = pool_initial_bytes(w);
        d.growth = RMM_POOL_GROWTH_GEOMETRIC;
        d.streams_outlive_pool = !strcmp(name, "pool(outlive)");
        st = rmm_pool_create(&pool, cuda, &d);
        if (st == RMM_SUCCESS && !strcmp(name, "binning")) {
            rmm_binning_desc b = rmm_binning_desc_default();
            b.min_size_exponent = 18;
            b.max_size_exponent = 22;
            st = rmm_binning_create(&top, pool, &b);
            if (st == RMM_SUCCESS) a->layers[a->nlayers++] = top;
        } else {
            top = pool;
        }
        if (pool) a->layers[a->nlayers++] = pool;
    } else if (!strcmp(name, "arena") || !strcmp(name, "arena(outlive)")) {
        rmm_arena_desc d = rmm_arena_desc_default();
        d.arena_bytes = arena_bytes_for(w);
        d.streams_outlive_arena = !strcmp(name, "arena(outlive)");
        st = rmm_arena_create(&top, cuda, &d);
        if (st == RMM_SUCCESS) a->layers[a->nlayers++] = top;
    } else if (!strcmp(name, "fixed")) {
        rmm_fixed_size_desc d = rmm_fixed_size_desc_default();
        d.block_bytes = MIB;
        st = rmm_fixed_size_create(&top, cuda, &d);
        if (st == RMM_SUCCESS) a->layers[a->nlayers++] = top;
    } else {
        fmt(err, ERRLEN, "unknown allocator %s", name);
        rmm_resource_destroy(cuda);
        return FAIL;
    }
    a->layers[a->nlayers++] = cuda;
done:
    if (st != RMM_SUCCESS) {
        fmt(err, ERRLEN, "creating %s failed: %s", name, rmm_last_error());
        destroy_allocator(a);
        return st == RMM_ERROR_OUT_OF_MEMORY ? OOM : FAIL;
    }
    a->mr = top;
    return OK;
}

/* ---- results ---------------------------------------------------------------------------- */

typedef struct result {
    char workload[32];
    const char *resource;
    int status;          /* OK, OOM, FAIL */
    double ns_per_pair;  /* median */
    double total_ms;     /* random: median total */
    double ns_per_op;    /* random */
    size_t pairs, fails;
    int reps;
    char msg[ERRLEN];
} result;


static int g_reps = 5, g_slow_reps = 3, g_quick;

/* Runs every repetition of one (workload, allocator) pair. */
static void measure(const workload *w, const plan *pl, const char *name, result *res) {
    allocator a;
    rmm_stream streams[64];
    rep reps[32];
    double per_pair[32], total[32];
    int nreps = !strcmp(name, "cudaMalloc") ? g_slow_reps : g_reps, i, made = 0, rc;
    uint64_t cap_ns = !strcmp(name, "cudaMalloc") ? 250000000ull : 2000000000ull;
    char err[ERRLEN] = "";
    memset(res, 0, sizeof *res);
    fmt(res->workload, sizeof res->workload, "%s", w->name);
    res->resource = name;
    if (nreps > 32) nreps = 32;
    if (w->type == W_THREADS) {
        for (made = 0; made < w->threads; made++) /* --stream foreign: each thread's stream is one the library did not make */
            if ((!strcmp(g_stream_kind, "foreign") ? rmm__stream_create_raw(&streams[made], false) : rmm_stream_create(&streams[made])) != RMM_SUCCESS) break;
        if (made < w->threads) {
            fmt(res->msg, sizeof res->msg, "rmm_stream_create failed: %s", rmm_last_error());
            res->status = FAIL;
            goto out;
        }
    }
    rc = make_allocator(name, w, &a, err);
    if (rc != OK) {
        res->status = rc;
        fmt(res->msg, sizeof res->msg, "%s", err);
        goto out;
    }
    for (i = 0; i < nreps; i++) {
        memset(&reps[i], 0, sizeof reps[i]);
        switch (w->type) {
        case W_LIFO: rc = run_lifo(&a, w, cap_ns, &reps[i], err); break;
        case W_CHURN: rc = run_churn(&a, w, pl, cap_ns, &reps[i], err); break;
        case W_THREADS: rc = run_threads(&a, w, pl, streams, cap_ns, &reps[i], err); break;
        default: rc = run_random(&a, w, pl, &reps[i], err); break;
        }
        if (rc != OK) break;
        per_pair[i] = reps[i].pairs ? reps[i].ns / (double)reps[i].pairs : 0.0;
        total[i] = reps[i].ns;
    }
    destroy_allocator(&a);
    if (rc != OK) {
        res->status = rc;
        fmt(res->msg, sizeof res->msg, "%s", err);
        goto out;
    }
    res->reps = nreps;
    if (w->type == W_RANDOM) { /* the median run by total time; report its own figures */
        int mid = 0, j, below;
        for (i = 0; i < nreps; i++) {
            below = 0;
            for (j = 0; j < nreps; j++) below += total[j] < total[i] || (total[j] == total[i] && j < i);
            if (below == nreps / 2) mid = i;
        }
        res->total_ms = total[mid] / 1e6;
        res->ns_per_pair = per_pair[mid];
        res->ns_per_op = reps[mid].ops ? total[mid] / (double)reps[mid].ops : 0.0;
        res->pairs = reps[mid].pairs;
        res->fails = reps[mid].fails;
    } else {
        size_t pairs_sum = 0;
        for (i = 0; i < nreps; i++) pairs_sum += reps[i].pairs;
        qsort(per_pair, (size_t)nreps, sizeof per_pair[0], cmp_double);
        res->ns_per_pair = nreps % 2 ? per_pair[nreps / 2] : (per_pair[nreps / 2 - 1] + per_pair[nreps / 2]) / 2;
        res->pairs = pairs_sum / (size_t)nreps;
    }
out:
    for (i = 0; i < made; i++) (void)(!strcmp(g_stream_kind, "foreign") ? rmm__stream_destroy_raw(streams[i]) : rmm_stream_destroy(streams[i]));
}

/* ---- command line, machine, main ---------------------------------------------------------- */



static void usage(const char *argv0) {
    printf("usage: %s [--quick] [--stream default|created|foreign] [--workload NAME[,NAME..]] [--resource NAME[,NAME..]] [--reps N] [--lag] [--threads N]\n"
           "  workloads: lifo_256B lifo_1MiB churn_small churn_mixed threads16 rmm_random (prefix selects all; threads16 is\n"
           "             threadsN with --threads N, 1-64)\n"
           "  resources: cudaMalloc cudaMallocAsync pool pool(outlive) binning arena arena(outlive) fixed\n",
           argv0);
}

int main(int argc, char **argv) {
    const char *wfilter = NULL, *rfilter = NULL;
    workload ws[16];
    int nw = 0, i, j, k, order[NALLOC], nresults = 0;
    size_t free_mem = 0, budget, steps_div;
    result *results;
    static const struct {
        size_t n, mib;
    } random_params[] = {{1000, 1}, {1000, 4}, {10000, 1}, {1000, 64}};

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) g_quick = 1;
        else if (!strcmp(argv[i], "--workload") && i + 1 < argc) wfilter = argv[++i];
        else if (!strcmp(argv[i], "--resource") && i + 1 < argc) rfilter = argv[++i];
        else if (!strcmp(argv[i], "--lag")) g_lag = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc && atoi(argv[i + 1]) >= 1 && atoi(argv[i + 1]) <= 64) g_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = g_slow_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stream") && i + 1 < argc && (!strcmp(argv[i + 1], "default") || !strcmp(argv[i + 1], "created") || !strcmp(argv[i + 1], "foreign"))) g_stream_kind = argv[++i];
        else {
            usage(argv[0]);
            return !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ? 0 : 2;
        }
    }
    if (g_quick && g_reps == 5) g_reps = 3;
    if (g_reps < 1) g_reps = g_slow_reps = 1;
    if (g_reps > 32) g_reps = g_slow_reps = 32;
    if (g_slow_reps > g_reps) g_slow_reps = g_reps;

#ifdef RMM_BACKEND_HOST
    g_host = 1;
    if (g_lag) {
        fprintf(stderr, "random_allocations: --lag needs CUDA (the host backend runs every stream's work at once)\n");
        return 2;
    }
#else
    {
        if (!have_device("random_allocations")) return 2;
        if (cudaDeviceGetDefaultMemPool(&g_default_pool, 0) != cudaSuccess) {
            fprintf(stderr, "random_allocations: cudaDeviceGetDefaultMemPool failed\n");
            return 2;
        }
        {
            uint64_t threshold = UINT64_MAX;
            if (cudaMemPoolSetAttribute(g_default_pool, cudaMemPoolAttrReleaseThreshold, &threshold) != cudaSuccess) {
                fprintf(stderr, "random_allocations: cudaMemPoolSetAttribute(ReleaseThreshold) failed\n");
                return 2;
            }
        }
    }
#endif
    if (rmm_available_device_memory(&free_mem, &g_total_mem) != RMM_SUCCESS) {
        fprintf(stderr, "random_allocations: %s\n", rmm_last_error());
        return 2;
    }

    /* the workloads (sizes scaled down where the host backend's 4 GiB would not hold them) */
    steps_div = g_quick ? 10 : 1;
    budget = (size_t)16000 * MIB;
    if (budget > g_total_mem / 4) budget = g_total_mem / 4 / MIB * MIB;
    memset(ws, 0, sizeof ws);
    fmt(ws[nw].name, sizeof ws[nw].name, "lifo_256B");
    ws[nw].type = W_LIFO, ws[nw].lo = ws[nw].hi = 256, ws[nw].live = 1, ws[nw].steps = 200000 / steps_div, ws[nw].live_bound = 256;
    nw++;
    fmt(ws[nw].name, sizeof ws[nw].name, "lifo_1MiB");
    ws[nw].type = W_LIFO, ws[nw].lo = ws[nw].hi = MIB, ws[nw].live = 1, ws[nw].steps = 200000 / steps_div, ws[nw].live_bound = MIB;
    nw++;
    fmt(ws[nw].name, sizeof ws[nw].name, "churn_small");
    ws[nw].type = W_CHURN, ws[nw].lo = 256, ws[nw].hi = 64 * KIB, ws[nw].live = 1000, ws[nw].steps = 200000 / steps_div;
    nw++;
    fmt(ws[nw].name, sizeof ws[nw].name, "churn_mixed");
    ws[nw].type = W_CHURN, ws[nw].lo = 256, ws[nw].hi = g_host ? MIB : 64 * MIB, ws[nw].live = 1000, ws[nw].steps = 50000 / steps_div;
    if (g_host) fmt(ws[nw].note, sizeof ws[nw].note, "host backend: sizes [256 B, 1 MiB] instead of [256 B, 64 MiB]");
    nw++;
    fmt(ws[nw].name, sizeof ws[nw].name, "threads%d", g_threads);
    ws[nw].type = W_THREADS, ws[nw].lo = 256, ws[nw].hi = MIB, ws[nw].live = 100, ws[nw].threads = g_threads, ws[nw].steps = 20000 / steps_div;
    nw++;
    for (k = 0; k < (int)(sizeof random_params / sizeof random_params[0]); k++) {
        workload *w = &ws[nw++];
        fmt(w->name, sizeof w->name, "rmm_random_%zux%zuMiB", random_params[k].n, random_params[k].mib);
        w->type = W_RANDOM, w->lo = 1, w->hi = random_params[k].mib * MIB, w->live = random_params[k].n;
        w->steps = 2 * w->live, w->budget = budget, w->live_bound = budget;
    }
    for (i = 0; i < nw; i++) { /* churn and threads: a generous bound on live bytes */
        workload *w = &ws[i];
        if (w->type == W_CHURN || w->type == W_THREADS) {
            double blocks = (double)w->live * (w->threads ? (double)w->threads : 1.0);
            w->live_bound = (size_t)(1.5 * blocks * log_uniform_mean(w->lo, w->hi));
        }
    }

    {
        char note[160];
        fmt(note, sizeof note, "\"device\" memory is posix_memalign'ed host memory, capacity %.1f GiB", (double)g_total_mem / (double)GIB);
        print_machine(note);
    }
#ifdef RMM_BACKEND_HOST
    printf("# host backend: \"cudaMalloc\" is rmm_cuda_resource and \"cudaMallocAsync\" is rmm_async_resource (both posix_memalign)\n");
#endif
    if (!strcmp(g_stream_kind, "created") && rmm_stream_create(&g_stream) != RMM_SUCCESS) return 2;
    if (!strcmp(g_stream_kind, "foreign") && rmm__stream_create_raw(&g_stream, false) != RMM_SUCCESS) return 2; /* cudaStreamCreateWithFlags */
    printf("# settings: %s, %d repetitions (cudaMalloc %d), median reported; rmm_random budget %zu MiB; single-threaded workloads on %s\n",
           g_quick ? "--quick (10x fewer steps)" : "full", g_reps, g_slow_reps, budget / MIB,
           !strcmp(g_stream_kind, "created") ? "a stream from rmm_stream_create" : !strcmp(g_stream_kind, "foreign") ? "a stream from cudaStreamCreateWithFlags" : "the default stream");
    if (g_lag) printf("# --lag: each timed stream is blocked behind a host function until its timed loop ends (lifo, churn, threads16)\n");
    printf("# ns_per_pair: timed ns / allocate+free pairs; ratio: ns_per_pair / cudaMallocAsync's (>1: slower)\n");
    for (i = 0; i < nw; i++)
        if (ws[i].note[0] && name_selected(ws[i].name, wfilter, 1)) printf("# %s: %s\n", ws[i].name, ws[i].note);
    printf("%-22s %-16s %12s %25s  %s\n", "workload", "resource", "ns_per_pair", "ratio_vs_cudaMallocAsync", "extra");
    fflush(stdout);

    results = (result *)calloc((size_t)(nw * NALLOC), sizeof *results);
    if (!results) return 2;
    /* run cudaMallocAsync first so every row of a workload can show its ratio */
    order[0] = IDX_ASYNC;
    for (i = 0, k = 1; i < NALLOC; i++)
        if (i != IDX_ASYNC) order[k++] = i;
    for (i = 0; i < nw; i++) {
        const workload *w = &ws[i];
        result *row = &results[nresults];
        int have[NALLOC];
        double async_ns = 0.0;
        plan pl;
        if (!name_selected(w->name, wfilter, 1)) continue;
        if (plan_make(w, &pl) != OK) {
            fprintf(stderr, "out of host memory for the plan of %s\n", w->name);
            return 2;
        }
        for (k = 0; k < NALLOC; k++) {
            int r = order[k];
            have[r] = 0;
            if (!applies(ALLOCATORS[r], w) || !name_selected(ALLOCATORS[r], rfilter, 0)) continue;
            fprintf(stderr, "  running %s / %s ...\n", w->name, ALLOCATORS[r]);
            measure(w, &pl, ALLOCATORS[r], &row[r]);
            have[r] = 1;
            if (r == IDX_ASYNC && row[r].status == OK) async_ns = row[r].ns_per_pair;
        }
        plan_free(&pl);
        /* compact this workload's rows into print order */
        for (k = 0, j = 0; k < NALLOC; k++) {
            result tmp;
            char ns[32], ratio[32], extra[ERRLEN + 64];
            if (!have[k]) continue;
            tmp = row[k];
            row[j] = tmp;
            if (tmp.status == OK) {
                fmt(ns, sizeof ns, "%.1f", tmp.ns_per_pair);
                if (async_ns > 0) fmt(ratio, sizeof ratio, "%.3f", tmp.ns_per_pair / async_ns);
                else fmt(ratio, sizeof ratio, "-");
                if (w->type == W_RANDOM)
                    fmt(extra, sizeof extra, "total_ms=%.3f ns_per_op=%.1f allocs=%zu failed_allocs=%zu", tmp.total_ms, tmp.ns_per_op,
                             tmp.pairs, tmp.fails);
                else
                    fmt(extra, sizeof extra, "pairs/rep=%zu", tmp.pairs);
            } else {
                fmt(ns, sizeof ns, "%s", tmp.status == OOM ? "oom" : "error");
                fmt(ratio, sizeof ratio, "-");
                fmt(extra, sizeof extra, "skipped: %s", tmp.msg);
            }
            printf("%-22s %-16s %12s %25s  %s\n", tmp.workload, tmp.resource, ns, ratio, extra);
            j++;
        }
        nresults += j;
        fflush(stdout);
    }

    printf("csv,workload,resource,status,ns_per_pair,ratio_vs_cudaMallocAsync,pairs_per_rep,reps,total_ms,ns_per_op,failed_allocs,backend\n");
    for (i = 0; i < nresults; i++) {
        const result *x = &results[i];
        double base = 0.0;
        for (j = 0; j < nresults; j++)
            if (!strcmp(results[j].workload, x->workload) && !strcmp(results[j].resource, "cudaMallocAsync") && results[j].status == OK)
                base = results[j].ns_per_pair;
        if (x->status == OK) {
            char ratio[32] = "";
            if (base > 0) fmt(ratio, sizeof ratio, "%.4f", x->ns_per_pair / base);
            printf("csv,%s,%s,ok,%.2f,%s,%zu,%d,%.4f,%.2f,%zu,%s\n", x->workload, x->resource, x->ns_per_pair, ratio, x->pairs, x->reps,
                   x->total_ms, x->ns_per_op, x->fails, g_host ? "host" : "cuda");
        }
        else
            printf("csv,%s,%s,%s,,,,,,,,%s\n", x->workload, x->resource, x->status == OOM ? "oom" : "error", g_host ? "host" : "cuda");
    }
    free(results);
    return 0;
}
