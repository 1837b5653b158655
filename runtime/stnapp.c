/*
** stnapp.c: the invariant part of a generated program (stnapp.h): its
** options, matrices and default solver, the block rows of the Jacobian,
** the launches of the generated CUDA kernels, and the solve with its
** report and output.
*/
#include "stnrt.h"

#if defined(__GLIBC__)
  #include <limits.h> /* INT_MAX */
  #include <malloc.h> /* mallopt */
#endif

/* The host allocator keeps what is freed for the next allocation. PETSc sets a grid up (DMSetUp,
   and DMCoarsen in the first solve's multigrid) in arrays the size of the grid, allocated and
   freed in turn; glibc maps each one above 128 KB anew and every page of it faults in zeroed, a
   large part of a big grid's coarsening. Up to 32 MB (glibc's largest) they come from the heap,
   which grows 256 MB at a time and is not given back under 2 GB free. */
static void keep_freed_memory(void)
{
#if defined(__GLIBC__)
  (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
  (void)mallopt(M_TOP_PAD, 256 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

PetscErrorCode StnAppDefaults(void)
{
  keep_freed_memory();
#if defined(PETSC_HAVE_CUDA) && !defined(PETSC_HAVE_MPIUNI)
  return PetscOptionsSetValue(NULL, "-use_gpu_aware_mpi", "0"); /* the command line, read after, overrides it */
#else
  return PETSC_SUCCESS;
#endif
}

#if defined(PETSC_HAVE_CUDA)
  #include <petscdevice.h>             /* PetscDeviceInitialize */
  #include <petsc/private/petscimpl.h> /* use_gpu_aware_mpi */

  #include "stnvec_cuda.h" /* StnVecScratchInit */

/* This rank's GPU: PETSc's default device, the rank in PETSC_COMM_WORLD modulo the GPUs the
   process sees, which gives the ranks of a node different GPUs when its ranks are consecutive
   (mpiexec's default placement) or each sees only its own (CUDA_VISIBLE_DEVICES per rank, as
   batch systems bind them). Two ranks of a node on one GPU would each get a part of it: only when
   asked (-stn_share_gpus, for testing the code paths of several ranks on one GPU). Collective
   over PETSC_COMM_WORLD, so that every rank stops, or none. */
static PetscErrorCode take_gpu(StnApp *app)
{
  char        bus[32] = "", why[160] = "";
  PetscMPIInt on_node = 1, shared = 0, bad;

  PetscFunctionBeginUser;
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA)); /* cudaSetDevice, before any kernel of ours */
  if (use_gpu_aware_mpi) StnCUDAPoolDisable(); /* MPI may be handed our blocks: cudaMalloc's */
  if (!StnCUDADevicePresent() || StnCUDADeviceBusId(bus, (int)sizeof bus) != 0 || StnCUDAPoolInit() != 0 || StnVecScratchInit() != 0) /* the memory pool and the reductions' pinned scratch set up now, not in the first solve */
    PetscCall(PetscSNPrintf(why, sizeof why, "the GPU cannot be used (%s): run with -stn_device cpu", StnCUDALastError()));
  #if !defined(PETSC_HAVE_MPIUNI)
  MPI_Comm node;
  char    *all;
  PetscCallMPI(MPI_Comm_split_type(PETSC_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_size(node, &on_node));
  PetscCall(PetscMalloc1((size_t)on_node * sizeof bus, &all));
  PetscCallMPI(MPI_Allgather(bus, (PetscMPIInt)sizeof bus, MPI_CHAR, all, (PetscMPIInt)sizeof bus, MPI_CHAR, node));
  for (PetscMPIInt r = 0; r < on_node; r++)
    for (PetscMPIInt q = r + 1; q < on_node; q++)
      if (all[r * sizeof bus] && !strcmp(&all[r * sizeof bus], &all[q * sizeof bus])) shared = 1;
  PetscCall(PetscFree(all));
  PetscCallMPI(MPI_Comm_free(&node));
  #endif
  if (!why[0] && shared && !app->share_gpus)
    PetscCall(PetscSNPrintf(why, sizeof why, "%d ranks run on this node but it has %d GPU%s for them: run one rank per GPU, or give -stn_share_gpus to let ranks share them (each then gets a part of one GPU)",
                            (int)on_node, StnCUDADeviceCount(), StnCUDADeviceCount() == 1 ? "" : "s"));
  bad = why[0] ? 1 : 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
  if (bad && !why[0]) PetscCall(PetscSNPrintf(why, sizeof why, "another rank could not take its GPU (its message comes before this one)"));
  if (why[0]) PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s\n", why)); /* every rank's own reason */
  PetscCheck(!bad, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "%s", why);
  PetscCall(StnHaloConnect(PETSC_COMM_WORLD, shared ? PETSC_TRUE : PETSC_FALSE)); /* the GPUs open to each other now, not in the first solve */
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

PetscErrorCode StnAppSetFromOptions(StnApp *app, const char *program)
{
  const char *mat_types[] = {"sgdia", "aij"}, *devices[] = {"cpu", "gpu"}, *operators[] = {"auto", "matrix", "matfree"};
  PetscInt    mat_type = 0, device = 0, levels_type, op = 0;
  char        galerkin_type[16] = "";
  PetscBool   galerkin, mg_levels_given;
  PetscInt    mg_levels = 1;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(app, sizeof *app));
  app->program = program;
#if defined(PETSC_HAVE_CUDA)
  device = StnCUDADeviceCount() > 0 ? 1 : 0; /* the GPU when there is one */
#endif
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "stencilc program options", "");
  PetscCall(PetscOptionsEList("-stn_mat_type", "Storage of the Jacobian", NULL, mat_types, 2, mat_types[0], &mat_type, NULL));
  PetscCall(PetscOptionsEList("-stn_device", "Where the residual, Jacobian and vectors live", NULL, devices, 2, devices[device], &device, NULL));
  /* Galerkin coarse operators R A P need assembled transfers, which SG-DIA levels do without */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-pc_mg_galerkin", galerkin_type, sizeof galerkin_type, &galerkin));
  if (galerkin && !strcmp(galerkin_type, "none")) galerkin = PETSC_FALSE;
  levels_type = device == 1 && !galerkin ? 0 : 1; /* SG-DIA on the GPU (every level on the device), AIJ on CPUs (PETSc's smoothers) */
  PetscCall(PetscOptionsEList("-stn_levels_mat_type", "Storage of the coarser grids' matrices (-pc_type mg, -snes_grid_sequence)", NULL, mat_types, 2, mat_types[levels_type], &levels_type, NULL));
  app->mg_fused = PETSC_TRUE;
  PetscCall(PetscOptionsBool("-stn_mg_fused", "On the GPU, run each multigrid V-cycle as fused kernels (false: PETSc's PCMG apply)", NULL, app->mg_fused, &app->mg_fused, NULL));
  PetscCall(PetscOptionsEList("-stn_operator", "The Jacobian's product: with the stored SG-DIA matrix, by the generated kernel without it (GPU, one rank), or auto: without it where multigrid's fused V-cycle runs", NULL, operators, 3, operators[0], &op, NULL));
  app->solve_repeat = 1;
  PetscCall(PetscOptionsRangeInt("-stn_solve_repeat", "Solve this many times from the same initial guess; the report and -log_view's Solve stage are the last solve's, the others (stage Warm-up) build what a solve builds once (the multigrid hierarchy, the device ghost exchanges, tuned kernels), as for every solve after the first in a continuation (not with -snes_grid_sequence)", NULL, app->solve_repeat, &app->solve_repeat, NULL, 1, 1000));
  PetscCall(PetscOptionsBool("-stn_share_gpus", "Let more ranks on a node than it has GPUs share them (for testing several ranks on one GPU)", NULL, app->share_gpus, &app->share_gpus, NULL));
#if defined(PETSC_HAVE_CUDA)
  {
    PetscBool chunks = PETSC_TRUE;
    PetscCall(PetscOptionsBool("-stn_memory_chunks", "On the GPU, carve device blocks of 1 MB or more from chunks of at least 1 GB that one cudaMalloc each gives (false: a cudaMalloc per block, whose bounds compute-sanitizer then checks)", NULL, chunks, &chunks, NULL));
    if (!chunks) StnCUDAChunksDisable();
  }
#endif
#if defined(PETSC_HAVE_CUDA) && !defined(PETSC_HAVE_MPIUNI)
  {
    PetscBool aware = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-use_gpu_aware_mpi", &aware, NULL));
    PetscCall(PetscOptionsBool("-use_gpu_aware_mpi", "Whether MPI reads device memory (PETSc's option; 0 by default here: ghosts are staged through host memory; give 1 with a CUDA-aware MPI)", NULL, aware, &aware, NULL));
  }
#endif
  PetscCall(PetscOptionsBool("-stn_check_jacobian", "Compare the Jacobian entries given in the .stn with the derived ones", NULL, app->check_jacobian, &app->check_jacobian, NULL));
  PetscCall(PetscOptionsString("-stn_output", "Write the solution to this VTK file (.vts)", NULL, app->output, app->output, sizeof app->output, NULL));
  PetscCall(PetscOptionsString("-stn_plot_solution", "Draw the solution to this PNG file (needs gnuplot)", NULL, app->solution_png, app->solution_png, sizeof app->solution_png, NULL));
  PetscCall(PetscOptionsString("-stn_plot_convergence", "Draw the residual norms per Newton and Krylov iteration to this PNG file (needs gnuplot)", NULL, app->convergence_png, app->convergence_png, sizeof app->convergence_png, NULL));
  PetscCall(PetscOptionsString("-stn_output_series", "Time-dependent programs: write the state at the saved times to DIR/PROGRAM.pvd and one .vts each (ParaView plays it)", NULL, app->series_dir, app->series_dir, sizeof app->series_dir, NULL));
  PetscCall(PetscOptionsString("-stn_plot_frames", "Time-dependent programs: draw the state at the saved times to DIR/PROGRAM_NNNN.png (needs gnuplot)", NULL, app->frames_dir, app->frames_dir, sizeof app->frames_dir, NULL));
  { /* save_every stays 0 unless given: stnseries.c tells the default (every step) from a choice */
    PetscInt  every = 1;
    PetscBool set;
    PetscCall(PetscOptionsInt("-stn_output_every", "Time-dependent programs: save every N-th step for -stn_output_series and -stn_plot_frames", NULL, every, &every, &set));
    app->save_every = set ? every : 0;
  }
  PetscCall(PetscOptionsReal("-stn_output_dt", "Time-dependent programs: save at the first step at or past each multiple of T instead (0: not used)", NULL, app->save_dt, &app->save_dt, NULL));
  PetscCall(PetscOptionsString("-stn_plot_steps", "Time-dependent programs: draw the step sizes against the time to this PNG file (needs gnuplot)", NULL, app->steps_png, app->steps_png, sizeof app->steps_png, NULL));
  PetscOptionsEnd();
  app->aij = mat_type == 1 ? PETSC_TRUE : PETSC_FALSE;
  app->gpu = device == 1 ? PETSC_TRUE : PETSC_FALSE;
#if defined(PETSC_HAVE_CUDA)
  if (app->gpu) PetscCall(take_gpu(app));
#endif
  app->levels_sgdia = levels_type == 0 && !app->aij ? PETSC_TRUE : PETSC_FALSE;
  app->matfree       = op == 2 ? PETSC_TRUE : PETSC_FALSE;
  app->operator_auto = op == 0 && app->gpu && !app->aij ? PETSC_TRUE : PETSC_FALSE;
  PetscCheck(!app->matfree || (app->gpu && !app->aij), PETSC_COMM_WORLD, PETSC_ERR_SUP, "-stn_operator matfree runs on the GPU with the SG-DIA matrix (not with -stn_device cpu or -stn_mat_type aij)");
#if !defined(PETSC_HAVE_CUDA)
  PetscCheck(!app->gpu, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-stn_device gpu needs a PETSc configured with CUDA");
#endif
  PetscCheck(!galerkin || !app->levels_sgdia, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-pc_mg_galerkin forms the coarse grids' operators as products R A P of assembled matrices, but with -stn_levels_mat_type sgdia the grids pass vectors without matrices: "
             "use -stn_levels_mat_type aij with -pc_mg_galerkin, or drop -pc_mg_galerkin (each grid then has the .stn's own Jacobian)");
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-pc_mg_levels", &mg_levels, &mg_levels_given)); /* PETSc's PCMG crashes on 0 */
  PetscCheck(!mg_levels_given || mg_levels >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-pc_mg_levels %" PetscInt_FMT ": give at least 1 level (1 is the finest grid alone), or leave it out and the levels are counted from the grid", mg_levels);
  PetscCall(StnAppCheckOutputs(app)); /* before the solve, not after it */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnParamsGiven(PetscInt n, const char *const names[], const PetscBool given[])
{
  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < n; i++) {
    char      option[256];
    PetscBool named;

    if (given[i]) continue;
    PetscCall(PetscSNPrintf(option, sizeof option, "-%s", names[i]));
    PetscCall(PetscOptionsHasName(NULL, NULL, option, &named));
    PetscCheck(!named, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s was given without a value: write %s <number>", option, option);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A rank's ghosted vector holds its owned points as one run only when the grid is split along
   its last axis alone and the other axes have no ghosts (no periodic or ghosted edge): split in x
   or y, every owned line is followed by ghosts. A PETSc built for a device checks the indices of
   every vector scatter it sets up for duplicates, with a hash set, wherever they are not one run
   (PetscSFSetUpPackFields): on SFI's 385^3 over 4 ranks split 1 x 2 x 2, every owned index of
   the grid and of each coarse grid, nearly 2 s of the program's set-up and a tenth of a second of
   the first solve's DMCoarsen, where slabs leave only the ghost planes to check. Slabs send
   twice the ghosts of 2 x 2 blocks, a few MB over NVLink, which the exchange's latency hides. */
PetscErrorCode StnAppSplitGrid(const StnApp *app, DM da)
{
  PetscInt    dim, given[3];
  PetscBool   fit;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)da), &size));
  if (!PetscDefined(HAVE_DEVICE) || !app->gpu || size == 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMDAGetInfo(da, &dim, NULL, NULL, NULL, &given[0], &given[1], &given[2], NULL, NULL, NULL, NULL, NULL, NULL));
  for (PetscInt d = 0; d < dim; d++)
    if (given[d] != PETSC_DECIDE) PetscFunctionReturn(PETSC_SUCCESS); /* -da_processors_*: the user's split */
  PetscCall(StnDMSlabsFit(da, size, &fit)); /* a run, and every grid of multigrid's holds the stencil */
  if (!fit) PetscFunctionReturn(PETSC_SUCCESS);
  if (dim == 2) PetscCall(DMDASetNumProcs(da, 1, size, PETSC_DECIDE));
  else PetscCall(DMDASetNumProcs(da, 1, 1, size));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The grid's vectors and where its ghosts come from. With scripts/petsc-cuda.sh's PETSc a DMDA
   makes its global-to-local scatter at its first use (petsc-dmda-lazy-scatter.patch): where the
   residual's ghosts go through that scatter (the CPUs; on one GPU a periodic grid) it is made
   here, in the program's set-up as DMSetUp made it before, not in the first solve; where a
   device path takes them (StnDMUseDeviceGhosts: the exchange between GPUs, one GPU's copy) it is
   not, and is made at its first use only where the exchange cannot be set up. */
PetscErrorCode StnAppSetUpGrid(StnApp *app, DM da)
{
  PetscBool device_ghosts = PETSC_FALSE;

  PetscFunctionBeginUser;
  if (app->gpu) {
    PetscCall(StnDMSetGPUVectors(da)); /* vectors, ghost exchange and solver on the GPU */
  #if defined(PETSC_HAVE_CUDA)
    PetscCall(StnDMUseDeviceGhosts(da)); /* the ghosts on the device: exchanged, or one rank's copy */
    device_ghosts = StnDMHasDeviceGhosts(da);
  #endif
  }
  if (!device_ghosts) {
    VecScatter gtol;

    PetscCall(DMDAGetScatter(da, &gtol, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether every field's interior equation scales as multigrid's rediscretized coarse grids need
   (h^(dim - 2): multiplied by the cell size); *field the first that does not. */
static PetscErrorCode scaled_for_multigrid(DM da, const PetscInt h_power[], PetscBool *scaled, PetscInt *field)
{
  PetscInt dim, dof;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, &dim, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  *scaled = PETSC_TRUE;
  for (PetscInt f = 0; f < dof && *scaled; f++)
    if (h_power[f] != STN_H_POWER_NONE && h_power[f] != dim - 2) *scaled = PETSC_FALSE, *field = f;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An approximate Jacobian (the .stn's approximate entries, in J) preconditions; the operator is
   the exact Jacobian: on the GPU its product without the matrix (the generated kernel computes
   every entry as the derivative), on CPUs the matrix A that FormJacobianLocal fills with the
   derivatives beside J. The coarser grids of multigrid keep their approximate matrices. */
static PetscErrorCode exact_operator(StnApp *app, SNES snes, DM da, PetscInt nstencil, const PetscInt offsets[][3])
{
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)snes), &size));
  if (app->gpu) {
    PetscCheck(!app->aij && size == 1 && (app->matfree || app->operator_auto), PETSC_COMM_WORLD, PETSC_ERR_SUP,
               "%s has an approximate Jacobian (jacobian ... approximate): on the GPU its exact operator is the product without the matrix, which runs on one rank "
               "with the SG-DIA matrix (not with -stn_mat_type aij or -stn_operator matrix); run it so, or with -stn_device cpu", app->program);
#if defined(PETSC_HAVE_CUDA)
    PetscCall(StnMatFreeCreate(da, STN_TWINS_NONE, &app->Jmf));
    PetscCall(SNESSetJacobian(snes, app->Jmf, app->J, NULL, NULL));
#endif
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (app->aij) PetscCall(DMCreateMatrix(da, &app->A));
  else PetscCall(MatCreateSGDIA(da, nstencil, &offsets[0][0], &app->A));
  PetscCall(SNESSetJacobian(snes, app->A, app->J, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SNESSetUpdate's hook, before each Newton step, for an approximate Jacobian: a grid refined by
   -snes_grid_sequence gets its matrices anew from its DM (SNESSetUpMatrices), one matrix as both
   operator and preconditioning matrix, which FormJacobianLocal would fill with the approximation
   alone: the operator becomes a matrix of its own again (P's layout; on the GPU with SG-DIA, the
   product without the matrix), filled with the derivatives. Not under PETSc's own Jacobians
   (-snes_fd), which fill one matrix. */
static PetscErrorCode separate_operator(SNES snes, PetscInt step)
{
  Mat       A, P, E;
  PetscBool sgdia;
  PetscErrorCode (*fn)(SNES, Vec, Mat, Mat, void *);

  PetscFunctionBeginUser;
  (void)step;
  PetscCall(SNESGetJacobian(snes, &A, &P, &fn, NULL));
  if (A != P || !P || fn == SNESComputeJacobianDefault || fn == SNESComputeJacobianDefaultColor) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatIsSGDIA(P, &sgdia));
#if defined(PETSC_HAVE_CUDA)
  {
    VecType   vtype;
    PetscBool cuda;
    DM        da;

    PetscCall(SNESGetDM(snes, &da));
    PetscCall(DMGetVecType(da, &vtype));
    PetscCall(PetscStrcmp(vtype, VECSTNCUDA, &cuda)); /* the GPU's vectors (StnDMSetGPUVectors) */
    if (!cuda) PetscCall(PetscStrbeginswith(vtype, VECCUDA, &cuda));
    if (sgdia && cuda) PetscCall(StnMatFreeCreate(da, STN_TWINS_NONE, &E));
    else PetscCall(MatDuplicate(P, MAT_DO_NOT_COPY_VALUES, &E));
  }
#else
  PetscCall(MatDuplicate(P, MAT_DO_NOT_COPY_VALUES, &E));
#endif
  PetscCall(PetscInfo(snes, "the approximate Jacobian's grid got one matrix: a separate exact operator (%s)\n", sgdia ? "SG-DIA" : "its type"));
  PetscCall(SNESSetJacobian(snes, E, P, NULL, NULL));
  PetscCall(MatDestroy(&E)); /* SNES holds it */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnOperatorAssembled(Mat J, Mat P, PetscBool *assembled)
{
  PetscBool shell, sgdia;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)J, &shell, MATSHELL, MATMFFD, ""));
  PetscCall(MatIsSGDIA(J, &sgdia)); /* a MATSHELL too */
  *assembled = J != P && (sgdia || !shell) ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnAppSetUpSolver(StnApp *app, SNES snes, PetscInt nstencil, const PetscInt offsets[][3], const PetscInt h_power[])
{
  DM          da;
  KSP         ksp;
  PC          pc;
  PetscMPIInt size;
  PetscInt    levels = 1;

  PetscFunctionBeginUser;
  PetscCall(SNESGetDM(snes, &da));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)snes), &size));
  if (app->aij) {
    PetscCall(DMSetMatType(da, app->gpu ? MATAIJCUSPARSE : MATAIJ));
    PetscCall(DMCreateMatrix(da, &app->J));
  } else {
    PetscCall(MatCreateSGDIA(da, nstencil, &offsets[0][0], &app->J));
    if (app->levels_sgdia) { /* every grid of a hierarchy SG-DIA too, on the GPU filled there (stnmg.h) */
      PetscCall(StnDMUseSGDIA(da, nstencil, offsets));
      PetscCall(StnDMUseTransfers(da)); /* interpolation and injection without matrices */
      if (app->gpu) PetscCall(DMSetMatType(da, MATAIJCUSPARSE)); /* PETSc's transfers, where ours do not apply, on the device */
    }
  }
  PetscCall(SNESSetJacobian(snes, app->J, app->J, NULL, NULL)); /* the function: the DM's */
#if defined(PETSC_HAVE_CUDA)
  if (app->matfree && !app->approximate) { /* the operator without its matrix; the SG-DIA one preconditions */
    PetscCall(StnMatFreeCreate(da, STN_TWINS_ALL, &app->Jmf));
    PetscCall(SNESSetJacobian(snes, app->Jmf, app->J, NULL, NULL));
  }
#endif
  if (app->approximate) {
    PetscCall(exact_operator(app, snes, da, nstencil, offsets));
    PetscCall(SNESSetUpdate(snes, separate_operator)); /* -snes_grid_sequence's refined grids */
  }
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  /* On the GPU multigrid with SG-DIA levels where the grid gives at least 3 (stnmg.h), else
     Jacobi, both served by SG-DIA on the device; on CPUs PETSc's own default, ILU (block Jacobi
     in parallel), on an AIJ copy. A time-dependent program's implicit steps get Jacobi on the
     GPU: each Newton step would rebuild multigrid's hierarchy, which costs more than the
     Krylov iterations Jacobi adds at the grids measured (docs/performance.md). */
  if (app->gpu && app->levels_sgdia && !app->time_dependent) PetscCall(StnDMCountLevels(da, &levels));
  if (levels >= 3) { /* equations in plain difference quotients (-Laplacian(T) = q): the coarse
                        grids' corrections are 2^dim times too large, multigrid stalls */
    PetscBool scaled;
    PetscInt  field = 0;
    const char *name;

    PetscCall(scaled_for_multigrid(da, h_power, &scaled, &field));
    if (!scaled) {
      PetscCall(DMDAGetFieldName(da, field, &name));
      PetscCall(PetscInfo(snes, "Jacobi, not multigrid, by default: the interior equation of %s scales as h^%" PetscInt_FMT ", not as the cell size\n", name, h_power[field]));
      levels = 1;
    }
  }
  PetscCall(PCSetType(pc, levels >= 3 ? PCMG : app->gpu ? PCJACOBI : size == 1 ? PCILU : PCBJACOBI));
  /* On the GPU, GMRES with its Hessenberg matrix on the device (-ksp_type gmres: PETSc's). */
  if (app->gpu) PetscCall(StnKSPSetDefault(ksp, da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnAppSetUpJacobian(StnApp *app, SNES snes)
{
  DM               da;
  Mat              A, B;
  KSP              ksp;
  PC               pc;
  PetscBool        sgdia, direct, ours, mg, eisenstat, telescope, periodic, ignore_dm;
  PetscMPIInt      size;
  PCMGGalerkinType galerkin = PC_MG_GALERKIN_NONE;
  DMBoundaryType   bt[3];
  PetscErrorCode (*fn)(SNES, Vec, Mat, Mat, void *);

  PetscFunctionBeginUser;
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(SNESGetDM(snes, &da));
  PetscCall(SNESGetJacobian(snes, &A, &B, &fn, NULL));
  ours = fn != SNESComputeJacobianDefault && fn != SNESComputeJacobianDefaultColor ? PETSC_TRUE : PETSC_FALSE;
  if (app->approximate && !ours) { /* PETSc's differences fill one matrix: operator and preconditioner */
    PetscCall(SNESSetJacobian(snes, app->J, app->J, NULL, NULL));
    A = B = app->J;
  }
  PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bt[0], &bt[1], &bt[2], NULL));
  periodic = bt[0] == DM_BOUNDARY_PERIODIC || bt[1] == DM_BOUNDARY_PERIODIC || bt[2] == DM_BOUNDARY_PERIODIC ? PETSC_TRUE : PETSC_FALSE;
  /* PETSc 3.18 colours a periodic DMDA wrongly and its finite differences then write past their
     arrays (a crash, or a corrupted heap) */
  PetscCheck(PETSC_VERSION_GE(3, 19, 0) || !periodic || fn != SNESComputeJacobianDefaultColor, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-snes_fd_color on a periodic grid corrupts memory in PETSc %d.%d (a PETSc bug): use the derived Jacobian (the default, without -snes_fd_color), "
             "or -snes_fd for uncoloured finite differences (slow, for small grids)", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR);
  /* Eisenstat's trick on several ranks multiplies by the diagonal blocks of the local matrices,
     which PETSc's AIJ cannot (MatMultDiagonalBlock) */
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCEISENSTAT, &eisenstat));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)snes), &size));
  PetscCheck(!eisenstat || size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-pc_type eisenstat runs on one rank only: on several PETSc would need products with the diagonal blocks of its AIJ matrices, which it lacks; "
             "use -pc_type bjacobi -sub_pc_type eisenstat (Eisenstat within each rank's block) or -pc_type sor");
  PetscCheck(!eisenstat || !app->approximate || !ours, PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-pc_type eisenstat applies the SOR sweeps of the operator itself, but %s's Jacobian is approximate (jacobian ... approximate): its operator is exact "
             "and its preconditioning matrix is not; use -pc_type sor, which sweeps the preconditioning matrix", app->program);
  /* PCTelescope with the DM repartitions the grid and hands the Jacobian callbacks a matrix of no
     type; without the DM it gathers the assembled AIJ matrix */
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCTELESCOPE, &telescope));
  if (telescope) {
    PetscBool   given;
    const char *prefix;

    PetscCall(PCGetOptionsPrefix(pc, &prefix));
    PetscCall(PetscOptionsGetBool(NULL, prefix, "-pc_telescope_ignore_dm", &ignore_dm, &given));
    PetscCheck(!given || ignore_dm, PETSC_COMM_WORLD, PETSC_ERR_SUP,
               "-pc_type telescope cannot use the grid (-pc_telescope_ignore_dm false): the Jacobian is assembled on the whole grid only; leave -pc_telescope_ignore_dm at its default here (true), which gathers the assembled matrix");
    PetscCall(PCTelescopeSetIgnoreDM(pc, PETSC_TRUE));
  }
