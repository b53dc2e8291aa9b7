/* Batched tridiagonal solves (gtsv, ptsv): argument checks, choice of the kernel variant, and the
 * host-pointer / device-buffer entry points. Kernels: cl/tridiag.cl. */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 32          /* rows per work-item of the PCR kernel (register budget) */
#define PCR_TARGET_GROUP 128 /* work-items per group the PCR kernel aims for */

typedef struct {
    bcl_kernel_entry *kernel;
    char options[192];
    size_t group;       /* work-items per group */
    size_t per_group;   /* systems per group */
    size_t local_bytes;
    int per_system;     /* PCR: work-items per system */
    int rows;           /* PCR: rows per work-item */
    int vw;             /* SIMD: systems per work-item */
    bcl_mapping mapping;
} tridiag_plan;

static size_t pcr_local_per_system(int per_system, int rows, size_t es)
{
    const size_t q = rows == 1 ? (size_t)per_system : 2 * (size_t)per_system;
    return 4 * q * es + sizeof(int);
}

int bcl_gtsv_max_m(const bcl_context *ctx, int dbl)
{
    if (!ctx)
        return 0;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    /* the largest power-of-two group that holds one system's reduced equations in local memory */
    size_t per_system = 1;
    while (per_system * 2 <= ctx->dev.max_work_group_size &&
           pcr_local_per_system((int)per_system * 2, MAX_ROWS, es) <= ctx->dev.local_mem_bytes)
        per_system *= 2;
    return (int)(per_system * MAX_ROWS);
}

static const char *mapping_name(bcl_mapping m)
{
    switch (m) {
    case BCL_MAPPING_SIMD: return "SIMD (Thomas)";
    case BCL_MAPPING_COLLABORATIVE: return "PCR";
    case BCL_MAPPING_HYBRID: return "chunks + PCR";
    case BCL_MAPPING_SWB: /* geev only */
    case BCL_MAPPING_MWB:
    case BCL_MAPPING_AUTO: break;
    }
    return "auto";
}

static void kernel_options(char *out, size_t cap, const char *variant, int sym, int dbl,
                           bcl_layout layout, int unroll)
{
    snprintf(out, cap, "%s%s%s%s%s", variant, sym ? " -DSYMMETRIC" : "", dbl ? " -DBCL_DOUBLE" : "",
             layout == BCL_LAYOUT_INTERLEAVED ? " -DBCL_INTERLEAVED" : "",
             unroll > 0 ? " -DBCL_UNROLL" : "");
}

static bcl_status plan_simd(bcl_context *ctx, const char *fn, int dbl, int sym, int m,
                            bcl_layout layout, const bcl_params *p, tridiag_plan *plan)
{
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    int vw = p->problems_per_work_item > 0 ? p->problems_per_work_item : 1;
    /* fewer lanes when the 2m values per lane do not fit local memory */
    while (vw > 1 && 2 * (size_t)m * es * (size_t)vw > ctx->dev.local_mem_bytes)
        vw /= 2;
    const size_t per_item = 2 * (size_t)m * es * (size_t)vw;
    if (per_item > ctx->dev.local_mem_bytes)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: the SIMD mapping keeps 2m = %d values per system in local memory "
                        "(%zu bytes); the device has %zu",
                        fn, 2 * m, per_item, ctx->dev.local_mem_bytes);
    char variant[32];
    snprintf(variant, sizeof variant, "-DTRIDIAG_SIMD -DVW=%d", vw);
    kernel_options(plan->options, sizeof plan->options, variant, sym, dbl, layout, -1);
    bcl_status s = bcl_get_kernel(ctx, "tridiag.cl", plan->options, "tridiag_simd", &plan->kernel);
    if (s != BCL_SUCCESS)
        return s;
    size_t items = p->problems_per_group ? ((size_t)p->problems_per_group + vw - 1) / vw : 4;
    const size_t by_local = ctx->dev.local_mem_bytes / per_item;
    if (items > by_local)
        items = by_local;
    if (items > plan->kernel->max_work_group)
        items = plan->kernel->max_work_group;
    plan->group = items ? items : 1;
    plan->per_group = plan->group * (size_t)vw;
    plan->local_bytes = plan->group * per_item;
    plan->vw = vw;
    plan->rows = m;
    plan->per_system = 1;
    plan->mapping = BCL_MAPPING_SIMD;
    return BCL_SUCCESS;
}

