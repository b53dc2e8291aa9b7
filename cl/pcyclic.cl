/* Block p-cyclic inversion, BSOFI of Gogolenko, Bai & Scalettar: method 2 here (without -DQR_NB),
 * the kernels of method 3 below (with it).
 * Method 2, batched inversion of small block p-cyclic matrices (n <= NMAX, the host checks p <= 64), one
 * work-group of WG work-items per problem: BSOFI of Gogolenko, Bai & Scalettar
 * (block-p-cyclic-inversion-bsofi-gogolenko-bai-scalettar.txt) with every phase in one kernel.
 *  1. BSOF: Householder QR of the 2n x n panel [At_k; B_k] in local memory, Q^(k) formed
 *     explicitly (2n x 2n, global workspace), Q^(k)T applied to block rows k, k+1 of block columns
 *     k+1 and p-1; finally the QR of the last n x n block (Q^(p)).
 *  2. R^-1 by the row version of the block back substitution (BSTRI_RV), into H^-1.
 *  3. H^-1 = R^-1 Q^T, block column pairs times Q^(k)T through a 2n-column temporary.
 * Block indices are 0-based; block (r, c) of the column-major N x N H^-1 starts at c*n*N + r*n.
 * Barriers sit only in loops whose trip counts are the same for the whole work-group (PoCL).
 * Build options: -DNMAX (largest n), -DWG (work-items per group), -DBCL_DOUBLE. */

/* ---- column norms and reflectors for both methods ---- */

/* A column's norm by Blue's algorithm with LAPACK 3.10 dnrm2's constants: squares summed in three
 * ranges (entries below TSML scaled up by SSML, above TBIG scaled down by SBIG, the rest as they
 * are), so that nothing overflows or underflows, and no division (an fp64 division is a long
 * serial sequence on GPUs; these sums sit on the panel's critical path). */
#ifdef BCL_DOUBLE
#define BLUE_TSML 0x1p-511
#define BLUE_TBIG 0x1p486
#define BLUE_SSML 0x1p537
#define BLUE_SBIG 0x1p-538
#else
#define BLUE_TSML 0x1p-63f
#define BLUE_TBIG 0x1p52f
#define BLUE_SSML 0x1p75f
#define BLUE_SBIG 0x1p-76f
#endif

/* A plain sum of squares (qr_panel_reg, pcyclic_small) is taken when it lies in [MIN, MAX]: no
 * square overflowed, the squares that underflowed (each below 2^-1022, or 2^-126 in float, even
 * where flushed to zero) change it by less than 2^-60 of itself for up to 4096 rows, and
 * beta (alpha - beta) stays a normal number; anywhere else Blue's sums decide */
#ifdef BCL_DOUBLE
#define PLAIN_SSQ_MIN 0x1p-950
#define PLAIN_SSQ_MAX 0x1p1000
#else
#define PLAIN_SSQ_MIN 0x1p-54f
#define PLAIN_SSQ_MAX 0x1p100f
#endif

/* selects, not branches (in unrolled loops on the panel's critical path, NVIDIA's compiler made
 * every branch a reconvergence point); a NaN lands in med */
static void blue_add(real x, real *sml, real *med, real *big)
{
    const real ax = fabs(x), sb = ax * BLUE_SBIG, ss = ax * BLUE_SSML;
    const int is_big = ax > BLUE_TBIG, is_sml = ax < BLUE_TSML;
    *big += is_big ? sb * sb : 0;
    *sml += is_sml ? ss * ss : 0;
    *med += is_big || is_sml ? 0 : ax * ax;
}

static real blue_norm(real sml, real med, real big)
{
    if (big > 0) {
        if (med > 0 || isnan(med))
            big += (med * BLUE_SBIG) * BLUE_SBIG;
        return sqrt(big) / BLUE_SBIG;
    }
    if (sml > 0) {
        if (med > 0 || isnan(med)) {
            const real a = sqrt(med), b = sqrt(sml) / BLUE_SSML;
            const real lo = a < b ? a : b, hi = a < b ? b : a;
            return hi * sqrt(1 + (lo / hi) * (lo / hi));
        }
        return sqrt(sml) / BLUE_SSML;
    }
    return sqrt(med);
}

/* dlarfg from alpha and Blue's sums of x: beta = -sign(alpha) ||(alpha, x)|| (alpha added to the
 * sums, in place of dlapy2(alpha, ||x||)), tau = (beta - alpha) / beta and the factor
 * 1 / (alpha - beta) that turns x into v; ||x|| = 0 or NaN gives H = I (LAPACK's tau = 0). */
static void reflector_of(real alpha, real sml, real med, real big, real *beta, real *tau,
                         real *scal)
{
    *beta = alpha;
    *tau = 0;
    *scal = 1;
    if ((sml > 0 || med > 0 || big > 0) && !isnan(med)) {
        blue_add(alpha, &sml, &med, &big);
        *beta = -copysign(blue_norm(sml, med, big), alpha);
        *tau = (*beta - alpha) / *beta;
        *scal = 1 / (alpha - *beta);
    }
}

#ifndef QR_NB /* method 2: the batched kernel; method 3 (below) builds with -DQR_NB */

#ifndef NMAX
#define NMAX 32
#endif
#ifndef WG
#define WG 64
#endif

#define BOTH_FENCES (CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)

/* Q = H_0 H_1 ... H_n-1 (m x m, leading dimension m) into global memory: each work-item builds
 * its own columns, applying the reflectors last to first. */
static void form_q(__global real *Q, __local const real *pan, __local const real *tau, int m,
                   int n, int lid)
{
    for (int j = lid; j < m; j += WG) {
        __global real *q = Q + j * m;
        for (int r = 0; r < m; ++r)
            q[r] = r == j ? 1 : 0;
        for (int c = n - 1; c >= 0; --c) {
            real w = q[c];
            for (int r = c + 1; r < m; ++r)
                w += pan[c * m + r] * q[r];
            w *= tau[c];
            q[c] -= w;
            for (int r = c + 1; r < m; ++r)
                q[r] -= w * pan[c * m + r];
        }
    }
}

/* R (the upper triangle of the panel) into an n x n block; the first zero or NaN diagonal is the
 * problem's info (1-based over the N x N R) unless an earlier one was found. */
