/* cva_regression: the regressions of a nested Monte Carlo CVA (Abbas-Turki & Graillat 2016, §2;
 * symmetric-small-systems-abbas-turki-graillat-2016.txt).
 *
 * Black-Scholes, d independent assets S^i (volatility sigma, rate mu, S^i_0 = S0). For each outer
 * scenario l, M inner trajectories are simulated to the regression date t; the Longstaff-Schwartz
 * step regresses the discounted cash flow of an American-style basket put (strike K, next exercise
 * date T) on psi(S_t) = (1, S^1_t, ..., S^d_t), n = d + 1 unknowns:
 *     A_l = (1/M) sum_j psi(S^(j)) psi(S^(j))^T,   b_l = (1/M) sum_j psi(S^(j)) y_j.
 * With sigma sqrt(t) = 0.03 every S^i_t is close to 1, so the columns of psi are nearly collinear
 * with the constant: A_l is symmetric positive semi-definite on paper but badly conditioned, too
 * badly for single precision in part of the scenarios (the paper's Fig. 2).
 *
 * The program builds the L regressions in double, prints the distribution of their condition
 * numbers kappa_2 (and writes it as a PNG histogram), then solves them in the chosen precision with
 * the four methods of bcl_xsysvx (LDLT, HOUSEHOLDER_PCR, EIGEN, AUTO) and reports per method: the
 * failures, the scaled residuals the library returns, the error of the coefficients and of the
 * fitted continuation values against a double-precision LAPACK solve, the time, and the share AUTO
 * sent to the eigen-solve. The fitted-value error sqrt(d^T A d / beta^T A beta), d = beta - beta_ref,
 * is the relative RMS error of the continuation value psi^T beta over the inner paths: what decides
 * the exercise strategy, and what a truncated (pseudo-inverse) solve keeps small when the
 * coefficients themselves are ill-determined. */
#include "batchcl.h"
#include "hostutil.h"
#include "matgen.h"
#include "png.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *device, *png;
    int scenarios, inner, assets, dbl;
    double sigma, mu, t, T, strike, s0;
    unsigned long long seed;
} options;

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the q-quantile of v[0..count) (sorts a copy) */
static double quantile(const double *v, size_t count, double q)
{
    double *s = malloc(sizeof *s * count);
    memcpy(s, v, sizeof *s * count);
    qsort(s, count, sizeof *s, cmp_double);
    const double r = s[(size_t)(q * (double)(count - 1) + 0.5)];
    free(s);
    return r;
}

static void usage(void)
{
    puts("usage: cva_regression [options]\n"
         "  --device SPEC      gpu, cpu, P:D or a name substring (default: BATCHCL_DEVICE, else the\n"
         "                     first GPU, else the first CPU)\n"
         "  --scenarios L      outer scenarios = regressions (default 1000)\n"
         "  --inner M          inner trajectories per regression (default 300)\n"
         "  --assets d         Black-Scholes assets; n = d + 1 (default 29)\n"
         "  --sigma S --mu R --t T0 --maturity T1 --strike K --s0 X\n"
         "                     model (defaults 0.1, 0.1, 0.1, 0.2, S0 e^(mu T), 1)\n"
         "  --precision s|d    precision of the batched solves (default s, as in the paper)\n"
         "  --png FILE         histogram of log10 condition numbers (default cva_condition.png)\n"
         "  --seed N");
}

