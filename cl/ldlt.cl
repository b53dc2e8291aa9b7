/* Batched LDL^T factorization and solve of symmetric positive definite systems, no pivoting
 * (Abbas-Turki & Graillat 2016, Sect. 3: symmetric-small-systems-abbas-turki-graillat-2016.txt).
 *
 * Mappings (build option):
 *   -DLDLT_SIMD   one work-item per problem (the paper's SIMD version) or, with -DVW=w, w problems
 *                 per work-item held in the lanes of an OpenCL vector (CPUs). Packed triangles live
 *                 in local memory, per work-item (contiguous rows) or interleaved across the
 *                 work-group (-DSIMD_INTERLEAVED, VW = 1 only: conflict-free on GPUs). n is a run-time
 *                 argument, so one build serves every n.
 *   -DLDLT_COOP   ROWS rows per work-item, NSTAR = ceil(NMAX/ROWS) work-items per problem: ROWS = 1 is
 *                 the paper's collaborative version, ROWS >= 2 its hybrid version with n* = NSTAR.
 *                 Each work-item keeps its rows in registers and the pivot column is broadcast
 *                 through local memory, so a local-memory word read feeds ROWS fused multiply-adds
 *                 (a left-looking update from local memory needs two reads per multiply-add and
 *                 saturates the load unit long before the arithmetic units). Needs compile-time
 *                 NMAX >= n; -DNEXACT says n == NMAX.
 *
 * Storage of a factor ("row-packed"): row i of L at offset i(i+1)/2, holding L(i,0..i-1) then D(i).
 * That is L^T stored column after column, LAPACK's upper packed format, as the paper's shared
 * memory holds it. A pivot that is not > 0 (or NaN) stops the factorization of that problem only:
 * info = its 1-based index and X = B, as LAPACK leaves B.
 *
 * Kernel arguments are the same for both mappings; `mode` is a set of LDLT_* bits. */

#define LDLT_FACTOR 1 /* factor A; otherwise read the factors from LD */
#define LDLT_STORE 2  /* write the factors to LD */
#define LDLT_SOLVE 4  /* solve with B, write X */

#define ROW_START(i) (((i) * ((i) + 1)) / 2)

#if defined(LDLT_SIMD)

/* VW problems per work-item, one per lane of an OpenCL vector (VW = 1: the paper's SIMD version).
 * CPUs run the lanes in their vector units; the arithmetic never mixes lanes. */

/* Element e of work-item w's problems; with VW lanes, scalar lane v sits at VW*LDS_AT(w, e) + v. */
#ifdef SIMD_INTERLEAVED
#define LDS_AT(w, e) ((e) * mpw + (w))
#else
#define LDS_AT(w, e) ((w) * per_lds + (e))
#endif
#define LDS(w, e) ldsv[LDS_AT(w, e)]
/* scalar slot of element e of the group's problem p */
#define LDS_SCALAR(p, e) lds[LDS_AT((p) / VW, e) * VW + (p) % VW]

