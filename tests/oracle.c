/* LAPACK reference oracle; see oracle.h. */
#include "oracle.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Fortran BLAS (OpenBLAS) */
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);

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

void oracle_pcyclic_assemble(int n, int p, const double *A, const double *B, double *H)
{
    const size_t N = (size_t)n * p, nn = (size_t)n * n;
    memset(H, 0, sizeof *H * N * N);
    for (int i = 0; i < p; ++i)
        for (int c = 0; c < n; ++c)
            for (int r = 0; r < n; ++r) {
                const size_t e = (size_t)c * n + r;
                H[((size_t)i * n + c) * N + (size_t)i * n + r] += A[i * nn + e];
                /* B_i (0-based i < p-1) below the diagonal at block (i+1, i); B_p-1 at (0, p-1) */
                const size_t row = i + 1 < p ? (size_t)(i + 1) * n : 0;
                const size_t col = i + 1 < p ? (size_t)i * n : (size_t)(p - 1) * n;
                H[(col + c) * N + row + r] += B[i * nn + e];
            }
}

double oracle_norm1(size_t N, const double *M)
{
    double norm = 0;
    for (size_t c = 0; c < N; ++c) {
        double s = 0;
        for (size_t r = 0; r < N; ++r)
            s += fabs(M[c * N + r]);
        norm = worst_of(norm, s);
    }
    return norm;
}

double oracle_pcyclic_residual(int n, int p, const double *A, const double *B, int dbl,
                               const void *X)
{
    const size_t N = (size_t)n * p, nn = (size_t)n * n;
    double *Xd = malloc(sizeof *Xd * N * N), *R = calloc(N * N, sizeof *R),
           *H = malloc(sizeof *H * N * N);
    for (size_t i = 0; i < N * N; ++i)
        Xd[i] = oracle_get(X, dbl, i);
    /* block row i of H X: A_i X_i,: + B_i-1 X_i-1,: (i > 0) or B_p-1 X_p-1,: (i = 0) */
    const int ni = n, Ni = (int)N;
    const double one = 1;
    for (int i = 0; i < p; ++i) {
        const int j = i > 0 ? i - 1 : p - 1;
        double *Ri = R + (size_t)i * n;
        dgemm_("N", "N", &ni, &Ni, &ni, &one, A + i * nn, &ni, Xd + (size_t)i * n, &Ni, &one, Ri, &Ni);
        dgemm_("N", "N", &ni, &Ni, &ni, &one, B + j * nn, &ni, Xd + (size_t)j * n, &Ni, &one, Ri, &Ni);
    }
    for (size_t i = 0; i < N; ++i)
        R[i * N + i] -= 1;
    oracle_pcyclic_assemble(n, p, A, B, H);
    const double res = oracle_norm1(N, R) / ((double)N * oracle_eps(dbl) * oracle_norm1(N, H) *
                                             oracle_norm1(N, Xd));
    free(Xd);
    free(R);
    free(H);
    return isnan(res) ? INFINITY : res;
}

int oracle_getri(int N, double *H)
{
    int *ipiv = malloc(sizeof *ipiv * (size_t)(N > 0 ? N : 1));
    int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, N, N, H, N, ipiv);
    if (info == 0) {
        double query = 0;
        LAPACKE_dgetri_work(LAPACK_COL_MAJOR, N, H, N, ipiv, &query, -1);
        const int lwork = (int)query > N ? (int)query : N;
        double *work = malloc(sizeof *work * (size_t)lwork);
        info = LAPACKE_dgetri_work(LAPACK_COL_MAJOR, N, H, N, ipiv, work, lwork);
        free(work);
    }
    free(ipiv);
    return info;
}

double oracle_rel_diff(size_t rows, size_t cols, int dbl, const void *X, const double *Xref)
{
    double dnorm = 0, rnorm = 0;
    for (size_t c = 0; c < cols; ++c) {
        double d = 0, r = 0;
        for (size_t i = 0; i < rows; ++i) {
            d += fabs(oracle_get(X, dbl, c * rows + i) - Xref[c * rows + i]);
            r += fabs(Xref[c * rows + i]);
        }
        dnorm = worst_of(dnorm, d);
        rnorm = worst_of(rnorm, r);
    }
    return rnorm > 0 ? dnorm / rnorm : dnorm;
}
