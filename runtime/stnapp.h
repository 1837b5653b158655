/*
** stnapp.h: the part of every generated program that does not depend on
** its equations. A generated file holds the problem (parameters, initial
** guess, FormFunctionLocal and FormJacobianLocal and their CUDA twins) and
** a short main; the program's own options (-stn_*), the Jacobian's matrices,
** the default solver per device, storing block rows, launching and tuning
** the generated kernels, the solve with its report, the VTK output and the
** pictures are here, written and tested once.
**
** The residual and the Jacobian are registered with PETSc's DMDA-local
** interface (DMDASNESSetFunctionLocal, ...), so every grid of a hierarchy
** (-pc_type mg, -da_refine, -snes_grid_sequence) gets them with its own
** DMDALocalInfo: nothing here or in the generated file caches a grid size.
*/
#ifndef STNAPP_H
#define STNAPP_H

#include <petscdmda.h>
#include <petscsnes.h>

#include "stncompat.h"
#include "stnkernel.h" /* StnKernelFn */
#include "stntune.h"

#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
  #error "stencilc programs need PETSc built with real double-precision scalars"
#endif

/* PETSc 3.21 named the DMDA-local callbacks' function types; 3.18 has pointer types only. */
#if PETSC_VERSION_LT(3, 21, 0)
typedef PetscErrorCode DMDASNESFunctionFn(DMDALocalInfo *, void *, void *, void *);
typedef PetscErrorCode DMDASNESJacobianFn(DMDALocalInfo *, void *, Mat, Mat, void *);
typedef PetscErrorCode DMDASNESFunctionVecFn(DMDALocalInfo *, Vec, Vec, void *);
typedef PetscErrorCode DMDASNESJacobianVecFn(DMDALocalInfo *, Vec, Mat, Mat, void *);
#endif

typedef struct _n_StnHistory *StnHistory;
typedef struct _n_StnSeries  *StnSeries;

/* A program's options and the objects main hands to the solver. */
typedef struct {
  const char *program;        /* its name, for messages and pictures */
  PetscBool   gpu;            /* -stn_device gpu: residual, Jacobian, vectors and Krylov on the GPU */
  PetscBool   aij;            /* -stn_mat_type aij: the Jacobian in AIJ (the baseline) */
  PetscBool   levels_sgdia;   /* -stn_levels_mat_type sgdia: coarser grids' matrices SG-DIA too */
  PetscBool   mg_fused;       /* -stn_mg_fused: multigrid's V-cycle as fused kernels on the GPU */
  PetscInt    solve_repeat;   /* -stn_solve_repeat: solves from the same guess; the last is reported */
  PetscBool   matfree;        /* -stn_operator matfree: J w by the generated kernel, no stored J */
  PetscBool   operator_auto;  /* -stn_operator auto: matfree where the fused V-cycle runs */
  PetscBool   check_jacobian; /* -stn_check_jacobian */
  PetscBool   share_gpus;     /* -stn_share_gpus: more ranks on a node than GPUs may share them */
  PetscBool   approximate;    /* set by main: the .stn has an approximate jacobian block, so the
                                 operator (exact) and the preconditioning matrix (J) differ */
  PetscBool   time_dependent; /* set by StnTSSetUp: the residuals take dt(u), TS integrates */
  char        output[PETSC_MAX_PATH_LEN];          /* -stn_output, or "" */
  char        solution_png[PETSC_MAX_PATH_LEN];    /* -stn_plot_solution, or "" */
  char        convergence_png[PETSC_MAX_PATH_LEN]; /* -stn_plot_convergence, or "" */
  /* time-dependent programs only (stnseries.c) */
  char        series_dir[PETSC_MAX_PATH_LEN];      /* -stn_output_series: DIR/PROGRAM.pvd + .vts, or "" */
  char        frames_dir[PETSC_MAX_PATH_LEN];      /* -stn_plot_frames: DIR/PROGRAM_NNNN.png, or "" */
  char        steps_png[PETSC_MAX_PATH_LEN];       /* -stn_plot_steps: dt against t, or "" */
  PetscInt    save_every;     /* -stn_output_every N: save every N-th step (0: not given) */
  PetscReal   save_dt;        /* -stn_output_dt T: save at the first step at or past each k T (0: not given) */
  Mat         J;              /* the Jacobian: SG-DIA, or AIJ with -stn_mat_type aij */
  Mat         P;              /* an AIJ copy for preconditioners that factor, or NULL */
  Mat         Jmf;            /* -stn_operator matfree: the operator (stnmatfree.h); J preconditions */
  Mat         A;              /* approximate: the exact Jacobian, the operator where it is assembled */
  StnHistory  history;        /* the residual norms, for -stn_plot_convergence */
  StnSeries   series;         /* the saved states and step sizes while TS integrates, or NULL */
} StnApp;

