/*
** source.h: reads a .stn file into one NUL-terminated buffer and makes
** sure it is text (UTF-8, no NUL bytes) before the lexer sees it, so
** binary garbage gets one clear message instead of a flood.
*/
#ifndef STN_SOURCE_H
#define STN_SOURCE_H

#include <stdbool.h>

#include "arena.h"
#include "diag.h"

enum { SOURCE_MAX_BYTES = 16 * 1024 * 1024 };

/* Reads path into src (text from arena); reports through d and returns false on failure. */
bool source_read(Source *src, const char *path, Arena *arena, Diag *d);

/* Checks that text is UTF-8 without NUL bytes; reports the first bad byte. */
bool source_check_text(const Source *src, Diag *d);

#endif
