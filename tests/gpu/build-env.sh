# tests/gpu/build-env.sh: sourced (". tests/gpu/build-env.sh") by the scripts of tests/gpu/, from
# the repository root: how to build C and CUDA code against $PETSC_DIR (and $PETSC_ARCH, if the
# PETSc is not installed with a prefix), a PETSc configured with CUDA (scripts/petsc-cuda.sh).
#
# Sets CC, CFLAGS, NVCC, NVCCFLAGS, LIBS (PETSc, the CUDA libraries, -lstdc++ for nvcc's
# objects), PETSC_LIBDIR, and PETSC_OPTIONS where PETSc has an MPI; returns 1 after saying why
# when there is no CUDA PETSc there.
# The CUDA flags come from PETSc's petscvariables (CUDA_INCLUDE, CUDA_LIB, the -arch of
# CUDAC_FLAGS), as codegen/driver/toolchain.c takes them for generated programs; the CUDA library
# directories of this machine are added, as they may differ from the configuring machine's.
# shellcheck disable=SC2034 # the variables are for the scripts that source this file

if [ -z "${PETSC_DIR:-}" ]; then
  echo "FAIL: gpu: set PETSC_DIR to a CUDA-enabled PETSc (scripts/petsc-cuda.sh builds one)"
  return 1
fi
stn_base=$PETSC_DIR${PETSC_ARCH:+/$PETSC_ARCH}
PETSC_LIBDIR=$stn_base/lib
stn_vars=$stn_base/lib/petsc/conf/petscvariables
if ! grep -q "define PETSC_HAVE_CUDA 1" "$stn_base/include/petscconf.h" 2>/dev/null || ! [ -f "$stn_vars" ]; then
  echo "FAIL: gpu: $PETSC_DIR${PETSC_ARCH:+ (PETSC_ARCH $PETSC_ARCH)} is not a PETSc configured with CUDA"
  return 1
fi
stn_var() { sed -n "s/^$1 *= *//p" "$stn_vars" | head -1; }

# PETSc's own C compiler where it has an MPI (its mpicc: a CC from the environment, such as the
# device machines set, finds no mpi.h), else CC or cc
stn_pcc=$(stn_var PCC | awk '{print $1}')
# and, there, -use_gpu_aware_mpi 0 for the test programs as the generated ones set it (StnAppDefaults):
# PETSc aborts at start-up when its MPI cannot read device memory and the option is not given
if ! grep -q "define PETSC_HAVE_MPIUNI 1" "$stn_base/include/petscconf.h" && command -v "$stn_pcc" >/dev/null 2>&1; then
  CC=$stn_pcc
  PETSC_OPTIONS="-use_gpu_aware_mpi 0${PETSC_OPTIONS:+ $PETSC_OPTIONS}"
  export PETSC_OPTIONS
else
  CC=${CC:-cc}
fi
NVCC=$(stn_var CUDAC | awk '{print $1}')
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null 2>&1 || NVCC=nvcc
stn_arch=$(stn_var CUDAC_FLAGS | grep -o -- '-arch=[^ ]*' | head -1)
CFLAGS="-std=gnu11 -O2 -g -Wall -Wextra -fPIC -I$PETSC_DIR/include${PETSC_ARCH:+ -I$stn_base/include} $(stn_var CUDA_INCLUDE) -Iruntime"
NVCCFLAGS="-O2 ${stn_arch:--arch=sm_90} -Xcompiler -fPIC -Iruntime"
stn_cudadirs=
for d in ${CUDA_HOME:+"$CUDA_HOME/lib64" "$CUDA_HOME/lib"} /usr/local/cuda/lib64 /usr/local/cuda/lib; do
  [ -d "$d" ] && stn_cudadirs="$stn_cudadirs -L$d -Wl,-rpath,$d"
done
LIBS="-L$PETSC_LIBDIR -Wl,-rpath,$PETSC_LIBDIR -lpetsc$stn_cudadirs $(stn_var CUDA_LIB) -lstdc++ -lm"

# stn_build_runtime DIR: the runtime files the vector kernels need, compiled into DIR (-fPIC, so
# that they can go into a shared library too); sets RUNTIME_OBJS. Output of the compilers goes
# to DIR/build.log. Returns 1 if one fails.
stn_build_runtime() {
  mkdir -p "$1"
  RUNTIME_OBJS="$1/stnvec.o $1/stntune.o $1/stnvec_ref.o $1/stncuda.o $1/stnvec_cuda.o $1/stngmres_cuda.o $1/sgdia_cuda.o $1/stncycle_cuda.o $1/stnmg_cuda.o $1/stncoarse_cuda.o"
  # up to date: built with these flags, after the last change to the runtime's sources
  if [ -f "$1/stamp" ] && [ "$(cat "$1/stamp")" = "$CC $CFLAGS $NVCC $NVCCFLAGS" ] &&
     [ -z "$(find runtime -newer "$1/stamp" -type f 2>/dev/null)" ]; then
    return 0
  fi
  rm -f "$1/stamp"
  : >"$1/build.log"
  rm -f "$1/failed"
  RUNTIME_OBJS=
  # each file in the background, its own log; the logs joined in order, any failure fails all
  for f in stnvec stntune stnvec_ref; do
    # shellcheck disable=SC2086 # flag lists
    $CC $CFLAGS -c "runtime/$f.c" -o "$1/$f.o" >"$1/$f.log" 2>&1 || echo "$f" >>"$1/failed" &
    RUNTIME_OBJS="$RUNTIME_OBJS $1/$f.o"
  done
  for f in stncuda stnvec_cuda stngmres_cuda sgdia_cuda stncycle_cuda stnmg_cuda stncoarse_cuda; do
    # shellcheck disable=SC2086
    $NVCC $NVCCFLAGS -c "runtime/$f.cu" -o "$1/$f.o" >"$1/$f.log" 2>&1 || echo "$f" >>"$1/failed" &
    RUNTIME_OBJS="$RUNTIME_OBJS $1/$f.o"
  done
  wait
  for o in $RUNTIME_OBJS; do cat "${o%.o}.log" >>"$1/build.log"; done
  if [ -f "$1/failed" ]; then
    rm -f "$1/failed"
    return 1
  fi
  echo "$CC $CFLAGS $NVCC $NVCCFLAGS" >"$1/stamp"
}
