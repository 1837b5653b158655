/* sgdia_instances.h: which <DOF, NSTEN> instances of the SG-DIA row product the CUDA kernels are
   compiled for (sgdia_cuda.cu's product, stncycle_cuda.cu's GMRES cycle kernel), and the switch
   that picks one for a matrix. C++ and CUDA only: included by .cu files.

   dof and the number of block diagonals are template parameters for the common cases, dof 1-4
   and nsten 5, 7, 9 (2D star of width 1 and 2, 2D box; 3D star), 13 (3D star of width 2),
   19 (3D box less its corners), 25 (2D box of width 2), 27 (3D box), so that the row loops unroll;
   dof 0 or nsten 0 is the instance with run-time bounds for any other. That is 40 instances of
   each kernel, and the cycle kernel's take nvcc about a minute. A program built by stencilc has
   one matrix, whose dof and stencil it knows: stencilc writes them into stn_program.h beside the
   runtime's copies (STN_PROGRAM_DOF, STN_PROGRAM_NSTEN), and then only the instance that the
   switch picks for them is compiled, with the generic one <0, 0> for any other matrix (a program
   linked into something larger, say): the same answers, fewer kernels to compile and to load. */
#ifndef SGDIA_INSTANCES_H
#define SGDIA_INSTANCES_H

#if __has_include("stn_program.h")
  #include "stn_program.h"
#endif

namespace stn_sgdia {

constexpr int instance_dof(int dof) { return dof >= 1 && dof <= 4 ? dof : 0; }
constexpr int instance_nsten(int nsten)
{
  return nsten == 5 || nsten == 7 || nsten == 9 || nsten == 13 || nsten == 19 || nsten == 25 || nsten == 27 ? nsten : 0;
}

/* Whether instance <dof, nsten> is compiled. */
#ifdef STN_PROGRAM_DOF
constexpr bool instance_compiled(int dof, int nsten)
{
  return (dof == instance_dof(STN_PROGRAM_DOF) && nsten == instance_nsten(STN_PROGRAM_NSTEN)) || (dof == 0 && nsten == 0);
}
#else
constexpr bool instance_compiled(int, int) { return true; }
#endif

/* f.run<DOF, NSTEN>() for the instance of a matrix with dof unknowns per point and nsten block
   diagonals, or f.run<0, 0>() where that instance is not compiled. */
template <int DOF, int NSTEN, class F>
auto run_compiled(const F &f)
{
  if constexpr (instance_compiled(DOF, NSTEN)) return f.template run<DOF, NSTEN>();
  else return f.template run<0, 0>();
}

template <int DOF, class F>
auto with_nsten(int nsten, const F &f)
{
  switch (instance_nsten(nsten)) {
  case 5: return run_compiled<DOF, 5>(f);
  case 7: return run_compiled<DOF, 7>(f);
  case 9: return run_compiled<DOF, 9>(f);
  case 13: return run_compiled<DOF, 13>(f);
  case 19: return run_compiled<DOF, 19>(f);
  case 25: return run_compiled<DOF, 25>(f);
  case 27: return run_compiled<DOF, 27>(f);
  default: return run_compiled<DOF, 0>(f);
  }
}

/* f.run<DOF, NSTEN>() with the instance for (dof, nsten) (see above). */
template <class F>
auto with_instance(int dof, int nsten, const F &f)
{
  switch (instance_dof(dof)) {
  case 1: return with_nsten<1>(nsten, f);
  case 2: return with_nsten<2>(nsten, f);
  case 3: return with_nsten<3>(nsten, f);
  case 4: return with_nsten<4>(nsten, f);
  default: return with_nsten<0>(nsten, f);
  }
}

} // namespace stn_sgdia

#endif
