/* SPDX-License-Identifier: MIT */
/*
 * version.c — tandem_version(), and the build-time check that the header's
 * TANDEM_VERSION_MAJOR/MINOR/PATCH equal the CMake project version
 * (TANDEM_BUILD_VERSION_*, passed by CMakeLists.txt): one version, written
 * in two places, that cannot drift apart without breaking the build.
 */
#include "tandem/tandem.h"

#if !defined(TANDEM_BUILD_VERSION_MAJOR) || !defined(TANDEM_BUILD_VERSION_MINOR) || \
    !defined(TANDEM_BUILD_VERSION_PATCH)
#error "TANDEM_BUILD_VERSION_* must come from CMake's project(VERSION)"
#endif
#if TANDEM_VERSION_MAJOR != TANDEM_BUILD_VERSION_MAJOR || \
    TANDEM_VERSION_MINOR != TANDEM_BUILD_VERSION_MINOR || \
    TANDEM_VERSION_PATCH != TANDEM_BUILD_VERSION_PATCH
#error \
    "include/tandem/tandem.h's TANDEM_VERSION_* differ from project(tandem VERSION ...) in CMakeLists.txt: change both"
#endif

#define TANDEM__STR2(x) #x
#define TANDEM__STR(x) TANDEM__STR2(x)

const char *tandem_version(void) {
  return TANDEM__STR(TANDEM_VERSION_MAJOR) "." TANDEM__STR(TANDEM_VERSION_MINOR) "." TANDEM__STR(
      TANDEM_VERSION_PATCH);
}
