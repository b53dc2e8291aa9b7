/* Shared by every batchcl kernel: the host prepends this file to each algorithm's source.
 * Build options: -DBCL_DOUBLE selects double precision (float otherwise); -DBCL_INTERLEAVED selects
 * the interleaved batch layout for global arrays (element e of problem k at e*stride + k). */
#define BCL_CAT_(a, b) a##b
#define BCL_CAT(a, b) BCL_CAT_(a, b)

#ifdef BCL_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define REAL_T double
#define MASK_T long /* what comparisons of double vectors return */
#else
#define REAL_T float
#define MASK_T int
#endif
typedef REAL_T real;
#define VEC4 BCL_CAT(REAL_T, 4)

/* The norm range LAPACK's xsyevd keeps a matrix in, sqrt(safmin / eps) to its reciprocal, so that
 * squares and products of entries neither underflow nor overflow; matrices outside are scaled. */
#ifdef BCL_DOUBLE
#define SCALE_MIN 0x1p-484
#define SCALE_MAX 0x1p484
#else
#define SCALE_MIN 0x1p-51f
#define SCALE_MAX 0x1p51f
#endif



/* Before a loop over a private array: unrolled, every index is a compile-time constant and GPUs
 * keep the array in registers. UNROLL_TUNED unrolls only with -DBCL_UNROLL, the tuning choice of
 * the kernels where it is one (ldlt, tridiag): CPU compilers keep arrays in memory either way and
 * compile rolled loops much faster. -DBCL_ROLLED leaves UNROLL's loops rolled too (the host's
 * choice on CPUs for the register kernels of sytrd and of pcyclic's method 3, which PoCL 3.1
 * compiled for minutes). */
#ifdef BCL_ROLLED
#define UNROLL
#else
#define UNROLL _Pragma("unroll")
#endif
#ifdef BCL_UNROLL
#define UNROLL_TUNED _Pragma("unroll")
#else
#define UNROLL_TUNED
#endif

/* Position of element e of problem k in a global batch array whose problems hold `per` elements. */
#ifdef BCL_INTERLEAVED
#define BATCH_INDEX(k, e, per, stride) ((ulong)(e) * (ulong)(stride) + (ulong)(k))
#else
#define BATCH_INDEX(k, e, per, stride) ((ulong)(k) * (ulong)(per) + (ulong)(e))
#endif

/* Split a flat index t over the elements of `nprob` consecutive problems of `per` elements each
 * into (problem, element) so that consecutive work-items touch consecutive global addresses. */
#ifdef BCL_INTERLEAVED
#define SPLIT_INDEX(t, nprob, per, p, e) do { (p) = (t) % (nprob); (e) = (t) / (nprob); } while (0)
#else
#define SPLIT_INDEX(t, nprob, per, p, e) do { (p) = (t) / (per); (e) = (t) - (p) * (per); } while (0)
#endif

/* Arrangements of a batch (= bcl_layout): MW (problem k at k*per), EW (element e of problem k at
 * e*stride + k), RW (n-by-n arrays only: row i of problem k at (i*stride + k)*n, contiguous).
 * Elements of an n-by-n matrix are numbered column-major. Used with run-time layouts (geev). */
#define LAY_MW 0
#define LAY_EW 1
#define LAY_RW 2

/* Address of element e of matrix k in an array of `per` elements per matrix. */
ulong layout_addr(int layout, ulong k, uint e, uint per, int n, ulong stride)
{
    if (layout == LAY_EW)
        return (ulong)e * stride + k;
    if (layout == LAY_RW && per == (uint)(n * n)) {
        const uint j = e / (uint)n, i = e - j * (uint)n;
        return ((ulong)i * stride + k) * (ulong)n + j;
    }
    return k * (ulong)per + e;
}

/* Address of element (i, j) of n-by-n matrix k (no division: the copy loops' inner form). */
ulong layout_addr_ij(int layout, ulong k, uint i, uint j, int n, ulong stride)
{
    if (layout == LAY_EW)
        return ((ulong)j * (ulong)n + i) * stride + k;
    if (layout == LAY_RW)
        return ((ulong)i * stride + k) * (ulong)n + j;
    return (k * (ulong)n + j) * (ulong)n + i;
}

/* The elements of a block of nprob matrices in the address order of a layout, visited from flat
 * position `start` in steps of `step` (a work-item's share of a cooperative copy). The position
 * is kept as mixed-radix digits, so that a step costs a few additions instead of divisions.
 * Digits, fastest first: n-by-n arrays MW (i, j, p), EW (p, i, j), RW (j, p, i); others MW and
 * RW (e, p), EW (p, e). */
typedef struct {
    uint d0, d1, d2, r0, r1, s0, s1, s2;
    int order; /* 0..4 as listed */
} batch_walk;

