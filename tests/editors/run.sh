#!/bin/sh
# tests/editors/run.sh: the editor support in dsl/ and the man page, from the
# repository root (any cwd works):
#
#   json      the VS Code extension's JSON files parse (python3 -m json.tool)
#   grammars  tests/editors/check.py: the word lists of dsl/vim/syntax/stn.vim
#             and dsl/vscode/syntaxes/stn.tmLanguage.json equal the compiler's
#             (reserved words of parser/lexer.re, built-in names of
#             codegen/sema/builtins.c); both grammars highlight every example and
#             two generated samples as the lexer reads them, character by
#             character (vim only where it is installed); the extension's
#             manifest points at its files; docs/stencilc.1 names every option
#             of stencilc and every -stn_ option of the generated program
#   man page  docs/stencilc.1 renders with groff -man -ww without a warning
#             (where groff is installed)
#
# One line per check ("editors: ...: ok" or "FAIL: ..."); exit status 1 when
# one failed. Needs python3 (Debian's petsc-dev brings it); vim and groff are
# used when present.
set -u
cd "$(dirname "$0")/../.." || exit 2
fails=0
bad() { fails=$((fails + 1)); echo "FAIL: editors: $*"; }

if ! command -v python3 >/dev/null 2>&1; then
  echo "FAIL: editors: python3 is not installed (Debian's petsc-dev brings it)"
  exit 1
fi

for f in dsl/vscode/package.json dsl/vscode/language-configuration.json dsl/vscode/syntaxes/stn.tmLanguage.json; do
  if err=$(python3 -m json.tool "$f" 2>&1 >/dev/null); then echo "editors: $f parses: ok"
  else bad "$f is not valid JSON: $err"; fi
done

python3 tests/editors/check.py || fails=$((fails + 1))

if command -v groff >/dev/null 2>&1; then
  warnings=$(groff -man -Tutf8 -ww -z docs/stencilc.1 2>&1)
  if [ $? -eq 0 ] && [ -z "$warnings" ]; then echo "editors: docs/stencilc.1 renders without warnings: ok"
  else bad "groff -man -Tutf8 -ww docs/stencilc.1:"; printf '%s\n' "$warnings" | head -20; fi
else
  echo "editors: note: groff not installed; docs/stencilc.1 was not rendered"
fi

[ $fails -eq 0 ]
