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

/* ||X - Xref||_1 / ||Xref||_1, X float or double. */
double oracle_rel_diff(size_t rows, size_t cols, int dbl, const void *X, const double *Xref);

/* ||M||_1 of an N x N double matrix. */
double oracle_norm1(size_t N, const double *M);

#endif
