/* LDL^T solve, factor and solve-with-factors against LAPACK (double precision), on every mapping,
 * both precisions, every n from 1 to 64; failure isolation, chunking, device buffers, bad input.
 * Usage: test_ldlt <group>, group one of grid-s, grid-d, exact, numerics, api. */
#include "testutil.h"

#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRID_BATCH 37 /* odd, more than one work-group of every variant */
#define RES_LIMIT 30.0

/* ---- the reference problems of the grid, generated once per process ---- */

typedef struct {
    double *A, *B, *Xref, *cond;
} grid_set;

static grid_set grid[65][4]; /* [n][nrhs] */

static const grid_set *grid_problems(int n, int nrhs)
{
    grid_set *g = &grid[n][nrhs];
    if (!g->A) {
        const size_t nn = (size_t)n * n, nb = (size_t)n * nrhs;
        g->A = malloc(sizeof *g->A * nn * GRID_BATCH);
        g->B = malloc(sizeof *g->B * nb * GRID_BATCH);
        g->Xref = malloc(sizeof *g->Xref * nb * GRID_BATCH);
        g->cond = malloc(sizeof *g->cond * GRID_BATCH);
        tu_spd_batch(0, 0, n, nrhs, GRID_BATCH, 1, 1000u * n + nrhs, g->A, g->B);
        for (size_t k = 0; k < GRID_BATCH; ++k)
            if (oracle_posv(n, nrhs, 1, g->A + k * nn, g->B + k * nb, g->Xref + k * nb,
                            &g->cond[k]) != 0)
                fail_msg("LAPACK dposv failed on a generated SPD matrix (n = %d)", n);
    }
    return g;
}

static void *convert(const double *src, size_t count, int dbl)
{
    void *dst = tu_alloc(count, dbl);
    for (size_t i = 0; i < count; ++i)
        oracle_set(dst, dbl, i, src[i]);
    return dst;
}

/* Solve the grid problems of size n with the context's current parameters and check every
 * problem: success, scaled residual, forward error against LAPACK within its condition bound. */
static void check_grid_size(bcl_context *ctx, int n, int nrhs, int dbl, const char *variant)
{
    const grid_set *g = grid_problems(n, nrhs);
    const size_t nn = (size_t)n * n, nb = (size_t)n * nrhs;
    void *A = convert(g->A, nn * GRID_BATCH, dbl), *B = convert(g->B, nb * GRID_BATCH, dbl);
    void *X = tu_alloc(nb * GRID_BATCH, dbl);
    int info[GRID_BATCH];
    TU_STATUS(ctx, BCL_SUCCESS,
              dbl ? bcl_dsysv(ctx, BCL_LDLT, n, nrhs, GRID_BATCH, A, B, X, info)
                  : bcl_ssysv(ctx, BCL_LDLT, n, nrhs, GRID_BATCH, A, B, X, info));
    const size_t es = dbl ? 8 : 4;
    for (size_t k = 0; k < GRID_BATCH; ++k) {
        const char *a = (const char *)A + k * nn * es, *b = (const char *)B + k * nb * es,
                   *x = (const char *)X + k * nb * es;
        double res = oracle_sysv_residual(n, nrhs, dbl, a, b, x);
        double fe = oracle_forward_error(n, nrhs, dbl, x, g->Xref + k * nb);
        double bound = RES_LIMIT * n * g->cond[k] * oracle_eps(dbl);
        if (info[k] != 0 || !(res < RES_LIMIT) || !(fe <= bound))
            fail_msg("%s %s n=%d nrhs=%d problem %zu: info %d, residual %.3g (limit %g), forward "
                     "error %.3g (bound %.3g); kernel: %s",
                     variant, dbl ? "double" : "single", n, nrhs, k, info[k], res, RES_LIMIT, fe,
                     bound, bcl_last_kernel(ctx));
    }
    /* the last problem alone (batch 1) gives bit for bit what it gave inside the batch */
    void *X1 = tu_alloc(nb, dbl);
    int info1;
    const size_t last = GRID_BATCH - 1;
    TU_STATUS(ctx, BCL_SUCCESS,
              dbl ? bcl_dsysv(ctx, BCL_LDLT, n, nrhs, 1, (double *)A + last * nn,
                              (double *)B + last * nb, X1, &info1)
                  : bcl_ssysv(ctx, BCL_LDLT, n, nrhs, 1, (float *)A + last * nn,
                              (float *)B + last * nb, X1, &info1));
    if (info1 != 0 || memcmp(X1, (char *)X + last * nb * es, nb * es) != 0)
        fail_msg("%s %s n=%d: batch of one differs from the same problem in a batch", variant,
                 dbl ? "double" : "single", n);
    free(X1);
    free(A);
    free(B);
    free(X);
}

typedef struct {
    const char *name;
    bcl_mapping mapping;
    int nstar_div; /* hybrid: n* = ceil(n / nstar_div) */
    int vw;        /* SIMD problems per work-item: -1 = the device's vector width */
    int interleaved;
    int specialize;
} variant;

