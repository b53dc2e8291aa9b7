/* Block p-cyclic inversion against LAPACK dgetrf + dgetri on the assembled H (double precision):
 * ||H H^-1 - I||_1 / (N eps ||H||_1 ||H^-1||_1) < 30 and the distance to LAPACK's inverse within
 * its condition bound, for the three methods (1: host panels + clBLAST, 2: batched kernels, 3:
 * device panels + clBLAST), random, QMC-like and ill-conditioned blocks; singular problems
 * mid-batch, device buffers, a failing clBLAST, the performance model (measured, or from a tuning
 * file), bad arguments.
 * The library's own GEMM (cl/gemm.cl) against BLAS dgemm in double: shapes across its tiles'
 * edges, all transposes, strided batches, beta = 0 over NaN.
 * Usage: test_pcyclic <group>, group one of grid-clblast, grid-device, grid-kernel, numerics, api,
 * gemm.
 * BATCHCL_TEST_QUICK (the sanitizer pass) thins the grids to n in {1, 8, 17, 100} x p in {2, 7, 40}
 * less (100, 40). */
#include "testutil.h"
#include "../src/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RES_LIMIT 30.0

static const int grid_n[] = {1, 3, 8, 17, 32, 100};
static const int grid_p[] = {2, 3, 7, 16, 40};
#define GRID_KINDS 3 /* random, QMC-like, ill-conditioned blocks (kappa(A_i) = GRID_COND) */
#define GRID_COND 1e8

/* the sizes a grid visits: all, or under tu_quick() a sample with the edges (n = 1, p = 2, the
 * largest n and p, though not together: LAPACK's reference inverse of N = 4000 is most of the
 * time) and one odd size, enough to reach every code path */
static int grid_skips(int n, int p)
{
    return tu_quick() && (n == 3 || n == 32 || p == 3 || p == 16 || (n == 100 && p == 40));
}

static void make_blocks(int kind, double cond, int n, int p, size_t batch, uint64_t seed, double *A,
                        double *B)
{
    mg_rng r;
    mg_seed(&r, seed);
    const size_t blocks = (size_t)p * n * n;
    for (size_t k = 0; k < batch; ++k)
        if (mg_pcyclic(kind, n, p, cond, &r, A + k * blocks, B + k * blocks) != 0)
            fail_msg("p-cyclic generator failed");
}

/* the method, j_F and the host's shares (block columns of the row version, block rows of the
 * Q^T application and of the column version; 0: the model's, -1: none) */
static void use_shares(bcl_context *ctx, int method, int cv_columns, int rv_host, int qt_host,
                       int cv_host)
{
    bcl_params prm = {0};
    prm.pcyclic_method = method;
    prm.pcyclic_cv_columns = cv_columns;
    prm.pcyclic_rv_host_columns = rv_host;
    prm.pcyclic_qt_host_rows = qt_host;
    prm.pcyclic_cv_host_rows = cv_host;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &prm));
}

/* the method and j_F, the host taking no share: the device's paths (test_host_shares and
 * test_model take the shares) */
static void use_method(bcl_context *ctx, int method, int cv_columns)
{
    use_shares(ctx, method, cv_columns, -1, -1, -1);
}

static void *convert(const double *src, size_t count, int dbl)
{
    void *dst = tu_alloc(count, dbl);
    for (size_t i = 0; i < count; ++i)
        oracle_set(dst, dbl, i, src[i]);
    return dst;
}

static bcl_status invert(bcl_context *ctx, int dbl, int n, int p, size_t batch, const void *A,
                         const void *B, void *X, int *info)
{
    return dbl ? bcl_dpcyclic_inv(ctx, n, p, batch, A, B, X, info)
               : bcl_spcyclic_inv(ctx, n, p, batch, A, B, X, info);
}

/* Invert a batch with the context's parameters; every problem must succeed with a scaled residual
 * below the limit, and problem 0 must agree with LAPACK's inverse within its condition bound. */
static void check_scaled(bcl_context *ctx, int dbl, int kind, double cond, int n, int p,
                         size_t batch, double scale_a, double scale_b, const char *what)
{
    const size_t blocks = (size_t)p * n * n, N = (size_t)n * p, NN = N * N;
    double *A = malloc(sizeof *A * blocks * batch), *B = malloc(sizeof *B * blocks * batch);
    make_blocks(kind, cond, n, p, batch, 1000u * n + p + 7u * kind, A, B);
    for (size_t i = 0; i < blocks * batch; ++i) { /* powers of two: exact */
        A[i] *= scale_a;
        B[i] *= scale_b;
    }
    void *Ac = convert(A, blocks * batch, dbl), *Bc = convert(B, blocks * batch, dbl);
    /* the reference sees the blocks the library sees (rounded to float for the float routine) */
    for (size_t i = 0; i < blocks * batch; ++i) {
        A[i] = oracle_get(Ac, dbl, i);
        B[i] = oracle_get(Bc, dbl, i);
    }
    void *X = tu_alloc(NN * batch, dbl);
    int *info = calloc(batch, sizeof *info);
    TU_STATUS(ctx, BCL_SUCCESS, invert(ctx, dbl, n, p, batch, Ac, Bc, X, info));
    const size_t es = dbl ? 8 : 4;
    for (size_t k = 0; k < batch; ++k) {
        const void *Xk = (const char *)X + k * NN * es;
        const double res = oracle_pcyclic_residual(n, p, A + k * blocks, B + k * blocks, dbl, Xk);
        if (info[k] != 0 || !(res < RES_LIMIT))
            fail_msg("%s %s kind %d n=%d p=%d problem %zu: info %d, residual %.3g (limit %g); %s",
                     what, dbl ? "double" : "single", kind, n, p, k, info[k], res, RES_LIMIT,
                     bcl_last_kernel(ctx));
    }
    double *H = malloc(sizeof *H * NN);
    oracle_pcyclic_assemble(n, p, A, B, H);
    const double hnorm = oracle_norm1(N, H);
    assert_int_equal(oracle_getri((int)N, H), 0);
    const double kappa = hnorm * oracle_norm1(N, H);
    const double diff = oracle_rel_diff(N, N, dbl, X, H);
    const double bound = RES_LIMIT * (double)N * kappa * oracle_eps(dbl);
    if (!(diff <= bound))
        fail_msg("%s %s kind %d n=%d p=%d: ||X - X_lapack|| / ||X_lapack|| = %.3g, bound %.3g "
                 "(kappa_1 %.3g)",
                 what, dbl ? "double" : "single", kind, n, p, diff, bound, kappa);
    free(H);
    free(A);
    free(B);
    free(Ac);
    free(Bc);
    free(X);
    free(info);
}

static void check_batch(bcl_context *ctx, int dbl, int kind, double cond, int n, int p,
                        size_t batch, const char *what)
{
    check_scaled(ctx, dbl, kind, cond, n, p, batch, 1, 1, what);
}

/* The same inverses, bit for bit, with the environment switch `name` at "0" and at "1" (two
 * paths through the same arithmetic), the "1" run's plan naming `plan`; a batch of two, and the
 * first within LAPACK's bound. */
static void check_same_bits(bcl_context *ctx, const char *name, const char *plan, int dbl, int n,
                            int p, const char *what)
{
    const size_t blocks = (size_t)p * n * n, NN = blocks * p, es = dbl ? 8 : 4;
    double *A = malloc(sizeof *A * 2 * blocks), *B = malloc(sizeof *B * 2 * blocks);
    make_blocks(1, 0, n, p, 2, 77u * n + p, A, B);
    void *Ac = convert(A, 2 * blocks, dbl), *Bc = convert(B, 2 * blocks, dbl);
    for (size_t i = 0; i < 2 * blocks; ++i) { /* the blocks the library sees */
        A[i] = oracle_get(Ac, dbl, i);
        B[i] = oracle_get(Bc, dbl, i);
    }
    void *X[2] = {tu_alloc(2 * NN, dbl), tu_alloc(2 * NN, dbl)};
    int info[2][2] = {{-1, -1}, {-1, -1}};
    for (int on = 0; on < 2; ++on) { /* each run's plan must say which path it took */
        setenv(name, on ? "1" : "0", 1);
        TU_STATUS(ctx, BCL_SUCCESS, invert(ctx, dbl, n, p, 2, Ac, Bc, X[on], info[on]));
        if ((strstr(bcl_last_kernel(ctx), plan) != NULL) != on)
            fail_msg("%s: %s=%d, \"%s\" %s in: %s", what, name, on, plan,
                     on ? "expected" : "not expected", bcl_last_kernel(ctx));
    }
    unsetenv(name);
    for (int k = 0; k < 2; ++k) {
        assert_int_equal(info[0][k], 0);
        assert_int_equal(info[1][k], 0);
    }
    if (memcmp(X[0], X[1], 2 * NN * es) != 0)
        fail_msg("%s n=%d p=%d: %s=1 changed the inverses' bits", what, n, p, name);
    /* and LAPACK's bound, for the "1" run's first problem */
    const double res = oracle_pcyclic_residual(n, p, A, B, dbl, X[1]);
    if (!(res < RES_LIMIT))
        fail_msg("%s n=%d p=%d: residual %.3g (limit %g)", what, n, p, res, RES_LIMIT);
    free(A);
    free(B);
    free(Ac);
    free(Bc);
    free(X[0]);
    free(X[1]);
}

/* ---- the grids ---- */

/* method 1 (host panels) or 3 (device panels: n = 100 crosses three of its 32-column blocks) */
static void grid_bsofi(int method)
{
    if (!bcl_pcyclic_has_clblast())
        skip();
    bcl_context *ctx = tu_context();
    use_method(ctx, method, 0);
    for (size_t i = 0; i < sizeof grid_n / sizeof grid_n[0]; ++i)
        for (size_t j = 0; j < sizeof grid_p / sizeof grid_p[0]; ++j)
            for (int kind = 0; kind < GRID_KINDS; ++kind)
                if (!grid_skips(grid_n[i], grid_p[j]))
                    check_batch(ctx, 1, kind, kind == 2 ? GRID_COND : 0, grid_n[i], grid_p[j], 1,
                                method == 1 ? "host panels" : "device panels");
    bcl_destroy(ctx);
}

static void test_grid_clblast(void **state)
{
    (void)state;
    grid_bsofi(1);
}

static void test_grid_device(void **state)
{
    (void)state;
    grid_bsofi(3);
}

static void test_grid_kernel(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    use_method(ctx, 2, 0);
    for (size_t i = 0; i + 1 < sizeof grid_n / sizeof grid_n[0]; ++i) /* n <= 32 */
        for (size_t j = 0; j < sizeof grid_p / sizeof grid_p[0]; ++j)
            for (int kind = 0; kind < GRID_KINDS; ++kind)
                if (!grid_skips(grid_n[i], grid_p[j]))
                    check_batch(ctx, 1, kind, kind == 2 ? GRID_COND : 0, grid_n[i], grid_p[j], 3,
                                "kernel");
    /* single precision: a sample */
    check_batch(ctx, 0, 0, 0, 8, 7, 3, "kernel");
    check_batch(ctx, 0, 1, 0, 17, 16, 2, "kernel");
    bcl_destroy(ctx);
}

/* ---- numerics ---- */

static void test_ill_conditioned(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const double conds[] = {1e6, 1e10};
    for (int method = 1; method <= 3; ++method) {
        if (method != 2 && !bcl_pcyclic_has_clblast())
            continue;
        use_method(ctx, method, 0);
        for (int c = 0; c < 2; ++c) {
            check_batch(ctx, 1, 2, conds[c], 8, 16, 2, "ill-conditioned");
            check_batch(ctx, 1, 2, conds[c], 32, 7, 1, "ill-conditioned");
        }
        check_batch(ctx, 0, 2, 1e3, 8, 7, 2, "ill-conditioned");
    }
    bcl_destroy(ctx);
}

/* Blocks near the overflow and underflow thresholds (f64), where the device panels' column norms
 * take Blue's scaled sums (LAPACK 3.10 dnrm2's ranges: squares of entries above 2^486 scaled
 * down, below 2^-511 scaled up): diagonal blocks in one range and the coupling blocks in the
 * middle one, so that both kinds of sums meet in one column, then all blocks in one range. Both
 * panel kernels, the host panels (LAPACK's own) and the batched kernel (method 2, a batch of two)
 * beside them. */
/* H D with D = diag(d_c) repeated over the block columns (column c of every A_i and B_i scaled by
 * d_c, powers of two) and d_c alternating between 2^-60 and 2^900: a panel's column steps see
 * columns near 2^-60 beside ones near 2^900 (the plain sums beside Blue's, updates w v of very
 * different sizes); D X' must be the inverse of the unscaled H. Not further apart: past a ratio
 * near 2^1010 the back substitution for R^-1 overflows in every method (products r_ij x_j of size
 * d_j / d_i, as in LAPACK's dtrtri), so the folded update's guard in qr_panel_reg (a ratio
 * ||a_c|| / ||x|| past 2^1022) is not reached by this test. Double only. */
