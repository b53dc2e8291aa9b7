/* hubbard_greens: equal-time Green's functions of the 2-D Hubbard model by determinant QMC
 * ingredients, through the block p-cyclic inversion. For a random Hubbard-Stratonovich field on an
 * Lx x Ly periodic lattice with L time slices, each spin's matrix
 *
 *     M = | I                 B_L |      B_l = e^{-dtau K} e^{sigma lambda diag(s_l)},
 *         | -B_1   I              |      K = -t (nearest neighbours), cosh(lambda) = e^{U dtau/2}
 *         |       ...  ...        |
 *         |          -B_{L-1}  I  |
 *
 * is inverted whole by bcl_dpcyclic_inv (A_i = I, B_i = -B_l, B_p = +B_L), and its diagonal
 * blocks G_ll are checked against the stabilized direct formula
 * G_ll = (I + B_{l-1} ... B_1 B_L ... B_l)^{-1}, the product accumulated as U D T (QR with column
 * pivoting at every slice) and inverted with the large and small scales of D kept apart.
 * Usage: hubbard_greens [--device SPEC] [--lx 8] [--ly 8] [--slices 40] [--u 4] [--dtau 0.125]
 *                       [--seed 1] [--check all|N (slices checked)] */
#include "batchcl.h"
#include "hostutil.h"
#include "matgen.h"
#include "oracle.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);

static void gemm(int n, const double *a, const double *b, double *c) /* c = a b, n x n */
{
    const double one = 1, zero = 0;
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
}

/* G_ll = (I + B_{l-1} ... B_0 B_{L-1} ... B_l)^{-1} (0-based l; B_l applied first), the product
 * accumulated as U D T with a pivoted QR at every slice. */
static int direct_green(int n, int L, const double *Bs, int l, double *G)
{
    const size_t nn = (size_t)n * n;
    double *U = calloc(nn, sizeof *U), *T = calloc(nn, sizeof *T), *D = malloc(sizeof *D * n),
           *C = malloc(sizeof *C * nn), *W = malloc(sizeof *W * nn), *tau = malloc(sizeof *tau * n);
    int *jpvt = malloc(sizeof *jpvt * n), info = 0;
    for (int i = 0; i < n; ++i) {
        U[(size_t)i * n + i] = T[(size_t)i * n + i] = 1;
        D[i] = 1;
    }
    for (int step = 0; step < L && info == 0; ++step) {
        const double *Bl = Bs + (size_t)((l + step) % L) * nn;
        /* C = B U D, then C P = Q R: U = Q, D = |diag R|, T = D^-1 R P^T T */
        gemm(n, Bl, U, C);
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                C[(size_t)j * n + i] *= D[j];
        memset(jpvt, 0, sizeof *jpvt * n);
        info = LAPACKE_dgeqp3(LAPACK_COL_MAJOR, n, n, C, n, jpvt, tau);
        for (int i = 0; i < n && info == 0; ++i)
            D[i] = C[(size_t)i * n + i];
        /* W = D^-1 R (upper), columns permuted back: (R P^T)(:, jpvt[j]-1) = R(:, j) */
        memset(W, 0, sizeof *W * nn);
        for (int j = 0; j < n; ++j)
            for (int i = 0; i <= j; ++i)
                W[(size_t)(jpvt[j] - 1) * n + i] = C[(size_t)j * n + i] / D[i];
        gemm(n, W, T, U); /* U as scratch for the new T */
        memcpy(T, U, sizeof *T * nn);
        memcpy(U, C, sizeof *U * nn);
        if (info == 0)
            info = LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, n, n, U, n, tau);
    }
    /* I + U D T = U Db (Db^-1 U^T + Ds T) with D = Db Ds, Db = max(|D|, 1), Ds = D / Db:
     * G = (Db^-1 U^T + Ds T)^-1 Db^-1 U^T */
    for (int j = 0; j < n && info == 0; ++j)
        for (int i = 0; i < n; ++i) {
            const double db = fabs(D[i]) > 1 ? fabs(D[i]) : 1, ds = D[i] / db;
            C[(size_t)j * n + i] = U[(size_t)i * n + j] / db + ds * T[(size_t)j * n + i];
            G[(size_t)j * n + i] = U[(size_t)i * n + j] / db;
        }
    if (info == 0)
        info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, n, C, n, jpvt, G, n);
    free(U);
    free(T);
    free(D);
    free(C);
    free(W);
    free(tau);
    free(jpvt);
    return info;
}

