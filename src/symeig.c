/* Symmetric problems beyond LDL^T: Householder tridiagonalization (sytrd), divide and conquer
 * (stedc), eigendecomposition (syevd), and the solves BCL_HOUSEHOLDER_PCR, BCL_EIGEN, BCL_AUTO.
 * Kernels: cl/sytrd.cl, cl/stedc.cl, and the symmetric tridiagonal solve of cl/tridiag.cl. */
#include "internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_THRESHOLD 1e5
#define DEFAULT_AUTO_RESIDUAL 30.0

typedef struct {
    bcl_kernel_entry *k;
    char options[160];
    size_t group;     /* work-items per group */
    size_t per_group; /* problems per group */
    size_t local_bytes;
    int nt;           /* work-items per problem (or per VW problems) */
} kplan;

typedef struct {
    size_t size;
    const void *value;
} karg;

static size_t sytrd_local(int n, size_t es)
{
    return ((size_t)n * n + 5 * (size_t)n + 4) * es;
}

/* Local memory of one matrix in the rows-in-registers kernels (cl/sytrd.cl, SYTRD_REG): the
 * reflector columns, tau, d, e, p, the work-items' shares of p^T v and of v^T b for `cols`
 * right-hand sides, and a flag; the fused solve adds two buffers of `cols` right-hand sides and
 * the PCR's arrays. As REG_LOCAL there. */
static size_t sytrd_reg_local(int n, int nmax, int nt, int cols, int solve, size_t es)
{
    const size_t refl = ((size_t)n * (size_t)(n == nmax ? nmax + 1 : nmax) + 3) / 4 * 4;
    size_t r = refl + 4 * (size_t)nmax + ((size_t)(1 + cols) * (size_t)nt + 3) / 4 * 4 + 4;
    if (solve)
        r += 2 * (size_t)nmax * (size_t)cols + 6 * (size_t)nmax;
    return r * es;
}

/* The right-hand sides one launch of the fused Householder + PCR solve takes at most: each step
 * of the reduction applies its reflector to all of them, a work-item's rows held in registers. */
#define FUSED_MAX_COLS 8

/* Columns of Z the back-transformation stages in local memory at a time (-DBACK_COLS) */
#define BACK_COLS 16

/* The kernels count problems in 32 bits (slot = group * problems a group + w, uint): 2^31 keeps
 * the last group's slots below 2^32 too */
#define SYM_MAX_BATCH ((size_t)1 << 31)

static size_t stedc_local(int n, size_t es)
{
    return ((size_t)n * n + 10 * (size_t)n + 4) * es + (12 * (size_t)n + 4) * sizeof(int);
}

int bcl_syevd_max_n(const bcl_context *ctx, int dbl)
{
    if (!ctx)
        return 0;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    int n = 1;
    while (stedc_local(n + 1, es) <= ctx->dev.local_mem_bytes &&
           sytrd_local(n + 1, es) <= ctx->dev.local_mem_bytes &&
           (size_t)bcl_pow2_at_least(n + 1) <= ctx->dev.max_work_group_size && n < 4096)
        ++n;
    return n;
}

static void layout_options(char *out, size_t cap, const char *variant, int dbl, bcl_layout layout)
{
    snprintf(out, cap, "%s%s%s", variant, dbl ? " -DBCL_DOUBLE" : "",
             layout == BCL_LAYOUT_INTERLEAVED ? " -DBCL_INTERLEAVED" : "");
}

/* A kernel with `nt` work-items per problem (or per `vw` problems), `local_per` bytes of local
 * memory per work-item group, about `target` work-items per group. */
static bcl_status make_kplan(bcl_context *ctx, const char *fn, const char *file, const char *name,
                             const char *variant, int dbl, bcl_layout layout, int nt, int vw,
                             size_t local_per, size_t target, kplan *p)
{
    layout_options(p->options, sizeof p->options, variant, dbl, layout);
    bcl_status s = bcl_get_kernel(ctx, file, p->options, name, &p->k);
    if (s != BCL_SUCCESS)
        return s;
    const size_t local = ctx->dev.local_mem_bytes > p->k->static_local
                             ? ctx->dev.local_mem_bytes - (size_t)p->k->static_local
                             : 0;
    if ((size_t)nt > p->k->max_work_group || local_per > local)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: kernel %s needs %d work-items and %zu bytes of local memory per "
                        "problem; the device allows %zu work-items and has %zu bytes",
                        fn, name, nt, local_per, p->k->max_work_group, local);
    size_t groups = target / (size_t)nt ? target / (size_t)nt : 1;
    if (local_per && groups > local / local_per)
        groups = local / local_per;
    if (groups * (size_t)nt > p->k->max_work_group)
        groups = p->k->max_work_group / (size_t)nt;
    p->nt = nt;
    p->group = groups * (size_t)nt;
    p->per_group = groups * (size_t)vw;
    p->local_bytes = groups * local_per;
    return BCL_SUCCESS;
}

static bcl_status run(bcl_context *ctx, cl_command_queue q, const kplan *p, const karg *args,
                      int nargs, size_t problems, cl_event *event)
{
    cl_int err = CL_SUCCESS;
    int a = 0;
    for (; a < nargs && err == CL_SUCCESS; ++a)
        err = clSetKernelArg(p->k->kernel, (cl_uint)a, args[a].size, args[a].value);
    if (err == CL_SUCCESS && p->local_bytes)
        err = clSetKernelArg(p->k->kernel, (cl_uint)a, p->local_bytes, NULL);
    if (err != CL_SUCCESS)
        return bcl_fail(ctx, BCL_OPENCL_ERROR, "setting the arguments of kernel %s failed: %s",
                        p->k->name, bcl_cl_error_name(err));
    const size_t groups = (problems + p->per_group - 1) / p->per_group;
    const size_t global = groups * p->group;
    snprintf(ctx->last_kernel, sizeof ctx->last_kernel,
             "%s %s; %d work-items per problem, %zu problems and %zu work-items per group, %zu "
             "bytes of local memory",
             p->k->name, p->options, p->nt, p->per_group, p->group, p->local_bytes);
    cl_event ev = NULL; /* every launch is recorded for bcl_last_step_times */
    err = clEnqueueNDRangeKernel(q, p->k->kernel, 1, NULL, &global, &p->group, 0, NULL, &ev);
    if (err == CL_SUCCESS) {
        bcl_step_record(ctx, p->k->name, ev);
        if (event)
            *event = ev;
        else
            clReleaseEvent(ev);
    }
    if (err != CL_SUCCESS)
        return bcl_fail(ctx, err == CL_OUT_OF_RESOURCES ? BCL_UNSUPPORTED_SIZE : BCL_OPENCL_ERROR,
                        "launching kernel %s (%zu work-items per group) failed: %s", p->k->name,
                        p->group, bcl_cl_error_name(err));
    return BCL_SUCCESS;
}

#define ARG(x) {sizeof(x), &(x)}
#define NO_MEM ((cl_mem)NULL)