static options parse(int argc, char **argv)
{
    /* strike 0: at the money forward, S0 e^(mu T), so that about half the inner paths pay */
    options o = {NULL, "cva_condition.png", 1000, 300, 29, 0, 0.1, 0.1, 0.1, 0.2, 0.0, 1.0, 2016};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v && strcmp(a, "-h") && strcmp(a, "--help")) {
            fprintf(stderr, "cva_regression: option %s needs a value\n", a);
            exit(2);
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            exit(0);
        } else if (!strcmp(a, "--device"))
            o.device = argv[++i];
        else if (!strcmp(a, "--scenarios"))
            o.scenarios = atoi(argv[++i]);
        else if (!strcmp(a, "--inner"))
            o.inner = atoi(argv[++i]);
        else if (!strcmp(a, "--assets"))
            o.assets = atoi(argv[++i]);
        else if (!strcmp(a, "--sigma"))
            o.sigma = atof(argv[++i]);
        else if (!strcmp(a, "--mu"))
            o.mu = atof(argv[++i]);
        else if (!strcmp(a, "--t"))
            o.t = atof(argv[++i]);
        else if (!strcmp(a, "--maturity"))
            o.T = atof(argv[++i]);
        else if (!strcmp(a, "--strike"))
            o.strike = atof(argv[++i]);
        else if (!strcmp(a, "--s0"))
            o.s0 = atof(argv[++i]);
        else if (!strcmp(a, "--precision"))
            o.dbl = !strcmp(argv[++i], "d");
        else if (!strcmp(a, "--png"))
            o.png = argv[++i];
        else if (!strcmp(a, "--seed"))
            o.seed = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "cva_regression: unknown option %s\n", a);
            usage();
            exit(2);
        }
    }
    if (o.strike <= 0)
        o.strike = o.s0 * exp(o.mu * o.T);
    if (o.scenarios < 1 || o.inner < 1 || o.assets < 1 || o.assets > 63 || o.t <= 0 || o.T <= o.t) {
        fprintf(stderr, "cva_regression: need scenarios, inner >= 1, 1 <= assets <= 63, 0 < t < maturity\n");
        exit(2);
    }
    return o;
}

/* A_l and b_l of every scenario (column-major n x n, n), in double. */
static void build_regressions(const options *o, double *A, double *b)
{
    const int d = o->assets, n = d + 1, M = o->inner;
    const double drift1 = (o->mu - 0.5 * o->sigma * o->sigma) * o->t, vol1 = o->sigma * sqrt(o->t);
    const double dt2 = o->T - o->t, drift2 = (o->mu - 0.5 * o->sigma * o->sigma) * dt2,
                 vol2 = o->sigma * sqrt(dt2), discount = exp(-o->mu * dt2);
#pragma omp parallel for schedule(dynamic)
    for (int l = 0; l < o->scenarios; ++l) {
        mg_rng r;
        mg_seed(&r, o->seed * 1000003ULL + (unsigned long long)l);
        double psi[64], *Al = A + (size_t)l * n * n, *bl = b + (size_t)l * n;
        memset(Al, 0, sizeof *Al * (size_t)n * n);
        memset(bl, 0, sizeof *bl * (size_t)n);
        for (int j = 0; j < M; ++j) {
            psi[0] = 1;
            double basket = 0;
            for (int i = 0; i < d; ++i) {
                psi[i + 1] = o->s0 * exp(drift1 + vol1 * mg_normal(&r));
                basket += psi[i + 1] * exp(drift2 + vol2 * mg_normal(&r));
            }
            const double y = discount * fmax(o->strike - basket / d, 0.0);
            for (int c = 0; c < n; ++c) {
                bl[c] += psi[c] * y / M;
                for (int i = c; i < n; ++i)
                    Al[i + (size_t)c * n] += psi[i] * psi[c] / M;
            }
        }
        for (int c = 0; c < n; ++c) /* mirror: the library reads the lower triangle, LAPACK too */
            for (int i = c + 1; i < n; ++i)
                Al[c + (size_t)i * n] = Al[i + (size_t)c * n];
    }
}

