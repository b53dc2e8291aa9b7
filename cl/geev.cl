/* Eigenvalues (and right eigenvectors) of batches of small real non-symmetric matrices: the
 * batched xgeev. Steps after Tokura et al. 2017 (bulk-nonsymmetric-eigenvalues-tokura-2017.txt):
 * Hessenberg reduction by Householder reflectors (Algorithm 1), implicit double-shift Francis
 * sweeps (bulge generation and chasing, Algorithms 2-3) with deflation, 1x1 and standardized 2x2
 * blocks. Numerical details follow the published descriptions of LAPACK's dgeev (scaling of the
 * matrix into a safe range), dgebal (radix-2 balancing of row and column norms), dlahqr
 * (Ahues-Tisseur deflation test, exceptional shifts, start of the sweep at two small consecutive
 * subdiagonals), dlanv2 (standardized 2x2 Schur blocks) and dtrevc (back substitution for the
 * eigenvectors of the quasi-triangular Schur form).
 *
 * Kernels (one work-group holds several matrices):
 *   geev_hessenberg  scale, balance, reduce A to Hessenberg form H (optionally Z = Q, D = balance)
 *   geev_qr          Francis sweeps on H: eigenvalues wr + i wi, info; optionally the Schur form T
 *                    and the Schur vectors Z
 *   geev_vectors     eigenvectors of T, back-transformed by Z and D, normalized as LAPACK's dgeev
 * The rearrangement between the MW, EW and RW arrangements is cl/layout.cl.
 *
 * Thread mappings (build option), P work-items per matrix (-DP=p):
 *   -DGEEV_SWB  single-subgroup based: P consecutive work-items per matrix, MSUB = floor(W/P)
 *               matrices per subgroup of width W (-DWSUB=W); the matrices live in local memory
 *               (row operations by one work-item per row, column operations by one per column).
 *   -DGEEV_MWB  multiple-subgroup based: the P work-items of a matrix lie in P different
 *               subgroups, each subgroup serving MW matrices (work-item t*MW + m is rank t of
 *               matrix m); the matrices live in global memory in the element-wise (EW)
 *               arrangement, so a subgroup's accesses are coalesced.
 * P = 1 is one work-item per matrix (the paper's STB): no barriers at all.
 *
 * Cooperating work-items meet at barriers only in unconditional code or in loops whose trip count
 * is the same for the whole work-group: matrices that need fewer QR sweeps or balancing passes
 * idle (masked) until the last matrix of the group is done. (A barrier inside a branch makes
 * PoCL replicate the code after it.)
 *
 * Storage. Global arrays use the arrangement passed at run time: 0 = MW (matrix k at k*per),
 * 1 = EW (element e of matrix k at e*stride + k), 2 = RW (n-by-n arrays only: row i of matrix k
 * at (i*stride + k)*n, its elements contiguous). Elements of an n-by-n matrix are numbered
 * column-major. The Hessenberg matrix between the steps is "band-packed": column j holds rows
 * 0..j+3 (rows j+2, j+3 make room for the bulge) at offset j(j+7)/2, PACKED(n) = n(n+7)/2
 * elements, followed by one more element: the factor that undoes the scaling of step 1 (NaN for
 * a matrix with a non-finite entry). -DNFIX=n compiles for one size (GPUs: constant bounds).
 */

#ifdef BCL_DOUBLE
#define ULP DBL_EPSILON /* LAPACK's dlamch('P') */
#define SAFMIN DBL_MIN
#else
#define ULP FLT_EPSILON
#define SAFMIN FLT_MIN
#endif

/* Sums of squares of entries whose largest magnitude lies outside [RTMIN, RTMAX] lose precision
 * (subnormal squares) or overflow: such vectors are scaled first, as LAPACK's dnrm2 does. */
#define RTMIN sqrt(SAFMIN)
#define RTMAX ((real)1 / (16 * RTMIN))

/* A power of two that takes a vector whose largest magnitude is big (> 0) into [RTMIN, RTMAX],
 * where a Householder reflector's norm, beta and 1 / (alpha - beta) neither overflow nor
 * underflow; products by it are exact (but for entries that fall below the underflow threshold
 * when a huge vector is scaled down, negligible beside big). 1/big itself can overflow (big
 * subnormal: LAPACK's dlarfg scales such columns up by 1/safmin until beta is normal; before the
 * thirty-sixth session a column of entries near 1e-310 gave NaN eigenvalues). */
#ifdef BCL_DOUBLE
#define SCALE_UP 0x1p600
#define SCALE_DOWN 0x1p-600
#else
#define SCALE_UP 0x1p100f
#define SCALE_DOWN 0x1p-100f
#endif
#define SAFE_SCALE(big) ((big) < RTMIN ? SCALE_UP : (big) > RTMAX ? SCALE_DOWN : (real)1)
#define SAFE_SCALE_INV(big) ((big) < RTMIN ? SCALE_DOWN : (big) > RTMAX ? SCALE_UP : (real)1)

#define POFF(j) (((j) * ((j) + 7)) >> 1)
#define PACKED(n) POFF(n)

#define GEEV_WANTT 1 /* QR: compute the whole Schur form T, not only the eigenvalues */
#define GEEV_WANTZ 2 /* Hessenberg: accumulate Z = Q and keep D; QR: update Z */

#ifndef P
#define P 1
#endif
/* QR_BULGES: bulges a Francis sweep chases at once (1 or 2), each on P / QR_BULGES work-items.
 * Two bulges carry the same double shift, the second QR_GAP rows behind the first: a sweep of
 * the active block (l..i) takes i - l + QR_GAP rounds instead of two sweeps' 2(i - l) and two
 * more scan rounds. The gap keeps the two bulges' rows and columns apart within a round: the
 * leading bulge's reflector from the left (rows k..k+2) and its write into column k-1 never meet
 * what the trailing bulge's reflector from the right touches (columns k-4..k-2, rows up to k-1),
 * and row and column operations on the same entries commute, so the rounds compute the two
 * sweeps one after the other (up to rounding). On the H100 only n = 20 gained (README). */
#ifndef QR_BULGES
#define QR_BULGES 1
#endif
#if QR_BULGES != 1 && QR_BULGES != 2
#error "QR_BULGES must be 1 or 2"
#endif
#if QR_BULGES > 1 && P % QR_BULGES != 0
#error "QR_BULGES must divide P"
#endif
#define QR_GAP 4
#define PB (P / QR_BULGES) /* work-items per bulge */
/* the smallest active block swept with two bulges (fewer rows: one bulge, after a start scan) */
#ifndef QR_TWO_MIN
#define QR_TWO_MIN 8
#endif
#if P > 1
#define GEEV_MAX(p, v) atomic_max(p, v)
#else
#define GEEV_MAX(p, v) (*(p) = max(*(p), v))
#endif

/* SYNC: the work-items of one matrix meet (nothing to do when P = 1); GROUP_SYNC: the whole
 * group meets, around the cooperative copies between global and local memory. */
#ifdef GEEV_MWB
#define GROUP_SYNC() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#else
#define GROUP_SYNC() barrier(CLK_LOCAL_MEM_FENCE)
#endif
#if P > 1
#define SYNC() GROUP_SYNC()
#else
#define SYNC()
#endif

#ifdef GEEV_MWB
#define MEM __global
#define AT(base, e) (base)[(ulong)(e) * gs]
#else
#define MEM __local
#define AT(base, e) (base)[(e)]
#endif

/* HESS_VREG: the Hessenberg step keeps the reflector in registers (exact-n SWB builds with
 * P > 1 up to n = 32: NFIX reals a work-item) */
#if defined(NFIX) && NFIX <= 32 && P > 1 && !defined(GEEV_MWB)
#define HESS_VREG
#endif

#ifdef NFIX
#define NSIZE(n_arg) NFIX
#else
#define NSIZE(n_arg) (n_arg)
#endif

/* ---- batch addressing ------------------------------------------------------------------------ */

/* Column of band-packed element q. */
int packed_col(int q)
{
    int j = (int)((sqrt(8.0f * (float)q + 49.0f) - 7.0f) * 0.5f);
    while (j > 0 && POFF(j) > q)
        --j;
    while (POFF(j + 1) <= q)
        ++j;
    return j;
}

/* ---- cooperative copies between a block of matrices in global memory (any arrangement) and
 * their slots in local memory (slot p at p*lstride + base): consecutive work-items touch
 * consecutive global addresses ---- */

/* n-by-n arrays, stored in the slot with leading dimension lda; into = 1 loads, 0 stores. A
 * store writes NaN for the matrices whose info is not 0 (when info is given). */
void copy_square(__local real *lds, uint lstride, uint base, int lda, __global real *g,
                 ulong goff, int lay, ulong stride, uint first, uint nprob, int n, int into,
                 __global const int *info)
{
    const uint lid = (uint)get_local_id(0), lsz = (uint)get_local_size(0);
    const uint nn = (uint)(n * n);
    batch_walk w;
    walk_init(&w, lay, nprob, nn, n, lid, lsz);
    for (uint f = lid; f < nprob * nn; f += lsz, walk_next(&w)) {
        const uint p = walk_p(&w), i = walk_i(&w), j = walk_j(&w);
        __local real *l = lds + p * lstride + base + j * (uint)lda + i;
        __global real *a = g + goff + layout_addr_ij(lay, first + p, i, j, n, stride);
        if (into)
            *l = *a;
        else
            *a = info && info[first + p] != 0 ? NAN : *l;
    }
}

/* arrays of `per` elements, stored contiguously in the slot */
void copy_flat(__local real *lds, uint lstride, uint base, __global real *g, ulong goff, int lay,
               ulong stride, uint first, uint nprob, uint per, int n, int into)
{
    const uint lid = (uint)get_local_id(0), lsz = (uint)get_local_size(0);
    batch_walk w;
    walk_init(&w, lay, nprob, per, n, lid, lsz);
    for (uint f = lid; f < nprob * per; f += lsz, walk_next(&w)) {
        const uint p = walk_p(&w), e = walk_e(&w);
        __local real *l = lds + p * lstride + base + e;
        __global real *a = g + goff + layout_addr(lay, first + p, e, per, n, stride);
        if (into)
            *l = *a;
        else
            *a = *l;
    }
}

/* ---- work-item geometry ---------------------------------------------------------------------- */

/* Matrix slot m in the group and rank t among its P work-items; t = GEEV_IDLE for lanes that have
 * no matrix (SWB when P does not divide W). */
#define GEEV_IDLE 0x100000
void geometry(int *m, int *t, int *mpg)
{
    const int lid = (int)get_local_id(0), lsz = (int)get_local_size(0);
#ifdef GEEV_MWB
    *mpg = lsz / P;
    *t = lid / *mpg;
    *m = lid - *t * *mpg;
#else
    const int lane = lid % WSUB, sg = lid / WSUB;
    *mpg = (lsz / WSUB) * MSUB;
    *m = sg * MSUB + lane / P;
    *t = lane / P < MSUB ? lane % P : GEEV_IDLE;
    if (*t == GEEV_IDLE)
        *m = 0;
#endif
}

real sgn(real a, real b) /* |a| with the sign of b, as Fortran's SIGN */
{
    return copysign(a, b);
}

/* ================================================================================================
 * Step 1: scaling, balancing, Hessenberg reduction
 * ================================================================================================ */

