/* Yardsticks for the PDE pricer: closed forms (Black-Scholes-Merton with the model's discrete
 * dividends, knock-out barriers) and an independent CPU finite-difference reference for American
 * options (log-spot Crank-Nicolson, penalty method, LAPACK dgtsv). Textbook formulas. */
#include "pde_core.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double norm_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

static double norm_pdf(double x)
{
    return exp(-0.5 * x * x) / sqrt(2 * M_PI);
}

/* Knock-out price without rebate (Merton 1973; Reiner-Rubinstein 1991), cost of carry b = r - q. */
static double barrier_price(int is_call, int down, double S, double X, double H, double T, double r,
                            double b, double v)
{
    const double sq = v * sqrt(T), mu = (b - 0.5 * v * v) / (v * v);
    const double phi = is_call ? 1 : -1, eta = down ? 1 : -1;
    const double carry = exp((b - r) * T), disc = exp(-r * T);
    const double x1 = log(S / X) / sq + (1 + mu) * sq, x2 = log(S / H) / sq + (1 + mu) * sq;
    const double y1 = log(H * H / (S * X)) / sq + (1 + mu) * sq, y2 = log(H / S) / sq + (1 + mu) * sq;
    const double p1 = pow(H / S, 2 * (mu + 1)), p0 = pow(H / S, 2 * mu);
    const double A = phi * S * carry * norm_cdf(phi * x1) - phi * X * disc * norm_cdf(phi * x1 - phi * sq);
    const double B = phi * S * carry * norm_cdf(phi * x2) - phi * X * disc * norm_cdf(phi * x2 - phi * sq);
    const double C = phi * S * carry * p1 * norm_cdf(eta * y1) - phi * X * disc * p0 * norm_cdf(eta * y1 - eta * sq);
    const double D = phi * S * carry * p1 * norm_cdf(eta * y2) - phi * X * disc * p0 * norm_cdf(eta * y2 - eta * sq);
    if (is_call && down)
        return X >= H ? A - C : B - D;
    if (is_call)
        return X >= H ? 0 : A - B + C - D;
    if (down)
        return X >= H ? A - B + C - D : 0;
    return X >= H ? B - D : A - C;
}

int pde_closed_form(const pde_contract *c, double zeta, pde_result *out)
{
    memset(out, 0, sizeof *out);
    const int up = c->upper_barrier > 0, down = c->lower_barrier > 0;
    if (c->american || (up && down) || !(zeta > 0))
        return -1;
    const double T = c->maturity, r = c->rate, mu = c->rate - c->yield, S = c->spot;
    if (up || down) {
        if (c->ndiv)
            return -1;
        const double H = up ? c->upper_barrier : c->lower_barrier, h = 1e-3 * S;
        const double v0 = barrier_price(c->is_call, down, S, c->strike, H, T, r, mu, zeta);
        const double vm = barrier_price(c->is_call, down, S - h, c->strike, H, T, r, mu, zeta);
        const double vp = barrier_price(c->is_call, down, S + h, c->strike, H, T, r, mu, zeta);
        out->price = v0;
        out->delta = (vp - vm) / (2 * h);
        out->gamma = (vp - 2 * v0 + vm) / (h * h);
        return 0;
    }
    /* S_T = (F_T - D_T) X_T + D_T, X_T lognormal with volatility ζ: Black on the forward
     * F' = F_T - D_T = R_T K0 with strike K - D_T; dF'/dS0 = R_T */
    pde_dividend_terms dt;
    pde_dividend_terms_get(c, &dt);
    const double RT = dt.RT;
    const double F = RT * dt.K0, DT = RT * dt.AT, K = c->strike - DT, disc = exp(-r * T);
    if (K <= 0) { /* the payoff is linear: a forward */
        out->price = c->is_call ? disc * (F - K) : 0;
        out->delta = c->is_call ? disc * RT : 0;
        return 0;
    }
    const double sq = zeta * sqrt(T), d1 = (log(F / K) + 0.5 * sq * sq) / sq, d2 = d1 - sq;
    if (c->is_call) {
        out->price = disc * (F * norm_cdf(d1) - K * norm_cdf(d2));
        out->delta = disc * RT * norm_cdf(d1);
    } else {
        out->price = disc * (K * norm_cdf(-d2) - F * norm_cdf(-d1));
        out->delta = -disc * RT * norm_cdf(-d1);
    }
    out->gamma = disc * RT * RT * norm_pdf(d1) / (F * sq);
    return 0;
}

