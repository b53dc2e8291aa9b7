/* batchcl-tune: the autotuner. For each tunable routine (the registry below), precision and size
 * it sweeps the routine's parameter space on one device, times every candidate with OpenCL
 * profiling events (median of repeats), checks every candidate's results against the problem
 * (scaled residuals; eigenvalues against LAPACK), skips candidates the device cannot run, and
 * writes the best verified one per size to tuning/db/<vendor>-<device>.json, which the library
 * reads (src/tuning_db.c). Partial results are written after every size, so an interrupted run
 * resumes where it stopped. */
#include "batchcl.h"
#include "hostutil.h"
#include "matgen.h"
#include "oracle.h"
#include "png.h"
#include "tuning_fields.h"
#include "gemm_params.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_CANDIDATES 96
#define MAX_SIZES 128
#define SAMPLE 64 /* problems whose results are checked */

/* ---- the environment of a sweep ---- */

typedef struct {
    bcl_context *ctx;
    bcl_device_info dev;
    int quick;
    int reps;
} tune_env;

typedef struct {
    bcl_params params; /* forced for the candidate; unset fields keep the heuristic's */
    char label[96];
} candidate;

/* A batch on the device for one routine, precision and size. */
typedef struct {
    int n, dbl;
    size_t batch, es;
    void *host_in[4];  /* host copies of the inputs (sample problems first) */
    size_t in_bytes[4];
    cl_mem dev_in[4], dev_work[4];
    void *out[4]; /* host arrays for results */
} problem_set;

/* One routine of the registry. */
typedef struct {
    const char *name;  /* the tuning files' key */
    const char *what;  /* what it covers */
    const char *space; /* the parameter space swept */
    int (*sizes)(const tune_env *, int *out);
    int (*candidates)(const tune_env *, int dbl, int n, candidate *out);
    size_t (*batch)(const tune_env *, int dbl, int n);
    int (*setup)(tune_env *, problem_set *);
    /* one run with the forced parameters in force: device seconds (selected step when `step`
     * is not NULL), or a status with the message in why */
    bcl_status (*run)(tune_env *, problem_set *, const char *step, double *seconds);
    /* check the last run's results; 0 and a reason when they are wrong */
    int (*verify)(tune_env *, problem_set *, char *why, size_t whylen);
} tune_routine;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "batchcl-tune: out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

static void add(candidate *c, int *count, const bcl_params *p, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add(candidate *c, int *count, const bcl_params *p, const char *fmt, ...)
{
    if (*count >= MAX_CANDIDATES)
        return;
    c[*count].params = *p;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c[*count].label, sizeof c[*count].label, fmt, ap);
    va_end(ap);
    ++*count;
}

static int range(int lo, int hi, int *out)
{
    int k = 0;
    for (int n = lo; n <= hi && k < MAX_SIZES; ++n)
        out[k++] = n;
    return k;
}

static int list(const int *v, int count, int *out)
{
    memcpy(out, v, sizeof *v * (size_t)count);
    return count;
}

/* Distinct problems generated per batch; the rest of the batch repeats them (timing does not
 * depend on the values, and the first SAMPLE are checked). */
static size_t distinct(size_t batch)
{
    return batch < 1024 ? batch : 1024;
}

static size_t batch_for(const tune_env *e, size_t bytes_per_problem, size_t gpu_bytes)
{
    size_t budget = e->dev.is_gpu ? gpu_bytes : (size_t)16 << 20;
    if (e->quick)
        budget /= 16;
    size_t b = budget / bytes_per_problem;
    if (b < SAMPLE)
        b = SAMPLE;
    if (b > ((size_t)1 << 20))
        b = (size_t)1 << 20;
    return b;
}

static cl_mem upload(tune_env *e, const void *host, size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(bcl_cl_context(e->ctx), CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "batchcl-tune: allocating %zu bytes on the device failed (%d)\n", bytes,
                (int)err);
        exit(2);
    }
    if (host)
        clEnqueueWriteBuffer(bcl_cl_queue(e->ctx), m, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    return m;
}

static void release_set(problem_set *ps)
{
    for (int i = 0; i < 4; ++i) {
        free(ps->host_in[i]);
        free(ps->out[i]);
        if (ps->dev_in[i])
            clReleaseMemObject(ps->dev_in[i]);
        if (ps->dev_work[i])
            clReleaseMemObject(ps->dev_work[i]);
    }
    memset(ps, 0, sizeof *ps);
}

static double step_seconds(bcl_context *ctx, const char *step)
{
    const char *names[16];
    double sec[16], total = 0;
    const int k = bcl_last_step_times(ctx, names, sec, 16);
    for (int i = 0; i < k; ++i) {
        if (!strncmp(names[i], "transfer", 8))
            continue;
        /* the Hessenberg step pays for the copy into its layout (MWB's element-wise one) */
        if (!step || !strcmp(step, names[i]) ||
            (!strcmp(step, "hessenberg") && !strcmp(names[i], "rearrange")))
            total += sec[i];
    }
    return total;
}

static int gpu_p_values(const tune_env *e, int n, int *p)
{
    const int w = (int)(e->dev.work_group_multiple ? e->dev.work_group_multiple : 32);
    int k = 0;
    for (int v = 2; v <= w && k < 8; v *= 2)
        if (v / 2 < n || v == 2)
            p[k++] = v;
    return k;
}

typedef struct progress progress;
struct progress {
    double start;
    long done, total;
    int tty;
    int failures; /* sizes whose default failed */
};

/* Keep a candidate over the default only when it is clearly faster (timing noise). */
#define MARGIN 1.02
typedef struct {
    double seconds; /* median */
    int ok;
    char status[320];
} outcome;
static void show(progress *pg, const char *what);
static double round4(double v);
static cJSON *params_json(const bcl_params *p);

/* ---- LDL^T (bcl_xsysv, BCL_LDLT) ---- */

static int ldlt_sizes(const tune_env *e, int *out)
{
    static const int quick[] = {8, 32};
    static const int cpu[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64};
    if (e->quick)
        return list(quick, 2, out);
    return e->dev.is_gpu ? range(1, 64, out) : list(cpu, (int)(sizeof cpu / sizeof *cpu), out);
}

static int ldlt_candidates(const tune_env *e, int dbl, int n, candidate *c)
{
    (void)dbl;
    int k = 0;
    bcl_params p;
    if (!e->dev.is_gpu || e->quick) {
        for (int v = 1; v <= 16; v *= 2)
            for (int g = 16; g <= 64; g *= 2) {
                if (e->quick && (g != 32 || v > 8))
                    continue;
                memset(&p, 0, sizeof p);
                p.mapping = BCL_MAPPING_SIMD;
                p.problems_per_work_item = v;
                p.problems_per_group = g;
                add(c, &k, &p, "simd %d per work-item, %d per group", v, g);
            }
    }
    if (e->dev.is_gpu && !e->quick) {
        memset(&p, 0, sizeof p);
        p.mapping = BCL_MAPPING_SIMD;
        p.problems_per_group = 64;
        add(c, &k, &p, "simd, 64 per group");
    }
    /* collaborative and hybrid: n* = ceil(n / rows) for rows = 1..8, each distinct n* once;
     * work-groups of about 64, 128 or 256 work-items */
    int last = 0;
    /* CPUs run a work-group's work-items as loop iterations: the cooperative mappings never win
     * there, so only n* = n and n/2 are tried (each is a slow compile on PoCL) */
    for (int rows = 1; rows <= (e->quick || !e->dev.is_gpu ? 2 : 8); ++rows) {
        const int nstar = (n + rows - 1) / rows;
        if (nstar == last || (rows > 1 && nstar == n))
            continue;
        last = nstar;
        for (int target = 128; target <= 256; target *= 2) {
            if ((!e->dev.is_gpu || e->quick) && target != 128)
                continue;
            memset(&p, 0, sizeof p);
            p.mapping = rows == 1 ? BCL_MAPPING_COLLABORATIVE : BCL_MAPPING_HYBRID;
            p.work_items_per_problem = rows == 1 ? 0 : nstar;
            p.problems_per_group = target / nstar > 0 ? target / nstar : 1;
            add(c, &k, &p, "%s n*=%d, %d per group", rows == 1 ? "collaborative" : "hybrid", nstar,
                p.problems_per_group);
        }
        if (n == 1)
            break;
    }
    return k;
}

static size_t ldlt_batch(const tune_env *e, int dbl, int n)
{
    return batch_for(e, (size_t)n * (size_t)(n + 2) * (dbl ? 8 : 4), (size_t)1 << 28);
}

/* in 0: A (distinct matrices), 1: B; work 0: X, 1: info */
static int ldlt_setup(tune_env *e, problem_set *ps)
{
    const int n = ps->n;
    const size_t d = distinct(ps->batch), nn = (size_t)n * n;
    mg_rng r;
    mg_seed(&r, 1234 + (uint64_t)n);
    ps->in_bytes[0] = nn * ps->es;
    ps->in_bytes[1] = (size_t)n * ps->es;
    ps->host_in[0] = xmalloc(d * ps->in_bytes[0]);
    ps->host_in[1] = xmalloc(d * ps->in_bytes[1]);
    for (size_t k = 0; k < d; ++k)
        for (int j = 0; j < n; ++j) {
            for (int i = j; i < n; ++i) {
                /* symmetric, diagonally dominant: positive definite */
                const double v = i == j ? n + mg_uniform(&r) : 2 * mg_uniform(&r) - 1;
                oracle_set(ps->host_in[0], ps->dbl, k * nn + (size_t)j * n + i, v);
                oracle_set(ps->host_in[0], ps->dbl, k * nn + (size_t)i * n + j, v);
            }
            oracle_set(ps->host_in[1], ps->dbl, k * n + j, 2 * mg_uniform(&r) - 1);
        }
    /* the device batch repeats the distinct ones */
    ps->dev_in[0] = upload(e, NULL, ps->batch * ps->in_bytes[0]);
    ps->dev_in[1] = upload(e, NULL, ps->batch * ps->in_bytes[1]);
    for (size_t k = 0; k < ps->batch; k += d) {
        const size_t c = ps->batch - k < d ? ps->batch - k : d;
        clEnqueueWriteBuffer(bcl_cl_queue(e->ctx), ps->dev_in[0], CL_TRUE, k * ps->in_bytes[0],
                             c * ps->in_bytes[0], ps->host_in[0], 0, NULL, NULL);
        clEnqueueWriteBuffer(bcl_cl_queue(e->ctx), ps->dev_in[1], CL_TRUE, k * ps->in_bytes[1],
                             c * ps->in_bytes[1], ps->host_in[1], 0, NULL, NULL);
    }
    ps->dev_work[0] = upload(e, NULL, ps->batch * ps->in_bytes[1]);
    ps->dev_work[1] = upload(e, NULL, ps->batch * sizeof(int));
    return 1;
}

static bcl_status ldlt_run(tune_env *e, problem_set *ps, const char *step, double *seconds)
{
    (void)step;
    cl_event ev = NULL;
    bcl_status s = ps->dbl ? bcl_dsysv_cl(e->ctx, BCL_LDLT, ps->n, 1, ps->batch,
                                          BCL_LAYOUT_CONTIGUOUS, ps->dev_in[0], 0, ps->dev_in[1], 0,
                                          ps->dev_work[0], 0, ps->dev_work[1], 0, 0, NULL, &ev)
                           : bcl_ssysv_cl(e->ctx, BCL_LDLT, ps->n, 1, ps->batch,
                                          BCL_LAYOUT_CONTIGUOUS, ps->dev_in[0], 0, ps->dev_in[1], 0,
                                          ps->dev_work[0], 0, ps->dev_work[1], 0, 0, NULL, &ev);
    if (s == BCL_SUCCESS) {
        clWaitForEvents(1, &ev);
        *seconds = hu_event_seconds(ev);
        clReleaseEvent(ev);
    }
    return s;
}

static int read_info(tune_env *e, cl_mem info, size_t count, char *why, size_t whylen)
{
    int *v = xmalloc(count * sizeof *v);
    clEnqueueReadBuffer(bcl_cl_queue(e->ctx), info, CL_TRUE, 0, count * sizeof *v, v, 0, NULL, NULL);
    for (size_t k = 0; k < count; ++k)
        if (v[k] != 0) {
            snprintf(why, whylen, "info[%zu] = %d", k, v[k]);
            free(v);
            return 0;
        }
    free(v);
    return 1;
}

