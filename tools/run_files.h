/* SPDX-License-Identifier: MIT */
/*
 * run_files.h — what `tandem run` checks and decides about files before it
 * touches a device (run_files.c): that the pipeline path is a file, where
 * each output goes (under --output-dir) and that every file the run will
 * write can be written; and how it stops early on Ctrl-C (SIGINT/SIGTERM):
 * the runs already submitted finish, then the summary, trace and outputs are
 * written as for a complete run.
 */
#ifndef TANDEM_TOOLS_RUN_FILES_H_
#define TANDEM_TOOLS_RUN_FILES_H_

#include <stdbool.h>
#include <stdint.h>

#include "pipeline.h"

/* CLI_EXIT_OK when |path| can be a pipeline file; otherwise a message (a
 * folder: which .json files it holds) and CLI_EXIT_USAGE. A missing file is
 * left to the parser, which says so. */
int run_check_pipeline_path(const char *path);

/* Decides the output paths (|dir|/file; |dir| NULL: the current folder),
 * makes the folders they need and checks that they, --trace and --svg (each
 * NULL when not given) can be written. On success *out_paths holds
 * p->output_count malloc'ed paths (run_free_paths). Returns an exit code;
 * on failure a message naming the option or field, and nothing ran. */
int run_prepare_outputs(const pipeline_t *p, const char *dir, const char *trace_path,
                        const char *svg_path, char ***out_paths);
void run_free_paths(char **paths, uint32_t count);

/* Writes an output: a .npy array of |type| when |path| ends in ".npy", else
 * the raw bytes. False with errno set on failure. */
bool run_write_output(const char *path, const uint8_t *data, uint64_t bytes, pl_type_t type);

/* The expected bytes of check |index|'s file: exactly |len| bytes of a raw
 * file, or a .npy array's data. |type| is the check's; when it is bytes and
 * the array has one of the pipeline's types, it becomes that type (a type
 * that contradicts the array's is an error). *out is malloc'ed. False with a
 * message naming the check. */
bool run_read_expected(const pipeline_t *p, uint32_t index, const char *path, uint64_t len,
                       uint8_t **out, pl_type_t *type);

/* The text of kernel |index|'s GLSL file (malloc'ed, NUL-terminated); NULL
 * with a message naming kernels[index].glsl. */
char *run_read_text(const pipeline_t *p, uint32_t index, const char *path);

/* `--input NAME=@FILE | NAME=VALUE` and `--output NAME=@FILE`
 * (run_overrides.c): change buffer NAME's initial contents, or where its
 * whole contents are written, in the parsed pipeline only. False with a
 * message naming the option (and the pipeline's buffers) otherwise. */
bool run_apply_input(pipeline_t *p, const char *arg);
bool run_apply_output(pipeline_t *p, const char *arg);

/* Signals within this many milliseconds of the first are the same request. */
#define RUN_INTERRUPT_REPEAT_MS 1000

/* From now on SIGINT and SIGTERM set a flag instead of ending the process;
 * more within RUN_INTERRUPT_REPEAT_MS of the first are ignored (the same
 * request, e.g. `timeout` signalling the child and then its group); one
 * after that ends the process (the default action). Call it before any other
 * thread starts: it blocks the signals in the calling thread, every thread
 * created later inherits that, and a thread of its own takes them. */
void run_catch_interrupt(void);
/* Whether one arrived. */
bool run_interrupted(void);
/* When the first arrived (CLOCK_MONOTONIC, ns, as cli_now_ns), 0 if none. */
uint64_t run_interrupted_at_ns(void);

#endif /* TANDEM_TOOLS_RUN_FILES_H_ */