static void check_column_scaled(bcl_context *ctx, int n, int p, const char *what)
{
    const size_t blocks = (size_t)p * n * n, N = (size_t)n * p, NN = N * N;
    double *A = malloc(sizeof *A * blocks), *B = malloc(sizeof *B * blocks);
    double *As = malloc(sizeof *As * blocks), *Bs = malloc(sizeof *Bs * blocks);
    double *X = malloc(sizeof *X * NN);
    make_blocks(0, 0, n, p, 1, 4242u + (unsigned)n, A, B);
    for (size_t i = 0; i < blocks; ++i) { /* column-major n x n blocks: column (i / n) % n */
        const double d = ((i / (size_t)n) % (size_t)n) % 2 ? ldexp(1, 900) : ldexp(1, -60);
        As[i] = A[i] * d;
        Bs[i] = B[i] * d;
    }
    int info = 0;
    TU_STATUS(ctx, BCL_SUCCESS, invert(ctx, 1, n, p, 1, As, Bs, X, &info));
    for (size_t r = 0; r < N; ++r) { /* X = D X': row r of X' times d of column r % n */
        const double d = (r % (size_t)n) % 2 ? ldexp(1, 900) : ldexp(1, -60);
        for (size_t c = 0; c < N; ++c)
            X[c * N + r] *= d;
    }
    const double res = oracle_pcyclic_residual(n, p, A, B, 1, X);
    if (info != 0 || !(res < RES_LIMIT))
        fail_msg("%s n=%d p=%d: info %d, residual of D X' against H %.3g (limit %g); %s", what, n, p,
                 info, res, RES_LIMIT, bcl_last_kernel(ctx));
    free(A);
    free(B);
    free(As);
    free(Bs);
    free(X);
}

static void test_scaled_blocks(void **state)
{
    (void)state;
    if (!bcl_pcyclic_has_clblast())
        skip();
    bcl_context *ctx = tu_context();
    /* 2^10 between the ranges: the smaller one still moves the norms well above rounding */
    const double big = ldexp(1, 490), mid_big = ldexp(1, 480), small = ldexp(1, -515),
                 mid_small = ldexp(1, -505), all_big = ldexp(1, 520), all_small = ldexp(1, -540);
    const double scales[4][2] = {{big, mid_big}, {small, mid_small}, {all_big, all_big},
                                 {all_small, all_small}};
    const char *names[4] = {"scaled 2^490 / 2^480", "scaled 2^-515 / 2^-505", "scaled 2^520",
                            "scaled 2^-540"};
    for (int method = 1; method <= 3; ++method) {
        use_method(ctx, method, 0);
        for (int c = 0; c < 4; ++c)
            check_scaled(ctx, 1, 0, 0, 17, 3, method == 2 ? 2 : 1, scales[c][0], scales[c][1],
                         names[c]);
    }
    /* single precision near its thresholds (squares past 2^100 or below 2^-54 take Blue's sums):
     * the batched kernel, and the device panels */
    for (int method = 2; method <= 3; ++method) {
        use_method(ctx, method, 0);
        check_scaled(ctx, 0, 0, 0, 17, 3, 1, ldexp(1, 60), ldexp(1, 56), "scaled 2^60 / 2^56");
        check_scaled(ctx, 0, 0, 0, 17, 3, 1, ldexp(1, -70), ldexp(1, -66), "scaled 2^-70 / 2^-66");
    }
    setenv("BATCHCL_PCYCLIC_PANEL", "global", 1);
    for (int c = 0; c < 2; ++c)
        check_scaled(ctx, 1, 0, 0, 17, 3, 1, scales[c][0], scales[c][1], names[c]);
    unsetenv("BATCHCL_PCYCLIC_PANEL");
    assert_non_null(strstr(bcl_last_kernel(ctx), "in global memory"));
    /* the panel by rows (Blue's sums and the dot products again with v in their own reductions),
     * its block reflectors applied in one launch (qr_apply_rows), then all of it in one launch
     * (qr_chain, NVIDIA's default there) */
    setenv("BATCHCL_PCYCLIC_PANEL", "rows", 1);
    setenv("BATCHCL_PCYCLIC_APPLY", "rows", 1);
    setenv("BATCHCL_PCYCLIC_CHAIN", "0", 1);
    for (int c = 0; c < 4; ++c)
        check_scaled(ctx, 1, 0, 0, 17, 3, 1, scales[c][0], scales[c][1], names[c]);
    assert_non_null(strstr(bcl_last_kernel(ctx), "in registers by rows"));
    assert_non_null(strstr(bcl_last_kernel(ctx), "applied in one launch"));
    setenv("BATCHCL_PCYCLIC_CHAIN", "1", 1);
    for (int c = 0; c < 4; ++c)
        check_scaled(ctx, 1, 0, 0, 17, 3, 1, scales[c][0], scales[c][1], names[c]);
    assert_non_null(strstr(bcl_last_kernel(ctx), "in registers by rows"));
    assert_non_null(strstr(bcl_last_kernel(ctx), "in one launch (qr_chain)"));
    unsetenv("BATCHCL_PCYCLIC_CHAIN");
    unsetenv("BATCHCL_PCYCLIC_PANEL");
    unsetenv("BATCHCL_PCYCLIC_APPLY");
    /* columns of very different scales within a panel (the host panels, the batched kernel, the
     * register panel in blocks of 16 as at n = 129-512, and the default) */
    use_method(ctx, 1, 0);
    check_column_scaled(ctx, 17, 3, "column-scaled blocks, host panels");
    use_method(ctx, 2, 0);
    check_column_scaled(ctx, 17, 3, "column-scaled blocks, batched kernel");
    use_method(ctx, 3, 0);
    setenv("BATCHCL_PCYCLIC_NB", "16", 1);
    check_column_scaled(ctx, 17, 3, "column-scaled blocks, blocks of 16");
    unsetenv("BATCHCL_PCYCLIC_NB");
    check_column_scaled(ctx, 17, 3, "column-scaled blocks");
    bcl_destroy(ctx);
}

/* the last call's plan names qr_apply_rows' width: `want` where given, else the host's rule for
 * an apply whose widest launch takes groups_at_32 work-groups at 32 entries of W (64 entries
 * where those exceed the device's compute units) */
static void expect_w_entries(bcl_context *ctx, int groups_at_32, const char *want)
{
    bcl_device_info dev;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_device_info_get(ctx, &dev));
    if (!want)
        want = groups_at_32 > (int)dev.compute_units ? "W of 64 entries" : "W of 32 entries";
    if (!strstr(bcl_last_kernel(ctx), want))
        fail_msg("expected \"%s\" (%u compute units) in: %s", want, dev.compute_units,
                 bcl_last_kernel(ctx));
}

/* every split between the column and row versions, forced, and stated in the plan */
static void check_splits(bcl_context *ctx, int method, const char *what)
{
    const int splits[] = {-1, 1, 2, 4, 8};
    for (int s = 0; s < 5; ++s) {
        use_method(ctx, method, splits[s]);
        check_batch(ctx, 1, 0, 0, 10, 8, 1, what);
        char want[32];
        snprintf(want, sizeof want, "j_F = %d of", splits[s] < 0 ? 0 : splits[s] > 7 ? 7 : splits[s]);
        if (!strstr(bcl_last_kernel(ctx), want))
            fail_msg("expected %s in: %s", want, bcl_last_kernel(ctx));
    }
}

/* p = 1 (H = A_1 + B_1), batches through the clBLAST methods (1 and 3), single precision, every split
 * between the column and row versions of the back substitution. */