static int ldlt_verify(tune_env *e, problem_set *ps, char *why, size_t whylen)
{
    const size_t s = ps->batch < SAMPLE ? ps->batch : SAMPLE;
    const int n = ps->n;
    void *X = xmalloc(s * ps->in_bytes[1]);
    clEnqueueReadBuffer(bcl_cl_queue(e->ctx), ps->dev_work[0], CL_TRUE, 0, s * ps->in_bytes[1], X,
                        0, NULL, NULL);
    int ok = read_info(e, ps->dev_work[1], ps->batch, why, whylen);
    for (size_t k = 0; k < s && ok; ++k) {
        const double r = oracle_sysv_residual(
            n, 1, ps->dbl, (const char *)ps->host_in[0] + k * ps->in_bytes[0],
            (const char *)ps->host_in[1] + k * ps->in_bytes[1], (const char *)X + k * ps->in_bytes[1]);
        if (!(r < 30)) {
            snprintf(why, whylen, "problem %zu: scaled residual %.3g", k, r);
            ok = 0;
        }
    }
    free(X);
    return ok;
}

/* ---- tridiagonal systems (gtsv; ptsv shares the parameters) ---- */

static int tridiag_sizes(const tune_env *e, int *out)
{
    static const int quick[] = {64};
    static const int full[] = {4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
    return e->quick ? list(quick, 1, out) : list(full, (int)(sizeof full / sizeof *full), out);
}

static int tridiag_candidates(const tune_env *e, int dbl, int m, candidate *c)
{
    (void)dbl;
    int k = 0;
    bcl_params p;
    if (!e->dev.is_gpu)
        for (int v = 1; v <= 16; v *= 2) {
            if (e->quick && v != 4 && v != 8)
                continue;
            memset(&p, 0, sizeof p);
            p.mapping = BCL_MAPPING_SIMD;
            p.problems_per_work_item = v;
            p.problems_per_group = 4 * v;
            add(c, &k, &p, "simd %d per work-item", v);
        }
    for (int rows = 1; rows <= 16; rows *= 2) {
        if ((rows > 1 && rows >= m) || (e->quick && rows != 4 && rows != 8) ||
            (!e->dev.is_gpu && rows != 8))
            continue;
        memset(&p, 0, sizeof p);
        p.mapping = rows == 1 ? BCL_MAPPING_COLLABORATIVE : BCL_MAPPING_HYBRID;
        p.rows_per_work_item = rows;
        add(c, &k, &p, "pcr %d rows per work-item", rows);
    }
    return k;
}

static size_t tridiag_batch(const tune_env *e, int dbl, int m)
{
    return batch_for(e, (size_t)m * 5 * (dbl ? 8 : 4), (size_t)1 << 28);
}

/* in 0: dl, 1: d, 2: du, 3: b (distinct systems); work 0..3 the same on the device + info */
static int tridiag_setup(tune_env *e, problem_set *ps)
{
    const int m = ps->n;
    const size_t d = distinct(ps->batch);
    mg_rng r;
    mg_seed(&r, 99 + (uint64_t)m);
    for (int a = 0; a < 4; ++a) {
        ps->in_bytes[a] = (size_t)m * ps->es;
        ps->host_in[a] = xmalloc(d * ps->in_bytes[a]);
    }
    for (size_t i = 0; i < d * (size_t)m; ++i) {
        const double lo = 2 * mg_uniform(&r) - 1, up = 2 * mg_uniform(&r) - 1;
        oracle_set(ps->host_in[0], ps->dbl, i, lo);
        oracle_set(ps->host_in[2], ps->dbl, i, up);
        oracle_set(ps->host_in[1], ps->dbl, i, 2.5 + mg_uniform(&r)); /* diagonally dominant */
        oracle_set(ps->host_in[3], ps->dbl, i, 2 * mg_uniform(&r) - 1);
    }
    for (int a = 0; a < 4; ++a) {
        ps->dev_in[a] = upload(e, NULL, ps->batch * ps->in_bytes[a]);
        for (size_t k = 0; k < ps->batch; k += d) {
            const size_t c = ps->batch - k < d ? ps->batch - k : d;
            clEnqueueWriteBuffer(bcl_cl_queue(e->ctx), ps->dev_in[a], CL_TRUE, k * ps->in_bytes[a],
                                 c * ps->in_bytes[a], ps->host_in[a], 0, NULL, NULL);
        }
    }
    ps->dev_work[0] = upload(e, NULL, ps->batch * ps->in_bytes[3]); /* B, solved in place */
    ps->dev_work[1] = upload(e, NULL, ps->batch * sizeof(int));
    return 1;
}

static bcl_status tridiag_run(tune_env *e, problem_set *ps, const char *step, double *seconds)
{
    (void)step;
    cl_command_queue q = bcl_cl_queue(e->ctx);
    clEnqueueCopyBuffer(q, ps->dev_in[3], ps->dev_work[0], 0, 0, ps->batch * ps->in_bytes[3], 0,
                        NULL, NULL);
    cl_event ev = NULL;
    bcl_status s =
        ps->dbl ? bcl_dgtsv_cl(e->ctx, ps->n, 1, ps->batch, BCL_LAYOUT_CONTIGUOUS, ps->dev_in[0], 0,
                               ps->dev_in[1], 0, ps->dev_in[2], 0, ps->dev_work[0], 0,
                               ps->dev_work[1], 0, 0, NULL, &ev)
                : bcl_sgtsv_cl(e->ctx, ps->n, 1, ps->batch, BCL_LAYOUT_CONTIGUOUS, ps->dev_in[0], 0,
                               ps->dev_in[1], 0, ps->dev_in[2], 0, ps->dev_work[0], 0,
                               ps->dev_work[1], 0, 0, NULL, &ev);
    if (s == BCL_SUCCESS) {
        clWaitForEvents(1, &ev);
        *seconds = hu_event_seconds(ev);
        clReleaseEvent(ev);
    }
    return s;
}

static int tridiag_verify(tune_env *e, problem_set *ps, char *why, size_t whylen)
{
    const size_t s = ps->batch < SAMPLE ? ps->batch : SAMPLE;
    const int m = ps->n, dbl = ps->dbl;
    void *X = xmalloc(s * ps->in_bytes[3]);
    clEnqueueReadBuffer(bcl_cl_queue(e->ctx), ps->dev_work[0], CL_TRUE, 0, s * ps->in_bytes[3], X,
                        0, NULL, NULL);
    int ok = read_info(e, ps->dev_work[1], ps->batch, why, whylen);
    for (size_t k = 0; k < s && ok; ++k) {
        const size_t o = k * (size_t)m * ps->es;
        const double r = oracle_gtsv_residual(m, 1, dbl, (const char *)ps->host_in[0] + o,
                                              (const char *)ps->host_in[1] + o,
                                              (const char *)ps->host_in[2] + o,
                                              (const char *)ps->host_in[3] + o, (const char *)X + o);
        if (!(r < 30)) {
            snprintf(why, whylen, "system %zu: scaled residual %.3g", k, r);
            ok = 0;
        }
    }
    free(X);
    return ok;
}

/* ---- Householder tridiagonalization (bcl_xsytrd; the first step of syevd and sysv's
 * Householder and eigen methods) ---- */

static int sytrd_sizes(const tune_env *e, int *out)
{
    static const int quick[] = {16};
    static const int full[] = {2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64};
    return e->quick ? list(quick, 1, out) : list(full, (int)(sizeof full / sizeof *full), out);
}

static int sytrd_candidates(const tune_env *e, int dbl, int n, candidate *c)
{
    (void)dbl;
    int k = 0;
    bcl_params p;
    if (!e->dev.is_gpu)
        for (int v = 1; v <= 8; v *= 2) {
            if (e->quick && v != 2 && v != 4)
                continue;
            memset(&p, 0, sizeof p);
            p.mapping = BCL_MAPPING_SIMD;
            p.problems_per_work_item = v;
            p.problems_per_group = 2 * v;
            add(c, &k, &p, "simd %d per work-item", v);
        }
    /* collaborative: NT work-items per matrix; CPUs one matrix per group (see src/symeig.c) */
    for (int nt = 2; nt <= 64; nt *= 2) {
        if (nt > 2 * n && nt > 2)
            break;
        for (int g = 1; g <= 8; g *= 2) {
            if ((!e->dev.is_gpu || e->quick) && g != (e->dev.is_gpu ? 128 / nt : 1))
                continue;
            if (e->dev.is_gpu && (nt * g > 256 || nt * g < 32))
                continue;
            memset(&p, 0, sizeof p);
            p.mapping = BCL_MAPPING_COLLABORATIVE;
            p.work_items_per_problem = nt;
            p.problems_per_group = g;
            add(c, &k, &p, "collaborative %d work-items, %d per group", nt, g);
        }
    }
    return k;
}

static size_t sytrd_batch(const tune_env *e, int dbl, int n)
{
    return batch_for(e, 2 * (size_t)n * (size_t)n * (dbl ? 8 : 4), (size_t)1 << 27);
}

/* in 0: A (the whole batch on the host: sytrd takes host pointers); out 0: Q, 1: d, 2: e */
static int sytrd_setup(tune_env *e, problem_set *ps)
{
    (void)e;
    const int n = ps->n;
    const size_t d = distinct(ps->batch), nn = (size_t)n * n;
    mg_rng r;
    mg_seed(&r, 4321 + (uint64_t)n);
    ps->in_bytes[0] = nn * ps->es;
    ps->host_in[0] = xmalloc(ps->batch * ps->in_bytes[0]);
    for (size_t k = 0; k < d; ++k)
        for (int j = 0; j < n; ++j)
            for (int i = j; i < n; ++i) {
                const double v = 2 * mg_uniform(&r) - 1;
                oracle_set(ps->host_in[0], ps->dbl, k * nn + (size_t)j * n + i, v);
                oracle_set(ps->host_in[0], ps->dbl, k * nn + (size_t)i * n + j, v);
            }
    for (size_t k = d; k < ps->batch; k += d)
        memcpy((char *)ps->host_in[0] + k * ps->in_bytes[0], ps->host_in[0],
               (ps->batch - k < d ? ps->batch - k : d) * ps->in_bytes[0]);
    ps->out[0] = xmalloc(ps->batch * ps->in_bytes[0]);
    ps->out[1] = xmalloc(ps->batch * (size_t)n * ps->es);
    ps->out[2] = xmalloc(ps->batch * (size_t)n * ps->es);
    return 1;
}

static bcl_status sytrd_run(tune_env *e, problem_set *ps, const char *step, double *seconds)
{
    (void)step;
    bcl_status s = ps->dbl ? bcl_dsytrd(e->ctx, ps->n, ps->batch, ps->host_in[0], ps->out[0],
                                        ps->out[1], ps->out[2])
                           : bcl_ssytrd(e->ctx, ps->n, ps->batch, ps->host_in[0], ps->out[0],
                                        ps->out[1], ps->out[2]);
    if (s == BCL_SUCCESS)
        *seconds = step_seconds(e->ctx, "sytrd");
    return s;
}

static int sytrd_verify(tune_env *e, problem_set *ps, char *why, size_t whylen)
{
    (void)e;
    const int n = ps->n, dbl = ps->dbl;
    const size_t s = ps->batch < SAMPLE ? ps->batch : SAMPLE, nn = (size_t)n * n;
    for (size_t k = 0; k < s; ++k) {
        const size_t a0 = k * nn, v0 = k * (size_t)n, e0 = k * (size_t)(n - 1);
        double anorm = 0, rmax = 0, omax = 0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                anorm = fmax(anorm, fabs(oracle_get(ps->host_in[0], dbl, a0 + (size_t)j * n + i)));
                /* (Q T Q^T)(i, j) and (Q^T Q)(i, j) */
                double qtq = 0, ij = 0;
                for (int c = 0; c < n; ++c) {
                    const double qjc = oracle_get(ps->out[0], dbl, a0 + (size_t)c * n + j);
                    double tq = oracle_get(ps->out[1], dbl, v0 + c) * qjc; /* (T Q^T)(c, j) */
                    if (c > 0)
                        tq += oracle_get(ps->out[2], dbl, e0 + c - 1) *
                              oracle_get(ps->out[0], dbl, a0 + (size_t)(c - 1) * n + j);
                    if (c < n - 1)
                        tq += oracle_get(ps->out[2], dbl, e0 + c) *
                              oracle_get(ps->out[0], dbl, a0 + (size_t)(c + 1) * n + j);
                    ij += oracle_get(ps->out[0], dbl, a0 + (size_t)c * n + i) * tq;
                    qtq += oracle_get(ps->out[0], dbl, a0 + (size_t)i * n + c) *
                           oracle_get(ps->out[0], dbl, a0 + (size_t)j * n + c);
                }
                rmax = fmax(rmax, fabs(ij - oracle_get(ps->host_in[0], dbl, a0 + (size_t)j * n + i)));
                omax = fmax(omax, fabs(qtq - (i == j)));
            }
        const double eps = oracle_eps(dbl);
        const double rr = rmax / (fmax(anorm, 1e-300) * n * eps), ro = omax / (n * eps);
        if (!(rr < 30) || !(ro < 30)) {
            snprintf(why, whylen, "matrix %zu: |A - QTQ^T| %.3g, |Q^TQ - I| %.3g (scaled)", k, rr,
                     ro);
            return 0;
        }
    }
    return 1;
}

