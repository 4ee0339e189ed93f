/* bench/stream_identity.c - what it costs to tell a stream the library did not make from another.

   A stream-ordered allocator must know, for a stream it did not create, whether the handle it is
   given still names the stream it saw before: the CUDA driver hands a destroyed stream's handle to
   the next stream created, even while the destroyed stream's work is still running (RMM issue
   #649). This program measures, on the GPU:

   1. the driver queries that could tell streams apart or validate a handle, and an event's query
      (how the pool learns a ring's event is complete), in ns per call, from
      one thread and from 16 threads at once (each on its own stream): through the runtime
      (cudaStreamGetId, ...) and straight to the driver (cuStreamGetId, ... reached through
      cudaGetDriverEntryPointByVersion, as rmm.h reaches the VMM calls);
   2. whether a handle is reused while the destroyed stream still has work queued: a stream gets a
      host function that sleeps, an event behind it, and is destroyed; then streams are created
      until one has the old handle or 64 were made, and the event is queried.

   usage: stream_identity [--quick]. Built by `make bench`; the host-backend build only says that it
   needs a GPU. */
#define _POSIX_C_SOURCE 200809L
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "bench_common.h"

#ifdef RMM_BACKEND_HOST
int main(void) {
    printf("stream_identity: needs a GPU (it measures CUDA driver calls); nothing to do on the host backend\n");
    return 0;
}
#else
#include <pthread.h>
#include <cuda.h>

typedef CUresult (*get_id_fn)(CUstream, unsigned long long *);
typedef CUresult (*get_flags_fn)(CUstream, unsigned int *);
typedef CUresult (*get_ctx_fn)(CUstream, CUcontext *);
typedef CUresult (*get_prio_fn)(CUstream, int *);
typedef CUresult (*event_record_fn)(CUevent, CUstream);
typedef CUresult (*event_query_fn)(CUevent);
static get_id_fn cu_get_id;
static get_flags_fn cu_get_flags;
static get_ctx_fn cu_get_ctx;
static get_prio_fn cu_get_prio;
static event_record_fn cu_event_record;
static event_query_fn cu_event_query;

static void *entry(const char *name) {
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess || q != cudaDriverEntryPointSuccess) return NULL;
    return fn;
}

enum { Q_RT_ID, Q_CU_ID, Q_RT_FLAGS, Q_CU_FLAGS, Q_RT_PRIO, Q_CU_PRIO, Q_CU_CTX, Q_RT_QUERY, Q_RT_EQUERY, Q_CU_EQUERY, Q_RT_EVENT, Q_CU_EVENT, Q_COUNT };
static const char *q_name[Q_COUNT] = {"cudaStreamGetId", "cuStreamGetId", "cudaStreamGetFlags", "cuStreamGetFlags",
                                      "cudaStreamGetPriority", "cuStreamGetPriority", "cuStreamGetCtx", "cudaStreamQuery(idle)",
                                      "cudaEventQuery(done)", "cuEventQuery(done)", "cudaEventRecord", "cuEventRecord"};

static long g_calls;
static volatile int g_go;

typedef struct job {
    int q;
    cudaStream_t s;
    cudaEvent_t e;
    double ns;
    int ok;
} job;

static int one(int q, cudaStream_t s, cudaEvent_t e) {
    unsigned long long id;
    unsigned int fl;
    int pr;
    CUcontext cx;
    switch (q) {
    case Q_RT_ID: return cudaStreamGetId(s, &id) == cudaSuccess;
    case Q_CU_ID: return cu_get_id((CUstream)s, &id) == CUDA_SUCCESS;
    case Q_RT_FLAGS: return cudaStreamGetFlags(s, &fl) == cudaSuccess;
    case Q_CU_FLAGS: return cu_get_flags((CUstream)s, &fl) == CUDA_SUCCESS;
    case Q_RT_PRIO: return cudaStreamGetPriority(s, &pr) == cudaSuccess;
    case Q_CU_PRIO: return cu_get_prio((CUstream)s, &pr) == CUDA_SUCCESS;
    case Q_CU_CTX: return cu_get_ctx((CUstream)s, &cx) == CUDA_SUCCESS;
    case Q_RT_QUERY: return cudaStreamQuery(s) == cudaSuccess;
    case Q_RT_EQUERY: return cudaEventQuery(e) == cudaSuccess;
    case Q_CU_EQUERY: return cu_event_query((CUevent)e) == CUDA_SUCCESS;
    case Q_RT_EVENT: return cudaEventRecord(e, s) == cudaSuccess;
    case Q_CU_EVENT: return cu_event_record((CUevent)e, (CUstream)s) == CUDA_SUCCESS;
    }
    return 0;
}

static void *run_job(void *arg) {
    job *j = (job *)arg;
    long i;
    uint64_t t0;
    (void)cudaSetDevice(0);
    while (!g_go) {
    }
    j->ok = 1;
    t0 = now_ns();
    for (i = 0; i < g_calls; i++) j->ok &= one(j->q, j->s, j->e);
    j->ns = (double)(now_ns() - t0) / (double)g_calls;
    return NULL;
}

