#!/bin/sh
# scripts/install-deps.sh: installs the Debian packages stencilc needs,
# skipping those already present. Run by `make deps` (and so by `make check`
# and `make demo`). Uses sudo when not root and sudo exists.
#
#   build:  gcc make re2c bison pkg-config
#   PETSc:  petsc-dev (3.18, with OpenMPI) for the generated programs
#   tests:  clang libclang-rt-14-dev (libFuzzer, sanitizers) valgrind
#   pictures: gnuplot-nox, which the generated programs run for
#           -stn_plot_solution and -stn_plot_convergence (tests/plot)
set -eu
packages="gcc make re2c bison pkg-config petsc-dev clang libclang-rt-14-dev valgrind libpetsc3.18-dev-examples gnuplot-nox"
missing=""
for p in $packages; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -z "$missing" ]; then
  exit 0
fi
echo "installing Debian packages:$missing"
if [ "$(id -u)" -eq 0 ]; then
  as_root=""
elif command -v sudo >/dev/null 2>&1; then
  as_root="sudo"
else
  echo "error: these packages are missing:$missing" >&2
  echo "       install them as root: apt-get install$missing" >&2
  exit 1
fi
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
