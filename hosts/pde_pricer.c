/* pde_pricer: prices a whole book of options at once on an OpenCL device with batchcl's batched
 * tridiagonal solver (local volatility, θ-scheme on non-uniform grids, discrete dividends through
 * the forward / dividend-floor transform, barriers, American exercise). Also the validation
 * against closed forms and an independent CPU reference, and the benchmark. See pde_core.h. */
#include "pde_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *device, *book, *vol_file, *out, *write_book, *kernel;
    double vol;
    int dbl;
    size_t generate;
    uint64_t seed;
    int time, validate, bench;
    pde_config cfg;
} options;

static void usage(void)
{
    puts("usage: pde_pricer [options] BOOK.csv|BOOK.json   price a book: id,price,delta,gamma,info\n"
         "       pde_pricer --generate N [--write-book FILE] [options]\n"
         "                                        a random book of N contracts: written to FILE,\n"
         "                                        else priced (with --time: the time split)\n"
         "       pde_pricer --validate [options]  closed forms, convergence order, American puts\n"
         "                                        against an independent CPU reference; exit 1 on\n"
         "                                        errors above the documented tolerances\n"
         "       pde_pricer --bench [options]     10 000 contracts x 512 nodes x 1000 steps, timed\n"
         "options:\n"
         "  --device SPEC        gpu, cpu, P:D or a name substring (default BATCHCL_DEVICE, else\n"
         "                       the first GPU, else the CPU)\n"
         "  --precision s|d      float or double on the device (default d)\n"
         "  --m M                space nodes per contract (default 256; --bench 512)\n"
         "  --steps N            time steps = batched tridiagonal solves (default 256; --bench 1000)\n"
         "  --vol V              constant local volatility of the pure process (default 0.2)\n"
         "  --vol-surface FILE   local volatility zeta(t, x) grid, CSV: a line 'label,x1,x2,...',\n"
         "                       then lines 't,zeta(t,x1),zeta(t,x2),...'; bilinear, flat outside\n"
         "  --bc linear|dirichlet|neumann   far boundaries (default linear: d2V/dS2 = 0)\n"
         "  --rannacher K        implicit half-steps at the start (even, default 4; 0 = pure CN)\n"
         "  --american splitting|projection  early exercise: Ikonen-Toivanen splitting (default,\n"
         "                       second order observed) or projection max(V, payoff) (first order)\n"
         "  --width W            far boundaries at W standard deviations (default 5)\n"
         "  --concentration A    sinh grid concentration, fraction of the domain (default 0.1)\n"
         "  --time-refine B      time steps tau = T((1-B)u + B u^2): refined near maturity and\n"
         "                       after dividend dates (0 <= B < 1, default 0.25)\n"
         "  --chunk C            at most C contracts per device pass (default: as many as fit\n"
         "                       in half the device memory)\n"
         "  --out FILE           results to FILE (default stdout)\n"
         "  --seed S             generator seed (default 1)\n"
         "  --time               print the wall-time split\n"
         "  --kernel FILE        pde_pricer.cl to use (default BATCHCL_PDE_KERNEL, installed, source)\n"
         "book CSV columns (header optional, '#' comments):\n"
         "  id,type,style,spot,strike,maturity,rate,yield,lower_barrier,upper_barrier,dividends\n"
         "  type call|put, style european|american, barriers 0/empty = none (knock-out, no rebate),\n"
         "  dividends 't:cash:prop;t:cash:prop' (prop = proportional part, fraction)");
}

