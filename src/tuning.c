/* Parameter table: which variant runs for a routine, precision and size on this device. The
 * built-in heuristic per device type, overridden field by field by the entry of a tuning file
 * (tuning/db/<device>.json, written by batchcl-tune; read in src/tuning_db.c), overridden in turn by
 * the forced parameters of bcl_set_params. */
#include "internal.h"
#include "tuning_fields.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* geev (Tokura et al. 2017, Tables 1 and 2). CPUs: one work-item per matrix (SWB with p = 1:
 * the matrix in a work-group's local memory, no barriers), eight matrices per group, chunks that
 * keep the working set in the caches. GPUs (measured on the H100, see the README): SWB
 * for both steps, as local memory beats the paper's global-memory MWB QR step on devices with
 * large shared memory; p from the size; chunks of 16384 matrices (the paper's best 8192-32768). */
void bcl_geev_heuristic(const bcl_device_info *dev, int dbl, int n, bcl_params *p)
{
    (void)dbl;
    p->mapping = BCL_MAPPING_SWB;
    p->qr_mapping = BCL_MAPPING_SWB;
    if (!dev->is_gpu) {
        p->work_items_per_problem = 1;
        p->qr_work_items = 1;
        p->problems_per_group = 8;
        p->specialize = -1;
        p->chunk_problems = 4096;
        return;
    }
    /* Hessenberg: 16 work-items up to n = 32 (H100, f64, n = 30: 25.5 ms against 27.5 with 32;
     * the tuned entries for n = 20-30 agree) */
    p->work_items_per_problem = n <= 4 ? 4 : n <= 8 ? 8 : n <= 32 ? 16 : 32;
    /* QR: fewer work-items per matrix than the Hessenberg step. Its rounds are bound by the
     * latency of the serial part, which a warp runs once for all its matrices (H100, f64,
     * 500 000 matrices: p = 2 best to n = 10, 4 at n = 15-20, 8 at n = 25-30) */
    p->qr_work_items = n <= 12 ? 2 : n <= 20 ? 4 : n <= 32 ? 8 : 16;
    p->problems_per_group = 0; /* one subgroup per work-group */
    p->specialize = 1;
    p->chunk_problems = 16384;
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

/* Copy the fields src sets over out. Setting a mapping resets the work-items count that went
 * with the previous one, unless src sets that too. */
static void overlay(bcl_params *out, const bcl_params *src)
{
    if (src->mapping != BCL_MAPPING_AUTO)
        out->work_items_per_problem = 0;
    if (src->qr_mapping != BCL_MAPPING_AUTO)
        out->qr_work_items = 0;
    for (size_t i = 0; i < BCL_TUNING_FIELD_COUNT; ++i) {
        const long v = bcl_field_get(src, &bcl_tuning_fields[i]);
        if (v != 0)
            bcl_field_set(out, &bcl_tuning_fields[i], v);
    }
}

/* An entry tuned at size n0 used at size n: counts that follow the size are rescaled. */
static void adapt(bcl_routine routine, int n0, int n, bcl_params *p)
{
    if (n0 == n)
        return;
    switch (routine) {
    case BCL_ROUTINE_LDLT:
        if (p->mapping == BCL_MAPPING_HYBRID && p->work_items_per_problem > 0) {
            /* keep the rows per work-item, and the work-items per group */
            const int rows = (n0 + p->work_items_per_problem - 1) / p->work_items_per_problem;
            const int nstar = (n + rows - 1) / rows;
            if (p->problems_per_group > 0) {
                const long group = (long)p->problems_per_group * p->work_items_per_problem;
                p->problems_per_group = (int)(group / nstar > 0 ? group / nstar : 1);
            }
            p->work_items_per_problem = nstar;
            if (nstar >= n) {
                p->mapping = BCL_MAPPING_COLLABORATIVE;
                p->work_items_per_problem = 0;
            }
        }
        break;
    case BCL_ROUTINE_SYTRD:
        p->work_items_per_problem = 0; /* the routine's own: the next power of two */
        break;
    case BCL_ROUTINE_GEEV: {
        const int cap = bcl_pow2_at_least(n < 2 ? 2 : n);
        if (p->work_items_per_problem > cap)
            p->work_items_per_problem = cap;
        if (p->qr_work_items > cap)
            p->qr_work_items = cap;
        break;
    }
    default:
        break;
    }
}

/* The tuned entry for (routine, dbl, n): level by level (this device, then its architecture,
 * ...), an exact size in the level's first file that has one, else the nearest size in its first
 * file tuned for the routine and precision (tridiagonal sizes compare on a log scale). NULL when
 * no file covers the routine and precision. */
static const bcl_tuned_entry *find_entry(const bcl_context *ctx, bcl_routine routine, int dbl,
                                         int n, const bcl_tuning_file **file)
{
    for (int level = BCL_TUNING_EXACT; level <= BCL_TUNING_DEVICE_TYPE; ++level) {
        for (const bcl_tuning_file *f = ctx->tuning; f; f = f->next) {
            if ((int)f->level != level)
                continue;
            for (size_t i = 0; i < f->count; ++i) {
                const bcl_tuned_entry *e = &f->entries[i];
                if (e->routine == routine && e->dbl == dbl && e->n == n) {
                    *file = f;
                    return e;
                }
            }
        }
        for (const bcl_tuning_file *f = ctx->tuning; f; f = f->next) {
            if ((int)f->level != level)
                continue;
            const bcl_tuned_entry *best = NULL;
            double best_d = 0;
            for (size_t i = 0; i < f->count; ++i) {
                const bcl_tuned_entry *e = &f->entries[i];
                if (e->routine != routine || e->dbl != dbl)
                    continue;
                const double d = routine == BCL_ROUTINE_TRIDIAG ? fabs(log((double)e->n / n))
                                                                : fabs((double)(e->n - n));
                if (!best || d < best_d || (d == best_d && e->n < best->n)) {
                    best = e;
                    best_d = d;
                }
            }
            if (best) {
                *file = f;
                return best;
            }
        }
    }
    return NULL;
}

static void lookup(const bcl_context *ctx, bcl_routine routine, int dbl, int n, bcl_params *out,
                   bcl_tuning_choice *why)
{
    memset(out, 0, sizeof *out);
    switch (routine) {
    case BCL_ROUTINE_LDLT:
        ldlt_heuristic(&ctx->dev, dbl, n, out);
        break;
    case BCL_ROUTINE_GEEV:
        bcl_geev_heuristic(&ctx->dev, dbl, n, out);
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
    const bcl_tuning_file *file = NULL;
    const bcl_tuned_entry *e = find_entry(ctx, routine, dbl, n, &file);
    if (why) {
        memset(why, 0, sizeof *why);
        why->level = BCL_TUNING_HEURISTIC;
    }
    if (e) {
        bcl_params tuned = e->params;
        adapt(routine, e->n, n, &tuned);
        overlay(out, &tuned);
        if (why) {
            why->level = file->level;
            snprintf(why->file, sizeof why->file, "%s", file->path);
            why->tuned_n = e->n;
            why->throughput = e->throughput;
            why->default_throughput = e->default_throughput;
        }
    }
    const bcl_params *f = &ctx->forced;
    overlay(out, f);
    if (f->eigen_threshold > 0)
        out->eigen_threshold = f->eigen_threshold;
    if (f->auto_residual > 0)
        out->auto_residual = f->auto_residual;
    if (f->qr_sweeps_max)
        out->qr_sweeps_max = f->qr_sweeps_max;
    if (why)
        why->params = *out;
}

void bcl_tuning_lookup(const bcl_context *ctx, bcl_routine routine, int dbl, int n,
                       bcl_params *out)
{
    lookup(ctx, routine, dbl, n, out, NULL);
}

static const char *const routine_keys[BCL_ROUTINE_COUNT] = {"ldlt", "geev", "tridiag", "sytrd",
                                                            "pcyclic"};

const char *bcl_routine_key(bcl_routine r)
{
    return (int)r >= 0 && r < BCL_ROUTINE_COUNT ? routine_keys[r] : NULL;
}

int bcl_routine_from_key(const char *key)
{
    for (int i = 0; i < BCL_ROUTINE_COUNT; ++i)
        if (!strcmp(key, routine_keys[i]))
            return i;
    return -1;
}

const char *bcl_tuning_routine(int i)
{
    /* in the order a user meets them */
    static const bcl_routine order[] = {BCL_ROUTINE_LDLT, BCL_ROUTINE_TRIDIAG, BCL_ROUTINE_SYTRD,
                                        BCL_ROUTINE_GEEV, BCL_ROUTINE_PCYCLIC};
    return i >= 0 && i < (int)(sizeof order / sizeof order[0]) ? routine_keys[order[i]] : NULL;
}

bcl_status bcl_tuning_query(const bcl_context *ctx, const char *routine, int dbl, int n,
                            bcl_tuning_choice *out)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "bcl_tuning_query: argument 1 (ctx) is NULL");
    const int r = routine ? bcl_routine_from_key(routine) : -1;
    if (r < 0)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "bcl_tuning_query: argument 2 (routine) \"%s\" is not one of ldlt, "
                        "tridiag, sytrd, geev, pcyclic",
                        routine ? routine : "(null)");
    if (dbl != 0 && dbl != 1)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "bcl_tuning_query: argument 3 (dbl) = %d is not 0 or 1", dbl);
    if (n < 1)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "bcl_tuning_query: argument 4 (n) = %d < 1", n);
    if (!out)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "bcl_tuning_query: argument 5 (out) is NULL");
    bcl_params p;
    lookup(ctx, (bcl_routine)r, dbl, n, &p, out);
    return BCL_SUCCESS;
}