/* kappa_2 from the eigenvalues (double): lambda_max / lambda_min, infinite when lambda_min <= 0 */
static void condition_numbers(int n, int L, const double *A, double *kappa, int *indefinite)
{
    int bad = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : bad)
    for (int l = 0; l < L; ++l) {
        double a[64 * 64], w[64], work[3 * 64 + 1];
        memcpy(a, A + (size_t)l * n * n, sizeof *a * (size_t)n * n);
        if (LAPACKE_dsyev_work(LAPACK_COL_MAJOR, 'N', 'L', n, a, n, w, work, 3 * n + 1) != 0) {
            kappa[l] = INFINITY;
            ++bad;
            continue;
        }
        const double top = fmax(fabs(w[0]), fabs(w[n - 1]));
        kappa[l] = w[0] > 0 ? top / w[0] : INFINITY;
        bad += w[0] <= 0;
    }
    *indefinite = bad;
}

/* beta_ref: Cholesky in double; Bunch-Kaufman if A_l is not numerically positive definite */
static void reference_solutions(int n, int L, const double *A, const double *b, double *beta)
{
#pragma omp parallel for schedule(dynamic)
    for (int l = 0; l < L; ++l) {
        double a[64 * 64], work[64 * 64];
        int ipiv[64];
        memcpy(a, A + (size_t)l * n * n, sizeof *a * (size_t)n * n);
        memcpy(beta + (size_t)l * n, b + (size_t)l * n, sizeof *beta * (size_t)n);
        if (LAPACKE_dposv_work(LAPACK_COL_MAJOR, 'L', n, 1, a, n, beta + (size_t)l * n, n) != 0) {
            memcpy(a, A + (size_t)l * n * n, sizeof *a * (size_t)n * n);
            memcpy(beta + (size_t)l * n, b + (size_t)l * n, sizeof *beta * (size_t)n);
            LAPACKE_dsysv_work(LAPACK_COL_MAJOR, 'L', n, 1, a, n, ipiv, beta + (size_t)l * n, n, work,
                               64 * 64);
        }
    }
}

