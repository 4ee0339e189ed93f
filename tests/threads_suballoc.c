/* Threaded tests of the sub-allocators: 16 threads, each on its own stream, hammer one shared pool,
   one shared arena and one binning resource over a pool; blocks are sometimes handed to another
   thread to free (through a mailbox). Every block carries a pattern, checked at free (host backend:
   every byte; CUDA: a few bytes sampled with cudaMemcpy). Validation runs at the end, when no thread
   is mid-call. Also: 16 threads racing rmm_get/set_current_device_resource against allocations, and
   the per-thread last error.

   Built under TSan (host backend) and as plain host and CUDA builds. Threads never use CHECK (the
   harness counters are not atomic): they record failures, and the main thread checks after join. */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "harness.h"
#include "blocks.h"
#include <pthread.h>
#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

#define THREADS 16
#define STEPS (harness_long() ? (UNDER_TSAN ? 8000 : 20000) : (UNDER_TSAN ? 1000 : 2500)) /* make test-long: the long form */
#define LIVE 24
#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* ---- per-thread helpers -------------------------------------------------------------------- */

static unsigned long long rng_next(unsigned long long *state) {
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t rng_below(unsigned long long *state, size_t n) { return n ? (size_t)(rng_next(state) % n) : 0; }
static size_t rng_log_uniform(unsigned long long *state, size_t max) {
    unsigned e = 0, top = 0;
    size_t lo, n, m = max;
    while (m >>= 1) top++;
    e = (unsigned)rng_below(state, top + 1);
    lo = (size_t)1 << e;
    n = lo + rng_below(state, lo);
    return n > max ? max : n;
}


/* Each thread checks its own blocks once their stream is done. */
static int check(const void *p, size_t bytes, unsigned char byte, rmm_stream stream) { return check_block(p, bytes, byte, stream, 0); }

typedef struct tblock {
    void *p;
    size_t bytes, align;
    unsigned char pattern;
    rmm_resource *mr; /* the resource it came from */
} tblock;

/* Blocks handed from one thread to another. */
#define MAILBOX 64
static pthread_mutex_t mailbox_lock = PTHREAD_MUTEX_INITIALIZER;
static tblock mailbox[MAILBOX];
static int mailbox_count;
static int mailbox_post(const tblock *b) {
    int ok = 0;
    pthread_mutex_lock(&mailbox_lock);
    if (mailbox_count < MAILBOX) {
        mailbox[mailbox_count++] = *b;
        ok = 1;
    }
    pthread_mutex_unlock(&mailbox_lock);
    return ok;
}
static int mailbox_take(tblock *b) {
    int ok = 0;
    pthread_mutex_lock(&mailbox_lock);
    if (mailbox_count > 0) {
        *b = mailbox[--mailbox_count];
        ok = 1;
    }
    pthread_mutex_unlock(&mailbox_lock);
    return ok;
}

typedef struct worker {
    rmm_resource *mr;
    int index, steps;
    size_t max_bytes, large_bytes;
    int large_one_in, align_one_in;
    unsigned long long rng;
    /* results */
    int failures, allocations, frees, handed;
    char first[1280];
} worker;

static void worker_fail(worker *w, const char *what, rmm_status st) {
    if (w->failures++ == 0)
        snprintf(w->first, sizeof w->first, "thread %d: %s: %s (%s)", w->index, what, rmm_status_string(st), rmm_last_error());
}

static void free_block(worker *w, const tblock *b, rmm_stream stream, int sample) {
    rmm_status st;
    if (sample && !check(b->p, b->bytes, b->pattern, stream)) worker_fail(w, "a block lost its pattern", RMM_SUCCESS);
    st = rmm_deallocate_aligned(b->mr, b->p, b->bytes, b->align, stream);
    if (st != RMM_SUCCESS) worker_fail(w, "deallocate", st);
    w->frees++;
}

/* The workers' streams: their own from rmm_stream_create (the default), their own from the CUDA
   runtime directly (g_foreign: streams the library did not make, whose frees record events), or
   one such stream shared by all (g_shared). */
static int g_foreign;
static rmm_stream g_shared;

static void *hammer(void *arg) {
    worker *w = (worker *)arg;
    tblock live[LIVE];
    int n = 0, step;
    rmm_stream stream = RMM_STREAM_DEFAULT;
    rmm_status st = g_shared ? RMM_SUCCESS : g_foreign ? rmm__stream_create_raw(&stream, false) : rmm_stream_create(&stream);
    if (g_shared) stream = g_shared;
    if (st != RMM_SUCCESS) {
        worker_fail(w, "rmm_stream_create", st);
        return NULL;
    }
    for (step = 0; step < w->steps; step++) {
        size_t r = rng_below(&w->rng, 100);
        if (n < LIVE && (n == 0 || r < 50)) {
            tblock b;
            b.bytes = rng_log_uniform(&w->rng, w->max_bytes);
            if (w->large_one_in && rng_below(&w->rng, (size_t)w->large_one_in) == 0) b.bytes = w->max_bytes + 1 + rng_below(&w->rng, w->large_bytes - w->max_bytes);
            b.align = w->align_one_in && rng_below(&w->rng, (size_t)w->align_one_in) == 0 ? (size_t)512 << rng_below(&w->rng, 4) : 256;
            b.pattern = (unsigned char)(w->index * 16 + step);
            b.mr = w->mr;
            b.p = NULL;
            st = rmm_allocate_aligned(w->mr, &b.p, b.bytes, b.align, stream);
            if (st != RMM_SUCCESS) {
                worker_fail(w, "allocate", st);
                continue;
            }
            w->allocations++;
            if ((uintptr_t)b.p % b.align != 0) worker_fail(w, "misaligned block", RMM_SUCCESS);
            if (!fill(b.p, b.bytes, b.pattern, stream)) worker_fail(w, "fill", RMM_ERROR_CUDA);
            live[n++] = b;
        } else if (r < 95 || n == LIVE) {
            size_t i = rng_below(&w->rng, (size_t)n);
            tblock b = live[i];
            live[i] = live[--n];
            if (rng_below(&w->rng, 16) == 0) {
                /* hand it to another thread: done on this stream first, then anyone may free it */
                if (rmm_stream_synchronize(stream) == RMM_SUCCESS && mailbox_post(&b)) {
                    w->handed++;
                    continue;
                }
            }
            free_block(w, &b, stream, 1);
        } else {
            tblock b;
            if (mailbox_take(&b)) free_block(w, &b, stream, 1);
        }
    }
    while (n > 0) free_block(w, &live[--n], stream, 1);
    st = rmm_stream_synchronize(stream);
    if (st == RMM_SUCCESS && !g_shared) st = g_foreign ? rmm__stream_destroy_raw(stream) : rmm_stream_destroy(stream);
    if (st != RMM_SUCCESS) worker_fail(w, "stream", st);
    return NULL;
}

/* Runs THREADS workers over mr; then drains the mailbox and validates. */
static void run_hammer(const char *name, rmm_resource *mr, size_t max_bytes, size_t large_bytes, int large_one_in, int align_one_in) {
    pthread_t t[THREADS];
    worker w[THREADS];
    tblock b;
    int i, allocations = 0, frees = 0, handed = 0, failures = 0;
    unsigned long long seed = harness_seed(name, 1234);
    for (i = 0; i < THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].mr = mr;
        w[i].index = i;
        w[i].steps = STEPS;
        w[i].max_bytes = max_bytes;
        w[i].large_bytes = large_bytes;
        w[i].large_one_in = large_one_in;
        w[i].align_one_in = align_one_in;
        w[i].rng = seed * 1000003ull + (unsigned long long)i;
    }
    for (i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, hammer, &w[i]) == 0);
    for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    while (mailbox_take(&b)) {
        CHECK(check(b.p, b.bytes, b.pattern, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_deallocate_aligned(b.mr, b.p, b.bytes, b.align, RMM_STREAM_DEFAULT));
        frees++;
    }
    for (i = 0; i < THREADS; i++) {
        if (w[i].failures) printf("  %s: %d failures; first: %s\n", name, w[i].failures, w[i].first);
        failures += w[i].failures;
        allocations += w[i].allocations;
        frees += w[i].frees;
        handed += w[i].handed;
    }
    CHECK(failures == 0);
    CHECK(allocations == frees);
    CHECK_OK(rmm_resource_validate(mr));
    printf("  %s: %d threads, %d allocations, %d frees (%d handed to another thread)\n", name, THREADS, allocations, frees, handed);
}

