/* stnmg.h: geometric multigrid from the stencil. Every grid of the DMDA hierarchy (-pc_type mg,
   -da_refine, -snes_grid_sequence) gets an SG-DIA matrix, which the generated Jacobian fills on
   that grid (rediscretization) at the Newton iterate restricted to it; on the GPU the values,
   the transfers (PETSc's interpolation in cuSPARSE), the smoothers (Chebyshev with Jacobi) and
   the coarse solve (a dense inverse, one product) all stay in device memory. */
#ifndef STNMG_H
#define STNMG_H

#include <petscdmda.h>
#include <petscksp.h>

#include "stncompat.h"  /* PETSC_SUCCESS on PETSc 3.18 */
#include "stnhalo.h"    /* StnHalo */
#include "stnmg_cuda.h" /* StnTransferGrid */
#if defined(PETSC_HAVE_CUDA)
  #include "stncoarse_cuda.h" /* StnDenseInverse */
#endif

/* From now on DMCreateMatrix on da, and on every grid coarsened or refined from it, returns an
   SG-DIA matrix with these nsten grid offsets (one program has one stencil). */
PetscErrorCode StnDMUseSGDIA(DM da, PetscInt nsten, const PetscInt offsets[][3]);
/* Whether it does. */
PetscBool StnDMUsesSGDIA(DM da);
/* An AIJ matrix of type (MATAIJ, MATAIJCUSPARSE) with da's nonzero pattern, as PETSc's
   DMCreateMatrix makes it, whether or not da makes SG-DIA matrices. */
PetscErrorCode StnDMCreateAIJ(DM da, MatType type, Mat *A);
/* From now on the transfers between da and the grids made from it are stencilc's (stntransfer.c:
   matrix-free, on the device where the vectors are) wherever the grids halve. */
PetscErrorCode StnDMUseTransfers(DM da);
/* A DMDA's owned box (ghosts false) or ghosted box (DMDAGetCorners, DMDAGetGhostCorners): start
   s, extent m; 0 and 1 in the directions past its dimension. */
PetscErrorCode StnDMDABox(DM da, PetscBool ghosts, int s[3], int m[3]);
/* The layouts of P's interpolation and restriction, P an interpolation made by StnDMUseTransfers'
   DMCreateInterpolation: *whole on one rank (whole grids), else a rank's (stnmg_cuda.h: the
   interpolation from the coarse ghosted array, the restriction into it); *ok is PETSC_FALSE when
   P is not one or its vectors are not on the device. */
PetscErrorCode StnTransferGetGrid(Mat P, const StnTransferGrid **interpolate, const StnTransferGrid **restrict_, PetscBool *whole, PetscBool *ok);
/* How many grids halving da gives: while every direction halves (n - 1 even, or n even when
   periodic) to at least 2 * stencil width + 1 points, and the grid has more than
   STN_MG_COARSE_UNKNOWNS unknowns. */
PetscErrorCode StnDMCountLevels(DM da, PetscInt *levels);
/* Before DMSetUp: whether da split along its last axis alone over size ranks (slabs) holds each
   rank's owned points as one run of its ghosted vector (the other axes' edges plain: no ghosts
   across a slab), and every grid of the hierarchy multigrid will use (-pc_mg_levels, else one
   more than -da_refine's refinements, else StnDMCountLevels), coarsened by DMCoarsen with the
   same split, still gives each rank the stencil width of planes. 1D: false (nothing to choose). */
PetscErrorCode StnDMSlabsFit(DM da, PetscMPIInt size, PetscBool *fit);
/* The SG-DIA hierarchy's defaults for a PCMG on da, each unless its option is given:
   - the levels (-pc_mg_levels, -da_refine): halve the grid while every direction allows it
     and the coarse grid has more than STN_MG_COARSE_UNKNOWNS unknowns;
   - the smoothers: Chebyshev (PETSc's) with Jacobi (-mg_levels_pc_type), which SG-DIA serves
     on the device, its eigenvalue bounds estimated as PETSc does, from the same start vector
     written on the device (PETSc's own with -mg_levels_ksp_chebyshev_esteig);
   - the coarse solve (-mg_coarse_pc_type): the dense inverse of the coarsest operator, formed
     once per Jacobian where the operator's values live (on the GPU Gauss-Jordan, or
     cuSOLVER's LU beyond 1024 unknowns: stncoarse_cuda.h) and applied there as one dense
     product.
   Call after SNESSetFromOptions. */
PetscErrorCode StnPCMGSetDefaults(PC pc, DM da);
/* For a Chebyshev smoother whose eigenvalue bounds stnmg.c estimates (StnPCMGSetDefaults): the
   bounds for its operator now, estimated if the operator has changed since the last estimate;
   *ok is PETSC_FALSE when ksp has no such estimate or it failed. x: a vector of its level. */
