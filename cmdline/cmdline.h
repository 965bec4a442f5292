/* SPDX-License-Identifier: MIT */
/*
 * cmdline.h — what tandem's command-line programs share: the `tandem` tool
 * (tools/) and the benchmark lab's `tandem-bench` (bench/). Exit codes,
 * messages on stderr in the program's name, option value parsing, the
 * runtime set-up (validation messages, NPU choice, GPU choice), the clock,
 * lane names and where the emulated NPU's files are. The names keep the
 * prefix cli_ (command-line interface).
 *
 * It stands below both programs so that neither reaches into the other's
 * private files: a user of tandem's public API (include/tandem/) and
 * nothing else. Built as the static library tandem_cmdline (users write
 * "cmdline/cmdline.h").
 */
#ifndef TANDEM_CMDLINE_CMDLINE_H_
#define TANDEM_CMDLINE_CMDLINE_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tandem/tandem.h"
#include "tandem/tandem_xrt.h" /* the NPU profile: an XRT runtime option */

/* Exit codes (docs/cli.md). */
enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_FAILURE = 1, /* runtime failure, failed check, validation message */
  CLI_EXIT_USAGE = 2,   /* bad command line or pipeline file */
  CLI_EXIT_NO_DEVICE = 77,
  CLI_EXIT_INTERRUPTED = 130, /* Ctrl-C (SIGINT) or SIGTERM: 128 + SIGINT */
};

/* The program messages name: "tandem" unless a program sets it (tandem-bench). */
extern const char *cli_program_name;
/* "<cli_program_name>: <fmt>\n" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A tandem failure: "tandem: <what>: <tandem_error_message()>", in the tool's
 * terms: C API option names become flags and pipeline fields, and the source
 * location is left out (TANDEM_CLI_LOCATIONS=1 keeps it). */
void cli_tandem_error(const char *what, tandem_status_t status);
/* Exit code for a failed tandem call during set-up of user-described objects:
 * NO_DEVICE → 77, an argument/contract/kernel/IO problem → 2, else 1. */
int cli_exit_for(tandem_status_t status);

/* Parses an unsigned decimal for option |flag|; false (and a message) when
 * missing, malformed or outside min..max. */
bool cli_parse_u32(const char *flag, const char *text, uint32_t min, uint32_t max, uint32_t *out);
/* argv[i] is |name| with a value: "--flag=value" (stores what follows '=',
 * possibly ""), or "--flag" and the next argument (stores it and advances
 * *i; NULL when none follows). False when argv[i] is another option. */
bool cli_take_value(int argc, char **argv, int *i, const char *name, const char **out);

/* The NPU choice of --npu / --npu-library / --npu-profile. */
typedef struct cli_npu_choice {
  const char *backend;          /* the runtime option npu_backend: NULL (none), "xrt", "emulated" */
  const char *library;          /* NULL: tandem's default (or the build tree's emulator) */
  tandem_npu_profile_t profile; /* AUTO unless --npu-profile */
  bool profile_given;           /* --npu-profile was on the command line */
  /* The runtime options' XRT extension (the profile), chained by
   * cli_runtime_options: lives as long as the choice. */
  tandem_xrt_runtime_options_t xrt;
} cli_npu_choice_t;
/* Parses "--npu emulated|xrt|none" values into a backend name (NULL: none). */
bool cli_parse_npu(const char *text, const char **out);
/* Parses "--npu-profile auto|plain|xdna" values. */
bool cli_parse_npu_profile(const char *text, tandem_npu_profile_t *out);

/* Runtime options common to the commands: validation (messages printed to
 * stderr as "tandem: validation <severity>: ..."), NPU choice. */
void cli_runtime_options(tandem_runtime_options_t *o, bool validate, cli_npu_choice_t *npu);

/* The GPU a command uses: --gpu's value when given (|flag_value| non-NULL),
 * else the environment variable TANDEM_GPU, else 0. False (and a message
 * naming --gpu or TANDEM_GPU) when malformed. */
bool cli_gpu_choice(const char *flag_value, uint32_t *out);
/* OK when |index| names one of the devices |rt| sees; otherwise a message
 * listing them and CLI_EXIT_USAGE (CLI_EXIT_NO_DEVICE when there is none). */
int cli_check_gpu(tandem_runtime_t *rt, uint32_t index);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t cli_now_ns(void);
/* A lane id's name: "compute" for GPU 0's and the NPU's, "user" for user
 * lanes, "gpu1.compute" for another GPU's (tandem_gpu_lane). Static strings. */
const char *cli_lane_label(int lane);

/* The emulated NPU's xclbin ("@emulated" in pipeline files: what
 * tandem_npu_emulated_xclbin() finds) and library (beside the libtandem.so in
 * use); "" when not there. The environment variables TANDEM_EMU_XCLBIN and
 * TANDEM_NPU_LIBRARY override. */
const char *cli_emulated_xclbin(void);
const char *cli_emulated_library(void);

#endif /* TANDEM_CMDLINE_CMDLINE_H_ */
