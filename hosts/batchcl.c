/* batchcl: the library's command — device information, the main job (a large verified batch
 * solve) and the benchmarks, each compared with LAPACK on the same machine in the same run. */
#include "batchcl.h"
#include "hostutil.h"
#include "internal.h" /* bench gemm: the library's own GEMM (not in the public API) */
#include "matgen.h"
#include "oracle.h"
#include "tuning_fields.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef BATCHCL_BENCH_CLBLAST
#include <clblast_c.h>
#endif

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
    int precision_given; /* --precision on the command line (bench pcyclic: double without) */
    int reps;
    const char *mappings; /* "all" or comma list of simd,collab,hybrid,auto */
    int lapack;
    int verify;
    int ppg; /* problems per work-group for the forced variants; 0 = table */
    int p_list[64], p_count; /* bench pcyclic: block counts; 0 = from --order */
    int order;               /* bench pcyclic: N = n*p to aim at */
    int method;              /* bench pcyclic: 0 table, 1/3 host/device panels, 2 batched */
    int cv_columns;          /* bench pcyclic: j_F forced (bcl_params.pcyclic_cv_columns) */
    int rv_host, qt_host, cv_host; /* bench pcyclic: the host's shares forced (bcl_params) */
    int same_bits;           /* bench pcyclic: every timed call's inverse against the first's */
    const char *methods;     /* bench sysv: all or some of ldlt,hpcr,eigen,auto (default ldlt) */
    size_t chunks[32]; /* bench geev: host-memory chunk sizes */
    int chunk_count;
    int vectors; /* bench geev: also the eigenvectors */
    int queues[64], queues_count; /* bench geev: the host-memory sweep's queues (none: the table's) */
    int bulges[64], bulges_count; /* bench geev: qr_bulges of every variant (none: the table's) */
} options;

static void parse_ints(const char *s, int *list, int *count)
{
    *count = 0;
    while (*s && *count < 64) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            break;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
        }
        for (long v = a; v <= b && *count < 64; ++v)
            list[(*count)++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
}

static void parse_list(const char *s, options *o)
{
    parse_ints(s, o->n_list, &o->n_count);
}

static void usage(void)
{
    puts("usage: batchcl <command> [options]\n"
         "  info                      devices, the chosen one and its limits\n"
         "  solve                     the main job: solve a large batch of SPD systems (LDL^T),\n"
         "                            verify every residual against the matrices, time it\n"
         "  bench sysv                symmetric solves per n, method and mapping, vs LAPACK (LDL^T:\n"
         "                            spotrf+spotrs; Householder + PCR and AUTO: ssysv; eigen: ssyevd)\n"
         "  bench syevd               eigendecompositions per n (sytrd + stedc), vs LAPACK ssyevd\n"
         "  bench geev                eigenvalues of non-symmetric matrices (Tokura et al. 2017,\n"
         "                            Tables 1, 2, 4): steps per mapping, transfers, chunk sweep,\n"
         "                            vs LAPACK dgeev sequential and with OpenMP; double precision\n"
         "  bench gtsv | ptsv         tridiagonal solves per m and variant, vs LAPACK ?gtsv / ?ptsv\n"
         "                            (default m 64,256,1024 with 2^24/m systems on GPUs)\n"
         "  bench pcyclic             block p-cyclic inversion (BSOFI) per n: GFLOP/s, clBLAST\n"
         "                            DGEMM's rate, speed-up over LAPACK dgetrf+dgetri (LU)\n"
         "  bench gemm                double GEMMs of square and BSOFI's shapes: clBLAST against\n"
         "                            the library's gemm.cl (NVIDIA sm_80+: fp64 tensor cores)\n"
         "options:\n"
         "  --device SPEC             gpu, cpu, P:D or a name substring (default: BATCHCL_DEVICE,\n"
         "                            else the first GPU, else the first CPU)\n"
         "  --n LIST                  sizes, e.g. 32 or 4,8,16-20 (solve: 32; bench: 4,8,16,24,32,48,64)\n"
         "  --batch N                 problems (default: 2^30/n^2 bytes-ish on GPUs, less on CPUs)\n"
         "  --nrhs K                  right-hand sides per problem (default 1)\n"
         "  --precision s|d|both      (default s)\n"
         "  --mapping LIST            bench: all or some of auto,simd,collab,hybrid (default all)\n"
         "  --method LIST             bench sysv: all or some of ldlt,hpcr,eigen,auto (default ldlt);\n"
         "                            hpcr = Householder + PCR, eigen = truncated eigen-solve\n"
         "  --reps R                  timed repetitions, the median is reported (default 5)\n"
         "  --ppg P                   bench: problems per work-group of the forced variants\n"
         "  --no-lapack               skip the LAPACK baseline\n"
         "bench geev:\n"
         "  --n LIST                  default 5,10,15,20,25,30\n"
         "  --batch N                 default 500000 on GPUs, 20000 on CPUs\n"
         "  --mapping auto|swb|mwb|all  the table's choice only, or also the SWB, MWB or all\n"
         "                            mappings for each p\n"
         "  --chunks LIST             chunk sizes of the host-memory sweep (default 1024 to 262144)\n"
         "  --queues LIST             queues of the host-memory sweep, 1 to 4 (default: the table's)\n"
         "  --bulges LIST             bulges a QR sweep chases at once, 1 and/or 2, for every\n"
         "                            variant (default: the table's)\n"
         "  --vectors                 also compute and time the eigenvectors\n"
         "  --p LIST                  p of the forced variants (default 1, 2, 4, ... up to 64)\n"
         "  --ppg P                   matrices per work-group of the forced variants (default: the\n"
         "                            table's)\n"
         "pcyclic options: --n LIST (block sizes), --p LIST (blocks; default N/n), --order N (the\n"
         "  matrix order aimed at, default 10240 on GPUs, 2048 on CPUs), --method 0|1|2|3, --batch B\n"
         "  (matrices per call; > 1 with n <= 32 runs the batched kernels), --precision s|d|both\n"
         "  (default d; float against clBLAST SGEMM and LAPACK sgetrf+sgetri), --cv-columns J\n"
         "  (block columns inverted column-wise during the factorization; -1: by rows only;\n"
         "  default: the table's), --rv-host H, --qt-host H, --cv-host H (the host's shares: block\n"
         "  columns of the row version, block rows of the Q^T application and of the column\n"
         "  version (method 1); -1: none; default: the model's),\n"
         "  --same-bits (every timed call's inverse read back and compared\n"
         "  bit for bit with the first's: the method is deterministic, so a difference is a race)");
}

static options parse(int argc, char **argv, int first)
{
    options o = {0};
    o.nrhs = 1;
    o.reps = 5;
    o.mappings = "all";
    o.methods = "ldlt";
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
        else if (!strcmp(a, "--p") && v) {
            parse_ints(v, o.p_list, &o.p_count);
            ++i;
        } else if (!strcmp(a, "--order") && v)
            o.order = atoi(argv[++i]);
        else if (!strcmp(a, "--method") && v) {
            o.methods = argv[++i];
            o.method = atoi(v);
        }
        else if (!strcmp(a, "--ppg") && v)
            o.ppg = atoi(argv[++i]);
        else if (!strcmp(a, "--cv-columns") && v)
            o.cv_columns = atoi(argv[++i]);
        else if (!strcmp(a, "--rv-host") && v)
            o.rv_host = atoi(argv[++i]);
        else if (!strcmp(a, "--qt-host") && v)
            o.qt_host = atoi(argv[++i]);
        else if (!strcmp(a, "--cv-host") && v)
            o.cv_host = atoi(argv[++i]);
        else if (!strcmp(a, "--same-bits"))
            o.same_bits = 1;
        else if (!strcmp(a, "--mapping") && v)
            o.mappings = argv[++i];
        else if (!strcmp(a, "--vectors"))
            o.vectors = 1;
        else if (!strcmp(a, "--queues") && v) {
            parse_ints(v, o.queues, &o.queues_count);
            ++i;
            for (int q = 0; q < o.queues_count; ++q)
                if (o.queues[q] < 1 || o.queues[q] > 4) {
                    fprintf(stderr, "batchcl: --queues %s: %d is outside 1..4\n", v, o.queues[q]);
                    exit(2);
                }
        }
        else if (!strcmp(a, "--bulges") && v) {
            parse_ints(v, o.bulges, &o.bulges_count);
            ++i;
            for (int q = 0; q < o.bulges_count; ++q)
                if (o.bulges[q] < 1 || o.bulges[q] > 2 || o.bulges_count > 2) {
                    fprintf(stderr, "batchcl: --bulges %s: one or two of 1, 2\n", v);
                    exit(2);
                }
        }
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
        else if (!strcmp(a, "--precision") && v) {
            ++i;
            o.precision = !strcmp(v, "d") ? 1 : !strcmp(v, "both") ? 2 : 0;
            o.precision_given = 1;
        } else if (!strcmp(a, "--no-lapack"))
            o.lapack = 0;
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

/* The LAPACK routine a batched method is compared with, looped over the batch with OpenMP, one
 * problem per thread: LDL^T (SPD) against ?potrf+?potrs; Householder + PCR and AUTO (any symmetric
 * matrix) against ?sysv (Bunch-Kaufman); the eigen-solve against ?syevd + V diag(1/lambda) V^T b. */
static void lapack_solve_one(bcl_method m, int n, int nrhs, int dbl, void *a, void *x, void *w,
                             void *work, int lwork, int *iwork, int liwork, void *t)
{
    if (m == BCL_LDLT) {
        if (dbl) {
            if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, a, n) == 0)
                LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, x, n);
        } else if (LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'L', n, a, n) == 0)
            LAPACKE_spotrs_work(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, x, n);
    } else if (m == BCL_EIGEN) {
        /* A = V diag(w) V^T, x = V diag(1/w) V^T b over |w| >= max|w| / 1e5 */
        int ok = dbl ? LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, w, work, lwork, iwork, liwork)
                     : LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, w, work, lwork, iwork, liwork);
        if (ok != 0)
            return;
        for (int c = 0; c < nrhs; ++c) {
            double wmax = 0;
            for (int i = 0; i < n; ++i)
                wmax = fmax(wmax, fabs(elem(w, dbl, (size_t)i)));
            for (int j = 0; j < n; ++j) {
                double s = 0, lj = elem(w, dbl, (size_t)j);
                for (int i = 0; i < n; ++i)
                    s += elem(a, dbl, (size_t)i + (size_t)j * n) * elem(x, dbl, (size_t)c * n + i);
                s = fabs(lj) >= wmax * 1e-5 ? s / lj : 0;
                dbl ? (void)(((double *)t)[j] = s) : (void)(((float *)t)[j] = (float)s);
            }
            for (int i = 0; i < n; ++i) {
                double s = 0;
                for (int j = 0; j < n; ++j)
                    s += elem(a, dbl, (size_t)i + (size_t)j * n) * elem(t, dbl, (size_t)j);
                dbl ? (void)(((double *)x)[(size_t)c * n + i] = s)
                    : (void)(((float *)x)[(size_t)c * n + i] = (float)s);
            }
        }
    } else {
        if (dbl)
            LAPACKE_dsysv_work(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, iwork, x, n, work, lwork);
        else
            LAPACKE_ssysv_work(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, iwork, x, n, work, lwork);
    }
}

