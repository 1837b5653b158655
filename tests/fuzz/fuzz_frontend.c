/*
** fuzz_frontend.c: libFuzzer entry point for the whole front end (text
** check, lexer, parser, semantic checks, AST dump). Built with ASan and
** UBSan by `make build/fuzz-frontend`; any crash, leak, sanitizer report or
** internal error is a bug. Messages go to /dev/null.
*/
#include <stdint.h>
#include <stdio.h>

#include "frontend.h"

static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!sink) sink = fopen("/dev/null", "w");
  Frontend fe;
  frontend_init(&fe, "fuzz.stn", sink);
  frontend_set_text(&fe, (const char *)data, size);
  if (frontend_check(&fe)) ast_dump(sink, &fe.src, fe.program);
  frontend_free(&fe);
  return 0;
}
