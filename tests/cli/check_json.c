/* SPDX-License-Identifier: MIT */
/*
 * check_json.c — CLI test helper: checks the JSON the `tandem` tool writes.
 *   check_json devices FILE      `tandem devices --json`: gpus[] non-empty,
 *                                each with name, driver, vulkan, queue_families
 *   check_json trace FILE LANES  a trace: parses, every complete event ("X")
 *                                has a tid 1..4 (lane + 1), and each lane
 *                                named in LANES (e.g. "upload,compute,download")
 *                                has at least one event on its tid
 * Exit 0 when the file passes, 1 with the reason on stderr otherwise.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *file, const char *why) {
  fprintf(stderr, "check_json: %s: %s\n", file, why);
  return 1;
}

static int check_devices(const char *file, json_t *root) {
  json_t *gpus = json_object_get(root, "gpus");
  if (!json_is_array(gpus) || json_array_size(gpus) == 0) return fail(file, "no gpus[]");
  size_t i;
  json_t *g;
  json_array_foreach(gpus, i, g) {
    if (!json_is_string(json_object_get(g, "name")) || !json_is_string(json_object_get(g, "driver")) ||
        !json_is_string(json_object_get(g, "vulkan")) ||
        !json_is_array(json_object_get(g, "queue_families")) ||
        !json_is_object(json_object_get(g, "features")))
      return fail(file, "a GPU lacks name, driver, vulkan, queue_families or features");
  }
  if (!json_object_get(root, "npu")) return fail(file, "no npu field");
  return 0;
}

static int check_trace(const char *file, json_t *root, const char *lanes) {
  static const char *names[4] = {"upload", "compute", "download", "npu"};
  json_t *events = json_object_get(root, "traceEvents");
  if (!json_is_array(events)) return fail(file, "no traceEvents[]");
  unsigned count[5] = {0};
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    const char *ph = json_string_value(json_object_get(e, "ph"));
    if (!ph || strcmp(ph, "X") != 0) continue;
    json_int_t tid = json_integer_value(json_object_get(e, "tid"));
    if (tid < 1 || tid > 4) return fail(file, "an event has a tid outside 1..4");
    if (!json_is_number(json_object_get(e, "ts")) || !json_is_number(json_object_get(e, "dur")))
      return fail(file, "an event lacks ts or dur");
    count[tid]++;
  }
  for (int l = 0; l < 4; l++) {
    if (!strstr(lanes, names[l])) continue;
    if (!count[l + 1]) {
      fprintf(stderr, "check_json: %s: no event on the %s lane (tid %d)\n", file, names[l], l + 1);
      return 1;
    }
    printf("%s lane (tid %d): %u events\n", names[l], l + 1, count[l + 1]);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: check_json devices FILE | check_json trace FILE LANES\n");
    return 2;
  }
  json_error_t err;
  json_t *root = json_load_file(argv[2], JSON_REJECT_DUPLICATES, &err);
  if (!root) {
    fprintf(stderr, "check_json: %s:%d:%d: %s\n", argv[2], err.line, err.column, err.text);
    return 1;
  }
  int rc = 2;
  if (!strcmp(argv[1], "devices")) rc = check_devices(argv[2], root);
  else if (!strcmp(argv[1], "trace") && argc > 3) rc = check_trace(argv[2], root, argv[3]);
  json_decref(root);
  return rc;
}
