/* bench/adaptors.c - what rmm.h's adaptors add to every allocate and free, over a pool.

   One process builds one pool (rmm_pool_create over rmm_cuda_resource, RMM_POOL_GROWTH_GEOMETRIC,
   initial_bytes 1 GiB on a GPU, 256 MiB on the host backend) and measures, over that same pool:
     none                 the bare pool (the baseline)
     logging(buffered)    rmm_logging_adaptor_create to a file in /tmp, auto_flush false
     logging(auto_flush)  the same with auto_flush true (one fflush, i.e. one write(2), per row)
     statistics           rmm_statistics_adaptor_create
     tracking             rmm_tracking_adaptor_create, capture_stacks false
     tracking(stacks)     the same with capture_stacks true (backtrace() of 32 frames per allocate;
                          glibc only, elsewhere it is the same as tracking)
     limiting             rmm_limiting_adaptor_create with a limit of the whole device memory
                          (never reached)
     logging+statistics   logging(buffered) over statistics over the pool
     thread_safe          rmm_thread_safe_adaptor_create (a lock around each call, and the
                          holder check that turns a re-entry into NOT_SUPPORTED)
   Every adaptor is made afresh (untimed) for each repetition, so each log file is truncated and
   holds one repetition only; the files are removed after each repetition and again at the end.
   Within a repetition every adaptor runs once, the starting adaptor rotating from one repetition
   to the next, so slow drift of the machine (clocks, page cache) falls on all of them alike.
   All calls go through rmm_allocate / rmm_deallocate on the default stream (RMM_STREAM_DEFAULT);
   each timed region ends with rmm_stream_synchronize.

   Workloads (--workload NAME[,NAME...]; a name also selects every workload it is a prefix of):
     lifo_256B     allocate one 256 B block and free it at once, repeated (after a short untimed
                   warmup of steps/100 + 16 pairs).
     churn_small   1000 live blocks (allocated first, untimed); each step frees a random one and
                   allocates a log-uniform size in [256 B, 64 KiB] in its place. The blocks left at
                   the end are freed untimed. The random choices come from a seeded splitmix64 and
                   are drawn before timing: every adaptor sees the same sequence.

   Reported: ns_per_pair = timed ns / allocate+free pairs, the median of 5 repetitions (--reps N);
   added_ns = the adaptor's ns_per_pair minus the bare pool's (on the same workload), and
   added_per_event = added_ns / 2 (an allocate and a free are two events: two log rows, two
   counter updates, ...). A repetition stops early after 1 s, so a slow adaptor is measured on
   fewer steps rather than taking minutes (pairs/rep says how many).

   Checks (untimed, after each repetition): the pool has nothing in use; statistics counted every
   allocation and end at zero bytes and zero blocks; tracking holds nothing; limiting's count is
   back to zero; each log file has exactly the header plus one row per allocate and per free. A
   failed check is printed as "CHECK FAILED" (stderr and the extra column); the number stays.

   Options: --quick (10x fewer steps), --workload NAME, --adaptor NAME, --reps N.
   Run:     make bench && build/bench/adaptors            (CUDA: about 20 s)
            build/bench/host/adaptors                     (host backend: about 15 s; --quick 2 s)
   The time is almost all in the three logging adaptors and tracking(stacks) (about 1 to 4.5 us
   per pair); the others are within tens of ns of the pool. At most 2 workloads x 9 adaptors x
   reps x 1 s in any case.
   Progress goes to stderr; results to stdout.

   Output: "# " header lines (machine, versions, date, settings), the table
       workload  adaptor  ns_per_pair  added_ns  added_per_event  ratio_vs_pool  extra
   then lines starting with "csv,". */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "bench_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ERRLEN 320
#define MAXREPS 32


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

/* ---- the adaptors ------------------------------------------------------------------------ */

enum { OK = 0, OOM = 1, FAIL = 2 };
typedef enum akind { A_NONE, A_LOG_BUF, A_LOG_FLUSH, A_STATS, A_TRACK, A_TRACK_STACKS, A_LIMIT, A_LOG_STATS, A_THREAD_SAFE } akind;
static const char *const ADAPTORS[] = {"none", "logging(buffered)", "logging(auto_flush)", "statistics", "tracking", "tracking(stacks)", "limiting",
                                       "logging+statistics", "thread_safe"};
