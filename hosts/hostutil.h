/* Helpers shared by the host programs (the batchcl command, its benchmarks, the demos). */
#ifndef BATCHCL_HOSTUTIL_H
#define BATCHCL_HOSTUTIL_H

#include "batchcl.h"

/* Monotonic wall-clock seconds. */
double hu_now(void);

/* Median of v[0..n) (sorts v). */
double hu_median(double *v, int n);

/* Bytes per second of a float4 copy kernel on the context's device (read + write): the
 * bandwidth yardstick of the benchmarks; 0 when it cannot run. */
double hu_copy_bandwidth(bcl_context *ctx);

/* Seconds between the start and the end of a profiled command. */
double hu_event_seconds(cl_event ev);

/* Options of `batchcl bench geev`. */
typedef struct {
    const char *device;
    int n_list[64], n_count;   /* default 5, 10, 15, 20, 25, 30 */
    size_t batch;              /* default 500000 on GPUs, 20000 on CPUs */
    int dbl;
    int reps;
    const char *mappings;      /* "auto" (the table) or "all" (SWB/MWB and p sweeps) */
    size_t chunks[32];         /* the host-memory chunk sweep (Table 2) */
    int chunk_count;
    int lapack;                /* compare with LAPACK dgeev (sequential and OpenMP) */
    int vectors;               /* also time the eigenvector step */
    int p_list[16], p_count;   /* p of the forced variants (none: 1, 2, 4, ... 64) */
    int ppg;                   /* matrices per group of the forced variants (0: the table's) */
    int queues[8], queues_count; /* queues of the host-memory sweep (none: the table's) */
    int bulges[2], bulges_count; /* qr_bulges of every variant (none: the table's) */
} bench_geev_options;

/* `batchcl bench geev`: Tables 1, 2 and 4 of Tokura et al. 2017 on this machine. */
int bench_geev(const bench_geev_options *o);

#endif