void walk_init(batch_walk *w, int layout, uint nprob, uint per, int n, uint start, uint step)
{
    const uint un = (uint)n;
    const bool square = per == un * un;
    if (square)
        w->order = layout == LAY_EW ? 1 : layout == LAY_RW ? 2 : 0;
    else
        w->order = layout == LAY_EW ? 4 : 3;
    switch (w->order) {
    case 0: w->r0 = un; w->r1 = un; break;
    case 1: w->r0 = nprob; w->r1 = un; break;
    case 2: w->r0 = un; w->r1 = nprob; break;
    case 3: w->r0 = per; w->r1 = nprob; break;
    default: w->r0 = nprob; w->r1 = per; break;
    }
    w->d0 = start % w->r0;
    start /= w->r0;
    w->d1 = start % w->r1;
    w->d2 = start / w->r1;
    w->s0 = step % w->r0;
    step /= w->r0;
    w->s1 = step % w->r1;
    w->s2 = step / w->r1;
}

void walk_next(batch_walk *w)
{
    w->d0 += w->s0;
    uint c = w->d0 >= w->r0;
    if (c)
        w->d0 -= w->r0;
    w->d1 += w->s1 + c;
    c = w->d1 >= w->r1;
    if (c)
        w->d1 -= w->r1;
    w->d2 += w->s2 + c;
}

uint walk_p(const batch_walk *w)
{
    return w->order == 0 ? w->d2 : (w->order == 1 || w->order == 4) ? w->d0 : w->d1;
}

/* row and column (n-by-n arrays) */
uint walk_i(const batch_walk *w)
{
    return w->order == 0 ? w->d0 : w->order == 1 ? w->d1 : w->d2;
}

uint walk_j(const batch_walk *w)
{
    return w->order == 0 ? w->d1 : w->order == 1 ? w->d2 : w->d0;
}

/* element (other arrays) */
uint walk_e(const batch_walk *w)
{
    return w->order == 3 ? w->d0 : w->d1;
}

/* Vector lanes: kernels built with -DVW=w hold w problems per work-item in the lanes of an OpenCL
 * vector (CPUs); realv / maskv are then the vector and comparison-mask types. */
#ifndef VW
#define VW 1
#endif
#if VW == 1
typedef real realv;
typedef MASK_T maskv; /* select() on a scalar double takes a long mask */
#else
typedef BCL_CAT(REAL_T, VW) realv;
typedef BCL_CAT(MASK_T, VW) maskv;
#endif
typedef union { /* lanes by index, with the vector's alignment */
    realv v;
    real s[VW];
} lanes_t;
typedef union {
    maskv v;
    MASK_T s[VW];
} mask_lanes_t;

/* Four consecutive local values as one access: vload4/vstore4 need only the values' own
 * alignment (a cast to a vector pointer would need 16 or 32 bytes, which local kernel arguments
 * are not promised); SUM4 adds the four partial sums of a dot product run in four chains (the
 * chains hide the FMA latency). */
#define LOAD4(d, p, c)                                                                           \
    do {                                                                                         \
        const VEC4 q_ = vload4(0, (p) + (c));                                                    \
        d[0] = q_.s0; d[1] = q_.s1; d[2] = q_.s2; d[3] = q_.s3;                                  \
    } while (0)
#define STORE4(p, c, x0, x1, x2, x3) vstore4((VEC4)((x0), (x1), (x2), (x3)), 0, (p) + (c))
#define SUM4(x) (((x)[0] + (x)[1]) + ((x)[2] + (x)[3]))

/* usable as a divisor: nonzero and finite */
#define PIVOT_OK(x) ((x) != (real)0 && isfinite(x))
/* no failed row: the identity of atomic_min over 1-based row numbers */
#define NO_FAILURE 0x7fffffff

/* One step of parallel cyclic reduction for equation q of a system of neq equations in local
 * arrays a, b, c (a x[q-span] + b x[q] + c x[q+span] = h): its neighbours at q - span and q + span
 * are eliminated where present and coupled, giving the new coefficients *na, *nb, *nc and the
 * multipliers *alpha, *gamma that combine the right-hand sides (h + alpha h[q-span] +
 * gamma h[q+span], terms with a zero multiplier left out). A zero coupling needs no division, so
 * decoupled blocks stay decoupled even past a failed pivot. Returns the smaller neighbour whose
 * pivot was zero or not finite (an equation index), or -1. */
int pcr_eliminate(__local const real *a, __local const real *b, __local const real *c, int q,
                  int span, int neq, real *alpha, real *gamma, real *na, real *nb, real *nc)
{
    const real aq = a[q], cq = c[q];
    int failed = -1;
    *alpha = (real)0;
    *gamma = (real)0;
    *na = (real)0;
    *nb = b[q];
    *nc = (real)0;
    if (q >= span && aq != (real)0) {
        const real bl = b[q - span];
        if (!PIVOT_OK(bl))
            failed = q - span;
        *alpha = -aq / bl;
        *na = *alpha * a[q - span];
        *nb += *alpha * c[q - span];
    }
    if (q + span < neq && cq != (real)0) {
        const real br = b[q + span];
        if (!PIVOT_OK(br) && failed < 0)
            failed = q + span;
        *gamma = -cq / br;
        *nc = *gamma * c[q + span];
        *nb += *gamma * a[q + span];
    }
    return failed;
}