static double lapack_rate(bcl_method m, int n, int nrhs, size_t batch, int dbl, const void *A,
                          const void *B)
{
    openblas_set_num_threads(1);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t nn = (size_t)n * n, nb = (size_t)n * nrhs;
    const size_t cap = m == BCL_LDLT ? (size_t)1 << 18 : (size_t)1 << 15;
    const size_t count = batch < cap ? batch : cap;
    const int lwork = 1 + 6 * n + 2 * n * n + 64 * n, liwork = 3 + 5 * n;
    double t0 = hu_now();
#pragma omp parallel
    {
        char *a = malloc(nn * es), *x = malloc(nb * es), *w = malloc((size_t)n * es),
             *t = malloc((size_t)n * es), *work = malloc((size_t)lwork * es);
        int *iwork = malloc(sizeof *iwork * (size_t)liwork);
#pragma omp for schedule(static)
        for (size_t k = 0; k < count; ++k) {
            memcpy(a, (const char *)A + k * nn * es, nn * es);
            memcpy(x, (const char *)B + k * nb * es, nb * es);
            lapack_solve_one(m, n, nrhs, dbl, a, x, w, work, lwork, iwork, liwork, t);
        }
        free(a);
        free(x);
        free(w);
        free(t);
        free(work);
        free(iwork);
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

/* the device time of the last call's kernels, as the library recorded them (bcl_last_step_times) */
static void print_steps(bcl_context *ctx, const char *what)
{
    const char *names[16];
    double sec[16];
    const int k = bcl_last_step_times(ctx, names, sec, 16);
    if (k <= 0)
        return;
    printf("#   %s, device time per kernel:", what);
    for (int i = 0; i < k; ++i)
        printf(" %s %.3f ms%s", names[i], sec[i] * 1e3, i + 1 < k ? "," : "\n");
}

static bcl_status device_time(bcl_context *ctx, bcl_method m, int n, int nrhs, size_t batch,
                              int dbl, dev_arrays *d, int reps, double *seconds)
{
    double *t = malloc(sizeof *t * (size_t)(reps + 1));
    bcl_status s = BCL_SUCCESS;
    for (int r = 0; r <= reps && s == BCL_SUCCESS; ++r) { /* the first run builds and warms up */
        cl_event ev = NULL;
        clFinish(bcl_cl_queue(ctx));
        const double t0 = hu_now();
        s = dbl ? bcl_dsysv_cl(ctx, m, n, nrhs, batch, BCL_LAYOUT_CONTIGUOUS, d->A, 0, d->B, 0, d->X,
                               0, d->info, 0, 0, NULL, &ev)
                : bcl_ssysv_cl(ctx, m, n, nrhs, batch, BCL_LAYOUT_CONTIGUOUS, d->A, 0, d->B, 0, d->X,
                               0, d->info, 0, 0, NULL, &ev);
        if (s == BCL_SUCCESS) {
            clWaitForEvents(1, &ev);
            /* LDL^T is one kernel: its profiled time; the other methods run several kernels (and
             * AUTO reads the residuals back to pick the failures): wall time from enqueue to end */
            t[r] = m == BCL_LDLT ? hu_event_seconds(ev) : hu_now() - t0;
            clReleaseEvent(ev);
        }
    }
    if (s == BCL_SUCCESS)
        *seconds = hu_median(t + 1, reps);
    if (s == BCL_SUCCESS && m != BCL_LDLT) {
        char what[64];
        snprintf(what, sizeof what, "n = %d, method %s", n,
                 m == BCL_HOUSEHOLDER_PCR ? "hpcr" : m == BCL_EIGEN ? "eigen" : "auto");
        print_steps(ctx, what);
    }
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

/* The tuning entry in force per routine, precision and a few sizes (or --n). */
static void print_tuning(bcl_context *ctx, const options *o, const bcl_device_info *d)
{
    printf("  architecture: %s\n", d->architecture[0] ? d->architecture : "(not reported)");
    const char *rep = bcl_tuning_report(ctx);
    printf("tuning files%s\n%s", *rep ? ":" : ": none found (built-in heuristic only)", "");
    for (const char *line = rep; *line;) {
        const size_t len = strcspn(line, "\n");
        printf("  %.*s\n", (int)len, line);
        line += len + (line[len] == '\n');
    }
    static const char *const level_names[] = {"", "this device", "same architecture",
                                              "same vendor", "same device type", "heuristic"};
    puts("tuning in force (size: source, parameters; unset parameters are the routine's choice):");
    for (int r = 0; bcl_tuning_routine(r); ++r) {
        const char *name = bcl_tuning_routine(r);
        const int is_tri = !strcmp(name, "tridiag");
        static const int def_sizes[] = {8, 32, 64}, tri_sizes[] = {64, 1024};
        const int *sizes = o->n_count ? o->n_list : is_tri ? tri_sizes : def_sizes;
        const int count = o->n_count ? o->n_count : is_tri ? 2 : 3;
        for (int dbl = 0; dbl < 2; ++dbl) {
            if (dbl && !d->has_fp64)
                continue;
            printf("  %-8s %-6s", name, dbl ? "double" : "float");
            for (int i = 0; i < count; ++i) {
                bcl_tuning_choice c;
                if (bcl_tuning_query(ctx, name, dbl, sizes[i], &c) != BCL_SUCCESS)
                    continue;
                printf("%s n=%d: %s", i ? ";" : "", sizes[i], level_names[c.level]);
                if (c.level != BCL_TUNING_HEURISTIC && c.tuned_n != sizes[i])
                    printf(" (tuned at n=%d)", c.tuned_n);
                for (size_t f = 0; f < BCL_TUNING_FIELD_COUNT; ++f) {
                    const long v = bcl_field_get(&c.params, &bcl_tuning_fields[f]);
                    if (!v)
                        continue;
                    if (bcl_tuning_fields[f].kind == BCL_FIELD_MAPPING)
                        printf(" %s=%s", bcl_tuning_fields[f].name, bcl_mapping_key((bcl_mapping)v));
                    else
                        printf(" %s=%ld", bcl_tuning_fields[f].name, v);
                }
                if (c.throughput > 0 && c.default_throughput > 0 && c.tuned_n == sizes[i])
                    printf(" (%.2fx the heuristic)", c.throughput / c.default_throughput);
            }
            putchar('\n');
        }
    }
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
    printf("  eigen routines (sytrd, stedc, syevd, HOUSEHOLDER_PCR, EIGEN, AUTO) up to n = %d (float), "
           "%d (double)\n",
           bcl_syevd_max_n(ctx, 0), bcl_syevd_max_n(ctx, 1));
    print_tuning(ctx, o, &d);
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
        device_time(ctx, BCL_LDLT, n, nrhs, batch, dbl, &d, o->reps, &dev_s) == BCL_SUCCESS) {
        double bytes = (double)batch * ((double)(nn + 2 * nb) * es + 4);
        printf("  device-resident (kernel time, median of %d): %.3f ms = %.3g systems/s, %.1f GB/s\n",
               o->reps, dev_s * 1e3, (double)batch / dev_s, bytes / dev_s * 1e-9);
    } else {
        printf("  device-resident run skipped: the batch does not fit in device memory at once\n");
    }
    release(&d);
    if (o->lapack) {
        double rate = lapack_rate(BCL_LDLT, n, nrhs, batch, dbl, A, B);
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
    static const struct {
        const char *name;
        bcl_method m;
    } methods[] = {{"ldlt", BCL_LDLT}, {"hpcr", BCL_HOUSEHOLDER_PCR}, {"eigen", BCL_EIGEN}, {"auto", BCL_AUTO}};
    double bw = hu_copy_bandwidth(ctx);
    printf("# bench sysv on %s, driver %s; float4 copy kernel: %.1f GB/s\n", dev.name,
           dev.driver_version, bw * 1e-9);
    printf("# device: device-resident data, median of %d (ldlt: the kernel's profiled time; the others: "
           "wall time from enqueue to completion); host: end to end from host memory, transfers "
           "included\n",
           o->reps);
    printf("# GB/s counts A (n*n), B and X (n*nrhs) and info once; %% of the copy kernel's bandwidth\n");
    printf("# LAPACK (OpenMP, %d threads): ldlt vs ?potrf+?potrs, hpcr and auto vs ?sysv, eigen vs "
           "?syevd + V diag(1/lambda) V^T b\n",
           omp_get_max_threads());
    printf("%-4s %-5s %9s %-6s %-14s %5s %10s %12s %8s %6s %12s %12s %8s %9s\n", "prec", "n", "batch",
           "method", "mapping", "n*", "device ms", "systems/s", "GB/s", "%bw", "host sys/s",
           "LAPACK sys/s", "vs LAPACK", "max res");
    for (int pi = 0; pi < 2; ++pi) {
        int dbl = pi;
        if ((o->precision == 0 && dbl) || (o->precision == 1 && !dbl))
            continue;
        for (int ni = 0; ni < o->n_count; ++ni) {
            const int n = o->n_list[ni], nrhs = o->nrhs;
            const size_t batch = o->batch ? o->batch : default_batch(&dev, n);
            const size_t es = dbl ? 8 : 4, nn = (size_t)n * n, nb = (size_t)n * nrhs;
            void *A = malloc(batch * nn * es), *B = malloc(batch * nb * es), *X = malloc(batch * nb * es);
            int *info = malloc(batch * sizeof *info), *path = malloc(batch * sizeof *path);
            make_batch(n, nrhs, batch, dbl, 7 + (uint64_t)n, A, B);
            dev_arrays d = {0};
            int resident = upload(ctx, n, nrhs, batch, dbl, A, B, &d) == 0;
            for (size_t mi = 0; mi < sizeof methods / sizeof methods[0]; ++mi) {
                const bcl_method method = methods[mi].m;
                if (!wants(o->methods, methods[mi].name))
                    continue;
                double lapack = o->lapack ? lapack_rate(method, n, nrhs, batch, dbl, A, B) : 0;
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
                /* the mapping variants are LDL^T's; the other methods run with the table's choices */
                const size_t nvar = method == BCL_LDLT ? sizeof variants / sizeof variants[0] : 1;
                for (size_t v = 0; v < nvar; ++v) {
                    if (method == BCL_LDLT && !wants(o->mappings, variants[v].name))
                        continue;
                    if (v >= 4 && (variants[v].nstar == variants[v - 1].nstar || n < 4 * (int)v - 8))
                        continue;
                    bcl_params p = {0};
                    p.mapping = variants[v].m;
                    p.work_items_per_problem = variants[v].nstar;
                    p.problems_per_group = o->ppg;
                    bcl_set_params(ctx, v ? &p : NULL);
                    double dev_s = 0, host_s = 0;
                    bcl_status st = resident ? device_time(ctx, method, n, nrhs, batch, dbl, &d, o->reps, &dev_s)
                                             : BCL_OUT_OF_MEMORY;
                    double t0 = hu_now();
                    bcl_status sh = dbl ? bcl_dsysvx(ctx, method, n, nrhs, batch, A, B, X, info, NULL, path)
                                        : bcl_ssysvx(ctx, method, n, nrhs, batch, A, B, X, info, NULL, path);
                    host_s = hu_now() - t0;
                    /* what ran: the mapping and work-items per problem the library chose */
                    char label[40] = "-", nstar[16] = "-";
                    if (method == BCL_LDLT) {
                        const char *ran = strstr(bcl_last_kernel(ctx), "; mapping ");
                        int items = 0;
                        if (ran && sscanf(ran, "; mapping %31[^,], %d work-items", label, &items) == 2)
                            snprintf(nstar, sizeof nstar, "%d", items);
                        if (v == 0)
                            snprintf(label + strlen(label), sizeof label - strlen(label), "(auto)");
                    } else if (method == BCL_AUTO && sh != BCL_INVALID_ARGUMENT) {
                        size_t eig = 0;
                        for (size_t k = 0; k < batch; ++k)
                            eig += path[k] == BCL_EIGEN;
                        snprintf(label, sizeof label, "%.3g%% eigen", 100.0 * (double)eig / (double)batch);
                    }
                    if (sh != BCL_SUCCESS && sh != BCL_NUMERICAL_FAILURE) {
                        printf("%-4s %-5d %9zu %-6s %-14s %5s  %s: %s\n", dbl ? "d" : "s", n, batch,
                               methods[mi].name, variants[v].name, "-", bcl_status_string(sh),
                               bcl_last_error(ctx));
                        continue;
                    }
                    /* the eigen-solve's info counts discarded eigenvalues: its residual is over all */
                    double res = max_residual(n, nrhs, batch, dbl, A, B, X, method == BCL_EIGEN ? NULL : info);
                    double bytes = (double)batch * ((double)(nn + 2 * nb) * es + 4);
                    char devms[16] = "-", rate[16] = "-", gbs[16] = "-", pbw[16] = "-";
                    if (st == BCL_SUCCESS) {
                        snprintf(devms, sizeof devms, "%.3f", dev_s * 1e3);
                        snprintf(rate, sizeof rate, "%.4g", batch / dev_s);
                        snprintf(gbs, sizeof gbs, "%.1f", bytes / dev_s * 1e-9);
                        snprintf(pbw, sizeof pbw, "%.1f", bw > 0 ? 100 * bytes / dev_s / bw : 0);
                    }
                    printf("%-4s %-5d %9zu %-6s %-14s %5s %10s %12s %8s %6s %12.4g %12.4g %8.2f %9.3g\n",
                           dbl ? "d" : "s", n, batch, methods[mi].name, label, nstar, devms, rate, gbs,
                           pbw, batch / host_s, lapack, lapack > 0 ? (batch / host_s) / lapack : 0, res);
                    fflush(stdout);
                }
                bcl_set_params(ctx, NULL);
            }
            release(&d);
            free(A);
            free(B);
            free(X);
            free(info);
            free(path);
        }
    }
    bcl_destroy(ctx);
    return 0;
}

/* ---- symmetric eigendecomposition benchmark ---- */

/* Random symmetric matrices, entries uniform in [-1, 1), each problem from its own stream. */
static void make_symmetric(int n, size_t batch, int dbl, uint64_t seed, void *A)
{
    const size_t nn = (size_t)n * n;
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < batch; ++k) {
        mg_rng r;
        mg_seed(&r, seed ^ (0x9e3779b97f4a7c15ULL * (k + 1)));
        for (int j = 0; j < n; ++j)
            for (int i = j; i < n; ++i) {
                const double v = 2 * mg_uniform(&r) - 1;
                const size_t ij = k * nn + (size_t)i + (size_t)j * n, ji = k * nn + (size_t)j + (size_t)i * n;
                if (dbl)
                    ((double *)A)[ij] = ((double *)A)[ji] = v;
                else
                    ((float *)A)[ij] = ((float *)A)[ji] = (float)v;
            }
    }
}

/* LAPACK ?syevd (eigenvalues and vectors) looped with OpenMP, one problem per thread. */
static double lapack_syevd_rate(int n, size_t batch, int dbl, const void *A)
{
    openblas_set_num_threads(1);
    const size_t es = dbl ? 8 : 4, nn = (size_t)n * n;
    const size_t count = batch < ((size_t)1 << 15) ? batch : ((size_t)1 << 15);
    const int lwork = 1 + 6 * n + 2 * n * n, liwork = 3 + 5 * n;
    double t0 = hu_now();
#pragma omp parallel
    {
        char *a = malloc(nn * es), *w = malloc((size_t)n * es), *work = malloc((size_t)lwork * es);
        int *iwork = malloc(sizeof *iwork * (size_t)liwork);
#pragma omp for schedule(static)
        for (size_t k = 0; k < count; ++k) {
            memcpy(a, (const char *)A + k * nn * es, nn * es);
            if (dbl)
                LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, (double *)a, n, (double *)w,
                                    (double *)work, lwork, iwork, liwork);
            else
                LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, (float *)a, n, (float *)w,
                                    (float *)work, lwork, iwork, liwork);
        }
        free(a);
        free(w);
        free(work);
        free(iwork);
    }
    return (double)count / (hu_now() - t0);
}

