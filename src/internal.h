/* Internal interfaces shared by the library's source files (not installed). */
#ifndef BATCHCL_INTERNAL_H
#define BATCHCL_INTERNAL_H

#include "batchcl.h"
#include "gemm_params.h"

#include <stdarg.h>
#include <stdint.h>

#define BCL_MAX_QUEUES 4
#define BCL_MAX_STREAMS 10

/* The smallest power of two >= x (1 for x <= 1). */
static inline int bcl_pow2_at_least(int x)
{
    int p = 1;
    while (p < x)
        p *= 2;
    return p;
}

/* ---- context ---- */

typedef struct bcl_program_entry {
    struct bcl_program_entry *next;
    char *key;           /* file + '\n' + options */
    cl_program program;
} bcl_program_entry;

typedef struct bcl_kernel_entry {
    struct bcl_kernel_entry *next;
    cl_program program;
    char *name;
    cl_kernel kernel;
    size_t max_work_group; /* CL_KERNEL_WORK_GROUP_SIZE */
    cl_ulong static_local; /* CL_KERNEL_LOCAL_MEM_SIZE */
} bcl_kernel_entry;

typedef struct bcl_pinned {
    struct bcl_pinned *next;
    void *ptr;
    size_t bytes;
    cl_mem buffer;
} bcl_pinned;

/* Device and pinned staging buffers of one pipeline slot, kept between calls. */
typedef struct {
    cl_mem dev[3 * BCL_MAX_STREAMS]; /* inputs, outputs, scratch */
    size_t dev_bytes[3 * BCL_MAX_STREAMS];
    cl_mem pin[3 * BCL_MAX_STREAMS];
    void *pin_ptr[3 * BCL_MAX_STREAMS];
    size_t pin_bytes[3 * BCL_MAX_STREAMS];
} bcl_slot;

/* A command whose device time is reported by bcl_last_step_times. */
typedef struct {
    const char *name; /* a string literal */
    cl_event event;
} bcl_step_event;

typedef enum {
    BCL_ROUTINE_LDLT = 0,
    BCL_ROUTINE_GEEV,
    BCL_ROUTINE_TRIDIAG,
    BCL_ROUTINE_SYTRD,
    BCL_ROUTINE_PCYCLIC,
    BCL_ROUTINE_COUNT
} bcl_routine;

/* One tuned entry of a tuning file: the parameters it sets (others 0 / BCL_MAPPING_AUTO). */
typedef struct {
    bcl_routine routine;
    int dbl, n;
    bcl_params params;
    double throughput, default_throughput;
    int has_model; /* pcyclic: the performance model's constants measured by the tuner */
    bcl_pcyclic_model model;
} bcl_tuned_entry;

/* A tuning file that applies to the context's device, in priority order. */
typedef struct bcl_tuning_file {
    struct bcl_tuning_file *next;
    char *path;
    bcl_tuning_level level;
    int same_setup; /* tuned with this driver and as many compute units: its models apply */
    bcl_tuned_entry *entries;
    size_t count;
    /* "clblast": tuned parameters of clBLAST's direct GEMM, per precision (0: s, 1: d) */
    int has_gemm_direct[2];
    size_t gemm_direct[2][GEMM_DIRECT_PARAMS];
} bcl_tuning_file;

#define BCL_SCRATCH_ARRAYS 9
#define BCL_PCYCLIC_WS_SLOTS 17 /* src/pcyclic.c's workspace buffers */

