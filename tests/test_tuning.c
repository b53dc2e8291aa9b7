/* The tuning database: lookup order (user directory, installed files, architecture, vendor,
 * device type, heuristic), exact and nearest sizes, malformed and mismatched files, forced
 * parameters over tuned ones, that the kernel built from a tuned entry is the one that runs, and
 * that `batchcl-tune --quick` writes a file which the library then uses. */
#include "testutil.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_root[512];

static void make_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", tmp_root, name);
    mkdir(out, 0777);
}

static void write_text(const char *dir, const char *file, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char *type_of(const bcl_device_info *d)
{
    return d->is_gpu ? "GPU" : "CPU";
}

/* A tuning file for a device described by name/vendor/type/arch, holding `entries` (JSON text of
 * the array's items). */
static void write_db(const char *dir, const char *file, const char *name, const char *vendor,
                     const char *type, const char *arch, const char *entries)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"format\": \"batchcl-tuning\", \"version\": 1,\n"
             " \"device\": {\"name\": \"%s\", \"vendor\": \"%s\", \"type\": \"%s\", "
             "\"architecture\": \"%s\"},\n"
             " \"entries\": [%s]}\n",
             name, vendor, type, arch, entries);
    write_text(dir, file, text);
}

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmp_root, sizeof tmp_root, "/tmp/batchcl-test-tuning-%d", (int)getpid());
    mkdir(tmp_root, 0777);
    return 0;
}

static int teardown_tmp(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    return system(cmd) == 0 ? 0 : -1;
}

static bcl_tuning_choice query(bcl_context *ctx, const char *routine, int dbl, int n)
{
    bcl_tuning_choice c;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_tuning_query(ctx, routine, dbl, n, &c));
    return c;
}

static int ends_with(const char *s, const char *tail)
{
    const size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

/* user dir before installed dir; exact device before architecture before vendor before type */
static void test_lookup_order(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    bcl_device_info d;
    bcl_device_info_get(ctx, &d);
    char user[600], inst[600], other[600];
    make_dir(user, sizeof user, "order-user");
    make_dir(inst, sizeof inst, "order-installed");
    make_dir(other, sizeof other, "order-fallbacks");
    const char *e8 = "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":8,\"params\":{\"mapping\":"
                     "\"simd\",\"problems_per_work_item\":2,\"problems_per_group\":16},"
                     "\"throughput\":2e6,\"default_throughput\":1e6}";
    const char *e8u = "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":8,\"params\":{\"mapping\":"
                      "\"simd\",\"problems_per_work_item\":4,\"problems_per_group\":16}}";
    const char *e16 = "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":16,\"params\":{\"mapping\":"
                      "\"simd\",\"problems_per_work_item\":1,\"problems_per_group\":64}}";
    char both[4096];
    snprintf(both, sizeof both, "%s,%s", e8, e16);
    write_db(inst, "exact.json", d.name, d.vendor, type_of(&d), d.architecture, both);

    /* the installed file alone */
    char path[1300];
    snprintf(path, sizeof path, "%s:%s", user, inst);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, path));
    bcl_tuning_choice c = query(ctx, "ldlt", 0, 8);
    assert_int_equal(c.level, BCL_TUNING_EXACT);
    assert_true(ends_with(c.file, "order-installed/exact.json"));
    assert_int_equal(c.tuned_n, 8);
    assert_int_equal(c.params.mapping, BCL_MAPPING_SIMD);
    assert_int_equal(c.params.problems_per_work_item, 2);
    assert_int_equal(c.params.problems_per_group, 16);
    assert_true(c.throughput == 2e6 && c.default_throughput == 1e6);
    /* the other precision is not tuned: heuristic */
    assert_int_equal(query(ctx, "ldlt", 1, 8).level, BCL_TUNING_HEURISTIC);
    assert_int_equal(query(ctx, "geev", 0, 8).level, BCL_TUNING_HEURISTIC);

    /* a user file wins for the size it has; the installed file still serves n = 16 */
    write_db(user, "mine.json", d.name, d.vendor, type_of(&d), d.architecture, e8u);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, path));
    c = query(ctx, "ldlt", 0, 8);
    assert_true(ends_with(c.file, "order-user/mine.json"));
    assert_int_equal(c.params.problems_per_work_item, 4);
    c = query(ctx, "ldlt", 0, 16);
    assert_true(ends_with(c.file, "order-installed/exact.json"));
    assert_int_equal(c.params.problems_per_group, 64);
    /* a size no file has: the nearest size of the best file */
    c = query(ctx, "ldlt", 0, 9);
    assert_true(ends_with(c.file, "order-user/mine.json"));
    assert_int_equal(c.tuned_n, 8);
    assert_int_equal(c.params.problems_per_work_item, 4);

    /* the environment variable puts its directories first in the default path */
    setenv("BATCHCL_TUNING_DIR", user, 1);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, NULL));
    c = query(ctx, "ldlt", 0, 8);
    assert_int_equal(c.level, BCL_TUNING_EXACT);
    assert_true(ends_with(c.file, "order-user/mine.json"));
    unsetenv("BATCHCL_TUNING_DIR");

    /* fallbacks, each file alone, then all together */
    struct {
        const char *file, *name, *vendor, *type, *arch;
        bcl_tuning_level level;
    } fb[] = {
        {"arch.json", "Some other device", "Some other vendor", type_of(&d), d.architecture,
         BCL_TUNING_ARCHITECTURE},
        {"vendor.json", "Some other device", d.vendor, type_of(&d), "other-arch", BCL_TUNING_VENDOR},
        {"type.json", "Some other device", "Some other vendor", type_of(&d), "other-arch",
         BCL_TUNING_DEVICE_TYPE},
        {"elsewhere.json", "Some other device", "Some other vendor", "ACCELERATOR", "other-arch",
         BCL_TUNING_HEURISTIC},
    };
    for (size_t i = 0; i < sizeof fb / sizeof fb[0]; ++i) {
        if (fb[i].level == BCL_TUNING_ARCHITECTURE && !d.architecture[0])
            continue; /* the driver does not tell the architecture */
        char dir[600];
        char sub[64];
        snprintf(sub, sizeof sub, "fallback-%zu", i);
        make_dir(dir, sizeof dir, sub);
        write_db(dir, fb[i].file, fb[i].name, fb[i].vendor, fb[i].type, fb[i].arch, e16);
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
        c = query(ctx, "ldlt", 0, 16);
        assert_int_equal(c.level, fb[i].level);
        if (fb[i].level == BCL_TUNING_HEURISTIC) {
            assert_string_equal(c.file, "");
            assert_non_null(strstr(bcl_tuning_report(ctx), "another type of device"));
        } else {
            assert_true(ends_with(c.file, fb[i].file));
        }
        write_db(other, fb[i].file, fb[i].name, fb[i].vendor, fb[i].type, fb[i].arch, e16);
    }
    /* all fallbacks in one directory: the closest match wins, an exact file beats them all */
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, other));
    assert_int_equal(query(ctx, "ldlt", 0, 16).level,
                     d.architecture[0] ? BCL_TUNING_ARCHITECTURE : BCL_TUNING_VENDOR);
    snprintf(path, sizeof path, "%s:%s", other, inst);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, path));
    c = query(ctx, "ldlt", 0, 16);
    assert_int_equal(c.level, BCL_TUNING_EXACT);
    assert_true(ends_with(c.file, "order-installed/exact.json"));

    /* a level's nearest size beats a lower level's exact size */
    char cross[600];
    make_dir(cross, sizeof cross, "order-cross");
    write_db(cross, "a-other-vendor.json", "Some other device", "Some other vendor", type_of(&d),
             "other-arch",
             "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":9,\"params\":{\"mapping\":\"simd\","
             "\"problems_per_work_item\":1}}");
    write_db(cross, "b-mine.json", d.name, d.vendor, type_of(&d), d.architecture, e8u);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, cross));
    c = query(ctx, "ldlt", 0, 9);
    assert_int_equal(c.level, BCL_TUNING_EXACT);
    assert_int_equal(c.tuned_n, 8);
    assert_int_equal(c.params.problems_per_work_item, 4);
    /* and the lower level still serves what the higher one does not tune */
    assert_int_equal(query(ctx, "ldlt", 1, 9).level, BCL_TUNING_HEURISTIC);

    /* no file at all */
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, ""));
    c = query(ctx, "ldlt", 0, 16);
    assert_int_equal(c.level, BCL_TUNING_HEURISTIC);
    assert_string_equal(bcl_tuning_report(ctx), "");
    bcl_destroy(ctx);
}

