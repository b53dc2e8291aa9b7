/* The tunable fields of bcl_params under their tuning-file names, shared by the library (which
 * reads tuning/db/<device>.json) and batchcl-tune (which writes them), so both spell them alike. */
#ifndef BATCHCL_TUNING_FIELDS_H
#define BATCHCL_TUNING_FIELDS_H

#include "batchcl.h"

#include <stddef.h>
#include <string.h>

typedef enum { BCL_FIELD_INT, BCL_FIELD_SIZE, BCL_FIELD_MAPPING } bcl_field_kind;

typedef struct {
    const char *name;
    bcl_field_kind kind;
    size_t offset;
    long lo, hi; /* accepted values (mappings: by name) */
} bcl_tuning_field;

/* The numerical options (eigen_threshold, auto_residual, qr_sweeps_max) are the caller's choice,
 * not the device's, so they are not tuning fields. */
static const bcl_tuning_field bcl_tuning_fields[] = {
    {"mapping", BCL_FIELD_MAPPING, offsetof(bcl_params, mapping), 0, 0},
    {"work_items_per_problem", BCL_FIELD_INT, offsetof(bcl_params, work_items_per_problem), 0, 1024},
    {"problems_per_group", BCL_FIELD_INT, offsetof(bcl_params, problems_per_group), 0, 4096},
    {"specialize", BCL_FIELD_INT, offsetof(bcl_params, specialize), -1, 1},
    {"simd_interleaved", BCL_FIELD_INT, offsetof(bcl_params, simd_interleaved), -1, 1},
    {"problems_per_work_item", BCL_FIELD_INT, offsetof(bcl_params, problems_per_work_item), 0, 16},
    {"unroll", BCL_FIELD_INT, offsetof(bcl_params, unroll), -1, 1},
    {"rows_per_work_item", BCL_FIELD_INT, offsetof(bcl_params, rows_per_work_item), 0, 16},
    {"chunk_problems", BCL_FIELD_SIZE, offsetof(bcl_params, chunk_problems), 0, 1L << 30},
    {"queues", BCL_FIELD_INT, offsetof(bcl_params, queues), 0, 4},
    {"qr_mapping", BCL_FIELD_MAPPING, offsetof(bcl_params, qr_mapping), 0, 0},
    {"qr_work_items", BCL_FIELD_INT, offsetof(bcl_params, qr_work_items), 0, 1024},
    {"qr_bulges", BCL_FIELD_INT, offsetof(bcl_params, qr_bulges), 0, 2},
    {"hess_layout", BCL_FIELD_INT, offsetof(bcl_params, hess_layout), 0, BCL_LAYOUT_ROWWISE + 1},
    {"pcyclic_method", BCL_FIELD_INT, offsetof(bcl_params, pcyclic_method), 0, 3},
    {"pcyclic_cv_columns", BCL_FIELD_INT, offsetof(bcl_params, pcyclic_cv_columns), -1, 1 << 20},
    {"pcyclic_rv_host_columns", BCL_FIELD_INT, offsetof(bcl_params, pcyclic_rv_host_columns), -1,
     1 << 20},
    {"pcyclic_qt_host_rows", BCL_FIELD_INT, offsetof(bcl_params, pcyclic_qt_host_rows), -1, 1 << 20},
    {"pcyclic_cv_host_rows", BCL_FIELD_INT, offsetof(bcl_params, pcyclic_cv_host_rows), -1, 1 << 20},
};
#define BCL_TUNING_FIELD_COUNT (sizeof bcl_tuning_fields / sizeof bcl_tuning_fields[0])

static const char *const bcl_mapping_keys[] = {"auto", "simd", "collaborative", "hybrid", "swb",
                                               "mwb"};

static inline const char *bcl_mapping_key(bcl_mapping m)
{
    return (int)m >= 0 && (int)m <= BCL_MAPPING_MWB ? bcl_mapping_keys[m] : "?";
}

/* -1 for an unknown name */
static inline int bcl_mapping_from_key(const char *s)
{
    for (int i = 0; i <= BCL_MAPPING_MWB; ++i)
        if (!strcmp(s, bcl_mapping_keys[i]))
            return i;
    return -1;
}

static inline long bcl_field_get(const bcl_params *p, const bcl_tuning_field *f)
{
    const char *at = (const char *)p + f->offset;
    if (f->kind == BCL_FIELD_SIZE)
        return (long)*(const size_t *)(const void *)at;
    if (f->kind == BCL_FIELD_MAPPING)
        return (long)*(const bcl_mapping *)(const void *)at;
    return (long)*(const int *)(const void *)at;
}

static inline void bcl_field_set(bcl_params *p, const bcl_tuning_field *f, long v)
{
    char *at = (char *)p + f->offset;
    if (f->kind == BCL_FIELD_SIZE)
        *(size_t *)(void *)at = (size_t)v;
    else if (f->kind == BCL_FIELD_MAPPING)
        *(bcl_mapping *)(void *)at = (bcl_mapping)v;
    else
        *(int *)(void *)at = (int)v;
}

#endif
