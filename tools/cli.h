/* SPDX-License-Identifier: MIT */
/*
 * cli.h — what the parts of the `tandem` command-line tool share: the
 * commands' entry points, and (cmdline/cmdline.h) the exit codes, message
 * and option helpers and the runtime set-up every command uses, which the
 * benchmark lab's tandem-bench shares from there.
 *
 * The tool is a user of tandem's public API (include/tandem/) and nothing
 * else but cmdline/ and internal/json_string.h, the tree's one JSON string
 * escaper.
 */
#ifndef TANDEM_TOOLS_CLI_H_
#define TANDEM_TOOLS_CLI_H_

#include "cmdline/cmdline.h"
#include "internal/json_string.h"
#include "tandem/tandem.h"

/* Commands: argv[0] is the command's name. Each returns an exit code. */
int cli_devices_main(int argc, char **argv);
int cli_run_main(int argc, char **argv);

#endif /* TANDEM_TOOLS_CLI_H_ */