static const variant variants[] = {
    {"table", BCL_MAPPING_AUTO, 0, 0, 0, 0},
    {"simd", BCL_MAPPING_SIMD, 0, 1, -1, 0},
    {"simd-interleaved", BCL_MAPPING_SIMD, 0, 1, 1, 0},
    {"simd-vector", BCL_MAPPING_SIMD, 0, -1, -1, 0},
    {"collaborative", BCL_MAPPING_COLLABORATIVE, 0, 0, 0, -1},
    {"hybrid-n/2", BCL_MAPPING_HYBRID, 2, 0, 0, -1},
};

static void apply_variant(bcl_context *ctx, const variant *v, int n, int dbl)
{
    bcl_params p = {0};
    p.mapping = v->mapping;
    if (v->nstar_div)
        p.work_items_per_problem = (n + v->nstar_div - 1) / v->nstar_div;
    if (v->vw) {
        bcl_device_info d;
        bcl_device_info_get(ctx, &d);
        cl_uint w = dbl ? d.vector_width_double : d.vector_width_float;
        p.problems_per_work_item = v->vw > 0 ? v->vw : (w >= 8 ? 8 : w >= 4 ? 4 : w >= 2 ? 2 : 1);
    }
    p.simd_interleaved = v->interleaved;
    p.specialize = v->specialize;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, v->mapping == BCL_MAPPING_AUTO ? NULL : &p));
}

static void grid_all(int dbl)
{
    bcl_context *ctx = tu_context();
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v)
        for (int n = 1; n <= 64; ++n) {
            apply_variant(ctx, &variants[v], n, dbl);
            check_grid_size(ctx, n, 1, dbl, variants[v].name);
            check_grid_size(ctx, n, 3, dbl, variants[v].name);
        }
    bcl_destroy(ctx);
}

static void test_grid_single(void **state)
{
    (void)state;
    grid_all(0);
}

static void test_grid_double(void **state)
{
    (void)state;
    grid_all(1);
}

/* Kernels compiled for the exact n (the GPU default) and other hybrid splits, on a size sample. */
static void test_exact_and_splits(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const variant exact[] = {{"collaborative-exact", BCL_MAPPING_COLLABORATIVE, 0, 0, 0, 1},
                             {"hybrid-exact", BCL_MAPPING_HYBRID, 2, 0, 0, 1}};
    const int sizes[] = {5, 33};
    for (int dbl = 0; dbl < 2; ++dbl)
        for (int s = 0; s < 2; ++s)
            for (int v = 0; v < 2; ++v) {
                if (v == 1 && sizes[s] == 33)
                    continue;
                apply_variant(ctx, &exact[v], sizes[s], dbl);
                check_grid_size(ctx, sizes[s], 1, dbl, exact[v].name);
                check_grid_size(ctx, sizes[s], 2, dbl, exact[v].name);
            }
    /* the GPU code path (unrolled, vector broadcast reads) on the smallest buckets */
    for (int dbl = 0; dbl < 2; ++dbl)
        for (int n = 5; n <= 16; n += 11) {
            const variant unrolled[] = {{"collaborative-unrolled", BCL_MAPPING_COLLABORATIVE, 0, 0, 0, -1},
                                        {"hybrid-unrolled", BCL_MAPPING_HYBRID, 2, 0, 0, -1}};
            for (int v = 0; v < 2; ++v) {
                apply_variant(ctx, &unrolled[v], n, dbl);
                bcl_params p = {0};
                p.mapping = unrolled[v].mapping;
                p.work_items_per_problem = unrolled[v].nstar_div ? (n + 1) / 2 : 0;
                p.specialize = unrolled[v].specialize;
                p.unroll = 1;
                TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
                check_grid_size(ctx, n, 2, dbl, unrolled[v].name);
                if (!strstr(bcl_last_kernel(ctx), "-DBCL_UNROLL"))
                    fail_msg("not the unrolled kernel: %s", bcl_last_kernel(ctx));
            }
        }
    /* three rows per work-item (n* = ceil(n/3)) in the smallest bucket */
    const variant third = {"hybrid-n/3", BCL_MAPPING_HYBRID, 3, 0, 0, -1};
    for (int n = 3; n <= 8; ++n) {
        apply_variant(ctx, &third, n, 0);
        check_grid_size(ctx, n, 2, 0, third.name);
    }
    bcl_destroy(ctx);
}

/* ---- numerics: ill-conditioned, numerically singular, failure isolation ---- */

static const variant *numeric_variants[] = {&variants[0], &variants[1], &variants[3], &variants[4],
                                            &variants[5]};
#define N_NUMERIC (sizeof numeric_variants / sizeof numeric_variants[0])