/* Average of max(phi (e^y - K), 0) over [a, b]. */
static double cell_payoff(double phi, double K, double a, double b)
{
    const double yk = log(K);
    double lo = a, hi = b;
    if (phi > 0)
        lo = fmax(a, yk);
    else
        hi = fmin(b, yk);
    if (hi <= lo)
        return 0;
    return phi * ((exp(hi) - exp(lo)) - K * (hi - lo)) / (b - a);
}

int pde_reference(const pde_contract *c, double sigma, int m, int steps, pde_result *out)
{
    memset(out, 0, sizeof *out);
    if (c->ndiv || c->lower_barrier > 0 || c->upper_barrier > 0 || m < 5 || steps < 4 || !(sigma > 0))
        return -1;
    const double S0 = c->spot, K = c->strike, T = c->maturity, r = c->rate, q = c->yield;
    const double phi = c->is_call ? 1 : -1;
    const int n = m | 1, mid = n / 2; /* odd: the spot on the middle node */
    const double width = 6 * sigma * sqrt(T) + fabs(log(K / S0));
    const double h = 2 * width / (n - 1), y0 = log(S0);
    const double diff = 0.5 * sigma * sigma / (h * h), conv = (r - q - 0.5 * sigma * sigma) / (2 * h);
    const double lo_w = diff - conv, mid_w = -2 * diff - r, up_w = diff + conv; /* L row weights */
    double *V = malloc(sizeof(double) * (size_t)n * 8);
    if (!V)
        return -1;
    double *payoff = V + n, *rhs = V + 2 * n, *dl = V + 3 * n, *d = V + 4 * n, *du = V + 5 * n;
    double *S = V + 6 * n, *W = V + 7 * n;
    for (int i = 0; i < n; ++i) {
        const double y = y0 + (i - mid) * h;
        S[i] = exp(y);
        payoff[i] = fmax(phi * (S[i] - K), 0);
        V[i] = cell_payoff(phi, K, y - 0.5 * h, y + 0.5 * h);
    }
    /* Rannacher: the first two steps as four implicit half-steps */
    const double dt = T / steps;
    int rc = 0;
    double tau = 0;
    for (int step = 0; step < steps + 2 && rc == 0; ++step) {
        const int implicit = step < 4;
        const double k = implicit ? 0.5 * dt : dt, theta = implicit ? 1 : 0.5;
        tau += k;
        for (int i = 1; i < n - 1; ++i)
            rhs[i] = V[i] + (1 - theta) * k * (lo_w * V[i - 1] + mid_w * V[i] + up_w * V[i + 1]);
        /* Dirichlet: the European asymptote, or the exercise value when larger */
        const double fwd_lo = phi * (S[0] * exp(-q * tau) - K * exp(-r * tau));
        const double fwd_hi = phi * (S[n - 1] * exp(-q * tau) - K * exp(-r * tau));
        rhs[0] = fmax(fmax(fwd_lo, 0), c->american ? payoff[0] : 0);
        rhs[n - 1] = fmax(fmax(fwd_hi, 0), c->american ? payoff[n - 1] : 0);
        memcpy(W, V, sizeof(double) * (size_t)n);
        /* penalty iteration: exercise where the iterate falls below the payoff */
        const double penalty = 1e10;
        for (int iter = 0; iter < 100; ++iter) {
            for (int i = 0; i < n; ++i) {
                const int edge = i == 0 || i == n - 1;
                const int active = c->american && !edge && W[i] < payoff[i];
                dl[i] = edge ? 0 : -theta * k * lo_w;
                du[i] = edge ? 0 : -theta * k * up_w;
                d[i] = edge ? 1 : 1 - theta * k * mid_w;
                if (active)
                    d[i] += penalty;
                V[i] = rhs[i] + (active ? penalty * payoff[i] : 0);
            }
            /* dgtsv takes the sub-diagonal from row 2 on and the super-diagonal up to row n-1 */
            if (LAPACKE_dgtsv(LAPACK_COL_MAJOR, n, 1, dl + 1, d, du, V, n) != 0) {
                rc = -1;
                break;
            }
            if (!c->american)
                break;
            int changed = 0;
            for (int i = 1; i < n - 1; ++i)
                changed |= (W[i] < payoff[i]) != (V[i] < payoff[i]);
            memcpy(W, V, sizeof(double) * (size_t)n);
            if (!changed)
                break;
        }
    }
    if (rc == 0) {
        const double vm = V[mid - 1], v0 = V[mid], vp = V[mid + 1];
        const double dy = (vp - vm) / (2 * h), dyy = (vp - 2 * v0 + vm) / (h * h);
        out->price = v0;
        out->delta = dy / S0;
        out->gamma = (dyy - dy) / (S0 * S0);
    }
    free(V);
    return rc;
}
