/* clBLAST's direct GEMM kernel (XgemmDirect, clBLAST 1.5) and its tuning parameters: the names,
 * the values batchcl-tune tries, and the rules a set must keep (clBLAST's own tuner's: integer
 * tiles per work-item and per load, whole vectors, the local tiles within the device's local
 * memory). clBLAST ships no parameters for several recent GPUs (the H100 among them) and falls
 * back to a generic set there; a tuning file's "clblast" object holds a measured set, which the
 * p-cyclic inversion hands to clBLAST (CLBlastOverrideParameters) before its GEMMs. Shared by the
 * tuning files' reader, the p-cyclic driver and batchcl-tune. */
#ifndef BATCHCL_GEMM_PARAMS_H
#define BATCHCL_GEMM_PARAMS_H

#include <stddef.h>
#include <stdio.h>

enum {
    GEMM_WGD, /* the square tile of C a work-group computes (and the K step) */
    GEMM_MDIMCD,
    GEMM_NDIMCD, /* work-items per group in M and N */
    GEMM_MDIMAD,
    GEMM_NDIMBD, /* how the work-items are laid out to load A's and B's tiles */
    GEMM_KWID,   /* unrolling of the K loop */
    GEMM_VWMD,
    GEMM_VWND, /* vector widths in M and N */
    GEMM_PADA,
    GEMM_PADB, /* padding of the local tiles (bank conflicts) */
    GEMM_DIRECT_PARAMS
};

static inline const char *gemm_direct_name(int i)
{
    static const char *const names[GEMM_DIRECT_PARAMS] = {"WGD",    "MDIMCD", "NDIMCD", "MDIMAD",
                                                          "NDIMBD", "KWID",   "VWMD",   "VWND",
                                                          "PADA",   "PADB"};
    return names[i];
}

/* Whether v is a set clBLAST can build and run with elements of elem bytes, local memory of
 * local_bytes and work-groups of at most max_group; why says what is wrong when it is not. */
static inline int gemm_direct_valid(const size_t v[GEMM_DIRECT_PARAMS], size_t elem,
                                    size_t local_bytes, size_t max_group, char *why, size_t whylen)
{
    static const size_t lo[GEMM_DIRECT_PARAMS] = {8, 4, 4, 4, 4, 1, 1, 1, 0, 0},
                        hi[GEMM_DIRECT_PARAMS] = {128, 64, 64, 64, 64, 64, 16, 16, 1, 1};
    for (int i = 0; i < GEMM_DIRECT_PARAMS; ++i)
        if (v[i] < lo[i] || v[i] > hi[i] || (i <= GEMM_VWND && (v[i] & (v[i] - 1)))) {
            snprintf(why, whylen, "%s = %zu: expected %s from %zu to %zu", gemm_direct_name(i),
                     v[i], i <= GEMM_VWND ? "a power of two" : "a value", lo[i], hi[i]);
            return 0;
        }
    const size_t W = v[GEMM_WGD], threads = v[GEMM_MDIMCD] * v[GEMM_NDIMCD];
    if (threads % v[GEMM_MDIMAD] || threads % v[GEMM_NDIMBD]) { /* before dividing by them */
        snprintf(why, whylen,
                 "MDIMAD = %zu and NDIMBD = %zu must divide MDIMCD * NDIMCD = %zu (the work-items "
                 "that load the tiles)",
                 v[GEMM_MDIMAD], v[GEMM_NDIMBD], threads);
        return 0;
    }
    const int ok = W % v[GEMM_KWID] == 0 && W % (v[GEMM_MDIMCD] * v[GEMM_VWMD]) == 0 &&
                   W % (v[GEMM_NDIMCD] * v[GEMM_VWND]) == 0 &&
                   W % (v[GEMM_MDIMAD] * v[GEMM_VWMD]) == 0 &&
                   W % (v[GEMM_NDIMBD] * v[GEMM_VWND]) == 0 && W % (threads / v[GEMM_MDIMAD]) == 0 &&
                   W % (threads / v[GEMM_NDIMBD]) == 0;
    if (!ok) {
        snprintf(why, whylen,
                 "WGD = %zu is not a multiple of KWID, MDIMCD*VWMD, NDIMCD*VWND, MDIMAD*VWMD, "
                 "NDIMBD*VWND, MDIMCD*NDIMCD/MDIMAD and MDIMCD*NDIMCD/NDIMBD",
                 W);
        return 0;
    }
    if (threads > max_group) {
        snprintf(why, whylen, "MDIMCD * NDIMCD = %zu work-items; the device allows %zu", threads,
                 max_group);
        return 0;
    }
    const size_t local = elem * (W * (W + v[GEMM_PADA]) + W * (W + v[GEMM_PADB]));
    if (local > local_bytes) {
        snprintf(why, whylen, "the tiles need %zu bytes of local memory; the device has %zu", local,
                 local_bytes);
        return 0;
    }
    return 1;
}

#if defined(BCL_HAVE_CLBLAST) || defined(BATCHCL_TUNE_CLBLAST)
#include <clblast_c.h>
/* Hand the set v to clBLAST for the device and precision (it keeps it for the process). */
static inline CLBlastStatusCode gemm_direct_give(cl_device_id device, int dbl,
                                                 const size_t v[GEMM_DIRECT_PARAMS])
{
    const char *names[GEMM_DIRECT_PARAMS];
    for (int i = 0; i < GEMM_DIRECT_PARAMS; ++i)
        names[i] = gemm_direct_name(i);
    return CLBlastOverrideParameters(device, "XgemmDirect",
                                     dbl ? CLBlastPrecisionDouble : CLBlastPrecisionSingle,
                                     GEMM_DIRECT_PARAMS, names, v);
}
#endif

#endif