static bcl_status plan_pcr(bcl_context *ctx, const char *fn, int dbl, int sym, int m,
                           bcl_layout layout, int aligned, const bcl_params *p, tridiag_plan *plan)
{
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    int rows = 1;
    if (p->mapping == BCL_MAPPING_HYBRID)
        rows = p->rows_per_work_item > 1 ? p->rows_per_work_item : 4;
    if (p->work_items_per_problem > 0 && p->mapping == BCL_MAPPING_HYBRID &&
        !ctx->forced.rows_per_work_item)
        rows = (m + p->work_items_per_problem - 1) / p->work_items_per_problem;
    if (rows > MAX_ROWS)
        rows = MAX_ROWS;
    const int forced_rows = ctx->forced.rows_per_work_item || ctx->forced.mapping == BCL_MAPPING_COLLABORATIVE;
    for (;;) {
        /* whole work-items per system, a power of two of them (few distinct group shapes) */
        const int per_system = bcl_pow2_at_least((m + rows - 1) / rows);
        char variant[64];
        /* 16-byte row groups when every group of 4 rows is 16-byte aligned (gtsv, contiguous) */
        const int vec4 = aligned && !sym && layout == BCL_LAYOUT_CONTIGUOUS && rows % 4 == 0;
        snprintf(variant, sizeof variant, "-DTRIDIAG_PCR -DROWS=%d%s", rows, vec4 ? " -DVEC4_ROWS" : "");
        kernel_options(plan->options, sizeof plan->options, variant, sym, dbl, layout, p->unroll);
        bcl_status s = bcl_get_kernel(ctx, "tridiag.cl", plan->options, "tridiag_pcr", &plan->kernel);
        if (s != BCL_SUCCESS)
            return s;
        const size_t per = pcr_local_per_system(per_system, rows, es);
        const size_t local = ctx->dev.local_mem_bytes > plan->kernel->static_local
                                 ? ctx->dev.local_mem_bytes - (size_t)plan->kernel->static_local
                                 : 0;
        if ((size_t)per_system > plan->kernel->max_work_group || per > local) {
            /* the table's row count does not fit this kernel's group limit (registers): more rows
             * per work-item, fewer work-items */
            if (!forced_rows && rows < MAX_ROWS) {
                rows *= 2;
                if (rows > MAX_ROWS)
                    rows = MAX_ROWS;
                continue;
            }
            return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                            "%s: m = %d with %d rows per work-item needs %d work-items and %zu bytes "
                            "of local memory per system; the kernel allows %zu work-items and the "
                            "device has %zu bytes",
                            fn, m, rows, per_system, per, plan->kernel->max_work_group, local);
        }
        size_t spg = p->problems_per_group ? (size_t)p->problems_per_group
                                           : (size_t)(PCR_TARGET_GROUP / per_system > 1
                                                          ? PCR_TARGET_GROUP / per_system
                                                          : 1);
        if (spg * (size_t)per_system > plan->kernel->max_work_group)
            spg = plan->kernel->max_work_group / (size_t)per_system;
        if (spg * per > local)
            spg = local / per;
        plan->per_group = spg;
        plan->group = spg * (size_t)per_system;
        plan->local_bytes = spg * per;
        plan->per_system = per_system;
        plan->rows = rows;
        plan->vw = 1;
        plan->mapping = rows == 1 ? BCL_MAPPING_COLLABORATIVE : BCL_MAPPING_HYBRID;
        return BCL_SUCCESS;
    }
}

/* aligned: m and every array offset are multiples of 4 elements (buffer bases are aligned) */
static bcl_status make_plan(bcl_context *ctx, const char *fn, int dbl, int sym, int m,
                            bcl_layout layout, int aligned, tridiag_plan *plan)
{
    bcl_params p;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_TRIDIAG, dbl, m, &p);
    memset(plan, 0, sizeof *plan);
    if (p.mapping == BCL_MAPPING_SIMD) {
        bcl_status s = plan_simd(ctx, fn, dbl, sym, m, layout, &p, plan);
        /* a table choice that does not fit falls back to PCR; a forced one is an error */
        if (s != BCL_UNSUPPORTED_SIZE || ctx->forced.mapping != BCL_MAPPING_AUTO)
            return s;
        p.mapping = BCL_MAPPING_HYBRID;
        p.rows_per_work_item = MAX_ROWS;
        p.problems_per_group = ctx->forced.problems_per_group;
    }
    return plan_pcr(ctx, fn, dbl, sym, m, layout, aligned, &p, plan);
}

