/* Layout of the arrays the PDE pricer's host code (pde_core.c) hands to its kernels
 * (pde_pricer.cl). The host prepends this file to the kernel source, so both sides read the same
 * indices: plain preprocessor definitions, no includes. */
#ifndef PDE_LAYOUT_H
#define PDE_LAYOUT_H

/* Per-contract constants: real [batch][PDE_CN]. The space coordinate of a contract is
 * z = c(t) x with x = (S - D_t) / (F_t - D_t) (Egloff 2010, eq. 12) and c(t) = c0 exp(g t): c = 1
 * for contracts without barriers, c(t) = F_t / B for barrier contracts (z = S / B, the barrier
 * stays on one node). F_t - D_t = R_t K0, D_t = R_t A_t (A_t: cash dividends still ahead, in
 * units of R). */
#define PDE_C_STRIKE 0
#define PDE_C_PHI 1        /* +1 call, -1 put */
#define PDE_C_RATE 2       /* r, discounting */
#define PDE_C_GROWTH 3     /* r - q, the forward's growth between dividends */
#define PDE_C_MATURITY 4
#define PDE_C_K0 5
#define PDE_C_SCALE0 6     /* c0 */
#define PDE_C_SCALE_RATE 7 /* g = c'/c: the drift of the z-coordinate PDE */
#define PDE_CN 8

/* Per-contract flags: int [batch][PDE_FN]. */
#define PDE_F_LOWER 0    /* boundary kind at z_0 */
#define PDE_F_UPPER 1    /* boundary kind at z_{m-1} */
#define PDE_F_AMERICAN 2 /* early exercise by projection */
#define PDE_F_NDIV 3
#define PDE_FN 4

/* Boundary kinds. */
#define PDE_BC_DIRICHLET 0 /* the value far from the strike: the payoff's linear asymptote */
#define PDE_BC_NEUMANN 1   /* its slope, through a ghost node */
#define PDE_BC_LINEAR 2    /* d2V/dS2 = 0: the value moves with the PDE without diffusion */
#define PDE_BC_BARRIER 3   /* knock-out: value 0 on the barrier node */

/* Discrete dividends: real [batch][PDE_MAXDIV][3] = time t_j, cash a_j / R(t_j), 1 - b_j. */
#define PDE_MAXDIV 16

/* Per-step coefficients, one step from node time t_old to t_new < t_old: real [batch][PDE_SN]. */
#define PDE_S_DTAU 0
#define PDE_S_THETA 1
#define PDE_S_INVC_OLD 2 /* 1 / c(t): x = z / c */
#define PDE_S_INVC_NEW 3
#define PDE_S_VT_OLD 4   /* vol surface time bracket: index (a whole number) and weight */
#define PDE_S_VW_OLD 5
#define PDE_S_VT_NEW 6
#define PDE_S_VW_NEW 7
#define PDE_S_SA_NEW 8   /* S = sa z + sb at t_new (the exercise value of American contracts) */
#define PDE_S_SB_NEW 9
#define PDE_S_ESCALE_NEW 10 /* exp(r (T - t_new)): forward value of money paid at t_new */
#define PDE_S_LOWER_NEW 11  /* boundary data: Dirichlet value, or Neumann slope dG/dz */
#define PDE_S_LOWER_OLD 12  /* Neumann slope at t_old */
#define PDE_S_UPPER_NEW 13
#define PDE_S_UPPER_OLD 14
#define PDE_SN 16

/* Per-contract values gathered around the spot node i: G at nodes i-1, i, i+1. */
#define PDE_GN 3

#endif
