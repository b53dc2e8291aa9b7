/* `batchcl bench geev`: the measurements of Tokura et al. 2017 (bulk-nonsymmetric-eigenvalues-
 * tokura-2017.txt) on this machine, for batches of random dense matrices (uniform entries in
 * [-1, 1), as the paper's):
 *   Table 1  device time of each step (rearrangement, Hessenberg, QR) per thread mapping and p,
 *            the fastest choice per step, and the transfers;
 *   Table 2  end-to-end time from host memory with several queues, per chunk size;
 *   Table 4  LAPACK dgeev sequential and with OpenMP on all host threads, against the library.
 * The eigenvalues of a sample are checked against LAPACK dgeevx in double. */
#include "hostutil.h"
#include "matgen.h"
#include "oracle.h"

#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void openblas_set_num_threads(int n); /* OpenBLAS: one thread per call inside our OpenMP loops */

#define VERIFY_SAMPLE 200

static void random_batch(int n, size_t batch, uint64_t seed, double *A)
{
    const size_t nn = (size_t)n * n;
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < batch; ++k) {
        mg_rng r;
        mg_seed(&r, seed ^ (0x9e3779b97f4a7c15ULL * (k + 1)));
        mg_vector((int)nn, &r, A + k * nn);
    }
}

/* Seconds LAPACK dgeev (eigenvalues only, LAPACK's own routine through LAPACKE's _work call)
 * takes for `count` matrices on `threads` OpenMP threads. */
static double lapack_seconds(int n, size_t count, const double *A, int threads)
{
    openblas_set_num_threads(1);
    const size_t nn = (size_t)n * n;
    double query = 0;
    LAPACKE_dgeev_work(LAPACK_COL_MAJOR, 'N', 'N', n, NULL, n, NULL, NULL, NULL, n, NULL, n,
                       &query, -1);
    const int lwork = (int)query > 1 ? (int)query : 1;
    const double t0 = hu_now();
#pragma omp parallel num_threads(threads)
    {
        double *a = malloc(sizeof *a * nn), *wr = malloc(sizeof *wr * (size_t)n),
               *wi = malloc(sizeof *wi * (size_t)n), *work = malloc(sizeof *work * (size_t)lwork);
#pragma omp for schedule(static)
        for (size_t k = 0; k < count; ++k) {
            memcpy(a, A + k * nn, sizeof *a * nn);
            LAPACKE_dgeev_work(LAPACK_COL_MAJOR, 'N', 'N', n, a, n, wr, wi, NULL, n, NULL, n,
                               work, lwork);
        }
        free(a);
        free(wr);
        free(wi);
        free(work);
    }
    return hu_now() - t0;
}

/* Worst eigenvalue error of a sample over its LAPACK bound (n eps ||balanced A|| / rcond). */
static double verify(int n, size_t batch, const double *A, const double *wr, const double *wi,
                     const int *info, size_t *failed)
{
    const size_t nn = (size_t)n * n, step = batch > VERIFY_SAMPLE ? batch / VERIFY_SAMPLE : 1;
    double worst = 0;
    *failed = 0;
    for (size_t k = 0; k < batch; ++k)
        *failed += info[k] != 0;
#pragma omp parallel
    {
        double *rwr = malloc(sizeof *rwr * (size_t)n), *rwi = malloc(sizeof *rwi * (size_t)n),
               *rc = malloc(sizeof *rc * (size_t)n);
#pragma omp for reduction(max : worst) schedule(dynamic)
        for (size_t k = 0; k < batch; k += step) {
            double abnrm = 0;
            double ratio = INFINITY;
            if (oracle_geev(n, 1, A + k * nn, rwr, rwi, rc, &abnrm) == 0 && info[k] == 0)
                ratio = oracle_eig_match(n, 1, wr + k * n, wi + k * n, rwr, rwi, rc, abnrm, NULL);
            if (!(ratio <= worst))
                worst = ratio;
        }
        free(rwr);
        free(rwi);
        free(rc);
    }
    return worst;
}

typedef struct {
    char label[48];
    bcl_mapping hmap, qmap;
    int hp, qp, hess_layout, ppg;
    int bulges; /* qr_bulges (0: the table's) */
} variant;

