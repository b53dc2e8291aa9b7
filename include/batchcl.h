/*
 * batchcl — batched small linear algebra on OpenCL devices (GPUs and CPUs).
 *
 * Conventions (shared by every routine):
 *  - Batches are contiguous column-major problems: matrix k of an n-by-n batch starts at A + k*n*n,
 *    vector block k of right-hand sides at B + k*n*nrhs ("MW" layout). Device-buffer entry points
 *    (suffix _cl) also accept the interleaved layout, where element e of problem k lives at
 *    e*batch + k.
 *  - info[k] (int32, one per problem) follows LAPACK: 0 success, > 0 the 1-based index where the
 *    algorithm failed for problem k. A failed problem never touches the results of the others.
 *  - Every call returns a bcl_status. BCL_NUMERICAL_FAILURE means "the call ran, and info[k] != 0
 *    for at least one k"; all other problems hold valid results. bcl_last_error() explains failures
 *    (which argument, which path was searched, the OpenCL build log).
 *  - Bad arguments (negative sizes, NULL pointers, overlapping outputs) return BCL_INVALID_ARGUMENT
 *    and touch no output. A zero size returns BCL_SUCCESS at once.
 *  - Host-pointer calls run batches of any size: they are split into chunks that fit the device and
 *    copies overlap computation on several queues.
 *  - A bcl_context is not thread-safe: use one context per host thread.
 *
 * Environment: BATCHCL_DEVICE (device choice), BATCHCL_KERNEL_DIR (kernel sources),
 * BATCHCL_CACHE_DIR (program binaries and measured models; "off" disables, default
 * ~/.cache/batchcl), BATCHCL_BINARY_CACHE=on|off (keep program binaries there; default on, off on
 * PoCL's CPU devices, which cache their compiled kernels themselves),
 * BATCHCL_DEVICE_MEMORY_LIMIT (bytes of device memory the library may plan for),
 * BATCHCL_ZERO_COPY=0 (copy through device buffers even on devices sharing host memory),
 * BATCHCL_STAGING=0|1 (stage pageable host memory through pinned buffers; default on discrete GPUs),
 * BATCHCL_TUNING_DIR (directories of tuning files searched first, see bcl_tuning_query),
 * BATCHCL_BUILD_OPTIONS (extra OpenCL build options for every kernel: experiments and tuning),
 * BATCHCL_PCYCLIC_CALIBRATE=1 (measure the p-cyclic performance model again),
 * BATCHCL_PCYCLIC_KEEP=0 (release the p-cyclic workspace after every call, see bcl_dpcyclic_inv),
 * BATCHCL_CLBLAST_FAIL=1 (make every clBLAST call report a failure: tests of that path).
 */
#ifndef BATCHCL_H
#define BATCHCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BCL_VERSION_MAJOR 0
#define BCL_VERSION_MINOR 1
#define BCL_VERSION_PATCH 0

/* "0.1.0" */
const char *bcl_version(void);

typedef struct bcl_context bcl_context;

typedef enum {
    BCL_SUCCESS = 0,
    BCL_INVALID_ARGUMENT,   /* a size, pointer, method or option is not acceptable */
    BCL_UNSUPPORTED_SIZE,   /* n (or m) is beyond what this device can run */
    BCL_OUT_OF_MEMORY,      /* host or device allocation failed */
    BCL_DEVICE_NOT_FOUND,   /* no OpenCL device matches the request */
    BCL_KERNEL_NOT_FOUND,   /* a .cl file was not found in any kernel directory */
    BCL_BUILD_FAILED,       /* the OpenCL compiler rejected a kernel (log in bcl_last_error) */
    BCL_OPENCL_ERROR,       /* an OpenCL call failed (code in bcl_last_error) */
    BCL_NUMERICAL_FAILURE,  /* the call completed but info[k] != 0 for some problem k */
    BCL_NOT_IMPLEMENTED     /* the method exists in the API but not in this build */
} bcl_status;

typedef enum {
    BCL_AUTO = 0,           /* adaptive strategy */
    BCL_LDLT,               /* LDL^T factorization without pivoting: symmetric positive definite A */
    BCL_HOUSEHOLDER_PCR,    /* A = Q T Q^T, then PCR on T */
    BCL_EIGEN               /* truncated eigendecomposition solve */
} bcl_method;

typedef enum {
    BCL_LAYOUT_CONTIGUOUS = 0,  /* element e of problem k at k*size + e (the papers' "MW") */
    BCL_LAYOUT_INTERLEAVED,     /* element e of problem k at e*batch + k ("EW") */
    BCL_LAYOUT_ROWWISE          /* bcl_xgeev_cl only ("RW"): row i of n-by-n matrix k starts at
                                   (i*batch + k)*n and holds its n elements contiguously; arrays
                                   that are not n-by-n (wr, wi) are contiguous */
} bcl_layout;

