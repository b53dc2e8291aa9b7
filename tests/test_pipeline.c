/* Chunk sizing of the transfer pipeline (internal), on made-up device limits. */
#include "../src/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* The sequence of chunk sizes of a host-pointer call: it covers the batch, never exceeds the
 * steady size, grows from the least size at the start, halves towards the end, and leaves no piece
 * smaller than the least after a larger one. A least size of the chunk or more: not graded. */
static size_t graded(size_t batch, size_t chunk, size_t *sizes, size_t max)
{
    size_t first = 0, k = 0;
    while (first < batch) {
        const size_t c = bcl_chunk_count(batch - first, chunk, k, chunk / 8 > 1 ? chunk / 8 : chunk);
        assert_true(c >= 1 && c <= chunk && c <= batch - first);
        assert_true(k < max);
        sizes[k++] = c;
        first += c;
    }
    assert_int_equal(first, batch);
    return k;
}

static void test_graded_chunks(void **state)
{
    (void)state;
    size_t s[64];
    const size_t big[] = {8192, 16384, 32768, 65536, 65536, 65536, 65536, 65536, 57488, 28744,
                          14372, 14372};
    assert_int_equal(graded(500000, 65536, s, 64), 12);
    assert_memory_equal(s, big, sizeof big);
    const size_t one[] = {8192, 16384, 20480, 10240, 10240}; /* a batch of one chunk still overlaps */
    assert_int_equal(graded(65536, 65536, s, 64), 5);
    assert_memory_equal(s, one, sizeof one);
    assert_int_equal(graded(1000, 65536, s, 64), 1); /* smaller than the first chunk */
    assert_int_equal(s[0], 1000);
    assert_int_equal(graded(20, 4, s, 64), 5); /* least = chunk: not graded */
    for (int i = 0; i < 5; ++i)
        assert_int_equal(s[i], 4);
    assert_int_equal(bcl_chunk_count(100, 40, 0, 40), 40);
    assert_int_equal(bcl_chunk_count(30, 40, 5, 0), 30);
    for (size_t batch = 1; batch < 5000; batch += 37) {
        const size_t n = graded(batch, 1024, s, 64);
        for (size_t i = 1; i < n; ++i)
            assert_true(s[i] >= 128 || s[i] == batch);
    }
}

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
                                       cmocka_unit_test(test_graded_chunks),
                                       cmocka_unit_test(test_overlap_checks)};
    return cmocka_run_group_tests_name("pipeline", tests, NULL, NULL);
}
