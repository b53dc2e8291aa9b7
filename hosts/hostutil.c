/* Helpers shared by the host programs; see hostutil.h. */
#include "hostutil.h"

#include <stdlib.h>
#include <time.h>

double hu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hu_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const char *copy_source =
    "__kernel void copy4(__global const float4 *a, __global float4 *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i]; }\n";

double hu_copy_bandwidth(bcl_context *ctx)
{
    cl_context c = bcl_cl_context(ctx);
    cl_device_id d = bcl_cl_device(ctx);
    bcl_device_info info;
    bcl_device_info_get(ctx, &info);
    size_t bytes = (size_t)1 << 30;
    if (bytes > info.max_alloc_bytes / 2)
        bytes = (size_t)(info.max_alloc_bytes / 2);
    bytes &= ~(size_t)4095;
    cl_int err;
    cl_program p = clCreateProgramWithSource(c, 1, &copy_source, NULL, &err);
    if (err || clBuildProgram(p, 1, &d, "", NULL, NULL) != CL_SUCCESS)
        return 0;
    cl_kernel k = clCreateKernel(p, "copy4", &err);
    cl_mem a = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(c, d, CL_QUEUE_PROFILING_ENABLE, &err);
    float zero = 1.0f;
    clEnqueueFillBuffer(q, a, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
    clSetKernelArg(k, 0, sizeof a, &a);
    clSetKernelArg(k, 1, sizeof b, &b);
    size_t global = bytes / 16;
    double t[7];
    for (int r = 0; r < 7; ++r) {
        cl_event ev;
        clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &ev);
        clWaitForEvents(1, &ev);
        cl_ulong s, e;
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
        t[r] = (double)(e - s) * 1e-9;
        clReleaseEvent(ev);
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    return 2.0 * (double)bytes / hu_median(t + 1, 6);
}

double hu_event_seconds(cl_event ev)
{
    cl_ulong s = 0, e = 0;
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
    return (double)(e - s) * 1e-9;
}