/* How work-items are mapped onto problems (Abbas-Turki & Graillat 2016, Sect. 3.2). */
typedef enum {
    BCL_MAPPING_AUTO = 0,       /* from the tuning table */
    BCL_MAPPING_SIMD,           /* one work-item per problem */
    BCL_MAPPING_COLLABORATIVE,  /* n work-items per problem, one row each */
    BCL_MAPPING_HYBRID,         /* n* < n work-items per problem, several rows each */
    /* geev (Tokura et al. 2017, Sect. 5), p = work-items per matrix: */
    BCL_MAPPING_SWB,            /* single-subgroup based: p consecutive work-items per matrix,
                                   floor(W/p) matrices per subgroup of width W (queried: 32 on
                                   NVIDIA, 64 on AMD), matrices in local memory */
    BCL_MAPPING_MWB             /* multiple-subgroup based: the p work-items of a matrix lie in p
                                   different subgroups serving W matrices each; matrices in global
                                   memory, element-wise interleaved so that accesses coalesce */
} bcl_mapping;

/*
 * Execution parameters. Every field at 0 means "look it up in the tuning table". Set them with
 * bcl_set_params() to force a variant (tests, benchmarks, tuning); they apply to every later call
 * on the context until bcl_set_params(ctx, NULL).
 */
typedef struct {
    bcl_mapping mapping;
    int work_items_per_problem; /* n* of the hybrid mapping; 0 = table (n/2 on GPUs for n < 40) */
    int problems_per_group;     /* problems per work-group; 0 = table, capped by local memory */
    int specialize;             /* 1: compile for the exact n; -1: for a size bucket; 0: table */
    int simd_interleaved;       /* SIMD local-memory layout: 1 interleaved, -1 per problem, 0 table */
    int problems_per_work_item; /* SIMD: problems per work-item, in vector lanes (1, 2, 4, 8, 16) */
    int unroll;                 /* 1: fully unrolled kernels (GPU style), -1: rolled loops, 0: table */
    int rows_per_work_item;     /* tridiagonal PCR: consecutive rows per work-item (1..32); 0 = table */
    double eigen_threshold;     /* BCL_EIGEN / BCL_AUTO: discard |lambda| < max|lambda| / this; 0 = 1e5 */
    double auto_residual;       /* BCL_AUTO: largest accepted scaled residual of Householder + PCR;
                                 * 0 = 30 */
    size_t chunk_problems;      /* host-pointer calls: problems per chunk; 0 = from device memory */
    int queues;                 /* host-pointer calls: queues used for overlap (1..4); 0 = table */
    /* geev: `mapping` (BCL_MAPPING_SWB or BCL_MAPPING_MWB) and `work_items_per_problem` (p)
     * choose the Hessenberg step; these two choose the QR step (and the eigenvector step) */
    bcl_mapping qr_mapping;
    int qr_work_items;
    int hess_layout;            /* geev: 1 + bcl_layout to rearrange A into before an SWB Hessenberg
                                   step (the paper's MW -> RW); 0 = read A as it is (MWB steps
                                   always work on an element-wise copy) */
    int qr_sweeps_max;          /* geev: Francis sweeps allowed per active block before the matrix
                                   is declared unconverged (info > 0); 0 = LAPACK's 30*max(10, n) */
    int qr_bulges;              /* geev: bulges a Francis sweep chases at once, 1 or 2 (two double
                                   sweeps with the same shifts in one pass, each bulge on
                                   qr_work_items / 2 work-items: an SWB QR step with an even
                                   qr_work_items); 0 = table */
    /* block p-cyclic inversion (bcl_xpcyclic_inv) */
    int pcyclic_method;         /* 1: BSOFI, panels on the host (LAPACK), GEMMs on the device
                                 * (clBLAST); 2: batched local-memory kernels (n <= 32, p <= 64);
                                 * 3: as 1 with the panels on the device (QR kernels);
                                 * 0: table (2 where it fits and batch > 1, else 3 on a GPU, 1
                                 * on other devices) */
    int pcyclic_cv_columns;     /* methods 1 and 3: j_F, the leading block columns of R^-1
                                 * inverted column-wise (BSTRI_CV) while the panels are
                                 * factorized; the rest by rows (BSTRI_RV). 0: method 1's
                                 * performance model, method 3 none; -1: none (row version
                                 * only); >= p - 1: every column but the last, which then comes
                                 * from the others (no row version) */
    int pcyclic_rv_host_columns; /* methods 1 and 3: block columns of R^-1 from j_F on that the
                                  * host inverts by rows (BLAS) while the device takes the others
                                  * (the host's share of BSTRI_RV, the paper's l_i); 0: the
                                  * performance model's choice, -1: none, more: that many (at
                                  * most those left before the last column) */
    int pcyclic_qt_host_rows;    /* methods 1 and 3: leading block rows of H^-1 = R^-1 Q^T the
                                  * host computes (BLAS) while the device computes the others (the
                                  * host's share of BSOI, the paper's l_k); 0: model, -1: none,
                                  * more: that many (at most p - 1) */
    int pcyclic_cv_host_rows;    /* method 1: leading block rows of the column version's block
                                  * columns (BSTRI_CV, beside the host's panels) the host computes
                                  * (BLAS) while the device computes the rows below (the paper's
                                  * l_j); 0: model, -1: none, more: that many (at most j_F - 1) */
} bcl_params;

