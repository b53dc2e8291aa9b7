/* The PDE pricer's core (hosts/pde_core.c and its kernels) on small books: Black-Scholes closed
 * forms for price, delta and gamma, second-order convergence, put-call parity under a local
 * volatility surface with dividends, American options against the independent CPU reference,
 * knock-out barriers, the boundary conditions, float; and the input checks.
 * Usage: test_pde <group>, group one of numerics, input (default: both). */
#include "pde_core.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    bcl_context *ctx;
    pde_engine *engine[2]; /* float, double */
    pde_vol flat;          /* ζ = 0.2 */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char err[8192];
    f->ctx = tu_context();
    for (int dbl = 0; dbl < 2; ++dbl)
        if (pde_engine_create(f->ctx, dbl, PDE_TEST_KERNEL, &f->engine[dbl], err, sizeof err))
            fail_msg("pde_engine_create: %s", err);
    if (pde_vol_constant(&f->flat, 0.2, err, sizeof err))
        fail_msg("%s", err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int dbl = 0; dbl < 2; ++dbl)
        pde_engine_destroy(f->engine[dbl]);
    pde_vol_free(&f->flat);
    bcl_destroy(f->ctx);
    free(f);
    return 0;
}

static pde_contract contract(int is_call, double K, double T, double r, double q)
{
    pde_contract c;
    char id[32];
    snprintf(id, sizeof id, "%s%g", is_call ? "C" : "P", K);
    pde_vanilla(&c, id, is_call, 100, K, T, r, q);
    return c;
}

/* The sanitizer pass (tu_quick()) halves the larger grids; errors grow by 4 at second order. */
static int grid(int n)
{
    return tu_quick() ? n / 2 : n;
}

static double slack(void)
{
    return tu_quick() ? 4 : 1;
}

static pde_config config(int m, int steps)
{
    pde_config cfg;
    pde_config_default(&cfg);
    cfg.m = m;
    cfg.steps = steps;
    return cfg;
}

static void price(fixture *f, int dbl, const pde_config *cfg, const pde_vol *vol,
                  const pde_contract *book, size_t n, pde_result *res)
{
    char err[8192];
    if (pde_price(f->engine[dbl], cfg, vol, book, n, res, NULL, err, sizeof err))
        fail_msg("pde_price: %s", err);
    for (size_t k = 0; k < n; ++k)
        if (res[k].info != 0 || !isfinite(res[k].price))
            fail_msg("contract %s: info %d, price %g", book[k].id, res[k].info, res[k].price);
}

/* max |pricer - closed form| over the book, for price, delta and gamma */
static void closed_form_errors(const pde_contract *book, const pde_result *res, size_t n,
                               double zeta, double err[3])
{
    err[0] = err[1] = err[2] = 0;
    for (size_t k = 0; k < n; ++k) {
        pde_result exact;
        assert_int_equal(pde_closed_form(&book[k], zeta, &exact), 0);
        err[0] = fmax(err[0], fabs(res[k].price - exact.price));
        err[1] = fmax(err[1], fabs(res[k].delta - exact.delta));
        err[2] = fmax(err[2], fabs(res[k].gamma - exact.gamma));
    }
}

#define NVANILLA 6
static void vanilla_book(pde_contract *book)
{
    const double strikes[3] = {90, 100, 110};
    for (int j = 0; j < 3; ++j) {
        book[2 * j] = contract(1, strikes[j], 1, 0.05, 0.01);
        book[2 * j + 1] = contract(0, strikes[j], 1, 0.05, 0.01);
    }
}

