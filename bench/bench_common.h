/* bench/bench_common.h - what every benchmark in bench/ shares: sizes, a message formatter, a
   monotonic clock, the comma-list filter of --workload/--resource, and the machine banner that
   opens every report. Include after rmm.h (with RMM_IMPLEMENTATION) in the benchmark's one file. */
#ifndef RMM_BENCH_COMMON_H
#define RMM_BENCH_COMMON_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)

/* snprintf that may truncate silently (messages only). */
static void fmt(char *dst, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *dst, size_t cap, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    vsnprintf(dst, cap, f, ap);
    va_end(ap);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* For qsort of doubles (medians). */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 1 iff `name` is in the comma-separated `filter` (NULL: everything); with `prefix`, an entry that
   starts `name` also selects it. */
static int name_selected(const char *name, const char *filter, int prefix) {
    const char *p = filter;
    size_t n = strlen(name);
    if (!filter) return 1;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len && ((len == n && !strncmp(name, p, len)) || (prefix && len < n && !strncmp(name, p, len)))) return 1;
        p += len + (end ? 1 : 0);
    }
    return 0;
}

/* 1 iff there is a CUDA device to run on (always on the host backend); else says why on stderr, as
   "<prog>: no usable CUDA device (...)". Include rmm.h first. */
static inline int have_device(const char *prog) {
#ifdef RMM_BACKEND_HOST
    (void)prog;
    return 1;
#else
    int count = 0;
    if (rmm_get_device_count(&count) != RMM_SUCCESS) {
        fprintf(stderr, "%s: no usable CUDA device (%s)\n", prog, rmm_last_error());
        return 0;
    }
    if (count == 0) {
        fprintf(stderr, "%s: no usable CUDA device (the runtime reports none)\n", prog);
        return 0;
    }
    return 1;
#endif
}

/* The banner: GPU, driver and runtime (or `host_note` on the host backend), host CPU, date. */
static void print_machine(const char *host_note) {
    char date[64], host[128] = "?", cpu[160] = "?", line[256];
    time_t now = time(NULL);
    struct tm tmv;
    FILE *f;
    localtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", &tmv);
    (void)gethostname(host, sizeof host - 1);
    if ((f = fopen("/proc/cpuinfo", "r")) != NULL) {
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
                fmt(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
                cpu[strcspn(cpu, "\n")] = '\0';
                break;
            }
        fclose(f);
    }
#ifdef RMM_BACKEND_HOST
    printf("# machine: host backend (no GPU): %s\n", host_note);
#else
    {
        int dev = 0, drv = 0, rt = 0;
        struct cudaDeviceProp prop;
        (void)host_note;
        (void)cudaGetDevice(&dev);
        (void)cudaDriverGetVersion(&drv);
        (void)cudaRuntimeGetVersion(&rt);
        if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
            printf("# gpu: %s (device %d, sm_%d%d, %d SMs, %.1f GiB)\n", prop.name, dev, prop.major, prop.minor,
                   prop.multiProcessorCount, (double)prop.totalGlobalMem / (double)GIB);
        printf("# cuda: driver %d.%d (%d), runtime %d.%d (%d)\n", drv / 1000, (drv % 1000) / 10, drv, rt / 1000, (rt % 1000) / 10, rt);
    }
#endif
    printf("# host: %s, cpu: %s, %ld cpus online\n", host, cpu, sysconf(_SC_NPROCESSORS_ONLN));
    printf("# date: %s; rmm.h %s\n", date, RMM_VERSION_STRING);
}
#endif