static void test_ill_conditioned(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int sizes[] = {2, 5, 16, 31, 32, 47, 64};
    for (int dbl = 0; dbl < 2; ++dbl)
        for (size_t v = 0; v < N_NUMERIC; ++v)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
                const int n = sizes[s];
                const size_t batch = 9, nn = (size_t)n * n;
                /* kappa well inside what LDL^T without pivoting handles in this precision */
                const double cond = dbl ? 1e12 : 1e4;
                void *A = tu_alloc(batch * nn, dbl), *B = tu_alloc(batch * n, dbl),
                     *X = tu_alloc(batch * n, dbl);
                int info[9];
                tu_spd_batch(1, cond, n, 1, batch, dbl, 77u + n, A, B);
                apply_variant(ctx, numeric_variants[v], n, dbl);
                TU_STATUS(ctx, BCL_SUCCESS,
                          dbl ? bcl_dsysv(ctx, BCL_LDLT, n, 1, batch, A, B, X, info)
                              : bcl_ssysv(ctx, BCL_LDLT, n, 1, batch, A, B, X, info));
                const size_t es = dbl ? 8 : 4;
                for (size_t k = 0; k < batch; ++k) {
                    double res = oracle_sysv_residual(n, 1, dbl, (char *)A + k * nn * es,
                                                      (char *)B + k * n * es, (char *)X + k * n * es);
                    if (!(res < RES_LIMIT))
                        fail_msg("%s %s n=%d cond %.0e problem %zu: residual %.3g",
                                 numeric_variants[v]->name, dbl ? "double" : "single", n, cond, k,
                                 res);
                }
                free(A);
                free(B);
                free(X);
            }
    bcl_destroy(ctx);
}

/* Numerically singular SPD matrices: the factorization may fail, but it reports it and a
 * completed one is still backward stable; no NaN ever reaches X. */
static void test_numerically_singular(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    for (int dbl = 0; dbl < 2; ++dbl)
        for (size_t v = 0; v < N_NUMERIC; ++v) {
            const int n = 24;
            const size_t batch = 12, nn = (size_t)n * n, es = dbl ? 8 : 4;
            void *A = tu_alloc(batch * nn, dbl), *B = tu_alloc(batch * n, dbl),
                 *X = tu_alloc(batch * n, dbl);
            int info[12];
            tu_spd_batch(1, dbl ? 1e18 : 1e10, n, 1, batch, dbl, 5, A, B);
            apply_variant(ctx, numeric_variants[v], n, dbl);
            bcl_status s = dbl ? bcl_dsysv(ctx, BCL_LDLT, n, 1, batch, A, B, X, info)
                               : bcl_ssysv(ctx, BCL_LDLT, n, 1, batch, A, B, X, info);
            if (s != BCL_SUCCESS && s != BCL_NUMERICAL_FAILURE)
                fail_msg("unexpected status %s: %s", bcl_status_string(s), bcl_last_error(ctx));
            int failures = 0;
            for (size_t k = 0; k < batch; ++k) {
                const char *x = (char *)X + k * n * es, *b = (char *)B + k * n * es;
                if (info[k] > 0) {
                    ++failures;
                    assert_true(info[k] <= n);
                    assert_memory_equal(x, b, n * es); /* X = B, as LAPACK leaves B */
                } else {
                    assert_int_equal(info[k], 0);
                    double res = oracle_sysv_residual(n, 1, dbl, (char *)A + k * nn * es, b, x);
                    if (!(res < RES_LIMIT))
                        fail_msg("%s: completed factorization with residual %.3g",
                                 numeric_variants[v]->name, res);
                }
            }
            assert_int_equal(s == BCL_NUMERICAL_FAILURE, failures > 0);
            free(A);
            free(B);
            free(X);
        }
    bcl_destroy(ctx);
}

/* Indefinite, NaN and zero matrices mid-batch: their info matches LAPACK dpotrf, their X is B,
 * and every neighbour is bit-for-bit what a clean batch gives. */