/* Each variant once per --bulges value (at most 32 in all). */
static int with_bulges(const bench_geev_options *o, variant *v, int count)
{
    if (!o->bulges_count)
        return count;
    variant base[32];
    memcpy(base, v, sizeof *v * (size_t)count);
    int out = 0;
    for (int i = 0; i < count; ++i)
        for (int b = 0; b < o->bulges_count && out < 32; ++b) {
            v[out] = base[i];
            v[out].bulges = o->bulges[b];
            snprintf(v[out].label, sizeof v[out].label, "%.36s, %s", base[i].label,
                     o->bulges[b] > 1 ? "2 bulges" : "1 bulge");
            ++out;
        }
    return out;
}

static int make_variants(const bench_geev_options *o, int n, int W, variant *v)
{
    int count = 0;
    v[count++] = (variant){"table", BCL_MAPPING_AUTO, BCL_MAPPING_AUTO, 0, 0, 0, 0, 0};
    if (!strcmp(o->mappings, "auto"))
        return with_bulges(o, v, count);
    const int all = !strcmp(o->mappings, "all");
    /* the paper's flow: MW -> RW, SWB Hessenberg, MWB QR (p from the table) */
    if (all)
        v[count++] = (variant){"paper: RW+SWB, MWB", BCL_MAPPING_SWB, BCL_MAPPING_MWB, 0, 0,
                               1 + BCL_LAYOUT_ROWWISE, o->ppg, 0};
    const int def_p[] = {1, 2, 4, 8, 16, 32, 64};
    const int *plist = o->p_count ? o->p_list : def_p;
    const int pcount = o->p_count ? o->p_count : 7;
    for (int mwb = 0; mwb < 2; ++mwb) {
        if (!all && strcmp(o->mappings, mwb ? "mwb" : "swb"))
            continue; /* --mapping swb or mwb: that family only */
        for (int pi = 0; pi < pcount && count < 30; ++pi) {
            const int p = plist[pi];
            if (p < 1 || (!o->p_count && p > n * 2) || (!mwb && p > W))
                continue;
            variant x = {"", mwb ? BCL_MAPPING_MWB : BCL_MAPPING_SWB,
                         mwb ? BCL_MAPPING_MWB : BCL_MAPPING_SWB, p, p, 0, o->ppg, 0};
            snprintf(x.label, sizeof x.label, "%s p=%d", mwb ? "MWB" : "SWB", p);
            v[count++] = x;
        }
    }
    return with_bulges(o, v, count);
}

static void apply(bcl_context *ctx, const variant *v, size_t chunk, int queues)
{
    bcl_params p = {0};
    p.queues = queues;
    p.mapping = v->hmap;
    p.qr_mapping = v->qmap;
    p.work_items_per_problem = v->hp;
    p.qr_work_items = v->qp;
    p.hess_layout = v->hess_layout;
    p.problems_per_group = v->ppg;
    p.chunk_problems = chunk;
    p.qr_bulges = v->bulges;
    bcl_set_params(ctx, v->hmap == BCL_MAPPING_AUTO && !chunk && !queues && !v->bulges ? NULL : &p);
}

typedef struct {
    double rearrange, hessenberg, qr, vectors, transfer_in, transfer_out;
} step_times;

static step_times last_steps(bcl_context *ctx)
{
    const char *names[8];
    double secs[8];
    step_times st = {0};
    const int count = bcl_last_step_times(ctx, names, secs, 8);
    for (int i = 0; i < count; ++i) {
        if (!strcmp(names[i], "rearrange"))
            st.rearrange = secs[i];
        else if (!strcmp(names[i], "hessenberg"))
            st.hessenberg = secs[i];
        else if (!strcmp(names[i], "qr"))
            st.qr = secs[i];
        else if (!strcmp(names[i], "vectors"))
            st.vectors = secs[i];
        else if (!strcmp(names[i], "transfer in"))
            st.transfer_in = secs[i];
        else if (!strcmp(names[i], "transfer out"))
            st.transfer_out = secs[i];
    }
    return st;
}

