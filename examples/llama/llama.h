/* SPDX-License-Identifier: MIT */
/*
 * llama.h — what the Llama decoder example's three files share: the model's
 * configuration (from transformers' config.json), its tensors (in the mmapped
 * safetensors files, never copied whole), the f16 conversions every weight
 * goes through before the GPU or the CPU reference sees it, and the CPU
 * reference itself. The GPU side is llama.c; loading is safetensors.c; the
 * reference is reference.c.
 */
#ifndef TANDEM_EXAMPLE_LLAMA_H_
#define TANDEM_EXAMPLE_LLAMA_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct llama_config {
  uint32_t dim;      /* hidden_size */
  uint32_t ffn;      /* intermediate_size */
  uint32_t layers;   /* num_hidden_layers */
  uint32_t heads;    /* num_attention_heads */
  uint32_t kv_heads; /* num_key_value_heads (grouped-query attention) */
  uint32_t head_dim; /* head_dim, or hidden_size / num_attention_heads */
  uint32_t vocab;    /* vocab_size */
  uint32_t max_pos;  /* max_position_embeddings */
  float eps;         /* rms_norm_eps */
  double rope_theta; /* rope_theta (or rope_parameters.rope_theta) */
  bool tied;         /* the LM head is the embedding */
  /* rope_type "llama3": the frequency scaling of Llama 3.1 and later */
  bool rope_llama3;
  double rope_factor, rope_low_freq, rope_high_freq, rope_original_max_pos;
} llama_config_t;

typedef enum llama_dtype { LLAMA_F16, LLAMA_BF16, LLAMA_F32 } llama_dtype_t;

/* One tensor in a mapped safetensors file: row-major, |rows| x |cols|
 * (a vector has rows 1). */
typedef struct llama_tensor {
  llama_dtype_t dtype;
  uint64_t rows, cols;
  const uint8_t *data;
} llama_tensor_t;

typedef struct llama_layer {
  llama_tensor_t q, k, v, o, gate, up, down, attn_norm, mlp_norm;
} llama_layer_t;

typedef struct llama_model {
  llama_config_t c;
  llama_tensor_t embed, head, norm; /* head is embed when tied */
  llama_layer_t *layer;             /* [c.layers] */
  uint32_t file_count;
  void *maps[64]; /* the mmapped safetensors files */
  size_t map_bytes[64];
  uint64_t weight_bytes;    /* of the checkpoint's tensors as stored */
  uint32_t dtype_counts[3]; /* tensors per llama_dtype_t */
} llama_model_t;

/* Reads |dir|/config.json and |dir|/model.safetensors (or the shards named by
 * model.safetensors.index.json). On failure prints a message naming the
 * file, the tensor and the numbers to stderr and returns false. */
bool llama_load(const char *dir, llama_model_t *m);
void llama_unload(llama_model_t *m);
const char *llama_dtype_name(llama_dtype_t dtype);

/* The value of element |i| as the GPU holds it: weights rounded to f16
 * (bf16 and f32 checkpoints are converted at load), and as f32 for the
 * norms' gains (exact for every stored type). */
uint16_t llama_weight_f16(const llama_tensor_t *t, uint64_t i);
float llama_gain_f32(const llama_tensor_t *t, uint64_t i);
uint16_t llama_f16_from_f32(float f);
float llama_f32_from_f16(uint16_t h);

/* The (cos, sin) table of RoPE, [max_seq][head_dim / 2][2], in double
 * precision rounded to float, with rope_theta and llama3 scaling. */
void llama_rope_table(const llama_config_t *c, uint32_t max_seq, float *table);

/* The CPU reference: the same model, f32 activations with double sums, the
 * same f16 weights. */
typedef struct llama_reference llama_reference_t;
llama_reference_t *llama_reference_create(const llama_model_t *m, uint32_t max_seq);
/* Runs position |pos| for |token| (positions in order from 0) and writes
 * the vocab logits. */
void llama_reference_step(llama_reference_t *r, uint32_t pos, uint32_t token, float *logits);
void llama_reference_destroy(llama_reference_t *r);

#endif
