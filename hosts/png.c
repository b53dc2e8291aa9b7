#include "png.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
    static uint32_t table[256];
    static int ready = 0;
    if (!ready) { /* the reflected polynomial 0xedb88320 of PNG (ISO 3309) */
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    for (size_t i = 0; i < n; ++i)
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static int write_chunk(FILE *f, const char *type, const unsigned char *data, size_t len)
{
    unsigned char head[8];
    put_be32(head, (uint32_t)len);
    memcpy(head + 4, type, 4);
    uint32_t crc = crc32_update(0xffffffffu, (const unsigned char *)type, 4);
    crc = crc32_update(crc, data, len) ^ 0xffffffffu;
    unsigned char tail[4];
    put_be32(tail, crc);
    return fwrite(head, 1, 8, f) == 8 && (len == 0 || fwrite(data, 1, len, f) == len) &&
           fwrite(tail, 1, 4, f) == 4;
}

int png_write_rgb(const char *path, int w, int h, const unsigned char *rgb)
{
    if (w <= 0 || h <= 0)
        return -1;
    /* the filtered image: a filter-type byte (0, none) before every row */
    const size_t row = 3 * (size_t)w + 1, raw_len = row * (size_t)h;
    const size_t blocks = (raw_len + 65534) / 65535;
    const size_t zlen = 2 + raw_len + 5 * blocks + 4;
    unsigned char *z = malloc(zlen);
    if (!z)
        return -1;
    size_t at = 0;
    z[at++] = 0x78; /* zlib header: deflate, 32 KiB window, no dictionary, check bits */
    z[at++] = 0x01;
    uint32_t s1 = 1, s2 = 0; /* Adler-32 of the uncompressed data */
    size_t done = 0;
    for (size_t b = 0; b < blocks; ++b) {
        const size_t len = raw_len - done < 65535 ? raw_len - done : 65535;
        z[at++] = b + 1 == blocks; /* BFINAL, BTYPE 00 = stored */
        z[at++] = (unsigned char)len;
        z[at++] = (unsigned char)(len >> 8);
        z[at++] = (unsigned char)~len;
        z[at++] = (unsigned char)(~len >> 8);
        for (size_t i = 0; i < len; ++i, ++done) {
            const size_t y = done / row, x = done % row;
            const unsigned char v = x == 0 ? 0 : rgb[y * 3 * (size_t)w + x - 1];
            z[at++] = v;
            s1 = (s1 + v) % 65521;
            s2 = (s2 + s1) % 65521;
        }
    }
    put_be32(z + at, (s2 << 16) | s1);
    at += 4;

    FILE *f = fopen(path, "wb");
    if (!f) {
        free(z);
        return -1;
    }
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char ihdr[13];
    put_be32(ihdr, (uint32_t)w);
    put_be32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8;  /* bits per sample */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering */
    ihdr[12] = 0; /* no interlace */
    int ok = fwrite(signature, 1, 8, f) == 8 && write_chunk(f, "IHDR", ihdr, sizeof ihdr) &&
             write_chunk(f, "IDAT", z, at) && write_chunk(f, "IEND", NULL, 0);
    ok = fclose(f) == 0 && ok;
    free(z);
    return ok ? 0 : -1;
}

int png_canvas_init(png_canvas *c, int w, int h, unsigned char r, unsigned char g, unsigned char b)
{
    c->w = w;
    c->h = h;
    c->rgb = malloc(3 * (size_t)w * (size_t)h);
    if (!c->rgb)
        return -1;
    png_fill(c, 0, 0, w, h, r, g, b);
    return 0;
}

void png_canvas_free(png_canvas *c)
{
    free(c->rgb);
    c->rgb = NULL;
}

void png_fill(png_canvas *c, int x0, int y0, int x1, int y1, unsigned char r, unsigned char g,
              unsigned char b)
{
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > c->w ? c->w : x1;
    y1 = y1 > c->h ? c->h : y1;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) {
            unsigned char *p = c->rgb + 3 * ((size_t)y * c->w + x);
            p[0] = r;
            p[1] = g;
            p[2] = b;
        }
}