static void test_variants(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    use_method(ctx, 2, 0);
    check_batch(ctx, 1, 0, 0, 5, 1, 2, "kernel p=1");
    if (bcl_pcyclic_has_clblast()) {
        use_method(ctx, 1, 0);
        check_batch(ctx, 1, 0, 0, 5, 1, 2, "clBLAST p=1");
        check_batch(ctx, 1, 1, 0, 12, 9, 3, "clBLAST batch");
        check_batch(ctx, 0, 0, 0, 20, 6, 2, "clBLAST single");
        check_splits(ctx, 1, "clBLAST j_F");
        /* host panels with j_F = 0: R^-1's rows in groups of 2 (three, one row above them) */
        use_method(ctx, 1, -1);
        setenv("BATCHCL_PCYCLIC_RV_GROUP", "2", 1);
        check_batch(ctx, 1, 2, GRID_COND, 10, 8, 1, "host panels, R^-1 in groups of 2");
        if (!strstr(bcl_last_kernel(ctx), "rows in groups of 2 block rows"))
            fail_msg("expected groups of 2 in: %s", bcl_last_kernel(ctx));
        unsetenv("BATCHCL_PCYCLIC_RV_GROUP");
        /* the model's choice, stated */
        use_method(ctx, 1, 0);
        check_batch(ctx, 1, 0, 0, 10, 8, 1, "clBLAST model");
        assert_non_null(strstr(bcl_last_kernel(ctx), "): host panel step"));
        /* device panels: p = 1, a batch, single precision (the panels in float too), the splits */
        use_method(ctx, 3, 0);
        check_batch(ctx, 1, 0, 0, 37, 1, 2, "device panels p=1");
        check_batch(ctx, 1, 1, 0, 12, 9, 3, "device panels batch");
        check_batch(ctx, 0, 0, 0, 40, 6, 2, "device panels single");
        assert_non_null(strstr(bcl_last_kernel(ctx), "method 3"));
        assert_non_null(strstr(bcl_last_kernel(ctx), "in registers"));
        /* R^-1's rows in groups: of 2 at p = 9 (four groups, no row above them) in a batch, of 3
         * at p = 12 (three groups and two rows above them) on ill-conditioned blocks and in
         * float; and one by one at p = 16 (groups of 6 by default there) */
        setenv("BATCHCL_PCYCLIC_RV_GROUP", "2", 1);
        check_batch(ctx, 1, 1, 0, 12, 9, 3, "R^-1 in groups of 2");
        if (!strstr(bcl_last_kernel(ctx), "rows in groups of 2 block rows"))
            fail_msg("expected groups of 2 in: %s", bcl_last_kernel(ctx));
        setenv("BATCHCL_PCYCLIC_RV_GROUP", "3", 1);
        check_batch(ctx, 1, 2, GRID_COND, 12, 12, 1, "R^-1 in groups of 3");
        check_batch(ctx, 0, 0, 0, 40, 12, 2, "R^-1 in groups of 3"); /* float's n = 40 builds */
        if (!strstr(bcl_last_kernel(ctx), "rows in groups of 3 block rows"))
            fail_msg("expected groups of 3 in: %s", bcl_last_kernel(ctx));
        setenv("BATCHCL_PCYCLIC_RV_GROUP", "1", 1);
        check_batch(ctx, 1, 0, 0, 12, 16, 1, "R^-1 row by row");
        if (strstr(bcl_last_kernel(ctx), "rows in groups"))
            fail_msg("expected no groups in: %s", bcl_last_kernel(ctx));
        unsetenv("BATCHCL_PCYCLIC_RV_GROUP");
        /* the whole panel in one launch (qr_chain, NVIDIA's default in blocks of 16 and around
         * the panel by rows), forced on this device: n = 40 in blocks of 32 (two blocks, the second
         * of 8 columns, several groups to the first on a device of few compute units) with a
         * batch (each problem's counters zeroed), p = 1 (the n x n QR alone), single precision
         * in blocks of 8 (n = 37: five blocks, the last of 5 columns); in the full run two rows
         * a work-item (n = 150, blocks of 16). The rest of this test launches block by block. */
        setenv("BATCHCL_PCYCLIC_CHAIN", "1", 1);
        check_batch(ctx, 1, 2, GRID_COND, 40, 3, 2, "device panels, one launch a panel");
        if (!strstr(bcl_last_kernel(ctx), "in one launch (qr_chain)"))
            fail_msg("expected qr_chain in: %s", bcl_last_kernel(ctx));
        check_batch(ctx, 1, 0, 0, 40, 1, 1, "device panels, one launch a panel, p=1");
        setenv("BATCHCL_PCYCLIC_NB", "8", 1);
        check_batch(ctx, 0, 0, 0, 37, 3, 1, "device panels, one launch a panel, blocks of 8");
        if (!tu_quick()) {
            setenv("BATCHCL_PCYCLIC_NB", "16", 1);
            check_batch(ctx, 1, 0, 0, 150, 2, 1, "device panels, one launch a panel, n = 150");
        }
        /* around the panel spread by rows (qr_panel_rows' code, NVIDIA's default from n = 513):
         * blocks of 8 (n = 37), in the full run blocks of 32 in its loop of steps */
        setenv("BATCHCL_PCYCLIC_PANEL", "rows", 1);
        setenv("BATCHCL_PCYCLIC_NB", "8", 1);
        check_batch(ctx, 1, 2, GRID_COND, 37, 3, 1, "device panels by rows, one launch a panel");
        if (!strstr(bcl_last_kernel(ctx), "by rows") ||
            !strstr(bcl_last_kernel(ctx), "in one launch (qr_chain)"))
            fail_msg("expected qr_chain around the panel by rows in: %s", bcl_last_kernel(ctx));
        unsetenv("BATCHCL_PCYCLIC_NB");
        if (!tu_quick())
            check_batch(ctx, 1, 0, 0, 40, 2, 2, "device panels by rows, one launch a panel");
        /* BSOF on two queues (NVIDIA's default up to n = 512 where qr_chain takes the panels
         * and GEMMs form Q^(k)), forced: each panel's launch also applies Q^(k)^T to the trailing
         * [0; A_k+1] (the next panel) while the second queue forms Q^(k) and the last block
         * column's chain.
         * Around the panel by rows in blocks of 8 (n = 37: five blocks and five trailing groups),
         * a batch of two ill-conditioned problems at p = 7 (the panel slots reused, the last pair
         * waiting for the second queue's Rt); by columns p = 2 (the first pair is the last:
         * [Rt_0; A_1]) and 3, single precision, and the column version on the third queue */
        setenv("BATCHCL_PCYCLIC_OVERLAP", "1", 1);
        setenv("BATCHCL_PCYCLIC_QFORM", "gemm", 1);
        setenv("BATCHCL_PCYCLIC_NB", "8", 1);
        check_batch(ctx, 1, 2, GRID_COND, 37, 7, 2, "two queues, panel by rows");
        if (!strstr(bcl_last_kernel(ctx), "by GEMMs on a second queue"))
            fail_msg("expected the second queue in: %s", bcl_last_kernel(ctx));
        unsetenv("BATCHCL_PCYCLIC_PANEL");
        setenv("BATCHCL_PCYCLIC_CHAIN_TCH", "4", 1); /* trailing groups as n > 256 has them */
        check_batch(ctx, 0, 0, 0, 37, 3, 1, "two queues, single, 4 chunks a trailing group");
        if (!strstr(bcl_last_kernel(ctx), "by GEMMs on a second queue"))
            fail_msg("expected the second queue in: %s", bcl_last_kernel(ctx));
        /* several steps a launch (the tickets running on across them, each step's panel top
         * written by the step before's trailing groups in the same launch): p = 9 in launches of
         * three steps, three, one and the last pair (a batch of two: the slots' events carried
         * over), p = 7 in launches of two, two, one, one with no single steps asked for (the
         * same build: 4 chunks a trailing group). On NVIDIA (the shuffle build, whose qr_chain
         * loops over roles) 8 groups take the 45 roles of a launch in turn; elsewhere a group a
         * role */
        setenv("BATCHCL_PCYCLIC_CHAIN_STEPS", "3", 1);
        setenv("BATCHCL_PCYCLIC_CHAIN_TAIL", "1", 1);
        setenv("BATCHCL_PCYCLIC_CHAIN_GROUPS", "8", 1);
        check_batch(ctx, 1, 2, GRID_COND, 37, 9, 2, "two queues, three steps a launch");
        if (!strstr(bcl_last_kernel(ctx), "3 steps of BSOF a launch, 1 before"))
            fail_msg("expected three steps a launch in: %s", bcl_last_kernel(ctx));
        setenv("BATCHCL_PCYCLIC_CHAIN_STEPS", "2", 1);
        setenv("BATCHCL_PCYCLIC_CHAIN_TAIL", "0", 1);
        check_batch(ctx, 0, 0, 0, 37, 7, 1, "two queues, two steps a launch, single");
        unsetenv("BATCHCL_PCYCLIC_CHAIN_STEPS");
        unsetenv("BATCHCL_PCYCLIC_CHAIN_TAIL");
        unsetenv("BATCHCL_PCYCLIC_CHAIN_GROUPS");
        unsetenv("BATCHCL_PCYCLIC_CHAIN_TCH");
        unsetenv("BATCHCL_PCYCLIC_NB");
        check_batch(ctx, 1, 0, 0, 40, 2, 1, "two queues, p = 2");
        if (!strstr(bcl_last_kernel(ctx), "by GEMMs on a second queue"))
            fail_msg("expected the second queue in: %s", bcl_last_kernel(ctx));
        use_method(ctx, 3, 2);
        check_batch(ctx, 1, 1, 0, 40, 5, 1, "two queues, j_F = 2");
        if (!strstr(bcl_last_kernel(ctx), "by GEMMs on a second queue") ||
            !strstr(bcl_last_kernel(ctx), "j_F = 2 of"))
            fail_msg("expected the second queue and j_F = 2 in: %s", bcl_last_kernel(ctx));
        /* every column but the last by the column version on the third queue, the last one from
         * them (U = -R'^-1 c summed as the columns come): a batch of two, ill-conditioned; float;
         * p = 2, where U is the one diagonal block's */
        use_method(ctx, 3, 6);
        check_batch(ctx, 1, 2, GRID_COND, 37, 7, 2, "two queues, j_F = p - 1");
        if (!strstr(bcl_last_kernel(ctx), "column version on a third queue") ||
            !strstr(bcl_last_kernel(ctx), "last block column from the others"))
            fail_msg("expected the third queue and U in: %s", bcl_last_kernel(ctx));
        use_method(ctx, 3, 4);
        check_batch(ctx, 0, 0, 0, 37, 5, 1, "two queues, j_F = p - 1, float");
        if (!strstr(bcl_last_kernel(ctx), "last block column from the others"))
            fail_msg("expected U in: %s", bcl_last_kernel(ctx));
        use_method(ctx, 3, 1);
        check_batch(ctx, 1, 0, 0, 40, 2, 1, "two queues, j_F = p - 1, p = 2");
        if (!strstr(bcl_last_kernel(ctx), "last block column from the others"))
            fail_msg("expected U in: %s", bcl_last_kernel(ctx));
        use_method(ctx, 3, 0);
        unsetenv("BATCHCL_PCYCLIC_QFORM");
        setenv("BATCHCL_PCYCLIC_OVERLAP", "0", 1); /* the rest of the test on one queue */
        unsetenv("BATCHCL_PCYCLIC_PANEL");
        unsetenv("BATCHCL_PCYCLIC_NB");
        setenv("BATCHCL_PCYCLIC_CHAIN", "0", 1);
        /* blocks of 16 and 8 columns (n = 257 .. 1024 on their own): 16 at n = 40 (three
         * blocks, the last of 8 columns), 8 at n = 70 (nine) with the applies split below */
        if (!tu_quick()) { /* each is a kernel build: the sanitizer pass keeps the last */
            setenv("BATCHCL_PCYCLIC_NB", "16", 1);
            check_batch(ctx, 1, 2, GRID_COND, 40, 3, 1, "device panels, blocks of 16");
            check_batch(ctx, 0, 0, 0, 37, 2, 1, "device panels, blocks of 16");
            if (!strstr(bcl_last_kernel(ctx), "panels of 16 columns"))
                fail_msg("expected blocks of 16 columns in: %s", bcl_last_kernel(ctx));
            setenv("BATCHCL_PCYCLIC_NB", "8", 1);
            check_batch(ctx, 0, 0, 0, 37, 2, 1, "device panels, blocks of 8");
        }
        setenv("BATCHCL_PCYCLIC_NB", "8", 1);
        /* qr_apply over row ranges (two launches), as on C taller than 512 rows: ranges of 64
         * split C taller than 128 (n = 70: j0 = 0 with blocks of 32; j0 = 0 and 8, ranges from
         * row 8, with blocks of 8, as at n > 512) */
        setenv("BATCHCL_PCYCLIC_SPLIT_ROWS", "64", 1);
        setenv("BATCHCL_PCYCLIC_APPLY", "ranges", 1); /* not qr_apply_rows (NVIDIA's default) */
        check_batch(ctx, 1, 0, 0, 70, 2, 1, "device panels, blocks of 8, split applies");
        if (!strstr(bcl_last_kernel(ctx), "panels of 8 columns"))
            fail_msg("expected blocks of 8 columns in: %s", bcl_last_kernel(ctx));
        unsetenv("BATCHCL_PCYCLIC_NB");
        if (!tu_quick())
            check_batch(ctx, 1, 1, 0, 70, 3, 1, "device panels, split applies");
        unsetenv("BATCHCL_PCYCLIC_SPLIT_ROWS");
        if (!strstr(bcl_last_kernel(ctx), "applied in row ranges"))
            fail_msg("expected qr_apply's row ranges in: %s", bcl_last_kernel(ctx));
        /* the block reflectors applied in one launch (qr_apply_rows, the default on NVIDIA),
         * W of 32 entries a group, the rows kept in registers: forced in blocks of 32 (one
         * column a group) and of 8 (four; n = 70, the factorization), the default in blocks of
         * 32 (n = 40) and of 8 (n = 37, Q^(k) built from the identity's 74 columns); with the
         * rows loaded again (BATCHCL_PCYCLIC_APPLY_KEEP=0), also W of 64 entries where the
         * widest apply would take more groups than the device has compute units (n = 40: 80
         * columns, two a group, on PoCL's few compute units); in the full run two rows a
         * work-item (n = 150, 32 entries) and 64 entries in blocks of 16 */
        setenv("BATCHCL_PCYCLIC_APPLY", "rows", 1);
        setenv("BATCHCL_PCYCLIC_APPLY_CT", "1", 1);
        check_batch(ctx, 1, 2, GRID_COND, 40, 3, 1, "device panels, applies in one launch");
        expect_w_entries(ctx, 0, "applied in one launch (a group: 1 of C's columns, W of 32");
        unsetenv("BATCHCL_PCYCLIC_APPLY_CT");
        check_batch(ctx, 1, 0, 0, 40, 2, 1, "device panels, applies, the default width");
        expect_w_entries(ctx, 0, "(a group: 1 of C's columns, W of 32 entries, rows kept)");
        setenv("BATCHCL_PCYCLIC_APPLY_KEEP", "0", 1);
        check_batch(ctx, 1, 0, 0, 40, 2, 1, "device panels, applies loading again, default width");
        expect_w_entries(ctx, 80, NULL);
        unsetenv("BATCHCL_PCYCLIC_APPLY_KEEP");
        setenv("BATCHCL_PCYCLIC_NB", "8", 1);
        setenv("BATCHCL_PCYCLIC_APPLY_CT", "4", 1);
        check_batch(ctx, 1, 0, 0, 70, 2, 1, "device panels, blocks of 8, applies in one launch");
        expect_w_entries(ctx, 0, "(a group: 4 of C's columns, W of 32 entries, rows kept)");
        /* the rows of V and C loaded again for the update, W of 32 entries forced */
        setenv("BATCHCL_PCYCLIC_APPLY_KEEP", "0", 1);
        check_batch(ctx, 1, 0, 0, 70, 2, 1, "device panels, applies, rows loaded again");
        expect_w_entries(ctx, 0, "(a group: 4 of C's columns, W of 32 entries)");
        unsetenv("BATCHCL_PCYCLIC_APPLY_KEEP");
        unsetenv("BATCHCL_PCYCLIC_APPLY_CT");
        setenv("BATCHCL_PCYCLIC_QFORM", "apply", 1);
        check_batch(ctx, 0, 0, 0, 37, 2, 1, "device panels, blocks of 8, Q in one launch");
        expect_w_entries(ctx, 0, "(a group: 4 of C's columns, W of 32 entries, rows kept)");
        unsetenv("BATCHCL_PCYCLIC_QFORM");
        if (!tu_quick()) {
            setenv("BATCHCL_PCYCLIC_NB", "16", 1);
            setenv("BATCHCL_PCYCLIC_APPLY_CT", "2", 1);
            check_batch(ctx, 1, 0, 0, 150, 2, 1, "device panels, applies, two rows a work-item");
            setenv("BATCHCL_PCYCLIC_APPLY_CT", "4", 1);
            /* and tri_inverse's 4 columns a group in local memory, as at n > 512 */
            setenv("BATCHCL_PCYCLIC_TRI_COLS", "4", 1);
            check_batch(ctx, 1, 1, 0, 40, 3, 2, "device panels, applies, 64 entries of W");
            unsetenv("BATCHCL_PCYCLIC_APPLY_CT");
            unsetenv("BATCHCL_PCYCLIC_TRI_COLS");
        }
        unsetenv("BATCHCL_PCYCLIC_NB");
        unsetenv("BATCHCL_PCYCLIC_APPLY");
        /* the register panel reading the reflector's x from local memory where it uses it (the
         * default at 64 rows a lane, n > 512), forced at the sizes of the grid */
        setenv("BATCHCL_PCYCLIC_PANEL", "columns", 1); /* qr_panel_reg on any device */
        setenv("BATCHCL_PCYCLIC_X_LOCAL", "1", 1);
        check_batch(ctx, 1, 2, GRID_COND, 40, 3, 1, "device panels, x from local memory");
        check_batch(ctx, 0, 0, 0, 37, 2, 1, "device panels, x from local memory");
        if (!strstr(bcl_last_kernel(ctx), "reflector read from local memory"))
            fail_msg("expected x from local memory in: %s", bcl_last_kernel(ctx));
        unsetenv("BATCHCL_PCYCLIC_X_LOCAL");
        unsetenv("BATCHCL_PCYCLIC_PANEL");
        /* the panel spread by rows over the work-items (the default on NVIDIA above 1024 rows,
         * in blocks of 8, its steps unrolled): blocks of 32 in a loop of steps (n = 40: a second
         * block of 8, steps beyond nbk), blocks of 8; two rows a work-item (n = 150) and blocks
         * of 16 in the full run (each is a kernel build) */
        setenv("BATCHCL_PCYCLIC_PANEL", "rows", 1);
        check_batch(ctx, 1, 2, GRID_COND, 40, 3, 1, "device panels by rows");
        check_batch(ctx, 0, 0, 0, 37, 2, 1, "device panels by rows");
        if (!strstr(bcl_last_kernel(ctx), "in registers by rows"))
            fail_msg("expected the panel by rows in: %s", bcl_last_kernel(ctx));
        setenv("BATCHCL_PCYCLIC_NB", "8", 1);
        check_batch(ctx, 1, 2, GRID_COND, 37, 3, 1, "device panels by rows, blocks of 8");
        if (!tu_quick()) {
            check_batch(ctx, 1, 0, 0, 150, 2, 1, "device panels by rows, two a work-item");
            setenv("BATCHCL_PCYCLIC_NB", "16", 1);
            check_batch(ctx, 1, 0, 0, 150, 2, 1, "device panels by rows, two a work-item");
            check_batch(ctx, 0, 0, 0, 40, 2, 1, "device panels by rows, blocks of 16");
        }
        unsetenv("BATCHCL_PCYCLIC_NB");
        unsetenv("BATCHCL_PCYCLIC_PANEL");
        /* Q^(k) = I - V T V^T by GEMMs (the default from n = 129 on) and from the block
         * reflectors, each forced: T's diagonal blocks of 64 columns and, at n = 150, two levels
         * of halves above them (64 + 64 and a right half of 22, then 128 + 22) */
        setenv("BATCHCL_PCYCLIC_QFORM", "gemm", 1);
        check_batch(ctx, 1, 2, GRID_COND, 150, 2, 1, "device panels, Q by GEMMs");
        check_batch(ctx, 1, 0, 0, 100, 3, 1, "device panels, Q by GEMMs");
        check_batch(ctx, 0, 0, 0, 70, 2, 1, "device panels, Q by GEMMs");
        if (!strstr(bcl_last_kernel(ctx), "by GEMMs"))
            fail_msg("expected Q^(k) by GEMMs in: %s", bcl_last_kernel(ctx));
        setenv("BATCHCL_PCYCLIC_NB", "8", 1);
        setenv("BATCHCL_PCYCLIC_QFORM", "apply", 1);
        check_batch(ctx, 1, 0, 0, 37, 2, 1, "device panels, blocks of 8, Q by qr_apply");
        if (!strstr(bcl_last_kernel(ctx), "(qr_apply)"))
            fail_msg("expected Q^(k) from the block reflectors in: %s", bcl_last_kernel(ctx));
        unsetenv("BATCHCL_PCYCLIC_NB");
        unsetenv("BATCHCL_PCYCLIC_QFORM");
        /* the panel kernel for n > 1024, which reads its block column from global memory */
        setenv("BATCHCL_PCYCLIC_PANEL", "global", 1);
        check_batch(ctx, 1, 2, GRID_COND, 37, 4, 1, "device panels, global memory");
        check_batch(ctx, 0, 0, 0, 40, 3, 1, "device panels, global memory");
        unsetenv("BATCHCL_PCYCLIC_PANEL");
        assert_non_null(strstr(bcl_last_kernel(ctx), "in global memory"));
        check_splits(ctx, 3, "device panels j_F");
        /* R_kk^-1 from leaves of 8 and the GEMMs above them: one block a call (the column
         * version, pairs along the diagonal batched) and all at once (the row version, each pair
         * batched over the blocks), whole pairs and a narrower right half (37 = 32 + 5) */
        setenv("BATCHCL_PCYCLIC_TRI_LEAF", "8", 1);
        use_method(ctx, 3, 2);
        check_batch(ctx, 1, 2, GRID_COND, 37, 4, 1, "device panels, tri_inverse leaves of 8");
        check_batch(ctx, 0, 0, 0, 37, 4, 1, "device panels, tri_inverse leaves of 8");
        assert_non_null(strstr(bcl_last_kernel(ctx), "diagonal blocks of 8 and GEMMs"));
        unsetenv("BATCHCL_PCYCLIC_TRI_LEAF");
        use_method(ctx, 3, 0);
        /* the reflectors read from the factored panel by the applies and V formed once after it
         * (v_from_panel, the register panels' default) against V written by the panel kernel:
         * the same bits, by columns and by rows, with Q^(k) by GEMMs (which read V) and from the
         * block reflectors (which qr_apply then reads from the panel too: no v_from_panel) */
        setenv("BATCHCL_PCYCLIC_QFORM", "gemm", 1);
        setenv("BATCHCL_PCYCLIC_APPLY", "ranges", 1); /* qr_apply, in two stages */
        setenv("BATCHCL_PCYCLIC_SPLIT_ROWS", "64", 1);
        check_same_bits(ctx, "BATCHCL_PCYCLIC_V_FROM_P", "V from the panel", 1, 40, 3,
                        "V from the panel");
        unsetenv("BATCHCL_PCYCLIC_SPLIT_ROWS");
        setenv("BATCHCL_PCYCLIC_QFORM", "apply", 1);
        setenv("BATCHCL_PCYCLIC_PANEL", "rows", 1);
        setenv("BATCHCL_PCYCLIC_APPLY", "rows", 1);
        setenv("BATCHCL_PCYCLIC_NB", "8", 1);
        check_same_bits(ctx, "BATCHCL_PCYCLIC_V_FROM_P", "V from the panel", 1, 70, 3,
                        "V from the panel, by rows");
        unsetenv("BATCHCL_PCYCLIC_NB");
        unsetenv("BATCHCL_PCYCLIC_APPLY");
        unsetenv("BATCHCL_PCYCLIC_PANEL");
        unsetenv("BATCHCL_PCYCLIC_QFORM");
        /* the products by gemm.cl (the default in double on NVIDIA sm_80 or later, there on the
         * tensor cores; elsewhere its portable build, forced): device panels with Q^(k) and T
         * by GEMMs and the row version's strided batches, and host panels */
        setenv("BATCHCL_PCYCLIC_GEMM", "own", 1);
        setenv("BATCHCL_PCYCLIC_QFORM", "gemm", 1);
        use_method(ctx, 3, 0);
        check_batch(ctx, 1, 2, GRID_COND, 70, 3, 1, "device panels, gemm.cl");
        check_batch(ctx, 1, 0, 0, 17, 7, 2, "device panels, gemm.cl");
        /* even p: the Q^T application's last step writes H^-1 itself (odd p ends in the
         * temporary); p = 2 with its temporary of two block columns */
        check_batch(ctx, 1, 0, 0, 17, 4, 1, "device panels, gemm.cl, even p");
        check_batch(ctx, 1, 0, 0, 17, 2, 1, "device panels, gemm.cl, p = 2");
        /* R^-1's rows in groups of 3 (three, two rows above them): gemm.cl's strided batches */
        setenv("BATCHCL_PCYCLIC_RV_GROUP", "3", 1);
        check_batch(ctx, 1, 2, GRID_COND, 17, 12, 1, "device panels, gemm.cl, R^-1 in groups");
        if (!strstr(bcl_last_kernel(ctx), "rows in groups of 3 block rows"))
            fail_msg("expected groups of 3 in: %s", bcl_last_kernel(ctx));
        unsetenv("BATCHCL_PCYCLIC_RV_GROUP");
        /* n = 300: T's 64-wide pairs as batches of two products, then a pair whose right half
         * is narrower (44 columns) one product at a time */
        check_batch(ctx, 1, 0, 0, 300, 3, 1, "device panels, gemm.cl, T's pairs batched");
        setenv("BATCHCL_GEMM_SPLITS", "3", 1); /* k in ranges (the H100's small products) */
        check_batch(ctx, 1, 0, 0, 40, 5, 1, "device panels, gemm.cl, k in ranges");
        unsetenv("BATCHCL_GEMM_SPLITS");
        if (!strstr(bcl_last_kernel(ctx), "GEMMs by gemm.cl"))
            fail_msg("expected gemm.cl's GEMMs in: %s", bcl_last_kernel(ctx));
        /* the Q^T application by halves, the right ones on a second queue: p = 7 (three
         * temporary slots in turn, a batch of two on the same queues), p = 4, p = 2 (two slots),
         * p = 1 */
        setenv("BATCHCL_PCYCLIC_QT", "halves2", 1);
        check_batch(ctx, 1, 2, GRID_COND, 17, 7, 2, "Q^T by halves on two queues");
        if (!strstr(bcl_last_kernel(ctx), "Q^T applied by halves, the right ones on a second"))
            fail_msg("expected the Q^T halves on a second queue in: %s", bcl_last_kernel(ctx));
        check_batch(ctx, 1, 0, 0, 17, 4, 1, "Q^T by halves on two queues, p = 4");
        check_batch(ctx, 1, 0, 0, 17, 2, 1, "Q^T by halves on two queues, p = 2");
        check_batch(ctx, 1, 0, 0, 17, 1, 1, "Q^T by halves on two queues, p = 1");
        /* with the chain of panels on the second queue too, in a batch of three, and k in
         * ranges (each queue's GEMM workspace its own) */
        setenv("BATCHCL_PCYCLIC_CHAIN", "1", 1);
        setenv("BATCHCL_PCYCLIC_OVERLAP", "1", 1);
        setenv("BATCHCL_GEMM_SPLITS", "3", 1);
        check_batch(ctx, 1, 0, 0, 40, 6, 3, "Q^T by halves and BSOF on two queues");
        if (!strstr(bcl_last_kernel(ctx), "by GEMMs on a second queue") ||
            !strstr(bcl_last_kernel(ctx), "Q^T applied by halves, the right ones on a second"))
            fail_msg("expected BSOF and the Q^T halves on two queues in: %s", bcl_last_kernel(ctx));
        check_batch(ctx, 1, 0, 0, 17, 2, 3, "Q^T by halves and BSOF on two queues, p = 2");
        unsetenv("BATCHCL_GEMM_SPLITS");
        unsetenv("BATCHCL_PCYCLIC_OVERLAP");
        setenv("BATCHCL_PCYCLIC_CHAIN", "0", 1);
        unsetenv("BATCHCL_PCYCLIC_QFORM");
        use_method(ctx, 1, 0);
        check_batch(ctx, 1, 0, 0, 17, 5, 1, "host panels, gemm.cl, Q^T by halves on two queues");
        unsetenv("BATCHCL_PCYCLIC_GEMM"); /* clBLAST: on two queues, then on one */
        check_batch(ctx, 1, 0, 0, 17, 5, 2, "host panels, clBLAST, Q^T by halves on two queues");
        if (!strstr(bcl_last_kernel(ctx), "Q^T applied by halves, the right ones on a second"))
            fail_msg("expected the Q^T halves on a second queue in: %s", bcl_last_kernel(ctx));
        setenv("BATCHCL_PCYCLIC_QT", "halves", 1);
        check_batch(ctx, 0, 0, 0, 17, 5, 1, "host panels, clBLAST, Q^T by halves, single");
        if (!strstr(bcl_last_kernel(ctx), "Q^T applied by halves") ||
            strstr(bcl_last_kernel(ctx), "on a second queue"))
            fail_msg("expected the Q^T halves on one queue in: %s", bcl_last_kernel(ctx));
        unsetenv("BATCHCL_PCYCLIC_QT");
        setenv("BATCHCL_PCYCLIC_GEMM", "own", 1);
        check_batch(ctx, 1, 0, 0, 17, 5, 1, "host panels, gemm.cl");
        unsetenv("BATCHCL_PCYCLIC_GEMM");
        unsetenv("BATCHCL_PCYCLIC_CHAIN");
        unsetenv("BATCHCL_PCYCLIC_OVERLAP");
    }
    bcl_destroy(ctx);
}

