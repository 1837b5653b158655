/* stnmgdeep.h: deep ghosts for a multigrid level split over the ranks (stnmgcycle.c), at most
   one exchange per smoothing instead of one per Chebyshev step.

   The level's vectors are laid out in its owned box widened by depth planes along the split axis
   (width * units, width the grid's stencil width; a smoothing of s steps needs s + 1 units).
   After one exchange of those planes, step i of a smoothing computes the owned rows and,
   redundantly, the ghost rows that the steps after it read: the owned box widened by
   depth - width * i. The residual after the smoothing from zero covers width planes past the
   owned box (the restriction reads them), and the last step of the smoothing up what the finer
   level's interpolation reads. On a ghost row a step computes what the neighbour computes on
   its own row, from the same values in the same order, so the Krylov counts are those of an
   exchange before every step. stnmgcycle.c's deep_depths asks for deeper boxes, whose smoothing
   up reads what the smoothing down and the interpolation left, with no exchange.

   For levels whose product runs without the matrix (stnmatfree.h, the generated kernel): its
   state and the smoother's diagonal are exchanged into the widened box once per Jacobian. On
   slabs (the grid split along its last axis alone, StnAppSplitGrid) and no periodic direction:
   then the widened box is the owned one lengthened along the last axis, an array of it holds
   the owned box as one run, and the generated kernel takes any box of it as its owned box. Not
   where the program reads coefficients from files: the kernel reads them laid out in the grid's
   own ghosted box (stncoef.h). The rows computed redundantly count in -log_view's flops. */
#ifndef STNMGDEEP_H
#define STNMGDEEP_H

#include "stnhalo.h"
#include "stnkernel.h" /* StnLocalInfo */

typedef struct {
  StnHalo      halo;          /* the widened box's ghosts, device to device */
  int          width, depth;  /* the stencil width, and the planes past the owned box */
  int          axis, dof;     /* the split axis (the last), and the values per point */
  int          os[3], om[3];  /* the owned box */
  int          es[3], em[3];  /* the widened box, within the grid */
  long         n, offset;     /* values in the widened box; where the owned box starts in it */
  StnLocalInfo info;          /* the state's grid, with the widened box as its ghosted box */
  PetscScalar *b, *x[2], *r;  /* device arrays of the widened box: the right side, a smoothing's two iterates, the residual */
  PetscScalar *d, *state;     /*   1 / the operator's diagonal and the state, set each Jacobian */
} StnDeep;

/* Collective on da's communicator: deep ghosts units stencil widths deep on da (a smoothing of
   s Chebyshev steps needs s + 1), or *deep NULL on every rank, *why saying why (not slabs, a
   periodic direction, coefficients read from files, whose arrays have the grid's ghosts only:
   stncoef.h; no exchange). With vectors false only d and state are made (a user with vectors of
   its own: stnarnoldi.c). */
PetscErrorCode StnDeepCreate(DM da, PetscInt units, PetscBool vectors, StnDeep **deep, const char **why);
/* Where the owned box widened by k planes (clipped to the widened box) lies in an array of the
   widened box: from *off, *len values. */
void StnDeepExtent(const StnDeep *dp, int k, long *off, long *len);
/* That box, in global point indices: [s, s + m). */
void StnDeepBox(const StnDeep *dp, int k, int s[3], int m[3]);
/* Collective. */
PetscErrorCode StnDeepDestroy(StnDeep **deep);
/* Collective, once per Jacobian: the state of mf (StnMatFreeCreate's) and dinv (this rank's
   owned points, on the device) into the widened box. */
PetscErrorCode StnDeepSetOperator(StnDeep *dp, Mat mf, Vec dinv);
/* y = alpha p + beta x + gamma d .* (b - A x) over the owned box widened by k planes (clipped to
   the widened box), A the product of mf at dp's state: x, b, d, p and y are arrays of the widened
   box (d and p may be NULL), or with y_owned, y an array of the owned box (k 0); with b NULL,
   y = d .* A x. x must hold the rows k + width planes past the owned box. */
PetscErrorCode StnDeepStep(const StnDeep *dp, Mat mf, int k, const PetscScalar *x, const PetscScalar *b, const PetscScalar *d, const PetscScalar *p, PetscReal alpha, PetscReal beta, PetscReal gamma, PetscScalar *y, PetscBool y_owned);

#endif