/* counts that follow the size are rescaled for a size that was not tuned */
static void test_nearest_size(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    bcl_device_info d;
    bcl_device_info_get(ctx, &d);
    char dir[600];
    make_dir(dir, sizeof dir, "nearest");
    write_db(dir, "db.json", d.name, d.vendor, type_of(&d), d.architecture,
             "{\"routine\":\"ldlt\",\"precision\":\"d\",\"n\":32,\"params\":{\"mapping\":\"hybrid\","
             "\"work_items_per_problem\":16,\"problems_per_group\":8}},"
             "{\"routine\":\"tridiag\",\"precision\":\"s\",\"n\":256,\"params\":{\"mapping\":"
             "\"hybrid\",\"rows_per_work_item\":4}},"
             "{\"routine\":\"tridiag\",\"precision\":\"s\",\"n\":4096,\"params\":{\"mapping\":"
             "\"hybrid\",\"rows_per_work_item\":16}}");
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
    /* n = 20: two rows per work-item as at n = 32, so n* = 10, and 128 work-items per group */
    bcl_tuning_choice c = query(ctx, "ldlt", 1, 20);
    assert_int_equal(c.tuned_n, 32);
    assert_int_equal(c.params.mapping, BCL_MAPPING_HYBRID);
    assert_int_equal(c.params.work_items_per_problem, 10);
    assert_int_equal(c.params.problems_per_group, 12);
    /* n = 3: n* = 2; n = 1: one row per work-item: collaborative */
    c = query(ctx, "ldlt", 1, 3);
    assert_int_equal(c.params.mapping, BCL_MAPPING_HYBRID);
    assert_int_equal(c.params.work_items_per_problem, 2);
    c = query(ctx, "ldlt", 1, 1);
    assert_int_equal(c.params.mapping, BCL_MAPPING_COLLABORATIVE);
    assert_int_equal(c.params.work_items_per_problem, 0);
    /* tridiagonal sizes compare on a log scale: 1024 lies as far from 256 as from 4096 (a factor
     * 4), and a tie goes to the smaller; 1500 is nearer 4096 */
    assert_int_equal(query(ctx, "tridiag", 0, 1024).tuned_n, 256);
    assert_int_equal(query(ctx, "tridiag", 0, 1500).tuned_n, 4096);
    assert_int_equal(query(ctx, "tridiag", 0, 1500).params.rows_per_work_item, 16);
    bcl_destroy(ctx);
}

