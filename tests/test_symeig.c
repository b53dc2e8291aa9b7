/* Householder tridiagonalization, divide and conquer, syevd and the solves built on them, against
 * LAPACK (dsytrd, dstedc, dsyevd) in double, with LAPACK-style scaled residuals.
 * Usage: test_symeig <group>, group one of sytrd, stedc, syevd, solve, api. */
#include "testutil.h"
#include "../src/internal.h" /* bcl_get_kernel: the local-memory sytrd, launched directly */

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT 30.0

static double mat_norm_inf(int n, const double *A)
{
    double norm = 0;
    for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int j = 0; j < n; ++j)
            s += fabs(A[i + (size_t)j * n]);
        norm = s > norm ? s : norm;
    }
    return norm;
}

/* ||Q^T Q - I||_max / (n eps) */
static double orthogonality(int n, const double *Q, double eps)
{
    double worst = 0;
    for (int j = 0; j < n; ++j)
        for (int l = 0; l < n; ++l) {
            double s = 0;
            for (int i = 0; i < n; ++i)
                s += Q[i + (size_t)j * n] * Q[i + (size_t)l * n];
            s = fabs(s - (j == l));
            worst = isnan(s) ? INFINITY : (s > worst ? s : worst);
        }
    return worst / (n * eps);
}

/* ||A V - V diag(w)||_inf / (||A||_inf n eps), A full symmetric */
static double eigen_residual(int n, const double *A, const double *w, const double *V, double eps)
{
    double worst = 0;
    for (int i = 0; i < n; ++i) {
        double row = 0;
        for (int j = 0; j < n; ++j) {
            double s = -w[j] * V[i + (size_t)j * n];
            for (int l = 0; l < n; ++l)
                s += A[i + (size_t)l * n] * V[l + (size_t)j * n];
            row += fabs(s);
        }
        worst = isnan(row) ? INFINITY : (row > worst ? row : worst);
    }
    const double anorm = mat_norm_inf(n, A);
    return anorm > 0 ? worst / (anorm * n * eps) : worst;
}

static void *to_prec(const double *src, size_t count, int dbl)
{
    void *dst = tu_alloc(count, dbl);
    for (size_t i = 0; i < count; ++i)
        oracle_set(dst, dbl, i, src[i]);
    return dst;
}

static double *to_double(const void *src, size_t count, int dbl)
{
    double *dst = malloc(sizeof *dst * (count ? count : 1));
    for (size_t i = 0; i < count; ++i)
        dst[i] = oracle_get(src, dbl, i);
    return dst;
}

/* ---- matrices ---- */

typedef enum { SP_RANDOM, SP_CLUSTERED, SP_REPEATED, SP_GRADED, SP_TINY, SP_HUGE, SP_COUNT } spectrum;
static const char *spectrum_names[] = {"random", "clustered", "repeated", "graded", "tiny norm",
                                       "huge norm"};

/* a symmetric matrix (full storage) of the given spectrum class */
static void make_symmetric(spectrum sp, int n, mg_rng *r, double *A)
{
    double *lam = malloc(sizeof *lam * (size_t)n);
    for (int i = 0; i < n; ++i) {
        switch (sp) {
        case SP_RANDOM: lam[i] = 2 * mg_uniform(r) - 1; break;
        case SP_CLUSTERED: lam[i] = 1 + 1e-6 * mg_uniform(r) * (i % 3 == 0 ? 1 : 0) + (i % 3 == 2 ? 5 : 0); break;
        case SP_REPEATED: lam[i] = (double)(i % 3) - 1; break;
        case SP_GRADED: lam[i] = pow(10.0, -8.0 * i / (n > 1 ? n - 1 : 1)) * (i % 2 ? -1 : 1); break;
        case SP_TINY: lam[i] = 1e-25 * (2 * mg_uniform(r) - 1); break;
        case SP_HUGE: lam[i] = 1e25 * (2 * mg_uniform(r) - 1); break;
        case SP_COUNT: break;
        }
    }
    if (mg_from_spectrum(n, lam, r, A) != 0)
        fail_msg("generator failed");
    free(lam);
}

/* ---- sytrd: every n, every mapping ---- */

typedef struct {
    const char *name;
    bcl_mapping mapping;
    int vw; /* -1: the device's width */
} variant;

static const variant variants[] = {{"table", BCL_MAPPING_AUTO, 0},
                                   {"simd", BCL_MAPPING_SIMD, 1},
                                   {"simd-vector", BCL_MAPPING_SIMD, -1},
                                   {"collaborative", BCL_MAPPING_COLLABORATIVE, 0}};

static void apply(bcl_context *ctx, const variant *v, int dbl)
{
    bcl_params p = {0};
    p.mapping = v->mapping;
    if (v->vw) {
        bcl_device_info d;
        bcl_device_info_get(ctx, &d);
        cl_uint w = dbl ? d.vector_width_double : d.vector_width_float;
        p.problems_per_work_item = v->vw > 0 ? v->vw : (w >= 8 ? 8 : w >= 4 ? 4 : w >= 2 ? 2 : 1);
    }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, v->mapping == BCL_MAPPING_AUTO ? NULL : &p));
}

/* Every n to FULL_GRID_MAX in the release pass; beyond it, and everywhere under
 * BATCHCL_TEST_QUICK (the sanitizer pass), the small ones, the powers of two and their neighbours
 * (the kernels' size buckets, loop and padding boundaries) and the largest. The bound keeps the
 * suite's time independent of the device: PoCL reports a core's L2 cache as local memory, so a
 * CPU with 2 MiB of it takes syevd to n = 713 in float, and every n to there took 15-17 minutes of
 * the release pass (the reference matrices cost O(n^3) each). */
#define FULL_GRID_MAX 256
static int in_grid(int n, int max_n)
{
    if ((!tu_quick() && n <= FULL_GRID_MAX) || n <= 5 || n == max_n)
        return 1;
    for (int p = 8; p <= 4 * max_n; p *= 2)
        if (n >= p - 1 && n <= p + 1)
            return 1;
    return 0;
}

/* The collaborative local-memory sytrd (NT work-items on a matrix held in local memory, VW = 1),
 * launched directly: the library takes it only where the rows-in-registers kernel does not fit
 * (local memory or the work-group limit: not on a CPU device), so no parameter forces it. Q, d
 * and e of `batch` problems, as bcl_xsytrd gives them. */