/* The device workspace kept in the context between calls: on one context a larger call, then
 * smaller ones on its buffers (with what the larger one left in them), float after double, host
 * panels after device panels, and the same with the workspace released after every call. */
static void test_workspace_reuse(void **state)
{
    (void)state;
    if (!bcl_pcyclic_has_clblast())
        skip();
    bcl_context *ctx = tu_context();
    for (int keep = 1; keep >= 0; --keep) {
        if (!keep)
            setenv("BATCHCL_PCYCLIC_KEEP", "0", 1);
        use_method(ctx, 3, 0);
        check_batch(ctx, 1, 0, 0, 40, 5, 1, "workspace: larger");
        check_batch(ctx, 1, 1, 0, 17, 3, 2, "workspace: smaller, after a larger call");
        check_batch(ctx, 0, 0, 0, 20, 4, 1, "workspace: float after double");
        use_method(ctx, 1, 0);
        check_batch(ctx, 1, 0, 0, 12, 6, 1, "workspace: host panels after device panels");
        use_method(ctx, 3, 0);
        check_batch(ctx, 1, 2, GRID_COND, 17, 7, 1, "workspace: device panels again");
    }
    unsetenv("BATCHCL_PCYCLIC_KEEP");
    bcl_destroy(ctx);
}

/* shares forced (rv, qt), the plan stating want_rv and want_qt (the counts after clamping) */
static void check_shares(bcl_context *ctx, int method, int dbl, int kind, int n, int p,
                         size_t batch, int cv, int rv, int qt, int want_rv, int want_qt,
                         const char *what)
{
    use_shares(ctx, method, cv, rv, qt, -1);
    check_batch(ctx, dbl, kind, kind == 2 ? GRID_COND : 0, n, p, batch, what);
    char want[96];
    snprintf(want, sizeof want, "host shares: R^-1 by rows %d block column", want_rv);
    const char *plan = bcl_last_kernel(ctx), *at = strstr(plan, want);
    snprintf(want, sizeof want, "Q^T %d block row", want_qt);
    if (!at || !strstr(at, want))
        fail_msg("%s: expected %d block columns and %d block rows on the host in: %s", what,
                 want_rv, want_qt, plan);
}

/* The host's shares of the row version (block columns from max(j_F, 1)) and of the Q^T
 * application (leading block rows), BSOFTRI's l_i and BSOI's l_k, forced in both methods: one
 * block, several, all there are (clamped), beside the column version, where none is left (p = 1,
 * 2, j_F = p - 1), ill-conditioned, in float, in batches, and with the Q^T application by halves
 * (clBLAST, and gemm.cl's fused pairs whose second product then starts below the host's rows). */
