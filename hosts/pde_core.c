/* The batch PDE pricer's host side: per-contract space and time grids, the device buffers, and
 * the time loop that enqueues, per step, the coefficient and assembly kernels (pde_pricer.cl), one
 * batched tridiagonal solve over the whole book (bcl_?gtsv_cl) and the American projection, with
 * no host round trip until the values at the spot are gathered. */
#include "pde_core.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unistd.h>

#ifndef PDE_KERNEL_INSTALL_DIR
#define PDE_KERNEL_INSTALL_DIR ""
#endif
#ifndef PDE_KERNEL_SOURCE_DIR
#define PDE_KERNEL_SOURCE_DIR ""
#endif

enum { K_PAYOFF, K_PARAMS, K_ASSEMBLE, K_BOUNDARY, K_PROJECT, K_GATHER, K_COUNT };
static const char *const kernel_names[K_COUNT] = {"pde_payoff",   "pde_step_params", "pde_assemble",
                                                  "pde_boundary", "pde_project",     "pde_gather"};

/* Two builds of the kernels: for a constant volatility (the common case, and branch-free code
 * that CPU compilers vectorize) and, built when first needed, for a surface grid. */
typedef struct {
    cl_program program;
    cl_kernel kernel[K_COUNT];
} pde_variant;

struct pde_engine {
    bcl_context *ctx;
    int dbl;
    int rows; /* assembly: one work-item per contract row (CPUs) instead of one per node (GPUs) */
    char *source;
    pde_variant variant[2]; /* [0] constant volatility, [1] surface grid */
};

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void pde_config_default(pde_config *cfg)
{
    cfg->m = 256;
    cfg->steps = 256;
    cfg->rannacher = 4;
    cfg->far_bc = PDE_BC_LINEAR;
    cfg->width = 5.0;
    cfg->concentration = 0.1;
    cfg->time_refine = 0.25;
    cfg->american = PDE_AMERICAN_SPLITTING;
    cfg->chunk = 0;
}

/* ---- engine: kernel source and program ---- */

/* pde_layout.h (beside the kernel file) followed by the kernel file. */
static char *load_kernel_source(const char *file)
{
    char layout_path[4096];
    const char *slash = strrchr(file, '/');
    const int dir_len = slash ? (int)(slash - file) : 1;
    snprintf(layout_path, sizeof layout_path, "%.*s/pde_layout.h", dir_len, slash ? file : ".");
    size_t llen = 0, klen = 0;
    char *layout = pde_read_text(layout_path, &llen);
    char *body = layout ? pde_read_text(file, &klen) : NULL;
    char *source = body ? malloc(llen + klen + 2) : NULL;
    if (source) {
        memcpy(source, layout, llen);
        source[llen] = '\n';
        memcpy(source + llen + 1, body, klen + 1);
    }
    free(layout);
    free(body);
    return source;
}