static void sytrd_local_kernel(bcl_context *ctx, int nt, int n, size_t batch, const void *A,
                               void *Q, void *d, void *e, int dbl)
{
    const size_t es = dbl ? 8 : 4, nn = (size_t)n * n, ne = (size_t)(n > 1 ? n - 1 : 1);
    char options[64];
    snprintf(options, sizeof options, "-DNT=%d -DVW=1%s", nt, dbl ? " -DBCL_DOUBLE" : "");
    bcl_kernel_entry *k;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_get_kernel(ctx, "sytrd.cl", options, "sytrd", &k));
    cl_context cl = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    cl_int err, e1, e2, e3;
    cl_mem dA = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nn * batch * es,
                               (void *)A, &err);
    cl_mem dQ = clCreateBuffer(cl, CL_MEM_WRITE_ONLY, nn * batch * es, NULL, &e1);
    cl_mem dD = clCreateBuffer(cl, CL_MEM_WRITE_ONLY, (size_t)n * batch * es, NULL, &e2);
    cl_mem dE = clCreateBuffer(cl, CL_MEM_WRITE_ONLY, ne * batch * es, NULL, &e3);
    assert_true(err == CL_SUCCESS && e1 == CL_SUCCESS && e2 == CL_SUCCESS && e3 == CL_SUCCESS);
    const cl_ulong zero = 0, stride = batch;
    const cl_uint count = (cl_uint)batch;
    const int nrhs = 0, mode = 1; /* SYTRD_FORM_Q */
    const cl_mem none = NULL;
    const struct {
        size_t size;
        const void *value;
    } args[] = {{sizeof dA, &dA},     {sizeof zero, &zero},   {sizeof dQ, &dQ},   {sizeof zero, &zero},
                {sizeof dD, &dD},     {sizeof zero, &zero},   {sizeof dE, &dE},   {sizeof zero, &zero},
                {sizeof none, &none}, {sizeof zero, &zero},   {sizeof none, &none}, {sizeof zero, &zero},
                {sizeof n, &n},       {sizeof nrhs, &nrhs},   {sizeof count, &count}, {sizeof stride, &stride},
                {sizeof mode, &mode}, {sizeof none, &none},   {(nn + 5 * (size_t)n + 4) * es, NULL}};
    for (cl_uint a = 0; a < sizeof args / sizeof args[0]; ++a)
        assert_int_equal(clSetKernelArg(k->kernel, a, args[a].size, args[a].value), CL_SUCCESS);
    const size_t local = (size_t)nt, global = batch * (size_t)nt;
    assert_int_equal(clEnqueueNDRangeKernel(q, k->kernel, 1, NULL, &global, &local, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(q, dQ, CL_TRUE, 0, nn * batch * es, Q, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(q, dD, CL_TRUE, 0, (size_t)n * batch * es, d, 0, NULL, NULL),
                     CL_SUCCESS);
    if (n > 1)
        assert_int_equal(clEnqueueReadBuffer(q, dE, CL_TRUE, 0, ne * batch * es, e, 0, NULL, NULL),
                         CL_SUCCESS);
    clReleaseMemObject(dA);
    clReleaseMemObject(dQ);
    clReleaseMemObject(dD);
    clReleaseMemObject(dE);
}

/* sytrd on `batch` problems (A in double, rounded to the precision) through the API (as the
 * context's parameters choose), or through the local-memory kernel with local_nt work-items a
 * matrix: ||A - Q T Q^T||, ||Q^T Q - I|| and T's eigenvalues against those of LAPACK dsytrd's T,
 * all scaled; `what` names the case */
static void check_sytrd(bcl_context *ctx, const char *what, int local_nt, int n, size_t batch,
                        const double *A, int dbl)
{
    const size_t nn = (size_t)n * n;
    void *Ap = to_prec(A, nn * batch, dbl), *Q = tu_alloc(nn * batch, dbl),
         *d = tu_alloc((size_t)n * batch, dbl), *e = tu_alloc((size_t)n * batch, dbl);
    if (local_nt)
        sytrd_local_kernel(ctx, local_nt, n, batch, Ap, Q, d, e, dbl);
    else
        TU_STATUS(ctx, BCL_SUCCESS, dbl ? bcl_dsytrd(ctx, n, batch, Ap, Q, d, e)
                                        : bcl_ssytrd(ctx, n, batch, Ap, Q, d, e));
    const double eps = oracle_eps(dbl);
    for (size_t k = 0; k < batch; ++k) {
        double *a = to_double((char *)Ap + k * nn * (dbl ? 8 : 4), nn, dbl),
               *q = to_double((char *)Q + k * nn * (dbl ? 8 : 4), nn, dbl),
               *dk = to_double((char *)d + k * n * (dbl ? 8 : 4), (size_t)n, dbl),
               *ek = to_double((char *)e + k * (n - 1 + (n == 0)) * (dbl ? 8 : 4), (size_t)(n - 1), dbl);
        /* ||A - Q T Q^T|| */
        double worst = 0;
        for (int i = 0; i < n; ++i) {
            double row = 0;
            for (int j = 0; j < n; ++j) {
                double s = 0;
                for (int l = 0; l < n; ++l) {
                    double tq = dk[l] * q[j + (size_t)l * n];
                    if (l > 0)
                        tq += ek[l - 1] * q[j + (size_t)(l - 1) * n];
                    if (l + 1 < n)
                        tq += ek[l] * q[j + (size_t)(l + 1) * n];
                    s += q[i + (size_t)l * n] * tq;
                }
                row += fabs(a[i + (size_t)j * n] - s);
            }
            worst = row > worst ? row : worst;
        }
        const double recon = worst / (mat_norm_inf(n, a) * n * eps);
        const double orth = orthogonality(n, q, eps);
        /* T is similar to A: its eigenvalues (dsterf in double) against those of
         * LAPACK dsytrd's T. (T itself is not compared entry by entry: its trailing
         * entries are not well-conditioned functions of A.) */
        double *la = malloc(sizeof *la * nn), *ld = malloc(sizeof *ld * n),
               *le = malloc(sizeof *le * (n + 1)), *tau = malloc(sizeof *tau * (n + 1)),
               *od = malloc(sizeof *od * n), *oe = malloc(sizeof *oe * (n + 1));
        memcpy(la, a, nn * sizeof *la);
        memcpy(od, dk, n * sizeof *od);
        if (n > 1)
            memcpy(oe, ek, (n - 1) * sizeof *oe);
        if (LAPACKE_dsytrd(LAPACK_COL_MAJOR, 'L', n, la, n, ld, le, tau) != 0 ||
            LAPACKE_dsterf(n, ld, le) != 0 || LAPACKE_dsterf(n, od, oe) != 0)
            fail_msg("LAPACK dsytrd / dsterf failed");
        double dev = 0;
        for (int i = 0; i < n; ++i)
            dev = fmax(dev, fabs(od[i] - ld[i]));
        const double devs = dev / (mat_norm_inf(n, a) * n * eps);
        if (!(recon < LIMIT) || !(orth < LIMIT) || !(devs < LIMIT))
            fail_msg("sytrd %s %s n=%d problem %zu: ||A - QTQ^T|| %.3g, ||Q^TQ - I|| "
                     "%.3g, eigenvalues of T vs LAPACK's %.3g (limit %g); kernel: %s",
                     what, dbl ? "double" : "single", n, k, recon, orth,
                     devs, LIMIT, local_nt ? "the local-memory sytrd" : bcl_last_kernel(ctx));
        free(a);
        free(q);
        free(dk);
        free(ek);
        free(la);
        free(ld);
        free(le);
        free(tau);
        free(od);
        free(oe);
    }
    free(Ap);
    free(Q);
    free(d);
    free(e);
}

static void test_sytrd(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    for (int dbl = 0; dbl < 2; ++dbl)
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v)
            for (int n = 1; n <= 64; ++n) {
                if (!in_grid(n, 64) || (tu_quick() && v > 0 && n != 1 && n != 2 && n != 3 && n != 17 && n != 33 && n != 64))
                    continue; /* quick: the forced variants at fewer sizes (each is a compile) */
                const size_t batch = 3, nn = (size_t)n * n;
                double *A = malloc(sizeof *A * nn * batch);
                mg_rng r;
                mg_seed(&r, 11u * n + dbl);
                for (size_t k = 0; k < batch; ++k)
                    make_symmetric(SP_RANDOM, n, &r, A + k * nn);
                apply(ctx, &variants[v], dbl);
                check_sytrd(ctx, variants[v].name, 0, n, batch, A, dbl);
                free(A);
            }
    bcl_destroy(ctx);
}

/* ---- stedc: tridiagonal classes ---- */

typedef enum { TR_RANDOM, TR_WILKINSON_GLUED, TR_ZERO_OFF, TR_DIAGONAL_REPEATED, TR_TOEPLITZ, TR_GRADED, TR_GRADED_2_100, TR_GRADED_2_900, TR_COUNT } tri_class;
static const char *tri_names[] = {"random", "glued Wilkinson", "zero off-diagonals",
                                  "diagonal, repeated", "Toeplitz (2,-1)", "graded",
                                  "graded to 2^-100", "graded to 2^-900"};

static void make_tridiagonal(tri_class c, int n, mg_rng *r, double *d, double *e)
{
    for (int i = 0; i < n; ++i) {
        switch (c) {
        case TR_RANDOM:
            d[i] = 2 * mg_uniform(r) - 1;
            e[i] = 2 * mg_uniform(r) - 1;
            break;
        case TR_WILKINSON_GLUED: { /* W21+ blocks (|10 - j|) glued by 1e-8 */
            const int j = i % 21;
            d[i] = fabs(10.0 - j);
            e[i] = (j == 20) ? 1e-8 : 1.0;
            break;
        }
        case TR_ZERO_OFF:
            d[i] = 2 * mg_uniform(r) - 1;
            e[i] = (i % 4 == 3) ? 0.0 : 2 * mg_uniform(r) - 1;
            break;
        case TR_DIAGONAL_REPEATED:
            d[i] = (double)(i % 3);
            e[i] = 0;
            break;
        case TR_TOEPLITZ:
            d[i] = 2;
            e[i] = -1;
            break;
        case TR_GRADED:
            d[i] = pow(10.0, -6.0 * i / (n > 1 ? n - 1 : 1));
            e[i] = 0.5 * pow(10.0, -6.0 * (i + 0.5) / (n > 1 ? n - 1 : 1));
            break;
        case TR_GRADED_2_100: /* the merges' blocks lie far below T's scale (float: near its */
        case TR_GRADED_2_900: /* underflow threshold; double: 2^-900) */
        {
            const double span = c == TR_GRADED_2_100 ? 100 : 900, g = span / (n > 1 ? n - 1 : 1);
            d[i] = ldexp(1 + 0.37 * sin(i), -(int)(g * i));
            e[i] = ldexp(0.5 + 0.1 * cos(i), -(int)(g * (i + 0.5)));
            break;
        }
        case TR_COUNT:
            break;
        }
    }
}

