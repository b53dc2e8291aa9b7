/* Batched eigenvalues and eigenvectors of non-symmetric matrices (bcl_xgeev) against LAPACK dgeevx
 * in double: every n from 1 to 64 on every matrix class, both thread mappings (SWB, MWB) with
 * several p, all three arrangements, eigenvectors, failure isolation (NaN / infinite matrices,
 * non-convergence), chunked transfers, device buffers, bad arguments.
 * Usage: test_geev <group>, group one of values-d, values-s, mappings, vectors, numerics, api. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* |lambda - lambda_LAPACK| <= LIMIT * n * eps * ||balanced A||_1 / rcond(lambda) */
#define EIG_LIMIT 30.0
/* ||A v - lambda v|| / (||A||_F n eps) and | ||v|| - 1 | / (n eps) */
#define VEC_LIMIT 30.0

/* ---- a batch of test matrices, its reference spectra, and the check ---- */

typedef struct {
    int n, dbl;
    size_t batch;
    void *A;                   /* the batch in the tested precision */
    double *wr, *wi, *rcond;   /* LAPACK's, n per matrix */
    double *abnrm;             /* per matrix */
    int *kind;                 /* the generator of each matrix */
} ref_batch;

/* `per_kind` matrices of each kind in kinds[] (all kinds when count is 0), interleaved. */
static ref_batch make_batch(int n, int dbl, const mg_kind *kinds, int count, int per_kind,
                            uint64_t seed)
{
    mg_kind all[MG_KIND_COUNT];
    if (count == 0) {
        for (int k = 0; k < MG_KIND_COUNT; ++k)
            all[k] = (mg_kind)k;
        kinds = all;
        count = MG_KIND_COUNT;
    }
    ref_batch b = {n, dbl, (size_t)count * (size_t)per_kind, NULL, NULL, NULL, NULL, NULL, NULL};
    const size_t nn = (size_t)n * n;
    b.A = tu_alloc(b.batch * nn, dbl);
    b.wr = malloc(sizeof *b.wr * b.batch * (size_t)n);
    b.wi = malloc(sizeof *b.wi * b.batch * (size_t)n);
    b.rcond = malloc(sizeof *b.rcond * b.batch * (size_t)n);
    b.abnrm = malloc(sizeof *b.abnrm * b.batch);
    b.kind = malloc(sizeof *b.kind * b.batch);
    double *a = malloc(sizeof *a * nn);
    mg_rng r;
    mg_seed(&r, seed);
    for (size_t k = 0; k < b.batch; ++k) {
        b.kind[k] = kinds[k % (size_t)count];
        mg_nonsymmetric((mg_kind)b.kind[k], n, dbl ? 40 : 10, &r, a);
        for (size_t i = 0; i < nn; ++i)
            oracle_set(b.A, dbl, k * nn + i, a[i]);
        const size_t es = dbl ? 8 : 4;
        int info = oracle_geev(n, dbl, (char *)b.A + k * nn * es, b.wr + k * n, b.wi + k * n,
                               b.rcond + k * n, &b.abnrm[k]);
        if (info != 0)
            fail_msg("LAPACK dgeevx failed (info %d) on a %s matrix, n = %d", info,
                     mg_kind_name((mg_kind)b.kind[k]), n);
    }
    free(a);
    return b;
}

static void free_batch(ref_batch *b)
{
    free(b->A);
    free(b->wr);
    free(b->wi);
    free(b->rcond);
    free(b->abnrm);
    free(b->kind);
}

typedef struct {
    void *wr, *wi, *VR;
    int *info;
} results;

static results run(bcl_context *ctx, const ref_batch *b, int vectors, bcl_status expect)
{
    const size_t nn = (size_t)b->n * b->n;
    results r = {tu_alloc(b->batch * (size_t)b->n, b->dbl), tu_alloc(b->batch * (size_t)b->n, b->dbl),
                 vectors ? tu_alloc(b->batch * nn, b->dbl) : NULL,
                 calloc(b->batch ? b->batch : 1, sizeof(int))};
    TU_STATUS(ctx, expect,
              b->dbl ? bcl_dgeev(ctx, b->n, b->batch, b->A, r.wr, r.wi, r.VR, r.info)
                     : bcl_sgeev(ctx, b->n, b->batch, b->A, r.wr, r.wi, r.VR, r.info));
    return r;
}

/* The status of a call with eigenvectors (a forced mapping may not fit the device). */
static bcl_status try_vectors(bcl_context *ctx, const ref_batch *b)
{
    const size_t nn = (size_t)b->n * b->n;
    void *wr = tu_alloc(b->batch * (size_t)b->n, b->dbl), *wi = tu_alloc(b->batch * (size_t)b->n, b->dbl),
         *VR = tu_alloc(b->batch * nn, b->dbl);
    int *info = calloc(b->batch ? b->batch : 1, sizeof(int));
    const bcl_status s = b->dbl ? bcl_dgeev(ctx, b->n, b->batch, b->A, wr, wi, VR, info)
                                : bcl_sgeev(ctx, b->n, b->batch, b->A, wr, wi, VR, info);
    free(wr);
    free(wi);
    free(VR);
    free(info);
    return s;
}

static void free_results(results *r)
{
    free(r->wr);
    free(r->wi);
    free(r->VR);
    free(r->info);
}

/* Every matrix: info 0, conjugate pairs in order, eigenvalues within their condition bound of
 * LAPACK's, trace preserved; with VR, residual and normalization of every eigenvector. */