/* Before PetscInitialize: the host allocator set to keep freed memory (stnapp.c), and the
   defaults PetscInitialize itself reads. With a CUDA PETSc and a
   real MPI, -use_gpu_aware_mpi 0 unless the command line says otherwise: PETSc aborts at start-up
   when MPI cannot read device memory (the PyPI mpich wheel cannot), and with 0 it stages the
   ghost exchange through host memory. With an MPI that can, give -use_gpu_aware_mpi 1. */
PetscErrorCode StnAppDefaults(void);
/* Reads the -stn_* options (the GPU by default when there is one) and, on the GPU, takes this
   rank's device (one per rank, stnapp.c). */
PetscErrorCode StnAppSetFromOptions(StnApp *app, const char *program);
/* After the parameters' PetscOptionsReal: an option -NAME given with no value (which PETSc would
   ignore) is an error. given[i]: whether PetscOptionsReal read a value for -names[i]. */
PetscErrorCode StnParamsGiven(PetscInt n, const char *const names[], const PetscBool given[]);
/* After DMSetFromOptions, before StnAppCheckGrid and DMSetUp: on several GPUs, unless
   -da_processors_* say otherwise, splits the grid along its last axis only (slabs), where the
   other axes' edges are plain (DM_BOUNDARY_NONE) and every grid of multigrid's hierarchy gives
   each rank the stencil width of planes; else PETSc's split. For the set-up's cost (stnapp.c
   says why): the solves are the same on any split, to rounding in the sums over the ranks. */
PetscErrorCode StnAppSplitGrid(const StnApp *app, DM da);
/* After DMSetUp (and StnAppCheckGrid before it, stnrt.h): on the GPU gives da CUDA vectors and
   our vector kernels. */
PetscErrorCode StnAppSetUpGrid(StnApp *app, DM da);
/* Creates the Jacobian (SG-DIA with the nstencil block diagonals at offsets, or AIJ) and hands
   it to snes, whose DM has the residual and Jacobian registered; with -stn_levels_mat_type sgdia
   (the GPU's default) every grid of a hierarchy makes SG-DIA matrices too (stnmg.h). Sets the
   defaults that options override: on the GPU stngmres with multigrid where the grid gives 3
   levels or more and every field's interior equation carries the cell size (h_power[f], its
   diagonal's power of the grid spacing, is dim - 2 or STN_H_POWER_NONE), else Jacobi; on CPUs
   PETSc's ILU (block Jacobi in parallel). */
#define STN_H_POWER_NONE (-99) /* h_power[f]: the diagonal is not a power of h */
PetscErrorCode StnAppSetUpSolver(StnApp *app, SNES snes, PetscInt nstencil, const PetscInt offsets[][3], const PetscInt h_power[]);
/* After SNESSetFromOptions: SG-DIA serves Jacobi-type preconditioners directly, and multigrid
   whose levels are SG-DIA (with stnmg.h's defaults); any other (ILU, GAMG, multigrid on AIJ
   levels or with Galerkin operators, hypre, ...), and PETSc's own Jacobians (-snes_fd,
   -snes_fd_color), get an AIJ matrix. */
PetscErrorCode StnAppSetUpJacobian(StnApp *app, SNES snes);
/* For a program with an approximate jacobian block, whose FormJacobianLocal fills P with the
   approximate entries: whether J is a matrix of its own to fill with the exact ones (not P, not
   a product without a matrix: the GPU's J w, -snes_mf_operator's differences). */
