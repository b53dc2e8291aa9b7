/* The batch PDE option pricer's core, shared by the pde_pricer command and tests/test_pde.c.
 *
 * Model (Egloff 2010, tridiagonal-pcr-pde-egloff-2010.txt, Sect. 2): local volatility with rate
 * r, continuous yield q and discrete cash / proportional dividends, priced in the forward /
 * dividend-floor coordinate x = (S - D_t) / (F_t - D_t) (eqs. 6-13), where the pure process X has
 * local volatility ζ(t, x) (eq. 10) and the forward value G(t, x) = V(t, S) exp(r (T - t)) solves
 * ∂G/∂t + ½ x² ζ² ∂²G/∂x² = 0 (eq. 14; the paper writes G = V, which holds for the undiscounted
 * value: eq. 14 has no reaction term, so the discount factor is applied at the end). Barrier
 * contracts use z = S / B instead, which keeps the barrier on one node as the forward moves (a
 * convection term g z ∂G/∂z with g = r - q appears). θ-scheme on non-uniform grids (eqs. 15-22,
 * Algorithm 1), every contract of the book stepping together: per time step one batched
 * tridiagonal solve (bcl_?gtsv_cl) over the whole book, everything device-resident.
 *
 * Functions returning int return 0 on success and otherwise -1 with an explanation in err. */
#ifndef PDE_CORE_H
#define PDE_CORE_H

#include "batchcl.h"
#include "pde_layout.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    char id[32];
    int is_call;         /* 1 call, 0 put */
    int american;        /* 1: early exercise at any time (by projection) */
    double spot, strike, maturity, rate, yield;
    double lower_barrier; /* > 0: down-and-out (knocked out at S <= lower_barrier), 0: none */
    double upper_barrier; /* > 0: up-and-out, 0: none */
    int ndiv;
    double div_time[PDE_MAXDIV], div_cash[PDE_MAXDIV], div_prop[PDE_MAXDIV];
} pde_contract;

/* Pure-process local volatility ζ(t, x) on a grid (nt times × nx points, row-major by time),
 * bilinear between grid points, flat outside; nt = nx = 1 is a constant. */
typedef struct {
    int nt, nx;
    double *t, *x, *zeta;
} pde_vol;

typedef struct {
    int m;               /* space nodes per contract */
    int steps;           /* time steps (= batched tridiagonal solves) */
    int rannacher;       /* fully implicit half-steps replacing the first Crank-Nicolson steps
                          * (even; 0: none) */
    int far_bc;          /* PDE_BC_DIRICHLET, PDE_BC_NEUMANN or PDE_BC_LINEAR */
    double width;        /* far boundaries at ± width · ζmax · sqrt(T) in log-coordinates */
    double concentration; /* sinh grid: α = concentration · (domain length) at strike, barriers */
    double time_refine;  /* τ = τa + L ((1 - β) u + β u²) in each time segment: refinement near
                          * maturity and after dividend dates */
    int american;        /* PDE_AMERICAN_SPLITTING or PDE_AMERICAN_PROJECTION */
    size_t chunk;        /* at most this many contracts per device pass (0: as many as fit in
                          * half the device memory) */
} pde_config;

/* Early exercise: after each step's solve, projection G = max(G, exercise value) (first order in
 * time), or the Ikonen-Toivanen splitting, which carries the exercise multiplier λ into the next
 * step's right-hand side (second order observed, same cost: one solve per step). */
enum { PDE_AMERICAN_SPLITTING = 0, PDE_AMERICAN_PROJECTION = 1 };

typedef struct {
    double price, delta, gamma;
    int info; /* 0, or the first time step (1-based) whose tridiagonal solve failed */
} pde_result;

typedef struct {
    double setup;    /* host: grids, buffers, program (wall seconds) */
    double upload;   /* host to device copies (device time) */
    double assembly; /* all the pricer's kernels (device time): the sum of the next four */
    double coefficients; /* per-step coefficients, one work-item per contract */
    double assemble;     /* the tridiagonal systems and right-hand sides, one per node */
    double exercise;     /* American projection / splitting update */
    double payoff;       /* terminal payoff and the gather at the spot */
    double solve;    /* batched tridiagonal solves (device time) */
    double download; /* device to host copies (device time) */
    double total;    /* wall time of the whole pricing call */
    long launches;   /* kernels and solves enqueued */
} pde_timing;

void pde_config_default(pde_config *cfg);

/* A European vanilla without barriers or discrete dividends. */
void pde_vanilla(pde_contract *c, const char *id, int is_call, double spot, double strike,
                 double maturity, double rate, double yield);