static void check(bcl_context *ctx, const ref_batch *b, const results *r, const char *variant)
{
    const int n = b->n, dbl = b->dbl;
    const size_t nn = (size_t)n * n, es = dbl ? 8 : 4;
    const double eps = oracle_eps(dbl);
    for (size_t k = 0; k < b->batch; ++k) {
        const char *a = (const char *)b->A + k * nn * es;
        const char *wr = (const char *)r->wr + k * n * es, *wi = (const char *)r->wi + k * n * es;
        const char *kind = mg_kind_name((mg_kind)b->kind[k]);
        if (r->info[k] != 0)
            fail_msg("%s %s n=%d matrix %zu (%s): info %d; %s", variant, dbl ? "d" : "s", n, k,
                     kind, r->info[k], bcl_last_kernel(ctx));
        const int pv = oracle_pairs_violation(n, dbl, wr, wi);
        if (pv >= 0)
            fail_msg("%s n=%d matrix %zu (%s): eigenvalue %d is not in a conjugate pair "
                     "(%g%+gi)",
                     variant, n, k, kind, pv, oracle_get(wr, dbl, (size_t)pv),
                     oracle_get(wi, dbl, (size_t)pv));
        int where;
        const double ratio = oracle_eig_match(n, dbl, wr, wi, b->wr + k * n, b->wi + k * n,
                                              b->rcond + k * n, b->abnrm[k], &where);
        if (!(ratio <= EIG_LIMIT))
            fail_msg("%s %s n=%d matrix %zu (%s): eigenvalue error %.3g x the bound (limit %g) "
                     "at LAPACK's %g%+gi (rcond %.2g); %s",
                     variant, dbl ? "d" : "s", n, k, kind, ratio, EIG_LIMIT,
                     b->wr[k * n + (size_t)where], b->wi[k * n + (size_t)where],
                     b->rcond[k * n + (size_t)where], bcl_last_kernel(ctx));
        /* the sum of the eigenvalues is the trace (each within the bound above; this also holds
         * where LAPACK's condition numbers are loose) */
        double trace = 0, sum = 0, sumi = 0;
        for (int i = 0; i < n; ++i) {
            trace += oracle_get(a, dbl, (size_t)i * (n + 1));
            sum += oracle_get(wr, dbl, (size_t)i);
            sumi += oracle_get(wi, dbl, (size_t)i);
        }
        const double tol = EIG_LIMIT * n * eps * (b->abnrm[k] > 0 ? b->abnrm[k] : 1) * n;
        if (!(fabs(sum - trace) <= tol) || !(fabs(sumi) <= tol))
            fail_msg("%s n=%d matrix %zu (%s): eigenvalues sum to %g%+gi, the trace is %g",
                     variant, n, k, kind, sum, sumi, trace);
        if (r->VR) {
            double norm_err;
            const double res = oracle_vectors_residual(n, dbl, a, wr, wi,
                                                       (const char *)r->VR + k * nn * es,
                                                       &norm_err);
            if (!(res <= VEC_LIMIT) || !(norm_err <= VEC_LIMIT))
                fail_msg("%s %s n=%d matrix %zu (%s): eigenvector residual %.3g, normalization "
                         "error %.3g (limit %g); %s",
                         variant, dbl ? "d" : "s", n, k, kind, res, norm_err, VEC_LIMIT,
                         bcl_last_kernel(ctx));
        }
    }
}

/* ---- variants: thread mappings, p, arrangements ---- */

typedef struct {
    const char *name;
    bcl_mapping hmap, qmap;
    int hp, qp;
    int hess_layout; /* 1 + bcl_layout, 0 = none */
    int specialize;
} variant;

/* p = 0: the subgroup width W (the widest SWB) */
static const variant variants[] = {
    {"table", BCL_MAPPING_AUTO, BCL_MAPPING_AUTO, 0, 0, 0, 0},
    {"swb-p3", BCL_MAPPING_SWB, BCL_MAPPING_SWB, 3, 3, 0, 0},
    {"swb-pW-rw", BCL_MAPPING_SWB, BCL_MAPPING_SWB, 0, 0, 1 + BCL_LAYOUT_ROWWISE, 0},
    {"mwb-p1", BCL_MAPPING_MWB, BCL_MAPPING_MWB, 1, 1, 0, 0},
    {"mwb-p3", BCL_MAPPING_MWB, BCL_MAPPING_MWB, 3, 3, 0, 0},
    {"swb-hess-mwb-qr", BCL_MAPPING_SWB, BCL_MAPPING_MWB, 3, 3, 0, 0},
};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

static void apply(bcl_context *ctx, const variant *v)
{
    if (v->hmap == BCL_MAPPING_AUTO && !v->specialize) {
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, NULL));
        return;
    }
    bcl_device_info d;
    bcl_device_info_get(ctx, &d);
    bcl_params p = {0};
    p.mapping = v->hmap;
    p.qr_mapping = v->qmap;
    p.work_items_per_problem = v->hp ? v->hp : (int)d.work_group_multiple;
    p.qr_work_items = v->qp ? v->qp : (int)d.work_group_multiple;
    p.hess_layout = v->hess_layout;
    p.specialize = v->specialize;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
}

/* ---- eigenvalues: every n from 1 to 64, every class, the table's variant ---- */

/* The next size of the value grids: every n, or in the quick (sanitizer) pass every n to 8, then
 * steps of 7 and the largest. */
static int next_size(int n)
{
    if (!tu_quick() || n < 8)
        return n + 1;
    return n == 64 ? 65 : n + 7 < 64 ? n + 7 : 64;
}

static void values_all(int dbl)
{
    bcl_context *ctx = tu_context();
    for (int n = 1; n <= 64; n = next_size(n)) {
        ref_batch b = make_batch(n, dbl, NULL, 0, 2, 100u * n + (uint64_t)dbl);
        results r = run(ctx, &b, 0, BCL_SUCCESS);
        check(ctx, &b, &r, "table");
        /* the last matrix alone gives bit for bit what it gave inside the batch */
        const size_t es = dbl ? 8 : 4, last = b.batch - 1, nn = (size_t)n * n;
        void *wr1 = tu_alloc((size_t)n, dbl), *wi1 = tu_alloc((size_t)n, dbl);
        int info1;
        TU_STATUS(ctx, BCL_SUCCESS,
                  dbl ? bcl_dgeev(ctx, n, 1, (double *)b.A + last * nn, wr1, wi1, NULL, &info1)
                      : bcl_sgeev(ctx, n, 1, (float *)b.A + last * nn, wr1, wi1, NULL, &info1));
        if (memcmp(wr1, (char *)r.wr + last * n * es, n * es) != 0 ||
            memcmp(wi1, (char *)r.wi + last * n * es, n * es) != 0)
            fail_msg("n=%d: a batch of one differs from the same matrix inside a batch", n);
        free(wr1);
        free(wi1);
        free_results(&r);
        free_batch(&b);
    }
    bcl_destroy(ctx);
}

static void test_values_double(void **state)
{
    (void)state;
    values_all(1);
}

static void test_values_single(void **state)
{
    (void)state;
    values_all(0);
}

/* ---- both mappings, several p, the arrangements, specialized builds ---- */

