/* SPDX-License-Identifier: MIT */
/*
 * cmdline.c — the helpers tandem's command-line programs share (cmdline.h):
 * messages on stderr, option value parsing, the runtime options (validation
 * messages, NPU choice), the GPU choice, the clock, lane names, and where
 * the emulated NPU's files are (found relative to the libtandem.so the
 * program runs with: nothing is compiled in).
 *
 * Nothing here knows about a particular program or command.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmdline.h"

const char *cli_program_name = "tandem";

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", cli_program_name);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* The library's advice names C API fields; the tool's user has flags and
 * pipeline fields. Each pair: the API words, the tool's. */
static const char *const api_to_cli[][2] = {
    {"set the runtime option npu_library or TANDEM_NPU_LIBRARY to its path",
     "give its path with --npu-library (or TANDEM_NPU_LIBRARY)"},
    {"set the runtime option npu_backend to \"xrt\" or \"emulated\", or TANDEM_NPU=xrt|emulated",
     "run with --npu emulated or --npu xrt"},
    {"runtime option gpu_index is", "--gpu is"},
    {"pass the text as glsl_source to compile it at creation",
     "name it with \"glsl\" instead of \"spirv\" in the pipeline file to compile it when the "
     "pipeline loads"},
    {"validation was requested", "--validate was given"},
    /* Kernel flags (tandem_kernel_desc_t.flags) are boolean kernel fields. */
    {"set TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE", "set \"override_local_size\": true"},
    {"TANDEM_KERNEL_OVERRIDE_LOCAL_SIZE", "\"override_local_size\""},
    {"TANDEM_KERNEL_STRICT_SPEC_IDS", "\"strict_spec_ids\""},
    {"TANDEM_KERNEL_REQUIRE_FULL_SUBGROUPS", "\"require_full_subgroups\""},
    {"TANDEM_KERNEL_DISABLE_ROBUSTNESS", "\"disable_robustness\""},
};

void cli_tandem_error(const char *what, tandem_status_t status) {
  const char *msg = tandem_error_message();
  if (!msg || !*msg) {
    cli_error("%s: %s", what, tandem_status_describe(status));
    return;
  }
  char text[2048];
  snprintf(text, sizeof text, "%s", msg);
  /* The source location (" [ERROR_X, kernel.c:130]") is for tandem's
   * developers; TANDEM_CLI_LOCATIONS=1 keeps it. */
  char *at = strrchr(text, '[');
  const char *keep = getenv("TANDEM_CLI_LOCATIONS");
  if (at && at > text && at[-1] == ' ' && !strncmp(at, "[ERROR_", 7) && !(keep && *keep == '1'))
    at[-1] = '\0';
  for (size_t i = 0; i < sizeof api_to_cli / sizeof api_to_cli[0]; i++) {
    char *hit = strstr(text, api_to_cli[i][0]);
    if (!hit) continue;
    char rest[2048];
    snprintf(rest, sizeof rest, "%s", hit + strlen(api_to_cli[i][0]));
    snprintf(hit, sizeof text - (size_t)(hit - text), "%s%s", api_to_cli[i][1], rest);
  }
  cli_error("%s: %s", what, text);
}

int cli_exit_for(tandem_status_t status) {
  switch (status) {
    case TANDEM_OK: return CLI_EXIT_OK;
    case TANDEM_ERROR_NO_DEVICE: return CLI_EXIT_NO_DEVICE;
    case TANDEM_ERROR_INVALID_ARGUMENT:
    case TANDEM_ERROR_OUT_OF_RANGE:
    case TANDEM_ERROR_CONTRACT:
    case TANDEM_ERROR_INVALID_KERNEL:
    case TANDEM_ERROR_IO: return CLI_EXIT_USAGE;
    default: return CLI_EXIT_FAILURE;
  }
}

bool cli_parse_u32(const char *flag, const char *text, uint32_t min, uint32_t max, uint32_t *out) {
  if (!text) {
    cli_error("%s needs a value (see --help)", flag);
    return false;
  }
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || !end || *end || !*text || text[0] == '-' || v < min || v > max) {
    cli_error("%s: '%s' is not a whole number in %u..%u", flag, text, min, max);
    return false;
  }
  *out = (uint32_t)v;
  return true;
}

bool cli_take_value(int argc, char **argv, int *i, const char *name, const char **out) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n) != 0) return false;
  if (argv[*i][n] == '=') { /* --flag=value */
    *out = argv[*i] + n + 1;
    return true;
  }
  if (argv[*i][n] != '\0') return false;
  if (*i + 1 >= argc) {
    *out = NULL;
  } else {
    *out = argv[*i + 1];
    (*i)++;
  }
  return true;
}

bool cli_parse_npu(const char *text, const char **out) {
  if (!text) {
    cli_error("--npu needs a value: emulated, xrt or none");
    return false;
  }
  /* The library's backend names (the runtime option npu_backend). */
  if (!strcmp(text, "emulated")) *out = "emulated";
  else if (!strcmp(text, "xrt")) *out = "xrt";
  else if (!strcmp(text, "none")) *out = NULL;
  else {
    cli_error("--npu: '%s' is not one of emulated, xrt, none", text);
    return false;
  }
  return true;
}

