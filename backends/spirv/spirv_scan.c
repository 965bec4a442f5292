/* SPDX-License-Identifier: MIT */
/*
 * spirv_scan.c — a small scanner over validated SPIR-V words for what
 * SPIRV-Cross does not give safely: the declared capabilities (mapped to
 * tandem_shader_feature_t bits), every scalar specialization constant with its
 * SpecId, type and default, the workgroup size (WorkgroupSize built-in,
 * LocalSizeId or LocalSize of the chosen entry point) and which SpecIds set
 * it (LocalSizeId: maintenance4), subgroup operations on 8/16/64-bit
 * types, and the scope of each clock read (OpReadClockKHR: which of the two
 * clock features it needs).
 *
 * It runs after spirv-val accepted the module and before SPIRV-Cross sees it;
 * even so it trusts nothing: every operand it reads is bounds-checked, and a
 * shape it cannot interpret is INVALID_KERNEL, never a guess (nor is a
 * constant whose type is not a data type, which spirv-val lets through). It allocates one
 * table (types and constants, sorted by id) and frees it before returning.
 */
#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backends/spirv/spirv_scan.h"
#include "core/status.h"

enum {
  OP_NAME = 5,
  OP_EXTENSION = 10,
  OP_ENTRY_POINT = 15,
  OP_EXECUTION_MODE = 16,
  OP_CAPABILITY = 17,
  OP_TYPE_BOOL = 20,
  OP_TYPE_INT = 21,
  OP_TYPE_FLOAT = 22,
  OP_TYPE_VECTOR = 23,
  OP_CONSTANT_TRUE = 41,
  OP_CONSTANT_FALSE = 42,
  OP_CONSTANT = 43,
  OP_CONSTANT_COMPOSITE = 44,
  OP_SPEC_CONSTANT_TRUE = 48,
  OP_SPEC_CONSTANT_FALSE = 49,
  OP_SPEC_CONSTANT = 50,
  OP_SPEC_CONSTANT_COMPOSITE = 51,
  OP_SPEC_CONSTANT_OP = 52,
  OP_DECORATE = 71,
  OP_GROUP_NON_UNIFORM_FIRST = 333, /* OpGroupNonUniformElect */
  OP_GROUP_NON_UNIFORM_LAST = 366,  /* OpGroupNonUniformQuadSwap */
  OP_EXECUTION_MODE_ID = 331,
  OP_READ_CLOCK_KHR = 5056,
  CAPABILITY_SHADER_CLOCK_KHR = 5055,
  SCOPE_DEVICE = 1,
  SCOPE_SUBGROUP = 3,
  MODE_LOCAL_SIZE = 17,
  MODE_LOCAL_SIZE_ID = 38,
  DECORATION_SPEC_ID = 1,
  DECORATION_BUILTIN = 11,
  BUILTIN_WORKGROUP_SIZE = 25,
  MODEL_GL_COMPUTE = 5,
};

/* One type or constant, found by id. */
typedef struct tandem__spv_def {
  uint32_t id;
  uint16_t opcode;
  uint32_t type;          /* result type id (constants), component type (vectors) */
  uint32_t a, b;          /* OpTypeInt: width, signedness; OpTypeFloat: width;
                         OpTypeVector: count; scalar constants: low, high word */
  uint32_t first_operand; /* composite constants: word index of the first part */
  uint32_t operand_count;
} tandem__spv_def_t;

typedef struct tandem__spv_scan {
  const uint32_t *w;
  size_t n;
  const char *name;
  tandem__spv_def_t *defs;
  size_t def_count;
} tandem__spv_scan_t;

static int tandem__def_cmp(const void *a, const void *b) {
  uint32_t x = ((const tandem__spv_def_t *)a)->id, y = ((const tandem__spv_def_t *)b)->id;
  return x < y ? -1 : x > y;
}

static const tandem__spv_def_t *tandem__def(const tandem__spv_scan_t *sc, uint32_t id) {
  tandem__spv_def_t key = {.id = id};
  return bsearch(&key, sc->defs, sc->def_count, sizeof key, tandem__def_cmp);
}

static bool tandem__is_def(uint32_t op) {
  return op == OP_TYPE_BOOL || op == OP_TYPE_INT || op == OP_TYPE_FLOAT || op == OP_TYPE_VECTOR ||
         op == OP_CONSTANT_TRUE || op == OP_CONSTANT_FALSE || op == OP_CONSTANT ||
         op == OP_CONSTANT_COMPOSITE || op == OP_SPEC_CONSTANT_TRUE ||
         op == OP_SPEC_CONSTANT_FALSE || op == OP_SPEC_CONSTANT ||
         op == OP_SPEC_CONSTANT_COMPOSITE || op == OP_SPEC_CONSTANT_OP;
}

static bool tandem__is_type_op(uint32_t op) {
  return op == OP_TYPE_BOOL || op == OP_TYPE_INT || op == OP_TYPE_FLOAT || op == OP_TYPE_VECTOR;
}