static void test_mappings(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int all_sizes[] = {1, 2, 3, 5, 13, 30, 64}, quick_sizes[] = {1, 3, 13, 64};
    const int *sizes = tu_quick() ? quick_sizes : all_sizes;
    const size_t nsizes = tu_quick() ? 4 : sizeof all_sizes / sizeof all_sizes[0];
    for (int dbl = 1; dbl >= 0; --dbl)
        for (size_t v = 0; v < N_VARIANTS; ++v) {
            /* single precision on a subset: the arithmetic is the same code */
            if (!dbl && v != 1 && v != 4)
                continue;
            for (size_t s = 0; s < nsizes; ++s) {
                const int n = sizes[s];
                ref_batch b = make_batch(n, dbl, NULL, 0, 1, 7u * n + v);
                apply(ctx, &variants[v]);
                results r = run(ctx, &b, 0, BCL_SUCCESS);
                check(ctx, &b, &r, variants[v].name);
                if (variants[v].hmap == BCL_MAPPING_MWB &&
                    !strstr(bcl_last_kernel(ctx), "hessenberg MWB"))
                    fail_msg("%s: not the MWB Hessenberg kernel: %s", variants[v].name,
                             bcl_last_kernel(ctx));
                if (variants[v].hess_layout && !strstr(bcl_last_kernel(ctx), "A RW"))
                    fail_msg("%s: A was not rearranged: %s", variants[v].name, bcl_last_kernel(ctx));
                free_results(&r);
                free_batch(&b);
            }
        }
    /* matrices larger than the rearrangement's local tile (80^2 doubles > 32 KiB): copied
     * element by element on the way to the MWB layout */
    {
        ref_batch b = make_batch(80, 1, NULL, 0, 3, 811u);
        apply(ctx, &variants[3]);
        results r = run(ctx, &b, 0, BCL_SUCCESS);
        check(ctx, &b, &r, "mwb-p1 n=80");
        free_results(&r);
        free_batch(&b);
    }
    /* compiled for the exact n (the GPU build: the sweep steps' unrolled slices, the last one
     * partial at n = 17, p = 4 and n = 30 with the widest SWB; the MWB QR step in global memory;
     * p = 2, the GPU table's QR step up to n = 12, where a work-item takes every other slice)
     * with eigenvectors, so that the Schur form and Z go through them too */
    const variant exact[] = {{"exact-n swb-p4", BCL_MAPPING_SWB, BCL_MAPPING_SWB, 4, 4, 0, 1},
                             {"exact-n swb-pW", BCL_MAPPING_SWB, BCL_MAPPING_SWB, 0, 0, 0, 1},
                             {"exact-n mwb-p4", BCL_MAPPING_SWB, BCL_MAPPING_MWB, 4, 4, 0, 1},
                             {"exact-n swb-p2", BCL_MAPPING_SWB, BCL_MAPPING_SWB, 2, 2, 0, 1}};
    const int exact_n[] = {17, 30, 30, 13};
    for (size_t v = 0; v < sizeof exact / sizeof exact[0]; ++v) {
        const int n = exact_n[v];
        ref_batch b = make_batch(n, 1, NULL, 0, 1, 5u + n + v);
        apply(ctx, &exact[v]);
        results r = run(ctx, &b, 1, BCL_SUCCESS);
        check(ctx, &b, &r, exact[v].name);
        if (!strstr(bcl_last_kernel(ctx), "-DNFIX="))
            fail_msg("%s: not the specialized kernel: %s", exact[v].name, bcl_last_kernel(ctx));
        free_results(&r);
        free_batch(&b);
    }
    bcl_destroy(ctx);
}

/* ---- two bulges a sweep (qr_bulges = 2): p = 2 (one work-item a bulge), 4 and the subgroup
 * width, every class, with and without eigenvectors (the Schur form and Z go through the same
 * sweeps; up to n = 30), sizes below, at and above the smallest block swept with two bulges
 * (8) ---- */

static void test_two_bulges(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    int ps[] = {2, 4, 0}; /* the subgroup width is known once a kernel has been built */
    const int all_sizes[] = {5, 8, 9, 13, 30, 64}, quick_sizes[] = {8, 30, 64};
    const int *sizes = tu_quick() ? quick_sizes : all_sizes;
    const size_t nsizes = tu_quick() ? 3 : sizeof all_sizes / sizeof all_sizes[0];
    for (int dbl = 1; dbl >= 0; --dbl)
        for (size_t pi = 0; pi < 3; ++pi) {
            if (pi == 2) {
                bcl_device_info d;
                bcl_device_info_get(ctx, &d);
                ps[2] = (int)d.work_group_multiple;
            }
            const int p = ps[pi];
            if (p < 2 || p % 2 || (pi == 2 && (p == 2 || p == 4)) || (!dbl && pi != 1))
                continue;
            for (size_t s = 0; s < nsizes; ++s)
                for (int vectors = 0; vectors < 2; ++vectors) {
                    const int n = sizes[s];
                    /* n = 64 with vectors needs 68 KB of local memory a matrix (SWB) */
                    if (vectors && n == 64)
                        continue;
                    bcl_params prm = {0};
                    prm.mapping = BCL_MAPPING_SWB;
                    prm.qr_mapping = BCL_MAPPING_SWB;
                    prm.work_items_per_problem = p;
                    prm.qr_work_items = p;
                    prm.qr_bulges = 2;
                    prm.specialize = n == 30 ? 1 : 0; /* the unrolled slices of the GPU build */
                    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &prm));
                    ref_batch b = make_batch(n, dbl, NULL, 0, 1, 31u * n + 7u * p + vectors);
                    results r = run(ctx, &b, vectors, BCL_SUCCESS);
                    char name[64];
                    snprintf(name, sizeof name, "two bulges, p = %d%s", p,
                             vectors ? ", vectors" : "");
                    check(ctx, &b, &r, name);
                    if (!strstr(bcl_last_kernel(ctx), "(two bulges)"))
                        fail_msg("%s: not the two-bulge QR kernel: %s", name, bcl_last_kernel(ctx));
                    free_results(&r);
                    free_batch(&b);
                }
        }
    bcl_set_params(ctx, NULL);
    bcl_destroy(ctx);
}

/* ---- eigenvectors ---- */

static void test_vectors(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int sizes[] = {1, 2, 3, 4, 7, 12, 25, 40, 64};
    const int quick = tu_quick();
    const size_t picks[] = {0, 1, 4, 5};
    for (int dbl = 1; dbl >= 0; --dbl)
        for (size_t pi = 0; pi < sizeof picks / sizeof picks[0]; ++pi) {
            const variant *v = &variants[picks[pi]];
            if (!dbl && pi >= 2)
                continue;
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
                const int n = sizes[s];
                if (pi > 0 && n > 25 && n != 64)
                    continue;
                if (quick && n != 2 && n != 7 && n != 64)
                    continue;
                ref_batch b = make_batch(n, dbl, NULL, 0, 1, 31u * n + pi);
                apply(ctx, v);
                if (pi > 0) { /* a forced mapping may not fit this device's local memory */
                    if (try_vectors(ctx, &b) == BCL_UNSUPPORTED_SIZE) {
                        free_batch(&b);
                        continue;
                    }
                }
                results r = run(ctx, &b, 1, BCL_SUCCESS);
                check(ctx, &b, &r, v->name);
                /* the eigenvalues do not depend on whether vectors are wanted */
                results r0 = run(ctx, &b, 0, BCL_SUCCESS);
                check(ctx, &b, &r0, v->name);
                free_results(&r0);
                free_results(&r);
                free_batch(&b);
            }
        }
    bcl_destroy(ctx);
}

