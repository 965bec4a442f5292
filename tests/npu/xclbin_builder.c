/* SPDX-License-Identifier: MIT */
/*
 * xclbin_builder.c — see xclbin_builder.h. The layout follows the structs in
 * Debian's xrt/xclbin.h (XRT 2.13): struct axlf (whose last member is the
 * first section header), further section headers, then the section payloads,
 * each 8-byte aligned.
 */
#include "tests/npu/xclbin_builder.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xclbin.h"

enum { kSectionCount = 4, kMaxArgs = 32, kMaxKernelName = 30 };

static size_t align8(size_t n) { return (n + 7u) & ~(size_t)7u; }

/* Random version-4 uuid from /dev/urandom, time + address as a fallback. */
static void fresh_uuid(unsigned char uuid[16]) {
  size_t got = 0;
  FILE *f = fopen("/dev/urandom", "rb");
  if (f) {
    got = fread(uuid, 1, 16, f);
    fclose(f);
  }
  if (got != 16) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t a = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec;
    uint64_t b = (uint64_t)(uintptr_t)uuid * 6364136223846793005u + a;
    memcpy(uuid, &a, 8);
    memcpy(uuid + 8, &b, 8);
  }
  uuid[6] = (unsigned char)((uuid[6] & 0x0f) | 0x40); /* version 4 */
  uuid[8] = (unsigned char)((uuid[8] & 0x3f) | 0x80); /* RFC 4122 variant */
}

/* One section of an xclbin: its kind, name and payload size. */
struct section {
  enum axlf_section_kind kind;
  const char *name;
  size_t size;
};

/* Lays out an xclbin of kSectionCount |sections|: struct axlf (whose last
 * member is the first section header), the other section headers, then the
 * payloads, each 8-byte aligned, zeroed for the caller to fill at
 * |out_offsets|. Sets a fresh uuid (returned in |out_uuid|). Returns the
 * size, and the image in |*out_img| (NULL when out of memory). */
static size_t assemble(const struct section sections[kSectionCount],
                       size_t out_offsets[kSectionCount], unsigned char out_uuid[16],
                       unsigned char **out_img) {
  size_t off =
      align8(sizeof(struct axlf) + (kSectionCount - 1) * sizeof(struct axlf_section_header));
  for (int i = 0; i < kSectionCount; i++) {
    out_offsets[i] = off;
    off = align8(off + sections[i].size);
  }
  size_t total = off;
  unsigned char *img = calloc(1, total);
  *out_img = img;
  if (!img) return 0;
  struct axlf *top = (struct axlf *)img;
  memcpy(top->m_magic, "xclbin2", 8);
  top->m_signature_length = -1;
  memset(top->reserved, 0xff, sizeof top->reserved);
  memset(top->m_keyBlock, 0xff, sizeof top->m_keyBlock);
  top->m_uniqueId = (uint64_t)time(NULL);

  struct axlf_header *h = &top->m_header;
  h->m_length = total;
  h->m_timeStamp = (uint64_t)time(NULL);
  h->m_versionMajor = 2;
  h->m_versionMinor = 13;
  h->m_versionPatch = 0;
  h->m_mode = XCLBIN_FLAT;
  snprintf((char *)h->m_platformVBNV, sizeof h->m_platformVBNV, "tandem_noop_test_1_0");
  fresh_uuid(out_uuid);
  memcpy(&h->uuid, out_uuid, 16);
  h->m_numSections = kSectionCount;
  for (int i = 0; i < kSectionCount; i++) {
    struct axlf_section_header *sh = &top->m_sections[i];
    sh->m_sectionKind = (uint32_t)sections[i].kind;
    snprintf(sh->m_sectionName, sizeof sh->m_sectionName, "%s", sections[i].name);
    sh->m_sectionOffset = out_offsets[i];
    sh->m_sectionSize = sections[i].size;
  }
  return total;
}

/* Appends printf output to a growing string; returns 0 or -1. */
static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) return -1;
    if (*buf && *len + (size_t)n < *cap) {
      *len += (size_t)n;
      return 0;
    }
    size_t want = (*cap ? *cap * 2 : 4096) + (size_t)n + 1;
    char *grown = realloc(*buf, want);
    if (!grown) return -1;
    if (!*buf) grown[0] = '\0';
    *buf = grown;
    *cap = want;
  }
}

