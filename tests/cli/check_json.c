/* SPDX-License-Identifier: MIT */
/*
 * check_json.c — CLI test helper: checks the JSON the `tandem` tool writes.
 *   check_json devices FILE      `tandem devices --json`: gpus[] non-empty,
 *                                each with name, driver, vulkan, queue_families
 *   check_json trace FILE LANES  a trace: parses, every complete event ("X")
 *                                has a tid 1..17 (lane id + 1), and each lane
 *                                named in LANES (e.g. "upload,compute,download",
 *                                "gpu1.upload": the names of its metadata
 *                                events) has at least one event on its tid; every
 *                                event is named by its nodes ("name #id"),
 *                                and dependency arrows (flow "s"/"f" pairs
 *                                with one id each) are present
 *   check_json run FILE WARMUP ITERATIONS
 *                                `tandem run --json`: every documented field
 *                                with its type; warmup and iterations as
 *                                given, all of them completed, only the
 *                                timed ones submitted while measuring, every
 *                                check passed, no validation message, exit 0
 *   check_json trace-valid FILE  any trace, an empty one included: it
 *                                parses, traceEvents is an array, each event
 *                                has a "ph", each "X" a tid 1..4, ts and dur
 *   check_json copies FILE       `tandem-bench --only copies --json`: no
 *                                validation message; copies.memory_types[]
 *                                non-empty; exactly one marked as tandem's
 *                                HOST_VISIBLE type, the one copies.tandem
 *                                names, and it is HOST_VISIBLE|HOST_COHERENT;
 *                                every measured type has host memcpy rates and
 *                                rows with a positive wall time and GB/s; the
 *                                rows the same as tandem's graphs are there
 * Exit 0 when the file passes, 1 with the reason on stderr otherwise.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
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
    if (!json_is_string(json_object_get(g, "name")) ||
        !json_is_string(json_object_get(g, "driver")) ||
        !json_is_string(json_object_get(g, "vulkan")) ||
        !json_is_array(json_object_get(g, "queue_families")) ||
        !json_is_object(json_object_get(g, "features")))
      return fail(file, "a GPU lacks name, driver, vulkan, queue_families or features");
  }
  if (!json_object_get(root, "npu")) return fail(file, "no npu field");
  return 0;
}

/* The trace's lanes are named by its metadata events ("thread_name", args
 * name "<lane> lane"): tid t is lane t - 1, GPU 1's lanes too ("gpu1.upload"). */
#define TRACE_TIDS 17
static int check_trace(const char *file, json_t *root, const char *lanes) {
  json_t *events = json_object_get(root, "traceEvents");
  if (!json_is_array(events)) return fail(file, "no traceEvents[]");
  unsigned count[TRACE_TIDS + 1] = {0}, starts = 0, ends = 0;
  char names[TRACE_TIDS + 1][32] = {{0}};
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    const char *ph = json_string_value(json_object_get(e, "ph"));
    json_int_t tid = json_integer_value(json_object_get(e, "tid"));
    if (ph && !strcmp(ph, "M")) {
      const char *n = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
      if (tid < 1 || tid > TRACE_TIDS || !n) return fail(file, "a lane name event is malformed");
      snprintf(names[tid], sizeof names[tid], "%s", n);
      char *lane = strstr(names[tid], " lane");
      if (lane) *lane = '\0';
      continue;
    }
    if (ph && (!strcmp(ph, "s") || !strcmp(ph, "f"))) {
      if (!json_is_integer(json_object_get(e, "id"))) return fail(file, "a flow event has no id");
      if (ph[0] == 's') starts++;
      else ends++;
      continue;
    }
    if (!ph || strcmp(ph, "X") != 0) continue;
    const char *name = json_string_value(json_object_get(e, "name"));
    if (!name || !strstr(name, " #") || !strncmp(name, "region ", 7))
      return fail(file, "an event is not named by its nodes (\"kernel #node\")");
    if (tid < 1 || tid > TRACE_TIDS) return fail(file, "an event has a tid outside 1..17");
    if (!json_is_number(json_object_get(e, "ts")) || !json_is_number(json_object_get(e, "dur")))
      return fail(file, "an event lacks ts or dur");
    count[tid]++;
  }
  if (!starts || starts != ends) return fail(file, "no dependency arrows, or unpaired flow events");
  printf("%u dependency arrows\n", starts);
  /* Each lane of the comma-separated list, by exact name. */
  char want[256];
  snprintf(want, sizeof want, "%s", lanes);
  for (char *save = NULL, *lane = strtok_r(want, ",", &save); lane;
       lane = strtok_r(NULL, ",", &save)) {
    int t = 1;
    while (t <= TRACE_TIDS && strcmp(names[t], lane) != 0) t++;
    if (t > TRACE_TIDS) {
      fprintf(stderr, "check_json: %s: no lane named '%s'\n", file, lane);
      return 1;
    }
    if (!count[t]) {
      fprintf(stderr, "check_json: %s: no event on the %s lane (tid %d)\n", file, lane, t);
      return 1;
    }
    printf("%s lane (tid %d): %u events\n", lane, t, count[t]);
  }
  return 0;
}

