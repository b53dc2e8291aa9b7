/* The PDE pricer's device side: terminal payoff, per-step coefficients, assembly of every
 * contract's tridiagonal θ-scheme system and of its boundary rows, early exercise of American
 * contracts, and the gather of the values around the spot. The batched tridiagonal solve between
 * assembly and early exercise is batchcl's bcl_?gtsv_cl. The host prepends pde_layout.h and
 * builds with -DPDE_DOUBLE (double precision), -DPDE_VOL_GRID (a local volatility grid, else a
 * constant) and -DPDE_ROWS (CPUs: one work-item per contract row in the per-node kernels).
 *
 * The equation (Egloff 2010, tridiagonal-pcr-pde-egloff-2010.txt, eq. 14, in the z = c(t) x
 * coordinate of pde_layout.h, time to maturity τ = T - t):
 *     ∂G/∂τ = a(t,z) ∂²G/∂z² + g z ∂G/∂z,   a = ½ z² ζ(t, z / c(t))²,
 * G the forward (undiscounted) value: V(t, S) = exp(-r (T - t)) G(t, z). θ-scheme (eqs. 21-22)
 * from τ_old to τ_new = τ_old + Δτ:
 *     (I - θ Δτ L_new) G_new = (I + (1 - θ) Δτ L_old) G_old,
 * with the non-uniform three-point weights of eqs. 17-18. Arrays are contiguous per contract
 * (node i of contract k at k*m + i). No barrier() anywhere. */

#ifdef PDE_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#else
typedef float real;
#endif

/* In the per-node kernels: selects rather than built-in calls, which some CPU compilers (PoCL)
 * do not vectorize. */
#define MAX_R(a, b) ((a) > (b) ? (a) : (b))
#define ABS_R(a) ((a) < 0 ? -(a) : (a))

/* R_t and the cash A_t still ahead, both as seen just before t: a dividend paid exactly at t is
 * still to come (exercise at a dividend date happens cum dividend). */
static void growth_at(__global const real *div, int ndiv, real growth_rate, real t, real *R,
                      real *A)
{
    real keep = 1, ahead = 0;
    for (int j = 0; j < ndiv; ++j) {
        if (div[3 * j] < t)
            keep *= div[3 * j + 2];
        else
            ahead += div[3 * j + 1];
    }
    *R = exp(growth_rate * t) * keep;
    *A = ahead;
}

/* Bracket of v in the increasing grid[0..n-1]: index lo in [0, n-2] and weight w in [0, 1] of
 * grid[lo + 1], flat outside (lo = 0, w = 0 when n == 1). */
static void bracket(__global const real *grid, int n, real v, int *index, real *weight)
{
    int lo = 0;
    real w = 0;
    if (n > 1) {
        if (v >= grid[n - 1]) {
            lo = n - 2;
            w = 1;
        } else if (v > grid[0]) {
            int hi = n - 1;
            while (hi - lo > 1) {
                const int mid = (lo + hi) / 2;
                if (grid[mid] <= v)
                    lo = mid;
                else
                    hi = mid;
            }
            w = (v - grid[lo]) / (grid[lo + 1] - grid[lo]);
        }
    }
    *index = lo;
    *weight = w;
}

/* ζ(t, x), bilinear on the (vt, vx) grid, flat outside; the time bracket comes precomputed. */
static real local_vol(__global const real *vx, __global const real *vz, int nt, int nx,
                      real tindex, real tweight, real x)
{
    int lo;
    real w;
    bracket(vx, nx, x, &lo, &w);
    const int it = (int)tindex, it1 = nt > 1 ? it + 1 : it, ix1 = nx > 1 ? lo + 1 : lo;
    const real v0 = (1 - w) * vz[it * nx + lo] + w * vz[it * nx + ix1];
    const real v1 = (1 - w) * vz[it1 * nx + lo] + w * vz[it1 * nx + ix1];
    return (1 - tweight) * v0 + tweight * v1;
}

/* The value far from the strike and its slope dG/dz at node z, time t: the payoff's linear
 * asymptote carried to maturity (G is a martingale in x, so a linear payoff keeps its value),
 * or for American contracts the exercise value when it is larger. */