static void check_stedc(bcl_context *ctx, tri_class c, int n, int dbl)
{
    const size_t batch = 3, nn = (size_t)n * n, es = dbl ? 8 : 4;
    double *d = malloc(sizeof *d * n * batch), *e = malloc(sizeof *e * (n + 1) * batch);
    mg_rng r;
    mg_seed(&r, 7u * n + c);
    for (size_t k = 0; k < batch; ++k)
        make_tridiagonal(c, n, &r, d + k * n, e + k * (n + 1));
    /* the library's e has n-1 entries per problem */
    double *e_lib = malloc(sizeof *e_lib * (n > 1 ? n - 1 : 1) * batch);
    for (size_t k = 0; k < batch; ++k)
        for (int i = 0; i + 1 < n; ++i)
            e_lib[k * (n - 1) + i] = e[k * (n + 1) + i];
    void *dp = to_prec(d, (size_t)n * batch, dbl), *ep = to_prec(e_lib, (size_t)(n > 1 ? n - 1 : 0) * batch, dbl),
         *Z = tu_alloc(nn * batch, dbl);
    int info[3];
    TU_STATUS(ctx, BCL_SUCCESS, dbl ? bcl_dstedc(ctx, n, batch, dp, ep, Z, info) : bcl_sstedc(ctx, n, batch, dp, ep, Z, info));
    const double eps = oracle_eps(dbl);
    for (size_t k = 0; k < batch; ++k) {
        assert_int_equal(info[k], 0);
        /* T from the working-precision values the library had */
        double *T = calloc(nn, sizeof *T), *ld = malloc(sizeof *ld * n), *le = malloc(sizeof *le * (n + 1)),
               *lz = malloc(sizeof *lz * nn);
        for (int i = 0; i < n; ++i) {
            ld[i] = dbl ? d[k * n + i] : (double)(float)d[k * n + i]; /* rounded like the input */
            T[i + (size_t)i * n] = ld[i];
            if (i + 1 < n) {
                le[i] = dbl ? e_lib[k * (n - 1) + i] : (double)(float)e_lib[k * (n - 1) + i];
                T[i + 1 + (size_t)i * n] = T[i + (size_t)(i + 1) * n] = le[i];
            }
        }
        const int linfo = LAPACKE_dstedc(LAPACK_COL_MAJOR, 'I', n, ld, le, lz, n);
        double *w = to_double((char *)dp + k * n * es, (size_t)n, dbl), *z = to_double((char *)Z + k * nn * es, nn, dbl);
        const double tnorm = mat_norm_inf(n, T);
        double dev = 0;
        for (int i = 0; i < n; ++i)
            dev = fmax(dev, fabs(w[i] - ld[i]));
        const double devs = tnorm > 0 ? dev / (tnorm * n * eps) : dev;
        const double res = eigen_residual(n, T, w, z, eps), orth = orthogonality(n, z, eps);
        int ascending = 1;
        for (int i = 0; i + 1 < n; ++i)
            ascending &= w[i] <= w[i + 1];
        if (linfo != 0 || !ascending || !(devs < LIMIT) || !(res < LIMIT) || !(orth < LIMIT))
            fail_msg("stedc %s %s n=%d problem %zu: eigenvalues vs LAPACK %.3g, ||TZ - ZL|| %.3g, "
                     "||Z^TZ - I|| %.3g (limit %g), ascending %d",
                     tri_names[c], dbl ? "double" : "single", n, k, devs, res, orth, LIMIT, ascending);
        free(T);
        free(ld);
        free(le);
        free(lz);
        free(w);
        free(z);
    }
    free(d);
    free(e);
    free(e_lib);
    free(dp);
    free(ep);
    free(Z);
}

static void test_stedc(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    for (int dbl = 0; dbl < 2; ++dbl) {
        for (int n = 1; n <= 64; ++n)
            if (in_grid(n, 64))
                check_stedc(ctx, TR_RANDOM, n, dbl);
        const int sizes[] = {2, 3, 7, 21, 42, 64};
        for (int c = 1; c < TR_COUNT; ++c)
            for (int s = 0; s < 6; ++s)
                check_stedc(ctx, (tri_class)c, sizes[s], dbl);
    }
    bcl_destroy(ctx);
}

/* ---- syevd: spectrum classes, every n up to the device's maximum ---- */

/* syevd on `batch` problems (A in double, rounded to the precision), with the context's
 * parameters: info, ascending eigenvalues within LAPACK's bound of dsyevd's, ||A V - V L|| and
 * ||V^T V - I|| scaled; `what` names the case */
static void check_syevd_batch(bcl_context *ctx, const char *what, int n, int dbl, size_t batch,
                              const double *A)
{
    const size_t nn = (size_t)n * n, es = dbl ? 8 : 4;
    void *Ap = to_prec(A, nn * batch, dbl), *W = tu_alloc((size_t)n * batch, dbl),
         *V = tu_alloc(nn * batch, dbl);
    int *info = malloc(sizeof *info * batch);
    TU_STATUS(ctx, BCL_SUCCESS, dbl ? bcl_dsyevd(ctx, n, batch, Ap, W, V, info)
                                    : bcl_ssyevd(ctx, n, batch, Ap, W, V, info));
    const double eps = oracle_eps(dbl);
    for (size_t k = 0; k < batch; ++k) {
        double *a = to_double((char *)Ap + k * nn * es, nn, dbl),
               *w = to_double((char *)W + k * n * es, (size_t)n, dbl),
               *v = to_double((char *)V + k * nn * es, nn, dbl);
        double *la = malloc(sizeof *la * nn), *lw = malloc(sizeof *lw * n);
        memcpy(la, a, nn * sizeof *la);
        const int linfo = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', n, la, n, lw);
        /* LAPACK's eigenvalue bound: |w_i - lambda_i| <= p(n) eps ||A|| */
        const double anorm = mat_norm_inf(n, a);
        double dev = 0;
        for (int i = 0; i < n; ++i)
            dev = fmax(dev, fabs(w[i] - lw[i]));
        const double devs = anorm > 0 ? dev / (anorm * n * eps) : dev;
        const double res = eigen_residual(n, a, w, v, eps), orth = orthogonality(n, v, eps);
        int ascending = 1;
        for (int i = 0; i + 1 < n; ++i)
            ascending &= w[i] <= w[i + 1];
        if (info[k] != 0 || linfo != 0 || !ascending || !(devs < LIMIT) || !(res < LIMIT) ||
            !(orth < LIMIT))
            fail_msg("syevd %s %s n=%d problem %zu: info %d, eigenvalues vs LAPACK dsyevd %.3g, "
                     "||AV - VL|| %.3g, ||V^TV - I|| %.3g (limit %g), ascending %d; kernel: %s",
                     what, dbl ? "double" : "single", n, k, info[k], devs, res, orth, LIMIT,
                     ascending, bcl_last_kernel(ctx));
        free(a);
        free(w);
        free(v);
        free(la);
        free(lw);
    }
    free(Ap);
    free(W);
    free(V);
    free(info);
}

static void check_syevd(bcl_context *ctx, spectrum sp, int n, int dbl, size_t batch)
{
    const size_t nn = (size_t)n * n;
    double *A = malloc(sizeof *A * nn * batch);
    mg_rng r;
    mg_seed(&r, 131u * n + 17u * sp + dbl);
    for (size_t k = 0; k < batch; ++k)
        make_symmetric(sp, n, &r, A + k * nn);
    check_syevd_batch(ctx, spectrum_names[sp], n, dbl, batch, A);
    free(A);
}

