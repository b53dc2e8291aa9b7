/* Helpers shared by the test programs. */
#ifndef BATCHCL_TESTUTIL_H
#define BATCHCL_TESTUTIL_H

#include "batchcl.h"
#include "matgen.h"
#include "oracle.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* The device the tests run on: $BATCHCL_TEST_DEVICE, else the library's default choice. */
bcl_context *tu_context(void);

/* Nonzero when BATCHCL_TEST_QUICK is set (and not "0"): the sanitizer pass of the CI sets it, and
 * the size grids shrink to a representative subset (every code path, fewer sizes), since the same
 * grids run in full in the release pass. */
int tu_quick(void);

/* A cmocka teardown: unsets the environment hooks the chunked-transfer tests set around
 * tu_context() (BATCHCL_ZERO_COPY, _STAGING, _DEVICE_MEMORY_LIMIT, _TIMELINE), so that a failed
 * assertion between setenv and unsetenv does not pass them on to the next test. */
int tu_clear_transfer_env(void **state);

/* Assert a call's status, printing the library's explanation when it differs. */
#define TU_STATUS(ctx, expected, call)                                                           \
    do {                                                                                         \
        bcl_status tu_s_ = (call);                                                               \
        if (tu_s_ != (expected))                                                                 \
            fail_msg("%s:%d: %s returned %s, expected %s: %s", __FILE__, __LINE__, #call,        \
                     bcl_status_string(tu_s_), bcl_status_string(expected),                      \
                     bcl_last_error(ctx));                                                       \
    } while (0)

/* A batch of SPD problems (float or double): kind 0 = randomized Xi_rho, kind 1 = condition
 * number `cond`. Right-hand sides uniform in [-1, 1). */
void tu_spd_batch(int kind, double cond, int n, int nrhs, size_t batch, int dbl, uint64_t seed,
                  void *A, void *B);

void *tu_alloc(size_t elements, int dbl);
/* Fill with a recognizable sentinel (to check that outputs are untouched). */
void tu_poison(void *p, size_t bytes);
int tu_is_poisoned(const void *p, size_t bytes);

#endif