static void far_value(__global const real *con, __global const real *div, int ndiv, int american,
                      real z, real t, real *value, real *slope)
{
    const real K = con[PDE_C_STRIKE], phi = con[PDE_C_PHI], T = con[PDE_C_MATURITY];
    const real mu = con[PDE_C_GROWTH], K0 = con[PDE_C_K0];
    const real invc = exp(-con[PDE_C_SCALE_RATE] * t) / con[PDE_C_SCALE0];
    real RT, AT;
    growth_at(div, ndiv, mu, T, &RT, &AT);
    const real lin = phi * (RT * (K0 * z * invc + AT) - K);
    *value = lin > 0 ? lin : (real)0;
    *slope = lin > 0 ? phi * RT * K0 * invc : (real)0;
    if (american) {
        real R, A;
        growth_at(div, ndiv, mu, t, &R, &A);
        const real escale = exp(con[PDE_C_RATE] * (T - t));
        const real exercise = phi * (R * (K0 * z * invc + A) - K) * escale;
        if (exercise > *value) {
            *value = exercise;
            *slope = phi * R * K0 * invc * escale;
        }
    }
}

/* Terminal condition G(T, z_i): the payoff averaged over [z_i - δ, z_i + δ], δ a quarter of the
 * node's two spacings (smooths the kink at the strike so that Crank-Nicolson converges at second
 * order; symmetric about the node, so the payoff's linear parts stay exact). */
__kernel void pde_payoff(int m, uint batch, __global const real *z, __global real *G,
                         __global const real *con, __global const int *flags,
                         __global const real *div)
{
    const size_t gid = get_global_id(0);
    if (gid >= (size_t)batch * (size_t)m)
        return;
    const uint k = (uint)(gid / (size_t)m);
    const int i = (int)(gid - (size_t)k * (size_t)m);
    __global const real *c = con + (size_t)k * PDE_CN;
    __global const int *f = flags + (size_t)k * PDE_FN;
    const int kind = i == 0 ? f[PDE_F_LOWER] : i == m - 1 ? f[PDE_F_UPPER] : -1;
    if (kind == PDE_BC_BARRIER) {
        G[gid] = 0;
        return;
    }
    const real K = c[PDE_C_STRIKE], phi = c[PDE_C_PHI], T = c[PDE_C_MATURITY];
    real RT, AT;
    growth_at(div + (size_t)k * PDE_MAXDIV * 3, f[PDE_F_NDIV], c[PDE_C_GROWTH], T, &RT, &AT);
    const real invc = exp(-c[PDE_C_SCALE_RATE] * T) / c[PDE_C_SCALE0];
    const real sa = RT * c[PDE_C_K0] * invc, sb = RT * AT; /* S_T = sa z + sb */
    const real zi = z[gid];
    const real hm = i > 0 ? zi - z[gid - 1] : (real)0, hp = i < m - 1 ? z[gid + 1] - zi : (real)0;
    const real delta = (real)0.25 * (i > 0 && i < m - 1 ? hm + hp : (real)0);
    const real zl = zi - delta, zr = zi + delta;
    const real zk = (K - sb) / sa; /* where the payoff's kink lies */
    real value;
    if (zr <= zl) {
        value = fmax(phi * (sa * zi + sb - K), (real)0);
    } else {
        /* the payoff is linear where positive: its integral there is its midpoint value × length */
        const real a = phi > 0 ? fmax(zl, zk) : zl, b = phi > 0 ? zr : fmin(zr, zk);
        value = b > a ? phi * (sa * (real)0.5 * (a + b) + sb - K) * (b - a) / (zr - zl) : (real)0;
    }
    G[gid] = value;
}

/* One work-item per contract: the coefficients of step `step` (node times tgrid[step] > tgrid[step+1]),
 * and a sticky record of the first step whose solve failed (the solver's info is per call). */