static void test_syevd(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    for (int dbl = 0; dbl < 2; ++dbl) {
        const int max_n = bcl_syevd_max_n(ctx, dbl);
        assert_true(max_n >= 64);
        for (int n = 1; n <= max_n; ++n)
            if (in_grid(n, max_n))
                check_syevd(ctx, SP_RANDOM, n, dbl, 2);
        const int sizes[] = {1, 2, 3, 5, 16, 31, 33, 64, max_n};
        for (int sp = 1; sp < SP_COUNT; ++sp)
            for (int s = 0; s < 9; ++s)
                check_syevd(ctx, (spectrum)sp, sizes[s], dbl, 3);
    }
    bcl_destroy(ctx);
}

/* ---- sytrd and syevd: columns tiny beside the matrix ---- */

/* Blocks of 4 on the diagonal (the last one shorter), their types taken in turn from `kind`:
 *  0: ordinary, entries uniform in [-1, 1);
 *  1: diagonal entries 1 + i + u/4 (row i), the block's first column coupled at c 2^tiny;
 *  2: as 1 with a zero first coupling (alpha = 0), the others at c 2^tiny and c 2^flush in turn;
 *  3: as 1 with every coupling at c 2^flush;
 * |c| in [1, 2), random signs. The squares of c 2^tiny are subnormal and those of c 2^flush
 * underflow to zero, while the matrix's norm is ordinary, so that the reduction meets these
 * columns as they are (no scaling of the whole matrix): a plain sum of squares loses the norm of
 * such a column, and with it the reflector's orthogonality. */
static void make_tiny_columns(int n, int kind, int tiny, int flush, mg_rng *r, double *A)
{
    memset(A, 0, sizeof *A * (size_t)n * n);
    for (int b0 = 0, b = 0; b0 < n; b0 += 4, ++b) {
        const int b1 = b0 + 4 < n ? b0 + 4 : n, type = (b + kind) % 4;
        for (int j = b0; j < b1; ++j)
            for (int i = j; i < b1; ++i) {
                double x;
                if (type == 0)
                    x = 2 * mg_uniform(r) - 1;
                else if (i == j)
                    x = 1 + i + 0.25 * mg_uniform(r);
                else if (j > b0 || (type == 2 && i == b0 + 1))
                    x = 0;
                else {
                    const double c = (1 + mg_uniform(r)) * (mg_uniform(r) < 0.5 ? -1 : 1);
                    x = ldexp(c, type == 3 || (type == 2 && i % 2 != b0 % 2) ? flush : tiny);
                }
                A[i + (size_t)j * n] = A[j + (size_t)i * n] = x;
            }
    }
}

/* Every mapping of sytrd (the table's, SIMD with and without vector lanes, the rows-in-registers
 * kernel with one row and with several rows a work-item, and the local-memory kernel launched
 * directly), then syevd through each, on batches that put such matrices beside ordinary ones (in
 * the lanes of one vector too): couplings at 2^-530 and 2^-600 in double, 2^-70 and 2^-80 in
 * single precision; and subnormal ones, 2^-1060 and 2^-1070 in double, 2^-140 and 2^-146 in
 * single (the device may flush those to zero), where beta and tau come from the scaled column
 * (until the thirty-sixth session from the subnormal beta: syevd's eigenvalues off by 1e-7
 * relative at 3e-320 in double). */
static void test_sytrd_tiny_columns(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    for (int pass = 0; pass < 4; ++pass) {
        const int dbl = pass % 2, subnormal = pass / 2;
        const int tiny = subnormal ? (dbl ? -1060 : -140) : dbl ? -530 : -70;
        const int flush = subnormal ? (dbl ? -1070 : -146) : dbl ? -600 : -80, sizes[] = {4, 17};
        for (int s = 0; s < 2; ++s) {
            const int n = sizes[s];
            const size_t batch = 5, nn = (size_t)n * n;
            double *A = malloc(sizeof *A * nn * batch);
            mg_rng r;
            mg_seed(&r, 7u * n + (unsigned)pass);
            for (size_t k = 0; k < batch; ++k) /* kinds 1, 2, 3, 0, 1: n = 4 is one block */
                make_tiny_columns(n, (int)(k + 1) % 4, tiny, flush, &r, A + k * nn);
            char what[64];
            for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v) {
                apply(ctx, &variants[v], dbl);
                snprintf(what, sizeof what, "tiny columns, %s", variants[v].name);
                check_sytrd(ctx, what, 0, n, batch, A, dbl);
                check_syevd_batch(ctx, what, n, dbl, batch, A);
            }
            /* the rows-in-registers kernel with several rows a work-item (n = 17: 4 in single
             * precision, 2 in double; its smallest count) */
            bcl_params p = {0};
            p.mapping = BCL_MAPPING_COLLABORATIVE;
            p.work_items_per_problem = 8;
            TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
            check_sytrd(ctx, "tiny columns, collaborative, 8 work-items", 0, n, batch, A, dbl);
            check_syevd_batch(ctx, "tiny columns, collaborative, 8 work-items", n, dbl, batch, A);
            check_sytrd(ctx, "tiny columns, local-memory kernel NT=4", 4, n, batch, A, dbl);
            free(A);
        }
    }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, NULL));
    bcl_destroy(ctx);
}

/* ---- solves ---- */

/* n - discard eigenvalues with |lambda| in [0.5, 1], `band` in [0.1, 0.2], `discard` at 1e-9 or
 * below (random signs): clear gaps around either threshold the tests use */
static void make_gapped(int n, int band, int discard, mg_rng *r, double *A)
{
    double *lam = malloc(sizeof *lam * (size_t)n);
    for (int i = 0; i < n; ++i) {
        const double mag = i < discard          ? 1e-9 * mg_uniform(r)
                           : i < discard + band ? 0.1 + 0.1 * mg_uniform(r)
                                                : 0.5 + 0.5 * mg_uniform(r);
        lam[i] = mg_uniform(r) < 0.5 ? -mag : mag;
    }
    if (mg_from_spectrum(n, lam, r, A) != 0)
        fail_msg("generator failed");
    free(lam);
}

/* x = V diag(1/lambda) V^T b over |lambda| >= max |lambda| / threshold, by LAPACK dsyevd in
 * double; returns the number of eigenvalues discarded */