static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->vol = 0.2;
    o->dbl = 1;
    o->seed = 1;
    pde_config_default(&o->cfg);
    int m_set = 0, steps_set = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKES_VALUE                                                                              \
    if (!v) {                                                                                    \
        fprintf(stderr, "pde_pricer: %s needs a value\n", a);                                    \
        return -1;                                                                               \
    }                                                                                            \
    ++i
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            exit(0);
        } else if (!strcmp(a, "--device")) {
            TAKES_VALUE;
            o->device = v;
        } else if (!strcmp(a, "--precision")) {
            TAKES_VALUE;
            if (strcmp(v, "s") && strcmp(v, "d")) {
                fprintf(stderr, "pde_pricer: --precision s or d\n");
                return -1;
            }
            o->dbl = v[0] == 'd';
        } else if (!strcmp(a, "--m")) {
            TAKES_VALUE;
            o->cfg.m = atoi(v);
            m_set = 1;
        } else if (!strcmp(a, "--steps")) {
            TAKES_VALUE;
            o->cfg.steps = atoi(v);
            steps_set = 1;
        } else if (!strcmp(a, "--vol")) {
            TAKES_VALUE;
            o->vol = atof(v);
        } else if (!strcmp(a, "--vol-surface")) {
            TAKES_VALUE;
            o->vol_file = v;
        } else if (!strcmp(a, "--bc")) {
            TAKES_VALUE;
            o->cfg.far_bc = !strcmp(v, "dirichlet") ? PDE_BC_DIRICHLET
                            : !strcmp(v, "neumann") ? PDE_BC_NEUMANN
                            : !strcmp(v, "linear")  ? PDE_BC_LINEAR
                                                    : -1;
            if (o->cfg.far_bc < 0) {
                fprintf(stderr, "pde_pricer: --bc linear, dirichlet or neumann\n");
                return -1;
            }
        } else if (!strcmp(a, "--american")) {
            TAKES_VALUE;
            o->cfg.american = !strcmp(v, "splitting")    ? PDE_AMERICAN_SPLITTING
                              : !strcmp(v, "projection") ? PDE_AMERICAN_PROJECTION
                                                         : -1;
            if (o->cfg.american < 0) {
                fprintf(stderr, "pde_pricer: --american splitting or projection\n");
                return -1;
            }
        } else if (!strcmp(a, "--rannacher")) {
            TAKES_VALUE;
            o->cfg.rannacher = atoi(v);
        } else if (!strcmp(a, "--width")) {
            TAKES_VALUE;
            o->cfg.width = atof(v);
        } else if (!strcmp(a, "--time-refine")) {
            TAKES_VALUE;
            o->cfg.time_refine = atof(v);
        } else if (!strcmp(a, "--concentration")) {
            TAKES_VALUE;
            o->cfg.concentration = atof(v);
        } else if (!strcmp(a, "--chunk")) {
            TAKES_VALUE;
            o->cfg.chunk = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--out")) {
            TAKES_VALUE;
            o->out = v;
        } else if (!strcmp(a, "--write-book")) {
            TAKES_VALUE;
            o->write_book = v;
        } else if (!strcmp(a, "--kernel")) {
            TAKES_VALUE;
            o->kernel = v;
        } else if (!strcmp(a, "--generate")) {
            TAKES_VALUE;
            o->generate = strtoull(v, NULL, 10);
            if (o->generate == 0) {
                fprintf(stderr, "pde_pricer: --generate N with N > 0\n");
                return -1;
            }
        } else if (!strcmp(a, "--seed")) {
            TAKES_VALUE;
            o->seed = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--time")) {
            o->time = 1;
        } else if (!strcmp(a, "--validate")) {
            o->validate = 1;
        } else if (!strcmp(a, "--bench")) {
            o->bench = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "pde_pricer: unknown option %s\n", a);
            return -1;
        } else if (!o->book) {
            o->book = a;
        } else {
            fprintf(stderr, "pde_pricer: more than one book given (%s, %s)\n", o->book, a);
            return -1;
        }
#undef TAKES_VALUE
    }
    if (o->bench) {
        if (!o->generate)
            o->generate = 10000;
        if (!m_set)
            o->cfg.m = 512;
        if (!steps_set)
            o->cfg.steps = 1000;
        o->time = 1;
    }
    if (!o->validate && !o->generate && !o->book) {
        usage();
        return -1;
    }
    return 0;
}

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    bcl_context *ctx;
    pde_engine *engine;
    double build_seconds;
} session;

