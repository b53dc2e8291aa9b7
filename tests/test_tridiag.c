/* Tridiagonal solves (gtsv, ptsv) against LAPACK dgtsv / dptsv in double: every m from 1 to 300 and
 * 1000, 4097, 8192, every mapping, both precisions; singular and NaN systems mid-batch; device
 * buffers in both layouts; chunked transfers; bad arguments.
 * Usage: test_tridiag <group>, group one of grid-s, grid-d, api. */
#include "testutil.h"

#include <lapacke.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RES_LIMIT 30.0

/* A batch of tridiagonal systems in double: kind 0 = general, strictly diagonally dominant
 * (random signs); kind 1 = symmetric positive definite, generally not diagonally dominant:
 * T = L D L^T with L unit lower bidiagonal (multipliers in [-1, 1]) and D in [1, 2];
 * kind 2 = symmetric positive definite and ill-conditioned (a 1-D Laplacian with random
 * coefficients plus a 1e-3 shift). */
typedef struct {
    int m, nrhs, kind;
    size_t batch;
    double *dl, *d, *du, *e, *B;
} tri_set;

static tri_set make_set(int kind, int m, int nrhs, size_t batch, uint64_t seed)
{
    tri_set t = {m, nrhs, kind, batch, NULL, NULL, NULL, NULL, NULL};
    const size_t mm = (size_t)m;
    t.dl = calloc(batch * mm, sizeof(double));
    t.d = calloc(batch * mm, sizeof(double));
    t.du = calloc(batch * mm, sizeof(double));
    t.e = calloc(batch * (mm > 1 ? mm - 1 : 1), sizeof(double));
    t.B = calloc(batch * mm * (size_t)nrhs, sizeof(double));
    mg_rng r;
    mg_seed(&r, seed);
    for (size_t k = 0; k < batch; ++k) {
        double *dl = t.dl + k * mm, *d = t.d + k * mm, *du = t.du + k * mm;
        for (int i = 0; i < m; ++i) {
            if (kind == 0) {
                dl[i] = i > 0 ? 2 * mg_uniform(&r) - 1 : 0;
                du[i] = i < m - 1 ? 2 * mg_uniform(&r) - 1 : 0;
                d[i] = (fabs(dl[i]) + fabs(du[i]) + 0.1 + mg_uniform(&r)) * (mg_uniform(&r) < 0.5 ? -1 : 1);
            } else if (kind == 1) {
                /* d_i = D_i + l_{i-1}^2 D_{i-1}, e_i = l_i D_i, built row by row */
                const double Di = 1 + mg_uniform(&r), li = 2 * mg_uniform(&r) - 1;
                d[i] += Di;
                if (i < m - 1) {
                    du[i] = li * Di;
                    dl[i + 1] = du[i];
                    d[i + 1] = li * li * Di;
                }
            } else {
                const double off = i < m - 1 ? -(0.5 + mg_uniform(&r)) : 0;
                du[i] = off;
                if (i + 1 < m)
                    dl[i + 1] = off;
            }
        }
        if (kind == 2) /* diagonal = |neighbours| + a small shift: SPD, barely dominant */
            for (int i = 0; i < m; ++i)
                d[i] = (i > 0 ? fabs(dl[i]) : 0) + (i < m - 1 ? fabs(du[i]) : 0) + 1e-3 * (1 + mg_uniform(&r));
        for (int i = 0; i + 1 < m; ++i)
            t.e[k * (mm - 1) + i] = du[i];
        mg_vector(m * nrhs, &r, t.B + k * mm * (size_t)nrhs);
    }
    return t;
}

static void free_set(tri_set *t)
{
    free(t->dl);
    free(t->d);
    free(t->du);
    free(t->e);
    free(t->B);
}

static void *convert(const double *src, size_t count, int dbl)
{
    void *dst = tu_alloc(count, dbl);
    for (size_t i = 0; i < count; ++i)
        oracle_set(dst, dbl, i, src[i]);
    return dst;
}

