/* SPDX-License-Identifier: MIT */
/*
 * pipeline_run.c — `tandem run PIPELINE.json`: builds the pipeline's buffers,
 * kernels, NPU programs and graph through the public API, prepares it once,
 * submits it `iterations` times (keeping graph_slots submissions in flight),
 * then writes outputs, runs the checks and prints a summary (run_report.c,
 * text or --json): per-lane busy time from GPU timestamps (the trace),
 * throughput (after --warmup untimed runs), copied bytes, cache maintenance
 * bytes and validation messages. --trace and --svg write the Perfetto JSON
 * and the lane timeline picture.
 *
 * Host data enters and leaves only through maps of host-visible buffers; a
 * GPU_LOCAL buffer with initial data or an output is staged through a
 * HOST_VISIBLE buffer and a copy graph, like any tandem user would do it.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pipeline.h"
#include "run_files.h"
#include "run_report.h"

#define RUN_SLOTS 4

typedef struct run_opts {
  const char *pipeline;
  const char *trace_path;
  const char *svg_path;
  const char *output_dir; /* NULL: the current folder */
  bool validate;
  uint32_t iterations; /* 0: the file's */
  uint32_t warmup;     /* untimed runs first */
  const char *gpu;     /* --gpu's value, NULL: TANDEM_GPU or 0 */
  cli_npu_choice_t npu;
  bool quiet;
  bool json; /* the summary as JSON on stdout */
  /* --input / --output values in command-line order (argv entries) */
  const char *overrides[64];
  bool override_is_output[64];
  uint32_t override_count;
} run_opts_t;

static void usage(FILE *f) {
  fputs(
      "usage: tandem run PIPELINE.json [options]\n"
      "\n"
      "Runs the pipeline the file describes (man tandem-pipeline): makes its buffers,\n"
      "kernels and NPU programs, records and prepares its graph, submits it\n"
      "`iterations` times, writes its outputs, runs its checks and prints a summary.\n"
      "An option's value is the next argument or follows '=' (--iterations=3).\n"
      "\n"
      "  --iterations N     override the file's iteration count\n"
      "  --warmup N         run N untimed iterations first (default 0): the timed ones\n"
      "                     then leave out first-use costs; the data sees all of them\n"
      "  --gpu N            the Vulkan device (tandem devices lists them; default:\n"
      "                     the environment variable TANDEM_GPU, else 0)\n"
      "  --json             print the summary as one JSON object (docs/cli.md)\n"
      "  --trace PATH       write the run as Chrome/Perfetto trace JSON\n"
      "  --svg PATH         write a lane timeline picture (SVG)\n"
      "  --output-dir DIR   write the pipeline's outputs under DIR (made if missing;\n"
      "                     default: the current folder)\n"
      "  --validate         Vulkan validation layer (with synchronization validation)\n"
      "                     on; any validation message makes the exit status 1\n"
      "  --npu KIND         'emulated' (tandem's CPU test NPU) or 'xrt'; needed when\n"
      "                     the pipeline has NPU programs\n"
      "  --npu-library PATH the emulated NPU's library\n"
      "  --npu-profile P    auto, plain or xdna (default: the file's npu.profile, else auto: from the device)\n"
      "  --quiet            print only failures\n"
      "  --input NAME=@FILE buffer NAME starts with FILE (.npy or raw bytes) instead\n"
      "                     of the file's init; NAME=VALUE fills it (1.5 is f32, 7 is\n"
      "                     u32; f32:X, u32:N, i32:N say it); the pipeline file is\n"
      "                     left as it is\n"
      "  --output NAME=@FILE write the whole of buffer NAME to FILE (.npy or raw),\n"
      "                     in place of the pipeline's outputs of NAME\n"
      "\n"
      "Relative paths inside the file are relative to the file's folder; outputs\n"
      "are relative to the output folder. Every file the run writes is checked\n"
      "before the device is touched. Ctrl-C stops after the runs already submitted\n"
      "(within 100 ms during allocation and prepare) and still writes the summary,\n"
      "trace and outputs (exit status 130); more signals within a second of the\n"
      "first are the same request, a later one ends the process at once.\n"
      "exit status: 0 ok, 1 runtime failure / failed check / validation message,\n"
      "2 usage or pipeline-file error, 77 no usable device, 130 interrupted.\n",
      f);
}

typedef struct run_state {
  const pipeline_t *p;
  tandem_runtime_t *rt;
  tandem_buffer_t **buffers;
  tandem_kernel_t **kernels;
  tandem_npu_program_t **programs;
  tandem_exec_t *exec;
  tandem_trace_t *trace;
  char **output_paths; /* where each output goes (run_prepare_outputs) */
  uint32_t submitted;  /* runs the last submit_all submitted (and waited for) */
} run_state_t;

/* Submits |g| once and waits. */
static tandem_status_t run_once(tandem_graph_t *g) {
  tandem_exec_t *e = NULL;
  tandem_completion_t *c = NULL;
  tandem_status_t s = tandem_graph_prepare(g, &e);
  if (s == TANDEM_OK) s = tandem_exec_submit(e, &c);
  if (s == TANDEM_OK) s = tandem_completion_wait(c);
  tandem_completion_release(c);
  tandem_exec_release(e);
  return s;
}

/* Host → view: map it if the placement allows, else stage. */
static tandem_status_t host_write(run_state_t *st, tandem_view_t view, const uint8_t *data) {
  tandem_map_t m;
  tandem_status_t s = tandem_map_write(view, &m);
  if (s == TANDEM_OK) {
    memcpy(m.data, data, view.length);
    tandem_unmap(&m);
    return TANDEM_OK;
  }
  if (s != TANDEM_ERROR_UNSUPPORTED) return s;
  tandem_buffer_t *stage = NULL;
  tandem_graph_t *g = NULL;
  s = tandem_buffer_create_on(st->rt, tandem_buffer_gpu(view.buffer), view.length,
                              TANDEM_PLACEMENT_HOST_VISIBLE, &stage);
  if (s == TANDEM_OK) s = tandem_map_write(tandem_buffer_whole(stage), &m);
  if (s == TANDEM_OK) {
    memcpy(m.data, data, view.length);
    tandem_unmap(&m);
    s = tandem_graph_create(st->rt, &g);
  }
  if (s == TANDEM_OK)
    s = tandem_graph_add_copy(g, tandem_buffer_whole(stage), view, TANDEM_LANE_AUTO);
  if (s == TANDEM_OK) s = run_once(g);
  tandem_graph_release(g);
  tandem_buffer_release(stage);
  return s;
}

