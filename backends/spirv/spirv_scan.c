/* SPDX-License-Identifier: MIT */
/*
 * spirv_scan.c — a small scanner over validated SPIR-V words for what
 * SPIRV-Cross does not give safely: the declared capabilities (mapped to
 * tandem_shader_feature_t bits), every scalar specialization constant with its
 * SpecId, type and default, the workgroup size (WorkgroupSize built-in,
 * LocalSizeId or LocalSize of the chosen entry point) and which SpecIds set
 * it, and subgroup operations on 8/16/64-bit types.
 *
 * It runs after spirv-val accepted the module and before SPIRV-Cross sees it;
 * even so it trusts nothing: every operand it reads is bounds-checked, and a
 * shape it cannot interpret is INVALID_KERNEL, never a guess. It allocates one
 * table (types and constants, sorted by id) and frees it before returning.
 */
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

tandem_status_t tandem_spirv_scan(const uint32_t *w, size_t n, const char *entry, const char *name,
                                  tandem__kernel_interface_t *out) {
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
  if (!sc.defs || !spec_of || !name_at) {
    free(sc.defs);
    free(spec_of);
    free(name_at);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "kernel '%s': scanning %zu SPIR-V words", name,
                       n);
  }
  for (uint32_t i = 0; i < bound; i++) spec_of[i] = -1;

  tandem_status_t s = TANDEM_OK;
  uint32_t entry_id = 0, builtin_size_id = 0;
  bool entry_found = false;
  uint32_t features = 0;
  /* Pass 2: definitions, decorations, capabilities, the entry point. */
  for (size_t i = 5; i < n && s == TANDEM_OK;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xFFFFu;
    const uint32_t *o = &w[i + 1]; /* operands */
    uint32_t oc = count - 1;
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

  /* Pass 3: execution modes of the entry point, subgroup operand types. */
  bool have_local_size = false;
  for (size_t i = 5; i < n && s == TANDEM_OK;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xFFFFu;
    const uint32_t *o = &w[i + 1];
    uint32_t oc = count - 1;
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
    }
    i += count;
  }
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
  return s;
}

/*--------------------------------------------------------------------------
 * Workgroup (shared) memory after specialization.
 *
 * Array lengths of Workgroup variables are often specialization constants or
 * expressions of them (OpSpecConstantOp), so the size is known only once the
 * values are: this evaluates the module's constants with the resolved values
 * and sums the Workgroup variables' sizes (natural layout, no padding beyond
 * each member's own alignment). An expression it cannot evaluate leaves the
 * size unknown rather than guessed.
 *--------------------------------------------------------------------------*/

enum {
  OP_TYPE_MATRIX = 24,
  OP_TYPE_ARRAY = 28,
  OP_TYPE_STRUCT = 30,
  OP_TYPE_POINTER = 32,
  OP_VARIABLE = 59,
  STORAGE_WORKGROUP = 4,
};

typedef struct tandem__wg_scan {
  const uint32_t *w;
  size_t n;
  uint32_t bound;
  uint32_t *at;     /* word index of the instruction defining each id, 0 none */
  int64_t *spec_of; /* SpecId of each id, -1 none */
  const tandem__spec_entry_t *specs;
  uint32_t spec_count;
} tandem__wg_scan_t;

/* Value of integer/bool constant |id| after specialization; false when it is
 * not one this evaluator knows. */
static bool tandem__wg_value(const tandem__wg_scan_t *s, uint32_t id, int depth, uint64_t *out) {
  if (id >= s->bound || !s->at[id] || depth > 32) return false;
  const uint32_t *ins = &s->w[s->at[id]];
  uint32_t count = ins[0] >> 16, op = ins[0] & 0xFFFFu;
  if (op == OP_CONSTANT || op == OP_SPEC_CONSTANT) {
    if (count < 4) return false;
    uint64_t v = ins[3] | (count >= 5 ? (uint64_t)ins[4] << 32 : 0);
    if (op == OP_SPEC_CONSTANT && s->spec_of[id] >= 0)
      for (uint32_t k = 0; k < s->spec_count; k++)
        if (s->specs[k].spec_id == (uint64_t)s->spec_of[id]) v = s->specs[k].bits;
    *out = v;
    return true;
  }
  if (op == OP_CONSTANT_TRUE || op == OP_CONSTANT_FALSE) {
    *out = op == OP_CONSTANT_TRUE;
    return true;
  }
  if (op == OP_SPEC_CONSTANT_TRUE || op == OP_SPEC_CONSTANT_FALSE) {
    uint64_t v = op == OP_SPEC_CONSTANT_TRUE;
    if (s->spec_of[id] >= 0)
      for (uint32_t k = 0; k < s->spec_count; k++)
        if (s->specs[k].spec_id == (uint64_t)s->spec_of[id]) v = s->specs[k].bits != 0;
    *out = v;
    return true;
  }
  if (op != OP_SPEC_CONSTANT_OP || count < 5) return false;
  uint32_t sub = ins[3];
  uint64_t a = 0, b = 0;
  if (!tandem__wg_value(s, ins[4], depth + 1, &a)) return false;
  if (count >= 6 && !tandem__wg_value(s, ins[5], depth + 1, &b)) return false;
  switch (sub) {
    case 128: *out = a + b; return true; /* OpIAdd */
    case 130: *out = a - b; return true; /* OpISub */
    case 132: *out = a * b; return true; /* OpIMul */
    case 134:
      if (!b) return false;
      *out = a / b;
      return true; /* OpUDiv */
    case 137:
      if (!b) return false;
      *out = a % b;
      return true;                                     /* OpUMod */
    case 194: *out = b < 64 ? a >> b : 0; return true; /* OpShiftRightLogical */
    case 196: *out = b < 64 ? a << b : 0; return true; /* OpShiftLeftLogical */
    case 197: *out = a | b; return true;               /* OpBitwiseOr */
    case 198: *out = a ^ b; return true;               /* OpBitwiseXor */
    case 199: *out = a & b; return true;               /* OpBitwiseAnd */
    case 113:
    case 114: *out = a; return true; /* OpUConvert, OpSConvert */
    default: return false;
  }
}