/* LAPACK's solution in double (dgtsv with partial pivoting, or dptsv), from the working-precision
 * matrix; forward error of x relative to it */
static double lapack_forward_error(int m, int nrhs, int dbl, int sym, const void *dl, const void *d,
                                   const void *du, const void *b, const void *x, int *lapack_info)
{
    const size_t mm = (size_t)m;
    double *L = malloc(sizeof *L * mm), *D = malloc(sizeof *D * mm), *U = malloc(sizeof *U * mm),
           *X = malloc(sizeof *X * mm * (size_t)nrhs);
    for (int i = 0; i < m; ++i) {
        D[i] = oracle_get(d, dbl, (size_t)i);
        L[i] = i + 1 < m ? oracle_get(dl, dbl, (size_t)i + 1) : 0;
        U[i] = oracle_get(du, dbl, (size_t)i);
    }
    for (size_t i = 0; i < mm * (size_t)nrhs; ++i)
        X[i] = oracle_get(b, dbl, i);
    *lapack_info = sym ? LAPACKE_dptsv_work(LAPACK_COL_MAJOR, m, nrhs, D, U, X, m)
                       : LAPACKE_dgtsv_work(LAPACK_COL_MAJOR, m, nrhs, L, D, U, X, m);
    double fe = *lapack_info == 0 ? oracle_forward_error(m, nrhs, dbl, x, X) : INFINITY;
    free(L);
    free(D);
    free(U);
    free(X);
    return fe;
}

/* condition number estimate ||T||_1 ||T^-1||_1 through LAPACK (dgttrf + dgtcon) */
static double tri_cond(int m, int dbl, const void *dl, const void *d, const void *du)
{
    const size_t mm = (size_t)m;
    double *L = malloc(sizeof *L * mm), *D = malloc(sizeof *D * mm), *U = malloc(sizeof *U * mm),
           *U2 = calloc(mm, sizeof *U2);
    lapack_int *ipiv = malloc(sizeof *ipiv * mm);
    double anorm = 0;
    for (int i = 0; i < m; ++i) {
        D[i] = oracle_get(d, dbl, (size_t)i);
        L[i] = i + 1 < m ? oracle_get(dl, dbl, (size_t)i + 1) : 0;
        U[i] = oracle_get(du, dbl, (size_t)i);
    }
    for (int j = 0; j < m; ++j) { /* 1-norm: column sums */
        double col = fabs(D[j]) + (j + 1 < m ? fabs(L[j]) : 0) + (j > 0 ? fabs(U[j - 1]) : 0);
        anorm = col > anorm ? col : anorm;
    }
    double rcond = 0, *work = malloc(sizeof *work * 2 * mm);
    lapack_int *iwork = malloc(sizeof *iwork * mm);
    if (LAPACKE_dgttrf_work(m, L, D, U, U2, ipiv) == 0)
        LAPACKE_dgtcon_work('1', m, L, D, U, U2, ipiv, anorm, &rcond, work, iwork);
    free(work);
    free(iwork);
    free(L);
    free(D);
    free(U);
    free(U2);
    free(ipiv);
    return rcond > 0 ? 1 / rcond : INFINITY;
}

typedef struct {
    const char *name;
    bcl_mapping mapping;
    int rows; /* PCR rows per work-item */
    int vw;   /* SIMD lanes: -1 the device's width */
    int max_m;
} variant;

static const variant variants[] = {
    {"table", BCL_MAPPING_AUTO, 0, 0, 1 << 30},
    {"simd", BCL_MAPPING_SIMD, 0, 1, 1 << 30},
    {"simd-vector", BCL_MAPPING_SIMD, 0, -1, 1 << 30},
    {"pcr", BCL_MAPPING_COLLABORATIVE, 0, 0, 1024},
    {"chunks-3", BCL_MAPPING_HYBRID, 3, 0, 1 << 30},
    {"chunks-16", BCL_MAPPING_HYBRID, 16, 0, 1 << 30},
};

