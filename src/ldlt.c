/* LDL^T solve of batched symmetric positive definite systems: argument checks, choice of the
 * kernel variant, and the host-pointer / device-buffer entry points. Kernels: cl/ldlt.cl. */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* must match cl/ldlt.cl */
enum { LDLT_FACTOR = 1, LDLT_STORE = 2, LDLT_SOLVE = 4 };

/* Register budget per work-item for the rows of the collaborative / hybrid kernels. */
#define COOP_REGISTER_BYTES 1024
#define COOP_MAX_NMAX 128
/* Work-items per group the cooperative kernels aim for, when local memory allows. */
#define COOP_TARGET_GROUP 128

typedef struct {
    bcl_kernel_entry *kernel;
    char options[256];
    size_t group;       /* work-items per group */
    size_t per_group;   /* problems per group */
    size_t local_bytes; /* dynamic local memory per group */
    bcl_mapping mapping;
    int work_items;     /* per problem */
} ldlt_plan;

static size_t packed_size(int n)
{
    return (size_t)n * (size_t)(n + 1) / 2;
}

static int size_bucket(int n)
{
    int b = 8;
    while (b < n)
        b *= 2;
    return b;
}

static size_t simd_local_per_problem(int n, size_t es)
{
    return (packed_size(n) + (size_t)n) * es + sizeof(int);
}

int bcl_ldlt_max_n(const bcl_context *ctx, int dbl)
{
    if (!ctx)
        return 0;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    int n = 1;
    while (simd_local_per_problem(n + 1, es) <= ctx->dev.local_mem_bytes && n < 4096)
        ++n;
    return n;
}

static const char *mapping_name(bcl_mapping m)
{
    switch (m) {
    case BCL_MAPPING_SIMD: return "SIMD";
    case BCL_MAPPING_COLLABORATIVE: return "collaborative";
    case BCL_MAPPING_HYBRID: return "hybrid";
    case BCL_MAPPING_SWB: return "SWB (geev only)";
    case BCL_MAPPING_MWB: return "MWB (geev only)";
    case BCL_MAPPING_AUTO: break;
    }
    return "auto";
}

/* Problems per group: the requested number, else `target`, within local memory and group size. */
static bcl_status fit_group(const bcl_context *ctx, const bcl_kernel_entry *k, size_t per_problem,
                            size_t items_per_problem, size_t requested, size_t target,
                            size_t *out)
{
    size_t local = ctx->dev.local_mem_bytes > k->static_local
                       ? ctx->dev.local_mem_bytes - (size_t)k->static_local
                       : 0;
    size_t by_local = local / per_problem;
    size_t by_group = k->max_work_group / items_per_problem;
    size_t limit = by_local < by_group ? by_local : by_group;
    if (limit == 0)
        return BCL_UNSUPPORTED_SIZE;
    size_t want = requested ? requested : target;
    if (want == 0)
        want = 1;
    *out = want < limit ? want : limit;
    return BCL_SUCCESS;
}

static bcl_status plan_simd(bcl_context *ctx, const char *fn, int dbl, int n, bcl_layout layout,
                            const bcl_params *p, ldlt_plan *plan)
{
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const int vw = p->problems_per_work_item > 0 ? p->problems_per_work_item : 1;
    const int interleaved = p->simd_interleaved > 0 && vw == 1;
    char options[256];
    snprintf(options, sizeof options, "-DLDLT_SIMD -DVW=%d%s%s%s", vw,
             interleaved ? " -DSIMD_INTERLEAVED" : "", dbl ? " -DBCL_DOUBLE" : "",
             layout == BCL_LAYOUT_INTERLEAVED ? " -DBCL_INTERLEAVED" : "");
    snprintf(plan->options, sizeof plan->options, "%s", options);
    bcl_status s = bcl_get_kernel(ctx, "ldlt.cl", options, "ldlt_simd", &plan->kernel);
    if (s != BCL_SUCCESS)
        return s;
    /* a work-item holds vw problems: their triangles and work vectors, and a failure flag each */
    const size_t per_item = (size_t)vw * simd_local_per_problem(n, es);
    const size_t requested = p->problems_per_group ? ((size_t)p->problems_per_group + vw - 1) / vw : 0;
    size_t items;
    s = fit_group(ctx, plan->kernel, per_item, 1, requested, ctx->dev.is_gpu ? 32 : 4, &items);
    if (s != BCL_SUCCESS)
        return bcl_fail(ctx, s,
                        "%s: n = %d needs %zu bytes of local memory per work-item with the SIMD "
                        "mapping (%d problems each); the device has %zu",
                        fn, n, per_item, vw, ctx->dev.local_mem_bytes);
    plan->group = items;
    plan->per_group = items * (size_t)vw;
    plan->local_bytes = items * per_item;
    plan->mapping = BCL_MAPPING_SIMD;
    plan->work_items = 1;
    return BCL_SUCCESS;
}

