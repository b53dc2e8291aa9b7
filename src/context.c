/* Context: device selection, device limits, errors, pinned host memory. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CL_DEVICE_WARP_SIZE_NV_ 0x4003      /* cl_nv_device_attribute_query */
#define CL_DEVICE_WAVEFRONT_WIDTH_AMD_ 0x4043 /* cl_amd_device_attribute_query */
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV_ 0x4000
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV_ 0x4001

static _Thread_local char thread_error[4096];

const char *bcl_version(void)
{
    return "0.1.0";
}

const char *bcl_status_string(bcl_status s)
{
    switch (s) {
    case BCL_SUCCESS: return "BCL_SUCCESS";
    case BCL_INVALID_ARGUMENT: return "BCL_INVALID_ARGUMENT";
    case BCL_UNSUPPORTED_SIZE: return "BCL_UNSUPPORTED_SIZE";
    case BCL_OUT_OF_MEMORY: return "BCL_OUT_OF_MEMORY";
    case BCL_DEVICE_NOT_FOUND: return "BCL_DEVICE_NOT_FOUND";
    case BCL_KERNEL_NOT_FOUND: return "BCL_KERNEL_NOT_FOUND";
    case BCL_BUILD_FAILED: return "BCL_BUILD_FAILED";
    case BCL_OPENCL_ERROR: return "BCL_OPENCL_ERROR";
    case BCL_NUMERICAL_FAILURE: return "BCL_NUMERICAL_FAILURE";
    case BCL_NOT_IMPLEMENTED: return "BCL_NOT_IMPLEMENTED";
    }
    return "unknown bcl_status";
}

static void store_error(const bcl_context *cctx, const char *msg)
{
    bcl_context *ctx = (bcl_context *)cctx; /* the message buffer is mutable state */
    if (!ctx) {
        snprintf(thread_error, sizeof thread_error, "%s", msg);
        return;
    }
    size_t len = strlen(msg) + 1;
    if (len > ctx->error_cap) {
        char *grown = realloc(ctx->error, len);
        if (!grown)
            return;
        ctx->error = grown;
        ctx->error_cap = len;
    }
    memcpy(ctx->error, msg, len);
}

bcl_status bcl_fail(const bcl_context *ctx, bcl_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list copy;
    va_copy(copy, ap);
    int len = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    char small[512];
    char *buf = len < (int)sizeof small ? small : malloc((size_t)len + 1);
    if (buf) {
        vsnprintf(buf, (size_t)len + 1, fmt, ap);
        store_error(ctx, buf);
        if (buf != small)
            free(buf);
    }
    va_end(ap);
    return status;
}

void bcl_clear_error(const bcl_context *ctx)
{
    store_error(ctx, "");
}

const char *bcl_last_error(const bcl_context *ctx)
{
    if (!ctx)
        return thread_error;
    return ctx->error ? ctx->error : "";
}

const char *bcl_cl_error_name(cl_int err)
{
    switch (err) {
#define E(x) case x: return #x
        E(CL_SUCCESS); E(CL_DEVICE_NOT_FOUND); E(CL_DEVICE_NOT_AVAILABLE);
        E(CL_COMPILER_NOT_AVAILABLE); E(CL_MEM_OBJECT_ALLOCATION_FAILURE);
        E(CL_OUT_OF_RESOURCES); E(CL_OUT_OF_HOST_MEMORY); E(CL_PROFILING_INFO_NOT_AVAILABLE);
        E(CL_MEM_COPY_OVERLAP); E(CL_BUILD_PROGRAM_FAILURE); E(CL_MAP_FAILURE);
        E(CL_MISALIGNED_SUB_BUFFER_OFFSET); E(CL_INVALID_VALUE); E(CL_INVALID_DEVICE_TYPE);
        E(CL_INVALID_PLATFORM); E(CL_INVALID_DEVICE); E(CL_INVALID_CONTEXT);
        E(CL_INVALID_QUEUE_PROPERTIES); E(CL_INVALID_COMMAND_QUEUE); E(CL_INVALID_HOST_PTR);
        E(CL_INVALID_MEM_OBJECT); E(CL_INVALID_BINARY); E(CL_INVALID_BUILD_OPTIONS);
        E(CL_INVALID_PROGRAM); E(CL_INVALID_PROGRAM_EXECUTABLE); E(CL_INVALID_KERNEL_NAME);
        E(CL_INVALID_KERNEL); E(CL_INVALID_ARG_INDEX); E(CL_INVALID_ARG_VALUE);
        E(CL_INVALID_ARG_SIZE); E(CL_INVALID_KERNEL_ARGS); E(CL_INVALID_WORK_DIMENSION);
        E(CL_INVALID_WORK_GROUP_SIZE); E(CL_INVALID_WORK_ITEM_SIZE); E(CL_INVALID_GLOBAL_OFFSET);
        E(CL_INVALID_EVENT_WAIT_LIST); E(CL_INVALID_EVENT); E(CL_INVALID_OPERATION);
        E(CL_INVALID_BUFFER_SIZE); E(CL_INVALID_GLOBAL_WORK_SIZE);
        E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
#undef E
    }
    return "unknown OpenCL error";
}