/* The name of constant opcode |op| (tandem__is_def, not a type). */
static const char *tandem__constant_op_name(uint32_t op) {
  switch (op) {
    case OP_CONSTANT_TRUE: return "OpConstantTrue";
    case OP_CONSTANT_FALSE: return "OpConstantFalse";
    case OP_CONSTANT: return "OpConstant";
    case OP_CONSTANT_COMPOSITE: return "OpConstantComposite";
    case OP_SPEC_CONSTANT_TRUE: return "OpSpecConstantTrue";
    case OP_SPEC_CONSTANT_FALSE: return "OpSpecConstantFalse";
    case OP_SPEC_CONSTANT: return "OpSpecConstant";
    case OP_SPEC_CONSTANT_COMPOSITE: return "OpSpecConstantComposite";
    case OP_SPEC_CONSTANT_OP: return "OpSpecConstantOp";
    default: return "a constant";
  }
}

/* Capability → the feature bit it needs; 0 for capabilities that need none;
 * -1 for ones tandem refuses or does not know. */
static int64_t tandem__capability_feature(uint32_t cap, const char **out_what) {
  *out_what = NULL;
  switch (cap) {
    case 0: /* Matrix */
    case 1: /* Shader */ return 0;
    case 9: return TANDEM_SHADER_FLOAT16;
    case 10: return TANDEM_SHADER_FLOAT64;
    case 11: return TANDEM_SHADER_INT64;
    case 12: return TANDEM_SHADER_INT64_ATOMICS;
    case 22: return TANDEM_SHADER_INT16;
    case 39: return TANDEM_SHADER_INT8;
    case 61: return TANDEM_SHADER_SUBGROUP_BASIC;
    case 62: return TANDEM_SHADER_SUBGROUP_VOTE;
    case 63: return TANDEM_SHADER_SUBGROUP_ARITHMETIC;
    case 64: return TANDEM_SHADER_SUBGROUP_BALLOT;
    case 65: return TANDEM_SHADER_SUBGROUP_SHUFFLE;
    case 66: return TANDEM_SHADER_SUBGROUP_SHUFFLE_RELATIVE;
    case 67: return TANDEM_SHADER_SUBGROUP_CLUSTERED;
    case 68: return TANDEM_SHADER_SUBGROUP_QUAD;
    case 4433: return TANDEM_SHADER_STORAGE_BUFFER_16BIT;
    case 4434: return TANDEM_SHADER_UNIFORM_AND_STORAGE_BUFFER_16BIT;
    case 4435: return TANDEM_SHADER_PUSH_CONSTANT_16BIT;
    case 4448: return TANDEM_SHADER_STORAGE_BUFFER_8BIT;
    case 4449: return TANDEM_SHADER_UNIFORM_AND_STORAGE_BUFFER_8BIT;
    case 4450: return TANDEM_SHADER_PUSH_CONSTANT_8BIT;
    /* Which clock depends on each OpReadClockKHR's scope: the scan's pass
     * 3 decides (tandem__clock_feature). */
    case CAPABILITY_SHADER_CLOCK_KHR: return 0;
    case 5345: return TANDEM_SHADER_VULKAN_MEMORY_MODEL;
    case 5346: return TANDEM_SHADER_VULKAN_MEMORY_MODEL_DEVICE_SCOPE;
    case 6016: /* DotProductInputAll */
    case 6017: /* DotProductInput4x8Bit */
    case 6018: /* DotProductInput4x8BitPacked */
    case 6019: /* DotProduct */ return TANDEM_SHADER_INTEGER_DOT_PRODUCT;
    case 5347: *out_what = "PhysicalStorageBufferAddresses"; return -1;
    case 6022: *out_what = "CooperativeMatrixKHR (VK_KHR_cooperative_matrix)"; return -1;
    case 4436: *out_what = "StorageInputOutput16"; return -1;
    default: return -1;
  }
}

/* Width in bits of a scalar or vector type's components, 0 when not numeric. */
static uint32_t tandem__type_width(const tandem__spv_scan_t *sc, uint32_t type_id) {
  const tandem__spv_def_t *t = tandem__def(sc, type_id);
  if (t && t->opcode == OP_TYPE_VECTOR) t = tandem__def(sc, t->type);
  if (!t) return 0;
  if (t->opcode == OP_TYPE_INT || t->opcode == OP_TYPE_FLOAT) return t->a;
  return 0;
}

/* The clock feature OpReadClockKHR at word |at| needs, from its scope
 * operand (result type, result id, scope id): Device needs shaderDeviceClock,
 * Subgroup shaderSubgroupClock (VUID-RuntimeSpirv-shaderDeviceClock-06268,
 * -shaderSubgroupClock-06267). A scope that is not a 32-bit OpConstant
 * (spirv-val wants one where the Shader capability is) or is neither of the
 * two is INVALID_KERNEL: the scan does not guess which clock. */
static tandem_status_t tandem__clock_feature(const tandem__spv_scan_t *sc, size_t at,
                                             uint32_t *out_bit) {
  const uint32_t *o = &sc->w[at + 1];
  uint32_t oc = (sc->w[at] >> 16) - 1;
  const tandem__spv_def_t *c = oc >= 3 ? tandem__def(sc, o[2]) : NULL;
  if (!c || c->opcode != OP_CONSTANT || tandem__type_width(sc, c->type) != 32)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                       "kernel '%s': OpReadClockKHR at word %zu: its scope %%%u is not a "
                       "32-bit integer OpConstant; tandem cannot tell which clock it reads",
                       sc->name, at, oc >= 3 ? o[2] : 0);
  if (c->a != SCOPE_DEVICE && c->a != SCOPE_SUBGROUP)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                       "kernel '%s': OpReadClockKHR at word %zu reads at scope %u; Vulkan "
                       "allows Device (1) and Subgroup (3) only",
                       sc->name, at, c->a);
  *out_bit = c->a == SCOPE_DEVICE ? TANDEM_SHADER_DEVICE_CLOCK : TANDEM_SHADER_SUBGROUP_CLOCK;
  return TANDEM_OK;
}