static void test_failure_isolation(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int sizes[] = {3, 9, 32, 64};
    for (int dbl = 0; dbl < 2; ++dbl)
        for (size_t v = 0; v < N_NUMERIC; ++v)
            for (int s = 0; s < 4; ++s) {
                const int n = sizes[s];
                const size_t batch = 45, nn = (size_t)n * n, es = dbl ? 8 : 4;
                void *A = tu_alloc(batch * nn, dbl), *B = tu_alloc(batch * n * 2, dbl),
                     *X = tu_alloc(batch * n * 2, dbl), *Xclean = tu_alloc(batch * n * 2, dbl);
                int info[45], info_clean[45];
                tu_spd_batch(0, 0, n, 2, batch, dbl, 99u + n, A, B);
                apply_variant(ctx, numeric_variants[v], n, dbl);
                TU_STATUS(ctx, BCL_SUCCESS,
                          dbl ? bcl_dsysv(ctx, BCL_LDLT, n, 2, batch, A, B, Xclean, info_clean)
                              : bcl_ssysv(ctx, BCL_LDLT, n, 2, batch, A, B, Xclean, info_clean));
                /* problem 4: negative pivot at n/2; 17: NaN on the diagonal; 30: NaN below it;
                 * 44: zero matrix */
                const size_t bad[] = {4, 17, 30, 44};
                const int m = n / 2;
                char *a4 = (char *)A + 4 * nn * es, *a17 = (char *)A + 17 * nn * es,
                     *a30 = (char *)A + 30 * nn * es, *a44 = (char *)A + 44 * nn * es;
                oracle_set(a4, dbl, (size_t)m + (size_t)m * n, -1.0);
                oracle_set(a17, dbl, (size_t)(n - 1) + (size_t)(n - 1) * n, NAN);
                if (n > 1) {
                    oracle_set(a30, dbl, (size_t)(n - 1), NAN);
                    oracle_set(a30, dbl, (size_t)(n - 1) * n, NAN);
                }
                memset(a44, 0, nn * es);
                TU_STATUS(ctx, BCL_NUMERICAL_FAILURE,
                          dbl ? bcl_dsysv(ctx, BCL_LDLT, n, 2, batch, A, B, X, info)
                              : bcl_ssysv(ctx, BCL_LDLT, n, 2, batch, A, B, X, info));
                for (size_t k = 0; k < batch; ++k) {
                    int is_bad = k == bad[0] || k == bad[1] || k == bad[2] || k == bad[3];
                    const char *x = (char *)X + k * 2 * n * es;
                    if (is_bad) {
                        /* LAPACK's dpotf2 stops at the first pivot that is <= 0 or NaN: the
                         * NaN problems fail at pivot n by construction. (OpenBLAS's own potrf
                         * does not screen NaN, so the oracle is asked about the others only.) */
                        int expect = (k == 17 || k == 30)
                                         ? n
                                         : oracle_potrf_info(n, dbl, (char *)A + k * nn * es);
                        if (info[k] != expect)
                            fail_msg("%s %s n=%d problem %zu: info %d, LAPACK dpotrf says %d",
                                     numeric_variants[v]->name, dbl ? "double" : "single", n, k,
                                     info[k], expect);
                        assert_memory_equal(x, (char *)B + k * 2 * n * es, 2 * n * es);
                    } else {
                        assert_int_equal(info[k], 0);
                        if (memcmp(x, (char *)Xclean + k * 2 * n * es, 2 * n * es) != 0)
                            fail_msg("%s n=%d: neighbour %zu changed by the failed problems",
                                     numeric_variants[v]->name, n, k);
                    }
                }
                free(A);
                free(B);
                free(X);
                free(Xclean);
            }
    bcl_destroy(ctx);
}

/* ---- factor only, solve with factors ---- */

static void test_factor_then_solve(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int sizes[] = {1, 2, 5, 16, 33, 64};
    for (int dbl = 0; dbl < 2; ++dbl)
        for (size_t v = 0; v < N_NUMERIC; ++v)
            for (int s = 0; s < 6; ++s) {
                const int n = sizes[s], nrhs = 2;
                const size_t batch = 21, nn = (size_t)n * n, np = (size_t)n * (n + 1) / 2,
                             es = dbl ? 8 : 4;
                void *A = tu_alloc(batch * nn, dbl), *B = tu_alloc(batch * n * nrhs, dbl),
                     *X = tu_alloc(batch * n * nrhs, dbl), *LD = tu_alloc(batch * np, dbl);
                int info[21];
                tu_spd_batch(0, 0, n, nrhs, batch, dbl, 3u + n, A, B);
                apply_variant(ctx, numeric_variants[v], n, dbl);
                TU_STATUS(ctx, BCL_SUCCESS,
                          dbl ? bcl_dsytrf_ldlt(ctx, n, batch, A, LD, info)
                              : bcl_ssytrf_ldlt(ctx, n, batch, A, LD, info));
                TU_STATUS(ctx, BCL_SUCCESS,
                          dbl ? bcl_dsytrs_ldlt(ctx, n, nrhs, batch, LD, B, X)
                              : bcl_ssytrs_ldlt(ctx, n, nrhs, batch, LD, B, X));
                for (size_t k = 0; k < batch; ++k) {
                    assert_int_equal(info[k], 0);
                    double fres = oracle_ldlt_residual(n, dbl, (char *)A + k * nn * es,
                                                       (char *)LD + k * np * es);
                    double res = oracle_sysv_residual(n, nrhs, dbl, (char *)A + k * nn * es,
                                                      (char *)B + k * n * nrhs * es,
                                                      (char *)X + k * n * nrhs * es);
                    if (!(fres < RES_LIMIT) || !(res < RES_LIMIT))
                        fail_msg("%s %s n=%d problem %zu: ||A - LDL^T|| residual %.3g, solve "
                                 "residual %.3g",
                                 numeric_variants[v]->name, dbl ? "double" : "single", n, k, fres,
                                 res);
                }
                /* an indefinite matrix: the factorization reports LAPACK's index */
                oracle_set(A, dbl, 0, -2.0);
                TU_STATUS(ctx, BCL_NUMERICAL_FAILURE,
                          dbl ? bcl_dsytrf_ldlt(ctx, n, batch, A, LD, info)
                              : bcl_ssytrf_ldlt(ctx, n, batch, A, LD, info));
                assert_int_equal(info[0], 1);
                assert_int_equal(info[1], 0);
                free(A);
                free(B);
                free(X);
                free(LD);
            }
    bcl_destroy(ctx);
}

/* ---- chunked host calls: every transfer path gives the unchunked results bit for bit ---- */