PetscErrorCode StnOperatorAssembled(Mat J, Mat P, PetscBool *assembled);
/* Solves from X in a log stage of its own ("Solve") and prints how it ended (StnReportSolve);
   *reason is SNES's, except SNES_CONVERGED_ITERATING (0, not a solution) where SNES stopped on
   a small step with the residual above its tolerances. */
PetscErrorCode StnAppSolve(StnApp *app, SNES snes, Vec X, SNESConvergedReason *reason);
/* Writes -stn_output and draws the pictures of the SNES's solution (stnoutput.c): under
   -snes_grid_sequence the finest grid's, with the coordinates of X's grid; a failed solve's
   last iterate too, saying so. A file that cannot be written is an error, after the others. */
PetscErrorCode StnAppWriteOutput(StnApp *app, SNES snes, Vec X, SNESConvergedReason reason);
PetscErrorCode StnAppDestroy(StnApp *app);

/* ---- the Jacobian, one block row per point ---- */

/* Where FormJacobianLocal stores its block rows v[s][r][c] = d(F_r)/d(x_c at neighbour s):
   straight into SG-DIA storage (column s*dof + c, of height nrows, row p*dof + r for the owned
   point p, x fastest), or through MatSetValuesStencil into AIJ, skipping neighbours outside a
   non-periodic grid. StnBlockRowsBegin picks the matrix: P when it is SG-DIA, else J when J is,
   then copied into P at the end, else P. */
typedef struct {
  const DMDALocalInfo *info;
  PetscInt             nstencil, dof, nrows;
  const PetscInt     (*offsets)[3];
  Mat                  J, P, target;
  PetscScalar         *a;    /* SG-DIA values of target, or NULL for AIJ */
  MatStencil          *col;  /* AIJ: room for one row's nstencil*dof columns */
  PetscScalar         *vals;
} StnBlockRows;

PetscErrorCode StnBlockRowsBegin(DMDALocalInfo *info, Mat J, Mat P, PetscInt nstencil, PetscInt dof, const PetscInt offsets[][3], StnBlockRows *rows);
PetscErrorCode StnBlockRowsSetAIJ(StnBlockRows *rows, PetscInt i, PetscInt j, PetscInt k, const PetscScalar *v);
PetscErrorCode StnBlockRowsEnd(StnBlockRows *rows);

/* Stores the block row v (nstencil x dof x dof) of the owned point (i, j, k). */
static inline PetscErrorCode StnBlockRowsSet(StnBlockRows *rows, PetscInt i, PetscInt j, PetscInt k, const PetscScalar *v)
{
  const DMDALocalInfo *info = rows->info;
  const PetscInt       dof = rows->dof, nrows = rows->nrows;
  const PetscInt       p = ((k - info->zs) * info->ym + (j - info->ys)) * info->xm + (i - info->xs);

  if (!rows->a) return StnBlockRowsSetAIJ(rows, i, j, k, v);
  for (PetscInt s = 0; s < rows->nstencil; s++)
    for (PetscInt c = 0; c < dof; c++)
      for (PetscInt r = 0; r < dof; r++) rows->a[(s * dof + c) * nrows + p * dof + r] = v[(s * dof + r) * dof + c];
  return PETSC_SUCCESS;
}

/* -stn_check_jacobian: an entry the .stn gives must equal the derived one at (i, j, k). */
PetscErrorCode StnCheckEntry(PetscScalar given, PetscScalar derived, const char *entry, PetscInt dim, PetscInt i, PetscInt j, PetscInt k);

/* ---- the generated CUDA kernels ---- */

/* The launch shapes chosen for one grid of a hierarchy. */
typedef struct {
  PetscInt       xm, ym, zm;
  StnKernelShape residual, jacobian, product;
} StnLevelShapes;

/* A time-dependent program's FormIJacobianLocal (DMDATSIJacobianLocal's arguments): x and xdot
   are the DMDA's arrays of the state and its time derivative. */
typedef PetscErrorCode StnIJacobianHostFn(DMDALocalInfo *info, PetscReal t, const void *x, const void *xdot, PetscReal shift, Mat J, Mat P, void *user);

/* The program's kernels: the .stn's name and a hash of its text key their tuned shapes. A
   time-dependent program's residual and jacobian are TS's IFunction and IJacobian, launched with
   a StnTimeArgs (stnkernel.h) as their user argument. */
