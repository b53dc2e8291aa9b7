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

/* The f-th element, in address order, of the block of nprob consecutive matrices: its matrix p
 * within the block and its element e. */
void layout_split(uint f, int layout, uint nprob, uint per, int n, uint *p, uint *e)
{
    if (layout == LAY_EW) {
        *p = f % nprob;
        *e = f / nprob;
    } else if (layout == LAY_RW && per == (uint)(n * n)) {
        const uint j = f % (uint)n, rest = f / (uint)n;
        *p = rest % nprob;
        *e = j * (uint)n + rest / nprob;
    } else {
        *p = f / per;
        *e = f - *p * per;
    }
}
