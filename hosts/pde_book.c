/* The PDE pricer's input: books of contracts (CSV, JSON through cJSON when available), their
 * checks, a random book generator, and local volatility surfaces. */
#include "pde_core.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#ifdef PDE_HAVE_CJSON
#include <cJSON.h>
#endif

const char pde_csv_header[] =
    "id,type,style,spot,strike,maturity,rate,yield,lower_barrier,upper_barrier,dividends";

int pde_fail(char *err, size_t cap, const char *fmt, ...)
{
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

char *pde_read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        const long size = ftell(f);
        if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size + 1))) {
            if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
                free(buf);
                buf = NULL;
            } else {
                buf[size] = 0;
                if (len)
                    *len = (size_t)size;
            }
        }
    }
    fclose(f);
    return buf;
}

static char *read_book_file(const char *path, char *err, size_t cap)
{
    char *text = pde_read_text(path, NULL);
    if (!text)
        pde_fail(err, cap, "cannot read %s", path);
    return text;
}

void pde_vanilla(pde_contract *c, const char *id, int is_call, double spot, double strike,
                 double maturity, double rate, double yield)
{
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    c->is_call = is_call;
    c->spot = spot;
    c->strike = strike;
    c->maturity = maturity;
    c->rate = rate;
    c->yield = yield;
}

/* ---- model terms ---- */

void pde_dividend_terms_get(const pde_contract *c, pde_dividend_terms *d)
{
    const double mu = c->rate - c->yield, T = c->maturity;
    int order[PDE_MAXDIV];
    const int n = c->ndiv < 0 ? 0 : c->ndiv > PDE_MAXDIV ? PDE_MAXDIV : c->ndiv;
    for (int j = 0; j < n; ++j)
        order[j] = j;
    for (int j = 1; j < n; ++j) /* insertion sort by time, stable */
        for (int i = j; i > 0 && c->div_time[order[i]] < c->div_time[order[i - 1]]; --i) {
            const int t = order[i];
            order[i] = order[i - 1];
            order[i - 1] = t;
        }
    double keep = 1;
    d->ndiv = n;
    d->K0 = c->spot;
    d->RT = exp(mu * T);
    d->AT = 0;
    for (int j = 0; j < n; ++j) {
        const int o = order[j];
        keep *= 1 - c->div_prop[o];
        d->time[j] = c->div_time[o];
        d->keep[j] = 1 - c->div_prop[o];
        d->scaled_cash[j] = c->div_cash[o] / (exp(mu * c->div_time[o]) * keep);
        d->K0 -= d->scaled_cash[j];
        if (c->div_time[o] < T)
            d->RT *= d->keep[j];
        else
            d->AT += d->scaled_cash[j];
    }
}

/* ---- checks ---- */

