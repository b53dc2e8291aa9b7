/* Divide and conquer for batched symmetric tridiagonal eigenproblems T = Z diag(w) Z^T
 * (Abbas-Turki & Graillat 2016, Sect. 5, Algorithm 3: symmetric-small-systems-abbas-turki-
 * graillat-2016.txt; the rank-one merge as in Gu & Eisenstat and LAPACK's dlaed*), and the
 * eigen-based pieces built on it: V = Q Z (back-transformation of syevd) and the truncated solve.
 *
 * One work-item per row (NT >= n work-items per matrix). The tree: a block splits at the
 * numerically zero off-diagonal nearest its middle, else at its middle, down to 1x1 and 2x2
 * leaves; at each split the coupling beta is torn off the two diagonal entries next to it
 * (Cuppen), leaving |beta| v v^T with v = (e_last, sign(beta) e_first). Merges run level by level,
 * every block of a level at once:
 *   z = (last row of Z1, sign(beta) first row of Z2), D + rho z z^T with rho = |beta| >= 0;
 *   deflation (the block's first work-item): rho |z_i| <= tol, or two poles so close that a
 *     Givens rotation zeroes one z component (LAPACK's test |t c s| <= tol);
 *   roots of the secular equation 1/rho + sum z_i^2 / (d_i - lambda) = 0 by Gragg's cubically
 *     convergent scheme (two nearest poles and a constant matched to f, f', f''), in the shifted
 *     variable tau = lambda - d_origin with the origin the nearer pole, safeguarded by a bracket;
 *   Loewner's formula for z~ (Gu-Eisenstat): z~_i^2 = prod_r (lambda_r - d_i) /
 *     (rho prod_{j != i} (d_j - d_i)), so the eigenvectors (D - lambda_r)^{-1} z~ stay
 *     orthogonal for close eigenvalues;
 *   Z <- diag(Z1, Z2) W, eigenvalues kept ascending inside every block.
 * Eigenvectors live in Z (global) during the merges, W in local memory. -DZROW_REG (GPUs, small
 * NT): each work-item forms its row of Z W from a copy of its old row in registers, in place;
 * otherwise each product goes through the per-problem scratch S. */

#ifndef NT
#define NT 64
#endif
#define MAX_ITER 128
/* a plain sum of squares in [SSQ_MIN, SSQ_MAX] neither overflowed nor lost terms to underflow */
#if defined(BCL_DOUBLE)
#define SSQ_MIN 0x1p-900
#define SSQ_MAX 0x1p900
#else
#define SSQ_MIN 0x1p-80f
#define SSQ_MAX 0x1p100f
#endif
/* a merge's block is rescaled to its own size only outside [BLOCK_PLAIN_MIN, BLOCK_PLAIN_MAX]:
 * there pole gaps near eps * size have squares (f's derivative) far from underflow and overflow */
#if defined(BCL_DOUBLE)
#define BLOCK_PLAIN_MIN 0x1p-300
#define BLOCK_PLAIN_MAX 0x1p300
#else
#define BLOCK_PLAIN_MIN 0x1p-20f
#define BLOCK_PLAIN_MAX 0x1p20f
#endif

#define ZG(i, j) Z[offZ + BATCH_INDEX(prob, (uint)((j) * n + (i)), nn, stride)]
#define SG(i, j) S[offS + BATCH_INDEX(prob, (uint)((j) * n + (i)), nn, stride)]
#define WL(l, c) Wl[(c) * n + (l)]

/* Eigen-decomposition of the symmetric 2x2 [a b; b c]: ascending l1 <= l2, eigenvectors (c1, s1)
 * and (-s1, c1) by a Jacobi rotation (stable for any b). */
