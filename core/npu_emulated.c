/* SPDX-License-Identifier: MIT */
/*
 * npu_emulated.c — where the emulated NPU's own xclbin is, so that C programs
 * can name it as pipeline files do: tandem_npu_emulated_xclbin() and the
 * "@emulated" spelling of tandem_npu_program_desc_t.program_path. The
 * emulated NPU is an XRT device (backends/xrt/ drives it), so its program
 * is an xclbin: what is XRT's here is that one file name.
 *
 * The build tree and an installed tree share one layout relative to the
 * folder of libtandem.so (npu/emu/README.md): the xclbin is in tandem/
 * there (its name comes from the build). A program linked statically has no
 * libtandem.so, so the installed library folder the build was configured
 * with is tried next. TANDEM_EMU_XCLBIN overrides both. Only paths are
 * decided here; loading the file is the NPU backend's business.
 */
/* dladdr: _GNU_SOURCE comes from the build (CMakeLists.txt). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/npu_emulated.h"
#include "core/status.h"

/* "tandem/<the xclbin's name>", from the build (CMakeLists.txt). */
#define TANDEM__EMU_XCLBIN_REL TANDEM_EMU_XCLBIN_REL

/* |dir|/|rel| into |buf| when that file is readable. */
static bool tandem__readable_in(char *buf, size_t size, const char *dir, size_t dir_len,
                                const char *rel) {
  int n = snprintf(buf, size, "%.*s/%s", (int)dir_len, dir, rel);
  return n > 0 && (size_t)n < size && access(buf, R_OK) == 0;
}

const char *tandem_npu_emulated_xclbin(void) {
  static _Thread_local char path[4096];
  const char *env = getenv("TANDEM_EMU_XCLBIN");
  if (env && *env) return env;
  Dl_info info;
  if (dladdr((void *)&tandem_npu_emulated_xclbin, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash && tandem__readable_in(path, sizeof path, info.dli_fname,
                                     (size_t)(slash - info.dli_fname), TANDEM__EMU_XCLBIN_REL))
      return path;
  }
#ifdef TANDEM_INSTALL_LIBDIR
  if (tandem__readable_in(path, sizeof path, TANDEM_INSTALL_LIBDIR, strlen(TANDEM_INSTALL_LIBDIR),
                          TANDEM__EMU_XCLBIN_REL))
    return path;
#endif
  return NULL;
}

tandem_status_t tandem__npu_xclbin_resolve(const char *program_path, const char *name,
                                           const char **out_path) {
  *out_path = program_path;
  if (strcmp(program_path, TANDEM_NPU_EMULATED_XCLBIN) != 0) return TANDEM_OK;
  const char *found = tandem_npu_emulated_xclbin();
  if (!found)
    return TANDEM_FAIL(TANDEM_ERROR_IO,
                       "NPU program '%s': \"@emulated\": the emulated NPU's xclbin is neither "
                       "beside libtandem (" TANDEM__EMU_XCLBIN_REL " in its folder) nor "
                       "installed; set TANDEM_EMU_XCLBIN to its path",
                       name);
  *out_path = found;
  return TANDEM_OK;
}
