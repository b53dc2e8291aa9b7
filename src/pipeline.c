/* Transfer pipeline for host-pointer calls: split the batch into chunks that fit the device and
 * run write / compute / read of successive chunks on different queues so copies overlap compute.
 * Devices sharing memory with the host (CPUs) skip the copies: their buffers wrap the host arrays. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Chunk target on discrete devices: large enough to amortize a launch, small enough that several
 * chunks are in flight for overlap. */
#define CHUNK_TARGET_BYTES ((size_t)64 << 20)

size_t bcl_chunk_problems(size_t batch, size_t bytes_per_problem, size_t largest_per_problem,
                          cl_ulong global_mem, cl_ulong max_alloc, int slots, size_t want)
{
    if (batch == 0)
        return 0;
    if (bytes_per_problem == 0 || largest_per_problem == 0)
        return batch;
    if (slots < 1)
        slots = 1;
    /* half of the device memory for the chunks in flight, the rest for the application */
    cl_ulong budget = global_mem / 2 / (cl_ulong)slots;
    cl_ulong by_memory = budget / bytes_per_problem;
    cl_ulong by_alloc = max_alloc / largest_per_problem;
    cl_ulong chunk = by_memory < by_alloc ? by_memory : by_alloc;
    if (want && want < chunk)
        chunk = want;
    if (chunk > batch)
        chunk = batch;
    return (size_t)chunk;
}

static const bcl_pinned *find_pinned(const bcl_context *ctx, const void *p, size_t len)
{
    for (const bcl_pinned *q = ctx->pinned; q; q = q->next)
        if ((const char *)p >= (const char *)q->ptr &&
            (const char *)p + len <= (const char *)q->ptr + q->bytes)
            return q;
    return NULL;
}

static void release_slot(bcl_context *ctx, bcl_slot *s)
{
    for (int i = 0; i < 3 * BCL_MAX_STREAMS; ++i) {
        if (s->dev[i])
            clReleaseMemObject(s->dev[i]);
        if (s->pin[i]) {
            clEnqueueUnmapMemObject(ctx->queue[0], s->pin[i], s->pin_ptr[i], 0, NULL, NULL);
            clFinish(ctx->queue[0]);
            clReleaseMemObject(s->pin[i]);
        }
    }
    memset(s, 0, sizeof *s);
}

void bcl_pipeline_release(bcl_context *ctx)
{
    for (int q = 0; q < BCL_MAX_QUEUES; ++q)
        release_slot(ctx, &ctx->slot[q]);
    bcl_release_buffers(ctx->scratch, ctx->scratch_bytes, BCL_SCRATCH_ARRAYS);
    bcl_pcyclic_release(ctx);
}

void bcl_release_buffers(cl_mem *bufs, size_t *bytes, int count)
{
    for (int i = 0; i < count; ++i) {
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
        bufs[i] = NULL;
        bytes[i] = 0;
    }
}

cl_int bcl_grow_buffer(bcl_context *ctx, cl_mem *buf, size_t *have, size_t bytes)
{
    if (*have >= bytes)
        return CL_SUCCESS;
    /* commands still using the old buffer keep it alive until they finish */
    if (*buf)
        clReleaseMemObject(*buf);
    cl_int err;
    *buf = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
    *have = err == CL_SUCCESS ? bytes : 0;
    if (err != CL_SUCCESS)
        *buf = NULL;
    return err;
}

bcl_status bcl_scratch(bcl_context *ctx, int idx, size_t bytes, cl_mem *out)
{
    const cl_int err = bcl_grow_buffer(ctx, &ctx->scratch[idx], &ctx->scratch_bytes[idx],
                                       bytes ? bytes : 1);
    if (err != CL_SUCCESS)
        return bcl_cl_fail(ctx, err, "allocating a device scratch buffer");
    *out = ctx->scratch[idx];
    return BCL_SUCCESS;
}

/* Slot buffers `idx` (inputs first, then outputs): a device buffer of at least `bytes` and, when
 * `pinned`, a mapped staging buffer of at least `pin_bytes`. */