typedef struct {
    char name[256];
    char vendor[256];
    char driver_version[128];
    char opencl_version[128];
    int is_gpu;                 /* 1 for CL_DEVICE_TYPE_GPU */
    int has_fp64;
    int host_unified_memory;    /* device shares memory with the host (CPUs, integrated GPUs) */
    cl_uint compute_units;
    size_t local_mem_bytes;
    size_t max_work_group_size;
    size_t work_group_multiple; /* SIMD width of the device (warp/wavefront), or its preference */
    cl_uint vector_width_float; /* preferred vector widths (CL_DEVICE_PREFERRED_VECTOR_WIDTH_*) */
    cl_uint vector_width_double;
    cl_ulong global_mem_bytes;
    cl_ulong max_alloc_bytes;
    char architecture[128];     /* for the tuning files' fallback: NVIDIA "sm_90" (compute
                                 * capability), AMD the gfx target, PoCL its LLVM target; empty
                                 * where the driver does not tell */
} bcl_device_info;

/* ---- context -------------------------------------------------------------------------------- */

/*
 * Create a context on one device. device_spec (or, when NULL, the environment variable
 * BATCHCL_DEVICE) is one of: "gpu", "cpu", "P:D" (platform and device index), or a substring of
 * the device name (case-insensitive). Default: the first GPU, else the first CPU device.
 * On failure *ctx is NULL and bcl_last_error(NULL) explains why.
 */
bcl_status bcl_create(bcl_context **ctx, const char *device_spec);

/* Adopt an application's queue: routines' _cl entry points enqueue on it. The queue is retained. */
bcl_status bcl_create_from_queue(bcl_context **ctx, cl_command_queue queue);

void bcl_destroy(bcl_context *ctx);

const char *bcl_status_string(bcl_status s);

/* Explanation of the last failed call on ctx (or of the last failed bcl_create when ctx is NULL). */
const char *bcl_last_error(const bcl_context *ctx);

bcl_status bcl_device_info_get(const bcl_context *ctx, bcl_device_info *info);

/* The OpenCL objects behind the context, for device-buffer calls and interop (clBLAST, ...). */
cl_context bcl_cl_context(const bcl_context *ctx);
cl_device_id bcl_cl_device(const bcl_context *ctx);
cl_command_queue bcl_cl_queue(const bcl_context *ctx);

/* The kernel and build options of the last launch on ctx, and its group shape (for tests,
 * benchmarks and tuning: which variant ran). */
const char *bcl_last_kernel(const bcl_context *ctx);

/* Force execution parameters (see bcl_params); NULL restores the tuning table. */
bcl_status bcl_set_params(bcl_context *ctx, const bcl_params *params);

/* ---- tuning database (tuning/db/<device>.json, written by batchcl-tune) ------------------------------
 *
 * The parameters a routine runs with come from, in this order: bcl_set_params (forced fields);
 * a tuning file for this exact device (vendor and name) in $BATCHCL_TUNING_DIR (':'-separated),
 * then in the installed tuning directory, then in the source tree's tuning/db; a file for the
 * same architecture (bcl_device_info.architecture); one for the same vendor and device type; one
 * for the same device type; the built-in heuristic. Within each of these levels an entry for the
 * exact size in any of its files wins over the nearest tuned size (in the level's first file that
 * tunes the routine); a lower level is consulted only when no file of a higher one tunes the
 * routine and precision. A file's values must pass bcl_set_params' checks. Files are read when the context is created; a malformed file,
 * or one that does not follow the format, is reported once on stderr (and in bcl_tuning_report)
 * and skipped.
 */
typedef enum {
    BCL_TUNING_EXACT = 1,     /* a file for this device */
    BCL_TUNING_ARCHITECTURE,  /* a file for another device of the same architecture */
    BCL_TUNING_VENDOR,        /* ... of the same vendor and device type */
    BCL_TUNING_DEVICE_TYPE,   /* ... of the same device type (GPU, CPU) */
    BCL_TUNING_HEURISTIC      /* no file applies: the built-in heuristic */
} bcl_tuning_level;

typedef struct {
    bcl_tuning_level level;
    char file[1024];           /* the tuning file; empty for the heuristic */
    int tuned_n;               /* the size of the entry used: n, or the nearest tuned size */
    double throughput;         /* problems/s the tuner measured with the entry (0: unknown) */
    double default_throughput; /* problems/s it measured with the built-in heuristic's choice */
    bcl_params params;         /* what the routine receives (forced fields included); fields
                                * left 0 / BCL_MAPPING_AUTO are decided by the routine */
} bcl_tuning_choice;