/* 3x5 glyphs, rows top to bottom, '#' = ink */
static const char *glyph(char ch)
{
    static const struct {
        char c;
        const char *rows;
    } font[] = {
        {'0', "###" "#.#" "#.#" "#.#" "###"}, {'1', ".#." "##." ".#." ".#." "###"},
        {'2', "###" "..#" "###" "#.." "###"}, {'3', "###" "..#" "###" "..#" "###"},
        {'4', "#.#" "#.#" "###" "..#" "..#"}, {'5', "###" "#.." "###" "..#" "###"},
        {'6', "###" "#.." "###" "#.#" "###"}, {'7', "###" "..#" "..#" "..#" "..#"},
        {'8', "###" "#.#" "###" "#.#" "###"}, {'9', "###" "#.#" "###" "..#" "###"},
        {'A', ".#." "#.#" "###" "#.#" "#.#"}, {'B', "##." "#.#" "##." "#.#" "##."},
        {'C', ".##" "#.." "#.." "#.." ".##"}, {'D', "##." "#.#" "#.#" "#.#" "##."},
        {'E', "###" "#.." "##." "#.." "###"}, {'F', "###" "#.." "##." "#.." "#.."},
        {'G', ".##" "#.." "#.#" "#.#" ".##"}, {'H', "#.#" "#.#" "###" "#.#" "#.#"},
        {'I', "###" ".#." ".#." ".#." "###"}, {'J', "..#" "..#" "..#" "#.#" ".#."},
        {'K', "#.#" "#.#" "##." "#.#" "#.#"}, {'L', "#.." "#.." "#.." "#.." "###"},
        {'M', "#.#" "###" "###" "#.#" "#.#"}, {'N', "##." "#.#" "#.#" "#.#" "#.#"},
        {'O', ".#." "#.#" "#.#" "#.#" ".#."}, {'P', "##." "#.#" "##." "#.." "#.."},
        {'Q', ".#." "#.#" "#.#" "##." ".##"}, {'R', "##." "#.#" "##." "#.#" "#.#"},
        {'S', ".##" "#.." ".#." "..#" "##."}, {'T', "###" ".#." ".#." ".#." ".#."},
        {'U', "#.#" "#.#" "#.#" "#.#" "###"}, {'V', "#.#" "#.#" "#.#" "#.#" ".#."},
        {'W', "#.#" "#.#" "###" "###" "#.#"}, {'X', "#.#" "#.#" ".#." "#.#" "#.#"},
        {'Y', "#.#" "#.#" ".#." ".#." ".#."}, {'Z', "###" "..#" ".#." "#.." "###"},
        {'.', "..." "..." "..." "..." ".#."}, {'-', "..." "..." "###" "..." "..."},
        {'+', "..." ".#." "###" ".#." "..."}, {'/', "..#" "..#" ".#." "#.." "#.."},
        {'=', "..." "###" "..." "###" "..."}, {'(', ".#." "#.." "#.." "#.." ".#."},
        {')', ".#." "..#" "..#" "..#" ".#."}, {'%', "#.#" "..#" ".#." "#.." "#.#"},
        {':', "..." ".#." "..." ".#." "..."},
    };
    const char u = (char)toupper((unsigned char)ch);
    for (size_t i = 0; i < sizeof font / sizeof font[0]; ++i)
        if (font[i].c == u)
            return font[i].rows;
    return NULL;
}

void png_text(png_canvas *c, int x, int y, int scale, const char *text, unsigned char r,
              unsigned char g, unsigned char b)
{
    for (; *text; ++text, x += 4 * scale) {
        const char *rows = glyph(*text);
        if (!rows)
            continue;
        for (int gy = 0; gy < 5; ++gy)
            for (int gx = 0; gx < 3; ++gx)
                if (rows[3 * gy + gx] == '#')
                    png_fill(c, x + gx * scale, y + gy * scale, x + (gx + 1) * scale,
                             y + (gy + 1) * scale, r, g, b);
    }
}
