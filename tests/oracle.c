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
    double *tol = malloc(sizeof *tol * (size_t)n), *first = malloc(sizeof *first * (size_t)n),
           *reach = malloc(sizeof *reach * (size_t)n);
    const double eps = oracle_eps(dbl);
    /* the floor keeps a zero matrix's exact eigenvalues testable */
    const double base = (anorm > 0 ? anorm : 1) * n * eps;
    for (int j = 0; j < n; ++j) {
        order[j] = j;
        first[j] = tol[j] = rcond[j] > 0 ? base / rcond[j] : INFINITY;
    }
    /* rcond gives a first-order bound, valid only outside the neighbours' error disks. In a
     * defective eigenvalue's cluster LAPACK's rcond of a semisimple copy can read 0.3 while the
     * copies of a Jordan block read 1e-11, and their first-order disks (1e-4 in double) overstate
     * how far they move: about their own spacing, as the reference copies show. So an eigenvalue
     * within min(tol_i, 4 x the distance from lambda_i to its nearest neighbour) of lambda_i is
     * coupled to it and takes tol_i, to closure over the cluster; distinct eigenvalues further
     * apart keep their own tolerances. */
    for (int i = 0; i < n; ++i) {
        double nearest = INFINITY;
        for (int k = 0; k < n; ++k)
            if (k != i)
                nearest = fmin(nearest, hypot(wr_ref[k] - wr_ref[i], wi_ref[k] - wi_ref[i]));
        reach[i] = fmin(first[i], 4 * nearest);
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                if (tol[i] > tol[j] && isfinite(tol[i]) &&
                    hypot(wr_ref[i] - wr_ref[j], wi_ref[i] - wi_ref[j]) <=
                        fmax(reach[i], reach[j])) {
                    tol[j] = tol[i];
                    changed = 1;
                }
    }
    /* most sensitive last (by the first-order bounds): well-conditioned eigenvalues choose first */
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && first[order[j]] < first[order[j - 1]]; --j) {
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
    free(first);
    free(reach);
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

int oracle_getri_any(int N, int dbl, void *H)
{
    int *ipiv = malloc(sizeof *ipiv * (size_t)(N > 0 ? N : 1));
    if (!ipiv)
        return -1;
    int info = dbl ? LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, N, N, H, N, ipiv)
                   : LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, N, N, H, N, ipiv);
    if (info == 0) {
        double dquery = 0;
        float squery = 0;
        if (dbl)
            LAPACKE_dgetri_work(LAPACK_COL_MAJOR, N, H, N, ipiv, &dquery, -1);
        else
            LAPACKE_sgetri_work(LAPACK_COL_MAJOR, N, H, N, ipiv, &squery, -1);
        const int query = dbl ? (int)dquery : (int)squery, lwork = query > N ? query : N;
        void *work = malloc((dbl ? sizeof(double) : sizeof(float)) * (size_t)lwork);
        info = !work ? -1
               : dbl ? LAPACKE_dgetri_work(LAPACK_COL_MAJOR, N, H, N, ipiv, work, lwork)
                     : LAPACKE_sgetri_work(LAPACK_COL_MAJOR, N, H, N, ipiv, work, lwork);
        free(work);
    }
    free(ipiv);
    return info;
}

int oracle_getri(int N, double *H)
{
    return oracle_getri_any(N, 1, H);
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

/* max over columns of ||T x - b||_inf / (||T||_inf ||x||_inf m eps), T from the working-precision
 * values the library was given */
double oracle_gtsv_residual(int m, int nrhs, int dbl, const void *dl, const void *d, const void *du,
                            const void *b, const void *x)
{
    double tnorm = 0, worst = 0;
    for (int i = 0; i < m; ++i) {
        double row = fabs(oracle_get(d, dbl, (size_t)i));
        if (i > 0)
            row += fabs(oracle_get(dl, dbl, (size_t)i));
        if (i < m - 1)
            row += fabs(oracle_get(du, dbl, (size_t)i));
        tnorm = row > tnorm ? row : tnorm;
    }
    for (int c = 0; c < nrhs; ++c) {
        const size_t o = (size_t)c * m;
        double rmax = 0, xmax = 0;
        for (int i = 0; i < m; ++i) {
            double s = oracle_get(d, dbl, (size_t)i) * oracle_get(x, dbl, o + i) - oracle_get(b, dbl, o + i);
            if (i > 0)
                s += oracle_get(dl, dbl, (size_t)i) * oracle_get(x, dbl, o + i - 1);
            if (i < m - 1)
                s += oracle_get(du, dbl, (size_t)i) * oracle_get(x, dbl, o + i + 1);
            if (isnan(s))
                return INFINITY;
            rmax = fabs(s) > rmax ? fabs(s) : rmax;
            const double xi = fabs(oracle_get(x, dbl, o + i));
            xmax = xi > xmax ? xi : xmax;
        }
        const double res = rmax == 0 ? 0 : rmax / (tnorm * xmax * m * oracle_eps(dbl));
        worst = res > worst ? res : worst;
    }
    return worst;
}