/* What the last call ran: "hessenberg SWB, p = 16" -> "SWB16". */
static void ran(bcl_context *ctx, const char *step, char *out, size_t cap)
{
    const char *k = strstr(bcl_last_kernel(ctx), step);
    char map[8] = "?";
    int p = 0;
    if (k && sscanf(k + strlen(step), " %7[A-Z], p = %d", map, &p) == 2) {
        /* "x2": this step (up to the next ';') chases two bulges */
        const char *two = strstr(k, "(two bulges)"), *end = strchr(k, ';');
        snprintf(out, cap, "%s%d%s", map, p, two && (!end || two < end) ? "x2" : "");
    }
    else
        snprintf(out, cap, "?");
}

/* Median over reps of the device time of each step of the device-buffer call. */
static bcl_status device_run(bcl_context *ctx, int n, size_t batch, cl_mem dA, cl_mem dW,
                             cl_mem dV, cl_mem dI, int reps, step_times *med)
{
    double *t[4];
    for (int i = 0; i < 4; ++i)
        t[i] = malloc(sizeof *t[i] * (size_t)reps);
    bcl_status s = BCL_SUCCESS;
    for (int r = -1; r < reps && s == BCL_SUCCESS; ++r) { /* r = -1 builds and warms up */
        s = bcl_dgeev_cl(ctx, n, batch, BCL_LAYOUT_CONTIGUOUS, dA, 0, dW, 0, dW, batch * n, dV, 0,
                         dI, 0, 0, NULL, NULL);
        if (s != BCL_SUCCESS || r < 0) {
            clFinish(bcl_cl_queue(ctx));
            continue;
        }
        const step_times st = last_steps(ctx);
        t[0][r] = st.rearrange;
        t[1][r] = st.hessenberg;
        t[2][r] = st.qr;
        t[3][r] = st.vectors;
    }
    if (s == BCL_SUCCESS) {
        med->rearrange = hu_median(t[0], reps);
        med->hessenberg = hu_median(t[1], reps);
        med->qr = hu_median(t[2], reps);
        med->vectors = hu_median(t[3], reps);
    }
    for (int i = 0; i < 4; ++i)
        free(t[i]);
    return s;
}

typedef struct {
    int n;
    double cpu1, cpu2;        /* LAPACK seconds for the batch */
    double device;            /* device time of the table's choice */
    double host_pinned, host_pageable; /* end to end, the table's chunk */
    double best_chunk_time;
    size_t best_chunk;
    double max_err;
    size_t failed;
} summary;