static int build_variant(pde_engine *e, int grid, char *err, size_t cap)
{
    pde_variant *v = &e->variant[grid];
    if (v->program)
        return 0;
    cl_int status;
    const char *src = e->source;
    v->program = clCreateProgramWithSource(bcl_cl_context(e->ctx), 1, &src, NULL, &status);
    if (status != CL_SUCCESS) {
        v->program = NULL;
        return pde_fail(err, cap, "clCreateProgramWithSource failed (%d)", status);
    }
    cl_device_id dev = bcl_cl_device(e->ctx);
    char options[64];
    snprintf(options, sizeof options, "%s%s%s", e->dbl ? "-DPDE_DOUBLE" : "",
             grid ? " -DPDE_VOL_GRID" : "", e->rows ? " -DPDE_ROWS" : "");
    status = clBuildProgram(v->program, 1, &dev, options, NULL, NULL);
    if (status != CL_SUCCESS) {
        char log[8192] = "";
        clGetProgramBuildInfo(v->program, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        return pde_fail(err, cap, "building pde_pricer.cl (%s) failed (%d): %s", options, status, log);
    }
    for (int k = 0; k < K_COUNT; ++k) {
        v->kernel[k] = clCreateKernel(v->program, kernel_names[k], &status);
        if (status != CL_SUCCESS) {
            v->kernel[k] = NULL;
            return pde_fail(err, cap, "clCreateKernel(%s) failed (%d)", kernel_names[k], status);
        }
    }
    return 0;
}

int pde_engine_create(bcl_context *ctx, int dbl, const char *kernel_file, pde_engine **out,
                      char *err, size_t cap)
{
    *out = NULL;
    if (!ctx)
        return pde_fail(err, cap, "no batchcl context");
    bcl_device_info info;
    if (bcl_device_info_get(ctx, &info) != BCL_SUCCESS)
        return pde_fail(err, cap, "device information: %s", bcl_last_error(ctx));
    if (dbl && !info.has_fp64)
        return pde_fail(err, cap, "device %s has no double precision; use --precision s", info.name);
    /* the caller's file, else $BATCHCL_PDE_KERNEL, share/batchcl/hosts beside the executable's
     * bin/ (a moved installation), the configured installation, the source tree */
    char candidates[4][2048] = {"", "", "", ""};
    const char *env = getenv("BATCHCL_PDE_KERNEL");
    if (kernel_file || (env && *env)) {
        snprintf(candidates[0], sizeof candidates[0], "%s", kernel_file ? kernel_file : env);
    } else {
        char exe[1024];
        const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (len > 0) {
            exe[len] = 0;
            char *slash = strrchr(exe, '/');
            if (slash) {
                *slash = 0;
                snprintf(candidates[1], sizeof candidates[1], "%s/../share/batchcl/hosts/pde_pricer.cl", exe);
            }
        }
        if (*PDE_KERNEL_INSTALL_DIR)
            snprintf(candidates[2], sizeof candidates[2], "%s/pde_pricer.cl", PDE_KERNEL_INSTALL_DIR);
        if (*PDE_KERNEL_SOURCE_DIR)
            snprintf(candidates[3], sizeof candidates[3], "%s/pde_pricer.cl", PDE_KERNEL_SOURCE_DIR);
    }
    char *source = NULL;
    char tried[8192] = "";
    for (int i = 0; i < 4 && !source; ++i) {
        if (!candidates[i][0])
            continue;
        source = load_kernel_source(candidates[i]);
        if (!source) { /* 4 names of under 2048 characters fit */
            if (tried[0])
                strcat(tried, ", ");
            strcat(tried, candidates[i]);
        }
    }
    if (!source)
        return pde_fail(err, cap,
                    "pde_pricer.cl (with pde_layout.h beside it) not found; tried: %s (set "
                    "BATCHCL_PDE_KERNEL to the file)",
                    tried[0] ? tried : "nothing");
    pde_engine *e = calloc(1, sizeof *e);
    if (!e) {
        free(source);
        return pde_fail(err, cap, "out of host memory");
    }
    e->ctx = ctx;
    e->dbl = dbl;
    e->source = source;
    /* the per-node assembly coalesces on GPUs; on CPUs a loop over a row vectorizes.
     * BATCHCL_PDE_ASSEMBLY=rows|nodes overrides (experiments) */
    const char *how = getenv("BATCHCL_PDE_ASSEMBLY");
    e->rows = how && !strcmp(how, "rows") ? 1 : how && !strcmp(how, "nodes") ? 0 : !info.is_gpu;
    if (build_variant(e, 0, err, cap)) {
        pde_engine_destroy(e);
        return -1;
    }
    *out = e;
    return 0;
}

void pde_engine_destroy(pde_engine *e)
{
    if (!e)
        return;
    for (int v = 0; v < 2; ++v) {
        for (int k = 0; k < K_COUNT; ++k)
            if (e->variant[v].kernel[k])
                clReleaseKernel(e->variant[v].kernel[k]);
        if (e->variant[v].program)
            clReleaseProgram(e->variant[v].program);
    }
    free(e->source);
    free(e);
}

/* ---- grids ---- */

/* Cumulative node density of the sinh-type grid: Σ α asinh((z - c_j) / α) over the centers
 * (one center is the classic sinh grid, dense at the center; none: uniform). */
static double grid_phi(const double *centers, int nc, double alpha, double z)
{
    if (nc == 0)
        return z;
    double s = 0;
    for (int j = 0; j < nc; ++j)
        s += alpha * asinh((z - centers[j]) / alpha);
    return s;
}

static double grid_dphi(const double *centers, int nc, double alpha, double z)
{
    if (nc == 0)
        return 1;
    double s = 0;
    for (int j = 0; j < nc; ++j) {
        const double u = (z - centers[j]) / alpha;
        s += 1 / sqrt(1 + u * u);
    }
    return s;
}

/* z in [lo, hi] with grid_phi(z) = target (phi is increasing): Newton, bisection as safeguard. */
static double grid_invert(const double *centers, int nc, double alpha, double target, double lo,
                          double hi)
{
    if (nc == 1)
        return fmin(hi, fmax(lo, centers[0] + alpha * sinh(target / alpha)));
    /* one Newton step from the bracket's low end (the previous node) starts close */
    double z = lo + (target - grid_phi(centers, nc, alpha, lo)) / grid_dphi(centers, nc, alpha, lo);
    if (!(z > lo && z < hi))
        z = 0.5 * (lo + hi);
    for (int it = 0; it < 200; ++it) {
        const double f = grid_phi(centers, nc, alpha, z) - target;
        if (f > 0)
            hi = z;
        else
            lo = z;
        double next = z - f / grid_dphi(centers, nc, alpha, z);
        if (fabs(next - z) <= 1e-14 * fabs(z) || hi - lo <= 1e-14 * fabs(z))
            return next;
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        z = next;
    }
    return z;
}

/* m nodes from zlo to zhi, dense at the centers, with the spot zs exactly on an interior node:
 * uniform in grid_phi on each side of the spot. */
static void space_grid(int m, double zlo, double zhi, const double *centers, int nc, double alpha,
                       double zs, double *z, int *spot_node)
{
    const double plo = grid_phi(centers, nc, alpha, zlo), phi_hi = grid_phi(centers, nc, alpha, zhi);
    const double ps = grid_phi(centers, nc, alpha, zs);
    long j0 = lround((ps - plo) / (phi_hi - plo) * (m - 1));
    if (j0 < 1)
        j0 = 1;
    if (j0 > m - 2)
        j0 = m - 2;
    z[0] = zlo;
    for (int j = 1; j < m - 1; ++j) {
        if (j == j0) {
            z[j] = zs;
            continue;
        }
        const double target = j < j0 ? plo + (ps - plo) * j / (double)j0
                                     : ps + (phi_hi - ps) * (j - j0) / (double)(m - 1 - j0);
        z[j] = grid_invert(centers, nc, alpha, target, j < j0 ? z[j - 1] : zs, zhi);
    }
    z[m - 1] = zhi;
    *spot_node = (int)j0;
}

/* Time nodes t_0 = T > t_1 > ... > t_N = 0 (backward in time), with every dividend date inside
 * (0, T) on a node. Segments between dividend dates get steps in proportion to their length and
 * are refined at their start (maturity, and just after each dividend date going backward):
 * τ = τa + L ((1 - β) u + β u²). The first rannacher/2 steps are halved and fully implicit;
 * American contracts also take 2 implicit steps after each dividend date (the exercise value
 * jumps there). */
static int time_grid(const pde_config *cfg, const pde_contract *c, const double *div_time,
                     int ndiv, double *t, unsigned char *implicit_step, char *err, size_t cap)
{
    const double T = c->maturity;
    const int N = cfg->steps, half = cfg->rannacher / 2;
    double bounds[PDE_MAXDIV + 2]; /* segment ends in calendar time, descending */
    int nseg = 0;
    bounds[0] = T;
    for (int j = ndiv - 1; j >= 0; --j)
        if (div_time[j] > 0 && div_time[j] < T && div_time[j] < bounds[nseg])
            bounds[++nseg] = div_time[j];
    bounds[++nseg] = 0;
    const int nominal = N - half;
    if (nominal < nseg + half)
        return pde_fail(err, cap, "%d time steps are too few for %d dividend dates and %d Rannacher "
                    "half-steps", N, nseg - 1, cfg->rannacher);
    int count[PDE_MAXDIV + 1], total = 0;
    for (int s = 0; s < nseg; ++s) {
        const int least = s == 0 ? half + 1 : 1;
        count[s] = (int)floor(nominal * (bounds[s] - bounds[s + 1]) / T);
        if (count[s] < least)
            count[s] = least;
        total += count[s];
    }
    while (total != nominal) { /* give to (take from) the segment with the longest (shortest) steps */
        int best = -1;
        double best_len = 0;
        for (int s = 0; s < nseg; ++s) {
            const double len = (bounds[s] - bounds[s + 1]) / count[s];
            const int least = s == 0 ? half + 1 : 1;
            if (total < nominal ? (best < 0 || len > best_len)
                                : (count[s] > least && (best < 0 || len < best_len))) {
                best = s;
                best_len = len;
            }
        }
        count[best] += total < nominal ? 1 : -1;
        total += total < nominal ? 1 : -1;
    }
    const double beta = cfg->time_refine;
    int n = 0;
    t[0] = T;
    for (int s = 0; s < nseg; ++s) {
        const double a = bounds[s], len = bounds[s] - bounds[s + 1];
        for (int j = 1; j <= count[s]; ++j) {
            const double u = (double)j / count[s];
            const double next = j == count[s] ? bounds[s + 1] : a - len * ((1 - beta) * u + beta * u * u);
            const int split = s == 0 && j <= half;
            if (split) {
                t[n + 1] = 0.5 * (t[n] + next);
                implicit_step[n] = 1;
                ++n;
            }
            t[n + 1] = next;
            implicit_step[n] = split || (s > 0 && c->american && j <= 2);
            ++n;
        }
    }
    return n == N ? 0 : pde_fail(err, cap, "internal error: time grid has %d steps, not %d", n, N);
}

/* ---- per-contract setup ---- */

typedef struct {
    double *z, *tgrid, *con, *div, *spot_z, *dzds, *df0;
    unsigned char *implicit_step;
    int *flags, *spot_node;
} host_book;

static double vol_max(const pde_vol *v)
{
    double s = 0;
    for (int i = 0; i < v->nt * v->nx; ++i)
        s = fmax(s, v->zeta[i]);
    return s;
}

static int setup_contract(const pde_config *cfg, double zeta_max, const pde_contract *c,
                          host_book *h, size_t k, char *err, size_t cap)
{
    const int m = cfg->m, N = cfg->steps;
    const double mu = c->rate - c->yield, T = c->maturity, S0 = c->spot, K = c->strike;
    pde_dividend_terms dt;
    pde_dividend_terms_get(c, &dt);
    const double K0 = dt.K0, RT = dt.RT, AT = dt.AT;
    double *div = h->div + k * PDE_MAXDIV * 3;
    for (int j = 0; j < dt.ndiv; ++j) {
        div[3 * j] = dt.time[j];
        div[3 * j + 1] = dt.scaled_cash[j];
        div[3 * j + 2] = dt.keep[j];
    }
    if (K0 <= 0)
        return pde_fail(err, cap, "the cash dividends are worth more than the spot");
    const int has_barrier = c->lower_barrier > 0 || c->upper_barrier > 0;
    const double bref = c->upper_barrier > 0 ? c->upper_barrier : c->lower_barrier;
    const double c0 = has_barrier ? S0 / bref : 1, g = has_barrier ? mu : 0;
    double *con = h->con + k * PDE_CN;
    con[PDE_C_STRIKE] = K;
    con[PDE_C_PHI] = c->is_call ? 1 : -1;
    con[PDE_C_RATE] = c->rate;
    con[PDE_C_GROWTH] = mu;
    con[PDE_C_MATURITY] = T;
    con[PDE_C_K0] = K0;
    con[PDE_C_SCALE0] = c0;
    con[PDE_C_SCALE_RATE] = g;
    int *flags = h->flags + k * PDE_FN;
    flags[PDE_F_LOWER] = c->lower_barrier > 0 ? PDE_BC_BARRIER : cfg->far_bc;
    flags[PDE_F_UPPER] = c->upper_barrier > 0 ? PDE_BC_BARRIER : cfg->far_bc;
    flags[PDE_F_AMERICAN] = c->american;
    flags[PDE_F_NDIV] = c->ndiv;

    /* domain: width standard deviations of log X around the spot and the strike */
    const double W = cfg->width * zeta_max * sqrt(T);
    double zlo, zhi, zk, centers[3];
    int nc = 0;
    if (!has_barrier) {
        const double xk = (K - RT * AT) / (RT * K0); /* the strike in x at maturity */
        const double mid = xk > 0 ? xk : 1;
        zlo = fmin(1, mid) * exp(-W);
        zhi = fmax(1, mid) * exp(W);
        zk = xk;
    } else {
        const double FT = S0 * exp(mu * T);
        zlo = fmin(fmin(S0, FT), K) * exp(-W) / bref;
        zhi = fmax(fmax(S0, FT), K) * exp(W) / bref;
        if (c->lower_barrier > 0)
            zlo = c->lower_barrier / bref;
        if (c->upper_barrier > 0)
            zhi = c->upper_barrier / bref;
        zk = K / bref;
        if (c->lower_barrier > 0)
            centers[nc++] = zlo;
        if (c->upper_barrier > 0)
            centers[nc++] = zhi;
    }
    if (zk > zlo && zk < zhi)
        centers[nc++] = zk;
    if (nc == 0)
        centers[nc++] = c0;
    const double alpha = cfg->concentration * (zhi - zlo);
    space_grid(m, zlo, zhi, centers, nc, alpha, c0, h->z + k * (size_t)m, h->spot_node + k);
    h->spot_z[k] = c0;
    h->dzds[k] = c0 / K0; /* z = c x, x = (S - D_0) / (F_0 - D_0), F_0 - D_0 = K0 */
    h->df0[k] = exp(-c->rate * T);
    return time_grid(cfg, c, dt.time, dt.ndiv, h->tgrid + k * (size_t)(N + 1),
                     h->implicit_step + k * (size_t)N, err, cap);
}

/* ---- device buffers and the time loop ---- */

/* what an event timed: transfers, the solve, or a kernel (EV_KERNEL + its K_ index) */
enum { EV_UPLOAD, EV_SOLVE, EV_DOWNLOAD, EV_KERNEL };

typedef struct {
    cl_event *ev;
    int *kind;
    size_t count, capacity;
} event_log;

static int log_event(event_log *log, cl_event ev, int kind)
{
    if (log->count == log->capacity) {
        const size_t cap = log->capacity ? 2 * log->capacity : 256;
        cl_event *e = realloc(log->ev, cap * sizeof *e);
        if (e)
            log->ev = e;
        int *k = e ? realloc(log->kind, cap * sizeof *k) : NULL;
        if (k)
            log->kind = k;
        if (!e || !k) {
            clReleaseEvent(ev);
            return -1;
        }
        log->capacity = cap;
    }
    log->ev[log->count] = ev;
    log->kind[log->count++] = kind;
    return 0;
}

static void harvest(event_log *log, pde_timing *t)
{
    for (size_t i = 0; i < log->count; ++i) {
        cl_ulong start = 0, end = 0;
        if (t && clGetEventProfilingInfo(log->ev[i], CL_PROFILING_COMMAND_START, sizeof start,
                                         &start, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(log->ev[i], CL_PROFILING_COMMAND_END, sizeof end, &end,
                                    NULL) == CL_SUCCESS &&
            end >= start) {
            const double s = 1e-9 * (double)(end - start);
            double *slot[] = {&t->upload,   &t->solve,    &t->download, &t->payoff, &t->coefficients,
                              &t->assemble, &t->assemble, &t->exercise, &t->payoff};
            *slot[log->kind[i]] += s;
            if (log->kind[i] >= EV_KERNEL)
                t->assembly += s;
        }
        clReleaseEvent(log->ev[i]);
    }
    free(log->ev);
    free(log->kind);
    memset(log, 0, sizeof *log);
}

typedef struct {
    pde_engine *e;
    cl_kernel *kernel; /* the variant for this volatility */
    cl_command_queue q;
    event_log log;
    size_t es;
    long launches;
    char *err;
    size_t cap;
} run_state;

static cl_mem make_buffer(run_state *r, size_t bytes, cl_int *status)
{
    return clCreateBuffer(bcl_cl_context(r->e->ctx), CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL,
                          status);
}

/* Upload n doubles as the working precision. */
static int upload_real(run_state *r, cl_mem buf, const double *src, size_t n, void *scratch)
{
    const void *data = src;
    if (!r->e->dbl) {
        float *f = scratch;
        for (size_t i = 0; i < n; ++i)
            f[i] = (float)src[i];
        data = f;
    }
    cl_event ev;
    /* blocking: the scratch space is reused by the next upload */
    const cl_int s = clEnqueueWriteBuffer(r->q, buf, CL_TRUE, 0, n * r->es, data, 0, NULL, &ev);
    if (s != CL_SUCCESS)
        return pde_fail(r->err, r->cap, "clEnqueueWriteBuffer failed (%d)", s);
    return log_event(&r->log, ev, EV_UPLOAD);
}

static int upload_bytes(run_state *r, cl_mem buf, const void *src, size_t bytes)
{
    cl_event ev;
    const cl_int s = clEnqueueWriteBuffer(r->q, buf, CL_TRUE, 0, bytes, src, 0, NULL, &ev);
    if (s != CL_SUCCESS)
        return pde_fail(r->err, r->cap, "clEnqueueWriteBuffer failed (%d)", s);
    return log_event(&r->log, ev, EV_UPLOAD);
}

static int launch(run_state *r, int which, size_t items, cl_event *out)
{
    const size_t group = 64, global = (items + group - 1) / group * group;
    cl_event ev;
    const cl_int s = clEnqueueNDRangeKernel(r->q, r->kernel[which], 1, NULL, &global, NULL, 0,
                                            NULL, &ev);
    if (s != CL_SUCCESS)
        return pde_fail(r->err, r->cap, "launching %s failed (%d)", kernel_names[which], s);
    ++r->launches;
    if (out) {
        clRetainEvent(ev);
        *out = ev;
    }
    return log_event(&r->log, ev, EV_KERNEL + which);
}

#define ARG(kern, idx, value) clSetKernelArg(r->kernel[kern], idx, sizeof(value), &(value))

enum { B_Z, B_TGRID, B_IMPLICIT, B_CON, B_FLAGS, B_DIV, B_STEP, B_G0, B_G1, B_DL, B_D, B_DU,
       B_INFO, B_FAILED, B_SPOT, B_GATHER, B_VT, B_VX, B_VZ, B_LAMBDA, B_COUNT };

/* Prices nb contracts set up in h, the first n_american of them American; result k goes to
 * res[order[k]]. */
static int price_chunk(run_state *r, const pde_config *cfg, const pde_vol *vol, const host_book *h,
                       size_t nb, size_t n_american, const size_t *order, pde_result *res,
                       double *setup_end)
{
    const int m = cfg->m, N = cfg->steps, dbl = r->e->dbl;
    const size_t es = r->es, mm = (size_t)m;
    const size_t sizes[B_COUNT] = {
        [B_Z] = nb * mm * es, [B_TGRID] = nb * (size_t)(N + 1) * es, [B_IMPLICIT] = nb * (size_t)N,
        [B_CON] = nb * PDE_CN * es, [B_FLAGS] = nb * PDE_FN * sizeof(int),
        [B_DIV] = nb * PDE_MAXDIV * 3 * es, [B_STEP] = nb * PDE_SN * es, [B_G0] = nb * mm * es,
        [B_G1] = nb * mm * es, [B_DL] = nb * mm * es, [B_D] = nb * mm * es, [B_DU] = nb * mm * es,
        [B_INFO] = nb * sizeof(int), [B_FAILED] = nb * sizeof(int), [B_SPOT] = nb * sizeof(int),
        [B_GATHER] = nb * PDE_GN * es, [B_VT] = (size_t)vol->nt * es, [B_VX] = (size_t)vol->nx * es,
        [B_VZ] = (size_t)vol->nt * vol->nx * es, [B_LAMBDA] = nb * mm * es};
    cl_mem buf[B_COUNT] = {0};
    int rc = 0;
    for (int b = 0; b < B_COUNT && rc == 0; ++b) {
        cl_int s;
        buf[b] = make_buffer(r, sizes[b], &s);
        if (s != CL_SUCCESS)
            rc = pde_fail(r->err, r->cap, "allocating %zu bytes of device memory failed (%d)", sizes[b], s);
    }
    size_t scratch_n = nb * (mm > (size_t)(N + 1) ? mm : (size_t)(N + 1));
    if ((size_t)vol->nt * vol->nx > scratch_n)
        scratch_n = (size_t)vol->nt * vol->nx;
    void *scratch = rc == 0 ? malloc(scratch_n * sizeof(float) + 1) : NULL;
    double *gathered = rc == 0 ? malloc(nb * PDE_GN * sizeof(double)) : NULL;
    int *info = rc == 0 ? malloc(nb * sizeof(int)) : NULL, *failed = rc == 0 ? malloc(nb * sizeof(int)) : NULL;
    if (rc == 0 && (!scratch || !gathered || !info || !failed))
        rc = pde_fail(r->err, r->cap, "out of host memory");
    if (rc == 0 && setup_end)
        *setup_end = wall_now();
    int *zeros = rc == 0 ? calloc(nb, sizeof(int)) : NULL;
    if (rc == 0 && !zeros)
        rc = pde_fail(r->err, r->cap, "out of host memory");
    if (rc == 0)
        rc = upload_real(r, buf[B_Z], h->z, nb * mm, scratch);
    if (rc == 0)
        rc = upload_real(r, buf[B_TGRID], h->tgrid, nb * (size_t)(N + 1), scratch);
    if (rc == 0)
        rc = upload_real(r, buf[B_CON], h->con, nb * PDE_CN, scratch);
    if (rc == 0)
        rc = upload_real(r, buf[B_DIV], h->div, nb * PDE_MAXDIV * 3, scratch);
    if (rc == 0)
        rc = upload_real(r, buf[B_VT], vol->t, (size_t)vol->nt, scratch);
    if (rc == 0)
        rc = upload_real(r, buf[B_VX], vol->x, (size_t)vol->nx, scratch);
    if (rc == 0)
        rc = upload_real(r, buf[B_VZ], vol->zeta, (size_t)vol->nt * vol->nx, scratch);
    if (rc == 0)
        rc = upload_bytes(r, buf[B_IMPLICIT], h->implicit_step, sizes[B_IMPLICIT]);
    if (rc == 0)
        rc = upload_bytes(r, buf[B_FLAGS], h->flags, sizes[B_FLAGS]);
    if (rc == 0)
        rc = upload_bytes(r, buf[B_SPOT], h->spot_node, sizes[B_SPOT]);
    if (rc == 0)
        rc = upload_bytes(r, buf[B_FAILED], zeros, sizes[B_FAILED]);
    if (rc == 0)
        rc = upload_bytes(r, buf[B_INFO], zeros, sizes[B_INFO]);
    free(zeros);
    const cl_uint ubatch = (cl_uint)nb, american_batch = (cl_uint)n_american;
    const cl_int nt = vol->nt, nx = vol->nx, nsteps = N;
    const cl_int splitting = cfg->american == PDE_AMERICAN_SPLITTING;
    cl_int e = CL_SUCCESS;
    if (rc == 0) { /* the exercise multipliers start at 0 (and stay 0 without early exercise) */
        cl_event ev;
        const cl_uchar zero = 0;
        e = clEnqueueFillBuffer(r->q, buf[B_LAMBDA], &zero, 1, 0, sizes[B_LAMBDA], 0, NULL, &ev);
        if (e != CL_SUCCESS || log_event(&r->log, ev, EV_UPLOAD))
            rc = pde_fail(r->err, r->cap, "clearing the exercise multipliers failed");
    }
    if (rc == 0) {
        e |= ARG(K_PAYOFF, 0, m);
        e |= ARG(K_PAYOFF, 1, ubatch);
        e |= ARG(K_PAYOFF, 2, buf[B_Z]);
        e |= ARG(K_PAYOFF, 3, buf[B_G0]);
        e |= ARG(K_PAYOFF, 4, buf[B_CON]);
        e |= ARG(K_PAYOFF, 5, buf[B_FLAGS]);
        e |= ARG(K_PAYOFF, 6, buf[B_DIV]);
        e |= ARG(K_PARAMS, 0, ubatch);
        e |= ARG(K_PARAMS, 1, nsteps);
        e |= ARG(K_PARAMS, 3, m);
        e |= ARG(K_PARAMS, 4, buf[B_TGRID]);
        e |= ARG(K_PARAMS, 5, buf[B_IMPLICIT]);
        e |= ARG(K_PARAMS, 6, buf[B_CON]);
        e |= ARG(K_PARAMS, 7, buf[B_FLAGS]);
        e |= ARG(K_PARAMS, 8, buf[B_DIV]);
        e |= ARG(K_PARAMS, 9, buf[B_Z]);
        e |= ARG(K_PARAMS, 10, buf[B_VT]);
        e |= ARG(K_PARAMS, 11, nt);
        e |= ARG(K_PARAMS, 12, buf[B_STEP]);
        e |= ARG(K_PARAMS, 13, buf[B_INFO]);
        e |= ARG(K_PARAMS, 14, buf[B_FAILED]);
        for (int kk = K_ASSEMBLE; kk <= K_BOUNDARY; ++kk) {
            e |= ARG(kk, 0, m);
            e |= ARG(kk, 1, ubatch);
            e |= ARG(kk, 2, buf[B_Z]);
            e |= ARG(kk, 4, buf[B_DL]);
            e |= ARG(kk, 5, buf[B_D]);
            e |= ARG(kk, 6, buf[B_DU]);
            e |= ARG(kk, 8, buf[B_CON]);
            e |= ARG(kk, 9, buf[B_FLAGS]);
            e |= ARG(kk, 10, buf[B_STEP]);
            e |= ARG(kk, 11, buf[B_VX]);
            e |= ARG(kk, 12, buf[B_VZ]);
            e |= ARG(kk, 13, nt);
            e |= ARG(kk, 14, nx);
            e |= ARG(kk, 15, buf[B_LAMBDA]);
        }
        e |= ARG(K_PROJECT, 0, m);
        e |= ARG(K_PROJECT, 1, american_batch);
        e |= ARG(K_PROJECT, 2, buf[B_Z]);
        e |= ARG(K_PROJECT, 4, buf[B_CON]);
        e |= ARG(K_PROJECT, 5, buf[B_FLAGS]);
        e |= ARG(K_PROJECT, 6, buf[B_STEP]);
        e |= ARG(K_PROJECT, 7, buf[B_LAMBDA]);
        e |= ARG(K_PROJECT, 8, splitting);
        e |= ARG(K_GATHER, 0, m);
        e |= ARG(K_GATHER, 1, ubatch);
        e |= ARG(K_GATHER, 3, buf[B_SPOT]);
        e |= ARG(K_GATHER, 4, buf[B_GATHER]);
        if (e != CL_SUCCESS)
            rc = pde_fail(r->err, r->cap, "setting the pricer's kernel arguments failed");
    }
    if (rc == 0)
        rc = launch(r, K_PAYOFF, nb * mm, NULL);
    /* G[cur] holds the values at t_step; assembly writes the right-hand side into G[1 - cur],
     * which the solve turns into the values at t_step+1 */
    int cur = 0;
    const cl_mem G[2] = {buf[B_G0], buf[B_G1]};
    for (cl_int step = 0; step < N && rc == 0; ++step) {
        cl_event assembled = NULL, solved = NULL;
        e = ARG(K_PARAMS, 2, step);
        e |= ARG(K_ASSEMBLE, 3, G[cur]);
        e |= ARG(K_ASSEMBLE, 7, G[1 - cur]);
        e |= ARG(K_BOUNDARY, 3, G[cur]);
        e |= ARG(K_BOUNDARY, 7, G[1 - cur]);
        e |= ARG(K_PROJECT, 3, G[1 - cur]);
        if (e != CL_SUCCESS) {
            rc = pde_fail(r->err, r->cap, "setting the pricer's kernel arguments failed");
            break;
        }
        rc = launch(r, K_PARAMS, nb, NULL);
        if (rc == 0)
            rc = launch(r, K_ASSEMBLE, r->e->rows ? nb : nb * mm, NULL);
        if (rc == 0)
            rc = launch(r, K_BOUNDARY, nb, &assembled);
        if (rc == 0) {
            const bcl_status s =
                dbl ? bcl_dgtsv_cl(r->e->ctx, m, 1, nb, BCL_LAYOUT_CONTIGUOUS, buf[B_DL], 0, buf[B_D], 0,
                                   buf[B_DU], 0, G[1 - cur], 0, buf[B_INFO], 0, 1, &assembled, &solved)
                    : bcl_sgtsv_cl(r->e->ctx, m, 1, nb, BCL_LAYOUT_CONTIGUOUS, buf[B_DL], 0, buf[B_D], 0,
                                   buf[B_DU], 0, G[1 - cur], 0, buf[B_INFO], 0, 1, &assembled, &solved);
            if (s != BCL_SUCCESS)
                rc = pde_fail(r->err, r->cap, "tridiagonal solve: %s: %s", bcl_status_string(s),
                          bcl_last_error(r->e->ctx));
            else {
                ++r->launches;
                rc = log_event(&r->log, solved, EV_SOLVE);
            }
        }
        if (assembled)
            clReleaseEvent(assembled);
        if (rc == 0 && n_american)
            rc = launch(r, K_PROJECT, r->e->rows ? n_american : n_american * mm, NULL);
        cur = 1 - cur;
        if (rc == 0 && step % 16 == 15)
            clFlush(r->q); /* start the device early on queued work */
    }
    if (rc == 0) {
        e = ARG(K_GATHER, 2, G[cur]);
        rc = e != CL_SUCCESS ? pde_fail(r->err, r->cap, "setting the gather kernel's arguments failed")
                             : launch(r, K_GATHER, nb, NULL);
    }
    if (rc == 0) {
        cl_event ev[3];
        void *dst = dbl ? (void *)gathered : scratch;
        cl_int s = clEnqueueReadBuffer(r->q, buf[B_GATHER], CL_FALSE, 0, sizes[B_GATHER], dst, 0, NULL, &ev[0]);
        s |= clEnqueueReadBuffer(r->q, buf[B_INFO], CL_FALSE, 0, sizes[B_INFO], info, 0, NULL, &ev[1]);
        s |= clEnqueueReadBuffer(r->q, buf[B_FAILED], CL_FALSE, 0, sizes[B_FAILED], failed, 0, NULL, &ev[2]);
        if (s != CL_SUCCESS)
            rc = pde_fail(r->err, r->cap, "reading the results failed");
        else
            for (int i = 0; i < 3; ++i)
                log_event(&r->log, ev[i], EV_DOWNLOAD);
        if (clFinish(r->q) != CL_SUCCESS && rc == 0)
            rc = pde_fail(r->err, r->cap, "the pricer's device work failed");
        if (rc == 0 && !dbl)
            for (size_t i = 0; i < nb * PDE_GN; ++i)
                gathered[i] = ((const float *)scratch)[i];
    } else {
        clFinish(r->q);
    }
    for (size_t k = 0; k < nb && rc == 0; ++k) {
        /* the quadratic through the three nodes around the spot, in z, then back to S */
        const double *zz = h->z + k * mm + h->spot_node[k] - 1, *G3 = gathered + k * PDE_GN;
        const double x = h->spot_z[k];
        double value = 0, d1 = 0, d2 = 0;
        for (int j = 0; j < 3; ++j) {
            const double a = zz[(j + 1) % 3], b = zz[(j + 2) % 3];
            const double den = (zz[j] - a) * (zz[j] - b);
            value += G3[j] * (x - a) * (x - b) / den;
            d1 += G3[j] * ((x - a) + (x - b)) / den;
            d2 += G3[j] * 2 / den;
        }
        const int bad = failed[k] ? failed[k] : info[k] ? N : 0;
        pde_result *out = &res[order[k]];
        out->info = bad;
        out->price = bad ? NAN : h->df0[k] * value;
        out->delta = bad ? NAN : h->df0[k] * d1 * h->dzds[k];
        out->gamma = bad ? NAN : h->df0[k] * d2 * h->dzds[k] * h->dzds[k];
    }
    for (int b = 0; b < B_COUNT; ++b)
        if (buf[b])
            clReleaseMemObject(buf[b]);
    free(scratch);
    free(gathered);
    free(info);
    free(failed);
    return rc;
}

static int check_config(const pde_engine *e, const pde_config *cfg, char *err, size_t cap)
{
    const int max_m = bcl_gtsv_max_m(e->ctx, e->dbl);
    if (cfg->m < 5 || cfg->m > max_m)
        return pde_fail(err, cap, "m = %d space nodes: must be from 5 to %d (the tridiagonal solver's "
                    "limit on this device)", cfg->m, max_m);
    if (cfg->rannacher < 0 || cfg->rannacher % 2)
        return pde_fail(err, cap, "Rannacher half-steps = %d: must be even and >= 0", cfg->rannacher);
    if (cfg->steps < cfg->rannacher / 2 + 1)
        return pde_fail(err, cap, "%d time steps: need at least %d with %d Rannacher half-steps",
                    cfg->steps, cfg->rannacher / 2 + 1, cfg->rannacher);
    if (cfg->american != PDE_AMERICAN_SPLITTING && cfg->american != PDE_AMERICAN_PROJECTION)
        return pde_fail(err, cap, "unknown early-exercise method %d", cfg->american);
    if (cfg->far_bc != PDE_BC_DIRICHLET && cfg->far_bc != PDE_BC_NEUMANN && cfg->far_bc != PDE_BC_LINEAR)
        return pde_fail(err, cap, "unknown far boundary condition %d", cfg->far_bc);
    if (!(cfg->width > 0) || !(cfg->concentration > 0) || !(cfg->time_refine >= 0 && cfg->time_refine < 1))
        return pde_fail(err, cap, "grid parameters: width > 0, concentration > 0, 0 <= time refinement < 1");
    return 0;
}

static int check_vol(const pde_vol *v, char *err, size_t cap)
{
    if (!v || v->nt < 1 || v->nx < 1 || !v->t || !v->x || !v->zeta)
        return pde_fail(err, cap, "no volatility surface");
    for (int i = 0; i < v->nt * v->nx; ++i)
        if (!(v->zeta[i] > 0) || !isfinite(v->zeta[i]))
            return pde_fail(err, cap, "volatility %g at surface point %d: must be positive and finite",
                        v->zeta[i], i);
    for (int i = 1; i < v->nt; ++i)
        if (!(v->t[i] > v->t[i - 1]))
            return pde_fail(err, cap, "volatility surface times must increase");
    for (int i = 1; i < v->nx; ++i)
        if (!(v->x[i] > v->x[i - 1]))
            return pde_fail(err, cap, "volatility surface x points must increase");
    return 0;
}

int pde_price(pde_engine *e, const pde_config *cfg, const pde_vol *vol, const pde_contract *book,
              size_t n, pde_result *res, pde_timing *timing, char *err, size_t cap)
{
    const double start = wall_now();
    if (timing)
        memset(timing, 0, sizeof *timing);
    if (!e || !cfg || !book || !res)
        return pde_fail(err, cap, "pde_price: missing argument");
    if (check_config(e, cfg, err, cap) || check_vol(vol, err, cap))
        return -1;
    char why[256];
    for (size_t k = 0; k < n; ++k)
        if (pde_check_contract(&book[k], why, sizeof why))
            return pde_fail(err, cap, "contract %zu (%s): %s", k + 1, book[k].id, why);
    if (n == 0)
        return 0;
    const int m = cfg->m, N = cfg->steps;
    const int grid = vol->nt > 1 || vol->nx > 1;
    if (build_variant(e, grid, err, cap))
        return -1;
    run_state r = {e, e->variant[grid].kernel, bcl_cl_queue(e->ctx), {0},
                   e->dbl ? sizeof(double) : sizeof(float), 0, err, cap};
    bcl_device_info info;
    bcl_device_info_get(e->ctx, &info);
    /* contracts per chunk: device arrays within half the memory and the allocation limit */
    const size_t per = r.es * ((size_t)7 * m + (size_t)N + 1 + PDE_SN + PDE_CN + 3 * PDE_MAXDIV + PDE_GN) +
                       (size_t)N + sizeof(int) * (PDE_FN + 3);
    const size_t largest = r.es * (size_t)(m > N + 1 ? m : N + 1);
    size_t chunk = (size_t)(info.global_mem_bytes / 2) / per;
    if (chunk > info.max_alloc_bytes / largest)
        chunk = info.max_alloc_bytes / largest;
    if (chunk > 1u << 24)
        chunk = 1u << 24;
    if (chunk == 0)
        return pde_fail(err, cap, "one contract's arrays do not fit the device");
    if (cfg->chunk && chunk > cfg->chunk)
        chunk = cfg->chunk;
    if (chunk > n)
        chunk = n;
    host_book h;
    h.z = malloc(chunk * (size_t)m * sizeof(double));
    h.tgrid = malloc(chunk * (size_t)(N + 1) * sizeof(double));
    h.implicit_step = malloc(chunk * (size_t)N);
    h.con = malloc(chunk * PDE_CN * sizeof(double));
    h.div = calloc(chunk * PDE_MAXDIV * 3, sizeof(double));
    h.spot_z = malloc(chunk * sizeof(double));
    h.dzds = malloc(chunk * sizeof(double));
    h.df0 = malloc(chunk * sizeof(double));
    h.flags = malloc(chunk * PDE_FN * sizeof(int));
    h.spot_node = malloc(chunk * sizeof(int));
    int rc = 0;
    if (!h.z || !h.tgrid || !h.implicit_step || !h.con || !h.div || !h.spot_z || !h.dzds || !h.df0 ||
        !h.flags || !h.spot_node)
        rc = pde_fail(err, cap, "out of host memory for %zu contracts", chunk);
    /* American contracts first, so that the exercise kernel covers only them in every chunk */
    size_t *order = malloc(n * sizeof *order);
    if (!order && rc == 0)
        rc = pde_fail(err, cap, "out of host memory");
    size_t filled = 0;
    for (int pass = 1; pass >= 0 && order; --pass)
        for (size_t k = 0; k < n; ++k)
            if ((book[k].american != 0) == pass)
                order[filled++] = k;
    const double zeta_max = vol_max(vol);
    double setup = 0, mark = start;
    for (size_t first = 0; first < n && rc == 0; first += chunk) {
        const size_t nb = n - first < chunk ? n - first : chunk;
        size_t n_american = 0;
        for (size_t k = 0; k < nb && rc == 0; ++k) {
            const pde_contract *c = &book[order[first + k]];
            n_american += c->american != 0;
            if (setup_contract(cfg, zeta_max, c, &h, k, why, sizeof why))
                rc = pde_fail(err, cap, "contract %zu (%s): %s", order[first + k] + 1, c->id, why);
        }
        double setup_end = wall_now();
        if (rc == 0)
            rc = price_chunk(&r, cfg, vol, &h, nb, n_american, order + first, res, &setup_end);
        setup += setup_end - mark;
        harvest(&r.log, timing);
        mark = wall_now();
    }
    free(order);
    free(h.z);
    free(h.tgrid);
    free(h.implicit_step);
    free(h.con);
    free(h.div);
    free(h.spot_z);
    free(h.dzds);
    free(h.df0);
    free(h.flags);
    free(h.spot_node);
    if (timing) {
        timing->setup = setup;
        timing->total = wall_now() - start;
        timing->launches = r.launches;
    }
    return rc;
}
