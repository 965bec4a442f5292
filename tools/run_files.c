/* SPDX-License-Identifier: MIT */
/*
 * run_files.c — the file side of `tandem run` (run_files.h): the pipeline
 * path, output paths under --output-dir, the check that everything the run
 * will write can be written (done before the device is opened, so a typo in
 * --trace costs nothing), writing outputs, and the Ctrl-C flag.
 *
 * Output files named in a pipeline are relative paths inside the output
 * folder: a pipeline file cannot write elsewhere ("/etc/...", "../..").
 */
#include "run_files.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "npy.h"

int run_check_pipeline_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return CLI_EXIT_OK;
  char names[512] = "", first[256] = "";
  unsigned found = 0;
  DIR *d = opendir(path);
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
    if (!found) snprintf(first, sizeof first, "%s", e->d_name);
    if (found++ < 6) {
      strncat(names, found > 1 ? ", " : "", sizeof names - strlen(names) - 1);
      strncat(names, e->d_name, sizeof names - strlen(names) - 1);
    }
  }
  if (d) closedir(d);
  size_t len = strlen(path);
  const char *sep = len && path[len - 1] == '/' ? "" : "/";
  if (found)
    cli_error("run: '%s' is a folder, not a pipeline file; its pipeline files: %s%s "
              "(e.g. tandem run %s%s%s)",
              path, names, found > 6 ? ", ..." : "", path, sep, first);
  else cli_error("run: '%s' is a folder, not a pipeline file (and holds no .json file)", path);
  return CLI_EXIT_USAGE;
}

/* mkdir -p for the folder part of |path| (everything before the last '/'). */
static bool make_parents(const char *path, char *failed, size_t failed_size) {
  char buf[4096];
  if (strlen(path) >= sizeof buf) {
    errno = ENAMETOOLONG;
    snprintf(failed, failed_size, "%s", path);
    return false;
  }
  strcpy(buf, path);
  char *last = strrchr(buf, '/');
  if (!last || last == buf) return true;
  *last = '\0';
  for (char *p = buf + 1;; p++) {
    bool end = *p == '\0';
    if (*p == '/' || end) {
      *p = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        snprintf(failed, failed_size, "%s", buf);
        return false;
      }
      struct stat st;
      if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        snprintf(failed, failed_size, "%s", buf);
        return false;
      }
      if (end) break;
      *p = '/';
    }
  }
  return true;
}

/* Whether |path| can be written: not a folder, its folder exists and is
 * writable, the file itself writable if it exists. |what| names it. */
static bool writable(const char *what, const char *path) {
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      cli_error("%s '%s' is a folder; name a file (nothing was run)", what, path);
      return false;
    }
    if (access(path, W_OK) != 0) {
      cli_error("%s '%s' cannot be written: %s (nothing was run)", what, path, strerror(errno));
      return false;
    }
    return true;
  }
  char dir[4096];
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == path) snprintf(dir, sizeof dir, "/");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    cli_error("%s '%s': folder '%s' does not exist (nothing was run)", what, path, dir);
    return false;
  }
  if (access(dir, W_OK) != 0) {
    cli_error("%s '%s': folder '%s' cannot be written: %s (nothing was run)", what, path, dir,
              strerror(errno));
    return false;
  }
  return true;
}

/* A pipeline's output name must stay inside the output folder. */
static bool inside(const char *file) {
  if (file[0] == '/') return false;
  for (const char *p = file; *p;) {
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == 2 && p[0] == '.' && p[1] == '.') return false;
    if (!end) break;
    p = end + 1;
  }
  return true;
}

void run_free_paths(char **paths, uint32_t count) {
  if (!paths) return;
  for (uint32_t i = 0; i < count; i++) free(paths[i]);
  free(paths);
}