static int pseudo_inverse_solve(int n, int nrhs, const double *A, const double *B, double threshold,
                                double *X, double *kept_ratio)
{
    const size_t nn = (size_t)n * n;
    double *v = malloc(sizeof *v * nn), *w = malloc(sizeof *w * n), *t = malloc(sizeof *t * n);
    memcpy(v, A, nn * sizeof *v);
    if (LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', n, v, n, w) != 0)
        fail_msg("LAPACKE_dsyevd failed");
    double top = 0;
    for (int i = 0; i < n; ++i)
        top = fmax(top, fabs(w[i]));
    int discarded = 0;
    double low = top;
    for (int i = 0; i < n; ++i) {
        discarded += !(fabs(w[i]) >= top / threshold);
        if (fabs(w[i]) >= top / threshold)
            low = fmin(low, fabs(w[i]));
    }
    *kept_ratio = top > 0 ? top / low : 1;
    for (int c = 0; c < nrhs; ++c) {
        const double *b = B + (size_t)c * n;
        for (int j = 0; j < n; ++j) {
            double s = 0;
            for (int i = 0; i < n; ++i)
                s += v[i + (size_t)j * n] * b[i];
            t[j] = fabs(w[j]) >= top / threshold ? s / w[j] : 0;
        }
        for (int i = 0; i < n; ++i) {
            double s = 0;
            for (int j = 0; j < n; ++j)
                s += v[i + (size_t)j * n] * t[j];
            X[i + (size_t)c * n] = s;
        }
    }
    free(v);
    free(w);
    free(t);
    return discarded;
}

/* a batch of solves in double (originals) and in the working precision */
typedef struct {
    double *A, *B;      /* double originals, n*n and n*nrhs per problem */
    void *Ap, *Bp, *X;  /* working precision */
    int *info, *path;
    void *residual;
} solve_set;

static solve_set make_solve_set(int n, int nrhs, size_t batch, int dbl)
{
    solve_set s;
    s.A = malloc(sizeof *s.A * (size_t)n * n * batch);
    s.B = malloc(sizeof *s.B * (size_t)n * nrhs * batch);
    s.Ap = tu_alloc((size_t)n * n * batch, dbl);
    s.Bp = tu_alloc((size_t)n * nrhs * batch, dbl);
    s.X = tu_alloc((size_t)n * nrhs * batch, dbl);
    s.info = malloc(sizeof(int) * batch);
    s.path = malloc(sizeof(int) * batch);
    s.residual = tu_alloc(batch, dbl);
    return s;
}

static void round_solve_set(solve_set *s, int n, int nrhs, size_t batch, int dbl)
{
    for (size_t i = 0; i < (size_t)n * n * batch; ++i)
        oracle_set(s->Ap, dbl, i, s->A[i]);
    for (size_t i = 0; i < (size_t)n * nrhs * batch; ++i)
        oracle_set(s->Bp, dbl, i, s->B[i]);
}

static void free_solve_set(solve_set *s)
{
    free(s->A);
    free(s->B);
    free(s->Ap);
    free(s->Bp);
    free(s->X);
    free(s->info);
    free(s->path);
    free(s->residual);
}

/* problem k of the set: its residual in double, and the library's own figure next to it */
static double checked_residual(const solve_set *s, int n, int nrhs, size_t k, int dbl)
{
    const size_t es = dbl ? 8 : 4, nn = (size_t)n * n, nb = (size_t)n * nrhs;
    const double ours = oracle_sysv_residual(n, nrhs, dbl, (char *)s->Ap + k * nn * es,
                                             (char *)s->Bp + k * nb * es, (char *)s->X + k * nb * es);
    const double lib = oracle_get(s->residual, dbl, k);
    /* both carry an O(1) rounding error in these units (the library's is in working precision) */
    if (!(fabs(lib - ours) <= 3 + 0.1 * ours))
        fail_msg("problem %zu: the library reports a scaled residual of %.4g, recomputed in double "
                 "it is %.4g",
                 k, lib, ours);
    return ours;
}

/* the EIGEN path's answer against the double pseudo-inverse of the rounded matrix, scaled by the
 * condition of the kept part (max / min kept |lambda|) */
static void check_truncated(const solve_set *s, int n, int nrhs, size_t k, int dbl, double threshold,
                            const char *what)
{
    const size_t es = dbl ? 8 : 4, nn = (size_t)n * n, nb = (size_t)n * nrhs;
    double *a = to_double((char *)s->Ap + k * nn * es, nn, dbl),
           *b = to_double((char *)s->Bp + k * nb * es, nb, dbl), *x = malloc(sizeof *x * nb);
    double kept_ratio;
    const int discarded = pseudo_inverse_solve(n, nrhs, a, b, threshold, x, &kept_ratio);
    const double err = oracle_forward_error(n, nrhs, dbl, (char *)s->X + k * nb * es, x);
    const double scaled = err / (n * oracle_eps(dbl) * kept_ratio * kept_ratio);
    if (s->info[k] != discarded || !(scaled < LIMIT))
        fail_msg("%s %s n=%d problem %zu: %d eigenvalues discarded (LAPACK: %d), forward error vs "
                 "the double pseudo-inverse %.3g = %.3g n eps kappa^2 (limit %g)",
                 what, dbl ? "double" : "single", n, k, s->info[k], discarded, err, scaled, LIMIT);
    free(a);
    free(b);
    free(x);
}

static bcl_status sysvx(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch, int dbl,
                        solve_set *s, int in_place)
{
    if (in_place)
        memcpy(s->X, s->Bp, (size_t)n * nrhs * batch * (dbl ? 8 : 4));
    const void *B = in_place ? s->X : s->Bp;
    return dbl ? bcl_dsysvx(ctx, method, n, nrhs, batch, s->Ap, B, s->X, s->info, s->residual, s->path)
               : bcl_ssysvx(ctx, method, n, nrhs, batch, s->Ap, B, s->X, s->info, s->residual, s->path);
}

static void test_householder_pcr(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int sizes[] = {1, 2, 3, 8, 13, 17, 32, 64};
    /* the device's table, then the collaborative mapping: its rows-in-registers kernel solves in
     * one launch (Q^T b, PCR and Q z fused), 8 right-hand sides a launch (n = 13 and 17: 11 of
     * them, two launches); 8 work-items a matrix, so that n > 8 has several rows per work-item.
     * Quick (the sanitizer pass): fewer sizes, each one a kernel compile per precision and
     * mapping. */
    for (int collab = 0; collab < 2; ++collab)
    for (int dbl = 0; dbl < 2; ++dbl)
        for (int si = 0; si < 8; ++si) {
            const int n = sizes[si], nrhs = collab && (n == 13 || n == 17) ? 11 : 1 + si % 3;
            if (tu_quick() && !(n == 3 || n == 13 || (!collab && (n == 1 || n == 64))))
                continue;
            const size_t batch = 5;
            bcl_params p = {0};
            p.mapping = BCL_MAPPING_COLLABORATIVE;
            p.work_items_per_problem = 8;
            TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, collab ? &p : NULL));
            solve_set s = make_solve_set(n, nrhs, batch, dbl);
            mg_rng r;
            mg_seed(&r, 500u + n);
            for (size_t k = 0; k < batch; ++k) {
                make_gapped(n, 0, 0, &r, s.A + k * n * n); /* indefinite, |lambda| in [0.5, 1] */
                mg_vector(n * nrhs, &r, s.B + k * n * nrhs);
            }
            round_solve_set(&s, n, nrhs, batch, dbl);
            TU_STATUS(ctx, BCL_SUCCESS, sysvx(ctx, BCL_HOUSEHOLDER_PCR, n, nrhs, batch, dbl, &s, si % 2));
            for (size_t k = 0; k < batch; ++k) {
                const double res = checked_residual(&s, n, nrhs, k, dbl);
                if (s.info[k] != 0 || s.path[k] != BCL_HOUSEHOLDER_PCR || !(res < LIMIT))
                    fail_msg("Householder+PCR %s %s n=%d nrhs=%d problem %zu: info %d, path %d, "
                             "||Ax - b|| / (||A|| ||x|| n eps) = %.3g (limit %g)",
                             collab ? "collaborative" : "table", dbl ? "double" : "single", n, nrhs,
                             k, s.info[k], s.path[k], res, LIMIT);
            }
            free_solve_set(&s);
        }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, NULL));
    bcl_destroy(ctx);
}

static void test_eigen_solve(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int sizes[] = {1, 2, 3, 9, 24, 33, 64};
    for (int dbl = 0; dbl < 2; ++dbl)
        for (int si = 0; si < 7; ++si)
            for (int strict = 0; strict < 2; ++strict) {
                /* default threshold 1e5 discards the 1e-9 band; threshold 3 the [0.1, 0.2] band too */
                const int n = sizes[si], nrhs = 1 + si % 2, discard = n / 4, band = n / 4;
                if (tu_quick() && n != 1 && n != 3 && n != 33 && n != 64)
                    continue; /* quick: fewer sizes (each a compile) */
                const size_t batch = 4;
                const double threshold = strict ? 3 : 1e5;
                bcl_params p = {0};
                p.eigen_threshold = strict ? threshold : 0;
                TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, strict ? &p : NULL));
                solve_set s = make_solve_set(n, nrhs, batch, dbl);
                mg_rng r;
                mg_seed(&r, 900u + n + 7u * strict);
                for (size_t k = 0; k < batch; ++k) {
                    make_gapped(n, band, discard, &r, s.A + k * n * n);
                    mg_vector(n * nrhs, &r, s.B + k * n * nrhs);
                }
                round_solve_set(&s, n, nrhs, batch, dbl);
                TU_STATUS(ctx, BCL_SUCCESS, sysvx(ctx, BCL_EIGEN, n, nrhs, batch, dbl, &s, si % 2));
                for (size_t k = 0; k < batch; ++k) {
                    checked_residual(&s, n, nrhs, k, dbl);
                    assert_int_equal(s.path[k], BCL_EIGEN);
                    check_truncated(&s, n, nrhs, k, dbl, threshold, "eigen solve");
                }
                free_solve_set(&s);
            }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, NULL));
    bcl_destroy(ctx);
}

/* A = P T P^T with P = diag(1, random orthogonal) and T = tridiag(1, 0, 1) of odd order:
 * Householder recovers T (implicit-Q theorem), whose zero diagonal is a zero pivot for the
 * elimination in PCR, and T is singular (eigenvalue 0): PCR's residual fails, the truncated
 * solve does not */