/* View → host (malloc'ed). */
static tandem_status_t host_read(run_state_t *st, tandem_view_t view, uint8_t **out) {
  *out = malloc(view.length);
  if (!*out) return TANDEM_ERROR_OUT_OF_MEMORY;
  tandem_map_t m;
  tandem_status_t s = tandem_map_read(view, &m);
  if (s == TANDEM_OK) {
    memcpy(*out, m.data, view.length);
    tandem_unmap(&m);
    return TANDEM_OK;
  }
  if (s == TANDEM_ERROR_UNSUPPORTED) {
    tandem_buffer_t *stage = NULL;
    tandem_graph_t *g = NULL;
    s = tandem_buffer_create_on(st->rt, tandem_buffer_gpu(view.buffer), view.length,
                                TANDEM_PLACEMENT_HOST_VISIBLE, &stage);
    if (s == TANDEM_OK) s = tandem_graph_create(st->rt, &g);
    if (s == TANDEM_OK)
      s = tandem_graph_add_copy(g, view, tandem_buffer_whole(stage), TANDEM_LANE_AUTO);
    if (s == TANDEM_OK) s = run_once(g);
    if (s == TANDEM_OK) s = tandem_map_read(tandem_buffer_whole(stage), &m);
    if (s == TANDEM_OK) {
      memcpy(*out, m.data, view.length);
      tandem_unmap(&m);
    }
    tandem_graph_release(g);
    tandem_buffer_release(stage);
  }
  if (s != TANDEM_OK) {
    free(*out);
    *out = NULL;
  }
  return s;
}

static tandem_view_t to_view(const run_state_t *st, const pl_view_t *v) {
  return (tandem_view_t){st->buffers[v->buffer], v->offset, v->length};
}