/* ---- eigenvalues of non-symmetric matrices (bcl_xgeev): the Hessenberg step and the QR step
 * are chosen one after the other (Tokura et al.'s Table 1), then the host-memory chunk ---- */

static int geev_sizes(const tune_env *e, int *out)
{
    static const int quick[] = {10};
    static const int gpu[] = {2, 3, 4, 5, 6, 8, 10, 12, 15, 16, 20, 24, 25, 28, 30, 32, 40, 48, 56, 64};
    static const int cpu[] = {4, 8, 12, 16, 24, 32, 48, 64};
    if (e->quick)
        return list(quick, 1, out);
    return e->dev.is_gpu ? list(gpu, (int)(sizeof gpu / sizeof *gpu), out)
                         : list(cpu, (int)(sizeof cpu / sizeof *cpu), out);
}

/* The Hessenberg candidates; the QR ones are built in the sweep from the best of these. */
static int geev_candidates(const tune_env *e, int dbl, int n, candidate *c)
{
    (void)dbl;
    int k = 0, pv[8];
    bcl_params p;
    if (!e->dev.is_gpu) {
        for (int g = 4; g <= 16; g *= 2) {
            if (e->quick && g != 8)
                continue;
            memset(&p, 0, sizeof p);
            p.mapping = BCL_MAPPING_SWB;
            p.work_items_per_problem = 1;
            p.qr_mapping = BCL_MAPPING_SWB;
            p.qr_work_items = 1;
            p.problems_per_group = g;
            add(c, &k, &p, "swb p=1, %d per group", g);
        }
        return k;
    }
    const int np = gpu_p_values(e, n, pv);
    for (int i = 0; i < np; ++i) {
        memset(&p, 0, sizeof p);
        p.mapping = BCL_MAPPING_SWB;
        p.work_items_per_problem = pv[i];
        add(c, &k, &p, "hessenberg swb p=%d", pv[i]);
    }
    memset(&p, 0, sizeof p);
    p.mapping = BCL_MAPPING_MWB;
    p.work_items_per_problem = 1;
    add(c, &k, &p, "hessenberg mwb p=1");
    return k;
}

static size_t geev_batch(const tune_env *e, int dbl, int n)
{
    return batch_for(e, (size_t)n * (size_t)n * (dbl ? 8 : 4), (size_t)1 << 27);
}

/* in 0: A; work 0: A on the device, 1: wr, 2: wi, 3: info */
static int geev_setup(tune_env *e, problem_set *ps)
{
    const int n = ps->n;
    const size_t d = distinct(ps->batch), nn = (size_t)n * n;
    mg_rng r;
    mg_seed(&r, 777 + (uint64_t)n);
    ps->in_bytes[0] = nn * ps->es;
    ps->host_in[0] = xmalloc(d * ps->in_bytes[0]);
    double *a = xmalloc(nn * sizeof *a);
    for (size_t k = 0; k < d; ++k) {
        mg_nonsymmetric(MG_DENSE, n, 0, &r, a);
        for (size_t i = 0; i < nn; ++i)
            oracle_set(ps->host_in[0], ps->dbl, k * nn + i, a[i]);
    }
    free(a);
    ps->dev_in[0] = upload(e, NULL, ps->batch * ps->in_bytes[0]);
    for (size_t k = 0; k < ps->batch; k += d) {
        const size_t c = ps->batch - k < d ? ps->batch - k : d;
        clEnqueueWriteBuffer(bcl_cl_queue(e->ctx), ps->dev_in[0], CL_TRUE, k * ps->in_bytes[0],
                             c * ps->in_bytes[0], ps->host_in[0], 0, NULL, NULL);
    }
    ps->dev_work[0] = upload(e, NULL, ps->batch * ps->in_bytes[0]);
    ps->dev_work[1] = upload(e, NULL, ps->batch * (size_t)n * ps->es);
    ps->dev_work[2] = upload(e, NULL, ps->batch * (size_t)n * ps->es);
    ps->dev_work[3] = upload(e, NULL, ps->batch * sizeof(int));
    return 1;
}

static bcl_status geev_run(tune_env *e, problem_set *ps, const char *step, double *seconds)
{
    cl_command_queue q = bcl_cl_queue(e->ctx);
    clEnqueueCopyBuffer(q, ps->dev_in[0], ps->dev_work[0], 0, 0, ps->batch * ps->in_bytes[0], 0,
                        NULL, NULL);
    cl_event ev = NULL;
    bcl_status s =
        ps->dbl ? bcl_dgeev_cl(e->ctx, ps->n, ps->batch, BCL_LAYOUT_CONTIGUOUS, ps->dev_work[0], 0,
                               ps->dev_work[1], 0, ps->dev_work[2], 0, NULL, 0, ps->dev_work[3], 0,
                               0, NULL, &ev)
                : bcl_sgeev_cl(e->ctx, ps->n, ps->batch, BCL_LAYOUT_CONTIGUOUS, ps->dev_work[0], 0,
                               ps->dev_work[1], 0, ps->dev_work[2], 0, NULL, 0, ps->dev_work[3], 0,
                               0, NULL, &ev);
    if (s == BCL_SUCCESS) {
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
        *seconds = step_seconds(e->ctx, step);
    }
    return s;
}

/* The first SAMPLE problems' eigenvalues (problem k is distinct problem k) against LAPACK. */
static int geev_check(const problem_set *ps, const void *wr, const void *wi, int ok, char *why,
                      size_t whylen)
{
    const int n = ps->n, dbl = ps->dbl;
    const size_t s = ps->batch < SAMPLE ? ps->batch : SAMPLE;
    double *rwr = xmalloc((size_t)n * sizeof *rwr), *rwi = xmalloc((size_t)n * sizeof *rwi),
           *rc = xmalloc((size_t)n * sizeof *rc);
    for (size_t k = 0; k < s && ok; ++k) {
        double abnrm = 0;
        const void *A = (const char *)ps->host_in[0] + k * ps->in_bytes[0];
        if (oracle_geev(n, dbl, A, rwr, rwi, rc, &abnrm) != 0)
            continue; /* LAPACK itself failed: no reference */
        int where = 0;
        const double m = oracle_eig_match(n, dbl, (const char *)wr + k * (size_t)n * ps->es,
                                          (const char *)wi + k * (size_t)n * ps->es, rwr, rwi, rc,
                                          abnrm, &where);
        if (!(m < 30)) {
            snprintf(why, whylen, "matrix %zu: eigenvalue %d off by %.3g of LAPACK's bound", k,
                     where, m);
            ok = 0;
        }
    }
    free(rwr);
    free(rwi);
    free(rc);
    return ok;
}

static int geev_verify(tune_env *e, problem_set *ps, char *why, size_t whylen)
{
    const size_t s = ps->batch < SAMPLE ? ps->batch : SAMPLE, bytes = s * (size_t)ps->n * ps->es;
    void *wr = xmalloc(bytes), *wi = xmalloc(bytes);
    cl_command_queue q = bcl_cl_queue(e->ctx);
    clEnqueueReadBuffer(q, ps->dev_work[1], CL_TRUE, 0, bytes, wr, 0, NULL, NULL);
    clEnqueueReadBuffer(q, ps->dev_work[2], CL_TRUE, 0, bytes, wi, 0, NULL, NULL);
    const int ok = geev_check(ps, wr, wi, read_info(e, ps->dev_work[3], ps->batch, why, whylen),
                              why, whylen);
    free(wr);
    free(wi);
    return ok;
}

/* Chunk candidates of geev's host-memory phase, each with 2 and 3 queues (on the H100 at
 * n = 30, chunks of 131 072 with two queues were 1-2 % faster end to end than 65 536) */
static const size_t geev_gpu_chunks[] = {4096, 16384, 65536, 131072},
                    geev_cpu_chunks[] = {1024, 4096, 16384};
static int geev_chunk_candidates(int gpu)
{
    return 2 * (int)(gpu ? sizeof geev_gpu_chunks / sizeof *geev_gpu_chunks
                         : sizeof geev_cpu_chunks / sizeof *geev_cpu_chunks);
}

/* The host-memory phase of geev (Tokura et al.'s Table 2): with the kernels chosen, the chunk
 * size and the number of queues that overlap transfers with computation, timed end to end from
 * host memory (wall clock: the overlap is what is measured). Adds the candidates to `tried` and
 * sets the winner's chunk and queues in *best. */
static void geev_chunks(tune_env *e, const problem_set *ps, double kernel_rate, bcl_params *best,
                        cJSON *tried, cJSON *entry, progress *pg)
{
    const int n = ps->n, dbl = ps->dbl;
    const size_t nn = (size_t)n * n, d = distinct(ps->batch);
    /* about a fifth of a second of computation, up to about the paper's 500 000 matrices on GPUs
     * (the largest chunks need several of them to overlap anything) */
    const size_t cap = e->dev.is_gpu ? 524288 : 16384;
    size_t batch = (size_t)(kernel_rate * 0.2);
    batch = batch < 4096 ? 4096 : batch > cap ? cap : batch;
    const size_t mem_cap = ((size_t)4 << 30) / (nn * ps->es);
    if (batch > mem_cap)
        batch = mem_cap;
    char *A = bcl_host_alloc(e->ctx, batch * nn * ps->es);
    void *wr = xmalloc(batch * (size_t)n * ps->es), *wi = xmalloc(batch * (size_t)n * ps->es);
    int *info = xmalloc(batch * sizeof *info);
    if (!A) {
        free(wr);
        free(wi);
        free(info);
        return;
    }
    for (size_t k = 0; k < batch; k += d)
        memcpy(A + k * nn * ps->es, ps->host_in[0], (batch - k < d ? batch - k : d) * nn * ps->es);
    const size_t *chunks = e->dev.is_gpu ? geev_gpu_chunks : geev_cpu_chunks;
    const int ncand = geev_chunk_candidates(e->dev.is_gpu);
    const int reps = e->reps / 2 > 63 ? 63 : e->reps / 2 > 2 ? e->reps / 2 : 2;
    double best_t = INFINITY, default_t = INFINITY;
    bcl_params chosen = *best;
    /* i = -1 and ncand: the default chunk and queues, before and after the candidates */
    for (int i = -1; i <= ncand; ++i) {
        bcl_params p = *best;
        candidate c;
        if (i >= 0 && i < ncand) {
            p.chunk_problems = chunks[i / 2];
            p.queues = 2 + i % 2;
            if (p.chunk_problems > batch / 2 && i / 2 > 0)
                continue; /* a chunk that leaves nothing to overlap */
            snprintf(c.label, sizeof c.label, "host: chunks of %zu, %d queues", p.chunk_problems,
                     p.queues);
        } else {
            snprintf(c.label, sizeof c.label, "host: default chunk and queues");
        }
        c.params = p;
        char what[64];
        snprintf(what, sizeof what, "geev %s n=%d: chunks %d/%d", dbl ? "d" : "s", n, i + 2,
                 ncand + 2);
        show(pg, what);
        outcome o = {0, 0, "ok"};
        double t[64];
        bcl_status st = bcl_set_params(e->ctx, &p);
        for (int r = 0; r <= reps && st == BCL_SUCCESS; ++r) { /* run 0 warms up and is checked */
            const double t0 = hu_now();
            st = dbl ? bcl_dgeev(e->ctx, n, batch, (const double *)A, wr, wi, NULL, info)
                     : bcl_sgeev(e->ctx, n, batch, (const float *)A, wr, wi, NULL, info);
            if (r > 0)
                t[r - 1] = hu_now() - t0;
            else if (st == BCL_SUCCESS) {
                char why[256] = "";
                int ok = 1;
                for (size_t k = 0; k < batch && ok; ++k)
                    if (info[k]) {
                        snprintf(why, sizeof why, "info[%zu] = %d", k, info[k]);
                        ok = 0;
                    }
                if (!geev_check(ps, wr, wi, ok, why, sizeof why)) {
                    snprintf(o.status, sizeof o.status, "wrong: %s", why);
                    break;
                }
            }
        }
        bcl_set_params(e->ctx, NULL);
        if (st != BCL_SUCCESS)
            snprintf(o.status, sizeof o.status, "skipped: %s", bcl_last_error(e->ctx));
        else if (!strncmp(o.status, "ok", 2)) {
            o.seconds = hu_median(t, reps);
            o.ok = 1;
        }
        if (i >= 0 && i < ncand)
            pg->done++;
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "label", c.label);
        cJSON_AddItemToObject(j, "params", params_json(&c.params));
        if (o.ok)
            cJSON_AddNumberToObject(j, "host_throughput", round4((double)batch / o.seconds));
        else
            cJSON_AddStringToObject(j, "status", o.status);
        cJSON_AddItemToArray(tried, j);
        if (!o.ok)
            continue;
        if (i < 0 || i == ncand) {
            if (o.seconds < default_t)
                default_t = o.seconds;
        } else if (o.seconds < best_t) {
            best_t = o.seconds;
            chosen = p;
        }
    }
    if (best_t * MARGIN < default_t) {
        *best = chosen;
    } else {
        best_t = default_t;
    }
    if (isfinite(best_t)) {
        cJSON_AddNumberToObject(entry, "host_throughput", round4((double)batch / best_t));
        cJSON_AddNumberToObject(entry, "default_host_throughput",
                                isfinite(default_t) ? round4((double)batch / default_t) : 0);
        cJSON_AddNumberToObject(entry, "host_batch", (double)batch);
    }
    bcl_host_free(e->ctx, A);
    free(wr);
    free(wi);
    free(info);
}

