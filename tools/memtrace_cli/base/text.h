// text.h - strings from traces made safe for the formats the tools write:
// a trace's function and file names are arbitrary bytes, while SVG, HTML,
// gnuplot scripts and pprof want UTF-8 text without control characters (and
// markup wants its special characters escaped).
#ifndef MINNOW_TEXT_H
#define MINNOW_TEXT_H

#include <stddef.h>
#include <stdio.h>

// The length of the valid UTF-8 character at s[0 .. n) (n > 0), or 0 if
// none starts there. Valid: no overlong form, surrogate or code point past
// U+10FFFF, and none of what XML 1.0 forbids or a line would break on: C0
// controls (tab included), DEL, U+FFFE, U+FFFF.
size_t text_utf8_char(const unsigned char *s, size_t n);

// Copies src into dst[0 .. dst_size) (dst_size > 0), each byte that does not
// start a valid character (text_utf8_char) replaced by '?'; when dst is too
// small, ends with ".." instead of cutting a character. Returns dst.
char *text_clean(char *dst, size_t dst_size, const char *src);

// Writes at most max_chars characters of s (SIZE_MAX: all) as XML or HTML
// text or attribute content (quoted either way): each byte that does not
// start a valid character (text_utf8_char) as '?', & < > " ' as character
// references. Nothing from s can open or close markup.
void text_put_xml(FILE *out, const char *s, size_t max_chars);

#endif
