/* Eigenvalues (and right eigenvectors) of batched non-symmetric matrices: argument checks, the
 * choice of thread mapping per step (Tokura et al. 2017: SWB / MWB, p work-items per matrix),
 * scratch arrays, and the host-pointer / device-buffer entry points. Kernels: cl/geev.cl (steps),
 * cl/layout.cl (rearrangement between MW, EW and RW). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEEV_MAX_N 256
/* must match cl/geev.cl */
#define GEEV_WANTT 1
#define GEEV_WANTZ 2
#define QR_SLOT_INTS 2  /* per matrix: the two scan result slots */
#define QR_SLOT_REALS 3 /* per matrix: the start vector */
#define QR_GROUP_INTS 5 /* per group: which kinds of round its matrices want next (two rounds' worth), the rounds of its sweeps */
#define HESS_INTS_PER_MATRIX 4

/* scratch arrays of a chunk */
enum { SCR_AW = 0, SCR_H, SCR_ZD, SCR_X, SCR_COUNT };

/* Device-buffer calls process the batch in chunks whose scratch stays within this share of the
 * device memory. */
#define CL_SCRATCH_SHARE 8

typedef struct {
    bcl_kernel_entry *kernel;
    char options[192];
    bcl_mapping mapping;
    int p;              /* work-items per matrix */
    int bulges;         /* QR step: bulges chased at once in a sweep (1 or 2) */
    size_t group;       /* work-items per group */
    size_t mpg;         /* matrices per group */
    size_t lstride;     /* local reals per matrix */
    size_t local_bytes; /* the per-matrix local buffer of the whole group */
} geev_step;

typedef struct {
    int dbl, n, wantv, sweeps_max;
    size_t es;
    geev_step hess, qr, vec;
    int work_layout;       /* arrangement of H, Z, D between the steps: EW when a step is MWB */
    int hess_layout;       /* -1: the Hessenberg step reads A as it is; else a copy in this layout */
    bcl_kernel_entry *relayout;
    size_t relayout_group;
} geev_plan;

static size_t packed(int n)
{
    return (size_t)n * (size_t)(n + 7) / 2;
}

static size_t odd_up(size_t x)
{
    return x | 1;
}

static const char *map_name(bcl_mapping m)
{
    return m == BCL_MAPPING_MWB ? "MWB" : "SWB";
}

/* Default p for a step when the table's was overridden by a forced mapping: the heuristic's. */
static int default_p(const bcl_context *ctx, int n, int qr)
{
    bcl_params h;
    memset(&h, 0, sizeof h);
    bcl_geev_heuristic(&ctx->dev, 1, n, &h);
    return qr ? h.qr_work_items : h.work_items_per_problem;
}

/* Local reals per matrix of each kernel (cl/geev.cl's storage). */
static size_t step_lstride(int which, bcl_mapping map, int n, int wantz)
{
    const size_t lda = (size_t)(n | 1), nn = lda * (size_t)n;
    const size_t tsz = (packed(n) + 2) / 2 * 2 + 1;
    const int swb = map == BCL_MAPPING_SWB;
    switch (which) {
    case 0: /* hessenberg: work (2n), D (n), misc (8); SWB: A and Z in front */
        return odd_up((swb ? (wantz ? 2 : 1) * nn : 0) + 3 * (size_t)n + 8);
    case 1: /* qr: H band-packed and Z (SWB) */
        return swb ? odd_up(tsz + (wantz ? nn : 0)) : 1;
    default: /* vectors: T, Z, X (SWB) */
        return swb ? odd_up(tsz + 2 * nn) : 1;
    }
}

/* Local bytes beside the per-matrix buffer: Hessenberg flags; QR start vectors, scan results and
 * group flags. */
static size_t step_extra_bytes(int which, size_t mpg, size_t es)
{
    if (which == 0)
        return (HESS_INTS_PER_MATRIX * mpg + 1) * sizeof(int);
    if (which == 1)
        return mpg * (QR_SLOT_INTS * sizeof(int) + QR_SLOT_REALS * es) + QR_GROUP_INTS * sizeof(int);
    return 0;
}

static const char *const kernel_names[3] = {"geev_hessenberg", "geev_qr", "geev_vectors"};

/* Build the kernel of step `which` and shape its groups: SWB takes floor(W/p) matrices per
 * subgroup (fewer when local memory is short) and `ppg` matrices per group; MWB W matrices per
 * group of p subgroups (fewer when the group or local memory is too large). BCL_UNSUPPORTED_SIZE
 * when nothing fits. */