static int check_run(const char *file, json_t *root, long warmup, long iterations) {
  static const char *const numbers[] = {"warmup",
                                        "iterations",
                                        "completed",
                                        "wall_ns",
                                        "iterations_per_s",
                                        "span_ns",
                                        "submissions",
                                        "copied_bytes",
                                        "cache_maintenance_bytes",
                                        "imports",
                                        "npu_runs",
                                        "trace_dropped",
                                        "validation_messages",
                                        "exit_code"};
  for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
    if (!json_is_number(json_object_get(root, numbers[i]))) {
      fprintf(stderr, "check_json: %s: no number '%s'\n", file, numbers[i]);
      return 1;
    }
  json_t *gpu = json_object_get(root, "gpu"), *pipeline = json_object_get(root, "pipeline");
  if (!json_is_string(json_object_get(gpu, "name")) ||
      !json_is_integer(json_object_get(gpu, "index")))
    return fail(file, "gpu lacks name or index");
  if (!json_is_string(json_object_get(pipeline, "name")) ||
      !json_is_integer(json_object_get(pipeline, "nodes")))
    return fail(file, "pipeline lacks name or nodes");
  if (!json_object_get(root, "npu") || !json_is_boolean(json_object_get(root, "interrupted")) ||
      !json_is_array(json_object_get(root, "outputs")) || !json_object_get(root, "trace") ||
      !json_object_get(root, "timeline"))
    return fail(file, "npu, interrupted, outputs, trace or timeline missing");
#define INT(key) json_integer_value(json_object_get(root, key))
  if (INT("warmup") != warmup || INT("iterations") != iterations || INT("completed") != iterations)
    return fail(file, "warmup / iterations / completed differ from what was asked");
  if (INT("submissions") != iterations)
    return fail(file, "submissions counted while timing differ from the timed iterations "
                      "(warm-up runs leaked into the measurement?)");
  if (INT("validation_messages") != 0 || INT("exit_code") != 0)
    return fail(file, "validation messages or a non-zero exit code");
#undef INT
  if (!(json_real_value(json_object_get(root, "iterations_per_s")) > 0))
    return fail(file, "iterations_per_s is not positive");
  json_t *checks = json_object_get(root, "checks");
  if (!json_is_object(checks) || json_integer_value(json_object_get(checks, "passed")) !=
                                     json_integer_value(json_object_get(checks, "total")))
    return fail(file, "checks missing or not all passed");
  json_t *lanes = json_object_get(root, "lanes"), *l;
  size_t i;
  if (!json_is_array(lanes) || json_array_size(lanes) == 0) return fail(file, "no lanes[]");
  json_array_foreach(lanes, i, l) {
    if (!json_is_string(json_object_get(l, "lane")) ||
        !json_is_integer(json_object_get(l, "regions")) ||
        !json_is_integer(json_object_get(l, "busy_ns")) ||
        !json_is_number(json_object_get(l, "busy_fraction")))
      return fail(file, "a lane lacks lane, regions, busy_ns or busy_fraction");
  }
  printf("run summary: %ld warm-up + %ld timed iterations, %.1f iterations/s\n", warmup, iterations,
         json_real_value(json_object_get(root, "iterations_per_s")));
  return 0;
}