static void solve_chunked_batch(const char *zero_copy, const char *staging, const char *mem_limit,
                                size_t chunk, int queues, int pinned, size_t batch)
{
    const int n = 16, nrhs = 2, dbl = 1;
    const size_t nn = (size_t)n * n, nb = (size_t)n * nrhs;
    setenv("BATCHCL_ZERO_COPY", zero_copy, 1);
    setenv("BATCHCL_STAGING", staging, 1);
    if (mem_limit)
        setenv("BATCHCL_DEVICE_MEMORY_LIMIT", mem_limit, 1);
    bcl_context *ctx = tu_context();
    unsetenv("BATCHCL_ZERO_COPY");
    unsetenv("BATCHCL_STAGING");
    unsetenv("BATCHCL_DEVICE_MEMORY_LIMIT");
    double *A, *B, *X;
    if (pinned) {
        A = bcl_host_alloc(ctx, batch * nn * sizeof *A);
        B = bcl_host_alloc(ctx, batch * nb * sizeof *B);
        X = bcl_host_alloc(ctx, batch * nb * sizeof *X);
        assert_non_null(A);
        assert_non_null(B);
        assert_non_null(X);
    } else {
        A = tu_alloc(batch * nn, 1);
        B = tu_alloc(batch * nb, 1);
        X = tu_alloc(batch * nb, 1);
    }
    double *Xref = tu_alloc(batch * nb, 1);
    int *info = calloc(batch, sizeof *info), *info_ref = calloc(batch, sizeof *info_ref);
    tu_spd_batch(0, 0, n, nrhs, batch, dbl, 11, A, B);
    oracle_set(A, 1, 500 * nn + 3 + 3 * n, -1); /* one failure in the middle of a chunk */
    TU_STATUS(ctx, BCL_NUMERICAL_FAILURE, bcl_dsysv(ctx, BCL_LDLT, n, nrhs, batch, A, B, Xref, info_ref));
    bcl_params p = {0};
    p.chunk_problems = chunk;
    p.queues = queues;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    TU_STATUS(ctx, BCL_NUMERICAL_FAILURE, bcl_dsysv(ctx, BCL_LDLT, n, nrhs, batch, A, B, X, info));
    assert_memory_equal(X, Xref, batch * nb * sizeof *X);
    assert_memory_equal(info, info_ref, batch * sizeof *info);
    assert_int_equal(info[500], 4);
    for (size_t k = 0; k < batch; k += 97)
        assert_true(k == 500 || oracle_sysv_residual(n, nrhs, 1, A + k * nn, B + k * nb, X + k * nb) < RES_LIMIT);
    /* in place: X == B */
    memcpy(X, B, batch * nb * sizeof *X);
    TU_STATUS(ctx, BCL_NUMERICAL_FAILURE, bcl_dsysv(ctx, BCL_LDLT, n, nrhs, batch, A, X, X, info));
    assert_memory_equal(X, Xref, batch * nb * sizeof *X);
    if (pinned) {
        bcl_host_free(ctx, A);
        bcl_host_free(ctx, B);
        bcl_host_free(ctx, X);
    } else {
        free(A);
        free(B);
        free(X);
    }
    free(Xref);
    free(info);
    free(info_ref);
    bcl_destroy(ctx);
}

static void solve_chunked(const char *zero_copy, const char *staging, const char *mem_limit,
                          size_t chunk, int queues, int pinned)
{
    solve_chunked_batch(zero_copy, staging, mem_limit, chunk, queues, pinned, 1000);
}

static void test_chunked_transfers(void **state)
{
    (void)state;
    solve_chunked("1", "0", NULL, 64, 1, 0);    /* zero-copy where the device allows it */
    solve_chunked("0", "0", NULL, 64, 3, 0);    /* device buffers, three queues, direct copies */
    solve_chunked("0", "1", NULL, 77, 2, 0);    /* through pinned staging buffers */
    solve_chunked("0", "1", NULL, 50, 3, 1);    /* the caller's pinned memory, no staging */
    solve_chunked("0", "0", NULL, 1, 2, 0);     /* one problem per chunk */
    /* graded chunks (2560 bytes a problem, at least 16 MB = 6554 problems a chunk): 6554, 13108,
     * 16384, then halves of the rest, 11977 and 11977 */
    solve_chunked_batch("0", "1", NULL, 16384, 2, 0, 60000);
    /* a device "smaller" than the batch (A alone is 2 MB): chunks come from device memory */
    solve_chunked("0", "1", "600000", 0, 0, 0);
    solve_chunked("1", "0", "600000", 0, 0, 0);
}

/* ---- device buffers ---- */