static bcl_status plan_step(bcl_context *ctx, const char *fn, const geev_plan *pl, int which,
                            bcl_mapping map, int p, size_t ppg, int specialize, int bulges,
                            geev_step *st)
{
    const int n = pl->n, wantz = pl->wantv;
    const size_t es = pl->es;
    const size_t W = ctx->dev.work_group_multiple ? ctx->dev.work_group_multiple : 1;
    memset(st, 0, sizeof *st);
    st->mapping = map;
    st->p = p;
    st->bulges = bulges; /* 1 for the steps other than QR */
    st->lstride = step_lstride(which, map, n, wantz);
    char fixed[48] = "";
    if (specialize > 0)
        snprintf(fixed, sizeof fixed, " -DNFIX=%d", n);
    if (st->bulges == 2) {
        if (map != BCL_MAPPING_SWB || p % 2 != 0)
            return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                            "%s: qr_bulges = 2 needs the SWB mapping for the QR step with an even "
                            "number of work-items per matrix (qr_work_items); it has %s, p = %d",
                            fn, map_name(map), p);
        snprintf(fixed + strlen(fixed), sizeof fixed - strlen(fixed), " -DQR_BULGES=2");
    }
    const size_t local = ctx->dev.local_mem_bytes;
    if (map == BCL_MAPPING_SWB) {
        if ((size_t)p > W)
            return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                            "%s: the SWB mapping takes at most one subgroup (%zu work-items) per "
                            "matrix; p = %d",
                            fn, W, p);
        size_t msub = W / (size_t)p;
        const size_t per_matrix = st->lstride * es + step_extra_bytes(which, 1, es);
        /* fewer matrices per subgroup when local memory holds fewer */
        while (msub > 1 && msub * per_matrix + 64 > local)
            --msub;
        snprintf(st->options, sizeof st->options, "-DGEEV_SWB -DP=%d -DWSUB=%zu -DMSUB=%zu%s%s", p,
                 W, msub, fixed, pl->dbl ? " -DBCL_DOUBLE" : "");
        bcl_status s = bcl_get_kernel(ctx, "geev.cl", st->options, kernel_names[which],
                                      &st->kernel);
        if (s != BCL_SUCCESS)
            return s;
        const size_t avail = local > st->kernel->static_local ? local - st->kernel->static_local : 0;
        size_t nsub = ppg ? (ppg + msub - 1) / msub : 1;
        if (nsub < 1)
            nsub = 1;
        while (nsub > 1 && (nsub * W > st->kernel->max_work_group ||
                            nsub * msub * per_matrix + 64 > avail))
            --nsub;
        if (W > st->kernel->max_work_group || msub * per_matrix + 64 > avail)
            return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                            "%s: the SWB mapping for n = %d needs %zu bytes of local memory per "
                            "matrix%s; the device has %zu",
                            fn, n, per_matrix, wantz ? " with eigenvectors" : "", avail);
        st->group = nsub * W;
        st->mpg = nsub * msub;
    } else {
        snprintf(st->options, sizeof st->options, "-DGEEV_MWB -DP=%d%s%s", p, fixed,
                 pl->dbl ? " -DBCL_DOUBLE" : "");
        bcl_status s = bcl_get_kernel(ctx, "geev.cl", st->options, kernel_names[which],
                                      &st->kernel);
        if (s != BCL_SUCCESS)
            return s;
        const size_t avail = local > st->kernel->static_local ? local - st->kernel->static_local : 0;
        const size_t per_matrix = st->lstride * es + step_extra_bytes(which, 1, es);
        size_t mw = ppg ? ppg : W;
        while (mw > 1 && (mw * (size_t)p > st->kernel->max_work_group || mw * per_matrix + 64 > avail))
            --mw;
        if ((size_t)p > st->kernel->max_work_group || per_matrix + 64 > avail)
            return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                            "%s: the MWB mapping with p = %d does not fit a work-group of this "
                            "device (%zu work-items, %zu bytes of local memory)",
                            fn, p, st->kernel->max_work_group, avail);
        st->group = mw * (size_t)p;
        st->mpg = mw;
    }
    st->local_bytes = st->mpg * st->lstride * es;
    return BCL_SUCCESS;
}

static bcl_mapping valid_map(bcl_mapping m)
{
    return m == BCL_MAPPING_MWB ? BCL_MAPPING_MWB : BCL_MAPPING_SWB;
}