static bcl_status slot_buffer(bcl_context *ctx, bcl_slot *s, int idx, size_t bytes, size_t pin_bytes,
                              int pinned)
{
    cl_int err =
        bytes ? bcl_grow_buffer(ctx, &s->dev[idx], &s->dev_bytes[idx], bytes) : CL_SUCCESS;
    if (err != CL_SUCCESS)
        return bcl_cl_fail(ctx, err, "allocating a device chunk buffer");
    if (pinned && s->pin_bytes[idx] < pin_bytes) {
        if (s->pin[idx]) {
            clEnqueueUnmapMemObject(ctx->queue[0], s->pin[idx], s->pin_ptr[idx], 0, NULL, NULL);
            clFinish(ctx->queue[0]);
            clReleaseMemObject(s->pin[idx]);
            s->pin[idx] = NULL;
            s->pin_bytes[idx] = 0;
        }
        s->pin[idx] = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, pin_bytes,
                                     NULL, &err);
        if (err != CL_SUCCESS) {
            s->pin[idx] = NULL;
            return bcl_cl_fail(ctx, err, "allocating a pinned staging buffer");
        }
        s->pin_ptr[idx] = clEnqueueMapBuffer(ctx->queue[0], s->pin[idx], CL_TRUE,
                                             CL_MAP_READ | CL_MAP_WRITE, 0, pin_bytes, 0, NULL,
                                             NULL, &err);
        if (err != CL_SUCCESS) {
            clReleaseMemObject(s->pin[idx]);
            s->pin[idx] = NULL;
            return bcl_cl_fail(ctx, err, "mapping a pinned staging buffer");
        }
        s->pin_bytes[idx] = pin_bytes;
    }
    return BCL_SUCCESS;
}

/* Zero-copy path: buffers wrap the host arrays chunk by chunk. */
static bcl_status run_unified(bcl_context *ctx, const bcl_job *job, size_t chunk)
{
    bcl_status status = BCL_SUCCESS;
    for (size_t first = 0; first < job->batch && status == BCL_SUCCESS; first += chunk) {
        size_t count = job->batch - first < chunk ? job->batch - first : chunk;
        cl_mem in[BCL_MAX_STREAMS] = {0}, out[BCL_MAX_STREAMS] = {0};
        cl_int err = CL_SUCCESS;
        for (int i = 0; i < job->n_in && err == CL_SUCCESS; ++i) {
            if (job->in[i].bytes == 0)
                continue; /* an empty array (e of a 1x1 tridiagonal system): no buffer */
            int written = 0;
            for (int o = 0; o < job->n_out; ++o)
                written |= job->out[o].alias_of == i;
            in[i] = clCreateBuffer(ctx->cl,
                                   (written ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY) |
                                       CL_MEM_USE_HOST_PTR,
                                   count * job->in[i].bytes,
                                   (char *)job->in[i].host + first * job->in[i].bytes, &err);
        }
        for (int o = 0; o < job->n_out && err == CL_SUCCESS; ++o) {
            if (job->out[o].bytes == 0)
                continue; /* an empty array: no buffer */
            if (job->out[o].alias_of >= 0) {
                out[o] = in[job->out[o].alias_of];
                clRetainMemObject(out[o]);
            } else {
                out[o] = clCreateBuffer(ctx->cl, CL_MEM_WRITE_ONLY | CL_MEM_USE_HOST_PTR,
                                        count * job->out[o].bytes,
                                        (char *)job->out[o].host + first * job->out[o].bytes, &err);
            }
        }
        if (err != CL_SUCCESS)
            status = bcl_cl_fail(ctx, err, "wrapping host arrays (CL_MEM_USE_HOST_PTR)");
        cl_mem scratch[BCL_MAX_STREAMS] = {0};
        bcl_slot *sl = &ctx->slot[0];
        for (int i = 0; i < job->n_scratch && status == BCL_SUCCESS; ++i)
            if (job->scratch[i]) {
                status = slot_buffer(ctx, sl, 2 * BCL_MAX_STREAMS + i, chunk * job->scratch[i], 0, 0);
                scratch[i] = sl->dev[2 * BCL_MAX_STREAMS + i];
            }
        cl_event done = NULL;
        if (status == BCL_SUCCESS)
            status = job->enqueue(ctx, job->user, ctx->queue[0], in, out, scratch, first, count, &done);
        /* mapping makes the results visible in the host arrays */
        for (int o = 0; o < job->n_out && status == BCL_SUCCESS; ++o) {
            if (!out[o])
                continue;
            void *p = clEnqueueMapBuffer(ctx->queue[0], out[o], CL_TRUE, CL_MAP_READ, 0,
                                         count * job->out[o].bytes, 0, NULL, NULL, &err);
            if (err != CL_SUCCESS)
                status = bcl_cl_fail(ctx, err, "clEnqueueMapBuffer of results");
            else
                clEnqueueUnmapMemObject(ctx->queue[0], out[o], p, 0, NULL, NULL);
        }
        clFinish(ctx->queue[0]);
        if (done)
            clReleaseEvent(done);
        for (int i = 0; i < BCL_MAX_STREAMS; ++i) {
            if (in[i])
                clReleaseMemObject(in[i]);
            if (out[i])
                clReleaseMemObject(out[i]);
        }
    }
    return status;
}

