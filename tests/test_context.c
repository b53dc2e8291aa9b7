/* Context creation and device choice, adopted queues, status strings, parameters, pinned memory. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_device_specs(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    bcl_device_info d;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_device_info_get(ctx, &d));
    assert_true(strlen(d.name) > 0);
    assert_true(d.local_mem_bytes > 0 && d.max_work_group_size > 0 && d.global_mem_bytes > 0 &&
                d.max_alloc_bytes > 0 && d.compute_units > 0);
    bcl_destroy(ctx);

    /* the device's type, a name substring (case-insensitive) and P:D all find it */
    const char *type = d.is_gpu ? "gpu" : "cpu";
    TU_STATUS(NULL, BCL_SUCCESS, bcl_create(&ctx, type));
    bcl_destroy(ctx);
    char sub[8] = {0};
    for (int i = 0; i < 6 && d.name[i]; ++i)
        sub[i] = (char)(i % 2 ? d.name[i] : (d.name[i] >= 'a' && d.name[i] <= 'z' ? d.name[i] - 32 : d.name[i]));
    TU_STATUS(NULL, BCL_SUCCESS, bcl_create(&ctx, sub));
    bcl_device_info d2;
    bcl_device_info_get(ctx, &d2);
    assert_string_equal(d2.name, d.name);
    bcl_destroy(ctx);
    TU_STATUS(NULL, BCL_SUCCESS, bcl_create(&ctx, "0:0"));
    bcl_destroy(ctx);

    /* no match: the error lists what exists */
    TU_STATUS(NULL, BCL_DEVICE_NOT_FOUND, bcl_create(&ctx, "no-such-device-xyz"));
    assert_null(ctx);
    assert_non_null(strstr(bcl_last_error(NULL), "no-such-device-xyz"));
    assert_non_null(strstr(bcl_last_error(NULL), d.name));
    TU_STATUS(NULL, BCL_DEVICE_NOT_FOUND, bcl_create(&ctx, "9:9"));
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_create(NULL, "cpu"));

    /* BATCHCL_DEVICE is read when the spec is NULL */
    setenv("BATCHCL_DEVICE", "no-such-device-xyz", 1);
    TU_STATUS(NULL, BCL_DEVICE_NOT_FOUND, bcl_create(&ctx, NULL));
    setenv("BATCHCL_DEVICE", type, 1);
    TU_STATUS(NULL, BCL_SUCCESS, bcl_create(&ctx, NULL));
    bcl_destroy(ctx);
    unsetenv("BATCHCL_DEVICE");
}

/* An application's queue: the routines enqueue on it; the context keeps it alive and lets go. */
static void test_adopted_queue(void **state)
{
    (void)state;
    bcl_context *probe = tu_context();
    cl_device_id dev = bcl_cl_device(probe);
    cl_int err;
    cl_context cl = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_command_queue q = clCreateCommandQueue(cl, dev, 0, &err);
    bcl_destroy(probe);

    bcl_context *ctx;
    TU_STATUS(NULL, BCL_SUCCESS, bcl_create_from_queue(&ctx, q));
    assert_ptr_equal(bcl_cl_queue(ctx), q);
    assert_ptr_equal(bcl_cl_context(ctx), cl);
    const int n = 6;
    float A[36 * 2], B[12], X[12];
    int info[2];
    tu_spd_batch(0, 0, n, 1, 2, 0, 4, A, B);
    cl_mem dA = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof A, A, &err);
    cl_mem dB = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof B, B, &err);
    cl_mem dX = clCreateBuffer(cl, CL_MEM_READ_WRITE, sizeof X, NULL, &err);
    cl_mem dI = clCreateBuffer(cl, CL_MEM_READ_WRITE, sizeof info, NULL, &err);
    TU_STATUS(ctx, BCL_SUCCESS, bcl_ssysv_cl(ctx, BCL_LDLT, n, 1, 2, BCL_LAYOUT_CONTIGUOUS, dA, 0, dB,
                                             0, dX, 0, dI, 0, 0, NULL, NULL));
    /* in-order queue: this read follows the solve */
    clEnqueueReadBuffer(q, dX, CL_TRUE, 0, sizeof X, X, 0, NULL, NULL);
    clEnqueueReadBuffer(q, dI, CL_TRUE, 0, sizeof info, info, 0, NULL, NULL);
    assert_int_equal(info[0], 0);
    assert_true(oracle_sysv_residual(n, 1, 0, A, B, X) < 30);
    assert_true(oracle_sysv_residual(n, 1, 0, A + 36, B + 6, X + 6) < 30);
    /* host-pointer calls work on the adopted queue's device too */
    TU_STATUS(ctx, BCL_SUCCESS, bcl_ssysv(ctx, BCL_LDLT, n, 1, 2, A, B, X, info));
    bcl_destroy(ctx);
    /* still ours and usable */
    assert_int_equal(clFinish(q), CL_SUCCESS);
    clReleaseMemObject(dA);
    clReleaseMemObject(dB);
    clReleaseMemObject(dX);
    clReleaseMemObject(dI);
    assert_int_equal(clReleaseCommandQueue(q), CL_SUCCESS);
    assert_int_equal(clReleaseContext(cl), CL_SUCCESS);
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_create_from_queue(&ctx, NULL));
}