/*
 * The tuning entry in force for `routine` in precision dbl (0 float, 1 double) at size n:
 * "ldlt" (bcl_xsysv with BCL_LDLT, bcl_xsytrf_ldlt), "tridiag" (gtsv, ptsv; n is m),
 * "sytrd" (the Householder step of sytrd, syevd and the Householder / eigen methods of sysv),
 * "geev", "pcyclic" (n is the block size).
 */
bcl_status bcl_tuning_query(const bcl_context *ctx, const char *routine, int dbl, int n,
                            bcl_tuning_choice *out);

/* The names of the tuned routines: bcl_tuning_routine(i) for i = 0, 1, ... until NULL. */
const char *bcl_tuning_routine(int i);

/*
 * Replace the tuning search path by a ':'-separated list of directories and read the files again;
 * NULL restores the default ($BATCHCL_TUNING_DIR, the installed directory, the source tree's
 * tuning/db), "" uses no file (the heuristic only).
 */
bcl_status bcl_set_tuning_path(bcl_context *ctx, const char *paths);

/* What reading the tuning files found: one line per file (used, for which level, or skipped and
 * why). Empty when no directory held a file. */
const char *bcl_tuning_report(const bcl_context *ctx);

/*
 * Replace the kernel search path by a ':'-separated list of directories. NULL restores the default
 * order: $BATCHCL_KERNEL_DIR, the installed data directory, the source tree it was built from.
 */
bcl_status bcl_set_kernel_path(bcl_context *ctx, const char *paths);

/*
 * Pinned (page-locked) host memory. Host-pointer calls whose arrays live in such memory transfer at
 * full bus speed without staging. Free with bcl_host_free on the same context.
 */
void *bcl_host_alloc(bcl_context *ctx, size_t bytes);
void bcl_host_free(bcl_context *ctx, void *ptr);

/* ---- symmetric positive definite solve ------------------------------------------------------ */

/*
 * Solve A_k X_k = B_k for every k < batch. A: n*n per problem (only the lower triangle is read),
 * B and X: n*nrhs per problem (X may be B: in place), info: one int per problem.
 * method BCL_LDLT: LDL^T without pivoting, for symmetric positive definite A; info[k] = j > 0 when
 *   the j-th pivot is not positive (A_k not numerically positive definite): then X_k = B_k, as
 *   LAPACK leaves B. n from 1 to 64 with every mapping, larger where local memory allows.
 * method BCL_HOUSEHOLDER_PCR: A = Q T Q^T (Householder), x = Q PCR(T, Q^T b), any symmetric A with
 *   a well-conditioned T; info[k] = i > 0 for a zero pivot of the PCR in row i (then X_k = B_k, within
 *   rounding when X is B).
 * method BCL_EIGEN: A = V diag(lambda) V^T (Householder + divide and conquer), then the truncated
 *   pseudo-inverse x = V diag(1/lambda) V^T b over the eigenvalues with |lambda| >= max |lambda| /
 *   threshold (bcl_params.eigen_threshold, 1e5 by default): info[k] = how many were discarded (this
 *   is the method working, not a failure), or n + 1 when the eigenvalues are not finite (X_k = B_k).
 * method BCL_AUTO: Householder + PCR for all, its scaled residual checked per problem, and the
 *   eigen-solve for the problems above bcl_params.auto_residual (30 by default) only; info as the
 *   method that solved the problem (bcl_ssysvx says which).
 * BCL_NUMERICAL_FAILURE is returned when some problem failed (LDLT, PCR pivots, non-finite
 * eigenvalues), not for discarded eigenvalues.
 */
bcl_status bcl_ssysv(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                     const float *A, const float *B, float *X, int *info);
bcl_status bcl_dsysv(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                     const double *A, const double *B, double *X, int *info);

/*
 * As bcl_ssysv, and per problem: residual[k] = max over right-hand sides of ||A x - b||_inf /
 * (||A||_inf ||x||_inf n eps) in the working precision; path[k] = the method that produced X_k
 * (BCL_LDLT, BCL_HOUSEHOLDER_PCR or BCL_EIGEN). Either may be NULL.
 */
bcl_status bcl_ssysvx(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                      const float *A, const float *B, float *X, int *info, float *residual,
                      int *path);
bcl_status bcl_dsysvx(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                      const double *A, const double *B, double *X, int *info, double *residual,
                      int *path);

/*
 * Factor only: A_k = L_k D_k L_k^T. LD receives n(n+1)/2 values per problem: the rows of L, packed
 * (row i holds L(i,0..i-1) followed by D(i)); this is LAPACK's upper packed storage of L^T with D
 * on the diagonal. info as in bcl_ssysv.
 */
bcl_status bcl_ssytrf_ldlt(bcl_context *ctx, int n, size_t batch, const float *A, float *LD,
                           int *info);
bcl_status bcl_dsytrf_ldlt(bcl_context *ctx, int n, size_t batch, const double *A, double *LD,
                           int *info);

/* Solve with factors from bcl_xsytrf_ldlt (only those with info[k] == 0 are meaningful). */
bcl_status bcl_ssytrs_ldlt(bcl_context *ctx, int n, int nrhs, size_t batch, const float *LD,
                           const float *B, float *X);