/* the histogram of log10(kappa): 40 bins over an axis rounded to its tick step, printed and drawn */
static void histogram(const options *o, const double *kappa, int L, int n)
{
    double lo = INFINITY, hi = -INFINITY;
    int infinite = 0;
    for (int l = 0; l < L; ++l) {
        if (!isfinite(kappa[l])) {
            ++infinite;
            continue;
        }
        lo = fmin(lo, log10(kappa[l]));
        hi = fmax(hi, log10(kappa[l]));
    }
    if (!(lo <= hi)) {
        printf("  no finite condition number\n");
        return;
    }
    const double step = hi - lo >= 3 ? 1 : hi - lo >= 1.5 ? 0.5 : hi - lo >= 0.4 ? 0.2 : 0.1;
    const double first = floor(lo / step) * step, last = fmax(ceil(hi / step) * step, first + step);
    const int bins = 40;
    const double width = (last - first) / bins;
    int *count = calloc((size_t)bins, sizeof *count), top = 1;
    for (int l = 0; l < L; ++l)
        if (isfinite(kappa[l])) {
            int bin = (int)((log10(kappa[l]) - first) / width);
            bin = bin < 0 ? 0 : bin >= bins ? bins - 1 : bin;
            top = ++count[bin] > top ? count[bin] : top;
        }
    printf("  histogram of log10(kappa_2) (each # = %.3g regressions):\n", top / 50.0);
    for (int i = 0; i < bins; ++i) {
        if (!count[i] && (i == 0 || !count[i - 1]) && (i + 1 == bins || !count[i + 1]))
            continue; /* print the populated range and its edges only */
        printf("  [%6.3f, %6.3f) %5d ", first + i * width, first + (i + 1) * width, count[i]);
        for (int k = 0; k < (count[i] * 50 + top - 1) / top; ++k)
            putchar('#');
        putchar('\n');
    }
    if (infinite)
        printf("  not positive definite in double (kappa infinite): %d\n", infinite);

    /* the PNG: bars, ticks, the eigen-solve's truncation threshold 1e5 (orange) and the
     * single-precision limit 1/eps = 2^24 (red) where they fall on the axis */
    const int W = 900, H = 520, left = 70, right = 30, topm = 50, bottom = 70;
    png_canvas c;
    if (png_canvas_init(&c, W, H, 255, 255, 255) != 0) {
        free(count);
        return;
    }
    const int pw = W - left - right, ph = H - topm - bottom;
    const double px_per_decade = pw / (last - first);
    for (int i = 0; i < bins; ++i) {
        const int h = (int)((double)count[i] / top * (ph - 10));
        png_fill(&c, left + (int)(i * width * px_per_decade) + 1, topm + ph - h,
                 left + (int)((i + 1) * width * px_per_decade) - 1, topm + ph, 60, 110, 180);
    }
    const double marks[2] = {5.0, 24 * log10(2.0)};
    const unsigned char mark_rgb[2][3] = {{240, 150, 0}, {210, 30, 30}};
    for (int m = 0; m < 2; ++m)
        if (marks[m] >= first && marks[m] <= last) {
            const int x = left + (int)((marks[m] - first) * px_per_decade);
            png_fill(&c, x - 1, topm, x + 2, topm + ph, mark_rgb[m][0], mark_rgb[m][1], mark_rgb[m][2]);
        }
    png_fill(&c, left - 2, topm, left, topm + ph + 2, 0, 0, 0);
    png_fill(&c, left - 2, topm + ph, left + pw, topm + ph + 2, 0, 0, 0);
    char label[112];
    for (double v = first; v <= last + 1e-9; v += step) {
        const int x = left + (int)((v - first) * px_per_decade);
        png_fill(&c, x - 1, topm + ph, x + 1, topm + ph + 8, 0, 0, 0);
        snprintf(label, sizeof label, step < 1 ? "%.1f" : "%.0f", v);
        png_text(&c, x - 6 * (int)strlen(label), topm + ph + 14, 3, label, 0, 0, 0);
    }
    for (int k = 0; k <= 4; ++k) { /* counts on the vertical axis */
        const int v = top * k / 4, y = topm + ph - (int)((double)v / top * (ph - 10));
        png_fill(&c, left - 8, y - 1, left - 2, y + 1, 0, 0, 0);
        snprintf(label, sizeof label, "%d", v);
        png_text(&c, left - 12 - 8 * (int)strlen(label), y - 5, 2, label, 0, 0, 0);
    }
    snprintf(label, sizeof label, "LOG10 CONDITION NUMBER    N=%d  M=%d  L=%d", n, o->inner, o->scenarios);
    png_text(&c, left, H - 30, 3, label, 0, 0, 0);
    snprintf(label, sizeof label, "CVA REGRESSIONS  BLACK-SCHOLES D=%d  (ORANGE: 1E5  RED: 1/EPS = 1.7E7)",
             o->assets);
    png_text(&c, left, 16, 2, label, 0, 0, 0);
    if (png_write_rgb(o->png, W, H, c.rgb) == 0)
        printf("  wrote %s\n", o->png);
    else
        printf("  could not write %s\n", o->png);
    png_canvas_free(&c);
    free(count);
}