/* Per-matrix local reals: work (2n: squared column and row norms, then the reflector), D (n),
 * misc (8). SWB adds A (LDA*n) and, with GEEV_WANTZ, Z (LDA*n) in front. Per-matrix ints: 4. */
#define HMISC_TAU 0
#define HMISC_UNSCALE 1
#define HI_NOCONV 0
#define HI_FAILED 1

__kernel void geev_hessenberg(__global const real *A, ulong offA, int layA, ulong strideA,
                              __global real *W, ulong offW, ulong strideW,
                              __global real *H, ulong offH, int layH, ulong strideH,
                              __global real *Z, ulong offZ, int layZ, ulong strideZ,
                              __global real *D, ulong offD, int n_arg, uint count, int flags,
                              uint lstride, __local real *lds, __local int *ints)
{
    const int n = NSIZE(n_arg);
    int m, t, mpg;
    geometry(&m, &t, &mpg);
    const int lid = (int)get_local_id(0);
    const uint first = (uint)get_group_id(0) * (uint)mpg;
    const uint nprob = min((uint)mpg, count - first);
    const bool mine = t != GEEV_IDLE && (uint)m < nprob;
    const bool wantz = (flags & GEEV_WANTZ) != 0;
    __local int *st = ints + 4 * m;
#ifdef GEEV_MWB
    /* the matrices are worked on in place in W (EW arrangement, a copy of A) */
    const int lda = n;
    const ulong gs = strideW;
    __global real *Am = W + offW + first + (uint)m;
    __global real *Zm = Z + offZ + first + (uint)m; /* EW as well (layZ is EW) */
    __local real *own = lds + (uint)m * lstride;
#else
    const int lda = n | 1; /* odd: a column walk by one work-item per column is conflict-free */
    __local real *Am = lds + (uint)m * lstride;
    __local real *Zm = Am + lda * n;
    __local real *own = Am + (wantz ? 2 : 1) * lda * n;
    copy_square(lds, lstride, 0, lda, (__global real *)A, offA, layA, strideA, first, nprob, n, 1,
                NULL);
#endif
    __local real *work = own, *dsc = own + 2 * n, *misc = own + 3 * n;
#define AA(i, j) AT(Am, (j) * lda + (i))
#define ZZ(i, j) AT(Zm, (j) * lda + (i))
    GROUP_SYNC();

    /* ---- scale into [smlnum, bignum] as dgeev does; a non-finite entry fails the matrix ---- */
    const real smlnum = sqrt(SAFMIN) / ULP, bignum = (real)1 / smlnum;
    if (mine)
        for (int j = t; j < n; j += P) {
            real cmax = 0;
            bool finite = true;
            for (int i = 0; i < n; ++i) {
                const real a = fabs(AA(i, j));
                finite = finite && isfinite(a);
                cmax = fmax(cmax, a);
            }
            work[j] = finite ? cmax : INFINITY;
        }
    SYNC();
    if (mine && t == 0) {
        real anrm = 0;
        bool finite = true;
        for (int j = 0; j < n; ++j) {
            finite = finite && isfinite(work[j]);
            anrm = fmax(anrm, work[j]);
        }
        real unscale = 1, ratio = 1;
        if (!finite) {
            unscale = NAN;
        } else if (anrm > 0 && anrm < smlnum) {
            ratio = smlnum / anrm;
            unscale = anrm / smlnum;
        } else if (anrm > bignum) {
            ratio = bignum / anrm;
            unscale = anrm / bignum;
        }
        misc[HMISC_UNSCALE] = unscale;
        misc[HMISC_TAU] = ratio;
        st[HI_FAILED] = !finite;
        st[HI_NOCONV] = finite;
    }
    SYNC();
    const bool ok = mine && !st[HI_FAILED];
    if (ok && misc[HMISC_TAU] != (real)1) {
        const real ratio = misc[HMISC_TAU];
        for (int j = t; j < n; j += P)
            for (int i = 0; i < n; ++i)
                AA(i, j) *= ratio;
    }
    if (mine) /* also for a failed matrix: its D and Z are copied out (then ignored) */
        for (int i = t; i < n; i += P)
            dsc[i] = 1;

    /* ---- balancing (dgebal, job 'S'): radix-2 scaling of row i by 1/f and column i by f until
     * no row/column pair changes its norms by more than 5 %. The norms of every index are
     * computed in parallel at the start of a pass; the pass itself is sequential in i (each
     * scaling changes the other norms), so after the first scaling of a pass the norms are
     * recomputed as needed. Random matrices need one pass with no scaling. ---- */
    const real sfmin1 = SAFMIN / ULP, sfmax1 = (real)1 / sfmin1;
    const real sfmin2 = sfmin1 * 2, sfmax2 = (real)1 / sfmin2;
    if (lid == 0)
        ints[4 * mpg] = 0;
    for (int pass = 0; pass < 100; ++pass) {
        SYNC();
        const bool active = ok && st[HI_NOCONV];
        if (active)
            for (int i = t; i < n; i += P) {
                real c2 = 0, r2 = 0;
                for (int j = 0; j < n; ++j) {
                    const real c = AA(j, i), r = AA(i, j);
                    c2 = fma(c, c, c2);
                    r2 = fma(r, r, r2);
                }
                work[i] = c2;
                work[n + i] = r2;
            }
        SYNC();
        if (active && t == 0) {
            bool noconv = false, dirty = false;
            for (int i = 0; i < n; ++i) {
                real c2 = work[i], r2 = work[n + i], ca = 0, ra = 0;
                if (dirty) {
                    c2 = 0;
                    r2 = 0;
                    for (int j = 0; j < n; ++j) {
                        const real c = AA(j, i), r = AA(i, j);
                        c2 = fma(c, c, c2);
                        r2 = fma(r, r, r2);
                    }
                }
                real c = sqrt(c2), r = sqrt(r2);
                if (c == 0 || r == 0)
                    continue;
                /* the largest entries bound the scaling (norms bound them from above) */
                ca = c;
                ra = r;
                real g = r / 2, f = 1;
                const real s = c + r;
                while (c < g && fmax(f, fmax(c, ca)) < sfmax2 && fmin(r, fmin(g, ra)) > sfmin2) {
                    f *= 2;
                    c *= 2;
                    ca *= 2;
                    r /= 2;
                    g /= 2;
                    ra /= 2;
                }
                g = c / 2;
                while (g >= r && fmax(r, ra) < sfmax2 && fmin(fmin(f, c), fmin(g, ca)) > sfmin2) {
                    f /= 2;
                    c /= 2;
                    g /= 2;
                    ca /= 2;
                    r *= 2;
                    ra *= 2;
                }
                if (c + r >= (real)0.95 * s)
                    continue;
                const real di = dsc[i];
                if (f < 1 && di < 1 && f * di <= sfmin1)
                    continue;
                if (f > 1 && di > 1 && di >= sfmax1 / f)
                    continue;
                const real ginv = (real)1 / f;
                dsc[i] = di * f;
                noconv = true;
                dirty = true;
                for (int j = 0; j < n; ++j) {
                    if (j != i) {
                        AA(i, j) *= ginv;
                        AA(j, i) *= f;
                    }
                }
            }
            st[HI_NOCONV] = noconv;
            if (noconv)
                atomic_inc(&ints[4 * mpg]);
        }
#if P > 1
        SYNC();
        const int again = ints[4 * mpg];
        SYNC();
        if (lid == 0)
            ints[4 * mpg] = 0;
        if (!again)
            break;
#else
        if (!(ok && st[HI_NOCONV]))
            break;
#endif
    }

    /* ---- Hessenberg reduction (Algorithm 1): reflector k = I - tau v v^T, v(0) = 1, zeroes
     * column k below the subdiagonal; applied from the left to rows k+1.. (one work-item per
     * column) and from the right to columns k+1.. (one work-item per row). ---- */
    if (mine && wantz)
        for (int j = t; j < n; j += P)
            for (int i = 0; i < n; ++i)
                ZZ(i, j) = i == j ? 1 : 0;
#ifdef HESS_VREG
    /* Exact-n SWB builds: every work-item of a matrix reads column k into registers (the same
     * addresses, so broadcast reads) and forms the reflector itself, and the updates take v from
     * registers. Against one work-item forming v in local memory, this saves a barrier per
     * column, the serial scaling loop and two of the five local accesses per updated element (by
     * a count of those accesses the old step ran near half of local memory's peak). Same
     * operations in the same order: the same bits. Slower (H100 or H200, n = 30: 26-28 ms against
     * 21.1, README): the updated column or row also kept in registers, the rows entered through a
     * fall-through switch instead of predicated, two columns or rows a work-item as two chains. */
    for (int k = 0; k < n - 2; ++k) {
        SYNC();
        real x[NFIX]; /* x[i] = A(i, k) for i > k + 1, then v(i); 0 elsewhere */
        real alpha = 0, ss = 0, xmax = 0;
        if (ok)
            alpha = AA(k + 1, k);
#pragma unroll
        for (int i = 0; i < NFIX; ++i) {
            x[i] = 0;
            if (ok && i > k + 1) {
                x[i] = AA(i, k);
                ss = fma(x[i], x[i], ss);
                xmax = fmax(xmax, fabs(x[i]));
            }
        }
        real tau = 0, beta = 0;
        if (xmax > 0) {
            const real big = fmax(xmax, fabs(alpha)), sf = SAFE_SCALE(big);
            real norm, as = alpha;
            if (sf == 1) {
                norm = sqrt(fma(alpha, alpha, ss));
            } else { /* tiny or huge column: the reflector of its scaled copy (the same v, tau) */
                as = alpha * sf;
                real sc = as * as;
#pragma unroll
                for (int i = 0; i < NFIX; ++i)
                    if (i > k + 1) {
                        x[i] *= sf;
                        sc = fma(x[i], x[i], sc);
                    }
                norm = sqrt(sc);
            }
            beta = -sgn(norm, as);
            tau = (beta - as) / beta;
            const real scal = (real)1 / (as - beta);
#pragma unroll
            for (int i = 0; i < NFIX; ++i)
                x[i] *= scal;
            if (sf != 1)
                beta *= SAFE_SCALE_INV(big); /* exact: a power of two */
        }
        if (tau != 0) /* from the left: rows k+1.., one work-item per column; v(k+1) = 1 */
            for (int j = k + 1 + t; j < n; j += P) {
                real w = AA(k + 1, j);
#pragma unroll
                for (int i = 0; i < NFIX; ++i)
                    if (i > k + 1)
                        w = fma(x[i], AA(i, j), w);
                w *= tau;
                AA(k + 1, j) -= w;
#pragma unroll
                for (int i = 0; i < NFIX; ++i)
                    if (i > k + 1)
                        AA(i, j) = fma(-w, x[i], AA(i, j));
            }
        SYNC();
        if (tau != 0) {
            /* nobody reads column k any more in this step */
            if (t == 0)
                AA(k + 1, k) = beta;
            for (int i = k + 2 + t; i < n; i += P)
                AA(i, k) = 0;
            /* from the right: columns k+1.., one work-item per row */
            for (int pass = 0; pass < (wantz ? 2 : 1); ++pass)
                for (int r = t; r < n; r += P) {
                    MEM real *row = pass ? &ZZ(r, 0) : &AA(r, 0);
                    real w = row[(k + 1) * lda];
#pragma unroll
                    for (int j = 0; j < NFIX; ++j)
                        if (j > k + 1)
                            w = fma(row[j * lda], x[j], w);
                    w *= tau;
                    row[(k + 1) * lda] -= w;
#pragma unroll
                    for (int j = 0; j < NFIX; ++j)
                        if (j > k + 1)
                            row[j * lda] = fma(-w, x[j], row[j * lda]);
                }
        }
    }
#else
    for (int k = 0; k < n - 2; ++k) {
        SYNC();
        if (ok && t == 0) {
            const real alpha = AA(k + 1, k);
            real ss = 0, xmax = 0;
            for (int i = k + 2; i < n; ++i) {
                ss = fma(AA(i, k), AA(i, k), ss);
                xmax = fmax(xmax, fabs(AA(i, k)));
            }
            real tau = 0;
            if (xmax > 0) {
                const real big = fmax(xmax, fabs(alpha)), sf = SAFE_SCALE(big);
                real norm, as = alpha;
                if (sf == 1) {
                    norm = sqrt(fma(alpha, alpha, ss));
                } else { /* tiny or huge column: the reflector of its scaled copy */
                    as = alpha * sf;
                    real sc = as * as;
                    for (int i = k + 2; i < n; ++i)
                        sc = fma(AA(i, k) * sf, AA(i, k) * sf, sc);
                    norm = sqrt(sc);
                }
                const real beta = -sgn(norm, as);
                tau = (beta - as) / beta;
                const real scal = (real)1 / (as - beta);
                work[0] = 1;
                for (int i = k + 2; i < n; ++i) {
                    work[i - k - 1] = (AA(i, k) * sf) * scal;
                    AA(i, k) = 0;
                }
                AA(k + 1, k) = beta * SAFE_SCALE_INV(big);
            }
            misc[HMISC_TAU] = tau;
        }
        SYNC();
        const real tau = ok ? misc[HMISC_TAU] : 0;
#if P == 1 && !defined(GEEV_MWB)
        /* one work-item per matrix in local memory (CPUs): four columns at a time from the left
         * (independent dot products), column-oriented (axpy) updates from the right, which
         * vectorize */
        if (tau != 0) {
            const int len = n - k - 1, len4 = len & ~3;
            int j = k + 1;
            for (; j + 3 < n; j += 4) {
                /* four dot products at once, four rows per vector */
                __local const real *c0 = &AA(k + 1, j), *c1 = c0 + lda, *c2 = c1 + lda,
                                   *c3 = c2 + lda;
                VEC4 a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                for (int i = 0; i < len4; i += 4) {
                    const VEC4 v4 = vload4(0, work + i);
                    a0 = fma(v4, vload4(0, c0 + i), a0);
                    a1 = fma(v4, vload4(0, c1 + i), a1);
                    a2 = fma(v4, vload4(0, c2 + i), a2);
                    a3 = fma(v4, vload4(0, c3 + i), a3);
                }
                real w0 = (a0.s0 + a0.s1) + (a0.s2 + a0.s3), w1 = (a1.s0 + a1.s1) + (a1.s2 + a1.s3);
                real w2 = (a2.s0 + a2.s1) + (a2.s2 + a2.s3), w3 = (a3.s0 + a3.s1) + (a3.s2 + a3.s3);
                for (int i = len4; i < len; ++i) {
                    const real vi = work[i];
                    w0 = fma(vi, c0[i], w0);
                    w1 = fma(vi, c1[i], w1);
                    w2 = fma(vi, c2[i], w2);
                    w3 = fma(vi, c3[i], w3);
                }
                w0 *= tau;
                w1 *= tau;
                w2 *= tau;
                w3 *= tau;
                for (int i = 0; i < len; ++i) {
                    const real vi = work[i];
                    AA(k + 1 + i, j) = fma(-w0, vi, AA(k + 1 + i, j));
                    AA(k + 1 + i, j + 1) = fma(-w1, vi, AA(k + 1 + i, j + 1));
                    AA(k + 1 + i, j + 2) = fma(-w2, vi, AA(k + 1 + i, j + 2));
                    AA(k + 1 + i, j + 3) = fma(-w3, vi, AA(k + 1 + i, j + 3));
                }
            }
            for (; j < n; ++j) {
                real w = 0;
                for (int i = 0; i < len; ++i)
                    w = fma(work[i], AA(k + 1 + i, j), w);
                w *= tau;
                for (int i = 0; i < len; ++i)
                    AA(k + 1 + i, j) = fma(-w, work[i], AA(k + 1 + i, j));
            }
            /* w = A(:, k+1:) v in work[n..2n), then A(:, k+1:) -= tau w v^T; the same on Z */
            for (int pass = 0; pass < (wantz ? 2 : 1); ++pass) {
                __local real *wv = work + n;
                for (int r = 0; r < n; ++r)
                    wv[r] = 0;
                for (int c = 0; c < len; ++c) {
                    const real vc = work[c];
                    for (int r = 0; r < n; ++r)
                        wv[r] = fma(pass ? ZZ(r, k + 1 + c) : AA(r, k + 1 + c), vc, wv[r]);
                }
                for (int c = 0; c < len; ++c) {
                    const real tv = tau * work[c];
                    if (pass)
                        for (int r = 0; r < n; ++r)
                            ZZ(r, k + 1 + c) = fma(-tv, wv[r], ZZ(r, k + 1 + c));
                    else
                        for (int r = 0; r < n; ++r)
                            AA(r, k + 1 + c) = fma(-tv, wv[r], AA(r, k + 1 + c));
                }
            }
        }
#else
        if (tau != 0) {
            for (int j = k + 1 + t; j < n; j += P) {
                real w = 0;
                for (int i = k + 1; i < n; ++i)
                    w = fma(work[i - k - 1], AA(i, j), w);
                w *= tau;
                for (int i = k + 1; i < n; ++i)
                    AA(i, j) = fma(-w, work[i - k - 1], AA(i, j));
            }
        }
        SYNC();
        if (tau != 0) {
            for (int r = t; r < n; r += P) {
                real w = 0;
                for (int j = k + 1; j < n; ++j)
                    w = fma(AA(r, j), work[j - k - 1], w);
                w *= tau;
                for (int j = k + 1; j < n; ++j)
                    AA(r, j) = fma(-w, work[j - k - 1], AA(r, j));
            }
            if (wantz)
                for (int r = t; r < n; r += P) {
                    real w = 0;
                    for (int j = k + 1; j < n; ++j)
                        w = fma(ZZ(r, j), work[j - k - 1], w);
                    w *= tau;
                    for (int j = k + 1; j < n; ++j)
                        ZZ(r, j) = fma(-w, work[j - k - 1], ZZ(r, j));
                }
        }
#endif
    }
#endif /* HESS_VREG */
    GROUP_SYNC();
    /* ---- write H band-packed (+ the unscaling factor), and Z, D for the eigenvectors ---- */
    const uint per = (uint)PACKED(n) + 1;
#ifdef GEEV_MWB
    if (mine) {
        __global real *Hm = H + offH + first + (uint)m;
        for (int q = t; q < (int)per; q += P) {
            real v = 0;
            if (q == (int)per - 1) {
                v = misc[HMISC_UNSCALE];
            } else {
                const int j = packed_col(q), i = q - POFF(j);
                if (i < n && i <= j + 1)
                    v = AA(i, j);
            }
            Hm[(ulong)q * strideH] = v;
        }
        if (wantz)
            for (int i = t; i < n; i += P)
                D[offD + (ulong)i * strideZ + first + (uint)m] = dsc[i];
    }
#else
    {
        const uint lsz = (uint)get_local_size(0);
        batch_walk w;
        walk_init(&w, layH, nprob, per, n, (uint)lid, lsz);
        int j = 0; /* the column of the packed element q: q grows along a work-item's walk */
        for (uint f = (uint)lid; f < nprob * per; f += lsz, walk_next(&w)) {
            const uint p = walk_p(&w), q = walk_e(&w);
            __local const real *Ap = lds + p * lstride;
            real v = 0;
            if (q == per - 1) {
                v = Ap[(wantz ? 2 : 1) * lda * n + 3 * n + HMISC_UNSCALE];
            } else {
                if (POFF(j) > (int)q)
                    j = packed_col((int)q);
                while (POFF(j + 1) <= (int)q)
                    ++j;
                const int i = (int)q - POFF(j);
                if (i < n && i <= j + 1)
                    v = Ap[j * lda + i];
            }
            H[offH + layout_addr(layH, first + p, q, per, n, strideH)] = v;
        }
    }
    if (wantz) {
        copy_square(lds, lstride, (uint)(lda * n), lda, Z, offZ, layZ, strideZ, first, nprob, n, 0,
                    NULL);
        copy_flat(lds, lstride, (uint)(2 * lda * n + 2 * n), D, offD, layZ, strideZ, first, nprob,
                  (uint)n, n, 0);
    }
#endif
#undef AA
#undef ZZ
}