typedef struct {
    const tridiag_plan *plan;
    int m, nrhs, sym;
} tridiag_call;

static bcl_status enqueue_tridiag(bcl_context *ctx, const tridiag_call *c, cl_command_queue q,
                                  bcl_layout layout, size_t count, size_t stride, cl_mem L,
                                  size_t offL, cl_mem D, size_t offD, cl_mem U, size_t offU,
                                  cl_mem B, size_t offB, cl_mem info, size_t offInfo,
                                  cl_uint num_wait, const cl_event *wait, cl_event *event)
{
    const size_t max_launch = (size_t)1 << 30;
    const tridiag_plan *plan = c->plan;
    const size_t m = (size_t)c->m, off_per = c->sym ? m - 1 : m;
    cl_kernel k = plan->kernel->kernel;
    snprintf(ctx->last_kernel, sizeof ctx->last_kernel,
             "%s %s; mapping %s, %d rows and %d work-items per system, %zu systems and %zu "
             "work-items per group, %zu bytes of local memory",
             plan->kernel->name, plan->options, mapping_name(plan->mapping), plan->rows,
             plan->per_system, plan->per_group, plan->group, plan->local_bytes);
    cl_event last = NULL;
    for (size_t first = 0; first < count; first += max_launch) {
        const size_t part = count - first < max_launch ? count - first : max_launch;
        const int inter = layout == BCL_LAYOUT_INTERLEAVED;
        cl_ulong ol = offL + (inter ? first : first * off_per), od = offD + (inter ? first : first * m),
                 ou = offU + (inter ? first : first * off_per),
                 ob = offB + (inter ? first : first * m * (size_t)c->nrhs), oi = offInfo + first;
        cl_uint ucount = (cl_uint)part;
        cl_ulong ustride = stride;
        cl_int err = 0;
        int arg = 0;
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &L);
        err |= clSetKernelArg(k, arg++, sizeof ol, &ol);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &D);
        err |= clSetKernelArg(k, arg++, sizeof od, &od);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &U);
        err |= clSetKernelArg(k, arg++, sizeof ou, &ou);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &B);
        err |= clSetKernelArg(k, arg++, sizeof ob, &ob);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &info);
        err |= clSetKernelArg(k, arg++, sizeof oi, &oi);
        err |= clSetKernelArg(k, arg++, sizeof(int), &c->m);
        err |= clSetKernelArg(k, arg++, sizeof(int), &c->nrhs);
        err |= clSetKernelArg(k, arg++, sizeof ucount, &ucount);
        err |= clSetKernelArg(k, arg++, sizeof ustride, &ustride);
        if (plan->mapping != BCL_MAPPING_SIMD)
            err |= clSetKernelArg(k, arg++, sizeof(int), &plan->per_system);
        err |= clSetKernelArg(k, arg++, plan->local_bytes, NULL);
        if (err != CL_SUCCESS) {
            if (last)
                clReleaseEvent(last);
            return bcl_fail(ctx, BCL_OPENCL_ERROR, "setting the tridiagonal kernel's arguments failed");
        }
        const size_t groups = (part + plan->per_group - 1) / plan->per_group;
        const size_t global = groups * plan->group, local = plan->group;
        cl_event ev = NULL;
        err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, first ? 0 : num_wait,
                                     first ? NULL : wait, &ev);
        if (last)
            clReleaseEvent(last);
        last = ev;
        if (err != CL_SUCCESS)
            return bcl_fail(ctx, err == CL_OUT_OF_RESOURCES ? BCL_UNSUPPORTED_SIZE : BCL_OPENCL_ERROR,
                            "launching the tridiagonal kernel (%s, %zu work-items per group, %zu "
                            "bytes of local memory) failed: %s",
                            mapping_name(plan->mapping), local, plan->local_bytes,
                            bcl_cl_error_name(err));
    }
    if (event)
        *event = last;
    else if (last)
        clReleaseEvent(last);
    return BCL_SUCCESS;
}

static bcl_status check_sizes(const bcl_context *ctx, const char *fn, int m, int nrhs,
                              size_t batch, int dbl)
{
    if (m < 0)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 2 (m = %d) must be >= 0", fn, m);
    if (nrhs < 0)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 3 (nrhs = %d) must be >= 0", fn,
                        nrhs);
    if ((size_t)m * (size_t)nrhs > INT_MAX) /* the kernels index a problem's B in 32 bits */
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: m * nrhs = %zu right-hand-side entries a system exceed %d", fn,
                        (size_t)m * (size_t)nrhs, INT_MAX);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t per = (size_t)m * (size_t)(nrhs > 3 ? nrhs : 3) * es;
    if (per && batch > (size_t)-1 / per)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: batch = %zu problems overflow the address space", fn, batch);
    return BCL_SUCCESS;
}