/* ---- block p-cyclic inversion (bcl_xpcyclic_inv): the method (batched kernels or host panels
 * with clBLAST GEMMs) and, for the latter, how many block columns of R^-1 go column-wise; timed
 * end to end from host memory (the host panels are part of the algorithm), at p = 16 ---- */

#define PCYCLIC_P 16

static int pcyclic_sizes(const tune_env *e, int *out)
{
    static const int quick[] = {8};
    static const int gpu[] = {4, 8, 16, 32, 64, 128};
    static const int cpu[] = {4, 8, 16, 32};
    if (e->quick)
        return list(quick, 1, out);
    return e->dev.is_gpu ? list(gpu, 6, out) : list(cpu, 4, out);
}

static int pcyclic_candidates(const tune_env *e, int dbl, int n, candidate *c)
{
    (void)e;
    (void)dbl;
    int k = 0;
    bcl_params p;
    if (n <= 32) {
        memset(&p, 0, sizeof p);
        p.pcyclic_method = 2;
        add(c, &k, &p, "batched local-memory kernels");
    }
    const int cv[] = {0, -1, 1 << 20}; /* >= p - 1: every column but the last, for any p */
    for (int i = 0; i < 3; ++i) {
        memset(&p, 0, sizeof p);
        p.pcyclic_method = 1;
        p.pcyclic_cv_columns = cv[i];
        add(c, &k, &p, "host panels + clBLAST, %s", i == 0 ? "j_F from the model" : i == 1 ? "row version only" : "column version for all");
    }
    for (int i = 0; i < 2; ++i) { /* device panels: rows only (its default), columns for all */
        memset(&p, 0, sizeof p);
        p.pcyclic_method = 3;
        p.pcyclic_cv_columns = i == 0 ? 0 : 1 << 20;
        add(c, &k, &p, "device panels + clBLAST, %s", i == 0 ? "row version" : "column version for all");
    }
    return k;
}

static size_t pcyclic_bytes(int dbl, int n)
{
    const size_t N = (size_t)n * PCYCLIC_P;
    return (2 * (size_t)PCYCLIC_P * n * n + N * N) * (dbl ? 8 : 4);
}

static size_t pcyclic_batch(const tune_env *e, int dbl, int n)
{
    /* batches of the batched use (the method choice depends on the batch, which the tuning key
     * does not hold); no floor of SAMPLE problems: a large problem is tens of megabytes */
    size_t b = ((size_t)1 << 28) / pcyclic_bytes(dbl, n) / (e->quick ? 64 : 1);
    const size_t cap = e->dev.is_gpu ? 256 : 64;
    b = b > cap ? cap : b;
    return b < 2 ? 2 : b;
}

/* in 0: A, 1: B (the whole batch: the call takes host pointers, in double for the check);
 * out 0: the blocks in the call's precision (A then B), 1: H^-1, 2: info */
static int pcyclic_setup(tune_env *e, problem_set *ps)
{
    (void)e;
    const int n = ps->n;
    const size_t blocks = (size_t)PCYCLIC_P * n * n, N = (size_t)n * PCYCLIC_P;
    mg_rng r;
    mg_seed(&r, 2024 + (uint64_t)n);
    ps->host_in[0] = xmalloc(ps->batch * blocks * sizeof(double));
    ps->host_in[1] = xmalloc(ps->batch * blocks * sizeof(double));
    for (size_t k = 0; k < ps->batch; ++k)
        mg_pcyclic(0, n, PCYCLIC_P, 0, &r, (double *)ps->host_in[0] + k * blocks,
                   (double *)ps->host_in[1] + k * blocks);
    ps->out[0] = xmalloc(2 * ps->batch * blocks * ps->es);
    for (size_t i = 0; i < ps->batch * blocks; ++i) {
        oracle_set(ps->out[0], ps->dbl, i, ((double *)ps->host_in[0])[i]);
        oracle_set(ps->out[0], ps->dbl, ps->batch * blocks + i, ((double *)ps->host_in[1])[i]);
    }
    ps->out[1] = xmalloc(ps->batch * N * N * ps->es);
    ps->out[2] = xmalloc(ps->batch * sizeof(int));
    return 1;
}

static bcl_status pcyclic_run(tune_env *e, problem_set *ps, const char *step, double *seconds)
{
    (void)step;
    const size_t blocks = (size_t)PCYCLIC_P * ps->n * ps->n;
    const char *A = ps->out[0], *B = A + ps->batch * blocks * ps->es;
    const double t0 = hu_now();
    bcl_status s = ps->dbl ? bcl_dpcyclic_inv(e->ctx, ps->n, PCYCLIC_P, ps->batch,
                                              (const double *)A, (const double *)B, ps->out[1],
                                              ps->out[2])
                           : bcl_spcyclic_inv(e->ctx, ps->n, PCYCLIC_P, ps->batch, (const float *)A,
                                              (const float *)B, ps->out[1], ps->out[2]);
    *seconds = hu_now() - t0;
    return s;
}

static int pcyclic_verify(tune_env *e, problem_set *ps, char *why, size_t whylen)
{
    (void)e;
    const int n = ps->n;
    const size_t blocks = (size_t)PCYCLIC_P * n * n, N = (size_t)n * PCYCLIC_P;
    const int *info = ps->out[2];
    for (size_t k = 0; k < ps->batch; ++k)
        if (info[k]) {
            snprintf(why, whylen, "info[%zu] = %d", k, info[k]);
            return 0;
        }
    for (size_t k = 0; k < ps->batch && k < 4; ++k) {
        const double r = oracle_pcyclic_residual(
            n, PCYCLIC_P, (const double *)ps->host_in[0] + k * blocks,
            (const double *)ps->host_in[1] + k * blocks, ps->dbl,
            (const char *)ps->out[1] + k * N * N * ps->es);
        if (!(r < 30)) {
            snprintf(why, whylen, "problem %zu: ||H H^-1 - I|| scaled %.3g", k, r);
            return 0;
        }
    }
    return 1;
}

/* The performance model's constants (host panel step, device GEMM rate and call cost), which
 * set method 1's j_F: measured by the library before the candidates run (the context then uses
 * them, so the "j_F from the model" candidate is timed with the model the entry stores) and
 * stored with the entry, where calls on this device take them from. NULL when not measured. */
static cJSON *pcyclic_model(tune_env *e, int dbl, int n, const progress *pg)
{
    bcl_pcyclic_model m;
    const bcl_status s = bcl_pcyclic_calibrate(e->ctx, dbl, n, &m);
    if (s != BCL_SUCCESS) { /* the entry stands without it: calls measure at first use */
        fprintf(stderr, "%sbatchcl-tune: warning: pcyclic %s n=%d: no performance model: %s: %s\n",
                pg->tty ? "\n" : "", dbl ? "d" : "s", n, bcl_status_string(s),
                bcl_last_error(e->ctx));
        return NULL;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "host_step_s", round4(m.host_step_s));
    cJSON_AddNumberToObject(o, "dev_gemm_flops", round4(m.dev_gemm_flops));
    cJSON_AddNumberToObject(o, "dev_gemm_call_s", round4(m.dev_gemm_call_s));
    cJSON_AddNumberToObject(o, "host_gemm_flops", round4(m.host_gemm_flops));
    cJSON_AddNumberToObject(o, "host_gemm_call_s", round4(m.host_gemm_call_s));
    cJSON_AddNumberToObject(o, "link_bytes_s", round4(m.link_bytes_s));
    cJSON_AddNumberToObject(o, "link_call_s", round4(m.link_call_s));
    return o;
}

static const tune_routine registry[] = {
    {"ldlt", "bcl_xsysv with BCL_LDLT, bcl_xsytrf_ldlt / sytrs",
     "mapping simd (problems per work-item 1-16, per group 16-64) | collaborative | hybrid "
     "(n* = ceil(n/rows), rows 2-8), 64-256 work-items per group",
     ldlt_sizes, ldlt_candidates, ldlt_batch, ldlt_setup, ldlt_run, ldlt_verify},
    {"tridiag", "bcl_xgtsv, bcl_xptsv",
     "mapping simd (systems per work-item 1-16) | collaborative | hybrid (rows per work-item 2-16)",
     tridiag_sizes, tridiag_candidates, tridiag_batch, tridiag_setup, tridiag_run, tridiag_verify},
    {"sytrd", "bcl_xsytrd, the Householder step of syevd and of sysv's HOUSEHOLDER_PCR/EIGEN/AUTO",
     "mapping simd (matrices per work-item 1-8) | collaborative (2-64 work-items per matrix, "
     "1-8 matrices per group)",
     sytrd_sizes, sytrd_candidates, sytrd_batch, sytrd_setup, sytrd_run, sytrd_verify},
    {"geev", "bcl_xgeev (eigenvalues; the vector step follows the QR step's choice)",
     "Hessenberg step swb (p = 2..W) | mwb; then QR step swb (p = 2..W) | mwb; then host chunk "
     "(4096-131072 matrices) x queues (2-3)",
     geev_sizes, geev_candidates, geev_batch, geev_setup, geev_run, geev_verify},
    {"pcyclic", "bcl_xpcyclic_inv (tuned at p = 16, wall time from host memory)",
     "method 2 (batched local-memory kernels, n <= 32) | method 1 (host panels + clBLAST) with "
     "j_F from the model, row version only, or column version for all | method 3 (device panels "
     "+ clBLAST) with the row version or the column version for all",
     pcyclic_sizes, pcyclic_candidates, pcyclic_batch, pcyclic_setup, pcyclic_run, pcyclic_verify},
};
#define ROUTINES (int)(sizeof registry / sizeof registry[0])

/* ---- clBLAST's direct GEMM (the p-cyclic inversion's products) ---- */

#ifdef BATCHCL_TUNE_CLBLAST
/* BSOFI's GEMM shapes at block size nb and order about 39 nb, each with how often one step of
 * the inversion makes it: the Q^T application's two products (top rows x 2nb x 2nb and bottom
 * rows x 2nb x nb, transposed Q), the factorization's four nb^3 products with Q^T, the row
 * version's nb x (block row) x nb product. */
