/* SPDX-License-Identifier: MIT */
/*
 * pipeline.h — the in-memory form of a pipeline file (docs/pipeline.md) and
 * the functions that parse it, run it and check it.
 *
 * pipeline_parse.c turns JSON into this model and rejects anything malformed
 * with the file, the field path and what is wrong; every cross-reference (a
 * buffer, kernel or program name) is resolved to an index there and every
 * view is bounds-checked, so the runner only meets errors the device raises.
 * Order is record order: a node can only name objects, never other nodes, so
 * a pipeline cannot express a cycle.
 */
#ifndef TANDEM_TOOLS_PIPELINE_H_
#define TANDEM_TOOLS_PIPELINE_H_

#include <stdbool.h>
#include <stdint.h>

#include "tandem/tandem.h"
#include "tandem/tandem_xrt.h" /* an NPU program's abi and instruction stream */

typedef enum pl_init {
  PL_INIT_ZERO = 0, /* tandem zero-fills every buffer */
  PL_INIT_FILE,
  PL_INIT_FILL,
  PL_INIT_RANDOM,
} pl_init_t;

typedef enum pl_type {
  PL_TYPE_BYTES = 0,
  PL_TYPE_F32,
  PL_TYPE_U32,
  PL_TYPE_I32,
  PL_TYPE_I8,
} pl_type_t;

typedef struct pl_buffer {
  char *name;
  uint64_t size;
  tandem_placement_t placement;
  uint32_t gpu; /* "gpu": index into the pipeline's gpus (0 by default) */
  pl_init_t init;
  char *init_path; /* resolved against the pipeline's folder */
  uint32_t fill;
  uint64_t seed;
  pl_type_t random_type;
  double random_min, random_max;
} pl_buffer_t;

typedef struct pl_kernel {
  char *name;
  char *spirv_path; /* resolved; NULL for a built-in */
  char *glsl_path;  /* resolved GLSL source file, or NULL */
  char *builtin;    /* "saxpy", "scale_add"; NULL for a file */
  char *entry;
  uint32_t workgroups[3]; /* default dispatch size; 0,0,0: every node gives its own */
  tandem_binding_contract_t bindings[TANDEM_MAX_BINDINGS];
  uint32_t binding_count;
  uint32_t push_constant_bytes;
  tandem_spec_constant_t spec_constants[TANDEM_MAX_SPEC_CONSTANTS];
  uint32_t spec_constant_count;
  uint32_t local_size[3];          /* 0,0,0: the shader's own */
  uint32_t required_subgroup_size; /* 0: the driver's choice */
  uint32_t flags;                  /* tandem_kernel_flag_t bits from the boolean fields */
  uint32_t aliased_bindings;       /* bit i: binding i may alias another masked binding */
  uint32_t gpu;                    /* "gpu": index into the pipeline's gpus (0 by default) */
} pl_kernel_t;

typedef struct pl_program {
  char *name;
  char *xclbin_path; /* resolved; "@emulated" becomes the built-in path */
  bool emulated_xclbin;
  char *kernel;
  tandem_binding_contract_t bindings[TANDEM_MAX_BINDINGS];
  uint32_t binding_count;
  uint32_t scalar_count; /* scalar arguments */
  uint32_t scalar_words; /* 32-bit words they take (a u64 is two) */
  tandem_npu_abi_t abi;
  char *instructions_path; /* resolved, or NULL */
  tandem_npu_scalar_type_t scalar_types[TANDEM_MAX_NPU_SCALARS];
} pl_program_t;

typedef struct pl_view {
  uint32_t buffer; /* index into buffers */
  uint64_t offset, length;
} pl_view_t;

typedef enum pl_op { PL_OP_FILL, PL_OP_COPY, PL_OP_DISPATCH, PL_OP_NPU_RUN } pl_op_t;

typedef struct pl_node {
  pl_op_t op;
  tandem_lane_t lane;
  uint32_t target;                      /* kernel or program index */
  pl_view_t views[TANDEM_MAX_BINDINGS]; /* fill: [dst]; copy: [src, dst] */
  uint32_t view_count;
  uint32_t fill;
  uint8_t push[TANDEM_MAX_PUSH_CONSTANT_BYTES];
  uint32_t push_bytes;
  uint32_t workgroups[3]; /* dispatch: the node's own, or its kernel's default */
  uint32_t scalars[TANDEM_MAX_NPU_SCALARS];
  uint32_t scalar_count;
} pl_node_t;