/* Makes every object and the graph. Returns an exit code. */
static int build(run_state_t *st, const run_opts_t *o) {
  const pipeline_t *p = st->p;
  tandem_status_t s;
  char what[256];
  st->buffers = calloc(p->buffer_count, sizeof *st->buffers);
  st->kernels = calloc(p->kernel_count + 1, sizeof *st->kernels);
  st->programs = calloc(p->program_count + 1, sizeof *st->programs);
  if (!st->buffers || !st->kernels || !st->programs) {
    cli_error("out of memory");
    return CLI_EXIT_FAILURE;
  }
  if (p->program_count) {
    if (o->npu.backend == NULL) {
      cli_error("%s: npu_programs: the pipeline needs an NPU: run with --npu emulated (tandem's "
                "CPU test device) or --npu xrt",
                p->file);
      return CLI_EXIT_USAGE;
    }
    s = tandem_runtime_open_npu(st->rt);
    if (s != TANDEM_OK) {
      cli_tandem_error("opening the NPU", s);
      return s == TANDEM_ERROR_NO_DEVICE ? CLI_EXIT_NO_DEVICE : CLI_EXIT_FAILURE;
    }
  }
  /* Ctrl-C is looked at between objects (build_interruptible). */
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    if (run_interrupted()) return CLI_EXIT_INTERRUPTED;
    const pl_buffer_t *b = &p->buffers[i];
    s = tandem_buffer_create_on(st->rt, b->gpu, b->size, b->placement, &st->buffers[i]);
    if (s != TANDEM_OK) {
      snprintf(what, sizeof what, "%s: buffers[%u] '%s' (%llu bytes, %s)", p->file, i, b->name,
               (unsigned long long)b->size, tandem_placement_name(b->placement));
      cli_tandem_error(what, s);
      return s == TANDEM_ERROR_UNSUPPORTED ? CLI_EXIT_USAGE : cli_exit_for(s);
    }
    if (b->init == PL_INIT_ZERO) continue;
    uint8_t *data = malloc(b->size);
    if (!data) {
      cli_error("out of memory for buffers[%u] '%s'", i, b->name);
      return CLI_EXIT_FAILURE;
    }
    if (!pipeline_init_bytes(p, i, data)) {
      free(data);
      return CLI_EXIT_USAGE;
    }
    s = host_write(st, tandem_buffer_whole(st->buffers[i]), data);
    free(data);
    if (s != TANDEM_OK) {
      snprintf(what, sizeof what, "%s: buffers[%u].init: writing '%s'", p->file, i, b->name);
      cli_tandem_error(what, s);
      return CLI_EXIT_FAILURE;
    }
  }
  for (uint32_t i = 0; i < p->kernel_count; i++) {
    if (run_interrupted()) return CLI_EXIT_INTERRUPTED;
    const pl_kernel_t *k = &p->kernels[i];
    tandem_kernel_desc_t d = {.struct_size = sizeof(tandem_kernel_desc_t),
                              .name = k->name,
                              .spirv_path = k->spirv_path,
                              .entry_point = k->entry,
                              .workgroups = {k->workgroups[0], k->workgroups[1], k->workgroups[2]},
                              .bindings = k->bindings,
                              .binding_count = k->binding_count,
                              .push_constant_bytes = k->push_constant_bytes,
                              .spec_constants = k->spec_constants,
                              .spec_constant_count = k->spec_constant_count,
                              .local_size = {k->local_size[0], k->local_size[1], k->local_size[2]},
                              .required_subgroup_size = k->required_subgroup_size,
                              .flags = k->flags,
                              .aliased_bindings = k->aliased_bindings,
                              .gpu = k->gpu};
    if (k->builtin) pipeline_builtin_spirv(k->builtin, &d.spirv, &d.spirv_size);
    char *glsl = NULL; /* "glsl": the source, compiled by tandem_kernel_create */
    if (k->glsl_path && !(glsl = run_read_text(p, i, k->glsl_path))) return CLI_EXIT_USAGE;
    d.glsl_source = glsl;
    s = tandem_kernel_create(st->rt, &d, &st->kernels[i]);
    free(glsl);
    if (s != TANDEM_OK) {
      snprintf(what, sizeof what, "%s: kernels[%u] '%s'", p->file, i, k->name);
      cli_tandem_error(what, s);
      return cli_exit_for(s);
    }
  }
  for (uint32_t i = 0; i < p->program_count; i++) {
    if (run_interrupted()) return CLI_EXIT_INTERRUPTED;
    const pl_program_t *g = &p->programs[i];
    if (g->emulated_xclbin && !g->xclbin_path[0]) {
      cli_error("%s: npu_programs[%u].xclbin: \"@emulated\": the emulated NPU's xclbin is not "
                "beside libtandem.so (tandem/tandem_emu_kernels.xclbin); set TANDEM_EMU_XCLBIN "
                "to its path",
                p->file, i);
      return CLI_EXIT_USAGE;
    }
    /* The instruction stream: a file of little-endian 32-bit words. */
    void *instr = NULL;
    size_t instr_bytes = 0;
    if (g->instructions_path) {
      FILE *f = fopen(g->instructions_path, "rb");
      long len = -1;
      if (f && fseek(f, 0, SEEK_END) == 0) len = ftell(f);
      if (f && len > 0 && len <= (64l << 20) && fseek(f, 0, SEEK_SET) == 0 &&
          (instr = malloc((size_t)len)) && fread(instr, 1, (size_t)len, f) == (size_t)len)
        instr_bytes = (size_t)len;
      if (f) fclose(f);
      if (!instr_bytes) {
        free(instr);
        cli_error("%s: npu_programs[%u] '%s': cannot read the instruction stream '%s' (%s)",
                  p->file, i, g->name, g->instructions_path,
                  len == 0            ? "empty"
                  : len > (64l << 20) ? "over 64 MiB"
                                      : strerror(errno));
        return CLI_EXIT_USAGE;
      }
    }
    /* "abi" and "instructions" are XRT's words: its extension, chained
     * only when the file uses them. */
    tandem_xrt_program_desc_t xrt;
    tandem_xrt_program_desc_init(&xrt);
    xrt.abi = g->abi;
    xrt.instructions = instr;
    xrt.instruction_bytes = instr_bytes;
    tandem_npu_program_desc_t d = {.struct_size = sizeof(tandem_npu_program_desc_t),
                                   .next = g->abi != TANDEM_NPU_ABI_PLAIN || instr ? &xrt : NULL,
                                   .name = g->name,
                                   .program_path = g->xclbin_path,
                                   .kernel_name = g->kernel,
                                   .bindings = g->bindings,
                                   .binding_count = g->binding_count,
                                   .scalar_count = g->scalar_count,
                                   .scalar_types = g->scalar_types};
    s = tandem_npu_program_create(st->rt, &d, &st->programs[i]);
    free(instr); /* the program copied it */
    if (s != TANDEM_OK) {
      snprintf(what, sizeof what, "%s: npu_programs[%u] '%s'", p->file, i, g->name);
      cli_tandem_error(what, s);
      return cli_exit_for(s);
    }
  }
  tandem_graph_t *graph = NULL;
  s = tandem_graph_create(st->rt, &graph);
  for (uint32_t i = 0; i < p->node_count && s == TANDEM_OK; i++) {
    const pl_node_t *n = &p->nodes[i];
    tandem_view_t v[TANDEM_MAX_BINDINGS];
    for (uint32_t k = 0; k < n->view_count; k++) v[k] = to_view(st, &n->views[k]);
    switch (n->op) {
      case PL_OP_FILL: s = tandem_graph_add_fill(graph, v[0], n->fill, n->lane); break;
      case PL_OP_COPY: s = tandem_graph_add_copy(graph, v[0], v[1], n->lane); break;
      case PL_OP_DISPATCH: {
        tandem_dispatch_desc_t dd = {.struct_size = sizeof(tandem_dispatch_desc_t),
                                     .kernel = st->kernels[n->target],
                                     .views = v,
                                     .view_count = n->view_count,
                                     .push_constants = n->push_bytes ? n->push : NULL,
                                     .push_constant_bytes = n->push_bytes,
                                     .workgroups = {n->workgroups[0], n->workgroups[1],
                                                    n->workgroups[2]}};
        s = tandem_graph_add_dispatch_node(graph, &dd, NULL);
        break;
      }
      case PL_OP_NPU_RUN:
        s = tandem_graph_add_npu_run(graph, st->programs[n->target], v, n->view_count,
                                     n->scalar_count ? n->scalars : NULL, n->scalar_count);
        break;
    }
    if (s != TANDEM_OK) {
      snprintf(what, sizeof what, "%s: nodes[%u]", p->file, i);
      cli_tandem_error(what, s);
      tandem_graph_release(graph);
      return cli_exit_for(s);
    }
  }
  if (s == TANDEM_OK && run_interrupted()) {
    tandem_graph_release(graph);
    return CLI_EXIT_INTERRUPTED;
  }
  if (s == TANDEM_OK) s = tandem_graph_prepare(graph, &st->exec);
  tandem_graph_release(graph);
  if (s != TANDEM_OK) {
    cli_tandem_error("preparing the graph", s);
    return s == TANDEM_ERROR_NO_DEVICE ? CLI_EXIT_NO_DEVICE : CLI_EXIT_FAILURE;
  }
  return CLI_EXIT_OK;
}

/* build() on a worker thread, so that Ctrl-C during allocation and prepare
 * (seconds on a large pipeline, inside single library calls) is answered
 * within RUN_STOP_MS: the worker stops at its next object when it can; when
 * it is still inside a call RUN_ABANDON_MS after the signal, *abandoned is
 * set and the caller reports the run and ends the process without waiting. */
#define RUN_ABANDON_MS 40
#define RUN_STOP_MS 100

typedef struct build_job {
  run_state_t *st;
  const run_opts_t *o;
  int rc;
  atomic_bool done;
} build_job_t;

static void *build_thread(void *arg) {
  build_job_t *job = arg;
  job->rc = build(job->st, job->o);
  atomic_store(&job->done, true);
  return NULL;
}