/* Collaborative (rows = 1) and hybrid (rows >= 2) kernels; BCL_UNSUPPORTED_SIZE when the rows do
 * not fit the register budget or the group does not fit the device. */
static bcl_status plan_coop(bcl_context *ctx, const char *fn, int dbl, int n, bcl_layout layout,
                            const bcl_params *p, ldlt_plan *plan)
{
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    int rows = 1;
    if (p->mapping == BCL_MAPPING_HYBRID) {
        int nstar = p->work_items_per_problem > 0 ? p->work_items_per_problem : (n + 1) / 2;
        rows = (n + nstar - 1) / nstar;
        if (rows < 2)
            rows = 2;
    }
    const int exact = p->specialize > 0;
    const int nmax = exact ? n : size_bucket(n);
    if (nmax > COOP_MAX_NMAX || (size_t)rows * (size_t)nmax * es > COOP_REGISTER_BYTES)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: the %s mapping holds %d rows of %d %s per work-item, over its register "
                        "budget of %d bytes; use more work-items per problem or the SIMD mapping",
                        fn, mapping_name(p->mapping), rows, nmax, dbl ? "doubles" : "floats",
                        COOP_REGISTER_BYTES);
    const int nstar = (nmax + rows - 1) / rows;
    char options[256];
    snprintf(options, sizeof options, "-DLDLT_COOP -DNMAX=%d -DROWS=%d%s%s%s%s", nmax, rows,
             exact ? " -DNEXACT" : "", p->unroll > 0 ? " -DBCL_UNROLL" : "", dbl ? " -DBCL_DOUBLE" : "",
             layout == BCL_LAYOUT_INTERLEAVED ? " -DBCL_INTERLEAVED" : "");
    snprintf(plan->options, sizeof plan->options, "%s", options);
    bcl_status s = bcl_get_kernel(ctx, "ldlt.cl", options, "ldlt_coop", &plan->kernel);
    if (s != BCL_SUCCESS)
        return s;
    /* sized by nmax, so that a size bucket keeps one group shape (one compiled work-group
     * function on CPU implementations) */
    const size_t nmax4 = ((size_t)nmax + 3) / 4 * 4; /* as COL_STRIDE and TRI_STRIDE in ldlt.cl */
    const size_t per = ((3 * nmax4 + 31) / 32 * 32 + 4 + packed_size(nmax) + 31) * es;
    size_t target = COOP_TARGET_GROUP / (size_t)nstar;
    s = fit_group(ctx, plan->kernel, per, (size_t)nstar, (size_t)p->problems_per_group, target,
                  &plan->per_group);
    if (s != BCL_SUCCESS)
        return bcl_fail(ctx, s,
                        "%s: the %s mapping for n = %d needs %d work-items and %zu bytes of local "
                        "memory per problem; the kernel allows %zu work-items per group and the "
                        "device has %zu bytes of local memory",
                        fn, mapping_name(p->mapping), n, nstar, per, plan->kernel->max_work_group,
                        ctx->dev.local_mem_bytes);
    plan->group = plan->per_group * (size_t)nstar;
    plan->local_bytes = plan->per_group * per;
    plan->mapping = rows == 1 ? BCL_MAPPING_COLLABORATIVE : BCL_MAPPING_HYBRID;
    plan->work_items = nstar;
    return BCL_SUCCESS;
}