/* On up to 256 problems spread over the batch: the largest ||A V - V diag(W)||_max / (||A||_1 n eps),
 * ||V^T V - I||_max / (n eps) and |W - W_lapack| / (||A||_1 n eps), W_lapack from dsyevd in double. */
static void syevd_check(int n, size_t batch, int dbl, const void *A, const void *W, const void *V,
                        double *res, double *orth, double *eig)
{
    const double eps = dbl ? 0x1p-53 : 0x1p-24;
    const size_t nn = (size_t)n * n, stride = batch > 256 ? batch / 256 : 1;
    double wr = 0, wo = 0, we = 0;
#pragma omp parallel for reduction(max : wr, wo, we) schedule(dynamic)
    for (size_t k = 0; k < batch; k += stride) {
        double *a = malloc(sizeof *a * nn), *w = malloc(sizeof *w * (size_t)n);
        double anorm = 0;
        for (int j = 0; j < n; ++j) {
            double c = 0;
            for (int i = 0; i < n; ++i) {
                a[i + (size_t)j * n] = elem(A, dbl, k * nn + i + (size_t)j * n);
                c += fabs(a[i + (size_t)j * n]);
            }
            anorm = fmax(anorm, c);
        }
        anorm = anorm > 0 ? anorm : 1;
        for (int j = 0; j < n; ++j) {
            const double lj = elem(W, dbl, k * (size_t)n + j);
            for (int i = 0; i < n; ++i) {
                double r = -lj * elem(V, dbl, k * nn + i + (size_t)j * n), o = i == j ? -1 : 0;
                for (int l = 0; l < n; ++l) {
                    r += a[i + (size_t)l * n] * elem(V, dbl, k * nn + l + (size_t)j * n);
                    o += elem(V, dbl, k * nn + l + (size_t)i * n) * elem(V, dbl, k * nn + l + (size_t)j * n);
                }
                const double rr = fabs(r) / (anorm * n * eps), oo = fabs(o) / (n * eps);
                wr = rr > wr || rr != rr ? rr : wr;
                wo = oo > wo || oo != oo ? oo : wo;
            }
        }
        double *work = malloc(sizeof *work * (size_t)(3 * n + 1));
        LAPACKE_dsyev_work(LAPACK_COL_MAJOR, 'N', 'L', n, a, n, w, work, 3 * n + 1);
        free(work);
        for (int j = 0; j < n; ++j) {
            const double d = fabs(elem(W, dbl, k * (size_t)n + j) - w[j]) / (anorm * n * eps);
            we = d > we || d != d ? d : we;
        }
        free(a);
        free(w);
    }
    *res = wr;
    *orth = wo;
    *eig = we;
}

