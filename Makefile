# stencilc: one flat Makefile.
#   make            build bin/stencilc
#   make deps       install the Debian packages the project needs (skips what is there)
#   make check      build and run every test (what CI runs)
#   make demo       the main job: compile and solve the driven cavity, draw it (build/demo/)
#   make fuzz       a short run of both fuzzers (tests/fuzz/)
#   make fuzz-long  run the pipeline fuzzer for FUZZ_RUNS executions
#   make install    install stencilc, its man page and the editor files under
#                   $(DESTDIR)$(PREFIX) (PREFIX=/usr/local by default)
#   make SAN=address,undefined check   the same with sanitizers
#
# re2c and bison run at build time; their outputs go to build/ and are never edited.

CC      ?= cc
CFLAGS  ?= -O2 -g
SAN     ?=
WARN     = -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Wno-unused-parameter
# The pipeline, one folder a phase (docs/architecture.md): parser/base (what every phase uses),
# parser (text to AST), codegen/sema, codegen/ir, codegen/emit, codegen/explain, codegen/driver.
SRC_DIRS = parser/base parser codegen/sema codegen/ir codegen/emit codegen/explain codegen/driver
INCLUDES = -Ibuild $(addprefix -I,$(SRC_DIRS))
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(CFLAGS) $(WARN) $(INCLUDES) \
             $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all)
LDLIBS   = -lm

RE2C    ?= re2c
BISON   ?= bison

BASE_SRC    = parser/base/arena.c parser/base/util.c parser/base/diag.c parser/base/source.c parser/base/intern.c
PARSER_SRC  = $(BASE_SRC) parser/ast.c
GEN_SRC     = build/lexer.c build/grammar.c
SEMA_SRC    = codegen/sema/frontend.c codegen/sema/sema.c codegen/sema/sema_expr.c codegen/sema/sema_regions.c \
              codegen/sema/sema_mirror.c codegen/sema/builtins.c
FRONT_SRC   = $(PARSER_SRC) $(GEN_SRC) $(SEMA_SRC)
IR_SRC      = codegen/ir/ir.c codegen/ir/ir_lower.c codegen/ir/ir_derive.c codegen/ir/ir_eval.c codegen/ir/ir_scaling.c codegen/ir/ir_mirror.c \
              codegen/ir/ir_passes.c
EMIT_SRC    = codegen/emit/cnames.c codegen/emit/emit_c_expr.c codegen/emit/emit_c.c codegen/emit/emit_branches.c \
              codegen/emit/emit_cuda.c codegen/emit/emit_hooks.c
BUILD_SRC   = codegen/driver/compile.c codegen/driver/skeleton.c codegen/driver/toolchain.c codegen/driver/strutil.c \
              codegen/driver/runtime_files.c build/runtime_text.c
RUNTIME_SRC = $(sort $(wildcard runtime/*.c runtime/*.h runtime/*.cu))
EXPLAIN_SRC = codegen/explain/explain.c codegen/explain/explain_svg.c
DRIVER_SRC  = codegen/driver/main.c $(IR_SRC) $(EMIT_SRC) $(BUILD_SRC) $(EXPLAIN_SRC)
HEADERS     = $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.h)) build/grammar.h

FRONT_OBJ   = $(patsubst %.c,build/obj/%.o,$(notdir $(FRONT_SRC)))
DRIVER_OBJ  = $(patsubst %.c,build/obj/%.o,$(notdir $(DRIVER_SRC)))

vpath %.c $(SRC_DIRS) build

.PHONY: all deps check demo fuzz fuzz-long install clean

all: bin/stencilc

bin/stencilc: $(FRONT_OBJ) $(DRIVER_OBJ)
	@mkdir -p bin
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

build/obj/%.o: %.c $(HEADERS)
	@mkdir -p build/obj
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

build/lexer.c: parser/lexer.re build/grammar.h
	@mkdir -p build
	$(RE2C) -W --no-generation-date --no-version -o $@ $<

build/grammar.c build/grammar.h: parser/grammar.y
	@mkdir -p build
	$(BISON) -Wall -Werror --header=build/grammar.h -o build/grammar.c $<

# The runtime sources, embedded in stencilc as build/runtime_text.c.
build/runtime_text.c: scripts/embed-runtime.sh $(RUNTIME_SRC)
	@mkdir -p build
	scripts/embed-runtime.sh $@ $(RUNTIME_SRC)

deps:
	scripts/install-deps.sh

check: deps
	$(MAKE) all
	tests/run.sh

demo: deps
	$(MAKE) all
	scripts/demo.sh

# The fuzzers need clang's libFuzzer (Debian: clang, libclang-rt-14-dev): fuzz-frontend runs the
# front end, fuzz-pipeline everything -o does up to the generated text (tests/fuzz/run.sh).
FUZZ_CC    ?= clang
FUZZ_RUNS  ?= 1000000
FUZZ_FLAGS  = -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 $(INCLUDES) \
              -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
build/fuzz-frontend: tests/fuzz/fuzz_frontend.c $(FRONT_SRC) $(HEADERS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_frontend.c $(FRONT_SRC) -lm

build/fuzz-pipeline: tests/fuzz/fuzz_pipeline.c $(FRONT_SRC) $(IR_SRC) $(EMIT_SRC) $(BUILD_SRC) $(HEADERS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_pipeline.c $(FRONT_SRC) $(IR_SRC) $(EMIT_SRC) $(BUILD_SRC) -lm

# The smoke run (part of make check): both fuzzers, the saved findings replayed first.
fuzz: build/fuzz-frontend build/fuzz-pipeline
	tests/fuzz/run.sh build/fuzz-frontend 20000
	tests/fuzz/run.sh build/fuzz-pipeline 20000

# The long run: FUZZ_RUNS executions of FUZZ_TARGET (default the pipeline, which runs the front
# end too), inputs slower than a second counted as findings.
FUZZ_TARGET ?= pipeline
fuzz-long: build/fuzz-$(FUZZ_TARGET)
	FUZZ_TIMEOUT=1 tests/fuzz/run.sh build/fuzz-$(FUZZ_TARGET) $(FUZZ_RUNS)

# The editor files: Vim's under share/vim/vimfiles (Debian's system-wide Vim
# directory), the VS Code extension under share/stencilc/vscode (dsl/EDITORS.md).
PREFIX ?= /usr/local
install: bin/stencilc
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 bin/stencilc $(DESTDIR)$(PREFIX)/bin/stencilc
	install -m 644 docs/stencilc.1 $(DESTDIR)$(PREFIX)/share/man/man1/stencilc.1
	for d in ftdetect ftplugin syntax; do \
	  install -d $(DESTDIR)$(PREFIX)/share/vim/vimfiles/$$d && \
	  install -m 644 dsl/vim/$$d/stn.vim $(DESTDIR)$(PREFIX)/share/vim/vimfiles/$$d/stn.vim || exit 1; \
	done
	install -d $(DESTDIR)$(PREFIX)/share/stencilc/vscode/syntaxes
	install -m 644 dsl/vscode/package.json dsl/vscode/language-configuration.json $(DESTDIR)$(PREFIX)/share/stencilc/vscode
	install -m 644 dsl/vscode/syntaxes/stn.tmLanguage.json $(DESTDIR)$(PREFIX)/share/stencilc/vscode/syntaxes

clean:
	rm -rf build bin
