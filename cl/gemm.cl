/* C := alpha op(A) op(B) + beta C, column-major, for the p-cyclic inversion's products on devices
 * where clBLAST has no path to the hardware's matrix units (NVIDIA's fp64 tensor cores).
 *
 * One work-group computes a GEMM_BM x GEMM_BN tile of C: GEMM_WARPS_M x GEMM_WARPS_N groups of 32
 * work-items ("warps"), each a 32 x 32 sub-tile, as tiles of the shape of one tensor-core product:
 * GEMM_MMA_K = 4, 8 or 16 takes mma.m16n8kK (2 x 4 tiles of 16 x 8, four entries of C a
 * work-item: rows g and g + 8, columns 2t and 2t + 1, for lane = 4g + t), GEMM_MMA_K = 0 the older
 * mma.m8n8k4 (4 x 4 tiles of 8 x 8, two entries: row g, columns 2t and 2t + 1). op(A) and op(B)
 * pass through local memory in slices of GEMM_BK along k, stored k-major (a slice row holds
 * consecutive m, or n), the next slice's global reads issued before the current one is used.
 *
 * Build options: -DBCL_PTX_DMMA (NVIDIA, double only): the products on the tensor cores through
 * inline PTX, the lanes exchanging nothing else (m8n8k4 needs sm_80, m16n8kK sm_90, where the
 * H100 runs it at twice the rate: 66 against 33 TFLOP/s in a loop of independent products);
 * without it each work-item forms its entries from local memory with fmas (any device; the same
 * tiling, fragment layout, loads, edges and stores, so the CPU tests check everything but the
 * instruction itself). -DGEMM_WARPS_M, -DGEMM_WARPS_N: the tile, 32 x 32 per warp; -DGEMM_BK: the
 * slices' depth (a multiple of 16). Any m, n, k >= 1: the slices past the matrices' edges read
 * zeros and the stores are guarded; beta = 0 never reads C.
 * Batches of one shape with constant strides between the products' offsets run as dimension 2 of
 * the range. Products with too few tiles for the device split k into `splits` ranges of k_split
 * (group id 2 = product * splits + range): each range's work-groups write their raw sums into
 * `partial`, and gemm_sum_splits adds the ranges in order (deterministic) into C. (The last
 * work-group of a tile to finish adding them itself, counted by an atomic, was slower on the
 * H100: its one group's serial tail of uncached reads cost more than the second launch.)
 * A second pair adds alpha op(A2) op(B2) (depth k2, the same transposes) to C's first m2 rows in
 * the same launch (k2 = 0: none; only for one product with k in one range): the slices of the
 * tiles holding any of those rows run on from the first pair's into the second's. */

#ifndef GEMM_WARPS_M
#define GEMM_WARPS_M 4
#endif
#ifndef GEMM_WARPS_N
#define GEMM_WARPS_N 2
#endif
#define GEMM_BM (32 * GEMM_WARPS_M)
#define GEMM_BN (32 * GEMM_WARPS_N)
#ifndef GEMM_BK
#define GEMM_BK 16
#endif
#define GEMM_THREADS (32 * GEMM_WARPS_M * GEMM_WARPS_N)
/* a slice row's stride in local memory, 4 doubles past a multiple of 16: the fragment reads of a
 * warp (rows t = 0..3, columns g = 0..7) fall on distinct 8-byte banks in each half */
#define GEMM_LDA (GEMM_BM + 4)
#define GEMM_LDB (GEMM_BN + 4)
/* global values a work-item carries from one slice to the next */
#define GEMM_A_PER (GEMM_BM * GEMM_BK / GEMM_THREADS)
#define GEMM_B_PER (GEMM_BN * GEMM_BK / GEMM_THREADS)

/* the tensor-core build unrolls everything (its accumulators must stay in registers); CPU
 * compilers keep the arrays in memory either way and compile rolled loops many times faster */
#ifdef BCL_PTX_DMMA
#define GEMM_UNROLL UNROLL
#else
#define GEMM_UNROLL
#endif