/* ---- the kernels of a problem size, precision and layout ---- */

typedef struct {
    int n, dbl;
    bcl_layout layout;
    kplan sytrd, apply, resid, stedc, back, solve;
    kplan fused;    /* sytrd_solve, when the rows-in-registers kernels are used (fused.k set) */
    int fused_cols; /* right-hand sides per launch of it */
    int stedc_zrow_reg; /* stedc merges Z in registers and leaves its scratch S unused */
    double threshold, auto_residual;
} sym_plans;

enum { NEED_SYTRD = 1, NEED_APPLY = 2, NEED_RESID = 4, NEED_STEDC = 8, NEED_SOLVE = 16 };
enum { SYTRD_FORM_Q = 1, SYTRD_APPLY_B = 2 }; /* as cl/sytrd.cl */

/* Work-items a collaborative group aims at: several matrices per group on GPUs (the tuning
 * entry's count, else 128 work-items); one matrix on CPUs, where a group runs on one core anyway
 * (and PoCL 3.1 lost local stores of the local-memory kernel with 64 matrices per group). */
static size_t collab_group_target(const bcl_context *ctx, const bcl_params *p, int nt)
{
    if (!ctx->dev.is_gpu)
        return (size_t)nt;
    return p->problems_per_group > 0 ? (size_t)p->problems_per_group * (size_t)nt : 128;
}

/* The rows-in-registers sytrd (and, for NEED_SOLVE, the fused sytrd_solve for nrhs right-hand
 * sides) of the collaborative mapping: NT work-items per matrix, a power of two from the tuning
 * entry or the heuristic, raised until a work-item's rows (RPT x NMAX values) fit 128 32-bit
 * registers. *used = 0 (and nothing built) where local memory or the work-group limit rules it
 * out: the local-memory kernel is used then. */
static bcl_status make_reg_plans(bcl_context *ctx, const char *fn, int dbl, int n,
                                 bcl_layout layout, int need, int nrhs, const bcl_params *p,
                                 sym_plans *sp, int *used)
{
    *used = 0;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const int nmax = n < 4 ? 4 : bcl_pow2_at_least(n), words = dbl ? 2 : 1;
    const int rpt_max = 128 / (nmax * words) > 1 ? 128 / (nmax * words) : 1;
    /* at least 2 work-items, and at most 8 rows each (the kernel's unrolled row slots) */
    int nt_min = nmax / rpt_max > 2 ? nmax / rpt_max : 2;
    nt_min = nt_min < nmax / 8 ? nmax / 8 : nt_min;
    /* default: 4 rows a work-item on GPUs (where the budget allows); one on CPUs, whose
     * compilers take long over the unrolled row blocks and whose groups run on one core anyway */
    int nt = p->work_items_per_problem > 0 ? bcl_pow2_at_least(p->work_items_per_problem)
             : ctx->dev.is_gpu            ? nmax / (rpt_max < 4 ? rpt_max : 4)
                                          : nmax;
    nt = nt < nt_min ? nt_min : nt > nmax ? nmax : nt;
    const size_t target = collab_group_target(ctx, p, nt);
    const size_t local = ctx->dev.local_mem_bytes;
    char variant[96];
    /* CPUs: the loops over the register rows rolled (PoCL 3.1: test_symeig solve on an empty
     * kernel cache 5.3 -> 2.9 min; syevd f32 of 4096 matrices n = 16 / 32 in the collaborative
     * mapping 92 / 463 -> 83 / 410 ms, its first call 6.8 -> 5.0 s, 2-core machine) */
    snprintf(variant, sizeof variant, "-DSYTRD_REG -DNT=%d -DNMAX=%d%s", nt, nmax,
             ctx->dev.is_gpu ? "" : " -DBCL_ROLLED");
    if (sytrd_reg_local(n, nmax, nt, 0, 0, es) > local)
        return BCL_SUCCESS;
    int cols = 0;
    if (need & NEED_SOLVE) {
        cols = nrhs < FUSED_MAX_COLS ? nrhs : FUSED_MAX_COLS;
        while (cols > 1 && sytrd_reg_local(n, nmax, nt, cols, 1, es) > local)
            --cols;
        if (sytrd_reg_local(n, nmax, nt, cols, 1, es) > local)
            return BCL_SUCCESS;
    }
    bcl_status s = make_kplan(ctx, fn, "sytrd.cl", "sytrd", variant, dbl, layout, nt, 1,
                              sytrd_reg_local(n, nmax, nt, 0, 0, es), target, &sp->sytrd);
    if (s == BCL_SUCCESS && (need & NEED_SOLVE)) {
        char solve_variant[sizeof variant + 40];
        snprintf(solve_variant, sizeof solve_variant, "%s -DSYTRD_SOLVE -DRHS_COLS=%d", variant,
                 cols);
        s = make_kplan(ctx, fn, "sytrd.cl", "sytrd_solve", solve_variant, dbl, layout, nt, 1,
                       sytrd_reg_local(n, nmax, nt, cols, 1, es), target, &sp->fused);
        sp->fused_cols = cols;
    }
    if (s == BCL_UNSUPPORTED_SIZE) { /* the kernel's own work-group limit: not an error here */
        bcl_clear_error(ctx);
        memset(&sp->sytrd, 0, sizeof sp->sytrd);
        memset(&sp->fused, 0, sizeof sp->fused);
        return BCL_SUCCESS;
    }
    *used = s == BCL_SUCCESS;
    return s;
}