static void test_black_scholes(void **state)
{
    fixture *f = *state;
    pde_contract book[NVANILLA];
    pde_result res[NVANILLA];
    double err[3];
    vanilla_book(book);
    const pde_config cfg = config(grid(256), grid(128));
    price(f, 1, &cfg, &f->flat, book, NVANILLA, res);
    closed_form_errors(book, res, NVANILLA, 0.2, err);
    printf("double m = %d: price %.2e delta %.2e gamma %.2e\n", cfg.m, err[0], err[1], err[2]);
    assert_true(err[0] < 5e-4 * slack());
    assert_true(err[1] < 1e-4 * slack());
    assert_true(err[2] < 1e-5 * slack());
    /* every far boundary condition converges to the same prices */
    for (int bc = PDE_BC_DIRICHLET; bc <= PDE_BC_LINEAR; ++bc) {
        pde_config c = cfg;
        c.far_bc = bc;
        c.width = 2.5;
        price(f, 1, &c, &f->flat, book, NVANILLA, res);
        closed_form_errors(book, res, NVANILLA, 0.2, err);
        printf("boundary %d, width 2.5: price %.2e\n", bc, err[0]);
        assert_true(err[0] < 1e-3 * slack());
    }
    /* the other assembly layout (one work-item per node on GPUs, per contract row on CPUs)
     * gives the same prices */
    const char *was = getenv("BATCHCL_PDE_ASSEMBLY");
    bcl_device_info info;
    bcl_device_info_get(f->ctx, &info);
    setenv("BATCHCL_PDE_ASSEMBLY", info.is_gpu ? "rows" : "nodes", 1);
    pde_engine *other;
    char why[8192];
    if (pde_engine_create(f->ctx, 1, PDE_TEST_KERNEL, &other, why, sizeof why))
        fail_msg("pde_engine_create: %s", why);
    if (was)
        setenv("BATCHCL_PDE_ASSEMBLY", was, 1);
    else
        unsetenv("BATCHCL_PDE_ASSEMBLY");
    pde_result again[NVANILLA];
    price(f, 1, &cfg, &f->flat, book, NVANILLA, res);
    if (pde_price(other, &cfg, &f->flat, book, NVANILLA, again, NULL, why, sizeof why))
        fail_msg("pde_price: %s", why);
    pde_engine_destroy(other);
    for (int k = 0; k < NVANILLA; ++k)
        assert_true(fabs(again[k].price - res[k].price) < 1e-12 && fabs(again[k].gamma - res[k].gamma) < 1e-12);
    /* float: rounding of the stored values limits the accuracy */
    const pde_config coarse = config(128, 64);
    price(f, 0, &coarse, &f->flat, book, NVANILLA, res);
    closed_form_errors(book, res, NVANILLA, 0.2, err);
    printf("float m = 128: price %.2e delta %.2e gamma %.2e\n", err[0], err[1], err[2]);
    assert_true(err[0] < 3e-3);
    assert_true(err[1] < 5e-4);
    assert_true(err[2] < 1e-4);
}

static void test_convergence_order(void **state)
{
    fixture *f = *state;
    pde_contract book[2] = {contract(1, 100, 1, 0.05, 0), contract(1, 115, 0.5, 0.03, 0.02)};
    pde_result res[2];
    double err[2][3];
    for (int g = 0; g < 2; ++g) {
        const pde_config cfg = config(96 << g, 48 << g);
        price(f, 1, &cfg, &f->flat, book, 2, res);
        closed_form_errors(book, res, 2, 0.2, err[g]);
    }
    const double order = log2(err[0][0] / err[1][0]), order_delta = log2(err[0][1] / err[1][1]);
    printf("price errors %.3e -> %.3e: order %.2f; delta order %.2f\n", err[0][0], err[1][0], order,
           order_delta);
    assert_true(order >= 1.7);
    assert_true(order_delta >= 1.7);
}

/* C - P = e^{-rT} (F_T - K) in any model: the scheme keeps linear payoffs exact, so parity holds
 * to rounding under a skewed, time-dependent surface with cash and proportional dividends */
