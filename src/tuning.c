/* Parameter table: which variant runs for a routine, precision and size on this device.
 * For now a built-in heuristic per device type (the autotuner's database plugs in here); forced
 * parameters (bcl_set_params) override it field by field. */
#include "internal.h"

#include <string.h>

static void ldlt_heuristic(const bcl_device_info *dev, int dbl, int n, bcl_params *p)
{
    if (!dev->is_gpu) {
        /* CPUs: one problem per work-item, contiguous rows vectorize; size buckets keep the
         * number of compiled work-group functions small. */
        p->mapping = BCL_MAPPING_SIMD;
        p->simd_interleaved = -1;
        cl_uint width = dbl ? dev->vector_width_double : dev->vector_width_float;
        p->problems_per_work_item = width >= 16 ? 16 : width >= 8 ? 8 : width >= 4 ? 4 : width >= 2 ? 2 : 1;
        p->problems_per_group = 32;
        p->specialize = -1;
        p->unroll = -1;
        return;
    }
    /* GPUs, measured on an H100 (README): two rows per work-item (n* = n/2) win from n = 5 in
     * single precision up to 64, unlike the paper's n* = n beyond 40 on its GPU; in double the
     * registers of two rows run out past n = 32. Two problems per group once a problem fills a
     * warp, 128 work-items per group below. */
    p->specialize = 1;
    p->unroll = 1;
    p->simd_interleaved = 1;
    p->problems_per_work_item = 1;
    const int hybrid = dbl ? (n >= 8 && n <= 32) : (n >= 5 && n <= 64);
    const int nstar = hybrid ? (n + 1) / 2 : n;
    p->mapping = hybrid ? BCL_MAPPING_HYBRID : BCL_MAPPING_COLLABORATIVE;
    p->work_items_per_problem = hybrid ? nstar : 0;
    p->problems_per_group = nstar >= 32 ? 2 : 128 / nstar;
}

/* Tridiagonal systems: Thomas in vector lanes on CPUs; on GPUs chunks of rows per work-item, so
 * that one system fits one work-group up to thousands of rows and the PCR part stays short. */
static void tridiag_heuristic(const bcl_device_info *dev, int dbl, int m, bcl_params *p)
{
    if (!dev->is_gpu) {
        cl_uint width = dbl ? dev->vector_width_double : dev->vector_width_float;
        p->mapping = BCL_MAPPING_SIMD;
        p->problems_per_work_item = width >= 16 ? 16 : width >= 8 ? 8 : width >= 4 ? 4 : width >= 2 ? 2 : 1;
        p->problems_per_group = 4 * p->problems_per_work_item;
        p->unroll = -1;
        return;
    }
    p->mapping = BCL_MAPPING_HYBRID;
    /* measured on an H100 (README): 4 rows per work-item up to m = 32, 8 up to 2048 */
    p->rows_per_work_item = m <= 8 ? 1 : m <= 32 ? 4 : m <= 2048 ? 8 : 16;
    if (p->rows_per_work_item == 1)
        p->mapping = BCL_MAPPING_COLLABORATIVE;
    p->unroll = 1;
}

/* Householder and the eigen routines: on CPUs one matrix per work-item in vector lanes; on GPUs
 * the collaborative version (a work-item per row). */
static void sytrd_heuristic(const bcl_device_info *dev, int dbl, bcl_params *p)
{
    if (!dev->is_gpu) {
        cl_uint width = dbl ? dev->vector_width_double : dev->vector_width_float;
        p->mapping = BCL_MAPPING_SIMD;
        p->problems_per_work_item = width >= 8 ? 8 : width >= 4 ? 4 : width >= 2 ? 2 : 1;
        p->problems_per_group = 2 * p->problems_per_work_item;
        return;
    }
    p->mapping = BCL_MAPPING_COLLABORATIVE;
}

void bcl_tuning_lookup(const bcl_context *ctx, bcl_routine routine, int dbl, int n,
                       bcl_params *out)
{
    memset(out, 0, sizeof *out);
    switch (routine) {
    case BCL_ROUTINE_LDLT:
        ldlt_heuristic(&ctx->dev, dbl, n, out);
        break;
    case BCL_ROUTINE_TRIDIAG:
        tridiag_heuristic(&ctx->dev, dbl, n, out);
        break;
    case BCL_ROUTINE_SYTRD:
        sytrd_heuristic(&ctx->dev, dbl, out);
        break;
    case BCL_ROUTINE_PCYCLIC: /* the driver decides from n, p and the batch (src/pcyclic.c) */
    case BCL_ROUTINE_COUNT:
        break;
    }
    const bcl_params *f = &ctx->forced;
    if (f->mapping != BCL_MAPPING_AUTO) {
        out->mapping = f->mapping;
        out->work_items_per_problem = 0;
    }
    if (f->work_items_per_problem)
        out->work_items_per_problem = f->work_items_per_problem;
    if (f->problems_per_group)
        out->problems_per_group = f->problems_per_group;
    if (f->specialize)
        out->specialize = f->specialize;
    if (f->simd_interleaved)
        out->simd_interleaved = f->simd_interleaved;
    if (f->unroll)
        out->unroll = f->unroll;
    if (f->rows_per_work_item)
        out->rows_per_work_item = f->rows_per_work_item;
    if (f->eigen_threshold > 0)
        out->eigen_threshold = f->eigen_threshold;
    if (f->auto_residual > 0)
        out->auto_residual = f->auto_residual;
    if (f->problems_per_work_item)
        out->problems_per_work_item = f->problems_per_work_item;
    if (f->chunk_problems)
        out->chunk_problems = f->chunk_problems;
    if (f->queues)
        out->queues = f->queues;
    if (f->pcyclic_method)
        out->pcyclic_method = f->pcyclic_method;
    if (f->pcyclic_cv_columns)
        out->pcyclic_cv_columns = f->pcyclic_cv_columns;
}