static bcl_status make_plan(bcl_context *ctx, const char *fn, int dbl, int n, int wantv,
                            geev_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->dbl = dbl;
    pl->n = n;
    pl->wantv = wantv;
    pl->es = dbl ? sizeof(double) : sizeof(float);
    bcl_params p;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_GEEV, dbl, n, &p);
    pl->sweeps_max = p.qr_sweeps_max;
    pl->hess_layout = p.hess_layout > 0 ? p.hess_layout - 1 : -1;

    /* the small rearrangement kernel first: its build tells the subgroup width where the
     * device has no vendor query */
    char options[64];
    snprintf(options, sizeof options, "%s", dbl ? "-DBCL_DOUBLE" : "");
    bcl_status s = bcl_get_kernel(ctx, "layout.cl", options, "batch_relayout", &pl->relayout);
    if (s != BCL_SUCCESS)
        return s;
    pl->relayout_group = pl->relayout->max_work_group < 256 ? pl->relayout->max_work_group : 256;

    const bcl_mapping hmap = valid_map(p.mapping), qmap = valid_map(p.qr_mapping);
    const int hp = p.work_items_per_problem > 0 ? p.work_items_per_problem : default_p(ctx, n, 0);
    const int qp = p.qr_work_items > 0 ? p.qr_work_items : default_p(ctx, n, 1);
    const size_t ppg = (size_t)p.problems_per_group;
    const int forced_h = ctx->forced.mapping != BCL_MAPPING_AUTO;
    const int forced_q = ctx->forced.qr_mapping != BCL_MAPPING_AUTO;
    /* a table choice that does not fit falls back to MWB (global memory); a forced one fails */
    s = plan_step(ctx, fn, pl, 0, hmap, hp, ppg, p.specialize, 1, &pl->hess);
    if (s == BCL_UNSUPPORTED_SIZE && hmap == BCL_MAPPING_SWB && !forced_h)
        s = plan_step(ctx, fn, pl, 0, BCL_MAPPING_MWB, 1, 0, p.specialize, 1, &pl->hess);
    if (s != BCL_SUCCESS)
        return s;
    /* two bulges where the table asks for them and the QR step can split its work-items; a
     * forced qr_bulges = 2 that cannot is refused */
    int bulges = p.qr_bulges == 2 ? 2 : 1;
    if (bulges == 2 && !ctx->forced.qr_bulges && (qmap != BCL_MAPPING_SWB || qp % 2 != 0))
        bulges = 1;
    s = plan_step(ctx, fn, pl, 1, qmap, qp, ppg, p.specialize, bulges, &pl->qr);
    if (s == BCL_UNSUPPORTED_SIZE && qmap == BCL_MAPPING_SWB && !forced_q)
        s = plan_step(ctx, fn, pl, 1, BCL_MAPPING_MWB, 1, 0, p.specialize, 1, &pl->qr);
    if (s != BCL_SUCCESS)
        return s;
    if (wantv) {
        /* the eigenvector step keeps the QR step's mapping where its three arrays fit */
        s = plan_step(ctx, fn, pl, 2, pl->qr.mapping, pl->qr.p, ppg, p.specialize, 1, &pl->vec);
        if (s == BCL_UNSUPPORTED_SIZE && pl->qr.mapping == BCL_MAPPING_SWB)
            s = plan_step(ctx, fn, pl, 2, BCL_MAPPING_MWB, 1, 0, p.specialize, 1, &pl->vec);
        if (s != BCL_SUCCESS)
            return s;
    }
    const int any_mwb = pl->hess.mapping == BCL_MAPPING_MWB || pl->qr.mapping == BCL_MAPPING_MWB ||
                        (wantv && pl->vec.mapping == BCL_MAPPING_MWB);
    pl->work_layout = any_mwb ? BCL_LAYOUT_INTERLEAVED : BCL_LAYOUT_CONTIGUOUS;
    if (pl->hess.mapping == BCL_MAPPING_MWB)
        pl->hess_layout = BCL_LAYOUT_INTERLEAVED;
    return BCL_SUCCESS;
}

/* Scratch bytes per matrix of each array (SCR_*; 0 when the plan does not use it); returns the
 * total and sets *largest to the largest single one. */