static int cmd_bench_syevd(options *o)
{
    bcl_device_info dev;
    bcl_context *ctx = open_context(o, &dev);
    if (!o->n_count) {
        const int def[] = {8, 16, 32, 64};
        for (int i = 0; i < 4; ++i)
            o->n_list[o->n_count++] = def[i];
    }
    printf("# bench syevd (Householder sytrd + divide and conquer stedc + back-transformation) on %s, "
           "driver %s\n",
           dev.name, dev.driver_version);
    printf("# device: device-resident data, wall time from enqueue to completion (median of %d); host: "
           "end to end from host memory, transfers included; LAPACK ?syevd with OpenMP on %d threads\n",
           o->reps, omp_get_max_threads());
    printf("# checks on <= 256 problems: res = ||AV - VW||/(||A|| n eps), orth = ||V^T V - I||/(n eps), "
           "eig = |W - W_dsyev|/(||A|| n eps)\n");
    printf("%-4s %-4s %9s %10s %12s %12s %12s %8s %8s %8s %8s %7s\n", "prec", "n", "batch", "device ms",
           "matrices/s", "host mat/s", "LAPACK mat/s", "vs LAPACK", "res", "orth", "eig", "failed");
    int all_ok = 1;
    for (int pi = 0; pi < 2; ++pi) {
        const int dbl = pi;
        if ((o->precision == 0 && dbl) || (o->precision == 1 && !dbl))
            continue;
        for (int ni = 0; ni < o->n_count; ++ni) {
            const int n = o->n_list[ni];
            if (n > bcl_syevd_max_n(ctx, dbl)) {
                printf("%-4s %-4d  beyond this device's largest n (%d)\n", dbl ? "d" : "s", n,
                       bcl_syevd_max_n(ctx, dbl));
                continue;
            }
            const size_t batch = o->batch ? o->batch : dev.is_gpu ? (size_t)262144 : (size_t)4096;
            const size_t es = dbl ? 8 : 4, nn = (size_t)n * n;
            void *A = malloc(batch * nn * es), *V = malloc(batch * nn * es), *W = malloc(batch * (size_t)n * es);
            int *info = malloc(batch * sizeof *info);
            if (!A || !V || !W || !info) {
                fprintf(stderr, "batchcl: out of host memory for %zu problems\n", batch);
                return 2;
            }
            make_symmetric(n, batch, dbl, 11 + (uint64_t)n, A);
            double lapack = o->lapack ? lapack_syevd_rate(n, batch, dbl, A) : 0;

            /* device-resident: A in, W, V, info out */
            cl_context c = bcl_cl_context(ctx);
            cl_int e1, e2, e3, e4;
            cl_mem dA = clCreateBuffer(c, CL_MEM_READ_ONLY, batch * nn * es, NULL, &e1);
            cl_mem dV = clCreateBuffer(c, CL_MEM_READ_WRITE, batch * nn * es, NULL, &e2);
            cl_mem dW = clCreateBuffer(c, CL_MEM_READ_WRITE, batch * (size_t)n * es, NULL, &e3);
            cl_mem dI = clCreateBuffer(c, CL_MEM_READ_WRITE, batch * sizeof(int), NULL, &e4);
            double dev_s = -1;
            if (!e1 && !e2 && !e3 && !e4 &&
                clEnqueueWriteBuffer(bcl_cl_queue(ctx), dA, CL_TRUE, 0, batch * nn * es, A, 0, NULL, NULL) == CL_SUCCESS) {
                double *t = malloc(sizeof *t * (size_t)(o->reps + 1));
                bcl_status s = BCL_SUCCESS;
                for (int r = 0; r <= o->reps && s == BCL_SUCCESS; ++r) { /* the first builds */
                    cl_event ev = NULL;
                    clFinish(bcl_cl_queue(ctx));
                    const double t0 = hu_now();
                    s = dbl ? bcl_dsyevd_cl(ctx, n, batch, BCL_LAYOUT_CONTIGUOUS, dA, 0, dW, 0, dV, 0, dI, 0, 0, NULL, &ev)
                            : bcl_ssyevd_cl(ctx, n, batch, BCL_LAYOUT_CONTIGUOUS, dA, 0, dW, 0, dV, 0, dI, 0, 0, NULL, &ev);
                    if (s == BCL_SUCCESS) { /* several kernels: wall time from enqueue to end */
                        clWaitForEvents(1, &ev);
                        t[r] = hu_now() - t0;
                        clReleaseEvent(ev);
                    }
                }
                if (s == BCL_SUCCESS) {
                    dev_s = hu_median(t + 1, o->reps);
                    char what[32];
                    snprintf(what, sizeof what, "syevd n = %d", n);
                    print_steps(ctx, what);
                }
                else
                    printf("# device-resident syevd: %s: %s\n", bcl_status_string(s), bcl_last_error(ctx));
                free(t);
            }
            if (dA) clReleaseMemObject(dA);
            if (dV) clReleaseMemObject(dV);
            if (dW) clReleaseMemObject(dW);
            if (dI) clReleaseMemObject(dI);

            double t0 = hu_now();
            bcl_status sh = dbl ? bcl_dsyevd(ctx, n, batch, A, W, V, info)
                                : bcl_ssyevd(ctx, n, batch, A, W, V, info);
            const double host_s = hu_now() - t0;
            if (sh != BCL_SUCCESS && sh != BCL_NUMERICAL_FAILURE) {
                printf("%-4s %-4d %9zu  %s: %s\n", dbl ? "d" : "s", n, batch, bcl_status_string(sh),
                       bcl_last_error(ctx));
                all_ok = 0;
            } else {
                size_t failed = 0;
                for (size_t k = 0; k < batch; ++k)
                    failed += info[k] != 0;
                double res, orth, eig;
                syevd_check(n, batch, dbl, A, W, V, &res, &orth, &eig);
                all_ok &= failed == 0 && res < 30 && orth < 30 && eig < 30;
                char devms[16] = "-", rate[16] = "-";
                if (dev_s > 0) {
                    snprintf(devms, sizeof devms, "%.3f", dev_s * 1e3);
                    snprintf(rate, sizeof rate, "%.4g", batch / dev_s);
                }
                printf("%-4s %-4d %9zu %10s %12s %12.4g %12.4g %8.2f %8.3g %8.3g %8.3g %7zu\n",
                       dbl ? "d" : "s", n, batch, devms, rate, batch / host_s, lapack,
                       lapack > 0 ? (batch / host_s) / lapack : 0, res, orth, eig, failed);
            }
            fflush(stdout);
            free(A);
            free(V);
            free(W);
            free(info);
        }
    }
    printf("# verification (res, orth, eig < 30, no failures): %s\n", all_ok ? "PASS" : "FAIL");
    bcl_destroy(ctx);
    return all_ok ? 0 : 1;
}

/* ---- tridiagonal benchmark ---- */

