/* Block p-cyclic inversion (BSOFI; Gogolenko, Bai & Scalettar:
 * block-p-cyclic-inversion-bsofi-gogolenko-bai-scalettar.txt): argument checks, the choice of
 * method, the host-panel / clBLAST-GEMM method (1), the batched local-memory kernels (2,
 * cl/pcyclic.cl) and the device-panel / clBLAST-GEMM method (3, kernels of cl/pcyclic.cl).
 * Block indices are 0-based here: block (r, c) of H^-1 starts at element
 * c*n*N + r*n of the column-major N x N array. */
#include "internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef BCL_HAVE_CLBLAST
#include <clblast_c.h>
#include <lapacke.h>
#include <pthread.h>
/* Fortran BLAS (OpenBLAS): the host side of the panels */
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);
#endif

/* the batched kernels' limits (cl/pcyclic.cl) */
#define SMALL_NMAX 32
#define SMALL_PMAX 64
#define SMALL_GROUP 64

int bcl_pcyclic_has_clblast(void)
{
#ifdef BCL_HAVE_CLBLAST
    return 1;
#else
    return 0;
#endif
}

/* ---- argument checks ---- */

static bcl_status check_sizes(const bcl_context *ctx, const char *fn, int n, int p, size_t batch,
                              int dbl)
{
    if (n < 0)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 2 (n = %d) must be >= 0", fn, n);
    if (p < 0)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 3 (p = %d) must be >= 0", fn, p);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const double N = (double)n * (double)p;
    if (N * N * (double)es * (double)batch > (double)((size_t)-1 / 2))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: batch = %zu inverses of order %.0f overflow the address space", fn,
                        batch, N);
    return BCL_SUCCESS;
}

/* Method for this call: the forced one, else the batched kernels for small blocks when there is
 * more than one problem (or no clBLAST), else host panels + clBLAST. */
static bcl_status choose_method(const bcl_context *ctx, const char *fn, int n, int p, size_t batch,
                                int dbl, int *method)
{
    if (dbl && !ctx->dev.has_fp64)
        return bcl_no_fp64(ctx, fn);
    bcl_params prm;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_PCYCLIC, dbl, n, &prm);
    const int small = n <= SMALL_NMAX && p <= SMALL_PMAX;
    int m = prm.pcyclic_method;
    /* a tuned method is for the block size; this p or build may not allow it: then the default */
    if (!ctx->forced.pcyclic_method &&
        ((m == 2 && !small) || ((m == 1 || m == 3) && !bcl_pcyclic_has_clblast())))
        m = 0;
    /* default: the batched kernels for many small problems; else the panels on the device on a
     * GPU (its host would be the critical path), on the host otherwise */
    if (m == 0)
        m = small && (batch > 1 || !bcl_pcyclic_has_clblast()) ? 2 : ctx->dev.is_gpu ? 3 : 1;
    if (m == 2 && !small)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: the batched kernels (pcyclic_method 2) take n <= %d and p <= %d; got "
                        "n = %d, p = %d",
                        fn, SMALL_NMAX, SMALL_PMAX, n, p);
    if ((m == 1 || m == 3) && !bcl_pcyclic_has_clblast())
        return bcl_fail(ctx, BCL_NOT_IMPLEMENTED,
                        "%s: n = %d, p = %d needs the clBLAST method, and this build of batchcl "
                        "was configured without clBLAST or LAPACKE/OpenBLAS (install "
                        "libclblast-dev liblapacke-dev libopenblas-dev and reconfigure); the "
                        "batched kernels take n <= %d, p <= %d",
                        fn, n, p, SMALL_NMAX, SMALL_PMAX);
    *method = m;
    return BCL_SUCCESS;
}

static bcl_status summarize_info(bcl_context *ctx, const char *fn, const int *info, size_t batch)
{
    size_t first = 0;
    const size_t failed = bcl_count_failures(info, batch, &first);
    if (!failed)
        return BCL_SUCCESS;
    return bcl_fail(ctx, BCL_NUMERICAL_FAILURE,
                    "%s: %zu of %zu matrices are singular (first: problem %zu, R(%d,%d) = 0); "
                    "their inverse is set to zero, the others are inverted",
                    fn, failed, batch, first, info[first], info[first]);
}

/* ---- method 2: batched local-memory kernels ---- */

typedef struct {
    bcl_kernel_entry *kernel;
    char options[128];
    int n, p;
    size_t work_per_problem; /* elements of global workspace */
} small_plan;

static size_t small_workspace(int n, int p)
{
    const size_t nn = (size_t)n * n, N = (size_t)n * p;
    /* Q^(k) (4n^2 each) and Q^(p), R_kk, R_k,k+1, R_k,p, two ping-pong pairs (At, Rt), the row
     * multipliers Xt and Y, and the 2n-column temporary of the Q^T application */
    return (size_t)(p - 1 > 0 ? p - 1 : 0) * 4 * nn + nn + 3 * (size_t)p * nn + 4 * nn +
           2 * (size_t)p * nn + N * 2 * (size_t)n;
}

static bcl_status small_make_plan(bcl_context *ctx, int dbl, int n, int p, small_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    snprintf(plan->options, sizeof plan->options, "-DNMAX=%d -DWG=%d%s", SMALL_NMAX, SMALL_GROUP,
             dbl ? " -DBCL_DOUBLE" : "");
    bcl_status s = bcl_get_kernel(ctx, "pcyclic.cl", plan->options, "pcyclic_small", &plan->kernel);
    if (s != BCL_SUCCESS)
        return s;
    if (plan->kernel->max_work_group < SMALL_GROUP)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "the batched p-cyclic kernel needs %d work-items per group; the device "
                        "allows %zu",
                        SMALL_GROUP, plan->kernel->max_work_group);
    plan->n = n;
    plan->p = p;
    plan->work_per_problem = small_workspace(n, p);
    return BCL_SUCCESS;
}

static bcl_status small_enqueue(bcl_context *ctx, const small_plan *plan, int dbl,
                                cl_command_queue q, size_t count, cl_mem A, size_t offA, cl_mem B,
                                size_t offB, cl_mem H, size_t offH, cl_mem info, size_t offInfo,
                                cl_uint num_wait, const cl_event *wait, cl_event *event)
{
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t nn = (size_t)plan->n * plan->n, N = (size_t)plan->n * plan->p;
    /* the workspace of one launch: an eighth of the device memory at most (launches are split
     * beyond), so that a GPU still gets many work-groups per launch */
    cl_ulong cap = ctx->dev.global_mem_bytes / 8;
    if (cap > ctx->dev.max_alloc_bytes)
        cap = ctx->dev.max_alloc_bytes;
    size_t per_launch = (size_t)(cap / (plan->work_per_problem * es));
    if (per_launch == 0)
        per_launch = 1;
    if (per_launch > count)
        per_launch = count;
    cl_int err;
    cl_mem work = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, per_launch * plan->work_per_problem * es,
                                 NULL, &err);
    if (err != CL_SUCCESS)
        return bcl_cl_fail(ctx, err, "allocating the p-cyclic kernel's workspace");
    snprintf(ctx->last_kernel, sizeof ctx->last_kernel,
             "pcyclic_small %s; method 2 (batched local-memory kernel), one work-group of %d per "
             "problem",
             plan->options, SMALL_GROUP);
    cl_kernel k = plan->kernel->kernel;
    cl_event last = NULL;
    bcl_status status = BCL_SUCCESS;
    for (size_t first = 0; first < count && status == BCL_SUCCESS; first += per_launch) {
        const size_t part = count - first < per_launch ? count - first : per_launch;
        cl_ulong oa = offA + first * plan->p * nn, ob = offB + first * plan->p * nn,
                 oh = offH + first * N * N, oi = offInfo + first;
        cl_ulong wstride = plan->work_per_problem;
        int arg = 0;
        err = clSetKernelArg(k, arg++, sizeof(cl_mem), &A);
        err |= clSetKernelArg(k, arg++, sizeof oa, &oa);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &B);
        err |= clSetKernelArg(k, arg++, sizeof ob, &ob);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &H);
        err |= clSetKernelArg(k, arg++, sizeof oh, &oh);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &info);
        err |= clSetKernelArg(k, arg++, sizeof oi, &oi);
        err |= clSetKernelArg(k, arg++, sizeof(cl_mem), &work);
        err |= clSetKernelArg(k, arg++, sizeof wstride, &wstride);
        err |= clSetKernelArg(k, arg++, sizeof(int), &plan->n);
        err |= clSetKernelArg(k, arg++, sizeof(int), &plan->p);
        if (err != CL_SUCCESS) {
            status = bcl_fail(ctx, BCL_OPENCL_ERROR, "setting the p-cyclic kernel's arguments failed");
            break;
        }
        const size_t local = SMALL_GROUP, global = part * local;
        cl_event ev = NULL;
        err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, first ? 0 : num_wait,
                                     first ? NULL : wait, &ev);
        if (last)
            clReleaseEvent(last);
        last = ev;
        if (err != CL_SUCCESS)
            status = bcl_fail(ctx, BCL_OPENCL_ERROR, "launching the p-cyclic kernel failed: %s",
                              bcl_cl_error_name(err));
    }
    clReleaseMemObject(work); /* released once the launches that use it complete */
    if (event && status == BCL_SUCCESS)
        *event = last;
    else if (last)
        clReleaseEvent(last);
    return status;
}

typedef struct {
    const small_plan *plan;
    int dbl;
} small_job;

/* streams: in A, B; out Hinv, info */
static bcl_status small_host_enqueue(bcl_context *ctx, void *user, cl_command_queue q,
                                     const cl_mem *in, const cl_mem *out, const cl_mem *scratch,
                                     size_t first, size_t count, cl_event *done)
{
    (void)scratch;
    (void)first;
    const small_job *j = user;
    return small_enqueue(ctx, j->plan, j->dbl, q, count, in[0], 0, in[1], 0, out[0], 0, out[1], 0, 0,
                         NULL, done);
}

/* ---- method 1: host panels (LAPACK), device GEMMs (clBLAST) ---- */

#ifdef BCL_HAVE_CLBLAST

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void dgemm(char ta, char tb, int m, int n, int k, double alpha, const double *a, int lda,
                  const double *b, int ldb, double beta, double *c, int ldc)
{
    dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
}

static const char *clblast_status_name(CLBlastStatusCode s)
{
    switch (s) {
    case CLBlastNotImplemented: return "CLBlastNotImplemented";
    case CLBlastInvalidLocalMemUsage: return "CLBlastInvalidLocalMemUsage";
    case CLBlastNoDoublePrecision: return "CLBlastNoDoublePrecision";
    case CLBlastDatabaseError: return "CLBlastDatabaseError";
    case CLBlastUnknownError: return "CLBlastUnknownError";
    case CLBlastUnexpectedError: return "CLBlastUnexpectedError";
    case CLBlastTempBufferAllocFailure: return "CLBlastTempBufferAllocFailure";
    case CLBlastOpenCLBuildProgramFailure: return "CLBlastOpenCLBuildProgramFailure";
    default: break;
    }
    return (int)s > -1000 ? bcl_cl_error_name((cl_int)s) : "a clBLAST argument error";
}

#define MAX_CHAIN_STEPS 8 /* steps of BSOF in one qr_chain launch, at most */
#define MAX_SLOTS (2 * MAX_CHAIN_STEPS + 1)
#define CHAIN_TAIL_DEFAULT 2
/* Where BSOF runs on two queues up to this n (NVIDIA: the shuffle build, whose qr_chain loops
 * over roles), qr_chain launches CHAIN_GROUPS_DEFAULT groups that take the roles in turn, so
 * that its waiting groups leave compute units to the second queue, and CHAIN_STEPS_DEFAULT steps
 * a launch; elsewhere a group a role and a step a launch. H200, bench pcyclic --order 10000, ms
 * (steps a launch S, groups G; G = 0: a group a role):
 *   n = 192 / 256 / 512: one step a launch before (two slots, At_k+1 copied on the main queue)
 *   20.44 / 22.03 / 35.26, S = 1 G = 0 20.43 / 22.33 / 35.29, S = 1 G = 96 20.53 / 21.73 /
 *   37.75, S = 3 G = 96 20.23 / 21.71 / 37.55, S = 3 G = 120 20.41 / 21.92 / 36.23, S = 3 G = 64
 *   21.56 / 24.41 / 39.27; S = 3 with a group a role 22.31 / 24.10 / 37.29 (the next steps'
 *   waiting groups took every compute unit the second queue's kernels would have had: 280 us
 *   between launches of three steps, against 25 between launches of one). */
#define CHAIN_GROUPS_NMAX 256
#define OVERLAP_NMAX 512 /* BSOF on two queues on NVIDIA up to this n */
#define CHAIN_GROUPS_DEFAULT 96
#define CHAIN_STEPS_DEFAULT 3

/* Everything one problem needs on the host and the device; the host arrays are double.
 * Only the chain of panels is on the host (the critical path): each step's QR in compact WY form
 * (Q = I - V T V^T) and the next diagonal block At_k+1 = A_k+1 - V2 T^T V2^T A_k+1. The rest of
 * the step (the explicit Q^(k), R_k,k+1, the last block column's chain, the multipliers of the
 * back substitution) is clBLAST GEMMs enqueued on the device, which runs them meanwhile. */
typedef struct {
    bcl_context *ctx;
    const char *fn;
    int n, p, N, dbl, jF;
    int rv_group; /* R^-1's rows in groups of this many block rows (invert_row_groups); < 2:
                   * one by one */
    size_t es, nn;
    int force_fail;
    /* the products by gemm.cl instead of clBLAST (the TRMM too, as a GEMM): on NVIDIA sm_80 or
     * later in double, the tensor-core build (gemm_tensor); BATCHCL_PCYCLIC_GEMM=clblast or own
     * forces either (own: the portable build elsewhere, for tests; BATCHCL_CLBLAST_FAIL: clBLAST) */
    int own_gemm, gemm_tensor;
    int gemm_pair; /* gemm_pair's two products in one gemm.cl launch */
    /* the host's shares (host_rv_start, host_qt_start): block columns max(jF, 1) .. +rv_host-1 of
     * the row version and block rows 0 .. qt_host-1 of the Q^T application, by BLAS on the host */
    int rv_host, qt_host;
    int cv_host; /* method 1: block rows 0 .. cv_host-1 of the column version's columns on the
                  * host (host_cv_column), beside its panels */
    double share_s[3]; /* host time spent on them: waiting for the reads, products, writing */
    size_t batch;   /* problems in the call (method 1 pipelines the host's panels across them) */
    double host_s; /* wall time of the host's part (panels, enqueueing) */
    int dev_panels; /* method 3: the panels on the device too (kernels of cl/pcyclic.cl) */
    double phase_s[4]; /* method 3 with BATCHCL_PCYCLIC_PHASES=1: BSOF (with the column version),
                        * the row version, the Q^T application; [3] < 0: not measured */
    bcl_kernel_entry *k_panel, *k_apply, *k_take_r, *k_tri, *k_eye, *k_finish, *k_tdiag;
    int v_in_panel; /* the register panels write no V: the applies read the factored panel */
    bcl_kernel_entry *k_vcopy; /* v_from_panel where v_in_panel and GEMMs form Q, or NULL */
    bcl_kernel_entry *k_apply_rows; /* qr_apply in one launch, or NULL (qr_apply's ranges) */
    int apply_rpl, apply_ct;        /* its rows a work-item, columns a work-group */
    int tri_cols; /* tri_inverse: columns a work-group */
    int tri_leaf; /* tri_inverse: order of the diagonal blocks it inverts (GEMMs do the rest) */
    int q_gemm; /* method 3: Q^(k) = I - V T V^T by clBLAST GEMMs (T of the whole panel), not by
                 * qr_apply's passes of the block reflectors over the identity */
    int panel_wg;   /* work-items of a qr_panel group */
    int panel_rows; /* qr_panel_reg: rows a lane holds; 0: qr_panel (global memory) */
    int panel_shuffle; /* qr_panel_reg sums within warps by NVIDIA's shuffles */
    int apply_keep;    /* qr_apply_rows keeps its rows in registers for the update */
    int panel_x_local; /* qr_panel_reg reads x from local memory (64 rows a lane, or forced) */
    int panel_rpl;     /* qr_panel_rows: rows a work-item holds; 0: a kernel by columns */
    int chain_cpg, chain_rpl; /* qr_chain: columns a group holds, rows a work-item; 0: a launch
                               * a block and an apply between */
    int chain_slot;           /* qr_chain: ints of w->dBad a step's launch counts with */
    int chain_tch;            /* qr_chain: chunks of chain_cpg columns a trailing group holds */
    int chain_clock;          /* qr_chain built with -DCHAIN_CLOCK (chain_report) */
    /* BSOF on two queues (method 3 with qr_chain and Q^(k) by GEMMs): the main queue carries only
     * the critical path, each step's qr_chain with [0; A_k+1] as trailing columns (At_k+1 and
     * R_k,k+1 come out of it), while the second queue (q2) forms Q^(k), R_kk and the last block
     * column's chain from the step's panel. The panel (2n x 2n with its trailing block column)
     * and its block T's take turns in nslots slots of dP (slot_stride apart; slot: the one in use)
     * and of dTb (tb_slot apart); slot_free[s] marks the second queue done with slot s
     * and its next step staged there. A launch of qr_chain takes chain_steps steps (the tickets
     * run on across them) and writes At_k+1 into the next step's slot, so 2 chain_steps + 1
     * slots; the chain_tail steps before the last pair go one a launch (the second queue catches
     * up before the last pair, which needs its Rt) */
    int overlap;
    int overlap_serial; /* BATCHCL_PCYCLIC_OVERLAP_SERIAL=1: each launch waits for the second
                         * queue (diagnosis: nothing of it runs beside the chain) */
    int nslots, slot, chain_steps, chain_tail;
    int chain_groups; /* groups a qr_chain launch, taking roles in turn (0: one a role) */
    size_t slot_stride;
    /* the Q^T application by halves (apply_qt_halves): 0 pairs (apply_qt), 1 halves on the main
     * queue, 2 the right halves on q2 */
    int qt_halves;
    cl_command_queue q2; /* the context's second queue (NULL: none), where w->overlap or
                          * qt_halves = 2 put work */
    /* the context's third queue (NULL: none): with w->overlap the column version's block columns
     * run there, each after the second queue has formed R's blocks it needs, so that neither the
     * chain of panels nor the second queue waits for its products; cv_done marks the last */
    cl_command_queue q3;
    cl_event cv_done;
    size_t tb_slot;
    cl_event slot_free[MAX_SLOTS];
    cl_mem dP;   /* method 3: the panel [At_k; B_k] (2n x n, leading dimension 2n) */
    cl_mem dV;   /* its reflectors, explicit (2n x n) */
    int nb;      /* method 3: block width of the device QR */
    cl_mem dTb;  /* the T of each block of nb columns */
    cl_mem dWp;  /* qr_apply's shares of W = V^T C, one per range of rows */
    int split_rows; /* rows of such a range */
    cl_mem dRkk; /* R_kk (p blocks) */
    cl_mem dBad; /* first zero or NaN of R's diagonal (INT_MAX: none) */
    cl_mem dA, dB; /* host-pointer calls: the problem's blocks */
    cl_command_queue q;
    cl_mem dT; /* the Q^T application's temporary: 3n columns (2n where p < 3) */
    cl_mem dQ; /* the Q^(k), 2n x 2n each, then Q^(p) */
    cl_mem dS; /* n x n multipliers: column version W_j at j, row version Xt_i at p + i */
    cl_mem dR; /* device blocks, offsets below */
    size_t r_s, r_l, r_t, r_v, r_tm, r_w, r_a, r_u1, r_u, r_tv, r_eye;
    /* host panels */
    double *Rd;           /* R_kk (p blocks) */
    double *At, *panel, *Tm, *V, *W, *work, *tau, *Q;
    double *Xd;           /* R_kk^-1 */
    /* uploads in the device's precision, kept until the device has read them: two arenas, one
     * per problem in flight */
    unsigned char *arena[2];
    size_t arena_cap, arena_used;
    int cur;
    cl_event arena_done[2];
} bsofi;

/* The workspace's device buffers (about 12 N n + 20 n^2 values with the device panels, up to
 * 20 n^2 more for the panel slots of BSOF on two queues, 11 N n with the host's; the host's
 * shares add their stage, h n (N + 4n(p-1)) values for h block rows of Q^T), kept in the
 * context between calls until bcl_destroy (BATCHCL_PCYCLIC_KEEP=0: released after each call).
 * Allocating and releasing them in every call cost 1.2-1.6 ms a call on the H100 at n = 256, 512
 * and 1024. Reusing them is safe because bsofi_release waits for all three queues; within a call
 * the second queue's work waits for events of the main queue's and the other way round, and its
 * GEMMs have temporaries of their own (TMP2, WORK2), as have the third queue's (TMP3, WORK3),
 * where the column version runs beside BSOF. */
enum {
    WS_T, WS_Q, WS_S, WS_R, WS_P, WS_V, WS_TB, WS_WP, WS_RKK, WS_BAD, WS_GEMM_TMP,
    WS_GEMM_WORK, WS_GEMM_TMP2, WS_GEMM_WORK2, WS_GEMM_TMP3, WS_GEMM_WORK3, WS_SHARE, WS_COUNT
};
_Static_assert(WS_COUNT == BCL_PCYCLIC_WS_SLOTS, "the context's p-cyclic workspace slots");
_Static_assert(WS_GEMM_TMP2 == WS_GEMM_TMP + 2 && WS_GEMM_WORK2 == WS_GEMM_WORK + 2 &&
                   WS_GEMM_TMP3 == WS_GEMM_TMP + 4 && WS_GEMM_WORK3 == WS_GEMM_WORK + 4,
               "gemm_ws: a queue's GEMM temporaries two slots after the queue before's");

/* workspace slot `idx` grown to at least `bytes` (the context keeps it) */
static cl_int ws_grow(bsofi *w, int idx, size_t bytes)
{
    bcl_context *ctx = w->ctx;
    return bcl_grow_buffer(ctx, &ctx->pcyclic_ws[idx], &ctx->pcyclic_ws_bytes[idx], bytes);
}

/* workspace buffer `idx` of at least `bytes` into *out (an error: its message) */
static bcl_status ws_buffer(bsofi *w, int idx, size_t bytes, cl_mem *out)
{
    const cl_int err = ws_grow(w, idx, bytes ? bytes : 1);
    *out = w->ctx->pcyclic_ws[idx];
    return err == CL_SUCCESS ? BCL_SUCCESS
                             : bcl_cl_fail(w->ctx, err, "allocating the p-cyclic workspace");
}

/* the GEMMs' workspace buffer `idx` grown to at least `bytes`; NULL when it cannot grow (the
 * caller then goes without: clBLAST allocates its own temporary, gemm.cl does not split k) */
static cl_mem grown_buffer(bsofi *w, int idx, size_t bytes)
{
    return bytes > 0 && ws_grow(w, idx, bytes) == CL_SUCCESS ? w->ctx->pcyclic_ws[idx] : NULL;
}

/* the GEMMs' temporary `main_slot` (WS_GEMM_TMP or WS_GEMM_WORK) of the queue w->q: the second
 * and third queues have their own (the slot two or four on), which may be in use beside the main
 * queue's */
static int gemm_ws(const bsofi *w, int main_slot)
{
    if (w->q2 && w->q == w->q2)
        return main_slot + 2;
    if (w->q3 && w->q == w->q3)
        return main_slot + 4;
    return main_slot;
}

/* count products of one shape by gemm.cl, the operands' offsets strides apart, with its workspace
 * (sums of k in ranges where a product has few tiles). When the compiler refuses the tensor-core
 * build (remembered in the context), own_gemm is switched off and the caller goes on with
 * clBLAST. */
static bcl_status own_gemm(bsofi *w, CLBlastTranspose ta, CLBlastTranspose tb, size_t m, size_t n,
                           size_t k, size_t count, double alpha, bcl_gemm_operand a,
                           bcl_gemm_operand b, double beta, bcl_gemm_operand c,
                           const bcl_gemm_more *more)
{
    const size_t elems = more ? 0 : bcl_gemm_work_elements(w->ctx, m, n, k, count);
    cl_mem work = elems ? grown_buffer(w, gemm_ws(w, WS_GEMM_WORK), elems * w->es) : NULL;
    const bcl_status s = bcl_gemm_enqueue(
        w->ctx, w->q, w->fn, w->dbl, w->gemm_tensor, ta == CLBlastTransposeYes,
        tb == CLBlastTransposeYes, m, n, k, count, alpha, a, b, beta, c, work, work ? elems : 0,
        more);
    if (s == BCL_BUILD_FAILED && w->gemm_tensor) {
        bcl_clear_error(w->ctx);
        w->own_gemm = w->gemm_tensor = 0;
    }
    return s;
}

static bcl_status gemm(bsofi *w, CLBlastTranspose ta, CLBlastTranspose tb, size_t m, size_t n,
                       size_t k, double alpha, cl_mem A, size_t offA, size_t lda, cl_mem B,
                       size_t offB, size_t ldb, double beta, cl_mem C, size_t offC, size_t ldc)
{
    if (m == 0 || n == 0 || k == 0)
        return BCL_SUCCESS;
    if (w->own_gemm) {
        const bcl_gemm_operand a = {A, offA, lda, 0}, b = {B, offB, ldb, 0}, c = {C, offC, ldc, 0};
        const bcl_status s = own_gemm(w, ta, tb, m, n, k, 1, alpha, a, b, beta, c, NULL);
        if (w->own_gemm)
            return s;
    }
    /* clBLAST's indirect GEMM pads and copies its operands into a temporary buffer, which it
     * would allocate and free in every call: the workspace keeps one (without it, clBLAST
     * allocates its own) */
    size_t tmp_bytes = 0;
    if (w->force_fail ||
        (w->dbl ? CLBlastDGemmTempBufferSize(CLBlastLayoutColMajor, ta, tb, m, n, k, offA, lda, offB,
                                             ldb, offC, ldc, &w->q, &tmp_bytes)
                : CLBlastSGemmTempBufferSize(CLBlastLayoutColMajor, ta, tb, m, n, k, offA, lda, offB,
                                             ldb, offC, ldc, &w->q, &tmp_bytes)) != CLBlastSuccess)
        tmp_bytes = 0;
    cl_mem tmp = grown_buffer(w, gemm_ws(w, WS_GEMM_TMP), tmp_bytes);
    CLBlastStatusCode s =
        w->force_fail ? CLBlastUnknownError
        : w->dbl ? CLBlastDgemmWithTempBuffer(CLBlastLayoutColMajor, ta, tb, m, n, k, alpha, A, offA,
                                              lda, B, offB, ldb, beta, C, offC, ldc, &w->q, NULL, tmp)
                 : CLBlastSgemmWithTempBuffer(CLBlastLayoutColMajor, ta, tb, m, n, k, (float)alpha, A,
                                              offA, lda, B, offB, ldb, (float)beta, C, offC, ldc,
                                              &w->q, NULL, tmp);
    if (s != CLBlastSuccess)
        return bcl_fail(w->ctx, BCL_OPENCL_ERROR,
                        "%s: clBLAST %cGEMM (m = %zu, n = %zu, k = %zu) failed: %s (%d)%s%s", w->fn,
                        w->dbl ? 'D' : 'S', m, n, k, clblast_status_name(s), (int)s,
                        w->force_fail ? " (forced by BATCHCL_CLBLAST_FAIL)" : "",
                        w->ctx->gemm_direct_state[w->dbl] == 1
                            ? "; clBLAST ran the tuning file's direct GEMM set "
                              "(BATCHCL_CLBLAST_TUNED=0 before the first call leaves clBLAST's own)"
                            : "");
    return BCL_SUCCESS;
}

/* C := op(A) op(B) + beta C over m rows (depth k), then C's first m2 rows += op(A2) op(B2)
 * (depth k2, the same transposes): with gemm.cl one launch whose tiles holding any of those rows
 * run on through the second product's slices (BATCHCL_PCYCLIC_GEMM_PAIR=0: two launches, as with
 * clBLAST) */
