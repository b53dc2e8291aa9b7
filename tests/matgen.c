/* Test-matrix generators; see matgen.h. */
#include "matgen.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void mg_seed(mg_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; ++i) { /* splitmix64 expands the seed */
        seed += 0x9e3779b97f4a7c15ULL;
        uint64_t z = seed;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        r->s[i] = z ^ (z >> 31);
    }
}

static uint64_t next(mg_rng *r) /* xoshiro256** */
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double mg_uniform(mg_rng *r)
{
    return (double)(next(r) >> 11) * 0x1.0p-53;
}

double mg_normal(mg_rng *r)
{
    double u = mg_uniform(r), v = mg_uniform(r);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

void mg_vector(int len, mg_rng *r, double *b)
{
    for (int i = 0; i < len; ++i)
        b[i] = 2.0 * mg_uniform(r) - 1.0;
}

/* A = Q T Q^T for symmetric tridiagonal T = (d, e) */
static void apply_tridiagonal(int n, const double *Q, const double *d, const double *e, double *A)
{
    double *QT = calloc((size_t)n * n, sizeof *QT); /* Q * T */
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double s = Q[i + j * n] * d[j];
            if (j > 0)
                s += Q[i + (j - 1) * n] * e[j - 1];
            if (j + 1 < n)
                s += Q[i + (j + 1) * n] * e[j];
            QT[i + j * n] = s;
        }
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
            double s = 0;
            for (int k = 0; k < n; ++k)
                s += QT[i + k * n] * Q[j + k * n];
            A[i + j * n] = A[j + i * n] = s;
        }
    free(QT);
}

int mg_xi_rho(int n, double rho, mg_rng *r, double *A)
{
    double *Q = malloc(sizeof *Q * (size_t)n * n), *d = malloc(sizeof *d * (size_t)n),
           *e = malloc(sizeof *e * (size_t)(n + 1)), *tau = malloc(sizeof *tau * (size_t)(n + 1));
    int info = -1;
    if (Q && d && e && tau) {
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                Q[i + j * n] = i == j ? 1.0 : rho;
        info = n > 1 ? LAPACKE_dsytrd(LAPACK_COL_MAJOR, 'L', n, Q, n, d, e, tau) : 0;
        if (info == 0 && n > 1)
            info = LAPACKE_dorgtr(LAPACK_COL_MAJOR, 'L', n, Q, n, tau);
        if (n == 1)
            Q[0] = 1.0;
        if (info == 0) {
            /* R: uniform off-diagonal, diagonal made dominant */
            for (int i = 0; i + 1 < n; ++i)
                e[i] = mg_uniform(r);
            for (int i = 0; i < n; ++i)
                d[i] = (1.0 + mg_uniform(r)) * (1.0 + (i > 0 ? e[i - 1] : 0) + (i + 1 < n ? e[i] : 0));
            apply_tridiagonal(n, Q, d, e, A);
        }
    }
    free(Q);
    free(d);
    free(e);
    free(tau);
    return info;
}

int mg_orthogonal(int n, mg_rng *r, double *Q)
{
    double *tau = malloc(sizeof *tau * (size_t)n), *diag = malloc(sizeof *diag * (size_t)n);
    int info = -1;
    if (tau && diag) {
        for (int i = 0; i < n * n; ++i)
            Q[i] = mg_normal(r);
        info = LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, Q, n, tau);
        for (int i = 0; i < n; ++i)
            diag[i] = Q[i + i * n] < 0 ? -1.0 : 1.0;
        if (info == 0)
            info = LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, n, n, Q, n, tau);
        for (int j = 0; j < n && info == 0; ++j)
            for (int i = 0; i < n; ++i)
                Q[i + j * n] *= diag[j];
    }
    free(tau);
    free(diag);
    return info;
}

int mg_from_spectrum(int n, const double *lambda, mg_rng *r, double *A)
{
    double *Q = malloc(sizeof *Q * (size_t)n * n);
    if (!Q)
        return -1;
    int info = mg_orthogonal(n, r, Q);
    if (info == 0)
        for (int j = 0; j < n; ++j)
            for (int i = j; i < n; ++i) {
                double s = 0;
                for (int k = 0; k < n; ++k)
                    s += Q[i + k * n] * lambda[k] * Q[j + k * n];
                A[i + j * n] = A[j + i * n] = s;
            }
    free(Q);
    return info;
}

