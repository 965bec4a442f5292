/* SPDX-License-Identifier: MIT */
/*
 * page_faults.c — what the first touch of fresh memory costs on this machine.
 *
 * The floor under prepare's per-node memory cost (bench/NOTES.md, "prepare:
 * 100 000 nodes and fresh memory"): maps an anonymous region of the given
 * size, writes one byte per 4 KiB page (each write a minor page fault),
 * writes them all again (no faults: the cost of the same walk over memory
 * already mapped), and unmaps it; four rounds. Prints µs per fault and the
 * unmap's cost. No tandem: the figure belongs to the machine (kernel,
 * hypervisor), and a graph's prepare pays it per page of fresh memory it
 * touches.
 *
 *   build/bench/tandem_bench_faults [MiB]      (default 256)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define BENCH_NAME "page_faults"
#include "bench_common.h"

static double now_us(void) { return (double)now_ns() / 1e3; }

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
  if (mib == 0 || mib > 65536) {
    fprintf(stderr, "page_faults: size must be 1 to 65536 MiB, got '%s'\n", argv[1]);
    return 2;
  }
  size_t bytes = mib << 20, page = 4096;
  for (int round = 0; round < 4; round++) {
    volatile char *p =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      perror("page_faults: mmap");
      return 1;
    }
    long f0 = minor_faults();
    double t0 = now_us();
    for (size_t i = 0; i < bytes; i += page) p[i] = 1;
    double first = now_us() - t0;
    long faults = minor_faults() - f0;
    t0 = now_us();
    for (size_t i = 0; i < bytes; i += page) p[i] = 2;
    double again = now_us() - t0;
    t0 = now_us();
    munmap((void *)p, bytes);
    double unmap = now_us() - t0;
    printf("%zu MiB: first touch %.0f us, %ld faults, %.3f us per fault; touched again %.0f us "
           "(%.3f us per page); munmap %.0f us (%.3f us per page)\n",
           mib, first, faults, faults ? first / (double)faults : 0.0, again,
           again / (double)(bytes / page), unmap, unmap / (double)(bytes / page));
  }
  return 0;
}