#define NADAPT ((int)(sizeof ADAPTORS / sizeof ADAPTORS[0]))

static size_t g_total_mem; /* device memory (host backend: its capacity) */
static int g_host;         /* 1 on the host backend */
static char g_log_paths[NADAPT][96]; /* per adaptor; "" when it writes no log */

/* An adaptor stack over the shared pool. */
typedef struct stack {
    akind kind;
    rmm_resource *top;       /* what rmm_allocate is called on */
    rmm_resource *layers[2]; /* owned, top first */
    int nlayers;
    rmm_resource *stats, *track, *limit, *log; /* the layers the checks read (may be NULL) */
} stack;

static void stack_destroy(stack *s) {
    int i;
    for (i = 0; i < s->nlayers; i++) rmm_resource_destroy(s->layers[i]);
    s->nlayers = 0;
    s->top = NULL;
}

static int stack_make(akind k, rmm_resource *pool, stack *s, char *err) {
    rmm_status st = RMM_SUCCESS;
    rmm_resource *r = NULL, *inner = NULL;
    memset(s, 0, sizeof *s);
    s->kind = k;
    s->top = pool;
    switch (k) {
    case A_NONE: return OK;
    case A_LOG_BUF:
    case A_LOG_FLUSH:
        st = rmm_logging_adaptor_create(&r, pool, g_log_paths[k], k == A_LOG_FLUSH);
        s->log = r;
        break;
    case A_STATS:
        st = rmm_statistics_adaptor_create(&r, pool);
        s->stats = r;
        break;
    case A_TRACK:
    case A_TRACK_STACKS:
        st = rmm_tracking_adaptor_create(&r, pool, k == A_TRACK_STACKS);
        s->track = r;
        break;
    case A_LIMIT:
        st = rmm_limiting_adaptor_create(&r, pool, g_total_mem);
        s->limit = r;
        break;
    case A_LOG_STATS:
        st = rmm_statistics_adaptor_create(&inner, pool);
        if (st != RMM_SUCCESS) break;
        s->stats = inner;
        st = rmm_logging_adaptor_create(&r, inner, g_log_paths[k], false);
        s->log = r;
        break;
    case A_THREAD_SAFE:
        st = rmm_thread_safe_adaptor_create(&r, pool);
        break;
    }
    if (r) s->layers[s->nlayers++] = r;
    if (inner) s->layers[s->nlayers++] = inner;
    if (st != RMM_SUCCESS) {
        fmt(err, ERRLEN, "creating %s failed: %s", ADAPTORS[k], rmm_last_error());
        stack_destroy(s);
        return st == RMM_ERROR_OUT_OF_MEMORY ? OOM : FAIL;
    }
    s->top = r;
    return OK;
}

/* ---- workloads ---------------------------------------------------------------------------- */

typedef enum wtype { W_LIFO, W_CHURN } wtype;
typedef struct workload {
    const char *name;
    wtype type;
    size_t lo, hi;    /* sizes in bytes */
    size_t live;      /* churn: live blocks */
    size_t steps;     /* timed steps per repetition */
    size_t *fill;     /* churn: sizes of the blocks allocated before timing */
    size_t *sizes;    /* churn: the size of each step */
    uint32_t *picks;  /* churn: the victim of each step */
} workload;

static int workload_plan(workload *w, uint64_t seed) {
    rng r = {seed};
    size_t i;
    if (w->type != W_CHURN) return OK;
    w->fill = (size_t *)calloc(w->live, sizeof *w->fill);
    w->sizes = (size_t *)calloc(w->steps + 1, sizeof *w->sizes);
    w->picks = (uint32_t *)calloc(w->steps + 1, sizeof *w->picks);
    if (!w->fill || !w->sizes || !w->picks) return FAIL;
    for (i = 0; i < w->live; i++) w->fill[i] = rng_log_uniform(&r, w->lo, w->hi);
    for (i = 0; i < w->steps; i++) {
        w->sizes[i] = rng_log_uniform(&r, w->lo, w->hi);
        w->picks[i] = (uint32_t)(rng_next(&r) % (uint64_t)w->live);
    }
    return OK;
}
static void workload_free(workload *w) {
    free(w->fill);
    free(w->sizes);
    free(w->picks);
    w->fill = w->sizes = NULL;
    w->picks = NULL;
}