static bcl_status check_supported(const bcl_context *ctx, const char *fn, int m, int dbl)
{
    if (dbl && !ctx->dev.has_fp64)
        return bcl_no_fp64(ctx, fn);
    const int max_m = bcl_gtsv_max_m(ctx, dbl);
    if (m > max_m)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: m = %d exceeds the largest system this device can solve (%d: %d "
                        "work-items of %d rows)",
                        fn, m, max_m, max_m / MAX_ROWS, MAX_ROWS);
    return BCL_SUCCESS;
}

/* ---- host pointers ---- */

static bcl_status host_enqueue(bcl_context *ctx, void *user, cl_command_queue q, const cl_mem *in,
                               const cl_mem *out, const cl_mem *scratch, size_t first,
                               size_t count, cl_event *done)
{
    (void)scratch;
    (void)first;
    const tridiag_call *c = user;
    /* inputs: sub, diagonal, super (gtsv) or diagonal, e (ptsv), then B; outputs: B, info */
    cl_mem L, D, U;
    if (c->sym) {
        D = in[0];
        L = U = in[1];
    } else {
        L = in[0];
        D = in[1];
        U = in[2];
    }
    return enqueue_tridiag(ctx, c, q, BCL_LAYOUT_CONTIGUOUS, count, count, L, 0, D, 0, U, 0, out[0],
                           0, out[1], 0, 0, NULL, done);
}

static bcl_status tridiag_host(bcl_context *ctx, const char *fn, int dbl, int sym, int m, int nrhs,
                               size_t batch, const void *dl, const void *d, const void *du,
                               void *B, int *info)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    bcl_status s = check_sizes(ctx, fn, m, nrhs, batch, dbl);
    if (s != BCL_SUCCESS)
        return s;
    if (m == 0 || nrhs == 0 || batch == 0)
        return BCL_SUCCESS;
    /* ptsv: (d, e) come as (d, e=du); e may be NULL when m == 1 */
    const int need_off = !sym || m > 1;
    if ((sym ? (!d || (need_off && !du)) : (!dl || !d || !du)) || !B || !info) {
        const char *name = sym ? (!d ? "d" : (need_off && !du) ? "e" : !B ? "B" : "info")
                               : (!dl ? "dl" : !d ? "d" : !du ? "du" : !B ? "B" : "info");
        const int argno = sym ? (!d ? 5 : (need_off && !du) ? 6 : !B ? 7 : 8)
                              : (!dl ? 5 : !d ? 6 : !du ? 7 : !B ? 8 : 9);
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument %d (%s) is NULL", fn, argno, name);
    }
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t mm = (size_t)m, off_bytes = (sym ? mm - 1 : mm) * es, b_bytes = mm * (size_t)nrhs * es;
    const void *ins[3] = {sym ? NULL : dl, d, du};
    const size_t in_len[3] = {sym ? 0 : batch * mm * es, batch * mm * es, batch * off_bytes};
    for (int i = 0; i < 3; ++i) {
        if (bcl_overlaps(B, batch * b_bytes, ins[i], in_len[i]))
            return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: B overlaps a matrix array", fn);
        if (bcl_overlaps(info, batch * sizeof(int), ins[i], in_len[i]))
            return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: info overlaps a matrix array", fn);
    }
    if (bcl_overlaps(info, batch * sizeof(int), B, batch * b_bytes))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: info overlaps B", fn);
    s = check_supported(ctx, fn, m, dbl);
    if (s != BCL_SUCCESS)
        return s;
    tridiag_plan plan;
    /* chunk buffers start at offset 0; zero-copy ones wrap the caller's arrays, whose own
     * addresses then decide the alignment */
    const uintptr_t any = (uintptr_t)dl | (uintptr_t)d | (uintptr_t)du | (uintptr_t)B;
    const int aligned = m % 4 == 0 && (!ctx->zero_copy || any % (4 * es) == 0);
    s = make_plan(ctx, fn, dbl, sym, m, BCL_LAYOUT_CONTIGUOUS, aligned, &plan);
    if (s != BCL_SUCCESS)
        return s;
    bcl_params p;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_TRIDIAG, dbl, m, &p);
    tridiag_call call = {&plan, m, nrhs, sym};
    bcl_job job;
    memset(&job, 0, sizeof job);
    job.batch = batch;
    job.chunk = p.chunk_problems;
    job.queues = p.queues;
    job.enqueue = host_enqueue;
    job.user = &call;
    if (sym) {
        job.in[job.n_in++] = (bcl_stream_in){d, mm * es};
        job.in[job.n_in++] = (bcl_stream_in){du, off_bytes};
    } else {
        job.in[job.n_in++] = (bcl_stream_in){dl, mm * es};
        job.in[job.n_in++] = (bcl_stream_in){d, mm * es};
        job.in[job.n_in++] = (bcl_stream_in){du, mm * es};
    }
    job.in[job.n_in++] = (bcl_stream_in){B, b_bytes};
    job.out[job.n_out++] = (bcl_stream_out){B, b_bytes, job.n_in - 1};
    job.out[job.n_out++] = (bcl_stream_out){info, sizeof(int), -1};
    s = bcl_pipeline_run(ctx, &job);
    if (s != BCL_SUCCESS)
        return s;
    return bcl_summarize_info(ctx, fn, "zero or non-finite pivot or solution", info, batch);
}

