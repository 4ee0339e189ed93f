/* tests/test_capture_fuzz.c - graph capture fuzzed together with pools, rmm_record_stream and
   injected faults, checked against the stream-order model of tests/test_stream_order.c.

   Each seed is one random program of 800 steps on one pool (geometric or on-demand growth over the
   default resource, or virtual growth with an extent of 0, 2 or 4 MiB) under a statistics adaptor,
   with six stream slots: the legacy default stream, a stream the library made, three foreign
   streams (cudaStreamCreate; destroyed with work pending and made again, often at the same handle)
   and the per-thread default stream. The steps: allocate and free, through the pool or the adaptor
   (a free now and then on another stream, behind the user's wait or synchronize); bursts of
   48-191 allocations and frees of one small size on one stream (its ring: RMM__POOL_RING_AFTER
   frees earn it), one of them, now and then, right after a foreign stream is destroyed with work
   pending, on the stream made next at its handle (the id-less path, rmm__pool_take_covered);
   rmm_record_stream; rmm_capture_begin and rmm_capture_end on any slot but the legacy stream,
   several at once, with one graph pool (over the pool or the default resource, a reserve of 0 to 3
   MiB; destroyed and made again between captures); the device making progress; rmm_pool_trim,
   rmm_pool_set_maximum, rmm_resource_dump_json, rmm_resource_validate; destroys that must be
   refused (a library stream registered for capture, a resource a deferred free awaits). A stream
   is destroyed only while no block is recorded on it (the block's free records its event there). With
   faults, one step in six runs with a fault armed: one of the library's host allocations
   (RMM_SYS_MALLOC, RMM_SYS_REALLOC) or of its simulated CUDA calls (rmm_host_backend_fail_calls)
   fails.

   Checked after every step: a block handed to a stream not registered for capture against the last
   use of its bytes (the model: no early hand-over; blocks of a capture are the graph's and are not
   checked); a block allocated on a registered stream is the graph pool's and one allocated on
   another stream is not; a call made correctly fails with nothing but OUT_OF_MEMORY or CUDA (never
   INVALID_ARGUMENT or CORRUPTION), and a failed allocation leaves *ptr NULL; a failed free leaves
   its block live; a free on a registered stream (or of a block recorded on one) is deferred, and
   made at that registration's end unless another registration still holds it, never lost; no
   event is recorded or waited for on a stream registered for capture and none is synchronized (in
   CUDA that would be captured, or end the capture); the pool is valid (rmm_resource_validate). At
   the end of a seed: every capture ended, no graph pool pending, the pool's used bytes 0 and the
   pool valid, the host backend's device memory all back, and (ASan) nothing leaked.

   48 seeds, 1 to 48: seed % 3 picks the growth and (seed / 3) % 2 whether faults are injected, so
   each of the six cases runs 8 seeds; make test-long (RMM_TEST_LONG=1) runs seeds 1 to 480. A
   failure names its seed and step; RMM_TEST_SEED=N runs seed N alone (in the case it belongs to).
   10 to 14 s under ASan and UBSan with RMM_DEBUG on a two-core machine, 4 to 7 s without (make test
   runs both builds, build/host and build/host-release). Host backend only: a CUDA build skips
   every case, saying why. (It began as a session's throwaway harness.) */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1
#include <stdarg.h>
#include <stdlib.h>
#include "host_fail.h" /* host memory that runs out on purpose (host_fail_nth) */
#define STREAM_ORDER_MODEL_ONLY /* the model, the checker and their helpers; not its cases */
#include "test_stream_order.c"

#if defined(RMM_BACKEND_HOST)
/* ---- the failures: each names its seed and step -------------------------------------------- */
static unsigned long long cf_seed;
static long cf_op;
static const char *cf_step = "";
static int cf_failures; /* in this seed */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void cf_fail(int line, const char *fmt, ...) {
    va_list ap;
    harness_checks_failed_in_test++;
    if (cf_failures++ >= 5) return; /* (the first few say enough) */
    printf("  %s:%d: seed %llu step %ld (%s): ", __FILE__, line, cf_seed, cf_op, cf_step);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}