static int build_interruptible(run_state_t *st, const run_opts_t *o, bool *abandoned) {
  *abandoned = false;
  /* On the heap: an abandoned worker still writes its result when its call
   * returns, after this frame is gone (the process ends in abandon()). */
  build_job_t *job = malloc(sizeof *job);
  if (!job) return build(st, o);
  *job = (build_job_t){.st = st, .o = o};
  atomic_init(&job->done, false);
  /* Not to the worker: it may be inside a library call for seconds. (The
   * signal thread of run_catch_interrupt takes them; this only matters when
   * that thread could not start and the handler runs where the kernel
   * delivers. This thread looks at the flag every 2 ms.) */
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  pthread_t worker;
  int err = pthread_create(&worker, NULL, build_thread, job);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) { /* no thread: between objects only */
    free(job);
    return build(st, o);
  }
  while (!atomic_load(&job->done)) {
    if (run_interrupted() &&
        cli_now_ns() - run_interrupted_at_ns() >= RUN_ABANDON_MS * 1000000ull) {
      pthread_detach(worker);
      *abandoned = true;
      return CLI_EXIT_INTERRUPTED;
    }
    struct timespec nap = {0, 2000000}; /* 2 ms */
    nanosleep(&nap, NULL);
  }
  pthread_join(worker, NULL);
  int rc = job->rc;
  free(job);
  return rc;
}

/* Submits |iterations| runs with up to RUN_SLOTS in flight. */
static int submit_all(run_state_t *st, uint32_t iterations, uint64_t *wall_ns) {
  tandem_completion_t *ring[RUN_SLOTS] = {0};
  uint32_t head = 0, live = 0;
  tandem_status_t s = TANDEM_OK;
  uint64_t t0 = cli_now_ns();
  uint32_t tick = (iterations >= 20 && isatty(2)) ? iterations / 10 : 0;
  st->submitted = 0;
  for (uint32_t it = 0; it < iterations && s == TANDEM_OK && !run_interrupted(); it++) {
    for (;;) {
      if (live == RUN_SLOTS) {
        tandem_completion_t *c = ring[head];
        ring[head] = NULL;
        head = (head + 1) % RUN_SLOTS;
        live--;
        s = tandem_completion_wait(c);
        tandem_completion_release(c);
        if (s != TANDEM_OK) break;
      }
      tandem_completion_t *c = NULL;
      s = tandem_exec_submit(st->exec, &c);
      if (s == TANDEM_ERROR_BUSY && live > 0) {
        /* a fixed capacity is in use: retire the oldest and retry */
        tandem_completion_t *old = ring[head];
        ring[head] = NULL;
        head = (head + 1) % RUN_SLOTS;
        live--;
        s = tandem_completion_wait(old);
        tandem_completion_release(old);
        if (s != TANDEM_OK) break;
        continue;
      }
      if (s == TANDEM_OK) {
        ring[(head + live) % RUN_SLOTS] = c;
        live++;
        st->submitted++;
      }
      break;
    }
    if (tick && (it + 1) % tick == 0 && s == TANDEM_OK)
      fprintf(stderr, "\rtandem: %u/%u iterations submitted", it + 1, iterations);
  }
  if (tick) fputc('\n', stderr);
  tandem_status_t first = s;
  while (live) {
    tandem_completion_t *c = ring[head];
    head = (head + 1) % RUN_SLOTS;
    live--;
    tandem_status_t w = tandem_completion_wait(c);
    tandem_completion_release(c);
    if (first == TANDEM_OK) first = w;
  }
  *wall_ns = cli_now_ns() - t0;
  if (first != TANDEM_OK) {
    cli_tandem_error("running the graph", first);
    return CLI_EXIT_FAILURE;
  }
  return CLI_EXIT_OK;
}

static const char *type_label(pl_type_t t) {
  switch (t) {
    case PL_TYPE_F32: return "f32";
    case PL_TYPE_U32: return "u32";
    case PL_TYPE_I32: return "i32";
    case PL_TYPE_I8: return "i8";
    default: return "byte";
  }
}

/* Compares |got| with |want| as the check's type. */
static bool compare(const pipeline_t *p, uint32_t index, const pl_check_t *k, const uint8_t *got,
                    const uint8_t *want, uint64_t len, const char *against) {
  const char *name = p->buffers[k->view.buffer].name;
  uint64_t bad = 0, first = UINT64_MAX;
  double worst = 0;
  if (k->type == PL_TYPE_F32) {
    for (uint64_t i = 0; i < len / 4; i++) {
      float g, w;
      memcpy(&g, got + i * 4, 4);
      memcpy(&w, want + i * 4, 4);
      double err = fabs((double)g - (double)w);
      double allowed = k->tolerance + k->rel_tolerance * fabs((double)w);
      if (!(err <= allowed) && !(isnan(g) && isnan(w))) {
        if (first == UINT64_MAX) first = i;
        bad++;
      }
      if (err > worst) worst = err;
    }
    if (bad) {
      float g, w;
      memcpy(&g, got + first * 4, 4);
      memcpy(&w, want + first * 4, 4);
      cli_error("%s: checks[%u]: '%s' differs from %s in %llu of %llu f32 elements; first at "
                "element %llu: %.9g, expected %.9g (tolerance %g + %g*|expected|)",
                p->file, index, name, against, (unsigned long long)bad,
                (unsigned long long)(len / 4), (unsigned long long)first, g, w, k->tolerance,
                k->rel_tolerance);
      return false;
    }
    return true;
  }
  size_t es = (k->type == PL_TYPE_BYTES || k->type == PL_TYPE_I8) ? 1 : 4;
  for (uint64_t i = 0; i + es <= len; i += es)
    if (memcmp(got + i, want + i, es) != 0) {
      if (first == UINT64_MAX) first = i / es;
      bad++;
    }
  if (bad) {
    int64_t g = 0, w = 0;
    uint64_t at = first * es;
    if (k->type == PL_TYPE_I32) {
      int32_t a, b;
      memcpy(&a, got + at, 4), memcpy(&b, want + at, 4);
      g = a, w = b;
    } else if (k->type == PL_TYPE_U32) {
      uint32_t a, b;
      memcpy(&a, got + at, 4), memcpy(&b, want + at, 4);
      g = a, w = b;
    } else if (k->type == PL_TYPE_I8) {
      g = (int8_t)got[at], w = (int8_t)want[at];
    } else {
      g = got[at], w = want[at];
    }
    cli_error("%s: checks[%u]: '%s' differs from %s in %llu %s elements; first at element "
              "%llu: %lld, expected %lld",
              p->file, index, name, against, (unsigned long long)bad, type_label(k->type),
              (unsigned long long)first, (long long)g, (long long)w);
    return false;
  }
  return true;
}