int pde_check_contract(const pde_contract *c, char *err, size_t cap)
{
    if (!(c->spot > 0) || !isfinite(c->spot))
        return pde_fail(err, cap, "spot %g must be positive", c->spot);
    if (!(c->strike > 0) || !isfinite(c->strike))
        return pde_fail(err, cap, "strike %g must be positive", c->strike);
    if (!(c->maturity > 0) || !isfinite(c->maturity))
        return pde_fail(err, cap, "maturity T = %g must be positive", c->maturity);
    if (!isfinite(c->rate) || !isfinite(c->yield) || fabs(c->rate) > 1 || fabs(c->yield) > 1)
        return pde_fail(err, cap, "rate %g and yield %g must be finite rates below 100%%", c->rate,
                    c->yield);
    if (c->lower_barrier < 0 || !isfinite(c->lower_barrier) || c->upper_barrier < 0 ||
        !isfinite(c->upper_barrier))
        return pde_fail(err, cap, "barriers must be positive (or 0 for none)");
    if (c->lower_barrier > 0 && !(c->lower_barrier < c->spot))
        return pde_fail(err, cap, "down-and-out barrier %g must lie below the spot %g", c->lower_barrier,
                    c->spot);
    if (c->upper_barrier > 0 && !(c->upper_barrier > c->spot))
        return pde_fail(err, cap, "up-and-out barrier %g must lie above the spot %g", c->upper_barrier,
                    c->spot);
    if (c->ndiv < 0 || c->ndiv > PDE_MAXDIV)
        return pde_fail(err, cap, "%d dividends: at most %d per contract", c->ndiv, PDE_MAXDIV);
    if (c->ndiv > 0 && (c->lower_barrier > 0 || c->upper_barrier > 0))
        return pde_fail(err, cap, "barrier contracts with discrete dividends are not supported (the "
                              "barrier would jump in the pricing coordinate at each dividend)");
    for (int j = 0; j < c->ndiv; ++j) {
        if (!(c->div_time[j] > 0) || !isfinite(c->div_time[j]))
            return pde_fail(err, cap, "dividend %d: time %g must be positive", j + 1, c->div_time[j]);
        if (!(c->div_cash[j] >= 0) || !isfinite(c->div_cash[j]))
            return pde_fail(err, cap, "dividend %d: cash amount %g must be >= 0", j + 1, c->div_cash[j]);
        if (!(c->div_prop[j] >= 0 && c->div_prop[j] < 1))
            return pde_fail(err, cap, "dividend %d: proportional part %g must be in [0, 1)", j + 1,
                        c->div_prop[j]);
    }
    return 0;
}

/* ---- CSV ---- */

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        ++s;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = 0;
    return s;
}

static int parse_number(const char *field, const char *name, int column, double *out, char *err,
                        size_t cap)
{
    char *end;
    if (!*field)
        return pde_fail(err, cap, "column %d (%s) is empty", column, name);
    *out = strtod(field, &end);
    if (*end || !isfinite(*out))
        return pde_fail(err, cap, "column %d (%s): '%s' is not a number", column, name, field);
    return 0;
}

static int parse_type(const char *s, pde_contract *c, char *err, size_t cap)
{
    if (!strcmp(s, "call") || !strcmp(s, "c") || !strcmp(s, "C"))
        c->is_call = 1;
    else if (!strcmp(s, "put") || !strcmp(s, "p") || !strcmp(s, "P"))
        c->is_call = 0;
    else
        return pde_fail(err, cap, "type '%s': must be call or put", s);
    return 0;
}

static int parse_style(const char *s, pde_contract *c, char *err, size_t cap)
{
    if (!*s || !strcmp(s, "european") || !strcmp(s, "e"))
        c->american = 0;
    else if (!strcmp(s, "american") || !strcmp(s, "a"))
        c->american = 1;
    else
        return pde_fail(err, cap, "style '%s': must be european or american", s);
    return 0;
}

/* "t:cash:prop;t:cash:prop" (prop may be left out) */
static int parse_dividends(char *s, pde_contract *c, char *err, size_t cap)
{
    c->ndiv = 0;
    for (char *item = s, *next; item; item = next) {
        next = strchr(item, ';');
        if (next)
            *next++ = 0;
        item = trim(item);
        if (!*item)
            continue;
        if (c->ndiv == PDE_MAXDIV)
            return pde_fail(err, cap, "more than %d dividends", PDE_MAXDIV);
        double v[3] = {0, 0, 0};
        int nv = 0;
        for (char *part = item;;) {
            char *colon = strchr(part, ':');
            if (colon)
                *colon = 0;
            if (nv == 3)
                return pde_fail(err, cap, "dividend %d: expected time:cash or time:cash:prop", c->ndiv + 1);
            char *end, *f = trim(part);
            v[nv++] = strtod(f, &end);
            if (!*f || *end)
                return pde_fail(err, cap, "dividend %d: '%s' is not a number (expected time:cash:prop)",
                            c->ndiv + 1, f);
            if (!colon)
                break;
            part = colon + 1;
        }
        if (nv < 2)
            return pde_fail(err, cap, "dividend %d: expected time:cash or time:cash:prop", c->ndiv + 1);
        c->div_time[c->ndiv] = v[0];
        c->div_cash[c->ndiv] = v[1];
        c->div_prop[c->ndiv] = v[2];
        ++c->ndiv;
    }
    return 0;
}

