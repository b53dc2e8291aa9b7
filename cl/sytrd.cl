/* Householder tridiagonalization A = Q T Q^T of batched symmetric matrices, T = tridiag(e, d, e)
 * (Abbas-Turki & Graillat 2016, Sect. 4, Algorithm 2: symmetric-small-systems-abbas-turki-
 * graillat-2016.txt), and the back-substitution pieces of the solve x = Q PCR(T, Q^T b).
 *
 * Mappings (build options): NT work-items per matrix. NT = 1 is the paper's SIMD version, and then
 * VW matrices ride in the lanes of an OpenCL vector (CPUs); NT > 1 (VW = 1) is its collaborative
 * version, the loops over rows shared by the work-items. The matrix lives in local memory (full
 * n x n, column-major), reduced as LAPACK's dsytd2 does for the lower triangle:
 *   H_j = I - tau_j v v^T, v = (0..0, 1, v_{j+2}..v_{n-1}), applied from both sides as the rank-2
 *   update A <- A - v w^T - w v^T, p = tau A v, w = p - (tau/2)(p^T v) v;
 * then Q = H_0 H_1 ... H_{n-3} is generated in place over the reflectors (as dorg2r does), so a
 * single n x n buffer serves both. Y = Q^T B when asked. */

#ifndef NT
#define NT 1
#endif

#define SYTRD_FORM_Q 1  /* write Q */
#define SYTRD_APPLY_B 2 /* write Y = Q^T B */

/* A reflector's plain sum of squares sigma = ||x||^2 is taken where sigma and alpha^2 + sigma lie
 * in [PLAIN_SSQ_MIN, PLAIN_SSQ_MAX]: no square overflowed, and the squares that underflowed (each
 * below 2^-1022, or 2^-126 in float, subnormal or flushed to zero) change it by less than 2^-60
 * (2^-34) of itself for up to 4096 rows. The matrix's scaling into [SCALE_MIN, SCALE_MAX] bounds
 * its largest entry, not every column's: entries below 2^-511 (2^-63 in float) have subnormal
 * squares, and a column of them lost its norm, and its reflector its orthogonality. Outside the
 * range x is divided by s = max(|alpha|, |x_i|) first, in place, and v = (x / s) (s / (alpha -
 * beta)), which neither underflows nor overflows; the reflector exists where x is nonzero (or
 * NaN), whatever its squares came to. */
#ifdef BCL_DOUBLE
#define PLAIN_SSQ_MIN 0x1p-950
#define PLAIN_SSQ_MAX 0x1p1000
#else
#define PLAIN_SSQ_MIN 0x1p-80f
#define PLAIN_SSQ_MAX 0x1p100f
#endif
#define PLAIN_SSQ_OK(sigma, tot) ((sigma) >= PLAIN_SSQ_MIN && (tot) <= PLAIN_SSQ_MAX)
/* whether step j takes the scaled pass: not at the last step (j = n-2), which has no x and
 * reflects nothing (in the register kernel that pass was serial work for the owner at every
 * problem's last step) */
#define SCALED_PASS(j, sigma, alpha)                                                              \
    ((j) + 2 < n && !PLAIN_SSQ_OK(sigma, (alpha) * (alpha) + (sigma)))
/* whether any lane of a mask is set (the local-memory kernel's lanes) */
#if VW == 1
#define ANY_LANE(m) ((m) != 0)
#else
#define ANY_LANE(m) any(m)
#endif

#define SA(i, j) sA[(j) * n + (i)]

/* the problem in slot s: the index list's entry when there is one (AUTO's second pass) */
#define PROBLEM(s) (index ? index[s] : (s))

/* load one element of VW problems starting at slot `first` (idle lanes repeat the last one) */
#define GATHER(dst, ptr, off, e, per)                                                            \
    do {                                                                                         \
        lanes_t g_;                                                                              \
        for (int v_ = 0; v_ < VW; ++v_)                                                          \
            g_.s[v_] = ptr[off + BATCH_INDEX(PROBLEM(first + min((uint)v_, lanes - 1u)),         \
                                             (uint)(e), per, stride)];                           \
        dst = g_.v;                                                                              \
    } while (0)
#define SCATTER(ptr, off, e, per, val)                                                           \
    do {                                                                                         \
        lanes_t s_;                                                                              \
        s_.v = (val);                                                                            \
        for (int v_ = 0; v_ < (int)lanes; ++v_)                                                  \
            ptr[off + BATCH_INDEX(PROBLEM(first + (uint)v_), (uint)(e), per, stride)] = s_.s[v_]; \
    } while (0)