/* Diagonally dominant systems (gtsv) or SPD ones (ptsv, T = L D L^T), O(m) per system. */
static void make_tridiag(int m, size_t batch, int dbl, int sym, uint64_t seed, void *dl, void *d,
                         void *du, void *b)
{
    const size_t mm = (size_t)m;
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < batch; ++k) {
        mg_rng r;
        mg_seed(&r, seed ^ (0x9e3779b97f4a7c15ULL * (k + 1)));
        double carry = 0; /* ptsv: l_{i-1}^2 D_{i-1} */
        for (int i = 0; i < m; ++i) {
            double l, dd, u;
            if (sym) {
                const double Di = 1 + mg_uniform(&r), li = 2 * mg_uniform(&r) - 1;
                dd = Di + carry;
                u = i < m - 1 ? li * Di : 0;
                carry = li * li * Di;
                l = 0;
            } else {
                l = i > 0 ? 2 * mg_uniform(&r) - 1 : 0;
                u = i < m - 1 ? 2 * mg_uniform(&r) - 1 : 0;
                dd = fabs(l) + fabs(u) + 0.5 + mg_uniform(&r);
            }
            const size_t at = k * mm + (size_t)i;
            if (dbl) {
                ((double *)d)[at] = dd;
                ((double *)b)[at] = 2 * mg_uniform(&r) - 1;
                if (sym) {
                    if (i < m - 1)
                        ((double *)du)[k * (mm - 1) + (size_t)i] = u;
                } else {
                    ((double *)dl)[at] = l;
                    ((double *)du)[at] = u;
                }
            } else {
                ((float *)d)[at] = (float)dd;
                ((float *)b)[at] = (float)(2 * mg_uniform(&r) - 1);
                if (sym) {
                    if (i < m - 1)
                        ((float *)du)[k * (mm - 1) + (size_t)i] = (float)u;
                } else {
                    ((float *)dl)[at] = (float)l;
                    ((float *)du)[at] = (float)u;
                }
            }
        }
    }
}

/* LAPACK ?gtsv (partial pivoting) or ?ptsv looped with OpenMP; it overwrites its inputs, so each
 * system is copied first, as a caller keeping the matrix would. */
static double lapack_tridiag_rate(int m, size_t batch, int dbl, int sym, const void *dl,
                                  const void *d, const void *du, const void *b)
{
    openblas_set_num_threads(1);
    const size_t es = dbl ? 8 : 4, mm = (size_t)m, noff = sym ? mm - 1 : mm;
    const size_t count = batch < ((size_t)1 << 16) ? batch : ((size_t)1 << 16);
    double t0 = hu_now();
#pragma omp parallel
    {
        char *L = malloc(mm * es + es), *D = malloc(mm * es), *U = malloc(mm * es + es), *X = malloc(mm * es);
#pragma omp for schedule(static)
        for (size_t k = 0; k < count; ++k) {
            memcpy(D, (const char *)d + k * mm * es, mm * es);
            memcpy(X, (const char *)b + k * mm * es, mm * es);
            memcpy(U, (const char *)du + k * noff * es, noff * es);
            if (!sym) /* LAPACK's sub-diagonal starts at row 2 */
                memcpy(L, (const char *)dl + (k * mm + 1) * es, (mm - 1) * es);
            if (dbl)
                sym ? LAPACKE_dptsv_work(LAPACK_COL_MAJOR, m, 1, (double *)D, (double *)U, (double *)X, m)
                    : LAPACKE_dgtsv_work(LAPACK_COL_MAJOR, m, 1, (double *)L, (double *)D, (double *)U,
                                         (double *)X, m);
            else
                sym ? LAPACKE_sptsv_work(LAPACK_COL_MAJOR, m, 1, (float *)D, (float *)U, (float *)X, m)
                    : LAPACKE_sgtsv_work(LAPACK_COL_MAJOR, m, 1, (float *)L, (float *)D, (float *)U,
                                         (float *)X, m);
        }
        free(L);
        free(D);
        free(U);
        free(X);
    }
    return (double)count / (hu_now() - t0);
}

static int cmd_bench_tridiag(options *o, int sym)
{
    bcl_device_info dev;
    bcl_context *ctx = open_context(o, &dev);
    if (!o->n_count) {
        const int def[] = {64, 256, 1024};
        for (int i = 0; i < 3; ++i)
            o->n_list[o->n_count++] = def[i];
    }
    const double bw = hu_copy_bandwidth(ctx);
    const char *name = sym ? "ptsv" : "gtsv";
    printf("# bench %s on %s, driver %s; float4 copy kernel: %.1f GB/s\n", name, dev.name,
           dev.driver_version, bw * 1e-9);
    printf("# device: kernel time on device-resident data (median of %d); host: end to end from "
           "host memory\n# GB/s counts the matrix arrays and B read once and B written once\n",
           o->reps);
    printf("%-4s %-5s %9s %-13s %4s %10s %12s %8s %6s %12s %12s %9s %6s\n", "prec", "m", "batch",
           "variant", "rows", "device ms", "systems/s", "GB/s", "%bw", "host sys/s", "LAPACK sys/s",
           "vs LAPACK", "fail");
    cl_context c = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    for (int dbl = 0; dbl < 2; ++dbl) {
        if ((o->precision == 0 && dbl) || (o->precision == 1 && !dbl))
            continue;
        for (int ni = 0; ni < o->n_count; ++ni) {
            const int m = o->n_list[ni];
            const size_t es = dbl ? 8 : 4, mm = (size_t)m, noff = sym ? mm - 1 : mm;
            size_t batch = o->batch ? o->batch : (dev.is_gpu ? ((size_t)1 << 24) : ((size_t)1 << 20)) / mm;
            if (batch < 1)
                batch = 1;
            void *dl = malloc(batch * mm * es), *d = malloc(batch * mm * es),
                 *du = malloc(batch * mm * es), *b = malloc(batch * mm * es), *x = malloc(batch * mm * es);
            int *info = malloc(batch * sizeof *info);
            make_tridiag(m, batch, dbl, sym, 99 + (uint64_t)m, dl, d, du, b);
            const double lapack = o->lapack ? lapack_tridiag_rate(m, batch, dbl, sym, dl, d, du, b) : 0;
            cl_int e1, e2, e3, e4, e5;
            cl_mem bdl = sym ? NULL : clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, batch * mm * es, dl, &e1);
            cl_mem bd = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, batch * mm * es, d, &e2);
            cl_mem bdu = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                        batch * (noff ? noff : 1) * es, du, &e3);
            cl_mem bb = clCreateBuffer(c, CL_MEM_READ_WRITE, batch * mm * es, NULL, &e4);
            cl_mem binfo = clCreateBuffer(c, CL_MEM_READ_WRITE, batch * sizeof(int), NULL, &e5);
            const int variants_rows[] = {0, 1, 2, 4, 8, 16, -1};
            for (int vi = 0; vi < 7; ++vi) {
                const int rows = variants_rows[vi];
                bcl_params p = {0};
                if (rows > 0) {
                    if ((size_t)(m + rows - 1) / (size_t)rows > dev.max_work_group_size || (rows > 1 && m < 2 * rows))
                        continue;
                    p.mapping = rows == 1 ? BCL_MAPPING_COLLABORATIVE : BCL_MAPPING_HYBRID;
                    p.rows_per_work_item = rows;
                } else if (rows < 0) {
                    p.mapping = BCL_MAPPING_SIMD;
                }
                p.problems_per_group = o->ppg;
                if (!wants(o->mappings, rows == 0 ? "auto" : rows < 0 ? "simd" : "pcr"))
                    continue;
                bcl_set_params(ctx, rows == 0 && !o->ppg ? NULL : &p);
                double t[64];
                bcl_status st = BCL_SUCCESS;
                const int reps = o->reps < 63 ? o->reps : 63;
                for (int r = 0; r <= reps && st == BCL_SUCCESS; ++r) {
                    clEnqueueWriteBuffer(q, bb, CL_TRUE, 0, batch * mm * es, b, 0, NULL, NULL);
                    cl_event ev = NULL;
                    if (sym)
                        st = dbl ? bcl_dptsv_cl(ctx, m, 1, batch, BCL_LAYOUT_CONTIGUOUS, bd, 0, bdu, 0, bb, 0, binfo, 0, 0, NULL, &ev)
                                 : bcl_sptsv_cl(ctx, m, 1, batch, BCL_LAYOUT_CONTIGUOUS, bd, 0, bdu, 0, bb, 0, binfo, 0, 0, NULL, &ev);
                    else
                        st = dbl ? bcl_dgtsv_cl(ctx, m, 1, batch, BCL_LAYOUT_CONTIGUOUS, bdl, 0, bd, 0, bdu, 0, bb, 0, binfo, 0, 0, NULL, &ev)
                                 : bcl_sgtsv_cl(ctx, m, 1, batch, BCL_LAYOUT_CONTIGUOUS, bdl, 0, bd, 0, bdu, 0, bb, 0, binfo, 0, 0, NULL, &ev);
                    if (st == BCL_SUCCESS) {
                        clWaitForEvents(1, &ev);
                        t[r] = hu_event_seconds(ev);
                        clReleaseEvent(ev);
                    }
                }
                const char *label = rows == 0 ? "auto" : rows < 0 ? "simd" : "pcr";
                if (st != BCL_SUCCESS) {
                    printf("%-4s %-5d %9zu %-13s %4d  %s\n", dbl ? "d" : "s", m, batch, label, rows,
                           bcl_status_string(st));
                    continue;
                }
                const double dev_s = hu_median(t + 1, reps);
                char what[32] = "?";
                int ran_rows = 0;
                const char *ran = strstr(bcl_last_kernel(ctx), "; mapping ");
                if (ran)
                    sscanf(ran, "; mapping %31[^,], %d rows", what, &ran_rows);
                memcpy(x, b, batch * mm * es);
                double t0 = hu_now();
                bcl_status sh = sym ? (dbl ? bcl_dptsv(ctx, m, 1, batch, d, du, x, info) : bcl_sptsv(ctx, m, 1, batch, d, du, x, info))
                                    : (dbl ? bcl_dgtsv(ctx, m, 1, batch, dl, d, du, x, info) : bcl_sgtsv(ctx, m, 1, batch, dl, d, du, x, info));
                const double host_s = hu_now() - t0;
                size_t failed = 0;
                for (size_t k = 0; k < batch; ++k)
                    failed += info[k] != 0;
                const double bytes = (double)batch * (double)((sym ? 2 * mm - 1 : 3 * mm) + 2 * mm) * es;
                printf("%-4s %-5d %9zu %-13.13s %4d %10.4f %12.4g %8.1f %6.1f %12.4g %12.4g %9.2f %6zu%s\n",
                       dbl ? "d" : "s", m, batch, rows == 0 ? what : label, ran_rows, dev_s * 1e3, batch / dev_s,
                       bytes / dev_s * 1e-9, bw > 0 ? 100 * bytes / dev_s / bw : 0, batch / host_s, lapack,
                       lapack > 0 ? (batch / host_s) / lapack : 0, failed,
                       sh == BCL_SUCCESS || sh == BCL_NUMERICAL_FAILURE ? "" : " (host call failed)");
                fflush(stdout);
            }
            bcl_set_params(ctx, NULL);
            if (bdl)
                clReleaseMemObject(bdl);
            clReleaseMemObject(bd);
            clReleaseMemObject(bdu);
            clReleaseMemObject(bb);
            clReleaseMemObject(binfo);
            free(dl);
            free(d);
            free(du);
            free(b);
            free(x);
            free(info);
        }
    }
    bcl_destroy(ctx);
    return 0;
}