static bcl_status gemm_pair(bsofi *w, CLBlastTranspose ta, CLBlastTranspose tb, size_t m,
                            size_t n, size_t k, cl_mem A, size_t offA, size_t lda, cl_mem B,
                            size_t offB, size_t ldb, double beta, cl_mem C, size_t offC,
                            size_t ldc, size_t m2, size_t k2, cl_mem A2, size_t offA2,
                            size_t lda2, cl_mem B2, size_t offB2, size_t ldb2)
{
    if (m2 == 0 || k2 == 0)
        return gemm(w, ta, tb, m, n, k, 1.0, A, offA, lda, B, offB, ldb, beta, C, offC, ldc);
    if (w->own_gemm && w->gemm_pair && m > 0 && n > 0 && k > 0) {
        const bcl_gemm_operand a = {A, offA, lda, 0}, b = {B, offB, ldb, 0},
                               c = {C, offC, ldc, 0};
        const bcl_gemm_more more = {{A2, offA2, lda2, 0}, {B2, offB2, ldb2, 0}, m2, k2};
        const bcl_status s = own_gemm(w, ta, tb, m, n, k, 1, 1.0, a, b, beta, c, &more);
        if (w->own_gemm)
            return s;
    }
    bcl_status s = gemm(w, ta, tb, m, n, k, 1.0, A, offA, lda, B, offB, ldb, beta, C, offC, ldc);
    if (s == BCL_SUCCESS)
        s = gemm(w, ta, tb, m2, n, k2, 1.0, A2, offA2, lda2, B2, offB2, ldb2, 1.0, C, offC, ldc);
    return s;
}

/* B := B * A, A upper triangular (m x n B, n x n A) */
static bcl_status trmm_right_upper(bsofi *w, size_t m, size_t n, cl_mem A, size_t offA, size_t lda,
                                   cl_mem B, size_t offB, size_t ldb)
{
    if (m == 0 || n == 0)
        return BCL_SUCCESS;
    CLBlastStatusCode s =
        w->force_fail ? CLBlastUnknownError
        : w->dbl ? CLBlastDtrmm(CLBlastLayoutColMajor, CLBlastSideRight, CLBlastTriangleUpper,
                                CLBlastTransposeNo, CLBlastDiagonalNonUnit, m, n, 1.0, A, offA, lda, B,
                                offB, ldb, &w->q, NULL)
                 : CLBlastStrmm(CLBlastLayoutColMajor, CLBlastSideRight, CLBlastTriangleUpper,
                                CLBlastTransposeNo, CLBlastDiagonalNonUnit, m, n, 1.0f, A, offA, lda, B,
                                offB, ldb, &w->q, NULL);
    if (s != CLBlastSuccess)
        return bcl_fail(w->ctx, BCL_OPENCL_ERROR, "%s: clBLAST %cTRMM (m = %zu, n = %zu) failed: %s (%d)%s",
                        w->fn, w->dbl ? 'D' : 'S', m, n, clblast_status_name(s), (int)s,
                        w->force_fail ? " (forced by BATCHCL_CLBLAST_FAIL)" : "");
    return BCL_SUCCESS;
}

/* Upload `rows` x `cols` (column-major, leading dimension ld) from host doubles to the device
 * buffer at element offset `off` with leading dimension dld, through the current arena. */
static bcl_status upload(bsofi *w, const double *src, int rows, int cols, int ld, cl_mem dst,
                         size_t off, size_t dld)
{
    const size_t count = (size_t)rows * cols, bytes = count * w->es;
    if (w->arena_used + bytes > w->arena_cap)
        return bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: internal: upload arena exhausted", w->fn);
    unsigned char *stage = w->arena[w->cur] + w->arena_used;
    w->arena_used += bytes;
    for (int c = 0; c < cols; ++c)
        for (int r = 0; r < rows; ++r) {
            const double v = src[(size_t)c * ld + r];
            if (w->dbl)
                ((double *)(void *)stage)[(size_t)c * rows + r] = v;
            else
                ((float *)(void *)stage)[(size_t)c * rows + r] = (float)v;
        }
    cl_int err;
    if (dld == (size_t)rows) {
        err = clEnqueueWriteBuffer(w->q, dst, CL_FALSE, off * w->es, bytes, stage, 0, NULL, NULL);
    } else {
        const size_t origin[3] = {0, 0, 0}, region[3] = {(size_t)rows * w->es, (size_t)cols, 1};
        const size_t dorigin[3] = {off * w->es, 0, 0};
        err = clEnqueueWriteBufferRect(w->q, dst, CL_FALSE, dorigin, origin, region, dld * w->es, 0,
                                       (size_t)rows * w->es, 0, stage, 0, NULL, NULL);
    }
    return err == CL_SUCCESS ? BCL_SUCCESS : bcl_cl_fail(w->ctx, err, "uploading a p-cyclic block");
}

/* First zero or NaN on the diagonal of an upper triangular n x n block, 1-based; 0 if none. */
static int singular_at(const double *R, int n)
{
    for (int i = 0; i < n; ++i) {
        const double d = R[(size_t)i * n + i];
        if (d == 0 || isnan(d))
            return i + 1;
    }
    return 0;
}

/* Upper triangle of a (rows x n, leading dimension ld) into an n x n block, zeros below. */
static void take_upper(const double *src, int ld, int n, double *dst)
{
    for (int c = 0; c < n; ++c)
        for (int r = 0; r < n; ++r)
            dst[(size_t)c * n + r] = r <= c ? src[(size_t)c * ld + r] : 0.0;
}

/* QR of the last n x n block (w->panel): R into Rd[p-1], the explicit Q^(p) into w->Q. */
static int last_qr(bsofi *w)
{
    const int n = w->n;
    int info = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, n, n, w->panel, n, w->tau, w->work,
                                   (lapack_int)w->nn);
    if (info != 0)
        return -1;
    take_upper(w->panel, n, n, w->Rd + (size_t)(w->p - 1) * w->nn);
    memcpy(w->Q, w->panel, sizeof(double) * w->nn);
    info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, n, n, n, w->Q, n, w->tau, w->work,
                               (lapack_int)w->nn);
    return info != 0 ? -1 : 0;
}

static size_t block_at(const bsofi *w, int r, int c)
{
    return (size_t)c * w->n * w->N + (size_t)r * w->n;
}

static bcl_status copy_dev(bsofi *w, cl_mem src, size_t off_src, cl_mem dst, size_t off_dst,
                           size_t count)
{
    cl_int err = clEnqueueCopyBuffer(w->q, src, dst, off_src * w->es, off_dst * w->es,
                                     count * w->es, 0, NULL, NULL);
    return err == CL_SUCCESS ? BCL_SUCCESS : bcl_cl_fail(w->ctx, err, "clEnqueueCopyBuffer");
}

static bcl_status copy_rect(bsofi *w, cl_mem src, size_t off_src, size_t ld_src, cl_mem dst,
                            size_t off_dst, size_t ld_dst, size_t rows, size_t cols)
{
    const size_t so[3] = {off_src * w->es, 0, 0}, dso[3] = {off_dst * w->es, 0, 0},
                 region[3] = {rows * w->es, cols, 1};
    cl_int err = clEnqueueCopyBufferRect(w->q, src, dst, so, dso, region, ld_src * w->es, 0,
                                         ld_dst * w->es, 0, 0, NULL, NULL);
    return err == CL_SUCCESS ? BCL_SUCCESS : bcl_cl_fail(w->ctx, err, "clEnqueueCopyBufferRect");
}

/* block column (N x n, leading dimension N) from src to dst below row r0 (r0 = 0: all of it) */
static bcl_status copy_rows(bsofi *w, cl_mem src, size_t off_src, cl_mem dst, size_t off_dst,
                            size_t r0)
{
    const size_t N = (size_t)w->N, n = (size_t)w->n;
    return r0 == 0 ? copy_dev(w, src, off_src, dst, off_dst, N * n)
                   : copy_rect(w, src, off_src + r0, N, dst, off_dst + r0, N, N - r0, n);
}

/* the queue w->q waits for `ev` (none: nothing to wait for) */
static bcl_status queue_wait(bsofi *w, cl_event ev)
{
    const cl_int err = ev ? clEnqueueBarrierWithWaitList(w->q, 1, &ev, NULL) : CL_SUCCESS;
    return err == CL_SUCCESS ? BCL_SUCCESS
                             : bcl_cl_fail(w->ctx, err, "clEnqueueBarrierWithWaitList");
}

/* w->q's commands sent to the device: the spec asks for it before another queue waits on them */
static bcl_status queue_flush(bsofi *w)
{
    const cl_int err = clFlush(w->q);
    return err == CL_SUCCESS ? BCL_SUCCESS : bcl_cl_fail(w->ctx, err, "clFlush");
}

/* *ev (released first) := a marker of everything enqueued on w->q so far (BATCHCL_TIMELINE: named
 * `name`) */
static bcl_status queue_mark(bsofi *w, cl_event *ev, const char *name)
{
    if (*ev)
        clReleaseEvent(*ev);
    *ev = NULL;
    const cl_int err = clEnqueueMarkerWithWaitList(w->q, 0, NULL, ev);
    if (err == CL_SUCCESS && w->ctx->recording)
        bcl_step_record(w->ctx, name, *ev);
    return err == CL_SUCCESS ? BCL_SUCCESS
                             : bcl_cl_fail(w->ctx, err, "clEnqueueMarkerWithWaitList");
}

/* Factorization step k < p-1 (Wright's SOF): the QR [At_k; B_k] = Q^(k) [R_kk; 0] on the host
 * (LAPACK dgeqrt: V below the diagonal, T), then Q^(k)T = I - V T^T V^T applied to block rows
 * k, k+1 of block columns k+1 and p-1:
 *   [0; A_k+1]  -> [R_k,k+1; At_k+1]   (host: At_k+1, the next panel; device: R_k,k+1)
 *   [Rt_k; 0]   -> [R_k,p-1; Rt_k+1]   (device)
 * or, when k+1 = p-1, [Rt_k; A_p-1] -> [R_k,p-1; At_p-1] on the device, At_p-1 read back. The
 * device also forms the explicit Q^(k) = I - V (T V^T) for the Q^T application. */
static bcl_status factor_step(bsofi *w, int k, const double *A, const double *B)
{
    const int n = w->n, p = w->p, n2 = 2 * n;
    const size_t nn = w->nn;
    const CLBlastTranspose no = CLBlastTransposeNo, tr = CLBlastTransposeYes;
    for (int c = 0; c < n; ++c) {
        memcpy(w->panel + (size_t)c * n2, w->At + (size_t)c * n, sizeof(double) * n);
        memcpy(w->panel + (size_t)c * n2 + n, B + (size_t)k * nn + (size_t)c * n, sizeof(double) * n);
    }
    if (LAPACKE_dgeqrt_work(LAPACK_COL_MAJOR, n2, n, n, w->panel, n2, w->Tm, n, w->work) != 0)
        return bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: LAPACK dgeqrt failed on a panel", w->fn);
    take_upper(w->panel, n2, n, w->Rd + (size_t)k * nn);
    for (int c = 0; c < n; ++c) /* V: unit lower trapezoidal; T: upper triangular */
        for (int r = 0; r < n2; ++r) {
            w->V[(size_t)c * n2 + r] = r < c ? 0.0 : r == c ? 1.0 : w->panel[(size_t)c * n2 + r];
            if (r < n && r > c)
                w->Tm[(size_t)c * n + r] = 0.0;
        }
    const int merged = k + 2 == p;
    const double *Anext = A + (size_t)(k + 1) * nn;
    const double *V2 = w->V + n;
    if (!merged) { /* W = T^T V2^T A_k+1; At_k+1 = A_k+1 - V2 W */
        dgemm('T', 'N', n, n, n, 1.0, V2, n2, Anext, n, 0.0, w->work, n);
        dgemm('T', 'N', n, n, n, 1.0, w->Tm, n, w->work, n, 0.0, w->W, n);
        memcpy(w->At, Anext, sizeof(double) * nn);
        dgemm('N', 'N', n, n, n, -1.0, V2, n2, w->W, n, 1.0, w->At, n);
    }
    bcl_status s = upload(w, w->V, n2, n, n2, w->dR, w->r_v, (size_t)n2);
    if (s == BCL_SUCCESS)
        s = upload(w, w->Tm, n, n, n, w->dR, w->r_tm, n);
    if (s == BCL_SUCCESS)
        s = merged ? upload(w, Anext, n, n, n, w->dR, w->r_a, n)
                   : upload(w, w->W, n, n, n, w->dR, w->r_w, n);
    cl_mem R = w->dR;
    const size_t v1 = w->r_v, v2 = w->r_v + n, rt = w->r_t + (size_t)(k & 1) * nn,
                 rt_next = w->r_t + (size_t)((k + 1) & 1) * nn, qk = (size_t)k * 4 * nn;
    /* Q^(k) = I - V (T V^T) */
    if (s == BCL_SUCCESS)
        s = copy_dev(w, R, w->r_eye, w->dQ, qk, 4 * nn);
    if (s == BCL_SUCCESS)
        s = gemm(w, no, tr, n, n2, n, 1.0, R, w->r_tm, n, R, v1, n2, 0.0, R, w->r_tv, n);
    if (s == BCL_SUCCESS)
        s = gemm(w, no, no, n2, n2, n, -1.0, R, v1, n2, R, w->r_tv, n, 1.0, w->dQ, qk, n2);
    if (s != BCL_SUCCESS)
        return s;
    if (!merged) {
        /* R_k,k+1 = -V1 W; U = T^T V1^T Rt_k; R_k,p-1 = Rt_k - V1 U; Rt_k+1 = -V2 U */
        s = gemm(w, no, no, n, n, n, -1.0, R, v1, n2, R, w->r_w, n, 0.0, R, w->r_s + k * nn, n);
        if (s == BCL_SUCCESS)
            s = gemm(w, tr, no, n, n, n, 1.0, R, v1, n2, R, rt, n, 0.0, R, w->r_u1, n);
        if (s == BCL_SUCCESS)
            s = gemm(w, tr, no, n, n, n, 1.0, R, w->r_tm, n, R, w->r_u1, n, 0.0, R, w->r_u, n);
        if (s == BCL_SUCCESS)
            s = copy_dev(w, R, rt, R, w->r_l + k * nn, nn);
        if (s == BCL_SUCCESS)
            s = gemm(w, no, no, n, n, n, -1.0, R, v1, n2, R, w->r_u, n, 1.0, R, w->r_l + k * nn, n);
        if (s == BCL_SUCCESS)
            s = gemm(w, no, no, n, n, n, -1.0, R, v2, n2, R, w->r_u, n, 0.0, R, rt_next, n);
        return s;
    }
    /* the last pair: U = T^T (V1^T Rt_k + V2^T A_p-1); R_k,p-1 = Rt_k - V1 U; At_p-1 = A - V2 U */
    s = gemm(w, tr, no, n, n, n, 1.0, R, v1, n2, R, rt, n, 0.0, R, w->r_u1, n);
    if (s == BCL_SUCCESS)
        s = gemm(w, tr, no, n, n, n, 1.0, R, v2, n2, R, w->r_a, n, 1.0, R, w->r_u1, n);
    if (s == BCL_SUCCESS)
        s = gemm(w, tr, no, n, n, n, 1.0, R, w->r_tm, n, R, w->r_u1, n, 0.0, R, w->r_u, n);
    if (s == BCL_SUCCESS)
        s = copy_dev(w, R, rt, R, w->r_s + k * nn, nn);
    if (s == BCL_SUCCESS)
        s = gemm(w, no, no, n, n, n, -1.0, R, v1, n2, R, w->r_u, n, 1.0, R, w->r_s + k * nn, n);
    if (s == BCL_SUCCESS)
        s = gemm(w, no, no, n, n, n, -1.0, R, v2, n2, R, w->r_u, n, 1.0, R, w->r_a, n);
    if (s != BCL_SUCCESS)
        return s;
    unsigned char *raw = w->arena[w->cur] + w->arena_used; /* room for n^2 more */
    if (w->arena_used + nn * w->es > w->arena_cap)
        return bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: internal: upload arena exhausted", w->fn);
    cl_int err = clEnqueueReadBuffer(w->q, R, CL_TRUE, w->r_a * w->es, nn * w->es, raw, 0, NULL,
                                     NULL);
    if (err != CL_SUCCESS)
        return bcl_cl_fail(w->ctx, err, "reading the last diagonal block back");
    for (size_t e = 0; e < nn; ++e)
        w->At[e] = w->dbl ? ((double *)(void *)raw)[e] : ((float *)(void *)raw)[e];
    return BCL_SUCCESS;
}

static bcl_status tri_inverse(bsofi *w, int first, int count, cl_mem H, size_t offH, size_t tmp);

/* X_kk = R_kk^-1 (upper triangular) into H's diagonal block: tri_inverse with device panels, else
 * LAPACK on the host */
static bcl_status invert_diagonal(bsofi *w, int k, cl_mem H, size_t offH)
{
    if (w->dev_panels) /* the temporary: dS's block k, W_k's place (formed after) */
        return tri_inverse(w, k, 1, H, offH, (size_t)k * w->nn);
    double *X = w->Xd + (size_t)k * w->nn;
    memcpy(X, w->Rd + (size_t)k * w->nn, sizeof(double) * w->nn);
    LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, 'U', 'N', w->n, X, w->n);
    return upload(w, X, w->n, w->n, w->n, H, offH + block_at(w, k, k), w->N);
}

/* j_F = p-1: the column version takes every block column but the last, which then comes from
 * them. With R = [R' c; 0 R_p-1,p-1] (R' the leading (p-1) n block, block upper bidiagonal; c
 * the last block column above R_p-1,p-1), R^-1's last column above X_p-1,p-1 is -R'^-1 c X_p-1,p-1,
 * and U = -R'^-1 c = -sum_j X_0:j,j c_j is summed column by column as the column version forms
 * them, into H's block column p-1 (zero until then). Afterwards one product by X_p-1,p-1 remains
 * instead of the row version's chain of p - 2 products over that column. */
static int last_column_from_u(const bsofi *w)
{
    return w->p >= 2 && w->jF == w->p - 1;
}

/* c_j, R's block (j, p-1): R_j,p-1 from the last block column's chain, at j = p-2 the block the
 * last pair formed beside R_p-2,p-2 */
static size_t last_column_block(const bsofi *w, int j)
{
    return j + 2 < w->p ? w->r_l + (size_t)j * w->nn : w->r_s + (size_t)j * w->nn;
}

/* Column version for block column j < p-1 (BSTRI_CV): X_jj = R_jj^-1 and
 * X_0:j-1,j = X_0:j-1,j-1 W_j, W_j = -R_j-1,j X_jj, on the device while the panels go on, from
 * block row w->cv_host on (the rows above: host_cv_column); with last_column_from_u, U -= X_0:j,j
 * c_j too. */
static bcl_status invert_column(bsofi *w, int j, cl_mem H, size_t offH)
{
    const size_t n = (size_t)w->n, nn = w->nn, hc = (size_t)w->cv_host;
    const CLBlastTranspose no = CLBlastTransposeNo;
    bcl_status s = invert_diagonal(w, j, H, offH);
    if (s == BCL_SUCCESS && (size_t)j > hc)
        s = gemm(w, no, no, n, n, n, -1.0, w->dR, w->r_s + (size_t)(j - 1) * nn, n, H,
                 offH + block_at(w, j, j), w->N, 0.0, w->dS, (size_t)j * nn, n);
    if (s == BCL_SUCCESS && (size_t)j > hc)
        s = gemm(w, no, no, (j - hc) * n, n, n, 1.0, H, offH + block_at(w, (int)hc, j - 1), w->N,
                 w->dS, (size_t)j * nn, n, 0.0, H, offH + block_at(w, (int)hc, j), w->N);
    if (s == BCL_SUCCESS && last_column_from_u(w))
        s = gemm(w, no, no, (size_t)(j + 1) * n, n, n, -1.0, H, offH + block_at(w, 0, j), w->N,
                 w->dR, last_column_block(w, j), n, 1.0, H, offH + block_at(w, 0, w->p - 1), w->N);
    return s;
}

/* count products C_i := alpha op(A_i) op(B_i) + beta C_i of one shape, at the offsets given, in
 * one clBLAST batched GEMM */
static bcl_status gemm_batched(bsofi *w, CLBlastTranspose ta, CLBlastTranspose tb, size_t m,
                               size_t n, size_t k, size_t count, double alpha, cl_mem A,
                               const size_t *offA, size_t lda, cl_mem B, const size_t *offB,
                               size_t ldb, double beta, cl_mem C, const size_t *offC, size_t ldc)
{
    if (count == 0 || m == 0 || n == 0 || k == 0)
        return BCL_SUCCESS;
    /* gemm.cl takes products whose offsets are evenly spaced in one launch */
    int strided = w->own_gemm;
    for (size_t i = 2; i < count && strided; ++i)
        strided = offA[i] - offA[i - 1] == offA[1] - offA[0] &&
                  offB[i] - offB[i - 1] == offB[1] - offB[0] &&
                  offC[i] - offC[i - 1] == offC[1] - offC[0];
    if (strided) {
        const size_t one = count > 1;
        const bcl_gemm_operand a = {A, offA[0], lda, one ? offA[1] - offA[0] : 0},
                               b = {B, offB[0], ldb, one ? offB[1] - offB[0] : 0},
                               c = {C, offC[0], ldc, one ? offC[1] - offC[0] : 0};
        const bcl_status s = own_gemm(w, ta, tb, m, n, k, count, alpha, a, b, beta, c, NULL);
        if (w->own_gemm)
            return s;
    }
    double *scalars = malloc(sizeof *scalars * 2 * count);
    if (!scalars)
        return bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory", w->fn);
    CLBlastStatusCode s = CLBlastSuccess;
    if (w->force_fail) {
        s = CLBlastUnknownError;
    } else if (w->dbl) {
        for (size_t i = 0; i < count; ++i) {
            scalars[i] = alpha;
            scalars[count + i] = beta;
        }
        s = CLBlastDgemmBatched(CLBlastLayoutColMajor, ta, tb, m, n, k, scalars, A, offA, lda, B,
                                offB, ldb, scalars + count, C, offC, ldc, count, &w->q, NULL);
    } else {
        float *fs = (float *)(void *)scalars;
        for (size_t i = 0; i < count; ++i) {
            fs[i] = (float)alpha;
            fs[count + i] = (float)beta;
        }
        s = CLBlastSgemmBatched(CLBlastLayoutColMajor, ta, tb, m, n, k, fs, A, offA, lda, B, offB,
                                ldb, fs + count, C, offC, ldc, count, &w->q, NULL);
    }
    free(scalars);
    if (s != CLBlastSuccess)
        return bcl_fail(w->ctx, BCL_OPENCL_ERROR,
                        "%s: clBLAST %cGEMMBATCHED (%zu products, m = %zu, n = %zu, k = %zu) "
                        "failed: %s (%d)%s",
                        w->fn, w->dbl ? 'D' : 'S', count, m, n, k, clblast_status_name(s), (int)s,
                        w->force_fail ? " (forced by BATCHCL_CLBLAST_FAIL)" : "");
    return BCL_SUCCESS;
}

/* BATCHCL_TIMELINE: a named marker of what the main queue has done so far (nothing otherwise) */
static bcl_status timeline_mark(bsofi *w, const char *name)
{
    if (!w->ctx->recording)
        return BCL_SUCCESS;
    cl_event ev = NULL;
    const bcl_status s = queue_mark(w, &ev, name);
    if (ev)
        clReleaseEvent(ev);
    return s;
}

/* block rows a group of invert_row_groups (BATCHCL_PCYCLIC_RV_GROUP; 0 or 1: the rows one by
 * one). H200, N about 10^4: R^-1 at n = 256 (p = 39) 2.70 -> 2.35 ms in groups of 6 (4: 2.51),
 * the whole inversion n = 128 / 192 / 256 3.1 / 3.0 / 1.8 % faster, n = 512 (p = 19) the same;
 * at n = 256 groups of 3, 4 and 8 took 0.5-1.2 % longer than 6, 9 and 10 the same */
#define RV_GROUP_DEFAULT 6
/* ---- the host's shares: BSOFTRI's l_j and l_i, BSOI's l_k (the paper's eqs. (5)-(6)) ----
 * The host computes some blocks with BLAS while the device computes the others. Each share is a
 * fixed set for the whole phase rather than the paper's split per iteration: here the device does
 * a whole block row (or pair of block columns) in one launch, so a split per iteration would move
 * blocks across the link every iteration and save the device nothing but flops. The column
 * version's share is block rows 0 .. h-1 of its columns (a row runs along the columns), the row
 * version's block columns max(j_F, 1) .. +h-1 (a column's rows need only that column and the
 * row multipliers), the Q^T application's block rows 0 .. h-1 (each row of R^-1 Q^T is its own).
 * Their reads and writes go on a side queue beside the main queue's products. */
typedef struct {
    double *a;          /* host doubles: the blocks the host computes, then the factors it reads */
    unsigned char *raw; /* the same in the device's precision, as read and written */
    cl_mem stage;       /* the same on the device, packed (WS_SHARE) */
    size_t elems;
    cl_event formed, read_done;
} host_share;

static void to_double(const void *src, int dbl, size_t count, double *dst);
static void from_double(const double *src, int dbl, size_t count, void *dst);

/* the row version's share starts at block column max(jF, 1) (column 0 has nothing above its
 * diagonal block) */
static int rv_share_first(const bsofi *w)
{
    return w->jF > 1 ? w->jF : 1;
}

/* the queue the shares' transfers go on: a queue of their own where the context has one */
static cl_command_queue side_queue(const bsofi *w)
{
    return w->q3 ? w->q3 : w->q2 ? w->q2 : w->q;
}

/* On the side queue, rows x cols at element `off` (leading dimension ld) of src to element
 * stage_off of the share's stage (leading dimension stage_ld), or the other way (to_stage = 0),
 * after the share's `formed` marker (for the column version's share, whose rows are written
 * with nothing read before, that keeps them behind this problem's clearing of H and the previous
 * problem's use of it). The blocks go through the stage so that the link moves one
 * packed range each way: NVIDIA's rectangular reads and writes from host memory move a row at a
 * time (a block row of H^-1 at n = 128, 10 000 columns, took about 100 ms). */
static bcl_status stage_copy(bsofi *w, host_share *sh, int to_stage, cl_mem buf, size_t off,
                             size_t ld, size_t stage_off, size_t stage_ld, size_t rows,
                             size_t cols, cl_event *done)
{
    const size_t es = w->es, o_buf[3] = {off * es, 0, 0}, o_stage[3] = {stage_off * es, 0, 0},
                 region[3] = {rows * es, cols, 1};
    const cl_int err = clEnqueueCopyBufferRect(
        side_queue(w), to_stage ? buf : sh->stage, to_stage ? sh->stage : buf,
        to_stage ? o_buf : o_stage, to_stage ? o_stage : o_buf, region,
        (to_stage ? ld : stage_ld) * es, 0, (to_stage ? stage_ld : ld) * es, 0, sh->formed ? 1 : 0,
        sh->formed ? &sh->formed : NULL, done);
    return err == CL_SUCCESS ? BCL_SUCCESS
                             : bcl_cl_fail(w->ctx, err, "staging the blocks of the host's share");
}

/* Start a share of `elems` values: its buffers, the stage cleared, and the `formed` marker on the
 * main queue after what the share reads, which the copies into the stage wait for. */
static bcl_status share_begin(bsofi *w, host_share *sh, size_t elems)
{
    sh->elems = elems;
    sh->a = malloc(sizeof(double) * elems);
    sh->raw = malloc(w->es * elems);
    if (!sh->a || !sh->raw)
        return bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory for the host's share",
                        w->fn);
    bcl_status s = ws_buffer(w, WS_SHARE, w->es * elems, &sh->stage);
    if (s == BCL_SUCCESS)
        s = queue_mark(w, &sh->formed, "host share: its blocks formed");
    if (s == BCL_SUCCESS)
        s = queue_flush(w);
    const cl_uchar zero = 0;
    const cl_int err = s == BCL_SUCCESS ? clEnqueueFillBuffer(side_queue(w), sh->stage, &zero, 1, 0,
                                                              w->es * elems, 0, NULL, NULL)
                                        : CL_SUCCESS;
    return err == CL_SUCCESS ? s : bcl_cl_fail(w->ctx, err, "clearing the host's share's stage");
}

/* after the copies into the stage: one read of it, whose event marks the share's reads */
static bcl_status share_reads_enqueued(bsofi *w, host_share *sh)
{
    const cl_command_queue q = side_queue(w);
    cl_int err = clEnqueueReadBuffer(q, sh->stage, CL_FALSE, 0, w->es * sh->elems, sh->raw, 0, NULL,
                                     &sh->read_done);
    if (err == CL_SUCCESS)
        err = clFlush(q);
    return err == CL_SUCCESS ? BCL_SUCCESS
                             : bcl_cl_fail(w->ctx, err, "reading the blocks of the host's share");
}

/* Wait for the share's read (the main queue's work enqueued before runs meanwhile) and convert
 * it into a. */