static void test_device_buffers(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    cl_context cl = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    for (int dbl = 0; dbl < 2; ++dbl) {
        const int n = 12, nrhs = 2;
        const size_t batch = 33, nn = (size_t)n * n, nb = (size_t)n * nrhs, es = dbl ? 8 : 4;
        const size_t off = 5; /* elements before the batch in every buffer */
        void *A = tu_alloc(batch * nn, dbl), *B = tu_alloc(batch * nb, dbl),
             *Xh = tu_alloc(batch * nb, dbl), *X = tu_alloc(batch * nb, dbl);
        int info_h[33], info[33 + 5];
        tu_spd_batch(0, 0, n, nrhs, batch, dbl, 21, A, B);
        TU_STATUS(ctx, BCL_SUCCESS, dbl ? bcl_dsysv(ctx, BCL_LDLT, n, nrhs, batch, A, B, Xh, info_h)
                                        : bcl_ssysv(ctx, BCL_LDLT, n, nrhs, batch, A, B, Xh, info_h));
        for (int layout = 0; layout < 2; ++layout) {
            /* host copies in the device layout */
            void *Al = tu_alloc(batch * nn + off, dbl), *Bl = tu_alloc(batch * nb + off, dbl);
            for (size_t k = 0; k < batch; ++k) {
                for (size_t e = 0; e < nn; ++e)
                    oracle_set(Al, dbl, off + (layout ? e * batch + k : k * nn + e),
                               oracle_get(A, dbl, k * nn + e));
                for (size_t e = 0; e < nb; ++e)
                    oracle_set(Bl, dbl, off + (layout ? e * batch + k : k * nb + e),
                               oracle_get(B, dbl, k * nb + e));
            }
            cl_int err;
            cl_mem dA = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       (batch * nn + off) * es, Al, &err);
            cl_mem dB = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                       (batch * nb + off) * es, Bl, &err);
            cl_mem dX = clCreateBuffer(cl, CL_MEM_READ_WRITE, (batch * nb + off) * es, NULL, &err);
            cl_mem dI = clCreateBuffer(cl, CL_MEM_READ_WRITE, (batch + off) * sizeof(int), NULL, &err);
            cl_event ev = NULL;
            const bcl_layout lay = layout ? BCL_LAYOUT_INTERLEAVED : BCL_LAYOUT_CONTIGUOUS;
            TU_STATUS(ctx, BCL_SUCCESS,
                      dbl ? bcl_dsysv_cl(ctx, BCL_LDLT, n, nrhs, batch, lay, dA, off, dB, off, dX,
                                         off, dI, off, 0, NULL, &ev)
                          : bcl_ssysv_cl(ctx, BCL_LDLT, n, nrhs, batch, lay, dA, off, dB, off, dX,
                                         off, dI, off, 0, NULL, &ev));
            assert_non_null(ev);
            void *Xl = tu_alloc(batch * nb + off, dbl);
            clEnqueueReadBuffer(q, dX, CL_TRUE, 0, (batch * nb + off) * es, Xl, 1, &ev, NULL);
            clEnqueueReadBuffer(q, dI, CL_TRUE, 0, (batch + off) * sizeof(int), info, 0, NULL, NULL);
            clReleaseEvent(ev);
            for (size_t k = 0; k < batch; ++k) {
                assert_int_equal(info[off + k], 0);
                for (size_t e = 0; e < nb; ++e)
                    oracle_set(X, dbl, k * nb + e,
                               oracle_get(Xl, dbl, off + (layout ? e * batch + k : k * nb + e)));
                double res = oracle_sysv_residual(n, nrhs, dbl, (char *)A + k * nn * es,
                                                  (char *)B + k * nb * es, (char *)X + k * nb * es);
                assert_true(res < RES_LIMIT);
            }
            /* the same arithmetic as the host-pointer path */
            if (memcmp(X, Xh, batch * nb * es) != 0)
                fail_msg("layout %d: device-buffer results differ from the host-pointer path", layout);

            /* in place (X == B), waiting on an event of the caller's */
            cl_event user = clCreateUserEvent(cl, &err);
            TU_STATUS(ctx, BCL_SUCCESS,
                      dbl ? bcl_dsysv_cl(ctx, BCL_LDLT, n, nrhs, batch, lay, dA, off, dB, off, dB,
                                         off, dI, off, 1, &user, &ev)
                          : bcl_ssysv_cl(ctx, BCL_LDLT, n, nrhs, batch, lay, dA, off, dB, off, dB,
                                         off, dI, off, 1, &user, &ev));
            clSetUserEventStatus(user, CL_COMPLETE);
            clEnqueueReadBuffer(q, dB, CL_TRUE, 0, (batch * nb + off) * es, Bl, 1, &ev, NULL);
            clReleaseEvent(ev);
            clReleaseEvent(user);
            assert_memory_equal((char *)Bl + off * es, (char *)Xl + off * es, batch * nb * es);

            /* factor into LD on the device, then solve from it */
            const size_t np = (size_t)n * (n + 1) / 2;
            cl_mem dLD = clCreateBuffer(cl, CL_MEM_READ_WRITE, (batch * np + off) * es, NULL, &err);
            TU_STATUS(ctx, BCL_SUCCESS,
                      dbl ? bcl_dsytrf_ldlt_cl(ctx, n, batch, lay, dA, off, dLD, off, dI, off, 0, NULL, NULL)
                          : bcl_ssytrf_ldlt_cl(ctx, n, batch, lay, dA, off, dLD, off, dI, off, 0, NULL, NULL));
            TU_STATUS(ctx, BCL_SUCCESS,
                      dbl ? bcl_dsytrs_ldlt_cl(ctx, n, nrhs, batch, lay, dLD, off, dX, off, dX, off, 0, NULL, NULL)
                          : bcl_ssytrs_ldlt_cl(ctx, n, nrhs, batch, lay, dLD, off, dX, off, dX, off, 0, NULL, NULL));
            /* solving A Y = X: A Y must give back X */
            void *Y = tu_alloc(batch * nb + off, dbl);
            clEnqueueReadBuffer(q, dX, CL_TRUE, 0, (batch * nb + off) * es, Y, 0, NULL, NULL);
            for (size_t k = 0; k < batch; ++k) {
                void *yk = tu_alloc(nb, dbl), *xk = tu_alloc(nb, dbl);
                for (size_t e = 0; e < nb; ++e) {
                    const size_t at = off + (layout ? e * batch + k : k * nb + e);
                    oracle_set(yk, dbl, e, oracle_get(Y, dbl, at));
                    oracle_set(xk, dbl, e, oracle_get(Xl, dbl, at));
                }
                assert_true(oracle_sysv_residual(n, nrhs, dbl, (char *)A + k * nn * es, xk, yk) <
                            RES_LIMIT);
                free(yk);
                free(xk);
            }
            free(Y);
            clReleaseMemObject(dLD);
            clReleaseMemObject(dA);
            clReleaseMemObject(dB);
            clReleaseMemObject(dX);
            clReleaseMemObject(dI);
            free(Al);
            free(Bl);
            free(Xl);
        }
        free(A);
        free(B);
        free(X);
        free(Xh);
    }
    bcl_destroy(ctx);
}

