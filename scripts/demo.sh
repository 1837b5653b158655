#!/bin/sh
# scripts/demo.sh: the main job, run by `make demo`. For now stencilc checks
# programs; it checks every example and shows the derived structure of the
# driven cavity (compiling and solving it comes with the code generator).
set -eu
STENCILC=${STENCILC:-bin/stencilc}
"$STENCILC" --version
for f in examples/*.stn; do
  if "$STENCILC" --check "$f"; then
    echo "ok      $f"
  else
    echo "FAILED  $f"
    exit 1
  fi
done
echo
echo "examples/cavity.stn, as the compiler sees it (first lines of --dump-ast):"
"$STENCILC" --dump-ast examples/cavity.stn | head -n 25
echo "..."
echo
echo "Next: compiling cavity.stn to a PETSc solver ('stencilc cavity.stn -o cavity') is the code generator's job,"
echo "which is not built yet; see README.md."