bcl_status bcl_dsytrs_ldlt(bcl_context *ctx, int n, int nrhs, size_t batch, const double *LD,
                           const double *B, double *X);

/*
 * Device-buffer twins. Buffers hold the batch already on the device; offsets count elements (ints
 * for info). The work is enqueued on bcl_cl_queue(ctx) after wait_list; *event (may be NULL)
 * receives an event that completes with it. Arguments are checked on the host; info is written on
 * the device, so numerical failures are seen by reading it, not in the return value.
 */
bcl_status bcl_ssysv_cl(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                        bcl_layout layout, cl_mem A, size_t offA, cl_mem B, size_t offB, cl_mem X,
                        size_t offX, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event);
bcl_status bcl_dsysv_cl(bcl_context *ctx, bcl_method method, int n, int nrhs, size_t batch,
                        bcl_layout layout, cl_mem A, size_t offA, cl_mem B, size_t offB, cl_mem X,
                        size_t offX, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event);
bcl_status bcl_ssytrf_ldlt_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                              size_t offA, cl_mem LD, size_t offLD, cl_mem info, size_t offInfo,
                              cl_uint num_wait, const cl_event *wait_list, cl_event *event);
bcl_status bcl_dsytrf_ldlt_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                              size_t offA, cl_mem LD, size_t offLD, cl_mem info, size_t offInfo,
                              cl_uint num_wait, const cl_event *wait_list, cl_event *event);
bcl_status bcl_ssytrs_ldlt_cl(bcl_context *ctx, int n, int nrhs, size_t batch, bcl_layout layout,
                              cl_mem LD, size_t offLD, cl_mem B, size_t offB, cl_mem X, size_t offX,
                              cl_uint num_wait, const cl_event *wait_list, cl_event *event);
bcl_status bcl_dsytrs_ldlt_cl(bcl_context *ctx, int n, int nrhs, size_t batch, bcl_layout layout,
                              cl_mem LD, size_t offLD, cl_mem B, size_t offB, cl_mem X, size_t offX,
                              cl_uint num_wait, const cl_event *wait_list, cl_event *event);

/* ---- block p-cyclic inversion ------------------------------------------------------------- */

/*
 * Explicit inverse of block p-cyclic matrices (Gogolenko, Bai & Scalettar, "Structured orthogonal
 * inversion of block p-cyclic matrices on multicore with GPU accelerators"), for every k < batch:
 *
 *         | A_1                  B_p |
 *         | B_1  A_2                 |
 *     H = |      B_2  A_3            |      N = n*p rows and columns,
 *         |           ...  ...       |
 *         |           B_{p-1}  A_p   |
 *
 * exactly the normalized form (1) of the paper: the blocks enter with the signs the caller gives
 * them (no implied minus). The determinant QMC matrix M = [I .. B_L; -B_1 I; ..; -B_{L-1} I] is
 * A_i = I, B_i = -B_l for i < p and B_p = +B_L. p = 1 means H = A_1 + B_1 (the corner block lies on
 * the diagonal).
 *
 * A: p diagonal blocks A_1..A_p per problem, B: p blocks B_1..B_p per problem (B_p the top-right
 * corner), each n*n column-major, problem k's blocks at A + k*p*n*n (block i at + (i-1)*n*n).
 * Hinv: (n*p)^2 per problem, column-major, problem k at Hinv + k*N*N. info[k] = 0, or j > 0 when
 * the structured orthogonal factorization H = QR found R(j,j) exactly zero or NaN (H singular, as
 * LAPACK's dtrtri index into the N x N triangle R): then Hinv_k is all zeros and the other
 * problems are unaffected (BCL_NUMERICAL_FAILURE).
 *
 * The algorithm (BSOFI): BSOF, Wright's structured orthogonal factorization (QR of 2n x n panels
 * over p - 1 block rows, then of the last n x n block, so every R_ii is triangular); inversion of
 * R by block back substitution (column version while the panels are factorized, row version for
 * the rest); H^-1 = R^-1 Q^T with the 2n x 2n factors Q^(k) formed explicitly so that their
 * application is GEMM. Three methods (bcl_params.pcyclic_method):
 *  - 1 (any n, p): panels on the host with LAPACK, the O(n^3 p^2) products on the device with
 *    clBLAST; problems of a batch one after another, the host factorizing problem k+1 while the
 *    device works on problem k. Needs a build with clBLAST and LAPACKE/OpenBLAS, else
 *    BCL_NOT_IMPLEMENTED; a clBLAST failure returns BCL_OPENCL_ERROR naming the routine and its
 *    status (BATCHCL_CLBLAST_FAIL=1 forces one, for tests).
 *  - 2 (n <= 32, p <= 64): everything on the device, one work-group per problem, the panels in
 *    local memory: for many small matrices in one call. Needs no clBLAST.
 *  - 3 (any n, p; the default on GPUs outside method 2's range): as 1, with the panels on the
 *    device too (blocked Householder QR kernels in the device's precision); the host only
 *    enqueues, so a slow host is no longer the critical path. Needs clBLAST like method 1.
 * The float routine computes the panels in double on the host (method 1) and the products in
 * float. Methods 1 and 3 keep their device workspace (about 11 N n + 20 n^2 elements, 12 N n
 * with method 3) in the context after the call for the next ones, until bcl_destroy
 * (BATCHCL_PCYCLIC_KEEP=0: released after every call); a call that cannot allocate its own
 * releases what earlier calls left first.
 */
