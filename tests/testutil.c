#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bcl_context *tu_context(void)
{
    bcl_context *ctx = NULL;
    const char *spec = getenv("BATCHCL_TEST_DEVICE");
    bcl_status s = bcl_create(&ctx, spec && *spec ? spec : NULL);
    if (s != BCL_SUCCESS)
        fail_msg("bcl_create: %s: %s", bcl_status_string(s), bcl_last_error(NULL));
    return ctx;
}

int tu_quick(void)
{
    const char *q = getenv("BATCHCL_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

int tu_clear_transfer_env(void **state)
{
    (void)state;
    unsetenv("BATCHCL_ZERO_COPY");
    unsetenv("BATCHCL_STAGING");
    unsetenv("BATCHCL_DEVICE_MEMORY_LIMIT");
    unsetenv("BATCHCL_TIMELINE");
    return 0;
}

void tu_spd_batch(int kind, double cond, int n, int nrhs, size_t batch, int dbl, uint64_t seed,
                  void *A, void *B)
{
    double *a = malloc(sizeof *a * (size_t)n * n), *b = malloc(sizeof *b * (size_t)n * nrhs);
    mg_rng r;
    mg_seed(&r, seed);
    for (size_t k = 0; k < batch; ++k) {
        int info = kind == 0 ? mg_xi_rho(n, 0.05 + 0.9 * mg_uniform(&r), &r, a)
                             : mg_spd_cond(n, cond, &r, a);
        if (info != 0)
            fail_msg("matrix generator failed (info %d)", info);
        mg_vector(n * nrhs, &r, b);
        for (size_t i = 0; i < (size_t)n * n; ++i)
            oracle_set(A, dbl, k * (size_t)n * n + i, a[i]);
        for (size_t i = 0; i < (size_t)n * nrhs; ++i)
            oracle_set(B, dbl, k * (size_t)n * nrhs + i, b[i]);
    }
    free(a);
    free(b);
}

void *tu_alloc(size_t elements, int dbl)
{
    void *p = calloc(elements ? elements : 1, dbl ? sizeof(double) : sizeof(float));
    if (!p)
        fail_msg("out of memory");
    return p;
}

void tu_poison(void *p, size_t bytes)
{
    memset(p, 0x5a, bytes);
}

int tu_is_poisoned(const void *p, size_t bytes)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < bytes; ++i)
        if (c[i] != 0x5a)
            return 0;
    return 1;
}