static void expect_skipped(bcl_context *ctx, const char *dir, const char *file, const char *why)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    const char *rep = bcl_tuning_report(ctx);
    const char *at = strstr(rep, path);
    if (!at)
        fail_msg("the report does not name %s:\n%s", path, rep);
    const char *eol = strchr(at, '\n');
    char line[2048];
    snprintf(line, sizeof line, "%.*s", (int)(eol ? eol - at : (long)strlen(at)), at);
    if (!strstr(line, why) || !strstr(line, "skipped"))
        fail_msg("expected \"%s\" and \"skipped\" in: %s", why, line);
}

/* malformed and mismatched files are reported and skipped; a good file beside them still counts */
static void test_bad_files(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    bcl_device_info d;
    bcl_device_info_get(ctx, &d);
    char dir[600];
    make_dir(dir, sizeof dir, "bad");
    write_text(dir, "a-broken.json", "{\"format\": \"batchcl-tuning\", \"version\": 1,\n \"entries\": [ ");
    write_text(dir, "b-format.json", "{\"format\": \"something-else\", \"version\": 1}");
    write_text(dir, "c-version.json", "{\"format\": \"batchcl-tuning\", \"version\": 2}");
    write_text(dir, "d-device.json", "{\"format\": \"batchcl-tuning\", \"version\": 1, \"entries\": []}");
    const char *bad_entries[] = {
        "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":8,\"params\":{\"warp_magic\":3}}",
        "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":8,\"params\":{\"mapping\":\"banana\"}}",
        "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":8,\"params\":{\"queues\":9}}",
        "{\"routine\":\"ldlt\",\"precision\":\"q\",\"n\":8,\"params\":{}}",
        "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":0,\"params\":{}}",
        "{\"routine\":\"gesvd\",\"precision\":\"s\",\"n\":8,\"params\":{}}",
        "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":8,\"params\":{\"problems_per_work_item\":3}}",
        "{\"routine\":\"geev\",\"precision\":\"s\",\"n\":8,\"params\":{\"qr_mapping\":\"hybrid\"}}",
        "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":8,\"params\":{\"queues\":1e300}}",
        "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":8,\"params\":{},\"model\":{}}",
        "{\"routine\":\"pcyclic\",\"precision\":\"d\",\"n\":64,\"params\":{},\"model\":"
        "{\"host_step_s\":1e-3,\"dev_gemm_flops\":-1,\"dev_gemm_call_s\":0}}",
        "{\"routine\":\"pcyclic\",\"precision\":\"d\",\"n\":64,\"params\":{},\"model\":"
        "{\"host_step_s\":1e-3,\"dev_gemm_flops\":1e12,\"dev_gemm_call_s\":0,\"speed\":1}}",
        "{\"routine\":\"pcyclic\",\"precision\":\"d\",\"n\":64,\"params\":{},\"model\":"
        "{\"host_step_s\":1e-3,\"dev_gemm_flops\":1e12,\"dev_gemm_call_s\":0,"
        "\"host_step_s\":1}}",
        "{\"routine\":\"pcyclic\",\"precision\":\"d\",\"n\":64,\"params\":{},\"model\":"
        "{\"host_step_s\":1e-3,\"dev_gemm_flops\":1e12,\"dev_gemm_call_s\":0,"
        "\"host_gemm_flops\":0}}",
        "{\"routine\":\"pcyclic\",\"precision\":\"d\",\"n\":64,\"params\":{},\"model\":"
        "{\"host_step_s\":1e-3,\"dev_gemm_flops\":1e12,\"dev_gemm_call_s\":0,"
        "\"link_call_s\":-1}}",
    };
    const char *reasons[] = {"\"warp_magic\" is not a tuning parameter", "\"mapping\" must be one of",
                             "\"queues\" must be an integer in 0..4", "needs \"routine\"",
                             "needs \"routine\"", "needs \"routine\"",
                             "problems_per_work_item = 3 is not 0, 1, 2, 4, 8 or 16",
                             "qr_mapping 3 is not BCL_MAPPING_AUTO, _SWB or _MWB",
                             "\"queues\" must be an integer",
                             "only pcyclic entries hold a \"model\"",
                             "\"model\" needs \"dev_gemm_flops\", a positive number",
                             "\"model\": \"speed\" is not one of its constants",
                             "\"model\" repeats a constant",
                             "\"model\" needs \"host_gemm_flops\", a positive number",
                             "\"model\" needs \"link_call_s\", a non-negative number"};
    char name[64];
    for (size_t i = 0; i < sizeof bad_entries / sizeof *bad_entries; ++i) {
        snprintf(name, sizeof name, "e-entry-%zu.json", i);
        write_db(dir, name, d.name, d.vendor, type_of(&d), d.architecture, bad_entries[i]);
    }
    /* "clblast": clBLAST's direct GEMM parameters (src/gemm_params.h) */
    const char *bad_gemm[] = {
        "[]",
        "{\"q\": {}}",
        "{\"d\": {\"seconds\": 1}}",
        "{\"d\": {\"XgemmDirect\": {\"WGX\": 32}}}",
        "{\"d\": {\"XgemmDirect\": {\"WGD\": 32, \"MDIMCD\": 8}}}",
        "{\"d\": {\"XgemmDirect\": {\"WGD\": 24, \"MDIMCD\": 8, \"NDIMCD\": 8, \"MDIMAD\": 8, "
        "\"NDIMBD\": 8, \"KWID\": 2, \"VWMD\": 1, \"VWND\": 1, \"PADA\": 1, \"PADB\": 1}}}",
        "{\"d\": {\"XgemmDirect\": {\"WGD\": 32, \"MDIMCD\": 8, \"NDIMCD\": 8, \"MDIMAD\": 8, "
        "\"NDIMBD\": 8, \"KWID\": 2, \"VWMD\": 8, \"VWND\": 1, \"PADA\": 1, \"PADB\": 1}}}",
        "{\"d\": {\"XgemmDirect\": {\"WGD\": 32, \"MDIMCD\": 8, \"NDIMCD\": 8, \"MDIMAD\": 8, "
        "\"NDIMBD\": 8, \"KWID\": 2, \"VWMD\": 1, \"VWND\": 1, \"PADA\": 1, \"PADB\": 2}}}",
        "{\"d\": {\"XgemmDirect\": {\"WGD\": 64, \"MDIMCD\": 4, \"NDIMCD\": 4, \"MDIMAD\": 64, "
        "\"NDIMBD\": 4, \"KWID\": 1, \"VWMD\": 1, \"VWND\": 1, \"PADA\": 0, \"PADB\": 0}}}",
        "{\"d\": {\"XgemmDirect\": {\"WGD\": 32, \"WGD\": 32, \"NDIMCD\": 8, \"MDIMAD\": 8, "
        "\"NDIMBD\": 8, \"KWID\": 2, \"VWMD\": 1, \"VWND\": 1, \"PADA\": 1, \"PADB\": 1}}}",
    };
    const char *gemm_reasons[] = {"\"clblast\" is not an object",
                                  "\"q\" is not a precision",
                                  "needs an object \"XgemmDirect\"",
                                  "\"WGX\" is not one of XgemmDirect's parameters",
                                  "XgemmDirect needs each of its 10 parameters once",
                                  "WGD = 24: expected a power of two",
                                  "WGD = 32 is not a multiple of",
                                  "PADB = 2: expected a value from 0 to 1",
                                  "MDIMAD = 64 and NDIMBD = 4 must divide MDIMCD * NDIMCD = 16",
                                  "XgemmDirect repeats WGD"};
    for (size_t i = 0; i < sizeof bad_gemm / sizeof *bad_gemm; ++i) {
        char text[2048];
        snprintf(name, sizeof name, "f-gemm-%zu.json", i);
        snprintf(text, sizeof text,
                 "{\"format\": \"batchcl-tuning\", \"version\": 1, \"device\": {\"name\": \"%s\", "
                 "\"vendor\": \"%s\", \"type\": \"%s\"}, \"entries\": [], \"clblast\": %s}",
                 d.name, d.vendor, type_of(&d), bad_gemm[i]);
        write_text(dir, name, text);
    }
    write_db(dir, "z-good.json", d.name, d.vendor, type_of(&d), d.architecture,
             "{\"routine\":\"geev\",\"precision\":\"s\",\"n\":12,\"params\":{\"problems_per_group\":4}}");
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
    expect_skipped(ctx, dir, "a-broken.json", "not valid JSON (error at byte");
    expect_skipped(ctx, dir, "b-format.json", "not a batchcl tuning file");
    expect_skipped(ctx, dir, "c-version.json", "format version 2");
    expect_skipped(ctx, dir, "d-device.json", "no \"device\" object");
    for (size_t i = 0; i < sizeof bad_entries / sizeof *bad_entries; ++i) {
        snprintf(name, sizeof name, "e-entry-%zu.json", i);
        expect_skipped(ctx, dir, name, reasons[i]);
    }
    for (size_t i = 0; i < sizeof bad_gemm / sizeof *bad_gemm; ++i) {
        snprintf(name, sizeof name, "f-gemm-%zu.json", i);
        expect_skipped(ctx, dir, name, gemm_reasons[i]);
    }
    /* nothing of the skipped files is used; the good one is */
    bcl_tuning_choice c = query(ctx, "ldlt", 0, 8);
    assert_int_equal(c.level, BCL_TUNING_HEURISTIC);
    c = query(ctx, "geev", 0, 12);
    assert_int_equal(c.level, BCL_TUNING_EXACT);
    assert_int_equal(c.params.problems_per_group, 4);
    /* and the routines still run: a solve with the heuristic's parameters */
    const int n = 8;
    float *A = tu_alloc(n * n, 0), *B = tu_alloc(n, 0), *X = tu_alloc(n, 0);
    int info = -1;
    tu_spd_batch(0, 0, n, 1, 1, 0, 5, A, B);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_ssysv(ctx, BCL_LDLT, n, 1, 1, A, B, X, &info));
    assert_int_equal(info, 0);
    assert_true(oracle_sysv_residual(n, 1, 0, A, B, X) < 30);
    free(A);
    free(B);
    free(X);

    /* bad arguments of the query */
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_tuning_query(NULL, "ldlt", 0, 8, &c));
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_tuning_query(ctx, "gesvd", 0, 8, &c));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 2 (routine)"));
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_tuning_query(ctx, NULL, 0, 8, &c));
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_tuning_query(ctx, "ldlt", 2, 8, &c));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 3 (dbl)"));
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_tuning_query(ctx, "ldlt", 0, 0, &c));
    assert_non_null(strstr(bcl_last_error(ctx), "argument 4 (n)"));
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_tuning_query(ctx, "ldlt", 0, 8, NULL));
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_set_tuning_path(NULL, ""));
    assert_null(bcl_tuning_routine(99));
    assert_string_equal(bcl_tuning_routine(0), "ldlt");
    bcl_destroy(ctx);
}