static size_t scratch_sizes(const geev_plan *pl, size_t bytes[SCR_COUNT], size_t *largest)
{
    const size_t nn = (size_t)pl->n * (size_t)pl->n, es = pl->es;
    bytes[SCR_H] = (packed(pl->n) + 1) * es;
    bytes[SCR_AW] = pl->hess_layout >= 0 ? nn * es : 0;
    bytes[SCR_ZD] = pl->wantv ? (nn + (size_t)pl->n) * es : 0;
    bytes[SCR_X] = pl->wantv && pl->vec.mapping == BCL_MAPPING_MWB ? nn * es : 0;
    size_t total = 0, big = 0;
    for (int i = 0; i < SCR_COUNT; ++i) {
        total += bytes[i];
        big = bytes[i] > big ? bytes[i] : big;
    }
    if (largest)
        *largest = big;
    return total;
}

static void describe(bcl_context *ctx, const geev_plan *pl)
{
    const geev_step *steps[3] = {&pl->hess, &pl->qr, &pl->vec};
    const char *names[3] = {"hessenberg", "qr", "vectors"};
    const char *arranged = pl->hess_layout == BCL_LAYOUT_INTERLEAVED ? "EW"
                           : pl->hess_layout == BCL_LAYOUT_ROWWISE  ? "RW"
                           : pl->hess_layout == 0                   ? "MW"
                                                                    : "as given";
    size_t len = (size_t)snprintf(ctx->last_kernel, sizeof ctx->last_kernel,
                                  "geev (%.60s; A %s)", pl->hess.options, arranged);
    for (int i = 0; i < (pl->wantv ? 3 : 2) && len < sizeof ctx->last_kernel; ++i)
        len += (size_t)snprintf(ctx->last_kernel + len, sizeof ctx->last_kernel - len,
                                "; %s %s, p = %d%s, %zu matrices and %zu work-items per group, %zu "
                                "bytes of local memory",
                                names[i], map_name(steps[i]->mapping), steps[i]->p,
                                steps[i]->bulges == 2 ? " (two bulges)" : "", steps[i]->mpg,
                                steps[i]->group, steps[i]->local_bytes);
}

/* Where problem `first` of an array in `layout` starts: elements from its offset. */
static size_t chunk_offset(int layout, size_t first, size_t per, int n, int square)
{
    if (layout == BCL_LAYOUT_INTERLEAVED)
        return first;
    if (layout == BCL_LAYOUT_ROWWISE && square)
        return first * (size_t)n;
    return first * per;
}

/* A chunk's arrays: the call's (with the layout and stride of the whole batch) and the scratch. */
typedef struct {
    int layout;     /* of A, wr, wi, VR */
    cl_ulong stride; /* their EW/RW stride: the batch of the call */
    cl_mem A, wr, wi, VR, info;
    cl_ulong offA, offWr, offWi, offVR, offInfo;
} geev_io;

static bcl_status launch(bcl_context *ctx, cl_command_queue q, bcl_kernel_entry *k, size_t groups,
                         size_t group, const char *step, cl_uint num_wait, const cl_event *wait,
                         cl_event *ev)
{
    const size_t global = groups * group;
    cl_int err = clEnqueueNDRangeKernel(q, k->kernel, 1, NULL, &global, &group, num_wait, wait, ev);
    if (err != CL_SUCCESS)
        return bcl_fail(ctx, err == CL_OUT_OF_RESOURCES ? BCL_UNSUPPORTED_SIZE : BCL_OPENCL_ERROR,
                        "launching the geev %s kernel (%zu work-items per group) failed: %s", step,
                        group, bcl_cl_error_name(err));
    bcl_step_record(ctx, step, *ev);
    return BCL_SUCCESS;
}

/* a local argument may not be empty */
static size_t local_size(size_t bytes)
{
    return bytes ? bytes : 1;
}

#define ARG(v) err |= clSetKernelArg(kk, a++, sizeof(v), &(v))
/* a global array as the kernels take it: buffer, offset, arrangement, EW/RW stride */
#define ARG_ARRAY(buf, off, lay, stride)                                                        \
    do {                                                                                        \
        ARG(buf);                                                                               \
        ARG(off);                                                                               \
        ARG(lay);                                                                               \
        ARG(stride);                                                                            \
    } while (0)
#define ARG_LOCAL(bytes) err |= clSetKernelArg(kk, a++, local_size(bytes), NULL)

/* Enqueue the steps for `count` problems starting at problem `first` of io's arrays, on q, with
 * scratch arrays scr[SCR_*] sized for `count` matrices (NULL where the plan needs none). *done:
 * the event of the last command. */