static void test_put_call_parity(void **state)
{
    fixture *f = *state;
    char err[512];
    pde_vol skew;
    const char *surface = "t\\x,0.5,0.8,1.0,1.2,1.6\n"
                          "0.0,0.32,0.26,0.22,0.20,0.19\n"
                          "0.5,0.30,0.25,0.21,0.19,0.18\n"
                          "2.0,0.27,0.23,0.20,0.18,0.18\n";
    if (pde_parse_vol_csv(surface, &skew, err, sizeof err))
        fail_msg("%s", err);
    pde_contract book[4];
    for (int j = 0; j < 4; ++j) {
        book[j] = contract(j % 2 == 0, j < 2 ? 95 : 108, 1.5, 0.04, 0.01);
        book[j].ndiv = 2;
        book[j].div_time[0] = 0.4, book[j].div_cash[0] = 1.5;
        book[j].div_time[1] = 0.9, book[j].div_cash[1] = 1.0, book[j].div_prop[1] = 0.01;
    }
    pde_result res[4];
    const pde_config cfg = config(128, 64);
    price(f, 1, &cfg, &skew, book, 4, res);
    for (int j = 0; j < 4; j += 2) {
        pde_dividend_terms d;
        pde_dividend_terms_get(&book[j], &d);
        const double disc = exp(-book[j].rate * book[j].maturity), FT = d.RT * (d.K0 + d.AT);
        const double parity = res[j].price - res[j + 1].price - disc * (FT - book[j].strike);
        const double delta = res[j].delta - res[j + 1].delta - disc * d.RT;
        printf("K = %g: call %.6f put %.6f, parity residual %.2e, delta %.2e, gamma %.2e\n",
               book[j].strike, res[j].price, res[j + 1].price, parity, delta,
               res[j].gamma - res[j + 1].gamma);
        assert_true(fabs(parity) < 1e-9);
        assert_true(fabs(delta) < 1e-9);
        assert_true(fabs(res[j].gamma - res[j + 1].gamma) < 1e-9);
    }
    /* the same surface with every entry 0.2 prices as the constant 0.2 */
    for (int i = 0; i < skew.nt * skew.nx; ++i)
        skew.zeta[i] = 0.2;
    pde_result flat[4];
    price(f, 1, &cfg, &skew, book, 4, res);
    price(f, 1, &cfg, &f->flat, book, 4, flat);
    for (int j = 0; j < 4; ++j)
        assert_true(fabs(res[j].price - flat[j].price) < 1e-10);
    pde_vol_free(&skew);
}

/* discrete dividends: the model's closed form (Black on F_T - D_T) */
static void test_discrete_dividends(void **state)
{
    fixture *f = *state;
    pde_contract book[NVANILLA];
    pde_result res[NVANILLA];
    double err[3];
    vanilla_book(book);
    for (int k = 0; k < NVANILLA; ++k) {
        book[k].ndiv = 2;
        book[k].div_time[0] = 0.3, book[k].div_cash[0] = 2.0;
        book[k].div_time[1] = 0.8, book[k].div_cash[1] = 1.0, book[k].div_prop[1] = 0.02;
    }
    const pde_config cfg = config(grid(256), grid(128));
    price(f, 1, &cfg, &f->flat, book, NVANILLA, res);
    closed_form_errors(book, res, NVANILLA, 0.2, err);
    printf("dividends m = %d: price %.2e delta %.2e gamma %.2e\n", cfg.m, err[0], err[1], err[2]);
    assert_true(err[0] < 5e-4 * slack());
    assert_true(err[1] < 1e-4 * slack());
    assert_true(err[2] < 1e-5 * slack());
}