bcl_status bcl_spcyclic_inv(bcl_context *ctx, int n, int p, size_t batch, const float *A,
                            const float *B, float *Hinv, int *info);
bcl_status bcl_dpcyclic_inv(bcl_context *ctx, int n, int p, size_t batch, const double *A,
                            const double *B, double *Hinv, int *info);

/*
 * Device-buffer twins: A and B hold batch*p*n*n elements from offA / offB, Hinv batch*N*N from
 * offHinv, info batch ints from offInfo (contiguous layout only). Method 1 reads the blocks back
 * to the host for the panels (2*p*n*n values per problem; the call returns once the device work
 * is enqueued, the event completes with it); methods 2 and 3 run entirely on the device (3 waits
 * for the wait list on the host).
 */
bcl_status bcl_spcyclic_inv_cl(bcl_context *ctx, int n, int p, size_t batch, cl_mem A,
                               size_t offA, cl_mem B, size_t offB, cl_mem Hinv, size_t offHinv,
                               cl_mem info, size_t offInfo, cl_uint num_wait,
                               const cl_event *wait_list, cl_event *event);
bcl_status bcl_dpcyclic_inv_cl(bcl_context *ctx, int n, int p, size_t batch, cl_mem A,
                               size_t offA, cl_mem B, size_t offB, cl_mem Hinv, size_t offHinv,
                               cl_mem info, size_t offInfo, cl_uint num_wait,
                               const cl_event *wait_list, cl_event *event);

/* Whether this build has method 1 of bcl_xpcyclic_inv (clBLAST and LAPACK were found). After a
 * call, bcl_last_kernel(ctx) says which method ran, j_F and the performance model's constants. */
int bcl_pcyclic_has_clblast(void);

/*
 * The constants of the performance model (the paper's model of the merged BSOFTRI and of BSOI,
 * reduced to what sets j_F in method 1 and the host's shares in methods 1 and 3) for blocks of
 * order n in one precision.
 */
typedef struct {
    double host_step_s;     /* one panel step of the factorization on the host (LAPACK) */
    double dev_gemm_flops;  /* the device's clBLAST GEMM rate on the column version's shapes
                             * (j*n x n x n), in FLOP/s */
    double dev_gemm_call_s; /* the fixed cost of one such GEMM call, in seconds */
    /* the host's shares of the row version and of the Q^T application (0: not measured, the
     * host then takes no share unless told to) */
    double host_gemm_flops; /* the host's DGEMM rate (BLAS, all its threads) on j*n x n x n */
    double host_gemm_call_s; /* the fixed cost of one such host DGEMM call, in seconds */
    double link_bytes_s;    /* host <-> device transfer rate, bytes per second */
    double link_call_s;     /* the fixed cost of one transfer, in seconds */
} bcl_pcyclic_model;

/*
 * Measure them on this context's host and device for blocks of order n (precision dbl: 0 float,
 * 1 double): the fastest of three host panel steps, the medians of five GEMMs of the shapes
 * j*n x n x n for j = 4 and 15 on the device (about 31 n^2 elements of device memory, and the
 * workspace of a p = 3 call, which the context keeps as a call's), the medians of five host
 * DGEMMs of the same shapes, and the medians of five blocking writes and reads of 256 KiB and 16 MiB
 * (a 16 MiB device buffer), whatever p a later call has. batchcl-tune stores them with its pcyclic entries ("model"). A method 1
 * call takes the model for its precision and exactly its n from a tuning file for this device
 * tuned with the same driver and as many compute units, else from the kernel cache directory,
 * else measures it at its first use (and keeps it there); the context keeps it until the tuning
 * files are read again. A successful bcl_pcyclic_calibrate call replaces the context's model
 * for that n and precision: later calls use what it returned. BATCHCL_PCYCLIC_CALIBRATE=1 makes
 * the first use measure instead of reading the file or the cache. The plan (bcl_last_kernel)
 * names the source: "tuning file", "cache", "measured", "calibrated", or "not measured" when the
 * measurement failed (j_F then assumes a 1 GFLOP/s device). Statuses: BCL_INVALID_ARGUMENT
 * (names the argument), BCL_NOT_IMPLEMENTED (dbl = 1 on a device without double precision, or a
 * build without clBLAST), BCL_OPENCL_ERROR (an allocation or a clBLAST call failed),
 * BCL_OUT_OF_MEMORY (host).
 */
bcl_status bcl_pcyclic_calibrate(bcl_context *ctx, int dbl, int n, bcl_pcyclic_model *out);