bcl_status bcl_cl_fail(const bcl_context *ctx, cl_int err, const char *what)
{
    bcl_status s = (err == CL_OUT_OF_HOST_MEMORY || err == CL_MEM_OBJECT_ALLOCATION_FAILURE)
                       ? BCL_OUT_OF_MEMORY
                       : BCL_OPENCL_ERROR;
    return bcl_fail(ctx, s, "%s failed: %s (%d)", what, bcl_cl_error_name(err), (int)err);
}

/* ---- device selection ---- */

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; ++hay) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            ++i;
        if (i == n)
            return 1;
    }
    return n == 0;
}

typedef struct {
    cl_platform_id platform;
    cl_device_id device;
    cl_device_type type;
    int pi, di;
    char name[256];
} device_entry;

static int list_devices(device_entry **out)
{
    cl_uint np = 0;
    *out = NULL;
    if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0)
        return 0;
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats)
        return 0;
    clGetPlatformIDs(np, plats, NULL);
    int count = 0, cap = 0;
    device_entry *list = NULL;
    for (cl_uint p = 0; p < np; ++p) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue;
        cl_device_id *devs = calloc(nd, sizeof *devs);
        if (!devs)
            continue;
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
        for (cl_uint d = 0; d < nd; ++d) {
            if (count == cap) {
                cap = cap ? 2 * cap : 8;
                device_entry *grown = realloc(list, (size_t)cap * sizeof *list);
                if (!grown)
                    break;
                list = grown;
            }
            device_entry *e = &list[count++];
            memset(e, 0, sizeof *e);
            e->platform = plats[p];
            e->device = devs[d];
            e->pi = (int)p;
            e->di = (int)d;
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof e->type, &e->type, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof e->name - 1, e->name, NULL);
        }
        free(devs);
    }
    free(plats);
    *out = list;
    return count;
}

static int pick_device(const device_entry *list, int count, const char *spec)
{
    if (!spec || !*spec) {
        for (int i = 0; i < count; ++i)
            if (list[i].type & CL_DEVICE_TYPE_GPU)
                return i;
        for (int i = 0; i < count; ++i)
            if (list[i].type & CL_DEVICE_TYPE_CPU)
                return i;
        return count > 0 ? 0 : -1;
    }
    if (!strcmp(spec, "gpu") || !strcmp(spec, "GPU") || !strcmp(spec, "cpu") ||
        !strcmp(spec, "CPU")) {
        cl_device_type want = tolower((unsigned char)spec[0]) == 'g' ? CL_DEVICE_TYPE_GPU
                                                                     : CL_DEVICE_TYPE_CPU;
        for (int i = 0; i < count; ++i)
            if (list[i].type & want)
                return i;
        return -1;
    }
    int p, d;
    char tail;
    if (sscanf(spec, "%d:%d%c", &p, &d, &tail) == 2) {
        for (int i = 0; i < count; ++i)
            if (list[i].pi == p && list[i].di == d)
                return i;
        return -1;
    }
    for (int i = 0; i < count; ++i)
        if (contains_nocase(list[i].name, spec))
            return i;
    return -1;
}