int run_prepare_outputs(const pipeline_t *p, const char *dir, const char *trace_path,
                        const char *svg_path, char ***out_paths) {
  *out_paths = NULL;
  if (trace_path && !writable("--trace", trace_path)) return CLI_EXIT_USAGE;
  if (svg_path && !writable("--svg", svg_path)) return CLI_EXIT_USAGE;
  char **paths = calloc(p->output_count + 1, sizeof *paths);
  if (!paths) {
    cli_error("out of memory");
    return CLI_EXIT_FAILURE;
  }
  for (uint32_t i = 0; i < p->output_count; i++) {
    const char *file = p->outputs[i].path;
    bool as_is = p->outputs[i].from_command_line; /* --output: the user's own path */
    if (!as_is && !inside(file)) {
      cli_error("%s: outputs[%u].file: '%s' must be a relative path inside the output folder "
                "(--output-dir), without '..'",
                p->file, i, file);
      run_free_paths(paths, p->output_count);
      return CLI_EXIT_USAGE;
    }
    const char *in = as_is ? NULL : dir;
    size_t n = (in ? strlen(in) + 1 : 0) + strlen(file) + 1;
    paths[i] = malloc(n);
    if (!paths[i]) {
      cli_error("out of memory");
      run_free_paths(paths, p->output_count);
      return CLI_EXIT_FAILURE;
    }
    if (in) snprintf(paths[i], n, "%s/%s", in, file);
    else snprintf(paths[i], n, "%s", file);
    char failed[4096];
    if (!make_parents(paths[i], failed, sizeof failed)) {
      cli_error("%s: outputs[%u]: cannot make folder '%s' for '%s': %s (nothing was run)", p->file,
                i, failed, paths[i], strerror(errno));
      run_free_paths(paths, p->output_count);
      return CLI_EXIT_USAGE;
    }
    char what[64];
    snprintf(what, sizeof what, "outputs[%u]", i);
    if (!writable(what, paths[i])) {
      run_free_paths(paths, p->output_count);
      return CLI_EXIT_USAGE;
    }
  }
  *out_paths = paths;
  return CLI_EXIT_OK;
}

bool run_write_output(const char *path, const uint8_t *data, uint64_t bytes, pl_type_t type) {
  if (npy_is_npy_path(path)) return npy_write(path, data, bytes, type);
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, bytes, f) == bytes;
  if (fclose(f) != 0) ok = false;
  return ok;
}

bool run_read_expected(const pipeline_t *p, uint32_t index, const char *path, uint64_t len,
                       uint8_t **out, pl_type_t *type) {
  *out = NULL;
  if (npy_is_npy_path(path)) {
    npy_info_t info;
    char why[512];
    if (!npy_read(path, UINT64_MAX / 4, out, &info, why, sizeof why)) {
      cli_error("%s: checks[%u].file: %s", p->file, index, why);
      return false;
    }
    if (info.data_bytes != len) {
      cli_error("%s: checks[%u].file: '%s' holds %llu bytes (%llu elements of '%s'), the checked "
                "view has %llu",
                p->file, index, path, (unsigned long long)info.data_bytes,
                (unsigned long long)info.count, info.descr, (unsigned long long)len);
    } else if (*type == PL_TYPE_BYTES && info.known_type) {
      *type = info.type; /* compare and report as the array's elements */
      return true;
    } else if (!info.known_type || info.type == PL_TYPE_BYTES || info.type == *type) {
      return true;
    } else {
      static const char *const names[] = {"bytes", "f32", "u32", "i32", "i8"};
      cli_error("%s: checks[%u].file: '%s' holds '%s' elements, the check's type is %s ('%s')",
                p->file, index, path, info.descr, names[*type], npy_descr(*type));
    }
    free(*out);
    *out = NULL;
    return false;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    cli_error("%s: checks[%u].file: cannot open '%s': %s", p->file, index, path, strerror(errno));
    return false;
  }
  uint8_t *want = malloc(len + 1);
  size_t n = want ? fread(want, 1, len + 1, f) : 0;
  fclose(f);
  if (!want) {
    cli_error("out of memory");
    return false;
  }
  if (n != len) {
    cli_error("%s: checks[%u].file: '%s' has %s%zu bytes, the checked view has %llu", p->file,
              index, path, n > len ? "more than " : "", n > len ? (size_t)len : n,
              (unsigned long long)len);
    free(want);
    return false;
  }
  *out = want;
  return true;
}