#define FUZZ_CHECK(cond, ...)                                   \
    do {                                                        \
        if (!(cond)) cf_fail(__LINE__, __VA_ARGS__);            \
    } while (0)
/* a valid call's failure may only be the faults' (or a full pool's) */
static int bad_status(rmm_status st) { return st == RMM_ERROR_INVALID_ARGUMENT || st == RMM_ERROR_CORRUPTION; }

static uint64_t cf_rs;
static uint64_t cf_rnd(void) { /* xorshift64: each seed's own sequence */
    cf_rs ^= cf_rs << 13;
    cf_rs ^= cf_rs >> 7;
    cf_rs ^= cf_rs << 17;
    return cf_rs;
}

/* ---- the slots and what the program knows of them ------------------------------------------ */
#define SLOTS 6 /* 0 the legacy default stream, 1 made by the library, 2..4 foreign, 5 per-thread */
#define MAXBLOCKS 200
static rmm_stream slot_stream[SLOTS];
static int registered[SLOTS];           /* registered for capture (by this program) */
static uint64_t registered_serial[SLOTS]; /* its stream then (rmm_host_backend_stream_serial) */
static size_t burst_bytes[SLOTS];       /* the size of its last burst (0: none yet) */
typedef struct live_block {
    void *p;
    size_t n;
    int slot;  /* where it was last used */
    int graph; /* allocated on a registered stream: the graph pool's */
    int via;   /* allocated through the pool (0) or the adaptor (1) */
    unsigned recorded; /* the slots it was recorded on (rmm_record_stream): not destroyed before its free */
} live_block;
typedef struct deferred_block { /* freed, the free deferred to a registration's end */
    void *p;
    size_t n;
    int slot; /* the stream it was freed on */
    int via;
    unsigned recorded;
} deferred_block;
static live_block live[MAXBLOCKS];
static int nlive;
static deferred_block deferred[MAXBLOCKS];
static int ndeferred;

/* ---- no event, wait or synchronize on a registered stream: the model, watched -------------- */
static long capture_touches;
static char capture_touch[160];
static int is_registered(rmm_stream s) {
    uint64_t serial = rmm_host_backend_stream_serial(s);
    int i;
    for (i = 0; i < SLOTS; i++)
        if (registered[i] && serial && registered_serial[i] == serial) return 1;
    return 0;
}
static void touched(const char *what, rmm_stream s) {
    capture_touches++;
    snprintf(capture_touch, sizeof capture_touch, "%s stream %p, registered for capture", what, (void *)s);
}
static void w_event_record(void *user, const void *event, rmm_stream s) {
    if (is_registered(s)) touched("an event recorded on", s);
    model.event_record(user, event, s);
}
static void w_stream_wait_event(void *user, rmm_stream s, const void *event) {
    if (is_registered(s)) touched("a wait on", s);
    model.stream_wait_event(user, s, event);
}
static void w_stream_synchronize(void *user, rmm_stream s) {
    if (is_registered(s)) touched("a synchronize of", s);
    model.stream_synchronize(user, s);
}
static rmm_host_stream_model watched_model;

/* ---- faults ----------------------------------------------------------------------------------- */
static const char *const fault_calls[] = {"cuMemMap", "cuMemSetAccess", "cuMemUnmap", "cuMemCreate", "cuMemAddressReserve", "cudaEventRecord",
                                          "cudaStreamWaitEvent", "cudaEventCreateWithFlags", "cudaStreamSynchronize", "cudaDeviceSynchronize",
                                          "cudaEventQuery", "cudaEventSynchronize", "cudaStreamGetId", "cudaMalloc", "cudaFree", "cudaGetDevice",
                                          "cudaSetDevice", "cudaThreadExchangeStreamCaptureMode"};