struct bcl_context {
    cl_platform_id platform;
    cl_device_id device;
    cl_context cl;
    cl_command_queue queue[BCL_MAX_QUEUES]; /* queue[0] is the main queue (the adopted one) */
    int nqueues;
    bcl_device_info dev;
    char *error;
    size_t error_cap;
    bcl_params forced;
    char *kernel_path;  /* NULL: default search order */
    char cache_dir[1024]; /* empty: disk cache disabled */
    int binary_cache;     /* program binaries go to cache_dir (not on PoCL, which keeps its own) */
    bcl_program_entry *programs;
    bcl_kernel_entry *kernels;
    bcl_pinned *pinned;
    bcl_slot slot[BCL_MAX_QUEUES];
    int staging;        /* stage pageable host memory through pinned buffers */
    int zero_copy;      /* wrap host arrays instead of copying (devices sharing host memory) */
    char last_kernel[1024];
    /* device-only working arrays of device-buffer calls (host-pointer calls get theirs from the
     * pipeline), kept between calls */
    cl_mem scratch[BCL_SCRATCH_ARRAYS];
    size_t scratch_bytes[BCL_SCRATCH_ARRAYS];
    /* commands of the last call that records its steps */
    bcl_step_event *steps;
    int nsteps, steps_cap;
    int recording; /* the pipeline records its transfers */
    /* tuning files that apply to this device, best first; the search path set by
     * bcl_set_tuning_path (NULL: default), and what reading the files found */
    bcl_tuning_file *tuning;
    char *tuning_path;
    int tuning_path_set;
    char *tuning_report;
    /* block p-cyclic inversion: the performance model's constants measured on this context */
    struct bcl_pcyclic_model_in_use {
        int n, dbl;
        bcl_pcyclic_model m;
        const char *source; /* "tuning file", "cache", "measured", "not measured",
                             * "calibrated" (bcl_pcyclic_calibrate) */
    } pcyclic_model[8];
    int pcyclic_models; /* cleared when the tuning files are read again */
    int pcyclic_no_shuffle; /* the device's compiler refused the panel kernel's inline PTX */
    int gemm_no_tensor;     /* ... and gemm.cl's tensor-core build */
    int gemm_mma_k;         /* gemm.cl's product shape (bcl_gemm_mma_k), 0 until chosen, else K + 1 */
    /* gemm.cl's kernels by tile, precision, tensor-core build and kernel (gemm_tile, its sums) */
    bcl_kernel_entry *gemm_kernels[3][2][2][2];
    /* the p-cyclic inversion's device workspace (src/pcyclic.c), kept between calls */
    cl_mem pcyclic_ws[BCL_PCYCLIC_WS_SLOTS];
    size_t pcyclic_ws_bytes[BCL_PCYCLIC_WS_SLOTS];
    /* clBLAST's direct GEMM parameters handed to clBLAST by this context, per precision: 0 not
     * yet, 1 from a tuning file, -1 clBLAST's own (none for this device, refused, or
     * BATCHCL_CLBLAST_TUNED=0); gemm_note says which and why */
    int gemm_direct_state[2];
    char gemm_note[2][384];
};