static void apply(bcl_context *ctx, const variant *v, int dbl)
{
    bcl_params p = {0};
    p.mapping = v->mapping;
    p.rows_per_work_item = v->rows;
    if (v->vw) {
        bcl_device_info d;
        bcl_device_info_get(ctx, &d);
        cl_uint w = dbl ? d.vector_width_double : d.vector_width_float;
        p.problems_per_work_item = v->vw > 0 ? v->vw : (w >= 8 ? 8 : w >= 4 ? 4 : w >= 2 ? 2 : 1);
    }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, v->mapping == BCL_MAPPING_AUTO ? NULL : &p));
}

/* Solve one set with the context's parameters (gtsv, or ptsv when sym) and check every system. */
static void check_set(bcl_context *ctx, const tri_set *t, int dbl, int sym, const char *variant_name)
{
    const int m = t->m, nrhs = t->nrhs;
    const size_t mm = (size_t)m, batch = t->batch, nb = mm * (size_t)nrhs, es = dbl ? 8 : 4;
    void *dl = convert(t->dl, batch * mm, dbl), *d = convert(t->d, batch * mm, dbl),
         *du = convert(t->du, batch * mm, dbl), *e = convert(t->e, batch * (mm > 1 ? mm - 1 : 1), dbl),
         *b = convert(t->B, batch * nb, dbl), *x = convert(t->B, batch * nb, dbl);
    int *info = calloc(batch, sizeof *info);
    bcl_status s;
    if (sym)
        s = dbl ? bcl_dptsv(ctx, m, nrhs, batch, d, m > 1 ? e : NULL, x, info)
                : bcl_sptsv(ctx, m, nrhs, batch, d, m > 1 ? e : NULL, x, info);
    else
        s = dbl ? bcl_dgtsv(ctx, m, nrhs, batch, dl, d, du, x, info)
                : bcl_sgtsv(ctx, m, nrhs, batch, dl, d, du, x, info);
    /* a forced variant may exceed what this device's kernels allow; the table's choice may not */
    const int forced = strcmp(variant_name, "table") != 0;
    if (forced && s == BCL_UNSUPPORTED_SIZE && m > 256) {
        free(dl);
        free(d);
        free(du);
        free(e);
        free(b);
        free(x);
        free(info);
        return;
    }
    if (s != BCL_SUCCESS)
        fail_msg("%s %s %s m=%d: %s: %s", variant_name, sym ? "ptsv" : "gtsv", dbl ? "double" : "single",
                 m, bcl_status_string(s), bcl_last_error(ctx));
    for (size_t k = 0; k < batch; ++k) {
        /* the library read e for ptsv: the residual uses dl/du made from the same e */
        const char *dlk = (char *)dl + k * mm * es, *dk = (char *)d + k * mm * es, *duk = (char *)du + k * mm * es,
                   *bk = (char *)b + k * nb * es, *xk = (char *)x + k * nb * es;
        int linfo;
        const double res = oracle_gtsv_residual(m, nrhs, dbl, dlk, dk, duk, bk, xk);
        const double fe = lapack_forward_error(m, nrhs, dbl, sym, dlk, dk, duk, bk, xk, &linfo);
        const double bound = RES_LIMIT * m * tri_cond(m, dbl, dlk, dk, duk) * oracle_eps(dbl);
        if (info[k] != 0 || !(res < RES_LIMIT) || linfo != 0 || !(fe <= bound))
            fail_msg("%s %s %s m=%d nrhs=%d system %zu: info %d, residual %.3g (limit %g), forward "
                     "error vs LAPACK %.3g (bound %.3g, LAPACK info %d); kernel: %s",
                     variant_name, sym ? "ptsv" : "gtsv", dbl ? "double" : "single", m, nrhs, k,
                     info[k], res, RES_LIMIT, fe, bound, linfo, bcl_last_kernel(ctx));
    }
    free(dl);
    free(d);
    free(du);
    free(e);
    free(b);
    free(x);
    free(info);
}

