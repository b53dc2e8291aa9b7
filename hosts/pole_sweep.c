/* pole_sweep: the parameter-space design of Tokura et al. 2017 (bulk-nonsymmetric-eigenvalues-
 * tokura-2017.txt, Sect. 1): every closed-loop spectrum of a plant with a three-parameter
 * controller on a grid of gains, and the region of the gains that meets a pole specification.
 *
 * Plant: six unit masses in a chain, the first tied to the ground, springs k = 1, proportional
 * damping (c = 0.3 k); a force on mass 1 through an actuator lag (time constant 0.1); the position
 * of mass 1 is measured. Controller: PID with a filtered derivative (time
 * constant 0.05), u = -(kp y + kd y_f' - ki z), z' = -y. Closed loop: 12 plant states, the actuator,
 * the integrator and the filter: A(kp, ki, kd) = A0 + kp A1 + ki A2 + kd A3, 15 x 15.
 * Specification: decay rate (every eigenvalue has Re <= -sigma) and damping (every eigenvalue has
 * -Re / |lambda| >= zeta).
 *
 * Output (in --out): pole_sweep_decay.nrrd (float32: the decay rate -max Re lambda of each grid
 * point), pole_sweep_admissible.nrrd (uint8: 1 where the specification is met) -- NRRD files, a
 * text header then the raw little-endian volume, kp fastest, then ki, then kd, readable by
 * ParaView, 3D Slicer or teem -- and PNG slices pole_sweep_kd_XX.png at five values of kd (kp to
 * the right, ki upwards; green: admissible, grey levels: stable by its decay rate, red:
 * unstable). It prints the admissible share and the time split (transfers, Hessenberg, QR). */
#include "batchcl.h"
#include "hostutil.h"
#include "png.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS 15 /* closed-loop states */
#define MASSES 6

typedef struct {
    const char *device, *out;
    int grid;
    double kp_max, ki_max, kd_max, sigma, zeta;
} options;

/* ---- the closed loop ---- */

/* A0..A3 (column-major NS x NS): A(kp, ki, kd) = A0 + kp A1 + ki A2 + kd A3. */
static void closed_loop(double A[4][NS * NS])
{
    const double k = 1, c = 0.3, tau_a = 0.1, tau_d = 0.05;
    memset(A, 0, sizeof(double) * 4 * NS * NS);
#define E(m, i, j) A[m][(i) + (j)*NS]
    const int U = 2 * MASSES, Z = U + 1, D = U + 2; /* actuator, integrator, filter */
    const int Y = 0; /* the measured position: mass 1 (collocated) */
    double K[MASSES][MASSES] = {{0}};
    for (int i = 0; i < MASSES; ++i) {
        K[i][i] = i == 0 ? 2 * k : i + 1 < MASSES ? 2 * k : k;
        if (i + 1 < MASSES)
            K[i][i + 1] = K[i + 1][i] = -k;
    }
    for (int i = 0; i < MASSES; ++i) {
        E(0, i, MASSES + i) = 1; /* q' = v */
        for (int j = 0; j < MASSES; ++j) {
            E(0, MASSES + i, j) = -K[i][j];              /* v' = -K q - C v (+ u on mass 1) */
            E(0, MASSES + i, MASSES + j) = -(c / k) * K[i][j];
        }
    }
    E(0, MASSES + 0, U) = 1;     /* the actuator force acts on mass 1 */
    E(0, U, U) = -1 / tau_a;     /* u' = (u_c - u) / tau_a */
    E(0, Z, Y) = -1;             /* z' = -y */
    E(0, D, Y) = 1 / tau_d;      /* d' = (y - d) / tau_d: the filtered derivative is (y - d)/tau_d */
    E(0, D, D) = -1 / tau_d;
    /* u_c = -kp y + ki z - kd (y - d) / tau_d, entering u' with 1/tau_a */
    E(1, U, Y) = -1 / tau_a;
    E(2, U, Z) = 1 / tau_a;
    E(3, U, Y) = -1 / (tau_d * tau_a);
    E(3, U, D) = 1 / (tau_d * tau_a);
#undef E
}


/* ---- NRRD volume: text header, blank line, raw data ---- */

static int write_nrrd(const char *path, const char *type, int g, const options *o,
                      const void *data, size_t bytes, const char *content)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fprintf(f,
            "NRRD0004\n# %s\ntype: %s\ndimension: 3\nsizes: %d %d %d\nencoding: raw\n"
            "endian: little\nlabels: \"kp\" \"ki\" \"kd\"\naxis mins: 0 0 0\n"
            "axis maxs: %g %g %g\ncenters: node node node\n\n",
            content, type, g, g, g, o->kp_max, o->ki_max, o->kd_max);
    int ok = fwrite(data, 1, bytes, f) == bytes;
    return fclose(f) == 0 && ok;
}

