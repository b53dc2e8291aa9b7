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

/* ---- non-symmetric eigenvalues ---- */

int oracle_geev(int n, int dbl, const void *A, double *wr, double *wi, double *rcond,
                double *abnrm)
{
    const size_t nn = (size_t)n * n;
    double *a = malloc(sizeof *a * nn), *vl = malloc(sizeof *vl * nn),
           *vr = malloc(sizeof *vr * nn), *scale = malloc(sizeof *scale * (size_t)n),
           *rcondv = malloc(sizeof *rcondv * (size_t)n);
    int *iwork = malloc(sizeof *iwork * (size_t)(2 * n));
    for (size_t i = 0; i < nn; ++i)
        a[i] = oracle_get(A, dbl, i);
    int ilo, ihi;
    double query;
    /* the _work call is LAPACK itself (LAPACKE's wrapper screens NaN) */
    int info = LAPACKE_dgeevx_work(LAPACK_COL_MAJOR, 'B', 'V', 'V', 'E', n, a, n, wr, wi, vl, n,
                                   vr, n, &ilo, &ihi, scale, abnrm, rcond, rcondv, &query, -1,
                                   iwork);
    if (info == 0) {
        int lwork = (int)query;
        double *work = malloc(sizeof *work * (size_t)(lwork > 1 ? lwork : 1));
        info = LAPACKE_dgeevx_work(LAPACK_COL_MAJOR, 'B', 'V', 'V', 'E', n, a, n, wr, wi, vl, n,
                                   vr, n, &ilo, &ihi, scale, abnrm, rcond, rcondv, work, lwork,
                                   iwork);
        free(work);
    }
    free(a);
    free(vl);
    free(vr);
    free(scale);
    free(rcondv);
    free(iwork);
    return info;
}

double oracle_fnorm(int n, int dbl, const void *A)
{
    double big = 0, s = 0;
    for (size_t i = 0; i < (size_t)n * n; ++i)
        big = fmax(big, fabs(oracle_get(A, dbl, i)));
    if (big == 0 || isinf(big))
        return big;
    for (size_t i = 0; i < (size_t)n * n; ++i) {
        const double a = oracle_get(A, dbl, i) / big;
        s += a * a;
    }
    return big * sqrt(s);
}

double oracle_eig_match(int n, int dbl, const void *wr, const void *wi, const double *wr_ref,
                        const double *wi_ref, const double *rcond, double anorm, int *where)
{
    int *order = malloc(sizeof *order * (size_t)n), *used = calloc((size_t)n, sizeof *used);
    double *tol = malloc(sizeof *tol * (size_t)n);
    const double eps = oracle_eps(dbl);
    /* the floor keeps a zero matrix's exact eigenvalues testable */
    const double base = (anorm > 0 ? anorm : 1) * n * eps;
    for (int j = 0; j < n; ++j) {
        order[j] = j;
        tol[j] = rcond[j] > 0 ? base / rcond[j] : INFINITY;
    }
    /* most sensitive last: well-conditioned eigenvalues choose first */
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && tol[order[j]] < tol[order[j - 1]]; --j) {
            const int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    double worst = 0;
    int worst_at = -1;
    for (int o = 0; o < n; ++o) {
        const int j = order[o];
        double best = INFINITY;
        int pick = -1;
        for (int c = 0; c < n; ++c) {
            if (used[c])
                continue;
            const double d = hypot(oracle_get(wr, dbl, (size_t)c) - wr_ref[j],
                                   oracle_get(wi, dbl, (size_t)c) - wi_ref[j]);
            if (pick < 0 || d < best) {
                best = d;
                pick = c;
            }
        }
        double ratio = INFINITY;
        if (pick >= 0 && !isnan(best)) {
            used[pick] = 1;
            ratio = best == 0 ? 0 : best / tol[j];
        }
        if (!(ratio <= worst)) {
            worst = ratio;
            worst_at = j;
        }
    }
    if (where)
        *where = worst_at;
    free(order);
    free(used);
    free(tol);
    return worst;
}

int oracle_pairs_violation(int n, int dbl, const void *wr, const void *wi)
{
    for (int j = 0; j < n; ++j) {
        const double im = oracle_get(wi, dbl, (size_t)j);
        if (im == 0)
            continue;
        if (!(im > 0) || j + 1 >= n || oracle_get(wr, dbl, (size_t)j + 1) != oracle_get(wr, dbl, (size_t)j) ||
            oracle_get(wi, dbl, (size_t)j + 1) != -im)
            return j;
        ++j;
    }
    return -1;
}

double oracle_vectors_residual(int n, int dbl, const void *A, const void *wr, const void *wi,
                               const void *VR, double *norm_err)
{
    const double eps = oracle_eps(dbl), anorm = oracle_fnorm(n, dbl, A);
    /* on A / ||A|| and lambda / ||A||: no overflow for huge norms */
    const double inv = anorm > 0 ? 1 / anorm : 1;
    double worst = 0, nworst = 0;
    for (int j = 0; j < n; ++j) {
        const double lr = oracle_get(wr, dbl, (size_t)j) * inv,
                     li = oracle_get(wi, dbl, (size_t)j) * inv;
        const int pair = li > 0 && j + 1 < n;
        double rr = 0, vv = 0, big = 0, real_big = 0;
        for (int i = 0; i < n; ++i) {
            double sr = 0, si = 0;
            for (int k = 0; k < n; ++k) {
                const double a = oracle_get(A, dbl, (size_t)i + (size_t)k * n) * inv;
                sr += a * oracle_get(VR, dbl, (size_t)k + (size_t)j * n);
                if (pair)
                    si += a * oracle_get(VR, dbl, (size_t)k + (size_t)(j + 1) * n);
            }
            const double vr = oracle_get(VR, dbl, (size_t)i + (size_t)j * n);
            const double vi = pair ? oracle_get(VR, dbl, (size_t)i + (size_t)(j + 1) * n) : 0;
            /* (A v)_i - lambda v_i, lambda = lr + i li, v = vr + i vi */
            sr -= lr * vr - li * vi;
            si -= lr * vi + li * vr;
            rr += sr * sr + si * si;
            vv += vr * vr + vi * vi;
            big = fmax(big, vr * vr + vi * vi);
            if (vi == 0)
                real_big = fmax(real_big, vr * vr);
        }
        const double res = sqrt(rr) / (n * eps);
        double nerr = fabs(sqrt(vv) - 1) / (n * eps);
        /* the largest component (up to rounding) is real */
        if (pair && !(real_big >= big * (1 - 1e-6)))
            nerr = INFINITY;
        worst = worst_of(worst, res);
        nworst = worst_of(nworst, nerr);
        if (pair)
            ++j;
    }
    if (norm_err)
        *norm_err = nworst;
    return worst;
}