/* ---- numerics: tiny and huge norms, non-finite matrices, non-convergence ---- */

static void test_scaled_norms(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    for (int dbl = 1; dbl >= 0; --dbl) {
        const double factors[2][4] = {{1e-30, 1e30, 1e-37, 1e37}, {1e-150, 1e150, 1e-300, 1e300}};
        for (int f = 0; f < 4; ++f) {
            const int n = 9;
            const mg_kind kinds[] = {MG_DENSE, MG_COMPLEX_PAIRS, MG_JORDAN};
            ref_batch b = make_batch(n, dbl, kinds, 3, 2, 40u + f);
            const size_t nn = (size_t)n * n;
            for (size_t i = 0; i < b.batch * nn; ++i)
                oracle_set(b.A, dbl, i, oracle_get(b.A, dbl, i) * factors[dbl][f]);
            for (size_t k = 0; k < b.batch; ++k)
                if (oracle_geev(n, dbl, (char *)b.A + k * nn * (dbl ? 8 : 4), b.wr + k * n,
                                b.wi + k * n, b.rcond + k * n, &b.abnrm[k]) != 0)
                    fail_msg("LAPACK failed on a scaled matrix");
            for (int vec = 0; vec < 2; ++vec) {
                results r = run(ctx, &b, vec, BCL_SUCCESS);
                check(ctx, &b, &r, factors[dbl][f] < 1 ? "tiny norm" : "huge norm");
                free_results(&r);
            }
            free_batch(&b);
        }
    }
    bcl_destroy(ctx);
}

/* Columns whose entries from the subdiagonal down are subnormal (double 1e-310 and 2^-1070, float
 * 1e-40 and 2^-146; the device may flush float's to zero) in matrices of norm about 1: the
 * reflectors of those columns, in the Hessenberg step and in the QR step's bulges, form v from
 * the column scaled by a power of two (1/big, LAPACK's dlarfg rescale, overflowed: before the
 * thirty-sixth session such matrices came back NaN with info = n). Column 0 and a middle column;
 * the table's mapping, SWB p = 3 in exact-n builds (the reflector in registers) and MWB p = 3,
 * with and without vectors. */
static void test_subnormal_columns(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const variant vs[] = {variants[0], {"swb-p3-exact", BCL_MAPPING_SWB, BCL_MAPPING_SWB, 3, 3, 0, 1},
                          variants[4]};
    for (int dbl = 1; dbl >= 0; --dbl) {
        const double tiny[2][2] = {{1e-40, 0x1p-146}, {1e-310, 0x1p-1070}};
        for (int f = 0; f < 2; ++f) {
            const int n = f ? 17 : 6;
            const mg_kind kinds[] = {MG_DENSE, MG_COMPLEX_PAIRS};
            ref_batch b = make_batch(n, dbl, kinds, 2, 2, 90u + (unsigned)f);
            const size_t nn = (size_t)n * n;
            for (size_t k = 0; k < b.batch; ++k) {
                /* the column made tiny from its subdiagonal down; before a middle one the columns
                 * already Hessenberg (no reflector mixes other rows into it) */
                const int c = k % 2 ? n / 2 : 0;
                for (int j = 0; j <= c; ++j)
                    for (int i = j + 1; i < n; ++i) {
                        const size_t e = k * nn + (size_t)j * n + (size_t)i;
                        if (j == c)
                            oracle_set(b.A, dbl, e, tiny[dbl][f] * (1 + (i % 3)));
                        else if (i > j + 1)
                            oracle_set(b.A, dbl, e, 0);
                    }
                if (oracle_geev(n, dbl, (char *)b.A + k * nn * (dbl ? 8 : 4), b.wr + k * n,
                                b.wi + k * n, b.rcond + k * n, &b.abnrm[k]) != 0)
                    fail_msg("LAPACK failed on a matrix with a subnormal column");
            }
            for (size_t vi = 0; vi < sizeof vs / sizeof vs[0]; ++vi) {
                apply(ctx, &vs[vi]);
                for (int vec = 0; vec < 2; ++vec) {
                    results r = run(ctx, &b, vec, BCL_SUCCESS);
                    check(ctx, &b, &r, vs[vi].name);
                    free_results(&r);
                }
            }
            free_batch(&b);
        }
    }
    bcl_destroy(ctx);
}

/* Eigenvectors of zero eigenvalues under large couplings: strictly upper triangular matrices
 * (balancing leaves them as they are, all eigenvalues 0, a Jordan block) with entries of 2^400
 * (double) or 2^38 (float), below the norm at which the matrix is scaled down: the back
 * substitution divides by the perturbed pivot smin ~ n 2^-970 (2^-100), which overflows unless
 * the column is scaled first (dlaln2's scale; before that fix VR came back NaN). The SWB and MWB
 * back substitutions. */
static void test_vectors_overflow(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const size_t picks[] = {0, 3};
    for (int dbl = 1; dbl >= 0; --dbl)
        for (size_t pi = 0; pi < sizeof picks / sizeof picks[0]; ++pi) {
            const int sizes[] = {2, 5, 12};
            for (int s = 0; s < 3; ++s) {
                const int n = sizes[s];
                const mg_kind kinds[] = {MG_UPPER};
                ref_batch b = make_batch(n, dbl, kinds, 1, 3, 70u + (unsigned)n);
                const size_t nn = (size_t)n * n;
                const double scale = ldexp(1, dbl ? 400 : 38);
                for (size_t k = 0; k < b.batch; ++k) {
                    char *a = (char *)b.A + k * nn * (dbl ? 8 : 4);
                    for (int c = 0; c < n; ++c)
                        for (int r = 0; r < n; ++r) {
                            const size_t i = (size_t)c * n + (size_t)r;
                            oracle_set(a, dbl, i, r < c ? oracle_get(a, dbl, i) * scale : 0);
                        }
                    if (oracle_geev(n, dbl, a, b.wr + k * n, b.wi + k * n, b.rcond + k * n,
                                    &b.abnrm[k]) != 0)
                        fail_msg("LAPACK failed on a nilpotent matrix");
                }
                apply(ctx, &variants[picks[pi]]);
                results r = run(ctx, &b, 1, BCL_SUCCESS);
                check(ctx, &b, &r, dbl ? "nilpotent, couplings 2^400" : "nilpotent, couplings 2^38");
                free_results(&r);
                free_batch(&b);
            }
        }
    bcl_destroy(ctx);
}