/* ---- bench pcyclic ---- */

/* BSOFI's flops as the paper counts them (Table 1: BSOF + BSTRI_RV + BSOI) */
static double bsofi_flops(double n, double p)
{
    return n * n * (46 * n * p - 60 * n + 27 * p) / 3 + n * n * n * (3 * p * p + 7 * p - 21) / 3 +
           2 * n * n * p * (3 * n * p - 2 * n + p);
}

/* seconds of one C := op(A) op(B) in double or float by clBLAST or by gemm.cl (its tensor-core
 * build in double where the device has one, as the inversion runs it): the median of reps after a
 * first call that builds the kernels, 0 when the call fails */
static double gemm_seconds(bcl_context *ctx, int dbl, int clblast, int ta, int tb, size_t m,
                           size_t n, size_t k, cl_mem a, cl_mem b, cl_mem c, int reps)
{
    const int tensor = !clblast && dbl && bcl_gemm_tensor_device(ctx);
    /* gemm.cl's sums of the ranges of k, where the shape gives the device too few tiles */
    const size_t work_elems = clblast ? 0 : bcl_gemm_work_elements(ctx, m, n, k, 1);
    cl_command_queue q = bcl_cl_queue(ctx);
    cl_int werr = CL_SUCCESS;
    cl_mem work = work_elems ? clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE,
                                              work_elems * (dbl ? 8 : 4), NULL, &werr)
                             : NULL;
    if (werr != CL_SUCCESS)
        return 0;
    const size_t lda = ta ? k : m, ldb = tb ? n : k;
    double t[32];
    reps = reps < 1 ? 1 : reps > 31 ? 31 : reps;
    int ok = 1;
    for (int r = 0; r <= reps && ok; ++r) {
        const double t0 = hu_now();
        if (clblast) {
#ifdef BATCHCL_BENCH_CLBLAST
            const CLBlastTranspose cta = ta ? CLBlastTransposeYes : CLBlastTransposeNo,
                                   ctb = tb ? CLBlastTransposeYes : CLBlastTransposeNo;
            ok = (dbl ? CLBlastDgemm(CLBlastLayoutColMajor, cta, ctb, m, n, k, 1.0, a, 0, lda, b, 0,
                                     ldb, 0.0, c, 0, m, &q, NULL)
                      : CLBlastSgemm(CLBlastLayoutColMajor, cta, ctb, m, n, k, 1.0f, a, 0, lda, b, 0,
                                     ldb, 0.0f, c, 0, m, &q, NULL)) == CLBlastSuccess;
#else
            ok = 0;
#endif
        } else {
            const bcl_gemm_operand oa = {a, 0, lda, 0}, ob = {b, 0, ldb, 0}, oc = {c, 0, m, 0};
            ok = bcl_gemm_enqueue(ctx, q, "bench gemm", dbl, tensor, ta, tb, m, n, k, 1, 1.0, oa, ob,
                                  0.0, oc, work, work_elems, NULL) == BCL_SUCCESS;
        }
        clFinish(q);
        t[r] = hu_now() - t0;
    }
    if (work)
        clReleaseMemObject(work);
    return ok ? hu_median(t + 1, reps) : 0;
}

/* an m x m x m GEMM of ones in double or float: flop/s by clBLAST into *clblast_rate and, unless
 * own_rate is NULL, by gemm.cl into *own_rate (0 where unavailable), on one set of buffers */
static void square_gemm_rates(bcl_context *ctx, size_t m, int dbl, double *clblast_rate,
                              double *own_rate)
{
    *clblast_rate = 0;
    if (own_rate)
        *own_rate = 0;
#ifndef BATCHCL_BENCH_CLBLAST
    if (!own_rate) /* clBLAST not linked: nothing to time, nothing to allocate */
        return;
#endif
    cl_context c = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    cl_int e1, e2, e3;
    cl_mem a = clCreateBuffer(c, CL_MEM_READ_WRITE, m * m * es, NULL, &e1);
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, m * m * es, NULL, &e2);
    cl_mem d = clCreateBuffer(c, CL_MEM_READ_WRITE, m * m * es, NULL, &e3);
    if (!e1 && !e2 && !e3) {
        const double one = 1.0, flops = 2.0 * (double)m * m * m;
        const float onef = 1.0f;
        const void *fill = dbl ? (const void *)&one : (const void *)&onef;
        clEnqueueFillBuffer(q, a, fill, es, 0, m * m * es, 0, NULL, NULL);
        clEnqueueFillBuffer(q, b, fill, es, 0, m * m * es, 0, NULL, NULL);
#ifdef BATCHCL_BENCH_CLBLAST
        const double tc = gemm_seconds(ctx, dbl, 1, 0, 0, m, m, m, a, b, d, 3);
        *clblast_rate = tc > 0 ? flops / tc : 0;
#endif
        const double to = own_rate ? gemm_seconds(ctx, dbl, 0, 0, 0, m, m, m, a, b, d, 3) : 0;
        if (own_rate)
            *own_rate = to > 0 ? flops / to : 0;
    }
    if (a) clReleaseMemObject(a);
    if (b) clReleaseMemObject(b);
    if (d) clReleaseMemObject(d);
}

/* LAPACK dgetrf + dgetri (sgetrf + sgetri unless dbl) of the assembled H with every host thread:
 * seconds */
static double lu_inverse_seconds(int n, int p, const double *A, const double *B, int dbl)
{
    const size_t N = (size_t)n * p;
    double *H = malloc(sizeof *H * N * N);
    float *Hf = dbl || !H ? NULL : malloc(sizeof *Hf * N * N);
    if (!H || (!dbl && !Hf)) {
        free(H);
        return 0;
    }
    oracle_pcyclic_assemble(n, p, A, B, H);
    for (size_t i = 0; Hf && i < N * N; ++i)
        Hf[i] = (float)H[i];
    openblas_set_num_threads(omp_get_max_threads());
    double t0 = hu_now();
    int info = oracle_getri_any((int)N, dbl, dbl ? (void *)H : (void *)Hf);
    double t = hu_now() - t0;
    free(H);
    free(Hf);
    return info == 0 ? t : 0;
}

/* bench_pcyclic_precision's host arrays of one row (Ap, Bp: A and B themselves in double) */
static void free_arrays(int dbl, double *A, double *B, void *Ap, void *Bp, void *X, int *info,
                        double *t)
{
    if (!dbl) {
        free(Ap);
        free(Bp);
    }
    free(A);
    free(B);
    free(X);
    free(info);
    free(t);
}

/* the largest scaled residual of a batch of p-cyclic inverses X (NaN wins) */
static double batch_pcyclic_residual(int n, int p, size_t batch, const double *A, const double *B,
                                     int dbl, const void *X)
{
    const size_t blocks = (size_t)p * n * n, NN = blocks * p;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    double res = 0;
    for (size_t k = 0; k < batch; ++k) {
        const double rk = oracle_pcyclic_residual(n, p, A + k * blocks, B + k * blocks, dbl,
                                                  (const char *)X + k * NN * es);
        res = rk > res || isnan(rk) ? rk : res;
    }
    return res;
}

