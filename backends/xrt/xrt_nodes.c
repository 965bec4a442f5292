/* SPDX-License-Identifier: MIT */
/*
 * xrt_nodes.c — the device nodes an NPU backend reports in tandem_npu_info_t
 * (the vtable's device_nodes), and the only file of tandem that uses libdrm.
 *
 * core/ asks the backend and never includes libdrm: CMake gives libdrm's
 * include directory to this source file alone (CMakeLists.txt), so a libdrm
 * include anywhere else does not compile, and tests/CMakeLists.txt checks
 * that core/ names none.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "core/npu_backend.h"

#define TANDEM_XRT_MAX_NODES 8 /* the capacity of tandem_npu_info_t.drm_nodes */

/* DRM devices through libdrm (drmGetDevices2), and /dev/accel by listing it:
 * Debian 12's libdrm (2.4.114) does not know accel nodes yet. Neither exists
 * on the machines this was written on; absence is a normal, empty answer. */
void tandem_xrt_device_nodes(tandem__npu_t *npu, tandem_npu_info_t *info) {
  (void)npu;
  _Static_assert(sizeof info->drm_nodes / sizeof info->drm_nodes[0] == TANDEM_XRT_MAX_NODES,
                 "drm_nodes capacity");
  drmDevicePtr devices[TANDEM_XRT_MAX_NODES];
  int n = drmGetDevices2(0, devices, TANDEM_XRT_MAX_NODES);
  for (int i = 0; i < n; i++) {
    for (int t = 0; t < DRM_NODE_MAX; t++)
      if ((devices[i]->available_nodes & (1 << t)) && info->drm_node_count < TANDEM_XRT_MAX_NODES)
        snprintf(info->drm_nodes[info->drm_node_count++], sizeof info->drm_nodes[0], "%s",
                 devices[i]->nodes[t]);
  }
  if (n > 0) drmFreeDevices(devices, n);
  DIR *dir = opendir("/dev/accel");
  if (!dir) return;
  struct dirent *e;
  while ((e = readdir(dir)) && info->drm_node_count < TANDEM_XRT_MAX_NODES) {
    if (e->d_name[0] == '.') continue;
    snprintf(info->drm_nodes[info->drm_node_count++], sizeof info->drm_nodes[0], "/dev/accel/%.40s",
             e->d_name);
  }
  closedir(dir);
}

/* Whether an accel device bound to the amdxdna driver (AMD XDNA, Ryzen AI)
 * exists: /sys/class/accel/<node>/device/driver links to .../amdxdna. */
bool tandem_xrt_has_amdxdna(void) {
  DIR *dir = opendir("/sys/class/accel");
  if (!dir) return false;
  bool found = false;
  struct dirent *e;
  while (!found && (e = readdir(dir))) {
    if (e->d_name[0] == '.') continue;
    char link[PATH_MAX], target[PATH_MAX];
    snprintf(link, sizeof link, "/sys/class/accel/%.200s/device/driver", e->d_name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    const char *base = strrchr(target, '/');
    found = strcmp(base ? base + 1 : target, "amdxdna") == 0;
  }
  closedir(dir);
  return found;
}