static bcl_status make_plans(bcl_context *ctx, const char *fn, int dbl, int n, bcl_layout layout,
                             int need, int nrhs, sym_plans *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->n = n;
    sp->dbl = dbl;
    sp->layout = layout;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    bcl_params p;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_SYTRD, dbl, n, &p);
    sp->threshold = p.eigen_threshold > 0 ? p.eigen_threshold : DEFAULT_THRESHOLD;
    sp->auto_residual = p.auto_residual > 0 ? p.auto_residual : DEFAULT_AUTO_RESIDUAL;
    const int gpu_target = ctx->dev.is_gpu ? 128 : 2;
    char variant[64];
    bcl_status s = BCL_SUCCESS;
    int reg = 0;
    if ((need & NEED_SYTRD) && p.mapping != BCL_MAPPING_SIMD) {
        s = make_reg_plans(ctx, fn, dbl, n, layout, need, nrhs, &p, sp, &reg);
        if (s != BCL_SUCCESS)
            return s;
    }
    if ((need & NEED_SYTRD) && !reg) {
        /* SIMD: one matrix per work-item, vw of them in vector lanes; collaborative (where the
         * register kernel does not fit): NT rows shared, the matrix in local memory */
        const int simd = p.mapping == BCL_MAPPING_SIMD;
        int vw = simd && p.problems_per_work_item > 0 ? p.problems_per_work_item : 1;
        while (vw > 1 && sytrd_local(n, es) * (size_t)vw > ctx->dev.local_mem_bytes)
            vw /= 2; /* fewer lanes for large n: every lane holds its matrix in local memory */
        int nt = simd ? 1 : (p.work_items_per_problem > 0 ? p.work_items_per_problem : bcl_pow2_at_least(n));
        if (nt > 64 && !p.work_items_per_problem)
            nt = 64;
        snprintf(variant, sizeof variant, "-DNT=%d -DVW=%d", nt, vw);
        s = make_kplan(ctx, fn, "sytrd.cl", "sytrd", variant, dbl, layout, nt, vw,
                       sytrd_local(n, es) * (size_t)vw,
                       simd ? (size_t)(p.problems_per_group ? p.problems_per_group / vw : 2)
                            : collab_group_target(ctx, &p, nt),
                       &sp->sytrd);
        if (s != BCL_SUCCESS)
            return s;
    }
    const int nt_rows = ctx->dev.is_gpu ? (bcl_pow2_at_least(n) < 64 ? bcl_pow2_at_least(n) : 64) : 1;
    if (need & NEED_APPLY) {
        snprintf(variant, sizeof variant, "-DNT=%d", nt_rows);
        s = make_kplan(ctx, fn, "sytrd.cl", "sytrd_apply", variant, dbl, layout, nt_rows, 1,
                       (size_t)n * es, (size_t)gpu_target, &sp->apply);
        if (s != BCL_SUCCESS)
            return s;
    }
    if (need & (NEED_RESID | NEED_APPLY)) {
        /* GPUs: a work-item a row (up to 64 a problem); CPUs: one a problem, 8 problems a group */
        snprintf(variant, sizeof variant, "-DNT=%d", nt_rows);
        s = make_kplan(ctx, fn, "sytrd.cl", "residual", variant, dbl, layout, nt_rows, 1,
                       2 * (size_t)nt_rows * es, ctx->dev.is_gpu ? 128 : 8, &sp->resid);
        if (s != BCL_SUCCESS)
            return s;
    }
    if (need & NEED_STEDC) {
        const int nt = bcl_pow2_at_least(n);
        /* the merge's row of Z in registers where it fits 64 32-bit registers (GPUs) */
        const int zrow_reg = ctx->dev.is_gpu && nt * (dbl ? 2 : 1) <= 64;
        snprintf(variant, sizeof variant, "-DNT=%d%s", nt, zrow_reg ? " -DZROW_REG" : "");
        sp->stedc_zrow_reg = zrow_reg;
        s = make_kplan(ctx, fn, "stedc.cl", "stedc", variant, dbl, layout, nt, 1,
                       stedc_local(n, es), ctx->dev.is_gpu ? 64 : (size_t)nt, &sp->stedc);
        /* rows of Q in registers on GPUs up to NT = 128; beyond that (and on CPUs) the private
         * row would only spill, so the global-memory loop runs */
        const int back_reg = ctx->dev.is_gpu && nt <= 128;
        char back_variant[64];
        if (back_reg)
            snprintf(back_variant, sizeof back_variant, "-DNT=%d -DBACK_REG -DBACK_COLS=%d", nt,
                     BACK_COLS);
        else
            snprintf(back_variant, sizeof back_variant, "-DNT=%d", nt);
        if (s == BCL_SUCCESS)
            s = make_kplan(ctx, fn, "stedc.cl", "stedc_backtransform", back_variant, dbl, layout, nt,
                           1, back_reg ? BACK_COLS * (size_t)((nt + 3) / 4 * 4) * es : 0,
                           (size_t)gpu_target, &sp->back);
        if (s == BCL_SUCCESS)
            s = make_kplan(ctx, fn, "stedc.cl", "stedc_solve", variant, dbl, layout, 1, 1,
                           (size_t)n * es, ctx->dev.is_gpu ? 32 : 4, &sp->solve);
    }
    return s;
}

/* The arrays of one call on the device; offsets in elements; `stride` for the interleaved layout.
 * Scratch arrays (Q, d, e, W, Z, S, r) hold n*n, n, n, n, n*n, n*n, 1 values per problem. */
typedef struct {
    cl_mem A, B, X, info, resid_out;
    size_t offA, offB, offX, offInfo, offR;
    cl_mem Q, d, e, w, Z, S, r, index;
    size_t count, stride;
    int nrhs;
} sym_bufs;

/* sytrd over `problems` (the index list when not NULL) */
static bcl_status enq_sytrd(bcl_context *ctx, cl_command_queue q, const sym_plans *sp,
                            const sym_bufs *b, int mode, cl_mem B, size_t offB, cl_mem Y,
                            size_t offY, cl_mem index, size_t problems)
{
    const cl_ulong oA = b->offA, oB = offB, oY = offY, zero = 0, stride = b->stride;
    const cl_uint count = (cl_uint)problems;
    const karg args[] = {ARG(b->A), ARG(oA), ARG(b->Q), ARG(zero), ARG(b->d), ARG(zero), ARG(b->e),
                         ARG(zero), ARG(B), ARG(oB), ARG(Y), ARG(oY), ARG(sp->n), ARG(b->nrhs),
                         ARG(count), ARG(stride), ARG(mode), ARG(index)};
    return run(ctx, q, &sp->sytrd, args, 18, problems, NULL);
}

/* X = Q PCR(T, Q^T B) in one kernel, fused_cols right-hand sides a launch */
static bcl_status enq_fused(bcl_context *ctx, cl_command_queue q, const sym_plans *sp,
                            const sym_bufs *b, cl_mem B, size_t offB)
{
    const cl_ulong oA = b->offA, oB = offB, oX = b->offX, oI = b->offInfo, stride = b->stride;
    const cl_uint count = (cl_uint)b->count;
    bcl_status s = BCL_SUCCESS;
    for (int c0 = 0; c0 < b->nrhs && s == BCL_SUCCESS; c0 += sp->fused_cols) {
        const int cols = b->nrhs - c0 < sp->fused_cols ? b->nrhs - c0 : sp->fused_cols;
        const karg args[] = {ARG(b->A), ARG(oA), ARG(B),        ARG(oB),   ARG(b->X),
                             ARG(oX),   ARG(b->info), ARG(oI),  ARG(sp->n), ARG(b->nrhs),
                             ARG(c0),   ARG(cols),  ARG(count), ARG(stride)};
        s = run(ctx, q, &sp->fused, args, 14, b->count, NULL);
    }
    return s;
}

static bcl_status enq_resid(bcl_context *ctx, cl_command_queue q, const sym_plans *sp,
                            const sym_bufs *b, cl_mem B, size_t offB, cl_mem out, size_t offR)
{
    const cl_ulong oA = b->offA, oB = offB, oX = b->offX, oR = offR, stride = b->stride;
    const cl_uint count = (cl_uint)b->count;
    const karg args[] = {ARG(b->A), ARG(oA), ARG(B), ARG(oB), ARG(b->X), ARG(oX), ARG(out),
                         ARG(oR), ARG(sp->n), ARG(b->nrhs), ARG(count), ARG(stride)};
    return run(ctx, q, &sp->resid, args, 12, b->count, NULL);
}