static bcl_status make_plan(bcl_context *ctx, const char *fn, int dbl, int n, bcl_layout layout,
                            ldlt_plan *plan)
{
    bcl_params p;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_LDLT, dbl, n, &p);
    memset(plan, 0, sizeof *plan);
    if (p.mapping == BCL_MAPPING_COLLABORATIVE || p.mapping == BCL_MAPPING_HYBRID) {
        bcl_status s = plan_coop(ctx, fn, dbl, n, layout, &p, plan);
        /* a table choice that does not fit falls back to SIMD; a forced one is an error */
        if (s != BCL_UNSUPPORTED_SIZE || ctx->forced.mapping != BCL_MAPPING_AUTO)
            return s;
        p.problems_per_group = ctx->forced.problems_per_group; /* the table's was for the other */
    }
    return plan_simd(ctx, fn, dbl, n, layout, &p, plan);
}

typedef struct {
    const ldlt_plan *plan;
    int n, nrhs, mode;
} ldlt_call;

/* Launch the kernel over `count` problems; offsets in elements. Launches are split so that
 * problem indices fit the kernel's 32-bit counters. */
static bcl_status enqueue_ldlt(bcl_context *ctx, const ldlt_call *c, cl_command_queue q,
                               bcl_layout layout, size_t count, size_t stride, cl_mem A,
                               size_t offA, cl_mem B, size_t offB, cl_mem X, size_t offX,
                               cl_mem LD, size_t offLD, cl_mem info, size_t offInfo,
                               cl_uint num_wait, const cl_event *wait, cl_event *event)
{
    const size_t max_launch = (size_t)1 << 30;
    const size_t nn = (size_t)c->n * (size_t)c->n, nb = (size_t)c->n * (size_t)c->nrhs,
                 np = packed_size(c->n);
    cl_kernel k = c->plan->kernel->kernel;
    cl_event last = NULL;
    snprintf(ctx->last_kernel, sizeof ctx->last_kernel,
             "%s %s; mapping %s, %d work-items per problem, %zu problems and %zu work-items per "
             "group, %zu bytes of local memory",
             c->plan->kernel->name, c->plan->options, mapping_name(c->plan->mapping),
             c->plan->work_items, c->plan->per_group, c->plan->group, c->plan->local_bytes);
    for (size_t first = 0; first < count; first += max_launch) {
        const size_t part = count - first < max_launch ? count - first : max_launch;
        /* where the part starts: problem `first` of each array */
        const int inter = layout == BCL_LAYOUT_INTERLEAVED;
        cl_ulong oa = offA + (inter ? first : first * nn), ob = offB + (inter ? first : first * nb),
                 ox = offX + (inter ? first : first * nb), ol = offLD + (inter ? first : first * np),
                 oi = offInfo + first;
        cl_uint ucount = (cl_uint)part;
        cl_ulong ustride = stride;
        cl_int err = 0;
        int arg = 0;
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &A);
        err |= clSetKernelArg(k, arg++, sizeof oa, &oa);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &B);
        err |= clSetKernelArg(k, arg++, sizeof ob, &ob);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &X);
        err |= clSetKernelArg(k, arg++, sizeof ox, &ox);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &LD);
        err |= clSetKernelArg(k, arg++, sizeof ol, &ol);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &info);
        err |= clSetKernelArg(k, arg++, sizeof oi, &oi);
        err |= clSetKernelArg(k, arg++, sizeof(int), &c->n);
        err |= clSetKernelArg(k, arg++, sizeof(int), &c->nrhs);
        err |= clSetKernelArg(k, arg++, sizeof ucount, &ucount);
        err |= clSetKernelArg(k, arg++, sizeof ustride, &ustride);
        err |= clSetKernelArg(k, arg++, sizeof(int), &c->mode);
        err |= clSetKernelArg(k, arg++, c->plan->local_bytes, NULL);
        if (err != CL_SUCCESS) {
            if (last)
                clReleaseEvent(last);
            return bcl_fail(ctx, BCL_OPENCL_ERROR, "setting the LDL^T kernel's arguments failed");
        }
        const size_t groups = (part + c->plan->per_group - 1) / c->plan->per_group;
        const size_t global = groups * c->plan->group, local = c->plan->group;
        cl_event ev = NULL;
        err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, first ? 0 : num_wait,
                                     first ? NULL : wait, &ev);
        if (last)
            clReleaseEvent(last);
        last = ev;
        if (err != CL_SUCCESS)
            return bcl_fail(ctx, err == CL_OUT_OF_RESOURCES ? BCL_UNSUPPORTED_SIZE : BCL_OPENCL_ERROR,
                            "launching the LDL^T kernel (%s mapping, %zu work-items per group, "
                            "%zu bytes of local memory) failed: %s",
                            mapping_name(c->plan->mapping), local, c->plan->local_bytes,
                            bcl_cl_error_name(err));
    }
    if (event)
        *event = last;
    else if (last)
        clReleaseEvent(last);
    return BCL_SUCCESS;
}

