/* The library's own GEMM (cl/gemm.cl): the tile chosen from the shape, the build from the device.
 * clBLAST has no path to NVIDIA's fp64 tensor cores (it ran 12.7 TFLOP/s at 8192^3 on the H100,
 * whose tensor cores are rated at 67); gemm.cl's tensor-core build serves the p-cyclic inversion's
 * double products there. */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the compute capability of an NVIDIA device ("sm_90", "sm_100": the whole number), else 0 */
static unsigned nvidia_cc(const bcl_context *ctx)
{
    unsigned cc = 0;
    return strstr(ctx->dev.vendor, "NVIDIA") != NULL &&
                   sscanf(ctx->dev.architecture, "sm_%u", &cc) == 1
               ? cc
               : 0;
}

int bcl_gemm_tensor_device(const bcl_context *ctx)
{
    return ctx->dev.has_fp64 && nvidia_cc(ctx) >= 80 && !ctx->gemm_no_tensor;
}

/* the product shapes gemm.cl has code for, by K (0: m8n8k4) */
static const struct {
    const char *name;
    int k;
} mma_shapes[] = {{"mma.m8n8k4", 0}, {"mma.m16n8k4", 4}, {"mma.m16n8k8", 8}, {"mma.m16n8k16", 16}};

/* sm_90 runs mma.m16n8kK at twice the rate of sm_80's mma.m8n8k4 (H100, a loop of independent
 * products: 66 against 33 TFLOP/s); the 8 x 8 product stays for sm_80-89, where the others do not
 * exist */
int bcl_gemm_mma_k(bcl_context *ctx)
{
    if (!ctx->gemm_mma_k) {
        const char *env = getenv("BATCHCL_GEMM_MMA"); /* a name without "mma." */
        const unsigned cc = nvidia_cc(ctx);
        int k = cc >= 80 && cc < 90 ? 0 : 8;
        for (size_t i = 0; env && i < sizeof mma_shapes / sizeof mma_shapes[0]; ++i)
            if (!strcmp(env, mma_shapes[i].name + 4))
                k = mma_shapes[i].k;
        ctx->gemm_mma_k = k + 1;
    }
    return ctx->gemm_mma_k - 1;
}

const char *bcl_gemm_mma_name(int k)
{
    for (size_t i = 0; i < sizeof mma_shapes / sizeof mma_shapes[0]; ++i)
        if (mma_shapes[i].k == k)
            return mma_shapes[i].name;
    return "mma (unknown shape)";
}

/* work-group tiles (warps along m x along n, 32 x 32 of C each), largest first: 64 x 64 below
 * k = 4096, else the largest that still gives every compute unit two work-groups, else the
 * largest that does so in ranges of k (plan_for) */
static const int tiles[3][2] = {{4, 2}, {2, 2}, {2, 1}};

/* the depth of gemm.cl's slices of k (GEMM_BK: on the H100 slices of 8, in one or two stages in
 * local memory, took 10-15 % longer on the large shapes) */
#define GEMM_SLICE 16

/* The launch's shape: tile and the ranges of k when the tile leaves compute units idle (at most
 * 16 ranges): on the H100 the p-cyclic step's 256^3 products made 32 work-groups,
 * whose chain of 16 slices cost about a global load's latency each (n = 256: 24.6 us a product on
 * average; 11.9 us in ranges, plus 6.0 us for the sums' launch). BATCHCL_GEMM_TILE (0-2) and
 * BATCHCL_GEMM_SPLITS (1-16) force the tile and the ranges (tests; the CPU device never splits on
 * its own). */
typedef struct {
    int tile, splits, k_split;
} gemm_plan;
/* below this k every product takes 64 x 64 tiles (plan_for) */
#define GEMM_MID_TILE_BELOW_K 4096

/* the work-groups of one range of k (tiles of all products) */
static size_t tiles_of(const gemm_plan *g, size_t m, size_t n, size_t count)
{
    const size_t bm = 32 * (size_t)tiles[g->tile][0], bn = 32 * (size_t)tiles[g->tile][1];
    return (m + bm - 1) / bm * ((n + bn - 1) / bn) * count;
}

