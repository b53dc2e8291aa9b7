/* batchcl: the library's command — device information, the main job (a large verified batch
 * solve) and the benchmarks, each compared with LAPACK on the same machine in the same run. */
#include "batchcl.h"
#include "hostutil.h"
#include "matgen.h"

#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void openblas_set_num_threads(int n); /* OpenBLAS: one thread per call inside our OpenMP loops */

static void die(bcl_context *ctx, bcl_status s, const char *what)
{
    fprintf(stderr, "batchcl: %s: %s: %s\n", what, bcl_status_string(s), bcl_last_error(ctx));
    exit(2);
}

/* ---- options ---- */

typedef struct {
    const char *device;
    int n_list[64], n_count;
    size_t batch;
    int nrhs;
    int precision; /* 0 single, 1 double, 2 both */
    int reps;
    const char *mappings; /* "all" or comma list of simd,collab,hybrid,auto */
    int lapack;
    int verify;
    int ppg; /* problems per work-group for the forced variants; 0 = table */
    size_t chunks[32]; /* bench geev: host-memory chunk sizes */
    int chunk_count;
    int vectors; /* bench geev: also the eigenvectors */
} options;

static void parse_list(const char *s, options *o)
{
    o->n_count = 0;
    while (*s && o->n_count < 64) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            break;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
        }
        for (long v = a; v <= b && o->n_count < 64; ++v)
            o->n_list[o->n_count++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
}

static void usage(void)
{
    puts("usage: batchcl <command> [options]\n"
         "  info                      devices, the chosen one and its limits\n"
         "  solve                     the main job: solve a large batch of SPD systems (LDL^T),\n"
         "                            verify every residual against the matrices, time it\n"
         "  bench sysv                LDL^T solve per n and mapping, vs LAPACK spotrf+spotrs\n"
         "  bench geev                eigenvalues of non-symmetric matrices (Tokura et al. 2017,\n"
         "                            Tables 1, 2, 4): steps per mapping, transfers, chunk sweep,\n"
         "                            vs LAPACK dgeev sequential and with OpenMP; double precision\n"
         "options:\n"
         "  --device SPEC             gpu, cpu, P:D or a name substring (default: BATCHCL_DEVICE,\n"
         "                            else the first GPU, else the first CPU)\n"
         "  --n LIST                  sizes, e.g. 32 or 4,8,16-20 (solve: 32; bench: 4,8,16,24,32,48,64)\n"
         "  --batch N                 problems (default: 2^30/n^2 bytes-ish on GPUs, less on CPUs)\n"
         "  --nrhs K                  right-hand sides per problem (default 1)\n"
         "  --precision s|d|both      (default s)\n"
         "  --mapping LIST            bench: all or some of auto,simd,collab,hybrid (default all)\n"
         "  --reps R                  timed repetitions, the median is reported (default 5)\n"
         "  --ppg P                   bench: problems per work-group of the forced variants\n"
         "  --no-lapack               skip the LAPACK baseline\n"
         "bench geev:\n"
         "  --n LIST                  default 5,10,15,20,25,30\n"
         "  --batch N                 default 500000 on GPUs, 20000 on CPUs\n"
         "  --mapping auto|all        the table's choice only, or every SWB/MWB mapping and p\n"
         "  --chunks LIST             chunk sizes of the host-memory sweep (default 1024 to 262144)\n"
         "  --vectors                 also compute and time the eigenvectors");
}