/* An SPD solve at size n with whatever parameters are in force; returns the kernel that ran. */
static void solve_ldlt(bcl_context *ctx, int n, int dbl, char *kernel, size_t cap)
{
    const size_t batch = 37;
    void *A = tu_alloc(batch * (size_t)n * n, dbl), *B = tu_alloc(batch * (size_t)n, dbl),
         *X = tu_alloc(batch * (size_t)n, dbl);
    int *info = calloc(batch, sizeof *info);
    tu_spd_batch(0, 0, n, 1, batch, dbl, 11, A, B);
    TU_STATUS(ctx, BCL_SUCCESS,
              dbl ? bcl_dsysv(ctx, BCL_LDLT, n, 1, batch, A, B, X, info)
                  : bcl_ssysv(ctx, BCL_LDLT, n, 1, batch, A, B, X, info));
    snprintf(kernel, cap, "%s", bcl_last_kernel(ctx));
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    for (size_t k = 0; k < batch; ++k) {
        assert_int_equal(info[k], 0);
        const double r = oracle_sysv_residual(n, 1, dbl, (char *)A + k * n * n * es,
                                              (char *)B + k * n * es, (char *)X + k * n * es);
        if (!(r < 30))
            fail_msg("n = %d problem %zu: scaled residual %g with %s", n, k, r, kernel);
    }
    free(A);
    free(B);
    free(X);
    free(info);
}

