/* SPDX-License-Identifier: MIT */
/*
 * main.c — the `tandem` command-line tool's entry point: global options
 * (--help, --version) and dispatch to the commands (devices, run). The
 * benchmark lab that was `tandem bench` is its own program, tandem-bench
 * (bench/).
 *
 * Each command lives in its own file and parses its own options; this file
 * only picks one. Exit codes are documented in docs/cli.md and cmdline/cmdline.h.
 */
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
  fputs("usage: tandem <command> [options]\n"
        "       tandem --help | --version\n"
        "\n"
        "Coordinated GPU (Vulkan compute) and NPU (XRT) execution.\n"
        "\n"
        "commands:\n"
        "  devices   list Vulkan devices and the NPU (tandem devices --help)\n"
        "  run       run a pipeline described in JSON (tandem run --help)\n"
        "\n"
        "Benchmarks against raw Vulkan are the separate program tandem-bench (bench/ in\n"
        "the source tree; cmake --install BUILD --component bench installs it).\n"
        "\n"
        "exit status: 0 ok, 1 runtime failure (a failed check or validation message\n"
        "included), 2 usage or pipeline-file error, 77 no usable device, 130 run\n"
        "interrupted (Ctrl-C).\n"
        "An option's value is the next argument or follows '=' (--iterations=3).\n"
        "Documentation: man tandem; cli.md (the tool) and pipeline.md (pipeline files)\n"
        "in share/doc/tandem/docs/ of the install (docs/ in the source tree).\n",
        f);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    usage(stdout);
    return CLI_EXIT_OK;
  }
  if (!strcmp(cmd, "--version")) {
    printf("tandem %s\n", tandem_version()); /* the library it runs with */
    return CLI_EXIT_OK;
  }
  if (!strcmp(cmd, "devices")) return cli_devices_main(argc - 1, argv + 1);
  if (!strcmp(cmd, "run")) return cli_run_main(argc - 1, argv + 1);
  if (!strcmp(cmd, "bench")) {
    cli_error("'tandem bench' is now the separate program tandem-bench, with the same options "
              "(built as bench/tandem-bench; cmake --install BUILD --component bench installs it)");
    return CLI_EXIT_USAGE;
  }
  cli_error("unknown command '%s' (commands: devices, run; see tandem --help)", cmd);
  return CLI_EXIT_USAGE;
}