/* ================================================================================================
 * Step 2: implicit double-shift QR (Francis sweeps) with deflation
 * ================================================================================================ */

/* ---- Step 2: the QR iteration, in rounds ------------------------------------------------------
 * Every work-item of a matrix runs the serial part of dlahqr itself on identical private state
 * (the same reads give the same decisions), so nothing is broadcast. A round is
 *   serial part (reads H only) | phase 1 | barrier | phase 2 | barrier
 * Phase 1 holds the reads that run in parallel (the deflation and sweep-start scans) and a chase
 * step's reflector from the left (rows k..k+2, columns from k: no work-item reads those in its
 * serial part, which reads the bulge in column k-1). Phase 2 holds the reflector from the right
 * and on Z, and every write the serial part decided: the bulge column, zeroed subdiagonals, the
 * standardized 2x2 block and its rotation. So no work-item writes what another may still be
 * reading in the same stretch, and the round costs two barriers. */

#define ACT_SCAN_DEFL 1  /* test subdiagonals k in (lo, hi] for negligibility: res = largest hit */
#define ACT_SCAN_START 2 /* test sweep starts m in (lo, hi]: res = largest acceptable m */

#define PH_BEGIN 0 /* a new active block ends at i */
#define PH_DEFL 1  /* the deflation scan has run */
#define PH_START 2 /* the start scan has run: the sweep starts at m */
#define PH_CHASE 3 /* next reflector of the sweep at k */
#define PH_DONE 4

#define KEXSH 10 /* exceptional shift every KEXSH iterations without deflation */

/* The kind of round a matrix's next serial part asks for (qr_want). */
#define WANT_NONE 0
#define WANT_CHASE 1 /* a sweep step */
#define WANT_OTHER 2 /* a scan, with the deflations and shifts that go with it */

/* Per matrix, private and the same in its P work-items. */
typedef struct {
    int phase, i, l, m, k, its, kdefl, itmax, info, slot;
    int nb; /* bulges of the current sweep (1 or QR_BULGES); k is the leading one's step */
    real s1r, s1i, s2r, s2i, unscale;
    real sx1, sx2, sx3; /* two bulges: the start vector of the work-item's bulge */
} qr_state;

/* The step of the sweep's last bulge (the trailing one when there are two): the sweep is over
 * once it has passed row i - 1. */
int last_bulge_k(const qr_state *s)
{
    return s->k - QR_GAP * (s->nb - 1);
}

