/* Batched tridiagonal solves without pivoting: general (dl, d, du) and symmetric (d, e) systems.
 * Stable for diagonally dominant and symmetric positive definite matrices, the classes for which
 * elimination without pivoting cannot break down; a zero or non-finite pivot is reported per
 * system (info = 1-based row) and that system's right-hand sides are left as they were.
 *
 * Kernels (build option):
 *   -DTRIDIAG_SIMD  one system per work-item, VW systems in the lanes of an OpenCL vector: the
 *                   Thomas algorithm, O(m) work, for CPUs. Forward multipliers and modified
 *                   right-hand sides live in local memory (2m values per lane).
 *   -DTRIDIAG_PCR   P work-items per system, ROWS consecutive rows each: every work-item reduces
 *                   its chunk to two equations (for its first and last unknown) by eliminating the
 *                   interior rows, the 2P reduced equations (P for ROWS = 1) form a tridiagonal
 *                   system solved by parallel cyclic reduction in local memory (Egloff 2010,
 *                   tridiagonal-pcr-pde-egloff-2010.txt, Sect. 3; the partition into chunks extends
 *                   PCR beyond one row per work-item), then the interiors are back-substituted.
 *                   Any m: missing neighbours have zero coupling, no padding in memory.
 * -DSYMMETRIC: the sub- and super-diagonal are one array e of m-1 values per system.
 *
 * Arguments: L, U the sub/super diagonals (both e when SYMMETRIC), D the diagonal, B the
 * right-hand sides (m*nrhs per system) overwritten by the solutions. */

#ifdef SYMMETRIC
#define SUB(k, i) ((i) > 0 ? L[offL + BATCH_INDEX(k, (uint)(i) - 1u, m - 1, stride)] : (real)0)
#define SUP(k, i) ((i) < m - 1 ? U[offU + BATCH_INDEX(k, (uint)(i), m - 1, stride)] : (real)0)
#else
#define SUB(k, i) ((i) > 0 ? L[offL + BATCH_INDEX(k, (uint)(i), m, stride)] : (real)0)
#define SUP(k, i) ((i) < m - 1 ? U[offU + BATCH_INDEX(k, (uint)(i), m, stride)] : (real)0)
#endif
#define DIAG(k, i) D[offD + BATCH_INDEX(k, (uint)(i), m, stride)]
#define RHS(k, c, i) (offB + BATCH_INDEX(k, (uint)((c) * m + (i)), (uint)(m * nrhs), stride))

#if defined(TRIDIAG_SIMD)


__kernel void tridiag_simd(__global const real *L, ulong offL, __global const real *D, ulong offD,
                           __global const real *U, ulong offU, __global real *B, ulong offB,
                           __global int *info, ulong offInfo, int m, int nrhs, uint count,
                           ulong stride, __local realv *lds)
{
    const uint w = (uint)get_global_id(0);
    const uint first = w * VW; /* this work-item's systems: first .. first + VW - 1 */
    if (first >= count)
        return; /* no barrier in this kernel */
    const uint lanes = min((uint)VW, count - first);
    __local realv *cp = lds + (size_t)get_local_id(0) * 2 * (size_t)m; /* forward multipliers */
    __local realv *hp = cp + m;                                         /* modified rhs */
    maskv fail = (maskv)0;

    for (int c = 0; c < nrhs; ++c) {
        realv prev_c = (realv)0, prev_h = (realv)0;
        for (int i = 0; i < m; ++i) {
            lanes_t a, b, cc, h;
            for (uint v = 0; v < VW; ++v) {
                const uint k = first + min(v, lanes - 1); /* idle lanes repeat the last system */
                a.s[v] = SUB(k, i);
                b.s[v] = DIAG(k, i);
                cc.s[v] = SUP(k, i);
                h.s[v] = B[RHS(k, c, i)];
            }
            const realv den = b.v - a.v * prev_c;
            const maskv ok = (maskv)(isnotequal(den, (realv)0) & isfinite(den));
            fail = select(fail, (maskv)(i + 1), (maskv)((!ok) & (fail == (maskv)0)));
            const realv inv = (realv)1 / den;
            prev_c = cc.v * inv;
            prev_h = (h.v - a.v * prev_h) * inv;
            cp[i] = prev_c;
            hp[i] = prev_h;
        }
        /* back substitution in place of the modified rhs */
        realv x = hp[m - 1];
        for (int i = m - 2; i >= 0; --i) {
            x = hp[i] - cp[i] * x;
            hp[i] = x;
        }
        for (int i = 0; i < m; ++i) { /* a solution that overflowed is a failure too */
            const realv xi = hp[i];
            fail = select(fail, (maskv)(i + 1), (maskv)((!isfinite(xi)) & (fail == (maskv)0)));
        }
        mask_lanes_t f;
        f.v = fail;
        for (uint v = 0; v < lanes; ++v) {
            if (f.s[v] != 0)
                continue; /* a failed system keeps its right-hand sides */
            for (int i = 0; i < m; ++i) {
                lanes_t xi;
                xi.v = hp[i];
                B[RHS(first + v, c, i)] = xi.s[v];
            }
        }
    }
    mask_lanes_t f;
    f.v = fail;
    for (uint v = 0; v < lanes; ++v)
        info[offInfo + first + v] = (int)f.s[v];
}