__kernel void ldlt_simd(__global const real *A, ulong offA, __global const real *B, ulong offB,
                        __global real *X, ulong offX, __global real *LD, ulong offLD,
                        __global int *info, ulong offInfo, int n, int nrhs, uint count,
                        ulong stride, int mode, __local realv *ldsv)
{
    /* local memory is declared with the vector type: a __local real * argument is only aligned
     * for a real, and vector accesses through it fault on NVIDIA */
    __local real *lds = (__local real *)ldsv;
    const int mpw = (int)get_local_size(0);
    const int w = (int)get_local_id(0);
    const uint first = (uint)get_group_id(0) * (uint)(mpw * VW);
    const uint nprob = min((uint)(mpw * VW), count - first);
    const int packed = n * (n + 1) / 2;
    const int per_lds = packed + n; /* triangle, then a work vector of n */
    const uint nn = (uint)(n * n);
    __local int *failed = (__local int *)(lds + (size_t)mpw * VW * per_lds); /* per problem */

#if VW == 1
    /* cooperative loads: consecutive work-items read consecutive global addresses (GPUs) */
    if (mode & LDLT_FACTOR) {
        for (uint t = (uint)w; t < nprob * nn; t += (uint)mpw) {
            uint p, e;
            SPLIT_INDEX(t, nprob, nn, p, e);
            const int col = (int)(e / (uint)n), row = (int)e - col * n;
            if (row >= col)
                LDS_SCALAR(p, ROW_START(row) + col) = A[offA + BATCH_INDEX(first + p, e, nn, stride)];
        }
    } else {
        for (uint t = (uint)w; t < nprob * (uint)packed; t += (uint)mpw) {
            uint p, e;
            SPLIT_INDEX(t, nprob, (uint)packed, p, e);
            LDS_SCALAR(p, e) = LD[offLD + BATCH_INDEX(first + p, e, packed, stride)];
        }
    }
#else
    /* each work-item reads its own problems, column by column (CPUs: no index arithmetic) */
    for (int v = 0; v < VW && (uint)(w * VW + v) < nprob; ++v) {
        const uint p = (uint)(w * VW + v);
        if (mode & LDLT_FACTOR) {
            for (int col = 0; col < n; ++col)
                for (int row = col; row < n; ++row)
                    LDS_SCALAR(p, ROW_START(row) + col) =
                        A[offA + BATCH_INDEX(first + p, (uint)(col * n + row), nn, stride)];
        } else {
            for (int e = 0; e < packed; ++e)
                LDS_SCALAR(p, e) = LD[offLD + BATCH_INDEX(first + p, (uint)e, packed, stride)];
        }
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    const bool active = (uint)(w * VW) < nprob;
    if ((mode & LDLT_FACTOR) && active) {
        maskv fail = (maskv)0;
        /* Left-looking (Crout) by rows: L(i,j) = (A(i,j) - sum_k L(i,k) W(k)) / D(j) with
         * W(k) = L(j,k) D(k) in the work vector. Dot products over contiguous rows need no
         * stores, and four rows share each load of W: 1.25 loads per multiply-add, against two
         * loads and a store in the right-looking order (CPUs run out of load/store ports). */
        for (int j = 0; j < n; ++j) {
            const int rj = ROW_START(j);
            realv d = LDS(w, rj + j);
            for (int k = 0; k < j; ++k) {
                const realv ljk = LDS(w, rj + k);
                const realv wk = ljk * LDS(w, ROW_START(k) + k);
                LDS(w, packed + k) = wk;
                d -= ljk * wk;
            }
            /* a pivot that is not > 0 (NaN included) stops its lane: its multipliers become 0 */
            const maskv bad = !isgreater(d, (realv)0) & (fail == (maskv)0);
            fail = select(fail, (maskv)(j + 1), bad);
            const realv dinv = select((realv)0, (realv)1 / d, (maskv)(fail == (maskv)0));
            LDS(w, rj + j) = d;
            int i = j + 1;
            for (; i + 3 < n; i += 4) {
                const int r0 = ROW_START(i), r1 = r0 + i + 1, r2 = r1 + i + 2, r3 = r2 + i + 3;
                realv s0 = LDS(w, r0 + j), s1 = LDS(w, r1 + j), s2 = LDS(w, r2 + j),
                      s3 = LDS(w, r3 + j);
                for (int k = 0; k < j; ++k) {
                    const realv wk = LDS(w, packed + k);
                    s0 -= LDS(w, r0 + k) * wk;
                    s1 -= LDS(w, r1 + k) * wk;
                    s2 -= LDS(w, r2 + k) * wk;
                    s3 -= LDS(w, r3 + k) * wk;
                }
                LDS(w, r0 + j) = s0 * dinv;
                LDS(w, r1 + j) = s1 * dinv;
                LDS(w, r2 + j) = s2 * dinv;
                LDS(w, r3 + j) = s3 * dinv;
            }
            for (; i < n; ++i) {
                const int ri = ROW_START(i);
                realv s = LDS(w, ri + j);
                for (int k = 0; k < j; ++k)
                    s -= LDS(w, ri + k) * LDS(w, packed + k);
                LDS(w, ri + j) = s * dinv;
            }
        }
#if VW == 1
        failed[w] = (int)fail;
#else
        mask_lanes_t lanes; /* the vector's own alignment: vstoren into an int array faulted */
        lanes.v = fail;
        for (int v = 0; v < VW; ++v)
            failed[w * VW + v] = (int)lanes.s[v];
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (mode & LDLT_FACTOR)
        for (uint p = (uint)w; p < nprob; p += (uint)mpw)
            info[offInfo + first + p] = failed[p];

    if (mode & LDLT_STORE) {
#if VW == 1
        for (uint t = (uint)w; t < nprob * (uint)packed; t += (uint)mpw) {
            uint p, e;
            SPLIT_INDEX(t, nprob, (uint)packed, p, e);
            LD[offLD + BATCH_INDEX(first + p, e, packed, stride)] = LDS_SCALAR(p, e);
        }
#else
        for (int v = 0; v < VW && (uint)(w * VW + v) < nprob; ++v)
            for (int e = 0; e < packed; ++e)
                LD[offLD + BATCH_INDEX(first + (uint)(w * VW + v), (uint)e, packed, stride)] =
                    LDS_SCALAR((uint)(w * VW + v), e);
#endif
    }

    const uint nb = (uint)(n * nrhs);
    const bool check = (mode & LDLT_FACTOR) != 0;
    const int nsolve = (mode & LDLT_SOLVE) ? nrhs : 0; /* no early return: barriers follow */
    for (int c = 0; c < nsolve; ++c) {
        barrier(CLK_LOCAL_MEM_FENCE);
#if VW == 1
        for (uint t = (uint)w; t < nprob * (uint)n; t += (uint)mpw) {
            uint p, e;
            SPLIT_INDEX(t, nprob, (uint)n, p, e);
            LDS_SCALAR(p, packed + e) =
                B[offB + BATCH_INDEX(first + p, (uint)c * (uint)n + e, nb, stride)];
        }
#else
        for (int v = 0; v < VW && (uint)(w * VW + v) < nprob; ++v)
            for (int e = 0; e < n; ++e)
                LDS_SCALAR((uint)(w * VW + v), packed + e) = B[offB + BATCH_INDEX(
                    first + (uint)(w * VW + v), (uint)(c * n + e), nb, stride)];
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active) {
            /* L z = b by rows (dot products over contiguous rows), z <- D^-1 z */
            for (int i = 0; i < n; ++i) {
                const int ri = ROW_START(i);
                realv s = LDS(w, packed + i);
                for (int k = 0; k < i; ++k)
                    s -= LDS(w, ri + k) * LDS(w, packed + k);
                LDS(w, packed + i) = s;
            }
            for (int i = 0; i < n; ++i)
                LDS(w, packed + i) /= LDS(w, ROW_START(i) + i);
            /* L^T x = z by columns of L^T, i.e. rows of L (contiguous updates) */
            for (int i = n - 1; i > 0; --i) {
                const realv xi = LDS(w, packed + i);
                const int ri = ROW_START(i);
                for (int k = 0; k < i; ++k)
                    LDS(w, packed + k) -= LDS(w, ri + k) * xi;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* a failed problem keeps its right-hand side, as LAPACK leaves B */
#if VW == 1
        for (uint t = (uint)w; t < nprob * (uint)n; t += (uint)mpw) {
            uint p, e;
            SPLIT_INDEX(t, nprob, (uint)n, p, e);
            const ulong at = BATCH_INDEX(first + p, (uint)c * (uint)n + e, nb, stride);
            X[offX + at] = (check && failed[p]) ? B[offB + at] : LDS_SCALAR(p, packed + e);
        }
#else
        for (int v = 0; v < VW && (uint)(w * VW + v) < nprob; ++v) {
            const uint p = (uint)(w * VW + v);
            const bool keep = check && failed[p];
            for (int e = 0; e < n; ++e) {
                const ulong at = BATCH_INDEX(first + p, (uint)(c * n + e), nb, stride);
                X[offX + at] = keep ? B[offB + at] : LDS_SCALAR(p, packed + e);
            }
        }
#endif
    }
}

#elif defined(LDLT_COOP)

#ifndef ROWS
#define ROWS 1
#endif
#define NSTAR ((NMAX + ROWS - 1) / ROWS)
#ifdef NEXACT
#define NN NMAX /* lets the compiler drop the size guards */
#else
#define NN n
#endif
/* Work-item t holds rows t + r*NSTAR, r < ROWS: block r of the rows lies in [r*NSTAR, BLOCK_END(r)),
 * a compile-time range once loops are unrolled, so updates outside the lower triangle vanish. */
#define BLOCK_END(r) min(NMAX, ((r) + 1) * NSTAR)
/* Local memory per problem: the pivot-column buffers (two, alternating, and one for the solve),
 * then the row-packed factor. Strides keep 16-byte alignment for vector loads and put the problems
 * sharing a warp on different banks. */
#define NMAX4 ((NMAX + 3) / 4 * 4)
#define COL_STRIDE ((3 * NMAX4 + 31) / 32 * 32 + 4)
#define TRI_STRIDE(packed) ((packed) + ((NSTAR - (packed)) % 32 + 32) % 32)

__kernel void ldlt_coop(__global const real *A, ulong offA, __global const real *B, ulong offB,
                        __global real *X, ulong offX, __global real *LD, ulong offLD,
                        __global int *info, ulong offInfo, int n, int nrhs, uint count,
                        ulong stride, int mode, __local VEC4 *lds4)
{
    /* declared as vectors: a __local real * argument is only aligned for a real, and vector
     * reads through it fault on NVIDIA */
    __local real *lds = (__local real *)lds4;
    const int lid = (int)get_local_id(0);
    const int w = lid / NSTAR;   /* problem within the work-group */
    const int t = lid - w * NSTAR; /* work-item within the problem */
    const int mpw = (int)get_local_size(0) / NSTAR;
    const uint first = (uint)get_group_id(0) * (uint)mpw;
    const uint nprob = min((uint)mpw, count - first);
    const uint prob = first + (uint)w;
    const bool active = (uint)w < nprob;
    const bool factor = (mode & LDLT_FACTOR) != 0;
    const int packed = NN * (NN + 1) / 2;
    const int tstride = TRI_STRIDE(packed);
    const uint nn = (uint)(NN * NN);
    __local real *col = lds + w * COL_STRIDE;           /* buffers 0 and 1: pivot columns */
    __local real *vec = col + 2 * NMAX4;                /* solution broadcast */
    __local real *tris = lds + mpw * COL_STRIDE;        /* the group's factors */
    __local real *tri = tris + w * tstride;             /* this problem's row-packed factor */

    /* Every barrier below sits in code all work-items run unconditionally (loops with uniform
     * trip counts at most): CPU implementations replicate the code following a barrier inside a
     * branch, which makes these kernels take minutes to compile. Work that does not apply (steps
     * past n, a mode bit not set) is masked instead. */
    int row[ROWS];
    UNROLL_TUNED
    for (int r = 0; r < ROWS; ++r)
        row[r] = t + r * NSTAR;

    real a[ROWS][NMAX];
    if (factor) {
        UNROLL_TUNED
        for (int r = 0; r < ROWS; ++r) {
            const bool live = active && row[r] < NN;
            UNROLL_TUNED
            for (int k = 0; k < BLOCK_END(r); ++k)
                a[r][k] = (live && k <= row[r])
                              ? A[offA + BATCH_INDEX(prob, (uint)(k * NN + row[r]), nn, stride)]
                              : (real)0;
        }
    } else {
        for (uint e = (uint)lid; e < nprob * (uint)packed; e += get_local_size(0)) {
            uint p, q;
            SPLIT_INDEX(e, nprob, (uint)packed, p, q);
            tris[p * (uint)tstride + q] = LD[offLD + BATCH_INDEX(first + p, q, packed, stride)];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!factor) {
        UNROLL_TUNED
        for (int r = 0; r < ROWS; ++r) {
            const bool live = active && row[r] < NN;
            UNROLL_TUNED
            for (int k = 0; k < BLOCK_END(r); ++k)
                a[r][k] = (live && k <= row[r]) ? tri[ROW_START(row[r]) + k] : (real)0;
        }
    }

    /* Right-looking elimination: step j broadcasts column j; each work-item updates its rows. */
    int fail = 0;
    UNROLL_TUNED
    for (int j = 0; j < NMAX; ++j) {
        __local real *buf = col + (j & 1) * NMAX4;
        if (factor) {
            UNROLL_TUNED
            for (int r = 0; r < ROWS; ++r)
                if (BLOCK_END(r) > j && row[r] >= j && row[r] < NN)
                    buf[row[r]] = a[r][j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (factor && j < NN) {
            const real d = buf[j];
            if (!(d > (real)0) && !fail)
                fail = j + 1;
            /* after a failure the multipliers are 0: the values stay finite and unused */
            const real dinv = fail ? (real)0 : (real)1 / d;
            real l[ROWS];
            UNROLL_TUNED
            for (int r = 0; r < ROWS; ++r)
                l[r] = (BLOCK_END(r) > j + 1 && row[r] > j && row[r] < NN) ? a[r][j] * dinv : (real)0;
#if defined(BCL_UNROLL) && !defined(LDLT_SCALAR_BCAST)
            /* one 16-byte broadcast read feeds 4 columns of every row held */
            UNROLL_TUNED
            for (int k4 = (j + 1) / 4; k4 < NMAX4 / 4; ++k4) {
                const VEC4 v = ((__local VEC4 *)buf)[k4];
                UNROLL_TUNED
                for (int r = 0; r < ROWS; ++r) {
#define LDLT_UPDATE(k, val) \
    if ((k) > j && (k) < BLOCK_END(r)) a[r][k] -= l[r] * (val);
                    LDLT_UPDATE(4 * k4, v.s0)
                    LDLT_UPDATE(4 * k4 + 1, v.s1)
                    LDLT_UPDATE(4 * k4 + 2, v.s2)
                    LDLT_UPDATE(4 * k4 + 3, v.s3)
#undef LDLT_UPDATE
                }
            }
#else
            UNROLL_TUNED
            for (int r = 0; r < ROWS; ++r) {
                UNROLL_TUNED
                for (int k = j + 1; k < BLOCK_END(r); ++k)
                    if (k < NN)
                        a[r][k] -= l[r] * buf[k];
            }
#endif
            UNROLL_TUNED
            for (int r = 0; r < ROWS; ++r)
                if (BLOCK_END(r) > j + 1 && row[r] > j && row[r] < NN)
                    a[r][j] = l[r];
        }
    }
    if (factor) {
        UNROLL_TUNED
        for (int r = 0; r < ROWS; ++r)
            if (active && row[r] < NN) {
                UNROLL_TUNED
                for (int k = 0; k < BLOCK_END(r); ++k)
                    if (k <= row[r])
                        tri[ROW_START(row[r]) + k] = a[r][k];
            }
        if (active && t == 0)
            info[offInfo + prob] = fail;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    if (mode & LDLT_STORE) {
        for (uint e = (uint)lid; e < nprob * (uint)packed; e += get_local_size(0)) {
            uint p, q;
            SPLIT_INDEX(e, nprob, (uint)packed, p, q);
            LD[offLD + BATCH_INDEX(first + p, q, packed, stride)] = tris[p * (uint)tstride + q];
        }
    }

    real dg[ROWS];
    UNROLL_TUNED
    for (int r = 0; r < ROWS; ++r)
        dg[r] = (active && row[r] < NN) ? tri[ROW_START(row[r]) + row[r]] : (real)1;

    const uint nb = (uint)(NN * nrhs);
    const int nsolve = (mode & LDLT_SOLVE) ? nrhs : 0;
    for (int c = 0; c < nsolve; ++c) {
        real y[ROWS];
        UNROLL_TUNED
        for (int r = 0; r < ROWS; ++r)
            y[r] = (active && row[r] < NN)
                       ? B[offB + BATCH_INDEX(prob, (uint)(c * NN + row[r]), nb, stride)]
                       : (real)0;
        barrier(CLK_LOCAL_MEM_FENCE); /* col and vec are free again */
        /* L z = b: step j broadcasts z_j (row j is block j / NSTAR of work-item j % NSTAR), the
         * rows below subtract L(i,j) z_j with L(i,j) in registers */
        UNROLL_TUNED
        for (int j = 0; j < NMAX; ++j) {
            if (t == j % NSTAR)
                col[j] = y[j / NSTAR];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (j < NN) {
                const real zj = col[j];
                UNROLL_TUNED
                for (int r = 0; r < ROWS; ++r)
                    if (BLOCK_END(r) > j + 1 && row[r] > j)
                        y[r] -= a[r][j] * zj;
            }
        }
        UNROLL_TUNED
        for (int r = 0; r < ROWS; ++r)
            y[r] /= dg[r];
        /* L^T x = z: step i broadcasts x_i, the rows above subtract L(i,k) x_i (row i in local) */
        UNROLL_TUNED
        for (int i = NMAX - 1; i >= 0; --i) {
            if (t == i % NSTAR)
                vec[i] = y[i / NSTAR];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (i < NN) {
                const real xi = vec[i];
                UNROLL_TUNED
                for (int r = 0; r < ROWS; ++r)
                    if (r * NSTAR < i && row[r] < i)
                        y[r] -= tri[ROW_START(i) + row[r]] * xi;
            }
        }
        UNROLL_TUNED
        for (int r = 0; r < ROWS; ++r)
            if (active && row[r] < NN) {
                const ulong at = BATCH_INDEX(prob, (uint)(c * NN + row[r]), nb, stride);
                X[offX + at] = fail ? B[offB + at] : y[r];
            }
    }
}

#else
#error "define LDLT_SIMD or LDLT_COOP"
#endif