static int with_faults, armed, graph_memory_may_go;
/* With faults, one step in six: the library's nth host allocation from now (1 in 4), or the nth
   call of one CUDA call (once or twice; OUT_OF_MEMORY or CUDA), fails. None while a graph pool's
   memory may go back upstream (its destroy, or any step while a destroyed one still holds memory):
   a chunk whose return fails stays its upstream's for good, logged at ERROR, as
   rmm_graph_pool_destroy says (found here: a 3 MiB reserve left used in the pool, or lost to a
   failed cudaFree), and the checks at the end would count it. */
static void arm(void) {
    if (!with_faults || !armed || graph_memory_may_go || rmm_graph_pools_pending(NULL) != 0) return;
    if (cf_rnd() % 4 == 0) {
        host_fail_nth = 1 + (int)(cf_rnd() % 6);
    } else {
        const char *call = fault_calls[cf_rnd() % (sizeof fault_calls / sizeof *fault_calls)];
        unsigned nth = 1 + (unsigned)(cf_rnd() % 4), times = 1 + (unsigned)(cf_rnd() % 2);
        rmm_host_backend_fail_calls(call, nth, times, (cf_rnd() & 1) ? RMM_ERROR_OUT_OF_MEMORY : RMM_ERROR_CUDA);
    }
}
static void disarm(void) {
    rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
    host_fail_nth = 0;
}

/* A burst of one small size on slot s, each block used there and freed at once: its stream earns
   its ring (RMM__POOL_RING_AFTER frees), then parks its frees there and takes blocks of the size
   back from the quick lists with no id asked once their event is seen done (rmm__pool_take_covered). */
static void burst(rmm_resource *mr, int s, size_t n) {
    int k, count = 48 + (int)(cf_rnd() % 144);
    burst_bytes[s] = n;
    for (k = 0; k < count; k++) {
        void *p = NULL;
        rmm_status st = alloc_use(mr, &p, n, slot_stream[s]);
        if (st != RMM_SUCCESS) {
            FUZZ_CHECK(!bad_status(st), "allocating %zu bytes in a burst on slot %d returned %s (%s)", n, s, rmm_status_string(st), rmm_last_error());
            return;
        }
        FUZZ_CHECK(free_ok(mr, p, n, slot_stream[s]), "freeing %p+%zu in a burst on slot %d failed", p, n, s);
        if (cf_rnd() % 50 == 0) progress(cf_rnd());
    }
}

/* p is a live block of pool (through an adaptor too) */
static int pool_live(rmm_resource *pool, void *p) {
    void *base;
    size_t offset;
    rmm_status st = rmm_resource_allocation_base(pool, p, &base, &offset);
    return st == RMM_SUCCESS || st == RMM_ERROR_NOT_SUPPORTED;
}
/* p's free waits in a graph pool's deferred list */
static int pending(void *p) {
    rmm_graph_pool *g;
    size_t i;
    for (g = rmm__graph_pools; g; g = g->next)
        for (i = 0; i < g->ndeferred; i++)
            if (g->deferred[i].ptr == p) return 1;
    return 0;
}

enum { GEOMETRIC, ON_DEMAND, VIRTUAL };
static const char *const growth_name[3] = {"geometric", "on demand", "virtual"};