static void test_american(void **state)
{
    fixture *f = *state;
    pde_contract book[6];
    for (int j = 0; j < 3; ++j) {
        book[j] = contract(0, 90 + 10 * j, 1, 0.05, 0); /* American puts */
        book[j].american = 1;
        book[3 + j] = book[j];
        book[3 + j].american = 0;
    }
    pde_result res[6];
    const pde_config cfg = config(grid(256), grid(256));
    price(f, 1, &cfg, &f->flat, book, 6, res);
    for (int j = 0; j < 3; ++j) {
        pde_result ref;
        assert_int_equal(pde_reference(&book[j], 0.2, grid(1024) + 1, grid(1000), &ref), 0);
        printf("American put K = %g: %.6f (reference %.6f, European %.6f), delta %.6f (%.6f)\n",
               book[j].strike, res[j].price, ref.price, res[3 + j].price, res[j].delta, ref.delta);
        assert_true(res[j].price > res[3 + j].price + 0.01); /* the early exercise premium */
        assert_true(fabs(res[j].price - ref.price) < 1e-3 * slack());
        assert_true(fabs(res[j].delta - ref.delta) < 2e-4 * slack());
        assert_true(fabs(res[j].gamma - ref.gamma) < 5e-5 * slack());
    }
    /* the plain projection is first order in time but converges to the same prices */
    pde_config projection = cfg;
    projection.american = PDE_AMERICAN_PROJECTION;
    pde_result proj[3];
    price(f, 1, &projection, &f->flat, book, 3, proj);
    for (int j = 0; j < 3; ++j)
        assert_true(fabs(proj[j].price - res[j].price) < 2e-2);
    /* an American call without dividends is never exercised early: the European price */
    pde_contract calls[2] = {contract(1, 100, 1, 0.05, 0), contract(1, 100, 1, 0.05, 0)};
    calls[0].american = 1;
    price(f, 1, &cfg, &f->flat, calls, 2, res);
    assert_true(fabs(res[0].price - res[1].price) < 1e-8);
}

static void test_barriers(void **state)
{
    fixture *f = *state;
    pde_contract book[5] = {contract(1, 100, 1, 0.05, 0.02), contract(0, 100, 1, 0.05, 0.02),
                            contract(1, 100, 1, 0.05, 0.02), contract(0, 100, 1, 0.05, 0.02),
                            contract(1, 100, 1, 0.05, 0.02)};
    book[0].lower_barrier = 85;  /* down-and-out call */
    book[1].upper_barrier = 115; /* up-and-out put */
    book[2].upper_barrier = 130; /* up-and-out call */
    book[3].lower_barrier = 100.0 * 0.999; /* down-and-out put next to its barrier */
    book[4].lower_barrier = 80;  /* double knock-out */
    book[4].upper_barrier = 125;
    pde_result res[5];
    const pde_config cfg = config(grid(256), grid(128));
    price(f, 1, &cfg, &f->flat, book, 5, res);
    for (int k = 0; k < 4; ++k) {
        pde_result exact, vanilla;
        pde_contract plain = book[k];
        plain.lower_barrier = plain.upper_barrier = 0;
        assert_int_equal(pde_closed_form(&book[k], 0.2, &exact), 0);
        assert_int_equal(pde_closed_form(&plain, 0.2, &vanilla), 0);
        printf("%s barrier %g/%g: %.6f (closed form %.6f, vanilla %.6f), delta %.6f (%.6f)\n",
               book[k].id, book[k].lower_barrier, book[k].upper_barrier, res[k].price, exact.price,
               vanilla.price, res[k].delta, exact.delta);
        assert_true(res[k].price < vanilla.price);
        assert_true(fabs(res[k].price - exact.price) < 2e-3 * slack());
        assert_true(fabs(res[k].delta - exact.delta) < 2e-3 * slack());
    }
    assert_true(res[3].price < 0.02); /* 0.1 % above the barrier: almost knocked out */
    assert_true(res[4].price > 0 && res[4].price < res[0].price && res[4].price < res[2].price);
}

/* A book mixing European, American, barrier and dividend contracts in no particular order: the
 * pricer sorts American contracts first (early exercise runs over them only) and must map every
 * result back to its contract, also when the book is split into several device passes and in
 * the other assembly layout. Reference: each contract priced alone. */
