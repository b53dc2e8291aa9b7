/* Program loading: kernel search path, build with -D options, in-memory and on-disk binary cache. */
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef BCL_INSTALL_KERNEL_DIR
#define BCL_INSTALL_KERNEL_DIR ""
#endif
#ifndef BCL_SOURCE_KERNEL_DIR
#define BCL_SOURCE_KERNEL_DIR ""
#endif

#define CACHE_MAGIC "BCLBIN01"

uint64_t bcl_hash(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = seed;
    for (size_t i = 0; i < len; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

char *bcl_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) {
            buf = malloc((size_t)size + 1);
            if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
                free(buf);
                buf = NULL;
            }
            if (buf) {
                buf[size] = 0;
                *len = (size_t)size;
            }
        }
    }
    fclose(f);
    return buf;
}

/* share/batchcl/<sub> beside the directory holding this library: an installed tree that was
 * moved still finds its kernels and tuning files. Empty when the library's path is unknown. */
void bcl_relative_data_dir(char *out, size_t cap, const char *sub)
{
    Dl_info info;
    out[0] = 0;
    if (!dladdr((void *)&bcl_relative_data_dir, &info) || !info.dli_fname)
        return;
    char lib[1024];
    snprintf(lib, sizeof lib, "%s", info.dli_fname);
    char *slash = strrchr(lib, '/');
    if (!slash)
        return;
    *slash = 0; /* the library's directory, then its parent */
    slash = strrchr(lib, '/');
    if (slash)
        *slash = 0;
    snprintf(out, cap, "%s/share/batchcl/%s", slash ? lib : "..", sub);
}

/* The directories searched, in order, as one ':'-separated string: $BATCHCL_KERNEL_DIR, beside
 * the library, the configured install directory, the source tree it was built from. */
static char *search_path(const bcl_context *ctx)
{
    if (ctx->kernel_path)
        return strdup(ctx->kernel_path);
    return bcl_data_search_path("BATCHCL_KERNEL_DIR", "cl", BCL_INSTALL_KERNEL_DIR,
                                BCL_SOURCE_KERNEL_DIR);
}

char *bcl_data_search_path(const char *env_name, const char *sub, const char *installed,
                           const char *source)
{
    const char *env = getenv(env_name);
    char beside[1100];
    bcl_relative_data_dir(beside, sizeof beside, sub);
    const size_t len = (env ? strlen(env) : 0) + strlen(beside) + strlen(installed) +
                       strlen(source) + 4;
    char *path = malloc(len);
    if (path)
        snprintf(path, len, "%s:%s:%s:%s", env ? env : "", beside, installed, source);
    return path;
}

/* common.cl followed by the algorithm's file, from the first directory holding both. */
static bcl_status load_source(const bcl_context *ctx, const char *file, char **source)
{
    char *path = search_path(ctx);
    if (!path)
        return bcl_fail(ctx, BCL_OUT_OF_MEMORY, "out of host memory");
    char tried[4096] = "";
    size_t used = 0;
    bcl_status status = BCL_KERNEL_NOT_FOUND;
    for (char *dir = path, *next; dir; dir = next) {
        next = strchr(dir, ':');
        if (next)
            *next++ = 0;
        if (!*dir)
            continue;
        char common_path[2048], file_path[2048];
        snprintf(common_path, sizeof common_path, "%s/common.cl", dir);
        snprintf(file_path, sizeof file_path, "%s/%s", dir, file);
        size_t clen = 0, flen = 0;
        char *common = bcl_read_file(common_path, &clen);
        char *body = common ? bcl_read_file(file_path, &flen) : NULL;
        if (common && body) {
            *source = malloc(clen + flen + 2);
            if (*source) {
                memcpy(*source, common, clen);
                (*source)[clen] = '\n';
                memcpy(*source + clen + 1, body, flen + 1);
                status = BCL_SUCCESS;
            } else {
                status = bcl_fail(ctx, BCL_OUT_OF_MEMORY, "out of host memory");
            }
        } else if (used < sizeof tried) {
            used += (size_t)snprintf(tried + used, sizeof tried - used, "%s%s (%s)",
                                     used ? ", " : "", common ? file_path : common_path,
                                     strerror(errno));
        }
        free(common);
        free(body);
        if (status != BCL_KERNEL_NOT_FOUND)
            break;
    }
    free(path);
    if (status == BCL_KERNEL_NOT_FOUND)
        bcl_fail(ctx, status,
                 "kernel file %s not found; searched: %s (set BATCHCL_KERNEL_DIR or call "
                 "bcl_set_kernel_path)",
                 file, used ? tried : "no directory");
    return status;
}