/* ---- host-pointer entry points ---- */

typedef struct {
    ldlt_call call;
    int has_info, has_ld_in, has_ld_out, has_solve;
} host_job;

/* Streams: inputs A or LD, then B; outputs X, LD, info in this order when present. */
static bcl_status host_enqueue(bcl_context *ctx, void *user, cl_command_queue q, const cl_mem *in,
                               const cl_mem *out, const cl_mem *scratch, size_t first,
                               size_t count, cl_event *done)
{
    (void)scratch;
    (void)first;
    const host_job *j = user;
    int i = 0, o = 0;
    cl_mem A = NULL, B = NULL, X = NULL, LD = NULL, info = NULL;
    if (j->has_ld_in)
        LD = in[i++];
    else
        A = in[i++];
    if (j->has_solve) {
        B = in[i++];
        X = out[o++];
    }
    if (j->has_ld_out)
        LD = out[o++];
    if (j->has_info)
        info = out[o++];
    return enqueue_ldlt(ctx, &j->call, q, BCL_LAYOUT_CONTIGUOUS, count, count, A, 0, B, 0, X, 0,
                        LD, 0, info, 0, 0, NULL, done);
}

static bcl_status check_sizes(const bcl_context *ctx, const char *fn, int n, int nrhs, size_t batch,
                              int dbl)
{
    if (n < 0)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: n = %d must be >= 0", fn, n);
    if (nrhs < 0)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: nrhs = %d must be >= 0", fn, nrhs);
    if ((size_t)n * (size_t)nrhs > INT_MAX) /* the kernels index a problem's B in 32 bits */
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: n * nrhs = %zu right-hand-side entries a problem exceed %d", fn,
                        (size_t)n * (size_t)nrhs, INT_MAX);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t per = (size_t)n * (size_t)(n > nrhs ? n : nrhs) * es;
    if (per && batch > (size_t)-1 / per)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: batch = %zu problems overflow the address "
                        "space", fn, batch);
    return BCL_SUCCESS;
}

static bcl_status check_n_supported(const bcl_context *ctx, const char *fn, int n, int dbl)
{
    if (dbl && !ctx->dev.has_fp64)
        return bcl_no_fp64(ctx, fn);
    const int max_n = bcl_ldlt_max_n(ctx, dbl);
    if (n > max_n)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: n = %d exceeds the largest size this device can hold in local memory "
                        "(%d)",
                        fn, n, max_n);
    return BCL_SUCCESS;
}

static bcl_status check_method(const bcl_context *ctx, const char *fn, bcl_method method)
{
    switch (method) {
    case BCL_LDLT:
    case BCL_AUTO:
    case BCL_HOUSEHOLDER_PCR:
    case BCL_EIGEN:
        return BCL_SUCCESS;
    }
    return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 2 (method = %d) is not a bcl_method",
                    fn, (int)method);
}