static gemm_plan plan_for(const bcl_context *ctx, size_t m, size_t n, size_t k, size_t count)
{
    gemm_plan g = {0, 1, (int)k};
    const char *tile_env = getenv("BATCHCL_GEMM_TILE");
    const int forced = tile_env && tile_env[0] >= '0' && tile_env[0] <= '2' && !tile_env[1]
                           ? tile_env[0] - '0'
                           : -1;
    const size_t want = 2 * (size_t)ctx->dev.compute_units;
    /* each range two slices or more, and no split of a chain shorter than 8 slices (at n = 64 on
     * the H100 the second launch cost more than the 64^3 products' short chains) */
    const size_t by_k = k < 8 * GEMM_SLICE ? 1 : k / (2 * GEMM_SLICE);
    const size_t max_splits = by_k < 16 ? by_k : 16;
    /* below k = 4096, 64 x 64 tiles (and ranges of k to fill the device) whatever m and n: on
     * the H200 the p-cyclic inversion (N about 10^4, its products' k = n or 2n, the largest
     * 9216 x 2048 x 2048) took 1-4 % less time at n = 128-1024 so (n = 256 22.0 against 22.7-22.9
     * ms, Q^T 6.4 against 6.9) than with the choice below, which took 128 x 64 tiles wherever they
     * made two work-groups a compute unit (the Q^T application's N x n x n products); 64 x 32
     * everywhere lost (n = 256 25.2 ms). At 4096^3 and 8192^3 128 x 64 stays (8192^3: 33.3
     * against 29.8 TFLOP/s in 64 x 64; larger m x n at k just below 4096 was not measured) */
    const int mid_tile = forced < 0 && k < GEMM_MID_TILE_BELOW_K;
    size_t groups = 0;
    for (g.tile = forced >= 0 ? forced : mid_tile ? 1 : 0;; ++g.tile) {
        groups = tiles_of(&g, m, n, count);
        if (forced >= 0 || mid_tile || g.tile == 2 || groups >= want)
            break;
    }
    /* where even the smallest tile needs ranges of k, the largest tile that fills the device in
     * ranges (H100, n = 512: the p-cyclic factorization took 27.3-27.4 ms with its products in
     * 128 x 64 tiles in more ranges, against 27.9-28.0 in the smallest tiles in fewer) */
    for (int t = 0; forced < 0 && !mid_tile && groups < want && t < g.tile; ++t) {
        const gemm_plan larger = {t, 1, (int)k};
        const size_t larger_groups = tiles_of(&larger, m, n, count);
        if (larger_groups * max_splits >= want) {
            g.tile = t;
            groups = larger_groups;
            break;
        }
    }
    const char *split_env = getenv("BATCHCL_GEMM_SPLITS");
    size_t splits = split_env ? (size_t)atoi(split_env) : (want + groups - 1) / groups;
    if (!split_env && splits > by_k)
        splits = by_k;
    splits = splits < 1 ? 1 : splits > 16 ? 16 : splits;
    if (splits > 1) {
        /* ranges of whole slices; the last may be shorter */
        const size_t per = ((k + splits - 1) / splits + GEMM_SLICE - 1) / GEMM_SLICE * GEMM_SLICE;
        g.k_split = (int)per;
        g.splits = (int)((k + per - 1) / per);
    }
    return g;
}

size_t bcl_gemm_work_elements(const bcl_context *ctx, size_t m, size_t n, size_t k,
                              size_t count)
{
    if (m == 0 || n == 0 || k == 0 || count == 0 || k > INT_MAX)
        return 0;
    const gemm_plan g = plan_for(ctx, m, n, k, count);
    return g.splits > 1 ? (size_t)g.splits * count * m * n : 0;
}

/* gemm.cl's kernel `sums` ? gemm_sum_splits : gemm_tile for a tile, precision and build, looked
 * up once a context (the p-cyclic inversion makes thousands of products a call) */
static bcl_status gemm_kernel(bcl_context *ctx, int tile, int dbl, int tensor, int sums,
                              bcl_kernel_entry **out)
{
    bcl_kernel_entry **slot = &ctx->gemm_kernels[tile][dbl != 0][tensor != 0][sums != 0];
    if (!*slot) {
        char opt[160];
        snprintf(opt, sizeof opt,
                 "-DGEMM_WARPS_M=%d -DGEMM_WARPS_N=%d -DGEMM_BK=%d -DGEMM_MMA_K=%d%s%s",
                 tiles[tile][0], tiles[tile][1], GEMM_SLICE, bcl_gemm_mma_k(ctx),
                 dbl ? " -DBCL_DOUBLE" : "", tensor ? " -DBCL_PTX_DMMA" : "");
        bcl_kernel_entry *ke = NULL;
        const bcl_status s =
            bcl_get_kernel(ctx, "gemm.cl", opt, sums ? "gemm_sum_splits" : "gemm_tile", &ke);
        if (s == BCL_BUILD_FAILED && tensor)
            ctx->gemm_no_tensor = 1;
        if (s != BCL_SUCCESS)
            return s;
        *slot = ke;
    }
    *out = *slot;
    return BCL_SUCCESS;
}