static void store_r(__global real *R, __local const real *pan, int m, int n, int block,
                    __local int *bad, int lid)
{
    for (int e = lid; e < n * n; e += WG) {
        const int r = e % n, c = e / n;
        R[e] = r <= c ? pan[c * m + r] : 0;
    }
    if (lid == 0 && *bad == 0)
        for (int i = 0; i < n; ++i) {
            const real d = pan[i * m + i];
            if (d == 0 || isnan(d)) {
                *bad = block * n + i + 1;
                break;
            }
        }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void pcyclic_small(__global const real *A, ulong offA, __global const real *B, ulong offB,
                   __global real *H, ulong offH, __global int *info, ulong offInfo,
                   __global real *work, ulong wstride, int n, int p)
{
    __local real pan[2 * NMAX * NMAX];
    __local real tau[NMAX];
    __local real red[4 * WG]; /* a column's sums: plain, then Blue's three */
    __local real scale[1];
    __local int bad[1];
    const int lid = (int)get_local_id(0);
    const size_t g = get_group_id(0);
    const int nn = n * n, N = n * p, n2 = 2 * n;
    __global const real *Ag = A + offA + g * (size_t)p * nn;
    __global const real *Bg = B + offB + g * (size_t)p * nn;
    __global real *X = H + offH + g * (size_t)N * N;
    /* workspace, as small_workspace() in src/pcyclic.c */
    __global real *Qw = work + g * wstride;
    __global real *Rd = Qw + (size_t)(p - 1) * 4 * nn + nn;
    __global real *Rs = Rd + (size_t)p * nn;
    __global real *Rl = Rs + (size_t)p * nn;
    __global real *AtP = Rl + (size_t)p * nn; /* two n x n: ping-pong */
    __global real *RtP = AtP + 2 * nn;
    __global real *Xt = RtP + 2 * nn;
    __global real *Yw = Xt + (size_t)p * nn;
    __global real *T = Yw + (size_t)p * nn; /* N x 2n */
#define XAT(r, c) X[(size_t)(c) * N + (r)]

    if (lid == 0)
        bad[0] = 0;
    /* At_0 = A_0 (+ B_0 when p = 1: the corner block is on the diagonal), Rt_0 = B_p-1 */
    for (int e = lid; e < nn; e += WG) {
        AtP[e] = Ag[e] + (p == 1 ? Bg[e] : 0);
        RtP[e] = Bg[(size_t)(p - 1) * nn + e];
    }
    barrier(BOTH_FENCES);

    /* ---- 1. the structured orthogonal factorization: block rows k, k+1 for k < p-1, then the
     * last block alone (the panel is m = 2n or n rows; every bound below is uniform over the
     * work-group, so the barriers are too) ---- */
    for (int k = 0; k < p; ++k) {
        const int last = k + 1 == p, m = last ? n : n2;
        __global const real *At = AtP + (k & 1) * nn, *Rt = RtP + (k & 1) * nn;
        __global real *AtN = AtP + ((k + 1) & 1) * nn, *RtN = RtP + ((k + 1) & 1) * nn;
        __global const real *Bk = Bg + (size_t)k * nn, *An = Ag + (size_t)(k + 1) * nn;
        for (int e = lid; e < m * n; e += WG) {
            const int r = e % m, c = e / m;
            pan[e] = r < n ? At[c * n + r] : Bk[c * n + r - n];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Householder QR, LAPACK's convention: R on and above the diagonal, v below it (v_c = 1
         * implied), H_c = I - tau_c v v^T */
        for (int c = 0; c < n; ++c) {
            /* the plain sum of squares, and Blue's sums for the rare column outside its range
             * (entries near the underflow or overflow thresholds) */
            real s = 0, sml = 0, med = 0, big = 0;
            for (int r = c + 1 + lid; r < m; r += WG) {
                const real x = pan[c * m + r];
                s += x * x;
                blue_add(x, &sml, &med, &big);
            }
            red[lid] = s;
            red[WG + lid] = sml;
            red[2 * WG + lid] = med;
            red[3 * WG + lid] = big;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0) {
                real xnorm2 = 0;
                for (int t = 0; t < WG; ++t)
                    xnorm2 += red[t];
                const real alpha = pan[c * m + c], tot = xnorm2 + alpha * alpha;
                real beta, tc, sc;
                if (xnorm2 >= PLAIN_SSQ_MIN && tot <= PLAIN_SSQ_MAX) {
                    beta = -copysign(sqrt(tot), alpha);
                    tc = (beta - alpha) / beta;
                    sc = 1 / (alpha - beta);
                } else {
                    real bs = 0, bm = 0, bb = 0;
                    for (int t = 0; t < WG; ++t) {
                        bs += red[WG + t];
                        bm += red[2 * WG + t];
                        bb += red[3 * WG + t];
                    }
                    reflector_of(alpha, bs, bm, bb, &beta, &tc, &sc);
                    if (isnan(bm)) /* NaN below the diagonal: on it too, for info */
                        beta = bm;
                }
                tau[c] = tc;
                scale[0] = sc;
                pan[c * m + c] = beta;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const real sc = scale[0], t = tau[c];
            for (int r = c + 1 + lid; r < m; r += WG)
                pan[c * m + r] *= sc;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int j = c + 1 + lid; j < n; j += WG) {
                real w = pan[j * m + c];
                for (int r = c + 1; r < m; ++r)
                    w += pan[c * m + r] * pan[j * m + r];
                w *= t;
                pan[j * m + c] -= w;
                for (int r = c + 1; r < m; ++r)
                    pan[j * m + r] -= w * pan[c * m + r];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        __global real *Q = Qw + (size_t)k * 4 * nn; /* Q^(p) (n x n) after the last 2n x 2n */
        form_q(Q, pan, tau, m, n, lid);
        store_r(Rd + (size_t)k * nn, pan, m, n, k, bad, lid);
        barrier(BOTH_FENCES);
        /* Q^T [0; A_k+1] (+ Q^T [Rt_k; 0] when k+1 is the last block column) and Q^T [Rt_k; 0] */
        const int merged = k + 2 == p;
        for (int e = lid; e < (last ? 0 : n2 * n); e += WG) {
            const int r = e % n2, c = e / n2;
            real v = 0, u = 0;
            for (int s = 0; s < n; ++s) {
                v += Q[r * n2 + n + s] * An[c * n + s];
                u += Q[r * n2 + s] * Rt[c * n + s];
            }
            if (merged)
                v += u;
            if (r < n)
                Rs[(size_t)k * nn + c * n + r] = v;
            else
                AtN[c * n + r - n] = v;
            if (!merged) {
                if (r < n)
                    Rl[(size_t)k * nn + c * n + r] = u;
                else
                    RtN[c * n + r - n] = u;
            }
        }
        barrier(BOTH_FENCES);
    }

    /* ---- 2. R^-1, row version ---- */
    /* X_ii = R_ii^-1: one column of one block per work-item, by back substitution */
    for (int t = lid; t < p * n; t += WG) {
        const int i = t / n, j = t % n;
        __global const real *R = Rd + (size_t)i * nn;
        const size_t col = (size_t)(i * n + j) * N + (size_t)i * n;
        for (int r = n - 1; r >= 0; --r) {
            real v = 0;
            if (r <= j) {
                v = r == j ? 1 : 0;
                for (int s = r + 1; s <= j; ++s)
                    v -= R[s * n + r] * X[col + s];
                v /= R[r * n + r];
            }
            X[col + r] = v;
        }
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    /* Xt_i = -X_ii R_i,i+1 (i <= p-2) and Y_i = -X_ii R_i,p-1 (i <= p-3) */
    for (int e = lid; e < 2 * p * nn; e += WG) {
        const int which = e / (p * nn), rem = e % (p * nn);
        const int i = rem / nn, r = rem % n, c = (rem % nn) / n;
        if (i + 1 + which < p) {
            __global const real *R = (which ? Rl : Rs) + (size_t)i * nn;
            real v = 0;
            for (int s = r; s < n; ++s)
                v -= XAT(i * n + r, i * n + s) * R[c * n + s];
            (which ? Yw : Xt)[rem] = v;
        }
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    /* Z_i = Y_i X_p-1,p-1 into block (i, p-1) */
    for (int e = lid; e < (p - 2) * nn; e += WG) {
        const int i = e / nn, r = e % n, c = (e % nn) / n;
        real v = 0;
        for (int s = 0; s <= c; ++s)
            v += Yw[(size_t)i * nn + s * n + r] * XAT((p - 1) * n + s, (p - 1) * n + c);
        XAT(i * n + r, (p - 1) * n + c) = v;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    /* block rows p-2 .. 0: X_i,c = Xt_i X_i+1,c (+ Z_i in the last block column), c > i */
    for (int step = 0; step + 1 < p; ++step) {
        const int i = p - 2 - step;
        const int cols = N - (i + 1) * n;
        for (int e = lid; e < n * cols; e += WG) {
            const int r = e % n, col = (i + 1) * n + e / n;
            real v = col >= (p - 1) * n && i + 3 <= p ? XAT(i * n + r, col) : 0;
            for (int s = 0; s < n; ++s)
                v += Xt[(size_t)i * nn + s * n + r] * XAT((i + 1) * n + s, col);
            XAT(i * n + r, col) = v;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }

    /* ---- 3. H^-1 = R^-1 Q^T ---- */
    {
        __global const real *Qp = Qw + (size_t)(p - 1) * 4 * nn;
        for (int e = lid; e < N * n; e += WG) {
            const int r = e % N, c = e / N;
            real v = 0;
            for (int s = 0; s < n; ++s)
                v += XAT(r, (p - 1) * n + s) * Qp[s * n + c];
            T[e] = v;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (int e = lid; e < N * n; e += WG)
            X[(size_t)(p - 1) * n * N + e] = T[e];
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    for (int step = 0; step + 1 < p; ++step) {
        const int k = p - 2 - step, top = (k + 1) * n;
        __global const real *Q = Qw + (size_t)k * 4 * nn;
        for (int e = lid; e < N * n2; e += WG) {
            const int r = e % N, c = e / N;
            real v = 0;
            for (int s = r < top ? 0 : n; s < n2; ++s) /* block column k is zero below block row k */
                v += XAT(r, k * n + s) * Q[s * n2 + c];
            T[e] = v;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (int e = lid; e < N * n2; e += WG)
            X[(size_t)k * n * N + e] = T[e];
        barrier(CLK_GLOBAL_MEM_FENCE);
    }

    /* a singular problem: zeros, and its info */
    const int failed = bad[0];
    for (size_t e = lid; e < (size_t)N * N; e += WG)
        if (failed)
            X[e] = 0;
    if (lid == 0)
        info[offInfo + g] = failed;
#undef XAT
}

#endif /* method 2 */

#ifdef QR_NB
/* ---- method 3: BSOF with the panels on the device, for one large problem at a time ----
 * Blocked Householder QR (LAPACK dgeqrt's compact WY form, Q = I - V T V^T per block of QR_NB
 * columns) of the 2n x n panels: qr_panel_reg (block column in registers) or qr_panel (in global
 * memory) factors one block column in one work-group (its reflectors, the block's T), qr_apply
 * applies a block reflector to the columns to its right (and builds the explicit Q^(k) from the
 * identity). R_kk^-1 by tri_inverse; the host enqueues the GEMMs (clBLAST) between them. Options:
 * -DQR_NB (block width), -DQR_WG (work-items per group of qr_apply, a multiple of QR_NB and of
 * 32), -DPANEL_WG (of the panel kernels, a multiple of QR_NB and at most 32 QR_NB), -DPANEL_ROWS
 * (qr_panel_reg: rows a lane holds), -DBCL_PTX_SHUFFLE (qr_panel_reg: warp sums by NVIDIA's
 * shuffles), -DPW_HOLD_X=0 (qr_panel_reg: x read from local memory at every size, for tests),
 * -DV_FROM_P (the register panels write no V: v_from_panel forms it after the panel's last
 * block, with R_kk and Q^(k)'s identity), -DBCL_DOUBLE. Matrices are column-major with explicit
 * leading dimensions; V is stored explicitly (zeros above the diagonal, ones on it), and the
 * applies read only its entries below the diagonal, so that they take the reflectors from the
 * factored panel as well. */

#define QR_RL (PANEL_WG / QR_NB) /* qr_panel: work-items sharing one column (its row lanes) */
#define QR_CT (QR_WG / QR_NB) /* qr_apply: columns of C per work-group */
#define QR_RCH 64             /* qr_apply: rows staged per step */
#ifndef QR_TB
#define QR_TB 64 /* t_diag_blocks: columns of a diagonal block of the panel's whole T */
#endif
#if QR_TB % QR_NB != 0 || ((QR_TB / QR_NB) & (QR_TB / QR_NB - 1)) != 0
#error "t_diag_blocks needs QR_TB a power-of-2 multiple of QR_NB"
#endif

/* dlarft, column j of the block's T: T(0:j, j) = -tau T(0:j, 0:j) (V(:, 0:j)^T v_j), T(j, j) =
 * tau, with dots[0:j] = V(:, 0:j)^T v_j. No barrier: the caller's next one publishes it. */
static void t_column(__local real *tl, __local const real *dots, real tau, int j, int lid)
{
    if (lid < j) {
        real s = 0;
        for (int l = lid; l < j; ++l)
            s += tl[l * QR_NB + lid] * dots[l];
        tl[j * QR_NB + lid] = -tau * s;
    } else if (lid == j) {
        tl[j * QR_NB + j] = tau;
    }
}

/* Factor columns j0 .. j0+nbk-1 of P over rows j0 .. m-1 (nbk <= QR_NB): the reflectors v (LAPACK
 * dlarfg: beta = -sign(alpha) ||(alpha, x)||, tau = (beta - alpha) / beta, v = x / (alpha - beta))
 * below the diagonal of P and, explicitly, in V; beta on the diagonal; the block's T (QR_NB x
 * QR_NB, zero outside the nbk x nbk upper triangle) into T. Column norms by blue_add/blue_norm. */
__kernel __attribute__((reqd_work_group_size(PANEL_WG, 1, 1)))
void qr_panel(__global real *P, ulong offP, int ldp, int m, int j0, int nbk, __global real *V,
              ulong offV, int ldv, __global real *T, ulong offT)
{
    __local real part_sml[PANEL_WG], part_med[PANEL_WG], part_big[PANEL_WG];
    __local real red_sml[32], red_med[32], red_big[32];
    __local real dots[QR_NB];
    __local real tl[QR_NB * QR_NB];
    const int lid = (int)get_local_id(0);
    const int lane = lid % QR_RL, slot = lid / QR_RL;
    P += offP;
    V += offV;
    for (int e = lid; e < QR_NB * QR_NB; e += PANEL_WG)
        tl[e] = 0;
    for (int j = 0; j < nbk; ++j) {
        const int col = j0 + j;
        __global real *pc = P + (size_t)col * ldp;
        __global real *vc = V + (size_t)col * ldv;
        const real alpha = pc[col]; /* read before the barriers: the diagonal is rewritten below */
        real sml = 0, med = 0, big = 0;
        for (int r = col + 1 + lid; r < m; r += PANEL_WG)
            blue_add(pc[r], &sml, &med, &big);
        part_sml[lid] = sml;
        part_med[lid] = med;
        part_big[lid] = big;
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid < 32) {
            sml = med = big = 0;
            for (int i = lid; i < PANEL_WG; i += 32) {
                sml += part_sml[i];
                med += part_med[i];
                big += part_big[i];
            }
            red_sml[lid] = sml;
            red_med[lid] = med;
            red_big[lid] = big;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        sml = med = big = 0; /* every work-item sums the 32 the same way */
        for (int i = 0; i < 32; ++i) {
            sml += red_sml[i];
            med += red_med[i];
            big += red_big[i];
        }
        real beta, tau, scal;
        reflector_of(alpha, sml, med, big, &beta, &tau, &scal);
        for (int r = j0 + lid; r < m; r += PANEL_WG) {
            real v = r == col ? 1 : 0;
            if (r > col) {
                v = pc[r] * scal;
                pc[r] = v;
            } else if (r == col) {
                pc[r] = beta;
            }
            vc[r] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        /* one pass of dot products: v_j with the block's later columns (to apply H_j) and with
         * its earlier reflectors (for T's column j) */
        real acc = 0;
        if (slot != j && slot < nbk) {
            __global const real *other =
                slot < j ? V + (size_t)(j0 + slot) * ldv : P + (size_t)(j0 + slot) * ldp;
#pragma unroll 4
            for (int r = col + lane; r < m; r += QR_RL)
                acc += vc[r] * other[r];
        }
        part_med[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < QR_NB) {
            real s = 0;
            for (int l = 0; l < QR_RL; ++l)
                s += part_med[lid * QR_RL + l];
            dots[lid] = s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (slot > j && slot < nbk) { /* column j0+slot -= tau (v^T column) v */
            const real w = tau * dots[slot];
            __global real *pcol = P + (size_t)(j0 + slot) * ldp;
#pragma unroll 4
            for (int r = col + lane; r < m; r += QR_RL)
                pcol[r] -= w * vc[r];
        }
        t_column(tl, dots, tau, j, lid);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    for (int e = lid; e < QR_NB * QR_NB; e += PANEL_WG)
        T[offT + e] = tl[e];
}

#ifdef BCL_PTX_SHUFFLE
/* 32 bits of another lane of the warp: by_index ? lane arg (shfl.sync.idx) : this lane xor arg
 * (shfl.sync.bfly); by_index is a constant at every call, so one instruction remains */
static uint lane_bits(uint v, int arg, int by_index)
{
    uint out;
    if (by_index)
        asm volatile("shfl.sync.idx.b32 %0, %1, %2, 31, -1;" : "=r"(out) : "r"(v), "r"(arg));
    else
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 31, -1;" : "=r"(out) : "r"(v), "r"(arg));
    return out;
}
static real lane_shuffle(real x, int arg, int by_index)
{
#ifdef BCL_DOUBLE
    const uint2 in = as_uint2(x);
    return as_double((uint2)(lane_bits(in.x, arg, by_index), lane_bits(in.y, arg, by_index)));
#else
    return as_float(lane_bits(as_uint(x), arg, by_index));
#endif
}
#define lane_xor(x, mask) lane_shuffle((x), (mask), 0) /* x of lane (this lane ^ mask) */
#define lane_get(x, src) lane_shuffle((x), (src), 1)   /* x of lane src */
#endif

/* T (dlarft) of a block after its column steps, off their critical path: lane l of a warp forms
 * row l, T(l, j) = -tau_j sum_{l <= k < j} T(l, k) v_k^T v_j, in registers (zero where j >= nbk),
 * from gram[j QR_NB + k] = v_k^T v_j (k < j) and the taus */
static void t_from_gram(__local const real *gram, __local const real *tau_l, int nbk, int lane,
                        __global real *T)
{
    real trow[QR_NB];
    UNROLL
    for (int j = 0; j < QR_NB; ++j) {
        real s0 = 0, s1 = 0;
        UNROLL
        for (int k = 0; k + 1 < j; k += 2) {
            s0 += trow[k] * gram[j * QR_NB + k];
            s1 += trow[k + 1] * gram[j * QR_NB + k + 1];
        }
        if (j % 2 == 1)
            s0 += trow[j - 1] * gram[j * QR_NB + j - 1];
        const real tau = tau_l[j];
        trow[j] = j >= nbk || j < lane ? 0 : j == lane ? tau : -tau * (s0 + s1);
    }
    UNROLL
    for (int j = 0; j < QR_NB; ++j)
        if (lane < QR_NB)
            T[j * QR_NB + lane] = trow[j];
}

#if defined(BCL_PTX_SHUFFLE) || defined(PANEL_RPL)
/* a or b by bits, not by a select (LLVM made selects of two array entries one load from a
 * computed address, and the array went to the stack) */
static real pick(int take_a, real a, real b)
{
#ifdef BCL_DOUBLE
    const ulong m = take_a ? ~0ul : 0ul;
    return as_double((as_ulong(a) & m) | (as_ulong(b) & ~m));
#else
    const uint m = take_a ? ~0u : 0u;
    return as_float((as_uint(a) & m) | (as_uint(b) & ~m));
#endif
}
#endif
#ifdef BCL_PTX_SHUFFLE
/* loops counted by addition (NVIDIA's and LLVM's unrollers left loops stepped by shifts rolled,
 * and the arrays they index went to the stack) */
#define PR_LOG2(k) ((k) >= 32 ? 5 : (k) >= 16 ? 4 : (k) >= 8 ? 3 : (k) >= 4 ? 2 : (k) >= 2 ? 1 : 0)
/* Within a warp, a butterfly that halves the values each level: afterwards vals[0] of lane l
 * holds the warp's sum of value l / (32 / K) (K a power of two <= 32; K - 1 shuffles, not 5 K);
 * vals is consumed. */
#define WARP_HALVE(vals, K)                                                                       \
    do {                                                                                          \
        UNROLL                                                                                    \
        for (int lv_ = 0; lv_ < PR_LOG2(K); ++lv_) {                                              \
            const int s_ = 16 >> lv_, kk_ = (K) >> (lv_ + 1);                                     \
            const int hi_ = (lane & s_) != 0;                                                     \
            UNROLL /* a constant trip count: unrolled before the outer loop is */               \
            for (int c_ = 0; c_ < (K) / 2; ++c_) {                                                \
                if (c_ < kk_) {                                                                   \
                    const real lo_ = vals[c_], up_ = vals[c_ + kk_];                              \
                    vals[c_] = pick(hi_, up_, lo_) + lane_xor(pick(hi_, lo_, up_), s_);           \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        UNROLL                                                                                    \
        for (int lv_ = PR_LOG2(K); lv_ < 5; ++lv_)                                                \
            vals[0] += lane_xor(vals[0], 16 >> lv_);                                              \
    } while (0)
/* tot[0..K-1] := the group's sums of vals[0..K-1] over its NW warps, bitwise the same in every
 * work-item; vals is consumed. WARP_HALVE, then region[warp K + c] (one barrier), then lane l
 * adds column l % K over warps l / K, l / K + 32 / K, ..., and a butterfly over the lanes that
 * share the column; every lane takes the K totals from lanes 0 .. K-1. */
#define ROW_TOTALS_NW(vals, K, region, tot, NW)                                                   \
    do {                                                                                          \
        WARP_HALVE(vals, K);                                                                      \
        if (lane % (32 / (K)) == 0)                                                               \
            region[warp * (K) + lane / (32 / (K))] = vals[0];                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        real g_ = 0;                                                                              \
        for (int w_ = lane / (K); w_ < (NW); w_ += 32 / (K))                                      \
            g_ += region[w_ * (K) + lane % (K)];                                                  \
        UNROLL                                                                                    \
        for (int lv_ = PR_LOG2(K); lv_ < 5; ++lv_)                                                \
            g_ += lane_xor(g_, 1 << lv_);                                                         \
        UNROLL                                                                                    \
        for (int c_ = 0; c_ < (K); ++c_)                                                          \
            tot[c_] = lane_get(g_, c_);                                                           \
    } while (0)
#endif

/* out[e] (local, e < K, K a multiple of 32 and of 8) := the sum of acc[e / 32][e % 32] over the
 * group's WG work-items (lid), in an order fixed by the sizes alone; acc is consumed. With
 * shuffles each warp halves its values (WARP_HALVE) into region[K / 32][WG] and work-items
 * e < K add the warps' sums in order; else eight sums at a time go through region[8 WG], and
 * work-item e < 8 adds sum e over the group. The caller's barrier publishes out. (qr_apply_rows,
 * qr_chain) */
#ifdef BCL_PTX_SHUFFLE
#define GROUP_SUMS(acc, K, region, out, WG)                                                       \
    do {                                                                                          \
        UNROLL                                                                                    \
        for (int h_ = 0; h_ < (K) / 32; ++h_) {                                                   \
            WARP_HALVE(acc[h_], 32);                                                              \
            region[h_][lid] = acc[h_][0];                                                         \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        if (lid < (K)) { /* the warps' sums in order */                                           \
            real s_ = 0;                                                                          \
            for (int w_ = 0; w_ < (WG) / 32; ++w_)                                                \
                s_ += region[lid / 32][w_ * 32 + lid % 32];                                       \
            out[lid] = s_;                                                                        \
        }                                                                                         \
    } while (0)
#else
#define GROUP_SUMS(acc, K, region, out, WG)                                                       \
    do {                                                                                          \
        UNROLL                                                                                    \
        for (int h_ = 0; h_ < (K); h_ += 8) {                                                     \
            UNROLL                                                                                \
            for (int e_ = 0; e_ < 8; ++e_)                                                        \
                region[e_ * (WG) + lid] = acc[(h_ + e_) / 32][(h_ + e_) % 32];                    \
            barrier(CLK_LOCAL_MEM_FENCE);                                                         \
            if (lid < 8) {                                                                        \
                real s_ = 0;                                                                      \
                for (int q_ = 0; q_ < (WG); ++q_)                                                 \
                    s_ += region[lid * (WG) + q_];                                                \
                out[h_ + lid] = s_;                                                               \
            }                                                                                     \
            barrier(CLK_LOCAL_MEM_FENCE);                                                         \
        }                                                                                         \
    } while (0)
#endif

/* Entry (v, c) of T' W for a block's T (upper triangular, column-major QR_NB x QR_NB, t_l) and
 * W (w_l[v ct + c], ct columns): T' = T^T when trans (the factorization's update), else T */
static real tw_entry(__local const real *t_l, __local const real *w_l, int v, int c, int ct,
                     int trans)
{
    real s = 0;
    if (trans)
        for (int u = 0; u <= v; ++u)
            s += t_l[v * QR_NB + u] * w_l[u * ct + c];
    else
        for (int u = v; u < QR_NB; ++u)
            s += t_l[u * QR_NB + v] * w_l[u * ct + c];
    return s;
}

#ifdef CHAIN_CPG
/* qr_chain: a whole panel's blocked QR, a register panel's blocks and the applies between them,
 * in one launch of ceil(n / CHAIN_CPG) groups, so that no launch stands on the chain of blocks.
 * A group takes a ticket when it starts and waits only for groups with earlier tickets, which
 * have started (no deadlock, whatever the device runs at once). Ticket g holds columns
 * CHAIN_CPG g .. + CHAIN_CPG - 1 of the panel in registers (work-item t rows t + PANEL_WG i,
 * i < CHAIN_RPL) and applies each earlier block's reflectors to them once that block's flag is
 * up (W = V^T C over the group, T^T W, C -= V W, as qr_apply_rows). Then it writes them back and
 * counts itself in its block; the block's last ticket waits for the block's other groups,
 * factors the block by the panel kernel's code (qr_panel_reg's, or qr_panel_rows' with
 * -DPANEL_RPL) and raises the block's flag. sync (zeros before the
 * launch): [0] the tickets, [1 + b] block b's groups written back, [1 + nblocks + b] its flag.
 * What other groups wrote is read through volatile pointers: a compute unit's cache may still
 * hold lines an earlier group read. Needs -DV_FROM_P (the reflectors are read from the panel).
 * Columns n .. ntot-1 (trailing columns, after the panel's in P) are only applied to: the tickets
 * after the panel's groups take them, CHAIN_CPG a group, apply every block once its flag is up and
 * write them back, so that Q^T C of a block column C comes out of the same launch with no T of
 * the whole panel (the step's next diagonal block, BSOF's critical path). Their rows below
 * trail_zero are read as zeros (the block column [0; A_k+1]). A trailing group holds CHAIN_TCH
 * chunks of CHAIN_CPG columns and applies each block to them chunk by chunk (its reflectors loaded
 * once), so that the launch has fewer groups than the device holds at once and kernels of another
 * queue find room beside it.
 * Several steps in one launch (BSOF on two queues): the tickets run on across the steps, step
 * ticket / (groups a step) taking slot (slot0 + step) % nslots of P (slot_stride apart) and of T
 * (tb_stride apart) and sync_stride counters of its own; the trailing groups write the rows of
 * At_k+1 (rows n .. m-1 of their columns) into the next slot's top (next_top) and count
 * themselves done, and a later step's panel groups wait for that count before they read their
 * columns: the next step's chain starts while the groups of this one drain, with no launch
 * between. A group still waits only for groups with earlier tickets: no deadlock. */
#ifndef V_FROM_P
#error "qr_chain reads the reflectors from the factored panel (-DV_FROM_P)"
#endif
#define CH_K (QR_NB * CHAIN_CPG) /* entries of W a group forms for a block */
#ifndef CHAIN_TCH
#define CHAIN_TCH 1 /* chunks of CHAIN_CPG columns a trailing group holds */
#endif
#define CH_COLS (CHAIN_CPG * CHAIN_TCH)
#define CH_TDONE (1 + 2 * nblk)  /* a step's counter of trailing groups done */
#define CH_CLOCK0 (2 + 2 * nblk) /* the clock's marks after the counters */
#if CHAIN_TCH > 1
#define CH_CHUNK_END barrier(CLK_LOCAL_MEM_FENCE); /* ch_tw read before the next chunk's */
#else
#define CH_CHUNK_END
#endif
#if CH_K % 32 != 0 || CH_K > PANEL_WG || PANEL_WG != 256 || QR_NB % CHAIN_CPG != 0
#error "qr_chain: QR_NB CHAIN_CPG a multiple of 32, at most PANEL_WG = 256"
#endif
#ifdef BCL_PTX_SHUFFLE
#define CHAIN_PART_DECL __local real ch_part[CH_K / 32][PANEL_WG]
/* a group's loops end where its work does: blocks before its own, the panel's code only in the
 * block's last ticket */
#define CH_BLOCKS bm
#define CH_PASSES lead
#define CH_CHUNK_IF(h) if ((h) < nch)
#else
#define CHAIN_PART_DECL __local real ch_part[8 * PANEL_WG]
/* PoCL (3.1) corrupted memory where barriers sat under a branch or in a loop whose trip count
 * came from local memory: every group passes every block's barriers (the blocks from its own on
 * apply nothing) and the panel's code once (factoring nothing but in the block's last ticket) */
#define CH_BLOCKS nblk
#define CH_PASSES 1
#define CH_CHUNK_IF(h) /* every group every chunk's barriers (a panel group's are all zeros) */
#endif
/* The hand-offs between groups: stores, a barrier, then work-item 0 raises a flag or counts
 * (CH_RELEASE_*); the waiting side's work-item 0 spins (CH_WAIT_GE), then a barrier. They need
 * release and acquire at device scope. On NVIDIA, OpenCL 1.2's mem_fence(CLK_GLOBAL_MEM_FENCE)
 * compiles to membar.cta (group scope): bench pcyclic --same-bits found about 5 % of calls wrong at
 * n = 256 with the second queue's kernels beside the chain. So PTX there: acquire loads and
 * release reductions / stores from sm_70 on (-DBCL_PTX_ACQUIRE), membar.gl before (none wrong of
 * about 1 300 calls with these; n = 256 22.1 ms against 22.4 with membar.gl on the H200);
 * elsewhere mem_fence and the atomics. */
#ifdef BCL_PTX_SHUFFLE
#define CH_DEVICE_FENCE() asm volatile("membar.gl;" ::: "memory")
#else
#define CH_DEVICE_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif
#if defined(BCL_PTX_SHUFFLE) && defined(BCL_PTX_ACQUIRE)
static int ch_acquire(volatile __global const int *p)
{
    int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"((ulong)p) : "memory");
    return v;
}
#define CH_WAIT_GE(p, target)                                                                     \
    do {                                                                                          \
        while (ch_acquire(p) < (target))                                                          \
            ;                                                                                     \
    } while (0)
#define CH_RELEASE_INC(p)                                                                         \
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"((ulong)(p)) : "memory")
#define CH_RELEASE_SET(p)                                                                         \
    asm volatile("st.release.gpu.global.u32 [%0], 1;" ::"l"((ulong)(p)) : "memory")
#else
#define CH_WAIT_GE(p, target)                                                                     \
    do {                                                                                          \
        while (*(p) < (target))                                                                   \
            ;                                                                                     \
        CH_DEVICE_FENCE();                                                                        \
    } while (0)
#define CH_RELEASE_INC(p)                                                                         \
    do {                                                                                          \
        CH_DEVICE_FENCE();                                                                        \
        atomic_inc(p);                                                                            \
    } while (0)
#define CH_RELEASE_SET(p)                                                                         \
    do {                                                                                          \
        CH_DEVICE_FENCE();                                                                        \
        atomic_xchg(p, 1);                                                                        \
    } while (0)
#endif
/* Roles a group takes one after the other (roles, a kernel argument): on NVIDIA a launch may
 * have fewer groups than roles, each group taking the next ticket when done with one, so that
 * the chain's waiting groups leave compute units to the second queue's kernels; a ticket past
 * the launch's roles ends the group. Elsewhere one role a group (PoCL: no barrier in a loop whose
 * trip count comes from local memory). */
#ifdef BCL_PTX_SHUFFLE
#define CH_ROLE_LOOP for (int role_ = 0; role_ < roles; ++role_)
#define CH_ROLE_CHECK(past) if (past) break
#else
#define CH_ROLE_LOOP
#define CH_ROLE_CHECK(past)
#endif
/* -DCHAIN_CLOCK (NVIDIA, developer tool, BATCHCL_PCYCLIC_CHAIN_CLOCK=1): work-item 0 of a block's
 * last ticket writes the low 32 bits of the global timer (ns) at the marks of its block into
 * sync[2 + 2 nblk + 8 b + mark] (0 its start, 1 block b - 1's flag seen, 2 the earlier blocks
 * applied, 3 the block's groups written back, 4 its first column step done, 5 all steps, 7 T
 * written, 6 before the flag goes up); trailing group t < 256 its end at sync[2 + 10 nblk + t].
 * The host (chain_report) makes room for them after each step's counters and prints them. */
#ifdef CHAIN_CLOCK
static uint chain_now(void)
{
    ulong t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return (uint)t;
}
#define CH_MARK(cond, slot)                                                                       \
    do {                                                                                          \
        if ((cond) && lid == 0)                                                                   \
            sync[CH_CLOCK0 + 8 * bm + (slot)] = (int)chain_now();                                  \
    } while (0)
/* before lead is set: the block's last ticket */
#define CH_LEAD (!trail && (g % gpb == gpb - 1 || g == ngroups - 1))
#define CH_TRAIL_MARK                                                                             \
    do {                                                                                          \
        if (trail && lid == 0 && g - ngroups < 256)                                               \
            sync[CH_CLOCK0 + 8 * nblk + (g - ngroups)] = (int)chain_now();                         \
    } while (0)
#else
#define CH_MARK(cond, slot)
#define CH_TRAIL_MARK
#endif
/* at the top of the kernel, after lid, lane and P += offP: the groups' applies, then the block's
 * last ticket enters a loop of one pass around the panel's code (j0, nbk, offT, Pin set) */
#define CHAIN_BEGIN                                                                                \
    __local int ticket_l;                                                                          \
    __local real ch_w[CH_K], ch_tw[CH_K], ch_t[QR_NB * QR_NB]; /* W, T^T W, the block's T */       \
    CHAIN_PART_DECL;                                                                               \
    sync += offSync;                                                                               \
    const int nblk = (n + QR_NB - 1) / QR_NB, gpb = QR_NB / CHAIN_CPG;                             \
    const int ngroups = (n + CHAIN_CPG - 1) / CHAIN_CPG;                                           \
    const int ntrail = (ntot - n + CH_COLS - 1) / CH_COLS; /* a step's trailing groups */          \
    __global real *const P_base = P;                                                               \
    __global int *const sync_base = sync;                                                          \
    const ulong offT_base = offT0;                                                                 \
    CH_ROLE_LOOP {                                                                                 \
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE); /* the role before done with local */     \
    if (lid == 0)                                                                                  \
        ticket_l = atomic_inc(sync_base); /* the launch's tickets: its first step's counter */     \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    CH_ROLE_CHECK(ticket_l >= steps * (ngroups + ntrail));                                         \
    const int step = ticket_l / (ngroups + ntrail), slot = (slot0 + step) % nslots;                \
    const int g = ticket_l - step * (ngroups + ntrail), trail = g >= ngroups; /* trailing group */ \
    sync = sync_base + (size_t)step * sync_stride;                                                 \
    __global real *Pnext = P_base + (size_t)((slot + 1) % nslots) * slot_stride; /* At_k+1 */      \
    P = P_base + (size_t)slot * slot_stride;                                                       \
    offT0 = offT_base + (ulong)slot * tb_stride;                                                   \
    if (lid == 0 && step > 0 && !trail) { /* the panel's top: the step before's trailing groups */ \
        volatile __global const int *done = sync - sync_stride + CH_TDONE;                         \
        CH_WAIT_GE(done, ntrail);                                                                  \
    }                                                                                              \
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);                                           \
    volatile __global const real *Pcol = P; /* written in this launch, maybe */                    \
    const int c0 = trail ? n + (g - ngroups) * CH_COLS : g * CHAIN_CPG;                            \
    const int bm = trail ? nblk : c0 / QR_NB, cend = trail ? ntot : n;                             \
    const int rz = trail ? trail_zero : 0, nch = trail ? CHAIN_TCH : 1;                            \
    const int ncol = nch * CHAIN_CPG;                                                              \
    CH_MARK(CH_LEAD, 0);                                                                           \
    real ch_c[CHAIN_RPL][CH_COLS]; /* the group's columns, rows lid + PANEL_WG i */                \
    UNROLL                                                                                         \
    for (int i = 0; i < CHAIN_RPL; ++i) {                                                          \
        const int r = lid + PANEL_WG * i;                                                          \
        UNROLL                                                                                     \
        for (int c = 0; c < CH_COLS; ++c)                                                          \
            ch_c[i][c] = r < m && r >= rz && c < ncol && c0 + c < cend                             \
                             ? Pcol[(size_t)(c0 + c) * ldp + r]                                    \
                             : 0;                                                                  \
    }                                                                                              \
    for (int b = 0; b < CH_BLOCKS; ++b) {                                                          \
        const int act = b < bm; /* always, where the loop ends at bm */                            \
        const int jb = b * QR_NB, nbb = min(QR_NB, n - jb);                                        \
        if (lid == 0 && act) {                                                                     \
            volatile __global const int *flag = sync + 1 + nblk + b;                               \
            CH_WAIT_GE(flag, 1);                                                                   \
        }                                                                                          \
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);                                       \
        CH_MARK(CH_LEAD && b == bm - 1, 1);                                                        \
        volatile __global const real *Vb = P + (size_t)jb * ldp;                                   \
        volatile __global const real *Tb = T + offT0 + (size_t)b * QR_NB * QR_NB;                  \
        for (int e = lid; e < QR_NB * QR_NB; e += PANEL_WG)                                        \
            ch_t[e] = act ? Tb[e] : 0; /* not a later block's T, which may be NaN */               \
        real acc[CH_K / 32][32], vk[CHAIN_RPL][QR_NB];                                             \
        UNROLL                                                                                     \
        for (int i = 0; i < CHAIN_RPL; ++i) {                                                      \
            const int r = lid + PANEL_WG * i;                                                      \
            UNROLL                                                                                 \
            for (int v = 0; v < QR_NB; ++v) /* reflector_at's entries */                           \
                vk[i][v] = r >= m || v >= nbb || !act ? 0                                          \
                           : r > jb + v       ? Vb[(size_t)v * ldp + r]                            \
                                              : (real)(r == jb + v);                               \
        }                                                                                          \
        UNROLL                                                                                     \
        for (int hc = 0; hc < CHAIN_TCH; ++hc) {                                                   \
        CH_CHUNK_IF(hc) { /* chunk hc: columns hc CHAIN_CPG .. + CHAIN_CPG - 1 */                  \
        const int cc = hc * CHAIN_CPG;                                                             \
        UNROLL                                                                                     \
        for (int h = 0; h < CH_K / 32; ++h)                                                        \
            UNROLL                                                                                 \
            for (int e = 0; e < 32; ++e)                                                           \
                acc[h][e] = 0;                                                                     \
        UNROLL                                                                                     \
        for (int i = 0; i < CHAIN_RPL; ++i) {                                                      \
            UNROLL                                                                                 \
            for (int v = 0; v < QR_NB; ++v)                                                        \
                UNROLL                                                                             \
                for (int c = 0; c < CHAIN_CPG; ++c)                                                \
                    acc[(v * CHAIN_CPG + c) / 32][(v * CHAIN_CPG + c) % 32] +=                     \
                        vk[i][v] * ch_c[i][cc + c];                                                \
        }                                                                                          \
        GROUP_SUMS(acc, CH_K, ch_part, ch_w, PANEL_WG);                                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        if (lid < CH_K)                                                                            \
            ch_tw[lid] = tw_entry(ch_t, ch_w, lid / CHAIN_CPG, lid % CHAIN_CPG, CHAIN_CPG, 1);     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        real w2[CH_K];                                                                             \
        UNROLL                                                                                     \
        for (int e = 0; e < CH_K; ++e)                                                             \
            w2[e] = ch_tw[e];                                                                      \
        UNROLL                                                                                     \
        for (int i = 0; i < CHAIN_RPL; ++i)                                                        \
            UNROLL                                                                                 \
            for (int c = 0; c < CHAIN_CPG; ++c) {                                                  \
                real d0 = 0, d1 = 0;                                                               \
                UNROLL                                                                             \
                for (int v = 0; v < QR_NB; v += 2) {                                               \
                    d0 += vk[i][v] * w2[v * CHAIN_CPG + c];                                        \
                    d1 += vk[i][v + 1] * w2[(v + 1) * CHAIN_CPG + c];                              \
                }                                                                                  \
                ch_c[i][cc + c] -= d0 + d1;                                                        \
            }                                                                                      \
        CH_CHUNK_END                                                                               \
        }                                                                                          \
        }                                                                                          \
    }                                                                                              \
    CH_MARK(CH_LEAD, 2);                                                                           \
    if (bm > 0) { /* block 0's columns are in the panel as they came */                            \
        UNROLL                                                                                     \
        for (int i = 0; i < CHAIN_RPL; ++i) {                                                      \
            const int r = lid + PANEL_WG * i;                                                      \
            UNROLL                                                                                 \
            for (int c = 0; c < CH_COLS; ++c)                                                      \
                if (r < m && c < ncol && c0 + c < cend) {                                          \
                    if (trail && next_top && r >= n)                                               \
                        Pnext[(size_t)(c0 + c - n) * ldp + r - n] = ch_c[i][c];                    \
                    else                                                                           \
                        P[(size_t)(c0 + c) * ldp + r] = ch_c[i][c];                                \
                }                                                                                  \
        }                                                                                          \
    }                                                                                              \
    barrier(CLK_GLOBAL_MEM_FENCE); /* outside the branch: PoCL wants no barrier under an if */     \
    CH_TRAIL_MARK;                                                                                 \
    if (trail && lid == 0) {                                                                       \
        CH_RELEASE_INC(sync + CH_TDONE);                                                           \
    }                                                                                              \
    if (bm > 0 && !trail && lid == 0) {                                                            \
        CH_RELEASE_INC(sync + 1 + bm);                                                             \
    }                                                                                              \
    const int lead = !trail && (g % gpb == gpb - 1 || g == ngroups - 1); /* block's last ticket */ \
    if (lead && bm > 0 && lid == 0) {                                                              \
        volatile __global const int *written = sync + 1 + bm;                                      \
        const int groups = min(gpb, ngroups - bm * gpb);                                           \
        CH_WAIT_GE(written, groups);                                                               \
    }                                                                                              \
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);                                           \
    const int j0 = bm * QR_NB, nbk = lead ? min(QR_NB, n - j0) : 0;                                \
    CH_MARK(lead, 3);                                                                              \
    /* a pass that factors nothing (below) writes its T into the spare slot after the blocks' */   \
    const ulong offT = offT0 + (ulong)(lead ? bm : nblk) * QR_NB * QR_NB;                          \
    volatile __global const real *Pin = P;                                                         \
    for (int led = 0; led < CH_PASSES; ++led) { /* the block's QR: the panel's code */
/* at the end of the panel's code */
#define CHAIN_END /* the block and its T written, then the flag */                                \
    barrier(CLK_GLOBAL_MEM_FENCE);                                                                 \
    CH_MARK(lead, 6);                                                                              \
    if (lid == 0 && lead) {                                                                        \
        CH_RELEASE_SET(sync + 1 + nblk + bm);                                                      \
    }                                                                                              \
    }                                                                                              \
    }
#endif

#ifndef CHAIN_CPG
#define CH_MARK(cond, slot) /* the clock's marks are qr_chain's */
#endif

#ifndef PANEL_RPL
/* qr_panel with the block column in registers, for panels of at most 32 PANEL_ROWS rows and
 * QR_NB <= 32 columns (the host keeps PW_CPW PANEL_ROWS at 64 values a work-item): warp w
 * (32 consecutive work-items) holds columns j0 + PW_CPW w .. + PW_CPW - 1, its lane l rows
 * j0 + l + 32 i (i < PANEL_ROWS). A column step needs one barrier: the warp that owns column j
 * reduces its norm within the warp and publishes v_j and tau_j; after the barrier every warp forms
 * v_j's dot products with its own columns within the warp (the later ones to apply H_j, the
 * earlier ones, kept for T) and updates them, and the owner of column j+1 goes on to that
 * column's norm at once. v is double-buffered so that the next owner may publish before the
 * slowest warp has read; T is formed after the loop. Warp sums use the lanes' shuffles with
 * -DBCL_PTX_SHUFFLE (NVIDIA's inline PTX); elsewhere they go through local memory with barriers,
 * every warp taking part. The columns beyond nbk run as steps with tau = 0 that write nothing, so
 * every loop has the same trip count in the whole group. Same results as qr_panel up to
 * rounding. */
#ifndef PANEL_ROWS
#define PANEL_ROWS 1
#endif
#if QR_NB > 32 || QR_NB % (PANEL_WG / 32) != 0
#error "qr_panel_reg: QR_NB <= 32 (the lanes of warp 0 form T's rows), a multiple of the warps"
#endif
#define PW_NW (PANEL_WG / 32)    /* warps */
#ifndef PW_FOLD
#define PW_FOLD 1 /* x's scale folded into the updates (below); -DPW_FOLD=0 scales x (A/B) */
#endif
#ifdef BCL_DOUBLE
#define PW_WU_MIN DBL_MIN /* the fold's factor: normal, or the update takes v */
#else
#define PW_WU_MIN FLT_MIN
#endif
/* row j0 + lane + 32 i against column col = j0 + j of step j: below it or on it. j < QR_NB <= 32,
 * so every row past a lane's first lies below, which the compiler cannot tell from r > col
 * (lane might be negative for all it knows): the rows i > 0 take no selects */
#define PW_BELOW(i) ((i) > 0 || lane > j)
#define PW_AT(i) ((i) == 0 && lane == j)
#define PW_CPW (QR_NB / PW_NW)   /* columns a warp holds */
/* A column step's sums: ||x||^2, then with shuffles the dot products x^T a_c of the warp's columns
 * (a_c(col) comes from its lane; Blue's sums, or the dot products again with v, only in the rare
 * steps that need them: a branch is free of barriers there), else a_c(col) and Blue's three sums
 * (the local-memory sums have barriers, which stay out of branches: Blue's sums always ride along,
 * and the dot products with v always take a second reduction) */
#ifdef BCL_PTX_SHUFFLE
#define PW_EARLY 1
#define PW_SUMS (1 + PW_CPW)
#else
#define PW_EARLY 0
#define PW_SUMS (1 + PW_CPW + 3)
#endif
/* partial sums a lane keeps apart over its rows (shorter chains of dependent additions) */
#define PW_SPLIT (PANEL_ROWS >= 32 ? 2 : 1)
/* x held in registers beside the block column; at 64 rows a lane the two exceed the 255
 * registers of a work-item (NVIDIA), and x is read again from local memory where it is used */
#ifndef PW_HOLD_X
#define PW_HOLD_X (PANEL_ROWS < 64)
#endif

#ifdef BCL_PTX_SHUFFLE
/* the butterfly leaves the same sum in every lane (a + b == b + a in floating point) */
#define WARP_SUMS(vals, count)                                                                    \
    for (int mask_ = 16; mask_ > 0; mask_ >>= 1) {                                                \
        UNROLL                                                                                    \
        for (int c_ = 0; c_ < (count); ++c_)                                                      \
            vals[c_] += lane_xor(vals[c_], mask_);                                                \
    }
#else
/* every lane sums its warp's 32 values in the same order; the barriers make every warp take part
 * (a macro, not a function: PoCL did not honour barriers inside helpers) */
#define WARP_SUMS(vals, count)                                                                    \
    do {                                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        UNROLL                                                                                    \
        for (int c_ = 0; c_ < (count); ++c_)                                                      \
            scratch[c_ * PANEL_WG + lid] = vals[c_];                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        UNROLL                                                                                    \
        for (int c_ = 0; c_ < (count); ++c_) {                                                    \
            real s_ = -(real)0; /* keeps a lone -0 */                                             \
            for (int i_ = 0; i_ < 32; ++i_)                                                       \
                s_ += scratch[c_ * PANEL_WG + (lid & ~31) + i_];                                  \
            vals[c_] = s_;                                                                        \
        }                                                                                         \
    } while (0)
#endif

#ifdef CHAIN_CPG
__kernel __attribute__((reqd_work_group_size(PANEL_WG, 1, 1)))
void qr_chain(__global real *P, ulong offP, int ldp, int m, int n, __global real *T, ulong offT0,
              __global int *sync, ulong offSync, int ntot, int trail_zero, int slot0, int nslots,
              ulong slot_stride, ulong tb_stride, int sync_stride, int next_top, int steps,
              int roles)
#else
__kernel __attribute__((reqd_work_group_size(PANEL_WG, 1, 1)))
void qr_panel_reg(__global real *P, ulong offP, int ldp, int m, int j0, int nbk, __global real *V,
                  ulong offV, int ldv, __global real *T, ulong offT)
#endif
{
    __local real vbuf[2][32 * PANEL_ROWS];
    __local real gram[QR_NB * QR_NB]; /* gram[j QR_NB + k] = v_k^T v_j (k < j), for T */
    __local real tau_l[QR_NB];
#ifndef BCL_PTX_SHUFFLE
    __local real scratch[PW_SUMS * PANEL_WG];
#endif
    const int lid = (int)get_local_id(0);
    const int lane = lid % 32, warp = lid / 32;
    P += offP;
#ifdef CHAIN_CPG
    CHAIN_BEGIN
#else
    V += offV;
    __global const real *Pin = P;
#endif
    real a[PW_CPW][PANEL_ROWS];
    UNROLL
    for (int c = 0; c < PW_CPW; ++c) {
        const int gc = warp * PW_CPW + c;
        UNROLL
        for (int i = 0; i < PANEL_ROWS; ++i) {
            const int r = j0 + lane + 32 * i;
            a[c][i] = r < m && gc < nbk ? Pin[(size_t)(j0 + gc) * ldp + r] : 0;
        }
    }
    for (int jb = 0; jb < QR_NB; jb += PW_CPW) {
        const int owner = jb / PW_CPW;
        UNROLL
        for (int cj = 0; cj < PW_CPW; ++cj) { /* step j: column cj of warp owner */
            const int j = jb + cj, buf = j & 1; /* column j0 + j */
            /* The owner publishes column j as reflectors 0..j-1 left it, and every warp forms
             * reflector j itself, with ||x||^2 and the dot products of x with its own columns in
             * one reduction: one reduction and one barrier on the chain of column steps */
            if (warp == owner) {
                UNROLL
                for (int i = 0; i < PANEL_ROWS; ++i)
                    vbuf[buf][lane + 32 * i] = a[cj][i];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const real alpha = vbuf[buf][j];
            real part[PW_SPLIT][PW_SUMS], sums[PW_SUMS];
#if PW_HOLD_X
            real x[PANEL_ROWS];
#define PW_X(i) x[i]
#else
            real xs = 1; /* the scale of x below: 1, then 1 / (alpha - beta) (x becomes v) */
#define PW_X(i) (PW_BELOW(i) ? vbuf[buf][lane + 32 * (i)] * xs : 0)
#endif
            UNROLL
            for (int h = 0; h < PW_SPLIT; ++h) {
                UNROLL
                for (int s = 0; s < PW_SUMS; ++s)
                    part[h][s] = 0;
            }
            UNROLL
            for (int i = 0; i < PANEL_ROWS; ++i) {
                const int h = i % PW_SPLIT;
#if PW_HOLD_X
                x[i] = PW_BELOW(i) ? vbuf[buf][lane + 32 * i] : 0;
#endif
                const real xi = PW_X(i);
                part[h][0] += xi * xi;
                UNROLL
                for (int c = 0; c < PW_CPW; ++c) {
#if PW_EARLY
                    part[h][1 + c] += xi * a[c][i]; /* x^T a_c below row col */
#else
                    part[h][1 + c] += PW_AT(i) ? a[c][i] : 0; /* a_c at row col */
#endif
                }
#if !PW_EARLY
                blue_add(xi, &part[h][1 + PW_CPW], &part[h][2 + PW_CPW], &part[h][3 + PW_CPW]);
#endif
            }
            UNROLL
            for (int s = 0; s < PW_SUMS; ++s) {
                sums[s] = part[0][s];
                UNROLL
                for (int h = 1; h < PW_SPLIT; ++h)
                    sums[s] += part[h][s];
            }
            real acol[PW_CPW]; /* a_c(col), held by lane j (row j0 + j, the first of its rows) */
#if PW_EARLY
            UNROLL
            for (int c = 0; c < PW_CPW; ++c)
                acol[c] = lane_get(a[c][0], j);
#endif
            WARP_SUMS(sums, PW_SUMS);
#if !PW_EARLY
            UNROLL
            for (int c = 0; c < PW_CPW; ++c)
                acol[c] = sums[1 + c];
#endif
            real beta = alpha, tau = 0, scal = 1;
            const real ssq = sums[0], tot = ssq + alpha * alpha;
            const int plain = ssq >= PLAIN_SSQ_MIN && tot <= PLAIN_SSQ_MAX; /* same in all warps */
            if (plain) {
                /* one division: rcp = 1 / (beta (alpha - beta)) gives tau = (beta - alpha) / beta
                 * and scal = 1 / (alpha - beta) */
                beta = -copysign(sqrt(tot), alpha);
                const real amb = alpha - beta, rcp = 1 / (beta * amb);
                tau = -(amb * amb) * rcp;
                scal = beta * rcp;
            } else { /* extreme, zero or NaN entries */
#if PW_EARLY
                real blue[3] = {0, 0, 0};
                UNROLL
                for (int i = 0; i < PANEL_ROWS; ++i)
                    blue_add(PW_X(i), &blue[0], &blue[1], &blue[2]);
                WARP_SUMS(blue, 3);
#else
                const real *blue = sums + 1 + PW_CPW;
#endif
                reflector_of(alpha, blue[0], blue[1], blue[2], &beta, &tau, &scal);
            }
            if (j >= nbk)
                tau = 0;
            real vdots[PW_CPW]; /* v^T a_c below row col */
#if PW_HOLD_X && PW_FOLD
            /* v = scal x: the updates take scal into their factor (w scal) x instead of v, a
             * multiplication a row fewer where a warp updates its columns; the owner and the
             * rare path form v */
#undef PW_X
#define PW_X(i) (x[i] * scal)
#else
#if PW_HOLD_X
            UNROLL
            for (int i = 0; i < PANEL_ROWS; ++i)
                x[i] *= scal;
#else
            xs = scal;
#endif
#endif
#if PW_EARLY
            /* x^T a_c scaled (in the plain range an underflow there costs under 2^-60 of ||H||),
             * unless entries of a_c near the overflow threshold made it overflow */
            int early = plain;
            UNROLL
            for (int c = 0; c < PW_CPW; ++c) {
                vdots[c] = sums[1 + c] * scal;
                early &= isfinite(vdots[c]);
            }
            if (!early)
#endif
            {
                UNROLL
                for (int c = 0; c < PW_CPW; ++c) {
                    vdots[c] = 0;
                    UNROLL
                    for (int i = 0; i < PANEL_ROWS; ++i)
                        vdots[c] += PW_X(i) * a[c][i];
                }
                WARP_SUMS(vdots, PW_CPW);
            }
            UNROLL
            for (int c = 0; c < PW_CPW; ++c) {
                const int gc = warp * PW_CPW + c;
                const real dot = acol[c] + vdots[c]; /* v_j^T a_c */
                if (gc > j) {
                    const real w = tau * dot;
#if PW_HOLD_X && PW_FOLD
                    /* w scal overflows where ||a_c|| / ||x|| nears the overflow threshold, or
                     * underflows the other way, where w and v did not: then w v (the same
                     * branch in the whole warp) */
                    const real wu = w * scal;
                    if (isfinite(wu) && (fabs(wu) >= PW_WU_MIN || w == 0)) {
                        UNROLL
                        for (int i = 0; i < PANEL_ROWS; ++i)
                            a[c][i] -= PW_AT(i) ? w : wu * x[i];
                    } else
#endif
                    {
                        UNROLL
                        for (int i = 0; i < PANEL_ROWS; ++i)
                            a[c][i] -= PW_AT(i) ? w : w * PW_X(i);
                    }
                } else if (gc < j && lane == 0) {
                    gram[j * QR_NB + gc] = dot;
                }
            }
            if (warp == owner) { /* column j becomes beta on the diagonal and v below */
                UNROLL
                for (int i = 0; i < PANEL_ROWS; ++i) {
                    a[cj][i] = PW_BELOW(i) ? PW_X(i) : PW_AT(i) ? beta : a[cj][i];
                }
            }
            if (lid == 0)
                tau_l[j] = tau;
#undef PW_X
            CH_MARK(lead && j == 0, 4);
        }
    }
    CH_MARK(lead, 5);
    UNROLL
    for (int c = 0; c < PW_CPW; ++c) {
        const int gc = warp * PW_CPW + c;
        UNROLL
        for (int i = 0; i < PANEL_ROWS; ++i) {
            const int r = j0 + lane + 32 * i, col = j0 + gc;
            if (r < m && gc < nbk) { /* P (and V) written here, off the steps' critical path */
                P[(size_t)col * ldp + r] = a[c][i];
#ifndef V_FROM_P
                V[(size_t)col * ldv + r] = r > col ? a[c][i] : r == col ? 1 : 0;
#endif
            }
        }
    }
    /* T after the stores, which drain meanwhile */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (warp == 0)
        t_from_gram(gram, tau_l, nbk, lane, T + offT);
#ifdef CHAIN_CPG
    CH_MARK(lead, 7);
    CHAIN_END
#endif
}

#else /* PANEL_RPL */
/* qr_panel with the block column in registers, spread by rows: work-item t holds rows
 * j0 + t + PANEL_WG i (i < PANEL_RPL) of all QR_NB columns (the host keeps PANEL_RPL QR_NB at 64
 * values a work-item and PANEL_WG PANEL_RPL >= m - j0). Each work-item's share of a column step
 * is short (PANEL_RPL rows), where qr_panel_reg gives a warp a whole column of up to 2048 rows
 * (the host takes it on NVIDIA for 2n > 1024 in blocks of 8, where it is faster).
 * Step j forms, in one reduction over the group, ||x||^2 and every x^T a_c (x: column j below
 * the diagonal): one barrier a step. Every work-item then forms reflector j itself from the same
 * totals, applies it to its rows of the later columns, and keeps v_k^T v_j (k < j) for T. Blue's
 * sums (extreme, zero or NaN entries) and the dot products again with v (when x^T a_c scaled
 * overflows) take a reduction of their own: on NVIDIA only in the steps that need them (a branch
 * taken by the whole group), elsewhere in every step (no barrier under a branch, for PoCL). */
#define PR_NW (PANEL_WG / 32) /* warps */
#if QR_NB > 32 || 32 % QR_NB != 0 || PANEL_WG % 32 != 0 || PANEL_WG < QR_NB
#error "qr_panel_rows: QR_NB divides 32, PANEL_WG a multiple of 32 and at least QR_NB"
#endif
#ifdef BCL_PTX_SHUFFLE
#define PR_RARE(cond) if (cond)
#define ROW_TOTALS(vals, K, region, tot) ROW_TOTALS_NW(vals, K, region, tot, PR_NW)
#else
#define PR_RARE(cond)
/* the same totals through local memory: each warp's sums (scratch, two barriers), then every
 * work-item adds the warps' sums in the same order */
#define ROW_TOTALS(vals, K, region, tot)                                                          \
    do {                                                                                          \
        UNROLL                                                                                    \
        for (int c_ = 0; c_ < (K); ++c_)                                                          \
            scratch[c_ * PANEL_WG + lid] = vals[c_];                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        if (lane < (K)) {                                                                         \
            real s_ = 0;                                                                          \
            for (int i_ = 0; i_ < 32; ++i_)                                                       \
                s_ += scratch[lane * PANEL_WG + warp * 32 + i_];                                  \
            region[warp * (K) + lane] = s_;                                                       \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        UNROLL                                                                                    \
        for (int c_ = 0; c_ < (K); ++c_) {                                                        \
            real s_ = 0;                                                                          \
            for (int w_ = 0; w_ < PR_NW; ++w_)                                                    \
                s_ += region[w_ * (K) + c_];                                                      \
            tot[c_] = s_;                                                                         \
        }                                                                                         \
    } while (0)
#endif

#ifdef CHAIN_CPG
__kernel __attribute__((reqd_work_group_size(PANEL_WG, 1, 1)))
void qr_chain(__global real *P, ulong offP, int ldp, int m, int n, __global real *T, ulong offT0,
              __global int *sync, ulong offSync, int ntot, int trail_zero, int slot0, int nslots,
              ulong slot_stride, ulong tb_stride, int sync_stride, int next_top, int steps,
              int roles)
#else
__kernel __attribute__((reqd_work_group_size(PANEL_WG, 1, 1)))
void qr_panel_rows(__global real *P, ulong offP, int ldp, int m, int j0, int nbk, __global real *V,
                   ulong offV, int ldv, __global real *T, ulong offT)
#endif
{
    __local real part[2][PR_NW * QR_NB]; /* the warps' sums, by the step's parity */
    __local real rowc[2][QR_NB];         /* row col of the block as step j finds it */
    __local real blue_part[PR_NW * 4], redo_part[PR_NW * QR_NB]; /* the rare reductions */
    __local real gram[QR_NB * QR_NB];    /* gram[j QR_NB + k] = v_k^T v_j (k < j), for T */
    __local real tau_l[QR_NB];
#ifndef BCL_PTX_SHUFFLE
    __local real scratch[QR_NB * PANEL_WG];
#endif
    const int lid = (int)get_local_id(0);
    const int lane = lid % 32, warp = lid / 32;
    P += offP;
#ifdef CHAIN_CPG
    CHAIN_BEGIN
#else
    V += offV;
    __global const real *Pin = P;
#endif
    real a[PANEL_RPL][QR_NB];
    UNROLL
    for (int i = 0; i < PANEL_RPL; ++i) {
        const int r = j0 + lid + PANEL_WG * i;
        UNROLL
        for (int c = 0; c < QR_NB; ++c)
            a[i][c] = r < m && c < nbk ? Pin[(size_t)(j0 + c) * ldp + r] : 0;
    }
    /* blocks of 8: the steps unrolled (j known at compile time, no selects); wider blocks in a
     * loop (unrolled, they exceed the compilers' limits, and a went to the stack) that picks
     * column j from the registers by bits (pick) */
#if QR_NB <= 8
    UNROLL
#else
#pragma unroll 1
#endif
    for (int j = 0; j < QR_NB; ++j) {
        const int col = j0 + j, buf = j & 1;
        if (lid == j) { /* row col is this work-item's first */
            UNROLL
            for (int c = 0; c < QR_NB; ++c)
                rowc[buf][c] = a[0][c];
        }
        real xj[PANEL_RPL]; /* column j on this work-item's rows */
        UNROLL
        for (int i = 0; i < PANEL_RPL; ++i) {
            xj[i] = a[i][0];
            UNROLL
            for (int c = 1; c < QR_NB; ++c)
                xj[i] = pick(c == j, a[i][c], xj[i]);
        }
        real dots[QR_NB]; /* this work-item's sums x^T a_c, then the group's, then v_j^T a_c */
        UNROLL
        for (int c = 0; c < QR_NB; ++c)
            dots[c] = 0;
        UNROLL
        for (int i = 0; i < PANEL_RPL; ++i) {
            const real x = j0 + lid + PANEL_WG * i > col ? xj[i] : 0;
            UNROLL
            for (int c = 0; c < QR_NB; ++c)
                dots[c] += x * a[i][c]; /* c = j: ||x||^2 */
        }
        ROW_TOTALS(dots, QR_NB, part[buf], dots);
        real ssq = dots[0];
        UNROLL
        for (int c = 1; c < QR_NB; ++c)
            ssq = pick(c == j, dots[c], ssq);
        const real alpha = rowc[buf][j], all = ssq + alpha * alpha;
        const int plain = ssq >= PLAIN_SSQ_MIN && all <= PLAIN_SSQ_MAX; /* the same everywhere */
        real beta = alpha, tau = 0, scal = 1;
        if (plain) { /* as qr_panel_reg: one division */
            beta = -copysign(sqrt(all), alpha);
            const real amb = alpha - beta, rcp = 1 / (beta * amb);
            tau = -(amb * amb) * rcp;
            scal = beta * rcp;
        }
        PR_RARE(!plain) { /* extreme, zero or NaN entries: Blue's sums */
            real bl[4] = {0, 0, 0, 0};
            UNROLL
            for (int i = 0; i < PANEL_RPL; ++i)
                blue_add(j0 + lid + PANEL_WG * i > col ? xj[i] : 0, &bl[0], &bl[1], &bl[2]);
            ROW_TOTALS(bl, 4, blue_part, bl);
            real bb, bta, bs;
            reflector_of(alpha, bl[0], bl[1], bl[2], &bb, &bta, &bs);
            beta = plain ? beta : bb;
            tau = plain ? tau : bta;
            scal = plain ? scal : bs;
        }
        if (j >= nbk)
            tau = 0;
        /* v_j^T a_c = a_c(col) + scal x^T a_c, unless scal x^T a_c overflows (or outside the
         * plain range): then the dot products again with v */
        int early = plain;
        UNROLL
        for (int c = 0; c < QR_NB; ++c) {
            const real sx = scal * dots[c];
            early &= isfinite(sx) || c == j;
            dots[c] = rowc[buf][c] + sx;
        }
        PR_RARE(!early) {
            real vd[QR_NB];
            UNROLL
            for (int c = 0; c < QR_NB; ++c)
                vd[c] = 0;
            UNROLL
            for (int i = 0; i < PANEL_RPL; ++i) {
                const real v = j0 + lid + PANEL_WG * i > col ? xj[i] * scal : 0;
                UNROLL
                for (int c = 0; c < QR_NB; ++c)
                    vd[c] += v * a[i][c];
            }
            ROW_TOTALS(vd, QR_NB, redo_part, vd);
            UNROLL
            for (int c = 0; c < QR_NB; ++c)
                dots[c] = early ? dots[c] : rowc[buf][c] + vd[c];
        }
        /* H_j on this work-item's rows: v = 1 at row col, scal x below */
        UNROLL
        for (int i = 0; i < PANEL_RPL; ++i) {
            const int r = j0 + lid + PANEL_WG * i;
            const real v = r > col ? xj[i] * scal : r == col ? 1 : 0;
            const real now = r > col ? v : r == col ? beta : xj[i]; /* column j */
            UNROLL
            for (int c = 0; c < QR_NB; ++c)
                a[i][c] = c > j ? a[i][c] - (tau * dots[c]) * v : c == j ? now : a[i][c];
        }
        if (lid == 0) {
            UNROLL
            for (int c = 0; c < QR_NB; ++c)
                if (c < j)
                    gram[j * QR_NB + c] = dots[c];
            tau_l[j] = tau;
        }
        CH_MARK(lead && j == 0, 4);
    }
    CH_MARK(lead, 5);
    UNROLL
    for (int i = 0; i < PANEL_RPL; ++i) {
        const int r = j0 + lid + PANEL_WG * i;
        UNROLL
        for (int c = 0; c < QR_NB; ++c) {
            const int col = j0 + c;
            if (r < m && c < nbk) {
                P[(size_t)col * ldp + r] = a[i][c];
#ifndef V_FROM_P
                V[(size_t)col * ldv + r] = r > col ? a[i][c] : r == col ? 1 : 0;
#endif
            }
        }
    }
    /* T after the stores, which drain meanwhile */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (warp == 0)
        t_from_gram(gram, tau_l, nbk, lane, T + offT);
#ifdef CHAIN_CPG
    CH_MARK(lead, 7);
    CHAIN_END
#endif
}
#endif /* PANEL_RPL */

/* Entry (r, j0 + v) of a block's reflectors, as the applies read them: V's entry below the
 * diagonal, 1 on it, 0 above, and 0 past the rows (lim) or the block's nbk columns. Only the part
 * below the diagonal is read, so V may be the factored panel itself (-DV_FROM_P). */
static real reflector_at(__global const real *V, int ldv, int r, int v, int j0, int nbk, int lim)
{
    return r >= lim || v >= nbk ? 0 : r > j0 + v ? V[(size_t)v * ldv + r] : (real)(r == j0 + v);
}

/* C(j0:m, 0:ncols) := (I - V T' V^T) C(j0:m, 0:ncols) with V = V(:, j0:j0+nbk) and T' = T^T
 * (trans: applying Q^T, the factorization's update) or T (building Q from the identity). Each
 * work-group takes QR_CT columns of C: W = V^T C over chunks of QR_RCH rows staged in local
 * memory, W = T' W, then C -= V W over the chunks again. The next chunk is loaded into registers
 * while the current one is used, so the loads' latency overlaps the arithmetic. Tall C is split
 * into row ranges of rows_per_split (dimension 1 of the grid), in two launches: stage 1 writes each
 * range's share of W to Wp, stage 2 sums the shares (in a fixed order) and updates its range;
 * stage 0 does both in one launch, with one range. Every stage runs the same barriers (empty loops
 * where it skips a part), so that they stay in uniform control flow. */
#define QR_V_EACH (QR_NB * QR_RCH / QR_WG)  /* V values a work-item stages per chunk */
#define QR_C_EACH (QR_CT * QR_RCH / QR_WG)  /* C values a work-item stages, or updates, per chunk */
#if QR_V_EACH * QR_WG != QR_NB * QR_RCH || QR_C_EACH * QR_WG != QR_CT * QR_RCH ||              \
    QR_WG % QR_RCH != 0
#error "qr_apply: QR_WG must divide QR_NB * QR_RCH and QR_CT * QR_RCH, and QR_RCH must divide QR_WG"
#endif
__kernel __attribute__((reqd_work_group_size(QR_WG, 1, 1)))
void qr_apply(__global const real *V, ulong offV, int ldv, __global const real *T, ulong offT,
              int m, int j0, int nbk, int trans, __global real *C, ulong offC, int ldc, int ncols,
              int rows_per_split, int stage, __global real *Wp)
{
    __local real vs[QR_NB * (QR_RCH + 1)]; /* padded: the work-items of a warp read across columns */
    __local real cs[QR_CT * QR_RCH];
    __local real w[QR_NB * QR_CT], w2[QR_NB * QR_CT];
    const int lid = (int)get_local_id(0);
    const int c0 = (int)get_group_id(0) * QR_CT;
    const int tv = lid % QR_NB, tc = lid / QR_NB;
    const int split = (int)get_group_id(1), splits = (int)get_num_groups(1);
    const int r_first = j0 + split * rows_per_split;
    const int r_end = min(m, r_first + rows_per_split);
    const int w_end = stage == 2 ? r_first : r_end, c_end = stage == 1 ? r_first : r_end;
    /* this work-item's W entry in the shares of the ranges: range k at wp[k * wp_split] */
    __global real *wp = Wp + (size_t)(c0 + tc) * QR_NB + tv;
    const size_t wp_split = (size_t)get_num_groups(0) * QR_CT * QR_NB;
    V += offV + (size_t)j0 * ldv;
    C += offC;
    T += offT;
    real vnext[QR_V_EACH], cnext[QR_C_EACH];
#define QR_LOAD_V(r0, lim) /* rows from r0, below lim */                                         \
    UNROLL                                                                                        \
    for (int e = 0; e < QR_V_EACH; ++e) {                                                         \
        const int idx = lid + e * QR_WG, rr = idx % QR_RCH, vv = idx / QR_RCH, r = (r0) + rr;     \
        vnext[e] = reflector_at(V, ldv, r, vv, j0, nbk, lim);                                     \
    }
#define QR_STORE_V()                                                                              \
    UNROLL                                                                                        \
    for (int e = 0; e < QR_V_EACH; ++e) {                                                         \
        const int idx = lid + e * QR_WG;                                                          \
        vs[idx / QR_RCH * (QR_RCH + 1) + idx % QR_RCH] = vnext[e];                                \
    }
#define QR_LOAD_C(r0, lim) /* rows from r0, below lim */                                         \
    UNROLL                                                                                        \
    for (int e = 0; e < QR_C_EACH; ++e) {                                                         \
        const int idx = lid + e * QR_WG, rr = idx % QR_RCH, cc = idx / QR_RCH, r = (r0) + rr;     \
        cnext[e] = r < (lim) && c0 + cc < ncols ? C[(size_t)(c0 + cc) * ldc + r] : 0;             \
    }
    QR_LOAD_V(r_first, w_end);
    QR_LOAD_C(r_first, w_end);
    real acc0 = 0, acc1 = 0; /* two chains, for the latency of the additions */
    for (int r0 = r_first; r0 < w_end; r0 += QR_RCH) {
        barrier(CLK_LOCAL_MEM_FENCE);
        QR_STORE_V();
        UNROLL
        for (int e = 0; e < QR_C_EACH; ++e)
            cs[lid + e * QR_WG] = cnext[e];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (r0 + QR_RCH < w_end) {
            QR_LOAD_V(r0 + QR_RCH, w_end);
            QR_LOAD_C(r0 + QR_RCH, w_end);
        }
        for (int rr = 0; rr < QR_RCH; rr += 2) {
            acc0 += vs[tv * (QR_RCH + 1) + rr] * cs[tc * QR_RCH + rr];
            acc1 += vs[tv * (QR_RCH + 1) + rr + 1] * cs[tc * QR_RCH + rr + 1];
        }
    }
    real wsum = acc0 + acc1;
    if (stage == 1) {
        wp[split * wp_split] = wsum;
    } else if (stage == 2) {
        wsum = 0;
        for (int k = 0; k < splits; ++k)
            wsum += wp[k * wp_split];
    }
    w[tc * QR_NB + tv] = wsum;
    barrier(CLK_LOCAL_MEM_FENCE);
    real s = 0; /* T is upper triangular, column-major QR_NB x QR_NB */
    if (trans)
        for (int u = 0; u <= tv; ++u)
            s += T[tv * QR_NB + u] * w[tc * QR_NB + u];
    else
        for (int u = tv; u < QR_NB; ++u)
            s += T[u * QR_NB + tv] * w[tc * QR_NB + u];
    w2[tc * QR_NB + tv] = s;
    /* C -= V W2: work-item (row rr of the chunk, columns cq + k QR_WG / QR_RCH) */
    const int rr = lid % QR_RCH, cq = lid / QR_RCH;
    QR_LOAD_V(r_first, c_end);
    for (int r0 = r_first; r0 < c_end; r0 += QR_RCH) {
        barrier(CLK_LOCAL_MEM_FENCE);
        QR_STORE_V();
        barrier(CLK_LOCAL_MEM_FENCE);
        if (r0 + QR_RCH < c_end) {
            QR_LOAD_V(r0 + QR_RCH, c_end);
        }
        const int r = r0 + rr;
        UNROLL
        for (int k = 0; k < QR_C_EACH; ++k) {
            const int cc = cq + k * (QR_WG / QR_RCH);
            if (r < c_end && c0 + cc < ncols) {
                real d0 = 0, d1 = 0;
                for (int v = 0; v < QR_NB; v += 2) {
                    d0 += vs[v * (QR_RCH + 1) + rr] * w2[cc * QR_NB + v];
                    d1 += vs[(v + 1) * (QR_RCH + 1) + rr] * w2[cc * QR_NB + v + 1];
                }
                C[(size_t)(c0 + cc) * ldc + r] -= d0 + d1;
            }
        }
    }
#undef QR_LOAD_V
#undef QR_LOAD_C
#undef QR_STORE_V
}

#ifdef APPLY_RPL
/* qr_apply in one launch for C of at most QR_WG APPLY_RPL rows: work-group g takes columns
 * g APPLY_CT .. + APPLY_CT - 1 of C over all its rows, and work-item t rows j0 + t + QR_WG i
 * (i < APPLY_RPL) of them and of V. Each work-item sums its rows' outer products v_r^T c_r into
 * the whole QR_NB x APPLY_CT block of W (each V and C value loaded once, used APPLY_CT or QR_NB
 * times), one reduction over the group gives W, work-items t < AP_K form T' W, and every
 * work-item updates its rows. qr_apply's chunks, staged in local memory, run a chain of barriers
 * and re-read each value from local memory for every product; its tall C took two launches. */
#ifndef APPLY_KEEP
/* 1: a work-item keeps its rows of V and C in registers from the sums to the update (the host's
 * choice); 0: it loads them again for the update */
#define APPLY_KEEP 0
#endif
#define AP_K (QR_NB * APPLY_CT) /* entries of W a work-group forms */
#define AP_H (AP_K / 32)        /* reductions of 32 sums */
#if AP_K % 32 != 0 || AP_K > QR_WG || QR_WG != 256
#error "qr_apply_rows: QR_NB APPLY_CT a multiple of 32, at most QR_WG = 256"
#endif
__kernel __attribute__((reqd_work_group_size(QR_WG, 1, 1)))
void qr_apply_rows(__global const real *V, ulong offV, int ldv, __global const real *T,
                   ulong offT, int m, int j0, int nbk, int trans, __global real *C, ulong offC,
                   int ldc, int ncols)
{
    __local real w_l[AP_K], w2_l[AP_K]; /* W and T' W, [v APPLY_CT + c] */
    __local real t_l[QR_NB * QR_NB];
#ifdef BCL_PTX_SHUFFLE
    __local real part[AP_H][8 * 32]; /* the warps' sums */
#else
    __local real scratch[8 * QR_WG];
#endif
    const int lid = (int)get_local_id(0);
    const int c0 = (int)get_group_id(0) * APPLY_CT;
    V += offV + (size_t)j0 * ldv;
    C += offC + (size_t)c0 * ldc;
    T += offT;
    /* T into local memory first, its loads in flight with the rows': T' W read it from global
     * memory in a chain of dependent loads (up to QR_NB) after the reduction */
    for (int e = lid; e < QR_NB * QR_NB; e += QR_WG)
        t_l[e] = T[e];
    real acc[AP_H][32]; /* [(v APPLY_CT + c) / 32][% 32] */
    UNROLL
    for (int h = 0; h < AP_H; ++h)
        UNROLL
        for (int e = 0; e < 32; ++e)
            acc[h][e] = 0;
    /* the rows' loops unrolled, so that the compiler issues many rows' loads at once (on the
     * H100 a launch at n = 1024 took 12.7 us against 15.1 as loops loading one row ahead) */
#define AP_LOAD(i, vr, cr)                                                                        \
    do {                                                                                          \
        const int r_ = j0 + lid + QR_WG * (i);                                                    \
        UNROLL                                                                                    \
        for (int v_ = 0; v_ < QR_NB; ++v_)                                                        \
            vr[v_] = reflector_at(V, ldv, r_, v_, j0, nbk, m);                                    \
        UNROLL                                                                                    \
        for (int c_ = 0; c_ < APPLY_CT; ++c_)                                                     \
            cr[c_] = r_ < m && c0 + c_ < ncols ? C[(size_t)c_ * ldc + r_] : 0;                    \
    } while (0)
#if APPLY_KEEP
    real vk[APPLY_RPL][QR_NB], ck[APPLY_RPL][APPLY_CT]; /* the rows, kept for the update */
#endif
    UNROLL
    for (int i = 0; i < APPLY_RPL; ++i) {
        real vr[QR_NB], cr[APPLY_CT];
        AP_LOAD(i, vr, cr);
        UNROLL
        for (int v = 0; v < QR_NB; ++v)
            UNROLL
            for (int c = 0; c < APPLY_CT; ++c)
                acc[(v * APPLY_CT + c) / 32][(v * APPLY_CT + c) % 32] += vr[v] * cr[c];
#if APPLY_KEEP
        UNROLL
        for (int v = 0; v < QR_NB; ++v)
            vk[i][v] = vr[v];
        UNROLL
        for (int c = 0; c < APPLY_CT; ++c)
            ck[i][c] = cr[c];
#endif
    }
#ifdef BCL_PTX_SHUFFLE
    const int lane = lid % 32;
    GROUP_SUMS(acc, AP_K, part, w_l, QR_WG);
#else
    GROUP_SUMS(acc, AP_K, scratch, w_l, QR_WG);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < AP_K)
        w2_l[lid] = tw_entry(t_l, w_l, lid / APPLY_CT, lid % APPLY_CT, APPLY_CT, trans);
    barrier(CLK_LOCAL_MEM_FENCE);
    real w2[AP_K];
    UNROLL
    for (int e = 0; e < AP_K; ++e)
        w2[e] = w2_l[e];
#if APPLY_KEEP
    UNROLL
    for (int i = 0; i < APPLY_RPL; ++i) {
        real vr[QR_NB], cr[APPLY_CT];
        UNROLL
        for (int v = 0; v < QR_NB; ++v)
            vr[v] = vk[i][v];
        UNROLL
        for (int c = 0; c < APPLY_CT; ++c)
            cr[c] = ck[i][c];
#else
    /* the next row's values loaded before this row's stores (which, for the compiler, might
     * alias them) */
    real vn[QR_NB], cn[APPLY_CT];
    AP_LOAD(0, vn, cn);
    UNROLL
    for (int i = 0; i < APPLY_RPL; ++i) {
        real vr[QR_NB], cr[APPLY_CT];
        UNROLL
        for (int v = 0; v < QR_NB; ++v)
            vr[v] = vn[v];
        UNROLL
        for (int c = 0; c < APPLY_CT; ++c)
            cr[c] = cn[c];
        if (i + 1 < APPLY_RPL)
            AP_LOAD(i + 1, vn, cn);
#endif
        const int r = j0 + lid + QR_WG * i;
        UNROLL
        for (int c = 0; c < APPLY_CT; ++c) {
            real d0 = 0, d1 = 0; /* two chains, for the latency of the additions */
            UNROLL
            for (int v = 0; v < QR_NB; v += 2) {
                d0 += vr[v] * w2[v * APPLY_CT + c];
                d1 += vr[v + 1] * w2[(v + 1) * APPLY_CT + c];
            }
            if (r < m && c0 + c < ncols)
                C[(size_t)c * ldc + r] = cr[c] - (d0 + d1);
        }
    }
#undef AP_LOAD
}
#endif

/* Entry e (< n^2) of R (n x n, zeros below the diagonal) from the upper triangle of P; a zero or
 * NaN R(i,i) lowers *bad to first + i + 1 (the problem's info, 1-based over the N x N R). */
static void take_r_entry(__global const real *P, int ldp, int n, __global real *R,
                         __global int *bad, int first, int e)
{
    const int r = e % n, c = e / n;
    const real x = P[(size_t)c * ldp + r];
    R[e] = r <= c ? x : 0;
    if (r == c && (x == 0 || isnan(x)))
        atomic_min(bad, first + r + 1);
}

/* entry e (< m^2, which passes 2^31 from m = 46341: size_t) of Q = I (m x m, leading dimension
 * ld) */
static void identity_entry(__global real *Q, int ld, int m, size_t e)
{
    const size_t c = e / (size_t)m, r = e % (size_t)m;
    Q[c * (size_t)ld + r] = c == r ? 1 : 0;
}

__kernel void qr_take_r(__global const real *P, ulong offP, int ldp, int n, __global real *R,
                        ulong offR, __global int *bad, ulong offBad, int first)
{
    const int e = (int)get_global_id(0);
    if (e < n * n)
        take_r_entry(P + offP, ldp, n, R + offR, bad + offBad, first, e);
}

/* X = R^-1 for the leaves of `count` upper triangular n x n blocks: the diagonal blocks of `leaf`
 * rows and columns (the last may be smaller) of each, R_b at offR + b rstride (leading dimension
 * ldr), X_b at offX + b xstride (leading dimension ldx); the host forms the blocks above the leaves
 * by GEMMs (leaf >= n: the whole block). A work-group solves TRI_COLS columns of one leaf by
 * column-oriented back substitution, X's columns holding the right-hand sides in place: per row i,
 * x_i = b_i / R_ii, then b(0:i) -= x_i R(0:i, i) (one barrier a row). Every row step rewrites the
 * column above it: with -DTRI_NMAX (leaf <= TRI_NMAX) the columns stay in local memory and go to X
 * once at the end (TRI_COLS TRI_NMAX values: the host keeps them within 32 KiB); without it they
 * are updated in X. The same operations in the same order either way. */
#ifndef TRI_COLS /* the host passes 4 with TRI_NMAX > 512 */
#define TRI_COLS 8
#endif
#define TRI_LANES (256 / TRI_COLS) /* row lanes of a column */
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void tri_inverse(__global const real *R, ulong offR, int ldr, ulong rstride, int n, int leaf,
                 __global real *X, ulong offX, ulong xstride, int ldx)
{
    __local real xi[2][TRI_COLS];
    const int lid = (int)get_local_id(0);
    const int leaves = (n + leaf - 1) / leaf, tiles = (leaf + TRI_COLS - 1) / TRI_COLS;
    const int g = (int)get_group_id(0), blk = g / (leaves * tiles), l = g / tiles % leaves;
    const int o = l * leaf, m = min(leaf, n - o), j1 = g % tiles * TRI_COLS;
    const int lane = lid % TRI_LANES, c = lid / TRI_LANES, j = j1 + c;
    __global const real *Rb = R + offR + (size_t)blk * rstride + (size_t)o * (ldr + 1);
    __global real *xg = X + offX + (size_t)blk * xstride + (size_t)o * (ldx + 1) + (size_t)j * ldx;
#ifdef TRI_NMAX
    __local real xcols[TRI_COLS][TRI_NMAX];
    __local real *x = xcols[c];
#else
    __global real *x = xg;
#endif
    const int live = j < m;
    if (live)
        for (int r = lane; r < m; r += TRI_LANES)
            x[r] = r == j ? 1 : 0;
    const int top = min(j1 + TRI_COLS - 1, m - 1);
    for (int i = top; i >= 0; --i) {
        if (live && i % TRI_LANES == lane) { /* the owner of row i: its b_i is final */
            const real xv = x[i] / Rb[(size_t)i * ldr + i];
            x[i] = xv;
            xi[i & 1][c] = xv;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (live) {
            const real xv = xi[i & 1][c];
            __global const real *ri = Rb + (size_t)i * ldr;
            for (int r = lane; r < i; r += TRI_LANES)
                x[r] -= xv * ri[r];
        }
    }
#ifdef TRI_NMAX
    if (live) /* a lane's own rows: no barrier */
        for (int r = lane; r < m; r += TRI_LANES)
            xg[r] = x[r];
#endif
}

/* The diagonal blocks, QR_TB columns each, of the n x n T of all n reflectors of a panel
 * (column-major, leading dimension n), group g forming block g: its own diagonal blocks of QR_NB
 * columns are the panel kernel's block T's (Tb, QR_NB x QR_NB each), and the blocks above them are
 * formed in halves of growing width h, all pairs of a width at once, as in LAPACK's dgeqrt3:
 * T12 = -T11 S12 T22 from S = V^T V (n x n, leading dimension n). Four barriers a width (dlarft's
 * recursion column by column took two a column: 47 us a launch at n = 512 on the H100, now 18).
 * The host forms the blocks above these the same way, by GEMMs. */
#define TD_PAIRS_MAX (QR_TB * QR_TB / 4) /* entries of U = T11 S12 over a width's pairs */
#ifndef TD_WG /* t_diag_blocks' work-items (the host passes its own; 64 took 53-57 us a launch */
#define TD_WG 256 /* at n = 512: latency) */
#endif
__kernel __attribute__((reqd_work_group_size(TD_WG, 1, 1)))
void t_diag_blocks(__global const real *S, ulong offS, __global const real *Tb, ulong offTb, int n,
                   __global real *T, ulong offT)
{
    __local real tl[QR_TB * QR_TB]; /* tl[j QR_TB + i] = T(o + i, o + j) */
    __local real ul[TD_PAIRS_MAX];
    const int t = (int)get_local_id(0), o = (int)get_group_id(0) * QR_TB;
    const int w = min(QR_TB, n - o);
    S += offS;
    Tb += offTb;
    T += offT;
    for (int e = t; e < QR_TB * QR_TB; e += TD_WG)
        tl[e] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = t; e < QR_TB * QR_NB; e += TD_WG) { /* block b's T(i, j) at e = b NB^2 + j NB + i */
        const int i = e % QR_NB, j = e / QR_NB % QR_NB, c = e / (QR_NB * QR_NB) * QR_NB;
        if (c + i < w && c + j < w)
            tl[(c + j) * QR_TB + c + i] = Tb[(size_t)(o / QR_NB) * QR_NB * QR_NB + e];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the loops that hold barriers run the same trips in every group (PoCL); a width's pairs
     * hold QR_TB h / 2 entries of U, at most TD_PAIRS_MAX / TD_WG a work-item */
    for (int h = QR_NB; h < QR_TB; h *= 2) {
        const int entries = QR_TB / 2 * h;
        /* S12 of every pair into ul (pair q: T11 at (q 2h, q 2h), the right half of width
         * r <= h from q 2h + h; its S12(k, j) at q h h + j h + k), read along S's columns */
        for (int e = t; e < entries; e += TD_WG) {
            const int q = e / (h * h), k = e % h, j = e / h % h, p0 = 2 * h * q;
            ul[e] = j < w - p0 - h ? S[(size_t)(o + p0 + h + j) * n + o + p0 + k] : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        real u[(TD_PAIRS_MAX + TD_WG - 1) / TD_WG]; /* U(i, j) = sum_{i<=k<h} T11(i, k) S12(k, j) */
        UNROLL
        for (int m = 0; m < (TD_PAIRS_MAX + TD_WG - 1) / TD_WG; ++m) {
            const int e = t + TD_WG * m;
            const int q = e / (h * h), i = e % h, j = e / h % h, p0 = 2 * h * q;
            real s = 0;
            if (e < entries)
                for (int k = i; k < h; ++k)
                    s += tl[(p0 + k) * QR_TB + p0 + i] * ul[q * h * h + j * h + k];
            u[m] = s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        UNROLL
        for (int m = 0; m < (TD_PAIRS_MAX + TD_WG - 1) / TD_WG; ++m)
            if (t + TD_WG * m < entries)
                ul[t + TD_WG * m] = u[m];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int e = t; e < entries; e += TD_WG) {
            const int q = e / (h * h), i = e % h, j = e / h % h, p0 = 2 * h * q;
            if (j < w - p0 - h) { /* T12(i, j) = -sum_{k <= j} U(i, k) T22(k, j) */
                real s = 0;
                for (int k = 0; k <= j; ++k)
                    s += ul[q * h * h + k * h + i] * tl[(p0 + h + j) * QR_TB + p0 + h + k];
                tl[(p0 + h + j) * QR_TB + p0 + i] = -s;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int e = t; e < QR_TB * QR_TB; e += TD_WG) {
        const int i = e % QR_TB, j = e / QR_TB;
        if (i < w && j < w)
            T[(size_t)(o + j) * n + o + i] = tl[e];
    }
}

/* The factored m x n panel P's outputs where GEMMs form Q^(k), in one launch (three had cost
 * their latencies on the chain of steps): V (leading dimension ldv) from P, its entries below the
 * diagonal, ones on it, zeros above (the register panels, built with -DV_FROM_P, leave V to this
 * launch, and the applies during the factorization read the reflectors from P); R as qr_take_r;
 * and Q = I (m x m, leading dimension ldq), which the GEMMs then update */
__kernel void v_from_panel(__global const real *P, ulong offP, int ldp, int m, int n,
                           __global real *V, int ldv, __global real *R, ulong offR,
                           __global int *bad, ulong offBad, int first, __global real *Q,
                           ulong offQ, int ldq)
{
    const size_t e = get_global_id(0); /* m = 2n: m^2 and m n pass 2^31 before n does */
    P += offP;
    if (e < (size_t)m * (size_t)n) {
        const size_t r = e % (size_t)m, c = e / (size_t)m;
        V[c * (size_t)ldv + r] = r > c ? P[c * (size_t)ldp + r] : r == c;
    }
    if (e < (size_t)n * (size_t)n)
        take_r_entry(P, ldp, n, R + offR, bad + offBad, first, (int)e);
    if (e < (size_t)m * (size_t)m)
        identity_entry(Q + offQ, ldq, m, e);
}

/* Q = I (m x m, leading dimension ld) */
__kernel void set_identity(__global real *Q, ulong off, int ld, int m)
{
    const size_t e = get_global_id(0);
    if (e < (size_t)m * (size_t)m)
        identity_entry(Q + off, ld, m, e);
}

/* The problem's info from *bad (INT_MAX: none), and its H^-1 cleared when it is singular. */
__kernel void bsofi_finish(__global const int *bad, ulong offBad, __global int *info,
                           ulong offInfo, __global real *H, ulong offH, ulong count)
{
    const int b = bad[offBad];
    const int v = b == INT_MAX ? 0 : b;
    if (get_global_id(0) == 0)
        info[offInfo] = v;
    if (v)
        for (size_t e = get_global_id(0); e < count; e += get_global_size(0))
            H[offH + e] = 0;
}
#endif /* QR_NB */
