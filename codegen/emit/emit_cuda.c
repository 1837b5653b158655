/*
** emit_cuda.c: the GPU side of the generated program. NAME.h is shared by
** NAME.c and NAME.cu: the Field struct, the AppCtx with the parameters
** (the kernels take it by value, with the runtime's StnLocalInfo: the
** grid's sizes and this rank's boxes), and the launchers. NAME.cu holds one kernel for the residual, one for the
** Jacobian and one for its product without the matrix, in tiles of threads over x and y, each thread sweeping one or
** more points along the slowest direction (the tuner picks the shape:
** StnTuneLaunch), with the same switch over
** kinds of points and the same expression text as the C version (field
** reads go through IX(), the index in the ghosted local array), so the two
** diff cleanly. The Jacobian kernel writes its block row straight into
** SG-DIA storage in device memory; the product kernel multiplies each entry
** by the direction as it computes it (-stn_operator matfree, stnmatfree.h).
** A time-dependent program's kernels are TS's IFunction and IJacobian: they
** take t, the time derivative xdot (at the owned points) and the shift too,
** through the runtime's StnTimeArgs, and there is no product kernel.
**
** The .cu includes no PETSc header, so nvcc compiles it wherever CUDA is
** installed (CI compiles it without a GPU or a CUDA PETSc).
*/
#include <stdio.h>
#include <string.h>

#include "emit_int.h"
#include "util.h"


/* The number of coefficients read from files. */
static int file_coefs(const Model *m) {
  int n = 0;
  for (int c = 0; c < m->ncoefs; c++) n += m->coefs[c]->coef.source != NULL;
  return n;
}