static void make_pcr_breaker(int n, mg_rng *r, double *A)
{
    double *P = calloc((size_t)n * n, sizeof *P), *Qs = malloc(sizeof *Qs * (n > 1 ? (size_t)(n - 1) * (n - 1) : 1));
    P[0] = 1;
    if (n > 1 && mg_orthogonal(n - 1, r, Qs) != 0)
        fail_msg("generator failed");
    for (int j = 1; j < n; ++j)
        for (int i = 1; i < n; ++i)
            P[i + (size_t)j * n] = Qs[(i - 1) + (size_t)(j - 1) * (n - 1)];
    /* A = sum over the off-diagonal pairs (i, i+1) of p_i p_{i+1}^T + p_{i+1} p_i^T */
    memset(A, 0, sizeof *A * (size_t)n * n);
    for (int t = 0; t + 1 < n; ++t)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                A[i + (size_t)j * n] += P[i + (size_t)t * n] * P[j + (size_t)(t + 1) * n] +
                                         P[i + (size_t)(t + 1) * n] * P[j + (size_t)t * n];
    free(P);
    free(Qs);
}

/* AUTO on a mixed batch: well-conditioned matrices stay on Householder + PCR; singular matrices
 * on which PCR breaks down go to divide and conquer (compacted second pass) and get the truncated
 * solve; exactly singular low-rank matrices are answered by whichever path passes the residual
 * check. Every answer is checked against its path's contract. */
static void test_auto(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    for (int dbl = 0; dbl < 2; ++dbl)
        for (int variant = 0; variant < 3; ++variant) {
            /* the table; chunks of 5 problems; the collaborative mapping (fused first pass, then
             * the compacted sytrd of the problems sent to divide and conquer) */
            /* quick: n = 13, whose kernels (NMAX = 16) compile faster under PoCL */
            const int n = tu_quick() ? 13 : 25, nrhs = 2, chunked = variant == 1;
            const size_t batch = 16;
            bcl_params p = {0};
            if (chunked) {
                p.chunk_problems = 5;
            } else {
                p.mapping = BCL_MAPPING_COLLABORATIVE;
                p.work_items_per_problem = 8; /* 4 rows a work-item (2 at the quick n = 13) */
            }
            TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, variant ? &p : NULL));
            solve_set s = make_solve_set(n, nrhs, batch, dbl);
            mg_rng r;
            mg_seed(&r, 77u + dbl);
            for (size_t k = 0; k < batch; ++k) {
                double *A = s.A + k * n * n;
                if (k % 3 == 1) {
                    make_pcr_breaker(n, &r, A);
                } else if (k % 3 == 2) {
                    /* rank n - 2, exactly: n - 2 outer products of small-integer vectors */
                    memset(A, 0, sizeof *A * n * n);
                    for (int t = 0; t < n - 2; ++t) {
                        double u[25];
                        for (int i = 0; i < n; ++i)
                            u[i] = (double)((int)(mg_uniform(&r) * 7) - 3);
                        const double sign = t % 2 ? -1 : 1;
                        for (int i = 0; i < n; ++i)
                            for (int j = 0; j < n; ++j)
                                A[i + j * n] += sign * u[i] * u[j];
                    }
                } else {
                    make_gapped(n, 0, 0, &r, A);
                }
                mg_vector(n * nrhs, &r, s.B + k * n * nrhs);
            }
            round_solve_set(&s, n, nrhs, batch, dbl);
            TU_STATUS(ctx, BCL_SUCCESS, sysvx(ctx, BCL_AUTO, n, nrhs, batch, dbl, &s, 0));
            int to_eigen = 0;
            for (size_t k = 0; k < batch; ++k) {
                const double res = checked_residual(&s, n, nrhs, k, dbl);
                if (s.path[k] == BCL_EIGEN) {
                    ++to_eigen;
                    check_truncated(&s, n, nrhs, k, dbl, 1e5, "AUTO, eigen path");
                } else if (s.path[k] != BCL_HOUSEHOLDER_PCR || s.info[k] != 0 || !(res < LIMIT + 3)) {
                    fail_msg("AUTO %s: problem %zu (class %zu): path %d, info %d, residual %.3g",
                             dbl ? "double" : "single", k, k % 3, s.path[k], s.info[k], res);
                }
                if ((k % 3 == 0 && s.path[k] != BCL_HOUSEHOLDER_PCR) || (k % 3 == 1 && s.path[k] != BCL_EIGEN))
                    fail_msg("AUTO %s: problem %zu (%s) took path %d", dbl ? "double" : "single", k,
                             k % 3 ? "PCR breaks down" : "well-conditioned", s.path[k]);
            }
            assert_true(to_eigen >= 5);
            free_solve_set(&s);
        }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, NULL));
    bcl_destroy(ctx);
}

/* ---- arguments, failures, device buffers, chunking ---- */

