/* tests/petsc/vecdiff.c: compares two vectors saved in PETSc's binary format
 * (VecView to a binary viewer, e.g. -snes_view_solution binary:FILE).
 *
 *   vecdiff A.bin B.bin [--rel TOL]
 *
 * Prints ||A-B||_2/||B||_2 (or ||A-B||_2 when B is zero, saying so) and exits
 * with status 0 when it is at most TOL (default 1e-8), 1 when it exceeds TOL
 * or is not a number, 2 on bad usage, an unreadable file or vectors of
 * different sizes.
 *
 * Build: mpicc $(pkg-config --cflags PETSc) -O2 vecdiff.c $(pkg-config --libs PETSc) -lm
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <petscvec.h>
#include <petscviewer.h>

static void usage(FILE *to)
{
  fprintf(to, "usage: vecdiff A.bin B.bin [--rel TOL]\n"
                  "  prints ||A-B||/||B|| of two PETSc binary vectors; exit 0 if <= TOL (default 1e-8),\n"
                  "  1 if above, 2 on bad usage or mismatched sizes\n");
}

static PetscErrorCode load(const char *path, Vec *v)
{
  PetscViewer viewer;

  PetscFunctionBeginUser;
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, path, FILE_MODE_READ, &viewer));
  PetscCall(VecCreate(PETSC_COMM_WORLD, v));
  PetscCall(VecLoad(*v, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscFunctionReturn(0);
}

/* Sets *status to 0, 1 or 2 as documented above. */
static PetscErrorCode compare(const char *pa, const char *pb, double tol, int *status)
{
  Vec       a, b;
  PetscInt  na, nb;
  PetscReal nd, nbn;

  PetscFunctionBeginUser;
  PetscCall(load(pa, &a));
  PetscCall(load(pb, &b));
  PetscCall(VecGetSize(a, &na));
  PetscCall(VecGetSize(b, &nb));
  if (na != nb) {
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, stderr, "vecdiff: size mismatch: %s has %" PetscInt_FMT " entries, %s has %" PetscInt_FMT "\n", pa, na, pb, nb));
    *status = 2;
  } else {
    PetscCall(VecNorm(b, NORM_2, &nbn));
    PetscCall(VecAXPY(a, -1.0, b)); /* a = A - B */
    PetscCall(VecNorm(a, NORM_2, &nd));
    if (nbn > 0) {
      double rel = (double)(nd / nbn);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%.3e\n", rel));
      *status = (rel <= tol) ? 0 : 1; /* NaN fails */
    } else {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%.3e (absolute: ||B|| = 0)\n", (double)nd));
      *status = ((double)nd <= tol) ? 0 : 1;
    }
  }
  PetscCall(VecDestroy(&a));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const char    *files[2] = {NULL, NULL};
  int            nfiles   = 0, status = 2;
  double         tol      = 1e-8;
  PetscErrorCode ierr;

  /* Our own arguments only: PETSc sees none of them. */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rel") == 0) {
      char *end;
      if (i + 1 >= argc) { usage(stderr); return 2; }
      errno = 0;
      tol   = strtod(argv[++i], &end);
      if (errno || end == argv[i] || *end || !(tol >= 0)) {
        fprintf(stderr, "vecdiff: bad tolerance '%s'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      fprintf(stderr, "vecdiff: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else if (nfiles < 2) {
      files[nfiles++] = argv[i];
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (nfiles != 2) { usage(stderr); return 2; }
  for (int f = 0; f < 2; f++) {
    FILE *fp = fopen(files[f], "rb");
    if (!fp) {
      fprintf(stderr, "vecdiff: cannot open %s: %s\n", files[f], strerror(errno));
      return 2;
    }
    fclose(fp);
  }

  int    pargc   = 1;
  char  *pargv[] = {argv[0], NULL};
  char **pargvp  = pargv;
  ierr           = PetscInitialize(&pargc, &pargvp, NULL, NULL);
  if (ierr) return 2;
  /* A file that is not a PETSc vector: one line, not PETSc's traceback. */
  ierr = PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  if (!ierr) ierr = compare(files[0], files[1], tol, &status);
  if (ierr) {
    const char *text = NULL;
    PetscErrorMessage(ierr, &text, NULL);
    fprintf(stderr, "vecdiff: cannot read vectors from %s and %s: %s\n", files[0], files[1], text ? text : "PETSc error");
    status = 2;
  }
  ierr = PetscFinalize();
  if (ierr) status = 2;
  return status;
}