static void usage(void)
{
    puts("usage: pole_sweep [--device SPEC] [--grid N] [--out DIR] [--sigma S] [--zeta Z]\n"
         "  every closed-loop spectrum of a PID-controlled six-mass chain on an N^3 grid of\n"
         "  (kp, ki, kd) (default 50, kp in [0, 4], ki in [0, 1], kd in [0, 4]); the region where\n"
         "  every pole has Re <= -S (default 0.01) and damping >= Z (default 0.03)");
}

int main(int argc, char **argv)
{
    options o = {NULL, ".", 50, 4.0, 1.0, 4.0, 0.01, 0.03};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--device") && v)
            o.device = argv[++i];
        else if (!strcmp(a, "--grid") && v)
            o.grid = atoi(argv[++i]);
        else if (!strcmp(a, "--out") && v)
            o.out = argv[++i];
        else if (!strcmp(a, "--sigma") && v)
            o.sigma = atof(argv[++i]);
        else if (!strcmp(a, "--zeta") && v)
            o.zeta = atof(argv[++i]);
        else {
            usage();
            return strcmp(a, "--help") && strcmp(a, "-h") ? 2 : 0;
        }
    }
    if (o.grid < 2 || o.grid > 400) {
        fprintf(stderr, "pole_sweep: --grid must be 2..400\n");
        return 2;
    }
    bcl_context *ctx;
    bcl_status s = bcl_create(&ctx, o.device);
    if (s != BCL_SUCCESS) {
        fprintf(stderr, "pole_sweep: %s: %s\n", bcl_status_string(s), bcl_last_error(NULL));
        return 2;
    }
    bcl_device_info dev;
    bcl_device_info_get(ctx, &dev);
    const int g = o.grid;
    const size_t points = (size_t)g * g * g, nn = NS * NS;
    printf("pole_sweep: %zu closed loops (%d^3 grid of kp, ki, kd), %d x %d, on %s\n", points, g,
           NS, NS, dev.name);

    /* the batch, in pinned host memory: the transfers run at full speed */
    double parts[4][NS * NS];
    closed_loop(parts);
    double *A = bcl_host_alloc(ctx, points * nn * sizeof *A),
           *wr = bcl_host_alloc(ctx, points * NS * sizeof *wr),
           *wi = bcl_host_alloc(ctx, points * NS * sizeof *wi);
    int *info = bcl_host_alloc(ctx, points * sizeof *info);
    if (!A || !wr || !wi || !info) {
        fprintf(stderr, "pole_sweep: out of host memory\n");
        return 2;
    }
    double t0 = hu_now();
    for (int c = 0; c < g; ++c)
        for (int b = 0; b < g; ++b)
            for (int a = 0; a < g; ++a) {
                const double kp = o.kp_max * a / (g - 1), ki = o.ki_max * b / (g - 1),
                             kd = o.kd_max * c / (g - 1);
                double *m = A + (((size_t)c * g + b) * g + a) * nn;
                for (size_t e = 0; e < nn; ++e)
                    m[e] = parts[0][e] + kp * parts[1][e] + ki * parts[2][e] + kd * parts[3][e];
            }
    const double t_build = hu_now() - t0;

    /* the first call also builds the kernels; the second is the timed one */
    bcl_dgeev(ctx, NS, points < 64 ? points : 64, A, wr, wi, NULL, info);
    t0 = hu_now();
    s = bcl_dgeev(ctx, NS, points, A, wr, wi, NULL, info);
    const double t_eig = hu_now() - t0;
    if (s != BCL_SUCCESS && s != BCL_NUMERICAL_FAILURE) {
        fprintf(stderr, "pole_sweep: bcl_dgeev: %s: %s\n", bcl_status_string(s), bcl_last_error(ctx));
        return 2;
    }
    const char *names[8];
    double secs[8];
    const int nsteps = bcl_last_step_times(ctx, names, secs, 8);

    /* the specification, point by point */
    float *decay = malloc(points * sizeof *decay);
    unsigned char *ok = malloc(points);
    size_t admissible = 0, stable = 0, failed = 0, best_decay_at = 0, best_damping_at = 0;
    double best_decay = -INFINITY, best_damping = -INFINITY;
    for (size_t p = 0; p < points; ++p) {
        double abscissa = -INFINITY, damping = INFINITY;
        for (int j = 0; j < NS; ++j) {
            const double re = wr[p * NS + j], im = wi[p * NS + j], mag = hypot(re, im);
            abscissa = fmax(abscissa, re);
            if (mag > 0)
                damping = fmin(damping, -re / mag);
        }
        failed += info[p] != 0;
        decay[p] = info[p] ? NAN : (float)-abscissa;
        ok[p] = info[p] == 0 && -abscissa >= o.sigma && damping >= o.zeta;
        admissible += ok[p];
        stable += info[p] == 0 && abscissa < 0;
        if (info[p] == 0 && -abscissa > best_decay) {
            best_decay = -abscissa;
            best_decay_at = p;
        }
        if (info[p] == 0 && abscissa < 0 && damping > best_damping) {
            best_damping = damping;
            best_damping_at = p;
        }
    }
    const double step[3] = {o.kp_max / (g - 1), o.ki_max / (g - 1), o.kd_max / (g - 1)};