bcl_status bcl_gemm_enqueue(bcl_context *ctx, cl_command_queue q, const char *fn, int dbl,
                            int tensor, int ta, int tb, size_t m, size_t n, size_t k, size_t count,
                            double alpha, bcl_gemm_operand A, bcl_gemm_operand B, double beta,
                            bcl_gemm_operand C, cl_mem work, size_t work_elements,
                            const bcl_gemm_more *more)
{
    if (m == 0 || n == 0 || k == 0 || count == 0)
        return BCL_SUCCESS;
    const size_t a_rows = ta ? k : m, b_rows = tb ? n : k;
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || A.ld > INT_MAX || B.ld > INT_MAX ||
        C.ld > INT_MAX || A.ld < a_rows || B.ld < b_rows || C.ld < m)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: GEMM m = %zu, n = %zu, k = %zu with leading dimensions %zu, %zu, %zu "
                        "(at least %zu, %zu, %zu, at most INT_MAX)",
                        fn, m, n, k, A.ld, B.ld, C.ld, a_rows, b_rows, m);
    const size_t m2 = more ? (more->m < m ? more->m : m) : 0, k2 = more ? more->k : 0;
    if (more && (count != 1 || k2 > INT_MAX || more->A.ld > INT_MAX || more->B.ld > INT_MAX ||
                 (k2 > 0 && (more->A.ld < (ta ? k2 : m2) || more->B.ld < (tb ? n : k2)))))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: GEMM's second product (rows %zu, k = %zu, leading dimensions %zu, "
                        "%zu) needs one product and leading dimensions of at least %zu, %zu",
                        fn, m2, k2, more->A.ld, more->B.ld, ta ? k2 : m2, tb ? n : k2);
    if (tensor && (!dbl || !bcl_gemm_tensor_device(ctx)))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: the tensor-core GEMM needs double precision on NVIDIA sm_80 or later "
                        "(device %s, %s)",
                        fn, ctx->dev.name, ctx->dev.architecture);
    gemm_plan g = plan_for(ctx, m, n, k, count);
    if (k2 > 0 && m2 > 0) /* the second product's slices follow the first's: no ranges */
        g.splits = 1, g.k_split = (int)k;
    if (g.splits > 1 && (!work || work_elements < (size_t)g.splits * count * m * n))
        g.splits = 1, g.k_split = (int)k; /* no room for the ranges' sums */
    const int wm = tiles[g.tile][0], wn = tiles[g.tile][1], threads = 32 * wm * wn;
    bcl_kernel_entry *ke = NULL;
    bcl_status s = gemm_kernel(ctx, g.tile, dbl, tensor, 0, &ke);
    if (s != BCL_SUCCESS)
        return s;
    if (ke->max_work_group < (size_t)threads)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: gemm_tile needs %d work-items per group; the device allows %zu", fn,
                        threads, ke->max_work_group);
    cl_kernel kk = ke->kernel;
    const cl_int cm = (cl_int)m, cn = (cl_int)n, ck = (cl_int)k, lda = (cl_int)A.ld,
                 ldb = (cl_int)B.ld, ldc = (cl_int)C.ld, cta = ta != 0, ctb = tb != 0;
    const cl_ulong oa = A.off, ob = B.off, oc = C.off, sa = A.stride, sb = B.stride,
                   sc = C.stride;
    const float alpha_f = (float)alpha, beta_f = (float)beta;
    const size_t real_bytes = dbl ? sizeof(double) : sizeof(float);
    cl_int err = CL_SUCCESS;
    err |= clSetKernelArg(kk, 0, sizeof cm, &cm);
    err |= clSetKernelArg(kk, 1, sizeof cn, &cn);
    err |= clSetKernelArg(kk, 2, sizeof ck, &ck);
    err |= clSetKernelArg(kk, 3, real_bytes, dbl ? (const void *)&alpha : (const void *)&alpha_f);
    err |= clSetKernelArg(kk, 4, sizeof A.buf, &A.buf);
    err |= clSetKernelArg(kk, 5, sizeof oa, &oa);
    err |= clSetKernelArg(kk, 6, sizeof lda, &lda);
    err |= clSetKernelArg(kk, 7, sizeof cta, &cta);
    err |= clSetKernelArg(kk, 8, sizeof sa, &sa);
    err |= clSetKernelArg(kk, 9, sizeof B.buf, &B.buf);
    err |= clSetKernelArg(kk, 10, sizeof ob, &ob);
    err |= clSetKernelArg(kk, 11, sizeof ldb, &ldb);
    err |= clSetKernelArg(kk, 12, sizeof ctb, &ctb);
    err |= clSetKernelArg(kk, 13, sizeof sb, &sb);
    err |= clSetKernelArg(kk, 14, real_bytes, dbl ? (const void *)&beta : (const void *)&beta_f);
    err |= clSetKernelArg(kk, 15, sizeof C.buf, &C.buf);
    err |= clSetKernelArg(kk, 16, sizeof oc, &oc);
    err |= clSetKernelArg(kk, 17, sizeof ldc, &ldc);
    err |= clSetKernelArg(kk, 18, sizeof sc, &sc);
    const cl_int csplits = g.splits, ck_split = g.k_split;
    err |= clSetKernelArg(kk, 19, sizeof csplits, &csplits);
    err |= clSetKernelArg(kk, 20, sizeof ck_split, &ck_split);
    err |= clSetKernelArg(kk, 21, sizeof(cl_mem), g.splits > 1 ? &work : &C.buf);
    const int has2 = k2 > 0 && m2 > 0;
    const cl_ulong oa2 = has2 ? more->A.off : 0, ob2 = has2 ? more->B.off : 0;
    const cl_int lda2 = has2 ? (cl_int)more->A.ld : 1, ldb2 = has2 ? (cl_int)more->B.ld : 1,
                 cm2 = has2 ? (cl_int)m2 : 0, ck2 = has2 ? (cl_int)k2 : 0;
    err |= clSetKernelArg(kk, 22, sizeof(cl_mem), has2 ? &more->A.buf : &A.buf);
    err |= clSetKernelArg(kk, 23, sizeof oa2, &oa2);
    err |= clSetKernelArg(kk, 24, sizeof lda2, &lda2);
    err |= clSetKernelArg(kk, 25, sizeof(cl_mem), has2 ? &more->B.buf : &B.buf);
    err |= clSetKernelArg(kk, 26, sizeof ob2, &ob2);
    err |= clSetKernelArg(kk, 27, sizeof ldb2, &ldb2);
    err |= clSetKernelArg(kk, 28, sizeof cm2, &cm2);
    err |= clSetKernelArg(kk, 29, sizeof ck2, &ck2);
    const size_t bm = 32 * (size_t)wm, bn = 32 * (size_t)wn;
    const size_t global[3] = {(m + bm - 1) / bm * (size_t)threads, (n + bn - 1) / bn,
                              count * (size_t)g.splits},
                 local[3] = {(size_t)threads, 1, 1};
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(q, kk, 3, NULL, global, local, 0, NULL, NULL);
    if (err == CL_SUCCESS && g.splits > 1) { /* the ranges' sums, in order, into C */
        bcl_kernel_entry *ks = NULL;
        s = gemm_kernel(ctx, g.tile, dbl, tensor, 1, &ks);
        if (s != BCL_SUCCESS)
            return s;
        cl_kernel kr = ks->kernel;
        err |= clSetKernelArg(kr, 0, sizeof cm, &cm);
        err |= clSetKernelArg(kr, 1, sizeof cn, &cn);
        err |= clSetKernelArg(kr, 2, sizeof csplits, &csplits);
        err |= clSetKernelArg(kr, 3, real_bytes, dbl ? (const void *)&alpha : (const void *)&alpha_f);
        err |= clSetKernelArg(kr, 4, sizeof work, &work);
        err |= clSetKernelArg(kr, 5, real_bytes, dbl ? (const void *)&beta : (const void *)&beta_f);
        err |= clSetKernelArg(kr, 6, sizeof C.buf, &C.buf);
        err |= clSetKernelArg(kr, 7, sizeof oc, &oc);
        err |= clSetKernelArg(kr, 8, sizeof ldc, &ldc);
        err |= clSetKernelArg(kr, 9, sizeof sc, &sc);
        const size_t sg[2] = {(m * n + 255) / 256 * 256, count}, sl[2] = {256, 1};
        if (err == CL_SUCCESS)
            err = clEnqueueNDRangeKernel(q, kr, 2, NULL, sg, sl, 0, NULL, NULL);
    }
    if (err != CL_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "%s: launching gemm_tile (m = %zu, n = %zu, k = %zu, %zu products)",
                 fn, m, n, k, count);
        return bcl_cl_fail(ctx, err, what);
    }
    return BCL_SUCCESS;
}