/* NaN and infinite matrices mid-batch: info = n, NaN results, and every neighbour bit for bit
 * what a clean batch gives; on every variant. */
static void test_failure_isolation(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const size_t picks[] = {0, 1, 3, 5};
    for (int dbl = 1; dbl >= 0; --dbl)
        for (size_t pi = 0; pi < sizeof picks / sizeof picks[0]; ++pi) {
            if (!dbl && pi > 1)
                continue;
            const variant *v = &variants[picks[pi]];
            const int n = 11;
            const size_t nn = (size_t)n * n, es = dbl ? 8 : 4;
            ref_batch b = make_batch(n, dbl, NULL, 0, 2, 77u + pi);
            apply(ctx, v);
            results clean = run(ctx, &b, 1, BCL_SUCCESS);
            const size_t bad[] = {3, 10, 17};
            oracle_set(b.A, dbl, 3 * nn + 5, NAN);
            oracle_set(b.A, dbl, 10 * nn + nn - 1, INFINITY);
            oracle_set(b.A, dbl, 17 * nn, -INFINITY);
            oracle_set(b.A, dbl, 17 * nn + 1, NAN);
            results r = run(ctx, &b, 1, BCL_NUMERICAL_FAILURE);
            for (size_t k = 0; k < b.batch; ++k) {
                const int is_bad = k == bad[0] || k == bad[1] || k == bad[2];
                if (is_bad) {
                    if (r.info[k] != n)
                        fail_msg("%s: non-finite matrix %zu has info %d, expected %d", v->name, k,
                                 r.info[k], n);
                    for (size_t i = 0; i < (size_t)n; ++i)
                        assert_true(isnan(oracle_get(r.wr, dbl, k * n + i)) &&
                                    isnan(oracle_get(r.wi, dbl, k * n + i)));
                    for (size_t i = 0; i < nn; ++i)
                        assert_true(isnan(oracle_get(r.VR, dbl, k * nn + i)));
                } else {
                    assert_int_equal(r.info[k], 0);
                    if (memcmp((char *)r.wr + k * n * es, (char *)clean.wr + k * n * es, n * es) ||
                        memcmp((char *)r.wi + k * n * es, (char *)clean.wi + k * n * es, n * es) ||
                        memcmp((char *)r.VR + k * nn * es, (char *)clean.VR + k * nn * es, nn * es))
                        fail_msg("%s: neighbour %zu changed by the failed matrices", v->name, k);
                }
            }
            free_results(&r);
            free_results(&clean);
            free_batch(&b);
        }
    bcl_destroy(ctx);
}

/* A sweep limit too low to converge: info follows LAPACK (eigenvalues info..n-1 valid, the first
 * info NaN, VR NaN); the converged ones are LAPACK's. */
static void test_no_convergence(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const size_t picks[] = {0, 3, 1};
    for (size_t pi = 0; pi < sizeof picks / sizeof picks[0]; ++pi) {
        const int n = 16;
        const size_t nn = (size_t)n * n;
        const mg_kind kinds[] = {MG_DENSE, MG_CYCLIC, MG_COMPANION};
        ref_batch b = make_batch(n, 1, kinds, 3, 6, 99u + pi);
        const variant *v = &variants[picks[pi]];
        bcl_device_info d;
        bcl_device_info_get(ctx, &d);
        bcl_params p = {0};
        p.mapping = v->hmap == BCL_MAPPING_AUTO ? BCL_MAPPING_AUTO : v->hmap;
        p.qr_mapping = v->qmap;
        p.work_items_per_problem = v->hp;
        p.qr_work_items = v->qp;
        p.qr_sweeps_max = 2;
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
        results r = run(ctx, &b, 1, BCL_NUMERICAL_FAILURE);
        int failed = 0, partial = 0;
        for (size_t k = 0; k < b.batch; ++k) {
            const int info = r.info[k];
            const double *wr = (const double *)r.wr + k * n, *wi = (const double *)r.wi + k * n;
            if (info == 0)
                continue;
            ++failed;
            assert_true(info >= 1 && info <= n);
            partial += info < n;
            for (int j = 0; j < info; ++j)
                assert_true(isnan(wr[j]) && isnan(wi[j]));
            assert_true(isnan(((double *)r.VR)[k * nn]));
            /* each converged eigenvalue is one of LAPACK's, within that one's bound */
            for (int j = info; j < n; ++j) {
                double best = INFINITY, bound = 0;
                for (int q = 0; q < n; ++q) {
                    const double d = hypot(wr[j] - b.wr[k * n + q], wi[j] - b.wi[k * n + q]);
                    if (d < best) {
                        best = d;
                        bound = EIG_LIMIT * n * oracle_eps(1) * b.abnrm[k] / b.rcond[k * n + q];
                    }
                }
                if (!(best <= bound))
                    fail_msg("%s: converged eigenvalue %d of matrix %zu (info %d) is %g%+gi, "
                             "%.3g from LAPACK's nearest (bound %.3g)",
                             v->name, j, k, info, wr[j], wi[j], best, bound);
            }
        }
        if (failed == 0 || partial == 0)
            fail_msg("%s: %d matrices unconverged, %d partially: the limit did not bite", v->name,
                     failed, partial);
        /* the cyclic shift needs the exceptional shifts, which come after 10 sweeps */
        for (size_t k = 1; k < b.batch; k += 3)
            assert_true(r.info[k] > 0);
        free_results(&r);
        free_batch(&b);
    }
    bcl_destroy(ctx);
}

/* ---- chunked host calls: every transfer path gives the unchunked results bit for bit ---- */

/* The timeline bcl_last_step_times writes (BATCHCL_TIMELINE) of a chunked call that copies: every
 * chunk's copy in ended before its Hessenberg kernel started, and with several queues the chunks'
 * kernels ran on more than one. Returns the number of chunks. */
static int check_timeline(const char *path, int queues)
{
    /* read whole and removed first, so that a failed assertion leaves no file behind */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    rewind(f);
    char *text = calloc((size_t)size + 1, 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    remove(path);
    double copied_end = -1;
    int chunks = 0, queue_seen[16] = {0};
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char queue[16], step[32];
        double start, end;
        /* "QUEUE STEP START END", STEP one or two words */
        char *last = strrchr(line, ' ');
        assert_non_null(last);
        *last = 0;
        char *before = strrchr(line, ' ');
        assert_non_null(before);
        *before = 0;
        end = atof(last + 1);
        start = atof(before + 1);
        assert_int_equal(sscanf(line, "%15s %31[^\n]", queue, step), 2);
        assert_true(end >= start);
        if (!strcmp(step, "transfer in")) {
            copied_end = end;
        } else if (!strcmp(step, "hessenberg")) {
            assert_true(copied_end >= 0); /* a chunk's copy comes first */
            if (start + 0.5 < copied_end)
                fail_msg("chunk %d: the Hessenberg kernel started at %.1f us, before its copy in "
                         "ended at %.1f us", chunks, start, copied_end);
            const int q = atoi(queue);
            assert_true(q >= 0 && q < 16);
            queue_seen[q] = 1;
            copied_end = -1;
            ++chunks;
        }
    }
    free(text);
    int used = 0;
    for (int q = 0; q < 16; ++q)
        used += queue_seen[q];
    if (chunks > 1 && queues != 1)
        assert_true(used > 1);
    return chunks;
}