inline void sym2x2(real a, real b, real c, real *l1, real *l2, real *c1, real *s1)
{
    if (b == (real)0) {
        const bool swap = a > c;
        *l1 = swap ? c : a;
        *l2 = swap ? a : c;
        *c1 = swap ? (real)0 : (real)1;
        *s1 = swap ? (real)1 : (real)0;
        return;
    }
    const real theta = (c - a) / (2 * b);
    const real t = (theta >= 0 ? (real)1 : (real)-1) / (fabs(theta) + sqrt((real)1 + theta * theta));
    const real cs = (real)1 / sqrt((real)1 + t * t), sn = t * cs;
    const real la = a - t * b, lc = c + t * b; /* (cs, -sn) -> la, (sn, cs) -> lc */
    if (la <= lc) {
        *l1 = la;
        *l2 = lc;
        *c1 = cs;
        *s1 = -sn;
    } else {
        *l1 = lc;
        *l2 = la;
        *c1 = sn;
        *s1 = cs;
    }
}

/* f(tau) = 1/rho + sum_i z_i^2 / ((delta_i - delta_o) - tau) and its first two derivatives, with
 * the magnitude of the terms for the stopping test. */
inline void secular(const __local real *dl, const __local real *zl, int kk, int o, real rho,
                    real tau, real *f, real *f1, real *f2, real *mag)
{
    real s = (real)1 / rho, s1 = (real)0, s2 = (real)0, m = fabs(s);
    for (int i = 0; i < kk; ++i) {
        const real inv = (real)1 / ((dl[i] - dl[o]) - tau); /* one division a term */
        const real q = zl[i] * inv, term = zl[i] * q;
        s += term;
        s1 += q * q;
        s2 += q * q * inv;
        m += fabs(term);
    }
    *f = s;
    *f1 = s1;
    *f2 = 2 * s2;
    *mag = m;
}