static bcl_status enqueue_chunk(bcl_context *ctx, const geev_plan *pl, cl_command_queue q,
                                const cl_mem *scr, const geev_io *io, size_t first, size_t count,
                                cl_uint num_wait, const cl_event *wait, cl_event *done)
{
    const int n = pl->n;
    const size_t nn = (size_t)n * (size_t)n, es = pl->es;
    const int wantv = pl->wantv, wl = pl->work_layout;
    cl_mem Aw = scr[SCR_AW], Hs = scr[SCR_H], ZD = scr[SCR_ZD], Xs = scr[SCR_X];
    bcl_status s = BCL_SUCCESS;
    const cl_ulong cstride = count, zero = 0, offD = count * nn;
    const cl_uint ucount = (cl_uint)count;
    const cl_ulong offA = io->offA + chunk_offset(io->layout, first, nn, n, 1);
    const cl_ulong offWr = io->offWr + chunk_offset(io->layout, first, (size_t)n, n, 0);
    const cl_ulong offWi = io->offWi + chunk_offset(io->layout, first, (size_t)n, n, 0);
    const cl_ulong offVR = io->offVR + chunk_offset(io->layout, first, nn, n, 1);
    const cl_ulong offInfo = io->offInfo + first;
    const int lio = io->layout;
    cl_event ev = NULL, prev = NULL;
    cl_int err = CL_SUCCESS;
    int a;
    cl_kernel kk;

    /* rearrangement of A for the Hessenberg step */
    cl_mem hA = io->A;
    cl_ulong hoff = offA, hstride = io->stride;
    int hlay = lio;
    if (pl->hess_layout >= 0) {
        const size_t avail = ctx->dev.local_mem_bytes > pl->relayout->static_local
                                 ? ctx->dev.local_mem_bytes - pl->relayout->static_local
                                 : 0;
        const size_t budget = avail < ((size_t)32 << 10) ? avail : ((size_t)32 << 10);
        /* kpg whole matrices per group through local memory; 0: a matrix does not fit (n >= 79
         * in double on 48 KiB), copied element by element */
        cl_uint kpg = (cl_uint)(budget / (nn * es));
        kpg = kpg > 64 ? 64 : kpg;
        const cl_uint unn = (cl_uint)nn;
        const int dlay = pl->hess_layout;
        kk = pl->relayout->kernel;
        a = 0;
        ARG_ARRAY(io->A, offA, lio, io->stride);
        ARG_ARRAY(Aw, zero, dlay, cstride);
        ARG(unn);
        ARG(n);
        ARG(ucount);
        ARG(kpg);
        ARG_LOCAL(kpg ? (size_t)kpg * nn * es : es);
        if (err != CL_SUCCESS)
            return bcl_fail(ctx, BCL_OPENCL_ERROR, "setting the rearrangement kernel's arguments");
        s = launch(ctx, q, pl->relayout, kpg ? (count + kpg - 1) / kpg : count, pl->relayout_group, "rearrange",
                   num_wait, wait, &ev);
        if (s != BCL_SUCCESS)
            return s;
        num_wait = 0;
        wait = NULL;
        prev = ev;
        hA = Aw;
        hoff = 0;
        hstride = cstride;
        hlay = dlay;
    }

    /* Hessenberg */
    {
        const geev_step *st = &pl->hess;
        const int flags = wantv ? GEEV_WANTZ : 0;
        const int mwb = st->mapping == BCL_MAPPING_MWB;
        const cl_uint lstride = (cl_uint)st->lstride;
        cl_mem Ain = mwb ? NULL : hA, Wk = mwb ? hA : NULL, Zb = wantv ? ZD : NULL;
        kk = st->kernel->kernel;
        a = 0;
        err = CL_SUCCESS;
        ARG_ARRAY(Ain, hoff, hlay, hstride);
        ARG(Wk);
        ARG(hoff);
        ARG(hstride);
        ARG_ARRAY(Hs, zero, wl, cstride);
        ARG_ARRAY(Zb, zero, wl, cstride);
        ARG(Zb);
        ARG(offD);
        ARG(n);
        ARG(ucount);
        ARG(flags);
        ARG(lstride);
        ARG_LOCAL(st->local_bytes);
        ARG_LOCAL(step_extra_bytes(0, st->mpg, es));
        if (err != CL_SUCCESS)
            s = bcl_fail(ctx, BCL_OPENCL_ERROR, "setting the Hessenberg kernel's arguments");
        else
            s = launch(ctx, q, st->kernel, (count + st->mpg - 1) / st->mpg, st->group,
                       "hessenberg", num_wait, wait, &ev);
        if (prev)
            clReleaseEvent(prev);
        if (s != BCL_SUCCESS)
            return s;
        prev = ev;
    }

    /* QR */
    {
        const geev_step *st = &pl->qr;
        const int flags = wantv ? GEEV_WANTT | GEEV_WANTZ : 0;
        const cl_uint lstride = (cl_uint)st->lstride;
        const int sweeps = pl->sweeps_max;
        cl_mem Zb = wantv ? ZD : NULL;
        kk = st->kernel->kernel;
        a = 0;
        err = CL_SUCCESS;
        ARG_ARRAY(Hs, zero, wl, cstride);
        ARG_ARRAY(Zb, zero, wl, cstride);
        ARG(io->wr);
        ARG(offWr);
        ARG(io->wi);
        ARG(offWi);
        ARG(lio);
        ARG(io->stride);
        ARG(io->info);
        ARG(offInfo);
        ARG(n);
        ARG(ucount);
        ARG(flags);
        ARG(sweeps);
        ARG(lstride);
        ARG_LOCAL(st->local_bytes);
        ARG_LOCAL(st->mpg * QR_SLOT_REALS * es);
        ARG_LOCAL((st->mpg * QR_SLOT_INTS + QR_GROUP_INTS) * sizeof(int));
        if (err != CL_SUCCESS)
            s = bcl_fail(ctx, BCL_OPENCL_ERROR, "setting the QR kernel's arguments");
        else
            s = launch(ctx, q, st->kernel, (count + st->mpg - 1) / st->mpg, st->group, "qr", 0,
                       NULL, &ev);
        clReleaseEvent(prev);
        if (s != BCL_SUCCESS)
            return s;
        prev = ev;
    }

    /* eigenvectors */
    if (wantv) {
        const geev_step *st = &pl->vec;
        const cl_uint lstride = (cl_uint)st->lstride;
        kk = st->kernel->kernel;
        a = 0;
        err = CL_SUCCESS;
        ARG_ARRAY(Hs, zero, wl, cstride);
        ARG_ARRAY(ZD, zero, wl, cstride);
        ARG(ZD);
        ARG(offD);
        ARG(Xs);
        ARG(zero);
        ARG(io->info);
        ARG(offInfo);
        ARG_ARRAY(io->VR, offVR, lio, io->stride);
        ARG(n);
        ARG(ucount);
        ARG(lstride);
        ARG_LOCAL(st->local_bytes);
        if (err != CL_SUCCESS)
            s = bcl_fail(ctx, BCL_OPENCL_ERROR, "setting the eigenvector kernel's arguments");
        else
            s = launch(ctx, q, st->kernel, (count + st->mpg - 1) / st->mpg, st->group, "vectors",
                       0, NULL, &ev);
        clReleaseEvent(prev);
        if (s != BCL_SUCCESS)
            return s;
        prev = ev;
    }
    *done = prev;
    return BCL_SUCCESS;
}

