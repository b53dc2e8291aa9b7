/* Householder tridiagonalization A = Q T Q^T of batched symmetric matrices, T = tridiag(e, d, e)
 * (Abbas-Turki & Graillat 2016, Sect. 4, Algorithm 2: symmetric-small-systems-abbas-turki-
 * graillat-2016.txt), and the back-substitution pieces of the solve x = Q PCR(T, Q^T b).
 *
 * Mappings (build options): NT work-items per matrix. NT = 1 is the paper's SIMD version, and then
 * VW matrices ride in the lanes of an OpenCL vector (CPUs); NT > 1 (VW = 1) is its collaborative
 * version, the loops over rows shared by the work-items. The matrix lives in local memory (full
 * n x n, column-major), reduced as LAPACK's dsytd2 does for the lower triangle:
 *   H_j = I - tau_j v v^T, v = (0..0, 1, v_{j+2}..v_{n-1}), applied from both sides as the rank-2
 *   update A <- A - v w^T - w v^T, p = tau A v, w = p - (tau/2)(p^T v) v;
 * then Q = H_0 H_1 ... H_{n-3} is generated in place over the reflectors (as dorg2r does), so a
 * single n x n buffer serves both. Y = Q^T B when asked. */

#ifndef NT
#define NT 1
#endif

#define SYTRD_FORM_Q 1  /* write Q */
#define SYTRD_APPLY_B 2 /* write Y = Q^T B */

#define SA(i, j) sA[(j) * n + (i)]

/* load one element of VW problems starting at `first` (idle lanes repeat the last problem) */
#define GATHER(dst, ptr, off, e, per)                                                            \
    do {                                                                                         \
        lanes_t g_;                                                                              \
        for (int v_ = 0; v_ < VW; ++v_)                                                          \
            g_.s[v_] = ptr[off + BATCH_INDEX(first + min((uint)v_, lanes - 1u), (uint)(e), per,  \
                                             stride)];                                           \
        dst = g_.v;                                                                              \
    } while (0)
#define SCATTER(ptr, off, e, per, val)                                                           \
    do {                                                                                         \
        lanes_t s_;                                                                              \
        s_.v = (val);                                                                            \
        for (int v_ = 0; v_ < (int)lanes; ++v_)                                                  \
            ptr[off + BATCH_INDEX(first + (uint)v_, (uint)(e), per, stride)] = s_.s[v_];         \
    } while (0)