/* Shared by sysv (A, B -> X, info), sytrf (A -> LD, info) and sytrs (LD, B -> X). */
static bcl_status ldlt_host(bcl_context *ctx, const char *fn, int dbl, int mode, int n, int nrhs,
                            size_t batch, const void *A, const void *LDin, const void *B, void *X,
                            void *LDout, int *info)
{
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t a_bytes = (size_t)n * (size_t)n * es, b_bytes = (size_t)n * (size_t)nrhs * es,
                 ld_bytes = packed_size(n) * es;
    const int solve = (mode & LDLT_SOLVE) != 0;
    /* outputs may alias nothing but X == B */
    struct {
        const void *p;
        size_t len;
    } ins[2] = {{A ? A : LDin, batch * (A ? a_bytes : ld_bytes)}, {B, solve ? batch * b_bytes : 0}};
    struct {
        const void *p;
        size_t len;
        const char *name;
    } outs[3] = {{X, solve ? batch * b_bytes : 0, "X"},
                 {LDout, LDout ? batch * ld_bytes : 0, "LD"},
                 {info, info ? batch * sizeof(int) : 0, "info"}};
    for (int o = 0; o < 3; ++o) {
        for (int i = 0; i < 2; ++i)
            if (bcl_overlaps(outs[o].p, outs[o].len, ins[i].p, ins[i].len) &&
                !(o == 0 && i == 1 && X == B))
                return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                                "%s: output %s overlaps an input array (only X == B is allowed)", fn,
                                outs[o].name);
        for (int p = o + 1; p < 3; ++p)
            if (bcl_overlaps(outs[o].p, outs[o].len, outs[p].p, outs[p].len))
                return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: outputs %s and %s overlap", fn,
                                outs[o].name, outs[p].name);
    }
    bcl_status s = check_n_supported(ctx, fn, n, dbl);
    if (s != BCL_SUCCESS)
        return s;

    ldlt_plan plan;
    s = make_plan(ctx, fn, dbl, n, BCL_LAYOUT_CONTIGUOUS, &plan);
    if (s != BCL_SUCCESS)
        return s;
    bcl_params p;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_LDLT, dbl, n, &p);

    host_job hj = {{&plan, n, solve ? nrhs : 1, mode}, info != NULL, LDin != NULL, LDout != NULL,
                   solve};
    bcl_job job;
    memset(&job, 0, sizeof job);
    job.batch = batch;
    job.chunk = p.chunk_problems;
    job.queues = p.queues;
    job.enqueue = host_enqueue;
    job.user = &hj;
    job.in[job.n_in++] = (bcl_stream_in){LDin ? LDin : A, LDin ? ld_bytes : a_bytes};
    if (solve) {
        job.in[job.n_in++] = (bcl_stream_in){B, b_bytes};
        job.out[job.n_out++] = (bcl_stream_out){X, b_bytes, X == B ? 1 : -1};
    }
    if (LDout)
        job.out[job.n_out++] = (bcl_stream_out){LDout, ld_bytes, -1};
    if (info)
        job.out[job.n_out++] = (bcl_stream_out){info, sizeof(int), -1};
    s = bcl_pipeline_run(ctx, &job);
    if (s != BCL_SUCCESS)
        return s;
    return info ? bcl_summarize_info(ctx, fn, "not numerically positive definite", info, batch) : BCL_SUCCESS;
}

static bcl_status sysv(bcl_context *ctx, const char *fn, int dbl, bcl_method method, int n,
                       int nrhs, size_t batch, const void *A, const void *B, void *X, int *info,
                       void *residual, int *path)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    bcl_status s = check_method(ctx, fn, method);
    if (s == BCL_SUCCESS)
        s = check_sizes(ctx, fn, n, nrhs, batch, dbl);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || nrhs == 0 || batch == 0)
        return BCL_SUCCESS;
    if (!A || !B || !X || !info)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument %d (%s) is NULL", fn,
                        !A ? 6 : !B ? 7 : !X ? 8 : 9, !A ? "A" : !B ? "B" : !X ? "X" : "info");
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t xb = batch * (size_t)n * (size_t)nrhs * es;
    if (bcl_overlaps(residual, batch * es, X, xb) || bcl_overlaps(residual, batch * es, info, batch * sizeof(int)) ||
        bcl_overlaps(path, batch * sizeof(int), X, xb) || bcl_overlaps(path, batch * sizeof(int), info, batch * sizeof(int)) ||
        bcl_overlaps(residual, batch * es, path, batch * sizeof(int)))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: residual or path overlaps another output", fn);
    if (method != BCL_LDLT)
        return bcl_symeig_sysv(ctx, fn, dbl, method, n, nrhs, batch, A, B, X, info, residual, path);
    s = ldlt_host(ctx, fn, dbl, LDLT_FACTOR | LDLT_SOLVE, n, nrhs, batch, A, NULL, B, X,
                             NULL, info);
    if (path)
        for (size_t k = 0; k < batch; ++k)
            path[k] = BCL_LDLT;
    if (residual && (s == BCL_SUCCESS || s == BCL_NUMERICAL_FAILURE)) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", bcl_last_error(ctx));
        bcl_status r = bcl_residual_host(ctx, fn, dbl, n, nrhs, batch, A, B, X, residual);
        if (r != BCL_SUCCESS)
            return r;
        bcl_fail(ctx, s, "%s", msg); /* keep the solve's explanation */
    }
    return s;
}