typedef struct {
    int ta, tb;
    size_t m, n, k, lda, ldb, ldc;
    int weight;
} gemm_shape;

static void clblast_shapes(size_t nb, gemm_shape *sh)
{
    const size_t N = 39 * nb, half = N / 2 / nb * nb;
    sh[0] = (gemm_shape){0, 1, half, 2 * nb, 2 * nb, N, 2 * nb, N, 1};
    sh[1] = (gemm_shape){0, 1, half, 2 * nb, nb, N, 2 * nb, N, 1};
    sh[2] = (gemm_shape){1, 0, nb, nb, nb, 2 * nb, nb, nb, 4};
    sh[3] = (gemm_shape){0, 0, nb, half, nb, nb, nb, nb, 1}; /* compact: the buffers stay small */
}
enum { GEMM_SHAPES = 4 };

/* One run of every shape (each once, then `reps` timed rounds: the best round's weighted sum of
 * seconds), the results left in C at offsets shape * cstride; -1 when clBLAST fails. */
static double clblast_time(tune_env *e, int dbl, const gemm_shape *sh, cl_mem A, cl_mem B,
                           cl_mem C, size_t cstride, int reps, CLBlastStatusCode *fail)
{
    cl_command_queue q = bcl_cl_queue(e->ctx);
    double best = -1;
    for (int r = -1; r < reps; ++r) {
        double total = 0;
        for (int i = 0; i < GEMM_SHAPES; ++i) {
            const gemm_shape *g = &sh[i];
            const CLBlastTranspose ta = g->ta ? CLBlastTransposeYes : CLBlastTransposeNo,
                                   tb = g->tb ? CLBlastTransposeYes : CLBlastTransposeNo;
            clFinish(q);
            const double t0 = hu_now();
            CLBlastStatusCode st =
                dbl ? CLBlastDgemm(CLBlastLayoutColMajor, ta, tb, g->m, g->n, g->k, 1.0, A, 0,
                                   g->lda, B, 0, g->ldb, 0.0, C, i * cstride, g->ldc, &q, NULL)
                    : CLBlastSgemm(CLBlastLayoutColMajor, ta, tb, g->m, g->n, g->k, 1.0f, A, 0,
                                   g->lda, B, 0, g->ldb, 0.0f, C, i * cstride, g->ldc, &q, NULL);
            if (st != CLBlastSuccess) {
                *fail = st;
                return -1;
            }
            clFinish(q);
            total += g->weight * (hu_now() - t0);
        }
        if (r >= 0 && (best < 0 || total < best))
            best = total;
    }
    return best;
}

/* The largest difference between the products in C and the reference ones in ref, relative to
 * the largest reference entry. */
static double clblast_diff(tune_env *e, int dbl, const gemm_shape *sh, cl_mem C, size_t cstride,
                           const double *ref, double *buf)
{
    const size_t es = dbl ? 8 : 4;
    double diff = 0, big = 0;
    for (int i = 0; i < GEMM_SHAPES; ++i) {
        const size_t count = sh[i].ldc * (sh[i].n - 1) + sh[i].m;
        clEnqueueReadBuffer(bcl_cl_queue(e->ctx), C, CL_TRUE, i * cstride * es, count * es, buf, 0,
                            NULL, NULL);
        for (size_t c = 0; c < sh[i].n; ++c)
            for (size_t r = 0; r < sh[i].m; ++r) {
                const size_t at = c * sh[i].ldc + r;
                const double x = dbl ? buf[at] : ((const float *)(void *)buf)[at],
                             y = ref[i * cstride + at];
                big = fmax(big, fabs(y));
                diff = isnan(x) ? INFINITY : fmax(diff, fabs(x - y));
            }
    }
    return big > 0 ? diff / big : diff;
}

/* Candidate parameter sets drawn at random (a fixed seed, one parameter after another) from a
 * space like the one clBLAST's own tuner samples (vector widths up to 4 here), keeping the sets
 * this device can run. */
static int clblast_candidates(const tune_env *e, int dbl, int want,
                              size_t (*out)[GEMM_DIRECT_PARAMS])
{
    static const size_t wgd[] = {8, 16, 32, 64}, dim[] = {8, 16, 32}, kwid[] = {2, 8, 16},
                        vw[] = {1, 2, 4}, pad[] = {0, 1};
    static const size_t *const values[GEMM_DIRECT_PARAMS] = {wgd, dim, dim, dim, dim,
                                                             kwid, vw, vw, pad, pad};
    static const size_t counts[GEMM_DIRECT_PARAMS] = {4, 3, 3, 3, 3, 3, 3, 3, 2, 2};
    mg_rng rng;
    mg_seed(&rng, 0x9e3779b97f4a7c15ull + (unsigned)dbl);
    int count = 0;
    for (int tries = 0; count < want && tries < 200000; ++tries) {
        size_t v[GEMM_DIRECT_PARAMS];
        for (int i = 0; i < GEMM_DIRECT_PARAMS; ++i)
            v[i] = values[i][(size_t)(mg_uniform(&rng) * (double)counts[i])];
        char why[160];
        if (!gemm_direct_valid(v, dbl ? 8 : 4, e->dev.local_mem_bytes, e->dev.max_work_group_size,
                               why, sizeof why))
            continue;
        int dup = 0;
        for (int i = 0; i < count && !dup; ++i)
            dup = !memcmp(out[i], v, sizeof v);
        if (!dup)
            memcpy(out[count++], v, sizeof v);
    }
    return count;
}

/* Hand clBLAST a file's set (an "XgemmDirect" object), as the library would. */
static void apply_gemm_set(tune_env *e, int dbl, const cJSON *set)
{
    size_t v[GEMM_DIRECT_PARAMS];
    char why[160] = "clBLAST refused it";
    for (int i = 0; i < GEMM_DIRECT_PARAMS; ++i) {
        const cJSON *item = cJSON_GetObjectItem(set, gemm_direct_name(i));
        v[i] = cJSON_IsNumber(item) && item->valuedouble >= 0 ? (size_t)item->valuedouble : 0;
    }
    if (!gemm_direct_valid(v, dbl ? 8 : 4, e->dev.local_mem_bytes, e->dev.max_work_group_size, why,
                           sizeof why) ||
        gemm_direct_give(bcl_cl_device(e->ctx), dbl, v) != CLBlastSuccess)
        fprintf(stderr, "batchcl-tune: the file's clblast %s set is not used (%s)\n",
                dbl ? "d" : "s", why);
    else
        fprintf(stderr, "batchcl-tune: GEMMs with the file's clblast %s set\n", dbl ? "d" : "s");
}

/* Sweep clBLAST's direct GEMM parameters on BSOFI's shapes; the object for the file's
 * "clblast" (NULL: clBLAST's own set was not beaten; *failed: not even it could be measured,
 * and the file keeps what it holds). clBLAST
 * keeps the last set it was given for the rest of the process, so this runs after every other
 * routine's sweep. */
static cJSON *tune_clblast(tune_env *e, int dbl, int *failed)
{
    *failed = 1; /* until clBLAST's own set is measured */
    const size_t nb = e->dev.is_gpu && !e->quick ? 256 : 32, es = dbl ? 8 : 4;
    gemm_shape sh[GEMM_SHAPES];
    clblast_shapes(nb, sh);
    size_t cstride = 0, in = 39 * nb * 2 * nb; /* A and B: the largest operand */
    for (int i = 0; i < GEMM_SHAPES; ++i)
        if (sh[i].ldc * sh[i].n > cstride)
            cstride = sh[i].ldc * sh[i].n;
    cl_context c = bcl_cl_context(e->ctx);
    cl_int err[3];
    cl_mem A = clCreateBuffer(c, CL_MEM_READ_WRITE, in * es, NULL, &err[0]),
           B = clCreateBuffer(c, CL_MEM_READ_WRITE, in * es, NULL, &err[1]),
           C = clCreateBuffer(c, CL_MEM_READ_WRITE, GEMM_SHAPES * cstride * es, NULL, &err[2]);
    const size_t most = in > GEMM_SHAPES * cstride ? in : GEMM_SHAPES * cstride;
    double *host = xmalloc(sizeof *host * most);
    double *ref = xmalloc(sizeof *ref * GEMM_SHAPES * cstride);
    cJSON *result = NULL;
    if (err[0] || err[1] || err[2]) {
        fprintf(stderr, "batchcl-tune: clblast: no room for the GEMM operands (%zu MiB)\n",
                (2 * in + GEMM_SHAPES * cstride) * es >> 20);
        goto done;
    }
    mg_rng rng;
    mg_seed(&rng, 12345);
    for (size_t i = 0; i < in; ++i) {
        const double x = mg_uniform(&rng) - 0.5;
        if (dbl)
            host[i] = x;
        else
            ((float *)(void *)host)[i] = (float)x;
    }
    cl_command_queue q = bcl_cl_queue(e->ctx);
    clEnqueueWriteBuffer(q, A, CL_TRUE, 0, in * es, host, 0, NULL, NULL);
    clEnqueueWriteBuffer(q, B, CL_TRUE, 0, in * es, host, 0, NULL, NULL);
    const double zero = 0;
    clEnqueueFillBuffer(q, C, &zero, es, 0, GEMM_SHAPES * cstride * es, 0, NULL, NULL);
    CLBlastStatusCode fail = CLBlastSuccess;
    const int reps = e->reps < 3 ? 3 : e->reps;
    const double t_default = clblast_time(e, dbl, sh, A, B, C, cstride, reps, &fail);
    if (t_default < 0) {
        fprintf(stderr, "batchcl-tune: clblast: clBLAST's own GEMM failed (status %d)\n",
                (int)fail);
        goto done;
    }
    *failed = 0;
    /* the reference products: clBLAST's own parameters */
    clEnqueueReadBuffer(q, C, CL_TRUE, 0, GEMM_SHAPES * cstride * es, host, 0, NULL, NULL);
    for (size_t i = 0; i < GEMM_SHAPES * cstride; ++i)
        ref[i] = dbl ? host[i] : ((const float *)(void *)host)[i];
    size_t(*cand)[GEMM_DIRECT_PARAMS] = xmalloc(sizeof *cand * 96);
    const int count = clblast_candidates(e, dbl, e->quick ? 1 : 96, cand);
    int best = -1, tried = 0, wrong = 0;
    double t_best = t_default;
    const double tol = 64 * (dbl ? 0x1p-52 : 0x1p-23) * (double)(2 * nb);
    for (int k = 0; k < count; ++k) {
        if (isatty(2))
            fprintf(stderr, "\rbatchcl-tune: clblast %s: candidate %d of %d", dbl ? "d" : "s",
                    k + 1, count);
        if (gemm_direct_give(bcl_cl_device(e->ctx), dbl, cand[k]) != CLBlastSuccess)
            continue;
        clEnqueueFillBuffer(q, C, &zero, es, 0, GEMM_SHAPES * cstride * es, 0, NULL, NULL);
        const double t = clblast_time(e, dbl, sh, A, B, C, cstride, reps, &fail);
        if (t < 0)
            continue;
        ++tried;
        if (!(clblast_diff(e, dbl, sh, C, cstride, ref, host) <= tol)) {
            ++wrong; /* never chosen */
            continue;
        }
        if (t < t_best) {
            t_best = t;
            best = k;
        }
    }
    fprintf(stderr, "%sbatchcl-tune: clblast %s: %d of %d candidates ran, %d wrong; best %.4g ms "
            "against clBLAST's own %.4g ms\n",
            isatty(2) ? "\r" : "", dbl ? "d" : "s", tried, count, wrong, t_best * 1e3,
            t_default * 1e3);
    if (best >= 0 && t_best * MARGIN < t_default) {
        result = cJSON_CreateObject();
        cJSON *set = cJSON_CreateObject();
        for (int i = 0; i < GEMM_DIRECT_PARAMS; ++i)
            cJSON_AddNumberToObject(set, gemm_direct_name(i), (double)cand[best][i]);
        cJSON_AddItemToObject(result, "XgemmDirect", set);
        cJSON_AddNumberToObject(result, "seconds", round4(t_best));
        cJSON_AddNumberToObject(result, "default_seconds", round4(t_default));
        char what[200];
        snprintf(what, sizeof what,
                 "best of %d rounds, weighted sum: BSOFI's GEMMs at n = %zu, N = %zu "
                 "(Q^T application, factorization, row version)",
                 reps, nb, 39 * nb);
        cJSON_AddStringToObject(result, "measured", what);
        cJSON_AddNumberToObject(result, "candidates", tried);
    }
    free(cand);
done:
    if (A)
        clReleaseMemObject(A);
    if (B)
        clReleaseMemObject(B);
    if (C)
        clReleaseMemObject(C);
    free(host);
    free(ref);
    return result;
}
#endif