__kernel void sytrd(__global const real *A, ulong offA, __global real *Q, ulong offQ,
                    __global real *D, ulong offD, __global real *E, ulong offE,
                    __global const real *B, ulong offB, __global real *Y, ulong offY, int n,
                    int nrhs, uint count, ulong stride, int mode, __local realv *lds)
{
    const int lid = (int)get_local_id(0);
    const int w = lid / NT, t = lid - w * NT;
    const int mpg = (int)get_local_size(0) / NT;
    const uint first = ((uint)get_group_id(0) * (uint)mpg + (uint)w) * VW;
    const uint lanes = first < count ? min((uint)VW, count - first) : 0u;
    const bool active = lanes > 0;
    const int per = n * n + 5 * n + 4;
    __local realv *sA = lds + w * per;
    __local realv *vv = sA + n * n, *pv = vv + n, *tau = pv + n, *dv = tau + n, *ev = dv + n;
    __local realv *scal = ev + n; /* 0, 1: reflector scalars; 2, 3: the scaling and its undoing */
    const uint nn = (uint)(n * n), nb = (uint)(n * nrhs);

    /* the lower triangle, mirrored (only it is read) */
    if (active)
        for (int q = t; q < n * n; q += NT) {
            const int i = q % n, j = q / n;
            realv x;
            GATHER(x, A, offA, i >= j ? q : i * n + j, nn);
            sA[q] = x;
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* matrices with norms outside [SCALE_MIN, SCALE_MAX] are reduced scaled, as LAPACK does: the
     * largest magnitude from partial maxima over strided entries, met in the 5n work vectors
     * (no barrier in a loop of rounds here: with one, PoCL 3.1 lost the later local stores) */
    {
        __local realv *part = vv;
        const int parts = min(NT, 5 * n);
        if (t < parts && active) { /* an empty slot's sA was never loaded */
            realv m = (realv)0;
            for (int q = t; q < n * n; q += parts)
                m = fmax(m, fabs(sA[q]));
            part[t] = m;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t == 0 && active) {
            realv m = part[0];
            for (int i = 1; i < parts; ++i)
                m = fmax(m, part[i]);
            const maskv small = (maskv)(m > (realv)0 && m < (realv)SCALE_MIN);
            const maskv large = (maskv)(m > (realv)SCALE_MAX);
            scal[2] = select(select((realv)1, (realv)SCALE_MAX / m, large), (realv)SCALE_MIN / m, small);
            scal[3] = select(select((realv)1, m / (realv)SCALE_MAX, large), m / (realv)SCALE_MIN, small);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const realv sc = active ? scal[2] : (realv)1;
        if (active)
            for (int q = t; q < n * n; q += NT)
                sA[q] *= sc;
    }

    for (int j = 0; j < n - 1; ++j) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t == 0 && active) {
            const realv alpha = SA(j + 1, j);
            realv sigma = (realv)0;
            for (int i = j + 2; i < n; ++i)
                sigma += SA(i, j) * SA(i, j);
            const maskv refl = (maskv)(sigma != (realv)0);
            const realv nrm = sqrt(alpha * alpha + sigma);
            const realv beta = select(nrm, -nrm, (maskv)(alpha >= (realv)0));
            /* no reflection where the column is already reduced (always at j = n-2) */
            tau[j] = select((realv)0, (beta - alpha) / beta, refl);
            scal[0] = select((realv)0, (realv)1 / (alpha - beta), refl);
            ev[j] = select(alpha, beta, refl);
            dv[j] = SA(j, j);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* v below the diagonal, kept in column j for the generation of Q */
        if (active)
            for (int i = j + 1 + t; i < n; i += NT) {
                const realv vi = i == j + 1 ? (realv)1 : SA(i, j) * scal[0];
                vv[i] = vi;
                if (i > j + 1)
                    SA(i, j) = vi;
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = j + 1 + t; i < n; i += NT) {
                realv s = (realv)0;
                for (int k = j + 1; k < n; ++k)
                    s += SA(i, k) * vv[k];
                pv[i] = tau[j] * s;
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t == 0 && active) {
            realv s = (realv)0;
            for (int i = j + 1; i < n; ++i)
                s += pv[i] * vv[i];
            scal[1] = (realv)0.5 * tau[j] * s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = j + 1 + t; i < n; i += NT) {
                const realv vi = vv[i], wi = pv[i] - scal[1] * vv[i];
                for (int k = j + 1; k < n; ++k)
                    SA(i, k) -= vi * (pv[k] - scal[1] * vv[k]) + wi * vv[k];
            }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0 && active)
        dv[n - 1] = SA(n - 1, n - 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active)
        for (int i = t; i < n; i += NT) {
            SCATTER(D, offD, i, n, dv[i] * scal[3]);
            if (i < n - 1)
                SCATTER(E, offE, i, n - 1, ev[i] * scal[3]);
        }

    /* Q = diag(1, Qs), Qs = H_0 ... H_{n-3} generated in place: reflector k sits in column k (rows
     * k+2..), implicit 1 at row k+1; Qs's column k becomes global column k+1. Always generated:
     * barriers must not sit in a branch (CPU compilers), only the store depends on the mode. */
    {
        /* columns past the last reflector: identity */
        if (active)
            for (int q = t; q < n * n; q += NT) {
                const int i = q % n, c = q / n;
                if (c >= n - 1) /* column 0 still holds reflector 0: it is set at the end */
                    sA[q] = (realv)(i == c ? 1 : 0);
            }
        for (int k = n - 3; k >= 0; --k) {
            barrier(CLK_LOCAL_MEM_FENCE);
            /* H_k applied to the columns right of it: rows k+1.. of global columns k+2.. */
            if (active)
                for (int c = k + 2 + t; c < n; c += NT) {
                    realv s = SA(k + 1, c);
                    for (int i = k + 2; i < n; ++i)
                        s += SA(i, k) * SA(i, c);
                    s *= tau[k];
                    SA(k + 1, c) -= s;
                    for (int i = k + 2; i < n; ++i)
                        SA(i, c) -= s * SA(i, k);
                }
            barrier(CLK_LOCAL_MEM_FENCE);
            /* global column k+1 = H_k e_{k+1}: 1 - tau at row k+1, -tau v below, 0 above */
            if (active)
                for (int i = t; i < n; i += NT) {
                    realv q = (realv)0;
                    if (i == k + 1)
                        q = (realv)1 - tau[k];
                    else if (i > k + 1)
                        q = -tau[k] * SA(i, k);
                    SA(i, k + 1) = q;
                }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (n >= 2 && active) /* column 0 and row 0 of diag(1, Qs), once the reflectors are used */
            for (int i = t; i < n; i += NT) {
                SA(i, 0) = (realv)(i == 0 ? 1 : 0);
                SA(0, i) = (realv)(i == 0 ? 1 : 0);
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        if ((mode & SYTRD_FORM_Q) && active)
            for (int q = t; q < n * n; q += NT)
                SCATTER(Q, offQ, q, nn, sA[q]);
    }

    /* Y = Q^T B, one right-hand side at a time through the work vector */
    const int napply = (mode & SYTRD_APPLY_B) ? nrhs : 0;
    for (int c = 0; c < napply; ++c) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = t; i < n; i += NT) {
                realv x;
                GATHER(x, B, offB, c * n + i, nb);
                vv[i] = x;
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = t; i < n; i += NT) {
                realv s = (realv)0;
                for (int r = 0; r < n; ++r)
                    s += SA(r, i) * vv[r];
                SCATTER(Y, offY, c * n + i, nb, s);
            }
    }
}

/* X = Q Z for every right-hand side (rows shared by NT work-items). A problem whose info is set
 * gets X = B (B NULL: when X held B in place, Q Z then gives B back within rounding). */
__kernel void sytrd_apply(__global const real *Q, ulong offQ, __global real *X, ulong offX,
                          __global const real *B, ulong offB, __global const int *info,
                          ulong offInfo, int n, int nrhs, uint count, ulong stride,
                          __local real *lds)
{
    const int lid = (int)get_local_id(0);
    const int w = lid / NT, t = lid - w * NT;
    const int mpg = (int)get_local_size(0) / NT;
    const uint prob = (uint)get_group_id(0) * (uint)mpg + (uint)w;
    const bool active = prob < count;
    const uint k = active ? prob : 0u;
    __local real *z = lds + w * n;
    const uint nn = (uint)(n * n), nb = (uint)(n * nrhs);
    const bool failed = info != 0 && active && info[offInfo + k] != 0;
    for (int c = 0; c < nrhs; ++c) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = t; i < n; i += NT)
                z[i] = X[offX + BATCH_INDEX(k, (uint)(c * n + i), nb, stride)];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active)
            for (int i = t; i < n; i += NT) {
                const ulong at = BATCH_INDEX(k, (uint)(c * n + i), nb, stride);
                real s = (real)0;
                for (int r = 0; r < n; ++r)
                    s += Q[offQ + BATCH_INDEX(k, (uint)(r * n + i), nn, stride)] * z[r];
                X[offX + at] = (failed && B != 0) ? B[offB + at] : s;
            }
    }
}