bcl_status bcl_ssysv(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                     const float *A, const float *B, float *X, int *info)
{
    return sysv(ctx, "bcl_ssysv", 0, method, n, nrhs, batch, A, B, X, info, NULL, NULL);
}

bcl_status bcl_ssysvx(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                      const float *A, const float *B, float *X, int *info, float *residual,
                      int *path)
{
    return sysv(ctx, "bcl_ssysvx", 0, method, n, nrhs, batch, A, B, X, info, residual, path);
}

bcl_status bcl_dsysv(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                     const double *A, const double *B, double *X, int *info)
{
    return sysv(ctx, "bcl_dsysv", 1, method, n, nrhs, batch, A, B, X, info, NULL, NULL);
}

bcl_status bcl_dsysvx(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                      const double *A, const double *B, double *X, int *info, double *residual,
                      int *path)
{
    return sysv(ctx, "bcl_dsysvx", 1, method, n, nrhs, batch, A, B, X, info, residual, path);
}

static bcl_status sytrf(bcl_context *ctx, const char *fn, int dbl, int n, size_t batch,
                        const void *A, void *LD, int *info)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    bcl_status s = check_sizes(ctx, fn, n, 0, batch, dbl);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || batch == 0)
        return BCL_SUCCESS;
    if (!A || !LD || !info)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument %d (%s) is NULL", fn,
                        !A ? 4 : !LD ? 5 : 6, !A ? "A" : !LD ? "LD" : "info");
    return ldlt_host(ctx, fn, dbl, LDLT_FACTOR | LDLT_STORE, n, 0, batch, A, NULL, NULL, NULL, LD,
                     info);
}

bcl_status bcl_ssytrf_ldlt(bcl_context *ctx, int n, size_t batch, const float *A, float *LD,
                           int *info)
{
    return sytrf(ctx, "bcl_ssytrf_ldlt", 0, n, batch, A, LD, info);
}

bcl_status bcl_dsytrf_ldlt(bcl_context *ctx, int n, size_t batch, const double *A, double *LD,
                           int *info)
{
    return sytrf(ctx, "bcl_dsytrf_ldlt", 1, n, batch, A, LD, info);
}

static bcl_status sytrs(bcl_context *ctx, const char *fn, int dbl, int n, int nrhs, size_t batch,
                        const void *LD, const void *B, void *X)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    bcl_status s = check_sizes(ctx, fn, n, nrhs, batch, dbl);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || nrhs == 0 || batch == 0)
        return BCL_SUCCESS;
    if (!LD || !B || !X)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument %d (%s) is NULL", fn,
                        !LD ? 5 : !B ? 6 : 7, !LD ? "LD" : !B ? "B" : "X");
    return ldlt_host(ctx, fn, dbl, LDLT_SOLVE, n, nrhs, batch, NULL, LD, B, X, NULL, NULL);
}

bcl_status bcl_ssytrs_ldlt(bcl_context *ctx, int n, int nrhs, size_t batch, const float *LD,
                           const float *B, float *X)
{
    return sytrs(ctx, "bcl_ssytrs_ldlt", 0, n, nrhs, batch, LD, B, X);
}

bcl_status bcl_dsytrs_ldlt(bcl_context *ctx, int n, int nrhs, size_t batch, const double *LD,
                           const double *B, double *X)
{
    return sytrs(ctx, "bcl_dsytrs_ldlt", 1, n, nrhs, batch, LD, B, X);
}

/* ---- device-buffer entry points ---- */