static void test_mixed_book(void **state)
{
    fixture *f = *state;
    enum { NB = 9 };
    pde_contract book[NB] = {contract(1, 100, 1, 0.05, 0.01), contract(0, 105, 1, 0.05, 0),
                             contract(1, 100, 1, 0.05, 0.02), contract(0, 95, 0.75, 0.04, 0),
                             contract(0, 100, 1.5, 0.03, 0), contract(1, 100, 1, 0.03, 0.06),
                             contract(0, 100, 1, 0.05, 0.02), contract(0, 100, 1, 0.05, 0),
                             contract(1, 110, 0.5, 0.05, 0)};
    book[1].american = 1;
    book[2].lower_barrier = 85;
    book[3].american = 1;
    book[3].ndiv = 1, book[3].div_time[0] = 0.4, book[3].div_cash[0] = 2;
    book[4].ndiv = 2, book[4].div_time[0] = 0.5, book[4].div_cash[0] = 1;
    book[4].div_time[1] = 1.0, book[4].div_prop[1] = 0.02;
    book[5].american = 1;
    book[6].upper_barrier = 115;
    book[7].american = 1, book[7].lower_barrier = 80;
    pde_config cfg = config(tu_quick() ? 64 : 128, tu_quick() ? 32 : 64);
    pde_result alone[NB], together[NB];
    for (int k = 0; k < NB; ++k)
        price(f, 1, &cfg, &f->flat, &book[k], 1, &alone[k]);
    for (size_t chunk = 0; chunk <= 4; chunk += 2) { /* 0: one pass; 2, 4: several */
        cfg.chunk = chunk;
        price(f, 1, &cfg, &f->flat, book, NB, together);
        for (int k = 0; k < NB; ++k) {
            if (fabs(together[k].price - alone[k].price) > 1e-10 * (1 + alone[k].price) ||
                fabs(together[k].delta - alone[k].delta) > 1e-10 ||
                fabs(together[k].gamma - alone[k].gamma) > 1e-10)
                fail_msg("chunk %zu, contract %d (%s): price %.12f delta %.10f gamma %.10f in the book, "
                         "%.12f %.10f %.10f alone", chunk, k, book[k].id, together[k].price,
                         together[k].delta, together[k].gamma, alone[k].price, alone[k].delta,
                         alone[k].gamma);
        }
    }
    /* early exercise really happened where it should: the American put is worth more than its
     * European twin */
    pde_contract twin = book[1];
    twin.american = 0;
    pde_result european;
    cfg.chunk = 0;
    price(f, 1, &cfg, &f->flat, &twin, 1, &european);
    assert_true(alone[1].price > european.price + 0.05);
    /* the other assembly layout (per node on GPUs, per contract row on CPUs), early exercise
     * included, gives the same prices */
    const char *was = getenv("BATCHCL_PDE_ASSEMBLY");
    bcl_device_info info;
    bcl_device_info_get(f->ctx, &info);
    setenv("BATCHCL_PDE_ASSEMBLY", info.is_gpu ? "rows" : "nodes", 1);
    pde_engine *other;
    char why[8192];
    const int rc = pde_engine_create(f->ctx, 1, PDE_TEST_KERNEL, &other, why, sizeof why);
    if (was)
        setenv("BATCHCL_PDE_ASSEMBLY", was, 1);
    else
        unsetenv("BATCHCL_PDE_ASSEMBLY");
    if (rc)
        fail_msg("pde_engine_create: %s", why);
    if (pde_price(other, &cfg, &f->flat, book, NB, together, NULL, why, sizeof why))
        fail_msg("pde_price: %s", why);
    pde_engine_destroy(other);
    for (int k = 0; k < NB; ++k)
        if (fabs(together[k].price - alone[k].price) > 1e-10 * (1 + alone[k].price) ||
            fabs(together[k].gamma - alone[k].gamma) > 1e-10)
            fail_msg("other layout, contract %d (%s): price %.12f, alone %.12f", k, book[k].id,
                     together[k].price, alone[k].price);
}