static int open_session(const options *o, session *s)
{
    char err[8192];
    memset(s, 0, sizeof *s);
    const bcl_status st = bcl_create(&s->ctx, o->device);
    if (st != BCL_SUCCESS) {
        fprintf(stderr, "pde_pricer: %s: %s\n", bcl_status_string(st), bcl_last_error(NULL));
        return -1;
    }
    const double t0 = wall_now();
    if (pde_engine_create(s->ctx, o->dbl, o->kernel, &s->engine, err, sizeof err)) {
        fprintf(stderr, "pde_pricer: %s\n", err);
        bcl_destroy(s->ctx);
        return -1;
    }
    s->build_seconds = wall_now() - t0;
    return 0;
}

static void close_session(session *s)
{
    pde_engine_destroy(s->engine);
    bcl_destroy(s->ctx);
}

/* ---- pricing a book ---- */

static void print_timing(const options *o, const session *s, const pde_contract *book, size_t n,
                         const pde_timing *t)
{
    size_t american = 0, barrier = 0, dividends = 0;
    for (size_t k = 0; k < n; ++k) {
        american += book[k].american != 0;
        barrier += book[k].lower_barrier > 0 || book[k].upper_barrier > 0;
        dividends += book[k].ndiv > 0;
    }
    bcl_device_info info;
    bcl_device_info_get(s->ctx, &info);
    fprintf(stderr,
            "pde_pricer: %zu contracts (%zu American, %zu with barriers, %zu with discrete "
            "dividends), m = %d nodes, %d time steps, %s, on %s\n",
            n, american, barrier, dividends, o->cfg.m, o->cfg.steps, o->dbl ? "double" : "float",
            info.name);
    fprintf(stderr, "  kernel build (pde_pricer.cl)      %9.3f s wall\n", s->build_seconds);
    fprintf(stderr, "  setup (host grids, buffers)       %9.3f s wall\n", t->setup);
    fprintf(stderr, "  transfers to the device           %9.3f s device\n", t->upload);
    fprintf(stderr, "  assembly kernels                  %9.3f s device\n", t->assembly);
    fprintf(stderr, "    step coefficients (per contract)  %9.3f s\n", t->coefficients);
    fprintf(stderr, "    systems and right-hand sides      %9.3f s\n", t->assemble);
    fprintf(stderr, "    early exercise                    %9.3f s\n", t->exercise);
    fprintf(stderr, "    payoff and gather                 %9.3f s\n", t->payoff);
    fprintf(stderr, "  tridiagonal solves (bcl_%cgtsv_cl) %9.3f s device\n", o->dbl ? 'd' : 's',
            t->solve);
    fprintf(stderr, "  transfers to the host             %9.3f s device\n", t->download);
    fprintf(stderr, "  total (pricing call)              %9.3f s wall, %ld launches, %.3g node-steps/s\n",
            t->total, t->launches, (double)n * o->cfg.m * o->cfg.steps / t->total);
}

static int price_book(const options *o, pde_contract *book, size_t n)
{
    char err[8192];
    pde_vol vol;
    if (o->vol_file ? pde_read_vol_csv(o->vol_file, &vol, err, sizeof err)
                    : pde_vol_constant(&vol, o->vol, err, sizeof err)) {
        fprintf(stderr, "pde_pricer: %s\n", err);
        return 2;
    }
    session s;
    if (open_session(o, &s)) {
        pde_vol_free(&vol);
        return 2;
    }
    pde_result *res = calloc(n ? n : 1, sizeof *res);
    pde_timing t;
    int rc = !res ? 2 : 0;
    if (rc == 0 && pde_price(s.engine, &o->cfg, &vol, book, n, res, &t, err, sizeof err)) {
        fprintf(stderr, "pde_pricer: %s\n", err);
        rc = 2;
    }
    if (rc == 0) {
        FILE *f = o->out ? fopen(o->out, "w") : (o->generate && !o->out ? NULL : stdout);
        if (o->out && !f) {
            fprintf(stderr, "pde_pricer: cannot write %s\n", o->out);
            rc = 2;
        }
        size_t failed = 0;
        for (size_t k = 0; k < n; ++k)
            failed += res[k].info != 0;
        if (f) {
            fprintf(f, "id,price,delta,gamma,info\n");
            for (size_t k = 0; k < n; ++k)
                fprintf(f, "%s,%.10g,%.10g,%.10g,%d\n", book[k].id, res[k].price, res[k].delta,
                        res[k].gamma, res[k].info);
            if (f != stdout)
                fclose(f);
        } else if (rc == 0) { /* a generated book without --out: a summary */
            double sum = 0;
            for (size_t k = 0; k < n; ++k)
                sum += res[k].info ? 0 : res[k].price;
            fprintf(stderr, "pde_pricer: priced %zu contracts, sum of prices %.6f\n", n, sum);
        }
        if (failed) {
            fprintf(stderr, "pde_pricer: %zu contracts failed (info != 0: the time step whose solve failed)\n", failed);
            rc = 1;
        }
        if (o->time)
            print_timing(o, &s, book, n, &t);
    }
    free(res);
    close_session(&s);
    pde_vol_free(&vol);
    return rc;
}