/* Checks shared by the device-buffer entry points, in argument order. */
static bcl_status check_cl_call(const bcl_context *ctx, const char *fn, int dbl, int n, int nrhs,
                                size_t batch, bcl_layout layout, cl_uint num_wait,
                                const cl_event *wait)
{
    bcl_status s = check_sizes(ctx, fn, n, nrhs, batch, dbl);
    if (s == BCL_SUCCESS)
        s = bcl_check_layout(ctx, fn, layout);
    if (s == BCL_SUCCESS)
        s = bcl_check_wait(ctx, fn, num_wait, wait);
    return s;
}

static bcl_status ldlt_device(bcl_context *ctx, const char *fn, int dbl, int mode, int n, int nrhs,
                              size_t batch, bcl_layout layout, cl_mem A, size_t offA, cl_mem LD,
                              size_t offLD, cl_mem B, size_t offB, cl_mem X, size_t offX,
                              cl_mem info, size_t offInfo, cl_uint num_wait,
                              const cl_event *wait, cl_event *event)
{
    bcl_status s = check_n_supported(ctx, fn, n, dbl);
    if (s != BCL_SUCCESS)
        return s;
    ldlt_plan plan;
    s = make_plan(ctx, fn, dbl, n, layout, &plan);
    if (s != BCL_SUCCESS)
        return s;
    ldlt_call call = {&plan, n, (mode & LDLT_SOLVE) ? nrhs : 1, mode};
    return enqueue_ldlt(ctx, &call, ctx->queue[0], layout, batch, batch, A, offA, B, offB, X, offX,
                        LD, offLD, info, offInfo, num_wait, wait, event);
}

static bcl_status sysv_cl(bcl_context *ctx, const char *fn, int dbl, bcl_method method, int n,
                          int nrhs, size_t batch, bcl_layout layout, cl_mem A, size_t offA,
                          cl_mem B, size_t offB, cl_mem X, size_t offX, cl_mem info,
                          size_t offInfo, cl_uint num_wait, const cl_event *wait, cl_event *event)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    bcl_status s = check_method(ctx, fn, method);
    if (s == BCL_SUCCESS)
        s = check_cl_call(ctx, fn, dbl, n, nrhs, batch, layout, num_wait, wait);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || nrhs == 0 || batch == 0)
        return bcl_empty_call(ctx, num_wait, wait, event);
    const size_t nb = (size_t)n * (size_t)nrhs;
    s = bcl_check_buffer(ctx, fn, 7, "A", A, offA, batch * (size_t)n * (size_t)n, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 9, "B", B, offB, batch * nb, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 11, "X", X, offX, batch * nb, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 13, "info", info, offInfo, batch, sizeof(int));
    if (s == BCL_SUCCESS && X == B && offX != offB)
        s = bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: X and B share a buffer at different offsets",
                     fn);
    if (s != BCL_SUCCESS)
        return s;
    if (method != BCL_LDLT)
        return bcl_symeig_sysv_cl(ctx, fn, dbl, method, n, nrhs, batch, layout, A, offA, B, offB,
                                  X, offX, info, offInfo, num_wait, wait, event);
    return ldlt_device(ctx, fn, dbl, LDLT_FACTOR | LDLT_SOLVE, n, nrhs, batch, layout, A, offA, NULL,
                       0, B, offB, X, offX, info, offInfo, num_wait, wait, event);
}

bcl_status bcl_ssysv_cl(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                        bcl_layout layout, cl_mem A, size_t offA, cl_mem B, size_t offB, cl_mem X,
                        size_t offX, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event)
{
    return sysv_cl(ctx, "bcl_ssysv_cl", 0, method, n, nrhs, batch, layout, A, offA, B, offB, X,
                   offX, info, offInfo, num_wait, wait_list, event);
}

bcl_status bcl_dsysv_cl(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                        bcl_layout layout, cl_mem A, size_t offA, cl_mem B, size_t offB, cl_mem X,
                        size_t offX, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event)
{
    return sysv_cl(ctx, "bcl_dsysv_cl", 1, method, n, nrhs, batch, layout, A, offA, B, offB, X,
                   offX, info, offInfo, num_wait, wait_list, event);
}