PetscErrorCode StnMGSmootherBounds(KSP ksp, Vec x, PetscReal *emax, PetscReal *emin, PetscBool *ok);
/* The same in two halves, so that the estimates of several levels run at once: Begin starts the
   estimate (on the device it queues it, on the host it makes it), End takes its bounds. set: the
   estimate's own report slots on the device, 1 to STN_GMRES_REPORT_SETS - 1, different for
   every estimate begun and not yet ended (0: begin and end at once). halo: on several ranks,
   the level's device ghost exchange (stnhalo.h), with which the estimate runs on the device
   too (NULL: PETSc's estimate there). */
PetscErrorCode StnMGSmootherBoundsBegin(KSP ksp, Vec x, int set, StnHalo halo);
PetscErrorCode StnMGSmootherBoundsEnd(KSP ksp, PetscReal *emax, PetscReal *emin, PetscBool *ok);
#if defined(PETSC_HAVE_CUDA)
/* Begin for a level that every rank holds whole (stnmgcycle.c): the same estimate as one rank
   makes, from the level's whole operator (box, values: one rank's layout of the whole grid, on
   the device) and 1 / its diagonal (dinv, a sequential vector of the whole grid); End as above. */
PetscErrorCode StnMGSmootherBoundsBeginWhole(KSP ksp, const StnBox *box, const PetscScalar *values, Vec dinv, int set);
/* That estimate on the device (stnarnoldi.c) for the estimator est of a Jacobi-preconditioned
   SG-DIA operator P on the device (one rank and no periodic direction, or with halo, P's grid's
   device ghost exchange: several ranks, each step's sums over the ranks on the host), from the
   start vector b:
   Begin queues est's steps (its -ksp_max_it) with no wait between them, each product with A
   when A is P's operator without the matrix (stnmatfree.h), else with P, its reports into set
   (1 to STN_GMRES_REPORT_SETS - 1); *queued is PETSC_FALSE (and nothing done) for any other P,
   pc or set. End waits and gives the largest real part of the Ritz values (0: no estimate);
   *done is PETSC_FALSE when est has nothing queued. */
PetscErrorCode StnMGEstimateDeviceBegin(KSP est, Mat A, Mat P, PC pc, Vec b, int set, StnHalo halo, PetscBool *queued);
PetscErrorCode StnMGEstimateDeviceEnd(KSP est, PetscReal *emax, PetscBool *done);
/* Several ranks: runs the steps of every estimate begun with a halo and not yet run, in step
   (stnarnoldi.c), so that one level's host waits hide behind the others' work; End runs them too
   where this was not called. Collective over the estimates' communicator. */
PetscErrorCode StnMGEstimateDeviceRun(void);
/* Begin's one-rank steps with the SG-DIA values of a whole grid held on this rank (box, values),
   1 / their diagonal dinv, from b (sequential vectors of the whole grid). */
PetscErrorCode StnMGEstimateDeviceBeginWhole(KSP est, const StnBox *box, const PetscScalar *values, Vec dinv, Vec b, int set, PetscBool *queued);
/* Several ranks: the coarse solve that StnPCMGSetDefaults sets (the dense inverse of the whole
   coarsest operator, on every rank) in device memory, for the fused V-cycle: inv, and this
   rank's rows [rstart, rstart + nlocal) of the coarsest grid; *ok is PETSC_FALSE when ksp solves
   otherwise, or its vectors are on the host. */
PetscErrorCode StnMGCoarseInverseDevice(KSP ksp, const StnDenseInverse **inv, PetscInt *rstart, PetscInt *nlocal, PetscBool *ok);
/* Whether StnMGCoarseInverseDevice would give an inverse, without forming it (on several ranks
   it is formed at its first use, which the fused V-cycle with whole coarse grids never makes). */
PetscErrorCode StnMGCoarseIsDenseInverse(KSP ksp, PetscBool *ok);
/* Replaces the PCApply of pc, a PCMG, by stnmgcycle.c's V-cycle of fused kernels, which runs
   whenever the levels are set up as it requires (SG-DIA operators on the device, Chebyshev with
   Jacobi and stnmg.c's bounds, stencilc's transfers) and calls PCMG's own otherwise. */
PetscErrorCode StnPCMGUseFusedCycle(PC pc);
/* On several ranks the cycle holds the grids of at most this many unknowns (below the finest)
   whole on every rank (-stn_mg_redundant_unknowns): on one GPU such a grid's steps cost about
   what an exchange does, so computing it whole on every rank saves its exchanges; but its
   operator's values are gathered onto every rank after each Jacobian (nsten x dof arrays: 76 MB
   for the cavity's 257^2 x 4 unknowns). The cavity's 129^2 x 4 and sfi3d's 49^3 are whole, their
   257^2 and 97^3 split (docs/performance.md). */
#define STN_MG_REDUNDANT_UNKNOWNS 131072
#endif
#define STN_MG_COARSE_UNKNOWNS 256

#endif