/* ---- the database file ---- */

static void slug(const char *in, char *out, size_t cap)
{
    size_t k = 0;
    int dash = 1;
    for (; *in && k + 1 < cap; ++in) {
        if (isalnum((unsigned char)*in)) {
            out[k++] = (char)tolower((unsigned char)*in);
            dash = 0;
        } else if (!dash) {
            out[k++] = '-';
            dash = 1;
        }
    }
    while (k > 0 && out[k - 1] == '-')
        --k;
    out[k] = 0;
}

static cJSON *device_json(const tune_env *e)
{
    cJSON *d = cJSON_CreateObject();
    cl_device_type type = 0;
    clGetDeviceInfo(bcl_cl_device(e->ctx), CL_DEVICE_TYPE, sizeof type, &type, NULL);
    cJSON_AddStringToObject(d, "name", e->dev.name);
    cJSON_AddStringToObject(d, "vendor", e->dev.vendor);
    cJSON_AddStringToObject(d, "type", type & CL_DEVICE_TYPE_GPU   ? "GPU"
                                       : type & CL_DEVICE_TYPE_CPU ? "CPU"
                                                                   : "ACCELERATOR");
    cJSON_AddStringToObject(d, "architecture", e->dev.architecture);
    cJSON_AddStringToObject(d, "driver", e->dev.driver_version);
    cJSON_AddStringToObject(d, "opencl", e->dev.opencl_version);
    cJSON_AddNumberToObject(d, "compute_units", e->dev.compute_units);
    return d;
}

static cJSON *params_json(const bcl_params *p)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < BCL_TUNING_FIELD_COUNT; ++i) {
        const bcl_tuning_field *f = &bcl_tuning_fields[i];
        const long v = bcl_field_get(p, f);
        if (!v)
            continue;
        if (f->kind == BCL_FIELD_MAPPING)
            cJSON_AddStringToObject(o, f->name, bcl_mapping_key((bcl_mapping)v));
        else
            cJSON_AddNumberToObject(o, f->name, (double)v);
    }
    return o;
}

/* One entry per line: readable, and diffs stay small. */
static int write_db(const char *path, cJSON *root)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return 0;
    fputs("{\n", f);
    int first = 1;
    for (cJSON *item = root->child; item; item = item->next) {
        if (!first)
            fputs(",\n", f);
        first = 0;
        if (!strcmp(item->string, "entries")) {
            fputs("  \"entries\": [", f);
            for (cJSON *e = item->child; e; e = e->next) {
                char *line = cJSON_PrintUnformatted(e);
                fprintf(f, "\n    %s%s", line, e->next ? "," : "");
                free(line);
            }
            fputs("\n  ]", f);
        } else {
            char *v = cJSON_PrintUnformatted(item);
            fprintf(f, "  \"%s\": %s", item->string, v);
            free(v);
        }
    }
    fputs("\n}\n", f);
    const int ok = fclose(f) == 0;
    return ok && rename(tmp, path) == 0;
}

/* NULL with *exists = 0 when there is no file; NULL with *exists = 1 when it cannot be read or
 * parsed (never overwritten silently: it may hold hours of measurements). */
static cJSON *load_db_checked(const char *path, int *exists)
{
    FILE *f = fopen(path, "rb");
    *exists = f != NULL || errno != ENOENT;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = xmalloc((size_t)(len > 0 ? len : 0) + 1);
    const size_t got = fread(buf, 1, (size_t)(len > 0 ? len : 0), f);
    buf[got] = 0;
    fclose(f);
    cJSON *root = cJSON_ParseWithOpts(buf, NULL, 1); /* nothing may follow the object */
    free(buf);
    return root;
}

static cJSON *load_db(const char *path)
{
    int exists;
    return load_db_checked(path, &exists);
}

static cJSON *find_entry(cJSON *entries, const char *routine, int dbl, int n)
{
    for (cJSON *e = entries->child; e; e = e->next) {
        const cJSON *r = cJSON_GetObjectItem(e, "routine"), *p = cJSON_GetObjectItem(e, "precision"),
                    *nn = cJSON_GetObjectItem(e, "n");
        if (cJSON_IsString(r) && !strcmp(r->valuestring, routine) && cJSON_IsString(p) &&
            p->valuestring[0] == (dbl ? 'd' : 's') && cJSON_IsNumber(nn) && nn->valueint == n)
            return e;
    }
    return NULL;
}

/* ---- progress ---- */


static void show(progress *pg, const char *what)
{
    if (!pg->tty)
        return;
    const double el = hu_now() - pg->start;
    const double frac = pg->total ? (double)pg->done / pg->total : 1;
    const double eta = pg->done ? el / pg->done * (pg->total - pg->done) : 0;
    char bar[31];
    const int fill = (int)(frac * 30);
    for (int i = 0; i < 30; ++i)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    fprintf(stderr, "\r[%s] %3.0f%%  %-38.38s  ETA %2dm%02ds ", bar, 100 * frac, what,
            (int)eta / 60, (int)eta % 60);
    fflush(stderr);
}

/* ---- the sweep ---- */


/* Time the parameters p (forced) on the set: a first run (builds the kernels) whose results are
 * checked, then reps timed runs. */
static outcome measure(tune_env *e, const tune_routine *rt, problem_set *ps, const bcl_params *p,
                       const char *step)
{
    outcome o = {0, 0, ""};
    bcl_status s = bcl_set_params(e->ctx, p);
    double t[64];
    if (s == BCL_SUCCESS)
        s = rt->run(e, ps, step, &t[0]);
    if (s != BCL_SUCCESS) {
        snprintf(o.status, sizeof o.status, "skipped: %s", bcl_last_error(e->ctx));
        bcl_set_params(e->ctx, NULL);
        return o;
    }
    char why[256];
    if (!rt->verify(e, ps, why, sizeof why)) {
        snprintf(o.status, sizeof o.status, "wrong: %s", why);
        bcl_set_params(e->ctx, NULL);
        return o;
    }
    const int reps = e->reps < 64 ? e->reps : 64;
    for (int r = 0; r < reps && s == BCL_SUCCESS; ++r)
        s = rt->run(e, ps, step, &t[r]);
    bcl_set_params(e->ctx, NULL);
    if (s != BCL_SUCCESS) {
        snprintf(o.status, sizeof o.status, "skipped: %s", bcl_last_error(e->ctx));
        return o;
    }
    o.seconds = hu_median(t, reps);
    o.ok = o.seconds > 0;
    snprintf(o.status, sizeof o.status, o.ok ? "ok" : "skipped: no profiling time");
    return o;
}

/* four significant digits: the timing is no more precise, and the file stays readable */
static double round4(double v)
{
    char text[32];
    snprintf(text, sizeof text, "%.4g", v);
    return strtod(text, NULL);
}

static void record(cJSON *list, const candidate *c, const outcome *o, size_t batch)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "label", c->label);
    cJSON_AddItemToObject(j, "params", params_json(&c->params));
    if (o->ok)
        cJSON_AddNumberToObject(j, "throughput", round4((double)batch / o->seconds));
    else
        cJSON_AddStringToObject(j, "status", o->status);
    cJSON_AddItemToArray(list, j);
}


