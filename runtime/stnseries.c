/*
** stnseries.c: what a time-dependent program shows of its way in time.
**
**   -stn_output_series DIR   the state at the saved times as a VTK series:
**                            DIR/PROGRAM_0000.vts, _0001.vts, ... and
**                            DIR/PROGRAM.pvd listing them with their times,
**                            which ParaView opens and plays
**   -stn_plot_frames DIR     the same states drawn (plot.c), DIR/PROGRAM_0000.png,
**                            ..., each titled with its time and step
**   -stn_output_every N      which states are saved: the initial one, every
**   -stn_output_dt T         N-th step (default 1), or the first step at or past
**                            each multiple of T; the final state always
**   -stn_plot_steps FILE.png the size of every step taken against the time
**
** A TS monitor (called with the initial state and after every step) saves
** the states; the final state is saved by StnSeriesEnd where the schedule
** skipped it, so a series always runs from t = 0 to where the integration
** ended, also when a step failed. The .pvd is rewritten whole after each
** saved state (stnoutput.c's temporary file and rename), so a run stopped
** midway leaves a series of what it saved. The directories are made when
** missing (not their parents) and checked before the time stepping, so an
** unwritable one costs no solve; a state that cannot be written ends the
** run at once with a sentence.
*/
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "stnrt.h"

enum { LEN = PETSC_MAX_PATH_LEN + 256 };

struct _n_StnSeries {
  StnApp   *app;
  PetscInt  last_step;   /* the last step the monitor saw, -1 before the first call */
  PetscBool last_saved;  /* whether that step's state was saved */
  PetscReal next_time;   /* -stn_output_dt: the next multiple of T to save at */
  PetscReal *times;      /* the saved states' times */
  PetscInt  nsaved, cap_saved;
  PetscReal *t, *dt;     /* step k went from t[k] to t[k] + dt[k] */
  PetscInt  nsteps, cap_steps;
  PetscReal prev_time;   /* the time the monitor saw last */
  PetscBool frames_off;  /* gnuplot is missing or failed: no more frames */
  PetscInt  nframes;
  char      failure[LEN]; /* a frame that could not be written: the error at the end */
};

/* ---- the options ---- */