int pde_parse_csv_line(const char *line, pde_contract *c, char *err, size_t cap)
{
    static const char *const names[] = {"id", "type", "style", "spot", "strike", "maturity",
                                        "rate", "yield", "lower_barrier", "upper_barrier", "dividends"};
    char buf[2048];
    if (strlen(line) >= sizeof buf)
        return pde_fail(err, cap, "line longer than %zu characters", sizeof buf - 1);
    strcpy(buf, line);
    char *field[12];
    int nf = 0;
    for (char *p = buf, *comma; p; p = comma) {
        comma = strchr(p, ',');
        if (comma)
            *comma++ = 0;
        if (nf == 11)
            return pde_fail(err, cap, "more than 11 columns (%s)", pde_csv_header);
        field[nf++] = trim(p);
    }
    if (nf < 8)
        return pde_fail(err, cap, "%d columns, expected at least 8 (%s)", nf, pde_csv_header);
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", field[0]);
    if (parse_type(field[1], c, err, cap) || parse_style(field[2], c, err, cap))
        return -1;
    double *num[] = {&c->spot, &c->strike, &c->maturity, &c->rate, &c->yield};
    for (int i = 0; i < 5; ++i)
        if (parse_number(field[3 + i], names[3 + i], 4 + i, num[i], err, cap))
            return -1;
    for (int i = 8; i < 10 && i < nf; ++i)
        if (*field[i] && parse_number(field[i], names[i], i + 1, i == 8 ? &c->lower_barrier : &c->upper_barrier,
                                      err, cap))
            return -1;
    return nf == 11 ? parse_dividends(field[10], c, err, cap) : 0;
}

static int parse_book_csv(char *text, pde_contract **book, size_t *n, char *err, size_t cap)
{
    size_t count = 0, room = 0, lineno = 0;
    pde_contract *b = NULL;
    char why[256];
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        ++lineno;
        char *s = trim(line);
        if (!*s || *s == '#' || !strncmp(s, "id,", 3))
            continue;
        if (count == room) {
            room = room ? 2 * room : 64;
            pde_contract *more = realloc(b, room * sizeof *b);
            if (!more) {
                free(b);
                return pde_fail(err, cap, "out of host memory");
            }
            b = more;
        }
        if (pde_parse_csv_line(s, &b[count], why, sizeof why) ||
            pde_check_contract(&b[count], why, sizeof why)) {
            free(b);
            return pde_fail(err, cap, "line %zu: %s", lineno, why);
        }
        ++count;
    }
    *book = b;
    *n = count;
    return 0;
}

void pde_write_book_csv(FILE *f, const pde_contract *book, size_t n)
{
    fprintf(f, "%s\n", pde_csv_header);
    for (size_t k = 0; k < n; ++k) {
        const pde_contract *c = &book[k];
        fprintf(f, "%s,%s,%s,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,", c->id,
                c->is_call ? "call" : "put", c->american ? "american" : "european", c->spot,
                c->strike, c->maturity, c->rate, c->yield, c->lower_barrier, c->upper_barrier);
        for (int j = 0; j < c->ndiv; ++j)
            fprintf(f, "%s%.10g:%.10g:%.10g", j ? ";" : "", c->div_time[j], c->div_cash[j],
                    c->div_prop[j]);
        fputc('\n', f);
    }
}

/* ---- JSON ---- */

int pde_have_json(void)
{
#ifdef PDE_HAVE_CJSON
    return 1;
#else
    return 0;
#endif
}