static void test_bad_arguments(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int n = 4;
    float A[32], Q[32], d[8], e[8], W[8], V[32], B[8], X[8], R[2];
    int info[2], path[2];
    for (int i = 0; i < 32; ++i)
        A[i] = (i % 5 == 0) ? 2.0f : 0.25f;
    for (int i = 0; i < 8; ++i)
        d[i] = e[i] = B[i] = 1;
#define OUTS_POISONED()                                                                          \
    (tu_is_poisoned(Q, sizeof Q) && tu_is_poisoned(W, sizeof W) && tu_is_poisoned(V, sizeof V) && \
     tu_is_poisoned(X, sizeof X) && tu_is_poisoned(R, sizeof R) && tu_is_poisoned(info, sizeof info) && \
     tu_is_poisoned(path, sizeof path))
#define BAD(expect, call)                                                                        \
    do {                                                                                         \
        tu_poison(Q, sizeof Q);                                                                  \
        tu_poison(W, sizeof W);                                                                  \
        tu_poison(V, sizeof V);                                                                  \
        tu_poison(X, sizeof X);                                                                  \
        tu_poison(R, sizeof R);                                                                  \
        tu_poison(info, sizeof info);                                                            \
        tu_poison(path, sizeof path);                                                            \
        TU_STATUS(ctx, expect, call);                                                            \
        assert_true(OUTS_POISONED());                                                            \
    } while (0)
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_ssytrd(NULL, n, 2, A, Q, d, e));
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_ssyevd(NULL, n, 2, A, W, V, info));
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_sstedc(NULL, n, 2, d, e, V, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrd(ctx, -1, 2, A, Q, W, e));
    assert_non_null(strstr(bcl_last_error(ctx), "n = -1"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssytrd(ctx, n, 2, NULL, Q, W, e));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 4 (A)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssyevd(ctx, n, 2, A, W, NULL, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 6 (V)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssyevd(ctx, n, 2, A, W, V, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 7 (info)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_sstedc(ctx, n, 2, d, NULL, V, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 5 (e)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssyevd(ctx, n, 2, A, W, A + 8, info));
    assert_non_null(strstr(bcl_last_error(ctx), "V overlaps A"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssyevd(ctx, n, (size_t)-1 / 16, A, W, V, info));
    /* sysv: the method, sizes, the eigen paths' limit */
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysvx(ctx, (bcl_method)42, n, 1, 2, A, B, X, info, R, path));
    assert_non_null(strstr(bcl_last_error(ctx), "method"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysvx(ctx, BCL_EIGEN, n, -1, 2, A, B, X, info, R, path));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysvx(ctx, BCL_AUTO, n, 1, 2, A, B, X, info, R, (int *)(void *)R));
    for (int dbl = 0; dbl < 2; ++dbl) {
        const int too_big = bcl_syevd_max_n(ctx, dbl) + 1;
        const size_t tt = (size_t)too_big * too_big;
        double *big = calloc(tt, sizeof *big), *big_w = calloc(tt, sizeof *big), *big_v = calloc(tt, sizeof *big);
        BAD(BCL_UNSUPPORTED_SIZE, dbl ? bcl_dsyevd(ctx, too_big, 1, big, big_w, big_v, info)
                                      : bcl_ssyevd(ctx, too_big, 1, (float *)big, (float *)big_w, (float *)big_v, info));
        assert_non_null(strstr(bcl_last_error(ctx), "exceeds"));
        BAD(BCL_UNSUPPORTED_SIZE, dbl ? bcl_dsysv(ctx, BCL_HOUSEHOLDER_PCR, too_big, 1, 1, big, big_w, big_v, info)
                                      : bcl_ssysv(ctx, BCL_EIGEN, too_big, 1, 1, (float *)big, (float *)big_w,
                                                  (float *)big_v, info));
        free(big);
        free(big_w);
        free(big_v);
    }
    /* zero sizes: success at once, nothing touched */
    BAD(BCL_SUCCESS, bcl_ssyevd(ctx, 0, 2, NULL, NULL, NULL, NULL));
    BAD(BCL_SUCCESS, bcl_sstedc(ctx, n, 0, d, e, V, info));
    BAD(BCL_SUCCESS, bcl_ssysvx(ctx, BCL_AUTO, n, 0, 2, A, B, X, info, R, path));
    /* n = 1: stedc needs no e */
    float one_d = 3, one_z = 0;
    int one_info = -1;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_sstedc(ctx, 1, 1, &one_d, NULL, &one_z, &one_info));
    assert_true(one_d == 3 && one_z == 1 && one_info == 0);
    /* device buffers */
    cl_int err;
    cl_mem small = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 16, NULL, &err);
    cl_mem big_buf = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 4096, NULL, &err);
    BAD(BCL_INVALID_ARGUMENT, bcl_ssyevd_cl(ctx, n, 2, BCL_LAYOUT_CONTIGUOUS, small, 0, big_buf, 0, big_buf, 0,
                                            big_buf, 0, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 5 (A)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssyevd_cl(ctx, n, 2, (bcl_layout)7, big_buf, 0, big_buf, 0, big_buf, 0,
                                            big_buf, 0, 0, NULL, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv_cl(ctx, BCL_EIGEN, n, 1, 2, BCL_LAYOUT_CONTIGUOUS, big_buf, 0, small, 2,
                                           big_buf, 0, big_buf, 0, 0, NULL, NULL));
    BAD(BCL_INVALID_ARGUMENT, bcl_ssysv_cl(ctx, BCL_AUTO, n, 1, 2, BCL_LAYOUT_CONTIGUOUS, big_buf, 0, big_buf, 0,
                                           big_buf, 0, NULL, 0, 0, NULL, NULL));
    clReleaseMemObject(small);
    clReleaseMemObject(big_buf);
#undef BAD
#undef OUTS_POISONED
    bcl_destroy(ctx);
}

/* a NaN in one matrix: that problem's info says so, its neighbours are solved as if alone */
static void test_failure_isolation(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    for (int dbl = 0; dbl < 2; ++dbl) {
        const int n = 12, nrhs = 1;
        const size_t batch = 5, nn = (size_t)n * n, bad = 2;
        solve_set s = make_solve_set(n, nrhs, batch, dbl);
        mg_rng r;
        mg_seed(&r, 4242u);
        for (size_t k = 0; k < batch; ++k) {
            make_gapped(n, 0, 0, &r, s.A + k * nn);
            mg_vector(n * nrhs, &r, s.B + k * n * nrhs);
        }
        s.A[bad * nn + 3 + 5 * n] = s.A[bad * nn + 5 + 3 * n] = NAN;
        round_solve_set(&s, n, nrhs, batch, dbl);
        void *W = tu_alloc((size_t)n * batch, dbl), *V = tu_alloc(nn * batch, dbl);
        TU_STATUS(ctx, BCL_NUMERICAL_FAILURE, dbl ? bcl_dsyevd(ctx, n, batch, s.Ap, W, V, s.info)
                                                  : bcl_ssyevd(ctx, n, batch, s.Ap, W, V, s.info));
        assert_non_null(strstr(bcl_last_error(ctx), "problem 2"));
        const size_t es = dbl ? 8 : 4;
        for (size_t k = 0; k < batch; ++k) {
            if (k == bad) {
                assert_true(s.info[k] != 0);
                continue;
            }
            assert_int_equal(s.info[k], 0);
            double *a = to_double((char *)s.Ap + k * nn * es, nn, dbl),
                   *w = to_double((char *)W + k * n * es, (size_t)n, dbl),
                   *v = to_double((char *)V + k * nn * es, nn, dbl);
            const double res = eigen_residual(n, a, w, v, oracle_eps(dbl));
            if (!(res < LIMIT))
                fail_msg("syevd next to a NaN matrix: problem %zu residual %.3g", k, res);
            free(a);
            free(w);
            free(v);
        }
        const bcl_method methods[] = {BCL_HOUSEHOLDER_PCR, BCL_EIGEN, BCL_AUTO};
        for (int m = 0; m < 3; ++m) {
            TU_STATUS(ctx, BCL_NUMERICAL_FAILURE, sysvx(ctx, methods[m], n, nrhs, batch, dbl, &s, 0));
            for (size_t k = 0; k < batch; ++k) {
                if (k == bad) {
                    /* EIGEN reports non-finite eigenvalues as n + 1, PCR a pivot row */
                    assert_true(s.path[k] == BCL_EIGEN ? s.info[k] == n + 1 : s.info[k] > 0);
                    /* B is handed back as the answer of a failed problem */
                    for (int i = 0; i < n * nrhs; ++i)
                        assert_true(oracle_get(s.X, dbl, k * n * nrhs + i) ==
                                    oracle_get(s.Bp, dbl, k * n * nrhs + i));
                    continue;
                }
                const double res = checked_residual(&s, n, nrhs, k, dbl);
                if (!(res < LIMIT) || s.info[k] != 0)
                    fail_msg("sysv method %d next to a NaN matrix: problem %zu info %d residual %.3g",
                             (int)methods[m], k, s.info[k], res);
            }
        }
        free(W);
        free(V);
        free_solve_set(&s);
    }
    bcl_destroy(ctx);
}

static cl_mem device_copy(bcl_context *ctx, const void *host, size_t per, size_t batch, size_t off,
                          int interleaved, int dbl)
{
    void *h = tu_alloc(per * batch + off, dbl);
    for (size_t k = 0; k < batch; ++k)
        for (size_t i = 0; i < per; ++i)
            oracle_set(h, dbl, off + (interleaved ? i * batch + k : k * per + i),
                       host ? oracle_get(host, dbl, k * per + i) : 0);
    cl_int err;
    cl_mem b = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              (per * batch + off) * (dbl ? 8 : 4), h, &err);
    assert_int_equal(err, CL_SUCCESS);
    free(h);
    return b;
}

/* element i of problem k of a device array against the host path's */
static void compare_device(bcl_context *ctx, cl_mem buf, const void *want, size_t per, size_t batch,
                           size_t off, int interleaved, int dbl, const char *what)
{
    void *h = tu_alloc(per * batch + off, dbl);
    assert_int_equal(clEnqueueReadBuffer(bcl_cl_queue(ctx), buf, CL_TRUE, 0,
                                         (per * batch + off) * (dbl ? 8 : 4), h, 0, NULL, NULL),
                     CL_SUCCESS);
    for (size_t k = 0; k < batch; ++k)
        for (size_t i = 0; i < per; ++i) {
            const double got = oracle_get(h, dbl, off + (interleaved ? i * batch + k : k * per + i)),
                         exp = oracle_get(want, dbl, k * per + i);
            if (!(fabs(got - exp) <= 1e3 * oracle_eps(dbl) * (1 + fabs(exp))))
                fail_msg("%s %s layout %d: problem %zu element %zu: %.17g, host path %.17g", what,
                         dbl ? "double" : "single", interleaved, k, i, got, exp);
        }
    free(h);
}