/* ---- input ---- */

static void expect_error(int rc, const char *err, const char *words)
{
    if (rc == 0)
        fail_msg("accepted, expected an error about '%s'", words);
    if (!strstr(err, words))
        fail_msg("error '%s' does not mention '%s'", err, words);
    printf("rejected: %s\n", err);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    char err[512];
    pde_contract c;
    assert_int_equal(pde_parse_csv_line("a,call,european,100,100,1,0.05,0.01,,,0.5:1:0;0.75:1", &c, err, sizeof err), 0);
    assert_int_equal(c.ndiv, 2);
    assert_true(c.is_call && !c.american && c.div_cash[1] == 1);
    assert_int_equal(pde_check_contract(&c, err, sizeof err), 0);
    expect_error(pde_parse_csv_line("a,call,european,100,100", &c, err, sizeof err), err, "columns");
    expect_error(pde_parse_csv_line("a,call,european,100,abc,1,0.05,0", &c, err, sizeof err), err,
                 "strike");
    expect_error(pde_parse_csv_line("a,straddle,european,100,100,1,0.05,0", &c, err, sizeof err), err,
                 "call or put");
    expect_error(pde_parse_csv_line("a,put,bermudan,100,100,1,0.05,0", &c, err, sizeof err), err,
                 "european or american");
    expect_error(pde_parse_csv_line("a,put,american,100,100,1,0.05,0,,,0.5:x", &c, err, sizeof err), err,
                 "dividend 1");
    assert_int_equal(pde_parse_csv_line("a,put,american,100,100,0,0.05,0", &c, err, sizeof err), 0);
    expect_error(pde_check_contract(&c, err, sizeof err), err, "maturity");
    assert_int_equal(pde_parse_csv_line("a,put,american,100,100,-1,0.05,0", &c, err, sizeof err), 0);
    expect_error(pde_check_contract(&c, err, sizeof err), err, "maturity");
    assert_int_equal(pde_parse_csv_line("a,call,european,100,100,1,0.05,0,110", &c, err, sizeof err), 0);
    expect_error(pde_check_contract(&c, err, sizeof err), err, "below the spot");
    assert_int_equal(pde_parse_csv_line("a,put,european,100,100,1,0.05,0,,90", &c, err, sizeof err), 0);
    expect_error(pde_check_contract(&c, err, sizeof err), err, "above the spot");
    assert_int_equal(pde_parse_csv_line("a,put,european,100,100,1,0.05,0,80,,0.5:1", &c, err, sizeof err), 0);
    expect_error(pde_check_contract(&c, err, sizeof err), err, "not supported");
    assert_int_equal(pde_parse_csv_line("a,put,european,100,100,1,0.05,0,,,0.5:1:1.5", &c, err, sizeof err), 0);
    expect_error(pde_check_contract(&c, err, sizeof err), err, "proportional");

    pde_vol v;
    expect_error(pde_vol_constant(&v, -0.2, err, sizeof err), err, "positive");
    expect_error(pde_parse_vol_csv("t\\x,0.8,1.2\n0,0.2,-0.1\n", &v, err, sizeof err), err, "positive");
    expect_error(pde_parse_vol_csv("t\\x,0.8,1.2\n0,0.2\n", &v, err, sizeof err), err, "x grid");
    expect_error(pde_parse_vol_csv("t\\x,0.8,1.2\n1,0.2,0.2\n0.5,0.2,0.2\n", &v, err, sizeof err), err,
                 "increase");
    assert_int_equal(pde_parse_vol_csv("# zeta\nt\\x,0.8,1.2\n0,0.2,0.3\n1,0.25,0.3\n", &v, err, sizeof err), 0);
    assert_int_equal(v.nt, 2);
    assert_int_equal(v.nx, 2);
    assert_true(v.zeta[2] == 0.25);
    pde_vol_free(&v);

    /* a whole CSV book names the line; a JSON book */
    char path[] = "/tmp/test_pde_bookXXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *file = fdopen(fd, "w");
    fprintf(file, "%s\n# comment\nx1,call,european,100,100,1,0.05,0\nx2,put,european,100,100,1,0.05\n",
            pde_csv_header);
    fclose(file);
    pde_contract *book = NULL;
    size_t n = 0;
    expect_error(pde_read_book(path, &book, &n, err, sizeof err), err, "line 4");
    remove(path);
    if (pde_have_json()) {
        const char *json = "{\"contracts\": [{\"id\": \"j1\", \"type\": \"put\", \"style\": \"american\", "
                           "\"spot\": 100, \"strike\": 95, \"maturity\": 0.5, \"rate\": 0.03, "
                           "\"dividends\": [{\"time\": 0.25, \"cash\": 1.5}]}, {\"id\": 2, \"type\": "
                           "\"call\", \"spot\": 50, \"strike\": 55, \"maturity\": 1, "
                           "\"upper_barrier\": 70}]}";
        assert_int_equal(pde_parse_book_json(json, &book, &n, err, sizeof err), 0);
        assert_int_equal(n, 2);
        assert_true(book[0].american && !book[0].is_call && book[0].ndiv == 1 && book[0].div_cash[0] == 1.5);
        assert_true(book[1].is_call && book[1].upper_barrier == 70 && !strcmp(book[1].id, "2"));
        free(book);
        expect_error(pde_parse_book_json("{\"contracts\": [{\"type\": \"put\", \"spot\": 100}]}", &book,
                                         &n, err, sizeof err),
                     err, "strike");
        expect_error(pde_parse_book_json("{\"contracts\": [", &book, &n, err, sizeof err), err,
                     "invalid JSON");
    }
}