static void grid(int dbl)
{
    bcl_context *ctx = tu_context();
    int sizes[310], count = 0;
    for (int m = 1; m <= 300; ++m)
        sizes[count++] = m;
    sizes[count++] = 1000;
    sizes[count++] = 4097;
    sizes[count++] = 8192;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v) {
        apply(ctx, &variants[v], dbl);
        for (int i = 0; i < count; ++i) {
            const int m = sizes[i];
            if (m > variants[v].max_m)
                continue;
            const int nrhs = m % 7 == 3 ? 2 : 1;
            const size_t batch = m > 1000 ? 3 : 5;
            tri_set g = make_set(0, m, nrhs, batch, 17u * m + dbl);
            check_set(ctx, &g, dbl, 0, variants[v].name);
            free_set(&g);
            tri_set spd = make_set(1, m, nrhs, batch, 31u * m + dbl);
            check_set(ctx, &spd, dbl, 1, variants[v].name);
            free_set(&spd);
        }
    }
    bcl_destroy(ctx);
}

/* Ill-conditioned SPD systems: every mapping's solution is within LAPACK's forward-error bound
 * (kappa-scaled). Thomas is also backward stable here; PCR is not (each unknown comes from its own
 * reduced equation, so its residual grows like kappa eps), which the README states. */
static void test_ill_conditioned(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int sizes[] = {2, 3, 17, 64, 255, 1000};
    for (int dbl = 0; dbl < 2; ++dbl)
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v)
            for (int i = 0; i < 6; ++i) {
                const int m = sizes[i];
                const size_t batch = 4, mm = m, es = dbl ? 8 : 4;
                tri_set t = make_set(2, m, 1, batch, 3u + m);
                void *dl = convert(t.dl, batch * mm, dbl), *d = convert(t.d, batch * mm, dbl),
                     *du = convert(t.du, batch * mm, dbl), *e = convert(t.e, batch * (mm > 1 ? mm - 1 : 1), dbl),
                     *b = convert(t.B, batch * mm, dbl), *x = convert(t.B, batch * mm, dbl);
                int info[4];
                apply(ctx, &variants[v], dbl);
                const bcl_status st = dbl ? bcl_dptsv(ctx, m, 1, batch, d, e, x, info)
                                          : bcl_sptsv(ctx, m, 1, batch, d, e, x, info);
                /* a forced variant may exceed this device's kernel limits */
                const int skip = st == BCL_UNSUPPORTED_SIZE && variants[v].mapping != BCL_MAPPING_AUTO && m > 256;
                if (!skip)
                    TU_STATUS(ctx, BCL_SUCCESS, st);
                for (size_t k = 0; k < batch && !skip; ++k) {
                    const char *dlk = (char *)dl + k * mm * es, *dk = (char *)d + k * mm * es,
                               *duk = (char *)du + k * mm * es;
                    int linfo;
                    const double fe = lapack_forward_error(m, 1, dbl, 1, dlk, dk, duk, (char *)b + k * mm * es,
                                                           (char *)x + k * mm * es, &linfo);
                    const double bound = RES_LIMIT * m * tri_cond(m, dbl, dlk, dk, duk) * oracle_eps(dbl);
                    if (info[k] != 0 || linfo != 0 || !(fe <= bound))
                        fail_msg("%s %s m=%d system %zu: info %d, forward error %.3g, bound %.3g",
                                 variants[v].name, dbl ? "double" : "single", m, k, info[k], fe, bound);
                }
                free(dl);
                free(d);
                free(du);
                free(e);
                free(b);
                free(x);
                free_set(&t);
            }
    bcl_destroy(ctx);
}

