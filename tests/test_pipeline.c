/* Chunk sizing of the transfer pipeline (internal), on made-up device limits. */
#include "../src/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static void test_chunk_sizes(void **state)
{
    (void)state;
    const cl_ulong GiB = 1ull << 30;
    /* everything fits: one chunk */
    assert_int_equal(bcl_chunk_problems(1000, 4096, 4096, 8 * GiB, 2 * GiB, 3, 0), 1000);
    /* bounded by half the device memory shared by the slots */
    assert_int_equal(bcl_chunk_problems(1u << 30, 4096, 4096, 6 * GiB, 6 * GiB, 3, 0),
                     (size_t)(GiB / 4096));
    /* bounded by the largest single array against the allocation limit */
    assert_int_equal(bcl_chunk_problems(1u << 30, 4100, 4096, 64 * GiB, GiB, 1, 0),
                     (size_t)(GiB / 4096));
    /* a requested size below the limits wins, never above them */
    assert_int_equal(bcl_chunk_problems(1000, 16, 8, 8 * GiB, GiB, 2, 77), 77);
    assert_int_equal(bcl_chunk_problems(1u << 30, 4096, 4096, 8 * GiB, GiB, 1, 1u << 30),
                     (size_t)(GiB / 4096));
    /* a problem larger than the device: 0 (the caller reports BCL_OUT_OF_MEMORY) */
    assert_int_equal(bcl_chunk_problems(10, 2 * GiB, 2 * GiB, 2 * GiB, GiB, 1, 0), 0);
    assert_int_equal(bcl_chunk_problems(0, 16, 16, GiB, GiB, 1, 0), 0);
    /* no per-problem data: everything in one go */
    assert_int_equal(bcl_chunk_problems(55, 0, 0, GiB, GiB, 1, 0), 55);
}

static void test_overlap_checks(void **state)
{
    (void)state;
    char buf[100] = {0};
    assert_true(bcl_overlaps(buf, 10, buf + 9, 10));
    assert_false(bcl_overlaps(buf, 10, buf + 10, 10));
    assert_false(bcl_overlaps(buf, 0, buf, 10));
    assert_false(bcl_overlaps(NULL, 10, buf, 10));
    assert_true(bcl_overlaps(buf + 50, 1, buf, 100));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_chunk_sizes),
                                       cmocka_unit_test(test_overlap_checks)};
    return cmocka_run_group_tests_name("pipeline", tests, NULL, NULL);
}