/* Largest n the LDL^T routines accept on this context's device for the given precision. */
int bcl_ldlt_max_n(const bcl_context *ctx, int double_precision);

/* ---- eigenvalues of non-symmetric matrices --------------------------------------------------- */

/*
 * Eigenvalues wr[k*n + j] + i*wi[k*n + j] of every real n-by-n matrix A_k (column-major at
 * A + k*n*n, not modified), as LAPACK's dgeev: the matrix is scaled into a safe range and balanced
 * (dgebal-style radix-2 scaling, no permutation), reduced to Hessenberg form, and its Schur form
 * computed by implicit double-shift Francis sweeps. Complex conjugate pairs are consecutive, the
 * one with positive imaginary part first; eigenvalues appear in the order of the Schur form's
 * diagonal.
 * VR (n*n per matrix, or NULL for eigenvalues only): right eigenvectors in dgeev's packing:
 * column j is the eigenvector of a real eigenvalue j; for a pair (j, j+1) with wi[j] > 0, columns
 * j and j+1 hold the real and imaginary parts of the eigenvector of wr[j] + i*wi[j] (that of
 * the conjugate is the conjugate). Each vector has unit 2-norm; a complex one has its largest
 * component real.
 * info[k] = 0, or i > 0 when the QR iteration did not converge: eigenvalues i..n-1 (0-based) are
 * valid, the first i are NaN (LAPACK's "i+1:n converged"), and VR_k is NaN; a matrix with a NaN or
 * infinite entry gets info[k] = n and NaN results. n from 1 to 64 on every device (larger up to
 * 256 where memory allows). Returns BCL_NUMERICAL_FAILURE when some info[k] != 0.
 */
bcl_status bcl_sgeev(bcl_context *ctx, int n, size_t batch, const float *A, float *wr, float *wi,
                     float *VR, int *info);
bcl_status bcl_dgeev(bcl_context *ctx, int n, size_t batch, const double *A, double *wr,
                     double *wi, double *VR, int *info);

/*
 * Device-buffer twins: A (n*n per matrix), wr, wi (n), VR (n*n, or NULL), info (one int) in the
 * given layout (contiguous, interleaved, or row-wise for A and VR), offsets in elements. A is not
 * modified; the library uses its own scratch buffers, so calls on one context are serialized on
 * bcl_cl_queue(ctx). The rest as the other _cl entry points.
 */
bcl_status bcl_sgeev_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                        size_t offA, cl_mem wr, size_t offWr, cl_mem wi, size_t offWi, cl_mem VR,
                        size_t offVR, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event);
bcl_status bcl_dgeev_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                        size_t offA, cl_mem wr, size_t offWr, cl_mem wi, size_t offWi, cl_mem VR,
                        size_t offVR, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event);

/*
 * Where the device time of the last call of a routine that records its steps (bcl_xgeev,
 * bcl_xgeev_cl, and the eigen routines: bcl_xsytrd, bcl_xstedc, bcl_xsyevd(_cl), bcl_xsysv(x)(_cl)
 * with BCL_HOUSEHOLDER_PCR, BCL_EIGEN or BCL_AUTO) went: up to `max` (name, seconds) pairs, from
 * OpenCL profiling, each summed over the call's chunks and launches. Names: "transfer in",
 * "transfer out" (host-pointer calls that copy), "rearrange", "hessenberg", "qr", "vectors" (geev);
 * the kernel names "sytrd", "sytrd_apply", "residual", "stedc", "stedc_backtransform",
 * "stedc_solve" (eigen routines; the tridiagonal solve of Householder + PCR is not itemized).
 * Waits for the call's commands to finish. With the environment variable BATCHCL_TIMELINE=FILE it
 * also appends each recorded command to FILE, one line each: the index of the queue that ran it,
 * step name, start and end in microseconds from the call's first command.
 * Returns the number of entries (0 when nothing was recorded).
 */
int bcl_last_step_times(bcl_context *ctx, const char **names, double *seconds, int max);
/* ---- tridiagonal systems ------------------------------------------------------------------- */

/*
 * Solve T_k X_k = B_k for every k < batch, tridiagonal T_k, without pivoting: for diagonally
 * dominant and symmetric positive definite matrices (elimination without pivoting cannot break
 * down on them; on others it may, and reports it). B (m*nrhs per problem) holds the right-hand
 * sides on entry and the solutions on return; the matrix arrays are not modified.
 * info[k] = i > 0: a zero or non-finite pivot met in row i, or a solution that is not finite;
 * B_k is then left as it was (for a solution that overflows at a later right-hand side, the
 * earlier ones hold their solutions).
 * gtsv: dl, d, du hold m values per problem (dl[0] and du[m-1] are ignored, as cuSPARSE's
 * gtsv2StridedBatch takes them). ptsv: symmetric, d holds n values and e n-1 per problem (e may be
 * NULL when n == 1). Mappings: SIMD (CPUs: one system per work-item, in vector lanes, Thomas
 * algorithm); COLLABORATIVE (one row per work-item, parallel cyclic reduction); HYBRID (each
 * work-item eliminates a chunk of consecutive rows, PCR on the chunk boundaries). m from 1 to
 * bcl_gtsv_max_m().
 */