bcl_status bcl_sgtsv(bcl_context *ctx, int m, int nrhs, size_t batch, const float *dl,
                     const float *d, const float *du, float *B, int *info)
{
    return tridiag_host(ctx, "bcl_sgtsv", 0, 0, m, nrhs, batch, dl, d, du, B, info);
}

bcl_status bcl_dgtsv(bcl_context *ctx, int m, int nrhs, size_t batch, const double *dl,
                     const double *d, const double *du, double *B, int *info)
{
    return tridiag_host(ctx, "bcl_dgtsv", 1, 0, m, nrhs, batch, dl, d, du, B, info);
}

bcl_status bcl_sptsv(bcl_context *ctx, int n, int nrhs, size_t batch, const float *d,
                     const float *e, float *B, int *info)
{
    return tridiag_host(ctx, "bcl_sptsv", 0, 1, n, nrhs, batch, NULL, d, e, B, info);
}

bcl_status bcl_dptsv(bcl_context *ctx, int n, int nrhs, size_t batch, const double *d,
                     const double *e, double *B, int *info)
{
    return tridiag_host(ctx, "bcl_dptsv", 1, 1, n, nrhs, batch, NULL, d, e, B, info);
}

/* ---- device buffers ---- */

static bcl_status tridiag_device(bcl_context *ctx, const char *fn, int dbl, int sym, int m,
                                 int nrhs, size_t batch, bcl_layout layout, cl_mem L, size_t offL,
                                 cl_mem D, size_t offD, cl_mem U, size_t offU, cl_mem B,
                                 size_t offB, cl_mem info, size_t offInfo, cl_uint num_wait,
                                 const cl_event *wait, cl_event *event)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    bcl_status s = check_sizes(ctx, fn, m, nrhs, batch, dbl);
    if (s == BCL_SUCCESS)
        s = bcl_check_layout(ctx, fn, layout);
    if (s == BCL_SUCCESS)
        s = bcl_check_wait(ctx, fn, num_wait, wait);
    if (s != BCL_SUCCESS)
        return s;
    if (m == 0 || nrhs == 0 || batch == 0)
        return bcl_empty_call(ctx, num_wait, wait, event);
    const size_t mm = (size_t)m;
    /* argument numbers: gtsv (ctx, m, nrhs, batch, layout, dl, offdl, d, offd, du, offdu, B, ...)
     * ptsv (ctx, n, nrhs, batch, layout, d, offd, e, offe, B, ...) */
    if (sym) {
        s = bcl_check_buffer(ctx, fn, 6, "d", D, offD, batch * mm, es);
        if (s == BCL_SUCCESS && m > 1)
            s = bcl_check_buffer(ctx, fn, 8, "e", U, offU, batch * (mm - 1), es);
        if (s == BCL_SUCCESS)
            s = bcl_check_buffer(ctx, fn, 10, "B", B, offB, batch * mm * (size_t)nrhs, es);
        if (s == BCL_SUCCESS)
            s = bcl_check_buffer(ctx, fn, 12, "info", info, offInfo, batch, sizeof(int));
    } else {
        s = bcl_check_buffer(ctx, fn, 6, "dl", L, offL, batch * mm, es);
        if (s == BCL_SUCCESS)
            s = bcl_check_buffer(ctx, fn, 8, "d", D, offD, batch * mm, es);
        if (s == BCL_SUCCESS)
            s = bcl_check_buffer(ctx, fn, 10, "du", U, offU, batch * mm, es);
        if (s == BCL_SUCCESS)
            s = bcl_check_buffer(ctx, fn, 12, "B", B, offB, batch * mm * (size_t)nrhs, es);
        if (s == BCL_SUCCESS)
            s = bcl_check_buffer(ctx, fn, 14, "info", info, offInfo, batch, sizeof(int));
    }
    if (s == BCL_SUCCESS)
        s = check_supported(ctx, fn, m, dbl);
    if (s != BCL_SUCCESS)
        return s;
    tridiag_plan plan;
    const int aligned = m % 4 == 0 && offL % 4 == 0 && offD % 4 == 0 && offU % 4 == 0 && offB % 4 == 0;
    s = make_plan(ctx, fn, dbl, sym, m, layout, aligned, &plan);
    if (s != BCL_SUCCESS)
        return s;
    tridiag_call call = {&plan, m, nrhs, sym};
    return enqueue_tridiag(ctx, &call, ctx->queue[0], layout, batch, batch, L, offL, D, offD, U,
                           offU, B, offB, info, offInfo, num_wait, wait, event);
}