/* The value of constant |id| as used for a workgroup size component: a
 * literal (|*spec| = -1) or a spec constant with a SpecId (|*spec| = it). */
static tandem_status_t tandem__size_component(const tandem__spv_scan_t *sc, uint32_t id,
                                              const int64_t *spec_of, size_t spec_cap,
                                              uint32_t *out_value, int64_t *out_spec,
                                              const char *where) {
  const tandem__spv_def_t *c = tandem__def(sc, id);
  bool constant = c && (c->opcode == OP_CONSTANT || c->opcode == OP_SPEC_CONSTANT);
  if (!constant || tandem__type_width(sc, c->type) != 32)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                       "kernel '%s': %s operand %%%u is not a 32-bit integer constant or "
                       "specialization constant; tandem cannot tell the workgroup size",
                       sc->name, where, id);
  *out_value = c->a;
  *out_spec = -1;
  if (c->opcode == OP_SPEC_CONSTANT) {
    if (id >= spec_cap || spec_of[id] < 0)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                         "kernel '%s': %s operand %%%u is a specialization constant without "
                         "a SpecId; tandem cannot tell the workgroup size",
                         sc->name, where, id);
    *out_spec = spec_of[id];
  }
  return TANDEM_OK;
}

/*--------------------------------------------------------------------------
 * Workgroup (shared) memory as terms of the specialization.
 *
 * Array lengths of Workgroup variables are often specialization constants or
 * expressions of them (OpSpecConstantOp), so the size is known only once the
 * values are. The scan writes it as a straight-line program
 * (tandem__wg_terms_t, core/kernel_interface.h): the sum of the Workgroup
 * variables' sizes (natural layout, no padding beyond each member's own
 * alignment), constants folded, one node per operation that depends on a
 * value. tandem_spirv_workgroup_bytes evaluates it with the values core chose,
 * without the module. An expression it cannot evaluate leaves the size
 * unknown rather than guessed.
 *--------------------------------------------------------------------------*/

enum {
  OP_TYPE_MATRIX = 24,
  OP_TYPE_ARRAY = 28,
  OP_TYPE_STRUCT = 30,
  OP_TYPE_POINTER = 32,
  OP_VARIABLE = 59,
  STORAGE_WORKGROUP = 4,
};

/* Whether |id| is a type a constant can have: a scalar, vector or composite
 * (|def_at|: the word index of each id's defining instruction, 0 none). */
static bool tandem__is_data_type(const uint32_t *w, const uint32_t *def_at, uint32_t bound,
                                 uint32_t id) {
  if (id >= bound || !def_at[id]) return false;
  uint32_t op = w[def_at[id]] & 0xFFFFu;
  return op == OP_TYPE_BOOL || op == OP_TYPE_INT || op == OP_TYPE_FLOAT || op == OP_TYPE_VECTOR ||
         op == OP_TYPE_MATRIX || op == OP_TYPE_ARRAY || op == OP_TYPE_STRUCT;
}

/* A size or value while the terms are built: the constant |value| when
 * |node| < 0, else node |node| of the terms. */
typedef struct tandem__wg_expr {
  int32_t node;
  uint64_t value;
} tandem__wg_expr_t;

typedef struct tandem__wg_build {
  const uint32_t *w;
  uint32_t bound;
  const uint32_t *at;      /* word index of the instruction defining each id, 0 none */
  const int64_t *spec_of;  /* SpecId of each id, -1 none */
  tandem__wg_terms_t *out; /* the terms being written */
  bool full;               /* more nodes than TANDEM__MAX_WG_NODES were needed */
} tandem__wg_build_t;

/* Node |op| on |a| and |b| (and |value| for ALIGN): the one arithmetic both
 * the folding below and the evaluation use. False: unknown (division by 0,
 * an array past 2^64 bytes, an alignment of 0). */
static bool tandem__wg_apply(uint8_t op, uint64_t a, uint64_t b, uint64_t value, uint64_t *out) {
  switch ((tandem__wg_op_t)op) {
    case TANDEM__WG_ADD: *out = a + b; return true;
    case TANDEM__WG_SUB: *out = a - b; return true;
    case TANDEM__WG_MUL: *out = a * b; return true;
    case TANDEM__WG_UDIV:
      if (!b) return false;
      *out = a / b;
      return true;
    case TANDEM__WG_UMOD:
      if (!b) return false;
      *out = a % b;
      return true;
    case TANDEM__WG_SHR: *out = b < 64 ? a >> b : 0; return true;
    case TANDEM__WG_SHL: *out = b < 64 ? a << b : 0; return true;
    case TANDEM__WG_OR: *out = a | b; return true;
    case TANDEM__WG_XOR: *out = a ^ b; return true;
    case TANDEM__WG_AND: *out = a & b; return true;
    case TANDEM__WG_CONVERT: *out = a; return true;
    case TANDEM__WG_ARRAY:
      if (b && a > UINT64_MAX / b) return false;
      *out = a * b;
      return true;
    case TANDEM__WG_ALIGN:
      if (!value) return false;
      *out = a % value ? a + (value - a % value) : a;
      return true;
    case TANDEM__WG_CONST:
    case TANDEM__WG_SPEC:
    case TANDEM__WG_SPEC_BOOL: break; /* leaves: read by the evaluator itself */
  }
  return false;
}