#ifdef PDE_HAVE_CJSON
static int json_number(const cJSON *obj, const char *name, int required, double *out, char *err,
                       size_t cap)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!item || cJSON_IsNull(item)) {
        if (required)
            return pde_fail(err, cap, "field \"%s\" is missing", name);
        return 0;
    }
    if (!cJSON_IsNumber(item))
        return pde_fail(err, cap, "field \"%s\" must be a number", name);
    *out = item->valuedouble;
    return 0;
}

static int json_contract(const cJSON *obj, pde_contract *c, char *err, size_t cap)
{
    memset(c, 0, sizeof *c);
    if (!cJSON_IsObject(obj))
        return pde_fail(err, cap, "not an object");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id");
    if (cJSON_IsString(id))
        snprintf(c->id, sizeof c->id, "%s", id->valuestring);
    else if (cJSON_IsNumber(id))
        snprintf(c->id, sizeof c->id, "%g", id->valuedouble);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(obj, "type");
    const cJSON *style = cJSON_GetObjectItemCaseSensitive(obj, "style");
    if (!cJSON_IsString(type))
        return pde_fail(err, cap, "field \"type\" (call or put) is missing");
    if (parse_type(type->valuestring, c, err, cap) ||
        parse_style(cJSON_IsString(style) ? style->valuestring : "", c, err, cap))
        return -1;
    if (json_number(obj, "spot", 1, &c->spot, err, cap) ||
        json_number(obj, "strike", 1, &c->strike, err, cap) ||
        json_number(obj, "maturity", 1, &c->maturity, err, cap) ||
        json_number(obj, "rate", 0, &c->rate, err, cap) ||
        json_number(obj, "yield", 0, &c->yield, err, cap) ||
        json_number(obj, "lower_barrier", 0, &c->lower_barrier, err, cap) ||
        json_number(obj, "upper_barrier", 0, &c->upper_barrier, err, cap))
        return -1;
    const cJSON *divs = cJSON_GetObjectItemCaseSensitive(obj, "dividends");
    if (divs && !cJSON_IsNull(divs)) {
        if (!cJSON_IsArray(divs))
            return pde_fail(err, cap, "field \"dividends\" must be an array");
        const cJSON *d;
        cJSON_ArrayForEach(d, divs)
        {
            if (c->ndiv == PDE_MAXDIV)
                return pde_fail(err, cap, "more than %d dividends", PDE_MAXDIV);
            if (json_number(d, "time", 1, &c->div_time[c->ndiv], err, cap) ||
                json_number(d, "cash", 0, &c->div_cash[c->ndiv], err, cap) ||
                json_number(d, "proportional", 0, &c->div_prop[c->ndiv], err, cap))
                return -1;
            ++c->ndiv;
        }
    }
    return 0;
}
#endif

int pde_parse_book_json(const char *text, pde_contract **book, size_t *n, char *err, size_t cap)
{
#ifdef PDE_HAVE_CJSON
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        const char *where = cJSON_GetErrorPtr();
        return pde_fail(err, cap, "invalid JSON near '%.20s'", where ? where : "?");
    }
    const cJSON *list = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root, "contracts");
    if (!cJSON_IsArray(list)) {
        cJSON_Delete(root);
        return pde_fail(err, cap, "expected {\"contracts\": [...]} or an array of contracts");
    }
    const size_t count = (size_t)cJSON_GetArraySize(list);
    pde_contract *b = calloc(count ? count : 1, sizeof *b);
    if (!b) {
        cJSON_Delete(root);
        return pde_fail(err, cap, "out of host memory");
    }
    size_t k = 0;
    const cJSON *item;
    char why[256];
    cJSON_ArrayForEach(item, list)
    {
        if (json_contract(item, &b[k], why, sizeof why) || pde_check_contract(&b[k], why, sizeof why)) {
            cJSON_Delete(root);
            free(b);
            return pde_fail(err, cap, "contract %zu: %s", k + 1, why);
        }
        ++k;
    }
    cJSON_Delete(root);
    *book = b;
    *n = count;
    return 0;
