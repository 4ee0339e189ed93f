/* Diagnostics: the JSON state dump of every kind of resource, read back by a real JSON parser
   (tests/check_dump.py, Python's json module); out-of-memory messages with the right verdict
   (fragmented, held by other streams, at the maximum); RMM_DUMP_ON_OOM; and what
   rmm_resource_check_corruption says without debug margins (tests/test_margins.c has them). Built
   on the host backend (ASan/UBSan) and on the CUDA runtime (gcc -lcudart and nvcc). */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "harness.h"
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

static int have_python = -1;
/* 1 iff the dump in `path` passes tests/check_dump.py (run from the repository root, as
   tests/run.sh runs every test); -1 if python3 is not there. */
static int dump_is_valid(const char *path, const char *top_type) {
    char cmd[512];
    if (have_python < 0) have_python = system("python3 -c 'import json' >/dev/null 2>&1") == 0;
    if (!have_python) return -1;
    snprintf(cmd, sizeof cmd, "python3 tests/check_dump.py %s %s", path, top_type);
    return system(cmd) == 0;
}
static FILE *temp_file(char *path, size_t cap, const char *tag) {
    int fd;
    snprintf(path, cap, "/tmp/rmm_test_%s_XXXXXX", tag);
    fd = mkstemp(path);
    return fd < 0 ? NULL : fdopen(fd, "w");
}