/* stedc (d, e -> w, Z) and V = Q Z into S, over `problems` (the index list when not NULL) */
static bcl_status enq_eigen(bcl_context *ctx, cl_command_queue q, const sym_plans *sp,
                            const sym_bufs *b, cl_mem index, size_t problems, cl_mem info,
                            size_t offInfo, int backtransform)
{
    const cl_ulong zero = 0, oI = offInfo, stride = b->stride;
    const cl_uint count = (cl_uint)problems;
    const karg args[] = {ARG(b->d), ARG(zero), ARG(b->e), ARG(zero), ARG(b->w), ARG(zero),
                         ARG(b->Z), ARG(zero), ARG(b->S), ARG(zero), ARG(info), ARG(oI),
                         ARG(index), ARG(sp->n), ARG(count), ARG(stride)};
    bcl_status s = run(ctx, q, &sp->stedc, args, 16, problems, NULL);
    if (s != BCL_SUCCESS || !backtransform)
        return s;
    const karg bargs[] = {ARG(b->Q), ARG(zero), ARG(b->Z), ARG(zero), ARG(b->S), ARG(zero),
                          ARG(index), ARG(sp->n), ARG(count), ARG(stride)};
    return run(ctx, q, &sp->back, bargs, 10, problems, NULL);
}

/* X = V diag(1/lambda kept) V^T B with V in S, over `problems` */
static bcl_status enq_eigen_solve(bcl_context *ctx, cl_command_queue q, const sym_plans *sp,
                                  const sym_bufs *b, cl_mem B, size_t offB, cl_mem index,
                                  size_t problems)
{
    const cl_ulong zero = 0, oB = offB, oX = b->offX, oI = b->offInfo, stride = b->stride;
    const cl_uint count = (cl_uint)problems;
    const cl_double th64 = sp->threshold;
    const cl_float th32 = (cl_float)sp->threshold;
    const karg args[] = {ARG(b->S), ARG(zero), ARG(b->w), ARG(zero), ARG(B), ARG(oB), ARG(b->X),
                         ARG(oX), ARG(b->info), ARG(oI), ARG(index), ARG(sp->n), ARG(b->nrhs),
                         ARG(count), ARG(stride),
                         sp->dbl ? (karg)ARG(th64) : (karg)ARG(th32)};
    return run(ctx, q, &sp->solve, args, 16, problems, NULL);
}

/* ---- the solves ---- */

typedef struct {
    const sym_plans *sp;
    bcl_method method;
    int *path;      /* host, whole batch, or NULL */
    int want_resid; /* the caller wants residuals */
    int in_place;   /* X is B: B is copied first (the residual and the eigen path need it) */
} solve_job;

/* The whole solve of b->count problems whose arrays are in `b` (B possibly a copy of the
 * caller's); first: index of the first problem in the caller's batch (for path). */
static bcl_status enqueue_solve(bcl_context *ctx, cl_command_queue q, const solve_job *j,
                                sym_bufs *b, cl_mem B, size_t offB, size_t first)
{
    const sym_plans *sp = j->sp;
    const int n = sp->n;
    bcl_status s;
    if (j->method == BCL_EIGEN) {
        s = enq_sytrd(ctx, q, sp, b, SYTRD_FORM_Q, NO_MEM, 0, NO_MEM, 0, NO_MEM, b->count);
        if (s == BCL_SUCCESS)
            s = enq_eigen(ctx, q, sp, b, NO_MEM, b->count, NO_MEM, 0, 1);
        if (s == BCL_SUCCESS)
            s = enq_eigen_solve(ctx, q, sp, b, B, offB, NO_MEM, b->count);
        if (s == BCL_SUCCESS && j->path)
            for (size_t k = 0; k < b->count; ++k)
                j->path[first + k] = BCL_EIGEN;
    } else {
        if (sp->fused.k) /* Householder + PCR in one kernel (no Q in global memory) */
            s = enq_fused(ctx, q, sp, b, B, offB);
        else /* Householder + PCR: Y = Q^T B into X, T z = Y in place, X = Q z */
            s = enq_sytrd(ctx, q, sp, b, SYTRD_FORM_Q | SYTRD_APPLY_B, B, offB, b->X, b->offX,
                          NO_MEM, b->count);
        if (s == BCL_SUCCESS && !sp->fused.k)
            s = bcl_ptsv_enqueue(ctx, q, "BCL_HOUSEHOLDER_PCR", sp->dbl, n, b->nrhs, b->count,
                                 sp->layout, b->stride, b->d, b->e, b->X, b->offX, b->info,
                                 b->offInfo);
        if (s == BCL_SUCCESS && !sp->fused.k) {
            const cl_ulong zero = 0, oX = b->offX, oB = offB, oI = b->offInfo, stride = b->stride;
            const cl_uint count = (cl_uint)b->count;
            const cl_mem Bk = j->in_place ? NO_MEM : B;
            const karg args[] = {ARG(b->Q), ARG(zero), ARG(b->X), ARG(oX), ARG(Bk), ARG(oB),
                                 ARG(b->info), ARG(oI), ARG(n), ARG(b->nrhs), ARG(count),
                                 ARG(stride)};
            s = run(ctx, q, &sp->apply, args, 12, b->count, NULL);
        }
        if (s == BCL_SUCCESS && j->path && j->method != BCL_AUTO)
            for (size_t k = 0; k < b->count; ++k)
                j->path[first + k] = BCL_HOUSEHOLDER_PCR;
        if (s == BCL_SUCCESS && j->method == BCL_AUTO) {
            /* residual check: the problems above the threshold (or failed) go to the eigen path */
            s = enq_resid(ctx, q, sp, b, B, offB, b->r, 0);
            const size_t es = sp->dbl ? sizeof(double) : sizeof(float);
            void *res = malloc(b->count * es);
            int *inf = malloc(b->count * sizeof *inf);
            cl_uint *idx = malloc(b->count * sizeof *idx);
            size_t nbad = 0;
            if (!res || !inf || !idx)
                s = bcl_fail(ctx, BCL_OUT_OF_MEMORY, "BCL_AUTO: out of host memory");
            cl_int err = CL_SUCCESS;
            if (s == BCL_SUCCESS)
                err = clEnqueueReadBuffer(q, b->r, CL_TRUE, 0, b->count * es, res, 0, NULL, NULL);
            if (s == BCL_SUCCESS && err == CL_SUCCESS)
                err = clEnqueueReadBuffer(q, b->info, CL_TRUE, b->offInfo * sizeof(int),
                                          b->count * sizeof(int), inf, 0, NULL, NULL);
            if (s == BCL_SUCCESS && err != CL_SUCCESS)
                s = bcl_cl_fail(ctx, err, "BCL_AUTO: reading the residuals");
            for (size_t k = 0; s == BCL_SUCCESS && k < b->count; ++k) {
                const double r = sp->dbl ? ((double *)res)[k] : ((float *)res)[k];
                const int bad = inf[k] != 0 || !(r <= sp->auto_residual);
                if (bad)
                    idx[nbad++] = (cl_uint)k;
                if (j->path)
                    j->path[first + k] = bad ? BCL_EIGEN : BCL_HOUSEHOLDER_PCR;
            }
            if (s == BCL_SUCCESS && nbad) {
                err = clEnqueueWriteBuffer(q, b->index, CL_TRUE, 0, nbad * sizeof(cl_uint), idx, 0,
                                           NULL, NULL);
                if (err != CL_SUCCESS)
                    s = bcl_cl_fail(ctx, err, "BCL_AUTO: writing the index of the second pass");
                /* the eigen path, compacted: only the listed problems (their Q, d and e first,
                 * where the fused kernel did not leave them) */
                if (s == BCL_SUCCESS && sp->fused.k)
                    s = enq_sytrd(ctx, q, sp, b, SYTRD_FORM_Q, NO_MEM, 0, NO_MEM, 0, b->index, nbad);
                if (s == BCL_SUCCESS)
                    s = enq_eigen(ctx, q, sp, b, b->index, nbad, NO_MEM, 0, 1);
                if (s == BCL_SUCCESS)
                    s = enq_eigen_solve(ctx, q, sp, b, B, offB, b->index, nbad);
            }
            free(res);
            free(inf);
            free(idx);
        }
    }
    if (s == BCL_SUCCESS && j->want_resid)
        s = enq_resid(ctx, q, sp, b, B, offB, b->resid_out, b->offR);
    return s;
}