#ifndef SYTRD_REG
__kernel void sytrd(__global const real *A, ulong offA, __global real *Q, ulong offQ,
                    __global real *D, ulong offD, __global real *E, ulong offE,
                    __global const real *B, ulong offB, __global real *Y, ulong offY, int n,
                    int nrhs, uint count, ulong stride, int mode, __global const uint *index,
                    __local realv *lds)
{
    const int lid = (int)get_local_id(0);
    const int w = lid / NT, t = lid - w * NT;
    const int mpg = (int)get_local_size(0) / NT;
    const uint first = ((uint)get_group_id(0) * (uint)mpg + (uint)w) * VW;
    const uint lanes = first < count ? min((uint)VW, count - first) : 0u;
    const bool active = lanes > 0;
    const int per = n * n + 5 * n + 4;
    __local realv *sA = lds + w * per;
    __local realv *vv = sA + n * n, *pv = vv + n, *tau = pv + n, *dv = tau + n, *ev = dv + n;
    __local realv *scal = ev + n; /* 0, 1: reflector scalars; 2, 3: the scaling and its undoing */
    const uint nn = (uint)(n * n), nb = (uint)(n * nrhs);

    /* the lower triangle, mirrored (only it is read) */
    if (active)
        for (int q = t; q < n * n; q += NT) {
            const int i = q % n, j = q / n;
            realv x;
            GATHER(x, A, offA, i >= j ? q : i * n + j, nn);
            sA[q] = x;
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* matrices with norms outside [SCALE_MIN, SCALE_MAX] are reduced scaled, as LAPACK does: the
     * largest magnitude from partial maxima over strided entries, met in the 5n work vectors
     * (no barrier in a loop of rounds here: with one, PoCL 3.1 lost the later local stores) */
    {
        __local realv *part = vv;
        const int parts = min(NT, 5 * n);
        if (t < parts && active) { /* an empty slot's sA was never loaded */
            realv m = (realv)0;
            for (int q = t; q < n * n; q += parts)
                m = fmax(m, fabs(sA[q]));
            part[t] = m;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t == 0 && active) {
            realv m = part[0];
            for (int i = 1; i < parts; ++i)
                m = fmax(m, part[i]);
            const maskv small = (maskv)(m > (realv)0 && m < (realv)SCALE_MIN);
            const maskv large = (maskv)(m > (realv)SCALE_MAX);
            scal[2] = select(select((realv)1, (realv)SCALE_MAX / m, large), (realv)SCALE_MIN / m, small);
            scal[3] = select(select((realv)1, m / (realv)SCALE_MAX, large), m / (realv)SCALE_MIN, small);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const realv sc = active ? scal[2] : (realv)1;
        if (active)
            for (int q = t; q < n * n; q += NT)
                sA[q] *= sc;
    }

    for (int j = 0; j < n - 1; ++j) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t == 0 && active) {
            const realv alpha = SA(j + 1, j);
            realv sigma = (realv)0;
            for (int i = j + 2; i < n; ++i)
                sigma += SA(i, j) * SA(i, j);
            /* nrm, as: the norm and alpha of the column divided by s (1, or its largest
             * magnitude where scaled), so that beta, tau and v come from values in range */
            realv nrm = sqrt(alpha * alpha + sigma), s = (realv)1, as = alpha;
            maskv refl = (maskv)(sigma != (realv)0);
            /* lanes outside the plain sum's range (PLAIN_SSQ_MIN): x scaled by s, the others by 1 */
            const maskv scaled = (maskv)(SCALED_PASS(j, sigma, alpha));
            if (ANY_LANE(scaled)) {
                realv xmax = (realv)0;
                for (int i = j + 2; i < n; ++i)
                    xmax = fmax(xmax, fabs(SA(i, j)));
                const realv m = fmax(xmax, fabs(alpha));
                s = select((realv)1, m, scaled & (maskv)(m > (realv)0));
                realv ssq = (realv)0;
                for (int i = j + 2; i < n; ++i) {
                    const realv y = SA(i, j) / s;
                    SA(i, j) = y;
                    ssq += y * y;
                }
                as = alpha / s;
                nrm = select(nrm, sqrt(as * as + ssq), scaled);
                refl = select(refl, (maskv)(xmax != (realv)0 || ssq != (realv)0), scaled);
            }
            /* beta of the scaled column: tau and v are the same as the column's, and no
             * subnormal beta loses their precision (LAPACK's dlarfg rescales for that) */
            const realv beta = select(nrm, -nrm, (maskv)(alpha >= (realv)0));
            /* no reflection where the column is already reduced (always at j = n-2) */
            tau[j] = select((realv)0, (beta - as) / beta, refl);
            scal[0] = select((realv)0, (realv)1 / (as - beta), refl);
            ev[j] = select(alpha, beta * s, refl);
            dv[j] = SA(j, j);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* v below the diagonal, kept in column j for the generation of Q */
        if (active)
            for (int i = j + 1 + t; i < n; i += NT) {
                const realv vi = i == j + 1 ? (realv)1 : SA(i, j) * scal[0];
                vv[i] = vi;
                if (i > j + 1)
                    SA(i, j) = vi;
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = j + 1 + t; i < n; i += NT) {
                realv s = (realv)0;
                for (int k = j + 1; k < n; ++k)
                    s += SA(i, k) * vv[k];
                pv[i] = tau[j] * s;
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t == 0 && active) {
            realv s = (realv)0;
            for (int i = j + 1; i < n; ++i)
                s += pv[i] * vv[i];
            scal[1] = (realv)0.5 * tau[j] * s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = j + 1 + t; i < n; i += NT) {
                const realv vi = vv[i], wi = pv[i] - scal[1] * vv[i];
                for (int k = j + 1; k < n; ++k)
                    SA(i, k) -= vi * (pv[k] - scal[1] * vv[k]) + wi * vv[k];
            }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0 && active)
        dv[n - 1] = SA(n - 1, n - 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active)
        for (int i = t; i < n; i += NT) {
            SCATTER(D, offD, i, n, dv[i] * scal[3]);
            if (i < n - 1)
                SCATTER(E, offE, i, n - 1, ev[i] * scal[3]);
        }

    /* Q = diag(1, Qs), Qs = H_0 ... H_{n-3} generated in place: reflector k sits in column k (rows
     * k+2..), implicit 1 at row k+1; Qs's column k becomes global column k+1. Always generated:
     * barriers must not sit in a branch (CPU compilers), only the store depends on the mode. */
    {
        /* columns past the last reflector: identity */
        if (active)
            for (int q = t; q < n * n; q += NT) {
                const int i = q % n, c = q / n;
                if (c >= n - 1) /* column 0 still holds reflector 0: it is set at the end */
                    sA[q] = (realv)(i == c ? 1 : 0);
            }
        for (int k = n - 3; k >= 0; --k) {
            barrier(CLK_LOCAL_MEM_FENCE);
            /* H_k applied to the columns right of it: rows k+1.. of global columns k+2.. */
            if (active)
                for (int c = k + 2 + t; c < n; c += NT) {
                    realv s = SA(k + 1, c);
                    for (int i = k + 2; i < n; ++i)
                        s += SA(i, k) * SA(i, c);
                    s *= tau[k];
                    SA(k + 1, c) -= s;
                    for (int i = k + 2; i < n; ++i)
                        SA(i, c) -= s * SA(i, k);
                }
            barrier(CLK_LOCAL_MEM_FENCE);
            /* global column k+1 = H_k e_{k+1}: 1 - tau at row k+1, -tau v below, 0 above */
            if (active)
                for (int i = t; i < n; i += NT) {
                    realv q = (realv)0;
                    if (i == k + 1)
                        q = (realv)1 - tau[k];
                    else if (i > k + 1)
                        q = -tau[k] * SA(i, k);
                    SA(i, k + 1) = q;
                }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (n >= 2 && active) /* column 0 and row 0 of diag(1, Qs), once the reflectors are used */
            for (int i = t; i < n; i += NT) {
                SA(i, 0) = (realv)(i == 0 ? 1 : 0);
                SA(0, i) = (realv)(i == 0 ? 1 : 0);
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        if ((mode & SYTRD_FORM_Q) && active)
            for (int q = t; q < n * n; q += NT)
                SCATTER(Q, offQ, q, nn, sA[q]);
    }

    /* Y = Q^T B, one right-hand side at a time through the work vector */
    const int napply = (mode & SYTRD_APPLY_B) ? nrhs : 0;
    for (int c = 0; c < napply; ++c) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = t; i < n; i += NT) {
                realv x;
                GATHER(x, B, offB, c * n + i, nb);
                vv[i] = x;
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = t; i < n; i += NT) {
                realv s = (realv)0;
                for (int r = 0; r < n; ++r)
                    s += SA(r, i) * vv[r];
                SCATTER(Y, offY, c * n + i, nb, s);
            }
    }
}

#else /* SYTRD_REG */

/* Rows in registers (GPUs): NT work-items per matrix, each holding RPT rows of the full matrix
 * in private arrays indexed by compile-time column numbers (every loop over columns is
 * unrolled to NMAX, a power of two >= n; entries past n stay zero). A step j of the reduction:
 *  - the owner of row j (= column j, A being symmetric) forms the reflector from it and
 *    publishes v (zeros up to row j, 1 at j+1), tau, d_j and e_j in local memory;
 *  - every work-item forms p_i = tau (A v)_i for its rows (v read as broadcasts) and its share
 *    of p^T v, publishing both;
 *  - every work-item adds up the NT shares and updates its rows,
 *    A <- A - v w^T - w v^T, w = p - (tau/2)(p^T v) v.
 * Two barriers a step. The reflectors stay in local memory, one column each; Q = H_0 ... H_{n-2}
 * is then formed a column per work-item without barriers. sytrd_solve (-DSYTRD_SOLVE) instead
 * applies each H_j to the right-hand sides as it goes (a work-item's rows of them in registers,
 * v^T b summed from shares published with those of p^T v), solves T z = Q^T b by PCR in local
 * memory and applies the reflectors back, x = Q z, a column of z a work-item: Householder + PCR
 * in one kernel, no Q in global memory (Abbas-Turki & Graillat 2016, Sect. 4). */

#ifndef NMAX
#define NMAX NT
#endif
#define RPT ((NMAX + NT - 1) / NT) /* rows per work-item; the host keeps NT a power of two <= NMAX,
                                     * NMAX >= 4 */
#if RPT > 8
#error "sytrd: at most 8 rows a work-item (the host keeps NT >= NMAX / 8)"
#endif

#ifdef BCL_DOUBLE
#define REAL_WORDS 2 /* 32-bit registers a real takes */
#else
#define REAL_WORDS 1
#endif
/* right-hand sides a launch of sytrd_solve (the host's -DRHS_COLS), held in registers */
#ifndef SYTRD_SOLVE
#undef RHS_COLS
#define RHS_COLS 0
#endif
/* a work-item's shares of p^T v and of v^T b (one a right-hand side), then the failure flag; a
 * multiple of 4 reals */
#define PARTS (((1 + RHS_COLS) * NT + 3) / 4 * 4 + 4)
/* global loads a work-item issues before storing them, when it stages A */
#define LOAD_BATCH 16

/* local memory of one matrix, in reals: reflector columns (stride NMAX; one more column's worth
 * at n == NMAX, where A and Q are staged with an odd stride), tau, d, e, p, the shares (and the
 * scaling's partial maxima) and a failure flag; the solve adds the PCR's right-hand sides and
 * arrays, double-buffered. src/symeig.c (sytrd_reg_local) sizes the same layout. */
#define REFL_LOCAL(n) ((((n) * ((n) == NMAX ? NMAX + 1 : NMAX)) + 3) / 4 * 4)
#define REG_LOCAL(n) (REFL_LOCAL(n) + 4 * NMAX + PARTS + (RHS_COLS > 0) * (2 * NMAX * RHS_COLS + 6 * NMAX))

#ifdef SYTRD_SOLVE
/* b <- H_j b for the right-hand sides' rows in registers (b[r][c], row r*NT+t): my share of
 * v^T b is published beside that of p^T v, and the sums come back with it after the step's second
 * barrier (no barrier of their own, no copy of b in local memory) */
#define RHS_SHARES(vi)                                                                                 \
    UNROLL                                                                                             \
    for (int c = 0; c < RHS_COLS; ++c) {                                                               \
        real sb = (real)0;                                                                             \
        UNROLL                                                                                         \
        for (int r = 0; r < RPT; ++r)                                                                  \
            sb += vi[r] * b[r][c];                                                                     \
        part[(c + 1) * NT + t] = sb;                                                                   \
    }
#define RHS_UPDATE(vi)                                                                                 \
    UNROLL                                                                                             \
    for (int c = 0; c < RHS_COLS; ++c) {                                                               \
        real vb = (real)0;                                                                             \
        for (int u = 0; u < NT; ++u)                                                                   \
            vb += part[(c + 1) * NT + u];                                                              \
        vb *= tau;                                                                                     \
        UNROLL                                                                                         \
        for (int r = 0; r < RPT; ++r)                                                                  \
            b[r][c] -= vb * vi[r];                                                                     \
    }
#else
#define RHS_SHARES(vi)
#define RHS_UPDATE(vi)
#endif

/* Steps j = RJ*NT .. RJ*NT+NT-1 of the reduction, whose pivot rows lie in row slot RJ of their
 * owners. A macro expanded once per slot rather than a loop over slots: NVIDIA's compiler does not
 * unroll a loop around barriers, and a run-time slot number (in the owner's row and in the loops
 * that start at the slot) indexes the register array at run time, which puts it in stack memory.
 * Rows and columns before RJ*NT are reduced already (v and p vanish there): loops start past them,
 * at compile-time bounds. The last step (j = n-2) reflects nothing (tau = 0, v = e_{n-1}), so its
 * A v yields the last diagonal entry. */
#define REDUCTION_STEPS(RJ)                                                                            \
    for (int j = (RJ) * NT; j < min(n - 1, (RJ) * NT + NT); ++j) {                                     \
        __local real *v = M + j * NMAX;                                                                \
        if (t == j - (RJ) * NT) { /* the owner: the reflector from its row */                          \
            /* the raw row goes to v's place first: d_j and alpha are read back by index (a            \
             * select over the row costs two instructions an entry); entries before the slot's         \
             * first column are zero in v and never read from the row */                               \
            real sq[4] = {0, 0, 0, 0};                                                                 \
            UNROLL                                                                                     \
            for (int c = (RJ) * NT / 4 * 4; c < NMAX; c += 4) {                                        \
                STORE4(v, c, a[RJ][c], a[RJ][c + 1], a[RJ][c + 2], a[RJ][c + 3]);                      \
                UNROLL                                                                                 \
                for (int e = 0; e < 4; ++e)                                                            \
                    sq[e] += c + e > j + 1 ? a[RJ][c + e] * a[RJ][c + e] : (real)0;                    \
            }                                                                                          \
            const real sigma = SUM4(sq), dj = v[j], alpha = v[j + 1];                                  \
            /* the norm and alpha of the row divided by s (1, or its largest magnitude) */             \
            real nrm = sqrt(alpha * alpha + sigma), s = (real)1, as = alpha;                           \
            bool refl = sigma != (real)0;                                                              \
            if (SCALED_PASS(j, sigma, alpha)) { /* x scaled by s (above) */                            \
                real xmax = (real)0, ssq = (real)0;                                                    \
                UNROLL                                                                                 \
                for (int c = (RJ) * NT; c < NMAX; ++c)                                                 \
                    xmax = fmax(xmax, c > j + 1 ? fabs(a[RJ][c]) : (real)0);                           \
                const real m = fmax(xmax, fabs(alpha));                                                \
                s = m > (real)0 ? m : (real)1;                                                         \
                UNROLL                                                                                 \
                for (int c = (RJ) * NT; c < NMAX; ++c) { /* the row is not read after this step */     \
                    a[RJ][c] /= s;                                                                     \
                    ssq += c > j + 1 ? a[RJ][c] * a[RJ][c] : (real)0;                                  \
                }                                                                                      \
                as = alpha / s;                                                                        \
                nrm = sqrt(as * as + ssq);                                                             \
                refl = xmax != (real)0 || ssq != (real)0;                                              \
            }                                                                                          \
            /* beta of the scaled row (tau and v the same; a subnormal beta would lose their           \
             * precision); no reflection where the column is already reduced (always at j = n-2) */    \
            const real beta = alpha >= (real)0 ? -nrm : nrm;                                           \
            const real inv = refl ? (real)1 / (as - beta) : (real)0;                                   \
            tauv[j] = refl ? (beta - as) / beta : (real)0;                                             \
            dv[j] = dj;                                                                                \
            ev[j] = refl ? beta * s : alpha;                                                           \
            /* v = (0, ..., 0, 1, row_{j+2..} / (alpha - beta)) */                                     \
            UNROLL                                                                                     \
            for (int c = 0; c < (RJ) * NT / 4 * 4; c += 4)                                             \
                STORE4(v, c, (real)0, (real)0, (real)0, (real)0);                                      \
            UNROLL                                                                                     \
            for (int c = (RJ) * NT / 4 * 4; c < NMAX; c += 4)                                          \
                STORE4(v, c, a[RJ][c] * inv, a[RJ][c + 1] * inv, a[RJ][c + 2] * inv,                   \
                       a[RJ][c + 3] * inv);                                                            \
            for (int c = (RJ) * NT / 4 * 4; c <= j; ++c)                                               \
                v[c] = (real)0;                                                                        \
            v[j + 1] = (real)1;                                                                        \
        }                                                                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
        const real tau = tauv[j];                                                                      \
        real p[RPT], pp[RPT][4];                                                                       \
        UNROLL                                                                                         \
        for (int r = 0; r < RPT; ++r)                                                                  \
            pp[r][0] = pp[r][1] = pp[r][2] = pp[r][3] = (real)0;                                       \
        UNROLL                                                                                         \
        for (int c = (RJ) * NT / 4 * 4; c < NMAX; c += 4) {                                            \
            real v4[4];                                                                                \
            LOAD4(v4, v, c);                                                                           \
            UNROLL                                                                                     \
            for (int e = 0; e < 4; ++e) {                                                              \
                UNROLL                                                                                 \
                for (int r = (RJ); r < RPT; ++r)                                                       \
                    pp[r][e] += a[r][c + e] * v4[e];                                                   \
            }                                                                                          \
        }                                                                                              \
        /* p^T v: my rows' share, published beside p (NT loads after the barrier, not 2 NMAX) */       \
        real vi[RPT], wi[RPT], share = (real)0;                                                        \
        UNROLL                                                                                         \
        for (int r = 0; r < RPT; ++r) {                                                                \
            const int i = r * NT + t;                                                                  \
            p[r] = i > j ? tau * SUM4(pp[r]) : (real)0;                                                \
            vi[r] = v[i];                                                                              \
            share += p[r] * vi[r];                                                                     \
            pv[i] = p[r];                                                                              \
            if (j == n - 2 && i == n - 1) /* v = e_{n-1} in the last step: (A v)_{n-1} = d_{n-1} */    \
                dv[n - 1] = SUM4(pp[r]);                                                               \
        }                                                                                              \
        part[t] = share;                                                                               \
        RHS_SHARES(vi)                                                                                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
        real ptv = (real)0; /* (tau/2) p^T v, summed in the same order by every work-item */           \
        for (int u = 0; u < NT; ++u)                                                                   \
            ptv += part[u];                                                                            \
        ptv *= (real)0.5 * tau;                                                                        \
        UNROLL                                                                                         \
        for (int r = 0; r < RPT; ++r)                                                                  \
            wi[r] = p[r] - ptv * vi[r];                                                                \
        UNROLL                                                                                         \
        for (int c = (RJ) * NT / 4 * 4; c < NMAX; c += 4) {                                            \
            real v4[4], p4[4];                                                                         \
            LOAD4(v4, v, c);                                                                           \
            LOAD4(p4, pv, c);                                                                          \
            UNROLL                                                                                     \
            for (int e = 0; e < 4; ++e) {                                                              \
                const real wc = p4[e] - ptv * v4[e];                                                   \
                UNROLL                                                                                 \
                for (int r = (RJ); r < RPT; ++r)                                                       \
                    a[r][c + e] -= vi[r] * wc + wi[r] * v4[e];                                         \
            }                                                                                          \
        }                                                                                              \
        RHS_UPDATE(vi)                                                                                 \
    }

#ifdef SYTRD_SOLVE
/* X = Q PCR(T, Q^T B) for columns c0 .. c0+cols-1 of B (nrhs in all); info: the first row whose
 * PCR pivot was zero or not finite (1-based), else 0; a failed problem gets X = B. */
__kernel void sytrd_solve(__global const real *A, ulong offA, __global const real *B, ulong offB,
                          __global real *X, ulong offX, __global int *info, ulong offInfo, int n,
                          int nrhs, int c0, int cols, uint count, ulong stride, __local real *lds)
#else
/* D, E and Q (mode & SYTRD_FORM_Q) of the problems in `index` (all when NULL). B, Y, nrhs: unused
 * (the host applies Q^T to right-hand sides with sytrd_solve or the SIMD kernel). */
__kernel void sytrd(__global const real *A, ulong offA, __global real *Q, ulong offQ,
                    __global real *D, ulong offD, __global real *E, ulong offE,
                    __global const real *B, ulong offB, __global real *Y, ulong offY, int n,
                    int nrhs, uint count, ulong stride, int mode, __global const uint *index,
                    __local real *lds)
#endif
{
    const int lid = (int)get_local_id(0);
    const int w = lid / NT, t = lid - w * NT;
    const int mpg = (int)get_local_size(0) / NT;
    const uint slot = (uint)get_group_id(0) * (uint)mpg + (uint)w;
    const bool active = slot < count;
#ifdef SYTRD_SOLVE
    const uint k = active ? slot : 0u;
#else
    const int cols = 0;
    const uint k = !active ? 0u : index ? index[slot] : slot;
#endif
    __local real *M = lds + (size_t)w * REG_LOCAL(n);
    __local real *tauv = M + REFL_LOCAL(n), *dv = tauv + NMAX, *ev = dv + NMAX, *pv = ev + NMAX;
    __local real *part = pv + NMAX;
    __local int *flag = (__local int *)(part + (1 + RHS_COLS) * NT);
    const uint nn = (uint)(n * n);

    /* the lower triangle, staged mirrored in the reflector area, then my rows into registers.
     * Consecutive work-items read consecutive entries (coalesced, no transposed reads), and
     * LOAD_BATCH loads are issued before their stores so that their latencies overlap; the odd
     * staging stride ld puts the mirrored stores of consecutive entries in different banks. The
     * entry of work-item t in a batch's load u is q = q0 + u NT + t, (i, c) = (q mod n, q / n). */
    const int ld = n | 1;
    if (active) {
        int si = t % n, sc = t / n; /* (i, c) of my first entry; NT may exceed n (n < 4) */
        const int step_c = NT / n, step_i = NT - step_c * n;
        for (uint q0 = 0; q0 < nn; q0 += LOAD_BATCH * NT) {
            real x[LOAD_BATCH];
            UNROLL
            for (int u = 0; u < LOAD_BATCH; ++u) {
                const uint q = q0 + (uint)(u * NT + t);
                x[u] = q < nn ? A[offA + BATCH_INDEX(k, q, nn, stride)] : (real)0;
            }
            UNROLL
            for (int u = 0; u < LOAD_BATCH; ++u) {
                if (sc < n && si >= sc) {
                    M[sc * ld + si] = x[u];
                    M[si * ld + sc] = x[u];
                }
                si += step_i;
                sc += step_c;
                if (si >= n) {
                    si -= n;
                    ++sc;
                }
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    real a[RPT][NMAX];
    real amax = (real)0;
    UNROLL
    for (int r = 0; r < RPT; ++r) {
        const int i = r * NT + t;
        UNROLL
        for (int c = 0; c < NMAX; ++c) {
            const real x = (active && i < n && c < n) ? M[c * ld + i] : (real)0;
            a[r][c] = x;
            amax = fmax(amax, fabs(x));
        }
    }
    /* matrices with norms outside [SCALE_MIN, SCALE_MAX] are reduced scaled, as LAPACK does */
    part[t] = amax;
    barrier(CLK_LOCAL_MEM_FENCE);
    real m = (real)0;
    for (int u = 0; u < NT; ++u)
        m = fmax(m, part[u]);
    const bool small = m > (real)0 && m < (real)SCALE_MIN, large = m > (real)SCALE_MAX;
    const real scale = small ? (real)SCALE_MIN / m : large ? (real)SCALE_MAX / m : (real)1;
    const real unscale = small ? m / (real)SCALE_MIN : large ? m / (real)SCALE_MAX : (real)1;
    if (scale != (real)1) {
        UNROLL
        for (int r = 0; r < RPT; ++r) {
            UNROLL
            for (int c = 0; c < NMAX; ++c)
                a[r][c] *= scale;
        }
    }
#ifdef SYTRD_SOLVE
    /* my rows of the right-hand sides in registers, zero past n and past cols (the last launch
     * may take fewer than RHS_COLS) */
    const int nb = n * nrhs;
    real b[RPT][RHS_COLS];
    UNROLL
    for (int r = 0; r < RPT; ++r) {
        const int i = r * NT + t;
        UNROLL
        for (int c = 0; c < RHS_COLS; ++c)
            b[r][c] = (active && i < n && c < cols)
                          ? B[offB + BATCH_INDEX(k, (uint)((c0 + c) * n + i), (uint)nb, stride)]
                          : (real)0;
    }
#endif

    REDUCTION_STEPS(0)
#if RPT > 1
    REDUCTION_STEPS(1)
#endif
#if RPT > 2
    REDUCTION_STEPS(2)
    REDUCTION_STEPS(3)
#endif
#if RPT > 4
    REDUCTION_STEPS(4)
    REDUCTION_STEPS(5)
    REDUCTION_STEPS(6)
    REDUCTION_STEPS(7)
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the last diagonal entry came out of the last step (above) without picking it from the
     * register array by a run-time index, which NVIDIA's compiler serves from stack memory */
    if (n == 1 && t == 0)
        dv[0] = a[0][0];
    barrier(CLK_LOCAL_MEM_FENCE);

#ifndef SYTRD_SOLVE
    if (active)
        for (int q = t; q < n; q += NT) {
            D[offD + BATCH_INDEX(k, (uint)q, (uint)n, stride)] = dv[q] * unscale;
            if (q < n - 1)
                E[offE + BATCH_INDEX(k, (uint)q, (uint)(n - 1), stride)] = ev[q] * unscale;
        }
    /* Q = H_0 H_1 ... H_{n-2}: my columns, starting from the identity's, H_{n-2} first */
    UNROLL
    for (int r = 0; r < RPT; ++r) {
        UNROLL
        for (int c = 0; c < NMAX; ++c)
            a[r][c] = c == r * NT + t ? (real)1 : (real)0;
    }
    for (int j = n - 2; j >= 0; --j) {
        __local const real *v = M + j * NMAX;
        const real tau = tauv[j];
        real dot[RPT], d4[RPT][4];
        UNROLL
        for (int r = 0; r < RPT; ++r)
            d4[r][0] = d4[r][1] = d4[r][2] = d4[r][3] = (real)0;
        UNROLL
        for (int c = 0; c < NMAX; c += 4) {
            real v4[4];
            LOAD4(v4, v, c);
            UNROLL
            for (int e = 0; e < 4; ++e) {
                UNROLL
                for (int r = 0; r < RPT; ++r)
                    d4[r][e] += v4[e] * a[r][c + e];
            }
        }
        UNROLL
        for (int r = 0; r < RPT; ++r)
            dot[r] = tau * SUM4(d4[r]);
        UNROLL
        for (int c = 0; c < NMAX; c += 4) {
            real v4[4];
            LOAD4(v4, v, c);
            UNROLL
            for (int e = 0; e < 4; ++e) {
                UNROLL
                for (int r = 0; r < RPT; ++r)
                    a[r][c + e] -= dot[r] * v4[e];
            }
        }
    }
    /* staged through local memory with the odd stride ld (conflict-free column stores), then
     * written with consecutive work-items on consecutive addresses */
    barrier(CLK_LOCAL_MEM_FENCE);
    UNROLL
    for (int r = 0; r < RPT; ++r) {
        const int col = r * NT + t;
        if (col < n) {
            UNROLL
            for (int c = 0; c < NMAX; ++c)
                if (c < n)
                    M[col * ld + c] = a[r][c];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if ((mode & SYTRD_FORM_Q) && active)
        for (int q = t; q < n * n; q += NT) {
            const int i = q % n, c = q / n;
            Q[offQ + BATCH_INDEX(k, (uint)q, nn, stride)] = M[c * ld + i];
        }
#else
    /* T z = Q^T b by PCR over NMAX equations (identity past n), a, b, c and h double-buffered */
    __local real *h = part + PARTS;
    const int hsize = NMAX * RHS_COLS;
    __local real *pa = h + 2 * hsize, *pb = pa + 2 * NMAX, *pc = pb + 2 * NMAX;
    int hb = 0; /* the buffer holding the current right-hand sides */
    UNROLL
    for (int r = 0; r < RPT; ++r) {
        const int q = r * NT + t;
        pa[q] = (q > 0 && q < n) ? ev[q - 1] * unscale : (real)0;
        pb[q] = q < n ? dv[q] * unscale : (real)1;
        pc[q] = q < n - 1 ? ev[q] * unscale : (real)0;
        UNROLL
        for (int c = 0; c < RHS_COLS; ++c)
            h[c * NMAX + q] = b[r][c];
    }
    if (t == 0)
        *flag = NO_FAILURE;
    int bad = NO_FAILURE, cb = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int span = 1; span < NMAX; span *= 2) {
        __local const real *ia = pa + cb * NMAX, *ib = pb + cb * NMAX, *ic = pc + cb * NMAX;
        __local real *oa = pa + (cb ^ 1) * NMAX, *ob = pb + (cb ^ 1) * NMAX, *oc = pc + (cb ^ 1) * NMAX;
        __local const real *ih = h + hb * hsize;
        __local real *oh = h + (hb ^ 1) * hsize;
        UNROLL
        for (int r = 0; r < RPT; ++r) {
            const int q = r * NT + t;
            real alpha, gamma, na, nb_, nc;
            const int failed = pcr_eliminate(ia, ib, ic, q, span, NMAX, &alpha, &gamma, &na, &nb_, &nc);
            if (failed >= 0)
                bad = min(bad, failed + 1);
            oa[q] = na;
            ob[q] = nb_;
            oc[q] = nc;
            for (int c = 0; c < cols; ++c) {
                real hq = ih[c * NMAX + q];
                if (alpha != (real)0)
                    hq += alpha * ih[c * NMAX + q - span];
                if (gamma != (real)0)
                    hq += gamma * ih[c * NMAX + q + span];
                oh[c * NMAX + q] = hq;
            }
        }
        cb ^= 1;
        hb ^= 1;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    UNROLL
    for (int r = 0; r < RPT; ++r) {
        const int q = r * NT + t;
        const real bq = pb[cb * NMAX + q];
        if (q < n && !PIVOT_OK(bq))
            bad = min(bad, q + 1);
        for (int c = 0; c < cols; ++c)
            h[hb * hsize + c * NMAX + q] = q < n ? h[hb * hsize + c * NMAX + q] / bq : (real)0;
    }
    if (bad != NO_FAILURE)
        atomic_min(flag, bad);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int fail = *flag;
    if (active && t == 0)
        info[offInfo + k] = fail == NO_FAILURE ? 0 : fail;
    /* x = Q z = H_0 (H_1 (... H_{n-2} z)): a column of z a work-item, held whole (below), every
     * reflector read as broadcasts: no barrier (v vanishes above row j+1, so the full-length
     * products are exact) */
    for (int c = t; c < cols; c += NT) {
        __local real *zc = h + hb * hsize + c * NMAX;
#if NMAX * REAL_WORDS <= 64 /* z in registers */
        real zr[NMAX];
        UNROLL
        for (int q = 0; q < NMAX; q += 4)
            LOAD4((zr + q), zc, q);
#define Z(q) zr[q]
#else /* a larger z would spill: updated in place in local memory, which only I touch */
#define Z(q) zc[q]
#endif
        for (int j = n - 2; j >= 0; --j) {
            __local const real *v = M + j * NMAX;
            real d4[4] = {0, 0, 0, 0};
            UNROLL
            for (int q = 0; q < NMAX; q += 4) {
                real v4[4];
                LOAD4(v4, v, q);
                UNROLL
                for (int e = 0; e < 4; ++e)
                    d4[e] += v4[e] * Z(q + e);
            }
            const real d = tauv[j] * SUM4(d4);
            UNROLL
            for (int q = 0; q < NMAX; q += 4) {
                real v4[4];
                LOAD4(v4, v, q);
                UNROLL
                for (int e = 0; e < 4; ++e)
                    Z(q + e) -= d * v4[e];
            }
        }
        if (active && fail == NO_FAILURE) {
            UNROLL
            for (int q = 0; q < NMAX; ++q)
                if (q < n)
                    X[offX + BATCH_INDEX(k, (uint)((c0 + c) * n + q), (uint)nb, stride)] = Z(q);
        }
#undef Z
    }
    if (active && fail != NO_FAILURE)
        for (int c = 0; c < cols; ++c)
            for (int q = t; q < n; q += NT) {
                const ulong at = BATCH_INDEX(k, (uint)((c0 + c) * n + q), (uint)nb, stride);
                X[offX + at] = B[offB + at];
            }
#endif
}

#endif /* SYTRD_REG */

/* X = Q Z for every right-hand side (rows shared by NT work-items). A problem whose info is set
 * gets X = B (B NULL: when X held B in place, Q Z then gives B back within rounding). */
__kernel void sytrd_apply(__global const real *Q, ulong offQ, __global real *X, ulong offX,
                          __global const real *B, ulong offB, __global const int *info,
                          ulong offInfo, int n, int nrhs, uint count, ulong stride,
                          __local real *lds)
{
    const int lid = (int)get_local_id(0);
    const int w = lid / NT, t = lid - w * NT;
    const int mpg = (int)get_local_size(0) / NT;
    const uint prob = (uint)get_group_id(0) * (uint)mpg + (uint)w;
    const bool active = prob < count;
    const uint k = active ? prob : 0u;
    __local real *z = lds + w * n;
    const uint nn = (uint)(n * n), nb = (uint)(n * nrhs);
    const bool failed = info != 0 && active && info[offInfo + k] != 0;
    for (int c = 0; c < nrhs; ++c) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = t; i < n; i += NT)
                z[i] = X[offX + BATCH_INDEX(k, (uint)(c * n + i), nb, stride)];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = t; i < n; i += NT) {
                const ulong at = BATCH_INDEX(k, (uint)(c * n + i), nb, stride);
                real s = (real)0;
                for (int r = 0; r < n; ++r)
                    s += Q[offQ + BATCH_INDEX(k, (uint)(r * n + i), nn, stride)] * z[r];
                X[offX + at] = (failed && B != 0) ? B[offB + at] : s;
            }
    }
}

/* The scaled residual max_c ||A x_c - b_c||_inf / (||A||_inf ||x_c||_inf n eps) of every problem
 * (A symmetric, its lower triangle read), in the working precision; NaN when any term is NaN.
 * NT work-items a problem, each on rows t, t + NT, ...: row i of A is A(i, j) = A[j n + i] for
 * j <= i, where consecutive rows are consecutive in memory (coalesced), and A[i n + j] past the
 * diagonal, from lines the first part brought into the cache. The maxima over rows meet in local
 * memory (2 NT reals a problem), a barrier pair a right-hand side. */
#define MAX_NAN(a, b) ((a) != (a) || (a) >= (b) ? (a) : (b)) /* NaN wins */
__kernel void residual(__global const real *A, ulong offA, __global const real *B, ulong offB,
                       __global const real *X, ulong offX, __global real *resid, ulong offR,
                       int n, int nrhs, uint count, ulong stride, __local real *lds)
{
    const int lid = (int)get_local_id(0);
    const int w = lid / NT, t = lid - w * NT;
    const uint slot = (uint)get_group_id(0) * (uint)(get_local_size(0) / NT) + (uint)w;
    const bool active = slot < count;
    const uint k = active ? slot : 0u, nn = (uint)(n * n), nb = (uint)(n * nrhs);
    const real eps = (real)(sizeof(real) == 8 ? 0x1p-53 : 0x1p-24);
    __local real *red = lds + (size_t)w * 2 * NT;
    real anorm = (real)0; /* ||A||_inf: the largest row sum, mine then the problem's */
    for (int i = t; active && i < n; i += NT) {
        real row = (real)0;
        for (int j = 0; j < n; ++j)
            row += fabs(A[offA + BATCH_INDEX(k, (uint)(j <= i ? j * n + i : i * n + j), nn, stride)]);
        anorm = MAX_NAN(anorm, row);
    }
    red[t] = anorm;
    barrier(CLK_LOCAL_MEM_FENCE);
    anorm = (real)0;
    for (int u = 0; u < NT; ++u)
        anorm = MAX_NAN(anorm, red[u]);
    real worst = (real)0;
    for (int c = 0; c < nrhs; ++c) {
        real rmax = (real)0, xmax = (real)0;
        for (int i = t; active && i < n; i += NT) {
            real r = -B[offB + BATCH_INDEX(k, (uint)(c * n + i), nb, stride)];
            for (int j = 0; j < n; ++j)
                r += A[offA + BATCH_INDEX(k, (uint)(j <= i ? j * n + i : i * n + j), nn, stride)] *
                     X[offX + BATCH_INDEX(k, (uint)(c * n + j), nb, stride)];
            rmax = MAX_NAN(rmax, fabs(r));
            xmax = MAX_NAN(xmax, fabs(X[offX + BATCH_INDEX(k, (uint)(c * n + i), nb, stride)]));
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous column's maxima are read */
        red[t] = rmax;
        red[NT + t] = xmax;
        barrier(CLK_LOCAL_MEM_FENCE);
        rmax = xmax = (real)0;
        for (int u = 0; u < NT; ++u) {
            rmax = MAX_NAN(rmax, red[u]);
            xmax = MAX_NAN(xmax, red[NT + u]);
        }
        const real scaled = rmax == (real)0 ? (real)0 : rmax / (anorm * xmax * (real)n * eps);
        worst = MAX_NAN(worst, scaled);
    }
    if (active && t == 0)
        resid[offR + k] = worst;
}