/* The architecture that tuning files fall back to: NVIDIA's compute capability, AMD's gfx target
 * (its device name up to the first ':'), PoCL's LLVM target (the HSTR of the device version). */
static void query_architecture(bcl_context *ctx)
{
    bcl_device_info *d = &ctx->dev;
    cl_uint major = 0, minor = 0;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV_, sizeof major, &major,
                        NULL) == CL_SUCCESS &&
        clGetDeviceInfo(ctx->device, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV_, sizeof minor, &minor,
                        NULL) == CL_SUCCESS &&
        major) {
        snprintf(d->architecture, sizeof d->architecture, "sm_%u%u", major, minor);
        return;
    }
    if (!strncmp(d->name, "gfx", 3)) {
        snprintf(d->architecture, sizeof d->architecture, "%.*s", (int)strcspn(d->name, ":"),
                 d->name);
        return;
    }
    const char *hstr = strstr(d->opencl_version, "HSTR: ");
    if (hstr)
        snprintf(d->architecture, sizeof d->architecture, "pocl-%.*s",
                 (int)strcspn(hstr + 6, " "), hstr + 6);
}

static void query_device(bcl_context *ctx)
{
    bcl_device_info *d = &ctx->dev;
    cl_device_id dev = ctx->device;
    memset(d, 0, sizeof *d);
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof d->name - 1, d->name, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_VENDOR, sizeof d->vendor - 1, d->vendor, NULL);
    clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof d->driver_version - 1, d->driver_version, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof d->opencl_version - 1, d->opencl_version, NULL);
    cl_device_type type = 0;
    clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    d->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
    cl_device_fp_config fp64 = 0;
    clGetDeviceInfo(dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
    d->has_fp64 = fp64 != 0;
    cl_bool unified = CL_FALSE;
    clGetDeviceInfo(dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
    d->host_unified_memory = unified == CL_TRUE;
    clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->compute_units, &d->compute_units,
                    NULL);
    cl_ulong local = 0;
    clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
    d->local_mem_bytes = (size_t)local;
    clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_work_group_size,
                    &d->max_work_group_size, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem_bytes,
                    &d->global_mem_bytes, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc_bytes,
                    &d->max_alloc_bytes, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, sizeof d->vector_width_float,
                    &d->vector_width_float, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, sizeof d->vector_width_double,
                    &d->vector_width_double, NULL);
    cl_uint width = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_WARP_SIZE_NV_, sizeof width, &width, NULL) == CL_SUCCESS &&
        width)
        d->work_group_multiple = width;
    else if (clGetDeviceInfo(dev, CL_DEVICE_WAVEFRONT_WIDTH_AMD_, sizeof width, &width, NULL) ==
                 CL_SUCCESS &&
             width)
        d->work_group_multiple = width;
    else
        d->work_group_multiple = 0; /* filled from the first kernel built */
    query_architecture(ctx);
}

/* PoCL caches every kernel it compiles on disk itself (its kcache, keyed by source, options and
 * work-group size), and reading a program's binary makes its CPU device compile every kernel of
 * the program once more for an unknown work-group size: on a cold cache that cost more than the
 * kernels in use (the p-cyclic panel kernel with PANEL_ROWS: 103 s against 7.7 s for the size
 * launched). So program binaries are cached for every device but PoCL's CPU devices (PoCL's other
 * devices were not measured); BATCHCL_BINARY_CACHE=on|off (or 1|0) decides. */
static int binary_cache_wanted(const bcl_context *ctx)
{
    const char *env = getenv("BATCHCL_BINARY_CACHE");
    if (env && (!strcmp(env, "on") || !strcmp(env, "1")))
        return 1;
    if (env && (!strcmp(env, "off") || !strcmp(env, "0")))
        return 0;
    char platform_name[256] = "";
    clGetPlatformInfo(ctx->platform, CL_PLATFORM_NAME, sizeof platform_name - 1, platform_name,
                      NULL);
    return ctx->dev.is_gpu || strstr(platform_name, "Portable Computing Language") == NULL;
}