TEST(threads_shared_pool) {
    rmm_resource *pool = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_pool_info info;
    NEED_GPU();
    d.initial_bytes = 32 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
    run_hammer("pool", pool, 256 * KiB, 0, 0, 8);
    CHECK_OK(rmm_pool_get_info(pool, &info));
    CHECK(info.used_bytes == 0 && info.free_bytes == info.pool_bytes);
    CHECK_OK(rmm_pool_trim(pool, NULL));
    CHECK_OK(rmm_pool_get_info(pool, &info));
    CHECK(info.pool_bytes == 0);
    CHECK_OK(rmm_pool_validate(pool));
    rmm_resource_destroy(pool);
}

/* run_hammer (blocks up to 256 KiB) with each worker on a foreign stream of its own, then with all
   on one foreign stream. */
static void run_hammer_foreign(const char *what, rmm_resource *mr, int align_one_in) {
    char name[64];
    snprintf(name, sizeof name, "%s, foreign streams", what);
    g_foreign = 1;
    run_hammer(name, mr, 256 * KiB, 0, 0, align_one_in);
    g_foreign = 0;
    snprintf(name, sizeof name, "%s, one foreign stream", what);
    CHECK_OK(rmm__stream_create_raw(&g_shared, false));
    run_hammer(name, mr, 256 * KiB, 0, 0, align_one_in);
    CHECK_OK(rmm_stream_synchronize(g_shared));
    CHECK_OK(rmm__stream_destroy_raw(g_shared));
    g_shared = NULL;
}