/* Appends a node; past the capacity it notes |full| and answers node 0, so
 * the build goes on only to learn whether the size is unknown anyway. */
static tandem__wg_expr_t tandem__wg_emit(tandem__wg_build_t *b, tandem__wg_node_t node) {
  if (b->out->count == TANDEM__MAX_WG_NODES) {
    b->full = true;
    return (tandem__wg_expr_t){.node = 0};
  }
  b->out->nodes[b->out->count] = node;
  return (tandem__wg_expr_t){.node = (int32_t)b->out->count++};
}

/* |e| as a node index (a CONST node for a constant). */
static uint16_t tandem__wg_index(tandem__wg_build_t *b, tandem__wg_expr_t e) {
  if (e.node < 0)
    e = tandem__wg_emit(b, (tandem__wg_node_t){.op = TANDEM__WG_CONST, .value = e.value});
  return (uint16_t)e.node;
}

/* |x| op |y| (|value| for ALIGN), folded when both are constants. */
static bool tandem__wg_op(tandem__wg_build_t *b, tandem__wg_op_t op, tandem__wg_expr_t x,
                          tandem__wg_expr_t y, uint64_t value, tandem__wg_expr_t *out) {
  if (x.node < 0 && y.node < 0) {
    *out = (tandem__wg_expr_t){.node = -1};
    return tandem__wg_apply((uint8_t)op, x.value, y.value, value, &out->value);
  }
  uint16_t a = tandem__wg_index(b, x), c = tandem__wg_index(b, y);
  *out = tandem__wg_emit(b, (tandem__wg_node_t){.op = (uint8_t)op, .a = a, .b = c, .value = value});
  return true;
}

static tandem__wg_expr_t tandem__wg_const(uint64_t v) {
  return (tandem__wg_expr_t){.node = -1, .value = v};
}

/* Integer/bool constant |id| after specialization; false when it is not one
 * this evaluator knows. */
static bool tandem__wg_value(tandem__wg_build_t *b, uint32_t id, int depth,
                             tandem__wg_expr_t *out) {
  if (id >= b->bound || !b->at[id] || depth > 32) return false;
  const uint32_t *ins = &b->w[b->at[id]];
  uint32_t count = ins[0] >> 16, op = ins[0] & 0xFFFFu;
  if (op == OP_CONSTANT || op == OP_SPEC_CONSTANT) {
    if (count < 4) return false;
    uint64_t v = ins[3] | (count >= 5 ? (uint64_t)ins[4] << 32 : 0);
    if (op == OP_SPEC_CONSTANT && b->spec_of[id] >= 0)
      *out = tandem__wg_emit(b, (tandem__wg_node_t){.op = TANDEM__WG_SPEC,
                                                    .spec_id = (uint32_t)b->spec_of[id],
                                                    .value = v});
    else *out = tandem__wg_const(v);
    return true;
  }
  if (op == OP_CONSTANT_TRUE || op == OP_CONSTANT_FALSE) {
    *out = tandem__wg_const(op == OP_CONSTANT_TRUE);
    return true;
  }
  if (op == OP_SPEC_CONSTANT_TRUE || op == OP_SPEC_CONSTANT_FALSE) {
    uint64_t v = op == OP_SPEC_CONSTANT_TRUE;
    if (b->spec_of[id] >= 0)
      *out = tandem__wg_emit(b, (tandem__wg_node_t){.op = TANDEM__WG_SPEC_BOOL,
                                                    .spec_id = (uint32_t)b->spec_of[id],
                                                    .value = v});
    else *out = tandem__wg_const(v);
    return true;
  }
  if (op != OP_SPEC_CONSTANT_OP || count < 5) return false;
  tandem__wg_expr_t x, y = tandem__wg_const(0);
  if (!tandem__wg_value(b, ins[4], depth + 1, &x)) return false;
  if (count >= 6 && !tandem__wg_value(b, ins[5], depth + 1, &y)) return false;
  tandem__wg_op_t wop;
  switch (ins[3]) {
    case 128: wop = TANDEM__WG_ADD; break;     /* OpIAdd */
    case 130: wop = TANDEM__WG_SUB; break;     /* OpISub */
    case 132: wop = TANDEM__WG_MUL; break;     /* OpIMul */
    case 134: wop = TANDEM__WG_UDIV; break;    /* OpUDiv */
    case 137: wop = TANDEM__WG_UMOD; break;    /* OpUMod */
    case 194: wop = TANDEM__WG_SHR; break;     /* OpShiftRightLogical */
    case 196: wop = TANDEM__WG_SHL; break;     /* OpShiftLeftLogical */
    case 197: wop = TANDEM__WG_OR; break;      /* OpBitwiseOr */
    case 198: wop = TANDEM__WG_XOR; break;     /* OpBitwiseXor */
    case 199: wop = TANDEM__WG_AND; break;     /* OpBitwiseAnd */
    case 113:                                  /* OpUConvert */
    case 114: wop = TANDEM__WG_CONVERT; break; /* OpSConvert */
    default: return false;
  }
  return tandem__wg_op(b, wop, x, y, 0, out);
}