static void test_host_shares(void **state)
{
    (void)state;
    if (!bcl_pcyclic_has_clblast())
        skip();
    bcl_context *ctx = tu_context();
    for (int method = 1; method <= 3; method += 2) {
        const char *what = method == 1 ? "host panels, host shares" : "device panels, host shares";
        check_shares(ctx, method, 1, 0, 10, 8, 1, -1, 1, 1, 1, 1, what);
        check_shares(ctx, method, 1, 1, 10, 8, 1, -1, 3, 2, 3, 2, what);
        check_shares(ctx, method, 1, 0, 10, 8, 1, -1, 100, 100, 6, 7, what);
        check_shares(ctx, method, 1, 2, 10, 8, 1, -1, 2, 2, 2, 2, what);
        /* beside the column version: j_F = 3 leaves columns 3 .. 6, j_F = p - 1 none */
        check_shares(ctx, method, 1, 0, 10, 8, 1, 3, 2, 3, 2, 3, what);
        check_shares(ctx, method, 1, 0, 10, 8, 1, 3, 100, 1, 4, 1, what);
        check_shares(ctx, method, 1, 0, 10, 8, 1, 8, 3, 3, 0, 3, what);
        check_shares(ctx, method, 1, 0, 12, 2, 1, -1, 5, 5, 0, 1, what);
        check_shares(ctx, method, 1, 0, 5, 1, 2, -1, 5, 5, 0, 0, what);
        check_shares(ctx, method, 0, 0, 20, 6, 2, -1, 2, 3, 2, 3, what);
        check_shares(ctx, method, 1, 1, 12, 9, 3, -1, 2, 2, 2, 2, what);
    }
    setenv("BATCHCL_PCYCLIC_QT", "halves2", 1);
    check_shares(ctx, 1, 1, 0, 17, 7, 1, -1, 2, 3, 2, 3, "host panels, Q^T by halves, host shares");
    setenv("BATCHCL_PCYCLIC_GEMM", "own", 1);
    check_shares(ctx, 3, 1, 2, 17, 7, 2, -1, 2, 3, 2, 3, "gemm.cl, Q^T by halves, host shares");
    check_shares(ctx, 3, 1, 0, 17, 4, 1, -1, 1, 3, 1, 3, "gemm.cl, Q^T by halves, host shares");
    unsetenv("BATCHCL_PCYCLIC_QT");
    check_shares(ctx, 3, 1, 0, 17, 5, 1, -1, 1, 2, 1, 2, "gemm.cl, Q^T by pairs, host shares");
    unsetenv("BATCHCL_PCYCLIC_GEMM");
    /* the column version's share (method 1: block rows of columns 0 .. j_F-1 beside the panels):
     * (j_F, rows asked, rows taken), with the other shares too in the last ones; none where
     * j_F < 2, j_F = p - 1 (the last column from the others) or in method 3 */
    static const int cv_cases[][3] = {{5, 1, 1}, {5, 2, 2}, {5, 100, 4}, {2, 3, 1},
                                      {1, 2, 0}, {-1, 2, 0}, {7, 2, 0}};
    for (size_t i = 0; i < sizeof cv_cases / sizeof cv_cases[0]; ++i)
        for (int method = 1; method <= 3; method += 2) {
            const int *c = cv_cases[i], want = method == 1 ? c[2] : 0, both = i >= 4 ? 2 : -1;
            use_shares(ctx, method, c[0], both, both, c[1]);
            check_batch(ctx, 1, i == 1 ? 2 : 0, i == 1 ? GRID_COND : 0, 10, 8, 1,
                        "the column version's host share");
            char want_cv[64];
            snprintf(want_cv, sizeof want_cv, "the column version %d block row", want);
            if (method == 1 ? !strstr(bcl_last_kernel(ctx), want_cv)
                            : strstr(bcl_last_kernel(ctx), "the column version ") != NULL)
                fail_msg("expected %s in: %s", method == 1 ? want_cv : "no column version share",
                         bcl_last_kernel(ctx));
        }
    use_shares(ctx, 1, 4, -1, -1, 2);
    check_batch(ctx, 0, 0, 0, 20, 6, 1, "the column version's host share, float");
    check_batch(ctx, 1, 1, 0, 12, 9, 3, "the column version's host share, a batch");
    /* all three shares in one call (the stage used three times), in float and in a batch */
    use_shares(ctx, 1, 3, 2, 2, 2);
    check_batch(ctx, 1, 2, GRID_COND, 10, 8, 1, "all three host shares");
    if (!strstr(bcl_last_kernel(ctx), "R^-1 by rows 2 block columns (from 3, forced), Q^T 2 block "
                                      "rows, forced, the column version 2 block rows, forced"))
        fail_msg("expected all three shares in: %s", bcl_last_kernel(ctx));
    check_batch(ctx, 0, 0, 0, 20, 6, 2, "all three host shares, float, a batch");
    bcl_destroy(ctx);
}

/* Singular and NaN problems mid-batch: LAPACK's index in info, zeros in their inverse, and the
 * neighbours bit for bit what a clean batch gives. */
static void test_failure_isolation(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    /* methods 1 and 3 also with the host's shares forced (2 block columns, 2 block rows) */
    for (int run = 1; run <= 5; ++run) {
        const int method = run <= 3 ? run : run == 4 ? 1 : 3, shares = run > 3 ? 2 : -1;
        if (method != 2 && !bcl_pcyclic_has_clblast())
            continue;
        /* with the shares, j_F = 3 (method 1): the column version's share is 2 block rows */
        use_shares(ctx, method, shares > 0 ? 3 : 0, shares, shares, shares);
        const int n = 6, p = 5;
        const size_t batch = 6, blocks = (size_t)p * n * n, N = (size_t)n * p, NN = N * N;
        double *A = malloc(sizeof *A * blocks * batch), *B = malloc(sizeof *B * blocks * batch);
        double *X = malloc(sizeof *X * NN * batch), *Xclean = malloc(sizeof *Xclean * NN * batch);
        int info[6], info_clean[6];
        make_blocks(0, 0, n, p, batch, 42, A, B);
        TU_STATUS(ctx, BCL_SUCCESS, bcl_dpcyclic_inv(ctx, n, p, batch, A, B, Xclean, info_clean));
        /* problem 1: block column 0 zero (R_11 = 0 at once); 3: the last block column zero
         * (R(N,N) = 0 in the last block); 4: NaN in B_2 */
        memset(A + 1 * blocks, 0, sizeof *A * n * n);
        memset(B + 1 * blocks, 0, sizeof *B * n * n);
        memset(A + 3 * blocks + (size_t)(p - 1) * n * n, 0, sizeof *A * n * n);
        memset(B + 3 * blocks + (size_t)(p - 1) * n * n, 0, sizeof *B * n * n);
        B[4 * blocks + (size_t)n * n + 3] = NAN;
        TU_STATUS(ctx, BCL_NUMERICAL_FAILURE, bcl_dpcyclic_inv(ctx, n, p, batch, A, B, X, info));
        for (size_t k = 0; k < batch; ++k) {
            const double *Xk = X + k * NN;
            if (k == 1 || k == 3 || k == 4) {
                if (k == 1)
                    assert_int_equal(info[k], 1);
                if (k == 3) /* the last block column is zero: R_pp's first column vanishes */
                    assert_true(info[k] >= (p - 1) * n + 1 && info[k] <= (int)N);
                if (k == 4)
                    assert_true(info[k] >= 1 && info[k] <= (int)N);
                for (size_t e = 0; e < NN; ++e)
                    if (Xk[e] != 0)
                        fail_msg("method %d, host shares %d: failed problem %zu has a nonzero inverse "
                             "entry", method, shares, k);
            } else {
                assert_int_equal(info[k], 0);
                if (memcmp(Xk, Xclean + k * NN, sizeof *X * NN) != 0)
                    fail_msg("method %d, host shares %d: neighbour %zu changed by the failed "
                             "problems", method, shares, k);
            }
        }
        free(A);
        free(B);
        free(X);
        free(Xclean);
    }
    bcl_destroy(ctx);
}

/* ---- device buffers, a failing clBLAST, bad arguments ---- */

static void test_device_buffers(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    cl_context cl = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    /* methods 1 and 3 also with the host's shares forced: they read and write H^-1 at its offset */
    for (int run = 1; run <= 5; ++run) {
        const int method = run <= 3 ? run : run == 4 ? 1 : 3, shares = run > 3 ? 1 : -1;
        if (method != 2 && !bcl_pcyclic_has_clblast())
            continue;
        /* single precision with clBLAST is covered in numerics: its kernels compile once */
        for (int dbl = method == 1; dbl < 2; ++dbl) {
            use_shares(ctx, method, shares > 0 ? 2 : 0, shares, shares, shares);
            const int n = 7, p = 4;
            const size_t batch = 3, blocks = (size_t)p * n * n, N = (size_t)n * p, NN = N * N;
            const size_t off = 3, es = dbl ? 8 : 4;
            double *Ad = malloc(sizeof *Ad * blocks * batch), *Bd = malloc(sizeof *Bd * blocks * batch);
            make_blocks(1, 0, n, p, batch, 5, Ad, Bd);
            void *A = convert(Ad, blocks * batch, dbl), *B = convert(Bd, blocks * batch, dbl);
            void *Xh = tu_alloc(NN * batch, dbl), *X = tu_alloc(NN * batch + off, dbl);
            int info_h[3], info[3 + 3];
            TU_STATUS(ctx, BCL_SUCCESS, invert(ctx, dbl, n, p, batch, A, B, Xh, info_h));
            void *Aoff = tu_alloc(blocks * batch + off, dbl), *Boff = tu_alloc(blocks * batch + off, dbl);
            memcpy((char *)Aoff + off * es, A, blocks * batch * es);
            memcpy((char *)Boff + off * es, B, blocks * batch * es);
            cl_int err;
            cl_mem dA = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       (blocks * batch + off) * es, Aoff, &err);
            cl_mem dB = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       (blocks * batch + off) * es, Boff, &err);
            cl_mem dX = clCreateBuffer(cl, CL_MEM_READ_WRITE, (NN * batch + off) * es, NULL, &err);
            cl_mem dI = clCreateBuffer(cl, CL_MEM_READ_WRITE, (batch + off) * sizeof(int), NULL, &err);
            /* method 2 waits on the device for a user event; methods 1 and 3 wait on the host:
             * give them one that is complete */
            cl_event user = clCreateUserEvent(cl, &err), ev = NULL;
            if (method != 2)
                clSetUserEventStatus(user, CL_COMPLETE);
            TU_STATUS(ctx, BCL_SUCCESS,
                      dbl ? bcl_dpcyclic_inv_cl(ctx, n, p, batch, dA, off, dB, off, dX, off, dI, off,
                                                1, &user, &ev)
                          : bcl_spcyclic_inv_cl(ctx, n, p, batch, dA, off, dB, off, dX, off, dI, off,
                                                1, &user, &ev));
            if (method == 2)
                clSetUserEventStatus(user, CL_COMPLETE);
            assert_non_null(ev);
            clEnqueueReadBuffer(q, dX, CL_TRUE, 0, (NN * batch + off) * es, X, 1, &ev, NULL);
            clEnqueueReadBuffer(q, dI, CL_TRUE, 0, (batch + off) * sizeof(int), info, 0, NULL, NULL);
            clReleaseEvent(ev);
            clReleaseEvent(user);
            for (size_t k = 0; k < batch; ++k)
                assert_int_equal(info[off + k], 0);
            if (memcmp((char *)X + off * es, Xh, NN * batch * es) != 0)
                fail_msg("method %d %s, host shares %d: device-buffer results differ from the "
                         "host-pointer path",
                         method, dbl ? "double" : "single", shares);
            clReleaseMemObject(dA);
            clReleaseMemObject(dB);
            clReleaseMemObject(dX);
            clReleaseMemObject(dI);
            free(Ad);
            free(Bd);
            free(A);
            free(B);
            free(Aoff);
            free(Boff);
            free(X);
            free(Xh);
        }
    }
    bcl_destroy(ctx);
}

/* A clBLAST failure (forced) returns BCL_OPENCL_ERROR with clBLAST's status and leaves the
 * outputs alone; without clBLAST in the build, the method is BCL_NOT_IMPLEMENTED. */
static void test_clblast_failure(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int n = 4, p = 3;
    const size_t blocks = (size_t)p * n * n, NN = (size_t)n * p * n * p;
    double A[48], B[48], X[144];
    int info[1];
    make_blocks(0, 0, n, p, 1, 3, A, B);
    (void)blocks;
    tu_poison(X, sizeof X);
    tu_poison(info, sizeof info);
    use_method(ctx, 1, 0);
    if (!bcl_pcyclic_has_clblast()) {
        TU_STATUS(ctx, BCL_NOT_IMPLEMENTED, bcl_dpcyclic_inv(ctx, n, p, 1, A, B, X, info));
        assert_non_null(strstr(bcl_last_error(ctx), "clBLAST"));
    } else {
        for (int m3 = 0; m3 < 4; ++m3) { /* row or column version first; host or device panels */
            const int cv = m3 & 1 ? 2 : -1;
            use_method(ctx, m3 < 2 ? 1 : 3, cv);
            setenv("BATCHCL_CLBLAST_FAIL", "1", 1);
            TU_STATUS(ctx, BCL_OPENCL_ERROR, bcl_dpcyclic_inv(ctx, n, p, 1, A, B, X, info));
            unsetenv("BATCHCL_CLBLAST_FAIL");
            assert_non_null(strstr(bcl_last_error(ctx), "clBLAST"));
            assert_non_null(strstr(bcl_last_error(ctx), "BATCHCL_CLBLAST_FAIL"));
            assert_true(tu_is_poisoned(X, sizeof X) && tu_is_poisoned(info, sizeof info));
        }
        /* and the next call works */
        TU_STATUS(ctx, BCL_SUCCESS, bcl_dpcyclic_inv(ctx, n, p, 1, A, B, X, info));
        assert_true(oracle_pcyclic_residual(n, p, A, B, 1, X) < RES_LIMIT);
    }
    /* the batched kernels need no clBLAST */
    use_method(ctx, 2, 0);
    setenv("BATCHCL_CLBLAST_FAIL", "1", 1);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_dpcyclic_inv(ctx, n, p, 1, A, B, X, info));
    unsetenv("BATCHCL_CLBLAST_FAIL");
    assert_true(oracle_pcyclic_residual(n, p, A, B, 1, X) < RES_LIMIT);
    (void)NN;
    bcl_destroy(ctx);
}