#undef ARG
#undef ARG_ARRAY
#undef ARG_LOCAL

/* ---- host-pointer entry points ---- */

typedef struct {
    const geev_plan *plan;
} host_job;

/* Streams: A in; wr, wi, (VR,) info out; scratch SCR_*. */
static bcl_status host_enqueue(bcl_context *ctx, void *user, cl_command_queue q, const cl_mem *in,
                               const cl_mem *out, const cl_mem *scratch, size_t first,
                               size_t count, cl_event *done)
{
    (void)first; /* the chunk's arrays start at its first problem */
    const host_job *j = user;
    const int wantv = j->plan->wantv;
    geev_io io = {BCL_LAYOUT_CONTIGUOUS, count, in[0], out[0], out[1], wantv ? out[2] : NULL,
                  out[wantv ? 3 : 2], 0, 0, 0, 0, 0};
    return enqueue_chunk(ctx, j->plan, q, scratch, &io, 0, count, 0, NULL, done);
}

static bcl_status check_sizes(const bcl_context *ctx, const char *fn, int n, size_t batch, int dbl)
{
    if (n < 0)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 2 (n = %d) must be >= 0", fn, n);
    const size_t per = (size_t)n * (size_t)n * (dbl ? sizeof(double) : sizeof(float));
    if (per && batch > (size_t)-1 / per)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: argument 3 (batch = %zu) overflows the address space", fn, batch);
    return BCL_SUCCESS;
}

static bcl_status check_supported(const bcl_context *ctx, const char *fn, int n, int dbl)
{
    if (dbl && !ctx->dev.has_fp64)
        return bcl_no_fp64(ctx, fn);
    if (n > GEEV_MAX_N)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE, "%s: n = %d exceeds the largest size, %d", fn,
                        n, GEEV_MAX_N);
    return BCL_SUCCESS;
}