TEST(dump_every_kind_of_resource) {
    rmm_resource *pool = NULL, *stats = NULL, *track = NULL, *bins = NULL, *arena = NULL, *fixed = NULL, *vpool = NULL, *limit = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    rmm_arena_desc ad = rmm_arena_desc_default();
    rmm_binning_desc bd = rmm_binning_desc_default();
    rmm_stream s;
    void *p[8] = {NULL};
    char path[128];
    FILE *f;
    int valid;
    NEED_GPU();
    CHECK_OK(rmm_stream_create(&s));
    pd.initial_bytes = 8 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &pd));
    CHECK_OK(rmm_limiting_adaptor_create(&limit, pool, 64 * MiB));
    CHECK_OK(rmm_statistics_adaptor_create(&stats, limit));
    CHECK_OK(rmm_tracking_adaptor_create(&track, stats, false));
    bd.min_size_exponent = 10;
    bd.max_size_exponent = 12;
    CHECK_OK(rmm_binning_create(&bins, track, &bd));
    CHECK_OK(rmm_allocate(bins, &p[0], 700, RMM_STREAM_DEFAULT)); /* a bin */
    CHECK_OK(rmm_allocate(bins, &p[1], 5000, s));                   /* upstream, on another stream */
    CHECK_OK(rmm_allocate(bins, &p[2], 3000, s));
    CHECK_OK(rmm_deallocate(bins, p[1], 5000, s)); /* free, in the stream's lists */
    ad.arena_bytes = 8 * MiB;
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &ad));
    CHECK_OK(rmm_allocate(arena, &p[3], 3000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(arena, &p[4], 3 * MiB, s));
    CHECK_OK(rmm_fixed_size_create(&fixed, pool, NULL));
    CHECK_OK(rmm_allocate(fixed, &p[5], 100, s));
    pd = rmm_pool_desc_default();
    pd.growth = RMM_POOL_GROWTH_VIRTUAL;
    pd.virtual_bytes = 64 * MiB;
    (void)rmm_pool_create(&vpool, NULL, &pd); /* NOT_SUPPORTED where the device lacks VMM: then skipped */
    if (vpool) CHECK_OK(rmm_allocate(vpool, &p[6], 3 * MiB, RMM_STREAM_DEFAULT));
    f = temp_file(path, sizeof path, "dump");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_OK(rmm_resource_dump_json(bins, f));
    fputc('\n', f);
    CHECK_OK(rmm_resource_dump_json(arena, f));
    CHECK_OK(rmm_resource_dump_json(fixed, f));
    if (vpool) CHECK_OK(rmm_resource_dump_json(vpool, f));
    CHECK_OK(rmm_resource_dump_json(NULL, f)); /* the current device resource */
    fclose(f);
    valid = dump_is_valid(path, "binning");
    if (valid < 0) printf("  python3 is not installed: the dump was written but not parsed\n");
    else CHECK(valid == 1);
    remove(path);
    CHECK_STATUS(rmm_resource_dump_json(bins, NULL), RMM_ERROR_INVALID_ARGUMENT);
    if (vpool) {
        CHECK_OK(rmm_deallocate(vpool, p[6], 3 * MiB, RMM_STREAM_DEFAULT));
        rmm_resource_destroy(vpool);
    }
    CHECK_OK(rmm_deallocate(fixed, p[5], 100, s));
    CHECK_OK(rmm_deallocate(arena, p[3], 3000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(arena, p[4], 3 * MiB, s));
    CHECK_OK(rmm_deallocate(bins, p[0], 700, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(bins, p[2], 3000, s));
    rmm_resource_destroy(fixed);
    rmm_resource_destroy(arena);
    rmm_resource_destroy(bins);
    rmm_resource_destroy(track);
    rmm_resource_destroy(stats);
    rmm_resource_destroy(limit);
    rmm_resource_destroy(pool);
    CHECK_OK(rmm_stream_destroy(s));
}

/* Free memory in pieces none of which fits: "fragmented". */
TEST(oom_verdict_fragmented) {
    rmm_resource *pool = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    void *p[16], *big = NULL;
    int i;
    NEED_GPU();
    pd.initial_bytes = pd.maximum_bytes = 16 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &pd));
    for (i = 0; i < 16; i++) CHECK_OK(rmm_allocate(pool, &p[i], MiB, RMM_STREAM_DEFAULT));
    for (i = 0; i < 16; i += 2) CHECK_OK(rmm_deallocate(pool, p[i], MiB, RMM_STREAM_DEFAULT)); /* 8 MiB free, 1 MiB pieces */
    CHECK_STATUS(rmm_allocate(pool, &big, 2 * MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    printf("  %s\n", rmm_last_error());
    CHECK(strstr(rmm_last_error(), "Verdict: fragmented") != NULL);
    CHECK(strstr(rmm_last_error(), "allocating 2097152 bytes") != NULL);
    CHECK(strstr(rmm_last_error(), "largest free block 1048576") != NULL);
    for (i = 1; i < 16; i += 2) CHECK_OK(rmm_deallocate(pool, p[i], MiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);
}

/* Past the maximum, with nothing free: "at the maximum"; a limiting adaptor says the same. */
TEST(oom_verdict_at_the_maximum) {
    rmm_resource *pool = NULL, *limit = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    void *a = NULL, *b = NULL;
    NEED_GPU();
    pd.maximum_bytes = 4 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &pd));
    CHECK_OK(rmm_allocate(pool, &a, 3 * MiB, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_allocate(pool, &b, 2 * MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(rmm_last_error(), "Verdict: at the maximum") != NULL);
    CHECK_OK(rmm_deallocate(pool, a, 3 * MiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);
    CHECK_OK(rmm_limiting_adaptor_create(&limit, rmm_get_current_device_resource(), MiB));
    CHECK_STATUS(rmm_allocate(limit, &b, 2 * MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(rmm_last_error(), "Verdict: at the maximum") != NULL);
    rmm_resource_destroy(limit);
}

/* An arena whose superblocks are lent to one stream's arena, each half used: another stream finds
   no room although half the arena is free: "held by other streams". */
TEST(oom_verdict_held_by_other_streams) {
    rmm_resource *arena = NULL;
    rmm_arena_desc ad = rmm_arena_desc_default();
    rmm_stream a_stream, b_stream;
    void *p[8], *q = NULL;
    int i;
    NEED_GPU();
    CHECK_OK(rmm_stream_create(&a_stream));
    CHECK_OK(rmm_stream_create(&b_stream));
    ad.arena_bytes = 4 * MiB;
    ad.superblock_bytes = MiB;
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &ad));
    for (i = 0; i < 8; i++) CHECK_OK(rmm_allocate(arena, &p[i], 450 * KiB, a_stream)); /* two per superblock */
    for (i = 0; i < 8; i += 2) CHECK_OK(rmm_deallocate(arena, p[i], 450 * KiB, a_stream));
    CHECK_STATUS(rmm_allocate(arena, &q, 600 * KiB, b_stream), RMM_ERROR_OUT_OF_MEMORY);
    printf("  %s\n", rmm_last_error());
    CHECK(strstr(rmm_last_error(), "Verdict: held by other streams") != NULL);
    for (i = 1; i < 8; i += 2) CHECK_OK(rmm_deallocate(arena, p[i], 450 * KiB, a_stream));
    CHECK_OK(rmm_allocate(arena, &q, 600 * KiB, b_stream)); /* the superblocks come back */
    CHECK_OK(rmm_deallocate(arena, q, 600 * KiB, b_stream));
    rmm_resource_destroy(arena);
    CHECK_OK(rmm_stream_destroy(a_stream));
    CHECK_OK(rmm_stream_destroy(b_stream));
}

/* A block above a superblock comes only from the global arena's whole superblocks: free memory in
   the arenas' lists, the caller's own stream's included, cannot serve it. Out of memory there on the
   one stream that was ever used is "fragmented", not "held by other streams" (which it said, with
   the caller's own free memory counted as other streams': a red team's find). */
TEST(oom_verdict_large_block_on_the_only_stream) {
    rmm_resource *arena = NULL;
    rmm_arena_desc ad = rmm_arena_desc_default();
    void *p[8], *q = NULL;
    int i;
    NEED_GPU();
    ad.arena_bytes = 4 * MiB;
    ad.superblock_bytes = MiB;
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &ad));
    for (i = 0; i < 8; i++) CHECK_OK(rmm_allocate(arena, &p[i], 450 * KiB, RMM_STREAM_DEFAULT)); /* two per superblock */
    for (i = 0; i < 8; i += 2) CHECK_OK(rmm_deallocate(arena, p[i], 450 * KiB, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_allocate(arena, &q, 3 * MiB / 2, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    printf("  %s\n", rmm_last_error());
    CHECK(strstr(rmm_last_error(), "Verdict: fragmented") != NULL);
    CHECK(strstr(rmm_last_error(), " 0 of it in other streams' lists") != NULL);
    for (i = 1; i < 8; i += 2) CHECK_OK(rmm_deallocate(arena, p[i], 450 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(arena, &q, 3 * MiB / 2, RMM_STREAM_DEFAULT)); /* the superblocks come back */
    CHECK_OK(rmm_deallocate(arena, q, 3 * MiB / 2, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(arena);
}

/* RMM_DUMP_ON_OOM=PATH writes the state at an out-of-memory. */
TEST(dump_on_oom) {
    rmm_resource *pool = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    char path[128];
    void *a = NULL;
    FILE *f;
    int valid;
    NEED_GPU();
    f = temp_file(path, sizeof path, "oomdump");
    CHECK(f != NULL);
    if (!f) return;
    fclose(f);
    pd.maximum_bytes = MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &pd));
    CHECK(setenv("RMM_DUMP_ON_OOM", path, 1) == 0);
    CHECK_STATUS(rmm_allocate(pool, &a, 2 * MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    unsetenv("RMM_DUMP_ON_OOM");
    valid = dump_is_valid(path, "pool");
    if (valid >= 0) CHECK(valid == 1);
    else {
        long n;
        f = fopen(path, "r");
        CHECK(f != NULL);
        if (f) {
            fseek(f, 0, SEEK_END);
            n = ftell(f);
            fclose(f);
            CHECK(n > 0);
        }
    }
    /* PATH a symlink: the dump goes to its target and the link stays a link (the first mend of the
       threads' torn dumps renamed a file over PATH, which replaced a link, or a device such as
       /dev/stderr, with a regular file: a review's find) */
    {
        char link_path[160];
        struct stat st;
        snprintf(link_path, sizeof link_path, "%s.link", path);
        remove(path);
        CHECK(symlink(path, link_path) == 0);
        CHECK(setenv("RMM_DUMP_ON_OOM", link_path, 1) == 0);
        CHECK_STATUS(rmm_allocate(pool, &a, 2 * MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
        unsetenv("RMM_DUMP_ON_OOM");
        CHECK(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));
        valid = dump_is_valid(path, "pool");
        if (valid >= 0) CHECK(valid == 1);
        remove(link_path);
    }
    remove(path);
    rmm_resource_destroy(pool);
}

/* A dump that fails at an out-of-memory is reported with its own reason (it was "Input/output
   error"): pool q, over a statistics adaptor over pool p, runs out of memory inside p's upstream,
   while p holds its lock, so q's dump reaches p from inside p's own upstream and is refused. */
static rmm_resource *g_inner_pool;
static char g_inner_msg[1024];
static rmm_status inner_alloc(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    void *q = NULL;
    (void)self, (void)ptr, (void)bytes, (void)alignment, (void)stream;
    if (g_inner_pool && rmm_allocate(g_inner_pool, &q, 2 * MiB, RMM_STREAM_DEFAULT) != RMM_SUCCESS) snprintf(g_inner_msg, sizeof g_inner_msg, "%s", rmm_last_error());
    return rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "%s", "the inner resource says no");
}
static rmm_status inner_free(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    (void)self, (void)ptr, (void)bytes, (void)alignment, (void)stream;
    return RMM_SUCCESS;
}
TEST(dump_on_oom_says_why_the_dump_failed) {
    static const rmm_resource_vtable vt = {"inner_user", inner_alloc, inner_free, NULL, NULL};
    rmm_resource user = {NULL}, *p = NULL, *stats = NULL, *q = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    char path[128];
    void *a = NULL;
    FILE *f;
    NEED_GPU();
    user.vtable = &vt;
    f = temp_file(path, sizeof path, "oomdump_why");
    CHECK(f != NULL);
    if (!f) return;
    fclose(f);
    pd.initial_bytes = 0;
    CHECK_OK(rmm_pool_create(&p, &user, &pd));
    CHECK_OK(rmm_statistics_adaptor_create(&stats, p));
    pd.maximum_bytes = MiB;
    CHECK_OK(rmm_pool_create(&q, stats, &pd));
    g_inner_pool = q;
    g_inner_msg[0] = '\0';
    CHECK(setenv("RMM_DUMP_ON_OOM", path, 1) == 0);
    CHECK_STATUS(rmm_allocate(p, &a, 1000, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    unsetenv("RMM_DUMP_ON_OOM");
    g_inner_pool = NULL;
    CHECK(strstr(g_inner_msg, "Verdict: at the maximum") != NULL);
    CHECK(strstr(g_inner_msg, "RMM_DUMP_ON_OOM: nothing written to") != NULL);
    CHECK(strstr(g_inner_msg, "own upstream") != NULL);
    CHECK(strstr(g_inner_msg, "Input/output error") == NULL);
    CHECK(strstr(rmm_last_error(), "RMM_DUMP_ON_OOM: nothing written") == NULL); /* p's own dump was written */
    CHECK(dump_is_valid(path, "pool") != 0);
    remove(path);
    rmm_resource_destroy(q);
    rmm_resource_destroy(stats);
    rmm_resource_destroy(p);
}

/* Red team 23's diagnostics finds, each checked here:
   - a request whose alignment padding passes the pool's maximum is "at the maximum" (it was
     blamed on a resource below);
   - the explanation keeps up to 511 bytes of its cause, and marks a cut (199, unmarked: a limiting
     adaptor's verdict below a pool was lost);
   - RMM_DUMP_ON_OOM that cannot be written is said in the message;
   - a dump's type name in UTF-8 is written as it is (each byte was escaped alone);
   - RMM_ALLOC_CONF's messages cut a long value on a whole UTF-8 character. */
static rmm_status utf8_alloc(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    (void)self, (void)ptr, (void)bytes, (void)alignment, (void)stream;
    return rmm_set_last_error(RMM_ERROR_OUT_OF_MEMORY, "%s", "a user resource said no, for a reason it explains at length: the tenant's quota "
                                                               "on this cluster is used up by jobs submitted earlier today; END-OF-REASON");
}
static rmm_status utf8_free(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    (void)self, (void)ptr, (void)bytes, (void)alignment, (void)stream;
    return RMM_SUCCESS;
}
static bool all_utf8(const char *text) {
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        size_t n = *s < 0x80 ? 1 : rmm__utf8_char(s);
        if (!n) return false;
        s += n;
    }
    return true;
}
TEST(diagnostics_say_what_happened) {
    rmm_resource *pool = NULL, *lim = NULL, user = {NULL};
    rmm_pool_desc pd = rmm_pool_desc_default();
    static const rmm_resource_vtable user_vt = {"caf\xc3\xa9_\xe2\x82\xac", utf8_alloc, utf8_free, NULL, NULL}; /* "café_€" */
    char dir[160], conf[400];
    void *a = NULL;
    FILE *f;
    size_t n, i;
    NEED_GPU();
    /* the maximum with the alignment's padding */
    pd.maximum_bytes = 8 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &pd));
    CHECK_STATUS(rmm_allocate_aligned(pool, &a, 4 * MiB, (size_t)1 << 30, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(rmm_last_error(), "Verdict: at the maximum") != NULL);
    /* RMM_DUMP_ON_OOM a directory: nothing written, and the message says so */
    snprintf(dir, sizeof dir, "/tmp/rmm_test_dumpdir_%d", (int)getpid());
    CHECK(mkdir(dir, 0700) == 0);
    CHECK(setenv("RMM_DUMP_ON_OOM", dir, 1) == 0);
    CHECK_STATUS(rmm_allocate(pool, &a, 16 * MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    unsetenv("RMM_DUMP_ON_OOM");
    CHECK(strstr(rmm_last_error(), "RMM_DUMP_ON_OOM: nothing written to") != NULL && strstr(rmm_last_error(), dir) != NULL);
    rmdir(dir);
    rmm_resource_destroy(pool);
    /* the cause in full: a pool over a limiting adaptor keeps the adaptor's verdict; a pool over a
       user resource its whole reason */
    CHECK_OK(rmm_limiting_adaptor_create(&lim, rmm_get_current_device_resource(), 4 * MiB));
    CHECK_OK(rmm_pool_create(&pool, lim, NULL));
    CHECK_STATUS(rmm_allocate(pool, &a, 16 * MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(rmm_last_error(), "cause: ") != NULL && strstr(strstr(rmm_last_error(), "cause: "), "Verdict: at the maximum") != NULL);
    rmm_resource_destroy(pool);
    rmm_resource_destroy(lim);
    user.vtable = &user_vt;
    pd = rmm_pool_desc_default();
    pd.initial_bytes = 0;
    CHECK_OK(rmm_pool_create(&pool, &user, &pd));
    CHECK_STATUS(rmm_allocate(pool, &a, 1000, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(rmm_last_error(), "END-OF-REASON") != NULL);
    /* the user type's name in the dump, as it is */
    {
        char all[8192];
        f = tmpfile();
        CHECK(f != NULL);
        if (f) {
            CHECK_OK(rmm_resource_dump_json(pool, f));
            rewind(f);
            n = fread(all, 1, sizeof all - 1, f);
            all[n] = '\0';
            fclose(f);
            CHECK(strstr(all, "\"caf\xc3\xa9_\xe2\x82\xac\"") != NULL && all_utf8(all));
        }
    }
    rmm_resource_destroy(pool);
    /* a long RMM_ALLOC_CONF value of two-byte characters: the messages stay UTF-8 */
    n = (size_t)sprintf(conf, "bogus:");
    while (n < 300) {
        conf[n++] = (char)0xc3;
        conf[n++] = (char)0xa9;
    }
    conf[n] = '\0';
    for (i = 0; i < 2; i++) { /* (an odd and an even cut) */
        pd = rmm_pool_desc_default();
        CHECK_STATUS(rmm_pool_desc_parse(&pd, conf + i), RMM_ERROR_INVALID_ARGUMENT);
        CHECK(all_utf8(rmm_last_error()));
        CHECK(setenv("RMM_ALLOC_CONF", conf + i, 1) == 0);
        CHECK_STATUS(rmm_pool_desc_from_env(&pd), RMM_ERROR_INVALID_ARGUMENT);
        unsetenv("RMM_ALLOC_CONF");
        CHECK(all_utf8(rmm_last_error()));
    }
}

/* A fixed-size resource whose upstream refuses a second chunk: every block is in use, so the
   verdict blames upstream, and the message keeps what upstream said. */
TEST(oom_verdict_fixed_size_refused_upstream) {
    rmm_resource *limit = NULL, *fixed = NULL;
    rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
    void *p[4], *q = NULL;
    int i;
    NEED_GPU();
    fd.block_bytes = MiB;
    fd.blocks_to_preallocate = 4;
    CHECK_OK(rmm_limiting_adaptor_create(&limit, rmm_get_current_device_resource(), 4 * MiB));
    CHECK_OK(rmm_fixed_size_create(&fixed, limit, &fd));
    for (i = 0; i < 4; i++) CHECK_OK(rmm_allocate(fixed, &p[i], MiB, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_allocate(fixed, &q, MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    printf("  %s\n", rmm_last_error());
    CHECK(strstr(rmm_last_error(), "fixed_size: out of memory allocating 1048576 bytes") != NULL);
    CHECK(strstr(rmm_last_error(), "Verdict: refused upstream") != NULL);
    CHECK(strstr(rmm_last_error(), "It holds 4194304 bytes (no maximum), 4194304 live") != NULL);
    CHECK(strstr(rmm_last_error(), "cause: limiting") != NULL);
    for (i = 0; i < 4; i++) CHECK_OK(rmm_deallocate(fixed, p[i], MiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(fixed);
    rmm_resource_destroy(limit);
}

/* A limit of 0 is a maximum of 0, not "no maximum": refused without asking upstream, and said so. */
TEST(oom_verdict_limit_zero) {
    rmm_resource *limit = NULL;
    void *a = NULL;
    NEED_GPU();
    CHECK_OK(rmm_limiting_adaptor_create(&limit, rmm_get_current_device_resource(), 0));
    CHECK_STATUS(rmm_allocate(limit, &a, 256, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(a == NULL);
    printf("  %s\n", rmm_last_error());
    CHECK(strstr(rmm_last_error(), "Verdict: at the maximum") != NULL);
    CHECK(strstr(rmm_last_error(), "(a maximum of 0)") != NULL);
    CHECK(strstr(rmm_last_error(), "no maximum") == NULL);
    rmm_resource_destroy(limit);
}

/* An alignment no block meets: "alignment", not "refused upstream" or "fragmented" (a red team's
   find): the pool asked to align 100 bytes to 2^50 (the room to reach it, more than any device),
   and an arena of 16 MiB, all free, asked for 64 MiB alignment (no superblock is placed there). */
TEST(oom_verdict_alignment) {
    rmm_resource *pool = NULL, *arena = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    rmm_arena_desc ad = rmm_arena_desc_default();
    void *p = NULL;
    rmm_status st;
    NEED_GPU();
    pd.initial_bytes = 16 * MiB;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), &pd));
    if (!pool) return;
    CHECK_STATUS(rmm_allocate_aligned(pool, &p, 100, (size_t)1 << 50, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    printf("  %s\n", rmm_last_error());
    CHECK(p == NULL && strstr(rmm_last_error(), "(alignment 1125899906842624") != NULL);
    CHECK(strstr(rmm_last_error(), "Verdict: alignment: the request with room to reach its alignment is larger than the device") != NULL);
    /* a request that alone is larger than the device: not the alignment's fault (a review's find) */
    CHECK_STATUS(rmm_allocate_aligned(pool, &p, (size_t)1 << 50, 512, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(rmm_last_error(), "Verdict: alignment") == NULL);
    CHECK_OK(rmm_allocate(pool, &p, 100, RMM_STREAM_DEFAULT)); /* nothing was lost */
    CHECK_OK(rmm_deallocate(pool, p, 100, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);
    ad.arena_bytes = 16 * MiB;
    CHECK_OK(rmm_arena_create(&arena, rmm_get_current_device_resource(), &ad));
    if (!arena) return;
    p = NULL;
    st = rmm_allocate_aligned(arena, &p, 100, 64 * MiB, RMM_STREAM_DEFAULT);
    if (st == RMM_SUCCESS) { /* (the arena's memory happened to lie at that alignment) */
        printf("  (the arena met the alignment: %p)\n", p);
        CHECK(((uintptr_t)p & (64 * MiB - 1)) == 0);
        CHECK_OK(rmm_deallocate_aligned(arena, p, 100, 64 * MiB, RMM_STREAM_DEFAULT));
    } else {
        printf("  %s\n", rmm_last_error());
        CHECK(st == RMM_ERROR_OUT_OF_MEMORY && p == NULL);
        CHECK(strstr(rmm_last_error(), "Verdict: alignment: free blocks are large enough, but none at this alignment") != NULL);
    }
    rmm_resource_destroy(arena);
}

/* A VIRTUAL pool at its maximum (pages, not address space, run out) explains itself like the other
   growth modes, and RMM_DUMP_ON_OOM writes its state. */
TEST(oom_verdict_virtual_pool) {
    rmm_resource *pool = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    void *a = NULL, *b = NULL;
    char path[128];
    FILE *f;
    int valid;
    NEED_GPU();
    pd.growth = RMM_POOL_GROWTH_VIRTUAL;
    pd.virtual_bytes = 64 * MiB;
    pd.maximum_bytes = 4 * MiB;
    if (!new_virtual_pool(&pd, &pool)) return;
    f = temp_file(path, sizeof path, "vmoom");
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK_OK(rmm_allocate(pool, &a, 3 * MiB, RMM_STREAM_DEFAULT));
    CHECK(setenv("RMM_DUMP_ON_OOM", path, 1) == 0);
    CHECK_STATUS(rmm_allocate(pool, &b, 3 * MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    unsetenv("RMM_DUMP_ON_OOM");
    CHECK(b == NULL);
    printf("  %s\n", rmm_last_error());
    CHECK(strstr(rmm_last_error(), "pool: out of memory allocating 3145728 bytes (alignment 256") != NULL);
    CHECK(strstr(rmm_last_error(), "Verdict: at the maximum") != NULL);
    CHECK(strstr(rmm_last_error(), "cause: ") != NULL);
    valid = dump_is_valid(path, "pool");
    if (valid >= 0) CHECK(valid == 1);
    remove(path);
    CHECK_OK(rmm_pool_validate(pool));
    CHECK_OK(rmm_deallocate(pool, a, 3 * MiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);
    /* the reserved range full, with no maximum: "address range full", not "refused upstream" (a
       VIRTUAL pool has no upstream; a red team's find) */
    pd.virtual_bytes = 4 * MiB;
    pd.maximum_bytes = 0;
    pool = NULL;
    CHECK_OK(rmm_pool_create(&pool, NULL, &pd));
    if (!pool) return;
    CHECK_OK(rmm_allocate(pool, &a, 3 * MiB, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_allocate(pool, &b, 2 * MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    printf("  %s\n", rmm_last_error());
    CHECK(strstr(rmm_last_error(), "Verdict: address range full") != NULL);
    CHECK_OK(rmm_allocate(pool, &b, 512 * KiB, RMM_STREAM_DEFAULT)); /* what fits still comes */
    CHECK_OK(rmm_deallocate(pool, b, 512 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(pool, a, 3 * MiB, RMM_STREAM_DEFAULT));
    rmm_resource_destroy(pool);
    pd.virtual_bytes = 64 * MiB;
#if defined(RMM_BACKEND_HOST)
    /* no page can be created (no maximum): "driver refused", the driver's error the cause */
    pd.maximum_bytes = 0;
    pool = NULL;
    CHECK_OK(rmm_pool_create(&pool, NULL, &pd));
    if (!pool) return;
    rmm_host_backend_fail_calls("cuMemCreate", 1, 1, RMM_ERROR_OUT_OF_MEMORY);
    CHECK_STATUS(rmm_allocate(pool, &b, MiB, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    rmm_host_backend_fail_calls(NULL, 0, 0, RMM_SUCCESS);
    printf("  %s\n", rmm_last_error());
    CHECK(strstr(rmm_last_error(), "pool: out of memory allocating 1048576 bytes") != NULL);
    CHECK(strstr(rmm_last_error(), "Verdict: driver refused") != NULL);
    CHECK(strstr(rmm_last_error(), "cause: cuMemCreate") != NULL);
    CHECK_OK(rmm_allocate(pool, &b, MiB, RMM_STREAM_DEFAULT)); /* nothing was lost */
    CHECK_OK(rmm_deallocate(pool, b, MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_pool_validate(pool));
    rmm_resource_destroy(pool);
#endif
}

#if defined(RMM_BACKEND_HOST)
/* A pool over the device resource asking more than the (simulated, 4 GiB) device holds: "device
   full", with cudaMalloc's error as the cause (no injection needed). */
TEST(oom_verdict_device_full) {
    rmm_resource *pool = NULL;
    void *p = NULL;
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
    CHECK_STATUS(rmm_allocate(pool, &p, (size_t)5 << 30, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    printf("  %s\n", rmm_last_error());
    CHECK(p == NULL);
    CHECK(strstr(rmm_last_error(), "Verdict: device full") != NULL);
    CHECK(strstr(rmm_last_error(), "cudaMalloc") != NULL);
    rmm_resource_destroy(pool);
}
#endif

/* A scope that frees what an outer one allocated counts negative (RMM's rule); the dump writes the
   signed value (it wrote 18446744073709550616 for -1000: a red team's find). */
TEST(statistics_dump_writes_negative_counts) {
    rmm_resource *stats = NULL;
    void *p = NULL;
    char path[128], text[4096];
    FILE *f;
    size_t n;
    int valid;
    NEED_GPU();
    CHECK_OK(rmm_statistics_adaptor_create(&stats, rmm_get_current_device_resource()));
    CHECK_OK(rmm_allocate(stats, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_statistics_push(stats));
    CHECK_OK(rmm_deallocate(stats, p, 1000, RMM_STREAM_DEFAULT));
    f = temp_file(path, sizeof path, "stats");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_OK(rmm_resource_dump_json(stats, f));
    fclose(f);
    f = fopen(path, "r");
    n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = '\0';
    CHECK(strstr(text, "\"bytes\":-1000") != NULL);
    CHECK(strstr(text, "\"count\":-1") != NULL);
    valid = dump_is_valid(path, "statistics");
    if (valid >= 0) CHECK(valid == 1);
    remove(path);
    CHECK_OK(rmm_statistics_pop(stats, NULL));
    rmm_resource_destroy(stats);
}

/* 70 statistics adaptors over the device resource: the dump is one valid document, and the base of
   a live block is found through every layer. A cycle (a binning resource made its own bin) fails
   with INVALID_ARGUMENT before anything is written. */
TEST(deep_adaptor_chains) {
    enum { LAYERS = 70 };
    rmm_resource *layer[LAYERS + 1], *bins = NULL;
    rmm_binning_desc bd = rmm_binning_desc_default();
    void *p = NULL, *base = NULL;
    size_t offset = 1, steps;
    char path[128];
    FILE *f;
    long n = -1;
    int i, valid;
    NEED_GPU();
    layer[0] = rmm_get_current_device_resource();
    for (i = 1; i <= LAYERS; i++) CHECK_OK(rmm_statistics_adaptor_create(&layer[i], layer[i - 1]));
    CHECK(rmm_resource_get_upstream(layer[LAYERS]) == layer[LAYERS - 1]);
    CHECK(rmm_resource_get_upstream(layer[1]) == layer[0]);
    CHECK(rmm_resource_get_upstream(layer[0]) == NULL);
    CHECK(rmm_resource_get_upstream(NULL) == NULL);
    for (steps = 0, bins = layer[LAYERS]; bins; bins = rmm_resource_get_upstream(bins)) steps++;
    CHECK(steps == LAYERS + 1);
    CHECK_OK(rmm_allocate(layer[LAYERS], &p, 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_allocation_base(layer[LAYERS], p, &base, &offset));
    CHECK(base == p && offset == 0);
    f = temp_file(path, sizeof path, "deep");
    CHECK(f != NULL);
    if (f) {
        CHECK_OK(rmm_resource_dump_json(layer[LAYERS], f));
        fclose(f);
        valid = dump_is_valid(path, "statistics");
        if (valid >= 0) CHECK(valid == 1);
        remove(path);
    }
    CHECK_OK(rmm_deallocate(layer[LAYERS], p, 4096, RMM_STREAM_DEFAULT));
    /* a cycle: nothing is written, INVALID_ARGUMENT */
    bins = NULL;
    CHECK_OK(rmm_binning_create(&bins, layer[LAYERS], &bd));
    CHECK_STATUS(rmm_binning_add_bin(bins, 1024, bins), RMM_ERROR_INVALID_ARGUMENT); /* (an allocation would never end) */
    CHECK_OK(rmm__binning_insert((rmm__binning *)bins, 1024, bins, false)); /* the graph add_bin refuses, made directly: the walks' own guard */
    f = temp_file(path, sizeof path, "cycle");
    CHECK(f != NULL);
    if (f) {
        CHECK_STATUS(rmm_resource_dump_json(bins, f), RMM_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(rmm_last_error(), "cycle") != NULL);
        fflush(f);
        n = ftell(f);
        fclose(f);
        CHECK(n == 0);
        remove(path);
    }
    rmm_resource_destroy(bins);
    for (i = LAYERS; i >= 1; i--) rmm_resource_destroy(layer[i]);
}

TEST(check_corruption_needs_margins) {
    NEED_GPU();
    CHECK_STATUS(rmm_resource_check_corruption(NULL), RMM_ERROR_NOT_SUPPORTED);
}

/* A user's resource type, registered (rmm_resource_register_type), is looked through by the walks:
   the dump nests its upstream, rmm_resource_get_upstream finds it, a cycle through it is caught. */
typedef struct user_res {
    rmm_resource base;
    rmm_resource *up;
} user_res;
static rmm_status user_alloc(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    return rmm_allocate_aligned(((user_res *)self)->up, ptr, bytes, alignment, stream);
}
static rmm_status user_free(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    return rmm_deallocate_aligned(((user_res *)self)->up, ptr, bytes, alignment, stream);
}
static rmm_resource *user_upstream(const rmm_resource *mr) { return ((const user_res *)mr)->up; }
static const rmm_resource_vtable user_vtable = {"my_resource", user_alloc, user_free, NULL, NULL};
static rmm_resource_vtable many_vtables[17];

TEST(user_types_take_part_in_the_walks) {
    rmm_resource *stats = NULL, *pool = NULL;
    user_res u;
    char path[128], text[4096];
    FILE *f;
    size_t n, i;
    rmm_status st = RMM_SUCCESS;
    void *ptr = NULL, *base = NULL;
    size_t offset = 0;
    NEED_GPU();
    CHECK_OK(rmm_pool_create(&pool, rmm_get_current_device_resource(), NULL));
    if (!pool) return;
    u.base.vtable = &user_vtable;
    u.up = pool;
    CHECK_OK(rmm_statistics_adaptor_create(&stats, &u.base));
    /* unregistered: the walks stop at it */
    CHECK(rmm_resource_get_upstream(&u.base) == NULL);
    /* bad input */
    CHECK_STATUS(rmm_resource_register_type(NULL, user_upstream), RMM_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(rmm_resource_register_type(&user_vtable, NULL), RMM_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(rmm_resource_register_type(pool->vtable, user_upstream), RMM_ERROR_INVALID_ARGUMENT);
    CHECK_OK(rmm_resource_register_type(&user_vtable, user_upstream));
    CHECK_OK(rmm_resource_register_type(&user_vtable, user_upstream)); /* again: replaces */
    CHECK(rmm_resource_get_upstream(&u.base) == pool);
    CHECK(rmm_resource_get_upstream(stats) == &u.base);
    /* the dump nests the pool inside the user's node */
    f = temp_file(path, sizeof path, "user");
    CHECK(f != NULL);
    if (f) {
        CHECK_OK(rmm_resource_dump_json(stats, f));
        fclose(f);
        CHECK(dump_is_valid(path, "statistics") != 0);
        f = fopen(path, "r");
        n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        text[n] = 0;
        if (f) fclose(f);
        CHECK(strstr(text, "\"type\":\"user\"") != NULL && strstr(text, "\"name\":\"my_resource\"") != NULL);
        CHECK(strstr(text, "\"type\":\"user\"") < strstr(text, "\"type\":\"pool\""));
        remove(path);
    }
    CHECK_OK(rmm_resource_validate(stats));
    /* allocation base does not look through it */
    CHECK_OK(rmm_allocate(stats, &ptr, 1024, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_resource_allocation_base(stats, ptr, &base, &offset), RMM_ERROR_NOT_SUPPORTED);
    CHECK_OK(rmm_deallocate(stats, ptr, 1024, RMM_STREAM_DEFAULT));
    /* a cycle through a user resource is refused before anything is written */
    u.up = stats;
    f = temp_file(path, sizeof path, "cycle");
    if (f) {
        CHECK_STATUS(rmm_resource_dump_json(stats, f), RMM_ERROR_INVALID_ARGUMENT);
        CHECK(ftell(f) == 0);
        fclose(f);
        remove(path);
    }
    u.up = pool;
    /* the table is bounded */
    for (i = 0; i < 17 && st == RMM_SUCCESS; i++) {
        many_vtables[i] = user_vtable;
        st = rmm_resource_register_type(&many_vtables[i], user_upstream);
    }
    CHECK(st == RMM_ERROR_OUT_OF_MEMORY && i == 16); /* the 16th fails: user_vtable holds one slot */
    rmm_resource_destroy(stats);
    rmm_resource_destroy(pool);
}

int main(void) {
    HARNESS_INIT();
    RUN(dump_every_kind_of_resource);
    RUN(oom_verdict_fragmented);
    RUN(oom_verdict_at_the_maximum);
    RUN(oom_verdict_held_by_other_streams);
    RUN(oom_verdict_large_block_on_the_only_stream);
    RUN(oom_verdict_fixed_size_refused_upstream);
    RUN(dump_on_oom);
    RUN(diagnostics_say_what_happened);
    RUN(dump_on_oom_says_why_the_dump_failed);
    RUN(oom_verdict_limit_zero);
    RUN(oom_verdict_virtual_pool);
    RUN(oom_verdict_alignment);
#if defined(RMM_BACKEND_HOST)
    RUN(oom_verdict_device_full);
#endif
    RUN(statistics_dump_writes_negative_counts);
    RUN(deep_adaptor_chains);
    RUN(check_corruption_needs_margins);
    RUN(user_types_take_part_in_the_walks);
    return harness_main_end();
}