static bcl_status share_wait(bsofi *w, host_share *sh)
{
    const double t0 = seconds_now();
    cl_int err = clFlush(w->q);
    if (err == CL_SUCCESS)
        err = clWaitForEvents(1, &sh->read_done);
    cl_int status = CL_COMPLETE;
    if (err == CL_SUCCESS)
        err = clGetEventInfo(sh->read_done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                             &status, NULL);
    if (err == CL_SUCCESS && status < 0)
        err = status;
    if (err != CL_SUCCESS)
        return bcl_cl_fail(w->ctx, err, "reading the blocks of the host's share");
    to_double(sh->raw, w->dbl, sh->elems, sh->a);
    w->share_s[0] += seconds_now() - t0;
    return BCL_SUCCESS;
}

/* Write the share's rows x cols (packed at the start of a) through the stage to `off`
 * (leading dimension ld) of dst on the side queue, and make the main queue wait for it; then
 * release what the share held (also after a failure `s`, once nothing of the side queue's still
 * reads into its buffers). */
static bcl_status share_end(bsofi *w, host_share *sh, bcl_status s, cl_mem dst, size_t off,
                            size_t ld, size_t rows, size_t cols)
{
    const cl_command_queue q = side_queue(w);
    cl_event written = NULL;
    const double t_end = seconds_now();
    if (s == BCL_SUCCESS) {
        from_double(sh->a, w->dbl, rows * cols, sh->raw);
        const cl_int err = clEnqueueWriteBuffer(q, sh->stage, CL_TRUE, 0, w->es * rows * cols,
                                                sh->raw, 0, NULL, NULL);
        s = err == CL_SUCCESS ? stage_copy(w, sh, 0, dst, off, ld, 0, rows, rows, cols, &written)
                              : bcl_cl_fail(w->ctx, err, "writing the host's share of H^-1");
        if (s == BCL_SUCCESS)
            s = queue_wait(w, written);
        const cl_int flushed = s == BCL_SUCCESS ? clFlush(q) : CL_SUCCESS;
        if (flushed != CL_SUCCESS)
            s = bcl_cl_fail(w->ctx, flushed, "clFlush");
    } else {
        clFinish(q);
    }
    if (written)
        clReleaseEvent(written);
    if (sh->read_done)
        clReleaseEvent(sh->read_done);
    if (sh->formed)
        clReleaseEvent(sh->formed);
    free(sh->a);
    free(sh->raw);
    w->share_s[2] += seconds_now() - t_end;
    return s;
}

/* The row version's share: block columns c = jF .. jF+h-1 (h = w->rv_host, all before the last),
 * X_i,c = Xt_i X_i+1,c for i = c-1 .. 0, from the multipliers Xt_0 .. Xt_jF+h-2 (dS) and the
 * diagonal blocks X_cc (H), read once they are formed; the main queue's row products take the
 * columns from jF+h on meanwhile (j_F = 0: the share starts at column 1, rv_share_first). a holds
 * the columns' first (jF+h) n rows (zeros below the diagonal blocks, as in H), then the
 * multipliers. */
static bcl_status host_rv_start(bsofi *w, cl_mem H, size_t offH, host_share *sh)
{
    const int n = w->n, c0 = rv_share_first(w), c1 = c0 + w->rv_host;
    const size_t nn = w->nn, L = (size_t)c1 * n, nx = L * (size_t)(c1 - c0) * n,
                 nm = (size_t)(c1 - 1) * nn;
    bcl_status s = share_begin(w, sh, nx + nm);
    for (int c = c0; c < c1 && s == BCL_SUCCESS; ++c) /* X_cc into its place in a */
        s = stage_copy(w, sh, 1, H, offH + block_at(w, c, c), w->N,
                       (size_t)(c - c0) * n * L + (size_t)c * n, L, n, n, NULL);
    if (s == BCL_SUCCESS && nm > 0)
        s = stage_copy(w, sh, 1, w->dS, (size_t)w->p * nn, nm, nx, nm, nm, 1, NULL);
    return s == BCL_SUCCESS ? share_reads_enqueued(w, sh) : s;
}

static bcl_status host_rv_finish(bsofi *w, cl_mem H, size_t offH, host_share *sh, bcl_status s)
{
    const int n = w->n, c0 = rv_share_first(w), c1 = c0 + w->rv_host;
    const size_t nn = w->nn, L = (size_t)c1 * n, nx = L * (size_t)(c1 - c0) * n;
    if (s == BCL_SUCCESS && sh->read_done)
        s = share_wait(w, sh);
    if (s == BCL_SUCCESS) {
        const double t0 = seconds_now();
        double *X = sh->a, *M = sh->a + nx;
        for (int i = c1 - 2; i >= 0; --i) {
            const int lo = i + 1 > c0 ? i + 1 : c0;
            double *col = X + (size_t)(lo - c0) * n * L;
            dgemm('N', 'N', n, (c1 - lo) * n, n, 1.0, M + (size_t)i * nn, n, col + (size_t)(i + 1) * n,
                  (int)L, 0.0, col + (size_t)i * n, (int)L);
        }
        w->share_s[1] += seconds_now() - t0;
    }
    return share_end(w, sh, s, H, offH + block_at(w, 0, c0), w->N, L, (size_t)(c1 - c0) * n);
}

/* The Q^T application's share: block rows 0 .. h-1 (h = w->qt_host) of H^-1 = R^-1 Q^T, with the
 * Q^(k) of dQ, read once R^-1 is complete; the main queue's products take the rows below. a holds
 * the rows (h n x N), then the factors: Q^(k) (2n x 2n) at 4 n^2 k, Q^(p) (n x n) after them. */
static bcl_status host_qt_start(bsofi *w, cl_mem H, size_t offH, host_share *sh)
{
    const size_t r0 = (size_t)w->qt_host * w->n, N = (size_t)w->N,
                 nq = (size_t)(w->p - 1) * 4 * w->nn + w->nn;
    bcl_status s = share_begin(w, sh, r0 * N + nq);
    if (s == BCL_SUCCESS)
        s = stage_copy(w, sh, 1, H, offH, N, 0, r0, r0, N, NULL);
    if (s == BCL_SUCCESS)
        s = stage_copy(w, sh, 1, w->dQ, 0, nq, r0 * N, nq, nq, 1, NULL);
    return s == BCL_SUCCESS ? share_reads_enqueued(w, sh) : s;
}

static bcl_status host_qt_finish(bsofi *w, cl_mem H, size_t offH, host_share *sh, bcl_status s)
{
    const int n = w->n, p = w->p, r0 = w->qt_host * n, N = w->N;
    const size_t nn = w->nn, nx = (size_t)r0 * N;
    double *T = s == BCL_SUCCESS ? malloc(sizeof *T * (size_t)r0 * 2 * n) : NULL;
    if (s == BCL_SUCCESS && !T)
        s = bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory for the host's share",
                     w->fn);
    if (s == BCL_SUCCESS && sh->read_done)
        s = share_wait(w, sh);
    if (s == BCL_SUCCESS) { /* the last block column times Q^(p)T, then pairs k, k+1 times Q^(k)T */
        const double t0 = seconds_now();
        double *X = sh->a;
        const double *Q = sh->a + nx;
        double *last = X + (size_t)(p - 1) * n * r0;
        dgemm('N', 'T', r0, n, n, 1.0, last, r0, Q + (size_t)(p - 1) * 4 * nn, n, 0.0, T, r0);
        memcpy(last, T, sizeof *T * (size_t)r0 * n);
        for (int k = p - 2; k >= 0; --k) {
            double *pair = X + (size_t)k * n * r0;
            const double *Qk = Q + (size_t)k * 4 * nn;
            /* block rows r > k still hold zeros in column k (R^-1 is block upper triangular and
             * column k is first written here): their products take depth n, the second half of
             * Q^(k)'s columns, as the device's do */
            const int full = (k + 1 < w->qt_host ? k + 1 : w->qt_host) * n;
            dgemm('N', 'T', full, 2 * n, 2 * n, 1.0, pair, r0, Qk, 2 * n, 0.0, T, r0);
            if (full < r0)
                dgemm('N', 'T', r0 - full, 2 * n, n, 1.0, pair + (size_t)n * r0 + full, r0,
                      Qk + (size_t)n * 2 * n, 2 * n, 0.0, T + full, r0);
            memcpy(pair, T, sizeof *T * (size_t)r0 * 2 * n);
        }
        w->share_s[1] += seconds_now() - t0;
    }
    free(T);
    return share_end(w, sh, s, H, offH, (size_t)N, (size_t)r0, (size_t)N);
}

/* The column version's share (method 1, the paper's l_j): block rows 0 .. hc-1 (hc = w->cv_host)
 * of block columns 0 .. jF-1, beside the host's panels. Row r runs along the columns,
 * X_r,k = X_r,k-1 W_k with W_k = -R_k-1,k X_kk, and the host forms both factors itself:
 * X_kk = R_kk^-1 it inverts anyway (invert_diagonal), and R_k-1,k = -V1 W of step k-1's panel
 * (factor_step's V and W = T^T V2^T A_k, n^3 flops each). a holds the rows (hc n x jF n, zeros
 * below the diagonal blocks as in H), then R_k-1,k and W_k; they are written after the panels,
 * before the row version. */
static bcl_status host_cv_begin(bsofi *w, host_share *sh)
{
    const size_t rows = (size_t)w->cv_host * w->n, cols = (size_t)w->jF * w->n;
    const bcl_status s = share_begin(w, sh, rows * cols + 2 * w->nn);
    if (s == BCL_SUCCESS)
        memset(sh->a, 0, sizeof(double) * rows * cols);
    return s;
}

/* column k's rows on the host (after factor_step(k) and invert_column(k)), and R_k,k+1 for the
 * next column */
static void host_cv_column(bsofi *w, host_share *sh, int k)
{
    const double t0 = seconds_now();
    const int n = w->n, hc = w->cv_host, ld = hc * n;
    const size_t nn = w->nn, rows = (size_t)ld, cols = (size_t)w->jF * n;
    double *X = sh->a, *R = X + rows * cols, *W = R + nn;
    const double *Xkk = w->Xd + (size_t)k * nn;
    if (k < hc)
        for (int c = 0; c < n; ++c)
            memcpy(X + ((size_t)k * n + c) * rows + (size_t)k * n, Xkk + (size_t)c * n,
                   sizeof(double) * n);
    if (k > 0) {
        const int m = (k < hc ? k : hc) * n;
        dgemm('N', 'N', n, n, n, -1.0, R, n, Xkk, n, 0.0, W, n);
        dgemm('N', 'N', m, n, n, 1.0, X + (size_t)(k - 1) * n * rows, ld, W, n, 0.0,
              X + (size_t)k * n * rows, ld);
    }
    if (k + 1 < w->jF) /* R_k,k+1 = -V1 W (V1: the top of the panel's V, leading dimension 2n) */
        dgemm('N', 'N', n, n, n, -1.0, w->V, 2 * n, w->W, n, 0.0, R, n);
    w->share_s[1] += seconds_now() - t0;
}

/* the rows into H (its diagonal blocks as the device has them), the main queue waiting for them */
static bcl_status host_cv_end(bsofi *w, host_share *sh, bcl_status s, cl_mem H, size_t offH)
{
    return share_end(w, sh, s, H, offH, (size_t)w->N, (size_t)w->cv_host * w->n,
                     (size_t)w->jF * w->n);
}

/* the rows could go in groups: j_F = 0 (no column version) and two groups or more */
static int row_groups_fit(const bsofi *w)
{
    return w->jF == 0 && w->rv_group >= 2 && (w->p - 1) / 2 >= w->rv_group;
}

/* ... and go so: the host takes no share of the row version */
static int row_groups_used(const bsofi *w)
{
    return w->rv_host == 0 && row_groups_fit(w);
}

/* BSTRI_RV's rows in groups of gs = w->rv_group (j_F = 0), after the multipliers Xt_i are in dS,
 * the diagonal blocks and the last block column's terms in H. Row i is X_i,c = Xt_i X_i+1,c
 * (c > i), so a group's rows lo .. h beyond its last column h are P X_h+1,c with
 * P_i = Xt_i ... Xt_h = X_i,h (-R_h,h+1), taken from the group's own column h. The rows then take
 * gs - 1 steps within every group at once (one batched product for the groups' columns, one for
 * the last block column), one batched product for the P's and one GEMM a group, bottom up, for
 * the columns beyond it: about 2 gs + p / gs launches one after the other instead of p - 1, their
 * products gs times taller, for two n^3 products more a row (its P, its last column's term twice:
 * about 4/p more than the rows one by one). The groups cover the bottom gs floor((p-1)/gs) block
 * rows; *rows_left becomes the count of rows above them, left to the row loop. P goes to dT's
 * second block column (free until BSOI). */
static bcl_status invert_row_groups(bsofi *w, cl_mem H, size_t offH, int *rows_left)
{
    const int n = w->n, p = w->p, gs = w->rv_group, ngroups = (p - 1) / gs;
    const int top = p - 1 - ngroups * gs; /* rows above the groups */
    const size_t nn = w->nn, N = (size_t)w->N, p_col = (size_t)n * N; /* where the P's go */
    const CLBlastTranspose no = CLBlastTransposeNo;
    size_t *off = malloc(sizeof *off * 3 * (size_t)ngroups);
    if (!off)
        return bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory", w->fn);
    size_t *oa = off, *ob = off + ngroups, *oc = off + 2 * (size_t)ngroups;
    bcl_status s = BCL_SUCCESS;
    /* step t: row i = h - t of every group, its columns i+1 .. h (all zero until now), then its
     * share of the last block column (the group's rows below it; the rows beyond come with P) */
    for (int t = 1; t < gs && s == BCL_SUCCESS; ++t) {
        for (int a = 0; a < ngroups; ++a) {
            const int i = top + a * gs + gs - 1 - t;
            oa[a] = (size_t)(p + i) * nn;
            ob[a] = offH + block_at(w, i + 1, i + 1);
            oc[a] = offH + block_at(w, i, i + 1);
        }
        s = gemm_batched(w, no, no, n, (size_t)t * n, n, (size_t)ngroups, 1.0, w->dS, oa, n, H,
                         ob, N, 0.0, H, oc, N);
        for (int a = 0; a < ngroups && s == BCL_SUCCESS; ++a) {
            const int i = top + a * gs + gs - 1 - t;
            ob[a] = offH + block_at(w, i + 1, p - 1);
            oc[a] = offH + block_at(w, i, p - 1);
        }
        if (s == BCL_SUCCESS)
            s = gemm_batched(w, no, no, n, n, n, (size_t)ngroups, 1.0, w->dS, oa, n, H, ob, N,
                             1.0, H, oc, N);
    }
    if (s == BCL_SUCCESS)
        s = timeline_mark(w, "R^-1 groups' own rows");
    /* P of every group: X_lo:h,h (-R_h,h+1), stacked at the group's rows in dT's second column */
    for (int a = 0; a < ngroups; ++a) {
        const int lo = top + a * gs, h = lo + gs - 1;
        oa[a] = offH + block_at(w, lo, h);
        ob[a] = w->r_s + (size_t)h * nn;
        oc[a] = p_col + (size_t)lo * n;
    }
    if (s == BCL_SUCCESS)
        s = gemm_batched(w, no, no, (size_t)gs * n, n, n, (size_t)ngroups, -1.0, H, oa, N, w->dR,
                         ob, n, 0.0, w->dT, oc, N);
    free(off);
    if (s == BCL_SUCCESS)
        s = timeline_mark(w, "R^-1 groups' P");
    /* bottom up: the columns beyond each group from the (final) row after it */
    for (int a = ngroups - 1; a >= 0 && s == BCL_SUCCESS; --a) {
        const int lo = top + a * gs, h = lo + gs - 1;
        s = gemm(w, no, no, (size_t)gs * n, (size_t)(p - 1 - h) * n, n, 1.0, w->dT,
                 p_col + (size_t)lo * n, N, H, offH + block_at(w, h + 1, h + 1), N, 1.0, H,
                 offH + block_at(w, lo, h + 1), N);
    }
    if (s == BCL_SUCCESS)
        s = timeline_mark(w, "R^-1 beyond the groups");
    *rows_left = top;
    return s;
}

/* Row version (BSTRI_RV) for the block columns from jF on (with last_column_from_u only X_p-1,p-1
 * and the last column's product by it): X_ii = R_ii^-1 (i >= jF); the last block column's
 * Y_i = -X_ii R_i,p-1 (one batched GEMM) times X_p-1,p-1 (one TRMM, or a GEMM with gemm.cl); the
 * row multipliers Xt_i = -X_ii R_i,i+1 (one batched GEMM); then block rows
 * p-2 .. 0: X_i,c = Xt_i X_i+1,c (+ the last column's term), c >= max(i+1, jF), the bottom ones
 * in groups where row_groups_used. */
static bcl_status invert_rows(bsofi *w, cl_mem H, size_t offH)
{
    const int n = w->n, p = w->p;
    const size_t nn = w->nn;
    bcl_status s = timeline_mark(w, "R^-1 start");
    if (s != BCL_SUCCESS)
        return s;
    if (w->dev_panels) /* all diagonal blocks at once; the temporary: dS's X~ blocks (after) */
        s = tri_inverse(w, w->jF, p - w->jF, H, offH, (size_t)p * nn);
    else
        for (int i = w->jF; i < p && s == BCL_SUCCESS; ++i)
            s = invert_diagonal(w, i, H, offH);
    if (s == BCL_SUCCESS && w->cv_done) /* the column version's columns, from the third queue */
        s = queue_wait(w, w->cv_done);
    if (s == BCL_SUCCESS)
        s = timeline_mark(w, "R^-1 diagonal blocks");
    if (s == BCL_SUCCESS && last_column_from_u(w)) { /* X_0:p-2,p-1 = U X_p-1,p-1 */
        /* U into the Q^T application's temporary (free until then) and a GEMM (X_pp holds zeros
         * below its diagonal): clBLAST's TRMM in place would copy H up to B's end and wait on
         * the host */
        const size_t rows = (size_t)(p - 1) * n, last = offH + block_at(w, 0, p - 1);
        s = copy_rect(w, H, last, w->N, w->dT, 0, w->N, rows, n);
        if (s == BCL_SUCCESS)
            s = gemm(w, CLBlastTransposeNo, CLBlastTransposeNo, rows, n, n, 1.0, w->dT, 0, w->N,
                     H, offH + block_at(w, p - 1, p - 1), w->N, 0.0, H, last, w->N);
        if (s == BCL_SUCCESS)
            s = timeline_mark(w, "R^-1 rows");
        return s;
    }
    size_t *off = malloc(sizeof *off * 3 * (size_t)p);
    if (!off)
        return bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory", w->fn);
    size_t *oa = off, *ob = off + p, *oc = off + 2 * p;
    const int ny = p > 2 ? p - 2 : 0, nt = p - 1;
    /* with gemm.cl the product by X_p-1,p-1 is a GEMM from a temporary (the Q^T application's,
     * free until then; X_p-1,p-1 holds zeros below its diagonal, as the products below need
     * too): on the H100 clBLAST's TRMM took 0.52 ms at n = 512 */
    const int y_in_temp = w->own_gemm;
    for (int i = 0; i < ny; ++i) {
        oa[i] = offH + block_at(w, i, i);
        ob[i] = w->r_l + (size_t)i * nn;
        oc[i] = y_in_temp ? (size_t)i * n : offH + block_at(w, i, p - 1);
    }
    if (s == BCL_SUCCESS)
        s = gemm_batched(w, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, (size_t)ny, -1.0, H,
                         oa, w->N, w->dR, ob, n, 0.0, y_in_temp ? w->dT : H, oc, w->N);
    if (s == BCL_SUCCESS && ny > 0)
        s = y_in_temp ? gemm(w, CLBlastTransposeNo, CLBlastTransposeNo, (size_t)ny * n, n, n, 1.0,
                             w->dT, 0, w->N, H, offH + block_at(w, p - 1, p - 1), w->N, 0.0, H,
                             offH + block_at(w, 0, p - 1), w->N)
                      : trmm_right_upper(w, (size_t)ny * n, n, H, offH + block_at(w, p - 1, p - 1),
                                         w->N, H, offH + block_at(w, 0, p - 1), w->N);
    if (s == BCL_SUCCESS)
        s = timeline_mark(w, "R^-1 last column's terms");
    for (int i = 0; i < nt; ++i) {
        oa[i] = offH + block_at(w, i, i);
        ob[i] = w->r_s + (size_t)i * nn;
        oc[i] = (size_t)(p + i) * nn;
    }
    if (s == BCL_SUCCESS)
        s = gemm_batched(w, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, (size_t)nt, -1.0, H,
                         oa, w->N, w->dR, ob, n, 0.0, w->dS, oc, n);
    free(off);
    if (s == BCL_SUCCESS)
        s = timeline_mark(w, "R^-1 multipliers");
    int rows_left = p - 1; /* block rows 0 .. rows_left - 1 still by the row loop */
    if (s == BCL_SUCCESS && row_groups_used(w))
        s = invert_row_groups(w, H, offH, &rows_left);
    host_share share = {0};
    if (s == BCL_SUCCESS && w->rv_host > 0)
        s = host_rv_start(w, H, offH, &share);
    /* the device's columns from here on */
    const int first = w->rv_host > 0 ? rv_share_first(w) + w->rv_host : w->jF;
    for (int i = rows_left - 1; i >= 0 && s == BCL_SUCCESS; --i) {
        const int c0 = i + 1 > first ? i + 1 : first;
        s = gemm(w, CLBlastTransposeNo, CLBlastTransposeNo, n, (size_t)(p - c0) * n, n, 1.0, w->dS,
                 (size_t)(p + i) * nn, n, H, offH + block_at(w, i + 1, c0), w->N, 1.0, H,
                 offH + block_at(w, i, c0), w->N);
    }
    if (w->rv_host > 0)
        s = host_rv_finish(w, H, offH, &share, s);
    if (s == BCL_SUCCESS)
        s = timeline_mark(w, "R^-1 rows");
    return s;
}

/* H^-1 = R^-1 Q^T (BSOI with explicit factors): the last block column times Q^(p)T, then block
 * column pairs (k, k+1), k = p-2 .. 0, times Q^(k)T; block column k is zero below block row k.
 * The temporary dT holds three block columns (slots 0-2; two where p < 3), and the steps take
 * turns so that most of a pair's products land in place. From k = p-2 on, every other step reads
 * [X_k | Y] from slots 0 and 1 (X_k's nonzero rows copied into slot 0; Y, the left column of the
 * step before or, at k = p-2, the last block column's product, already in slot 1) and writes both
 * columns into H; the steps between read the pair from H (X_k and the left column just written
 * there) and write into slots 1 and 2, and slot 2, the final right column, is copied into H. Two
 * steps copy about 1.5 block columns of N rows; before, each step's products went into dT and
 * both columns were copied back, 4 block columns every two steps (H100, n = 512: 50 us a step).
 * The products are the same. */
static bcl_status apply_qt(bsofi *w, cl_mem H, size_t offH)
{
    const size_t n = (size_t)w->n, N = (size_t)w->N, p = (size_t)w->p, col = n * N;
    const size_t r0 = (size_t)w->qt_host * n; /* rows above r0: the host's (host_qt_start) */
    const CLBlastTranspose no = CLBlastTransposeNo, tr = CLBlastTransposeYes;
    /* Y into slot 1 */
    bcl_status s = gemm(w, no, tr, N - r0, n, n, 1.0, H, offH + (p - 1) * col + r0, N, w->dQ,
                        (p - 1) * 4 * w->nn, n, 0.0, w->dT, col + r0, N);
    int from_temp = 1; /* the step reads slots 0 and 1, else H */
    for (size_t k = p - 1; k-- > 0 && s == BCL_SUCCESS; from_temp = !from_temp) {
        const size_t top = (k + 1) * n, qk = k * 4 * w->nn, hk = offH + k * col;
        const size_t lo = top > r0 ? top : r0; /* the first row taking K = n */
        const cl_mem a = from_temp ? w->dT : H, c = from_temp ? H : w->dT;
        const size_t a_left = from_temp ? 0 : hk, a_right = from_temp ? col : hk + col,
                     c_left = from_temp ? hk : col;
        if (from_temp && top > r0)
            s = copy_rect(w, H, hk + r0, N, w->dT, r0, N, top - r0, n);
        if (s == BCL_SUCCESS && top > r0)
            s = gemm(w, no, tr, top - r0, 2 * n, 2 * n, 1.0, a, a_left + r0, N, w->dQ, qk, 2 * n,
                     0.0, c, c_left + r0, N);
        if (s == BCL_SUCCESS)
            s = gemm(w, no, tr, N - lo, 2 * n, n, 1.0, a, a_right + lo, N, w->dQ, qk + 2 * n * n,
                     2 * n, 0.0, c, c_left + lo, N);
        if (s == BCL_SUCCESS && !from_temp)
            s = copy_rows(w, w->dT, 2 * col, H, hk + col, r0);
    }
    /* the last step's left column, or the only one (p = 1), is still in slot 1 */
    if (s == BCL_SUCCESS && from_temp)
        s = copy_rows(w, w->dT, col, H, offH, r0);
    return s;
}

/* count zeros into buf from element off (no stale NaN reaches a product); `what` names the
 * buffer in the error */
static bcl_status clear_buffer(bsofi *w, cl_mem buf, size_t off, size_t count, const char *what)
{
    const double zero = 0;
    const float zerof = 0;
    const cl_int err = clEnqueueFillBuffer(w->q, buf,
                                           w->dbl ? (const void *)&zero : (const void *)&zerof,
                                           w->es, off * w->es, count * w->es, 0, NULL, NULL);
    return err == CL_SUCCESS ? BCL_SUCCESS : bcl_cl_fail(w->ctx, err, what);
}

static bcl_status fill_zero(bsofi *w, cl_mem H, size_t offH)
{
    return clear_buffer(w, H, offH, (size_t)w->N * w->N, "clearing H^-1 (clEnqueueFillBuffer)");
}

/* ---- method 3: the panels on the device too (kernels of cl/pcyclic.cl) ----
 * The host only enqueues: the blocked QR of each panel, its explicit Q^(k), R_kk and R_kk^-1 are
 * kernels; every product is a clBLAST GEMM as in method 1. With the explicit Q^(k), the step's
 * update of block rows k, k+1 is four n x n x n GEMMs with Q^(k)'s quarters. */

#define QR_WG 256     /* work-items of a qr_apply group */
#define QR_TB 64      /* columns of t_diag_blocks' blocks */
#define TD_WG 256     /* t_diag_blocks' work-items */
#define APPLY_SPLIT_ROWS 256 /* rows of C a qr_apply work-group takes beyond n = 256 (a multiple
                              * of its QR_RCH) */
/* qr_panel: up to 32 row lanes a column (1024 work-items), for the latency of its global loads;
 * fewer where the kernel's registers do not allow that many */
static const int panel_wgs[3] = {1024, 512, 256};
#define SET_ARG(k, i, v) (err |= clSetKernelArg((k), (i), sizeof(v), &(v)))