static void test_bad_config(void **state)
{
    fixture *f = *state;
    char err[512];
    pde_contract c = contract(1, 100, 1, 0.05, 0);
    pde_result r;
    pde_config cfg = config(3, 10);
    expect_error(pde_price(f->engine[1], &cfg, &f->flat, &c, 1, &r, NULL, err, sizeof err), err, "m = 3");
    cfg = config(64, 1);
    expect_error(pde_price(f->engine[1], &cfg, &f->flat, &c, 1, &r, NULL, err, sizeof err), err,
                 "time steps");
    cfg = config(64, 32);
    c.maturity = 0;
    expect_error(pde_price(f->engine[1], &cfg, &f->flat, &c, 1, &r, NULL, err, sizeof err), err,
                 "maturity");
    c.maturity = 1;
    c.ndiv = 1;
    c.div_time[0] = 0.5;
    c.div_cash[0] = 150; /* more cash than the stock is worth */
    expect_error(pde_price(f->engine[1], &cfg, &f->flat, &c, 1, &r, NULL, err, sizeof err), err,
                 "dividends");
}

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
    const struct CMUnitTest numerics[] = {
        cmocka_unit_test(test_black_scholes),  cmocka_unit_test(test_convergence_order),
        cmocka_unit_test(test_put_call_parity), cmocka_unit_test(test_discrete_dividends),
        cmocka_unit_test(test_american),       cmocka_unit_test(test_barriers),
        cmocka_unit_test(test_mixed_book),
        cmocka_unit_test(test_bad_config)};
    const struct CMUnitTest input[] = {cmocka_unit_test(test_bad_inputs)};
    int failed = 0, all = !strcmp(group, "all");
    if (all || !strcmp(group, "numerics"))
        failed += cmocka_run_group_tests_name("pde numerics", numerics, setup, teardown);
    if (all || !strcmp(group, "input"))
        failed += cmocka_run_group_tests_name("pde input", input, NULL, NULL);
    return failed ? 1 : 0;
}