static bcl_status geev_host(bcl_context *ctx, const char *fn, int dbl, int n, size_t batch,
                            const void *A, void *wr, void *wi, void *VR, int *info)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    bcl_status s = check_sizes(ctx, fn, n, batch, dbl);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || batch == 0)
        return BCL_SUCCESS;
    if (!A || !wr || !wi || !info)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument %d (%s) is NULL", fn,
                        !A ? 4 : !wr ? 5 : !wi ? 6 : 8, !A ? "A" : !wr ? "wr" : !wi ? "wi" : "info");
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t vb = (size_t)n * es, mb = (size_t)n * vb;
    struct {
        const void *p;
        size_t len;
        const char *name;
    } arr[5] = {{A, batch * mb, "A"},
                {wr, batch * vb, "wr"},
                {wi, batch * vb, "wi"},
                {VR, VR ? batch * mb : 0, "VR"},
                {info, batch * sizeof(int), "info"}};
    for (int o = 1; o < 5; ++o)
        for (int i = 0; i < o; ++i)
            if (bcl_overlaps(arr[o].p, arr[o].len, arr[i].p, arr[i].len))
                return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: %s overlaps %s", fn, arr[o].name,
                                arr[i].name);
    s = check_supported(ctx, fn, n, dbl);
    if (s != BCL_SUCCESS)
        return s;
    geev_plan plan;
    s = make_plan(ctx, fn, dbl, n, VR != NULL, &plan);
    if (s != BCL_SUCCESS)
        return s;
    describe(ctx, &plan);
    bcl_params p;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_GEEV, dbl, n, &p);

    host_job hj = {&plan};
    bcl_job job;
    memset(&job, 0, sizeof job);
    job.batch = batch;
    job.chunk = p.chunk_problems;
    job.queues = p.queues;
    job.enqueue = host_enqueue;
    job.user = &hj;
    job.n_scratch = SCR_COUNT;
    scratch_sizes(&plan, job.scratch, NULL);
    job.in[job.n_in++] = (bcl_stream_in){A, mb};
    job.out[job.n_out++] = (bcl_stream_out){wr, vb, -1};
    job.out[job.n_out++] = (bcl_stream_out){wi, vb, -1};
    if (VR)
        job.out[job.n_out++] = (bcl_stream_out){VR, mb, -1};
    job.out[job.n_out++] = (bcl_stream_out){info, sizeof(int), -1};
    bcl_steps_reset(ctx, 1);
    s = bcl_pipeline_run(ctx, &job);
    ctx->recording = 0;
    if (s != BCL_SUCCESS)
        return s;
    return bcl_summarize_info(ctx, fn, "eigenvalues not all computed: a non-finite entry or no "
                              "convergence of the QR iteration", info, batch);
}

bcl_status bcl_sgeev(bcl_context *ctx, int n, size_t batch, const float *A, float *wr, float *wi,
                     float *VR, int *info)
{
    return geev_host(ctx, "bcl_sgeev", 0, n, batch, A, wr, wi, VR, info);
}

bcl_status bcl_dgeev(bcl_context *ctx, int n, size_t batch, const double *A, double *wr,
                     double *wi, double *VR, int *info)
{
    return geev_host(ctx, "bcl_dgeev", 1, n, batch, A, wr, wi, VR, info);
}

/* ---- device-buffer entry points ---- */

