/* Batched inversion of small block p-cyclic matrices (n <= NMAX, the host checks p <= 64), one
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
    __local real red[WG];
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
            real s = 0;
            for (int r = c + 1 + lid; r < m; r += WG)
                s += pan[c * m + r] * pan[c * m + r];
            red[lid] = s;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0) {
                real xnorm2 = 0;
                for (int t = 0; t < WG; ++t)
                    xnorm2 += red[t];
                const real alpha = pan[c * m + c];
                if (xnorm2 == 0) {
                    tau[c] = 0;
                    scale[0] = 1;
                } else {
                    const real beta = -copysign(hypot(alpha, sqrt(xnorm2)), alpha);
                    tau[c] = (beta - alpha) / beta;
                    scale[0] = 1 / (alpha - beta);
                    pan[c * m + c] = beta;
                }
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
