/* common.h - the error handling every example shares. Include it after rmm.h.

   CHECK(call) runs one rmm call (anything returning an rmm_status, rmmError_t included) and, on
   any status other than RMM_SUCCESS, prints "file:line: call failed with STATUS: message" to
   stderr, where STATUS is rmm_status_string() of the status and message is rmm_last_error(), the
   calling thread's reason for the last failure, then exits the process with status 1.
   EXPECT(cond) is for conditions the example expects to hold: if cond is false it prints
   "file:line: expected cond" to stderr and exits with status 1. Both evaluate their argument
   once. Builds as C99 and as C++ (the .cu examples under nvcc).
*/
#ifndef RMM_EXAMPLES_COMMON_H
#define RMM_EXAMPLES_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        rmm_status check_status_ = (call);                                                           \
        if (check_status_ != RMM_SUCCESS) {                                                          \
            fprintf(stderr, "%s:%d: %s failed with %s: %s\n", __FILE__, __LINE__, #call,             \
                    rmm_status_string(check_status_), rmm_last_error());                             \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

#define EXPECT(cond)                                                                                 \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                      \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

#endif /* RMM_EXAMPLES_COMMON_H */