/* One precision's table (dbl: double, else float; A, B random in double, rounded to float first
 * for a float run, so that the residual's H is the one inverted). */
static void bench_pcyclic_precision(const options *o, bcl_context *ctx,
                                    const bcl_device_info *dev, int dbl)
{
    const int order = o->order > 0 ? o->order : dev->is_gpu ? 10240 : 2048;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const char *gemm_name = dbl ? "DGEMM" : "SGEMM";
    const char *lu_name = dbl ? "dgetrf+dgetri" : "sgetrf+sgetri";
    /* the yardstick: clBLAST's best square GEMM of two sizes (DESIGN.md's figure is n = 8192) */
    const size_t sizes[2] = {dev->is_gpu ? 4096 : 1024, dev->is_gpu ? 8192 : 2048};
    /* and gemm.cl's tensor-core rate at the larger size, where the inversion's products run it */
    const int own = dbl && bcl_gemm_tensor_device(ctx);
    double gemm = 0, own_rate = 0;
    size_t gemm_m = 0;
    for (int i = 0; i < 2; ++i) {
        double rate;
        square_gemm_rates(ctx, sizes[i], dbl, &rate, i == 1 && own ? &own_rate : NULL);
        if (rate > gemm) {
            gemm = rate;
            gemm_m = sizes[i];
        }
    }
    printf("# bench pcyclic (BSOFI, %s) on %s, driver %s; clBLAST %s\n", dbl ? "double" : "float",
           dev->name, dev->driver_version,
           bcl_pcyclic_has_clblast() ? "linked" : "NOT in this build");
    printf("# clBLAST %s on this device, best of %zu^3 and %zu^3: %.1f GFLOP/s (at %zu)\n",
           gemm_name, sizes[0], sizes[1], gemm * 1e-9, gemm_m);
    if (own) /* the inversion's own products run faster */
        printf("# the inversion's GEMMs run gemm.cl (fp64 tensor cores): %zu^3 at %.1f GFLOP/s; "
               "%%DGEMM stays against clBLAST's rate\n",
               sizes[1], own_rate * 1e-9);
    printf("# GFLOP/s = BSOFI's flops (paper, Table 1, row version) / wall time of the "
           "device-buffer call (host panels included), median of %d; LU = LAPACK %s of the "
           "assembled H on %d host threads, timed once per N\n",
           o->reps, lu_name, omp_get_max_threads());
    printf("%-5s %-4s %-6s %-6s %10s %9s %7s %10s %10s %8s %9s  %s\n", "n", "p", "N", "batch",
           "time ms", "GFLOP/s", dbl ? "%DGEMM" : "%SGEMM", "host-ptr s", "LU s", "vs LU",
           "residual", "plan");
    cl_context c = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    size_t lu_N = 0;
    double lu_one = 0;
    for (int ni = 0; ni < o->n_count; ++ni) {
        const int n = o->n_list[ni];
        const int np = o->p_count ? o->p_count : 1;
        for (int pi = 0; pi < np; ++pi) {
            const int p = o->p_count ? o->p_list[pi] : (order / n > 1 ? order / n : 2);
            const size_t batch = o->batch ? o->batch : 1, N = (size_t)n * p, NN = N * N,
                         blocks = (size_t)p * n * n;
            if (NN * es * batch > dev->max_alloc_bytes || NN * es * batch > ((size_t)1 << 34)) {
                printf("%-5d %-4d %-6zu %-6zu  skipped: H^-1 needs %.1f GB\n", n, p, N, batch,
                       (double)NN * es * batch * 1e-9);
                continue;
            }
            double *A = malloc(sizeof *A * blocks * batch), *B = malloc(sizeof *B * blocks * batch);
            void *Ap = dbl ? (void *)A : malloc(es * blocks * batch),
                 *Bp = dbl ? (void *)B : malloc(es * blocks * batch);
            void *X = malloc(es * NN * batch);
            int *info = malloc(sizeof *info * batch);
            double *t = malloc(sizeof *t * (size_t)(o->reps + 1));
            if (!A || !B || !Ap || !Bp || !X || !info || !t) {
                printf("%-5d %-4d %-6zu %-6zu  skipped: out of host memory\n", n, p, N, batch);
                free_arrays(dbl, A, B, Ap, Bp, X, info, t);
                continue;
            }
            mg_rng r;
            mg_seed(&r, 77 + (uint64_t)n);
            for (size_t k = 0; k < batch; ++k)
                mg_pcyclic(0, n, p, 0, &r, A + k * blocks, B + k * blocks);
            for (size_t i = 0; !dbl && i < blocks * batch; ++i) {
                ((float *)Ap)[i] = (float)A[i];
                ((float *)Bp)[i] = (float)B[i];
                A[i] = ((float *)Ap)[i];
                B[i] = ((float *)Bp)[i];
            }
            bcl_params prm = {0};
            prm.pcyclic_method = o->method;
            prm.pcyclic_cv_columns = o->cv_columns;
            prm.pcyclic_rv_host_columns = o->rv_host;
            prm.pcyclic_qt_host_rows = o->qt_host;
            prm.pcyclic_cv_host_rows = o->cv_host;
            bcl_set_params(ctx, &prm);
            cl_int e1, e2, e3, e4;
            cl_mem dA = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       blocks * batch * es, Ap, &e1);
            cl_mem dB = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       blocks * batch * es, Bp, &e2);
            cl_mem dH = clCreateBuffer(c, CL_MEM_READ_WRITE, NN * batch * es, NULL, &e3);
            cl_mem dI = clCreateBuffer(c, CL_MEM_READ_WRITE, batch * sizeof(int), NULL, &e4);
            bcl_status st = e1 || e2 || e3 || e4 ? BCL_OUT_OF_MEMORY : BCL_SUCCESS;
            /* --same-bits: the first timed call's inverse in X, each later one's in Xr */
            void *Xr = o->same_bits && o->reps >= 2 ? malloc(es * NN * batch) : NULL;
            if (o->same_bits && o->reps < 2)
                printf("# n = %d: --same-bits needs --reps 2 or more\n", n);
            else if (o->same_bits && !Xr)
                printf("# n = %d: --same-bits skipped: no host memory for a second inverse\n", n);
            int differ = 0, first_differ = 0;
            double rd = -1;
            for (int rep = 0; rep <= o->reps && st == BCL_SUCCESS; ++rep) { /* 0 warms up */
                double t0 = hu_now();
                st = dbl ? bcl_dpcyclic_inv_cl(ctx, n, p, batch, dA, 0, dB, 0, dH, 0, dI, 0, 0,
                                               NULL, NULL)
                         : bcl_spcyclic_inv_cl(ctx, n, p, batch, dA, 0, dB, 0, dH, 0, dI, 0, 0,
                                               NULL, NULL);
                clFinish(q);
                t[rep] = hu_now() - t0;
                if (Xr && rep >= 1 && st == BCL_SUCCESS) {
                    if (clEnqueueReadBuffer(q, dH, CL_TRUE, 0, NN * batch * es,
                                            rep == 1 ? X : Xr, 0, NULL, NULL) != CL_SUCCESS) {
                        printf("# n = %d: --same-bits stopped: reading the inverse back failed\n",
                               n);
                        free(Xr);
                        Xr = NULL;
                        continue;
                    }
                    if (rep > 1 && memcmp(X, Xr, NN * batch * es) != 0 && !differ++) {
                        first_differ = rep; /* its residual (outside the timed call) */
                        rd = batch_pcyclic_residual(n, p, batch, A, B, dbl, Xr);
                    }
                }
            }
            if (Xr && st == BCL_SUCCESS) {
                printf("# n = %d: %d of %d timed calls differ from the first", n, differ,
                       o->reps - 1);
                if (differ) /* with the first call's own residual: which side is wrong */
                    printf(" (the first of them: call %d, residual %.3g; the first call's "
                           "residual %.3g)",
                           first_differ, rd, batch_pcyclic_residual(n, p, batch, A, B, dbl, X));
                printf("\n");
            }
            free(Xr);
            if (st == BCL_SUCCESS && getenv("BATCHCL_TIMELINE")) /* the last call's kernels */
                print_steps(ctx, "pcyclic");
            if (st != BCL_SUCCESS) {
                printf("%-5d %-4d %-6zu %-6zu  %s: %s\n", n, p, N, batch,
                       bcl_status_string(st), bcl_last_error(ctx));
            } else {
                const double sec = hu_median(t + 1, o->reps);
                char plan[1024]; /* bcl_last_kernel holds at most 1023 characters */
                snprintf(plan, sizeof plan, "%s", bcl_last_kernel(ctx));
                clEnqueueReadBuffer(q, dH, CL_TRUE, 0, NN * batch * es, X, 0, NULL, NULL);
                const double res = batch_pcyclic_residual(n, p, batch, A, B, dbl, X);
                double t0 = hu_now();
                bcl_status sh = dbl ? bcl_dpcyclic_inv(ctx, n, p, batch, A, B, X, info)
                                    : bcl_spcyclic_inv(ctx, n, p, batch, Ap, Bp, X, info);
                const double host_s = hu_now() - t0;
                /* dense LU's time depends on N only: timed once per N (at N = 10 000 it
                 * is seconds on the host, most of a GPU run) */
                if (o->lapack && N != lu_N) {
                    lu_one = lu_inverse_seconds(n, p, A, B, dbl);
                    lu_N = lu_one > 0 ? N : 0;
                }
                const double lu = o->lapack ? lu_one * (double)batch : 0;
                const double rate = bsofi_flops(n, p) * (double)batch / sec;
                printf("%-5d %-4d %-6zu %-6zu %10.3f %9.2f %7.1f %10.3f %10.3f %8.2f %9.3g"
                       "  %s\n",
                       n, p, N, batch, sec * 1e3, rate * 1e-9, gemm > 0 ? 100 * rate / gemm : 0,
                       sh == BCL_SUCCESS ? host_s : -1.0, lu, lu > 0 ? lu / sec : 0, res, plan);
                fflush(stdout);
            }
            if (dA) clReleaseMemObject(dA);
            if (dB) clReleaseMemObject(dB);
            if (dH) clReleaseMemObject(dH);
            if (dI) clReleaseMemObject(dI);
            free_arrays(dbl, A, B, Ap, Bp, X, info, t);
        }
    }
}

