/* LAPACK reference oracle; see oracle.h. */
#include "oracle.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>

double oracle_eps(int dbl)
{
    return dbl ? 0x1p-53 : 0x1p-24;
}

double oracle_get(const void *p, int dbl, size_t i)
{
    return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

void oracle_set(void *p, int dbl, size_t i, double v)
{
    if (dbl)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

static double inf_norm(int n, int dbl, const void *A)
{
    double norm = 0;
    for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int j = 0; j < n; ++j)
            s += fabs(oracle_get(A, dbl, (size_t)i + (size_t)j * n));
        norm = s > norm ? s : norm;
    }
    return norm;
}

/* NaN compares false: return it as a failure (infinity) */
static double worst_of(double a, double b)
{
    if (isnan(a) || isnan(b))
        return INFINITY;
    return a > b ? a : b;
}

double oracle_sysv_residual(int n, int nrhs, int dbl, const void *A, const void *B, const void *X)
{
    const double anorm = inf_norm(n, dbl, A), eps = oracle_eps(dbl);
    double worst = 0;
    for (int c = 0; c < nrhs; ++c) {
        double rmax = 0, xmax = 0;
        for (int i = 0; i < n; ++i) {
            double s = -oracle_get(B, dbl, (size_t)c * n + i);
            for (int j = 0; j < n; ++j)
                s += oracle_get(A, dbl, (size_t)i + (size_t)j * n) *
                     oracle_get(X, dbl, (size_t)c * n + j);
            rmax = worst_of(rmax, fabs(s));
            xmax = worst_of(xmax, fabs(oracle_get(X, dbl, (size_t)c * n + i)));
        }
        double res = rmax == 0 ? 0 : rmax / (anorm * xmax * n * eps);
        worst = worst_of(worst, res);
    }
    return worst;
}

double oracle_ldlt_residual(int n, int dbl, const void *A, const void *LD)
{
    double *L = calloc((size_t)n * n, sizeof *L), *D = calloc((size_t)n, sizeof *D);
    for (int i = 0; i < n; ++i) {
        const size_t row = (size_t)i * (i + 1) / 2;
        for (int k = 0; k < i; ++k)
            L[i + (size_t)k * n] = oracle_get(LD, dbl, row + k);
        L[i + (size_t)i * n] = 1;
        D[i] = oracle_get(LD, dbl, row + i);
    }
    double worst = 0;
    for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int j = 0; j < n; ++j) {
            double v = 0;
            for (int k = 0; k <= (i < j ? i : j); ++k)
                v += L[i + (size_t)k * n] * D[k] * L[j + (size_t)k * n];
            s += fabs(oracle_get(A, dbl, (size_t)i + (size_t)j * n) - v);
        }
        worst = worst_of(worst, s);
    }
    free(L);
    free(D);
    return worst / (inf_norm(n, dbl, A) * n * oracle_eps(dbl));
}

int oracle_potrf_info(int n, int dbl, const void *A)
{
    double *a = malloc(sizeof *a * (size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; ++i)
        a[i] = oracle_get(A, dbl, i);
    /* the _work call is LAPACK itself: LAPACKE's own NaN screening would answer -4 */
    int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, a, n);
    free(a);
    return info;
}

int oracle_posv(int n, int nrhs, int dbl, const void *A, const void *B, double *X, double *cond)
{
    double *a = malloc(sizeof *a * (size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; ++i)
        a[i] = oracle_get(A, dbl, i);
    for (size_t i = 0; i < (size_t)n * nrhs; ++i)
        X[i] = oracle_get(B, dbl, i);
    const double anorm = LAPACKE_dlange(LAPACK_COL_MAJOR, '1', n, n, a, n);
    int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, X, n);
    double rcond = 0;
    if (info == 0 && cond) {
        LAPACKE_dpocon(LAPACK_COL_MAJOR, 'L', n, a, n, anorm, &rcond);
        *cond = rcond > 0 ? 1 / rcond : INFINITY;
    }
    free(a);
    return info;
}

double oracle_forward_error(int n, int nrhs, int dbl, const void *X, const double *Xref)
{
    double worst = 0;
    for (int c = 0; c < nrhs; ++c) {
        double dmax = 0, rmax = 0;
        for (int i = 0; i < n; ++i) {
            const size_t at = (size_t)c * n + i;
            dmax = worst_of(dmax, fabs(oracle_get(X, dbl, at) - Xref[at]));
            rmax = worst_of(rmax, fabs(Xref[at]));
        }
        worst = worst_of(worst, rmax > 0 ? dmax / rmax : dmax);
    }
    return worst;
}