#if defined(PETSC_HAVE_CUDA)
  /* PETSc's Jacobi checks the diagonal for zeros on the host; on the GPU that would copy it
     there and back at every Jacobian (-pc_jacobi_fixdiagonal turns it back on). */
  if (app->gpu) {
    PetscBool fix;

    PetscCall(PetscOptionsHasName(NULL, NULL, "-pc_jacobi_fixdiagonal", &fix));
    if (!fix) PetscCall(PCJacobiSetFixDiagonal(pc, PETSC_FALSE));
  }
#endif
  PetscCall(MatIsSGDIA(app->J, &sgdia));
  if (!sgdia) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &direct, PCNONE, PCJACOBI, PCPBJACOBI, PCSHELL, ""));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMG, &mg));
  if (mg) PetscCall(PCMGGetGalerkin(pc, &galerkin));
  if (ours && mg && galerkin == PC_MG_GALERKIN_NONE && StnDMUsesSGDIA(da)) { /* SG-DIA on every level */
    PetscCall(StnPCMGSetDefaults(pc, da));
#if defined(PETSC_HAVE_CUDA)
    if (app->gpu && app->mg_fused) {
      PetscInt nsten, dof;

      PetscCall(StnPCMGUseFusedCycle(pc));
      /* The products without the matrix where the matrix's row is long: the smoothing steps and
         the Krylov method's product then read the state where SG-DIA reads nsten * dof values
         per row (the cavity's 20: a V-cycle 1.7x faster). A short row (sfi3d's 7, bratu2d's 5)
         costs about as much to read as to compute again, and the SG-DIA kernel wins there. Not
         with Jacobi alone, whose product stngmres fuses into its cycle kernel. */
      PetscCall(MatSGDIAGetLayout(app->J, &nsten, NULL, &dof, NULL));
      if (app->operator_auto && !app->Jmf && nsten * dof >= STN_MATFREE_MIN_ROW) {
        PetscCall(StnMatFreeCreate(da, STN_TWINS_LARGE, &app->Jmf));
        PetscCall(SNESSetJacobian(snes, app->Jmf, app->J, NULL, NULL));
      }
    }
#endif
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (ours && direct) PetscFunctionReturn(PETSC_SUCCESS);
  /* the AIJ matrix; the grids -pc_type mg coarsens da into have AIJ matrices too, unless they
     make SG-DIA ones (on the GPU) */
  PetscCall(StnDMCreateAIJ(da, MATAIJ, &app->P));
  /* Galerkin coarse operators are products of the fine one: both operators AIJ, so that PCMG
     forms R A P of the matrix it applies (an SG-DIA operator has no product with AIJ); Eisenstat's
     trick applies the SOR sweeps of the operator itself, so it too must be the AIJ matrix. */
  if (ours && app->approximate && mg && (galerkin == PC_MG_GALERKIN_BOTH || galerkin == PC_MG_GALERKIN_MAT)) {
    /* the coarse operators R A P of the exact operator: that assembled in AIJ too */
    PetscCall(MatDestroy(&app->A));
    PetscCall(StnDMCreateAIJ(da, MATAIJ, &app->A));
    PetscCall(SNESSetJacobian(snes, app->A, app->P, NULL, NULL));
  } else if ((mg && galerkin != PC_MG_GALERKIN_NONE) || eisenstat) PetscCall(SNESSetJacobian(snes, A == app->J ? app->P : A, app->P, NULL, NULL));
  else if (ours) PetscCall(SNESSetJacobian(snes, A, app->P, NULL, NULL));
  else PetscCall(SNESSetJacobian(snes, A == app->J ? app->P : A, B == app->J ? app->P : B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnAppSolve(StnApp *app, SNES snes, Vec X, SNESConvergedReason *reason)
{
  PetscLogStage stage;

  PetscFunctionBeginUser;
  PetscCall(StnSeriesRefuseSteady(app)); /* -stn_output_series and the like are for TS programs */
  PetscCall(PetscObjectSetName((PetscObject)X, "solution"));
#if defined(PETSC_HAVE_CUDA)
  if (app->gpu) { /* move the guess to the GPU now, so that the solve copies nothing */
    const PetscScalar *x;

    PetscCall(VecCUDAGetArrayRead(X, &x));
    PetscCall(VecCUDARestoreArrayRead(X, &x));
  }
#endif
  PetscBool     solved;

  if (app->solve_repeat > 1) { /* the earlier solves, each from the guess */
    Vec           guess;
    PetscLogStage warm;
    PetscInt      refine;

    PetscCall(SNESGetGridSequence(snes, &refine));
    PetscCheck(refine == 0, PetscObjectComm((PetscObject)snes), PETSC_ERR_ARG_INCOMP,
               "-stn_solve_repeat cannot be combined with -snes_grid_sequence: the first solve ends on the finest grid, where the next would have to start from the coarsest; drop one of the two options");
    PetscCall(VecDuplicate(X, &guess));
    PetscCall(VecCopy(X, guess));
    PetscCall(PetscLogStageRegister("Warm-up", &warm));
    PetscCall(PetscLogStagePush(warm));
    for (PetscInt i = 1; i < app->solve_repeat; i++) {
      PetscCallMPI(MPI_Barrier(PetscObjectComm((PetscObject)snes))); /* as below */
      PetscCall(SNESSolve(snes, NULL, X));
      PetscCall(VecCopy(guess, X));
    }
    PetscCall(PetscLogStagePop());
    PetscCall(VecDestroy(&guess));
  }
  if (app->convergence_png[0]) PetscCall(StnRecordConvergence(snes, &app->history)); /* the norms, for the picture */
  PetscCall(SNESSetConvergenceHistory(snes, NULL, NULL, PETSC_DECIDE, PETSC_TRUE)); /* where the residual started, for the report */
  PetscCall(PetscLogStageRegister("Solve", &stage)); /* -log_view shows the solve on its own */
  /* The ranks start the solve together: a rank that finished its set-up first would otherwise
     wait for the others at the solve's first collective, and -log_view would count the set-up's
     imbalance (a tenth of a second for SFI's 385^3 on 4 ranks) as solve time. */
  PetscCallMPI(MPI_Barrier(PetscObjectComm((PetscObject)snes)));
  PetscCall(PetscLogStagePush(stage));
  PetscCall(SNESSolve(snes, NULL, X));
  PetscCall(PetscLogStagePop());
  PetscCall(SNESGetConvergedReason(snes, reason));
  PetscCall(StnReportSolve(snes, app->program, &solved)); /* iterations, or why it failed */
  if (!solved && *reason > 0) *reason = SNES_CONVERGED_ITERATING; /* PETSc stopped on a small step short of the tolerances */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnAppDestroy(StnApp *app)
{
  PetscFunctionBeginUser;
  PetscCall(StnSeriesDestroy(&app->series));
  PetscCall(MatDestroy(&app->P));
  PetscCall(MatDestroy(&app->J));
  PetscCall(MatDestroy(&app->Jmf));
  PetscCall(MatDestroy(&app->A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- block rows ---- */

/* The matrix the Jacobian's rows go into: P when it is SG-DIA, else J when J is (copied into P
   by finish_jacobian), else P, assembled through MatSetValuesStencil; *sgdia says which. */
static PetscErrorCode jacobian_target(Mat J, Mat P, Mat *target, PetscBool *sgdia)
{
  PetscFunctionBeginUser;
  *target = P;
  PetscCall(MatIsSGDIA(P, sgdia));
  if (!*sgdia) {
    PetscCall(MatIsSGDIA(J, sgdia));
    if (*sgdia) *target = J;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Assembles target and, when it is not P, copies it into P (an AIJ copy for the preconditioner). */
static PetscErrorCode finish_jacobian(Mat target, Mat P)
{
  PetscFunctionBeginUser;
  PetscCall(MatAssemblyBegin(target, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(target, MAT_FINAL_ASSEMBLY));
  if (target != P) PetscCall(MatSGDIACopyToAIJ(target, P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnBlockRowsBegin(DMDALocalInfo *info, Mat J, Mat P, PetscInt nstencil, PetscInt dof, const PetscInt offsets[][3], StnBlockRows *rows)
{
  PetscBool sgdia;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(rows, sizeof *rows));
  rows->info     = info;
  rows->nstencil = nstencil;
  rows->dof      = dof;
  rows->offsets  = offsets;
  rows->nrows    = info->xm * info->ym * info->zm * dof;
  rows->J        = J;
  rows->P        = P;
  PetscCall(jacobian_target(J, P, &rows->target, &sgdia));
  if (sgdia) PetscCall(MatSGDIAGetArray(rows->target, &rows->a));
  else PetscCall(PetscMalloc2(nstencil * dof, &rows->col, nstencil * dof, &rows->vals));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnBlockRowsSetAIJ(StnBlockRows *rows, PetscInt i, PetscInt j, PetscInt k, const PetscScalar *v)
{
  const DMDALocalInfo  *info = rows->info;
  const PetscInt        dof = rows->dof;
  const PetscInt        n[3] = {info->mx, info->my, info->mz}, at[3] = {i, j, k};
  const DMBoundaryType  bt[3] = {info->bx, info->by, info->bz};
  MatStencil            row, *col = rows->col;
  PetscScalar          *vals = rows->vals;
  PetscInt              ncol = 0;

  PetscFunctionBeginUser;
  for (PetscInt r = 0; r < dof; r++) {
    ncol = 0;
    for (PetscInt s = 0; s < rows->nstencil; s++) {
      PetscInt nb[3];
      PetscBool outside = PETSC_FALSE;

      for (PetscInt d = 0; d < 3; d++) {
        nb[d] = at[d] + rows->offsets[s][d];
        if (d < info->dim && bt[d] != DM_BOUNDARY_PERIODIC && (nb[d] < 0 || nb[d] >= n[d])) outside = PETSC_TRUE;
      }
      if (outside) continue; /* outside the grid: the entries are 0 */
      for (PetscInt c = 0; c < dof; c++) {
        col[ncol].i   = nb[0];
        col[ncol].j   = info->dim > 1 ? nb[1] : 0;
        col[ncol].k   = info->dim > 2 ? nb[2] : 0;
        col[ncol].c   = c;
        vals[ncol++] = v[(s * dof + r) * dof + c];
      }
    }
    row.i = i;
    row.j = info->dim > 1 ? j : 0;
    row.k = info->dim > 2 ? k : 0;
    row.c = r;
    PetscCall(MatSetValuesStencil(rows->target, 1, &row, ncol, col, vals, INSERT_VALUES));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnBlockRowsEnd(StnBlockRows *rows)
{
  PetscFunctionBeginUser;
  if (rows->a) PetscCall(MatSGDIARestoreArray(rows->target, &rows->a));
  else PetscCall(PetscFree2(rows->col, rows->vals));
  PetscCall(finish_jacobian(rows->target, rows->P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnCheckEntry(PetscScalar given, PetscScalar derived, const char *entry, PetscInt dim, PetscInt i, PetscInt j, PetscInt k)
{
  char point[96];

  PetscFunctionBeginUser;
  if (PetscAbsScalar(given - derived) <= 1e-8 * (PetscAbsScalar(given) + PetscAbsScalar(derived)) + 1e-14) PetscFunctionReturn(PETSC_SUCCESS);
  if (dim == 1) PetscCall(PetscSNPrintf(point, sizeof point, "%" PetscInt_FMT, i));
  if (dim == 2) PetscCall(PetscSNPrintf(point, sizeof point, "%" PetscInt_FMT ", %" PetscInt_FMT, i, j));
  if (dim == 3) PetscCall(PetscSNPrintf(point, sizeof point, "%" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt_FMT, i, j, k));
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER, "-stn_check_jacobian: the Jacobian entry %s is %g at grid point (%s) but the derivative of the residual is %g", entry, (double)given, point, (double)derived);
}

/* ---- the generated CUDA kernels ---- */

#if defined(PETSC_HAVE_CUDA)
/* A kernel and its operands, as the tuner runs it (StnLaunchFn). */
typedef struct {
  StnKernelFn        *fn;
  const StnLocalInfo *info;
  const void         *user;
  const double       *x;
  double             *out;
} Launch;

static int run_launch(void *args, const StnKernelShape *shape)
{
  const Launch *l = (const Launch *)args;

  return l->fn(l->info, l->user, l->x, l->out, shape);
}

/* The shapes of the grid info describes: one entry per grid size, chosen at first use. */
static PetscErrorCode level_shapes(StnKernels *k, const DMDALocalInfo *info, StnLevelShapes **level)
{
  PetscFunctionBeginUser;
  for (int l = 0; l < k->nlevels; l++)
    if (k->levels[l].xm == info->xm && k->levels[l].ym == info->ym && k->levels[l].zm == info->zm) {
      *level = &k->levels[l];
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  PetscCheck(k->nlevels < (int)(sizeof k->levels / sizeof k->levels[0]), PETSC_COMM_SELF, PETSC_ERR_SUP, "more grids than StnKernels keeps launch shapes for");
  *level = &k->levels[k->nlevels++];
  PetscCall(PetscMemzero(*level, sizeof **level));
  (*level)->xm = info->xm;
  (*level)->ym = info->ym;
  (*level)->zm = info->zm;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Launches fn over the owned box with the grid's shape, tuning it (or reading the cache) first. */
static PetscErrorCode launch(const DMDALocalInfo *info, StnKernelFn *fn, const char *kernel, const char *what, StnKernelShape *shape, const void *user, const double *x, double *out, long nout)
{
  char         name[256];
  StnLocalInfo li = StnLocalInfoOf(info);

  PetscFunctionBeginUser;
  if (!shape->bx) { /* the first time on this grid: the tuned shape, or tune it now */
    Launch l = {fn, &li, user, x, out};

    PetscCall(PetscSNPrintf(name, sizeof name, "%s/%s", kernel, what));
    PetscCall(StnTuneLaunch(PETSC_COMM_WORLD, name, (int)info->dim, (int)info->xm, (int)info->ym, (int)info->zm, out, nout, run_launch, &l, shape));
  }
  PetscCall(PetscLogGpuTimeBegin());
  PetscCheck(fn(&li, user, x, out, shape) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "the %s kernel failed", what);
  PetscCall(PetscLogGpuTimeEnd());
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnResidualCUDA(DMDALocalInfo *info, Vec X, Vec F, StnKernels *k, const void *user)
{
  const PetscScalar *x;
  PetscScalar       *f;
  StnLevelShapes    *level;
  const long         points = (long)info->xm * info->ym * info->zm;

  PetscFunctionBeginUser;
  PetscCall(level_shapes(k, info, &level));
  PetscCall(VecCUDAGetArrayRead(X, &x));
  PetscCall(VecCUDAGetArrayWrite(F, &f));
  PetscCall(launch(info, k->residual, k->name, "residual", &level->residual, user, x, f, points * info->dof));
  PetscCall(PetscLogGpuFlops(k->residual_flops * points));
  PetscCall(VecCUDARestoreArrayWrite(F, &f));
  PetscCall(VecCUDARestoreArrayRead(X, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnJacobianCUDA(DMDALocalInfo *info, Vec X, Mat J, Mat P, StnKernels *k, void *user)
{
  const PetscScalar *x;
  PetscScalar       *a;
  PetscBool          sgdia;
  PetscInt           nsten;
  Mat                target;
  StnLevelShapes    *level;
  const long         points = (long)info->xm * info->ym * info->zm;

  PetscFunctionBeginUser;
  PetscCall(jacobian_target(J, P, &target, &sgdia));
  if (!sgdia) { /* AIJ on this grid (a level of -pc_type mg, or -stn_mat_type aij): on the host */
    const void *xh;

    PetscCall(DMDAVecGetArrayRead(info->da, X, (void *)&xh));
    PetscCall(k->jacobian_host(info, (void *)xh, J, P, user));
    PetscCall(DMDAVecRestoreArrayRead(info->da, X, (void *)&xh));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSGDIAGetLayout(target, &nsten, NULL, NULL, NULL));
  PetscCall(level_shapes(k, info, &level));
  PetscCall(VecCUDAGetArrayRead(X, &x));
  PetscCall(MatSGDIAGetArrayDevice(target, &a));
  PetscCall(launch(info, k->jacobian, k->name, "jacobian", &level->jacobian, user, x, a, points * nsten * info->dof * info->dof));
  PetscCall(MatSGDIARestoreArrayDevice(target, &a));
  PetscCall(VecCUDARestoreArrayRead(X, &x));
  PetscCall(finish_jacobian(target, P));
  PetscCall(StnMatFreeUpdate(J, target, info, X, k, user, nsten)); /* -stn_operator matfree: J w at this state */
  PetscFunctionReturn(PETSC_SUCCESS);
}



/* The scale of a coarse grid's IJacobian (stnapp.h): 1 on the finest grid and for equations
   multiplied by the cell size. */
static PetscErrorCode coarse_grid_scale(const DMDALocalInfo *info, const StnKernels *k, PetscReal *scale)
{
  PetscInt level, p = STN_H_POWER_NONE;

  PetscFunctionBeginUser;
  *scale = 1.0;
  PetscCall(DMGetCoarsenLevel(info->da, &level));
  if (!level || !k->h_power) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt f = 0; f < info->dof; f++) {
    if (k->h_power[f] == STN_H_POWER_NONE) continue;
    if (p != STN_H_POWER_NONE && k->h_power[f] != p) PetscFunctionReturn(PETSC_SUCCESS); /* mixed: leave it */
    p = k->h_power[f];
  }
  if (p != STN_H_POWER_NONE && p < info->dim - 2) *scale = PetscPowReal(2.0, (PetscReal)(level * (info->dim - 2 - p)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnIFunctionCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec Xdot, Vec F, StnKernels *k, const void *user)
{
  const PetscScalar *xdot;
  StnTimeArgs        at = {user, t, 0.0, NULL};
  PetscReal          scale;

  PetscFunctionBeginUser;
  PetscCall(VecCUDAGetArrayRead(Xdot, &xdot));
  at.xdot = xdot;
  PetscCall(StnResidualCUDA(info, X, F, k, &at));
  PetscCall(VecCUDARestoreArrayRead(Xdot, &xdot));
  PetscCall(coarse_grid_scale(info, k, &scale)); /* as the IJacobian's, so that a coarse Newton step (FAS) fits it */
  if (scale != 1.0) PetscCall(VecScale(F, scale));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnRHSFunctionCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec G, StnKernels *k, const void *user)
{
  StnTimeArgs at = {user, t, 0.0, NULL}; /* no time derivative: G does not read it */
  PetscReal   scale;

  PetscFunctionBeginUser;
  PetscCall(StnResidualCUDA(info, X, G, k, &at));
  PetscCall(coarse_grid_scale(info, k, &scale)); /* as the IFunction's, which TS may subtract it from */
  if (scale != 1.0) PetscCall(VecScale(G, scale));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StnIJacobianCUDA(DMDALocalInfo *info, PetscReal t, Vec X, Vec Xdot, PetscReal shift, Mat J, Mat P, StnKernels *k, void *user)
{
  PetscReal scale;
  const PetscScalar *xdot;
  PetscBool          sgdia;
  Mat                target;
  StnTimeArgs        at = {user, t, shift, NULL};

  PetscFunctionBeginUser;
  PetscCall(jacobian_target(J, P, &target, &sgdia));
  if (!sgdia) { /* AIJ on this grid (-stn_mat_type aij, the levels of -pc_type mg on AIJ): on the host */
    const void *xh, *xdoth;

    PetscCall(DMDAVecGetArrayRead(info->da, X, (void *)&xh));
    PetscCall(DMDAVecGetArrayRead(info->da, Xdot, (void *)&xdoth));
    PetscCall(k->ijacobian_host(info, t, xh, xdoth, shift, J, P, user));
    PetscCall(DMDAVecRestoreArrayRead(info->da, Xdot, (void *)&xdoth));
    PetscCall(DMDAVecRestoreArrayRead(info->da, X, (void *)&xh));
  } else {
    PetscCall(VecCUDAGetArrayRead(Xdot, &xdot));
    at.xdot = xdot;
    PetscCall(StnJacobianCUDA(info, X, J, P, k, &at));
    PetscCall(VecCUDARestoreArrayRead(Xdot, &xdot));
  }
  PetscCall(coarse_grid_scale(info, k, &scale));
  if (scale != 1.0) {
    PetscCall(MatScale(P, scale));
    if (J != P && target == J) PetscCall(MatScale(J, scale)); /* an SG-DIA J copied into an AIJ P */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The product without the matrix as the tuner runs it (StnLaunchFn). */
typedef struct {
  StnMultFn          *fn;
  const StnLocalInfo *info;
  const void         *user;
  const double       *x;
  StnMultArgs         m;
} ProductLaunch;

static int run_product(void *args, const StnKernelShape *shape)
{
  const ProductLaunch *l = (const ProductLaunch *)args;

  return l->fn(l->info, l->user, l->x, &l->m, shape);
}

PetscErrorCode StnKernelsProductShape(StnKernels *k, const DMDALocalInfo *info, const void *user, const double *x, StnKernelShape *shape)
{
  StnLevelShapes *level;
  char            name[256];

  PetscFunctionBeginUser;
  PetscCall(level_shapes(k, info, &level));
  if (!level->product.bx) { /* the cached shape or the default; tuned on a smoothing step's operands, w = b = d = 1 */
    const long n = (long)info->xm * info->ym * info->zm * info->dof;

    PetscCall(PetscSNPrintf(name, sizeof name, "%s/product", k->name));
    StnKernelShapeDefault((int)info->dim, (int)info->xm, &level->product);
    if (info->dim == 3) { /* a thread down z reuses the planes it has read: 1.5x at 257^3 (sfi3d) */
      level->product.by    = 2;
      level->product.sweep = 8;
    }
    if (!StnTuneRequested()) /* no operands: making them costs more than the lookup (a new vector on several ranks: milliseconds) */
      PetscCall(StnTuneLaunch(PETSC_COMM_WORLD, name, (int)info->dim, (int)info->xm, (int)info->ym, (int)info->zm, NULL, n, NULL, NULL, &level->product));
    else {
      Vec                w, wl, y;
      const PetscScalar *wa, *wla = NULL;
      PetscScalar       *ya;
      StnLocalInfo       li = StnLocalInfoOf(info);
      PetscMPIInt        size;

      PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)info->da), &size));
      PetscCall(DMGetGlobalVector(info->da, &w));
      PetscCall(DMGetLocalVector(info->da, &wl)); /* several ranks: the neighbours from the ghosted copy */
      PetscCall(DMGetGlobalVector(info->da, &y));
      PetscCall(VecSet(w, 1.0));
      PetscCall(VecSet(wl, 1.0));
      PetscCall(VecCUDAGetArrayRead(w, &wa));
      if (size > 1) PetscCall(VecCUDAGetArrayRead(wl, &wla));
      PetscCall(VecCUDAGetArrayWrite(y, &ya));
      ProductLaunch l = {k->jacobian_mult, &li, user, x, {wa, wa, wa, NULL, ya, 0.0, 1.0, 1.0, wla}};
      PetscCall(StnTuneLaunch(PETSC_COMM_WORLD, name, (int)info->dim, (int)info->xm, (int)info->ym, (int)info->zm, ya, n, run_product, &l, &level->product));
      PetscCall(VecCUDARestoreArrayWrite(y, &ya));
      PetscCall(VecCUDARestoreArrayRead(w, &wa));
      if (size > 1) PetscCall(VecCUDARestoreArrayRead(wl, &wla));
      PetscCall(DMRestoreGlobalVector(info->da, &y));
      PetscCall(DMRestoreLocalVector(info->da, &wl));
      PetscCall(DMRestoreGlobalVector(info->da, &w));
    }
  }
  *shape = level->product;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
