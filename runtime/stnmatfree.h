/*
** stnmatfree.h: the Jacobian as an operator without its matrix (-stn_operator matfree). J w is
** the program's generated kernel (FormJacobianMultCUDA, stnkernel.h): each entry of a block row
** computed from the state as the Jacobian kernel computes it, times the direction at its
** neighbour, so the product reads the state and the direction where the SG-DIA product reads
** 8 * nstencil * dof bytes of matrix per unknown. The preconditioning matrix stays the assembled
** SG-DIA one (the smoothers' diagonal, the coarse grids are their own). On the GPU; on several ranks
** the direction's neighbours that another rank owns come from its ghosts (StnMultArgs).
*/
#ifndef STNMATFREE_H
#define STNMATFREE_H

#include "stnapp.h" /* StnKernels */

/* -stn_operator auto takes the product without the matrix for rows of at least this many values
   (nsten * dof), and on levels of at least STN_MATFREE_MIN_ROWS rows: below that the SG-DIA
   kernel, one thread per row, is as fast or faster (bench/multigrid_gpu.sh, V-cycles: sfi3d's
   7-value rows even at 257^3 and 28% slower at 129^3, the cavity's 20 1.7x faster at 1025^2). */
#define STN_MATFREE_MIN_ROW  12
#define STN_MATFREE_MIN_ROWS 65536

#if defined(PETSC_HAVE_CUDA)
/* A shell of da's size whose product is J w at the state StnMatFreeSetState last gave it. As the
   finest grid's operator it gives the coarser grids twins too, as levels says: STN_TWINS_ALL
   every one (-stn_operator matfree), STN_TWINS_LARGE those of STN_MATFREE_MIN_ROWS unknowns or
   more (auto), STN_TWINS_NONE none (an approximate Jacobian: a coarser grid's operator is its
   preconditioning matrix, which the twin, exact, would not be). */
typedef enum { STN_TWINS_NONE, STN_TWINS_LARGE, STN_TWINS_ALL } StnTwins;
PetscErrorCode StnMatFreeCreate(DM da, StnTwins levels, Mat *J);
/* The state the Jacobian was evaluated at (X: ghosted, local, on the device), the program's
   kernels and parameters, and its stencil's block diagonals; does nothing when J is not
   StnMatFreeCreate's. */
PetscErrorCode StnMatFreeSetState(Mat J, const DMDALocalInfo *info, Vec X, StnKernels *k, void *user, PetscInt nstencil);
/* Whether J is StnMatFreeCreate's with a state (its product can run). */
PetscErrorCode StnMatFreeReady(Mat J, PetscBool *ready);
/* The Jacobian P (SG-DIA, of one grid of a hierarchy) was just evaluated at X: sets the state of
   its twin without the matrix: J when J is StnMatFreeCreate's (the finest grid's operator, which
   sets k->product_levels from its levels), else the one composed on P, created first when
   k->product_levels asks for one on this grid (the coarser grids, evaluated after the finest).
   Does nothing otherwise. */
PetscErrorCode StnMatFreeUpdate(Mat J, Mat P, const DMDALocalInfo *info, Vec X, StnKernels *k, void *user, PetscInt nstencil);
/* The product without the matrix for a level whose operators are A and P: A when it is one and
   ready, else P's twin when ready, else NULL. */
PetscErrorCode StnMatFreeOfLevel(Mat A, Mat P, Mat *mf);
/* Queues the generated product with m's operands (device arrays of J's size): J w, or a
   smoothing step with its update (StnMultArgs). */
PetscErrorCode StnMatFreeApply(Mat J, const StnMultArgs *m);
/* J's state: its grid as the kernel sees it and the ghosted local vector (NULL before the first
   Jacobian). */
PetscErrorCode StnMatFreeGetState(Mat J, StnLocalInfo *info, Vec *state);
/* The same product over the rows of info's owned box, the state laid out in its ghosted box
   (another copy of J's state, with deeper ghosts: stnmgdeep.h), m's arrays laid out as info
   says (StnMultArgs). */
PetscErrorCode StnMatFreeApplyAt(Mat J, const StnLocalInfo *info, const PetscScalar *state, const StnMultArgs *m);
#endif

#endif
