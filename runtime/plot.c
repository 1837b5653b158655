/*
** plot.c: pictures from a generated program, drawn by gnuplot.
**
**   -stn_plot_solution FILE.png     each field as a colour map (2D), as three
**                                   middle slices (3D) or as a curve (1D)
**   -stn_plot_convergence FILE.png  the residual norm at each Newton and each
**                                   Krylov iteration, on a log scale
**   -stn_plot_frames DIR            a time-dependent program's state at the
**                                   saved times, one picture each, titled
**                                   with the time (stnseries.c)
**   -stn_plot_steps FILE.png        its step sizes against the time
**
** gnuplot is a separate program (Debian: gnuplot-nox), not a library: rank 0
** writes the data and a gnuplot script into a private temporary directory,
** runs `gnuplot -d SCRIPT` with posix_spawnp (no shell; stdin from /dev/null,
** its output into a log in that directory) and removes the directory (kept,
** to rework a picture by hand, when the environment has STN_PLOT_KEEP). When
** gnuplot is absent, or fails, the program says so in one line on stderr and
** goes on. gnuplot draws into that directory; a picture that is complete (a
** PNG up to its IEND chunk) is copied to its place whole or not at all
** (stnoutput.c), and one that cannot be written there (a full disk, a link
** to /dev/full) is an error: the program ends with a non-zero exit status.
**
** The solution is gathered to rank 0 in natural ordering (DMDA global to
** natural, then a scatter to rank 0), with the grid's coordinates, so the
** axes are the grid's own. On the GPU path the vectors are CUDA vectors;
** reading them after the solve copies them to the host once. Grids larger
** than MAX_SAMPLES points in a direction are sampled (the first and last
** points always kept); a picture has fewer pixels than that anyway.
**
** The convergence history comes from an SNES monitor and a KSP monitor
** (StnRecordConvergence, called before SNESSolve). They only receive norms
** that the solvers compute anyway: on the GPU nothing crosses to the host.
*/
#define _POSIX_C_SOURCE 200809L /* mkdtemp, posix_spawnp */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <petscdmda.h>

#include "stnrt.h"

extern char **environ;

enum { MAX_SAMPLES = 256, MAX_FILES = 8 };

/* ---- the convergence history: one record per monitor call ---- */

struct _n_StnHistory {
  PetscReal *fnorm; /* ||F|| at Newton iterate k, k = 0, 1, ... */
  PetscInt   nnewton, cap_newton;
  PetscReal *rnorm; /* the KSP's residual norm at each Krylov iteration of every linear solve */
  PetscInt  *its;   /* its iteration number within its solve (0 starts a solve) */
  PetscInt  *step;  /* the Newton step whose linear solve it belongs to */
  PetscInt   nkrylov, cap_krylov;
};