__kernel void pde_step_params(uint batch, int nsteps, int step, int m, __global const real *tgrid,
                              __global const uchar *implicit_step, __global const real *con,
                              __global const int *flags, __global const real *div,
                              __global const real *z, __global const real *vt, int nt,
                              __global real *sp, __global const int *info, __global int *failed)
{
    const uint k = (uint)get_global_id(0);
    if (k >= batch)
        return;
    if (step > 0 && info[k] != 0 && failed[k] == 0)
        failed[k] = step; /* the solve of step - 1 (1-based: step) failed */
    __global const real *c = con + (size_t)k * PDE_CN;
    __global const int *f = flags + (size_t)k * PDE_FN;
    __global const real *dv = div + (size_t)k * PDE_MAXDIV * 3;
    __global real *p = sp + (size_t)k * PDE_SN;
    const int ndiv = f[PDE_F_NDIV], american = f[PDE_F_AMERICAN];
    const size_t row = (size_t)k * (size_t)(nsteps + 1);
    const real t_old = tgrid[row + step], t_new = tgrid[row + step + 1];
    p[PDE_S_DTAU] = t_old - t_new;
    p[PDE_S_THETA] = implicit_step[(size_t)k * nsteps + step] ? (real)1 : (real)0.5;
    const real c0 = c[PDE_C_SCALE0], g = c[PDE_C_SCALE_RATE];
    const real invc_new = exp(-g * t_new) / c0;
    p[PDE_S_INVC_OLD] = exp(-g * t_old) / c0;
    p[PDE_S_INVC_NEW] = invc_new;
    int index;
    real weight;
    bracket(vt, nt, t_old, &index, &weight);
    p[PDE_S_VT_OLD] = (real)index;
    p[PDE_S_VW_OLD] = weight;
    bracket(vt, nt, t_new, &index, &weight);
    p[PDE_S_VT_NEW] = (real)index;
    p[PDE_S_VW_NEW] = weight;
    real R, A;
    growth_at(dv, ndiv, c[PDE_C_GROWTH], t_new, &R, &A);
    p[PDE_S_SA_NEW] = R * c[PDE_C_K0] * invc_new;
    p[PDE_S_SB_NEW] = R * A;
    p[PDE_S_ESCALE_NEW] = exp(c[PDE_C_RATE] * (c[PDE_C_MATURITY] - t_new));
    /* boundary data: Dirichlet value at t_new, or Neumann slopes at t_new and t_old */
    for (int side = 0; side < 2; ++side) {
        const int kind = f[side ? PDE_F_UPPER : PDE_F_LOWER];
        const real zb = z[(size_t)k * (size_t)m + (side ? (size_t)(m - 1) : 0)];
        real value = 0, slope_new = 0, slope_old = 0, unused;
        if (kind == PDE_BC_DIRICHLET || kind == PDE_BC_NEUMANN) {
            far_value(c, dv, ndiv, american, zb, t_new, &value, &slope_new);
            far_value(c, dv, ndiv, american, zb, t_old, &unused, &slope_old);
        }
        p[side ? PDE_S_UPPER_NEW : PDE_S_LOWER_NEW] = kind == PDE_BC_NEUMANN ? slope_new : value;
        p[side ? PDE_S_UPPER_OLD : PDE_S_LOWER_OLD] = slope_old;
    }
}

/* Off-diagonals of row i of L (the diagonal is minus their sum: the weights of each derivative
 * sum to zero) for the diffusion coefficient a and the convection coefficient b = g z at node i,
 * from the weights of eqs. 17-18 (w2: second derivative, w1: first, -/+: the left/right
 * neighbour). Where the central first derivative would make an off-diagonal negative (cell Péclet
 * number above 1) the upwind one-sided difference replaces it. Selects, no branches: CPU
 * compilers vectorize the work-item loop. */
static void operator_row(real a, real b, real hm, real hp, real w2m, real w2p, real w1m, real w1p,
                         real *lo, real *up)
{
    const int upwind = 2 * a < ABS_R(b) * MAX_R(hm, hp);
    const real u1m = b > 0 ? (real)0 : -1 / hm, u1p = b > 0 ? 1 / hp : (real)0;
    *lo = a * w2m + b * (upwind ? u1m : w1m);
    *up = a * w2p + b * (upwind ? u1p : w1p);
}

/* ζ at node z for the step's old and new times: a constant, or with -DPDE_VOL_GRID the surface
 * (its lookups have loops; the constant build stays branch-free). */