/* ---- bad arguments: a clear status, and no output touched ---- */

static void test_bad_arguments(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int n = 4;
    const size_t batch = 3;
    float A[48], B[12], X[12], LD[30];
    int info[3];
    tu_spd_batch(0, 0, n, 1, batch, 0, 1, A, B);
    tu_poison(X, sizeof X);
    tu_poison(info, sizeof info);
    tu_poison(LD, sizeof LD);
#define BAD(expect, call)                                                                        \
    do {                                                                                         \
        TU_STATUS(ctx, expect, call);                                                            \
        assert_true(strlen(bcl_last_error(ctx)) > 0 || (expect) == BCL_SUCCESS);                 \
        assert_true(tu_is_poisoned(X, sizeof X) && tu_is_poisoned(info, sizeof info) &&          \
                    tu_is_poisoned(LD, sizeof LD));                                              \
    } while (0)
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_ssysv(NULL, BCL_LDLT, n, 1, batch, A, B, X, info));
    assert_non_null(strstr(bcl_last_error(NULL), "ctx"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, (bcl_method)42, n, 1, batch, A, B, X, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, BCL_LDLT, -1, 1, batch, A, B, X, info));
    assert_non_null(strstr(bcl_last_error(ctx), "n = -1"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, BCL_LDLT, n, -2, batch, A, B, X, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, BCL_LDLT, n, 1, batch, NULL, B, X, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 6 (A)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, BCL_LDLT, n, 1, batch, A, NULL, X, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, BCL_LDLT, n, 1, batch, A, B, NULL, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, BCL_LDLT, n, 1, batch, A, B, X, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 9 (info)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, BCL_LDLT, n, 1, (size_t)-1 / 8, A, B, X, info));
    /* right-hand sides past the kernels' 32-bit index of a problem's B (checked before any read) */
    BAD(BCL_UNSUPPORTED_SIZE, bcl_ssysv(ctx, BCL_LDLT, n, INT_MAX / n + 1, 1, A, B, X, info));
    assert_non_null(strstr(bcl_last_error(ctx), "n * nrhs"));
    /* overlapping outputs */
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, BCL_LDLT, n, 1, batch, A, B, A + 4, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, BCL_LDLT, n, 1, batch, A, B, B + 1, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv(ctx, BCL_LDLT, n, 1, batch, A, B, X, (int *)(void *)(X + 2)));
    /* sizes the device cannot hold */
    const int too_big = bcl_ldlt_max_n(ctx, 0) + 1;
    float *bigA = calloc((size_t)too_big * too_big, sizeof *bigA), *bigB = calloc((size_t)too_big, 4);
    BAD(BCL_UNSUPPORTED_SIZE, bcl_ssysv(ctx, BCL_LDLT, too_big, 1, 1, bigA, bigB, X, info));
    free(bigA);
    free(bigB);
    bcl_params p = {0};
    p.mapping = BCL_MAPPING_COLLABORATIVE;
    bcl_set_params(ctx, &p);
    float *A129 = calloc(129 * 129, sizeof *A129), *B129 = calloc(129, sizeof *B129),
          *X129 = calloc(129, sizeof *X129);
    TU_STATUS(ctx, BCL_UNSUPPORTED_SIZE, bcl_ssysv(ctx, BCL_LDLT, 129, 1, 1, A129, B129, X129, info + 0));
    assert_non_null(strstr(bcl_last_error(ctx), "register"));
    assert_true(tu_is_poisoned(info, sizeof info));
    free(A129);
    free(B129);
    free(X129);
    bcl_set_params(ctx, NULL);
    /* zero sizes: success at once, nothing touched, NULL pointers accepted */
    BAD(BCL_SUCCESS, bcl_ssysv(ctx, BCL_LDLT, 0, 1, batch, NULL, NULL, NULL, NULL));
    BAD(BCL_SUCCESS, bcl_ssysv(ctx, BCL_LDLT, n, 0, batch, A, B, X, info));
    BAD(BCL_SUCCESS, bcl_ssysv(ctx, BCL_LDLT, n, 1, 0, A, B, X, info));
    /* factor / solve routines */
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrf_ldlt(ctx, -3, batch, A, LD, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrf_ldlt(ctx, n, batch, A, NULL, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrf_ldlt(ctx, n, batch, A, LD, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrf_ldlt(ctx, n, batch, A, A + 1, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrs_ldlt(ctx, n, 1, batch, NULL, B, X));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrs_ldlt(ctx, n, -1, batch, LD, B, X));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrs_ldlt(ctx, n, 1, batch, LD, B, LD + 2));
    /* device-buffer entry points */
    cl_int err;
    cl_mem small = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 64, NULL, &err);
    cl_mem big = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 4096, NULL, &err);
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv_cl(ctx, BCL_LDLT, n, 1, batch, BCL_LAYOUT_CONTIGUOUS, small,
                                           0, big, 0, big, 0, big, 0, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 7 (A)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv_cl(ctx, BCL_LDLT, n, 1, batch, BCL_LAYOUT_CONTIGUOUS, big,
                                           1000, big, 0, big, 0, big, 0, 0, NULL, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv_cl(ctx, BCL_LDLT, n, 1, batch, BCL_LAYOUT_CONTIGUOUS, big,
                                           0, NULL, 0, big, 0, big, 0, 0, NULL, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv_cl(ctx, BCL_LDLT, n, 1, batch, (bcl_layout)7, big, 0, big,
                                           0, big, 0, big, 0, 0, NULL, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv_cl(ctx, BCL_LDLT, n, 1, batch, BCL_LAYOUT_CONTIGUOUS, big,
                                           0, big, 0, big, 0, big, 0, 2, NULL, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv_cl(ctx, BCL_LDLT, n, 1, batch, BCL_LAYOUT_CONTIGUOUS, big,
                                           0, big, 0, big, 8, big, 0, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "different offsets"));
    /* a buffer of another OpenCL context */
    cl_device_id dev = bcl_cl_device(ctx);
    cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, 4096, NULL, &err);
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv_cl(ctx, BCL_LDLT, n, 1, batch, BCL_LAYOUT_CONTIGUOUS,
                                           foreign, 0, big, 0, big, 0, big, 0, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "another OpenCL context"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrf_ldlt_cl(ctx, n, batch, BCL_LAYOUT_CONTIGUOUS, big, 0,
                                                 small, 0, big, 0, 0, NULL, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrs_ldlt_cl(ctx, n, 1, batch, BCL_LAYOUT_CONTIGUOUS, small, 0,
                                                 big, 0, big, 0, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 6 (LD)"));
    /* an empty device call still hands back an event */
    cl_event ev = NULL;
    BAD(BCL_SUCCESS, bcl_ssysv_cl(ctx, BCL_LDLT, n, 1, 0, BCL_LAYOUT_CONTIGUOUS, NULL, 0, NULL, 0,
                                  NULL, 0, NULL, 0, 0, NULL, &ev));
    assert_non_null(ev);
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
    clReleaseMemObject(foreign);
    clReleaseContext(other);
    clReleaseMemObject(small);
    clReleaseMemObject(big);
    bcl_destroy(ctx);
#undef BAD
}

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
    const struct CMUnitTest grid_s[] = {cmocka_unit_test(test_grid_single)};
    const struct CMUnitTest grid_d[] = {cmocka_unit_test(test_grid_double)};
    const struct CMUnitTest exact[] = {cmocka_unit_test(test_exact_and_splits)};
    const struct CMUnitTest numerics[] = {
        cmocka_unit_test(test_ill_conditioned), cmocka_unit_test(test_numerically_singular),
        cmocka_unit_test(test_failure_isolation), cmocka_unit_test(test_factor_then_solve)};
    const struct CMUnitTest api[] = {cmocka_unit_test(test_bad_arguments),
                                     cmocka_unit_test(test_device_buffers),
                                     cmocka_unit_test_teardown(test_chunked_transfers, tu_clear_transfer_env)};
    int failed = 0, all = !strcmp(group, "all");
    if (all || !strcmp(group, "api"))
        failed += cmocka_run_group_tests_name("ldlt api", api, NULL, NULL);
    if (all || !strcmp(group, "numerics"))
        failed += cmocka_run_group_tests_name("ldlt numerics", numerics, NULL, NULL);
    if (all || !strcmp(group, "exact"))
        failed += cmocka_run_group_tests_name("ldlt exact", exact, NULL, NULL);
    if (all || !strcmp(group, "grid-s"))
        failed += cmocka_run_group_tests_name("ldlt grid single", grid_s, NULL, NULL);
    if (all || !strcmp(group, "grid-d"))
        failed += cmocka_run_group_tests_name("ldlt grid double", grid_d, NULL, NULL);
    return failed ? 1 : 0;
}