static void test_grid_single(void **state)
{
    (void)state;
    grid(0);
}

static void test_grid_double(void **state)
{
    (void)state;
    grid(1);
}

/* A singular system (a zero row), one with NaN and one with a zero pivot mid-batch: their info is
 * set, their right-hand sides are untouched, and the neighbours are exactly what a clean batch
 * gives. */
static void test_failure_isolation(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    for (int dbl = 0; dbl < 2; ++dbl)
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v) {
            const int m = 77, nrhs = 2;
            const size_t batch = 23, mm = m, nb = mm * nrhs, es = dbl ? 8 : 4;
            tri_set t = make_set(0, m, nrhs, batch, 5);
            void *dl = convert(t.dl, batch * mm, dbl), *d = convert(t.d, batch * mm, dbl),
                 *du = convert(t.du, batch * mm, dbl), *x = convert(t.B, batch * nb, dbl),
                 *xclean = convert(t.B, batch * nb, dbl);
            int info[23], info_clean[23];
            apply(ctx, &variants[v], dbl);
            TU_STATUS(ctx, BCL_SUCCESS, dbl ? bcl_dgtsv(ctx, m, nrhs, batch, dl, d, du, xclean, info_clean)
                                            : bcl_sgtsv(ctx, m, nrhs, batch, dl, d, du, xclean, info_clean));
            /* 3: row 40 all zero (singular); 11: NaN on the diagonal at row 60; 19: d[0] = 0 with
             * nonzero neighbours, a zero first pivot for elimination without pivoting */
            oracle_set(dl, dbl, 3 * mm + 40, 0);
            oracle_set(d, dbl, 3 * mm + 40, 0);
            oracle_set(du, dbl, 3 * mm + 40, 0);
            oracle_set(d, dbl, 11 * mm + 60, NAN);
            oracle_set(d, dbl, 19 * mm + 0, 0);
            TU_STATUS(ctx, BCL_NUMERICAL_FAILURE, dbl ? bcl_dgtsv(ctx, m, nrhs, batch, dl, d, du, x, info)
                                                      : bcl_sgtsv(ctx, m, nrhs, batch, dl, d, du, x, info));
            for (size_t k = 0; k < batch; ++k) {
                const int bad = k == 3 || k == 11 || k == 19;
                void *bk = convert(t.B + k * nb, nb, dbl);
                if (k == 19 && info[k] == 0) {
                    /* d[0] = 0 is a zero pivot for Thomas and PCR, not for every elimination order
                     * (the chunked one pivots on modified rows): then it must be solved well */
                    const double res = oracle_gtsv_residual(m, nrhs, dbl, (char *)dl + k * mm * es, (char *)d + k * mm * es,
                                                    (char *)du + k * mm * es, bk, (char *)x + k * nb * es);
                    if (!(res < RES_LIMIT))
                        fail_msg("%s: system 19 solved with residual %.3g", variants[v].name, res);
                } else if (bad) {
                    if (!(info[k] > 0 && info[k] <= m))
                        fail_msg("%s: failed system %zu got info %d", variants[v].name, k, info[k]);
                    if (memcmp((char *)x + k * nb * es, bk, nb * es) != 0)
                        fail_msg("%s: failed system %zu had its right-hand sides changed", variants[v].name, k);
                } else {
                    assert_int_equal(info[k], 0);
                    if (memcmp((char *)x + k * nb * es, (char *)xclean + k * nb * es, nb * es) != 0)
                        fail_msg("%s: neighbour %zu changed by the failed systems", variants[v].name, k);
                }
                free(bk);
            }
            free(dl);
            free(d);
            free(du);
            free(x);
            free(xclean);
            free_set(&t);
        }
    bcl_destroy(ctx);
}

/* Device buffers, contiguous and interleaved, with offsets; gtsv and ptsv; the same results as the
 * host-pointer path. */
