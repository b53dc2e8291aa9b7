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