/* Outputs and (with |checks|) checks. Returns an exit code. */
static int finish(run_state_t *st, uint32_t iterations, uint32_t *passed, bool checks) {
  const pipeline_t *p = st->p;
  int rc = CLI_EXIT_OK;
  for (uint32_t i = 0; i < p->output_count; i++) {
    const pl_output_t *o = &p->outputs[i];
    uint8_t *data;
    tandem_status_t s = host_read(st, to_view(st, &o->view), &data);
    if (s != TANDEM_OK) {
      cli_tandem_error("reading an output", s);
      return CLI_EXIT_FAILURE;
    }
    bool ok = run_write_output(st->output_paths[i], data, o->view.length, o->type);
    free(data);
    if (!ok) {
      cli_error("%s: outputs[%u]: cannot write '%s': %s", p->file, i, st->output_paths[i],
                strerror(errno));
      return CLI_EXIT_FAILURE;
    }
  }
  uint8_t **ref = NULL;
  for (uint32_t i = 0; checks && i < p->check_count; i++) {
    const pl_check_t *k = &p->checks[i];
    uint8_t *got;
    tandem_status_t s = host_read(st, to_view(st, &k->view), &got);
    if (s != TANDEM_OK) {
      cli_tandem_error("reading a checked buffer", s);
      rc = CLI_EXIT_FAILURE;
      continue;
    }
    bool ok = true;
    uint64_t len = k->view.length;
    if (k->kind == PL_CHECK_SHA256 || k->kind == PL_CHECK_FNV1A64) {
      char hex[65];
      if (k->kind == PL_CHECK_SHA256) cli_sha256_hex(got, len, hex);
      else cli_fnv1a64_hex(got, len, hex);
      if (strcmp(hex, k->digest) != 0) {
        cli_error("%s: checks[%u]: '%s' has %s %s, expected %s", p->file, i,
                  p->buffers[k->view.buffer].name,
                  k->kind == PL_CHECK_SHA256 ? "sha256" : "fnv1a64", hex, k->digest);
        ok = false;
      }
    } else if (k->kind == PL_CHECK_FILE) { /* raw bytes or .npy (run_files.c) */
      pl_check_t typed = *k;
      uint8_t *want = NULL;
      ok = run_read_expected(p, i, k->path, len, &want, &typed.type) &&
           compare(p, i, &typed, got, want, len, k->path);
      free(want);
    } else {
      if (!ref && !pipeline_cpu_reference(p, iterations, &ref)) {
        cli_error("%s: checks[%u]: the CPU reference could not be computed", p->file, i);
        ok = false;
      } else {
        ok = compare(p, i, k, got, ref[k->view.buffer] + k->view.offset, len, "the CPU reference");
      }
    }
    free(got);
    if (ok) (*passed)++;
    else rc = CLI_EXIT_FAILURE;
  }
  if (ref) {
    for (uint32_t b = 0; b < p->buffer_count; b++) free(ref[b]);
    free(ref);
  }
  return rc;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Busy time per lane: the union of its regions' GPU intervals. */
/* Bytes copied so far on each built-in lane (tandem_runtime_lane_info). */
static void lanes_copied(tandem_runtime_t *rt, uint64_t out[TANDEM_MAX_LANE_IDS]) {
  for (int l = 0; l < TANDEM_MAX_LANE_IDS; l++) {
    tandem_lane_info_t info;
    tandem_lane_info_init(&info);
    out[l] = tandem_runtime_lane_info(rt, l, &info) == TANDEM_OK ? info.copied_bytes : 0;
  }
}

static void lane_busy(const tandem_trace_t *trace, uint64_t busy[TANDEM_MAX_LANE_IDS],
                      uint32_t regions[TANDEM_MAX_LANE_IDS], uint64_t *span_ns) {
  uint32_t n = 0;
  const tandem_trace_event_t *ev = tandem_trace_events(trace, &n);
  memset(busy, 0, sizeof(uint64_t) * TANDEM_MAX_LANE_IDS);
  memset(regions, 0, sizeof(uint32_t) * TANDEM_MAX_LANE_IDS);
  uint64_t lo = UINT64_MAX, hi = 0;
  uint64_t *pairs = malloc((size_t)n * 2 * sizeof *pairs);
  if (!pairs) return;
  for (int lane = 0; lane < TANDEM_MAX_LANE_IDS; lane++) {
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
      if ((int)ev[i].lane != lane || !ev[i].gpu_start_ns || ev[i].gpu_end_ns < ev[i].gpu_start_ns)
        continue;
      /* pack (start, end) so that sorting by start keeps pairs together */
      pairs[2 * m] = ev[i].gpu_start_ns;
      pairs[2 * m + 1] = ev[i].gpu_end_ns;
      m++;
      regions[lane]++;
      if (ev[i].gpu_start_ns < lo) lo = ev[i].gpu_start_ns;
      if (ev[i].gpu_end_ns > hi) hi = ev[i].gpu_end_ns;
    }
    qsort(pairs, m, 2 * sizeof *pairs, cmp_u64);
    uint64_t cur_s = 0, cur_e = 0;
    for (uint32_t i = 0; i < m; i++) {
      uint64_t s = pairs[2 * i], e = pairs[2 * i + 1];
      if (i == 0 || s > cur_e) {
        if (i) busy[lane] += cur_e - cur_s;
        cur_s = s, cur_e = e;
      } else if (e > cur_e) {
        cur_e = e;
      }
    }
    if (m) busy[lane] += cur_e - cur_s;
  }
  free(pairs);
  *span_ns = hi > lo ? hi - lo : 0;
}

