/* SPDX-License-Identifier: MIT */
/*
 * svg.c — the lane timeline picture of `tandem run --svg`: one row per lane
 * (upload, compute, NPU, download: the order data flows; then each further
 * GPU's upload, compute and download, "gpu1.compute"), one box per region
 * at its GPU start and end, coloured by lane and shaded by submission so that
 * consecutive iterations can be told apart, a time axis with ticks in µs or
 * ms, a legend with each lane's busy share, and a title naming the devices.
 *
 * Long runs are cut to their first max_submissions submissions: a picture of
 * thousands of slivers says nothing; the trace JSON has everything. Hovering
 * a box shows its details (an SVG <title>); a box wide enough is labelled
 * with its nodes (kernel / program names and node ids), and an arrow runs
 * from each region to the regions of its submission that waited for it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pipeline.h"

#define SVG_WIDTH 1200.0
#define SVG_LEFT 135.0
#define SVG_RIGHT 30.0
#define SVG_TOP 78.0
#define SVG_ROW 44.0
#define SVG_GAP 12.0
#define SVG_LEGEND_PER_LINE 5 /* legend entries per line, 210 px each */
#define SVG_LEGEND_LINE 22.0

/* Rows top to bottom: GPU 0's lanes and the NPU's in the order data flows,
 * then GPU 1's, 2's and 3's (lane ids from tandem_gpu_lane). */
#define SVG_LANES (TANDEM_LANE_COUNT + TANDEM_LANE_COUNT_GPU * (TANDEM_MAX_GPUS - 1))
static const int lane_order[SVG_LANES] = {
    TANDEM_LANE_UPLOAD,   TANDEM_LANE_COMPUTE,  TANDEM_LANE_NPU,      TANDEM_LANE_DOWNLOAD,
    TANDEM_MAX_LANES + 0, TANDEM_MAX_LANES + 1, TANDEM_MAX_LANES + 2, TANDEM_MAX_LANES + 3,
    TANDEM_MAX_LANES + 4, TANDEM_MAX_LANES + 5, TANDEM_MAX_LANES + 6, TANDEM_MAX_LANES + 7,
    TANDEM_MAX_LANES + 8};
_Static_assert(TANDEM_MAX_LANE_IDS == TANDEM_MAX_LANES + 9, "lane_order lists every GPU lane id");

/* The colour of a lane id: its kind (upload, compute, download, NPU) on any
 * GPU; -1 for a lane drawn nowhere (user lanes). */
static int lane_kind(int lane) {
  if (lane >= 0 && lane < TANDEM_LANE_COUNT) return lane;
  if (lane >= TANDEM_MAX_LANES && lane < TANDEM_MAX_LANE_IDS)
    return (lane - TANDEM_MAX_LANES) % TANDEM_LANE_COUNT_GPU;
  return -1;
}

/* Two shades per kind: even and odd submissions. */
static const char *lane_fill[TANDEM_LANE_COUNT][2] = {
    {"#4e79a7", "#7ea6d1"}, /* upload: blue */
    {"#3f8f3a", "#74bd67"}, /* compute: green */
    {"#e07b17", "#f5aa5c"}, /* download: orange */
    {"#8e5a9b", "#bd93c6"}, /* npu: purple */
};
static const char *lane_stroke[TANDEM_LANE_COUNT] = {"#2b4a6b", "#245422", "#8a4a0c", "#553660"};

static void xml_text(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*s, f);
    }
  }
}

/* A 1-2-5 step giving about |want| ticks over |span|. */
static double nice_step(double span, int want) {
  double raw = span / want;
  double mag = pow(10.0, floor(log10(raw)));
  double r = raw / mag;
  double step = r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10;
  return step * mag;
}