static options parse(int argc, char **argv, int first)
{
    options o = {0};
    o.nrhs = 1;
    o.reps = 5;
    o.mappings = "all";
    o.lapack = 1;
    o.verify = 1;
    for (int i = first; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--device") && v)
            o.device = argv[++i];
        else if (!strcmp(a, "--n") && v) {
            parse_list(v, &o);
            ++i;
        } else if (!strcmp(a, "--batch") && v)
            o.batch = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--nrhs") && v)
            o.nrhs = atoi(argv[++i]);
        else if (!strcmp(a, "--reps") && v)
            o.reps = atoi(argv[++i]);
        else if (!strcmp(a, "--ppg") && v)
            o.ppg = atoi(argv[++i]);
        else if (!strcmp(a, "--mapping") && v)
            o.mappings = argv[++i];
        else if (!strcmp(a, "--precision") && v) {
            ++i;
            o.precision = !strcmp(v, "d") ? 1 : !strcmp(v, "both") ? 2 : 0;
        } else if (!strcmp(a, "--no-lapack"))
            o.lapack = 0;
        else if (!strcmp(a, "--vectors"))
            o.vectors = 1;
        else if (!strcmp(a, "--chunks") && v) {
            ++i;
            o.chunk_count = 0;
            for (const char *c = v; *c && o.chunk_count < 32;) {
                char *end;
                const unsigned long long k = strtoull(c, &end, 10);
                if (end == c)
                    break;
                if (k > 0)
                    o.chunks[o.chunk_count++] = (size_t)k;
                c = *end == ',' ? end + 1 : end;
            }
        }
        else {
            fprintf(stderr, "batchcl: unknown option %s\n", a);
            usage();
            exit(2);
        }
    }
    if (o.reps < 1)
        o.reps = 1;
    if (o.nrhs < 1)
        o.nrhs = 1;
    return o;
}

static size_t default_batch(const bcl_device_info *d, int n)
{
    size_t batch = d->is_gpu ? ((size_t)1 << 30) / ((size_t)n * n) : ((size_t)1 << 26) / ((size_t)n * n);
    size_t cap = d->is_gpu ? (size_t)1 << 20 : (size_t)1 << 16;
    return batch < cap ? batch : cap;
}

/* ---- problem generation: a pool of Xi_rho matrices, each copy congruence-scaled (D A D), so
 * every problem is distinct and SPD while generation stays O(n^2) per problem ---- */

static void make_batch(int n, int nrhs, size_t batch, int dbl, uint64_t seed, void *A, void *B)
{
    const size_t pool = batch < 512 ? batch : 512, nn = (size_t)n * n;
    double *base = malloc(sizeof *base * nn * pool);
#pragma omp parallel for schedule(dynamic)
    for (size_t p = 0; p < pool; ++p) {
        mg_rng r;
        mg_seed(&r, seed + p);
        mg_xi_rho(n, 0.1 + 0.8 * mg_uniform(&r), &r, base + p * nn);
    }
#pragma omp parallel
    {
        double *scale = malloc(sizeof *scale * (size_t)n);
#pragma omp for schedule(static)
        for (size_t k = 0; k < batch; ++k) {
            mg_rng r;
            mg_seed(&r, seed ^ (0x9e3779b97f4a7c15ULL * (k + 1)));
            const double *src = base + (k % pool) * nn;
            for (int i = 0; i < n; ++i)
                scale[i] = 0.5 + 1.5 * mg_uniform(&r);
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) {
                    double v = scale[i] * src[i + (size_t)j * n] * scale[j];
                    if (dbl)
                        ((double *)A)[k * nn + i + (size_t)j * n] = v;
                    else
                        ((float *)A)[k * nn + i + (size_t)j * n] = (float)v;
                }
            for (int i = 0; i < n * nrhs; ++i) {
                double v = 2 * mg_uniform(&r) - 1;
                if (dbl)
                    ((double *)B)[k * (size_t)n * nrhs + i] = v;
                else
                    ((float *)B)[k * (size_t)n * nrhs + i] = (float)v;
            }
        }
        free(scale);
    }
    free(base);
}

