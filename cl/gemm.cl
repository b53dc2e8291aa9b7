/* C := alpha op(A) op(B) + beta C, column-major, for the p-cyclic inversion's products on devices
 * where clBLAST has no path to the hardware's matrix units (NVIDIA's fp64 tensor cores).
 *
 * One work-group computes a GEMM_BM x GEMM_BN tile of C: GEMM_WARPS_M x GEMM_WARPS_N groups of 32
 * work-items ("warps"), each a 32 x 32 sub-tile, as 4 x 4 tiles of 8 x 8 (the shape of one
 * mma.m8n8k4). op(A) and op(B) pass through local memory in slices of GEMM_BK along k, stored
 * k-major (a slice row holds consecutive m, or n), the next slice's global reads issued before the
 * current one is used. Work-item (g, t) = (lane / 4, lane % 4) of a warp holds C(g, 2t) and
 * C(g, 2t + 1) of each 8 x 8 tile, the fragment layout of mma.m8n8k4.row.col.f64.
 *
 * Build options: -DBCL_PTX_DMMA (NVIDIA sm_80 or later, double only): the 8 x 8 x 4 products on the
 * tensor cores through inline PTX, the lanes exchanging nothing else; without it each work-item
 * forms its two entries from local memory with fmas (any device; the same tiling, loads, edges
 * and stores, so the CPU tests check everything but the instruction itself).
 * -DGEMM_WARPS_M, -DGEMM_WARPS_N: the tile, 32 x 32 per warp; -DGEMM_BK: the slices' depth. Any
 * m, n, k >= 1: the slices past the matrices' edges read zeros and the stores are guarded; beta = 0
 * never reads C.
 * Batches of one shape with constant strides between the products' offsets run as dimension 2 of
 * the range. Products with too few tiles for the device split k into `splits` ranges of k_split
 * (group id 2 = product * splits + range): each range's work-groups write their raw sums into
 * `partial`, and gemm_sum_splits adds the ranges in order (deterministic) into C. (The last
 * work-group of a tile to finish adding them itself, counted by an atomic, was slower on the
 * H100: its one group's serial tail of uncached reads cost more than the second launch.) */

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

#if defined(BCL_PTX_DMMA) && defined(BCL_DOUBLE)
/* d += a b over one 8 x 8 x 4 product of the warp (each lane one entry of a and b, two of d) */
#define GEMM_MMA(d0, d1, a, b)                                                                 \
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};" \
                 : "+d"(d0), "+d"(d1)                                                          \
                 : "d"(a), "d"(b))
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
          const ulong strideC, const int splits, const int k_split, __global real *partial)
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

    real acc[4][4][2];
    GEMM_UNROLL
    for (int i = 0; i < 4; ++i)
        GEMM_UNROLL
        for (int j = 0; j < 4; ++j)
            acc[i][j][0] = acc[i][j][1] = 0;

    /* op(A)(r, c) is A(r, c) or A(c, r): stored rows are op(A)'s rows (m) or its columns (k) */
    real ra[GEMM_A_PER], rb[GEMM_B_PER];
    /* slice s of op(A): m0.. x s*BK.., element (i, q) at As[q * LDA + i] */
#define LOAD_A(s)                                                                              \
    do {                                                                                       \
        if (trans_a) /* A is k x m: read along k */                                            \
            GEMM_LOAD(ra, GEMM_A_PER, A, lda, GEMM_BK, (s) * GEMM_BK, m0, k, m);              \
        else                                                                                   \
            GEMM_LOAD(ra, GEMM_A_PER, A, lda, GEMM_BM, m0, (s) * GEMM_BK, m, k);              \
    } while (0)
#define LOAD_B(s)                                                                              \
    do {                                                                                       \
        if (trans_b) /* B is n x k: read along n */                                            \
            GEMM_LOAD(rb, GEMM_B_PER, B, ldb, GEMM_BN, n0, (s) * GEMM_BK, n, k);              \
        else                                                                                   \
            GEMM_LOAD(rb, GEMM_B_PER, B, ldb, GEMM_BK, (s) * GEMM_BK, n0, k, n);              \
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

    const int slices = (k + GEMM_BK - 1) / GEMM_BK;
    LOAD_A(0);
    LOAD_B(0);
    STORE_AB();
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 0; s < slices; ++s) {
        if (s + 1 < slices) { /* uniform: no barrier inside */
            LOAD_A(s + 1);
            LOAD_B(s + 1);
        }
        __local const real *Aw = As + wm * 32 + g, *Bw = Bs + wn * 32;
        GEMM_UNROLL
        for (int kk = 0; kk < GEMM_BK; kk += 4) {
#ifdef GEMM_MMA
            real af[4], bf[4];
            GEMM_UNROLL
            for (int i = 0; i < 4; ++i)
                af[i] = Aw[(kk + t) * GEMM_LDA + i * 8];
            GEMM_UNROLL
            for (int j = 0; j < 4; ++j)
                bf[j] = Bw[(kk + t) * GEMM_LDB + j * 8 + g];
            GEMM_UNROLL
            for (int i = 0; i < 4; ++i)
                GEMM_UNROLL
                for (int j = 0; j < 4; ++j)
                    GEMM_MMA(acc[i][j][0], acc[i][j][1], af[i], bf[j]);
#else
            GEMM_UNROLL
            for (int q = 0; q < 4; ++q) {
                real af[4], bf[4][2];
                GEMM_UNROLL
                for (int i = 0; i < 4; ++i)
                    af[i] = Aw[(kk + q) * GEMM_LDA + i * 8];
                GEMM_UNROLL
                for (int j = 0; j < 4; ++j) {
                    bf[j][0] = Bw[(kk + q) * GEMM_LDB + j * 8 + 2 * t];
                    bf[j][1] = Bw[(kk + q) * GEMM_LDB + j * 8 + 2 * t + 1];
                }
                GEMM_UNROLL
                for (int i = 0; i < 4; ++i)
                    GEMM_UNROLL
                    for (int j = 0; j < 4; ++j) {
                        acc[i][j][0] = fma(af[i], bf[j][0], acc[i][j][0]);
                        acc[i][j][1] = fma(af[i], bf[j][1], acc[i][j][1]);
                    }
            }
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* every warp is done with the slice */
        if (s + 1 < slices)
            STORE_AB();
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    GEMM_UNROLL
    for (int i = 0; i < 4; ++i) {
        const int r = m0 + wm * 32 + i * 8 + g;
        GEMM_UNROLL
        for (int j = 0; j < 4; ++j)
            GEMM_UNROLL
            for (int h = 0; h < 2; ++h) {
                const int c = n0 + wn * 32 + j * 8 + 2 * t + h;
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