int main(int argc, char **argv)
{
    const options o = parse(argc, argv);
    const int n = o.assets + 1, L = o.scenarios, dbl = o.dbl;
    const size_t nn = (size_t)n * n, es = dbl ? 8 : 4;
    bcl_context *ctx = NULL;
    bcl_status s = bcl_create(&ctx, o.device);
    if (s != BCL_SUCCESS) {
        fprintf(stderr, "cva_regression: bcl_create: %s: %s\n", bcl_status_string(s), bcl_last_error(NULL));
        return 2;
    }
    bcl_device_info dev;
    bcl_device_info_get(ctx, &dev);
    printf("cva_regression on %s: Black-Scholes d = %d (sigma %g, mu %g, S0 %g), regression at t = %g "
           "on psi(S) = (1, S^1..S^%d), n = %d, M = %d inner paths, L = %d scenarios, %s precision\n",
           dev.name, o.assets, o.sigma, o.mu, o.s0, o.t, o.assets, n, o.inner, L, dbl ? "double" : "single");

    double *A = malloc(sizeof *A * nn * L), *b = malloc(sizeof *b * (size_t)n * L),
           *beta_ref = malloc(sizeof *beta_ref * (size_t)n * L), *kappa = malloc(sizeof *kappa * L);
    void *Aw = malloc(es * nn * L), *bw = malloc(es * (size_t)n * L), *X = malloc(es * (size_t)n * L),
         *res = malloc(es * L);
    int *info = malloc(sizeof *info * L), *path = malloc(sizeof *path * L);
    double *err_coef = malloc(sizeof *err_coef * L), *err_fit = malloc(sizeof *err_fit * L),
           *resd = malloc(sizeof *resd * L);
    if (!A || !b || !beta_ref || !kappa || !Aw || !bw || !X || !res || !info || !path || !err_coef ||
        !err_fit || !resd) {
        fprintf(stderr, "cva_regression: out of host memory\n");
        return 2;
    }
    double t0 = hu_now();
    build_regressions(&o, A, b);
    int indefinite = 0;
    condition_numbers(n, L, A, kappa, &indefinite);
    reference_solutions(n, L, A, b, beta_ref);
    double *bAb_ref = malloc(sizeof *bAb_ref * L); /* beta_ref^T A beta_ref: the fit's energy */
    for (int l = 0; l < L; ++l) {
        const double *Al = A + (size_t)l * nn, *br = beta_ref + (size_t)l * n;
        double e = 0;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                e += br[i] * Al[i + (size_t)j * n] * br[j];
        bAb_ref[l] = e;
    }
    printf("  built %d regressions and their double-precision references in %.2f s\n", L, hu_now() - t0);
    int above5 = 0, above24 = 0;
    for (int l = 0; l < L; ++l) {
        above5 += kappa[l] > 1e5;
        above24 += kappa[l] > 0x1p24;
    }
    printf("  kappa_2: min %.3g, median %.3g, 90%% %.3g, max %.3g; above 1e5 (the eigen-solve's "
           "threshold): %d, above 2^24 = 1/eps_single: %d, not positive definite in double: %d\n",
           quantile(kappa, (size_t)L, 0), quantile(kappa, (size_t)L, 0.5), quantile(kappa, (size_t)L, 0.9),
           quantile(kappa, (size_t)L, 1), above5, above24, indefinite);
    histogram(&o, kappa, L, n);

    for (size_t i = 0; i < nn * L; ++i)
        dbl ? (void)(((double *)Aw)[i] = A[i]) : (void)(((float *)Aw)[i] = (float)A[i]);
    for (size_t i = 0; i < (size_t)n * L; ++i)
        dbl ? (void)(((double *)bw)[i] = b[i]) : (void)(((float *)bw)[i] = (float)b[i]);

    /* the eigen-solve at the paper's threshold 1e5 and at 1e7 (bcl_params.eigen_threshold) */
    static const struct {
        const char *name;
        bcl_method m;
        double threshold;
    } methods[] = {{"LDLT", BCL_LDLT, 0},
                   {"HOUSEHOLDER_PCR", BCL_HOUSEHOLDER_PCR, 0},
                   {"EIGEN", BCL_EIGEN, 0},
                   {"EIGEN 1e7", BCL_EIGEN, 1e7},
                   {"AUTO", BCL_AUTO, 0}};
    printf("\n  errors against the double-precision solve: coef = ||beta - beta_ref|| / ||beta_ref||, fit = "
           "relative RMS error of the fitted continuation values; residual = the library's "
           "||A x - b|| / (||A|| ||x|| n eps)\n");
    printf("  %-16s %8s %7s %10s %10s %10s %10s %10s %10s %10s %9s\n", "method", "ms", "failed", "res med",
           "res max", "coef med", "coef max", "fit med", "fit 90%", "fit max", "to eigen");
    int status = 0;
    for (size_t mi = 0; mi < sizeof methods / sizeof methods[0]; ++mi) {
        const bcl_method m = methods[mi].m;
        bcl_params prm = {0};
        prm.eigen_threshold = methods[mi].threshold;
        bcl_set_params(ctx, methods[mi].threshold > 0 ? &prm : NULL);
        /* a first call builds the kernels; the second is timed */
        for (int rep = 0; rep < 2; ++rep) {
            t0 = hu_now();
            s = dbl ? bcl_dsysvx(ctx, m, n, 1, (size_t)L, Aw, bw, X, info, res, path)
                    : bcl_ssysvx(ctx, m, n, 1, (size_t)L, Aw, bw, X, info, res, path);
        }
        const double ms = (hu_now() - t0) * 1e3;
        if (s != BCL_SUCCESS && s != BCL_NUMERICAL_FAILURE) {
            printf("  %-16s %s: %s\n", methods[mi].name, bcl_status_string(s), bcl_last_error(ctx));
            status = 1;
            continue;
        }
        int failed = 0, to_eigen = 0;
        size_t ok = 0;
        for (int l = 0; l < L; ++l) {
            /* EIGEN's info counts discarded eigenvalues; n + 1 = non-finite eigenvalues */
            const int fail = m == BCL_EIGEN || (m == BCL_AUTO && path[l] == BCL_EIGEN) ? info[l] > n : info[l] != 0;
            failed += fail;
            to_eigen += path[l] == BCL_EIGEN;
            if (fail || !(bAb_ref[l] > 0)) /* beta_ref = 0: no path pays, nothing to compare */
                continue;
            const double *Al = A + (size_t)l * nn, *br = beta_ref + (size_t)l * n;
            double dd[64], num = 0, den = 0, dAd = 0;
            for (int i = 0; i < n; ++i) {
                const double x = dbl ? ((double *)X)[(size_t)l * n + i] : ((float *)X)[(size_t)l * n + i];
                dd[i] = x - br[i];
                num += dd[i] * dd[i];
                den += br[i] * br[i];
            }
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i)
                    dAd += dd[i] * Al[i + (size_t)j * n] * dd[j];
            err_coef[ok] = sqrt(num / den);
            err_fit[ok] = sqrt(fabs(dAd) / bAb_ref[l]);
            resd[ok] = dbl ? ((double *)res)[l] : ((float *)res)[l];
            ++ok;
        }
        char share[32] = "-";
        if (m == BCL_AUTO)
            snprintf(share, sizeof share, "%.1f%%", 100.0 * to_eigen / L);
        if (ok)
            printf("  %-16s %8.2f %7d %10.3g %10.3g %10.3g %10.3g %10.3g %10.3g %10.3g %9s\n",
                   methods[mi].name, ms, failed, quantile(resd, ok, 0.5), quantile(resd, ok, 1),
                   quantile(err_coef, ok, 0.5), quantile(err_coef, ok, 1), quantile(err_fit, ok, 0.5),
                   quantile(err_fit, ok, 0.9), quantile(err_fit, ok, 1), share);
        else
            printf("  %-16s %8.2f %7d  (every regression failed)\n", methods[mi].name, ms, failed);
        if (m == BCL_EIGEN) {
            long discarded = 0;
            for (int l = 0; l < L; ++l)
                discarded += info[l] <= n ? info[l] : 0;
            printf("  %-16s %.2f eigenvalues discarded per regression on average (|lambda| < max|lambda| / %.0e)\n",
                   "", (double)discarded / L, methods[mi].threshold > 0 ? methods[mi].threshold : 1e5);
        }
    }
    free(A);
    free(b);
    free(beta_ref);
    free(kappa);
    free(bAb_ref);
    free(Aw);
    free(bw);
    free(X);
    free(res);
    free(info);
    free(path);
    free(err_coef);
    free(err_fit);
    free(resd);
    bcl_destroy(ctx);
    return status;
}