/* ---- validation ---- */

/* Documented tolerances (README, "PDE pricer"): absolute errors at the finest grid of each table
 * (spot 100), and the convergence order of the price between the two finest grids. */
typedef struct {
    double price, delta, gamma, order;
} tolerance;

static const tolerance tol_double = {5e-4, 1e-4, 2e-5, 1.7};
/* float: rounding of the stored values (about 1e-7 of the price per step), not the grid, limits
 * the accuracy at the finest grids; gamma suffers most (second differences) */
static const tolerance tol_float = {2e-3, 5e-4, 1e-3, 0};

static pde_contract vanilla(const char *id, int is_call, double K, double T, double r, double q)
{
    pde_contract c;
    pde_vanilla(&c, id, is_call, 100, K, T, r, q);
    return c;
}

static const int grid_m[] = {64, 128, 256, 512};
#define NGRIDS 4

/* Prices `book` at every grid size and compares with `exact`; prints a table with estimated
 * orders and returns the number of violations at the finest grid of what `checks` asks for. */
enum { CHECK_NONE = 0, CHECK_ERRORS = 1, CHECK_ORDER = 2 };
static int convergence_table(const char *title, session *s, const options *o, const pde_vol *vol,
                             const pde_contract *book, size_t n, const pde_result *exact, int checks)
{
    const tolerance *tol = o->dbl ? &tol_double : &tol_float;
    printf("\n%s\n", title);
    printf("  %5s %6s | %10s %5s | %10s %5s | %10s %5s\n", "m", "steps", "price err", "order",
           "delta err", "order", "gamma err", "order");
    pde_result *res = calloc(n, sizeof *res);
    double prev[3] = {0, 0, 0}, err[3] = {0, 0, 0}, order_price = 0;
    int bad = 0;
    char why[8192];
    for (int g = 0; g < NGRIDS; ++g) {
        pde_config cfg = o->cfg;
        cfg.m = grid_m[g];
        cfg.steps = grid_m[g] / 2;
        if (pde_price(s->engine, &cfg, vol, book, n, res, NULL, why, sizeof why)) {
            printf("  pricing failed: %s\n", why);
            free(res);
            return 1;
        }
        err[0] = err[1] = err[2] = 0;
        for (size_t k = 0; k < n; ++k) {
            err[0] = fmax(err[0], fabs(res[k].price - exact[k].price));
            err[1] = fmax(err[1], fabs(res[k].delta - exact[k].delta));
            err[2] = fmax(err[2], fabs(res[k].gamma - exact[k].gamma));
            if (res[k].info)
                err[0] = err[1] = err[2] = INFINITY;
        }
        printf("  %5d %6d", cfg.m, cfg.steps);
        for (int j = 0; j < 3; ++j) {
            const double order = g ? log2(prev[j] / err[j]) : NAN;
            if (j == 0)
                order_price = order;
            if (g)
                printf(" | %10.3e %5.2f", err[j], order);
            else
                printf(" | %10.3e %5s", err[j], "");
            prev[j] = err[j];
        }
        printf("\n");
    }
    const double limits[3] = {tol->price, tol->delta, tol->gamma};
    const char *names[3] = {"price", "delta", "gamma"};
    for (int j = 0; j < 3 && (checks & CHECK_ERRORS); ++j)
        if (!(err[j] <= limits[j])) {
            printf("  FAIL: %s error %.3e above the tolerance %.1e\n", names[j], err[j], limits[j]);
            ++bad;
        }
    if ((checks & CHECK_ORDER) && tol->order > 0 && !(order_price >= tol->order)) {
        printf("  FAIL: price convergence order %.2f below %.1f\n", order_price, tol->order);
        ++bad;
    }
    free(res);
    return bad;
}