/* Helpers: an error message into err (returns -1); a whole file as a string (NULL if unreadable). */
int pde_fail(char *err, size_t cap, const char *fmt, ...);
char *pde_read_text(const char *path, size_t *len);

/* A contract's forward / dividend-floor terms (eqs. 6-9): its dividends in time order with
 * a_j / R(t_j) (R right-continuous, eq. 7) and 1 - b_j; K0 = S0 - Σ a_j / R(t_j), so that
 * F_t - D_t = R_t K0; R_T, and A_T = the cash paid after T in units of R (D_T = R_T A_T). */
typedef struct {
    int ndiv;
    double time[PDE_MAXDIV], scaled_cash[PDE_MAXDIV], keep[PDE_MAXDIV];
    double K0, RT, AT;
} pde_dividend_terms;
void pde_dividend_terms_get(const pde_contract *c, pde_dividend_terms *d);

/* ---- book and volatility input (pde_book.c) ---- */

/* CSV columns, in this order (header line and lines starting with '#' are skipped):
 *   id,type,style,spot,strike,maturity,rate,yield,lower_barrier,upper_barrier,dividends
 * type call|put, style european|american, barriers 0 or empty for none, dividends empty or
 * "t:cash:prop;t:cash:prop;..." (prop a fraction in [0, 1)). */
extern const char pde_csv_header[];
int pde_parse_csv_line(const char *line, pde_contract *c, char *err, size_t cap);
/* A .json file ({"contracts": [{"id": ..., "type": ..., "dividends": [{"time": ..,
 * "cash": .., "proportional": ..}]}]}, same field names as the CSV) or else CSV. *book is malloc'd. */
int pde_read_book(const char *path, pde_contract **book, size_t *n, char *err, size_t cap);
int pde_parse_book_json(const char *text, pde_contract **book, size_t *n, char *err, size_t cap);
int pde_have_json(void);
void pde_write_book_csv(FILE *f, const pde_contract *book, size_t n);
/* Checks one contract (positive spot, strike, maturity; barriers on the right side of the spot;
 * dividends inside the model's assumptions). */
int pde_check_contract(const pde_contract *c, char *err, size_t cap);
/* A random book for benchmarks: strikes around the spot, calls and puts, European and American,
 * barriers, continuous yields and discrete dividends. */
void pde_generate_book(size_t n, uint64_t seed, pde_contract *book);

int pde_vol_constant(pde_vol *v, double zeta, char *err, size_t cap);
/* First line: a label, then the x grid; each further line: t, then ζ(t, x) for every x. */
int pde_read_vol_csv(const char *path, pde_vol *v, char *err, size_t cap);
int pde_parse_vol_csv(const char *text, pde_vol *v, char *err, size_t cap);
void pde_vol_free(pde_vol *v);

/* ---- the device pricer (pde_core.c) ---- */

typedef struct pde_engine pde_engine;

/* Builds the kernels for ctx's device. kernel_file: NULL searches $BATCHCL_PDE_KERNEL, the
 * installed copy, then the source tree. dbl: double precision (else float). */
int pde_engine_create(bcl_context *ctx, int dbl, const char *kernel_file, pde_engine **engine,
                      char *err, size_t cap);
void pde_engine_destroy(pde_engine *engine);
/* Prices n contracts: res[k] gets price, delta and gamma at the contract's spot. timing may be
 * NULL. A contract whose solve failed gets info != 0 and NaN results; the call still succeeds. */
int pde_price(pde_engine *engine, const pde_config *cfg, const pde_vol *vol,
              const pde_contract *book, size_t n, pde_result *res, pde_timing *timing, char *err,
              size_t cap);

/* ---- closed forms and an independent CPU reference (pde_reference.c) ---- */

/* European contracts under constant pure-process volatility ζ: Black-Scholes-Merton with the
 * discrete dividends of the model (S_T = (F_T - D_T) X_T + D_T with lognormal X_T: Black's
 * formula on the forward F_T - D_T and strike K - D_T), or for barrier contracts without
 * discrete dividends the Merton / Reiner-Rubinstein knock-out formulas (no rebate). Returns -1
 * when the contract has no closed form here (American, double barriers). */
int pde_closed_form(const pde_contract *c, double zeta, pde_result *out);
/* American or European puts and calls without barriers or discrete dividends under constant
 * volatility: Crank-Nicolson (Rannacher start) in log S on a uniform grid of m nodes, early
 * exercise by the penalty method (iterated LAPACK dgtsv solves until the exercise region
 * settles), in double on the CPU. Independent of the device pricer's coordinates, grid and
 * projection. */
int pde_reference(const pde_contract *c, double sigma, int m, int steps, pde_result *out);

#endif