static void bench_size(bcl_context *ctx, const bcl_device_info *dev, const bench_geev_options *o,
                       int n, double bw, summary *sum)
{
    const size_t batch = o->batch ? o->batch : dev->is_gpu ? 500000 : 20000;
    const size_t nn = (size_t)n * n;
    double *A = malloc(sizeof *A * batch * nn), *wr = malloc(sizeof *wr * batch * n),
           *wi = malloc(sizeof *wi * batch * n);
    int *info = malloc(sizeof *info * batch);
    if (!A || !wr || !wi || !info) {
        fprintf(stderr, "batchcl: out of host memory for %zu matrices\n", batch);
        exit(2);
    }
    random_batch(n, batch, 2017 + (uint64_t)n, A);
    memset(sum, 0, sizeof *sum);
    sum->n = n;
    printf("\n## n = %d, %zu matrices, double precision\n", n, batch);

    /* LAPACK: sequential on a sample, OpenMP on all host threads */
    if (o->lapack) {
        const size_t seq = batch < 2000 ? batch : 2000, par = batch < 100000 ? batch : 100000;
        sum->cpu1 = lapack_seconds(n, seq, A, 1) * (double)batch / (double)seq;
        sum->cpu2 = lapack_seconds(n, par, A, omp_get_max_threads()) * (double)batch / (double)par;
        printf("LAPACK dgeev: sequential %.1f ms (%zu matrices timed), OpenMP on %d threads %.1f ms "
               "(%zu timed), extrapolated to the batch\n",
               sum->cpu1 * 1e3, seq, omp_get_max_threads(), sum->cpu2 * 1e3, par);
    }

    /* Table 1: device-resident steps per mapping */
    cl_int e1, e2, e3, e4 = CL_SUCCESS;
    cl_context cl = bcl_cl_context(ctx);
    cl_mem dA = clCreateBuffer(cl, CL_MEM_READ_ONLY, batch * nn * sizeof *A, NULL, &e1);
    cl_mem dW = clCreateBuffer(cl, CL_MEM_READ_WRITE, 2 * batch * n * sizeof *A, NULL, &e2);
    cl_mem dI = clCreateBuffer(cl, CL_MEM_READ_WRITE, batch * sizeof *info, NULL, &e3);
    cl_mem dV = o->vectors ? clCreateBuffer(cl, CL_MEM_READ_WRITE, batch * nn * sizeof *A, NULL, &e4)
                           : NULL;
    const int resident = e1 == CL_SUCCESS && e2 == CL_SUCCESS && e3 == CL_SUCCESS && e4 == CL_SUCCESS;
    if (resident) {
        clEnqueueWriteBuffer(bcl_cl_queue(ctx), dA, CL_TRUE, 0, batch * nn * sizeof *A, A, 0, NULL,
                             NULL);
        variant v[32];
        const int nv = make_variants(o, n, (int)dev->work_group_multiple, v);
        printf("Table 1 (device-resident, median of %d; GB/s counts A once and wr, wi, info; %% of "
               "the copy kernel's bandwidth)\n",
               o->reps);
        printf("%-22s %-8s %-8s %10s %11s %10s %10s %10s %12s %8s %6s\n", "variant", "hess", "qr",
               "rearr. ms", "hessenb. ms", "qr ms", o->vectors ? "vectors ms" : "-", "total ms",
               "matrices/s", "GB/s", "%bw");
        double best_h = INFINITY, best_q = INFINITY;
        char best_h_name[16] = "", best_q_name[16] = "";
        for (int i = 0; i < nv; ++i) {
            apply(ctx, &v[i], 0, 0);
            step_times st = {0};
            bcl_status s = device_run(ctx, n, batch, dA, dW, dV, dI, o->reps, &st);
            if (s != BCL_SUCCESS) {
                printf("%-22s %s: %s\n", v[i].label, bcl_status_string(s), bcl_last_error(ctx));
                continue;
            }
            char hn[16], qn[16];
            ran(ctx, "hessenberg", hn, sizeof hn);
            ran(ctx, "qr", qn, sizeof qn);
            const double total = st.rearrange + st.hessenberg + st.qr + st.vectors;
            const double bytes = (double)batch * ((double)(nn + 2 * (size_t)n) * 8 + 4 +
                                                  (o->vectors ? (double)nn * 8 : 0));
            printf("%-22s %-8s %-8s %10.3f %11.3f %10.3f %10.3f %10.3f %12.4g %8.1f %6.1f\n",
                   v[i].label, hn, qn, st.rearrange * 1e3, st.hessenberg * 1e3, st.qr * 1e3,
                   st.vectors * 1e3, total * 1e3, batch / total, bytes / total * 1e-9,
                   bw > 0 ? 100 * bytes / total / bw : 0);
            if (st.rearrange > 0)
                printf("%-22s rearrangement MW -> %s: %.1f GB/s (%.1f %% of the copy kernel)\n", "",
                       v[i].hess_layout == 1 + BCL_LAYOUT_ROWWISE ? "RW" : "EW",
                       2.0 * batch * nn * 8 / st.rearrange * 1e-9,
                       bw > 0 ? 100 * 2.0 * batch * nn * 8 / st.rearrange / bw : 0);
            if (i == 0)
                sum->device = total;
            if (st.hessenberg + st.rearrange < best_h) {
                best_h = st.hessenberg + st.rearrange;
                snprintf(best_h_name, sizeof best_h_name, "%s", hn);
            }
            if (st.qr < best_q) {
                best_q = st.qr;
                snprintf(best_q_name, sizeof best_q_name, "%s", qn);
            }
            fflush(stdout);
        }
        if (nv > 1)
            printf("fastest per step: Hessenberg %s (%.3f ms with its rearrangement), QR %s (%.3f "
                   "ms): %.3f ms together\n",
                   best_h_name, best_h * 1e3, best_q_name, best_q * 1e3, (best_h + best_q) * 1e3);
    } else {
        printf("Table 1 skipped: the batch does not fit in device memory at once\n");
    }
    if (dA)
        clReleaseMemObject(dA);
    if (dW)
        clReleaseMemObject(dW);
    if (dI)
        clReleaseMemObject(dI);
    if (dV)
        clReleaseMemObject(dV);

    /* host memory, end to end: the table's choice from ordinary (pageable) memory, then Table 2
     * from pinned memory (bcl_host_alloc) */
    bcl_set_params(ctx, NULL);
    double t0 = hu_now();
    bcl_status s = bcl_dgeev(ctx, n, batch, A, wr, wi, NULL, info);
    sum->host_pageable = hu_now() - t0;
    if (s != BCL_SUCCESS && s != BCL_NUMERICAL_FAILURE) {
        printf("bcl_dgeev: %s: %s\n", bcl_status_string(s), bcl_last_error(ctx));
        goto done;
    }
    const step_times pst = last_steps(ctx);
    sum->max_err = verify(n, batch, A, wr, wi, info, &sum->failed);
    double *Ap = bcl_host_alloc(ctx, batch * nn * sizeof *A),
           *wrp = bcl_host_alloc(ctx, batch * n * sizeof *A),
           *wip = bcl_host_alloc(ctx, batch * n * sizeof *A);
    int *infop = bcl_host_alloc(ctx, batch * sizeof *info);
    printf("host memory, end to end (the table's chunk): pageable %.3f ms", sum->host_pageable * 1e3);
    if (Ap && wrp && wip && infop) {
        memcpy(Ap, A, batch * nn * sizeof *A);
        t0 = hu_now();
        bcl_dgeev(ctx, n, batch, Ap, wrp, wip, NULL, infop);
        sum->host_pinned = hu_now() - t0;
        const step_times st = last_steps(ctx);
        printf(", pinned %.3f ms; device time of its commands: transfer in %.3f ms (%.1f GB/s), "
               "Hessenberg %.3f, QR %.3f, transfer out %.3f ms\n",
               sum->host_pinned * 1e3, st.transfer_in * 1e3,
               st.transfer_in > 0 ? batch * nn * 8 / st.transfer_in * 1e-9 : 0,
               st.hessenberg * 1e3, st.qr * 1e3, st.transfer_out * 1e3);
        if (memcmp(wrp, wr, batch * n * sizeof *wr) || memcmp(wip, wi, batch * n * sizeof *wi))
            printf("  RESULTS DIFFER between pageable and pinned memory\n");
        /* Table 2 */
        printf("Table 2 (pinned host memory, end to end ms per chunk of k matrices, queues and "
               "QR bulges; 0: the table's)\n");
        printf("%10s %7s %7s %12s\n", "k", "queues", "bulges", "total ms");
        sum->best_chunk_time = INFINITY;
        const int nq = o->queues_count ? o->queues_count : 1;
        const int nb = o->bulges_count ? o->bulges_count : 1;
        for (int c = 0; c < o->chunk_count; ++c)
            for (int qi = 0; qi < nq * nb && o->chunks[c] <= batch; ++qi) {
                const size_t k = o->chunks[c];
                const int queues = o->queues_count ? o->queues[qi / nb] : 0;
                const int bulges = o->bulges_count ? o->bulges[qi % nb] : 0;
                const variant table = {"", BCL_MAPPING_AUTO, BCL_MAPPING_AUTO, 0, 0, 0, 0,
                                       bulges};
                apply(ctx, &table, k, queues);
                double best = INFINITY;
                bcl_status s = BCL_SUCCESS;
                for (int r = 0; r < (o->reps < 3 ? o->reps : 3) && s == BCL_SUCCESS; ++r) {
                    t0 = hu_now();
                    s = bcl_dgeev(ctx, n, batch, Ap, wrp, wip, NULL, infop);
                    best = fmin(best, hu_now() - t0);
                }
                if (s != BCL_SUCCESS) { /* e.g. two bulges where the table's QR step has odd p */
                    printf("%10zu %7d %7d  %s: %s\n", k, queues, bulges, bcl_status_string(s),
                           bcl_last_error(ctx));
                    continue;
                }
                printf("%10zu %7d %7d %12.3f\n", k, queues, bulges, best * 1e3);
                if (getenv("BATCHCL_TIMELINE"))
                    bcl_last_step_times(ctx, NULL, NULL, 0); /* writes the timeline file */
                if (best < sum->best_chunk_time) {
                    sum->best_chunk_time = best;
                    sum->best_chunk = k;
                }
                fflush(stdout);
            }
        bcl_set_params(ctx, NULL);
    } else {
        printf("; pinned host memory for the batch is not available\n");
        (void)pst;
    }
    bcl_host_free(ctx, Ap);
    bcl_host_free(ctx, wrp);
    bcl_host_free(ctx, wip);
    bcl_host_free(ctx, infop);
    printf("verification: %zu matrices with info != 0; eigenvalues of %d sampled matrices within "
           "%.3g of LAPACK's bound (limit 30): %s\n",
           sum->failed, VERIFY_SAMPLE, sum->max_err,
           sum->failed == 0 && sum->max_err < 30 ? "PASS" : "FAIL");
done:
    free(A);
    free(wr);
    free(wi);
    free(info);
}

