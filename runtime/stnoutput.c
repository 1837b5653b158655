/*
** stnoutput.c: the files a generated program writes (-stn_output FILE.vts,
** -stn_plot_solution and -stn_plot_convergence FILE.png), whole or not at
** all, and the checks of the grid against the ranks before DMSetUp.
**
** A file is written into a temporary file beside it (".NAME.XXXXXX.EXT", so
** that PETSc's VTK viewer still sees the extension), flushed to the disk and
** renamed over NAME only when complete: a full disk, a file size limit or a
** failing device leave NAME as it was and no temporary file behind, and the
** program says so in a sentence and ends with a non-zero exit status. A NAME
** that is (or links to) a device or a FIFO is written through, never
** replaced by a rename; a link to a regular file keeps its link, the file it
** names is replaced. The paths are checked before the solve (StnOutputCheck),
** so that an unwritable one costs no solve.
*/
#define _DEFAULT_SOURCE /* mkstemps, realpath */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stnrt.h"

/* ---- writing a file whole ---- */

/* The file NAME replaces, into o->target: NAME, or the file a link names (a dangling link: NAME). */
static void resolve(const char *name, StnOutput *o)
{
  struct stat st;
  char       *real = NULL;

  if (lstat(name, &st) == 0 && S_ISLNK(st.st_mode)) real = realpath(name, NULL);
  snprintf(o->target, sizeof o->target, "%s", real ? real : name);
  free(real);
}