/* ---- host pointers ---- */

/* streams: A, B in; X (maybe B itself), info, [residual] out; scratch Q d e w Z S r index Bcopy */
typedef struct {
    solve_job job;
    int nrhs, has_resid;
} host_solve;

static bcl_status host_solve_enqueue(bcl_context *ctx, void *user, cl_command_queue q,
                                     const cl_mem *in, const cl_mem *out, const cl_mem *scratch,
                                     size_t first, size_t count, cl_event *done)
{
    const host_solve *h = user;
    const size_t es = h->job.sp->dbl ? sizeof(double) : sizeof(float);
    sym_bufs b;
    memset(&b, 0, sizeof b);
    b.A = in[0];
    b.X = out[0];
    b.info = out[1];
    b.resid_out = h->has_resid ? out[2] : NO_MEM;
    b.Q = scratch[0];
    b.d = scratch[1];
    b.e = scratch[2];
    b.w = scratch[3];
    b.Z = scratch[4];
    b.S = scratch[5];
    b.r = scratch[6];
    b.index = scratch[7];
    b.count = count;
    b.stride = count;
    b.nrhs = h->nrhs;
    cl_mem B = in[1];
    if (h->job.in_place) { /* X overwrites B: the residual and the eigen path need B */
        const size_t bytes = count * (size_t)h->job.sp->n * (size_t)h->nrhs * es;
        cl_int err = clEnqueueCopyBuffer(q, B, scratch[8], 0, 0, bytes, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            return bcl_cl_fail(ctx, err, "copying B");
        B = scratch[8];
    }
    bcl_status s = enqueue_solve(ctx, q, &h->job, &b, B, 0, first);
    if (s == BCL_SUCCESS) {
        cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, done);
        if (err != CL_SUCCESS)
            s = bcl_cl_fail(ctx, err, "clEnqueueMarkerWithWaitList");
    }
    return s;
}

static bcl_status check_eigen_size(const bcl_context *ctx, const char *fn, int n, int dbl)
{
    if (dbl && !ctx->dev.has_fp64)
        return bcl_no_fp64(ctx, fn);
    const int max_n = bcl_syevd_max_n(ctx, dbl);
    if (n > max_n)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: n = %d exceeds the largest size this device's local memory holds for "
                        "the eigen routines (%d)",
                        fn, n, max_n);
    return BCL_SUCCESS;
}

/* sysv with BCL_HOUSEHOLDER_PCR, BCL_EIGEN or BCL_AUTO from host pointers (arguments checked) */
bcl_status bcl_symeig_sysv(bcl_context *ctx, const char *fn, int dbl, bcl_method method, int n,
                           int nrhs, size_t batch, const void *A, const void *B, void *X,
                           int *info, void *residual, int *path)
{
    bcl_status s = check_eigen_size(ctx, fn, n, dbl);
    if (s != BCL_SUCCESS)
        return s;
    sym_plans sp;
    const int need = method == BCL_EIGEN ? NEED_SYTRD | NEED_STEDC | NEED_RESID
                     : method == BCL_AUTO ? NEED_SYTRD | NEED_SOLVE | NEED_APPLY | NEED_RESID | NEED_STEDC
                                          : NEED_SYTRD | NEED_SOLVE | NEED_APPLY | NEED_RESID;
    bcl_steps_reset(ctx, 0);
    s = make_plans(ctx, fn, dbl, n, BCL_LAYOUT_CONTIGUOUS, need, nrhs, &sp);
    if (s != BCL_SUCCESS)
        return s;
    const size_t es = dbl ? sizeof(double) : sizeof(float), nn = (size_t)n * n,
                 nb = (size_t)n * (size_t)nrhs;
    host_solve h;
    memset(&h, 0, sizeof h);
    h.job.sp = &sp;
    h.job.method = method;
    h.job.path = path;
    h.job.want_resid = residual != NULL;
    h.job.in_place = X == B;
    h.nrhs = nrhs;
    h.has_resid = residual != NULL;
    bcl_params p;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_SYTRD, dbl, n, &p);
    bcl_job job;
    memset(&job, 0, sizeof job);
    job.batch = batch;
    job.chunk = p.chunk_problems;
    job.queues = p.queues;
    job.enqueue = host_solve_enqueue;
    job.user = &h;
    job.in[job.n_in++] = (bcl_stream_in){A, nn * es};
    job.in[job.n_in++] = (bcl_stream_in){B, nb * es};
    job.out[job.n_out++] = (bcl_stream_out){X, nb * es, X == B ? 1 : -1};
    job.out[job.n_out++] = (bcl_stream_out){info, sizeof(int), -1};
    if (residual)
        job.out[job.n_out++] = (bcl_stream_out){residual, es, -1};
    const int eig = method != BCL_HOUSEHOLDER_PCR;
    const size_t scratch[9] = {nn * es, (size_t)n * es, (size_t)n * es, eig ? (size_t)n * es : 0,
                               eig ? nn * es : 0, eig ? nn * es : 0, es, sizeof(cl_uint),
                               X == B ? nb * es : 0};
    for (int i = 0; i < 9; ++i)
        job.scratch[job.n_scratch++] = scratch[i];
    s = bcl_pipeline_run(ctx, &job);
    if (s != BCL_SUCCESS)
        return s;
    /* failures: PCR pivots (info > 0 on that path) or non-finite eigenvalues (n + 1) */
    size_t failed = 0, first = 0;
    for (size_t k = 0; k < batch; ++k) {
        const int on_eigen = method == BCL_EIGEN || (path && path[k] == BCL_EIGEN);
        const int bad = on_eigen ? info[k] == n + 1 : info[k] != 0;
        if (bad && failed++ == 0)
            first = k;
    }
    if (!failed)
        return BCL_SUCCESS;
    return bcl_fail(ctx, BCL_NUMERICAL_FAILURE,
                    "%s: %zu of %zu problems failed (first: problem %zu, info %d); the others are "
                    "solved",
                    fn, failed, batch, first, info[first]);
}