/* The EMBEDDED_METADATA XML: the subset of a v++ "xclbin metadata" document
 * that XRT 2.13 reads (project.platform.device.core.kernel with its ports,
 * args and instance). Offsets are register offsets in the CU's AXI-lite
 * control window (0x10 onwards, 8 bytes per argument, inside 'range'). */
static char *metadata_xml(const char *kernel, const char *const *arg_names,
                          const int *arg_is_buffer, int argc) {
  char *x = NULL;
  size_t len = 0, cap = 0;
  int bad = 0;
  bad |= append(&x, &len, &cap,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<project name=\"%s\">\n"
                "  <platform vendor=\"tandem\" boardid=\"noop\" name=\"tandem_noop\" "
                "featureRomTime=\"0\">\n"
                "    <version major=\"1\" minor=\"0\"/>\n"
                "    <description/>\n"
                "    <device name=\"fpga0\" fpgaDevice=\"noop\" addrWidth=\"0\">\n"
                "      <core name=\"OCL_REGION_0\" target=\"hw\" type=\"clc_region\" "
                "clockFreq=\"0MHz\" numComputeUnits=\"1\">\n"
                "        <kernel name=\"%s\" language=\"c\" vlnv=\"tandem:test:%s:1.0\" "
                "preferredWorkGroupSizeMultiple=\"0\" workGroupSize=\"1\" debug=\"false\" "
                "interrupt=\"true\" hwControlProtocol=\"ap_ctrl_hs\">\n"
                "          <port name=\"M_AXI_GMEM\" mode=\"master\" range=\"0xFFFFFFFF\" "
                "dataWidth=\"32\" portType=\"addressable\" base=\"0x0\"/>\n"
                "          <port name=\"S_AXI_CONTROL\" mode=\"slave\" range=\"0x1000\" "
                "dataWidth=\"32\" portType=\"addressable\" base=\"0x0\"/>\n",
                kernel, kernel, kernel);
  for (int i = 0; i < argc && !bad; i++) {
    unsigned offset = 0x10u + 8u * (unsigned)i;
    if (arg_is_buffer[i])
      bad |= append(&x, &len, &cap,
                    "          <arg name=\"%s\" addressQualifier=\"1\" id=\"%d\" "
                    "port=\"M_AXI_GMEM\" size=\"0x8\" offset=\"0x%x\" hostOffset=\"0x0\" "
                    "hostSize=\"0x8\" type=\"int*\"/>\n",
                    arg_names[i], i, offset);
    else
      bad |= append(&x, &len, &cap,
                    "          <arg name=\"%s\" addressQualifier=\"0\" id=\"%d\" "
                    "port=\"S_AXI_CONTROL\" size=\"0x4\" offset=\"0x%x\" hostOffset=\"0x0\" "
                    "hostSize=\"0x4\" type=\"uint\"/>\n",
                    arg_names[i], i, offset);
  }
  if (!bad)
    bad |= append(&x, &len, &cap,
                  "          <compileWorkGroupSize x=\"1\" y=\"1\" z=\"1\"/>\n"
                  "          <maxWorkGroupSize x=\"1\" y=\"1\" z=\"1\"/>\n"
                  "          <string_table/>\n"
                  "          <instance name=\"%s_1\">\n"
                  "            <addrRemap base=\"0x%llx\" range=\"0x10000\" "
                  "port=\"S_AXI_CONTROL\"/>\n"
                  "          </instance>\n"
                  "        </kernel>\n"
                  "      </core>\n"
                  "    </device>\n"
                  "  </platform>\n"
                  "</project>\n",
                  kernel, (unsigned long long)TANDEM_TEST_XCLBIN_CU_BASE);
  if (bad) {
    free(x);
    return NULL;
  }
  return x;
}

static int valid_name(const char *s, size_t max) {
  if (!s || !*s || strlen(s) > max) return 0;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return 0;
  return 1;
}