static const char *plural(uint32_t n) { return n == 1 ? "" : "s"; }

static bool write_svg(const run_opts_t *o, const pipeline_t *p, const tandem_trace_t *trace,
                      const char *device_line, uint32_t iterations) {
  /* A short title; the devices go in the subtitle, which has room. */
  char subtitle[768];
  snprintf(subtitle, sizeof subtitle, "%.512s; %u iteration%s of %u node%s, %.200s", device_line,
           iterations, iterations == 1 ? "" : "s", p->node_count, p->node_count == 1 ? "" : "s",
           p->file);
  char title[256];
  snprintf(title, sizeof title, "tandem run: %.200s", p->name);
  svg_options_t so = {.title = title, .subtitle = subtitle, .max_submissions = 12};
  return svg_write_timeline(o->svg_path, trace, &so);
}

/* Ctrl-C came while the build worker was inside one long library call:
 * the run is reported as interrupted before its first iteration (the
 * summary, an empty trace and picture; no outputs: nothing ran) and the
 * process ends now, leaving the worker and the device to the kernel. */
static _Noreturn void abandon(const run_opts_t *o, run_report_t *rep, const tandem_trace_t *empty,
                              const char *device_line, uint32_t iterations) {
  int rc = CLI_EXIT_INTERRUPTED;
  rep->interrupted = true;
  rep->completed = 0;
  rep->checks_run = false;
  rep->output_paths = NULL;
  if (o->trace_path) {
    tandem_status_t s =
        empty ? tandem_trace_write_json(empty, o->trace_path) : TANDEM_ERROR_INTERNAL;
    if (s != TANDEM_OK) cli_tandem_error("--trace", s), rc = CLI_EXIT_FAILURE;
  }
  if (o->svg_path && !(empty && write_svg(o, rep->p, empty, device_line, iterations)))
    rc = CLI_EXIT_FAILURE;
  rep->exit_code = rc;
  if (o->json) run_report_json(stdout, rep);
  else if (!o->quiet) run_report_text(stdout, rep);
  fflush(stdout);
  fflush(stderr);
  _exit(rc);
}

