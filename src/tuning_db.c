/* Tuning files (tuning/db/<device>.json, written by batchcl-tune): found along the search path, parsed
 * with cJSON, matched to the context's device (exact device, architecture, vendor and type, type)
 * and kept in priority order for bcl_tuning_lookup. A file that cannot be used is reported once
 * per process on stderr and in bcl_tuning_report, and skipped; nothing here fails a call. */
#include "internal.h"
#include "tuning_fields.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TUNING_FORMAT "batchcl-tuning"
#define TUNING_VERSION 1

/* ---- the report ---- */

static void report(bcl_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void report(bcl_context *ctx, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    const size_t old = ctx->tuning_report ? strlen(ctx->tuning_report) : 0;
    char *grown = realloc(ctx->tuning_report, old + strlen(line) + 2);
    if (!grown)
        return;
    memcpy(grown + old, line, strlen(line));
    grown[old + strlen(line)] = '\n';
    grown[old + strlen(line) + 1] = 0;
    ctx->tuning_report = grown;
}

/* Problems with a file go to stderr too, once per process for each distinct message. */
static void warn_once(const char *msg)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static uint64_t seen[256];
    static int nseen;
    const uint64_t h = bcl_hash(msg, strlen(msg), BCL_HASH_SEED);
    pthread_mutex_lock(&lock);
    int fresh = 1;
    for (int i = 0; i < nseen; ++i)
        if (seen[i] == h)
            fresh = 0;
    if (fresh && nseen < 256)
        seen[nseen++] = h;
    pthread_mutex_unlock(&lock);
    if (fresh)
        fprintf(stderr, "batchcl: warning: %s\n", msg);
}

/* ---- parsing ---- */

static const char *get_string(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int is_integer(const cJSON *v)
{
    return cJSON_IsNumber(v) && fabs(v->valuedouble) < 1e15 &&
           v->valuedouble == floor(v->valuedouble);
}

/* The params object of an entry: known fields with values in range. */
static int parse_params(const cJSON *obj, bcl_params *p, char *why, size_t whylen)
{
    memset(p, 0, sizeof *p);
    if (!cJSON_IsObject(obj)) {
        snprintf(why, whylen, "\"params\" is not an object");
        return 0;
    }
    for (const cJSON *item = obj->child; item; item = item->next) {
        const bcl_tuning_field *f = NULL;
        for (size_t i = 0; i < BCL_TUNING_FIELD_COUNT; ++i)
            if (!strcmp(item->string, bcl_tuning_fields[i].name))
                f = &bcl_tuning_fields[i];
        if (!f) {
            snprintf(why, whylen, "\"%s\" is not a tuning parameter", item->string);
            return 0;
        }
        if (f->kind == BCL_FIELD_MAPPING) {
            const int m = cJSON_IsString(item) ? bcl_mapping_from_key(item->valuestring) : -1;
            if (m < 0) {
                snprintf(why, whylen,
                         "\"%s\" must be one of auto, simd, collaborative, hybrid, swb, mwb",
                         item->string);
                return 0;
            }
            bcl_field_set(p, f, m);
            continue;
        }
        if (!is_integer(item) || item->valuedouble < (double)f->lo ||
            item->valuedouble > (double)f->hi) {
            snprintf(why, whylen, "\"%s\" must be an integer in %ld..%ld", item->string, f->lo,
                     f->hi);
            return 0;
        }
        bcl_field_set(p, f, (long)item->valuedouble);
    }
    /* what bcl_set_params would refuse, a file may not set either */
    return bcl_params_check(p, why, whylen);
}

/* A pcyclic entry's "model": the performance model's constants (bcl_pcyclic_calibrate), each a
 * finite number; the host step and the GEMM rate positive and required, the host shares'
 * constants (host GEMM rate and link rate positive, call costs not negative) optional: files
 * written before they were measured lack them, and the host then takes no share. */
static int parse_model(const cJSON *obj, bcl_pcyclic_model *m, char *why, size_t whylen)
{
    enum { REQUIRED = 3, KEYS = 7 };
    static const char *const keys[KEYS] = {"host_step_s",      "dev_gemm_flops",
                                           "dev_gemm_call_s",  "host_gemm_flops",
                                           "host_gemm_call_s", "link_bytes_s",
                                           "link_call_s"};
    /* which must be positive (the others non-negative) */
    static const int positive[KEYS] = {1, 1, 0, 1, 0, 1, 0};
    double v[KEYS];
    if (!cJSON_IsObject(obj)) {
        snprintf(why, whylen, "\"model\" is not an object");
        return 0;
    }
    int present = 0;
    for (int i = 0; i < KEYS; ++i) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, keys[i]);
        if (!item && i >= REQUIRED) {
            v[i] = 0;
            continue;
        }
        ++present;
        v[i] = cJSON_IsNumber(item) ? item->valuedouble : NAN;
        if (!isfinite(v[i]) || v[i] < 0 || (positive[i] && v[i] == 0)) {
            snprintf(why, whylen, "\"model\" needs \"%s\", a %s number", keys[i],
                     positive[i] ? "positive" : "non-negative");
            return 0;
        }
    }
    int seen = 0;
    for (const cJSON *item = obj->child; item; item = item->next, ++seen) {
        int known = 0;
        for (int i = 0; i < KEYS; ++i)
            known |= !strcmp(item->string, keys[i]);
        if (!known) {
            snprintf(why, whylen, "\"model\": \"%s\" is not one of its constants", item->string);
            return 0;
        }
    }
    if (seen != present) {
        snprintf(why, whylen, "\"model\" repeats a constant");
        return 0;
    }
    m->host_step_s = v[0];
    m->dev_gemm_flops = v[1];
    m->dev_gemm_call_s = v[2];
    m->host_gemm_flops = v[3];
    m->host_gemm_call_s = v[4];
    m->link_bytes_s = v[5];
    m->link_call_s = v[6];
    return 1;
}