int tandem_test_xclbin_build(const char *kernel, const char *const *arg_names,
                             const int *arg_is_buffer, int argc, void **out_data, size_t *out_size,
                             unsigned char out_uuid[16]) {
  *out_data = NULL;
  *out_size = 0;
  if (!valid_name(kernel, kMaxKernelName) || argc < 1 || argc > kMaxArgs || !arg_names ||
      !arg_is_buffer) {
    fprintf(stderr, "xclbin_builder: bad kernel name or argument list\n");
    return -1;
  }
  int buffers = 0;
  for (int i = 0; i < argc; i++) {
    if (!valid_name(arg_names[i], 60)) {
      fprintf(stderr, "xclbin_builder: bad name for argument %d\n", i);
      return -1;
    }
    if (arg_is_buffer[i]) buffers++;
  }

  char *xml = metadata_xml(kernel, arg_names, arg_is_buffer, argc);
  if (!xml) {
    fprintf(stderr, "xclbin_builder: out of memory\n");
    return -1;
  }

  /* Payload sizes; the count-prefixed sections hold at least one element in
   * their struct, so size them as offsetof(array) + n * element. */
  size_t mem_size = offsetof(struct mem_topology, m_mem_data) + 1 * sizeof(struct mem_data);
  size_t ip_size = offsetof(struct ip_layout, m_ip_data) + 1 * sizeof(struct ip_data);
  size_t conn_size = offsetof(struct connectivity, m_connection) +
                     (size_t)(buffers ? buffers : 1) * sizeof(struct connection);
  const struct section sections[kSectionCount] = {
      {MEM_TOPOLOGY, "mem_topology", mem_size},
      {IP_LAYOUT, "ip_layout", ip_size},
      {CONNECTIVITY, "connectivity", conn_size},
      {EMBEDDED_METADATA, "metadata", strlen(xml)},
  };
  size_t offsets[kSectionCount];
  unsigned char *img = NULL;
  size_t total = assemble(sections, offsets, out_uuid, &img);
  if (!img) {
    free(xml);
    fprintf(stderr, "xclbin_builder: out of memory\n");
    return -1;
  }
  size_t off_mem = offsets[0], off_ip = offsets[1], off_conn = offsets[2], off_xml = offsets[3];
  size_t xml_size = sections[3].size;

  struct mem_topology *mem = (struct mem_topology *)(img + off_mem);
  mem->m_count = 1;
  mem->m_mem_data[0].m_type = MEM_DDR4;
  mem->m_mem_data[0].m_used = 1;
  mem->m_mem_data[0].m_size = 1024u * 1024u; /* KiB: 1 GiB */
  mem->m_mem_data[0].m_base_address = 0;
  snprintf((char *)mem->m_mem_data[0].m_tag, sizeof mem->m_mem_data[0].m_tag, "bank0");

  struct ip_layout *ip = (struct ip_layout *)(img + off_ip);
  ip->m_count = 1;
  ip->m_ip_data[0].m_type = IP_KERNEL;
  ip->m_ip_data[0].properties = (uint32_t)AP_CTRL_HS << IP_CONTROL_SHIFT;
  ip->m_ip_data[0].m_base_address = TANDEM_TEST_XCLBIN_CU_BASE;
  snprintf((char *)ip->m_ip_data[0].m_name, sizeof ip->m_ip_data[0].m_name, "%s:%s_1", kernel,
           kernel);

  /* Scalars are not memory-connected, as in v++-made xclbins. */
  struct connectivity *conn = (struct connectivity *)(img + off_conn);
  conn->m_count = buffers;
  for (int i = 0, c = 0; i < argc; i++) {
    if (!arg_is_buffer[i]) continue;
    conn->m_connection[c].arg_index = i;
    conn->m_connection[c].m_ip_layout_index = 0;
    conn->m_connection[c].mem_data_index = 0;
    c++;
  }

  memcpy(img + off_xml, xml, xml_size);
  free(xml);
  *out_data = img;
  *out_size = total;
  return 0;
}

/* Writes |size| bytes of |data| to |path| and frees |data|. 0 or -1. */
static int write_image(const char *path, void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "xclbin_builder: cannot create %s: %s\n", path, strerror(errno));
    free(data);
    return -1;
  }
  size_t wrote = fwrite(data, 1, size, f);
  int closed = fclose(f);
  free(data);
  if (wrote != size || closed != 0) {
    fprintf(stderr, "xclbin_builder: cannot write %s\n", path);
    return -1;
  }
  return 0;
}