__kernel void stedc(__global const real *Din, ulong offDin, __global const real *E, ulong offE,
                    __global real *W, ulong offW, __global real *Z, ulong offZ,
                    __global real *S, ulong offS, __global int *info, ulong offInfo,
                    __global const uint *index, int n, uint count, ulong stride,
                    __local real *lds)
{
    const int lid = (int)get_local_id(0);
    const int w = lid / NT, t = lid - w * NT;
    const int mpg = (int)get_local_size(0) / NT;
    const uint slot = (uint)get_group_id(0) * (uint)mpg + (uint)w;
    const bool active = slot < count;
    /* a subset of the batch when `index` is given (the adaptive solve's second pass) */
    const uint prob = active ? (index ? index[slot] : slot) : 0u;
    const uint nn = (uint)(n * n);
    const real eps = (real)(sizeof(real) == 8 ? 0x1p-53 : 0x1p-24);
    const bool me = active && t < n; /* this work-item's row exists */

    /* local memory of one matrix: W (n x n), then n-vectors, then n-int vectors */
    __local real *Wl = lds + w * (n * n + 10 * n + 4); /* (10 n-vectors follow) */
    __local real *dd = Wl + n * n;   /* eigenvalues, ascending inside blocks */
    __local real *ee = dd + n;       /* off-diagonal (the couplings) */
    __local real *zl = ee + n;       /* per block: normalized z of the non-deflated, in order */
    __local real *pole = zl + n;     /* per block: their poles, ascending */
    __local real *tv = pole + n;     /* per block: root r = pole[org[r]] + tv[r] */
    __local real *ut = tv + n;       /* per block: z~ */
    __local real *vals = ut + n;     /* new eigenvalues by rank; vals[s] first carries the
                                      * merge's scaling exponent (read before they are written) */
    __local real *rc = vals + n;     /* deflation rotations: cosines, sines */
    __local real *rs = rc + n;
    __local real *rhoz = rs + n;     /* per block start: rho of the normalized problem */
#define STEDC_INTS(n) (12 * (n) + 4) /* ints of one matrix (src/symeig.c sizes them alike) */
#define STEDC_MISC(n) (12 * (n))     /* where misc starts among them */
    __local int *ints_all = (__local int *)(lds + mpg * (n * n + 10 * n + 4));
    __local int *ints = ints_all + w * STEDC_INTS(n);
    __local int *ns = ints, *nm = ns + n, *ne = nm + n, *nl = ne + n; /* tree nodes */
    __local int *ndx = nl + n;       /* per block: columns of the non-deflated, by pole */
    __local int *dfl = ndx + n;      /* per block: deflated columns */
    __local int *org = dfl + n;      /* per block: origin pole of root r */
    __local int *rp = org + n, *rq = rp + n; /* rotations: the column pairs */
    __local int *cnt = rq + n;       /* per block start: non-deflated, deflated, rotations */
    __local int *misc = ints + STEDC_MISC(n); /* nodes, depth, failure, scaling exponent */

    /* tree, tearing, leaves */
    if (t == 0 && active) {
        for (int i = 0; i < n; ++i) {
            dd[i] = Din[offDin + BATCH_INDEX(prob, (uint)i, n, stride)];
            ee[i] = i < n - 1 ? E[offE + BATCH_INDEX(prob, (uint)i, n - 1, stride)] : (real)0;
        }
        /* T scaled to a largest entry in [1/2, 1) by a power of two (exact), as LAPACK's xstedc
         * normalizes: the secular-equation iteration works with cubes of pole distances */
        real m = (real)0;
        for (int i = 0; i < n; ++i)
            m = fmax(m, fmax(fabs(dd[i]), fabs(ee[i])));
        int ex = 0;
        if (m > (real)0 && isfinite(m))
            frexp(m, &ex);
        for (int i = 0; i < n; ++i) {
            dd[i] = ldexp(dd[i], -ex);
            ee[i] = ldexp(ee[i], -ex);
        }
        misc[3] = ex;
        int nodes = 0, depth = 0, top = 0;
        __local int *stk = rp; /* (start, end, level) triples, free until the merges */
        stk[0] = 0;
        stk[1] = n;
        stk[2] = 0;
        top = 1;
        while (top > 0) {
            --top;
            const int s = stk[3 * top], e = stk[3 * top + 1], lv = stk[3 * top + 2];
            if (e - s <= 2)
                continue;
            /* split at the numerically zero coupling nearest the middle, else the middle */
            int m = s + (e - s) / 2, best = n;
            for (int i = s; i < e - 1; ++i) {
                const real tiny = eps * sqrt(fabs(dd[i])) * sqrt(fabs(dd[i + 1]));
                const int dist = abs(2 * (i + 1) - (s + e));
                if (fabs(ee[i]) <= tiny && dist < best) {
                    best = dist;
                    m = i + 1;
                }
            }
            ns[nodes] = s;
            nm[nodes] = m;
            ne[nodes] = e;
            nl[nodes] = lv;
            ++nodes;
            depth = max(depth, lv + 1);
            const real beta = fabs(ee[m - 1]);
            dd[m - 1] -= beta;
            dd[m] -= beta;
            stk[3 * top] = s;
            stk[3 * top + 1] = m;
            stk[3 * top + 2] = lv + 1;
            stk[3 * top + 3] = m;
            stk[3 * top + 4] = e;
            stk[3 * top + 5] = lv + 1;
            top += 2;
        }
        misc[0] = nodes;
        misc[1] = depth;
        misc[2] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int nodes = active ? misc[0] : 0;
    /* the merge loop below holds barriers: every work-item of the group runs the levels of the
     * deepest tree among the group's problems (a shallower tree has nothing to merge there) */
    int depth = 0;
    for (int v = 0; v < mpg; ++v)
        if ((uint)get_group_id(0) * (uint)mpg + (uint)v < count)
            depth = max(depth, ints_all[v * STEDC_INTS(n) + STEDC_MISC(n) + 1]);
    /* my leaf: the part of the deepest node holding my row, or the whole matrix */
    int leaf_s = 0, leaf_e = n, deep = -1;
    for (int q = 0; q < nodes; ++q)
        if (ns[q] <= t && t < ne[q] && nl[q] > deep) {
            deep = nl[q];
            leaf_s = t < nm[q] ? ns[q] : nm[q];
            leaf_e = t < nm[q] ? nm[q] : ne[q];
        }
    if (me)
        for (int j = 0; j < n; ++j)
            ZG(t, j) = (real)0;
    barrier(CLK_GLOBAL_MEM_FENCE); /* a 2x2 leaf's owner writes the next row too */
    if (me) {
        if (t == leaf_s && leaf_e - leaf_s == 1) {
            ZG(t, t) = (real)1;
        } else if (t == leaf_s) {
            real l1, l2, c1, s1;
            sym2x2(dd[t], ee[t], dd[t + 1], &l1, &l2, &c1, &s1);
            ZG(t, t) = c1;
            ZG(t + 1, t) = s1;
            ZG(t, t + 1) = -s1;
            ZG(t + 1, t + 1) = c1;
            vals[t] = l1;
            vals[t + 1] = l2;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (me && leaf_e - leaf_s == 2)
        dd[t] = vals[t];

    for (int level = depth - 1; level >= 0; --level) {
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        /* my block at this level, if it merges now */
        int s = 0, m = 0, e = 0;
        for (int q = 0; q < nodes; ++q)
            if (nl[q] == level && ns[q] <= t && t < ne[q]) {
                s = ns[q];
                m = nm[q];
                e = ne[q];
            }
        const bool merging = me && e > s;
        const int k = e - s;
        /* z of my column, in zl at its own position for now */
        if (merging) {
            const real sg = ee[m - 1] >= (real)0 ? (real)1 : (real)-1;
            zl[t] = t < m ? ZG(m - 1, t) : sg * ZG(m, t);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the block's first work-item: order by pole, normalize, deflate */
        if (merging && t == s) {
            const real rho0 = fabs(ee[m - 1]);
            real zz = (real)0, dmax = (real)0, zmax = (real)0;
            for (int j = s; j < e; ++j) {
                zz += zl[j] * zl[j];
                dmax = fmax(dmax, fabs(dd[j]));
            }
            const real znorm = sqrt(zz);
            real rho = rho0 * zz;
            /* the block in units of its own size (a power of two, exact): in a graded T a block
             * lies far below T's scale, where pole gaps near its thresholds made 1 / gap (and
             * f's terms) overflow */
            int ex = 0;
            const real bmax = fmax(dmax, rho);
            const bool plain = bmax >= BLOCK_PLAIN_MIN && bmax <= BLOCK_PLAIN_MAX;
            if (!plain && bmax > (real)0 && isfinite(bmax)) {
                /* only where it matters: the scaling is serial work of one work-item per merge */
                frexp(bmax, &ex);
                for (int j = s; j < e; ++j)
                    dd[j] = ldexp(dd[j], -ex);
                rho = ldexp(rho, -ex);
                dmax = ldexp(dmax, -ex);
            }
            vals[s] = (real)ex;
            for (int j = s; j < e; ++j) {
                ut[j] = zl[j] / znorm; /* normalized z by column (ut is free until later) */
                zmax = fmax(zmax, fabs(ut[j]));
            }
            const real tol = 8 * eps * fmax(dmax, rho * zmax);
            /* both halves are ascending: merge them into pole order */
            int a = s, b = m, kk = 0, nd = 0, nr = 0, prev = -1;
            for (int step = 0; step < k; ++step) {
                const int j = (b >= e || (a < m && dd[a] <= dd[b])) ? a++ : b++;
                if (rho * fabs(ut[j]) <= tol) { /* small z: j keeps its eigenpair */
                    dfl[s + nd++] = j;
                    continue;
                }
                if (prev >= 0) {
                    /* close poles: a rotation of columns prev, j zeroes z_prev */
                    real cj = ut[j], sp = ut[prev];
                    const real r = hypot(cj, sp);
                    cj /= r;
                    sp = -sp / r;
                    const real gap = dd[j] - dd[prev];
                    if (fabs(gap * cj * sp) <= tol) {
                        ut[j] = r;
                        ut[prev] = (real)0;
                        rp[s + nr] = prev;
                        rq[s + nr] = j;
                        rc[s + nr] = cj;
                        rs[s + nr] = sp;
                        ++nr;
                        const real dp = dd[prev] * cj * cj + dd[j] * sp * sp;
                        dd[j] = dd[prev] * sp * sp + dd[j] * cj * cj;
                        dd[prev] = dp;
                        dfl[s + nd++] = prev;
                        prev = j;
                        continue;
                    }
                    ndx[s + kk++] = prev;
                }
                prev = j;
            }
            if (prev >= 0)
                ndx[s + kk++] = prev;
            for (int i = 0; i < kk; ++i) {
                zl[s + i] = ut[ndx[s + i]];
                pole[s + i] = dd[ndx[s + i]];
            }
            /* deflated eigenvalues ascending (insertion sort: rotations can disorder them) */
            for (int i = 1; i < nd; ++i) {
                const int c = dfl[s + i];
                int j = i - 1;
                while (j >= 0 && dd[dfl[s + j]] > dd[c]) {
                    dfl[s + j + 1] = dfl[s + j];
                    --j;
                }
                dfl[s + j + 1] = c;
            }
            cnt[3 * s] = kk;
            cnt[3 * s + 1] = nd;
            cnt[3 * s + 2] = nr;
            rhoz[s] = rho;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int kk = merging ? cnt[3 * s] : 0, nd = merging ? cnt[3 * s + 1] : 0;
        const real rho = merging ? rhoz[s] : (real)1;
        const int bx = merging ? (int)vals[s] : 0; /* the block's values are dd 2^bx */
        /* rotations of the deflation, each row by its own work-item */
        if (merging)
            for (int q = 0; q < cnt[3 * s + 2]; ++q) {
                const int pj = rp[s + q], nj = rq[s + q];
                const real c = rc[s + q], sn = rs[s + q];
                const real x = ZG(t, pj), y = ZG(t, nj);
                ZG(t, pj) = c * x + sn * y;
                ZG(t, nj) = c * y - sn * x;
            }
        /* root r = t - s of the secular equation */
        const int r = t - s;
        if (merging && r < kk) {
            __local const real *pl = pole + s, *zb = zl + s;
            int o = r;
            real lo, hi, tau;
            if (kk == 1) {
                tau = rho * zb[0] * zb[0];
                lo = hi = tau;
            } else if (r < kk - 1) {
                /* the nearer pole is the origin: the midpoint's sign says which */
                const real gap = pl[r + 1] - pl[r];
                real f, f1, f2, mag;
                secular(pl, zb, kk, r, rho, gap / 2, &f, &f1, &f2, &mag);
                if (f >= (real)0) {
                    lo = (real)0;
                    hi = gap / 2;
                } else {
                    o = r + 1;
                    lo = -gap / 2;
                    hi = (real)0;
                }
                tau = (lo + hi) / 2;
            } else {
                real zz = (real)0;
                for (int i = 0; i < kk; ++i)
                    zz += zb[i] * zb[i];
                lo = (real)0;
                hi = rho * zz;
                tau = hi / 2;
            }
            for (int it = 0; it < MAX_ITER && kk > 1; ++it) {
                real f, f1, f2, mag;
                secular(pl, zb, kk, o, rho, tau, &f, &f1, &f2, &mag);
                if (!isfinite(f)) {
                    misc[2] = 1;
                    break;
                }
                if (f < (real)0)
                    lo = tau;
                else
                    hi = tau;
                if (fabs(f) <= 4 * eps * (real)kk * mag || hi - lo <= 2 * eps * fmax(fabs(lo), fabs(hi)))
                    break;
                real next;
                if (r < kk - 1) {
                    /* Gragg: c + s0/(D0 - eta) + s1/(D1 - eta) through f, f', f'' with the two
                     * poles around the root */
                    const real D0 = (pl[r] - pl[o]) - tau, D1 = (pl[r + 1] - pl[o]) - tau;
                    /* (products ordered so that no intermediate is a cube of a small D) */
                    const real s0 = D0 * (D0 * (D0 * (D1 * f2 / 2 - f1))) / (D1 - D0);
                    const real s1 = D1 * (D1 * (D1 * (D0 * f2 / 2 - f1))) / (D0 - D1);
                    const real c = f - s0 / D0 - s1 / D1;
                    const real qa = c, qb = c * (D0 + D1) + s0 + s1, qc = f * D0 * D1;
                    const real disc = sqrt(fmax(qb * qb - 4 * qa * qc, (real)0));
                    const real eta1 = qb >= 0 ? (qb + disc) / (2 * qa) : (qb - disc) / (2 * qa);
                    const real eta2 = qb >= 0 ? 2 * qc / (qb + disc) : 2 * qc / (qb - disc);
                    next = tau + eta2;
                    if (!(next > lo && next < hi))
                        next = tau + eta1;
                } else {
                    /* the last root has every pole on its left: c + s/(D - eta) through f, f'
                     * with the largest pole */
                    const real D = (pl[kk - 1] - pl[o]) - tau, sw = D * D * f1, c = f - sw / D;
                    next = tau + D + sw / c;
                }
                if (!(next > lo && next < hi)) /* a step outside the bracket: bisect */
                    next = (lo + hi) / 2;
                if (next == tau)
                    break;
                tau = next;
            }
            org[s + r] = o;
            tv[s + r] = tau;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        /* Loewner: z~_i from the computed roots (each factor a difference taken from nearby
         * quantities: lambda_r - d_i = (d_origin - d_i) + tau_r) */
        if (merging && r < kk) {
            __local const real *pl = pole + s;
            real prod = ((pl[org[s + r]] - pl[r]) + tv[s + r]) / rho;
            for (int j = 0; j < kk; ++j)
                if (j != r)
                    prod *= ((pl[org[s + j]] - pl[r]) + tv[s + j]) / (pl[j] - pl[r]);
            const real mag = sqrt(fabs(prod));
            ut[s + r] = zl[s + r] >= (real)0 ? mag : -mag;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* new eigenpair q = t - s: a root (q < kk) or a deflated pair, at its rank in the block */
        if (merging) {
            const int q = r;
            real value;
            int rank;
            if (q < kk) {
                value = pole[s + org[s + q]] + tv[s + q];
                int below = 0;
                for (int i = 0; i < nd; ++i)
                    below += dd[dfl[s + i]] < value;
                rank = q + below;
            } else {
                value = dd[dfl[s + q - kk]];
                int below = 0;
                for (int i = 0; i < kk; ++i)
                    below += pole[s + org[s + i]] + tv[s + i] <= value;
                rank = (q - kk) + below;
            }
            vals[s + rank] = bx != 0 ? ldexp(value, bx) : value; /* in T's units again */
            /* each block has its own diagonal square of W: blocks of a level merge at once */
            for (int l = 0; l < k; ++l)
                WL(s + l, s + rank) = (real)0;
            if (q < kk) {
                __local const real *pl = pole + s;
/* entry i of the eigenvector (D - lambda_q)^-1 z~, before normalization */
#define LOEWNER_V(i) (ut[s + (i)] / ((pl[i] - pl[org[s + q]]) - tv[s + q]))
                real norm = (real)0;
                for (int i = 0; i < kk; ++i) {
                    const real v = LOEWNER_V(i);
                    norm += v * v;
                }
                real inv = (real)1 / sqrt(norm);
                if (!(norm >= SSQ_MIN && norm <= SSQ_MAX)) { /* squares near the thresholds */
                    real vmax = (real)0;
                    for (int i = 0; i < kk; ++i)
                        vmax = fmax(vmax, fabs(LOEWNER_V(i)));
                    const real down = (real)1 / vmax;
                    norm = (real)0;
                    for (int i = 0; i < kk; ++i) {
                        const real v = LOEWNER_V(i) * down;
                        norm += v * v;
                    }
                    inv = down / sqrt(norm);
                }
                for (int i = 0; i < kk; ++i)
                    WL(ndx[s + i], s + rank) = LOEWNER_V(i) * inv;
#undef LOEWNER_V
            } else {
                WL(dfl[s + q - kk], s + rank) = (real)1;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#ifdef ZROW_REG
        /* Z <- Z W over the block, in place: my row of the block read once into registers
         * (compile-time indices, NT values), each new entry a dot product with a column of W */
        if (merging) {
            real zrow[NT];
            UNROLL
            for (int l = 0; l < NT; ++l)
                zrow[l] = l < k ? ZG(t, s + l) : (real)0;
            for (int c = 0; c < k; ++c) {
                real acc[4] = {0, 0, 0, 0};
                UNROLL
                for (int l = 0; l < NT; ++l)
                    if (l < k)
                        acc[l % 4] += zrow[l] * WL(s + l, s + c);
                ZG(t, s + c) = SUM4(acc);
            }
            dd[t] = vals[t];
        }
#else
        /* Z <- Z W over the block, row by row, through S */
        if (merging) {
            for (int c = 0; c < k; ++c) {
                real acc = (real)0;
                for (int l = 0; l < k; ++l)
                    acc += ZG(t, s + l) * WL(s + l, s + c);
                SG(t, s + c) = acc;
            }
            dd[t] = vals[t];
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (merging)
            for (int c = 0; c < k; ++c)
                ZG(t, s + c) = SG(t, s + c);
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (me) {
        W[offW + BATCH_INDEX(prob, (uint)t, n, stride)] = ldexp(dd[t], misc[3]);
        if (!isfinite(dd[t]))
            misc[2] = 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active && t == 0 && info)
        info[offInfo + prob] = misc[2];
}

/* V = Q Z (eigenvectors of A from those of T); `index` lists the problems (all when NULL).
 * BACK_REG (GPUs, NT <= 128): a row of Q per work-item in registers (NT >= n work-items per matrix;
 * ZLD values per row, NT rounded up to a multiple of 4), Z staged in local memory BACK_COLS columns
 * at a time (-DBACK_COLS from the host, which sizes the local memory) and read as 16-byte
 * broadcasts; consecutive work-items load and store consecutive rows.
 * Otherwise (CPUs, large n) rows shared by NT work-items straight from global memory: a private row
 * of several hundred values per work-item only costs compile time and stack under PoCL. */
#ifdef BACK_REG
#define ZLD ((NT + 3) / 4 * 4)
#ifndef BACK_COLS
#error "BACK_COLS: the columns of Z staged at a time, set by the host (src/symeig.c)"
#endif
__kernel void stedc_backtransform(__global const real *Q, ulong offQ, __global const real *Z,
                                  ulong offZ, __global real *V, ulong offV,
                                  __global const uint *index, int n, uint count, ulong stride,
                                  __local real *lds)
{
    const int lid = (int)get_local_id(0);
    const int w = lid / NT, t = lid - w * NT;
    const uint slot = (uint)get_group_id(0) * (uint)(get_local_size(0) / NT) + (uint)w;
    const bool active = slot < count;
    const uint prob = !active ? 0u : index ? index[slot] : slot, nn = (uint)(n * n);
    __local real *zs = lds + w * BACK_COLS * ZLD;
    real qrow[ZLD];
    UNROLL
    for (int l = 0; l < ZLD; ++l)
        qrow[l] = (active && t < n && l < n)
                      ? Q[offQ + BATCH_INDEX(prob, (uint)(l * n + t), nn, stride)]
                      : (real)0;
    for (int c0 = 0; c0 < n; c0 += BACK_COLS) {
        const int cols = min(BACK_COLS, n - c0);
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous block is done with */
        for (int c = 0; c < cols; ++c)
            for (int l = t; l < ZLD; l += NT)
                zs[c * ZLD + l] = (active && l < n) ? ZG(l, c0 + c) : (real)0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active && t < n)
            for (int c = 0; c < cols; ++c) {
                real acc[4] = {0, 0, 0, 0};
                UNROLL
                for (int l = 0; l < ZLD; l += 4) {
                    real z4[4];
                    LOAD4(z4, zs + c * ZLD, l);
                    UNROLL
                    for (int e = 0; e < 4; ++e)
                        acc[e] += qrow[l + e] * z4[e];
                }
                V[offV + BATCH_INDEX(prob, (uint)((c0 + c) * n + t), nn, stride)] = SUM4(acc);
            }
    }
}
#else
__kernel void stedc_backtransform(__global const real *Q, ulong offQ, __global const real *Z,
                                  ulong offZ, __global real *V, ulong offV,
                                  __global const uint *index, int n, uint count, ulong stride)
{
    const int lid = (int)get_local_id(0);
    const int w = lid / NT, t = lid - w * NT;
    const uint slot = (uint)get_group_id(0) * (uint)(get_local_size(0) / NT) + (uint)w;
    if (slot >= count)
        return; /* no barrier in this variant */
    const uint prob = index ? index[slot] : slot, nn = (uint)(n * n);
    for (int i = t; i < n; i += NT)
        for (int c = 0; c < n; ++c) {
            real acc = (real)0;
            for (int l = 0; l < n; ++l)
                acc += Q[offQ + BATCH_INDEX(prob, (uint)(l * n + i), nn, stride)] * ZG(l, c);
            V[offV + BATCH_INDEX(prob, (uint)(c * n + i), nn, stride)] = acc;
        }
}
#endif

/* The truncated solve x = V diag(1/lambda, kept) V^T b: eigenvalues with |lambda| < max |lambda| /
 * threshold are discarded (the pseudo-inverse of the kept part); info = how many, or n + 1 when
 * the eigenvalues are not finite (then X = B). One work-item per problem. `index` as stedc. */
__kernel void stedc_solve(__global const real *V, ulong offV, __global const real *L, ulong offL,
                          __global const real *B, ulong offB, __global real *X, ulong offX,
                          __global int *info, ulong offInfo, __global const uint *index, int n,
                          int nrhs, uint count, ulong stride, real threshold, __local real *lds)
{
    const uint slot = (uint)get_global_id(0);
    if (slot >= count)
        return; /* no barrier in this kernel */
    const uint prob = index ? index[slot] : slot, nn = (uint)(n * n), nb = (uint)(n * nrhs);
    __local real *u = lds + get_local_id(0) * n;
    real lmax = (real)0;
    bool finite = true;
    for (int j = 0; j < n; ++j) {
        const real lj = L[offL + BATCH_INDEX(prob, (uint)j, n, stride)];
        lmax = fmax(lmax, fabs(lj));
        finite = finite && isfinite(lj);
    }
    const real cut = lmax / threshold;
    int discarded = 0;
    for (int j = 0; j < n; ++j)
        discarded += !(fabs(L[offL + BATCH_INDEX(prob, (uint)j, n, stride)]) >= cut && lmax > 0);
    for (int c = 0; c < nrhs; ++c) {
        for (int j = 0; j < n; ++j) {
            const real lj = L[offL + BATCH_INDEX(prob, (uint)j, n, stride)];
            real s = (real)0;
            for (int i = 0; i < n; ++i)
                s += V[offV + BATCH_INDEX(prob, (uint)(j * n + i), nn, stride)] *
                     B[offB + BATCH_INDEX(prob, (uint)(c * n + i), nb, stride)];
            u[j] = (fabs(lj) >= cut && lmax > 0) ? s / lj : (real)0;
        }
        if (finite)
            for (int i = 0; i < n; ++i) {
                real s = (real)0;
                for (int j = 0; j < n; ++j)
                    s += V[offV + BATCH_INDEX(prob, (uint)(j * n + i), nn, stride)] * u[j];
                X[offX + BATCH_INDEX(prob, (uint)(c * n + i), nb, stride)] = s;
            }
        else
            for (int i = 0; i < n; ++i) {
                const ulong at = BATCH_INDEX(prob, (uint)(c * n + i), nb, stride);
                X[offX + at] = B[offB + at];
            }
    }
    if (info)
        info[offInfo + prob] = finite ? discarded : n + 1;
}