static int check_copies(const char *file, json_t *root) {
  json_t *msgs = json_object_get(root, "validation_messages");
  if (json_integer_value(json_object_get(msgs, "tandem")) != 0)
    return fail(file, "validation messages");
  json_t *copies = json_object_get(root, "copies");
  json_t *types = json_object_get(copies, "memory_types");
  if (!json_is_array(types) || json_array_size(types) == 0)
    return fail(file, "no copies.memory_types[]");
  json_t *host = json_object_get(json_object_get(copies, "tandem"), "host_visible");
  if (!json_is_integer(json_object_get(host, "memory_type")))
    return fail(file, "copies.tandem.host_visible.memory_type missing");
  json_int_t tandem_type = json_integer_value(json_object_get(host, "memory_type"));
  if ((json_integer_value(json_object_get(host, "flags_value")) & 6) != 6)
    return fail(file, "tandem's HOST_VISIBLE type is not HOST_VISIBLE|HOST_COHERENT");
  if (!(json_real_value(json_object_get(json_object_get(copies, "tandem"), "both_gb_per_s")) > 0))
    return fail(file, "tandem's copies were not measured");
  size_t i, k, marked = 0, same = 0;
  json_t *t, *row;
  json_array_foreach(types, i, t) {
    if (!json_is_integer(json_object_get(t, "index")) ||
        !json_is_string(json_object_get(t, "flags")) ||
        !json_is_integer(json_object_get(t, "heap")) ||
        !json_is_integer(json_object_get(t, "heap_bytes")))
      return fail(file, "a memory type lacks index, flags, heap or heap_bytes");
    if (json_is_true(json_object_get(t, "tandem_host_visible"))) {
      marked++;
      if (json_integer_value(json_object_get(t, "index")) != tandem_type)
        return fail(file, "the type marked as tandem's is not the one copies.tandem names");
    }
    if (json_object_get(t, "skipped")) continue;
    if (!(json_real_value(json_object_get(t, "host_write_gb_per_s")) > 0) ||
        !(json_real_value(json_object_get(t, "host_read_gb_per_s")) > 0))
      return fail(file, "a measured type lacks host memcpy rates");
    json_t *rows = json_object_get(t, "copies");
    if (!json_is_array(rows) || json_array_size(rows) < 3)
      return fail(file, "a type has too few copies[]");
    json_array_foreach(rows, k, row) {
      json_t *wall = json_object_get(row, "wall_us");
      if (!json_is_string(json_object_get(row, "name")) ||
          !(json_real_value(json_object_get(wall, "median")) > 0) ||
          !(json_real_value(json_object_get(row, "wall_gb_per_s")) > 0))
        return fail(file, "a copy row lacks a name, a positive wall time or GB/s");
      if (json_object_get(row, "same_as_tandem")) same++;
    }
  }
  if (marked != 1) return fail(file, "not exactly one memory type is marked as tandem's");
  if (same < 3)
    return fail(file, "the raw rows equal to tandem's upload, download and both are missing");
  printf("copies: %zu host-visible memory types, tandem's HOST_VISIBLE is type %lld\n",
         json_array_size(types), (long long)tandem_type);
  return 0;
}

/* Any trace, an empty one included: traceEvents is an array of objects,
 * each with a "ph"; complete events ("X") on tids 1..4 with ts and dur. */
static int check_trace_valid(const char *file, json_t *root) {
  json_t *events = json_object_get(root, "traceEvents");
  if (!json_is_array(events)) return fail(file, "no traceEvents array");
  for (size_t i = 0; i < json_array_size(events); i++) {
    json_t *e = json_array_get(events, i);
    const char *ph = json_string_value(json_object_get(e, "ph"));
    if (!ph) return fail(file, "an event without \"ph\"");
    if (strcmp(ph, "X")) continue;
    json_int_t tid = json_integer_value(json_object_get(e, "tid"));
    if (tid < 1 || tid > 4 || !json_is_number(json_object_get(e, "ts")) ||
        !json_is_number(json_object_get(e, "dur")))
      return fail(file, "an X event without tid 1..4, ts and dur");
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: check_json devices FILE | check_json trace FILE LANES | "
                    "check_json run FILE WARMUP ITERATIONS | check_json copies FILE | "
                    "check_json trace-valid FILE\n");
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
  else if (!strcmp(argv[1], "copies")) rc = check_copies(argv[2], root);
  else if (!strcmp(argv[1], "trace-valid")) rc = check_trace_valid(argv[2], root);
  else if (!strcmp(argv[1], "run") && argc > 4)
    rc = check_run(argv[2], root, strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10));
  json_decref(root);
  return rc;
}