int StnOutputBegin(const char *name, StnOutput *o)
{
  struct stat st;
  const char *slash, *base, *ext;
  int         fd, len;

  memset(o, 0, sizeof *o);
  snprintf(o->name, sizeof o->name, "%s", name);
  if (stat(name, &st) == 0 && S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    return -1;
  }
  if (stat(name, &st) == 0 && !S_ISREG(st.st_mode)) { /* a device or a FIFO: through it */
    o->direct = PETSC_TRUE;
    snprintf(o->path, sizeof o->path, "%s", name);
    return access(name, W_OK);
  }
  resolve(name, o);
  slash = strrchr(o->target, '/');
  base  = slash ? slash + 1 : o->target;
  ext   = strrchr(base, '.');
  if (!ext || ext == base) ext = "";
  len = snprintf(o->path, sizeof o->path, "%.*s.%.*s.XXXXXX%s", slash ? (int)(base - o->target) : 0, o->target, (int)(ext[0] ? ext - base : (long)strlen(base)), base, ext);
  if (len >= (int)sizeof o->path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  fd = mkstemps(o->path, (int)strlen(ext));
  if (fd < 0) return -1;
  /* mkstemps makes it 0600: the replaced file's mode, or a new file's */
  if (stat(o->target, &st) == 0) o->mode = st.st_mode & 07777;
  else {
    mode_t mask = umask(0);

    umask(mask);
    o->mode = 0666 & ~mask;
  }
  if (close(fd) != 0) {
    int err = errno;

    unlink(o->path);
    errno = err;
    return -1;
  }
  return 0;
}

int StnOutputCommit(StnOutput *o)
{
  int fd, err = 0;

  if (o->direct) return 0;
  /* on the disk before the rename, or a crash could leave NAME empty */
  fd = open(o->path, O_RDONLY);
  if (fd < 0 || fsync(fd) != 0 || fchmod(fd, o->mode) != 0) err = errno ? errno : EIO;
  if (fd >= 0) close(fd);
  if (!err && rename(o->path, o->target) != 0) err = errno;
  if (err) {
    unlink(o->path);
    errno = err;
    return -1;
  }
  return 0;
}

void StnOutputAbort(StnOutput *o)
{
  if (!o->direct && o->path[0]) unlink(o->path);
}

int StnOutputCopy(const char *from, const char *name)
{
  StnOutput o;
  char      buf[65536];
  ssize_t   n   = 0;
  int       err = 0, in, out;

  if (StnOutputBegin(name, &o) != 0) return -1;
  in  = open(from, O_RDONLY);
  out = in < 0 ? -1 : open(o.path, O_WRONLY | O_TRUNC);
  if (in < 0 || out < 0) err = errno;
  while (!err && (n = read(in, buf, sizeof buf)) > 0)
    for (ssize_t done = 0; !err && done < n;) {
      ssize_t w = write(out, buf + done, (size_t)(n - done));
      if (w < 0 && errno != EINTR) err = errno;
      if (w > 0) done += w;
    }
  if (!err && n < 0) err = errno;
  if (out >= 0 && close(out) != 0 && !err) err = errno;
  if (in >= 0) close(in);
  if (err) {
    StnOutputAbort(&o);
    errno = err;
    return -1;
  }
  return StnOutputCommit(&o);
}

int StnOutputCheck(const char *name, char *why, size_t len)
{
  StnOutput o;

  if (!name[0]) {
    snprintf(why, len, "the file name is empty");
    return -1;
  }
  if (StnOutputBegin(name, &o) != 0) {
    snprintf(why, len, "%s", errno == EISDIR ? "it is a directory" : strerror(errno));
    return -1;
  }
  StnOutputAbort(&o);
  return 0;
}

PetscErrorCode StnOutputCheckAll(const char *const options[], const char *const names[], PetscInt n)
{
  char        why[PETSC_MAX_PATH_LEN + 256] = "";
  PetscMPIInt rank;
  int         bad = -1;

  PetscFunctionBeginUser;
  /* a file size limit (ulimit -f) fails the write, which is reported, rather than killing the
     program halfway through a file */
  (void)signal(SIGXFSZ, SIG_IGN);
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (rank == 0)
    for (PetscInt i = 0; i < n && bad < 0; i++) {
      char reason[256];

      if (!names[i][0]) continue;
      if (StnOutputCheck(names[i], reason, sizeof reason) == 0) continue;
      bad = (int)i;
      snprintf(why, sizeof why, "%s %s: cannot write there (%s); nothing was solved: give a file in a directory you can write to", options[i], names[i], reason);
    }
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Bcast(why, (PetscMPIInt)sizeof why, MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCheck(bad < 0, PETSC_COMM_WORLD, PETSC_ERR_FILE_OPEN, "%s", why);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the solution as VTK ---- */

/* Whether the VTK file at path ends as PETSc's writer ends it: PETSc does not see every failed
   write (a failed flush whose data stdio then drops), so a file cut short by a full disk or a
   file size limit is told by its missing end. */
static PetscBool vtk_complete(const char *path)
{
  static const char end[] = "</VTKFile>\n";
  char              tail[sizeof end - 1];
  FILE             *f = fopen(path, "rb");
  PetscBool         ok;

  if (!f) return PETSC_FALSE;
  ok = fseek(f, -(long)sizeof tail, SEEK_END) == 0 && fread(tail, 1, sizeof tail, f) == sizeof tail && !memcmp(tail, end, sizeof tail) ? PETSC_TRUE : PETSC_FALSE;
  fclose(f);
  return ok;
}

/* A new file $TMPDIR/stnvtk-XXXXXX.vts (or under /tmp), for a VTK file bound for a device. */
static int scratch_vtk(char *path, size_t len)
{
  const char *tmp = getenv("TMPDIR");
  int         fd;

  if (!tmp || tmp[0] != '/') tmp = "/tmp";
  if (snprintf(path, len, "%s/stnvtk-XXXXXX.vts", tmp) >= (int)len) {
    errno = ENAMETOOLONG;
    return -1;
  }
  fd = mkstemps(path, 4);
  return fd < 0 ? -1 : close(fd);
}

PetscErrorCode StnWriteVTK(Vec x, const char *name, char *failure, size_t len)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)x);
  StnOutput      o;
  PetscViewer    viewer = NULL;
  PetscMPIInt    rank;
  PetscErrorCode ierr;
  char           path[PETSC_MAX_PATH_LEN] = "", why[256] = "";
  int            err = 0;

  PetscFunctionBeginUser;
  failure[0] = '\0';
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  /* PETSc writes a regular file: the temporary one beside name, or for a device one in $TMPDIR
     that is then copied through the device */
  if (rank == 0 && StnOutputBegin(name, &o) != 0) err = errno ? errno : EIO;
  else if (rank == 0 && o.direct && scratch_vtk(path, sizeof path) != 0) err = errno ? errno : EIO;
  else if (rank == 0 && !o.direct) snprintf(path, sizeof path, "%s", o.path);
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  if (!err) {
    PetscCallMPI(MPI_Bcast(path, (PetscMPIInt)sizeof path, MPI_CHAR, 0, comm));
    /* PETSc's own words for a failed write are replaced by ours: quiet while it writes */
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    errno = 0;
    ierr = PetscViewerVTKOpen(comm, path, FILE_MODE_WRITE, &viewer);
    if (!ierr) ierr = VecView(x, viewer);
    if (viewer) { /* the VTK viewer writes the file here */
      PetscErrorCode ierr2 = PetscViewerDestroy(&viewer);
      if (!ierr) ierr = ierr2;
    }
    if (rank == 0) err = errno;
    PetscCall(PetscPopErrorHandler());
    if (rank == 0) {
      if (ierr || !vtk_complete(path)) snprintf(why, sizeof why, "%s", err && err != ENOENT ? strerror(err) : "the file came out incomplete (a full disk?)");
      else if (o.direct && StnOutputCopy(path, name) != 0) snprintf(why, sizeof why, "%s", strerror(errno));
      else if (!o.direct && StnOutputCommit(&o) != 0) snprintf(why, sizeof why, "%s", strerror(errno));
      if (o.direct) unlink(path);
      else if (why[0]) StnOutputAbort(&o);
    }
  } else if (rank == 0) snprintf(why, sizeof why, "%s", strerror(err));
  PetscCallMPI(MPI_Bcast(why, (PetscMPIInt)sizeof why, MPI_CHAR, 0, comm));
  if (why[0]) snprintf(failure, len, "cannot write the solution to %s: %s; nothing was written there", name, why);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the grid against the ranks ---- */

/* How DMSetUp splits n[0..dim) points over size ranks, into r[]: given[d] ranks in direction d,
   or PETSC_DECIDE for PETSc's choice (the same rules as PETSc's da1.c, da2.c and da3.c, which
   aim at blocks as square as the factors of size allow). False when the given counts cannot
   multiply to size. */
static PetscBool split(PetscInt dim, const PetscInt n[3], const PetscInt given[3], PetscInt size, PetscInt r[3])
{
  PetscInt m = given[0], k = given[1], p = given[2];

  r[0] = r[1] = r[2] = 1;
  if (dim == 1) {
    r[0] = size;
    return PETSC_TRUE;
  }
  if (dim == 2) {
    if (m != PETSC_DECIDE && k != PETSC_DECIDE) return m * k == size ? (r[0] = m, r[1] = k, PETSC_TRUE) : PETSC_FALSE;
    if (k != PETSC_DECIDE) m = size / k;
    else if (m != PETSC_DECIDE) k = size / m;
    else {
      m = (PetscInt)(0.5 + PetscSqrtReal((PetscReal)n[0] * (PetscReal)size / (PetscReal)n[1]));
      if (!m) m = 1;
      for (; m > 0; m--)
        if (size % m == 0) break;
      k = size / m;
      if (n[0] > n[1] && m < k) { PetscInt t = m; m = k; k = t; }
    }
    r[0] = m, r[1] = k;
    return m * k == size ? PETSC_TRUE : PETSC_FALSE;
  }
  /* 3D: the cases of da3.c, by which of m, k, p were given */
  if (m != PETSC_DECIDE && k != PETSC_DECIDE && p != PETSC_DECIDE) {
  } else if (m == PETSC_DECIDE && k != PETSC_DECIDE && p != PETSC_DECIDE) m = size / (k * p);
  else if (m != PETSC_DECIDE && k == PETSC_DECIDE && p != PETSC_DECIDE) k = size / (m * p);
  else if (m != PETSC_DECIDE && k != PETSC_DECIDE && p == PETSC_DECIDE) p = size / (m * k);
  else if (m == PETSC_DECIDE && k == PETSC_DECIDE && p != PETSC_DECIDE) {
    m = (PetscInt)(0.5 + PetscSqrtReal((PetscReal)n[0] * (PetscReal)size / ((PetscReal)n[1] * p)));
    if (!m) m = 1;
    for (; m > 0; m--) { k = size / (m * p); if (m * k * p == size) break; }
    if (!m) return PETSC_FALSE;
    if (n[0] > n[1] && m < k) { PetscInt t = m; m = k; k = t; }
  } else if (m == PETSC_DECIDE && k != PETSC_DECIDE && p == PETSC_DECIDE) {
    m = (PetscInt)(0.5 + PetscSqrtReal((PetscReal)n[0] * (PetscReal)size / ((PetscReal)n[2] * k)));
    if (!m) m = 1;
    for (; m > 0; m--) { p = size / (m * k); if (m * k * p == size) break; }
    if (!m) return PETSC_FALSE;
    if (n[0] > n[2] && m < p) { PetscInt t = m; m = p; p = t; }
  } else if (m != PETSC_DECIDE && k == PETSC_DECIDE && p == PETSC_DECIDE) {
    k = (PetscInt)(0.5 + PetscSqrtReal((PetscReal)n[1] * (PetscReal)size / ((PetscReal)n[2] * m)));
    if (!k) k = 1;
    for (; k > 0; k--) { p = size / (m * k); if (m * k * p == size) break; }
    if (!k) return PETSC_FALSE;
    if (n[1] > n[2] && k < p) { PetscInt t = k; k = p; p = t; }
  } else {
    k = (PetscInt)(0.5 + PetscPowReal((PetscReal)n[1] * n[1] * (PetscReal)size / ((PetscReal)n[2] * n[0]), (PetscReal)(1. / 3.)));
    if (!k) k = 1;
    for (; k > 0; k--)
      if (size % k == 0) break;
    if (!k) k = 1;
    m = (PetscInt)(0.5 + PetscSqrtReal((PetscReal)n[0] * (PetscReal)size / ((PetscReal)n[2] * k)));
    if (!m) m = 1;
    for (; m > 0; m--) { p = size / (m * k); if (m * k * p == size) break; }
    if (n[0] > n[2] && m < p) { PetscInt t = m; m = p; p = t; }
  }
  r[0] = m, r[1] = k, r[2] = p;
  return m > 0 && k > 0 && p > 0 && m * k * p == size ? PETSC_TRUE : PETSC_FALSE;
}

/* Whether the split r[] gives every rank at least the stencil width s of points in every
   direction (PETSc's DMSetUp requires it where a direction has several ranks or is periodic),
   and at least one point; else *bad is the first direction that fails. */
static PetscBool fits(PetscInt dim, const PetscInt n[3], const PetscInt r[3], PetscInt s, const DMBoundaryType bt[3], PetscInt *bad)
{
  for (PetscInt d = 0; d < dim; d++) {
    PetscInt need = r[d] > 1 || bt[d] == DM_BOUNDARY_PERIODIC ? PetscMax(s, 1) : 1;
    if (n[d] / r[d] < need) {
      *bad = d;
      return PETSC_FALSE;
    }
  }
  return PETSC_TRUE;
}

PetscErrorCode StnAppCheckGrid(DM da, PetscInt min_points, const char *stn)
{
  static const char axes[] = "xyz";
  PetscInt          dim, n[3], given[3], s, r[3], most = 0, d = 0;
  DMBoundaryType    bt[3];
  PetscMPIInt       size;
  char              split_text[64];

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, &dim, &n[0], &n[1], &n[2], &given[0], &given[1], &given[2], NULL, &s, &bt[0], &bt[1], &bt[2], NULL));
  for (PetscInt k = 0; k < dim; k++)
    PetscCheck(n[k] >= min_points, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "-da_grid_%c %" PetscInt_FMT " is too small: %s needs at least %" PetscInt_FMT " points in %c (2 * stencil width + 1)", axes[k], n[k], stn, min_points, axes[k]);
  for (PetscInt k = dim; k < 3; k++) n[k] = 1, given[k] = 1;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)da), &size));
  if (!split(dim, n, given, size, r)) {
    PetscInt g = 1;
    for (PetscInt k = 0; k < dim; k++) g *= given[k] > 0 ? given[k] : 1;
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "the ranks per direction given with -da_processors_x/y/z cannot make up the %d MPI ranks (the given ones multiply to %" PetscInt_FMT "): give counts whose product is the number of ranks, or leave them to PETSc", (int)size, g);
  }
  if (fits(dim, n, r, s, bt, &d)) PetscFunctionReturn(PETSC_SUCCESS);
  /* the most ranks, up to size, this grid can be split over with the same -da_processors_* */
  for (PetscInt t = size - 1; t >= 1 && !most; t--) {
    PetscInt rt[3], bad;
    if (split(dim, n, given, t, rt) && fits(dim, n, rt, s, bt, &bad)) most = t;
  }
  if (dim == 1) PetscCall(PetscSNPrintf(split_text, sizeof split_text, "%" PetscInt_FMT "-point grid into %" PetscInt_FMT " blocks", n[0], r[0]));
  if (dim == 2) PetscCall(PetscSNPrintf(split_text, sizeof split_text, "%" PetscInt_FMT " x %" PetscInt_FMT " grid into %" PetscInt_FMT " x %" PetscInt_FMT " blocks", n[0], n[1], r[0], r[1]));
  if (dim == 3)
    PetscCall(PetscSNPrintf(split_text, sizeof split_text, "%" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " grid into %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " blocks", n[0], n[1], n[2], r[0], r[1], r[2]));
  s = PetscMax(s, 1);
  SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
          "%d MPI ranks are too many for this grid: they split the %s, and a block in %c gets fewer than the %" PetscInt_FMT " point%s %s's stencil needs per rank (-da_grid_%c %" PetscInt_FMT " over %" PetscInt_FMT " ranks). "
          "At most %" PetscInt_FMT " rank%s fit%s this grid: run on fewer ranks, give more points (-da_grid_%c %" PetscInt_FMT " or more), or choose the split with -da_processors_x%s",
          (int)size, split_text, axes[d], s, s == 1 ? "" : "s", stn, axes[d], n[d], r[d], most ? most : 1, most > 1 ? "s" : "", most > 1 ? "" : "s", axes[d], r[d] * s,
          dim == 1 ? "" : dim == 2 ? " and -da_processors_y" : ", -da_processors_y and -da_processors_z");
}