/* A file's "clblast" object: per precision ("s", "d") the parameters of clBLAST's direct GEMM
 * ("XgemmDirect": all ten, a set clBLAST can build) and what the tuner measured (numbers and
 * strings, read by people only). The device's own limits are checked when the set is used. */
static int parse_clblast(const cJSON *obj, bcl_tuning_file *file, char *why, size_t whylen)
{
    if (!cJSON_IsObject(obj)) {
        snprintf(why, whylen, "\"clblast\" is not an object");
        return 0;
    }
    for (const cJSON *prec = obj->child; prec; prec = prec->next) {
        const int dbl = !strcmp(prec->string, "d");
        if ((!dbl && strcmp(prec->string, "s")) || !cJSON_IsObject(prec)) {
            snprintf(why, whylen, "\"clblast\": \"%s\" is not a precision (\"s\" or \"d\") "
                     "holding an object", prec->string);
            return 0;
        }
        if (file->has_gemm_direct[dbl]) {
            snprintf(why, whylen, "\"clblast\" repeats \"%s\"", prec->string);
            return 0;
        }
        const cJSON *set = cJSON_GetObjectItemCaseSensitive(prec, "XgemmDirect");
        if (!cJSON_IsObject(set)) {
            snprintf(why, whylen, "\"clblast\": \"%s\" needs an object \"XgemmDirect\"",
                     prec->string);
            return 0;
        }
        size_t v[GEMM_DIRECT_PARAMS];
        int seen = 0; /* a bit per parameter */
        for (const cJSON *item = set->child; item; item = item->next) {
            int i = 0;
            while (i < GEMM_DIRECT_PARAMS && strcmp(item->string, gemm_direct_name(i)))
                ++i;
            if (i == GEMM_DIRECT_PARAMS || !is_integer(item) || item->valuedouble < 0 ||
                item->valuedouble > 1024) {
                snprintf(why, whylen,
                         "\"clblast\": \"%s\": \"%s\" is not one of XgemmDirect's parameters "
                         "with an integer value",
                         prec->string, item->string);
                return 0;
            }
            if (seen & 1 << i) {
                snprintf(why, whylen, "\"clblast\": \"%s\": XgemmDirect repeats %s",
                         prec->string, item->string);
                return 0;
            }
            seen |= 1 << i;
            v[i] = (size_t)item->valuedouble;
        }
        char detail[200];
        if (seen != (1 << GEMM_DIRECT_PARAMS) - 1) {
            snprintf(why, whylen,
                     "\"clblast\": \"%s\": XgemmDirect needs each of its %d parameters once",
                     prec->string, GEMM_DIRECT_PARAMS);
            return 0;
        }
        if (!gemm_direct_valid(v, dbl ? 8 : 4, (size_t)-1, (size_t)-1, detail, sizeof detail)) {
            snprintf(why, whylen, "\"clblast\": \"%s\": %s", prec->string, detail);
            return 0;
        }
        memcpy(file->gemm_direct[dbl], v, sizeof v);
        file->has_gemm_direct[dbl] = 1;
    }
    return 1;
}