/* Size and alignment of type |id| in Workgroup memory; false when unknown.
 * Alignments never depend on a value (an array's is its element's). */
static bool tandem__wg_type(tandem__wg_build_t *b, uint32_t id, int depth, tandem__wg_expr_t *size,
                            uint64_t *align) {
  if (id >= b->bound || !b->at[id] || depth > 32) return false;
  const uint32_t *ins = &b->w[b->at[id]];
  uint32_t count = ins[0] >> 16, op = ins[0] & 0xFFFFu;
  tandem__wg_expr_t es, len;
  uint64_t ea;
  switch (op) {
    case OP_TYPE_BOOL:
      *size = tandem__wg_const(4);
      *align = 4;
      return true;
    case OP_TYPE_INT:
    case OP_TYPE_FLOAT:
      if (count < 3 || ins[2] < 8) return false;
      *size = tandem__wg_const(ins[2] / 8);
      *align = ins[2] / 8;
      return true;
    case OP_TYPE_VECTOR:
    case OP_TYPE_MATRIX:
      /* Components are scalars and columns vectors (spirv-val): constant. */
      if (count < 4 || !tandem__wg_type(b, ins[2], depth + 1, &es, &ea) || es.node >= 0)
        return false;
      *size = tandem__wg_const(es.value * ins[3]);
      *align = op == OP_TYPE_VECTOR && ins[3] == 3 ? es.value * 4 : es.value * ins[3];
      if (op == OP_TYPE_MATRIX) *align = ea;
      return true;
    case OP_TYPE_ARRAY:
      if (count < 4 || !tandem__wg_type(b, ins[2], depth + 1, &es, &ea) ||
          !tandem__wg_value(b, ins[3], 0, &len))
        return false;
      /* The element padded to its alignment, times the length. */
      if (!tandem__wg_op(b, TANDEM__WG_ALIGN, es, es, ea, &es)) return false;
      *align = ea;
      return tandem__wg_op(b, TANDEM__WG_ARRAY, es, len, 0, size);
    case OP_TYPE_STRUCT: {
      tandem__wg_expr_t off = tandem__wg_const(0);
      uint64_t max_align = 1;
      for (uint32_t m = 2; m < count; m++) {
        if (!tandem__wg_type(b, ins[m], depth + 1, &es, &ea) ||
            !tandem__wg_op(b, TANDEM__WG_ALIGN, off, off, ea, &off) ||
            !tandem__wg_op(b, TANDEM__WG_ADD, off, es, 0, &off))
          return false;
        if (ea > max_align) max_align = ea;
      }
      *align = max_align;
      return tandem__wg_op(b, TANDEM__WG_ALIGN, off, off, max_align, size);
    }
    default: return false;
  }
}

/* Adds Workgroup variable |var| (an OpVariable's words) to |*total|; false:
 * its size is unknown. */
static bool tandem__wg_variable(tandem__wg_build_t *b, const uint32_t *var,
                                tandem__wg_expr_t *total) {
  uint32_t ptr = var[1];
  const uint32_t *p = ptr < b->bound && b->at[ptr] ? &b->w[b->at[ptr]] : NULL;
  tandem__wg_expr_t size;
  uint64_t align;
  if (!p || (p[0] & 0xFFFFu) != OP_TYPE_POINTER || (p[0] >> 16) < 4 ||
      !tandem__wg_type(b, p[3], 0, &size, &align))
    return false;
  return tandem__wg_op(b, TANDEM__WG_ALIGN, *total, *total, align, total) &&
         tandem__wg_op(b, TANDEM__WG_ADD, *total, size, 0, total);
}

static atomic_uint_fast64_t tandem__spirv_walks;
uint64_t tandem_spirv_walks(void) { return atomic_load(&tandem__spirv_walks); }