/* What the serial part asks of one round. */
typedef struct {
    int scan, lo, hi;          /* phase 1: scan kind (ACT_SCAN_*, 0: none) over (lo, hi] */
    int chase, k, nr, c1, r0, r1, bulge; /* reflector k of order nr; bulge: 1 write (beta, 0, 0)
                                          * into column k-1, 2 scale H(k, k-1) by 1 - tau */
    real tau, v2, v3, beta;
    int zero_sub;              /* phase 2: H(zero_sub, zero_sub - 1) = 0 when > 0 */
    int blk, rot;              /* phase 2: the 2x2 block at (blk-1, blk) = (a b; c d); rot: and
                                * its rotation (cs, sn) on the rest of the Schur form and Z */
    real a, b, c, d, cs, sn;
} qr_round;

#define HH(i, j) AT(Hm, POFF(j) + (i))

/* Is H(k,k-1) negligible? (dlahqr's test, with the Ahues-Tisseur refinement.) hi: the active
 * block's last row; H(hi+1, hi) is zero (deflated) or outside the matrix. */
bool defl_test(MEM const real *Hm, ulong gs, int k, int hi, real smlnum)
{
    const real h = fabs(HH(k, k - 1));
    if (h <= smlnum)
        return true;
    real tst = fabs(HH(k - 1, k - 1)) + fabs(HH(k, k));
    if (tst == 0) {
        if (k - 2 >= 0)
            tst += fabs(HH(k - 1, k - 2));
        if (k + 1 <= hi)
            tst += fabs(HH(k + 1, k));
    }
    if (h <= ULP * tst) {
        const real hu = fabs(HH(k - 1, k));
        const real ab = fmax(h, hu), ba = fmin(h, hu);
        const real d = fabs(HH(k - 1, k - 1) - HH(k, k)), hk = fabs(HH(k, k));
        const real aa = fmax(hk, d), bb = fmin(hk, d);
        const real s = aa + ab;
        if (ba * (ab / s) <= fmax(smlnum, ULP * (bb * (aa / s))))
            return true;
    }
    return false;
}

/* First column of (H - s1)(H - s2) restricted to rows mm..mm+2, scaled (dlahqr). */
void start_vector(MEM const real *Hm, ulong gs, int mm, real s1r, real s1i, real s2r, real s2i,
                  real *v1, real *v2, real *v3)
{
    const real hmm = HH(mm, mm), h21 = HH(mm + 1, mm);
    const real s = fabs(hmm - s2r) + fabs(s2i) + fabs(h21);
    /* dlahqr divides by s three times; any scale near 1/s serves (the vector is normalized
     * below), so one reciprocal, or the division where 1/s would overflow */
    real h21s, ds2r, ds2i;
    if (s >= SAFMIN) {
        const real rs = (real)1 / s;
        h21s = h21 * rs;
        ds2r = (hmm - s2r) * rs;
        ds2i = s2i * rs;
    } else {
        h21s = h21 / s;
        ds2r = (hmm - s2r) / s;
        ds2i = s2i / s;
    }
    real a = h21s * HH(mm, mm + 1) + (hmm - s1r) * ds2r - s1i * ds2i;
    real b = h21s * (hmm + HH(mm + 1, mm + 1) - s1r - s2r);
    real c = h21s * HH(mm + 2, mm + 1);
    const real rn = (real)1 / (fabs(a) + fabs(b) + fabs(c));
    *v1 = a * rn;
    *v2 = b * rn;
    *v3 = c * rn;
}

/* Can the sweep start at mm > l, i.e. are H(mm,mm-1) and the bulge it would create negligible?
 * (v1, v2, v3): the start vector at mm. */
bool start_test(MEM const real *Hm, ulong gs, int mm, real v1, real v2, real v3)
{
    const real h00 = fabs(HH(mm, mm - 1)) * (fabs(v2) + fabs(v3));
    const real h01 = fabs(v1) * (fabs(HH(mm - 1, mm - 1)) + fabs(HH(mm, mm)) +
                                 fabs(HH(mm + 1, mm + 1)));
    return h00 <= ULP * h01;
}

/* The arithmetic of reflector() for a vector whose largest magnitude lies in [RTMIN, RTMAX]:
 * |beta| and |alpha - beta| lie in [RTMIN, 2 sqrt(3) RTMAX], so their product neither overflows
 * nor underflows and one division gives both quotients */
real reflector_in_range(real alpha, real x2, real x3, real *tau, real *v2, real *v3)
{
    const real beta = -sgn(sqrt(alpha * alpha + x2 * x2 + x3 * x3), alpha);
    const real d = alpha - beta, r = (real)1 / (d * beta);
    const real scal = beta * r; /* 1 / (alpha - beta) */
    *tau = -(d * r) * d;        /* (beta - alpha) / beta */
    *v2 = x2 * scal;
    *v3 = x3 * scal;
    return beta;
}

/* Householder reflector of order nr (2 or 3) taking (alpha, x2, x3) to (beta, 0, 0):
 * I - tau (1, v2, v3)^T (1, v2, v3) (dlarfg). Returns beta. */
real reflector(int nr, real alpha, real x2, real x3, real *tau, real *v2, real *v3)
{
    if (nr < 3)
        x3 = 0;
    if (x2 == 0 && x3 == 0) {
        *tau = 0;
        *v2 = 0;
        *v3 = 0;
        return alpha;
    }
    const real big = fmax(fabs(alpha), fmax(fabs(x2), fabs(x3)));
    if (big >= RTMIN && big <= RTMAX)
        return reflector_in_range(alpha, x2, x3, tau, v2, v3);
    /* a tiny or huge vector: the reflector of its scaled copy (the same v and tau) */
    const real sf = SAFE_SCALE(big);
    return reflector_in_range(alpha * sf, x2 * sf, x3 * sf, tau, v2, v3) * SAFE_SCALE_INV(big);
}

/* Eigenvalues of the 2x2 [a b; c d] in standardized Schur form (dlanv2): on return a, b, c, d
 * hold the form (c == 0: real eigenvalues a, d; else a == d, b*c < 0) and (cs, sn) the rotation
 * [a b; c d]_in = [cs -sn; sn cs] [a b; c d]_out [cs sn; -sn cs]. */
void lanv2(real *pa, real *pb, real *pc, real *pd, real *rt1r, real *rt1i, real *rt2r,
           real *rt2i, real *pcs, real *psn)
{
    real a = *pa, b = *pb, c = *pc, d = *pd, cs = 1, sn = 0;
    const real eps = ULP / 2;
    if (c == 0) {
        /* already upper triangular */
    } else if (b == 0) {
        /* swap rows and columns */
        cs = 0;
        sn = 1;
        const real tmp = d;
        d = a;
        a = tmp;
        b = -c;
        c = 0;
    } else if (a - d == 0 && sgn(1, b) != sgn(1, c)) {
        /* already standardized complex block */
    } else {
        real temp = a - d, p = temp / 2;
        const real bcmax = fmax(fabs(b), fabs(c));
        const real bcmis = fmin(fabs(b), fabs(c)) * sgn(1, b) * sgn(1, c);
        real scale = fmax(fabs(p), bcmax);
        real z = (p / scale) * p + (bcmax / scale) * bcmis;
        if (z >= 4 * eps) {
            /* real eigenvalues */
            z = p + sgn(sqrt(scale) * sqrt(z), p);
            a = d + z;
            d = d - (bcmax / z) * bcmis;
            const real tau = hypot(c, z);
            cs = z / tau;
            sn = c / tau;
            b = b - c;
            c = 0;
        } else {
            /* complex or nearly equal real eigenvalues: make the diagonal equal */
            real sigma = b + c;
            /* scale sigma and temp into a safe range (powers of 2, as dlanv2's safmn2) */
            for (int count = 0; count < 20; ++count) {
                scale = fmax(fabs(temp), fabs(sigma));
#ifdef BCL_DOUBLE
                const real big = 0x1p+500, small = 0x1p-500;
#else
                const real big = 0x1p+60f, small = 0x1p-60f;
#endif
                if (scale >= big) {
                    sigma *= small;
                    temp *= small;
                } else if (scale <= small) {
                    sigma *= big;
                    temp *= big;
                } else {
                    break;
                }
            }
            p = temp / 2;
            real tau = hypot(sigma, temp);
            cs = sqrt((1 + fabs(sigma) / tau) / 2);
            sn = -(p / (tau * cs)) * sgn(1, sigma);
            /* [aa bb; cc dd] = [a b; c d] [cs -sn; sn cs] */
            const real aa = a * cs + b * sn, bb = -a * sn + b * cs;
            const real cc = c * cs + d * sn, dd = -c * sn + d * cs;
            /* [a b; c d] = [cs sn; -sn cs] [aa bb; cc dd] */
            a = aa * cs + cc * sn;
            b = bb * cs + dd * sn;
            c = -aa * sn + cc * cs;
            d = -bb * sn + dd * cs;
            temp = (a + d) / 2;
            a = temp;
            d = temp;
            if (c != 0) {
                if (b != 0) {
                    if (sgn(1, b) == sgn(1, c)) {
                        /* real eigenvalues: reduce to upper triangular */
                        const real sab = sqrt(fabs(b)), sac = sqrt(fabs(c));
                        p = sgn(sab * sac, c);
                        tau = (real)1 / sqrt(fabs(b + c));
                        a = temp + p;
                        d = temp - p;
                        b = b - c;
                        c = 0;
                        const real cs1 = sab * tau, sn1 = sac * tau;
                        temp = cs * cs1 - sn * sn1;
                        sn = cs * sn1 + sn * cs1;
                        cs = temp;
                    }
                } else {
                    b = -c;
                    c = 0;
                    temp = cs;
                    cs = -sn;
                    sn = temp;
                }
            }
        }
    }
    *rt1r = a;
    *rt2r = d;
    if (c == 0) {
        *rt1i = 0;
        *rt2i = 0;
    } else {
        *rt1i = sqrt(fabs(b)) * sqrt(fabs(c));
        *rt2i = -*rt1i;
    }
    *pa = a;
    *pb = b;
    *pc = c;
    *pd = d;
    *pcs = cs;
    *psn = sn;
}

/* Eigenvalue j of matrix k: unscaled, in the output arrangement. */
void put_eig(__global real *wr, __global real *wi, int layW, ulong strideW, ulong k, int j,
             int n, real re, real im)
{
    const ulong a = layout_addr(layW, k, (uint)j, (uint)n, n, strideW);
    wr[a] = re;
    wi[a] = im;
}

/* The next round of a sweep for the work-item's bulge `bid` (0: the leading one): its reflector,
 * or nothing while that bulge has not entered the block or has left it. Every work-item of the
 * matrix advances the sweep. */