int bench_geev(const bench_geev_options *o)
{
    bcl_context *ctx;
    bcl_status s = bcl_create(&ctx, o->device);
    if (s != BCL_SUCCESS) {
        fprintf(stderr, "batchcl: bcl_create: %s: %s\n", bcl_status_string(s), bcl_last_error(NULL));
        return 2;
    }
    /* one small call builds the kernels: PoCL tells its subgroup width only then */
    double a1[4] = {1, 2, 3, 4}, w1[2], w2[2];
    int i1[1];
    bcl_dgeev(ctx, 2, 1, a1, w1, w2, NULL, i1);
    bcl_device_info dev;
    bcl_device_info_get(ctx, &dev);
    const double bw = hu_copy_bandwidth(ctx);
    printf("# bench geev on %s (%s), driver %s; subgroup width %zu; float4 copy kernel %.1f GB/s; "
           "host: %d OpenMP threads\n",
           dev.name, dev.is_gpu ? "GPU" : "CPU", dev.driver_version, dev.work_group_multiple,
           bw * 1e-9, omp_get_max_threads());
    printf("# random dense matrices, entries uniform in [-1, 1); eigenvalues only; times in ms\n");
    summary sums[64];
    int count = 0;
    for (int i = 0; i < o->n_count; ++i)
        bench_size(ctx, &dev, o, o->n_list[i], bw, &sums[count++]);
    printf("\n## Table 4: whole batch, ms (CPU1 LAPACK dgeev sequential, CPU2 LAPACK dgeev with "
           "OpenMP on %d threads, extrapolated from the timed samples)\n",
           omp_get_max_threads());
    printf("%-4s %12s %12s %14s %14s %14s %12s %12s %10s\n", "n", "CPU1", "CPU2", "device-resident",
           "host pageable", "host pinned", "best chunk", "CPU1/host", "CPU2/host");
    int ok = 1;
    for (int i = 0; i < count; ++i) {
        const summary *m = &sums[i];
        const double host = m->best_chunk_time > 0 && isfinite(m->best_chunk_time)
                                ? fmin(m->best_chunk_time, m->host_pageable)
                                : m->host_pageable;
        printf("%-4d %12.1f %12.1f %14.3f %14.3f %14.3f %12zu %12.2f %10.2f\n", m->n, m->cpu1 * 1e3,
               m->cpu2 * 1e3, m->device * 1e3, m->host_pageable * 1e3,
               m->best_chunk_time > 0 && isfinite(m->best_chunk_time) ? m->best_chunk_time * 1e3 : 0,
               m->best_chunk, host > 0 ? m->cpu1 / host : 0, host > 0 ? m->cpu2 / host : 0);
        ok = ok && m->failed == 0 && m->max_err < 30;
    }
    bcl_destroy(ctx);
    return ok ? 0 : 1;
}
