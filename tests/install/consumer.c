/* Solves one small SPD system through an installed batchcl and checks the answer. */
#include <batchcl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bcl_context *ctx;
    bcl_status s = bcl_create(&ctx, getenv("BATCHCL_TEST_DEVICE"));
    if (s != BCL_SUCCESS) {
        fprintf(stderr, "bcl_create: %s\n", bcl_last_error(NULL));
        return 1;
    }
    /* A = [4 1; 1 3], b = [1 2]: x = [1/11, 7/11] */
    const double A[4] = {4, 1, 1, 3}, b[2] = {1, 2};
    double x[2];
    int info;
    s = bcl_dsysv(ctx, BCL_LDLT, 2, 1, 1, A, b, x, &info);
    printf("%s: x = %.17g %.17g (info %d)\n", bcl_status_string(s), x[0], x[1], info);
    int ok = s == BCL_SUCCESS && fabs(x[0] - 1.0 / 11) < 1e-15 && fabs(x[1] - 7.0 / 11) < 1e-15;
    bcl_destroy(ctx);
    return ok ? 0 : 1;
}