static double elem(const void *p, int dbl, size_t i)
{
    return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* max over problems and columns of ||A x - b||_inf / (||A||_inf ||x||_inf n eps), in double;
 * problems with info != 0 are skipped (counted by the caller). */
static double max_residual(int n, int nrhs, size_t batch, int dbl, const void *A, const void *B,
                           const void *X, const int *info)
{
    const double eps = dbl ? 0x1p-53 : 0x1p-24;
    double worst = 0;
#pragma omp parallel for reduction(max : worst) schedule(static)
    for (size_t k = 0; k < batch; ++k) {
        if (info && info[k])
            continue;
        const size_t a0 = k * (size_t)n * n, b0 = k * (size_t)n * nrhs;
        double anorm = 0;
        for (int i = 0; i < n; ++i) {
            double s = 0;
            for (int j = 0; j < n; ++j)
                s += fabs(elem(A, dbl, a0 + i + (size_t)j * n));
            anorm = s > anorm ? s : anorm;
        }
        for (int c = 0; c < nrhs; ++c) {
            double rmax = 0, xmax = 0;
            for (int i = 0; i < n; ++i) {
                double s = -elem(B, dbl, b0 + (size_t)c * n + i);
                for (int j = 0; j < n; ++j)
                    s += elem(A, dbl, a0 + i + (size_t)j * n) * elem(X, dbl, b0 + (size_t)c * n + j);
                rmax = fabs(s) > rmax ? fabs(s) : rmax;
                double x = fabs(elem(X, dbl, b0 + (size_t)c * n + i));
                xmax = x > xmax ? x : xmax;
            }
            double res = rmax / (anorm * xmax * n * eps);
            if (!(res <= worst))
                worst = res; /* NaN propagates as a failure */
        }
    }
    return worst;
}

/* LAPACK spotrf+spotrs (dpotrf+dpotrs) over the batch with OpenMP, one problem per thread. */
static double lapack_rate(int n, int nrhs, size_t batch, int dbl, const void *A, const void *B)
{
    openblas_set_num_threads(1);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t nn = (size_t)n * n, nb = (size_t)n * nrhs;
    const size_t count = batch < ((size_t)1 << 18) ? batch : ((size_t)1 << 18);
    double t0 = hu_now();
#pragma omp parallel
    {
        char *a = malloc(nn * es), *x = malloc(nb * es);
#pragma omp for schedule(static)
        for (size_t k = 0; k < count; ++k) {
            memcpy(a, (const char *)A + k * nn * es, nn * es);
            memcpy(x, (const char *)B + k * nb * es, nb * es);
            if (dbl) {
                if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, (double *)a, n) == 0)
                    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, nrhs, (double *)a, n, (double *)x, n);
            } else {
                if (LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'L', n, (float *)a, n) == 0)
                    LAPACKE_spotrs_work(LAPACK_COL_MAJOR, 'L', n, nrhs, (float *)a, n, (float *)x, n);
            }
        }
        free(a);
        free(x);
    }
    return (double)count / (hu_now() - t0);
}

/* ---- device-resident run of the LDL^T solve: median kernel time over reps ---- */

typedef struct {
    cl_mem A, B, X, info;
} dev_arrays;

static int upload(bcl_context *ctx, int n, int nrhs, size_t batch, int dbl, const void *A,
                  const void *B, dev_arrays *d)
{
    const size_t es = dbl ? 8 : 4;
    cl_context c = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    cl_int e1, e2, e3, e4;
    d->A = clCreateBuffer(c, CL_MEM_READ_ONLY, batch * n * n * es, NULL, &e1);
    d->B = clCreateBuffer(c, CL_MEM_READ_ONLY, batch * n * nrhs * es, NULL, &e2);
    d->X = clCreateBuffer(c, CL_MEM_READ_WRITE, batch * n * nrhs * es, NULL, &e3);
    d->info = clCreateBuffer(c, CL_MEM_READ_WRITE, batch * sizeof(int), NULL, &e4);
    if (e1 || e2 || e3 || e4)
        return -1;
    clEnqueueWriteBuffer(q, d->A, CL_TRUE, 0, batch * n * n * es, A, 0, NULL, NULL);
    clEnqueueWriteBuffer(q, d->B, CL_TRUE, 0, batch * n * nrhs * es, B, 0, NULL, NULL);
    return 0;
}

static void release(dev_arrays *d)
{
    if (d->A) clReleaseMemObject(d->A);
    if (d->B) clReleaseMemObject(d->B);
    if (d->X) clReleaseMemObject(d->X);
    if (d->info) clReleaseMemObject(d->info);
}