static int cmd_bench_pcyclic(options *o)
{
    bcl_device_info dev;
    bcl_context *ctx = open_context(o, &dev);
    if (!o->n_count) {
        const int gpu[] = {32, 64, 128, 256, 512, 1024}, cpu[] = {16, 32, 64, 128, 256};
        const int *def = dev.is_gpu ? gpu : cpu;
        for (int i = 0; i < (dev.is_gpu ? 6 : 5); ++i)
            o->n_list[o->n_count++] = def[i];
    }
    const int precision = o->precision_given ? o->precision : 1; /* 0 float, 1 double, 2 both */
    for (int dbl = 1; dbl >= 0; --dbl)
        if (precision == 2 || precision == dbl)
            bench_pcyclic_precision(o, ctx, &dev, dbl);
    bcl_destroy(ctx);
    return 0;
}


/* ---- bench gemm ---- */

/* Double GEMMs of the square sizes and of BSOFI's shapes (the Q^T application's N x 2n x 2n with
 * B transposed, the factorization's n^3 with A transposed, S = V^T V), clBLAST against gemm.cl,
 * and the largest difference between the two products relative to k eps max|a| max|b| */
static int cmd_bench_gemm(options *o)
{
    bcl_device_info dev;
    bcl_context *ctx = open_context(o, &dev);
    const int tensor = bcl_gemm_tensor_device(ctx);
    struct { size_t m, n, k; int ta, tb; const char *what; } shapes[] = {
        {1024, 1024, 1024, 0, 0, "square"},          {4096, 4096, 4096, 0, 0, "square"},
        {8192, 8192, 8192, 0, 0, "square"},          {9984, 512, 512, 0, 1, "Q^T, n = 256"},
        {9728, 1024, 1024, 0, 1, "Q^T, n = 512"},    {9216, 2048, 2048, 0, 1, "Q^T, n = 1024"},
        {256, 256, 256, 1, 0, "step, n = 256"},      {1024, 1024, 1024, 1, 0, "step, n = 1024"},
        {256, 256, 512, 1, 0, "V^T V, n = 256"},     {1024, 1024, 2048, 1, 0, "V^T V, n = 1024"}};
    const size_t count = sizeof shapes / sizeof shapes[0];
    printf("# bench gemm (double) on %s, driver %s; gemm.cl: %s %s%s\n", dev.name,
           dev.driver_version, tensor ? "fp64 tensor cores," : "portable build, fmas in",
           bcl_gemm_mma_name(bcl_gemm_mma_k(ctx)), tensor ? "" : "'s layout");
    printf("# median of %d calls after a first one; diff = max |C_clblast - C_gemm.cl| / "
           "(k eps max|a| max|b|)\n", o->reps);
    printf("%-16s %6s %6s %6s %2s %2s %11s %9s %11s %9s %7s %8s\n", "shape", "m", "n", "k", "tA",
           "tB", "clBLAST ms", "GFLOP/s", "gemm.cl ms", "GFLOP/s", "ratio", "diff");
    cl_context c = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    for (size_t i = 0; i < count; ++i) {
        const size_t m = shapes[i].m, n = shapes[i].n, k = shapes[i].k;
        if (!dev.is_gpu && m * n > 2048 * 2048)
            continue;
        const size_t na = m * k, nb = k * n, nc = m * n;
        double *h = malloc(sizeof *h * (na + nb + 2 * nc));
        if (!h)
            break;
        mg_rng r;
        mg_seed(&r, 7 + i);
        for (size_t e = 0; e < na + nb; ++e)
            h[e] = mg_uniform(&r) * 2 - 1;
        cl_int e1, e2, e3, e4;
        cl_mem a = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, na * 8, h, &e1);
        cl_mem b = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nb * 8, h + na, &e2);
        cl_mem c1 = clCreateBuffer(c, CL_MEM_READ_WRITE, nc * 8, NULL, &e3);
        cl_mem c2 = clCreateBuffer(c, CL_MEM_READ_WRITE, nc * 8, NULL, &e4);
        if (e1 || e2 || e3 || e4) {
            printf("%-16s skipped: device buffers\n", shapes[i].what);
        } else {
            const int ta = shapes[i].ta, tb = shapes[i].tb;
            const double flops = 2.0 * (double)m * n * k;
            const double tc = gemm_seconds(ctx, 1, 1, ta, tb, m, n, k, a, b, c1, o->reps);
            const double to = gemm_seconds(ctx, 1, 0, ta, tb, m, n, k, a, b, c2, o->reps);
            double diff = -1;
            if (tc > 0 && to > 0) {
                double *r1 = h + na + nb, *r2 = r1 + nc;
                clEnqueueReadBuffer(q, c1, CL_TRUE, 0, nc * 8, r1, 0, NULL, NULL);
                clEnqueueReadBuffer(q, c2, CL_TRUE, 0, nc * 8, r2, 0, NULL, NULL);
                diff = 0;
                for (size_t e = 0; e < nc; ++e) {
                    const double d = fabs(r1[e] - r2[e]);
                    diff = d > diff || isnan(d) ? d : diff;
                }
                diff /= (double)k * DBL_EPSILON;
            }
            printf("%-16s %6zu %6zu %6zu %2s %2s %11.3f %9.1f %11.3f %9.1f %7.2f %8.3g%s\n",
                   shapes[i].what, m, n, k, ta ? "T" : "N", tb ? "T" : "N", tc * 1e3,
                   tc > 0 ? flops / tc * 1e-9 : 0, to * 1e3, to > 0 ? flops / to * 1e-9 : 0,
                   tc > 0 && to > 0 ? tc / to : 0, diff,
                   to > 0 ? "" : tc > 0 ? "  (gemm.cl failed)" : "  (failed)");
            if (to == 0)
                printf("#   %s\n", bcl_last_error(ctx));
        }
        if (a) clReleaseMemObject(a);
        if (b) clReleaseMemObject(b);
        if (c1) clReleaseMemObject(c1);
        if (c2) clReleaseMemObject(c2);
        free(h);
        fflush(stdout);
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
    if (!strcmp(argv[1], "bench") && argc >= 3 && (!strcmp(argv[2], "gtsv") || !strcmp(argv[2], "ptsv"))) {
        options o = parse(argc, argv, 3);
        return cmd_bench_tridiag(&o, argv[2][0] == 'p');
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
        g.mappings = !strcmp(o.mappings, "auto") || !strcmp(o.mappings, "swb") ||
                             !strcmp(o.mappings, "mwb")
                         ? o.mappings
                         : "all";
        for (size_t k = 1024; k <= 262144 && !o.chunk_count; k *= 2)
            g.chunks[g.chunk_count++] = k;
        for (int i = 0; i < o.chunk_count; ++i)
            g.chunks[g.chunk_count++] = o.chunks[i];
        g.lapack = o.lapack;
        g.vectors = o.vectors;
        g.ppg = o.ppg;
        for (int i = 0; i < o.queues_count && i < 8; ++i)
            g.queues[g.queues_count++] = o.queues[i];
        for (int i = 0; i < o.bulges_count && i < 2; ++i)
            g.bulges[g.bulges_count++] = o.bulges[i];
        for (int i = 0; i < o.p_count && i < 16; ++i)
            g.p_list[g.p_count++] = o.p_list[i];
        return bench_geev(&g);
    }
    if (!strcmp(argv[1], "bench") && argc >= 3 && !strcmp(argv[2], "syevd")) {
        options o = parse(argc, argv, 3);
        return cmd_bench_syevd(&o);
    }
    if (!strcmp(argv[1], "bench") && argc >= 3 && !strcmp(argv[2], "gemm")) {
        options o = parse(argc, argv, 3);
        return cmd_bench_gemm(&o);
    }
    if (!strcmp(argv[1], "bench") && argc >= 3 && !strcmp(argv[2], "pcyclic")) {
        options o = parse(argc, argv, 3);
        return cmd_bench_pcyclic(&o);
    }
    fprintf(stderr, "batchcl: unknown command\n");
    usage();
    return 2;
}
