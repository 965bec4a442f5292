#!/bin/sh
# SPDX-License-Identifier: MIT
# check_boundary.sh SOURCE_DIR — the boundary between core/ and the backends,
# checked in the sources (ctest test_core_boundary, label "core"): core/
# includes no libdrm, Vulkan, volk or XRT header (libdrm lives in
# backends/xrt/xrt_nodes.c, the one source CMake gives its headers), and no
# core/ source but registry.c names a backend's entries or functions
# (core/registry.h: backends are found by name); the device backends include
# only core's basics; the host GPU includes no device API header. Prints what
# breaks the rule.
set -u
cd "$1" || exit 2
status=0
headers='#[[:space:]]*include[[:space:]]*[<"](xf86drm|drm[._]|libdrm/|vulkan/|volk|xrt/|experimental/xrt)'
if grep -nE "$headers" core/*.c core/*.h; then
  echo "core/ includes a backend header (above): move that code into backends/" >&2
  status=1
fi
if grep -nE 'tandem_(vk|host|xrt|emu)_[a-z_]+' core/*.c | grep -v '^core/registry\.c:'; then
  echo "core/ names a backend (above): look it up in the registry (core/registry.h)" >&2
  status=1
fi
if ! grep -q '#include <xf86drm.h>' backends/xrt/xrt_nodes.c; then
  echo "backends/xrt/xrt_nodes.c no longer lists DRM nodes with libdrm: update this check" >&2
  status=1
fi
# The host GPU (backends/host/) is a backend on host memory: it includes no
# Vulkan, volk, libdrm or XRT header, and no other backend's header.
if grep -nE "$headers" backends/host/*.c backends/host/*.h; then
  echo "backends/host/ includes a device API header (above): it runs on host memory only" >&2
  status=1
fi
if grep -nE '#[[:space:]]*include[[:space:]]*"backends/(vulkan|xrt)/' backends/host/*.c backends/host/*.h; then
  echo "backends/host/ includes another backend's header (above)" >&2
  status=1
fi
# SPIR-V reflection (backends/spirv/) serves both GPU backends: it includes no
# Vulkan, volk, libdrm or XRT header and no backend's header, and of core only
# the basics.
if grep -nE "$headers" backends/spirv/*.c backends/spirv/*.h ||
   grep -nE '#[[:space:]]*include[[:space:]]*"backends/(vulkan|xrt|host)/' backends/spirv/*.c backends/spirv/*.h ||
   grep -nE '#[[:space:]]*include[[:space:]]*"core/' backends/spirv/*.c backends/spirv/*.h |
     grep -vE '"core/(kernel_interface|status)\.h"'; then
  echo "backends/spirv/ includes a device API, a backend or core's insides (above)" >&2
  status=1
fi
# The backends, the host GPU included, see core's basics only, never a layout
# or a module's header (docs/design.md, "The map"); what tests read of the host
# GPU through core's layouts is tests/host_gpu_probe.c's.
if grep -nE '#[[:space:]]*include[[:space:]]*"core/' backends/vulkan/*.c backends/vulkan/*.h \
     backends/xrt/*.c backends/xrt/*.cpp backends/xrt/*.h backends/host/*.c backends/host/*.h 2>/dev/null |
    grep -vE '"core/(backend|npu_backend|kernel_interface|status|fault|test_hooks)\.h"'; then
  echo "a device backend includes core's insides (above): use core/backend.h or npu_backend.h" >&2
  status=1
fi
if grep -nE '#[[:space:]]*include[[:space:]]*"(backends/|host_gpu)' core/*.c core/*.h; then
  echo "core/ includes a backend's header (above): backends are reached through the registry" >&2
  status=1
fi
exit $status