/* residuals of X for the LDL^T method: A, B, X in; residual out */
typedef struct {
    const kplan *p;
    int n, nrhs;
} resid_job;

static bcl_status resid_enqueue(bcl_context *ctx, void *user, cl_command_queue q, const cl_mem *in,
                                const cl_mem *out, const cl_mem *scratch, size_t first,
                                size_t count, cl_event *done)
{
    (void)scratch;
    (void)first;
    const resid_job *r = user;
    const cl_ulong zero = 0, stride = count;
    const cl_uint c = (cl_uint)count;
    const karg args[] = {ARG(in[0]), ARG(zero), ARG(in[1]), ARG(zero), ARG(in[2]), ARG(zero),
                         ARG(out[0]), ARG(zero), ARG(r->n), ARG(r->nrhs), ARG(c), ARG(stride)};
    return run(ctx, q, r->p, args, 12, count, done);
}

bcl_status bcl_residual_host(bcl_context *ctx, const char *fn, int dbl, int n, int nrhs,
                             size_t batch, const void *A, const void *B, const void *X,
                             void *residual)
{
    sym_plans sp;
    bcl_steps_reset(ctx, 0);
    bcl_status s = make_plans(ctx, fn, dbl, n, BCL_LAYOUT_CONTIGUOUS, NEED_RESID, 0, &sp);
    if (s != BCL_SUCCESS)
        return s;
    const size_t es = dbl ? sizeof(double) : sizeof(float), nb = (size_t)n * (size_t)nrhs;
    resid_job r = {&sp.resid, n, nrhs};
    bcl_job job;
    memset(&job, 0, sizeof job);
    job.batch = batch;
    job.enqueue = resid_enqueue;
    job.user = &r;
    job.in[job.n_in++] = (bcl_stream_in){A, (size_t)n * n * es};
    job.in[job.n_in++] = (bcl_stream_in){B, nb * es};
    job.in[job.n_in++] = (bcl_stream_in){X, nb * es};
    job.out[job.n_out++] = (bcl_stream_out){residual, es, -1};
    return bcl_pipeline_run(ctx, &job);
}

/* ---- sytrd, stedc, syevd from host pointers ---- */

typedef struct {
    const sym_plans *sp;
    int what; /* 0 sytrd, 1 stedc, 2 syevd */
} eig_job;

static bcl_status eig_enqueue(bcl_context *ctx, void *user, cl_command_queue q, const cl_mem *in,
                              const cl_mem *out, const cl_mem *scratch, size_t first, size_t count,
                              cl_event *done)
{
    (void)first;
    const eig_job *j = user;
    sym_bufs b;
    memset(&b, 0, sizeof b);
    b.count = count;
    b.stride = count;
    b.nrhs = 1;
    bcl_status s;
    if (j->what == 0) { /* A -> Q, d, e */
        b.A = in[0];
        b.Q = out[0];
        b.d = out[1];
        b.e = out[2];
        s = enq_sytrd(ctx, q, j->sp, &b, SYTRD_FORM_Q, NO_MEM, 0, NO_MEM, 0, NO_MEM, b.count);
    } else if (j->what == 1) { /* d (in place -> w), e -> Z, info */
        b.d = in[0];
        b.e = in[1];
        b.w = out[0];
        b.Z = out[1];
        b.S = j->sp->stedc_zrow_reg ? NO_MEM : scratch[0];
        s = enq_eigen(ctx, q, j->sp, &b, NO_MEM, count, out[2], 0, 0);
    } else { /* A -> w, V (= S), info */
        b.A = in[0];
        b.w = out[0];
        b.S = out[1];
        b.Q = scratch[0];
        b.d = scratch[1];
        b.e = scratch[2];
        b.Z = scratch[3];
        s = enq_sytrd(ctx, q, j->sp, &b, SYTRD_FORM_Q, NO_MEM, 0, NO_MEM, 0, NO_MEM, b.count);
        if (s == BCL_SUCCESS)
            s = enq_eigen(ctx, q, j->sp, &b, NO_MEM, count, out[2], 0, 1);
    }
    if (s == BCL_SUCCESS) {
        cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, done);
        if (err != CL_SUCCESS)
            s = bcl_cl_fail(ctx, err, "clEnqueueMarkerWithWaitList");
    }
    return s;
}

static bcl_status check_n(const bcl_context *ctx, const char *fn, int n, size_t batch, int dbl)
{
    if (n < 0)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 2 (n = %d) must be >= 0", fn, n);
    const size_t per = (size_t)n * (size_t)n * (dbl ? 8 : 4) * 4;
    if (per && batch > (size_t)-1 / per)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: batch = %zu problems overflow the address space", fn, batch);
    return BCL_SUCCESS;
}