#elif defined(TRIDIAG_PCR)

#ifndef ROWS
#define ROWS 1
#endif
/* Record row (0-based) as failed when the pivot is not usable. */
#define CHECK_PIVOT(x, row) \
    if (!PIVOT_OK(x))       \
        bad = min(bad, (row) + 1);

__kernel void tridiag_pcr(__global const real *L, ulong offL, __global const real *D, ulong offD,
                          __global const real *U, ulong offU, __global real *B, ulong offB,
                          __global int *info, ulong offInfo, int m, int nrhs, uint count,
                          ulong stride, int per_system, __local real *lds)
{
    const int P = per_system;        /* work-items per system */
    const int Q = ROWS == 1 ? P : 2 * P; /* equations of the reduced system */
    const int spg = (int)get_local_size(0) / P;
    const int lid = (int)get_local_id(0);
    const int s = lid / P, t = lid - s * P;
    const uint prob = (uint)get_group_id(0) * (uint)spg + (uint)s;
    const bool active = prob < count;
    const uint k = active ? prob : 0u; /* a valid index for masked loads */
    __local real *ra = lds + (size_t)s * 4 * (size_t)Q;
    __local real *rb = ra + Q, *rc = rb + Q, *rh = rc + Q;
    __local int *first_bad = (__local int *)(lds + (size_t)spg * 4 * (size_t)Q);

    if (t == 0)
        first_bad[s] = NO_FAILURE;
    int bad = NO_FAILURE;
    const int row0 = t * ROWS;

    for (int c = 0; c < nrhs; ++c) {
        /* my rows; rows past m are identity rows, decoupled from row m-1 (du[m-1] is ignored) */
        real a[ROWS], b[ROWS], cc[ROWS], h[ROWS];
#if defined(VEC4_ROWS) && ROWS % 4 == 0 && !defined(SYMMETRIC) && !defined(BCL_INTERLEAVED)
        /* 16-byte loads: the host checked that every group of 4 rows is 16-byte aligned (m and
         * the offsets multiples of 4), so a group lies wholly inside or outside the system */
        {
            const ulong base = (ulong)k * (ulong)m + (ulong)row0;
            UNROLL_TUNED
            for (int g = 0; g < ROWS / 4; ++g) {
                const bool live = active && row0 + 4 * g < m;
                const VEC4 va = live ? *(__global const VEC4 *)(L + offL + base + 4 * g) : (VEC4)0;
                const VEC4 vb = live ? *(__global const VEC4 *)(D + offD + base + 4 * g) : (VEC4)1;
                const VEC4 vc = live ? *(__global const VEC4 *)(U + offU + base + 4 * g) : (VEC4)0;
                const VEC4 vh = live ? *(__global const VEC4 *)(B + RHS(k, c, row0 + 4 * g)) : (VEC4)0;
                a[4 * g] = va.s0; a[4 * g + 1] = va.s1; a[4 * g + 2] = va.s2; a[4 * g + 3] = va.s3;
                b[4 * g] = vb.s0; b[4 * g + 1] = vb.s1; b[4 * g + 2] = vb.s2; b[4 * g + 3] = vb.s3;
                cc[4 * g] = vc.s0; cc[4 * g + 1] = vc.s1; cc[4 * g + 2] = vc.s2; cc[4 * g + 3] = vc.s3;
                h[4 * g] = vh.s0; h[4 * g + 1] = vh.s1; h[4 * g + 2] = vh.s2; h[4 * g + 3] = vh.s3;
            }
            if (row0 == 0)
                a[0] = (real)0; /* dl[0] is ignored */
            UNROLL_TUNED
            for (int r = 0; r < ROWS; ++r)
                if (row0 + r == m - 1)
                    cc[r] = (real)0; /* du[m-1] is ignored */
        }
#else
        UNROLL_TUNED
        for (int r = 0; r < ROWS; ++r) {
            const int i = row0 + r;
            const bool live = active && i < m;
            a[r] = live ? SUB(k, i) : (real)0;
            b[r] = live ? DIAG(k, i) : (real)1;
            cc[r] = live ? SUP(k, i) : (real)0;
            h[r] = live ? B[RHS(k, c, i)] : (real)0;
        }
#endif
#if ROWS >= 3
        /* forward: rows 1..ROWS-1 become a[r] x_first + b[r] x_r + cc[r] x_{r+1} = h[r] */
        UNROLL_TUNED
        for (int r = 2; r < ROWS; ++r) {
            CHECK_PIVOT(b[r - 1], row0 + r - 1)
            const real f = a[r] / b[r - 1];
            a[r] = -f * a[r - 1];
            b[r] = b[r] - f * cc[r - 1];
            h[r] = h[r] - f * h[r - 1];
        }
        /* backward: rows ROWS-2..1 become a[r] x_first + b[r] x_r + cc[r] x_last = h[r] */
        UNROLL_TUNED
        for (int r = ROWS - 3; r >= 1; --r) {
            CHECK_PIVOT(b[r + 1], row0 + r + 1)
            const real f = cc[r] / b[r + 1];
            a[r] = a[r] - f * a[r + 1];
            cc[r] = -f * cc[r + 1];
            h[r] = h[r] - f * h[r + 1];
        }
        /* first row: eliminate x_1 with row 1, leaving x_{previous chunk's last}, x_first, x_last */
        CHECK_PIVOT(b[1], row0 + 1)
        {
            const real f = cc[0] / b[1];
            b[0] = b[0] - f * a[1];
            cc[0] = -f * cc[1];
            h[0] = h[0] - f * h[1];
        }
        /* interior rows divided by their pivot: three values a row stay live through the PCR */
        UNROLL_TUNED
        for (int r = 1; r < ROWS - 1; ++r) {
            CHECK_PIVOT(b[r], row0 + r)
            const real inv = (real)1 / b[r];
            a[r] *= inv;
            cc[r] *= inv;
            h[r] *= inv;
        }
#endif
        /* the reduced equations: ROWS == 1: my row; else my first and last rows */
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous right-hand side is done with local memory */
        if (ROWS == 1) {
            ra[t] = a[0];
            rb[t] = b[0];
            rc[t] = cc[0];
            rh[t] = h[0];
        } else {
            ra[2 * t] = a[0];
            rb[2 * t] = b[0];
            rc[2 * t] = cc[0];
            rh[2 * t] = h[0];
            ra[2 * t + 1] = a[ROWS - 1];
            rb[2 * t + 1] = b[ROWS - 1];
            rc[2 * t + 1] = cc[ROWS - 1];
            rh[2 * t + 1] = h[ROWS - 1];
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* parallel cyclic reduction: after step `span`, equation q couples q - 2 span, q + 2 span */
        const int mine = ROWS == 1 ? 1 : 2;
        for (int span = 1; span < Q; span *= 2) {
            real na[2], nb[2], nc[2], nh[2];
            for (int e = 0; e < mine; ++e) {
                const int q = ROWS == 1 ? t : 2 * t + e;
                real alpha, gamma;
                const int failed = pcr_eliminate(ra, rb, rc, q, span, Q, &alpha, &gamma, &na[e],
                                                 &nb[e], &nc[e]);
                if (failed >= 0) /* equation -> row: chunk t's equations are its first and last rows */
                    bad = min(bad, (ROWS == 1 ? failed : (failed / 2) * ROWS + (failed & 1) * (ROWS - 1)) + 1);
                nh[e] = rh[q];
                if (alpha != (real)0)
                    nh[e] += alpha * rh[q - span];
                if (gamma != (real)0)
                    nh[e] += gamma * rh[q + span];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int e = 0; e < mine; ++e) {
                const int q = ROWS == 1 ? t : 2 * t + e;
                ra[q] = na[e];
                rb[q] = nb[e];
                rc[q] = nc[e];
                rh[q] = nh[e];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }

        /* every reduced equation is now b x = h; the solution goes into h */
        if (ROWS == 1) {
            CHECK_PIVOT(rb[t], row0)
            h[0] = rh[t] / rb[t];
        } else {
            CHECK_PIVOT(rb[2 * t], row0)
            CHECK_PIVOT(rb[2 * t + 1], row0 + ROWS - 1)
            h[0] = rh[2 * t] / rb[2 * t];
            h[ROWS - 1] = rh[2 * t + 1] / rb[2 * t + 1];
        }
#if ROWS >= 3
        UNROLL_TUNED
        for (int r = 1; r < ROWS - 1; ++r) /* rows normalized above: b[r] = 1 */
            h[r] = h[r] - a[r] * h[0] - cc[r] * h[ROWS - 1];
#endif
        UNROLL_TUNED
        for (int r = 0; r < ROWS; ++r)
            if (row0 + r < m && !isfinite(h[r]))
                bad = min(bad, row0 + r + 1);
        if (bad != NO_FAILURE)
            atomic_min(&first_bad[s], bad);
        barrier(CLK_LOCAL_MEM_FENCE);
        const bool ok = first_bad[s] == NO_FAILURE;
#if defined(VEC4_ROWS) && ROWS % 4 == 0 && !defined(SYMMETRIC) && !defined(BCL_INTERLEAVED)
        UNROLL_TUNED
        for (int g = 0; g < ROWS / 4; ++g)
            if (active && ok && row0 + 4 * g < m)
                *(__global VEC4 *)(B + RHS(k, c, row0 + 4 * g)) =
                    (VEC4)(h[4 * g], h[4 * g + 1], h[4 * g + 2], h[4 * g + 3]);
#else
        UNROLL_TUNED
        for (int r = 0; r < ROWS; ++r) {
            const int i = row0 + r;
            if (active && ok && i < m)
                B[RHS(k, c, i)] = h[r];
        }
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active && t == 0)
        info[offInfo + prob] = first_bad[s] == NO_FAILURE ? 0 : first_bad[s];
}

#else
#error "define TRIDIAG_SIMD or TRIDIAG_PCR"
#endif
