/* SPDX-License-Identifier: MIT */
/*
 * replay.c — runs a fuzz target over files without libFuzzer, so the seed
 * corpora and every input that once crashed (fuzz/regressions/<target>/)
 * are replayed by the ordinary suite with the ordinary compiler, sanitizer
 * builds included. Arguments are files or directories (every regular file in
 * them, in name order). Exits non-zero when an argument cannot be read or
 * names no input at all; a target that misbehaves aborts.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "resident.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  uint8_t *data = NULL;
  size_t size = 0, cap = 0, n;
  do {
    if (size == cap) {
      cap = cap ? 2 * cap : 4096;
      uint8_t *grown = realloc(data, cap);
      if (!grown) abort();
      data = grown;
    }
    n = fread(data + size, 1, cap - size, f);
    size += n;
  } while (n > 0);
  fclose(f);
  /* An exact-size copy, so ASan sees reads past the input. */
  uint8_t *exact = malloc(size ? size : 1);
  if (!exact) abort();
  memcpy(exact, data, size);
  free(data);
  LLVMFuzzerTestOneInput(exact, size);
  free(exact);
  return 1;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv) {
  /* As under libFuzzer: LeakSanitizer names the driver's own leaks. */
  fuzz_keep_drivers_resident();
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  int inputs = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (run_file(argv[i]) < 0) return 1;
      inputs++;
      continue;
    }
    struct dirent **names;
    int n = scandir(argv[i], &names, NULL, by_name);
    if (n < 0) {
      perror(argv[i]);
      return 1;
    }
    for (int k = 0; k < n; k++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
      if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && names[k]->d_name[0] != '.') {
        if (run_file(path) < 0) return 1;
        inputs++;
      }
      free(names[k]);
    }
    free(names);
  }
  if (inputs == 0) {
    fprintf(stderr, "replay: no inputs in the arguments\n");
    return 1;
  }
  printf("replay: %d inputs ran\n", inputs);
  return 0;
}