int tandem_test_xclbin_write(const char *path, const char *kernel, const char *const *arg_names,
                             const int *arg_is_buffer, int argc, unsigned char out_uuid[16]) {
  void *data = NULL;
  size_t size = 0;
  if (tandem_test_xclbin_build(kernel, arg_names, arg_is_buffer, argc, &data, &size, out_uuid))
    return -1;
  return write_image(path, data, size);
}

/* The EMBEDDED_METADATA of a DPU kernel as xclbinutil --add-kernel writes it
 * from aiecc's kernels.json: XRT 2.17's
 * src/runtime_src/tools/xclbinutil/KernelUtilities.cxx buildXMLKernelEntry
 * (kernel type "dpu", extended-data with subtype and functional as enum
 * numbers, no ports; every argument's size and hostSize from its type,
 * 8 for a pointer; ids in order) and addKernel (the project/platform/device/
 * core skeleton, no attributes). Arguments as mlir-aie's aiecc emits them
 * (python/compiler/aiecc/main.py emit_design_kernel_json, read in a public
 * code index): opcode uint64_t @0x0, instr char * @0x8, ninstr uint32_t
 * @0x10, then bo0.. void* from 0x14, 8 bytes apart. */
static char *dpu_metadata_xml(const char *kernel, const char *instance, int data_buffers) {
  char *x = NULL;
  size_t len = 0, cap = 0;
  int bad = append(&x, &len, &cap,
                   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<project>\n  <platform>\n    <device>\n      <core>\n"
                   "        <kernel name=\"%s\" language=\"c\" type=\"dpu\">\n"
                   "          <extended-data subtype=\"%d\" functional=\"%d\" "
                   "dpu_kernel_id=\"0x%x\"/>\n"
                   "          <arg name=\"opcode\" addressQualifier=\"0\" id=\"0\" size=\"0x8\" "
                   "offset=\"0x00\" hostOffset=\"0x0\" hostSize=\"0x8\" type=\"uint64_t\"/>\n"
                   "          <arg name=\"instr\" addressQualifier=\"1\" id=\"1\" size=\"0x8\" "
                   "offset=\"0x8\" hostOffset=\"0x0\" hostSize=\"0x8\" type=\"char *\"/>\n"
                   "          <arg name=\"ninstr\" addressQualifier=\"0\" id=\"2\" size=\"0x4\" "
                   "offset=\"0x10\" hostOffset=\"0x0\" hostSize=\"0x4\" type=\"uint32_t\"/>\n",
                   kernel, TANDEM_TEST_DPU_SUBTYPE, TANDEM_TEST_DPU_FUNCTIONAL,
                   TANDEM_TEST_DPU_KERNEL_ID);
  for (int i = 0; i < data_buffers && !bad; i++)
    bad |= append(&x, &len, &cap,
                  "          <arg name=\"bo%d\" addressQualifier=\"1\" id=\"%d\" size=\"0x8\" "
                  "offset=\"0x%x\" hostOffset=\"0x0\" hostSize=\"0x8\" type=\"void*\"/>\n",
                  i, 3 + i, 0x14u + 8u * (unsigned)i);
  if (!bad)
    bad |= append(&x, &len, &cap,
                  "          <instance name=\"%s\"/>\n        </kernel>\n      </core>\n"
                  "    </device>\n  </platform>\n</project>\n",
                  instance);
  if (bad) {
    free(x);
    return NULL;
  }
  return x;
}