tandem_status_t tandem_spirv_scan(const uint32_t *w, size_t n, const char *entry, const char *name,
                                  tandem__kernel_interface_t *out) {
  atomic_fetch_add_explicit(&tandem__spirv_walks, 1, memory_order_relaxed);
  tandem__spv_scan_t sc = {.w = w, .n = n, .name = name};
  for (int d = 0; d < 3; d++) out->local_size_spec[d] = -1;
  out->local_size_mode_at = 0;
  out->spirv_version = n >= 2 ? w[1] : 0;
  const uint32_t bound = n >= 5 ? w[3] : 0;
  if (n < 5 || bound == 0 || bound > (1u << 22))
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL, "kernel '%s': SPIR-V header id bound %u", name,
                       bound);
  /* Pass 1: check instruction framing, count definitions. */
  size_t defs = 0;
  for (size_t i = 5; i < n;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xFFFFu;
    if (count == 0 || count > n - i)
      return TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                         "kernel '%s': SPIR-V instruction at word %zu has word count %u "
                         "(module has %zu words)",
                         name, i, count, n);
    if (tandem__is_def(op)) defs++;
    i += count;
  }
  sc.defs = calloc(defs ? defs : 1, sizeof *sc.defs);
  /* SpecId per result id, -1 when none (indexed by id < bound). */
  int64_t *spec_of = malloc((size_t)bound * sizeof *spec_of);
  /* Word index of each id's OpName string, 0 when none. */
  uint32_t *name_at = calloc(bound, sizeof *name_at);
  /* Word index of the instruction defining each type, constant or variable
   * id, 0 when none (the workgroup memory's types and constants). */
  uint32_t *def_at = calloc(bound, sizeof *def_at);
  if (!sc.defs || !spec_of || !name_at || !def_at) {
    free(sc.defs);
    free(spec_of);
    free(name_at);
    free(def_at);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "kernel '%s': scanning %zu SPIR-V words", name,
                       n);
  }
  for (uint32_t i = 0; i < bound; i++) spec_of[i] = -1;

  tandem_status_t s = TANDEM_OK;
  uint32_t entry_id = 0, builtin_size_id = 0;
  bool entry_found = false;
  uint32_t features = 0;
  bool clock_capability = false;
  /* Pass 2: definitions, decorations, capabilities, the entry point. */
  for (size_t i = 5; i < n && s == TANDEM_OK;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xFFFFu;
    const uint32_t *o = &w[i + 1]; /* operands */
    uint32_t oc = count - 1;
    /* Result ids: types put it first, constants and variables second. */
    bool type_def = op == OP_TYPE_BOOL || op == OP_TYPE_INT || op == OP_TYPE_FLOAT ||
                    op == OP_TYPE_VECTOR || op == OP_TYPE_MATRIX || op == OP_TYPE_ARRAY ||
                    op == OP_TYPE_STRUCT || op == OP_TYPE_POINTER;
    if (type_def && oc >= 1 && o[0] < bound) def_at[o[0]] = (uint32_t)i;
    if (((tandem__is_def(op) && !type_def) || op == OP_VARIABLE) && oc >= 2 && o[1] < bound)
      def_at[o[1]] = (uint32_t)i;
    if (op == OP_CAPABILITY && oc >= 1) {
      const char *what;
      int64_t bit = tandem__capability_feature(o[0], &what);
      if (bit < 0 && o[0] == 5347)
        s = TANDEM_FAIL(TANDEM_ERROR_CONTRACT,
                        "kernel '%s': declares capability %s: memory reached through device "
                        "addresses is invisible to the contract, so tandem cannot order it; "
                        "bind the buffers as storage buffers instead",
                        name, what);
      else if (bit < 0 && what)
        s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                        "kernel '%s': needs SPIR-V capability %s, which tandem does not enable",
                        name, what);
      else if (bit < 0)
        s = TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                        "kernel '%s': needs SPIR-V capability %u, which tandem does not know "
                        "how to enable (see spirv.h's SpvCapability for its name)",
                        name, o[0]);
      else features |= (uint32_t)bit;
      if (o[0] == CAPABILITY_SHADER_CLOCK_KHR) clock_capability = true;
    } else if (op == OP_ENTRY_POINT && oc >= 3 && !entry_found) {
      /* The name is a nul-terminated string in words o[2..]. */
      size_t max = (size_t)(oc - 2) * 4;
      const char *ename = (const char *)&o[2];
      if (o[0] == MODEL_GL_COMPUTE && memchr(ename, 0, max) && strcmp(ename, entry) == 0) {
        entry_id = o[1];
        entry_found = true;
      }
    } else if (op == OP_NAME && oc >= 2) {
      if (o[0] < bound && memchr(&o[1], 0, (size_t)(oc - 1) * 4)) name_at[o[0]] = (uint32_t)(i + 2);
    } else if (op == OP_DECORATE && oc >= 3 && o[1] == DECORATION_SPEC_ID) {
      if (o[0] < bound) spec_of[o[0]] = o[2];
    } else if (op == OP_DECORATE && oc >= 3 && o[1] == DECORATION_BUILTIN &&
               o[2] == BUILTIN_WORKGROUP_SIZE) {
      builtin_size_id = o[0];
    } else if (tandem__is_def(op)) {
      tandem__spv_def_t *d = &sc.defs[sc.def_count++];
      d->opcode = (uint16_t)op;
      if (op == OP_TYPE_BOOL && oc >= 1) {
        d->id = o[0];
      } else if (op == OP_TYPE_INT && oc >= 3) {
        d->id = o[0], d->a = o[1], d->b = o[2];
      } else if (op == OP_TYPE_FLOAT && oc >= 2) {
        d->id = o[0], d->a = o[1];
      } else if (op == OP_TYPE_VECTOR && oc >= 3) {
        d->id = o[0], d->type = o[1], d->a = o[2];
      } else if (oc >= 2) { /* constants: result type, result id, ... */
        d->type = o[0], d->id = o[1];
        if (op == OP_CONSTANT || op == OP_SPEC_CONSTANT) {
          d->a = oc >= 3 ? o[2] : 0;
          d->b = oc >= 4 ? o[3] : 0;
        } else if (op == OP_CONSTANT_COMPOSITE || op == OP_SPEC_CONSTANT_COMPOSITE) {
          d->first_operand = (uint32_t)(i + 3);
          d->operand_count = oc - 2;
        }
      } else {
        s = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                        "kernel '%s': SPIR-V opcode %u at word %zu is too short", name, op, i);
      }
    }
    i += count;
  }
  if (s == TANDEM_OK) qsort(sc.defs, sc.def_count, sizeof *sc.defs, tandem__def_cmp);

  /* Pass 3: execution modes of the entry point, subgroup operand types,
   * the clock reads' scopes, the Workgroup variables' sizes (in module
   * order). */
  bool have_local_size = false;
  out->workgroup.known = true;
  out->workgroup.count = 0;
  tandem__wg_build_t wg = {.w = w,
                           .bound = bound,
                           .at = def_at,
                           .spec_of = spec_of,
                           .out = &out->workgroup};
  tandem__wg_expr_t wg_total = tandem__wg_const(0);
  for (size_t i = 5; i < n && s == TANDEM_OK;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xFFFFu;
    const uint32_t *o = &w[i + 1];
    uint32_t oc = count - 1;
    /* LocalSizeId on any entry point: the module needs maintenance4
     * (VUID-RuntimeSpirv-LocalSizeId-06434). */
    if (op == OP_EXECUTION_MODE_ID && oc >= 2 && o[1] == MODE_LOCAL_SIZE_ID)
      features |= TANDEM_SHADER_LOCAL_SIZE_ID;
    if ((op == OP_EXECUTION_MODE || op == OP_EXECUTION_MODE_ID) && oc >= 5 && o[0] == entry_id &&
        entry_found) {
      if (op == OP_EXECUTION_MODE && o[1] == MODE_LOCAL_SIZE) {
        for (int d = 0; d < 3; d++) out->local_size[d] = o[2 + d], out->local_size_spec[d] = -1;
        out->local_size_mode_at = (uint32_t)i;
        have_local_size = true;
      } else if (op == OP_EXECUTION_MODE_ID && o[1] == MODE_LOCAL_SIZE_ID) {
        static const char *const where[3] = {"LocalSizeId x", "LocalSizeId y", "LocalSizeId z"};
        for (int d = 0; d < 3 && s == TANDEM_OK; d++)
          s = tandem__size_component(&sc, o[2 + d], spec_of, bound, &out->local_size[d],
                                     &out->local_size_spec[d], where[d]);
        out->local_size_mode_at = 0;
        have_local_size = true;
      }
    } else if (op >= OP_GROUP_NON_UNIFORM_FIRST && op <= OP_GROUP_NON_UNIFORM_LAST && oc >= 1) {
      uint32_t width = tandem__type_width(&sc, o[0]);
      if (width && width != 32) features |= TANDEM_SHADER_SUBGROUP_EXTENDED_TYPES;
    } else if (op == OP_READ_CLOCK_KHR) {
      uint32_t bit = 0;
      s = tandem__clock_feature(&sc, i, &bit);
      features |= bit;
    } else if (op == OP_VARIABLE && oc >= 3 && o[2] == STORAGE_WORKGROUP && out->workgroup.known) {
      out->workgroup.known = tandem__wg_variable(&wg, &w[i], &wg_total);
    } else if (tandem__is_def(op) && !tandem__is_type_op(op) && oc >= 2 &&
               !tandem__is_data_type(w, def_at, bound, o[0])) {
      /* Debian 12's spirv-val passes `OpSpecConstantOp %void IAdd ..`, and
       * lavapipe crashed compiling it (fuzz/regressions/fuzz_kernel/
       * spec_constant_op_void_type). */
      s = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                      "kernel '%s': %s %%%u at word %zu has result type %%%u, which is not a "
                      "scalar, vector or composite type; no driver can compile it",
                      name, tandem__constant_op_name(op), o[1], i, o[0]);
    }
    i += count;
  }
  /* The capability without a clock read still needs VK_KHR_shader_clock
   * enabled: shaderSubgroupClock, which comes with it everywhere (vk.xml
   * requires it of the extension), says so. */
  if (clock_capability && !(features & (TANDEM_SHADER_SUBGROUP_CLOCK | TANDEM_SHADER_DEVICE_CLOCK)))
    features |= TANDEM_SHADER_SUBGROUP_CLOCK;
  /* The total is the last node: a constant one, or the last addition. */
  if (s == TANDEM_OK && out->workgroup.known) tandem__wg_index(&wg, wg_total);
  if (s == TANDEM_OK && out->workgroup.known && wg.full)
    s = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                    "kernel '%s': its workgroup (shared) memory takes more than %u terms of "
                    "its specialization constants to compute, so tandem cannot check it "
                    "against the device's maxComputeSharedMemorySize",
                    name, TANDEM__MAX_WG_NODES);
  assert(s != TANDEM_OK || !out->workgroup.known || wg_total.node < 0 ||
         (uint32_t)wg_total.node + 1 == out->workgroup.count);
  if (!out->workgroup.known) out->workgroup.count = 0;
  /* The WorkgroupSize built-in overrides the execution mode (SPIR-V 2.2). */
  if (s == TANDEM_OK && builtin_size_id) {
    const tandem__spv_def_t *c = tandem__def(&sc, builtin_size_id);
    if (!c || (c->opcode != OP_CONSTANT_COMPOSITE && c->opcode != OP_SPEC_CONSTANT_COMPOSITE) ||
        c->operand_count != 3) {
      s = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                      "kernel '%s': the WorkgroupSize built-in %%%u is not a 3-component "
                      "constant; tandem cannot tell the workgroup size",
                      name, builtin_size_id);
    } else {
      static const char *const where[3] = {"WorkgroupSize x", "WorkgroupSize y", "WorkgroupSize z"};
      for (int d = 0; d < 3 && s == TANDEM_OK; d++)
        s = tandem__size_component(&sc, w[c->first_operand + d], spec_of, bound,
                                   &out->local_size[d], &out->local_size_spec[d], where[d]);
      out->local_size_mode_at = 0; /* the built-in overrides the mode: not rewritable */
      have_local_size = true;
    }
  }
  if (s == TANDEM_OK && entry_found && !have_local_size)
    s = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                    "kernel '%s': entry point '%s' declares no workgroup size (no LocalSize, "
                    "LocalSizeId or WorkgroupSize built-in)",
                    name, entry);

  /* Every scalar spec constant with a SpecId, in declaration order. */
  for (size_t i = 5; i < n && s == TANDEM_OK;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xFFFFu;
    const uint32_t *o = &w[i + 1];
    uint32_t oc = count - 1;
    if ((op == OP_SPEC_CONSTANT || op == OP_SPEC_CONSTANT_TRUE || op == OP_SPEC_CONSTANT_FALSE) &&
        oc >= 2 && o[1] < bound && spec_of[o[1]] >= 0) {
      if (out->spec_count == TANDEM__MAX_REFLECTED_SPECS) {
        s = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                        "kernel '%s': more than %u specialization constants", name,
                        TANDEM__MAX_REFLECTED_SPECS);
        break;
      }
      tandem__reflected_spec_t *r = &out->specs[out->spec_count++];
      r->spec_id = (uint32_t)spec_of[o[1]];
      if (name_at[o[1]]) {
        const char *nm = (const char *)&w[name_at[o[1]]];
        size_t len = strlen(nm); /* nul-terminated: checked when recorded */
        if (len >= sizeof r->name) len = sizeof r->name - 1;
        memcpy(r->name, nm, len);
        r->name[len] = '\0';
      }
      if (op != OP_SPEC_CONSTANT) {
        r->kind = TANDEM__SPEC_BOOL;
        r->width = 1;
        r->default_bits = op == OP_SPEC_CONSTANT_TRUE;
      } else {
        const tandem__spv_def_t *t = tandem__def(&sc, o[0]);
        if (!t || (t->opcode != OP_TYPE_INT && t->opcode != OP_TYPE_FLOAT)) {
          s = TANDEM_FAIL(TANDEM_ERROR_INVALID_KERNEL,
                          "kernel '%s': specialization constant %u has a type tandem cannot "
                          "read",
                          name, r->spec_id);
          break;
        }
        r->kind = t->opcode == OP_TYPE_INT ? TANDEM__SPEC_INT : TANDEM__SPEC_FLOAT;
        r->width = t->a;
        r->is_signed = t->opcode == OP_TYPE_INT && t->b;
        uint64_t lo = oc >= 3 ? o[2] : 0, hi = oc >= 4 ? o[3] : 0;
        r->default_bits = r->width > 32 ? (lo | hi << 32) : lo;
        /* Narrow types keep their bits in the low word (sign-extended for
         * signed integers in SPIR-V): keep only |width| bits. */
        if (r->width < 32) r->default_bits &= (1ull << r->width) - 1;
      }
    }
    i += count;
  }
  out->shader_features = features;
  free(sc.defs);
  free(spec_of);
  free(name_at);
  free(def_at);
  return s;
}