static bcl_status device_time(bcl_context *ctx, int n, int nrhs, size_t batch, int dbl,
                              dev_arrays *d, int reps, double *seconds)
{
    double *t = malloc(sizeof *t * (size_t)(reps + 1));
    bcl_status s = BCL_SUCCESS;
    for (int r = 0; r <= reps && s == BCL_SUCCESS; ++r) { /* the first run builds and warms up */
        cl_event ev = NULL;
        s = dbl ? bcl_dsysv_cl(ctx, BCL_LDLT, n, nrhs, batch, BCL_LAYOUT_CONTIGUOUS, d->A, 0, d->B, 0,
                               d->X, 0, d->info, 0, 0, NULL, &ev)
                : bcl_ssysv_cl(ctx, BCL_LDLT, n, nrhs, batch, BCL_LAYOUT_CONTIGUOUS, d->A, 0, d->B, 0,
                               d->X, 0, d->info, 0, 0, NULL, &ev);
        if (s == BCL_SUCCESS) {
            clWaitForEvents(1, &ev);
            t[r] = hu_event_seconds(ev);
            clReleaseEvent(ev);
        }
    }
    if (s == BCL_SUCCESS)
        *seconds = hu_median(t + 1, reps);
    free(t);
    return s;
}

/* ---- commands ---- */

static bcl_context *open_context(const options *o, bcl_device_info *dev)
{
    bcl_context *ctx;
    bcl_status s = bcl_create(&ctx, o->device);
    if (s != BCL_SUCCESS)
        die(NULL, s, "bcl_create");
    bcl_device_info_get(ctx, dev);
    return ctx;
}

static int cmd_info(const options *o)
{
    cl_uint np = 0;
    clGetPlatformIDs(0, NULL, &np);
    cl_platform_id plats[16];
    clGetPlatformIDs(np < 16 ? np : 16, plats, NULL);
    puts("OpenCL devices:");
    for (cl_uint p = 0; p < np && p < 16; ++p) {
        char pname[256] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
        cl_uint nd = 0;
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        cl_device_id devs[16];
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd < 16 ? nd : 16, devs, NULL);
        for (cl_uint d = 0; d < nd && d < 16; ++d) {
            char dname[256] = "";
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
            printf("  %u:%u  %s  [%s]\n", p, d, dname, pname);
        }
    }
    bcl_device_info d;
    bcl_context *ctx = open_context(o, &d);
    printf("selected: %s (%s), driver %s, %s\n", d.name, d.vendor, d.driver_version,
           d.opencl_version);
    printf("  type %s, %u compute units, fp64 %s, unified host memory %s\n", d.is_gpu ? "GPU" : "CPU/other",
           d.compute_units, d.has_fp64 ? "yes" : "no", d.host_unified_memory ? "yes" : "no");
    printf("  local memory %zu B, max work-group %zu, global memory %.2f GiB, max allocation %.2f GiB\n",
           d.local_mem_bytes, d.max_work_group_size, (double)d.global_mem_bytes / 1073741824.0,
           (double)d.max_alloc_bytes / 1073741824.0);
    char ext[4096] = "";
    clGetDeviceInfo(bcl_cl_device(ctx), CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
    printf("  extensions: %s\n", ext);
    printf("  LDL^T sizes up to n = %d (float), %d (double)\n", bcl_ldlt_max_n(ctx, 0),
           bcl_ldlt_max_n(ctx, 1));
    bcl_destroy(ctx);
    return 0;
}