static void node_vol(__global const real *p, __global const real *vx, __global const real *vz,
                     int nt, int nx, real z, real *zeta_old, real *zeta_new)
{
#ifdef PDE_VOL_GRID
    *zeta_old = local_vol(vx, vz, nt, nx, p[PDE_S_VT_OLD], p[PDE_S_VW_OLD], z * p[PDE_S_INVC_OLD]);
    *zeta_new = local_vol(vx, vz, nt, nx, p[PDE_S_VT_NEW], p[PDE_S_VW_NEW], z * p[PDE_S_INVC_NEW]);
#else
    (void)p, (void)vx, (void)nt, (void)nx, (void)z;
    *zeta_old = *zeta_new = vz[0];
#endif
}

/* Row i of contract k's interior system (dl, d, du) and right-hand side from G, for the node
 * at gid = k m + i with neighbours gm, gp. */
static void assemble_node(size_t gid, size_t gm, size_t gp, __global const real *restrict z,
                          __global const real *restrict G, __global real *restrict dl,
                          __global real *restrict d, __global real *restrict du,
                          __global real *restrict rhs, __global const real *restrict p, real g,
                          __global const real *restrict vx, __global const real *restrict vz,
                          int nt, int nx, __global const real *restrict lambda)
{
    const real zi = z[gid], Gi = G[gid], Gm = G[gm], Gp = G[gp];
    const real hm = ABS_R(zi - z[gm]), hp = ABS_R(z[gp] - zi);
    const real dtau = p[PDE_S_DTAU], theta = p[PDE_S_THETA];
    /* Ikonen-Toivanen splitting: the early-exercise multiplier of the last step enters
     * explicitly (0 for European contracts and for the projection) */
    const real exercise_rate = lambda[gid];
    real zeta_old, zeta_new;
    node_vol(p, vx, vz, nt, nx, zi, &zeta_old, &zeta_new);
    const real a_old = (real)0.5 * zi * zi * zeta_old * zeta_old;
    const real a_new = (real)0.5 * zi * zi * zeta_new * zeta_new;
    const real b = g * zi;
    const real inv = 1 / (hm * hp * (hm + hp));
    const real w2m = 2 * hp * inv, w2p = 2 * hm * inv, w1m = -hp * hp * inv, w1p = hm * hm * inv;
    real lo_o, up_o, lo_n, up_n;
    operator_row(a_old, b, hm, hp, w2m, w2p, w1m, w1p, &lo_o, &up_o);
    operator_row(a_new, b, hm, hp, w2m, w2p, w1m, w1p, &lo_n, &up_n);
    const real explicit_part = lo_o * (Gm - Gi) + up_o * (Gp - Gi);
    dl[gid] = -theta * dtau * lo_n;
    d[gid] = 1 + theta * dtau * (lo_n + up_n);
    du[gid] = -theta * dtau * up_n;
    rhs[gid] = Gi + (1 - theta) * dtau * explicit_part + dtau * exercise_rate;
}

#ifdef PDE_ROWS
/* CPUs (-DPDE_ROWS): one work-item per contract walks its interior nodes; the compiler
 * vectorizes that loop. Rows 0 and m-1 come from pde_boundary. */
__kernel void pde_assemble(int m, uint batch, __global const real *restrict z,
                           __global const real *restrict G, __global real *restrict dl,
                           __global real *restrict d, __global real *restrict du,
                           __global real *restrict rhs, __global const real *restrict con,
                           __global const int *restrict flags, __global const real *restrict sp,
                           __global const real *restrict vx, __global const real *restrict vz,
                           int nt, int nx, __global const real *restrict lambda)
{
    const uint k = (uint)get_global_id(0);
    if (k >= batch)
        return;
    __global const real *p = sp + (size_t)k * PDE_SN;
    const real g = con[(size_t)k * PDE_CN + PDE_C_SCALE_RATE];
    const size_t row = (size_t)k * (size_t)m;
    for (int i = 1; i < m - 1; ++i)
        assemble_node(row + i, row + i - 1, row + i + 1, z, G, dl, d, du, rhs, p, g, vx, vz, nt,
                      nx, lambda);
}
#else
/* GPUs: one work-item per node, consecutive work-items on consecutive nodes. Rows 0 and m-1
 * come out as if interior (mirrored spacing) and are then replaced by pde_boundary. Work-items
 * past the end redo the last node (same values): no branch. */