/* The same on streams the library did not make: each free records an event (the first 256 on a
   stream), or parks in the stream's ring, and the event that covers a ring is recorded with the
   pool's lock let go (rmm__pool_cover_unlocked); then with all 16 threads on one such stream, whose
   ring other threads' frees enter while one thread records. */
TEST(threads_pool_foreign_streams) {
    rmm_resource *pool = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_pool_info info;
    NEED_GPU();
    d.initial_bytes = 32 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &d));
    run_hammer_foreign("pool", pool, 8);
    CHECK_OK(rmm_pool_get_info(pool, &info));
    CHECK(info.used_bytes == 0);
    CHECK_OK(rmm_pool_validate(pool));
    rmm_resource_destroy(pool);
}
/* The fixed-size resource likewise (its stack's uncovered top, covered by an unlocked record). */
TEST(threads_fixed_foreign_streams) {
    rmm_resource *fixed = NULL;
    rmm_fixed_size_desc d = rmm_fixed_size_desc_default();
    NEED_GPU();
    d.block_bytes = 256 * KiB;
    d.blocks_to_preallocate = 64;
    CHECK_OK(rmm_fixed_size_create(&fixed, rmm_get_current_device_resource(), &d));
    run_hammer_foreign("fixed-size", fixed, 0); /* (alignments past 256: only as far as a chunk's base) */
    CHECK_OK(rmm_resource_validate(fixed));
    rmm_resource_destroy(fixed);
}

