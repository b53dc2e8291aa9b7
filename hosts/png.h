/* Minimal PNG output for the host programs' figures: 8-bit RGB, deflate "stored" blocks (no
 * compression library needed; the figures are small), and a 3x5 bitmap font for axis labels. */
#ifndef BATCHCL_PNG_H
#define BATCHCL_PNG_H

#include <stddef.h>

/* Write a w x h RGB image (rows top to bottom, 3 bytes per pixel). Returns 0 on success. */
int png_write_rgb(const char *path, int w, int h, const unsigned char *rgb);

/* An RGB canvas with simple drawing for charts. */
typedef struct {
    int w, h;
    unsigned char *rgb;
} png_canvas;

int png_canvas_init(png_canvas *c, int w, int h, unsigned char r, unsigned char g, unsigned char b);
void png_canvas_free(png_canvas *c);
/* Fill the rectangle [x0, x1) x [y0, y1), clipped to the canvas. */
void png_fill(png_canvas *c, int x0, int y0, int x1, int y1, unsigned char r, unsigned char g,
              unsigned char b);
/* Text in the 3x5 font (digits, upper-case letters, space and . - + / = ( ) %), each font pixel
 * drawn as a scale x scale square, top-left corner at (x, y). Unknown characters are blanks. */
void png_text(png_canvas *c, int x, int y, int scale, const char *text, unsigned char r,
              unsigned char g, unsigned char b);

#endif