static int cmd_solve(options *o)
{
    bcl_device_info dev;
    bcl_context *ctx = open_context(o, &dev);
    bcl_status s;
    const int n = o->n_count ? o->n_list[0] : 32, nrhs = o->nrhs, dbl = o->precision == 1;
    const size_t batch = o->batch ? o->batch : default_batch(&dev, n);
    const size_t es = dbl ? 8 : 4, nn = (size_t)n * n, nb = (size_t)n * nrhs;
    printf("batchcl %s: LDL^T solve of %zu SPD systems, n = %d, nrhs = %d, %s, on %s\n",
           bcl_version(), batch, n, nrhs, dbl ? "double" : "single", dev.name);
    void *A = malloc(batch * nn * es), *B = malloc(batch * nb * es), *X = malloc(batch * nb * es);
    int *info = malloc(batch * sizeof *info);
    if (!A || !B || !X || !info) {
        fprintf(stderr, "batchcl: out of host memory for %zu problems\n", batch);
        return 2;
    }
    double t0 = hu_now();
    make_batch(n, nrhs, batch, dbl, 2024, A, B);
    printf("  generated the batch (randomized Xi_rho matrices, congruence-scaled) in %.2f s\n", hu_now() - t0);

    /* host pointers, transfers included; the first call also builds the kernel */
    t0 = hu_now();
    s = dbl ? bcl_dsysv(ctx, BCL_LDLT, n, nrhs, batch, A, B, X, info)
            : bcl_ssysv(ctx, BCL_LDLT, n, nrhs, batch, A, B, X, info);
    double first = hu_now() - t0;
    if (s != BCL_SUCCESS && s != BCL_NUMERICAL_FAILURE)
        die(ctx, s, "sysv");
    t0 = hu_now();
    s = dbl ? bcl_dsysv(ctx, BCL_LDLT, n, nrhs, batch, A, B, X, info)
            : bcl_ssysv(ctx, BCL_LDLT, n, nrhs, batch, A, B, X, info);
    double host_s = hu_now() - t0;
    size_t failed = 0;
    for (size_t k = 0; k < batch; ++k)
        failed += info[k] != 0;
    double res = max_residual(n, nrhs, batch, dbl, A, B, X, info);
    printf("  host pointers (transfers included): %.3f s = %.3g systems/s (first call, with kernel "
           "build: %.3f s)\n",
           host_s, (double)batch / host_s, first);

    /* the same call from pinned host memory (bcl_host_alloc): no staging copy, full bus speed */
    void *Ap = bcl_host_alloc(ctx, batch * nn * es), *Bp = bcl_host_alloc(ctx, batch * nb * es),
         *Xp = bcl_host_alloc(ctx, batch * nb * es);
    if (Ap && Bp && Xp) {
        memcpy(Ap, A, batch * nn * es);
        memcpy(Bp, B, batch * nb * es);
        t0 = hu_now();
        s = dbl ? bcl_dsysv(ctx, BCL_LDLT, n, nrhs, batch, Ap, Bp, Xp, info)
                : bcl_ssysv(ctx, BCL_LDLT, n, nrhs, batch, Ap, Bp, Xp, info);
        double pinned_s = hu_now() - t0;
        if (s != BCL_SUCCESS && s != BCL_NUMERICAL_FAILURE)
            die(ctx, s, "sysv (pinned)");
        int same = memcmp(Xp, X, batch * nb * es) == 0;
        printf("  host pointers in pinned memory (bcl_host_alloc): %.3f s = %.3g systems/s%s\n",
               pinned_s, (double)batch / pinned_s, same ? "" : " (RESULTS DIFFER)");
        failed += !same;
    } else {
        printf("  pinned host memory for the whole batch is not available here\n");
    }
    bcl_host_free(ctx, Ap);
    bcl_host_free(ctx, Bp);
    bcl_host_free(ctx, Xp);

    double dev_s = 0;
    dev_arrays d = {0};
    if (upload(ctx, n, nrhs, batch, dbl, A, B, &d) == 0 &&
        device_time(ctx, n, nrhs, batch, dbl, &d, o->reps, &dev_s) == BCL_SUCCESS) {
        double bytes = (double)batch * ((double)(nn + 2 * nb) * es + 4);
        printf("  device-resident (kernel time, median of %d): %.3f ms = %.3g systems/s, %.1f GB/s\n",
               o->reps, dev_s * 1e3, (double)batch / dev_s, bytes / dev_s * 1e-9);
    } else {
        printf("  device-resident run skipped: the batch does not fit in device memory at once\n");
    }
    release(&d);
    if (o->lapack) {
        double rate = lapack_rate(n, nrhs, batch, dbl, A, B);
        printf("  LAPACK %s with OpenMP on %d host threads: %.3g systems/s\n",
               dbl ? "dpotrf+dpotrs" : "spotrf+spotrs", omp_get_max_threads(), rate);
    }
    int ok = failed == 0 && res < 30;
    printf("  verification: %zu failed factorizations, max scaled residual ||Ax-b||/(||A|| ||x|| n eps) "
           "= %.3g (limit 30): %s\n",
           failed, res, ok ? "PASS" : "FAIL");
    free(A);
    free(B);
    free(X);
    free(info);
    bcl_destroy(ctx);
    return ok ? 0 : 1;
}

