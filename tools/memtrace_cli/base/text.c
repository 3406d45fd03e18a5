// text.c - UTF-8 checks and cleaning of trace strings (text.h).
#include "text.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

size_t text_utf8_char(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return (c >= 0x20 && c != 0x7f) ? 1 : 0;
  size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (len == 0 || len > n || c > 0xf4) return 0;
  uint32_t cp = c & (0x7f >> len);
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff) return 0;
  return len;
}

// Bytes of src once cleaned: each invalid byte becomes one '?'.
static size_t cleaned_length(const unsigned char *p, size_t left) {
  size_t bytes = 0;
  while (left) {
    size_t len = text_utf8_char(p, left), take = len ? len : 1;
    bytes += take;
    p += take;
    left -= take;
  }
  return bytes;
}

char *text_clean(char *dst, size_t dst_size, const char *src) {
  const unsigned char *p = (const unsigned char *)src;
  size_t left = strlen(src), need = cleaned_length(p, left), out = 0;
  bool cut = need >= dst_size;
  size_t limit = !cut ? need : dst_size >= 3 ? dst_size - 3 : 0;  // bytes of characters to copy
  while (left) {
    size_t len = text_utf8_char(p, left), take = len ? len : 1;
    if (out + take > limit) break;
    if (len) memcpy(dst + out, p, len);
    else dst[out] = '?';
    out += take;
    p += take;
    left -= take;
  }
  if (cut && out + 2 < dst_size) memcpy(dst + out, "..", 2), out += 2;
  dst[out] = 0;
  return dst;
}

// Writes at most max_chars characters of s (SIZE_MAX: all) as XML text or
// attribute content: invalid bytes as '?', & < > " ' as references.
void text_put_xml(FILE *out, const char *s, size_t max_chars) {
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s);
  for (size_t chars = 0; left && chars < max_chars; chars++) {
    size_t len = text_utf8_char(p, left);
    switch (len ? *p : '?') {
      case '&': fputs("&amp;", out); break;
      case '<': fputs("&lt;", out); break;
      case '>': fputs("&gt;", out); break;
      case '"': fputs("&quot;", out); break;
      case '\'': fputs("&#39;", out); break;
      default:
        if (len) fwrite(p, 1, len, out);
        else putc('?', out);
    }
    if (!len) len = 1;
    p += len;
    left -= len;
  }
}