/* The scaled residual max_c ||A x_c - b_c||_inf / (||A||_inf ||x_c||_inf n eps) of every problem
 * (A symmetric, its lower triangle read), in the working precision; one work-item per problem. */
__kernel void residual(__global const real *A, ulong offA, __global const real *B, ulong offB,
                       __global const real *X, ulong offX, __global real *resid, ulong offR,
                       int n, int nrhs, uint count, ulong stride)
{
    const uint k = (uint)get_global_id(0);
    if (k >= count)
        return; /* no barrier in this kernel */
    const uint nn = (uint)(n * n), nb = (uint)(n * nrhs);
    const real eps = (real)(sizeof(real) == 8 ? 0x1p-53 : 0x1p-24);
    real amax = (real)0, worst = (real)0;
    for (int i = 0; i < n; ++i) {
        real arow = (real)0;
        for (int j = 0; j < n; ++j)
            arow += fabs(A[offA + BATCH_INDEX(k, (uint)(i >= j ? j * n + i : i * n + j), nn, stride)]);
        amax = fmax(amax, arow);
    }
    for (int c = 0; c < nrhs; ++c) {
        real rmax = (real)0, xmax = (real)0;
        for (int i = 0; i < n; ++i) {
            real r = -B[offB + BATCH_INDEX(k, (uint)(c * n + i), nb, stride)];
            for (int j = 0; j < n; ++j)
                r += A[offA + BATCH_INDEX(k, (uint)(i >= j ? j * n + i : i * n + j), nn, stride)] *
                     X[offX + BATCH_INDEX(k, (uint)(c * n + j), nb, stride)];
            rmax = fmax(rmax, fabs(r));
            xmax = fmax(xmax, fabs(X[offX + BATCH_INDEX(k, (uint)(c * n + i), nb, stride)]));
        }
        const real scaled = rmax == (real)0 ? (real)0 : rmax / (amax * xmax * (real)n * eps);
        worst = (isnan(scaled) || isnan(worst)) ? (real)NAN : fmax(worst, scaled);
    }
    resid[offR + k] = worst;
}