/* ns per call on each of `threads` threads at once (median over threads, then over reps) */
static double measure(int q, int threads, cudaStream_t *streams, cudaEvent_t *events, int *ok) {
    enum { REPS = 3 };
    double rep[REPS];
    int r, t;
    *ok = 1;
    for (r = 0; r < REPS; r++) {
        pthread_t th[16];
        job jobs[16];
        double per[16];
        g_go = 0;
        for (t = 0; t < threads; t++) {
            jobs[t].q = q;
            jobs[t].s = streams[t];
            jobs[t].e = events[t];
            pthread_create(&th[t], NULL, run_job, &jobs[t]);
        }
        g_go = 1;
        for (t = 0; t < threads; t++) {
            pthread_join(th[t], NULL);
            per[t] = jobs[t].ns;
            *ok &= jobs[t].ok;
        }
        qsort(per, (size_t)threads, sizeof per[0], cmp_double);
        rep[r] = per[threads / 2];
        (void)cudaDeviceSynchronize();
    }
    qsort(rep, REPS, sizeof rep[0], cmp_double);
    return rep[REPS / 2];
}

static void CUDART_CB sleeper(void *ms) { usleep((useconds_t)(*(int *)ms) * 1000u); }

int main(int argc, char **argv) {
    cudaStream_t streams[16];
    cudaEvent_t events[16];
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0, q, t, round, rounds = quick ? 8 : 32, reused = 0, reused_pending = 0, ms = 30;
    {
        int count = 0;
        cudaError_t err = cudaGetDeviceCount(&count);
        if (err != cudaSuccess || count == 0) { /* (as the other benchmarks say it) */
            fprintf(stderr, "stream_identity: no usable CUDA device (cudaGetDeviceCount() %s: %s)\n", err == cudaSuccess ? "found none" : "failed",
                    err == cudaSuccess ? "0 devices" : cudaGetErrorName(err));
            return 2;
        }
    }
    print_machine(NULL);
    printf("# settings: %s, %s calls per thread per query, medians of 3\n", quick ? "--quick" : "full", quick ? "20000" : "200000");
    g_calls = quick ? 20000 : 200000;
    cu_get_id = (get_id_fn)entry("cuStreamGetId");
    cu_get_flags = (get_flags_fn)entry("cuStreamGetFlags");
    cu_get_ctx = (get_ctx_fn)entry("cuStreamGetCtx");
    cu_get_prio = (get_prio_fn)entry("cuStreamGetPriority");
    cu_event_record = (event_record_fn)entry("cuEventRecord");
    cu_event_query = (event_query_fn)entry("cuEventQuery");
    if (!cu_get_id || !cu_get_flags || !cu_get_ctx || !cu_get_prio || !cu_event_record || !cu_event_query) {
        printf("0 passed, 1 failed (a driver entry point was not found)\n");
        return 1;
    }
    for (t = 0; t < 16; t++) {
        if (cudaStreamCreateWithFlags(&streams[t], cudaStreamNonBlocking) != cudaSuccess ||
            cudaEventCreateWithFlags(&events[t], cudaEventDisableTiming) != cudaSuccess || cudaEventRecord(events[t], streams[t]) != cudaSuccess) {
            printf("0 passed, 1 failed (no stream)\n");
            return 1;
        }
    }
    (void)cudaDeviceSynchronize(); /* (the event queries ask a completed record) */
    printf("%-24s %12s %14s\n", "query", "1 thread", "16 threads");
    for (q = 0; q < Q_COUNT; q++) {
        int ok1, ok16;
        double a = measure(q, 1, streams, events, &ok1), b = measure(q, 16, streams, events, &ok16);
        printf("%-24s %9.1f ns %11.1f ns%s\n", q_name[q], a, b, ok1 && ok16 ? "" : "  (a call failed)");
    }
    /* handle reuse while the destroyed stream's work is still queued */
    for (round = 0; round < rounds; round++) {
        cudaStream_t s, made[64];
        cudaEvent_t e;
        int n = 0, i, hit = 0;
        if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess || cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) break;
        (void)cudaLaunchHostFunc(s, sleeper, &ms);
        (void)cudaEventRecord(e, s);
        (void)cudaStreamDestroy(s);
        while (n < 64 && !hit) {
            if (cudaStreamCreateWithFlags(&made[n], cudaStreamNonBlocking) != cudaSuccess) break;
            hit = made[n++] == s;
        }
        if (hit) {
            reused++;
            if (cudaEventQuery(e) == cudaErrorNotReady) reused_pending++;
        }
        (void)cudaEventSynchronize(e);
        for (i = 0; i < n; i++) (void)cudaStreamDestroy(made[i]);
        (void)cudaEventDestroy(e);
    }
    printf("handle reuse: %d of %d destroyed streams had their handle given to a new stream within 64 creations; "
           "%d of those while the old stream's work (a %d ms host function) was still running\n",
           reused, rounds, reused_pending, ms);
    printf("1 passed, 0 failed\n");
    return 0;
}
#endif