static void solve_chunked(const char *zero_copy, const char *staging, const char *mem_limit,
                          size_t chunk, int queues, int pinned)
{
    const int n = 10, dbl = 1;
    const size_t batch = 300, nn = (size_t)n * n;
    setenv("BATCHCL_ZERO_COPY", zero_copy, 1);
    setenv("BATCHCL_STAGING", staging, 1);
    if (mem_limit)
        setenv("BATCHCL_DEVICE_MEMORY_LIMIT", mem_limit, 1);
    bcl_context *ctx = tu_context();
    unsetenv("BATCHCL_ZERO_COPY");
    unsetenv("BATCHCL_STAGING");
    unsetenv("BATCHCL_DEVICE_MEMORY_LIMIT");
    ref_batch b = make_batch(n, dbl, NULL, 0, 25, 1234);
    b.batch = batch;
    double *A, *wr, *wi, *VR;
    if (pinned) {
        A = bcl_host_alloc(ctx, batch * nn * sizeof *A);
        wr = bcl_host_alloc(ctx, batch * n * sizeof *wr);
        wi = bcl_host_alloc(ctx, batch * n * sizeof *wi);
        VR = bcl_host_alloc(ctx, batch * nn * sizeof *VR);
        assert_true(A && wr && wi && VR);
    } else {
        A = tu_alloc(batch * nn, 1);
        wr = tu_alloc(batch * n, 1);
        wi = tu_alloc(batch * n, 1);
        VR = tu_alloc(batch * nn, 1);
    }
    memcpy(A, b.A, batch * nn * sizeof *A);
    A[150 * nn + 7] = NAN; /* one failure in the middle of a chunk */
    int *info = calloc(batch, sizeof *info), *info_ref = calloc(batch, sizeof *info_ref);
    double *wr_ref = tu_alloc(batch * n, 1), *wi_ref = tu_alloc(batch * n, 1),
           *VR_ref = tu_alloc(batch * nn, 1);
    TU_STATUS(ctx, BCL_NUMERICAL_FAILURE, bcl_dgeev(ctx, n, batch, A, wr_ref, wi_ref, VR_ref, info_ref));
    bcl_params p = {0};
    p.chunk_problems = chunk;
    p.queues = queues;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    TU_STATUS(ctx, BCL_NUMERICAL_FAILURE, bcl_dgeev(ctx, n, batch, A, wr, wi, VR, info));
    /* the chunks' commands in time: each chunk's kernels after its copy in */
    char timeline[] = "/tmp/batchcl-timeline-XXXXXX";
    const int fd = mkstemp(timeline);
    assert_true(fd >= 0);
    close(fd);
    setenv("BATCHCL_TIMELINE", timeline, 1);
    const char *names[8];
    double secs[8];
    const int steps = bcl_last_step_times(ctx, names, secs, 8);
    unsetenv("BATCHCL_TIMELINE");
    if (strcmp(zero_copy, "0") == 0) {
        const int chunks = check_timeline(timeline, queues);
        if (chunk)
            assert_int_equal(chunks, (int)((batch + chunk - 1) / chunk));
        else
            assert_true(chunks > 1);
    } else {
        remove(timeline);
    }
    assert_memory_equal(wr, wr_ref, batch * n * sizeof *wr);
    assert_memory_equal(wi, wi_ref, batch * n * sizeof *wi);
    assert_memory_equal(VR, VR_ref, batch * nn * sizeof *VR);
    assert_memory_equal(info, info_ref, batch * sizeof *info);
    assert_int_equal(info[150], n);
    for (size_t k = 0; k < batch; ++k)
        assert_true(k == 150 || info[k] == 0);
    /* the steps were timed */
    int hess = 0, qr = 0, vec = 0;
    for (int i = 0; i < steps; ++i) {
        hess |= !strcmp(names[i], "hessenberg") && secs[i] > 0;
        qr |= !strcmp(names[i], "qr") && secs[i] > 0;
        vec |= !strcmp(names[i], "vectors") && secs[i] > 0;
    }
    assert_true(hess && qr && vec);
    if (pinned) {
        bcl_host_free(ctx, A);
        bcl_host_free(ctx, wr);
        bcl_host_free(ctx, wi);
        bcl_host_free(ctx, VR);
    } else {
        free(A);
        free(wr);
        free(wi);
        free(VR);
    }
    free(wr_ref);
    free(wi_ref);
    free(VR_ref);
    free(info);
    free(info_ref);
    free_batch(&b);
    bcl_destroy(ctx);
}

static void test_chunked_transfers(void **state)
{
    (void)state;
    solve_chunked("1", "0", NULL, 64, 1, 0);  /* zero-copy where the device allows it */
    solve_chunked("0", "0", NULL, 64, 3, 0);  /* device buffers, three queues, direct copies */
    solve_chunked("0", "1", NULL, 77, 2, 0);  /* through pinned staging buffers */
    solve_chunked("0", "1", NULL, 50, 3, 1);  /* the caller's pinned memory, no staging */
    solve_chunked("0", "0", NULL, 1, 2, 0);   /* one matrix per chunk */
    /* a device "smaller" than the batch: chunks come from device memory */
    solve_chunked("0", "1", "400000", 0, 0, 0);
}

/* ---- device buffers: all three arrangements, offsets, events ---- */