/* Size and alignment of type |id| in Workgroup memory; false when unknown. */
static bool tandem__wg_type(const tandem__wg_scan_t *s, uint32_t id, int depth, uint64_t *size,
                            uint64_t *align) {
  if (id >= s->bound || !s->at[id] || depth > 32) return false;
  const uint32_t *ins = &s->w[s->at[id]];
  uint32_t count = ins[0] >> 16, op = ins[0] & 0xFFFFu;
  uint64_t es, ea, len;
  switch (op) {
    case OP_TYPE_BOOL: *size = *align = 4; return true;
    case OP_TYPE_INT:
    case OP_TYPE_FLOAT:
      if (count < 3 || ins[2] < 8) return false;
      *size = *align = ins[2] / 8;
      return true;
    case OP_TYPE_VECTOR:
    case OP_TYPE_MATRIX:
      if (count < 4 || !tandem__wg_type(s, ins[2], depth + 1, &es, &ea)) return false;
      *size = es * ins[3];
      *align = op == OP_TYPE_VECTOR && ins[3] == 3 ? es * 4 : es * ins[3];
      if (op == OP_TYPE_MATRIX) *align = ea;
      return true;
    case OP_TYPE_ARRAY:
      if (count < 4 || !tandem__wg_type(s, ins[2], depth + 1, &es, &ea) ||
          !tandem__wg_value(s, ins[3], 0, &len))
        return false;
      if (es % ea) es += ea - es % ea;
      if (len && es > UINT64_MAX / len) return false;
      *size = es * len;
      *align = ea;
      return true;
    case OP_TYPE_STRUCT: {
      uint64_t off = 0, max_align = 1;
      for (uint32_t m = 2; m < count; m++) {
        if (!tandem__wg_type(s, ins[m], depth + 1, &es, &ea)) return false;
        if (off % ea) off += ea - off % ea;
        off += es;
        if (ea > max_align) max_align = ea;
      }
      if (off % max_align) off += max_align - off % max_align;
      *size = off;
      *align = max_align;
      return true;
    }
    default: return false;
  }
}

tandem_status_t tandem_spirv_workgroup_bytes(const uint32_t *w, size_t n,
                                             const tandem__spec_entry_t *specs, uint32_t spec_count,
                                             uint64_t *out_bytes, bool *out_known) {
  *out_bytes = 0;
  *out_known = false;
  if (n < 5 || w[3] == 0 || w[3] > (1u << 22)) return TANDEM_OK;
  tandem__wg_scan_t s = {.w = w, .n = n, .bound = w[3], .specs = specs, .spec_count = spec_count};
  s.at = calloc(s.bound, sizeof *s.at);
  s.spec_of = malloc((size_t)s.bound * sizeof *s.spec_of);
  if (!s.at || !s.spec_of) {
    /* Not "unknown": the limit check must not be skipped for want of memory. */
    free(s.at);
    free(s.spec_of);
    return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                       "scanning the module's workgroup memory (id bound %u)", s.bound);
  }
  bool known = true;
  for (uint32_t i = 0; known && i < s.bound; i++) s.spec_of[i] = -1;
  /* Result ids: types put it first, constants and variables second. */
  for (size_t i = 5; known && i < n;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xFFFFu;
    if (count == 0 || count > n - i) {
      known = false;
      break;
    }
    const uint32_t *o = &w[i + 1];
    bool type_def = op == OP_TYPE_BOOL || op == OP_TYPE_INT || op == OP_TYPE_FLOAT ||
                    op == OP_TYPE_VECTOR || op == OP_TYPE_MATRIX || op == OP_TYPE_ARRAY ||
                    op == OP_TYPE_STRUCT || op == OP_TYPE_POINTER;
    bool value_def = tandem__is_def(op) && !type_def;
    if (type_def && count >= 2 && o[0] < s.bound) s.at[o[0]] = (uint32_t)i;
    if ((value_def || op == OP_VARIABLE) && count >= 3 && o[1] < s.bound) s.at[o[1]] = (uint32_t)i;
    if (op == OP_DECORATE && count >= 4 && o[1] == DECORATION_SPEC_ID && o[0] < s.bound)
      s.spec_of[o[0]] = o[2];
    i += count;
  }
  uint64_t total = 0;
  for (size_t i = 5; known && i < n;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xFFFFu;
    if (op == OP_VARIABLE && count >= 4 && w[i + 3] == STORAGE_WORKGROUP) {
      uint32_t ptr = w[i + 1];
      const uint32_t *p = ptr < s.bound && s.at[ptr] ? &w[s.at[ptr]] : NULL;
      uint64_t size, align;
      if (!p || (p[0] & 0xFFFFu) != OP_TYPE_POINTER || (p[0] >> 16) < 4 ||
          !tandem__wg_type(&s, p[3], 0, &size, &align)) {
        known = false;
        break;
      }
      if (total % align) total += align - total % align;
      total += size;
    }
    i += count;
  }
  free(s.at);
  free(s.spec_of);
  if (known) *out_bytes = total;
  *out_known = known;
  return TANDEM_OK;
}