static void test_device_buffers(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    cl_context cl = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    for (int dbl = 0; dbl < 2; ++dbl)
        for (int sym = 0; sym < 2; ++sym)
            for (int layout = 0; layout < 2; ++layout) {
                const int m = 45, nrhs = 2;
                const size_t batch = 13, mm = m, nb = mm * nrhs, es = dbl ? 8 : 4, off = 3;
                const size_t noff = sym ? mm - 1 : mm;
                tri_set t = make_set(sym, m, nrhs, batch, 9);
                void *dl = convert(t.dl, batch * mm, dbl), *d = convert(t.d, batch * mm, dbl),
                     *du = convert(t.du, batch * mm, dbl), *e = convert(t.e, batch * (mm - 1), dbl),
                     *xh = convert(t.B, batch * nb, dbl);
                int info_h[13];
                TU_STATUS(ctx, BCL_SUCCESS,
                          sym ? (dbl ? bcl_dptsv(ctx, m, nrhs, batch, d, e, xh, info_h)
                                     : bcl_sptsv(ctx, m, nrhs, batch, d, e, xh, info_h))
                              : (dbl ? bcl_dgtsv(ctx, m, nrhs, batch, dl, d, du, xh, info_h)
                                     : bcl_sgtsv(ctx, m, nrhs, batch, dl, d, du, xh, info_h)));
                /* device copies in the requested layout, `off` elements in */
                const void *src[4] = {sym ? e : dl, d, sym ? e : du, NULL};
                const size_t per[4] = {sym ? noff : mm, mm, sym ? noff : mm, nb};
                void *dev_host[4];
                cl_mem buf[4];
                for (int a = 0; a < 4; ++a) {
                    const void *from = a == 3 ? convert(t.B, batch * nb, dbl) : src[a];
                    dev_host[a] = tu_alloc(batch * per[a] + off, dbl);
                    for (size_t k = 0; k < batch; ++k)
                        for (size_t i = 0; i < per[a]; ++i)
                            oracle_set(dev_host[a], dbl, off + (layout ? i * batch + k : k * per[a] + i),
                                       oracle_get(from, dbl, k * per[a] + i));
                    if (a == 3)
                        free((void *)from);
                    cl_int err;
                    buf[a] = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                            (batch * per[a] + off) * es, dev_host[a], &err);
                    assert_int_equal(err, CL_SUCCESS);
                }
                cl_int err;
                cl_mem dinfo = clCreateBuffer(cl, CL_MEM_READ_WRITE, (batch + off) * sizeof(int), NULL, &err);
                cl_event ev = NULL;
                const bcl_layout lay = layout ? BCL_LAYOUT_INTERLEAVED : BCL_LAYOUT_CONTIGUOUS;
                if (sym)
                    TU_STATUS(ctx, BCL_SUCCESS,
                              dbl ? bcl_dptsv_cl(ctx, m, nrhs, batch, lay, buf[1], off, buf[0], off, buf[3], off,
                                                 dinfo, off, 0, NULL, &ev)
                                  : bcl_sptsv_cl(ctx, m, nrhs, batch, lay, buf[1], off, buf[0], off, buf[3], off,
                                                 dinfo, off, 0, NULL, &ev));
                else
                    TU_STATUS(ctx, BCL_SUCCESS,
                              dbl ? bcl_dgtsv_cl(ctx, m, nrhs, batch, lay, buf[0], off, buf[1], off, buf[2], off,
                                                 buf[3], off, dinfo, off, 0, NULL, &ev)
                                  : bcl_sgtsv_cl(ctx, m, nrhs, batch, lay, buf[0], off, buf[1], off, buf[2], off,
                                                 buf[3], off, dinfo, off, 0, NULL, &ev));
                assert_non_null(ev);
                int info[13 + 3];
                clEnqueueReadBuffer(q, buf[3], CL_TRUE, 0, (batch * nb + off) * es, dev_host[3], 1, &ev, NULL);
                clEnqueueReadBuffer(q, dinfo, CL_TRUE, 0, sizeof info, info, 0, NULL, NULL);
                clReleaseEvent(ev);
                for (size_t k = 0; k < batch; ++k) {
                    assert_int_equal(info[off + k], 0);
                    for (size_t i = 0; i < nb; ++i) {
                        double got = oracle_get(dev_host[3], dbl, off + (layout ? i * batch + k : k * nb + i));
                        double want = oracle_get(xh, dbl, k * nb + i);
                        if (got != want)
                            fail_msg("%s %s layout %d: system %zu element %zu: %.17g, host path %.17g",
                                     sym ? "ptsv" : "gtsv", dbl ? "double" : "single", layout, k, i, got, want);
                    }
                }
                for (int a = 0; a < 4; ++a) {
                    clReleaseMemObject(buf[a]);
                    free(dev_host[a]);
                }
                clReleaseMemObject(dinfo);
                free(dl);
                free(d);
                free(du);
                free(e);
                free(xh);
                free_set(&t);
            }
    bcl_destroy(ctx);
}