/* The device type as the files spell it. */
static const char *device_type_key(const bcl_context *ctx)
{
    cl_device_type type = 0;
    clGetDeviceInfo(ctx->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    return type & CL_DEVICE_TYPE_GPU ? "GPU" : type & CL_DEVICE_TYPE_CPU ? "CPU" : "ACCELERATOR";
}

/* How well a file's device matches this one; 0 when it is for another type of device. */
static int match_level(const bcl_context *ctx, const cJSON *dev)
{
    const char *name = get_string(dev, "name"), *vendor = get_string(dev, "vendor"),
               *type = get_string(dev, "type"), *arch = get_string(dev, "architecture");
    if (strcmp(type, device_type_key(ctx)) != 0)
        return 0;
    if (!strcmp(vendor, ctx->dev.vendor) && !strcmp(name, ctx->dev.name))
        return BCL_TUNING_EXACT;
    if (arch && *arch && !strcmp(arch, ctx->dev.architecture))
        return BCL_TUNING_ARCHITECTURE;
    if (!strcmp(vendor, ctx->dev.vendor))
        return BCL_TUNING_VENDOR;
    return BCL_TUNING_DEVICE_TYPE;
}

/* Parse and check a whole file. Returns the file (level 0: for another device type) or NULL with
 * the reason in why. */
static bcl_tuning_file *parse_file(const bcl_context *ctx, const char *path, char *why,
                                   size_t whylen)
{
    size_t len = 0;
    errno = 0;
    char *text = bcl_read_file(path, &len);
    if (!text) {
        snprintf(why, whylen, "cannot be read: %s", errno ? strerror(errno) : "read error");
        return NULL;
    }
    const char *end = NULL;
    /* the terminating NUL counted in: nothing may follow the object */
    cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (!root) {
        const size_t at = end && end >= text ? (size_t)(end - text) : 0;
        size_t line = 1;
        for (size_t i = 0; i < at && i < len; ++i)
            line += text[i] == '\n';
        snprintf(why, whylen, "not valid JSON (error at byte %zu, line %zu)", at, line);
        free(text);
        return NULL;
    }
    free(text);
    bcl_tuning_file *file = NULL;
    const char *format = get_string(root, "format");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "device");
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    if (!format || strcmp(format, TUNING_FORMAT) != 0) {
        snprintf(why, whylen, "not a batchcl tuning file (\"format\" is not \"%s\")",
                 TUNING_FORMAT);
        goto done;
    }
    if (!is_integer(version) || version->valuedouble != TUNING_VERSION) {
        snprintf(why, whylen, "format version %g, this library reads version %d",
                 cJSON_IsNumber(version) ? version->valuedouble : -1.0, TUNING_VERSION);
        goto done;
    }
    if (!cJSON_IsObject(dev) || !get_string(dev, "name") || !get_string(dev, "vendor") ||
        !get_string(dev, "type")) {
        snprintf(why, whylen, "no \"device\" object with \"name\", \"vendor\" and \"type\"");
        goto done;
    }
    if (!cJSON_IsArray(entries)) {
        snprintf(why, whylen, "no \"entries\" array");
        goto done;
    }
    file = calloc(1, sizeof *file);
    const int count = cJSON_GetArraySize(entries);
    if (!file || !(file->entries = calloc((size_t)(count > 0 ? count : 1), sizeof *file->entries)) ||
        !(file->path = strdup(path))) {
        snprintf(why, whylen, "does not fit in host memory");
        goto fail;
    }
    file->level = (bcl_tuning_level)match_level(ctx, dev);
    const char *driver = get_string(dev, "driver");
    const cJSON *units = cJSON_GetObjectItemCaseSensitive(dev, "compute_units");
    file->same_setup = file->level == BCL_TUNING_EXACT && driver &&
                       !strcmp(driver, ctx->dev.driver_version) && is_integer(units) &&
                       units->valuedouble == (double)ctx->dev.compute_units;
    int index = 0;
    for (const cJSON *e = entries->child; e; e = e->next, ++index) {
        const char *routine = get_string(e, "routine"), *precision = get_string(e, "precision");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "n");
        const int r = routine ? bcl_routine_from_key(routine) : -1;
        if (r < 0 || !precision || (strcmp(precision, "s") && strcmp(precision, "d")) ||
            !is_integer(n) || n->valuedouble < 1 || n->valuedouble > 1e6) {
            snprintf(why, whylen,
                     "entry %d needs \"routine\" (ldlt, tridiag, sytrd, geev or pcyclic), "
                     "\"precision\" (\"s\" or \"d\") and a size \"n\" >= 1",
                     index);
            goto fail;
        }
        bcl_tuned_entry *t = &file->entries[file->count];
        t->routine = (bcl_routine)r;
        t->dbl = precision[0] == 'd';
        t->n = (int)n->valuedouble;
        char detail[256];
        if (!parse_params(cJSON_GetObjectItemCaseSensitive(e, "params"), &t->params, detail,
                          sizeof detail)) {
            snprintf(why, whylen, "entry %d (%s, %s, n = %d): %s", index, routine, precision, t->n,
                     detail);
            goto fail;
        }
        const cJSON *model = cJSON_GetObjectItemCaseSensitive(e, "model");
        if (model && (t->routine != BCL_ROUTINE_PCYCLIC ||
                      !parse_model(model, &t->model, detail, sizeof detail))) {
            snprintf(why, whylen, "entry %d (%s, %s, n = %d): %s", index, routine, precision, t->n,
                     t->routine != BCL_ROUTINE_PCYCLIC ? "only pcyclic entries hold a \"model\""
                                                       : detail);
            goto fail;
        }
        t->has_model = model != NULL;
        const cJSON *tp = cJSON_GetObjectItemCaseSensitive(e, "throughput");
        const cJSON *dp = cJSON_GetObjectItemCaseSensitive(e, "default_throughput");
        t->throughput = cJSON_IsNumber(tp) ? tp->valuedouble : 0;
        t->default_throughput = cJSON_IsNumber(dp) ? dp->valuedouble : 0;
        file->count++;
    }
    const cJSON *gemm = cJSON_GetObjectItemCaseSensitive(root, "clblast");
    if (gemm && !parse_clblast(gemm, file, why, whylen))
        goto fail;
    goto done;
