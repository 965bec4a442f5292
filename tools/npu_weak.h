/* SPDX-License-Identifier: MIT */
/*
 * npu_weak.h — the NPU half of tandem's public API, referenced weakly.
 *
 * The NPU lane is declared in tandem.h and implemented separately; a libtandem
 * built before it lands (or without it) lacks these symbols. Weak references
 * let the tool link and run against either: cli_npu_api_available() says
 * whether they resolved, and every NPU path checks it before calling. Include
 * this in every file that calls one of them.
 */
#ifndef TANDEM_TOOLS_NPU_WEAK_H_
#define TANDEM_TOOLS_NPU_WEAK_H_

#include "tandem/tandem.h"

#pragma weak tandem_sharing_name
#pragma weak tandem_runtime_open_npu
#pragma weak tandem_runtime_npu_info
#pragma weak tandem_npu_program_create
#pragma weak tandem_npu_program_retain
#pragma weak tandem_npu_program_release
#pragma weak tandem_npu_program_name
#pragma weak tandem_graph_add_npu_run

#endif /* TANDEM_TOOLS_NPU_WEAK_H_ */