void plan_chase(qr_state *s, qr_round *r, MEM const real *Hm, ulong gs, __local const real *sv,
                int n, int wantt, int bid)
{
    const int i = s->i, m = s->m, l = s->l, k = s->k - QR_GAP * bid;
    s->k += 1;
    if (s->nb > 1 && k == m - 1) {
        /* the trailing bulge enters next round: its start vector now, as the leading bulge's
         * (rows l..l+2, columns l, l+1 are final once that bulge has passed; the bulge's own
         * first step would change them before all its work-items had read them) */
        start_vector(Hm, gs, m, s->s1r, s->s1i, s->s2r, s->s2i, &s->sx1, &s->sx2, &s->sx3);
    }
    if (bid >= s->nb || k < m || k > i - 1)
        return;
    const int nr = min(3, i - k + 1);
    real x1, x2, x3;
    if (k > m) {
        x1 = HH(k, k - 1);
        x2 = HH(k + 1, k - 1);
        x3 = nr == 3 ? HH(k + 2, k - 1) : 0;
    } else if (s->nb > 1) {
        /* two bulges start at l without a start scan, each from the matrix as it is the round
         * before it enters (the trailing one after the leading one's first steps) */
        x1 = s->sx1;
        x2 = s->sx2;
        x3 = s->sx3;
    } else {
        x1 = sv[0];
        x2 = sv[1];
        x3 = sv[2];
    }
    r->beta = reflector(nr, x1, x2, x3, &r->tau, &r->v2, &r->v3);
    /* k == m > l: scale H(m, m-1), which avoids a bug when v2 and v3 underflow (dlahqr) */
    r->bulge = k > m ? 1 : m > l ? 2 : 0;
    r->chase = 1;
    r->k = k;
    r->nr = nr;
    r->c1 = wantt ? n - 1 : i;
    r->r0 = wantt ? 0 : l;
    r->r1 = min(k + 3, i);
}

/* Advance the state machine of one matrix to the next round's actions (the serial part, run by
 * each of the matrix's work-items; `lead` writes the eigenvalues). res: the matrix's two scan
 * result slots; sv: the start vector the last start scan left. */
void qr_plan(qr_state *s, qr_round *r, MEM const real *Hm, ulong gs, __local const int *res,
             __local const real *sv, int n, int wantt, real smlnum, bool lead,
             __global real *wr, __global real *wi, int layW, ulong strideW, ulong k_glob, int bid)
{
    r->scan = 0;
    r->chase = 0;
    r->zero_sub = 0;
    r->blk = 0;
    r->rot = 0;
    /* the common rounds first, the steps of a sweep, without the dispatch below: PH_START is
     * always followed by the sweep's first step, and PH_CHASE is only entered here */
    if (s->phase == PH_START) {
        s->m = max(res[s->slot], s->l);
        s->k = s->m;
        s->phase = PH_CHASE;
    }
    if (s->phase == PH_CHASE) {
        if (last_bulge_k(s) > s->i - 1) {
            /* the sweep is over: next iteration, starting with a deflation scan */
            s->its += 1;
            s->phase = PH_DEFL;
            r->scan = ACT_SCAN_DEFL;
            r->lo = s->l;
            r->hi = s->i;
            s->slot ^= 1;
            return;
        }
        plan_chase(s, r, Hm, gs, sv, n, wantt, bid);
        return;
    }
    for (;;) {
        const int ph = s->phase;
        if (ph == PH_DONE)
            return;
        if (ph == PH_BEGIN) {
            if (s->i < 0) {
                s->phase = PH_DONE;
                return;
            }
            s->l = 0;
            s->its = 0;
            s->phase = PH_DEFL;
            if (s->i >= 1) {
                r->scan = ACT_SCAN_DEFL;
                r->lo = 0;
                r->hi = s->i;
                s->slot ^= 1;
                return;
            }
            s->slot ^= 1; /* a 1x1 block: nothing to scan, its slot stays empty */
            continue;
        }
        if (ph == PH_DEFL) {
            const int i = s->i, l = max(res[s->slot], s->l);
            s->l = l;
            if (l > 0)
                r->zero_sub = l;
            if (l >= i - 1) {
                /* a 1x1 or 2x2 block has split off */
                if (l == i) {
                    if (lead)
                        put_eig(wr, wi, layW, strideW, k_glob, i, n, HH(i, i) * s->unscale, 0);
                } else {
                    real a = HH(i - 1, i - 1), b = HH(i - 1, i), c = HH(i, i - 1), d = HH(i, i);
                    real r1r, r1i, r2r, r2i, cs, sn;
                    lanv2(&a, &b, &c, &d, &r1r, &r1i, &r2r, &r2i, &cs, &sn);
                    if (lead) {
                        put_eig(wr, wi, layW, strideW, k_glob, i - 1, n, r1r * s->unscale,
                                r1i * s->unscale);
                        put_eig(wr, wi, layW, strideW, k_glob, i, n, r2r * s->unscale,
                                r2i * s->unscale);
                    }
                    if (wantt) {
                        r->blk = i;
                        r->a = a;
                        r->b = b;
                        r->c = c;
                        r->d = d;
                        r->rot = !(cs == 1 && sn == 0);
                        r->cs = cs;
                        r->sn = sn;
                    }
                }
                s->kdefl = 0;
                s->i = l - 1;
                s->phase = PH_BEGIN;
                continue; /* the next block's scan runs in this round: it reads only rows and
                           * columns before l, this block's writes wait for phase 2 */
            }
            if (s->its > s->itmax) {
                /* no convergence: eigenvalues 0..i are not computed (LAPACK's info = i + 1) */
                s->info = i + 1;
                if (lead)
                    for (int j = 0; j <= i; ++j)
                        put_eig(wr, wi, layW, strideW, k_glob, j, n, NAN, NAN);
                s->phase = PH_DONE;
                return;
            }
            s->kdefl += 1;
            /* shifts: the eigenvalues of the trailing 2x2 block, or exceptional ones */
            real h11, h12, h21, h22;
            if (s->kdefl % (2 * KEXSH) == 0) {
                const real e = fabs(HH(i, i - 1)) + fabs(HH(i - 1, i - 2));
                h11 = (real)0.75 * e + HH(i, i);
                h12 = (real)-0.4375 * e;
                h21 = e;
                h22 = h11;
            } else if (s->kdefl % KEXSH == 0) {
                const real e = fabs(HH(l + 1, l)) + fabs(HH(l + 2, l + 1));
                h11 = (real)0.75 * e + HH(l, l);
                h12 = (real)-0.4375 * e;
                h21 = e;
                h22 = h11;
            } else {
                h11 = HH(i - 1, i - 1);
                h21 = HH(i, i - 1);
                h12 = HH(i - 1, i);
                h22 = HH(i, i);
            }
            const real sc = fabs(h11) + fabs(h12) + fabs(h21) + fabs(h22);
            real s1r = 0, s1i = 0, s2r = 0, s2i = 0;
            if (sc != 0) {
                /* one reciprocal for dlahqr's four divisions (the shifts are scaled back by sc,
                 * so any factor near 1/sc serves), the divisions where 1/sc would overflow */
                if (sc >= SAFMIN) {
                    const real rsc = (real)1 / sc;
                    h11 *= rsc;
                    h21 *= rsc;
                    h12 *= rsc;
                    h22 *= rsc;
                } else {
                    h11 /= sc;
                    h21 /= sc;
                    h12 /= sc;
                    h22 /= sc;
                }
                const real tr = (h11 + h22) / 2;
                const real det = (h11 - tr) * (h22 - tr) - h12 * h21;
                const real rtdisc = sqrt(fabs(det));
                if (det >= 0) {
                    s1r = tr * sc;
                    s2r = s1r;
                    s1i = rtdisc * sc;
                    s2i = -s1i;
                } else {
                    /* real shifts: use the one closer to h22 twice */
                    s1r = tr + rtdisc;
                    s2r = tr - rtdisc;
                    if (fabs(s1r - h22) <= fabs(s2r - h22)) {
                        s1r *= sc;
                        s2r = s1r;
                    } else {
                        s2r *= sc;
                        s1r = s2r;
                    }
                    s1i = 0;
                    s2i = 0;
                }
            }
            s->s1r = s1r;
            s->s1i = s1i;
            s->s2r = s2r;
            s->s2i = s2i;
            if (QR_BULGES > 1 && s->kdefl % KEXSH != 0 && i - l + 1 >= QR_TWO_MIN) {
                /* two bulges with these shifts from l, no start scan: the leading bulge's start
                 * vector now, its first step next round */
                s->nb = QR_BULGES;
                s->m = l;
                s->k = l;
                s->phase = PH_CHASE;
                start_vector(Hm, gs, l, s1r, s1i, s2r, s2i, &s->sx1, &s->sx2, &s->sx3);
                return;
            }
            s->nb = 1;
            /* the start scan, always (with no candidate when i - 2 <= l): phase 2 of this round
             * stores the start vector of its result */
            s->phase = PH_START;
            r->scan = ACT_SCAN_START;
            r->lo = l;
            r->hi = i - 2;
            s->slot ^= 1;
            return;
        }
    }
}

/* What the next qr_plan call on this state will do: a sweep step, the other kinds (the scans,
 * deflation, shifts), or nothing. */
int qr_want(const qr_state *s)
{
    if (s->phase == PH_DONE)
        return WANT_NONE;
    if (s->phase == PH_START ||
        (s->phase == PH_CHASE && last_bulge_k(s) <= s->i - 1))
        return WANT_CHASE;
    return WANT_OTHER;
}

/* A sweep step's reflector I - t1 (1, v2, v3)^T (1, v2, v3) on the triples (o + e0, o + e1,
 * o + e2) of one work-item's slices j = j0, j0 + PB, ... <= j1: o = POFF(j) + k for the columns of
 * H (cols, the reflector from the left), o = j for the rows of H or Z (from the right, the three
 * columns at e0, e1, e2).
 *
 * A reflector of order 2 (the last step of a sweep) goes through the same code as a triple whose
 * third entry is its second again (e2 = e1, see third_entry) with v3 = 0 (reflector() gives
 * that): for finite entries the sum and the first two results are the pair's, bit for bit, and
 * the third store, which comes first, writes the second entry's old value back before the second
 * store. One path instead of one per order: NVIDIA's compiler predicated both paths in every
 * slice, and each cost its instructions (H200, QR step 4.5-7.4 % faster at n = 10-30). */
int third_entry(int nr, int e1, int e2)
{
    return nr == 3 ? e2 : e1;
}

/* One slice's update from its loaded triple (h0, h1, h2) at o; t2 = t1 v2, t3 = t1 v3. */
void slice_update(MEM real *base, ulong gs, int o, int e0, int e1, int e2, real h0, real h1,
                  real h2, real t1, real t2, real t3, real v2, real v3)
{
    const real sum = h0 + v2 * h1 + v3 * h2;
    AT(base, o + e2) = h2 - sum * t3;
    AT(base, o + e1) = h1 - sum * t2;
    AT(base, o + e0) = h0 - sum * t1;
}

void slices_apply(MEM real *base, ulong gs, bool cols, int k, int e0, int e1, int e2, int j0,
                  int j1, real t1, real v2, real v3)
{
    const real t2 = t1 * v2, t3 = t1 * v3;
    for (int j = j0; j <= j1; j += PB) {
        const int o = cols ? POFF(j) + k : j;
        const real h0 = AT(base, o + e0), h1 = AT(base, o + e1), h2 = AT(base, o + e2);
        slice_update(base, gs, o, e0, e1, e2, h0, h1, h2, t1, t2, t3, v2, v3);
    }
}