/* Batches in chunks, on the copy path too, give the one-go results. */
static void test_chunked(void **state)
{
    (void)state;
    const int m = 130, nrhs = 1;
    const size_t batch = 500, mm = m;
    tri_set t = make_set(0, m, nrhs, batch, 77);
    double *ref = convert(t.B, batch * mm, 1);
    int *info = calloc(batch, sizeof *info);
    bcl_context *ctx = tu_context();
    TU_STATUS(ctx, BCL_SUCCESS, bcl_dgtsv(ctx, m, nrhs, batch, t.dl, t.d, t.du, ref, info));
    bcl_destroy(ctx);
    const char *zero_copy[] = {"1", "0", "0"}, *staging[] = {"0", "0", "1"};
    for (int mode = 0; mode < 3; ++mode) {
        setenv("BATCHCL_ZERO_COPY", zero_copy[mode], 1);
        setenv("BATCHCL_STAGING", staging[mode], 1);
        ctx = tu_context();
        unsetenv("BATCHCL_ZERO_COPY");
        unsetenv("BATCHCL_STAGING");
        bcl_params p = {0};
        p.chunk_problems = 37;
        p.queues = 3;
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
        double *x = convert(t.B, batch * mm, 1);
        TU_STATUS(ctx, BCL_SUCCESS, bcl_dgtsv(ctx, m, nrhs, batch, t.dl, t.d, t.du, x, info));
        assert_memory_equal(x, ref, batch * mm * sizeof *x);
        free(x);
        bcl_destroy(ctx);
    }
    free(ref);
    free(info);
    free_set(&t);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int m = 6;
    float dl[12] = {0}, d[12], du[12] = {0}, B[12];
    int info[2];
    for (int i = 0; i < 12; ++i)
        d[i] = 2;
    tu_poison(B, sizeof B);
    tu_poison(info, sizeof info);
#define BAD(expect, call)                                                                        \
    do {                                                                                         \
        TU_STATUS(ctx, expect, call);                                                            \
        assert_true(tu_is_poisoned(B, sizeof B) && tu_is_poisoned(info, sizeof info));           \
    } while (0)
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_sgtsv(NULL, m, 1, 2, dl, d, du, B, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv(ctx, -1, 1, 2, dl, d, du, B, info));
    assert_non_null(strstr(bcl_last_error(ctx), "m = -1"));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv(ctx, m, -1, 2, dl, d, du, B, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv(ctx, m, 1, 2, NULL, d, du, B, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 5 (dl)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv(ctx, m, 1, 2, dl, NULL, du, B, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv(ctx, m, 1, 2, dl, d, NULL, B, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv(ctx, m, 1, 2, dl, d, du, NULL, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv(ctx, m, 1, 2, dl, d, du, B, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 9 (info)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_sptsv(ctx, m, 1, 2, d, NULL, B, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 6 (e)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv(ctx, m, 1, 2, dl, d, du, d + 1, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv(ctx, m, 1, 2, dl, d, du, B, (int *)(void *)(B + 3)));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv(ctx, m, 1, (size_t)-1 / 8, dl, d, du, B, info));
    /* right-hand sides past the kernels' 32-bit index of a system's B (checked before any read) */
    BAD(BCL_UNSUPPORTED_SIZE, bcl_sgtsv(ctx, m, INT_MAX / m + 1, 1, dl, d, du, B, info));
    assert_non_null(strstr(bcl_last_error(ctx), "m * nrhs"));
    const int too_big = bcl_gtsv_max_m(ctx, 0) + 1;
    float *big = calloc((size_t)too_big, sizeof *big);
    BAD(BCL_UNSUPPORTED_SIZE, bcl_sgtsv(ctx, too_big, 1, 1, big, big, big, B, info));
    free(big);
    /* zero sizes: success at once, nothing touched */
    BAD(BCL_SUCCESS, bcl_sgtsv(ctx, 0, 1, 2, NULL, NULL, NULL, NULL, NULL));
    BAD(BCL_SUCCESS, bcl_sgtsv(ctx, m, 0, 2, dl, d, du, B, info));
    BAD(BCL_SUCCESS, bcl_sptsv(ctx, m, 1, 0, d, du, B, info));
    /* a 1x1 symmetric system needs no e */
    float one_d = 4, one_b = 2;
    int one_info;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_sptsv(ctx, 1, 1, 1, &one_d, NULL, &one_b, &one_info));
    assert_true(one_b == 0.5f && one_info == 0);
    /* device buffers */
    cl_int err;
    cl_mem small = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 16, NULL, &err);
    cl_mem big_buf = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 4096, NULL, &err);
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv_cl(ctx, m, 1, 2, BCL_LAYOUT_CONTIGUOUS, small, 0, big_buf, 0, big_buf, 0,
                                           big_buf, 0, big_buf, 0, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 6 (dl)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_sptsv_cl(ctx, m, 1, 2, BCL_LAYOUT_CONTIGUOUS, big_buf, 0, small, 4, big_buf, 0,
                                           big_buf, 0, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 8 (e)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv_cl(ctx, m, 1, 2, (bcl_layout)9, big_buf, 0, big_buf, 0, big_buf, 0,
                                           big_buf, 0, big_buf, 0, 0, NULL, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_sgtsv_cl(ctx, m, 1, 2, BCL_LAYOUT_CONTIGUOUS, big_buf, 0, big_buf, 0, big_buf, 0,
                                           big_buf, 0, NULL, 0, 0, NULL, NULL));
    clReleaseMemObject(small);
    clReleaseMemObject(big_buf);
    bcl_destroy(ctx);
#undef BAD
}

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
    const struct CMUnitTest grid_s[] = {cmocka_unit_test(test_grid_single)};
    const struct CMUnitTest grid_d[] = {cmocka_unit_test(test_grid_double)};
    const struct CMUnitTest api[] = {cmocka_unit_test(test_bad_arguments), cmocka_unit_test(test_failure_isolation),
                                     cmocka_unit_test(test_ill_conditioned),
                                     cmocka_unit_test(test_device_buffers), cmocka_unit_test_teardown(test_chunked, tu_clear_transfer_env)};
    int failed = 0, all = !strcmp(group, "all");
    if (all || !strcmp(group, "api"))
        failed += cmocka_run_group_tests_name("tridiag api", api, NULL, NULL);
    if (all || !strcmp(group, "grid-s"))
        failed += cmocka_run_group_tests_name("tridiag grid single", grid_s, NULL, NULL);
    if (all || !strcmp(group, "grid-d"))
        failed += cmocka_run_group_tests_name("tridiag grid double", grid_d, NULL, NULL);
    return failed ? 1 : 0;
}