__kernel void pde_assemble(int m, uint batch, __global const real *restrict z,
                           __global const real *restrict G, __global real *restrict dl,
                           __global real *restrict d, __global real *restrict du,
                           __global real *restrict rhs, __global const real *restrict con,
                           __global const int *restrict flags, __global const real *restrict sp,
                           __global const real *restrict vx, __global const real *restrict vz,
                           int nt, int nx, __global const real *restrict lambda)
{
    const size_t total = (size_t)batch * (size_t)m;
    const size_t gid = min((size_t)get_global_id(0), total - 1);
    const uint k = (uint)(gid / (size_t)m);
    const int i = (int)(gid - (size_t)k * (size_t)m);
    const size_t gm = i > 0 ? gid - 1 : gid + 1, gp = i < m - 1 ? gid + 1 : gid - 1;
    assemble_node(gid, gm, gp, z, G, dl, d, du, rhs, sp + (size_t)k * PDE_SN,
                  con[(size_t)k * PDE_CN + PDE_C_SCALE_RATE], vx, vz, nt, nx, lambda);
}
#endif

/* One work-item per contract: its rows 0 and m-1, by boundary kind. */
__kernel void pde_boundary(int m, uint batch, __global const real *z, __global const real *G,
                           __global real *dl, __global real *d, __global real *du,
                           __global real *rhs, __global const real *con, __global const int *flags,
                           __global const real *sp, __global const real *vx,
                           __global const real *vz, int nt, int nx,
                           __global const real *lambda)
{
    const uint k = (uint)get_global_id(0);
    if (k >= batch)
        return;
    __global const real *p = sp + (size_t)k * PDE_SN;
    __global const int *f = flags + (size_t)k * PDE_FN;
    const real dtau = p[PDE_S_DTAU], theta = p[PDE_S_THETA];
    const real b_rate = con[(size_t)k * PDE_CN + PDE_C_SCALE_RATE];
    for (int upper = 0; upper < 2; ++upper) {
        const int kind = f[upper ? PDE_F_UPPER : PDE_F_LOWER];
        const size_t at = (size_t)k * (size_t)m + (upper ? (size_t)(m - 1) : 0);
        const size_t nb = upper ? at - 1 : at + 1;
        const real zb = z[at], Gb = G[at];
        if (kind == PDE_BC_NEUMANN) {
            /* ghost node mirrored at the boundary, G_ghost = G_inner ∓ 2 h slope: the PDE on
             * the boundary node keeps the system tridiagonal and diagonally dominant */
            real zeta_old, zeta_new;
            node_vol(p, vx, vz, nt, nx, zb, &zeta_old, &zeta_new);
            const real a_old = (real)0.5 * zb * zb * zeta_old * zeta_old;
            const real a_new = (real)0.5 * zb * zb * zeta_new * zeta_new;
            const real b = b_rate * zb, h = fabs(zb - z[nb]), sgn = upper ? (real)1 : (real)-1;
            const real s_old = p[upper ? PDE_S_UPPER_OLD : PDE_S_LOWER_OLD];
            const real s_new = p[upper ? PDE_S_UPPER_NEW : PDE_S_LOWER_NEW];
            const real w = 2 / (h * h);
            const real konst_old = (sgn * a_old * h * w + b) * s_old;
            const real konst_new = (sgn * a_new * h * w + b) * s_new;
            const real explicit_part = a_old * w * (G[nb] - Gb) + konst_old;
            const real exercise_rate = lambda[at];
            const real off = -theta * dtau * a_new * w;
            dl[at] = upper ? off : (real)0;
            du[at] = upper ? (real)0 : off;
            d[at] = 1 + theta * dtau * a_new * w;
            rhs[at] = Gb + (1 - theta) * dtau * explicit_part + theta * dtau * konst_new +
                      dtau * exercise_rate;
            continue;
        }
        real value = 0; /* barrier: knocked out */
        if (kind == PDE_BC_DIRICHLET) {
            value = p[upper ? PDE_S_UPPER_NEW : PDE_S_LOWER_NEW];
        } else if (kind == PDE_BC_LINEAR) {
            /* ∂²G/∂x² = 0 leaves ∂G/∂t = 0 at fixed x: the new value is the old one where the
             * node's x lay at t_old (a different z when c(t) moves), G linear in between */
            const real zsrc = zb * p[PDE_S_INVC_NEW] / p[PDE_S_INVC_OLD];
            value = Gb + (zsrc - zb) * (G[nb] - Gb) / (z[nb] - zb);
        }
        dl[at] = 0;
        d[at] = 1;
        du[at] = 0;
        rhs[at] = value;
    }
}