static bcl_status dev_kernels(bsofi *w)
{
    /* The block column in registers, at most 64 values a work-item, 256 work-items: blocks of 32
     * columns up to 2n = 256 rows, 16 up to 1024 and 8 up to 2048; larger n read the block column
     * from global memory (qr_panel, blocks of 32). Each warp holds whole columns (qr_panel_reg:
     * nb / 8 columns, 16, 32 or 64 rows a lane), except on NVIDIA (warp shuffles) above 1024 rows,
     * where the rows are spread over the work-items (qr_panel_rows: 8 rows of every column each):
     * on the H100 (bench pcyclic --order 10000, the two alternating in one run) n = 1024 took
     * 122.7-125.1 ms against 137.4-141.6 (a panel launch 18.4 us against 33), while at n = 512 and
     * 256 qr_panel_rows lost (76.8 ms against 62.5 with its best block, 8 columns; 49.1 against
     * 42.9). BATCHCL_PCYCLIC_PANEL=global, columns or rows forces a kernel and BATCHCL_PCYCLIC_NB=8
     * or 16 a narrower block (tests); BATCHCL_PCYCLIC_PANEL_WG=512 spreads qr_panel_reg's columns
     * over 16 warps; BATCHCL_PCYCLIC_X_LOCAL=1 makes qr_panel_reg read x from local memory at any
     * size, as it does at 64 rows a lane (tests). */
    int rows = 4; /* not fewer: one program serves every n <= 64 (each is a build) */
    while (32 * rows < 2 * w->n)
        rows *= 2;
    const char *force = getenv("BATCHCL_PCYCLIC_PANEL");
    const char *wg_env = getenv("BATCHCL_PCYCLIC_PANEL_WG");
    const char *shuffle_env = getenv("BATCHCL_PCYCLIC_SHUFFLE");
    const char *nb_env = getenv("BATCHCL_PCYCLIC_NB");
    w->panel_rows = rows <= 64 && !(force && !strcmp(force, "global")) ? rows : 0;
    /* blocks of 16 from 2n = 257 rows: on the H100 (bench pcyclic --order 10000, two rounds in
     * one run) n = 256 took 29.7 / 29.7 ms against 31.6 / 31.8 with blocks of 32, n = 192 30.4 /
     * 30.3 against 32.4 / 32.6, but n = 128 26.4 / 26.5 against 25.7 / 26.0; blocks of 8 lost
     * everywhere below n = 768 (n = 256 38.3 ms). Where qr_chain takes the blocks (NVIDIA,
     * below), blocks of 16 from n = 65 (2n = 129 rows): one launch for all of them, and n = 128
     * took 23.7 / 23.8 and 23.7 / 23.4 ms against 24.7 / 24.7 and 25.0 / 24.9 in blocks of 32
     * (two runs of two rounds; 96 25.6 / 25.4 against 26.8 / 26.7) */
    const int nvidia = strstr(w->ctx->dev.vendor, "NVIDIA") != NULL;
    const char *chain_env = getenv("BATCHCL_PCYCLIC_CHAIN");
    const int chain_nvidia = nvidia && !w->ctx->pcyclic_no_shuffle && !force &&
                             !(shuffle_env && !strcmp(shuffle_env, "0")) &&
                             !(chain_env && !strcmp(chain_env, "0"));
    w->nb = !w->panel_rows ? 32
            : rows <= 4    ? 32
            : rows <= 8    ? (chain_nvidia ? 16 : 32)
            : rows <= 32   ? 16
                           : 8;
    const int nb_forced = nb_env ? atoi(nb_env) : 0;
    if (w->panel_rows && (nb_forced == 8 || nb_forced == 16) && nb_forced < w->nb)
        w->nb = nb_forced;
    /* qr_apply's row ranges: 64 rows up to n = 256 (panels of 512 rows in eight ranges), 256
     * beyond; on the H100 (bench pcyclic --order 10000, ranges of 64 / 128 / 256 / 512 rows,
     * two rounds in one run) n = 256 took 49.9 / 51.1 / 52.3 / 52.4 ms, n = 1024 172.5 / 176.8 /
     * 170.2 / 194.0. BATCHCL_PCYCLIC_SPLIT_ROWS (a multiple of 64, at most 4096) sets it (tests) */
    const char *split_env = getenv("BATCHCL_PCYCLIC_SPLIT_ROWS");
    const int split = split_env ? atoi(split_env) : 0;
    w->split_rows = split >= 64 && split <= 4096 && split % 64 == 0 ? split
                    : w->n <= 256                                     ? 64
                                                                      : APPLY_SPLIT_ROWS;
    /* Q^(k) by GEMMs from n = 129 on, where the blocks are 16 columns (qr_apply passes over Q
     * once per block of nb columns: on the H100 the GEMMs took BSOF from 133 to 100 ms at
     * n = 1024, 52.5 to 46.2 at 512, 32.2 to 31.6 at 256; with blocks of 16, bench pcyclic
     * --order 10000, two rounds in one run, n = 192 29.2 / 29.3 ms against 30.4 / 30.0 by
     * qr_apply, 224 29.6 / 29.7 against 30.6 / 30.2, 160 29.4 / 29.4 against 29.9 / 29.5, while
     * n = 128 in blocks of 32 keeps qr_apply); BATCHCL_PCYCLIC_QFORM=gemm or apply forces either */
    const char *qform = getenv("BATCHCL_PCYCLIC_QFORM");
    w->q_gemm = qform && !strcmp(qform, "gemm")    ? 1
                : qform && !strcmp(qform, "apply") ? 0
                                                   : w->n > 128;
    char opt[384]; /* the panel program's options (about 235 characters at most) */
    /* CPUs (where method 3 runs when asked, as in the tests): loops over private arrays rolled.
     * PoCL 3.1 compiled the unrolled register panels for minutes: test_pcyclic numerics took
     * 14.9 min on an empty kernel cache, 5.2 rolled (2-core CI machine), with the same results */
    const char *rolled = w->ctx->dev.is_gpu ? "" : " -DBCL_ROLLED";
    int v_from_p = 0; /* the register panels built with -DV_FROM_P */
    if (w->panel_rows) {
        /* NVIDIA: warp sums by the lanes' shuffles (inline PTX); without it, or when the build
         * refuses it, through local memory */
        w->panel_shuffle = nvidia && !w->ctx->pcyclic_no_shuffle &&
                           !(shuffle_env && !strcmp(shuffle_env, "0"));
        const int by_rows = force ? !strcmp(force, "rows") : w->panel_shuffle && rows == 64;
        w->panel_rpl = 0;
        if (by_rows) { /* rows a work-item: the fewest (a power of 2) that cover the 2n rows */
            w->panel_rpl = 1;
            while (256 * w->panel_rpl < 2 * w->n)
                w->panel_rpl *= 2;
        }
        const int wg = wg_env ? atoi(wg_env) : 0;
        w->panel_wg = !by_rows && wg == 512 && wg / 32 <= w->nb ? wg : 256;
        /* the block reflectors applied by qr_apply_rows (one launch, QR_WG apply_rpl >= 2n
         * rows, nb apply_ct = 32 or 64 entries of W a group) on NVIDIA, by qr_apply's row ranges
         * elsewhere; BATCHCL_PCYCLIC_APPLY=rows or ranges forces either and
         * BATCHCL_PCYCLIC_APPLY_CT=1, 2, 4 or 8 sets the columns a group (tests, A/B) */
        const char *apply_env = getenv("BATCHCL_PCYCLIC_APPLY");
        const char *ct_env = getenv("BATCHCL_PCYCLIC_APPLY_CT");
        const int ct = ct_env ? atoi(ct_env) : 0;
        w->apply_rpl = 0;
        if (apply_env ? !strcmp(apply_env, "rows") : nvidia) {
            w->apply_rpl = 1;
            while (QR_WG * w->apply_rpl < 2 * w->n)
                w->apply_rpl *= 2;
            /* a work-item's rows of V and C kept in registers from the sums to the update
             * instead of loaded again (H100, bench pcyclic --order 10000 against the reloads in
             * one run: n = 128 24.6 / 24.5 / 24.7 ms against 25.4 / 25.1 / 25.1, 256 28.3 / 28.0 /
             * 28.4 against 29.2 / 28.8 / 28.8, 512 40.5 / 40.3 / 40.5 against 41.0 / 40.6 / 40.5,
             * 768 62.7 / 62.9 against 66.1 / 66.5, 1024 (8 rows a work-item) 63.1 / 63.3 against
             * 66.7 / 67.0); BATCHCL_PCYCLIC_APPLY_KEEP=0 loads them again */
            const char *keep_env = getenv("BATCHCL_PCYCLIC_APPLY_KEEP");
            w->apply_keep = !(keep_env && !strcmp(keep_env, "0"));
            /* 32 entries of W a group. Loading the rows again, 64 where the widest apply (the
             * factorization's n - nb columns, or building Q^(k) from the block reflectors the
             * identity's 2n) would take more groups than the device has compute units and a
             * work-item holds at most 4 rows: at about 200 registers a work-item a group fills a
             * compute unit, and on the H100 (132 of them) a second wave took a launch at n = 512
             * from 10.8 to 19 us. With 64 entries (bench pcyclic --order 10000, against 32, same
             * run) n = 512 took 41.5 / 41.6 ms against 42.6 / 42.6, n = 256 31.8 / 31.8 against
             * 32.7 / 32.9, 160 31.1 / 31.3 / 31.2 against 33.8 / 33.5 / 33.8, 128 25.5 / 25.8 /
             * 25.5 against 27.1 / 26.7 / 27.0 (64: the same), but n = 1024 (8 rows a work-item)
             * 67.7 / 67.7 against 67.4 / 67.4. With the rows kept, 64 entries and the kept rows
             * exceed the registers: n = 512 40.7 / 40.7 ms against 39.5 / 39.7 with 32, 128
             * 27.3 / 27.3 against 24.8 / 25.0 (same run) */
            const int cols = w->q_gemm ? w->n - w->nb : 2 * w->n;
            const int widest = (cols + 32 / w->nb - 1) / (32 / w->nb);
            const int wide = !w->apply_keep && widest > (int)w->ctx->dev.compute_units &&
                             w->apply_rpl <= 4;
            w->apply_ct = (wide ? 64 : 32) / w->nb;
            if ((ct == 1 || ct == 2 || ct == 4 || ct == 8) && ct * w->nb % 32 == 0 &&
                ct * w->nb <= 64)
                w->apply_ct = ct;
        }
        /* the register panels write no V (v_from_panel forms it after the panel's last block,
         * and the applies read the reflectors from the panel); BATCHCL_PCYCLIC_V_FROM_P=0 makes
         * them write it (A/B, tests) */
        const char *vp_env = getenv("BATCHCL_PCYCLIC_V_FROM_P");
        v_from_p = !(vp_env && !strcmp(vp_env, "0"));
        const char *x_env = getenv("BATCHCL_PCYCLIC_X_LOCAL");
        const int x_forced = x_env && !strcmp(x_env, "1") && w->panel_rows < 64 && !by_rows;
        w->panel_x_local = !by_rows && (w->panel_rows >= 64 || x_forced); /* PW_HOLD_X */
        /* tri_inverse's columns in local memory, 32 KiB (n <= 16 rows <= 1024): 8 a group up to
         * n = 512, 4 beyond (BATCHCL_PCYCLIC_TRI_COLS=4 forces 4 at any n: tests) */
        const int tri_nmax = 16 * rows;
        const char *tri_env = getenv("BATCHCL_PCYCLIC_TRI_COLS");
        w->tri_cols = tri_nmax > 512 || (tri_env && !strcmp(tri_env, "4")) ? 4 : 8;
        /* the panel's whole chain of blocks and applies in one launch (qr_chain) where the
         * blocks are qr_panel_reg's, each group 32 / nb of the panel's columns (W of 32 entries),
         * also where that makes more groups than compute units: the later tickets start as the
         * first blocks' groups finish and catch up with the blocks done by then. On NVIDIA in
         * blocks of 16 (n = 65-512) and around the panel by rows (513-1024): on the H100 (bench
         * pcyclic --order 10000, against block by block in one run, two rounds) n = 256 took
         * 27.1 / 27.1 ms against 28.0 / 28.0 (a launch of 296 us for 16 panels and 15 applies),
         * 384 37.4 / 37.4 against 37.6 / 37.5, 448 38.8 / 38.8 against 39.3 / 39.2, 512 38.7 /
         * 38.6 against 39.4 / 39.4, 1024 56.8 / 56.7 against 62.1 / 62.1, 768 57.2 / 57.0
         * against 61.3 / 61.2, but 320 35.5 / 35.5 against 35.2 / 35.1; with 4 columns a group
         * above n = 264 (one group a compute unit) 320-512 lost 0.7-0.8 ms of that. In blocks of
         * 32 the launches lost (n = 128 25.0 / 24.9 ms against 24.7 / 24.6).
         * BATCHCL_PCYCLIC_CHAIN=0 launches block by block, 1 takes qr_chain on any device and
         * block width (tests); BATCHCL_PCYCLIC_CHAIN_CPG=4, 8, ... gives a group more columns */
        const int chain =
            chain_env ? !strcmp(chain_env, "1") : w->panel_shuffle && (w->nb == 16 || by_rows);
        w->chain_cpg = w->chain_rpl = 0;
        if (chain && v_from_p && w->panel_wg == 256) {
            w->chain_cpg = w->nb >= 32 ? 1 : 32 / w->nb;
            const char *cpg_env = getenv("BATCHCL_PCYCLIC_CHAIN_CPG");
            const int cpg = cpg_env ? atoi(cpg_env) : 0;
            if (cpg > w->chain_cpg && cpg <= w->nb && cpg * w->nb <= 256 && (cpg & (cpg - 1)) == 0)
                w->chain_cpg = cpg;
            w->chain_rpl = 1;
            while (256 * w->chain_rpl < 2 * w->n)
                w->chain_rpl *= 2;
        }
        /* BSOF on two queues where qr_chain takes the panels and GEMMs form Q^(k): NVIDIA's
         * default up to n = OVERLAP_NMAX; BATCHCL_PCYCLIC_OVERLAP=0 keeps one queue, 1 takes two
         * wherever it can (tests). H200, bench pcyclic --order 10000, ms on two queues / one
         * (with membar.gl at qr_chain's hand-offs): n = 128 22.9 / 22.9, 192 21.1 / 25.6, 256
         * 22.4 / 26.0, 384 31.6 / 34.6, 512 35.9 / 36.7; with acquire / release, 256 22.0 / 25.7.
         * Until the thirty-fifth session those hand-offs fenced with mem_fence, which NVIDIA
         * compiles to membar.cta: with the second queue's kernels beside the chain about one call
         * in twenty returned a wrong inverse at n = 256 (bench pcyclic --same-bits, 21 of 384
         * calls), so two queues were off by default for a session; with device scope
         * (CH_WAIT_GE, CH_RELEASE_*) none of about 1 300.
         * The trailing groups hold chain_tch chunks of columns (BATCHCL_PCYCLIC_CHAIN_TCH, 1 to
         * 8): 2 up to n = 256, 4 beyond. On the H200 (bench pcyclic --order 10000, two rounds in
         * one run, ms for 2 / 4 / 8 chunks) n = 192 22.9 / 23.2 / 24.0, 256 23.7 / 24.0 / 24.8,
         * 384 34.0 / 33.3 / 38.1, 512 38.3 / 36.7 / 43.1;
         * with one chunk a group (twice the groups the device holds at once) the second queue's
         * kernels waited for the chain's last groups to start: n = 256 26.0 ms */
        const char *overlap_env = getenv("BATCHCL_PCYCLIC_OVERLAP");
        w->overlap = w->chain_cpg && v_from_p && w->q_gemm && w->ctx->nqueues > 1 &&
                     (overlap_env ? !strcmp(overlap_env, "1") : nvidia && w->n <= OVERLAP_NMAX);
        const char *serial_env = getenv("BATCHCL_PCYCLIC_OVERLAP_SERIAL");
        w->overlap_serial = w->overlap && serial_env && atoi(serial_env) != 0;
        /* BATCHCL_PCYCLIC_CHAIN_STEPS (1 .. MAX_CHAIN_STEPS) steps a launch, and
         * BATCHCL_PCYCLIC_CHAIN_TAIL single steps before the last pair */
        const char *steps_env = getenv("BATCHCL_PCYCLIC_CHAIN_STEPS");
        const char *tail_env = getenv("BATCHCL_PCYCLIC_CHAIN_TAIL");
        const int csteps = steps_env ? atoi(steps_env) : 0, ctail = tail_env ? atoi(tail_env) : -1;
        const char *groups_env = getenv("BATCHCL_PCYCLIC_CHAIN_GROUPS");
        /* the defaults (-1, 0) once the build and the queues are known (below) */
        w->chain_groups = groups_env ? atoi(groups_env) : -1;
        w->chain_steps = csteps >= 1 && csteps <= MAX_CHAIN_STEPS ? csteps : 0;
        w->chain_tail = ctail >= 0 ? ctail : CHAIN_TAIL_DEFAULT;
        const char *tch_env = getenv("BATCHCL_PCYCLIC_CHAIN_TCH");
        const int tch = tch_env ? atoi(tch_env) : 0;
        w->chain_tch = !w->overlap              ? 1
                       : tch >= 1 && tch <= 8 ? tch
                       : w->n <= 256          ? 2
                                              : 4;
        /* BATCHCL_PCYCLIC_CHAIN_CLOCK=1 (NVIDIA, developer tool): qr_chain writes the global
         * timer at its marks after the counters, and the call prints where a chain's time went */
        const char *clock_env = getenv("BATCHCL_PCYCLIC_CHAIN_CLOCK");
        char extra_opt[192];
        for (;;) {
            /* the clock needs the shuffle build's PTX: set again after a fallback without it */
            w->chain_clock = w->chain_cpg && w->panel_shuffle && clock_env && !strcmp(clock_env, "1");
            w->chain_slot = 2 + 2 * ((w->n + w->nb - 1) / w->nb);
            if (w->chain_clock)
                w->chain_slot += 8 * ((w->n + w->nb - 1) / w->nb) + 256;
            extra_opt[0] = '\0';
            if (w->apply_rpl)
                snprintf(extra_opt, sizeof extra_opt, " -DAPPLY_RPL=%d -DAPPLY_CT=%d -DAPPLY_KEEP=%d",
                         w->apply_rpl, w->apply_ct, w->apply_keep);
            size_t len = strlen(extra_opt);
            /* qr_chain's hand-offs by PTX acquire loads and release reductions from compute
             * capability 7 (sm_70) on, by membar.gl before that (cl/pcyclic.cl, CH_WAIT_GE);
             * BATCHCL_PCYCLIC_PTX_ACQUIRE=0 takes membar.gl anywhere (tests of that path) */
            const char *arch = w->ctx->dev.architecture;
            const char *acq_env = getenv("BATCHCL_PCYCLIC_PTX_ACQUIRE");
            const int ptx_acquire = !strncmp(arch, "sm_", 3) && atoi(arch + 3) >= 70 &&
                                    !(acq_env && !strcmp(acq_env, "0"));
            if (w->chain_cpg)
                snprintf(extra_opt + len, sizeof extra_opt - len,
                         " -DCHAIN_CPG=%d -DCHAIN_RPL=%d -DCHAIN_TCH=%d%s%s", w->chain_cpg,
                         w->chain_rpl, w->chain_tch, w->chain_clock ? " -DCHAIN_CLOCK" : "",
                         ptx_acquire ? " -DBCL_PTX_ACQUIRE" : "");
            len = strlen(extra_opt);
            snprintf(extra_opt + len, sizeof extra_opt - len, " -DTRI_NMAX=%d -DTRI_COLS=%d",
                     tri_nmax, w->tri_cols);
            /* the kernel's layout: rows a work-item (qr_panel_rows) or a lane (qr_panel_reg) */
            snprintf(opt, sizeof opt,
                     "-DQR_NB=%d -DQR_WG=%d -DQR_TB=%d -DTD_WG=%d -DPANEL_WG=%d -DPANEL_%s=%d%s%s%s%s%s%s",
                     w->nb, QR_WG, QR_TB, TD_WG, w->panel_wg, by_rows ? "RPL" : "ROWS",
                     by_rows ? w->panel_rpl : w->panel_rows, v_from_p ? " -DV_FROM_P" : "",
                     w->panel_shuffle ? " -DBCL_PTX_SHUFFLE" : "", x_forced ? " -DPW_HOLD_X=0" : "",
                     extra_opt, w->dbl ? " -DBCL_DOUBLE" : "", rolled);
            bcl_status s = bcl_get_kernel(w->ctx, "pcyclic.cl", opt,
                                          w->chain_cpg ? "qr_chain"
                                          : by_rows    ? "qr_panel_rows"
                                                       : "qr_panel_reg",
                                          &w->k_panel);
            if (s == BCL_BUILD_FAILED && w->panel_shuffle) { /* remembered, and not an error */
                w->panel_shuffle = 0;
                w->ctx->pcyclic_no_shuffle = 1;
                bcl_clear_error(w->ctx);
                continue;
            }
            if (s != BCL_SUCCESS)
                return s;
            break;
        }
        if (w->k_panel->max_work_group < (size_t)w->panel_wg)
            w->panel_rows = w->panel_rpl = w->chain_cpg = w->chain_clock = 0;
    }
    /* R_kk^-1 by back substitution on leaves of 64 and GEMMs above them (tri_inverse);
     * BATCHCL_PCYCLIC_TRI_LEAF sets the leaves' order (0: whole blocks) */
    const char *leaf_env = getenv("BATCHCL_PCYCLIC_TRI_LEAF");
    w->tri_leaf = leaf_env ? atoi(leaf_env) : 64;
    if (!w->panel_rows) { /* qr_panel's build: blocks of 32, qr_apply, tri_inverse in X */
        w->apply_rpl = 0;
        w->tri_cols = 8;
        w->nb = 32;
    }
    for (int i = 0; i < 3 && !w->panel_rows; ++i) {
        w->panel_wg = panel_wgs[i];
        snprintf(opt, sizeof opt, "-DQR_NB=%d -DQR_WG=%d -DQR_TB=%d -DTD_WG=%d -DPANEL_WG=%d%s%s",
                 w->nb, QR_WG, QR_TB, TD_WG, w->panel_wg, w->dbl ? " -DBCL_DOUBLE" : "", rolled);
        bcl_status s = bcl_get_kernel(w->ctx, "pcyclic.cl", opt, "qr_panel", &w->k_panel);
        if (s != BCL_SUCCESS)
            return s;
        if (w->k_panel->max_work_group >= (size_t)w->panel_wg)
            break;
    }
    /* the rest from the panel kernel's program; qr_apply and tri_inverse need groups of 256 */
    const char *names[7] = {w->chain_cpg    ? "qr_chain"
                            : w->panel_rpl  ? "qr_panel_rows"
                            : w->panel_rows ? "qr_panel_reg"
                                            : "qr_panel",
                            "qr_apply", "tri_inverse",
                            "qr_take_r", "set_identity", "bsofi_finish", "t_diag_blocks"};
    bcl_kernel_entry **out[7] = {&w->k_panel, &w->k_apply, &w->k_tri, &w->k_take_r, &w->k_eye,
                                 &w->k_finish, &w->k_tdiag};
    for (int i = 1; i < 7; ++i) {
        bcl_status s = bcl_get_kernel(w->ctx, "pcyclic.cl", opt, names[i], out[i]);
        if (s != BCL_SUCCESS)
            return s;
    }
    const size_t need[7] = {(size_t)w->panel_wg, QR_WG, 256, 0, 0, 0, TD_WG}; /* fixed groups */
    for (int i = 0; i < 7; ++i)
        if ((*out[i])->max_work_group < need[i])
            return bcl_fail(w->ctx, BCL_UNSUPPORTED_SIZE,
                            "%s: the device panels (pcyclic_method 3) need %zu work-items per group "
                            "in %s; the device allows %zu",
                            w->fn, need[i], names[i], (*out[i])->max_work_group);
    /* the register panels write no V: their V stores, from the one compute unit of the panel's
     * work-group, made a panel launch 19.3 us against 17.3 at n = 1024 on the H100 (25.6 against
     * 24.6 at n = 512). The host decides by the options it chose: -DV_FROM_P added through
     * BATCHCL_BUILD_OPTIONS would leave V unwritten behind its back. */
    w->v_in_panel = w->panel_rows && v_from_p; /* panel_rows: the register panels' build stood */
    w->k_vcopy = NULL;
    if (w->v_in_panel && w->q_gemm) { /* only the GEMMs forming Q^(k) need V itself */
        bcl_status s = bcl_get_kernel(w->ctx, "pcyclic.cl", opt, "v_from_panel", &w->k_vcopy);
        if (s != BCL_SUCCESS)
            return s;
    }
    /* two queues (chosen with the chain above) where the chain and v_from_panel stood */
    w->overlap = w->overlap && w->chain_cpg && w->k_vcopy && w->q2;
    /* qr_chain's groups taking roles in turn and steps a launch: by default only in the shuffle
     * build (whose kernel loops over roles) on two queues; with a group a role, several steps a
     * launch starve the second queue */
    if (w->chain_groups < 0)
        w->chain_groups = w->overlap && w->panel_shuffle && w->n <= CHAIN_GROUPS_NMAX
                              ? CHAIN_GROUPS_DEFAULT
                              : 0;
    if (w->chain_steps == 0)
        w->chain_steps = w->chain_groups > 0 && w->panel_shuffle ? CHAIN_STEPS_DEFAULT : 1;
    w->k_apply_rows = NULL;
    if (w->apply_rpl) {
        bcl_status s = bcl_get_kernel(w->ctx, "pcyclic.cl", opt, "qr_apply_rows", &w->k_apply_rows);
        if (s != BCL_SUCCESS)
            return s;
        if (w->k_apply_rows->max_work_group < QR_WG) /* its registers: qr_apply's ranges then */
            w->k_apply_rows = NULL;
    }
    return BCL_SUCCESS;
}

static bcl_status run_kernel(bsofi *w, bcl_kernel_entry *k, cl_int arg_err, size_t global,
                             size_t local, const char *name)
{
    cl_int err = arg_err;
    cl_event ev = NULL; /* BATCHCL_TIMELINE: every kernel, named as in `name` past "launching " */
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(w->q, k->kernel, 1, NULL, &global, local ? &local : NULL, 0,
                                     NULL, w->ctx->recording ? &ev : NULL);
    if (ev) {
        bcl_step_record(w->ctx, strncmp(name, "launching ", 10) ? name : name + 10, ev);
        clReleaseEvent(ev);
    }
    return err == CL_SUCCESS ? BCL_SUCCESS : bcl_cl_fail(w->ctx, err, name);
}

static size_t round_up(size_t x, size_t to)
{
    return (x + to - 1) / to * to;
}

/* C(j0:m, 0:ncols) := (I - V T' V^T) C(j0:m, 0:ncols) with the reflectors of the block at j0
 * (T' = T^T when trans: the factorization; T: building Q), read below the diagonal of V (w->dV,
 * or the factored panel itself) */
static bcl_status apply_block(bsofi *w, cl_mem V, int ldv, int m, int j0, int trans, cl_mem C,
                              size_t offC, int ldc, int ncols)
{
    /* the arguments qr_apply_rows and qr_apply share */
    cl_kernel k = w->k_apply_rows ? w->k_apply_rows->kernel : w->k_apply->kernel;
    const cl_int cm = m, cj0 = j0, nbk = w->n - j0 < w->nb ? w->n - j0 : w->nb, tr = trans,
                 cld = ldc, cn = ncols, cldv = ldv;
    const cl_ulong zero = 0, offT = (cl_ulong)(j0 / w->nb) * w->nb * w->nb, oc = offC;
    cl_int err = CL_SUCCESS;
    SET_ARG(k, 0, V);
    SET_ARG(k, 1, zero);
    SET_ARG(k, 2, cldv);
    SET_ARG(k, 3, w->dTb);
    SET_ARG(k, 4, offT);
    SET_ARG(k, 5, cm);
    SET_ARG(k, 6, cj0);
    SET_ARG(k, 7, nbk);
    SET_ARG(k, 8, tr);
    SET_ARG(k, 9, C);
    SET_ARG(k, 10, oc);
    SET_ARG(k, 11, cld);
    SET_ARG(k, 12, cn);
    if (w->k_apply_rows) {
        const size_t groups = ((size_t)ncols + w->apply_ct - 1) / w->apply_ct;
        return run_kernel(w, w->k_apply_rows, err, groups * QR_WG, QR_WG, "launching qr_apply_rows");
    }
    /* C taller than two ranges of w->split_rows rows is split, each range its own work-groups
     * (two launches), so that more compute units work and each group's chain of chunks stays
     * short; on the H100 a split into two ranges cost its extra launch */
    const int splits =
        m - j0 > 2 * w->split_rows ? (m - j0 + w->split_rows - 1) / w->split_rows : 1;
    const cl_int rows = splits > 1 ? w->split_rows : m - j0;
    SET_ARG(k, 13, rows);
    SET_ARG(k, 15, w->dWp);
    const size_t cols_per_group = (size_t)(QR_WG / w->nb); /* qr_apply's QR_CT */
    const size_t global[2] = {((size_t)ncols + cols_per_group - 1) / cols_per_group * QR_WG,
                              (size_t)splits},
                 local[2] = {QR_WG, 1};
    /* stage 0: both parts in one launch; 1 then 2: the shares of W, then the update */
    const cl_int first = splits > 1 ? 1 : 0, last = splits > 1 ? 2 : 0;
    for (cl_int stage = first; stage <= last && err == CL_SUCCESS; ++stage) {
        SET_ARG(k, 14, stage);
        if (err == CL_SUCCESS)
            err = clEnqueueNDRangeKernel(w->q, k, 2, NULL, global, local, 0, NULL, NULL);
    }
    return err == CL_SUCCESS ? BCL_SUCCESS : bcl_cl_fail(w->ctx, err, "launching qr_apply");
}

/* the reflectors the applies read (below the diagonal only): the factored panel itself where
 * the panel kernel writes no V, else V; *ldv its leading dimension */
static cl_mem applied_reflectors(const bsofi *w, int m, int ldp, int *ldv)
{
    *ldv = w->v_in_panel ? ldp : m;
    return w->v_in_panel ? w->dP : w->dV;
}