/* ---- one program ------------------------------------------------------------------------------ */
static void fuzz(unsigned long long seed, long steps) {
    rmm_resource *pool = NULL, *stats = NULL, *via[2];
    rmm_graph_pool *gp = NULL;
    rmm_pool_desc d = rmm_pool_desc_default();
    rmm_pool_info info;
    size_t device_before = 0, device_after = 0, total = 0;
    int growth = (int)(seed % 3), i, j;
    long violations_before = violations;
    rmm_status st;
    char where_buf[96];
    FILE *devnull = fopen("/dev/null", "w");
    cf_seed = seed;
    cf_op = -1;
    cf_step = "setup";
    cf_failures = 0;
    with_faults = (int)((seed / 3) % 2);
    cf_rs = seed * 2654435761u + 7;
    snprintf(where_buf, sizeof where_buf, "seed %llu, %s growth%s", seed, growth_name[growth], with_faults ? ", faults" : "");
    where = where_buf;
    CHECK(devnull != NULL);
    CHECK_OK(rmm_available_device_memory(&device_before, &total));
    d.maximum_bytes = 64 * MiB;
    if (growth == ON_DEMAND) d.growth = RMM_POOL_GROWTH_ON_DEMAND;
    if (growth == VIRTUAL) {
        d.growth = RMM_POOL_GROWTH_VIRTUAL;
        d.virtual_bytes = 256 * MiB;
        d.virtual_extent_bytes = (size_t)(cf_rnd() % 3) * 2 * MiB;
    }
    CHECK_OK(rmm_pool_create(&pool, growth == VIRTUAL ? NULL : rmm_get_current_device_resource(), &d));
    if (!pool || !devnull) return;
    CHECK_OK(rmm_statistics_adaptor_create(&stats, pool));
    via[0] = pool;
    via[1] = stats;
    slot_stream[0] = RMM_STREAM_DEFAULT;
    CHECK_OK(rmm_stream_create(&slot_stream[1]));
    for (i = 2; i < 5; i++) slot_stream[i] = foreign();
    slot_stream[5] = RMM_STREAM_PER_THREAD;
    memset(registered, 0, sizeof registered);
    memset(burst_bytes, 0, sizeof burst_bytes);
    nlive = ndeferred = 0;
    for (cf_op = 0; cf_op < steps; cf_op++) {
        uint64_t r = cf_rnd() % 1000;
        long v = violations, touches = capture_touches;
        armed = with_faults && cf_rnd() % 6 == 0;
        if (r < 350) { /* allocate */
            int s = (int)(cf_rnd() % SLOTS), through = (int)(cf_rnd() % 2);
            size_t n = (cf_rnd() % 3 == 0) ? (size_t)(cf_rnd() % (6 * MiB)) + 1 : (size_t)(cf_rnd() % 70000) + 1;
            void *p = NULL;
            cf_step = "allocate";
            if (nlive == MAXBLOCKS) goto validate;
            arm();
            /* (checked against the model and used on its stream, unless that is registered) */
            st = registered[s] ? rmm_allocate(via[through], &p, n, slot_stream[s]) : alloc_use(via[through], &p, n, slot_stream[s]);
            disarm();
            if (st == RMM_SUCCESS) {
                live[nlive].p = p;
                live[nlive].n = n;
                live[nlive].slot = s;
                live[nlive].graph = registered[s];
                live[nlive].via = through;
                live[nlive].recorded = 0;
                nlive++;
                FUZZ_CHECK(!registered[s] || rmm__graph_owns(p), "%p+%zu allocated on slot %d, registered for capture, is not the graph pool's", p, n, s);
                FUZZ_CHECK(registered[s] || !rmm__graph_owns(p), "%p+%zu allocated on slot %d, not registered, is the graph pool's", p, n, s);
            } else {
                FUZZ_CHECK(!bad_status(st), "allocating %zu bytes on slot %d returned %s (%s)", n, s, rmm_status_string(st), rmm_last_error());
                FUZZ_CHECK(p == NULL, "a failed allocation left *ptr %p (%s)", p, rmm_last_error());
            }
        } else if (r < 650) { /* free, now and then on another stream than the block's */
            int k, s;
            live_block b;
            if (!nlive) goto validate;
            k = (int)(cf_rnd() % (uint64_t)nlive);
            b = live[k];
            s = b.slot;
            if (cf_rnd() % 5 == 0) {
                s = (int)(cf_rnd() % SLOTS);
                if (s != b.slot && !registered[s] && !registered[b.slot]) { /* the user orders s after the block's uses, and uses it there */
                    if (cf_rnd() & 1) user_wait(slot_stream[s], slot_stream[b.slot]);
                    else CHECK_OK(rmm_stream_synchronize(slot_stream[b.slot]));
                    chk_use(b.p, b.n, slot_stream[s]);
                } else if (s != b.slot) {
                    user_wait(slot_stream[s], slot_stream[b.slot]);
                }
            }
            cf_step = "free";
            arm();
            st = rmm_deallocate(via[b.via], b.p, b.n, slot_stream[s]);
            disarm();
            if (st == RMM_SUCCESS) {
                live[k] = live[--nlive];
                if (!b.graph && (registered[s] || pool_live(pool, b.p))) { /* deferred: freed on a registered stream, or recorded on one */
                    int any = 0;
                    for (j = 0; j < SLOTS; j++) any |= registered[j];
                    FUZZ_CHECK(any, "%p+%zu freed on slot %d with no capture registered, and still live", b.p, b.n, s);
                    if (any) {
                        deferred[ndeferred].p = b.p;
                        deferred[ndeferred].n = b.n;
                        deferred[ndeferred].slot = s;
                        deferred[ndeferred].via = b.via;
                        deferred[ndeferred].recorded = b.recorded;
                        ndeferred++;
                    }
                }
            } else {
                FUZZ_CHECK(!bad_status(st), "freeing %p+%zu on slot %d returned %s (%s)", b.p, b.n, s, rmm_status_string(st), rmm_last_error());
                live[k].slot = s;
                FUZZ_CHECK(b.graph || pool_live(pool, b.p), "a failed free of %p+%zu left it not live", b.p, b.n);
            }
        } else if (r < 720) { /* capture begin (the graph pool made first, if there is none) */
            int s = 1 + (int)(cf_rnd() % (SLOTS - 1));
            cf_step = "capture begin";
            if (!gp) {
                int over_pool = (int)(cf_rnd() & 1);
                size_t reserve = (size_t)(cf_rnd() % 4) * MiB;
                arm();
                st = rmm_graph_pool_create(&gp, over_pool ? pool : NULL, reserve);
                disarm();
                if (st != RMM_SUCCESS) {
                    FUZZ_CHECK(!bad_status(st), "rmm_graph_pool_create returned %s (%s)", rmm_status_string(st), rmm_last_error());
                    gp = NULL;
                    goto validate;
                }
            }
            if (registered[s]) goto validate;
            arm();
            st = rmm_capture_begin(gp, slot_stream[s]);
            disarm();
            if (st == RMM_SUCCESS) {
                registered[s] = 1;
                registered_serial[s] = rmm_host_backend_stream_serial(slot_stream[s]);
            } else {
                FUZZ_CHECK(!bad_status(st), "rmm_capture_begin on slot %d returned %s (%s)", s, rmm_status_string(st), rmm_last_error());
            }
        } else if (r < 790) { /* capture end: its deferred frees made, or still pending for another */
            int s = 1 + (int)(cf_rnd() % (SLOTS - 1));
            if (!registered[s]) goto validate;
            cf_step = "capture end";
            registered[s] = 0;
            arm();
            st = rmm_capture_end(gp, slot_stream[s]);
            disarm();
            if (st != RMM_SUCCESS) { /* OUT_OF_MEMORY, CUDA: still registered; a deferred free that failed: ended anyway */
                FUZZ_CHECK(!bad_status(st), "rmm_capture_end on slot %d returned %s (%s)", s, rmm_status_string(st), rmm_last_error());
                if (rmm__graph_stream_registered(slot_stream[s]) || (s == 5 && rmm_capture_begin(gp, slot_stream[s]) == RMM_ERROR_INVALID_ARGUMENT))
                    registered[s] = 1;
                else if (s == 5) /* (the begin just made went through: it had ended) */
                    CHECK_OK(rmm_capture_end(gp, slot_stream[s]));
            }
            for (j = 0; j < ndeferred; j++) {
                int still = pool_live(pool, deferred[j].p);
                if (still && pending(deferred[j].p)) continue; /* another registration's */
                if (still) { /* its free failed at the end: the block is the caller's again */
                    FUZZ_CHECK(st != RMM_SUCCESS, "the deferred free of %p+%zu (freed on slot %d) was not made at the end, nor is it pending",
                               deferred[j].p, deferred[j].n, deferred[j].slot);
                    if (nlive < MAXBLOCKS) {
                        live[nlive].p = deferred[j].p;
                        live[nlive].n = deferred[j].n;
                        live[nlive].slot = deferred[j].slot;
                        live[nlive].graph = 0;
                        live[nlive].via = deferred[j].via;
                        live[nlive].recorded = deferred[j].recorded;
                        nlive++;
                    }
                }
                deferred[j--] = deferred[--ndeferred];
            }
        } else if (r < 830) { /* record stream: a block used on another stream too */
            int k, t;
            if (!nlive) goto validate;
            k = (int)(cf_rnd() % (uint64_t)nlive);
            t = (int)(cf_rnd() % SLOTS);
            cf_step = "record stream";
            if (!registered[t] && !live[k].graph && !registered[live[k].slot]) {
                user_wait(slot_stream[t], slot_stream[live[k].slot]);
                chk_use(live[k].p, live[k].n, slot_stream[t]);
            }
            arm();
            st = rmm_record_stream(via[cf_rnd() & 1], live[k].p, live[k].n, slot_stream[t]);
            disarm();
            live[k].recorded |= 1u << t; /* (a failed record too: the stream stays, to be safe) */
            if (st != RMM_SUCCESS) {
                FUZZ_CHECK(!bad_status(st), "rmm_record_stream of %p+%zu on slot %d returned %s (%s)", live[k].p, live[k].n, t, rmm_status_string(st), rmm_last_error());
                if (!registered[t]) CHECK_OK(rmm_stream_synchronize(slot_stream[t])); /* not recorded: the user waits for the use */
            }
        } else if (r < 860) { /* the device makes progress */
            progress(cf_rnd());
            progress(cf_rnd());
        } else if (r < 875) {
            size_t released;
            cf_step = "trim";
            arm();
            st = rmm_pool_trim(pool, &released);
            disarm();
            FUZZ_CHECK(!bad_status(st), "rmm_pool_trim returned %s (%s)", rmm_status_string(st), rmm_last_error());
        } else if (r < 890) {
            cf_step = "dump";
            arm();
            st = rmm_resource_dump_json(stats, devnull);
            disarm();
            FUZZ_CHECK(st == RMM_SUCCESS || st == RMM_ERROR_OUT_OF_MEMORY, "rmm_resource_dump_json returned %s (%s)", rmm_status_string(st), rmm_last_error());
        } else if (r < 900) {
            size_t maximum = (cf_rnd() & 1) ? 0 : (size_t)(1 + cf_rnd() % 40) * 2 * MiB;
            cf_step = "set maximum";
            st = rmm_pool_set_maximum(pool, maximum);
            FUZZ_CHECK(st == RMM_SUCCESS, "rmm_pool_set_maximum(%zu) returned %s (%s)", maximum, rmm_status_string(st), rmm_last_error());
        } else if (r < 920) { /* a foreign stream destroyed with work pending; another made, often at its handle */
            int s = 2 + (int)(cf_rnd() % 3), o = s == 2 ? 3 : 2;
            if (registered[s] || registered[o]) goto validate;
            for (j = 0; j < nlive; j++)
                if (live[j].recorded & (1u << s)) goto validate;
            for (j = 0; j < ndeferred; j++)
                if (deferred[j].slot == s || (deferred[j].recorded & (1u << s))) goto validate;
            cf_step = "stream destroyed";
            user_wait(slot_stream[o], slot_stream[s]);
            for (j = 0; j < nlive; j++)
                if (live[j].slot == s) live[j].slot = o;
            destroy(slot_stream[s]);
            slot_stream[s] = foreign();
            if (burst_bytes[s] || (cf_rnd() & 1)) { /* the new stream (at the old one's handle, often) allocates at once, the old one's size */
                cf_step = "burst after a stream destroyed";
                burst(via[cf_rnd() & 1], s, burst_bytes[s] ? burst_bytes[s] : 256);
            }
        } else if (r < 930) { /* the library's stream, registered, is not destroyed */
            if (registered[1]) {
                cf_step = "registered stream destroy";
                st = rmm_stream_destroy(slot_stream[1]);
                FUZZ_CHECK(st == RMM_ERROR_INVALID_ARGUMENT, "rmm_stream_destroy of a stream registered for capture returned %s (%s)", rmm_status_string(st), rmm_last_error());
            }
        } else if (r < 940) { /* a resource a deferred free awaits is not destroyed */
            cf_step = "awaited resource destroy";
            if (rmm_resource_awaits_capture(stats)) {
                rmm_resource_destroy(stats);
                FUZZ_CHECK(rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT, "the adaptor, awaited by a deferred free, was destroyed");
            }
            if (rmm_resource_awaits_capture(pool)) {
                rmm_resource_destroy(pool);
                FUZZ_CHECK(rmm_last_status() == RMM_ERROR_INVALID_ARGUMENT, "the pool, awaited by a deferred free, was destroyed");
            }
        } else if (r < 950) { /* the graph pool destroyed between captures (made again at the next) */
            int any = 0;
            for (j = 0; j < SLOTS; j++) any |= registered[j];
            if (gp && !any) {
                cf_step = "graph pool destroy";
                graph_memory_may_go = 1;
                arm();
                st = rmm_graph_pool_destroy(gp);
                disarm();
                graph_memory_may_go = 0;
                FUZZ_CHECK(st == RMM_SUCCESS, "rmm_graph_pool_destroy returned %s (%s)", rmm_status_string(st), rmm_last_error());
                gp = NULL;
            }
        } else if (r < 965) { /* a burst of one size on a stream not registered */
            int s = (int)(cf_rnd() % SLOTS);
            if (registered[s]) goto validate;
            cf_step = "burst";
            burst(via[cf_rnd() & 1], s, 256 * (size_t)(1 + cf_rnd() % 4));
        } else {
            cf_step = "validate";
            arm();
            st = rmm_resource_validate(pool);
            disarm();
            FUZZ_CHECK(st == RMM_SUCCESS || st == RMM_ERROR_OUT_OF_MEMORY, "rmm_resource_validate returned %s (%s)", rmm_status_string(st), rmm_last_error());
        }
    validate:
        FUZZ_CHECK(violations == v, "a block handed to a stream before another stream's work on it was done (VIOLATION above)");
        FUZZ_CHECK(capture_touches == touches, "%s", capture_touch);
        st = rmm_resource_validate(pool);
        FUZZ_CHECK(st == RMM_SUCCESS, "the pool is not valid after the step: %s (%s)", rmm_status_string(st), rmm_last_error());
    }
    /* the end: every capture ended, every block freed, everything back */
    cf_step = "the end";
    for (i = 1; i < SLOTS; i++)
        if (registered[i]) {
            registered[i] = 0;
            st = rmm_capture_end(gp, slot_stream[i]);
            FUZZ_CHECK(st == RMM_SUCCESS, "rmm_capture_end on slot %d returned %s (%s)", i, rmm_status_string(st), rmm_last_error());
        }
    for (i = 0; i < ndeferred; i++)
        FUZZ_CHECK(!pool_live(pool, deferred[i].p), "the deferred free of %p+%zu (freed on slot %d) was not made when every capture had ended", deferred[i].p,
                   deferred[i].n, deferred[i].slot);
    ndeferred = 0;
    model_reset();
    while (nlive) {
        live_block b = live[--nlive];
        FUZZ_CHECK(free_ok(via[b.via], b.p, b.n, slot_stream[b.slot]), "freeing %p+%zu on slot %d at the end failed", b.p, b.n, b.slot);
    }
    if (gp) {
        st = rmm_graph_pool_destroy(gp);
        FUZZ_CHECK(st == RMM_SUCCESS, "rmm_graph_pool_destroy returned %s (%s)", rmm_status_string(st), rmm_last_error());
    }
    FUZZ_CHECK(rmm_graph_pools_pending(NULL) == 0, "%zu graph pools pending at the end", rmm_graph_pools_pending(NULL));
    CHECK_OK(rmm_pool_get_info(pool, &info));
    FUZZ_CHECK(info.used_bytes == 0, "the pool has %zu bytes used at the end", info.used_bytes);
    st = rmm_resource_validate(pool);
    FUZZ_CHECK(st == RMM_SUCCESS, "the pool is not valid at the end: %s (%s)", rmm_status_string(st), rmm_last_error());
    FUZZ_CHECK(violations == violations_before, "%ld early hand-overs in the seed", violations - violations_before);
    rmm_resource_destroy(stats);
    rmm_resource_destroy(pool);
    CHECK_OK(rmm_stream_destroy(slot_stream[1]));
    for (i = 2; i < 5; i++) destroy(slot_stream[i]);
    model_reset();
    CHECK_OK(rmm_available_device_memory(&device_after, &total));
    FUZZ_CHECK(device_after == device_before, "the device has %zu bytes free at the end, %zu before the seed", device_after, device_before);
    fclose(devnull);
    if (cf_failures) printf("  seed %llu failed: replay it with RMM_TEST_SEED=%llu\n", seed, seed);
}