static void cache_file_name(const bcl_context *ctx, const char *source, const char *options,
                            char *out, size_t cap)
{
    char platform_version[256] = "";
    clGetPlatformInfo(ctx->platform, CL_PLATFORM_VERSION, sizeof platform_version - 1,
                      platform_version, NULL);
    uint64_t h = BCL_HASH_SEED;
    const char *parts[] = {bcl_version(), platform_version, ctx->dev.name, ctx->dev.vendor,
                           ctx->dev.driver_version, options, source};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i)
        h = bcl_hash(parts[i], strlen(parts[i]) + 1, h);
    snprintf(out, cap, "%s/%016llx.bin", ctx->cache_dir, (unsigned long long)h);
}

/* A cached binary, or NULL when absent or damaged (then it is rebuilt and overwritten). */
static unsigned char *read_cached_binary(const char *path, size_t *len)
{
    size_t flen = 0;
    char *raw = bcl_read_file(path, &flen);
    if (!raw)
        return NULL;
    uint64_t size = 0, sum = 0;
    const size_t header = 8 + 2 * sizeof(uint64_t);
    if (flen < header || memcmp(raw, CACHE_MAGIC, 8) != 0) {
        free(raw);
        return NULL;
    }
    memcpy(&size, raw + 8, sizeof size);
    memcpy(&sum, raw + 16, sizeof sum);
    if (size != flen - header || bcl_hash(raw + header, (size_t)size, BCL_HASH_SEED) != sum) {
        free(raw);
        return NULL;
    }
    unsigned char *bin = malloc((size_t)size ? (size_t)size : 1);
    if (bin)
        memcpy(bin, raw + header, (size_t)size);
    free(raw);
    *len = (size_t)size;
    return bin;
}

int bcl_make_dirs(const char *dir)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; ++p)
        if (*p == '/') {
            *p = 0;
            mkdir(tmp, 0755);
            *p = '/';
        }
    return mkdir(tmp, 0755) == 0 || errno == EEXIST;
}

/* Best effort: an unwritable cache directory only costs a rebuild next time. */
static void write_cached_binary(const bcl_context *ctx, const char *path, cl_program program,
                                const char *options)
{
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
        size == 0)
        return;
    unsigned char *bin = malloc(size);
    if (!bin)
        return;
    unsigned char *bins[1] = {bin};
    if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) != CL_SUCCESS ||
        !bcl_make_dirs(ctx->cache_dir)) {
        free(bin);
        return;
    }
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (f) {
        uint64_t len = size, sum = bcl_hash(bin, size, BCL_HASH_SEED);
        int ok = fwrite(CACHE_MAGIC, 1, 8, f) == 8 && fwrite(&len, sizeof len, 1, f) == 1 &&
                 fwrite(&sum, sizeof sum, 1, f) == 1 && fwrite(bin, 1, size, f) == size;
        ok = (fclose(f) == 0) && ok;
        if (!ok || rename(tmp, path) != 0)
            remove(tmp);
    }
    free(bin);
    /* a readable note of what the entry holds, for people inspecting the cache */
    char note[1200];
    snprintf(note, sizeof note, "%.*s.txt", (int)(strlen(path) - 4), path);
    FILE *n = fopen(note, "w");
    if (n) {
        fprintf(n, "%s\n%s\n%s\n", ctx->dev.name, ctx->dev.driver_version, options);
        fclose(n);
    }
}

static bcl_status build_log_error(const bcl_context *ctx, cl_program program, const char *file,
                                  const char *options, cl_int err)
{
    size_t len = 0;
    clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
    char *log = malloc(len + 1);
    if (log) {
        log[0] = 0;
        clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
        log[len] = 0;
    }
    bcl_status s = bcl_fail(ctx, BCL_BUILD_FAILED,
                            "building %s with options \"%s\" failed (%s); build log:\n%s", file,
                            options, bcl_cl_error_name(err), log ? log : "(unavailable)");
    free(log);
    return s;
}