typedef struct {
  const char         *name;
  StnKernelFn        *residual, *jacobian;
  PetscLogDouble      residual_flops;   /* per owned point */
  DMDASNESJacobianFn *jacobian_host;    /* FormJacobianLocal, for matrices that are not SG-DIA */
  StnMultFn          *jacobian_mult;    /* J w without the matrix (-stn_operator matfree) */
  PetscInt            product_levels;   /* the finest grid's operator is that product: the
                                           coarser grids' Jacobians get twins without the matrix,
                                           0 none, 1 the large ones, 2 all (StnTwins) */
  StnLevelShapes      levels[16];       /* the shapes per grid, filled at first use */
  int                 nlevels;
  StnIJacobianHostFn *ijacobian_host;   /* time-dependent: FormIJacobianLocal, for matrices that
                                           are not SG-DIA (jacobian_host and jacobian_mult NULL) */
  const PetscInt     *h_power;          /* time-dependent: each field's power of h (stnapp.h's
                                           StnAppSetUpSolver), for multigrid's coarse grids */
} StnKernels;

/* The grid as the generated kernels see it (stnkernel.h): DMDALocalInfo's sizes and boxes. */
static inline StnLocalInfo StnLocalInfoOf(const DMDALocalInfo *info)
{
  const StnLocalInfo li = {(int)info->mx, (int)info->my, (int)info->mz, (int)info->xs, (int)info->ys, (int)info->zs, (int)info->xm, (int)info->ym, (int)info->zm,
                           (int)info->gxs, (int)info->gys, (int)info->gzs, (int)info->gxm, (int)info->gym, (int)info->gzm};
  return li;
}

/* The residual on the GPU: X is the ghosted local state, F the global residual (CUDA vectors);
   user is the program's AppCtx, passed to the kernel by value. */
PetscErrorCode StnResidualCUDA(DMDALocalInfo *info, Vec X, Vec F, StnKernels *k, const void *user);
/* The Jacobian on the GPU, straight into SG-DIA values in device memory (J, or P when P is
   SG-DIA), copied into P when P is AIJ; a grid whose matrices are not SG-DIA (the levels of
   -pc_type mg) is assembled on the host by k->jacobian_host with user as its context. */
PetscErrorCode StnJacobianCUDA(DMDALocalInfo *info, Vec X, Mat J, Mat P, StnKernels *k, void *user);
/* TS's IFunction F(t, x, xdot) and IJacobian shift * dF/dxdot + dF/dx on the GPU, as
   StnResidualCUDA and StnJacobianCUDA: X is the ghosted local state, Xdot the global time
   derivative (CUDA vectors); a grid whose matrices are not SG-DIA gets k->ijacobian_host. On a
   coarse grid of multigrid (DMCoarsen'ed l times, by 2 in each direction) the IJacobian and
   the IFunction of equations not multiplied by the cell size (k->h_power[f] = p < dim - 2 for
   every field that has one) are scaled by 2^(l (dim - 2 - p)): the restriction, the
   interpolation's transpose, sums 2^dim fine residuals into each coarse one, and the coarse
   correction needs the operator R A P, which for such equations is 2^(dim - 2 - p) times the
   rediscretized one at each coarsening. The GPU's only: on CPUs -pc_type mg takes the
   rediscretized operators as they are. */
PetscErrorCode StnIFunctionCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec Xdot, Vec F, StnKernels *k, const void *user);
PetscErrorCode StnIJacobianCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec Xdot, PetscReal shift, Mat J, Mat P, StnKernels *k, void *user);
/* TS's RHSFunction G(t, x) on the GPU (a program with explicit(...) terms), as StnResidualCUDA
   with k's residual kernel: X is the ghosted local state, G a CUDA vector. */
PetscErrorCode StnRHSFunctionCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec G, StnKernels *k, const void *user);
/* The launch shape of the Jacobian's product without its matrix on info's grid (k->jacobian_mult
   at the ghosted local state x, a device array): the cached one, or tuned now with -stn_autotune
   (StnTuneLaunch), or the default. */
PetscErrorCode StnKernelsProductShape(StnKernels *k, const DMDALocalInfo *info, const void *user, const double *x, StnKernelShape *shape);

#endif