fail:
    if (file) {
        free(file->entries);
        free(file->path);
        free(file);
    }
    file = NULL;
done:
    cJSON_Delete(root);
    return file;
}

/* ---- the search ---- */

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json files of dir, sorted; NULL (count 0) when it does not exist. */
static char **list_json(const char *dir, int *count)
{
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **names = NULL;
    int cap = 0;
    for (struct dirent *ent; (ent = readdir(d));) {
        const size_t len = strlen(ent->d_name);
        if (len < 6 || strcmp(ent->d_name + len - 5, ".json") != 0 || ent->d_name[0] == '.')
            continue;
        if (*count == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(names, (size_t)cap * sizeof *names);
            if (!grown)
                break;
            names = grown;
        }
        if ((names[*count] = strdup(ent->d_name)))
            ++*count;
    }
    closedir(d);
    if (*count)
        qsort(names, (size_t)*count, sizeof *names, compare_names);
    return names;
}

static const char *level_name(int level)
{
    switch (level) {
    case BCL_TUNING_EXACT:
        return "this device";
    case BCL_TUNING_ARCHITECTURE:
        return "the same architecture";
    case BCL_TUNING_VENDOR:
        return "the same vendor and device type";
    case BCL_TUNING_DEVICE_TYPE:
        return "the same device type";
    default:
        return "another type of device";
    }
}

void bcl_tuning_release(bcl_context *ctx)
{
    while (ctx->tuning) {
        bcl_tuning_file *f = ctx->tuning;
        ctx->tuning = f->next;
        free(f->entries);
        free(f->path);
        free(f);
    }
    free(ctx->tuning_report);
    ctx->tuning_report = NULL;
}