/* test_model's tuning directory (a tuning file and nothing else) */
static void model_dir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/batchcl-test-pcyclic-model-%d", (int)getpid());
}

/* After every test, also one cut short by a failed assertion: the environment's test hooks unset
 * and test_model's directory removed, so that one failure does not spill into the next test. */
static int clear_hooks(void **state)
{
    (void)state;
    static const char *const hooks[] = {"BATCHCL_CLBLAST_FAIL", "BATCHCL_PCYCLIC_CALIBRATE",
                                        "BATCHCL_PCYCLIC_NB", "BATCHCL_PCYCLIC_SPLIT_ROWS",
                                        "BATCHCL_PCYCLIC_PANEL", "BATCHCL_CLBLAST_TUNED",
                                        "BATCHCL_PCYCLIC_QFORM", "BATCHCL_PCYCLIC_X_LOCAL",
                                        "BATCHCL_PCYCLIC_GEMM", "BATCHCL_GEMM_TILE",
                                        "BATCHCL_GEMM_SPLITS", "BATCHCL_PCYCLIC_APPLY",
                                        "BATCHCL_PCYCLIC_APPLY_CT", "BATCHCL_PCYCLIC_TRI_COLS",
                                        "BATCHCL_PCYCLIC_KEEP", "BATCHCL_PCYCLIC_V_FROM_P",
                                        "BATCHCL_GEMM_MMA", "BATCHCL_PCYCLIC_TRI_LEAF",
                                        "BATCHCL_PCYCLIC_CHAIN", "BATCHCL_PCYCLIC_OVERLAP",
                                        "BATCHCL_PCYCLIC_CHAIN_TCH", "BATCHCL_PCYCLIC_QT",
                                        "BATCHCL_PCYCLIC_RV_GROUP",
                                        "BATCHCL_PCYCLIC_CHAIN_STEPS",
                                        "BATCHCL_PCYCLIC_CHAIN_TAIL",
                                        "BATCHCL_PCYCLIC_CHAIN_GROUPS"};
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; ++i)
        unsetenv(hooks[i]);
    char dir[256], path[300];
    model_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/model.json", dir);
    remove(path);
    rmdir(dir);
    return 0;
}

/* dir/model.json, opened for writing (clear_hooks removes it); *type_key: the device's type as
 * the tuning files spell it */
static FILE *open_tuning_file(bcl_context *ctx, const char *dir, const char **type_key)
{
    char path[700];
    snprintf(path, sizeof path, "%s/model.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    cl_device_type type = 0;
    clGetDeviceInfo(bcl_cl_device(ctx), CL_DEVICE_TYPE, sizeof type, &type, NULL);
    *type_key = type & CL_DEVICE_TYPE_GPU   ? "GPU"
                : type & CL_DEVICE_TYPE_CPU ? "CPU"
                                            : "ACCELERATOR";
    return f;
}

/* A tuning file for this device (tuned with `driver`) holding one pcyclic entry (double, n) with
 * the model's constants (`shares`: the host shares' constants, or "") */
static void write_model_file(bcl_context *ctx, const char *dir, const bcl_device_info *d,
                             const char *driver, int n, double host_step_s, const char *shares)
{
    const char *type;
    FILE *f = open_tuning_file(ctx, dir, &type);
    fprintf(f,
            "{\"format\": \"batchcl-tuning\", \"version\": 1, \"device\": {\"name\": \"%s\", "
            "\"vendor\": \"%s\", \"type\": \"%s\", \"architecture\": \"%s\", \"driver\": "
            "\"%s\", \"compute_units\": %u}, \"entries\": [{\"routine\": \"pcyclic\", "
            "\"precision\": \"d\", \"n\": %d, \"params\": {}, \"model\": {\"host_step_s\": %g, "
            "\"dev_gemm_flops\": 2e9, \"dev_gemm_call_s\": 1e-5%s}}]}\n",
            d->name, d->vendor, type, d->architecture, driver, (unsigned)d->compute_units, n,
            host_step_s, shares);
    fclose(f);
}

/* Method 1's performance model: measured by bcl_pcyclic_calibrate; taken from a tuning file for
 * this device, where its constants decide j_F (a slow host: every column but the last goes
 * column-wise; an instant one: only the first); BATCHCL_PCYCLIC_CALIBRATE=1 measures again. */
static void test_model(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    bcl_pcyclic_model m;
    bcl_device_info d;
    bcl_device_info_get(ctx, &d);
    if (!bcl_pcyclic_has_clblast() || !d.has_fp64) {
        TU_STATUS(ctx, BCL_NOT_IMPLEMENTED, bcl_pcyclic_calibrate(ctx, !d.has_fp64, 8, &m));
        bcl_destroy(ctx);
        return;
    }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_pcyclic_calibrate(ctx, 1, 10, &m));
    if (!(m.host_step_s > 0 && m.host_step_s < 10 && m.dev_gemm_flops > 1e6 &&
          isfinite(m.dev_gemm_flops) && m.dev_gemm_call_s >= 0 && m.dev_gemm_call_s < 1 &&
          m.host_gemm_flops > 1e6 && isfinite(m.host_gemm_flops) && m.link_bytes_s > 1e6 &&
          isfinite(m.link_bytes_s) && m.link_call_s >= 0 && m.link_call_s < 1))
        fail_msg("implausible model: host step %g s, GEMM %g FLOP/s + %g s, host GEMM %g FLOP/s, "
                 "link %g B/s + %g s",
                 m.host_step_s, m.dev_gemm_flops, m.dev_gemm_call_s, m.host_gemm_flops,
                 m.link_bytes_s, m.link_call_s);
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_pcyclic_calibrate(NULL, 1, 10, &m));
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_pcyclic_calibrate(ctx, 2, 10, &m));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 2 (dbl = 2)"));
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_pcyclic_calibrate(ctx, 1, 0, &m));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 3 (n = 0)"));
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_pcyclic_calibrate(ctx, 1, 10, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 4 (out)"));
    setenv("BATCHCL_CLBLAST_FAIL", "1", 1);
    TU_STATUS(ctx, BCL_OPENCL_ERROR, bcl_pcyclic_calibrate(ctx, 1, 10, &m));
    unsetenv("BATCHCL_CLBLAST_FAIL");
    assert_non_null(strstr(bcl_last_error(ctx), "clBLAST"));
    /* the successful calibration (not the failed one) is what the next method 1 call uses */
    use_method(ctx, 1, 0);
    check_batch(ctx, 1, 0, 0, 10, 8, 1, "model from bcl_pcyclic_calibrate");
    char want_step[64];
    snprintf(want_step, sizeof want_step, "model (calibrated): host panel step %.3g ms",
             m.host_step_s * 1e3);
    if (!strstr(bcl_last_kernel(ctx), want_step))
        fail_msg("expected \"%s\" in: %s", want_step, bcl_last_kernel(ctx));

    char dir[256];
    model_dir(dir, sizeof dir);
    mkdir(dir, 0777);
    const double hosts[2] = {100, 1e-9};
    const char *want[2] = {"j_F = 7 of 8", "j_F = 1 of 8"};
    use_method(ctx, 1, 0);
    for (int i = 0; i < 2; ++i) {
        write_model_file(ctx, dir, &d, d.driver_version, 10, hosts[i], "");
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
        check_batch(ctx, 1, 0, 0, 10, 8, 1, "model from a tuning file");
        const char *plan = bcl_last_kernel(ctx);
        /* a file without the host shares' constants: those measured */
        if (!strstr(plan, want[i]) ||
            !strstr(plan, "model (tuning file, host GEMM and link measured)") ||
            !strstr(plan, "2 GFLOP/s + 10 us per call"))
            fail_msg("expected %s from the tuning file's model in: %s", want[i], plan);
    }
    /* the host shares from the file's constants, both methods (method 1 with a slow host step:
     * j_F = p - 1, no column left to the row version): an instant host and link take every block
     * there is to take, a host of 1 FLOP/s none */
    const char *instant = ", \"host_gemm_flops\": 1e15, \"link_bytes_s\": 1e15, \"link_call_s\": 0";
    const char *slow = ", \"host_gemm_flops\": 1, \"link_bytes_s\": 1e9, \"link_call_s\": 1e-5";
    for (int method = 1; method <= 3; method += 2)
        for (int i = 0; i < 2; ++i) {
            write_model_file(ctx, dir, &d, d.driver_version, 10, 100, i ? slow : instant);
            TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
            use_shares(ctx, method, method == 1 ? 0 : -1, 0, 0, 0);
            check_batch(ctx, 1, 0, 0, 10, 8, 1, "host shares from a tuning file's model");
            char want_rv[80], want_qt[40], want_model[80];
            snprintf(want_rv, sizeof want_rv, "host shares: R^-1 by rows %d block columns (from %d",
                     i || method == 1 ? 0 : 6, method == 1 ? 7 : 1);
            snprintf(want_qt, sizeof want_qt, "Q^T %d block rows", i ? 0 : 7);
            snprintf(want_model, sizeof want_model, "(model, tuning file: host GEMM %s GFLOP/s",
                     i ? "1e-09" : "1e+06");
            const char *plan = bcl_last_kernel(ctx), *at = strstr(plan, want_rv);
            if (!at || !strstr(at, want_qt) || !strstr(at, want_model))
                fail_msg("expected \"%s\", \"%s\" and \"%s\" in: %s", want_rv, want_qt, want_model,
                         plan);
        }
    /* method 1 at j_F = 4 with an instant host (panel step too): the model takes every block of
     * the column version (3 block rows), the row version (3 block columns) and Q^T (7) */
    write_model_file(ctx, dir, &d, d.driver_version, 10, 1e-9, instant);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
    use_shares(ctx, 1, 4, 0, 0, 0);
    check_batch(ctx, 1, 0, 0, 10, 8, 1, "the model's three host shares");
    if (!strstr(bcl_last_kernel(ctx), "R^-1 by rows 3 block columns (from 4, modelled") ||
        !strstr(bcl_last_kernel(ctx), "Q^T 7 block rows (modelled") ||
        !strstr(bcl_last_kernel(ctx), "the column version 3 block rows (modelled"))
        fail_msg("expected the model to take every block in: %s", bcl_last_kernel(ctx));
    use_method(ctx, 1, 0);
    /* another n or precision is not in the file: the cache or a measurement */
    check_batch(ctx, 0, 0, 0, 10, 8, 1, "model, float");
    assert_null(strstr(bcl_last_kernel(ctx), "model (tuning file"));
    /* a file tuned with another driver lends no model */
    write_model_file(ctx, dir, &d, "another driver", 10, 100, "");
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
    check_batch(ctx, 1, 0, 0, 10, 8, 1, "model, another driver's file");
    assert_null(strstr(bcl_last_kernel(ctx), "model (tuning file"));
    /* measured on request (p = 2: the shapes do not depend on p), then found in the cache */
    write_model_file(ctx, dir, &d, d.driver_version, 10, 100, "");
    setenv("BATCHCL_PCYCLIC_CALIBRATE", "1", 1);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir)); /* forget the kept model */
    check_batch(ctx, 1, 0, 0, 10, 2, 1, "model measured again");
    unsetenv("BATCHCL_PCYCLIC_CALIBRATE");
    if (!strstr(bcl_last_kernel(ctx), "model (measured)"))
        fail_msg("expected a measured model in: %s", bcl_last_kernel(ctx));
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, ""));
    check_batch(ctx, 1, 0, 0, 10, 8, 1, "model from the cache");
    if (!strstr(bcl_last_kernel(ctx), "model (cache)") ||
        strstr(bcl_last_kernel(ctx), "host panel step 1e+05 ms")) /* the file's 100 s */
        fail_msg("expected the cached measurement in: %s", bcl_last_kernel(ctx));
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, NULL));
    bcl_destroy(ctx); /* clear_hooks removes the directory */
}

