/* The reference oracle: LAPACK (LAPACKE, double precision) and LAPACK-style scaled residuals.
 * Arrays are float (dbl = 0) or double (dbl = 1), column-major, as the library takes them;
 * residuals are computed in double. */
#ifndef BATCHCL_ORACLE_H
#define BATCHCL_ORACLE_H

#include <stddef.h>

double oracle_eps(int dbl);

/* Element i of a float or double array, as double; and the store. */
double oracle_get(const void *p, int dbl, size_t i);
void oracle_set(void *p, int dbl, size_t i, double v);

/* Tridiagonal T (dl, d, du: m values each, dl[0] and du[m-1] ignored): max over the nrhs columns
 * of ||T x - b||_inf / (||T||_inf ||x||_inf m eps); infinite on NaN. */
double oracle_gtsv_residual(int m, int nrhs, int dbl, const void *dl, const void *d, const void *du,
                            const void *b, const void *x);

/* max over columns of ||A x - b||_inf / (||A||_inf ||x||_inf n eps), A symmetric n*n (full) */
double oracle_sysv_residual(int n, int nrhs, int dbl, const void *A, const void *B, const void *X);

/* ||A - L D L^T||_inf / (||A||_inf n eps) for a row-packed factor (row i: L(i,0..i-1), D(i)) */
double oracle_ldlt_residual(int n, int dbl, const void *A, const void *LD);

/* LAPACK dpotrf's info on the lower triangle of A (converted to double) */
int oracle_potrf_info(int n, int dbl, const void *A);

/* Solution of A X = B by LAPACK dposv in double, and the 1-norm condition estimate (dpocon). */
int oracle_posv(int n, int nrhs, int dbl, const void *A, const void *B, double *X, double *cond);

/* max over columns of ||x - x_ref||_inf / ||x_ref||_inf */
double oracle_forward_error(int n, int nrhs, int dbl, const void *X, const double *Xref);

/* ---- non-symmetric eigenvalues ---- */

/* LAPACK dgeevx (balancing 'B', as dgeev) on A converted to double: eigenvalues wr + i wi, the
 * reciprocal condition number of each (rcond) and the 1-norm of the balanced matrix (*abnrm: the
 * scale of LAPACK's error bound eps*abnrm/rcond). Returns LAPACK's info. */
int oracle_geev(int n, int dbl, const void *A, double *wr, double *wi, double *rcond,
                double *abnrm);

/* ||A||_F of an n-by-n float or double matrix, computed in double. */
double oracle_fnorm(int n, int dbl, const void *A);

/* Match the computed eigenvalues (wr, wi: float or double) with reference ones as multisets:
 * each reference eigenvalue, most sensitive last, takes the nearest unmatched computed one.
 * Returns the worst |lambda - lambda_ref| / tol_j (infinite on NaN), with tol_j = n eps anorm /
 * rcond_j raised, to closure, to the tol_i of a coupled neighbour: one within min(tol_i, 4 x its
 * nearest neighbour's distance) of it, either way round (a defective eigenvalue's cluster); *where
 * receives the index of the worst reference eigenvalue. */
double oracle_eig_match(int n, int dbl, const void *wr, const void *wi, const double *wr_ref,
                        const double *wi_ref, const double *rcond, double anorm, int *where);

/* Are complex eigenvalues in conjugate pairs (wr equal, wi opposite, positive first)? Returns the
 * index of the first violation, or -1. */
int oracle_pairs_violation(int n, int dbl, const void *wr, const void *wi);

/* Right eigenvectors in dgeev packing: max over eigenpairs of ||A v - lambda v|| / (||A||_F n eps)
 * (with ||v|| = 1 expected), and in *norm_err the worst | ||v|| - 1 | / (n eps), or infinity when
 * a complex vector's largest component is not real. */
double oracle_vectors_residual(int n, int dbl, const void *A, const void *wr, const void *wi,
                               const void *VR, double *norm_err);

/* ---- block p-cyclic matrices (bcl_xpcyclic_inv's convention: A_1..A_p on the diagonal, B_1..B_p-1
 * below it, B_p in the top-right corner; p = 1: A_1 + B_1) ---- */

/* The N x N matrix H (N = n*p), column-major. */
void oracle_pcyclic_assemble(int n, int p, const double *A, const double *B, double *H);

/* ||H X - I||_1 / (N eps ||H||_1 ||X||_1) for X float or double (eps of its precision); H X is
 * formed block by block from A and B in double. */
double oracle_pcyclic_residual(int n, int p, const double *A, const double *B, int dbl,
                               const void *X);

/* LAPACK dgetrf + dgetri: the inverse of the N x N matrix H in place; LAPACK's info. */
int oracle_getri(int N, double *H);
/* the same for H double or (dbl == 0) float: LAPACK dgetrf + dgetri or sgetrf + sgetri */
int oracle_getri_any(int N, int dbl, void *H);

/* ||X - Xref||_1 / ||Xref||_1, X float or double. */
double oracle_rel_diff(size_t rows, size_t cols, int dbl, const void *X, const double *Xref);

/* ||M||_1 of an N x N double matrix. */
double oracle_norm1(size_t N, const double *M);

#endif