int bcl_tuning_pcyclic_model(const bcl_context *ctx, int dbl, int n, bcl_pcyclic_model *out)
{
    for (const bcl_tuning_file *f = ctx->tuning; f && f->level == BCL_TUNING_EXACT; f = f->next) {
        if (!f->same_setup)
            continue;
        for (size_t i = 0; i < f->count; ++i) {
            const bcl_tuned_entry *t = &f->entries[i];
            if (t->routine == BCL_ROUTINE_PCYCLIC && t->has_model && t->dbl == dbl && t->n == n) {
                *out = t->model;
                return 1;
            }
        }
    }
    return 0;
}

void bcl_tuning_load(bcl_context *ctx)
{
    bcl_tuning_release(ctx);
    ctx->pcyclic_models = 0; /* models taken from the previous files */
    ctx->gemm_direct_state[0] = ctx->gemm_direct_state[1] = 0;
    char *path = ctx->tuning_path_set ? strdup(ctx->tuning_path ? ctx->tuning_path : "")
                                      : bcl_data_search_path("BATCHCL_TUNING_DIR", "tuning",
                                                             BCL_INSTALL_TUNING_DIR,
                                                             BCL_SOURCE_TUNING_DIR);
    if (!path)
        return;
    /* every usable file with its level, in path order; the same file reached twice counts once */
    bcl_tuning_file *found = NULL, **tail = &found;
    struct stat seen[64];
    int nseen = 0;
    for (char *save = NULL, *dir = strtok_r(path, ":", &save); dir;
         dir = strtok_r(NULL, ":", &save)) {
        int count = 0;
        char **names = list_json(dir, &count);
        for (int i = 0; i < count; ++i) {
            char file[2048];
            snprintf(file, sizeof file, "%s/%s", dir, names[i]);
            free(names[i]);
            struct stat st;
            if (stat(file, &st) != 0) {
                report(ctx, "tuning file %s: cannot be read (%s); skipped", file, strerror(errno));
                continue;
            }
            int dup = 0;
            for (int k = 0; k < nseen && !dup; ++k)
                dup = seen[k].st_dev == st.st_dev && seen[k].st_ino == st.st_ino;
            if (dup)
                continue;
            if (nseen < 64)
                seen[nseen++] = st;
            char why[1024];
            bcl_tuning_file *f = parse_file(ctx, file, why, sizeof why);
            if (!f) {
                char msg[3200];
                snprintf(msg, sizeof msg, "tuning file %s: %s; skipped", file, why);
                report(ctx, "%s", msg);
                warn_once(msg);
                continue;
            }
            if (!f->level) {
                report(ctx, "tuning file %s: for another type of device, not used", file);
                free(f->entries);
                free(f->path);
                free(f);
                continue;
            }
            *tail = f;
            tail = &f->next;
        }
        free(names);
    }
    free(path);
    /* priority: level first, path order within a level (the list is in path order) */
    bcl_tuning_file **link = &ctx->tuning;
    for (int level = BCL_TUNING_EXACT; level <= BCL_TUNING_DEVICE_TYPE; ++level)
        for (bcl_tuning_file **at = &found; *at;) {
            bcl_tuning_file *f = *at;
            if ((int)f->level != level) {
                at = &f->next;
                continue;
            }
            *at = f->next;
            f->next = NULL;
            *link = f;
            link = &f->next;
            report(ctx, "tuning file %s: %zu entries, for %s", f->path, f->count,
                   level_name(level));
        }
}

bcl_status bcl_set_tuning_path(bcl_context *ctx, const char *paths)
{
    if (!ctx)
        return bcl_fail(NULL, BCL_INVALID_ARGUMENT, "bcl_set_tuning_path: argument 1 (ctx) is NULL");
    char *copy = NULL;
    if (paths && !(copy = strdup(paths)))
        return bcl_fail(ctx, BCL_OUT_OF_MEMORY, "bcl_set_tuning_path: out of host memory");
    free(ctx->tuning_path);
    ctx->tuning_path = copy;
    ctx->tuning_path_set = paths != NULL;
    bcl_tuning_load(ctx);
    return BCL_SUCCESS;
}

const char *bcl_tuning_report(const bcl_context *ctx)
{
    return ctx && ctx->tuning_report ? ctx->tuning_report : "";
}