static void test_bad_arguments(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int n = 3, p = 2;
    const size_t batch = 2;
    double A[36], B[36], X[72];
    int info[2];
    make_blocks(0, 0, n, p, batch, 9, A, B);
    tu_poison(X, sizeof X);
    tu_poison(info, sizeof info);
#define BAD(expect, call)                                                                        \
    do {                                                                                         \
        TU_STATUS(ctx, expect, call);                                                            \
        assert_true(strlen(bcl_last_error(ctx)) > 0 || (expect) == BCL_SUCCESS);                 \
        assert_true(tu_is_poisoned(X, sizeof X) && tu_is_poisoned(info, sizeof info));           \
    } while (0)
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv(NULL, n, p, batch, A, B, X, info));
    assert_non_null(strstr(bcl_last_error(NULL), "argument 1 (ctx)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv(ctx, -1, p, batch, A, B, X, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 2 (n = -1)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv(ctx, n, -4, batch, A, B, X, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 3 (p = -4)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv(ctx, n, p, (size_t)-1 / 64, A, B, X, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv(ctx, n, p, batch, NULL, B, X, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 5 (A)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv(ctx, n, p, batch, A, NULL, X, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 6 (B)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv(ctx, n, p, batch, A, B, NULL, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 7 (Hinv)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv(ctx, n, p, batch, A, B, X, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 8 (info)"));
    /* overlaps */
    double big[200];
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv(ctx, n, p, batch, big, B, big + 10, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv(ctx, n, p, batch, A, big + 30, big, info));
    BAD(BCL_INVALID_ARGUMENT,
        bcl_dpcyclic_inv(ctx, n, p, batch, A, B, big, (int *)(void *)(big + 5)));
    /* the batched kernels' limits, parameters out of range */
    bcl_params prm = {0};
    prm.pcyclic_method = 2;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &prm));
    double *A33 = calloc(33 * 33 * 2, sizeof *A33), *B33 = calloc(33 * 33 * 2, sizeof *B33),
           *X33 = calloc(66 * 66, sizeof *X33);
    TU_STATUS(ctx, BCL_UNSUPPORTED_SIZE, bcl_dpcyclic_inv(ctx, 33, 2, 1, A33, B33, X33, info));
    assert_non_null(strstr(bcl_last_error(ctx), "n <= 32"));
    assert_true(tu_is_poisoned(info, sizeof info));
    free(A33);
    free(B33);
    free(X33);
    prm.pcyclic_method = 4;
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_set_params(ctx, &prm));
    prm.pcyclic_method = 0;
    prm.pcyclic_cv_columns = -2;
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_set_params(ctx, &prm));
    bcl_set_params(ctx, NULL);
    /* zero sizes: success at once, nothing touched, NULL pointers accepted */
    BAD(BCL_SUCCESS, bcl_dpcyclic_inv(ctx, 0, p, batch, NULL, NULL, NULL, NULL));
    BAD(BCL_SUCCESS, bcl_dpcyclic_inv(ctx, n, 0, batch, A, B, X, info));
    BAD(BCL_SUCCESS, bcl_spcyclic_inv(ctx, n, p, 0, NULL, NULL, NULL, NULL));
    /* device-buffer entry points */
    cl_int err;
    cl_mem small = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 64, NULL, &err);
    cl_mem big1 = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 4096, NULL, &err);
    cl_mem big2 = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 4096, NULL, &err);
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv_cl(ctx, n, p, batch, small, 0, big1, 0, big2, 0,
                                                  big1, 0, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 5 (A)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv_cl(ctx, n, p, batch, big1, 0, big1, 0, big2, 500,
                                                  big1, 0, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 9 (Hinv)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv_cl(ctx, n, p, batch, big1, 0, big1, 0, big1, 0,
                                                  big2, 0, 0, NULL, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv_cl(ctx, n, p, batch, big1, 0, big1, 0, big2, 0,
                                                  NULL, 0, 0, NULL, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_dpcyclic_inv_cl(ctx, n, p, batch, big1, 0, big1, 0, big2, 0,
                                                  big1, 0, 3, NULL, NULL));
    cl_event ev = NULL;
    BAD(BCL_SUCCESS, bcl_dpcyclic_inv_cl(ctx, n, p, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL,
                                         &ev));
    assert_non_null(ev);
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
    clReleaseMemObject(small);
    clReleaseMemObject(big1);
    clReleaseMemObject(big2);
    bcl_destroy(ctx);
#undef BAD
}

/* A tuning file's set of clBLAST direct GEMM parameters (as batchcl-tune writes one): handed to
 * clBLAST before the double inversion's GEMMs, which stay right; the float inversion finds no
 * set of its own; after BATCHCL_CLBLAST_TUNED=0 nothing new is handed over, and the plan says the
 * earlier set is still in force. */
static void test_tuned_gemm(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    bcl_device_info d;
    bcl_device_info_get(ctx, &d);
    if (!bcl_pcyclic_has_clblast() || !d.has_fp64) {
        bcl_destroy(ctx);
        skip();
    }
    /* clBLAST's parameters, so clBLAST's products (not gemm.cl's, the default on NVIDIA) */
    setenv("BATCHCL_PCYCLIC_GEMM", "clblast", 1);
    char dir[256];
    model_dir(dir, sizeof dir);
    mkdir(dir, 0777);
    const char *type;
    FILE *f = open_tuning_file(ctx, dir, &type);
    fprintf(f,
            "{\"format\": \"batchcl-tuning\", \"version\": 1, \"device\": {\"name\": \"%s\", "
            "\"vendor\": \"%s\", \"type\": \"%s\"}, \"entries\": [], \"clblast\": {\"d\": "
            "{\"XgemmDirect\": {\"WGD\": 16, \"MDIMCD\": 8, \"NDIMCD\": 8, \"MDIMAD\": 8, "
            "\"NDIMBD\": 16, \"KWID\": 2, \"VWMD\": 1, \"VWND\": 1, \"PADA\": 0, \"PADB\": 1}}}}\n",
            d.name, d.vendor, type);
    fclose(f);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
    if (strstr(bcl_tuning_report(ctx), "skipped"))
        fail_msg("the file was refused: %s", bcl_tuning_report(ctx));
    use_method(ctx, 3, 0);
    check_batch(ctx, 1, 0, 0, 17, 3, 2, "tuned clBLAST GEMM");
    const char *want = "clBLAST GEMM: direct GEMM tuned for this device (WGD 16, MDIMCD 8, "
                       "NDIMCD 8, MDIMAD 8, NDIMBD 16, KWID 2, VWMD 1, VWND 1, PADA 0, PADB 1)";
    if (!strstr(bcl_last_kernel(ctx), want))
        fail_msg("expected \"%s\" in: %s", want, bcl_last_kernel(ctx));
    check_batch(ctx, 0, 0, 0, 17, 3, 1, "float beside a tuned double set");
    if (!strstr(bcl_last_kernel(ctx), "clBLAST's own parameters (no tuned set for this device)"))
        fail_msg("float: expected clBLAST's own parameters in: %s", bcl_last_kernel(ctx));
    setenv("BATCHCL_CLBLAST_TUNED", "0", 1);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir)); /* read again: asked anew */
    check_batch(ctx, 1, 0, 0, 8, 2, 1, "BATCHCL_CLBLAST_TUNED=0");
    /* clBLAST cannot go back to its own set: the plan says which set runs */
    if (!strstr(bcl_last_kernel(ctx), "BATCHCL_CLBLAST_TUNED=0 here; clBLAST keeps the set handed "
                                      "over earlier in this process (WGD 16, MDIMCD 8"))
        fail_msg("expected the opt-out and the set still in force in: %s", bcl_last_kernel(ctx));
    bcl_destroy(ctx);
}


/* ---- gemm.cl ---- */

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);

/* One product set through bcl_gemm_enqueue against BLAS dgemm on the same (rounded) operands:
 * |C - C_ref| <= 4 (k + 2) eps (|alpha| |op(A)| |op(B)| + |beta| |C0|) entrywise, the bound of a
 * dot product of length k with the rounding of alpha and beta (and the float conversion). count
 * products, their operands `stride` elements apart in one buffer each; C starts as NaN where
 * beta = 0 (it must not be read). */
static void check_gemm(bcl_context *ctx, int dbl, int tensor, int ta, int tb, int m, int n, int k,
                       int count, double alpha, double beta, uint64_t seed)
{
    const int lda = (ta ? k : m) + 3, ldb = (tb ? n : k) + 1, ldc = m + 2;
    const size_t asz = (size_t)lda * (ta ? m : k), bsz = (size_t)ldb * (tb ? k : n),
                 csz = (size_t)ldc * n, off = 5;
    const size_t sa = asz + 7, sb = bsz + 2, sc = csz + 1; /* strides between products */
    const size_t na = off + sa * count, nb = off + sb * count, nc = off + sc * count;
    double *A = malloc(sizeof *A * na), *B = malloc(sizeof *B * nb), *C = malloc(sizeof *C * nc),
           *R = malloc(sizeof *R * nc), *Abs = malloc(sizeof *Abs * na),
           *Bbs = malloc(sizeof *Bbs * nb), *Bound = malloc(sizeof *Bound * nc);
    assert_true(A && B && C && R && Abs && Bbs && Bound);
    mg_rng r;
    mg_seed(&r, seed);
    const double eps = oracle_eps(dbl);
    for (size_t i = 0; i < na; ++i) {
        A[i] = dbl ? mg_uniform(&r) * 2 - 1 : (double)(float)(mg_uniform(&r) * 2 - 1);
        Abs[i] = fabs(A[i]);
    }
    for (size_t i = 0; i < nb; ++i) {
        B[i] = dbl ? mg_uniform(&r) * 2 - 1 : (double)(float)(mg_uniform(&r) * 2 - 1);
        Bbs[i] = fabs(B[i]);
    }
    for (size_t i = 0; i < nc; ++i)
        C[i] = beta == 0 ? NAN : dbl ? mg_uniform(&r) - 0.5 : (double)(float)(mg_uniform(&r) - 0.5);
    memcpy(R, C, sizeof *R * nc);
    const char cta = ta ? 'T' : 'N', ctb = tb ? 'T' : 'N';
    const double zero = 0, aalpha = fabs(alpha);
    for (int i = 0; i < count; ++i) {
        double *Ri = R + off + sc * i, *Bi = Bound + off + sc * i;
        dgemm_(&cta, &ctb, &m, &n, &k, &alpha, A + off + sa * i, &lda, B + off + sb * i, &ldb,
               &beta, Ri, &ldc);
        dgemm_(&cta, &ctb, &m, &n, &k, &aalpha, Abs + off + sa * i, &lda, Bbs + off + sb * i, &ldb,
               &zero, Bi, &ldc);
        for (int c = 0; c < n; ++c)
            for (int rr = 0; rr < m; ++rr) {
                const double c0 = beta == 0 ? 0 : fabs(beta * C[off + sc * i + (size_t)c * ldc + rr]);
                Bi[(size_t)c * ldc + rr] = 4.0 * (k + 2) * eps * (Bi[(size_t)c * ldc + rr] + c0);
            }
    }
    /* the device's buffers, in its precision */
    cl_context cl = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    void *ha = convert(A, na, dbl), *hb = convert(B, nb, dbl), *hc = convert(C, nc, dbl),
         *hc0 = convert(C, nc, dbl);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    cl_int err;
    cl_mem da = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, na * es, ha, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem db = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, nb * es, hb, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem dc = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, nc * es, hc, &err);
    assert_int_equal(err, CL_SUCCESS);
    const bcl_gemm_operand oa = {da, off, (size_t)lda, sa}, ob = {db, off, (size_t)ldb, sb},
                           oc = {dc, off, (size_t)ldc, sc};
    const size_t work_elems =
        bcl_gemm_work_elements(ctx, (size_t)m, (size_t)n, (size_t)k, (size_t)count);
    cl_mem work = NULL;
    if (work_elems) {
        work = clCreateBuffer(cl, CL_MEM_READ_WRITE, work_elems * es, NULL, &err);
        assert_int_equal(err, CL_SUCCESS);
    }
    /* with k in ranges twice on the same workspace (as the library's calls reuse it) */
    for (int round = 0; round < (work ? 2 : 1); ++round) {
        assert_int_equal(
            clEnqueueWriteBuffer(q, dc, CL_TRUE, 0, nc * es, hc0, 0, NULL, NULL), CL_SUCCESS);
        TU_STATUS(ctx, BCL_SUCCESS,
                  bcl_gemm_enqueue(ctx, q, "test", dbl, tensor, ta, tb, (size_t)m, (size_t)n,
                                   (size_t)k, (size_t)count, alpha, oa, ob, beta, oc, work,
                                   work_elems, NULL));
        assert_int_equal(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, nc * es, hc, 0, NULL, NULL),
                         CL_SUCCESS);
        for (size_t i = 0; i < nc; ++i) {
            const double got = oracle_get(hc, dbl, i);
            const size_t rel = i < off ? 0 : (i - off) % sc, col = rel / ldc, row = rel % ldc;
            const int inside = i >= off && rel < csz && (int)row < m && (int)col < n;
            if (!inside) { /* untouched: padding, gaps between products (NaN or as before) */
                const double was = oracle_get(hc0, dbl, i);
                if (!(isnan(was) ? isnan(got) : got == was))
                    fail_msg("gemm %c%c m=%d n=%d k=%d x%d: element %zu outside C changed", cta,
                             ctb, m, n, k, count, i);
                continue;
            }
            const double e = fabs(got - R[i]) / (Bound[i] > 0 ? Bound[i] : eps);
            if (!(e <= 1))
                fail_msg("gemm %c%c m=%d n=%d k=%d x%d (%s, %s, call %d): C(%zu, %zu) of product "
                         "%zu = %.17g, BLAS %.17g, %.3g of the bound",
                         cta, ctb, m, n, k, count, dbl ? "double" : "float",
                         tensor ? "tensor cores" : "portable", round + 1, row, col,
                         (i - off) / sc, got, R[i], e);
        }
    }
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
    if (work)
        clReleaseMemObject(work);
    free(ha);
    free(hb);
    free(hc);
    free(hc0);
    free(A);
    free(B);
    free(C);
    free(R);
    free(Abs);
    free(Bbs);
    free(Bound);
}

/* C := alpha op(A) op(B) + beta C and C's rows below m2 += alpha op(A2) op(B2) (depth k2) in one
 * launch (bcl_gemm_more, the Q^T application's halves) against BLAS dgemm twice, double, the
 * bound of check_gemm for the depth k + k2; rows from m2 on must equal the first product alone. */
