/* Argument checks and small helpers shared by the routine drivers. */
#include "internal.h"

/* A device array must be a buffer of this context holding `elements` from `offset`. */
bcl_status bcl_check_buffer(const bcl_context *ctx, const char *fn, int argno, const char *name,
                            cl_mem buf, size_t offset, size_t elements, size_t es)
{
    if (!buf)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument %d (%s) is NULL", fn, argno, name);
    size_t size = 0;
    cl_context owner = NULL;
    if (clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL) != CL_SUCCESS ||
        clGetMemObjectInfo(buf, CL_MEM_CONTEXT, sizeof owner, &owner, NULL) != CL_SUCCESS)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: argument %d (%s) is not a valid cl_mem", fn,
                        argno, name);
    if (owner != ctx->cl)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: argument %d (%s) belongs to another OpenCL context", fn, argno, name);
    if (elements > ((size_t)-1 - offset) / es || (offset + elements) * es > size)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: argument %d (%s) holds %zu bytes; offset %zu + %zu elements need %zu",
                        fn, argno, name, size, offset, elements, (offset + elements) * es);
    return BCL_SUCCESS;
}

bcl_status bcl_check_layout(const bcl_context *ctx, const char *fn, bcl_layout layout)
{
    if (layout != BCL_LAYOUT_CONTIGUOUS && layout != BCL_LAYOUT_INTERLEAVED)
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT, "%s: layout %d is not a bcl_layout", fn,
                        (int)layout);
    return BCL_SUCCESS;
}

bcl_status bcl_check_wait(const bcl_context *ctx, const char *fn, cl_uint num_wait,
                          const cl_event *wait)
{
    if ((num_wait > 0) != (wait != NULL))
        return bcl_fail(ctx, BCL_INVALID_ARGUMENT,
                        "%s: num_wait = %u does not match the wait list pointer", fn, num_wait);
    return BCL_SUCCESS;
}

/* An empty call still gives the caller an event that completes after the wait list. */
bcl_status bcl_empty_call(bcl_context *ctx, cl_uint num_wait, const cl_event *wait,
                             cl_event *event)
{
    if (!event)
        return BCL_SUCCESS;
    cl_int err = clEnqueueMarkerWithWaitList(ctx->queue[0], num_wait, wait, event);
    return err == CL_SUCCESS ? BCL_SUCCESS : bcl_cl_fail(ctx, err, "clEnqueueMarkerWithWaitList");
}

bcl_status bcl_summarize_info(bcl_context *ctx, const char *fn, const char *what, const int *info,
                              size_t batch)
{
    size_t failed = 0, first = 0;
    for (size_t k = 0; k < batch; ++k)
        if (info[k] != 0 && failed++ == 0)
            first = k;
    if (!failed)
        return BCL_SUCCESS;
    return bcl_fail(ctx, BCL_NUMERICAL_FAILURE,
                    "%s: %zu of %zu problems failed (%s; first: problem %zu, info %d); their info "
                    "is set, the others are solved",
                    fn, failed, batch, what, first, info[first]);
}

size_t bcl_count_failures(const int *info, size_t batch, size_t *first)
{
    size_t failed = 0;
    *first = 0;
    for (size_t k = 0; k < batch; ++k)
        if (info[k] != 0 && failed++ == 0)
            *first = k;
    return failed;
}

bcl_status bcl_no_fp64(const bcl_context *ctx, const char *fn)
{
    return bcl_fail(ctx, BCL_NOT_IMPLEMENTED, "%s: device %s has no double precision", fn,
                    ctx->dev.name);
}