/* dev_qr's last launch: R_kk (and with v_from_panel V and Q = I) from the factored panel */
static bcl_status dev_qr_take(bsofi *w, int m, int ldp, int k, cl_mem Q, size_t offQ, int ldq)
{
    const cl_int cld = ldp, cn = w->n, first = k * w->n;
    const cl_ulong zero = 0, offR = (cl_ulong)k * w->nn, offP = (cl_ulong)w->slot * w->slot_stride;
    cl_int err = CL_SUCCESS;
    if (w->k_vcopy) { /* V for the GEMMs forming Q^(k), R, and Q = I, in one launch */
        cl_kernel kv = w->k_vcopy->kernel;
        const cl_int cm = m, cldq = ldq;
        const cl_ulong oq = offQ;
        SET_ARG(kv, 0, w->dP);
        SET_ARG(kv, 1, offP);
        SET_ARG(kv, 2, cld);
        SET_ARG(kv, 3, cm);
        SET_ARG(kv, 4, cn);
        SET_ARG(kv, 5, w->dV);
        SET_ARG(kv, 6, cm);
        SET_ARG(kv, 7, w->dRkk);
        SET_ARG(kv, 8, offR);
        SET_ARG(kv, 9, w->dBad);
        SET_ARG(kv, 10, zero);
        SET_ARG(kv, 11, first);
        SET_ARG(kv, 12, Q);
        SET_ARG(kv, 13, oq);
        SET_ARG(kv, 14, cldq);
        return run_kernel(w, w->k_vcopy, err, round_up((size_t)m * m, 256), 0,
                          "launching v_from_panel");
    }
    cl_kernel kt = w->k_take_r->kernel;
    SET_ARG(kt, 0, w->dP);
    SET_ARG(kt, 1, offP);
    SET_ARG(kt, 2, cld);
    SET_ARG(kt, 3, cn);
    SET_ARG(kt, 4, w->dRkk);
    SET_ARG(kt, 5, offR);
    SET_ARG(kt, 6, w->dBad);
    SET_ARG(kt, 7, zero);
    SET_ARG(kt, 8, first);
    return run_kernel(w, w->k_take_r, err, round_up(w->nn, 256), 0, "launching qr_take_r");
}

/* BATCHCL_PCYCLIC_CHAIN_CLOCK=1: waits for BSOF and prints, averaged over the steps 1 .. p - 3
 * (whole chains, away from the ends), per block of the panel the microseconds from block 0's
 * last ticket's start to each mark of the block's last ticket (qr_chain's CH_MARK: its start,
 * block b - 1's flag seen, the earlier blocks applied to its columns, the block's columns written
 * back by all its groups, the first column step done, all steps done, T written, the flag about
 * to go up), and the trailing groups' last end */
static void chain_report(bsofi *w)
{
    const int nblk = (w->n + w->nb - 1) / w->nb, p = w->p;
    if (p < 4)
        return;
    const size_t count = 1 + (size_t)p * w->chain_slot;
    cl_int *buf = malloc(sizeof(cl_int) * count);
    if (!buf)
        return;
    if (w->q2)
        clFinish(w->q2);
    if (clEnqueueReadBuffer(w->q, w->dBad, CL_TRUE, 0, sizeof(cl_int) * count, buf, 0, NULL,
                            NULL) == CL_SUCCESS) {
        double mark[64][8] = {{0}}, trail_end = 0;
        const int nb = nblk < 64 ? nblk : 64, steps = p - 3;
        for (int k = 1; k <= steps; ++k) {
            const cl_int *st = buf + 1 + (size_t)k * w->chain_slot + 2 + 2 * nblk;
            const uint32_t base = (uint32_t)st[0];
            for (int b = 0; b < nb; ++b)
                for (int m = 0; m < 8; ++m)
                    if (m != 1 || b > 0)
                        mark[b][m] += (double)(int32_t)((uint32_t)st[8 * b + m] - base) / 1e3;
            double last = 0;
            for (int t = 0; t < 256; ++t) {
                const double e = (double)(int32_t)((uint32_t)st[8 * nblk + t] - base) / 1e3;
                if (st[8 * nblk + t] != 0 && e > last)
                    last = e;
            }
            trail_end += last;
        }
        fprintf(stderr, "qr_chain clock, n = %d, mean of steps 1-%d, us from block 0's start:\n"
                        "block    start flag(b-1)  applied  written    step0    steps        T  flag(b)\n",
                w->n, steps);
        for (int b = 0; b < nb; ++b) {
            fprintf(stderr, "%5d", b);
            static const int order[8] = {0, 1, 2, 3, 4, 5, 7, 6}; /* in time */
            for (int m = 0; m < 8; ++m)
                fprintf(stderr, " %8.2f", mark[b][order[m]] / steps);
            fprintf(stderr, "\n");
        }
        fprintf(stderr, "trailing groups' last end %.2f us\n", trail_end / steps);
    }
    free(buf);
}

/* qr_chain on the panel in use (slot w->slot of w->dP: m rows, leading dimension ldp; step k's
 * counters): its n columns factored, columns n .. ntot-1 after them only applied to (rows below
 * trail_zero read as zeros); with steps > 1 steps k .. k + steps - 1, each in the next slot, in
 * one launch. On two queues the trailing columns' rows n .. m-1 (At_k+1) go into the next slot's
 * top. */
static bcl_status launch_chain(bsofi *w, int m, int ldp, int k, int steps, int ntot, int trail_zero)
{
    cl_kernel kc = w->k_panel->kernel;
    const cl_int cm = m, cn = w->n, cld = ldp, cnt = ntot, ctz = trail_zero;
    const cl_int slot0 = w->slot, nslots = w->nslots, sstride = w->chain_slot, next = w->overlap;
    const cl_ulong zero = 0, offSync = 1 + (cl_ulong)k * w->chain_slot;
    const cl_ulong pstride = w->slot_stride, tstride = w->tb_slot; /* slot0 picks P's and T's */
    cl_int err = CL_SUCCESS;
    SET_ARG(kc, 0, w->dP);
    SET_ARG(kc, 1, zero);
    SET_ARG(kc, 2, cld);
    SET_ARG(kc, 3, cm);
    SET_ARG(kc, 4, cn);
    SET_ARG(kc, 5, w->dTb);
    SET_ARG(kc, 6, zero);
    SET_ARG(kc, 7, w->dBad);
    SET_ARG(kc, 8, offSync);
    SET_ARG(kc, 9, cnt);
    SET_ARG(kc, 10, ctz);
    SET_ARG(kc, 11, slot0);
    SET_ARG(kc, 12, nslots);
    SET_ARG(kc, 13, pstride);
    SET_ARG(kc, 14, tstride);
    SET_ARG(kc, 15, sstride);
    const size_t cpg = (size_t)w->chain_cpg, tcols = cpg * (size_t)w->chain_tch;
    const size_t per_step = ((size_t)w->n + cpg - 1) / cpg /* the panel's, then the trailing ones */
                            + ((size_t)(ntot - w->n) + tcols - 1) / tcols;
    const size_t total = per_step * (size_t)steps;
    /* fewer groups than roles (each taking roles until none is left) only in the shuffle build,
     * whose kernel loops over roles */
    const size_t groups = w->panel_shuffle && w->chain_groups > 0 && (size_t)w->chain_groups < total
                              ? (size_t)w->chain_groups
                              : total;
    const cl_int csteps = steps, roles = (cl_int)((total + groups - 1) / groups);
    SET_ARG(kc, 16, next);
    SET_ARG(kc, 17, csteps);
    SET_ARG(kc, 18, roles);
    return run_kernel(w, w->k_panel, err, groups * 256, 256, "launching qr_chain");
}

/* Blocked Householder QR of the m x n panel in w->dP (leading dimension ldp): R in its upper
 * triangle, the reflectors in w->dV (leading dimension m) or, from the register panels built with
 * -DV_FROM_P, below R in the panel (v_from_panel copies them into w->dV where GEMMs form Q), each
 * block's T in w->dTb; then R into w->dRkk's block k (a zero or NaN diagonal lowers w->dBad). With
 * v_from_panel, that launch also writes Q = I (m x m at Q + offQ, leading dimension ldq), which
 * dev_form_q's GEMMs then update. */
static bcl_status dev_qr(bsofi *w, int m, int ldp, int k, cl_mem Q, size_t offQ, int ldq)
{
    const int n = w->n;
    /* the panel kernels write V from each block's first row down; S = V^T V (dev_form_t) needs
     * the zeros above */
    bcl_status s = w->q_gemm && !w->v_in_panel
                       ? clear_buffer(w, w->dV, 0, (size_t)m * n, "clearing the reflectors")
                       : BCL_SUCCESS;
    int ldv;
    cl_mem Vsrc = applied_reflectors(w, m, ldp, &ldv);
    if (w->chain_cpg && s == BCL_SUCCESS) /* every block in one launch, step k's counters */
        s = launch_chain(w, m, ldp, k, 1, n, 0);
    for (int j0 = 0; j0 < n && s == BCL_SUCCESS && !w->chain_cpg; j0 += w->nb) {
        cl_kernel kp = w->k_panel->kernel;
        const cl_int cm = m, cj0 = j0, nbk = n - j0 < w->nb ? n - j0 : w->nb, cld = ldp;
        const cl_ulong zero = 0, offT = (cl_ulong)(j0 / w->nb) * w->nb * w->nb;
        cl_int err = CL_SUCCESS;
        SET_ARG(kp, 0, w->dP);
        SET_ARG(kp, 1, zero);
        SET_ARG(kp, 2, cld);
        SET_ARG(kp, 3, cm);
        SET_ARG(kp, 4, cj0);
        SET_ARG(kp, 5, nbk);
        SET_ARG(kp, 6, w->dV);
        SET_ARG(kp, 7, zero);
        SET_ARG(kp, 8, cm);
        SET_ARG(kp, 9, w->dTb);
        SET_ARG(kp, 10, offT);
        s = run_kernel(w, w->k_panel, err, w->panel_wg, w->panel_wg, "launching qr_panel");
        if (s == BCL_SUCCESS && j0 + nbk < n)
            s = apply_block(w, Vsrc, ldv, m, j0, 1, w->dP, (size_t)(j0 + nbk) * ldp, ldp,
                            n - j0 - nbk);
    }
    return s == BCL_SUCCESS ? dev_qr_take(w, m, ldp, k, Q, offQ, ldq) : s;
}

/* The T of all n reflectors of the last dev_qr (n x n, leading dimension n, at w->r_tm in w->dR,
 * zero below the diagonal) from S = V^T V (at w->r_w) and the panel's block T's: the blocks above
 * the block T's are formed in halves of growing width (LAPACK dgeqrt3's T12 = -T11 S12 T22),
 * within T's diagonal blocks of QR_TB columns by t_diag_blocks, above them by two GEMMs a pair
 * (X = T11 S12 at w->r_u). */
static bcl_status dev_form_t(bsofi *w, int m)
{
    const size_t n = (size_t)w->n, tb = QR_TB;
    const CLBlastTranspose no = CLBlastTransposeNo, tr = CLBlastTransposeYes;
    cl_mem R = w->dR;
    /* no clearing: below the diagonal blocks T keeps the zeros bsofi_init wrote into dR (nothing
     * writes there), and every other entry is written below */
    bcl_status s = gemm(w, tr, no, n, n, (size_t)m, 1.0, w->dV, 0, (size_t)m, w->dV, 0, (size_t)m,
                        0.0, R, w->r_w, n);
    if (s != BCL_SUCCESS)
        return s;
    cl_kernel k = w->k_tdiag->kernel;
    const cl_ulong os = w->r_w, ot = w->r_tm, otb = (cl_ulong)w->slot * w->tb_slot;
    const cl_int cn = w->n;
    cl_int err = CL_SUCCESS;
    SET_ARG(k, 0, R);
    SET_ARG(k, 1, os);
    SET_ARG(k, 2, w->dTb);
    SET_ARG(k, 3, otb);
    SET_ARG(k, 4, cn);
    SET_ARG(k, 5, R);
    SET_ARG(k, 6, ot);
    s = run_kernel(w, w->k_tdiag, err, (n + tb - 1) / tb * TD_WG, TD_WG,
                   "launching t_diag_blocks");
    for (size_t h = tb; h < n && s == BCL_SUCCESS; h *= 2) {
        /* with gemm.cl the whole pairs of a width lie evenly spaced along T's diagonal: two
         * strided batches (one launch each) instead of two products a pair (on the H100 a 64^3
         * product costs about a launch's latency; clBLAST's batched GEMM had lost) */
        enum { MAX_PAIRS = 64 };
        const size_t pairs = n / (2 * h), batched = w->own_gemm && pairs > 1 && pairs <= MAX_PAIRS
                                                        ? pairs
                                                        : 0;
        if (batched) {
            size_t t11[MAX_PAIRS], s12[MAX_PAIRS], u[MAX_PAIRS], t22[MAX_PAIRS], t12[MAX_PAIRS];
            for (size_t j = 0; j < batched; ++j) {
                const size_t o = 2 * h * j;
                t11[j] = w->r_tm + o * n + o;
                s12[j] = w->r_w + (o + h) * n + o;
                u[j] = w->r_u + j * h * h;
                t22[j] = w->r_tm + (o + h) * n + o + h;
                t12[j] = w->r_tm + (o + h) * n + o;
            }
            s = gemm_batched(w, no, no, h, h, h, batched, 1.0, R, t11, n, R, s12, n, 0.0, R, u, h);
            if (s == BCL_SUCCESS)
                s = gemm_batched(w, no, no, h, h, h, batched, -1.0, R, u, h, R, t22, n, 0.0, R,
                                 t12, n);
        }
        for (size_t o = 2 * h * batched; o + h < n && s == BCL_SUCCESS; o += 2 * h) {
            const size_t r = n - o - h < h ? n - o - h : h; /* the right half's width */
            s = gemm(w, no, no, h, r, h, 1.0, R, w->r_tm + o * n + o, n, R,
                     w->r_w + (o + h) * n + o, n, 0.0, R, w->r_u, h);
            if (s == BCL_SUCCESS)
                s = gemm(w, no, no, h, r, r, -1.0, R, w->r_u, h, R, w->r_tm + (o + h) * n + o + h,
                         n, 0.0, R, w->r_tm + (o + h) * n + o, n);
        }
    }
    return s;
}

/* the m x m identity at Q + offQ (leading dimension ldq), by set_identity */
static bcl_status dev_identity(bsofi *w, cl_mem Q, size_t offQ, int ldq, int m)
{
    cl_kernel k = w->k_eye->kernel;
    const cl_int cld = ldq, cm = m;
    const cl_ulong oq = offQ;
    cl_int err = CL_SUCCESS;
    SET_ARG(k, 0, Q);
    SET_ARG(k, 1, oq);
    SET_ARG(k, 2, cld);
    SET_ARG(k, 3, cm);
    return run_kernel(w, w->k_eye, err, round_up((size_t)m * m, 256), 0, "launching set_identity");
}

/* The explicit Q = H_0 ... H_n-1 (m x m, leading dimension ldq) of the last dev_qr (its panel's
 * leading dimension ldp): with w->q_gemm Q = I - V (T V^T) by two GEMMs (T from dev_form_t;
 * W = T V^T at w->r_tv), else the identity times the block reflectors, last to first (qr_apply,
 * reading them where dev_qr's applies did). With w->k_vcopy the identity is already there: the
 * last dev_qr must have been given the same Q, offQ and ldq. */
static bcl_status dev_form_q(bsofi *w, int m, int ldp, cl_mem Q, size_t offQ, int ldq)
{
    /* with k_vcopy the identity came with V (dev_qr) */
    bcl_status s = w->k_vcopy ? BCL_SUCCESS : dev_identity(w, Q, offQ, ldq, m);
    if (w->q_gemm) {
        const size_t n = (size_t)w->n;
        const CLBlastTranspose no = CLBlastTransposeNo, tr = CLBlastTransposeYes;
        if (s == BCL_SUCCESS)
            s = dev_form_t(w, m);
        if (s == BCL_SUCCESS)
            s = gemm(w, no, tr, n, (size_t)m, n, 1.0, w->dR, w->r_tm, n, w->dV, 0, (size_t)m, 0.0,
                     w->dR, w->r_tv, n);
        if (s == BCL_SUCCESS)
            s = gemm(w, no, no, (size_t)m, (size_t)m, n, -1.0, w->dV, 0, (size_t)m, w->dR, w->r_tv,
                     n, 1.0, Q, offQ, (size_t)ldq);
        return s;
    }
    int ldv;
    cl_mem V = applied_reflectors(w, m, ldp, &ldv);
    for (int j0 = (w->n - 1) / w->nb * w->nb; j0 >= 0 && s == BCL_SUCCESS; j0 -= w->nb)
        s = apply_block(w, V, ldv, m, j0, 0, Q, offQ + (size_t)j0 * ldq, ldq, m - j0);
    return s;
}

/* count products C_i = alpha op(A_i) B_i + beta C_i whose operands lie evenly spaced (strides
 * sA, sB, sC in elements, 0 for an operand all share): one launch with gemm.cl */
static bcl_status gemm_strided(bsofi *w, CLBlastTranspose ta, size_t m, size_t n, size_t k,
                               size_t count, double alpha, cl_mem A, size_t offA, size_t sA,
                               size_t lda, cl_mem B, size_t offB, size_t sB, size_t ldb, double beta,
                               cl_mem C, size_t offC, size_t sC, size_t ldc)
{
    const CLBlastTranspose no = CLBlastTransposeNo;
    if (count == 1)
        return gemm(w, ta, no, m, n, k, alpha, A, offA, lda, B, offB, ldb, beta, C, offC, ldc);
    size_t *off = malloc(sizeof *off * 3 * count);
    if (!off)
        return bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory", w->fn);
    for (size_t i = 0; i < count; ++i) {
        off[i] = offA + i * sA;
        off[count + i] = offB + i * sB;
        off[2 * count + i] = offC + i * sC;
    }
    const bcl_status s = gemm_batched(w, ta, no, m, n, k, count, alpha, A, off, lda, B,
                                      off + count, ldb, beta, C, off + 2 * count, ldc);
    free(off);
    return s;
}

/* X_ii = R_ii^-1 for block rows first .. first+count-1, into H's diagonal blocks (zero below
 * their diagonals, as H is cleared first). tri_inverse inverts the leaves (diagonal blocks of
 * w->tri_leaf, all blocks' in one launch); the blocks above them are formed level by level as in
 * a recursive inversion, X12 = -X11 R12 X22 with halves of growing width h (U = X11 R12 in dS
 * from element tmp, count h x h blocks or one a pair), two strided GEMMs a level and pair, over
 * the blocks (count > 1) or over the pairs. The back substitution alone is a chain of n barriers
 * a block: on the H100 one 512 x 512 block took 0.74 ms. */
static bcl_status tri_inverse(bsofi *w, int first, int count, cl_mem H, size_t offH, size_t tmp)
{
    if (count <= 0)
        return BCL_SUCCESS;
    cl_kernel k = w->k_tri->kernel;
    const size_t n = (size_t)w->n, nn = w->nn, ldx = (size_t)w->N, xs = (ldx + 1) * n;
    const cl_int cn = w->n, leaf = w->tri_leaf > 0 && w->tri_leaf < w->n ? w->tri_leaf : w->n,
                 cldr = w->n, cldx = w->N;
    const size_t r0 = (size_t)first * nn, x0 = offH + block_at(w, first, first);
    const cl_ulong offR = r0, offX = x0, rstride = nn, xstride = xs;
    cl_int err = CL_SUCCESS;
    SET_ARG(k, 0, w->dRkk);
    SET_ARG(k, 1, offR);
    SET_ARG(k, 2, cldr);
    SET_ARG(k, 3, rstride);
    SET_ARG(k, 4, cn);
    SET_ARG(k, 5, leaf);
    SET_ARG(k, 6, H);
    SET_ARG(k, 7, offX);
    SET_ARG(k, 8, xstride);
    SET_ARG(k, 9, cldx);
    const size_t leaves = (n + (size_t)leaf - 1) / (size_t)leaf,
                 groups = (size_t)count * leaves *
                          (size_t)((leaf + w->tri_cols - 1) / w->tri_cols);
    bcl_status s = run_kernel(w, w->k_tri, err, groups * 256, 256, "launching tri_inverse");
    const CLBlastTranspose no = CLBlastTransposeNo;
    for (size_t h = (size_t)leaf; h < n && s == BCL_SUCCESS; h *= 2) {
        const size_t whole = count == 1 ? n / (2 * h) : 0; /* pairs batched along the diagonal */
        if (whole > 0) {
            const size_t sx = 2 * h * (ldx + 1), sr = 2 * h * (n + 1);
            s = gemm_strided(w, no, h, h, h, whole, 1.0, H, x0, sx, ldx, w->dRkk, r0 + h * n, sr,
                             n, 0.0, w->dS, tmp, h * h, h);
            if (s == BCL_SUCCESS)
                s = gemm_strided(w, no, h, h, h, whole, -1.0, w->dS, tmp, h * h, h, H,
                                 x0 + h * (ldx + 1), sx, ldx, 0.0, H, x0 + h * ldx, sx, ldx);
        }
        for (size_t o = 2 * h * whole; o + h < n && s == BCL_SUCCESS; o += 2 * h) {
            const size_t r = n - o - h < h ? n - o - h : h; /* the right half's width */
            const size_t c = (size_t)count;
            s = gemm_strided(w, no, h, r, h, c, 1.0, H, x0 + o * (ldx + 1), xs, ldx, w->dRkk,
                             r0 + (o + h) * n + o, nn, n, 0.0, w->dS, tmp, h * h, h);
            if (s == BCL_SUCCESS)
                s = gemm_strided(w, no, h, r, r, c, -1.0, w->dS, tmp, h * h, h, H,
                                 x0 + (o + h) * (ldx + 1), xs, ldx, 0.0, H,
                                 x0 + o + (o + h) * ldx, xs, ldx);
        }
    }
    return s;
}

/* Step k < p-1 on the device: the QR of [At_k; B_k] (At_k is already the panel's top half), the
 * explicit Q^(k) (2n x 2n), and Q^(k)T applied to block rows k, k+1 of block columns k+1, p-1:
 *   R_k,k+1 = Q(n:2n, 0:n)^T A_k+1,  At_k+1 = Q(n:2n, n:2n)^T A_k+1   (into the panel's top)
 *   R_k,p-1 = Q(0:n, 0:n)^T Rt_k,    Rt_k+1 = Q(0:n, n:2n)^T Rt_k
 * and at the last pair (k+1 = p-1) both products land in block column p-1. */
static bcl_status factor_step_dev(bsofi *w, int k, cl_mem A, size_t offA, cl_mem B, size_t offB)
{
    const int n = w->n, p = w->p, n2 = 2 * n;
    const size_t nn = w->nn, qk = (size_t)k * 4 * nn, an = offA + (size_t)(k + 1) * nn;
    const CLBlastTranspose no = CLBlastTransposeNo, tr = CLBlastTransposeYes;
    bcl_status s = copy_rect(w, B, offB + (size_t)k * nn, n, w->dP, n, n2, n, n);
    if (s == BCL_SUCCESS)
        s = dev_qr(w, n2, n2, k, w->dQ, qk, n2);
    if (s == BCL_SUCCESS)
        s = dev_form_q(w, n2, n2, w->dQ, qk, n2);
    if (s != BCL_SUCCESS)
        return s;
    cl_mem R = w->dR;
    const size_t rt = w->r_t + (size_t)(k & 1) * nn, rt_next = w->r_t + (size_t)((k + 1) & 1) * nn;
    const size_t q00 = qk, q10 = qk + n, q01 = qk + (size_t)n * n2, q11 = q01 + n;
    if (k + 2 < p) {
        /* products sharing their right operand in one launch each (H100, n = 512: a pair 37 us
         * and its sums 7, against 25 and 6.5 a product): At_k+1 into the panel's top and R_k,k+1
         * below it (the factored panel is spent; q10 lies before q11, a stride that wraps
         * around), then copied into place; R_k,p-1 and Rt_k+1 (rt_next past R_k,p-1) */
        s = gemm_strided(w, tr, n, n, n, 2, 1.0, w->dQ, q11, q10 - q11, n2, A, an, 0, n, 0.0,
                         w->dP, 0, n, n2);
        if (s == BCL_SUCCESS)
            s = copy_rect(w, w->dP, n, n2, R, w->r_s + k * nn, n, n, n);
        if (s == BCL_SUCCESS)
            s = gemm_strided(w, tr, n, n, n, 2, 1.0, w->dQ, q00, q01 - q00, n2, R, rt, 0, n, 0.0, R,
                             w->r_l + k * nn, rt_next - (w->r_l + k * nn), n);
        return s;
    }
    s = gemm(w, tr, no, n, n, n, 1.0, w->dQ, q01, n2, R, rt, n, 0.0, w->dP, 0, n2);
    if (s == BCL_SUCCESS)
        s = gemm(w, tr, no, n, n, n, 1.0, w->dQ, q11, n2, A, an, n, 1.0, w->dP, 0, n2);
    if (s == BCL_SUCCESS)
        s = gemm(w, tr, no, n, n, n, 1.0, w->dQ, q00, n2, R, rt, n, 0.0, R, w->r_s + k * nn, n);
    if (s == BCL_SUCCESS)
        s = gemm(w, tr, no, n, n, n, 1.0, w->dQ, q10, n2, A, an, n, 1.0, R, w->r_s + k * nn, n);
    return s;
}

/* H^-1 = R^-1 Q^T as apply_qt, each step's two output block columns by products of their own
 * (the sum over k split into X_k's rows and Y's): the left one, the next step's Y, into
 * temporary slot k % 3 (k % 2 where p < 3); the right one, final, straight into H's block column
 * k+1, whose R^-1 column the step after (k+1) has read. No copies but the last left column's,
 * and with qt_halves = 2 the right halves run on a second queue beside the next steps' left
 * halves (the critical path): the right half of step k waits for step k+1's left half (its Y),
 * the left half of step k for step k+2's right half (which read the slot it overwrites). */
static bcl_status apply_qt_halves(bsofi *w, cl_mem H, size_t offH)
{
    const size_t n = (size_t)w->n, N = (size_t)w->N, p = (size_t)w->p, col = n * N,
                 slots = p < 3 ? 2 : 3;
    const CLBlastTranspose no = CLBlastTransposeNo, tr = CLBlastTransposeYes;
    const cl_command_queue main_q = w->q;
    cl_event left_done[2] = {NULL, NULL}, right_done[3] = {NULL, NULL, NULL};
    const size_t r0 = (size_t)w->qt_host * n; /* rows above r0: the host's (host_qt_start) */
    /* Y = X_p-1 Q^(p)T into slot (p-1) % slots */
    bcl_status s = gemm(w, no, tr, N - r0, n, n, 1.0, H, offH + (p - 1) * col + r0, N, w->dQ,
                        (p - 1) * 4 * w->nn, n, 0.0, w->dT, (p - 1) % slots * col + r0, N);
    /* the second queue's GEMMs (gemm.cl or clBLAST) have temporaries of their own (gemm_ws) */
    const int two = w->qt_halves == 2 && w->q2;
    if (s == BCL_SUCCESS && two)
        s = queue_mark(w, &left_done[(p - 1) & 1], "Y (Q^T by halves)");
    if (s == BCL_SUCCESS && two)
        s = queue_flush(w);
    for (size_t k = p - 1; k-- > 0 && s == BCL_SUCCESS;) {
        const size_t top = (k + 1) * n, hk = offH + k * col, y = (k + 1) % slots * col + r0;
        const size_t m2 = top > r0 ? top - r0 : 0; /* rows that take X_k's products too */
        /* Q^(k)'s n x n block (r, c), leading dimension 2n */
        const size_t q00 = k * 4 * w->nn, q10 = q00 + n, q01 = q00 + 2 * n * n, q11 = q01 + n;
        if (two && k + 2 <= p - 2)
            s = queue_wait(w, right_done[(k + 2) % 3]);
        if (s == BCL_SUCCESS)
            s = gemm_pair(w, no, tr, N - r0, n, n, w->dT, y, N, w->dQ, q01, 2 * n, 0.0, w->dT,
                          k % slots * col + r0, N, m2, n, H, hk + r0, N, w->dQ, q00, 2 * n);
        if (s == BCL_SUCCESS && two)
            s = queue_mark(w, &left_done[k & 1], "left half (Q^T by halves)");
        if (s == BCL_SUCCESS && two)
            s = queue_flush(w);
        if (s != BCL_SUCCESS)
            break;
        if (two) {
            w->q = w->q2;
            s = queue_wait(w, left_done[(k + 1) & 1]);
        }
        if (s == BCL_SUCCESS)
            s = gemm_pair(w, no, tr, N - r0, n, n, w->dT, y, N, w->dQ, q11, 2 * n, 0.0, H,
                          hk + col + r0, N, m2, n, H, hk + r0, N, w->dQ, q10, 2 * n);
        if (s == BCL_SUCCESS && two)
            s = queue_mark(w, &right_done[k % 3], "right half (Q^T by halves)");
        if (s == BCL_SUCCESS && two)
            s = queue_flush(w);
        w->q = main_q;
    }
    /* step 0's left column into H once its right half has read X_0 there (p = 1: Y) */
    if (s == BCL_SUCCESS && two && p > 1)
        s = queue_wait(w, right_done[0]);
    if (s == BCL_SUCCESS)
        s = copy_rows(w, w->dT, 0, H, offH, r0);
    if (s != BCL_SUCCESS && two) { /* nothing of the second queue's may outlive the call */
        clFinish(w->q2);
        clFinish(main_q);
    }
    for (int i = 0; i < 3; ++i) {
        if (i < 2 && left_done[i])
            clReleaseEvent(left_done[i]);
        if (right_done[i])
            clReleaseEvent(right_done[i]);
    }
    return s;
}