/* One timed repetition. */
typedef struct rep {
    double ns;     /* timed nanoseconds */
    size_t pairs;  /* allocate+free pairs in the timed region */
    size_t allocs; /* every successful allocation through the adaptor, untimed ones included */
    size_t frees;  /* every successful free through the adaptor */
} rep;

#define CAP_CHECK_MASK 255u /* step loops read the clock every 256 steps */

static int do_alloc(rmm_resource *mr, void **p, size_t bytes, rmm_stream s, char *err) {
    rmm_status st = rmm_allocate(mr, p, bytes, s);
    if (st == RMM_SUCCESS) return OK;
    fmt(err, ERRLEN, "rmm_allocate(%zu) failed: %s", bytes, rmm_last_error());
    return st == RMM_ERROR_OUT_OF_MEMORY ? OOM : FAIL;
}
static int do_free(rmm_resource *mr, void *p, size_t bytes, rmm_stream s, char *err) {
    if (rmm_deallocate(mr, p, bytes, s) == RMM_SUCCESS) return OK;
    fmt(err, ERRLEN, "rmm_deallocate(%p, %zu) failed: %s", p, bytes, rmm_last_error());
    return FAIL;
}
static int do_sync(rmm_stream s, char *err) {
    if (rmm_stream_synchronize(s) == RMM_SUCCESS) return OK;
    fmt(err, ERRLEN, "stream synchronize failed: %s", rmm_last_error());
    return FAIL;
}

static int run_lifo(rmm_resource *mr, const workload *w, uint64_t cap_ns, rep *r, char *err) {
    rmm_stream s = RMM_STREAM_DEFAULT;
    size_t warm = w->steps / 100 + 16, i, bytes = w->lo;
    uint64_t t0, deadline;
    void *p = NULL;
    int rc = OK;
    for (i = 0; i < warm; i++) {
        if ((rc = do_alloc(mr, &p, bytes, s, err)) != OK) return rc;
        r->allocs++;
        if ((rc = do_free(mr, p, bytes, s, err)) != OK) return rc;
        r->frees++;
    }
    if (do_sync(s, err) != OK) return FAIL;
    t0 = now_ns();
    deadline = t0 + cap_ns;
    for (i = 0; i < w->steps;) {
        if ((rc = do_alloc(mr, &p, bytes, s, err)) != OK) break;
        if ((rc = do_free(mr, p, bytes, s, err)) != OK) {
            r->allocs++;
            break;
        }
        i++;
        if ((i & CAP_CHECK_MASK) == 0 && now_ns() > deadline) break;
    }
    if (rc == OK) rc = do_sync(s, err);
    r->ns = (double)(now_ns() - t0);
    r->pairs = i;
    r->allocs += i;
    r->frees += i;
    return rc;
}