static bcl_status build_program(bcl_context *ctx, const char *file, const char *options,
                                cl_program *out)
{
    char *source = NULL;
    bcl_status s = load_source(ctx, file, &source);
    if (s != BCL_SUCCESS)
        return s;
    /* BATCHCL_BUILD_OPTIONS: extra options for every kernel (experiments, tuning) */
    const char *extra = getenv("BATCHCL_BUILD_OPTIONS");
    char full_options[1024];
    snprintf(full_options, sizeof full_options, "-cl-std=CL1.2 %s%s%s", options, extra ? " " : "",
             extra ? extra : "");
    char cache_path[1200] = "";
    if (ctx->cache_dir[0] && ctx->binary_cache)
        cache_file_name(ctx, source, full_options, cache_path, sizeof cache_path);

    cl_int err;
    if (cache_path[0]) {
        size_t len = 0;
        unsigned char *bin = read_cached_binary(cache_path, &len);
        if (bin) {
            const unsigned char *bins[1] = {bin};
            cl_int bin_status;
            cl_program p = clCreateProgramWithBinary(ctx->cl, 1, &ctx->device, &len, bins,
                                                     &bin_status, &err);
            free(bin);
            if (err == CL_SUCCESS && bin_status == CL_SUCCESS &&
                clBuildProgram(p, 1, &ctx->device, full_options, NULL, NULL) == CL_SUCCESS) {
                free(source);
                *out = p;
                return BCL_SUCCESS;
            }
            if (p)
                clReleaseProgram(p); /* damaged or stale: rebuild from source below */
        }
    }
    const char *srcs[1] = {source};
    cl_program p = clCreateProgramWithSource(ctx->cl, 1, srcs, NULL, &err);
    free(source);
    if (err != CL_SUCCESS)
        return bcl_cl_fail(ctx, err, "clCreateProgramWithSource");
    err = clBuildProgram(p, 1, &ctx->device, full_options, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = build_log_error(ctx, p, file, full_options, err);
        clReleaseProgram(p);
        return s;
    }
    if (cache_path[0])
        write_cached_binary(ctx, cache_path, p, full_options);
    *out = p;
    return BCL_SUCCESS;
}

bcl_status bcl_get_kernel(bcl_context *ctx, const char *file, const char *options,
                          const char *name, bcl_kernel_entry **out)
{
    size_t keylen = strlen(file) + strlen(options) + 2;
    char *key = malloc(keylen);
    if (!key)
        return bcl_fail(ctx, BCL_OUT_OF_MEMORY, "out of host memory");
    snprintf(key, keylen, "%s\n%s", file, options);
    bcl_program_entry *pe = ctx->programs;
    while (pe && strcmp(pe->key, key) != 0)
        pe = pe->next;
    if (!pe) {
        cl_program program;
        bcl_status s = build_program(ctx, file, options, &program);
        if (s != BCL_SUCCESS) {
            free(key);
            return s;
        }
        pe = calloc(1, sizeof *pe);
        if (!pe) {
            clReleaseProgram(program);
            free(key);
            return bcl_fail(ctx, BCL_OUT_OF_MEMORY, "out of host memory");
        }
        pe->key = key;
        pe->program = program;
        pe->next = ctx->programs;
        ctx->programs = pe;
    } else {
        free(key);
    }

    for (bcl_kernel_entry *ke = ctx->kernels; ke; ke = ke->next)
        if (ke->program == pe->program && !strcmp(ke->name, name)) {
            *out = ke;
            return BCL_SUCCESS;
        }
    cl_int err;
    cl_kernel kernel = clCreateKernel(pe->program, name, &err);
    if (err != CL_SUCCESS)
        return bcl_fail(ctx, BCL_BUILD_FAILED, "kernel %s not found in %s (options \"%s\"): %s",
                        name, file, options, bcl_cl_error_name(err));
    bcl_kernel_entry *ke = calloc(1, sizeof *ke);
    if (!ke || !(ke->name = strdup(name))) {
        free(ke);
        clReleaseKernel(kernel);
        return bcl_fail(ctx, BCL_OUT_OF_MEMORY, "out of host memory");
    }
    ke->program = pe->program;
    ke->kernel = kernel;
    clGetKernelWorkGroupInfo(kernel, ctx->device, CL_KERNEL_WORK_GROUP_SIZE,
                             sizeof ke->max_work_group, &ke->max_work_group, NULL);
    clGetKernelWorkGroupInfo(kernel, ctx->device, CL_KERNEL_LOCAL_MEM_SIZE,
                             sizeof ke->static_local, &ke->static_local, NULL);
    if (ke->max_work_group == 0 || ke->max_work_group > ctx->dev.max_work_group_size)
        ke->max_work_group = ctx->dev.max_work_group_size;
    if (ctx->dev.work_group_multiple == 0) {
        size_t multiple = 0;
        clGetKernelWorkGroupInfo(kernel, ctx->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                 sizeof multiple, &multiple, NULL);
        ctx->dev.work_group_multiple = multiple ? multiple : 1;
    }
    ke->next = ctx->kernels;
    ctx->kernels = ke;
    *out = ke;
    return BCL_SUCCESS;
}