static void solve_gtsv(bcl_context *ctx, int m, char *kernel, size_t cap)
{
    const size_t batch = 19, len = batch * (size_t)m;
    float *dl = malloc(len * sizeof *dl), *d = malloc(len * sizeof *d), *du = malloc(len * sizeof *du),
          *b = malloc(len * sizeof *b), *x = malloc(len * sizeof *x);
    int *info = calloc(batch, sizeof *info);
    mg_rng r;
    mg_seed(&r, 3);
    for (size_t i = 0; i < len; ++i) {
        dl[i] = (float)(2 * mg_uniform(&r) - 1);
        du[i] = (float)(2 * mg_uniform(&r) - 1);
        d[i] = (float)(3 + mg_uniform(&r));
        b[i] = x[i] = (float)(2 * mg_uniform(&r) - 1);
    }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_sgtsv(ctx, m, 1, batch, dl, d, du, x, info));
    snprintf(kernel, cap, "%s", bcl_last_kernel(ctx));
    for (size_t k = 0; k < batch; ++k) {
        assert_int_equal(info[k], 0);
        const size_t o = k * (size_t)m;
        assert_true(oracle_gtsv_residual(m, 1, 0, dl + o, d + o, du + o, b + o, x + o) < 30);
    }
    free(dl);
    free(d);
    free(du);
    free(b);
    free(x);
    free(info);
}

/* The kernel that runs under a tuned entry is the one its parameters build (the same as forcing
 * them), and forced parameters override the entry. */
static void test_tuned_kernel_runs(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    bcl_device_info d;
    bcl_device_info_get(ctx, &d);
    char dir[600];
    make_dir(dir, sizeof dir, "kernel");
    /* parameters no heuristic picks: two problems per work-item (SIMD) on CPUs, n* = 4 on GPUs */
    const char *entry = d.is_gpu
                            ? "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":12,\"params\":{"
                              "\"mapping\":\"hybrid\",\"work_items_per_problem\":4,"
                              "\"problems_per_group\":8}}"
                            : "{\"routine\":\"ldlt\",\"precision\":\"s\",\"n\":12,\"params\":{"
                              "\"mapping\":\"simd\",\"problems_per_work_item\":2,"
                              "\"problems_per_group\":16}}";
    write_db(dir, "db.json", d.name, d.vendor, type_of(&d), d.architecture, entry);
    char heuristic[512], tuned[512], forced[512], overridden[512];
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, ""));
    solve_ldlt(ctx, 12, 0, heuristic, sizeof heuristic);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
    solve_ldlt(ctx, 12, 0, tuned, sizeof tuned);
    assert_string_not_equal(tuned, heuristic);
    assert_non_null(strstr(tuned, d.is_gpu ? "-DROWS=3" : "-DVW=2"));
    assert_non_null(strstr(tuned, d.is_gpu ? "4 work-items per problem, 8 problems" : "16 problems"));
    /* the same kernel and shape as forcing the entry's parameters on the heuristic */
    bcl_params p;
    memset(&p, 0, sizeof p);
    if (d.is_gpu) {
        p.mapping = BCL_MAPPING_HYBRID;
        p.work_items_per_problem = 4;
        p.problems_per_group = 8;
    } else {
        p.mapping = BCL_MAPPING_SIMD;
        p.problems_per_work_item = 2;
        p.problems_per_group = 16;
    }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, ""));
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    solve_ldlt(ctx, 12, 0, forced, sizeof forced);
    assert_string_equal(forced, tuned);
    /* forced parameters win over the file */
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
    memset(&p, 0, sizeof p);
    p.mapping = BCL_MAPPING_COLLABORATIVE;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    bcl_tuning_choice c = query(ctx, "ldlt", 0, 12);
    assert_int_equal(c.level, BCL_TUNING_EXACT);
    assert_int_equal(c.params.mapping, BCL_MAPPING_COLLABORATIVE);
    solve_ldlt(ctx, 12, 0, overridden, sizeof overridden);
    assert_non_null(strstr(overridden, "mapping collaborative"));
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, NULL));
    bcl_destroy(ctx);
}