static void check_gemm_more(bcl_context *ctx, int tensor, int ta, int tb, int m, int n, int k,
                            int m2, int k2, double alpha, double beta, uint64_t seed)
{
    const int rows2 = m2 < m ? m2 : m;
    const int lda = (ta ? k : m) + 1, ldb = (tb ? n : k) + 2, ldc = m + 3;
    const int lda2 = (ta ? k2 : rows2) + 2, ldb2 = (tb ? n : k2) + 1;
    const size_t na = (size_t)lda * (ta ? m : k), nb = (size_t)ldb * (tb ? k : n),
                 na2 = (size_t)lda2 * (ta ? rows2 : k2), nb2 = (size_t)ldb2 * (tb ? k2 : n),
                 nc = (size_t)ldc * n;
    double *A = malloc(sizeof *A * na), *B = malloc(sizeof *B * nb),
           *A2 = malloc(sizeof *A2 * (na2 + 1)), *B2 = malloc(sizeof *B2 * nb2), *C = malloc(sizeof *C * nc), *R = malloc(sizeof *R * nc),
           *Bound = malloc(sizeof *Bound * nc), *got = malloc(sizeof *got * nc);
    assert_true(A && B && A2 && B2 && C && R && Bound && got);
    mg_rng r;
    mg_seed(&r, seed);
    double *fill[4] = {A, B, A2, B2};
    const size_t sizes[4] = {na, nb, na2, nb2};
    for (int f = 0; f < 4; ++f)
        for (size_t i = 0; i < sizes[f]; ++i)
            fill[f][i] = mg_uniform(&r) * 2 - 1;
    for (size_t i = 0; i < nc; ++i)
        C[i] = beta == 0 ? NAN : mg_uniform(&r) - 0.5;
    /* the reference: both products into R's rows below m2, the first alone below them */
    const char cta = ta ? 'T' : 'N', ctb = tb ? 'T' : 'N';
    const double one = 1, zero = 0;
    memcpy(R, C, sizeof *R * nc);
    dgemm_(&cta, &ctb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, R, &ldc);
    if (rows2 > 0)
        dgemm_(&cta, &ctb, &rows2, &n, &k2, &alpha, A2, &lda2, B2, &ldb2, &one, R, &ldc);
    for (size_t i = 0; i < nc; ++i)
        Bound[i] = 4.0 * (k + k2 + 2) * oracle_eps(1) *
                   (fabs(alpha) * (double)(k + k2) + (beta == 0 ? 0 : fabs(beta * C[i])));
    (void)zero;
    cl_context cl = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    cl_int err;
    cl_mem dev[5];
    double *host[5] = {A, B, A2, B2, C};
    const size_t hsz[5] = {na, nb, na2, nb2, nc};
    for (int f = 0; f < 5; ++f) {
        dev[f] = clCreateBuffer(cl, CL_MEM_READ_WRITE | (hsz[f] ? CL_MEM_COPY_HOST_PTR : 0),
                                (hsz[f] ? hsz[f] : 1) * sizeof(double), hsz[f] ? host[f] : NULL,
                                &err);
        assert_int_equal(err, CL_SUCCESS);
    }
    const bcl_gemm_operand oa = {dev[0], 0, (size_t)lda, 0}, ob = {dev[1], 0, (size_t)ldb, 0},
                           oc = {dev[4], 0, (size_t)ldc, 0};
    const bcl_gemm_more more = {{dev[2], 0, (size_t)lda2, 0}, {dev[3], 0, (size_t)ldb2, 0},
                                (size_t)m2, (size_t)k2};
    TU_STATUS(ctx, BCL_SUCCESS,
              bcl_gemm_enqueue(ctx, q, "test", 1, tensor, ta, tb, (size_t)m, (size_t)n, (size_t)k,
                               1, alpha, oa, ob, beta, oc, NULL, 0, &more));
    assert_int_equal(clEnqueueReadBuffer(q, dev[4], CL_TRUE, 0, nc * sizeof(double), got, 0,
                                         NULL, NULL),
                     CL_SUCCESS);
    for (size_t i = 0; i < nc; ++i) {
        const size_t row = i % (size_t)ldc, col = i / (size_t)ldc;
        if ((int)row >= m) { /* padding: untouched */
            if (!(isnan(C[i]) ? isnan(got[i]) : got[i] == C[i]))
                fail_msg("gemm with a second product: padding (%zu, %zu) changed", row, col);
            continue;
        }
        const double e = fabs(got[i] - R[i]) / Bound[i];
        if (!(e <= 1))
            fail_msg("gemm %c%c m=%d n=%d k=%d + rows %d k2=%d (%s): C(%zu, %zu) = %.17g, BLAS "
                     "%.17g, %.3g of the bound",
                     cta, ctb, m, n, k, m2, k2, tensor ? "tensor cores" : "portable", row, col,
                     got[i], R[i], e);
    }
    for (int f = 0; f < 5; ++f)
        clReleaseMemObject(dev[f]);
    free(A);
    free(B);
    free(A2);
    free(B2);
    free(C);
    free(R);
    free(Bound);
    free(got);
}

/* Shapes below, at and across the tiles' edges (32-wide warps, 16-deep slices), every transpose,
 * batches of evenly spaced products, beta = 0 (C NaN before) and not; double in the build the
 * device takes (tensor cores on NVIDIA sm_80+, else portable) and in the portable one, every tile
 * (BATCHCL_GEMM_TILE), float in the default tile; bad arguments. */
static void test_gemm(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int shapes[][4] = {{1, 1, 1, 1},    {7, 5, 3, 2},     {33, 65, 17, 1},
                             {130, 70, 40, 3}, {64, 64, 16, 2}, {129, 31, 100, 1}};
    const int tensor = bcl_gemm_tensor_device(ctx);
    uint64_t seed = 11;
    for (int tile = 0; tile < (tu_quick() ? 1 : 3); ++tile) { /* each tile is a build */
        char tv[2] = {(char)('0' + tile), 0};
        setenv("BATCHCL_GEMM_TILE", tv, 1);
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh)
            for (int t = 0; t < 4; ++t) {
                const int *x = shapes[sh];
                const double alpha = t & 1 ? -1.25 : 1, beta = sh % 2 ? 0 : 0.5;
                check_gemm(ctx, 1, 0, t & 1, t >> 1, x[0], x[1], x[2], x[3], alpha, beta, ++seed);
                if (tensor)
                    check_gemm(ctx, 1, 1, t & 1, t >> 1, x[0], x[1], x[2], x[3], alpha, beta,
                               ++seed);
                if (tile == 0)
                    check_gemm(ctx, 0, 0, t & 1, t >> 1, x[0], x[1], x[2], x[3], alpha, beta,
                               ++seed);
            }
    }
    unsetenv("BATCHCL_GEMM_TILE");
    /* k in ranges whose sums a second launch adds (where the smallest tile leaves compute
     * units idle; forced here): ranges of whole slices, the last shorter, or of one slice */
    const int split_shapes[][5] = {{33, 65, 100, 2, 3}, {130, 70, 40, 1, 16}, {7, 5, 33, 3, 2}};
    for (size_t sh = 0; sh < sizeof split_shapes / sizeof split_shapes[0]; ++sh) {
        const int *x = split_shapes[sh];
        char sv[8];
        snprintf(sv, sizeof sv, "%d", x[4]);
        setenv("BATCHCL_GEMM_SPLITS", sv, 1);
        for (int t = 0; t < 4; ++t) {
            const double beta = t == 1 ? 0.5 : 0;
            check_gemm(ctx, 1, 0, t & 1, t >> 1, x[0], x[1], x[2], x[3], -0.75, beta, ++seed);
            if (tensor)
                check_gemm(ctx, 1, 1, t & 1, t >> 1, x[0], x[1], x[2], x[3], -0.75, beta, ++seed);
        }
        if (bcl_gemm_work_elements(ctx, (size_t)x[0], (size_t)x[1], (size_t)x[2], (size_t)x[3]) <
            (size_t)x[0] * x[1] * x[3] * 2)
            fail_msg("expected k split in ranges for m=%d n=%d k=%d", x[0], x[1], x[2]);
    }
    /* a second product over the first rows in the same launch: its rows ending inside a tile,
     * at a tile's edge, beyond C (clipped), none; ranges of k asked for but not taken */
    const int more_shapes[][5] = {{130, 70, 40, 65, 33}, {7, 5, 3, 7, 17},
                                  {129, 31, 100, 200, 16}, {96, 40, 20, 64, 48},
                                  {33, 9, 17, 0, 5}};
    for (size_t sh = 0; sh < sizeof more_shapes / sizeof more_shapes[0]; ++sh)
        for (int t = 0; t < 4; ++t) {
            const int *x = more_shapes[sh];
            const double beta = t == 1 ? 0 : 0.75;
            check_gemm_more(ctx, 0, t & 1, t >> 1, x[0], x[1], x[2], x[3], x[4], -1.5, beta,
                            ++seed);
            if (tensor)
                check_gemm_more(ctx, 1, t & 1, t >> 1, x[0], x[1], x[2], x[3], x[4], -1.5, beta,
                                ++seed);
        }
    unsetenv("BATCHCL_GEMM_SPLITS");
    /* the other product shapes (BATCHCL_GEMM_MMA, read once a context): their fragment layouts in
     * the portable build, and on the tensor cores where the device has the instruction (m8n8k4 on
     * sm_80 or later, m16n8kK on sm_90 or later) */
    static const char *const other_mma[] = {"m8n8k4", "m16n8k4", "m16n8k16"};
    for (size_t o = 0; o < sizeof other_mma / sizeof other_mma[0]; ++o) {
        setenv("BATCHCL_GEMM_MMA", other_mma[o], 1);
        bcl_context *c2 = tu_context();
        char want[32];
        snprintf(want, sizeof want, "mma.%s", other_mma[o]);
        assert_string_equal(bcl_gemm_mma_name(bcl_gemm_mma_k(c2)), want);
        for (int sh = 2; sh < 4; ++sh)
            for (int t = 0; t < 4; ++t) {
                const int *x = shapes[sh];
                check_gemm(c2, 1, 0, t & 1, t >> 1, x[0], x[1], x[2], x[3], 0.5, 0.25, ++seed);
                unsigned cc = 0;
                if (bcl_gemm_tensor_device(c2) &&
                    sscanf(c2->dev.architecture, "sm_%u", &cc) == 1 && (o == 0 || cc >= 90))
                    check_gemm(c2, 1, 1, t & 1, t >> 1, x[0], x[1], x[2], x[3], 0.5, 0.25, ++seed);
            }
        bcl_destroy(c2);
    }
    unsetenv("BATCHCL_GEMM_MMA");
    /* bad arguments: a leading dimension below the rows, the tensor build in float */
    cl_int err;
    cl_mem buf = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 4096, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    const bcl_gemm_operand small = {buf, 0, 3, 0}, ok = {buf, 0, 8, 0};
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT,
              bcl_gemm_enqueue(ctx, bcl_cl_queue(ctx), "test", 1, 0, 0, 0, 8, 8, 8, 1, 1.0, small,
                               ok, 0.0, ok, NULL, 0, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "leading dimensions 3, 8, 8"));
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT,
              bcl_gemm_enqueue(ctx, bcl_cl_queue(ctx), "test", 0, 1, 0, 0, 8, 8, 8, 1, 1.0, ok, ok,
                               0.0, ok, NULL, 0, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "tensor-core GEMM needs double precision"));
    const bcl_gemm_more more = {ok, small, 8, 8}; /* B2 is 8 x 8: leading dimension 3 < 8 */
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT,
              bcl_gemm_enqueue(ctx, bcl_cl_queue(ctx), "test", 1, 0, 0, 0, 8, 8, 8, 1, 1.0, ok, ok,
                               0.0, ok, NULL, 0, &more));
    assert_non_null(strstr(bcl_last_error(ctx), "second product"));
    const bcl_gemm_more more_ok = {ok, ok, 8, 8};
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT,
              bcl_gemm_enqueue(ctx, bcl_cl_queue(ctx), "test", 1, 0, 0, 0, 8, 8, 8, 2, 1.0, ok, ok,
                               0.0, ok, NULL, 0, &more_ok));
    assert_non_null(strstr(bcl_last_error(ctx), "needs one product"));
    clReleaseMemObject(buf);
    bcl_destroy(ctx);
}

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
#define HOOKED_TEST(f) cmocka_unit_test_teardown(f, clear_hooks)
    const struct CMUnitTest grid_clblast[] = {HOOKED_TEST(test_grid_clblast)};
    const struct CMUnitTest grid_kernel[] = {HOOKED_TEST(test_grid_kernel)};
    const struct CMUnitTest grid_device[] = {HOOKED_TEST(test_grid_device)};
    const struct CMUnitTest numerics[] = {HOOKED_TEST(test_ill_conditioned),
                                          HOOKED_TEST(test_scaled_blocks),
                                          HOOKED_TEST(test_variants),
                                          HOOKED_TEST(test_host_shares),
                                          HOOKED_TEST(test_failure_isolation)};
    const struct CMUnitTest api[] = {HOOKED_TEST(test_bad_arguments),
                                     HOOKED_TEST(test_clblast_failure),
                                     HOOKED_TEST(test_model),
                                     HOOKED_TEST(test_device_buffers),
                                     HOOKED_TEST(test_tuned_gemm),
                                     HOOKED_TEST(test_workspace_reuse)};
    const struct CMUnitTest gemm[] = {HOOKED_TEST(test_gemm)};
    int failed = 0, all = !strcmp(group, "all");
    if (all || !strcmp(group, "api"))
        failed += cmocka_run_group_tests_name("pcyclic api", api, NULL, NULL);
    if (all || !strcmp(group, "numerics"))
        failed += cmocka_run_group_tests_name("pcyclic numerics", numerics, NULL, NULL);
    if (all || !strcmp(group, "grid-kernel"))
        failed += cmocka_run_group_tests_name("pcyclic grid kernel", grid_kernel, NULL, NULL);
    if (all || !strcmp(group, "grid-device"))
        failed += cmocka_run_group_tests_name("pcyclic grid device", grid_device, NULL, NULL);
    if (all || !strcmp(group, "grid-clblast"))
        failed += cmocka_run_group_tests_name("pcyclic grid clblast", grid_clblast, NULL, NULL);
    if (all || !strcmp(group, "gemm"))
        failed += cmocka_run_group_tests_name("pcyclic gemm", gemm, NULL, NULL);
    return failed ? 1 : 0;
}
