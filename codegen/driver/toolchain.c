/*
** toolchain.c: finds PETSc and its C compiler, and runs that compiler.
**
** PETSc says how to build against it in one of two files: a pkg-config file
** (lib/pkgconfig/PETSc.pc, which Debian's petsc-dev puts on pkg-config's
** search path) or the make fragment lib/petsc/conf/petscvariables. tc_find
** reads the first it finds and keeps the flags as argv words. tc_build runs
** the compiler with posix_spawnp: no shell ever sees a path, so a work
** directory or output name with spaces, quotes, ';' or '$' in it is passed
** through as it is. Every child gets stdin from /dev/null, so a compiler that
** wants input cannot hang stencilc.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strutil.h"
#include "toolchain.h"
#include "util.h"

extern char **environ;  /* POSIX: the application declares it */

__attribute__((format(printf, 3, 4)))
static void seterr(char *err, size_t errsize, const char *fmt, ...) {
  if (!err || errsize == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errsize, fmt, ap);
  va_end(ap);
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Appends the words of s to (*v, *n). pkg-config prints flags separated by
   blanks and PETSc's petscvariables holds them the same way; for PETSc
   neither has quoting or escapes we need to honour, so splitting on
   whitespace is all the parsing there is. */
static void add_words(char ***v, int *n, const char *s) {
  for (;;) {
    while (is_blank(*s)) s++;
    if (!*s) return;
    const char *w = s;
    while (*s && !is_blank(*s)) s++;
    *v = xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
    char *word = xmalloc((size_t)(s - w) + 1);
    memcpy(word, w, (size_t)(s - w));
    word[s - w] = '\0';
    (*v)[(*n)++] = word;
  }
}

/* The first word of s, malloc'd; NULL when s is blank. */
static char *first_word(const char *s) {
  char **v = NULL;
  int n = 0;
  add_words(&v, &n, s);
  char *w = n > 0 ? v[0] : NULL;
  for (int i = 1; i < n; i++) free(v[i]);
  free(v);
  return w;
}

/* ---- children ---- */

/* Starts argv (argv[0] searched in PATH) with stdin from /dev/null, stdout
   on out_fd and stderr on err_fd (-1: /dev/null). Returns 0 with *pid, or
   an errno value. */
static int spawn(char *const argv[], char *const envp[], int out_fd, int err_fd, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  int rc = posix_spawn_file_actions_init(&fa);
  if (rc) return rc;
  rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (!rc)
    rc = out_fd >= 0 ? posix_spawn_file_actions_adddup2(&fa, out_fd, 1)
                     : posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (!rc)
    rc = err_fd >= 0 ? posix_spawn_file_actions_adddup2(&fa, err_fd, 2)
                     : posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  if (!rc) rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, envp ? envp : environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

static int wait_child(pid_t pid, int *status) {
  while (waitpid(pid, status, 0) < 0)
    if (errno != EINTR) return -1;
  return 0;
}

/* Runs argv (no shell; argv[0] searched in PATH) with environment envp
   (NULL: this process's), stdin from /dev/null and stderr discarded, and
   returns its stdout as a malloc'd NUL-terminated string; NULL when it could
   not be started or did not exit with status 0. *spawn_errno says why a
   child could not be started: 0 when it ran (and maybe failed), else the
   errno value (ENOENT: no such program). */
static char *capture(char *const argv[], char *const envp[], int *spawn_errno) {
  int fd[2];
  *spawn_errno = 0;
  if (pipe(fd) < 0) {
    *spawn_errno = errno;
    return NULL;
  }
  /* Only the child's dup2'd copy of the write end may survive exec, or the
     read below would wait for our own copy to close. */
  fcntl(fd[0], F_SETFD, FD_CLOEXEC);
  fcntl(fd[1], F_SETFD, FD_CLOEXEC);
  pid_t pid;
  int rc = spawn(argv, envp, fd[1], -1, &pid);
  close(fd[1]);
  if (rc) {
    close(fd[0]);
    *spawn_errno = rc;
    return NULL;
  }
  size_t len = 0, cap = 256;
  char *buf = xmalloc(cap);
  bool ok = true;
  for (;;) {
    if (cap - len < 2) buf = xrealloc(buf, cap *= 2);
    ssize_t k = read(fd[0], buf + len, cap - len - 1);
    if (k > 0) len += (size_t)k;
    else if (k == 0) break;
    else if (errno != EINTR) { ok = false; break; }
  }
  close(fd[0]);
  int status;
  if (wait_child(pid, &status) < 0 || !ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    free(buf);
    return NULL;
  }
  buf[len] = '\0';
  return buf;
}

/* ---- finding PETSc ---- */

/* A copy of this process's environment with NAME=value in front and any
   other NAME= removed; free with free_env. */
static char **env_with(const char *name, const char *value) {
  size_t nlen = strlen(name), n = 0;
  while (environ[n]) n++;
  char **env = xmalloc((n + 2) * sizeof *env);
  size_t k = 0;
  env[k++] = xprintf("%s=%s", name, value);
  for (size_t i = 0; i < n; i++)
    if (!(strncmp(environ[i], name, nlen) == 0 && environ[i][nlen] == '='))
      env[k++] = environ[i];
  env[k] = NULL;
  return env;
}

static void free_env(char **env) {
  if (!env) return;
  free(env[0]);
  free(env);
}

/* `pkg-config QUERY PETSc`. own: a PETSc of PETSC_DIR, read with --define-prefix, so that its
   paths are those of the directory PETSc.pc is in (a copied or moved install), not the prefix
   written into the file when it was installed. */
static char *pkg_config(const char *query, const char *query2, bool own, char *const envp[], int *spawn_errno) {
  char *argv[6];
  int n = 0;
  argv[n++] = "pkg-config";
  if (own) argv[n++] = "--define-prefix";
  argv[n++] = (char *)query;
  if (query2) argv[n++] = (char *)query2;
  argv[n++] = "PETSc";
  argv[n] = NULL;
  return capture(argv, envp, spawn_errno);
}

static bool same_dir(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The runtime calls LAPACK itself (the point-block inverses of sgdia.c),
   and a shared libpetsc does not pass its LAPACK on to the program: take
   the BLAS/LAPACK words (and the -L before them) from PETSc.pc's private
   libraries. */
static void add_lapack(Toolchain *t, bool own, char *const envp[], int *spawn_errno) {
  char *all = pkg_config("--libs", "--static", own, envp, spawn_errno);
  char **w = NULL;
  int n = 0;
  if (!all) return;
  add_words(&w, &n, all);
  for (int i = 0; i < n; i++) {
    bool keep = strncmp(w[i], "-L", 2) == 0 || strstr(w[i], "lapack") || strstr(w[i], "blas");
    if (keep && strcmp(w[i], "-lscalapack-openmpi") != 0) {
      t->libs = xrealloc(t->libs, (size_t)(t->nlibs + 1) * sizeof *t->libs);
      t->libs[t->nlibs++] = w[i];
    } else
      free(w[i]);
  }
  free(w);
  free(all);
}

/* A PETSc of one's own (PETSC_DIR) is not where the dynamic linker looks:
   the program records its lib directory (-Wl,-rpath), so it runs as built. */
static void add_rpath(Toolchain *t, char *const envp[], int *spawn_errno) {
  char *dir = pkg_config("--variable=libdir", NULL, true, envp, spawn_errno);
  char *d = dir ? first_word(dir) : NULL;
  if (d) {
    t->libs = xrealloc(t->libs, (size_t)(t->nlibs + 1) * sizeof *t->libs);
    t->libs[t->nlibs++] = xprintf("-Wl,-rpath,%s", d);
  }
  free(d);
  free(dir);
}

/* Fills t from `pkg-config PETSc` run with envp. at: the PETSc directory
   whose lib/pkgconfig (pcdir) is first on envp's PKG_CONFIG_PATH; NULL for
   the system's PETSc. Returns 0; -1 with *spawn_errno as for capture; or,
   with *found (malloc'd) the directory pkg-config read PETSc.pc from, -2
   when that is not pcdir: pkg-config skips a PETSc.pc it cannot parse and
   would hand us another PETSc than the one PETSC_DIR names. */
static int from_pkg_config(Toolchain *t, const char *at, const char *pcdir, char *const envp[],
                           int *spawn_errno, char **found) {
  if (at) {
    char *dir = pkg_config("--variable=pcfiledir", NULL, false, envp, spawn_errno);
    if (!dir) return -1;
    size_t n = strlen(dir);
    while (n > 0 && is_blank(dir[n - 1])) dir[--n] = '\0';
    if (!same_dir(dir, pcdir)) {
      *found = dir;
      return -2;
    }
    free(dir);
  }
  const bool own = at != NULL;
  char *cflags = pkg_config("--cflags", NULL, own, envp, spawn_errno);
  if (!cflags) return -1;
  char *libs = pkg_config("--libs", NULL, own, envp, spawn_errno);
  char *cc = libs ? pkg_config("--variable=ccompiler", NULL, own, envp, spawn_errno) : NULL;
  char *version = cc ? pkg_config("--modversion", NULL, own, envp, spawn_errno) : NULL;
  int rc = -1;
  if (version) {
    add_words(&t->cflags, &t->ncflags, cflags);
    add_words(&t->libs, &t->nlibs, libs);
    add_lapack(t, own, envp, spawn_errno);
    if (at) add_rpath(t, envp, spawn_errno);
    /* Every PETSc.pc since 3.x names its compiler; an MPI build needs the
       MPI wrapper, so that is the guess when one does not. */
    t->cc = first_word(cc);
    if (!t->cc) t->cc = xstrdup("mpicc");
    char *v = first_word(version);
    t->petsc_desc = at ? xprintf("PETSc %s at %s (PETSc.pc)", v ? v : "?", at)
                       : xprintf("PETSc %s (pkg-config)", v ? v : "?");
    free(v);
    rc = 0;
  }
  free(cflags);
  free(libs);
  free(cc);
  free(version);
  return rc;
}

static void find_cuda(Toolchain *t, const char *dir, const char *vars_path);

/* The value of the last `NAME = value` line of a make fragment, malloc'd;
   NULL when there is none. */
static char *make_var(const char *text, const char *name) {
  size_t nlen = strlen(name);
  char *value = NULL;
  for (const char *line = text; *line; ) {
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    if (strncmp(line, name, nlen) == 0) {
      const char *p = line + nlen;
      while (p < end && (*p == ' ' || *p == '\t')) p++;
      if (p < end && *p == '=') {
        p++;
        const char *q = end;
        while (p < q && is_blank(*p)) p++;
        while (q > p && is_blank(q[-1])) q--;
        free(value);
        value = xmalloc((size_t)(q - p) + 1);
        memcpy(value, p, (size_t)(q - p));
        value[q - p] = '\0';
      }
    }
    line = *end ? end + 1 : end;
  }
  return value;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t len = 0, cap = 4096;
  char *buf = xmalloc(cap);
  size_t k;
  while ((k = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += k;
    if (cap - len < 2) buf = xrealloc(buf, cap *= 2);
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  buf[len] = '\0';
  return buf;
}

/* Fills t from dir/lib/petsc/conf/petscvariables (at path). */
static int from_petscvariables(Toolchain *t, const char *dir, const char *path, char *err, size_t errsize) {
  char *text = read_file(path);
  if (!text) {
    seterr(err, errsize, "cannot read %s: %s", path, strerror(errno));
    return -1;
  }
  static const char *const names[] = {"PCC", "PETSC_CC_INCLUDES", "PETSC_WITH_EXTERNAL_LIB"};
  char *val[3];
  int rc = 0;
  for (int i = 0; i < 3; i++) {
    val[i] = make_var(text, names[i]);
    if (rc == 0 && !val[i]) {
      seterr(err, errsize, "%s does not define %s; is that PETSc configured and built?", path, names[i]);
      rc = -1;
    } else if (rc == 0 && strchr(val[i], '$')) {
      /* configure writes the values out in full; one that refers to other
         make variables is not something we can pass to a compiler. */
      seterr(err, errsize, "%s: %s refers to other make variables ('%s'), which stencilc does not expand",
             path, names[i], val[i]);
      rc = -1;
    }
  }
  if (rc == 0) {
    /* PCC may carry flags after the compiler's name. */
    char **cc = NULL;
    int ncc = 0;
    add_words(&cc, &ncc, val[0]);
    if (ncc == 0) {
      seterr(err, errsize, "%s: PCC (the C compiler) is empty", path);
      rc = -1;
    } else {
      t->cc = cc[0];
      for (int i = 1; i < ncc; i++) {
        t->cflags = xrealloc(t->cflags, (size_t)(t->ncflags + 1) * sizeof *t->cflags);
        t->cflags[t->ncflags++] = cc[i];
      }
      add_words(&t->cflags, &t->ncflags, val[1]);
      add_words(&t->libs, &t->nlibs, val[2]);
      t->petsc_desc = xprintf("PETSc at %s (petscvariables)", dir);
    }
    free(cc);
  }
  for (int i = 0; i < 3; i++) free(val[i]);
  free(text);
  return rc;
}

/* PETSC_DIR is set: $PETSC_DIR/$PETSC_ARCH for a build in PETSc's source
   tree, $PETSC_DIR itself for a --prefix install. */
static int find_at_petsc_dir(Toolchain *t, const char *pdir, const char *parch, char *err, size_t errsize) {
  size_t len = strlen(pdir);
  while (len > 1 && pdir[len - 1] == '/') len--;  /* "/opt/petsc/" reads better without the '/' */
  char *cand[2];
  int ncand = 0;
  if (parch && *parch) cand[ncand++] = xprintf("%.*s/%s", (int)len, pdir, parch);
  cand[ncand++] = xprintf("%.*s", (int)len, pdir);
  int rc = 1;  /* 1: nothing found yet */
  for (int i = 0; i < ncand && rc == 1; i++) {
    char *pcdir = xprintf("%s/lib/pkgconfig", cand[i]);
    char *pc = xprintf("%s/PETSc.pc", pcdir);
    char *vars = xprintf("%s/lib/petsc/conf/petscvariables", cand[i]);
    bool has_pc = exists(pc), has_vars = exists(vars);
    if (has_pc) {
      const char *old = getenv("PKG_CONFIG_PATH");
      char *path = old && *old ? xprintf("%s:%s", pcdir, old) : xstrdup(pcdir);
      char **env = env_with("PKG_CONFIG_PATH", path);
      int spawn_errno;
      char *found = NULL;
      int pc_rc = from_pkg_config(t, cand[i], pcdir, env, &spawn_errno, &found);
      if (pc_rc == 0) rc = 0;
      else if (pc_rc == -2)
        seterr(err, errsize, "pkg-config rejects %s (it read the PETSc.pc in %s instead); is that file intact?",
               pc, found);
      else if (spawn_errno == ENOENT)
        seterr(err, errsize, "found %s, but pkg-config is not installed to read it; install pkg-config", pc);
      else if (spawn_errno)
        seterr(err, errsize, "cannot run pkg-config: %s", strerror(spawn_errno));
      else
        seterr(err, errsize, "'pkg-config PETSc' with PKG_CONFIG_PATH=%s failed on %s", pcdir, pc);
      free(found);
      free_env(env);
      free(path);
    }
    if (rc != 0 && has_vars) rc = from_petscvariables(t, cand[i], vars, err, errsize);
    else if (rc != 0 && has_pc) rc = -1;
    if (rc == 0 && has_vars) find_cuda(t, cand[i], vars);
    free(pcdir);
    free(pc);
    free(vars);
  }
  if (rc == 1) {
    if (ncand == 2)
      seterr(err, errsize,
             "cannot find PETSc: PETSC_DIR is '%s' and PETSC_ARCH '%s', but neither %s nor %s has "
             "lib/pkgconfig/PETSc.pc or lib/petsc/conf/petscvariables; set PETSC_DIR and PETSC_ARCH to a "
             "configured and built PETSc, or unset them to use Debian's petsc-dev",
             pdir, parch, cand[0], cand[1]);
    else
      seterr(err, errsize,
             "cannot find PETSc: PETSC_DIR is '%s', but it has neither lib/pkgconfig/PETSc.pc nor "
             "lib/petsc/conf/petscvariables; for a build inside PETSc's source tree set PETSC_ARCH too, "
             "or unset PETSC_DIR to use Debian's petsc-dev",
             pdir);
    rc = -1;
  }
  for (int i = 0; i < ncand; i++) free(cand[i]);
  return rc;
}

static int find_system(Toolchain *t, char *err, size_t errsize) {
  int spawn_errno;
  if (from_pkg_config(t, NULL, NULL, NULL, &spawn_errno, NULL) == 0) return 0;
  if (spawn_errno == ENOENT)
    seterr(err, errsize,
           "cannot find PETSc: PETSC_DIR is not set and pkg-config is not installed; install Debian's "
           "pkg-config and petsc-dev, or set PETSC_DIR and PETSC_ARCH to a PETSc build");
  else if (spawn_errno)
    seterr(err, errsize, "cannot find PETSc: cannot run pkg-config: %s", strerror(spawn_errno));
  else
    seterr(err, errsize,
           "cannot find PETSc: PETSC_DIR is not set and 'pkg-config PETSc' does not know it; install "
           "Debian's petsc-dev, or set PETSC_DIR and PETSC_ARCH to a PETSc build");
  return -1;
}

/* Whether prog (a path, or a name looked up in PATH as posix_spawnp does) is an executable. */
static bool runnable(const char *prog) {
  if (strchr(prog, '/')) return access(prog, X_OK) == 0;
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/bin:/bin";
  for (const char *p = path; *p;) {
    const char *colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    char *full = len ? xprintf("%.*s/%s", (int)len, p, prog) : xprintf("./%s", prog);
    bool ok = access(full, X_OK) == 0;
    free(full);
    if (ok) return true;
    p += len + (colon ? 1 : 0);
  }
  return false;
}

int tc_find(Toolchain *t, char *err, size_t errsize) {
  memset(t, 0, sizeof *t);
  const char *pdir = getenv("PETSC_DIR");
  int rc = pdir && *pdir ? find_at_petsc_dir(t, pdir, getenv("PETSC_ARCH"), err, errsize)
                         : find_system(t, err, errsize);
  if (rc != 0) {
    tc_free(t);
    return -1;
  }
  /* One argv word, verbatim; CC is left alone, since it names the compiler
     for stencilc itself, which need not be the one PETSc was built with. */
  const char *cc = getenv("STENCILC_CC");
  if (cc && *cc) {
    free(t->cc);
    t->cc = xstrdup(cc);
  }
  /* A missing compiler is the machine's, not a bug of ours: say so before generating anything. */
  if (!runnable(t->cc)) {
    if (cc && *cc) seterr(err, errsize, "the C compiler '%s' (STENCILC_CC) is not installed (not found on PATH)", t->cc);
    else
      seterr(err, errsize, "the C compiler '%s' that %s builds with is not installed (not found on PATH); "
                           "install it (Debian's PETSc uses OpenMPI's mpicc: apt-get install libopenmpi-dev; "
                           "`make deps` installs all stencilc needs) or name another with STENCILC_CC",
             t->cc, t->petsc_desc);
    tc_free(t);
    return -1;
  }
  if (t->nvcc && !runnable(t->nvcc)) {
    seterr(err, errsize, "the CUDA compiler '%s' that %s was configured with is not installed (not found on "
                         "PATH); install the CUDA toolkit, or use a PETSc without CUDA (PETSC_DIR)",
           t->nvcc, t->petsc_desc);
    tc_free(t);
    return -1;
  }
  return 0;
}

void tc_free(Toolchain *t) {
  free(t->cc);
  for (int i = 0; i < t->ncflags; i++) free(t->cflags[i]);
  free(t->cflags);
  for (int i = 0; i < t->nlibs; i++) free(t->libs[i]);
  free(t->libs);
  for (int i = 0; i < t->ncuflags; i++) free(t->cuflags[i]);
  free(t->cuflags);
  free(t->nvcc);
  free(t->petsc_desc);
  memset(t, 0, sizeof *t);
}

/* ---- building ---- */

static bool write_all(int fd, const char *s, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, s, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    s += k;
    n -= (size_t)k;
  }
  return true;
}

/* The command line as a shell would need it typed: words with anything but
   [A-Za-z0-9@%+=:,./_-] in single quotes. */
static void write_command(int fd, char *const argv[]) {
  for (int i = 0; argv[i]; i++) {
    const char *w = argv[i];
    if (i > 0) write_all(fd, " ", 1);
    bool plain = *w != '\0';
    for (const char *p = w; *p && plain; p++)
      plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("@%+=:,./_-", *p);
    if (plain) {
      write_all(fd, w, strlen(w));
      continue;
    }
    write_all(fd, "'", 1);
    for (const char *p = w; *p; p++)
      if (*p == '\'') write_all(fd, "'\\''", 4);
      else write_all(fd, p, 1);
    write_all(fd, "'", 1);
  }
  write_all(fd, "\n", 1);
}

int tc_build(const Toolchain *t, const char *const *sources, int nsources, const char *include_dir,
             const char *output, const char *log_path, char *err, size_t errsize) {
  int cap = 8 + t->ncflags + nsources + t->nlibs, n = 0;  /* 8: cc -O2 -I dir -o output -lm NULL */
  char **argv = xmalloc((size_t)cap * sizeof *argv);
  char **renamed = xmalloc((size_t)(nsources + 1) * sizeof *renamed);
  int nrenamed = 0;
  argv[n++] = t->cc;
  argv[n++] = "-O2";
  if (include_dir) {
    argv[n++] = "-I";
    argv[n++] = (char *)include_dir;
  }
  for (int i = 0; i < t->ncflags; i++) argv[n++] = t->cflags[i];
  for (int i = 0; i < nsources; i++) {
    /* A relative path that starts with '-' would read as an option. */
    if (sources[i][0] == '-') argv[n++] = renamed[nrenamed++] = xprintf("./%s", sources[i]);
    else argv[n++] = (char *)sources[i];
  }
  argv[n++] = "-o";
  argv[n++] = (char *)output;
  for (int i = 0; i < t->nlibs; i++) argv[n++] = t->libs[i];
  argv[n++] = "-lm";
  argv[n] = NULL;

  int status = -1;
  int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (log < 0) {
    seterr(err, errsize, "cannot create the build log %s: %s", log_path, strerror(errno));
    goto done;
  }
  write_command(log, argv);
  pid_t pid;
  int rc = spawn(argv, NULL, log, log, &pid);
  close(log);
  if (rc) {
    seterr(err, errsize, "cannot run the C compiler '%s': %s%s", t->cc, strerror(rc),
           rc == ENOENT ? "; install it (Debian's petsc-dev brings mpicc), or set STENCILC_CC to the C "
                          "compiler PETSc was built with"
                        : "");
    goto done;
  }
  int ws;
  if (wait_child(pid, &ws) < 0) {
    seterr(err, errsize, "cannot wait for the C compiler '%s': %s", t->cc, strerror(errno));
    goto done;
  }
  if (WIFSIGNALED(ws)) {
    int sig = WTERMSIG(ws);
    seterr(err, errsize, "the C compiler '%s' was killed by signal %d (%s); its output is in %s", t->cc, sig,
           strsignal(sig), log_path);
    status = 128 + sig;
  } else {
    status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
    /* 127: where posix_spawnp cannot report a failed exec (older C
       libraries, valgrind), the child exits 127 as a shell would. */
    if (status == 127)
      seterr(err, errsize, "the C compiler '%s' failed (exit status 127: is it installed?); its output is in %s",
             t->cc, log_path);
    else if (status != 0)
      seterr(err, errsize, "the C compiler '%s' failed (exit status %d); its output is in %s", t->cc, status,
             log_path);
  }
done:
  for (int i = 0; i < nrenamed; i++) free(renamed[i]);
  free(renamed);
  free(argv);
  return status;
}

/* ---- the work directory ---- */

char *tc_make_temp_dir(void) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  size_t n = strlen(base);
  while (n > 1 && base[n - 1] == '/') n--;
  char *path = xprintf("%.*s/stencilc-XXXXXX", (int)n, base);
  if (!mkdtemp(path)) {
    int e = errno;
    free(path);
    errno = e;
    return NULL;
  }
  return path;
}

int tc_remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char *path = xprintf("%s/%s", dir, e->d_name);
    unlink(path);  /* a subdirectory stays, and rmdir below says so */
    free(path);
  }
  closedir(d);
  return rmdir(dir);
}

/* Copies from into the new file descriptor out. */
static bool copy_fd(int in, int out) {
  char buf[65536];
  for (;;) {
    ssize_t k = read(in, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return false;
    if (k == 0) return true;
    if (!write_all(out, buf, (size_t)k)) return false;
  }
}

int tc_move_file(const char *from, const char *to, char *err, size_t errsize) {
  if (rename(from, to) == 0) return 0;
  if (errno != EXDEV) {
    seterr(err, errsize, "cannot move %s to %s: %s", from, to, strerror(errno));
    return -1;
  }
  /* Different file systems: copy beside to, then rename over it. */
  const char *slash = strrchr(to, '/');
  char *tmp = slash ? xprintf("%.*s/.stencilc-XXXXXX", (int)(slash - to), to) : xstrdup(".stencilc-XXXXXX");
  int rc = -1;
  int in = open(from, O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    seterr(err, errsize, "cannot read %s: %s", from, strerror(errno));
    free(tmp);
    return -1;
  }
  int out = mkstemp(tmp);
  if (out < 0) {
    seterr(err, errsize, "cannot create a file beside %s: %s", to, strerror(errno));
    close(in);
    free(tmp);
    return -1;
  }
  mode_t mask = umask(0);
  umask(mask);
  if (!copy_fd(in, out)) seterr(err, errsize, "cannot copy %s to %s: %s", from, tmp, strerror(errno));
  else if (fchmod(out, 0755 & ~mask) < 0) seterr(err, errsize, "cannot chmod %s: %s", tmp, strerror(errno));
  else if (fsync(out) < 0) seterr(err, errsize, "cannot write %s: %s", tmp, strerror(errno));
  else rc = 0;
  if (close(out) < 0 && rc == 0) {
    seterr(err, errsize, "cannot write %s: %s", tmp, strerror(errno));
    rc = -1;
  }
  close(in);
  if (rc == 0 && rename(tmp, to) < 0) {
    seterr(err, errsize, "cannot move %s to %s: %s", tmp, to, strerror(errno));
    rc = -1;
  }
  if (rc == 0) unlink(from);  /* to is complete; a leftover from is only litter */
  else unlink(tmp);
  free(tmp);
  return rc;
}

/* A PETSc configured with CUDA says so in its petscconf.h; its
   petscvariables name the CUDA compiler, its flags (the GPU architecture
   among them) and the CUDA libraries the program links with. */
static void find_cuda(Toolchain *t, const char *dir, const char *vars_path) {
  char *conf_path = xprintf("%s/include/petscconf.h", dir);
  char *conf = read_file(conf_path);
  char *vars = conf && strstr(conf, "#define PETSC_HAVE_CUDA 1") ? read_file(vars_path) : NULL;
  char *nvcc = vars ? make_var(vars, "CUDAC") : NULL;
  if (nvcc && *nvcc && !strchr(nvcc, '$')) {
    char *flags = make_var(vars, "CUDAC_FLAGS"), *inc = make_var(vars, "CUDA_INCLUDE"), *lib = make_var(vars, "CUDA_LIB");
    t->cuda = true;
    t->nvcc = first_word(nvcc);
    if (flags && !strchr(flags, '$')) add_words(&t->cuflags, &t->ncuflags, flags);
    if (inc && !strchr(inc, '$')) {
      add_words(&t->cuflags, &t->ncuflags, inc);
      add_words(&t->cflags, &t->ncflags, inc);
    }
    /* The CUDA libraries of this machine, which may sit elsewhere than on
       the machine PETSc was configured on (lib vs lib64). */
    const char *home = getenv("CUDA_HOME");
    char *cand[4] = {home ? xprintf("%s/lib64", home) : NULL, home ? xprintf("%s/lib", home) : NULL,
                     xstrdup("/usr/local/cuda/lib64"), xstrdup("/usr/local/cuda/lib")};
    for (int i = 0; i < 4; i++) {
      if (cand[i] && exists(cand[i])) {
        char *w = xprintf("-L%s -Wl,-rpath,%s", cand[i], cand[i]);
        add_words(&t->libs, &t->nlibs, w);
        free(w);
      }
      free(cand[i]);
    }
    if (lib && !strchr(lib, '$')) add_words(&t->libs, &t->nlibs, lib);
    add_words(&t->libs, &t->nlibs, "-lstdc++"); /* nvcc's objects are C++ */
    free(flags);
    free(inc);
    free(lib);
  }
  free(nvcc);
  free(vars);
  free(conf);
  free(conf_path);
}

int tc_start_cuda(const Toolchain *t, const char *source, const char *include_dir, const char *object,
                  const char *log_path, int *pid_out, char *err, size_t errsize) {
  int n = 0;
  char **argv = xmalloc((size_t)(t->ncuflags + 10) * sizeof *argv);
  argv[n++] = t->nvcc;
  for (int i = 0; i < t->ncuflags; i++) argv[n++] = t->cuflags[i];
  if (include_dir) {
    argv[n++] = "-I";
    argv[n++] = (char *)include_dir;
  }
  argv[n++] = "-c";
  argv[n++] = (char *)source;
  argv[n++] = "-o";
  argv[n++] = (char *)object;
  argv[n] = NULL;
  int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (log < 0) {
    seterr(err, errsize, "cannot create the build log %s: %s", log_path, strerror(errno));
    free(argv);
    return -1;
  }
  write_command(log, argv);
  pid_t pid;
  int rc = spawn(argv, NULL, log, log, &pid);
  close(log);
  free(argv);
  if (rc) {
    seterr(err, errsize, "cannot run the CUDA compiler '%s': %s", t->nvcc, strerror(rc));
    return -1;
  }
  *pid_out = (int)pid;
  return 0;
}

int tc_finish_cuda(const Toolchain *t, int pid, const char *log_path, char *err, size_t errsize) {
  int ws;
  if (wait_child((pid_t)pid, &ws) < 0) {
    seterr(err, errsize, "cannot wait for '%s': %s", t->nvcc, strerror(errno));
    return -1;
  }
  int status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
  if (status) seterr(err, errsize, "the CUDA compiler '%s' failed (exit status %d); its output is in %s", t->nvcc, status, log_path);
  return status;
}