/* Sweep one routine, precision and size; returns the entry. */
static cJSON *tune_one(tune_env *e, const tune_routine *rt, int dbl, int n, progress *pg)
{
    candidate c[MAX_CANDIDATES];
    const int count = rt->candidates(e, dbl, n, c);
    problem_set ps;
    memset(&ps, 0, sizeof ps);
    ps.n = n;
    ps.dbl = dbl;
    ps.es = dbl ? sizeof(double) : sizeof(float);
    ps.batch = rt->batch(e, dbl, n);
    rt->setup(e, &ps);
    cJSON *model = !strcmp(rt->name, "pcyclic") && bcl_pcyclic_has_clblast()
                       ? pcyclic_model(e, dbl, n, pg)
                       : NULL;
    cJSON *tried = cJSON_CreateArray();
    char what[64];
    snprintf(what, sizeof what, "%s %s n=%d: default", rt->name, dbl ? "d" : "s", n);
    show(pg, what);
    const int is_geev = !strcmp(rt->name, "geev");
    bcl_params none;
    memset(&none, 0, sizeof none);
    candidate def = {none, "default (built-in heuristic)"};
    outcome d = measure(e, rt, &ps, &none, NULL);
    record(tried, &def, &d, ps.batch);
    bcl_params best = none;
    double best_s = d.ok ? d.seconds : INFINITY;
    /* geev: steps one after the other, each judged by its own kernel's time */
    const char *step = is_geev && e->dev.is_gpu ? "hessenberg" : NULL;
    double best_step = INFINITY;
    if (step) {
        const outcome ds = measure(e, rt, &ps, &none, step);
        best_step = ds.ok ? ds.seconds : INFINITY;
    }
    for (int i = 0; i < count; ++i) {
        snprintf(what, sizeof what, "%s %s n=%d: %d/%d", rt->name, dbl ? "d" : "s", n, i + 1, count);
        show(pg, what);
        const outcome o = measure(e, rt, &ps, &c[i].params, step);
        record(tried, &c[i], &o, ps.batch);
        pg->done++;
        const double cur = step ? best_step : best_s;
        if (o.ok && o.seconds * MARGIN < cur) {
            best = c[i].params;
            if (step)
                best_step = o.seconds;
            else
                best_s = o.seconds;
        }
    }
    if (!step && d.ok) {
        /* the default once more, after the candidates: the better of its two medians stands, so
         * that a candidate wins by speed rather than by running later (warmer clocks, caches) */
        const outcome again = measure(e, rt, &ps, &none, NULL);
        if (again.ok && again.seconds < d.seconds)
            d = again;
        if (!(best_s * MARGIN < d.seconds)) {
            best = none;
            best_s = d.seconds;
        }
    }
    if (step) {
        /* the QR step on top of the chosen Hessenberg step */
        const outcome dq = measure(e, rt, &ps, &best, "qr");
        double best_q = dq.ok ? dq.seconds : INFINITY;
        bcl_params hess = best;
        int pv[8];
        const int np = gpu_p_values(e, n, pv);
        for (int i = 0; i <= np; ++i) {
            candidate q;
            q.params = hess;
            q.params.qr_mapping = i < np ? BCL_MAPPING_SWB : BCL_MAPPING_MWB;
            q.params.qr_work_items = i < np ? pv[i] : 1;
            snprintf(q.label, sizeof q.label, "qr %s p=%d", i < np ? "swb" : "mwb",
                     q.params.qr_work_items);
            snprintf(what, sizeof what, "%s %s n=%d: qr %d/%d", rt->name, dbl ? "d" : "s", n, i + 1,
                     np + 1);
            show(pg, what);
            const outcome o = measure(e, rt, &ps, &q.params, "qr");
            record(tried, &q, &o, ps.batch);
            pg->done++;
            if (o.ok && o.seconds * MARGIN < best_q) {
                best = q.params;
                best_q = o.seconds;
            }
        }
        const outcome total = measure(e, rt, &ps, &best, NULL);
        /* the default again, after the candidates (as for the other routines) */
        const outcome again = measure(e, rt, &ps, &none, NULL);
        if (again.ok && (!d.ok || again.seconds < d.seconds))
            d = again;
        best_s = d.ok ? d.seconds : INFINITY;
        if (total.ok && total.seconds * MARGIN < best_s)
            best_s = total.seconds;
        else
            best = none; /* the steps' winners together are no faster than the default */
    }
    cJSON *entry = cJSON_CreateObject();
    if (is_geev && !e->quick && isfinite(best_s))
        geev_chunks(e, &ps, (double)ps.batch / best_s, &best, tried, entry, pg);
    cJSON_AddStringToObject(entry, "routine", rt->name);
    cJSON_AddStringToObject(entry, "precision", dbl ? "d" : "s");
    cJSON_AddNumberToObject(entry, "n", n);
    cJSON_AddItemToObject(entry, "params", params_json(&best));
    cJSON_AddNumberToObject(entry, "throughput",
                            isfinite(best_s) ? round4((double)ps.batch / best_s) : 0);
    cJSON_AddNumberToObject(entry, "default_throughput",
                            d.ok ? round4((double)ps.batch / d.seconds) : 0);
    cJSON_AddStringToObject(entry, "unit",
                            strcmp(rt->name, "pcyclic")
                                ? "problems/s, device time"
                                : "problems/s, wall time from host memory (p = 16)");
    cJSON_AddNumberToObject(entry, "batch", (double)ps.batch);
    if (model)
        cJSON_AddItemToObject(entry, "model", model);
    cJSON_AddItemToObject(entry, "candidates", tried);
    if (!d.ok) {
        /* the library's own choice does not run or is wrong: a bug to report, not a tuning */
        fprintf(stderr, "%sbatchcl-tune: %s %s n=%d: the default parameters fail: %s\n",
                pg->tty ? "\n" : "", rt->name, dbl ? "d" : "s", n, d.status);
        pg->failures++;
    }
    if (!pg->tty)
        fprintf(stderr, "%s %s n=%d: %d candidates, best %.4g problems/s (default %.4g)\n",
                rt->name, dbl ? "d" : "s", n, count, isfinite(best_s) ? ps.batch / best_s : 0.0,
                d.ok ? ps.batch / d.seconds : 0.0);
    release_set(&ps);
    return entry;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = o ? cJSON_GetObjectItem(o, key) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = o ? cJSON_GetObjectItem(o, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : "?";
}

/* ---- the n* figure (Abbas-Turki & Graillat's Fig. 5 for this device) ---- */

/* For each n, the n* of the fastest verified collaborative or hybrid LDL^T candidate. */
static int best_nstar(cJSON *entries, int dbl, int *n_out, int *nstar_out, double *gain_out)
{
    int k = 0;
    for (cJSON *e = entries->child; e; e = e->next) {
        const cJSON *r = cJSON_GetObjectItem(e, "routine"), *p = cJSON_GetObjectItem(e, "precision");
        if (!cJSON_IsString(r) || strcmp(r->valuestring, "ldlt") || !cJSON_IsString(p) ||
            p->valuestring[0] != (dbl ? 'd' : 's'))
            continue;
        const int n = (int)num(e, "n");
        double best = 0, coll = 0;
        int nstar = 0;
        const cJSON *cands = cJSON_GetObjectItem(e, "candidates");
        for (const cJSON *c = cands ? cands->child : NULL; c; c = c->next) {
            const cJSON *tp = cJSON_GetObjectItem(c, "throughput"), *pp = cJSON_GetObjectItem(c, "params");
            const cJSON *m = pp ? cJSON_GetObjectItem(pp, "mapping") : NULL;
            if (!cJSON_IsNumber(tp) || !cJSON_IsString(m))
                continue;
            int ns;
            if (!strcmp(m->valuestring, "collaborative"))
                ns = n;
            else if (!strcmp(m->valuestring, "hybrid"))
                ns = (int)num(pp, "work_items_per_problem");
            else
                continue;
            if (ns == n && tp->valuedouble > coll)
                coll = tp->valuedouble;
            if (tp->valuedouble > best) {
                best = tp->valuedouble;
                nstar = ns;
            }
        }
        if (nstar && k < MAX_SIZES) {
            n_out[k] = n;
            nstar_out[k] = nstar;
            gain_out[k] = coll > 0 ? best / coll : 1;
            ++k;
        }
    }
    return k;
}

static int plot_nstar(cJSON *root, const char *png)
{
    cJSON *entries = cJSON_GetObjectItem(root, "entries");
    int ns[2][MAX_SIZES], nst[2][MAX_SIZES];
    double gain[2][MAX_SIZES];
    int count[2];
    for (int d = 0; d < 2; ++d)
        count[d] = best_nstar(entries, d, ns[d], nst[d], gain[d]);
    if (!count[0] && !count[1]) {
        fprintf(stderr, "batchcl-tune: no collaborative/hybrid LDL^T results to plot\n");
        return 0;
    }
    const int W = 640, H = 480, x0 = 60, y0 = 420, pw = 540, ph = 370, nmax = 64;
    png_canvas c;
    if (png_canvas_init(&c, W, H, 255, 255, 255) != 0)
        return 0;
    png_fill(&c, x0, y0 - ph, x0 + 1, y0 + 1, 0, 0, 0);
    png_fill(&c, x0, y0, x0 + pw + 1, y0 + 1, 0, 0, 0);
    for (int t = 0; t <= nmax; t += 8) {
        const int x = x0 + t * pw / nmax, y = y0 - t * ph / nmax;
        char lab[8];
        snprintf(lab, sizeof lab, "%d", t);
        png_fill(&c, x, y0, x + 1, y0 + 5, 0, 0, 0);
        png_text(&c, x - 4, y0 + 8, 2, lab, 0, 0, 0);
        png_fill(&c, x0 - 5, y, x0, y + 1, 0, 0, 0);
        png_text(&c, x0 - 28, y - 5, 2, lab, 0, 0, 0);
    }
    /* guides: n* = n and n* = n/2 */
    for (int t = 1; t <= nmax * 4; ++t) {
        const double n = t / 4.0;
        png_fill(&c, x0 + (int)(n * pw / nmax), y0 - (int)(n * ph / nmax), x0 + (int)(n * pw / nmax) + 1,
                 y0 - (int)(n * ph / nmax) + 1, 170, 170, 170);
        png_fill(&c, x0 + (int)(n * pw / nmax), y0 - (int)(n / 2 * ph / nmax),
                 x0 + (int)(n * pw / nmax) + 1, y0 - (int)(n / 2 * ph / nmax) + 1, 170, 170, 170);
    }
    static const unsigned char col[2][3] = {{30, 90, 200}, {210, 50, 40}};
    for (int d = 0; d < 2; ++d)
        for (int i = 0; i < count[d]; ++i) {
            const int x = x0 + ns[d][i] * pw / nmax, y = y0 - nst[d][i] * ph / nmax;
            const int off = d ? 1 : -1; /* float and double side by side */
            png_fill(&c, x - 3 + off * 2, y - 3, x + 3 + off * 2, y + 3, col[d][0], col[d][1],
                     col[d][2]);
        }
    /* the 3x5 font has no '*': "N STAR" */
    png_text(&c, x0 + pw / 2 - 10, y0 + 30, 3, "N", 0, 0, 0);
    png_text(&c, 8, 6, 2, "LDLT: FASTEST N STAR (WORK-ITEMS PER MATRIX) FOR EACH N", 0, 0, 0);
    png_text(&c, x0 + 20, 22, 2, "FLOAT", col[0][0], col[0][1], col[0][2]);
    png_text(&c, x0 + 80, 22, 2, "DOUBLE", col[1][0], col[1][1], col[1][2]);
    png_text(&c, x0 + 160, 22, 2, "LINES: N STAR = N AND N/2", 120, 120, 120);
    const int rc = png_write_rgb(png, c.w, c.h, c.rgb);
    png_canvas_free(&c);
    return rc == 0;
}

/* Markdown tables for the README: per routine the chosen parameters against the default, and
 * the n* per n. */
static void print_report(cJSON *root)
{
    cJSON *dev = cJSON_GetObjectItem(root, "device");
    printf("Tuning results for %s (%s), driver %s\n\n", str(dev, "name"), str(dev, "vendor"),
           str(dev, "driver"));
    cJSON *entries = cJSON_GetObjectItem(root, "entries");
    for (int r = 0; r < ROUTINES; ++r)
        for (int dbl = 0; dbl < 2; ++dbl) {
            int header = 0;
            for (cJSON *e = entries->child; e; e = e->next) {
                if (strcmp(str(e, "routine"), registry[r].name) ||
                    str(e, "precision")[0] != (dbl ? 'd' : 's'))
                    continue;
                if (!header) {
                    printf("\n%s, %s: problems/s\n\n| n | tuned | default | speed-up | chosen "
                           "|\n|---|---|---|---|---|\n",
                           registry[r].name, dbl ? "double" : "float");
                    header = 1;
                }
                const double t = num(e, "throughput"), d = num(e, "default_throughput");
                const cJSON *prm = cJSON_GetObjectItem(e, "params");
                char *params = prm ? cJSON_PrintUnformatted(prm) : NULL;
                const cJSON *model = cJSON_GetObjectItem(e, "model");
                char extra[256] = "";
                if (model)
                    snprintf(extra, sizeof extra,
                             "; model: host step %.3g ms, GEMM %.3g GFLOP/s + %.3g us a call, "
                             "host GEMM %.3g GFLOP/s + %.3g us, link %.3g GB/s + %.3g us",
                             num(model, "host_step_s") * 1e3, num(model, "dev_gemm_flops") * 1e-9,
                             num(model, "dev_gemm_call_s") * 1e6,
                             num(model, "host_gemm_flops") * 1e-9,
                             num(model, "host_gemm_call_s") * 1e6,
                             num(model, "link_bytes_s") * 1e-9, num(model, "link_call_s") * 1e6);
                printf("| %d | %.3g | %.3g | %.2f | %s%s |\n", (int)num(e, "n"), t, d,
                       d > 0 ? t / d : 0, params && strcmp(params, "{}") ? params : "default",
                       extra);
                free(params);
            }
        }
    int ns[MAX_SIZES], nst[MAX_SIZES];
    double gain[MAX_SIZES];
    for (int dbl = 0; dbl < 2; ++dbl) {
        const int k = best_nstar(entries, dbl, ns, nst, gain);
        if (!k)
            continue;
        printf("\nLDL^T %s: the fastest n* per n (collaborative n* = n, hybrid n* < n) and its "
               "gain over n* = n\n\n| n | n* | gain |\n|---|---|---|\n",
               dbl ? "double" : "float");
        for (int i = 0; i < k; ++i)
            printf("| %d | %d | %.2f |\n", ns[i], nst[i], gain[i]);
    }
}

/* ---- main ---- */

static void usage(void)
{
    puts("usage: batchcl-tune [options]\n"
         "  --device SPEC        device (as BATCHCL_DEVICE: gpu, cpu, P:D or a name part)\n"
         "  --routine LIST       routines to tune (default all; see --list)\n"
         "  --precision s|d|sd   precisions (default sd, or s where the device has no fp64)\n"
         "  --sizes LIST         sizes, e.g. 1-64 or 4,8,16 (default per routine)\n"
         "  --output PATH        a .json file, or a directory for <vendor>-<device>.json\n"
         "                       (default tuning/db)\n"
         "  --repeats R          timed runs per candidate, the median counts (default 5, quick 2)\n"
         "  --quick              small batches, few sizes and candidates (CI)\n"
         "  --restart            tune the selected sizes again (default: keep the results\n"
         "                       already in the output file and tune only the missing ones)\n"
         "  --plot FILE.png      draw the best LDL^T n* per n from the output file\n"
         "  --report             print the results as markdown tables\n"
         "  --list               list the routines and their parameter spaces\n"
         "With --plot or --report and no --routine, --precision, --sizes or --quick, nothing is\n"
         "tuned: the existing output file is shown.");
}

static int wanted(const char *listing, const char *name)
{
    if (!listing)
        return 1;
    const size_t len = strlen(name);
    for (const char *p = listing; (p = strstr(p, name)); p += len)
        if ((p == listing || p[-1] == ',') && (p[len] == 0 || p[len] == ','))
            return 1;
    return 0;
}

static int parse_sizes(const char *s, int *out)
{
    int k = 0;
    while (*s && k < MAX_SIZES) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            return -1;
        if (*end == '-') {
            b = strtol(end + 1, &end, 10);
        }
        if (a < 1 || b < a || b > 1000000)
            return -1;
        for (long v = a; v <= b && k < MAX_SIZES; ++v) {
            int seen = 0;
            for (int i = 0; i < k; ++i)
                seen |= out[i] == (int)v;
            if (!seen)
                out[k++] = (int)v;
        }
        if (*end == ',')
            ++end;
        else if (*end)
            return -1;
        s = end;
    }
    return k;
}