#else
    (void)text;
    *book = NULL;
    *n = 0;
    return pde_fail(err, cap, "this pde_pricer was built without cJSON (Debian: libcjson-dev); use a CSV book");
#endif
}

int pde_read_book(const char *path, pde_contract **book, size_t *n, char *err, size_t cap)
{
    char why[256];
    char *text = read_book_file(path, err, cap);
    if (!text)
        return -1;
    const size_t len = strlen(path);
    const int json = len > 5 && !strcmp(path + len - 5, ".json");
    const int rc = json ? pde_parse_book_json(text, book, n, why, sizeof why)
                        : parse_book_csv(text, book, n, why, sizeof why);
    free(text);
    return rc ? pde_fail(err, cap, "%s: %s", path, why) : 0;
}

/* ---- generator ---- */

static double uniform(uint64_t *state) /* splitmix64 */
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

void pde_generate_book(size_t n, uint64_t seed, pde_contract *book)
{
    uint64_t s = seed;
    for (size_t k = 0; k < n; ++k) {
        pde_contract *c = &book[k];
        memset(c, 0, sizeof *c);
        snprintf(c->id, sizeof c->id, "opt%zu", k + 1);
        c->spot = 50 + 100 * uniform(&s);
        c->strike = c->spot * (0.7 + 0.6 * uniform(&s));
        c->maturity = 0.25 + 2.75 * uniform(&s);
        c->rate = 0.05 * uniform(&s);
        c->yield = 0.03 * uniform(&s);
        c->is_call = uniform(&s) < 0.5;
        c->american = uniform(&s) < 0.3;
        const double kind = uniform(&s);
        if (kind < 0.08) {
            c->upper_barrier = c->spot * (1.15 + 0.4 * uniform(&s));
        } else if (kind < 0.16) {
            c->lower_barrier = c->spot * (0.6 + 0.27 * uniform(&s));
        } else if (kind < 0.2) {
            c->upper_barrier = c->spot * (1.2 + 0.4 * uniform(&s));
            c->lower_barrier = c->spot * (0.6 + 0.2 * uniform(&s));
        } else if (kind < 0.6) {
            /* dividends every half year or so, cash and sometimes a proportional part */
            c->ndiv = 1 + (int)(4 * uniform(&s));
            for (int j = 0; j < c->ndiv; ++j) {
                c->div_time[j] = (j + 0.2 + 0.6 * uniform(&s)) * 0.5;
                c->div_cash[j] = c->spot * (0.005 + 0.015 * uniform(&s));
                c->div_prop[j] = uniform(&s) < 0.3 ? 0.005 : 0;
            }
        }
    }
}

/* ---- volatility surfaces ---- */

void pde_vol_free(pde_vol *v)
{
    if (!v)
        return;
    free(v->t);
    free(v->x);
    free(v->zeta);
    memset(v, 0, sizeof *v);
}

int pde_vol_constant(pde_vol *v, double zeta, char *err, size_t cap)
{
    memset(v, 0, sizeof *v);
    if (!(zeta > 0) || !isfinite(zeta))
        return pde_fail(err, cap, "volatility %g must be positive", zeta);
    v->nt = v->nx = 1;
    v->t = malloc(sizeof *v->t);
    v->x = malloc(sizeof *v->x);
    v->zeta = malloc(sizeof *v->zeta);
    if (!v->t || !v->x || !v->zeta) {
        pde_vol_free(v);
        return pde_fail(err, cap, "out of host memory");
    }
    v->t[0] = 0;
    v->x[0] = 1;
    v->zeta[0] = zeta;
    return 0;
}