int cli_run_main(int argc, char **argv) {
  /* From the start: a signal during start-up is then a request to stop that
   * the run answers with its summary ("0 of N"), not the default action. */
  run_catch_interrupt();
  run_opts_t o = {.npu = {.backend = NULL}};
  for (int i = 1; i < argc; i++) {
    const char *v;
    bool out = false;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return CLI_EXIT_OK;
    } else if (!strcmp(argv[i], "--validate")) {
      o.validate = true;
    } else if (!strcmp(argv[i], "--quiet")) {
      o.quiet = true;
    } else if (!strcmp(argv[i], "--json")) {
      o.json = true;
    } else if (cli_take_value(argc, argv, &i, "--warmup", &v)) {
      if (!cli_parse_u32("--warmup", v, 0, 10000000, &o.warmup)) return CLI_EXIT_USAGE;
    } else if (cli_take_value(argc, argv, &i, "--gpu", &v)) {
      if (!(o.gpu = v)) return cli_error("--gpu needs a device index"), CLI_EXIT_USAGE;
    } else if (cli_take_value(argc, argv, &i, "--trace", &v)) {
      if (!(o.trace_path = v)) return cli_error("--trace needs a path"), CLI_EXIT_USAGE;
    } else if (cli_take_value(argc, argv, &i, "--svg", &v)) {
      if (!(o.svg_path = v)) return cli_error("--svg needs a path"), CLI_EXIT_USAGE;
    } else if (cli_take_value(argc, argv, &i, "--output-dir", &v)) {
      if (!(o.output_dir = v)) return cli_error("--output-dir needs a folder"), CLI_EXIT_USAGE;
    } else if (cli_take_value(argc, argv, &i, "--iterations", &v)) {
      if (!cli_parse_u32("--iterations", v, 1, 10000000, &o.iterations)) return CLI_EXIT_USAGE;
    } else if (cli_take_value(argc, argv, &i, "--npu", &v)) {
      if (!cli_parse_npu(v, &o.npu.backend)) return CLI_EXIT_USAGE;
    } else if (cli_take_value(argc, argv, &i, "--npu-library", &v)) {
      if (!(o.npu.library = v)) return cli_error("--npu-library needs a path"), CLI_EXIT_USAGE;
    } else if (cli_take_value(argc, argv, &i, "--npu-profile", &v)) {
      if (!cli_parse_npu_profile(v, &o.npu.profile)) return CLI_EXIT_USAGE;
      o.npu.profile_given = true;
    } else if (cli_take_value(argc, argv, &i, "--input", &v) ||
               (out = cli_take_value(argc, argv, &i, "--output", &v))) {
      if (!v) return cli_error("%s needs NAME=@FILE", out ? "--output" : "--input"), CLI_EXIT_USAGE;
      if (o.override_count == 64) return cli_error("at most 64 --input / --output"), CLI_EXIT_USAGE;
      o.override_is_output[o.override_count] = out;
      o.overrides[o.override_count++] = v;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      cli_error("run: unknown option '%s' (see tandem run --help)", argv[i]);
      return CLI_EXIT_USAGE;
    } else if (!o.pipeline) {
      o.pipeline = argv[i];
    } else {
      cli_error("run: one pipeline file at a time ('%s' and '%s')", o.pipeline, argv[i]);
      return CLI_EXIT_USAGE;
    }
  }
  if (!o.pipeline) {
    cli_error("run: which pipeline? usage: tandem run PIPELINE.json (see tandem run --help)");
    return CLI_EXIT_USAGE;
  }

  int rc = run_check_pipeline_path(o.pipeline);
  if (rc != CLI_EXIT_OK) return rc;
  pipeline_t p;
  if (!pipeline_parse(o.pipeline, &p)) return CLI_EXIT_USAGE;
  for (uint32_t k = 0; k < o.override_count; k++)
    if (!(o.override_is_output[k] ? run_apply_output(&p, o.overrides[k])
                                  : run_apply_input(&p, o.overrides[k]))) {
      pipeline_free(&p);
      return CLI_EXIT_USAGE;
    }
  uint32_t iterations = o.iterations ? o.iterations : p.iterations;
  /* The file's "npu": {"profile"} unless --npu-profile said otherwise. */
  if (!o.npu.profile_given && p.npu_profile_set) o.npu.profile = p.npu_profile;
  run_state_t st = {.p = &p};
  rc = run_prepare_outputs(&p, o.output_dir, o.trace_path, o.svg_path, &st.output_paths);
  if (rc != CLI_EXIT_OK) {
    pipeline_free(&p);
    return rc;
  }

  tandem_runtime_options_t ro;
  cli_runtime_options(&ro, o.validate, &o.npu);
  if (!cli_gpu_choice(o.gpu, &ro.gpu_index)) {
    run_free_paths(st.output_paths, p.output_count);
    pipeline_free(&p);
    return CLI_EXIT_USAGE;
  }
  if (p.gpu_count) { /* the pipeline names its GPUs: --gpu would be a second choice */
    if (ro.gpu_index != 0) {
      cli_error("%s: the pipeline names its GPUs (\"gpus\"); --gpu / TANDEM_GPU %u would choose "
                "GPU 0 a second time: leave it out",
                p.file, ro.gpu_index);
      run_free_paths(st.output_paths, p.output_count);
      pipeline_free(&p);
      return CLI_EXIT_USAGE;
    }
    ro.gpu_count = p.gpu_count;
    memcpy(ro.gpus, p.gpus, sizeof ro.gpus);
  }
  if (o.json) o.quiet = true; /* stdout carries the JSON alone */
  ro.gpu_timestamps = true;   /* per-lane busy time, trace and picture */
  ro.graph_slots = RUN_SLOTS;
  tandem_status_t s = tandem_runtime_create(&ro, &st.rt);
  if (s == TANDEM_OK && !p.gpu_count && (rc = cli_check_gpu(st.rt, ro.gpu_index)) != CLI_EXIT_OK)
    goto out;
  for (uint32_t g = 0; s == TANDEM_OK && g < tandem_runtime_gpus(st.rt); g++)
    s = tandem_runtime_open_gpu_at(st.rt, g);
  if (s != TANDEM_OK) {
    cli_tandem_error("opening the GPU", s);
    rc = s == TANDEM_ERROR_NO_DEVICE ? CLI_EXIT_NO_DEVICE : CLI_EXIT_FAILURE;
    goto out;
  }
  tandem_device_info_t gpu;
  tandem_device_info_init(&gpu);
  tandem_runtime_gpu_describe(st.rt, 0, &gpu);
  char device_line[512];
  snprintf(device_line, sizeof device_line, "%.250s (%.200s)", gpu.name, gpu.driver_name);
  if (!o.quiet) {
    printf("pipeline: %s (%s): %u buffer%s, %u kernel%s, %u NPU program%s, %u node%s\n", p.name,
           p.file, p.buffer_count, plural(p.buffer_count), p.kernel_count, plural(p.kernel_count),
           p.program_count, plural(p.program_count), p.node_count, plural(p.node_count));
    printf("GPU:      %s %s\n", gpu.name, gpu.driver_info);
    for (uint32_t g = 1; g < tandem_runtime_gpus(st.rt); g++) {
      tandem_device_info_t more;
      tandem_device_info_init(&more);
      tandem_runtime_gpu_describe(st.rt, g, &more);
      printf("GPU %u:    %s %s (%s)\n", g, more.name, more.driver_info,
             tandem_runtime_gpu_backend(st.rt, g));
    }
    fflush(stdout); /* a script watching stdout sees the build start */
  }

  run_report_t rep = {.p = &p,
                      .gpu_index = ro.gpu_index,
                      .gpu_name = gpu.name,
                      .gpu_driver = gpu.driver_name,
                      .gpu_driver_info = gpu.driver_info,
                      .warmup = o.warmup,
                      .iterations = iterations,
                      .validation = o.validate,
                      .trace_path = o.trace_path,
                      .svg_path = o.svg_path,
                      .output_paths = st.output_paths};
  /* An empty trace for a run stopped before its trace starts, made now: an
   * abandoned build (below) must not wait for the runtime. */
  tandem_trace_t *empty = NULL;
  if ((o.trace_path || o.svg_path) && tandem_runtime_trace_start(st.rt, 1) == TANDEM_OK &&
      tandem_runtime_trace_stop(st.rt, &empty) != TANDEM_OK)
    empty = NULL;
  bool abandoned;
  rc = build_interruptible(&st, &o, &abandoned);
  if (abandoned) abandon(&o, &rep, empty, device_line, iterations); /* does not return */
  tandem_trace_release(empty);
  if (rc == CLI_EXIT_INTERRUPTED) rc = CLI_EXIT_OK; /* reported below: 0 iterations ran */
  if (rc != CLI_EXIT_OK) goto out;
  /* How work crosses from GPU 0 to each other GPU (all open now). */
  tandem_device_info_t pair_gpu[TANDEM_MAX_GPUS];
  for (uint32_t g = 1; g < tandem_runtime_gpus(st.rt) && g < TANDEM_MAX_GPUS; g++) {
    tandem_gpu_pair_info_t pi;
    tandem_gpu_pair_info_init(&pi);
    tandem_device_info_init(&pair_gpu[g]);
    if (tandem_runtime_gpu_pair(st.rt, 0, g, &pi) != TANDEM_OK ||
        tandem_runtime_gpu_describe(st.rt, g, &pair_gpu[g]) != TANDEM_OK)
      continue;
    const char *copy = pi.can_copy ? tandem_sharing_name(pi.copy) : NULL;
    if (!o.quiet)
      printf("GPU 0-%u:  copies %s, waits %s\n", g, copy ? copy : "impossible",
             pi.waits_on_gpu ? "on the GPU" : "relayed by the host");
    size_t used = strlen(device_line);
    snprintf(device_line + used, sizeof device_line - used, " + %.120s", pair_gpu[g].name);
    rep.pairs[rep.pair_count++] =
        (struct run_report_pair){g, pair_gpu[g].name, tandem_runtime_gpu_backend(st.rt, g), copy,
                                 pi.waits_on_gpu};
  }
  tandem_npu_info_t ni;
  tandem_npu_info_init(&ni);
  tandem_xrt_npu_info_t xi; /* the profile: XRT's, as both NPU backends are */
  tandem_xrt_npu_info_init(&xi);
  ni.next = &xi;
  if (p.program_count) {
    if (tandem_runtime_npu_info(st.rt, &ni) == TANDEM_OK) {
      if (!o.quiet)
        printf("NPU:      %s%s, sharing: %s, profile: %s\n", ni.name,
               ni.emulated ? " [emulated]" : "", tandem_sharing_name(ni.sharing),
               tandem_npu_profile_name(xi.profile));
      size_t l = strlen(device_line);
      snprintf(device_line + l, sizeof device_line - l, " + %s", ni.name);
      rep.has_npu = true;
      rep.npu_name = ni.name;
      rep.npu_emulated = ni.emulated;
      rep.npu_sharing = tandem_sharing_name(ni.sharing);
    }
  }

  /* Warm-up runs: real runs (the data sees them), outside the timing, the
   * statistics and the trace. */
  if (o.warmup) {
    uint64_t untimed = 0;
    rc = submit_all(&st, o.warmup, &untimed);
    if (rc != CLI_EXIT_OK) goto out;
  }
  uint64_t regions_per_run = (uint64_t)p.node_count * 2 + 4;
  uint64_t cap = regions_per_run * iterations;
  if (cap > (1u << 20)) cap = 1u << 20; /* events are ~160 bytes: at most 160 MiB */
  s = tandem_runtime_trace_start(st.rt, (uint32_t)cap);
  if (s != TANDEM_OK) {
    cli_tandem_error("starting the trace", s);
    rc = CLI_EXIT_FAILURE;
    goto out;
  }
  tandem_statistics_t before, after;
  tandem_statistics_init(&before);
  tandem_statistics_init(&after);
  tandem_runtime_statistics(st.rt, &before);
  uint64_t lane_copied_before[TANDEM_MAX_LANE_IDS];
  lanes_copied(st.rt, lane_copied_before);
  if (!o.quiet && !run_interrupted()) {
    printf("running %u iteration%s (Ctrl-C stops early, with a summary)\n", iterations,
           iterations == 1 ? "" : "s");
    fflush(stdout);
  }
  rc = submit_all(&st, iterations, &rep.wall_ns);
  rep.completed = run_interrupted() ? st.submitted : iterations;
  rep.interrupted = run_interrupted();
  tandem_runtime_statistics(st.rt, &after);
  /* per lane at the same moment as the totals: the outputs' staging copies
   * below belong to neither */
  lanes_copied(st.rt, rep.copied_per_lane);
  s = tandem_runtime_trace_stop(st.rt, &st.trace);
  if (s != TANDEM_OK) {
    cli_tandem_error("stopping the trace", s);
    if (rc == CLI_EXIT_OK) rc = CLI_EXIT_FAILURE;
  }
  if (rc != CLI_EXIT_OK) goto out;

  if (o.trace_path) {
    s = tandem_trace_write_json(st.trace, o.trace_path);
    if (s != TANDEM_OK) {
      cli_tandem_error("--trace", s);
      rc = CLI_EXIT_FAILURE;
    }
  }
  if (o.svg_path && !write_svg(&o, &p, st.trace, device_line, iterations)) rc = CLI_EXIT_FAILURE;

  /* Interrupted: the outputs of what ran, no checks (they describe a whole run). */
  int frc = CLI_EXIT_OK;
  if (rep.completed)
    frc = finish(&st, o.warmup + rep.completed, &rep.checks_passed, !rep.interrupted);
  rep.checks_run = !rep.interrupted;
  if (!rep.completed) rep.output_paths = NULL;
  if (rc == CLI_EXIT_OK) rc = frc;
  if (rep.interrupted && rc == CLI_EXIT_OK) rc = CLI_EXIT_INTERRUPTED;

  lane_busy(st.trace, rep.busy_ns, rep.regions, &rep.span_ns);
  for (int l = 0; l < TANDEM_MAX_LANE_IDS; l++) rep.copied_per_lane[l] -= lane_copied_before[l];
  rep.submissions = after.submissions - before.submissions;
  rep.copied_bytes = after.copied_bytes - before.copied_bytes;
  rep.cache_maintenance_bytes = after.cache_maintenance_bytes - before.cache_maintenance_bytes;
  rep.imports = after.imports;
  rep.npu_runs = after.npu_runs - before.npu_runs;
  rep.trace_dropped = tandem_trace_dropped(st.trace);
  uint64_t validation = rep.validation_messages = tandem_runtime_validation_messages(st.rt);
  if (o.validate && validation > 0) {
    cli_error("%llu validation message(s): failing the run", (unsigned long long)validation);
    if (rc == CLI_EXIT_OK) rc = CLI_EXIT_FAILURE;
  }
  rep.exit_code = rc;
  if (o.json) run_report_json(stdout, &rep);
  else if (!o.quiet) run_report_text(stdout, &rep);

out:
  tandem_trace_release(st.trace);
  tandem_exec_release(st.exec);
  if (st.programs)
    for (uint32_t i = 0; i < p.program_count; i++) tandem_npu_program_release(st.programs[i]);
  if (st.kernels)
    for (uint32_t i = 0; i < p.kernel_count; i++) tandem_kernel_release(st.kernels[i]);
  if (st.buffers)
    for (uint32_t i = 0; i < p.buffer_count; i++) tandem_buffer_release(st.buffers[i]);
  free(st.buffers);
  free(st.kernels);
  free(st.programs);
  run_free_paths(st.output_paths, p.output_count);
  if (st.rt) {
    if (o.validate && rc == CLI_EXIT_OK && tandem_runtime_validation_messages(st.rt) > 0) {
      cli_error("validation messages during teardown");
      rc = CLI_EXIT_FAILURE;
    }
    tandem_runtime_destroy(st.rt);
  }
  pipeline_free(&p);
  return rc;
}