bool svg_write_timeline(const char *path, const tandem_trace_t *trace, const svg_options_t *o) {
  uint32_t n = 0;
  const tandem_trace_event_t *ev = tandem_trace_events(trace, &n);
  uint64_t first_sub = UINT64_MAX, last_sub = 0, max_sub_total = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (ev[i].submission < first_sub) first_sub = ev[i].submission;
    if (ev[i].submission > max_sub_total) max_sub_total = ev[i].submission;
  }
  uint64_t limit = o->max_submissions ? first_sub + o->max_submissions - 1 : UINT64_MAX;
  uint64_t t0 = UINT64_MAX, t1 = 0;
  bool present[TANDEM_MAX_LANE_IDS] = {true, true, true, false};
  uint32_t untimed = 0, shown = 0;
  for (uint32_t i = 0; i < n; i++) {
    const tandem_trace_event_t *e = &ev[i];
    if (e->submission > limit) continue;
    if (!e->gpu_start_ns || e->gpu_end_ns < e->gpu_start_ns) {
      untimed++;
      continue;
    }
    if (lane_kind((int)e->lane) >= 0) present[e->lane] = true;
    if (e->gpu_start_ns < t0) t0 = e->gpu_start_ns;
    if (e->gpu_end_ns > t1) t1 = e->gpu_end_ns;
    if (e->submission > last_sub) last_sub = e->submission;
    shown++;
  }
  if (!shown) t0 = 0, t1 = 1000;
  if (t1 <= t0) t1 = t0 + 1000;
  double span_us = (double)(t1 - t0) / 1e3;
  bool ms = span_us >= 5000;
  double unit = ms ? 1000.0 : 1.0; /* µs per axis unit */
  const char *unit_name = ms ? "ms" : "\xC2\xB5s";

  int rows = 0, row_of[TANDEM_MAX_LANE_IDS];
  for (int l = 0; l < TANDEM_MAX_LANE_IDS; l++) row_of[l] = -1;
  for (int k = 0; k < SVG_LANES; k++) {
    int l = lane_order[k];
    if (present[l]) row_of[l] = rows++;
  }
  int legend_lines = (rows + SVG_LEGEND_PER_LINE - 1) / SVG_LEGEND_PER_LINE;
  double plot_w = SVG_WIDTH - SVG_LEFT - SVG_RIGHT;
  double plot_h = rows * SVG_ROW + (rows - 1) * SVG_GAP;
  double axis_y = SVG_TOP + plot_h + 10;
  double legend_y = axis_y + 52;
  double height = legend_y + 40 + (legend_lines - 1) * SVG_LEGEND_LINE;
  double scale = plot_w / (double)(t1 - t0); /* px per ns */

  /* Written under a temporary name and renamed, like the trace: a run killed
   * meanwhile leaves no half picture (a device or FIFO is written in place). */
  struct stat st;
  bool in_place = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
  char tmp[4096 + 32];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
    cli_error("--svg: the path '%.64s...' is too long", path);
    return false;
  }
  FILE *f = fopen(in_place ? path : tmp, "w");
  if (!f) {
    cli_error("--svg: cannot write '%s': %s", path, strerror(errno));
    return false;
  }
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
          "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
          SVG_WIDTH, height, SVG_WIDTH, height);
  fprintf(f, "<text x=\"%.0f\" y=\"28\" font-size=\"18\" font-weight=\"bold\" fill=\"#222\">",
          20.0);
  xml_text(f, o->title);
  fputs("</text>\n", f);
  fprintf(f, "<text x=\"%.0f\" y=\"50\" font-size=\"13\" fill=\"#555\">", 20.0);
  xml_text(f, o->subtitle);
  if (shown)
    fprintf(f,
            " \xE2\x80\x94 showing submissions %llu\xE2\x80\x93%llu (the runtime's numbers) "
            "of %llu",
            (unsigned long long)first_sub, (unsigned long long)last_sub,
            (unsigned long long)max_sub_total);
  fputs("</text>\n", f);

  /* rows: background band and label */
  for (int k = 0; k < SVG_LANES; k++) {
    int l = lane_order[k];
    if (row_of[l] < 0) continue;
    double y = SVG_TOP + row_of[l] * (SVG_ROW + SVG_GAP);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f3f4f6\"/>\n",
            SVG_LEFT, y, plot_w, SVG_ROW);
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"14\" text-anchor=\"end\" fill=\"#222\" "
            "font-weight=\"bold\">%s</text>\n",
            SVG_LEFT - 10, y + SVG_ROW / 2 + 5, cli_lane_label(l));
  }

  /* ticks and grid */
  double step = nice_step(span_us / unit, 10);
  for (double t = 0; t <= span_us / unit + 1e-9; t += step) {
    double x = SVG_LEFT + t * unit * 1e3 * scale;
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d0d4da\" "
            "stroke-width=\"1\"/>\n",
            x, SVG_TOP - 4, x, axis_y);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">",
            x, axis_y + 16);
    if (step >= 1) fprintf(f, "%.0f", t);
    else if (step >= 0.1) fprintf(f, "%.1f", t);
    else fprintf(f, "%.2f", t);
    fputs("</text>\n", f);
  }
  fprintf(
      f,
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-width=\"1\"/>\n",
      SVG_LEFT, axis_y, SVG_LEFT + plot_w, axis_y);
  fprintf(f,
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" text-anchor=\"middle\" fill=\"#333\">time "
          "since the first region started (%s)</text>\n",
          SVG_LEFT + plot_w / 2, axis_y + 36, unit_name);

  /* dependencies: an arrow from the end of the region waited for to the
   * start of the one that waited (both of one submission), under the boxes */
  fputs("<defs><marker id=\"dep\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"7\" "
        "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#444\"/>"
        "</marker></defs>\n",
        f);
  uint32_t arrows = 0;
  for (uint32_t i = 0; i < n; i++) {
    const tandem_trace_event_t *e = &ev[i];
    if (e->submission > limit || !e->gpu_start_ns || e->gpu_end_ns < e->gpu_start_ns) continue;
    if (lane_kind((int)e->lane) < 0 || row_of[e->lane] < 0) continue;
    for (int l = 0; l < TANDEM_MAX_LANE_IDS; l++) {
      if (e->waits_for[l] < 0 || row_of[l] < 0) continue;
      const tandem_trace_event_t *src = NULL;
      for (uint32_t j = i; j-- > 0 && ev[j].submission == e->submission;)
        if (ev[j].region == (uint32_t)e->waits_for[l]) src = &ev[j];
      for (uint32_t j = i + 1; !src && j < n && ev[j].submission == e->submission; j++)
        if (ev[j].region == (uint32_t)e->waits_for[l]) src = &ev[j];
      if (!src || !src->gpu_start_ns || src->gpu_end_ns < src->gpu_start_ns) continue;
      double x1 = SVG_LEFT + (double)(src->gpu_end_ns - t0) * scale;
      double y1 = SVG_TOP + row_of[l] * (SVG_ROW + SVG_GAP) + SVG_ROW / 2;
      double x2 = SVG_LEFT + (double)(e->gpu_start_ns - t0) * scale;
      double y2 = SVG_TOP + row_of[e->lane] * (SVG_ROW + SVG_GAP) + SVG_ROW / 2;
      y1 += y2 > y1 ? SVG_ROW / 2 - 4 : -(SVG_ROW / 2 - 4); /* leave from the facing edge */
      y2 += y2 > y1 ? -(SVG_ROW / 2 - 4) : SVG_ROW / 2 - 4;
      fprintf(f,
              "<line class=\"dep\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#444\" "
              "stroke-width=\"1\" stroke-opacity=\"0.7\" marker-end=\"url(#dep)\"/>\n",
              x1, y1, x2, y2);
      arrows++;
    }
  }

  /* boxes */
  uint64_t busy[TANDEM_MAX_LANE_IDS] = {0};
  for (uint32_t i = 0; i < n; i++) {
    const tandem_trace_event_t *e = &ev[i];
    if (e->submission > limit || !e->gpu_start_ns || e->gpu_end_ns < e->gpu_start_ns) continue;
    int kind = lane_kind((int)e->lane);
    if (kind < 0 || row_of[e->lane] < 0) continue;
    busy[e->lane] += e->gpu_end_ns - e->gpu_start_ns;
    double x = SVG_LEFT + (double)(e->gpu_start_ns - t0) * scale;
    double w = (double)(e->gpu_end_ns - e->gpu_start_ns) * scale;
    if (w < 1.0) w = 1.0;
    double y = SVG_TOP + row_of[e->lane] * (SVG_ROW + SVG_GAP) + 4;
    int shade = (int)(e->submission % 2);
    bool failed = e->result != TANDEM_OK;
    fputs("<g><title>", f);
    xml_text(f, e->name);
    fprintf(f,
            " (%s lane, region %u, submission %llu: %u node%s, %llu bytes, %.1f us%s%s)</title>"
            "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" rx=\"2\" fill=\"%s\" "
            "stroke=\"%s\" stroke-width=\"%s\"/>",
            cli_lane_label((int)e->lane), e->region, (unsigned long long)e->submission,
            e->node_count, e->node_count == 1 ? "" : "s", (unsigned long long)e->bytes,
            (double)(e->gpu_end_ns - e->gpu_start_ns) / 1e3, e->copied_bytes ? ", copies" : "",
            failed ? ", FAILED" : "", x, y, w, SVG_ROW - 8,
            failed ? "#d62728" : lane_fill[kind][shade], lane_stroke[kind], w > 3 ? "0.8" : "0");
    if (w >= 6.5 * (double)strlen(e->name) + 8) { /* room for the nodes' names */
      fprintf(f,
              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" "
              "fill=\"#ffffff\">",
              x + w / 2, y + (SVG_ROW - 8) / 2 + 4);
      xml_text(f, e->name);
      fputs("</text>", f);
    } else if (w >= 26)
      fprintf(f,
              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" "
              "fill=\"#ffffff\">%llu</text>",
              x + w / 2, y + (SVG_ROW - 8) / 2 + 4, (unsigned long long)e->submission);
    fputs("</g>\n", f);
  }

  /* legend */
  int item = 0;
  for (int k = 0; k < SVG_LANES; k++) {
    int l = lane_order[k], kind = lane_kind(l);
    if (row_of[l] < 0 || kind < 0) continue;
    double lx = SVG_LEFT + (item % SVG_LEGEND_PER_LINE) * 210.0;
    double ly = legend_y + (item / SVG_LEGEND_PER_LINE) * SVG_LEGEND_LINE;
    item++;
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"16\" rx=\"2\" fill=\"%s\" "
            "stroke=\"%s\"/>\n",
            lx, ly - 12, lane_fill[kind][0], lane_stroke[kind]);
    fprintf(
        f,
        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" fill=\"#222\">%s lane: busy %.0f%%</text>\n",
        lx + 22, ly + 1, cli_lane_label(l), 100.0 * (double)busy[l] / (double)(t1 - t0));
  }
  fprintf(
      f,
      "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#555\">labels: the region's nodes "
      "(name #node), else the submission number, else none (hover for the title); the "
      "runtime numbers every submission (warm-up and staging copies too); two shades alternate by "
      "submission; %u arrows: a region waited for another%s</text>\n",
      SVG_LEFT, legend_y + 24 + (legend_lines - 1) * SVG_LEGEND_LINE, arrows,
      untimed ? "; some regions had no GPU timestamps and are not drawn" : "");
  fputs("</svg>\n", f);
  bool ok = !ferror(f);
  if (fclose(f) != 0) ok = false;
  if (ok && !in_place && rename(tmp, path) != 0) ok = false;
  if (!ok) {
    cli_error("--svg: error writing '%s': %s", path, strerror(errno));
    if (!in_place) unlink(tmp);
  }
  return ok;
}