#define GAINS(p) step[0] * (double)((p) % g), step[1] * (double)((p) / g % g), step[2] * (double)((p) / g / g)
    printf("  best decay rate %.4g at (kp, ki, kd) = (%.3g, %.3g, %.3g); best damping of a stable "
           "loop %.4g at (%.3g, %.3g, %.3g)\n",
           best_decay, GAINS(best_decay_at), best_damping, GAINS(best_damping_at));
#undef GAINS
    printf("  stable: %zu (%.1f %%), admissible (decay rate >= %g, damping >= %g): %zu (%.1f %%), "
           "not converged: %zu\n",
           stable, 100.0 * stable / points, o.sigma, o.zeta, admissible,
           100.0 * admissible / points, failed);

    /* volumes and slices */
    char path[4096];
    int written = 1;
    snprintf(path, sizeof path, "%s/pole_sweep_decay.nrrd", o.out);
    written &= write_nrrd(path, "float", g, &o, decay, points * sizeof *decay,
                          "decay rate -max Re(lambda) of the closed loop per (kp, ki, kd)");
    snprintf(path, sizeof path, "%s/pole_sweep_admissible.nrrd", o.out);
    written &= write_nrrd(path, "uint8", g, &o, ok, points, "1: the pole specification is met");
    const int zoom = 4, w = g * zoom;
    unsigned char *img = malloc((size_t)w * w * 3);
    double dmax = 0;
    for (size_t p = 0; p < points; ++p)
        if (isfinite(decay[p]))
            dmax = fmax(dmax, decay[p]);
    for (int sl = 0; sl < 5; ++sl) {
        const int c = (g - 1) * sl / 4;
        for (int y = 0; y < w; ++y)
            for (int x = 0; x < w; ++x) {
                const int a = x / zoom, b = (w - 1 - y) / zoom; /* ki upwards */
                const size_t p = ((size_t)c * g + b) * g + a;
                unsigned char *px = img + ((size_t)y * w + x) * 3;
                if (ok[p]) {
                    px[0] = 40, px[1] = 200, px[2] = 80;
                } else if (isfinite(decay[p]) && decay[p] > 0) {
                    const unsigned char v = (unsigned char)(60 + 150 * fmin(1.0, decay[p] / (dmax > 0 ? dmax : 1)));
                    px[0] = px[1] = px[2] = v;
                } else {
                    px[0] = 200, px[1] = 40, px[2] = 40;
                }
            }
        snprintf(path, sizeof path, "%s/pole_sweep_kd_%02d.png", o.out, c);
        written &= png_write_rgb(path, w, w, img) == 0;
    }
    printf("  wrote %s/pole_sweep_{decay,admissible}.nrrd and 5 PNG slices (kd = 0 .. %g)%s\n", o.out,
           o.kd_max, written ? "" : " -- WRITING FAILED");

    printf("  time: building the matrices %.3f s; eigenvalues end to end %.3f s (%.3g matrices/s)\n",
           t_build, t_eig, points / t_eig);
    printf("  device time of the commands:");
    for (int i = 0; i < nsteps; ++i)
        printf(" %s %.3f ms%s", names[i], secs[i] * 1e3, i + 1 < nsteps ? "," : "\n");
    if (nsteps == 0)
        printf(" (not recorded)\n");
    if (dev.host_unified_memory)
        printf("  (the device shares host memory: no transfers)\n");
    free(decay);
    free(ok);
    free(img);
    bcl_host_free(ctx, A);
    bcl_host_free(ctx, wr);
    bcl_host_free(ctx, wi);
    bcl_host_free(ctx, info);
    bcl_destroy(ctx);
    return written && failed == 0 ? 0 : 1;
}