bcl_status bcl_sgtsv(bcl_context *ctx, int m, int nrhs, size_t batch, const float *dl,
                     const float *d, const float *du, float *B, int *info);
bcl_status bcl_dgtsv(bcl_context *ctx, int m, int nrhs, size_t batch, const double *dl,
                     const double *d, const double *du, double *B, int *info);
bcl_status bcl_sptsv(bcl_context *ctx, int n, int nrhs, size_t batch, const float *d,
                     const float *e, float *B, int *info);
bcl_status bcl_dptsv(bcl_context *ctx, int n, int nrhs, size_t batch, const double *d,
                     const double *e, double *B, int *info);

/* Device-buffer twins; with BCL_LAYOUT_INTERLEAVED element i of problem k is at i*batch + k in
 * every array (as cuSPARSE's gtsvInterleavedBatch), right-hand side c at (c*m + i)*batch + k. */
bcl_status bcl_sgtsv_cl(bcl_context *ctx, int m, int nrhs, size_t batch, bcl_layout layout,
                        cl_mem dl, size_t offdl, cl_mem d, size_t offd, cl_mem du, size_t offdu,
                        cl_mem B, size_t offB, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event);
bcl_status bcl_dgtsv_cl(bcl_context *ctx, int m, int nrhs, size_t batch, bcl_layout layout,
                        cl_mem dl, size_t offdl, cl_mem d, size_t offd, cl_mem du, size_t offdu,
                        cl_mem B, size_t offB, cl_mem info, size_t offInfo, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event);
bcl_status bcl_sptsv_cl(bcl_context *ctx, int n, int nrhs, size_t batch, bcl_layout layout,
                        cl_mem d, size_t offd, cl_mem e, size_t offe, cl_mem B, size_t offB,
                        cl_mem info, size_t offInfo, cl_uint num_wait, const cl_event *wait_list,
                        cl_event *event);
bcl_status bcl_dptsv_cl(bcl_context *ctx, int n, int nrhs, size_t batch, bcl_layout layout,
                        cl_mem d, size_t offd, cl_mem e, size_t offe, cl_mem B, size_t offB,
                        cl_mem info, size_t offInfo, cl_uint num_wait, const cl_event *wait_list,
                        cl_event *event);

/* Largest m the tridiagonal routines accept on this context's device. */
int bcl_gtsv_max_m(const bcl_context *ctx, int double_precision);

/* ---- symmetric eigenproblems --------------------------------------------------------------- */

/*
 * Householder tridiagonalization A_k = Q_k T_k Q_k^T (only the lower triangle of A is read):
 * Q (n*n per problem) explicitly, T = tridiag(e, d, e) with d n values and e n-1 per problem.
 */
bcl_status bcl_ssytrd(bcl_context *ctx, int n, size_t batch, const float *A, float *Q, float *d,
                      float *e);
bcl_status bcl_dsytrd(bcl_context *ctx, int n, size_t batch, const double *A, double *Q, double *d,
                      double *e);

/*
 * Symmetric tridiagonal eigenproblems by divide and conquer: on return d holds the eigenvalues in
 * ascending order and Z (n*n per problem) the eigenvectors as columns. info[k] = 1 when the data
 * were not finite.
 */
bcl_status bcl_sstedc(bcl_context *ctx, int n, size_t batch, float *d, const float *e, float *Z,
                      int *info);
bcl_status bcl_dstedc(bcl_context *ctx, int n, size_t batch, double *d, const double *e, double *Z,
                      int *info);

/* A_k = V_k diag(W_k) V_k^T: eigenvalues W ascending (n per problem), eigenvectors V as columns. */
bcl_status bcl_ssyevd(bcl_context *ctx, int n, size_t batch, const float *A, float *W, float *V,
                      int *info);
bcl_status bcl_dsyevd(bcl_context *ctx, int n, size_t batch, const double *A, double *W, double *V,
                      int *info);

/* Device-buffer twins (contiguous or interleaved layout, as the other _cl routines). */
bcl_status bcl_ssyevd_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                         size_t offA, cl_mem W, size_t offW, cl_mem V, size_t offV, cl_mem info,
                         size_t offInfo, cl_uint num_wait, const cl_event *wait_list,
                         cl_event *event);
bcl_status bcl_dsyevd_cl(bcl_context *ctx, int n, size_t batch, bcl_layout layout, cl_mem A,
                         size_t offA, cl_mem W, size_t offW, cl_mem V, size_t offV, cl_mem info,
                         size_t offInfo, cl_uint num_wait, const cl_event *wait_list,
                         cl_event *event);

/* Largest n the eigen routines (sytrd, stedc, syevd, BCL_EIGEN, BCL_AUTO) accept on this device. */
int bcl_syevd_max_n(const bcl_context *ctx, int double_precision);

#ifdef __cplusplus
}
#endif
#endif /* BATCHCL_H */