static void guard_name(const Program *P, char *buf, size_t size) {
  snprintf(buf, size, "STN_%s", P->o->h_name);
  for (char *c = buf; *c; c++) *c = (*c >= 'a' && *c <= 'z') ? (char)(*c - 32) : (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ? *c : '_';
}

void emit_cuda_header(const Ir *ir, const EmitOptions *o, FILE *out) {
  Program Pr, *P = &Pr;
  emit_program_init(P, ir, o, out);
  const Model *m = ir->m;
  char guard[256];
  guard_name(P, guard, sizeof guard);
  fprintf(out, "/*\n * %s: generated from %s by stencilc %s: what the C program and its CUDA\n"
               " * kernels share. Values are doubles on both sides.\n */\n",
          o->h_name, o->stn_name, STENCILC_VERSION);
  fprintf(out, "#ifndef %s\n#define %s\n\n#include \"stnkernel.h\" /* StnLocalInfo, StnKernelShape, StnKernelFn, %s */\n\n", guard, guard,
          m->time_dependent ? "StnTimeArgs" : "StnMultArgs");
  fprintf(out, "#define NSTENCIL %d /* block diagonals of the Jacobian */\n#define DOF      %d /* unknowns per grid point */\n\n",
          ir->nstencil, m->nfields);
  fputs("/* The unknowns at one grid point, in the order of the .stn's fields. */\ntypedef struct {\n", out);
  for (int f = 0; f < m->nfields; f++) {
    fprintf(out, "  double %s;", P->E.field[f]);
    if (m->fields[f].desc) {
      fputs(" /* ", out);
      emit_comment_text(out, m->fields[f].desc);
      fputs(" */", out);
    }
    fputc('\n', out);
  }
  fputs("} Field;\n\n", out);
  fprintf(out, "/* The parameters of %s; the grid's sizes come with each call (DMDALocalInfo in C,\n"
               "   StnLocalInfo in the kernels, which take the parameters by value)%s. */\ntypedef struct {\n", o->stn_name,
          file_coefs(m) ? ", and the kernels'\n   arrays of the coefficients read from files (the C functions get theirs from the grid's DM)" : "");
  for (int i = 0; i < m->nparams; i++) {
    if (m->param_elem[i] > 0) continue;  /* a list is one array member, double blocks[2] */
    if (m->param_len[i])
      fprintf(out, "  double %.*s[%d]; /* ", (int)strcspn(P->E.param[i], "["), P->E.param[i], m->param_len[i]);
    else
      fprintf(out, "  double %s; /* ", P->E.param[i]);
    if (m->params[i]->param.desc) {
      emit_comment_text(out, m->params[i]->param.desc);
      fputs(", ", out);
    }
    fprintf(out, "%s:%d */\n", o->stn_name, ast_line(ir->src, m->params[i]));
  }
  for (int c = 0; c < m->ncoefs; c++)
    if (P->E.coef[c])
      fprintf(out, "  const double *%s; /* coefficient %s, %s:%d: its values on the device, set for each grid's kernels */\n",
              P->E.coef[c], m->coefs[c]->coef.name, o->stn_name, ast_line(ir->src, m->coefs[c]));
  if (P->any_given || m->nparams == 0) /* a struct needs a member (emit_c.c's main sets it) */
    fputs("  int    check_jacobian; /* -stn_check_jacobian: compare the entries the .stn gives with the derived ones */\n", out);
  fputs("} AppCtx;\n\n", out);
  fputs("#ifdef __cplusplus\nextern \"C\" {\n#endif\n", out);
  if (m->time_dependent) {
    fputs("/* The launchers (StnKernelFn) of TS's IFunction and IJacobian: time points to their\n"
          "   StnTimeArgs (the AppCtx, t, xdot and the shift); each returns 0 or the CUDA error of its launch. */\n"
          "int FormIFunctionCUDA(const StnLocalInfo *info, const void *time, const double *x, double *f, const StnKernelShape *shape);\n"
          "int FormIJacobianCUDA(const StnLocalInfo *info, const void *time, const double *x, double *a, const StnKernelShape *shape);\n", out);
  if (ir->imex)
    fputs("/* The launcher of TS's RHSFunction G, the residuals' explicit terms (time as above, xdot unused). */\n"
          "int FormRHSFunctionCUDA(const StnLocalInfo *info, const void *time, const double *x, double *g, const StnKernelShape *shape);\n", out);
  } else
    fputs("/* The launchers (StnKernelFn): each returns 0 or the CUDA error of its launch. */\n"
          "int FormFunctionCUDA(const StnLocalInfo *info, const void *user, const double *x, double *f, const StnKernelShape *shape);\n"
          "int FormJacobianCUDA(const StnLocalInfo *info, const void *user, const double *x, double *a, const StnKernelShape *shape);\n"
          "/* J w without the matrix (StnMultFn): -stn_operator matfree. */\n"
          "int FormJacobianMultCUDA(const StnLocalInfo *info, const void *user, const double *x, const StnMultArgs *m, const StnKernelShape *shape);\n", out);
  fputs("#ifdef __cplusplus\n}\n#endif\n\n", out);
  fprintf(out, "#endif\n");
  emit_program_free(P);
}

/* The thread's owned points and the loop that sweeps them. Blocks of
   blockDim.x x blockDim.y threads tile the owned box in x and y; in 2D and 3D
   each thread then takes `sweep` consecutive points along the slowest
   direction (y in 2D, z in 3D), so that a block walks a slab whose
   neighbours it has just read (the launcher's shape, StnTuneLaunch). p is the
   owned point's number, x fastest, as in the vectors. Opens the loop's brace
   in 2D and 3D; point_loop_end closes it. */
static void point_loop_begin(const Program *P) {
  FILE *out = P->out;
  int dim = P->m->dim;
  fputs("  const int i = info.xs + (int)(blockIdx.x * blockDim.x + threadIdx.x);\n", out);
  if (dim == 1) {
    fputs("  (void)sweep; /* 1D: one point per thread */\n\n  if (i >= info.xs + info.xm) return;\n  const int p = i - info.xs; /* the owned point */\n", out);
    return;
  }
  if (dim == 2) fputs("  const int j0 = info.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y) * sweep;\n", out);
  else
    fputs("  const int j = info.ys + (int)(blockIdx.y * blockDim.y + threadIdx.y);\n"
          "  const int k0 = info.zs + (int)blockIdx.z * sweep;\n", out);
  fputs("\n  if (i >= info.xs + info.xm", out);
  if (dim == 3) fputs(" || j >= info.ys + info.ym", out);
  fputs(") return;\n", out);
  if (dim == 2)
    fputs("  for (int j = j0; j < j0 + sweep && j < info.ys + info.ym; j++) {\n"
          "    const int p = (j - info.ys) * info.xm + (i - info.xs); /* the owned point, x fastest */\n", out);
  else
    fputs("  for (int k = k0; k < k0 + sweep && k < info.zs + info.zm; k++) {\n"
          "    const int p = ((k - info.zs) * info.ym + (j - info.ys)) * info.xm + (i - info.xs); /* the owned point, x fastest */\n", out);
}

/* The indentation of the loop's body. */
static const char *point_indent(const Program *P) { return P->m->dim == 1 ? "  " : "    "; }

static void point_loop_end(const Program *P) {
  if (P->m->dim > 1) fputs("  }\n", P->out);
}

/* The body of a kernel that writes one value per unknown (the residual, TS's RHSFunction): the
   spacing and uniform values, then each owned point's rules; closes the kernel's brace. */
static void pointwise_kernel_body(Program *P, CaseRoots roots_of, CaseBody body) {
  emit_c_function_begin(&P->E);
  emit_function_spacing(P, roots_of);
  emit_uniform_temps(P, roots_of);
  point_loop_begin(P);
  emit_point_branches(P, BLOCK_RESIDUAL, roots_of, body, point_indent(P));
  point_loop_end(P);
  fputs("}\n\n", P->out);
}

typedef enum { RESIDUAL, JACOBIAN, PRODUCT } KernelKind;

static void launcher(const Program *P, const char *name, const char *kernel, KernelKind kind) {
  FILE *out = P->out;
  int dim = P->m->dim;
  bool ts = P->m->time_dependent;  /* TS's IFunction and IJacobian: user is a StnTimeArgs */
  static const char *const out_arg[] = {"double *residual", "double *values", "const StnMultArgs *m"};
  fprintf(out, "/* The runtime's %s (stnkernel.h): blocks of bx x by threads, each sweeping `sweep`\n"
               "   points along the slowest direction (by and sweep are 1 in 1D); 0s for the default,\n"
               "   256 x 1 x 1. */\n"
               "extern \"C\" int %s(const StnLocalInfo *info, const void *%s, const double *state, %s, const StnKernelShape *shape)\n{\n",
          kind == PRODUCT ? "StnMultFn" : "StnKernelFn", name, ts ? "time" : "user", out_arg[kind]);
  if (ts) fputs("  const StnTimeArgs *at = (const StnTimeArgs *)time; /* the AppCtx, t, xdot and the shift */\n", out);
  fputs("  const Field *x = (const Field *)state;\n", out);
  if (kind == RESIDUAL) fputs("  Field       *f = (Field *)residual;\n", out);
  if (kind == JACOBIAN) fputs("  double      *a = values;\n", out);
  fputs("  int          bx = shape->bx, by = shape->by, sweep = shape->sweep;\n\n", out);
  fputs("  if (bx <= 0 || by <= 0 || sweep <= 0) bx = 256, by = 1, sweep = 1;\n", out);
  if (dim == 1) fputs("  by = sweep = 1;\n", out);
  fputs("  if (info->xm == 0", out);
  if (dim > 1) fputs(" || info->ym == 0", out);
  if (dim > 2) fputs(" || info->zm == 0", out);
  fputs(") return 0;\n", out);
  if (dim == 2) fputs("  while ((info->ym + by * sweep - 1) / (by * sweep) > 65535) sweep *= 2; /* the grid's y limit; the points are the same */\n", out);
  if (dim == 3) fputs("  while ((info->zm + sweep - 1) / sweep > 65535) sweep *= 2; /* the grid's z limit; the points are the same */\n", out);
  fputs("  const dim3 block(bx, by);\n", out);
  if (dim == 1) fputs("  const dim3 grid((info->xm + bx - 1) / bx);\n", out);
  if (dim == 2) fputs("  const dim3 grid((info->xm + bx - 1) / bx, (info->ym + by * sweep - 1) / (by * sweep));\n", out);
  if (dim == 3) fputs("  const dim3 grid((info->xm + bx - 1) / bx, (info->ym + by - 1) / by, (info->zm + sweep - 1) / sweep);\n", out);
  static const char *const out_val[] = {"f", "a", "*m"};
  if (ts)  /* F(t, x, xdot); shift * dF/dxdot + dF/dx */
    fprintf(out, "  %s<<<grid, block>>>(*info, *(const AppCtx *)at->user, at->t, x, (const Field *)at->xdot, %s%s, sweep);\n", kernel,
            kind == JACOBIAN ? "at->shift, " : "", out_val[kind]);
  else fprintf(out, "  %s<<<grid, block>>>(*info, *(const AppCtx *)user, x, %s, sweep);\n", kernel, out_val[kind]);
  fputs("  return (int)cudaGetLastError();\n}\n\n", out);
}

/* Where the product without the matrix reads a neighbour's unknowns: NB() maps (i, j, k) to the
   direction's values there, NULL beyond a non-periodic edge. On one rank w is the owned array of
   the whole grid, wrapped in a periodic direction; on several (m.wg) a point the rank owns comes
   from w and any other from wg, the ghosts laid out in the ghosted box (split reads: an exchange
   that sends only the ghosts serves). W(s, c) is w's unknown c at neighbour s of the point. */
static void neighbour_index(const Program *P) {
  FILE *out = P->out;
  const Model *m = P->m;
  static const char *const n[] = {"mx", "my", "mz"};
  static const char *const os[] = {"xs", "ys", "zs"}, *const om[] = {"xm", "ym", "zm"};
  static const char *const gs[] = {"gxs", "gys", "gzs"}, *const gm[] = {"gxm", "gym"};
  fputs("/* For J w without the matrix: w's unknowns at the point (i, j, k), NULL beyond a non-periodic\n"
        "   edge. On one rank w is the owned array of the whole grid (a periodic direction wraps);\n"
        "   on several a point this rank owns is read from w, any other from m.wg, w's ghosts laid\n"
        "   out in the ghosted box. */\n"
        "__device__ static inline const double *NB(const StnLocalInfo &info, const StnMultArgs &m", out);
  for (int d = 0; d < m->dim; d++) fprintf(out, ", int %s", emit_index_names[d]);
  fputs(")\n{\n", out);
  for (int d = 0; d < m->dim; d++) {
    const char *v = emit_index_names[d];
    if (!m->axes[d].periodic) fprintf(out, "  if (%s < 0 || %s >= info.%s) return nullptr;\n", v, v, n[d]);
  }
  fputs("  if (m.wg) {\n    if (", out);
  for (int d = 0; d < m->dim; d++) {
    const char *v = emit_index_names[d];
    fprintf(out, "%s%s >= info.%s && %s < info.%s + info.%s", d ? " && " : "", v, os[d], v, os[d], om[d]);
  }
  fputs(")\n      return m.w + ", out);
  if (m->dim == 1) fprintf(out, "(long)(i - info.%s) * DOF;\n", os[0]);
  if (m->dim == 2) fprintf(out, "((long)(j - info.%s) * info.%s + (i - info.%s)) * DOF;\n", os[1], om[0], os[0]);
  if (m->dim == 3) fprintf(out, "(((long)(k - info.%s) * info.%s + (j - info.%s)) * info.%s + (i - info.%s)) * DOF;\n", os[2], om[1], os[1], om[0], os[0]);
  fputs("    return m.wg + ", out);
  if (m->dim == 1) fprintf(out, "(long)(i - info.%s) * DOF;\n", gs[0]);
  if (m->dim == 2) fprintf(out, "((long)(j - info.%s) * info.%s + (i - info.%s)) * DOF;\n", gs[1], gm[0], gs[0]);
  if (m->dim == 3) fprintf(out, "(((long)(k - info.%s) * info.%s + (j - info.%s)) * info.%s + (i - info.%s)) * DOF;\n", gs[2], gm[1], gs[1], gm[0], gs[0]);
  fputs("  }\n", out);
  for (int d = 0; d < m->dim; d++) {
    const char *v = emit_index_names[d];
    if (m->axes[d].periodic) fprintf(out, "  %s += %s < 0 ? info.%s : %s >= info.%s ? -info.%s : 0;\n", v, v, n[d], v, n[d], n[d]);
  }
  fputs("  return m.w + ", out);
  if (m->dim == 1) fputs("(long)i * DOF;\n", out);
  if (m->dim == 2) fputs("((long)j * info.mx + i) * DOF;\n", out);
  if (m->dim == 3) fputs("(((long)k * info.my + j) * info.mx + i) * DOF;\n", out);
  fputs("}\n\n/* w's unknown c_ at the point's neighbour s_ (0 where there is none). */\n"
        "#define W(s_, c_) (nb[s_] ? nb[s_][c_] : 0.0)\n\n", out);
}

/* J w at every owned point from the same entries as FormJacobianKernel, each times the
   direction at its neighbour as it is computed, with a smoothing step's update as the epilogue
   (StnMultArgs, stnkernel.h). */
static void product_kernel(Program *P) {
  FILE *out = P->out;
  const Ir *ir = P->ir;
  neighbour_index(P);
  fputs("/* J w without the matrix: each entry of the block row as FormJacobianKernel computes it,\n"
        "   times w at its neighbour. Reads the state and w (neighbours from cache), b, d and p;\n"
        "   writes y: about 48 bytes per unknown, where the product with the stored matrix reads\n"
        "   8 * NSTENCIL * DOF bytes of it per unknown besides. */\n"
        "__global__ static void FormJacobianMultKernel(const StnLocalInfo info, const AppCtx user, const Field *__restrict__ x, const StnMultArgs m, const int sweep)\n{\n", out);
  fputs("  const double *__restrict__ w = m.w; /* the point's own values */\n", out);
  P->product = true; /* from here: the roots and entries of the product (approximate ones derived) */
  emit_c_function_begin(&P->E);
  emit_function_spacing(P, emit_jacobian_roots);
  emit_uniform_temps(P, emit_jacobian_roots);
  point_loop_begin(P);
  const char *in = point_indent(P);
  fprintf(out, "%sconst double *nb[NSTENCIL] = {", in);
  for (int s = 0; s < ir->nstencil; s++) {
    const int *o = ir->offsets[ir->stencil[s]];
    fputs(s ? ", NB(info, m" : "NB(info, m", out);
    for (int d = 0; d < P->m->dim; d++) {
      if (o[d]) fprintf(out, ", %s %c %d", emit_index_names[d], o[d] < 0 ? '-' : '+', o[d] < 0 ? -o[d] : o[d]);
      else fprintf(out, ", %s", emit_index_names[d]);
    }
    fputs(")", out);
  }
  fputs("};\n", out);
  fprintf(out, "%sdouble Jw[DOF] = {};\n\n", in);
  emit_point_branches(P, BLOCK_JACOBIAN, emit_jacobian_roots, emit_jacobian_body, in);
  P->product = false;
  fprintf(out, "#pragma unroll\n%sfor (int r = 0; r < DOF; r++) {\n"
               "%s  const long t = (long)p * DOF + r;\n"
               "%s  double     y;\n\n"
               "%s  if (!m.b) {\n%s    m.y[t] = m.d ? m.d[t] * Jw[r] : Jw[r];\n%s    continue;\n%s  }\n"
               "%s  y = m.b[t] - Jw[r];\n"
               "%s  if (m.d) y *= m.d[t];\n"
               "%s  y *= m.gamma;\n"
               "%s  if (m.beta != 0.0) y += m.beta * w[t];\n"
               "%s  if (m.p) y += m.alpha * m.p[t];\n"
               "%s  m.y[t] = y;\n%s}\n",
          in, in, in, in, in, in, in, in, in, in, in, in, in, in);
  point_loop_end(P);
  fputs("}\n\n", out);
}

void emit_program_header(const Ir *ir, const EmitOptions *o, FILE *out) {
  fprintf(out, "/*\n * stn_program.h: generated from %s by stencilc %s: this program's matrix, for the\n"
               " * runtime's CUDA kernels (sgdia_instances.h). nvcc compiles the SG-DIA product and the\n"
               " * GMRES cycle kernel for these values only (and a generic version for any other matrix),\n"
               " * not for all 40 combinations that the runtime has: seconds instead of a minute.\n */\n",
          o->stn_name, STENCILC_VERSION);
  fprintf(out, "#define STN_PROGRAM_DOF   %d /* unknowns per grid point */\n#define STN_PROGRAM_NSTEN %d /* block diagonals of the Jacobian */\n",
          ir->m->nfields, ir->nstencil);
}

void emit_cuda_kernels(const Ir *ir, const EmitOptions *o, FILE *out) {
  Program Pr, *P = &Pr;
  emit_program_init(P, ir, o, out);
  const Model *m = ir->m;
  P->E.cuda = true;
  P->E.grid = "info.";
  P->E.params = "user.";
  int stem = (int)strlen(o->c_name) - 2;  /* NAME of NAME.c */
  bool ts = m->time_dependent;
  if (ts)
    fprintf(out, "/*\n * %.*s.cu: generated from %s by stencilc %s: TS's IFunction F(t, x, xdot) and its\n"
                 " * IJacobian shift * dF/dxdot + dF/dx on the GPU: thread blocks tile the grid in x and y,\n"
                 " * each thread sweeping one or more points along the slowest direction. The\n"
                 " * expressions are those of the C version; x[IX(i - 1, j)] there is x[j][i - 1] in\n"
                 " * the C, and xdot[p] (the owned point) xdot[j][i].\n */\n",
            stem, o->c_name, o->stn_name, STENCILC_VERSION);
  else
    fprintf(out, "/*\n * %.*s.cu: generated from %s by stencilc %s: the residual, the Jacobian and\n"
                 " * its product without the matrix on the GPU: thread blocks tile the grid in x and y,\n"
                 " * each thread sweeping one or more points along the slowest direction. The\n"
                 " * expressions are those of the C version; x[IX(i - 1, j)] there is x[j][i - 1] in\n"
                 " * the C.\n */\n",
            stem, o->c_name, o->stn_name, STENCILC_VERSION);
  fprintf(out, "#include <math.h>\n\n#include \"%s\"\n\n", o->h_name);
  fputs("#define PETSC_PI       3.14159265358979323846\n#define PETSC_INFINITY INFINITY\n\n", out);
  emit_c_mod_function(ir, out, true);
  fputs("/* The index in the local (ghosted) array of the point (i, j, k). */\n#define IX(", out);
  emit_list(out, m->dim, "%s_", emit_index_names);
  fputs(") (", out);
  if (m->dim == 1) fputs("(i_) - info.gxs", out);
  if (m->dim == 2) fputs("((j_) - info.gys) * info.gxm + ((i_) - info.gxs)", out);
  if (m->dim == 3) fputs("(((k_) - info.gzs) * info.gym + ((j_) - info.gys)) * info.gxm + ((i_) - info.gxs)", out);
  fputs(")\n\n", out);

  /* The residual. */
  if (ts)
    fputs("/* F(t, x, xdot) at every owned point: 16 bytes per unknown read (plus ghost re-reads from\n"
          "   cache) and 8 written; compute is a few dozen flops per point. */\n"
          "__global__ static void FormIFunctionKernel(const StnLocalInfo info, const AppCtx user, const double t, const Field *__restrict__ x,\n"
          "                                           const Field *__restrict__ xdot, Field *__restrict__ f, const int sweep)\n{\n", out);
  else
    fputs("/* F(x) at every owned point: 8 bytes per unknown read (plus ghost re-reads from\n"
          "   cache) and 8 written; compute is a few dozen flops per point. */\n"
          "__global__ static void FormFunctionKernel(const StnLocalInfo info, const AppCtx user, const Field *__restrict__ x, Field *__restrict__ f, const int sweep)\n{\n", out);
  pointwise_kernel_body(P, emit_residual_roots, emit_residual_body);
  if (ts) launcher(P, "FormIFunctionCUDA", "FormIFunctionKernel", RESIDUAL);
  else launcher(P, "FormFunctionCUDA", "FormFunctionKernel", RESIDUAL);

  if (ir->imex) { /* TS's RHSFunction: the same launch, its kernel writing g */
    fputs("/* G(t, x), TS's RHSFunction, at every owned point: minus the residuals' explicit terms. 8 bytes\n"
          "   per unknown read (plus ghost re-reads from cache) and 8 written. xdot is not read. */\n"
          "__global__ static void FormRHSFunctionKernel(const StnLocalInfo info, const AppCtx user, const double t, const Field *__restrict__ x,\n"
          "                                             const Field *__restrict__ xdot, Field *__restrict__ g, const int sweep)\n{\n", out);
    pointwise_kernel_body(P, emit_rhs_roots, emit_rhs_body);
    launcher(P, "FormRHSFunctionCUDA", "FormRHSFunctionKernel", RESIDUAL);
  }

  /* The Jacobian. */
  fputs("/* The block row of every owned point, straight into SG-DIA storage a: column\n"
        "   s*DOF + c, of height n*DOF, row p*DOF + r. Writes NSTENCIL*DOF*DOF doubles per\n"
        "   point, coalesced across threads. */\n", out);
  if (ts)
    fputs("__global__ static void FormIJacobianKernel(const StnLocalInfo info, const AppCtx user, const double t, const Field *__restrict__ x,\n"
          "                                           const Field *__restrict__ xdot, const double shift, double *__restrict__ a, const int sweep)\n{\n", out);
  else
    fputs("__global__ static void FormJacobianKernel(const StnLocalInfo info, const AppCtx user, const Field *__restrict__ x, double *__restrict__ a, const int sweep)\n{\n", out);
  fputs("  const long n = (long)info.xm", out);
  if (m->dim > 1) fputs(" * info.ym", out);
  if (m->dim > 2) fputs(" * info.zm", out);
  fputs("; /* owned points: the height of a block column is n*DOF */\n", out);
  emit_c_function_begin(&P->E);
  emit_function_spacing(P, emit_jacobian_roots);
  emit_uniform_temps(P, emit_jacobian_roots);
  point_loop_begin(P);
  const char *in = point_indent(P);
  fprintf(out, "%sdouble v[NSTENCIL][DOF][DOF] = {};\n\n", in);
  emit_point_branches(P, BLOCK_JACOBIAN, emit_jacobian_roots, emit_jacobian_body, in);
  fprintf(out, "#pragma unroll\n%sfor (int s = 0; s < NSTENCIL; s++)\n#pragma unroll\n%s  for (int c = 0; c < DOF; c++)\n"
          "#pragma unroll\n%s    for (int r = 0; r < DOF; r++) a[((long)(s * DOF + c) * n + p) * DOF + r] = v[s][r][c];\n", in, in, in);
  point_loop_end(P);
  fputs("}\n\n", out);
  if (ts) { /* no product without the matrix: it would need the time derivative the Jacobian was formed at */
    launcher(P, "FormIJacobianCUDA", "FormIJacobianKernel", JACOBIAN);
    emit_program_free(P);
    return;
  }
  launcher(P, "FormJacobianCUDA", "FormJacobianKernel", JACOBIAN);
  product_kernel(P);
  launcher(P, "FormJacobianMultCUDA", "FormJacobianMultKernel", PRODUCT);
  emit_program_free(P);
}