static void cli_validation_message(void *user, tandem_validation_severity_t severity,
                                   const char *message) {
  (void)user;
  cli_error("validation %s: %s", severity == TANDEM_VALIDATION_ERROR ? "error" : "warning",
            message);
}

bool cli_parse_npu_profile(const char *text, tandem_npu_profile_t *out) {
  static const tandem_npu_profile_t all[] = {TANDEM_NPU_PROFILE_AUTO, TANDEM_NPU_PROFILE_PLAIN,
                                             TANDEM_NPU_PROFILE_XDNA};
  for (size_t i = 0; text && i < sizeof all / sizeof all[0]; i++)
    if (!strcmp(text, tandem_npu_profile_name(all[i]))) {
      *out = all[i];
      return true;
    }
  cli_error("--npu-profile: '%s' is not one of auto, plain, xdna", text ? text : "");
  return false;
}

void cli_runtime_options(tandem_runtime_options_t *o, bool validate, cli_npu_choice_t *npu) {
  tandem_runtime_options_init(o);
  o->validation = validate;
  o->validation_callback = cli_validation_message;
  if (npu) {
    o->npu_backend = npu->backend;
    o->npu_library = npu->library; /* NULL: libtandem finds its emulator */
    /* The profile is XRT's (both of the tool's NPU backends are XRT):
     * chained only with an NPU, which alone reads it. */
    tandem_xrt_runtime_options_init(&npu->xrt);
    npu->xrt.profile = npu->profile;
    if (npu->backend) o->next = &npu->xrt;
  }
}

bool cli_gpu_choice(const char *flag_value, uint32_t *out) {
  *out = 0;
  if (flag_value) return cli_parse_u32("--gpu", flag_value, 0, 1024, out);
  const char *env = getenv("TANDEM_GPU");
  if (!env || !*env) return true;
  return cli_parse_u32("TANDEM_GPU (environment)", env, 0, 1024, out);
}

int cli_check_gpu(tandem_runtime_t *rt, uint32_t index) {
  uint32_t count = 0;
  tandem_status_t s = tandem_runtime_gpu_count(rt, &count);
  if (s != TANDEM_OK || count == 0) {
    cli_tandem_error("looking for GPUs", s != TANDEM_OK ? s : TANDEM_ERROR_NO_DEVICE);
    return CLI_EXIT_NO_DEVICE;
  }
  if (index < count) return CLI_EXIT_OK;
  cli_error("GPU %u was asked for (--gpu or TANDEM_GPU), but there %s %u (index 0..%u):", index,
            count == 1 ? "is" : "are", count, count - 1);
  for (uint32_t i = 0; i < count; i++) {
    tandem_device_info_t info;
    tandem_device_info_init(&info);
    if (tandem_runtime_gpu_info(rt, i, &info) == TANDEM_OK)
      fprintf(stderr, "  %u: %s (%s)\n", i, info.name, info.driver_name);
  }
  return CLI_EXIT_USAGE;
}

uint64_t cli_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "<folder of the libtandem.so this process uses>/<rel>" when that file
 * exists, else "". The build tree and an installed tree have one layout
 * (npu/emu/README.md): the emulator beside libtandem.so, its kernels and
 * xclbin in tandem/ there. */
static const char *beside_libtandem(char *buf, size_t size, const char *rel) {
  Dl_info info;
  buf[0] = '\0';
  if (!dladdr((void *)&tandem_runtime_create, &info) || !info.dli_fname) return buf;
  const char *slash = strrchr(info.dli_fname, '/');
  if (!slash) return buf;
  int n = snprintf(buf, size, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, rel);
  if (n < 0 || (size_t)n >= size || access(buf, R_OK) != 0) buf[0] = '\0';
  return buf;
}

const char *cli_emulated_xclbin(void) {
  /* The library's own lookup (TANDEM_EMU_XCLBIN, beside libtandem, the
   * installed folder), so the tool finds what a C program finds. */
  const char *path = tandem_npu_emulated_xclbin();
  return path ? path : "";
}

const char *cli_emulated_library(void) {
  static char path[4096];
  const char *env = getenv("TANDEM_NPU_LIBRARY");
  if (env && *env) return env;
  return beside_libtandem(path, sizeof path, "libtandem_npu_emu.so.0");
}

const char *cli_lane_label(int lane) {
  static const char *const names[TANDEM_MAX_LANE_IDS - TANDEM_MAX_LANES] = {
      "gpu1.upload",   "gpu1.compute", "gpu1.download", "gpu2.upload",  "gpu2.compute",
      "gpu2.download", "gpu3.upload",  "gpu3.compute",  "gpu3.download"};
  _Static_assert(TANDEM_MAX_LANE_IDS - TANDEM_MAX_LANES == 9, "three lanes of GPUs 1..3");
  if (lane >= 0 && lane < TANDEM_LANE_COUNT) return tandem_lane_name((tandem_lane_t)lane);
  if (lane >= TANDEM_LANE_COUNT && lane < TANDEM_MAX_LANES) return "user";
  if (lane >= TANDEM_MAX_LANES && lane < TANDEM_MAX_LANE_IDS) return names[lane - TANDEM_MAX_LANES];
  return "unknown";
}