/* Whether -stn_output_every and -stn_output_dt were given (with any value, 0 too). */
static PetscErrorCode schedule_given(PetscBool *every, PetscBool *dt)
{
  PetscFunctionBeginUser;
  PetscCall(PetscOptionsHasName(NULL, NULL, "-stn_output_every", every));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-stn_output_dt", dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnSeriesRefuseSteady(StnApp *app)
{
  const char *given = app->series_dir[0] ? "-stn_output_series" : app->frames_dir[0] ? "-stn_plot_frames" : app->steps_png[0] ? "-stn_plot_steps" : NULL;
  PetscBool   every, dt;

  PetscFunctionBeginUser;
  PetscCall(schedule_given(&every, &dt));
  if (!given && every) given = "-stn_output_every";
  if (!given && dt) given = "-stn_output_dt";
  PetscCheck(!given, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "%s shows a solution over time, but %s is steady (its residuals take no dt(...)): it solves F(u) = 0 once; use -stn_output FILE.vts and -stn_plot_solution FILE.png", given,
             app->program);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -stn_output_every and -stn_output_dt: in range, not both, and with something to save. */
static PetscErrorCode check_schedule(StnApp *app)
{
  PetscBool every, dt;

  PetscFunctionBeginUser;
  PetscCall(schedule_given(&every, &dt));
  PetscCheck(!every || app->save_every >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-stn_output_every %" PetscInt_FMT ": give a number of steps, 1 or more (1 saves every step)",
             app->save_every);
  PetscCheck(!dt || (app->save_dt > 0 && !PetscIsInfOrNanReal(app->save_dt)), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-stn_output_dt %g: give a time interval greater than 0",
             (double)app->save_dt);
  PetscCheck(!(every && dt), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-stn_output_every and -stn_output_dt both choose which states are saved: give one of them");
  PetscCheck(!(every || dt) || app->series_dir[0] || app->frames_dir[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "%s chooses the states that -stn_output_series and -stn_plot_frames save, but neither was given", every ? "-stn_output_every" : "-stn_output_dt");
  if (!app->save_every && app->save_dt == 0) app->save_every = 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The file DIR/PROGRAM_NNNN.EXT (index < 0: DIR/PROGRAM.EXT), or an error when it is too long. */
static PetscErrorCode series_path(const StnApp *app, const char *dir, PetscInt index, const char *ext, char *path, size_t len)
{
  int n;

  PetscFunctionBeginUser;
  if (index < 0) n = snprintf(path, len, "%s/%s.%s", dir, app->program, ext);
  else n = snprintf(path, len, "%s/%s_%04" PetscInt_FMT ".%s", dir, app->program, index, ext);
  PetscCheck(n >= 0 && (size_t)n < len, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "the directory name %s is too long for its files' paths", dir);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rank 0: dir made when missing; why it cannot hold files, or "". */
static void prepare_dir(const char *dir, char *why, size_t len)
{
  struct stat st;

  why[0] = '\0';
  if (!dir[0]) snprintf(why, len, "the directory name is empty");
  else if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) snprintf(why, len, "it exists and is not a directory");
  else if (stat(dir, &st) != 0 && mkdir(dir, 0777) != 0) snprintf(why, len, "cannot make the directory: %s", strerror(errno));
}

/* Before the time stepping: each directory exists (made if missing) and its first file and the
   .pvd can be written there; -stn_plot_steps can be written. Collective. */
static PetscErrorCode check_paths(StnApp *app)
{
  const char *const options[] = {"-stn_output_series", "-stn_output_series", "-stn_plot_frames", "-stn_plot_steps"};
  char              files[4][PETSC_MAX_PATH_LEN] = {"", "", "", ""};
  const char       *names[4];
  const char       *dirs[2]    = {app->series_dir, app->frames_dir};
  const char *const dir_opt[2] = {"-stn_output_series", "-stn_plot_frames"};
  char              why[LEN]   = "";
  PetscMPIInt       rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  for (int d = 0; d < 2 && rank == 0 && !why[0]; d++) {
    char reason[256];

    if (!dirs[d][0]) continue;
    prepare_dir(dirs[d], reason, sizeof reason);
    if (reason[0]) snprintf(why, sizeof why, "%s %s: %s; nothing was solved: give a directory you can write in (it is made if missing, not its parents)", dir_opt[d], dirs[d], reason);
  }
  PetscCallMPI(MPI_Bcast(why, (PetscMPIInt)sizeof why, MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCheck(!why[0], PETSC_COMM_WORLD, PETSC_ERR_FILE_OPEN, "%s", why);
  if (app->series_dir[0]) {
    PetscCall(series_path(app, app->series_dir, -1, "pvd", files[0], sizeof files[0]));
    PetscCall(series_path(app, app->series_dir, 0, "vts", files[1], sizeof files[1]));
  }
  if (app->frames_dir[0]) PetscCall(series_path(app, app->frames_dir, 0, "png", files[2], sizeof files[2]));
  PetscCall(PetscStrncpy(files[3], app->steps_png, sizeof files[3]));
  for (int i = 0; i < 4; i++) names[i] = files[i];
  PetscCall(StnOutputCheckAll(options, names, 4));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- saving a state ---- */

/* s with XML's special characters as entities. */
static void xml_string(FILE *f, const char *s)
{
  for (; *s; s++) switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default: fputc(*s, f);
    }
}

/* Rank 0: DIR/PROGRAM.pvd listing the nsaved states (file names relative to DIR, so the
   directory can move), whole or not at all; why it could not be written, or "". */
static void write_pvd(StnSeries s, char *why, size_t len)
{
  char      pvd[PETSC_MAX_PATH_LEN];
  StnOutput o;
  FILE     *f = NULL;
  int       bad;

  why[0] = '\0';
  if (snprintf(pvd, sizeof pvd, "%s/%s.pvd", s->app->series_dir, s->app->program) >= (int)sizeof pvd) { /* check_paths refused it */
    snprintf(why, len, "the path of %s's .pvd in %s is too long", s->app->program, s->app->series_dir);
    return;
  }
  if (StnOutputBegin(pvd, &o) != 0 || !(f = fopen(o.path, "w"))) {
    snprintf(why, len, "cannot write %s: %s", pvd, strerror(errno));
    if (!o.direct) StnOutputAbort(&o);
    return;
  }
  fputs("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n", f);
  for (PetscInt k = 0; k < s->nsaved; k++) {
    char file[PETSC_MAX_PATH_LEN];

    snprintf(file, sizeof file, "%s_%04" PetscInt_FMT ".vts", s->app->program, k);
    fprintf(f, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"", (double)s->times[k]);
    xml_string(f, file);
    fputs("\"/>\n", f);
  }
  fputs("  </Collection>\n</VTKFile>\n", f);
  bad = ferror(f);
  bad |= fclose(f);
  if (bad || StnOutputCommit(&o) != 0) {
    snprintf(why, len, "cannot write %s: %s", pvd, bad ? "the write failed (a full disk?)" : strerror(errno));
    StnOutputAbort(&o);
  }
}

/* Draws the state as frame nframes, unless frames are off; a frame that cannot be written turns
   them off and is the error at the end (s->failure). */
static PetscErrorCode draw_frame(StnSeries s, PetscInt step, PetscReal t, Vec u)
{
  char png[PETSC_MAX_PATH_LEN], remark[128];
  int  outcome = 0;

  PetscFunctionBeginUser;
  if (s->frames_off) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(series_path(s->app, s->app->frames_dir, s->nframes, "png", png, sizeof png));
  PetscCall(PetscSNPrintf(remark, sizeof remark, ", t = %g (step %" PetscInt_FMT ")", (double)t, step));
  PetscCall(StnPlotState(u, s->app->program, remark, png, PETSC_TRUE, &outcome, s->failure, sizeof s->failure));
  PetscCallMPI(MPI_Bcast(&outcome, 1, MPI_INT, 0, PETSC_COMM_WORLD));
  if (outcome == 0) s->nframes++;
  else s->frames_off = PETSC_TRUE; /* gnuplot's note, or the failure, said why once */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Saves the state u at step and time t: the next .vts and the .pvd, the next frame. */
static PetscErrorCode save(StnSeries s, PetscInt step, PetscReal t, Vec u)
{
  char        vts[PETSC_MAX_PATH_LEN], failure[LEN] = "";
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  if (s->nsaved == s->cap_saved) {
    s->cap_saved = 2 * s->cap_saved + 16;
    PetscCall(PetscRealloc((size_t)s->cap_saved * sizeof *s->times, &s->times));
  }
  s->times[s->nsaved] = t;
  if (s->app->series_dir[0]) {
    PetscCall(series_path(s->app, s->app->series_dir, s->nsaved, "vts", vts, sizeof vts));
    PetscCall(StnWriteVTK(u, vts, failure, sizeof failure));
    PetscCheck(!failure[0], PETSC_COMM_WORLD, PETSC_ERR_FILE_WRITE, "-stn_output_series: %s (at t = %g, step %" PetscInt_FMT "); the series so far is in %s/%s.pvd", failure, (double)t, step,
               s->app->series_dir, s->app->program);
    s->nsaved++;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    if (rank == 0) write_pvd(s, failure, sizeof failure);
    PetscCallMPI(MPI_Bcast(failure, (PetscMPIInt)sizeof failure, MPI_CHAR, 0, PETSC_COMM_WORLD));
    PetscCheck(!failure[0], PETSC_COMM_WORLD, PETSC_ERR_FILE_WRITE, "-stn_output_series: %s", failure);
  } else s->nsaved++;
  if (s->app->frames_dir[0]) PetscCall(draw_frame(s, step, t, u));
  s->last_saved = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the state of step at time t is one the schedule saves. */
static PetscBool scheduled(StnSeries s, PetscInt step, PetscReal t)
{
  const PetscReal T = s->app->save_dt;

  if (step == 0) return PETSC_TRUE;
  if (s->app->save_every) return step % s->app->save_every == 0 ? PETSC_TRUE : PETSC_FALSE;
  return t >= s->next_time - 1e-10 * T ? PETSC_TRUE : PETSC_FALSE; /* a step ending on k T up to rounding */
}

/* TS's monitor: the initial state (step 0) and the state after every step; a step seen twice
   (the monitor after the last step, a step redone) counts once. */
static PetscErrorCode monitor(TS ts, PetscInt step, PetscReal t, Vec u, void *ctx)
{
  StnSeries s = (StnSeries)ctx;

  PetscFunctionBeginUser;
  (void)ts;
  if (step <= s->last_step) PetscFunctionReturn(PETSC_SUCCESS);
  if (step > 0 && s->app->steps_png[0]) {
    if (s->nsteps == s->cap_steps) {
      s->cap_steps = 2 * s->cap_steps + 64;
      PetscCall(PetscRealloc((size_t)s->cap_steps * sizeof *s->t, &s->t));
      PetscCall(PetscRealloc((size_t)s->cap_steps * sizeof *s->dt, &s->dt));
    }
    s->t[s->nsteps]  = s->prev_time;
    s->dt[s->nsteps] = t - s->prev_time;
    s->nsteps++;
  }
  s->last_step  = step;
  s->prev_time  = t;
  s->last_saved = PETSC_FALSE;
  if ((s->app->series_dir[0] || s->app->frames_dir[0]) && scheduled(s, step, t)) {
    PetscCall(save(s, step, t, u));
    if (s->app->save_dt > 0) s->next_time = (PetscFloorReal(t / s->app->save_dt + 1e-10) + 1) * s->app->save_dt;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the run ---- */

PetscErrorCode StnSeriesBegin(StnApp *app, TS ts)
{
  StnSeries s;
  PetscBool every, dt;

  PetscFunctionBeginUser;
  PetscCall(schedule_given(&every, &dt));
  if (!app->series_dir[0] && !app->frames_dir[0] && !app->steps_png[0] && !every && !dt) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(check_schedule(app));
  PetscCall(check_paths(app));
  PetscCall(PetscNew(&s));
  s->app       = app;
  s->last_step = -1;
  app->series  = s;
  PetscCall(TSMonitorSet(ts, monitor, s, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnSeriesEnd(StnApp *app, TS ts, Vec X)
{
  StnSeries   s = app->series;
  PetscInt    step;
  PetscReal   t;
  TSType      type;
  PetscInt    rejected;
  char        title[256], failure[LEN] = "";

  PetscFunctionBeginUser;
  if (!s) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(TSGetStepNumber(ts, &step));
  PetscCall(TSGetTime(ts, &t));
  /* the final state, where the schedule skipped it (or the monitor never saw it) */
  if (step > s->last_step) PetscCall(monitor(ts, step, t, X, s));
  if ((app->series_dir[0] || app->frames_dir[0]) && !s->last_saved) PetscCall(save(s, step, t, X));
  if (app->series_dir[0])
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "the state at %" PetscInt_FMT " time%s from t = %g to %g written to %s/%s.pvd (open it in ParaView and press play)\n", s->nsaved,
                          s->nsaved == 1 ? "" : "s", (double)s->times[0], (double)s->times[s->nsaved - 1], app->series_dir, app->program));
  if (app->frames_dir[0] && s->nframes > 0)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " frame%s drawn in %s/%s_0000.png to _%04" PetscInt_FMT ".png\n", s->nframes, s->nframes == 1 ? "" : "s", app->frames_dir, app->program,
                          s->nframes - 1));
  if (app->steps_png[0]) {
    PetscMPIInt rank;

    PetscCall(TSGetType(ts, &type));
    PetscCall(TSGetStepRejections(ts, &rejected));
    PetscCall(PetscSNPrintf(title, sizeof title, "%s: %" PetscInt_FMT " %s steps from t = %g to %g, %" PetscInt_FMT " rejected", app->program, s->nsteps, type, s->nsteps ? (double)s->t[0] : (double)t,
                            (double)t, rejected));
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    if (rank == 0) PetscCall(StnPlotSteps(s->nsteps, s->t, s->dt, app->program, title, app->steps_png, failure, sizeof failure));
    PetscCallMPI(MPI_Bcast(failure, (PetscMPIInt)sizeof failure, MPI_CHAR, 0, PETSC_COMM_WORLD));
  }
  PetscCallMPI(MPI_Bcast(s->failure, (PetscMPIInt)sizeof s->failure, MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCheck(!s->failure[0] && !failure[0], PETSC_COMM_WORLD, PETSC_ERR_FILE_WRITE, "%s%s%s", s->failure, s->failure[0] && failure[0] ? "; " : "", failure);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnSeriesDestroy(StnSeries *series)
{
  StnSeries s = *series;

  PetscFunctionBeginUser;
  if (!s) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree(s->times));
  PetscCall(PetscFree(s->t));
  PetscCall(PetscFree(s->dt));
  PetscCall(PetscFree(*series));
  PetscFunctionReturn(PETSC_SUCCESS);
}
