/* Rearrangement of a batch between the arrangements of the papers (Tokura et al. 2017, Sect. 5:
 * bulk-nonsymmetric-eigenvalues-tokura-2017.txt): MW (matrix k at k*per, = BCL_LAYOUT_CONTIGUOUS),
 * EW (element e of matrix k at e*stride + k, = BCL_LAYOUT_INTERLEAVED) and RW (n-by-n arrays: row i
 * of matrix k at (i*stride + k)*n, its elements contiguous, = BCL_LAYOUT_ROWWISE). Elements of an
 * n-by-n matrix are numbered column-major. As the paper's transposition through shared memory:
 * a work-group moves `kpg` whole matrices, reading them in the source's address order into local
 * memory and writing them in the destination's, so both sides are coalesced. */

__kernel void batch_relayout(__global const real *src, ulong offS, int layS, ulong strideS,
                             __global real *dst, ulong offD, int layD, ulong strideD, uint per,
                             int n, uint count, uint kpg, __local real *tile)
{
    const uint lid = (uint)get_local_id(0), lsz = (uint)get_local_size(0);
    if (kpg == 0) { /* a matrix larger than local memory: element by element, one matrix per group */
        const uint k = (uint)get_group_id(0);
        const bool square = per == (uint)(n * n);
        for (uint e = lid; k < count && e < per; e += lsz) {
            const uint i = e % (uint)n, j = e / (uint)n;
            dst[offD + (square ? layout_addr_ij(layD, k, i, j, n, strideD) : layout_addr(layD, k, e, per, n, strideD))] =
                src[offS + (square ? layout_addr_ij(layS, k, i, j, n, strideS) : layout_addr(layS, k, e, per, n, strideS))];
        }
        return; /* the whole group: kpg is uniform, and no barrier is skipped by part of it */
    }
    const uint first = (uint)get_group_id(0) * kpg;
    const uint nprob = min(kpg, count - first);
    const bool square = per == (uint)(n * n);
    batch_walk w;
    walk_init(&w, layS, nprob, per, n, lid, lsz);
    for (uint f = lid; f < nprob * per; f += lsz, walk_next(&w)) {
        const uint p = walk_p(&w), i = walk_i(&w), j = walk_j(&w);
        const uint e = square ? j * (uint)n + i : walk_e(&w);
        tile[p * per + e] = src[offS + (square ? layout_addr_ij(layS, first + p, i, j, n, strideS)
                                               : layout_addr(layS, first + p, e, per, n, strideS))];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    walk_init(&w, layD, nprob, per, n, lid, lsz);
    for (uint f = lid; f < nprob * per; f += lsz, walk_next(&w)) {
        const uint p = walk_p(&w), i = walk_i(&w), j = walk_j(&w);
        const uint e = square ? j * (uint)n + i : walk_e(&w);
        dst[offD + (square ? layout_addr_ij(layD, first + p, i, j, n, strideD)
                           : layout_addr(layD, first + p, e, per, n, strideD))] = tile[p * per + e];
    }
}