/* ---- the program's outputs ---- */

PetscErrorCode StnAppCheckOutputs(StnApp *app)
{
  const char *const options[] = {"-stn_output", "-stn_plot_solution", "-stn_plot_convergence"};
  const char *const names[]   = {app->output, app->solution_png, app->convergence_png};
  const char       *ext       = strrchr(app->output, '.');

  PetscFunctionBeginUser;
  /* PETSc's VTK viewer picks the format by the extension; a DMDA writes .vts and .vtr */
  PetscCheck(!app->output[0] || (ext && (!strcmp(ext, ".vts") || !strcmp(ext, ".vtr"))), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "-stn_output %s: the name must end in .vts (a VTK structured grid, for ParaView)", app->output);
  PetscCall(StnOutputCheckAll(options, names, 3));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Gives fine, a grid refined from coarse (-snes_grid_sequence), the coordinates of the same
   domain when coarse has coordinates and fine none: DMDASetUniformCoordinates's spacing is
   (max - min) / (n - 1), or / n in a periodic direction, whose max is not a grid point. */
static PetscErrorCode refined_coordinates(DM coarse, DM fine)
{
  Vec            c;
  PetscReal      lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  PetscInt       dim, n[3];
  DMBoundaryType bt[3];

  PetscFunctionBeginUser;
  PetscCall(DMGetCoordinates(fine, &c));
  if (c) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMGetCoordinates(coarse, &c));
  if (!c) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMGetBoundingBox(coarse, lo, hi));
  PetscCall(DMDAGetInfo(coarse, &dim, &n[0], &n[1], &n[2], NULL, NULL, NULL, NULL, NULL, &bt[0], &bt[1], &bt[2], NULL));
  for (PetscInt d = 0; d < dim; d++)
    if (bt[d] == DM_BOUNDARY_PERIODIC && n[d] > 1) hi[d] = lo[d] + (hi[d] - lo[d]) * (PetscReal)n[d] / (PetscReal)(n[d] - 1);
  PetscCall(DMDASetUniformCoordinates(fine, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnAppWriteOutput(StnApp *app, SNES snes, Vec X, SNESConvergedReason reason)
{
  enum { LEN = PETSC_MAX_PATH_LEN + 256 };
  char        failure[3][LEN] = {"", "", ""};
  DM          da, dx;
  Vec         x;

  PetscFunctionBeginUser;
  /* the SNES's solution on the SNES's grid: under -snes_grid_sequence X holds the coarsest
     grid's and the SNES the finest's; a failed solve's last iterate */
  PetscCall(SNESGetSolution(snes, &x));
  PetscCall(PetscObjectSetName((PetscObject)x, "solution")); /* the VTK fields: solution.NAME */
  PetscCall(SNESGetDM(snes, &da));
  PetscCall(VecGetDM(X, &dx));
  if (dx && dx != da) PetscCall(refined_coordinates(dx, da));
  if (app->output[0]) {
    PetscCall(StnWriteVTK(x, app->output, failure[0], LEN));
    if (!failure[0][0] && reason > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "solution written to %s (open it in ParaView)\n", app->output));
    else if (!failure[0][0])
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "the last iterate of the failed solve written to %s: no solution, but it shows where the solve went wrong (open it in ParaView)\n", app->output));
  }
  /* pictures, with gnuplot; a failed solve's last iterate too, where it went wrong */
  if (app->solution_png[0]) PetscCall(StnPlotSolution(snes, x, app->program, app->solution_png, failure[1], LEN));
  if (app->convergence_png[0]) PetscCall(StnPlotConvergence(snes, app->history, app->program, app->convergence_png, failure[2], LEN));
  /* rank 0 drew the pictures: every rank ends with its words */
  PetscCallMPI(MPI_Bcast(failure[1], 2 * LEN, MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCheck(!failure[0][0] && !failure[1][0] && !failure[2][0], PETSC_COMM_WORLD, PETSC_ERR_FILE_WRITE, "%s%s%s%s%s", failure[0],
             failure[0][0] && (failure[1][0] || failure[2][0]) ? "; " : "", failure[1], failure[1][0] && failure[2][0] ? "; " : "", failure[2]);
  PetscFunctionReturn(PETSC_SUCCESS);
}