int main(int argc, char **argv)
{
    const char *device = NULL;
    int lx = 8, ly = 8, L = 40, check = -1;
    double U = 4, dtau = 0.125, t = 1;
    unsigned long long seed = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--device"))
            device = argv[i + 1];
        else if (!strcmp(argv[i], "--lx"))
            lx = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--ly"))
            ly = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--slices"))
            L = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--u"))
            U = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--dtau"))
            dtau = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--check"))
            check = strcmp(argv[i + 1], "all") ? atoi(argv[i + 1]) : -1;
        else {
            fprintf(stderr, "hubbard_greens: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    const int n = lx * ly;
    if (n < 1 || L < 1) {
        fprintf(stderr, "hubbard_greens: the lattice and the slices must not be empty\n");
        return 2;
    }
    const size_t nn = (size_t)n * n, N = (size_t)n * L;
    bcl_context *ctx;
    bcl_status s = bcl_create(&ctx, device);
    if (s != BCL_SUCCESS) {
        fprintf(stderr, "hubbard_greens: %s: %s\n", bcl_status_string(s), bcl_last_error(NULL));
        return 2;
    }
    bcl_device_info dev;
    bcl_device_info_get(ctx, &dev);
    const double lambda = acosh(exp(0.5 * U * dtau));
    printf("hubbard_greens: %d x %d lattice, L = %d slices, beta = %g, U = %g, t = %g on %s\n", lx, ly,
           L, L * dtau, U, t, dev.name);
    double *expK = malloc(sizeof *expK * nn), *Bs = malloc(sizeof *Bs * nn * L);
    double *A = malloc(sizeof *A * nn * L), *B = malloc(sizeof *B * nn * L);
    double *Ginv = malloc(sizeof *Ginv * N * N), *Gd = malloc(sizeof *Gd * nn);
    int *field = malloc(sizeof *field * (size_t)n * L), *sl = malloc(sizeof *sl * n);
    if (!expK || !Bs || !A || !B || !Ginv || !Gd || !field || !sl || mg_hubbard_expk(lx, ly, t, dtau, expK)) {
        fprintf(stderr, "hubbard_greens: out of memory or e^{-dtau K} failed\n");
        return 2;
    }
    mg_rng r;
    mg_seed(&r, seed);
    for (size_t i = 0; i < (size_t)n * L; ++i)
        field[i] = mg_uniform(&r) < 0.5 ? -1 : 1;
    double worst = 0, density[2] = {0, 0}, docc = 0;
    double *diag_up = malloc(sizeof *diag_up * N);
    int ok = 1;
    for (int spin = 0; spin < 2 && ok; ++spin) {
        const double sigma = spin ? -1 : 1;
        for (int l = 0; l < L; ++l) {
            for (int i = 0; i < n; ++i)
                sl[i] = field[(size_t)l * n + i];
            mg_hubbard_slice(n, expK, sigma * lambda, sl, Bs + (size_t)l * nn);
            for (size_t e = 0; e < nn; ++e) {
                A[(size_t)l * nn + e] = e % (size_t)(n + 1) == 0 ? 1 : 0;
                B[(size_t)l * nn + e] = (l + 1 < L ? -1 : 1) * Bs[(size_t)l * nn + e];
            }
        }
        int info = 0;
        double t0 = hu_now();
        s = bcl_dpcyclic_inv(ctx, n, L, 1, A, B, Ginv, &info);
        const double secs = hu_now() - t0;
        if (s != BCL_SUCCESS) {
            fprintf(stderr, "hubbard_greens: bcl_dpcyclic_inv: %s: %s\n", bcl_status_string(s),
                    bcl_last_error(ctx));
            return 2;
        }
        const double res = oracle_pcyclic_residual(n, L, A, B, 1, Ginv);
        printf("  spin %s: M^-1 of order %zu in %.3f s (%s); ||M M^-1 - I|| / (N eps ||M|| "
               "||M^-1||) = %.3g\n",
               spin ? "down" : "up", N, secs, bcl_last_kernel(ctx), res);
        ok &= res < 30;
        /* the diagonal blocks against the direct formula */
        for (int l = 0; l < L; ++l) {
            const double *Gl = Ginv + ((size_t)l * n) * N + (size_t)l * n;
            for (int i = 0; i < n; ++i) {
                const double g = Gl[(size_t)i * N + i];
                density[spin] += (1 - g) / ((double)n * L);
                if (spin == 0)
                    diag_up[(size_t)l * n + i] = 1 - g;
                else
                    docc += diag_up[(size_t)l * n + i] * (1 - g) / ((double)n * L);
            }
            if (check >= 0 && l >= check)
                continue;
            if (direct_green(n, L, Bs, l, Gd) != 0) {
                fprintf(stderr, "hubbard_greens: the direct formula failed at slice %d\n", l);
                return 2;
            }
            double dn = 0, gn = 0;
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) {
                    const double d = Gl[(size_t)j * N + i] - Gd[(size_t)j * n + i];
                    dn += d * d;
                    gn += Gd[(size_t)j * n + i] * Gd[(size_t)j * n + i];
                }
            const double rel = sqrt(dn / gn);
            worst = rel > worst || isnan(rel) ? rel : worst;
        }
    }
    const int pass = ok && worst < 1e-8;
    printf("  <n_up> = %.6f, <n_down> = %.6f, <n_up n_down> = %.6f (this field)\n", density[0],
           density[1], docc);
    printf("  diagonal blocks G_ll vs the stabilized (I + B_{l-1}..B_l)^-1: max ||dG||_F/||G||_F = "
           "%.3g (limit 1e-8): %s\n",
           worst, pass ? "PASS" : "FAIL");
    free(expK);
    free(Bs);
    free(A);
    free(B);
    free(Ginv);
    free(Gd);
    free(field);
    free(sl);
    free(diag_up);
    bcl_destroy(ctx);
    return pass ? 0 : 1;
}
