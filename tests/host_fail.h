/* tests/host_fail.h - host memory that runs out on purpose: while host_fail_nth is not 0, the
   library's nth host request from now (RMM_SYS_MALLOC or RMM_SYS_REALLOC) fails. Include before
   rmm.h (it defines the RMM_SYS_* macros), after <stdlib.h>. */
#ifndef RMM_TESTS_HOST_FAIL_H
#define RMM_TESTS_HOST_FAIL_H
static int host_fail_nth; /* not 0: the library's nth host request from now fails */
static int host_fails(void) { return host_fail_nth && --host_fail_nth == 0; }
static void *test_sys_malloc(size_t n) { return host_fails() ? NULL : malloc(n); }
static void *test_sys_realloc(void *p, size_t n) { return host_fails() ? NULL : realloc(p, n); }
#define RMM_SYS_MALLOC(n) test_sys_malloc(n)
#define RMM_SYS_REALLOC(p, n) test_sys_realloc(p, n)
#define RMM_SYS_FREE(p) free(p)
#endif