static void test_status_strings(void **state)
{
    (void)state;
    for (int s = BCL_SUCCESS; s <= BCL_NOT_IMPLEMENTED; ++s) {
        const char *name = bcl_status_string((bcl_status)s);
        assert_non_null(strstr(name, "BCL_"));
        for (int t = BCL_SUCCESS; t < s; ++t)
            assert_string_not_equal(name, bcl_status_string((bcl_status)t));
    }
    assert_string_equal(bcl_status_string((bcl_status)1234), "unknown bcl_status");
    assert_string_equal(bcl_version(), "0.1.0");
}

static void test_params(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    bcl_params p = {0};
    p.mapping = (bcl_mapping)99;
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_set_params(ctx, &p));
    assert_non_null(strstr(bcl_last_error(ctx), "mapping"));
    p.mapping = BCL_MAPPING_HYBRID;
    p.work_items_per_problem = -1;
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_set_params(ctx, &p));
    p.work_items_per_problem = 0;
    p.queues = 9;
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_set_params(ctx, &p));
    p.queues = 0;
    p.problems_per_work_item = 3;
    TU_STATUS(ctx, BCL_INVALID_ARGUMENT, bcl_set_params(ctx, &p));
    p.problems_per_work_item = 0;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    TU_STATUS(NULL, BCL_INVALID_ARGUMENT, bcl_set_params(NULL, &p));

    /* forced parameters reach the kernel that runs */
    const int n = 10;
    float A[100], B[10], X[10];
    int info[1];
    tu_spd_batch(0, 0, n, 1, 1, 0, 8, A, B);
    p.mapping = BCL_MAPPING_HYBRID;
    p.work_items_per_problem = 5;
    p.specialize = 1;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    TU_STATUS(ctx, BCL_SUCCESS, bcl_ssysv(ctx, BCL_LDLT, n, 1, 1, A, B, X, info));
    assert_non_null(strstr(bcl_last_kernel(ctx), "-DNMAX=10 -DROWS=2 -DNEXACT"));
    assert_non_null(strstr(bcl_last_kernel(ctx), "5 work-items per problem"));
    p.mapping = BCL_MAPPING_SIMD;
    p.problems_per_work_item = 2;
    p.problems_per_group = 6;
    TU_STATUS(ctx, BCL_SUCCESS, bcl_set_params(ctx, &p));
    TU_STATUS(ctx, BCL_SUCCESS, bcl_ssysv(ctx, BCL_LDLT, n, 1, 1, A, B, X, info));
    assert_non_null(strstr(bcl_last_kernel(ctx), "-DLDLT_SIMD -DVW=2"));
    assert_non_null(strstr(bcl_last_kernel(ctx), "6 problems and 3 work-items per group"));
    assert_true(oracle_sysv_residual(n, 1, 0, A, B, X) < 30);
    bcl_destroy(ctx);
}

static void test_pinned_memory(void **state)
{
    (void)state;
    bcl_context *ctx = tu_context();
    float *p = bcl_host_alloc(ctx, 1 << 20);
    assert_non_null(p);
    memset(p, 1, 1 << 20); /* writable host memory */
    bcl_host_free(ctx, p);
    assert_null(bcl_host_alloc(ctx, 0));
    assert_null(bcl_host_alloc(NULL, 16));
    bcl_host_free(ctx, NULL);
    /* a leftover allocation is released with the context */
    assert_non_null(bcl_host_alloc(ctx, 4096));
    bcl_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_specs), cmocka_unit_test(test_adopted_queue),
        cmocka_unit_test(test_status_strings), cmocka_unit_test(test_params),
        cmocka_unit_test(test_pinned_memory)};
    return cmocka_run_group_tests_name("context", tests, NULL, NULL);
}