static void test_device_buffers(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    cl_context cl = bcl_cl_context(ctx);
    cl_command_queue q = bcl_cl_queue(ctx);
    for (int dbl = 1; dbl >= 0; --dbl)
        for (size_t pi = 0; pi < 2; ++pi) {
            const variant *v = &variants[pi == 0 ? 0 : 4];
            const int n = 7;
            const size_t nn = (size_t)n * n, es = dbl ? 8 : 4, off = 3;
            ref_batch b = make_batch(n, dbl, NULL, 0, 3, 5u + pi);
            const size_t batch = b.batch;
            apply(ctx, v);
            results host = run(ctx, &b, 1, BCL_SUCCESS);
            for (int layout = 0; layout < 3; ++layout) {
                /* host copies in the device arrangement */
                void *Al = tu_alloc(batch * nn + off, dbl);
                for (size_t k = 0; k < batch; ++k)
                    for (size_t e = 0; e < nn; ++e) {
                        const size_t i = e % n, j = e / n;
                        const size_t at = layout == 1   ? e * batch + k
                                          : layout == 2 ? (i * batch + k) * n + j
                                                        : k * nn + e;
                        oracle_set(Al, dbl, off + at, oracle_get(b.A, dbl, k * nn + e));
                    }
                cl_int err;
                cl_mem dA = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                           (batch * nn + off) * es, Al, &err);
                /* wr and wi in one buffer, after each other */
                cl_mem dW = clCreateBuffer(cl, CL_MEM_READ_WRITE, (2 * batch * n + off) * es, NULL, &err);
                cl_mem dV = clCreateBuffer(cl, CL_MEM_READ_WRITE, (batch * nn + off) * es, NULL, &err);
                cl_mem dI = clCreateBuffer(cl, CL_MEM_READ_WRITE, (batch + off) * sizeof(int), NULL, &err);
                cl_event user = clCreateUserEvent(cl, &err), ev = NULL;
                const bcl_layout lay = (bcl_layout)layout;
                TU_STATUS(ctx, BCL_SUCCESS,
                          dbl ? bcl_dgeev_cl(ctx, n, batch, lay, dA, off, dW, off, dW, off + batch * n,
                                             dV, off, dI, off, 1, &user, &ev)
                              : bcl_sgeev_cl(ctx, n, batch, lay, dA, off, dW, off, dW, off + batch * n,
                                             dV, off, dI, off, 1, &user, &ev));
                assert_non_null(ev);
                clSetUserEventStatus(user, CL_COMPLETE);
                void *Wl = tu_alloc(2 * batch * n + off, dbl), *Vl = tu_alloc(batch * nn + off, dbl);
                int info[64];
                clEnqueueReadBuffer(q, dW, CL_TRUE, 0, (2 * batch * n + off) * es, Wl, 1, &ev, NULL);
                clEnqueueReadBuffer(q, dV, CL_TRUE, 0, (batch * nn + off) * es, Vl, 0, NULL, NULL);
                clEnqueueReadBuffer(q, dI, CL_TRUE, 0, (batch + off) * sizeof(int), info, 0, NULL, NULL);
                clReleaseEvent(ev);
                clReleaseEvent(user);
                /* the same arithmetic as the host-pointer path, bit for bit */
                for (size_t k = 0; k < batch; ++k) {
                    assert_int_equal(info[off + k], 0);
                    for (size_t e = 0; e < (size_t)n; ++e) {
                        const size_t at = layout == 1 ? e * batch + k : k * n + e;
                        if (oracle_get(Wl, dbl, off + at) != oracle_get(host.wr, dbl, k * n + e) ||
                            oracle_get(Wl, dbl, off + batch * n + at) != oracle_get(host.wi, dbl, k * n + e))
                            fail_msg("%s layout %d: eigenvalue %zu of matrix %zu differs from the "
                                     "host-pointer path", v->name, layout, e, k);
                    }
                    for (size_t e = 0; e < nn; ++e) {
                        const size_t i = e % n, j = e / n;
                        const size_t at = layout == 1   ? e * batch + k
                                          : layout == 2 ? (i * batch + k) * n + j
                                                        : k * nn + e;
                        if (oracle_get(Vl, dbl, off + at) != oracle_get(host.VR, dbl, k * nn + e))
                            fail_msg("%s layout %d: VR of matrix %zu differs from the host-pointer "
                                     "path", v->name, layout, k);
                    }
                }
                /* eigenvalues only (VR NULL), no event wanted */
                TU_STATUS(ctx, BCL_SUCCESS,
                          dbl ? bcl_dgeev_cl(ctx, n, batch, lay, dA, off, dW, off, dW, off + batch * n,
                                             NULL, 0, dI, off, 0, NULL, NULL)
                              : bcl_sgeev_cl(ctx, n, batch, lay, dA, off, dW, off, dW, off + batch * n,
                                             NULL, 0, dI, off, 0, NULL, NULL));
                void *W2 = tu_alloc(2 * batch * n + off, dbl);
                clEnqueueReadBuffer(q, dW, CL_TRUE, 0, (2 * batch * n + off) * es, W2, 0, NULL, NULL);
                assert_memory_equal(W2, Wl, (2 * batch * n + off) * es);
                free(W2);
                clReleaseMemObject(dA);
                clReleaseMemObject(dW);
                clReleaseMemObject(dV);
                clReleaseMemObject(dI);
                free(Al);
                free(Wl);
                free(Vl);
            }
            free_results(&host);
            free_batch(&b);
        }
    bcl_destroy(ctx);
}

/* ---- bad arguments: a clear status, and no output touched ---- */