static int run_churn(rmm_resource *mr, const workload *w, uint64_t cap_ns, rep *r, char *err) {
    rmm_stream s = RMM_STREAM_DEFAULT;
    void **ptrs = (void **)calloc(w->live, sizeof *ptrs);
    size_t *sz = (size_t *)calloc(w->live, sizeof *sz), i = 0;
    uint64_t t0, deadline;
    int rc = OK;
    if (!ptrs || !sz) {
        free(ptrs);
        free(sz);
        fmt(err, ERRLEN, "out of host memory");
        return FAIL;
    }
    for (i = 0; i < w->live && rc == OK; i++) { /* the fill, untimed */
        if ((rc = do_alloc(mr, &ptrs[i], w->fill[i], s, err)) != OK) break;
        sz[i] = w->fill[i];
        r->allocs++;
    }
    if (rc == OK) rc = do_sync(s, err);
    if (rc == OK) {
        t0 = now_ns();
        deadline = t0 + cap_ns;
        for (i = 0; i < w->steps;) {
            uint32_t v = w->picks[i];
            if ((rc = do_free(mr, ptrs[v], sz[v], s, err)) != OK) break;
            ptrs[v] = NULL;
            r->frees++;
            if ((rc = do_alloc(mr, &ptrs[v], w->sizes[i], s, err)) != OK) break;
            sz[v] = w->sizes[i];
            r->allocs++;
            i++;
            if ((i & CAP_CHECK_MASK) == 0 && now_ns() > deadline) break;
        }
        if (rc == OK) rc = do_sync(s, err);
        r->ns = (double)(now_ns() - t0);
        r->pairs = i;
    }
    for (i = 0; i < w->live; i++) /* what is left, untimed; a failure here only counts */
        if (ptrs[i]) {
            char scratch[ERRLEN];
            if (do_free(mr, ptrs[i], sz[i], s, scratch) == OK) r->frees++;
            else if (rc == OK) {
                fmt(err, ERRLEN, "%s", scratch);
                rc = FAIL;
            }
        }
    (void)rmm_stream_synchronize(s);
    free(ptrs);
    free(sz);
    return rc;
}

/* ---- checks -------------------------------------------------------------------------------- */

/* Lines in a file, and whether its first line is RMM's header; -1 if it cannot be read. */
static long count_lines(const char *path, int *header_ok) {
    static const char header[] = "Thread,Time,Action,Pointer,Size,Stream\n";
    char buf[1 << 16];
    size_t n, total = 0;
    long lines = 0;
    FILE *f = fopen(path, "rb");
    *header_ok = 0;
    if (!f) return -1;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        size_t i;
        if (total == 0) *header_ok = n >= sizeof header - 1 && !memcmp(buf, header, sizeof header - 1);
        for (i = 0; i < n; i++) lines += buf[i] == '\n';
        total += n;
    }
    fclose(f);
    return lines;
}

/* The checks that need the adaptors alive. Appends findings to msg (empty: all is well). */
static void check_live(const stack *s, rmm_resource *pool, const rep *r, char *msg, size_t cap) {
    size_t used = 0, len;
    rmm_pool_info info;
    msg[0] = '\0';
    if (rmm_pool_get_info(pool, &info) == RMM_SUCCESS) used = info.used_bytes;
    if (used != 0) fmt(msg, cap, "pool used_bytes %zu after the run; ", used);
    if (s->stats) {
        rmm_statistics st;
        len = strlen(msg);
        if (rmm_statistics_get(s->stats, &st) != RMM_SUCCESS)
            fmt(msg + len, cap - len, "rmm_statistics_get failed: %s; ", rmm_last_error());
        else if (st.bytes.value != 0 || st.count.value != 0 || st.count.total != (int64_t)r->allocs)
            fmt(msg + len, cap - len, "statistics: bytes %lld, count %lld, total %lld (expected 0, 0, %zu); ", (long long)st.bytes.value,
                (long long)st.count.value, (long long)st.count.total, r->allocs);
    }
    if (s->track) {
        size_t b = 1, c = 1;
        len = strlen(msg);
        if (rmm_tracking_get(s->track, &b, &c) != RMM_SUCCESS || b != 0 || c != 0)
            fmt(msg + len, cap - len, "tracking: %zu bytes in %zu allocations outstanding; ", b, c);
    }
    if (s->limit) {
        size_t a = 1, lim = 0;
        len = strlen(msg);
        if (rmm_limiting_get(s->limit, &a, &lim) != RMM_SUCCESS || a != 0)
            fmt(msg + len, cap - len, "limiting: %zu bytes counted after the run; ", a);
    }
}