static int validate(const options *o)
{
    char err[8192];
    session s;
    if (open_session(o, &s))
        return 2;
    pde_vol vol;
    pde_vol_constant(&vol, 0.2, err, sizeof err);
    const double zeta = 0.2;
    int bad = 0;
    const double strikes[5] = {80, 90, 100, 110, 120};
    pde_contract book[16];
    pde_result exact[16];
    printf("pde_pricer --validate: %s, spot 100, T = 1, r = 0.05, zeta = 0.2, steps = m/2, "
           "Rannacher %d half-steps, far boundary %s\n",
           o->dbl ? "double" : "float", o->cfg.rannacher,
           o->cfg.far_bc == PDE_BC_LINEAR ? "linear" : o->cfg.far_bc == PDE_BC_NEUMANN ? "neumann" : "dirichlet");
    printf("errors: max over the contracts of |pricer - reference|\n");

    /* (1) Black-Scholes, no dividends */
    size_t n = 0;
    for (int j = 0; j < 5; ++j)
        for (int call = 1; call >= 0; --call)
            book[n++] = vanilla(call ? "call" : "put", call, strikes[j], 1, 0.05, 0);
    for (size_t k = 0; k < n; ++k)
        pde_closed_form(&book[k], zeta, &exact[k]);
    bad += convergence_table("(1) European calls and puts, K = 80..120, vs Black-Scholes", &s, o, &vol,
                             book, n, exact, CHECK_ERRORS | CHECK_ORDER);

    /* (2a) continuous dividend yield */
    for (size_t k = 0; k < n; ++k) {
        book[k].yield = 0.03;
        pde_closed_form(&book[k], zeta, &exact[k]);
    }
    bad += convergence_table("(2a) with dividend yield q = 0.03, vs Black-Scholes-Merton", &s, o, &vol,
                             book, n, exact, CHECK_ERRORS | CHECK_ORDER);

    /* (2b) discrete cash and proportional dividends: exact under the model (Black on F_T - D_T) */
    for (size_t k = 0; k < n; ++k) {
        book[k].yield = 0;
        book[k].ndiv = 3;
        book[k].div_time[0] = 0.25, book[k].div_cash[0] = 2.0, book[k].div_prop[0] = 0;
        book[k].div_time[1] = 0.5, book[k].div_cash[1] = 0.0, book[k].div_prop[1] = 0.01;
        book[k].div_time[2] = 0.75, book[k].div_cash[2] = 2.0, book[k].div_prop[2] = 0;
        pde_closed_form(&book[k], zeta, &exact[k]);
    }
    bad += convergence_table("(2b) cash dividends 2 at t = 0.25, 0.75 and 1% at t = 0.5, vs the model's "
                             "closed form (Black on F_T - D_T)", &s, o, &vol, book, n, exact, CHECK_ERRORS | CHECK_ORDER);

    /* (3) American puts (and a call with a yield) vs the independent CPU reference */
    n = 0;
    for (int j = 1; j < 4; ++j)
        book[n++] = vanilla("am-put", 0, strikes[j], 1, 0.05, 0);
    book[n++] = vanilla("am-put-q", 0, 100, 1, 0.05, 0.02);
    book[n++] = vanilla("am-call-q", 1, 100, 1, 0.02, 0.06);
    const int ref_m = 2049, ref_steps = 4000;
    for (size_t k = 0; k < n; ++k) {
        book[k].american = 1;
        pde_reference(&book[k], zeta, ref_m, ref_steps, &exact[k]);
    }
    char title[256];
    snprintf(title, sizeof title,
             "(3) American puts K = 90, 100, 110 (and a put with q = 0.02, a call with q = 0.06) vs "
             "the CPU reference (log-spot CN, penalty, LAPACK dgtsv, m = %d, %d steps)", ref_m, ref_steps);
    bad += convergence_table(title, &s, o, &vol, book, n, exact, CHECK_ERRORS);
    double ref_change = 0; /* the reference's own accuracy: against half its resolution */
    for (size_t k = 0; k < n; ++k) {
        pde_result coarse;
        pde_reference(&book[k], zeta, ref_m / 2 + 1, ref_steps / 2, &coarse);
        ref_change = fmax(ref_change, fabs(coarse.price - exact[k].price));
        printf("  reference %-9s K = %5.1f: price %.6f delta %.6f gamma %.6f\n", book[k].id,
               book[k].strike, exact[k].price, exact[k].delta, exact[k].gamma);
    }
    printf("  the reference moves by %.1e (price) from m = %d, %d steps to m = %d, %d steps\n",
           ref_change, ref_m / 2 + 1, ref_steps / 2, ref_m, ref_steps);
    if (o->cfg.american == PDE_AMERICAN_SPLITTING) {
        /* the plain projection, for comparison (first order in time; no tolerance) */
        options projection = *o;
        projection.cfg.american = PDE_AMERICAN_PROJECTION;
        convergence_table("(3b) the same with early exercise by projection max(V, payoff) after each "
                          "step instead of the splitting (first order in time; not checked)",
                          &s, &projection, &vol, book, n, exact, CHECK_NONE);
    }

    /* (4) barriers vs the knock-out closed forms */
    n = 0;
    book[n] = vanilla("do-call", 1, 100, 1, 0.05, 0.02);
    book[n++].lower_barrier = 85;
    book[n] = vanilla("uo-put", 0, 100, 1, 0.05, 0.02);
    book[n++].upper_barrier = 115;
    book[n] = vanilla("uo-call", 1, 90, 1, 0.05, 0.02);
    book[n++].upper_barrier = 130;
    book[n] = vanilla("do-put", 0, 110, 1, 0.05, 0.02);
    book[n++].lower_barrier = 80;
    for (size_t k = 0; k < n; ++k)
        pde_closed_form(&book[k], zeta, &exact[k]);
    bad += convergence_table("(4) knock-out barriers (down-and-out call L = 85, up-and-out put U = 115, "
                             "up-and-out call U = 130, down-and-out put L = 80; q = 0.02) vs closed forms",
                             &s, o, &vol, book, n, exact, CHECK_ERRORS);

    pde_vol_free(&vol);
    close_session(&s);
    printf("\n%s: %d check%s failed\n", bad ? "FAILED" : "passed", bad, bad == 1 ? "" : "s");
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_args(argc, argv, &o))
        return 2;
    if (o.validate)
        return validate(&o);
    pde_contract *book = NULL;
    size_t n = 0;
    char err[1024];
    if (o.generate) {
        n = o.generate;
        book = malloc(n * sizeof *book);
        if (!book) {
            fprintf(stderr, "pde_pricer: out of memory for %zu contracts\n", n);
            return 2;
        }
        pde_generate_book(n, o.seed, book);
        if (o.write_book) {
            FILE *f = fopen(o.write_book, "w");
            if (!f) {
                fprintf(stderr, "pde_pricer: cannot write %s\n", o.write_book);
                free(book);
                return 2;
            }
            pde_write_book_csv(f, book, n);
            fclose(f);
            free(book);
            return 0;
        }
    } else if (pde_read_book(o.book, &book, &n, err, sizeof err)) {
        fprintf(stderr, "pde_pricer: %s\n", err);
        return 2;
    }
    const int rc = price_book(&o, book, n);
    free(book);
    return rc;
}