int mg_spd_cond(int n, double cond, mg_rng *r, double *A)
{
    double *lambda = malloc(sizeof *lambda * (size_t)n);
    if (!lambda)
        return -1;
    for (int i = 0; i < n; ++i)
        lambda[i] = n > 1 ? pow(cond, -(double)i / (n - 1)) : 1.0;
    int info = mg_from_spectrum(n, lambda, r, A);
    free(lambda);
    return info;
}

int mg_hubbard_expk(int nx, int ny, double t, double dtau, double *expK)
{
    const int n = nx * ny;
    double *K = calloc((size_t)n * n, sizeof *K), *w = malloc(sizeof *w * (size_t)n);
    if (!K || !w) {
        free(K);
        free(w);
        return -1;
    }
    for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x) {
            const int i = x + nx * y, right = (x + 1) % nx + nx * y, up = x + nx * ((y + 1) % ny);
            if (nx > 1) {
                K[(size_t)i * n + right] -= t;
                K[(size_t)right * n + i] -= t;
            }
            if (ny > 1) {
                K[(size_t)i * n + up] -= t;
                K[(size_t)up * n + i] -= t;
            }
        }
    int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', n, K, n, w);
    if (info == 0) /* e^{-dtau K} = V diag(e^{-dtau w}) V^T */
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                double s = 0;
                for (int k = 0; k < n; ++k)
                    s += K[(size_t)k * n + i] * exp(-dtau * w[k]) * K[(size_t)k * n + j];
                expK[(size_t)j * n + i] = s;
            }
    free(K);
    free(w);
    return info;
}

void mg_hubbard_slice(int n, const double *expK, double lambda, const int *s, double *Bl)
{
    for (int j = 0; j < n; ++j) {
        const double v = exp(lambda * s[j]);
        for (int i = 0; i < n; ++i)
            Bl[(size_t)j * n + i] = expK[(size_t)j * n + i] * v;
    }
}

int mg_pcyclic(int kind, int n, int p, double cond, mg_rng *r, double *A, double *B)
{
    const size_t nn = (size_t)n * n;
    int info = 0;
    if (kind == 1) {
        const double dtau = 0.125, U = 4;
        const double lambda = acosh(exp(0.5 * U * dtau));
        double *expK = malloc(sizeof *expK * nn);
        int *s = malloc(sizeof *s * (size_t)n);
        info = expK && s ? mg_hubbard_expk(n, 1, 1.0, dtau, expK) : -1;
        for (int l = 0; l < p && info == 0; ++l) {
            for (int i = 0; i < n; ++i)
                s[i] = mg_uniform(r) < 0.5 ? -1 : 1;
            mg_hubbard_slice(n, expK, lambda, s, B + l * nn);
            for (size_t e = 0; e < nn; ++e) {
                A[l * nn + e] = e % (size_t)(n + 1) == 0 ? 1.0 : 0.0;
                if (l + 1 < p)
                    B[l * nn + e] = -B[l * nn + e];
            }
        }
        free(expK);
        free(s);
        return info;
    }
    const double scale = 1.0 / sqrt((double)n);
    for (size_t e = 0; e < (size_t)p * nn; ++e) {
        A[e] = scale * mg_normal(r);
        B[e] = scale * mg_normal(r) * (kind == 2 ? 0.5 : 1.0);
    }
    if (kind == 2) { /* A_i = U diag(sigma) V^T */
        double *U = malloc(sizeof *U * nn), *V = malloc(sizeof *V * nn);
        for (int l = 0; l < p && info == 0; ++l) {
            info = mg_orthogonal(n, r, U);
            if (info == 0)
                info = mg_orthogonal(n, r, V);
            for (int j = 0; j < n && info == 0; ++j)
                for (int i = 0; i < n; ++i) {
                    double s = 0;
                    for (int k = 0; k < n; ++k)
                        s += U[(size_t)k * n + i] * (n > 1 ? pow(cond, -(double)k / (n - 1)) : 1.0) *
                             V[(size_t)k * n + j];
                    A[l * nn + (size_t)j * n + i] = s;
                }
        }
        free(U);
        free(V);
    }
    return info;
}