static void default_cache_dir(bcl_context *ctx)
{
    const char *env = getenv("BATCHCL_CACHE_DIR");
    ctx->cache_dir[0] = 0;
    ctx->binary_cache = binary_cache_wanted(ctx);
    if (env) {
        if (*env && strcmp(env, "off") != 0)
            snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s", env);
        return;
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/batchcl", xdg);
    else if (home && *home)
        snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/.cache/batchcl", home);
}

/* Fill everything but the queues: the caller has set platform, device and cl. */
static bcl_status finish_context(bcl_context *ctx, int first_queue)
{
    query_device(ctx);
    default_cache_dir(ctx);
    const char *limit = getenv("BATCHCL_DEVICE_MEMORY_LIMIT");
    if (limit && *limit) {
        cl_ulong cap = strtoull(limit, NULL, 10);
        if (cap > 0 && cap < ctx->dev.global_mem_bytes)
            ctx->dev.global_mem_bytes = cap;
        if (cap > 0 && cap < ctx->dev.max_alloc_bytes)
            ctx->dev.max_alloc_bytes = cap;
    }
    bcl_tuning_load(ctx);
    const char *zero_copy = getenv("BATCHCL_ZERO_COPY");
    ctx->zero_copy = ctx->dev.host_unified_memory && !(zero_copy && atoi(zero_copy) == 0);
    const char *staging = getenv("BATCHCL_STAGING");
    ctx->staging = staging ? atoi(staging) != 0 : !ctx->dev.host_unified_memory;
    ctx->nqueues = 3;
    for (int q = first_queue; q < ctx->nqueues; ++q) {
        cl_int err;
        ctx->queue[q] = clCreateCommandQueue(ctx->cl, ctx->device, CL_QUEUE_PROFILING_ENABLE, &err);
        if (err != CL_SUCCESS)
            return bcl_cl_fail(NULL, err, "clCreateCommandQueue");
    }
    return BCL_SUCCESS;
}

bcl_status bcl_create(bcl_context **out, const char *spec)
{
    if (!out)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "bcl_create: argument 1 (ctx) is NULL");
    *out = NULL;
    if (!spec)
        spec = getenv("BATCHCL_DEVICE");
    device_entry *list;
    int count = list_devices(&list);
    if (count == 0) {
        free(list);
        return bcl_fail(NULL, BCL_DEVICE_NOT_FOUND,
                        "bcl_create: no OpenCL platform or device found (is an ICD installed in "
                        "/etc/OpenCL/vendors?)");
    }
    int pick = pick_device(list, count, spec);
    if (pick < 0) {
        char avail[2048] = "";
        size_t used = 0;
        for (int i = 0; i < count && used < sizeof avail - 1; ++i)
            used += (size_t)snprintf(avail + used, sizeof avail - used, "%s %d:%d %s (%s)",
                                     i ? ";" : "", list[i].pi, list[i].di, list[i].name,
                                     (list[i].type & CL_DEVICE_TYPE_GPU)   ? "gpu"
                                     : (list[i].type & CL_DEVICE_TYPE_CPU) ? "cpu"
                                                                           : "other");
        free(list);
        return bcl_fail(NULL, BCL_DEVICE_NOT_FOUND,
                        "bcl_create: no device matches \"%s\" (expected gpu, cpu, P:D or a name "
                        "substring); available:%s",
                        spec, avail);
    }
    bcl_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        free(list);
        return bcl_fail(NULL, BCL_OUT_OF_MEMORY, "bcl_create: out of host memory");
    }
    ctx->platform = list[pick].platform;
    ctx->device = list[pick].device;
    free(list);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform,
                                     0};
    cl_int err;
    ctx->cl = clCreateContext(props, 1, &ctx->device, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        free(ctx);
        return bcl_cl_fail(NULL, err, "clCreateContext");
    }
    bcl_status s = finish_context(ctx, 0);
    if (s != BCL_SUCCESS) {
        bcl_destroy(ctx);
        return s;
    }
    *out = ctx;
    return BCL_SUCCESS;
}

