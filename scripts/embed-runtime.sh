#!/bin/sh
# scripts/embed-runtime.sh: embeds the runtime sources (runtime/*.c, *.h)
# in stencilc, so that the compiler needs no install path to find them.
#
#   scripts/embed-runtime.sh OUT.c FILE...
#
# writes OUT.c defining runtime_files[] (see codegen/driver/runtime_files.h): one
# {name, text} per FILE, in the order given, named by its basename, then
# {0, 0}. Each line of a file becomes one string literal line ending in
# "\n"; a line longer than 2000 characters of C is split over several
# literals, which the compiler concatenates, so no single literal is near
# the 4095 characters C99 promises to accept. A whole file may still exceed
# that (and gcc's 65535 for -Woverlength-strings); gcc and clang accept
# strings of any length, and -Woverlength-strings (part of -pedantic) is not
# in our warning flags.
#
# Escaped: backslash, double quote, '?' after '?' (trigraphs are on with
# -std=c11), tab as \t, every other byte outside 32..126 as a 3-digit octal
# escape (octal, not hex: a hex escape would swallow following digits).
# Bytes are read with od, not as text, so the result is byte-exact for any
# file without a NUL byte (a NUL is refused: text is a C string), including
# one whose last line has no newline. The output depends only on the
# files' bytes and names: byte-identical from run to run.
#
# POSIX sh, od and awk only.
set -eu

if [ $# -lt 1 ]; then
  echo "usage: scripts/embed-runtime.sh OUT.c FILE..." >&2
  exit 2
fi
out=$1
shift

names=" "
for f in "$@"; do
  name=${f##*/}
  case $name in
    '' | *[!A-Za-z0-9._-]*)
      echo "embed-runtime.sh: $f: the name must be letters, digits, '.', '_' or '-'" >&2
      exit 1 ;;
  esac
  case $names in
    *" $name "*)
      echo "embed-runtime.sh: $f: a second file named $name" >&2
      exit 1 ;;
  esac
  names="$names$name "
  if [ ! -f "$f" ] || [ ! -r "$f" ]; then
    echo "embed-runtime.sh: $f: cannot read it" >&2
    exit 1
  fi
done

tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# od prints each byte as a decimal number; awk turns them into literals.
escape='
BEGIN { max = 2000; open = 0; cur = 0; prevq = 0; nbytes = 0 }
function start() { printf "   \""; open = 1; cur = 0 }
function finish() { printf "\"\n"; open = 0 }
{
  for (i = 1; i <= NF; i++) {
    b = $i + 0
    nbytes++
    if (b == 0) exit 3
    if (b == 10) piece = "\\n"
    else if (b == 9) piece = "\\t"
    else if (b == 92) piece = "\\\\"
    else if (b == 34) piece = "\\\""
    else if (b == 63 && prevq) piece = "\\?"
    else if (b >= 32 && b < 127) piece = sprintf("%c", b)
    else piece = sprintf("\\%03o", b)
    if (open && cur + length(piece) > max) finish()
    if (!open) start()
    printf "%s", piece
    cur += length(piece)
    prevq = (b == 63)
    if (b == 10) finish()
  }
}
END { if (open) finish(); if (nbytes == 0) print "   \"\"" }
'

{
  echo "/* generated from runtime/ by scripts/embed-runtime.sh; edit those files instead."
  echo "** Files:${names% }"
  echo "** One string literal line per source line; see the script for the escapes. */"
  echo '#include "runtime_files.h"'
  echo
  echo "const RuntimeFile runtime_files[] = {"
  for f in "$@"; do
    printf '  {"%s",\n' "${f##*/}"
    status=0
    od -An -v -tu1 "$f" | LC_ALL=C awk "$escape" || status=$?
    if [ "$status" -eq 3 ]; then
      echo "embed-runtime.sh: $f: has a NUL byte; only text files can be embedded" >&2
      exit 1
    elif [ "$status" -ne 0 ]; then
      echo "embed-runtime.sh: $f: cannot convert it (awk exit status $status)" >&2
      exit 1
    fi
    echo "  },"
  done
  echo "  {0, 0}"
  echo "};"
} >"$tmp"
mv "$tmp" "$out"
trap - EXIT
