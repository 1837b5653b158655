/*
** fuzz_pipeline.c: libFuzzer entry point for everything `stencilc FILE -o
** PROG` does before it starts a compiler: the front end, the IR passes
** (lowering, the symbolic Jacobian, simplification, the check of the user's
** entries, the stencil) and the emitters of every generated source, with
** the names and options the driver gives them (compile_generated_*). The
** text goes to /dev/null; no file is written and no process started.
**
** Built with ASan and UBSan by `make build/fuzz-pipeline`; a crash, leak,
** sanitizer report, internal error (ice() exits) or an input slower than
** the run's -timeout is a bug.
*/
#include <stdint.h>
#include <stdio.h>

#include "compile.h"
#include "frontend.h"
#include "ir.h"

static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!sink) sink = fopen("/dev/null", "w");
  Frontend fe;
  frontend_init(&fe, "fuzz.stn", sink);
  frontend_set_text(&fe, (const char *)data, size);
  if (frontend_check(&fe)) {
    Ir ir;
    ir_init(&ir, &fe.model, &fe.src);
    if (ir_build(&ir, &fe.diag, PASS_STENCIL, sink)) {
      Generated g;
      compile_generated_init(&g, "fuzz.stn", "fuzz");
      for (int i = 0; i < COMPILE_NGENERATED; i++) compile_generated_emit(&g, &ir, i, sink);
      compile_generated_free(&g);
    }
    ir_free(&ir);
  }
  frontend_free(&fe);
  return 0;
}