char *run_read_text(const pipeline_t *p, uint32_t index, const char *path) {
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  long n = -1;
  if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      n < (1l << 24) && (text = malloc((size_t)n + 1)) &&
      fread(text, 1, (size_t)n, f) == (size_t)n) {
    text[n] = '\0';
    fclose(f);
    return text;
  }
  cli_error("%s: kernels[%u].glsl: cannot read '%s': %s", p->file, index, path,
            !f                ? strerror(errno)
            : n >= (1l << 24) ? "larger than 16 MiB"
                              : "read error");
  if (f) fclose(f);
  free(text);
  return NULL;
}

/* Lock-free atomics: safe in a handler, and read by the main thread while
 * the signal thread (or a handler) writes them. */
static atomic_int interrupted;    /* the first signal's number, 0 before */
static atomic_ullong first_at_ns; /* when it came (CLOCK_MONOTONIC), 0 before */

/* The first SIGINT/SIGTERM asks the run to stop. Others within a second are
 * the same request: `timeout -s INT` signals the child and then its whole
 * process group, and a shell's Ctrl-C can arrive twice. One later than that
 * is the user insisting: the default action ends the process (a trace being
 * written then is left as it was before, tandem_trace_write_json renames).
 * Async-signal-safe: it runs in the signal thread or, as a fallback, in a
 * handler. */
static void note_interrupt(int sig) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  unsigned long long now =
      (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
  unsigned long long first = 0;
  if (atomic_compare_exchange_strong(&first_at_ns, &first, now)) {
    atomic_store(&interrupted, sig);
    return;
  }
  /* |now| may be earlier than |first|: two signals handled at once on two
   * threads, the other one's CAS winning after this one read the clock. That
   * is the same request too (unsigned, now - first would wrap to "late"). */
  if (now <= first || now - first < RUN_INTERRUPT_REPEAT_MS * 1000000ull) return;
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, NULL);
  raise(sig); /* to this thread, where it is now unblocked: the default action */
}

static void on_interrupt(int sig) { note_interrupt(sig); }

/* The signals are blocked in every thread (the driver's inherit the mask)
 * and taken here, synchronously. A handler alone is not enough: the kernel
 * may deliver a process-directed signal to any thread that does not block
 * it, and a sanitizer's runtime (TSan) defers a signal that lands in a
 * thread asleep in a raw futex call (Mesa's idle threads) until that thread
 * next enters an intercepted call, which may be never: the run then did not
 * stop (a CI timeout of cli_run_interrupt, 2026-12-05). */
static void *signal_thread(void *arg) {
  const sigset_t *set = arg;
  for (;;) {
    int sig;
    if (sigwait(set, &sig) == 0) note_interrupt(sig);
  }
  return NULL;
}

void run_catch_interrupt(void) {
  static sigset_t set; /* the signal thread's, for the process's life */
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  /* The handler stays the disposition: a thread that existed before the
   * mask (none of the tool's) still turns a signal into the request, and
   * the process shows the signals as caught (SigCgt in /proc). */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sa.sa_mask = set;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigset_t old;
  if (pthread_sigmask(SIG_BLOCK, &set, &old) != 0) return;
  pthread_attr_t attr;
  pthread_t thread;
  bool started = pthread_attr_init(&attr) == 0;
  if (started) {
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&thread, &attr, signal_thread, &set) == 0;
    pthread_attr_destroy(&attr);
  }
  /* No thread: the handler alone, on whichever thread the kernel picks. */
  if (!started) pthread_sigmask(SIG_SETMASK, &old, NULL);
}

bool run_interrupted(void) { return atomic_load(&interrupted) != 0; }

uint64_t run_interrupted_at_ns(void) { return run_interrupted() ? atomic_load(&first_at_ns) : 0; }
