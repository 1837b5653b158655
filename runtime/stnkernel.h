/* stnkernel.h: how the runtime calls a program's generated CUDA kernels. Plain C, no PETSc or
   CUDA header: the generated NAME.h includes it, so NAME.cu (nvcc) and NAME.c see one signature. */
#ifndef STNKERNEL_H
#define STNKERNEL_H

/* How a generated stencil kernel (the residual, the Jacobian) covers the owned box: thread
   blocks of bx x by threads tile it in x and y, and in 2D and 3D each thread sweeps `sweep`
   consecutive points along the slowest direction (y in 2D, z in 3D). In 1D by and sweep are 1;
   0s ask for the default, 256 x 1 x 1. */
typedef struct {
  int bx, by, sweep;
} StnKernelShape;

/* The grid as a kernel sees it: DMDALocalInfo's sizes and this rank's boxes, as ints, with the
   same names (the kernels read info.mx where the C reads info->mx). Unused directions are 1 wide. */
typedef struct {
  int mx, my, mz;       /* grid points per direction */
  int xs, ys, zs;       /* owned box: first index */
  int xm, ym, zm;       /*            and count per direction */
  int gxs, gys, gzs;    /* ghosted box of the local vector x */
  int gxm, gym, gzm;
} StnLocalInfo;

/* A generated kernel's launcher (FormFunctionCUDA, FormJacobianCUDA): user is the program's
   AppCtx (its parameters), x the ghosted local state, out the residual or the SG-DIA values,
   all arrays in device memory; returns 0 or the CUDA error of the launch. */
typedef int StnKernelFn(const StnLocalInfo *info, const void *user, const double *x, double *out, const StnKernelShape *shape);

/* What the kernels of a time-dependent program (TS's IFunction F(t, x, xdot) and IJacobian
   shift * dF/dxdot + dF/dx) take besides the state: their launchers' user argument points here,
   and user here to the program's AppCtx. xdot is the owned array of the time derivative, which
   the residuals read at the point only; shift is the IJacobian's. */
typedef struct {
  const void   *user;
  double        t, shift;
  const double *xdot;
} StnTimeArgs;

/* The operands of the Jacobian's product without its matrix (-stn_operator matfree): J at the
   ghosted local state x times the direction w, w the owned array:

       y = J w, or d .* J w                           (b NULL; p and the scalars unused)
       y = alpha p + beta w + gamma d .* (b - J w)    (a smoothing step of stnmgcycle.c)

   d and p may be NULL (no scaling, no term); p may be y; w must not be y. On several ranks a
   point's neighbours that the rank owns are read from w and the others from wg, laid out in the
   ghosted box with its ghosts up to date (its owned points not read: StnHaloExchangeGhosts'
   array serves); where wg is NULL all from w, which must then be the whole grid (one rank). */
typedef struct {
  const double *w, *b, *d, *p;
  double       *y;
  double        alpha, beta, gamma;
  const double *wg;
} StnMultArgs;

/* Its launcher (FormJacobianMultCUDA): 0 or the CUDA error of the launch. */
typedef int StnMultFn(const StnLocalInfo *info, const void *user, const double *x, const StnMultArgs *args, const StnKernelShape *shape);

#endif