/* The seeds of one case (growth, faults): 1 to 48 (make test-long: 480) whose seed % 3 is the
   growth and (seed / 3) % 2 the faults; RMM_TEST_SEED=N: N alone, in its own case. */
static void run_case(int growth, int faults) {
    const char *env = getenv("RMM_TEST_SEED");
    unsigned long long seed, last = harness_long() ? 480 : 48, only = env && *env ? strtoull(env, NULL, 0) : 0;
    for (seed = 1; seed <= last || (only && seed <= only); seed++) {
        if ((only && seed != only) || (int)(seed % 3) != growth || (int)((seed / 3) % 2) != faults) continue;
        fuzz(seed, 800);
    }
}
TEST(captures_on_a_geometric_pool) { run_case(GEOMETRIC, 0); }
TEST(captures_on_an_on_demand_pool) { run_case(ON_DEMAND, 0); }
TEST(captures_on_a_virtual_pool) { run_case(VIRTUAL, 0); }
TEST(captures_on_a_geometric_pool_with_faults) { run_case(GEOMETRIC, 1); }
TEST(captures_on_an_on_demand_pool_with_faults) { run_case(ON_DEMAND, 1); }
TEST(captures_on_a_virtual_pool_with_faults) { run_case(VIRTUAL, 1); }
#endif

int main(void) {
    HARNESS_INIT();
#if defined(RMM_BACKEND_HOST)
    rmm_host_backend_set_capacity((size_t)2 << 30);
    watched_model = model;
    watched_model.event_record = w_event_record;
    watched_model.stream_wait_event = w_stream_wait_event;
    watched_model.stream_synchronize = w_stream_synchronize;
    rmm_host_backend_set_stream_model(&watched_model);
    rmm_set_log_level(RMM_LOG_LEVEL_OFF); /* (the faults' failures are logged) */
    RUN(captures_on_a_geometric_pool);
    RUN(captures_on_an_on_demand_pool);
    RUN(captures_on_a_virtual_pool);
    RUN(captures_on_a_geometric_pool_with_faults);
    RUN(captures_on_an_on_demand_pool_with_faults);
    RUN(captures_on_a_virtual_pool_with_faults);
#else
    printf("the capture fuzz needs the host backend's stream model (RMM_BACKEND_HOST): every case skipped\n");
    harness_skipped = 6;
#endif
    return harness_main_end();
}
