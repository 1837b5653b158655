/*
** stnmatfree.h: the Jacobian as an operator without its matrix (-stn_operator matfree). J w is
** the program's generated kernel (FormJacobianMultCUDA, stnkernel.h): each entry of a block row
** computed from the state as the Jacobian kernel computes it, times the direction at its
** neighbour, so the product reads the state and the direction where the SG-DIA product reads
** 8 * nstencil * dof bytes of matrix per unknown. The preconditioning matrix stays the assembled
** SG-DIA one (the smoothers' diagonal, the coarse grids are their own). On the GPU, one rank.
*/
#ifndef STNMATFREE_H
#define STNMATFREE_H

#include "stnapp.h" /* StnKernels */

#if defined(PETSC_HAVE_CUDA)
/* A shell of da's size whose product is J w at the state StnMatFreeSetState last gave it. */
PetscErrorCode StnMatFreeCreate(DM da, Mat *J);
/* The state the Jacobian was evaluated at (X: ghosted, local, on the device), the program's
   kernels and parameters, and its stencil's block diagonals; does nothing when J is not
   StnMatFreeCreate's. */
PetscErrorCode StnMatFreeSetState(Mat J, const DMDALocalInfo *info, Vec X, StnKernels *k, void *user, PetscInt nstencil);
/* Whether J is StnMatFreeCreate's with a state (its product can run). */
PetscErrorCode StnMatFreeReady(Mat J, PetscBool *ready);
/* Queues the generated product with m's operands (device arrays of J's size): J w, or a
   smoothing step with its update (StnMultArgs). */
PetscErrorCode StnMatFreeApply(Mat J, const StnMultArgs *m);
#endif

#endif