int main(int argc, char **argv)
{
    const char *device = NULL, *routines = NULL, *precision = NULL, *sizes_arg = NULL,
               *output = "tuning/db", *plot = NULL;
    int quick = 0, restart = 0, reps = 0, do_report = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && v && ++i)
        if (OPT("--device"))
            device = v;
        else if (OPT("--routine"))
            routines = v;
        else if (OPT("--precision"))
            precision = v;
        else if (OPT("--sizes"))
            sizes_arg = v;
        else if (OPT("--output"))
            output = v;
        else if (OPT("--repeats"))
            reps = atoi(v);
        else if (OPT("--plot"))
            plot = v;
        else if (!strcmp(a, "--quick"))
            quick = 1;
        else if (!strcmp(a, "--restart"))
            restart = 1;
        else if (!strcmp(a, "--report"))
            do_report = 1;
        else if (!strcmp(a, "--list")) {
            for (int r = 0; r < ROUTINES; ++r)
                printf("%-8s %s\n         space: %s\n", registry[r].name, registry[r].what,
                       registry[r].space);
            printf("%-8s %s\n         space: %s\n", "clblast",
                   "clBLAST's direct GEMM for bcl_xpcyclic_inv (a full run, or when named; last)",
                   "WGD 8-64, MDIMCD/NDIMCD/MDIMAD/NDIMBD 8-32, KWID 2-16, VWMD/VWND 1-4, "
                   "PADA/PADB 0-1: 96 valid sets drawn at random (1 with --quick), timed on "
                   "BSOFI's shapes");
            return 0;
        } else {
            usage();
            return !strcmp(a, "--help") || !strcmp(a, "-h") ? 0 : 1;
        }
#undef OPT
    }
    if (routines)
        for (const char *p = routines; *p;) {
            const size_t len = strcspn(p, ",");
            int known = len == 7 && !strncmp(p, "clblast", 7);
            for (int r = 0; r < ROUTINES; ++r)
                known |= strlen(registry[r].name) == len && !strncmp(p, registry[r].name, len);
            if (!known) {
                fprintf(stderr, "batchcl-tune: --routine: unknown routine \"%.*s\" (see --list)\n",
                        (int)len, p);
                return 1;
            }
            p += len + (p[len] == ',');
        }
    int user_sizes[MAX_SIZES], nuser = 0;
    if (sizes_arg && (nuser = parse_sizes(sizes_arg, user_sizes)) <= 0) {
        fprintf(stderr, "batchcl-tune: --sizes \"%s\" is not a list like 1-64 or 4,8,16\n",
                sizes_arg);
        return 1;
    }
    if (precision && strcmp(precision, "s") && strcmp(precision, "d") && strcmp(precision, "sd")) {
        fprintf(stderr, "batchcl-tune: --precision takes s, d or sd\n");
        return 1;
    }

    /* showing a file needs no device */
    const size_t out_len = strlen(output);
    if ((plot || do_report) && !routines && !sizes_arg && !precision && !quick && out_len > 5 &&
        !strcmp(output + out_len - 5, ".json")) {
        cJSON *root = load_db(output);
        if (!root || !cJSON_IsArray(cJSON_GetObjectItem(root, "entries")) ||
            !cJSON_IsObject(cJSON_GetObjectItem(root, "device"))) {
            fprintf(stderr, "batchcl-tune: %s is not a tuning file\n", output);
            return 2;
        }
        if (do_report)
            print_report(root);
        const int ok = !plot || plot_nstar(root, plot);
        cJSON_Delete(root);
        return ok ? 0 : 2;
    }

    tune_env e;
    memset(&e, 0, sizeof e);
    e.quick = quick;
    e.reps = reps > 0 ? reps : quick ? 2 : 5;
    bcl_status s = bcl_create(&e.ctx, device);
    if (s != BCL_SUCCESS) {
        fprintf(stderr, "batchcl-tune: %s\n", bcl_last_error(NULL));
        return 2;
    }
    bcl_device_info_get(e.ctx, &e.dev);
    /* candidates and the default are measured on the built-in heuristic, as the entries will be
     * applied on top of it */
    bcl_set_tuning_path(e.ctx, "");

    char path[4096];
    struct stat st;
    const size_t olen = strlen(output);
    if (olen > 5 && !strcmp(output + olen - 5, ".json")) {
        snprintf(path, sizeof path, "%s", output);
    } else {
        if (stat(output, &st) != 0 && mkdir(output, 0777) != 0) {
            fprintf(stderr, "batchcl-tune: cannot create the directory %s: %s\n", output,
                    strerror(errno));
            return 2;
        }
        char name[600];
        char both[600];
        snprintf(both, sizeof both, "%s %s", e.dev.vendor, e.dev.name);
        slug(both, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s.json", output, name);
    }

    int exists = 0;
    cJSON *root = load_db_checked(path, &exists);
    if (!root && exists && !restart) {
        fprintf(stderr,
                "batchcl-tune: %s exists but cannot be read as JSON; pass --restart to replace it "
                "or choose another --output\n",
                path);
        return 2;
    }
    if (root) {
        const cJSON *d = cJSON_GetObjectItem(root, "device");
        const cJSON *nm = d ? cJSON_GetObjectItem(d, "name") : NULL;
        if (!cJSON_IsString(nm) || strcmp(nm->valuestring, e.dev.name) ||
            !cJSON_IsArray(cJSON_GetObjectItem(root, "entries"))) {
            if (!restart) {
                fprintf(stderr,
                        "batchcl-tune: %s holds results of another device or is not a tuning "
                        "file; pass --restart to replace it or choose another --output\n",
                        path);
                return 2;
            }
            cJSON_Delete(root);
            root = NULL;
        }
    }
    const int only_view = (plot || do_report) && !routines && !sizes_arg && !precision && !quick;
    if (only_view && !root) {
        fprintf(stderr, "batchcl-tune: %s holds no results to show\n", path);
        return 2;
    }
    if (!root) {
        root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "format", "batchcl-tuning");
        cJSON_AddNumberToObject(root, "version", 1);
        cJSON_AddItemToObject(root, "entries", cJSON_CreateArray());
    }
    /* the header describes the latest run */
    cJSON_DeleteItemFromObject(root, "device");
    cJSON_DeleteItemFromObject(root, "date");
    cJSON_DeleteItemFromObject(root, "tuner");
    char date[32];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    cJSON *entries = cJSON_DetachItemFromObject(root, "entries");
    cJSON_AddItemToObject(root, "device", device_json(&e));
    cJSON_AddStringToObject(root, "date", date);
    cJSON *tuner = cJSON_CreateObject();
    cJSON_AddStringToObject(tuner, "version", bcl_version());
    cJSON_AddBoolToObject(tuner, "quick", quick);
    cJSON_AddNumberToObject(tuner, "repeats", e.reps);
    cJSON_AddItemToObject(root, "tuner", tuner);
    cJSON_AddItemToObject(root, "entries", entries);

    int rc = 0;
    if (!only_view) {
        /* the work: every (routine, precision, size) not in the file yet */
        typedef struct {
            int r, dbl, n;
        } task;
        task *tasks = xmalloc(sizeof *tasks * ROUTINES * 2 * MAX_SIZES);
        int ntasks = 0;
        progress pg = {hu_now(), 0, 0, isatty(2), 0};
        for (int r = 0; r < ROUTINES; ++r) {
            if (!wanted(routines, registry[r].name))
                continue;
            int sz[MAX_SIZES];
            const int nsz = nuser ? list(user_sizes, nuser, sz) : registry[r].sizes(&e, sz);
            for (int dbl = 0; dbl < 2; ++dbl) {
                if ((precision && !strchr(precision, dbl ? 'd' : 's')) || (dbl && !e.dev.has_fp64))
                    continue;
                for (int i = 0; i < nsz; ++i) {
                    cJSON *old = find_entry(entries, registry[r].name, dbl, sz[i]);
                    /* resumed: tuned by an earlier run of the same kind (a --quick entry does
                     * not count for a full run, nor the other way round) */
                    if (old && !restart &&
                        cJSON_IsTrue(cJSON_GetObjectItem(old, "quick")) == (quick != 0))
                        continue;
                    candidate c[MAX_CANDIDATES];
                    pg.total += registry[r].candidates(&e, dbl, sz[i], c) +
                                (!strcmp(registry[r].name, "geev")
                                     ? (e.dev.is_gpu ? 6 : 0) +
                                           (quick ? 0 : geev_chunk_candidates(e.dev.is_gpu))
                                     : 0);
                    tasks[ntasks++] = (task){r, dbl, sz[i]};
                }
            }
        }
#ifdef BATCHCL_TUNE_CLBLAST
        /* the routines' candidates (pcyclic's GEMMs) timed with the clBLAST set the library will
         * hand over, where the file holds one and this run does not sweep it again (the sweep
         * measures clBLAST's own set first, which a set given to clBLAST would replace) */
        const int sweep_gemm = (!routines && !quick) || (routines && wanted(routines, "clblast"));
        for (int dbl = 0; dbl < 2 && ntasks; ++dbl) {
            const cJSON *set = cJSON_GetObjectItem(
                cJSON_GetObjectItem(cJSON_GetObjectItem(root, "clblast"), dbl ? "d" : "s"),
                "XgemmDirect");
            const int swept = sweep_gemm && (restart || !set) &&
                              !(precision && !strchr(precision, dbl ? 'd' : 's'));
            if (set && !swept)
                apply_gemm_set(&e, dbl, set);
        }
#endif
        fprintf(stderr, "batchcl-tune: %s (%s), %d sizes to tune into %s\n", e.dev.name,
                e.dev.vendor, ntasks, path);
        for (int t = 0; t < ntasks; ++t) {
            cJSON *entry = tune_one(&e, &registry[tasks[t].r], tasks[t].dbl, tasks[t].n, &pg);
            if (quick)
                cJSON_AddBoolToObject(entry, "quick", 1);
            /* an earlier result is replaced in place only now, so that a run cut short keeps it */
            cJSON *old = find_entry(entries, registry[tasks[t].r].name, tasks[t].dbl, tasks[t].n);
            if (old)
                cJSON_ReplaceItemViaPointer(entries, old, entry);
            else
                cJSON_AddItemToArray(entries, entry);
            if (!write_db(path, root)) {
                fprintf(stderr, "\nbatchcl-tune: writing %s failed: %s\n", path, strerror(errno));
                rc = 2;
                break;
            }
        }
        if (pg.tty)
            fputc('\n', stderr);
        free(tasks);
#ifdef BATCHCL_TUNE_CLBLAST
        /* clBLAST's GEMM last (it keeps the last set it is given); a full run, or when named */
        if (!rc && ((!routines && !quick) || (routines && wanted(routines, "clblast"))))
            for (int dbl = 0; dbl < 2; ++dbl) {
                if ((precision && !strchr(precision, dbl ? 'd' : 's')) || (dbl && !e.dev.has_fp64))
                    continue;
                cJSON *gemm = cJSON_GetObjectItem(root, "clblast");
                const char *key = dbl ? "d" : "s";
                if (gemm && cJSON_GetObjectItem(gemm, key) && !restart)
                    continue;
                int failed = 0;
                cJSON *found = tune_clblast(&e, dbl, &failed);
                if (failed) { /* an earlier set stays */
                    rc = 2;
                    continue;
                }
                if (!gemm)
                    cJSON_AddItemToObject(root, "clblast", gemm = cJSON_CreateObject());
                cJSON_DeleteItemFromObject(gemm, key);
                if (found)
                    cJSON_AddItemToObject(gemm, key, found);
                if (!cJSON_GetArraySize(gemm))
                    cJSON_DeleteItemFromObject(root, "clblast");
                if (!write_db(path, root)) {
                    fprintf(stderr, "batchcl-tune: writing %s failed: %s\n", path, strerror(errno));
                    rc = 2;
                    break;
                }
            }
#else
        if (routines && wanted(routines, "clblast"))
            fprintf(stderr, "batchcl-tune: clblast: this build has no clBLAST (Debian: "
                            "libclblast-dev); nothing tuned\n");
#endif
        if (pg.failures)
            rc = 3;
        if (!rc && !ntasks && !write_db(path, root))
            rc = 2;
        if (!rc)
            fprintf(stderr, "batchcl-tune: %d sizes tuned in %.1f s; %s holds %d entries\n", ntasks,
                    hu_now() - pg.start, path, cJSON_GetArraySize(entries));
    }
    if (do_report)
        print_report(root);
    if (plot && !plot_nstar(root, plot))
        rc = rc ? rc : 2;
    cJSON_Delete(root);
    bcl_destroy(e.ctx);
    return rc;
}