/* After the log adaptor is destroyed (file closed): header + one row per event. */
static void check_log(akind k, const rep *r, char *msg, size_t cap) {
    int header_ok = 0;
    long lines;
    size_t len = strlen(msg);
    if (!g_log_paths[k][0]) return;
    lines = count_lines(g_log_paths[k], &header_ok);
    if (lines < 0) fmt(msg + len, cap - len, "log %s cannot be read; ", g_log_paths[k]);
    else if (!header_ok || (size_t)lines != 1 + r->allocs + r->frees)
        fmt(msg + len, cap - len, "log: %ld lines%s (expected 1 + %zu + %zu); ", lines, header_ok ? "" : ", no header", r->allocs, r->frees);
    (void)remove(g_log_paths[k]);
}

static void remove_logs(void) {
    int k;
    for (k = 0; k < NADAPT; k++)
        if (g_log_paths[k][0]) (void)remove(g_log_paths[k]);
}

/* ---- results ------------------------------------------------------------------------------- */

typedef struct result {
    int selected, status; /* status: OK, OOM, FAIL */
    int nreps;
    double per_pair[MAXREPS];
    size_t pairs_sum;
    double median, lo, hi;
    char msg[ERRLEN];   /* why it was skipped */
    char check[ERRLEN]; /* the first failed check */
} result;


/* ---- command line, machine, main ---------------------------------------------------------- */



static void usage(const char *argv0) {
    int k;
    printf("usage: %s [--quick] [--workload NAME[,NAME..]] [--adaptor NAME[,NAME..]] [--reps N]\n"
           "  workloads: lifo_256B churn_small (a prefix selects every workload it starts)\n"
           "  adaptors: ",
           argv0);
    for (k = 0; k < NADAPT; k++) printf("%s%s", ADAPTORS[k], k + 1 < NADAPT ? " " : "\n");
    printf("  (none, the bare pool, always runs: it is the baseline)\n");
}

int main(int argc, char **argv) {
    const char *wfilter = NULL, *afilter = NULL;
    workload ws[2];
    result res[2][NADAPT];
    int nw = 2, i, k, r, reps = 5, quick = 0, checks_failed = 0;
    size_t free_mem = 0, steps_div, pool_bytes;
    uint64_t cap_ns = 1000000000ull, seed = 0xADA7705EEDull;
    rmm_resource *cuda = NULL, *pool = NULL;
    rmm_pool_desc pd;
    char err[ERRLEN];

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--workload") && i + 1 < argc) wfilter = argv[++i];
        else if (!strcmp(argv[i], "--adaptor") && i + 1 < argc) afilter = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            usage(argv[0]);
            return !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ? 0 : 2;
        }
    }
    if (reps < 1) reps = 1;
    if (reps > MAXREPS) reps = MAXREPS;

#ifdef RMM_BACKEND_HOST
    g_host = 1;
#else
    if (!have_device("adaptors")) return 2;
#endif
    if (rmm_available_device_memory(&free_mem, &g_total_mem) != RMM_SUCCESS) {
        fprintf(stderr, "adaptors: %s\n", rmm_last_error());
        return 2;
    }

    steps_div = quick ? 10 : 1;
    memset(ws, 0, sizeof ws);
    ws[0].name = "lifo_256B", ws[0].type = W_LIFO, ws[0].lo = ws[0].hi = 256, ws[0].live = 1, ws[0].steps = 200000 / steps_div;
    ws[1].name = "churn_small", ws[1].type = W_CHURN, ws[1].lo = 256, ws[1].hi = 64 * KIB, ws[1].live = 1000,
    ws[1].steps = 200000 / steps_div;
    for (i = 0; i < nw; i++)
        if (workload_plan(&ws[i], seed++) != OK) {
            fprintf(stderr, "adaptors: out of host memory for the plans\n");
            return 2;
        }
    for (k = 0; k < NADAPT; k++)
        if (k == A_LOG_BUF || k == A_LOG_FLUSH || k == A_LOG_STATS)
            fmt(g_log_paths[k], sizeof g_log_paths[k], "/tmp/rmm_bench_adaptors.%ld.%s.csv", (long)getpid(),
                k == A_LOG_BUF ? "buffered" : k == A_LOG_FLUSH ? "auto_flush" : "chain");

    /* the one pool everything runs over */
    pool_bytes = g_host ? 256 * MIB : GIB;
    pd = rmm_pool_desc_default();
    pd.initial_bytes = pool_bytes;
    pd.growth = RMM_POOL_GROWTH_GEOMETRIC;
    if (rmm_cuda_resource_create(&cuda) != RMM_SUCCESS || rmm_pool_create(&pool, cuda, &pd) != RMM_SUCCESS) {
        fprintf(stderr, "adaptors: cannot make the pool: %s\n", rmm_last_error());
        rmm_resource_destroy(cuda);
        return 2;
    }

    {
        char note[160];
        fmt(note, sizeof note, "\"device\" memory is posix_memalign'ed host memory, capacity %.1f GiB", (double)g_total_mem / (double)GIB);
        print_machine(note);
    }
    printf("# pool: rmm_pool_create over rmm_cuda_resource, initial_bytes %zu MiB, geometric growth; default stream\n", pool_bytes / MIB);