/* An arena of 128 MiB in superblocks of 1 MiB, for the hammers below; NULL if it cannot be made. */
static rmm_resource *hammer_arena(void) {
    rmm_resource *arena = NULL;
    rmm_arena_desc d = rmm_arena_desc_default();
    d.arena_bytes = 128 * MiB;
    d.superblock_bytes = MiB;
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &d));
    return arena;
}
/* Everything came back: the whole of hammer_arena's arena is one allocation away; then destroys it. */
static void check_arena_whole_and_destroy(rmm_resource *arena) {
    void *all = NULL;
    CHECK_OK(rmm_allocate(arena, &all, 128 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(arena, all, 128 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_validate(arena));
    rmm_resource_destroy(arena);
}

TEST(threads_shared_arena) {
    rmm_resource *arena;
    NEED_GPU();
    if (!(arena = hammer_arena())) return;
    run_hammer("arena", arena, 256 * KiB, 3 * MiB, 64, 0);
    check_arena_whole_and_destroy(arena);
}

/* The arena on streams the library did not make: each worker's frees wait pending in its stream's
   arena until one event covers a batch, its allocations take memory known done with no id asked
   (rmm__arena_idless_local); then all threads on one such stream, whose pending batch several
   threads fill and cover. Blocks handed to another thread are freed there (a host synchronize
   first, as always for the arena). After everything is freed the whole arena comes back. */
TEST(threads_arena_foreign_streams) {
    rmm_resource *arena;
    NEED_GPU();
    if (!(arena = hammer_arena())) return;
    run_hammer_foreign("arena", arena, 0);
    check_arena_whole_and_destroy(arena);
}

/* A dump of the arena while a worker's frees on a foreign stream fill batch after batch: the free
   that fills one lets the arena's lock go while it asks the stream's id, its block on no list
   (in flight), and the dump walks that block's chunk then. (It read the block's mark as a stream
   state, and crashed, until 2026-11-28.) */
typedef struct dump_job {
    rmm_resource *arena;
    rmm_stream stream;
    int done, stop, failures, pairs;
} dump_job;
static void *dump_worker(void *arg) {
    dump_job *job = (dump_job *)arg;
    int i;
    for (i = 0; i < job->pairs && !RMM__ATOMIC_LOAD(&job->stop); i++) {
        void *p = NULL;
        if (rmm_allocate(job->arena, &p, 256, job->stream) != RMM_SUCCESS || rmm_deallocate(job->arena, p, 256, job->stream) != RMM_SUCCESS) {
            job->failures++;
            break;
        }
    }
    RMM__ATOMIC_STORE(&job->done, 1);
    return NULL;
}
TEST(threads_arena_dump_while_batches_fill) {
    rmm_arena_desc d = rmm_arena_desc_default();
    dump_job job;
    pthread_t t;
    FILE *sink;
    long dumps = 0;
    NEED_GPU();
    memset(&job, 0, sizeof job);
    d.arena_bytes = 64 * MiB;
    d.superblock_bytes = MiB;
    job.pairs = 2000000;
    CHECK_OK(rmm_arena_create(&job.arena, rmm_get_current_device_resource(), &d));
    CHECK_OK(rmm__stream_create_raw(&job.stream, false));
    sink = fopen("/dev/null", "w");
    CHECK(sink != NULL);
    if (!job.arena || !sink) return;
    CHECK(pthread_create(&t, NULL, dump_worker, &job) == 0);
    while (!RMM__ATOMIC_LOAD(&job.done) && dumps < 20000) { /* (the old code crashed within that, 4 runs of 4) */
        CHECK_OK(rmm_resource_dump_json(job.arena, sink));
        dumps++;
    }
    RMM__ATOMIC_STORE(&job.stop, 1);
    pthread_join(t, NULL);
    fclose(sink);
    printf("  %ld dumps while the worker's pairs ran (at most %d)\n", dumps, job.pairs);
    CHECK(job.failures == 0 && dumps > 0);
    CHECK_OK(rmm_resource_validate(job.arena));
    rmm_resource_destroy(job.arena);
    CHECK_OK(rmm__stream_destroy_raw(job.stream));
}

TEST(threads_binning_over_pool) {
    rmm_resource *pool = NULL, *bin = NULL;
    rmm_binning_desc d = rmm_binning_desc_default();
    rmm_pool_info info;
    NEED_GPU();
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
    d.min_size_exponent = 10;
    d.max_size_exponent = 16;
    CHECK_OK(rmm_binning_create(&bin, pool, &d));
    run_hammer("binning", bin, 256 * KiB, 0, 0, 8); /* bins made lazily, by racing threads */
    CHECK_OK(rmm_pool_validate(pool));
    rmm_resource_destroy(bin);
    CHECK_OK(rmm_pool_get_info(pool, &info));
    CHECK(info.used_bytes == 0);
    CHECK_OK(rmm_pool_validate(pool));
    rmm_resource_destroy(pool);
}

/* ---- the current device resource, raced ------------------------------------------------------- */

typedef struct current_job {
    rmm_resource *choices[3]; /* NULL resets to the library default */
    int index, steps, use_null;
    unsigned long long rng;
    int failures, sets, allocations;
    char first[1280];
} current_job;
static void current_fail(current_job *j, const char *what, rmm_status st) {
    if (j->failures++ == 0)
        snprintf(j->first, sizeof j->first, "thread %d: %s: %s (%s)", j->index, what, rmm_status_string(st), rmm_last_error());
}
static void *race_current(void *arg) {
    current_job *j = (current_job *)arg;
    tblock live[8];
    int n = 0, step;
    for (step = 0; step < j->steps; step++) {
        size_t r = rng_below(&j->rng, 100);
        if (!j->use_null && r < 10) {
            rmm_resource *want = j->choices[rng_below(&j->rng, 3)];
            rmm_resource *prev = rmm_set_current_device_resource(want);
            if (!prev) current_fail(j, "rmm_set_current_device_resource returned NULL", rmm_last_status());
            j->sets++;
        } else if (n < 8 && r < 60) {
            tblock b;
            rmm_status st;
            b.bytes = rng_log_uniform(&j->rng, 64 * KiB);
            b.align = 256;
            b.pattern = (unsigned char)(j->index + step);
            b.p = NULL;
            if (j->use_null) {
                /* the current resource is not changing now: NULL names it */
                b.mr = NULL;
                st = rmm_allocate(NULL, &b.p, b.bytes, RMM_STREAM_DEFAULT);
            } else {
                /* it may change at any moment: free through the resource that allocated */
                b.mr = rmm_get_current_device_resource();
                if (!b.mr) {
                    current_fail(j, "rmm_get_current_device_resource returned NULL", rmm_last_status());
                    continue;
                }
                st = rmm_allocate(b.mr, &b.p, b.bytes, RMM_STREAM_DEFAULT);
            }
            if (st != RMM_SUCCESS) {
                current_fail(j, "allocate", st);
                continue;
            }
            j->allocations++;
            if (!fill(b.p, b.bytes, b.pattern, RMM_STREAM_DEFAULT)) current_fail(j, "fill", RMM_ERROR_CUDA);
            live[n++] = b;
        } else if (n > 0) {
            size_t i = rng_below(&j->rng, (size_t)n);
            tblock b = live[i];
            rmm_status st;
            live[i] = live[--n];
            if (!check(b.p, b.bytes, b.pattern, RMM_STREAM_DEFAULT)) current_fail(j, "a block lost its pattern", RMM_SUCCESS);
            st = rmm_deallocate(b.mr, b.p, b.bytes, RMM_STREAM_DEFAULT);
            if (st != RMM_SUCCESS) current_fail(j, "deallocate", st);
        }
    }
    while (n > 0) {
        tblock b = live[--n];
        rmm_status st = rmm_deallocate(b.mr, b.p, b.bytes, RMM_STREAM_DEFAULT);
        if (st != RMM_SUCCESS) current_fail(j, "deallocate", st);
    }
    return NULL;
}
static void run_current_race(rmm_resource *a, rmm_resource *b, int use_null) {
    pthread_t t[THREADS];
    current_job j[THREADS];
    int i, failures = 0, sets = 0, allocations = 0;
    for (i = 0; i < THREADS; i++) {
        memset(&j[i], 0, sizeof j[i]);
        j[i].choices[0] = a;
        j[i].choices[1] = b;
        j[i].choices[2] = NULL;
        j[i].index = i;
        j[i].steps = STEPS;
        j[i].use_null = use_null;
        j[i].rng = 777ull + (unsigned long long)i * 31ull;
    }
    for (i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, race_current, &j[i]) == 0);
    for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (i = 0; i < THREADS; i++) {
        if (j[i].failures) printf("  %d failures; first: %s\n", j[i].failures, j[i].first);
        failures += j[i].failures;
        sets += j[i].sets;
        allocations += j[i].allocations;
    }
    CHECK(failures == 0);
    printf("  %s: %d allocations, %d resource switches\n", use_null ? "rmm_allocate(NULL)" : "get/set racing", allocations, sets);
}
TEST(threads_current_device_resource) {
    rmm_resource *a = NULL, *b = NULL, *def;
    rmm_pool_info info;
    NEED_GPU();
    def = rmm_get_current_device_resource();
    CHECK(def != NULL);
    CHECK_OK(rmm_pool_create(&a, def, NULL));
    CHECK_OK(rmm_pool_create(&b, def, NULL));
    run_current_race(a, b, 0);
    /* a stable current resource (a pool), used through NULL by every thread */
    rmm_set_current_device_resource(a);
    run_current_race(a, b, 1);
    CHECK(rmm_set_current_device_resource(NULL) == a);
    CHECK(rmm_get_current_device_resource() == def);
    CHECK_OK(rmm_pool_validate(a));
    CHECK_OK(rmm_pool_validate(b));
    CHECK_OK(rmm_pool_get_info(a, &info));
    CHECK(info.used_bytes == 0);
    CHECK_OK(rmm_pool_get_info(b, &info));
    CHECK(info.used_bytes == 0);
    rmm_resource_destroy(a);
    rmm_resource_destroy(b);
}

/* ---- the last error is per thread --------------------------------------------------------------- */

typedef struct error_job {
    int index;
    char seen_at_start[64];
    rmm_status status_at_start;
    int own_message_ok;
} error_job;
static void *fresh_thread_errors(void *arg) {
    error_job *j = (error_job *)arg;
    void *p = NULL;
    char want[32];
    int k;
    rmm__copy_text(j->seen_at_start, sizeof j->seen_at_start, rmm_last_error());
    j->status_at_start = rmm_last_status();
    /* a failure of its own, named by a number only this thread uses */
    j->own_message_ok = 1;
    snprintf(want, sizeof want, "alignment=%d)", 3 + 2 * j->index);
    for (k = 0; k < 200; k++) {
        if (rmm_allocate_aligned(NULL, &p, 100, (size_t)(3 + 2 * j->index), RMM_STREAM_DEFAULT) != RMM_ERROR_INVALID_ARGUMENT ||
            rmm_last_status() != RMM_ERROR_INVALID_ARGUMENT || strstr(rmm_last_error(), want) == NULL)
            j->own_message_ok = 0;
    }
    return NULL;
}
TEST(threads_last_error_is_per_thread) {
    pthread_t t[THREADS];
    error_job j[THREADS];
    char mine[512];
    rmm_resource *mr = NULL;
    int i;
    CHECK_STATUS(rmm_pool_create(&mr, NULL, NULL), RMM_ERROR_INVALID_ARGUMENT);
    CHECK(rmm_last_error()[0] != '\0');
    rmm__copy_text(mine, sizeof mine, rmm_last_error());
    for (i = 0; i < THREADS; i++) {
        memset(&j[i], 0, sizeof j[i]);
        j[i].index = i;
        CHECK(pthread_create(&t[i], NULL, fresh_thread_errors, &j[i]) == 0);
    }
    for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (i = 0; i < THREADS; i++) {
        CHECK(j[i].seen_at_start[0] == '\0');
        CHECK(j[i].status_at_start == RMM_SUCCESS);
        CHECK(j[i].own_message_ok);
    }
    /* this thread's message is untouched by theirs */
    CHECK(strcmp(rmm_last_error(), mine) == 0);
    CHECK(rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT);
}

int main(void) {
    HARNESS_INIT();
    printf("backend: %s, %d threads x %d steps%s\n", RMM__BACKEND_NAME, THREADS, STEPS, UNDER_TSAN ? " (TSan)" : "");
    RUN(threads_last_error_is_per_thread);
    RUN(threads_shared_pool);
    RUN(threads_pool_foreign_streams);
    RUN(threads_fixed_foreign_streams);
    RUN(threads_shared_arena);
    RUN(threads_arena_foreign_streams);
    RUN(threads_arena_dump_while_batches_fill);
    RUN(threads_binning_over_pool);
    RUN(threads_current_device_resource);
    return harness_main_end();
}
