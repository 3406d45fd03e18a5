// stdlib_sources.h - the standard library's sources, embedded in the binary
// (lang/lib/stdlib.inc is generated from stdlib/*.mn by tools/embed).
#ifndef MINNOW_STDLIB_SOURCES_H
#define MINNOW_STDLIB_SOURCES_H

// The text of stdlib/NAME.mn, or NULL if there is no such module.
const char *stdlib_source(const char *name);

#endif