int tandem_test_xclbin_build_dpu(const char *kernel, const char *instance, int data_buffers,
                                 void **out_data, size_t *out_size, unsigned char out_uuid[16]) {
  *out_data = NULL;
  *out_size = 0;
  if (!valid_name(kernel, kMaxKernelName) || !valid_name(instance, kMaxKernelName) ||
      data_buffers < 1 || data_buffers > TANDEM_TEST_DPU_MAX_BUFFERS) {
    fprintf(stderr, "xclbin_builder: bad DPU kernel name, instance or buffer count %d\n",
            data_buffers);
    return -1;
  }
  char *xml = dpu_metadata_xml(kernel, instance, data_buffers);
  if (!xml) {
    fprintf(stderr, "xclbin_builder: out of memory\n");
    return -1;
  }
  const int connections = 1 + data_buffers; /* instr, bo0.. */
  const struct section sections[kSectionCount] = {
      {MEM_TOPOLOGY, "mem_topology",
       offsetof(struct mem_topology, m_mem_data) + 2 * sizeof(struct mem_data)},
      {IP_LAYOUT, "ip_layout", offsetof(struct ip_layout, m_ip_data) + sizeof(struct ip_data)},
      {CONNECTIVITY, "connectivity",
       offsetof(struct connectivity, m_connection) +
           (size_t)connections * sizeof(struct connection)},
      {EMBEDDED_METADATA, "metadata", strlen(xml)},
  };
  size_t off[kSectionCount];
  unsigned char *img = NULL;
  size_t total = assemble(sections, off, out_uuid, &img);
  if (!img) {
    free(xml);
    fprintf(stderr, "xclbin_builder: out of memory\n");
    return -1;
  }

  /* aiecc's mem_topology (main.py, beside emit_design_kernel_json): two
   * MEM_DRAM banks, HOST (0x10000 KiB) and SRAM (0xc000 KiB), both at
   * 0x4000000. */
  struct mem_topology *mem = (struct mem_topology *)(img + off[0]);
  mem->m_count = 2;
  static const struct {
    const char *tag;
    uint64_t kib;
  } banks[2] = {{"HOST", 0x10000}, {"SRAM", 0xc000}};
  for (int b = 0; b < 2; b++) {
    mem->m_mem_data[b].m_type = MEM_DRAM;
    mem->m_mem_data[b].m_used = 1;
    mem->m_mem_data[b].m_size = banks[b].kib;
    mem->m_mem_data[b].m_base_address = 0x4000000;
    snprintf((char *)mem->m_mem_data[b].m_tag, sizeof mem->m_mem_data[b].m_tag, "%s", banks[b].tag);
  }

  /* xclbinutil's IP_PS_KERNEL for an --add-kernel instance (KernelUtilities.cxx
   * addKernel): name "<kernel>:<instance>", base address "not_used" (all
   * ones, SectionIPLayout.cxx), and the ps_kernel bit fields of XRT 2.17's
   * xclbin.h (struct ip_data): m_subtype bits 0-1, m_functional bits 4-5,
   * m_kernel_id bits 16-27 (Debian's 2.13 header has no such fields, so the
   * word is built here). Bits 8-15 (the control protocol) stay 0: AP_CTRL_HS. */
  struct ip_layout *ip = (struct ip_layout *)(img + off[1]);
  ip->m_count = 1;
  ip->m_ip_data[0].m_type = IP_PS_KERNEL;
  ip->m_ip_data[0].properties = (uint32_t)TANDEM_TEST_DPU_SUBTYPE |
                                (uint32_t)TANDEM_TEST_DPU_FUNCTIONAL << 4 |
                                (uint32_t)TANDEM_TEST_DPU_KERNEL_ID << 16;
  ip->m_ip_data[0].m_base_address = ~(uint64_t)0;
  snprintf((char *)ip->m_ip_data[0].m_name, sizeof ip->m_ip_data[0].m_name, "%s:%s", kernel,
           instance);

  /* addArgsToMemoryConnections: each argument with a memory-connection, to
   * the bank whose tag it names: instr (1) -> SRAM (bank 1), bo<i> (3 + i)
   * -> HOST (bank 0). */
  struct connectivity *conn = (struct connectivity *)(img + off[2]);
  conn->m_count = connections;
  conn->m_connection[0].arg_index = 1;
  conn->m_connection[0].m_ip_layout_index = 0;
  conn->m_connection[0].mem_data_index = 1;
  for (int i = 0; i < data_buffers; i++) {
    conn->m_connection[1 + i].arg_index = 3 + i;
    conn->m_connection[1 + i].m_ip_layout_index = 0;
    conn->m_connection[1 + i].mem_data_index = 0;
  }

  memcpy(img + off[3], xml, sections[3].size);
  free(xml);
  *out_data = img;
  *out_size = total;
  return 0;
}

int tandem_test_xclbin_write_dpu(const char *path, const char *kernel, const char *instance,
                                 int data_buffers, unsigned char out_uuid[16]) {
  void *data = NULL;
  size_t size = 0;
  if (tandem_test_xclbin_build_dpu(kernel, instance, data_buffers, &data, &size, out_uuid))
    return -1;
  return write_image(path, data, size);
}
