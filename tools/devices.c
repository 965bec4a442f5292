/* SPDX-License-Identifier: MIT */
/*
 * devices.c — `tandem devices`: every Vulkan device the loader reports (name,
 * driver, API version, queue families, the features tandem negotiates, memory,
 * timestamps) and, with --npu, the NPU and the GPU↔NPU sharing path tandem
 * chose. Text for people, --json for programs.
 *
 * Describing a device does not open it; only --npu opens the runtime's GPU
 * and NPU (the sharing path is negotiated when they open).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
  fputs("usage: tandem devices [--json] [--npu emulated|xrt] [--npu-library PATH]\n"
        "                      [--npu-profile auto|plain|xdna]\n"
        "                      [--gpu N] [--validate]\n"
        "\n"
        "Lists every Vulkan device (name, driver, Vulkan version, queue families,\n"
        "features tandem uses) and, with --npu, the NPU and the sharing path tandem\n"
        "uses between GPU N (default 0) and it.\n"
        "\n"
        "  --json            print JSON instead of text\n"
        "  --npu KIND        also open the NPU: 'emulated' (tandem's CPU test device)\n"
        "                    or 'xrt' (the system's XRT device)\n"
        "  --npu-library P   the emulated NPU's library (default: the one beside libtandem)\n"
        "  --npu-profile P   how tandem speaks to XRT: plain (FPGA-style) or xdna (Ryzen AI);\n"
        "                    default auto, from what the device reports\n"
        "  --gpu N           the GPU paired with the NPU (default: TANDEM_GPU, else 0)\n"
        "  --validate        Vulkan validation layer on\n"
        "\n"
        "exit status: 0 ok, 1 failure, 2 usage, 77 no Vulkan device.\n",
        f);
}

static const struct {
  uint32_t bit;
  const char *name;
} features[] = {
    {TANDEM_GPU_TIMELINE_SEMAPHORE, "timeline_semaphore"},
    {TANDEM_GPU_SYNCHRONIZATION2, "synchronization2"},
    {TANDEM_GPU_EXTERNAL_MEMORY_FD, "external_memory_fd"},
    {TANDEM_GPU_EXTERNAL_MEMORY_DMA_BUF, "external_memory_dma_buf"},
    {TANDEM_GPU_EXTERNAL_MEMORY_HOST, "external_memory_host"},
    {TANDEM_GPU_EXTERNAL_SEMAPHORE_FD, "external_semaphore_fd"},
    {TANDEM_GPU_CALIBRATED_TIMESTAMPS, "calibrated_timestamps"},
    {TANDEM_GPU_BUFFER_DEVICE_ADDRESS, "buffer_device_address"},
    {TANDEM_GPU_PUSH_DESCRIPTORS, "push_descriptors"},
    {TANDEM_GPU_PIPELINE_ROBUSTNESS, "pipeline_robustness"},
};
#define FEATURE_COUNT (sizeof features / sizeof features[0])

static const char *queue_cap_names[] = {"graphics", "compute", "transfer", "timestamps"};

static void print_text(const tandem_device_info_t *d) {
  printf("GPU %u: %s%s\n", d->index, d->name, d->is_cpu ? " (software)" : "");
  printf("  pipeline:   \"vulkan:%u\" (in a pipeline's \"gpus\"; \"host:0\"..\"host:3\" are the "
         "host GPU's test devices)\n",
         d->index);
  printf("  driver:     %s %s\n", d->driver_name, d->driver_info);
  printf("  vulkan:     %u.%u.%u\n", TANDEM_VERSION_MAJOR_OF(d->api_version),
         TANDEM_VERSION_MINOR_OF(d->api_version), TANDEM_VERSION_PATCH_OF(d->api_version));
  printf("  ids:        vendor 0x%04x device 0x%04x\n", d->vendor_id, d->device_id);
  printf("  memory:     %.1f MiB device-local (largest heap)\n",
         (double)d->device_local_bytes / (1024.0 * 1024.0));
  if (d->timestamp_period_ns > 0)
    printf("  timestamps: %.3f ns per tick\n", d->timestamp_period_ns);
  else printf("  timestamps: none\n");
  for (uint32_t q = 0; q < d->queue_family_count && q < TANDEM_MAX_QUEUE_FAMILIES; q++) {
    printf("  queue family %u: %u queue%s,", q, d->queue_families[q].queue_count,
           d->queue_families[q].queue_count == 1 ? "" : "s");
    for (int b = 0; b < 4; b++)
      if (d->queue_families[q].caps & (1u << b)) printf(" %s", queue_cap_names[b]);
    putchar('\n');
  }
  printf("  features:  ");
  for (size_t i = 0; i < FEATURE_COUNT; i++)
    printf(" %s%s", (d->features & features[i].bit) ? "+" : "-", features[i].name);
  putchar('\n');
  printf("  kernels:    local size up to %ux%ux%u (%u invocations), %u KiB shared memory, "
         "subgroup %u (%u..%u)\n",
         d->max_local_size[0], d->max_local_size[1], d->max_local_size[2], d->max_local_invocations,
         d->max_shared_memory_bytes / 1024, d->subgroup_size, d->min_subgroup_size,
         d->max_subgroup_size);
  printf("  shader features (enabled when tandem opens the device):\n   ");
  int col = 3;
  for (int b = 0; b < 32; b++) {
    tandem_shader_feature_t f = (tandem_shader_feature_t)(1u << b);
    const char *name = tandem_shader_feature_name(f);
    if (!strcmp(name, "unknown")) continue;
    int w = (int)strlen(name) + 2;
    if (col + w > 90) {
      printf("\n   ");
      col = 3;
    }
    printf(" %s%s", (d->shader_features & f) ? "+" : "-", name);
    col += w;
  }
  putchar('\n');
}

static void print_json_device(const tandem_device_info_t *d, bool last) {
  printf("    {\"index\": %u, \"pipeline_name\": \"vulkan:%u\", \"name\": ", d->index, d->index);
  json_write_string(stdout, d->name);
  printf(", \"driver\": ");
  json_write_string(stdout, d->driver_name);
  printf(", \"driver_info\": ");
  json_write_string(stdout, d->driver_info);
  printf(", \"vulkan\": \"%u.%u.%u\", \"vendor_id\": %u, \"device_id\": %u, \"is_cpu\": %s,\n",
         TANDEM_VERSION_MAJOR_OF(d->api_version), TANDEM_VERSION_MINOR_OF(d->api_version),
         TANDEM_VERSION_PATCH_OF(d->api_version), d->vendor_id, d->device_id,
         d->is_cpu ? "true" : "false");
  printf("     \"device_local_bytes\": %llu, \"timestamp_period_ns\": %g,\n",
         (unsigned long long)d->device_local_bytes, d->timestamp_period_ns);
  printf("     \"queue_families\": [");
  for (uint32_t q = 0; q < d->queue_family_count && q < TANDEM_MAX_QUEUE_FAMILIES; q++) {
    printf("%s{\"index\": %u, \"queues\": %u, \"caps\": [", q ? ", " : "", q,
           d->queue_families[q].queue_count);
    bool first = true;
    for (int b = 0; b < 4; b++)
      if (d->queue_families[q].caps & (1u << b)) {
        printf("%s\"%s\"", first ? "" : ", ", queue_cap_names[b]);
        first = false;
      }
    printf("]}");
  }
  printf("],\n     \"features\": {");
  for (size_t i = 0; i < FEATURE_COUNT; i++)
    printf("%s\"%s\": %s", i ? ", " : "", features[i].name,
           (d->features & features[i].bit) ? "true" : "false");
  printf("},\n     \"max_local_size\": [%u, %u, %u], \"max_local_invocations\": %u, "
         "\"max_workgroups\": [%u, %u, %u], \"max_shared_memory_bytes\": %u,\n"
         "     \"subgroup_size\": %u, \"min_subgroup_size\": %u, \"max_subgroup_size\": %u,\n"
         "     \"shader_features\": {",
         d->max_local_size[0], d->max_local_size[1], d->max_local_size[2], d->max_local_invocations,
         d->max_workgroups[0], d->max_workgroups[1], d->max_workgroups[2],
         d->max_shared_memory_bytes, d->subgroup_size, d->min_subgroup_size, d->max_subgroup_size);
  bool first = true;
  for (int b = 0; b < 32; b++) {
    tandem_shader_feature_t f = (tandem_shader_feature_t)(1u << b);
    const char *name = tandem_shader_feature_name(f);
    if (!strcmp(name, "unknown")) continue;
    printf("%s\"%s\": %s", first ? "" : ", ", name, (d->shader_features & f) ? "true" : "false");
    first = false;
  }
  printf("}}%s\n", last ? "" : ",");
}

int cli_devices_main(int argc, char **argv) {
  bool json = false, validate = false;
  cli_npu_choice_t npu = {.backend = NULL, .profile = TANDEM_NPU_PROFILE_AUTO};
  uint32_t gpu = 0;
  if (!cli_gpu_choice(NULL, &gpu)) return CLI_EXIT_USAGE; /* TANDEM_GPU, until --gpu */
  for (int i = 1; i < argc; i++) {
    const char *v;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return CLI_EXIT_OK;
    } else if (!strcmp(argv[i], "--json")) {
      json = true;
    } else if (!strcmp(argv[i], "--validate")) {
      validate = true;
    } else if (cli_take_value(argc, argv, &i, "--npu", &v)) {
      if (!cli_parse_npu(v, &npu.backend)) return CLI_EXIT_USAGE;
    } else if (cli_take_value(argc, argv, &i, "--npu-library", &v)) {
      if (!v) {
        cli_error("--npu-library needs a path");
        return CLI_EXIT_USAGE;
      }
      npu.library = v;
    } else if (cli_take_value(argc, argv, &i, "--npu-profile", &v)) {
      if (!cli_parse_npu_profile(v, &npu.profile)) return CLI_EXIT_USAGE;
    } else if (cli_take_value(argc, argv, &i, "--gpu", &v)) {
      if (!cli_parse_u32("--gpu", v, 0, 1024, &gpu)) return CLI_EXIT_USAGE;
    } else {
      cli_error("devices: unknown option '%s' (see tandem devices --help)", argv[i]);
      return CLI_EXIT_USAGE;
    }
  }

  tandem_runtime_options_t ro;
  cli_runtime_options(&ro, validate, &npu);
  ro.gpu_index = gpu;
  tandem_runtime_t *rt = NULL;
  tandem_status_t s = tandem_runtime_create(&ro, &rt);
  if (s != TANDEM_OK) {
    cli_tandem_error("creating the runtime", s);
    return cli_exit_for(s);
  }
  uint32_t count = 0;
  s = tandem_runtime_gpu_count(rt, &count);
  if (s == TANDEM_OK && count == 0) s = TANDEM_ERROR_NO_DEVICE;
  if (s != TANDEM_OK) {
    cli_tandem_error("listing Vulkan devices", s);
    tandem_runtime_destroy(rt);
    return s == TANDEM_ERROR_NO_DEVICE ? CLI_EXIT_NO_DEVICE : CLI_EXIT_FAILURE;
  }
  if (gpu >= count) { /* --gpu / TANDEM_GPU names no device: a usage error, as for run */
    int rc = cli_check_gpu(rt, gpu);
    tandem_runtime_destroy(rt);
    return rc;
  }
  tandem_device_info_t *infos = calloc(count, sizeof *infos);
  if (!infos) {
    cli_error("out of memory");
    tandem_runtime_destroy(rt);
    return CLI_EXIT_FAILURE;
  }
  for (uint32_t i = 0; i < count && s == TANDEM_OK; i++) {
    tandem_device_info_init(&infos[i]);
    s = tandem_runtime_gpu_info(rt, i, &infos[i]);
  }
  if (s != TANDEM_OK) {
    cli_tandem_error("describing a Vulkan device", s);
    free(infos);
    tandem_runtime_destroy(rt);
    return CLI_EXIT_FAILURE;
  }

  int rc = CLI_EXIT_OK;
  tandem_npu_info_t ni;
  tandem_npu_info_init(&ni);
  tandem_xrt_npu_info_t xi; /* the profile: XRT's, as both NPU backends are */
  tandem_xrt_npu_info_init(&xi);
  ni.next = &xi;
  bool have_npu = false;
  if (npu.backend != NULL) {
    {
      s = tandem_runtime_npu_info(rt, &ni);
      if (s == TANDEM_OK) {
        have_npu = true;
      } else {
        cli_tandem_error("opening the NPU", s);
        rc = s == TANDEM_ERROR_NO_DEVICE ? CLI_EXIT_NO_DEVICE : CLI_EXIT_FAILURE;
      }
    }
  }

  if (json) {
    printf("{\n  \"tandem_version\": \"%s\",\n  \"gpus\": [\n", tandem_version());
    for (uint32_t i = 0; i < count; i++) print_json_device(&infos[i], i + 1 == count);
    printf("  ],\n  \"npu\": ");
    if (have_npu) {
      printf("{\"name\": ");
      json_write_string(stdout, ni.name);
      printf(", \"backend\": ");
      json_write_string(stdout, ni.backend);
      printf(", \"emulated\": %s, \"paired_gpu\": %u, \"sharing\": ",
             ni.emulated ? "true" : "false", gpu);
      json_write_string(stdout, tandem_sharing_name(ni.sharing));
      printf(", \"profile\": ");
      json_write_string(stdout, tandem_npu_profile_name(xi.profile));
      printf(", \"drm_nodes\": [");
      for (uint32_t k = 0; k < ni.drm_node_count && k < 8; k++) {
        if (k) printf(", ");
        json_write_string(stdout, ni.drm_nodes[k]);
      }
      printf("]}\n");
    } else {
      printf("null\n");
    }
    printf("}\n");
  } else {
    for (uint32_t i = 0; i < count; i++) print_text(&infos[i]);
    if (have_npu) {
      printf("NPU: %s%s\n", ni.name, ni.emulated ? " [EMULATED: a CPU test device]" : "");
      printf("  backend:    %s\n", ni.backend);
      printf("  sharing:    %s (with GPU %u)\n", tandem_sharing_name(ni.sharing), gpu);
      printf("  profile:    %s\n", tandem_npu_profile_name(xi.profile));
      printf("  drm nodes: ");
      if (!ni.drm_node_count) printf(" none");
      for (uint32_t k = 0; k < ni.drm_node_count && k < 8; k++) printf(" %s", ni.drm_nodes[k]);
      putchar('\n');
    } else if (npu.backend == NULL) {
      printf("NPU: not requested (use --npu emulated or --npu xrt)\n");
    }
  }
  if (validate && tandem_runtime_validation_messages(rt) > 0) {
    cli_error("%llu validation message(s)",
              (unsigned long long)tandem_runtime_validation_messages(rt));
    rc = CLI_EXIT_FAILURE;
  }
  free(infos);
  tandem_runtime_destroy(rt);
  return rc;
}