static void test_bad_arguments(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    const int n = 4;
    const size_t batch = 3;
    double A[48], wr[12], wi[12], VR[48];
    int info[3];
    for (int i = 0; i < 48; ++i)
        A[i] = (double)((i * 7) % 5) - 2;
    tu_poison(wr, sizeof wr);
    tu_poison(wi, sizeof wi);
    tu_poison(VR, sizeof VR);
    tu_poison(info, sizeof info);
#define BAD(expect, call)                                                                        \
    do {                                                                                         \
        TU_STATUS(ctx, expect, call);                                                            \
        assert_true(strlen(bcl_last_error(ctx)) > 0 || (expect) == BCL_SUCCESS);                 \
        assert_true(tu_is_poisoned(wr, sizeof wr) && tu_is_poisoned(wi, sizeof wi) &&            \
                    tu_is_poisoned(VR, sizeof VR) && tu_is_poisoned(info, sizeof info));         \
    } while (0)
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_dgeev(NULL, n, batch, A, wr, wi, VR, info));
    assert_non_null(strstr(bcl_last_error(NULL), "argument 1 (ctx)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, -1, batch, A, wr, wi, VR, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 2 (n = -1)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, (size_t)-1 / 16, A, wr, wi, VR, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 3"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, batch, NULL, wr, wi, VR, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 4 (A)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, batch, A, NULL, wi, VR, info));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 5 (wr)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, batch, A, wr, NULL, VR, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, batch, A, wr, wi, VR, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 8 (info)"));
    /* overlapping arrays */
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, batch, A, A + 40, wi, VR, info));
    assert_non_null(strstr(bcl_last_error(ctx), "wr overlaps A"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, batch, A, wr, wr + 1, VR, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, batch, A, wr, wi, wi, info));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, batch, A, wr, wi, VR, (int *)(void *)(VR + 3)));
    /* sizes beyond the routine */
    double *big = calloc(257 * 257, sizeof *big), *bwr = calloc(257, sizeof *bwr),
           *bwi = calloc(257, sizeof *bwi);
    TU_STATUS(ctx, BCL_UNSUPPORTED_SIZE, bcl_dgeev(ctx, 257, 1, big, bwr, bwi, NULL, info));
    assert_true(tu_is_poisoned(info, sizeof info));
    free(big);
    free(bwr);
    free(bwi);
    /* a forced SWB mapping wider than a subgroup */
    bcl_params p = {0};
    p.mapping = BCL_MAPPING_SWB;
    p.work_items_per_problem = 4096;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    BAD(BCL_UNSUPPORTED_SIZE, bcl_dgeev(ctx, n, batch, A, wr, wi, VR, info));
    assert_non_null(strstr(bcl_last_error(ctx), "SWB"));
    p.mapping = BCL_MAPPING_AUTO;
    p.work_items_per_problem = 0;
    p.qr_mapping = BCL_MAPPING_HYBRID;
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_set_params(ctx, &p));
    p.qr_mapping = BCL_MAPPING_AUTO;
    p.hess_layout = 9;
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_set_params(ctx, &p));
    p.hess_layout = 0;
    p.qr_bulges = 3;
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_set_params(ctx, &p));
    assert_non_null(strstr(bcl_last_error(ctx), "qr_bulges"));
    /* two bulges forced on a QR step that cannot split its work-items */
    p.qr_bulges = 2;
    p.qr_mapping = BCL_MAPPING_SWB;
    p.qr_work_items = 3;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, batch, A, wr, wi, VR, info));
    assert_non_null(strstr(bcl_last_error(ctx), "qr_bulges = 2"));
    p.qr_mapping = BCL_MAPPING_MWB;
    p.qr_work_items = 2;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev(ctx, n, batch, A, wr, wi, VR, info));
    assert_non_null(strstr(bcl_last_error(ctx), "SWB mapping"));
    bcl_set_params(ctx, NULL);
    /* zero sizes: success at once, nothing touched, NULL pointers accepted */
    BAD(BCL_SUCCESS, bcl_dgeev(ctx, 0, batch, NULL, NULL, NULL, NULL, NULL));
    BAD(BCL_SUCCESS, bcl_sgeev(ctx, n, 0, NULL, NULL, NULL, NULL, NULL));
    /* device-buffer entry points */
    cl_int err;
    cl_mem small = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 64, NULL, &err);
    cl_mem buf = clCreateBuffer(bcl_cl_context(ctx), CL_MEM_READ_WRITE, 8192, NULL, &err);
    const bcl_layout c = BCL_LAYOUT_CONTIGUOUS;
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev_cl(ctx, n, batch, c, small, 0, buf, 0, buf, 100, NULL, 0,
                                           buf, 800, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 5 (A)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev_cl(ctx, n, batch, c, buf, 0, NULL, 0, buf, 100, NULL, 0,
                                           buf, 800, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 7 (wr)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev_cl(ctx, n, batch, c, buf, 0, buf, 200, buf, 1020, NULL, 0,
                                           buf, 1800, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 9 (wi)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev_cl(ctx, n, batch, c, buf, 0, buf, 200, buf, 300, small, 0,
                                           buf, 1800, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 11 (VR)"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev_cl(ctx, n, batch, (bcl_layout)5, buf, 0, buf, 200, buf,
                                           300, NULL, 0, buf, 1800, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 4"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev_cl(ctx, n, batch, c, buf, 0, buf, 200, buf, 300, NULL, 0,
                                           buf, 1800, 1, NULL, NULL));
    /* outputs overlapping each other or A inside one buffer */
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev_cl(ctx, n, batch, c, buf, 0, buf, 40, buf, 300, NULL, 0,
                                           buf, 1800, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "wr overlaps A"));
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev_cl(ctx, n, batch, c, buf, 0, buf, 200, buf, 205, NULL, 0,
                                           buf, 1800, 0, NULL, NULL));
    /* a buffer of another OpenCL context */
    cl_device_id dev = bcl_cl_device(ctx);
    cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, 8192, NULL, &err);
    BAD(BCL_INVALID_ARGUMENT, bcl_dgeev_cl(ctx, n, batch, c, foreign, 0, buf, 200, buf, 300, NULL,
                                           0, buf, 1800, 0, NULL, NULL));
    assert_non_null(strstr(bcl_last_error(ctx), "another OpenCL context"));
    /* an empty device call still hands back an event */
    cl_event ev = NULL;
    BAD(BCL_SUCCESS, bcl_sgeev_cl(ctx, n, 0, c, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, 0,
                                  NULL, &ev));
    assert_non_null(ev);
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
    clReleaseMemObject(foreign);
    clReleaseContext(other);
    clReleaseMemObject(small);
    clReleaseMemObject(buf);
    bcl_destroy(ctx);
#undef BAD
}

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
    const struct CMUnitTest values_d[] = {cmocka_unit_test(test_values_double)};
    const struct CMUnitTest values_s[] = {cmocka_unit_test(test_values_single)};
    const struct CMUnitTest mappings[] = {cmocka_unit_test(test_mappings),
                                          cmocka_unit_test(test_two_bulges)};
    const struct CMUnitTest vectors[] = {cmocka_unit_test(test_vectors)};
    const struct CMUnitTest numerics[] = {cmocka_unit_test(test_scaled_norms),
                                          cmocka_unit_test(test_subnormal_columns),
                                          cmocka_unit_test(test_vectors_overflow),
                                          cmocka_unit_test(test_failure_isolation),
                                          cmocka_unit_test(test_no_convergence)};
    const struct CMUnitTest api[] = {cmocka_unit_test(test_bad_arguments),
                                     cmocka_unit_test(test_device_buffers),
                                     cmocka_unit_test_teardown(test_chunked_transfers, tu_clear_transfer_env)};
    int failed = 0, all = !strcmp(group, "all");
    if (all || !strcmp(group, "api"))
        failed += cmocka_run_group_tests_name("geev api", api, NULL, NULL);
    if (all || !strcmp(group, "numerics"))
        failed += cmocka_run_group_tests_name("geev numerics", numerics, NULL, NULL);
    if (all || !strcmp(group, "mappings"))
        failed += cmocka_run_group_tests_name("geev mappings", mappings, NULL, NULL);
    if (all || !strcmp(group, "vectors"))
        failed += cmocka_run_group_tests_name("geev vectors", vectors, NULL, NULL);
    if (all || !strcmp(group, "values-d"))
        failed += cmocka_run_group_tests_name("geev values double", values_d, NULL, NULL);
    if (all || !strcmp(group, "values-s"))
        failed += cmocka_run_group_tests_name("geev values single", values_s, NULL, NULL);
    return failed ? 1 : 0;
}