bool tandem_spirv_workgroup_bytes(const tandem__wg_terms_t *terms,
                                  const tandem__spec_entry_t *specs, uint32_t spec_count,
                                  uint64_t *out_bytes) {
  *out_bytes = 0;
  if (!terms->known || terms->count == 0 || terms->count > TANDEM__MAX_WG_NODES) return false;
  uint64_t v[TANDEM__MAX_WG_NODES];
  for (uint32_t i = 0; i < terms->count; i++) {
    const tandem__wg_node_t *n = &terms->nodes[i];
    switch ((tandem__wg_op_t)n->op) {
      case TANDEM__WG_CONST: v[i] = n->value; break;
      case TANDEM__WG_SPEC:
      case TANDEM__WG_SPEC_BOOL:
        v[i] = n->value;
        for (uint32_t k = 0; k < spec_count; k++) /* the last entry for the id wins */
          if (specs[k].spec_id == n->spec_id)
            v[i] = n->op == TANDEM__WG_SPEC_BOOL ? specs[k].bits != 0 : specs[k].bits;
        break;
      default:
        /* Straight-line: operands come first (the scan wrote them so). */
        assert(n->a < i && n->b < i);
        if (n->a >= i || n->b >= i || !tandem__wg_apply(n->op, v[n->a], v[n->b], n->value, &v[i]))
          return false;
        break;
    }
  }
  *out_bytes = v[terms->count - 1];
  return true;
}