/* H^-1 = R^-1 Q^T by the scheme qt_halves names; the host's block rows beside it
 * (host_qt_start) */
static bcl_status apply_q_transpose(bsofi *w, cl_mem H, size_t offH)
{
    host_share share = {0};
    bcl_status s = w->qt_host > 0 ? host_qt_start(w, H, offH, &share) : BCL_SUCCESS;
    if (s == BCL_SUCCESS)
        s = w->qt_halves ? apply_qt_halves(w, H, offH) : apply_qt(w, H, offH);
    return w->qt_host > 0 ? host_qt_finish(w, H, offH, &share, s) : s;
}

/* What step j < p-1 on two queues reads besides At_j: B_j below the panel's top and A_j+1 below the
 * trailing column's, in slot j % nslots, on w->q (the second queue stages them nslots steps
 * ahead, off the main queue's chain of steps) */
static bcl_status stage_step(bsofi *w, int j, cl_mem A, size_t offA, cl_mem B, size_t offB)
{
    const size_t n = (size_t)w->n, nn = w->nn, at = (size_t)(j % w->nslots) * w->slot_stride;
    if (j + 1 >= w->p)
        return BCL_SUCCESS;
    bcl_status st = copy_rect(w, B, offB + (size_t)j * nn, n, w->dP, at + n, 2 * n, n, n);
    if (st == BCL_SUCCESS)
        st = copy_rect(w, A, offA + (size_t)(j + 1) * nn, n, w->dP, at + 2 * nn + n, 2 * n, n, n);
    return st;
}

/* The column version's block column k on the third queue, after what the second queue (w->q)
 * has enqueued so far (R_kk, R_k-1,k and c_k are formed); cv_done marks it for the row version.
 * In a batch, problem k+1's columns come after problem k's use of dS and H only through that
 * marker: the second queue's steps wait for the main queue's chain launches (`chained`), which
 * come after problem k's R^-1 and Q^T on the main queue. */
static bcl_status column_on_q3(bsofi *w, int k, cl_mem H, size_t offH)
{
    const cl_command_queue q2 = w->q;
    cl_event formed = NULL;
    bcl_status s = queue_mark(w, &formed, "R's block column formed (second queue)");
    if (s == BCL_SUCCESS)
        s = queue_flush(w);
    if (s == BCL_SUCCESS) {
        w->q = w->q3;
        s = queue_wait(w, formed);
    }
    if (s == BCL_SUCCESS)
        s = invert_column(w, k, H, offH);
    if (s == BCL_SUCCESS)
        s = queue_mark(w, &w->cv_done, "column version's block column (third queue)");
    if (s == BCL_SUCCESS)
        s = queue_flush(w);
    w->q = q2;
    if (formed)
        clReleaseEvent(formed);
    return s;
}

/* Steps k0 .. k0 + steps - 1 (< p-1) on two queues (w->overlap). Step k's slot (k % nslots)
 * holds the panel [At_k; B_k] and the trailing block column [0; A_k+1] ([Rt_k; A_p-1] at the last
 * pair, Rt_k copied in here; the last pair is a launch of its own). The main queue: one qr_chain
 * launch that factors the steps' panels one after the other and applies each Q^(k)^T to its
 * trailing column (R_k,k+1 above At_k+1, which goes into the next slot's top, the next panel),
 * once the second queue is done with every slot the launch writes. The second queue, after the
 * launch, step by step: V, R_kk and Q = I (v_from_panel), Q^(k) by GEMMs, R_k,k+1 copied out,
 * R_k,p-1 and Rt_k+1, the column version's block column k where j_F asks for it (enqueued on
 * the third queue, column_on_q3), and step k + nslots's blocks staged into the slot. What each
 * queue leaves is the same as factor_step_dev's (the products in another order). On the H200,
 * bench pcyclic --order 10000, one step a launch against one queue in one run, two rounds: n = 192
 * 22.9 / 22.9 ms against 26.6 / 26.6, 256 23.7 / 23.7 against 26.6 / 26.6, 384 33.3 / 33.3 against
 * 36.0 / 36.0, 512 36.7 / 36.8 against 37.5 / 37.4, but 1024 63.0 / 63.0 against 55.5 / 55.5 (the
 * second queue's GEMMs hold the compute units the chain waits for). */
static bcl_status factor_launch(bsofi *w, int k0, int steps, cl_mem A, size_t offA, cl_mem B,
                                size_t offB, cl_mem H, size_t offH)
{
    const int n = w->n, p = w->p, n2 = 2 * n, last = k0 + steps == p - 1, ns = w->nslots;
    const size_t nn = w->nn, trail = 2 * nn; /* the trailing block column in a slot */
    cl_mem R = w->dR;
    cl_command_queue main_q = w->q;
    bcl_status st = BCL_SUCCESS; /* B_k and A_k+1 are in the slots (stage_step) */
    /* the slots the launch writes: its steps' and the next one's top; the last pair's trailing
     * top is Rt_k, which the second queue's step k-1 formed */
    for (int k = last && k0 > 0 ? k0 - 1 : k0; k <= k0 + steps && st == BCL_SUCCESS; ++k)
        if (w->slot_free[k % ns])
            st = queue_wait(w, w->slot_free[k % ns]);
    /* overlap_serial: every launch waits for all the second queue has enqueued, so that none of
     * its work runs beside the chain (the third queue's column version still does) */
    for (int i = 0; i < ns && st == BCL_SUCCESS && w->overlap_serial; ++i)
        if (w->slot_free[i])
            st = queue_wait(w, w->slot_free[i]);
    w->slot = k0 % ns;
    if (st == BCL_SUCCESS && last)
        st = copy_rect(w, R, w->r_t + (size_t)(k0 & 1) * nn, n, w->dP,
                       (size_t)w->slot * w->slot_stride + trail, n2, n, n);
    if (st == BCL_SUCCESS)
        st = launch_chain(w, n2, n2, k0, steps, n2, last ? 0 : n);
    cl_event chained = NULL;
    if (st == BCL_SUCCESS)
        st = queue_mark(w, &chained, "chain's steps done (main queue)");
    if (st == BCL_SUCCESS)
        st = queue_flush(w);
    if (st != BCL_SUCCESS) {
        if (chained)
            clReleaseEvent(chained);
        return st;
    }
    w->q = w->q2;
    st = queue_wait(w, chained);
    clReleaseEvent(chained);
    for (int k = k0; k < k0 + steps && st == BCL_SUCCESS; ++k) {
        const size_t qk = (size_t)k * 4 * nn, rt = w->r_t + (size_t)(k & 1) * nn;
        const size_t rt_next = w->r_t + (size_t)((k + 1) & 1) * nn;
        w->slot = k % ns;
        const size_t at = (size_t)w->slot * w->slot_stride;
        st = dev_qr_take(w, n2, n2, k, w->dQ, qk, n2);
        if (st == BCL_SUCCESS)
            st = dev_form_q(w, n2, n2, w->dQ, qk, n2);
        if (st == BCL_SUCCESS)
            st = copy_rect(w, w->dP, at + trail, n2, R, w->r_s + (size_t)k * nn, n, n, n);
        if (st == BCL_SUCCESS && !last) { /* R_k,p-1 and Rt_k+1 (rt_next past R_k,p-1) */
            const size_t q00 = qk, q01 = qk + (size_t)n * n2;
            st = gemm_strided(w, CLBlastTransposeYes, n, n, n, 2, 1.0, w->dQ, q00, q01 - q00, n2,
                              R, rt, 0, n, 0.0, R, w->r_l + k * nn, rt_next - (w->r_l + k * nn),
                              n);
        }
        if (st == BCL_SUCCESS && k < w->jF)
            st = w->q3 ? column_on_q3(w, k, H, offH) : invert_column(w, k, H, offH);
        if (st == BCL_SUCCESS) /* the slot's next step */
            st = stage_step(w, k + ns, A, offA, B, offB);
        cl_event done = NULL;
        if (st == BCL_SUCCESS)
            st = queue_mark(w, &done, "step done (second queue)");
        if (st == BCL_SUCCESS) {
            if (w->slot_free[w->slot])
                clReleaseEvent(w->slot_free[w->slot]);
            w->slot_free[w->slot] = done;
        }
    }
    if (st == BCL_SUCCESS)
        st = queue_flush(w);
    w->q = main_q;
    return st;
}

/* One problem, everything on the device: A, B at offA, offB (p blocks each), H^-1 at offH, its
 * info written at offInfo by the last kernel. The host waits for nothing. */
static bcl_status bsofi_one_dev(bsofi *w, cl_mem A, size_t offA, cl_mem B, size_t offB, cl_mem H,
                                size_t offH, cl_mem info, size_t offInfo)
{
    const int n = w->n, p = w->p, n2 = 2 * n;
    const size_t nn = w->nn;
    const double t0 = seconds_now();
    w->slot = 0; /* step 0's panel slot */
    bcl_status s = fill_zero(w, H, offH);
    const cl_int none = INT_MAX;
    cl_int err = clEnqueueFillBuffer(w->q, w->dBad, &none, sizeof none, 0, sizeof none, 0, NULL,
                                     NULL);
    const cl_int zero = 0; /* qr_chain's counters, each step's own */
    if (err == CL_SUCCESS && w->chain_cpg)
        err = clEnqueueFillBuffer(w->q, w->dBad, &zero, sizeof zero, sizeof zero,
                                  sizeof zero * (size_t)p * w->chain_slot, 0, NULL, NULL);
    if (s == BCL_SUCCESS && err != CL_SUCCESS)
        s = bcl_cl_fail(w->ctx, err, "clEnqueueFillBuffer");
    if (s == BCL_SUCCESS && p == 1) { /* H = A_1 + B_1 = A_1 I + B_1 */
        s = copy_rect(w, B, offB, n, w->dP, 0, n2, n, n);
        if (s == BCL_SUCCESS)
            s = gemm(w, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, 1.0, A, offA, n, w->dR,
                     w->r_eye, n2, 1.0, w->dP, 0, n2);
    } else if (s == BCL_SUCCESS) { /* At_0 = A_1; Rt_0 = B_p, the corner */
        s = copy_rect(w, A, offA, n, w->dP, 0, n2, n, n);
        if (s == BCL_SUCCESS)
            s = copy_dev(w, B, offB + (size_t)(p - 1) * nn, w->dR, w->r_t, nn);
    }
    for (int j = 0; j < w->nslots && s == BCL_SUCCESS && w->overlap; ++j)
        s = stage_step(w, j, A, offA, B, offB);
    /* chain_steps steps a launch, then chain_tail launches of one before the last pair's */
    const int bulk_end = p - 2 - w->chain_tail;
    for (int k = 0, steps = 1; k + 1 < p && s == BCL_SUCCESS && w->overlap; k += steps) {
        steps = k < bulk_end ? (bulk_end - k < w->chain_steps ? bulk_end - k : w->chain_steps) : 1;
        s = factor_launch(w, k, steps, A, offA, B, offB, H, offH);
    }
    for (int k = 0; k + 1 < p && s == BCL_SUCCESS && !w->overlap; ++k) {
        s = factor_step_dev(w, k, A, offA, B, offB);
        if (s == BCL_SUCCESS && k < w->jF)
            s = invert_column(w, k, H, offH);
    }
    if (w->overlap) { /* the rest on the main queue, after the second queue's last step */
        if (s == BCL_SUCCESS && p > 1)
            s = queue_wait(w, w->slot_free[(p - 2) % w->nslots]);
        w->slot = (p - 1) % w->nslots;
    }
    if (s == BCL_SUCCESS)
        s = dev_qr(w, n, n2, p - 1, w->dQ, (size_t)(p - 1) * 4 * nn, n);
    if (s == BCL_SUCCESS)
        s = dev_form_q(w, n, n2, w->dQ, (size_t)(p - 1) * 4 * nn, n);
    if (s == BCL_SUCCESS && w->chain_clock)
        chain_report(w);
    const int phases = w->phase_s[3] >= 0; /* BATCHCL_PCYCLIC_PHASES: wait after each phase */
    double t1 = phases ? (clFinish(w->q), seconds_now()) : 0;
    if (phases)
        w->phase_s[0] += t1 - t0;
    if (s == BCL_SUCCESS)
        s = invert_rows(w, H, offH);
    if (phases) {
        clFinish(w->q);
        w->phase_s[1] += seconds_now() - t1;
        t1 = seconds_now();
    }
    if (s == BCL_SUCCESS)
        s = apply_q_transpose(w, H, offH);
    if (phases) {
        clFinish(w->q);
        w->phase_s[2] += seconds_now() - t1;
    }
    if (s == BCL_SUCCESS) {
        cl_kernel k = w->k_finish->kernel;
        const cl_ulong zero = 0, oi = offInfo, oh = offH, count = (cl_ulong)w->N * (cl_ulong)w->N;
        err = CL_SUCCESS;
        SET_ARG(k, 0, w->dBad);
        SET_ARG(k, 1, zero);
        SET_ARG(k, 2, info);
        SET_ARG(k, 3, oi);
        SET_ARG(k, 4, H);
        SET_ARG(k, 5, oh);
        SET_ARG(k, 6, count);
        s = run_kernel(w, w->k_finish, err, 256 * 256, 256, "launching bsofi_finish");
    }
    w->host_s += seconds_now() - t0;
    clFlush(w->q);
    return s;
}

/* One problem: A, B in host doubles; H^-1 into H at offH on the device. *info as documented. */
static bcl_status bsofi_one(bsofi *w, const double *A, const double *B, cl_mem H, size_t offH,
                            int *info)
{
    const int n = w->n, p = w->p;
    const size_t nn = w->nn;
    /* the arena of the problem before the last one is free once its device work is done */
    w->cur ^= 1;
    if (w->arena_done[w->cur]) {
        clWaitForEvents(1, &w->arena_done[w->cur]);
        clReleaseEvent(w->arena_done[w->cur]);
        w->arena_done[w->cur] = NULL;
    }
    w->arena_used = 0;
    *info = 0;
    const double t0 = seconds_now();
    bcl_status s = fill_zero(w, H, offH);
    memcpy(w->At, A, sizeof(double) * nn);
    if (p == 1)
        for (size_t e = 0; e < nn; ++e)
            w->At[e] += B[e];
    else if (s == BCL_SUCCESS) /* Rt_0 = B_p, the corner */
        s = upload(w, B + (size_t)(p - 1) * nn, n, n, n, w->dR, w->r_t, n);
    host_share cv = {0};
    if (s == BCL_SUCCESS && w->cv_host > 0)
        s = host_cv_begin(w, &cv);
    for (int k = 0; k + 1 < p && s == BCL_SUCCESS && !*info; ++k) {
        s = factor_step(w, k, A, B);
        const int bad = s == BCL_SUCCESS ? singular_at(w->Rd + (size_t)k * nn, n) : 0;
        if (bad)
            *info = k * n + bad;
        else if (s == BCL_SUCCESS && k < w->jF)
            s = invert_column(w, k, H, offH);
        if (s == BCL_SUCCESS && !*info && k < w->jF && w->cv_host > 0)
            host_cv_column(w, &cv, k);
    }
    if (w->cv_host > 0) { /* a singular problem's inverse is cleared below: its rows stay here */
        const bcl_status end =
            host_cv_end(w, &cv, s == BCL_SUCCESS && *info ? BCL_NUMERICAL_FAILURE : s, H, offH);
        if (s == BCL_SUCCESS && !*info)
            s = end;
    }
    if (s == BCL_SUCCESS && !*info) {
        memcpy(w->panel, w->At, sizeof(double) * nn);
        if (last_qr(w) != 0)
            s = bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: LAPACK dgeqrf/dorgqr failed", w->fn);
        const int bad = s == BCL_SUCCESS ? singular_at(w->Rd + (size_t)(p - 1) * nn, n) : 0;
        if (bad)
            *info = (p - 1) * n + bad;
        else if (s == BCL_SUCCESS)
            s = upload(w, w->Q, n, n, n, w->dQ, (size_t)(p - 1) * 4 * nn, n);
    }
    if (s == BCL_SUCCESS && !*info)
        s = invert_rows(w, H, offH);
    w->host_s += seconds_now() - t0;
    if (s == BCL_SUCCESS && !*info)
        s = apply_q_transpose(w, H, offH);
    if (s == BCL_SUCCESS && *info) /* singular: zeros, whatever was enqueued before */
        s = fill_zero(w, H, offH);
    cl_int err = clEnqueueMarkerWithWaitList(w->q, 0, NULL, &w->arena_done[w->cur]);
    if (s == BCL_SUCCESS && err != CL_SUCCESS)
        s = bcl_cl_fail(w->ctx, err, "clEnqueueMarkerWithWaitList");
    clFlush(w->q);
    return s;
}

/* The second and third queues' work done and without error, before a call reports success: a
 * failed command shows in its queue's clFinish or in the status of a later marker (slot_free,
 * cv_done), which the main queue's waits do not pass on to the caller. */
static bcl_status finish_side_queues(bsofi *w)
{
    cl_int err = w->q3 ? clFinish(w->q3) : CL_SUCCESS;
    if (err == CL_SUCCESS && w->q2)
        err = clFinish(w->q2);
    if (err != CL_SUCCESS)
        return bcl_cl_fail(w->ctx, err, "clFinish on the second or third queue");
    for (int i = 0; i <= MAX_SLOTS; ++i) {
        cl_event mark = i < MAX_SLOTS ? w->slot_free[i] : w->cv_done;
        cl_int status = CL_COMPLETE;
        if (mark && clGetEventInfo(mark, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                   &status, NULL) == CL_SUCCESS &&
            status < 0)
            return bcl_cl_fail(w->ctx, status, "a command on the second or third queue");
    }
    return BCL_SUCCESS;
}

static void bsofi_release(bsofi *w)
{
    if (w->ctx)
        w->ctx->recording = 0;
    if (w->q3)
        clFinish(w->q3);
    if (w->q2)
        clFinish(w->q2);
    if (w->q)
        clFinish(w->q);
    if (w->cv_done)
        clReleaseEvent(w->cv_done);
    for (int i = 0; i < MAX_SLOTS; ++i)
        if (w->slot_free[i])
            clReleaseEvent(w->slot_free[i]);
    for (int i = 0; i < 2; ++i) {
        if (w->arena_done[i])
            clReleaseEvent(w->arena_done[i]);
        free(w->arena[i]);
    }
    if (w->dA)
        clReleaseMemObject(w->dA);
    if (w->dB)
        clReleaseMemObject(w->dB);
    const char *keep = getenv("BATCHCL_PCYCLIC_KEEP");
    if (keep && !strcmp(keep, "0"))
        bcl_pcyclic_release(w->ctx);
    free(w->Rd);
}

/* Hand clBLAST the direct GEMM parameters measured for this device (src/gemm_params.h): the
 * first tuning file for exactly this device with a set for the precision. clBLAST keeps such a
 * set for the device and precision in the whole process (CLBlastOverrideParameters; it has no way
 * back to its own) and builds its GEMM again after each new one, so a set is handed over once per
 * process, and the plan line names the set in force, also one handed over by an earlier call.
 * Nothing here fails the call: without a usable set clBLAST keeps what it has. */
static pthread_mutex_t gemm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    cl_device_id dev;
    int dbl;
    size_t v[GEMM_DIRECT_PARAMS];
} gemm_given[8];
static int gemm_ngiven;

static int gemm_slot(cl_device_id dev, int dbl) /* under gemm_lock; gemm_ngiven when none */
{
    int slot = 0;
    while (slot < gemm_ngiven && (gemm_given[slot].dev != dev || gemm_given[slot].dbl != dbl))
        ++slot;
    return slot;
}

static void describe_set(char *out, size_t cap, const char *what, const size_t *v)
{
    snprintf(out, cap,
             "%s (WGD %zu, MDIMCD %zu, NDIMCD %zu, MDIMAD %zu, NDIMBD %zu, KWID %zu, VWMD %zu, "
             "VWND %zu, PADA %zu, PADB %zu)",
             what, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]);
}

/* clBLAST's own parameters for `why`, unless a set handed over earlier is still in force */
static void note_own(bcl_context *ctx, int dbl, const char *why)
{
    char *note = ctx->gemm_note[dbl];
    const size_t cap = sizeof ctx->gemm_note[dbl];
    pthread_mutex_lock(&gemm_lock);
    const int slot = gemm_slot(ctx->device, dbl);
    size_t v[GEMM_DIRECT_PARAMS] = {0};
    if (slot < gemm_ngiven)
        memcpy(v, gemm_given[slot].v, sizeof v);
    pthread_mutex_unlock(&gemm_lock);
    if (slot == gemm_ngiven) {
        snprintf(note, cap, "clBLAST's own parameters (%s)", why);
        return;
    }
    char what[160];
    snprintf(what, sizeof what, "%s here; clBLAST keeps the set handed over earlier in this process",
             why);
    describe_set(note, cap, what, v);
}

static void gemm_params_apply(bcl_context *ctx, int dbl)
{
    if (ctx->gemm_direct_state[dbl])
        return;
    ctx->gemm_direct_state[dbl] = -1;
    const char *env = getenv("BATCHCL_CLBLAST_TUNED");
    if (env && !atoi(env)) {
        note_own(ctx, dbl, "BATCHCL_CLBLAST_TUNED=0");
        return;
    }
    const bcl_tuning_file *f = ctx->tuning;
    while (f && f->level == BCL_TUNING_EXACT && !f->has_gemm_direct[dbl])
        f = f->next;
    if (!f || f->level != BCL_TUNING_EXACT) {
        note_own(ctx, dbl, "no tuned set for this device");
        return;
    }
    const size_t *v = f->gemm_direct[dbl];
    char why[160], msg[220];
    if (!gemm_direct_valid(v, dbl ? 8 : 4, ctx->dev.local_mem_bytes, ctx->dev.max_work_group_size,
                           why, sizeof why)) {
        snprintf(msg, sizeof msg, "the tuned set does not fit: %.120s", why);
        note_own(ctx, dbl, msg);
        return;
    }
    pthread_mutex_lock(&gemm_lock);
    const int slot = gemm_slot(ctx->device, dbl);
    CLBlastStatusCode st = CLBlastSuccess;
    if (slot == gemm_ngiven || memcmp(gemm_given[slot].v, v, sizeof gemm_given[slot].v)) {
        st = gemm_direct_give(ctx->device, dbl, v);
        if (st == CLBlastSuccess && slot < 8) {
            gemm_given[slot].dev = ctx->device;
            gemm_given[slot].dbl = dbl;
            memcpy(gemm_given[slot].v, v, sizeof gemm_given[slot].v);
            gemm_ngiven += slot == gemm_ngiven;
        }
    }
    pthread_mutex_unlock(&gemm_lock);
    if (st != CLBlastSuccess) {
        snprintf(msg, sizeof msg, "clBLAST refused the tuned set: %s", clblast_status_name(st));
        note_own(ctx, dbl, msg);
        return;
    }
    ctx->gemm_direct_state[dbl] = 1;
    describe_set(ctx->gemm_note[dbl], sizeof ctx->gemm_note[dbl],
                 "direct GEMM tuned for this device", v);
}

/* The call's device workspace, r_total values of dR (after dev_kernels, which sets the block
 * width and the apply kernel) */
static bcl_status alloc_workspace(bsofi *w, size_t r_total)
{
    const size_t n = (size_t)w->n, nn = w->nn, N = (size_t)w->N, P = (size_t)w->p;
    bcl_status s = ws_buffer(w, WS_T, N * (P < 3 ? 2 : 3) * n * w->es, &w->dT);
    if (s == BCL_SUCCESS)
        s = ws_buffer(w, WS_Q, P * 4 * nn * w->es, &w->dQ);
    if (s == BCL_SUCCESS)
        s = ws_buffer(w, WS_S, 2 * P * nn * w->es, &w->dS);
    if (s == BCL_SUCCESS)
        s = ws_buffer(w, WS_R, r_total * w->es, &w->dR);
    /* zeros (also the first use, where a device that allocates lazily fails) */
    if (s == BCL_SUCCESS)
        s = clear_buffer(w, w->dR, 0, r_total, "preparing the p-cyclic workspace");
    if (s != BCL_SUCCESS || !w->dev_panels)
        return s;
    /* the panel, its reflectors, the blocks' T, R_kk, the info flag */
    const size_t blocks = (n + (size_t)w->nb - 1) / (size_t)w->nb;
    /* two queues: 2 chain_steps + 1 slots of the panel with its trailing block column (2n x 2n
     * each), and of the block T's */
    const size_t slots = w->overlap ? 2 * (size_t)w->chain_steps + 1 : 1;
    w->nslots = (int)slots;
    w->slot_stride = w->overlap ? 4 * nn : 2 * nn;
    w->tb_slot = (blocks + 1) * w->nb * w->nb; /* + qr_chain's spare */
    s = ws_buffer(w, WS_P, slots * w->slot_stride * w->es, &w->dP);
    if (s == BCL_SUCCESS)
        s = ws_buffer(w, WS_V, 2 * nn * w->es, &w->dV);
    if (s == BCL_SUCCESS)
        s = ws_buffer(w, WS_TB, slots * w->tb_slot * w->es, &w->dTb);
    if (s == BCL_SUCCESS)
        s = ws_buffer(w, WS_RKK, P * nn * w->es, &w->dRkk);
    if (s == BCL_SUCCESS)
        s = ws_buffer(w, WS_BAD, sizeof(cl_int) * (1 + (size_t)w->p * w->chain_slot), &w->dBad);
    /* qr_apply's shares of W: ranges of the 2n rows x C's columns (at most 2n, padded to whole
     * work-groups) x nb (qr_apply_rows needs none) */
    const size_t ranges = (2 * n + w->split_rows - 1) / w->split_rows,
                 cols = 2 * n + (size_t)(QR_WG / w->nb);
    if (s == BCL_SUCCESS && !w->k_apply_rows)
        s = ws_buffer(w, WS_WP, ranges * cols * w->nb * w->es, &w->dWp);
    return s;
}