/* With -DNFIX a work-item's first QR_EAGER slices (QR_TRIPS when it has fewer) are unrolled and
 * all their loads issued before the first store (the compiler keeps them in order: it cannot
 * tell the slices apart), so their latencies overlap; the slices after them, which only the
 * larger active blocks have, go through the plain loop. Unrolled slices past j1 still cost their
 * (predicated) instructions in every round: on the H100 (f64, 500 000 matrices, the table's p)
 * one unrolled slice beat none, two, three and all of them (QR at n = 30: 91.4 ms against 92.2,
 * 96.8, 99.2, 96.3; n = 25: 57.1 against 58.9, 63.4, 73.2, 71.0). */
#ifndef QR_EAGER
#define QR_EAGER 1
#endif
#if defined(NFIX) && (NFIX + PB - 1) / PB <= 8 && QR_EAGER > 0
#define QR_TRIPS ((NFIX + PB - 1) / PB)
#if QR_EAGER < QR_TRIPS
#define QR_EAGER_TRIPS QR_EAGER
#else
#define QR_EAGER_TRIPS QR_TRIPS
#endif
#endif
#ifdef QR_TRIPS
/* The loads of the unrolled slices, apart, so that a sweep step can issue them before its
 * reflector is known (their latency then overlaps the reflector's square root and division). */
void trips_load(MEM const real *base, ulong gs, bool cols, int k, int e0, int e1, int e2, int j0,
                int j1, real *a0, real *a1, real *a2)
{
#pragma unroll
    for (int q = 0; q < QR_EAGER_TRIPS; ++q) {
        const int j = j0 + q * PB, o = cols ? POFF(j) + k : j;
        if (j <= j1) {
            a0[q] = AT(base, o + e0);
            a1[q] = AT(base, o + e1);
            a2[q] = AT(base, o + e2);
        }
    }
}

/* The updates of the unrolled slices on their loaded triples, then the plain loop over the
 * slices after them. */
void trips_store(MEM real *base, ulong gs, bool cols, int k, int e0, int e1, int e2, int j0,
                 int j1, const real *a0, const real *a1, const real *a2, real t1, real v2,
                 real v3)
{
    const real t2 = t1 * v2, t3 = t1 * v3;
#pragma unroll
    for (int q = 0; q < QR_EAGER_TRIPS; ++q) {
        const int j = j0 + q * PB, o = cols ? POFF(j) + k : j;
        if (j <= j1)
            slice_update(base, gs, o, e0, e1, e2, a0[q], a1[q], a2[q], t1, t2, t3, v2, v3);
    }
#if QR_EAGER_TRIPS < QR_TRIPS
    slices_apply(base, gs, cols, k, e0, e1, e2, j0 + QR_EAGER_TRIPS * PB, j1, t1, v2, v3);
#endif
}
#endif

void reflect3(MEM real *base, ulong gs, bool cols, int k, int e0, int e1, int e2, int j0,
              int j1, real t1, real v2, real v3)
{
#ifdef QR_TRIPS
    real a0[QR_EAGER_TRIPS], a1[QR_EAGER_TRIPS], a2[QR_EAGER_TRIPS];
    trips_load(base, gs, cols, k, e0, e1, e2, j0, j1, a0, a1, a2);
    trips_store(base, gs, cols, k, e0, e1, e2, j0, j1, a0, a1, a2, t1, v2, v3);
#else
    slices_apply(base, gs, cols, k, e0, e1, e2, j0, j1, t1, v2, v3);
#endif
}

/* Sweep step k (reflector of order nr) from the left: rows k..k+nr-1 of columns k+u, k+u+PB, ...
 * <= c1 (column j's row k at POFF(j) + k). */
void chase_left(MEM real *Hm, ulong gs, int k, int nr, int u, int c1, real t1, real v2, real v3)
{
    reflect3(Hm, gs, true, k, 0, 1, third_entry(nr, 1, 2), k + u, c1, t1, v2, v3);
}

/* Sweep step k from the right: columns k..k+nr-1 of rows r0+u, r0+u+PB, ... <= r1 of H and of
 * every row of Z (wantz). */
void chase_right(MEM real *Hm, MEM real *Zm, ulong gs, int lda, int n, int wantz, int k, int nr,
                 int u, int r0, int r1, real t1, real v2, real v3)
{
    const int o1 = POFF(k + 1);
    reflect3(Hm, gs, false, 0, POFF(k), o1, third_entry(nr, o1, POFF(k + 2)), r0 + u, r1, t1, v2,
             v3);
    if (wantz)
        reflect3(Zm, gs, false, 0, k * lda, (k + 1) * lda, third_entry(nr, k + 1, k + 2) * lda, u,
                 n - 1, t1, v2, v3);
}

/* Sweep step k's write into column k-1 (by one work-item of the bulge): bulge 1 (a step after
 * the first) puts (beta, 0, 0) in rows k..k+nr-1; bulge 2 (the first step, m > l) scales
 * H(m, m-1) by 1 - tau, which avoids a bug when v2 and v3 underflow (dlahqr); 0: nothing. */
void chase_bulge_write(MEM real *Hm, ulong gs, int k, int nr, int bulge, real beta, real tau)
{
    if (bulge == 1) {
        HH(k, k - 1) = beta;
        HH(k + 1, k - 1) = 0;
        if (nr == 3)
            HH(k + 2, k - 1) = 0;
    } else if (bulge == 2) {
        HH(k, k - 1) = HH(k, k - 1) * (1 - tau);
    }
}

/* With P > 1 and one bulge a sweep, the group's sweep steps run in a loop of their own
 * (qr_sweeps); the round loop then only takes the other kinds. */
#if P > 1 && QR_BULGES == 1
#define QR_SWEEP_LOOP 1
#else
#define QR_SWEEP_LOOP 0
#endif

#if QR_SWEEP_LOOP
/* The sweep steps of a group, entered once none of its matrices wants another kind of round:
 * every matrix that wants a step runs its sweep to the end, the others wait. The group's number
 * of rounds is known at the start (its longest sweep), so the rounds exchange no flags and skip
 * the state machine, and every sweep's first step (from the start vector) is the loop's first
 * round. The operations and their order are those of qr_plan's steps. */
void qr_sweeps(qr_state *s, MEM real *Hm, MEM real *Zm, ulong gs, int lda, int n, int wantt,
               int wantz, __local const int *res, __local const real *sv,
               __local int *group_rounds, int u, bool lead, bool group_lead)
{
    int steps = 0;
    if (qr_want(s) == WANT_CHASE) {
        if (s->phase == PH_START) {
            s->m = max(res[s->slot], s->l);
            s->k = s->m;
            s->phase = PH_CHASE;
        }
        steps = s->i - s->k;
        if (lead)
            atomic_max(group_rounds, steps);
    }
    SYNC();
    const int rounds = *group_rounds;
    /* a sweep only starts here (PH_START above), so k == m and round 0 is its first step */
    const int i = s->i, l = s->l, m = s->m;
    const int c1 = wantt ? n - 1 : i, r0 = wantt ? 0 : l;
    for (int r = 0; r < rounds; ++r) {
        const int k = m + r, nr = min(3, i - k + 1);
        const bool on = r < steps;
        real tau = 0, v2 = 0, v3 = 0, beta = 0;
        if (on) {
#ifdef QR_TRIPS
            real a0[QR_EAGER_TRIPS], a1[QR_EAGER_TRIPS], a2[QR_EAGER_TRIPS];
            trips_load(Hm, gs, true, k, 0, 1, third_entry(nr, 1, 2), k + u, c1, a0, a1, a2);
#endif
            real x1, x2, x3;
            if (r == 0) {
                x1 = sv[0];
                x2 = sv[1];
                x3 = sv[2];
            } else {
                x1 = HH(k, k - 1);
                x2 = HH(k + 1, k - 1);
                x3 = nr == 3 ? HH(k + 2, k - 1) : 0;
            }
            beta = reflector(nr, x1, x2, x3, &tau, &v2, &v3);
#ifdef QR_TRIPS
            trips_store(Hm, gs, true, k, 0, 1, third_entry(nr, 1, 2), k + u, c1, a0, a1, a2, tau,
                        v2, v3);
#else
            chase_left(Hm, gs, k, nr, u, c1, tau, v2, v3);
#endif
        }
        SYNC();
        if (on) {
            chase_right(Hm, Zm, gs, lda, n, wantz, k, nr, u, r0, min(k + 3, i), tau, v2, v3);
            if (lead)
                chase_bulge_write(Hm, gs, k, nr, r > 0 ? 1 : m > l ? 2 : 0, beta, tau);
        }
        SYNC();
    }
    /* every read of the count came before the loop's first barrier */
    if (group_lead)
        *group_rounds = 0;
    if (steps > 0)
        s->k = m + steps; /* the sweep is over: qr_plan's next call starts the deflation scan */
}
#endif

/* Per-matrix local reals (SWB): H band-packed (lstride covers it), then Z (LDA*n) with
 * GEEV_WANTZ. Beside them, per matrix: the start vector (3 reals: sv) and two scan result slots
 * (ints), then four group flags (which kinds of round the group's matrices want next, for two
 * rounds in turn) and the number of rounds of the group's sweeps (qr_sweeps).
 *
 * With P > 1 the matrices of a group take their rounds in step: a round is either sweep steps
 * (every matrix that wants one, the others wait) or the other kinds, and the group stays with
 * sweep steps until no matrix wants one, then with the others until no matrix wants them. The
 * work-items of a subgroup share one instruction stream, so a round in which one matrix chases
 * while another scans costs both paths; the sweeps of random matrices have nearly the same
 * length at the same stage, so little is lost by waiting. (H100, n = 30: the QR step was 29 %
 * faster on groups of identical matrices than on random ones before this.) */