#ifdef RMM_BACKEND_HOST
    printf("# host backend: rmm_cuda_resource is posix_memalign underneath; the pool serves every request without it\n");
#endif
#if !defined(__GLIBC__)
    printf("# no glibc: tracking(stacks) captures no stacks here and is the same as tracking\n");
#endif
    printf("# logs: %s (truncated for each repetition, removed at the end)\n", g_log_paths[A_LOG_BUF]);
    printf("# settings: %s, %d repetitions, median reported; a repetition stops after %.1f s\n",
           quick ? "--quick (10x fewer steps)" : "full", reps, (double)cap_ns / 1e9);
    printf("# ns_per_pair: timed ns / allocate+free pairs; added_ns: minus the bare pool's ns_per_pair; "
           "added_per_event: added_ns / 2; ratio: ns_per_pair / the pool's\n");
    fflush(stdout);

    memset(res, 0, sizeof res);
    for (i = 0; i < nw; i++) {
        workload *w = &ws[i];
        if (!name_selected(w->name, wfilter, 1)) continue;
        for (k = 0; k < NADAPT; k++) res[i][k].selected = k == A_NONE || name_selected(ADAPTORS[k], afilter, 0);
        for (r = 0; r < reps; r++) {
            int j;
            fprintf(stderr, "  running %s, repetition %d of %d ...\n", w->name, r + 1, reps);
            for (j = 0; j < NADAPT; j++) {
                int kk = (j + r) % NADAPT, rc;
                result *x = &res[i][kk];
                stack s;
                rep one;
                char check[ERRLEN];
                if (!x->selected || x->status != OK) continue;
                memset(&one, 0, sizeof one);
                err[0] = '\0';
                rc = stack_make((akind)kk, pool, &s, err);
                if (rc == OK) {
                    rc = w->type == W_LIFO ? run_lifo(s.top, w, cap_ns, &one, err) : run_churn(s.top, w, cap_ns, &one, err);
                    check_live(&s, pool, &one, check, sizeof check);
                    stack_destroy(&s);
                    check_log((akind)kk, &one, check, sizeof check);
                    if (rc == OK && check[0]) {
                        fprintf(stderr, "CHECK FAILED: %s / %s, repetition %d: %s\n", w->name, ADAPTORS[kk], r + 1, check);
                        checks_failed++;
                        if (!x->check[0]) fmt(x->check, sizeof x->check, "%s", check);
                    }
                }
                if (rc != OK) {
                    x->status = rc;
                    fmt(x->msg, sizeof x->msg, "%s", err);
                    fprintf(stderr, "  %s / %s failed: %s\n", w->name, ADAPTORS[kk], err);
                    continue;
                }
                x->per_pair[x->nreps++] = one.pairs ? one.ns / (double)one.pairs : 0.0;
                x->pairs_sum += one.pairs;
            }
        }
        for (k = 0; k < NADAPT; k++) {
            result *x = &res[i][k];
            if (!x->selected || x->status != OK || x->nreps == 0) continue;
            qsort(x->per_pair, (size_t)x->nreps, sizeof x->per_pair[0], cmp_double);
            x->median = x->nreps % 2 ? x->per_pair[x->nreps / 2] : (x->per_pair[x->nreps / 2 - 1] + x->per_pair[x->nreps / 2]) / 2;
            x->lo = x->per_pair[0];
            x->hi = x->per_pair[x->nreps - 1];
        }
    }
    remove_logs();

    printf("%-12s %-20s %12s %10s %16s %14s  %s\n", "workload", "adaptor", "ns_per_pair", "added_ns", "added_per_event", "ratio_vs_pool",
           "extra");
    for (i = 0; i < nw; i++) {
        const result *base = &res[i][A_NONE];
        int have_base = base->selected && base->status == OK && base->nreps > 0;
        for (k = 0; k < NADAPT; k++) {
            const result *x = &res[i][k];
            char ns[32], added[32], per_event[32], ratio[32], extra[2 * ERRLEN + 64];
            if (!x->selected) continue;
            if (x->status == OK && x->nreps > 0) {
                fmt(ns, sizeof ns, "%.1f", x->median);
                if (have_base) {
                    fmt(added, sizeof added, "%.1f", x->median - base->median);
                    fmt(per_event, sizeof per_event, "%.1f", (x->median - base->median) / 2);
                    fmt(ratio, sizeof ratio, "%.3f", base->median > 0 ? x->median / base->median : 0.0);
                } else {
                    fmt(added, sizeof added, "-");
                    fmt(per_event, sizeof per_event, "-");
                    fmt(ratio, sizeof ratio, "-");
                }
                fmt(extra, sizeof extra, "pairs/rep=%zu range=%.1f..%.1f%s%s", x->pairs_sum / (size_t)x->nreps, x->lo, x->hi,
                    x->check[0] ? " CHECK FAILED: " : "", x->check);
            } else {
                fmt(ns, sizeof ns, "%s", x->status == OOM ? "oom" : "error");
                fmt(added, sizeof added, "-");
                fmt(per_event, sizeof per_event, "-");
                fmt(ratio, sizeof ratio, "-");
                fmt(extra, sizeof extra, "skipped: %s", x->msg);
            }
            printf("%-12s %-20s %12s %10s %16s %14s  %s\n", ws[i].name, ADAPTORS[k], ns, added, per_event, ratio, extra);
        }
    }

    printf("csv,workload,adaptor,status,ns_per_pair,added_ns_per_pair,added_ns_per_event,ratio_vs_pool,min_ns_per_pair,max_ns_per_pair,"
           "pairs_per_rep,reps,checks,backend\n");
    for (i = 0; i < nw; i++) {
        const result *base = &res[i][A_NONE];
        int have_base = base->selected && base->status == OK && base->nreps > 0;
        for (k = 0; k < NADAPT; k++) {
            const result *x = &res[i][k];
            if (!x->selected) continue;
            if (x->status == OK && x->nreps > 0) {
                char added[32] = "", per_event[32] = "", ratio[32] = "";
                if (have_base) {
                    fmt(added, sizeof added, "%.2f", x->median - base->median);
                    fmt(per_event, sizeof per_event, "%.2f", (x->median - base->median) / 2);
                    if (base->median > 0) fmt(ratio, sizeof ratio, "%.4f", x->median / base->median);
                }
                printf("csv,%s,%s,ok,%.2f,%s,%s,%s,%.2f,%.2f,%zu,%d,%s,%s\n", ws[i].name, ADAPTORS[k], x->median, added, per_event, ratio, x->lo,
                       x->hi, x->pairs_sum / (size_t)x->nreps, x->nreps, x->check[0] ? "failed" : "ok", g_host ? "host" : "cuda");
            } else {
                printf("csv,%s,%s,%s,,,,,,,,,,%s\n", ws[i].name, ADAPTORS[k], x->status == OOM ? "oom" : "error", g_host ? "host" : "cuda");
            }
        }
    }
    if (checks_failed) printf("# %d check(s) failed: see stderr\n", checks_failed);

    rmm_resource_destroy(pool);
    rmm_resource_destroy(cuda);
    for (i = 0; i < nw; i++) workload_free(&ws[i]);
    return 0;
}