static bcl_status bsofi_init(bcl_context *ctx, const char *fn, int dbl, int n, int p,
                             int dev_panels, bsofi *w)
{
    memset(w, 0, sizeof *w);
    w->dev_panels = dev_panels;
    const char *phases = getenv("BATCHCL_PCYCLIC_PHASES");
    w->phase_s[3] = phases && atoi(phases) ? 0 : -1;
    w->ctx = ctx;
    w->fn = fn;
    w->n = n;
    w->p = p;
    w->N = n * p;
    w->dbl = dbl;
    w->es = dbl ? sizeof(double) : sizeof(float);
    w->nn = (size_t)n * n;
    w->q = ctx->queue[0];
    w->q2 = ctx->nqueues > 1 ? ctx->queue[1] : NULL;
    w->q3 = ctx->nqueues > 2 ? ctx->queue[2] : NULL;
    const char *fail = getenv("BATCHCL_CLBLAST_FAIL");
    w->force_fail = fail && atoi(fail) != 0;
    /* BATCHCL_CLBLAST_FAIL (tests) keeps the products on clBLAST, whose calls it fails */
    const char *own_env = getenv("BATCHCL_PCYCLIC_GEMM");
    w->gemm_tensor = dbl && bcl_gemm_tensor_device(ctx) && !w->force_fail &&
                     !(own_env && !strcmp(own_env, "clblast"));
    w->own_gemm = w->gemm_tensor || (!w->force_fail && own_env && !strcmp(own_env, "own"));
    const char *pair_env = getenv("BATCHCL_PCYCLIC_GEMM_PAIR");
    w->gemm_pair = !(pair_env && !strcmp(pair_env, "0"));
    gemm_params_apply(ctx, dbl);
    /* The Q^T application: by pairs (apply_qt), or by halves, the right ones on a second queue
     * (apply_qt_halves; gemm.cl on the tensor cores from n = 64, where each half's two products
     * are one launch, gemm_pair). On the H200 (bench pcyclic --order 10000, ms, pairs against
     * halves on two queues, one run, thirty-sixth session) n = 48 30.7 against 31.5, 64 24.2 /
     * 24.2 against 22.4 / 21.7, 96 23.3 against 21.0, 128 22.8 against 20.4, 384 31.2 against
     * 29.7, 512 35.6 against 34.5, 1024 56.5 against 55.9; 32 31.4 against 35.2. Before the
     * products were fused (two launches a half, the second adding X_k's rows into C) halves won
     * only at n = 129 .. 256 (192: 22.1 against 22.5; 512 36.7 against 36.5, 1024 55.8 against
     * 55.3); on one queue they lose everywhere (n = 256 25.6 ms: twice the products, of half
     * the depth). BATCHCL_PCYCLIC_QT=pair, halves (one queue) or halves2 forces one. */
    const char *qt_env = getenv("BATCHCL_PCYCLIC_QT");
    w->qt_halves = !qt_env ? (w->gemm_tensor && n >= 64 ? 2 : 0)
                   : !strcmp(qt_env, "halves")  ? 1
                   : !strcmp(qt_env, "halves2") ? 2
                                                : 0;
    const size_t nn = w->nn, N = (size_t)w->N, P = (size_t)p;
    if (N * N * w->es > ctx->dev.max_alloc_bytes)
        return bcl_fail(ctx, BCL_UNSUPPORTED_SIZE,
                        "%s: the inverse of order N = %zu needs %zu bytes in one device buffer; "
                        "the device allows %llu",
                        fn, N, N * N * w->es, (unsigned long long)ctx->dev.max_alloc_bytes);
    /* host: Rd, Xd (p blocks each), At, panel (2), Tm, V (2), W, work, Q, tau (method 3: none) */
    double *h = calloc(dev_panels ? 1 : 2 * P * nn + 9 * nn + (size_t)n, sizeof *h);
    w->arena_cap = dev_panels ? 0 : (8 * P + 4) * nn * w->es;
    w->arena[0] = malloc(w->arena_cap + 1);
    w->arena[1] = malloc(w->arena_cap + 1);
    if (!h || !w->arena[0] || !w->arena[1]) {
        free(h);
        return bcl_fail(ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    w->Rd = h;
    if (!dev_panels) {
        w->Xd = w->Rd + P * nn;
        w->At = w->Xd + P * nn;
        w->panel = w->At + nn;
        w->Tm = w->panel + 2 * nn;
        w->V = w->Tm + nn;
        w->W = w->V + 2 * nn;
        w->work = w->W + nn;
        w->Q = w->work + nn;
        w->tau = w->Q + nn;
    }
    /* device blocks: R_k,k+1 and R_k,p-1 (p each), Rt (2, ping-pong), V (2), T, W, A_p-1, U1, U,
     * T V^T (2), the 2n x 2n identity (4) */
    w->r_s = 0;
    w->r_l = P * nn;
    w->r_t = 2 * P * nn;
    w->r_v = w->r_t + 2 * nn;
    w->r_tm = w->r_v + 2 * nn;
    w->r_w = w->r_tm + nn;
    w->r_a = w->r_w + nn;
    w->r_u1 = w->r_a + nn;
    w->r_u = w->r_u1 + nn;
    w->r_tv = w->r_u + nn;
    w->r_eye = w->r_tv + 2 * nn;
    const size_t r_total = w->r_eye + 4 * nn;
    bcl_status s = dev_panels ? dev_kernels(w) : BCL_SUCCESS;
    if (s != BCL_SUCCESS)
        return s;
    s = alloc_workspace(w, r_total);
    if (s == BCL_OUT_OF_MEMORY || s == BCL_OPENCL_ERROR) { /* what earlier calls left held */
        bcl_pcyclic_release(ctx);
        bcl_clear_error(ctx);
        s = alloc_workspace(w, r_total);
    }
    if (s != BCL_SUCCESS)
        return s;
    /* the identity the Q^(k) start from (dR was cleared above): formed on the device where the
     * kernels are built (the upload from pageable host memory, 32 MiB at n = 1024, made the setup
     * of a call take 11-15 ms on the H100; 0.3-0.5 ms now), else uploaded */
    if (dev_panels)
        return dev_identity(w, w->dR, w->r_eye, 2 * n, 2 * n);
    unsigned char *eye = calloc(4 * nn, w->es);
    if (!eye)
        return bcl_fail(ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory", fn);
    for (int i = 0; i < 2 * n; ++i) {
        if (dbl)
            ((double *)(void *)eye)[(size_t)i * 2 * n + i] = 1;
        else
            ((float *)(void *)eye)[(size_t)i * 2 * n + i] = 1;
    }
    const cl_int err = clEnqueueWriteBuffer(w->q, w->dR, CL_TRUE, w->r_eye * w->es,
                                            4 * nn * w->es, eye, 0, NULL, NULL);
    free(eye);
    return err == CL_SUCCESS ? BCL_SUCCESS : bcl_cl_fail(ctx, err, "preparing the p-cyclic workspace");
}

/* ---- the performance model: how many block columns to invert column-wise (j_F), and the
 * host's shares ---- */

/* The constants on this host and device: the host time of one panel step (method 1's), the
 * device's GEMM rate and call overhead on the column version's shape (j*n x n x n) at j = 4 and
 * 15, the host's GEMM rate and the link's, in buffers of its own (the same shapes whatever the
 * call's p, so that the kept model serves every p). */
enum { MODEL_J1 = 4, MODEL_J2 = 15, MODEL_REPS = 5 };
static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the median of MODEL_REPS timings (sorts them) */
static double median_time(double *t)
{
    qsort(t, MODEL_REPS, sizeof *t, compare_doubles);
    return t[MODEL_REPS / 2];
}

/* rate and cost per call from the median times t1, t2 of products of f1 < f2 flops: the rate from
 * the difference, taken as at least a tenth of the larger time (so that noise cannot make the
 * rate absurd where the call cost hides the difference), the cost per call from the smaller */
static void rate_and_call(double f1, double f2, double t1, double t2, double *rate, double *call)
{
    t1 = t1 > 1e-9 ? t1 : 1e-9;
    t2 = t2 > 1e-9 ? t2 : 1e-9;
    const double dt = t2 - t1 > 0.1 * t2 ? t2 - t1 : 0.1 * t2;
    *rate = (f2 - f1) / dt;
    *call = t1 - f1 / *rate;
    if (*call < 0)
        *call = 0;
}

/* the host's BLAS GEMM rate and cost per call on j*n x n x n at j = MODEL_J1 and MODEL_J2 (the
 * medians of MODEL_REPS after a round that starts its threads), as the device's: the host
 * shares' products are of that order, and at small n many of them */
static void measure_host_gemm(int n, bcl_pcyclic_model *m)
{
    const size_t nn = (size_t)n * n, rows = (size_t)MODEL_J2 * n;
    double *a = calloc(2 * rows * n + nn, sizeof *a), t[2][MODEL_REPS];
    m->host_gemm_flops = m->host_gemm_call_s = 0;
    if (!a)
        return;
    for (size_t e = 0; e < rows * n; ++e)
        a[e] = (double)(e % 7) - 3;
    for (size_t e = 0; e < nn; ++e)
        a[2 * rows * n + e] = (double)(e % 5) - 2;
    const int js[2] = {MODEL_J1, MODEL_J2};
    for (int r = -1; r < MODEL_REPS; ++r)
        for (int i = 0; i < 2; ++i) {
            const double t0 = seconds_now();
            dgemm('N', 'N', js[i] * n, n, n, 1.0, a, (int)rows, a + 2 * rows * n, n, 0.0,
                  a + rows * n, (int)rows);
            if (r >= 0)
                t[i][r] = seconds_now() - t0;
        }
    free(a);
    const double n3 = 2.0 * n * n * (double)n;
    rate_and_call(n3 * js[0], n3 * js[1], median_time(t[0]), median_time(t[1]),
                  &m->host_gemm_flops, &m->host_gemm_call_s);
}

static bcl_status measure_link(bsofi *w, bcl_pcyclic_model *m);

/* the host shares' constants (host GEMM, link) into m; where the link cannot be timed, none (the
 * host then takes no share unless told to) */
static void measure_share_constants(bsofi *w, bcl_pcyclic_model *m)
{
    measure_host_gemm(w->n, m);
    if (measure_link(w, m) != BCL_SUCCESS) {
        m->host_gemm_flops = m->host_gemm_call_s = m->link_bytes_s = m->link_call_s = 0;
        bcl_clear_error(w->ctx);
    }
}

/* the link: blocking writes and reads of 256 KiB and 16 MiB from pageable host memory (what the
 * shares use), the medians; rate from the difference, cost per transfer from the smaller */
static bcl_status measure_link(bsofi *w, bcl_pcyclic_model *m)
{
    const size_t small = (size_t)1 << 18, large = (size_t)1 << 24;
    unsigned char *host = calloc(large, 1);
    cl_int err = CL_SUCCESS;
    cl_mem buf = host ? clCreateBuffer(w->ctx->cl, CL_MEM_READ_WRITE, large, NULL, &err) : NULL;
    if (!host)
        return bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory", w->fn);
    double t[2][MODEL_REPS];
    const size_t bytes[2] = {small, large};
    for (int r = -1; r < MODEL_REPS && err == CL_SUCCESS; ++r)
        for (int i = 0; i < 2 && err == CL_SUCCESS; ++i) {
            const double t0 = seconds_now();
            err = clEnqueueWriteBuffer(w->q, buf, CL_TRUE, 0, bytes[i], host, 0, NULL, NULL);
            if (err == CL_SUCCESS)
                err = clEnqueueReadBuffer(w->q, buf, CL_TRUE, 0, bytes[i], host, 0, NULL, NULL);
            if (r >= 0)
                t[i][r] = (seconds_now() - t0) / 2;
        }
    if (buf)
        clReleaseMemObject(buf);
    free(host);
    if (err != CL_SUCCESS)
        return bcl_cl_fail(w->ctx, err, "timing transfers between the host and the device");
    rate_and_call((double)small, (double)large, median_time(t[0]), median_time(t[1]),
                  &m->link_bytes_s, &m->link_call_s);
    return BCL_SUCCESS;
}

static bcl_status measure_model(bsofi *w, bcl_pcyclic_model *m)
{
    memset(m, 0, sizeof *m);
    const int n = w->n, p = w->p;
    /* the host step needs method 1's host arrays (method 3 has none, and no use for it) */
    double *A = w->dev_panels ? NULL : malloc(sizeof *A * 2 * w->nn);
    bcl_status s = A || w->dev_panels
                       ? BCL_SUCCESS
                       : bcl_fail(w->ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory", w->fn);
    if (A) {
        unsigned seed = 12345;
        for (size_t e = 0; e < 2 * w->nn; ++e) {
            seed = seed * 1103515245u + 12345u;
            A[e] = (double)(seed >> 8) / 16777216.0 - 0.5;
        }
        for (int i = 0; i < n; ++i)
            A[(size_t)i * n + i] += 2;
        memcpy(w->At, A, sizeof(double) * w->nn);
        w->arena_used = 0;
        w->p = 3; /* a step with both next-column products; the fastest of three after one that
                   * starts the BLAS threads */
        for (int rep = 0; rep < 4 && s == BCL_SUCCESS; ++rep) {
            w->arena_used = 0;
            double t0 = seconds_now();
            s = factor_step(w, 0, A, A);
            const double dt = seconds_now() - t0;
            if (rep == 1 || (rep > 1 && dt < m->host_step_s))
                m->host_step_s = dt;
            clFinish(w->q); /* its uploads read the arena that the next repetition refills */
        }
        w->p = p;
        w->arena_used = 0;
        free(A);
    }
    /* device: C (15n x n) = A (15n x n) B (n x n), zeros, in one buffer */
    const size_t rows = (size_t)MODEL_J2 * n, count = 2 * rows * n + w->nn;
    cl_int err = CL_SUCCESS;
    cl_mem buf = s == BCL_SUCCESS ? clCreateBuffer(w->ctx->cl, CL_MEM_READ_WRITE, count * w->es,
                                                   NULL, &err)
                                  : NULL;
    if (s == BCL_SUCCESS && err != CL_SUCCESS)
        s = bcl_cl_fail(w->ctx, err, "allocating the buffers to time GEMMs in");
    if (s == BCL_SUCCESS)
        s = clear_buffer(w, buf, 0, count, "clearing the buffers to time GEMMs in");
    clFinish(w->q);
    const int js[2] = {MODEL_J1, MODEL_J2};
    double t[2][MODEL_REPS];
    /* the first round builds clBLAST's kernels; then the median of MODEL_REPS rounds */
    for (int r = -1; r < MODEL_REPS && s == BCL_SUCCESS; ++r)
        for (int i = 0; i < 2 && s == BCL_SUCCESS; ++i) {
            double t0 = seconds_now();
            s = gemm(w, CLBlastTransposeNo, CLBlastTransposeNo, (size_t)js[i] * n, n, n, 1.0, buf,
                     0, rows, buf, 2 * rows * n, n, 0.0, buf, rows * n, rows);
            clFinish(w->q);
            if (r >= 0)
                t[i][r] = seconds_now() - t0;
        }
    if (buf)
        clReleaseMemObject(buf);
    if (s != BCL_SUCCESS)
        return s;
    const double n3 = 2.0 * n * n * (double)n;
    rate_and_call(n3 * js[0], n3 * js[1], median_time(t[0]), median_time(t[1]),
                  &m->dev_gemm_flops, &m->dev_gemm_call_s);
    measure_share_constants(w, m); /* a failure there leaves the rest standing */
    return BCL_SUCCESS;
}

/* Keep u as the context's model for its n and precision (replacing the one kept before). */
static const struct bcl_pcyclic_model_in_use *keep_model(bcl_context *ctx,
                                                         const struct bcl_pcyclic_model_in_use *u)
{
    int slot = 0;
    while (slot < ctx->pcyclic_models &&
           !(ctx->pcyclic_model[slot].n == u->n && ctx->pcyclic_model[slot].dbl == u->dbl))
        ++slot;
    if (slot == ctx->pcyclic_models)
        slot = ctx->pcyclic_models < 8 ? ctx->pcyclic_models++ : 7;
    ctx->pcyclic_model[slot] = *u;
    return &ctx->pcyclic_model[slot];
}

/* whether model m serves this call: method 1 needs the host's panel step, which method 3's
 * measurement leaves out (a failed measurement serves as it is) */
static int model_serves(const bsofi *w, const struct bcl_pcyclic_model_in_use *u)
{
    return u->m.dev_gemm_flops <= 0 || w->dev_panels || u->m.host_step_s > 0;
}

/* The model for this context, precision and n: kept in the context after its first use or a
 * bcl_pcyclic_calibrate call; from a tuning file for this device, driver and number of compute
 * units (batchcl-tune stores them), else from the cache directory beside the kernel binaries
 * (pcyclic-model-v4-<device>.txt, one line per n and precision, the last that serves), else
 * measured and appended there. BATCHCL_PCYCLIC_CALIBRATE=1 measures instead of reading the file or
 * the cache. v3: fixed shapes, medians and a bounded GEMM rate (v2 timed once at the call's p, and
 * could give absurd rates at small n); v4: the host shares' constants (host GEMM, link), and a
 * host step of 0 where method 3 measured. A measurement that fails is kept as such (the call's
 * own work reports what failed) and not tried again. */
static const struct bcl_pcyclic_model_in_use *model_for(bsofi *w)
{
    bcl_context *ctx = w->ctx;
    for (int i = 0; i < ctx->pcyclic_models; ++i)
        if (ctx->pcyclic_model[i].n == w->n && ctx->pcyclic_model[i].dbl == w->dbl &&
            model_serves(w, &ctx->pcyclic_model[i]))
            return &ctx->pcyclic_model[i];
    if (w->force_fail) { /* no clBLAST call to measure with; nothing kept */
        static const struct bcl_pcyclic_model_in_use unmeasured = {0, 0, {0, 0, 0, 0, 0, 0, 0},
                                                                   "none"};
        return &unmeasured;
    }
    struct bcl_pcyclic_model_in_use u = {w->n, w->dbl, {0, 0, 0, 0, 0, 0, 0}, "tuning file"};
    const char *again = getenv("BATCHCL_PCYCLIC_CALIBRATE");
    const int measure = again && atoi(again);
    char path[1200] = "";
    if (ctx->cache_dir[0]) {
        uint64_t h = bcl_hash(ctx->dev.name, strlen(ctx->dev.name), BCL_HASH_SEED);
        h = bcl_hash(ctx->dev.driver_version, strlen(ctx->dev.driver_version), h);
        snprintf(path, sizeof path, "%s/pcyclic-model-v4-%016llx.txt", ctx->cache_dir,
                 (unsigned long long)h);
    }
    if (!measure && !bcl_tuning_pcyclic_model(ctx, w->dbl, w->n, &u.m)) {
        u.source = "cache";
        FILE *f = path[0] ? fopen(path, "r") : NULL;
        char line[256];
        while (f && fgets(line, sizeof line, f)) {
            int rn, rd;
            struct bcl_pcyclic_model_in_use r = u;
            if (sscanf(line, "%d %d %lg %lg %lg %lg %lg %lg %lg", &rn, &rd, &r.m.host_step_s,
                       &r.m.dev_gemm_flops, &r.m.dev_gemm_call_s, &r.m.host_gemm_flops,
                       &r.m.host_gemm_call_s, &r.m.link_bytes_s, &r.m.link_call_s) == 9 &&
                rn == w->n && rd == w->dbl && r.m.dev_gemm_flops > 0 && model_serves(w, &r))
                u.m = r.m;
        }
        if (f)
            fclose(f);
    } else if (!measure && (u.m.host_gemm_flops <= 0 || u.m.link_bytes_s <= 0)) {
        /* a file tuned before the host shares were modelled: their constants measured here */
        u.source = "tuning file, host GEMM and link measured";
        measure_share_constants(w, &u.m);
    }
    if (u.m.dev_gemm_flops <= 0) {
        u.source = "measured";
        if (measure_model(w, &u.m) != BCL_SUCCESS) {
            memset(&u.m, 0, sizeof u.m);
            u.source = "not measured";
            bcl_clear_error(ctx);
        }
        /* the directory may not exist yet (program binaries, which create it, are not kept on
         * every device) */
        FILE *f = path[0] && u.m.dev_gemm_flops > 0 && bcl_make_dirs(ctx->cache_dir)
                      ? fopen(path, "a")
                      : NULL;
        if (f) {
            fprintf(f, "%d %d %.6g %.6g %.6g %.6g %.6g %.6g %.6g\n", u.n, u.dbl, u.m.host_step_s,
                    u.m.dev_gemm_flops, u.m.dev_gemm_call_s, u.m.host_gemm_flops,
                    u.m.host_gemm_call_s, u.m.link_bytes_s, u.m.link_call_s);
            fclose(f);
        }
    }
    return keep_model(ctx, &u);
}

/* j_F: the block columns the device inverts column-wise while the host still factorizes (the
 * paper's merged BSOFTRI: column j costs the device one j*n x n x n GEMM, the host's factorization
 * takes p-1 panel steps); the rest go by rows afterwards, with wider GEMMs. */
static int choose_jF(const bsofi *w, const bcl_pcyclic_model *m, int forced)
{
    const int p = w->p;
    if (forced < 0 || p < 2)
        return 0;
    if (forced > 0)
        return forced < p - 1 ? forced : p - 1;
    const double host = (double)(p - 1) * m->host_step_s, n3 = 2.0 * w->n * w->n * (double)w->n;
    const double rate = m->dev_gemm_flops > 0 ? m->dev_gemm_flops : 1e9;
    double dev = 0;
    int j = 1;
    while (j < p - 1) {
        dev += m->dev_gemm_call_s + n3 * j / rate;
        if (dev > host)
            break;
        ++j;
    }
    /* every column but the last (last_column_from_u) adds a (j+1) n x n x n product a column */
    if (j == p - 1 &&
        dev + (p - 1) * m->dev_gemm_call_s + n3 * (double)(p - 1) * p / 2 / rate > host)
        return p - 2;
    return j;
}

/* ---- the host's shares from the model (the paper's eqs. (5)-(6), balanced over a phase) ----
 * A share pays where the host's part (its reads, products and write) ends no later than the
 * device's products without it: the phase then takes max(device, host reads + products) + the
 * write, against the device's time alone. The device's time is its calls' fixed cost plus its
 * flops at the model's rate (the paper's assumption (i) fails here: a launch does a whole row).
 * A CPU device runs on the host's cores, so there the two parts add up instead (the paper's
 * assumption (ii): a kernel's speed is in proportion to the cores it has), and a share pays only
 * where the host's BLAS is the faster of the two. */

static double link_s(const bcl_pcyclic_model *m, double bytes)
{
    return m->link_call_s + bytes / m->link_bytes_s;
}

/* the phase's time with the device's part `dev` and the host's, `host`, beside it */
static double beside(const bsofi *w, double dev, double host)
{
    if (!w->ctx->dev.is_gpu)
        return dev + host;
    return dev > host ? dev : host;
}

/* the device's row products over the columns from `first` on (grouped: row_groups_used's groups,
 * about 4/p more flops in 2 gs + p/gs launches) */
static double rv_device_s(const bsofi *w, const bcl_pcyclic_model *m, int first, int grouped)
{
    const int p = w->p, f = first > 1 ? first : 1, gs = w->rv_group;
    /* row i takes the columns max(i+1, f) .. p-1 */
    const double t = p - f, blocks = (double)(f - 1) * (p - f) + t * (t + 1) / 2;
    const double n3 = 2.0 * w->n * w->n * (double)w->n;
    const double calls = grouped ? 2.0 * gs + (double)(p - 1) / gs : p - 1;
    return calls * m->dev_gemm_call_s + blocks * n3 * (grouped ? 1 + 4.0 / p : 1) / m->dev_gemm_flops;
}

/* the row version's phase with h block columns on the host (h = 0: none) */
static double rv_phase_s(const bsofi *w, const bcl_pcyclic_model *m, int h)
{
    const int c0 = rv_share_first(w), c1 = c0 + h;
    if (h == 0)
        return rv_device_s(w, m, w->jF, row_groups_fit(w));
    const double n = w->n, es = (double)w->es, n3 = 2 * n * n * n;
    /* one read of the stage: the columns' first c1 block rows and the multipliers */
    const double read = link_s(m, ((double)c1 * h + c1 - 1) * n * n * es);
    const double products = (c1 - 1) * m->host_gemm_call_s +
                            (double)h * (c0 + c1 - 1) / 2 * n3 / m->host_gemm_flops;
    return beside(w, rv_device_s(w, m, c1, 0), read + products) + link_s(m, c1 * n * h * n * es);
}

/* the Q^T application's phase with the first h block rows on the host: block row r's products
 * take depth 2n at the p-1-r steps k >= r, n at the r others, and n for the last column's (on
 * both sides; the host adds a call at each step k < h-1 for its rows below k) */
static double qt_phase_s(const bsofi *w, const bcl_pcyclic_model *m, int h)
{
    const double n = w->n, p = w->p, es = (double)w->es, n3 = 2 * n * n * n, t = p - h;
    const double calls = 2 * (p - 1) + 1;
    const double rows_below = n3 * t + 4 * n3 * t * (t - 1) / 2 + 2 * n3 * (h + p - 1) * t / 2;
    const double dev = calls * m->dev_gemm_call_s + rows_below / m->dev_gemm_flops;
    if (h == 0)
        return dev;
    const double read = link_s(m, h * n * w->N * es) + link_s(m, ((p - 1) * 4 + 1) * n * n * es);
    const double products = (p + h - 1) * m->host_gemm_call_s +
                            (h * ((p - 1) * 4 * n3 + n3) - h * (h - 1) * n3) / m->host_gemm_flops;
    return beside(w, dev, read + products) + link_s(m, h * n * w->N * es);
}

/* A share: h blocks, and how it was set (0: none asked for, or no model; 1: forced; 2: the
 * model's, with its phase's modelled time without and with it) */
typedef struct {
    int h, how;
    double none_s, with_s;
} share_choice;

/* `forced` (> 0: that many, at most avail; -1: none) or, where 0 and the model serves, the share
 * of least modelled `phase` time, taken only where it gains at least 5 % over none (the model's
 * error) */
static void pick_share(const bsofi *w, const bcl_pcyclic_model *m, int forced, int avail,
                       int modelled, double (*phase)(const bsofi *, const bcl_pcyclic_model *, int),
                       share_choice *c)
{
    memset(c, 0, sizeof *c);
    if (forced > 0) {
        c->h = forced < avail ? forced : avail;
        c->how = 1;
    } else if (forced == 0 && modelled && avail > 0) {
        c->how = 2;
        c->none_s = c->with_s = phase(w, m, 0);
        for (int h = 1; h <= avail; ++h) {
            const double t = phase(w, m, h);
            if (t < c->with_s) {
                c->with_s = t;
                c->h = h;
            }
        }
        if (c->with_s > 0.95 * c->none_s)
            c->h = 0;
    }
}

static void choose_host_shares(bsofi *w, const bcl_pcyclic_model *m, const bcl_params *prm,
                               share_choice *rv, share_choice *qt)
{
    const int p = w->p;
    const int rv_avail = p < 2 || last_column_from_u(w) ? 0 : p - 1 - rv_share_first(w);
    const int qt_avail = p < 2 ? 0 : p - 1;
    /* one problem a call: with more, the host would stop enqueueing (method 3) or factorizing
     * (method 1) the next problem while it waits for this one's blocks */
    const int modelled = m->host_gemm_flops > 0 && m->link_bytes_s > 0 &&
                         m->dev_gemm_flops > 0 && w->batch == 1;
    pick_share(w, m, prm->pcyclic_rv_host_columns, rv_avail, modelled, rv_phase_s, rv);
    pick_share(w, m, prm->pcyclic_qt_host_rows, qt_avail, modelled, qt_phase_s, qt);
    w->rv_host = rv->h;
    w->qt_host = qt->h;
}

/* The column version's share (method 1): hc block rows of columns 1 .. jF-1 on the host. Its
 * panel chain then also forms R_k-1,k and W_k and the rows (2n^3 (2 + min(hc, k)) flops a column)
 * and writes them after the panels; the device's columns lose those rows' flops, and columns
 * k <= hc both of their products. With j_F chosen to end within the host's chain, this pays only
 * where the device's column version is the longer part or, on a CPU device, where the host's BLAS
 * is the faster. */
static double cv_phase_s(const bsofi *w, const bcl_pcyclic_model *m, int hc)
{
    const double n = w->n, n3 = 2 * n * n * n, es = (double)w->es;
    double host = (w->p - 1) * m->host_step_s, dev = 0;
    for (int k = 1; k < w->jF; ++k) {
        if (hc > 0)
            host += 3 * m->host_gemm_call_s + (2 + (k < hc ? k : hc)) * n3 / m->host_gemm_flops;
        if (k > hc)
            dev += 2 * m->dev_gemm_call_s + (1 + k - hc) * n3 / m->dev_gemm_flops;
    }
    return beside(w, dev, host) + (hc > 0 ? link_s(m, hc * n * w->jF * n * es) : 0);
}

static void choose_cv_host(bsofi *w, const bcl_pcyclic_model *m, int forced, share_choice *cv)
{
    const int avail = w->dev_panels || w->jF < 2 || last_column_from_u(w) ? 0 : w->jF - 1;
    const int modelled = w->batch == 1 && m->host_gemm_flops > 0 && m->link_bytes_s > 0 &&
                         m->dev_gemm_flops > 0 && m->host_step_s > 0;
    pick_share(w, m, forced, avail, modelled, cv_phase_s, cv);
    w->cv_host = cv->h;
}

/* the plan line's note on the host's shares: how each was set (the model's with its modelled
 * phase times without and with it) and the model's constants */
static void append_share_note(bsofi *w, const struct bcl_pcyclic_model_in_use *u,
                              const share_choice *rv, const share_choice *qt,
                              const share_choice *cv)
{
    char *plan = w->ctx->last_kernel;
    const size_t cap = sizeof w->ctx->last_kernel;
    const bcl_pcyclic_model *m = &u->m;
    const share_choice none = {0, 0, 0, 0}, *c[3] = {rv, qt, cv ? cv : &none};
    char how[3][64];
    for (int i = 0; i < 3; ++i)
        if (c[i]->how == 2)
            snprintf(how[i], sizeof how[i], ", modelled %.3g -> %.3g ms", c[i]->none_s * 1e3,
                     c[i]->with_s * 1e3);
        else
            snprintf(how[i], sizeof how[i], "%s", c[i]->how == 1 ? ", forced" : "");
    snprintf(plan + strlen(plan), cap - strlen(plan),
             "; host shares: R^-1 by rows %d block column%s (from %d%s), Q^T %d block row%s%s%s%s",
             w->rv_host, w->rv_host == 1 ? "" : "s", rv_share_first(w), how[0], w->qt_host,
             w->qt_host == 1 ? "" : "s", qt->how == 2 ? " (" : "", qt->how == 2 ? how[1] + 2 : how[1],
             qt->how == 2 ? ")" : "");
    if (cv) /* method 1 */
        snprintf(plan + strlen(plan), cap - strlen(plan),
                 ", the column version %d block row%s%s%s%s", w->cv_host,
                 w->cv_host == 1 ? "" : "s", cv->how == 2 ? " (" : "",
                 cv->how == 2 ? how[2] + 2 : how[2], cv->how == 2 ? ")" : "");
    if (m->host_gemm_flops > 0 && m->link_bytes_s > 0)
        snprintf(plan + strlen(plan), cap - strlen(plan),
                 " (model, %s: host GEMM %.3g GFLOP/s + %.3g us per call, link %.3g GB/s + %.3g us)",
                 u->source, m->host_gemm_flops * 1e-9, m->host_gemm_call_s * 1e6,
                 m->link_bytes_s * 1e-9, m->link_call_s * 1e6);
    else
        snprintf(plan + strlen(plan), cap - strlen(plan), " (model: %s)",
                 u->m.dev_gemm_flops > 0 ? "no host GEMM or link constants" : u->source);
}

static void describe_plan(bsofi *w, const struct bcl_pcyclic_model_in_use *u)
{
    snprintf(w->ctx->last_kernel, sizeof w->ctx->last_kernel,
             "pcyclic method 1 (BSOFI: host panels with LAPACK, GEMMs on the device); j_F = %d of %d "
             "block columns inverted column-wise during the factorization%s; model "
             "(%s): host panel step %.3g ms, device GEMM %.3g GFLOP/s + %.3g us per call",
             w->jF, w->p, last_column_from_u(w) ? "" : ", the rest by rows", u->source,
             u->m.host_step_s * 1e3, u->m.dev_gemm_flops * 1e-9, u->m.dev_gemm_call_s * 1e6);
}

/* what the host's part took, appended to the plan: the panels are the critical path when the
 * device is much faster than the host */
static void describe_time(bsofi *w, double wall_s, size_t batch)
{
    const size_t len = strlen(w->ctx->last_kernel);
    snprintf(w->ctx->last_kernel + len, sizeof w->ctx->last_kernel - len,
             "; host part (%s) %.3g ms of %.3g ms for %zu problem%s",
             w->dev_panels ? "enqueueing" : "panels, enqueueing", w->host_s * 1e3, wall_s * 1e3,
             batch, batch == 1 ? "" : "s");
    if (w->rv_host > 0 || w->qt_host > 0 || w->cv_host > 0) {
        const size_t l2 = strlen(w->ctx->last_kernel);
        snprintf(w->ctx->last_kernel + l2, sizeof w->ctx->last_kernel - l2,
                 "; the host's shares: waiting for their reads %.3g ms, products %.3g ms, "
                 "writing %.3g ms",
                 w->share_s[0] * 1e3, w->share_s[1] * 1e3, w->share_s[2] * 1e3);
    }
    if (w->phase_s[3] >= 0) {
        const size_t l2 = strlen(w->ctx->last_kernel);
        snprintf(w->ctx->last_kernel + l2, sizeof w->ctx->last_kernel - l2,
                 "; phases (each waited for): BSOF %.3g ms, R^-1 by rows %.3g ms, Q^T %.3g ms",
                 w->phase_s[0] * 1e3, w->phase_s[1] * 1e3, w->phase_s[2] * 1e3);
    }
}

static void append_gemm_note(bsofi *w)
{
    const size_t len = strlen(w->ctx->last_kernel);
    if (w->own_gemm)
        snprintf(w->ctx->last_kernel + len, sizeof w->ctx->last_kernel - len,
                 "; GEMMs by gemm.cl (%s, %s)",
                 w->gemm_tensor ? "fp64 tensor cores" : "portable build, fmas",
                 bcl_gemm_mma_name(bcl_gemm_mma_k(w->ctx)));
    else
        snprintf(w->ctx->last_kernel + len, sizeof w->ctx->last_kernel - len,
                 "; clBLAST GEMM: %s", w->ctx->gemm_note[w->dbl]);
}

/* the plan line's note on the Q^T application where it goes by halves */
static void append_qt_note(bsofi *w)
{
    const size_t len = strlen(w->ctx->last_kernel);
    if (w->qt_halves)
        snprintf(w->ctx->last_kernel + len, sizeof w->ctx->last_kernel - len,
                 "; Q^T applied by halves%s",
                 w->qt_halves == 2 && w->q2 && w->p > 1 ? ", the right ones on a second queue"
                                                        : "");
}

/* the plan line: BSOF's steps a launch and qr_chain's groups taking roles, where they are used */
static void append_chain_note(bsofi *w)
{
    char *plan = w->ctx->last_kernel;
    const size_t cap = sizeof w->ctx->last_kernel;
    if (w->overlap && w->chain_steps > 1)
        snprintf(plan + strlen(plan), cap - strlen(plan),
                 "; %d steps of BSOF a launch, %d before the last pair one a launch",
                 w->chain_steps, w->chain_tail);
    if (w->overlap && w->panel_shuffle && w->chain_groups > 0)
        snprintf(plan + strlen(plan), cap - strlen(plan),
                 "; qr_chain in at most %d groups taking its roles in turn", w->chain_groups);
    if (w->overlap_serial)
        snprintf(plan + strlen(plan), cap - strlen(plan),
                 "; each launch waits for the second queue (BATCHCL_PCYCLIC_OVERLAP_SERIAL)");
}

/* the plan line's note on the column version where it runs beside BSOF on a third queue and where
 * it takes the last block column too */
static void append_cv_note(bsofi *w)
{
    char *plan = w->ctx->last_kernel;
    const size_t cap = sizeof w->ctx->last_kernel;
    if (w->jF > 0 && w->overlap && w->q3)
        snprintf(plan + strlen(plan), cap - strlen(plan),
                 "; the column version on a third queue beside BSOF");
    if (last_column_from_u(w))
        snprintf(plan + strlen(plan), cap - strlen(plan),
                 "; the last block column from the others (-R'^-1 c X_pp)");
}

static void append_rows_note(bsofi *w)
{
    const size_t len = strlen(w->ctx->last_kernel);
    if (row_groups_used(w))
        snprintf(w->ctx->last_kernel + len, sizeof w->ctx->last_kernel - len,
                 "; R^-1's rows in groups of %d block rows", w->rv_group);
}

/* j_F and the plan line: method 1 from the model; method 3 inverts by rows unless told otherwise
 * (one queue: the column version would not overlap the factorization, and its GEMMs are
 * narrower) */
static void plan_columns(bsofi *w)
{
    bcl_params prm;
    bcl_tuning_lookup(w->ctx, BCL_ROUTINE_PCYCLIC, w->dbl, w->n, &prm);
    const char *group_env = getenv("BATCHCL_PCYCLIC_RV_GROUP");
    w->rv_group = group_env && *group_env ? atoi(group_env) : RV_GROUP_DEFAULT;
    share_choice rv, qt, cv;
    if (!w->dev_panels) {
        const struct bcl_pcyclic_model_in_use *u = model_for(w);
        w->jF = choose_jF(w, &u->m, prm.pcyclic_cv_columns);
        choose_cv_host(w, &u->m, prm.pcyclic_cv_host_rows, &cv);
        choose_host_shares(w, &u->m, &prm, &rv, &qt);
        describe_plan(w, u);
        append_cv_note(w);
        append_rows_note(w);
        append_gemm_note(w);
        append_qt_note(w);
        append_share_note(w, u, &rv, &qt, &cv);
        return;
    }
    const int forced = prm.pcyclic_cv_columns;
    w->jF = forced <= 0 || w->p < 2 ? 0 : forced < w->p - 1 ? forced : w->p - 1;
    /* the model only where a share is left to it (method 3 has no other use for it) */
    static const struct bcl_pcyclic_model_in_use no_model = {0, 0, {0, 0, 0, 0, 0, 0, 0},
                                                             "not asked for"};
    const struct bcl_pcyclic_model_in_use *u =
        w->p > 1 && (prm.pcyclic_rv_host_columns == 0 || prm.pcyclic_qt_host_rows == 0)
            ? model_for(w)
            : &no_model;
    choose_host_shares(w, &u->m, &prm, &rv, &qt);
    char apply_ct[80] = "";
    if (w->chain_cpg)
        snprintf(apply_ct, sizeof apply_ct, " (a group: %d of the panel's columns)", w->chain_cpg);
    else if (w->k_apply_rows)
        snprintf(apply_ct, sizeof apply_ct, " (a group: %d of C's columns, W of %d entries%s)",
                 w->apply_ct, w->apply_ct * w->nb, w->apply_keep ? ", rows kept" : "");
    snprintf(w->ctx->last_kernel, sizeof w->ctx->last_kernel,
             "pcyclic method 3 (BSOFI on the device: blocked Householder panels of %d columns in "
             "kernels, %d work-items a panel, %s%s, %s%s%s; Q^(k) %s; GEMMs on the device); R_kk^-1 by "
             "back substitution on diagonal blocks of %d and GEMMs above them; j_F = %d of %d "
             "block columns inverted column-wise%s",
             w->nb, w->panel_wg,
             !w->panel_rows ? "in global memory"
             : w->panel_rpl ? (w->panel_shuffle ? "in registers by rows, warp shuffles"
                                                : "in registers by rows, sums in local memory")
             : w->panel_shuffle ? "in registers, warp shuffles"
                                : "in registers, warp sums in local memory",
             w->panel_rows && w->panel_x_local ? ", reflector read from local memory" : "",
             w->chain_cpg ? "blocks and applies in one launch (qr_chain)"
             : w->k_apply_rows ? "applied in one launch"
                               : "applied in row ranges",
             apply_ct,
             w->v_in_panel ? ", V from the panel" : "",
             w->q_gemm ? (w->overlap ? "= I - V T V^T by GEMMs on a second queue beside the "
                                       "chain of panels, each panel's launch applying Q^(k)^T to "
                                       "[0; A_k+1] too"
                                     : "= I - V T V^T by GEMMs")
                       : "from the block reflectors (qr_apply)",
             w->tri_leaf > 0 && w->tri_leaf < w->n ? w->tri_leaf : w->n, w->jF, w->p,
             last_column_from_u(w) ? "" : ", the rest by rows");
    append_chain_note(w);
    append_cv_note(w);
    append_rows_note(w);
    append_gemm_note(w);
    append_qt_note(w);
    append_share_note(w, u, &rv, &qt, NULL);
}

static void to_double(const void *src, int dbl, size_t count, double *dst)
{
    if (dbl)
        memcpy(dst, src, count * sizeof(double));
    else
        for (size_t i = 0; i < count; ++i)
            dst[i] = ((const float *)src)[i];
}

static void from_double(const double *src, int dbl, size_t count, void *dst)
{
    if (dbl)
        memcpy(dst, src, count * sizeof(double));
    else
        for (size_t i = 0; i < count; ++i)
            ((float *)dst)[i] = (float)src[i];
}

/* BATCHCL_TIMELINE: the device panels' kernels and the queues' steps recorded for
 * bcl_last_step_times (bsofi_release stops the recording) */
static void timeline_start(bcl_context *ctx, int dev_panels)
{
    const char *timeline = getenv("BATCHCL_TIMELINE");
    bcl_steps_reset(ctx, dev_panels && timeline && *timeline);
}

/* Host pointers: problem after problem; H^-1 read back while the host factorizes the next. */
static bcl_status bsofi_host(bcl_context *ctx, const char *fn, int dbl, int n, int p, size_t batch,
                             int dev_panels, const void *A, const void *B, void *Hinv, int *info)
{
    bsofi w;
    bcl_status s = bsofi_init(ctx, fn, dbl, n, p, dev_panels, &w);
    const size_t nn = w.nn, NN = (size_t)w.N * w.N, es = w.es;
    cl_mem dH = NULL, dInfo = NULL;
    double *Ah = malloc(sizeof *Ah * (size_t)p * nn), *Bh = malloc(sizeof *Bh * (size_t)p * nn);
    int *info_tmp = malloc(sizeof *info_tmp * batch);
    if (s == BCL_SUCCESS && (!Ah || !Bh || !info_tmp))
        s = bcl_fail(ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory", fn);
    cl_int err = CL_SUCCESS;
    if (s == BCL_SUCCESS) {
        dH = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, NN * es, NULL, &err);
        if (err == CL_SUCCESS && dev_panels)
            w.dA = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, (size_t)p * nn * es, NULL, &err);
        if (err == CL_SUCCESS && dev_panels)
            w.dB = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, (size_t)p * nn * es, NULL, &err);
        if (err == CL_SUCCESS && dev_panels)
            dInfo = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, batch * sizeof(cl_int), NULL, &err);
        if (err != CL_SUCCESS)
            s = bcl_cl_fail(ctx, err, "allocating H^-1 and the blocks on the device");
    }
    w.batch = batch;
    if (s == BCL_SUCCESS)
        plan_columns(&w);
    timeline_start(ctx, dev_panels);
    const double t_start = seconds_now();
    /* a problem's inverse is read into Hinv only once all its device work is enqueued, so a
     * failure in the first problem leaves the caller's arrays untouched */
    for (size_t k = 0; k < batch && s == BCL_SUCCESS; ++k) {
        if (dev_panels) { /* the blocks as they are (the device's precision), then all on the device */
            err = clEnqueueWriteBuffer(w.q, w.dA, CL_FALSE, 0, p * nn * es,
                                       (const char *)A + k * p * nn * es, 0, NULL, NULL);
            if (err == CL_SUCCESS)
                err = clEnqueueWriteBuffer(w.q, w.dB, CL_FALSE, 0, p * nn * es,
                                           (const char *)B + k * p * nn * es, 0, NULL, NULL);
            s = err == CL_SUCCESS ? bsofi_one_dev(&w, w.dA, 0, w.dB, 0, dH, 0, dInfo, k)
                                  : bcl_cl_fail(ctx, err, "uploading the blocks of H");
        } else {
            to_double((const char *)A + k * p * nn * es, dbl, (size_t)p * nn, Ah);
            to_double((const char *)B + k * p * nn * es, dbl, (size_t)p * nn, Bh);
            s = bsofi_one(&w, Ah, Bh, dH, 0, &info_tmp[k]);
        }
        if (s == BCL_SUCCESS) {
            err = clEnqueueReadBuffer(w.q, dH, CL_FALSE, 0, NN * es, (char *)Hinv + k * NN * es, 0,
                                      NULL, NULL);
            if (err != CL_SUCCESS)
                s = bcl_cl_fail(ctx, err, "reading H^-1 back");
        }
    }
    if (s == BCL_SUCCESS && dev_panels) {
        err = clEnqueueReadBuffer(w.q, dInfo, CL_TRUE, 0, batch * sizeof(cl_int), info_tmp, 0, NULL,
                                  NULL);
        if (err != CL_SUCCESS)
            s = bcl_cl_fail(ctx, err, "reading info back");
    }
    if (w.q) {
        err = clFinish(w.q);
        if (s == BCL_SUCCESS && err != CL_SUCCESS)
            s = bcl_cl_fail(ctx, err, "clFinish");
    }
    if (s == BCL_SUCCESS)
        s = finish_side_queues(&w);
    if (s == BCL_SUCCESS) {
        memcpy(info, info_tmp, sizeof *info * batch);
        describe_time(&w, seconds_now() - t_start, batch);
    }
    if (dH)
        clReleaseMemObject(dH);
    if (dInfo)
        clReleaseMemObject(dInfo);
    bsofi_release(&w);
    free(Ah);
    free(Bh);
    free(info_tmp);
    return s == BCL_SUCCESS ? summarize_info(ctx, fn, info, batch) : s;
}

/* Device buffers: H^-1 stays on the device; method 1 reads the blocks back for its host panels,
 * method 3 (dev_panels) reads nothing back. */
static bcl_status bsofi_device(bcl_context *ctx, const char *fn, int dbl, int n, int p,
                               size_t batch, int dev_panels, cl_mem A, size_t offA, cl_mem B,
                               size_t offB,
                               cl_mem H, size_t offH, cl_mem info, size_t offInfo, cl_uint num_wait,
                               const cl_event *wait, cl_event *event)
{
    bsofi w;
    bcl_status s = bsofi_init(ctx, fn, dbl, n, p, dev_panels, &w);
    const size_t nn = w.nn, NN = (size_t)w.N * w.N, es = w.es, blocks = (size_t)p * nn;
    const size_t host_blocks = dev_panels ? 1 : blocks; /* method 3 reads nothing back */
    double *Ah = malloc(sizeof *Ah * host_blocks), *Bh = malloc(sizeof *Bh * host_blocks);
    void *raw = malloc(host_blocks * es);
    int *info_h = malloc(sizeof *info_h * batch);
    if (s == BCL_SUCCESS && (!Ah || !Bh || !raw || !info_h))
        s = bcl_fail(ctx, BCL_OUT_OF_MEMORY, "%s: out of host memory", fn);
    cl_int err = CL_SUCCESS;
    if (s == BCL_SUCCESS && num_wait) {
        err = clWaitForEvents(num_wait, wait);
        if (err != CL_SUCCESS)
            s = bcl_cl_fail(ctx, err, "waiting for the wait list");
    }
    w.batch = batch;
    if (s == BCL_SUCCESS)
        plan_columns(&w);
    timeline_start(ctx, dev_panels);
    const double t_start = seconds_now();
    for (size_t k = 0; k < batch && s == BCL_SUCCESS && dev_panels; ++k)
        s = bsofi_one_dev(&w, A, offA + k * blocks, B, offB + k * blocks, H, offH + k * NN, info,
                          offInfo + k);
    for (size_t k = 0; k < batch && s == BCL_SUCCESS && !dev_panels; ++k) {
        err = clEnqueueReadBuffer(w.q, A, CL_TRUE, (offA + k * blocks) * es, blocks * es, raw, 0,
                                  NULL, NULL);
        if (err == CL_SUCCESS)
            to_double(raw, dbl, blocks, Ah);
        if (err == CL_SUCCESS)
            err = clEnqueueReadBuffer(w.q, B, CL_TRUE, (offB + k * blocks) * es, blocks * es, raw, 0,
                                      NULL, NULL);
        if (err != CL_SUCCESS) {
            s = bcl_cl_fail(ctx, err, "reading the blocks of H");
            break;
        }
        to_double(raw, dbl, blocks, Bh);
        s = bsofi_one(&w, Ah, Bh, H, offH + k * NN, &info_h[k]);
    }
    if (s == BCL_SUCCESS)
        s = finish_side_queues(&w);
    if (s == BCL_SUCCESS) {
        if (!dev_panels)
            err = clEnqueueWriteBuffer(w.q, info, CL_TRUE, offInfo * sizeof(int),
                                       batch * sizeof(int), info_h, 0, NULL, NULL);
        if (err == CL_SUCCESS && event)
            err = clEnqueueMarkerWithWaitList(w.q, 0, NULL, event);
        if (err != CL_SUCCESS)
            s = bcl_cl_fail(ctx, err, "writing info");
        else
            describe_time(&w, seconds_now() - t_start, batch);
    }
    bsofi_release(&w);
    free(Ah);
    free(Bh);
    free(raw);
    free(info_h);
    return s;
}

/* bcl_pcyclic_calibrate's work: method 1's workspace (for p = 3, what the host step needs) */
static bcl_status calibrate(bcl_context *ctx, const char *fn, int dbl, int n,
                            bcl_pcyclic_model *out)
{
    bsofi w;
    bcl_status s = bsofi_init(ctx, fn, dbl, n, 3, 0, &w);
    bcl_pcyclic_model m;
    if (s == BCL_SUCCESS)
        s = measure_model(&w, &m);
    bsofi_release(&w);
    if (s == BCL_SUCCESS) {
        /* what the caller measured is what this context's calls use from now on (batchcl-tune
         * times its candidates with the model it stores) */
        const struct bcl_pcyclic_model_in_use u = {n, dbl, m, "calibrated"};
        keep_model(ctx, &u);
        *out = m;
    }
    return s;
}

#endif /* BCL_HAVE_CLBLAST */

void bcl_pcyclic_release(bcl_context *ctx)
{
    bcl_release_buffers(ctx->pcyclic_ws, ctx->pcyclic_ws_bytes, BCL_PCYCLIC_WS_SLOTS);
}

bcl_status bcl_pcyclic_calibrate(bcl_context *ctx, int dbl, int n, bcl_pcyclic_model *out)
{
    const char *fn = "bcl_pcyclic_calibrate";
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    if (dbl != 0 && dbl != 1)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 2 (dbl = %d) must be 0 or 1", fn,
                        dbl);
    if (n < 1)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 3 (n = %d) must be >= 1", fn, n);
    if (!out)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument 4 (out) is NULL", fn);
    if (dbl && !ctx->dev.has_fp64)
        return bcl_no_fp64(ctx, fn);
#ifdef BCL_HAVE_CLBLAST
    bcl_status s = check_sizes(ctx, fn, n, MODEL_J2 + 1, 1, dbl);
    return s == BCL_SUCCESS ? calibrate(ctx, fn, dbl, n, out) : s;
#else
    return bcl_fail(ctx, BCL_NOT_IMPLEMENTED,
                    "%s: the model is method 1's, and this build of batchcl was configured "
                    "without clBLAST or LAPACKE/OpenBLAS",
                    fn);
#endif
}