bcl_status bcl_create_from_queue(bcl_context **out, cl_command_queue queue)
{
    if (!out)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT,
                        "bcl_create_from_queue: argument 1 (ctx) is NULL");
    *out = NULL;
    if (!queue)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT,
                        "bcl_create_from_queue: argument 2 (queue) is NULL");
    bcl_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return bcl_fail(NULL, BCL_OUT_OF_MEMORY, "bcl_create_from_queue: out of host memory");
    cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof ctx->cl, &ctx->cl, NULL);
    if (err == CL_SUCCESS)
        err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof ctx->device, &ctx->device, NULL);
    if (err == CL_SUCCESS)
        err = clGetDeviceInfo(ctx->device, CL_DEVICE_PLATFORM, sizeof ctx->platform,
                              &ctx->platform, NULL);
    if (err != CL_SUCCESS) {
        free(ctx);
        return bcl_cl_fail(NULL, err, "bcl_create_from_queue: querying the queue");
    }
    clRetainContext(ctx->cl);
    clRetainCommandQueue(queue);
    ctx->queue[0] = queue;
    bcl_status s = finish_context(ctx, 1);
    if (s != BCL_SUCCESS) {
        bcl_destroy(ctx);
        return s;
    }
    *out = ctx;
    return BCL_SUCCESS;
}

void bcl_destroy(bcl_context *ctx)
{
    if (!ctx)
        return;
    for (int q = 0; q < BCL_MAX_QUEUES; ++q)
        if (ctx->queue[q])
            clFinish(ctx->queue[q]);
    bcl_pipeline_release(ctx);
    bcl_steps_reset(ctx, 0);
    free(ctx->steps);
    while (ctx->pinned) {
        bcl_pinned *p = ctx->pinned;
        ctx->pinned = p->next;
        clEnqueueUnmapMemObject(ctx->queue[0], p->buffer, p->ptr, 0, NULL, NULL);
        clFinish(ctx->queue[0]);
        clReleaseMemObject(p->buffer);
        free(p);
    }
    while (ctx->kernels) {
        bcl_kernel_entry *k = ctx->kernels;
        ctx->kernels = k->next;
        clReleaseKernel(k->kernel);
        free(k->name);
        free(k);
    }
    while (ctx->programs) {
        bcl_program_entry *p = ctx->programs;
        ctx->programs = p->next;
        clReleaseProgram(p->program);
        free(p->key);
        free(p);
    }
    for (int q = 0; q < BCL_MAX_QUEUES; ++q)
        if (ctx->queue[q])
            clReleaseCommandQueue(ctx->queue[q]);
    if (ctx->cl)
        clReleaseContext(ctx->cl);
    free(ctx->kernel_path);
    bcl_tuning_release(ctx);
    free(ctx->tuning_path);
    free(ctx->error);
    free(ctx);
}

bcl_status bcl_device_info_get(const bcl_context *ctx, bcl_device_info *info)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "bcl_device_info_get: argument 1 (ctx) is NULL");
    if (!info)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "bcl_device_info_get: argument 2 (info) is NULL");
    *info = ctx->dev;
    return BCL_SUCCESS;
}

const char *bcl_last_kernel(const bcl_context *ctx)
{
    return ctx ? ctx->last_kernel : "";
}

cl_context bcl_cl_context(const bcl_context *ctx)
{
    return ctx ? ctx->cl : NULL;
}

cl_device_id bcl_cl_device(const bcl_context *ctx)
{
    return ctx ? ctx->device : NULL;
}

cl_command_queue bcl_cl_queue(const bcl_context *ctx)
{
    return ctx ? ctx->queue[0] : NULL;
}

/* The checks of bcl_set_params, shared with the tuning files' reader: 1 when p is acceptable,
 * else 0 with the reason in why. */