static bcl_status sytrf_cl(bcl_context *ctx, const char *fn, int dbl, int n, size_t batch,
                           bcl_layout layout, cl_mem A, size_t offA, cl_mem LD, size_t offLD,
                           cl_mem info, size_t offInfo, cl_uint num_wait, const cl_event *wait,
                           cl_event *event)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    bcl_status s = check_cl_call(ctx, fn, dbl, n, 0, batch, layout, num_wait, wait);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || batch == 0)
        return bcl_empty_call(ctx, num_wait, wait, event);
    s = bcl_check_buffer(ctx, fn, 5, "A", A, offA, batch * (size_t)n * (size_t)n, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 7, "LD", LD, offLD, batch * packed_size(n), es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 9, "info", info, offInfo, batch, sizeof(int));
    if (s != BCL_SUCCESS)
        return s;
    return ldlt_device(ctx, fn, dbl, LDLT_FACTOR | LDLT_STORE, n, 1, batch, layout, A, offA, LD,
                       offLD, NULL, 0, NULL, 0, info, offInfo, num_wait, wait, event);
}

bcl_status bcl_ssytrf_ldlt_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                              size_t offA, cl_mem LD, size_t offLD, cl_mem info, size_t offInfo,
                              cl_uint num_wait, const cl_event *wait_list, cl_event *event)
{
    return sytrf_cl(ctx, "bcl_ssytrf_ldlt_cl", 0, n, batch, layout, A, offA, LD, offLD, info,
                    offInfo, num_wait, wait_list, event);
}

bcl_status bcl_dsytrf_ldlt_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                              size_t offA, cl_mem LD, size_t offLD, cl_mem info, size_t offInfo,
                              cl_uint num_wait, const cl_event *wait_list, cl_event *event)
{
    return sytrf_cl(ctx, "bcl_dsytrf_ldlt_cl", 1, n, batch, layout, A, offA, LD, offLD, info,
                    offInfo, num_wait, wait_list, event);
}

static bcl_status sytrs_cl(bcl_context *ctx, const char *fn, int dbl, int n, int nrhs,
                           size_t batch, bcl_layout layout, cl_mem LD, size_t offLD, cl_mem B,
                           size_t offB, cl_mem X, size_t offX, cl_uint num_wait,
                           const cl_event *wait, cl_event *event)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    bcl_status s = check_cl_call(ctx, fn, dbl, n, nrhs, batch, layout, num_wait, wait);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || nrhs == 0 || batch == 0)
        return bcl_empty_call(ctx, num_wait, wait, event);
    const size_t nb = (size_t)n * (size_t)nrhs;
    s = bcl_check_buffer(ctx, fn, 6, "LD", LD, offLD, batch * packed_size(n), es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 8, "B", B, offB, batch * nb, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 10, "X", X, offX, batch * nb, es);
    if (s == BCL_SUCCESS && X == B && offX != offB)
        s = bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: X and B share a buffer at different offsets",
                     fn);
    if (s != BCL_SUCCESS)
        return s;
    return ldlt_device(ctx, fn, dbl, LDLT_SOLVE, n, nrhs, batch, layout, NULL, 0, LD, offLD, B,
                       offB, X, offX, NULL, 0, num_wait, wait, event);
}

bcl_status bcl_ssytrs_ldlt_cl(bcl_context *ctx, int n, int nrhs, size_t batch, bcl_layout layout,
                              cl_mem LD, size_t offLD, cl_mem B, size_t offB, cl_mem X, size_t offX,
                              cl_uint num_wait, const cl_event *wait_list, cl_event *event)
{
    return sytrs_cl(ctx, "bcl_ssytrs_ldlt_cl", 0, n, nrhs, batch, layout, LD, offLD, B, offB, X,
                    offX, num_wait, wait_list, event);
}

bcl_status bcl_dsytrs_ldlt_cl(bcl_context *ctx, int n, int nrhs, size_t batch, bcl_layout layout,
                              cl_mem LD, size_t offLD, cl_mem B, size_t offB, cl_mem X, size_t offX,
                              cl_uint num_wait, const cl_event *wait_list, cl_event *event)
{
    return sytrs_cl(ctx, "bcl_dsytrs_ldlt_cl", 1, n, nrhs, batch, layout, LD, offLD, B, offB, X,
                    offX, num_wait, wait_list, event);
}
