/* SPDX-License-Identifier: MIT */
/*
 * fuzz_pipeline.c — libFuzzer target for the `tandem run` pipeline JSON
 * parser (tools/pipeline_parse.c), called as a library: the input becomes
 * the contents of a memfd whose /proc/self/fd path is parsed. A parse must
 * return (true with a model, or false after printing why) with no sanitizer
 * report and nothing leaked once pipeline_free ran. Run with
 * -close_fd_mask=2: the parser explains each rejection on stderr, and
 * libFuzzer keeps its own output and sanitizer reports on a duplicate.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pipeline.h"
#include "resident.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_keep_drivers_resident();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz-pipeline.json", MFD_CLOEXEC);
  if (fd < 0) abort();
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) abort();
    done += (size_t)n;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  pipeline_t p;
  if (pipeline_parse(path, &p)) pipeline_free(&p);
  close(fd);
  return 0;
}