/* `batchcl-tune --quick` writes a valid file; a context reading it runs its entries' kernels. */
/* The JSON in the file at path, read into text (cap bytes); fails the test when it does not parse */
static cJSON *read_json(const char *path, char *text, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    const size_t len = fread(text, 1, cap - 1, f);
    fclose(f);
    text[len] = 0;
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    return root;
}

/* An 8 x 8, p = 3 inversion in double with the context's parameters, checked against the
 * assembled H (scaled residual). */
static void invert_small(bcl_context *ctx)
{
    const int n = 8, blocks = 3 * 8 * 8;
    double A[3 * 64], B[3 * 64], X[24 * 24];
    int info = -1;
    for (int i = 0; i < blocks; ++i) {
        A[i] = (i % 8 == i / 8 % 8 ? 3 : 0) + 0.01 * (i % 7);
        B[i] = 0.1 * ((i * 5) % 11) - 0.5;
    }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_dpcyclic_inv(ctx, n, 3, 1, A, B, X, &info));
    assert_int_equal(info, 0);
    assert_true(oracle_pcyclic_residual(n, 3, A, B, 1, X) < 30);
}

static void test_tuner_quick(void **state)
{
    (void)state;
    char dir[600];
    make_dir(dir, sizeof dir, "tuner");
    const char *device = getenv("BATCHCL_TEST_DEVICE");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "'%s' --quick --routine ldlt,tridiag --precision s --sizes 12,64 --output '%s' %s%s%s "
             "> '%s/tune.log' 2>&1",
             BATCHCL_TUNE_EXE, dir, device ? "--device '" : "", device ? device : "",
             device ? "'" : "", dir);
    const int rc = system(cmd);
    if (rc != 0) {
        snprintf(cmd, sizeof cmd, "cat '%s/tune.log'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "(no log)\n");
        fail_msg("batchcl-tune exited with status %d", rc);
    }
    /* exactly one file, named after the device */
    bcl_context *ctx = tu_context();
    bcl_device_info d;
    bcl_device_info_get(ctx, &d);
    snprintf(cmd, sizeof cmd, "ls '%s'/*.json > '%s/list.txt'", dir, dir);
    assert_int_equal(system(cmd), 0);
    char listing[1024];
    snprintf(listing, sizeof listing, "%s/list.txt", dir);
    FILE *f = fopen(listing, "r");
    assert_non_null(f);
    char path[1024] = "";
    assert_non_null(fgets(path, sizeof path, f));
    char extra[1024];
    assert_null(fgets(extra, sizeof extra, f));
    fclose(f);
    path[strcspn(path, "\n")] = 0;

    /* its content, checked independently of the library's reader */
    static char text[1 << 20];
    cJSON *root = read_json(path, text, sizeof text);
    assert_string_equal(cJSON_GetObjectItem(root, "format")->valuestring, "batchcl-tuning");
    assert_int_equal(cJSON_GetObjectItem(root, "version")->valueint, 1);
    cJSON *dev = cJSON_GetObjectItem(root, "device");
    assert_string_equal(cJSON_GetObjectItem(dev, "name")->valuestring, d.name);
    assert_string_equal(cJSON_GetObjectItem(dev, "vendor")->valuestring, d.vendor);
    assert_string_equal(cJSON_GetObjectItem(dev, "driver")->valuestring, d.driver_version);
    assert_non_null(cJSON_GetObjectItem(root, "date"));
    cJSON *entries = cJSON_GetObjectItem(root, "entries");
    assert_int_equal(cJSON_GetArraySize(entries), 4); /* ldlt 12 and 64, tridiag 12 and 64 */

    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
    for (cJSON *e = entries->child; e; e = e->next) {
        const char *routine = cJSON_GetObjectItem(e, "routine")->valuestring;
        const int n = cJSON_GetObjectItem(e, "n")->valueint;
        assert_string_equal(cJSON_GetObjectItem(e, "precision")->valuestring, "s");
        const double tp = cJSON_GetObjectItem(e, "throughput")->valuedouble,
                     dp = cJSON_GetObjectItem(e, "default_throughput")->valuedouble;
        assert_true(tp > 0 && dp > 0 && tp >= dp);
        cJSON *cands = cJSON_GetObjectItem(e, "candidates");
        assert_true(cJSON_GetArraySize(cands) >= 2);
        /* the chosen parameters are those of a candidate that ran and was verified */
        char *chosen = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "params"));
        int found = 0;
        for (cJSON *c = cands->child; c; c = c->next) {
            char *cp = cJSON_PrintUnformatted(cJSON_GetObjectItem(c, "params"));
            if (!strcmp(cp, chosen) && cJSON_IsNumber(cJSON_GetObjectItem(c, "throughput")))
                found = 1;
            free(cp);
        }
        assert_true(found);
        free(chosen);

        bcl_tuning_choice c = query(ctx, routine, 0, n);
        assert_int_equal(c.level, BCL_TUNING_EXACT);
        assert_string_equal(c.file, path);
        assert_int_equal(c.tuned_n, n);
        /* the kernel that runs is the one forcing the entry's parameters builds */
        bcl_params p;
        memset(&p, 0, sizeof p);
        cJSON *params = cJSON_GetObjectItem(e, "params");
        for (cJSON *item = params->child; item; item = item->next) {
            if (!strcmp(item->string, "mapping")) {
                const char *m = item->valuestring;
                p.mapping = !strcmp(m, "simd")            ? BCL_MAPPING_SIMD
                            : !strcmp(m, "collaborative") ? BCL_MAPPING_COLLABORATIVE
                            : !strcmp(m, "hybrid")        ? BCL_MAPPING_HYBRID
                                                          : BCL_MAPPING_AUTO;
            } else if (!strcmp(item->string, "work_items_per_problem")) {
                p.work_items_per_problem = item->valueint;
            } else if (!strcmp(item->string, "problems_per_group")) {
                p.problems_per_group = item->valueint;
            } else if (!strcmp(item->string, "problems_per_work_item")) {
                p.problems_per_work_item = item->valueint;
            } else if (!strcmp(item->string, "rows_per_work_item")) {
                p.rows_per_work_item = item->valueint;
            } else {
                fail_msg("unexpected tuned parameter %s", item->string);
            }
        }
        char with_file[512], with_forced[512];
        const int is_ldlt = !strcmp(routine, "ldlt");
        if (is_ldlt)
            solve_ldlt(ctx, n, 0, with_file, sizeof with_file);
        else
            solve_gtsv(ctx, n, with_file, sizeof with_file);
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, ""));
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
        if (is_ldlt)
            solve_ldlt(ctx, n, 0, with_forced, sizeof with_forced);
        else
            solve_gtsv(ctx, n, with_forced, sizeof with_forced);
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, NULL));
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
        assert_string_equal(with_file, with_forced);
    }
    cJSON_Delete(root);

    /* a second run resumes: nothing left to tune; --restart of one size replaces its entry in
     * place; the file keeps four entries, one per size, in the same order */
    const char *dev_opt = device ? device : "";
    snprintf(cmd, sizeof cmd,
             "'%s' --quick --routine ldlt --precision s --sizes 12,12 --output '%s' %s%s%s > "
             "'%s/tune2.log' 2>&1 && grep -q 'batchcl-tune: 0 sizes tuned' '%s/tune2.log' && "
             "'%s' --quick --restart --routine ldlt --precision s --sizes 12 --output '%s' "
             "%s%s%s > '%s/tune3.log' 2>&1 && grep -q 'batchcl-tune: 1 sizes tuned' '%s/tune3.log'",
             BATCHCL_TUNE_EXE, dir, device ? "--device '" : "", dev_opt, device ? "'" : "", dir, dir,
             BATCHCL_TUNE_EXE, dir, device ? "--device '" : "", dev_opt, device ? "'" : "", dir,
             dir);
    assert_int_equal(system(cmd), 0);
    root = read_json(path, text, sizeof text);
    entries = cJSON_GetObjectItem(root, "entries");
    assert_int_equal(cJSON_GetArraySize(entries), 4);
    assert_string_equal(cJSON_GetObjectItem(entries->child, "routine")->valuestring, "ldlt");
    assert_int_equal(cJSON_GetObjectItem(entries->child, "n")->valueint, 12);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(entries->child, "quick")));
    cJSON_Delete(root);

    /* a file that cannot be parsed is never overwritten without --restart */
    FILE *bad = fopen(path, "a");
    assert_non_null(bad);
    fputs("{ trailing garbage", bad);
    fclose(bad);
    snprintf(cmd, sizeof cmd,
             "'%s' --quick --routine ldlt --precision s --sizes 8 --output '%s' %s%s%s > "
             "'%s/tune4.log' 2>&1",
             BATCHCL_TUNE_EXE, dir, device ? "--device '" : "", dev_opt, device ? "'" : "", dir);
    assert_int_not_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "grep -q 'cannot be read as JSON' '%s/tune4.log'", dir);
    assert_int_equal(system(cmd), 0);
    /* pcyclic entries carry the performance model's constants, which calls on this device then
     * take (method 1's plan names where its model came from) */
    if (bcl_pcyclic_has_clblast() && d.has_fp64) {
        char pdir[700];
        snprintf(pdir, sizeof pdir, "%s/pcyclic", dir);
        mkdir(pdir, 0777);
        snprintf(cmd, sizeof cmd,
                 "'%s' --quick --routine pcyclic --precision d --sizes 8 --output '%s' %s%s%s > "
                 "'%s/tune.log' 2>&1",
                 BATCHCL_TUNE_EXE, pdir, device ? "--device '" : "", dev_opt, device ? "'" : "",
                 pdir);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "cat '%s'/*.json > '%s/all.txt'", pdir, pdir);
        assert_int_equal(system(cmd), 0);
        snprintf(path, sizeof path, "%s/all.txt", pdir);
        root = read_json(path, text, sizeof text);
        cJSON *model = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "entries")->child, "model");
        assert_non_null(model);
        const double host = cJSON_GetObjectItem(model, "host_step_s")->valuedouble,
                     rate = cJSON_GetObjectItem(model, "dev_gemm_flops")->valuedouble,
                     call = cJSON_GetObjectItem(model, "dev_gemm_call_s")->valuedouble;
        if (!(host > 0 && host < 10 && rate > 1e6 && call >= 0 && call < 1))
            fail_msg("implausible model: host step %g s, GEMM %g FLOP/s + %g s", host, rate, call);
        /* and the host shares' constants */
        const char *shares[4] = {"host_gemm_flops", "host_gemm_call_s", "link_bytes_s",
                                 "link_call_s"};
        for (int i = 0; i < 4; ++i) {
            const cJSON *v = cJSON_GetObjectItem(model, shares[i]);
            if (!cJSON_IsNumber(v) || !(i % 2 ? v->valuedouble >= 0 && v->valuedouble < 1
                                              : v->valuedouble > 1e6))
                fail_msg("implausible or missing \"%s\" in the stored model", shares[i]);
        }
        cJSON_Delete(root);
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, pdir));
        bcl_params p;
        memset(&p, 0, sizeof p);
        p.pcyclic_method = 1;
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
        invert_small(ctx);
        char want[96];
        snprintf(want, sizeof want, "model (tuning file): host panel step %.3g ms", host * 1e3);
        if (!strstr(bcl_last_kernel(ctx), want) ||
            !strstr(bcl_last_kernel(ctx), "(model, tuning file: host GEMM"))
            fail_msg("expected \"%s\" and the host shares' model from the file in: %s", want,
                     bcl_last_kernel(ctx));
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, NULL));
        TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, NULL));
    }
    /* bad sizes are refused */
    snprintf(cmd, sizeof cmd, "'%s' --quick --sizes 0 --output '%s/other' > /dev/null 2>&1",
             BATCHCL_TUNE_EXE, dir);
    assert_int_not_equal(system(cmd), 0);
    bcl_destroy(ctx);
}