static PetscErrorCode NewtonMonitor(SNES snes, PetscInt its, PetscReal fnorm, void *ctx)
{
  StnHistory h = (StnHistory)ctx;

  PetscFunctionBeginUser;
  (void)snes;
  (void)its;
  if (h->nnewton == h->cap_newton) {
    h->cap_newton = 2 * h->cap_newton + 16;
    PetscCall(PetscRealloc((size_t)h->cap_newton * sizeof *h->fnorm, &h->fnorm));
  }
  h->fnorm[h->nnewton++] = fnorm;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnKrylovHistoryMonitor(KSP ksp, PetscInt its, PetscReal rnorm, void *ctx)
{
  StnHistory h = (StnHistory)ctx;

  PetscFunctionBeginUser;
  (void)ksp;
  if (h->nkrylov == h->cap_krylov) {
    h->cap_krylov = 2 * h->cap_krylov + 64;
    PetscCall(PetscRealloc((size_t)h->cap_krylov * sizeof *h->rnorm, &h->rnorm));
    PetscCall(PetscRealloc((size_t)h->cap_krylov * sizeof *h->its, &h->its));
    PetscCall(PetscRealloc((size_t)h->cap_krylov * sizeof *h->step, &h->step));
  }
  h->rnorm[h->nkrylov] = rnorm;
  h->its[h->nkrylov]   = its;
  h->step[h->nkrylov]  = h->nnewton > 0 ? h->nnewton - 1 : 0;
  h->nkrylov++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode HistoryDestroy(void **ctx)
{
  StnHistory h = *(StnHistory *)ctx;

  PetscFunctionBeginUser;
  PetscCall(PetscFree(h->fnorm));
  PetscCall(PetscFree(h->rnorm));
  PetscCall(PetscFree(h->its));
  PetscCall(PetscFree(h->step));
  PetscCall(PetscFree(h));
  *ctx = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnRecordConvergence(SNES snes, StnHistory *history)
{
  KSP ksp;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(history));
  /* the SNES frees the history when it is destroyed; the KSP only borrows it */
  PetscCall(SNESMonitorSet(snes, NewtonMonitor, *history, HistoryDestroy));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPMonitorSet(ksp, StnKrylovHistoryMonitor, *history, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the temporary directory and gnuplot ---- */

typedef struct {
  char dir[PETSC_MAX_PATH_LEN];
  char files[MAX_FILES][PETSC_MAX_PATH_LEN];
  int  nfiles;
} Scratch;

/* A new private directory under $TMPDIR (or /tmp); 0 on success. */
static int scratch_open(Scratch *s)
{
  const char *tmp = getenv("TMPDIR");

  if (!tmp || tmp[0] != '/') tmp = "/tmp";
  s->nfiles = 0;
  if (snprintf(s->dir, sizeof s->dir, "%s/stnplot-XXXXXX", tmp) >= (int)sizeof s->dir) return -1;
  return mkdtemp(s->dir) ? 0 : -1;
}

/* Opens a new file NAME in the directory, remembered for scratch_close. */
static FILE *scratch_file(Scratch *s, const char *name, const char **path)
{
  FILE *f;
  char  full[sizeof s->files[0]]; /* built apart: gcc -O3 cannot tell s->dir from s->files (-Wrestrict) */

  if (s->nfiles == MAX_FILES) return NULL;
  if (snprintf(full, sizeof full, "%s/%s", s->dir, name) >= (int)sizeof full) return NULL;
  memcpy(s->files[s->nfiles], full, sizeof full);
  f = fopen(s->files[s->nfiles], "w");
  if (!f) return NULL;
  if (path) *path = s->files[s->nfiles];
  s->nfiles++;
  return f;
}

static void scratch_close(Scratch *s)
{
  for (int i = 0; i < s->nfiles; i++) (void)unlink(s->files[i]);
  (void)rmdir(s->dir);
}

/* s as a gnuplot string: single quotes, in which only '' is special. */
static void gp_string(FILE *f, const char *s)
{
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

/* The script's opening: a PNG terminal (cairo when gnuplot has it), the
   output file, text taken literally (names with '_' stay as they are) and a
   colour map that reads in grey and for the colour-blind (viridis). */
static void gp_begin(FILE *f, int width, int height, const char *png)
{
  fprintf(f, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
             "  set terminal pngcairo size %d,%d noenhanced font 'sans,10'\n"
             "} else {\n"
             "  set terminal png size %d,%d noenhanced\n"
             "}\n",
          width, height, width, height);
  fputs("set output ", f);
  gp_string(f, png);
  fputs("\nset palette defined (0 '#440154', 1 '#472d7b', 2 '#3b528b', 3 '#2c728e', 4 '#21908c', "
        "5 '#27ad81', 6 '#5dc863', 7 '#aadc32', 8 '#fde725')\n",
        f);
}

/* Runs gnuplot on script; 0: drawn, 1: gnuplot is not on PATH, 2: it failed
   (why in msg: its exit status and the first lines of what it printed). */
static int run_gnuplot(Scratch *s, const char *script, char *msg, size_t len)
{
  posix_spawn_file_actions_t fa;
  const char *logpath = NULL;
  char       *argv[] = {(char *)"gnuplot", (char *)"-d", (char *)script, NULL};
  pid_t       pid;
  int         rc, status;
  FILE       *log = scratch_file(s, "gnuplot.log", &logpath);

  if (!log) {
    snprintf(msg, len, "cannot write in %s", s->dir);
    return 2;
  }
  fclose(log);
  if (posix_spawn_file_actions_init(&fa) != 0) {
    snprintf(msg, len, "cannot start gnuplot");
    return 2;
  }
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == ENOENT) return 1;
  if (rc != 0) {
    snprintf(msg, len, "cannot start gnuplot: %s", strerror(rc));
    return 2;
  }
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      snprintf(msg, len, "lost track of gnuplot: %s", strerror(errno));
      return 2;
    }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (WIFEXITED(status)) snprintf(msg, len, "gnuplot failed (exit status %d)", WEXITSTATUS(status));
  else snprintf(msg, len, "gnuplot was killed (signal %d)", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  log = fopen(logpath, "r");
  if (log) { /* its first lines say why */
    size_t n = strlen(msg);
    for (int lines = 0; lines < 4 && n + 3 < len && fgets(msg + n + 3, (int)(len - n - 3), log);) {
      size_t k = n + 3 + strcspn(msg + n + 3, "\n");
      if (k == n + 3) continue; /* a blank line */
      msg[k] = '\0';
      memcpy(msg + n, "\n  ", 3);
      n = k;
      lines++;
    }
    msg[n] = '\0';
    fclose(log);
  }
  return 2;
}

/* Closes f; whether everything went into it. */
static PetscBool done_writing(FILE *f)
{
  int bad = ferror(f);

  bad |= fclose(f);
  return bad ? PETSC_FALSE : PETSC_TRUE;
}

/* Whether the file at path is a whole PNG: its signature, and its last chunk IEND (empty, with
   its fixed CRC) at the end. */
static PetscBool png_complete(const char *path)
{
  static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  static const unsigned char iend[12]     = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
  unsigned char              head[8], tail[12];
  FILE                      *f = fopen(path, "rb");
  PetscBool                  ok;

  if (!f) return PETSC_FALSE;
  ok = fread(head, 1, 8, f) == 8 && !memcmp(head, signature, 8) && fseek(f, -12, SEEK_END) == 0 && fread(tail, 1, 12, f) == 12 && !memcmp(tail, iend, 12) ? PETSC_TRUE : PETSC_FALSE;
  fclose(f);
  return ok;
}

/* Draws with the script written by draw (into the scratch directory, the picture too) and
   says what happened: the picture, copied to png (unless quiet), or a note that there is none;
   failure: why it could not be written to png, or "". *outcome (may be NULL): 0 drawn, 1
   gnuplot is not installed, 2 it failed, 3 png could not be written. Rank 0. */
static PetscErrorCode Draw(const char *program, const char *what, const char *png,
                           PetscErrorCode (*draw)(Scratch *, FILE *, const char *, void *, PetscBool *), void *ctx, PetscBool quiet, int *outcome,
                           char *failure, size_t len)
{
  Scratch     s;
  FILE       *script, *picture;
  const char *path, *drawn = NULL;
  char        msg[PETSC_MAX_PATH_LEN + 1024] = "";
  int         rc = 2;
  PetscBool   written = PETSC_FALSE;

  PetscFunctionBeginUser;
  if (outcome) *outcome = 2;
  if (strchr(png, '\n')) {
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, PETSC_STDERR, "%s: note: no %s picture: the file name has a line break\n", program, what));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (scratch_open(&s) != 0) {
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, PETSC_STDERR, "%s: note: no %s picture: cannot create a temporary directory (%s)\n", program, what,
                           strerror(errno)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  script  = scratch_file(&s, "plot.gp", &path);
  picture = scratch_file(&s, "picture.png", &drawn);
  if (picture) fclose(picture);
  if (script && picture) {
    PetscCall(draw(&s, script, drawn, ctx, &written));
    if (!done_writing(script) || !written) snprintf(msg, sizeof msg, "cannot write the data in %s", s.dir);
    else rc = run_gnuplot(&s, path, msg, sizeof msg);
  } else {
    if (script) fclose(script);
    snprintf(msg, sizeof msg, "cannot write the data in %s", s.dir);
  }
  if (rc == 0 && !png_complete(drawn)) {
    rc = 2;
    snprintf(msg, sizeof msg, "gnuplot left an incomplete picture (is %s full?)", s.dir);
  }
  if (rc == 0 && StnOutputCopy(drawn, png) != 0) {
    rc = 3;
    snprintf(failure, len, "cannot write the %s picture to %s: %s; nothing was written there", what, png, strerror(errno));
  }
  if (getenv("STN_PLOT_KEEP")) PetscCall(PetscPrintf(PETSC_COMM_SELF, "the data, the gnuplot script and its log are in %s (STN_PLOT_KEEP)\n", s.dir));
  else scratch_close(&s);
  if (outcome) *outcome = rc;
  if (rc == 0) {
    if (!quiet) PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s drawn in %s\n", what, png));
  }
  else if (rc == 3) PetscCall(PetscFPrintf(PETSC_COMM_SELF, PETSC_STDERR, "%s: error: %s\n", program, failure));
  else if (rc == 1)
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, PETSC_STDERR, "%s: note: gnuplot is not installed (not on PATH), so no %s picture was drawn (Debian: apt-get install gnuplot-nox)\n",
                           program, what));
  else PetscCall(PetscFPrintf(PETSC_COMM_SELF, PETSC_STDERR, "%s: note: no %s picture: %s\n", program, what, msg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the convergence history ---- */

typedef struct {
  StnHistory  h;
  const char *program, *snes_type, *ksp_type, *pc_type, *norm;
  char        remark[128]; /* why the solve failed, or "" */
} ConvergenceCtx;

static PetscBool plottable(PetscReal r) { return r > 0 && !PetscIsInfOrNanReal(r) ? PETSC_TRUE : PETSC_FALSE; }

/* A panel with text in the middle and nothing else; the settings of a
   log-scale panel come back afterwards. */
static void empty_panel(FILE *f, const char *text)
{
  fputs("unset logscale y\nunset border\nunset tics\nunset grid\nunset xlabel\nunset ylabel\nset label 1 ", f);
  gp_string(f, text);
  fputs(" at graph 0.5,0.5 center\nplot [0:1][0:1] NaN\n"
        "unset label 1\nset border\nset tics\nset grid\nset logscale y\n",
        f);
}

static PetscErrorCode DrawConvergence(Scratch *s, FILE *f, const char *png, void *ctx, PetscBool *written)
{
  const ConvergenceCtx *c = (const ConvergenceCtx *)ctx;
  StnHistory            h = c->h;
  const char           *newton = NULL, *krylov = NULL;
  FILE                 *nd     = scratch_file(s, "newton.dat", &newton);
  FILE                 *kd     = scratch_file(s, "krylov.dat", &krylov);
  PetscInt              nn = 0, nk = 0, base = 0, x = 0, its = h->nnewton > 0 ? h->nnewton - 1 : 0;
  PetscReal             flast = 1, rlast = 1; /* the last norms written */
  char                  t[256];

  PetscFunctionBeginUser;
  if (!nd || !kd) {
    if (nd) fclose(nd);
    if (kd) fclose(kd);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt k = 0; k < h->nnewton; k++)
    if (plottable(h->fnorm[k])) {
      fprintf(nd, "%" PetscInt_FMT " %.8e\n", k, (double)h->fnorm[k]);
      flast = h->fnorm[k];
      nn++;
    }
  /* x counts Krylov iterations over all the linear solves; each solve is a
     curve of its own (a blank line), coloured by its Newton step */
  for (PetscInt r = 0; r < h->nkrylov; r++) {
    if (h->its[r] == 0 && r > 0) {
      base = x;
      fputs("\n", kd);
    }
    x = base + h->its[r];
    if (plottable(h->rnorm[r])) {
      fprintf(kd, "%" PetscInt_FMT " %.8e %" PetscInt_FMT "\n", x, (double)h->rnorm[r], h->step[r] % 8 + 1);
      rlast = h->rnorm[r];
      nk++;
    }
  }
  if (!done_writing(nd) + !done_writing(kd)) PetscFunctionReturn(PETSC_SUCCESS);

  gp_begin(f, 1200, 500, png);
  snprintf(t, sizeof t, "%s: %" PetscInt_FMT " Newton iteration%s (%s), %" PetscInt_FMT " Krylov iteration%s in all%s", c->program, its,
           its == 1 ? "" : "s", c->snes_type, x, x == 1 ? "" : "s", c->remark);
  fputs("set multiplot layout 1,2 title ", f);
  gp_string(f, t);
  fputs(" font ',12'\nset logscale y\nset format y '%.0e'\nset grid\nunset key\nset title font ',11'\n", f);

  fputs("set title 'Newton: residual norm ||F(x)|| at each iteration'\nset xlabel 'Newton iteration'\nset ylabel 'residual norm'\n", f);
  if (its <= 20) fprintf(f, "set xtics 1\nset xrange [-0.25:%" PetscInt_FMT ".25]\n", its);
  if (nn == 1) fprintf(f, "set yrange [%.8e:%.8e]\n", 0.1 * (double)flast, 10 * (double)flast); /* one point: a decade around it */
  if (nn > 0) {
    fputs("plot ", f);
    gp_string(f, newton);
    fputs(" using 1:2 with linespoints linewidth 2 pointtype 7 linecolor rgb '#3b528b'\n", f);
  } else empty_panel(f, "no residual norms were recorded");

  fputs("set autoscale y\n", f);
  if (nk == 1) fprintf(f, "set yrange [%.8e:%.8e]\n", 0.1 * (double)rlast, 10 * (double)rlast);
  if (nk > 0) {
    if (x <= 20) fprintf(f, "set xtics 1\nset xrange [-0.25:%" PetscInt_FMT ".25]\n", x);
    else fputs("set xtics autofreq\nset autoscale x\n", f);
    snprintf(t, sizeof t, "Krylov (%s, preconditioner %s): residual norm at each iteration", c->ksp_type, c->pc_type);
    fputs("set title ", f);
    gp_string(f, t);
    fputs("\nset xlabel 'Krylov iteration, counted over all the Newton steps (one curve per linear solve)'\nset ylabel ", f);
    snprintf(t, sizeof t, "%s residual norm", c->norm);
    gp_string(f, t);
    fputs("\nplot ", f);
    gp_string(f, krylov);
    fputs(" using 1:2:3 with linespoints pointtype 7 pointsize 0.5 linecolor variable\n", f);
  } else {
    fputs("set title 'Krylov'\n", f);
    empty_panel(f, "no Krylov iterations were recorded (no linear solves, or no residual norms)");
  }
  fputs("unset multiplot\n", f);
  *written = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnPlotConvergence(SNES snes, StnHistory history, const char *program, const char *png, char *failure, size_t len)
{
  PetscMPIInt         rank;
  KSP                 ksp;
  PC                  pc;
  SNESType            stype;
  KSPType             ktype;
  PCType              ptype;
  KSPNormType         ntype;
  SNESConvergedReason reason;
  ConvergenceCtx      c;

  PetscFunctionBeginUser;
  failure[0] = '\0';
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)snes), &rank));
  if (rank != 0 || !history) PetscFunctionReturn(PETSC_SUCCESS); /* every rank saw the same norms */
  PetscCall(SNESGetType(snes, &stype));
  ktype = ptype = NULL;
  ntype = KSP_NORM_DEFAULT;
  if (history->nkrylov > 0) { /* else the KSP may never have been set up (-snes_type ngmres, say) */
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(KSPGetType(ksp, &ktype));
    PetscCall(PCGetType(pc, &ptype));
    PetscCall(KSPGetNormType(ksp, &ntype));
  }
  PetscCall(SNESGetConvergedReason(snes, &reason));
  c.remark[0] = '\0';
  if (reason <= 0) snprintf(c.remark, sizeof c.remark, ", the solve failed (%s)", SNESConvergedReasons[reason]);
  c.h         = history;
  c.program   = program;
  c.snes_type = stype ? stype : "?";
  c.ksp_type  = ktype ? ktype : "?";
  c.pc_type   = ptype ? ptype : "?";
  c.norm      = ntype == KSP_NORM_PRECONDITIONED     ? "preconditioned"
              : ntype == KSP_NORM_UNPRECONDITIONED ? "unpreconditioned"
              : ntype == KSP_NORM_NATURAL          ? "natural"
                                                   : "the KSP's";
  PetscCall(Draw(program, "convergence history", png, DrawConvergence, &c, PETSC_FALSE, NULL, failure, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the solution ---- */

typedef struct {
  const char        *program, *remark;
  PetscInt           dim, dof, n[3];
  const PetscScalar *x;      /* the solution in natural ordering, on rank 0 */
  const PetscScalar *coords; /* the coordinates likewise (dim per point), or NULL */
  const char        *names[64];
} SolutionCtx;

/* MAX_SAMPLES or fewer indices from 0 to n-1, the ends included. */
static PetscInt samples(PetscInt n, PetscInt s, PetscInt ns) { return ns == n ? s : (PetscInt)((double)s * (double)(n - 1) / (double)(ns - 1) + 0.5); }
static PetscInt nsamples(PetscInt n) { return n > MAX_SAMPLES ? MAX_SAMPLES : n; }

static double coord(const SolutionCtx *c, const PetscInt ijk[3], PetscInt d)
{
  PetscInt p = (ijk[2] * c->n[1] + ijk[1]) * c->n[0] + ijk[0];
  return c->coords ? (double)PetscRealPart(c->coords[p * c->dim + d]) : (double)ijk[d];
}

static double value(const SolutionCtx *c, const PetscInt ijk[3], PetscInt f)
{
  PetscInt p = (ijk[2] * c->n[1] + ijk[1]) * c->n[0] + ijk[0];
  return (double)PetscRealPart(c->x[p * c->dof + f]);
}

/* Writes the plane through fixed[] spanned by directions a (fast) and b
   (slow) as gnuplot grid data "ca cb v0 v1 ..." with a blank line between
   rows; lo/hi gather each field's range over everything drawn. */
static void write_plane(const SolutionCtx *c, FILE *f, PetscInt a, PetscInt b, const PetscInt fixed[3], double lo[], double hi[])
{
  PetscInt ijk[3] = {fixed[0], fixed[1], fixed[2]};
  PetscInt na = nsamples(c->n[a]), nb = b >= 0 ? nsamples(c->n[b]) : 1;

  for (PetscInt sb = 0; sb < nb; sb++) {
    if (b >= 0) ijk[b] = samples(c->n[b], sb, nb);
    for (PetscInt sa = 0; sa < na; sa++) {
      ijk[a] = samples(c->n[a], sa, na);
      fprintf(f, "%.8g", coord(c, ijk, a));
      if (b >= 0) fprintf(f, " %.8g", coord(c, ijk, b));
      for (PetscInt k = 0; k < c->dof; k++) {
        double v = value(c, ijk, k);
        fprintf(f, " %.9g", v);
        if (v == v && v < lo[k]) lo[k] = v;
        if (v == v && v > hi[k]) hi[k] = v;
      }
      fputc('\n', f);
    }
    if (b >= 0) fputc('\n', f);
  }
}

/* [lo, hi] widened when a field is constant (to the digits written), so
   that gnuplot has a range; returns whether it was. */
static PetscBool widen(double *lo, double *hi)
{
  double m = PetscMax(PetscAbsReal(*lo), PetscAbsReal(*hi));

  if (!(*lo <= *hi)) { /* all NaN */
    *lo = -1, *hi = 1;
    return PETSC_FALSE;
  }
  if (*hi - *lo > 1e-6 * m && m > 0) return PETSC_FALSE;
  *lo = 0.5 * (*lo + *hi) - (m == 0 ? 1 : 0.5 * m);
  *hi = *lo + (m == 0 ? 2 : m);
  return PETSC_TRUE;
}

static const char *axis_name(PetscInt d) { return d == 0 ? "x" : d == 1 ? "y" : "z"; }

static PetscErrorCode DrawSolution(Scratch *s, FILE *f, const char *png, void *ctx, PetscBool *written)
{
  const SolutionCtx *c = (const SolutionCtx *)ctx;
  /* the planes drawn: 1D a line, 2D the grid, 3D the three middle planes (normal z, y, x) */
  const PetscInt nplanes = c->dim == 3 ? 3 : 1;
  const PetscInt pa[3] = {0, 0, 1}, pb[3] = {c->dim > 1 ? 1 : -1, 2, 2}, normal[3] = {2, 1, 0};
  const char    *data[3] = {NULL, NULL, NULL};
  double         lo[64], hi[64], constant[64];
  PetscBool      flat[64];
  PetscInt       mid[3] = {c->n[0] / 2, c->n[1] / 2, c->n[2] / 2}, rows, cols, width, height;
  char           title[512];

  PetscFunctionBeginUser;
  for (PetscInt k = 0; k < c->dof; k++) lo[k] = PETSC_MAX_REAL, hi[k] = -PETSC_MAX_REAL;
  for (PetscInt p = 0; p < nplanes; p++) {
    static const char *names[3] = {"plane0.dat", "plane1.dat", "plane2.dat"};
    PetscInt           fixed[3] = {0, 0, 0};
    FILE              *d        = scratch_file(s, names[p], &data[p]);

    if (!d) PetscFunctionReturn(PETSC_SUCCESS);
    if (c->dim == 3) fixed[normal[p]] = mid[normal[p]];
    write_plane(c, d, pa[p], pb[p], fixed, lo, hi);
    if (!done_writing(d)) PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt k = 0; k < c->dof; k++) {
    constant[k] = 0.5 * (lo[k] + hi[k]);
    flat[k]     = widen(&lo[k], &hi[k]);
  }

  /* panels: 3D one row per field (z, y, x slices); else about square */
  if (c->dim == 3) rows = c->dof, cols = 3;
  else {
    cols = c->dof <= 3 ? c->dof : (PetscInt)PetscCeilReal(PetscSqrtReal((PetscReal)c->dof));
    rows = (c->dof + cols - 1) / cols;
  }
  width  = cols * (c->dim == 1 ? 560 : 520);
  height = rows * (c->dim == 1 ? 380 : 440) + 60;
  gp_begin(f, (int)width, (int)height, png);
  if (c->dim == 1) snprintf(title, sizeof title, "%s: %" PetscInt_FMT " points%s", c->program, c->n[0], c->remark);
  else if (c->dim == 2) snprintf(title, sizeof title, "%s: %" PetscInt_FMT " x %" PetscInt_FMT " grid%s", c->program, c->n[0], c->n[1], c->remark);
  else snprintf(title, sizeof title, "%s: %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " grid, middle slices%s", c->program, c->n[0], c->n[1], c->n[2], c->remark);
  fprintf(f, "set multiplot layout %d,%d title ", (int)rows, (int)cols);
  gp_string(f, title);
  fputs(" font ',12'\nunset key\nset title font ',11'\n", f);
  if (c->dim == 1) {
    fprintf(f, "set grid\nset xlabel 'x'\nset autoscale xfix\n");
    for (PetscInt k = 0; k < c->dof; k++) {
      snprintf(title, sizeof title, flat[k] ? "%s (constant, %.6g)" : "%s", c->names[k], constant[k]);
      fputs("set title ", f);
      gp_string(f, title);
      fprintf(f, "\nset yrange [%.10g:%.10g]\nplot ", lo[k] - 0.05 * (hi[k] - lo[k]), hi[k] + 0.05 * (hi[k] - lo[k]));
      gp_string(f, data[0]);
      fprintf(f, " using 1:%d with lines linewidth 2 linecolor rgb '#3b528b'\n", (int)k + 2);
    }
  } else {
    /* a colour map: pm3d quads between the grid points, interpolated
       bilinearly (about 256 colours across a panel, so that a coarse grid
       shows its values at the points rather than blocks of their means),
       seen from above, the axes to scale; every field has its own colour bar */
    PetscInt ns = nsamples(PetscMin(c->n[0], c->dim > 1 ? c->n[1] : c->n[0])), sub = PetscMax(1, PetscMin(32, 256 / PetscMax(1, ns - 1)));
    fprintf(f, "set view map\nset size ratio -1\nset pm3d at b corners2color mean interpolate %d,%d\nunset surface\n"
               "set autoscale xfix\nset autoscale yfix\nset tics out nomirror\nset colorbox\nset format cb '%%.3g'\n",
            (int)sub, (int)sub);
    for (PetscInt k = 0; k < c->dof; k++)
      for (PetscInt p = 0; p < nplanes; p++) {
        /* a little wider than the data, so that rounding leaves no quad outside (uncoloured) */
        double pad = 1e-6 * (hi[k] - lo[k]) + 1e-8 * PetscMax(PetscAbsReal(lo[k]), PetscAbsReal(hi[k]));
        fprintf(f, "set cbrange [%.10g:%.10g]\nset zrange [%.10g:%.10g]\n", lo[k] - pad, hi[k] + pad, lo[k] - pad, hi[k] + pad);
        fprintf(f, "set xlabel '%s'\nset ylabel '%s'\nset title ", axis_name(pa[p]), axis_name(pb[p]));
        if (c->dim == 3) {
          PetscInt ijk[3] = {0, 0, 0};
          ijk[normal[p]] = mid[normal[p]];
          snprintf(title, sizeof title, "%s at %s = %.3g", c->names[k], axis_name(normal[p]), coord(c, ijk, normal[p]));
        } else snprintf(title, sizeof title, "%s", c->names[k]);
        if (flat[k]) snprintf(title + strlen(title), sizeof title - strlen(title), " (constant, %.6g)", constant[k]);
        gp_string(f, title);
        fputs("\nsplot ", f);
        gp_string(f, data[p]);
        fprintf(f, " using 1:2:%d with pm3d\n", (int)k + 3);
      }
  }
  fputs("unset multiplot\n", f);
  *written = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v (global, on da) in natural ordering on rank 0: *v0 (sequential; empty
   on the other ranks). */
static PetscErrorCode GatherNatural(DM da, Vec v, Vec *v0)
{
  Vec        natural;
  VecScatter scatter;

  PetscFunctionBeginUser;
  PetscCall(DMDACreateNaturalVector(da, &natural));
  PetscCall(DMDAGlobalToNaturalBegin(da, v, INSERT_VALUES, natural));
  PetscCall(DMDAGlobalToNaturalEnd(da, v, INSERT_VALUES, natural));
  PetscCall(VecScatterCreateToZero(natural, &scatter, v0));
  PetscCall(VecScatterBegin(scatter, natural, *v0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(scatter, natural, *v0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterDestroy(&scatter));
  PetscCall(VecDestroy(&natural));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnPlotState(Vec X, const char *program, const char *remark, const char *png, PetscBool quiet, int *outcome, char *failure, size_t len)
{
  DM          da, cda;
  Vec         x0, coords, c0 = NULL;
  PetscMPIInt rank;
  SolutionCtx c;

  PetscFunctionBeginUser;
  failure[0] = '\0';
  if (outcome) *outcome = 2;
  PetscCall(VecGetDM(X, &da)); /* X's grid: under -snes_grid_sequence the finest */
  PetscCall(PetscMemzero(&c, sizeof c));
  PetscCall(DMDAGetInfo(da, &c.dim, &c.n[0], &c.n[1], &c.n[2], NULL, NULL, NULL, &c.dof, NULL, NULL, NULL, NULL, NULL));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)da), &rank));
  if (c.dof > 64) {
    if (rank == 0) PetscCall(PetscFPrintf(PETSC_COMM_SELF, PETSC_STDERR, "%s: note: no solution picture: it draws at most 64 fields\n", program));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt d = c.dim; d < 3; d++) c.n[d] = 1;
  PetscCall(GatherNatural(da, X, &x0));
  PetscCall(DMGetCoordinates(da, &coords));
  if (coords) {
    PetscCall(DMGetCoordinateDM(da, &cda));
    PetscCall(GatherNatural(cda, coords, &c0));
  }
  if (rank == 0) {
    c.program = program;
    c.remark  = remark;
    for (PetscInt k = 0; k < c.dof; k++) {
      PetscCall(DMDAGetFieldName(da, k, &c.names[k]));
      if (!c.names[k]) c.names[k] = "?";
    }
    PetscCall(VecGetArrayRead(x0, &c.x));
    if (c0) PetscCall(VecGetArrayRead(c0, &c.coords));
    PetscCall(Draw(program, "solution", png, DrawSolution, &c, quiet, outcome, failure, len));
    if (c0) PetscCall(VecRestoreArrayRead(c0, &c.coords));
    PetscCall(VecRestoreArrayRead(x0, &c.x));
  }
  PetscCall(VecDestroy(&c0));
  PetscCall(VecDestroy(&x0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnPlotSolution(SNES snes, Vec X, const char *program, const char *png, char *failure, size_t len)
{
  SNESConvergedReason reason;
  char                remark[128] = "";

  PetscFunctionBeginUser;
  PetscCall(SNESGetConvergedReason(snes, &reason));
  if (reason <= 0) PetscCall(PetscSNPrintf(remark, sizeof remark, ", the last iterate of a failed solve (%s)", SNESConvergedReasons[reason]));
  PetscCall(StnPlotState(X, program, remark, png, PETSC_FALSE, NULL, failure, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the step sizes of a time integration ---- */

typedef struct {
  const char      *program, *title;
  const PetscReal *t, *dt;
  PetscInt         n;
} StepsCtx;

static PetscErrorCode DrawSteps(Scratch *s, FILE *f, const char *png, void *ctx, PetscBool *written)
{
  const StepsCtx *c    = (const StepsCtx *)ctx;
  const char     *data = NULL;
  FILE           *d    = scratch_file(s, "steps.dat", &data);
  PetscReal       lo = PETSC_MAX_REAL, hi = 0;

  PetscFunctionBeginUser;
  if (!d) PetscFunctionReturn(PETSC_SUCCESS);
  /* each step as a horizontal segment from its start time to its end, at its size */
  for (PetscInt k = 0; k < c->n; k++) {
    fprintf(d, "%.10g %.10g\n%.10g %.10g\n\n", (double)c->t[k], (double)c->dt[k], (double)(c->t[k] + c->dt[k]), (double)c->dt[k]);
    lo = PetscMin(lo, c->dt[k]);
    hi = PetscMax(hi, c->dt[k]);
  }
  if (!done_writing(d)) PetscFunctionReturn(PETSC_SUCCESS);
  gp_begin(f, 900, 500, png);
  fputs("set title ", f);
  gp_string(f, c->title);
  fputs(" font ',12'\nset grid\nunset key\nset xlabel 'time t'\nset ylabel 'step size dt'\nset format y '%.3g'\n", f);
  if (c->n > 0 && hi > 10 * lo) fputs("set logscale y\n", f); /* adaptive steps spanning decades */
  if (c->n > 0 && hi <= lo) fprintf(f, "set yrange [0:%.10g]\n", 2 * (double)hi); /* fixed steps: a flat line, mid-height */
  if (c->n > 0) {
    fputs("plot ", f);
    gp_string(f, data);
    fputs(" using 1:2 with linespoints linewidth 2 pointtype 7 pointsize 0.6 linecolor rgb '#3b528b'\n", f);
  } else empty_panel(f, "no time step was taken");
  *written = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnPlotSteps(PetscInt n, const PetscReal t[], const PetscReal dt[], const char *program, const char *title, const char *png, char *failure, size_t len)
{
  StepsCtx c = {program, title, t, dt, n};

  PetscFunctionBeginUser;
  failure[0] = '\0';
  PetscCall(Draw(program, "step-size history", png, DrawSteps, &c, PETSC_FALSE, NULL, failure, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}