/* The numbers of one line after its first field; *label gets the first field. */
static int split_numbers(char *line, char **label, double *out, int max, int *count, char *err,
                         size_t cap)
{
    *count = 0;
    char *comma = strchr(line, ',');
    if (!comma)
        return pde_fail(err, cap, "expected comma-separated values");
    *comma = 0;
    *label = trim(line);
    for (char *p = comma + 1, *next; p; p = next) {
        next = strchr(p, ',');
        if (next)
            *next++ = 0;
        p = trim(p);
        char *end;
        const double v = strtod(p, &end);
        if (!*p || *end)
            return pde_fail(err, cap, "'%s' is not a number", p);
        if (*count == max)
            return pde_fail(err, cap, "more than %d values on a line", max);
        out[(*count)++] = v;
    }
    return 0;
}

int pde_parse_vol_csv(const char *text, pde_vol *v, char *err, size_t cap)
{
    enum { MAXN = 4096 };
    memset(v, 0, sizeof *v);
    char *copy = malloc(strlen(text) + 1);
    double *row = malloc(MAXN * sizeof *row);
    size_t room = 0;
    int rc = copy && row ? 0 : pde_fail(err, cap, "out of host memory");
    if (rc == 0)
        strcpy(copy, text);
    int lineno = 0;
    char why[200];
    for (char *line = copy, *next; line && rc == 0; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        ++lineno;
        char *s = trim(line), *label = s;
        if (!*s || *s == '#')
            continue;
        int count;
        if (split_numbers(s, &label, row, MAXN, &count, why, sizeof why)) {
            rc = pde_fail(err, cap, "line %d: %s", lineno, why);
            break;
        }
        if (!v->x) { /* the x grid */
            v->nx = count;
            v->x = malloc((size_t)count * sizeof *v->x);
            if (!v->x || count == 0) {
                rc = pde_fail(err, cap, "line %d: no x grid", lineno);
                break;
            }
            memcpy(v->x, row, (size_t)count * sizeof *row);
            continue;
        }
        if (count != v->nx) {
            rc = pde_fail(err, cap, "line %d: %d volatilities, the x grid has %d points", lineno, count, v->nx);
            break;
        }
        char *end;
        const double t = strtod(label, &end);
        if (!*label || *end) {
            rc = pde_fail(err, cap, "line %d: time '%s' is not a number", lineno, label);
            break;
        }
        for (int i = 0; i < count; ++i)
            if (!(row[i] > 0) || !isfinite(row[i]))
                rc = pde_fail(err, cap, "line %d: volatility %g must be positive", lineno, row[i]);
        if (rc)
            break;
        if ((size_t)v->nt == room) {
            room = room ? 2 * room : 16;
            double *tt = realloc(v->t, room * sizeof *tt);
            if (tt)
                v->t = tt;
            double *zz = tt ? realloc(v->zeta, room * (size_t)v->nx * sizeof *zz) : NULL;
            if (zz)
                v->zeta = zz;
            if (!tt || !zz) {
                rc = pde_fail(err, cap, "out of host memory");
                break;
            }
        }
        v->t[v->nt] = t;
        memcpy(v->zeta + (size_t)v->nt * v->nx, row, (size_t)v->nx * sizeof *row);
        ++v->nt;
    }
    if (rc == 0 && v->nt == 0)
        rc = pde_fail(err, cap, "no volatility rows (expected a line of x points, then lines t,vols...)");
    for (int i = 1; rc == 0 && i < v->nx; ++i)
        if (!(v->x[i] > v->x[i - 1]))
            rc = pde_fail(err, cap, "the x grid must increase");
    for (int i = 1; rc == 0 && i < v->nt; ++i)
        if (!(v->t[i] > v->t[i - 1]))
            rc = pde_fail(err, cap, "the times must increase");
    free(copy);
    free(row);
    if (rc)
        pde_vol_free(v);
    return rc;
}

int pde_read_vol_csv(const char *path, pde_vol *v, char *err, size_t cap)
{
    char why[256];
    char *text = read_book_file(path, err, cap);
    if (!text)
        return -1;
    const int rc = pde_parse_vol_csv(text, v, why, sizeof why);
    free(text);
    return rc ? pde_fail(err, cap, "%s: %s", path, why) : 0;
}