__kernel void geev_qr(__global real *H, ulong offH, int layH, ulong strideH,
                      __global real *Z, ulong offZ, int layZ, ulong strideZ,
                      __global real *wr, ulong offWr, __global real *wi, ulong offWi, int layW,
                      ulong strideW, __global int *info, ulong offInfo, int n_arg, uint count,
                      int flags, int sweeps_max, uint lstride, __local real *lds,
                      __local real *svs, __local int *ints)
{
    const int n = NSIZE(n_arg);
    int m, t, mpg;
    geometry(&m, &t, &mpg);
    const int lid = (int)get_local_id(0);
    const uint first = (uint)get_group_id(0) * (uint)mpg;
    const uint nprob = min((uint)mpg, count - first);
    const bool mine = t != GEEV_IDLE && (uint)m < nprob;
    const bool lead = mine && t == 0;
    /* the work-item's bulge and its rank u among that bulge's PB work-items */
    const int bid = mine ? t / PB : 0, u = mine ? t % PB : 0;
    const bool bulge_lead = mine && u == 0;
    const int wantt = (flags & GEEV_WANTT) != 0, wantz = (flags & GEEV_WANTZ) != 0;
    const uint per = (uint)PACKED(n) + 1;
    __local real *sv = svs + 3 * m;
    __local int *res = ints + 2 * m, *group_flags = ints + 2 * mpg;
    __global real *wrk = wr + offWr, *wik = wi + offWi;
#ifdef GEEV_MWB
    const int lda = n;
    const ulong gs = strideH; /* H and Z share the EW stride (the chunk) */
    __global real *Hm = H + offH + first + (uint)m;
    __global real *Zm = Z + offZ + first + (uint)m;
#else
    const ulong gs = 1;
    const int lda = n | 1;
    __local real *Hm = lds + (uint)m * lstride;
    __local real *Zm = Hm + ((uint)PACKED(n) + 2) / 2 * 2 + 1;
    copy_flat(lds, lstride, 0, H, offH, layH, strideH, first, nprob, per, n, 1);
    if (wantz)
        copy_square(lds, lstride, ((uint)PACKED(n) + 2) / 2 * 2 + 1, lda, Z, offZ, layZ, strideZ,
                    first, nprob, n, 1, NULL);
#endif
#define ZZ(i, j) AT(Zm, (j) * lda + (i))
    const real smlnum = SAFMIN * ((real)n / ULP);
    if (lead) {
        res[0] = -1;
        res[1] = -1;
    }
    if (lid == 0)
        for (int q = 0; q < 5; ++q)
            group_flags[q] = 0;
    GROUP_SYNC();
    qr_state st;
    st.phase = PH_DONE;
    st.info = 0;
    /* defined for every work-item: qr_sweeps reads them before it knows whether a matrix sweeps */
    st.i = -1;
    st.l = 0;
    st.m = 0;
    st.k = 0;
    st.nb = 1;
    if (mine) {
        st.unscale = AT(Hm, per - 1);
        st.kdefl = 0;
        st.itmax = sweeps_max > 0 ? sweeps_max : 30 * max(10, n);
        st.i = n - 1;
        st.l = 0;
        st.slot = 0;
        st.phase = PH_BEGIN;
        if (!isfinite(st.unscale)) {
            /* a non-finite entry: no eigenvalue is computed */
            st.info = n;
            st.phase = PH_DONE;
            if (lead)
                for (int j = 0; j < n; ++j)
                    put_eig(wrk, wik, layW, strideW, first + (uint)m, j, n, NAN, NAN);
        }
    }
    int mode = WANT_OTHER; /* every matrix begins with a deflation scan */
    for (uint round = 0;; ++round) {
        qr_round rd;
#if P > 1
        if (qr_want(&st) != mode) {
            /* wait for the group's other matrices to finish their rounds of this kind */
            rd.scan = 0;
            rd.chase = 0;
            rd.zero_sub = 0;
            rd.blk = 0;
            rd.rot = 0;
        } else
#endif
            qr_plan(&st, &rd, Hm, gs, res, sv, n, wantt, smlnum, lead, wrk, wik, layW, strideW,
                    first + (uint)m, bid);
#if P > 1
        const int par = (int)(round & 1), next = qr_want(&st);
        /* group_flags[par]: a matrix wants a sweep step next, [2 + par]: one wants another kind */
        if (lead && next != WANT_NONE)
            group_flags[next == WANT_CHASE ? par : 2 + par] = 1;
#else
        const bool busy = rd.scan || rd.chase || rd.zero_sub || rd.blk;
#endif
        /* ---- phase 1: the scans (downwards: a work-item's first hit is its largest, the
         * result the largest over the work-items, as LAPACK's scan from the bottom) and the
         * reflector from the left ---- */
        int hit = -1;
        real hv1 = 0, hv2 = 0, hv3 = 0;
        if (!QR_SWEEP_LOOP && rd.chase) {
            chase_left(Hm, gs, rd.k, rd.nr, u, rd.c1, rd.tau, rd.v2, rd.v3);
        } else if (rd.scan == ACT_SCAN_DEFL) {
            for (int kk = rd.hi - t; kk > rd.lo; kk -= P)
                if (defl_test(Hm, gs, kk, rd.hi, smlnum)) {
                    GEEV_MAX(&res[st.slot], kk);
                    break;
                }
        } else if (rd.scan == ACT_SCAN_START) {
            for (int mm = rd.hi - t; mm > rd.lo; mm -= P) {
                start_vector(Hm, gs, mm, st.s1r, st.s1i, st.s2r, st.s2i, &hv1, &hv2, &hv3);
                if (start_test(Hm, gs, mm, hv1, hv2, hv3)) {
                    hit = mm;
                    GEEV_MAX(&res[st.slot], mm);
                    break;
                }
            }
        }
        SYNC();
#if P > 1
        const int any_chase = group_flags[par], any_other = group_flags[2 + par];
        const int more = any_chase || any_other;
        if (lid == 0) {
            group_flags[par ^ 1] = 0;
            group_flags[2 + (par ^ 1)] = 0;
        }
#else
        const int more = busy;
#endif
        /* ---- phase 2: the reflector from the right and on Z, the serial part's writes ---- */
        if (!QR_SWEEP_LOOP && rd.chase) {
            const int k = rd.k;
            const real t1 = rd.tau;
            chase_right(Hm, Zm, gs, lda, n, wantz, k, rd.nr, u, rd.r0, rd.r1, t1, rd.v2, rd.v3);
            if (bulge_lead)
                chase_bulge_write(Hm, gs, k, rd.nr, rd.bulge, rd.beta, t1);
        } else if (rd.scan) {
            /* the other slot is free again: every read of it came before the last barrier */
            if (lead)
                res[st.slot ^ 1] = -1;
            if (rd.scan == ACT_SCAN_START) {
                /* the one work-item whose first hit won stores its vector; with no hit the
                 * lead computes it at lo */
                const int got = res[st.slot];
                const bool none = got <= rd.lo;
                if (none && lead)
                    start_vector(Hm, gs, rd.lo, st.s1r, st.s1i, st.s2r, st.s2i, &hv1, &hv2, &hv3);
                if (none ? lead : hit == got) {
                    sv[0] = hv1;
                    sv[1] = hv2;
                    sv[2] = hv3;
                }
            }
        }
        if (lead && rd.zero_sub > 0)
            HH(rd.zero_sub, rd.zero_sub - 1) = 0;
        if (rd.blk) {
            const int ib = rd.blk;
            if (lead) {
                HH(ib - 1, ib - 1) = rd.a;
                HH(ib - 1, ib) = rd.b;
                HH(ib, ib - 1) = rd.c;
                HH(ib, ib) = rd.d;
            }
            if (rd.rot) {
                /* rows ib-1, ib right of the block; columns ib-1, ib above it; Z */
                const real cs = rd.cs, sn = rd.sn;
                for (int j = ib + 1 + t; j < n; j += P) {
                    const real x = HH(ib - 1, j), y = HH(ib, j);
                    HH(ib - 1, j) = cs * x + sn * y;
                    HH(ib, j) = cs * y - sn * x;
                }
                for (int j = t; j <= ib - 2; j += P) {
                    const real x = HH(j, ib - 1), y = HH(j, ib);
                    HH(j, ib - 1) = cs * x + sn * y;
                    HH(j, ib) = cs * y - sn * x;
                }
                if (wantz)
                    for (int j = t; j < n; j += P) {
                        const real x = ZZ(j, ib - 1), y = ZZ(j, ib);
                        ZZ(j, ib - 1) = cs * x + sn * y;
                        ZZ(j, ib) = cs * y - sn * x;
                    }
            }
        }
        SYNC();
        if (!more)
            break;
#if P > 1
        if (mode == WANT_CHASE ? !any_chase : !any_other)
            mode = mode == WANT_CHASE ? WANT_OTHER : WANT_CHASE;
#if QR_SWEEP_LOOP
        if (mode == WANT_CHASE) {
            qr_sweeps(&st, Hm, Zm, gs, lda, n, wantt, wantz, res, sv, group_flags + 4, u, lead,
                      lid == 0);
            mode = WANT_OTHER;
        }
#endif
#endif
    }
    GROUP_SYNC();
    if (lead)
        info[offInfo + first + (uint)m] = st.info;
#ifndef GEEV_MWB
    /* keep the Schur form (and vectors) for geev_vectors */
    if (wantt)
        copy_flat(lds, lstride, 0, H, offH, layH, strideH, first, nprob, per, n, 0);
    if (wantz)
        copy_square(lds, lstride, ((uint)PACKED(n) + 2) / 2 * 2 + 1, lda, Z, offZ, layZ, strideZ,
                    first, nprob, n, 0, NULL);
#endif
#undef ZZ
}
#undef HH

/* ================================================================================================
 * Step 3: right eigenvectors (dtrevc, back-transformed, then normalized as dgeev)
 * ================================================================================================ */

/* x = b / a in complex arithmetic, |a| not below smin (the perturbation of dlaln2). */
void cdiv(real ar, real ai, real br, real bi, real smin, real *xr, real *xi)
{
    if (fabs(ar) + fabs(ai) < smin) {
        ar = smin;
        ai = 0;
    }
    /* Smith's algorithm */
    if (fabs(ar) >= fabs(ai)) {
        const real r = ai / ar, d = ar + ai * r;
        *xr = (br + bi * r) / d;
        *xi = (bi - br * r) / d;
    } else {
        const real r = ar / ai, d = ai + ar * r;
        *xr = (br * r + bi) / d;
        *xi = (bi * r - br) / d;
    }
}

/* dlaln2's guard against overflow in x = b / a with |a| raised to smin: a factor (1 or 1 / |b|)
 * that the caller applies to b and to the rest of its column (big_inv: smlnum). */
real solve_scale(real a_abs, real b_abs, real big_inv)
{
    return a_abs < 1 && b_abs > 1 && b_abs * big_inv > a_abs ? (real)1 / b_abs : (real)1;
}

/* Solve the complex 2x2 system [a11 a12; a21 a22] x = s b by elimination with partial pivoting;
 * pivots below smin are raised to smin, and s (1, or below 1 where x would overflow, as dlaln2's
 * scale) is returned. */
real csolve2(real a11r, real a11i, real a12r, real a12i, real a21r, real a21i, real a22r,
             real a22i, real b1r, real b1i, real b2r, real b2i, real smin, real big_inv,
             real *x1r, real *x1i, real *x2r, real *x2i)
{
    if (fabs(a21r) + fabs(a21i) > fabs(a11r) + fabs(a11i)) {
        real tr = a11r, ti = a11i;
        a11r = a21r;
        a11i = a21i;
        a21r = tr;
        a21i = ti;
        tr = a12r;
        ti = a12i;
        a12r = a22r;
        a12i = a22i;
        a22r = tr;
        a22i = ti;
        tr = b1r;
        ti = b1i;
        b1r = b2r;
        b1i = b2i;
        b2r = tr;
        b2i = ti;
    }
    if (fabs(a11r) + fabs(a11i) < smin) {
        a11r = smin;
        a11i = 0;
    }
    real lr, li;
    cdiv(a11r, a11i, a21r, a21i, smin, &lr, &li); /* |l| <= 1: the pivot is the larger */
    const real u22r = a22r - (lr * a12r - li * a12i), u22i = a22i - (lr * a12i + li * a12r);
    real c2r = b2r - (lr * b1r - li * b1i), c2i = b2i - (lr * b1i + li * b1r);
    /* as dlaln2: the bound on x2 and on b1 / u11 decides the scale */
    const real u11 = fabs(a11r) + fabs(a11i), u22 = fmax(fabs(u22r) + fabs(u22i), smin);
    const real bnd = fmax(fabs(c2r) + fabs(c2i), (fabs(b1r) + fabs(b1i)) * (u22 / u11));
    const real sc = solve_scale(u22, bnd, big_inv);
    c2r *= sc;
    c2i *= sc;
    cdiv(u22r, u22i, c2r, c2i, smin, x2r, x2i);
    const real c1r = b1r * sc - (a12r * *x2r - a12i * *x2i),
               c1i = b1i * sc - (a12r * *x2i + a12i * *x2r);
    cdiv(a11r, a11i, c1r, c1i, smin, x1r, x1i);
    return sc;
}