/* Problems in the chunk that starts `index` chunks into the batch, `remaining` problems left:
 * the steady size `chunk`, but the first chunks grow from `least` (nothing overlaps the first copy
 * in: a small one starts the compute early) and the last ones shrink by halves to it (nothing
 * overlaps the last compute and copy out), without leaving a crumb at the end. */
size_t bcl_chunk_count(size_t remaining, size_t chunk, size_t index, size_t least)
{
    if (least >= chunk || least == 0)
        return remaining < chunk ? remaining : chunk;
    size_t c = index < 3 && (least << index) < chunk ? least << index : chunk;
    if (remaining / 2 < c)
        c = remaining / 2 > least ? remaining / 2 : least;
    if (c >= remaining || (remaining - c < least && remaining <= chunk))
        c = remaining;
    return c;
}

/* The smallest graded chunk: an eighth of the steady one, but never so small that launches and
 * waits would cost more than the overlap gains (at least GRADE_MIN_BYTES of arrays, and 1024
 * problems). */
#define GRADE_MIN_BYTES ((size_t)16 << 20)
static size_t least_chunk(size_t chunk, size_t per)
{
    size_t least = chunk / 8;
    const size_t by_bytes = per ? (GRADE_MIN_BYTES + per - 1) / per : 1;
    least = least > by_bytes ? least : by_bytes;
    return least > 1024 ? least : 1024;
}

typedef struct {
    cl_event done;
    size_t first, count;
    int staged_out[BCL_MAX_STREAMS];
} inflight;

/* Wait for a slot's chunk and copy its staged results out. */
static bcl_status drain(bcl_context *ctx, const bcl_job *job, bcl_slot *s, inflight *f)
{
    if (!f->done)
        return BCL_SUCCESS;
    cl_int err = clWaitForEvents(1, &f->done);
    clReleaseEvent(f->done);
    f->done = NULL;
    if (err != CL_SUCCESS)
        return bcl_cl_fail(ctx, err, "waiting for a chunk");
    for (int o = 0; o < job->n_out; ++o)
        if (f->staged_out[o])
            memcpy((char *)job->out[o].host + f->first * job->out[o].bytes,
                   s->pin_ptr[job->n_in + o], f->count * job->out[o].bytes);
    return BCL_SUCCESS;
}