#ifndef GEMM_MMA_K
#define GEMM_MMA_K 8
#endif
#if GEMM_MMA_K != 0 && GEMM_MMA_K != 4 && GEMM_MMA_K != 8 && GEMM_MMA_K != 16
#error "GEMM_MMA_K: 0 (mma.m8n8k4) or 4, 8, 16 (mma.m16n8kK)"
#endif
#if GEMM_MMA_K == 0 /* m8n8k4: 4 x 4 tiles of 8 x 8 a warp */
#define GEMM_TM 8
#define GEMM_KSTEP 4
#else /* m16n8kK: 2 x 4 tiles of 16 x 8 */
#define GEMM_TM 16
#define GEMM_KSTEP GEMM_MMA_K
#endif
#if GEMM_BK % GEMM_KSTEP != 0
#error "GEMM_BK: a multiple of the product's depth"
#endif
#define GEMM_MT (32 / GEMM_TM)          /* tiles of a warp along m */
#define GEMM_PER (GEMM_TM * 8 / 32)     /* entries of C a work-item holds in one tile */
#define GEMM_AV (GEMM_TM * GEMM_KSTEP / 32) /* entries of op(A) a work-item holds in one tile */
#define GEMM_BV (GEMM_KSTEP / 4)        /* ... and of op(B) */
/* where a work-item's entries lie in a tile (lane = 4 g + t): C's entry h, A's v and B's v */
#define ACC_ROW(h) (g + 8 * ((h) / 2))
#define ACC_COL(h) (2 * t + (h) % 2)
#define A_ROW(v) (g + 8 * ((v) % 2))
#define A_K(v) (GEMM_TM == 8 ? t : t + 4 * ((v) / 2))
#define B_K(v) (t + 4 * (v))

#if defined(BCL_PTX_DMMA) && defined(BCL_DOUBLE)
/* d += a b over one tile of the warp */
#if GEMM_MMA_K == 0
#define GEMM_MMA(d, a, b)                                                                      \
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};" \
                 : "+d"(d[0]), "+d"(d[1])                                                      \
                 : "d"(a[0]), "d"(b[0]))
#elif GEMM_MMA_K == 4
#define GEMM_MMA(d, a, b)                                                                      \
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, "  \
                 "{%6}, {%0,%1,%2,%3};"                                                        \
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])                              \
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]))
#elif GEMM_MMA_K == 8
#define GEMM_MMA(d, a, b)                                                                      \
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "           \
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                                      \
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])                              \
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]))
#else
#define GEMM_MMA(d, a, b)                                                                      \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "          \
                 "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"              \
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])                              \
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]),           \
                   "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]))
#endif
#endif

/* one slice of op(X) into registers: the block of X (as stored) of R rows from (r0, c0), element
 * e of the work-item's share at the flat index tid + e * GEMM_THREADS, rows first, so that
 * consecutive work-items read consecutive addresses (along X's leading dimension) */
#define GEMM_LOAD(reg, PER, X, ld, R, r0, c0, rlim, clim)                                      \
    do {                                                                                       \
        GEMM_UNROLL                                                                            \
        for (int e_ = 0; e_ < PER; ++e_) {                                                     \
            const int f_ = tid + e_ * GEMM_THREADS;                                            \
            const int gr_ = (r0) + f_ % (R), gc_ = (c0) + f_ / (R);                            \
            reg[e_] = gr_ < (rlim) && gc_ < (clim) ? X[(ulong)gc_ * (ulong)(ld) + (ulong)gr_] : 0; \
        }                                                                                      \
    } while (0)