static int wants(const char *list, const char *name)
{
    return !strcmp(list, "all") || strstr(list, name) != NULL;
}

static int cmd_bench_sysv(options *o)
{
    bcl_device_info dev;
    bcl_context *ctx = open_context(o, &dev);
    if (!o->n_count) {
        const int def[] = {4, 8, 16, 24, 32, 48, 64};
        for (int i = 0; i < 7; ++i)
            o->n_list[o->n_count++] = def[i];
    }
    double bw = hu_copy_bandwidth(ctx);
    printf("# bench sysv (LDL^T) on %s, driver %s; float4 copy kernel: %.1f GB/s\n", dev.name,
           dev.driver_version, bw * 1e-9);
    printf("# device: kernel time on device-resident data (median of %d); host: end to end from host "
           "memory, transfers included\n",
           o->reps);
    printf("# GB/s counts A (n*n), B and X (n*nrhs) and info once; %% of the copy kernel's bandwidth\n");
    printf("%-4s %-5s %9s %-14s %5s %10s %12s %8s %6s %12s %12s %8s %9s\n", "prec", "n", "batch",
           "mapping", "n*", "device ms", "systems/s", "GB/s", "%bw", "host sys/s", "LAPACK sys/s",
           "vs LAPACK", "max res");
    for (int pi = 0; pi < 2; ++pi) {
        int dbl = pi;
        if ((o->precision == 0 && dbl) || (o->precision == 1 && !dbl))
            continue;
        for (int ni = 0; ni < o->n_count; ++ni) {
            const int n = o->n_list[ni], nrhs = o->nrhs;
            const size_t batch = o->batch ? o->batch : default_batch(&dev, n);
            const size_t es = dbl ? 8 : 4, nn = (size_t)n * n, nb = (size_t)n * nrhs;
            void *A = malloc(batch * nn * es), *B = malloc(batch * nb * es), *X = malloc(batch * nb * es);
            int *info = malloc(batch * sizeof *info);
            make_batch(n, nrhs, batch, dbl, 7 + (uint64_t)n, A, B);
            double lapack = o->lapack ? lapack_rate(n, nrhs, batch, dbl, A, B) : 0;
            dev_arrays d = {0};
            int resident = upload(ctx, n, nrhs, batch, dbl, A, B, &d) == 0;
            struct {
                const char *name;
                bcl_mapping m;
                int nstar;
            } variants[] = {{"auto", BCL_MAPPING_AUTO, 0},
                            {"simd", BCL_MAPPING_SIMD, 0},
                            {"collab", BCL_MAPPING_COLLABORATIVE, 0},
                            {"hybrid", BCL_MAPPING_HYBRID, (n + 1) / 2},
                            {"hybrid", BCL_MAPPING_HYBRID, (n + 3) / 4},
                            {"hybrid", BCL_MAPPING_HYBRID, (n + 7) / 8}};
            for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v) {
                if (!wants(o->mappings, variants[v].name))
                    continue;
                if (v >= 4 && (variants[v].nstar == variants[v - 1].nstar || n < 4 * (int)v - 8))
                    continue;
                bcl_params p = {0};
                p.mapping = variants[v].m;
                p.work_items_per_problem = variants[v].nstar;
                p.problems_per_group = o->ppg;
                bcl_set_params(ctx, v ? &p : NULL);
                double dev_s = 0, host_s = 0;
                bcl_status st = resident ? device_time(ctx, n, nrhs, batch, dbl, &d, o->reps, &dev_s)
                                         : BCL_OUT_OF_MEMORY;
                double t0 = hu_now();
                bcl_status sh = dbl ? bcl_dsysv(ctx, BCL_LDLT, n, nrhs, batch, A, B, X, info)
                                    : bcl_ssysv(ctx, BCL_LDLT, n, nrhs, batch, A, B, X, info);
                host_s = hu_now() - t0;
                /* what ran: the mapping and work-items per problem the library chose */
                char label[32] = "?", nstar[16] = "?";
                const char *ran = strstr(bcl_last_kernel(ctx), "; mapping ");
                int items = 0;
                if (ran && sscanf(ran, "; mapping %31[^,], %d work-items", label, &items) == 2)
                    snprintf(nstar, sizeof nstar, "%d", items);
                if (v == 0)
                    snprintf(label + strlen(label), sizeof label - strlen(label), "(auto)");
                if (sh != BCL_SUCCESS && sh != BCL_NUMERICAL_FAILURE) {
                    printf("%-4s %-5d %9zu %-14s %5s  %s\n", dbl ? "d" : "s", n, batch,
                           variants[v].name, "-", bcl_status_string(sh));
                    continue;
                }
                double res = max_residual(n, nrhs, batch, dbl, A, B, X, info);
                double bytes = (double)batch * ((double)(nn + 2 * nb) * es + 4);
                if (st == BCL_SUCCESS)
                    printf("%-4s %-5d %9zu %-14s %5s %10.3f %12.4g %8.1f %6.1f %12.4g %12.4g %8.2f %9.3g\n",
                           dbl ? "d" : "s", n, batch, label, nstar, dev_s * 1e3, batch / dev_s,
                           bytes / dev_s * 1e-9, bw > 0 ? 100 * bytes / dev_s / bw : 0, batch / host_s,
                           lapack, lapack > 0 ? (batch / host_s) / lapack : 0, res);
                else
                    printf("%-4s %-5d %9zu %-14s %5s %10s %12s %8s %6s %12.4g %12.4g %8.2f %9.3g\n",
                           dbl ? "d" : "s", n, batch, label, nstar, "-", "-", "-", "-", batch / host_s,
                           lapack, lapack > 0 ? (batch / host_s) / lapack : 0, res);
                fflush(stdout);
            }
            bcl_set_params(ctx, NULL);
            release(&d);
            free(A);
            free(B);
            free(X);
            free(info);
        }
    }
    bcl_destroy(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "info")) {
        options o = parse(argc, argv, 2);
        return cmd_info(&o);
    }
    if (!strcmp(argv[1], "solve")) {
        options o = parse(argc, argv, 2);
        return cmd_solve(&o);
    }
    if (!strcmp(argv[1], "bench") && argc >= 3 && !strcmp(argv[2], "sysv")) {
        options o = parse(argc, argv, 3);
        return cmd_bench_sysv(&o);
    }
    if (!strcmp(argv[1], "bench") && argc >= 3 && !strcmp(argv[2], "geev")) {
        options o = parse(argc, argv, 3);
        bench_geev_options g;
        memset(&g, 0, sizeof g);
        g.device = o.device;
        const int def[] = {5, 10, 15, 20, 25, 30};
        for (int i = 0; i < (o.n_count ? o.n_count : 6); ++i)
            g.n_list[g.n_count++] = o.n_count ? o.n_list[i] : def[i];
        g.batch = o.batch;
        g.dbl = 1;
        g.reps = o.reps;
        g.mappings = strcmp(o.mappings, "auto") == 0 ? "auto" : "all";
        for (size_t k = 1024; k <= 262144 && !o.chunk_count; k *= 2)
            g.chunks[g.chunk_count++] = k;
        for (int i = 0; i < o.chunk_count; ++i)
            g.chunks[g.chunk_count++] = o.chunks[i];
        g.lapack = o.lapack;
        g.vectors = o.vectors;
        return bench_geev(&g);
    }
    fprintf(stderr, "batchcl: unknown command\n");
    usage();
    return 2;
}