static void test_device_buffers(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    for (int dbl = 0; dbl < 2; ++dbl)
        for (int lay = 0; lay < 2; ++lay) {
            const int n = 20, nrhs = 2;
            const size_t batch = 9, nn = (size_t)n * n, nb = (size_t)n * nrhs, off = lay ? 0 : 3;
            const bcl_layout layout = lay ? BCL_LAYOUT_INTERLEAVED : BCL_LAYOUT_CONTIGUOUS;
            solve_set s = make_solve_set(n, nrhs, batch, dbl);
            mg_rng r;
            mg_seed(&r, 31u);
            for (size_t k = 0; k < batch; ++k) {
                make_gapped(n, 2, 3, &r, s.A + k * nn);
                mg_vector(n * nrhs, &r, s.B + k * nb);
            }
            round_solve_set(&s, n, nrhs, batch, dbl);
            /* syevd */
            void *W = tu_alloc(n * batch, dbl), *V = tu_alloc(nn * batch, dbl);
            int info_h[9];
            TU_STATUS(ctx, BCL_SUCCESS, dbl ? bcl_dsyevd(ctx, n, batch, s.Ap, W, V, info_h)
                                            : bcl_ssyevd(ctx, n, batch, s.Ap, W, V, info_h));
            cl_mem dA = device_copy(ctx, s.Ap, nn, batch, off, lay, dbl),
                   dW = device_copy(ctx, NULL, n, batch, off, lay, dbl),
                   dV = device_copy(ctx, NULL, nn, batch, off, lay, dbl);
            cl_int err;
            cl_mem dinfo = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, (batch + off) * sizeof(int), NULL, &err);
            cl_event ev = NULL;
            TU_STATUS(ctx, BCL_SUCCESS,
                      dbl ? bcl_dsyevd_cl(ctx, n, batch, layout, dA, off, dW, off, dV, off, dinfo, off, 0, NULL, &ev)
                          : bcl_ssyevd_cl(ctx, n, batch, layout, dA, off, dW, off, dV, off, dinfo, off, 0, NULL, &ev));
            assert_non_null(ev);
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
            compare_device(ctx, dW, W, n, batch, off, lay, dbl, "syevd_cl W");
            /* eigenvectors are defined up to sign: compare |V| */
            void *Vabs = tu_alloc(nn * batch, dbl);
            for (size_t i = 0; i < nn * batch; ++i)
                oracle_set(Vabs, dbl, i, fabs(oracle_get(V, dbl, i)));
            {
                void *h = tu_alloc(nn * batch + off, dbl);
                clEnqueueReadBuffer(bcl_cl_queue(ctx), dV, CL_TRUE, 0, (nn * batch + off) * (dbl ? 8 : 4), h, 0, NULL, NULL);
                for (size_t i = 0; i < nn * batch + off; ++i)
                    oracle_set(h, dbl, i, fabs(oracle_get(h, dbl, i)));
                cl_mem dVabs = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                              (nn * batch + off) * (dbl ? 8 : 4), h, &err);
                compare_device(ctx, dVabs, Vabs, nn, batch, off, lay, dbl, "syevd_cl |V|");
                clReleaseMemObject(dVabs);
                free(h);
            }
            free(Vabs);
            /* sysv, every method, X apart from B and in place */
            const bcl_method methods[] = {BCL_HOUSEHOLDER_PCR, BCL_EIGEN, BCL_AUTO};
            for (int m = 0; m < 3; ++m)
                for (int in_place = 0; in_place < 2; ++in_place) {
                    TU_STATUS(ctx, BCL_SUCCESS, sysvx(ctx, methods[m], n, nrhs, batch, dbl, &s, 0));
                    cl_mem dB = device_copy(ctx, s.Bp, nb, batch, off, lay, dbl),
                           dX = in_place ? dB : device_copy(ctx, NULL, nb, batch, off, lay, dbl);
                    TU_STATUS(ctx, BCL_SUCCESS,
                              dbl ? bcl_dsysv_cl(ctx, methods[m], n, nrhs, batch, layout, dA, off, dB, off, dX, off,
                                                 dinfo, off, 0, NULL, &ev)
                                  : bcl_ssysv_cl(ctx, methods[m], n, nrhs, batch, layout, dA, off, dB, off, dX, off,
                                                 dinfo, off, 0, NULL, &ev));
                    clWaitForEvents(1, &ev);
                    clReleaseEvent(ev);
                    compare_device(ctx, dX, s.X, nb, batch, off, lay, dbl, "sysv_cl X");
                    int info_d[9 + 3];
                    clEnqueueReadBuffer(bcl_cl_queue(ctx), dinfo, CL_TRUE, 0, (batch + off) * sizeof(int), info_d, 0,
                                        NULL, NULL);
                    for (size_t k = 0; k < batch; ++k)
                        assert_int_equal(info_d[off + k], s.info[k]);
                    clReleaseMemObject(dB);
                    if (!in_place)
                        clReleaseMemObject(dX);
                }
            clReleaseMemObject(dA);
            clReleaseMemObject(dW);
            clReleaseMemObject(dV);
            clReleaseMemObject(dinfo);
            free(W);
            free(V);
            free_solve_set(&s);
        }
    bcl_destroy(ctx);
}

/* chunked host calls give the answers of one pass (AUTO's second pass compacts per chunk) */
static void test_chunked(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int n = 10, nrhs = 1;
    const size_t batch = 23, nn = (size_t)n * n;
    for (int dbl = 0; dbl < 2; ++dbl) {
        solve_set s = make_solve_set(n, nrhs, batch, dbl);
        mg_rng r;
        mg_seed(&r, 8u);
        for (size_t k = 0; k < batch; ++k) {
            make_gapped(n, 0, k % 4 == 0 ? 2 : 0, &r, s.A + k * nn);
            mg_vector(n, &r, s.B + k * n);
        }
        round_solve_set(&s, n, nrhs, batch, dbl);
        void *W1 = tu_alloc(n * batch, dbl), *V1 = tu_alloc(nn * batch, dbl), *W2 = tu_alloc(n * batch, dbl),
             *V2 = tu_alloc(nn * batch, dbl), *X1 = tu_alloc(n * batch, dbl);
        int info1[23], info2[23], path1[23];
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, NULL));
        TU_STATUS(ctx, BCL_SUCCESS, dbl ? bcl_dsyevd(ctx, n, batch, s.Ap, W1, V1, info1)
                                        : bcl_ssyevd(ctx, n, batch, s.Ap, W1, V1, info1));
        TU_STATUS(ctx, BCL_SUCCESS, sysvx(ctx, BCL_AUTO, n, nrhs, batch, dbl, &s, 0));
        memcpy(X1, s.X, n * batch * (dbl ? 8 : 4));
        memcpy(path1, s.path, sizeof path1);
        bcl_params p = {0};
        p.chunk_problems = 4;
        p.auto_residual = 30;
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
        TU_STATUS(ctx, BCL_SUCCESS, dbl ? bcl_dsyevd(ctx, n, batch, s.Ap, W2, V2, info2)
                                        : bcl_ssyevd(ctx, n, batch, s.Ap, W2, V2, info2));
        assert_memory_equal(W1, W2, n * batch * (dbl ? 8 : 4));
        assert_memory_equal(V1, V2, nn * batch * (dbl ? 8 : 4));
        TU_STATUS(ctx, BCL_SUCCESS, sysvx(ctx, BCL_AUTO, n, nrhs, batch, dbl, &s, 0));
        assert_memory_equal(X1, s.X, n * batch * (dbl ? 8 : 4));
        assert_memory_equal(path1, s.path, sizeof path1);
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, NULL));
        free(W1);
        free(V1);
        free(W2);
        free(V2);
        free(X1);
        free_solve_set(&s);
    }
    bcl_destroy(ctx);
}

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
    const struct CMUnitTest sytrd[] = {cmocka_unit_test(test_sytrd), cmocka_unit_test(test_sytrd_tiny_columns)};
    const struct CMUnitTest stedc[] = {cmocka_unit_test(test_stedc)};
    const struct CMUnitTest syevd[] = {cmocka_unit_test(test_syevd)};
    const struct CMUnitTest solve[] = {cmocka_unit_test(test_householder_pcr), cmocka_unit_test(test_eigen_solve),
                                       cmocka_unit_test(test_auto)};
    const struct CMUnitTest api[] = {cmocka_unit_test(test_bad_arguments), cmocka_unit_test(test_failure_isolation),
                                     cmocka_unit_test(test_device_buffers), cmocka_unit_test(test_chunked)};
    int failed = 0, all = !strcmp(group, "all");
    if (all || !strcmp(group, "sytrd"))
        failed += cmocka_run_group_tests_name("symeig sytrd", sytrd, NULL, NULL);
    if (all || !strcmp(group, "stedc"))
        failed += cmocka_run_group_tests_name("symeig stedc", stedc, NULL, NULL);
    if (all || !strcmp(group, "syevd"))
        failed += cmocka_run_group_tests_name("symeig syevd", syevd, NULL, NULL);
    if (all || !strcmp(group, "solve"))
        failed += cmocka_run_group_tests_name("symeig solve", solve, NULL, NULL);
    if (all || !strcmp(group, "api"))
        failed += cmocka_run_group_tests_name("symeig api", api, NULL, NULL);
    return failed ? 1 : 0;
}