static bcl_status geev_cl(bcl_context *ctx, const char *fn, int dbl, int n, size_t batch,
                          bcl_layout layout, cl_mem A, size_t offA, cl_mem wr, size_t offWr,
                          cl_mem wi, size_t offWi, cl_mem VR, size_t offVR, cl_mem info,
                          size_t offInfo, cl_uint num_wait, const cl_event *wait, cl_event *event)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    bcl_status s = check_sizes(ctx, fn, n, batch, dbl);
    if (s != BCL_SUCCESS)
        return s;
    if (layout != BCL_LAYOUT_CONTIGUOUS && layout != BCL_LAYOUT_INTERLEAVED &&
        layout != BCL_LAYOUT_ROWWISE)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 4 (layout = %d) is not a bcl_layout",
                        fn, (int)layout);
    s = bcl_check_wait(ctx, fn, num_wait, wait);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || batch == 0)
        return bcl_empty_call(ctx, num_wait, wait, event);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t nn = (size_t)n * (size_t)n;
    s = bcl_check_buffer(ctx, fn, 5, "A", A, offA, batch * nn, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 7, "wr", wr, offWr, batch * (size_t)n, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 9, "wi", wi, offWi, batch * (size_t)n, es);
    if (s == BCL_SUCCESS && VR)
        s = bcl_check_buffer(ctx, fn, 11, "VR", VR, offVR, batch * nn, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 13, "info", info, offInfo, batch, sizeof(int));
    if (s != BCL_SUCCESS)
        return s;
    /* outputs sharing a buffer with each other or with A must not overlap */
    struct {
        cl_mem m;
        size_t lo, len;
        const char *name;
    } arr[5] = {{A, offA * es, batch * nn * es, "A"},
                {wr, offWr * es, batch * (size_t)n * es, "wr"},
                {wi, offWi * es, batch * (size_t)n * es, "wi"},
                {VR, offVR * es, VR ? batch * nn * es : 0, "VR"},
                {info, offInfo * sizeof(int), batch * sizeof(int), "info"}};
    for (int o = 1; o < 5; ++o)
        for (int i = 0; i < o; ++i)
            if (arr[o].m && arr[o].m == arr[i].m && arr[o].len && arr[i].len &&
                arr[o].lo < arr[i].lo + arr[i].len && arr[i].lo < arr[o].lo + arr[o].len)
                return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: %s overlaps %s in the same buffer",
                                fn, arr[o].name, arr[i].name);
    s = check_supported(ctx, fn, n, dbl);
    if (s != BCL_SUCCESS)
        return s;
    geev_plan plan;
    s = make_plan(ctx, fn, dbl, n, VR != NULL, &plan);
    if (s != BCL_SUCCESS)
        return s;
    describe(ctx, &plan);
    /* chunks whose scratch stays within a share of the device memory */
    size_t largest = 0, bytes[SCR_COUNT];
    const size_t per = scratch_sizes(&plan, bytes, &largest);
    size_t chunk = (size_t)(ctx->dev.global_mem_bytes / CL_SCRATCH_SHARE) / per;
    const size_t by_alloc = (size_t)ctx->dev.max_alloc_bytes / largest;
    chunk = chunk < by_alloc ? chunk : by_alloc;
    chunk = chunk > ((size_t)1 << 24) ? ((size_t)1 << 24) : chunk;
    if (chunk == 0)
        return bcl_fail(ctx, BCL_OUT_OF_MEMORY, "%s: one matrix needs %zu bytes of scratch", fn,
                        per);
    geev_io io = {(int)layout, batch, A, wr, wi, VR, info, offA, offWr, offWi, offVR, offInfo};
    bcl_steps_reset(ctx, 0);
    cl_event last = NULL;
    for (size_t first = 0; first < batch; first += chunk) {
        const size_t count = batch - first < chunk ? batch - first : chunk;
        cl_event ev = NULL;
        cl_mem scr[SCR_COUNT] = {NULL};
        for (int i = 0; i < SCR_COUNT && s == BCL_SUCCESS; ++i)
            if (bytes[i])
                s = bcl_scratch(ctx, i, count * bytes[i], &scr[i]);
        if (s != BCL_SUCCESS)
            break;
        s = enqueue_chunk(ctx, &plan, ctx->queue[0], scr, &io, first, count, first ? 0 : num_wait,
                          first ? NULL : wait, &ev);
        if (last)
            clReleaseEvent(last);
        last = ev;
        if (s != BCL_SUCCESS)
            break;
    }
    if (s == BCL_SUCCESS && event)
        *event = last;
    else if (last)
        clReleaseEvent(last);
    return s;
}

bcl_status bcl_sgeev_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                        size_t offA, cl_mem wr, size_t offWr, cl_mem wi, size_t offWi, cl_mem VR,
                        size_t offVR, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event)
{
    return geev_cl(ctx, "bcl_sgeev_cl", 0, n, batch, layout, A, offA, wr, offWr, wi, offWi, VR,
                   offVR, info, offInfo, num_wait, wait_list, event);
}

bcl_status bcl_dgeev_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                        size_t offA, cl_mem wr, size_t offWr, cl_mem wi, size_t offWi, cl_mem VR,
                        size_t offVR, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event)
{
    return geev_cl(ctx, "bcl_dgeev_cl", 1, n, batch, layout, A, offA, wr, offWr, wi, offWi, VR,
                   offVR, info, offInfo, num_wait, wait_list, event);
}