static bcl_status eig_host(bcl_context *ctx, const char *fn, int dbl, int what, int n,
                           size_t batch, const void *A, void *d, const void *e, void *Q, void *W,
                           void *V, int *info)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    bcl_status s = check_n(ctx, fn, n, batch, dbl);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || batch == 0)
        return BCL_SUCCESS;
    const size_t es = dbl ? sizeof(double) : sizeof(float), nn = (size_t)n * n;
    /* NULL and overlap checks, in argument order */
    const char *names0[] = {"A", "Q", "d", "e"}, *names1[] = {"d", "e", "Z", "info"},
               *names2[] = {"A", "W", "V", "info"};
    const void *p0[] = {A, Q, d, e}, *p1[] = {d, e, V, info}, *p2[] = {A, W, V, info};
    const char **names = what == 0 ? names0 : what == 1 ? names1 : names2;
    const void **ptrs = what == 0 ? p0 : what == 1 ? p1 : p2;
    const size_t sizes0[] = {nn * es, nn * es, n * es, (n - 1) * es},
                 sizes1[] = {n * es, (n - 1) * es, nn * es, sizeof(int)},
                 sizes2[] = {nn * es, n * es, nn * es, sizeof(int)};
    const size_t *sizes = what == 0 ? sizes0 : what == 1 ? sizes1 : sizes2;
    for (int i = 0; i < 4; ++i) {
        if (!ptrs[i] && sizes[i])
            return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument %d (%s) is NULL", fn, i + 4,
                            names[i]);
        for (int j = 0; j < i; ++j)
            if (bcl_overlaps(ptrs[i], batch * sizes[i], ptrs[j], batch * sizes[j]))
                return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: %s overlaps %s", fn, names[i],
                                names[j]);
    }
    s = check_eigen_size(ctx, fn, n, dbl);
    if (s != BCL_SUCCESS)
        return s;
    sym_plans sp;
    bcl_steps_reset(ctx, 0);
    s = make_plans(ctx, fn, dbl, n, BCL_LAYOUT_CONTIGUOUS, what == 1 ? NEED_STEDC : what == 0 ? NEED_SYTRD : NEED_SYTRD | NEED_STEDC, 0, &sp);
    if (s != BCL_SUCCESS)
        return s;
    eig_job ej = {&sp, what};
    bcl_params p;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_SYTRD, dbl, n, &p);
    bcl_job job;
    memset(&job, 0, sizeof job);
    job.batch = batch;
    job.chunk = p.chunk_problems;
    job.queues = p.queues;
    job.enqueue = eig_enqueue;
    job.user = &ej;
    if (what == 0) {
        job.in[job.n_in++] = (bcl_stream_in){A, nn * es};
        job.out[job.n_out++] = (bcl_stream_out){Q, nn * es, -1};
        job.out[job.n_out++] = (bcl_stream_out){d, (size_t)n * es, -1};
        job.out[job.n_out++] = (bcl_stream_out){(void *)e, (size_t)(n - 1) * es, -1};
    } else if (what == 1) {
        job.in[job.n_in++] = (bcl_stream_in){d, (size_t)n * es};
        job.in[job.n_in++] = (bcl_stream_in){e, (size_t)(n - 1) * es};
        job.out[job.n_out++] = (bcl_stream_out){d, (size_t)n * es, 0};
        job.out[job.n_out++] = (bcl_stream_out){V, nn * es, -1};
        job.out[job.n_out++] = (bcl_stream_out){info, sizeof(int), -1};
        if (!sp.stedc_zrow_reg) /* the merges' product scratch S */
            job.scratch[job.n_scratch++] = nn * es;
    } else {
        job.in[job.n_in++] = (bcl_stream_in){A, nn * es};
        job.out[job.n_out++] = (bcl_stream_out){W, (size_t)n * es, -1};
        job.out[job.n_out++] = (bcl_stream_out){V, nn * es, -1};
        job.out[job.n_out++] = (bcl_stream_out){info, sizeof(int), -1};
        job.scratch[job.n_scratch++] = nn * es;
        job.scratch[job.n_scratch++] = (size_t)n * es;
        job.scratch[job.n_scratch++] = (size_t)n * es;
        job.scratch[job.n_scratch++] = nn * es;
    }
    s = bcl_pipeline_run(ctx, &job);
    if (s != BCL_SUCCESS || what == 0)
        return s;
    return bcl_summarize_info(ctx, fn, "eigenvalues not finite", info, batch);
}

bcl_status bcl_ssytrd(bcl_context *ctx, int n, size_t batch, const float *A, float *Q, float *d,
                      float *e)
{
    return eig_host(ctx, "bcl_ssytrd", 0, 0, n, batch, A, d, e, Q, NULL, NULL, NULL);
}

bcl_status bcl_dsytrd(bcl_context *ctx, int n, size_t batch, const double *A, double *Q, double *d,
                      double *e)
{
    return eig_host(ctx, "bcl_dsytrd", 1, 0, n, batch, A, d, e, Q, NULL, NULL, NULL);
}

bcl_status bcl_sstedc(bcl_context *ctx, int n, size_t batch, float *d, const float *e, float *Z,
                      int *info)
{
    return eig_host(ctx, "bcl_sstedc", 0, 1, n, batch, NULL, d, e, NULL, NULL, Z, info);
}

bcl_status bcl_dstedc(bcl_context *ctx, int n, size_t batch, double *d, const double *e, double *Z,
                      int *info)
{
    return eig_host(ctx, "bcl_dstedc", 1, 1, n, batch, NULL, d, e, NULL, NULL, Z, info);
}

bcl_status bcl_ssyevd(bcl_context *ctx, int n, size_t batch, const float *A, float *W, float *V,
                      int *info)
{
    return eig_host(ctx, "bcl_ssyevd", 0, 2, n, batch, A, NULL, NULL, NULL, W, V, info);
}

bcl_status bcl_dsyevd(bcl_context *ctx, int n, size_t batch, const double *A, double *W, double *V,
                      int *info)
{
    return eig_host(ctx, "bcl_dsyevd", 1, 2, n, batch, A, NULL, NULL, NULL, W, V, info);
}

/* ---- device buffers ---- */

static bcl_status syevd_cl(bcl_context *ctx, const char *fn, int dbl, int n, size_t batch,
                           bcl_layout layout, cl_mem A, size_t offA, cl_mem W, size_t offW,
                           cl_mem V, size_t offV, cl_mem info, size_t offInfo, cl_uint num_wait,
                           const cl_event *wait, cl_event *event)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    const size_t es = dbl ? sizeof(double) : sizeof(float), nn = (size_t)n * n;
    bcl_status s = check_n(ctx, fn, n, batch, dbl);
    if (s == BCL_SUCCESS)
        s = bcl_check_layout(ctx, fn, layout);
    if (s == BCL_SUCCESS)
        s = bcl_check_wait(ctx, fn, num_wait, wait);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || batch == 0)
        return bcl_empty_call(ctx, num_wait, wait, event);
    s = bcl_check_buffer(ctx, fn, 5, "A", A, offA, batch * nn, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 7, "W", W, offW, batch * (size_t)n, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 9, "V", V, offV, batch * nn, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 11, "info", info, offInfo, batch, sizeof(int));
    if (s == BCL_SUCCESS)
        s = check_eigen_size(ctx, fn, n, dbl);
    if (s == BCL_SUCCESS && batch > SYM_MAX_BATCH)
        s = bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                     "%s: batch = %zu exceeds %zu problems per device-buffer call; split it", fn,
                     batch, SYM_MAX_BATCH);
    sym_plans sp;
    bcl_steps_reset(ctx, 0);
    if (s == BCL_SUCCESS)
        s = make_plans(ctx, fn, dbl, n, layout, NEED_SYTRD | NEED_STEDC, 0, &sp);
    if (s != BCL_SUCCESS)
        return s;
    /* the kernels address every array with one layout: with offsets, work in scratch arrays of
     * the same layout and copy W and V out (no offsets: in place) */
    if (layout == BCL_LAYOUT_INTERLEAVED && (offA || offW || offV || offInfo))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: the interleaved layout takes offsets of 0 for this routine", fn);
    sym_bufs b;
    memset(&b, 0, sizeof b);
    b.A = A;
    b.offA = offA;
    b.count = batch;
    b.stride = batch;
    b.nrhs = 1;
    cl_mem Q = NULL, d = NULL, e = NULL, Z = NULL;
    s = bcl_scratch(ctx, 0, batch * nn * es, &Q);
    if (s == BCL_SUCCESS)
        s = bcl_scratch(ctx, 1, batch * (size_t)n * es, &d);
    if (s == BCL_SUCCESS)
        s = bcl_scratch(ctx, 2, batch * (size_t)n * es, &e);
    if (s == BCL_SUCCESS)
        s = bcl_scratch(ctx, 3, batch * nn * es, &Z);
    if (s != BCL_SUCCESS)
        return s;
    b.Q = Q;
    b.d = d;
    b.e = e;
    b.Z = Z;
    cl_command_queue q = ctx->queue[0];
    if (num_wait) {
        cl_int err = clEnqueueBarrierWithWaitList(q, num_wait, wait, NULL);
        if (err != CL_SUCCESS)
            return bcl_cl_fail(ctx, err, "clEnqueueBarrierWithWaitList");
    }
    s = enq_sytrd(ctx, q, &sp, &b, SYTRD_FORM_Q, NO_MEM, 0, NO_MEM, 0, NO_MEM, b.count);
    if (s != BCL_SUCCESS)
        return s;
    /* stedc and the back-transformation write W, V (and use V's space as the product scratch S
     * only when contiguous at offset 0: otherwise scratch then copy) */
    cl_mem Wd = W, Vd = V;
    const int direct = offW == 0 && offV == 0 && offInfo == 0;
    if (!direct) {
        s = bcl_scratch(ctx, 4, batch * (size_t)n * es, &Wd);
        if (s == BCL_SUCCESS)
            s = bcl_scratch(ctx, 5, batch * nn * es, &Vd);
        if (s != BCL_SUCCESS)
            return s;
    }
    cl_mem infod = info;
    if (!direct && (s = bcl_scratch(ctx, 6, batch * sizeof(int), &infod)) != BCL_SUCCESS)
        return s;
    b.w = Wd;
    b.S = Vd;
    s = enq_eigen(ctx, q, &sp, &b, NO_MEM, batch, infod, 0, 1);
    if (s != BCL_SUCCESS)
        return s;
    if (!direct) {
        cl_int err = clEnqueueCopyBuffer(q, Wd, W, 0, offW * es, batch * (size_t)n * es, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clEnqueueCopyBuffer(q, Vd, V, 0, offV * es, batch * nn * es, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clEnqueueCopyBuffer(q, infod, info, 0, offInfo * sizeof(int), batch * sizeof(int), 0,
                                      NULL, NULL);
        if (err != CL_SUCCESS)
            return bcl_cl_fail(ctx, err, "copying the results");
    }
    if (event) {
        cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, event);
        if (err != CL_SUCCESS)
            return bcl_cl_fail(ctx, err, "clEnqueueMarkerWithWaitList");
    }
    return BCL_SUCCESS;
}