int bcl_params_check(const bcl_params *p, char *why, size_t cap)
{
    if ((int)p->mapping < BCL_MAPPING_AUTO || p->mapping > BCL_MAPPING_MWB)
        return snprintf(why, cap, "mapping %d is not a bcl_mapping",
                        (int)p->mapping), 0;
    if (p->qr_mapping != BCL_MAPPING_AUTO && p->qr_mapping != BCL_MAPPING_SWB &&
        p->qr_mapping != BCL_MAPPING_MWB)
        return snprintf(why, cap, "qr_mapping %d is not BCL_MAPPING_AUTO, _SWB or _MWB",
                        (int)p->qr_mapping), 0;
    if (p->qr_work_items < 0 || p->qr_sweeps_max < 0 || p->hess_layout < 0 ||
        p->hess_layout > BCL_LAYOUT_ROWWISE + 1)
        return snprintf(why, cap, "qr_work_items and qr_sweeps_max must be >= 0, hess_layout "
                        "0..%d",
                        BCL_LAYOUT_ROWWISE + 1), 0;
    if (p->qr_bulges < 0 || p->qr_bulges > 2)
        return snprintf(why, cap, "qr_bulges must be 0, 1 or 2 (it is %d)", p->qr_bulges), 0;
    if (p->work_items_per_problem < 0 || p->problems_per_group < 0)
        return snprintf(why, cap, "work_items_per_problem and problems_per_group must be >= 0"), 0;
    if (p->queues < 0 || p->queues > BCL_MAX_QUEUES)
        return snprintf(why, cap, "queues must be 0..%d",
                        BCL_MAX_QUEUES), 0;
    if (p->specialize < -1 || p->specialize > 1 || p->simd_interleaved < -1 ||
        p->simd_interleaved > 1 || p->unroll < -1 || p->unroll > 1)
        return snprintf(why, cap, "specialize, simd_interleaved and unroll take -1, 0 or 1"), 0;
    if (p->rows_per_work_item < 0 || p->rows_per_work_item > 16)
        return snprintf(why, cap, "rows_per_work_item = %d is not 0..16",
                        p->rows_per_work_item), 0;
    const int ppw = p->problems_per_work_item;
    if (ppw != 0 && ppw != 1 && ppw != 2 && ppw != 4 && ppw != 8 && ppw != 16)
        return snprintf(why, cap, "problems_per_work_item = %d is not 0, 1, 2, 4, 8 or 16", ppw), 0;
    if (p->pcyclic_method < 0 || p->pcyclic_method > 3 || p->pcyclic_cv_columns < -1 ||
        p->pcyclic_rv_host_columns < -1 || p->pcyclic_qt_host_rows < -1 ||
        p->pcyclic_cv_host_rows < -1)
        return snprintf(why, cap, "pcyclic_method takes 0 to 3, and pcyclic_cv_columns, "
                        "pcyclic_rv_host_columns, pcyclic_qt_host_rows and pcyclic_cv_host_rows "
                        "-1 or more"), 0;
    return 1;
}

bcl_status bcl_set_params(bcl_context *ctx, const bcl_params *params)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "bcl_set_params: argument 1 (ctx) is NULL");
    if (!params) {
        memset(&ctx->forced, 0, sizeof ctx->forced);
        return BCL_SUCCESS;
    }
    char why[256];
    if (!bcl_params_check(params, why, sizeof why))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "bcl_set_params: %s", why);
    ctx->forced = *params;
    return BCL_SUCCESS;
}

bcl_status bcl_set_kernel_path(bcl_context *ctx, const char *paths)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "bcl_set_kernel_path: argument 1 (ctx) is NULL");
    char *copy = NULL;
    if (paths) {
        copy = strdup(paths);
        if (!copy)
            return bcl_fail(ctx, BCL_OUT_OF_MEMORY, "bcl_set_kernel_path: out of host memory");
    }
    free(ctx->kernel_path);
    ctx->kernel_path = copy;
    return BCL_SUCCESS;
}

void *bcl_host_alloc(bcl_context *ctx, size_t bytes)
{
    if (!ctx || bytes == 0)
        return NULL;
    bcl_pinned *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    cl_int err;
    p->buffer = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
        bcl_cl_fail(ctx, err, "bcl_host_alloc: clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)");
        free(p);
        return NULL;
    }
    p->ptr = clEnqueueMapBuffer(ctx->queue[0], p->buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                bytes, 0, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        bcl_cl_fail(ctx, err, "bcl_host_alloc: clEnqueueMapBuffer");
        clReleaseMemObject(p->buffer);
        free(p);
        return NULL;
    }
    p->bytes = bytes;
    p->next = ctx->pinned;
    ctx->pinned = p;
    return p->ptr;
}