/* Per-matrix storage (SWB, local): T band-packed, Z (LDA*n), X (LDA*n). MWB: T, Z in place in
 * the global EW arrays, X in the EW scratch array Xs. */
__kernel void geev_vectors(__global const real *H, ulong offH, int layH, ulong strideH,
                           __global real *Z, ulong offZ, int layZ, ulong strideZ,
                           __global const real *D, ulong offD, __global real *Xs, ulong offX,
                           __global const int *info, ulong offInfo, __global real *VR,
                           ulong offVR, int layV, ulong strideV, int n_arg, uint count,
                           uint lstride, __local real *lds)
{
    const int n = NSIZE(n_arg);
    int m, t, mpg;
    geometry(&m, &t, &mpg);
    const uint first = (uint)get_group_id(0) * (uint)mpg;
    const uint nprob = min((uint)mpg, count - first);
    const bool mine = t != GEEV_IDLE && (uint)m < nprob;
    const int failed = mine ? info[offInfo + first + (uint)m] != 0 : 1;
#ifdef GEEV_MWB
    const int lda = n;
    const ulong gs = strideH;
    __global const real *Tm = H + offH + first + (uint)m;
    __global real *Zm = Z + offZ + first + (uint)m;
    __global real *Xm = Xs + offX + first + (uint)m;
#else
    const uint per = (uint)PACKED(n) + 1;
    const int lda = n | 1;
    const uint tsz = ((uint)PACKED(n) + 2) / 2 * 2 + 1;
    __local const real *Tm = lds + (uint)m * lstride;
    __local real *Zm = lds + (uint)m * lstride + tsz;
    __local real *Xm = Zm + lda * n;
    copy_flat(lds, lstride, 0, (__global real *)H, offH, layH, strideH, first, nprob, per, n, 1);
    copy_square(lds, lstride, tsz, lda, Z, offZ, layZ, strideZ, first, nprob, n, 1, NULL);
#endif
#define TT(i, j) AT(Tm, POFF(j) + (i))
#define ZZ(i, j) AT(Zm, (j) * lda + (i))
#define XX(i, j) AT(Xm, (j) * lda + (i))
    GROUP_SYNC();
    const real smlnum = SAFMIN * ((real)n / ULP);
    const real big = sqrt((real)1 / smlnum);
    /* ---- eigenvectors of T by back substitution, one eigenvalue (or pair) per work-item ---- */
    if (mine && !failed)
        for (int e = t; e < n; e += P) {
            const bool second = e > 0 && TT(e, e - 1) != 0;
            if (second)
                continue; /* done with the pair's first column */
            const bool pair = e + 1 < n && TT(e + 1, e) != 0;
            const real lr = TT(e, e);
            const real li = pair ? sqrt(fabs(TT(e, e + 1))) * sqrt(fabs(TT(e + 1, e))) : 0;
            const real smin = fmax(ULP * (fabs(lr) + fabs(li)), smlnum);
            const int top = pair ? e + 1 : e;
            for (int i = top + 1; i < n; ++i) {
                XX(i, e) = 0;
                if (pair)
                    XX(i, e + 1) = 0;
            }
            if (!pair) {
                XX(e, e) = 1;
                for (int i = 0; i < e; ++i)
                    XX(i, e) = -TT(i, e);
            } else {
                real x0r, x0i, x1r, x1i;
                if (fabs(TT(e, e + 1)) >= fabs(TT(e + 1, e))) {
                    x0r = 1;
                    x0i = 0;
                    x1r = 0;
                    x1i = li / TT(e, e + 1);
                } else {
                    x0r = -li / TT(e + 1, e);
                    x0i = 0;
                    x1r = 0;
                    x1i = 1;
                }
                XX(e, e) = x0r;
                XX(e, e + 1) = x0i;
                XX(e + 1, e) = x1r;
                XX(e + 1, e + 1) = x1i;
                for (int i = 0; i < e; ++i) {
                    XX(i, e) = -(x0r * TT(i, e) + x1r * TT(i, e + 1));
                    XX(i, e + 1) = -(x0i * TT(i, e) + x1i * TT(i, e + 1));
                }
            }
            /* (T - lambda) x = rhs, rows e-1 down to 0, 1x1 and 2x2 diagonal blocks */
            int j = e - 1;
            while (j >= 0) {
                const bool block = j > 0 && TT(j, j - 1) != 0;
                real xr[2], xi[2];
                int lo;
                real sc; /* the column's (pair's) scale, below 1 where x would overflow */
                if (block) {
                    lo = j - 1;
                    const real b1r = XX(j - 1, e), b1i = pair ? XX(j - 1, e + 1) : 0;
                    const real b2r = XX(j, e), b2i = pair ? XX(j, e + 1) : 0;
                    sc = csolve2(TT(j - 1, j - 1) - lr, -li, TT(j - 1, j), 0, TT(j, j - 1), 0,
                                 TT(j, j) - lr, -li, b1r, b1i, b2r, b2i, smin, smlnum, &xr[0],
                                 &xi[0], &xr[1], &xi[1]);
                } else {
                    lo = j;
                    const real ar = TT(j, j) - lr, br = XX(j, e), bi = pair ? XX(j, e + 1) : 0;
                    sc = solve_scale(fmax(fabs(ar) + fabs(li), smin), fabs(br) + fabs(bi), smlnum);
                    cdiv(ar, -li, br * sc, bi * sc, smin, &xr[0], &xi[0]);
                }
                const int cnt = j - lo + 1;
                /* keep the solution representable: rescale the whole column (pair) */
                real xmax = 0;
                for (int q = 0; q < cnt; ++q)
                    xmax = fmax(xmax, fabs(xr[q]) + fabs(xi[q]));
                if (xmax > big) {
                    const real down = (real)1 / xmax;
                    sc *= down;
                    for (int q = 0; q < cnt; ++q) {
                        xr[q] *= down;
                        xi[q] *= down;
                    }
                }
                if (sc != 1) {
                    for (int i = 0; i <= top; ++i) {
                        if (i >= lo && i <= j)
                            continue;
                        XX(i, e) *= sc;
                        if (pair)
                            XX(i, e + 1) *= sc;
                    }
                }
                for (int q = 0; q < cnt; ++q) {
                    XX(lo + q, e) = xr[q];
                    if (pair)
                        XX(lo + q, e + 1) = xi[q];
                }
                for (int i = 0; i < lo; ++i) {
                    real ur = 0, ui = 0;
                    for (int q = 0; q < cnt; ++q) {
                        ur = fma(xr[q], TT(i, lo + q), ur);
                        ui = fma(xi[q], TT(i, lo + q), ui);
                    }
                    XX(i, e) -= ur;
                    if (pair)
                        XX(i, e + 1) -= ui;
                }
                j = lo - 1;
            }
        }
    SYNC();
    /* ---- back-transform by Z and undo the balancing: row r of VR = D(r) Z(r,:) X, in place
     * over Z; columns from the right, a pair's two columns together ---- */
    if (mine && !failed) {
#ifdef GEEV_MWB
        __global const real *Dm = D + offD + first + (uint)m;
#endif
        for (int r = t; r < n; r += P) {
#ifdef GEEV_MWB
            const real dr = Dm[(ulong)r * strideZ];
#else
            const real dr = D[offD + layout_addr(layZ, first + (uint)m, (uint)r, (uint)n, n, strideZ)];
#endif
            int c = n - 1;
            while (c >= 0) {
                const bool second = c > 0 && TT(c, c - 1) != 0;
                if (second) {
                    /* pair (c-1, c): real parts in column c-1, imaginary parts in column c */
                    real sr = 0, si = 0;
                    for (int q = 0; q <= c; ++q) {
                        const real z = ZZ(r, q);
                        sr = fma(z, XX(q, c - 1), sr);
                        si = fma(z, XX(q, c), si);
                    }
                    ZZ(r, c - 1) = dr * sr;
                    ZZ(r, c) = dr * si;
                    c -= 2;
                } else {
                    real sr = 0;
                    for (int q = 0; q <= c; ++q)
                        sr = fma(ZZ(r, q), XX(q, c), sr);
                    ZZ(r, c) = dr * sr;
                    c -= 1;
                }
            }
        }
    }
    SYNC();
    /* ---- normalize (dgeev): unit 2-norm; a complex vector turned so that its largest
     * component is real ---- */
    if (mine && !failed)
        for (int e = t; e < n; e += P) {
            const bool second = e > 0 && TT(e, e - 1) != 0;
            if (second)
                continue;
            const bool pair = e + 1 < n && TT(e + 1, e) != 0;
            /* scaled sums of squares: entries may be far from 1 before normalization */
            real amax = 0;
            for (int i = 0; i < n; ++i) {
                amax = fmax(amax, fabs(ZZ(i, e)));
                if (pair)
                    amax = fmax(amax, fabs(ZZ(i, e + 1)));
            }
            if (amax == 0)
                continue;
            const real inv = (real)1 / amax;
            real ss = 0;
            for (int i = 0; i < n; ++i) {
                const real a = ZZ(i, e) * inv;
                ss = fma(a, a, ss);
                if (pair) {
                    const real b = ZZ(i, e + 1) * inv;
                    ss = fma(b, b, ss);
                }
            }
            const real scl = inv / sqrt(ss);
            for (int i = 0; i < n; ++i) {
                ZZ(i, e) *= scl;
                if (pair)
                    ZZ(i, e + 1) *= scl;
            }
            if (pair) {
                int kmax = 0;
                real best = -1;
                for (int i = 0; i < n; ++i) {
                    const real a = ZZ(i, e), b = ZZ(i, e + 1);
                    const real w = a * a + b * b;
                    if (w > best) {
                        best = w;
                        kmax = i;
                    }
                }
                const real f = ZZ(kmax, e), g = ZZ(kmax, e + 1);
                real cs = 1, sn = 0;
                if (g != 0) {
                    if (f == 0) {
                        cs = 0;
                        sn = sgn(1, g);
                    } else {
                        const real d = hypot(f, g), r = sgn(d, f);
                        cs = fabs(f) / d;
                        sn = g / r;
                    }
                }
                for (int i = 0; i < n; ++i) {
                    const real x = ZZ(i, e), y = ZZ(i, e + 1);
                    ZZ(i, e) = cs * x + sn * y;
                    ZZ(i, e + 1) = cs * y - sn * x;
                }
                ZZ(kmax, e + 1) = 0;
            }
        }
    GROUP_SYNC();
    /* ---- write VR; NaN for the matrices whose eigenvalues did not all converge ---- */
#ifdef GEEV_MWB
    const uint nn = (uint)(n * n);
    if (mine)
        for (uint e = (uint)t; e < nn; e += P) {
            const uint j = e / (uint)n, i = e - j * (uint)n;
            VR[offVR + layout_addr(layV, first + (uint)m, e, nn, n, strideV)] =
                failed ? NAN : ZZ((int)i, (int)j);
        }
#else
    copy_square(lds, lstride, tsz, lda, VR, offVR, layV, strideV, first, nprob, n, 0,
                info + offInfo);
#endif
#undef TT
#undef ZZ
#undef XX
}