/* American contracts (the first `batch` of the chunk: the host orders them first) after each
 * solve, with g the exercise value in forward units:
 * projection: G = max(G, g), first order in time;
 * splitting (Ikonen & Toivanen 2004, operator splitting for the linear complementarity problem):
 * the solve used G_old + Δτ λ on its right-hand side; now G = max(G - Δτ λ, g) and
 * λ = max(0, λ + (g - G) / Δτ), which keeps Crank-Nicolson's second order in practice. Rows
 * without the PDE (Dirichlet, linear) are projected, barrier nodes stay 0. */
static void project_node(size_t gid, int kind, __global const real *restrict z,
                         __global real *restrict G, __global const real *restrict c,
                         __global const real *restrict p, __global real *restrict lambda,
                         int splitting)
{
    const real exercise = c[PDE_C_PHI] * (p[PDE_S_SA_NEW] * z[gid] + p[PDE_S_SB_NEW] - c[PDE_C_STRIKE]) *
                          p[PDE_S_ESCALE_NEW];
    const real solved = G[gid], dtau = p[PDE_S_DTAU], rate = lambda[gid];
    const int split = splitting && (kind == -1 || kind == PDE_BC_NEUMANN);
    const real kept = split ? solved - dtau * rate : solved, next_rate = rate + (exercise - solved) / dtau;
    G[gid] = kind == PDE_BC_BARRIER ? solved : MAX_R(kept, exercise);
    lambda[gid] = split ? MAX_R(next_rate, (real)0) : (real)0;
}

__kernel void pde_project(int m, uint batch, __global const real *restrict z,
                          __global real *restrict G, __global const real *restrict con,
                          __global const int *restrict flags, __global const real *restrict sp,
                          __global real *restrict lambda, int splitting)
{
#ifdef PDE_ROWS /* one work-item per contract (CPUs), as pde_assemble */
    const uint k = (uint)get_global_id(0);
    if (k >= batch)
        return;
    __global const int *f = flags + (size_t)k * PDE_FN;
    const size_t row = (size_t)k * (size_t)m;
    for (int i = 0; i < m; ++i) {
        const int kind = i == 0 ? f[PDE_F_LOWER] : i == m - 1 ? f[PDE_F_UPPER] : -1;
        project_node(row + i, kind, z, G, con + (size_t)k * PDE_CN, sp + (size_t)k * PDE_SN, lambda,
                     splitting);
    }
#else
    const size_t total = (size_t)batch * (size_t)m;
    const size_t gid = min((size_t)get_global_id(0), total - 1);
    const uint k = (uint)(gid / (size_t)m);
    const int i = (int)(gid - (size_t)k * (size_t)m);
    __global const int *f = flags + (size_t)k * PDE_FN;
    const int kind = i == 0 ? f[PDE_F_LOWER] : i == m - 1 ? f[PDE_F_UPPER] : -1;
    project_node(gid, kind, z, G, con + (size_t)k * PDE_CN, sp + (size_t)k * PDE_SN, lambda, splitting);
#endif
}

/* One work-item per contract: G at the nodes around the spot node, for price and Greeks. */
__kernel void pde_gather(int m, uint batch, __global const real *G, __global const int *spot_node,
                         __global real *out)
{
    const uint k = (uint)get_global_id(0);
    if (k >= batch)
        return;
    const size_t at = (size_t)k * (size_t)m + (size_t)spot_node[k];
    for (int j = 0; j < PDE_GN; ++j)
        out[(size_t)k * PDE_GN + j] = G[at - 1 + j];
}