typedef struct pl_output {
  pl_view_t view;
  char *path;             /* relative to the output folder (run_files.c) */
  pl_type_t type;         /* element type of a .npy output (bytes: u1) */
  bool from_command_line; /* --output: |path| is the command line's, used as is */
} pl_output_t;

typedef enum pl_check_kind {
  PL_CHECK_FILE,
  PL_CHECK_SHA256,
  PL_CHECK_FNV1A64,
  PL_CHECK_CPU
} pl_check_kind_t;

typedef struct pl_check {
  pl_check_kind_t kind;
  pl_view_t view;
  char *path;           /* FILE: expected bytes, resolved */
  char *digest;         /* SHA256 / FNV1A64: lower-case hex */
  pl_type_t type;       /* element type for comparisons */
  double tolerance;     /* absolute, floats */
  double rel_tolerance; /* relative to |expected|, floats */
} pl_check_t;

typedef struct pipeline {
  char *file; /* as given, for messages */
  char *name;
  char *description;
  uint32_t iterations;
  /* "npu": {"profile": ...}: the NPU profile the file asks for (AUTO when
   * absent); --npu-profile on the command line overrides it. */
  tandem_npu_profile_t npu_profile;
  bool npu_profile_set;
  /* "gpus": ["vulkan:0", "host:1", ...]: the runtime's GPUs (the runtime
   * option gpus), backend and index each; 0 when absent (one GPU, --gpu). */
  uint32_t gpu_count;
  tandem_gpu_choice_t gpus[TANDEM_MAX_GPUS];
  char gpu_backends[TANDEM_MAX_GPUS][16]; /* what gpus[].backend points at */
  pl_buffer_t *buffers;
  uint32_t buffer_count;
  pl_kernel_t *kernels;
  uint32_t kernel_count;
  pl_program_t *programs;
  uint32_t program_count;
  pl_node_t *nodes;
  uint32_t node_count;
  pl_output_t *outputs;
  uint32_t output_count;
  pl_check_t *checks;
  uint32_t check_count;
} pipeline_t;

/* Parses |path|. On failure prints "path: field: what is wrong" (or
 * "path:line:column: ...") to stderr and returns false. */
bool pipeline_parse(const char *path, pipeline_t *out);
void pipeline_free(pipeline_t *p);

/* Built-in GPU kernels the tool carries (its own copy of shaders/). */
bool pipeline_builtin_spirv(const char *name, const void **code, size_t *bytes);
/* The names, comma-separated, for messages. */
const char *pipeline_builtin_names(void);

/* Initial contents of buffer |b| (size bytes) into |dst|. */
bool pipeline_init_bytes(const pipeline_t *p, uint32_t b, uint8_t *dst);

/* The CPU model: runs the pipeline's nodes |iterations| times on host copies
 * of every buffer (initialised like the real ones). |mem| receives
 * buffer_count malloc'ed arrays. False (with a message naming the node) when
 * a node's kernel has no CPU model. */
bool pipeline_cpu_reference(const pipeline_t *p, uint32_t iterations, uint8_t ***mem);
/* Whether every node has a CPU model; if not, |why| names the first that has not. */
bool pipeline_cpu_model_complete(const pipeline_t *p, char *why, size_t why_size);

/* Digests (lower-case hex into |hex|: 65 / 17 bytes). */
void cli_sha256_hex(const uint8_t *data, uint64_t len, char hex[65]);
void cli_fnv1a64_hex(const uint8_t *data, uint64_t len, char hex[17]);

/* The lane timeline picture (svg.c). */
typedef struct svg_options {
  const char *title;
  const char *subtitle;
  uint32_t max_submissions; /* 0: all */
} svg_options_t;
bool svg_write_timeline(const char *path, const tandem_trace_t *trace, const svg_options_t *o);

#endif /* TANDEM_TOOLS_PIPELINE_H_ */