__kernel __attribute__((reqd_work_group_size(GEMM_THREADS, 1, 1))) void
gemm_tile(const int m, const int n, const int k_total, const real alpha, __global const real *A,
          const ulong offA, const int lda, const int trans_a, const ulong strideA,
          __global const real *B, const ulong offB, const int ldb, const int trans_b,
          const ulong strideB, const real beta, __global real *C, const ulong offC, const int ldc,
          const ulong strideC, const int splits, const int k_split, __global real *partial,
          __global const real *A2, const ulong offA2, const int lda2, __global const real *B2,
          const ulong offB2, const int ldb2, const int m2, const int k2)
{
    __local real As[GEMM_BK * GEMM_LDA];
    __local real Bs[GEMM_BK * GEMM_LDB];
    const int tid = (int)get_local_id(0);
    const int lane = tid % 32, warp = tid / 32;
    const int g = lane / 4, t = lane % 4;
    const int wm = warp % GEMM_WARPS_M, wn = warp / GEMM_WARPS_M;
    const int m0 = (int)get_group_id(0) * GEMM_BM, n0 = (int)get_group_id(1) * GEMM_BN;
    const ulong prod = get_group_id(2) / splits;
    const int range = (int)(get_group_id(2) % splits), k0 = range * k_split;
    const int k = min(k_split, k_total - k0); /* this range of k */
    A += offA + prod * strideA + (trans_a ? (ulong)k0 : (ulong)k0 * (ulong)lda);
    B += offB + prod * strideB + (trans_b ? (ulong)k0 * (ulong)ldb : (ulong)k0);
    C += offC + prod * strideC;
    partial += get_group_id(2) * (ulong)m * (ulong)n; /* this product's range's sums */
    /* the operands of the slices being loaded: (A, B) first, then (A2, B2) where the tile holds
     * any of C's first m2 rows (one product, k in one range) */
    int lda_c = lda, ldb_c = ldb, k_c = k, m_c = m, s_base = 0;
    const int slices1 = (k + GEMM_BK - 1) / GEMM_BK;
    const int slices2 = k2 > 0 && splits == 1 && m0 < m2 ? (k2 + GEMM_BK - 1) / GEMM_BK : 0;

    real acc[GEMM_MT][4][GEMM_PER];
    GEMM_UNROLL
    for (int i = 0; i < GEMM_MT; ++i)
        GEMM_UNROLL
        for (int j = 0; j < 4; ++j)
            GEMM_UNROLL
            for (int h = 0; h < GEMM_PER; ++h)
                acc[i][j][h] = 0;

    /* op(A)(r, c) is A(r, c) or A(c, r): stored rows are op(A)'s rows (m) or its columns (k) */
    real ra[GEMM_A_PER], rb[GEMM_B_PER];
    /* slice s of op(A): m0.. x s*BK.., element (i, q) at As[q * LDA + i] */
#define LOAD_A(s)                                                                              \
    do {                                                                                       \
        if (trans_a) /* A is k x m: read along k */                                            \
            GEMM_LOAD(ra, GEMM_A_PER, A, lda_c, GEMM_BK, ((s) - s_base) * GEMM_BK, m0, k_c, m_c); \
        else                                                                                   \
            GEMM_LOAD(ra, GEMM_A_PER, A, lda_c, GEMM_BM, m0, ((s) - s_base) * GEMM_BK, m_c, k_c); \
    } while (0)
#define LOAD_B(s)                                                                              \
    do {                                                                                       \
        if (trans_b) /* B is n x k: read along n */                                            \
            GEMM_LOAD(rb, GEMM_B_PER, B, ldb_c, GEMM_BN, n0, ((s) - s_base) * GEMM_BK, n, k_c); \
        else                                                                                   \
            GEMM_LOAD(rb, GEMM_B_PER, B, ldb_c, GEMM_BK, ((s) - s_base) * GEMM_BK, n0, k_c, n); \
    } while (0)
    /* the registers into local memory, k-major, with the same index split as the loads */
#define STORE_AB()                                                                             \
    do {                                                                                       \
        GEMM_UNROLL                                                                            \
        for (int e_ = 0; e_ < GEMM_A_PER; ++e_) {                                              \
            const int f_ = tid + e_ * GEMM_THREADS;                                            \
            const int i_ = trans_a ? f_ / GEMM_BK : f_ % GEMM_BM;                              \
            const int q_ = trans_a ? f_ % GEMM_BK : f_ / GEMM_BM;                              \
            As[q_ * GEMM_LDA + i_] = ra[e_];                                                   \
        }                                                                                      \
        GEMM_UNROLL                                                                            \
        for (int e_ = 0; e_ < GEMM_B_PER; ++e_) {                                              \
            const int f_ = tid + e_ * GEMM_THREADS;                                            \
            const int j_ = trans_b ? f_ % GEMM_BN : f_ / GEMM_BK;                              \
            const int q_ = trans_b ? f_ / GEMM_BN : f_ % GEMM_BK;                              \
            Bs[q_ * GEMM_LDB + j_] = rb[e_];                                                   \
        }                                                                                      \
    } while (0)

    const int slices = slices1 + slices2;
    LOAD_A(0);
    LOAD_B(0);
    STORE_AB();
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 0; s < slices; ++s) {
        if (s + 1 < slices) { /* uniform: no barrier inside */
            if (s + 1 == slices1) { /* the second pair from here on */
                A = A2 + offA2;
                B = B2 + offB2;
                lda_c = lda2;
                ldb_c = ldb2;
                k_c = k2;
                m_c = min(m, m2);
                s_base = slices1;
            }
            LOAD_A(s + 1);
            LOAD_B(s + 1);
        }
        __local const real *Aw = As + wm * 32, *Bw = Bs + wn * 32;
        GEMM_UNROLL
        for (int kk = 0; kk < GEMM_BK; kk += GEMM_KSTEP) {
#ifdef GEMM_MMA
            /* the fragments: A's at rows g (+ 8) and k = t (+ 4), B's at k = t (+ 4 ...) and
             * column g (the slices' padding keeps a half-warp's reads on distinct banks) */
            real af[GEMM_MT][GEMM_AV], bf[4][GEMM_BV];
            GEMM_UNROLL
            for (int i = 0; i < GEMM_MT; ++i)
                GEMM_UNROLL
                for (int v = 0; v < GEMM_AV; ++v)
                    af[i][v] = Aw[(kk + A_K(v)) * GEMM_LDA + i * GEMM_TM + A_ROW(v)];
            GEMM_UNROLL
            for (int j = 0; j < 4; ++j)
                GEMM_UNROLL
                for (int v = 0; v < GEMM_BV; ++v)
                    bf[j][v] = Bw[(kk + B_K(v)) * GEMM_LDB + j * 8 + g];
            GEMM_UNROLL
            for (int i = 0; i < GEMM_MT; ++i)
                GEMM_UNROLL
                for (int j = 0; j < 4; ++j)
                    GEMM_MMA(acc[i][j], af[i], bf[j]);
#else
            /* the same entries by fmas, k in order */
            GEMM_UNROLL
            for (int q = 0; q < GEMM_KSTEP; ++q)
                GEMM_UNROLL
                for (int i = 0; i < GEMM_MT; ++i)
                    GEMM_UNROLL
                    for (int j = 0; j < 4; ++j)
                        GEMM_UNROLL
                        for (int h = 0; h < GEMM_PER; ++h)
                            acc[i][j][h] =
                                fma(Aw[(kk + q) * GEMM_LDA + i * GEMM_TM + ACC_ROW(h)],
                                    Bw[(kk + q) * GEMM_LDB + j * 8 + ACC_COL(h)], acc[i][j][h]);
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* every warp is done with the slice */
        if (s + 1 < slices)
            STORE_AB();
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    GEMM_UNROLL
    for (int i = 0; i < GEMM_MT; ++i)
        GEMM_UNROLL
        for (int j = 0; j < 4; ++j)
            GEMM_UNROLL
            for (int h = 0; h < GEMM_PER; ++h) {
                const int r = m0 + wm * 32 + i * GEMM_TM + ACC_ROW(h);
                const int c = n0 + wn * 32 + j * 8 + ACC_COL(h);
                if (r < m && c < n) {
                    if (splits > 1) {
                        partial[(ulong)c * (ulong)m + (ulong)r] = acc[i][j][h];
                    } else {
                        __global real *cp = C + (ulong)c * (ulong)ldc + (ulong)r;
                        const real v = alpha * acc[i][j][h];
                        *cp = beta == 0 ? v : fma(beta, *cp, v);
                    }
                }
            }
}

/* C := alpha (the ranges' sums, added in order) + beta C: one work-item an entry, group id 1 =
 * product; the ranges' m x n sums lie one after another for each product */
__kernel void gemm_sum_splits(const int m, const int n, const int splits, const real alpha,
                              __global const real *partial, const real beta, __global real *C,
                              const ulong offC, const int ldc, const ulong strideC)
{
    const ulong e = get_global_id(0), mn = (ulong)m * (ulong)n, prod = get_global_id(1);
    if (e >= mn)
        return;
    partial += prod * (ulong)splits * mn + e;
    real sum = 0;
    for (int s = 0; s < splits; ++s)
        sum += partial[(ulong)s * mn];
    __global real *cp = C + offC + prod * strideC + (e / m) * (ulong)ldc + e % m;
    const real v = alpha * sum;
    *cp = beta == 0 ? v : fma(beta, *cp, v);
}
