/* Kernel search path, build failures with their log, and the on-disk binary cache. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const int N = 5;
static float A[25], B[5], X[5];
static int info[1];

static bcl_status solve(bcl_context *ctx)
{
    return bcl_ssysv(ctx, BCL_LDLT, N, 1, 1, A, B, X, info);
}

static void make_temp_dir(char *out, size_t cap)
{
    snprintf(out, cap, "%s/batchcl-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(out));
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, got, out), got);
    fclose(in);
    fclose(out);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            remove(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* The cache files of a directory (names into `names`), their count. */
static int cache_files(const char *dir, char names[][1024], int cap)
{
    int count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".bin") && !strstr(e->d_name, ".tmp") && count < cap)
            snprintf(names[count++], 1024, "%s/%s", dir, e->d_name);
    closedir(d);
    return count;
}

static int valid_cache_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char magic[8];
    unsigned long long size = 0;
    int ok = fread(magic, 1, 8, f) == 8 && memcmp(magic, "BCLBIN01", 8) == 0 &&
             fread(&size, sizeof size, 1, f) == 1;
    fseek(f, 0, SEEK_END);
    ok = ok && (unsigned long long)ftell(f) == size + 24;
    fclose(f);
    return ok;
}

static void test_missing_kernel_dir(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_kernel_path(ctx, "/nonexistent/batchcl-a:/nonexistent/batchcl-b"));
    tu_poison(X, sizeof X);
    TU_STATUS(ctx, BCL_KERNEL_NOT_FOUND, solve(ctx));
    const char *msg = bcl_last_error(ctx);
    assert_non_null(strstr(msg, "ldlt.cl"));
    assert_non_null(strstr(msg, "/nonexistent/batchcl-a"));
    assert_non_null(strstr(msg, "/nonexistent/batchcl-b"));
    assert_non_null(strstr(msg, "BATCHCL_KERNEL_DIR"));
    assert_true(tu_is_poisoned(X, sizeof X));
    /* back to the default search order */
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_kernel_path(ctx, NULL));
    TU_STATUS(ctx, BCL_SUCCESS, solve(ctx));
    bcl_destroy(ctx);
}

/* BATCHCL_KERNEL_DIR comes first: a broken kernel there fails with the compiler's log. */
static void test_kernel_dir_env_and_build_log(void **state)
{
    (void)state;
    char dir[512], path[1024];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/common.cl", dir);
    copy_file(TEST_KERNEL_DIR "/common.cl", path);
    snprintf(path, sizeof path, "%s/ldlt.cl", dir);
    write_text(path, "__kernel void ldlt_simd(__global float *a) { undeclared_identifier_xyz = 1; }\n"
                     "__kernel void ldlt_coop(__global float *a) { undeclared_identifier_xyz = 1; }\n");
    setenv("BATCHCL_KERNEL_DIR", dir, 1);
    setenv("BATCHCL_CACHE_DIR", "off", 1);
    bcl_context *ctx = tu_context();
    TU_STATUS(ctx, BCL_BUILD_FAILED, solve(ctx));
    const char *msg = bcl_last_error(ctx);
    assert_non_null(strstr(msg, "ldlt.cl"));
    assert_non_null(strstr(msg, "build log"));
    assert_non_null(strstr(msg, "undeclared_identifier_xyz"));
    bcl_destroy(ctx);
    /* a directory without the file is skipped: the next one in the order serves */
    remove(path);
    ctx = tu_context();
    TU_STATUS(ctx, BCL_SUCCESS, solve(ctx));
    bcl_destroy(ctx);
    unsetenv("BATCHCL_KERNEL_DIR");
    unsetenv("BATCHCL_CACHE_DIR");
    remove_tree(dir);
}