/* batchcl-tune's clblast sweep (quick: clBLAST's own parameters and one drawn set on BSOFI's
 * GEMM shapes): it runs, checks the set's products against clBLAST's own, and what it writes is
 * a file the library reads and the p-cyclic inversion uses. */
static void test_tuner_clblast(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    bcl_device_info d;
    bcl_device_info_get(ctx, &d);
    if (!bcl_pcyclic_has_clblast() || !d.has_fp64) {
        bcl_destroy(ctx);
        skip();
    }
    /* the inversion's products through clBLAST (on NVIDIA sm_80+ they default to gemm.cl) */
    setenv("BATCHCL_PCYCLIC_GEMM", "clblast", 1);
    char dir[600];
    make_dir(dir, sizeof dir, "tuner-clblast");
    const char *device = getenv("BATCHCL_TEST_DEVICE");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "'%s' --quick --routine clblast --precision d --output '%s/gemm.json' %s%s%s "
             "> '%s/tune.log' 2>&1",
             BATCHCL_TUNE_EXE, dir, device ? "--device '" : "", device ? device : "",
             device ? "'" : "", dir);
    const int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "grep -q 'clblast d: 1 of 1 candidates ran, 0 wrong' '%s/tune.log'",
             dir);
    if (rc != 0 || system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "cat '%s/tune.log'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "(no log)\n");
        fail_msg("batchcl-tune --routine clblast: status %d, or not one candidate run and checked",
                 rc);
    }
    char path[700];
    snprintf(path, sizeof path, "%s/gemm.json", dir);
    static char text[1 << 16];
    cJSON *root = read_json(path, text, sizeof text);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "entries")), 0);
    const cJSON *gemm = cJSON_GetObjectItem(root, "clblast");
    /* kept only when faster than clBLAST's own set */
    const cJSON *dset = gemm ? cJSON_GetObjectItem(gemm, "d") : NULL;
    const cJSON *set = dset ? cJSON_GetObjectItem(dset, "XgemmDirect") : NULL;
    if (gemm) {
        assert_non_null(set);
        assert_int_equal(cJSON_GetArraySize(set), 10);
        const cJSON *t = cJSON_GetObjectItem(dset, "seconds"),
                    *t0 = cJSON_GetObjectItem(dset, "default_seconds");
        assert_non_null(t);
        assert_non_null(t0);
        assert_non_null(cJSON_GetObjectItem(set, "WGD"));
        assert_true(t->valuedouble > 0 && t->valuedouble < t0->valuedouble);
    }
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_tuning_path(ctx, dir));
    if (strstr(bcl_tuning_report(ctx), "skipped"))
        fail_msg("the tuner's file was refused: %s", bcl_tuning_report(ctx));
    bcl_params p;
    memset(&p, 0, sizeof p);
    p.pcyclic_method = 3;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    invert_small(ctx);
    char want[64];
    if (set)
        snprintf(want, sizeof want, "direct GEMM tuned for this device (WGD %d,",
                 cJSON_GetObjectItem(set, "WGD")->valueint);
    else
        snprintf(want, sizeof want, "clBLAST's own parameters (no tuned set");
    if (!strstr(bcl_last_kernel(ctx), want))
        fail_msg("expected \"%s\" in: %s", want, bcl_last_kernel(ctx));
    cJSON_Delete(root);
    unsetenv("BATCHCL_PCYCLIC_GEMM");
    bcl_destroy(ctx);
}

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
    const struct CMUnitTest lookup[] = {cmocka_unit_test(test_lookup_order),
                                        cmocka_unit_test(test_nearest_size),
                                        cmocka_unit_test(test_bad_files),
                                        cmocka_unit_test(test_tuned_kernel_runs)};
    const struct CMUnitTest tuner[] = {cmocka_unit_test(test_tuner_quick),
                                       cmocka_unit_test(test_tuner_clblast)};
    int failed = 0, all = !strcmp(group, "all");
    if (all || !strcmp(group, "lookup"))
        failed += cmocka_run_group_tests_name("tuning lookup", lookup, setup_tmp, teardown_tmp);
    if (all || !strcmp(group, "tuner"))
        failed += cmocka_run_group_tests_name("tuning tuner", tuner, setup_tmp, teardown_tmp);
    return failed ? 1 : 0;
}