bcl_status bcl_ssyevd_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                         size_t offA, cl_mem W, size_t offW, cl_mem V, size_t offV, cl_mem info,
                         size_t offInfo, cl_uint num_wait, const cl_event *wait_list,
                         cl_event *event)
{
    return syevd_cl(ctx, "bcl_ssyevd_cl", 0, n, batch, layout, A, offA, W, offW, V, offV, info,
                    offInfo, num_wait, wait_list, event);
}

bcl_status bcl_dsyevd_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                         size_t offA, cl_mem W, size_t offW, cl_mem V, size_t offV, cl_mem info,
                         size_t offInfo, cl_uint num_wait, const cl_event *wait_list,
                         cl_event *event)
{
    return syevd_cl(ctx, "bcl_dsyevd_cl", 1, n, batch, layout, A, offA, W, offW, V, offV, info,
                    offInfo, num_wait, wait_list, event);
}

/* sysv's Householder / eigen methods on device buffers: the work arrays come from the context's
 * scratch; BCL_AUTO waits for its first pass to pick the problems of the second. */
bcl_status bcl_symeig_sysv_cl(bcl_context *ctx, const char *fn, int dbl, bcl_method method, int n,
                              int nrhs, size_t batch, bcl_layout layout, cl_mem A, size_t offA,
                              cl_mem B, size_t offB, cl_mem X, size_t offX, cl_mem info,
                              size_t offInfo, cl_uint num_wait, const cl_event *wait,
                              cl_event *event)
{
    bcl_status s = check_eigen_size(ctx, fn, n, dbl);
    if (s != BCL_SUCCESS)
        return s;
    if (batch > SYM_MAX_BATCH)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: batch = %zu exceeds %zu problems per device-buffer call; split it", fn,
                        batch, SYM_MAX_BATCH);
    if (layout == BCL_LAYOUT_INTERLEAVED && (offA || offB || offX || offInfo))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: the interleaved layout takes offsets of 0 with this method", fn);
    sym_plans sp;
    bcl_steps_reset(ctx, 0);
    s = make_plans(ctx, fn, dbl, n, layout,
                   NEED_SYTRD | (method == BCL_EIGEN ? 0 : NEED_SOLVE) | NEED_APPLY | NEED_RESID |
                       NEED_STEDC,
                   nrhs, &sp);
    if (s != BCL_SUCCESS)
        return s;
    const size_t es = dbl ? sizeof(double) : sizeof(float), nn = (size_t)n * n;
    sym_bufs b;
    memset(&b, 0, sizeof b);
    b.A = A;
    b.offA = offA;
    b.X = X;
    b.offX = offX;
    b.info = info;
    b.offInfo = offInfo;
    b.count = batch;
    b.stride = batch;
    b.nrhs = nrhs;
    const size_t sizes[8] = {nn * es, (size_t)n * es, (size_t)n * es, (size_t)n * es, nn * es,
                             nn * es, es, sizeof(cl_uint)};
    cl_mem *dst[8] = {&b.Q, &b.d, &b.e, &b.w, &b.Z, &b.S, &b.r, &b.index};
    for (int i = 0; i < 8 && s == BCL_SUCCESS; ++i)
        s = bcl_scratch(ctx, i, batch * sizes[i], dst[i]);
    cl_mem Bc = B;
    size_t offBc = offB;
    if (s == BCL_SUCCESS && X == B) { /* in place: keep B for the residual and the eigen path */
        s = bcl_scratch(ctx, 8, batch * (size_t)n * (size_t)nrhs * es, &Bc);
        offBc = 0;
    }
    if (s != BCL_SUCCESS)
        return s;
    cl_command_queue q = ctx->queue[0];
    cl_int err = num_wait ? clEnqueueBarrierWithWaitList(q, num_wait, wait, NULL) : CL_SUCCESS;
    if (err == CL_SUCCESS && Bc != B)
        err = clEnqueueCopyBuffer(q, B, Bc, offB * es, 0, batch * (size_t)n * (size_t)nrhs * es, 0,
                                  NULL, NULL);
    if (err != CL_SUCCESS)
        return bcl_cl_fail(ctx, err, "preparing the solve");
    solve_job j = {&sp, method, NULL, 0, X == B};
    s = enqueue_solve(ctx, q, &j, &b, Bc, offBc, 0);
    if (s == BCL_SUCCESS && event) {
        err = clEnqueueMarkerWithWaitList(q, 0, NULL, event);
        if (err != CL_SUCCESS)
            s = bcl_cl_fail(ctx, err, "clEnqueueMarkerWithWaitList");
    }
    return s;
}