/* binary_cache: "on", "off", or NULL for the device's default (off on PoCL: it keeps its own) */
static void run_with_cache(const char *dir, const char *binary_cache)
{
    setenv("BATCHCL_CACHE_DIR", dir, 1);
    if (binary_cache)
        setenv("BATCHCL_BINARY_CACHE", binary_cache, 1);
    else
        unsetenv("BATCHCL_BINARY_CACHE");
    bcl_context *ctx = tu_context();
    unsetenv("BATCHCL_CACHE_DIR");
    unsetenv("BATCHCL_BINARY_CACHE");
    TU_STATUS(ctx, BCL_SUCCESS, solve(ctx));
    assert_int_equal(info[0], 0);
    assert_true(oracle_sysv_residual(N, 1, 0, A, B, X) < 30);
    bcl_destroy(ctx);
}

static void test_binary_cache(void **state)
{
    (void)state;
    char dir[512], names[8][1024];
    make_temp_dir(dir, sizeof dir);
    /* switched off, nothing is written */
    run_with_cache(dir, "off");
    assert_int_equal(cache_files(dir, names, 8), 0);
    /* by default, binaries are kept on every device but PoCL's CPU devices */
    bcl_context *probe = tu_context();
    cl_platform_id platform;
    cl_device_type type = 0;
    char platform_name[256] = "";
    clGetDeviceInfo(bcl_cl_device(probe), CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    clGetDeviceInfo(bcl_cl_device(probe), CL_DEVICE_TYPE, sizeof type, &type, NULL);
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof platform_name - 1, platform_name, NULL);
    bcl_destroy(probe);
    const int pocl_cpu = strstr(platform_name, "Portable Computing Language") &&
                         !(type & CL_DEVICE_TYPE_GPU);
    run_with_cache(dir, NULL);
    assert_int_equal(cache_files(dir, names, 8), pocl_cpu ? 0 : 1);
    remove_tree(dir);
    make_temp_dir(dir, sizeof dir);
    run_with_cache(dir, "on");
    assert_int_equal(cache_files(dir, names, 8), 1);
    assert_true(valid_cache_file(names[0]));

    /* a second context loads it without rewriting it */
    struct stat before, after;
    stat(names[0], &before);
    sleep(1);
    run_with_cache(dir, "on");
    stat(names[0], &after);
    assert_true(before.st_mtime == after.st_mtime);

    /* a flipped byte (bad checksum) is rebuilt and rewritten */
    FILE *f = fopen(names[0], "r+b");
    fseek(f, 100, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 100, SEEK_SET);
    fputc(c ^ 0xff, f);
    fclose(f);
    run_with_cache(dir, "on");
    assert_true(valid_cache_file(names[0]));

    /* truncated */
    f = fopen(names[0], "wb");
    fputs("BCLB", f);
    fclose(f);
    run_with_cache(dir, "on");
    assert_true(valid_cache_file(names[0]));

    /* intact framing around garbage: the OpenCL implementation rejects it, it is rebuilt */
    f = fopen(names[0], "wb");
    unsigned char junk[256];
    for (int i = 0; i < 256; ++i)
        junk[i] = (unsigned char)(i * 37 + 11);
    unsigned long long size = sizeof junk, sum = 0xcbf29ce484222325ULL;
    for (int i = 0; i < 256; ++i) {
        sum ^= junk[i];
        sum *= 0x100000001b3ULL;
    }
    fwrite("BCLBIN01", 1, 8, f);
    fwrite(&size, sizeof size, 1, f);
    fwrite(&sum, sizeof sum, 1, f);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    run_with_cache(dir, "on");
    assert_true(valid_cache_file(names[0]));
    struct stat st;
    stat(names[0], &st);
    assert_true(st.st_size > 24 + 256);
    remove_tree(dir);

    /* an unwritable cache directory is not an error */
    run_with_cache("/proc/batchcl-cannot-exist/cache", "on");
}

int main(void)
{
    tu_spd_batch(0, 0, N, 1, 1, 0, 3, A, B);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_missing_kernel_dir),
                                       cmocka_unit_test(test_kernel_dir_env_and_build_log),
                                       cmocka_unit_test(test_binary_cache)};
    return cmocka_run_group_tests_name("program", tests, NULL, NULL);
}