/* moved: bytes a problem sends and receives (its graded chunks' least size follows from them) */
static bcl_status run_copies(bcl_context *ctx, const bcl_job *job, size_t chunk, int slots,
                             size_t moved)
{
    inflight fl[BCL_MAX_QUEUES];
    memset(fl, 0, sizeof fl);
    bcl_status status = BCL_SUCCESS;
    size_t index = 0;
    size_t count = 0;
    const size_t least = least_chunk(chunk, moved);
    for (size_t first = 0; first < job->batch && status == BCL_SUCCESS; first += count, ++index) {
        const int si = (int)(index % (size_t)slots);
        bcl_slot *s = &ctx->slot[si];
        cl_command_queue q = ctx->queue[si];
        inflight *f = &fl[si];
        status = drain(ctx, job, s, f);
        if (status != BCL_SUCCESS)
            break;
        count = bcl_chunk_count(job->batch - first, chunk, index, least);
        cl_mem in[BCL_MAX_STREAMS] = {0}, out[BCL_MAX_STREAMS] = {0};
        for (int i = 0; i < job->n_in && status == BCL_SUCCESS; ++i) {
            if (job->in[i].bytes == 0)
                continue; /* an empty array: no buffer */
            const size_t len = count * job->in[i].bytes;
            const char *src = (const char *)job->in[i].host + first * job->in[i].bytes;
            const int stage = ctx->staging && !find_pinned(ctx, src, len);
            status = slot_buffer(ctx, s, i, chunk * job->in[i].bytes, chunk * job->in[i].bytes, stage);
            if (status != BCL_SUCCESS)
                break;
            if (stage) {
                memcpy(s->pin_ptr[i], src, len);
                src = s->pin_ptr[i];
            }
            cl_event ev = NULL;
            cl_int err = clEnqueueWriteBuffer(q, s->dev[i], CL_FALSE, 0, len, src, 0, NULL,
                                              ctx->recording ? &ev : NULL);
            if (err != CL_SUCCESS)
                status = bcl_cl_fail(ctx, err, "clEnqueueWriteBuffer of a chunk");
            if (ev) {
                bcl_step_record(ctx, "transfer in", ev);
                clReleaseEvent(ev);
            }
            in[i] = s->dev[i];
        }
        for (int o = 0; o < job->n_out && status == BCL_SUCCESS; ++o) {
            const size_t len = count * job->out[o].bytes;
            void *dst = (char *)job->out[o].host + first * job->out[o].bytes;
            if (len == 0) { /* an empty array: no buffer, nothing to read */
                f->staged_out[o] = 0;
                continue;
            }
            f->staged_out[o] = ctx->staging && !find_pinned(ctx, dst, len);
            /* an in-place output is its input's device buffer (only a staging buffer of its own) */
            const int alias = job->out[o].alias_of;
            status = slot_buffer(ctx, s, job->n_in + o, alias >= 0 ? 0 : chunk * job->out[o].bytes,
                                 f->staged_out[o] ? chunk * job->out[o].bytes : 0, f->staged_out[o]);
            out[o] = alias >= 0 ? in[alias] : s->dev[job->n_in + o];
        }
        cl_mem scratch[BCL_MAX_STREAMS] = {0};
        for (int i = 0; i < job->n_scratch && status == BCL_SUCCESS; ++i)
            if (job->scratch[i]) {
                status = slot_buffer(ctx, s, 2 * BCL_MAX_STREAMS + i, chunk * job->scratch[i], 0, 0);
                scratch[i] = s->dev[2 * BCL_MAX_STREAMS + i];
            }
        cl_event kernel_done = NULL;
        if (status == BCL_SUCCESS)
            status = job->enqueue(ctx, job->user, q, in, out, scratch, first, count, &kernel_done);
        if (kernel_done)
            clReleaseEvent(kernel_done);
        for (int o = 0; o < job->n_out && status == BCL_SUCCESS; ++o) {
            const size_t len = count * job->out[o].bytes;
            void *dst = f->staged_out[o] ? s->pin_ptr[job->n_in + o]
                                         : (char *)job->out[o].host + first * job->out[o].bytes;
            if (len == 0)
                continue;
            cl_event ev = NULL;
            cl_int err = clEnqueueReadBuffer(q, out[o], CL_FALSE, 0, len, dst, 0, NULL,
                                             ctx->recording ? &ev : NULL);
            if (err != CL_SUCCESS)
                status = bcl_cl_fail(ctx, err, "clEnqueueReadBuffer of a chunk");
            if (ev) {
                bcl_step_record(ctx, "transfer out", ev);
                clReleaseEvent(ev);
            }
        }
        /* the slot's chunk is done when everything enqueued on its queue is */
        if (status == BCL_SUCCESS) {
            cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, &f->done);
            if (err != CL_SUCCESS)
                status = bcl_cl_fail(ctx, err, "clEnqueueMarkerWithWaitList");
        }
        f->first = first;
        f->count = count;
        clFlush(q);
    }
    for (int si = 0; si < slots; ++si) {
        bcl_status d = drain(ctx, job, &ctx->slot[si], &fl[si]);
        if (status == BCL_SUCCESS)
            status = d;
        clFinish(ctx->queue[si]);
    }
    return status;
}

bcl_status bcl_pipeline_run(bcl_context *ctx, const bcl_job *job)
{
    if (job->batch == 0)
        return BCL_SUCCESS;
    size_t per = 0, largest = 0;
    for (int i = 0; i < job->n_in; ++i) {
        per += job->in[i].bytes;
        largest = job->in[i].bytes > largest ? job->in[i].bytes : largest;
    }
    for (int o = 0; o < job->n_out; ++o) {
        per += job->out[o].bytes;
        largest = job->out[o].bytes > largest ? job->out[o].bytes : largest;
    }
    const size_t moved = per; /* the arrays that travel; scratch stays on the device */
    for (int i = 0; i < job->n_scratch; ++i) {
        per += job->scratch[i];
        largest = job->scratch[i] > largest ? job->scratch[i] : largest;
    }
    const int unified = ctx->zero_copy;
    int slots = job->queues > 0 ? job->queues : ctx->nqueues;
    if (slots > ctx->nqueues)
        slots = ctx->nqueues;
    if (unified)
        slots = 1;
    size_t want = job->chunk;
    if (!want && !unified)
        want = CHUNK_TARGET_BYTES / per ? CHUNK_TARGET_BYTES / per : 1;
    size_t chunk = bcl_chunk_problems(job->batch, per, largest, ctx->dev.global_mem_bytes,
                                      ctx->dev.max_alloc_bytes, slots, want);
    if (chunk == 0)
        return bcl_fail(ctx, BCL_OUT_OF_MEMORY,
                        "one problem needs %zu bytes of device memory, more than the device's "
                        "allocation limit (%llu bytes)",
                        per, (unsigned long long)ctx->dev.max_alloc_bytes);
    return unified ? run_unified(ctx, job, chunk) : run_copies(ctx, job, chunk, slots, moved);
}