bcl_status bcl_sgtsv_cl(bcl_context *ctx, int m, int nrhs, size_t batch, bcl_layout layout,
                        cl_mem dl, size_t offdl, cl_mem d, size_t offd, cl_mem du, size_t offdu,
                        cl_mem B, size_t offB, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event)
{
    return tridiag_device(ctx, "bcl_sgtsv_cl", 0, 0, m, nrhs, batch, layout, dl, offdl, d, offd,
                          du, offdu, B, offB, info, offInfo, num_wait, wait_list, event);
}

bcl_status bcl_dgtsv_cl(bcl_context *ctx, int m, int nrhs, size_t batch, bcl_layout layout,
                        cl_mem dl, size_t offdl, cl_mem d, size_t offd, cl_mem du, size_t offdu,
                        cl_mem B, size_t offB, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event)
{
    return tridiag_device(ctx, "bcl_dgtsv_cl", 1, 0, m, nrhs, batch, layout, dl, offdl, d, offd,
                          du, offdu, B, offB, info, offInfo, num_wait, wait_list, event);
}

bcl_status bcl_sptsv_cl(bcl_context *ctx, int n, int nrhs, size_t batch, bcl_layout layout,
                        cl_mem d, size_t offd, cl_mem e, size_t offe, cl_mem B, size_t offB,
                        cl_mem info, size_t offInfo, cl_uint num_wait, const cl_event *wait_list,
                        cl_event *event)
{
    return tridiag_device(ctx, "bcl_sptsv_cl", 0, 1, n, nrhs, batch, layout, e, offe, d, offd, e,
                          offe, B, offB, info, offInfo, num_wait, wait_list, event);
}

bcl_status bcl_dptsv_cl(bcl_context *ctx, int n, int nrhs, size_t batch, bcl_layout layout,
                        cl_mem d, size_t offd, cl_mem e, size_t offe, cl_mem B, size_t offB,
                        cl_mem info, size_t offInfo, cl_uint num_wait, const cl_event *wait_list,
                        cl_event *event)
{
    return tridiag_device(ctx, "bcl_dptsv_cl", 1, 1, n, nrhs, batch, layout, e, offe, d, offd, e,
                          offe, B, offB, info, offInfo, num_wait, wait_list, event);
}

bcl_status bcl_ptsv_enqueue(bcl_context *ctx, cl_command_queue q, const char *fn, int dbl, int n,
                            int nrhs, size_t count, bcl_layout layout, size_t stride, cl_mem d,
                            cl_mem e, cl_mem B, size_t offB, cl_mem info, size_t offInfo)
{
    bcl_status s = check_supported(ctx, fn, n, dbl);
    tridiag_plan plan;
    if (s == BCL_SUCCESS)
        s = make_plan(ctx, fn, dbl, 1, n, layout, 0, &plan);
    if (s != BCL_SUCCESS)
        return s;
    tridiag_call call = {&plan, n, nrhs, 1};
    /* the Householder output keeps e in an n-long array per problem: d and e share a shape */
    return enqueue_tridiag(ctx, &call, q, layout, count, stride, e, 0, d, 0, e, 0, B, offB, info,
                           offInfo, 0, NULL, NULL);
}