/* ---- entry points ---- */

static bcl_status pcyclic_inv(bcl_context *ctx, const char *fn, int dbl, int n, int p,
                              size_t batch, const void *A, const void *B, void *Hinv, int *info)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    bcl_status s = check_sizes(ctx, fn, n, p, batch, dbl);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || p == 0 || batch == 0)
        return BCL_SUCCESS;
    if (!A || !B || !Hinv || !info)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument %d (%s) is NULL", fn,
                        !A ? 5 : !B ? 6 : !Hinv ? 7 : 8,
                        !A ? "A" : !B ? "B" : !Hinv ? "Hinv" : "info");
    const size_t es = dbl ? sizeof(double) : sizeof(float), nn = (size_t)n * n,
                 N = (size_t)n * p;
    const size_t in_len = batch * p * nn * es, h_len = batch * N * N * es,
                 i_len = batch * sizeof(int);
    if (bcl_overlaps(Hinv, h_len, A, in_len) || bcl_overlaps(Hinv, h_len, B, in_len))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: output Hinv overlaps an input array", fn);
    if (bcl_overlaps(info, i_len, A, in_len) || bcl_overlaps(info, i_len, B, in_len) ||
        bcl_overlaps(info, i_len, Hinv, h_len))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: output info overlaps another array", fn);
    int method = 0;
    s = choose_method(ctx, fn, n, p, batch, dbl, &method);
    if (s != BCL_SUCCESS)
        return s;
    if (method == 1 || method == 3) {
#ifdef BCL_HAVE_CLBLAST
        return bsofi_host(ctx, fn, dbl, n, p, batch, method == 3, A, B, Hinv, info);
#endif
    }
    small_plan plan;
    s = small_make_plan(ctx, dbl, n, p, &plan);
    if (s != BCL_SUCCESS)
        return s;
    bcl_params prm;
    bcl_tuning_lookup(ctx, BCL_ROUTINE_PCYCLIC, dbl, n, &prm);
    small_job sj = {&plan, dbl};
    bcl_job job;
    memset(&job, 0, sizeof job);
    job.batch = batch;
    job.chunk = prm.chunk_problems;
    /* an inverse is large (N^2 per problem): the default chunk of 64 MB would launch a handful of
     * work-groups at a time on a GPU; ask for a few per compute unit (memory still caps it) */
    if (!job.chunk && !ctx->zero_copy)
        job.chunk = (size_t)ctx->dev.compute_units * 4;
    job.queues = prm.queues;
    job.enqueue = small_host_enqueue;
    job.user = &sj;
    job.in[job.n_in++] = (bcl_stream_in){A, p * nn * es};
    job.in[job.n_in++] = (bcl_stream_in){B, p * nn * es};
    job.out[job.n_out++] = (bcl_stream_out){Hinv, N * N * es, -1};
    job.out[job.n_out++] = (bcl_stream_out){info, sizeof(int), -1};
    s = bcl_pipeline_run(ctx, &job);
    return s == BCL_SUCCESS ? summarize_info(ctx, fn, info, batch) : s;
}

bcl_status bcl_spcyclic_inv(bcl_context *ctx, int n, int p, size_t batch, const float *A,
                            const float *B, float *Hinv, int *info)
{
    return pcyclic_inv(ctx, "bcl_spcyclic_inv", 0, n, p, batch, A, B, Hinv, info);
}

bcl_status bcl_dpcyclic_inv(bcl_context *ctx, int n, int p, size_t batch, const double *A,
                            const double *B, double *Hinv, int *info)
{
    return pcyclic_inv(ctx, "bcl_dpcyclic_inv", 1, n, p, batch, A, B, Hinv, info);
}

static bcl_status pcyclic_inv_cl(bcl_context *ctx, const char *fn, int dbl, int n, int p,
                                 size_t batch, cl_mem A, size_t offA, cl_mem B, size_t offB,
                                 cl_mem H, size_t offH, cl_mem info, size_t offInfo,
                                 cl_uint num_wait, const cl_event *wait, cl_event *event)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "%s: argument 1 (ctx) is NULL", fn);
    bcl_status s = check_sizes(ctx, fn, n, p, batch, dbl);
    if (s == BCL_SUCCESS && (num_wait > 0) != (wait != NULL))
        s = bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                     "%s: num_wait = %u does not match the wait list pointer", fn, num_wait);
    if (s != BCL_SUCCESS)
        return s;
    if (n == 0 || p == 0 || batch == 0)
        return bcl_empty_call(ctx, num_wait, wait, event);
    const size_t es = dbl ? sizeof(double) : sizeof(float), nn = (size_t)n * n,
                 N = (size_t)n * p;
    s = bcl_check_buffer(ctx, fn, 5, "A", A, offA, batch * p * nn, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 7, "B", B, offB, batch * p * nn, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 9, "Hinv", H, offH, batch * N * N, es);
    if (s == BCL_SUCCESS)
        s = bcl_check_buffer(ctx, fn, 11, "info", info, offInfo, batch, sizeof(int));
    if (s == BCL_SUCCESS && (H == A || H == B || info == H))
        s = bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: Hinv must be a buffer of its own", fn);
    int method = 0;
    if (s == BCL_SUCCESS)
        s = choose_method(ctx, fn, n, p, batch, dbl, &method);
    if (s != BCL_SUCCESS)
        return s;
    if (method == 1 || method == 3) {
#ifdef BCL_HAVE_CLBLAST
        return bsofi_device(ctx, fn, dbl, n, p, batch, method == 3, A, offA, B, offB, H, offH,
                            info, offInfo, num_wait, wait, event);
#endif
    }
    small_plan plan;
    s = small_make_plan(ctx, dbl, n, p, &plan);
    if (s != BCL_SUCCESS)
        return s;
    return small_enqueue(ctx, &plan, dbl, ctx->queue[0], batch, A, offA, B, offB, H, offH, info,
                         offInfo, num_wait, wait, event);
}

bcl_status bcl_spcyclic_inv_cl(bcl_context *ctx, int n, int p, size_t batch, cl_mem A,
                               size_t offA, cl_mem B, size_t offB, cl_mem Hinv, size_t offHinv,
                               cl_mem info, size_t offInfo, cl_uint num_wait,
                               const cl_event *wait_list, cl_event *event)
{
    return pcyclic_inv_cl(ctx, "bcl_spcyclic_inv_cl", 0, n, p, batch, A, offA, B, offB, Hinv,
                          offHinv, info, offInfo, num_wait, wait_list, event);
}

bcl_status bcl_dpcyclic_inv_cl(bcl_context *ctx, int n, int p, size_t batch, cl_mem A,
                               size_t offA, cl_mem B, size_t offB, cl_mem Hinv, size_t offHinv,
                               cl_mem info, size_t offInfo, cl_uint num_wait,
                               const cl_event *wait_list, cl_event *event)
{
    return pcyclic_inv_cl(ctx, "bcl_dpcyclic_inv_cl", 1, n, p, batch, A, offA, B, offB, Hinv,
                          offHinv, info, offInfo, num_wait, wait_list, event);
}