/* Record an explanation for ctx (or for the thread when ctx is NULL) and return status. */
bcl_status bcl_fail(const bcl_context *ctx, bcl_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bcl_status bcl_cl_fail(const bcl_context *ctx, cl_int err, const char *what);
const char *bcl_cl_error_name(cl_int err);
void bcl_clear_error(const bcl_context *ctx);

/* ---- programs ---- */

/* Kernel `name` of cl/<file> built with `options` (the precision etc.), cached in memory and on
 * disk. The entry gives the kernel's work-group and local memory limits. */
bcl_status bcl_get_kernel(bcl_context *ctx, const char *file, const char *options,
                          const char *name, bcl_kernel_entry **out);

/* The whole file, NUL-terminated (malloc'd), its length in *len; NULL when it cannot be read. */
char *bcl_read_file(const char *path, size_t *len);

/* mkdir -p: nonzero when the directory exists afterwards. */
int bcl_make_dirs(const char *dir);

/* share/batchcl/<sub> beside the library's directory (an installed tree that was moved). */
void bcl_relative_data_dir(char *out, size_t cap, const char *sub);
/* A search path "$env_name:<beside the library>/share/batchcl/<sub>:installed:source" (malloc'd). */
char *bcl_data_search_path(const char *env_name, const char *sub, const char *installed,
                           const char *source);

/* 64-bit FNV-1a, used for cache keys and checksums. */
uint64_t bcl_hash(const void *data, size_t len, uint64_t seed);
#define BCL_HASH_SEED 0xcbf29ce484222325ULL

/* ---- the library's own GEMM (cl/gemm.cl, src/gemm.c) ---- */

/* Whether gemm.cl's tensor-core build can serve this device in double precision: NVIDIA, sm_80 or
 * later (mma.m8n8k4.f64; mma.m16n8kK.f64 from sm_90), and its compiler has not refused the build
 * before. */
int bcl_gemm_tensor_device(const bcl_context *ctx);
/* The shape of the tensor-core product gemm.cl's builds take (and whose fragment layout the
 * portable build follows): K of mma.m16n8kK (4, 8 or 16; NVIDIA sm_90 or later, and any other
 * device), 0 for mma.m8n8k4 (sm_80-89); BATCHCL_GEMM_MMA=m8n8k4|m16n8k4|m16n8k8|m16n8k16 forces
 * one; chosen once a context. */
int bcl_gemm_mma_k(bcl_context *ctx);
/* its name, e.g. "mma.m16n8k8" */
const char *bcl_gemm_mma_name(int k);

/* C_i := alpha op(A_i) op(B_i) + beta C_i for i < count, column-major, op(X) = X^T where tX; the
 * i-th product's operands start strideX elements after the (i-1)-th's (one shape, one launch).
 * tensor: the tensor-core build (bcl_gemm_tensor_device), else the portable one. fn names the
 * caller in errors. A refused tensor-core build returns BCL_BUILD_FAILED and is remembered. */
typedef struct {
    cl_mem buf;
    size_t off, ld, stride;
} bcl_gemm_operand;
/* A second product added in the same launch: C's first m rows also get alpha op(A) op(B) of
 * depth k (the first product's transposes; its operands' strides unused) */
typedef struct {
    bcl_gemm_operand A, B;
    size_t m, k;
} bcl_gemm_more;
/* more: NULL, or a second product for one product (count = 1), k of both in one range */
bcl_status bcl_gemm_enqueue(bcl_context *ctx, cl_command_queue q, const char *fn, int dbl,
                            int tensor, int ta, int tb, size_t m, size_t n, size_t k, size_t count,
                            double alpha, bcl_gemm_operand A, bcl_gemm_operand B, double beta,
                            bcl_gemm_operand C, cl_mem work, size_t work_elements,
                            const bcl_gemm_more *more);
/* The elements (of the precision) of `work` bcl_gemm_enqueue uses for this shape: products that
 * give the device too few tiles split k into ranges, whose sums a second launch adds into C.
 * 0: none; given less (or no buffer), it does not split. Calls sharing a buffer must not run at
 * once (one in-order queue). */
size_t bcl_gemm_work_elements(const bcl_context *ctx, size_t m, size_t n, size_t k,
                              size_t count);

/* ---- tuning ---- */


/* Parameters for a routine, precision and size: the forced ones where set, else the tuning
 * files' (src/tuning.c), else the built-in heuristic's. */
void bcl_tuning_lookup(const bcl_context *ctx, bcl_routine routine, int dbl, int n,
                       bcl_params *out);

/* The pcyclic performance model stored by the tuner for this precision and exactly this n, in a
 * file for this device tuned with the same driver and as many compute units: 1 with the
 * constants, else 0. Other setups' models are not used: the constants are measurements of a host
 * and a device, not choices. */
int bcl_tuning_pcyclic_model(const bcl_context *ctx, int dbl, int n, bcl_pcyclic_model *out);

/* The geev parameter table without tuning data (also the p of a step whose mapping is forced). */
void bcl_geev_heuristic(const bcl_device_info *dev, int dbl, int n, bcl_params *p);

/* The checks of bcl_set_params: 1 when p is acceptable, else 0 with the reason in why. */
int bcl_params_check(const bcl_params *p, char *why, size_t cap);

/* "ldlt", "geev", ... (the tuning files' names); -1 / NULL when unknown */
const char *bcl_routine_key(bcl_routine r);
int bcl_routine_from_key(const char *key);

/* (Re)read the tuning files of the context's search path; never fails (problems go to the
 * report). */
void bcl_tuning_load(bcl_context *ctx);
void bcl_tuning_release(bcl_context *ctx);

/* ---- transfer pipeline ---- */

/* One array of the batch on the host: bytes per problem and where it is. */
typedef struct {
    const void *host;
    size_t bytes;
} bcl_stream_in;
typedef struct {
    void *host;
    size_t bytes;
    int alias_of; /* index of the input stream at the same address, or -1 */
} bcl_stream_out;

/* Enqueue the computation of problems first .. first+count-1 on q; in[i], out[i] and scratch[i]
 * hold the chunk's arrays from offset 0 (scratch: device-only work arrays). *done receives the
 * event of the last command. */
typedef bcl_status (*bcl_enqueue_fn)(bcl_context *ctx, void *user, cl_command_queue q,
                                     const cl_mem *in, const cl_mem *out, const cl_mem *scratch,
                                     size_t first, size_t count, cl_event *done);

typedef struct {
    int n_in, n_out, n_scratch;
    bcl_stream_in in[BCL_MAX_STREAMS];
    bcl_stream_out out[BCL_MAX_STREAMS];
    size_t scratch[BCL_MAX_STREAMS]; /* bytes per problem of device-only work arrays */
    size_t batch;
    size_t chunk;   /* problems per chunk; 0 = from device memory */
    int queues;     /* 0 = all of the context's */
    bcl_enqueue_fn enqueue;
    void *user;
} bcl_job;

bcl_status bcl_pipeline_run(bcl_context *ctx, const bcl_job *job);

/* Problems in the next chunk of a host-pointer call: the first ones grow from `least`, the last
 * ones shrink to it (least >= chunk: every chunk `chunk`). */
size_t bcl_chunk_count(size_t remaining, size_t chunk, size_t index, size_t least);

/* Problems per chunk for arrays of `bytes_per_problem` in total (the largest single array
 * `largest_per_problem`) on a device with the given memory, `slots` chunks in flight, a
 * requested size `want` (0: device-derived). 0 when not even one problem fits. */
size_t bcl_chunk_problems(size_t batch, size_t bytes_per_problem, size_t largest_per_problem,
                          cl_ulong global_mem, cl_ulong max_alloc, int slots, size_t want);

/* ---- argument checks shared by the routines ---- */

/* Do [a, a+alen) and [b, b+blen) overlap? */
int bcl_overlaps(const void *a, size_t alen, const void *b, size_t blen);

/* A device array must be a buffer of this context holding `elements` (of `es` bytes) from
 * `offset`; argno and name identify it in the message. */
bcl_status bcl_check_buffer(const bcl_context *ctx, const char *fn, int argno, const char *name,
                            cl_mem buf, size_t offset, size_t elements, size_t es);
bcl_status bcl_check_layout(const bcl_context *ctx, const char *fn, bcl_layout layout);
bcl_status bcl_check_wait(const bcl_context *ctx, const char *fn, cl_uint num_wait,
                          const cl_event *wait);
/* An empty device-buffer call: an event that completes after the wait list, if asked for. */
bcl_status bcl_empty_call(bcl_context *ctx, cl_uint num_wait, const cl_event *wait, cl_event *event);
/* BCL_NUMERICAL_FAILURE with a message when some info[k] != 0 (`what` says what failed). */
bcl_status bcl_summarize_info(bcl_context *ctx, const char *fn, const char *what, const int *info,
                              size_t batch);

/* Symmetric tridiagonal solve (ptsv) of `count` systems on device buffers, enqueued on q, no wait
 * list (src/tridiag.c); for the solves built on it. */
bcl_status bcl_ptsv_enqueue(bcl_context *ctx, cl_command_queue q, const char *fn, int dbl, int n,
                            int nrhs, size_t count, bcl_layout layout, size_t stride, cl_mem d,
                            cl_mem e, cl_mem B, size_t offB, cl_mem info, size_t offInfo);

/* sysv with the Householder / eigen methods from host pointers (src/symeig.c); residual and path
 * may be NULL. Arguments are checked by the caller. */
bcl_status bcl_symeig_sysv(bcl_context *ctx, const char *fn, int dbl, bcl_method method, int n,
                           int nrhs, size_t batch, const void *A, const void *B, void *X,
                           int *info, void *residual, int *path);
/* The same on device buffers (checked by the caller). */
bcl_status bcl_symeig_sysv_cl(bcl_context *ctx, const char *fn, int dbl, bcl_method method, int n,
                              int nrhs, size_t batch, bcl_layout layout, cl_mem A, size_t offA,
                              cl_mem B, size_t offB, cl_mem X, size_t offX, cl_mem info,
                              size_t offInfo, cl_uint num_wait, const cl_event *wait,
                              cl_event *event);
/* Scaled residuals of solutions X of symmetric systems from host pointers (src/symeig.c). */
bcl_status bcl_residual_host(bcl_context *ctx, const char *fn, int dbl, int n, int nrhs,
                             size_t batch, const void *A, const void *B, const void *X,
                             void *residual);
/* How many info[k] != 0, and the first such k. */
size_t bcl_count_failures(const int *info, size_t batch, size_t *first);

/* Release cached slot buffers etc. */
void bcl_pipeline_release(bcl_context *ctx);
/* Release the p-cyclic inversion's kept workspace (src/pcyclic.c). */
void bcl_pcyclic_release(bcl_context *ctx);

/* Scratch array `idx` of the device-buffer calls, at least `bytes` long, kept between calls. */
bcl_status bcl_scratch(bcl_context *ctx, int idx, size_t bytes, cl_mem *out);
/* *buf (of *have bytes) grown to at least `bytes`: CL_SUCCESS, or the allocation's error with
 * *buf NULL and *have 0 (no message: the caller decides whether that is an error). A buffer
 * released while commands still use it lives until they finish. */
cl_int bcl_grow_buffer(bcl_context *ctx, cl_mem *buf, size_t *have, size_t bytes);
/* count kept buffers (bcl_grow_buffer's) released, their sizes zeroed */
void bcl_release_buffers(cl_mem *bufs, size_t *bytes, int count);

/* BCL_NOT_IMPLEMENTED for a double-precision call on a device without fp64, naming the device. */
bcl_status bcl_no_fp64(const bcl_context *ctx, const char *fn);

/* ---- step timing (bcl_last_step_times) ---- */

/* Forget the recorded commands and start recording (on = 1) or stop (on = 0). */
void bcl_steps_reset(bcl_context *ctx, int on);
/* Record a command under `name` (a string literal); the event is retained. */
void bcl_step_record(bcl_context *ctx, const char *name, cl_event event);

#endif
