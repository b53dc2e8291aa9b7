/* Test-matrix generators (double precision, column-major) shared by the tests and the batchcl
 * command. Deterministic: every generator draws from the caller's rng. */
#ifndef BATCHCL_MATGEN_H
#define BATCHCL_MATGEN_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} mg_rng;

void mg_seed(mg_rng *r, uint64_t seed);
double mg_uniform(mg_rng *r); /* [0, 1) */
double mg_normal(mg_rng *r);

/* The papers' randomized Xi_rho matrices (Abbas-Turki & Graillat 2016, eq. 6): A = Q R Q^T with Q
 * the orthogonal factor of the Householder tridiagonalization of Xi_rho (ones on the diagonal, rho
 * elsewhere) and R a random, diagonally dominant, symmetric tridiagonal matrix. SPD. */
int mg_xi_rho(int n, double rho, mg_rng *r, double *A);

/* Random orthogonal Q (n*n): Householder QR of a Gaussian matrix, signs fixed (Haar measure). */
int mg_orthogonal(int n, mg_rng *r, double *Q);

/* Q diag(lambda) Q^T with random orthogonal Q. */
int mg_from_spectrum(int n, const double *lambda, mg_rng *r, double *A);

/* SPD with 2-norm condition number `cond`: eigenvalues geometric from 1 down to 1/cond. */
int mg_spd_cond(int n, double cond, mg_rng *r, double *A);

/* Random right-hand sides, uniform in [-1, 1). */
void mg_vector(int len, mg_rng *r, double *b);

/* ---- block p-cyclic matrices (bcl_xpcyclic_inv's blocks: A p diagonal blocks, B p blocks with
 * B_p the top-right corner; all n*n column-major) ---- */

/* e^{-dtau K} for the hopping matrix K = -t * (nearest neighbours) of an nx x ny periodic
 * lattice (n = nx*ny sites, site x + nx*y), by the eigendecomposition of K. */
int mg_hubbard_expk(int nx, int ny, double t, double dtau, double *expK);

/* B = e^{-dtau K} e^{V}, V = diag(lambda * s_i), s_i = +-1 (one time slice, one spin). */
void mg_hubbard_slice(int n, const double *expK, double lambda, const int *s, double *Bl);

/* kind 0: Gaussian blocks (entries N(0,1)/sqrt(n)); kind 1: determinant QMC on a ring of n sites
 * (t = 1, U = 4, dtau = 0.125, random Hubbard-Stratonovich field: A_i = I, B_i = -B_i for i < p,
 * B_p = +B_L); kind 2: ill-conditioned diagonal blocks with singular values from 1 down to 1/cond,
 * Gaussian B_i scaled by 1/2. */
int mg_pcyclic(int kind, int n, int p, double cond, mg_rng *r, double *A, double *B);

#endif