void bcl_host_free(bcl_context *ctx, void *ptr)
{
    if (!ctx || !ptr)
        return;
    for (bcl_pinned **pp = &ctx->pinned; *pp; pp = &(*pp)->next) {
        bcl_pinned *p = *pp;
        if (p->ptr == ptr) {
            *pp = p->next;
            clEnqueueUnmapMemObject(ctx->queue[0], p->buffer, p->ptr, 0, NULL, NULL);
            clFinish(ctx->queue[0]);
            clReleaseMemObject(p->buffer);
            free(p);
            return;
        }
    }
}

int bcl_overlaps(const void *a, size_t alen, const void *b, size_t blen)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    if (!a || !b || alen == 0 || blen == 0)
        return 0;
    return a0 < b0 + blen && b0 < a0 + alen;
}

/* ---- step timing ---- */

void bcl_steps_reset(bcl_context *ctx, int on)
{
    for (int i = 0; i < ctx->nsteps; ++i)
        clReleaseEvent(ctx->steps[i].event);
    ctx->nsteps = 0;
    ctx->recording = on;
}

void bcl_step_record(bcl_context *ctx, const char *name, cl_event event)
{
    if (!event)
        return;
    if (ctx->nsteps == ctx->steps_cap) {
        int cap = ctx->steps_cap ? 2 * ctx->steps_cap : 64;
        bcl_step_event *grown = realloc(ctx->steps, (size_t)cap * sizeof *grown);
        if (!grown)
            return; /* timing is best effort */
        ctx->steps = grown;
        ctx->steps_cap = cap;
    }
    clRetainEvent(event);
    ctx->steps[ctx->nsteps++] = (bcl_step_event){name, event};
}

/* BATCHCL_TIMELINE=FILE appends every recorded command of the last call to FILE, one line each:
 * the index of the queue that ran it, step name, start and end in microseconds from the call's
 * first command. It shows whether commands on different queues overlap, which the per-step sums
 * cannot. */
static void write_timeline(const bcl_context *ctx)
{
    const char *path = getenv("BATCHCL_TIMELINE");
    if (!path || !*path || ctx->nsteps == 0)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return; /* timing is best effort */
    cl_ulong origin = 0;
    for (int i = 0; i < ctx->nsteps; ++i) {
        cl_ulong start = 0;
        if (clGetEventProfilingInfo(ctx->steps[i].event, CL_PROFILING_COMMAND_START, sizeof start,
                                    &start, NULL) == CL_SUCCESS &&
            (origin == 0 || start < origin))
            origin = start;
    }
    fprintf(f, "# queue step start_us end_us (%d commands)\n", ctx->nsteps);
    for (int i = 0; i < ctx->nsteps; ++i) {
        cl_event ev = ctx->steps[i].event;
        cl_ulong start = 0, end = 0;
        cl_command_queue q = NULL;
        if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) !=
                CL_SUCCESS ||
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) !=
                CL_SUCCESS ||
            clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) != CL_SUCCESS)
            continue;
        int qi = 0;
        while (qi < ctx->nqueues && ctx->queue[qi] != q)
            ++qi;
        fprintf(f, "%d %s %.1f %.1f\n", qi, ctx->steps[i].name, (double)(start - origin) * 1e-3,
                (double)(end - origin) * 1e-3);
    }
    fclose(f);
}

int bcl_last_step_times(bcl_context *ctx, const char **names, double *seconds, int max)
{
    if (!ctx || max < 0 || (max > 0 && (!names || !seconds)))
        return 0;
    int count = 0;
    for (int i = 0; i < ctx->nsteps; ++i) {
        cl_event ev = ctx->steps[i].event;
        cl_ulong start = 0, end = 0;
        if (clWaitForEvents(1, &ev) != CL_SUCCESS ||
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) !=
                CL_SUCCESS ||
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) !=
                CL_SUCCESS)
            continue;
        int at = 0;
        while (at < count && strcmp(names[at], ctx->steps[i].name) != 0)
            ++at;
        if (at == count) {
            if (count == max)
                continue;
            names[count] = ctx->steps[i].name;
            seconds[count++] = 0;
        }
        seconds[at] += end > start ? (double)(end - start) * 1e-9 : 0;
    }
    write_timeline(ctx); /* the loop has waited for every command: their times are final */
    return count;
}
